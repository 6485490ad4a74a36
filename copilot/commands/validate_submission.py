"""`cannpilot validate-submission DIR [--task T ...] [--json]`: the CANN-Bench submission rules that
can be checked without a chip, every finding at once. Exit 0 when nothing is found, 1 otherwise."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate-submission", help="check a CANN-Bench submission against the public rules",
                       description="Check structure and interface (EVAL-CANN-001/002/005, AUTO-CANN-001/002) "
                                   "and read the binding for SUB-BEH-001..003 and 005..007 (no torch compute, "
                                   "no tensor transforms, no routing to built-in operators, real tensors). "
                                   "Rules that need the chip are not checked here.")
    p.add_argument("directory", metavar="DIR", help="the submission root")
    p.add_argument("--task", action="append", default=[],
                   help="a task the interface must serve (default: the operators in the export manifest)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def print_findings(findings, directory) -> None:
    if not findings:
        print(f"{directory}: no finding (the rules that need an NPU are not checked here)")
        return
    print(f"{directory}: {len(findings)} finding(s)")
    for f in findings:
        print(f"  {f.rule}  {f.location}\n      expected {f.expected}\n      found    {f.actual}\n"
              f"      fix      {f.hint}")


def run(args: argparse.Namespace) -> int:
    from copilot.export.validate import validate
    from copilot.tasks import load_task

    tasks = [load_task(t) for t in args.task]
    findings = validate(args.directory, tasks or None)
    if args.json:
        json.dump({"directory": args.directory, "valid": not findings,
                   "findings": [f.to_json() for f in findings]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_findings(findings, args.directory)
    return 1 if findings else 0
