"""The Learn screen (teaching mode) in Pilot tests, on a fake grader (no g++ needed): the lesson
text and the starter, ctrl+r grading with findings marked, hints one level at a time, the
reference on request, progress in the store and resuming where the learner left off."""

from __future__ import annotations

import pytest

from copilot.learn import CaseOutcome, Finding, Grade, get_lesson
from tests.tui.conftest import SIZE, wait_for
from tui.widgets.cpp_editor import CppEditor

LESSON = get_lesson(1)
DEQUE_LINE = next(i for i, l in enumerate(LESSON.starter.splitlines(), 1) if "outZ_.DeQue" in l)


def fake_grader(calls: list):
    def grade(lesson, code, chip=None):
        calls.append(code)
        if "outZ_.EnQue(z)" in code:
            return Grade(lesson.number, True, True,
                         [CaseOutcome("1", True, "pass", 5.1, {"MTE2": 0.07, "V": 0.02, "MTE3": 0.04, "S": 0.0},
                                      "latency", 0.01)], [], 5.1)
        return Grade(lesson.number, False, True, [CaseOutcome("1", False, "rule/run errors (L2.QUEUE_PROTOCOL)")],
                     [Finding("L2.QUEUE_PROTOCOL", "error", "DeQue of an empty queue (no EnQue before it)",
                              DEQUE_LINE, LESSON.starter.splitlines()[DEQUE_LINE - 1].strip(), "L2.QUEUE_PROTOCOL",
                              "Queue protocol", "write each tile as CopyIn → Compute → CopyOut")])
    return grade


@pytest.fixture
def learn_app(tmp_path):
    from copilot.config import Settings
    from tui.app import CannpilotApp

    calls: list = []

    def make():
        app = CannpilotApp(start=False, store=tmp_path / "sessions.sqlite", settings=Settings(),
                           settings_path=tmp_path / "config" / "settings.yaml", cursor_blink=False, lesson=1)
        app.lesson_grader = fake_grader(calls)
        return app

    return make, calls, tmp_path / "sessions.sqlite"


def _screen(app):
    from tui.screens.learn import LearnScreen

    assert isinstance(app.screen, LearnScreen)
    return app.screen


async def test_opens_the_lesson_with_its_text_and_the_starter(learn_app):
    make, _, _ = learn_app
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = _screen(app)
        assert screen.query_one(CppEditor).text == LESSON.starter
        assert "Lesson 1" in str(screen.query_one("#learn-head").render())
        assert LESSON.title in screen.query_one("#learn-text").border_title


async def test_ctrl_r_grades_marks_the_line_and_records_the_attempt(learn_app):
    from sessions.lessons import progress
    from sessions.store import SessionStore

    make, calls, store_path = learn_app
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = _screen(app)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: screen.last_grade is not None, timeout=10, what="the grade")
        text = str(screen.query_one("#learn-results").render())
        assert "L2.QUEUE_PROTOCOL" in text and f"line {DEQUE_LINE}" in text and "fix:" in text
        assert DEQUE_LINE in screen.query_one(CppEditor).marked_lines
        assert calls == [LESSON.starter]
        # the learner fixes the gaps and grades again
        ed = screen.query_one(CppEditor)
        ed.text = LESSON.solution
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: len(calls) == 2 and screen.last_grade.passed, timeout=10, what="a pass")
        text = str(screen.query_one("#learn-results").render())
        assert "passed" in text and "µs est." in text and "MTE2" in text
    with SessionStore(store_path) as store:
        row = next(iter(progress(store).values()))
        assert (row["attempts"], row["passed"]) == (2, 1)


async def test_hints_come_one_level_at_a_time_and_the_solution_only_on_request(learn_app):
    from sessions.lessons import progress
    from sessions.store import SessionStore

    make, _, store_path = learn_app
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = _screen(app)
        hints = screen.query_one("#learn-hints")
        assert "No hint" in str(hints.render())
        assert LESSON.solution.splitlines()[0] not in str(screen.query_one("#learn-results").render())
        await pilot.press("ctrl+t")
        assert "hint 1/3" in str(hints.render()) and "hint 2/3" not in str(hints.render())
        await pilot.press("ctrl+t", "ctrl+t")
        rendered = str(hints.render())
        assert "hint 3/3" in rendered and "outZ_.EnQue(z);" in rendered
        await pilot.press("ctrl+t")   # a fourth: nothing more, a notice
        await pilot.press("ctrl+e")
        assert "reference solution" in str(screen.query_one("#learn-results").render())
        assert screen.query_one(CppEditor).text == LESSON.starter   # the learner's code is untouched
    with SessionStore(store_path) as store:
        row = next(iter(progress(store).values()))
        assert (row["hints_used"], row["solution_shown"]) == (3, 1)


async def test_leaving_saves_the_work_and_reopening_resumes_it(learn_app):
    make, _, _ = learn_app
    app = make()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        ed = _screen(app).query_one(CppEditor)
        ed.text = LESSON.starter.replace("// GAP 1", "Add(z, x, y, tile_); // GAP 1")
        await pilot.press("ctrl+t")
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code is not None or not app.is_running
    app2 = make()
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = _screen(app2)
        assert "Add(z, x, y, tile_); // GAP 1" in screen.query_one(CppEditor).text
        assert screen.hints_shown == 1 and "(resumed)" in screen.query_one(CppEditor).border_title


def test_learn_screen_snapshot(snap_compare, learn_app):
    make, _, _ = learn_app
    app = make()

    async def run_before(pilot):
        await pilot.pause()
        screen = _screen(app)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: screen.last_grade is not None, timeout=10, what="the grade")
        await pilot.press("ctrl+t")
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
