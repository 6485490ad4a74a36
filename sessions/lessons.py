"""Teaching-mode progress in the session store: per learner and lesson, and every attempt.

Written by `cannpilot learn` and the Learn screen; the tables come from schema migration 2.
"""

from __future__ import annotations

import getpass
import json
import time

from sessions.store import SessionStore

_COLUMNS = ("learner", "lesson", "opened_at", "updated_at", "passed", "passed_at", "attempts",
            "hints_used", "solution_shown", "seconds", "code")


def default_learner() -> str:
    try:
        return getpass.getuser() or "learner"
    except (KeyError, OSError):
        return "learner"


def _touch(conn, learner: str, lesson: str, now: float) -> None:
    conn.execute("INSERT OR IGNORE INTO lesson_progress (learner, lesson, opened_at, updated_at) "
                 "VALUES (?, ?, ?, ?)", (learner, lesson, now, now))


def open_lesson(store: SessionStore, lesson: str, learner: str | None = None) -> dict:
    """The learner's row for `lesson` (created on first open): attempts, hints, code to resume."""
    learner = learner or default_learner()
    with store._write() as conn:
        _touch(conn, learner, lesson, time.time())
    return progress(store, learner)[lesson]


def record_attempt(store: SessionStore, lesson: str, *, passed: bool, rules: list[str] | tuple = (),
                   time_us: float | None = None, code: str | None = None, learner: str | None = None) -> None:
    learner = learner or default_learner()
    now = time.time()
    with store._write(fsync=True) as conn:
        _touch(conn, learner, lesson, now)
        conn.execute("INSERT INTO lesson_attempts (learner, lesson, at, passed, rules, time_us) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (learner, lesson, now, int(passed), json.dumps(list(rules)), time_us))
        conn.execute("UPDATE lesson_progress SET attempts = attempts + 1, updated_at = ?, "
                     "passed = max(passed, ?), passed_at = coalesce(passed_at, CASE WHEN ? THEN ? END), "
                     "code = coalesce(?, code) WHERE learner = ? AND lesson = ?",
                     (now, int(passed), int(passed), now, code, learner, lesson))


def record_hint(store: SessionStore, lesson: str, level: int, learner: str | None = None) -> None:
    learner = learner or default_learner()
    now = time.time()
    with store._write() as conn:
        _touch(conn, learner, lesson, now)
        conn.execute("UPDATE lesson_progress SET hints_used = max(hints_used, ?), updated_at = ? "
                     "WHERE learner = ? AND lesson = ?", (int(level), now, learner, lesson))


def record_solution_shown(store: SessionStore, lesson: str, learner: str | None = None) -> None:
    learner = learner or default_learner()
    now = time.time()
    with store._write() as conn:
        _touch(conn, learner, lesson, now)
        conn.execute("UPDATE lesson_progress SET solution_shown = 1, updated_at = ? WHERE learner = ? "
                     "AND lesson = ?", (now, learner, lesson))


def save_work(store: SessionStore, lesson: str, *, code: str | None = None, seconds: float = 0.0,
              learner: str | None = None) -> None:
    """Keep the learner's code and add the time the lesson was open."""
    learner = learner or default_learner()
    now = time.time()
    with store._write(fsync=True) as conn:
        _touch(conn, learner, lesson, now)
        conn.execute("UPDATE lesson_progress SET code = coalesce(?, code), seconds = seconds + ?, "
                     "updated_at = ? WHERE learner = ? AND lesson = ?",
                     (code, max(0.0, float(seconds)), now, learner, lesson))


def progress(store: SessionStore, learner: str | None = None) -> dict[str, dict]:
    """Every lesson row of the learner, by lesson folder name."""
    learner = learner or default_learner()
    with store.snapshot() as conn:
        rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM lesson_progress WHERE learner = ?",
                            (learner,)).fetchall()
    return {r[1]: dict(zip(_COLUMNS, r)) for r in rows}


def attempts(store: SessionStore, lesson: str, learner: str | None = None) -> list[dict]:
    learner = learner or default_learner()
    with store.snapshot() as conn:
        rows = conn.execute("SELECT at, passed, rules, time_us FROM lesson_attempts WHERE learner = ? AND "
                            "lesson = ? ORDER BY id", (learner, lesson)).fetchall()
    return [{"at": at, "passed": bool(p), "rules": json.loads(r), "time_us": t} for at, p, r, t in rows]
