"""Every engineer action, asserted on the `RoundDecision` the engine receives (fake agent and
evaluator, the real engine in its worker thread)."""

from __future__ import annotations

from copilot.config import load_settings
from copilot.evolution.engine import RoundDecision
from tests.tui.conftest import SIZE, back_to_board, select, until_review, wait_for
from tui.screens.editor import EditorScreen
from tui.screens.review import ReviewScreen
from tui.widgets.cpp_editor import CppEditor
from tui.widgets.leaderboard import Leaderboard


def received(app) -> list[RoundDecision]:
    """The decisions the engine's policy returned to the engine."""
    return app.policy.decisions


async def test_continue_from_the_review_sends_an_empty_decision_and_runs_round_two(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await pilot.press("n")
        await wait_for(pilot, lambda: app.engine_status == "finished", what="the end of the session")
        assert received(app) == [RoundDecision()]
        assert {r.round for r in app.model.rows.values()} == {0, 1, 2}
        assert app.model.finished == "finished"


async def test_pin_the_top_candidate(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        board = app.screen.query_one(Leaderboard)
        top = board.visible_ids()[0]
        assert top == "r1-c4"              # fastest estimate
        await select(pilot, top)
        await pilot.press("p")
        assert "📌 to pin" in board.get_row(top)[-1]
        await pilot.press("n")
        await wait_for(pilot, lambda: received(app), what="the decision")
        assert received(app)[0].pins == ["r1-c4"] and received(app)[0].action == "continue"
        await wait_for(pilot, lambda: app.model.rows["r1-c4"].pinned, what="the pin to show")
        assert "📌 pinned" in board.get_row("r1-c4")[-1]


async def test_veto_the_last_candidate(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        board = app.screen.query_one(Leaderboard)
        last = board.visible_ids()[-1]
        await select(pilot, last)
        await pilot.press("x")
        await pilot.press("n")
        await wait_for(pilot, lambda: received(app), what="the decision")
        assert received(app)[0].vetoes == [last]
        await wait_for(pilot, lambda: app.model.rows[last].vetoed, what="the veto to show")
        assert "✗ vetoed" in board.get_row(last)[-1]


async def test_pin_twice_withdraws_it(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c2")
        await pilot.press("p", "p", "n")
        await wait_for(pilot, lambda: received(app), what="the decision")
        assert received(app)[0] == RoundDecision()


async def test_steer_sends_the_text(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await pilot.press("s")
        await pilot.press(*"smaller tiles")
        await pilot.press("enter", "n")
        await wait_for(pilot, lambda: received(app), what="the decision")
        assert received(app)[0].steer == "smaller tiles"


async def test_edit_enters_a_human_candidate_and_shows_its_diagnostics(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c4")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), what="the editor")
        editor = app.screen.query_one(CppEditor)
        editor.move_cursor((0, 0))
        editor.insert('void f() { system("ls"); }\n')
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: any(d["id"] == "LINT.FORBIDDEN" for d in app.screen.diagnostics),
                       what="the quick check")
        assert 1 in editor.marked_lines
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, EditorScreen), what="the editor to close")
        assert app.draft.edits and app.draft.edits[0].parent_id == "r1-c4"
        await pilot.press("n")
        await wait_for(pilot, lambda: received(app), what="the decision")
        edit = received(app)[0].edits[0]
        assert edit.parent_id == "r1-c4" and edit.code.startswith('void f() { system("ls"); }')
        await wait_for(pilot, lambda: app.model.rows.get("r1-h1") is not None
                       and app.model.rows["r1-h1"].status == "build_failed", what="the human candidate")
        row = app.model.rows["r1-h1"]
        assert row.origin == "human" and row.diagnostics[0]["id"] == "LINT.FORBIDDEN"


async def test_stop_from_the_review_stops_the_session(make_app):
    app, _ = make_app(rounds=3)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await pilot.press("S")
        await wait_for(pilot, lambda: app.engine_status == "stopped", what="the session to stop")
        assert [d.action for d in received(app)] == ["stop"]
        assert not any(r.round == 2 for r in app.model.rows.values())


async def test_auto_continue_never_waits(make_app):
    app, _ = make_app(rounds=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        assert app.auto_continue
        await wait_for(pilot, lambda: app.engine_status == "finished", what="the end of the session")
        assert received(app) == [RoundDecision(), RoundDecision()]
        assert not any(isinstance(s, ReviewScreen) for s in app.screen_stack)
    assert app.settings.tui.auto_continue     # remembered in the settings file
    assert load_settings(app.settings_path, env={}).tui.auto_continue


async def test_decisions_entered_while_the_round_runs_are_sent_at_its_end(make_app):
    app, ev = make_app(rounds=2, hold={"r1-c4"})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.rows.get("r1-c2") and app.model.rows["r1-c2"].status == "passed",
                       what="r1-c2")
        assert app.pending is None           # the round is still running (r1-c4 held)
        await select(pilot, "r1-c2")
        await pilot.press("p")
        await select(pilot, "r1-c1")
        await pilot.press("x", "S")          # veto, and stop when the round ends
        assert app.draft.pins == ["r1-c2"] and app.draft.vetoes == ["r1-c1"] and app.draft.stop
        ev.gate.set()
        await wait_for(pilot, lambda: app.engine_status == "stopped", what="the session to stop")
        assert received(app) == [RoundDecision(pins=["r1-c2"], vetoes=["r1-c1"], action="stop")]


async def test_command_palette_runs_an_action(make_app):
    app, _ = make_app(rounds=2)
    async with app.run_test(size=SIZE) as pilot:
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c1")
        await pilot.press("ctrl+p")
        await pilot.press(*"Veto candidate")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.draft.vetoes == ["r1-c1"], what="the veto from the palette")
        await pilot.press("n")
        await wait_for(pilot, lambda: received(app), what="the decision")
        assert received(app)[0].vetoes == ["r1-c1"]
