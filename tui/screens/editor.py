"""Edit a candidate's AscendC: the saved text becomes a human candidate of the next decision.

A quick check (the evaluator's source lint, mapped to knowledge cards) runs on open, on ctrl+l and
on save; the full build and cases run in the engine once the decision is sent, and their
diagnostics show on the new `rN-hK` row.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from tui.model import Row
from tui.widgets.cpp_editor import CppEditor
from tui.widgets.diagnostics_pane import SEVERITY


def check_source(code: str) -> list[dict]:
    """Findings visible in the source alone, with hints and cards."""
    from copilot.evolution.evaluate import lint
    from knowledge import attach_cards

    return attach_cards(lint(code))


class EditorScreen(Screen):
    CSS_PATH = "editor.tcss"
    BINDINGS = [
        Binding("ctrl+s", "save", "Save as human candidate", id="editor_save", priority=True),
        Binding("ctrl+l", "check", "Check", id="editor_check", priority=True),
        Binding("ctrl+g", "goto_diagnostic", "Go to diagnostic", id="editor_goto", priority=True),
        Binding("escape", "cancel", "Cancel", id="editor_cancel"),
    ]

    class Checked(Message):
        def __init__(self, diagnostics: list[dict], code: str) -> None:
            super().__init__()
            self.diagnostics = diagnostics
            self.code = code

    def __init__(self, row: Row, cursor_blink: bool = True) -> None:
        super().__init__()
        self.row = row
        self.cursor_blink = cursor_blink
        self.diagnostics: list[dict] = []

    def compose(self) -> ComposeResult:
        yield Static(f"editing a copy of [b]{self.row.id}[/b] ({self.row.strategy or self.row.origin}) · "
                     "ctrl+s saves it as a human candidate for the next decision · ctrl+l checks · "
                     "esc cancels", id="editor-head")
        with Vertical(id="editor-main"):
            yield CppEditor(self.row.code, id="editor")
            yield Input(placeholder="note: what you changed and why (optional)", id="editor-note")
            yield DataTable(id="editor-diagnostics", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        ed = self.query_one(CppEditor)
        ed.cursor_blink = self.cursor_blink
        self.query_one("#editor-note", Input).cursor_blink = self.cursor_blink
        ed.border_title = (f"{self.row.id} · AscendC (C++ highlighting, tree-sitter)" if ed.highlighting
                           else f"{self.row.id} · AscendC (no highlighting: tree-sitter is not installed)")
        table = self.query_one("#editor-diagnostics", DataTable)
        for label, width in (("severity", 8), ("id", 20), ("line", 5), ("message", 60), ("hint", 70)):
            table.add_column(label, key=label, width=width)
        table.border_title = "quick check"
        ed.focus()
        self.action_check()

    # ---- check ----------------------------------------------------------------------------

    def action_check(self) -> None:
        self._check(self.query_one(CppEditor).text)

    @work(thread=True, group="editor-check", exclusive=True, exit_on_error=False)
    def _check(self, code: str) -> None:
        try:
            diags = check_source(code)
        except Exception as exc:
            diags = [{"id": "TUI.CHECK", "severity": "warning", "message": f"check unavailable: {exc}",
                      "line": 0, "hint": "", "cards": []}]
        self.post_message(self.Checked(diags, code))

    @on(Checked)
    def _checked(self, message: "EditorScreen.Checked") -> None:
        self.diagnostics = message.diagnostics
        table = self.query_one("#editor-diagnostics", DataTable)
        table.clear()
        for i, d in enumerate(self.diagnostics):
            table.add_row(SEVERITY.get(d.get("severity", "error"), d.get("severity", "")), d.get("id", ""),
                          str(d.get("line") or "—"), d.get("message", ""), d.get("hint", "") or "", key=str(i))
        n = len(self.diagnostics)
        table.border_title = (f"quick check: {n} finding{'s' if n != 1 else ''} (ctrl+g goes to the line)"
                              if n else "quick check: no finding (the build and cases run after the decision)")
        self.query_one(CppEditor).mark_lines({int(d["line"]) for d in self.diagnostics if d.get("line")})

    def action_goto_diagnostic(self) -> None:
        table = self.query_one("#editor-diagnostics", DataTable)
        if not self.diagnostics:
            return
        d = self.diagnostics[min(table.cursor_row, len(self.diagnostics) - 1)]
        if d.get("line"):
            ed = self.query_one(CppEditor)
            ed.move_cursor((int(d["line"]) - 1, 0), center=True)
            ed.focus()

    # ---- save / cancel --------------------------------------------------------------------

    def action_save(self) -> None:
        code = self.query_one(CppEditor).text
        if code == self.row.code:
            self.notify("nothing changed: edit the code first, or esc to cancel", severity="warning", timeout=3)
            return
        note = self.query_one("#editor-note", Input).value.strip() or f"human edit of {self.row.id}"
        from copilot.evolution.engine import HumanEdit

        self.dismiss(HumanEdit(code=code, parent_id=self.row.id, note=note))

    def action_cancel(self) -> None:
        self.dismiss(None)
