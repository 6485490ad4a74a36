"""`cannpilot sessions [ls | show S | export S -o DIR | replay S | rm S | resume S]`.

The store is `--store PATH`, else `CANNPILOT_STORE`, else `sessions.sqlite` in the user data
directory. No command here creates a store; a damaged or newer store, or a
session that is not there, exits 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    store_help = "session store file (default: $CANNPILOT_STORE or the user data dir)"
    top = argparse.ArgumentParser(add_help=False)
    top.add_argument("--store", metavar="PATH", help=store_help)
    # After the action too; SUPPRESS keeps a --store given before the action.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help=store_help)
    p = sub.add_parser("sessions", help="list, show, export, replay, remove or resume sessions",
                       description="Tuning sessions kept in the session store.", parents=[top])
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))

    a = actions.add_parser("ls", help="list sessions", parents=[common])
    a.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    a = actions.add_parser("show", help="summary, leaderboard, rounds and decisions of a session",
                           parents=[common])
    a.add_argument("session")
    a.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    a = actions.add_parser("export", help="write a report, a JSON dump and the passing kernels",
                           parents=[common])
    a.add_argument("session")
    a.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write into")
    a = actions.add_parser("replay", help="print the session's events in order with their timing",
                           parents=[common])
    a.add_argument("session")
    a.add_argument("--speed", type=float, default=None, metavar="X",
                   help="play the pauses back X times faster (default: print at once)")
    a = actions.add_parser("rm", help="delete a session and everything stored about it",
                           parents=[common])
    a.add_argument("session")
    a.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    a = actions.add_parser("resume", help="continue a session from its last completed round",
                           parents=[common])
    a.add_argument("session")
    a.add_argument("--decide", choices=("auto", "prompt"), default=None)
    a.add_argument("--rounds", type=int, default=None, help="extend the session to N rounds")
    a.add_argument("--json", action="store_true")
    p.set_defaults(handler=run, action=None)


def _store(args, must_exist: bool = True):
    from sessions import SessionStore, default_store_path

    path = args.store or default_store_path()
    return SessionStore(path, create=not must_exist)


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from sessions import StoreCorrupt, StoreError, StoreMissing, default_store_path

    action = args.action or "ls"
    try:
        if action == "ls":
            try:
                store = _store(args)
            except StoreMissing:
                if getattr(args, "json", False):
                    print("[]")
                else:
                    print(f"No sessions yet (no store at {args.store or default_store_path()}).")
                return 0
        else:
            store = _store(args)
        with store:
            return _ACTIONS[action](store, args)
    except sqlite3.DatabaseError as exc:  # found after opening: a damaged page, a full disk, ...
        path = args.store or default_store_path()
        if "malformed" in str(exc) or "not a database" in str(exc):
            raise StoreCorrupt(path, str(exc)) from None
        raise StoreError(f"session store {path}: {exc}") from None


def _ls(store, args) -> int:
    rows = store.list_sessions()
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    if not rows:
        print(f"No sessions in {store.path}.")
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(rows)} session(s) in {store.path}")
    for col, justify in (("name", "left"), ("task", "left"), ("status", "left"), ("rounds", "right"),
                         ("best", "left"), ("cost", "right"), ("updated", "left")):
        table.add_column(col, justify=justify, no_wrap=col in ("name", "status", "cost"))
    for r in rows:
        best = f"{r['best_id']} {r['best_time_us']:.2f}us" if r["best_id"] else "-"
        table.add_row(r["name"], r["task"], r["status"], str(r["rounds"]), best,
                      f"${r['cost_usd']:.2f}", _when(r["updated_at"]))
    Console().print(table)
    return 0


def _when(at) -> str:
    from datetime import datetime, timezone

    return "-" if at is None else datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def show_document(store, name: str) -> dict:
    """The `sessions show --json` document (golden structure in tests/test_sessions_cli.py)."""
    from sessions.export import baseline_of, best_of, candidate_haps, leaderboard

    record = store.session_record(name, summary=True)
    state = store.load_session(name)
    cands = record["candidates"]
    hap = candidate_haps(record["session"], cands, state.cases)
    base, best = baseline_of(cands), best_of(cands, hap)
    base_time = base["time_us"] if base and base["status"] == "passed" else None
    slim = ("id", "round", "origin", "strategy", "agency_mode", "parent_ids", "status", "time_us",
            "timing", "roofline_fraction", "perf_timed", "pinned", "vetoed", "eval_count")
    return {
        "session": record["session"],
        "resume": {
            "last_completed_round": state.last_completed_round,
            "round_in_progress": state.round_in_progress,
            "decision_pending": state.decision_pending,
            "next_round": state.next_round,
            "in_flight": [c.id for c in state.in_flight],
            "pins": state.pins,
            "vetoes": state.vetoes,
            "steer": state.steer,
        },
        "best": None if not best else {
            "id": best["id"], "hap": hap.get(best["id"]), "time_us": best["time_us"], "timing": best["timing"],
            "roofline_fraction": best["roofline_fraction"],
            "perf_cases_timed": {"timed": best["perf_timed"][0], "of": best["perf_timed"][1]}
            if best["perf_timed"] else None,
            "speedup_vs_baseline": base_time / best["time_us"] if base_time else None},
        "baseline_id": base["id"] if base else None,
        "ranked_by": "hap" if hap else "time",
        "leaderboard": [{**{k: c[k] for k in slim}, "hap": hap.get(c["id"])} for c in leaderboard(cands, hap)],
        "candidates": [{k: c[k] for k in slim} for c in cands],
        "rounds": record["rounds"],
        "decisions": record["decisions"],
        "budget": {"prompt_tokens": state.budget.prompt_tokens,
                   "completion_tokens": state.budget.completion_tokens,
                   "tokens": state.budget.tokens, "cost_usd": state.budget.cost_usd,
                   "llm_calls": state.budget.llm_calls, "evaluations": state.budget.evaluations},
        "llm_by_model": record["llm_by_model"],
    }


def _show(store, args) -> int:
    from sessions.export import ranking_note, timed_text

    doc = show_document(store, args.session)
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    con = Console()
    s, r, b = doc["session"], doc["resume"], doc["budget"]
    con.print(f"[bold]{s['name']}[/bold]  task {s['task']}  chip {s['chip']}  backend {s['backend']}  "
              f"agent {s['agent']}  status [bold]{s['status']}[/bold]", highlight=False)
    con.print(f"rounds completed {r['last_completed_round']}, next round {r['next_round']}"
              + (f", round {r['round_in_progress']} in progress" if r["round_in_progress"] else "")
              + (f", decision pending for round {r['decision_pending']}" if r["decision_pending"] else "")
              + (f", {len(r['in_flight'])} evaluation(s) in flight" if r["in_flight"] else ""),
              highlight=False)
    con.print(f"tokens {b['tokens']} ({b['prompt_tokens']} prompt + {b['completion_tokens']} completion), "
              f"{b['llm_calls']} LLM call(s), cost ${b['cost_usd']:.4f}, {b['evaluations']} evaluation(s)",
              highlight=False)
    if r["pins"] or r["vetoes"] or r["steer"]:
        con.print(f"pinned {', '.join(r['pins']) or '-'}; vetoed {', '.join(r['vetoes']) or '-'}; "
                  f"steer {r['steer']!r}", highlight=False)
    by_hap = doc["ranked_by"] == "hap"
    board = Table(title="leaderboard", caption=ranking_note(s, by_hap))
    for col in ("#", "id", "round", "origin", "strategy", *(("HAP",) if by_hap else ()), "time (us)", "timing",
                "perf cases", "roofline", "flags"):
        board.add_column(col)
    for i, c in enumerate(doc["leaderboard"][:15], 1):
        flags = " ".join(f for f in ("pinned", "vetoed") if c[f])
        hap_cell = (_opt(c["hap"], "{:.3f}"),) if by_hap else ()
        board.add_row(str(i), c["id"], str(c["round"]), c["origin"], c["strategy"] or "-", *hap_cell,
                      f"{c['time_us']:.2f}", c["timing"], timed_text(c),
                      "-" if c["roofline_fraction"] is None else f"{c['roofline_fraction']:.2f}", flags)
    con.print(board)
    rounds = Table(title="rounds")
    for col in ("round", "status", "candidates", "passed", "best", "best (us)", "median (us)"):
        rounds.add_column(col)
    for x in doc["rounds"]:
        rounds.add_row(str(x["round"]), x["status"], _opt(x["candidates"]), _opt(x["passed"]),
                       x["best_id"] or "-", _opt(x["best_time_us"], "{:.2f}"),
                       _opt(x["median_time_us"], "{:.2f}"))
    con.print(rounds)
    if doc["decisions"]:
        dec = Table(title="decisions")
        for col in ("round", "time", "decision", "candidate", "text"):
            dec.add_column(col)
        for d in doc["decisions"]:
            dec.add_row(str(d["round"]), _when(d["at"]), d["kind"], d["candidate_id"] or "-", d["text"])
        con.print(dec)
    return 0


def _opt(v, fmt: str = "{}") -> str:
    return "-" if v is None else fmt.format(v)


def _export(store, args) -> int:
    from sessions.export import export_session

    result = export_session(store, args.session, args.output)
    if result.redactions:
        print(f"cannpilot: warning: replaced credential-looking strings in {result.redactions} "
              "exported file(s) with [REDACTED]", file=sys.stderr)
    print(f"Exported {args.session} to {result.directory}: {len(result.files)} file(s), best "
          f"{result.best_id or '-'}.")
    for path in result.files:
        print(f"  {path}")
    return 0


def _replay(store, args) -> int:
    from copilot.errors import BadInput
    from sessions.replay import replay_lines

    if args.speed is not None and args.speed <= 0:
        raise BadInput(f"--speed must be a positive number, not {args.speed}")
    for line in replay_lines(store.events(args.session), speed=args.speed):
        print(line, flush=args.speed is not None)
    return 0


def _rm(store, args) -> int:
    from copilot.errors import BadInput

    doc = store.load_session(args.session)  # exits 2 with close matches if absent
    what = (f"session {args.session!r} ({len(doc.candidates)} candidate(s), "
            f"{doc.last_completed_round} round(s), ${doc.budget.cost_usd:.2f} spent)")
    if not args.yes:
        if not sys.stdin.isatty():
            raise BadInput(f"`sessions rm` deletes {what} for good; pass --yes to confirm")
        answer = input(f"Delete {what}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Kept.")
            return 0
    store.delete_session(args.session)
    print(f"Deleted {what}.")
    return 0


def _resume(store, args) -> int:
    from copilot.commands.run import _Progress, _policy, execute
    from copilot.evolution.session import resume_engine

    state = store.load_session(args.session)  # exits 2 with close matches if absent
    print(f"{args.session}: continuing at round {state.next_round} "
          f"({len(state.in_flight)} evaluation(s) to redo, {len(state.completed_ids)} kept)",
          file=sys.stderr)
    engine, cfg = resume_engine(store, args.session, [store, _Progress()], _policy(args.decide),
                                rounds=args.rounds)
    return execute(engine, cfg, store, getattr(args, "output", None), args.json)


_ACTIONS = {"ls": _ls, "show": _show, "export": _export, "replay": _replay, "rm": _rm,
            "resume": _resume}
