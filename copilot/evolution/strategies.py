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


def round_one_strategies(task: Task, patterns: list[str] | None = None) -> list[Strategy]:
    """The L3 strategies that fit the task's patterns, most broadly useful first."""
    from knowledge import load_cards, route

    pats = patterns or route(task)
    cards = [c for c in load_cards() if c.level == "L3" and c.strategy and c.fits_pattern(pats)]
    # Cards that serve more patterns first: they are the safest first-round directions.
    cards.sort(key=lambda c: (-len(c.patterns) if "all" not in c.patterns else -99, c.id))
    return [Strategy(c.id, c.title, c.strategy) for c in cards]
