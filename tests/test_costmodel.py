"""The cost model's Python side: aggregation, bottleneck classes, roofline, parameters."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.costmodel import (API_WEIGHTS, CostParams, classify, combine, cost_params,  # noqa: E402
                               parse_block_costs, roofline_us, with_roofline)
from copilot.errors import BadInput  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def block(i, us, s=0.1, v=0.0, mte2=0.0, mte3=0.0):
    return {"kind": "cost", "block": i, "us": us, "pipes_us": {"S": s, "V": v, "MTE2": mte2, "MTE3": mte3},
            "unmodelled": 0}


def test_kernel_time_is_the_slowest_core_plus_launch():
    p = CostParams(launch_us=4.0)
    est = combine([block(0, 10.0, mte2=9.0), block(1, 12.0, mte2=11.0), block(2, 3.0)], p, 3)
    assert est.time_us == pytest.approx(16.0)
    assert est.pipes_us["MTE2"] == 11.0 and est.bottleneck == "memory" and est.timing == "estimate"


def test_bottleneck_classes():
    assert classify({"V": 90, "MTE2": 30, "MTE3": 20, "S": 5}, 104, 4) == "vector"
    assert classify({"V": 10, "MTE2": 95, "MTE3": 60, "S": 5}, 104, 4) == "memory"
    assert classify({"V": 1, "MTE2": 1, "MTE3": 1, "S": 1}, 6, 4) == "latency"       # launch dominates
    assert classify({"V": 10, "MTE2": 10, "MTE3": 10, "S": 10}, 104, 4) == "latency"  # nothing busy
    # no engine busy half the time, but the core's HBM share is the limit: memory-bound
    assert classify({"V": 10, "MTE2": 40, "MTE3": 40, "S": 1}, 104, 4, hbm_us=95) == "memory"


def test_estimate_never_falls_below_the_roofline():
    est = combine([block(0, 1.0, mte2=1.0)], CostParams(launch_us=0.5), 1)
    est = with_roofline(est, 5.0)
    assert est.time_us == 5.0 and est.roofline_fraction == 1.0
    est2 = with_roofline(combine([block(0, 20.0, mte2=19.0)], CostParams(launch_us=4.0), 1), 6.0)
    assert est2.roofline_fraction == pytest.approx(6.0 / 24.0)


def test_roofline_is_memory_or_vector_bound():
    p = CostParams(hbm_peak_gbps=3840.0, clock_ghz=1.8)
    # 4 MiB moved, little math: memory bound, 4194304 / 3.84e12 s
    assert roofline_us(4 * 2**20, 1e3, p, 48) == pytest.approx(4 * 2**20 / 3.84e6)
    # heavy math: 48 cores x 256 B/cycle x 1.8 GHz
    assert roofline_us(1e3, 1e9, p, 48) == pytest.approx(1e9 / (48 * 256 * 1.8e3))


def test_block_cost_lines_are_picked_out_of_diagnostics():
    lines = ['{"id":"L2.ALIGN_32B","severity":"error"}', '{"kind":"cost","block":0,"us":1.5,"pipes_us":{}}',
             "not json", '{"kind": "cost", "block": 1, "us": 2.0, "pipes_us": {}}']
    assert [b["block"] for b in parse_block_costs(lines)] == [0, 1]


def test_chip_cost_parameters_carry_sources():
    p = cost_params("910B2")
    assert p.clock_ghz > 0 and p.hbm_gbps > 0
    assert set(p.sources) >= {"clock_ghz", "hbm_gbps", "launch_us"}
    line = p.cxx_line(48)
    assert line.startswith("cost ") and "active_cores=48" in line


def test_cost_parameters_are_read_once_per_chip_and_callers_cannot_spoil_them():
    first = cost_params("910B2")
    first.sources["hbm_gbps"] = "spoiled"
    again = cost_params("910b2")                      # the profile name is case-insensitive
    assert again == first and again.sources["hbm_gbps"] != "spoiled"
    with pytest.raises(BadInput, match="unknown chip"):
        cost_params("no-such-chip")


def test_cost_line_carries_the_python_weight_table():
    p = CostParams()
    line = p.cxx_line(8)
    for api, w in API_WEIGHTS.items():
        assert f" weight.{api}={float(w)!r}" in line
    assert " weight.Exp=9.5" in p.cxx_line(8, {**API_WEIGHTS, "Exp": 9.5})
    with pytest.raises(ValueError, match="finite positive"):
        p.cxx_line(8, {"Exp": float("nan")})
    with pytest.raises(ValueError, match="identifier"):
        p.cxx_line(8, {"Exp x": 1.0})


@pytest.fixture(scope="module")
def sigmoid_exemplar():
    """The knowledge base's sigmoid (Muls, Exp, Adds, Reciprocal) built for a 1-block case."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is required")
    from copilot.backends import sim
    from copilot.costmodel.estimate import output_shapes
    from copilot.tasks import load_task
    from copilot.tasks.model import Case

    task = load_task("sigmoid")
    c0 = task.cases[0]
    case = Case("probe", [(64, 1024)], ["float32"], dict(c0.attrs), c0.value_ranges[:1])
    outs = output_shapes(task, case)
    b = sim.build(ROOT / "knowledge/cards/L5/elementwise-sigmoid.cpp", task, ["float32", "float32"], "910B2")
    assert b.ok, [(d.id, d.message) for d in b.diagnostics]

    def estimate():
        metas = [torch.empty(s, dtype=torch.float32, device="meta") for s in case.shapes]
        run = sim.run(b, task, case, metas, outputs=outs, count_only=True)
        assert run.ok, [(d.id, d.message) for d in run.diagnostics]
        return run.extra["estimate"]

    def vector_us():
        est = estimate()
        return est.pipes_us["V"], est.block_dim

    vector_us.estimate = estimate
    return vector_us


@pytest.mark.slow
def test_the_emulator_times_vector_work_with_the_python_weights(sigmoid_exemplar, monkeypatch):
    # the Python table alone (the chip's fitted per-dtype weights, e.g. Exp.b32, would win over it)
    monkeypatch.setattr(CostParams, "vector_weights", lambda self: dict(API_WEIGHTS))
    base, cores = sigmoid_exemplar()
    assert 64 * 1024 % cores == 0
    monkeypatch.setitem(API_WEIGHTS, "Ln", 40.0)          # an API the kernel does not call
    assert sigmoid_exemplar() == (base, cores)
    monkeypatch.setitem(API_WEIGHTS, "Exp", API_WEIGHTS["Exp"] + 10.0)
    heavier, _ = sigmoid_exemplar()
    # one Exp per element, 64K fp32 elements split evenly over the cores: each core's 256-byte
    # repeats take 10 cycles more at 1.8 GHz
    repeats = 64 * 1024 // cores * 4 / 256
    assert heavier - base == pytest.approx(repeats * 10 / 1.8e3, rel=0.02)


@pytest.mark.slow
def test_a_weight_per_element_size_wins_for_its_size_only(sigmoid_exemplar, monkeypatch):
    """`Exp.b32` times fp32 Exp; `Exp.b16` leaves an fp32 kernel alone; the cost record counts the
    kernel's vector work per API and element size (what bench/calibrate.py refits from)."""
    table = dict(API_WEIGHTS)
    monkeypatch.setattr(CostParams, "vector_weights", lambda self: table)
    base, cores = sigmoid_exemplar()
    table["Exp.b16"] = 40.0
    assert sigmoid_exemplar() == (base, cores)
    table["Exp.b32"] = table["Exp"] + 10.0
    heavier, _ = sigmoid_exemplar()
    repeats = 64 * 1024 // cores * 4 / 256
    assert heavier - base == pytest.approx(repeats * 10 / 1.8e3, rel=0.02)


@pytest.mark.slow
def test_the_cost_record_counts_vector_work_per_api_and_element_size(sigmoid_exemplar):
    est = sigmoid_exemplar.estimate()
    n, repeats = est.vector_counts["Exp.b32"]
    assert repeats == 64 * 1024 // est.block_dim * 4 / 256 and n >= 1
    assert not any(k.endswith(".b16") for k in est.vector_counts)
