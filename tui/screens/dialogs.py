"""Small modals: steering text, a knowledge card, raw output."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Markdown, Static


class SteerScreen(ModalScreen[str | None]):
    """Free-text guidance for the agents' next round; dismisses with the text (None: cancelled)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="steer_cancel")]

    def __init__(self, current: str = "", cursor_blink: bool = True) -> None:
        super().__init__()
        self.current = current
        self.cursor_blink = cursor_blink

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="steer-dialog"):
            yield Static("Steer the next round: guidance every variant's prompt gets "
                         "(e.g. \"try double buffering with smaller tiles\"). Enter sets it, "
                         "an empty line clears it, Esc cancels.", classes="dialog-text")
            yield Input(self.current, placeholder="guidance for the next round", id="steer-input")

    def on_mount(self) -> None:
        self.query_one("#steer-dialog").border_title = "steer"
        box = self.query_one(Input)
        box.cursor_blink = self.cursor_blink
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class CardScreen(ModalScreen[None]):
    """One knowledge card, in full."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("escape,q,k", "close", "Close", id="card_close")]

    def __init__(self, card_id: str) -> None:
        super().__init__()
        self.card_id = card_id

    def compose(self) -> ComposeResult:
        from knowledge import get_card

        try:
            card = get_card(self.card_id)
            title = f"{card.id} · {card.level} · {card.title}"
            body = card.render("full")
        except Exception as exc:  # unknown id: say so, keep the app up
            title, body = self.card_id, f"No card `{self.card_id}` in the knowledge base ({exc})."
        self._title = title
        with VerticalScroll(classes="dialog wide", id="card-dialog"):
            yield Markdown(body)

    def on_mount(self) -> None:
        d = self.query_one("#card-dialog")
        d.border_title = self._title
        d.border_subtitle = "Esc closes"
        d.focus()

    def action_close(self) -> None:
        self.dismiss(None)


class TextScreen(ModalScreen[None]):
    """Read-only text (raw compiler / runtime output)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("escape,q,r", "close", "Close", id="text_close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        from rich.text import Text

        with VerticalScroll(classes="dialog wide", id="text-dialog"):
            yield Static(Text(self.text))

    def on_mount(self) -> None:
        d = self.query_one("#text-dialog")
        d.border_title = self.title_text
        d.border_subtitle = "Esc closes"
        d.focus()

    def action_close(self) -> None:
        self.dismiss(None)
