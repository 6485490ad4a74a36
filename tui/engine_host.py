"""Builds the engine for a session run, inside the engine's worker thread (task loading imports
torch: never on the UI loop). Only the engine's public API is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from copilot.events import EventFanout


@dataclass
class SessionRequest:
    """What the engineer asked for: a new session on a task, or a stored session to resume."""

    task: str = "rms_norm"
    chip: str = "910B2"
    backend: str = "sim"
    agent: str = "offline"
    rounds: int = 3
    variants: int = 4
    name: str | None = None
    resume: str | None = None
    seed: int = 0
    stagnation_rounds: int = 2


Factory = Callable[[Any], Any]     # SessionConfig -> agent or evaluator


def build_engine(req: SessionRequest, sinks: list, policy, store=None,
                 agent_factory: Factory | None = None, evaluator_factory: Factory | None = None):
    """(engine, stored SessionState or None). A resumed session keeps its stored candidates."""
    from copilot.evolution.session import SessionConfig, new_engine
    from copilot.tasks import load_task

    if req.resume:
        return _resume(req, sinks, policy, store, agent_factory, evaluator_factory)
    task = load_task(req.task)
    cfg = SessionConfig(task=task, agent=req.agent, chip=req.chip, backend=req.backend,
                        rounds=req.rounds, variants=req.variants, name=req.name, seed=req.seed,
                        stagnation_rounds=req.stagnation_rounds)
    agent = agent_factory(cfg) if agent_factory else None
    evaluator = evaluator_factory(cfg) if evaluator_factory else None
    return new_engine(cfg, sinks, policy, agent=agent, evaluator=evaluator), None


def _resume(req: SessionRequest, sinks, policy, store, agent_factory, evaluator_factory):
    """Continue a stored session from its last completed round.

    The engine has no resume entry point yet (see docs/tui.md, "gaps"): this rebuilds the
    population from the store through public attributes. Candidates whose evaluation never
    finished are left out; a round that was in progress is run again under fresh ids only when
    no candidate of it was stored.
    """
    from copilot.evolution.engine import EvolutionEngine, EvolutionSettings
    from copilot.evolution.session import SessionConfig, make_agent, make_evaluator
    from copilot.tasks import load_task

    if store is None:
        raise ValueError("resuming needs the session store")
    state = store.load_session(req.resume)
    task = load_task(state.task_path or state.task)
    settings = state.settings or {}
    rounds = max(int(settings.get("rounds", req.rounds)), req.rounds if req.rounds else 0)
    cfg = SessionConfig(task=task, agent=state.agent or "offline", chip=state.chip,
                        backend=state.backend or "sim", rounds=rounds,
                        variants=int(settings.get("variants", req.variants)), name=state.name,
                        seed=int(settings.get("seed", 0)), stagnation_rounds=req.stagnation_rounds)
    agent = agent_factory(cfg) if agent_factory else make_agent(cfg)
    evaluator = evaluator_factory(cfg) if evaluator_factory else make_evaluator(cfg)
    es = EvolutionSettings(rounds=cfg.rounds, variants=cfg.variants, chip=cfg.chip, seed=cfg.seed,
                           stagnation_rounds=cfg.stagnation_rounds)
    engine = EvolutionEngine(task, agent, evaluator, EventFanout(*sinks), policy, es, session=state.name)
    done = state.completed_ids
    for c in state.candidates:
        if c.id in done:
            engine.population.add(c)
            if c.vetoed and c.strategy and c.strategy not in engine.rejected_strategies:
                engine.rejected_strategies.append(c.strategy)
    base = engine.population.candidates.get("r0-base")
    engine.baseline = base if base is not None and base.status == "passed" else None
    next_round = state.next_round
    if state.round_in_progress and any(c.round == state.round_in_progress for c in state.candidates):
        next_round = state.round_in_progress + 1
    engine.next_round = next_round
    engine.steer = state.steer or ""
    store.mark_resumed(state.name)
    return engine, state
