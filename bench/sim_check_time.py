"""How fast the sim backend answers: `check` wall time with a cold and a warm build cache, and the
emulator's throughput on a 16M-element elementwise kernel.

    .venv/bin/python bench/sim_check_time.py [--runs 5] [--out bench/results/sim_check_time.json]
    .venv/bin/python bench/sim_check_time.py --throughput-only [--runs 7]
    .venv/bin/python bench/sim_check_time.py --throughput-only --trees BEFORE AFTER [--rounds 3]

Figures are medians over --runs runs. "cli" times run `cannpilot check --json` as a fresh process
(interpreter, torch import and all); "in-process" times call check_kernel() in this process.
Throughput: the whole `run()` call (tensors into GM, sandboxed launcher, outputs back) and the
launcher alone, with the CPU seconds of this process and of the launcher's tree, and, because the
machine is shared, each run's ratio to a fixed reference measured right before it (numpy adding the
same two 16M-element arrays into a preallocated output, the data motion of the kernel).
With --trees, the throughput part of each tree's own copy of this bench runs in turn, --rounds
times (trees made with `git worktree add`), and the ratios of the medians are reported per round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KERNEL = REPO / "tests" / "kernels" / "relu_tail_pad.cpp"
ADD_KERNEL = REPO / "tests" / "kernels" / "add_double_buffer.cpp"
TASK, CASE = "relu", "10"          # relu case 10: [64, 1024] float32
N_ELEMENTS = 16 * 1024 * 1024


def _cli(cache: Path) -> float:
    env = {**os.environ, "CANNPILOT_CACHE": str(cache)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "copilot.cli", "check", str(KERNEL), "--task", TASK,
                           "--cases", CASE, "--json"], cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall


def _in_process(cache: Path) -> tuple[float, float, float]:
    os.environ["CANNPILOT_CACHE"] = str(cache)
    from copilot.backends.sim import check_kernel
    t0 = time.perf_counter()
    report = check_kernel(KERNEL, TASK, cases=CASE)
    wall = time.perf_counter() - t0
    assert report.correct, report.to_json()
    return wall, report.build_seconds, report.run_seconds


def _reference(a, b, out) -> float:
    t0 = time.perf_counter()
    np.add(a, b, out=out)
    return time.perf_counter() - t0


def _throughput(runs: int) -> dict:
    import resource

    import torch

    from copilot.backends.sim import build, run
    from copilot.oracle.golden import OutputSpec
    from copilot.tasks import Case, load_task

    task = load_task("add")
    case = Case(id="bench16M", shapes=[(N_ELEMENTS,), (N_ELEMENTS,)], dtypes=["float32", "float32"], attrs={},
                value_ranges=[(-1.0, 1.0), (-1.0, 1.0)])
    g = torch.Generator().manual_seed(0)
    inputs = [torch.rand(N_ELEMENTS, generator=g) * 2 - 1 for _ in range(2)]
    b = build(ADD_KERNEL, task, ["float32", "float32", "float32"])
    assert b.ok, [d.message for d in b.diagnostics]
    outputs = [OutputSpec("y", (N_ELEMENTS,), "float32")]
    a_np, b_np = inputs[0].numpy(), inputs[1].numpy()
    ref_out = np.zeros_like(a_np)
    run(b, task, case, inputs, outputs=outputs)          # warm-up (page cache, buffers of this process)
    rows = []
    for _ in range(runs):
        ref = _reference(a_np, b_np, ref_out)
        c0, s0 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        r = run(b, task, case, inputs, outputs=outputs)
        total = time.perf_counter() - t0
        c1, s1 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
        assert r.ok, [d.message for d in r.diagnostics]
        rows.append({"run_seconds": total, "launcher_seconds": r.wall_seconds, "reference_seconds": ref,
                     "ratio_to_reference": total / ref,
                     "cpu_self_seconds": (s1.ru_utime - s0.ru_utime) + (s1.ru_stime - s0.ru_stime),
                     "cpu_launcher_seconds": (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)})
    assert torch.equal(r.outputs[0], inputs[0] + inputs[1])
    med = {k: statistics.median(row[k] for row in rows) for k in rows[0]}
    return {"elements": N_ELEMENTS, "kernel": ADD_KERNEL.name, "block_dim": r.block_dim,
            "run_seconds_median": med["run_seconds"], "element_ops_per_second": N_ELEMENTS / med["run_seconds"],
            "launcher_seconds_median": med["launcher_seconds"],
            "launcher_element_ops_per_second": N_ELEMENTS / med["launcher_seconds"],
            "reference_seconds_median": med["reference_seconds"],
            "ratio_to_reference_median": med["ratio_to_reference"],
            "cpu_self_seconds_median": med["cpu_self_seconds"],
            "cpu_launcher_seconds_median": med["cpu_launcher_seconds"],
            "load_average": os.getloadavg(), "runs": rows}


def _print_throughput(t: dict) -> None:
    print(f"16M-element add, end to end (run()):  {t['run_seconds_median']:.3f} s  "
          f"{t['element_ops_per_second']:.3g} el-ops/s  (goal >= 1e8)")
    print(f"  launcher alone:                     {t['launcher_seconds_median']:.3f} s  "
          f"{t['launcher_element_ops_per_second']:.3g} el-ops/s")
    print(f"  CPU: this process {t['cpu_self_seconds_median']:.3f} s, launcher tree "
          f"{t['cpu_launcher_seconds_median']:.3f} s")
    print(f"  reference (numpy add, same arrays): {t['reference_seconds_median']:.4f} s; "
          f"run / reference = {t['ratio_to_reference_median']:.1f} (median of per-run ratios); "
          f"load average {t['load_average'][0]:.1f}")


def _compare_trees(trees: list[str], runs: int, rounds: int) -> dict:
    """Each tree's throughput bench in its own process, the trees in turn, `rounds` times: the
    ratios within a round compare trees under the same load."""
    out: dict = {"trees": trees, "rounds": []}
    for _ in range(rounds):
        row = {}
        for tree in trees:
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                subprocess.run(["nice", "-n", "10", sys.executable, str(Path(tree) / "bench" / "sim_check_time.py"),
                                "--throughput-only", "--runs", str(runs), "--out", f.name], cwd=tree, check=True,
                               capture_output=True, text=True)
                row[tree] = json.loads(Path(f.name).read_text())
        out["rounds"].append(row)
        base = row[trees[0]]
        print("round: " + "; ".join(
            f"{t}: run() {row[t]['element_ops_per_second']:.3g} el-ops/s, launcher "
            f"{row[t]['launcher_element_ops_per_second']:.3g}, run()/baseline time "
            f"{row[t]['run_seconds_median'] / base['run_seconds_median']:.3f}, load {row[t]['load_average'][0]:.1f}"
            for t in trees))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "sim_check_time.json"))
    ap.add_argument("--throughput-only", action="store_true",
                    help="only the 16M-element add (JSON to bench/results/sim_throughput.json by default)")
    ap.add_argument("--trees", nargs="+", help="with --throughput-only: compare these source trees (the first is "
                    "the baseline)")
    ap.add_argument("--rounds", type=int, default=3, help="with --trees: how many times each tree runs")
    args = ap.parse_args()
    if args.throughput_only:
        if args.trees:
            t, name = _compare_trees(args.trees, args.runs, args.rounds), "sim_throughput_trees.json"
        else:
            t, name = _throughput(args.runs), "sim_throughput.json"
            _print_throughput(t)
        out = Path(args.out if args.out != ap.get_default("out") else REPO / "bench" / "results" / name)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(t, indent=2))
        print(f"wrote {out}")
        return 0

    base = Path(tempfile.mkdtemp(prefix="cannpilot-bench-"))
    results: dict = {"task": TASK, "case": CASE, "kernel": KERNEL.name, "runs": args.runs, "cpus": os.cpu_count()}

    cold_cli, cold_pch_cli, warm_cli = [], [], []
    for i in range(args.runs):
        cold_cli.append(_cli(base / f"cold{i}"))                 # empty cache: PCH + launcher
    warm_cache = base / "warm"
    _cli(warm_cache)
    for _ in range(args.runs):
        warm_cli.append(_cli(warm_cache))
    for i in range(args.runs):                                  # PCH cached, launcher not
        cache = base / f"pch{i}"
        (cache / "sim").mkdir(parents=True)
        os.symlink(warm_cache / "sim" / "pch", cache / "sim" / "pch")
        cold_pch_cli.append(_cli(cache))

    warm_in = []
    _in_process(warm_cache)
    for _ in range(args.runs):
        warm_in.append(_in_process(warm_cache))

    results["cli_cold_seconds"] = statistics.median(cold_cli)
    results["cli_cold_pch_warm_seconds"] = statistics.median(cold_pch_cli)
    results["cli_warm_seconds"] = statistics.median(warm_cli)
    results["in_process_warm_seconds"] = statistics.median(w for w, _, _ in warm_in)
    results["in_process_warm_emulation_seconds"] = statistics.median(r for _, _, r in warm_in)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    results["python_torch_import_seconds"] = time.perf_counter() - t0
    results["raw"] = {"cli_cold": cold_cli, "cli_cold_pch_warm": cold_pch_cli, "cli_warm": warm_cli,
                      "in_process_warm": warm_in}
    os.environ["CANNPILOT_CACHE"] = str(warm_cache)
    results["throughput"] = _throughput(args.runs)

    rows = [
        ("check, cold cache (CLI process)", f"{results['cli_cold_seconds']:.2f} s", "< 3 s"),
        ("check, PCH cached, new candidate (CLI)", f"{results['cli_cold_pch_warm_seconds']:.2f} s", ""),
        ("check, warm cache (CLI process)", f"{results['cli_warm_seconds']:.2f} s", "< 1 s"),
        ("check, warm cache (in process)", f"{results['in_process_warm_seconds']:.2f} s", "< 1 s"),
        ("  of which emulation", f"{results['in_process_warm_emulation_seconds']:.3f} s", ""),
        ("python + torch import alone", f"{results['python_torch_import_seconds']:.2f} s", ""),
        ("emulator throughput, 16M-element add (run())",
         f"{results['throughput']['element_ops_per_second']:.3g} el-ops/s", ">= 1e8"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median':>16}  goal")
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>16}  {goal}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
