"""`cannpilot bench --suite DIR` on a suite in CANN-Bench's layout: CANN-Bench's own score.

Per operator: one kernel (the lowering agent's, or the best of a session with `--agent`), built
once, every case run on the emulator and judged (copilot/oracle), each passing case's time
ESTIMATED by the cost model and turned into its HAP with `metadata/<chip>.json`, then
EachOperatorScore, level and total scores (copilot/scoring.py, benchmark_spec §4.2-4.3).
Written to `<output>.json` and `.md` after every operator; a progress bar on stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from copilot import scoring
from copilot.oracle.precision import STRUCTURAL_CLASSES


class Progress:
    """One line on stderr: a bar over all operators, the operator and case running now.
    Redrawn in place on a terminal. Otherwise (a log, a pipe) one line per finished operator, and a
    line naming what runs now when nothing was written for `quiet_s` seconds, so a log of a long
    golden shows it is alive."""

    def __init__(self, total: int, stream=None, quiet_s: float = 30.0, clock=time.monotonic) -> None:
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.quiet_s, self.clock = quiet_s, clock
        self.last_line = clock()

    def show(self, what: str) -> None:
        if not self.tty:
            now = self.clock()
            if now - self.last_line >= self.quiet_s:
                self.stream.write(f"[{self.done}/{self.total}] running: {what}\n")
                self.stream.flush()
                self.last_line = now
            return
        width = 24
        fill = int(width * self.done / max(self.total, 1))
        self.stream.write(f"\r\x1b[K[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total} {what[:90]}")
        self.stream.flush()

    def finish(self, line: str) -> None:
        self.done += 1
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"[{self.done}/{self.total}] {line}\n")
        self.stream.flush()
        self.last_line = self.clock()


def case_outcome(c) -> str:
    """The scoring outcome of one checked case (copilot.backends.sim.CaseResult)."""
    if c.failure_class in ("too_large", "golden_error", "not_run"):
        return scoring.UNJUDGED
    if c.passed:
        return scoring.PASSED
    cls = c.failure_class or ""
    if cls in STRUCTURAL_CLASSES or cls.startswith("RUN.") or cls == "rule_error":
        return scoring.RUNTIME_FAIL
    return scoring.PRECISION_FAIL


def _kernel(task, args, store, out_dir: Path) -> tuple[Path | None, str]:
    """The operator's one submission: (path, '') or (None, why there is none)."""
    if args.agent == "lowering":
        from copilot.lowering import lower, supports

        ok, why = supports(task)
        if not ok:
            return None, f"not lowered: {why}"
        code = lower(task, chip=args.chip).source
    else:
        from copilot.evolution.session import SessionConfig, new_engine

        cfg = SessionConfig(task=task, agent=args.agent, chip=args.chip, rounds=args.rounds,
                            variants=args.variants, name=f"bench-{task.name}-{time.strftime('%Y%m%d-%H%M%S')}")
        result = asyncio.run(new_engine(cfg, [store]).run())
        if result.best is None:
            return None, f"no passing kernel: {result.reason or 'the session found none'}"
        code = result.best.code
    path = out_dir / f"{task.name}.cpp"
    path.write_text(code)
    return path, ""


def score_operator(ref: Path, args, baselines: dict, store, out_dir: Path, progress: Progress) -> dict:
    """Load, get the kernel, check every case, score: the operator's report row."""
    from copilot.backends.sim import CaseResult, check_kernel
    from copilot.errors import BadInput, CannpilotError
    from copilot.tasks import load_task, select_cases

    level = scoring.level_of(ref)
    name = Path(ref).name
    meta = baselines.get(level, {}).get(name, {})
    t0 = time.perf_counter()
    op = scoring.OperatorScore(name, level, compiled=False, n=len(meta))
    extra = {"loaded": False, "kernel": None, "golden_runs": 0}

    def done(reason: str = "") -> dict:
        op.reason = op.reason or reason
        return {**op.to_json(), **extra, "seconds": round(time.perf_counter() - t0, 1)}

    progress.show(f"{name}: loading")
    try:
        task = load_task(ref)
    except CannpilotError as exc:
        return done(f"does not load: {exc}")
    except Exception as exc:  # a loader crash on one task must not end the bench
        return done(f"does not load: {type(exc).__name__}: {exc}")
    extra["loaded"] = True
    op.n = len(task.cases)
    try:
        path, why = _kernel(task, args, store, out_dir)
    except CannpilotError as exc:
        path, why = None, f"no kernel: {exc}"
    except Exception as exc:  # one operator's crash must not end the bench
        path, why = None, f"no kernel: {type(exc).__name__}: {exc}"
    if path is None:
        return done(why)
    extra["kernel"] = str(path)
    chosen = {c.id for c in select_cases(task, args.cases)}
    op.compiled = True
    for i, case in enumerate(task.cases, start=1):
        base = meta.get(case.id)
        if case.id not in chosen:
            op.cases.append(scoring.case_score(case.id, scoring.UNJUDGED, None, base, "not run (--cases)"))
            continue
        if args.max_elements and case.total_numel > args.max_elements:
            op.cases.append(scoring.case_score(case.id, scoring.UNJUDGED, None, base,
                                               f"not run: {case.total_numel} elements > --max-elements"))
            continue
        progress.show(f"{name}: case {case.id} ({i}/{len(task.cases)}, {case.total_numel} elements)")
        try:
            rep = check_kernel(path, task, chip=args.chip, cases=case.id)
        except BadInput as exc:           # the golden or the inputs of this case
            rep = None
            result = CaseResult(case.id, False, None, None, "golden_error", str(exc))
        except Exception as exc:          # a harness failure is ours, not the kernel's: not judged
            rep = None
            result = CaseResult(case.id, False, None, None, "not_run", f"harness error: {type(exc).__name__}: {exc}")
        if rep is not None and not rep.compiled:
            op.compiled = False
            errs = sorted({d.id for d in rep.diagnostics if d.severity == "error"})
            return done(f"did not compile ({', '.join(errs) or 'build failed'})")
        if rep is not None:
            result = rep.cases[0]
        outcome = case_outcome(result)
        if result.failure_class not in ("too_large", "golden_error", "not_run"):
            extra["golden_runs"] += 1
        t_cand = result.estimate.time_us if result.estimate is not None else None
        reason = "" if outcome == scoring.PASSED else f"{result.failure_class}: {result.message[:200]}"
        if outcome == scoring.PASSED and t_cand is None:
            reason = "passed; no time estimate (HAP counted as 0)"
        band = result.estimate.band if result.estimate is not None else None
        op.cases.append(scoring.case_score(case.id, outcome, t_cand, base, reason, band))
    return done()


def markdown(doc: dict) -> str:
    s = doc["scores"]
    lines = [f"# CANN-Bench score: {doc['suite']} on {doc['chip']} ({doc['backend']}), agent {doc['agent']}", "",
             "Scores follow benchmark_spec §4.2-4.3 (weights 0.2 / 0.3 / 0.5, 100 per operator). "
             "HAP = (T_base - T_hw) / ((T_cand - T_hw) + (T_base - T_hw)) per passing case; "
             + ("**T_cand is a cost-model ESTIMATE of the sim backend, not a measurement**, so HAP and "
                "the scores are estimates." if doc["backend"] == "sim" else "T_cand measured."),
             "" if doc.get("complete", True) else f"\n**Incomplete**: {len(doc['operators'])} of "
                                                  f"{doc['suite_tasks']} operators so far.", "",
             f"**Total: {s['total']:.2f} / {s['max']:.0f}**", "",
             "| level | operators | compiled | cases | passed | score | max |", "|---|---|---|---|---|---|---|"]
    for lv, v in s["levels"].items():
        lines.append(f"| {lv} | {v['operators']} | {v['compiled']} | {v['cases']} | {v['passed']} | "
                     f"{v['score']:.2f} | {v['max']:.0f} |")
    lines += ["", "| level | operator | loaded | compiled | passed / N | runtime fails | not judged | score | "
              "HAP per case (est.) | reason |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["operators"]:
        haps = " ".join(f"{c['id']}:{c['hap']:.2f}" for c in r["cases"] if c["hap"] is not None) or "-"
        lines.append(f"| {r['level']} | {r['task']} | {'yes' if r['loaded'] else 'no'} | "
                     f"{'yes' if r['compiled'] else 'no'} | {r['passed']} / {r['n']} | {r['runtime_failures']} | "
                     f"{r['unjudged']} | {r['score']:.2f} | {haps} | {r['reason'][:120].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def _row_score(row: dict) -> scoring.OperatorScore:
    op = scoring.OperatorScore(row["task"], row["level"], row["compiled"], n=row["n"], reason=row["reason"])
    op.cases = [scoring.CaseScore(c["id"], c["outcome"], c["hap"], c["t_cand_us"], c["baseline_us"],
                                  c["t_hw_us"], c["reason"]) for c in row["cases"]]
    return op


def _previous_rows(path: Path, args) -> dict[str, dict]:
    """The operator rows of an earlier report of the same chip and agent (for `--resume`)."""
    from copilot.errors import BadInput

    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text())
    except ValueError as exc:
        raise BadInput(f"--resume: {path} is not a JSON report ({exc})") from None
    if doc.get("mode") != "cannbench" or doc.get("chip") != args.chip or doc.get("agent") != args.agent:
        raise BadInput(f"--resume: {path} is not a CANN-Bench report of chip {args.chip}, agent {args.agent}")
    return {r["task"]: r for r in doc.get("operators", [])}


def run(args, refs: list[Path]) -> int:
    from sessions import SessionStore

    args.agent = args.agent or "lowering"
    suite = Path(args.suite)
    baselines = scoring.load_baselines(suite, args.chip)
    out = Path(args.output if args.output != "bench/results/bench" else
               f"bench/results/cannbench-{args.chip.lower()}")
    out.parent.mkdir(parents=True, exist_ok=True)
    kernels = out.with_name(out.name + "-kernels")
    kernels.mkdir(parents=True, exist_ok=True)
    store = SessionStore(args.store or out.with_suffix(".sqlite")) if args.agent != "lowering" else None
    rows: list[dict] = []
    started = time.perf_counter()
    progress = Progress(len(refs))
    kept = _previous_rows(out.with_suffix(".json"), args) if args.resume else {}
    order = {Path(r).name: i for i, r in enumerate(sorted(
        t for lv in suite.iterdir() if lv.is_dir() and lv.name.startswith("level") for t in lv.iterdir() if t.is_dir()))}

    def report(complete: bool) -> dict:
        now = {r["task"] for r in rows}
        every = sorted([r for t, r in kept.items() if t not in now] + rows, key=lambda r: order.get(r["task"], 1 << 30))
        doc = {"mode": "cannbench", "suite": str(suite), "chip": args.chip, "backend": "sim",
               "timing": "estimate", "agent": args.agent, "cases": args.cases,
               "max_elements": args.max_elements, "complete": complete and len(every) == len(order),
               "suite_tasks": len(order),
               "wall_seconds": round(time.perf_counter() - started, 1), "operators": every,
               "scores": scoring.suite_scores([_row_score(r) for r in every])}
        out.with_suffix(".json").write_text(json.dumps(doc, indent=2))
        out.with_suffix(".md").write_text(markdown(doc))
        return doc

    try:
        for ref in refs:
            row = score_operator(Path(ref), args, baselines, store, kernels, progress)
            rows.append(row)
            progress.finish(f"{row['level']}/{row['task']}: score {row['score']:.2f}, "
                            f"{row['passed']}/{row['n']} passed" + (f" ({row['reason'][:90]})" if row["reason"] else "")
                            + f", {row['seconds']:.0f} s")
            report(complete=False)
    finally:
        if store is not None:
            store.close()
    from copilot.commands.bench import emit

    return emit(report(complete=True), args.json, markdown)
