"""The npu backend on the fake toolchain and the fake torch_npu device (there is no NPU here).

The fake build compiles the exported op_host/op_kernel with the emulator's headers; the fake
device runs the kernel through the emulator and writes profiler-shaped records. What is tested is
the backend's orchestration, parsing and error paths, not the chip.
"""

from __future__ import annotations

import csv
import json
import dataclasses
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from copilot.backends.npu.build import NpuConfig, build
from copilot.backends.npu.profile import parse, split_calls, KernelRecord
from copilot.backends.npu.runner import check_kernel, run
from copilot.lowering import lower
from copilot.oracle import judge_case, make_inputs, reference
from copilot.tasks import load_task
from tests.fakes.fake_cann import run_build

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "tests" / "fakes" / "npu_site"


@pytest.fixture(autouse=True)
def fake_torch_npu(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(SITE), str(REPO)]))


@pytest.fixture(scope="module")
def add_src() -> str:
    return lower("add").source


@pytest.fixture(scope="module")
def task():
    return load_task("add")


@pytest.fixture(scope="module")
def small(task):
    # the smallest case with values (an all-zeros case cannot tell Add from Sub)
    return min((c for c in task.cases if any(r != (0.0, 0.0) for r in c.value_ranges)), key=lambda c: c.max_numel)


def config(root: Path, **kw) -> NpuConfig:
    return NpuConfig(prefix=root / "prefix", build_root=root / "builds", runner=run_build, warmup=1, repeat=2,
                     run_timeout=kw.pop("run_timeout", 120), python=sys.executable, **kw)


@pytest.fixture(scope="module")
def built(tmp_path_factory, add_src, task):
    root = tmp_path_factory.mktemp("npu")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(SITE), str(REPO)])
    cfg = config(root)
    b = build(add_src, task, None, "910B2", config=cfg)
    assert b.ok, [d.to_json() for d in b.diagnostics] + [b.raw_output[-2000:]]
    return b, cfg


def cheat(built, tmp_path, old: str, new: str):
    """The installed package with its binding edited (what a cheating submission would ship)."""
    b, cfg = built
    site = tmp_path / "site"
    shutil.copytree(b.site, site)
    init = site / "cann_bench" / "__init__.py"
    text = init.read_text()
    assert old in text
    init.write_text(text.replace(old, new))
    return dataclasses.replace(b, site=site), cfg


CALL = "    return torch.ops.cann_bench.add(x1, x2)"


# ---------------------------------------------------------------- profiler records

def _write(tmp: Path, kernels: list[tuple], apis: dict | None = None) -> Path:
    out = tmp / "prof" / "host_1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True)
    with open(out / "kernel_details.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Step Id", "Name", "Type", "Start Time(us)", "Duration(us)"])
        for name, type_, start, dur in kernels:
            w.writerow(["", name, type_, start, dur])
    with open(out / "api_statistic.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["API Name", "Count"])
        for n, c in (apis or {}).items():
            w.writerow([n, c])
    return tmp / "prof"


def test_profile_filters_flush_and_sums_kernels_of_a_call(tmp_path):
    ks = [("AddCustom_w", "AddCustom", 0, 99.0)]              # before the first flush: not timed
    t = 10
    for per_call in ([3.0, 1.0], [4.0, 1.0], [2.5, 1.0]):      # two kernels per call
        ks += [("MatMulV2_1", "MatMulV2", t, 40), ("ReduceMax_2", "ReduceMax", t + 50, 15)]
        ks += [(f"AddCustom_{i}", "AddCustom", t + 70 + i, d) for i, d in enumerate(per_call)]
        t += 200
    res = parse(_write(tmp_path, ks), 3, ("AddCustom", "add_custom"))
    assert res.failure is None
    assert res.per_call_us == [4.0, 5.0, 3.5] and res.median_us == 4.0


def test_profile_cpu_fallback_and_missing_kernels(tmp_path):
    flush = [("MatMul", "MatMul", 0, 40), ("ReduceMax", "ReduceMax", 50, 15)]
    call = [("AddCustom_k", "AddCustom", 70, 2.0)]
    res = parse(_write(tmp_path / "a", flush + call, {"aclrtMemcpy": 2}), 1, ("AddCustom",))
    assert res.failure == "cpu_fallback" and res.median_us is None
    res = parse(_write(tmp_path / "b", flush + call + [(n, t, s + 100, d) for n, t, s, d in flush]), 2, ("AddCustom",))
    assert res.failure == "no_npu_kernel"
    res = parse(_write(tmp_path / "c", flush + [("Add_builtin", "Add", 70, 2.0)]), 1, ("AddCustom", "add_custom"))
    assert res.failure == "kernel_not_run" and "Add_builtin" in res.message
    assert parse(tmp_path / "nothing", 1).failure == "no_profile"


def test_split_calls_ignores_consecutive_flush_kernels():
    ks = [KernelRecord("MatMul", "MatMul", 0, 1), KernelRecord("ReduceMax", "ReduceMax", 1, 1),
          KernelRecord("Op", "Op", 2, 1), KernelRecord("MatMul", "MatMul", 3, 1), KernelRecord("Op", "Op", 4, 2)]
    assert [[k.duration_us for k in c] for c in split_calls(ks, 2)] == [[1], [2]]


# ---------------------------------------------------------------- build

def _swap_add_call(src: str, name: str) -> str:
    """The lowered add kernel with its one vector `Add(slot[..` call renamed to `name`."""
    out, count = re.subn(r"\bAdd\((slot\[\d+\], slot\[\d+\], slot\[\d+\], n\);)", name + r"(\1", src)
    assert count == 1, "the lowered add kernel should have exactly one Add call"
    return out


def test_build_failure_maps_to_constraint_id_and_line(tmp_path, add_src, task):
    bad = _swap_add_call(add_src, "AddNotAnApi")
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "AddNotAnApi" in ln)
    b = build(bad, task, None, "910B2", config=config(tmp_path))
    assert not b.ok
    assert any(d.id == "L4.API_UNKNOWN" and d.line == line for d in b.diagnostics), [d.to_json() for d in b.diagnostics]


def test_build_is_cached_and_installed_in_the_session_prefix(built, add_src, task):
    b, cfg = built
    assert b.site.is_relative_to(cfg.prefix) and (b.site / "cann_bench" / "__init__.py").is_file()
    from copilot.backends.sim.units import split_units
    # op_kernel is the candidate's device half, as CANN compiles it (issue 23)
    assert (b.project / "csrc/ops/add_custom/op_kernel/add_custom.cpp").read_text() == split_units(add_src).device
    again = build(add_src, task, None, "910B2", config=cfg)
    assert again.ok and again.cached and again.site == b.site


# ---------------------------------------------------------------- runs on the fake device

def test_correct_run_is_judged_and_timed(built, task, small):
    b, cfg = built
    inputs = make_inputs(task, small, 0, fresh=True)
    r = run(b, task, small, inputs, config=cfg, timing=True)
    assert r.ok, [d.to_json() for d in r.diagnostics]
    assert judge_case(task, reference(task, small, inputs), r.outputs).passed
    assert r.timing == "measured" and r.time_us > 0 and len(r.extra["per_call_us"]) == 2
    assert all("MatMul" not in k and "ReduceMax" not in k for k in r.extra["kernels"])


def test_several_kernels_per_call_are_summed(built, tmp_path, task, small):
    one = run(built[0], task, small, make_inputs(task, small), config=built[1], timing=True)
    b, cfg = cheat(built, tmp_path, CALL, "    torch.ops.cann_bench.add(x1, x2)\n" + CALL)
    two = run(b, task, small, make_inputs(task, small), config=cfg, timing=True)
    assert two.ok and two.time_us == pytest.approx(2 * one.time_us, rel=1e-6)


def test_cpu_fallback_fails(built, tmp_path, task, small):
    b, cfg = cheat(built, tmp_path, CALL, "    return torch.ops.cann_bench.add(x1.cpu().npu(), x2)")
    r = run(b, task, small, make_inputs(task, small), config=cfg, timing=True)
    assert not r.ok and r.diagnostics[0].id == "SUB-BEH-004" and "aclrtMemcpy" in r.diagnostics[0].message


def test_no_submitted_kernel_fails(built, tmp_path, task, small):
    b, cfg = cheat(built, tmp_path, CALL, "    return x1 + x2")
    r = run(b, task, small, make_inputs(task, small), config=cfg, timing=True)
    assert not r.ok and r.extra["failure"] == "kernel_not_run"


def test_non_contiguous_output_fails(built, tmp_path, task, small):
    b, cfg = cheat(built, tmp_path, CALL, "    return torch.ops.cann_bench.add(x1, x2).t()")
    r = run(b, task, small, make_inputs(task, small), config=cfg)
    assert not r.ok and r.diagnostics[0].id == "RUN.NON_CONTIGUOUS"


def test_fake_tensor_object_fails(built, tmp_path, task, small):
    b, cfg = cheat(built, tmp_path, CALL, "    return [torch.ops.cann_bench.add(x1, x2)][0].numpy()")
    r = run(b, task, small, make_inputs(task, small), config=cfg)
    assert not r.ok and r.diagnostics[0].id == "SUB-BEH-007"


def test_wrong_result_is_judged_wrong(tmp_path, add_src, small):
    wrong = _swap_add_call(add_src, "Sub")
    k = tmp_path / "wrong.cpp"
    k.write_text(wrong)
    rep = check_kernel(k, "add", cases=small.id, config=config(tmp_path))
    assert rep.compiled and not rep.correct and rep.cases[0].failure_class


def test_crash_is_reported(tmp_path, add_src, small):
    crash = add_src.replace("DataCopyPad(out0Gm_[row0 * td_.rowLen + col0], buf, p);",
                            "DataCopyPad(out0Gm_[row0 * td_.rowLen + col0 + (1ULL << 36)], buf, p);")
    k = tmp_path / "crash.cpp"
    k.write_text(crash)
    rep = check_kernel(k, "add", cases=small.id, config=config(tmp_path))
    assert not rep.correct and any(d.id == "RUN.NPU_CRASH" for d in rep.diagnostics)


def test_hang_is_killed(tmp_path, add_src, small, monkeypatch):
    monkeypatch.setenv("FAKE_NPU_KERNEL_WALL", "2")
    hang = add_src.replace("        if (td_.mode == MODE_ROWS) {",
                           "        for (volatile uint64_t spin = 0; spin < 1; spin = 0) {}\n        if (td_.mode == MODE_ROWS) {", 1)
    assert hang != add_src
    k = tmp_path / "hang.cpp"
    k.write_text(hang)
    rep = check_kernel(k, "add", cases=small.id, config=config(tmp_path, run_timeout=25))
    assert not rep.correct and any(d.id == "RUN.NPU_HANG" for d in rep.diagnostics)


def test_check_kernel_end_to_end_measures_on_fresh_inputs(tmp_path, add_src, small):
    k = tmp_path / "k.cpp"
    k.write_text(add_src)
    rep = check_kernel(k, "add", cases=small.id, config=config(tmp_path))
    assert rep.correct, [c.to_json() for c in rep.cases]
    doc = rep.to_json()
    assert doc["summary"]["timing"] == "measured" and doc["cases"][0]["measured_us"] > 0


def test_check_backend_both_writes_calibration_rows(tmp_path, add_src, small, monkeypatch, cli):
    """`check --backend both` on a machine faked to have CANN: estimate and measured per case."""
    from tests.fakes.fake_cann import fake_cann_home

    env = fake_cann_home(tmp_path / "machine")
    for k in ("ASCEND_HOME_PATH", "PATH", "PYTHONPATH"):
        monkeypatch.setenv(k, env[k])
    monkeypatch.syspath_prepend(str(SITE))
    monkeypatch.setenv("CANNPILOT_NPU_BUILD_RUNNER", "tests.fakes.fake_cann:run_build")
    monkeypatch.setenv("CANNPILOT_CACHE_DIR", str(tmp_path / "cache"))
    k = tmp_path / "k.cpp"
    k.write_text(add_src)
    out_csv = tmp_path / "cal.csv"
    code, out, err = cli("check", str(k), "--task", "add", "--cases", small.id, "--backend", "both",
                         "--calibration-out", str(out_csv), "--json")
    assert code == 0, err[-3000:]
    row = json.loads(out)["cases"][0]
    assert row["est_us"] > 0 and row["measured_us"] > 0 and row["ratio_est_over_measured"]
    lines = out_csv.read_text().splitlines()
    assert lines[0] == "op,case,input_shapes,dtypes,attrs,measured_us_910b2,t_hw_us_910b2,est_us_910b2"
    assert lines[1].startswith(f"add,{small.id},")


def test_session_runs_end_to_end_on_the_fake_device(tmp_path, monkeypatch, cli):
    """`run --backend npu`: every candidate built with the fake toolchain and measured on the
    fake device; the session's best is labelled measured."""
    from tests.conftest import VALID_TASK
    from tests.fakes.fake_cann import fake_cann_home

    task = tmp_path / "scaled_tanh"
    shutil.copytree(VALID_TASK, task)
    (task / "cases.yaml").write_text("cases:\n- {case_id: 1, input_shape: [[64, 256]], dtype: [float32], "
                                     "attrs: {scale: 0.5}, value_range: [-4, 4]}\n")
    env = fake_cann_home(tmp_path / "machine")
    for k in ("ASCEND_HOME_PATH", "PATH", "PYTHONPATH"):
        monkeypatch.setenv(k, env[k])
    monkeypatch.syspath_prepend(str(SITE))
    monkeypatch.setenv("CANNPILOT_NPU_BUILD_RUNNER", "tests.fakes.fake_cann:run_build")
    monkeypatch.setenv("CANNPILOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CANNPILOT_CONFIG_DIR", str(tmp_path / "cfg"))
    code, out, err = cli("run", "--task", str(task), "--rounds", "1", "--variants", "1", "--backend", "npu",
                         "--store", str(tmp_path / "s.sqlite"), "--session", "npu1", "--json")
    assert code == 0, err[-3000:]
    assert json.loads(out)
    from sessions import SessionStore

    cands = SessionStore(tmp_path / "s.sqlite", create=False).session_record("npu1")["candidates"]
    passed = [c for c in cands if c["status"] == "passed"]
    assert passed and all(c["timing"] == "measured" and c["time_us"] > 0 for c in passed)
    # the session's best exported as a submission: the kernel is the stored candidate's code
    code, out, err = cli("export", "npu1", "--store", str(tmp_path / "s.sqlite"), "-o", str(tmp_path / "sub"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    best = min(passed, key=lambda c: c["time_us"])
    assert doc["valid"] and doc["ops"][0]["candidate"] == best["id"]
    from copilot.backends.sim.units import split_units
    kernel = next((tmp_path / "sub").rglob("op_kernel/*.cpp"))
    assert kernel.read_text() == split_units(best["code"]).device     # its device half (issue 23)
