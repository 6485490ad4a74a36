"""Size of the kernels the lowering agent writes: lines and tokens of the lowered source per task,
over the built-in tasks and the CANN-Bench public tasks that lower, with the median and total.

    nice -n 10 .venv/bin/python bench/lowered_size.py [--json OUT.json] [--save-dir DIR] [--only NAMES]

Tokens: tiktoken's cl100k_base when its encoding is available offline, else a count of identifier,
number and punctuation runs (the `tokenizer` field of the JSON says which). Tasks that do not lower
(Unsupported) are listed with their reason and left out of the figures. --save-dir writes each
source as <task>.cpp, so two trees' kernels can be diffed.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH = ROOT.parent / "shared" / "cannbench" / "tasks"


def token_counter():
    try:
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base")
        return "cl100k_base", lambda s: len(enc.encode(s))
    except Exception:   # no offline encoding file: fall back to a lexical count
        rx = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?[fFuU]*|\S")
        return "lexical", lambda s: len(rx.findall(s))


def task_refs() -> list[str]:
    from copilot.tasks import builtin_names

    refs = list(builtin_names())
    if BENCH.is_dir():
        refs += [str(p) for lv in sorted(BENCH.glob("level*")) for p in sorted(lv.iterdir())
                 if (p / "golden.py").exists()]
    return refs


def label(ref: str) -> str:
    p = Path(ref)
    return f"{p.parent.name}/{p.name}" if p.is_absolute() else ref


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--save-dir", type=Path)
    ap.add_argument("--only", help="comma-separated task labels (builtin name or levelN/op)")
    a = ap.parse_args()
    from copilot.errors import Unsupported
    from copilot.lowering import lower

    tokenizer, count = token_counter()
    refs = task_refs()
    if a.only:
        want = set(a.only.split(","))
        refs = [r for r in refs if label(r) in want]
    rows, refused = [], []
    for ref in refs:
        try:
            k = lower(ref)
        except Unsupported as e:
            refused.append({"task": label(ref), "reason": str(e).splitlines()[0][:160]})
            continue
        except Exception as e:   # a task the lowering cannot read is reported, not fatal
            refused.append({"task": label(ref), "reason": f"{type(e).__name__}: {str(e)[:140]}"})
            continue
        src = k.source
        rows.append({"task": label(ref), "pattern": k.pattern, "lines": src.count("\n"), "tokens": count(src)})
        if a.save_dir:
            a.save_dir.mkdir(parents=True, exist_ok=True)
            (a.save_dir / (label(ref).replace("/", "__") + ".cpp")).write_text(src)
        print(f"{label(ref):44s} {k.pattern:14s} {rows[-1]['lines']:6d} lines {rows[-1]['tokens']:7d} tokens",
              flush=True)
    summary = {"tokenizer": tokenizer, "kernels": len(rows), "refused": len(refused)}
    for key in ("lines", "tokens"):
        vals = [r[key] for r in rows]
        summary[f"{key}_median"] = statistics.median(vals) if vals else 0
        summary[f"{key}_total"] = sum(vals)
    print(f"{len(rows)} kernels ({len(refused)} refused), tokenizer {tokenizer}: lines median "
          f"{summary['lines_median']} total {summary['lines_total']}; tokens median {summary['tokens_median']} "
          f"total {summary['tokens_total']}")
    if a.json:
        a.json.write_text(json.dumps({"summary": summary, "rows": rows, "refused": refused}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
