"""What the cost model costs, and how fast a performance case is estimated.

    .venv/bin/python bench/timing_overhead.py [--runs 5] [--out bench/results/timing_overhead.json]

1. Overhead of timing on top of functional execution: each kernel runs one case of its task
   functionally (real inputs, every block) with the cost model on and off (`run(timing=False)`),
   alternating, --runs times each. The figures are the sandboxed emulation's CPU time (launcher
   and block processes, user + sys, from RUSAGE_CHILDREN: steadier than wall time on a loaded
   machine) and its wall time, medians per kernel; the ratio (functional + timing) / (functional
   only) of CPU times is reported per kernel and as the median over kernels.
2. Estimating the largest cases of the suite (`estimate_case`: count-only mode, first/middle/last
   block, no GM files), end to end in this process (golden on meta tensors, vector work,
   sandboxed run), median of --runs; beside it the same sampled run with the data loops
   (`count_only=False`, sparse input files), which is how performance cases ran before.

All figures are wall-clock medians on a shared machine: read the ratios, and the load average
recorded with them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-bench-cache-{os.getuid()}"))
from copilot.config import atomic_write_text  # noqa: E402

CHIP = "910B2"
L5 = REPO / "knowledge" / "cards" / "L5"
KERNELS = REPO / "tests" / "kernels"

# (kernel, task, case): functional runs, the largest quick-tier case of each task (<= 1M elements),
# and one instruction-bound case (a million rows of two elements: the most timing work per element)
OVERHEAD = [
    (KERNELS / "softmax_rows.cpp", "softmax", "13"),
    (KERNELS / "relu_tail_pad.cpp", "relu", None),
    (KERNELS / "abs_mask_repeat.cpp", "abs", None),
    (KERNELS / "softmax_rows.cpp", "softmax", None),
    (KERNELS / "rms_norm_bf16_cast.cpp", "rms_norm", None),
    (L5 / "elementwise-sigmoid.cpp", "sigmoid", None),
]
# (kernel, task, case): the largest cases of the suite
LARGEST = [
    (L5 / "elementwise-sigmoid.cpp", "sigmoid", "5"),     # 8192 x 8192 float32
    (L5 / "softmax-softmax.cpp", "softmax", "6"),         # 31 x 67 x 127 x 257 bfloat16 (67.8M)
    (L5 / "softmax-softmax.cpp", "softmax", "5"),         # 8192 x 8192 float32
    (L5 / "normalization-rms_norm.cpp", "rms_norm", "5"),  # 8 x 512 x 8192 float32
]


def _cpu_of(call):
    """(result, CPU seconds of the child processes `call` waited for)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = call()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _build(path: Path, task, case):
    from copilot.backends import sim
    from copilot.costmodel.estimate import output_shapes

    outs = output_shapes(task, case)
    b = sim.build(path, task, list(case.dtypes) + [o.dtype for o in outs], CHIP)
    if not b.ok:
        raise SystemExit(f"{path.name} does not build: {[d.message for d in b.diagnostics]}")
    return b, outs


def overhead(runs: int) -> dict:
    from copilot.backends import sim
    from copilot.oracle import make_inputs, reference
    from copilot.tasks import load_task, select_cases

    rows = []
    for path, task_name, case_id in OVERHEAD:
        task = load_task(task_name)
        case = task.case(case_id) if case_id else max(select_cases(task, "quick"),
                                                      key=lambda c: sum(math.prod(s) for s in c.shapes))
        b, _ = _build(path, task, case)
        inputs = make_inputs(task, case)
        ref = reference(task, case, inputs)
        cpu = {True: [], False: []}
        wall = {True: [], False: []}
        for _ in range(runs):
            for timing in (True, False):
                r, secs = _cpu_of(lambda: sim.run(b, task, case, inputs, outputs=ref.outputs, chip=CHIP,
                                                  timing=timing))
                if not r.ok or (timing and r.time_us is None):
                    raise SystemExit(f"{path.name} case {case.id} failed: {[d.message for d in r.diagnostics]}")
                cpu[timing].append(secs)
                wall[timing].append(r.wall_seconds)
        t, f = statistics.median(cpu[True]), statistics.median(cpu[False])
        rows.append({"kernel": path.name, "task": task_name, "case": case.id, "shapes": [list(s) for s in case.shapes],
                     "dtypes": case.dtypes, "functional_cpu_s": f, "functional_timing_cpu_s": t, "ratio": t / f,
                     "functional_wall_s": statistics.median(wall[False]),
                     "functional_timing_wall_s": statistics.median(wall[True]),
                     "wall_ratio": statistics.median(wall[True]) / statistics.median(wall[False]), "load": _load()})
        print(f"{path.name:28} case {case.id:>3} CPU functional {f:6.3f} s  +timing {t:6.3f} s  ratio {t / f:5.2f}"
              f"  (wall ratio {rows[-1]['wall_ratio']:.2f})", file=sys.stderr, flush=True)
    return {"runs": runs, "kernels": rows, "median_ratio": statistics.median(r["ratio"] for r in rows)}


def largest(runs: int) -> dict:
    import torch

    from copilot.backends import sim
    from copilot.costmodel.estimate import estimate_case
    from copilot.dtypes import dtype
    from copilot.tasks import load_task

    rows = []
    for path, task_name, case_id in LARGEST:
        task = load_task(task_name)
        case = task.case(case_id)
        b, outs = _build(path, task, case)
        metas = [torch.empty(s, dtype=dtype(d).torch, device="meta") for s, d in zip(case.shapes, case.dtypes)]
        est_wall, run_wall, run_cpu, old_wall, old_cpu, est = [], [], [], [], [], None
        for _ in range(runs):
            t0 = time.perf_counter()
            est = estimate_case(b, task, case, CHIP, outs)
            est_wall.append(time.perf_counter() - t0)
            r, secs = _cpu_of(lambda: sim.run(b, task, case, metas, outputs=outs, chip=CHIP, sample_blocks=True,
                                              count_only=True))
            run_wall.append(r.wall_seconds)
            run_cpu.append(secs)
            t0 = time.perf_counter()
            old, secs = _cpu_of(lambda: sim.run(b, task, case, metas, outputs=outs, chip=CHIP, sample_blocks=True,
                                                count_only=False))
            old_wall.append(time.perf_counter() - t0)
            old_cpu.append(secs)
            if est is None or old.extra["estimate"] is None:
                raise SystemExit(f"{path.name} case {case_id}: no estimate")
            if old.extra["estimate"].time_us != r.extra["estimate"].time_us:
                raise SystemExit(f"{path.name} case {case_id}: count-only and data-loop estimates differ")
        elements = sum(math.prod(s) for s in case.shapes)
        row = {"kernel": path.name, "task": task_name, "case": case_id, "shapes": [list(s) for s in case.shapes],
               "dtypes": case.dtypes, "elements": elements, "est_us": est.time_us, "t_hw_us": est.t_hw_us,
               "roofline_terms": est.roofline_terms, "timing": "estimate",
               "estimate_case_s": statistics.median(est_wall), "sandboxed_run_s": statistics.median(run_wall),
               "sandboxed_run_cpu_s": statistics.median(run_cpu), "with_data_loops_s": statistics.median(old_wall),
               "with_data_loops_cpu_s": statistics.median(old_cpu), "load": _load()}
        row["speedup"] = row["with_data_loops_s"] / row["estimate_case_s"]
        rows.append(row)
        print(f"{task_name:8} case {case_id:>2} {str(case.shapes[0]):22} {case.dtypes[0]:9} estimate_case "
              f"{row['estimate_case_s']:6.3f} s (sandboxed run {row['sandboxed_run_s']:6.3f} s)  with data loops "
              f"{row['with_data_loops_s']:6.3f} s  x{row['speedup']:.1f}", file=sys.stderr, flush=True)
    return {"runs": runs, "cases": rows, "max_estimate_case_s": max(r["estimate_case_s"] for r in rows)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "timing_overhead.json"))
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    doc = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_start": _load()},
           "timing": "estimate"}
    doc["overhead"] = overhead(args.runs)
    doc["largest_cases"] = largest(args.runs)
    doc["machine"]["load_end"] = _load()
    out = Path(args.out)
    atomic_write_text(out, json.dumps(doc, indent=2))
    print(f"timing overhead (functional + timing) / functional: median x{doc['overhead']['median_ratio']:.2f} "
          f"over {len(doc['overhead']['kernels'])} kernels")
    print(f"largest cases estimated in at most {doc['largest_cases']['max_estimate_case_s']:.2f} s "
          f"(count-only, sampled blocks)")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
