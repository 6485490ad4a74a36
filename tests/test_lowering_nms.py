"""Greedy NMS as a kernel of its own (`copilot/lowering/nms.py`): the golden's Python loop cannot be
traced, so it is recognised through its semantic model (`copilot/lowering/semantic.py`) only when it
reproduces the model exactly on the probes; the kernel then writes the kept indices and their count
(out_shape) and is judged against the golden."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from copilot.errors import BadInput, Unsupported
from copilot.lowering import lower, plan_task
from copilot.lowering.nms import NmsPlan
from copilot.tasks import load_task

CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
NO_GXX = shutil.which("g++") is None

_PROTO = """\
    operator:
      name: LwNms
      category: SortSelect
      attrs:
      - {name: iou_threshold, type: float, required: true}
      inputs:
      - {name: boxes, dtype: [float32]}
      - {name: scores, dtype: [float32]}
      outputs:
      - {name: keep, dtype: [int64]}
    """
_CASES = """\
    cases:
    - {case_id: 1, input_shape: [[37, 4], [37]], dtype: [float32, float32], attrs: {iou_threshold: 0.5},
       value_range: [[-1, 1], [0, 1]]}
    - {case_id: 2, input_shape: [[300, 4], [300]], dtype: [float32, float32], attrs: {iou_threshold: 0.3},
       value_range: [[-2, 2], [0, 1]]}
    - {case_id: 3, input_shape: [[263, 4], [263]], dtype: [float32, float32], attrs: {iou_threshold: 0.6},
       value_range: [[nan, nan], [0, 1]]}
    """
# A greedy loop written unlike the public golden (suppression per kept box, argsort); @CMP@ and
# @EPS@ are the perturbations.
_GOLDEN = """\
    import torch


    def lw_nms(boxes, scores, iou_threshold):
        x1, y1, x2, y2 = boxes.unbind(1)
        areas = (x2 - x1) * (y2 - y1)
        suppressed = torch.zeros(boxes.shape[0], dtype=torch.bool)
        keep = []
        for t in scores.argsort(descending=True):
            i = int(t)
            if suppressed[i]:
                continue
            keep.append(i)
            w = (torch.minimum(x2[i], x2) - torch.maximum(x1[i], x1)).clamp(min=0)
            h = (torch.minimum(y2[i], y2) - torch.maximum(y1[i], y1)).clamp(min=0)
            inter = w * h
            iou = inter / (areas[i] + areas - inter + @EPS@)
            suppressed |= ~(iou @CMP@ iou_threshold)
        return torch.tensor(keep, dtype=torch.long)
    """


def _task(tmp_path, cmp: str = "<=", eps: str = "1e-6"):
    d = tmp_path / "lw_nms"
    d.mkdir()
    (d / "proto.yaml").write_text(textwrap.dedent(_PROTO))
    (d / "cases.yaml").write_text(textwrap.dedent(_CASES))
    (d / "golden.py").write_text(textwrap.dedent(_GOLDEN).replace("@CMP@", cmp).replace("@EPS@", eps))
    return load_task(str(d))


def test_the_public_golden_is_recognised():
    d = CANNBENCH / "level3" / "nms"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task level3/nms not found at {d}")
    try:
        task = load_task(str(d))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench task level3/nms does not load: {exc}")
    plan = plan_task(task)
    assert isinstance(plan, NmsPlan) and not plan.unserved
    assert plan.threshold_attr == "iou_threshold"


@pytest.mark.parametrize("cmp, eps, probe", [("<", "1e-6", "threshold at an IoU"),
                                             ("<=", "1e-9", "tiny boxes")])
def test_a_perturbed_golden_is_refused_naming_the_probe(tmp_path, cmp, eps, probe):
    task = _task(tmp_path, cmp, eps)
    with pytest.raises(Unsupported) as exc:
        plan_task(task)
    text = str(exc.value)
    assert "cannot be traced" in text and "no semantic model reproduces it" in text and probe in text, text


@pytest.mark.skipif(NO_GXX, reason="needs g++ for the emulator")
def test_the_kernel_keeps_the_golden_boxes(tmp_path):
    from copilot.backends.sim import check_kernel

    task = _task(tmp_path)
    kernel = tmp_path / "lw_nms.cpp"
    kernel.write_text(lower(task).source)
    report = check_kernel(kernel, task, cases="all")
    assert report.compiled, report.diagnostics
    assert [(c.id, c.passed) for c in report.cases] == [("1", True), ("2", True), ("3", True)], \
        [(c.id, c.message) for c in report.cases]


def test_a_smallest_case_of_constant_length_does_not_hide_the_data_dependent_output(tmp_path):
    """One box keeps one box on every draw: the next-smallest cases tell that `keep` has a
    data-dependent length (else the kernel's entry would lose its out_shape argument)."""
    from copilot.oracle.dynamic import data_dependent

    task = _task(tmp_path)
    d = task.path
    (d / "cases.yaml").write_text(textwrap.dedent(_CASES) + (
        "- {case_id: 4, input_shape: [[1, 4], [1]], dtype: [float32, float32], attrs: {iou_threshold: 0.5},\n"
        "   value_range: [[-1, 1], [0, 1]]}\n"))
    task = load_task(str(d))
    assert min(task.cases, key=lambda c: c.total_numel).id == "4"
    assert data_dependent(task) == {"keep": (0,)}
