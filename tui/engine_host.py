"""Builds the engine for a session run, inside the engine's worker thread (task loading imports
torch: never on the UI loop). Only the engine's public API is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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
    evaluator = evaluator_factory(cfg) if evaluator_factory else default_evaluator(cfg)
    return new_engine(cfg, sinks, policy, agent=agent, evaluator=evaluator), None


def default_evaluator(cfg):
    """The sim backend's evaluator in worker processes (`tui/evaluation_process.py`): its Python
    work then never competes with the app for the GIL. None (the engine's own choice) for other
    backends, or when `CANNPILOT_TUI_EVAL_INPROCESS=1`."""
    import os

    if cfg.backend != "sim" or os.environ.get("CANNPILOT_TUI_EVAL_INPROCESS") == "1":
        return None
    from copilot.evolution.engine import EvolutionSettings
    from tui.evaluation_process import ProcessEvaluator

    return ProcessEvaluator(str(cfg.task.path), chip=cfg.chip, seed=cfg.seed,
                            workers=EvolutionSettings().parallel)


def _resume(req: SessionRequest, sinks, policy, store, agent_factory, evaluator_factory):
    """Continue a stored session through the engine's resume (same population, pins, vetoes,
    steering and random state; in-flight evaluations redone, completed ones kept)."""
    from copilot.evolution.session import resume_config, resume_engine

    if store is None:
        raise ValueError("resuming needs the session store")
    state = store.load_session(req.resume)
    stored_rounds = int((state.settings or {}).get("rounds", req.rounds))
    rounds = max(stored_rounds, req.rounds or 0)
    cfg = resume_config(state, rounds)
    agent = agent_factory(cfg) if agent_factory else None
    evaluator = evaluator_factory(cfg) if evaluator_factory else default_evaluator(cfg)
    engine, _ = resume_engine(store, state.name, sinks, policy, rounds=rounds, agent=agent, evaluator=evaluator)
    return engine, state
