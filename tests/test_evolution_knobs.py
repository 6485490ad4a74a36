"""Structural knobs of the lowering in the evolution's knob space: each legal only where the task's
plan has what it changes, and proposed by the offline agent from the parent's bottleneck."""

from __future__ import annotations

import pytest

from copilot.agents.offline import OfflineAgent
from copilot.errors import BadInput
from copilot.events import Candidate
from copilot.evolution import ProposalRequest, Strategy
from copilot.lowering import default_knobs, knob_space, lower, resolve
from copilot.tasks import load_task


@pytest.fixture(scope="module")
def rms_norm():
    return load_task("rms_norm")


def test_structural_knobs_are_offered_only_where_the_plan_has_what_they_change(rms_norm):
    assert {"row_residency", "stage_invariant"} <= set(knob_space(rms_norm))
    softmax = knob_space(load_task("softmax"))
    assert "row_residency" in softmax and "stage_invariant" not in softmax    # no row-invariant operand
    relu = knob_space(load_task("relu"))
    assert not {"row_residency", "stage_invariant"} & set(relu)               # elementwise: no passes


@pytest.mark.parametrize("name,value", [("row_residency", "sometimes"), ("stage_invariant", 1)])
def test_a_structural_knob_outside_its_values_is_refused(name, value):
    with pytest.raises(BadInput, match=name):
        resolve({name: value})


def test_each_structural_choice_changes_the_device_code(rms_norm):
    from copilot.backends.sim.units import split_units

    base = split_units(lower(rms_norm).source).device
    for name, value in (("row_residency", "reload"), ("stage_invariant", "per_tile")):
        other = split_units(lower(rms_norm, knobs={**default_knobs(), name: value}).source).device
        assert other != base, name
    # reloading every pass: one fp32 slot fewer, and the second pass copies the row in again
    reload = lower(rms_norm, knobs={**default_knobs(), "row_residency": "reload"}).source
    kept = lower(rms_norm).source
    assert "still resident" in kept and "still resident" not in reload
    slots = [int(s.split("NUM_SLOTS = ")[1].split(";")[0]) for s in (kept, reload)]
    assert slots[1] == slots[0] - 1


@pytest.fixture
def agent(monkeypatch):
    monkeypatch.setattr(OfflineAgent, "_lower", staticmethod(lambda task, chip, knobs: f"// kernel {sorted(knobs.items())}"))
    return OfflineAgent(seed=1)


def _request(task, bottleneck, knobs, strategy="L3.split-d"):
    parent = Candidate("r1-c1", "// parent", 1, "offline", knobs=knobs, status="passed", time_us=10.0,
                       bottleneck=bottleneck)
    return ProposalRequest(task=task, chip="910B2", round=2, index=1, strategy=Strategy(strategy, "s", "s"),
                           parent=parent, parent_tier="top")


async def test_a_memory_bound_parent_that_reloads_its_rows_gets_them_resident_first(agent, rms_norm):
    knobs = {**default_knobs(rms_norm), "row_residency": "reload", "stage_invariant": "per_tile"}
    first = await agent.propose(_request(rms_norm, "memory", knobs))
    assert first.knobs["row_residency"] == "keep" and "memory-bound" in first.notes[0]
    second = await agent.propose(_request(rms_norm, "memory", knobs))
    assert second.knobs["stage_invariant"] == "stage" and second.knobs["row_residency"] == "reload"


async def test_a_vector_bound_parent_may_trade_residency_for_longer_tiles(agent, rms_norm):
    knobs = default_knobs(rms_norm)
    seen = [(await agent.propose(_request(rms_norm, "vector", knobs))).knobs for _ in range(4)]
    assert any(k["row_residency"] == "reload" for k in seen)


async def test_the_reduction_strategy_moves_the_residency_among_its_first_knobs(agent, rms_norm):
    p = await agent.propose(_request(rms_norm, None, default_knobs(rms_norm), strategy="L3.reduction-strategies"))
    changed = {k for k, v in p.knobs.items() if v != default_knobs(rms_norm)[k]}
    assert changed and changed <= {"split_d_elems", "row_residency", "rows_per_tile"}


def test_native_fp16_arithmetic_is_offered_only_for_elementwise_fp16_work(rms_norm):
    assert knob_space(load_task("sigmoid"))["arith"] == ["fp32", "native"]
    assert "arith" not in knob_space(rms_norm)                          # a reduction: fp32 statistics
    with pytest.raises(BadInput, match="arith"):
        resolve({"arith": "fp16"})


def test_native_scalars_take_the_tile_type():
    from copilot.lowering.knobs import native_scalars

    code = "Muls(tmp0, slot[0], -1.0f, n);\nDuplicate(slot[1], 1.0f, n);\nAdds(t, t, td_.scalar[f(1, 2)], n);"
    assert native_scalars(code) == ("Muls(tmp0, slot[0], static_cast<Calc>(-1.0f), n);\n"
                                    "Duplicate(slot[1], static_cast<Calc>(1.0f), n);\n"
                                    "Adds(t, t, static_cast<Calc>(td_.scalar[f(1, 2)]), n);")
    assert native_scalars(native_scalars(code)) == native_scalars(code)


@pytest.mark.skipif(__import__("shutil").which("g++") is None, reason="g++ is required")
def test_native_fp16_sigmoid_computes_without_casts_and_passes_its_fp16_case(tmp_path):
    """arith=native: the fp16 case's tiles are half throughout (no Cast on the vector unit), the
    scalars are half, and the result still meets the fp16 precision standard on the emulator."""
    from copilot.backends.sim import build, run
    from copilot.oracle import make_inputs, reference, run_verdict

    task = load_task("sigmoid")
    src = lower(task, knobs={**default_knobs(), "arith": "native"}).source
    assert "std::is_same<DTYPE_X, half>::value, half, float" in src and "static_cast<Calc>(-1.0f)" in src
    case = next(c for c in task.cases if c.dtypes == ["float16"])
    path = tmp_path / "sigmoid.cpp"
    path.write_text(src)
    b = build(path, task, ["float16", "float16"])
    assert b.ok, b.diagnostics
    inputs = make_inputs(task, case, 0)
    ref = reference(task, case, inputs)
    r = run(b, task, case, inputs, outputs=ref.outputs)
    verdict = run_verdict(task, ref, r, inputs, case)
    assert verdict.passed, verdict.message
    counts = r.extra["estimate"].vector_counts
    assert counts and not any("Cast" in k for k in counts), counts


async def test_a_vector_bound_elementwise_parent_computes_fp16_in_fp16_first(agent):
    sigmoid = load_task("sigmoid")
    first = await agent.propose(_request(sigmoid, "vector", default_knobs(sigmoid)))
    assert first.knobs["arith"] == "native" and "vector-bound" in first.notes[0]
