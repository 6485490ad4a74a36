"""bench/calibrate.py's fit: how a cached case is re-timed for new parameters, the launch ceiling
from the public measurements, and which kernel the sweep times for an operator."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CANNBENCH = REPO.parent / "shared" / "cannbench"

spec = importlib.util.spec_from_file_location("calibrate", REPO / "bench" / "calibrate.py")
calibrate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calibrate)

P0 = {"clock_ghz": 1.8, "hbm_gbps": 1800.0, "hbm_peak_gbps": 3840.0, "core_dma_gbps": 115.0,
      "dma_latency_us": 0.5, "vector_issue_cycles": 10.0, "launch_us": 4.0}


def cached(est_us: float, hops: float | None, v_us: float = 1.0, hbm_us: float = 2.0, t_hw: float = 0.5) -> dict:
    entry = {"op": "sigmoid", "case": "1", "est_us": est_us, "t_hw_us": t_hw, "block_dim": 48,
             "pipes_us": {"S": 0.1, "V": v_us, "MTE2": 1.0, "MTE3": 1.0}, "hbm_us": hbm_us, "vector_counts": {}}
    if hops is not None:
        entry["latency_hops"] = hops
    return entry


def case(entry: dict) -> calibrate.Case:
    return calibrate.Case("level1/sigmoid:1", entry, {"measured_us": 5.0}, P0, {}, 48)


def test_the_sweep_parameters_give_back_the_swept_estimate():
    c = case(cached(est_us=7.5, hops=2.0))
    assert c.timed(P0, {})[0] == pytest.approx(7.5)


def test_each_latency_on_the_critical_path_moves_the_estimate_by_the_latency_change():
    c = case(cached(est_us=7.5, hops=2.0))            # body 3.5 = HBM 2.0 + slack 1.5 (two latencies)
    assert c.timed({**P0, "dma_latency_us": 0.25}, {})[0] == pytest.approx(7.0)
    assert c.timed({**P0, "dma_latency_us": 1.0}, {})[0] == pytest.approx(8.5)
    one = case(cached(est_us=7.5, hops=1.0))
    assert one.timed({**P0, "dma_latency_us": 0.25}, {})[0] == pytest.approx(7.25)


def test_the_slack_never_goes_negative_and_the_roofline_still_bounds():
    c = case(cached(est_us=6.2, hops=2.0, t_hw=5.5))      # slack 0.2 < two latencies of 0.5
    assert c.timed({**P0, "dma_latency_us": 0.05}, {})[0] == pytest.approx(6.0)
    assert c.timed({**P0, "dma_latency_us": 0.05, "launch_us": 1.0}, {})[0] == pytest.approx(5.5)


def test_a_case_cached_without_a_latency_run_counts_two_latencies():
    assert case(cached(est_us=7.5, hops=None)).hops == 2.0


def test_a_launch_change_is_additive_and_hbm_scales_with_bandwidth():
    c = case(cached(est_us=7.5, hops=2.0))
    assert c.timed({**P0, "launch_us": 2.0}, {})[0] == pytest.approx(5.5)
    assert c.timed({**P0, "hbm_gbps": 3600.0}, {})[0] == pytest.approx(6.5)


@pytest.mark.skipif(not CANNBENCH.is_dir(), reason=f"CANN-Bench not found at {CANNBENCH}")
def test_the_launch_ceiling_is_the_fastest_public_measurement_of_the_chip():
    meta = json.loads((CANNBENCH / "tasks" / "metadata" / "910b2.json").read_text())
    times = [f["baseline_perf_us"] for ops in meta.values() if isinstance(ops, dict) for cs in ops.values()
             if isinstance(cs, dict) for f in cs.values() if isinstance(f, dict) and "baseline_perf_us" in f]
    assert len(times) > 1000
    assert calibrate.launch_ceiling("910B2") == min(times)


def test_the_fit_keeps_the_launch_under_its_ceiling():
    # cases whose measured times want a 6 us launch: the fit stops at the ceiling
    cases = [calibrate.Case(f"level1/sigmoid:{i}", {**cached(est_us=4.0 + 3.0, hops=1.0), "case": str(i)},
                            {"measured_us": 9.0}, P0, {}, 48) for i in range(6)]
    p, _ = calibrate.fit_params(cases, P0, {}, rounds=1, launch_max=3.3)
    assert p["launch_us"] <= 3.3 + 1e-9
    p_free, _ = calibrate.fit_params(cases, P0, {}, rounds=1)
    assert p_free["launch_us"] > 3.3


def test_the_sweep_times_a_calibration_kernel_only_where_it_passed_its_public_task(tmp_path, monkeypatch):
    kernels, out = tmp_path / "calibration_kernels", tmp_path / "calibration"
    kernels.mkdir()
    out.mkdir()
    (kernels / "gelu.cpp").write_text("// kernel\n")
    (kernels / "exp.cpp").write_text("// kernel\n")
    monkeypatch.setattr(calibrate, "CAL_KERNELS", kernels)
    monkeypatch.setattr(calibrate, "OUT", out)
    (out / "kernel-checks-910b2.json").write_text(json.dumps({"gelu": {"passed": True}, "exp": {"passed": False}}))
    assert calibrate.kernel_for("gelu", "910B2") == (kernels / "gelu.cpp", "calibration")
    assert calibrate.kernel_for("exp", "910B2") == (out / "kernels" / "910B2" / "exp.cpp", "lowered")
    assert calibrate.kernel_for("mish", "910B2")[1] == "lowered"          # no calibration kernel
    assert calibrate.kernel_for("gelu", "950PR")[1] == "lowered"          # not checked on that chip


def test_a_newer_sweep_part_wins_over_an_older_file_of_the_same_case(tmp_path, monkeypatch):
    import os

    monkeypatch.setattr(calibrate, "OUT", tmp_path)
    old, new = tmp_path / "counts-910b2.json", tmp_path / "counts-910b2-s9.json"
    old.write_text(json.dumps({"level1/mish:2": {"est_us": 9.0, "kernel_sha256": "old"},
                               "level1/mish:3": {"est_us": 4.0}}))
    new.write_text(json.dumps({"level1/mish:2": {"est_us": 7.0, "kernel_sha256": "new"},
                               "level1/mish:4": {"error": "no estimate"}}))
    os.utime(old, (1_000_000, 1_000_000))      # the part file sorts before the main file by name
    os.utime(new, (2_000_000, 2_000_000))
    merged = calibrate._cached_counts("910B2")
    assert merged["level1/mish:2"]["kernel_sha256"] == "new"
    assert merged["level1/mish:3"]["est_us"] == 4.0 and "error" in merged["level1/mish:4"]
    os.utime(old, (3_000_000, 3_000_000))      # and the other way round
    assert calibrate._cached_counts("910B2")["level1/mish:2"]["kernel_sha256"] == "old"


def test_the_diagnosis_reports_each_side_against_the_roofline():
    e = cached(12.0, 1.0, v_us=8.0, hbm_us=2.0)
    e["vector_counts"] = {"Div.b32": [10, 1000], "Adds.b32": [10, 1000]}
    c = calibrate.Case("level1/mish:2", e, {"measured_us": 20.0, "t_hw_us_meta": 4.0}, P0, {}, 48)
    held = [{"case": "1", "est_us": 10.0, "measured_us": 20.0, "ratio": 0.5}]
    d = calibrate.diagnose_op([c], held, P0, {"Div.b32": 8.0})
    assert d["vendor_over_t_hw"] == 5.0 and d["ours_over_t_hw"] == 2.5
    assert d["held_out_large"] == 0.5 and d["held_out_small"] is None
    # Div: 10 x 10 issue + 1000 x 8 cycles, Adds: 10 x 10 + 1000 x 1
    assert d["vector_time_by_api"]["Div.b32"] == round(8100 / 9200, 3)


def test_a_cached_case_without_its_kernel_hash_is_timed_again():
    entry = {"est_us": 5.0, "kernel": "calibration", "latency_hops": 1.0}
    assert not calibrate._fresh(entry, "calibration", "abc")              # swept before kernels were hashed
    assert calibrate._fresh({**entry, "kernel_sha256": "abc"}, "calibration", "abc")
    assert not calibrate._fresh({**entry, "kernel_sha256": "old"}, "calibration", "abc")
    assert not calibrate._fresh({**entry, "kernel_sha256": "abc"}, "lowered", "abc")
