"""Tokens and cost per call, phase, role, round, model and session; budget caps.

Every call, ok or failed, is recorded and sent to the event sink as `copilot.events.LLMCall`.
Records hold model names, counts, costs and error text (already redacted): never keys or headers.
`snapshot()` / `restore()` carry the totals through the session store so a resumed session keeps
counting against the same budget.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from copilot.events import EventSink, LLMCall
from copilot.llm.client import BudgetExceeded, CallContext, LLMError, LLMReply

SNAPSHOT_VERSION = 1


@dataclass(frozen=True)
class Budget:
    """Caps for a session. None means no cap."""

    max_tokens: int | None = None
    max_usd: float | None = None

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 0:
            raise ValueError("max_tokens must be >= 0")
        if self.max_usd is not None and self.max_usd < 0:
            raise ValueError("max_usd must be >= 0")


@dataclass
class Tally:
    calls: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt: int, completion: int, cost: float, ok: bool) -> None:
        self.calls += 1
        self.failed += 0 if ok else 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cost_usd += cost

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "tokens": self.tokens}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Tally:
        return cls(calls=int(d.get("calls", 0)), failed=int(d.get("failed", 0)),
                   prompt_tokens=int(d.get("prompt_tokens", 0)),
                   completion_tokens=int(d.get("completion_tokens", 0)),
                   cost_usd=float(d.get("cost_usd", 0.0)))


@dataclass
class Accounting:
    """The running totals of one session, the budget they are held to, and the event sink."""

    budget: Budget = field(default_factory=Budget)
    sink: EventSink | None = None
    session: str = ""
    total: Tally = field(default_factory=Tally)
    by_phase: dict[str, Tally] = field(default_factory=dict)
    by_role: dict[str, Tally] = field(default_factory=dict)
    by_round: dict[int, Tally] = field(default_factory=dict)
    by_model: dict[str, Tally] = field(default_factory=dict)
    unpriced_models: set[str] = field(default_factory=set)
    estimated_calls: int = 0

    # budget --------------------------------------------------------------------------------------

    def exhausted(self) -> str | None:
        """Why no further call may start, or None."""
        b = self.budget
        if b.max_tokens is not None and self.total.tokens >= b.max_tokens:
            return (f"token budget reached: spent {self.total.tokens:,} tokens of the "
                    f"{b.max_tokens:,} cap")
        if b.max_usd is not None and self.total.cost_usd >= b.max_usd:
            return f"USD budget reached: spent ${self.total.cost_usd:.4f} of the ${b.max_usd:.4f} cap"
        return None

    def check_budget(self) -> None:
        """Raise `BudgetExceeded` if a call started now would start past a cap."""
        why = self.exhausted()
        if why is None:
            return
        raise BudgetExceeded(
            f"{why} ({self.total.calls} calls, {self.total.tokens:,} tokens, "
            f"${self.total.cost_usd:.4f} so far); raise the cap with CANNPILOT_BUDGET_USD / "
            f"CANNPILOT_BUDGET_TOKENS or `budget:` in settings.yaml",
            spent_tokens=self.total.tokens, spent_usd=self.total.cost_usd,
            max_tokens=self.budget.max_tokens, max_usd=self.budget.max_usd)

    # recording -----------------------------------------------------------------------------------

    def record(self, reply: LLMReply, ctx: CallContext) -> None:
        """A call that returned a reply."""
        if not reply.cost_known:
            self.unpriced_models.add(reply.model)
        if reply.tokens_estimated:
            self.estimated_calls += 1
        self._add(reply.model, ctx, reply.prompt_tokens, reply.completion_tokens, reply.cost_usd,
                  ok=True)
        self._emit(LLMCall(session=self.session, model=reply.model, role=ctx.role, phase=ctx.phase,
                           prompt_tokens=reply.prompt_tokens,
                           completion_tokens=reply.completion_tokens, cost_usd=reply.cost_usd,
                           latency_s=reply.latency_s, ok=True, round=ctx.round,
                           candidate_id=ctx.candidate_id))

    def record_failure(self, model: str, ctx: CallContext, error: LLMError, latency_s: float,
                       prompt_tokens: int = 0, completion_tokens: int = 0,
                       cost_usd: float = 0.0) -> None:
        """A call that failed (each failed attempt of a retried call is one record)."""
        self._add(model, ctx, prompt_tokens, completion_tokens, cost_usd, ok=False)
        self._emit(LLMCall(session=self.session, model=model, role=ctx.role, phase=ctx.phase,
                           prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                           cost_usd=cost_usd, latency_s=latency_s, ok=False,
                           error=f"{type(error).__name__}: {error}", round=ctx.round,
                           candidate_id=ctx.candidate_id))

    def _add(self, model: str, ctx: CallContext, prompt: int, completion: int, cost: float,
             ok: bool) -> None:
        for table, key in ((self.by_phase, ctx.phase), (self.by_role, ctx.role),
                           (self.by_round, ctx.round), (self.by_model, model)):
            table.setdefault(key, Tally()).add(prompt, completion, cost, ok)  # type: ignore[arg-type]
        self.total.add(prompt, completion, cost, ok)

    def _emit(self, event: LLMCall) -> None:
        if self.sink is not None:
            self.sink.emit(event)

    # persistence and report ----------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready totals for the session store (no events, no keys)."""
        return {
            "version": SNAPSHOT_VERSION,
            "budget": asdict(self.budget),
            "total": self.total.to_json(),
            "by_phase": {k: t.to_json() for k, t in self.by_phase.items()},
            "by_role": {k: t.to_json() for k, t in self.by_role.items()},
            "by_round": {str(k): t.to_json() for k, t in self.by_round.items()},
            "by_model": {k: t.to_json() for k, t in self.by_model.items()},
            "unpriced_models": sorted(self.unpriced_models),
            "estimated_calls": self.estimated_calls,
        }

    def restore(self, snapshot: dict[str, Any], *, keep_budget: bool = True) -> None:
        """Continue from a snapshot (resume). The current budget stays unless `keep_budget=False`."""
        if snapshot.get("version") != SNAPSHOT_VERSION:
            raise ValueError(f"unknown accounting snapshot version {snapshot.get('version')!r}")
        self.total = Tally.from_json(snapshot.get("total", {}))
        self.by_phase = {k: Tally.from_json(v) for k, v in snapshot.get("by_phase", {}).items()}
        self.by_role = {k: Tally.from_json(v) for k, v in snapshot.get("by_role", {}).items()}
        self.by_round = {int(k): Tally.from_json(v) for k, v in snapshot.get("by_round", {}).items()}
        self.by_model = {k: Tally.from_json(v) for k, v in snapshot.get("by_model", {}).items()}
        self.unpriced_models = set(snapshot.get("unpriced_models", []))
        self.estimated_calls = int(snapshot.get("estimated_calls", 0))
        if not keep_budget:
            self.budget = Budget(**snapshot.get("budget", {}))

    def report(self) -> str:
        """A short plain-text token and cost report (per phase, role, round; then the total)."""
        lines = []
        for title, table in (("phase", self.by_phase), ("role", self.by_role),
                             ("round", self.by_round), ("model", self.by_model)):
            for key, t in sorted(table.items(), key=lambda kv: str(kv[0])):
                lines.append(f"{title:<6} {str(key):<24} {t.calls:>4} calls  "
                             f"{t.prompt_tokens:>9,} in  {t.completion_tokens:>8,} out  "
                             f"${t.cost_usd:.4f}" + (f"  ({t.failed} failed)" if t.failed else ""))
        t = self.total
        lines.append(f"total  {'':<24} {t.calls:>4} calls  {t.prompt_tokens:>9,} in  "
                     f"{t.completion_tokens:>8,} out  ${t.cost_usd:.4f}")
        if self.unpriced_models:
            lines.append("note: no price known for " + ", ".join(sorted(self.unpriced_models))
                         + " (counted as $0)")
        if self.estimated_calls:
            lines.append(f"note: token counts of {self.estimated_calls} call(s) were estimated "
                         "(the provider sent no usage)")
        b = self.budget
        if b.max_tokens is not None or b.max_usd is not None:
            caps = []
            if b.max_tokens is not None:
                caps.append(f"{b.max_tokens:,} tokens")
            if b.max_usd is not None:
                caps.append(f"${b.max_usd:.4f}")
            lines.append("budget: " + " / ".join(caps))
        return "\n".join(lines)
