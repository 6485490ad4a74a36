"""Panes, screens and preferences: what the engineer sees and what is remembered."""

from __future__ import annotations

import yaml

from copilot.config import load_settings
from tests.tui.conftest import SIZE, back_to_board, select, until_review, wait_for
from tui.screens.dialogs import CardScreen, TextScreen
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.widgets.code_view import CodeView
from tui.widgets.diagnostics_pane import DiagnosticsPane
from tui.widgets.knowledge_pane import KnowledgePane
from tui.widgets.leaderboard import Leaderboard
from tui.widgets.progress_chart import ProgressChart


async def test_leaderboard_marks_estimates_and_failed_rows_in_words(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        board = app.screen.query_one(Leaderboard)
        assert board.visible_ids() == ["r1-c4", "r1-c2", "r1-c1", "r0-base", "r1-c3"]
        top = board.get_row("r1-c4")
        assert top[0] == "1" and top[6] == "71.43 µs est. (×÷1.35)" and top[7] == "1.40×"
        assert board.get_row("r1-c3")[5] == "✗ build failed" and board.get_row("r1-c3")[0] == "—"
        progress = str(app.screen.query_one(ProgressChart).render())
        assert progress  # rendered without error


async def test_filter_and_sort(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        board = app.screen.query_one(Leaderboard)
        await pilot.press("slash", *"failed", "enter")
        assert board.visible_ids() == ["r1-c3"]
        await pilot.press("slash", "escape")
        assert len(board.visible_ids()) == 5
        board.set_sort("id")
        assert board.visible_ids() == ["r0-base", "r1-c1", "r1-c2", "r1-c3", "r1-c4"]


async def test_diagnostic_jumps_to_its_line_and_raw_output_opens(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c3")
        pane = app.screen.query_one(DiagnosticsPane)
        assert pane.diagnostics[0]["id"] == "L2.UB_CAPACITY"
        line = pane.diagnostics[0]["line"]
        pane.focus()
        await pilot.press("enter")
        await pilot.pause()
        code = app.screen.query_one(CodeView)
        assert code.focus_line == line and "1 marked line" in code.border_title
        app.screen.query_one(Leaderboard).focus()
        await pilot.press("r")
        assert isinstance(app.screen, TextScreen) and "InitBuffer total 393216 B" in app.screen.text


async def test_diff_against_the_parent(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c4")
        await pilot.press("d")
        code = app.screen.query_one(CodeView)
        assert code.show_diff and code.border_title == "diff · r0-base → r1-c4"
        await wait_for(pilot, lambda: code.ready, what="the diff")
        first = code.text.splitlines()[0]
        assert first.startswith("why: tile_elems -> ") and "buffer_num -> 2" in first   # the agent's reasons first


async def test_knowledge_slice_grouped_by_level_and_card_opens(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await wait_for(pilot, lambda: app.model.latest_slice is not None, what="the slice")
        s = app.model.latest_slice
        assert s.phase == "init" and s.total_tokens == sum(c["tokens"] for c in s.cards)
        await pilot.press("4")
        tree = app.screen.query_one(KnowledgePane)
        levels = [str(n.label).split()[0] for n in tree.root.children]
        assert levels == sorted(levels) and levels[0] == "L0"
        l2 = next(n for n in tree.root.children if str(n.label).startswith("L2"))
        tree.move_cursor(l2.children[0])
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CardScreen) and app.screen.card_id.startswith("L2.")


async def test_help_lists_every_binding_id(make_app):
    app, _ = make_app(start=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        from tui.screens.help import binding_rows

        ids = {row[3] for row in binding_rows(app)}
        assert {b.id for b in MainScreen.BINDINGS} <= ids
        assert {"pin", "veto", "edit", "steer", "next_round", "auto_continue", "stop", "theme",
                "new_session", "resume_session", "settings", "help", "quit"} <= ids


async def test_theme_switches_at_runtime_and_is_remembered(make_app, tmp_path):
    app, _ = make_app(start=False)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "cannpilot-dark"
        await pilot.press("t")
        assert app.theme == "cannpilot-light"
    path = tmp_path / "config" / "settings.yaml"
    assert yaml.safe_load(path.read_text())["theme"] == "cannpilot-light"
    assert load_settings(path, env={}).theme == "cannpilot-light"


async def test_keys_can_be_remapped_by_binding_id(make_app):
    app, _ = make_app(rounds=2, keymap={"pin": "P"})
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c4")
        await pilot.press("P")
        assert app.draft.pins == ["r1-c4"]


async def test_new_session_and_resume(make_app, tmp_path):
    from tui.screens.sessions import NewSessionScreen, ResumeScreen

    app, _ = make_app(rounds=1, store=True, name="first")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.engine_status == "finished", what="session one")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, ResumeScreen), what="the resume screen")
        assert app.screen.query_one("DataTable").row_count == 1
        app.settings.rounds = 2
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.generation == 2 and app.engine_status in ("finished", "failed"),
                       what="the resumed session's end")
        assert app.engine_status == "finished", app.engine_error
        assert {"r1-c4", "r2-c1"} <= set(app.model.rows)      # stored round 1, new round 2
        assert app.model.rows["r1-c4"].status == "passed"
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewSessionScreen), what="the new-session screen")
        app.screen.query_one("#task-path").value = str(tmp_path / "missing-task")
        await pilot.click("#start")
        await wait_for(pilot, lambda: app.engine_status == "failed", what="a clear failure")
        assert "missing-task" in app.engine_error
