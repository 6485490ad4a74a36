"""Snapshots at a fixed terminal size (160x45), cursor blink off, fake agent/evaluator.

Regenerate after an intended UI change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and review the SVGs in `__snapshots__/`.
"""

from __future__ import annotations

from tests.tui.conftest import SIZE, back_to_board, select, until_review, wait_for
from tui.screens.editor import EditorScreen
from tui.widgets.cpp_editor import CppEditor


async def settle(pilot) -> None:
    from tui.widgets.code_view import CodeView

    app = pilot.app
    await wait_for(pilot, lambda: app.model.latest_slice is not None, what="the knowledge slice")
    app.flush_now()
    code = app.main.query_one(CodeView)
    await wait_for(pilot, lambda: code.row is not None and code.ready, what="the highlighted code")
    app.clear_notifications()
    await pilot.pause()


def test_main_screen_mid_round(snap_compare, make_app):
    app, _ = make_app(rounds=2, hold={"r1-c3", "r1-c4"})

    async def run_before(pilot):
        def two_passed():
            rows = app.model.rows
            return all(rows.get(c) is not None and rows[c].status == "passed" for c in ("r1-c1", "r1-c2"))

        await wait_for(pilot, two_passed, what="two evaluations")
        await select(pilot, "r1-c2")     # the code pane follows the cursor: pin it, not the timing
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_review_between_rounds(snap_compare, make_app):
    app, _ = make_app(rounds=3)

    async def run_before(pilot):
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c4")
        await pilot.press("p")
        await select(pilot, "r1-c3")
        await pilot.press("x", "s", *"try double buffering", "enter")
        await settle(pilot)
        app.open_review()
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ReviewScreen", what="the review")
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_editor_with_a_diagnostic(snap_compare, make_app):
    app, _ = make_app(rounds=2)

    async def run_before(pilot):
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c2")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditorScreen), what="the editor")
        editor = app.screen.query_one(CppEditor)
        editor.move_cursor((2, 0))
        editor.insert('#include <cstdlib>\n')
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: app.screen.diagnostics and app.screen.diagnostics[0]["line"] == 3,
                       what="the quick check")
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_knowledge_slice(snap_compare, make_app):
    app, _ = make_app(rounds=2)

    async def run_before(pilot):
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c4")     # the code pane follows the cursor: pin it, not the timing
        await settle(pilot)
        await pilot.press("4")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help(snap_compare, make_app):
    app, _ = make_app(start=False)
    assert snap_compare(app, terminal_size=SIZE, press=["f1"])


def test_high_contrast_theme(snap_compare, make_app):
    app, _ = make_app(rounds=2, theme="cannpilot-high-contrast")

    async def run_before(pilot):
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c3")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_diagnostic_line_marked_in_the_code(snap_compare, make_app):
    app, _ = make_app(rounds=2, theme="cannpilot-ascend")

    async def run_before(pilot):
        await until_review(pilot, 1)
        await back_to_board(pilot)
        await select(pilot, "r1-c3")
        await settle(pilot)
        await pilot.press("3", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
