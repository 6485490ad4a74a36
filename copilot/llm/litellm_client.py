"""The litellm implementation of `LLMClient`: any hosted provider or a local OpenAI-compatible server.

litellm takes seconds to import, so it sits behind a lazy proxy (`litellm`, the only way our code
reaches it): importing this module does not import it; the first use does, after setting
`LITELLM_LOCAL_MODEL_COST_MAP=True` so start-up never reaches for the network.

Retries are ours (`copilot.llm.client.RetryPolicy`), decided by the error class this module maps
litellm's exceptions to (`ERROR_TABLE`); litellm and the OpenAI SDK are told not to retry.
The key is read from the environment at call time, passed to litellm, and nowhere else.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from copilot.llm.client import (AuthenticationFailed, BadRequest, ContextOverflow, LLMClient,
                                LLMError, LLMReply, Message, RateLimited, RetryPolicy, ServerError,
                                Timeout, redact)
from copilot.llm.models import ModelConfig, safe_url

# litellm exception class name -> our error class; the first match in this order wins (subclasses
# first: ContextWindowExceededError is a BadRequestError, Timeout an APIConnectionError in openai).
ERROR_TABLE: tuple[tuple[str, type[LLMError]], ...] = (
    ("ContextWindowExceededError", ContextOverflow),      # no retry: shrink the prompt
    ("AuthenticationError", AuthenticationFailed),        # no retry: fix the key
    ("PermissionDeniedError", AuthenticationFailed),
    ("NotFoundError", BadRequest),                        # no retry: unknown model or endpoint
    ("ContentPolicyViolationError", BadRequest),
    ("BadRequestError", BadRequest),
    ("UnprocessableEntityError", BadRequest),
    ("RateLimitError", RateLimited),                      # retry with backoff
    ("Timeout", Timeout),                                 # retry
    ("APIConnectionError", ServerError),                  # retry
    ("ServiceUnavailableError", ServerError),             # retry
    ("InternalServerError", ServerError),                 # retry
    ("BadGatewayError", ServerError),                     # retry
)
_MISSING_KEY_WORDS = re.compile(r"(?i)missing credentials|api_key client option must be set|"
                                r"no api key provided")
_CONTEXT_WORDS = re.compile(r"(?i)context (length|window)|maximum context|too many tokens|"
                            r"prompt is too long|reduce the length")
_NO_KEY = "not-needed"                 # placeholder some local servers insist on


log = logging.getLogger(__name__)
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
_KEY_ENVS: set[str] = set()            # names (never values) of the variables holding keys in use


class _RedactingFilter(logging.Filter):
    """Scrubs keys from litellm's log records: its debug log prints request kwargs, api_key too."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:
            return True
        secrets = [v for v in (os.environ.get(n) for n in tuple(_KEY_ENVS)) if v]
        clean = redact(msg, secrets)
        if clean != msg:
            record.msg, record.args = clean, ()
        return True


def _quiet_litellm_logs() -> None:
    """litellm logs only warnings and up (CANNPILOT_LITELLM_DEBUG=1 lets debug through), redacted."""
    level = logging.DEBUG if os.environ.get("CANNPILOT_LITELLM_DEBUG") == "1" else logging.WARNING
    for name in _LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(level)
        if not any(isinstance(f, _RedactingFilter) for f in logger.filters):
            logger.addFilter(_RedactingFilter())
        for handler in logger.handlers:
            if not any(isinstance(f, _RedactingFilter) for f in handler.filters):
                handler.addFilter(_RedactingFilter())


def _discard(async_coroutine: Any) -> None:
    async_coroutine.close()


def _detach_logging_worker(module: Any) -> None:
    """Drop litellm's post-call async logging (we register no litellm callbacks and account
    ourselves). Its global worker keeps a queue bound to the first event loop; with one loop per
    `asyncio.run` (CLI commands, tests) the queue fills and loop shutdown can hang waiting on it."""
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

        GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue = _discard
    except (ImportError, AttributeError):     # another litellm layout: it has no such worker
        log.debug("litellm %s has no global logging worker to detach",
                  getattr(module, "__version__", "?"))


class _LazyLitellm:
    """`litellm.X` imports and configures litellm on first use."""

    _module: Any = None
    _lock = threading.Lock()

    def load(self) -> Any:
        if self._module is None:
            with self._lock:
                if self._module is None:
                    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
                    import litellm as module

                    module.drop_params = True
                    module.suppress_debug_info = True
                    module.num_retries = 0
                    module.disable_hf_tokenizer_download = True   # token counting stays offline
                    if hasattr(module, "telemetry"):
                        module.telemetry = False
                    _quiet_litellm_logs()
                    _detach_logging_worker(module)
                    type(self)._module = module
        return self._module

    @property
    def loaded(self) -> bool:
        return self._module is not None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.load(), name)


litellm = _LazyLitellm()


# --- error mapping --------------------------------------------------------------------------------

def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def map_exception(exc: BaseException, config: ModelConfig, secrets: tuple[str, ...] = ()) -> LLMError:
    """Our error for a litellm (or transport) exception. Never carries the original object."""
    if isinstance(exc, LLMError):
        return exc
    model = config.name
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    detail = redact(str(getattr(exc, "message", None) or exc or type(exc).__name__), secrets)
    detail = re.sub(r"^litellm\.\w+:\s*", "", detail)[:400]
    names = {cls.__name__ for cls in type(exc).__mro__}
    target: type[LLMError] | None = None
    for name, ours in ERROR_TABLE:
        if name in names:
            target = ours
            break
    if target is None:
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            target = Timeout
        elif "APIError" in names or "MockException" in names:
            target = ServerError if status is None or status >= 500 or status == 408 else (
                RateLimited if status == 429 else BadRequest)
        else:
            return LLMError(f"{model}: unexpected {type(exc).__name__} from litellm: {detail}",
                            model=model, status=status)
    if target is BadRequest and _CONTEXT_WORDS.search(detail):
        target = ContextOverflow
    if _MISSING_KEY_WORDS.search(detail):
        target = AuthenticationFailed

    if target is AuthenticationFailed:
        env = config.key_env()
        if env:
            what = (f"the provider rejected the key in ${env}: set {env} to a valid key "
                    f"(it is read from the environment, never from settings)")
        else:
            what = (f"the server at {safe_url(config.api_base) or 'the default endpoint'} wants a "
                    f"key: put it in an environment variable and name it in `api_key_env`")
        return AuthenticationFailed(f"{model}: authentication failed: {what} [{detail}]",
                                    model=model, status=status, key_env=env)
    if target is ContextOverflow:
        return ContextOverflow(f"{model}: the prompt does not fit the context window; use a "
                               f"smaller knowledge slice or a model with a longer context [{detail}]",
                               model=model, status=status)
    if target is RateLimited:
        return RateLimited(f"{model}: rate limited [{detail}]", model=model, status=status,
                           retry_after=_retry_after(exc))
    if target is Timeout:
        return Timeout(f"{model}: no reply within {config.timeout_s:g}s [{detail}]", model=model,
                       status=status)
    if target is ServerError:
        where = f" at {safe_url(config.api_base)}" if config.api_base else ""
        return ServerError(f"{model}: provider or connection error{where} [{detail}]", model=model,
                           status=status)
    return BadRequest(f"{model}: request refused [{detail}]", model=model, status=status)


# --- the client -----------------------------------------------------------------------------------

class LiteLLMClient(LLMClient):
    """`LLMClient` over `litellm.acompletion`.

    `acompletion` replaces litellm's function (tests wrap it to inject failures); `request_overrides`
    adds keyword arguments to every request (tests pass `mock_response`).
    """

    def __init__(self, config: ModelConfig, *, usage=None, retry: RetryPolicy | None = None,
                 acompletion: Callable[..., Awaitable[Any]] | None = None,
                 request_overrides: dict[str, Any] | None = None) -> None:
        super().__init__(config.name, usage=usage, retry=retry)
        self.config = config
        self._acompletion = acompletion
        self._overrides = dict(request_overrides or {})
        # the HTTP clients litellm cached for our requests, by event loop id: litellm drops a client
        # from its cache after an hour without closing it; held here, it is closed by `aclose`
        # instead of printing "Unclosed client session" when collected in the middle of a session
        self._held: dict[int, dict[int, Any]] = {}

    def __repr__(self) -> str:
        return f"LiteLLMClient({self.config!r})"

    async def aclose(self) -> None:
        """Close litellm's cached HTTP clients in the running loop (they belong to it), then drop
        them from its cache, so a later request in another loop builds fresh ones. Left open, their
        aiohttp sessions print "Unclosed client session" when collected (at exit, or when litellm's
        cache evicts them)."""
        if not litellm.loaded:
            return
        try:
            await litellm.close_litellm_async_clients()
            # litellm 1.80's cleanup skips the OpenAI SDK clients it caches (openai-compatible
            # servers): `AsyncOpenAI` closes with `close()`, which none of its branches calls
            cache = litellm.in_memory_llm_clients_cache
            held = self._held.pop(id(asyncio.get_running_loop()), {})
            for cached in [*cache.cache_dict.values(), *held.values()]:
                close, closed = getattr(cached, "close", None), getattr(cached, "is_closed", None)
                if inspect.iscoroutinefunction(close) and callable(closed) and not closed():
                    await close()
            cache.flush_cache()
        except Exception as exc:           # closing is best effort: the process may go on
            log.warning("closing litellm's HTTP clients failed: %s: %s", type(exc).__name__, exc)

    # request -------------------------------------------------------------------------------------

    def _request(self, messages: list[Message], max_tokens: int | None,
                 temperature: float | None) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Keyword arguments for acompletion, and the secrets to redact from any error."""
        cfg = self.config
        kwargs: dict[str, Any] = {"model": cfg.name, "messages": messages, "timeout": cfg.timeout_s,
                                  "num_retries": 0, "max_retries": 0}
        env = cfg.key_env()
        if env:
            _KEY_ENVS.add(env)
        key = os.environ.get(env) if env else None
        if env and not key:
            raise AuthenticationFailed(f"{cfg.name}: no key: the environment variable {env} is not "
                                       f"set (export {env}=... before starting cannpilot)",
                                       model=cfg.name, status=None, key_env=env)
        if key:
            kwargs["api_key"] = key
        elif cfg.is_local:
            kwargs["api_key"] = _NO_KEY
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        if (mt := max_tokens if max_tokens is not None else cfg.max_tokens) is not None:
            kwargs["max_tokens"] = mt
        if (t := temperature if temperature is not None else cfg.temperature) is not None:
            kwargs["temperature"] = t
        kwargs.update(self._overrides)
        return kwargs, ((key,) if key else ())

    async def _call(self, **kwargs: Any) -> Any:
        fn = self._acompletion or litellm.acompletion
        try:
            return await fn(**kwargs)
        finally:
            self._hold_clients()

    def _hold_clients(self) -> None:
        """Keep a reference to the async clients litellm cached for this event loop (see `_held`)."""
        if not litellm.loaded:
            return
        loop = id(asyncio.get_running_loop())
        held = self._held.setdefault(loop, {})
        for key, cached in list(litellm.in_memory_llm_clients_cache.cache_dict.items()):
            if str(key).endswith(f"-{loop}") and inspect.iscoroutinefunction(getattr(cached, "close", None)):
                held.setdefault(id(cached), cached)

    async def _complete_once(self, messages: list[Message], *, max_tokens: int | None,
                             temperature: float | None) -> LLMReply:
        kwargs, secrets = self._request(messages, max_tokens, temperature)
        error: LLMError | None = None
        try:
            async with asyncio.timeout(self.config.timeout_s + 10):
                resp = await self._call(**kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:                 # mapped, then raised outside: no chained litellm object
            error = map_exception(exc, self.config, secrets)
        del kwargs
        if error is not None:
            raise error
        choice = resp.choices[0]
        text = (getattr(choice.message, "content", None) or "") if choice.message else ""
        usage = getattr(resp, "usage", None)
        return self._reply(messages, text, choice.finish_reason or "stop",
                           getattr(usage, "prompt_tokens", 0) or 0,
                           getattr(usage, "completion_tokens", 0) or 0, response=resp)

    async def _stream_once(self, messages: list[Message], *, max_tokens: int | None,
                           temperature: float | None) -> AsyncIterator[str | LLMReply]:
        kwargs, secrets = self._request(messages, max_tokens, temperature)
        kwargs["stream"] = True
        kwargs.setdefault("stream_options", {"include_usage": True})
        parts: list[str] = []
        finish = "stop"
        prompt_tokens = completion_tokens = 0
        error: LLMError | None = None
        try:
            stream = await self._call(**kwargs)
            del kwargs
            async for chunk in stream:
                usage = getattr(chunk, "usage", None)
                if usage:
                    prompt_tokens = getattr(usage, "prompt_tokens", 0) or prompt_tokens
                    completion_tokens = getattr(usage, "completion_tokens", 0) or completion_tokens
                for choice in getattr(chunk, "choices", None) or []:
                    content = getattr(getattr(choice, "delta", None), "content", None)
                    if content:
                        parts.append(content)
                        yield content
                    if getattr(choice, "finish_reason", None):
                        finish = choice.finish_reason
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = map_exception(exc, self.config, secrets)
        if error is not None:
            raise error
        yield self._reply(messages, "".join(parts), finish, prompt_tokens, completion_tokens)

    # usage and cost ------------------------------------------------------------------------------

    def _reply(self, messages: list[Message], text: str, finish: str, prompt_tokens: int,
               completion_tokens: int, response: Any = None) -> LLMReply:
        estimated = False
        if prompt_tokens == 0 and completion_tokens == 0:
            prompt_tokens, completion_tokens = self._count(messages, text)
            estimated = True
        cost, known = self._cost(prompt_tokens, completion_tokens, response)
        return LLMReply(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                        cost_usd=cost, latency_s=0.0, model=self.config.name, finish_reason=finish,
                        cost_known=known, tokens_estimated=estimated)

    def _count(self, messages: list[Message], text: str) -> tuple[int, int]:
        try:
            return (int(litellm.token_counter(model=self.config.name, messages=messages)),
                    int(litellm.token_counter(model=self.config.name, text=text)) if text else 0)
        except Exception:                       # a tokenizer we cannot load offline: ~4 chars a token
            chars = sum(len(str(m.get("content", ""))) for m in messages)
            return chars // 4 + 1, len(text) // 4

    def _cost(self, prompt_tokens: int, completion_tokens: int, response: Any) -> tuple[float, bool]:
        """USD for the call, and whether the model has a known price (False: counted as 0)."""
        cfg = self.config
        if cfg.input_usd_per_mtok is not None or cfg.output_usd_per_mtok is not None:
            return ((prompt_tokens * (cfg.input_usd_per_mtok or 0.0)
                     + completion_tokens * (cfg.output_usd_per_mtok or 0.0)) / 1e6, True)
        try:
            if response is not None:
                cost = float(litellm.completion_cost(completion_response=response, model=cfg.name))
            else:
                p, c = litellm.cost_per_token(model=cfg.name, prompt_tokens=prompt_tokens,
                                              completion_tokens=completion_tokens)
                cost = float(p) + float(c)
        except Exception:                       # not in litellm's price table (a local model)
            return 0.0, False
        if cost == 0.0 and prompt_tokens + completion_tokens > 0:
            return 0.0, False
        return cost, True
