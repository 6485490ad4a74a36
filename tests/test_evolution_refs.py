"""The evaluator's store of case inputs and oracle references: computed once per case, small cases
in memory, large ones on disk and mapped back per use (a session's RSS stays bounded)."""

from __future__ import annotations

import gc
import os
import subprocess
import threading
import time

import numpy as np
import pytest
import torch

from copilot.backends.sim.integrity import written_mask
from copilot.evolution import evaluate
from copilot.oracle.golden import OutputSpec, Reference


def _ref(n: int) -> evaluate._Ref:
    x = torch.arange(n, dtype=torch.float32)
    return evaluate._Ref([x, None, [x[:3]]], Reference([x.double() * 2], [x * 2], [OutputSpec("y", (n,), "float32")]))


def test_large_case_goes_to_disk_and_comes_back_equal(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate, "REF_MEMORY_BYTES", 1024)
    store = evaluate._RefStore(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return _ref(4096)

    first = store.get(("t", "big", 0), compute)
    again = store.get(("t", "big", 0), compute)
    assert calls == [1]
    assert store.memory == {} and len(store.disk) == 1
    assert again is not first
    assert torch.equal(again.inputs[0], first.inputs[0]) and again.inputs[1] is None
    assert torch.equal(again.inputs[2][0], first.inputs[2][0])
    assert torch.equal(again.ref.oracle[0], first.ref.oracle[0])
    assert again.ref.outputs[0].shape == (4096,)
    spill = store.dir
    assert spill.is_dir()
    del store, first, again
    gc.collect()
    assert not spill.exists()


def test_small_case_stays_in_memory(tmp_path):
    store = evaluate._RefStore(tmp_path)
    r = store.get(("t", "small", 0), lambda: _ref(16))
    assert store.get(("t", "small", 0), lambda: _ref(1)) is r
    assert store.disk == {} and store.dir is None


def test_written_mask_is_all_poison_bytes_per_element():
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.int64, torch.bool, torch.int32):
        t = torch.zeros(999, dtype=dt)
        b = t.view(torch.uint8).view(-1, t.element_size())
        b[::3] = 0xFF
        b[1::7, 0] = 0xFF              # one byte poisoned only: written
        want = ~np.all(b.numpy() == 0xFF, axis=1)
        assert (written_mask(t) == want).all(), dt


def test_the_written_runs_select_what_the_mask_selects():
    from copilot.backends.sim.integrity import MAX_RUNS, _take, written_runs

    t = torch.arange(10_000, dtype=torch.float32)
    rng = np.random.default_rng(0)
    few = np.zeros(10_000, dtype=bool)
    for lo in (0, 2_000, 9_000):                      # three sampled blocks, the last at the end
        few[lo:lo + 1_000] = True
    for mask in (few, np.zeros(10_000, dtype=bool), np.ones(10_000, dtype=bool), rng.random(10_000) < 0.5):
        runs = written_runs(mask)
        want = t[torch.from_numpy(np.flatnonzero(mask))]
        if runs is None:                               # many short runs: gathered by index
            assert np.count_nonzero(np.diff(mask.astype(np.int8))) > 2 * MAX_RUNS - 2
            continue
        assert torch.equal(_take(t, runs), want)
    assert written_runs(few) == [(0, 1_000), (2_000, 3_000), (9_000, 10_000)]


def _outputs(n: int, dt: torch.dtype, special: bool, seed: int):
    """(kernel output, fp64 golden, same-precision reference): magnitudes over nine decades (the
    small-value and cancellation regions are populated), with inf/nan/out-of-range goldens when
    `special`."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(n) * (10.0 ** rng.integers(-6, 3, n))
    if special:
        g[rng.integers(0, n, 40)] = np.inf
        g[rng.integers(0, n, 40)] = np.nan
        g[rng.integers(0, n, 40)] = 1e40                 # past every judged format but fp32's range
    bench = torch.from_numpy(g).to(dt)
    kernel = torch.from_numpy(g * (1 + 2e-4 * rng.standard_normal(n))).to(dt)
    return kernel, torch.from_numpy(g), bench


def test_the_reference_side_computed_once_gives_the_same_verdict():
    """The reference's share of the scan kept across candidates (ReferenceScan) changes nothing in
    the verdict, over whole outputs and over the runs a sampled judge takes, passing or failing."""
    from copilot.oracle.precision import ReferenceScan, judge

    runs = [(5, 30_000), (40_000, 40_001), (70_000, 90_001)]

    def sub(x):
        return torch.cat([x.reshape(-1)[lo:hi] for lo, hi in runs])

    classes = set()
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        name = str(dt).removeprefix("torch.")
        for special in (False, True):
            for threshold in (None, 1e-3):
                kernel, golden, bench = _outputs(90_001, dt, special, seed=len(classes))
                for k in (kernel, bench, bench.clone().masked_fill_(torch.rand(90_001) < 1e-3, 0)):
                    side = ReferenceScan(golden, bench, name, threshold)
                    plain = judge(k, golden, bench, name, threshold)
                    assert judge(k, golden, bench, name, threshold, side.view()).to_json() == plain.to_json()
                    plain = judge(sub(k), sub(golden), sub(bench), name, threshold)
                    kept = judge(sub(k), sub(golden), sub(bench), name, threshold, side.view(runs))
                    assert kept.to_json() == plain.to_json()
                    classes.add(plain.failure_class)
    assert None in classes and len(classes) >= 3        # passing and several failing verdicts compared


def test_a_side_for_other_elements_or_limits_is_not_used():
    from copilot.oracle.precision import ReferenceScan, judge

    kernel, golden, bench = _outputs(70_000, torch.float16, False, seed=3)
    wrong_size = ReferenceScan(golden[:100], bench[:100], "float16").view()
    plain = judge(kernel, golden, bench, "float16").to_json()
    assert judge(kernel, golden, bench, "float16", None, wrong_size).to_json() == plain
    assert judge(kernel, golden, bench, "float16", 1e-3, ReferenceScan(golden, bench, "float16").view()).to_json() \
        == judge(kernel, golden, bench, "float16", 1e-3).to_json()
    assert ReferenceScan(golden, None, "int32").view() is None          # judged exactly, no scan


def test_close_removes_the_spilled_cases_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate, "REF_MEMORY_BYTES", 1024)
    store = evaluate._RefStore(tmp_path)
    store.get(("t", "big", 0), lambda: _ref(4096))
    spill = store.dir
    assert spill.name.startswith(f"refs-{os.getpid()}-{evaluate._host_key()}-") and spill.is_dir()
    store.close()
    assert not spill.exists() and store.disk == {}
    again = store.get(("t", "big", 0), lambda: _ref(4096))     # computed again, spilled anew
    assert again.ref.outputs[0].shape == (4096,) and store.dir.is_dir()
    store.close()


def test_spills_of_processes_that_are_gone_are_pruned(tmp_path):
    gone, host = _dead_pid(), evaluate._host_key()
    dead = tmp_path / f"refs-{gone}-{host}-abc"
    live = tmp_path / f"refs-{os.getpid()}-{host}-def"
    elsewhere = tmp_path / f"refs-{gone}-other_host-ghi"        # a cluster's shared cache: not ours to judge
    old_layout, fresh_layout = tmp_path / "refs-k3j4h5g6", tmp_path / "refs-q9w8e7r6"
    for d in (dead, live, elsewhere, old_layout, fresh_layout):
        d.mkdir()
        (d / "0.pt").write_bytes(b"x")
    day_ago = time.time() - 2 * 86400
    os.utime(old_layout, (day_ago, day_ago))
    candidate = tmp_path / "relu-0123"
    candidate.mkdir()
    removed = evaluate.prune_stale_spills(tmp_path)
    assert sorted(removed) == sorted([dead, old_layout])
    assert live.is_dir() and elsewhere.is_dir() and fresh_layout.is_dir() and candidate.is_dir()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_tui_worker_told_to_stop_removes_its_spills_before_it_exits(tmp_path, monkeypatch):
    from tui import evaluation_process

    monkeypatch.setattr(evaluate, "REF_MEMORY_BYTES", 1024)
    ev = evaluate.SimEvaluator(workdir=tmp_path)
    ev._refs.get(("t", "big", 0), lambda: _ref(4096))
    spill = ev._refs.dir
    monkeypatch.setattr(evaluation_process, "_evaluator", ev)

    def exit_(code):
        raise SystemExit(code)

    monkeypatch.setattr(evaluation_process.os, "_exit", exit_)
    stop = threading.Event()
    stop.set()
    with pytest.raises(SystemExit) as exited:
        evaluation_process._exit_when_set(stop)
    assert exited.value.code == 0
    assert not spill.exists()
