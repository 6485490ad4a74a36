"""`CandidateEvaluationStarted`: the engine says when the evaluator takes a candidate up, so the
board tells "⚙ evaluating" from "… pending" (waiting for a free evaluation slot)."""

from __future__ import annotations

import asyncio

from copilot.events import CandidateEvaluationStarted
from copilot.evolution.engine import AutoPolicy, EvolutionEngine, EvolutionSettings
from copilot.tasks import load_task
from tests.tui.conftest import SIZE, TASK, wait_for
from tests.tui.fakes import FakeAgent, FakeEvaluator
from tui.model import BoardModel


class Recorder:
    def __init__(self) -> None:
        self.events = []

    def emit(self, e) -> None:
        self.events.append(e)


def test_each_evaluation_is_announced_once_before_its_result_and_never_for_a_duplicate():
    sink = Recorder()
    engine = EvolutionEngine(load_task(TASK), FakeAgent(), FakeEvaluator(), sink, AutoPolicy(),
                             EvolutionSettings(rounds=1, variants=4), session="s")
    asyncio.run(engine.run())
    started = [e.candidate_id for e in sink.events if isinstance(e, CandidateEvaluationStarted)]
    evaluated = [e.candidate_id for e in sink.events
                 if e.kind == "candidate_evaluated" and e.status != "rejected_duplicate"]
    assert sorted(started) == sorted(evaluated) and len(set(started)) == len(started)
    kinds = [(e.kind, getattr(e, "candidate_id", None) or getattr(getattr(e, "candidate", None), "id", None))
             for e in sink.events]
    for cid in started:
        assert (kinds.index(("candidate_proposed", cid)) < kinds.index(("evaluation_started", cid))
                < kinds.index(("candidate_evaluated", cid)))


def test_the_model_shows_evaluating_only_for_a_pending_row():
    from copilot.events import Candidate, CandidateEvaluated, CandidateProposed

    m = BoardModel()
    m.apply(CandidateProposed("s", candidate=Candidate("r1-c1", "int a;", 1, "offline")))
    assert m.cells(m.rows["r1-c1"])[5] == "… pending"
    assert m.apply(CandidateEvaluationStarted("s", candidate_id="r1-c1")) == {"r1-c1"}
    assert m.cells(m.rows["r1-c1"])[5] == "⚙ evaluating"
    m.apply(CandidateEvaluated("s", candidate_id="r1-c1", status="passed", time_us=5.0))
    assert m.apply(CandidateEvaluationStarted("s", candidate_id="r1-c1")) == set()   # late: ignored
    assert m.rows["r1-c1"].status == "passed"
    assert m.apply(CandidateEvaluationStarted("s", candidate_id="r9-c9")) == set()   # unknown id


async def test_the_board_shows_evaluating_and_pending_while_a_round_runs(make_app):
    # two evaluation slots (the engine's default), both held: the other two candidates wait
    app, ev = make_app(rounds=1, hold={"r1-c1", "r1-c2"})
    async with app.run_test(size=SIZE) as pilot:
        def held() -> bool:
            rows = app.model.rows
            return all(c in rows for c in ("r1-c1", "r1-c2", "r1-c3", "r1-c4")) and \
                rows["r1-c1"].status == rows["r1-c2"].status == "evaluating"

        await wait_for(pilot, held, what="the held evaluations")
        board = app.main.board
        assert [board.get_row(c)[5] for c in ("r1-c1", "r1-c2", "r1-c3", "r1-c4")] == \
            ["⚙ evaluating", "⚙ evaluating", "… pending", "… pending"]
        ev.gate.set()
        await wait_for(pilot, lambda: app.engine_status == "finished", what="the end of the session")
        assert not any(r.status in ("evaluating", "proposed") for r in app.model.rows.values())
