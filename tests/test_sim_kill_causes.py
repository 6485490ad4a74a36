"""A run that a limit of the sandbox stopped is reported as that limit, from what the sandbox
recorded (the run's cgroup, the launcher's own CPU-limit record, a block's CPU seconds), never
guessed from the signal; a genuine crash stays RUN.CRASH and a SIGKILL of no known cause says so."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import run  # noqa: E402
from copilot.backends.sim.build import build  # noqa: E402  (source_policy=False: the layers behind the scan)
from copilot.backends.sim.runner import (UNKNOWN_KILL_HINT, RUN_HINTS, _parse_result, _run_failures,  # noqa: E402
                                         launcher_stopped)
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.oracle.verdict import run_verdict  # noqa: E402
from copilot.sandbox import Limits, MemoryRecord, SandboxResult, run_sandboxed, sandbox_capabilities  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

KERNELS = Path(__file__).parent / "kernels" / "hostile" / "limits"
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")
needs_cgroup = pytest.mark.skipif(not sandbox_capabilities()["cgroup"], reason="no writable cgroup on this machine")


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


def _run(task, name: str, limits: Limits, **kw):
    case = next(c for c in task.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)
    inputs = make_inputs(task, case)
    ref = reference(task, case, inputs)
    b = build(KERNELS / f"{name}.cpp", task, ["float32", "float32"], source_policy=False)
    assert b.ok, [d.message for d in b.diagnostics]
    r = run(b, task, case, inputs, outputs=ref.outputs, limits=limits, **kw)
    assert not r.ok
    return r, run_verdict(task, ref, r, inputs, case)


def _errors(r) -> list[tuple[str, str]]:
    return [(d.id, d.message) for d in r.diagnostics if d.is_error]


# ---------------------------------------------------------------- real kernels

@needs_gxx
@needs_cgroup
def test_a_kernel_past_the_memory_cap_is_run_memory_with_the_cap_and_the_peak(relu):
    r, verdict = _run(relu, "memory_past_cap", Limits(wall_seconds=60, memory_bytes=192 << 20))
    mem = [m for i, m in _errors(r) if i == "RUN.MEMORY"]
    assert mem, _errors(r)
    assert "memory cap of" in mem[0] and "MiB" in mem[0] and "peak usage" in mem[0] and "OOM killer" in mem[0]
    assert not any(i == "RUN.CRASH" for i, _ in _errors(r)), _errors(r)
    assert verdict.failure_class == "RUN.MEMORY" and "memory cap" in verdict.message


@needs_gxx
def test_a_launcher_past_its_cpu_limit_is_run_timeout_naming_the_limit(relu):
    """The launcher replays the blocks' cost events: a kernel of endless tiny instructions keeps it
    busy until its CPU limit (lowered to 1 s; the block's stays at 60 s), which it records before it goes."""
    r, verdict = _run(relu, "launcher_cpu", Limits(wall_seconds=300, cpu_seconds=1), block_cpu_seconds=60)
    errors = _errors(r)
    assert [m for i, m in errors if i == "RUN.TIMEOUT" and "launcher used its 1 s of CPU time" in m], errors
    assert not any(i == "RUN.CRASH" for i, _ in errors), errors
    assert verdict.failure_class == "RUN.TIMEOUT"


@needs_gxx
def test_a_segfault_is_a_crash_and_names_no_limit(relu):
    r, verdict = _run(relu, "segfault", Limits(wall_seconds=60))
    errors = _errors(r)
    assert any(i == "RUN.CRASH" for i, _ in errors), errors
    assert not any(i in ("RUN.MEMORY", "RUN.TIMEOUT") for i, _ in errors), errors
    assert not any("SIGKILL" in m for _, m in errors), errors
    assert verdict.failure_class == "RUN.CRASH"


@needs_gxx
def test_a_sigkill_no_limit_accounts_for_says_cause_unknown(relu):
    r, _ = _run(relu, "self_kill", Limits(wall_seconds=60))
    crash = [d for d in r.diagnostics if d.is_error and d.id == "RUN.CRASH"]
    assert crash and "killed by SIGKILL (cause unknown)" in crash[0].message, _errors(r)
    assert crash[0].hint == UNKNOWN_KILL_HINT and "pointer arithmetic" not in crash[0].hint
    assert not any(d.id == "RUN.MEMORY" for d in r.diagnostics)


@needs_cgroup
def test_the_sandbox_reads_the_cgroup_memory_record(tmp_path):
    """run_sandboxed returns the cap, the peak and the OOM kills of the run's cgroup."""
    res = run_sandboxed([sys.executable, "-c", "b = bytearray(512 << 20)"], tmp_path,
                        Limits(wall_seconds=60, memory_bytes=96 << 20))
    assert res.memory is not None and res.memory.oom_kills and res.memory.oom_kills >= 1, res
    assert res.memory.cap_bytes == 96 << 20 and res.memory.peak_bytes >= 64 << 20
    ok = run_sandboxed([sys.executable, "-c", "pass"], tmp_path, Limits(wall_seconds=60))
    assert ok.returncode == 0 and ok.memory is not None and ok.memory.oom_kills == 0


# ---------------------------------------------------------------- the classification alone

def _result(*lines: str) -> dict:
    return _parse_result("\n".join(lines) + "\n")


def _sandbox(signal: int | None, memory: MemoryRecord | None = None) -> SandboxResult:
    return SandboxResult(None, signal, False, 1.0, "", "", memory=memory)


def test_a_killed_launcher_is_named_by_its_record_not_its_signal():
    cpu = launcher_stopped(_sandbox(9), _result("filter 1", "launcher_cpu_limit"), 433)
    assert cpu.id == "RUN.TIMEOUT" and "433 s of CPU time" in cpu.message
    oom = launcher_stopped(_sandbox(9, MemoryRecord(6 << 30, 6 << 30, 1)), _result("filter 1"), 433)
    assert oom.id == "RUN.MEMORY" and "6.00 GiB" in oom.message
    unknown = launcher_stopped(_sandbox(9, MemoryRecord(6 << 30, 1 << 30, 0)), _result("filter 1"), 433)
    assert unknown.id == "RUN.CRASH" and "killed by SIGKILL (cause unknown)" in unknown.message
    assert unknown.hint == UNKNOWN_KILL_HINT
    segv = launcher_stopped(_sandbox(11), _result("filter 1"), 433)
    assert segv.id == "RUN.CRASH" and "SIGSEGV" in segv.message and segv.hint == RUN_HINTS["RUN.CRASH"]


def test_a_killed_block_is_named_by_the_cgroup_or_its_cpu_seconds():
    block = _result("block 0 signal 9 SIGKILL 31.00", "block 1 signal 9 SIGKILL 0.20", "end ok")
    assert block["block_cpu"] == {0: 31.0, 1: 0.2}
    by_id = {d.id: d.message for d in _run_failures(block, set(), 30, False, MemoryRecord(None, None, 0))}
    assert "30 s of CPU time" in by_id["RUN.TIMEOUT"] and "[block 0]" in by_id["RUN.TIMEOUT"]
    assert "cause unknown" in by_id["RUN.CRASH"] and "[block 1]" in by_id["RUN.CRASH"]
    oom = _run_failures(_result("block 1 signal 9 SIGKILL 0.20", "end ok"), set(), 30, False,
                        MemoryRecord(256 << 20, 255 << 20, 1))
    assert [d.id for d in oom] == ["RUN.MEMORY"] and "256 MiB" in oom[0].message
    old = _result("block 2 signal 9 SIGKILL", "end ok")      # a launcher that gives no CPU figure
    assert [d.id for d in _run_failures(old, set(), 30, False)] == ["RUN.CRASH"]


@needs_gxx
@needs_cgroup
async def test_the_evolution_evaluator_names_the_memory_cap(relu, tmp_path, monkeypatch):
    """A candidate killed at the memory cap (lowered for the test) is a crash of the cascade whose
    case row and diagnostics say RUN.MEMORY and the cap, not RUN.CRASH."""
    import copilot.backends.sim.runner as runner
    from copilot.events import Candidate
    from copilot.evolution.evaluate import SimEvaluator

    monkeypatch.setattr(runner, "default_limits", lambda: Limits(wall_seconds=60, memory_bytes=192 << 20))
    code = (KERNELS / "memory_past_cap.cpp").read_text()
    ev = await SimEvaluator(workdir=tmp_path / "cands").evaluate(relu, Candidate("m1", code, 1, "llm"))
    assert ev.status == "crashed"
    row = next(c for c in ev.cases if c.get("passed") is False)
    assert row["failure_class"] == "RUN.MEMORY" and "memory cap of" in row["message"], row
    assert "RUN.MEMORY" in {d["id"] for d in ev.diagnostics}
    assert "RUN.CRASH" not in {d["id"] for d in ev.diagnostics}
