"""Fixtures for the TUI tests: an app on the fake agent/evaluator, an isolated store and config."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.fakes import FakeAgent, FakeEvaluator

TASK = str(Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "scaled_tanh")
SIZE = (160, 45)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("CANNPILOT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CANNPILOT_STORE", str(tmp_path / "sessions.sqlite"))
    monkeypatch.setenv("CANNPILOT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def make_app(tmp_path):
    """make_app(rounds=3, hold=set(), store=False, **settings) -> (app, evaluator)."""
    from copilot.config import Settings
    from tui.app import CannpilotApp
    from tui.engine_host import SessionRequest

    def make(rounds: int = 3, variants: int = 4, hold: set[str] | None = None, store: bool = False,
             name: str = "tui-test", start: bool = True, **settings):
        ev = FakeEvaluator(hold=hold)
        tui = {k: settings.pop(k) for k in ("keymap", "auto_continue") if k in settings}
        app = CannpilotApp(SessionRequest(task=TASK, name=name, rounds=rounds, variants=variants,
                                          stagnation_rounds=9),
                           start=start, store=tmp_path / "sessions.sqlite" if store else None,
                           settings=Settings(**settings, tui=tui),
                           settings_path=tmp_path / "config" / "settings.yaml",
                           agent_factory=lambda cfg: FakeAgent(), evaluator_factory=lambda cfg: ev,
                           cursor_blink=False)
        return app, ev

    return make


async def wait_for(pilot, condition, timeout: float = 60.0, what: str = "condition") -> None:
    """Poll `condition` while the app runs (a readiness wait, not a timing assertion)."""
    steps = int(timeout / 0.05)
    for _ in range(steps):
        if condition():
            pilot.app.flush_now()
            await pilot.pause()
            return
        await pilot.pause(0.05)
    app = pilot.app
    state = {k: r.status for k, r in app.model.rows.items()}
    raise AssertionError(f"timed out waiting for {what}: engine {app.engine_status} {app.engine_error!r}, "
                         f"rows {state}, screen {app.screen!r}")


async def until_review(pilot, round_: int = 1) -> None:
    from tui.screens.review import ReviewScreen

    app = pilot.app
    await wait_for(pilot, lambda: app.pending is not None and app.pending.round == round_
                   and isinstance(app.screen, ReviewScreen), what=f"the review of round {round_}")


async def back_to_board(pilot) -> None:
    await pilot.press("escape")
    await pilot.pause()


async def select(pilot, cid: str) -> None:
    """Put the leaderboard cursor on `cid` and wait until the code and diagnostics panes show it."""
    from tui.widgets.code_view import CodeView
    from tui.widgets.leaderboard import Leaderboard

    screen = pilot.app.screen
    screen.query_one(Leaderboard).select(cid)
    code = screen.query_one(CodeView)
    await wait_for(pilot, lambda: code.row is not None and code.row.id == cid, 10, f"{cid} in the code pane")
