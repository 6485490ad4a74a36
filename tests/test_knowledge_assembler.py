"""Phase-differentiated assembly: what each phase holds, token counts, budgets, and the
init/tuning ratio on five representative tasks."""

from __future__ import annotations

import pytest

from copilot.tasks import load_task
from knowledge import assemble
from knowledge.tokens import count_tokens, tokenizer_name

FIVE = {"sigmoid": "elementwise", "reduce_sum": "reduction", "rms_norm": "normalization",
        "softmax": "softmax", "bias_gelu": "fusion"}


def _task(name):
    return load_task(name)


@pytest.mark.parametrize("name", sorted(FIVE))
def test_tuning_slice_is_at_most_an_eighth_of_init(name):
    task = _task(name)
    init = assemble(task, "init")
    tuning = assemble(task, "tuning")
    assert init.patterns[0] == FIVE[name]
    assert tuning.total_tokens * 8 <= init.total_tokens, (tuning.total_tokens, init.total_tokens)


def test_init_holds_every_level_and_the_exemplar_in_full():
    sl = assemble(["normalization"], "init")
    levels = {c.level for c in sl.cards}
    assert levels == {"L0", "L1", "L2", "L3", "L4", "L5"}
    ex = [c for c in sl.cards if c.level == "L5"]
    assert [c.id for c in ex] == ["L5.normalization-rms_norm"] and ex[0].mode == "full"
    assert "rms_norm_custom" in ex[0].text
    assert all(c.mode == "summary" for c in sl.cards if c.level in ("L0", "L1"))
    # L4 cards are those of the APIs the exemplar uses
    l4 = {c.id for c in sl.cards if c.level == "L4"}
    assert "L4.ReduceSum" in l4 and "L4.Compare-Select" not in l4
    # presented by level, mental model first, exemplar last
    order = [c.level for c in sl.cards]
    assert order == sorted(order)


def test_mental_model_cards_of_another_pattern_stay_out():
    """L0/L1 cards are for every task unless they name their patterns: the cube's are for matmuls."""
    vector = {c.id for c in assemble(["elementwise"], "init").cards}
    cube = {c.id for c in assemble(["matmul"], "init").cards}
    assert "L0.cube-unit" in cube and "L1.matmul-api-semantics" in cube
    assert "L0.cube-unit" not in vector and "L1.matmul-api-semantics" not in vector
    assert {"L0.pipes", "L1.queue-protocol"} <= vector & cube


def test_mutation_is_compact_l2_to_l4():
    sl = assemble(["elementwise"], "mutation")
    assert {c.level for c in sl.cards} == {"L2", "L3", "L4"}
    assert all(c.mode == "summary" and "\n" not in c.text for c in sl.cards)
    assert sl.total_tokens < assemble(["elementwise"], "init").total_tokens / 3


def test_repair_holds_the_exemplar_and_the_diagnostics_cards():
    from copilot.diagnostics import Diagnostic

    diags = [Diagnostic(id="L2.DATACOPY_32B", severity="warning", message="m", api="DataCopy"),
             {"id": "PREC.localized_outlier"}, "L4.API_SIGNATURE", Diagnostic(id="GEN.UNKNOWN", severity="error",
                                                                               message="?")]
    sl = assemble(["softmax"], "repair", diagnostics=diags)
    ids = sl.ids
    assert "L5.softmax-softmax" in ids
    for cid in ("L2.DATACOPY_32B", "PREC.localized_outlier", "L4.API_SIGNATURE", "L4.DataCopy"):
        assert cid in ids
    full = {c.id: c for c in sl.cards}
    assert full["L2.DATACOPY_32B"].mode == "full" and full["L2.DATACOPY_32B"].reason == "diagnostic L2.DATACOPY_32B"
    assert not any(c.level == "L0" for c in sl.cards)
    bare = assemble(["softmax"], "repair")
    assert bare.ids == ["L5.softmax-softmax"]


def test_tuning_is_l3_strategy_lines_only():
    sl = assemble(["reduction"], "tuning")
    assert sl.cards and all(c.level == "L3" and c.mode == "strategy" for c in sl.cards)
    assert "L3.reduction-strategies" in sl.ids
    assert "L3.gm-512b-alignment" not in sl.ids  # an elementwise-only strategy
    text = sl.render()
    assert text.startswith("## Tiling strategies to try")


def test_every_card_carries_tokens_and_a_reason():
    for phase in ("init", "mutation", "repair", "tuning"):
        sl = assemble(["broadcast"], phase, diagnostics=["L2.UB_CAPACITY"])
        assert sl.total_tokens == sum(c.tokens for c in sl.cards) > 0
        for c in sl.cards:
            assert c.tokens == count_tokens(c.text) and c.reason
        js = sl.to_json()
        assert js["phase"] == phase and js["total_tokens"] == sl.total_tokens
        assert set(js["cards"][0]) == {"id", "level", "tokens", "reason"}


def test_budget_downgrades_then_drops_cards():
    full = assemble(["softmax"], "init")
    sl = assemble(["softmax"], "init", budget_tokens=3000)
    assert sl.total_tokens <= 3000 < full.total_tokens
    assert any("budget" in c.reason for c in sl.cards) or sl.dropped
    tiny = assemble(["softmax"], "init", budget_tokens=100)
    assert tiny.total_tokens <= 100 and tiny.dropped


def test_chip_filters_cards():
    ids_910 = assemble(["elementwise"], "init", chip="910B2").ids
    ids_310 = assemble(["elementwise"], "init", chip="310P").ids
    assert "L4.DataCopyPad" in ids_910 and "L4.DataCopyPad" not in ids_310


def test_bad_phase_is_rejected():
    with pytest.raises(ValueError, match="unknown phase"):
        assemble(["softmax"], "deploy")


def test_tokenizer_works_offline_and_has_a_fallback(monkeypatch):
    assert tokenizer_name() in ("tiktoken:cl100k_base", "estimate:chars/4")
    n = count_tokens("DataCopyPad copies 1021 floats")
    assert 3 <= n <= 20
    import knowledge.tokens as tk

    monkeypatch.setattr(tk, "_tiktoken_encoding", lambda: None)
    tk.count_tokens.cache_clear()
    try:
        assert tk.count_tokens("abcdefgh" * 10) == 20
        assert tk.tokenizer_name() == "estimate:chars/4"
    finally:
        tk.count_tokens.cache_clear()


def test_tiktoken_uses_the_bpe_file_shipped_with_litellm():
    import knowledge.tokens as tk

    d = tk._litellm_tokenizer_dir()
    assert d is not None
    assert tk._tiktoken_encoding() is not None


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_configured_model_counts_with_litellm():
    import knowledge.tokens as tk

    n = tk.count_tokens("ReduceSum needs a tmp buffer", model="gpt-4o")
    assert isinstance(n, int) and n > 0
    assert tk.tokenizer_name("gpt-4o") == "litellm:gpt-4o"


def test_exemplar_for_a_chip_it_was_not_written_for_says_so():
    sl = assemble(["softmax"], "repair", chip="310P")
    assert sl.ids == ["L5.softmax-softmax"] and "adapt it to 310P" in sl.cards[0].reason


def test_compact_cast_keeps_the_pair_rows_of_the_task_dtypes():
    from copilot.tasks import load_task

    def cast_text(task, chip):
        return next(c.text for c in assemble(task, "init", chip).cards if c.id == "L4.Cast")

    a2 = cast_text(load_task("sigmoid"), "910B2")             # fp16, bf16, fp32 (and float, computed in)
    assert "| half | float: NONE · int32, int16: F5" in a2 and "| bf16 | float: NONE · int32: F5 |" in a2
    assert "| int64 |" not in a2 and "**half**" not in a2     # other sources and the 950 table stay out
    a5 = cast_text(load_task("sigmoid"), "950PR")
    assert "| bf16 | float: NONE · **half**, int32: F5 |" in a5 and "Ascend 950" in a5
    assert "| bf16 |" not in cast_text("elementwise", "910B2")  # no task, no dtypes: the plain compact form
