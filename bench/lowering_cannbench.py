"""Lowering sweep over CANN-Bench's public tasks: lower each task, check every case on the emulator,
and compare each passing case's estimate with the vendor's measured time on the chip.

    nice -n 10 .venv/bin/python bench/lowering_cannbench.py [--tasks level2/gcd,level1/exp]
        [--chip 910B2] [--cases all] [--progress FILE] [--md OUT.md]

Per task: exit of `cannpilot lower` (0 lowers, 3 unsupported with its one-line reason), the
lowering wall time, cases passed, est/baseline = geometric mean over the passing cases of
`est_us / baseline_perf_us` and est. HAP = the mean of `copilot.scoring.hap` over them, both against
the chip's own metadata (`tasks/metadata/910b2.json`, `950pr.json`; before session 14 a 950PR sweep
was compared with the 910B2 baselines). Every est_us is a cost-model ESTIMATE.
With `--progress FILE` each finished task is appended as a JSON line and tasks already there are
skipped, so a long sweep resumes where it stopped.

    nice -n 10 .venv/bin/python bench/lowering_cannbench.py --time-cli [--tasks ...] [--before TREE]
        [--after TREE]

times what a user waits for: `cannpilot lower` per task in a fresh process, cold (an empty
lowered-kernel cache) and warm (a hit), with the load average and the process's CPU time; TREE is
a directory holding `copilot/` and `bench/ops/` (e.g. `git archive REV copilot bench/ops`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "cannbench" / "tasks"
CLI = [str(ROOT / ".venv" / "bin" / "cannpilot")]

# the non-cube tasks of issue 16's acceptance list: every level1/level2 task and these of level3
LEVEL3 = ["add_rms_norm_dynamic_quant", "dequant_swiglu_quant", "engram_gate_fusion", "mhc_sinkhorn",
          "moe_finalize_routing", "moe_gating_top_k_softmax", "moe_re_routing", "nms", "roi_align",
          "strided_slice", "top_k", "transpose", "unique", "adaptive_avg_pool_3d", "dilation_2d"]


def acceptance_tasks() -> list[str]:
    out = [f"{lv}/{p.name}" for lv in ("level1", "level2") for p in sorted((BENCH / lv).iterdir()) if p.is_dir()]
    return out + [f"level3/{n}" for n in LEVEL3]


def baselines(chip: str) -> dict:
    meta = json.loads((BENCH / "metadata" / f"{chip.lower()}.json").read_text())
    return meta


def run_task(name: str, chip: str, cases: str, kdir: Path, meta: dict) -> dict:
    task_dir = BENCH / name
    kernel = kdir / (name.replace("/", "__") + ".cpp")
    t0 = time.perf_counter()
    low = subprocess.run(CLI + ["lower", "--task", str(task_dir), "--chip", chip, "-o", str(kernel)],
                         capture_output=True, text=True)
    row = {"task": name, "chip": chip, "lower_exit": low.returncode,
           "lower_s": round(time.perf_counter() - t0, 2)}
    if low.returncode != 0:
        row["reason"] = (low.stderr.strip().splitlines() or [""])[-1][:300]
        return row
    chk = subprocess.run(CLI + ["check", str(kernel), "--task", str(task_dir), "--cases", cases,
                                "--chip", chip, "--json"], capture_output=True, text=True)
    try:
        rep = json.loads(chk.stdout)
    except json.JSONDecodeError:
        row["check_error"] = (chk.stderr.strip().splitlines() or [""])[-1][:300]
        return row
    level, op = name.split("/")
    base = meta.get(level, {}).get(op, {})
    sys.path.insert(0, str(ROOT))
    from copilot.scoring import Baseline, hap

    ratios, haps, failed = [], [], []
    for c in rep.get("cases", []):
        if not c.get("passed"):
            failed.append(f"{c.get('id')}:{c.get('failure_class')}")
            continue
        m = base.get(str(c.get("id")), {})
        b = m.get("baseline_perf_us")
        if b and c.get("est_us"):
            ratios.append(c["est_us"] / b)
            if m.get("t_hw_us") is not None:
                haps.append(hap(c["est_us"], Baseline(b, m["t_hw_us"])))
    row.update(cases=len(rep.get("cases", [])), passed=sum(1 for c in rep.get("cases", []) if c.get("passed")),
               failed=failed, est_over_baseline=round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3)
               if ratios else None, worst=round(max(ratios), 2) if ratios else None,
               hap_est=round(sum(haps) / len(haps), 3) if haps else None,
               diagnostics=[d.get("id") for d in rep.get("diagnostics", [])][:5])
    return row


def time_lowering(names: list[str], chip: str) -> int:
    """Wall time of `lower()` per task in this process; the median over the tasks that lower."""
    import statistics

    sys.path.insert(0, str(ROOT))
    from copilot import lowering
    from copilot.errors import BadInput, Unsupported
    from copilot.tasks import load_task

    lowering.lower(load_task("relu"), chip=chip)          # warm torch and make_fx
    times = []
    for name in names:
        task = load_task(str(BENCH / name))
        lowering._PLAN_CACHE.clear()
        t0 = time.perf_counter()
        try:
            lowering.lower(task, chip=chip)
            ok = "lowers"
        except (Unsupported, BadInput) as exc:
            ok = f"exit 3: {str(exc)[:120]}"
        dt = time.perf_counter() - t0
        if ok == "lowers":
            times.append(dt)
        print(json.dumps({"task": name, "lower_s": round(dt, 2), "result": ok}), flush=True)
    if times:
        print(json.dumps({"lowered": len(times), "median_s": round(statistics.median(times), 2),
                          "min_s": round(min(times), 2), "max_s": round(max(times), 2),
                          "load": os.getloadavg()[0]}))
    return 0


def _cli_run(ref: str, chip: str, out: Path, env: dict) -> dict:
    """One `cannpilot lower` in a fresh process: its wall time, its CPU time, its exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(CLI + ["lower", "--task", ref, "--chip", chip, "-o", str(out)],
                       capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = {"exit": p.returncode, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
           "hit": "lowered-kernel cache" in p.stderr}
    if p.returncode != 0:
        row["reason"] = (p.stderr.strip().splitlines() or [""])[-1]
    return row


def time_cli(names: list[str], chip: str, before: str | None, after: str | None, kdir: Path) -> int:
    """What a user waits for: `cannpilot lower` per task in a fresh process, the first lowering
    (cold: an empty lowered-kernel cache) and the second (warm: a cache hit), with the 1-minute
    load average and the process's CPU time (user + sys: the wall time of an idle machine, near
    enough, when the shared machine is loaded). With `before` (a tree holding an earlier `copilot/`
    and `bench/ops/`, run through PYTHONPATH) its run is interleaved with the cold one, in
    alternating order, and the kernels are compared byte for byte (a refusal: its exit and reason)."""
    import statistics
    import tempfile

    kdir.mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="lowered-cache-")

    def env_for(tree: str | None) -> dict:
        env = dict(os.environ, CANNPILOT_CACHE_DIR=cache)
        if tree:
            env["PYTHONPATH"] = tree
        return env

    rows = []
    for n, name in enumerate(names):
        ref = str(BENCH / name) if "/" in name else name        # a name without a level: a built-in
        stem = name.replace("/", "__")
        row = {"task": name}
        runs = [("cold", after), ("before", before)] if before else [("cold", after)]
        for label, tree in (runs if n % 2 == 0 else runs[::-1]):
            row[label] = _cli_run(ref, chip, kdir / f"{stem}.{label}.cpp", env_for(tree))
            row[label]["load"] = round(os.getloadavg()[0], 1)
        row["warm"] = _cli_run(ref, chip, kdir / f"{stem}.warm.cpp", env_for(after))
        row["warm"]["load"] = round(os.getloadavg()[0], 1)
        cold = (kdir / f"{stem}.cold.cpp").read_bytes() if row["cold"]["exit"] == 0 else None
        row["warm_identical"] = cold is not None and (kdir / f"{stem}.warm.cpp").read_bytes() == cold
        if before:        # the same kernel bytes, or the same refusal (exit and reason)
            b = row["before"]
            row["before_identical"] = b["exit"] == row["cold"]["exit"] and (
                (kdir / f"{stem}.before.cpp").read_bytes() == cold if cold is not None
                else b.get("reason") == row["cold"].get("reason"))
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {"tasks": len(rows), "lowered": sum(r["cold"]["exit"] == 0 for r in rows)}
    for label in ("before", "cold", "warm") if before else ("cold", "warm"):
        ok = [r[label] for r in rows if r[label]["exit"] == 0]
        if ok:
            summary[label] = {"median_wall_s": round(statistics.median(x["wall_s"] for x in ok), 2),
                              "median_cpu_s": round(statistics.median(x["cpu_s"] for x in ok), 2),
                              "hits": sum(x["hit"] for x in ok)}
    loads = [r[k]["load"] for r in rows for k in ("cold", "warm")]
    summary["load_min_median_max"] = [min(loads), statistics.median(loads), max(loads)]
    summary["warm_identical"] = sum(r["warm_identical"] for r in rows)
    if before:
        summary["before_identical"] = sum(r["before_identical"] for r in rows)
    print(json.dumps(summary), flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", help="comma-separated level/name (default: the acceptance list)")
    ap.add_argument("--chip", default="910B2")
    ap.add_argument("--cases", default="all")
    ap.add_argument("--progress", help="JSON-lines file: append each row, skip tasks already there")
    ap.add_argument("--kernels", default="/tmp/cannbench_lowered")
    ap.add_argument("--md", help="write the Markdown table here")
    ap.add_argument("--time-only", action="store_true",
                    help="only the lowering time, in one process (torch warmed, plan cache cleared per task)")
    ap.add_argument("--time-cli", action="store_true",
                    help="the time a user waits for `cannpilot lower`, per task in a fresh process: "
                         "cold (empty lowered-kernel cache) and warm (a cache hit)")
    ap.add_argument("--before", metavar="TREE",
                    help="with --time-cli: a tree with an earlier copilot/ and bench/ops/, timed "
                         "interleaved with this one and its kernels compared")
    ap.add_argument("--after", metavar="TREE",
                    help="with --time-cli: the tree to time instead of this checkout's (a snapshot "
                         "keeps the cache key still while others edit the working tree)")
    a = ap.parse_args(argv)
    if not BENCH.is_dir():
        print(f"CANN-Bench not found at {BENCH}", file=sys.stderr)
        return 2
    names = a.tasks.split(",") if a.tasks else acceptance_tasks()
    if a.time_only:
        return time_lowering(names, a.chip)
    kdir = Path(a.kernels)
    if a.time_cli:
        return time_cli(names, a.chip, a.before, a.after, kdir)
    kdir.mkdir(parents=True, exist_ok=True)
    meta = baselines(a.chip)          # the chip's own measured baselines (950PR's differ from 910B2's)
    done: dict = {}
    if a.progress and Path(a.progress).exists():
        for line in Path(a.progress).read_text().splitlines():
            r = json.loads(line)
            if r.get("chip") == a.chip:
                done[r["task"]] = r
    rows = []
    for name in names:
        row = done.get(name) or run_task(name, a.chip, a.cases, kdir, meta)
        if name not in done and a.progress:
            with open(a.progress, "a") as f:
                f.write(json.dumps(row) + "\n")
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.md:
        lines = [f"{a.chip}; every time a cost-model ESTIMATE against the chip's measured baselines.", "",
                 "| task | lowers | lower s | cases passed | est/baseline (geomean, passing) | worst | est. HAP (mean, passing) | failures / reason |",
                 "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            if r["lower_exit"] != 0:
                lines.append(f"| {r['task']} | exit {r['lower_exit']} | {r['lower_s']} | - | - | - | - | {r.get('reason', '')} |")
            else:
                lines.append(f"| {r['task']} | yes | {r['lower_s']} | {r.get('passed', '-')}/{r.get('cases', '-')} | "
                             f"{r.get('est_over_baseline')} | {r.get('worst')} | {r.get('hap_est')} | "
                             f"{' '.join(r.get('failed', [])) or r.get('check_error', '')} |")
        Path(a.md).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
