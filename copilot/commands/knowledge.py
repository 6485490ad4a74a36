"""`cannpilot knowledge`: list and show cards, assemble a slice, explain an error log."""

from __future__ import annotations

import argparse
import json
import sys

from knowledge.cards import LEVELS, PATTERNS, PHASES


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("knowledge", help="the L0-L5 knowledge base: cards, slices, errors",
                              description="Browse the AscendC knowledge cards, see the slice a "
                                          "phase gets, and map error text to constraints.")
    sub = p.add_subparsers(dest="knowledge_cmd", metavar="{ls,show,slice,explain}")
    ls = sub.add_parser("ls", help="list cards")
    ls.add_argument("--level", choices=LEVELS, help="only this level")
    ls.add_argument("--json", action="store_true", help="one JSON document on stdout")
    show = sub.add_parser("show", help="print one card")
    show.add_argument("id", help="card id, e.g. L2.UB_CAPACITY")
    show.add_argument("--json", action="store_true")
    sl = sub.add_parser("slice", help="the knowledge slice a phase would get")
    sl.add_argument("--task", required=True,
                    help=f"task name, directory or file (or a pattern: {', '.join(PATTERNS)})")
    sl.add_argument("--phase", required=True, help=f"one of {', '.join(PHASES)}")
    sl.add_argument("--chip", default="910B2")
    sl.add_argument("--budget", type=int, default=None, help="token budget")
    sl.add_argument("--diag", action="append", default=[], metavar="ID",
                    help="a diagnostic id for the repair phase (repeatable)")
    sl.add_argument("--text", action="store_true", help="print the prompt text, not the table")
    sl.add_argument("--json", action="store_true")
    ex = sub.add_parser("explain", help="map compiler/runtime error text to constraints")
    ex.add_argument("message", nargs="?", help="the error text ('-' reads stdin)")
    ex.add_argument("--file", help="a log file to read")
    ex.add_argument("--json", action="store_true")
    p.set_defaults(func=run, handler=run)
    return p


def _fail(msg: str) -> int:
    print(f"cannpilot knowledge: {msg}", file=sys.stderr)
    return 2


def run(args) -> int:
    cmd = getattr(args, "knowledge_cmd", None) or "ls"
    try:
        if cmd == "ls":
            return _ls(args)
        if cmd == "show":
            return _show(args)
        if cmd == "slice":
            return _slice(args)
        if cmd == "explain":
            return _explain(args)
    except BrokenPipeError:
        return 0
    return _fail(f"unknown subcommand {cmd!r}")


def _console():
    from rich.console import Console

    return Console()


def _ls(args) -> int:
    from knowledge.cards import CardError, load_cards

    try:
        cards = [c for c in load_cards() if not getattr(args, "level", None) or c.level == args.level]
    except CardError as exc:
        return _fail(str(exc))
    if getattr(args, "json", False):
        print(json.dumps([{"id": c.id, "level": c.level, "title": c.title, "summary": c.summary,
                           "patterns": list(c.patterns), "chips": list(c.chips),
                           "phases": list(c.phases)} for c in cards], indent=2))
        return 0
    from rich.table import Table

    t = Table(title=f"{len(cards)} knowledge cards")
    for col in ("id", "level", "patterns", "summary"):
        t.add_column(col, overflow="fold")
    for c in cards:
        t.add_row(c.id, c.level, ",".join(c.patterns), c.summary)
    _console().print(t)
    return 0


def _show(args) -> int:
    from knowledge.cards import get_card

    try:
        card = get_card(args.id)
    except KeyError:
        return _fail(f"no card with id {args.id!r} (see `cannpilot knowledge ls`)")
    if getattr(args, "json", False):
        print(json.dumps({"id": card.id, "level": card.level, "title": card.title,
                          "summary": card.summary, "patterns": list(card.patterns),
                          "chips": list(card.chips), "phases": list(card.phases),
                          "apis": list(card.apis), "constraints": list(card.constraints),
                          "sources": list(card.sources), "strategy": card.strategy,
                          "body": card.body, "kernel": card.kernel_source()}, indent=2))
        return 0
    print(card.path.read_text(encoding="utf-8"), end="")
    if card.kernel_path:
        print(f"\n// ---- {card.kernel_path.name} ----\n{card.kernel_source()}", end="")
    return 0


def _resolve_task(ref: str):
    if ref in PATTERNS:
        return [ref]
    try:
        from copilot.tasks import load_task
    except ImportError:
        raise ValueError(f"unknown task {ref!r}: the task loader is not available; "
                         f"give a pattern ({', '.join(PATTERNS)})") from None
    try:
        return load_task(ref)
    except Exception as exc:  # the loader's own error names what was wrong
        raise ValueError(f"cannot load task {ref!r}: {exc}") from None


def _slice(args) -> int:
    from knowledge.assembler import assemble

    if args.phase not in PHASES:
        return _fail(f"unknown phase {args.phase!r}; use one of {', '.join(PHASES)}")
    try:
        task = _resolve_task(args.task)
        sl = assemble(task, args.phase, chip=args.chip, diagnostics=args.diag,
                      budget_tokens=args.budget)
    except ValueError as exc:
        return _fail(str(exc))
    if args.json:
        print(json.dumps(sl.to_json(), indent=2))
        return 0
    if args.text:
        print(sl.render(), end="")
        return 0
    from rich.table import Table

    t = Table(title=f"{sl.phase} slice for {args.task} ({', '.join(sl.patterns)}, {sl.chip}): "
                    f"{sl.total_tokens} tokens [{sl.tokenizer}]")
    for col in ("id", "level", "tokens", "reason"):
        t.add_column(col, justify="right" if col == "tokens" else "left")
    for c in sl.cards:
        t.add_row(c.id, c.level, str(c.tokens), c.reason)
    _console().print(t)
    if sl.dropped:
        print(f"left out by the budget: {', '.join(sl.dropped)}", file=sys.stderr)
    return 0


def _explain(args) -> int:
    from knowledge.errors import explain

    if args.file:
        try:
            with open(args.file, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            return _fail(f"cannot read {args.file}: {exc.strerror}")
    elif args.message == "-":
        text = sys.stdin.read()
    elif args.message:
        text = args.message
    else:
        return _fail("give the error text, '-' for stdin, or --file LOG")
    diags = explain(text)
    if args.json:
        print(json.dumps([{"id": d.id, "message": d.message, "hint": d.hint, "cards": d.cards,
                           "line": d.line, "severity": d.severity} for d in diags], indent=2))
        return 0
    con = _console()
    for d in diags:
        where = f" (line {d.line})" if d.line else ""
        con.print(f"[bold]{d.id}[/bold]{where}: {d.message}", markup=True, highlight=False)
        if d.hint:
            con.print(f"  hint: {d.hint}", highlight=False, markup=False)
        if d.cards:
            con.print(f"  cards: {', '.join(d.cards)}", highlight=False, markup=False)
    return 0
