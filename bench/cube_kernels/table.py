"""Estimate vs the measured 910B2 baseline per case, from `cannpilot check --json` reports.

    nice -n 10 .venv/bin/cannpilot check bench/cube_kernels/quant_matmul.cpp \
        --task ../shared/cannbench/tasks/level3/quant_matmul --cases all --chip 910B2 --json > report.json
    .venv/bin/python bench/cube_kernels/table.py report.json quant_matmul [910b2]
    .venv/bin/python bench/cube_kernels/table.py a.json,judge_7.json quant_matmul   # later reports replace cases

Every est. figure is a cost-model ESTIMATE of the sim backend; baseline_perf_us and t_hw_us are the
benchmark's (metadata/<hw>.json). The benchmark labels no bound per case; its t_hw is the bound of its
own roofline, so the class it implies is the term of ours that reproduces it (within 5 %), or "floor"
where its t_hw is the 1 µs floor.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
META = REPO.parent / "shared" / "cannbench" / "tasks" / "metadata"
TERMS = ("cube_us", "memory_us", "vector_us")

HEADER = ("| case | result | est. µs (estimate) | bound (est.) | roofline bound (ours) | bound implied by the "
          "benchmark's t_hw | baseline µs (measured) | est./baseline | our t_hw µs | benchmark t_hw µs | "
          "cube / memory / vector term µs |\n|---|---|---|---|---|---|---|---|---|---|---|")


def task_meta(task: str, hw: str = "910b2") -> dict:
    meta = json.loads((META / f"{hw}.json").read_text())
    return next(v for k, v in meta.items() if k.startswith("level") and task in v)[task]


def merged_cases(reports: list[str]) -> list[dict]:
    """The cases of several reports of one task by id; a later report's case replaces an earlier one's."""
    cases: dict[str, dict] = {}
    for r in reports:
        for c in json.loads(Path(r).read_text())["cases"]:
            cases[str(c["id"])] = c
    return sorted(cases.values(), key=lambda c: int(c["id"]))


def judged(c: dict) -> bool:
    return c["passed"] is not None and c.get("failure_class") not in ("too_large", "not_judged")


def result_of(c: dict) -> str:
    return "pass" if c["passed"] else ("FAIL" if judged(c) else "not judged")


def roofline_bound(terms: dict) -> str:
    named = {k[:-3]: v for k, v in terms.items() if k in TERMS and v is not None}
    return max(named, key=named.get) if named else "-"


def implied_bound(terms: dict, bench_t_hw: float | None) -> str:
    """The term of our roofline that reproduces the benchmark's t_hw within 5 %, or that term at half
    our rate ("memory/2": the benchmark's HBM rate is about half ours; "cube/2": its fp32 cube rate is
    half ours), or 'floor' (its 1 µs floor), 'other', '-'."""
    if bench_t_hw is None:
        return "-"
    if bench_t_hw == 1.0:
        return "floor"
    for scale, tag in ((1.0, ""), (2.0, "/2")):
        for k in TERMS:
            v = terms.get(k)
            if v and abs(scale * v - bench_t_hw) <= 0.05 * bench_t_hw:
                return k[:-3] + tag
    return "other"


def case_rows(cases: list[dict], meta: dict) -> tuple[list[str], list[float]]:
    """Markdown rows and the est./baseline ratios of the passing cases."""
    fmt = lambda v: "-" if v is None else f"{v:.2f}"
    rows, ratios = [], []
    for c in cases:
        m = meta.get(str(c["id"]), {})
        est, base = c.get("est_us"), m.get("baseline_perf_us")
        ratio = est / base if est and base else None
        if ratio and c["passed"]:
            ratios.append(ratio)
        terms = c.get("roofline_terms") or {}
        rows.append(f"| {c['id']} | {result_of(c)} | {fmt(est)} | {c.get('bottleneck') or '-'} | "
                    f"{roofline_bound(terms) if terms else '-'} | {implied_bound(terms, m.get('t_hw_us'))} | "
                    f"{fmt(base)} | {fmt(ratio)} | {fmt(c.get('t_hw_us'))} | {fmt(m.get('t_hw_us'))} | "
                    f"{fmt(terms.get('cube_us'))} / {fmt(terms.get('memory_us'))} / {fmt(terms.get('vector_us'))} |")
    return rows, ratios


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summary_line(cases: list[dict], ratios: list[float]) -> str:
    passed = sum(bool(c["passed"]) for c in cases)
    n_judged = sum(judged(c) for c in cases)
    line = f"{passed}/{n_judged} judged cases pass ({len(cases) - n_judged} not judged)"
    if ratios:
        line += (f"; est./baseline geomean {geomean(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f} "
                 "(estimates vs measurements)")
    return line


def main(reports: str, task: str, hw: str = "910b2") -> None:
    cases = merged_cases(reports.split(","))
    rows, ratios = case_rows(cases, task_meta(task, hw))
    print(HEADER)
    print("\n".join(rows))
    print("\n" + summary_line(cases, ratios))


if __name__ == "__main__":
    main(*sys.argv[1:])
