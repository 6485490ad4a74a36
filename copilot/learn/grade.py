"""Grading a learner's kernel: the sim backend's check path, explained by the knowledge base.

Every outcome is a `Finding` about the learner's own code: the rule (constraint id), the line and
its text, what is wrong, and the fix from the rule's card. A kernel that does not compile, hangs,
crashes or computes wrong values is a result like any candidate's (the sandbox contains it); the
grader itself never lets a traceback reach the learner. Times are cost-model ESTIMATES.
"""

from __future__ import annotations

import re
import hashlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from copilot.costmodel import geomean
from copilot.learn.lessons import Lesson

PIPES = ("MTE2", "V", "MTE3", "S")


@dataclass
class Finding:
    rule: str                # constraint id, e.g. L2.QUEUE_PROTOCOL, PREC.zero_output, LESSON.TIME_TARGET
    severity: str            # error | warning | info
    message: str             # what is wrong, in terms of the learner's code
    line: int = 0
    code: str = ""           # the learner's line, stripped
    card: str = ""           # the card that explains the rule
    card_title: str = ""
    fix: str = ""            # the card's fix
    blocking: bool = True    # counts against passing the lesson

    def text(self) -> str:
        """One readable paragraph: where, what, the fix, the card to read."""
        where = f"line {self.line}: `{self.code}`\n  " if self.line and self.code else (
            f"line {self.line}: " if self.line else "")
        out = f"{where}{self.rule}: {self.message}"
        if self.fix:
            out += f"\n  fix: {self.fix}"
        if self.card:
            out += f"\n  read: {self.card} ({self.card_title})" if self.card_title else f"\n  read: {self.card}"
        return out


@dataclass
class CaseOutcome:
    id: str
    passed: bool
    message: str
    est_us: float | None = None          # cost-model ESTIMATE
    pipes_us: dict = field(default_factory=dict)
    bottleneck: str = ""
    roofline_fraction: float | None = None


@dataclass
class Grade:
    lesson: int
    passed: bool
    compiled: bool
    cases: list[CaseOutcome]
    findings: list[Finding]
    time_us: float | None = None         # geometric mean of the case estimates (ESTIMATE)
    time_target_us: float | None = None
    seconds: float = 0.0                 # wall time of the grading

    @property
    def rules(self) -> list[str]:
        return [f.rule for f in self.findings]

    @property
    def lines(self) -> list[int]:
        return sorted({f.line for f in self.findings if f.line})

    def headline(self) -> str:
        n_ok = sum(c.passed for c in self.cases)
        if self.passed:
            t = f", {self.time_us:.2f} µs est." if self.time_us else ""
            return f"lesson {self.lesson} passed: {n_ok}/{len(self.cases)} cases{t}"
        if not self.compiled:
            return f"lesson {self.lesson} not passed: the kernel did not build"
        blocking = [f for f in self.findings if f.blocking]
        first = blocking[0].rule if blocking else "a check"
        return f"lesson {self.lesson} not passed: {n_ok}/{len(self.cases)} cases, first problem {first}"

    def to_json(self) -> dict:
        return {"lesson": self.lesson, "passed": self.passed, "compiled": self.compiled,
                "time_us": self.time_us, "time_target_us": self.time_target_us, "timing": "estimate",
                "cases": [asdict(c) for c in self.cases], "findings": [asdict(f) for f in self.findings],
                "seconds": self.seconds}


def _card_fix(card_id: str) -> tuple[str, str]:
    """(title, fix) of a card: an L2 card's `Fix:` sentence, else its summary."""
    from knowledge import get_card

    try:
        card = get_card(card_id)
    except KeyError:
        return "", ""
    m = re.search(r"\bFix:\s*(.*?)(?:\n\s*\n|$)", card.body, re.S)
    fix = " ".join(m.group(1).split()) if m else card.summary
    return card.title, fix


def _finding(rule: str, severity: str, message: str, line: int, lines: list[str], cards=(), hint: str = "",
             blocking: bool = True) -> Finding:
    from knowledge import cards_for_constraint, resolve_id

    rule = resolve_id(rule)
    card = next(iter(cards), "") or next(iter(cards_for_constraint(rule)), "")
    title, fix = _card_fix(card) if card else ("", "")
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Finding(rule, severity, message, line, code, card, title, fix or hint, blocking)


def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0]
    return geomean(xs) if xs else None


def grade(lesson: Lesson, source: str | Path, *, chip: str | None = None, timeout: float | None = None) -> Grade:
    """Grade `source` (the kernel's text, or a path to it) on the lesson's task and checks."""
    t0 = time.perf_counter()
    try:
        text = Path(source).read_text(errors="replace") if isinstance(source, Path) else str(source)
    except OSError as e:
        return _refused(lesson, f"cannot read {source}: {e.strerror or e}", t0)
    if not text.strip():
        return _refused(lesson, "the file is empty: start from the starter kernel (`cannpilot learn "
                                f"{lesson.number} --starter`)", t0)
    try:
        return _grade(lesson, text, chip or lesson.chip, timeout, t0)
    except Exception as e:   # the grader's own failure: one line, never a traceback for the learner
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return _refused(lesson, f"the grader could not judge this kernel: {msg}", t0, rule="LESSON.GRADER")


def _refused(lesson: Lesson, message: str, t0: float, rule: str = "LESSON.INPUT") -> Grade:
    return Grade(lesson.number, False, False, [], [Finding(rule, "error", message)],
                 time_target_us=lesson.time_target_us, seconds=time.perf_counter() - t0)


# Warnings about packaging the kernel as a CANN custom-op project (OpDef registration): the lessons
# teach the kernel and its tiling, and are graded as candidate files, not as op projects.
_PACKAGING_ONLY = frozenset({"L4.OPDEF_MISSING"})
# Findings that follow from an earlier located error rather than name a bug of their own.
_FOLLOW_ON = frozenset({"RUN.INTEGRITY"})


def _stable_copy(lesson: Lesson, text: str) -> Path:
    """The kernel under a path named by its content, so grading the same code again reuses the build."""
    from copilot.backends.sim.build import cache_dir

    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    path = cache_dir() / "learn" / digest / f"lesson{lesson.number:02d}.cpp"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def _grade(lesson: Lesson, text: str, chip: str, timeout: float | None, t0: float) -> Grade:
    from copilot.backends.sim import check_kernel
    from copilot.tasks import load_task
    from knowledge import attach_cards

    task = load_task(str(lesson.task_dir))
    report = check_kernel(_stable_copy(lesson, text), task, chip=chip, cases=lesson.cases, timeout=timeout)
    lines = text.splitlines()
    findings: list[Finding] = []
    diags = [d for d in report.diagnostics if d.id not in _PACKAGING_ONLY]
    located_error = any(d.is_error and d.line for d in diags)
    follow_on: dict[str, int] = {}
    for d in attach_cards(diags):
        if d.id in _FOLLOW_ON and located_error:
            # e.g. output bytes that no copy accounts for, after an out-of-bounds copy: the same bug,
            # said once, without a fix of its own (the located error's fix is the one to apply)
            follow_on[d.id] = follow_on.get(d.id, 0) + 1
            continue
        required_absent = d.id in lesson.absent
        blocking = d.is_error or required_absent
        msg = d.message
        if required_absent and not d.is_error:
            msg += " (this lesson is passed only when this rule is no longer reported)"
        findings.append(_finding(d.id, d.severity, msg, d.line, lines, d.cards, d.hint, blocking))
    for rule, n in follow_on.items():
        runs = f" in {n} runs" if n > 1 else ""
        findings.append(Finding(rule, "info", f"reported{runs} as well, most likely a consequence of the error "
                                "above: fix that first", blocking=False))
    cases = []
    for c in report.cases:
        e = c.estimate
        cases.append(CaseOutcome(str(c.id), bool(c.passed), c.message, e.time_us if e else None,
                                 {p: e.pipes_us.get(p, 0.0) for p in PIPES} if e else {},
                                 e.bottleneck if e else "", e.roofline_fraction if e else None))
    rule_errors = any(f.blocking for f in findings)
    if not rule_errors:
        # wrong values with no rule broken: the precision class names what the numbers look like
        for c in report.cases:
            if not c.passed:
                cls = c.failure_class or "wrong_values"
                findings.append(_finding(f"PREC.{cls}", "error",
                                         f"case {c.id} gives wrong values ({cls.replace('_', ' ')}): "
                                         f"{c.message}", 0, lines))
    time_us = _geomean([c.est_us for c in cases if c.est_us])
    correct = report.compiled and report.correct and bool(cases) and all(c.passed for c in cases)
    if correct and lesson.time_target_us is not None and time_us is not None and time_us > lesson.time_target_us:
        slow = max(cases, key=lambda c: c.est_us or 0)
        busy = max(slow.pipes_us, key=slow.pipes_us.get) if slow.pipes_us else "?"
        findings.append(_finding(
            "LESSON.TIME_TARGET", "error",
            f"correct, but {time_us:.2f} µs est. against the target of {lesson.time_target_us:.2f} µs est. "
            f"(cost-model estimates); case {slow.id} is bound by {slow.bottleneck or '?'}, its busiest pipe "
            f"is {busy}", 0, lines, [lesson.time_card] if lesson.time_card else ()))
    passed = correct and not any(f.blocking for f in findings)
    return Grade(lesson.number, passed, report.compiled, cases, findings, time_us, lesson.time_target_us,
                 time.perf_counter() - t0)
