"""Quick-tier twins: a shrunk copy of every case over the quick tier's element limit.

A twin keeps the case's dtypes, attrs, value ranges (inf/nan included), ranks, broadcast pattern
(a dimension of 1 stays 1; equal dimensions stay equal, across inputs too: one mapping per
distinct size) and each dimension's alignment class: a multiple of 16 stays a multiple of the
same power of two up to 256, a prime stays a prime, any other size keeps its remainder modulo 16
(the unaligned tail). Sizes shrink together until every input fits `QUICK_MAX_ELEMENTS`.
An integer range that indexes a dimension (`[0, d - 1]`) follows that dimension's new size.
A twin the golden does not take (an attr that names a size, such as gru's `hiddenSize`) is left out.
"""

from __future__ import annotations

import math
from dataclasses import replace

from copilot.tasks.model import QUICK_MAX_ELEMENTS, Case, Task, element_shapes

KEEP_BELOW = 16          # sizes up to this stay as they are


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % p for p in range(2, math.isqrt(n) + 1))


def alignment_class(d: int) -> str:
    if d <= KEEP_BELOW:
        return "small"
    if d % 16 == 0:
        return "aligned"
    return "prime" if _is_prime(d) else "tail"


def _shrink(d: int, factor: float) -> int:
    """A size about d * factor of the same alignment class as d."""
    if d <= KEEP_BELOW:
        return d
    target = max(KEEP_BELOW + 1, int(d * factor))
    cls = alignment_class(d)
    if cls == "aligned":
        step = min(d & -d, 256)
        return max(step, target // step * step)
    if cls == "prime":
        n = max(target, KEEP_BELOW + 1)
        while not _is_prime(n):
            n -= 1
        return n if n > KEEP_BELOW else 17
    tail = d % 16
    n = max(16 + tail, target // 16 * 16 + tail)
    while _is_prime(n):            # same tail, not a prime: the class stays "tail"
        n += 16
    return n


def _map_shapes(shapes: list, mapping: dict[int, int]) -> list:
    def one(s):
        return tuple(mapping.get(d, d) for d in s)
    out = []
    for s in shapes:
        if s is None:
            out.append(None)
        elif isinstance(s, list):
            out.append([one(e) for e in s])
        else:
            out.append(one(s))
    return out


def _index_ranges(case: Case, mapping: dict[int, int]) -> list:
    """Value ranges of the twin. An integer range [lo, hi] with lo >= 0 that ends at a size minus
    one (an index, as gather's or scatter's `[0, d - 1]`) is kept inside every dimension it could
    address: when a dimension larger than hi shrinks to hi or less, hi becomes the smallest such
    new size minus one (the index may address any of them). Every other range is kept."""
    out = []
    for i, r in enumerate(case.value_ranges):
        dt = case.dtypes[i] if i < len(case.dtypes) else ""
        lo, hi = (list(r) + [None, None])[:2] if isinstance(r, (list, tuple)) else (None, None)
        if str(dt).startswith(("int", "uint")) and isinstance(hi, (int, float)) and hi == hi \
                and float(hi).is_integer() and isinstance(lo, (int, float)) and lo >= 0 \
                and int(hi) + 1 in mapping:
            broken = [new for old, new in mapping.items() if old > hi >= new]
            if broken:
                new_hi = min(broken) - 1
                out.append(type(r)([min(lo, new_hi), new_hi]))
                continue
        out.append(r)
    return out


def twin(case: Case) -> Case | None:
    """The shrunk twin of an over-limit case (None if the case fits or cannot shrink)."""
    if case.is_quick:
        return None
    sizes = sorted({d for s in case.shapes for e in element_shapes(s) for d in e if d > KEEP_BELOW})
    factor = 1.0
    for _ in range(64):
        factor *= 0.7
        mapping = {d: _shrink(d, factor) for d in sizes}
        shapes = _map_shapes(case.shapes, mapping)
        candidate = replace(case, id=f"{case.id}q", shapes=shapes,
                            value_ranges=_index_ranges(case, mapping),
                            note=f"quick twin of case {case.id}" + (f" ({case.note})" if case.note else ""))
        if candidate.is_quick:
            return candidate
    return None


def quick_twins(task: Task, check=None) -> list[Case]:
    """Twins of the task's over-limit cases that the golden takes (`check(task, case)` returns
    an object with `ok`; default: the golden on meta tensors), one per distinct class."""
    if check is None:
        from copilot.oracle.golden import check_shapes as check
    seen: set = set()
    out = []
    for case in task.cases:
        t = twin(case)
        if t is None:
            continue
        key = (tuple(case.dtypes), repr(sorted(case.attrs.items(), key=lambda kv: kv[0])),
               tuple(case.value_ranges), repr(t.shapes))
        if key in seen:
            continue
        if check(task, t).ok is False:
            continue
        seen.add(key)
        out.append(t)
    return out
