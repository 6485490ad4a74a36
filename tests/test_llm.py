"""The LLM client interface through the scripted fake: retries, budgets, accounting, events."""

from __future__ import annotations

import json
import random

import pytest

from copilot.events import LLMCall
from copilot.llm import (Accounting, AuthenticationFailed, Budget, BudgetExceeded, ContextOverflow,
                         RateLimited, RetryPolicy, ServerError, redact)
from tests.fakes.fake_llm import Reply, ScriptedLLM, ScriptExhausted
from tests.fakes.network import no_network  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("no_network")

MSGS = [{"role": "system", "content": "You write AscendC kernels."},
        {"role": "user", "content": "Write add_custom."}]
KERNEL = 'extern "C" __global__ __aicore__ void add_custom(GM_ADDR x) {}\n'


class Sink:
    def __init__(self):
        self.events = []

    def emit(self, event):
        self.events.append(event)


class Sleeps:
    """An injected sleep that records the delays instead of waiting."""

    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def policy(sleeps: Sleeps, attempts: int = 5) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay_s=1.0, max_delay_s=30.0, jitter=0.25,
                       sleep=sleeps, rng=random.Random(7))


async def test_rate_limit_is_retried_with_backoff_then_succeeds():
    sink, sleeps = Sink(), Sleeps()
    llm = ScriptedLLM([RateLimited("429 slow down"), ServerError("503 overloaded"),
                       Reply(KERNEL, prompt_tokens=100, completion_tokens=40, cost_usd=0.01)],
                      sink=sink, retry=policy(sleeps))
    reply = await llm.complete(MSGS, phase="init", role="cake")
    assert reply.text == KERNEL
    assert len(llm.prompts) == 3
    assert len(sleeps.delays) == 2
    assert 0.75 <= sleeps.delays[0] <= 1.25 and 1.5 <= sleeps.delays[1] <= 2.5   # doubling, jittered
    calls = [e for e in sink.events if isinstance(e, LLMCall)]
    assert [c.ok for c in calls] == [False, False, True]
    assert calls[0].error.startswith("RateLimited: 429 slow down")
    assert llm.usage.total.calls == 3 and llm.usage.total.failed == 2
    assert llm.usage.total.cost_usd == pytest.approx(0.01)


async def test_retries_stop_after_max_attempts_and_say_so():
    sleeps = Sleeps()
    llm = ScriptedLLM([RateLimited("429")] * 3 + [Reply("late")], retry=policy(sleeps, attempts=3))
    with pytest.raises(RateLimited) as info:
        await llm.complete(MSGS, phase="init", role="cake")
    assert "gave up after 3 attempts" in str(info.value)
    assert len(sleeps.delays) == 2 and llm.remaining == 1


async def test_retry_after_hint_is_honoured():
    sleeps = Sleeps()
    llm = ScriptedLLM([RateLimited("429", retry_after=10.0), Reply("ok")], retry=policy(sleeps))
    await llm.complete(MSGS, phase="init", role="cake")
    assert 7.5 <= sleeps.delays[0] <= 12.5


@pytest.mark.parametrize("error", [AuthenticationFailed("rejected the key in $DEEPSEEK_API_KEY"),
                                   ContextOverflow("prompt too long")])
async def test_non_retryable_errors_fail_on_the_first_attempt(error):
    sink, sleeps = Sink(), Sleeps()
    llm = ScriptedLLM([error, Reply("never reached")], sink=sink, retry=policy(sleeps))
    with pytest.raises(type(error)):
        await llm.complete(MSGS, phase="init", role="cake")
    assert sleeps.delays == [] and len(llm.prompts) == 1 and llm.remaining == 1
    assert [e.ok for e in sink.events] == [False]


async def test_usd_budget_stops_the_next_call_and_reports_spent_vs_cap():
    llm = ScriptedLLM([Reply("a", cost_usd=0.003)] * 3, budget=Budget(max_usd=0.005))
    await llm.complete(MSGS, phase="init", role="cake")
    await llm.complete(MSGS, phase="mutation", role="cake-partial")     # starts under the cap
    with pytest.raises(BudgetExceeded) as info:
        await llm.complete(MSGS, phase="mutation", role="cake-partial")
    msg = str(info.value)
    assert "$0.0060" in msg and "$0.0050" in msg
    assert info.value.spent_usd == pytest.approx(0.006) and info.value.max_usd == 0.005
    assert len(llm.prompts) == 2 and llm.remaining == 1                  # the third was never sent


async def test_token_budget_stops_a_call():
    llm = ScriptedLLM([Reply("a", prompt_tokens=800, completion_tokens=300)] * 2,
                      budget=Budget(max_tokens=1000))
    await llm.complete(MSGS, phase="init", role="cake")
    with pytest.raises(BudgetExceeded, match=r"1,100 tokens of the 1,000 cap"):
        await llm.complete(MSGS, phase="init", role="cake")


async def test_accounting_totals_per_phase_role_and_round():
    llm = ScriptedLLM([Reply("a", prompt_tokens=1000, completion_tokens=200, cost_usd=0.02),
                       Reply("b", prompt_tokens=300, completion_tokens=100, cost_usd=0.005),
                       Reply("c", prompt_tokens=300, completion_tokens=50, cost_usd=0.004),
                       RateLimited("429"),
                       Reply("d", prompt_tokens=100, completion_tokens=20, cost_usd=0.001)])
    await llm.complete(MSGS, phase="init", role="cake", round=1)
    await llm.complete(MSGS, phase="mutation", role="cake-partial", round=2, candidate_id="r2-c1")
    await llm.complete(MSGS, phase="mutation", role="cake-partial", round=2, candidate_id="r2-c2")
    await llm.complete(MSGS, phase="tuning", role="cake-partial", round=3)
    u = llm.usage
    assert (u.total.calls, u.total.failed, u.total.tokens) == (5, 1, 2070)
    assert u.total.cost_usd == pytest.approx(0.030)
    assert u.by_phase["init"].prompt_tokens == 1000
    assert u.by_phase["mutation"].tokens == 750 and u.by_phase["mutation"].calls == 2
    assert u.by_phase["tuning"].calls == 2 and u.by_phase["tuning"].failed == 1
    assert u.by_role["cake"].cost_usd == pytest.approx(0.02)
    assert u.by_role["cake-partial"].tokens == 870
    assert sorted(u.by_round) == [1, 2, 3] and u.by_round[2].cost_usd == pytest.approx(0.009)
    assert "mutation" in u.report() and "total" in u.report()


async def test_snapshot_restores_totals_and_the_budget_keeps_counting():
    llm = ScriptedLLM([Reply("a", prompt_tokens=10, completion_tokens=5, cost_usd=0.4)],
                      budget=Budget(max_usd=0.5))
    await llm.complete(MSGS, phase="init", role="cake", round=1)
    snap = json.loads(json.dumps(llm.usage.snapshot()))             # through the session store
    resumed = Accounting(budget=Budget(max_usd=0.5))
    resumed.restore(snap)
    assert resumed.snapshot() == llm.usage.snapshot()
    resumed.check_budget()                                           # 0.4 < 0.5: may continue
    llm2 = ScriptedLLM([Reply("b", cost_usd=0.2), Reply("c")], usage=resumed)
    await llm2.complete(MSGS, phase="mutation", role="cake-partial", round=2)
    with pytest.raises(BudgetExceeded):
        await llm2.complete(MSGS, phase="mutation", role="cake-partial", round=2)
    assert resumed.by_round[1].calls == 1 and resumed.by_round[2].calls == 1


async def test_stream_yields_chunks_then_the_final_reply_and_records_it():
    sink = Sink()
    llm = ScriptedLLM([RateLimited("429"),
                       Reply(KERNEL, chunks=["extern ", '"C" ', KERNEL[11:]], prompt_tokens=50,
                             completion_tokens=20, cost_usd=0.001)], sink=sink)
    items = [x async for x in llm.stream(MSGS, phase="init", role="cake", candidate_id="r1-c1")]
    *chunks, final = items
    assert "".join(chunks) == KERNEL == final.text
    assert final.prompt_tokens == 50 and final.latency_s >= 0
    assert [e.ok for e in sink.events] == [False, True]            # retried before the first chunk
    assert llm.prompts[-1].streamed and llm.prompts[-1].candidate_id == "r1-c1"


async def test_stream_failure_after_text_is_raised_not_retried():
    llm = ScriptedLLM([Reply("partial", chunks=["par", "tial"], fail_mid_stream=ServerError("reset")),
                       Reply("unused")])
    got = []
    with pytest.raises(ServerError):
        async for x in llm.stream(MSGS, phase="init", role="cake"):
            got.append(x)
    assert got == ["par", "tial"] and llm.remaining == 1
    assert llm.usage.total.failed == 1


async def test_fake_records_prompts_with_their_context():
    llm = ScriptedLLM([Reply("x"), lambda p: Reply(f"echo {p.role}")])
    await llm.complete(MSGS, phase="repair", role="cake", round=2, candidate_id="r2-c4",
                       max_tokens=512, temperature=0.2)
    r = await llm.complete(MSGS, phase="mutation", role="cake-partial")
    assert r.text == "echo cake-partial"
    p = llm.prompts[0]
    assert (p.phase, p.role, p.round, p.candidate_id, p.max_tokens) == ("repair", "cake", 2, "r2-c4", 512)
    assert p.system == "You write AscendC kernels." and p.user == "Write add_custom."
    with pytest.raises(ScriptExhausted, match="call 3 .*phase=init"):
        await llm.complete(MSGS, phase="init", role="cake")


def test_redact_removes_key_shaped_text():
    text = ("Incorrect API key provided: sk-test-abcdef123456. headers: {'Authorization': "
            "'Bearer sk-proj-zzzzzzzz'} api_key=hunter2hunter2 x-api-key: abc123456789")
    out = redact(text, secrets=["hunter2hunter2"])
    for secret in ("abcdef123456", "zzzzzzzz", "hunter2", "abc123456789"):
        assert secret not in out
    assert "Incorrect API key provided" in out


async def test_concurrent_calls_keep_their_own_context():
    import asyncio

    llm = ScriptedLLM([Reply("a"), Reply("b"), Reply("c")], retry=RetryPolicy.immediate())
    await asyncio.gather(*(llm.complete(MSGS, phase="mutation", role="cake-partial", round=2,
                                        candidate_id=f"r2-c{i}") for i in range(3)))
    assert sorted(p.candidate_id for p in llm.prompts) == ["r2-c0", "r2-c1", "r2-c2"]
    assert llm.usage.by_round[2].calls == 3


def test_authentication_failure_is_bad_input_for_the_cli():
    assert AuthenticationFailed("x").exit_code == 2
