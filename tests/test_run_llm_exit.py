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
