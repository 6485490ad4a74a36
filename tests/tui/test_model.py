"""The board model and the decision draft, without Textual: what the panes are built from."""

from __future__ import annotations

from copilot.events import (Candidate, CandidateEvaluated, CandidateProposed, DecisionMade, RoundFinished,
                            SessionStarted)
from tui.decision import DecisionDraft
from tui.model import BoardModel, format_time


def feed(m: BoardModel, cid: str, t: float | None, status: str = "passed", round_: int = 1) -> set[str]:
    changed = m.apply(CandidateProposed("s", candidate=Candidate(cid, f"int {cid.replace('-', '_')};", round_,
                                                                 "offline", strategy="L3.row-tiling")))
    return changed | m.apply(CandidateEvaluated("s", candidate_id=cid, status=status, time_us=t,
                                                roofline_fraction=0.4 if t else None))


def test_events_touch_only_their_row_and_ranks_follow_time():
    m = BoardModel()
    m.apply(SessionStarted("s", task="rms_norm", chip="910B2", backend="sim", agent="offline"))
    assert feed(m, "r0-base", 100.0, round_=0) == {"r0-base"}
    feed(m, "r1-c1", 80.0)
    assert feed(m, "r1-c2", 50.0) == {"r1-c2"}          # a new best changes one row's cells ...
    assert [m.rank(c) for c in ("r1-c2", "r1-c1", "r0-base")] == [1, 2, 3]   # ... ranks are derived
    assert m.speedup(m.rows["r1-c2"]) == 2.0
    feed(m, "r1-c3", None, status="build_failed")
    assert m.rank("r1-c3") is None and m.cells(m.rows["r1-c3"])[5] == "✗ build failed"


def test_times_are_labelled_estimate_or_measured():
    assert format_time(12.345, "estimate") == "12.35 µs est."
    assert format_time(12.345, "measured") == "12.35 µs meas."
    assert format_time(None, "estimate") == "—"


def test_markers_are_words_not_colours():
    m = BoardModel()
    feed(m, "r1-c1", 10.0)
    feed(m, "r1-c2", 20.0)
    d = DecisionDraft()
    m.queued = d.queued
    d.toggle_pin("r1-c1", pinned_now=False)
    d.toggle_veto("r1-c2")
    assert m.cells(m.rows["r1-c1"])[-1] == "📌 to pin"
    assert m.cells(m.rows["r1-c2"])[-1] == "✗ to veto"
    m.apply(DecisionMade("s", round=1, pins=["r1-c1"], vetoes=["r1-c2"]))
    m.queued = DecisionDraft().queued
    assert m.cells(m.rows["r1-c1"])[-1] == "📌 pinned"
    assert m.cells(m.rows["r1-c2"])[-1] == "✗ vetoed"


def test_progress_is_best_and_median_per_round():
    m = BoardModel()
    feed(m, "r1-c1", 10.0)
    feed(m, "r1-c2", 20.0)
    m.apply(RoundFinished("s", round=1, candidates=2, passed=2, best_id="r1-c1", best_time_us=10.0,
                          median_time_us=20.0))
    assert m.progress() == [(1, 10.0, 20.0)]


def test_draft_becomes_one_round_decision():
    d = DecisionDraft()
    d.toggle_pin("a", pinned_now=False)
    d.toggle_pin("b", pinned_now=True)      # pinned already: unpin
    d.toggle_veto("a")                      # a veto replaces the pin
    d.steer = "smaller tiles"
    dec = d.decision("continue")
    assert (dec.pins, dec.unpins, dec.vetoes, dec.steer, dec.action) == ([], ["b"], ["a"], "smaller tiles", "continue")
    assert d.decision("stop").action == "stop"
