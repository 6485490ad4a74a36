"""The evolution engine: round 1 strategies, tiers, inspirations, dedup, and every human decision."""

from __future__ import annotations

import re

import pytest

from copilot.events import Candidate
from copilot.evolution import (
    BudgetExhausted,
    Evaluation,
    EvolutionEngine,
    EvolutionSettings,
    HumanEdit,
    Population,
    Proposal,
    RoundDecision,
    Strategy,
    code_hash,
)
from copilot.tasks import load_task

STRATEGIES = [Strategy(f"L3.s{i}", f"strategy {i}", f"do thing {i}") for i in range(1, 7)]


class FakeAgent:
    """Proposes code that names its round, index, strategy and parent; records every request."""

    name = "fake"

    def __init__(self, no_code_at: set[str] | None = None, budget_after: int | None = None,
                 same_code: bool = False) -> None:
        self.requests = []
        self.no_code_at = no_code_at or set()
        self.budget_after = budget_after
        self.same_code = same_code

    async def baseline(self, task, chip):
        return Proposal(code="// baseline kernel\nint base;", origin="lowering", agency_mode="lowering")

    async def propose(self, req):
        self.requests.append(req)
        if self.budget_after is not None and len(self.requests) > self.budget_after:
            raise BudgetExhausted("token budget of 1000 spent (1012 used)")
        key = f"r{req.round}-c{req.index}"
        if key in self.no_code_at:
            return Proposal(code=None, origin="llm", failure="reply had no code block")
        if self.same_code:
            return Proposal(code="// same\nint k;", origin="offline")
        parent = req.parent.id if req.parent else "none"
        return Proposal(code=f"// {key} {req.strategy.id} parent={parent}\nint k_{req.round}_{req.index};",
                        origin="offline")


class FakeEvaluator:
    """Time from a table by candidate id (default: 100 / (1 + index)); 'fail' marks incorrect."""

    def __init__(self, times: dict[str, float] | None = None) -> None:
        self.times = times or {}
        self.evaluated: list[str] = []

    async def evaluate(self, task, c):
        self.evaluated.append(c.id)
        if c.id == "r0-base":
            return Evaluation("passed", time_us=100.0)
        t = self.times.get(c.id)
        if t is None:
            m = re.match(r"r(\d+)-[ch](\d+)", c.id)
            t = 100.0 / (1 + 0.1 * int(m.group(1)) * int(m.group(2))) if m else 50.0
        if t == "fail":
            return Evaluation("incorrect", diagnostics=[{"id": "PREC.systematic_drift"}])
        return Evaluation("passed", time_us=float(t), roofline_fraction=0.5)


class Sink:
    def __init__(self):
        self.events = []

    def emit(self, e):
        self.events.append(e)

    def kinds(self):
        return [e.kind for e in self.events]


class ScriptedPolicy:
    def __init__(self, *decisions: RoundDecision) -> None:
        self.decisions = list(decisions)
        self.contexts = []

    async def decide(self, ctx):
        self.contexts.append(ctx)
        return self.decisions.pop(0) if self.decisions else RoundDecision()


@pytest.fixture
def task(task_dir):
    return load_task(task_dir)


def engine(task, agent=None, evaluator=None, policy=None, **settings):
    s = EvolutionSettings(**{"rounds": 3, "variants": 4, "stagnation_rounds": 9, **settings})
    return EvolutionEngine(task, agent or FakeAgent(), evaluator or FakeEvaluator(), Sink(), policy,
                           s, session="t", strategies=STRATEGIES)


async def test_round_one_uses_distinct_strategies_from_the_baseline(task):
    e = engine(task, rounds=1)
    res = await e.run()
    r1 = [q for q in e.agent.requests if q.round == 1]
    assert len({q.strategy.id for q in r1}) == 4
    assert all(q.parent.id == "r0-base" and q.parent_tier == "baseline" for q in r1)
    for q in r1:   # each variant is told its siblings' directions
        assert q.strategy.id not in q.sibling_strategies and len(q.sibling_strategies) == 3
    assert res.baseline.id == "r0-base" and res.best.id == "r1-c4"
    assert res.speedup_vs(res.baseline) == pytest.approx(1.4)


async def test_later_rounds_draw_parents_by_tier_and_inject_inspirations(task):
    e = engine(task, rounds=2, variants=10)
    await e.run()
    r2 = [q for q in e.agent.requests if q.round == 2]
    tiers = [q.parent_tier for q in r2]
    assert tiers.count("top") == 3 and tiers.count("middle") == 4 and tiers.count("bottom") == 3
    insp = r2[0].inspirations
    assert [i.tier for i in insp][0] == "top" and insp[0].candidate_id == "r1-c10"
    assert {"middle", "bottom"} <= {i.tier for i in insp}
    assert all(i.code and i.time_us > 0 for i in insp)


def test_tiers_split_30_40_30_and_skip_vetoed():
    pop = Population()
    for i in range(10):
        pop.add(Candidate(f"c{i}", f"int x{i};", 1, "offline", status="passed", time_us=10.0 + i))
    t = pop.tiers()
    assert [len(t[k]) for k in ("top", "middle", "bottom")] == [3, 4, 3]
    assert t["top"][0].id == "c0"
    pop.get("c0").vetoed = True
    assert pop.tiers()["top"][0].id == "c1"


def test_normalized_code_ignores_comments_and_white_space():
    assert code_hash("int  a; // x\n/* y */ int b;") == code_hash("int a;int b; // other comment")
    assert code_hash("int a;") != code_hash("int b;")
    assert code_hash("int a;") != code_hash("inta;")          # white space between words matters


async def test_duplicate_is_rejected_before_evaluation(task):
    ev = FakeEvaluator()
    e = engine(task, agent=FakeAgent(same_code=True), evaluator=ev, rounds=1)
    await e.run()
    statuses = {c.id: c.status for c in e.population.candidates.values()}
    assert statuses["r1-c1"] == "passed"
    assert [statuses[f"r1-c{i}"] for i in (2, 3, 4)] == ["rejected_duplicate"] * 3
    assert ev.evaluated == ["r0-base", "r1-c1"]


async def test_reply_without_code_is_a_recorded_failure(task):
    e = engine(task, agent=FakeAgent(no_code_at={"r1-c2"}), rounds=1)
    await e.run()
    assert e.population.get("r1-c2").status == "no_code"
    ev = [x for x in e.sink.events if x.kind == "candidate_evaluated" and x.candidate_id == "r1-c2"][0]
    assert ev.diagnostics[0]["id"] == "AGENT.NO_CODE" and "no code block" in ev.diagnostics[0]["message"]


class BuggyAgent(FakeAgent):
    """An agent with a bug of ours: a reply shape its parser never met raises on one candidate."""

    async def propose(self, req):
        if (req.round, req.index) == (1, 3):
            raise TypeError("'NoneType' object is not subscriptable")
        return await super().propose(req)


async def test_an_agent_error_costs_one_candidate_not_the_session(task):
    e = engine(task, agent=BuggyAgent(), rounds=2, variants=4)
    res = await e.run()
    assert res.status == "finished" and e.next_round > 2          # both rounds ran
    assert e.population.get("r1-c3").status == "no_code"
    ev = [x for x in e.sink.events if x.kind == "candidate_evaluated" and x.candidate_id == "r1-c3"][0]
    assert "TypeError" in ev.diagnostics[0]["message"] and "r1-c3" in ev.diagnostics[0]["message"]
    assert e.population.get("r1-c4").status == "passed"


async def test_pin_makes_a_candidate_a_parent_of_the_next_round(task):
    # r1-c1 is the slowest of round 1: only the pin can make it a parent every time.
    policy = ScriptedPolicy(RoundDecision(pins=["r1-c1"]))
    e = engine(task, policy=policy, rounds=2, variants=4)
    await e.run()
    r2 = [q for q in e.agent.requests if q.round == 2]
    assert r2[0].parent.id == "r1-c1" and r2[0].parent_tier == "pinned"
    assert e.population.get("r1-c1").pinned


async def test_veto_removes_a_candidate_and_rejects_its_strategy(task):
    policy = ScriptedPolicy(RoundDecision(vetoes=["r1-c4"]))   # the best of round 1
    e = engine(task, policy=policy, rounds=2, variants=4)
    await e.run()
    r2 = [q for q in e.agent.requests if q.round == 2]
    assert len(r2) == 4 and any(q.inspirations for q in r2)         # the checks below are not vacuous
    assert e.population.get("r1-c4").vetoed
    assert all(q.parent.id != "r1-c4" for q in r2)
    assert all(q.rejected_strategies == ["L3.s4"] for q in r2)
    assert all(q.strategy.id != "L3.s4" for q in r2)
    assert all(i.candidate_id != "r1-c4" for q in r2 for i in q.inspirations)
    # without the veto, the best of round 1 is a parent or an inspiration of round 2
    control = engine(task, rounds=2, variants=4)
    await control.run()
    c2 = [q for q in control.agent.requests if q.round == 2]
    assert any(q.parent.id == "r1-c4" or any(i.candidate_id == "r1-c4" for i in q.inspirations) for q in c2)


async def test_edit_enters_a_human_candidate_evaluated_like_any_other(task):
    ev = FakeEvaluator(times={"r1-h1": 10.0})
    policy = ScriptedPolicy(RoundDecision(edits=[HumanEdit("// my kernel\nint human;", parent_id="r1-c2")]))
    e = engine(task, evaluator=ev, policy=policy, rounds=2)
    res = await e.run()
    h = e.population.get("r1-h1")
    assert h.origin == "human" and h.parent_ids == ["r1-c2"] and h.status == "passed"
    assert "r1-h1" in ev.evaluated and res.best.id == "r1-h1"
    made = [x for x in e.sink.events if x.kind == "decision_made"][0]
    assert made.edits == ["r1-h1"]


async def test_steer_text_reaches_the_next_round(task):
    policy = ScriptedPolicy(RoundDecision(steer="keep rows whole; try 3 buffers"))
    e = engine(task, policy=policy, rounds=2)
    await e.run()
    r1 = [q for q in e.agent.requests if q.round == 1]
    r2 = [q for q in e.agent.requests if q.round == 2]
    assert len(r1) == len(r2) == 4
    assert [q.steer for q in r1] == [""] * 4
    assert [q.steer for q in r2] == ["keep rows whole; try 3 buffers"] * 4


async def test_stop_ends_the_session_after_the_round(task):
    policy = ScriptedPolicy(RoundDecision(action="stop"))
    e = engine(task, policy=policy, rounds=5)
    res = await e.run()
    assert res.status == "stopped" and len(res.rounds) == 1
    assert e.sink.kinds()[-1] == "session_finished"


async def test_budget_exhausted_stops_cleanly_and_keeps_everything(task):
    e = engine(task, agent=FakeAgent(budget_after=6), rounds=3, variants=4)
    res = await e.run()
    assert res.status == "budget_exhausted" and "1000" in res.reason
    assert {f"r1-c{i}" for i in range(1, 5)} <= set(e.population.candidates)
    assert res.best is not None


async def test_target_speedup_and_stagnation_stop_early(task):
    e = engine(task, rounds=5, target_speedup=1.3)
    res = await e.run()
    assert res.status == "finished" and "target speedup" in res.reason and len(res.rounds) == 1
    flat = FakeEvaluator(times={f"r{r}-c{i}": 90.0 + i + r for r in range(1, 6) for i in range(1, 5)})
    e2 = engine(task, evaluator=flat, rounds=5, stagnation_rounds=2)
    res2 = await e2.run()
    assert "stagnation" in res2.reason and len(res2.rounds) == 3


async def test_decision_gets_a_leaderboard_and_events_are_in_order(task):
    policy = ScriptedPolicy()
    e = engine(task, policy=policy, rounds=2)
    await e.run()
    board = policy.contexts[0].leaderboard
    assert board[0]["rank"] == 1 and board[0]["id"] == "r1-c4" and board[0]["speedup"] == pytest.approx(1.4)
    kinds = e.sink.kinds()
    assert kinds.index("round_finished") < kinds.index("decision_needed") < kinds.index("decision_made")


class _Killed(BaseException):          # a process killed mid-proposal, not an error the engine handles
    pass


class CrashingEvaluator(FakeEvaluator):
    """Dies (like a killed process) the first time it is asked to evaluate `crash_at`."""

    def __init__(self, crash_at: str) -> None:
        super().__init__()
        self.crash_at = crash_at

    async def evaluate(self, task, c):
        if c.id == self.crash_at:
            raise _Killed("killed")
        return await super().evaluate(task, c)


async def test_resume_after_a_crash_redoes_only_in_flight_work(task, tmp_path):
    from copilot.evolution import EvolutionEngine
    from copilot.evolution.session import SessionConfig, new_engine
    from sessions import SessionStore

    store = SessionStore(tmp_path / "store.db")
    cfg = SessionConfig(task=task, rounds=3, variants=4, name="crashy", stagnation_rounds=9)
    e1 = new_engine(cfg, [store], ScriptedPolicy(RoundDecision(pins=["r1-c2"], steer="go wide")),
                    agent=FakeAgent(), evaluator=CrashingEvaluator("r2-c3"))
    e1.strategies = STRATEGIES
    with pytest.raises(_Killed):
        await e1.run()
    r2_codes = {cid: c.code for cid, c in e1.population.candidates.items() if c.round == 2}
    done_before = {cid for cid, c in e1.population.candidates.items()
                   if c.status in ("passed", "incorrect", "build_failed", "rejected_duplicate")}

    state = store.load_session("crashy")
    assert state.round_in_progress == 2 and "r2-c3" in {c.id for c in state.in_flight}
    ev2 = FakeEvaluator()
    agent2 = FakeAgent()
    e2 = EvolutionEngine.restore(state, task, agent2, ev2, store, ScriptedPolicy(),
                                 EvolutionSettings(rounds=3, variants=4, stagnation_rounds=9), strategies=STRATEGIES)
    res = await e2.run()
    assert res.status == "finished" and [r.round for r in res.rounds] == [1, 2, 3]
    assert not (set(ev2.evaluated) & done_before)          # nothing completed is evaluated again
    assert "r2-c3" in ev2.evaluated                         # the in-flight one is redone
    assert e2.population.get("r1-c2").pinned and e2.steer == "go wide"
    # round 2 had proposed all its variants before the crash: resume keeps them, asks for none
    assert not any(q.round == 2 for q in agent2.requests)
    assert {cid: e2.population.get(cid).code for cid in r2_codes} == r2_codes
    final = store.load_session("crashy")
    assert final.status == "finished" and final.last_completed_round == 3
    ids = [c.id for c in final.candidates]
    assert len(ids) == len(set(ids))
    store.close()


class CrashingAgent(FakeAgent):
    def __init__(self, crash_at: str) -> None:
        super().__init__()
        self.crash_at = crash_at

    async def propose(self, req):
        if f"r{req.round}-c{req.index}" == self.crash_at:
            self.requests.append(req)
            raise _Killed("killed while proposing")
        return await super().propose(req)


async def test_resume_replays_an_interrupted_round_with_the_same_requests(task, tmp_path):
    from copilot.evolution import EvolutionEngine
    from copilot.evolution.session import SessionConfig, new_engine
    from sessions import SessionStore

    store = SessionStore(tmp_path / "store.db")
    cfg = SessionConfig(task=task, rounds=2, variants=6, name="replay", stagnation_rounds=9)
    a1 = CrashingAgent("r2-c4")
    e1 = new_engine(cfg, [store], ScriptedPolicy(), agent=a1, evaluator=FakeEvaluator())
    e1.strategies = STRATEGIES
    with pytest.raises(_Killed):
        await e1.run()
    asked_before = [(q.index, q.parent.id, q.strategy.id) for q in a1.requests if q.round == 2]

    state = store.load_session("replay")
    a2 = FakeAgent()
    e2 = EvolutionEngine.restore(state, task, a2, FakeEvaluator(), store, ScriptedPolicy(),
                                 EvolutionSettings(rounds=2, variants=6, stagnation_rounds=9), strategies=STRATEGIES)
    res = await e2.run()
    asked_after = [(q.index, q.parent.id, q.strategy.id) for q in a2.requests if q.round == 2]
    assert sorted(asked_after) == sorted(asked_before) and len(asked_after) == 6
    assert res.status == "finished" and len(res.rounds) == 2
    store.close()


@pytest.mark.parametrize("name", ["add", "rms_norm", "softmax", "sigmoid"])
def test_round_one_explores_a_different_part_of_the_design_per_variant(name):
    from copilot.evolution.strategies import FAMILY, round_one_strategies
    from copilot.tasks import load_task

    every = round_one_strategies(load_task(name))
    available = {FAMILY.get(s.id, s.id) for s in every}
    families = [FAMILY.get(s.id, s.id) for s in every[:4]]
    assert len(set(families)) == min(4, len(available)), families
    assert len(every) > len(available)     # a second strategy of a family comes only after all


class NotingAgent(FakeAgent):
    async def propose(self, req):
        p = await super().propose(req)
        p.notes = [f"why {req.round}-{req.index}"]
        return p


async def test_the_agents_reasons_are_kept_on_the_candidate(task):
    e = engine(task, agent=NotingAgent(), rounds=1)
    await e.run()
    proposed = {ev.candidate.id: ev.candidate for ev in e.sink.events if ev.kind == "candidate_proposed"}
    assert proposed["r1-c2"].notes == ["why 1-2"] and proposed["r0-base"].notes == []
