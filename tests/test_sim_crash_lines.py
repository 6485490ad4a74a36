"""A kernel that crashes gets the line it crashed at, and the emulated API it was in, as every other
rule breach does: the launcher's crash handler captures the frames, the runner resolves them with
the build's line tables. The frames come from the crashing process, so forged ones must not hurt."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel, crash_site, run  # noqa: E402
from copilot.backends.sim.build import build  # noqa: E402
from copilot.backends.sim.runner import collect_diagnostics  # noqa: E402
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None or shutil.which("addr2line") is None,
                                 reason="g++ and addr2line are required"), pytest.mark.slow]

CRASH = Path(__file__).parent / "kernels" / "crash"


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


def _page_sized_case(task):
    """A float32 case whose input fills whole pages: the byte before it is the guard page."""
    return next(c for c in task.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16
                and c.max_numel * 4 % 4096 == 0)


def _marked_line(path: Path) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "// CRASH" in text)


@pytest.mark.parametrize("name, ident, api, function", [
    ("view_without_buffer", "RUN.CRASH", "DataCopy", "relu_crash"),        # null + offset, faults in the API
    ("null_phys_addr", "RUN.CRASH", "", "KernelZero::Process"),           # null store in the kernel's own code
    ("halo_before_start", "L2.GM_BOUNDS", "DataCopy", "relu_crash"),       # the guard page before x, in the API
    ("raw_gm_store", "RUN.INTEGRITY", "", "relu_crash"),                   # a raw store to the output's view
    ("uncaught_throw", "RUN.CRASH", "", "relu_crash"),                     # std::terminate: the throw's line
])
def test_crash_is_reported_at_its_kernel_line(relu, name, ident, api, function):
    path = CRASH / f"{name}.cpp"
    report = check_kernel(path, relu, cases=_page_sized_case(relu).id)
    found = [d for d in report.diagnostics if d.id == ident]
    assert found, [(d.id, d.line, d.message) for d in report.diagnostics]
    d = found[0]
    assert d.line == _marked_line(path), d.message
    assert d.api == api
    if api:
        assert f"in the emulator's {api}, called from line {d.line} (in {function})" in d.message
    else:
        assert f"at line {d.line} (in {function})" in d.message
    assert json.loads(d.raw)["frames"]          # the raw addresses stay with the finding


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64 inline assembly")
def test_crash_on_a_smashed_stack_still_reports_its_line(relu):
    """The frame walk faults on a stack that is not there: the report still comes, with the PC's line."""
    path = CRASH / "hostile" / "smashed_stack.cpp"     # inline assembly: the source scan refuses it
    case = _page_sized_case(relu)
    inputs = make_inputs(relu, case)
    b = build(path, relu, ["float32", "float32"], source_policy=False)
    assert b.ok, [d.message for d in b.diagnostics]
    r = run(b, relu, case, inputs, outputs=reference(relu, case, inputs).outputs)
    d = next(d for d in r.diagnostics if d.id == "RUN.CRASH")
    assert d.line == _marked_line(path) and f"at line {d.line} (in relu_crash)" in d.message, d.message


def test_short_names_say_what_the_kernel_called():
    assert crash_site.short_name("void AscendC::DataCopy<float>(AscendC::LocalTensor<float> const&, "
                                 "AscendC::GlobalTensor<float> const&, unsigned int, std::source_location)") \
        == "DataCopy"
    assert crash_site.short_name("AscendC::GlobalTensor<half>::GetValue(unsigned long, std::source_location) "
                                 "const") == "GlobalTensor::GetValue"
    assert crash_site.short_name("AscendC::LocalTensor<float>::operator[](unsigned int) const") \
        == "LocalTensor::operator[]"
    assert crash_site.short_name("KernelZero<float>::Process()") == "KernelZero::Process"
    assert crash_site.short_name("relu_crash") == "relu_crash"


def test_the_api_is_told_by_its_place_in_any_checkout():
    """The precompiled header is shared by checkouts whose headers are identical, so its line tables
    may name another checkout's copy of an API header: still the emulator's API. The launcher is not."""
    kernel = crash_site.Frame("relu_crash", "/tmp/run-1/candidate/relu.cpp", 26)
    elsewhere = "/home/someone/cannpilot/copilot/backends/sim/include/cannsim"
    api = crash_site.Frame("void AscendC::DataCopy<float>(AscendC::LocalTensor<float> const&)",
                           f"{elsewhere}/data_copy.h", 40)
    assert crash_site.crash_site([api, kernel], "relu.cpp") == crash_site.CrashSite(26, "DataCopy", "relu_crash")
    launcher = crash_site.Frame("run_block(long)", f"{elsewhere}/harness.cpp", 900)
    assert crash_site.crash_site([launcher, kernel], "relu.cpp").api == ""
    stranger = crash_site.Frame("void AscendC::DataCopy<float>()", "/home/someone/other/include/data_copy.h", 40)
    assert crash_site.crash_site([stranger, kernel], "relu.cpp").api == ""


@pytest.fixture(scope="module")
def crash_build(relu):
    b = build(CRASH / "view_without_buffer.cpp", relu, ["float32", "float32"])
    assert b.ok, [d.message for d in b.diagnostics]
    return b


FORGED = ["", "zzz", "r" * 5000, "ffffffffffff rffffffffffff", "? ? ?", "-1 0x10 r0 0",
          " ".join(f"r{k:x}" for k in range(1, 400)), "1" * 40, "\u0661\u0662", 12345, None, ["r10"]]


@pytest.mark.parametrize("frames", FORGED)
def test_forged_frames_resolve_to_nothing_or_some_line(crash_build, frames, monkeypatch):
    """Whatever the crashing process wrote as frames: no exception, a line number, and addr2line
    only ever reads the build's binary, at addresses inside its loaded image."""
    calls = []
    real_run = subprocess.run

    def run(cmd, *a, **k):
        calls.append(cmd)
        return real_run(cmd, *a, **k)

    monkeypatch.setattr(crash_site.subprocess, "run", run)
    crash_site._cache.binaries.clear()
    doc = {"id": "RUN.CRASH", "severity": "error", "line": 0, "block": 0, "message": "SIGSEGV", "frames": frames,
           "source": "harness"}
    from copilot.backends.sim.runner import _locate_crash

    diags = collect_diagnostics([json.dumps(doc)], lambda d: _locate_crash(d, crash_build))
    assert len(diags) == 1 and isinstance(diags[0].line, int) and diags[0].line >= 0
    _, end = crash_site._image(crash_build.artifact)
    for cmd in calls:
        assert cmd[1:3] == ["-e", str(crash_build.artifact)]
        assert all(int(a, 16) < end for a in cmd[cmd.index("-a") + 1:])
        assert len(cmd[cmd.index("-a") + 1:]) <= crash_site.MAX_FRAMES


def test_frames_of_another_binary_name_no_line(crash_build):
    """Offsets captured in one binary looked up in a file that is not an ELF executable: nothing."""
    assert crash_site.resolve(Path(__file__), crash_site.parse_frames("r17bd5 148b0")) == []
    assert crash_site.resolve(crash_build.artifact.parent / "missing", [0x10]) == []
