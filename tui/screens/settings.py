"""Settings: defaults of a new session (chip, backend, agent/model, budget, rounds, variants) and
the theme. Saved to the settings file at once."""

from __future__ import annotations

import dataclasses

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

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
        with Vertical(id="settings"):
            for label, widget in (
                ("chip", Select([(c, c) for c in chips], value=s.chip if s.chip in chips else chips[0],
                                id="chip", allow_blank=False)),
                ("backend", Select([("sim (CPU emulator, estimated times)", "sim"),
                                    ("npu (CANN + torch_npu, measured)", "npu")], value=s.backend,
                                   id="backend", allow_blank=False)),
                ("agent / model", Input(s.agent, id="agent", placeholder="offline or an LLM model name")),
                ("budget (USD, 0 = none)", Input(f"{s.budget_usd:g}", id="budget", type="number")),
                ("rounds", Input(str(s.rounds), id="rounds", type="integer")),
                ("variants", Input(str(s.variants), id="variants", type="integer")),
                ("theme", Select([(t, t) for t in THEME_NAMES], value=self.app.theme
                                 if self.app.theme in THEME_NAMES else THEME_NAMES[0], id="theme",
                                 allow_blank=False)),
            ):
                with Horizontal(classes="field"):
                    yield Label(label)
                    yield widget
            with Horizontal(classes="buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#settings").border_title = "settings"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
            return

        def num(wid: str, cast, default):
            try:
                v = cast(self.query_one(f"#{wid}", Input).value)
                return v if v >= 0 else default
            except ValueError:
                return default

        s = self.settings
        new = dataclasses.replace(
            s, chip=self.query_one("#chip", Select).value, backend=self.query_one("#backend", Select).value,
            agent=self.query_one("#agent", Input).value.strip() or "offline",
            budget_usd=float(num("budget", float, s.budget_usd)),
            rounds=max(1, num("rounds", int, s.rounds)), variants=max(1, num("variants", int, s.variants)),
            theme=self.query_one("#theme", Select).value)
        self.app.theme = new.theme
        self.dismiss(new)

    def action_cancel(self) -> None:
        self.dismiss(None)
