"""Index-driven row combine as a kernel of its own (`copilot/lowering/rowcombine.py`): the golden
is recognised by what it computes on fp64 probes (the roles of the optional inputs, each attr
value's index order, every pattern of absent inputs the cases have); the kernel branches on
tiling flags for the absent inputs, and the fixture's cases run each combination."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task
from copilot.lowering.rowcombine import RowCombinePlan, plan_row_combine
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_row_combine"
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


def test_public_moe_finalize_routing_is_a_row_combine():
    plan = plan_task(_public("level3/moe_finalize_routing"))
    assert isinstance(plan, RowCombinePlan) and not plan.unserved
    assert plan.roles == {"rows": 0, "idx": 1, "experts": 6, "skip1": 2, "skip2": 3, "bias": 4, "scales": 5}
    assert {g["drop_pad_mode"]: o for g, o in plan.variants} == {0: "k_major", 1: "k_major", 2: "r_major",
                                                                 3: "r_major"}


def test_the_fixture_is_recognised_and_a_near_miss_is_not(tmp_path):
    plan = plan_row_combine(load_task(str(FIXTURE)))
    assert plan is not None and plan.roles["scales"] == 5 and not plan.unserved
    assert {g["order"]: o for g, o in plan.variants} == {0: "k_major", 1: "r_major"}
    # a dropped term that still adds its bias is another operator: not this pattern
    wrong = tmp_path / "lw_row_combine"
    shutil.copytree(FIXTURE, wrong)
    golden = wrong / "golden.py"
    text = golden.read_text()
    assert "        term = term * (v != -1).unsqueeze(1)\n" in text
    golden.write_text(text.replace("        term = term * (v != -1).unsqueeze(1)\n", ""))
    assert plan_row_combine(load_task(str(wrong))) is None
    # elementwise and reduction goldens are not taken
    for name in ("add", "softmax", "rms_norm"):
        assert plan_row_combine(load_task(name)) is None


def test_the_kernel_branches_on_the_absent_inputs():
    src = lower(load_task(str(FIXTURE))).source
    kernel, tiling = src.split("namespace optiling")[:2]
    for flag in ("hasSkip1", "hasSkip2", "hasBias", "hasScales"):
        assert f"td->{flag} = " in tiling and f"td_.{flag}" in kernel
    assert "td->hasSkip1 = present(2)" in tiling and "present(4) && present(6)" in tiling
    assert "*attrs->GetAttrPointer<int64_t>(0) == 1" in tiling


def _check(task, tmp_path, cases):
    path = tmp_path / "rc.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    return report


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_row_combine_passes_the_fp32_cases(tmp_path):
    # 2: r-major, one residual, weights; 4: nothing optional but the weights, several tiles per core
    assert len(_check(load_task(str(FIXTURE)), tmp_path, "2,4").cases) == 2


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_row_combine_passes_every_case(tmp_path):
    assert len(_check(load_task(str(FIXTURE)), tmp_path, "all").cases) == 4


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_public_moe_finalize_routing_small_cases(tmp_path):
    # 11: [E, C, H] rows, r-major; 16: no skip2, H = 32; 20: drops (-1) in a drop-pad layout
    _check(_public("level3/moe_finalize_routing"), tmp_path, "11,16,20")
