"""Issue 24's acceptance table, measured: every red-team attack (tests/redteam/, the modes of
relu_attacks.cpp and diag_erase.cpp included) through `check` (the source scan on), through the evolution evaluator
(the whole cascade), and with the scan off (`build(source_policy=False)` + `run`, the layers behind
it), each against the honest twin (tests/kernels/relu_tail_pad.cpp) on the same case; and whether a
root-only secret, present for the whole sweep, appears in any output. Slow (a full evaluator cascade
per attack that passes the scan); tests/test_redteam.py keeps one attack per layer.

Usage: CANNPILOT_ORACLE_BUDGET_GB=2 nice -n 10 python bench/redteam_table.py [-o OUT.jsonl] [--only a,b]
Emulator times are cost-model ESTIMATES.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-bench-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel, run  # noqa: E402
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.sandbox import Limits  # noqa: E402
from copilot.tasks import Case, load_task  # noqa: E402

build = importlib.import_module("copilot.backends.sim.build").build
REDTEAM = REPO / "tests" / "redteam"
HONEST = REPO / "tests" / "kernels" / "relu_tail_pad.cpp"
SECRET_PATH = Path("/root/cannpilot-redteam-secret.txt")
SECRET = "cp-redteam-SECRET-bench-52c1"
# Files with several attacks: mode = elements / 4096 % 16 (mode 0 is the honest relu)
MODED = {"relu_attacks": {"cost_reset": 1, "event_suppress": 2, "event_hide": 3, "counter_forge": 4,
                          "forged_cost_exit": 5, "cost_params_forge": 6, "pending_forge": 7, "report_injection": 8,
                          "diag_flood": 9, "tamper_rundir": 10, "rival_attack": 11, "slot_forge": 12, "jit_wrpkru": 13},
         "diag_erase": {"erase_error": 1, "glue_fatal": 2, "forge": 3, "group_flood": 4, "shadow": 5}}
MODES = {name: mode for modes in MODED.values() for name, mode in modes.items()}
FILE_OF = {name: stem for stem, modes in MODED.items() for name in modes}
COMPILE_TIME = {"include_secret", "include_dev_zero", "preprocessor_bomb"}   # stopped before a run


def _ids(diags) -> list[str]:
    return sorted({d.id for d in diags})


def _attacks() -> list[tuple[str, Path]]:
    files = [(p.stem, p) for p in sorted(REDTEAM.glob("*.cpp")) if p.stem not in MODED]
    return files + [(m, REDTEAM / f"{FILE_OF[m]}.cpp") for m in MODES]


def _case(relu, name: str):
    base = next(c for c in relu.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)
    if name not in MODES:
        return base
    return Case(id=f"mode-{MODES[name]}", shapes=[(65536 + 4096 * MODES[name],)], dtypes=["float32"], attrs={},
                value_ranges=base.value_ranges)


def _behind_scan(relu, name: str, path: Path, case) -> dict:
    b = build(path, relu, ["float32", "float32"], source_policy=False)
    out = {"built": b.ok, "ids": _ids(b.diagnostics), "text": b.raw_output + json.dumps([d.to_json() for d in b.diagnostics])}
    if not b.ok or name in COMPILE_TIME:
        return out
    inputs = make_inputs(relu, case)
    limits = Limits(wall_seconds=30, memory_bytes=1 << 30) if name == "static_init_fork" else Limits(wall_seconds=240)
    r = run(b, relu, case, inputs, outputs=reference(relu, case, inputs).outputs, limits=limits)
    out.update(ok=r.ok, time_us=r.time_us, ids=_ids(r.diagnostics),
               text=out["text"] + r.stdout + r.extra.get("stderr", "") + json.dumps([d.to_json() for d in r.diagnostics]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--out", type=Path, default=REPO / "bench" / "results" / "redteam_table.jsonl")
    ap.add_argument("--only", default="", help="comma-separated attack names")
    a = ap.parse_args()
    from copilot.events import Candidate
    from copilot.evolution.evaluate import SimEvaluator

    relu = load_task("relu")
    evaluator = SimEvaluator(workdir=Path(tempfile.mkdtemp(prefix="redteam-eval-")))
    if os.geteuid() == 0:
        SECRET_PATH.write_text(f'"{SECRET}"\n')
        os.chmod(SECRET_PATH, 0o600)
    rows, twins, checked, evaluated = [], {}, {}, {}
    try:
        honest_ev = evaluator.evaluate_sync(relu, Candidate(id="honest", code=HONEST.read_text(), round=1, origin="llm"))
        only = {x for x in a.only.split(",") if x}
        for name, path in _attacks():
            if only and name not in only:
                continue
            t0 = time.perf_counter()
            case = _case(relu, name)
            if case.id not in twins:
                hb = build(HONEST, relu, ["float32", "float32"])
                inputs = make_inputs(relu, case)
                twins[case.id] = run(hb, relu, case, inputs, outputs=reference(relu, case, inputs).outputs).time_us
            # the modes share one file: one check (of the task's first small float32 case, 65536
            # elements: mode 0, the honest relu), one evaluation (the task's own lengths pick the modes)
            if path not in checked:
                rep = check_kernel(path, relu, cases=_case(relu, "").id if name in MODES else case.id)
                checked[path] = {"compiled": rep.compiled, "correct": rep.correct, "ids": _ids(rep.diagnostics),
                                 "text": json.dumps(rep.to_json())}
                ev = evaluator.evaluate_sync(relu, Candidate(id=name, code=path.read_text(), round=1, origin="llm"))
                evaluated[path] = {"status": ev.status, "time_us": ev.time_us,
                                   "text": json.dumps([c for c in ev.cases], default=str)}
            behind = _behind_scan(relu, name, path, case)
            text = checked[path]["text"] + evaluated[path]["text"] + behind.pop("text")
            row = {"attack": name, "file": path.name, "case": case.id, "twin_us": twins[case.id],
                   "check": {k: v for k, v in checked[path].items() if k != "text"},
                   "evaluator": {k: v for k, v in evaluated[path].items() if k != "text"},
                   "evaluator_twin_us": honest_ev.time_us, "behind_scan": behind,
                   "secret_seen": SECRET in text, "seconds": round(time.perf_counter() - t0, 1)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        SECRET_PATH.unlink(missing_ok=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print("| attack | check | evaluator | behind the scan | vs twin (est. us) | secret |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        c, e, b = r["check"], r["evaluator"], r["behind_scan"]
        chk = ",".join(c["ids"]) or ("correct" if c["correct"] else "incorrect")
        evs = e["status"] + (f" {e['time_us']:.2f}" if e["time_us"] else "")
        beh = ",".join(b["ids"]) or ("ok" if b.get("ok") else "-")
        vs = f"{b['time_us']:.2f} vs {r['twin_us']:.2f}" if b.get("time_us") else "no estimate"
        print(f"| {r['attack']} | {chk} | {evs} | {beh} | {vs} | {'LEAKED' if r['secret_seen'] else 'no'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
