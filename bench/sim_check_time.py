"""How fast the sim backend answers: `check` wall time with a cold and a warm build cache, and the
emulator's throughput on a 16M-element elementwise kernel.

    .venv/bin/python bench/sim_check_time.py [--runs 5] [--out bench/results/sim_check_time.json]

Figures are medians over --runs runs. "cli" times run `cannpilot check --json` as a fresh process
(interpreter, torch import and all); "in-process" times call check_kernel() in this process.
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


def _throughput(runs: int) -> dict:
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
    walls = []
    for _ in range(runs):
        r = run(b, task, case, inputs, outputs=outputs)
        assert r.ok, [d.message for d in r.diagnostics]
        walls.append(r.wall_seconds)
    assert torch.equal(r.outputs[0], inputs[0] + inputs[1])
    med = statistics.median(walls)
    return {"elements": N_ELEMENTS, "kernel": ADD_KERNEL.name, "block_dim": r.block_dim,
            "run_seconds_median": med, "element_ops_per_second": N_ELEMENTS / med, "runs": walls}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "sim_check_time.json"))
    args = ap.parse_args()

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
        ("emulator throughput, 16M-element add", f"{results['throughput']['element_ops_per_second']:.3g} el-ops/s",
         ">= 1e8"),
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
