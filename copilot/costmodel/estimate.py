"""Estimate a kernel's time on one case without judging it: the performance half of an evaluation.

Correctness is established on the quick tier; a performance case only needs the kernel's
instruction stream. So the inputs are zeros, never materialised (the stream does not depend on values in the
kernels we time; a kernel whose control flow does would be timed on zeros), the output shapes come from the
golden run on meta tensors (no fp64 oracle), and only the first, middle and last blocks run: under
the standard split every core gets the same work but the tail ones, so these include the slowest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from copilot.costmodel import Estimate, cost_params, roofline_us, with_roofline
from copilot.dtypes import dtype as dtype_of
from copilot.dtypes import from_torch
from copilot.tasks.model import Case, Task


@dataclass(frozen=True)
class OutputShape:
    name: str
    shape: tuple[int, ...]
    dtype: str


def output_shapes(task: Task, case: Case) -> list[OutputShape]:
    """Output shapes and dtypes from the golden on meta tensors (falls back to a real run of the
    golden in the case dtype when an op has no meta kernel)."""
    metas = [torch.empty(s, dtype=dtype_of(d).torch, device="meta") for s, d in zip(case.shapes, case.dtypes)]
    attrs = {k: v for k, v in case.attrs.items() if v is not None}
    try:
        with torch.no_grad():
            out = task.golden(*metas, **attrs)
    except Exception:
        from copilot.oracle import make_inputs, reference

        return [OutputShape(o.name, o.shape, o.dtype) for o in reference(task, case, make_inputs(task, case)).outputs]
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    names = [o.name for o in task.outputs]
    return [OutputShape(names[i] if i < len(names) else f"out{i}", tuple(t.shape), from_torch(t.dtype).name)
            for i, t in enumerate(outs)]


def bytes_moved(case: Case, outs: list[OutputShape]) -> float:
    """The bytes any kernel must move through HBM: every input read once, every output written once."""
    ins = sum(math.prod(s) * dtype_of(d).itemsize for s, d in zip(case.shapes, case.dtypes))
    return float(ins + sum(math.prod(o.shape) * dtype_of(o.dtype).itemsize for o in outs))


def build_for_case(path, task: Task, case: Case, chip, builds: dict):
    """(build, output shapes, newly built) for `path` with this case's input and output dtypes;
    `builds` caches one build per dtype combination across calls."""
    from copilot.backends import sim

    outs = output_shapes(task, case)
    key = tuple(case.dtypes) + tuple(o.dtype for o in outs)
    fresh = key not in builds
    if fresh:
        builds[key] = sim.build(path, task, list(key), chip)
    return builds[key], outs, fresh


def estimate_case(build, task: Task, case: Case, chip: str = "910B2",
                  outs: list[OutputShape] | None = None) -> Estimate | None:
    """The estimate for one case of a built kernel, or None when the kernel failed on the case or
    ran an instruction the cost model cannot time. `outs`: the output shapes, when known."""
    from copilot.backends import sim
    from copilot.chips import load_chip

    profile = load_chip(chip)
    outs = outs if outs is not None else output_shapes(task, case)
    inputs = [torch.empty(s, dtype=dtype_of(d).torch, device="meta") for s, d in zip(case.shapes, case.dtypes)]
    run = sim.run(build, task, case, inputs, outputs=outs, chip=profile, sample_blocks=True)
    est = run.extra.get("estimate") if run.ok else None
    if est is None:
        return None
    params = cost_params(profile.name)
    return with_roofline(est, roofline_us(bytes_moved(case, outs), 0.0, params, profile.vector_cores))
