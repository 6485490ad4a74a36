"""CANN-Bench's score (benchmark_spec §4.2-4.3) against hand-computed values, the metadata files,
and the structure of `cannpilot bench` on a suite in CANN-Bench's layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from copilot import scoring
from copilot.errors import BadInput
from copilot.scoring import Baseline, OperatorScore, case_score, hap, suite_scores

PUBLIC = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


# ----------------------------------------------------------------------------------------- HAP

@pytest.mark.parametrize("t_cand, expected", [
    (10.0, 0.5),            # at the baseline: 0.5
    (2.0, 1.0),             # at the hardware bound: 1.0
    (4.0, 0.8),             # (10-2) / ((4-2) + (10-2)) = 8/10
    (34.0, 0.2),            # 8 / (32 + 8)
    (1.0, 1.0),             # an estimate under the bound counts as the bound
])
def test_hap_by_hand(t_cand, expected):
    assert hap(t_cand, Baseline(10.0, 2.0)) == pytest.approx(expected)


def test_hap_when_the_baseline_equals_the_hardware_bound():
    assert hap(6.83, Baseline(6.83, 6.83)) == 1.0
    assert hap(7.0, Baseline(6.83, 6.83)) == 0.0


def test_hap_tends_to_zero_for_a_slow_kernel_and_needs_a_time():
    assert hap(1e9, Baseline(10.0, 2.0)) < 1e-7
    with pytest.raises(ValueError):
        hap(0.0, Baseline(10.0, 2.0))


# --------------------------------------------------------------------------- EachOperatorScore

def _op(outcomes_and_times, compiled=True):
    base = Baseline(10.0, 2.0)
    op = OperatorScore("x", "level1", compiled, n=len(outcomes_and_times))
    op.cases = [case_score(str(i), o, t, base) for i, (o, t) in enumerate(outcomes_and_times, 1)]
    return op


def test_operator_score_by_hand():
    op = _op([(scoring.PASSED, 4.0), (scoring.PASSED, 10.0), (scoring.PRECISION_FAIL, None),
              (scoring.RUNTIME_FAIL, None)])
    # d_cr = 3/4; sum = (0.3 + 0.5*0.8) + (0.3 + 0.5*0.5) = 1.25; (0.2*0.75 + 1.25/4) * 100
    assert op.compile_runtime == pytest.approx(0.75)
    assert op.score == pytest.approx(46.25)
    assert (op.passed, op.runtime_failures) == (2, 1)


def test_full_marks_and_the_baseline_score():
    assert _op([(scoring.PASSED, 2.0)] * 20).score == pytest.approx(100.0)
    assert _op([(scoring.PASSED, 10.0)] * 20).score == pytest.approx(20 + 30 + 25)


def test_precision_failures_cost_no_compile_term_runtime_failures_do():
    assert _op([(scoring.PRECISION_FAIL, None)] * 4).score == pytest.approx(20.0)
    assert _op([(scoring.RUNTIME_FAIL, None)] * 4).score == pytest.approx(0.0)
    assert _op([(scoring.UNJUDGED, None)] * 4).score == pytest.approx(20.0)


def test_a_submission_that_does_not_compile_scores_zero():
    assert _op([(scoring.PASSED, 2.0)] * 4, compiled=False).score == 0.0
    assert OperatorScore("y", "level2", False, n=0).score == 0.0


def test_a_passing_case_without_a_time_earns_the_precision_term_only():
    op = _op([(scoring.PASSED, None), (scoring.PRECISION_FAIL, None)])
    assert op.cases[0].hap is None
    assert op.score == pytest.approx((0.2 + 0.3 / 2) * 100)


def test_level_and_total_scores_are_sums():
    a = _op([(scoring.PASSED, 2.0)])                    # 100
    b = _op([(scoring.PRECISION_FAIL, None)])           # 20
    c = _op([(scoring.PASSED, 10.0)])                   # 75
    c.level = "level3"
    s = suite_scores([a, b, c])
    assert s["levels"]["level1"]["score"] == pytest.approx(120.0)
    assert s["levels"]["level3"]["score"] == pytest.approx(75.0)
    assert s["total"] == pytest.approx(195.0) and s["max"] == 300.0


def test_unknown_outcome_is_refused():
    with pytest.raises(ValueError):
        case_score("1", "maybe", None, None)


# ---------------------------------------------------------------------------------- metadata

def test_public_metadata_loads_for_both_chips():
    if not PUBLIC.is_dir():
        pytest.skip(f"CANN-Bench public tasks not found at {PUBLIC}")
    for chip in ("910B2", "950PR"):
        b = scoring.load_baselines(PUBLIC, chip)
        assert sorted(b) == list(scoring.LEVELS)
        assert sum(len(ops) for ops in b.values()) == 53
        assert all(len(cases) == 20 for ops in b.values() for cases in ops.values())
    mish = scoring.load_baselines(PUBLIC, "910b2")["level1"]["mish"]["1"]
    assert (mish.baseline_us, mish.t_hw_us) == (10.9, 1.09)


def test_unknown_chip_names_the_files_there(tmp_path):
    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata" / "910b2.json").write_text("{}")
    with pytest.raises(BadInput, match="have: 910b2"):
        scoring.load_baselines(tmp_path, "Ascend310")


def test_level_of_a_task_path():
    assert scoring.level_of(Path("/x/tasks/level3/top_k")) == "level3"
    assert scoring.level_of(Path("/x/ops/relu")) == ""


# ------------------------------------------------------------------------------- the bench CLI

def _suite(tmp_path: Path) -> Path:
    from tests.conftest import VALID_TASK

    suite = tmp_path / "tasks"
    (suite / "level1").mkdir(parents=True)
    (suite / "level2").mkdir()
    shutil.copytree(VALID_TASK, suite / "level1" / "scaled_tanh")
    shutil.copytree(VALID_TASK, suite / "level2" / "broken")
    (suite / "level2" / "broken" / "proto.yaml").write_text("operator: [unclosed\n")
    (suite / "metadata").mkdir()
    meta = {"_metadata": {"hardware": "910b2"},
            "level1": {"scaled_tanh": {str(i): {"baseline_perf_us": 50.0, "t_hw_us": 1.0} for i in range(1, 6)}},
            "level2": {"broken": {str(i): {"baseline_perf_us": 10.0, "t_hw_us": 1.0} for i in range(1, 21)}}}
    (suite / "metadata" / "910b2.json").write_text(json.dumps(meta))
    return suite


def test_bench_on_a_cannbench_layout_reports_the_score(tmp_path, cli):
    suite = _suite(tmp_path)
    code, out, err = cli("bench", "--suite", str(suite), "--chip", "910B2", "--cases", "5",
                         "-o", str(tmp_path / "report"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["mode"] == "cannbench" and doc["agent"] == "lowering" and doc["timing"] == "estimate"
    ops = {r["task"]: r for r in doc["operators"]}
    good, bad = ops["scaled_tanh"], ops["broken"]
    assert good["loaded"] and good["compiled"] and good["n"] == 5
    assert [c["outcome"] for c in good["cases"]] == ["unjudged"] * 4 + ["passed"]
    case5 = good["cases"][4]
    assert case5["t_cand_us"] > 0 and 0 < case5["hap"] <= 1
    assert case5["hap"] == pytest.approx(hap(case5["t_cand_us"], Baseline(50.0, 1.0)))
    assert good["score"] == pytest.approx((0.2 + (0.3 + 0.5 * case5["hap"]) / 5) * 100)
    assert not bad["loaded"] and bad["score"] == 0.0 and bad["n"] == 20 and "does not load" in bad["reason"]
    assert doc["scores"]["levels"]["level2"]["score"] == 0.0
    assert doc["scores"]["total"] == pytest.approx(good["score"])
    md = (tmp_path / "report.md").read_text()
    assert "ESTIMATE" in md and "| level1 | scaled_tanh | yes | yes | 1 / 5 |" in md
    assert "[2/2] level2/broken: score 0.00" in err


def test_resume_keeps_the_rows_of_operators_not_run_now(tmp_path, cli):
    suite = _suite(tmp_path)
    report = str(tmp_path / "report")
    code, out, err = cli("bench", "--suite", str(suite), "--tasks", "broken", "-o", report, "--json")
    assert code == 0, err
    first = json.loads(out)
    assert [r["task"] for r in first["operators"]] == ["broken"] and not first["complete"]
    code, out, err = cli("bench", "--suite", str(suite), "--tasks", "scaled_tanh", "--cases", "5",
                         "--resume", "-o", report, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["task"] for r in doc["operators"]] == ["scaled_tanh", "broken"] and doc["complete"]
    assert doc["scores"]["total"] == pytest.approx(doc["operators"][0]["score"])
    code, out, err = cli("bench", "--suite", str(suite), "--tasks", "broken", "--agent", "offline",
                         "--resume", "-o", report)
    assert code == 2 and "--resume" in err
