"""Resume: the state read back after a crash at any point is what the engine needs to continue
without losing or redoing work."""

from __future__ import annotations

import random

import pytest

from copilot.events import (Candidate, CandidateBuilt, CandidateEvaluated, CandidateProposed,
                            DecisionMade, DecisionNeeded, LLMCall, RoundFinished)
from sessions import SessionStore, decode_random, encode_random
from sessions.synthetic import emit_session


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "sessions.sqlite") as s:
        yield s


def _cand(cid: str, rnd: int, **kw) -> Candidate:
    code = f"// kernel {cid}\nint k_{cid.replace('-', '_')};\n"
    return Candidate(id=cid, code=code, round=rnd, origin=kw.pop("origin", "llm"), **kw)


def _round_one(store: SessionStore, rng: random.Random) -> None:
    store.begin_session("s", task="scaled_tanh", chip="910B2", backend="sim", agent="gpt-4o",
                        settings={"rounds": 4, "variants": 4})
    store.begin_round("s", 1, ["L3.TILE_SIZE"], random_state=encode_random(rng))
    for k, t in ((1, 100.0), (2, 80.0), (3, 120.0)):
        store.propose("s", _cand(f"r1-c{k}", 1, origin="lowering" if k == 1 else "llm"))
        store.built("s", f"r1-c{k}", True)
        store.evaluated("s", f"r1-c{k}", "passed", time_us=t, cases=[{"id": "c0", "passed": True}])
    store.emit(LLMCall(session="s", model="gpt-4o", role="cake-partial", phase="init", prompt_tokens=4000,
                       completion_tokens=1000, cost_usd=0.02, latency_s=5, round=1))
    store.emit(RoundFinished(session="s", round=1, candidates=3, passed=3, best_id="r1-c2", best_time_us=80.0))


def test_crash_mid_round_redoes_only_the_evaluations_in_flight(store):
    rng = random.Random(7)
    _round_one(store, rng)
    store.decide("s", 1, pins=["r1-c2"], vetoes=["r1-c3"], steer="try split-D")
    rng.random()
    round2_start = encode_random(rng)
    store.begin_round("s", 2, ["L3.SPLIT_D"], random_state=round2_start)
    store.propose("s", _cand("r2-c1", 2, parent_ids=["r1-c2"]))
    store.built("s", "r2-c1", True)
    store.evaluated("s", "r2-c1", "passed", time_us=60.0)
    store.propose("s", _cand("r2-c2", 2))
    store.built("s", "r2-c2", True)                # built, evaluation in flight
    store.propose("s", _cand("r2-c3", 2))          # proposed, build in flight
    store.propose("s", _cand("r2-c4", 2))
    store.built("s", "r2-c4", False)               # build failure is a result, not in flight
    store.emit(LLMCall(session="s", model="gpt-4o", role="cake-partial", phase="mutation",
                       prompt_tokens=500, completion_tokens=100, cost_usd=0.005, latency_s=2, round=2))
    rng.random()
    store.checkpoint_random_state("s", encode_random(rng))  # a later checkpoint, mid-round

    state = store.load_session("s")
    assert (state.last_completed_round, state.round_in_progress, state.next_round) == (1, 2, 2)
    assert state.decision_pending is None and state.last_action == "continue"
    assert [c.id for c in state.in_flight] == ["r2-c2", "r2-c3"]
    assert state.completed_ids == {"r1-c1", "r1-c2", "r1-c3", "r2-c1", "r2-c4"}
    assert state.pins == ["r1-c2"] and state.vetoes == ["r1-c3"] and state.steer == "try split-D"
    assert [c.id for c in state.population] == ["r2-c1", "r1-c2", "r1-c1"]   # vetoed r1-c3 is out
    assert state.best.id == "r2-c1" and state.candidate("r2-c1").parent_ids == ["r1-c2"]
    assert state.in_flight[0].code == "// kernel r2-c2\nint k_r2_c2;\n"  # re-evaluate the same code
    b = state.budget
    assert (b.prompt_tokens, b.completion_tokens, b.llm_calls, b.evaluations) == (4500, 1100, 2, 4)
    assert b.cost_usd == pytest.approx(0.025)
    # The round is planned again from the state it started from, so the same parents are drawn.
    assert state.random_state == round2_start
    assert decode_random(state.random_state).random() == decode_random(round2_start).random()
    assert state.settings == {"rounds": 4, "variants": 4} and state.agent == "gpt-4o"


def test_resumed_round_completes_without_evaluating_anything_twice(store):
    _round_one(store, random.Random(1))
    store.decide("s", 1)
    store.begin_round("s", 2)
    store.propose("s", _cand("r2-c1", 2))
    store.evaluated("s", "r2-c1", "passed", time_us=70.0)
    store.propose("s", _cand("r2-c2", 2))
    # -- crash; a new process resumes --
    store.mark_resumed("s")
    state = store.load_session("s")
    for c in state.in_flight:
        store.built("s", c.id, True)
        store.evaluated("s", c.id, "passed", time_us=75.0)
    store.emit(RoundFinished(session="s", round=2, candidates=2, passed=2, best_id="r2-c1"))
    rec = store.session_record("s", with_events=True)
    assert {c["id"]: c["eval_count"] for c in rec["candidates"]} == {
        "r1-c1": 1, "r1-c2": 1, "r1-c3": 1, "r2-c1": 1, "r2-c2": 1}
    assert "session_resumed" in [e["kind"] for e in rec["events"]]
    after = store.load_session("s")
    assert after.in_flight == [] and after.last_completed_round == 2 and after.status == "running"


def test_crash_before_the_decision_asks_for_it_again(store):
    _round_one(store, random.Random(1))
    store.emit(DecisionNeeded(session="s", round=1))
    state = store.load_session("s")
    assert state.decision_pending == 1 and state.round_in_progress is None and state.next_round == 2
    store.decide("s", 1, steer="go wide")
    state = store.load_session("s")
    assert state.decision_pending is None and state.steer == "go wide"


def test_the_latest_decision_sets_the_steering_text(store):
    _round_one(store, random.Random(1))
    store.decide("s", 1, steer="bigger tiles")
    store.begin_round("s", 2)
    store.emit(RoundFinished(session="s", round=2, candidates=0, passed=0))
    store.decide("s", 2, pins=["r1-c1"])
    state = store.load_session("s")
    assert state.steer == "" and state.pins == ["r1-c1"]
    assert [r.status for r in state.rounds] == ["decided", "decided"]


def test_a_vetoed_candidate_is_never_in_flight(store):
    _round_one(store, random.Random(1))
    store.decide("s", 1)
    store.begin_round("s", 2)
    store.propose("s", _cand("r2-c1", 2))
    store.emit(DecisionMade(session="s", round=2, vetoes=["r2-c1"], action="stop"))
    state = store.load_session("s")
    assert state.in_flight == [] and state.vetoes == ["r2-c1"] and state.last_action == "stop"


def test_a_finished_session_needs_no_decision(store):
    emit_session(store.emit, "done", rounds=2, variants=3, finish=True)
    state = store.load_session("done")
    assert state.status == "finished" and state.decision_pending is None
    assert state.last_completed_round == 2 and state.next_round == 3 and state.in_flight == []


def _oracle(events: list) -> dict:
    """What resume must report after exactly these events were committed."""
    proposed, done, vetoed, finished = [], set(), set(), 0
    for e in events:
        if isinstance(e, CandidateProposed):
            proposed.append(e.candidate.id)
        elif isinstance(e, CandidateBuilt) and not e.ok or isinstance(e, CandidateEvaluated):
            done.add(e.candidate_id)
        elif isinstance(e, DecisionMade):
            vetoed |= set(e.vetoes)
        elif isinstance(e, RoundFinished):
            finished = max(finished, e.round)
    return {"in_flight": [c for c in proposed if c not in done and c not in vetoed],
            "completed": done, "last": finished}


def test_state_after_a_crash_at_any_event_matches_the_log(tmp_path):
    events: list = []
    emit_session(events.append, "s", rounds=4, variants=5, code_bytes=800, seed=3)
    rng = random.Random(99)
    for i, cut in enumerate(sorted(rng.sample(range(1, len(events) + 1), 25))):
        with SessionStore(tmp_path / f"cut{i}.sqlite", durability="normal") as store:
            for e in events[:cut]:
                store.emit(e)
            state = store.load_session("s")
        want = _oracle(events[:cut])
        assert [c.id for c in state.in_flight] == want["in_flight"], cut
        assert state.completed_ids == want["completed"], cut
        assert state.last_completed_round == want["last"], cut


def test_proposing_a_completed_candidate_again_keeps_its_result(store):
    _round_one(store, random.Random(1))
    store.propose("s", _cand("r1-c2", 1))  # a resumed engine re-plans round 1 and re-emits it
    c = store.load_session("s").candidate("r1-c2")
    assert (c.status, c.time_us) == ("passed", 80.0)
    store.propose("s", Candidate(id="r1-c2", code="int other;\n", round=1, origin="llm"))
    assert store.load_session("s").candidate("r1-c2").status == "proposed"  # new code: new work


def test_a_resumed_candidate_keeps_the_bottleneck_of_its_slowest_performance_case(store):
    _round_one(store, random.Random(1))
    store.evaluated("s", "r1-c2", "passed", time_us=80.0, cases=[
        {"id": "c0", "passed": True, "role": "correctness"},
        {"id": "p1", "role": "performance", "est_us": 50.0, "bottleneck": "latency"},
        {"id": "p2", "role": "performance", "est_us": 130.0, "bottleneck": "memory"}])
    state = store.load_session("s")
    assert state.candidate("r1-c2").bottleneck == "memory"
    assert state.candidate("r1-c1").bottleneck is None      # no performance case recorded
