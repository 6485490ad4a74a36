"""Hostile kernels are contained: each is reported with its id and the test process survives."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel, run  # noqa: E402
from copilot.backends.sim.build import build  # noqa: E402  (source_policy=False: the layers behind the scan)
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.sandbox import Limits, sandbox_capabilities  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"), pytest.mark.slow]

HOSTILE = Path(__file__).parent / "kernels" / "hostile"
SECRET = "sk-cannpilot-test-secret-0123456789"

EXPECTED = {
    "infinite_loop": "RUN.TIMEOUT",
    "huge_alloc": "RUN.MEMORY",
    "null_deref": "RUN.CRASH",
    "fork_bomb": "RUN.CRASH",
    "gm_write_far": "RUN.CRASH",
    "gm_write_past_end": "RUN.INTEGRITY",      # any raw GM access faults on the kernel's view (layer 9)
}


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


def _small_float_case(task):
    return next(c for c in task.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_kernel_is_refused_before_compiling(relu, name):
    report = check_kernel(HOSTILE / f"{name}.cpp", relu, cases="1")
    assert not report.compiled and "SEC.SOURCE" in {d.id for d in report.diagnostics}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_kernel_is_contained_and_reported_by_the_runtime(relu, name):
    """The layers behind the source scan (seccomp, limits, guard pages), with the scan off."""
    case = _small_float_case(relu)
    inputs = make_inputs(relu, case)
    ref = reference(relu, case, inputs)
    b = build(HOSTILE / f"{name}.cpp", relu, ["float32", "float32"], source_policy=False)
    assert b.ok, [d.message for d in b.diagnostics]
    r = run(b, relu, case, inputs, outputs=ref.outputs, limits=Limits(wall_seconds=5))
    assert not r.ok
    ids = {d.id for d in r.diagnostics}
    assert EXPECTED[name] in ids, [(d.id, d.message) for d in r.diagnostics]
    assert os.getpid() > 0   # still here


def test_candidate_cannot_see_api_keys(relu, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    case = _small_float_case(relu)
    inputs = make_inputs(relu, case)
    ref = reference(relu, case, inputs)
    b = build(HOSTILE / "env_read.cpp", relu, ["float32", "float32"], source_policy=False)
    assert b.ok, [d.message for d in b.diagnostics]
    r = run(b, relu, case, inputs, outputs=ref.outputs)
    assert "OPENAI_API_KEY=(none)" in r.stdout
    assert SECRET not in r.stdout and SECRET not in r.extra.get("stderr", "")
    parent = next(line for line in r.stdout.splitlines() if line.startswith("parent environ:"))
    names = {kv.split("=", 1)[0] for kv in parent.split(":", 1)[1].split() if "=" in kv}
    assert names <= {"PATH", "LANG", "HOME", "TMPDIR"}   # the launcher sees the scrubbed environment only
    report = check_kernel(HOSTILE / "env_read.cpp", relu, cases=case.id)
    assert not report.compiled      # getenv and /proc paths are refused before compiling
    assert SECRET not in json.dumps(report.to_json())


def test_sandbox_capabilities_describe_this_machine():
    caps = sandbox_capabilities()
    for key in ("scrubbed_env", "rlimits", "network_namespace", "drop_to_nobody", "seccomp", "notes"):
        assert key in caps
    assert caps["scrubbed_env"] is True
