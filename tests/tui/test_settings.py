"""The TUI on the one settings model: the settings screen checks and saves it, preferences and
new-session defaults come from it, bad values are named."""

from __future__ import annotations

import pytest
import yaml

from copilot.config import Settings, load_settings
from tests.tui.conftest import SIZE, wait_for
from tui.screens.settings import SettingsScreen


async def open_settings(pilot) -> SettingsScreen:
    await pilot.press("f2")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen), 10, "the settings screen")
    return pilot.app.screen


async def test_the_settings_screen_saves_the_settings_file_atomically(make_app, tmp_path):
    app, _ = make_app(start=False)
    path = tmp_path / "config" / "settings.yaml"
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot)
        screen.query_one("#rounds").value = "5"
        screen.query_one("#budget").value = "1.5"
        screen.query_one("#agent").value = "offline"
        screen.query_one("#chip").value = "910B4"
        screen.query_one("#auto_continue").value = True
        await pilot.click("#save")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), 10, "the screen to close")
        assert app.auto_continue and app.settings.rounds == 5
    saved = yaml.safe_load(path.read_text())
    assert saved == {"chip": "910B4", "rounds": 5, "budget": {"max_usd": 1.5}, "tui": {"auto_continue": True}}
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.yaml"]     # no temp file left
    again = load_settings(path, env={})
    assert (again.chip, again.rounds, again.budget.max_usd, again.tui.auto_continue) == ("910B4", 5, 1.5, True)


async def test_a_bad_value_on_the_settings_screen_is_named_and_nothing_is_saved(make_app, tmp_path):
    app, _ = make_app(start=False)
    path = tmp_path / "config" / "settings.yaml"
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot)
        screen.query_one("#rounds").value = "-1"
        await pilot.click("#save")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)                  # still open
        error = str(screen.query_one("#settings-error").render())
        assert error.startswith("rounds: ") and "(got -1)" in error
        screen.query_one("#rounds").value = "three"
        save = screen.query_one("#save")
        while save.has_class("-active"):      # a Button ignores presses during its press effect
            await pilot.pause(0.05)
        await pilot.click("#save")
        await pilot.pause()
        assert str(screen.query_one("#settings-error").render()) == "rounds: 'three' is not a whole number"
        assert app.settings.rounds == 3
    assert not path.exists()


async def test_new_sessions_start_from_the_settings(tmp_path, monkeypatch):
    """`CANNPILOT_CHIP` and settings.yaml reach the TUI's session request (the tmux test checks the
    screen of `CANNPILOT_CHIP=910B4 cannpilot`)."""
    from tui.app import CannpilotApp

    path = tmp_path / "config" / "settings.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("rounds: 4\nvariants: 2\ntheme: cannpilot-ascend\n")
    monkeypatch.setenv("CANNPILOT_CHIP", "910B4")
    app = CannpilotApp(start=False, store=None, settings_path=path)
    assert (app.request.chip, app.request.rounds, app.request.variants, app.request.agent) == \
        ("910B4", 4, 2, "offline")
    async with app.run_test(size=SIZE):
        assert app.theme == "cannpilot-ascend"


async def test_an_unknown_binding_id_in_the_keymap_is_named(make_app):
    app, _ = make_app(start=False, keymap={"pin": "P", "pni": "Q"})
    notes = []
    app.notify = lambda message, **kw: notes.append((message, kw.get("severity")))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.painted_at is not None, 10, "the first paint")
        await pilot.pause()
    assert [(m, s) for m, s in notes if "keymap" in m] == [
        ("default: `tui.keymap`: unknown binding id pni (F1 lists the ids)", "warning")]


def test_an_unknown_theme_is_one_line_naming_its_source(tmp_path):
    from copilot.errors import BadInput
    from tui.settings import check_theme

    path = tmp_path / "settings.yaml"
    path.write_text("chip: 910B2\ntheme: neon\n")
    with pytest.raises(BadInput, match=rf"^{path}:2: `theme`: unknown theme 'neon' \(known: cannpilot-dark"):
        check_theme(load_settings(path, env={}))
    check_theme(Settings())                                            # the default is known


@pytest.mark.parametrize("argv, env, expected", [
    (["tui"], {"CANNPILOT_CHIP": "910X"}, "cannpilot: error: CANNPILOT_CHIP: `chip`: unknown chip '910X'"),
    (["tui", "--rounds", "-1"], {}, "cannpilot: error: --rounds: "),
    (["run", "--task", "relu", "--variants", "0"], {}, "cannpilot: error: --variants: "),
    (["run", "--task", "relu"], {"CANNPILOT_ROUNDS": "many"}, "cannpilot: error: CANNPILOT_ROUNDS: `rounds`"),
])
def test_a_bad_setting_stops_the_command_with_one_line(tmp_path, argv, env, expected):
    import os
    import subprocess
    import sys

    full = {**os.environ, "CANNPILOT_CONFIG_DIR": str(tmp_path / "config"), **env}
    r = subprocess.run([sys.executable, "-m", "copilot", *argv], capture_output=True, text=True,
                       env=full, timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(expected) and r.stderr.count("\n") == 1, r.stderr
