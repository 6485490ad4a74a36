"""`cannpilot lower --task T [--chip C] [--knob name=value ...] [-o FILE]`: the built-in lowering
agent. The kernel goes to stdout (nothing else does) or to FILE; notes go to stderr.
Exit 0; 3 when the task (or a knob combination) is unsupported; 2 for a bad task or knob."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lower", help="compile a task's PyTorch golden into an AscendC kernel",
                       description="Lower the task's golden (traced with torch.fx) into one AscendC "
                                   "candidate file that serves every case of the task.")
    p.add_argument("--task", required=True, help="built-in task name or task directory")
    p.add_argument("--chip", default="910B2", help="chip profile (default 910B2)")
    p.add_argument("--knob", action="append", default=[], metavar="NAME=VALUE",
                   help="set a lowering knob (repeatable); see docs/lowering.md")
    p.add_argument("-o", "--output", metavar="FILE", help="write the kernel here instead of stdout")
    p.add_argument("--no-cache", action="store_true",
                   help="lower afresh: neither read nor write the lowered-kernel cache")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from copilot.lowering import kernel_cache, parse_knob

    knobs = dict(parse_knob(k) for k in args.knob)
    key = None if args.no_cache else kernel_cache.key(args.task, args.chip, knobs)
    entry = kernel_cache.load(key) if key else None
    if entry is not None:        # the same task files, chip, knobs, code and torch: the same kernel
        source, pattern, notes = entry["source"], entry["pattern"], entry["notes"]
        notes = notes + [f"from the lowered-kernel cache ({kernel_cache.cache_root()}; --no-cache lowers afresh)"]
    else:
        from copilot.lowering import lower

        kernel = lower(args.task, chip=args.chip, knobs=knobs)
        if key:
            kernel_cache.store(key, kernel)
        source, pattern, notes = kernel.source, kernel.pattern, kernel.notes
    for note in notes:
        print(f"cannpilot lower: {note}", file=sys.stderr)
    if args.output:
        from copilot.atomic import atomic_write_text

        path = Path(args.output)
        atomic_write_text(path, source)
        print(f"cannpilot lower: wrote {path} ({pattern})", file=sys.stderr)
    else:
        sys.stdout.write(source)
    return 0
