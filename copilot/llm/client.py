"""The small interface every LLM agent talks to: complete, stream, usage.

`LLMClient` owns what is the same for every backend: the budget check before each attempt, the
retry loop (backoff with jitter, decided by our error classes), latency, and the accounting record
with its `LLMCall` event. A backend implements two methods: `_complete_once` and `_stream_once`.
The litellm backend lives in `copilot.llm.litellm_client`; tests use `tests.fakes.fake_llm`.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import contextvars
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from copilot.errors import CannpilotError

if TYPE_CHECKING:
    from copilot.llm.accounting import Accounting

Message = dict[str, Any]          # {"role": "system" | "user" | "assistant", "content": str}


# --- errors ---------------------------------------------------------------------------------------

_SECRET_PATTERNS = [
    re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-*.]{6,}"),             # OpenAI-style keys, masked or not
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-.=:+/]{6,}"),
    re.compile(r"(?i)(api[_-]?key|x-api-key|authorization)(['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{4,}"),
]


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` with the given secret values and anything shaped like a key replaced by `***`."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "***")
    text = _SECRET_PATTERNS[0].sub(lambda m: m.group(1) + "-***", text)
    text = _SECRET_PATTERNS[1].sub("Bearer ***", text)
    text = _SECRET_PATTERNS[2].sub(lambda m: m.group(1) + m.group(2) + "***", text)
    return text


class LLMError(CannpilotError):
    """A failed LLM call. `retryable` says whether the same request may succeed if sent again.

    Messages are redacted on construction: they never hold a key, a header or a request body.
    """

    retryable = False

    def __init__(self, message: str, *, model: str = "", status: int | None = None) -> None:
        self.model = model
        self.status = status
        self.attempts = 1
        self._message = redact(message)
        super().__init__(self._message)

    def __str__(self) -> str:
        if self.attempts > 1:
            return f"{self._message} (gave up after {self.attempts} attempts)"
        return self._message


class RateLimited(LLMError):
    retryable = True

    def __init__(self, message: str, *, model: str = "", status: int | None = 429,
                 retry_after: float | None = None) -> None:
        super().__init__(message, model=model, status=status)
        self.retry_after = retry_after


class ServerError(LLMError):
    """The provider or the connection failed (5xx, connection refused, overloaded)."""

    retryable = True


class Timeout(LLMError):
    retryable = True


class AuthenticationFailed(LLMError):
    """The provider rejected the key. The message names the environment variable, never the key.
    A configuration problem of the user's, so the CLI exits 2 (bad input)."""

    exit_code = 2

    def __init__(self, message: str, *, model: str = "", status: int | None = 401,
                 key_env: str | None = None) -> None:
        super().__init__(message, model=model, status=status)
        self.key_env = key_env


class BadRequest(LLMError):
    """The provider refused the request itself (unknown model, bad parameter, content policy)."""


class ContextOverflow(BadRequest):
    """The prompt does not fit the model's context window: shrink the knowledge slice, not retry."""


class BudgetExceeded(LLMError):
    """The session's token or USD cap is reached; no further call is started."""

    def __init__(self, message: str, *, spent_tokens: int = 0, spent_usd: float = 0.0,
                 max_tokens: int | None = None, max_usd: float | None = None) -> None:
        super().__init__(message)
        self.spent_tokens = spent_tokens
        self.spent_usd = spent_usd
        self.max_tokens = max_tokens
        self.max_usd = max_usd


# --- replies and retry policy ---------------------------------------------------------------------

@dataclass(frozen=True)
class LLMReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    model: str
    finish_reason: str = "stop"       # stop | length | ...; "length" means the reply was cut off
    cost_known: bool = True           # False when the model has no price (a local server): cost is 0
    tokens_estimated: bool = False    # True when the provider sent no usage and we counted ourselves

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


@dataclass(frozen=True)
class CallContext:
    """Who asked, and why: the keys the accounting groups by."""

    phase: str
    role: str
    round: int = 0
    candidate_id: str | None = None


async def _no_sleep(_: float) -> None:
    return None


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; whether to retry at all is the error's `retryable` flag.

    `sleep` and `rng` are injectable so tests never wait and are deterministic.
    """

    max_attempts: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.25              # each delay is scaled by a factor in [1 - jitter, 1 + jitter]
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, error: LLMError) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        hinted = getattr(error, "retry_after", None)
        base = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        if hinted is not None and hinted > 0:
            base = min(self.max_delay_s, max(base, float(hinted)))
        return base * self.rng.uniform(1.0 - self.jitter, 1.0 + self.jitter)

    @classmethod
    def immediate(cls, max_attempts: int = 5) -> RetryPolicy:
        """No waiting at all (tests, scripted runs)."""
        return cls(max_attempts=max_attempts, sleep=_no_sleep, rng=random.Random(0))


# Who is asking, for backends that want to know (the scripted fake records it with each prompt).
current_call: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar(
    "cannpilot_llm_call", default=None)


# --- the interface --------------------------------------------------------------------------------

class LLMClient(abc.ABC):
    """complete / stream / usage. Subclasses implement `_complete_once` and `_stream_once`."""

    model: str

    def __init__(self, model: str, *, usage: Accounting | None = None,
                 retry: RetryPolicy | None = None) -> None:
        from copilot.llm.accounting import Accounting

        self.model = model
        self.usage: Accounting = usage if usage is not None else Accounting()
        self.retry = retry if retry is not None else RetryPolicy()

    # backend hooks -------------------------------------------------------------------------------

    @abc.abstractmethod
    async def _complete_once(self, messages: list[Message], *, max_tokens: int | None,
                             temperature: float | None) -> LLMReply:
        """One request. Raise only `LLMError` subclasses; `latency_s` is filled in by the caller."""

    @abc.abstractmethod
    def _stream_once(self, messages: list[Message], *, max_tokens: int | None,
                     temperature: float | None) -> AsyncIterator[str | LLMReply]:
        """One streamed request: text chunks, then one final `LLMReply` holding the whole text."""

    # public API ----------------------------------------------------------------------------------

    async def complete(self, messages: list[Message], *, phase: str, role: str, round: int = 0,
                       candidate_id: str | None = None, max_tokens: int | None = None,
                       temperature: float | None = None) -> LLMReply:
        ctx = CallContext(phase=phase, role=role, round=round, candidate_id=candidate_id)
        token = current_call.set(ctx)
        try:
            return await self._complete(messages, ctx, max_tokens, temperature)
        finally:
            current_call.reset(token)

    async def _complete(self, messages: list[Message], ctx: CallContext, max_tokens: int | None,
                        temperature: float | None) -> LLMReply:
        attempt = 0
        while True:
            attempt += 1
            self.usage.check_budget()
            started = time.monotonic()
            error: LLMError | None = None
            try:
                reply = await self._complete_once(list(messages), max_tokens=max_tokens,
                                                  temperature=temperature)
            except LLMError as e:
                error = e
            latency = time.monotonic() - started
            if error is None:
                reply = replace(reply, latency_s=latency)
                self.usage.record(reply, ctx)
                return reply
            await self._after_failure(error, attempt, latency, ctx)

    async def stream(self, messages: list[Message], *, phase: str, role: str, round: int = 0,
                     candidate_id: str | None = None, max_tokens: int | None = None,
                     temperature: float | None = None) -> AsyncIterator[str | LLMReply]:
        """Yields text chunks as they arrive, then the final `LLMReply`.

        A failure before the first chunk is retried like `complete`; once text has been yielded a
        failure is raised (the caller already showed part of a reply).
        """
        ctx = CallContext(phase=phase, role=role, round=round, candidate_id=candidate_id)
        current_call.set(ctx)
        attempt = 0
        while True:
            attempt += 1
            self.usage.check_budget()
            started = time.monotonic()
            yielded = False
            final: LLMReply | None = None
            error: LLMError | None = None
            try:
                async with contextlib.aclosing(self._stream_once(
                        list(messages), max_tokens=max_tokens, temperature=temperature)) as items:
                    async for item in items:
                        if isinstance(item, LLMReply):
                            final = item
                        elif item:
                            yielded = True
                            yield item
            except LLMError as e:
                error = e
            latency = time.monotonic() - started
            if error is None and final is None:
                error = ServerError("the stream ended without a final reply", model=self.model)
            if error is None:
                assert final is not None
                final = replace(final, latency_s=latency)
                self.usage.record(final, ctx)
                yield final
                return
            if yielded:
                self.usage.record_failure(self.model, ctx, error, latency)
                raise error
            await self._after_failure(error, attempt, latency, ctx)

    async def aclose(self) -> None:
        """Release connections (end of session). Safe to call more than once."""

    async def _after_failure(self, error: LLMError, attempt: int, latency: float,
                             ctx: CallContext) -> None:
        """Record the failed attempt; wait before the next one, or raise."""
        error.attempts = attempt
        self.usage.record_failure(error.model or self.model, ctx, error, latency)
        if not error.retryable or attempt >= self.retry.max_attempts:
            raise error
        await self.retry.sleep(self.retry.delay(attempt, error))
