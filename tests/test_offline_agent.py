"""The offline agent: knob edits guided by strategy, tier and the parent's bottleneck."""

from __future__ import annotations

import pytest

from copilot.agents.offline import OfflineAgent
from copilot.events import Candidate
from copilot.evolution import ProposalRequest, Strategy
from copilot.lowering import default_knobs
from copilot.tasks import load_task


@pytest.fixture
def agent(monkeypatch):
    monkeypatch.setattr(OfflineAgent, "_lower", staticmethod(lambda task, chip, knobs: f"// kernel {sorted(knobs.items())}"))
    return OfflineAgent(seed=1)


def request(task, bottleneck, tier="top", strategy="L3.split-d"):
    parent = Candidate("r1-c1", "// parent", 1, "offline", knobs=default_knobs(task), status="passed",
                       time_us=10.0, bottleneck=bottleneck)
    return ProposalRequest(task=task, chip="910B2", round=2, index=1, strategy=Strategy(strategy, "s", "s"),
                           parent=parent, parent_tier=tier)


async def test_memory_bound_parent_gets_smaller_tiles_then_more_cores(agent):
    task = load_task("relu")
    first = await agent.propose(request(task, "memory"))
    # default tile_elems=0 is "as large as the UB allows": the move down is a quarter-size cap
    assert first.knobs["tile_elems"] == 8192 and "memory-bound" in first.notes[0]
    second = await agent.propose(request(task, "memory"))
    assert second.knobs["block_dim_policy"] == "all_cores" and "memory-bound" in second.notes[0]


async def test_latency_bound_parent_gets_fewer_cores_first(agent):
    task = load_task("relu")
    p = await agent.propose(request(task, "latency"))
    assert p.knobs["min_work_elems"] > default_knobs(task)["min_work_elems"] and "latency-bound" in p.notes[0]


async def test_explore_tier_follows_the_strategy_not_the_bottleneck(agent):
    task = load_task("relu")
    p = await agent.propose(request(task, "memory", tier="bottom", strategy="L3.split-d"))
    assert "split_d_elems" in p.notes[0] and "memory-bound" not in p.notes[0]


async def test_no_knob_setting_is_proposed_twice(agent):
    task = load_task("relu")
    seen = set()
    for _ in range(12):
        p = await agent.propose(request(task, "memory"))
        key = tuple(sorted(p.knobs.items()))
        assert key not in seen
        seen.add(key)
