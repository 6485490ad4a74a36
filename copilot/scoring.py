"""CANN-Bench's own score: HAP per case, EachOperatorScore, level and total scores.

Formulas of the public specification (`docs/spec/benchmark_spec.md`):

- §4.2 Eq. 3, the hardware-anchored performance score of case i (HAP):
  `score_i = (T_base - T_hw) / ((T_cand - T_hw) + (T_base - T_hw))`, with `baseline_perf_us`
  and `t_hw_us` of `metadata/<hardware>.json`.
- §4.2 Eq. 4, with (w_c, w_f, w_p) = (0.2, 0.3, 0.5):
  `EachOperatorScore = [w_c * d_cr + sum_i d_prec_i * (w_f + w_p * score_i) / N] * 100`,
  `d_cr = (N - N_cr_fail) / N` once the submission compiles, 0 when it does not (§4.3: then every
  case term is 0 too); N = the number of cases.
- §4.3: a case with a non-precision error (run error, timeout, wrong number/shape of outputs,
  non-contiguous output) costs w_c / N and earns no precision or performance term; a precision
  failure earns nothing but costs no compile/runtime term.
- §4.2 Eq. 5: a level's score is the sum of its operators' scores, the total the sum of all.

Our readings where the spec is silent (docs/precision.md, "Scoring"):
- T_cand below T_hw (an estimate under the hardware bound) is taken as T_hw (score 1.0): the
  bound is a lower bound, so such a figure is a cost-model error, not a faster kernel.
- T_base == T_hw (one public case): the score is 1.0 at the bound and 0.0 above it.
- a case the harness could not judge (its golden over the oracle's memory budget) earns no term
  and costs none; the operator's score is then a lower bound and says so (`unjudged`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from copilot.errors import BadInput

W_COMPILE, W_PRECISION, W_PERF = 0.2, 0.3, 0.5
LEVELS = ("level1", "level2", "level3", "level4")

# Per-case outcomes, as §4.3 counts them.
PASSED = "passed"                   # precision gate passed: w_f + w_p * score_i
PRECISION_FAIL = "precision_fail"   # numbers wrong: no term, no deduction
RUNTIME_FAIL = "runtime_fail"       # non-precision error: costs w_c / N
UNJUDGED = "unjudged"               # the harness could not judge it (our reading: no term)
OUTCOMES = (PASSED, PRECISION_FAIL, RUNTIME_FAIL, UNJUDGED)


@dataclass(frozen=True)
class Baseline:
    baseline_us: float
    t_hw_us: float


def metadata_path(suite: Path, chip: str) -> Path:
    """`metadata/<chip>.json` of a suite in the public layout (chip name case-insensitive)."""
    meta = Path(suite) / "metadata"
    want = chip.lower().replace("_", "")
    if meta.is_dir():
        for p in sorted(meta.glob("*.json")):
            if p.stem.lower().replace("_", "") == want:
                return p
    have = ", ".join(sorted(p.stem for p in meta.glob("*.json"))) if meta.is_dir() else "none"
    raise BadInput(f"{meta}: no baseline file for chip {chip} (have: {have})")


def load_baselines(suite: Path, chip: str) -> dict[str, dict[str, dict[str, Baseline]]]:
    """level -> operator -> case id -> Baseline, from `metadata/<chip>.json`."""
    path = metadata_path(suite, chip)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path}: not readable JSON ({exc})") from None
    out: dict[str, dict[str, dict[str, Baseline]]] = {}
    for level, ops in doc.items():
        if level.startswith("_") or not isinstance(ops, dict):
            continue
        for op, cases in ops.items():
            for cid, entry in cases.items():
                try:
                    b = Baseline(float(entry["baseline_perf_us"]), float(entry["t_hw_us"]))
                except (KeyError, TypeError, ValueError):
                    raise BadInput(f"{path}: {level}/{op} case {cid} lacks baseline_perf_us/t_hw_us") from None
                out.setdefault(level, {}).setdefault(op, {})[str(cid)] = b
    return out


def level_of(task_path: Path) -> str:
    """The level directory a task sits in (`level1`..`level4`), or '' outside that layout."""
    for part in reversed(Path(task_path).parts):
        if re.fullmatch(r"level\d+", part):
            return part
    return ""


def hap(t_cand_us: float, base: Baseline) -> float:
    """The hardware-anchored performance score of one case (§4.2 Eq. 3)."""
    if t_cand_us is None or not t_cand_us > 0:
        raise ValueError(f"HAP needs a positive candidate time, got {t_cand_us!r}")
    t = max(t_cand_us, base.t_hw_us)          # never better than the hardware bound (module doc)
    num = base.baseline_us - base.t_hw_us
    den = (t - base.t_hw_us) + num
    if den <= 0:                              # T_base == T_hw and the candidate at the bound
        return 1.0
    return max(0.0, num / den)


@dataclass
class CaseScore:
    id: str
    outcome: str                     # one of OUTCOMES
    hap: float | None = None         # passed cases with a time
    t_cand_us: float | None = None   # ESTIMATE on sim
    baseline_us: float | None = None
    t_hw_us: float | None = None
    reason: str = ""
    est_band: float | None = None    # the estimate's error band (fraction), when the chip has one
    hap_band: tuple[float, float] | None = None   # HAP at the slow and the fast end of the band

    def to_json(self) -> dict:
        return {"id": self.id, "outcome": self.outcome, "hap": self.hap, "t_cand_us": self.t_cand_us,
                "est_band": self.est_band, "hap_band": list(self.hap_band) if self.hap_band else None,
                "baseline_us": self.baseline_us, "t_hw_us": self.t_hw_us, "reason": self.reason}


@dataclass
class OperatorScore:
    task: str
    level: str
    compiled: bool
    cases: list[CaseScore] = field(default_factory=list)
    n: int = 0                       # N of Eq. 4: the task's number of cases
    reason: str = ""                 # why it scored 0 (did not load / lower / compile)

    @property
    def passed(self) -> int:
        return sum(c.outcome == PASSED for c in self.cases)

    @property
    def runtime_failures(self) -> int:
        return sum(c.outcome == RUNTIME_FAIL for c in self.cases)

    @property
    def unjudged(self) -> int:
        return sum(c.outcome == UNJUDGED for c in self.cases)

    @property
    def compile_runtime(self) -> float:
        """δ_compile/runtime of Eq. 4."""
        if not self.compiled or self.n == 0:
            return 0.0
        return (self.n - self.runtime_failures) / self.n

    @property
    def score(self) -> float:
        """EachOperatorScore (§4.2 Eq. 4), 0..100."""
        if not self.compiled or self.n == 0:
            return 0.0
        perf = sum(W_PRECISION + W_PERF * (c.hap or 0.0) for c in self.cases if c.outcome == PASSED)
        return (W_COMPILE * self.compile_runtime + perf / self.n) * 100.0

    def to_json(self) -> dict:
        return {"task": self.task, "level": self.level, "compiled": self.compiled, "n": self.n,
                "passed": self.passed, "runtime_failures": self.runtime_failures,
                "unjudged": self.unjudged, "compile_runtime": self.compile_runtime,
                "score": self.score, "reason": self.reason,
                "cases": [c.to_json() for c in self.cases]}


def case_score(case_id: str, outcome: str, t_cand_us: float | None, base: Baseline | None,
               reason: str = "", band: float | None = None) -> CaseScore:
    """One case's entry: its HAP when it passed and has a time and a baseline; with the estimate's
    band, the HAP at both ends of it too."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown case outcome {outcome!r}")
    c = CaseScore(str(case_id), outcome, reason=reason)
    if base is not None:
        c.baseline_us, c.t_hw_us = base.baseline_us, base.t_hw_us
    if outcome == PASSED:
        c.t_cand_us = t_cand_us
        if t_cand_us and base is not None:
            c.hap = hap(t_cand_us, base)
            if band is not None:
                c.est_band = band
                c.hap_band = (hap(t_cand_us * (1 + band), base), hap(t_cand_us / (1 + band), base))
    return c


def suite_scores(ops: list[OperatorScore]) -> dict:
    """Level scores and the total (§4.2 Eq. 5), with each level's maximum (100 per operator)."""
    levels: dict[str, dict] = {}
    for op in ops:
        lv = levels.setdefault(op.level or "?", {"operators": 0, "score": 0.0, "max": 0.0,
                                                 "compiled": 0, "cases": 0, "passed": 0})
        lv["operators"] += 1
        lv["score"] += op.score
        lv["max"] += 100.0
        lv["compiled"] += int(op.compiled)
        lv["cases"] += op.n
        lv["passed"] += op.passed
    ordered = {k: levels[k] for k in sorted(levels)}
    return {"levels": ordered, "total": sum(v["score"] for v in ordered.values()),
            "max": sum(v["max"] for v in ordered.values())}


# ------------------------------------------------------------------- a session's candidates

def task_baselines(task_path, chip: str) -> dict[str, Baseline]:
    """Case id -> Baseline of a task inside a CANN-Bench layout (`<suite>/level<N>/<task>`), {}
    for any other task or chip without a metadata file."""
    p = Path(task_path) if task_path else Path()
    level = level_of(p)
    suite = p.parent.parent
    if not level or not (suite / "metadata").is_dir():
        return {}
    try:
        return load_baselines(suite, chip).get(level, {}).get(p.name, {})
    except BadInput:
        return {}


def candidate_hap(cases: list[dict], baselines: dict[str, Baseline]) -> float | None:
    """The mean HAP over a candidate's timed (performance) cases that have a baseline; None when
    none has. A summary for the leaderboard, not a CANN-Bench quantity."""
    haps = [hap(c["est_us"], baselines[str(c["id"])]) for c in _timed_with_baseline(cases, baselines)]
    return sum(haps) / len(haps) if haps else None


def _timed_with_baseline(cases: list[dict], baselines: dict[str, Baseline]) -> list[dict]:
    return [c for c in cases if c.get("role") == "performance" and c.get("est_us") and c.get("passed") is not False
            and str(c.get("id")) in baselines]


def candidate_hap_band(cases: list[dict], baselines: dict[str, Baseline]) -> tuple[float, float] | None:
    """The mean HAP at the two ends of each case's error band (`est_band`: the measured time lies in
    [est / (1 + b), est * (1 + b)] for 80 % of held-out cases): (low, high). None when no timed case
    has a baseline; a case without a band counts at its estimate."""
    timed = _timed_with_baseline(cases, baselines)
    if not timed:
        return None
    lo = [hap(c["est_us"] * (1 + (c.get("est_band") or 0.0)), baselines[str(c["id"])]) for c in timed]
    hi = [hap(c["est_us"] / (1 + (c.get("est_band") or 0.0)), baselines[str(c["id"])]) for c in timed]
    return sum(lo) / len(lo), sum(hi) / len(hi)


def vendor_verdict(est_us: float, band: float | None, baseline_us: float) -> str:
    """`faster` / `slower` than the vendor's measured time only when the whole band is on that side;
    `within the band` otherwise (and for an estimate without a band: an uncalibrated chip)."""
    if band is None:
        return "within the band"
    if est_us * (1 + band) < baseline_us:
        return "faster"
    if est_us / (1 + band) > baseline_us:
        return "slower"
    return "within the band"


def session_score(cases: list[dict], baselines: dict[str, Baseline]) -> tuple[float, int]:
    """EachOperatorScore of a candidate from the cases a session judged (its correctness and
    performance cases), the task's other cases counted as not judged: a lower bound of the
    operator's score. Only the task's own cases count: a quick-tier twin (`5q`) has no baseline
    and is not a case of the benchmark. Returns (score, cases judged)."""
    by_id: dict[str, dict] = {}
    for c in cases:
        if baselines and str(c.get("id")) not in baselines:
            continue
        e = by_id.setdefault(str(c.get("id")), {"passed": True, "est": None})
        e["passed"] = e["passed"] and c.get("passed") is not False
        e["est"] = c.get("est_us") or e["est"]
    op = OperatorScore("", "", True, n=max(len(baselines), len(by_id)))
    for cid, e in by_id.items():
        op.cases.append(case_score(cid, PASSED if e["passed"] else PRECISION_FAIL, e["est"], baselines.get(cid)))
    return op.score, len(by_id)
