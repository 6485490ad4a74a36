"""The cost of the evaluator's integrity layers (issue 24) on honest kernels, as a before/after
ratio measured in one run.

Usage: python bench/security_overhead.py BEFORE_TREE AFTER_TREE [--evaluator N] [--repeat R] [--kernels K]

BEFORE_TREE and AFTER_TREE are checkouts (e.g. `git worktree add /tmp/before <commit>`). For
each acceptance kernel of tests/test_sim_kernels.py, `check --cases quick` (build warm, cached)
is timed in both trees, alternating, R times; the median of the per-kernel ratios is printed.
With --evaluator N, the first N kernels also get the evolution evaluator's whole cascade (quick
tier + performance cases: count-only before, judged sampled blocks after). Each tree uses its own
cache directory. Wall times on a shared machine: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

KERNELS = {"add_double_buffer.cpp": "add", "relu_tail_pad.cpp": "relu", "leaky_relu_tbuf.cpp": "leaky_relu",
           "softmax_rows.cpp": "softmax", "rms_norm_bf16_cast.cpp": "rms_norm", "abs_mask_repeat.cpp": "abs",
           "exp_legacy_tiling.cpp": "exp", "square_dtype_macros.cpp": "square", "neg_tiling_key.cpp": "neg"}

# Wall seconds ("s") and the CPU seconds of this process and its runs ("cpu": user + system, waited
# children included), which a loaded machine inflates less than the wall time.
CHECK = """
import time, json, resource
from copilot.backends.sim import check_kernel
def cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
t0, c0 = time.perf_counter(), cpu()
r = check_kernel({kernel!r}, {task!r}, cases="quick")
print(json.dumps({{"s": time.perf_counter() - t0, "cpu": cpu() - c0, "ok": r.correct}}))
"""

EVALUATE = """
import time, json, resource
from pathlib import Path
from copilot.evolution.evaluate import SimEvaluator
from copilot.events import Candidate
from copilot.tasks import load_task
task = load_task({task!r})
ev = SimEvaluator(workdir=Path({workdir!r}))
c = Candidate(id="k", code=Path({kernel!r}).read_text(), round=1, origin="llm")
def cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))
t0, c0 = time.perf_counter(), cpu()
e = ev.evaluate_sync(task, c)
print(json.dumps({{"s": time.perf_counter() - t0, "cpu": cpu() - c0, "ok": e.status == "passed", "time_us": e.time_us}}))
"""


def _once(tree: Path, code: str) -> dict:
    env = {**os.environ, "CANNPILOT_CACHE": str(tree / ".bench-cache")}
    p = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True,
                       timeout=1800)
    if p.returncode != 0:
        raise SystemExit(f"{tree}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--evaluator", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--kernels", type=int, default=len(KERNELS), help="the first N kernels only")
    a = ap.parse_args()
    rows = []
    for i, (k, task) in enumerate(list(KERNELS.items())[:a.kernels]):
        kinds = [("check", CHECK)] + ([("evaluate", EVALUATE)] if i < a.evaluator else [])
        for kind, tmpl in kinds:
            times = {"before": [], "after": []}
            cpus = {"before": [], "after": []}
            oks, est = {}, {}
            for rep in range(a.repeat + 1):          # the first round warms builds and references
                for side, tree in (("before", a.before), ("after", a.after)):
                    code = tmpl.format(kernel=str(tree / "tests" / "kernels" / k), task=task,
                                       workdir=str(tree / ".bench-cache" / "cand"))
                    r = _once(tree, code)
                    oks[side], est[side] = r["ok"], r.get("time_us")
                    if rep:
                        times[side].append(r["s"])
                        cpus[side].append(r.get("cpu", float("nan")))
            b, f = statistics.median(times["before"]), statistics.median(times["after"])
            cb, cf = statistics.median(cpus["before"]), statistics.median(cpus["after"])
            rows.append({"kernel": k, "kind": kind, "before_s": b, "after_s": f, "ratio": f / b,
                         "before_cpu_s": cb, "after_cpu_s": cf, "cpu_ratio": cf / cb if cb else None,
                         "ok": oks, "time_us": est})
            print(json.dumps(rows[-1]), flush=True)
    for kind in ("check", "evaluate"):
        for key, label in (("ratio", "wall"), ("cpu_ratio", "cpu")):
            rs = [r[key] for r in rows if r["kind"] == kind and r.get(key)]
            if rs:
                print(f"{kind} {label}: median after/before = {statistics.median(rs):.2f} over {len(rs)} kernels "
                      f"(min {min(rs):.2f}, max {max(rs):.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
