"""Lessons: one folder per lesson under knowledge/lessons/, read as data.

A lesson folder holds `lesson.yaml` (number, title, goal, concepts, checks, hints), `lesson.md`
(the text a learner reads), `starter.cpp` (a kernel with gaps marked `GAP n`), `solution.cpp`
(the reference, shown only on request) and `task/` (the task it is graded on, in the
CANN-Bench layout: proto.yaml, golden.py, cases.yaml, desc.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from copilot.errors import BadInput

LESSONS_DIR = Path(__file__).resolve().parents[2] / "knowledge" / "lessons"
HINT_LEVELS = ("card", "rule and line", "change")


class LessonError(BadInput):
    """A lesson folder that is missing a file or a key, or an unknown lesson reference."""


@dataclass(frozen=True)
class Hint:
    level: int                 # 1 a card to read, 2 the rule and the line, 3 the concrete change
    text: str
    card: str = ""             # card id the hint points at
    rule: str = ""             # constraint id (level 2)
    gap: str = ""              # the starter's marker the hint is about, e.g. "GAP 2"

    def render(self, code: str = "") -> str:
        """The hint with `{line}` replaced by the gap's line in `code` (the learner's current code,
        else where it sits in the starter)."""
        line = gap_line(code, self.gap) if self.gap else 0
        where = f"line {line}" if line else f"the line marked {self.gap}" if self.gap else ""
        return self.text.replace("{line}", where).strip()


@dataclass(frozen=True)
class Lesson:
    number: int
    id: str
    title: str
    goal: str
    concepts: tuple[str, ...]
    hints: tuple[Hint, ...]
    starter_expects: tuple[str, ...]     # ids the starter's grade must name (tested)
    absent: tuple[str, ...]              # ids that must not be reported for a pass
    time_target_us: float | None         # cost-model ESTIMATE target (geomean over timed cases)
    time_card: str
    cases: str
    path: Path
    chip: str = "910B2"
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        return f"{self.number:02d}-{self.id}"

    @property
    def text(self) -> str:
        return (self.path / "lesson.md").read_text(encoding="utf-8")

    @property
    def starter(self) -> str:
        return (self.path / "starter.cpp").read_text(encoding="utf-8")

    @property
    def solution(self) -> str:
        """The reference solution: callers show it only when the learner asks."""
        return (self.path / "solution.cpp").read_text(encoding="utf-8")

    @property
    def task_dir(self) -> Path:
        return self.path / "task"

    def hint(self, level: int) -> Hint:
        if not 1 <= level <= len(self.hints):
            raise LessonError(f"lesson {self.number} has hints 1-{len(self.hints)}, not {level}")
        return self.hints[level - 1]


def gap_line(code: str, gap: str) -> int:
    """1-based line of the comment marking `gap` ("GAP 2") in `code`, 0 when it is not there."""
    pat = re.compile(r"//\s*" + re.escape(gap) + r"\b")
    for i, line in enumerate(code.splitlines(), 1):
        if pat.search(line):
            return i
    return 0


def _need(doc: dict, key: str, where: Path):
    if key not in doc or doc[key] in (None, ""):
        raise LessonError(f"{where}: missing `{key}`")
    return doc[key]


def parse_lesson(folder: Path) -> Lesson:
    import yaml

    meta = folder / "lesson.yaml"
    for name in ("lesson.yaml", "lesson.md", "starter.cpp", "solution.cpp", "task/proto.yaml",
                 "task/golden.py", "task/cases.yaml"):
        if not (folder / name).is_file():
            raise LessonError(f"{folder}: missing {name}")
    try:
        doc = yaml.safe_load(meta.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise LessonError(f"{meta}: not valid YAML ({e})") from None
    checks = doc.get("checks") or {}
    raw_hints = _need(doc, "hints", meta)
    if not isinstance(raw_hints, list) or len(raw_hints) != 3:
        raise LessonError(f"{meta}: `hints` needs three levels (card, rule and line, change)")
    hints = []
    for i, h in enumerate(raw_hints, 1):
        if not isinstance(h, dict) or not h.get("text"):
            raise LessonError(f"{meta}: hint {i} needs a `text`")
        hints.append(Hint(i, str(h["text"]), str(h.get("card", "")), str(h.get("rule", "")), str(h.get("gap", ""))))
    if not hints[0].card:
        raise LessonError(f"{meta}: hint 1 must point at a card (`card:`)")
    target = checks.get("time_target_us")
    return Lesson(number=int(_need(doc, "number", meta)), id=str(_need(doc, "id", meta)),
                  title=str(_need(doc, "title", meta)), goal=str(_need(doc, "goal", meta)).strip(),
                  concepts=tuple(_need(doc, "concepts", meta)), hints=tuple(hints),
                  starter_expects=tuple(_need(checks, "starter_fails_with", meta)),
                  absent=tuple(checks.get("absent") or ()),
                  time_target_us=float(target) if target is not None else None,
                  time_card=str(checks.get("time_card", "")), cases=str(doc.get("cases", "all")),
                  path=folder, chip=str(doc.get("chip", "910B2")))


@lru_cache(maxsize=4)
def _load(root: str) -> tuple[Lesson, ...]:
    folders = sorted(p for p in Path(root).iterdir() if p.is_dir() and (p / "lesson.yaml").exists())
    lessons = tuple(sorted((parse_lesson(f) for f in folders), key=lambda l: l.number))
    numbers = [l.number for l in lessons]
    if len(set(numbers)) != len(numbers):
        raise LessonError(f"{root}: two lessons share a number ({numbers})")
    return lessons


def load_lessons(root: Path | None = None) -> tuple[Lesson, ...]:
    """Every lesson in number order. Raises LessonError on the first bad folder."""
    return _load(str(root or LESSONS_DIR))


def get_lesson(ref: str | int, root: Path | None = None) -> Lesson:
    """A lesson by number (`3`), id (`alignment`) or folder name (`03-alignment`)."""
    lessons = load_lessons(root)
    text = str(ref).strip()
    for lesson in lessons:
        if text.isdigit() and int(text) == lesson.number or text in (lesson.id, lesson.key):
            return lesson
    known = ", ".join(f"{l.number} {l.id}" for l in lessons)
    raise LessonError(f"no lesson {text!r}; the lessons are: {known}")
