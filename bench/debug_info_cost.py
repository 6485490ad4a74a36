"""What the sim backend's `-g1` (line tables for crash reports, crash_site.py) costs a build: the
same kernel built with CXX_FLAGS with and without it, alternating in one run, each variant from an
empty cache.

    .venv/bin/python bench/debug_info_cost.py [--runs 3] [--out bench/results/debug_info_cost.json]

cold: precompiled headers, launcher object and the candidate; warm: three candidates whose device
and host halves both compile, with the headers cached. CPU is the children's user + sys (the
compiler and the linker): the machine is shared, so read the CPU ratios; wall is printed too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copilot.config import atomic_write_text  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

KERNEL = REPO / "tests" / "kernels" / "relu_tail_pad.cpp"
HOST_LINE = "t->tileLength = 8192;"     # a host-half line: a comment after it recompiles the host half


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    build_mod = importlib.import_module("copilot.backends.sim.build")
    task = load_task("relu")
    src = KERNEL.read_text()
    assert HOST_LINE in src
    base = [f for f in build_mod.CXX_FLAGS if f != "-g1"]
    variants = {"base": base, "-g1": base[:2] + ["-g1"] + base[2:]}
    figures = {v: {"cold_wall": [], "cold_cpu": [], "warm_wall": [], "warm_cpu": [], "size": []} for v in variants}

    def timed(text: str):
        c0, t0 = _cpu_children(), time.perf_counter()
        b = build_mod.build(text, task, ["float32", "float32"])
        assert b.ok and not b.cached, b.diagnostics
        return time.perf_counter() - t0, _cpu_children() - c0, b

    root = Path(tempfile.mkdtemp(prefix="debug-info-cost-"))
    try:
        for run in range(args.runs):
            for name, flags in variants.items():
                os.environ["CANNPILOT_CACHE"] = str(root / f"{run}{name}")
                build_mod.CXX_FLAGS[:] = flags
                wall, cpu, b = timed(src)
                figures[name]["cold_wall"].append(wall)
                figures[name]["cold_cpu"].append(cpu)
                for k in range(3):
                    tag = f"// variant {run}.{k}"
                    wall, cpu, b = timed(f"{tag}\n" + src.replace(HOST_LINE, f"{HOST_LINE}  {tag}"))
                    meta = json.loads((b.artifact.parent / "build.json").read_text())
                    assert not meta["device_cached"] and not meta["host_cached"], meta
                    figures[name]["warm_wall"].append(wall)
                    figures[name]["warm_cpu"].append(cpu)
                figures[name]["size"].append(b.artifact.stat().st_size)
                print(run, name, "cold", round(figures[name]["cold_cpu"][-1], 1), "s CPU, warm",
                      [round(x, 1) for x in figures[name]["warm_cpu"][-3:]], "s CPU, load", os.getloadavg()[0],
                      flush=True)
                shutil.rmtree(root / f"{run}{name}", ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    medians = {}
    print(f"{'':10} {'base':>8} {'-g1':>8} {'ratio':>6}")
    for key in ("warm_cpu", "warm_wall", "cold_cpu", "cold_wall", "size"):
        a, g = statistics.median(figures["base"][key]), statistics.median(figures["-g1"][key])
        medians[key] = {"base": a, "g1": g, "ratio": g / a, "n": len(figures["base"][key])}
        print(f"{key:10} {a:8.2f} {g:8.2f} {g / a:6.2f}")
    if args.out:
        atomic_write_text(args.out, json.dumps({"figures": figures, "medians": medians,
                                                "load": os.getloadavg()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
