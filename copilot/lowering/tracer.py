"""Trace a golden to an aten-level `torch.fx.GraphModule` on storage-less tensors.

Every aten op that reaches the dispatcher's Python key while the golden runs is recorded, in the
graph form `make_fx` gives (the rest of the lowering reads that form): a `placeholder` per input
(`arg0_1`, ...), a `call_function` node per op with the `OpOverload` as target, tensor arguments
replaced by their nodes, non-tensor arguments kept; an op that returns a tuple or list is its node
plus one `operator.getitem` node per element; a tensor made outside the trace (`torch.tensor(base)`
in the golden) is a `_tensor_constant<i>` get_attr on the GraphModule, lifted by `lift_fresh_copy`;
an in-place op rebinds its tensor to the op's node; `node.meta["val"]` holds each value (shape and
dtype are what the lowering reads).

The traced tensors report device `cpu` (a golden may branch on `x.device`, or make a tensor on it)
and compute on `meta` tensors, so no case data is allocated: a 64M-element case costs what a small
one does. An op whose result depends on tensor values (`.item()`, `nonzero`, `unique`, `if t:`)
fails as a fake-tensor trace does (`DataDependentOutputException`, `DynamicOutputShapeException`),
except on one-element constants, whose values are known (`torch.tensor(base).item()`).

A trace imports no `torch._dynamo` or `torch._inductor` (`make_fx` and `FakeTensorMode` import
both: ~1.5 s of CPU in a cold `cannpilot lower`; `copilot/dynamo_free.py` keeps torch's own
wrappers from importing them). sympy is imported: torch's Python meta kernels use it for type
promotion.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import torch
from torch._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException,
                                           FakeTensorMode, torch_decomp_decompositions)
from torch.utils._python_dispatch import autograd_would_have_decomposed
from torch.utils.weak import WeakTensorKeyDictionary

from copilot.dynamo_free import DynamoFreeMode

aten = torch.ops.aten
_CPU = torch.device("cpu")
_META = torch.device("meta")
CONSTANT_NUMEL_LIMIT = 1      # constants are propagated through ops only at this size (as make_fx)


class TraceTensor(torch.Tensor):
    """A tensor of the trace: reports device cpu, holds a storage-less meta tensor (`inner`)."""

    inner: torch.Tensor

    @staticmethod
    def __new__(cls, inner: torch.Tensor):
        t = torch.Tensor._make_wrapper_subclass(cls, inner.size(), strides=inner.stride(),
                                                storage_offset=inner.storage_offset(), dtype=inner.dtype,
                                                device=_CPU, requires_grad=False)
        t.inner = inner
        return t

    def __repr__(self, *, tensor_contents=None) -> str:
        return f"TraceTensor(shape={tuple(self.shape)}, dtype={self.dtype})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        return _compute(func, args, kwargs or {})      # outside a trace: values only


def _map(tree, f):
    """`f` on every leaf of nested lists, tuples and dicts (types kept)."""
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        return type(tree)(_map(x, f) for x in tree)
    if isinstance(tree, dict):
        return {k: _map(v, f) for k, v in tree.items()}
    return f(tree)


def _leaves(tree) -> list:
    out: list = []
    _map(tree, out.append)
    return out


def _unwrap(x):
    if isinstance(x, TraceTensor):
        return x.inner
    if isinstance(x, torch.Tensor):       # a tensor made outside the trace
        return x if x.device.type == "meta" else x.to("meta")
    if isinstance(x, torch.device) and x.type == "cpu":
        return _META
    return x


class _Recording(DynamoFreeMode):
    """Records every op into `graph`; runs it on the meta tensors.

    The trace holds its tensors weakly (a value's node, its known value): a factory's result that
    something else still referenced would be detached on its way back to the golden (`detach` in
    the graph), which make_fx's graphs do not have."""

    def __init__(self, graph: torch.fx.Graph, root: torch.nn.Module):
        super().__init__()
        self.graph, self.root = graph, root
        self.node_of = WeakTensorKeyDictionary()        # TraceTensor -> its current node
        self.constant_of = WeakTensorKeyDictionary()    # TraceTensor -> its known value
        self.qualname_of: dict[int, str] = {}           # id(outside tensor) -> get_attr name
        self.kept: list = []                            # keeps those outside tensors alive

    def bind(self, t: TraceTensor, node: torch.fx.Node) -> None:
        self.node_of[t] = node

    def constant_node(self, t: torch.Tensor) -> torch.fx.Node:
        """A get_attr of a tensor made outside the trace (one attr per tensor, a node per use)."""
        name = self.qualname_of.get(id(t))
        if name is None:
            i = 0
            while hasattr(self.root, f"_tensor_constant{i}"):
                i += 1
            name = f"_tensor_constant{i}"
            setattr(self.root, name, t)
            self.qualname_of[id(t)] = name
            self.kept.append(t)
        node = self.graph.create_node("get_attr", name)
        node.meta["val"] = TraceTensor(torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=_META))
        return node

    def arg(self, x):
        if isinstance(x, TraceTensor) and x in self.node_of:
            return self.node_of[x]
        if isinstance(x, torch.Tensor):
            return self.constant_node(x)
        return x

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat = _leaves((args, kwargs))
        if func not in (aten.size.default, aten.stride.default, aten.storage_offset.default) and \
                autograd_would_have_decomposed(func, flat):
            with self:
                r = func.decompose(*args, **kwargs)
                if r is not NotImplemented:
                    return r
        if func is aten.is_nonzero.default:       # `if t:` on a tensor
            with self:
                torch._check(args[0].numel() == 1,
                             lambda: "Boolean value of Tensor with more than one value is ambiguous")
                return (args[0] != 0).item()

        traced = [x for x in flat if isinstance(x, TraceTensor) and x in self.node_of]
        all_constant = all(x in self.constant_of for x in traced)
        if torch.Tag.data_dependent_output in func.tags:
            if all_constant:         # every input's value is known: compute it
                return func(*_map(args, self.value), **_map(kwargs, self.value))
            raise DataDependentOutputException(func)
        self._check_static_shape(func, args, kwargs)
        if func is aten.lift_fresh.default:       # the lifted tensor may be mutated: lift a copy
            func = aten.lift_fresh_copy.default

        node_args, node_kwargs = _map(args, self.arg), _map(kwargs, self.arg)
        out = _compute(func, args, kwargs)
        node = self.graph.create_node("call_function", func, node_args, node_kwargs,
                                      name=self.graph._target_to_str(func.overloadpacket.__name__))
        constant = None
        if func is aten.lift_fresh_copy.default and _numel(out) <= CONSTANT_NUMEL_LIMIT:
            constant = args[0].clone()
        elif torch.Tag.nondeterministic_seeded not in func.tags and all_constant and traced and \
                all(_numel(t) <= CONSTANT_NUMEL_LIMIT for t in _leaves(out) if isinstance(t, torch.Tensor)):
            constant = func(*_map(args, self.value), **_map(kwargs, self.value))
        self._track(out, node, constant)
        return out

    def value(self, x):
        """A known tensor's value (for constant propagation); other arguments as they are."""
        if isinstance(x, TraceTensor) and x in self.constant_of:
            return self.constant_of[x]
        return x

    @staticmethod
    def _check_static_shape(func, args, kwargs) -> None:
        """Refuse, as a fake-tensor trace does, an op whose output shape depends on values."""
        if torch.Tag.dynamic_output_shape not in func.tags:
            return
        if func is aten.index.Tensor:
            indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
            if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
                raise DynamicOutputShapeException(func)
            return
        if func is aten.repeat_interleave.Tensor and kwargs.get("output_size") is not None:
            return
        raise DynamicOutputShapeException(func)

    def _track(self, out, node: torch.fx.Node, constant) -> None:
        """Bind each output tensor to `node`, or to a getitem of it per element."""
        if isinstance(out, TraceTensor):
            self.bind(out, node)
            node.meta["val"] = _snapshot(out)
            if isinstance(constant, torch.Tensor):
                self.constant_of[out] = constant
        elif isinstance(out, (tuple, list)):
            node.meta["val"] = _map(out, _snapshot)
            for i, x in enumerate(out):
                item = self.graph.create_node("call_function", operator.getitem, (node, i), {})
                self._track(x, item, constant[i] if isinstance(constant, (tuple, list)) else None)


class _Computing(DynamoFreeMode):
    """Values only, for the ops inside a decomposition (`_compute`)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return _compute(func, args, kwargs or {})


def _compute(func, args, kwargs):
    """An op's result on TraceTensors: computed on their meta tensors (cpu factories made on meta),
    or by its Python decomposition where a fake-tensor trace prefers that (`_decomposition`); an
    input the op returns (in place) is returned as itself; an op without a meta kernel runs on
    zeros on the cpu (as a fake-tensor trace does)."""
    decomposition = _decomposition(func)
    if decomposition is not None:
        with _Computing():
            out = decomposition(*args, **kwargs)
        if len(func._schema.returns) > 1:      # as the dispatcher returns it: a tuple, or a list for Tensor[]
            return tuple(out)
        return list(out) if isinstance(out, (tuple, list)) else out
    margs, mkwargs = _map(args, _unwrap), _map(kwargs, _unwrap)
    if "device" in {a.name for a in func._schema.arguments if a.kwarg_only} and mkwargs.get("device") is None:
        mkwargs["device"] = _META
    try:
        if func in (aten.view.default, aten._unsafe_view.default):     # strides as a fake-tensor trace gives them
            out = torch._refs._reshape_view_helper(*margs, **mkwargs, allow_copy=False)
        else:
            out = func(*margs, **mkwargs)
    except NotImplementedError:
        if func.namespace not in ("aten", "prims"):
            raise
        out = _map(func(*_map(margs, _zeros), **_map(mkwargs, _cpu)), _unwrap)
    inputs = [x for x in _leaves((args, kwargs)) if isinstance(x, TraceTensor)]

    def wrap(x):
        if not isinstance(x, torch.Tensor):
            return x
        same = next((t for t in inputs if t.inner is x), None)
        if same is None:
            return TraceTensor(x)
        if same.shape != x.shape or same.stride() != x.stride():      # the wrapper's sizes are fixed
            raise RuntimeError(f"{func} changes a traced tensor's shape in place; the trace does not follow it")
        return same
    return _map(out, wrap)


def _decomposition(func):
    """The Python decomposition a fake-tensor trace computes an op's values with instead of its
    meta kernel, or None. It sees the tensors' cpu device: `native_batch_norm` in eval gives empty
    saved statistics on the cpu."""
    from torch._decomp import decomposition_table, meta_table

    if func not in meta_table and func not in FakeTensorMode._cpp_meta_supports_symint and \
            func in decomposition_table and torch_decomp_decompositions(func):
        return decomposition_table[func]
    return None


def _snapshot(x):
    """A value for `meta["val"]`: a TraceTensor of its own, so the trace holds no tensor it returns."""
    return TraceTensor(x.inner) if isinstance(x, TraceTensor) else x


def _numel(t) -> int:
    return t.numel() if isinstance(t, torch.Tensor) else 0


def _zeros(x):
    if isinstance(x, torch.Tensor) and x.device.type == "meta":
        return torch.zeros_like(x, device=_CPU)
    return x


def _cpu(x):
    return _CPU if isinstance(x, torch.device) and x.type == "meta" else x


def trace_graph(fn: Callable[..., Any], inputs: Sequence[tuple[Sequence[int], torch.dtype]]) -> torch.fx.GraphModule:
    """The graph of `fn(*tensors)`, one tensor per (shape, dtype) in `inputs`. Errors of the golden
    (and the data-dependent refusals) propagate."""
    graph = torch.fx.Graph()
    root = torch.nn.Module()
    mode = _Recording(graph, root)
    args = []
    for i, (shape, dtype) in enumerate(inputs):
        x = TraceTensor(torch.empty(tuple(shape), dtype=dtype, device=_META))
        node = graph.placeholder(f"arg{i}_1")
        node.meta["val"] = _snapshot(x)
        mode.bind(x, node)
        args.append(x)
    with mode:
        out = fn(*args)
    graph.output(_map(out, mode.arg))
    return torch.fx.GraphModule(root, graph)

