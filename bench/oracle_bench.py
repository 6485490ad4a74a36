"""Oracle cost on the built-in suite: wall time and peak memory of input generation + golden runs.

Measures the largest quick-tier case and the largest case of the whole suite (by elements), each
in a fresh subprocess so its peak RSS is its own. Prints a table and writes JSON.

    .venv/bin/python bench/oracle_bench.py [--repeat 3] [-o bench/results/oracle.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from copilot.tasks import load_task
from copilot.oracle import make_inputs, reference
task = load_task(sys.argv[1]); case = task.case(sys.argv[2])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter(); inputs = make_inputs(task, case); t1 = time.perf_counter()
reference(task, case, inputs); t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"inputs_s": t1 - t0, "golden_s": t2 - t1, "peak_rss_mb": peak / 1024,
                  "baseline_rss_mb": base / 1024}))
"""


def measure(task: str, case: str, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, task, case], capture_output=True,
                             text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {
        "task": task, "case": case,
        "inputs_s": statistics.median(r["inputs_s"] for r in runs),
        "golden_s": statistics.median(r["golden_s"] for r in runs),
        "total_s": statistics.median(r["inputs_s"] + r["golden_s"] for r in runs),
        "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
        "baseline_rss_mb": statistics.median(r["baseline_rss_mb"] for r in runs),
        "runs": repeat,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("-o", "--output", default="bench/results/oracle.json")
    args = ap.parse_args()

    from copilot.tasks import builtin_tasks

    tasks = builtin_tasks()
    cases = [(t, c) for t in tasks for c in t.cases]
    quick = [(t, c) for t in tasks for c in t.quick_cases()]
    largest_quick = max(quick, key=lambda tc: tc[1].total_numel)
    largest = max(cases, key=lambda tc: tc[1].total_numel)
    rows = []
    for label, (t, c) in (("largest quick case", largest_quick), ("largest case", largest)):
        r = measure(t.name, c.id, args.repeat)
        r.update(label=label, elements=c.total_numel, shapes=[list(s) for s in c.shapes], dtypes=c.dtypes)
        rows.append(r)
    print(f"{'':20} {'task/case':28} {'elements':>12} {'inputs s':>9} {'golden s':>9} {'peak RSS MB':>12}")
    for r in rows:
        print(f"{r['label']:20} {r['task'] + '/' + r['case']:28} {r['elements']:>12,} "
              f"{r['inputs_s']:>9.3f} {r['golden_s']:>9.3f} {r['peak_rss_mb']:>12.0f}")
    print(f"(medians of {args.repeat} runs, each in a fresh process; baseline RSS after imports "
          f"~{rows[0]['baseline_rss_mb']:.0f} MB)")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"suite_tasks": len(tasks), "suite_cases": len(cases), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
