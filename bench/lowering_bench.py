"""Lowering benchmark: per built-in task, is it supported, how long lowering takes, and whether the
lowered kernel passes the emulator on 910B2 and 950PR; optionally the default-knob kernel's
estimated time on 910B2 (the baseline evolution must beat).

    .venv/bin/python bench/lowering_bench.py [--tasks a,b] [--cases quick|all] [--chips 910B2,950PR]
                                             [--estimate] [--json out.json] [--no-check]

Prints a table and writes JSON (default bench/results/lowering.json). Emulator times and cost
estimates are model outputs, not measurements.
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


def _estimate(path: Path, task, chip: str) -> dict:
    """est_us / roofline_fraction of the kernel on the largest quick case (None when the backend
    gives no estimate)."""
    from copilot.backends import sim
    from copilot.oracle import make_inputs

    case = max(task.quick_cases(), key=lambda c: c.max_numel)
    dtypes = list(case.dtypes) + _out_dtypes(task, case)
    b = sim.build(path.read_text(), task, dtypes, chip)
    r = sim.run(b, task, case, make_inputs(task, case))
    est = (getattr(r, "extra", {}) or {}).get("estimate")
    return {"case": case.id, "est_us": r.time_us,
            "roofline_fraction": getattr(est, "roofline_fraction", None),
            "bottleneck": r.bottleneck}


def _out_dtypes(task, case) -> list[str]:
    from copilot.oracle import make_inputs, reference

    ref = reference(task, case, make_inputs(task, case))
    return [o.dtype for o in ref.outputs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", help="comma-separated task names (default: the built-in suite)")
    ap.add_argument("--cases", default="quick", help="cases for check: quick | all | ID,...")
    ap.add_argument("--chips", default="910B2,950PR")
    ap.add_argument("--no-check", action="store_true", help="only lower (no emulator)")
    ap.add_argument("--estimate", action="store_true", help="also report est_us on 910B2")
    ap.add_argument("--json", default=str(ROOT / "bench" / "results" / "lowering.json"))
    args = ap.parse_args(argv)

    from copilot.errors import CannpilotError
    from copilot.lowering import lower, supports
    from copilot.tasks import builtin_names, load_task

    names = args.tasks.split(",") if args.tasks else builtin_names()
    chips = [c for c in args.chips.split(",") if c]
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="lowering-bench-"))
    for name in names:
        row: dict = {"task": name}
        task = load_task(name)
        row["category"] = task.category
        t0 = time.perf_counter()
        ok, why = supports(task)
        row.update(supported=ok, reason=why)
        if ok:
            try:
                k = lower(task)
                row["pattern"] = k.pattern
                row["lower_s"] = round(time.perf_counter() - t0, 2)
                path = tmp / f"{name}.cpp"
                path.write_text(k.source)
                if not args.no_check:
                    from copilot.backends.sim import check_kernel

                    for chip in chips:
                        t1 = time.perf_counter()
                        try:
                            src = lower(task, chip=chip).source
                            cpath = tmp / f"{name}-{chip}.cpp"
                            cpath.write_text(src)
                            rep = check_kernel(cpath, task, chip=chip, cases=args.cases)
                            passed = sum(c.passed for c in rep.cases)
                            row[chip] = {"compiled": rep.compiled, "correct": rep.correct,
                                         "passed": passed, "cases": len(rep.cases),
                                         "seconds": round(time.perf_counter() - t1, 1),
                                         "errors": sorted({d.id for d in rep.diagnostics if d.severity == "error"})}
                        except CannpilotError as exc:
                            row[chip] = {"compiled": False, "correct": False, "error": str(exc)}
                if args.estimate:
                    try:
                        row["estimate_910B2"] = _estimate(path, task, "910B2")
                    except Exception as exc:  # the cost model is optional
                        row["estimate_910B2"] = {"error": f"{type(exc).__name__}: {exc}"}
            except CannpilotError as exc:
                row.update(supported=False, reason=str(exc))
        rows.append(row)
        _print_row(row, chips)
    summary = _summary(rows, chips)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"cases": args.cases, "rows": rows, "summary": summary}, indent=2))
    print(json.dumps(summary, indent=2))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _print_row(row: dict, chips: list[str]) -> None:
    cells = [f"{row['task']:28s}", f"{'yes' if row['supported'] else 'NO':3s}",
             f"{row.get('pattern', '-'):18s}", f"{row.get('lower_s', 0):6.2f}s"]
    for chip in chips:
        r = row.get(chip)
        cells.append(f"{chip}:" + (f"{r.get('passed', 0)}/{r.get('cases', 0)}" + ("" if r.get("correct") else "!")
                                   if r else "-"))
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
            p[c] += int(bool(r.get(c, {}).get("correct")))
    return {"tasks": len(rows), "supported": len(sup),
            "supported_fraction": round(len(sup) / max(1, len(rows)), 3),
            "passing": {c: sum(bool(r.get(c, {}).get("correct")) for r in sup) for c in chips},
            "by_pattern": by_pattern,
            "unsupported": {r["task"]: r["reason"] for r in rows if not r["supported"]}}


if __name__ == "__main__":
    sys.exit(main())
