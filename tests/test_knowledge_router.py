"""The pattern router: proto category first, then what the golden graph shows."""

from __future__ import annotations

import dataclasses
import types

import pytest
import torch
import torch.nn.functional as F

from copilot.tasks import load_task
from knowledge import assemble, route
from knowledge.router import FALLBACK_ID, classify_trace, normalise_patterns, route_task, trace_golden

EXPECTED = {
    "sigmoid": "elementwise", "gelu": "elementwise", "leaky_relu": "elementwise",
    "reduce_sum": "reduction", "reduce_max": "reduction", "argmax": "reduction",
    "rms_norm": "normalization", "layer_norm": "normalization", "group_norm": "normalization",
    "softmax": "softmax", "log_softmax": "softmax",
    "add": "broadcast", "mul": "broadcast",
    "bias_gelu": "fusion", "swiglu": "fusion",
}


def _task(name):
    return load_task(name)


@pytest.mark.parametrize("name,pattern", sorted(EXPECTED.items()))
def test_builtin_tasks_route_to_their_pattern_first(name, pattern):
    pats = route(_task(name))
    assert pats[0] == pattern
    assert len(pats) == len(set(pats))


@pytest.mark.parametrize("name,pattern", [("sigmoid", "elementwise"), ("reduce_sum", "reduction"),
                                          ("rms_norm", "normalization"), ("softmax", "softmax"),
                                          ("bias_gelu", "fusion"), ("layer_norm", "normalization")])
def test_golden_graph_alone_finds_the_pattern(name, pattern):
    task = dataclasses.replace(_task(name), category="")
    assert pattern in route(task)


def test_broadcast_is_seen_in_the_golden_of_a_bias_add():
    task = dataclasses.replace(_task("bias_gelu"), category="")
    pats = route(task)
    assert pats[0] == "fusion" and "broadcast" in pats


def test_trace_classification_on_plain_functions():
    x = torch.rand(4, 8)
    assert classify_trace(trace_golden(torch.sigmoid, [x])) == ["elementwise"]
    assert classify_trace(trace_golden(lambda t: torch.softmax(t, -1), [x]))[0] == "softmax"
    assert classify_trace(trace_golden(lambda t: t.sum(-1), [x])) == ["reduction"]
    assert classify_trace(trace_golden(lambda t, w: F.layer_norm(t, (8,), w), [x, torch.rand(8)]))[0] \
        == "normalization"
    pats = classify_trace(trace_golden(lambda a, b: F.gelu(a * b) + 1, [x, torch.rand(8)]))
    assert pats[0] == "fusion" and "broadcast" in pats
    assert classify_trace(trace_golden(lambda a, b: a + b, [x, torch.rand(8)])) == ["broadcast"]


def test_failing_golden_falls_back_to_the_category():
    class T:
        category = "norm"
        cases = [types.SimpleNamespace(shapes=[(4, 8)], dtypes=["float32"], attrs={})]
        attrs = []

        @staticmethod
        def golden(x):
            raise RuntimeError("boom")

    routed = route_task(T())
    assert routed.patterns == ["normalization"]
    assert [n["id"] for n in routed.notes] == [FALLBACK_ID]
    assert "RuntimeError: boom" in routed.notes[0]["message"]


def test_the_router_fallback_is_logged_and_reaches_the_slice(caplog):
    class T:
        name = "mystery"
        category = ""
        cases = []
        attrs = []

        @staticmethod
        def golden(x):
            raise RuntimeError("boom")

    with caplog.at_level("WARNING", logger="knowledge.router"):
        s = assemble(T(), "init")
    assert s.patterns == ["elementwise"]
    assert [n["id"] for n in s.notes] == [FALLBACK_ID, FALLBACK_ID]
    assert "no sample inputs" in s.notes[0]["message"]
    assert "elementwise is a guess" in s.notes[-1]["message"]
    assert any("routing mystery" in r.getMessage() for r in caplog.records)
    assert "Note: neither a known category" in s.render()
    assert s.to_json()["notes"] == s.notes


def test_a_task_routed_with_evidence_has_no_notes():
    routed = route_task(_task("softmax"))
    assert routed.patterns[0] == "softmax" and routed.notes == []
    assert "notes" not in assemble(_task("softmax"), "init").to_json()


def test_unknown_everything_defaults_to_elementwise():
    class T:
        category = "exotic"
        golden = None

    routed = route_task(T())
    assert routed.patterns == ["elementwise"] and routed.notes[0]["id"] == FALLBACK_ID


def test_pattern_names_pass_through_and_unknown_ones_are_rejected():
    assert route("softmax") == ["softmax"]
    assert normalise_patterns(["reduction", "fusion"]) == ["reduction", "fusion"]
    with pytest.raises(ValueError, match="unknown pattern"):
        normalise_patterns(["sorting"])


def test_convolution_and_attention_goldens_route_to_their_patterns():
    """A golden with aten.convolution routes to conv; two products around a softmax to attention
    (before matmul); each pattern's slice carries its cards and a vector task's does not."""
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures"
    conv = route(load_task(str(fixtures / "lowering_conv" / "lw_conv")))
    attn = route(load_task(str(fixtures / "lowering_attention" / "lw_attention")))
    assert conv[0] == "conv"
    assert "attention" in attn and attn.index("attention") < attn.index("matmul")
    conv_cards = {c.id for c in assemble(conv, "init").cards}
    attn_cards = {c.id for c in assemble(attn, "init").cards}
    assert {"L1.conv-semantics", "L3.conv-tiling", "L5.conv-lw_conv"} <= conv_cards
    assert {"L1.attention-semantics", "L3.attention-tiling", "L5.attention-lw_attention"} <= attn_cards
    vector = {c.id for c in assemble(["elementwise"], "init").cards}
    assert not vector & {"L1.conv-semantics", "L1.attention-semantics", "L3.conv-tiling"}
