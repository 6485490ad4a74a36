"""Capture: trace a task's golden to an aten-level graph, once per case, with attrs bound.

Tracing records the aten ops the golden runs on storage-less (meta) tensors (`tracer.py`), so no
case data is computed and large cases cost the same as small ones. Composite aten ops (softmax,
layer_norm, group_norm, ...) are kept whole: the normaliser in `ir.py` expands each with its own
documented semantics.

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

# An attr-derived constant is an expression tree over attr values, evaluated in the tiling
# function (in double, rounded to fp32 once, as torch rounds a Python scalar):
#   ("attr", name) | ("const", v) | (op, arg, ...), op in EXPR_OPS.
EXPR_OPS: dict[str, tuple[Any, str]] = {
    "add": (operator.add, "({0} + {1})"), "sub": (operator.sub, "({0} - {1})"),
    "mul": (operator.mul, "({0} * {1})"), "div": (operator.truediv, "({0} / {1})"),
    "pow": (operator.pow, "pow({0}, {1})"), "neg": (operator.neg, "(-{0})"),
    "log": (math.log, "log({0})"), "sqrt": (math.sqrt, "sqrt({0})"), "exp": (math.exp, "exp({0})"),
    "rsqrt": (lambda v: 1.0 / math.sqrt(v), "(1.0 / sqrt({0}))"), "recip": (lambda v: 1.0 / v, "(1.0 / {0})"),
    "sq": (lambda v: v * v, "({0} * {0})"), "abs": (abs, "fabs({0})"),
    "max": (max, "fmax({0}, {1})"), "min": (min, "fmin({0}, {1})"),
}


def eval_expr(expr: tuple, attrs: dict) -> float:
    if expr[0] == "present":
        raise ValueError("an input's presence is known in the tiling function only")
    if expr[0] == "attr":
        return float(attrs[expr[1]])
    if expr[0] == "const":
        return float(expr[1])
    return float(EXPR_OPS[expr[0]][0](*(eval_expr(a, attrs) for a in expr[1:])))


def cpp_expr(expr: tuple, attr_ref) -> str:
    """C++ (double) source of `expr`; `attr_ref(name)` spells an attr read."""
    if expr[0] == "present":      # ("present", input index): 1 when the case gives that optional input
        return f"(context->GetOptionalInputShape({int(expr[1])}) != nullptr ? 1.0 : 0.0)"
    if expr[0] == "attr":
        return attr_ref(expr[1])
    if expr[0] == "const":
        return repr(float(expr[1]))
    return EXPR_OPS[expr[0]][1].format(*(cpp_expr(a, attr_ref) for a in expr[1:]))


def expr_attrs(expr: tuple) -> set[str]:
    if expr[0] == "attr":
        return {expr[1]}
    if expr[0] in ("const", "present"):
        return set()
    return set().union(*(expr_attrs(a) for a in expr[1:]))


class _Recorder:
    """Every value the golden computes from attrs in Python during one trace, with its expression,
    and every comparison of such a value (the branches the trace took)."""

    active: list | None = None
    branches: list | None = None


CMP_OPS = {"gt": (operator.gt, ">"), "ge": (operator.ge, ">="), "lt": (operator.lt, "<"),
           "le": (operator.le, "<="), "eq": (operator.eq, "=="), "ne": (operator.ne, "!=")}


def _compare(name):
    f = CMP_OPS[name][0]

    def cmp(a, b):
        if not _number(b):
            return NotImplemented
        result = bool(f(float(a), float(b)))
        if _Recorder.branches is not None:
            _Recorder.branches.append((name, _expr_of(a), _expr_of(b), result))
        return result
    return cmp


def condition_cpp(cond: tuple, attr_ref) -> str:
    """C++ of one recorded branch condition, true when the attrs take the traced branch."""
    name, a, b, result = cond
    text = f"{cpp_expr(a, attr_ref)} {CMP_OPS[name][1]} {cpp_expr(b, attr_ref)}"
    return f"({text})" if result else f"!({text})"


def _expr_of(v) -> tuple:
    e = getattr(v, "expr", None)
    return e if e is not None else ("const", float(v))


class AttrFloat(float):
    """A float attr (or a value derived from attrs) that remembers how it was computed."""

    def __new__(cls, value, expr):
        obj = float.__new__(cls, value)
        obj.expr = expr
        if _Recorder.active is not None:
            _Recorder.active.append((float(value), expr))
        return obj


class AttrInt(int):
    """An int attr: arithmetic with it gives plain ints; float expressions name it."""

    def __new__(cls, value, expr):
        obj = int.__new__(cls, value)
        obj.expr = expr
        return obj


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _binary(name):
    f = EXPR_OPS[name][0]

    def fwd(a, b):
        if not _number(b):
            return NotImplemented
        return AttrFloat(f(float(a), float(b)), (name, _expr_of(a), _expr_of(b)))

    def rev(a, b):
        if not _number(b):
            return NotImplemented
        return AttrFloat(f(float(b), float(a)), (name, _expr_of(b), _expr_of(a)))
    return fwd, rev


for _name, _dunder in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "truediv"), ("pow", "pow")):
    _f, _r = _binary(_name)
    setattr(AttrFloat, f"__{_dunder}__", _f)
    setattr(AttrFloat, f"__r{_dunder}__", _r)
for _name in CMP_OPS:
    setattr(AttrFloat, f"__{_name}__", _compare(_name))
    setattr(AttrInt, f"__{_name}__", _compare(_name))
AttrFloat.__hash__ = float.__hash__
AttrInt.__hash__ = int.__hash__
AttrFloat.__neg__ = lambda a: AttrFloat(-float(a), ("neg", a.expr))
AttrFloat.__pos__ = lambda a: a
AttrFloat.__abs__ = lambda a: AttrFloat(abs(float(a)), ("abs", a.expr))


SENTINELS = (0.37109375, 0.81640625)    # exact in fp32, unlikely literal constants


@dataclass
class Traced:
    """One traced graph and what it says about its case."""

    gm: Any                       # torch.fx.GraphModule
    signature: tuple              # structure without constants: decides the variant
    attrs: dict[str, Any]
    branches: list = field(default_factory=list)   # comparisons of attr values the trace made
    present: tuple = ()           # input positions the case gives (absent optional inputs left out)


@dataclass
class Capture:
    """All traces of a task: one per case, grouped into variants by graph structure."""

    task: Any
    traces: list[Traced]                          # index = case index
    variants: list[list[int]] = field(default_factory=list)    # case indices per variant
    guards: list[dict[str, Any]] = field(default_factory=list)  # per variant: structural attr -> value
    conditions: list[list[tuple]] = field(default_factory=list)  # per variant: branches all its cases took
    attr_consts: list[dict[int, tuple[str, str]]] = field(default_factory=list)
    moved_traces: dict = field(default_factory=dict)   # _disambiguate's traces, by moved attrs
    # per variant: id(fx constant position) -> (attr name, func name); see `constant_sites`


def _torch_dtype(name: str):
    import torch

    return {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
            "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
            "int64": torch.int64, "float64": torch.float64}.get(name, torch.float32)


def present_inputs(case) -> list[int]:
    """The input positions a case gives (an absent optional input is None in its shapes)."""
    return [i for i, s in enumerate(case.shapes) if s is not None]


def _sample_inputs(case, float_dtype=None) -> list[tuple]:
    """(shape, dtype) of the case's present inputs, float inputs traced in float32 (compute
    dtype). The golden gets None for an absent optional input (`trace`)."""
    import torch

    out = []
    for i in present_inputs(case):
        shape, dt = case.shapes[i], case.dtypes[i]
        if any(isinstance(d, (list, tuple)) for d in shape):
            raise Unsupported(f"case {case.id}: an input is a tensor list; the lowering traces one "
                              "tensor per input")
        tdt = _torch_dtype(dt)
        if tdt.is_floating_point:
            tdt = float_dtype or torch.float32
        out.append((tuple(shape), tdt))
    return out


def call_golden(task, tensors: list, attrs: dict):
    """The golden on concrete tensors (None for an absent optional input), attrs bound, called as
    the harness calls it (by the inputs' names when its signature names them all)."""
    from copilot.oracle.golden import golden_takes_inputs_by_name

    kw = {k: v for k, v in attrs.items() if v is not None}
    if golden_takes_inputs_by_name(task):
        return task.golden(**kw, **{s.name: x for s, x in zip(task.inputs, tensors)})
    return task.golden(*tensors, **kw)


def call_golden_roles(task, roles: dict, tensors: dict, attrs: dict):
    """The golden on probe tensors given by role (`roles`: role -> input position; a role missing
    from `tensors` is an absent optional input), or None when the golden refuses them. The
    pattern modules recognised by what the golden computes (rowcombine.py, swiglu.py) run it so."""
    import torch

    ordered = [None] * len(task.inputs)
    for role, pos in roles.items():
        ordered[pos] = tensors.get(role)
    try:
        with torch.no_grad():
            return call_golden(task, ordered, attrs)
    except Exception:      # the golden refuses these roles' shapes or this pattern of inputs
        return None


def trace(task, case, attrs: dict | None = None, record: list | None = None,
          branches: list | None = None):
    """Trace the golden on storage-less inputs shaped like `case` (`tracer.py`), attrs bound;
    returns a GraphModule.
    With `record`, numeric attrs are passed as AttrFloat/AttrInt and every Python value derived
    from them is appended to `record` as (value, expression)."""
    import torch

    from copilot.lowering.tracer import trace_graph

    attrs = dict(case.attrs if attrs is None else attrs)
    kw = {k: v for k, v in attrs.items() if v is not None}
    if record is not None:
        numeric = {a.name: a.type for a in task.attrs if a.type in ("float", "int")}
        for k, v in kw.items():
            if numeric.get(k) == "float" and _number(v):
                kw[k] = AttrFloat(float(v), ("attr", k))
            elif numeric.get(k) == "int" and isinstance(v, int) and not isinstance(v, bool):
                kw[k] = AttrInt(v, ("attr", k))
        record.extend((float(v), v.expr) for v in kw.values() if isinstance(v, AttrFloat))

    from copilot.oracle.golden import golden_takes_inputs_by_name

    by_name = getattr(task, "kind", "cann") == "cann" and golden_takes_inputs_by_name(task)

    present = present_inputs(case)

    def fn(*xs):
        full = [None] * len(case.shapes)       # absent optional inputs stay None
        for i, x in zip(present, xs):
            full[i] = x
        if by_name:      # as the harness calls it (scatter takes `dim` between two inputs)
            return task.golden(**kw, **{s.name: x for s, x in zip(task.inputs, full)})
        return task.golden(*full, **kw)

    try:
        sample = _sample_inputs(case)
    except Unsupported as exc:
        raise Unsupported(f"{task.name}: {exc}") from None
    _Recorder.active, _Recorder.branches = record, branches
    saved = {name: getattr(math, name) for name in _MATH_FUNCS} if record is not None else {}
    for name, f in saved.items():       # math.log(base) in a golden keeps its expression
        setattr(math, name, _math_wrapper(name, f))
    try:
        with torch.no_grad():
            gm = trace_graph(fn, sample)
        _fill_defaults(gm)
        return gm
    except Unsupported:
        raise
    except Exception as exc:
        raise Unsupported(f"{task.name}: the golden could not be traced on case {case.id} "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]})") from None
    finally:
        _Recorder.active = _Recorder.branches = None
        for name, f in saved.items():
            setattr(math, name, f)


_MATH_FUNCS = ("log", "sqrt", "exp")


def _math_wrapper(name, f):
    def call(v, *rest):
        if rest or getattr(v, "expr", None) is None:
            return f(v, *rest)
        return AttrFloat(f(float(v)), (name, v.expr))
    return call


def _fill_defaults(gm) -> None:
    """Spell out every schema argument (the trace drops arguments equal to their default, which
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
    """Every float constant in the graph: (node index, arg path, value). A one-element tensor
    constant (`torch.tensor(attr)` in the golden) is the site ("t",) of its get_attr node."""
    out = []
    for i, n in enumerate(gm.graph.nodes):
        if n.op == "get_attr":
            t = getattr(gm, n.target, None)
            if t is not None and hasattr(t, "numel") and t.numel() == 1 and t.dtype.is_floating_point:
                out.append((i, ("t",), float(t.reshape(()).item())))
            continue

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


def capture(task) -> Capture:
    """Trace every case; group cases into variants; locate attr-dependent constants."""
    if not task.cases:
        raise Unsupported(f"{task.name}: the task has no cases to trace")
    traces = []
    for case in task.cases:
        branches: list = []
        gm = trace(task, case, record=[], branches=branches)
        traces.append(Traced(gm, signature(gm), dict(case.attrs), branches, tuple(present_inputs(case))))
    cap = Capture(task, traces)
    by_sig: dict[tuple, list[int]] = {}
    for i, t in enumerate(traces):       # the pattern of absent inputs is structure too
        by_sig.setdefault((t.signature, t.present), []).append(i)
    cap.variants = list(by_sig.values())
    varying = _varying_presence(task, traces)
    for members in cap.variants:
        cap.guards.append(_guards(task, cap, members))
        cap.conditions.append(_conditions(cap, members) + _presence_conditions(cap, members, varying))
        cap.attr_consts.append(_attr_constants(task, cap, members))
    return cap


def _varying_presence(task, traces) -> list[int]:
    """Optional inputs some cases give and others leave out."""
    return [i for i in range(len(task.inputs)) if len({i in t.present for t in traces}) > 1]


def _presence_conditions(cap: Capture, members: list[int], varying: list[int]) -> list[tuple]:
    """A variant's pattern of absent inputs as conditions the tiling function tests (presence
    read from `GetOptionalInputShape`), one per optional input whose presence varies."""
    if len(cap.variants) == 1:
        return []
    present = cap.traces[members[0]].present
    return [("eq", ("present", i), ("const", 1.0), i in present) for i in varying]


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


def _conditions(cap: Capture, members: list[int]) -> list[tuple]:
    """The attr comparisons (Python branches such as `if base > 0`) every case of a variant took
    the same way: with several variants, the tiling function tests them to pick one."""
    if len(cap.variants) == 1:
        return []
    first = cap.traces[members[0]].branches
    common = [c for c in dict.fromkeys(first)
              if all(c in cap.traces[i].branches for i in members[1:])]
    return [c for c in common if c[1][0] != "const" or c[2][0] != "const"]


def _attr_constants(task, cap: Capture, members: list[int]) -> dict:
    """Map float constant sites of this variant's graph to the expression over attrs they hold.

    Per float attr, the golden is traced twice with the attr at a sentinel value and every
    numeric attr symbolic: a site whose value moves with the sentinel holds an attr-derived
    value, and the recorded Python arithmetic (e.g. `1 - beta1`, `1 - beta1 ** step`) gives its
    expression, checked against the second sentinel."""
    rep = task.cases[members[0]]
    base_sites = float_sites(cap.traces[members[0]].gm)
    floats = [s.name for s in task.attrs if s.type == "float" and rep.attrs.get(s.name) is not None]
    if len(floats) > 1:
        joint = _joint_attr_constants(task, cap, members, floats, base_sites)
        if joint is not None:
            return joint
    result: dict = {}
    for spec in task.attrs:
        if spec.type != "float" or rep.attrs.get(spec.name) is None:
            continue
        runs = []
        for s in SENTINELS:
            attrs = dict(rep.attrs)
            attrs[spec.name] = s
            record: list = []
            try:
                gm = trace(task, rep, attrs, record)
            except Unsupported:
                runs = None
                break
            if signature(gm) != cap.traces[members[0]].signature:
                runs = None
                break
            runs.append((float_sites(gm), record, attrs))
        if not runs:
            continue
        (sites1, record1, attrs1), (sites2, _, attrs2) = runs
        for (i, path, _v0), (_, _, v1), (_, _, v2) in zip(base_sites, sites1, sites2):
            if v1 == v2 or (i, path) in result:
                continue    # a literal, or found already
            found = {e: None for value, e in record1
                     if _close(value, v1) and _close(eval_expr(e, attrs2), v2)}
            expr = _disambiguate(task, cap, members, attrs1, (i, path), list(found))
            if expr is None:
                raise Unsupported(f"{task.name}: a constant derived from attr '{spec.name}' "
                                  f"({v1} for {SENTINELS[0]}) is computed outside Python arithmetic "
                                  "(+ - * / **), so the lowering cannot compute it at run time")
            result[(i, path)] = expr
    return result


def _joint_attr_constants(task, cap: Capture, members: list[int], floats: list[str], base_sites):
    """Every float attr at its own sentinel at once (two traces instead of two per attr); None
    when that changes the graph or leaves a site unexplained (the per-attr search decides then)."""
    rep = task.cases[members[0]]
    runs = []
    for s in SENTINELS:
        attrs = dict(rep.attrs)
        for k, name in enumerate(floats):
            attrs[name] = s + k * 0.0078125        # distinct and exact in fp32
        record: list = []
        try:
            gm = trace(task, rep, attrs, record)
        except Unsupported:
            return None
        if signature(gm) != cap.traces[members[0]].signature:
            return None
        runs.append((float_sites(gm), record, attrs))
    (sites1, record1, attrs1), (sites2, _, attrs2) = runs
    result: dict = {}
    for (i, path, _v0), (_, _, v1), (_, _, v2) in zip(base_sites, sites1, sites2):
        if v1 == v2:
            continue
        found = {e: None for value, e in record1 if _close(value, v1) and _close(eval_expr(e, attrs2), v2)}
        expr = _disambiguate(task, cap, members, attrs1, (i, path), list(found))
        if expr is None:
            return None
        result[(i, path)] = expr
    return result


def _disambiguate(task, cap: Capture, members, attrs: dict, site, found: list):
    """Of several expressions that give a site's value (`1 - beta1` and `1 - beta1 ** step` agree
    while step is 1), the one that still holds with the int attrs they use moved by one."""
    if len(found) <= 1:
        return found[0] if found else None
    ints = {a.name for a in task.attrs if a.type == "int"}
    moved = dict(attrs)
    for e in found:
        for name in expr_attrs(e) & ints:
            moved[name] = int(attrs[name]) + 1
    if moved != attrs:
        key = (members[0], repr(sorted(moved.items())))
        if key not in cap.moved_traces:       # sites that share the moved attrs share one trace
            try:
                cap.moved_traces[key] = trace(task, task.cases[members[0]], moved, [])
            except Unsupported:
                cap.moved_traces[key] = None
        gm = cap.moved_traces[key]
        if gm is not None and signature(gm) == cap.traces[members[0]].signature:
            value = next((v for i, p, v in float_sites(gm) if (i, p) == site), None)
            held = [e for e in found if value is not None and _close(eval_expr(e, moved), value)]
            if held:
                return min(held, key=lambda e: len(repr(e)))
    return min(found, key=lambda e: len(repr(e)))


def _close(a: float, b: float) -> bool:
    """Equal up to fp32 rounding (tensor constants are fp32)."""
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b)) or a == b
