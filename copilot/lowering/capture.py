"""Capture: trace a task's golden to an aten-level graph, once per case, with attrs bound.

Tracing uses `make_fx` in fake-tensor mode, so no case data is computed and large cases cost the
same as small ones. Composite aten ops (softmax, layer_norm, group_norm, ...) are kept whole: the
normaliser in `ir.py` expands each with its own documented semantics.

Attrs reach the graph as Python constants. To read them from tiling data at run time, each
numeric attr is traced twice with two distinct sentinel values: a graph constant that moves with
the sentinel is that attr (or a simple function of it: negation, reciprocal, log, ...). An attr
whose value changes the graph's structure (a Python branch in the golden, a string mode such as
gelu's `approximate`) splits the task into variants; the tiling function picks the variant at run
time from the attr values.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any

from copilot.errors import Unsupported

# Functions of one attr value that goldens commonly apply before the value meets a tensor.
# name -> (python function, C++ expression template over `v`)
ATTR_FUNCS: dict[str, tuple[Any, str]] = {
    "id": (lambda v: v, "{v}"),
    "neg": (lambda v: -v, "(-{v})"),
    "recip": (lambda v: 1.0 / v, "(1.0f / {v})"),
    "log": (lambda v: math.log(v), "logf({v})"),
    "neg_recip": (lambda v: -1.0 / v, "(-1.0f / {v})"),
    "sqrt": (lambda v: math.sqrt(v), "sqrtf({v})"),
    "sq": (lambda v: v * v, "({v} * {v})"),
}

SENTINELS = (0.37109375, 0.81640625)    # exact in fp32, unlikely literal constants


@dataclass
class Traced:
    """One traced graph and what it says about its case."""

    gm: Any                       # torch.fx.GraphModule
    signature: tuple              # structure without constants: decides the variant
    attrs: dict[str, Any]


@dataclass
class Capture:
    """All traces of a task: one per case, grouped into variants by graph structure."""

    task: Any
    traces: list[Traced]                          # index = case index
    variants: list[list[int]] = field(default_factory=list)    # case indices per variant
    guards: list[dict[str, Any]] = field(default_factory=list)  # per variant: structural attr -> value
    attr_consts: list[dict[int, tuple[str, str]]] = field(default_factory=list)
    # per variant: id(fx constant position) -> (attr name, func name); see `constant_sites`


def _torch_dtype(name: str):
    import torch

    return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
            "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int32": torch.int32,
            "int64": torch.int64, "float64": torch.float64}.get(name, torch.float32)


def _sample_inputs(case, float_dtype=None):
    """Zero tensors of the case's shapes; float inputs traced in float32 (compute dtype)."""
    import torch

    out = []
    for shape, dt in zip(case.shapes, case.dtypes):
        tdt = _torch_dtype(dt)
        if tdt.is_floating_point:
            tdt = float_dtype or torch.float32
        out.append(torch.zeros(shape, dtype=tdt))
    return out


def trace(task, case, attrs: dict | None = None):
    """Trace the golden on fake inputs shaped like `case`, attrs bound; returns a GraphModule."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    attrs = dict(case.attrs if attrs is None else attrs)
    kw = {k: v for k, v in attrs.items() if v is not None}

    def fn(*xs):
        return task.golden(*xs, **kw)

    try:
        with torch.no_grad():
            gm = make_fx(fn, tracing_mode="fake")(*_sample_inputs(case))
        _fill_defaults(gm)
        return gm
    except Unsupported:
        raise
    except Exception as exc:
        raise Unsupported(f"{task.name}: the golden could not be traced on case {case.id} "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]})") from None


def _fill_defaults(gm) -> None:
    """Spell out every schema argument (make_fx drops arguments equal to their default, which
    would make a case whose attr equals the default look structurally different)."""
    for n in gm.graph.nodes:
        schema = getattr(n.target, "_schema", None) if n.op == "call_function" else None
        if schema is None:
            continue
        args, kwargs = list(n.args), dict(n.kwargs)
        for i, arg in enumerate(schema.arguments):
            if arg.kwarg_only:
                if arg.name not in kwargs and arg.has_default_value() and \
                        isinstance(arg.default_value, (int, float)) and not isinstance(arg.default_value, bool):
                    kwargs[arg.name] = arg.default_value
                continue
            if i < len(args):
                continue
            if arg.name in kwargs:
                args.append(kwargs.pop(arg.name))
            elif arg.has_default_value():
                args.append(arg.default_value)
            else:
                break
        n.args, n.kwargs = tuple(args), kwargs


def _target_name(t) -> str:
    if t is operator.getitem:
        return "getitem"
    name = getattr(t, "__name__", None) or str(t)
    return str(name)


def _is_const(a) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool)


def signature(gm) -> tuple:
    """Graph structure: ops and wiring, numeric constants replaced by a marker."""
    idx = {}
    sig = []
    for i, n in enumerate(gm.graph.nodes):
        idx[n] = i

        def enc(a):
            if hasattr(a, "op") and a in idx:
                return ("n", idx[a])
            if isinstance(a, (list, tuple)):
                if all(isinstance(x, int) and not isinstance(x, bool) for x in a):
                    return "ints"      # shapes / dims: per-case facts, not structure
                return tuple(enc(x) for x in a)
            if isinstance(a, float):
                return "#"
            if isinstance(a, str):
                return ("s", a)
            return ("v", repr(a)) if not _is_const(a) else "#"
        sig.append((n.op, _target_name(n.target), tuple(enc(a) for a in n.args),
                    tuple(sorted((k, enc(v)) for k, v in n.kwargs.items()))))
    return tuple(sig)


def float_sites(gm) -> list[tuple[int, tuple, float]]:
    """Every float constant in the graph: (node index, arg path, value)."""
    out = []
    for i, n in enumerate(gm.graph.nodes):
        def walk(a, path):
            if isinstance(a, float):
                out.append((i, path, a))
            elif isinstance(a, (list, tuple)):
                for j, x in enumerate(a):
                    walk(x, path + (j,))
        for j, a in enumerate(n.args):
            walk(a, ("a", j))
        for k, v in n.kwargs.items():
            walk(v, ("k", k))
    return out


def _numeric_attrs(task) -> list[str]:
    return [a.name for a in task.attrs if a.type in ("float", "int")]


def capture(task) -> Capture:
    """Trace every case; group cases into variants; locate attr-dependent constants."""
    if not task.cases:
        raise Unsupported(f"{task.name}: the task has no cases to trace")
    traces = []
    for case in task.cases:
        gm = trace(task, case)
        traces.append(Traced(gm, signature(gm), dict(case.attrs)))
    cap = Capture(task, traces)
    by_sig: dict[tuple, list[int]] = {}
    for i, t in enumerate(traces):
        by_sig.setdefault(t.signature, []).append(i)
    cap.variants = list(by_sig.values())
    for members in cap.variants:
        cap.guards.append(_guards(task, cap, members))
        cap.attr_consts.append(_attr_constants(task, cap, members))
    return cap


def _guards(task, cap: Capture, members: list[int]) -> dict[str, Any]:
    """Attrs whose value selects this variant: non-numeric attrs always, numeric ones only when
    another variant differs from this one in that attr and perturbing it changes the graph."""
    if len(cap.variants) == 1:
        return {}
    rep = task.cases[members[0]]
    guards: dict[str, Any] = {}
    for spec in task.attrs:
        vals = {repr(task.cases[i].attrs.get(spec.name)) for i in members}
        if spec.type not in ("float", "int"):
            if len(vals) == 1:
                guards[spec.name] = rep.attrs.get(spec.name)
            continue
        v = rep.attrs.get(spec.name)
        if v is None or len(vals) != 1:
            continue
        attrs = dict(rep.attrs)
        attrs[spec.name] = (v * 1.37 + 0.11) if spec.type == "float" else v
        if spec.type == "float":
            try:
                sig = signature(trace(task, rep, attrs))
            except Unsupported:
                sig = None
            if sig != cap.traces[members[0]].signature:
                guards[spec.name] = v
    return guards


def _attr_constants(task, cap: Capture, members: list[int]) -> dict:
    """Map float constant sites of this variant's graph to (attr, func)."""
    rep = task.cases[members[0]]
    base_sites = float_sites(cap.traces[members[0]].gm)
    result: dict = {}
    for spec in task.attrs:
        if spec.type != "float" or rep.attrs.get(spec.name) is None:
            continue
        site_vals = []
        for s in SENTINELS:
            attrs = dict(rep.attrs)
            attrs[spec.name] = s
            try:
                gm = trace(task, rep, attrs)
            except Unsupported:
                site_vals = None
                break
            if signature(gm) != cap.traces[members[0]].signature:
                site_vals = None
                break
            site_vals.append(float_sites(gm))
        if not site_vals:
            continue
        for (i, path, v0), (_, _, v1), (_, _, v2) in zip(base_sites, site_vals[0], site_vals[1]):
            if v1 == v2:
                continue    # a literal, not this attr
            for fname, (f, _) in ATTR_FUNCS.items():
                try:
                    if _close(f(SENTINELS[0]), v1) and _close(f(SENTINELS[1]), v2):
                        result[(i, path)] = (spec.name, fname)
                        break
                except (ValueError, ZeroDivisionError):
                    continue
            else:
                raise Unsupported(f"{task.name}: a constant derived from attr '{spec.name}' "
                                  f"({v1} for {SENTINELS[0]}) is not a function the lowering can "
                                  f"compute at run time")
    return result


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))
