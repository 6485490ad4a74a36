"""One tuning session: the task, the agent, the evaluator, the store and the engine, wired once.

Shared by the headless `cannpilot run` and the TUI so both behave the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from copilot.events import EventFanout, EventSink, SessionStarted
from copilot.evolution.engine import DecisionPolicy, EvolutionEngine, EvolutionResult, EvolutionSettings
from copilot.tasks.model import Task


@dataclass
class SessionConfig:
    task: Task
    agent: str = "offline"             # "offline" or a model name / alias
    chip: str = "910B2"
    backend: str = "sim"
    rounds: int = 3
    variants: int = 4
    name: str | None = None
    seed: int = 0
    target_speedup: float | None = None
    stagnation_rounds: int = 2
    evaluators: str = "local"          # "local" (processes here) or ray://HOST:PORT / HOST:PORT
    extra: dict[str, Any] = field(default_factory=dict)

    def session_name(self) -> str:
        return self.name or f"{self.task.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def make_agent(cfg: SessionConfig, sink: EventSink | None = None, evaluator=None):
    """The offline agent, or an LLM agent for a model name/alias of the settings' model table
    (its key is read from the environment variable the model entry names, at call time)."""
    from copilot.errors import BadInput

    if cfg.agent in ("offline", "", None):
        from copilot.agents.offline import OfflineAgent

        return OfflineAgent(seed=cfg.seed)
    from copilot.agents.llm import AgencySchedule, LLMAgent
    from copilot.config import load_settings
    from copilot.llm import open_client

    settings = load_settings()
    model = settings.resolve_model(cfg.agent)
    if model is None:
        raise BadInput(f"--agent {cfg.agent}: not a model name or alias in the settings")
    client = open_client(model, session=cfg.session_name(), sink=sink, budget=settings.budget_caps())
    return LLMAgent(client, evaluator or make_evaluator(cfg), sink=sink, session=cfg.session_name(),
                    schedule=AgencySchedule(**settings.agency.model_dump()))


def make_evaluator(cfg: SessionConfig):
    from copilot.errors import Unsupported

    if cfg.backend == "sim":
        if cfg.evaluators not in ("local", "", None):
            from copilot.evolution.ray_pool import RayEvaluator

            return RayEvaluator(cfg.evaluators, chip=cfg.chip, seed=cfg.seed)
        from copilot.evolution.evaluate import SimEvaluator

        return SimEvaluator(chip=cfg.chip, seed=cfg.seed)
    if cfg.backend == "npu":
        from copilot.backends.npu.compare import npu_config_for_cli
        from copilot.backends.npu.evaluate import NpuEvaluator

        return NpuEvaluator(npu_config_for_cli(cfg.extra.get("soc"), cfg.session_name()), chip=cfg.chip,
                            seed=cfg.seed)
    raise Unsupported(f"backend '{cfg.backend}' is not available on this machine (see `cannpilot doctor`)")


def new_engine(cfg: SessionConfig, sinks: list[EventSink], policy: DecisionPolicy | None = None,
               agent=None, evaluator=None) -> EvolutionEngine:
    """An engine for a new session; the first sink sees `SessionStarted` before anything else."""
    cfg.name = name = cfg.session_name()
    sink = EventFanout(*sinks)
    evaluator = evaluator or make_evaluator(cfg)
    agent = agent or make_agent(cfg, sink, evaluator)
    sink.emit(SessionStarted(name, task=cfg.task.name, chip=cfg.chip, backend=cfg.backend,
                             agent=getattr(agent, "name", cfg.agent),
                             settings={"rounds": cfg.rounds, "variants": cfg.variants, "seed": cfg.seed,
                                       "target_speedup": cfg.target_speedup},
                             task_path=str(cfg.task.path), model="" if cfg.agent == "offline" else cfg.agent))
    settings = EvolutionSettings(rounds=cfg.rounds, variants=cfg.variants, chip=cfg.chip, seed=cfg.seed,
                                 target_speedup=cfg.target_speedup,
                                 stagnation_rounds=cfg.stagnation_rounds)
    if getattr(evaluator, "capacity", None):      # a cluster: as many evaluations at once as it has CPUs
        settings.parallel = evaluator.capacity
    return EvolutionEngine(cfg.task, agent, evaluator, sink, policy, settings, session=name)


async def run_to_end(engine: EvolutionEngine) -> EvolutionResult:
    """Run the session, then release the agent's connections in the same event loop (an LLM
    client's HTTP sessions belong to the loop they were opened in)."""
    try:
        return await engine.run()
    finally:
        close = getattr(engine.agent, "aclose", None)
        if close is not None:
            await close()


def result_json(engine: EvolutionEngine, result: EvolutionResult, cfg: SessionConfig,
                kernel_path: str | None = None, tokens: int = 0, cost_usd: float = 0.0) -> dict:
    """The `run --json` document (CLI contract)."""
    best = result.best
    return {
        "session": engine.session,
        "task": cfg.task.name,
        "chip": cfg.chip,
        "backend": cfg.backend,
        "status": result.status,
        "reason": result.reason,
        "best": None if best is None else {
            "id": best.id,
            "kernel_path": kernel_path,
            "time_us": best.time_us,
            "timing": best.timing,
            "speedup_vs_baseline": result.speedup_vs(result.baseline),
            "speedup_vs_round1": result.speedup_vs(result.round1_best),
            "roofline_fraction": best.roofline_fraction,
            # CANN-Bench's score against the vendor's kernels (None without baselines for the task)
            "hap": result.best_hap,
            "speedup_vs_vendor": result.speedup_vs_vendor,
            **_timed_cases(engine.cases.get(best.id, [])),
        },
        "rounds": [{"round": r.round, "candidates": r.candidates, "passed": r.passed,
                    "best_time_us": r.best_time_us} for r in result.rounds],
        "tokens": tokens,
        "cost_usd": cost_usd,
    }


def _timed_cases(cases: list[dict]) -> dict:
    """How many of the best's performance cases its time is over, and why the others have none."""
    from copilot.evolution.population import perf_coverage

    k_n = perf_coverage(cases)
    return {"perf_cases_timed": {"timed": k_n[0], "of": k_n[1]} if k_n else None,
            "not_timed": [{"id": c["id"], "reason": c["not_timed"]} for c in cases if c.get("not_timed")]}


def _continue_spending(agent, spent) -> None:
    """An LLM agent's accounting counts on from what the stored session already spent, so the
    budget caps hold across a resume."""
    usage = getattr(getattr(agent, "client", None), "usage", None)
    if usage is None:
        return
    from copilot.llm.accounting import SNAPSHOT_VERSION

    usage.restore({"version": SNAPSHOT_VERSION,
                   "total": {"calls": spent.llm_calls, "failed": 0, "prompt_tokens": spent.prompt_tokens,
                             "completion_tokens": spent.completion_tokens, "cost_usd": spent.cost_usd}})


def resume_config(state, rounds: int | None = None) -> SessionConfig:
    """The configuration of stored session `state`; `rounds` extends it to that many rounds."""
    from copilot.errors import BadInput
    from copilot.tasks import load_task

    st = state.settings or {}
    total = rounds or int(st.get("rounds", 3))
    if state.status in ("finished", "stopped", "budget_exhausted") and total <= state.last_completed_round:
        raise BadInput(f"session '{state.name}' already {state.status} after round {state.last_completed_round}; "
                       f"pass --rounds N (N > {state.last_completed_round}) to extend it")
    return SessionConfig(task=load_task(state.task_path or state.task), agent=state.agent or "offline",
                         chip=state.chip or "910B2", backend=state.backend or "sim", rounds=total,
                         variants=int(st.get("variants", 4)), name=state.name, seed=int(st.get("seed", 0)),
                         target_speedup=st.get("target_speedup"))


def resume_engine(store, name: str, sinks: list[EventSink], policy: DecisionPolicy | None = None,
                  rounds: int | None = None, agent=None, evaluator=None) -> tuple[EvolutionEngine, SessionConfig]:
    """An engine continuing stored session `name`; `rounds` extends it to that many rounds."""
    from copilot.evolution.engine import EvolutionEngine

    state = store.load_session(name)
    cfg = resume_config(state, rounds)
    sink = EventFanout(*sinks)
    settings = EvolutionSettings(rounds=cfg.rounds, variants=cfg.variants, chip=cfg.chip, seed=cfg.seed,
                                 target_speedup=cfg.target_speedup, stagnation_rounds=cfg.stagnation_rounds)
    if state.status in ("finished", "stopped", "budget_exhausted"):
        state.decision_pending = None
    evaluator = evaluator or make_evaluator(cfg)
    agent = agent or make_agent(cfg, sink, evaluator)
    _continue_spending(agent, state.budget)
    engine = EvolutionEngine.restore(state, cfg.task, agent, evaluator, sink, policy, settings)
    store.mark_resumed(name)
    return engine, cfg
