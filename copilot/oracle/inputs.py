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


def _float_values(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    if math.isnan(lo):
        out = rng.uniform(-1.0, 1.0, n).astype(np.float32)
        out[rng.random(n) < NAN_FRACTION] = np.nan
        return out
    flo = lo if math.isfinite(lo) else (hi - FINITE_SPAN_FOR_INF if math.isfinite(hi) else -FINITE_SPAN_FOR_INF)
    fhi = hi if math.isfinite(hi) else (lo + FINITE_SPAN_FOR_INF if math.isfinite(lo) else FINITE_SPAN_FOR_INF)
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


def make_inputs(task: Task, case: Case, seed: int = 0, fresh: bool = False) -> list[torch.Tensor]:
    """The case's inputs on the CPU, in the case dtypes. Same (task, case, seed) → same values.

    `fresh=True` draws new values on every call (timed runs must never see cached outputs).
    """
    if fresh:
        seed = int.from_bytes(os.urandom(4), "little") ^ next(_fresh_counter)
    if task.make_inputs_fn is not None:
        torch.manual_seed(_seed(task, case, 0, seed) % (2**63))
        return [t.contiguous() for t in task.make_inputs_fn()]
    out = []
    for i, (shape, dt, (lo, hi)) in enumerate(zip(case.shapes, case.dtypes, case.value_ranges)):
        rng = np.random.default_rng(_seed(task, case, i, seed))
        out.append(_tensor(rng, shape, dt, lo, hi))
    return out
