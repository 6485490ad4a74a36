"""The Learn screen: a lesson's text, the editor with the learner's kernel, grading on ctrl+r.

Grading runs the sim backend's check path in a thread (`copilot.learn.grade`); the result lists
each case, the findings about the learner's code (rule, line, the card's fix; the lines are marked
in the editor) and the pipe profile (cost-model ESTIMATES). Hints come one level at a time
(ctrl+t); the reference solution only on request (ctrl+e, counted). Progress — attempts, hints,
time, the code — is written to the session store, so reopening the lesson resumes it.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Markdown, Static

from tui.widgets.cpp_editor import CppEditor


def render_grade_markup(g) -> str:
    """The grade as Rich markup: verdict, findings, cases, the pipe profile of the last timed case."""
    from copilot.commands.learn import pipe_bars

    color = "green" if g.passed else "red"
    out = [f"[b {color}]{'✓' if g.passed else '✗'} {escape(g.headline())}[/]"]
    for f in g.findings:
        mark = "[red]✗[/]" if f.blocking else "[yellow]![/]"
        where = f"line {f.line}: " if f.line else ""
        out.append(f"\n{mark} [b]{escape(f.rule)}[/] {escape(where)}{escape(f.message)}")
        if f.code:
            out.append(f"    [dim]{f.line:>4} |[/] {escape(f.code)}")
        if f.fix:
            out.append(f"    [cyan]fix:[/] {escape(f.fix)}")
        if f.card:
            out.append(f"    [cyan]read:[/] {escape(f.card)} {escape(f.card_title)}")
    if g.cases:
        out.append("\n[b]cases[/] (times are cost-model ESTIMATES)")
        for c in g.cases:
            t = f"{c.est_us:.2f} µs est." if c.est_us else "-"
            res = "[green]pass[/]" if c.passed else "[red]FAIL[/]"
            out.append(f"  case {escape(c.id)}: {res}  {t}  {escape(c.message[:90])}")
        timed = [c for c in g.cases if c.est_us]
        if timed:
            c = timed[-1]
            roof = f", roofline {c.roofline_fraction:.0%}" if c.roofline_fraction else ""
            out.append(f"\n[b]pipe profile[/] case {escape(c.id)}: {c.est_us:.2f} µs est., bound by "
                       f"{escape(c.bottleneck)}{roof}")
            out += ["  " + b for b in pipe_bars(c.pipes_us, c.est_us)]
    if g.time_target_us is not None:
        t = f"{g.time_us:.2f}" if g.time_us else "-"
        out.append(f"\ntime {t} µs est., target ≤ {g.time_target_us:.2f} µs est.")
    return "\n".join(out)


class LearnScreen(Screen):
    CSS_PATH = "learn.tcss"
    BINDINGS = [
        Binding("ctrl+r", "grade", "Grade", id="learn_grade", priority=True),
        Binding("ctrl+t", "hint", "Next hint", id="learn_hint", priority=True),
        Binding("ctrl+e", "solution", "Reference solution", id="learn_solution", priority=True),
        Binding("ctrl+g", "goto_finding", "Go to finding", id="learn_goto", priority=True),
        Binding("escape", "leave", "Leave (work saved)", id="learn_leave", priority=True),
    ]

    class Graded(Message):
        def __init__(self, grade: Any, code: str) -> None:
            super().__init__()
            self.grade = grade
            self.code = code

    def __init__(self, lesson, store=None, *, grader: Callable | None = None, chip: str | None = None,
                 learner: str | None = None, cursor_blink: bool = True, exit_on_leave: bool = False) -> None:
        super().__init__()
        self.lesson = lesson
        self.store = store
        self.grader = grader
        self.chip = chip
        self.learner = learner
        self.cursor_blink = cursor_blink
        self.exit_on_leave = exit_on_leave
        self.opened_at = time.monotonic()
        self.progress: dict = {}
        self.hints_shown = 0
        self.last_grade = None
        self.grading = False
        if store is not None:
            from sessions.lessons import open_lesson

            self.progress = open_lesson(store, lesson.key, learner)
            self.hints_shown = int(self.progress.get("hints_used") or 0)

    # ---- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._head(), id="learn-head")
        with Horizontal(id="learn-main"):
            with VerticalScroll(id="learn-text"):
                yield Markdown(self.lesson.text, id="learn-lesson")
                yield Static(self._hints_markup(), id="learn-hints")
            with Vertical(id="learn-work"):
                yield CppEditor(self.progress.get("code") or self.lesson.starter, id="learn-editor")
                with VerticalScroll(id="learn-results-box"):
                    yield Static("ctrl+r grades your kernel on the emulator (a few seconds); ctrl+t shows the "
                                 "next hint; ctrl+e the reference solution.", id="learn-results")
        yield Footer()

    def on_mount(self) -> None:
        ed = self.query_one(CppEditor)
        ed.cursor_blink = self.cursor_blink
        ed.soft_wrap = False            # one row per source line: the line numbers the grader names
        ed.border_title = f"lesson {self.lesson.number} · your kernel" + (
            " (resumed)" if self.progress.get("code") else " (starter: fill the GAPs)")
        self.query_one("#learn-text").border_title = self.lesson.title
        self.query_one("#learn-results-box").border_title = "grade"
        ed.focus()

    def _head(self) -> str:
        p = self.progress
        state = "[green]✓ passed[/]" if p.get("passed") else "not passed yet"
        return (f"[b]Lesson {self.lesson.number}[/] {escape(self.lesson.title)} · {state} · attempts "
                f"{p.get('attempts', 0)} · hints {self.hints_shown}/3 · ctrl+r grade · ctrl+t hint · "
                "ctrl+e solution · esc leave")

    def _hints_markup(self) -> str:
        if not self.hints_shown:
            return "[dim]No hint shown yet (ctrl+t).[/]"
        code = self.query_one(CppEditor).text if self.is_mounted else (self.progress.get("code") or "")
        lines = []
        for k in range(1, self.hints_shown + 1):
            h = self.lesson.hint(k)
            lines.append(f"[b]hint {k}/3[/] {escape(h.render(code or self.lesson.starter))}")
        return "\n\n".join(lines)

    def _refresh_head(self) -> None:
        self.query_one("#learn-head", Static).update(self._head())

    # ---- grading ----------------------------------------------------------------------------

    def action_grade(self) -> None:
        if self.grading:
            self.notify("grading is still running", timeout=2)
            return
        self.grading = True
        self.query_one("#learn-results", Static).update("[b]grading…[/] building and running the cases on "
                                                        "the emulator")
        self._grade(self.query_one(CppEditor).text)

    @work(thread=True, group="learn-grade", exclusive=True, exit_on_error=False)
    def _grade(self, code: str) -> None:
        from copilot.learn import grade

        g = (self.grader or grade)(self.lesson, code, chip=self.chip)
        self.post_message(self.Graded(g, code))

    @on(Graded)
    def _graded(self, message: "LearnScreen.Graded") -> None:
        self.grading = False
        g = self.last_grade = message.grade
        self.query_one("#learn-results", Static).update(render_grade_markup(g))
        self.query_one(CppEditor).mark_lines(set(g.lines))
        if self.store is not None:
            from sessions.lessons import progress, record_attempt

            record_attempt(self.store, self.lesson.key, passed=g.passed, rules=g.rules, time_us=g.time_us,
                           code=message.code, learner=self.learner)
            self.progress = progress(self.store, self.learner).get(self.lesson.key, self.progress)
        else:
            self.progress = {**self.progress, "attempts": self.progress.get("attempts", 0) + 1,
                             "passed": self.progress.get("passed") or g.passed}
        self._refresh_head()
        if g.passed:
            self.notify(f"lesson {self.lesson.number} passed", timeout=4)

    def action_goto_finding(self) -> None:
        if self.last_grade and self.last_grade.lines:
            ed = self.query_one(CppEditor)
            ed.move_cursor((self.last_grade.lines[0] - 1, 0), center=True)
            ed.focus()

    # ---- hints and the reference ------------------------------------------------------------

    def action_hint(self) -> None:
        if self.hints_shown >= 3:
            self.notify("all three hints are shown; ctrl+e shows the reference solution", timeout=3)
            return
        self.hints_shown += 1
        if self.store is not None:
            from sessions.lessons import record_hint

            record_hint(self.store, self.lesson.key, self.hints_shown, self.learner)
        self.query_one("#learn-hints", Static).update(self._hints_markup())
        self.query_one("#learn-text", VerticalScroll).scroll_end(animate=False)
        self._refresh_head()

    def action_solution(self) -> None:
        if self.store is not None:
            from sessions.lessons import record_solution_shown

            record_solution_shown(self.store, self.lesson.key, self.learner)
        self.query_one("#learn-results", Static).update(
            "[b]reference solution[/] (your code in the editor is unchanged)\n\n" + escape(self.lesson.solution))

    # ---- leaving ----------------------------------------------------------------------------

    def save(self) -> None:
        if self.store is not None:
            from sessions.lessons import save_work

            save_work(self.store, self.lesson.key, code=self.query_one(CppEditor).text,
                      seconds=time.monotonic() - self.opened_at, learner=self.learner)
            self.opened_at = time.monotonic()

    def action_leave(self) -> None:
        self.save()
        if self.exit_on_leave:
            self.app.exit()
        else:
            self.dismiss(None)
