"""Group normalisation as a kernel of its own (`copilot/lowering/groupnorm.py`): the golden is
recognised from its one `native_group_norm`, the group count and eps follow the attrs, and the
fixture's cases run every path (resident groups as channel rows and as group rows, streamed parts
of one group over the cores, chunks of long channels, short channels that fall back to rows)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task, supports
from copilot.lowering.groupnorm import GroupNormPlan, plan_group_norm
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_group_norm_modes"
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


def test_group_norm_goldens_are_planned_from_their_attrs():
    for task in (load_task(str(FIXTURE)), load_task("group_norm")):
        plan = plan_task(task)
        assert isinstance(plan, GroupNormPlan) and plan.pattern == "normalization"
        assert plan.groups_rule == ("attr", "num_groups") and plan.eps_rule == ("attr", "epsilon")
    ok, why = supports("group_norm")
    assert ok and why == "normalization"


def test_other_norms_are_not_taken_for_a_group_norm():
    for name in ("layer_norm", "rms_norm", "batch_norm", "softmax"):
        assert plan_group_norm(load_task(name)) is None


def test_emitted_kernel_reads_groups_and_eps_at_run_time():
    src = lower(load_task(str(FIXTURE))).source
    kernel, tiling = src.split("namespace optiling")[:2]
    assert "1e-06" not in src and "0.0001" not in src           # eps comes from the attr
    assert "GetAttrPointer<int64_t>(0)" in tiling and "GetAttrPointer<float>(1)" in tiling
    # both layouts and both modes are in the one file; parts meet at one SyncAll
    for name in ("LAYOUT_CHANNELS", "LAYOUT_GROUPS", "MODE_RESIDENT", "MODE_STREAM"):
        assert name in kernel
    assert kernel.count("SyncAll()") == 1 and "Combine(all, Moments{FlatPartCount" in kernel
    # x is read as zero-padded rows; the sums are pairwise, not one in-order ReduceSum of a tile
    assert "DataCopyPadExtParams<Elem>(true" in kernel and "PairwiseSum(" in kernel


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_group_norm_kernel_passes_every_path(tmp_path):
    task = load_task(str(FIXTURE))
    path = tmp_path / "gn.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    assert len(report.cases) == 5


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_public_group_norm_cases(tmp_path):
    # 11: fp32 [-50, 100] over 131K-element groups (small values); 13: [1023, 257], one-element
    # channels; 15: +-inf in bf16; 19: fp16 at its range limits, odd channel runs
    task = _public("level2/group_norm")
    path = tmp_path / "gn.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="11,13,15,19")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    assert report.compiled and not failed, failed
