"""`cannpilot bench`: run a tuning session on every task of a suite and report the figures.

Per task: feasible (a passing kernel exists), baseline and best time, speedup, roofline fraction,
candidates evaluated, tokens. A task that fails to load or to run is reported infeasible with its
reason, and the bench goes on. Times on the sim backend are estimates and labelled so.

A suite in CANN-Bench's layout (`level1..4/<task>/` beside `metadata/<chip>.json`) is scored the
way CANN-Bench scores it (copilot/scoring.py): one kernel per operator (the lowering agent's by
default, or the best of a session with `--agent`), every case run and judged, HAP per passing case
from its estimated time, EachOperatorScore, level and total scores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run sessions over a suite of tasks and report the figures",
                       description="Run a tuning session on every task of a suite (default: the built-in "
                                   "suite) and report feasibility, speedups and roofline fractions.")
    p.add_argument("--suite", help="a directory of task directories (default: the built-in suite)")
    p.add_argument("--tasks", help="comma-separated task names to restrict the suite to")
    p.add_argument("--agent", default=None,
                   help="offline (default) | lowering (score the lowered kernel; default for a CANN-Bench "
                        "suite) | any session agent")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--variants", type=int, default=4)
    p.add_argument("--chip", default="910B2")
    p.add_argument("--store", help="session store file (default: a fresh one beside the report)")
    p.add_argument("-o", "--output", default="bench/results/bench", help="report path prefix (.json, .md)")
    p.add_argument("--json", action="store_true", help="print the JSON report on stdout")
    p.add_argument("--cases", default="all",
                   help="CANN-Bench suites: cases to run (all | quick | ids); the others count as not judged")
    p.add_argument("--max-elements", type=int, default=0,
                   help="CANN-Bench suites: skip (count as not judged) cases with more input elements")
    p.add_argument("--resume", action="store_true",
                   help="CANN-Bench suites: keep the rows of the existing report for the operators not run now")
    p.set_defaults(handler=run)


def is_cannbench_suite(root: Path) -> bool:
    """A directory in CANN-Bench's layout: `metadata/*.json` beside `level<N>/` task directories."""
    root = Path(root)
    return (root / "metadata").is_dir() and any(p.is_dir() and p.name.startswith("level")
                                                 for p in root.iterdir())


def _suite(args) -> list[str | Path]:
    from copilot.errors import BadInput
    from copilot.tasks import builtin_names

    if args.suite:
        root = Path(args.suite)
        if not root.is_dir():
            raise BadInput(f"--suite {root}: not a directory of task directories")
        if is_cannbench_suite(root):
            refs: list[str | Path] = sorted(t for lv in root.iterdir() if lv.is_dir() and lv.name.startswith("level")
                                            for t in lv.iterdir() if t.is_dir())
        else:
            refs = sorted(p for p in root.iterdir() if p.is_dir() or p.suffix == ".py")
    else:
        refs = list(builtin_names())
    if args.tasks:
        wanted = {t.strip() for t in args.tasks.split(",") if t.strip()}
        refs = [r for r in refs if Path(str(r)).name.removesuffix(".py") in wanted]
        if not refs:
            raise BadInput(f"--tasks {args.tasks}: none of these is in the suite")
    return refs


def bench_task(ref, args, store) -> dict:
    from copilot.errors import CannpilotError
    from copilot.evolution.session import SessionConfig, new_engine, run_to_end
    from copilot.tasks import load_task

    name = Path(str(ref)).name.removesuffix(".py")
    row = {"task": name, "feasible": False, "baseline_us": None, "best_us": None, "speedup": None,
           "roofline_fraction": None, "candidates": 0, "tokens": 0, "timing": "estimate", "reason": "",
           "seconds": 0.0}
    t0 = time.perf_counter()
    try:
        task = load_task(ref)
        cfg = SessionConfig(task=task, agent=args.agent, chip=args.chip, rounds=args.rounds,
                            variants=args.variants, name=f"bench-{name}-{time.strftime('%Y%m%d-%H%M%S')}")
        engine = new_engine(cfg, [store])
        result = asyncio.run(run_to_end(engine))
    except CannpilotError as exc:
        row["reason"] = str(exc)
        row["seconds"] = time.perf_counter() - t0
        return row
    except Exception as exc:  # a crash in one task must not end the bench
        row["reason"] = f"{type(exc).__name__}: {exc}"
        row["seconds"] = time.perf_counter() - t0
        return row
    best, base = result.best, result.baseline
    row.update(
        feasible=best is not None,
        baseline_us=base.time_us if base else None,
        best_us=best.time_us if best else None,
        speedup=result.speedup_vs(base),
        roofline_fraction=best.roofline_fraction if best else None,
        candidates=evaluated_count(result.population.candidates.values()),
        timing=best.timing if best else "estimate",
        reason="" if best else (result.reason or "no passing kernel"),
        seconds=time.perf_counter() - t0,
    )
    return row


def evaluated_count(candidates) -> int:
    """Candidates that reached the evaluator: not duplicates rejected before it, not replies or
    proposals that carried no code."""
    return sum(1 for c in candidates if c.status not in ("rejected_duplicate", "no_code", "proposed"))


def summarize(rows: list[dict]) -> dict:
    feasible = [r for r in rows if r["feasible"]]
    speed = [r["speedup"] for r in feasible if r["speedup"]]
    roof = [r["roofline_fraction"] for r in feasible if r["roofline_fraction"]]
    return {
        "tasks": len(rows),
        "feasibility": len(feasible) / len(rows) if rows else 0.0,
        "median_speedup": statistics.median(speed) if speed else None,
        "median_roofline_fraction": statistics.median(roof) if roof else None,
        "candidates": sum(r["candidates"] for r in rows),
        "seconds": sum(r["seconds"] for r in rows),
    }


def markdown(doc: dict) -> str:
    s = doc["summary"]
    fmt = lambda v, f: "-" if v is None else f.format(v)  # noqa: E731
    lines = [f"# Bench: {s['tasks']} tasks, agent {doc['agent']}, {doc['chip']} ({doc['backend']})", "",
             "Times are estimates of the sim backend's cost model, not measurements." if doc["backend"] == "sim" else "",
             "", f"- feasibility: {s['feasibility']:.0%}",
             f"- median speedup of the best kernel over the lowering baseline: {fmt(s['median_speedup'], '{:.2f}x')}",
             f"- median roofline fraction of the best kernels: {fmt(s['median_roofline_fraction'], '{:.2f}')}",
             f"- candidates evaluated: {s['candidates']} in {s['seconds']:.0f} s "
             f"({s['candidates'] / max(s['seconds'], 1e-9) * 60:.1f} per minute)",
             f"- wall time of the bench: {s.get('wall_seconds', s['seconds']):.0f} s"
             + ("" if doc.get("complete", True) else
                f" (interrupted or running: {len(doc['tasks'])} of {doc.get('suite_tasks', '?')} tasks)"), "",
             "| task | feasible | baseline µs | best µs | speedup | roofline | candidates | reason |",
             "|---|---|---|---|---|---|---|---|"]
    for r in doc["tasks"]:
        lines.append(f"| {r['task']} | {'yes' if r['feasible'] else 'no'} | {fmt(r['baseline_us'], '{:.2f}')} | "
                     f"{fmt(r['best_us'], '{:.2f}')} | {fmt(r['speedup'], '{:.2f}x')} | "
                     f"{fmt(r['roofline_fraction'], '{:.2f}')} | {r['candidates']} | {r['reason'][:80]} |")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from copilot.errors import BadInput
    from sessions import SessionStore

    if args.rounds < 1 or args.variants < 1:
        raise BadInput("--rounds and --variants must be at least 1")
    refs = _suite(args)
    if args.suite and is_cannbench_suite(Path(args.suite)):
        from copilot.commands import bench_cannbench

        return bench_cannbench.run(args, refs)
    args.agent = args.agent or "offline"
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    store = SessionStore(args.store or out.with_suffix(".sqlite"))
    rows: list[dict] = []
    started = time.perf_counter()

    def report(complete: bool) -> dict:
        summary = summarize(rows)
        summary["wall_seconds"] = time.perf_counter() - started
        doc = {"agent": args.agent, "chip": args.chip, "backend": "sim", "rounds": args.rounds,
               "variants": args.variants, "complete": complete, "suite_tasks": len(refs),
               "tasks": rows, "summary": summary}
        # Written after every task: an interrupted bench keeps what it measured.
        out.with_suffix(".json").write_text(json.dumps(doc, indent=2))
        out.with_suffix(".md").write_text(markdown(doc))
        return doc

    try:
        for i, ref in enumerate(refs, start=1):
            print(f"[{i}/{len(refs)}] {Path(str(ref)).name.removesuffix('.py')} ...", file=sys.stderr, flush=True)
            row = bench_task(ref, args, store)
            rows.append(row)
            status = (f"best {row['best_us']:.2f} us est., {row['speedup'] or 1:.2f}x" if row["feasible"]
                      else f"infeasible: {row['reason'][:100]}")
            print(f"[{i}/{len(refs)}] {row['task']}: {status} ({row['seconds']:.0f} s, "
                  f"{row['candidates']} candidates)", file=sys.stderr, flush=True)
            report(complete=False)
    finally:
        store.close()
    return emit(report(complete=True), args.json, markdown)


def emit(doc: dict, as_json: bool, render) -> int:
    """The final report on stdout: the JSON document, or its Markdown rendering."""
    if as_json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(render(doc))
    return 0
