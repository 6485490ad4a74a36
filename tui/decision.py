"""The engineer's decision for the end of the current round, built up while the round runs.

Pins, vetoes, edits and steering can be entered at any time; they are handed to the engine as one
`RoundDecision` when it asks (the review screen, or at once with auto-continue).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# copilot.evolution imports torch (through copilot.tasks): imported when a decision is built, never
# before the first paint.


@dataclass
class DecisionDraft:
    pins: list[str] = field(default_factory=list)
    unpins: list[str] = field(default_factory=list)
    vetoes: list[str] = field(default_factory=list)
    edits: list[Any] = field(default_factory=list)        # HumanEdit
    steer: str = ""
    stop: bool = False

    def toggle_pin(self, cid: str, pinned_now: bool) -> str:
        """Pin, or unpin when pinned; returns what the row will be after the decision."""
        if cid in self.pins:
            self.pins.remove(cid)
            return "unchanged"
        if cid in self.unpins:
            self.unpins.remove(cid)
            return "unchanged"
        if pinned_now:
            self.unpins.append(cid)
            return "unpin"
        if cid in self.vetoes:
            self.vetoes.remove(cid)
        self.pins.append(cid)
        return "pin"

    def toggle_veto(self, cid: str) -> str:
        if cid in self.vetoes:
            self.vetoes.remove(cid)
            return "unchanged"
        if cid in self.pins:
            self.pins.remove(cid)
        self.vetoes.append(cid)
        return "veto"

    def queued(self, cid: str) -> str:
        """The queued change of one candidate, as words for the leaderboard."""
        if cid in self.pins:
            return "📌 to pin"
        if cid in self.unpins:
            return "to unpin"
        if cid in self.vetoes:
            return "✗ to veto"
        return ""

    def decision(self, action: str = "continue"):
        from copilot.evolution.engine import RoundDecision

        return RoundDecision(pins=list(self.pins), vetoes=list(self.vetoes), unpins=list(self.unpins),
                             edits=list(self.edits), steer=self.steer,
                             action="stop" if action == "stop" else "continue")

    def describe(self) -> str:
        parts = []
        if self.pins:
            parts.append("pin " + ", ".join(self.pins))
        if self.unpins:
            parts.append("unpin " + ", ".join(self.unpins))
        if self.vetoes:
            parts.append("veto " + ", ".join(self.vetoes))
        if self.edits:
            parts.append(f"{len(self.edits)} edit{'s' if len(self.edits) > 1 else ''}")
        if self.steer:
            s = self.steer if len(self.steer) <= 40 else self.steer[:39] + "…"
            parts.append(f'steer "{s}"')
        if self.stop:
            parts.append("STOP after this round")
        return "; ".join(parts)

    @property
    def empty(self) -> bool:
        return not (self.pins or self.unpins or self.vetoes or self.edits or self.steer or self.stop)
