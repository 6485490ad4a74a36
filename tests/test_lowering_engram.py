"""Engram gate fusion as a kernel of its own (`copilot/lowering/engram.py`): the golden is
recognised by what it computes on small fp64 probes (the inputs' roles, the conv norm's weight,
which attrs are the dilation, eps and the shape checks); the fixture's cases run both row-sum
paths, a state longer than the sequence and several tiles of a sequence per core."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task
from copilot.lowering.engram import EngramPlan, plan_engram
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_engram_gate"
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


def test_public_engram_gate_fusion_lowers():
    task = _public("level3/engram_gate_fusion")
    plan = plan_task(task)
    assert isinstance(plan, EngramPlan) and not plan.unserved
    assert plan.roles["wc"] == 5 and plan.roles["state"] == 7 and plan.roles["weight"] == 6
    assert plan.attrs == {"hc": "hc_mult", "hidden": "hidden_size", "kernel": "kernel_size",
                          "dilation": "dilation", "eps": "norm_eps"}
    src = lower(task).source
    assert "TransDataTo5HD" in src and "MulAddDst" in src
    assert "attrs->GetAttrPointer<int64_t>(3)" in src      # the dilation comes from its attr


def test_the_fixture_is_recognised_and_a_near_miss_is_not(tmp_path):
    plan = plan_engram(load_task(str(FIXTURE)))
    assert plan is not None and plan.attrs["dilation"] == "dil" and plan.roles["wc"] == 5
    # a golden without the residual computes another operator: not this pattern
    wrong = tmp_path / "lw_engram_gate"
    shutil.copytree(FIXTURE, wrong)
    golden = wrong / "golden.py"
    text = golden.read_text()
    assert "out = gated + " in text
    golden.write_text(text.replace("out = gated + ", "out = 0 * gated + "))
    assert plan_engram(load_task(str(wrong))) is None
    for name in ("add", "rms_norm"):
        assert plan_engram(load_task(name)) is None


def test_float32_activations_are_refused_with_a_reason():
    low = lower(load_task(str(FIXTURE)))
    refused = [n for n in low.notes if n.startswith("case 3 not served")]
    assert refused and "16-bit float" in refused[0]


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_engram_gate_passes_the_fixture_cases(tmp_path):
    # 1: float16 rows of 96 (folded sums, strided calls, carried history); 2: bfloat16 rows of
    # 512 (two-level sums) with a state longer than the sequence
    task = load_task(str(FIXTURE))
    path = tmp_path / "engram.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,2")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed and len(report.cases) == 2, (errors, failed)
