"""The lowering's tracer (copilot/lowering/tracer.py): the graphs make_fx gave, on storage-less
tensors, without importing torch._dynamo."""

from __future__ import annotations

import operator
import subprocess
import sys
import textwrap

import pytest
import torch
from torch._subclasses.fake_tensor import DataDependentOutputException, DynamicOutputShapeException

from copilot.lowering.tracer import trace_graph

F32 = torch.float32


def _calls(gm) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def _output(gm):
    return next(n for n in gm.graph.nodes if n.op == "output").args[0]


def test_lowering_does_not_import_dynamo():
    # (sympy is imported: torch's Python meta kernels compute type promotion with it)
    code = textwrap.dedent("""
        import sys
        from copilot.lowering import lower
        from copilot.lowering.capture import capture
        from copilot.tasks import load_task
        task = load_task("exp")
        capture(task)
        assert lower(task).source
        print(sorted(m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_tensor_made_in_the_golden_is_a_lifted_constant():
    gm = trace_graph(lambda x: x * torch.log(torch.tensor(2.0, dtype=x.dtype, device=x.device)), [((4, 8), F32)])
    attrs = [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert [n.target for n in attrs] == ["_tensor_constant0"]
    assert float(gm._tensor_constant0) == 2.0
    lift = next(n for n in gm.graph.nodes if str(n.target) == "aten.lift_fresh_copy.default")
    assert lift.args == (attrs[0],)
    assert _calls(gm) == ["aten.lift_fresh_copy.default", "aten.log.default", "aten.mul.Tensor"]


def test_a_one_element_constant_has_a_known_value():
    gm = trace_graph(lambda x: x * torch.tensor(3.0).item(), [((5,), F32)])
    mul = next(n for n in gm.graph.nodes if str(n.target) == "aten.mul.Tensor")
    assert mul.args[1] == 3.0


def test_an_in_place_op_rebinds_its_tensor():
    def golden(x):
        y = x.clone()
        y.add_(1.0)
        return y.mul(2.0), y

    gm = trace_graph(golden, [((3, 4), F32)])
    add_ = next(n for n in gm.graph.nodes if str(n.target) == "aten.add_.Tensor")
    mul, y = _output(gm)
    assert y is add_ and mul.args[0] is add_


def test_a_multi_output_op_is_its_node_and_getitems():
    gm = trace_graph(lambda x: torch.max(x, dim=-1), [((6, 10), F32)])
    op = next(n for n in gm.graph.nodes if str(n.target) == "aten.max.dim")
    items = [n for n in gm.graph.nodes if n.target is operator.getitem]
    assert [n.args for n in items] == [(op, 0), (op, 1)]
    assert tuple(_output(gm)) == tuple(items)
    assert [(tuple(v.shape), v.dtype) for v in op.meta["val"]] == [((6,), F32), ((6,), torch.int64)]


def test_list_arguments_and_list_results():
    def golden(x, y):
        a, b = torch.split(torch.cat([x, y], 0), 2)
        return a + b

    gm = trace_graph(golden, [((2, 3), F32), ((2, 3), F32)])
    x, y = [n for n in gm.graph.nodes if n.op == "placeholder"]
    cat = next(n for n in gm.graph.nodes if str(n.target) == "aten.cat.default")
    assert list(cat.args[0]) == [x, y]
    split = next(n for n in gm.graph.nodes if str(n.target) == "aten.split.Tensor")
    assert isinstance(split.meta["val"], list) and len(split.meta["val"]) == 2
    assert [n.args for n in gm.graph.nodes if n.target is operator.getitem] == [(split, 0), (split, 1)]


def test_inputs_have_no_storage_and_report_the_cpu():
    seen = {}

    def golden(x):
        seen["device"] = x.device.type
        return torch.zeros(x.shape[0], device=x.device) + x.sum(-1)

    gm = trace_graph(golden, [((65536, 1024), F32)])      # 256 MiB were it allocated
    assert seen["device"] == "cpu"
    zeros = next(n for n in gm.graph.nodes if str(n.target) == "aten.zeros.default")
    assert zeros.kwargs["device"] == torch.device("cpu")
    assert tuple(_output(gm).meta["val"].shape) == (65536,)


def test_an_in_place_shape_change_is_refused():
    with pytest.raises(RuntimeError, match="in place"):
        trace_graph(lambda x: x.clone().unsqueeze_(0), [((3, 4), F32)])


@pytest.mark.parametrize("golden, error", [
    (lambda x: x * x.sum().item(), DataDependentOutputException),
    (lambda x: x + 1 if x.sum() > 0 else x, DataDependentOutputException),
    (lambda x: torch.nonzero(x), DynamicOutputShapeException),
    (lambda x: torch.unique(x), DynamicOutputShapeException),
    (lambda x: x[x > 0], DynamicOutputShapeException),
])
def test_a_value_dependent_golden_fails_as_a_fake_tensor_trace_does(golden, error):
    with pytest.raises(error):
        trace_graph(golden, [((4, 4), F32)])


def test_the_graph_is_make_fx_s():
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch._subclasses.fake_tensor import FakeTensorMode

    def golden(x, w, eps=1e-6):
        h = x.to(F32) * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        h.mul_(w)
        v, i = torch.topk(h, 2, dim=-1)
        parts = torch.chunk(h, 2, dim=-1)
        base = torch.tensor(0.5, dtype=h.dtype, device=h.device)
        return torch.cat([parts[0], parts[1] * base], -1).view(-1), v, i.to(torch.int32)

    specs = [((4, 16), F32), ((16,), F32)]
    with FakeTensorMode():
        fake = [torch.zeros(s, dtype=d) for s, d in specs]
    def fn(*xs):        # as capture.py calls it
        return golden(*xs)

    with torch.no_grad():
        want = make_fx(fn, tracing_mode="fake")(*fake)
        got = trace_graph(fn, specs)
    assert got.code == want.code
    shapes = [(n.name, tuple(n.meta["val"].shape)) for n in got.graph.nodes
              if isinstance(n.meta.get("val"), torch.Tensor)]
    assert shapes == [(n.name, tuple(n.meta["val"].shape)) for n in want.graph.nodes
                      if isinstance(n.meta.get("val"), torch.Tensor)]
