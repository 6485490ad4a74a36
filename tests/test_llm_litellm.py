"""The litellm client, end to end through litellm's own `mock_response` (no network)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest

from copilot.events import LLMCall
from copilot.llm import (Accounting, AuthenticationFailed, BadRequest, ContextOverflow, LLMError,
                         ModelConfig, RateLimited, RetryPolicy, ServerError, Timeout)
from copilot.llm.litellm_client import LiteLLMClient, litellm, map_exception
from tests.fakes.network import no_network  # noqa: F401  (fixture)

pytestmark = [pytest.mark.usefixtures("no_network"),
              # litellm's mock responses trip pydantic serializer warnings inside litellm itself
              pytest.mark.filterwarnings("ignore::UserWarning:pydantic.main")]

KEY_ENV = "CANNPILOT_TEST_KEY"
KEY = "sk-test-9f8e7d6c5b4a39281706"
MSGS = [{"role": "user", "content": "Write add_custom as an AscendC kernel."}]
KERNEL_REPLY = ('Here is the kernel.\n```cpp\nextern "C" __global__ __aicore__ void add_custom('
                'GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling) {}\n```\n')


class Sink:
    def __init__(self):
        self.events = []

    def emit(self, event):
        self.events.append(event)


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


def client(model: str = "gpt-4o-mini", *, sink=None, acompletion=None, overrides=None, **cfg):
    cfg.setdefault("api_key_env", KEY_ENV)
    return LiteLLMClient(ModelConfig(name=model, **cfg),
                         usage=Accounting(sink=sink, session="s1"), retry=RetryPolicy.immediate(),
                         acompletion=acompletion, request_overrides=overrides)


class Recorder:
    """Wraps litellm.acompletion: records the request, raises scripted errors first."""

    def __init__(self, *errors):
        self.errors = list(errors)
        self.calls: list[dict] = []

    async def __call__(self, **kwargs):
        self.calls.append(kwargs)
        if self.errors:
            raise self.errors.pop(0)
        return await litellm.acompletion(**kwargs)


def test_importing_the_llm_package_does_not_import_litellm():
    code = ("import sys, copilot.llm, copilot.llm.litellm_client, copilot.config\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('litellm', 'openai', 'textual', 'rich', 'prompt_toolkit')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


async def test_contract_mock_response_through_our_client(key_env):
    sink = Sink()
    rec = Recorder()
    llm = client(sink=sink, acompletion=rec, overrides={"mock_response": KERNEL_REPLY})
    reply = await llm.complete(MSGS, phase="init", role="cake", round=1, candidate_id="r1-c1",
                               max_tokens=256)
    assert reply.text == KERNEL_REPLY and reply.finish_reason == "stop"
    assert (reply.prompt_tokens, reply.completion_tokens) == (10, 20)   # litellm's mock usage
    assert reply.cost_known and reply.cost_usd > 0
    assert reply.cost_usd == pytest.approx(litellm.cost_per_token(
        model="gpt-4o-mini", prompt_tokens=10, completion_tokens=20)[0] + litellm.cost_per_token(
        model="gpt-4o-mini", prompt_tokens=10, completion_tokens=20)[1])
    # litellm is configured as the style guide says
    import os
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert litellm.drop_params is True and litellm.suppress_debug_info is True
    # the request: our timeout, no retries inside litellm or the SDK, the key passed through
    req = rec.calls[0]
    assert req["num_retries"] == 0 and req["max_retries"] == 0 and req["timeout"] == 120.0
    assert req["api_key"] == KEY and req["max_tokens"] == 256
    # recorded
    (event,) = sink.events
    assert isinstance(event, LLMCall) and event.ok and event.model == "gpt-4o-mini"
    assert (event.prompt_tokens, event.completion_tokens, event.candidate_id) == (10, 20, "r1-c1")
    assert event.cost_usd == reply.cost_usd == llm.usage.total.cost_usd
    assert llm.usage.by_phase["init"].tokens == 30


async def test_contract_streaming_through_our_client(key_env):
    llm = client(overrides={"mock_response": KERNEL_REPLY})
    items = [x async for x in llm.stream(MSGS, phase="init", role="cake")]
    *chunks, final = items
    assert len(chunks) > 1 and "".join(chunks) == KERNEL_REPLY == final.text
    assert final.prompt_tokens > 0 and final.completion_tokens > 0 and final.cost_known
    assert llm.usage.total.calls == 1 and llm.usage.total.cost_usd == final.cost_usd


async def test_local_server_model_has_no_price_and_says_so():
    llm = client("openai/qwen2.5-coder", api_key_env=None, api_base="http://127.0.0.1:8000/v1",
                 overrides={"mock_response": "hello"})
    reply = await llm.complete(MSGS, phase="init", role="cake")
    assert reply.cost_usd == 0.0 and not reply.cost_known
    assert "no price known for openai/qwen2.5-coder" in llm.usage.report()
    priced = client("openai/qwen2.5-coder", api_key_env=None, api_base="http://127.0.0.1:8000/v1",
                    input_usd_per_mtok=1.0, output_usd_per_mtok=2.0, overrides={"mock_response": "hi"})
    r = await priced.complete(MSGS, phase="init", role="cake")
    assert r.cost_known and r.cost_usd == pytest.approx((10 * 1.0 + 20 * 2.0) / 1e6)


async def test_rate_limit_from_litellm_is_retried_then_succeeds(key_env):
    rec = Recorder(litellm.RateLimitError(message="too many requests", llm_provider="openai",
                                          model="gpt-4o-mini"))
    sink = Sink()
    llm = client(sink=sink, acompletion=rec, overrides={"mock_response": "ok"})
    reply = await llm.complete(MSGS, phase="init", role="cake")
    assert reply.text == "ok" and len(rec.calls) == 2
    assert [e.ok for e in sink.events] == [False, True]


async def test_context_overflow_from_litellm_is_not_retried(key_env):
    rec = Recorder()
    llm = client(acompletion=rec, overrides={"mock_response": "litellm.ContextWindowExceededError"})
    with pytest.raises(ContextOverflow, match="context window"):
        await llm.complete(MSGS, phase="init", role="cake")
    assert len(rec.calls) == 1


async def test_authentication_failure_names_the_variable_never_the_key(key_env, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    sink = Sink()
    rec = Recorder(litellm.AuthenticationError(
        message=f"Incorrect API key provided: {KEY}. Authorization: Bearer {KEY}",
        llm_provider="openai", model="gpt-4o-mini"))
    llm = client(sink=sink, acompletion=rec, overrides={"mock_response": "unused"})
    with pytest.raises(AuthenticationFailed) as info:
        await llm.complete(MSGS, phase="init", role="cake")
    err = info.value
    assert len(rec.calls) == 1 and rec.calls[0]["api_key"] == KEY   # the key did go to litellm
    assert KEY_ENV in str(err) and err.key_env == KEY_ENV
    assert err.__cause__ is None and err.__context__ is None       # no litellm object kept
    # grep everything a user or the store could see
    seen = [str(err), repr(err), repr(llm), repr(llm.config), str(llm.config),
            json.dumps([e.to_json() for e in sink.events]), json.dumps(llm.usage.snapshot()),
            llm.usage.report(), caplog.text, *capsys.readouterr()]
    for text in seen:
        assert KEY not in text and KEY[8:] not in text


async def test_successful_call_leaks_no_key(key_env, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    sink = Sink()
    llm = client(sink=sink, overrides={"mock_response": KERNEL_REPLY})
    reply = await llm.complete(MSGS, phase="init", role="cake")
    seen = [repr(reply), repr(llm), json.dumps([e.to_json() for e in sink.events]),
            json.dumps(llm.usage.snapshot()), caplog.text, *capsys.readouterr()]
    assert all(KEY not in text for text in seen)


async def test_litellm_debug_log_is_redacted_when_enabled(key_env, caplog, monkeypatch):
    from copilot.llm import litellm_client

    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("CANNPILOT_LITELLM_DEBUG", "1")
    litellm.load()
    litellm_client._quiet_litellm_logs()
    try:
        llm = client(overrides={"mock_response": "ok"})
        await llm.complete(MSGS, phase="init", role="cake")
    finally:
        monkeypatch.delenv("CANNPILOT_LITELLM_DEBUG")
        litellm_client._quiet_litellm_logs()
    assert "litellm.acompletion(" in caplog.text            # litellm did log the request ...
    assert KEY not in caplog.text and "api_key='***'" in caplog.text   # ... without the key


async def test_missing_key_fails_before_any_request(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    rec = Recorder()
    llm = client(acompletion=rec, overrides={"mock_response": "unused"})
    with pytest.raises(AuthenticationFailed, match=f"{KEY_ENV} is not set"):
        await llm.complete(MSGS, phase="init", role="cake")
    assert rec.calls == []


def test_model_config_repr_is_safe(key_env):
    cfg = ModelConfig(name="deepseek/deepseek-chat", api_key_env=KEY_ENV,
                      api_base="https://user:hunter2@example.invalid/v1", aliases=("ds",))
    for text in (repr(cfg), str(cfg), cfg.model_dump_json()):
        assert KEY not in text
    assert "hunter2" not in repr(cfg) and "(set)" in repr(cfg) and KEY_ENV in repr(cfg)


def _exc(name, **kw):
    cls = getattr(litellm, name)
    base = {"message": "boom", "llm_provider": "openai", "model": "m"}
    base.update(kw)
    return cls(**base)


@pytest.mark.parametrize("name, ours, retryable", [
    ("RateLimitError", RateLimited, True),
    ("APIConnectionError", ServerError, True),
    ("InternalServerError", ServerError, True),
    ("ServiceUnavailableError", ServerError, True),
    ("Timeout", Timeout, True),
    ("AuthenticationError", AuthenticationFailed, False),
    ("BadRequestError", BadRequest, False),
    ("ContextWindowExceededError", ContextOverflow, False),
    ("NotFoundError", BadRequest, False),
])
def test_litellm_errors_map_to_our_classes(name, ours, retryable):
    err = map_exception(_exc(name), ModelConfig(name="m", api_key_env="SOME_KEY"))
    assert type(err) is ours and err.retryable is retryable


def test_unknown_exception_is_a_non_retryable_llm_error():
    err = map_exception(RuntimeError("weird"), ModelConfig(name="m"))
    assert type(err) is LLMError and not err.retryable and "RuntimeError" in str(err)


def test_litellm_keeps_no_state_between_event_loops(key_env):
    """litellm's global logging worker, bound to the first loop, is detached: a later
    `asyncio.run` (a CLI command, a test) finds nothing queued that could stall its shutdown."""
    import asyncio

    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    llm = client(overrides={"mock_response": "ok"})
    for _ in range(3):
        asyncio.run(llm.complete(MSGS, phase="init", role="cake"))
    assert GLOBAL_LOGGING_WORKER._queue is None and GLOBAL_LOGGING_WORKER._worker_task is None
    assert llm.usage.total.calls == 3


async def test_server_without_usage_gets_counted_tokens_offline():
    llm = client("openai/qwen2.5-coder", api_key_env=None, api_base="http://127.0.0.1:8000/v1")
    reply = llm._reply(MSGS, KERNEL_REPLY, "stop", 0, 0)       # a reply that carried no usage
    assert reply.tokens_estimated and reply.prompt_tokens > 5 and reply.completion_tokens > 20
    from copilot.llm.client import CallContext
    llm.usage.record(reply, CallContext("init", "cake"))
    assert "estimated" in llm.usage.report()


async def test_missing_provider_key_fails_at_once_naming_its_usual_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rec = Recorder()
    llm = LiteLLMClient(ModelConfig(name="gpt-4o-mini"), retry=RetryPolicy.immediate(),
                        acompletion=rec)
    with pytest.raises(AuthenticationFailed, match="OPENAI_API_KEY is not set"):
        await llm.complete(MSGS, phase="init", role="cake")
    assert rec.calls == []


def test_missing_credentials_reported_as_a_server_error_is_an_authentication_failure():
    exc = _exc("InternalServerError", message="OpenAIException - Missing credentials. Please pass "
                                              "an `api_key`")
    err = map_exception(exc, ModelConfig(name="openai/x", api_key_env="X_KEY"))
    assert type(err) is AuthenticationFailed and not err.retryable and "X_KEY" in str(err)
