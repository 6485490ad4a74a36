"""Red team: one kernel per attack class of issue 24 (tests/redteam/), each refused or detected
by every layer that should stop it, with its id; none scores better than its honest twin
(tests/kernels/relu_tail_pad.cpp) and no secret reaches any output.

Layers: the source scan (SEC.SOURCE, `check` and the evaluator), then, with the scan off, the
compiler's sandbox, the run's sandbox (uid, namespaces, cgroup), the result channel
(RUN.INTEGRITY) and the parent's reads. Run as root for the uid/namespace layers (as CI does).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel, run  # noqa: E402
build_module = importlib.import_module("copilot.backends.sim.build")
from copilot.backends.sim.policy import scan  # noqa: E402
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.sandbox import Limits, UnsafeFile, read_regular, sandbox_capabilities  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"), pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
REDTEAM = REPO / "tests" / "redteam"
HONEST = REPO / "tests" / "kernels" / "relu_tail_pad.cpp"
SECRET_PATH = Path("/root/cannpilot-redteam-secret.txt")
SECRET = "cp-redteam-SECRET-7f3a91"
CAPS = sandbox_capabilities()
ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not (ROOT and CAPS["pid_mount_ipc_namespaces"] and CAPS["uid_per_run"]),
                                reason="the uid and namespace layers need root (as in CI)")
needs_pkeys = pytest.mark.skipif(not CAPS["protection_keys"],
                                 reason="the emulator's vault needs x86 protection keys (pku/ospke)")

# Attacks the source scan refuses (check and the evaluator share it).
SCANNED = ["asm_syscall", "ctor_system", "include_dev_zero", "include_secret", "paste_internals", "preinit_daemon",
           "relu_attacks", "static_init_fork", "timing_probe"]
# The run-time attacks on the honest relu: modes of one kernel (one build), chosen by the input's
# length (tests/redteam/relu_attacks.cpp).
MODES = {"cost_reset": 1, "event_suppress": 2, "event_hide": 3, "counter_forge": 4, "forged_cost_exit": 5,
         "cost_params_forge": 6, "pending_forge": 7, "report_injection": 8, "diag_flood": 9, "tamper_rundir": 10,
         "rival_attack": 11, "slot_forge": 12, "jit_wrpkru": 13}
# Attacks written in plain AscendC/C++ that pass it: the later layers stop them.
UNSCANNED = ["data_probe_skip", "diag_erase", "memory_search", "preprocessor_bomb", "raw_pointer", "raw_read_local",
             "raw_ub_scalar", "stack_search", "wrong_when_large", "wrpkru_gadget"]
# diag_erase.cpp's modes (the input's length, as relu_attacks.cpp's): rule-breaking relus hiding
# their finding from the diagnostics stream with calls the scan allows (dprintf, fallocate).
DIAG_MODES = {"erase_error": 1, "glue_fatal": 2, "forge": 3, "group_flood": 4, "shadow": 5}


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


@pytest.fixture(scope="module")
def case(relu):
    return next(c for c in relu.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)


@pytest.fixture()
def secret():
    if not ROOT:
        pytest.skip("the root-only secret needs root")
    SECRET_PATH.write_text(f'"{SECRET}"\n')
    os.chmod(SECRET_PATH, 0o600)
    yield SECRET
    SECRET_PATH.unlink(missing_ok=True)


def _attack_case(case, name: str):
    """The case that runs attack `name`: a mode of relu_attacks.cpp is chosen by the length."""
    if name not in MODES:
        return case
    from copilot.tasks import Case
    return Case(id=f"mode-{MODES[name]}", shapes=[(65536 + 4096 * MODES[name],)], dtypes=["float32"], attrs={},
                value_ranges=case.value_ranges)


def _unscanned(name: str, relu, case, limits: Limits | None = None, inputs=None):
    """Build with the source scan off (the layers behind it) and run one case (the attack's own,
    for a mode of relu_attacks.cpp)."""
    source = "relu_attacks" if name in MODES else name
    case = _attack_case(case, name)
    b = build_module.build(REDTEAM / f"{source}.cpp", relu, ["float32", "float32"], source_policy=False)
    assert b.ok, [d.message for d in b.diagnostics][:3]
    inputs = inputs or make_inputs(relu, case)
    ref = reference(relu, case, inputs)
    # a generous wall limit: 48 blocks at load 100 on 2 cores must not look like a hang
    return run(b, relu, case, inputs, outputs=ref.outputs, limits=limits or Limits(wall_seconds=240))


def _ids(diags) -> set[str]:
    return {d.id for d in diags}


def _everything(r) -> str:
    return r.stdout + r.extra.get("stderr", "") + json.dumps([d.to_json() for d in r.diagnostics])


# ---------------------------------------------------------------- layer 1: the source scan

def test_the_kernel_set_covers_every_attack_file():
    assert sorted(SCANNED + UNSCANNED) == sorted(p.stem for p in REDTEAM.glob("*.cpp"))


@pytest.mark.parametrize("name", SCANNED)
def test_check_refuses_the_attack_before_compiling(relu, name, secret):
    report = check_kernel(REDTEAM / f"{name}.cpp", relu, cases="1")
    assert not report.compiled and not report.correct
    assert "SEC.SOURCE" in _ids(report.diagnostics), [(d.id, d.message) for d in report.diagnostics]
    assert SECRET not in json.dumps(report.to_json())


def _attack_source(name: str | None) -> str:
    """relu_attacks.cpp with only attack `name`'s code (None: none)."""
    text = (REDTEAM / "relu_attacks.cpp").read_text()
    for other in MODES:
        if other != name:
            text = re.sub(rf"// ATTACK {other}\n.*?// END {other}\n", "", text, flags=re.S)
    return text


def test_each_run_time_attack_alone_is_refused_by_the_scan():
    assert scan(_attack_source(None)) == []          # the honest skeleton passes
    refused = {name: [d.id for d in scan(_attack_source(name))] for name in MODES}
    assert all(ids and set(ids) == {"SEC.SOURCE"} for ids in refused.values()), refused


@pytest.mark.parametrize("name", UNSCANNED)
def test_the_plain_cpp_attacks_pass_the_scan(name):
    assert scan((REDTEAM / f"{name}.cpp").read_text()) == []


def test_the_scan_passes_every_honest_kernel_of_the_repository():
    honest = [p for d in ("tests/kernels", "bench/calibration_kernels", "knowledge/cards")
              for p in (REPO / d).rglob("*.cpp") if "hostile" not in p.parts]
    assert len(honest) > 20
    assert {p.name: [d.message for d in scan(p.read_text())] for p in honest if scan(p.read_text())} == {}


def test_the_scan_sees_through_splices_and_names_taken_by_address():
    assert scan("void f() { cann\\\nsim::count_only(); }")
    assert scan("auto w = &write;")
    assert scan("void f() { __libc_write(1, 0, 0); }")
    assert scan('void f() { c\\u0061nnsim::x(); }')
    assert scan("void f(AscendC::LocalTensor<float> t) { t.sim_data()[0] = 1.0f; }")   # UB by its host address
    assert not scan("AscendC::TPipe pipe; void f() { pipe.InitBuffer(q, 2, 32); }")


@pytest.mark.parametrize("code", [
    "void f() { uint32_t read = 3, n = read + 1; }",
    "void f(uint32_t write) { x = write * 2; }",
    "struct K { void g() { y = read; } uint32_t read; };",
    "void f() { for (int write = 0; write < 4; ++write) { a[write] = 1; } }",
    "void f() { auto& r = obj.read; obj->write(3); }",
    "void f() { uint64_t read = 0; uint64_t *p = &read; }",
    '#include "tiling/tiling_api.h"\nint x;',
])
def test_the_scan_allows_variables_named_read_or_write_and_the_tiling_api_header(code):
    assert scan(code) == []


@pytest.mark.parametrize("code", [
    "void f() { read(0, p, 4); }",
    "auto w = &write;",
    "void f() { auto g = write; }",
    "void f(int read) { } auto g = read;",
    "void f() { { int write = 1; } auto g = write; }",
    "void f() { for (int read = 0; read < 1; ++read) ; auto g = read; }",
    "void f() { auto g = &pipe; }",
    "void f() { ::write(1, p, 2); }",
    "using ::write;",
])
def test_the_scan_refuses_the_system_functions_where_no_such_variable_is_in_scope(code):
    assert [d.id for d in scan(code)] == ["SEC.SOURCE"]


# ---------------------------------------------------------------- the compiler's sandbox

@needs_root
def test_the_compiler_cannot_read_a_root_only_file(relu, secret):
    b = build_module.build(REDTEAM / "include_secret.cpp", relu, ["float32", "float32"], source_policy=False)
    assert not b.ok and "CPP.COMPILE" in _ids(b.diagnostics)
    assert SECRET not in b.raw_output + json.dumps([d.to_json() for d in b.diagnostics])


@needs_root
def test_the_compiler_has_no_dev_zero(relu):
    b = build_module.build(REDTEAM / "include_dev_zero.cpp", relu, ["float32", "float32"], source_policy=False)
    assert not b.ok and "CPP.COMPILE" in _ids(b.diagnostics)
    # no such file in the jail: an error at once, not the compiler's time or memory limit
    assert "No such file" in b.raw_output, b.raw_output[-300:]


def test_a_preprocessor_bomb_stops_at_the_compilers_limits(relu, monkeypatch):
    monkeypatch.setattr(build_module, "COMPILE_MEMORY", 1 << 30)
    monkeypatch.setattr(build_module, "COMPILE_TIMEOUT_S", 60)
    t0 = time.perf_counter()
    b = build_module.build(REDTEAM / "preprocessor_bomb.cpp", relu, ["float32", "float32"])
    assert not b.ok
    assert time.perf_counter() - t0 < 600      # bounded by the limits (a hang would never return)


@needs_root
def test_cached_build_products_belong_to_the_parent(relu):
    b = build_module.build(HONEST, relu, ["float32", "float32"])
    st = b.artifact.stat()
    assert st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert b.artifact.parent.stat().st_uid == os.geteuid()


# ---------------------------------------------------------------- the result channel

@pytest.mark.parametrize("name", ["cost_reset", "cost_params_forge"])
def test_a_reset_timeline_or_a_forged_block_cost_model_changes_nothing(relu, case, name):
    """The block's figures are the launcher's replay of its events, not the block's own timeline,
    and the launcher weighs each vector instruction, charges scalar issue and judges a copy's GM
    alignment itself (from the API name hash, the GM address), so the block's reconfigured weights,
    parameters and GM buffer list are not used (cost_params_forge scored 3.92 vs 4.08 us est. before)."""
    honest = _unscanned_honest(relu, _attack_case(case, name))
    r = _unscanned(name, relu, case)
    assert r.ok and honest.time_us is not None
    assert r.time_us == pytest.approx(honest.time_us, rel=1e-6)


def test_forged_slot_ids_still_wait_for_the_data(relu, case):
    """No queues, no flags, the vector op's tiles under forged slot ids (copies of the buffers'
    entries appended to the slot table): no sync finding, and before the events carried UB ranges it
    scored 4.32 vs its twin's 4.47 us est. (the vector op did not wait for the copy in, nor the copy
    out for it). The launcher tracks UB by the bytes each operand touches: the twin's estimate."""
    honest = _unscanned_honest(relu, _attack_case(case, "slot_forge"))
    r = _unscanned("slot_forge", relu, case)
    assert r.ok and honest.time_us is not None
    assert r.time_us >= honest.time_us * (1 - 1e-6)


@needs_pkeys
def test_code_the_kernel_writes_never_becomes_executable(relu, case):
    """WRPKRU (every protection key opened) written into a buffer: mprotect(PROT_EXEC) and a fresh
    PROT_EXEC mapping are both refused in a block (EPERM), so it never runs; the kernel then does
    the honest work and scores its twin's estimate."""
    honest = _unscanned_honest(relu, _attack_case(case, "jit_wrpkru"))
    r = _unscanned("jit_wrpkru", relu, case)
    assert "jit: mprotect -1 mmap -1" in r.stdout, r.stdout[-300:]
    assert "keys open" not in r.stdout
    assert r.ok and r.time_us == pytest.approx(honest.time_us, rel=1e-6)


@needs_pkeys
def test_a_forged_operand_record_is_refused(relu, case):
    """The per-call operand record (the next event's slots) is in the vault's sealed page: the
    kernel's first write to it faults (pending_forge scored 3.94 vs 4.08 us est. before)."""
    r = _unscanned("pending_forge", relu, case)
    assert r.time_us is None and not r.ok
    assert any(d.id == "RUN.INTEGRITY" and "protected state" in d.message for d in r.diagnostics), r.diagnostics[:3]


@needs_pkeys
def test_a_memory_search_finds_no_real_mapping_and_the_vault_faults(relu, case):
    """Passes the scan: searches the data segment for the GM alias record and the UB arena (found
    both before, and scored 3.69 vs 4.08 us est., correct), finds neither, then reads the vault's
    hidden page at its known address: RUN.INTEGRITY at that page, no estimate."""
    report = check_kernel(REDTEAM / "memory_search.cpp", relu, cases=case.id)
    assert report.compiled and not report.correct
    hidden = [d for d in report.diagnostics if d.id == "RUN.INTEGRITY" and "protected state at 0x200000001000" in d.message]
    assert hidden, [(d.id, d.message) for d in report.diagnostics][:3]
    assert all(c.estimate is None for c in report.cases)


@needs_pkeys
def test_host_addresses_left_in_dead_stack_frames_open_nothing(relu, case):
    """Passes the scan: finds the real GM and UB addresses a DataCopyPad and a Duplicate left below
    its frame (before the data key: correct, 3.70 vs its twin's 4.08 us est.), reads through the
    first: the real pages are under the vault's data key, closed while kernel code runs, so the read
    faults at that address (not the vault's, not a view): RUN.INTEGRITY, no estimate."""
    report = check_kernel(REDTEAM / "stack_search.cpp", relu, cases=case.id)
    assert report.compiled and not report.correct
    real = [d for d in report.diagnostics if d.id == "RUN.INTEGRITY" and "the real GM or UB pages" in d.message]
    assert real, [(d.id, d.message) for d in report.diagnostics][:3]
    assert all(c.estimate is None for c in report.cases)


@needs_pkeys
def test_a_wrpkru_hidden_in_the_kernels_code_is_refused_before_it_runs(relu, case, monkeypatch):
    """Passes the scan: a 64-bit immediate whose bytes are `xor ecx,ecx; xor edx,edx; wrpkru; ret`,
    found in its own code and called with eax = 0 (every protection key open). The launcher's code
    holds WRPKRU bytes outside the emulator's one function: SEC.BINARY on check, no run. With that
    check off it opens the keys and reads the vault's hidden page."""
    report = check_kernel(REDTEAM / "wrpkru_gadget.cpp", relu, cases=case.id)
    assert not report.correct and all(c.estimate is None for c in report.cases)
    assert "SEC.BINARY" in _ids(report.diagnostics), [(d.id, d.message) for d in report.diagnostics][:3]
    runner = importlib.import_module("copilot.backends.sim.runner")
    monkeypatch.setattr(runner.opcodes, "findings", lambda exe: [])
    r = _unscanned("wrpkru_gadget", relu, case)
    assert "gadget: keys open" in r.stdout, r.stdout[-300:]


@pytest.mark.parametrize("name", ["event_suppress", "event_hide", "counter_forge"])
def test_suppressed_or_hidden_cost_events_are_refused(relu, case, name):
    """Forwarding off, the timeline's bytes restored, the hooks' flag cleared, the runtime's per-API
    counters forged back: the events still come (kEventFd, guarded by the block's filter), so the
    stream no longer agrees with what the block's memory says."""
    r = _unscanned(name, relu, case)
    assert "RUN.INTEGRITY" in _ids(r.diagnostics) and r.time_us is None and not r.ok


def _unscanned_honest(relu, case, inputs=None):
    b = build_module.build(HONEST, relu, ["float32", "float32"])
    inputs = make_inputs(relu, case) if inputs is None else inputs
    return run(b, relu, case, inputs, outputs=reference(relu, case, inputs).outputs)


def test_a_forged_cost_line_and_an_early_exit_are_refused(relu, case):
    r = _unscanned("forged_cost_exit", relu, case)
    assert "RUN.INTEGRITY" in _ids(r.diagnostics)
    assert r.time_us is None and not r.ok


def test_output_written_through_raw_pointers_is_refused(relu, case):
    report = check_kernel(REDTEAM / "raw_pointer.cpp", relu, cases=case.id)
    assert report.compiled and not report.correct
    assert "RUN.INTEGRITY" in _ids(report.diagnostics), [(d.id, d.message) for d in report.diagnostics]
    assert all(c.estimate is None for c in report.cases)


def test_inputs_read_through_raw_pointers_are_refused(relu, case):
    """Raw GM reads computed into a LocalTensor and copied out: the copy out matches the output,
    so layer 9 alone would pass it (uncharged reads); the kernel's GM addresses fault."""
    r = _unscanned("raw_read_local", relu, case)
    raw = [d for d in r.diagnostics if d.id == "RUN.INTEGRITY" and "raw pointer" in d.message]
    assert raw and "buffer 'x'" in raw[0].message and r.time_us is None and not r.ok, r.diagnostics[:3]


def test_scalar_work_through_raw_ub_pointers_is_charged_and_scores_worse_than_its_twin(relu):
    """`(__ubuf__ T*)t.GetPhyAddr()` is legal AscendC: each raw load and store is a scalar UB access,
    charged as GetValue/SetValue are (a small case: every access is a trap and a single step)."""
    from copilot.tasks import Case

    small = Case(id="small", shapes=[(1024,)], dtypes=["float32"], attrs={}, value_ranges=[(-2.0, 2.0)])
    inputs = make_inputs(relu, small)
    honest = _unscanned_honest(relu, small, inputs)
    b = build_module.build(REDTEAM / "raw_ub_scalar.cpp", relu, ["float32", "float32"])   # the scan passes it
    assert b.ok, [d.message for d in b.diagnostics][:3]
    r = run(b, relu, small, inputs, outputs=reference(relu, small, inputs).outputs)
    if not r.ok:                      # a host that cannot single-step refuses it instead
        assert "RUN.INTEGRITY" in _ids(r.diagnostics) and r.time_us is None, r.diagnostics[:3]
        return
    assert torch.equal(r.outputs[0], torch.relu(inputs[0]))
    assert honest.time_us and r.time_us > honest.time_us
    # 1024 loads and 1024 stores at the chip's scalar access cost, spread over the blocks
    assert r.pipe_times.s > 10 * honest.pipe_times.s and r.pipe_times.v == 0


def test_reporter_text_is_capped_and_stripped(relu, case):
    r = _unscanned("report_injection", relu, case)
    for d in r.diagnostics:
        assert len(d.message) <= 700 and "\x1b" not in d.message and "\r" not in d.message


def _diag_erase(relu, case, name: str):
    from copilot.tasks import Case
    mode = DIAG_MODES[name]
    case = Case(id=f"mode-{mode}", shapes=[(65536 + 4096 * mode,)], dtypes=["float32"], attrs={},
                value_ranges=case.value_ranges)
    b = build_module.build(REDTEAM / "diag_erase.cpp", relu, ["float32", "float32"])   # the scan passes it
    assert b.ok, [d.message for d in b.diagnostics][:3]
    inputs = make_inputs(relu, case)
    return run(b, relu, case, inputs, outputs=reference(relu, case, inputs).outputs, limits=Limits(wall_seconds=240))


@pytest.mark.parametrize("name, rule", [("erase_error", "L2.UB_CAPACITY"), ("group_flood", "L2.UB_CAPACITY"),
                                        ("shadow", "L2.UB_CAPACITY"), ("glue_fatal", "L2.UB_BOUNDS")])
def test_a_kernel_cannot_erase_its_rule_breach_from_the_diagnostics(relu, case, name, rule):
    """Twice the usable UB (an error the block survives) or a fatal UB bounds breach, hidden with
    calls the scan allows: a hole punched over the diagnostics file (erase_error), an unterminated
    line the finding is glued to (glue_fatal), 300 forged distinct warnings before it (group_flood),
    a forged warning of the error's id and line (shadow). With the findings in a file the block could
    write, erase_error, group_flood and shadow passed (correct, estimated, no finding) and every
    block of glue_fatal was a bare RUN.CRASH. Now each block reports on a packet pipe the launcher
    copies from, and the runner keeps errors apart from warnings: the breach and its id."""
    r = _diag_erase(relu, case, name)
    assert not r.ok and r.time_us is None
    found = [d for d in r.diagnostics if d.id == rule and d.is_error]
    assert found, [(d.id, d.severity, d.message) for d in r.diagnostics][-5:]
    assert not any("stopped at a fatal rule breach" in d.message for d in r.diagnostics)


def test_a_forged_finding_is_shown_as_the_forging_blocks_own(relu, case):
    """A well-formed warning claiming block 999 and the harness as its source, written by every
    block: the launcher stamps each finding with the child it read it from."""
    r = _diag_erase(relu, case, "forge")
    assert r.ok
    forged = [d for d in r.diagnostics if "forged" in d.message]
    assert forged and "999" not in forged[0].message and f"{r.block_dim} blocks" in forged[0].message, forged[:1]


def test_a_diagnostics_flood_is_read_capped(relu, case):
    r = _unscanned("diag_flood", relu, case, limits=Limits(wall_seconds=60))
    assert len(r.diagnostics) <= 410


# ---------------------------------------------------------------- the run's sandbox

@needs_root
def test_tampering_with_the_run_directory_fails_and_leaks_nothing(relu, case, secret):
    t0 = time.perf_counter()
    r = _unscanned("tamper_rundir", relu, case)
    # a FIFO the parent opened would block it for ever: the bound only tells a hang from a slow
    # build on a loaded machine (the compile is most of the time)
    assert time.perf_counter() - t0 < 600
    assert "tamper: 0 0 0 0" in r.stdout      # the directory is the parent's: no unlink, link or FIFO
    assert SECRET not in _everything(r)
    assert r.ok, [(d.id, d.message) for d in r.diagnostics]


def test_the_parent_refuses_links_fifos_devices_and_oversized_files(tmp_path):
    (tmp_path / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    os.symlink("/etc/hostname", tmp_path / "link")
    (tmp_path / "big").write_bytes(b"x" * 10)
    t0 = time.perf_counter()
    for name in ("fifo", "zero", "link"):
        with pytest.raises(UnsafeFile):
            read_regular(tmp_path / name, 1 << 20)
    with pytest.raises(UnsafeFile):
        read_regular(Path("/dev/zero"), 1 << 20)
    with pytest.raises(UnsafeFile):
        read_regular(tmp_path / "big", 100, exact_size=4)
    with pytest.raises(UnsafeFile):
        read_regular(tmp_path / "big", 100, owners={os.getuid() + 1})
    assert read_regular(tmp_path / "big", 4) == b"xxxx"     # capped
    assert time.perf_counter() - t0 < 60       # no read blocked (a FIFO's would never return)


def _processes_named(name: str) -> list[int]:
    out = []
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                if Path(e.path, "comm").read_text().strip() == name:
                    out.append(int(e.name))
            except OSError:
                pass
    return out


@needs_root
def test_code_before_the_filter_leaves_nothing_behind(relu, case):
    r = _unscanned("preinit_daemon", relu, case)
    assert r.ok, [(d.id, d.message) for d in r.diagnostics]
    # the namespace's processes are reaped by the kernel, not by us: wait for it, generously
    deadline = time.monotonic() + 60
    while _processes_named("cp-rt-daemon") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_named("cp-rt-daemon") == []


def test_constructors_and_preinit_entries_run_after_the_syscall_filter(relu, case):
    r = _unscanned("ctor_system", relu, case)
    assert "preinit seccomp 2" in r.stdout and "ctor seccomp 2" in r.stdout, r.stdout[-500:]
    assert "shell-ran" not in r.stdout
    assert r.ok, [(d.id, d.message) for d in r.diagnostics]


@needs_root
def test_a_static_initialiser_fork_and_memory_bomb_is_held(relu, case):
    t0 = time.perf_counter()
    r = _unscanned("static_init_fork", relu, case, limits=Limits(wall_seconds=30, memory_bytes=1 << 30))
    assert time.perf_counter() - t0 < 300      # held by the run's limits, not left running
    assert os.getpid() > 0
    assert r.block_dim >= 0


@needs_root
def test_a_candidate_cannot_touch_a_concurrent_rival(relu, case):
    case = _attack_case(case, "rival_attack")
    inputs = make_inputs(relu, case)
    ref = reference(relu, case, inputs)
    honest_build = build_module.build(HONEST, relu, ["float32", "float32"])
    results = {}

    def honest():
        results["honest"] = [run(honest_build, relu, case, inputs, outputs=ref.outputs) for _ in range(3)]

    t = threading.Thread(target=honest)
    t.start()
    results["rival"] = [_unscanned("rival_attack", relu, case, inputs=inputs) for _ in range(2)]
    t.join()
    assert all(r.ok for r in results["honest"]), [[(d.id, d.message) for d in r.diagnostics] for r in results["honest"]]
    assert all("rival dirs seen: 0" in r.stdout for r in results["rival"])


# ---------------------------------------------------------------- the evaluator

@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from copilot.evolution.evaluate import SimEvaluator
    return SimEvaluator(workdir=tmp_path_factory.mktemp("candidates"))


def _candidate(name: str, path: Path):
    from copilot.events import Candidate
    return Candidate(id=name, code=path.read_text(), round=1, origin="llm")


@pytest.fixture(scope="module")
def relu_eval(relu):
    """relu without its two largest cases (16.8M and 10.9M elements): the evaluator's layers are the
    same (every dtype built, performance cases judged on sampled blocks, the winner confirmed in
    full), on performance cases of about 2M elements (wrong_when_large is wrong on them too), so the
    suite's evaluator tests cost a fraction. The whole task through the evaluator:
    bench/redteam_table.py."""
    import dataclasses
    return dataclasses.replace(relu, cases=[c for c in relu.cases if c.max_numel <= 1 << 21])


@pytest.fixture(scope="module")
def honest_evaluation(relu_eval, evaluator):
    """The honest twin through the evaluator, once for the module (the attacks compare with it)."""
    return evaluator.evaluate_sync(relu_eval, _candidate("honest", HONEST))


def test_the_evaluator_scores_the_honest_twin_and_confirms_it_in_full(relu_eval, evaluator, honest_evaluation):
    ev = honest_evaluation
    assert ev.status == "passed" and ev.time_us
    perf = [c for c in ev.cases if c.get("role") == "performance"]
    assert perf and all(c.get("judged") == "sampled blocks" for c in perf)
    full = evaluator.confirm(relu_eval, _candidate("honest", HONEST))
    assert full.status == "passed" and full.time_us == pytest.approx(ev.time_us, rel=0.05)


# One attack per layer the evaluator adds or shares (the scan, the vault, performance cases judged);
# every attack through the evaluator and `check`: bench/redteam_table.py.
@pytest.mark.parametrize("name", ["wrong_when_large", "relu_attacks", pytest.param("memory_search", marks=needs_pkeys)])
def test_the_evaluator_gives_no_score_to_the_attack(relu_eval, evaluator, name):
    ev = evaluator.evaluate_sync(relu_eval, _candidate(name, REDTEAM / f"{name}.cpp"))
    assert ev.status != "passed" and ev.time_us is None, (ev.status, ev.cases[-1:])


def test_a_kernel_probing_for_timing_runs_scores_no_better_than_its_twin(relu_eval, evaluator, honest_evaluation):
    """Timed runs have real inputs, so the probe finds data and the kernel does the honest work."""
    honest = honest_evaluation
    ev = evaluator.evaluate_sync(relu_eval, _candidate("probe", REDTEAM / "data_probe_skip.cpp"))
    assert ev.status == "passed" and ev.time_us >= 0.99 * honest.time_us
