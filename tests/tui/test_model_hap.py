"""The leaderboard's CANN-Bench figures: HAP per candidate and the score of the session's best,
for a task inside a CANN-Bench layout; nothing for other tasks."""

from __future__ import annotations

import json

import pytest

from copilot.events import Candidate, CandidateEvaluated, CandidateProposed, SessionStarted
from copilot.scoring import Baseline, hap
from tui.model import COLUMNS, BoardModel


def _suite(tmp_path):
    task = tmp_path / "tasks" / "level1" / "mish"
    task.mkdir(parents=True)
    (tmp_path / "tasks" / "metadata").mkdir()
    meta = {"level1": {"mish": {str(i): {"baseline_perf_us": 10.0, "t_hw_us": 2.0} for i in range(1, 5)}}}
    (tmp_path / "tasks" / "metadata" / "910b2.json").write_text(json.dumps(meta))
    return task


def _feed(m: BoardModel, cid: str, est: dict[str, float]):
    m.apply(CandidateProposed("s", candidate=Candidate(cid, f"int {cid.replace('-', '_')};", 1, "offline")))
    cases = [{"id": "1", "passed": True, "role": "correctness"}]
    cases += [{"id": k, "role": "performance", "est_us": v} for k, v in est.items()]
    m.apply(CandidateEvaluated("s", candidate_id=cid, status="passed", cases=cases,
                               time_us=sum(est.values()) / len(est)))


def test_hap_column_and_the_best_candidates_score(tmp_path):
    task = _suite(tmp_path)
    m = BoardModel()
    m.apply(SessionStarted("s", task="mish", chip="910B2", backend="sim", agent="offline", task_path=str(task)))
    _feed(m, "r1-c1", {"3": 4.0, "4": 10.0})            # HAP 0.8 and 0.5
    _feed(m, "r1-c2", {"3": 10.0, "4": 34.0})           # 0.5 and 0.2
    col = [k for _, k in COLUMNS].index("hap")
    assert m.cells(m.rows["r1-c1"])[col] == "0.65"
    assert m.cells(m.rows["r1-c2"])[col] == "0.35"
    text = m.best_score_text()
    # best r1-c1: 3 of 4 cases judged, all passed: (0.2 + (0.3 + 0.3 + 0.4 + 0.3 + 0.25) / 4) * 100
    assert "best r1-c1" in text and "HAP 0.65" in text and "3 of 4 cases" in text
    assert f"≥ {(0.2 + 1.55 / 4) * 100:.1f}/100" in text
    assert hap(4.0, Baseline(10.0, 2.0)) == pytest.approx(0.8)


def test_no_cannbench_figures_for_a_task_outside_the_layout(tmp_path):
    m = BoardModel()
    m.apply(SessionStarted("s", task="relu", chip="910B2", backend="sim", agent="offline",
                           task_path=str(tmp_path / "relu")))
    _feed(m, "r1-c1", {"3": 4.0})
    col = [k for _, k in COLUMNS].index("hap")
    assert m.cells(m.rows["r1-c1"])[col] == "—" and m.best_score_text() == ""


def test_quick_twins_are_not_cases_of_the_benchmark(tmp_path):
    task = _suite(tmp_path)
    m = BoardModel()
    m.apply(SessionStarted("s", task="mish", chip="910B2", backend="sim", agent="offline", task_path=str(task)))
    m.apply(CandidateProposed("s", candidate=Candidate("r1-c1", "int r1_c1;", 1, "offline")))
    cases = [{"id": i, "passed": True, "role": "correctness"} for i in ("1", "3q", "4q", "9q")]
    cases += [{"id": "3", "role": "performance", "est_us": 4.0}]
    m.apply(CandidateEvaluated("s", candidate_id="r1-c1", status="passed", cases=cases, time_us=4.0))
    # cases 1 and 3 are the benchmark's; the twins 3q, 4q, 9q have no baseline and are not counted
    assert "2 of 4 cases judged" in m.best_score_text()


def test_every_cell_fits_its_column(tmp_path):
    """A leaderboard cell wider than its fixed column is cut on screen (`0.4` for `0.40 (0.18–0.70)`)."""
    from rich.cells import cell_len

    from tui.widgets.leaderboard import COLUMN_WIDTHS
    task = _suite(tmp_path)
    m = BoardModel()
    m.apply(SessionStarted("s", task="mish", chip="910B2", backend="sim", agent="offline", task_path=str(task)))
    m.apply(CandidateProposed("s", candidate=Candidate("r12-c10", "int a;", 12, "offline",
                                                       strategy="L3.broadcast-strategy")))
    cases = [{"id": k, "role": "performance", "est_us": v, "est_band": 2.41} for k, v in (("3", 1112.75), ("4", 4.0))]
    m.apply(CandidateEvaluated("s", candidate_id="r12-c10", status="passed", cases=cases, time_us=1112.75))
    cells = m.cells(m.rows["r12-c10"])
    assert cells[[k for _, k in COLUMNS].index("time")] == "1113 µs est. (×÷3.41)"
    from tui.model import format_time
    for t in (99.994, 185.85, 999.9, 12345.0):          # four significant digits keep the band inside
        assert cell_len(format_time(t, "estimate", 2.29)) <= COLUMN_WIDTHS["time"], t
    assert format_time(185.85, "estimate", 1.29) == "185.8 µs est. (×÷2.29)"
    for (label, _), text in zip(COLUMNS, cells):
        if label != "strategy":          # a long direction name is cut by design (the review shows it whole)
            assert cell_len(text) <= COLUMN_WIDTHS[label], (label, text)
