"""`ScriptedLLM`: an `LLMClient` that replays a script instead of calling a model.

It goes through the same base class as the litellm client, so budgets, retries (with no real
waiting), accounting and `LLMCall` events behave exactly as in a real session.

    llm = ScriptedLLM([
        RateLimited("slow down"),                       # first attempt fails, is retried
        Reply("```cpp\\n...kernel...\\n```", prompt_tokens=900, completion_tokens=400, cost_usd=0.002),
        "no code here, sorry",                          # a plain string: default counts and cost
        lambda prompt: Reply(...),                      # computed from the prompt it answers
    ])
    ...
    assert llm.prompts[0].phase == "init"
    assert "UB" in llm.prompts[0].text

An item may be an `LLMError` instance or class (raised), a `Reply`, a string, or a callable taking
the `Prompt` and returning any of those. Running out of script raises `ScriptExhausted`, which
names the prompt that found the script empty.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

from copilot.llm.accounting import Accounting, Budget
from copilot.llm.client import (CallContext, LLMClient, LLMError, LLMReply, Message, RetryPolicy,
                                current_call)


@dataclass(frozen=True)
class Reply:
    text: str
    prompt_tokens: int | None = None       # None: ~chars/4 of the prompt
    completion_tokens: int | None = None   # None: ~chars/4 of the text
    cost_usd: float | None = None          # None: tokens at `ScriptedLLM.usd_per_mtok`
    finish_reason: str = "stop"
    chunks: list[str] | None = None        # how `stream` splits the text (default: by line)
    fail_mid_stream: LLMError | None = None  # `stream` raises this after the chunks


@dataclass
class Prompt:
    """One request the fake received (one per attempt, retried attempts included)."""

    messages: list[Message]
    phase: str
    role: str
    round: int
    candidate_id: str | None
    max_tokens: int | None
    temperature: float | None
    streamed: bool = False

    @property
    def text(self) -> str:
        """All message contents joined (what a test usually greps)."""
        return "\n\n".join(str(m.get("content", "")) for m in self.messages)

    @property
    def system(self) -> str:
        return "\n\n".join(str(m.get("content", "")) for m in self.messages if m.get("role") == "system")

    @property
    def user(self) -> str:
        """The last user message."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[-1].get("content", "")) if users else ""


ScriptItem = Union[str, Reply, LLMError, type, Callable[[Prompt], Any]]


class ScriptExhausted(AssertionError):
    """The code under test made more calls than the script has replies for."""


class ScriptedLLM(LLMClient):
    def __init__(self, script: list[ScriptItem] = (), *, model: str = "scripted/fake",  # type: ignore[assignment]
                 usage: Accounting | None = None, budget: Budget | None = None, sink=None,
                 session: str = "test", retry: RetryPolicy | None = None,
                 usd_per_mtok: float = 1.0) -> None:
        if usage is None:
            usage = Accounting(budget=budget or Budget(), sink=sink, session=session)
        super().__init__(model, usage=usage, retry=retry or RetryPolicy.immediate())
        self.script: list[ScriptItem] = list(script)
        self.prompts: list[Prompt] = []
        self.usd_per_mtok = usd_per_mtok

    def add(self, *items: ScriptItem) -> None:
        self.script.extend(items)

    @property
    def remaining(self) -> int:
        return len(self.script)

    # backend hooks -------------------------------------------------------------------------------

    def _next(self, messages: list[Message], max_tokens, temperature, streamed: bool) -> Reply:
        ctx = current_call.get() or CallContext("?", "?")
        prompt = Prompt([dict(m) for m in messages], ctx.phase, ctx.role, ctx.round,
                        ctx.candidate_id, max_tokens, temperature, streamed)
        self.prompts.append(prompt)
        if not self.script:
            raise ScriptExhausted(f"ScriptedLLM: no scripted reply left for call {len(self.prompts)} "
                                  f"(phase={ctx.phase}, role={ctx.role}, round={ctx.round})")
        item = self.script.pop(0)
        if callable(item) and not isinstance(item, type):
            item = item(prompt)
        if isinstance(item, type) and issubclass(item, LLMError):
            item = item(f"scripted {item.__name__}", model=self.model)
        if isinstance(item, LLMError):
            if not item.model:
                item.model = self.model
            raise item
        if isinstance(item, str):
            item = Reply(item)
        if not isinstance(item, Reply):
            raise TypeError(f"ScriptedLLM: cannot replay {item!r}")
        return item

    def _to_reply(self, r: Reply, messages: list[Message]) -> LLMReply:
        pt = r.prompt_tokens if r.prompt_tokens is not None else \
            sum(len(str(m.get("content", ""))) for m in messages) // 4 + 1
        ct = r.completion_tokens if r.completion_tokens is not None else len(r.text) // 4
        cost = r.cost_usd if r.cost_usd is not None else (pt + ct) * self.usd_per_mtok / 1e6
        return LLMReply(text=r.text, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost,
                        latency_s=0.0, model=self.model, finish_reason=r.finish_reason)

    async def _complete_once(self, messages, *, max_tokens, temperature) -> LLMReply:
        return self._to_reply(self._next(messages, max_tokens, temperature, False), messages)

    async def _stream_once(self, messages, *, max_tokens, temperature):
        r = self._next(messages, max_tokens, temperature, True)
        chunks = r.chunks if r.chunks is not None else r.text.splitlines(keepends=True)
        for c in chunks:
            yield c
        if r.fail_mid_stream is not None:
            raise r.fail_mid_stream
        yield self._to_reply(r, messages)
