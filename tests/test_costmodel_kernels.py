"""The cost model's sanity properties on real kernels: the lowering agent's kernel for a task,
varied by one knob, estimated on the 910B2 profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot.backends import sim
from copilot.costmodel.estimate import estimate_case
from copilot.lowering import lower
from copilot.tasks import load_task
from copilot.tasks.model import Case


@pytest.fixture(scope="module")
def estimate(tmp_path_factory):
    work = tmp_path_factory.mktemp("kernels")
    seen = {}

    def run(name: str, knobs: dict, shape: tuple, dtype: str):
        key = (name, tuple(sorted(knobs.items())), shape, dtype)
        if key not in seen:
            task = load_task(name)
            c0 = task.cases[0]
            case = Case("probe", [shape], [dtype], dict(c0.attrs), c0.value_ranges[:1])
            path = Path(work) / f"{name}-{len(seen)}.cpp"
            path.write_text(lower(task, knobs=knobs).source)
            b = sim.build(path, task, [dtype, dtype], "910B2")
            assert b.ok, [d.message for d in b.diagnostics]
            seen[key] = estimate_case(b, task, case)
            assert seen[key] is not None and seen[key].timing == "estimate"
        return seen[key]

    return run


BIG, MEDIUM = (8192, 8192), (512, 512)


def test_double_buffering_beats_single_buffering_on_a_memory_bound_kernel(estimate):
    # 4 cores stream 256K elements: each core is limited by its own copy engines, not by HBM.
    few = {"block_dim_policy": "min_work", "min_work_elems": 65536}
    db = estimate("relu", {**few, "buffer_num": 2}, MEDIUM, "float16")
    sb = estimate("relu", {**few, "buffer_num": 1}, MEDIUM, "float16")
    assert db.block_dim == sb.block_dim == 4
    assert db.time_us < 0.9 * sb.time_us


def test_more_cores_help_until_bandwidth_saturates(estimate):
    four = estimate("relu", {"block_dim_policy": "min_work", "min_work_elems": 65536}, MEDIUM, "float16")
    many = estimate("relu", {"block_dim_policy": "all_cores"}, MEDIUM, "float16")
    assert many.block_dim > four.block_dim and many.time_us < four.time_us
    half = estimate("relu", {"block_dim_policy": "half_cores"}, BIG, "float16")
    full = estimate("relu", {"block_dim_policy": "all_cores"}, BIG, "float16")
    assert full.block_dim == 2 * half.block_dim
    assert full.time_us > 0.95 * half.time_us          # HBM is saturated: doubling the cores stops helping


@pytest.mark.xfail(strict=True, reason="known since 2026-12-01: with the refitted 0.12 us DMA latency, tiles "
                   "of 1024 fp16 reach the HBM bound (MTE2 89 us est.) while the default tile's copies "
                   "run at 118 us (not 512-B aligned per core slice, it seems) — a tiling to fix, not this test")
def test_tiny_tiles_are_slower_than_large_ones(estimate):
    tiny = estimate("relu", {"tile_elems": 1024}, BIG, "float16")
    large = estimate("relu", {}, BIG, "float16")
    assert tiny.time_us > 1.5 * large.time_us


def test_fp32_costs_about_twice_fp16_on_a_memory_bound_kernel(estimate):
    fp16 = estimate("relu", {}, BIG, "float16")
    fp32 = estimate("relu", {}, BIG, "float32")
    assert fp16.bottleneck == fp32.bottleneck == "memory"
    assert 1.6 < fp32.time_us / fp16.time_us < 2.2


def test_transcendental_heavy_kernel_is_vector_bound(estimate):
    erf = estimate("erf", {}, (4096, 4096), "float16")    # a polynomial per element, computed in fp32
    assert erf.bottleneck == "vector"
    assert erf.pipes_us["V"] > 3 * erf.pipes_us["MTE2"]
    assert estimate("relu", {}, (4096, 4096), "float16").bottleneck == "memory"


def test_no_estimate_falls_below_the_roofline(estimate):
    for e in (estimate("relu", {}, BIG, "float16"), estimate("relu", {}, BIG, "float32")):
        assert e.t_hw_us and e.time_us >= e.t_hw_us and 0 < e.roofline_fraction <= 1
