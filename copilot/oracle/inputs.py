"""Deterministic case inputs from shapes, dtypes and value ranges.

Ranges follow the public benchmark convention: `[lo, hi]` uniform in the case dtype; `[0, 0]` all
zeros; an infinite end mixes finite values with that infinity (1 element in 20); `["nan", "nan"]`
mixes finite values in [-1, 1] with NaN (1 element in 8), so a kernel must both propagate NaN and
compute the rest. Values are drawn in float32 (float64 for float32 cases would double the memory
for no gain: the case dtype rounds them anyway) and rounded to the case dtype.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os

import numpy as np
import torch

from copilot.dtypes import dtype as dtype_of
from copilot.tasks.model import Case, Task

SPECIAL_FRACTION = 1 / 20      # share of elements set to an infinite end of the range
NAN_FRACTION = 1 / 8           # share of elements set to NaN for a ["nan", "nan"] range
FINITE_SPAN_FOR_INF = 100.0    # finite values next to an infinite end lie within this span
_fresh_counter = itertools.count(1)


def _seed(task: Task, case: Case, index: int, seed: int) -> int:
    key = f"{task.name}/{case.id}/{index}/{seed}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little")


def finite_bounds(lo: float, hi: float) -> tuple[float, float]:
    """The interval the finite values of a float range are drawn from: [-1, 1] next to NaN, a
    FINITE_SPAN_FOR_INF span next to an infinite end."""
    if math.isnan(lo) or math.isnan(hi):
        return -1.0, 1.0
    flo = lo if math.isfinite(lo) else (hi - FINITE_SPAN_FOR_INF if math.isfinite(hi) else -FINITE_SPAN_FOR_INF)
    fhi = hi if math.isfinite(hi) else (lo + FINITE_SPAN_FOR_INF if math.isfinite(lo) else FINITE_SPAN_FOR_INF)
    return flo, fhi


def _float_values(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    if math.isnan(lo):
        out = rng.uniform(-1.0, 1.0, n).astype(np.float32)
        out[rng.random(n) < NAN_FRACTION] = np.nan
        return out
    flo, fhi = finite_bounds(lo, hi)
    if flo == fhi:
        out = np.full(n, flo, dtype=np.float32)
    else:
        out = rng.random(n, dtype=np.float32)
        out *= np.float32(fhi - flo)
        out += np.float32(flo)
    specials = [v for v in (lo, hi) if math.isinf(v)]
    if specials and n:
        pick = rng.random(n) < SPECIAL_FRACTION
        out[pick] = rng.choice(np.array(specials, dtype=np.float32), int(pick.sum()))
    return out


def _tensor(rng: np.random.Generator, shape: tuple[int, ...], dtype_name: str,
            lo: float, hi: float) -> torch.Tensor:
    dt = dtype_of(dtype_name)
    n = math.prod(shape)
    if dt.is_float:
        values = _float_values(rng, n, lo, hi)
        return torch.from_numpy(values).reshape(shape).to(dt.torch)
    if dtype_name == "bool":
        return torch.from_numpy(rng.integers(0, 2, n).astype(np.bool_)).reshape(shape)
    info = torch.iinfo(dt.torch)
    ilo = info.min if math.isnan(lo) or lo == -math.inf else max(info.min, math.ceil(lo))
    ihi = info.max if math.isnan(hi) or hi == math.inf else min(info.max, math.floor(hi))
    if ilo > ihi:
        ilo = ihi
    values = rng.integers(ilo, ihi, n, endpoint=True, dtype=np.int64)
    return torch.from_numpy(values).reshape(shape).to(dt.torch)


def make_inputs(task: Task, case: Case, seed: int = 0, fresh: bool = False) -> list:
    """The case's inputs on the CPU, in the case dtypes, one per proto input: a tensor, None (an
    omitted optional input) or a list of tensors (a tensor list). Same (task, case, seed) → same
    values.

    `fresh=True` draws new values on every call (timed runs must never see cached outputs).
    """
    if fresh:
        seed = int.from_bytes(os.urandom(4), "little") ^ next(_fresh_counter)
    if task.make_inputs_fn is not None:
        torch.manual_seed(_seed(task, case, 0, seed) % (2**63))
        return [t.contiguous() for t in task.make_inputs_fn()]
    out: list = []
    for i, (shape, dt, (lo, hi)) in enumerate(zip(case.shapes, case.dtypes, case.value_ranges)):
        rng = np.random.default_rng(_seed(task, case, i, seed))
        if shape is None:
            out.append(None)
        elif isinstance(shape, list):
            out.append([_tensor(rng, tuple(s), dt, lo, hi) for s in shape])
        else:
            out.append(_tensor(rng, shape, dt, lo, hi))
    if task.input_fn is not None:
        out = _rework(task, case, out, seed)
    return out


def _rework(task: Task, case: Case, inputs: list, seed: int) -> list:
    """Pass the inputs through the golden file's `get_input` (inputs by name, attrs by keyword);
    it returns them in the golden signature's tensor order."""
    from copilot.errors import BadInput

    names = [s.name for s in task.inputs]
    order = golden_input_order(task)
    torch.manual_seed(_seed(task, case, len(names), seed) % (2**63))
    kwargs = {**{k: v for k, v in case.attrs.items() if v is not None}, **dict(zip(names, inputs))}
    try:
        result = task.input_fn(**kwargs)
    except Exception as exc:
        raise BadInput(f"{task.path / 'golden.py'} ({case.label()}): get_input raised "
                       f"{type(exc).__name__}: {exc}") from None
    result = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(result) != len(order):
        raise BadInput(f"{task.path / 'golden.py'} ({case.label()}): get_input returned {len(result)} "
                       f"values for the {len(order)} inputs {', '.join(order)}")
    by_name = dict(zip(order, result))
    return [by_name[n].contiguous() if isinstance(by_name[n], torch.Tensor) else by_name[n] for n in names]


REWORKED_RANGE_MAX_BYTES = 1 << 30    # inputs larger than this are not generated just to read a range


def reworked_ranges(task: Task, case: Case, seed: int = 0) -> list[tuple[float, float] | None] | None:
    """The value range of each input as the golden and the kernel receive it, where the golden
    file's `get_input` rebuilt it (roi_align's boxes: declared [-1, 1], rebuilt as batch indices and
    pixel coordinates inside the map): the min and max of its finite values. None for an input
    that reaches them as generated (its declared range holds) or is not a tensor. None in place of
    the list when the task has no `get_input` or the case's inputs exceed REWORKED_RANGE_MAX_BYTES
    (the ranges are unknown then, not the declared ones)."""
    from dataclasses import replace

    if task.input_fn is None:
        return None
    nbytes = sum(case.numel(i) * dtype_of(dt).itemsize for i, dt in enumerate(case.dtypes) if case.present(i))
    if nbytes > REWORKED_RANGE_MAX_BYTES:
        return None
    raw = make_inputs(replace(task, input_fn=None), case, seed)
    done = _rework(task, case, list(raw), seed)
    out: list[tuple[float, float] | None] = []
    for before, after, (lo, hi) in zip(raw, done, case.value_ranges):
        if not isinstance(after, torch.Tensor) or after.numel() == 0:
            out.append(None)
            continue
        finite = after[torch.isfinite(after)] if after.is_floating_point() else after
        rlo, rhi = (float(finite.min()), float(finite.max())) if finite.numel() else (math.nan, math.nan)
        flo, fhi = finite_bounds(lo, hi)
        kept = after is before and (finite.numel() == 0 or (rlo >= flo and rhi <= fhi))
        out.append(None if kept else (rlo, rhi))
    return out


def _golden_params(task: Task) -> list[str]:
    import inspect

    try:
        return list(inspect.signature(task.golden).parameters)
    except (TypeError, ValueError):
        return []


def golden_takes_inputs_by_name(task: Task) -> bool:
    """The golden's signature names every proto input."""
    params = set(_golden_params(task))
    return bool(task.inputs) and all(s.name in params for s in task.inputs)


def golden_input_order(task: Task) -> list[str]:
    """The proto inputs in the order the golden's signature lists them (proto order if the
    golden does not name them all)."""
    names = [s.name for s in task.inputs]
    if not golden_takes_inputs_by_name(task):
        return names
    return [p for p in _golden_params(task) if p in names]


def meta_inputs(task: Task, case: Case) -> list:
    """The case's inputs as meta tensors (shapes and dtypes, no memory), one per proto input."""
    def meta(shape, dt):
        return torch.empty(tuple(shape), dtype=dtype_of(dt).torch, device="meta")
    out: list = []
    for shape, dt in zip(case.shapes, case.dtypes):
        if shape is None:
            out.append(None)
        elif isinstance(shape, list):
            out.append([meta(s, dt) for s in shape])
        else:
            out.append(meta(shape, dt))
    return out


def kernel_tensors(inputs: list) -> list:
    """What the kernel entry gets per proto input (it keeps one GM_ADDR argument for each):
    the tensor; None for an omitted optional input (a null GM address); for a tensor list, its
    elements flattened and concatenated in list order into one buffer."""
    out: list = []
    for x in inputs:
        if isinstance(x, list):
            out.append(torch.cat([e.reshape(-1) for e in x]) if x else None)
        else:
            out.append(x)
    return out
