"""Compute-pattern router: task -> patterns (elementwise, broadcast, reduction, normalization,
softmax, fusion, matmul, conv, attention), most specific first.

Two sources are combined: the proto `category` of the task (authoritative for built-in tasks) and
the golden graph, observed by running the golden once on small inputs of the first case under a
`TorchDispatchMode` that records every aten op with its argument shapes. Shared with the lowering
agent, which picks its template from the first pattern.

When the golden cannot be traced (it raises, or no inputs can be made for it) or nothing is known
about a task, the router still answers, but says so: `route_task` returns the patterns with a
`KB.ROUTE_FALLBACK` warning diagnostic (the knowledge slice carries it) and logs the reason.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from knowledge.cards import PATTERNS

log = logging.getLogger(__name__)
FALLBACK_ID = "KB.ROUTE_FALLBACK"

# Proto categories seen in public operator suites, mapped onto our seven patterns.
CATEGORY_ALIASES = {
    "elementwise": "elementwise", "eltwise": "elementwise", "activation": "elementwise",
    "unary": "elementwise", "binary": "elementwise", "math": "elementwise", "pointwise": "elementwise",
    "broadcast": "broadcast",
    "reduction": "reduction", "reduce": "reduction", "pooling": "reduction",
    "normalization": "normalization", "norm": "normalization", "normalisation": "normalization",
    "softmax": "softmax", "attention": "softmax",
    "fusion": "fusion", "fused": "fusion",
    "matmul": "matmul", "gemm": "matmul", "contraction": "matmul", "linear": "matmul",
    "conv": "conv", "convolution": "conv",
}

_VIEW_OPS = {
    "view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "clone", "contiguous",
    "_to_copy", "copy", "copy_", "detach", "alias", "unsqueeze", "squeeze", "lift_fresh",
    "lift_fresh_copy", "empty_like", "zeros_like", "ones_like", "full_like", "full", "scalar_tensor",
    "slice", "select", "empty", "zeros", "ones", "as_strided", "_reshape_alias", "flatten", "split",
    "split_with_sizes", "unbind", "chunk", "narrow", "index_select", "cat", "stack", "item",
    "_local_scalar_dense", "to", "type_as", "arange", "new_empty", "new_zeros", "new_ones",
    "resize_", "fill_", "zero_", "empty_strided", "_assert_async", "is_nonzero",
}
_SOFTMAX_OPS = {"_softmax", "_log_softmax", "softmax", "log_softmax", "_safe_softmax",
                "logsumexp"}
_NORM_OPS = {"native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit",
             "_native_batch_norm_legit_no_training", "rms_norm", "_fused_rms_norm", "layer_norm",
             "group_norm", "batch_norm", "instance_norm", "renorm", "normalize"}
_REDUCE_OPS = {"sum", "mean", "amax", "amin", "max", "min", "prod", "argmax", "argmin", "var",
               "std", "var_mean", "std_mean", "any", "all", "norm", "linalg_vector_norm",
               "cumsum", "cumprod", "logcumsumexp", "count_nonzero", "nansum", "median", "mode"}
_NORM_HINT_OPS = {"rsqrt", "var", "var_mean", "std", "std_mean", "linalg_vector_norm", "norm", "sqrt"}
_MATMUL_OPS = {"mm", "bmm", "addmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "einsum"}
_CONV_OPS = {"convolution", "convolution_backward", "conv2d", "conv1d", "conv3d", "_convolution", "cudnn_convolution",
             "mkldnn_convolution", "_slow_conv2d_forward", "_conv_depthwise2d", "slow_conv3d_forward"}


# The operator family: what kind of data movement the golden does, finer than the compute pattern
# (a unique routes as elementwise, a roi_align as reduction). It names the knowledge header and
# picks the exemplar; the patterns (and the lowering's template) do not change. First match wins.
FAMILY_OPS: dict[str, set[str]] = {
    "sort/select": {"sort", "argsort", "msort", "topk", "kthvalue", "_unique2", "_unique", "unique_dim",
                    "unique_consecutive", "unique"},
    "scatter": {"scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_",
                "index_put", "index_put_", "index_add", "index_add_", "index_copy", "bincount", "histc"},
    "scan": {"cumsum", "cumprod", "cummin", "cummax", "logcumsumexp"},
    "window": {"im2col", "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool2d", "avg_pool3d"},
    "gather/index": {"gather", "index", "index_select", "take", "embedding", "grid_sampler_2d", "grid_sampler_3d",
                     "upsample_bilinear2d", "upsample_nearest2d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
                     "roi_align"},
}
# Proto categories of public suites that name a family outright.
CATEGORY_FAMILIES = {"sortselect": "sort/select", "indexgather": "gather/index", "scatterupdate": "scatter"}


def op_family(ops: Iterable[str], category: str | None = None) -> str:
    """The operator family of a golden's ops (and its proto category), or "" when none fits."""
    found = set(ops)
    for family, names in FAMILY_OPS.items():
        if found & names:
            return family
    return CATEGORY_FAMILIES.get(str(category or "").strip().lower(), "")


@dataclass
class GoldenTrace:
    """What running the golden showed: aten op names in order, and which of them reduced,
    which broadcast."""

    ops: list[str] = field(default_factory=list)
    reduced: list[str] = field(default_factory=list)
    broadcast: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def compute_ops(self) -> list[str]:
        return [o for o in self.ops if o not in _VIEW_OPS]


def _op_name(func) -> str:
    try:
        return func._schema.name.split("::", 1)[-1]
    except Exception:
        return str(getattr(func, "__name__", func)).split(".", 1)[0]


def trace_golden(golden, inputs, attrs=None) -> GoldenTrace:
    """Run `golden` once on `inputs` (tensors) and record the aten ops it dispatches."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    tr = GoldenTrace()

    class _Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = _op_name(func)
            tr.ops.append(name)
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            outs = out if isinstance(out, (tuple, list)) else (out,)
            outs = [o for o in outs if isinstance(o, torch.Tensor)]
            if name not in _VIEW_OPS and tensors and outs:
                in_numel = max(t.numel() for t in tensors)
                if name in _REDUCE_OPS and outs[0].numel() < in_numel:
                    tr.reduced.append(name)
                big = [t for t in tensors if t.numel() > 1]
                if len(big) >= 2 and len({tuple(t.shape) for t in big}) > 1:
                    tr.broadcast.append(name)
            return out

    attrs = dict(attrs or {})
    try:
        with torch.no_grad(), _Recorder():
            _call_golden(golden, inputs, attrs)
    except Exception as exc:  # a golden that needs more than we can give it
        tr.error = f"{type(exc).__name__}: {exc}"
    return tr


def _call_golden(golden, inputs, attrs):
    try:
        sig = inspect.signature(golden)
        names = set(sig.parameters)
        takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
        kw = {k: v for k, v in attrs.items() if takes_kwargs or k in names}
    except (TypeError, ValueError):
        kw = attrs
    try:
        return golden(*inputs, **kw)
    except TypeError:
        return golden(*inputs, *attrs.values())


def classify_trace(tr: GoldenTrace) -> list[str]:
    """Patterns seen in a trace, most specific first."""
    ops = set(tr.compute_ops)
    found: list[str] = []
    has_softmax = bool(ops & _SOFTMAX_OPS) or ({"exp"} <= ops and (ops & {"sum"}) and
                                                (ops & {"amax", "max"}) and (ops & {"div", "sub"}))
    if ops & _CONV_OPS:               # a convolution: img2col / the cube, or the vector unit (depthwise)
        found.append("conv")
    if has_softmax and sum(o in _MATMUL_OPS for o in tr.compute_ops) >= 2:
        found.append("attention")     # two products around a softmax
    if ops & _MATMUL_OPS:             # a matrix product: the cube's pattern comes first
        found.append("matmul")
    if has_softmax:
        found.append("softmax")
    has_norm = bool(ops & _NORM_OPS) or (bool(tr.reduced) and bool(ops & _NORM_HINT_OPS) and
                                         bool(ops & {"mul", "div"}))
    if has_norm and not has_softmax:
        found.append("normalization")
    if tr.reduced and not found:
        found.append("reduction")
    pointwise_kinds = {o for o in ops if o not in _REDUCE_OPS and o not in _SOFTMAX_OPS
                       and o not in _NORM_OPS}
    if not found and len(pointwise_kinds) >= 2:
        found.append("fusion")
    if tr.broadcast and not (ops & _NORM_OPS) and "normalization" not in found \
            and "softmax" not in found:
        found.append("broadcast")
    if not found and ops:
        found.append("elementwise")
    return found


def _category(task) -> str | None:
    cat = getattr(task, "category", None)
    if cat is None and isinstance(task, dict):
        cat = task.get("category")
    if not cat:
        return None
    return CATEGORY_ALIASES.get(str(cat).strip().lower())


def _sample_inputs(task):
    """Small inputs shaped like the first case: every dim capped at 16 (dims of 1 stay 1, equal dims
    stay equal, so broadcasting is preserved), float dtypes as float32."""
    import torch

    cases = list(getattr(task, "cases", None) or [])
    case = cases[0] if cases else None
    shapes = getattr(case, "shapes", None) or getattr(case, "input_shape", None)
    if shapes is None:
        if case is None:
            return []
        from copilot.oracle import make_inputs

        made = make_inputs(task, case)
        return list(made.values()) if isinstance(made, dict) else list(made)
    dtypes = list(getattr(case, "dtypes", None) or [])
    g = torch.Generator().manual_seed(0)
    out = []
    for i, shape in enumerate(shapes):
        small = [min(int(s), 16) for s in shape]
        name = dtypes[i] if i < len(dtypes) else "float32"
        if name in ("bool",):
            out.append(torch.rand(small, generator=g) > 0.5)
        elif name.startswith(("int", "uint")):
            out.append(torch.randint(0, 4, small, generator=g, dtype=getattr(torch, name, torch.int64)))
        else:
            out.append(torch.rand(small, generator=g, dtype=torch.float32) * 2 - 1)
    return out


def trace_case(task) -> GoldenTrace | None:
    """The golden traced on the real inputs of the task's smallest correctness case, called as
    the oracle calls it (inputs by name where the golden takes them so, optional inputs omitted,
    tensor lists); None when the task has no cases or its inputs cannot be made."""
    try:
        from copilot.oracle import make_inputs
        from copilot.oracle.golden import golden_arguments

        cases = list(task.quick_cases() or task.cases)
        if not cases:
            return None
        case = min(cases, key=lambda c: c.total_numel)
        args, kwargs = golden_arguments(task, case, make_inputs(task, case))
    except Exception:
        return None
    return trace_golden(lambda: task.golden(*args, **kwargs), [], {})


@dataclass
class Routing:
    """The patterns of a task (most specific first) and, when part of it is a guess, why."""

    patterns: list[str]
    notes: list[dict] = field(default_factory=list)      # warning diagnostics (FALLBACK_ID)
    family: str = ""                                     # op_family of the golden, "" when none fits


def route(task, *, trace: bool = True) -> list[str]:
    """Patterns of a task, most specific first (see `route_task`)."""
    return route_task(task, trace=trace).patterns


def route_task(task, *, trace: bool = True) -> Routing:
    """Patterns of a task, most specific first: the proto category, then what the golden shows.

    `task` is a `copilot.tasks.Task`, a task reference for `load_task`, or anything with a
    `category` and/or a `golden`. Always returns at least one pattern (elementwise as the last
    resort); a golden that cannot be traced, or a last-resort answer, adds a note and a log line."""
    if isinstance(task, str):
        if task in PATTERNS:
            return Routing([task])
        from copilot.tasks import load_task

        task = load_task(task)
    name = getattr(task, "name", None) or type(task).__name__
    out: list[str] = []
    notes: list[dict] = []

    def note(message: str) -> None:
        log.warning("routing %s: %s", name, message)
        notes.append({"id": FALLBACK_ID, "severity": "warning", "message": message,
                      "hint": "give the task a `category` in its proto, or a golden that runs on "
                              "its first case, so the knowledge slice fits it"})

    cat = _category(task)
    if cat:
        out.append(cat)
    golden = getattr(task, "golden", None)
    raw_cat = getattr(task, "category", None) or (task.get("category") if isinstance(task, dict) else None)
    traced: list[str] = []
    if trace and callable(golden):
        try:
            inputs = _sample_inputs(task)
            attrs = getattr(task, "attrs", None)
            if isinstance(attrs, (list, tuple)):
                attrs = {getattr(a, "name", str(i)): getattr(a, "default", a)
                         for i, a in enumerate(attrs)}
            case_attrs = getattr((list(getattr(task, "cases", None) or []) or [None])[0], "attrs", None)
            merged = dict(attrs or {})
            if isinstance(case_attrs, dict):
                merged.update(case_attrs)
            if inputs:
                tr = trace_golden(golden, inputs, merged)
                if tr.error:                    # retry as the oracle calls it, on a real case
                    tr = trace_case(task) or tr
                if tr.error:
                    note(f"the golden failed on sample inputs ({tr.error}); patterns from "
                         f"{'the category only' if out else 'no evidence'}")
                traced = tr.ops
                for p in classify_trace(tr):
                    if p not in out:
                        out.append(p)
            else:
                note("no sample inputs for the golden (the task has no cases); its graph was not traced")
        except Exception as exc:    # inputs that cannot be made: routing goes on without the graph
            tr = trace_case(task)
            if tr is not None and not tr.error:
                traced = tr.ops
                out += [p for p in classify_trace(tr) if p not in out]
            else:
                note(f"could not trace the golden ({type(exc).__name__}: {exc})")
    if not out:
        note("neither a known category nor a traced golden graph: elementwise is a guess")
        out = ["elementwise"]
    name = getattr(golden, "__name__", "") if callable(golden) else ""
    return Routing(out, notes, op_family(traced + ([name] if name else []), raw_cat))


def routing(task_or_patterns) -> Routing:
    """`normalise_patterns` with the notes of routing a task (none for pattern names)."""
    if isinstance(task_or_patterns, str) and task_or_patterns in PATTERNS:
        return Routing([task_or_patterns])
    if isinstance(task_or_patterns, Iterable) and not isinstance(task_or_patterns, (str, bytes)) \
            and not hasattr(task_or_patterns, "golden"):
        return Routing(normalise_patterns(task_or_patterns))
    return route_task(task_or_patterns)


def normalise_patterns(task_or_patterns) -> list[str]:
    """A pattern name, a list of them, or a task -> a non-empty list of known patterns."""
    if isinstance(task_or_patterns, str) and task_or_patterns in PATTERNS:
        return [task_or_patterns]
    if isinstance(task_or_patterns, Iterable) and not isinstance(task_or_patterns, (str, bytes)) \
            and not hasattr(task_or_patterns, "golden"):
        pats = [str(p) for p in task_or_patterns]
        unknown = [p for p in pats if p not in PATTERNS]
        if unknown:
            raise ValueError(f"unknown pattern(s) {', '.join(unknown)}; known: {', '.join(PATTERNS)}")
        return pats or ["elementwise"]
    return route(task_or_patterns)
