"""`cannpilot learn`: teaching mode.

    cannpilot learn                      the lessons and your progress
    cannpilot learn N                    open lesson N in the TUI (the Learn screen)
    cannpilot learn N --text             the lesson's text on stdout
    cannpilot learn N --starter          the starter kernel on stdout (to edit in your own editor)
    cannpilot learn N --check FILE       grade FILE on the emulator; exit 0 passed, 1 not yet
    cannpilot learn N --hint K           hint K (1 card, 2 rule and line, 3 the change)
    cannpilot learn N --solution         the reference solution (counted in your progress)

Progress (attempts, hints used, time, passed) is kept in the session store.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("learn", help="teaching mode: AscendC lessons graded by the emulator",
                       description="AscendC lessons: read, fill the starter's gaps, get graded on the CPU "
                                   "emulator with every failure explained by the knowledge base.")
    p.add_argument("lesson", nargs="?", metavar="N", help="lesson number or id (none: list the lessons)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--check", metavar="FILE", help="grade FILE against the lesson's task and checks")
    what.add_argument("--text", action="store_true", help="print the lesson text")
    what.add_argument("--starter", action="store_true", help="print the starter kernel")
    what.add_argument("--hint", type=int, metavar="K", help="print hint K (1-3)")
    what.add_argument("--solution", action="store_true", help="print the reference solution")
    p.add_argument("--chip", default=None, help="chip profile (default: the lesson's, 910B2)")
    p.add_argument("--store", default=None, help="session store file (default: settings, $CANNPILOT_STORE, "
                                                 "or the user data dir)")
    p.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p.set_defaults(handler=run)


def _store(args):
    from copilot.config import load_settings
    from sessions.store import SessionStore

    settings = load_settings().with_flags({"--store": ("store", args.store)})
    return SessionStore(settings.store_path())


def run(args: argparse.Namespace) -> int:
    from copilot.errors import BadInput
    from copilot.learn import get_lesson, load_lessons

    if args.lesson is None:
        if args.check or args.text or args.starter or args.hint or args.solution:
            raise BadInput("name the lesson: cannpilot learn N --check FILE (see `cannpilot learn`)")
        return _list(args, load_lessons())
    lesson = get_lesson(args.lesson)
    if args.text:
        print(lesson.text)
        return 0
    if args.starter:
        sys.stdout.write(lesson.starter)
        return 0
    if args.hint is not None:
        return _hint(args, lesson)
    if args.solution:
        return _solution(args, lesson)
    if args.check:
        return _check(args, lesson)
    return _open_tui(args, lesson)


def _list(args, lessons) -> int:
    from sessions.lessons import progress

    with _store(args) as store:
        prog = progress(store)
    rows = []
    for l in lessons:
        p = prog.get(l.key, {})
        rows.append({"number": l.number, "id": l.id, "title": l.title, "passed": bool(p.get("passed")),
                     "attempts": p.get("attempts", 0), "hints_used": p.get("hints_used", 0),
                     "minutes": round((p.get("seconds") or 0) / 60, 1)})
    if args.json:
        json.dump({"lessons": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"{'':3}{'lesson':<34} {'status':<12} attempts  hints  minutes")
    for r, l in zip(rows, lessons):
        status = "✓ passed" if r["passed"] else ("… started" if r["attempts"] or r["hints_used"] else "· new")
        print(f"{r['number']:>2} {l.id:<34} {status:<12} {r['attempts']:>8}  {r['hints_used']:>5}  {r['minutes']:>7}")
        print(f"   {l.title}")
    print("\nminutes: time with the lesson open in the Learn screen (grading from a terminal is not timed)")
    print("open one: cannpilot learn N   ·   grade your own file: cannpilot learn N --check FILE")
    return 0


def _hint(args, lesson) -> int:
    from sessions.lessons import open_lesson, record_hint

    hint = lesson.hint(args.hint)
    with _store(args) as store:
        row = open_lesson(store, lesson.key)
        record_hint(store, lesson.key, hint.level)
    text = hint.render(row.get("code") or lesson.starter)
    if args.json:
        json.dump({"lesson": lesson.number, "level": hint.level, "card": hint.card, "rule": hint.rule,
                   "text": text}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"hint {hint.level}/3 for lesson {lesson.number}: {text}")
        if hint.card:
            print(f"  card: cannpilot knowledge show {hint.card}")
    return 0


def _solution(args, lesson) -> int:
    from sessions.lessons import record_solution_shown

    with _store(args) as store:
        record_solution_shown(store, lesson.key)
    sys.stdout.write(lesson.solution)
    return 0


def _check(args, lesson) -> int:
    from pathlib import Path

    from copilot.errors import BadInput
    from copilot.learn import grade
    from sessions.lessons import record_attempt

    path = Path(args.check)
    if not path.is_file():
        raise BadInput(f"{args.check}: no such file (start from `cannpilot learn {lesson.number} --starter > FILE`)")
    print(f"cannpilot learn: grading {path.name} on lesson {lesson.number} ({lesson.title})", file=sys.stderr,
          flush=True)
    g = grade(lesson, path, chip=args.chip)
    with _store(args) as store:
        record_attempt(store, lesson.key, passed=g.passed, rules=g.rules, time_us=g.time_us,
                       code=path.read_text(errors="replace"))
    if args.json:
        json.dump(g.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render_grade(g))
    return 0 if g.passed else 1


def pipe_bars(pipes_us: dict, total_us: float, width: int = 30) -> list[str]:
    """One bar per pipe: its busy time against the case's estimated time."""
    out = []
    for pipe in ("MTE2", "V", "MTE3", "S"):
        busy = pipes_us.get(pipe, 0.0)
        n = min(width, int(round(width * busy / total_us))) if total_us else 0
        out.append(f"{pipe:<4} {'█' * n}{'·' * (width - n)} {busy:8.2f} µs")
    return out


def render_grade(g) -> str:
    """The grade as plain text: verdict, findings about the learner's code, cases, pipe profile."""
    lines = [g.headline()]
    for f in g.findings:
        mark = "✗" if f.blocking else "!"
        lines.append("")
        lines.append(f"{mark} " + f.text().replace("\n", "\n  "))
    if g.cases:
        lines.append("\ncases (times are cost-model ESTIMATES):")
        for c in g.cases:
            t = f"{c.est_us:.2f} µs est." if c.est_us else "-"
            lines.append(f"  case {c.id}: {'pass' if c.passed else 'FAIL'}  {t}  "
                         + textwrap.shorten(c.message, 100, placeholder=" …"))
        timed = [c for c in g.cases if c.est_us]
        if timed:
            c = timed[-1]
            lines.append(f"\npipe profile of case {c.id} ({c.est_us:.2f} µs est., bound by {c.bottleneck}):")
            lines += ["  " + b for b in pipe_bars(c.pipes_us, c.est_us)]
    if g.time_target_us is not None:
        t = f"{g.time_us:.2f}" if g.time_us else "-"
        lines.append(f"\ntime: {t} µs est. (geometric mean), target ≤ {g.time_target_us:.2f} µs est.")
    if not g.passed:
        lines.append(f"\nstuck? `cannpilot learn {g.lesson} --hint 1` (then 2, 3)")
    return "\n".join(lines)


def _open_tui(args, lesson) -> int:
    from copilot.errors import BadInput

    if not sys.stdout.isatty() and not os.environ.get("CANNPILOT_TUI_FORCE"):
        raise BadInput(f"the Learn screen needs a terminal; without one use `cannpilot learn {lesson.number} "
                       "--text`, `--starter` and `--check FILE`")
    from copilot.config import load_settings
    from tui.app import CannpilotApp
    from tui.settings import check_theme

    settings = load_settings().with_flags({"--store": ("store", args.store)})
    check_theme(settings)
    app = CannpilotApp(store="default", settings=settings, start=False, lesson=lesson.number,
                       chip=args.chip)
    app.run()
    return 0
