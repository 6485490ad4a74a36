"""Block row movement by a count table as a kernel of its own (`copilot/lowering/rowmove.py`):
moe_re_routing's golden builds its permutation on the host (`.item()`, `repeat_interleave`), so it
is recognised by what it computes on fp64 probes; the kernel scans the table on the scalar unit
and moves runs of rows, the fixture covers int8 / 16-bit rows, int32 / int64 counts, absent
scales and blocks split between cores."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task
from copilot.lowering.rowmove import RowMovePlan, plan_row_move
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_row_move"
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
NO_GXX = shutil.which("g++") is None


def _public(rel: str):
    d = CANNBENCH / rel
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task {rel} not found at {d}")
    try:
        return load_task(str(d))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench task {rel} does not load: {exc}")


def test_public_moe_re_routing_is_a_row_move():
    plan = plan_task(_public("level3/moe_re_routing"))
    assert isinstance(plan, RowMovePlan) and not plan.unserved
    assert (plan.tokens, plan.counts, plan.scales) == (0, 1, 2)
    assert plan.variants == [{"expert_token_num_type": 1, "idx_type": 0}]


def test_the_fixture_is_recognised_and_a_near_miss_is_not(tmp_path):
    plan = plan_row_move(load_task(str(FIXTURE)))
    assert plan is not None and not plan.unserved and plan.scales == 2
    # blocks kept in (rank, expert) order move nothing: not this pattern
    wrong = tmp_path / "lw_row_move"
    shutil.copytree(FIXTURE, wrong)
    golden = wrong / "golden.py"
    text = golden.read_text()
    assert "    for e in range(E):\n        for n in range(N):\n            order" in text
    golden.write_text(text.replace("    for e in range(E):\n        for n in range(N):\n            order",
                                   "    for n in range(N):\n        for e in range(E):\n            order"))
    assert plan_row_move(load_task(str(wrong))) is None
    src = lower(load_task(str(FIXTURE))).source
    assert "GetOptionalInputShape(2)" in src and "CreateVecIndex(rampBuf_" in src


def _check(task, tmp_path, cases):
    path = tmp_path / "rm.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    return report


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_row_move_passes_int8_rows_without_scales(tmp_path):
    assert len(_check(load_task(str(FIXTURE)), tmp_path, "2").cases) == 1


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_row_move_passes_every_case(tmp_path):
    assert len(_check(load_task(str(FIXTURE)), tmp_path, "all").cases) == 3
