"""One row per operator from `cannpilot check --json` reports: cases passed / not judged / failed,
est./baseline geomean and worst (ESTIMATES of the sim backend's cost model vs the benchmark's measured
910B2 baselines), the bound classes of the passing cases. Several reports of one task merge by case id
(a later report's case replaces an earlier one's: reruns of failing cases with a fixed kernel).

    .venv/bin/python bench/cube_kernels/summary.py conv_2d:a.json,b.json mha:m.json ...
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

META = Path(__file__).resolve().parents[2].parent / "shared" / "cannbench" / "tasks" / "metadata"


def row(task: str, reports: list[str], hw: str = "910b2") -> str:
    meta = json.loads((META / f"{hw}.json").read_text())
    level = next(v for k, v in meta.items() if k.startswith("level") and task in v)[task]
    cases: dict = {}
    for r in reports:
        for c in json.loads(Path(r).read_text())["cases"]:
            cases[str(c["id"])] = c
    passed = [c for c in cases.values() if c["passed"] and c.get("failure_class") != "not_judged"]
    unjudged = [i for i, c in cases.items() if c.get("failure_class") in ("not_judged", "too_large")
                or (not c["passed"] and "budget" in (c.get("message") or ""))]
    failed = [i for i, c in cases.items() if not c["passed"] and i not in unjudged]
    ratios = [(c["est_us"] / level[str(c["id"])]["baseline_perf_us"], str(c["id"])) for c in passed
              if c.get("est_us") and level.get(str(c["id"]), {}).get("baseline_perf_us")]
    geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios)) if ratios else float("nan")
    worst = max(ratios) if ratios else (float("nan"), "-")
    bounds = Counter(c.get("bottleneck") or "-" for c in passed)
    return (f"| {task} | {len(passed)}/{len(cases)} | {', '.join(unjudged) or '-'} | {', '.join(failed) or '-'} | "
            f"{geo:.2f} | {worst[0]:.1f} (case {worst[1]}) | "
            f"{', '.join(f'{k} {v}' for k, v in bounds.most_common())} |")


def main(args: list[str]) -> None:
    print("| operator | cases passed | not judged (oracle over budget) | failed | est./baseline geomean (estimate) "
          "| worst | bound (est.) of the passing cases |")
    print("|---|---|---|---|---|---|---|")
    for a in args:
        task, files = a.split(":", 1)
        print(row(task, files.split(",")))


if __name__ == "__main__":
    main(sys.argv[1:])
