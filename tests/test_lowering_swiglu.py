"""Dequant + SwiGLU + per-token int8 quant as a kernel of its own (`copilot/lowering/swiglu.py`):
the golden is recognised by what it computes on small probes (the roles of the optional scale
inputs, which half each attr value gates, which patterns of present inputs the golden serves);
the kernel reads presence from the optional input shapes, and the fixture's cases run each
pattern, short rows batched by strided calls and rows too long for a repeat stride."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task
from copilot.lowering.swiglu import SwigluQuantPlan, plan_swiglu_quant
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_swiglu_quant"
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


def test_public_dequant_swiglu_quant_is_recognised():
    plan = plan_task(_public("level3/dequant_swiglu_quant"))
    assert isinstance(plan, SwigluQuantPlan) and not plan.unserved
    assert plan.roles == {"x": 0, "channel_scale": 1, "token_scale": 2, "smooth_scale": 3}
    assert {g["activate_left"]: f for g, f in plan.variants} == {True: "gate_left", False: "gate_right"}
    # int32 x with both dequant scales, float x with neither; the smooth scales either way
    assert sorted(plan.served) == [(False, False, False, False), (False, False, False, True),
                                   (True, True, True, False), (True, True, True, True)]


def test_the_fixture_is_recognised_and_a_near_miss_is_not(tmp_path):
    plan = plan_swiglu_quant(load_task(str(FIXTURE)))
    assert plan is not None and not plan.unserved
    assert {g["left"]: f for g, f in plan.variants} == {True: "gate_left", False: "gate_right"}
    # a golden that forgets the token scale computes another operator: not this pattern
    wrong = tmp_path / "lw_swiglu_quant"
    shutil.copytree(FIXTURE, wrong)
    golden = wrong / "golden.py"
    text = golden.read_text()
    assert " * token_scale.float()[:, None]" in text
    golden.write_text(text.replace(" * token_scale.float()[:, None]", ""))
    assert plan_swiglu_quant(load_task(str(wrong))) is None
    for name in ("add", "softmax", "add_rms_norm_dynamic_quant"):
        assert plan_swiglu_quant(load_task(name)) is None


def test_the_kernel_reads_presence_from_the_optional_shapes():
    src = lower(load_task(str(FIXTURE))).source
    kernel, tiling = src.split("namespace optiling")[:2]
    for flag in ("hasChannel = present(1)", "hasToken = present(2)", "hasSmooth = present(3)"):
        assert flag in tiling
    # a pattern the golden refuses (float x with dequant scales) fails the tiling
    assert "(!intX && !hasChannel && !hasToken && hasSmooth)" in tiling
    assert "(!intX && hasChannel" not in tiling
    assert "td_.hasDequant" in kernel and "td_.hasSmooth" in kernel


def _check(task, tmp_path, cases):
    path = tmp_path / "sq.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    return report


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_swiglu_quant_passes_every_fixture_case(tmp_path):
    # 1: int32 + both scales, first half gated; 2: float16, H = 33, smooth; 3: bfloat16, no scale,
    # several tiles per core; 4: rows of 2100 (one call per row), every scale
    assert len(_check(load_task(str(FIXTURE)), tmp_path, "all").cases) == 4


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_public_dequant_swiglu_quant_small_cases(tmp_path):
    # 5: bfloat16 127 rows; 13: int32 127 rows; 16: int32 rows of 8194 with smooth scales
    _check(_public("level3/dequant_swiglu_quant"), tmp_path, "5,13,16")
