"""Issue 18's acceptance sweep: the offline agent on CANN-Bench operators, and the Ray path.

    .venv/bin/python bench/evolution_sweep.py [--ops exp rms_norm ...] [--rounds 3] [--variants 4]
        [--ray-ops rms_norm gelu] [--ray-workers 1 2 2 1] [--after HEAD] [--out bench/results/evolution_sweep.json]

Per operator (`<suite>/tasks/level*/<op>`, the suite beside the repository): one session of the
offline agent (auto decisions) on 910B2 in its own process, reporting best / generation 1 (the
lowering's kernel with the default knobs, `r0-base`), the best's mean HAP and speedup over the
vendor's kernels (CANN-Bench's formula on the cost model's ESTIMATES), candidates evaluated per
minute of the session's wall time, and the time from the session's start to the best's
evaluation. With `--ray-ops`, the same sessions again with `--evaluators 127.0.0.1:PORT` on a
local Ray head started here (`ray start --head --block`, stopped by its process group) with 1,
then 2 CPUs (`--ray-workers`, in that order: repeat them, e.g. 1 2 2 1, to interleave), each
evaluation a Ray task. The tree is a commit exported with `git archive`, the
build cache the sweep's own (precompiled headers built once, before timing).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from evolution_speed import _export, _warm  # noqa: E402

SUITE = REPO.parent / "shared" / "cannbench" / "tasks"
# The CANN-Bench operators today's lowering passes (docs/results.md, issue 16).
OPS = ["exp", "masked_scale", "swi_glu", "apply_adam_w", "rms_norm", "softmax", "group_norm", "sigmoid",
       "dynamic_quant", "add_rms_norm_dynamic_quant", "gelu", "mish", "maximum", "gcd", "arg_max"]

CHILD = r'''
import asyncio, json, sys, time
from copilot.evolution.session import SessionConfig, new_engine, result_json
from copilot.tasks import load_task

path, rounds, variants, evaluators = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

class Sink:
    def __init__(self): self.events = []
    def emit(self, e): self.events.append(e)

sink = Sink()
cfg = SessionConfig(task=load_task(path), agent="offline", rounds=rounds, variants=variants, name="sweep",
                    evaluators=evaluators)
t0, wall0 = time.time(), time.perf_counter()
engine = new_engine(cfg, [sink])
result = asyncio.run(engine.run())
wall = time.perf_counter() - wall0
evaluated = [e for e in sink.events if e.kind == "candidate_evaluated"
             and e.status not in ("rejected_duplicate", "no_code")]
best = result.best
at_best = [e.at for e in evaluated if best and e.candidate_id == best.id]
doc = result_json(engine, result, cfg)
print(json.dumps({"wall_s": wall, "candidates": len(evaluated), "passed": sum(e.status == "passed" for e in evaluated),
                  "per_min": 60 * len(evaluated) / wall, "status": result.status, "reason": result.reason,
                  "best_over_gen1": doc["best"]["speedup_vs_baseline"] if best else None,
                  "best_id": best.id if best else None, "best_us": best.time_us if best else None,
                  "best_hap": doc["best"]["hap"] if best else None,
                  "speedup_vs_vendor": doc["best"]["speedup_vs_vendor"] if best else None,
                  "time_to_best_s": (at_best[0] - t0) if at_best else None,
                  "best_knobs": best.knobs if best else None}))
'''


def _task_path(op: str) -> Path:
    if Path(op).is_dir():               # a task directory of its own (--ray-ops)
        return Path(op).resolve()
    hits = sorted(SUITE.glob(f"level*/{op}"))
    if not hits:
        raise SystemExit(f"no CANN-Bench task {op} under {SUITE}")
    return hits[0]


def _session(tree: Path, cache: Path, op: str, rounds: int, variants: int, evaluators: str = "local") -> dict:
    env = {**os.environ, "CANNPILOT_CACHE": str(cache), "PYTHONPATH": str(tree)}
    proc = subprocess.run(["nice", "-n", "10", sys.executable, "-c", CHILD, str(_task_path(op)), str(rounds),
                           str(variants), evaluators], cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1][:300] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RayHead:
    """A local Ray head with `cpus` CPUs. `ray start` runs in a process group of its own, which
    its daemons keep: `stop` ends that group (`ray stop` would stop every Ray on the machine)."""

    def __init__(self, tree: Path, cache: Path, cpus: int, tmp: Path):
        self.port = _free_port()
        ray = Path(sys.executable).with_name("ray")
        env = {**os.environ, "CANNPILOT_CACHE": str(cache), "PYTHONPATH": str(tree), "RAY_USAGE_STATS_ENABLED": "0"}
        self.proc = subprocess.Popen([str(ray), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={self.port}",
                                      f"--num-cpus={cpus}", "--include-dashboard=false", "--disable-usage-stats",
                                      f"--temp-dir={tmp}"], env=env, cwd=tree, start_new_session=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = self.proc.communicate(timeout=300)
        if self.proc.returncode != 0:
            self.stop()
            raise SystemExit(f"the local Ray head did not start: {out[-1000:]}")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            time.sleep(10)


def _median(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 3) if xs else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", nargs="*", default=OPS)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--ray-ops", nargs="*", default=[], help="operators or task directories for the Ray runs")
    ap.add_argument("--ray-workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--after", default="HEAD")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "evolution_sweep.json"))
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cannpilot-evo-sweep-"))
    pch = work / "pch"
    pch.mkdir()
    tree = _export(args.after, work)
    _warm(tree, pch)
    cache = work / "cache"
    (cache / "sim").mkdir(parents=True)
    os.symlink(pch, cache / "sim" / "pch")
    load0 = os.getloadavg()
    local: dict[str, dict] = {}
    for op in args.ops:
        r = local[op] = _session(tree, cache, op, args.rounds, args.variants)
        print(f"local {op:28s} " + (f"error {r['error']}" if "error" in r else
              f"{r['candidates']:3d} cand. {r['per_min']:5.1f}/min best/gen1 {r['best_over_gen1'] or 0:5.2f}x "
              f"HAP {r['best_hap'] if r['best_hap'] is not None else '-'} (est.) to best {r['time_to_best_s'] or 0:6.0f} s"),
              flush=True)
        Path(args.out).with_suffix(".partial.json").write_text(json.dumps({"local": local}, indent=1))
    ray: dict[str, dict[str, dict]] = {}
    for i, n in enumerate(args.ray_workers if args.ray_ops else []):
        rcache = work / f"cache-ray{i}"          # each run builds its own candidates (no warm cache)
        (rcache / "sim").mkdir(parents=True)
        os.symlink(pch, rcache / "sim" / "pch")
        head = RayHead(tree, rcache, n, work / f"ray{i}")
        try:
            for op in args.ray_ops:
                r = _session(tree, rcache, op, args.rounds, args.variants, head.address)
                ray.setdefault(str(n), {})[f"{op}#{i}"] = r
                print(f"ray x{n} {op:28s} " + (f"error {r['error']}" if "error" in r else
                      f"{r['candidates']:3d} cand. {r['per_min']:5.1f}/min"), flush=True)
        finally:
            head.stop()
    ok = [r for r in local.values() if "error" not in r]
    total_c, total_s = sum(r["candidates"] for r in ok), sum(r["wall_s"] for r in ok)
    summary = {"operators": len(args.ops), "sessions_ok": len(ok),
               "median_best_over_gen1": _median([r["best_over_gen1"] for r in ok]),
               "median_best_hap_est": _median([r["best_hap"] for r in ok]),
               "median_speedup_vs_vendor_est": _median([r["speedup_vs_vendor"] for r in ok]),
               "candidates_per_min_whole_run": round(60 * total_c / total_s, 2) if total_s else None,
               "median_time_to_best_s": _median([r["time_to_best_s"] for r in ok]),
               "ray_candidates_per_min": {n: round(60 * sum(r.get("candidates", 0) for r in rs.values())
                                                   / max(1e-9, sum(r.get("wall_s", 0) for r in rs.values())), 2)
                                          for n, rs in ray.items()}}
    doc = {"ops": args.ops, "rounds": args.rounds, "variants": args.variants, "after": args.after,
           "timing": "estimate", "load_before": load0, "load_after": os.getloadavg(), "summary": summary,
           "local": local, "ray": ray}
    Path(args.out).write_text(json.dumps(doc, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
