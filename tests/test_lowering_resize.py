"""Bilinear resize as a kernel of its own (`copilot/lowering/resize.py`): the golden's
upsample_bilinear2d is found in its traced graph, align_corners and the scales are tied to the attrs
and the formula confirmed on fp64 probes; the kernel gathers the four taps of a block of output rows
from the staged source rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput, Unsupported
from copilot.lowering import lower, plan_task
from copilot.lowering.resize import ResizePlan, plan_resize, reference
from copilot.tasks import load_task

CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
TASK = CANNBENCH / "level2" / "resize_bilinear"
NO_GXX = shutil.which("g++") is None

# hidden-case-like shapes: a non-integer scale factor (torch then uses 1 / scale, not In / Out) and
# a downsample past 2x with align_corners (two source rows per output row)
_OTHER_CASES = """cases:
- operator: ResizeBilinear
  case_id: 1
  input_shape:
  - [2, 3, 11, 13]
  dtype: [float32]
  attrs:
    output_size: null
    align_corners: false
    scale_factor: [1.7, 0.6]
  value_range: [-2, 2]
- operator: ResizeBilinear
  case_id: 2
  input_shape:
  - [1, 5, 97, 41]
  dtype: [bfloat16]
  attrs:
    output_size: [9, 40]
    align_corners: true
  value_range: [-3, 3]
"""


def _public():
    if not (TASK / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task resize_bilinear not found at {TASK}")
    try:
        return load_task(str(TASK))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench resize_bilinear does not load: {exc}")


def _copy(tmp_path) -> Path:
    _public()
    copy = tmp_path / "resize_bilinear"
    shutil.copytree(TASK, copy)
    return copy


def test_public_task_is_recognised_with_its_attrs():
    plan = plan_task(_public())
    assert isinstance(plan, ResizePlan) and not plan.unserved
    assert plan.align[0] == "attr" and plan.task.attrs[plan.align[1]].name == "align_corners"
    assert plan.task.attrs[plan.scales].name == "scale_factor"
    tiling = lower(plan.task).source.split("namespace optiling")[1]
    assert "GetListFloat(2)" in tiling and "GetAttrPointer<bool>(1)" in tiling


def test_the_formula_matches_torch_on_edges():
    g = torch.Generator().manual_seed(5)
    x = torch.rand((2, 3, 7, 5), generator=g, dtype=torch.float64) * 4 - 2
    x[0, 1, 3, 2] = float("inf")              # a tap with weight 0 makes NaN, as in torch
    x[1, 2, 6, 4] = float("-inf")
    for align in (False, True):
        for size in ((7, 5), (3, 2), (15, 11), (1, 1), (7, 12)):
            want = torch.nn.functional.interpolate(x, size=size, mode="bilinear", align_corners=align)
            got = reference(x, size, align)
            assert torch.allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True), (align, size)
    for scales in ((1.7, 0.6), (2.0, 0.5), (0.35, 3.1)):
        want = torch.nn.functional.interpolate(x, scale_factor=scales, mode="bilinear", align_corners=False)
        got = reference(x, tuple(want.shape[2:]), False, scales)
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True), scales


def test_a_resize_with_more_arithmetic_is_refused(tmp_path):
    copy = _copy(tmp_path)
    golden = copy / "golden.py"
    text = golden.read_text()
    assert "align_corners=align_corners,\n    )" in text
    golden.write_text(text.replace("align_corners=align_corners,\n    )", "align_corners=align_corners,\n    ) * 2"))
    with pytest.raises(Unsupported, match=r"other ops around it \(mul\)"):
        plan_resize(load_task(str(copy)))


def test_bicubic_is_not_this_pattern(tmp_path):
    copy = _copy(tmp_path)
    golden = copy / "golden.py"
    golden.write_text(golden.read_text().replace("mode='bilinear'", "mode='bicubic'"))
    task = load_task(str(copy))
    assert plan_resize(task) is None
    with pytest.raises(Unsupported, match="upsample_bicubic2d"):
        plan_task(task)


@pytest.mark.skipif(NO_GXX, reason="needs g++")
def test_public_cases_pass(tmp_path):
    task = _public()
    # case 14: fp16, rows dense (13 -> 128), zeros; case 20: fp32, scale_factor [0.5, 2.0]
    path = tmp_path / "resize_bilinear.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="14,20")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed and len(report.cases) == 2, (errors, failed)


@pytest.mark.skipif(NO_GXX, reason="needs g++")
def test_other_shapes_and_scales_pass(tmp_path):
    copy = _copy(tmp_path)
    (copy / "cases.yaml").write_text(_OTHER_CASES)
    (copy / "cases.csv").unlink()
    task = load_task(str(copy))
    plan = plan_task(task)
    assert isinstance(plan, ResizePlan)
    path = tmp_path / "resize_bilinear.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="950PR", cases="all")
    failed = [(c.id, c.failure_class, c.mere, c.mare) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed and len(report.cases) == 2, (errors, failed)
