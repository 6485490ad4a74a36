"""How many public-case failures the quick tier catches, before and after the twins.

For each public CANN-Bench operator the lowering agent serves, the lowered kernel and mutants of it
(each a bug a hand-written kernel has: an unaligned tail not stored, inf clamped away, the tail
cores' offset wrong when the work does not split evenly) are run on the sim backend on
- the old quick tier (cases of at most 1M elements),
- the new correctness tier (the quick tier and the twins of the larger cases: `select_cases(task, "twins")`,
  what the evolution's correctness stage runs for a task that is not built in),
- the public cases up to `--max-elements` (the truth the tiers stand for).
A kernel that fails a public case should fail its tier: the share that does is the catch rate.

    nice -n 10 .venv/bin/python bench/quick_tier_catch.py [--ops exp,gelu] [--max-elements 8000000]

Correctness runs only (no timing): the emulator is the judge, no cost-model figure is involved.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO.parent / "shared" / "cannbench" / "tasks"
OPS = ("level1/exp", "level1/gelu", "level1/mish", "level1/sigmoid", "level1/swi_glu", "level1/masked_scale",
       "level2/softmax", "level2/apply_adam_w", "level2/dynamic_quant", "level2/group_norm",
       "level2/rms_norm", "level3/add_rms_norm_dynamic_quant")

# (name, what the bug is, pattern, replacement): applied to the lowered source; a mutant whose
# pattern is absent is reported as not applicable.
MUTANTS = (
    ("tail", "stores each row rounded down to whole 32 B blocks (an unaligned tail is not written)",
     re.compile(r"(DataCopyExtParams p\{static_cast<uint16_t>\(nr\), )static_cast<uint32_t>\(cw \* sizeof\((DTYPE_\w+)\)\)"),
     r"\1static_cast<uint32_t>((cw * sizeof(\2)) / 32 * 32)"),
    ("inf", "clamps the output to the fp16 range before the store (inf becomes finite)",
     re.compile(r"(__aicore__ inline void StoreOut0\(const LocalTensor<float>& src, uint32_t n\)\n    \{\n)"),
     r"\1        Maxs(src, src, -65504.0f, n);\n        Mins(src, src, 65504.0f, n);\n"),
    ("split", "tail cores start at the former cores' stride (wrong when the units do not split evenly)",
     re.compile(r"\(blockIdx - td_\.formerNum\) \* td_\.tailUnits"),
     "(blockIdx - td_.formerNum) * td_.formerUnits"),
)


def _judge(ev, task, cases, path) -> dict[str, str]:
    """case id -> pass | fail | unjudged | build_failed, every case run (no early stop)."""
    from copilot.oracle import CaseTooLarge

    builds: dict = {}
    out = {}
    for case in cases:
        rows: list = []
        try:
            failed, _ = ev._judge(task, case, builds, path, rows, [])
        except CaseTooLarge:
            out[case.id] = "unjudged"
            continue
        if failed is not None and failed.status == "build_failed":
            out[case.id] = "build_failed"
        else:
            out[case.id] = "pass" if failed is None else "fail"
    return out


def _catches(public_fail: list[str], tier: dict[str, str], own: bool) -> int:
    """Failing public cases caught: by any failure of the tier (own=False) or by the failure of
    the case itself or its own twin (own=True)."""
    if not public_fail:
        return 0
    if not own:
        return len(public_fail) if "fail" in tier.values() else 0
    return sum(1 for c in public_fail if tier.get(c) == "fail" or tier.get(f"{c}q") == "fail")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", help="comma-separated task names (default: every operator the lowering serves)")
    ap.add_argument("--max-elements", type=int, default=8_000_000, help="public cases up to this size are run")
    ap.add_argument("--chip", default="910B2")
    ap.add_argument("-o", default=str(REPO / "bench" / "results" / "quick_tier_catch.json"))
    args = ap.parse_args(argv)
    if not SUITE.is_dir():
        print(f"{SUITE}: the public CANN-Bench tasks are not there", file=sys.stderr)
        return 2
    from copilot.evolution.evaluate import SimEvaluator
    from copilot.lowering import lower
    from copilot.tasks import load_task, select_cases

    by_name = {o.split("/")[1]: o for o in OPS}
    ops = [by_name[n] for n in args.ops.split(",") if n in by_name] if args.ops else list(OPS)
    rows = []
    work = Path(tempfile.mkdtemp(prefix="quick-catch-"))
    for ref in ops:
        task = load_task(SUITE / ref)
        try:
            source = lower(task, args.chip).source
        except Exception as exc:        # noqa: BLE001 - a task that does not lower is reported
            rows.append({"task": task.name, "variant": "lowered", "error": f"does not lower: {exc}"})
            continue
        ev = SimEvaluator(chip=args.chip, workdir=work)
        quick = select_cases(task, "quick")
        tier = ev.correctness_cases(task)
        # the public cases up to the cap, and the quick tier's own (it may hold one above the cap)
        public = [c for c in task.cases if c.total_numel <= args.max_elements or c in quick]
        variants = [("lowered", "the lowering agent's kernel", source)]
        for name, why, pattern, repl in MUTANTS:
            mutated, n = pattern.subn(repl, source)
            variants.append((name, why, mutated if n else None))
        for name, why, code in variants:
            row = {"task": task.name, "variant": name, "bug": why}
            rows.append(row)
            if code is None:
                row["error"] = "not applicable (the pattern is not in this kernel)"
                continue
            path = work / f"{task.name}-{name}.cpp"
            path.write_text(code)
            t0 = time.perf_counter()
            row["tier"] = _judge(ev, task, tier, path)
            row["public"] = _judge(ev, task, public, path)
            row["seconds"] = round(time.perf_counter() - t0, 1)
            if "build_failed" in row["tier"].values():
                row["error"] = "does not build"
                continue
            quick_ids = {c.id for c in quick}
            row["quick"] = {k: v for k, v in row["tier"].items() if k in quick_ids}
            fail = sorted((k for k, v in row["public"].items() if v == "fail"), key=lambda s: int(s) if s.isdigit() else 0)
            row["public_failed"] = fail
            row["caught_by_quick"] = _catches(fail, row["quick"], own=False)
            row["caught_by_twins"] = _catches(fail, row["tier"], own=False)
            row["caught_own_twin"] = _catches(fail, row["tier"], own=True)
            print(f"{task.name:28} {name:8} public fails {len(fail):2} of {len(public):2} "
                  f"{','.join(fail)[:40]:40} quick {'FAIL' if 'fail' in row['quick'].values() else 'pass'} "
                  f"twins {'FAIL' if 'fail' in row['tier'].values() else 'pass'} ({row['seconds']} s)",
                  file=sys.stderr, flush=True)
            Path(args.o).write_text(json.dumps({"max_elements": args.max_elements, "chip": args.chip,
                                                "rows": rows}, indent=1))
        ev._refs.clear()
    judged = [r for r in rows if "public_failed" in r]
    failing = [r for r in judged if r["public_failed"]]
    summary = {
        "variants_judged": len(judged),
        "variants_failing_a_public_case": len(failing),
        "kernels_caught_by_old_quick": sum(1 for r in failing if r["caught_by_quick"]),
        "kernels_caught_by_twins": sum(1 for r in failing if r["caught_by_twins"]),
        "public_case_failures": sum(len(r["public_failed"]) for r in failing),
        "case_failures_caught_by_old_quick": sum(r["caught_by_quick"] for r in failing),
        "case_failures_caught_by_twins": sum(r["caught_by_twins"] for r in failing),
        "case_failures_whose_own_twin_fails": sum(r["caught_own_twin"] for r in failing),
        "false_alarms": sum(1 for r in judged if not r["public_failed"] and "fail" in r["tier"].values()),
    }
    Path(args.o).write_text(json.dumps({"max_elements": args.max_elements, "chip": args.chip,
                                        "summary": summary, "rows": rows}, indent=1))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
