"""`cannpilot export SESSION|KERNEL ... [--task T ...] --format cann-bench|opp -o DIR`.

Each source is a candidate kernel file (paired in order with a `--task`) or a session name (its
best passing candidate, or `--candidate ID`; the session names its task). One operator per source.
The written project is validated at once; exit 1 when the validator has findings, 2 on bad input,
3 when a candidate or task cannot be exported (the reason is given).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write passing kernels as a CANN-Bench submission or an op project",
                       description="Export candidates as a CANN-Bench submission (build.sh, setup.py, the "
                                   "cann_bench binding, op_host/op_kernel per operator) or a plain custom-"
                                   "operator project, then validate it. The kernel is exported unchanged.")
    p.add_argument("sources", nargs="+", metavar="SESSION|KERNEL",
                   help="a kernel .cpp file or a session name (its best passing candidate)")
    p.add_argument("--task", action="append", default=[],
                   help="the task of each kernel file, in order (built-in name or task directory)")
    p.add_argument("--candidate", default=None, metavar="ID", help="a session's candidate instead of its best")
    p.add_argument("--format", choices=("cann-bench", "opp"), default="cann-bench")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write (empty or an earlier export)")
    p.add_argument("--chip", default=None, help="chip profile the kernels were tuned on (default: the session's, else 910B2)")
    p.add_argument("--soc", default=None, help="SoC the project builds for by default (e.g. ascend910b, ascend950)")
    p.add_argument("--store", metavar="PATH", help="session store file")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def _session_item(name: str, args):
    from copilot.errors import BadInput
    from copilot.export import ExportItem
    from copilot.tasks import load_task
    from sessions import SessionStore, default_store_path
    from sessions.export import best_of, candidate_haps

    store = SessionStore(args.store or default_store_path(), create=False)
    record = store.session_record(name)
    s = record["session"]
    cands = record["candidates"]
    if args.candidate:
        cand = next((c for c in cands if c["id"] == args.candidate), None)
        if cand is None:
            raise BadInput(f"session {name} has no candidate {args.candidate}")
        if cand["status"] != "passed":
            raise BadInput(f"candidate {args.candidate} of session {name} did not pass ({cand['status']}); "
                           "only passing candidates are exported")
    else:
        # The session's reported best (re-validated, ranked by HAP where the task has baselines),
        # else the best passing candidate ranked the same way (a session that never finished).
        cand = next((c for c in cands if c["id"] == s.get("best_id") and c["status"] == "passed"), None) \
            or best_of(cands, candidate_haps(s, cands, store.load_session(name).cases))
        if cand is None:
            raise BadInput(f"session {name} has no passing candidate to export")
    task = load_task(s["task_path"] or s["task"])
    return ExportItem(task, cand["code"], cand["id"], cand["origin"]), s["chip"]


def items_from_args(args):
    from copilot.errors import BadInput
    from copilot.export import ExportItem
    from copilot.tasks import load_task

    kernels = [s for s in args.sources if Path(s).suffix in (".cpp", ".cc", ".cxx") or Path(s).is_file()]
    if len(args.task) != len(kernels):
        raise BadInput(f"{len(kernels)} kernel file(s) and {len(args.task)} --task: give one --task per kernel "
                       "file, in the same order")
    items, chips, tasks = [], [], iter(args.task)
    for src in args.sources:
        if src in kernels:
            path = Path(src)
            if not path.is_file():
                raise BadInput(f"{src}: no such kernel file")
            items.append(ExportItem(load_task(next(tasks)), path.read_text(encoding="utf-8"), path.name, "file"))
        else:
            item, chip = _session_item(src, args)
            items.append(item)
            chips.append(chip)
    return items, args.chip or (chips[0] if chips else "910B2")


def run(args: argparse.Namespace) -> int:
    from copilot.export import export

    items, chip = items_from_args(args)
    result = export(items, args.output, args.format, chip, args.soc)
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"Exported {len(result.specs)} operator(s) as {args.format} to {result.directory}:")
        for s in result.specs:
            print(f"  {s.name}: op type {s.op_type}, task {s.task}, candidate {s.candidate_id or '-'}, "
                  f"kernel sha256 {s.sha256[:16]}")
        from copilot.commands.validate_submission import print_findings

        print_findings(result.findings, result.directory)
    return 1 if result.findings else 0
