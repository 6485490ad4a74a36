"""Two lines: the session (session, task, chip, backend, agent, round, phase, tokens, cost and
budget, auto-continue) and the decision queued for the end of the round."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.model import BoardModel


class StatusBar(Static):
    def show(self, m: BoardModel, rounds: int, budget_usd: float, auto_continue: bool, draft: str) -> None:
        t = Text(no_wrap=True, overflow="ellipsis")
        parts = [
            ("", m.session or "no session yet"),
            ("task ", m.task or "—"),
            ("", m.chip or "—"),
            ("", m.backend or "—"),
            ("agent ", m.agent or "—"),
            ("round ", f"{m.current_round}/{rounds}" if rounds else str(m.current_round)),
            ("", m.phase),
            ("", f"{m.prompt_tokens + m.completion_tokens:,} tokens"),
            ("", f"${m.cost_usd:.2f}" + (f" of ${budget_usd:.2f}" if budget_usd else " (no budget)")),
            ("auto ", "on" if auto_continue else "off"),
        ]
        for i, (k, v) in enumerate(parts):
            if i:
                t.append(" │ ", style="dim")
            t.append(k, style="dim")
            t.append(v, style="bold")
        t.append("\n")
        t.append("next decision: ", style="dim")
        if draft:
            t.append(draft, style="bold")
        else:
            t.append("no change yet · p pin · x veto · e edit · s steer · n continue · S stop", style="dim")
        self.update(t)
