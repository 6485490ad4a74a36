"""Between rounds: what the round changed, the decision about to be sent, continue or stop."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from copilot.evolution.population import perf_coverage
from tui.model import STATUS_WORDS, BoardModel, format_time, row_band


def partly_timed(row) -> str:
    """` (2 of 3 cases)` when the time is over only some of the performance cases (the others have
    none for the task's reason, the same for every candidate, or the kernel's), else nothing."""
    k_n = perf_coverage(row.cases)
    return f" ({k_n[0]} of {k_n[1]} cases)" if k_n and k_n[0] < k_n[1] else ""


def round_summary(m: BoardModel, round_: int, rounds_left: int, draft_text: str):
    rows = [r for r in m.rows.values() if r.round == round_]
    passed = [r for r in rows if r.ranked]
    best = m.best()
    prev_best = None
    for r in sorted(m.rounds):
        if r < round_ and m.rounds[r].best_time_us:
            prev_best = m.rounds[r].best_time_us
    base = m.baseline
    head = Text()
    head.append(f"Round {round_} finished", style="bold")
    head.append(f" · {len(rows)} candidates, {len(passed)} passed · {rounds_left} round"
                f"{'s' if rounds_left != 1 else ''} left\n")
    if best:
        head.append("Best so far: ", style="dim")
        head.append(f"{best.id} {format_time(best.time_us, best.timing, row_band(best))}{partly_timed(best)}",
                    style="bold")
        sp = m.speedup(best)
        if sp:
            head.append(f" · {sp:.2f}× vs baseline {format_time(base.time_us, base.timing)}")
        hap = m.hap_text(best)
        if hap != "—":
            head.append(f" · HAP {hap}{' est.' if best.timing == 'estimate' else ''}")
        head.append("\n")
        if best.round == round_ and prev_best and best.time_us < prev_best:
            head.append(f"▲ new best this round: {prev_best:.2f} → {best.time_us:.2f} µs "
                        f"({(1 - best.time_us / prev_best):.0%} faster)\n", style="bold green")
        elif best.round != round_:
            head.append(f"= no improvement this round (best still from round {best.round})\n", style="yellow")
    else:
        head.append("No passing kernel yet.\n", style="bold red")
    table = Table(box=None, header_style="bold", pad_edge=False, expand=True)
    for col in ("id", "strategy", "status", "time", "vs parent (est.)", "first diagnostic"):
        table.add_column(col, no_wrap=True, overflow="ellipsis", min_width={"id": 6, "time": 21}.get(col))
    for r in sorted(rows, key=lambda r: (m.rank(r.id) or 10**9, r.seq)):
        parent = m.parent_of(r)
        delta = "—"
        if parent and parent.time_us and r.time_us and r.ranked:
            d = (parent.time_us - r.time_us) / parent.time_us
            delta = (f"= same as {parent.id}" if abs(d) < 0.005
                     else f"{'▲' if d > 0 else '▼'} {abs(d):.0%} {'faster' if d > 0 else 'slower'} than {parent.id}")
        diag = r.diagnostics[0].get("id", "") if r.diagnostics else ""
        table.add_row(r.id, r.strategy or "—", STATUS_WORDS.get(r.status, r.status),
                      format_time(r.time_us, r.timing, row_band(r)) + partly_timed(r), delta, diag)
    decision = Text()
    decision.append("\nYour decision: ", style="bold")
    decision.append(draft_text or "no changes (continue with the same population)")
    return Group(head, table, decision)


class ReviewScreen(ModalScreen[str]):
    """Dismisses with "continue", "stop" or "back" (back to the board; the decision stays pending)."""

    CSS_PATH = "review.tcss"
    BINDINGS = [
        Binding("n,enter", "choose('continue')", "Continue", id="review_continue"),
        Binding("S", "choose('stop')", "Stop session", id="review_stop"),
        Binding("escape,b", "choose('back')", "Back to board", id="review_back"),
    ]

    def __init__(self, model: BoardModel, request, draft) -> None:
        super().__init__()
        self.model = model
        self.request = request
        self.draft = draft

    def compose(self) -> ComposeResult:
        with Vertical(id="review"):
            with VerticalScroll(id="review-body"):
                yield Static(round_summary(self.model, self.request.round, self.request.rounds_left,
                                           self.draft.describe()), id="review-summary")
            yield Static("Pin, veto, edit or steer from the board (Esc), then n to continue.",
                         id="review-hint")
            with Horizontal(id="review-buttons"):
                yield Button("Continue  [n]", id="continue", variant="primary")
                yield Button("Stop  [S]", id="stop", variant="error")
                yield Button("Back to board  [Esc]", id="back")

    def on_mount(self) -> None:
        self.query_one("#review").border_title = f"review · round {self.request.round}"
        self.query_one("#continue", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
