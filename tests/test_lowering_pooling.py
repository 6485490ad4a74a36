"""3-D adaptive average pooling as a kernel of its own (`copilot/lowering/pooling.py`): the golden
is one `_adaptive_avg_pool3d` of x (or, for output size 1, 1, 1, the mean over the last three axes
torch traces instead), confirmed on fp64 probes; the kernel takes its window sizes from the shapes,
so downsampled, upsampled, non-dividing and global outputs run through one source."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput, Unsupported
from copilot.lowering import lower, plan_task, supports
from copilot.lowering.pooling import AdaptivePoolPlan, plan_adaptive_pool
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_pool" / "lw_adaptive_pool3d"
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


def _variant(tmp_path, name: str, golden: str | None = None, cases: str | None = None):
    """The fixture copied under `name` with its golden's body or its cases replaced."""
    d = tmp_path / name
    shutil.copytree(FIXTURE, d)
    if golden is not None:
        (d / "golden.py").write_text(golden)
    if cases is not None:
        (d / "cases.yaml").write_text(cases)
    return load_task(str(d))


def test_public_adaptive_avg_pool_3d_lowers_every_case():
    """Its global-pool cases (output size 1, 1, 1) trace as a mean, the others as the pool: one plan."""
    task = _public("level3/adaptive_avg_pool_3d")
    plan = plan_task(task)
    assert isinstance(plan, AdaptivePoolPlan) and not plan.unserved
    src = lower(task).source
    kernel, tiling = src.split("namespace optiling")[:2]
    assert "Gather(wsum, acc, off, 0, len)" in kernel and "Axpy(mean[" in kernel
    assert "ys.GetDim(2)" in tiling       # output sizes from y's shape, not from the attr values


def test_a_near_miss_is_not_this_pattern(tmp_path):
    # the same pool, of 2 x: another operator
    scaled = _variant(tmp_path, "lw_pool_twice", golden="import torch\n\n\ndef lw_pool_twice(x, output_size):\n"
                      "    return torch.nn.functional.adaptive_avg_pool3d(x * 2, list(output_size))\n")
    assert plan_adaptive_pool(scaled) is None
    for name in ("add", "softmax"):
        assert plan_adaptive_pool(load_task(name)) is None


def test_an_unbatched_case_is_refused_with_its_reason(tmp_path):
    """torch also pools a 4-D [C, D, H, W] x; the kernel serves [N, C, D, H, W] only."""
    cases = ("cases:\n- case_id: 1\n  input_shape: [[1, 2, 4, 6, 6]]\n  dtype: [float32]\n"
             "  attrs: {output_size: [2, 3, 3]}\n  value_range: [-1, 1]\n"
             "- case_id: 2\n  input_shape: [[2, 4, 6, 6]]\n  dtype: [float32]\n"
             "  attrs: {output_size: [2, 3, 3]}\n  value_range: [-1, 1]\n")
    task = _variant(tmp_path, "lw_adaptive_pool3d", cases=cases)
    with pytest.raises(Unsupported, match="case 2 is not a 3-D adaptive average pool of a 5-D x"):
        plan_adaptive_pool(task)
    ok, why = supports(task)
    assert not ok and "case 2" in why


@pytest.mark.skipif(NO_GXX, reason="needs g++ for the sim backend")
def test_fixture_cases_pass_on_the_emulator(tmp_path):
    """Non-dividing windows (fp32), every axis upsampled (fp16), global (bf16), halved (fp32)."""
    task = load_task(str(FIXTURE))
    path = tmp_path / "pool.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,2,3,4")
    failed = [(c.id, c.failure_class, c.message[:160]) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    assert len(report.cases) == 4
