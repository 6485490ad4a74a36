"""The cost model's per-core event timeline reproduces the effects engineers tune for."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
INCLUDE = HERE.parent / "copilot" / "backends" / "sim" / "include"


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    exe = tmp_path_factory.mktemp("timeline") / "timeline_test"
    subprocess.run(["g++", "-std=c++20", "-O1", "-I", str(INCLUDE), str(HERE / "sim_cost" / "timeline_test.cpp"),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def test_double_buffering_beats_single_buffering_on_a_memory_bound_kernel(figures):
    assert figures["double"] < 0.95 * figures["single"]
    # Once HBM itself is saturated by 48 cores, buffering cannot create bandwidth: no loss either.
    assert figures["double_sat"] <= figures["single_sat"]


def test_tiny_tiles_are_slower_than_large_ones(figures):
    assert figures["tiny"] > 1.5 * figures["double"]


def test_more_cores_help_until_bandwidth_saturates(figures):
    c1, c2, c4, c8, c24, c48 = (figures[k] for k in ("c1", "c2", "c4", "c8", "c24", "c48"))
    assert c1 > 1.8 * c2 and c2 > 1.8 * c4   # each core is bound by its own DMA engines: more cores help
    assert c4 > 1.2 * c8                     # still helping, less
    assert c8 / c48 < 1.05                   # HBM saturated: more cores no longer help
    assert c48 <= c24 <= c8


def test_fp32_costs_about_twice_fp16_when_memory_bound(figures):
    assert 1.8 < figures["fp32"] / figures["fp16"] < 2.2


def test_vector_heavy_kernel_keeps_the_vector_pipe_busiest(figures):
    assert figures["heavy_v"] > 3 * figures["heavy_mte2"]
    assert figures["heavy_cycles"] < 1.2 * figures["heavy_v"]   # V is the critical path


def test_barrier_after_every_tile_removes_the_overlap(figures):
    assert figures["barred"] > 1.3 * figures["double"]


def test_waitflag_delays_the_waiting_pipe_until_the_flag(figures):
    assert figures["flag_v_end"] > figures["flag_mte2_end"]


def test_unaligned_gm_and_short_bursts_move_slower(figures):
    assert figures["unaligned"] > 1.2 * figures["aligned"]
    assert figures["shortrows"] > 2 * figures["aligned"]


def test_copies_into_one_buffer_pipeline_on_their_pipe(figures):
    # Same-pipe writes stay in order without waiting for each copy's latency ...
    assert figures["copies_same"] == pytest.approx(figures["copies_distinct"], rel=1e-6)
    # ... while another pipe writing that buffer waits for the data to land.
    assert figures["v_after_copies"] > figures["copy_end"]
