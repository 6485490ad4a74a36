"""The lowering's `conv` pattern (copilot/lowering/conv.py): one aten.convolution with its stride,
padding and dilation tied to the attrs that hold them (groups from the shapes); depthwise on the
vector unit (a band of input rows in UB, one Gather + Axpy per tap), everything else img2col by the
AIVs + the Matmul API on the cube, the bias added per output channel."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.lowering import lower
from copilot.tasks import load_task

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_conv"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
needs_cannbench = pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository")


def _plan(path):
    from copilot.lowering.conv import plan_conv

    return plan_conv(load_task(str(path)))


def test_parameters_come_from_the_attrs_named_for_them():
    """stride [2, 1] / [1, 3], padding [1, 2] / [0, 1], dilation [1, 2] / [2, 1]: the width parameter
    takes the list's last element, and padding's values equal stride's in some cases (not chosen)."""
    p = _plan(FIXTURES / "lw_conv")
    attrs = [a.name for a in p.task.attrs]
    s, pad, d = attrs.index("stride"), attrs.index("padding"), attrs.index("dilation")
    assert p.rules == {"sh": ("list", s, 0), "sw": ("list", s, 1), "ph": ("list", pad, 0), "pw": ("list", pad, 1),
                       "dh": ("list", d, 0), "dw": ("list", d, 1)}
    assert not p.vector                                    # groups 2 with 3 input channels each: the cube
    assert "REGIST_MATMUL_OBJ" in lower(p.task).source


def test_depthwise_runs_on_the_vector_unit():
    p = _plan(FIXTURES / "lw_depthwise")
    assert p.vector
    src = lower(p.task).source
    assert "Gather(dst, band" in src and "TwoSum(acc, sum, pr, bv, e1, comp, pc)" in src and "Matmul<" not in src


@needs_cannbench
def test_public_conv_2d_pads_are_top_and_right():
    p = _plan(CANNBENCH / "level3" / "conv_2d")
    attrs = [a.name for a in p.task.attrs]
    assert p.rules["ph"] == ("list", attrs.index("pads"), 0) and p.rules["pw"] == ("list", attrs.index("pads"), 3)


@needs_cannbench
def test_the_3d_weight_gradient_is_not_this_pattern():
    assert _plan(CANNBENCH / "level3" / "conv_3d_backprop_filter") is None


def test_non_convolution_goldens_are_left_to_the_other_planners():
    assert _plan(Path(__file__).resolve().parents[1] / "bench" / "ops" / "bias_gelu") is None


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name", ["lw_conv", "lw_depthwise"])
def test_every_case_of_each_fixture_passes_the_emulator(name, tmp_path):
    """lw_conv: groups 2, stride (2, 1), padding (1, 2), dilation (1, 2) in fp16; fp32 with stride 3 in
    width; bf16 depthwise through the cube. lw_depthwise: stride 2 in width with padding 3, stride 3 in
    height, a 1 x 1 kernel in bf16."""
    task = load_task(str(FIXTURES / name))
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == 3


@pytest.mark.slow
@needs_cannbench
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name,cases", [("conv_2d", "9,12,13,14,18"), ("depthwise_conv_2d", "9,12,14")])
def test_public_conv_cases_pass_the_emulator(name, cases, tmp_path, monkeypatch):
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "2")
    task = load_task(str(CANNBENCH / "level3" / name))
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases if not c.passed]
