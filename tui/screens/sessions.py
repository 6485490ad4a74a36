"""New session (a built-in task or a path) and resume (a stored session)."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, Select, Static

from tui.engine_host import SessionRequest


def _count(text: str, what: str) -> int | str:
    """A count of at least 1, or the one-line reason it is not."""
    try:
        value = int(text)
    except ValueError:
        return f"{what}: '{text}' is not a whole number"
    return value if value >= 1 else f"{what}: must be at least 1 (got {value})"


class NewSessionScreen(ModalScreen[SessionRequest | None]):
    CSS_PATH = "sessions.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new_cancel")]

    def __init__(self, settings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        from copilot.tasks import builtin_names

        names = builtin_names()
        with Vertical(id="new-session", classes="sessions-dialog"):
            yield Label("Built-in task")
            yield Select([(n, n) for n in names], value="rms_norm" if "rms_norm" in names else Select.BLANK,
                         id="task-select", allow_blank=True)
            yield Label("…or a task directory / KernelBench .py file (wins over the list)")
            yield Input(placeholder="/path/to/task", id="task-path")
            with Horizontal(classes="row"):
                yield Label("rounds")
                yield Input(str(self.settings.rounds), id="rounds", type="integer")
                yield Label("variants")
                yield Input(str(self.settings.variants), id="variants", type="integer")
            yield Static(f"chip {self.settings.chip} · backend {self.settings.backend} · agent "
                         f"{self.settings.model or 'offline'} (F2 settings)", classes="muted")
            with Horizontal(classes="buttons"):
                yield Button("Start", id="start", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#new-session").border_title = "new session"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
            return
        path = self.query_one("#task-path", Input).value.strip()
        sel = self.query_one("#task-select", Select).value
        task = path or (sel if isinstance(sel, str) else "")
        if not task:
            self.notify("pick a built-in task or give a path", severity="warning")
            return
        from tui.settings import session_request

        rounds = _count(self.query_one("#rounds", Input).value, "rounds")
        variants = _count(self.query_one("#variants", Input).value, "variants")
        for bad in (rounds, variants):
            if isinstance(bad, str):
                self.notify(bad, severity="error")
                return
        self.dismiss(session_request(self.settings, task=task, rounds=rounds, variants=variants))

    def action_cancel(self) -> None:
        self.dismiss(None)


class ResumeScreen(ModalScreen[str | None]):
    CSS_PATH = "sessions.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="resume_cancel")]

    def __init__(self, store) -> None:
        super().__init__()
        self.store = store

    def compose(self) -> ComposeResult:
        with Vertical(id="resume", classes="sessions-dialog wide"):
            yield DataTable(id="sessions-table", cursor_type="row")
            yield Static("Enter resumes the highlighted session; Esc cancels.", classes="muted")

    def on_mount(self) -> None:
        self.query_one("#resume").border_title = "resume a session"
        table = self.query_one(DataTable)
        for col in ("name", "task", "chip", "status", "rounds", "candidates", "best", "updated"):
            table.add_column(col, key=col)
        try:
            sessions = self.store.list_sessions()
        except Exception as exc:
            self.notify(f"cannot read the session store: {exc}", severity="error")
            sessions = []
        for s in sessions:
            best = f"{s['best_id']} {s['best_time_us']:.2f} µs" if s.get("best_time_us") else "—"
            table.add_row(s["name"], s["task"], s["chip"], s["status"], str(s.get("rounds") or 0),
                          str(s.get("candidates") or 0), best,
                          time.strftime("%Y-%m-%d %H:%M", time.localtime(s.get("updated_at") or 0)),
                          key=s["name"])
        if not sessions:
            self.query_one(".muted", Static).update("No stored sessions yet. Esc closes.")
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(event.row_key.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
