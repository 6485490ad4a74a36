"""The three cube operators the lowering does not reach, by our hand-written kernels: check every public
case on 910B2 and write the per-case table (estimate vs the measured baseline; ESTIMATES of the sim
backend's cost model).

    CANNPILOT_ORACLE_BUDGET_GB=2 nice -n 10 .venv/bin/python bench/cube_handwritten.py [--tabulate] [op ...]

Per operator: `cannpilot check bench/cube_kernels/<op>.cpp --task <task> --cases all --chip 910B2 --json`
into bench/results/cube/handwritten_<op>_910B2.json (skipped with --tabulate), then the table of that
report with the single-case judges of the cases its oracle budget left unjudged
(bench/results/cube/judge_<op>_<case>.json, run one at a time with a larger budget) in their place,
to bench/results/cube/handwritten_910B2.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "cube_kernels"))
from table import HEADER, case_rows, merged_cases, summary_line, task_meta  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO.parent / "shared" / "cannbench" / "tasks"
RESULTS = REPO / "bench" / "results" / "cube"
OPERATORS = {"mla_prolog": "level4", "sparse_flash_attention": "level4", "conv_3d_backprop_filter": "level3"}


def check(op: str) -> Path:
    out = RESULTS / f"handwritten_{op}_910B2.json"
    tmp = out.with_suffix(".json.part")
    cmd = [str(REPO / ".venv" / "bin" / "cannpilot"), "check", str(REPO / "bench" / "cube_kernels" / f"{op}.cpp"),
           "--task", str(TASKS / OPERATORS[op] / op), "--cases", "all", "--chip", "910B2", "--timeout", "2400",
           "--json"]
    with tmp.open("w") as f:
        subprocess.run(cmd, stdout=f, check=False, env=os.environ.copy())
    tmp.replace(out)
    return out


def table(op: str) -> str:
    reports = [RESULTS / f"handwritten_{op}_910B2.json"]
    reports += sorted(RESULTS.glob(f"judge_{op}_*.json"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    cases = merged_cases([str(r) for r in reports if r.exists() and r.stat().st_size])
    rows, ratios = case_rows(cases, task_meta(op))
    return f"### {op} (bench/cube_kernels/{op}.cpp)\n\n{HEADER}\n" + "\n".join(rows) + "\n\n" + summary_line(cases, ratios)


def main(args: list[str]) -> None:
    tabulate = "--tabulate" in args
    ops = [a for a in args if not a.startswith("--")] or list(OPERATORS)
    RESULTS.mkdir(parents=True, exist_ok=True)
    for op in ops:
        if not tabulate:
            check(op)
    text = "\n\n".join(table(op) for op in OPERATORS if (RESULTS / f"handwritten_{op}_910B2.json").exists())
    (RESULTS / "handwritten_910B2.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
