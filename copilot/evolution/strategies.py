"""Directions for variants: the L3 tiling-strategy cards of the knowledge base, routed by pattern.

Round 1 gives each variant a distinct strategy (the meta-prompts of collaborative evolution);
later rounds draw from the same set, minus the strategies the engineer vetoed.
"""

from __future__ import annotations

from dataclasses import dataclass

from copilot.tasks.model import Task


@dataclass(frozen=True)
class Strategy:
    id: str            # the L3 card id, e.g. "L3.double-buffering"
    title: str
    text: str          # the imperative line given to the agent


# What part of the kernel each strategy changes. Round 1 takes one strategy per family before a
# second from any, so its K variants explore K different parts of the design, not three ways of
# picking the core count.
FAMILY: dict[str, str] = {
    "L3.ub-budget": "tiling", "L3.double-buffering": "tiling", "L3.gm-512b-alignment": "tiling",
    "L3.core-count-small-input": "cores", "L3.load-balance": "cores", "L3.multicore-tail-split": "cores",
    "L3.row-tiling": "rows", "L3.merge-small-rows": "rows", "L3.split-d": "rows",
    "L3.reduction-strategies": "rows", "L3.broadcast-strategies": "operands", "L3.upcast-fp32": "precision",
    "L3.multicore-scalar-reduction": "cores", "L3.attr-constants": "precision",
}


def _operator_cards(task: Task) -> list:
    """The L3 cards the golden's own operations reach (a scatter's, a scan's): the first directions."""
    from copilot.agents.llm import golden_ops, own_cards
    from knowledge.cards import card_index

    if not callable(getattr(task, "golden", None)):
        return []
    idx = card_index()
    return [idx[cid] for cid in own_cards(golden_ops(task)) if idx[cid].level == "L3" and idx[cid].strategy]


def round_one_strategies(task: Task, patterns: list[str] | None = None) -> list[Strategy]:
    """The L3 strategies that fit the task's patterns: cards written for the task's patterns before
    the general ones, one per family (tiling, cores, rows, operands, precision) before any second."""
    from knowledge import load_cards, route

    pats = patterns or route(task)
    cards = [c for c in load_cards() if c.level == "L3" and c.strategy and c.fits_pattern(pats)]
    # Pattern-specific cards first (fewer patterns = more specific), then the general ones.
    cards.sort(key=lambda c: (99 if "all" in c.patterns else len(c.patterns), c.id))
    cards = _operator_cards(task) + cards
    order, seen_families, rest = [], set(), []
    for c in cards:
        family = FAMILY.get(c.id, c.id)
        (rest if family in seen_families else order).append(c)
        seen_families.add(family)
    return [Strategy(c.id, c.title, c.strategy) for c in order + rest]
