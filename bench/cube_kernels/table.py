"""Estimate vs the measured 910B2 baseline per case, from a `cannpilot check --json` report.

    nice -n 10 .venv/bin/cannpilot check bench/cube_kernels/quant_matmul.cpp \
        --task ../shared/cannbench/tasks/level3/quant_matmul --cases all --chip 910B2 --json > report.json
    .venv/bin/python bench/cube_kernels/table.py report.json quant_matmul [910b2]

Every est. figure is a cost-model ESTIMATE of the sim backend; baseline_perf_us and t_hw_us are the
benchmark's (metadata/<hw>.json).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
META = REPO.parent / "shared" / "cannbench" / "tasks" / "metadata"


def main(report: str, task: str, hw: str = "910b2") -> None:
    doc = json.loads(Path(report).read_text())
    meta = json.loads((META / f"{hw}.json").read_text())
    level = next(v for k, v in meta.items() if k.startswith("level") and task in v)[task]
    print("| case | result | est. µs (estimate) | bound (est.) | roofline bound (ours) | baseline µs (measured) | "
          "est./baseline | our t_hw µs | benchmark t_hw µs | cube / memory / vector term µs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for c in doc["cases"]:
        m = level.get(str(c["id"]), {})
        est, base = c.get("est_us"), m.get("baseline_perf_us")
        ratio = est / base if est and base else None
        if ratio:
            ratios.append(ratio)
        terms = c.get("roofline_terms") or {}
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        # the roofline term that sets t_hw: what the case is bound by on an ideal kernel
        named = {k[:-3]: v for k, v in terms.items() if k in ("cube_us", "memory_us", "vector_us") and v is not None}
        roof = max(named, key=named.get) if named else "-"
        judged = c["passed"] is not None and c.get("failure_class") != "too_large"   # over the oracle budget
        result = "pass" if c["passed"] else ("FAIL" if judged else "not judged")
        print(f"| {c['id']} | {result} | {fmt(est)} | {c.get('bottleneck') or '-'} | {roof} | "
              f"{fmt(base)} | {fmt(ratio)} | {fmt(c.get('t_hw_us'))} | {fmt(m.get('t_hw_us'))} | "
              f"{fmt(terms.get('cube_us'))} / {fmt(terms.get('memory_us'))} / {fmt(terms.get('vector_us'))} |")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        skipped = sum(c.get("failure_class") == "too_large" for c in doc["cases"])
        note = f" ({skipped} not judged: over the oracle budget)" if skipped else ""
        print(f"\n{sum(bool(c['passed']) for c in doc['cases'])}/{len(doc['cases'])} cases pass{note}; est./baseline geomean "
              f"{geo:.2f}, range {min(ratios):.2f}-{max(ratios):.2f} (estimates vs measurements)")


if __name__ == "__main__":
    main(*sys.argv[1:])
