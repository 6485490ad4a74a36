"""Error bands on estimates: the chip profile's fitted bands reach every estimate, its text and JSON,
HAP and the vendor comparison; the calibration's case selection (bench/calibrate.py)."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest

from copilot.costmodel import CostParams, _checked_weights, band_range, combine, cost_params, format_estimate
from copilot.scoring import Baseline, candidate_hap, candidate_hap_band, hap, vendor_verdict
from tui.model import BoardModel, format_time

REPO = Path(__file__).resolve().parents[1]


def _calibrate():
    spec = importlib.util.spec_from_file_location("calibrate", REPO / "bench" / "calibrate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _block(us=20.0, v=15.0, mte=5.0):
    return {"us": us, "pipes_us": {"S": 0.1, "V": v, "MTE2": mte, "MTE3": mte}, "hbm_us": mte, "unmodelled": 0,
            "vec": {"Exp.b32": [4, 400]}, "gm_bytes_in": 100.0, "gm_bytes_out": 50.0}


def test_an_estimate_carries_the_band_of_its_bound_class():
    p = CostParams(bands={"all": 0.5, "vector": 0.3, "memory": 0.2})
    est = combine([_block()], p, 48)
    assert est.bottleneck == "vector" and est.band == 0.3
    assert est.to_json()["est_band"] == 0.3
    assert est.text() == f"{est.time_us:.2f} µs est. (×÷1.30)"
    assert est.vector_counts == {"Exp.b32": [4, 400]} and est.gm_bytes == 150.0
    # a class without its own band takes the chip's pooled one; an uncalibrated chip has none
    assert p.band("scalar") == 0.5
    assert combine([_block()], CostParams(), 48).band is None


def test_format_estimate_and_band_range():
    assert format_estimate(12.7, 0.35) == "12.70 µs est. (×÷1.35)"
    assert format_estimate(12.7, None) == "12.70 µs est."
    lo, hi = band_range(13.5, 0.35)
    assert lo == pytest.approx(10.0) and hi == pytest.approx(18.225)


def test_per_element_size_weights_are_accepted_and_malformed_ones_refused():
    assert _checked_weights({"Exp.b16": 3.0, "Exp": 4.0}) == {"Exp.b16": 3.0, "Exp": 4.0}
    with pytest.raises(ValueError):
        _checked_weights({"Exp.b12": 3.0})
    with pytest.raises(ValueError):
        _checked_weights({"Exp.b32": 0.0})
    line = replace(CostParams(), weights={"Exp.b32": 7.5}).cxx_line(48)
    assert " weight.Exp.b32=7.5" in line and " weight.Add=1.0" in line


@pytest.mark.parametrize("chip", ["910B2", "950PR"])
def test_calibrated_chips_have_bands_with_sources(chip):
    p = cost_params(chip)
    assert p.bands and all(0 < b < 10 for b in p.bands.values()), "run bench/calibrate.py fit --write"
    assert "bench/calibrate.py" in p.sources["bands"] and "bench/calibrate.py" in p.sources["weights"]


def test_vendor_verdict_needs_the_whole_band_on_one_side():
    assert vendor_verdict(10.0, 0.35, 14.0) == "faster"           # 13.5 < 14
    assert vendor_verdict(10.0, 0.35, 13.0) == "within the band"  # 13.5 > 13
    assert vendor_verdict(10.0, 0.35, 7.0) == "slower"            # 7.4 > 7
    assert vendor_verdict(10.0, None, 100.0) == "within the band"


def test_hap_carries_the_band():
    base = {"3": Baseline(10.0, 2.0)}
    cases = [{"id": "3", "role": "performance", "est_us": 4.0, "est_band": 0.5}]
    lo, hi = candidate_hap_band(cases, base)
    assert lo == pytest.approx(hap(6.0, base["3"])) and hi == pytest.approx(hap(4.0 / 1.5, base["3"]))
    assert lo < candidate_hap(cases, base) < hi
    assert candidate_hap_band([{**cases[0], "est_band": None}], base) == (pytest.approx(0.8), pytest.approx(0.8))


def test_leaderboard_time_and_hap_show_the_band(tmp_path):
    from copilot.events import Candidate, CandidateEvaluated, CandidateProposed, SessionStarted
    from tui.model import COLUMNS

    task = tmp_path / "tasks" / "level1" / "mish"
    task.mkdir(parents=True)
    (tmp_path / "tasks" / "metadata").mkdir()
    meta = {"level1": {"mish": {"3": {"baseline_perf_us": 10.0, "t_hw_us": 2.0}}}}
    (tmp_path / "tasks" / "metadata" / "910b2.json").write_text(json.dumps(meta))
    m = BoardModel()
    m.apply(SessionStarted("s", task="mish", chip="910B2", backend="sim", agent="offline", task_path=str(task)))
    m.apply(CandidateProposed("s", candidate=Candidate("r1-c1", "int a;", 1, "offline")))
    m.apply(CandidateEvaluated("s", candidate_id="r1-c1", status="passed", time_us=4.0,
                               cases=[{"id": "3", "role": "performance", "est_us": 4.0, "est_band": 0.25}]))
    cells = m.cells(m.rows["r1-c1"])
    keys = [k for _, k in COLUMNS]
    assert cells[keys.index("time")] == "4.00 µs est. (×÷1.25)"
    assert cells[keys.index("hap")] == "0.80"               # the cell; its band is in the title line
    assert "HAP 0.80 (0.73–0.87)" in m.best_score_text()     # HAP at 5.0 and 3.2 µs
    assert "faster than the vendor on 1 of 1 timed (band allowing)" in m.best_score_text()
    assert format_time(4.0, "measured", 0.25) == "4.00 µs meas."


def test_calibration_selects_single_kernel_real_measurements():
    cal = _calibrate()
    assert cal.vendor_kernels("S-x | baseline_kernels: Muls×1 + Add×1 + Exp×1") == [("Muls", 1), ("Add", 1), ("Exp", 1)]
    assert cal.exclusion(20.0, 1.0, [("Sigmoid", 1)]) is None
    assert cal.exclusion(20.0, 1.0, [("Slice", 1), ("SwiGlu", 1)]).startswith("chained")
    assert cal.exclusion(20.0, 1.0, [("Mul", 2)]).startswith("chained")
    assert cal.exclusion(10.9, 1.09, [("Mish", 1)]).startswith("placeholder")   # 10 x t_hw
    assert cal.exclusion(10.0, 0.4, [("Mish", 1)]).startswith("placeholder")    # the 10 us floor
    assert cal.exclusion(5.0, None or 1.0, []) == "no vendor kernel named in the note"


def test_public_case_list_excludes_chained_and_placeholder_cases():
    if not (REPO.parent / "shared" / "cannbench").is_dir():
        pytest.skip("CANN-Bench is not beside the repository (../shared/cannbench)")
    cal = _calibrate()
    rows = cal.public_cases("910B2", ["level1/exp", "level1/sigmoid"])
    exp = {r["case"]: r for r in rows if r["op"] == "exp"}
    assert exp["2"]["excluded"] is None                                  # AutomaticBufferFusionOp×1, measured
    assert exp["1"]["excluded"].startswith("placeholder")                # 10.9 = 10 x 1.09
    assert any(r["excluded"] and r["excluded"].startswith("chained") for r in exp.values())
    assert all(r["excluded"] is None for r in rows if r["op"] == "sigmoid")


def test_a_case_score_carries_hap_at_both_ends_of_the_band():
    from copilot.scoring import PASSED, case_score

    c = case_score("3", PASSED, 4.0, Baseline(10.0, 2.0), band=0.25)
    assert c.hap == pytest.approx(0.8) and c.est_band == 0.25
    assert c.hap_band == (pytest.approx(hap(5.0, Baseline(10.0, 2.0))), pytest.approx(hap(3.2, Baseline(10.0, 2.0))))
    assert c.to_json()["hap_band"] == list(c.hap_band)
    assert case_score("3", PASSED, 4.0, Baseline(10.0, 2.0)).to_json()["hap_band"] is None
