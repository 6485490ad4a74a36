"""The lowering IR: a small dataflow program over one task's iteration space.

Every value has a kind:
- `full`: one element per point of the iteration space (inputs are loaded as full values, with
  broadcasting materialised at load time);
- `stat`: one value per reduction group (a row, or a group of rows for group_norm);
- `scalar`: one value for the whole launch (literals, attrs, the reduced length).

Ops (all computed in fp32): unary (neg abs exp log sqrt rsqrt recip relu sigmoid silu tanh erf
gelu gelu_tanh mish hardswish log1p round trunc not), binary (add sub mul div max min, cmp with
a mode), ternary `where`, parametrised `leaky_relu` `softplus` `clamp`, reductions `rsum` `rmax`
`rmin` (full -> stat). `normalise` builds it from a captured aten graph; per-case layout facts
(reduced axes, input alignment, chunks, group counts) are collected alongside so one kernel can
serve every case.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any

from copilot.errors import Unsupported
from copilot.lowering.capture import EXPR_OPS, eval_expr

UNARY = {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "recip", "relu", "sigmoid", "silu", "tanh", "erf",
         "gelu", "gelu_tanh", "mish", "hardswish", "log1p", "round", "trunc", "not", "sq"}
BINARY = {"add", "sub", "mul", "div", "max", "min", "cmp", "gcd"}
TERNARY = {"where", "fma"}      # fma(c, a, b) = c + a * b with a compensated product
REDUCE = {"rsum", "rmax", "rmin", "rargmax", "rargmin"}    # rarg*: index of the first max / min
CMP_MODES = {"ne": "NE", "eq": "EQ", "gt": "GT", "lt": "LT", "ge": "GE", "le": "LE"}


@dataclass
class Node:
    op: str
    args: tuple = ()
    kind: str = "full"          # full | stat | scalar
    params: dict = field(default_factory=dict)


@dataclass
class Load:
    """One tensor the kernel reads: input `input`, optionally chunk k of n along the last axis."""

    input: int
    chunks: int = 1
    chunk: int = 0
    gap: int | tuple | None = None   # output dims after the input's last dim (per case; None = 0), or
                                     # per input dim its iteration dim counted from the end (unit dims between)
    axis: int = -1               # the chunked axis of the input (per case, counted from the end)
    lanes: tuple = ()            # lane map along the last axis: ("rot", 2) the row rotated by half,
                                 # ("rep", 2) a half-length row repeated twice; () none


@dataclass
class Program:
    nodes: list[Node] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    outputs: list[tuple[int, str]] = field(default_factory=list)   # (node, kind) per task output
    # per-case layout facts
    main_shape: tuple = ()
    reduce_dims: tuple | None = None    # normalised axes of the reductions (None: elementwise)
    groups: int | None = None           # group_norm
    group_attr: str | None = None
    aten_ops: list[str] = field(default_factory=list)

    def add(self, op, args=(), kind="full", **params) -> int:
        self.nodes.append(Node(op, tuple(args), kind, params))
        return len(self.nodes) - 1

    @property
    def has_reduction(self) -> bool:
        return any(n.op in REDUCE for n in self.nodes)

    def structure(self) -> tuple:
        return tuple((n.op, n.args, n.kind, tuple(sorted((k, repr(v)) for k, v in n.params.items()
                                                           if k != "value")))
                     for n in self.nodes), tuple((l.input, l.chunks, l.chunk, l.lanes) for l in self.loads), \
            tuple(self.outputs)


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _shape(fx) -> tuple:
    v = fx.meta.get("val") if hasattr(fx, "meta") else None
    return tuple(int(s) for s in v.shape) if hasattr(v, "shape") else ()


def _dtype(fx):
    v = fx.meta.get("val") if hasattr(fx, "meta") else None
    return getattr(v, "dtype", None)


class _Builder:
    """Walks one traced graph and emits the Program."""

    def __init__(self, task, case, gm, attr_sites: dict):
        self.task, self.case, self.gm, self.sites = task, case, gm, attr_sites
        self.p = Program()
        self.env: dict[Any, Any] = {}
        self.load_of: dict[int, int] = {}       # node -> load index for load nodes
        self.origin: dict[Any, tuple] = {}      # fx node -> shape at creation (small fulls)
        self.const_cache: dict = {}
        self.node_index = {n: i for i, n in enumerate(gm.graph.nodes)}

    # -- values ---------------------------------------------------------------------------------
    def const(self, v: float) -> int:
        key = ("c", float(v))
        if key not in self.const_cache:
            self.const_cache[key] = self.p.add("const", (), "scalar", value=float(v))
        return self.const_cache[key]

    def scalar_arg(self, fx_node, path, v) -> int:
        expr = self.sites.get((self.node_index[fx_node], path))
        return self.const(v) if expr is None else self.attr(expr)

    def attr(self, expr: tuple) -> int:
        """A value computed from attrs in the tiling function (one `scalar[]` slot)."""
        key = ("a", expr)
        if key not in self.const_cache:
            self.const_cache[key] = self.p.add("attr", (), "scalar", expr=expr,
                                               value=eval_expr(expr, self.case.attrs))
        return self.const_cache[key]

    def _expr(self, i) -> tuple:
        node = self.p.nodes[i]
        return node.params["expr"] if node.op == "attr" else ("const", node.params["value"])

    def arg(self, n, j):
        """IR node for positional arg j of fx node n (tensor or number)."""
        a = n.args[j] if j < len(n.args) else None
        return self._value(n, a, ("a", j))

    def kwarg(self, n, k, default=None):
        if k not in n.kwargs:
            return None if default is None else self.const(default)
        return self._value(n, n.kwargs[k], ("k", k))

    def _value(self, n, a, path):
        if hasattr(a, "op"):
            v = self.env[a]
            if isinstance(v, tuple):
                raise Unsupported(f"{self.task.name}: a tuple result used as a tensor in {n.target}")
            return v
        if isinstance(a, bool):
            return self.const(1.0 if a else 0.0)
        if isinstance(a, (int, float)):
            return self.scalar_arg(n, path, float(a))
        raise Unsupported(f"{self.task.name}: argument {a!r} of {n.target} is not a tensor or number")

    def kind_of(self, *ids) -> str:
        kinds = {self.p.nodes[i].kind for i in ids}
        if "full" in kinds:
            return "full"
        return "stat" if "stat" in kinds else "scalar"

    def integral(self, i) -> bool:
        """The value is an integer (or inf / NaN) in every lane: rounded, or a clamp of such a value."""
        n = self.p.nodes[i]
        if n.op == "const":
            return float(n.params["value"]).is_integer()
        if n.op in ("round", "trunc"):
            return True
        return n.op in ("max", "min", "neg", "abs") and all(self.integral(a) for a in n.args)

    def op(self, name, *args, **params) -> int:
        if name in ("round", "trunc") and self.integral(args[0]):
            return args[0]      # rounding an integer is the identity (dynamic_quant's .to(int8) after round)
        srcs = [self.p.nodes[a] for a in args]
        if args and name in EXPR_OPS and not params and all(n.op in ("attr", "const") for n in srcs):
            # arithmetic on attrs and literals only: folded into the tiling function's scalars
            expr = (name, *(self._expr(a) for a in args))
            if any(n.op == "attr" for n in srcs):
                return self.attr(expr)
            return self.const(eval_expr(expr, {}))
        return self.p.add(name, args, self.kind_of(*args), **params)

    # -- broadcasting bookkeeping ---------------------------------------------------------------
    def note_broadcast(self, n):
        """Record, for inputs smaller than the result, where their dims sit in the result."""
        out = _shape(n)
        for a in n.args:
            if not hasattr(a, "op") or a not in self.env or isinstance(self.env[a], tuple):
                continue
            sa = _shape(a)
            if _numel(sa) >= _numel(out) or self.p.nodes[self.env[a]].kind != "full":
                continue
            base = self.origin.get(a)
            if base is None:
                continue
            st = list(sa)
            while st and st[0] == 1 and len(st) > len(base):
                st.pop(0)
            bl = list(base)
            while bl and bl[0] == 1 and len(st) < len(bl):
                bl.pop(0)
            if st[:len(bl)] == bl and all(d == 1 for d in st[len(bl):]):
                gap = len(st) - len(bl)
            else:
                gap = _placement(st, bl)
                if gap is None:
                    raise Unsupported(f"{self.task.name}: input reshaped to {tuple(sa)} before broadcasting "
                                      f"(from {tuple(base)}); only unit dims inserted are supported")
            for li in self._loads_under(self.env[a]):
                ld = self.p.loads[li]
                if ld.gap is None:
                    ld.gap = gap
                elif ld.gap != gap:
                    raise Unsupported(f"{self.task.name}: input {ld.input} broadcast two different ways")

    def _loads_under(self, i) -> list[int]:
        seen, stack, out = set(), [i], []
        while stack:
            j = stack.pop()
            if j in seen:
                continue
            seen.add(j)
            if j in self.load_of:
                out.append(self.load_of[j])
            stack.extend(a for a in self.p.nodes[j].args)
        return out

    def load(self, inp: int, chunks=1, chunk=0, axis=-1, lanes=()) -> int:
        for li, ld in enumerate(self.p.loads):
            if (ld.input, ld.chunks, ld.chunk, ld.lanes) == (inp, chunks, chunk, lanes):
                if chunks > 1 and ld.axis != axis:
                    raise Unsupported(f"{self.task.name}: input {inp} is split along two axes")
                return next(k for k, v in self.load_of.items() if v == li)
        self.p.loads.append(Load(inp, chunks, chunk, axis=axis, lanes=lanes))
        nid = self.p.add("load", (), "full", load=len(self.p.loads) - 1)
        self.load_of[nid] = len(self.p.loads) - 1
        return nid

    # -- reductions -----------------------------------------------------------------------------
    def reduction(self, n, src: int, dims, kind: str) -> int:
        shape = _shape(n.args[0])
        rank = len(shape)
        dims = sorted({d % rank for d in (dims if dims else range(rank))}) if rank else []
        if self.p.nodes[src].kind != "full":
            raise Unsupported(f"{self.task.name}: a reduction of an already reduced value ({n.target})")
        if self.p.reduce_dims is None:
            self.p.reduce_dims = tuple(dims)
            self.p.main_shape = shape
        elif tuple(dims) != self.p.reduce_dims or shape != self.p.main_shape:
            raise Unsupported(f"{self.task.name}: reductions over different axes ({n.target})")
        if dims and dims != list(range(dims[0], dims[-1] + 1)):
            raise Unsupported(f"{self.task.name}: {n.target} reduces non-contiguous axes {dims}")
        return self.p.add(kind, (src,), "stat")

    def reduced_len(self) -> int:
        return self.p.add("rowlen", (), "scalar")

    # -- the walk -------------------------------------------------------------------------------
    def run(self) -> Program:
        ph = 0
        present = [i for i, s in enumerate(self.case.shapes) if s is not None]   # absent inputs: no placeholder
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                nid = self.load(present[ph])
                self.env[n] = nid
                self.origin[n] = _shape(n)
                ph += 1
                continue
            if n.op == "output":
                outs = n.args[0]
                outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
                for o in outs:
                    v = self.env[o]
                    self.p.outputs.append((v, self.p.nodes[v].kind))
                continue
            name = _target(n)
            self.p.aten_ops.append(name)
            self.env[n] = self.lower_node(n, name)
            if isinstance(self.env[n], int) and self.p.nodes[self.env[n]].kind == "full" \
                    and n not in self.origin:
                src = [a for a in n.args if hasattr(a, "op") and a in self.origin]
                if name in _VIEWS and src:
                    self.origin[n] = self.origin[src[0]]
                else:
                    self.origin[n] = _shape(n)
            if name not in _VIEWS and name != "getitem":
                self.note_broadcast(n)
        full_outs = [self.p.nodes[v].kind for v, _ in self.p.outputs]
        if not self.p.main_shape:
            outs = [o for o in self.gm.graph.nodes if o.op == "output"][0].args[0]
            outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
            self.p.main_shape = max((_shape(o) for o in outs), key=_numel)
        if "full" not in full_outs and not self.p.has_reduction:
            raise Unsupported(f"{self.task.name}: no output covers the iteration space")
        self._prune_loads()
        return self.p

    def _prune_loads(self):
        """Drop loads no output depends on (e.g. the whole input when only its chunks are used)."""
        live, stack = set(), [v for v, _ in self.p.outputs]
        while stack:
            j = stack.pop()
            if j not in live:
                live.add(j)
                stack.extend(self.p.nodes[j].args)
        used = sorted({self.p.nodes[j].params["load"] for j in live if self.p.nodes[j].op == "load"})
        remap = {old: new for new, old in enumerate(used)}
        self.p.loads = [self.p.loads[i] for i in used]
        for j, node in enumerate(self.p.nodes):
            if node.op == "load":
                node.params["load"] = remap.get(node.params["load"], -1)

    def lower_node(self, n, name):
        if n.op == "get_attr":
            t = getattr(self.gm, n.target)
            if t.numel() != 1:
                raise Unsupported(f"{self.task.name}: a tensor constant of shape {tuple(t.shape)} in the golden")
            return self.scalar_arg(n, ("t",), float(t.reshape(()).item()))
        if name in _VIEWS:
            return self.env[n.args[0]]
        if name == "getitem":
            return self.env[n.args[0]][n.args[1]]
        if name in ("_to_copy", "to", "convert_element_type"):
            dt = n.kwargs.get("dtype") or (n.args[1] if len(n.args) > 1 else None)
            v = self.env[n.args[0]]
            src = _dtype(n.args[0])
            if dt is not None and not dt.is_floating_point and dt != src and \
                    (src is None or src.is_floating_point):
                return self.op("trunc", v)
            return v      # float -> float, or between integer types (gcd's int16 -> int32 -> int16)
        if name in ("ones_like", "zeros_like", "full_like", "scalar_tensor"):
            val = 1.0 if name == "ones_like" else 0.0 if name == "zeros_like" else float(n.args[1] if name == "full_like" else n.args[0])
            return self.const(val)
        if name in ("split", "split_with_sizes", "chunk"):
            return self.split(n, name)
        if name == "slice":
            return self.slice(n)
        if name == "cat":
            return self.cat(n)
        if name == "repeat":
            return self.repeat(n)
        if name in ("permute", "transpose"):
            return self.unit_permute(n, name)
        simple = _SIMPLE.get(name)
        if simple is not None:
            args = [self.arg(n, j) for j in range(simple[1])]
            if simple[0] == "id":
                return args[0]
            return self.op(simple[0], *args)
        if name in ("add", "sub"):
            a, b = self.arg(n, 0), self.arg(n, 1)
            alpha = n.kwargs.get("alpha", n.args[2] if len(n.args) > 2 else 1)
            if alpha != 1:
                b = self.op("mul", b, self.scalar_arg(n, ("k", "alpha"), float(alpha)))
            return self.op(name, a, b)
        if name == "rsub":
            return self.op("sub", self.arg(n, 1), self.arg(n, 0))
        if name in ("mul", "div", "maximum", "minimum", "fmax", "fmin"):
            if name == "div" and n.kwargs.get("rounding_mode"):
                raise Unsupported(f"{self.task.name}: aten.div with rounding_mode")
            opn = {"maximum": "max", "minimum": "min", "fmax": "max", "fmin": "min"}.get(name, name)
            return self.op(opn, self.arg(n, 0), self.arg(n, 1))
        if name in CMP_MODES:
            return self.op("cmp", self.arg(n, 0), self.arg(n, 1), mode=CMP_MODES[name])
        if name == "where":
            return self.op("where", self.arg(n, 0), self.arg(n, 1), self.arg(n, 2))
        if name == "masked_fill":
            return self.op("where", self.arg(n, 1), self.arg(n, 2), self.arg(n, 0))
        if name == "pow":
            e = n.args[1]
            if hasattr(e, "op"):
                raise Unsupported(f"{self.task.name}: aten.pow with a tensor exponent")
            x = self.arg(n, 0)
            if e == 2:
                return self.op("sq", x)
            if e == 1:
                return x
            if e == 3:
                return self.op("mul", self.op("sq", x), x)
            if e == 0.5:
                return self.op("sqrt", x)
            if e == -0.5:
                return self.op("rsqrt", x)
            if e == -1:
                return self.op("recip", x)
            raise Unsupported(f"{self.task.name}: aten.pow with exponent {e}")
        if name == "clamp" or name == "clamp_min" or name == "clamp_max" or name == "hardtanh":
            x = self.arg(n, 0)
            if name == "clamp_min":
                return self.op("max", x, self.arg(n, 1))
            if name == "clamp_max":
                return self.op("min", x, self.arg(n, 1))
            lo = n.args[1] if len(n.args) > 1 else n.kwargs.get("min")
            hi = n.args[2] if len(n.args) > 2 else n.kwargs.get("max")
            if name == "hardtanh":
                lo = -1.0 if lo is None else lo
                hi = 1.0 if hi is None else hi
            if lo is not None:
                x = self.op("max", x, self._value(n, lo, ("a", 1) if len(n.args) > 1 else ("k", "min")))
            if hi is not None:
                x = self.op("min", x, self._value(n, hi, ("a", 2) if len(n.args) > 2 else ("k", "max")))
            return x
        if name == "leaky_relu":
            slope = self.arg(n, 1) if len(n.args) > 1 else self.const(0.01)
            return self.op("leaky_relu", self.arg(n, 0), slope)
        if name == "gelu":
            approx = n.kwargs.get("approximate", n.args[1] if len(n.args) > 1 else "none")
            return self.op("gelu_tanh" if approx == "tanh" else "gelu", self.arg(n, 0))
        if name == "softplus":
            beta = self.arg(n, 1) if len(n.args) > 1 else self.const(1.0)
            thr = self.arg(n, 2) if len(n.args) > 2 else self.const(20.0)
            return self.op("softplus", self.arg(n, 0), beta, thr)
        if name == "addcmul":
            # input + (value * t1) * t2 with the last multiply-add fused, as torch's CPU kernel does
            v = n.kwargs.get("value", n.args[3] if len(n.args) > 3 else 1)
            path = ("k", "value") if "value" in n.kwargs else ("a", 3)
            t1 = self.arg(n, 1)
            if v != 1 or (self.node_index[n], path) in self.sites:
                t1 = self.op("mul", t1, self.scalar_arg(n, path, float(v)))
            c, t2 = self.arg(n, 0), self.arg(n, 2)
            if {self.p.nodes[i].kind for i in (c, t1, t2)} == {"full"}:
                return self.op("fma", c, t1, t2)
            return self.op("add", c, self.op("mul", t1, t2))
        if name == "addcdiv":
            v = n.kwargs.get("value", 1)
            q = self.op("div", self.arg(n, 1), self.arg(n, 2))
            if v != 1 or (self.node_index[n], ("k", "value")) in self.sites:
                q = self.op("mul", q, self.scalar_arg(n, ("k", "value"), float(v)))
            return self.op("add", self.arg(n, 0), q)
        if name == "lerp":
            a, b, w = self.arg(n, 0), self.arg(n, 1), self.arg(n, 2)
            return self.op("add", a, self.op("mul", self.op("sub", b, a), w))
        # -- reductions
        if name in ("sum", "amax", "amin", "mean"):
            dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
            if isinstance(dims, int):
                dims = [dims]
            kind = {"sum": "rsum", "amax": "rmax", "amin": "rmin", "mean": "rsum"}[name]
            r = self.reduction(n, self.arg(n, 0), dims, kind)
            if name == "mean":
                r = self.op("div", r, self.reduced_len())
            return r
        if name == "mse_loss":
            # reduction: 0 none, 1 mean, 2 sum (over every element)
            red = n.args[2] if len(n.args) > 2 else n.kwargs.get("reduction", 1)
            sq = self.op("sq", self.op("sub", self.arg(n, 0), self.arg(n, 1)))
            if red == 0:
                return sq
            total = self.reduction(n, sq, None, "rsum")
            return self.op("div", total, self.reduced_len()) if red == 1 else total
        if name in ("argmax", "argmin"):
            dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
            if dim is None:
                raise Unsupported(f"{self.task.name}: aten.{name} over all elements (dim=None)")
            return self.reduction(n, self.arg(n, 0), [dim], "r" + name)
        if name in ("max", "min") and len(n.args) >= 2 and isinstance(n.args[1], int):
            r = self.reduction(n, self.arg(n, 0), [n.args[1]], "rmax" if name == "max" else "rmin")
            return (r, None)
        if name in ("var", "std", "var_mean", "std_mean"):
            return self.variance(n, name)
        if name in ("_softmax", "_log_softmax", "softmax", "log_softmax", "_safe_softmax"):
            x = self.arg(n, 0)
            dim = n.args[1]
            m = self.reduction(n, x, [dim], "rmax")
            sh = self.op("sub", x, m)
            e = self.op("exp", sh)
            s = self.reduction(n, e, [dim], "rsum")
            if "log" in name:
                return self.op("sub", sh, self.op("log", s))
            return self.op("div", e, s)
        if name == "logsumexp":
            x = self.arg(n, 0)
            dims = n.args[1]
            m = self.reduction(n, x, dims, "rmax")
            # torch shifts by 0 where the max is infinite
            finite = self.op("cmp", self.op("abs", m), self.const(float("inf")), mode="NE")
            msafe = self.op("where", finite, m, self.const(0.0))
            e = self.op("exp", self.op("sub", x, msafe))
            s = self.reduction(n, e, dims, "rsum")
            return self.op("add", self.op("log", s), msafe)
        if name == "linalg_vector_norm":
            ordv = n.args[1] if len(n.args) > 1 else n.kwargs.get("ord", 2)
            dims = n.args[2] if len(n.args) > 2 else n.kwargs.get("dim")
            if ordv != 2:
                raise Unsupported(f"{self.task.name}: aten.linalg_vector_norm with ord={ordv}")
            x = self.arg(n, 0)
            return self.op("sqrt", self.reduction(n, self.op("sq", x), dims, "rsum"))
        if name == "native_layer_norm":
            x = self.arg(n, 0)
            k = len(n.args[1])
            rank = len(_shape(n.args[0]))
            dims = list(range(rank - k, rank))
            mean = self.op("div", self.reduction(n, x, dims, "rsum"), self.reduced_len())
            d = self.op("sub", x, mean)
            var = self.op("div", self.reduction(n, self.op("sq", d), dims, "rsum"), self.reduced_len())
            rstd = self.op("rsqrt", self.op("add", var, self.arg(n, 4)))
            y = self.op("mul", d, rstd)
            if n.args[2] is not None:
                y = self.op("mul", y, self.arg(n, 2))
            if n.args[3] is not None:
                y = self.op("add", y, self.arg(n, 3))
            return (y, mean, rstd)
        if name == "native_group_norm":
            return self.group_norm(n)
        if name in ("native_batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit"):
            return self.batch_norm(n, name)
        if name in ("empty", "new_zeros", "new_empty"):
            return self.const(0.0)
        raise Unsupported(f"{self.task.name}: aten.{name} is not supported by the lowering")

    def variance(self, n, name):
        x = self.arg(n, 0)
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        corr = n.kwargs.get("correction", 1)
        corr = 1 if corr is None else corr
        if "unbiased" in n.kwargs:
            corr = 1 if n.kwargs["unbiased"] else 0
        if isinstance(dims, int):
            dims = [dims]
        mean = self.op("div", self.reduction(n, x, dims, "rsum"), self.reduced_len())
        d = self.op("sub", x, mean)
        ss = self.reduction(n, self.op("sq", d), dims, "rsum")
        denom = self.reduced_len()
        if corr:
            denom = self.op("sub", denom, self.const(float(corr)))
        var = self.op("div", ss, denom)
        out = self.op("sqrt", var) if name.startswith("std") else var
        return (out, mean) if name.endswith("_mean") else out

    def split(self, n, name):
        x = n.args[0]
        shape = _shape(x)
        dim = (n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)) % len(shape)
        src = self.env[x]
        if src not in self.load_of:
            raise Unsupported(f"{self.task.name}: aten.{name} of a computed value (only of an input)")
        d = shape[dim]
        if name == "split_with_sizes":
            sizes = list(n.args[1])
        else:
            size = n.args[1]
            sizes = [size] * (d // size) + ([d % size] if d % size else [])
        if len(set(sizes)) != 1:
            raise Unsupported(f"{self.task.name}: aten.{name} into unequal parts {sizes}")
        inp = self.p.loads[self.load_of[src]].input
        return tuple(self.load(inp, len(sizes), k, dim - len(shape)) for k in range(len(sizes)))

    def slice(self, n):
        """A whole-axis slice is the value itself; half of an input's last axis is a placeholder
        that `cat` resolves into a lane map of the load (rotate-half)."""
        x = n.args[0]
        shape = _shape(x)
        dim = (n.args[1] if len(n.args) > 1 else 0) % len(shape)
        start = n.args[2] if len(n.args) > 2 and n.args[2] is not None else 0
        end = n.args[3] if len(n.args) > 3 and n.args[3] is not None else shape[dim]
        step = n.args[4] if len(n.args) > 4 else 1
        d = shape[dim]
        start, end = max(0, start + d if start < 0 else start), min(d, end + d if end < 0 else end)
        if step == 1 and start == 0 and end >= d:
            return self.env[x]
        src = self.env[x]
        if step == 1 and dim == len(shape) - 1 and d % 2 == 0 and (start, end) in ((0, d // 2), (d // 2, d)) \
                and src in self.load_of and self.p.loads[self.load_of[src]].chunks == 1:
            half = 0 if start == 0 else 1
            return self.p.add("halfslice", (), "full", input=self.p.loads[self.load_of[src]].input, half=half)
        raise Unsupported(f"{self.task.name}: aten.slice [{start}:{end}:{step}] of axis {dim} (of {d}); "
                          "the lowering takes whole axes and the two halves of an input's last axis")

    def cat(self, n):
        """cat of two halves along the last axis, each computed elementwise from halves of inputs:
        lane j < D/2 takes the first part, the rest the second; a half read at the other position is
        the input's row rotated by D/2."""
        parts = list(n.args[0])
        dim = n.args[1] if len(n.args) > 1 else 0
        shape = _shape(n)
        if len(parts) != 2 or dim % len(shape) != len(shape) - 1 or \
                [_shape(p)[-1] for p in parts] != [shape[-1] // 2] * 2 or shape[-1] % 2:
            raise Unsupported(f"{self.task.name}: aten.cat of {len(parts)} parts along axis {dim}; the lowering "
                              "takes two halves of the last axis")
        placed = [self._place_half(self.env[p], k) for k, p in enumerate(parts)]
        mask = self.p.add("lanemask", (), "full")
        return self.op("where", mask, placed[0], placed[1])

    def _place_half(self, root: int, pos: int) -> int:
        """A copy of the subtree under `root` with each half placeholder replaced by the load that
        puts that half at lanes of half `pos`: the plain row, or the row rotated by D/2."""
        memo: dict[int, int] = {}

        def walk(i):
            if i in memo:
                return memo[i]
            node = self.p.nodes[i]
            if node.op == "halfslice":
                out = self.load(node.params["input"], lanes=() if node.params["half"] == pos else ("rot", 2))
                self.origin_of_load(out)
            elif node.op == "load" or not node.args or node.kind != "full":
                out = i
            else:
                args = tuple(walk(a) for a in node.args)
                out = i if args == node.args else self.p.add(node.op, args, node.kind, **node.params)
            memo[i] = out
            return out
        return walk(root)

    def origin_of_load(self, nid):
        """Lane-mapped loads broadcast like the plain load of the same input."""
        li = self.load_of[nid]
        for k, v in self.load_of.items():
            if v != li and self.p.loads[v].input == self.p.loads[li].input and self.p.loads[v].gap is not None:
                self.p.loads[li].gap = self.p.loads[v].gap

    def repeat(self, n):
        """repeat(1, ..., 1, 2) of an input: its half-length row read twice along the last axis."""
        x = n.args[0]
        reps = list(n.args[1])
        src = self.env[x]
        if src not in self.load_of or reps[-1] != 2 or any(r != 1 for r in reps[:-1]):
            raise Unsupported(f"{self.task.name}: aten.repeat {reps}; the lowering repeats an input's last "
                              "axis twice")
        nid = self.load(self.p.loads[self.load_of[src]].input, lanes=("rep", 2))
        base = list(self.origin.get(x, _shape(x)))
        base[-1] *= 2
        self.origin[n] = tuple(base)
        return nid

    def unit_permute(self, n, name):
        """A permute that only moves unit dims is a reshape."""
        shape = _shape(n.args[0])
        r = len(shape)
        if name == "transpose":
            perm = list(range(r))
            a, b = n.args[1] % r, n.args[2] % r
            perm[a], perm[b] = perm[b], perm[a]
        else:
            perm = [d % r for d in n.args[1]]
        moved = [shape[d] for d in perm if shape[d] != 1]
        if moved != [d for d in shape if d != 1]:
            raise Unsupported(f"{self.task.name}: aten.{name} {perm} of {shape} inside an elementwise program")
        if n.args[0] in self.origin:
            self.origin[n] = self.origin[n.args[0]]
        return self.env[n.args[0]]

    def group_norm(self, n):
        x = self.arg(n, 0)
        N, C, HxW, G = (int(a) for a in n.args[3:7])
        self.p.groups = G
        attr = [a.name for a in self.task.attrs if a.type == "int" and self.case.attrs.get(a.name) == G]
        self.p.group_attr = attr[0] if attr else None
        shape = _shape(n.args[0])
        self.p.main_shape = shape
        self.p.reduce_dims = ("group",)
        mean = self.op("div", self.p.add("rsum", (x,), "stat"), self.reduced_len())
        d = self.op("sub", x, mean)
        var = self.op("div", self.p.add("rsum", (self.op("sq", d),), "stat"), self.reduced_len())
        rstd = self.op("rsqrt", self.op("add", var, self.arg(n, 7)))
        y = self.op("mul", d, rstd)
        for j, opn in ((1, "mul"), (2, "add")):
            if n.args[j] is not None:
                prm = self.arg(n, j)
                self._channel_aligned(prm, len(shape))
                y = self.op(opn, y, prm)
        return (y, mean, rstd)

    def _channel_aligned(self, nid, rank):
        for li in self._loads_under(nid):
            self.p.loads[li].gap = rank - 2

    def batch_norm(self, n, name):
        x = self.arg(n, 0)
        if name == "native_batch_norm":
            w, b, rm, rv, training, eps_i = 1, 2, 3, 4, 5, 7
        else:
            w, b, rm, rv, training, eps_i = 1, 2, 3, 4, None, 6 if name.endswith("no_training") else 7
        if training is not None and n.args[training]:
            raise Unsupported(f"{self.task.name}: aten.{name} in training mode (batch statistics)")
        rank = len(_shape(n.args[0]))
        mean, var = self.arg(n, rm), self.arg(n, rv)
        for v in (mean, var):
            self._channel_aligned(v, rank)
        y = self.op("mul", self.op("sub", x, mean), self.op("rsqrt", self.op("add", var, self.arg(n, eps_i))))
        if n.args[w] is not None:
            self._channel_aligned(self.arg(n, w), rank)
            y = self.op("mul", y, self.arg(n, w))
        if n.args[b] is not None:
            self._channel_aligned(self.arg(n, b), rank)
            y = self.op("add", y, self.arg(n, b))
        return (y, None, None)


_VIEWS = {"view", "_unsafe_view", "reshape", "expand", "unsqueeze", "squeeze", "clone", "contiguous",
          "alias", "detach", "lift_fresh_copy", "lift_fresh", "expand_as", "view_as", "flatten",
          "_reshape_alias", "alias_copy", "view_copy", "expand_copy", "squeeze_copy", "unsqueeze_copy"}

# aten name -> (IR op, number of tensor/number args)
_SIMPLE = {
    "neg": ("neg", 1), "abs": ("abs", 1), "exp": ("exp", 1), "log": ("log", 1), "sqrt": ("sqrt", 1),
    "rsqrt": ("rsqrt", 1), "reciprocal": ("recip", 1), "relu": ("relu", 1), "sigmoid": ("sigmoid", 1),
    "silu": ("silu", 1), "tanh": ("tanh", 1), "erf": ("erf", 1), "mish": ("mish", 1),
    "hardswish": ("hardswish", 1), "log1p": ("log1p", 1), "round": ("round", 1), "trunc": ("trunc", 1),
    "logical_not": ("not", 1), "square": ("sq", 1), "positive": ("id", 1), "gcd": ("gcd", 2),
}


_INPLACE_OF = {"add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal",
               "relu", "sigmoid", "tanh", "clamp", "clamp_min", "clamp_max", "pow", "masked_fill",
               "addcmul", "addcdiv", "lerp", "square", "erf", "log1p", "round", "trunc", "maximum",
               "minimum", "where", "silu", "mish", "hardswish", "leaky_relu", "gelu"}


def _placement(st: list, bl: list):
    """Per dim of `bl`, its position in `st` counted from the end, when `st` is `bl` with unit dims
    inserted (cos[None, :, None, :]); None otherwise."""
    pos, j = [], 0
    for k, d in enumerate(st):
        if j < len(bl) and d == bl[j]:
            pos.append(len(st) - k)
            j += 1
        elif d != 1:
            return None
    return tuple(pos) if j == len(bl) else None


def _target(n) -> str:
    t = n.target
    if t is operator.getitem:
        return "getitem"
    name = getattr(t, "__name__", str(t))
    base = name.split(".")[0]
    if base.endswith("_") and not base.startswith("_") and base[:-1] in _INPLACE_OF:
        return base[:-1]      # in-place op: make_fx rebinds the mutated tensor to this node
    return base


def normalise(task, case, gm, attr_sites: dict) -> Program:
    """Build the Program for one traced case."""
    return _Builder(task, case, gm, attr_sites).run()
