"""torch.unique as a kernel of its own (`copilot/lowering/unique.py`): the golden is one `_unique2`
of x; the kernel marks each element's order-preserving key present (no sort) over a small key
domain, or radix-sorts the keys (float32, wide integer ranges), writes y's length into out_shape
(the data-dependent contract) and the inverse."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task
from copilot.lowering.unique import UniquePlan, plan_unique
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_unique" / "lw_unique"
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
NO_GXX = shutil.which("g++") is None


def test_fixture_plans_with_the_inverse_by_attr_and_every_dtype_served():
    task = load_task(str(FIXTURE))
    plan = plan_task(task)
    assert isinstance(plan, UniquePlan)
    assert plan.inverse_rule == ("attr", "return_inverse")
    assert plan.unserved == {}
    src = lower(task).source
    assert ".OutputShapeDependOnCompute()" in src and "GM_ADDR out_shape" in src
    assert "SetAtomicAdd<int16_t>()" in src and "Gather(got, rank" in src
    assert "SortPass(" in src and "DT_FLOAT" in src


def test_public_unique_plans(tmp_path):
    d = CANNBENCH / "level3" / "unique"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task level3/unique not found at {d}")
    try:
        task = load_task(str(d))
    except BadInput as exc:
        pytest.skip(f"level3/unique does not load: {exc}")
    plan = plan_unique(task)
    assert isinstance(plan, UniquePlan) and plan.inverse_rule == ("attr", "return_inverse")
    assert plan.unserved == {}


def test_other_goldens_are_not_this_pattern(tmp_path):
    d = tmp_path / "lw_unique_twice"
    shutil.copytree(FIXTURE, d)
    (d / "golden.py").write_text("import torch\n\n\ndef lw_unique_twice(x, return_inverse=False):\n"
                                 "    y, inverse = torch.unique(x * 2, return_inverse=True)\n"
                                 "    return (y, inverse) if return_inverse else y\n")
    assert plan_unique(load_task(str(d))) is None
    for name in ("add", "softmax"):
        assert plan_unique(load_task(name)) is None


@pytest.mark.skipif(NO_GXX, reason="needs g++ for the sim backend")
def test_fixture_cases_on_the_emulator(tmp_path):
    """Presence: int8 over 3 cores and bf16 with infinities (inverses), int64 of negative narrow
    range. Sort (the range found at run time): a 2-million-key int64 range, int32 over 80001 keys
    with duplicates and the inverse, float32 over 2 cores with the inverse. int64 outside int32
    fails naming out_shape."""
    task = load_task(str(FIXTURE))
    path = tmp_path / "unique.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,2,3,5,6,7,8")
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors, errors
    by_id = {c.id: c for c in report.cases}
    failed = [(i, c.failure_class, c.message[:160]) for i, c in by_id.items() if i != "8" and not c.passed]
    assert not failed, failed
    assert not by_id["8"].passed and "out_shape" in by_id["8"].message


@pytest.mark.skipif(NO_GXX, reason="needs g++ for the sim backend")
def test_float32_zeros_infinities_and_nans_as_torch():
    """The sort path on float32: -0 and +0 are one value with the sign of x's first zero, ±inf the
    ends, every NaN its own value after +inf (torch orders the NaNs among themselves by its own
    sort: only their count and place are compared)."""
    import dataclasses

    import torch

    from copilot.backends.sim import build, run

    task = load_task(str(FIXTURE))
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([1.5, -0.0, 0.0, nan, -2.0, inf, 1.5, -nan, -inf, -0.0, 3.0, nan, 0.0, -2.0] * 3)
    case = dataclasses.replace(next(c for c in task.cases if c.dtypes[0] == "float32"), shapes=[tuple(x.shape)])
    b = build(lower(task).source, task, ["float32", "float32", "int64"])
    assert b.ok, [d.message for d in b.diagnostics if d.is_error]
    r = run(b, task, case, [x])
    assert r.ok, [d.message[:160] for d in r.diagnostics]
    want_y, want_inv = torch.unique(x, return_inverse=True)
    got_y, got_inv = r.outputs[0][:len(want_y)], r.outputs[1].reshape(-1)
    assert r.extra["out_shapes"]["y"][0] == tuple(want_y.shape)
    finite = ~torch.isnan(want_y)
    assert torch.equal(got_y[finite].view(torch.int32), want_y[finite].view(torch.int32))   # -0 kept
    assert torch.isnan(got_y[~finite]).all()
    numbers = ~torch.isnan(x)
    assert torch.equal(got_inv[numbers], want_inv[numbers])
    assert sorted(got_inv[~numbers].tolist()) == list(range(int(finite.sum()), len(want_y)))
