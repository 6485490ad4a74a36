"""The sim backend: AscendC kernels built with g++ against our clean-room API and run on the CPU.

`build` compiles a candidate (cached), `run` runs one case in the sandbox, `check_kernel` does both
over a task's cases and judges the outputs against the oracle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from copilot.backends.base import Build, Run
from copilot.backends.sim.build import build as _build
from copilot.backends.sim.runner import BASE_TIMEOUT_S, LOAD_FACTOR_CAP, SECONDS_PER_ELEMENT
from copilot.backends.sim.runner import run as _run
from copilot.chips import DEFAULT_CHIP, load_chip
from copilot.diagnostics import Diagnostic
from copilot.errors import BadInput

NAME = "sim"


def build(source, task, dtypes: list[str], chip=DEFAULT_CHIP, **kw) -> Build:
    """Compile a candidate (path or text) for `task` with these dtypes (inputs then outputs)."""
    return _build(source, task, dtypes, chip, **kw)


def run(build: Build, task, case, inputs, **kw) -> Run:
    """Run one case of a built candidate in the sandbox (limits scaled to the case by default)."""
    from copilot.backends.sim.runner import default_limits

    if kw.get("limits") is None:
        kw["limits"] = case_limits(case, kw.get("outputs") or ())
    if not kw.get("block_cpu_seconds"):
        # A block gets 30 s of CPU (a hung block is found early), plus what the case's size adds; CPU
        # time does not stretch with the host's load, so the limit before the load factor (half the
        # launcher's CPU limit, `case_limits`) is the one that counts here.
        lim = kw["limits"]
        wall = min(lim.wall_seconds, lim.cpu_seconds / 2)
        kw["block_cpu_seconds"] = max(1, int(max(min(wall, 30), wall - default_limits().wall_seconds)))
    return _run(build, task, case, inputs, **kw)



def case_timeout(case, outputs=()) -> float:
    """Wall-clock seconds one case may run on an idle host: the base (`CANNPILOT_SIM_TIMEOUT`,
    default `BASE_TIMEOUT_S`) plus `SECONDS_PER_ELEMENT` per input and output element."""
    import os

    base = float(os.environ.get("CANNPILOT_SIM_TIMEOUT", BASE_TIMEOUT_S))
    n = int(getattr(case, "total_numel", 0)) + sum(math.prod(o.shape) for o in outputs)
    return base + SECONDS_PER_ELEMENT * n


def load_factor() -> float:
    """How much the host's load stretches an emulation's wall clock now: the 1-minute load average
    per core this process may use, from 1 (a host no busier than its cores) to `LOAD_FACTOR_CAP`."""
    import os

    try:
        load, cores = os.getloadavg()[0], len(os.sched_getaffinity(0))
    except (OSError, AttributeError):     # no load average on this platform: an idle host's limit
        return 1.0
    return min(LOAD_FACTOR_CAP, max(1.0, load / max(1, cores)))


def case_limits(case, outputs=(), timeout: float | None = None):
    """The sandbox limits for one case: wall clock `case_timeout` times `load_factor` (or exactly
    `timeout`), the launcher's CPU limit at least twice the wall clock before the load factor (CPU
    time does not stretch with the load: a kernel that spins is stopped as early on a busy host)."""
    import dataclasses

    from copilot.backends.sim.runner import default_limits

    lim = default_limits()
    wall = float(timeout) if timeout else max(lim.wall_seconds, case_timeout(case, outputs))
    scaled = wall if timeout else wall * load_factor()
    return dataclasses.replace(lim, wall_seconds=scaled, cpu_seconds=max(lim.cpu_seconds, int(2 * wall)))


@dataclass
class CaseResult:
    id: str
    passed: bool | None               # None: a performance case, timed but not judged
    mere: float | None
    mare: float | None
    failure_class: str | None
    message: str
    block_dim: int = 0
    wall_seconds: float = 0.0
    estimate: object | None = None    # copilot.costmodel.Estimate: the kernel time ESTIMATE

    def to_json(self) -> dict:
        d = {"id": self.id, "passed": self.passed, "mere": _finite(self.mere), "mare": _finite(self.mare),
             "failure_class": self.failure_class}
        d.update(_estimate_json(self.estimate))
        return d


def _estimate_json(est) -> dict:
    if est is None:
        return {"est_us": None, "t_hw_us": None, "roofline_fraction": None, "roofline_terms": None, "pipes": None,
                "bottleneck": None, "timing": "estimate", "est_band": None}
    return {"est_us": est.time_us, "est_band": getattr(est, "band", None), "t_hw_us": est.t_hw_us,
            "roofline_fraction": est.roofline_fraction,
            "roofline_terms": est.roofline_terms,
            "pipes": {"MTE2": est.pipes_us.get("MTE2", 0.0), "MTE3": est.pipes_us.get("MTE3", 0.0),
                      "V": est.pipes_us.get("V", 0.0), "S": est.pipes_us.get("S", 0.0),
                      **{p: est.pipes_us[p] for p in ("M", "MTE1", "FIX") if est.pipes_us.get(p)}},   # the cube core's
            "hbm_us": est.hbm_us, "bottleneck": est.bottleneck, "timing": "estimate"}


@dataclass
class CheckReport:
    compiled: bool
    correct: bool
    chip: str
    backend: str
    diagnostics: list[Diagnostic]
    cases: list[CaseResult]
    kernel: str = ""
    task: str = ""
    build_seconds: float = 0.0
    build_cached: bool = True
    run_seconds: float = 0.0
    raw_output: str = ""
    source_lines: list[str] = field(default_factory=list, repr=False)

    def to_json(self) -> dict:
        return {
            "compiled": self.compiled, "correct": self.correct, "chip": self.chip, "backend": self.backend,
            "diagnostics": [{"id": d.id, "severity": d.severity, "message": d.message, "line": d.line,
                             "hint": d.hint} for d in self.diagnostics],
            "cases": [c.to_json() for c in self.cases],
            "summary": self.summary(),
        }

    def summary(self) -> dict:
        """Geometric means of the estimates over the timed cases (timing is always an estimate)."""
        from copilot.costmodel import geomean

        timed = [c.estimate for c in self.cases if c.estimate is not None]
        geo = (lambda xs: geomean(xs) if xs else None)
        bands = [e.band for e in timed if getattr(e, "band", None) is not None]
        return {"timed_cases": len(timed), "timing": "estimate",
                "geomean_est_us": geo([e.time_us for e in timed]),
                "est_band": max(bands) if bands and len(bands) == len(timed) else None,
                "geomean_roofline_fraction": geo([e.roofline_fraction for e in timed if e.roofline_fraction])}


def _finite(x):
    if x is None:
        return None
    try:
        return None if math.isnan(x) or math.isinf(x) else float(x)
    except TypeError:
        return None


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in diags:
        key = (d.id, d.line) if d.line else (d.id, d.line, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def check_kernel(kernel_path, task, chip: str = DEFAULT_CHIP, cases: str = "quick", *, seed: int = 0,
                 timeout: float | None = None, progress: Callable[[str], None] | None = None) -> CheckReport:
    """Build the kernel, run the selected cases, judge each against the oracle.

    Raises BadInput for a missing kernel file, an unknown task, chip or case spec.
    """
    from copilot.oracle import make_inputs, reference
    from copilot.tasks import load_task, select_cases
    path = Path(kernel_path)
    if not path.is_file():
        raise BadInput(f"{kernel_path}: no such kernel file")
    profile = load_chip(chip)
    if not hasattr(task, "cases"):
        task = load_task(task)
    selected = select_cases(task, cases)
    perf_only = cases == "perf"
    say = progress or (lambda _msg: None)
    source_lines = path.read_text(errors="replace").splitlines()

    report = CheckReport(compiled=True, correct=True, chip=profile.name, backend=NAME, diagnostics=[],
                         cases=[], kernel=str(path), task=task.name, source_lines=source_lines)
    diags: list[Diagnostic] = []
    builds: dict[tuple, Build] = {}
    from copilot.oracle import CaseTooLarge, run_verdict

    if perf_only:
        return _check_perf(path, task, selected, profile, report, builds, say)
    for case in selected:
        inputs = make_inputs(task, case, seed)
        try:
            ref = reference(task, case, inputs)
        except CaseTooLarge as e:
            report.cases.append(CaseResult(case.id, False, None, None, "too_large", str(e)))
            say(f"case {case.id}: not judged ({e})")
            continue
        out_dtypes = [o.dtype for o in ref.outputs]
        key = tuple(case.dtypes) + tuple(out_dtypes)
        b = builds.get(key)
        if b is None:
            say(f"building {path.name} for {'/'.join(dict.fromkeys(k for k in key if k))} on {profile.name}")
            b = build(path, task, list(case.dtypes) + out_dtypes, profile)
            builds[key] = b
            report.build_seconds += b.seconds
            report.build_cached = report.build_cached and b.cached
            diags += b.diagnostics
            if b.raw_output:
                report.raw_output = b.raw_output
        if not b.ok:
            report.compiled = False
            report.correct = False
            break
        say(f"running {case.label()}")
        r = run(b, task, case, inputs, outputs=ref.outputs, chip=profile,
                limits=case_limits(case, ref.outputs, timeout))
        report.run_seconds += r.wall_seconds
        diags += r.diagnostics
        verdict = run_verdict(task, ref, r, inputs, case)
        passed = bool(verdict.passed)
        message = verdict.message
        failure = verdict.failure_class
        est = r.extra.get("estimate") if passed else None
        if est is not None:
            from copilot.costmodel import with_roofline
            from copilot.costmodel.estimate import case_roofline

            est = with_roofline(est, *case_roofline(task, case, ref.outputs, profile))
        report.cases.append(CaseResult(case.id, passed, verdict.mere, verdict.mare, failure, message,
                                       r.block_dim, r.wall_seconds, est))
        say(f"case {case.id}: {'pass' if passed else 'FAIL'} ({r.wall_seconds:.2f} s)")
    report.diagnostics = _dedupe(diags)
    report.correct = (report.compiled and bool(report.cases) and all(c.passed for c in report.cases)
                      and not any(d.is_error for d in report.diagnostics))
    return report


def _check_perf(path, task, selected, profile, report, builds, say) -> "CheckReport":
    """`--cases perf`: time the performance cases on the first, middle and last blocks with real
    inputs, and judge the same run on the elements those blocks wrote (a kernel cannot tell a
    timing run from a judged one). A case too large for the oracle is timed count-only, unjudged."""
    from copilot.backends.sim.integrity import timed_case
    from copilot.costmodel.estimate import build_for_case, estimate_case
    from copilot.oracle import CaseTooLarge, make_inputs, reference

    for case in selected:
        b, outs, fresh = build_for_case(path, task, case, profile, builds)
        if fresh:
            say(f"built {path.name} for {'/'.join(dict.fromkeys(d for d in case.dtypes if d))} on {profile.name}")
            report.build_seconds += b.seconds
            report.build_cached = report.build_cached and b.cached
            report.diagnostics += b.diagnostics
            report.raw_output = b.raw_output or report.raw_output
        if not b.ok:
            report.compiled = report.correct = False
            return report
        inputs = make_inputs(task, case, 0)
        try:
            ref = reference(task, case, inputs)
        except CaseTooLarge as e:
            say(f"estimating {case.label()} (count-only: first, middle and last blocks, no data moved)")
            est = estimate_case(b, task, case, profile.name, outs)
            message = f"timed count-only, not judged ({e})" if est else \
                "no estimate: the run failed or used an API the cost model cannot time"
            report.cases.append(CaseResult(case.id, None, None, None, None, message, estimate=est))
            continue
        say(f"estimating {case.label()} (first, middle and last blocks on real inputs, judged on what they wrote)")
        t = timed_case(b, task, case, profile.name, inputs, ref)
        report.diagnostics += t.diagnostics
        message = t.message if t.estimate or not t.passed else \
            "no estimate: the run used an API the cost model cannot time"
        report.cases.append(CaseResult(case.id, t.passed, None, None, None if t.passed else "sampled_blocks",
                                       message, estimate=t.estimate))
    report.diagnostics = _dedupe(report.diagnostics)
    report.correct = report.compiled and all(c.estimate is not None and c.passed is not False
                                             for c in report.cases)
    return report


__all__ = ["NAME", "Build", "Run", "CaseResult", "CheckReport", "build", "run", "check_kernel", "case_limits",
           "case_timeout"]
