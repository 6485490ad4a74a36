"""`cake-evo`: rounds of variants, tiered sampling, inspirations, and the human between rounds.

The engine owns no agent logic and no evaluation logic: it asks an `Agent` for proposals and an
`Evaluator` for verdicts, emits domain events, and awaits a `RoundDecision` from a policy (the
TUI, `--decide auto`, or the terminal prompt) between rounds.
"""

from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from copilot.events import (
    Candidate,
    CandidateBuilt,
    CandidateEvaluated,
    CandidateEvaluationStarted,
    CandidateProposed,
    DecisionMade,
    DecisionNeeded,
    EventSink,
    RoundFinished,
    RoundStarted,
    SessionFinished,
)
from copilot.errors import CannpilotError
from copilot.evolution.population import Inspiration, Population, perf_coverage
from copilot.evolution.strategies import Strategy, round_one_strategies
from copilot.tasks.model import Task


class BudgetExhausted(Exception):
    """Raised by an agent when the session's token or cost budget is spent."""


class _Stop(Exception):
    """The engineer stopped the session at a decision."""


# --- what the engine asks of its collaborators ------------------------------------------------

@dataclass
class ProposalRequest:
    task: Task
    chip: str
    round: int
    index: int                                  # position of this variant in its round
    strategy: Strategy
    parent: Candidate | None
    parent_tier: str | None                     # top | middle | bottom | pinned | baseline
    inspirations: list[Inspiration] = field(default_factory=list)
    sibling_strategies: list[str] = field(default_factory=list)   # the others' directions this round
    steer: str = ""                             # the engineer's guidance for this round
    rejected_strategies: list[str] = field(default_factory=list)  # strategies of vetoed candidates


@dataclass
class Proposal:
    code: str | None                            # None: the agent produced no usable code
    origin: str = "offline"
    agency_mode: str = "knob_edit"
    knobs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failure: str = ""                           # why there is no code
    strategy: str = ""                          # the direction taken, when the agent replaced the one asked


async def _guarded(proposing, candidate_id: str) -> Proposal:
    """An agent's proposal; an agent that fails with an unexpected error (a bug of ours on an
    unusual reply, a parser that meets a shape it never saw) costs that one candidate, named with
    the error, not the session. A CannpilotError (a refused key, an exhausted budget) still ends it."""
    try:
        return await proposing
    except (CannpilotError, BudgetExhausted, _Stop, asyncio.CancelledError):
        raise
    except Exception as exc:               # noqa: BLE001 - one candidate lost, the session goes on
        return Proposal(None, failure=f"the agent failed on {candidate_id}: {type(exc).__name__}: {exc}")


class Agent(Protocol):
    name: str

    async def baseline(self, task: Task, chip: str) -> Proposal | None: ...

    async def propose(self, request: ProposalRequest) -> Proposal: ...


@dataclass
class Evaluation:
    status: str                                 # passed | incorrect | build_failed | crashed
    time_us: float | None = None
    timing: str = "estimate"
    roofline_fraction: float | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    build_ok: bool = True
    build_seconds: float = 0.0

    @property
    def perf_timed(self) -> tuple[int, int] | None:
        """(k, n): k of the n performance cases timed (the fitness is over those k)."""
        return perf_coverage(self.cases)


class Evaluator(Protocol):
    async def evaluate(self, task: Task, candidate: Candidate) -> Evaluation: ...


# --- decisions between rounds ------------------------------------------------------------------

@dataclass
class HumanEdit:
    code: str
    parent_id: str | None = None
    note: str = ""


@dataclass
class RoundDecision:
    pins: list[str] = field(default_factory=list)
    vetoes: list[str] = field(default_factory=list)
    unpins: list[str] = field(default_factory=list)
    edits: list[HumanEdit] = field(default_factory=list)
    steer: str = ""
    action: Literal["continue", "stop"] = "continue"


@dataclass
class DecisionContext:
    round: int
    rounds_left: int
    leaderboard: list[dict[str, Any]]
    population: Population


class DecisionPolicy(Protocol):
    async def decide(self, context: DecisionContext) -> RoundDecision: ...


class AutoPolicy:
    """`--decide auto`: keep going, change nothing."""

    async def decide(self, context: DecisionContext) -> RoundDecision:
        return RoundDecision()


# --- the engine --------------------------------------------------------------------------------

@dataclass
class EvolutionSettings:
    rounds: int = 3
    variants: int = 4
    chip: str = "910B2"
    seed: int = 0
    target_speedup: float | None = None         # stop once best/baseline reaches it
    stagnation_rounds: int = 2                  # stop after this many rounds without a better best
    parallel: int = 2                           # evaluations at once


@dataclass
class RoundSummary:
    round: int
    candidates: int
    passed: int
    best_id: str | None
    best_time_us: float | None
    median_time_us: float | None


@dataclass
class EvolutionResult:
    status: str                                 # finished | stopped | budget_exhausted | failed
    reason: str
    best: Candidate | None
    baseline: Candidate | None
    round1_best: Candidate | None
    rounds: list[RoundSummary]
    population: Population
    best_hap: float | None = None               # mean HAP of the best (tasks with baselines; est. on sim)
    speedup_vs_vendor: float | None = None      # geomean of baseline / time over its timed cases

    def speedup_vs(self, ref: Candidate | None) -> float | None:
        if not (self.best and ref and self.best.time_us and ref.time_us):
            return None
        return ref.time_us / self.best.time_us


class EvolutionEngine:
    def __init__(self, task: Task, agent: Agent, evaluator: Evaluator, sink: EventSink,
                 policy: DecisionPolicy | None = None, settings: EvolutionSettings | None = None,
                 session: str = "session", strategies: list[Strategy] | None = None) -> None:
        self.task = task
        self.agent = agent
        self.evaluator = evaluator
        self.sink = sink
        self.policy = policy or AutoPolicy()
        self.settings = settings or EvolutionSettings()
        self.session = session
        self.rng = random.Random(self.settings.seed)
        self.population = Population(self.rng)
        # CANN-Bench's baselines for this task and chip: the fitness is then the mean HAP.
        from copilot.scoring import task_baselines

        self.baselines = task_baselines(getattr(task, "path", None), self.settings.chip)
        self.population.by_hap = bool(self.baselines)
        self.cases: dict[str, list[dict[str, Any]]] = {}   # candidate id -> its evaluation's cases
        self.task_untimed: dict[str, dict[str, Any]] = {}  # case id -> the row of a case the task cannot time
        self.strategies = strategies or round_one_strategies(task)
        self.steer = ""
        self.rejected_strategies: list[str] = []
        self.rounds: list[RoundSummary] = []
        self.baseline: Candidate | None = None
        self.next_round = 1
        self._pending_decision: int | None = None     # resume: a round whose decision was never made
        self._resume_round: int | None = None         # resume: the round that was interrupted
        self._baseline_failure = ""                    # why the agent had no baseline, if it had none
        self._in_flight: set[str] = set()             # resume: candidates to evaluate again

    @classmethod
    def restore(cls, state, task: Task, agent: Agent, evaluator: Evaluator, sink: EventSink,
                policy: DecisionPolicy | None = None, settings: EvolutionSettings | None = None,
                strategies: list[Strategy] | None = None) -> "EvolutionEngine":
        """An engine that continues the stored session `state` (a `sessions.SessionState`):
        same population, pins, vetoes, steering, random state; in-flight evaluations are redone,
        completed ones are not; an interrupted round is completed with the requests it had."""
        from sessions.state import decode_random

        e = cls(task, agent, evaluator, sink, policy, settings, session=state.name, strategies=strategies)
        if state.random_state:
            e.rng = decode_random(state.random_state)
            e.population.rng = e.rng
        for c in state.candidates:
            e.population.add(c)
            e._restore_figures(c, state.cases.get(c.id, []))
            if c.vetoed and c.strategy and c.strategy not in e.rejected_strategies:
                e.rejected_strategies.append(c.strategy)
        base = e.population.candidates.get("r0-base")
        e.baseline = base if base is not None and base.status == "passed" else None
        e.steer = state.steer or ""
        e.rounds = [RoundSummary(r.round, r.candidates, r.passed, r.best_id, r.best_time_us, r.median_time_us)
                    for r in state.rounds if r.round < state.next_round]
        e.next_round = state.next_round
        e._pending_decision = state.decision_pending
        e._resume_round = state.round_in_progress
        e._in_flight = {c.id for c in state.in_flight}
        return e

    # Public -------------------------------------------------------------------------------

    async def run(self) -> EvolutionResult:
        status, reason = "finished", "reached the last round"
        try:
            base = self.population.candidates.get("r0-base")
            if base is not None and base.id in self._in_flight:
                await self._reevaluate([base])
                self.baseline = base if base.status == "passed" else None
            elif self.baseline is None and self.next_round == 1 and base is None:
                await self._evaluate_baseline()
            if self._pending_decision is not None and self.next_round <= self.settings.rounds:
                r, self._pending_decision = self._pending_decision, None
                if (await self._ask_decision(r)).action == "stop":
                    raise _Stop(f"stopped by the engineer after round {r}")
            stale = 0
            best_before = self._best_fitness()
            while self.next_round <= self.settings.rounds:
                r = self.next_round
                await self._run_round(r)
                self.next_round = r + 1
                best_now = self._best_fitness()
                stale = 0 if best_now < best_before else stale + 1
                best_before = min(best_before, best_now)
                if self._target_reached():
                    status, reason = "finished", f"target speedup {self.settings.target_speedup}x reached"
                    break
                if stale >= self.settings.stagnation_rounds and r > 1:
                    status, reason = "finished", f"no better kernel in {stale} rounds (stagnation)"
                    break
                if self.next_round > self.settings.rounds:
                    break
                decision = await self._ask_decision(r)
                if decision.action == "stop":
                    status, reason = "stopped", f"stopped by the engineer after round {r}"
                    break
        except BudgetExhausted as exc:
            status, reason = "budget_exhausted", str(exc)
        except _Stop as exc:
            status, reason = "stopped", str(exc)
        except CannpilotError as exc:       # e.g. the provider refused the API key
            status, reason = "failed", f"{type(exc).__name__}: {exc}"
        best = await self._confirmed_best()
        if best is None and self._baseline_failure:
            reason = f"{reason}; no baseline: {self._baseline_failure}"
        self.sink.emit(SessionFinished(self.session, status=status, best_id=best.id if best else None,
                                       reason=reason))
        hap = vendor = None
        if best is not None and self.baselines:
            from copilot.scoring import candidate_hap

            cases = self.cases.get(best.id, [])
            hap = candidate_hap(cases, self.baselines)
            vendor = vendor_speedup(cases, self.baselines)
        return EvolutionResult(status, reason, best, self.baseline, self._round1_best(), self.rounds,
                               self.population, best_hap=hap, speedup_vs_vendor=vendor)

    def apply_decision(self, round_: int, d: RoundDecision) -> list[Candidate]:
        """Pins, vetoes and steering take effect now; edits are returned for evaluation."""
        for cid in d.pins:
            self._known(cid).pinned = True
        for cid in d.unpins:
            self._known(cid).pinned = False
        for cid in d.vetoes:
            c = self._known(cid)
            c.vetoed, c.pinned = True, False
            if c.strategy and c.strategy not in self.rejected_strategies:
                self.rejected_strategies.append(c.strategy)
        if d.steer.strip():
            self.steer = d.steer.strip()
        human = []
        for i, edit in enumerate(d.edits, start=1):
            parent = self._known(edit.parent_id) if edit.parent_id else None
            human.append(Candidate(id=f"r{round_}-h{i}", code=edit.code, round=round_, origin="human",
                                   strategy=edit.note or "human edit", agency_mode="human",
                                   parent_ids=[parent.id] if parent else []))
        return human

    # Rounds -------------------------------------------------------------------------------

    async def _evaluate_baseline(self) -> None:
        proposal = await _guarded(self.agent.baseline(self.task, self.settings.chip), "r0-base")
        if proposal is None or proposal.code is None:
            self._baseline_failure = proposal.failure if proposal else ""
            return
        c = Candidate(id="r0-base", code=proposal.code, round=0, origin=proposal.origin,  # type: ignore[arg-type]
                      strategy="baseline", agency_mode=proposal.agency_mode, knobs=dict(proposal.knobs),  # type: ignore[arg-type]
                      notes=list(proposal.notes))
        await self._enter([c])
        self.baseline = c if c.status == "passed" else None

    async def _run_round(self, r: int) -> None:
        from sessions.state import encode_random

        # An interrupted round is replayed from the population it started with, so the same
        # parents and directions come back; what it already produced is kept.
        earlier = {cid: c for cid, c in self.population.candidates.items() if c.round == r and cid.startswith(f"r{r}-c")}
        if r == self._resume_round:
            for cid in earlier:
                del self.population.candidates[cid]
        random_state = encode_random(self.rng)
        requests = self._requests(r)
        self.population.candidates.update(earlier)
        self.sink.emit(RoundStarted(self.session, round=r, strategies=[q.strategy.id for q in requests],
                                    random_state=random_state))
        todo = [q for q in requests if f"r{r}-c{q.index}" not in earlier]
        proposals = await asyncio.gather(*(_guarded(self.agent.propose(q), f"r{r}-c{q.index}") for q in todo))
        cands = []
        for q, p in zip(todo, proposals):
            c = Candidate(id=f"r{r}-c{q.index}", code=p.code or "", round=r, origin=p.origin,  # type: ignore[arg-type]
                          strategy=p.strategy or q.strategy.id, agency_mode=p.agency_mode,  # type: ignore[arg-type]
                          parent_ids=[q.parent.id] if q.parent else [], knobs=dict(p.knobs), notes=list(p.notes))
            if p.code is None:
                c.status = "no_code"   # type: ignore[assignment]
            cands.append((c, p))
        await self._reevaluate([c for cid, c in earlier.items() if cid in self._in_flight])
        await self._enter([c for c, _ in cands], failures={c.id: p.failure for c, p in cands if p.code is None})
        self._resume_round = None
        round_cands = sorted(list(earlier.values()) + [c for c, _ in cands], key=lambda c: int(c.id.split("-c")[1]))
        self._finish_round(r, round_cands)

    async def _reevaluate(self, cands: list[Candidate]) -> None:
        """Candidates whose evaluation was in flight when the session stopped."""
        sem = asyncio.Semaphore(max(1, self.settings.parallel))

        async def one(c: Candidate) -> None:
            async with sem:
                self.sink.emit(CandidateEvaluationStarted(self.session, candidate_id=c.id))
                ev = await self.evaluator.evaluate(self.task, c)
            self._record(c, ev)
            self._in_flight.discard(c.id)

        await asyncio.gather(*(one(c) for c in cands))

    def _requests(self, r: int) -> list[ProposalRequest]:
        k = self.settings.variants
        available = [s for s in self.strategies if s.id not in self.rejected_strategies] or self.strategies
        if r == 1 or not self.population.passing():
            base = self.baseline
            chosen = [available[i % len(available)] for i in range(k)]
            parents: list[tuple[Candidate | None, str | None]] = [(base, "baseline" if base else None)] * k
        else:
            picked = self.population.sample_parents(k)
            parents = [(c, tier) for c, tier in picked]
            # each variant gets a different direction; exploit tiers keep fine-grained ones first
            order = self.rng.sample(available, len(available))
            chosen = [order[i % len(order)] for i in range(len(parents))]
        reqs = []
        names = [s.id for s in chosen]
        for i, ((parent, tier), strat) in enumerate(zip(parents, chosen)):
            inspirations = self.population.inspirations(exclude=parent.id if parent else None) if r > 1 else []
            reqs.append(ProposalRequest(
                task=self.task, chip=self.settings.chip, round=r, index=i + 1, strategy=strat,
                parent=parent, parent_tier=tier, inspirations=inspirations,
                sibling_strategies=[n for j, n in enumerate(names) if j != i],
                steer=self.steer, rejected_strategies=list(self.rejected_strategies)))
        return reqs

    async def _enter(self, cands: list[Candidate], failures: dict[str, str] | None = None) -> None:
        """Propose, deduplicate, evaluate (in parallel, bounded) and record candidates."""
        failures = failures or {}
        to_eval = []
        for c in cands:
            dup = self.population.duplicate_of(c.code) if c.code else None
            self.population.add(c)
            self.sink.emit(CandidateProposed(self.session, candidate=c))
            if c.status == "no_code":
                self.sink.emit(CandidateEvaluated(self.session, candidate_id=c.id, status="no_code",  # type: ignore[arg-type]
                                                  diagnostics=[{"id": "AGENT.NO_CODE", "severity": "error",
                                                                "message": failures.get(c.id) or "no usable code in the reply"}]))
            elif dup is not None:
                c.status = "rejected_duplicate"
                self.sink.emit(CandidateEvaluated(self.session, candidate_id=c.id, status="rejected_duplicate",
                                                  diagnostics=[{"id": "EVO.DUPLICATE", "severity": "info",
                                                                "message": f"same normalized code as {dup}"}]))
            else:
                to_eval.append(c)
        sem = asyncio.Semaphore(max(1, self.settings.parallel))

        async def one(c: Candidate) -> None:
            async with sem:
                self.sink.emit(CandidateEvaluationStarted(self.session, candidate_id=c.id))
                ev = await self.evaluator.evaluate(self.task, c)
            self._record(c, ev)

        await asyncio.gather(*(one(c) for c in to_eval))

    def _record(self, c: Candidate, ev: Evaluation) -> None:
        ev = self._on_the_same_cases(c, ev)
        c.status = ev.status  # type: ignore[assignment]
        self._take_figures(c, ev)
        self.sink.emit(CandidateBuilt(self.session, candidate_id=c.id, ok=ev.build_ok,
                                      diagnostics=ev.diagnostics if not ev.build_ok else [],
                                      seconds=ev.build_seconds))
        self.sink.emit(CandidateEvaluated(self.session, candidate_id=c.id, status=ev.status,  # type: ignore[arg-type]
                                          cases=ev.cases, time_us=ev.time_us, timing=ev.timing,  # type: ignore[arg-type]
                                          roofline_fraction=ev.roofline_fraction, diagnostics=ev.diagnostics))

    def _on_the_same_cases(self, c: Candidate, ev: Evaluation) -> Evaluation:
        """Every candidate ranked on the same performance cases. An evaluator decides at its first
        evaluation which cases the task cannot time here, but the TUI's worker processes and a Ray
        cluster's workers each decide for themselves (a golden killed under memory pressure can make
        them differ): a case any evaluation of the session left out for the task's reason is left out
        of every candidate's time, and those recorded before it are recorded again without it."""
        found = {str(x["id"]): x for x in ev.cases if x.get("untimed_by") == "task"}
        new = {k: x for k, x in found.items() if k not in self.task_untimed}
        self.task_untimed.update(new)
        ev = _without_cases(ev, self.task_untimed)
        earlier = [k for k in self.cases if k != c.id] if new else []
        for cid in earlier:
            other = self.population.candidates.get(cid)
            if other is None or other.status != "passed":
                continue
            was = Evaluation("passed", other.time_us, other.timing, other.roofline_fraction, self.cases[cid])
            now = _without_cases(was, new)
            if now is not was:
                self._take_figures(other, now)
                self.sink.emit(CandidateEvaluated(self.session, candidate_id=cid, status="passed",
                                                  cases=now.cases, time_us=now.time_us, timing=now.timing,  # type: ignore[arg-type]
                                                  roofline_fraction=now.roofline_fraction, recorded_again=True))
        return ev

    def _restore_figures(self, c: Candidate, cases: list[dict[str, Any]]) -> None:
        """A stored candidate's per-case rows, so it is ranked as when it was evaluated: its HAP,
        its k of n performance cases timed, and the cases the task could not time (left out of
        every candidate's time from now on, as they were before the stop)."""
        if not cases:
            return
        self.cases[c.id] = cases
        self.task_untimed.update({str(x["id"]): x for x in cases if x.get("untimed_by") == "task"})
        if self.baselines and c.status == "passed":
            from copilot.scoring import candidate_hap

            h = candidate_hap(cases, self.baselines)
            if h is not None:
                self.population.hap[c.id] = h

    def _take_figures(self, c: Candidate, ev: Evaluation) -> None:
        self.cases[c.id] = ev.cases
        self.population.hap.pop(c.id, None)
        if self.baselines and ev.status == "passed":
            from copilot.scoring import candidate_hap

            h = candidate_hap(ev.cases, self.baselines)
            if h is not None:
                self.population.hap[c.id] = h
        c.time_us, c.timing, c.roofline_fraction = ev.time_us, ev.timing, ev.roofline_fraction  # type: ignore[assignment]
        perf = [x for x in ev.cases if x.get("role") == "performance" and x.get("est_us")]
        if perf:
            c.bottleneck = max(perf, key=lambda x: x["est_us"]).get("bottleneck")

    async def _confirmed_best(self) -> Candidate | None:
        """The best candidate after the evaluator's full re-run (`confirm`, when it has one): a
        winner that fails it is recorded as failed and the next best is tried."""
        confirm = getattr(self.evaluator, "confirm", None)
        best = self.population.best()
        while best is not None and confirm is not None:
            ev = await asyncio.to_thread(confirm, self.task, best)
            if ev.status == "passed":
                break
            self._record(best, ev)
            best = self.population.best()
        return best

    def _finish_round(self, r: int, cands: list[Candidate]) -> None:
        passed = [c for c in cands if c.status == "passed"]
        times = sorted(c.time_us for c in passed if c.time_us)  # type: ignore[misc]
        best = self.population.best()
        summary = RoundSummary(r, len(cands), len(passed), best.id if best else None,
                               best.time_us if best else None,
                               times[len(times) // 2] if times else None)
        self.rounds.append(summary)
        self.sink.emit(RoundFinished(self.session, round=r, candidates=len(cands), passed=len(passed),
                                     best_id=summary.best_id, best_time_us=summary.best_time_us,
                                     median_time_us=summary.median_time_us))

    async def _ask_decision(self, r: int) -> RoundDecision:
        board = leaderboard(self.population, self.baseline, self.cases)
        self.sink.emit(DecisionNeeded(self.session, round=r, leaderboard=board))
        ctx = DecisionContext(r, self.settings.rounds - r, board, self.population)
        decision = await self.policy.decide(ctx)
        human = self.apply_decision(r, decision)
        if human:
            await self._enter(human)
        self.sink.emit(DecisionMade(self.session, round=r, pins=list(decision.pins), vetoes=list(decision.vetoes),
                                    unpins=list(decision.unpins), edits=[c.id for c in human],
                                    steer=self.steer, action=decision.action))
        return decision

    # Helpers ------------------------------------------------------------------------------

    def _known(self, cid: str) -> Candidate:
        try:
            return self.population.get(cid)
        except KeyError:
            raise KeyError(f"no candidate '{cid}' in this session") from None

    def _best_fitness(self) -> tuple:
        best = self.population.best()
        return self.population.fitness(best) if best and best.time_us else (2, 0.0, math.inf)

    def _target_reached(self) -> bool:
        t = self.settings.target_speedup
        best = self.population.best()
        if not (t and self.baseline and best and self.baseline.time_us and best.time_us):
            return False
        return self.baseline.time_us / best.time_us >= t

    def _round1_best(self) -> Candidate | None:
        r1 = [c for c in self.population.passing() if c.round == 1]
        return min(r1, key=lambda c: c.time_us) if r1 else None  # type: ignore[arg-type,return-value]


def _without_cases(ev: Evaluation, untimed: dict[str, dict[str, Any]]) -> Evaluation:
    """`ev` with these performance cases left out (their rows `not timed` for the task's reason) and
    its time and roofline fraction over the others; `ev` itself when it timed none of them."""
    rows = [dict(untimed[str(x.get("id"))], id=x["id"])
            if x.get("role") == "performance" and str(x.get("id")) in untimed and x.get("untimed_by") != "task" else x
            for x in ev.cases]
    if all(a is b for a, b in zip(rows, ev.cases)):
        return ev
    perf = [x for x in rows if x.get("role") == "performance"]
    timed = [x for x in perf if x.get("est_us")]
    ranked = ev.status == "passed" and bool(timed) and all(x.get("est_us") or x.get("untimed_by") == "task"
                                                         for x in perf)
    from copilot.costmodel import geomean

    time_us = geomean([x["est_us"] for x in timed]) if ranked else None
    roofs = [x.get("roofline_fraction") for x in timed]
    roof = geomean(roofs) if ranked and all(roofs) else None
    return Evaluation(ev.status, time_us, ev.timing, roof, rows, ev.diagnostics, ev.build_ok, ev.build_seconds)


def vendor_speedup(cases: list[dict[str, Any]], baselines: dict) -> float | None:
    """Geometric mean of the vendor's time over the candidate's (estimated) time, over its timed
    performance cases that have a baseline."""
    ratios = [baselines[str(c["id"])].baseline_us / c["est_us"] for c in cases
              if c.get("role") == "performance" and c.get("est_us") and c.get("passed") is not False
              and str(c.get("id")) in baselines]
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else None


def leaderboard(pop: Population, baseline: Candidate | None = None,
                cases: dict[str, list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Every candidate, passing ones first by time, with the figures the UI and CLI show; with
    `cases` (candidate id -> its evaluation's cases), how many performance cases were timed."""
    ranked = pop.ranked()
    rank = {c.id: i + 1 for i, c in enumerate(ranked)}
    rest = [c for c in pop.candidates.values() if c.id not in rank]
    rows = []
    for c in ranked + rest:
        speed = (baseline.time_us / c.time_us) if (baseline and baseline.time_us and c.time_us
                                                   and c.status == "passed") else None
        rows.append({"rank": rank.get(c.id), "id": c.id, "round": c.round, "origin": c.origin,
                     "strategy": c.strategy, "status": c.status, "time_us": c.time_us, "timing": c.timing,
                     "speedup": speed, "roofline_fraction": c.roofline_fraction, "hap": pop.hap.get(c.id),
                     "pinned": c.pinned, "vetoed": c.vetoed, "tier": pop.tier_of(c.id),
                     "perf_timed": _coverage(cases, c.id)})
    return rows


def _coverage(cases: dict[str, list[dict[str, Any]]] | None, cid: str) -> list[int] | None:
    k_n = perf_coverage(cases.get(cid, [])) if cases else None
    return list(k_n) if k_n else None
