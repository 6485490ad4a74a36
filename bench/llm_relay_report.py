"""Per-operator figures of LLM sessions run against a relayed model (issue 21, deliverable 6).

For each session of the store: its export (`cannpilot sessions export`), its generation-1 kernel
(`r0-base`) and, for an evolution session, its best kernel; the generation-1 kernel checked on
every public case (`cannpilot check --cases all --chip 910B2 --json`); then requests, tokens
(the store's, compared with what `run --json` printed when its output is given), tool turns and
repairs (from the recorded LLM calls), public cases passed, the mean HAP and est/baseline
geomean over the passing cases (cost-model ESTIMATES against `metadata/910b2.json`), and the
best/generation-1 ratio of an evolution session.

    python bench/llm_relay_report.py --store S.sqlite --out bench/results/llm \
        --run-json DIR SESSION [SESSION ...]

A check already written (`<out>/<session>/gen1-check.json`) is reused; `--jobs` checks run at once;
`--no-check` skips it (an evolution resumed from a session whose generation 1 was checked there, or
a task checked case by case); single-case checks in `<session>/cases/case-N.json` and
`<session>/judge-N.json` replace their rows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def cli(*args: str, out: Path | None = None) -> int:
    cmd = [sys.executable, "-m", "copilot.cli", *args]
    with open(out, "w") if out else open(os.devnull, "w") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL, cwd=REPO).returncode


def export(store: str, name: str, out: Path) -> dict:
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    cli("sessions", "--store", store, "export", name, "-o", str(d))
    doc = json.loads((d / "session.json").read_text())
    cands = {c["id"]: c for c in doc["candidates"]}
    if "r0-base" in cands and not (d / "kernels" / "r0-base.cpp").exists():   # the export has no failed kernel
        (d / "gen1.cpp").write_text(cands["r0-base"]["code"])
    best = doc["session"].get("best_id")
    if best and best != "r0-base" and best in cands:
        (d / "best.cpp").write_text(cands[best]["code"])
    return doc


def merged(d: Path, rep: dict | None) -> dict | None:
    """The check with the single-case checks of the session's directory in place of its rows:
    `cases/case-N.json` (a task checked case by case) and `judge-N.json` (a case over the 2 GB
    oracle budget judged alone with a larger one)."""
    singles = sorted(d.glob("cases/case-*.json")) + sorted(d.glob("judge-*.json"))
    rows = {str(c["id"]): c for c in (rep or {}).get("cases", [])}
    for f in singles:
        try:
            rows.update({str(c["id"]): c for c in json.loads(f.read_text())["cases"]})
        except (json.JSONDecodeError, KeyError, OSError):
            continue            # a check that was killed leaves an empty file: its case stays as it was
    if not rows:
        return rep
    return dict(rep or {}, cases=sorted(rows.values(), key=lambda c: int(str(c["id"]).rstrip("q") or 0)))


def check(d: Path, task_path: str) -> dict | None:
    k, rep = d / "gen1.cpp", d / "gen1-check.json"
    if not k.exists():
        k = d / "kernels" / "r0-base.cpp"
    if not k.exists():
        return None
    if not rep.exists() or not rep.read_text().strip():
        tmp = rep.with_suffix(".tmp")
        cli("check", str(k), "--task", task_path, "--cases", "all", "--chip", "910B2", "--json", out=tmp)
        tmp.replace(rep)
    try:
        return json.loads(rep.read_text())
    except json.JSONDecodeError:
        return None


def summarize(doc: dict, rep: dict | None, run_json: dict | None) -> dict:
    from copilot.scoring import hap, task_baselines

    s = doc["session"]
    calls = doc["llm_calls"]
    cands = {c["id"]: c for c in doc["candidates"]}
    row = {"session": s["name"], "task": s["task_path"], "status": s["status"], "requests": s["llm_calls"],
           "tool_turns": sum(1 for c in calls if c["phase"] == "init"),
           "repairs": sum(1 for c in calls if c["phase"] == "repair"),
           "variants": sum(1 for c in calls if c["phase"] == "mutation"),
           "tokens": s["prompt_tokens"] + s["completion_tokens"],
           "tokens_run_json": run_json.get("tokens") if run_json else None}
    base = cands.get("r0-base")
    row["gen1_status"] = base["status"] if base else "none"
    row["gen1_est_us"] = base["time_us"] if base else None
    if rep is not None:
        bl = task_baselines(s["task_path"], "910B2")
        cases = rep["cases"]
        ok = [c for c in cases if c["passed"]]
        timed = [(c["est_us"], bl[str(c["id"])]) for c in ok if c.get("est_us") and str(c["id"]) in bl]
        ratios = [t / b.baseline_us for t, b in timed]
        row.update(public_passed=len(ok), public_cases=len(cases),
                   fails={str(c["id"]): c["failure_class"] for c in cases if not c["passed"]},
                   hap_est=sum(hap(t, b) for t, b in timed) / len(timed) if timed else None,
                   est_over_baseline=math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None)
    passing = [c for c in cands.values() if c["status"] == "passed" and c.get("time_us")]
    evolved = s["settings"].get("rounds", 0) > 0 or any(c.get("round", 0) > 0 for c in cands.values())
    if base and base.get("time_us") and evolved and passing:   # a resumed session keeps rounds 0 in its settings
        best = min(passing, key=lambda c: c["time_us"])
        row.update(best_id=best["id"], best_est_us=best["time_us"], best_over_gen1=base["time_us"] / best["time_us"])
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sessions", nargs="+")
    ap.add_argument("--store", required=True)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "llm"))
    ap.add_argument("--run-json", help="directory holding <session>.json as `run --json` printed it")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-check", action="store_true",
                    help="no public check (an evolution resumed from a session whose generation 1 was checked)")
    ap.add_argument("--summary", default="summary.json", help="file name of the summary in --out")
    args = ap.parse_args()
    out = Path(args.out)
    docs = {n: export(args.store, n, out) for n in args.sessions}
    with ThreadPoolExecutor(args.jobs) as pool:
        reps = dict(zip(docs, pool.map(lambda n: merged(out / n, None if args.no_check else
                                                    check(out / n, docs[n]["session"]["task_path"])), docs)))
    rows = []
    for n, doc in docs.items():
        rj = None
        if args.run_json and (Path(args.run_json) / f"{n}.json").exists():
            try:
                rj = json.loads((Path(args.run_json) / f"{n}.json").read_text())
            except json.JSONDecodeError:
                rj = None
        rows.append(summarize(doc, reps[n], rj))
    (out / args.summary).write_text(json.dumps(rows, indent=1) + "\n")
    for r in rows:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
