"""Lowering benchmark: per built-in task, is it supported, how long lowering takes, whether the
lowered kernel passes the emulator on 910B2 and 950PR, and the default-knob kernel's estimated time
on 910B2 on the task's performance cases (the baseline evolution must beat).

    .venv/bin/python bench/lowering_bench.py [--tasks a,b] [--cases quick|all] [--chips 910B2,950PR]
                                             [--estimate] [--no-check] [--progress FILE] [--kernels DIR]
                                             [--json out.json] [--md out.md]

Prints one line per task as it finishes and writes JSON + Markdown (default
bench/results/lowering.{json,md}). With `--progress FILE` every finished task row is appended to
FILE (JSON lines) at once, and rows already there for the same case selection are reused, so a
long `--cases all` sweep resumes where a crash left it.

Every time here except the lowering time is a cost-model ESTIMATE (`timing: "estimate"`), not a
measurement: `est_us` and `roofline_fraction` come from `copilot.costmodel.estimate` (the path
`check --cases perf` and the evolution evaluator use), summarised as the geometric mean over the
performance cases as the evaluator does. The lowering time is wall-clock on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ESTIMATE_CHIP = "910B2"


def estimate_perf_cases(path: Path, task, chip: str = ESTIMATE_CHIP) -> dict:
    """est_us / roofline_fraction of the kernel at `path` on each performance case of `task`, and
    their geometric means (None when a case cannot be timed)."""
    from copilot.costmodel import geomean
    from copilot.costmodel.estimate import build_for_case, estimate_case

    builds: dict = {}
    cases = []
    for case in task.perf_cases():
        b, outs, _ = build_for_case(path, task, case, chip, builds)
        est = estimate_case(b, task, case, chip, outs) if b.ok else None
        cases.append({"case": case.id, "shapes": [list(s) for s in case.shapes], "dtypes": list(case.dtypes),
                      "est_us": round(est.time_us, 3) if est else None,
                      "roofline_fraction": _sig(est.roofline_fraction) if est else None,
                      "bottleneck": est.bottleneck if est else None,
                      "block_dim": est.block_dim if est else None})
    times = [c["est_us"] for c in cases if c["est_us"] is not None]
    roofs = [c["roofline_fraction"] for c in cases if c["roofline_fraction"] is not None]
    return {"chip": chip, "timing": "estimate", "cases": cases,
            "est_us_geomean": round(geomean(times), 3) if len(times) == len(cases) and times else None,
            "roofline_fraction_geomean": _sig(geomean(roofs)) if len(roofs) == len(cases) and roofs else None}


def _sig(x: float | None, digits: int = 3) -> float | None:
    """`x` to `digits` significant digits (roofline fractions of tiny cases are far below 0.001)."""
    return None if x is None else float(f"{x:.{digits}g}")


def check_on_chip(task, chip: str, cases: str, tmp: Path) -> dict:
    """Lower for `chip` and run `check` on the selected cases; the per-chip result row."""
    from copilot.backends.sim import check_kernel
    from copilot.lowering import lower

    t0 = time.perf_counter()
    path = tmp / f"{task.name}-{chip}.cpp"
    path.write_text(lower(task, chip=chip).source)
    rep = check_kernel(path, task, chip=chip, cases=cases)
    return {"compiled": rep.compiled, "correct": rep.correct,
            "passed": sum(bool(c.passed) for c in rep.cases), "cases": len(rep.cases),
            "failed": [[c.id, c.failure_class, (c.message or "")[:200]] for c in rep.cases if not c.passed],
            "seconds": round(time.perf_counter() - t0, 1),
            "errors": sorted({d.id for d in rep.diagnostics if d.severity == "error"})}


def load_progress(path: Path | None, cases: str) -> dict[str, dict]:
    """The last row per task in a progress file, for this case selection."""
    rows: dict[str, dict] = {}
    if path and path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                if row.get("check_cases") == cases:
                    rows[row["task"]] = row
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", help="comma-separated task names (default: the built-in suite)")
    ap.add_argument("--cases", default="quick", help="cases for check: quick | all | ID,...")
    ap.add_argument("--chips", default="910B2,950PR")
    ap.add_argument("--no-check", action="store_true", help="do not run the emulator check")
    ap.add_argument("--estimate", action="store_true",
                    help=f"also estimate the default-knob kernel on {ESTIMATE_CHIP} (performance cases)")
    ap.add_argument("--progress", help="JSON-lines file: append each finished row, reuse rows already there")
    ap.add_argument("--kernels", help="directory for the lowered kernels (default: a temporary one); the "
                    "build cache is keyed by path too, so a fixed directory reuses earlier builds")
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "lowering.json"))
    ap.add_argument("--md", default=None, help="Markdown table (default: the --json path with .md)")
    args = ap.parse_args(argv)

    from copilot.errors import CannpilotError
    from copilot.lowering import lower, supports
    from copilot.tasks import builtin_names, load_task

    names = args.tasks.split(",") if args.tasks else builtin_names()
    chips = [c for c in args.chips.split(",") if c]
    progress = Path(args.progress) if args.progress else None
    done = load_progress(progress, args.cases)
    tmp = Path(args.kernels) if args.kernels else Path(tempfile.mkdtemp(prefix="lowering-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    from copilot import lowering

    lower("relu")          # torch and the tracer warm up outside the timed lowerings
    rows = []
    for name in names:
        prev = done.get(name, {})
        task = load_task(name)
        row: dict = {"task": name, "category": task.category, "check_cases": args.cases}
        lowering._PLAN_CACHE.clear()    # time the whole lowering (capture + plan + emit), not a cache hit
        t0 = time.perf_counter()
        ok, why = supports(task)
        row.update(supported=ok, reason=why)
        if ok:
            try:
                k = lower(task)
                row["lower_s"] = round(time.perf_counter() - t0, 2)
                row["pattern"] = k.pattern
                if not args.no_check:
                    for chip in chips:
                        if prev.get(chip, {}).get("cases"):
                            row[chip] = prev[chip]
                            continue
                        try:
                            row[chip] = check_on_chip(task, chip, args.cases, tmp)
                        except CannpilotError as exc:
                            row[chip] = {"compiled": False, "correct": False, "error": str(exc)}
                if args.estimate:
                    if (prev.get("estimate") or {}).get("est_us_geomean") is not None:
                        row["estimate"] = prev["estimate"]
                    else:
                        path = tmp / f"{task.name}-{ESTIMATE_CHIP}.cpp"    # the file the check built
                        path.write_text(lower(task, chip=ESTIMATE_CHIP).source)
                        try:
                            row["estimate"] = estimate_perf_cases(path, task)
                        except CannpilotError as exc:
                            row["estimate"] = {"error": f"{type(exc).__name__}: {exc}"}
            except CannpilotError as exc:
                row.update(supported=False, reason=str(exc))
        rows.append(row)
        if progress:
            with progress.open("a") as f:
                f.write(json.dumps(row) + "\n")
        _print_row(row, chips)
    summary = _summary(rows, chips)
    out = Path(args.json)
    doc = {"check_cases": args.cases, "chips": chips, "timing": "estimate",
           "note": "est_us / roofline_fraction are cost-model estimates on 910B2 (geomean over the "
                   "performance cases); lower_s is wall-clock on a shared machine",
           "rows": rows, "summary": summary}
    _atomic_write(out, json.dumps(doc, indent=2) + "\n")
    md = Path(args.md) if args.md else out.with_suffix(".md")
    _atomic_write(md, render_markdown(rows, summary, chips, args.cases))
    print(json.dumps(summary, indent=2))
    print(f"wrote {out} and {md}", file=sys.stderr)
    return 0


def _atomic_write(path: Path, text: str) -> None:
    from copilot.config import atomic_write_text

    atomic_write_text(path, text)


def _cell(r: dict | None) -> str:
    if not r:
        return "-"
    if "error" in r:
        return "error"
    return f"{r.get('passed', 0)}/{r.get('cases', 0)}" + ("" if r.get("correct") else " FAIL")


def _print_row(row: dict, chips: list[str]) -> None:
    cells = [f"{row['task']:28s}", f"{'yes' if row['supported'] else 'NO':3s}",
             f"{row.get('pattern', '-'):18s}", f"{row.get('lower_s', 0):6.2f}s"]
    cells += [f"{chip}:{_cell(row.get(chip))}" for chip in chips]
    est = row.get("estimate") or {}
    if est.get("est_us_geomean") is not None:
        cells.append(f"est {est['est_us_geomean']:.1f}us (estimate) roof {est['roofline_fraction_geomean']}")
    if not row["supported"]:
        cells.append(row["reason"][:80])
    print("  ".join(cells), flush=True)


def _summary(rows: list[dict], chips: list[str]) -> dict:
    sup = [r for r in rows if r["supported"]]
    by_pattern: dict = {}
    for r in sup:
        p = by_pattern.setdefault(r.get("pattern", "?"), {"supported": 0, **{c: 0 for c in chips}})
        p["supported"] += 1
        for c in chips:
            p[c] += int(bool((r.get(c) or {}).get("correct")))
    return {"tasks": len(rows), "supported": len(sup),
            "supported_fraction": round(len(sup) / max(1, len(rows)), 3),
            "passing": {c: sum(bool((r.get(c) or {}).get("correct")) for r in sup) for c in chips},
            "by_pattern": by_pattern,
            "unsupported": {r["task"]: r["reason"] for r in rows if not r["supported"]}}


def render_markdown(rows: list[dict], summary: dict, chips: list[str], cases: str) -> str:
    """The figures as Markdown: per-pattern summary, then one row per task."""
    out = [f"# Lowering figures (`check --cases {cases}`; times marked est. are cost-model estimates)", "",
           f"Supported: {summary['supported']}/{summary['tasks']} ({summary['supported_fraction']:.1%}).", "",
           "| pattern | supported | " + " | ".join(f"passing {c}" for c in chips) + " |",
           "|---|---|" + "---|" * len(chips)]
    for p, s in sorted(summary["by_pattern"].items()):
        out.append(f"| {p} | {s['supported']} | " + " | ".join(str(s[c]) for c in chips) + " |")
    out += ["", "| task | pattern | lower s | " + " | ".join(f"{c} cases" for c in chips)
            + " | 910B2 est. us (geomean of perf cases) | roofline fraction (est.) | per perf case: est. us / bottleneck |",
            "|---|---|---|" + "---|" * len(chips) + "---|---|---|"]
    for r in rows:
        if not r["supported"]:
            out.append(f"| {r['task']} | unsupported | - | " + " | ".join("-" for _ in chips)
                       + f" | - | - | {r['reason']} |")
            continue
        est = r.get("estimate") or {}
        per = "; ".join(f"{c['case']}: {c['est_us']} / {c['bottleneck']}" if c["est_us"] is not None
                        else f"{c['case']}: no estimate" for c in est.get("cases", []))
        g = est.get("est_us_geomean")
        rf = est.get("roofline_fraction_geomean")
        out.append(f"| {r['task']} | {r.get('pattern', '-')} | {r.get('lower_s', '-')} | "
                   + " | ".join(_cell(r.get(c)) for c in chips)
                   + f" | {g if g is not None else '-'} | {rf if rf is not None else '-'} | {per or '-'} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
