"""`cannpilot run`: a headless tuning session — rounds of variants, a leaderboard, the best kernel.

Progress goes to stderr; with `--json` stdout holds one JSON document and nothing else.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="evolve kernels for a task over rounds (headless)",
                       description="Run a tuning session: a baseline, then rounds of variants ranked by "
                                   "their (estimated or measured) time, with decisions between rounds.")
    p.add_argument("--task", help="built-in task name, task directory or KernelBench .py "
                                   "(not needed with --session of an existing session)")
    p.add_argument("--agent", help="offline (no network) or an LLM model name/alias (default: settings, "
                                   "else offline)")
    p.add_argument("--rounds", type=int, help="rounds (default: settings, else 3; 0: generation 1 only)")
    p.add_argument("--variants", type=int, help="variants per round (default: settings, else 4)")
    p.add_argument("--chip", help="chip profile (default: settings, else 910B2)")
    p.add_argument("--session", help="session name (default: <task>-<time>)")
    p.add_argument("--decide", choices=("auto", "prompt"), default="auto",
                   help="between rounds: continue automatically, or ask in the terminal")
    p.add_argument("--target-speedup", type=float, help="stop once the best is this much faster than the baseline")
    p.add_argument("--backend", choices=("sim", "npu", "auto"), default=None,
                   help="sim (emulator, estimates), npu (CANN + torch_npu, measured) or auto (npu when "
                        "`doctor` finds it complete); default: settings, else sim")
    p.add_argument("--evaluators", help="where candidates are evaluated: local (processes on this machine) "
                                         "or a running Ray head, ray://HOST:PORT or HOST:PORT (default: "
                                         "settings, else local)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--store", help="session store file (default: the user data dir; env CANNPILOT_STORE)")
    p.add_argument("-o", "--output", help="write the best kernel here")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def _check_args(args) -> None:
    from copilot.errors import BadInput

    if not args.task and not args.session:
        raise BadInput("run needs --task T (or --session S of an existing session to resume it)")
    if args.decide == "prompt" and not sys.stdin.isatty():
        raise BadInput("--decide prompt needs an interactive terminal; use --decide auto")


def _policy(decide: str | None):
    if decide == "prompt":
        from copilot.commands.decide_prompt import PromptPolicy

        return PromptPolicy()
    return None


def run(args: argparse.Namespace) -> int:
    _check_args(args)
    from copilot.config import load_settings
    from copilot.evolution.session import SessionConfig, new_engine, resume_engine
    from copilot.tasks import load_task
    from sessions import SessionStore

    # one precedence for every value: flags > CANNPILOT_* > settings.yaml > defaults
    settings = load_settings().with_flags({
        "--chip": ("chip", args.chip), "--rounds": ("rounds", args.rounds),
        "--variants": ("variants", args.variants), "--agent": ("model", args.agent),
        "--store": ("store", args.store), "--backend": ("backend", args.backend),
        "--evaluators": ("evaluators", args.evaluators)})
    store = SessionStore(settings.store_path())
    if args.session and args.session in store.session_names():
        engine, cfg = resume_engine(store, args.session, [store, _Progress()], _policy(args.decide),
                                    rounds=settings.rounds)
        return execute(engine, cfg, store, args.output, args.json)
    task = load_task(args.task)
    backend = settings.backend
    if backend == "auto":
        from copilot.backends.npu.toolchain import chosen_backend, probe

        backend = chosen_backend("auto", probe())[0]
    cfg = SessionConfig(task=task, agent=settings.model or "offline", chip=settings.chip, backend=backend,
                        rounds=settings.rounds, variants=settings.variants,
                        name=args.session, seed=args.seed, target_speedup=args.target_speedup,
                        evaluators=settings.evaluators)
    engine = new_engine(cfg, [store, _Progress()], _policy(args.decide))
    return execute(engine, cfg, store, args.output, args.json)


def execute(engine, cfg, store, output: str | None, as_json: bool) -> int:
    """Run the session to its end, then report (JSON contract or a table) and write the best kernel."""
    from copilot.evolution.session import result_json, run_to_end

    result = asyncio.run(run_to_end(engine))
    kernel_path = None
    if output and result.best:
        from pathlib import Path

        Path(output).write_text(result.best.code, encoding="utf-8")
        kernel_path = str(Path(output).resolve())
    spent = store.load_session(engine.session).budget      # the store's totals: every LLM call it recorded
    doc = result_json(engine, result, cfg, kernel_path, tokens=spent.tokens, cost_usd=spent.cost_usd)
    if as_json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_summary(engine, result, doc)
    store.close()
    return 0 if result.best else 1


class _Progress:
    """Event sink printing one line per step on stderr."""

    def emit(self, e) -> None:
        line = None
        k = e.kind
        if k == "round_started":
            line = f"round {e.round}: {len(e.strategies)} variants ({', '.join(e.strategies)})"
        elif k == "candidate_evaluated":
            line = f"  {e.candidate_id}: {e.status}{_timed_line(e)}"
        elif k == "round_finished":
            b = f", best {e.best_id} {e.best_time_us:.2f} us (estimate)" if e.best_time_us else ""
            line = f"round {e.round} done: {e.passed}/{e.candidates} passed{b}"
        elif k == "session_finished":
            line = f"session {e.status}: {e.reason}"
        if line:
            print(line, file=sys.stderr, flush=True)


def _timed_line(e) -> str:
    """` 182.77 us (estimate) over 2 of 3 performance cases`, or why a passing kernel has no time."""
    from copilot.evolution.population import perf_coverage

    k_n = perf_coverage(e.cases)
    if e.time_us:
        part = f" over {k_n[0]} of {k_n[1]} performance cases" if k_n and k_n[0] < k_n[1] else ""
        return f" {e.time_us:.2f} us ({e.timing}){part}"
    if e.status == "passed" and k_n:
        why = next((c["not_timed"] for c in e.cases if c.get("untimed_by") == "kernel"), None)
        return f", not ranked ({why or f'{k_n[0]} of {k_n[1]} performance cases timed'})"
    return ""


def _print_summary(engine, result, doc) -> None:
    from rich.console import Console
    from rich.table import Table

    from copilot.evolution import leaderboard

    con = Console()
    table = Table(title=f"session {engine.session}: leaderboard (times are {doc['best']['timing'] if doc['best'] else 'estimates'})")
    for col in ("rank", "id", "origin", "strategy", "status", "time µs", "perf cases", "speedup", "roofline", "HAP",
                "marks"):
        table.add_column(col)
    for row in leaderboard(result.population, result.baseline, engine.cases)[:20]:
        marks = " ".join(m for m, on in (("pinned", row["pinned"]), ("vetoed", row["vetoed"])) if on)
        table.add_row(str(row["rank"] or "-"), row["id"], row["origin"], row["strategy"], row["status"],
                      f"{row['time_us']:.2f} {'est.' if row['timing'] == 'estimate' else 'meas.'}" if row["time_us"] else "-",
                      "{} of {}".format(*row["perf_timed"]) if row["perf_timed"] else "-",
                      f"{row['speedup']:.2f}x" if row["speedup"] else "-",
                      f"{row['roofline_fraction']:.0%}" if row["roofline_fraction"] else "-",
                      (f"{row['hap']:.2f}" + (" est." if row["timing"] == "estimate" else "")) if row["hap"] is not None
                      else "-", marks)
    con.print(table)
    best = doc["best"]
    if best:
        cover = best["perf_cases_timed"]
        con.print(f"best {best['id']}: {best['time_us']} us ({best['timing']}"
                  + (f", over {cover['timed']} of {cover['of']} performance cases" if cover and
                     cover["timed"] < cover["of"] else "") + "), "
                  f"{best['speedup_vs_baseline'] or 0:.2f}x vs baseline"
                  + (f", HAP {best['hap']:.2f} and {best['speedup_vs_vendor']:.2f}x vs the vendor"
                     f"{' (est.)' if best['timing'] == 'estimate' else ''}" if best["hap"] is not None else "")
                  + (f", written to {best['kernel_path']}" if best["kernel_path"] else ""))
    else:
        con.print("[red]no passing kernel[/red]")
