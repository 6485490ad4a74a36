"""The offline agent: no network, no LLM. Generation 1 is the lowering agent's kernel with the
default knobs; later generations are knob edits, chosen per strategy (the L3 card the variant was
given), per tier (small steps for parents in the top tier, larger jumps for the bottom tier) and
per the parent's bottleneck in the cost model (memory-bound: resident rows and staged operands,
other tile sizes, double buffering, fewer cores; latency-bound: fewer cores; vector-bound: fp16
data computed in fp16, fewer, larger instructions). The structural knobs (row residency, staging of
row-invariant operands, the working type) are offered only where the task's plan has what they
change (`copilot.lowering.knobs.applicable`). A move that only changes tiling-knob values and
leaves the host tiling the same on every performance case (a tile cap above every row, a core
count the cases never reach) would give the parent again: the agent runs both TilingFuncs on
those cases (`tiling_digests`: no block is run) and proposes the next move instead.
"""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

from copilot.errors import BadInput, Unsupported
from copilot.evolution.engine import Proposal, ProposalRequest

# Which knobs each L3 strategy moves, most relevant first. A strategy not listed moves any knob.
STRATEGY_KNOBS: dict[str, tuple[str, ...]] = {
    "L3.double-buffering": ("buffer_num", "tile_elems"),
    "L3.ub-budget": ("tile_elems", "ub_reserve_bytes", "rows_per_tile", "row_residency", "stage_invariant"),
    "L3.multicore-tail-split": ("block_dim_policy", "min_work_elems"),
    "L3.load-balance": ("block_dim_policy", "min_work_elems", "tile_elems"),
    "L3.core-count-small-input": ("min_work_elems", "block_dim_policy"),
    "L3.row-tiling": ("rows_per_tile", "tile_elems"),
    "L3.merge-small-rows": ("rows_per_tile",),
    "L3.split-d": ("split_d_elems", "tile_elems"),
    "L3.reduction-strategies": ("split_d_elems", "row_residency", "rows_per_tile"),
    "L3.upcast-fp32": ("arith", "tile_elems", "ub_reserve_bytes"),
    "L3.gm-512b-alignment": ("tile_elems",),
    "L3.broadcast-strategies": ("stage_invariant", "tile_elems", "block_dim_policy"),
}


# For each bottleneck, the knob moves that address it first: (knob, direction in its value list).
# A memory-bound kernel with few large tiles per core pays the pipeline's fill and drain (the first
# copy-in and the last copy-out overlap nothing): smaller tiles shorten them, so that move comes first.
# Structural moves: a memory-bound parent that reloads rows per pass or re-reads its row-invariant
# operands per tile gets them resident / staged back (less GM traffic); a vector-bound elementwise
# one computes its fp16 data in fp16 first (no Cast, twice the elements per repeat), then, like a
# scalar-bound one (many short instructions per tile), trades residency for longer tiles.
BOTTLENECK_MOVES: dict[str, tuple[tuple[str, int], ...]] = {
    "memory": (("row_residency", -1), ("stage_invariant", -1), ("tile_elems", -2), ("buffer_num", +1),
               ("block_dim_policy", -1), ("tile_elems", +1), ("ub_reserve_bytes", -1)),
    "latency": (("min_work_elems", +1), ("block_dim_policy", +1), ("tile_elems", +1)),
    "vector": (("arith", +1), ("tile_elems", +1), ("rows_per_tile", +1), ("split_d_elems", -1),
               ("row_residency", +1)),
    "scalar": (("rows_per_tile", +1), ("tile_elems", +1), ("row_residency", +1)),
}


# At most this many moves per proposal are found to leave the tiling unchanged and passed over; the
# next one is proposed unchecked (each check builds the child and runs its TilingFunc per case).
NOOP_CHECKS = 8


class OfflineAgent:
    name = "offline"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.tried: dict[str, set[tuple]] = {}     # task -> knob combinations already proposed
        self._digests: dict[tuple, tuple | None] = {}   # (task, chip, code hash) -> tiling digest per perf case

    async def baseline(self, task, chip: str) -> Proposal | None:
        from copilot.lowering import default_knobs

        knobs = default_knobs(task)
        try:
            code = await asyncio.to_thread(self._lower, task, chip, knobs)
        except Unsupported as exc:
            return Proposal(code=None, origin="lowering", agency_mode="lowering", failure=str(exc))
        self._seen(task.name).add(_key(knobs))
        return Proposal(code=code, origin="lowering", agency_mode="lowering", knobs=knobs,
                        notes=["default knobs"])

    async def propose(self, req: ProposalRequest) -> Proposal:
        from copilot.lowering import default_knobs, knob_space

        parent_knobs = dict(req.parent.knobs) if req.parent and req.parent.knobs else default_knobs(req.task)
        space = _by_size(knob_space(req.task))
        step = 1 if req.parent_tier in ("top", "pinned", "baseline") else 2 if req.parent_tier == "middle" else 3
        tried = self._seen(req.task.name)
        last_error = ""
        bottleneck = req.parent.bottleneck if req.parent else None
        guided = self._bottleneck_moves(parent_knobs, space, bottleneck) if req.parent_tier in ("top", "pinned",
                                                                                                 "baseline") else []
        parent_code = req.parent.code if req.parent else None
        passed_over: list[str] = []             # moves that leave the parent's tiling as it is
        for knobs, note in [*guided, *self._moves(parent_knobs, space, req.strategy.id, step)]:
            k = _key(knobs)
            if k in tried:
                continue
            tried.add(k)
            try:
                code = await asyncio.to_thread(self._lower, req.task, req.chip, knobs)
            except (Unsupported, BadInput) as exc:
                last_error = str(exc)
                continue
            if (parent_code and len(passed_over) < NOOP_CHECKS
                    and await asyncio.to_thread(self._same_as_parent, req.task, req.chip, parent_code, code)):
                passed_over.append(note.split(" (")[0])
                continue
            notes = [f"{note} ({req.strategy.id})"]
            if passed_over:
                notes.append("passed over, the tiling of every performance case unchanged: " + "; ".join(passed_over))
            return Proposal(code=code, origin="offline", agency_mode="knob_edit", knobs=knobs, notes=notes)
        if passed_over and not last_error:
            last_error = (f"every untried move for {req.strategy.id} leaves the parent's tiling unchanged on every "
                          "performance case: " + "; ".join(passed_over))
        return Proposal(code=None, origin="offline", agency_mode="knob_edit",
                        failure=last_error or f"no untried knob setting left for {req.strategy.id}")

    def _same_as_parent(self, task, chip: str, parent_code: str, code: str) -> bool:
        """True when `code` is `parent_code` again on every performance case: the same source but for
        tiling-knob values, and the same tiling from both TilingFuncs on each case."""
        if code == parent_code:
            return True
        if not _tiling_only_change(parent_code, code):
            return False
        from copilot.costmodel.estimate import tiling_digests
        from copilot.evolution.population import code_hash

        cases = task.perf_cases()
        if not cases:
            return False
        key = (task.name, chip, code_hash(parent_code))
        if key not in self._digests:
            self._digests[key] = tiling_digests(parent_code, task, cases, chip)
        parent = self._digests[key]
        return parent is not None and tiling_digests(code, task, cases, chip) == parent

    # --- moves -----------------------------------------------------------------------------

    def _moves(self, parent: dict, space: dict[str, list], strategy: str, step: int):
        """Knob settings near `parent`, the strategy's knobs first; `step` values away at most."""
        names = [n for n in STRATEGY_KNOBS.get(strategy, ()) if n in space]
        others = [n for n in space if n not in names]
        self.rng.shuffle(others)
        for name in names + others:
            values = space[name]
            cur = parent.get(name, values[0])
            i = values.index(cur) if cur in values else 0
            offsets = [d for s in range(1, step + 1) for d in (s, -s)]
            self.rng.shuffle(offsets)
            for d in offsets:
                j = i + d
                if 0 <= j < len(values):
                    new = dict(parent)
                    new[name] = values[j]
                    yield new, f"{name} {cur} -> {values[j]}"
        # every single move tried: combine two random moves
        for _ in range(20):
            new = dict(parent)
            for name in self.rng.sample(list(space), 2):
                new[name] = self.rng.choice(space[name])
            yield new, "combined move " + ", ".join(f"{n}={new[n]}" for n in space if new[n] != parent.get(n))

    @staticmethod
    def _bottleneck_moves(parent: dict, space: dict[str, list], bottleneck: str | None):
        """One-step moves that address what bounds the parent, most direct first."""
        out = []
        for name, direction in BOTTLENECK_MOVES.get(bottleneck or "", ()):
            values = space.get(name)
            if not values:
                continue
            cur = parent.get(name, values[0])
            i = values.index(cur) if cur in values else 0
            j = i + direction
            if 0 <= j < len(values):
                out.append(({**parent, name: values[j]}, f"{name} {cur} -> {values[j]} (parent is {bottleneck}-bound)"))
        return out

    def _seen(self, task: str) -> set[tuple]:
        return self.tried.setdefault(task, set())

    @staticmethod
    def _lower(task, chip: str, knobs: dict[str, Any]) -> str:
        from copilot.lowering import lower

        return lower(task, chip=chip, knobs=knobs).source


def _by_size(space: dict[str, list]) -> dict[str, list]:
    """The knob space with sizes in increasing order of effect: a cap of 0 means "as many as fit",
    the largest setting, so it goes last and a step down from it is the largest explicit cap."""
    out = dict(space)
    for name in ("tile_elems", "rows_per_tile"):
        if name in out and 0 in out[name]:
            out[name] = sorted(v for v in out[name] if v != 0) + [0]
    return out


_KNOB_VALUE = re.compile(r"^(\s*constexpr\s+uint64_t\s+KNOB_[A-Z0-9_]+\s*=\s*)\d+", re.M)


def _tiling_only_change(a: str, b: str) -> bool:
    """The two kernels differ only in the values of host tiling knobs (`constexpr uint64_t KNOB_*`
    lines outside the device half): one device object, two tilings."""
    from copilot.backends.sim.units import SplitError, split_units

    if _KNOB_VALUE.sub(r"\g<1>0", a) != _KNOB_VALUE.sub(r"\g<1>0", b):
        return False
    try:
        return split_units(a).device == split_units(b).device
    except SplitError:
        return False


def _key(knobs: dict) -> tuple:
    return tuple(sorted(knobs.items()))
