"""A resumed session ranks its restored candidates like the live ones: the engine reads back each
candidate's per-case rows, so the HAP (tasks with CANN-Bench baselines), "k of n performance cases
timed" and the rule that every candidate is ranked on the same performance cases hold across a
stop and a `cannpilot run --session NAME`."""

from __future__ import annotations

import math

import pytest

from copilot.events import SessionStarted
from copilot.evolution import Evaluation, Proposal, RoundDecision
from copilot.evolution.engine import leaderboard
from copilot.evolution.session import SessionConfig, new_engine, resume_engine, run_to_end
from copilot.scoring import hap
from sessions import SessionStore
from tests.test_evolution_fitness import B1, B5, FAST_GEOMEAN, HIGH_HAP, sigmoid  # noqa: F401
from tests.test_evolution_fitness import Agent as RoundOneAgent

UNTIMED = "not timed: its output shape needs the golden, which needs ~6.2 GiB, over the oracle budget of 2.0 GiB"


class Agent(RoundOneAgent):
    """A different kernel for every candidate id (the comment alone would be a duplicate)."""

    async def propose(self, req):
        return Proposal(code=f"int k_r{req.round}_c{req.index};", origin="offline")


def _rows(times: dict[str, float | None]) -> list[dict]:
    """Performance rows; None: a case the task cannot time here."""
    return [{"id": cid, "role": "performance", "est_us": t, "timing": "estimate"} if t else
            {"id": cid, "role": "performance", "est_us": None, "timing": "estimate", "untimed_by": "task",
             "not_timed": UNTIMED} for cid, t in times.items()]


class Evaluator:
    """sigmoid's cases 1 and 5 (both with 910B2 baselines); r1-c2 has the highest mean HAP, r2-c1 is
    faster by geometric mean but has a lower HAP, r2-c2 fails."""

    def __init__(self, table: dict[str, dict[str, float | None]]):
        self.table = table
        self.evaluated: list[str] = []

    async def evaluate(self, task, c):
        self.evaluated.append(c.id)
        times = self.table.get(c.id)
        if times is None:
            return Evaluation("incorrect", diagnostics=[{"id": "PREC.systematic_drift"}])
        timed = [t for t in times.values() if t]
        return Evaluation("passed", time_us=math.exp(sum(map(math.log, timed)) / len(timed)), cases=_rows(times),
                          diagnostics=[{"id": "SIM.NOTE", "severity": "info", "message": f"{c.id} evaluated"}])


TABLE = {"r0-base": {"1": 5.3, "5": 360.23}, "r1-c1": FAST_GEOMEAN, "r1-c2": HIGH_HAP,
         "r2-c1": {"1": 1.09, "5": 500.0}}


class StopAfterRoundOne:
    def __init__(self):
        self.board: list[dict] = []

    async def decide(self, ctx):
        self.board = ctx.leaderboard
        return RoundDecision(action="stop")


def _board(engine) -> list[tuple]:
    return [(r["id"], r["rank"], r["hap"], r["perf_timed"], r["time_us"], r["tier"])
            for r in leaderboard(engine.population, engine.baseline, engine.cases)]


async def _stopped_after_round_one(task, store, table) -> tuple[StopAfterRoundOne, object]:
    policy = StopAfterRoundOne()
    cfg = SessionConfig(task=task, rounds=2, variants=2, name="res", stagnation_rounds=9)
    e = new_engine(cfg, [store], policy, agent=Agent(), evaluator=Evaluator(table))
    res = await run_to_end(e)
    assert res.status == "stopped" and policy.board
    return policy, e


async def test_restored_candidates_keep_their_hap_rank_and_cases(sigmoid, tmp_path):  # noqa: F811
    with SessionStore(tmp_path / "sessions.sqlite") as store:
        policy, live = await _stopped_after_round_one(sigmoid, store, TABLE)
        before = _board(live)
        assert [r[0] for r in before] == ["r1-c2", "r1-c1", "r0-base"]
        assert [(r["id"], r["hap"], r["perf_timed"]) for r in policy.board] == [
            (r[0], r[2], r[3]) for r in before]

        ev = Evaluator(TABLE)
        resumed, _ = resume_engine(store, "res", [store], agent=Agent(), evaluator=ev)
        assert _board(resumed) == before
        assert resumed.cases == {cid: live.cases[cid] for cid in ("r0-base", "r1-c1", "r1-c2")}
        assert resumed.population.hap == pytest.approx(live.population.hap)

        res = await run_to_end(resumed)
        assert ev.evaluated == ["r2-c1", "r2-c2"]            # nothing of round 1 evaluated again
    # r2-c1 is faster by geometric mean, r1-c2 still has the higher mean HAP, as in a live session
    r2 = (hap(1.09, B1) + hap(500.0, B5)) / 2
    assert r2 < live.population.hap["r1-c2"] and math.sqrt(1.09 * 500.0) < math.sqrt(5.3 * 150.0)
    assert res.best.id == "r1-c2"
    assert res.best_hap == pytest.approx((hap(5.3, B1) + hap(150.0, B5)) / 2)
    assert [r[0] for r in _board(resumed)][:4] == ["r1-c2", "r1-c1", "r2-c1", "r0-base"]


async def test_a_case_the_task_could_not_time_before_the_stop_stays_out_after_it(sigmoid, tmp_path):  # noqa: F811
    """Round 1 could not time case 5 (left out of every candidate's time); the resumed process times
    it for r2-c1, which is still ranked on case 1 alone, like the restored candidates."""
    table = {"r0-base": {"1": 5.3, "5": None}, "r1-c1": {"1": 2.0, "5": None}, "r1-c2": {"1": 3.0, "5": None},
             "r2-c1": {"1": 2.5, "5": 300.0}}
    with SessionStore(tmp_path / "sessions.sqlite") as store:
        await _stopped_after_round_one(sigmoid, store, table)
        resumed, _ = resume_engine(store, "res", [store], agent=Agent(), evaluator=Evaluator(table))
        assert set(resumed.task_untimed) == {"5"}
        res = await run_to_end(resumed)
    board = {r["id"]: r for r in leaderboard(resumed.population, resumed.baseline, resumed.cases)}
    assert board["r2-c1"]["perf_timed"] == [1, 2] and board["r2-c1"]["time_us"] == pytest.approx(2.5)
    assert board["r2-c1"]["hap"] == pytest.approx(hap(2.5, B1))
    assert [r["id"] for r in leaderboard(resumed.population)][:4] == ["r1-c1", "r2-c1", "r1-c2", "r0-base"]
    assert res.best.id == "r1-c1"


async def test_a_case_found_untimeable_after_the_resume_leaves_the_restored_candidates_too(sigmoid, tmp_path,  # noqa: F811
                                                                                            cli, monkeypatch):
    """The resumed process cannot time case 5: the restored candidates are recorded again without it
    (not evaluated again: their evaluation count stays 1), so all are ranked on case 1 alone."""
    import json

    table = dict(TABLE, **{"r2-c1": {"1": 2.0, "5": None}})
    path = tmp_path / "sessions.sqlite"
    with SessionStore(path) as store:
        await _stopped_after_round_one(sigmoid, store, table)
        resumed, _ = resume_engine(store, "res", [store], agent=Agent(), evaluator=Evaluator(table))
        res = await run_to_end(resumed)
        rec = store.session_record("res")
    board = {r["id"]: r for r in leaderboard(resumed.population, resumed.baseline, resumed.cases)}
    for cid, t1 in (("r0-base", 5.3), ("r1-c1", 1.09), ("r1-c2", 5.3), ("r2-c1", 2.0)):
        assert board[cid]["perf_timed"] == [1, 2], cid
        assert board[cid]["time_us"] == pytest.approx(t1) and board[cid]["hap"] == pytest.approx(hap(t1, B1))
    assert res.best.id == "r1-c1"
    # recorded again is not evaluated again
    assert {c["id"]: c["eval_count"] for c in rec["candidates"]} == {
        "r0-base": 1, "r1-c1": 1, "r1-c2": 1, "r2-c1": 1, "r2-c2": 1}
    assert rec["session"]["evaluations"] == 5
    assert [d["message"] for d in next(c for c in rec["candidates"] if c["id"] == "r1-c2")["diagnostics"]] == [
        "r1-c2 evaluated"]
    monkeypatch.setenv("CANNPILOT_STORE", str(path))
    code, out, _ = cli("sessions", "show", "res", "--json")
    assert code == 0
    shown = {c["id"]: c for c in json.loads(out)["candidates"]}
    assert shown["r1-c2"]["perf_timed"] == [1, 2] and shown["r1-c2"]["time_us"] == pytest.approx(5.3)
