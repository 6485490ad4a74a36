"""Every key of the app, its action and its binding id (remap in settings.yaml's `tui.keymap`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


def binding_rows(app) -> list[tuple[str, str, str, str]]:
    """(where, keys, description, id) for the app, the main screen, the leaderboard and dialogs."""
    from tui.screens.dialogs import CardScreen, SteerScreen, TextScreen
    from tui.screens.editor import EditorScreen
    from tui.screens.main import MainScreen
    from tui.screens.review import ReviewScreen

    keymap = getattr(app, "_keymap", {}) or {}
    groups = [("app", type(app).BINDINGS), ("board", MainScreen.BINDINGS),
              ("review", ReviewScreen.BINDINGS), ("editor", EditorScreen.BINDINGS),
              ("dialogs", SteerScreen.BINDINGS + CardScreen.BINDINGS + TextScreen.BINDINGS)]
    rows = [("app", "ctrl+p", "Command palette (every action by name, themes)", "command_palette")]
    for where, bindings in groups:
        for b in bindings:
            if not isinstance(b, Binding):
                continue
            keys = keymap.get(b.id, b.key) if b.id else b.key
            pretty = ", ".join(k.replace("question_mark", "?").replace("slash", "/") for k in keys.split(","))
            rows.append((where, pretty, b.description or b.action, b.id or ""))
    from tui.widgets.leaderboard import Leaderboard

    for b in Leaderboard.BINDINGS:
        if isinstance(b, Binding) and b.id:
            rows.append(("board", keymap.get(b.id, b.key), b.description, b.id))
    rows.append(("panes", "enter", "Open a card (knowledge) / jump to the line (diagnostics)", ""))
    rows.append(("panes", "tab", "Next pane", ""))
    return rows


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,q,f1,question_mark", "close", "Close", id="help_close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Static("Keys (binding ids remap in settings.yaml: tui: {keymap: {pin: P}}). "
                         "Pin, veto, edit and steer can be entered while a round runs; they are sent "
                         "together when it ends.", id="help-intro")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "help"
        table = self.query_one(DataTable)
        for label, w in (("where", 8), ("keys", 16), ("action", 58), ("binding id", 20)):
            table.add_column(label, width=w)
        for row in binding_rows(self.app):
            table.add_row(*row)
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
