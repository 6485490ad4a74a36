"""Domain events the engine emits, and the candidate record they talk about.

Events are past-tense facts, plain dataclasses, JSON-serialisable through `to_json()`. The engine
sends them to an `EventSink` (the session store, the TUI adapter, the headless CLI printer);
nothing in the engine calls into a UI. A sink must never receive an API key: events carry model
names, token counts and costs, never credentials or request headers.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal, Protocol

Origin = Literal["lowering", "offline", "llm", "human"]
AgencyMode = Literal["tool_agent", "single_pass", "fix_loop", "knob_edit", "lowering", "human"]
CandidateStatus = Literal["proposed", "built", "build_failed", "incorrect", "passed", "crashed",
                          "rejected_duplicate", "no_code"]
Timing = Literal["estimate", "measured"]


@dataclass
class Candidate:
    id: str                          # short, stable within a session: "r2-c3"
    code: str
    round: int
    origin: Origin
    strategy: str = ""               # the direction it was asked to take (an L3 card id or free text)
    agency_mode: AgencyMode = "lowering"
    parent_ids: list[str] = field(default_factory=list)
    knobs: dict[str, Any] = field(default_factory=dict)   # lowering knobs when origin is lowering/offline
    status: CandidateStatus = "proposed"
    time_us: float | None = None     # fitness: geometric mean over the performance cases
    timing: Timing = "estimate"
    roofline_fraction: float | None = None
    bottleneck: str | None = None    # what bounds it on its slowest performance case
    pinned: bool = False
    vetoed: bool = False
    notes: list[str] = field(default_factory=list)   # the agent's reasons (offline: the move, what it addresses)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Event:
    kind: ClassVar[str] = "event"
    session: str
    at: float = field(default_factory=time.time, kw_only=True)

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["kind"] = self.kind
        return _jsonable(d)


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "to_json"):
        return v.to_json()
    return v


@dataclass
class SessionStarted(Event):
    kind: ClassVar[str] = "session_started"
    task: str
    chip: str
    backend: str
    agent: str                       # "offline" or a model name
    settings: dict[str, Any] = field(default_factory=dict)
    task_path: str = ""
    model: str = ""                  # the LLM model, "" for the offline agent


@dataclass
class RoundStarted(Event):
    kind: ClassVar[str] = "round_started"
    round: int
    strategies: list[str] = field(default_factory=list)
    random_state: Any = None         # the engine's RNG as the round starts (resume replays it)


@dataclass
class KnowledgeSliceUsed(Event):
    kind: ClassVar[str] = "knowledge_slice_used"
    round: int
    phase: str                       # init | mutation | repair | tuning
    cards: list[dict[str, Any]]      # {id, level, tokens, reason}
    total_tokens: int
    candidate_id: str | None = None


@dataclass
class LLMCall(Event):
    kind: ClassVar[str] = "llm_call"
    model: str
    role: str                        # cake | cake-evo | cake-partial
    phase: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    ok: bool = True
    error: str = ""                  # error class and message, never headers or keys
    round: int = 0
    candidate_id: str | None = None


@dataclass
class CandidateProposed(Event):
    kind: ClassVar[str] = "candidate_proposed"
    candidate: Candidate


@dataclass
class CandidateEvaluationStarted(Event):
    """The evaluator took the candidate up (until then it waited for a free evaluation slot)."""
    kind: ClassVar[str] = "evaluation_started"
    candidate_id: str


@dataclass
class CandidateBuilt(Event):
    kind: ClassVar[str] = "candidate_built"
    candidate_id: str
    ok: bool
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class CandidateEvaluated(Event):
    kind: ClassVar[str] = "candidate_evaluated"
    candidate_id: str
    status: CandidateStatus
    cases: list[dict[str, Any]] = field(default_factory=list)   # per case: id, passed, mere, mare, est_us, ...
    time_us: float | None = None
    timing: Timing = "estimate"
    roofline_fraction: float | None = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    # the same evaluation recorded again on the session's case set (a case left out of every
    # candidate's time), not a new evaluation: the store does not count it as one
    recorded_again: bool = False


@dataclass
class RoundFinished(Event):
    kind: ClassVar[str] = "round_finished"
    round: int
    candidates: int
    passed: int
    best_id: str | None = None
    best_time_us: float | None = None
    median_time_us: float | None = None


@dataclass
class DecisionNeeded(Event):
    kind: ClassVar[str] = "decision_needed"
    round: int
    leaderboard: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class DecisionMade(Event):
    kind: ClassVar[str] = "decision_made"
    round: int
    pins: list[str] = field(default_factory=list)
    vetoes: list[str] = field(default_factory=list)
    unpins: list[str] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)      # ids of human candidates entered
    steer: str = ""
    action: Literal["continue", "stop"] = "continue"


@dataclass
class SessionFinished(Event):
    kind: ClassVar[str] = "session_finished"
    status: Literal["finished", "stopped", "budget_exhausted", "failed"]
    best_id: str | None = None
    reason: str = ""


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class EventFanout:
    """Sends each event to several sinks, in order."""

    def __init__(self, *sinks: EventSink) -> None:
        self.sinks = list(sinks)

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            sink.emit(event)
