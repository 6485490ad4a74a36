"""Settings: defaults of a new session (chip, backend, agent/model, budget, rounds, variants), the
theme and auto-continue: the fields of `copilot.config.Settings` the TUI edits. Save checks every
value with the settings model (a bad one is named on the screen, nothing is saved); the app then
writes the settings file atomically."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from themes import THEME_NAMES


class SettingsScreen(ModalScreen):
    CSS_PATH = "settings.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="settings_cancel")]

    def __init__(self, settings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        from copilot.chips import list_chips

        s = self.settings
        chips = list_chips()
        budget = s.budget.max_usd
        with Vertical(id="settings"):
            for label, widget in (
                ("chip", Select([(c, c) for c in chips], value=s.chip if s.chip in chips else chips[0],
                                id="chip", allow_blank=False)),
                ("backend", Select([("sim (CPU emulator, estimated times)", "sim"),
                                    ("npu (CANN + torch_npu, measured)", "npu"),
                                    ("auto (npu when present, else sim)", "auto")], value=s.backend,
                                   id="backend", allow_blank=False)),
                ("agent / model", Input(s.model or "offline", id="agent",
                                        placeholder="offline or an LLM model name")),
                ("budget (USD, 0 = none)", Input(f"{budget:g}" if budget else "0", id="budget")),
                ("rounds", Input(str(s.rounds), id="rounds")),
                ("variants", Input(str(s.variants), id="variants")),
                ("theme", Select([(t, t) for t in THEME_NAMES], value=self.app.theme
                                 if self.app.theme in THEME_NAMES else THEME_NAMES[0], id="theme",
                                 allow_blank=False)),
                ("auto-continue", Switch(value=s.tui.auto_continue, id="auto_continue")),
            ):
                with Horizontal(classes="field"):
                    yield Label(label)
                    yield widget
            yield Static("", id="settings-error")
            with Horizontal(classes="buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#settings").border_title = "settings"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
            return
        new = self.edited()
        if isinstance(new, str):
            self.query_one("#settings-error", Static).update(new)
            return
        self.app.theme = new.theme
        self.dismiss(new)

    def edited(self):
        """A copy of the settings with the screen's values, or the one line naming a bad value."""
        from pydantic import ValidationError

        new = self.settings.model_copy(deep=True)
        number = {"budget": float, "rounds": int, "variants": int}
        values = {}
        for wid, cast in number.items():
            text = self.query_one(f"#{wid}", Input).value.strip()
            try:
                values[wid] = cast(text)
            except ValueError:
                return f"{wid}: '{text}' is not a {'number' if cast is float else 'whole number'}"
        try:
            new.chip = self.query_one("#chip", Select).value
            new.backend = self.query_one("#backend", Select).value
            new.model = self.query_one("#agent", Input).value.strip() or None
            new.budget.max_usd = values["budget"] or None       # 0: no budget
            new.rounds = values["rounds"]
            new.variants = values["variants"]
            new.theme = self.query_one("#theme", Select).value
            new.tui.auto_continue = self.query_one("#auto_continue", Switch).value
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(x) for x in err.get("loc", ())) or "settings"
            return f"{where}: {err.get('msg', 'invalid value')} (got {err.get('input')!r})"
        return new

    def action_cancel(self) -> None:
        self.dismiss(None)
