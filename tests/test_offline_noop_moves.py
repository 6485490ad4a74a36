"""Knob moves that leave the tiling as it is: the tiling-only run's digest and the offline agent
passing such moves over (the child would be the parent again)."""

from __future__ import annotations

import pytest

from copilot.agents.offline import OfflineAgent, _tiling_only_change
from copilot.costmodel.estimate import tiling_digests
from copilot.events import Candidate
from copilot.evolution import ProposalRequest, Strategy
from copilot.lowering import default_knobs, lower
from copilot.tasks import load_task


@pytest.fixture(scope="module")
def relu():
    task = load_task("relu")
    base = default_knobs(task)
    src = {name: lower(task, chip="910B2", knobs={**base, **k}).source
           for name, k in {"base": {}, "rows": {"rows_per_tile": 8}, "tile": {"tile_elems": 1024},
                           "native": {"arith": "native"}}.items()}
    return task, base, src


def test_tiling_only_run_stops_after_the_tiling_and_digests_it(relu):
    from copilot.backends import sim
    from copilot.costmodel.estimate import output_shapes
    from copilot.oracle.inputs import meta_inputs

    task, _, src = relu
    case = task.perf_cases()[0]
    outs = output_shapes(task, case)
    b = sim.build(src["base"], task, list(case.dtypes) + [o.dtype for o in outs], "910B2")
    assert b.ok
    only = sim.run(b, task, case, meta_inputs(task, case), outputs=outs, chip="910B2", tiling_only=True)
    assert only.ok and only.block_dim > 0 and only.time_us is None
    digest = only.extra["tiling_digest"]
    assert len(digest) == 16 and int(digest, 16) >= 0
    full = sim.run(b, task, case, meta_inputs(task, case), outputs=outs, chip="910B2", count_only=True,
                   sample_blocks=True)
    assert full.ok and full.time_us is not None          # the blocks ran: timed
    assert full.extra["tiling_digest"] == digest          # every run reports the same digest


def test_digests_tell_a_move_that_changes_nothing_from_one_that_does(relu):
    task, _, src = relu
    cases = task.perf_cases()
    base = tiling_digests(src["base"], task, cases, "910B2")
    assert base is not None and len(base) == len(cases)
    # an elementwise kernel has no rows: the row cap changes no tiling; a tile cap does
    assert tiling_digests(src["rows"], task, cases, "910B2") == base
    assert tiling_digests(src["tile"], task, cases, "910B2") != base


def test_only_knob_values_make_a_tiling_only_change(relu):
    _, _, src = relu
    assert _tiling_only_change(src["base"], src["tile"])
    assert not _tiling_only_change(src["base"], src["native"])   # fp16 arithmetic: another device half


async def test_the_agent_passes_over_a_move_that_gives_the_parent_again(relu, monkeypatch):
    task, base, src = relu
    noop, real = {**base, "rows_per_tile": 8}, {**base, "tile_elems": 1024}
    monkeypatch.setattr(OfflineAgent, "_bottleneck_moves", staticmethod(lambda *a: []))
    monkeypatch.setattr(OfflineAgent, "_moves", lambda self, *a: iter([(noop, "rows_per_tile 0 -> 8"),
                                                                        (real, "tile_elems 0 -> 1024")]))
    parent = Candidate("r0-base", src["base"], 0, "lowering", knobs=base, status="passed", time_us=10.0)
    req = ProposalRequest(task=task, chip="910B2", round=1, index=0, strategy=Strategy("L3.row-tiling", "s", "s"),
                          parent=parent, parent_tier="top")
    p = await OfflineAgent(seed=0).propose(req)
    assert p.code is not None and p.knobs == real
    assert any("passed over" in n and "rows_per_tile 0 -> 8" in n for n in p.notes)


async def test_only_unchanged_moves_left_is_one_clear_failure(relu, monkeypatch):
    task, base, src = relu
    monkeypatch.setattr(OfflineAgent, "_bottleneck_moves", staticmethod(lambda *a: []))
    monkeypatch.setattr(OfflineAgent, "_moves", lambda self, *a: iter([({**base, "rows_per_tile": 8}, "rows_per_tile 0 -> 8")]))
    parent = Candidate("r0-base", src["base"], 0, "lowering", knobs=base, status="passed", time_us=10.0)
    req = ProposalRequest(task=task, chip="910B2", round=1, index=0, strategy=Strategy("L3.row-tiling", "s", "s"),
                          parent=parent, parent_tier="top")
    p = await OfflineAgent(seed=0).propose(req)
    assert p.code is None and "leaves the parent's tiling unchanged" in p.failure
