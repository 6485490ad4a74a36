"""Which direction a variant really takes: a direction the parent already satisfies, or one that
cannot cut the time of what bounds the parent (its profile's bottleneck), is replaced by the next
one of the task's strategies that the parent does not satisfy, cuts that bound, and no sibling takes.

"Satisfied" is decided from the parent's source and its profile, for the directions where that can
be read off reliably; any other direction is taken as given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import replace

from copilot.events import Candidate
from copilot.evolution.engine import ProposalRequest
from copilot.evolution.strategies import Strategy, round_one_strategies
from copilot.tasks.model import Task

_FLOAT_TILE = re.compile(r"LocalTensor\s*<\s*float\s*>")
_CAST = re.compile(r"\bCast\s*[<(]")
# a queue initialised two deep, or a buffer-count constant/tiling field set to 2
# two buffers per queue: InitBuffer's count (a TQue's depth template argument is how many tiles
# may be queued at once, e.g. a copy issued ahead, not how many buffers the queue owns)
# a queue of depth two, or a buffer-count constant of 2 (the lowering's `KNOB_BUFFER_NUM = 2`)
_DEPTH_TWO = re.compile(r"\bInitBuffer\s*\(\s*\w+\s*,\s*2\s*,|(?:\b|_)buffer_?num\s*=\s*2\b", re.I)


def _computes_in_float(task: Task, parent: Candidate) -> str | None:
    dtypes = {d for t in task.inputs for d in t.dtypes}
    if dtypes and dtypes <= {"float32", "float"}:
        return "every input of the task is float32 already"
    if _FLOAT_TILE.search(parent.code) and _CAST.search(parent.code):
        return "the parent already casts its tiles to float and computes in float"
    return None


def _double_buffered(task: Task, parent: Candidate) -> str | None:
    if _DEPTH_TWO.search(parent.code):
        return "the parent's queues already hold two buffers"
    return None


def _attr_constants_exact(task: Task, parent: Candidate) -> str | None:
    # A precision recipe, not a speed direction: a parent that passed meets the precision rules
    # already, and a task without float attrs has no attr-derived constant at all.
    if not any("float" in str(a.type).lower() for a in task.attrs):
        return "the task has no float attr"
    if parent.status == "passed":
        return "the parent passes, so its attr-derived constants are precise enough already"
    return None


# the former/tail split: the first cores take one unit more (names as the L3 card and CANN write them)
_FORMER_TAIL = re.compile(r"\bformer\w*|\w*tail(Num|Len|Length|Core|Cores|Rows)\b", re.I)
ROW_BUDGET_BYTES = 92 * 1024        # half the usable UB of a 910B core: two buffers of a row and its float copy


def _tail_split_already(task: Task, parent: Candidate) -> str | None:
    if _FORMER_TAIL.search(parent.code):
        return "the parent already splits its work into former and tail cores"
    return None


def _rows_fit(task: Task, parent: Candidate) -> str | None:
    # Any dimension but the leading one may be the row a reduction runs along.
    from copilot.dtypes import dtype as dtype_of

    longest = 0
    for c in task.cases:
        for s, d in zip(c.shapes, c.dtypes):
            if isinstance(s, tuple) and len(s) > 1 and d:
                longest = max(longest, max(s[1:]) * (dtype_of(d).itemsize + 4) * 2)
    if task.cases and longest <= ROW_BUDGET_BYTES:
        return f"every row of every case fits in UB with its float copy, twice ({longest} bytes at most)"
    return None


SATISFIED: dict[str, Callable[[Task, Candidate], str | None]] = {
    "L3.multicore-tail-split": _tail_split_already,
    "L3.split-d": _rows_fit,
    "L3.upcast-fp32": _computes_in_float,
    "L3.double-buffering": _double_buffered,
    "L3.attr-constants": _attr_constants_exact,
}


# The bounds (the cost model's bottleneck classes) whose time a direction can cut. The precision
# recipes cut none: they are repairs, not speed directions.
CUTS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "L3.double-buffering": ("memory", "vector", "latency"),
    "L3.gm-512b-alignment": ("memory",),
    "L3.ub-budget": ("memory", "vector", "scalar", "latency"),
    "L3.merge-small-rows": ("memory", "vector", "scalar", "latency"),
    "L3.row-tiling": ("memory", "vector", "scalar"),
    "L3.split-d": ("memory", "vector"),
    "L3.core-count-small-input": ("memory", "latency"),
    "L3.load-balance": ("memory", "vector", "scalar"),
    "L3.multicore-tail-split": ("memory", "vector", "scalar"),
    "L3.multicore-scalar-reduction": ("memory", "vector", "scalar", "latency"),
    "L3.reduction-strategies": ("vector", "scalar"),
    "L3.broadcast-strategies": ("memory", "vector", "scalar"),
    "L3.scatter-strategies": ("memory", "vector", "scalar"),
    "L3.prefix-scan": ("memory", "vector", "scalar"),
    "L3.upcast-fp32": (),
    "L3.attr-constants": (),
}.items()}


def misses_bound(strategy_id: str, parent: Candidate | None) -> str | None:
    """Why the direction cannot cut what bounds the parent, or None (no profile, an unknown
    direction, or one that cuts it)."""
    bound = parent.bottleneck if parent is not None else None
    cuts = CUTS.get(strategy_id)
    if not bound or cuts is None or bound in cuts:
        return None
    return f"the parent is bound by {bound}, which {strategy_id} does not cut"


def already_met(strategy_id: str, task: Task, parent: Candidate | None) -> str | None:
    """Why `parent` already satisfies the direction, or None."""
    check = SATISFIED.get(strategy_id)
    if parent is None or not parent.code or check is None:
        return None
    return check(task, parent)


def effective_request(req: ProposalRequest, strategies: list[Strategy] | None = None,
                      taken: Collection[str] = ()) -> tuple[ProposalRequest, str]:
    """The request with its direction replaced when the parent already meets it, and a note saying so
    ("" when the direction stands). The replacement is the next strategy after it in the task's order
    that is not met, not a sibling's, not one a sibling was replaced by (`taken`: the directions the
    round's earlier variants really took) and not rejected; with none left the direction stands."""
    why = already_met(req.strategy.id, req.task, req.parent) or misses_bound(req.strategy.id, req.parent)
    if why is None:
        return req, ""
    order = strategies if strategies is not None else round_one_strategies(req.task)
    ids = [s.id for s in order]
    start = ids.index(req.strategy.id) + 1 if req.strategy.id in ids else 0
    taken = set(taken) | set(req.sibling_strategies) | set(req.rejected_strategies) | {req.strategy.id}
    for s in order[start:] + order[:start]:
        if s.id not in taken and already_met(s.id, req.task, req.parent) is None \
                and misses_bound(s.id, req.parent) is None:
            return replace(req, strategy=s), f"direction {req.strategy.id} replaced by {s.id}: {why}"
    return req, ""
