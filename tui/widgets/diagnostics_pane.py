"""Diagnostics of the selected candidate: constraint id, severity, line, message, hint and the
cards that explain it. Enter jumps to the line in the code pane."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

SEVERITY = {"error": "✗ error", "warning": "! warn", "info": "· info"}


class DiagnosticsPane(DataTable):
    class JumpToLine(Message):
        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", **kwargs)
        self.diagnostics: list[dict] = []

    def on_mount(self) -> None:
        self.add_column("severity", key="severity", width=8)
        self.add_column("id", key="id", width=22)
        self.add_column("line", key="line", width=5)
        self.add_column("message", key="message", width=48)
        self.add_column("hint", key="hint", width=60)
        self.add_column("cards", key="cards")

    def show(self, diagnostics: list[dict]) -> None:
        self.diagnostics = list(diagnostics)
        self.clear()
        for i, d in enumerate(self.diagnostics):
            self.add_row(SEVERITY.get(d.get("severity", "error"), d.get("severity", "")), d.get("id", ""),
                         str(d.get("line") or "—"), (d.get("message") or "").splitlines()[0][:200] if d.get("message") else "",
                         d.get("hint", "") or "", ", ".join(d.get("cards") or []), key=str(i))

    @property
    def current(self) -> dict | None:
        if not self.diagnostics or self.cursor_row >= len(self.diagnostics):
            return None
        return self.diagnostics[self.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        d = self.current
        if d and d.get("line"):
            self.post_message(self.JumpToLine(int(d["line"])))
