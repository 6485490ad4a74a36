"""How fast offline evolution evaluates candidates: candidates per minute over whole sessions and
the split of one candidate's evaluation (build / correctness runs / performance runs / Python).

    .venv/bin/python bench/evolution_speed.py [--tasks rms_norm softmax gelu] [--rounds 2] [--variants 4]
        [--after HEAD] [--before COMMIT] [--out bench/results/evolution_speed.json]
    .venv/bin/python bench/evolution_speed.py --builds 2 --tasks rms_norm --before COMMIT
    .venv/bin/python bench/evolution_speed.py --children 1 --tasks TASK_DIR ... --before COMMIT

`--children RUNS`: one evaluation (the cascade: builds, correctness tier, performance cases) of
generation 1 and of three children that change only `tile_elems`, per tree and task, RUNS times,
interleaved, each with an empty build cache: the split of one candidate before and after.

`--builds RUNS`: only the builds (every dtype combination the evaluator's correctness and
performance cases need) of the lowered kernel and of three children that change only
`tile_elems`, each tree RUNS times, interleaved, with an empty build cache per run.

Each session runs the offline agent (`cannpilot run --agent offline`, auto decisions) in its own
process with an empty build cache (the precompiled headers and the launcher object of each tree
are built before timing and shared by its sessions). The trees are commits exported with
`git archive` (read-only; `--after` defaults to HEAD), so headers other engineers edit in the
working tree do not invalidate the caches mid-run. `--before COMMIT` runs that commit's tree on
the same tasks, interleaved with the other, so the two are compared within one run on the same
machine load; read the ratios. "Candidates" are the evaluated ones
(duplicates and proposals without code are not); the session's wall time includes the baseline,
the lowering and the winner's confirmation. Emulator times are cost-model ESTIMATES.

The split wraps the evaluator's pieces: build = the evaluation's `build_seconds` (the builds of
every dtype combination), correctness = the `sim.run` calls of the correctness tier, performance
= the timed performance cases (`timed_case`), Python = the rest of the evaluation (oracle
references, judging, cascade bookkeeping). Lowering (the agent) is outside the evaluation.
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

# Runs inside the child process: one session of one tree, figures as one JSON line on stdout.
CHILD = r'''
import asyncio, json, sys, threading, time
from collections import defaultdict
task_name, rounds, variants = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
import copilot.backends.sim as sim
import copilot.backends.sim.integrity as integrity
from copilot.agents import offline
from copilot.evolution import evaluate
from copilot.evolution.session import SessionConfig, new_engine
from copilot.tasks import load_task

local = threading.local()
per_eval = []
lower_s = [0.0]

def wrap(owner, name, label):
    f = getattr(owner, name)
    def timed(*a, **k):
        t = time.perf_counter()
        outer = getattr(local, "in_timed", False)
        if label == "performance":
            local.in_timed = True
        try:
            return f(*a, **k)
        finally:
            dt = time.perf_counter() - t
            if label == "performance":
                local.in_timed = outer
            acc = getattr(local, "acc", None)
            if acc is not None and not (label == "correctness" and getattr(local, "in_timed", False)):
                acc[label] += dt
    setattr(owner, name, timed)

wrap(sim, "run", "correctness")
wrap(integrity, "timed_case", "performance")
f_eval = evaluate.SimEvaluator.evaluate_sync
def evaluate_sync(self, task, cand):
    local.acc = defaultdict(float)
    t = time.perf_counter()
    ev = f_eval(self, task, cand)
    wall = time.perf_counter() - t
    acc, local.acc = local.acc, None
    if wall > 0.05:        # not a cache hit
        per_eval.append({"wall": wall, "build": ev.build_seconds, "correctness": acc["correctness"],
                         "performance": acc["performance"], "status": ev.status})
    return ev
evaluate.SimEvaluator.evaluate_sync = evaluate_sync
f_lower = offline.OfflineAgent._lower
def _lower(task, chip, knobs):
    t = time.perf_counter()
    try:
        return f_lower(task, chip, knobs)
    finally:
        lower_s[0] += time.perf_counter() - t
offline.OfflineAgent._lower = staticmethod(_lower)

if len(sys.argv) > 4:          # --children: generation 1 and tiling-only children, no session
    from pathlib import Path
    from copilot.events import Candidate
    from copilot.lowering import default_knobs, lower
    task = load_task(task_name)
    ev = evaluate.SimEvaluator(workdir=Path(sys.argv[4]))
    out = []
    for knobs in [{}] + [{"tile_elems": te} for te in (8192, 4096, 2048)][:max(0, int(sys.argv[5]))]:
        code = lower(task, knobs={**default_knobs(task), **knobs}).source
        n = len(per_eval)
        e = ev.evaluate_sync(task, Candidate(id=str(knobs), code=code, round=1, origin="offline"))
        out.append({"knobs": knobs, "status": e.status, "time_us": e.time_us, **(per_eval[n] if len(per_eval) > n else {})})
    print(json.dumps(out))
    raise SystemExit(0)

class Sink:
    def __init__(self): self.events = []
    def emit(self, e): self.events.append(e)

sink = Sink()
cfg = SessionConfig(task=load_task(task_name), agent="offline", rounds=rounds, variants=variants, name="bench")
t0 = time.perf_counter()
engine = new_engine(cfg, [sink])
result = asyncio.run(engine.run())
wall = time.perf_counter() - t0
evaluated = [e for e in sink.events if e.kind == "candidate_evaluated"
             and e.status not in ("rejected_duplicate", "no_code")]
best = result.best
first = [c for c in result.population.passing() if c.round == 1]
gen1 = min((c.time_us for c in first if c.time_us), default=None)
print(json.dumps({"task": task_name, "wall_s": wall, "candidates": len(evaluated),
                  "passed": sum(e.status == "passed" for e in evaluated),
                  "per_min": 60 * len(evaluated) / wall, "lower_s": lower_s[0], "evals": per_eval,
                  "best_us": best.time_us if best else None, "gen1_us": gen1}))
'''


# --builds: the builds of one candidate per knob setting, nothing else (a child per tree and run).
BUILDS_CHILD = r'''
import json, sys, time
from copilot.backends import sim
from copilot.costmodel.estimate import output_shapes
from copilot.evolution.evaluate import SimEvaluator
from copilot.tasks import load_task, select_cases
task = load_task(sys.argv[1])
sources = json.loads(open(sys.argv[2]).read())
ev = SimEvaluator(workdir=__import__("pathlib").Path(sys.argv[3]))
cases = ev.correctness_cases(task) + select_cases(task, "perf")
out = []
for i, code in enumerate(sources):
    from copilot.events import Candidate
    cand = Candidate(id=f"c{i}", code=code, round=1, origin="offline")
    t = time.perf_counter()
    if hasattr(ev, "_build_all"):          # this tree: every combination at once
        builds, _ = ev._build_all(task, ev._source(task, cand), cases)
        ok = all(b.ok for b in builds.values())
    else:                                  # the cascade before: one combination after another
        path = ev.workdir / f"{task.name}-{i}.cpp"
        path.write_text(code)
        combos = list(dict.fromkeys(tuple(c.dtypes) + tuple(o.dtype for o in output_shapes(task, c)) for c in cases))
        ok = all(sim.build(path, task, list(k), ev.chip).ok for k in combos)
    out.append({"seconds": time.perf_counter() - t, "ok": ok})
print(json.dumps(out))
'''


def _builds(trees: dict[str, Path], task: str, runs: int, work: Path, pch: Path) -> dict:
    """Wall seconds of the builds of a parent and its tiling-knob children, per tree, interleaved."""
    sys.path.insert(0, str(trees["after"]))
    from copilot.lowering import default_knobs, lower
    from copilot.tasks import load_task

    t = load_task(task)
    sources = [lower(t, knobs={**default_knobs(t), "tile_elems": te}).source for te in (0, 8192, 4096, 2048)]
    src = work / f"{task}-sources.json"
    src.write_text(json.dumps(sources))
    samples: dict[str, list] = {name: [] for name in trees}
    for r in range(runs):
        for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
            cache = work / f"bcache-{name}-{r}"
            (cache / "sim").mkdir(parents=True)
            os.symlink(pch, cache / "sim" / "pch")
            env = {**os.environ, "CANNPILOT_CACHE": str(cache), "PYTHONPATH": str(trees[name])}
            proc = subprocess.run(["nice", "-n", "10", sys.executable, "-c", BUILDS_CHILD, task, str(src),
                                   str(cache / "cands")], cwd=trees[name], env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"builds in {name} failed: {proc.stderr[-2000:]}")
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            samples[name].append(got)
            print(f"builds {name:6s} run {r}: " + " ".join(f"{g['seconds']:.1f}" for g in got) + " s "
                  f"(parent, then 3 children with other tile_elems)", flush=True)
    return {name: {"parent_s": round(statistics.median(x[0]["seconds"] for x in xs), 2),
                   "child_s": round(statistics.median(g["seconds"] for x in xs for g in x[1:]), 2),
                   "all_ok": all(g["ok"] for x in xs for g in x)} for name, xs in samples.items()}


def _children(trees: dict[str, Path], tasks: list[str], runs: int, n: int, work: Path, pch: Path) -> dict:
    """Per tree: one evaluation of generation 1 and of `n` children that change only tile_elems,
    each tree `runs` times per task, interleaved, each run with an empty build cache and workdir."""
    samples: dict[str, list] = {name: [] for name in trees}
    for task in tasks:
        for r in range(runs):
            for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
                cache = work / f"ccache-{name}-{Path(task).name}-{r}"
                (cache / "sim").mkdir(parents=True)
                os.symlink(pch, cache / "sim" / "pch")
                env = {**os.environ, "CANNPILOT_CACHE": str(cache), "PYTHONPATH": str(trees[name])}
                proc = subprocess.run([sys.executable, "-c", CHILD, task, "0", "0", str(cache / "cands"), str(n)],
                                      cwd=trees[name], env=env, capture_output=True, text=True)
                if proc.returncode != 0:
                    raise SystemExit(f"children in {name} failed: {proc.stderr[-2000:]}")
                got = json.loads(proc.stdout.strip().splitlines()[-1])
                samples[name].append({"task": task, "evals": got, "load": os.getloadavg()[0]})
                print(f"children {name:6s} {Path(task).name:10s} run {r} load {os.getloadavg()[0]:.0f}: "
                      + " | ".join(f"{g['status']} {g.get('wall', 0):.1f} s (build {g.get('build', 0):.1f}, corr "
                                   f"{g.get('correctness', 0):.1f}, perf {g.get('performance', 0):.1f})" for g in got),
                      flush=True)
    out = {}
    for name, xs in samples.items():
        kids = [g for x in xs for g in x["evals"][1:]]
        out[name] = {"gen1_split_median_s": _split([x["evals"][0] for x in xs]),
                     "child_split_median_s": _split(kids),
                     "children_per_min_one_process": round(60 * len(kids) / sum(g["wall"] for g in kids), 2) if kids else None}
    if "before" in out and out["before"]["child_split_median_s"]:
        out["child_wall_ratio_before_over_after"] = round(out["before"]["child_split_median_s"]["wall"]
                                                          / out["after"]["child_split_median_s"]["wall"], 2)
    return {"samples": samples, "summary": out}


def _export(commit: str, into: Path) -> Path:
    commit = subprocess.run(["git", "rev-parse", commit], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    tree = into / f"tree-{commit[:10]}"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def _warm(tree: Path, pch: Path) -> None:
    """The tree's precompiled headers and launcher object, built into the shared `pch` directory."""
    code = ("import importlib; from copilot.chips import load_chip; b = importlib.import_module("
            "'copilot.backends.sim.build'); c = load_chip('910B2'); b.ensure_pch(c); b.ensure_harness_object(c)")
    cache = pch.parent / f"warm-{tree.name}"
    (cache / "sim").mkdir(parents=True)
    os.symlink(pch, cache / "sim" / "pch")
    subprocess.run([sys.executable, "-c", code], cwd=tree, check=True,
                   env={**os.environ, "CANNPILOT_CACHE": str(cache), "PYTHONPATH": str(tree)})


def _session(tree: Path, task: str, rounds: int, variants: int, cache: Path, pch: Path) -> dict:
    cache.mkdir(parents=True)
    (cache / "sim").mkdir()
    os.symlink(pch, cache / "sim" / "pch")
    env = {**os.environ, "CANNPILOT_CACHE": str(cache), "PYTHONPATH": str(tree)}
    proc = subprocess.run(["nice", "-n", "10", sys.executable, "-c", CHILD, task, str(rounds), str(variants)],
                          cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"session {task} in {tree} failed: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _split(evals: list[dict]) -> dict:
    if not evals:
        return {}
    out = {k: statistics.median(e[k] for e in evals) for k in ("wall", "build", "correctness", "performance")}
    out["python"] = statistics.median(e["wall"] - e["build"] - e["correctness"] - e["performance"] for e in evals)
    return {k: round(v, 2) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=["rms_norm", "softmax", "gelu"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--after", default="HEAD", help="the commit measured (its tree, exported read-only)")
    ap.add_argument("--before", help="a commit to compare with (its tree, exported read-only)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "evolution_speed.json"))
    ap.add_argument("--builds", type=int, default=0, metavar="RUNS",
                    help="only the builds of a parent and three tiling-knob children, RUNS times per tree")
    ap.add_argument("--children", type=int, default=0, metavar="RUNS",
                    help="only evaluations of generation 1 and 3 tiling-only children, RUNS times per tree and task")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cannpilot-evo-speed-"))
    pch = work / "pch"
    pch.mkdir()
    trees = {"after": _export(args.after, work)}
    if args.before:
        trees = {"before": _export(args.before, work), **trees}
    for tree in trees.values():
        _warm(tree, pch)
    if args.children:
        doc = {"tasks": args.tasks, "before": args.before, "after": args.after, "load_before": os.getloadavg(),
               "timing": "estimate", **_children(trees, args.tasks, args.children, 3, work, pch)}
        doc["load_after"] = os.getloadavg()
        Path(args.out).write_text(json.dumps(doc, indent=1))
        print(json.dumps(doc["summary"], indent=1))
        return
    if args.builds:
        doc = {"task": args.tasks[0], "before": args.before, "after": args.after, "load_before": os.getloadavg(),
               "builds": _builds(trees, args.tasks[0], args.builds, work, pch)}
        doc["load_after"] = os.getloadavg()
        Path(args.out).write_text(json.dumps(doc, indent=1))
        print(json.dumps(doc, indent=1))
        return
    load = os.getloadavg()
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for i, task in enumerate(args.tasks):
        order = list(trees) if i % 2 == 0 else list(reversed(trees))
        for name in order:
            r = _session(trees[name], task, args.rounds, args.variants, work / f"cache-{name}-{Path(task).name}", pch)
            runs[name].append(r)
            print(f"{name:6s} {task:14s} {r['candidates']:3d} candidates in {r['wall_s']:7.1f} s = "
                  f"{r['per_min']:5.1f}/min; split {_split(r['evals'])}", flush=True)
    summary = {}
    for name, rs in runs.items():
        total_c, total_s = sum(r["candidates"] for r in rs), sum(r["wall_s"] for r in rs)
        summary[name] = {"candidates": total_c, "wall_s": round(total_s, 1),
                         "per_min_whole_run": round(60 * total_c / total_s, 2),
                         "per_min_median_session": round(statistics.median(r["per_min"] for r in rs), 2),
                         "split_median_s": _split([e for r in rs for e in r["evals"]])}
    if "before" in summary:
        summary["ratio_per_min_after_over_before"] = round(summary["after"]["per_min_whole_run"]
                                                           / summary["before"]["per_min_whole_run"], 2)
    doc = {"tasks": args.tasks, "rounds": args.rounds, "variants": args.variants, "before": args.before,
           "after": args.after,
           "load_before": load, "load_after": os.getloadavg(), "timing": "estimate", "summary": summary, "runs": runs}
    Path(args.out).write_text(json.dumps(doc, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
