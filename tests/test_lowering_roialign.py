"""The lowering's `roi_align` pattern (copilot/lowering/roialign.py): a golden that gathers the
feature map by indices computed from the boxes, confirmed on fp64 probes as bilinear ROI align
(mean of the bin's samples), lowers to a two-phase vector kernel (a channel-last copy of x, then
per ROI the samples' corner vectors blended in the golden's order); anything else that gathers by
boxes is refused with the reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import Unsupported
from copilot.lowering import lower
from copilot.tasks import load_task

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_roialign"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
needs_cannbench = pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository")


def _plan(path):
    from copilot.lowering.roialign import plan_roi_align

    return plan_roi_align(load_task(str(path)))


@needs_cannbench
def test_public_task_lowers_with_its_attrs_and_the_per_roi_grid():
    p = _plan(CANNBENCH / "level3" / "roi_align")
    assert (p.scale_attr, p.ratio_attr, p.aligned_attr) == ("spatial_scale", "sampling_ratio", "aligned")
    assert p.adaptive and not p.unserved
    src = lower(p.task).source
    assert "SyncAll();" in src and "GetAttrPointer<bool>(4)" in src and "Ceil(binH_)" in src


def test_a_golden_without_the_per_roi_grid_refuses_sampling_ratio_zero_at_run_time():
    """The fixture's golden samples a fixed grid only: ratio <= 0 fails the tiling, it is never
    computed as something else."""
    p = _plan(FIXTURES / "lw_roi_align")
    assert not p.adaptive
    assert "*ratio <= 0 || *ratio > 4096" in lower(p.task).source


def test_a_max_pooled_roi_align_is_refused_with_the_reason():
    with pytest.raises(Unsupported, match="differ from bilinear ROI align"):
        _plan(FIXTURES / "lw_roi_max")


def test_non_roi_goldens_are_left_to_the_other_planners():
    assert _plan(Path(__file__).resolve().parents[1] / "bench" / "ops" / "bias_gelu") is None


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_every_fixture_case_passes_the_emulator(tmp_path):
    """fp32 3 x 4 bins of 2 x 2 samples; fp16 13 channels (padded to 16 in the copy), aligned, 1
    sample; fp32 300 channels (two channel blocks), 5 x 3 bins of 3 x 3 samples."""
    task = load_task(str(FIXTURES / "lw_roi_align"))
    path = tmp_path / "lw_roi_align.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == 3
