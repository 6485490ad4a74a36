"""The pattern router: proto category first, then what the golden graph shows."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from knowledge import route
from knowledge.router import classify_trace, normalise_patterns, trace_golden

EXPECTED = {
    "sigmoid": "elementwise", "gelu": "elementwise", "leaky_relu": "elementwise",
    "reduce_sum": "reduction", "reduce_max": "reduction", "argmax": "reduction",
    "rms_norm": "normalization", "layer_norm": "normalization", "group_norm": "normalization",
    "softmax": "softmax", "log_softmax": "softmax",
    "add": "broadcast", "mul": "broadcast",
    "bias_gelu": "fusion", "swiglu": "fusion",
}


def _task(name):
    tasks = pytest.importorskip("copilot.tasks")
    try:
        return tasks.load_task(name)
    except Exception as exc:  # a built-in not landed yet
        pytest.skip(f"built-in task {name} not available: {exc}")


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
        cases = []
        attrs = []

        @staticmethod
        def golden(x):
            raise RuntimeError("boom")

    assert route(T()) == ["normalization"]


def test_unknown_everything_defaults_to_elementwise():
    class T:
        category = "exotic"
        golden = None

    assert route(T()) == ["elementwise"]


def test_pattern_names_pass_through_and_unknown_ones_are_rejected():
    assert route("softmax") == ["softmax"]
    assert normalise_patterns(["reduction", "fusion"]) == ["reduction", "fusion"]
    with pytest.raises(ValueError, match="unknown pattern"):
        normalise_patterns(["sorting"])
