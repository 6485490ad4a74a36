"""The command palette (ctrl+p): every action by name, and each theme."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from themes import THEME_NAMES

# (title, help, target, action): target "app" or "main" (the main screen)
ACTIONS = [
    ("Pin candidate", "keep the selected candidate as a parent (p)", "main", "pin"),
    ("Veto candidate", "never use the selected candidate as a parent; avoid its strategy (x)", "main", "veto"),
    ("Edit candidate", "edit its AscendC; saved as a human candidate (e)", "main", "edit"),
    ("Steer next round", "free-text guidance for the agents (s)", "main", "steer"),
    ("Next round", "send the decision and continue (n)", "main", "next_round"),
    ("Toggle auto-continue", "continue after each round without asking (a)", "main", "toggle_auto"),
    ("Stop session", "stop after this round (S)", "main", "stop"),
    ("Toggle diff vs parent", "code pane: source or diff (d)", "main", "toggle_diff"),
    ("Filter leaderboard", "show matching rows only (/)", "main", "filter"),
    ("Sort leaderboard", "cycle rank, time, round, id, status (o)", "main", "cycle_sort"),
    ("Raw output", "compiler / runtime output of the candidate (r)", "main", "raw_output"),
    ("Open knowledge card", "the highlighted card or the diagnostic's card (k)", "main", "open_card"),
    ("New session", "pick a built-in task or a path (ctrl+n)", "app", "new_session"),
    ("Resume session", "continue a stored session (ctrl+o)", "app", "resume_session"),
    ("Settings", "chip, backend, model, budget, rounds, variants (F2)", "app", "settings"),
    ("Help", "every key and its binding id (F1)", "app", "help"),
    ("Cycle theme", "next theme (t)", "app", "cycle_theme"),
]


class CannpilotCommands(Provider):
    def _commands(self):
        app = self.app
        for title, help_, target, action in ACTIONS:
            yield title, help_, partial(self._run, target, action)
        for name in THEME_NAMES:
            yield f"Theme: {name}", "switch theme (remembered)", partial(setattr, app, "theme", name)

    async def _run(self, target: str, action: str) -> None:
        app = self.app
        if target == "main":
            main = app.main
            if main is None:
                return
            if app.screen is not main:
                app.notify("close the open dialog first", severity="warning")
                return
            await main.run_action(action)
        else:
            await app.run_action(action)

    async def discover(self) -> Hits:
        for title, help_, cb in self._commands():
            yield DiscoveryHit(title, cb, help=help_)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_, cb in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), cb, help=help_)
