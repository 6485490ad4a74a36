"""How long the sim backend takes to build a candidate: the launcher compiled whole (candidate and
generic launcher in one translation unit) against the split build (candidate plus the small entry
glue, linked with the generic launcher object compiled once per arch).

    .venv/bin/python bench/build_time.py [--runs 3] [--tasks rms_norm relu softmax]
                                         [--out bench/results/build_time.json]

Kernels are lowered with `cannpilot lower`. Every build starts from an empty build cache for the
kernel with the precompiled header and the launcher object already built (warm). Both layouts are
measured in the same run, interleaved, so read the ratios: the machine is shared and noisy. Times
are medians over --runs: wall seconds and the CPU seconds (user + sys) of g++ and its children.
The end-to-end figure is one `SimEvaluator` evaluation (quick correctness cases, then the
performance cases' cost-model estimates) of the lowered rms_norm; its estimate and verdicts must be
the same in both layouts.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copilot.config import atomic_write_text  # noqa: E402

CHIP = "910B2"


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _lower(task: str, out: Path) -> None:
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "cannpilot"), "lower", "--task", task, "-o", str(out)],
                          cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"cannpilot lower --task {task} failed ({proc.returncode}): {proc.stderr[-2000:]}")


class _Layout:
    """`whole`: the generic launcher is included in every launcher TU (no prebuilt object)."""

    def __init__(self, build_module, layout: str):
        self.mod, self.layout, self.saved = build_module, layout, build_module.ensure_harness_object

    def __enter__(self):
        if self.layout == "whole":
            self.mod.ensure_harness_object = lambda chip, hh=None: None

    def __exit__(self, *exc):
        self.mod.ensure_harness_object = self.saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tasks", nargs="+", default=["rms_norm", "relu", "softmax"])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "build_time.json"))
    ap.add_argument("--no-e2e", action="store_true", help="skip the SimEvaluator evaluation")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cannpilot-build-time-"))
    os.environ["CANNPILOT_CACHE"] = str(work / "cache")
    build_mod = importlib.import_module("copilot.backends.sim.build")
    from copilot.chips import load_chip
    from copilot.events import Candidate
    from copilot.evolution.evaluate import SimEvaluator
    from copilot.tasks import load_task

    load_start = os.getloadavg()
    kernels = {}
    for name in args.tasks:
        kernels[name] = work / f"{name}.cpp"
        _lower(name, kernels[name])
    tasks = {name: load_task(name) for name in args.tasks}
    builds_dir = build_mod.cache_dir() / "builds"

    chip = load_chip(CHIP)
    t0, c0 = time.perf_counter(), _cpu_children()
    build_mod.ensure_pch(chip)
    pch_s = (time.perf_counter() - t0, _cpu_children() - c0)
    t0, c0 = time.perf_counter(), _cpu_children()
    if build_mod.ensure_harness_object(chip) is None:
        raise SystemExit("the generic launcher object did not compile")
    obj_s = (time.perf_counter() - t0, _cpu_children() - c0)

    samples: dict[str, dict[str, list]] = {lay: {n: [] for n in args.tasks} for lay in ("whole", "split")}
    for r in range(args.runs):
        for layout in (("whole", "split") if r % 2 == 0 else ("split", "whole")):
            for name in args.tasks:
                shutil.rmtree(builds_dir, ignore_errors=True)
                with _Layout(build_mod, layout):
                    t0, c0 = time.perf_counter(), _cpu_children()
                    b = build_mod.build(kernels[name], tasks[name], ["float32"], CHIP)
                    wall, cpu = time.perf_counter() - t0, _cpu_children() - c0
                if not b.ok or b.cached:
                    raise SystemExit(f"{layout} build of {name} failed or was cached: "
                                     f"{[d.message for d in b.diagnostics]}")
                samples[layout][name].append((wall, cpu))
                print(f"run {r} {layout:5s} {name:10s} wall {wall:6.2f} s  cpu {cpu:6.2f} s", flush=True)

    e2e: dict[str, list] = {"whole": [], "split": []}
    outcomes: dict[str, set] = {"whole": set(), "split": set()}
    if not args.no_e2e and "rms_norm" in kernels:
        code = kernels["rms_norm"].read_text()
        for r in range(args.runs):
            for layout in (("whole", "split") if r % 2 == 0 else ("split", "whole")):
                shutil.rmtree(builds_dir, ignore_errors=True)
                ev_dir = work / f"eval-{layout}-{r}"
                with _Layout(build_mod, layout):
                    evaluator = SimEvaluator(chip=CHIP, workdir=ev_dir)
                    t0 = time.perf_counter()
                    ev = evaluator.evaluate_sync(tasks["rms_norm"], Candidate(id="bench", code=code, round=0,
                                                                              origin="lowering"))
                    wall = time.perf_counter() - t0
                e2e[layout].append((wall, ev.build_seconds))
                outcomes[layout].add(json.dumps([ev.status, ev.time_us, ev.timing,
                                                 [(c["id"], c.get("passed"), c.get("est_us")) for c in ev.cases]]))
                print(f"run {r} {layout:5s} evaluate rms_norm: {ev.status}, wall {wall:6.2f} s, "
                      f"builds {ev.build_seconds:6.2f} s, est. {ev.time_us} us", flush=True)
        if outcomes["whole"] != outcomes["split"] or len(outcomes["split"]) != 1:
            raise SystemExit(f"the two layouts evaluate differently: {outcomes}")

    def med(xs, i):
        return round(statistics.median(x[i] for x in xs), 3)

    per_kernel = {}
    for name in args.tasks:
        w, s = samples["whole"][name], samples["split"][name]
        per_kernel[name] = {"whole_wall_s": med(w, 0), "split_wall_s": med(s, 0),
                            "whole_cpu_s": med(w, 1), "split_cpu_s": med(s, 1),
                            "cpu_ratio_split_over_whole": round(med(s, 1) / med(w, 1), 3)}
    all_w = [x for n in args.tasks for x in samples["whole"][n]]
    all_s = [x for n in args.tasks for x in samples["split"][n]]
    doc = {
        "what": "sim backend build of lowered kernels: launcher TU compiled whole vs candidate + glue "
                "linked with the prebuilt generic launcher object; cold build cache, warm PCH and object",
        "chip": CHIP, "runs": args.runs, "tasks": args.tasks,
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
        "one_time": {"pch_wall_s": round(pch_s[0], 2), "pch_cpu_s": round(pch_s[1], 2),
                     "harness_object_wall_s": round(obj_s[0], 2), "harness_object_cpu_s": round(obj_s[1], 2)},
        "per_kernel": per_kernel,
        "median_build": {"whole_wall_s": med(all_w, 0), "split_wall_s": med(all_s, 0),
                         "whole_cpu_s": med(all_w, 1), "split_cpu_s": med(all_s, 1),
                         "cpu_ratio_split_over_whole": round(med(all_s, 1) / med(all_w, 1), 3)},
    }
    if e2e["split"]:
        doc["evaluate_rms_norm"] = {
            "whole_wall_s": med(e2e["whole"], 0), "split_wall_s": med(e2e["split"], 0),
            "whole_build_s": med(e2e["whole"], 1), "split_build_s": med(e2e["split"], 1),
            "wall_ratio_split_over_whole": round(med(e2e["split"], 0) / med(e2e["whole"], 0), 3),
            "same_outcome_both_layouts": True, "outcome": json.loads(next(iter(outcomes["split"]))),
            "timing": "estimate",
        }
    out = Path(args.out)
    atomic_write_text(out, json.dumps(doc, indent=2) + "\n")
    print()
    print(f"{'kernel':10s} {'whole cpu':>10s} {'split cpu':>10s} {'ratio':>6s} {'whole wall':>11s} {'split wall':>11s}")
    for name, k in per_kernel.items():
        print(f"{name:10s} {k['whole_cpu_s']:10.2f} {k['split_cpu_s']:10.2f} {k['cpu_ratio_split_over_whole']:6.2f} "
              f"{k['whole_wall_s']:11.2f} {k['split_wall_s']:11.2f}")
    if "evaluate_rms_norm" in doc:
        e = doc["evaluate_rms_norm"]
        print(f"evaluate rms_norm: whole {e['whole_wall_s']:.2f} s, split {e['split_wall_s']:.2f} s "
              f"(ratio {e['wall_ratio_split_over_whole']:.2f}); builds {e['whole_build_s']:.2f} s vs "
              f"{e['split_build_s']:.2f} s; load {doc['loadavg_start']} -> {doc['loadavg_end']}")
    print(f"wrote {out}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
