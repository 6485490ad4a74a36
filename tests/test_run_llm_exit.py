"""`cannpilot run` with an LLM agent leaves no HTTP session open: litellm's cached clients (the
OpenAI SDK's included, which litellm's own cleanup skips) are closed in the run's event loop, so
aiohttp prints no "Unclosed client session" / "Unclosed connector" when they are collected."""

from __future__ import annotations

import gc
import logging

from tests.conftest import VALID_TASK
from tests.fakes.openai_server import openai_server  # noqa: F401  (fixture)


def test_run_with_an_llm_agent_closes_its_http_clients(openai_server, cli, tmp_path, monkeypatch,  # noqa: F811
                                                       caplog):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.yaml").write_text(
        "models:\n  - name: openai/fake\n"
        f"    api_base: {openai_server.api_base}\n    aliases: [fake]\n    timeout_s: 60\n", encoding="utf-8")
    monkeypatch.setenv("CANNPILOT_CONFIG_DIR", str(cfg))
    monkeypatch.setenv("CANNPILOT_STORE", str(tmp_path / "store.sqlite"))
    caplog.set_level(logging.ERROR, logger="asyncio")
    code, out, err = cli("run", "--task", str(VALID_TASK), "--agent", "fake", "--rounds", "1",
                         "--variants", "1", "--json")
    assert code == 0, err
    assert openai_server.requests, "the variant's request never reached the server"
    from copilot.llm.litellm_client import litellm

    # what an exit (or litellm's hourly cache eviction) does: the cached clients are collected
    litellm.in_memory_llm_clients_cache.flush_cache()
    gc.collect()
    assert "Unclosed" not in err + caplog.text


async def test_a_client_litellm_evicts_mid_session_is_closed_by_the_session_not_the_collector(
        openai_server, caplog):                                                          # noqa: F811
    """litellm drops a cached client after an hour (its TTL) without closing it: a relay session of
    hours printed "Unclosed client session" when the dropped client was collected."""
    from copilot.llm.litellm_client import LiteLLMClient, litellm
    from copilot.llm.models import ModelConfig

    caplog.set_level(logging.ERROR, logger="asyncio")
    llm = LiteLLMClient(ModelConfig(name="openai/fake", api_base=openai_server.api_base, api_key_env=None))
    msgs = [{"role": "user", "content": "hi"}]
    await llm.complete(msgs, phase="init", role="cake")
    cache = litellm.in_memory_llm_clients_cache
    first = [c for c in cache.cache_dict.values() if type(c).__name__ == "AsyncOpenAI"]
    assert first
    for key in list(cache.ttl_dict):            # an hour later: every cached client has expired
        cache.ttl_dict[key] = 0.0
    await llm.complete(msgs, phase="init", role="cake")
    assert not any(c is f for c in cache.cache_dict.values() for f in first)     # litellm made a new one
    del first
    gc.collect()
    assert "Unclosed" not in caplog.text
    await llm.aclose()
    cache.flush_cache()
    gc.collect()
    assert "Unclosed" not in caplog.text
