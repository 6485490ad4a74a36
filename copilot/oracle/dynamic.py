"""Outputs whose length depends on the data (unique's values, nms's kept boxes): the kernel contract.

CANN marks such an output `OutputShapeDependOnCompute()` in the op definition; the kernel entry then
takes one more GM_ADDR after the outputs (before workspace and tiling) and writes each such output's
actual shape into it as uint64 words: a rank word, then the dims (ops-nn's NonZero writes
`0x80000000 | rank`, then the dims; aclnn's OP_OUTSHAPE holds 9 words per output: the rank and up to
8 dims). The framework allocates the output at an upper bound and reads the shape back. CANN-Bench
calls the submission with the inputs and attrs only and fails an output whose shape differs from the
golden's before it compares a value (`kernel_eval/utils/compare.py`).

So here: the output's GM is allocated with each data-dependent dim at the case's largest input
element count (unique: len(y) <= numel(x); nms: M <= N, both stated in their desc.md), the kernel
never learns the golden's length, it writes the shape words into `out_shape`, and the judge reads
the first prod(dims) elements, compares the written length with the golden's and then the values.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from copilot.tasks.model import Case, Task

SHAPE_ARG = "out_shape"      # the entry's extra GM_ADDR, after the outputs
SHAPE_WORDS = 9              # per data-dependent output: the rank word, then up to 8 dims
RANK_MASK = 0x7FFFFFFF       # bit 31 of the rank word may be set (ops-nn NonZero sets it)
SEEDS = (0, 1, 2)            # draws that tell a data-dependent output of an untraceable golden
DRAW_CASES = 3               # cases drawn at most (the smallest first)

_found: dict[tuple, dict[str, tuple[int, ...]]] = {}


def data_dependent(task: Task) -> dict[str, tuple[int, ...]]:
    """The outputs whose shape depends on the values, each with its data-dependent dim positions,
    in proto order; empty for a task whose output shapes follow from the input shapes.

    A golden that runs on meta tensors has none. Else it is traced with fake tensors whose shape
    environment lets a size stay symbolic (unique: `y` is `(u0,)`); a golden that branches on values
    (nms's greedy loop) cannot be traced, and runs for real on three draws of its smallest case: a
    dim that differs between draws is data-dependent. Up to DRAW_CASES of the smallest cases are
    drawn, until one shows a varying dim: a small case can keep the same length on every draw (one
    box, or a threshold no pair of boxes reaches, keeps every box)."""
    if getattr(task, "kind", None) != "cann" or not getattr(task, "cases", None):
        return {}
    key = (str(task.path), task.name, len(task.cases))
    if key not in _found:
        found: dict = {}
        for case in sorted(task.cases, key=lambda c: c.total_numel)[:DRAW_CASES]:
            found = _detect(task, case)
            if found or _static_shapes(task, case) or _traced_shapes(task, case):
                break
        _found[key] = found
    return _found[key]


def _static_shapes(task: Task, case: Case) -> bool:
    """Whether the meta-tensor run of the golden gives every output a concrete shape."""
    from copilot.costmodel.estimate import meta_outputs

    try:
        meta_outputs(task, case)
    except Exception:       # noqa: BLE001 - any failure of the meta run: the shapes are found below
        return False
    return True


def _traced_shapes(task: Task, case: Case) -> bool:
    """Whether the fake-tensor trace gives the output shapes (then the draws are not needed)."""
    try:
        _fake_shapes(task, case)
    except Exception:       # noqa: BLE001 - an untraceable golden: only its draws tell
        return False
    return True


def _detect(task: Task, case: Case) -> dict[str, tuple[int, ...]]:
    if _static_shapes(task, case):
        return {}
    names = [o.name for o in task.outputs]
    try:
        shapes = _fake_shapes(task, case)
        found = {names[i]: tuple(j for j, d in enumerate(s) if not isinstance(d, int))
                 for i, s in enumerate(shapes) if i < len(names)}
    except Exception:
        from copilot.oracle import make_inputs, reference

        try:
            draws = [[tuple(o.shape) for o in reference(task, case, make_inputs(task, case, seed)).outputs]
                     for seed in SEEDS]
        except Exception:       # a golden that cannot run: its judge says why, the entry stays plain
            return {}
        found = {}
        for i, first in enumerate(draws[0]):
            if i < len(names) and all(len(d) > i and len(d[i]) == len(first) for d in draws):
                found[names[i]] = tuple(j for j in range(len(first)) if len({d[i][j] for d in draws}) > 1)
    return {n: p for n, p in found.items() if p}


def bound_outputs(task: Task, case: Case) -> list | None:
    """The outputs (name, shape, dtype) as the kernel's buffers are allocated, without running the
    golden: from the fake-tensor trace, each data-dependent dim at the bound (`bound_dims` names
    them). None for a task without such outputs or a golden that cannot be traced (nms)."""
    from copilot.costmodel.estimate import OutputShape
    from copilot.dtypes import from_torch

    if not data_dependent(task):
        return None
    try:
        outs = _fake_outputs(task, case)
    except Exception:
        return None
    names = [o.name for o in task.outputs]
    return [OutputShape(names[i] if i < len(names) else f"out{i}",
                        tuple(d if isinstance(d, int) else bound(case) for d in t.shape),
                        from_torch(t.dtype).name,
                        tuple(j for j, d in enumerate(t.shape) if not isinstance(d, int)))
            for i, t in enumerate(outs)]


def _fake_shapes(task: Task, case: Case) -> list[tuple]:
    return [tuple(t.shape) for t in _fake_outputs(task, case)]


def _fake_outputs(task: Task, case: Case) -> list:
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    from copilot.oracle.golden import golden_arguments
    from copilot.oracle.inputs import meta_inputs

    mode = FakeTensorMode(shape_env=ShapeEnv(), allow_non_fake_inputs=True)
    with mode, torch.no_grad():
        def fake(t):
            return None if t is None else torch.empty(t.shape, dtype=t.dtype)
        inputs = [[fake(e) for e in x] if isinstance(x, list) else fake(x) for x in meta_inputs(task, case)]
        args, kwargs = golden_arguments(task, case, inputs)
        out = task.golden(*args, **kwargs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def bound(case: Case) -> int:
    """The upper bound of a data-dependent dim: the case's largest input element count."""
    return max(case.max_numel, 1)


def kernel_shape(shape: tuple[int, ...], positions: tuple[int, ...], case: Case) -> tuple[int, ...]:
    """The shape the kernel's GM is allocated at: each data-dependent dim at the bound."""
    return tuple(bound(case) if j in positions else d for j, d in enumerate(shape))


def read_shapes(words: np.ndarray, names: list[str], allocated: dict[str, tuple[int, ...]]) -> dict:
    """The shape each data-dependent output's words give, or why they give none: {name: (shape, why)}."""
    out = {}
    for k, name in enumerate(names):
        w = [int(v) & 0xFFFFFFFFFFFFFFFF for v in words[k * SHAPE_WORDS:(k + 1) * SHAPE_WORDS]]
        cap = allocated[name]
        if w[0] == 0xFFFFFFFFFFFFFFFF:
            out[name] = (None, f"{name}: the kernel did not write its shape into {SHAPE_ARG} (words "
                               f"{k * SHAPE_WORDS}..{k * SHAPE_WORDS + len(cap)}: the rank, then the dims)")
            continue
        rank = w[0] & RANK_MASK
        if rank != len(cap):
            out[name] = (None, f"{name}: {SHAPE_ARG} word {k * SHAPE_WORDS} gives rank {rank}, the output has "
                               f"rank {len(cap)}")
            continue
        dims = tuple(w[1:1 + rank])
        over = [j for j, (d, c) in enumerate(zip(dims, cap)) if d > c]
        if over:
            out[name] = (None, f"{name}: {SHAPE_ARG} gives shape {list(dims)}, larger than its buffer "
                               f"{list(cap)} (dim {over[0]})")
            continue
        out[name] = (dims, "")
    return out


def written_part(t: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
    """The first prod(dims) elements of an output buffer, in the shape the kernel wrote."""
    return t.reshape(-1)[:math.prod(dims)].reshape(dims)
