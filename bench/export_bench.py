"""Acceptance of the exporter (issue 19): every operator that passes in sim, exported as a
CANN-Bench submission, validates with no finding, its kernel is byte for byte the candidate, and
its op_host / op_kernel sources compile with the emulator's headers (the fake toolchain's compile:
g++ -fsyntax-only for op_host, the sim backend's build for op_kernel).

Built-in suite: the lowering output of every built-in task that lowers (all pass in sim:
docs/results.md, issue 5). CANN-Bench: every task that loads and lowers, checked in sim on its
quick tier first (`--check`); only the ones that pass are exported.

    .venv/bin/python bench/export_bench.py [--suite builtin|cannbench|all] [--check] [-o bench/results/export.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CANNBENCH = REPO.parent / "shared" / "cannbench" / "tasks"


def tasks(suite: str):
    from copilot.lowering import supports
    from copilot.tasks import load_task
    from copilot.tasks.loader import builtin_names

    refs = []
    if suite in ("builtin", "all"):
        refs += [("builtin", n) for n in builtin_names()]
    if suite in ("cannbench", "all") and CANNBENCH.is_dir():
        refs += [("cannbench", str(d)) for d in sorted(CANNBENCH.glob("level*/*")) if (d / "proto.yaml").is_file()]
    for kind, ref in refs:
        try:
            t = load_task(ref)
            ok, why = supports(t)
        except Exception as e:   # noqa: BLE001 - a task the loader refuses is reported, not exported
            yield kind, ref, None, f"does not load: {str(e)[:120]}"
            continue
        yield kind, ref, (t if ok else None), ("" if ok else f"does not lower: {why[:120]}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="all", choices=("builtin", "cannbench", "all"))
    ap.add_argument("--check", action="store_true", help="check CANN-Bench tasks in sim (quick tier) before export")
    ap.add_argument("--tasks", default="", help="only these task names (comma-separated)")
    ap.add_argument("-o", "--output", default=str(REPO / "bench" / "results" / "export.json"))
    args = ap.parse_args()

    from copilot.backends.sim import check_kernel
    from copilot.export import ExportItem, export
    from copilot.lowering import lower
    from tests.fakes.fake_cann import compile_sources

    rows = []
    work = Path(tempfile.mkdtemp(prefix="cannpilot-export-bench-"))
    only = set(filter(None, args.tasks.split(",")))
    for kind, ref, task, why in tasks(args.suite):
        if only and Path(ref).name not in only:
            continue
        row = {"suite": kind, "task": Path(ref).name, "exported": False, "reason": why}
        rows.append(row)
        if task is None:
            print(f"{row['task']}: skipped ({why})", flush=True)
            continue
        t0 = time.monotonic()
        src = lower(task).source
        if kind == "cannbench" and args.check:
            k = work / f"{task.name}.cpp"
            k.write_text(src)
            rep = check_kernel(k, task, cases="quick")
            row["sim_correct"] = rep.correct
            if not rep.correct:
                row["reason"] = "does not pass in sim"
                print(f"{row['task']}: not exported (does not pass in sim)", flush=True)
                continue
        try:
            res = export([ExportItem(task, src, "lowering", "lowering")], work / task.name)
        except Exception as e:   # noqa: BLE001
            row["reason"] = f"export: {type(e).__name__}: {e}"
            print(f"{row['task']}: export failed: {e}", flush=True)
            continue
        spec = res.specs[0]
        kernel = res.directory / "csrc" / "ops" / spec.snake / "op_kernel" / f"{spec.snake}.cpp"
        ok, log = compile_sources(res.directory)
        row.update(exported=True, findings=[f.line() for f in res.findings],
                   kernel_identical=kernel.read_bytes() == src.encode() and
                   hashlib.sha256(kernel.read_bytes()).hexdigest() == spec.sha256,
                   compiles=ok, compile_log=log[-600:] if not ok else "", seconds=round(time.monotonic() - t0, 1))
        print(f"{row['task']}: findings {len(res.findings)}, kernel identical {row['kernel_identical']}, "
              f"compiles {ok} ({row['seconds']} s)", flush=True)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    exported = [r for r in rows if r["exported"]]
    summary = {s: {"exported": sum(1 for r in exported if r["suite"] == s),
                   "no_finding": sum(1 for r in exported if r["suite"] == s and not r["findings"]),
                   "kernel_identical": sum(1 for r in exported if r["suite"] == s and r["kernel_identical"]),
                   "compiles": sum(1 for r in exported if r["suite"] == s and r["compiles"]),
                   "considered": sum(1 for r in rows if r["suite"] == s)} for s in ("builtin", "cannbench")}
    Path(args.output).write_text(json.dumps({"summary": summary, "rows": rows}, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
