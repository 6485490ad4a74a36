"""Calibration of the sim cost model on CANN-Bench's public measurements (910B2 and 950PR).

`tasks/metadata/<chip>.json` holds, for every public case, the vendor's measured baseline time and
the roofline bound; each case's note in `cases.csv` names the vendor kernels the baseline ran
(`baseline_kernels: Sigmoid×1`, or several chained). Two stages:

    # 1. sweep (slow, minutes): ESTIMATE our kernel of every eligible case in count-only mode and
    #    cache what the fit needs per case (pipe times, GM bytes, vector work per API and element size)
    nice -n 10 .venv/bin/python bench/calibrate.py sweep --chip 910B2
    # 2. fit (seconds, from the cache): chip parameters and per-API vector weights, held-out
    #    validation by operator, error bands per bound class
    .venv/bin/python bench/calibrate.py fit

Eligible cases: the vendor baseline is ONE kernel (`×1`, a single name) and its figure is a real
measurement, not the placeholder max(10·t_hw, 10 µs) the metadata uses where none was usable (or
where the measurement was capped to it). Every other case is listed with its reason.

Our kernel for an operator is the best one we have written the way the vendor's is (all cores,
double buffering, 512-byte aligned slices, one pass where the vendor does one): the hand-written
calibration kernel `bench/calibration_kernels/<op>.cpp` where there is one and it passed
`check --cases all` on the public task for the chip (`calibrate.py check-kernels`, verdicts in
bench/results/calibration/kernel-checks-<chip>.json), else the lowering agent's output
(`cannpilot lower --task DIR --chip CHIP`, written to bench/results/calibration/kernels/<chip>/ when
absent and reused from there: generated files, not committed). Every cached case names its kernel.
A kernel slower than the vendor's for the same operator would otherwise read as a model error.

The sweep also times each case a second time with no DMA latency: the difference is how many
latencies lie on the case's critical path, so the fit can move `dma_latency_us` (small cases are
made of launch, latency and a short stream).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import hashlib
import json
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CANNBENCH = REPO.parent / "shared" / "cannbench"
OUT = REPO / "bench" / "results" / "calibration"
# The public tasks the lowering agent lowers (docs/results.md, issue 16).
CAL_KERNELS = REPO / "bench" / "calibration_kernels"
TASKS = ["level1/exp", "level1/sigmoid", "level1/gelu", "level1/mish", "level1/swi_glu", "level1/masked_scale",
         "level2/softmax", "level2/rms_norm", "level2/group_norm", "level2/dynamic_quant", "level2/apply_adam_w",
         "level3/add_rms_norm_dynamic_quant",
         # lowered and passing since issue 16's fifth and sixth passes (single-kernel baselines on one chip or both)
         "level1/foreach_addcdiv_scalar", "level1/foreach_norm", "level2/maximum", "level3/mhc_sinkhorn",
         "level3/moe_gating_top_k_softmax", "level3/strided_slice", "level3/transpose"]
CHIPS = {"910B2": "910b2.json", "950PR": "950pr.json"}


def is_placeholder(measured: float, t_hw: float) -> bool:
    """The figure is the metadata's max(10·t_hw, 10 µs): no usable measurement, or one capped to it."""
    cap = max(10 * t_hw, 10.0)
    return abs(measured - cap) <= 0.01 * cap + 0.011


def vendor_kernels(note: str) -> list[tuple[str, int]]:
    """`baseline_kernels: Muls×1 + Add×1 + Exp×1` -> [("Muls", 1), ("Add", 1), ("Exp", 1)]."""
    m = re.search(r"baseline_kernels:\s*(.*)$", note or "")
    if not m:
        return []
    out = []
    for part in m.group(1).split("+"):
        name, _, n = part.strip().partition("×")
        out.append((name.strip(), int(n) if n.strip().isdigit() else 1))
    return out


def exclusion(measured: float, t_hw: float, kernels: list[tuple[str, int]]) -> str | None:
    """Why a case cannot calibrate the model, or None when it can."""
    if not kernels:
        return "no vendor kernel named in the note"
    if len(kernels) > 1 or kernels[0][1] > 1:
        return "chained vendor baseline (" + " + ".join(f"{k}×{n}" for k, n in kernels) + ")"
    if is_placeholder(measured, t_hw):
        return "placeholder figure max(10·t_hw, 10 µs)"
    return None


def public_cases(chip: str, tasks: list[str]) -> list[dict]:
    """Every case of the tasks with its measured figure, vendor kernels and exclusion reason."""
    meta = json.loads((CANNBENCH / "tasks" / "metadata" / CHIPS[chip]).read_text())
    rows = []
    for t in tasks:
        level, op = t.split("/")
        figures = meta.get(level, {}).get(op, {})
        with open(CANNBENCH / "tasks" / t / "cases.csv", newline="") as f:
            for r in csv.DictReader(f):
                cid = r["case_id"]
                fig = figures.get(cid)
                if fig is None:
                    continue
                kernels = vendor_kernels(r.get("note", ""))
                measured, t_hw = float(fig["baseline_perf_us"]), float(fig["t_hw_us"])
                rows.append({"task": t, "op": op, "case": cid, "measured_us": measured, "t_hw_us_meta": t_hw,
                             "vendor_kernels": " + ".join(f"{k}×{n}" for k, n in kernels),
                             "excluded": exclusion(measured, t_hw, kernels)})
    return rows


def kernel_checks(chip: str) -> dict:
    """{"<op>": {"passed": bool, ...}}: the calibration kernels' `check --cases all` verdicts on a chip."""
    path = OUT / f"kernel-checks-{chip.lower()}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def kernel_for(op: str, chip: str) -> tuple[Path, str]:
    """(kernel file, which) for an operator on a chip: the calibration kernel where it passed its
    public task on this chip, else the lowering agent's output (written when absent)."""
    cal = CAL_KERNELS / f"{op}.cpp"
    if cal.is_file() and kernel_checks(chip).get(op, {}).get("passed"):
        return cal, "calibration"
    return OUT / "kernels" / chip / f"{op}.cpp", "lowered"


@contextlib.contextmanager
def cost_override(**values):
    """The chip's cost parameters with some values replaced, for every run started inside (the
    runner reads `copilot.costmodel.cost_params` at each run)."""
    import copilot.costmodel as cm

    original = cm.cost_params
    cm.cost_params = lambda chip: dataclasses.replace(original(chip), **values)
    try:
        yield
    finally:
        cm.cost_params = original


def sweep(args) -> int:
    """Estimate our kernel on every eligible case (count-only) and cache the figures the fit needs."""
    from copilot.backends import sim
    from copilot.costmodel import cost_params
    from copilot.costmodel.estimate import estimate_case, output_shapes
    from copilot.lowering import lower
    from copilot.tasks import load_task

    chip = args.chip
    # one cache file per sweep process (--part), merged by the fit: sweeps can run side by side
    cache_path = OUT / f"counts-{chip.lower()}{'-' + args.part if args.part else ''}.json"
    cache = {} if args.fresh else _cached_counts(chip)
    # a part file holds only the cases this process times: a copy of an older entry in a newer
    # file would win over the entry another part timed meanwhile
    timed: dict = {} if args.part else cache
    (OUT / "kernels" / chip).mkdir(parents=True, exist_ok=True)
    tasks = args.tasks.split(",") if args.tasks else TASKS
    rows = public_cases(chip, tasks)
    params = cost_params(chip)
    for t in tasks:
        op = t.split("/")[1]
        kernel, which = kernel_for(op, chip)
        task = load_task(CANNBENCH / "tasks" / t)
        if not kernel.is_file():
            kernel.write_text(lower(task, chip=chip).source)
        sha = hashlib.sha256(kernel.read_bytes()).hexdigest()[:16]
        # a case cached with another kernel (or another version of it), or before the latency run, is timed again
        todo = [r for r in rows if r["task"] == t and r["excluded"] is None
                and not _fresh(cache.get(f"{t}:{r['case']}", {}), which, sha)]
        if not todo:
            continue
        builds: dict[tuple, object] = {}
        for r in todo:
            case = task.case(r["case"])
            t0 = time.perf_counter()
            entry = {"op": r["op"], "case": r["case"], "shapes": [list(s) if s is not None else None for s in case.shapes], "dtypes": case.dtypes,
                     "kernel": which, "kernel_file": str(kernel.relative_to(REPO)), "kernel_sha256": sha}
            try:
                outs = output_shapes(task, case)
                key = tuple(case.dtypes) + tuple(o.dtype for o in outs)
                if key not in builds:
                    builds[key] = sim.build(kernel, task, list(key), chip)
                if not builds[key].ok:
                    entry["error"] = "build failed: " + str(getattr(builds[key], "output", ""))[-300:]
                est = estimate_case(builds[key], task, case, chip, outs) if builds[key].ok else None
                if est is not None:
                    with cost_override(dma_latency_us=0.0):
                        est_l0 = estimate_case(builds[key], task, case, chip, outs)
            except Exception as exc:  # a case the pipeline refuses is recorded, not fatal to the sweep
                est, entry["error"] = None, f"{type(exc).__name__}: {exc}"[:300]
            if est is None:
                entry.setdefault("error", "no estimate (build failed, run failed, or unmodelled API)")
            else:
                entry.update(est_us=est.time_us, pipes_us=est.pipes_us, hbm_us=est.hbm_us, gm_bytes=est.gm_bytes,
                             bottleneck=est.bottleneck, block_dim=est.block_dim, vector_counts=est.vector_counts,
                             t_hw_us=est.t_hw_us, roofline_terms=est.roofline_terms, params=_params_dict(params),
                             # latencies on the critical path: d(estimate) / d(dma_latency_us)
                             latency_hops=(est.time_us - est_l0.time_us) / params.dma_latency_us
                             if est_l0 is not None else None)
            entry["seconds"] = round(time.perf_counter() - t0, 2)
            cache[f"{t}:{r['case']}"] = timed[f"{t}:{r['case']}"] = entry
            print(f"{chip} {r['op']:28} {r['case']:>3} est {entry.get('est_us', float('nan')):9.2f} "
                  f"meas {r['measured_us']:9.2f} {which:11} {entry.get('bottleneck', entry.get('error', ''))}",
                  file=sys.stderr, flush=True)
            cache_path.write_text(json.dumps(timed, indent=1))
    if timed:
        cache_path.write_text(json.dumps(timed, indent=1))
    (OUT / f"params-used-{chip.lower()}.json").write_text(json.dumps(_params_dict(params), indent=1))
    return 0


def _fresh(entry: dict, which: str, sha: str) -> bool:
    """A cached case that needs no new run: timed with the kernel in use now, latency run included."""
    return ("est_us" in entry and entry.get("kernel", "lowered") == which and entry.get("latency_hops") is not None
            and entry.get("kernel_sha256") == sha)


def check_kernels(args) -> int:
    """`check --cases all` of every calibration kernel on its public task, per chip: the sweep uses
    a calibration kernel only where it passed (correct on every judged case, an estimate on every
    performance case). Large cases over CANNPILOT_ORACLE_BUDGET_GB are judged for speed only."""
    from copilot.backends.sim import check_kernel
    from copilot.tasks import load_task

    ops = args.ops.split(",") if args.ops else sorted(p.stem for p in CAL_KERNELS.glob("*.cpp"))
    by_op = {t.split("/")[1]: t for t in TASKS}
    for chip in args.chips.split(","):
        verdicts = kernel_checks(chip)
        for op in ops:
            t0 = time.perf_counter()
            task = load_task(CANNBENCH / "tasks" / by_op[op])
            report = check_kernel(CAL_KERNELS / f"{op}.cpp", task, chip=chip, cases="all")
            failed = [f"{c.id}: {c.failure_class} {c.message}"[:200] for c in report.cases if not c.passed]
            verdicts[op] = {"passed": bool(report.compiled and report.correct and not failed),
                            "compiled": report.compiled, "cases": len(report.cases), "failed": failed,
                            "seconds": round(time.perf_counter() - t0, 1),
                            "oracle_budget_gb": os.environ.get("CANNPILOT_ORACLE_BUDGET_GB")}
            print(f"{chip} {op}: {'passed' if verdicts[op]['passed'] else 'FAILED'} "
                  f"({len(report.cases)} cases) {failed[:3]}", file=sys.stderr, flush=True)
            (OUT / f"kernel-checks-{chip.lower()}.json").write_text(json.dumps(verdicts, indent=1, sort_keys=True))
    return 0


def _cached_counts(chip: str) -> dict:
    """Every cached case of a chip, over the sweep's part files (a newer file's entry wins)."""
    out: dict = {}
    for path in sorted(OUT.glob(f"counts-{chip.lower()}*.json"), key=lambda q: q.stat().st_mtime):
        for k, e in json.loads(path.read_text()).items():
            if "est_us" in e or k not in out:
                out[k] = e
    return out


def _params_dict(params) -> dict:
    return {k: v for k, v in params.__dict__.items() if k != "sources"}


# ---------------------------------------------------------------- fit (from the cached counts)

# Vector APIs whose weight the fit may move (cycles per 256-B repeat, per element size): the
# transcendental, division, reduction and composite ones. Add-class APIs stay at 1: one repeat of
# 256 B per cycle is the documented vector rate (ascendc-facts.md §3.3/§3.5), the fit's unit.
FIT_APIS = {"Exp", "Ln", "Div", "Divs", "Reciprocal", "Sqrt", "Rsqrt", "Cast", "Select", "Compare", "Compares",
            "ReduceSum", "ReduceMax", "ReduceMin", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin",
            "BlockReduceSum", "BlockReduceMax", "BlockReduceMin", "Power", "Tanh", "Sigmoid", "Erf", "Gelu",
            # a gather reads one element per lane from an arbitrary UB address (bank conflicts)
            "Gather", "GatherMask", "Sort32", "MrgSort"}
# Ranges that keep every parameter physical: a launch of a few µs (facts §3.3: launch overhead grows
# with core count), at most the fastest measured kernel of the chip (`launch_ceiling`); sustained
# HBM below the roofline's peak; a DMA latency under 2 µs; weights at least the add rate.
BOUNDS = {"launch_us": (0.5, 12.0), "hbm_gbps": (300.0, None), "vector_issue_cycles": (2.0, 60.0),
          "dma_latency_us": (0.05, 2.0)}
WEIGHT_BOUNDS = (1.0, 16.0)    # at most 16 cycles per repeat: a multi-pass transcendental, not a loop
# The prior of each fitted chip parameter: the model's provisional defaults (CostParams).
PRIOR_PARAMS = {"launch_us": 4.0, "hbm_gbps": 1850.0, "vector_issue_cycles": 12.0, "dma_latency_us": 0.5}
PRIOR = 0.02        # pull (per parameter, on log scale) toward the prior: unidentified weights stay put
MIN_SHARE = 0.05    # a weight is fitted only where its API is >= 5 % of some training case's vector time


class Case:
    """One cached case: the emulator's figures at the parameters of the sweep, re-timed for other
    parameters by the same rules the timeline uses (pipes add up, the slowest bounds the core)."""

    def __init__(self, key: str, entry: dict, meta: dict, p0: dict, w0: dict, cores: int):
        self.key, self.op, self.case = key, entry["op"], entry["case"]
        self.kernel = entry.get("kernel", "lowered")
        # latencies on the critical path (the sweep's second run); two (first load, last store) if unknown
        hops = entry.get("latency_hops")
        self.hops = 2.0 if hops is None else max(0.0, float(hops))
        self.measured = meta["measured_us"]
        self.t_hw_meta = meta.get("t_hw_us_meta", 0.0)
        self.t_hw = entry.get("t_hw_us") or 0.0
        self.counts = {k: (float(n), float(r)) for k, (n, r) in (entry.get("vector_counts") or {}).items()}
        self.pipes0 = dict(entry["pipes_us"])
        self.hbm0 = float(entry.get("hbm_us", 0.0))
        self.active = max(1, min(int(entry.get("block_dim") or cores), cores))
        self.p0, self.w0 = p0, w0
        v_model = self.vector_us(p0, w0)
        self.v_rest = max(0.0, self.pipes0["V"] - v_model)       # vector work the truncated list leaves out
        body = entry["est_us"] - p0["launch_us"]
        self.slack = max(0.0, body - max(self.pipes0.values()) if self.hbm0 <= max(self.pipes0.values())
                         else body - max(max(self.pipes0.values()), self.hbm0))
        self.est0 = entry["est_us"]

    @staticmethod
    def weight(api_key: str, w: dict) -> float:
        api = api_key.rsplit(".", 1)[0]
        if api == "DataCopy":
            return 1.0
        return w.get(api_key, w.get(api, 1.0))

    def vector_us(self, p: dict, w: dict) -> float:
        cyc = p["clock_ghz"] * 1000.0
        return sum(n * p["vector_issue_cycles"] + r * self.weight(k, w) for k, (n, r) in self.counts.items()) / cyc

    def timed(self, p: dict, w: dict) -> tuple[float, str]:
        """(estimate µs, bound class) under parameters p and weights w."""
        from copilot.costmodel import classify

        scale_v = p["clock_ghz"]
        v = self.vector_us(p, w) + self.v_rest * self.p0["clock_ghz"] / scale_v
        rate0 = min(self.p0["core_dma_gbps"], self.p0["hbm_gbps"] / self.active)
        rate = min(p["core_dma_gbps"], p["hbm_gbps"] / self.active)
        pipes = {"S": self.pipes0["S"], "V": v, "MTE2": self.pipes0["MTE2"] * rate0 / rate,
                 "MTE3": self.pipes0["MTE3"] * rate0 / rate}
        hbm = self.hbm0 * self.p0["hbm_gbps"] / p["hbm_gbps"]
        slack = max(0.0, self.slack + self.hops * (p["dma_latency_us"] - self.p0["dma_latency_us"]))
        t = p["launch_us"] + max(max(pipes.values()), hbm) + slack
        t = max(t, self.t_hw)
        return t, classify(pipes, t, p["launch_us"], hbm)


def _load_cases(chip: str) -> tuple[list[Case], dict, dict]:
    from copilot.chips import load_chip
    from copilot.costmodel import API_WEIGHTS

    cache = _cached_counts(chip)
    p0 = json.loads((OUT / f"params-used-{chip.lower()}.json").read_text())
    w0 = dict(API_WEIGHTS)
    w0.update(p0.pop("weights", {}) or {})
    p0.pop("bands", None)
    meta = {f"{r['task']}:{r['case']}": r for r in public_cases(chip, TASKS)}
    cores = load_chip(chip).vector_cores
    cases = []
    for k, e in cache.items():
        if "est_us" not in e or k not in meta:
            continue
        pe, we = p0, w0
        if e.get("params"):             # the parameters this case was swept with
            pe = dict(e["params"])
            we = dict(API_WEIGHTS)
            we.update(pe.pop("weights", {}) or {})
            pe.pop("bands", None)
        cases.append(Case(k, e, meta[k], pe, we, cores))
    return cases, p0, w0


def _free_weights(cases: list[Case], p0: dict, w0: dict) -> list[str]:
    """Weights the training cases can identify: APIs in FIT_APIS with a real share of vector time in
    at least two operators (a weight only one operator moves would be that operator's fudge factor)."""
    users: dict[str, set] = {}
    for c in cases:
        cyc = c.p0["clock_ghz"] * 1000.0
        v = c.vector_us(c.p0, c.w0) or 1e-9
        for k, (n, r) in c.counts.items():
            if k.rsplit(".", 1)[0] in FIT_APIS and r * Case.weight(k, c.w0) / cyc >= MIN_SHARE * v:
                users.setdefault(k, set()).add(c.op)
    return sorted(k for k, ops in users.items() if len(ops) >= 2)


def _objective(cases, p, w, prior_p, prior_w) -> float:
    err = sum(abs(math.log(c.timed(p, w)[0] / c.measured)) for c in cases)
    reg = sum(math.log(p[k] / prior_p[k]) ** 2 for k in BOUNDS) + \
        sum(math.log(w[k] / prior_w(k)) ** 2 for k in w if k in prior_w.keys_fitted)
    return err + PRIOR * len(cases) * reg / max(1, len(BOUNDS) + len(prior_w.keys_fitted))


class _Prior:
    def __init__(self, w0: dict, keys: list[str]):
        self.w0, self.keys_fitted = w0, set(keys)

    def __call__(self, k: str) -> float:
        return self.w0.get(k, self.w0.get(k.rsplit(".", 1)[0], 1.0))


def launch_ceiling(chip: str) -> float:
    """The fastest measured time of any public case on the chip (all 1,060, any operator): no
    kernel finishes before its launch does, so the launch overhead is at most this."""
    meta = json.loads((CANNBENCH / "tasks" / "metadata" / CHIPS[chip]).read_text())
    times = [float(f["baseline_perf_us"]) for ops in meta.values() if isinstance(ops, dict)
             for cases in ops.values() if isinstance(cases, dict)
             for f in cases.values() if isinstance(f, dict) and "baseline_perf_us" in f]
    return min(times)


def fit_params(cases: list[Case], p0: dict, w0: dict, rounds: int = 3,
               launch_max: float | None = None) -> tuple[dict, dict]:
    """Coordinate descent on log scale (golden-section per parameter) of the absolute log ratios
    estimate/measured over the training cases (robust: an operator whose kernel differs from the
    vendor's does not drag the rest), with a weak pull toward the prior."""
    from copilot.costmodel import API_WEIGHTS

    keys = _free_weights(cases, p0, w0)
    prior = _Prior(API_WEIGHTS, keys)       # the provisional table, not the profile of the sweep
    p, w = dict(p0), dict(API_WEIGHTS)     # an API not fitted here has its table weight, as in the product
    for k in keys:
        w[k] = prior(k)
    bounds = {k: (lo, hi if hi is not None else p0["hbm_peak_gbps"]) for k, (lo, hi) in BOUNDS.items()}
    if launch_max is not None:
        bounds["launch_us"] = (bounds["launch_us"][0], min(bounds["launch_us"][1], launch_max))
    # the start and the prior: the model's provisional defaults, moved into a narrowed range
    prior_p = {k: min(max(PRIOR_PARAMS[k], lo), hi) for k, (lo, hi) in bounds.items()}
    p.update(prior_p)

    def f() -> float:
        return _objective(cases, p, w, prior_p, prior)

    coords = [("p", k) for k in BOUNDS] + [("w", k) for k in keys]
    for _ in range(rounds):
        for kind, k in coords:
            target = p if kind == "p" else w
            lo, hi = bounds[k] if kind == "p" else WEIGHT_BOUNDS
            a, b = math.log(lo), math.log(hi)
            g = (math.sqrt(5) - 1) / 2
            x1, x2 = b - g * (b - a), a + g * (b - a)
            target[k] = math.exp(x1); f1 = f()
            target[k] = math.exp(x2); f2 = f()
            for _ in range(16):
                if f1 < f2:
                    b, x2, f2 = x2, x1, f1
                    x1 = b - g * (b - a); target[k] = math.exp(x1); f1 = f()
                else:
                    a, x1, f1 = x1, x2, f2
                    x2 = a + g * (b - a); target[k] = math.exp(x2); f2 = f()
            target[k] = math.exp((a + b) / 2)
    return p, {k: w[k] for k in keys}


def _stats(ratios: list[float]) -> dict:
    if not ratios:
        return {"cases": 0}
    logs = [math.log(r) for r in ratios]
    return {"cases": len(ratios), "median": statistics.median(ratios),
            "within_1_5": sum(1 / 1.5 <= r <= 1.5 for r in ratios) / len(ratios),
            "spread_log_sd": statistics.pstdev(logs) if len(logs) > 1 else 0.0,
            "p10": _quantile(ratios, 0.1), "p90": _quantile(ratios, 0.9)}


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    i = q * (len(s) - 1)
    lo = int(math.floor(i))
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (i - lo)


BAND_QUANTILE = 0.8      # the band covers 80 % of the held-out cases of its bound class
BAND_MIN_CASES = 8       # fewer held-out cases in a class: the chip's pooled band


def bands_from(held: list[dict]) -> dict:
    """Per bound class: the 80th percentile of |ln(estimate/measured)| over held-out cases, as a
    fraction (band 0.35 = the measured time is within a factor 1.35 of the estimate, either way, for 80 % of cases)."""
    def band(rs):
        return math.exp(_quantile([abs(math.log(r)) for r in rs], BAND_QUANTILE)) - 1.0
    pooled = band([h["ratio"] for h in held])
    out = {"all": round(pooled, 3)}
    for cls in ("memory", "vector", "scalar", "latency", "cube"):
        rs = [h["ratio"] for h in held if h["bound"] == cls]
        out[cls] = round(band(rs), 3) if len(rs) >= BAND_MIN_CASES else round(pooled, 3)
    return out


def fit_chip(chip: str) -> dict:
    from copilot.costmodel import API_WEIGHTS

    cases, p0, w0 = _load_cases(chip)
    ops = sorted({c.op for c in cases})
    ceiling = launch_ceiling(chip)
    t0 = time.perf_counter()
    held = []
    for op in ops:                          # leave one operator out: fit on the rest, time the held-out one
        train = [c for c in cases if c.op != op]
        p, wf = fit_params(train, p0, w0, launch_max=ceiling)
        w = dict(API_WEIGHTS); w.update(wf)
        for c in cases:
            if c.op == op:
                t, cls = c.timed(p, w)
                held.append({"op": op, "case": c.case, "kernel": c.kernel, "est_us": t, "measured_us": c.measured,
                             "ratio": t / c.measured, "bound": cls})
    p_all, w_all = fit_params(cases, p0, w0, launch_max=ceiling)
    w = dict(API_WEIGHTS); w.update(w_all)
    fitted = []
    for c in cases:
        t, cls = c.timed(p_all, w)
        fitted.append({"op": c.op, "case": c.case, "kernel": c.kernel, "est_us": t, "est0_us": c.est0,
                       "measured_us": c.measured, "ratio": t / c.measured, "bound": cls})
    # the same held-out ratios with each operator's own median divided out: how well the model
    # scales across one kernel's cases, apart from how far our kernel is from the vendor's
    op_median = {op: statistics.median([h["ratio"] for h in held if h["op"] == op]) for op in ops}
    within_op = _stats([h["ratio"] / op_median[h["op"]] for h in held])
    by_class = {cls: _stats([h["ratio"] for h in held if h["bound"] == cls])
                for cls in sorted({h["bound"] for h in held})}
    diagnosis = {op: diagnose_op([c for c in cases if c.op == op], [h for h in held if h["op"] == op], p_all, w)
                 for op in ops}
    return {"chip": chip, "seconds": round(time.perf_counter() - t0, 1), "cases": len(cases), "operators": ops,
            "diagnosis": diagnosis,
            "prior": dict(PRIOR_PARAMS), "launch_ceiling_us": ceiling,
            "kernels": {op: sorted({c.kernel for c in cases if c.op == op}) for op in ops},
            "params": {k: round(p_all[k], 4) for k in BOUNDS},
            "weights": {k: round(v, 3) for k, v in w_all.items()},
            "before": _stats([c.est0 / c.measured for c in cases]),
            "fitted_in_sample": _stats([f["ratio"] for f in fitted]),
            "held_out": _stats([h["ratio"] for h in held]), "held_out_by_class": by_class,
            "held_out_within_operator": within_op,
            "held_out_by_op": {op: _stats([h["ratio"] for h in held if h["op"] == op]) for op in ops},
            "bands": bands_from(held), "held_out_cases": held, "fitted_cases": fitted}


SMALL_US = 20.0     # a case the vendor runs in under this is dominated by fixed costs (launch, fill, tail)


def diagnose_op(cases: list[Case], held: list[dict], p: dict, w: dict) -> dict:
    """What separates one operator's held-out estimates from the vendor's times: how far the
    vendor's kernel is from its roofline and how far ours is (the same roofline), the error on
    small and on large cases (fixed costs vs per-byte costs), how often our kernel is bound by the
    vector pipe, and which APIs make its vector time (at the fitted weights)."""
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    cyc = p["clock_ghz"] * 1000.0
    api_us: dict[str, float] = {}
    vec_bound = 0
    for c in cases:
        for k, (n, r) in c.counts.items():
            if k.rsplit(".", 1)[0] != "DataCopy":
                api_us[k] = api_us.get(k, 0.0) + (n * p["vector_issue_cycles"] + r * Case.weight(k, w)) / cyc
        vec_bound += c.timed(p, w)[1] == "vector"
    total = sum(api_us.values()) or 1.0
    by_case = {h["case"]: h for h in held}
    return {"vendor_over_t_hw": med([c.measured / c.t_hw_meta for c in cases if c.t_hw_meta]),
            "ours_over_t_hw": med([by_case[c.case]["est_us"] / c.t_hw_meta for c in cases
                                   if c.t_hw_meta and c.case in by_case]),
            "held_out_small": med([h["ratio"] for h in held if h["measured_us"] < SMALL_US]),
            "held_out_large": med([h["ratio"] for h in held if h["measured_us"] >= SMALL_US]),
            "vector_bound_share": vec_bound / max(1, len(cases)),
            "vector_time_by_api": {k: round(v / total, 3) for k, v in sorted(api_us.items(), key=lambda kv: -kv[1])[:5]}}


def vendor_cross_chip(tasks: list[str]) -> dict:
    """Per operator, the vendor's 910B2 time over its 950PR time on the cases eligible on both
    (all, and those with t_hw >= 20 µs), beside the same ratio of the roofline bounds: a memory-bound
    vendor kernel on both chips moves with the t_hw ratio; one far above it on a chip is bound by
    something else there (vector work, passes, a structure of its own)."""
    out = {}
    for t in tasks:
        a = {r["case"]: r for r in public_cases("910B2", [t]) if not r["excluded"]}
        b = {r["case"]: r for r in public_cases("950PR", [t]) if not r["excluded"]}
        both = [k for k in a if k in b]
        if not both:
            continue
        big = [k for k in both if a[k]["t_hw_us_meta"] >= SMALL_US]
        ratio = lambda ks, f: statistics.median([a[k][f] / b[k][f] for k in ks]) if ks else None  # noqa: E731
        out[t.split("/")[1]] = {"cases": len(both), "time_910b2_over_950pr": ratio(both, "measured_us"),
                                "large_cases": len(big), "large_time_910b2_over_950pr": ratio(big, "measured_us"),
                                "t_hw_910b2_over_950pr": ratio(both, "t_hw_us_meta")}
    return out


def fit_main(args) -> int:
    from concurrent.futures import ProcessPoolExecutor

    chips = args.chips.split(",")
    with ProcessPoolExecutor(len(chips)) as pool:          # the chips' fits are independent
        results = dict(zip(chips, pool.map(fit_chip, chips)))
    excluded = {chip: [r for r in public_cases(chip, TASKS) if r["excluded"]] for chip in results}
    cross = vendor_cross_chip(TASKS)
    (OUT / "fit.json").write_text(json.dumps({"results": results, "excluded": excluded, "vendor_cross_chip": cross},
                                             indent=1))
    for chip, r in results.items():
        h = r["held_out"]
        print(f"{chip}: {r['cases']} cases, {len(r['operators'])} operators, fit {r['seconds']} s; held out: "
              f"median {h['median']:.2f}, within x1.5 {h['within_1_5']:.0%}, sd(log) {h['spread_log_sd']:.2f}; "
              f"before: median {r['before']['median']:.2f}, within x1.5 {r['before']['within_1_5']:.0%}")
        print(f"  params {r['params']}  weights {r['weights']}  bands {r['bands']}")
        for op, s in r["held_out_by_op"].items():
            print(f"  {op:28} n={s['cases']:2} median {s['median']:.2f} within x1.5 {s['within_1_5']:.0%}")
    before = json.loads(Path(args.before).read_text())["results"] if args.before else None
    (OUT / "fit.md").write_text(fit_markdown(results, excluded, before) + diagnosis_markdown(results, cross))
    if args.write:
        for chip, r in results.items():
            write_profile(chip, r)
    return 0


def _fmt_stats(s: dict) -> str:
    if not s.get("cases"):
        return "| 0 | - | - | - | - |"
    return (f"| {s['cases']} | {s['median']:.2f} | {s['within_1_5']:.0%} | {s['spread_log_sd']:.2f} | "
            f"{s['p10']:.2f}-{s['p90']:.2f} |")


def compare_markdown(results: dict, before: dict) -> list[str]:
    """Held-out median and share within x1.5, all and per bound class, of a previous fit beside this one."""
    out = ["### Before and after (held out)", "",
           "| chip | set | cases before | median before | within x1.5 before | cases now | median now | within x1.5 now |",
           "|---|---|---|---|---|---|---|---|"]
    for chip, r in results.items():
        b = before.get(chip)
        if not b:
            continue
        sets = [("all", b["held_out"], r["held_out"])]
        for cls in sorted(set(b["held_out_by_class"]) | set(r["held_out_by_class"])):
            sets.append((f"bound {cls}", b["held_out_by_class"].get(cls, {}), r["held_out_by_class"].get(cls, {})))
        # the classes move with the parameters: the cases that were latency-bound before, timed now
        was_latency = {(h["op"], h["case"]) for h in b.get("held_out_cases", []) if h["bound"] == "latency"}
        sets.append(("bound latency before (the same cases now)", b["held_out_by_class"].get("latency", {}),
                     _stats([h["ratio"] for h in r["held_out_cases"] if (h["op"], h["case"]) in was_latency])))
        for name, s0, s1 in sets:
            cells = []
            for s_ in (s0, s1):
                cells += ([str(s_["cases"]), f"{s_['median']:.2f}", f"{s_['within_1_5']:.0%}"] if s_.get("cases")
                          else ["0", "-", "-"])
            out.append(f"| {chip} | {name} | " + " | ".join(cells) + " |")
    return out + [""]


def fit_markdown(results: dict, excluded: dict, before: dict | None = None) -> str:
    """The fit's report: parameters, held-out figures per bound class and operator, exclusions."""
    out = compare_markdown(results, before) if before else []
    for chip, r in results.items():
        out += [f"### {chip}", "",
                f"{r['cases']} cases of {len(r['operators'])} operators. Held out = each operator timed with the "
                f"parameters fitted on the other {len(r['operators']) - 1}. Launch at most "
                f"{r.get('launch_ceiling_us', '-')} µs (the fastest public measurement on the chip).", "",
                "| parameter | prior | fitted |", "|---|---|---|"]
        out += [f"| {k} | {r['prior'][k]} | {v} |" for k, v in r["params"].items()]
        out += [f"| weight {k} | - | {v} |" for k, v in sorted(r["weights"].items())]
        out += ["", "| set | cases | median est/measured | within x1.5 | sd(log) | p10-p90 |", "|---|---|---|---|---|---|"]
        out.append("| before the fit (profile at the sweep) " + _fmt_stats(r["before"]))
        out.append("| fitted on all (in sample) " + _fmt_stats(r["fitted_in_sample"]))
        out.append("| **held out, all** " + _fmt_stats(r["held_out"]))
        out += [f"| held out, bound {cls} " + _fmt_stats(s) for cls, s in r["held_out_by_class"].items()]
        out.append("| held out, each operator's median divided out " + _fmt_stats(r["held_out_within_operator"]))
        out += [f"| held out, {op} ({'/'.join(r.get('kernels', {}).get(op, ['lowered']))} kernel) " + _fmt_stats(s)
                for op, s in r["held_out_by_op"].items()]
        out += ["", "Bands (80th percentile of held-out |ln(est/measured)| per bound class; classes with fewer than "
                f"{BAND_MIN_CASES} cases take the pooled one): " +
                ", ".join(f"{k} ×÷{1 + v:.2f}" for k, v in r["bands"].items()), ""]
        groups: dict[tuple, list[str]] = {}
        for e in excluded[chip]:
            groups.setdefault((e["op"], e["excluded"]), []).append(e["case"])
        out += [f"Excluded on {chip} ({len(excluded[chip])} cases):", ""]
        out += [f"- {op}: {why}: cases {', '.join(ids)}" for (op, why), ids in sorted(groups.items())]
        out.append("")
    return "\n".join(out)


def diagnosis_markdown(results: dict, cross: dict) -> str:
    """Per operator and chip: held-out median, the vendor's and our distance from the roofline,
    small vs large cases, the vector-bound share, the APIs of our vector time; the vendor's
    cross-chip ratio beside the roofline's."""
    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    out = ["## Per-operator diagnosis (held out)", "",
           "| chip | operator | cases | held-out median | vendor / t_hw | ours / t_hw | small (< 20 µs) | large | "
           "our vector-bound share | our vector time by API |", "|---|---|---|---|---|---|---|---|---|---|"]
    for chip, r in results.items():
        for op, d in r.get("diagnosis", {}).items():
            s = r["held_out_by_op"][op]
            apis = ", ".join(f"{k} {v:.0%}" for k, v in d["vector_time_by_api"].items())
            out.append(f"| {chip} | {op} | {s['cases']} | {s['median']:.2f} | {f(d['vendor_over_t_hw'])} | "
                       f"{f(d['ours_over_t_hw'])} | {f(d['held_out_small'])} | {f(d['held_out_large'])} | "
                       f"{d['vector_bound_share']:.0%} | {apis} |")
    out += ["", "Vendor 910B2 time / vendor 950PR time, cases eligible on both chips (a memory-bound kernel on "
            "both follows the t_hw ratio):", "",
            "| operator | cases | time ratio | large cases (t_hw >= 20 µs) | their time ratio | t_hw ratio |",
            "|---|---|---|---|---|---|"]
    out += [f"| {op} | {c['cases']} | {f(c['time_910b2_over_950pr'])} | {c['large_cases']} | "
            f"{f(c['large_time_910b2_over_950pr'])} | {f(c['t_hw_910b2_over_950pr'])} |" for op, c in cross.items()]
    return "\n".join(out) + "\n"


def write_profile(chip: str, r: dict) -> None:
    """Put the fitted values, the weights and the bands into the chip profile's `cost:` section."""
    import yaml

    path = REPO / "copilot" / "chips" / f"{chip}.yaml"
    text = path.read_text()
    src = (f"fitted by bench/calibrate.py on {r['cases']} public CANN-Bench {chip} cases "
           f"({len(r['operators'])} operators, single vendor kernel, real measurements; calibration kernels "
           f"where they passed the task)")
    notes = {"launch_us": f"; at most the fastest public measurement on the chip, {r['launch_ceiling_us']} µs",
             "dma_latency_us": "; from the latencies on each case's critical path (the sweep's run without latency)"}
    for k, v in r["params"].items():
        text = re.sub(rf"^(  {k}: )\{{value: [^,]+, source: \"[^\"]*\"\}}", lambda m: f'{m.group(1)}{{value: {v}, '
                      f'source: "{src}{notes.get(k, "")}"}}', text, flags=re.M)
    text = re.sub(r"\n  vector_weights:.*?(?=\n  \S|\n\S|\Z)", "", text, flags=re.S)
    text = re.sub(r"\n  est_band:.*?(?=\n  \S|\n\S|\Z)", "", text, flags=re.S)
    weights = ", ".join(f'"{k}": {v}' for k, v in sorted(r["weights"].items()))
    bands = ", ".join(f"{k}: {v}" for k, v in r["bands"].items())
    text = text.rstrip("\n") + (f"\n  vector_weights: {{value: {{{weights}}}, source: \"{src}; cycles per "
                                f"256-B repeat, Add = 1\"}}\n  est_band: {{value: {{{bands}}}, source: \"bench/calibrate.py: held-out "
                                f"residuals (leave one operator out) per bound class, 80th percentile of "
                                f"|ln(est/measured)|; docs/cost-model.md\"}}\n")
    yaml.safe_load(text)
    path.write_text(text)


def verify(args) -> int:
    """Re-run the emulator with the chip profile as it is now on a few cases and compare with the
    fit's re-timed figure for them (the fit's re-timing is a model of the timeline, not the timeline)."""
    from copilot.backends import sim
    from copilot.costmodel.estimate import estimate_case, output_shapes
    from copilot.tasks import load_task

    fit = json.loads((OUT / "fit.json").read_text())["results"][args.chip]
    pred = {(f["op"], f["case"]): f for f in fit["fitted_cases"]}
    rows = []
    for spec in args.cases.split(","):
        t, _, cid = spec.partition(":")
        task = load_task(CANNBENCH / "tasks" / t)
        case, op = task.case(cid), t.split("/")[1]
        outs = output_shapes(task, case)
        b = sim.build(kernel_for(op, args.chip)[0], task, list(case.dtypes) + [o.dtype for o in outs], args.chip)
        e = estimate_case(b, task, case, args.chip, outs) if b.ok else None
        f = pred.get((op, cid), {})
        rows.append({"op": op, "case": cid, "emulator_us": e.time_us if e else None, "refit_us": f.get("est_us"),
                     "measured_us": f.get("measured_us"), "band": e.band if e else None,
                     "bound": e.bottleneck if e else None})
        print(rows[-1], file=sys.stderr, flush=True)
    (OUT / f"verify-{args.chip.lower()}.json").write_text(json.dumps(rows, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="estimate our kernels on the eligible public cases, cache the counts")
    s.add_argument("--chip", default="910B2", choices=sorted(CHIPS))
    s.add_argument("--tasks", default="", help="comma-separated level/op (default: every lowered task)")
    s.add_argument("--fresh", action="store_true", help="ignore the cache")
    s.add_argument("--part", default="", help="name of this process's cache file (sweeps side by side)")
    f = sub.add_parser("fit", help="fit parameters and weights from the cached counts; validate held out")
    f.add_argument("--chips", default="910B2,950PR")
    f.add_argument("--write", action="store_true", help="write the fitted values and bands to the chip profiles")
    f.add_argument("--before", default="", help="a previous fit.json: its held-out figures beside the new ones in fit.md")
    k = sub.add_parser("check-kernels", help="check --cases all of the calibration kernels on their public tasks")
    k.add_argument("--chips", default="910B2,950PR")
    k.add_argument("--ops", default="", help="comma-separated operators (default: every calibration kernel)")
    v = sub.add_parser("verify", help="re-run a few cases on the emulator with the written profile")
    v.add_argument("--chip", default="910B2", choices=sorted(CHIPS))
    v.add_argument("--cases", default="level1/sigmoid:1,level1/sigmoid:5,level1/gelu:2,level2/softmax:2,"
                   "level2/rms_norm:2,level1/mish:2,level2/apply_adam_w:3,level2/group_norm:2")
    args = ap.parse_args()
    if args.cmd == "verify":
        return verify(args)
    if args.cmd == "sweep":
        return sweep(args)
    if args.cmd == "check-kernels":
        return check_kernels(args)
    return fit_main(args)


if __name__ == "__main__":
    sys.exit(main())
