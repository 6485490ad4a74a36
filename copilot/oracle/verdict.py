"""The verdict on one case of a task: every compared output judged in the task's precision mode.

Per-output settings come from the proto: `compare: false` (public layout) skips an output, and
`int_tolerance: N` (our extension) lets an integer output differ from the oracle by at most N —
quantised values at a .5 rounding tie legitimately round either way between fp32 and fp64.
"""

from __future__ import annotations

import math

import torch

from copilot.oracle.golden import Reference
from copilot.oracle.precision import CaseVerdict, judge, judge_allclose
from copilot.tasks.model import Task


def _within_tolerance(actual, oracle, tol: int, name: str) -> CaseVerdict:
    a = torch.as_tensor(actual)
    o = torch.as_tensor(oracle)
    if tuple(a.shape) != tuple(o.shape):
        return CaseVerdict(False, "exact", math.nan, math.nan, "shape_mismatch", {},
                           f"{name}: shape {tuple(a.shape)}, expected {tuple(o.shape)}", None)
    diff = (a.to(torch.int64) - o.to(torch.int64)).abs()
    worst = int(diff.max()) if diff.numel() else 0
    if worst <= tol:
        return CaseVerdict(True, f"exact±{tol}", math.nan, math.nan, None, {},
                           f"{name}: every element within ±{tol} of the oracle", None)
    bad = int((diff > tol).sum())
    idx = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    return CaseVerdict(False, f"exact±{tol}", math.nan, math.nan, "integer_mismatch", {},
                       f"{name}: {bad} of {diff.numel()} elements differ by more than ±{tol} "
                       f"(worst {worst} at {idx})", idx)


def judge_case(task: Task, ref: Reference, actuals: list) -> CaseVerdict:
    """Judge every compared output; the case passes when all do. The failing verdict names its
    output; `outputs` holds each compared output's verdict."""
    verdicts: list[CaseVerdict] = []
    if len(actuals) != len(ref.oracle):
        return CaseVerdict(False, "standard", math.nan, math.nan, "shape_mismatch", {},
                           f"the kernel produced {len(actuals)} outputs, the task has {len(ref.oracle)}", None)
    for i, (actual, spec_out) in enumerate(zip(actuals, ref.outputs)):
        spec = task.outputs[i] if i < len(task.outputs) else None
        if spec is not None and not spec.compare:
            continue
        name = spec_out.name
        if spec is not None and spec.int_tolerance and not ref.bench[i].is_floating_point():
            v = _within_tolerance(actual, ref.oracle[i], spec.int_tolerance, name)
        elif task.precision_mode == "allclose":
            v = judge_allclose(actual, ref.bench[i], spec_out.dtype)
        else:
            v = judge(actual, ref.oracle[i], ref.bench[i], spec_out.dtype)
        if not v.passed and not v.message.startswith(name):
            v.message = f"{name}: {v.message}"
        verdicts.append(v)
    if not verdicts:
        return CaseVerdict(True, "none", math.nan, math.nan, None, {}, "no output is compared", None)
    failed = next((v for v in verdicts if not v.passed), None)
    if failed is not None:
        failed.outputs = verdicts
        return failed
    finite = [v for v in verdicts if not math.isnan(v.mere)]
    head = max(finite, key=lambda v: v.mare) if finite else verdicts[0]
    return CaseVerdict(True, head.mode, head.mere, head.mare, None, head.regions, head.message,
                       head.worst_index, verdicts)
