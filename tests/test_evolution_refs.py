"""The evaluator's store of case inputs and oracle references: computed once per case, small cases
in memory, large ones on disk and mapped back per use (a session's RSS stays bounded)."""

from __future__ import annotations

import gc

import numpy as np
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
