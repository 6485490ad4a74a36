"""Run a built candidate on the device (in a child process: a crash or a hang of the device stays
there), judge it with our precision code, time it with the profiler.

`run` is the backend contract (one case). `check_kernel` runs a task's cases like the sim
backend's, judging against the same fp64 oracle, and times the timed cases on fresh inputs; every
time it reports is labelled `measured`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import torch

from copilot.backends.base import Run
from copilot.backends.npu.build import NpuBuild, NpuConfig
from copilot.backends.npu.profile import parse as parse_profile
from copilot.diagnostics import Diagnostic

REPO_ROOT = Path(__file__).resolve().parents[3]

# Worker failures as diagnostics: the id, and what the engineer should do about it.
FAILURES = {
    "runtime_error": ("RUN.NPU_ERROR", "the operator raised on the device; read the message"),
    "not_a_tensor": ("SUB-BEH-007", "return the torch.Tensor the kernel wrote"),
    "non_contiguous": ("RUN.NON_CONTIGUOUS", "write the result into a contiguous output in the kernel"),
    "import_failed": ("EVAL-CANN-004", "the wheel must import as cann_bench"),
    "no_callable": ("EVAL-CANN-005", "cann_bench must expose the operator as a function"),
    "cpu_fallback": ("SUB-BEH-004", "compute on the NPU in the submitted kernel"),
    "no_npu_kernel": ("SUB-BEH-004", "the call must launch the submitted kernel"),
    "kernel_not_run": ("SUB-BEH-004", "the call must launch the submitted kernel"),
    "no_profile": ("RUN.NPU_PROFILE", "the profiler wrote nothing; check torch_npu and the CANN install"),
}


def _env(build: NpuBuild) -> dict:
    env = dict(os.environ)
    paths = [str(build.site), str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if build.opp:
        vendors = sorted((build.opp / "vendors").glob("*")) if (build.opp / "vendors").is_dir() else []
        if vendors:
            env["ASCEND_CUSTOM_OPP_PATH"] = os.pathsep.join([str(v) for v in vendors] +
                                                             ([env["ASCEND_CUSTOM_OPP_PATH"]] if env.get("ASCEND_CUSTOM_OPP_PATH") else []))
            libs = [str(v / "op_api" / "lib") for v in vendors]
            env["LD_LIBRARY_PATH"] = os.pathsep.join(libs + ([env["LD_LIBRARY_PATH"]] if env.get("LD_LIBRARY_PATH") else []))
    return env


def _fail(kind: str, message: str, wall: float = 0.0, raw: str = "") -> Run:
    ident, hint = FAILURES.get(kind, (kind, ""))
    return Run(ok=False, outputs=[], diagnostics=[Diagnostic(ident, "error", message, hint=hint, raw=raw)],
               wall_seconds=wall, timing="measured", extra={"failure": kind})


def run(build: NpuBuild, task, case, inputs: list, *, config: NpuConfig, timing: bool = False) -> Run:
    """One case on the device. With `timing`, also the §4.5 kernel time (median of the repeats)."""
    attrs = {k: v for k, v in case.attrs.items() if v is not None}
    with tempfile.TemporaryDirectory(prefix="cannpilot-npu-") as tmp:
        tmpd = Path(tmp)
        torch.save([t.contiguous() if isinstance(t, torch.Tensor) else t for t in inputs], tmpd / "inputs.pt")
        req = {"op": build.op, "device": config.device, "inputs": str(tmpd / "inputs.pt"), "attrs": attrs,
               "outputs": str(tmpd / "outputs.pt"), "result": str(tmpd / "result.json"), "timing": timing,
               "warmup": config.warmup, "repeat": config.repeat, "profile_dir": str(tmpd / "prof"),
               "flush_bytes": config.flush_bytes, "flush_n": config.flush_n}
        (tmpd / "request.json").write_text(json.dumps(req))
        t0 = time.monotonic()
        proc = subprocess.Popen([config.python, "-m", "copilot.backends.npu.worker", str(tmpd / "request.json")],
                                env=_env(build), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            _, stderr = proc.communicate(timeout=config.run_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)   # the worker and anything it started
            proc.communicate()
            return _fail_hang(config, time.monotonic() - t0)
        proc.stderr = stderr
        wall = time.monotonic() - t0
        if proc.returncode != 0 or not (tmpd / "result.json").is_file():
            tail = "\n".join((proc.stderr or "").strip().splitlines()[-15:])
            how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
            r = _fail("crash", f"the device process died ({how}): {tail.splitlines()[-1] if tail else 'no message'}",
                      wall, tail)
            r.diagnostics[0].id = "RUN.NPU_CRASH"
            r.diagnostics[0].hint = "a kernel fault or an out-of-bounds access on the device; check it on the emulator"
            return r
        res = json.loads((tmpd / "result.json").read_text())
        if not res["ok"]:
            return _fail(res["failure"], res["message"], wall)
        outputs = torch.load(tmpd / "outputs.pt")
        out = Run(ok=True, outputs=outputs, diagnostics=[], wall_seconds=wall, timing="measured")
        if timing:
            prof = parse_profile(Path(res["profile_dir"]), config.repeat, (build.op_type, build.entry))
            if prof.failure:
                bad = _fail(prof.failure, prof.message, wall)
                bad.outputs = outputs
                return bad
            out.time_us = prof.median_us
            out.extra = {"per_call_us": prof.per_call_us, "kernels": sorted({k.name for c in prof.calls for k in c})}
        return out


def _fail_hang(config: NpuConfig, wall: float) -> Run:
    r = _fail("hang", f"the device did not finish within {config.run_timeout:.0f} s (killed)", wall)
    r.diagnostics[0].id = "RUN.NPU_HANG"
    r.diagnostics[0].hint = "a wait that never completes (queue or flag) or an endless loop; run it on the emulator"
    return r


# ---------------------------------------------------------------- a task's cases, judged and timed

from dataclasses import dataclass, field  # noqa: E402

from copilot.backends.sim import CaseResult, CheckReport  # noqa: E402


@dataclass
class NpuCaseResult(CaseResult):
    measured_us: float | None = None
    per_call_us: list[float] = field(default_factory=list)

    def to_json(self) -> dict:
        d = super().to_json()
        d.update({"measured_us": self.measured_us, "per_call_us": self.per_call_us, "timing": "measured"})
        return d


@dataclass
class NpuCheckReport(CheckReport):
    def summary(self) -> dict:
        from copilot.costmodel import geomean

        xs = [c.measured_us for c in self.cases if getattr(c, "measured_us", None)]
        return {"timed_cases": len(xs), "timing": "measured", "geomean_measured_us": geomean(xs) if xs else None}


def check_kernel(kernel_path, task, chip: str = "910B2", cases: str = "quick", *, config: NpuConfig,
                 seed: int = 0, time_cases: bool = True, progress=None) -> NpuCheckReport:
    """Build through CANN, run the selected cases on the device, judge each against the fp64 oracle;
    time each passing case on fresh inputs (new values, new addresses every repeat) and judge that
    call's output again, so a cached or input-keyed result fails."""
    from copilot.backends.npu.build import build
    from copilot.errors import BadInput
    from copilot.oracle import CaseTooLarge, judge_case, make_inputs, reference
    from copilot.tasks import load_task, select_cases

    path = Path(kernel_path)
    if not path.is_file():
        raise BadInput(f"{kernel_path}: no such kernel file")
    if not hasattr(task, "cases"):
        task = load_task(task)
    say = progress or (lambda _m: None)
    report = NpuCheckReport(compiled=True, correct=True, chip=chip, backend="npu", diagnostics=[], cases=[],
                            kernel=str(path), task=task.name,
                            source_lines=path.read_text(errors="replace").splitlines())
    say(f"building {path.name} with CANN for {config.soc}")
    b = build(path, task, None, chip, config=config)
    report.build_seconds, report.build_cached, report.raw_output = b.seconds, b.cached, b.raw_output
    report.diagnostics = list(b.diagnostics)
    if not b.ok:
        report.compiled = report.correct = False
        return report
    for case in select_cases(task, cases):
        inputs = make_inputs(task, case, seed)
        try:
            ref = reference(task, case, inputs)
        except CaseTooLarge as e:
            report.cases.append(NpuCaseResult(case.id, False, None, None, "too_large", str(e)))
            continue
        say(f"running {case.label()} on the device")
        r = run(b, task, case, inputs, config=config)
        report.run_seconds += r.wall_seconds
        report.diagnostics += r.diagnostics
        if not r.ok:
            report.cases.append(NpuCaseResult(case.id, False, None, None, r.extra.get("failure", "run_error"),
                                              r.diagnostics[0].message if r.diagnostics else "failed"))
            continue
        v = judge_case(task, ref, r.outputs)
        result = NpuCaseResult(case.id, bool(v.passed), v.mere, v.mare, v.failure_class, v.message)
        if v.passed and time_cases:
            fresh = make_inputs(task, case, seed, fresh=True)
            say(f"timing {case.label()} ({config.warmup} warm-up, {config.repeat} repeats, fresh inputs)")
            t = run(b, task, case, fresh, config=config, timing=True)
            report.run_seconds += t.wall_seconds
            if not t.ok:
                report.diagnostics += t.diagnostics
                result.passed = False
                result.failure_class = t.extra.get("failure", "timing_failed")
                result.message = t.diagnostics[0].message if t.diagnostics else "timing failed"
            else:
                v2 = judge_case(task, reference(task, case, fresh), t.outputs)
                if not v2.passed:
                    result.passed = False
                    result.failure_class = v2.failure_class or "wrong_on_fresh_inputs"
                    result.message = f"wrong on fresh inputs (timing run): {v2.message}"
                else:
                    result.measured_us = t.time_us
                    result.per_call_us = t.extra.get("per_call_us", [])
        report.cases.append(result)
        say(f"case {case.id}: {'pass' if result.passed else 'FAIL'}"
            + (f", {result.measured_us:.2f} us measured" if result.measured_us else ""))
    report.correct = bool(report.cases) and all(c.passed for c in report.cases) and \
        not any(d.is_error for d in report.diagnostics)
    return report
