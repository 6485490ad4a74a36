"""Matrix products (`torch.matmul`/`mm`/`F.linear`/`addmm`, transposed operands, batch dims of A
flattened into M) with an elementwise prologue on B (a weight dequant: casts, + / - / * / / by a
per-column vector or a scalar) and an elementwise epilogue on C (bias, scale, relu, casts) lower to
a MIX kernel on the high-level Matmul API (`cannsim/matmul.h`, docs/emulator-cube.md):

- host: `MultiCoreMatmulTiling` splits M x N over the AIVs (SetDim), base blocks of at most 128 x 128
  so that a C tile and its epilogue fit UB; blockDim = AIV blocks / 2 (one AIC serves two AIVs);
- each AIV: the B prologue on its own columns (K x singleCoreN) into its slot of the workspace in the
  cube's dtype (every op computed in fp32 and rounded to the dtype the golden computes it in), then
  SetTensorA/B + Iterate; each baseM x baseN C tile comes to UB (GetTensorC), the epilogue runs on
  the vector unit, DataCopyPad writes it to the output;
- the AIC computes the tiles (GM -> L1 -> L0 -> Mmad -> Fixpipe), L1 panels reused across tiles.

The cube's dtype is A's: fp16 / bf16 / fp32 (an upcast of A and B to fp32 in the golden is exact, the
cube's fp32 accumulation computes the same products). Anything else raises Unsupported with the reason.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

MM_OPS = {"mm", "addmm", "bmm"}
PASS = {"view", "reshape", "_unsafe_view", "clone", "contiguous", "alias", "detach", "unsqueeze", "squeeze",
        "expand", "lift_fresh_copy"}
BINARY = {"add", "sub", "mul", "div", "rsub"}
UNARY = {"relu"}
CUBE_DTYPES = {"float16", "bfloat16", "float32", "int8"}
EXACT_UPCASTS = {"float32", "float64"}     # casts of a cube operand the cube's accumulation covers
_TORCH_NAMES = {"torch.float16": "float16", "torch.bfloat16": "bfloat16", "torch.float32": "float32",
                "torch.int8": "int8", "torch.int32": "int32", "torch.float64": "float64", "torch.int64": "int64"}


@dataclass(frozen=True)
class Op:
    kind: str                  # add sub mul div rsub relu round
    operand: tuple = ()        # ("col", input) | ("row", input) | ("scalar", value) | ()
    dtype: str = "float32"     # the dtype the golden computes it in (round: the target)


@dataclass
class CubePlan:
    task: object
    pattern: str
    a: int
    a_trans: bool
    b: int
    b_trans: bool
    prologue: list[Op]
    epilogue: list[Op]
    vec_round: dict            # input -> dtype its vector is rounded to before use
    variants: list = field(default_factory=list)   # [(input, dtypes, chain)]: the epilogue chosen by a dtype
    group_rule: tuple | None = None   # (attr index, "ends" | "counts"): grouped products' rows per group
    trans_rule: tuple | None = None   # (attr index, negated): B's transpose read from a bool attr
    post: dict | None = None          # a row stage after the product (grouped SwiGLU + dynamic quant)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    served_dtypes: list = field(default_factory=list)   # A's dtypes the tiling function accepts


def is_cube_plan(plan) -> bool:
    return isinstance(plan, CubePlan)


def _dtype_of(n) -> str:
    v = n.meta.get("val") if hasattr(n, "meta") else None
    return _TORCH_NAMES.get(str(getattr(v, "dtype", "")), str(getattr(v, "dtype", "")))


def _shape_of(n) -> tuple:
    v = n.meta.get("val")
    return tuple(int(d) for d in v.shape) if v is not None else ()


def trace_case(task, case):
    """The golden traced (`tracer.py`) on tensors of the case's shapes and dtypes (absent optional
    inputs are None); returns (GraphModule, input index of each placeholder)."""
    import torch

    from copilot.lowering.capture import _torch_dtype
    from copilot.lowering.tracer import trace_graph

    present = [i for i, s in enumerate(case.shapes) if s is not None]
    if any(any(isinstance(d, (list, tuple)) for d in case.shapes[i]) for i in present):
        raise Unsupported(f"{task.name}: case {case.id} has a tensor-list input (grouped / multi-layer operands "
                          "are not lowered)")
    sample = [(tuple(case.shapes[i]), _torch_dtype(case.dtypes[i])) for i in present]
    names = [i.name for i in task.inputs]
    try:
        params = inspect.signature(task.golden).parameters
        by_name = all(n in params for n in names)
    except (TypeError, ValueError):
        by_name = False
    attrs = {k: v for k, v in case.attrs.items() if v is not None}

    def fn(*xs):
        vals = [None] * len(names)
        for i, x in zip(present, xs):
            vals[i] = x
        if by_name:
            return task.golden(**dict(zip(names, vals)), **attrs)
        return task.golden(*vals, **attrs)

    try:
        with torch.no_grad():
            gm = trace_graph(fn, sample)
    except Exception as exc:
        raise Unsupported(f"{task.name}: the golden could not be traced on case {case.id} "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]})") from None
    return gm, present


def _matmuls(gm) -> list:
    return [n for n in gm.graph.nodes if n.op == "call_function" and _name(n) in MM_OPS]


def _is_transpose(n) -> bool:
    nm = _name(n)
    if nm == "t":
        return True
    if nm == "transpose":
        rank = len(_shape_of(n))
        dims = sorted(d % rank for d in n.args[1:3])
        return dims == [rank - 2, rank - 1]
    if nm == "permute":
        p = list(n.args[1])
        return len(p) >= 2 and p[:-2] == list(range(len(p) - 2)) and p[-2:] == [len(p) - 1, len(p) - 2]
    return False


def _cast_dtype(n) -> str | None:
    if _name(n) in ("_to_copy", "to", "type_as") and "dtype" in n.kwargs:
        return _TORCH_NAMES.get(str(n.kwargs["dtype"]), str(n.kwargs["dtype"]))
    if _name(n) in ("_to_copy",) and not n.kwargs.get("dtype"):
        return _dtype_of(n)
    return None


class _Graph:
    def __init__(self, task, gm, present):
        self.task = task
        self.places = {n: present[k] for k, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder")}
        out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        self.out = out[0] if isinstance(out, (list, tuple)) else out
        self.outs = list(out) if isinstance(out, (list, tuple)) else [out]
        self.picks = None          # grouped products: the row slices / group selects met on the way

    def pick(self, n) -> bool:
        """A row slice (slice on dim 0, step 1) or a group select (select on dim 0) of a grouped
        product's operand, recorded; False if n is neither or the products are not grouped."""
        if self.picks is None or _name(n) not in ("slice", "select"):
            return False
        args = list(n.args) + [None] * 4
        if args[1] not in (0, None) or (_name(n) == "slice" and args[4] not in (None, 1)):
            return False
        if _name(n) == "select":
            self.picks.append(("select", int(args[2])))
        else:
            self.picks.append(("slice", int(args[2] or 0), int(args[3])))
        return True

    def fail(self, why: str):
        raise Unsupported(f"{self.task.name}: {why}")

    def source(self, n, allow_trans: bool):
        """Walk back through views, exact upcasts and (if allowed) transposes to a placeholder:
        (input, transposed, casts)."""
        trans, casts = False, []
        while n not in self.places:
            if not hasattr(n, "op") or n.op != "call_function":
                self.fail(f"a matrix operand is not an input ({n})")
            nm = _name(n)
            if nm in PASS or self.pick(n):
                n = n.args[0]
            elif _cast_dtype(n) is not None:
                casts.append(_cast_dtype(n))
                n = n.args[0]
            elif _is_transpose(n) and allow_trans:
                trans = not trans
                n = n.args[0]
            else:
                return None
        return self.places[n], trans, casts

    def column(self, n, ncols: int):
        """A per-column vector operand ([N], [1], [..., 1, N]; leading dims broadcast or one per batch):
        (input, the dtype it is rounded to)."""
        vec = self.vector(n, ncols, None)
        return vec[1:] if vec and vec[0] == "col" else None

    def vector(self, n, ncols: int, nrows: int | None):
        """A broadcast operand of the product's [..., M, N] result: ("col", input, low) for [N] / [1] /
        [..., 1, N] (leading dims one per batch), ("row", input, low) for [..., M, 1]; None otherwise."""
        src = self.source(n, allow_trans=False)
        if src is None:
            return None
        i, _, casts = src
        shape = _shape_of(n) if hasattr(n, "meta") and n.meta.get("val") is not None else ()
        if not shape:
            return None
        low = next((c for c in casts if c in ("float16", "bfloat16")), None)
        if shape[-1] in (ncols, 1) and (len(shape) == 1 or shape[-2] == 1):
            return "col", i, low
        if nrows is not None and nrows > 1 and shape[-1] == 1 and len(shape) >= 2 and shape[-2] == nrows and \
                all(d == 1 for d in shape[:-2]):
            return "row", i, low
        return None

    def elementwise(self, n, main, ncols: int, vec_round: dict, nrows: int | None = None):
        """The op of node n applied to `main` (the matrix path): an Op, or None if n is not one."""
        nm = _name(n)
        dt = _dtype_of(n)
        if nm in UNARY:
            return Op(nm, (), dt)
        if nm not in BINARY:
            return None
        args = list(n.args[:2])
        if n.kwargs.get("alpha", 1) != 1:
            self.fail(f"{nm} with alpha {n.kwargs['alpha']}")
        if args[0] is main:
            other, kind = args[1], nm
        elif args[1] is main and nm in ("add", "mul"):
            other, kind = args[0], nm
        elif args[1] is main and nm == "sub":
            other, kind = args[0], "rsub"
        else:
            self.fail(f"{nm} takes the matrix as its divisor or twice")
        if isinstance(other, (int, float)):
            return Op(kind, ("scalar", float(other)), dt)
        vec = self.vector(other, ncols, nrows)
        if vec is None:
            self.fail(f"an operand of {nm} next to the matrix product is neither a scalar nor a per-column "
                      f"vector of {ncols} elements{' nor a per-row one' if nrows else ''} (full tensors are not lowered)")
        where, i, low = vec
        if low:
            vec_round[i] = low
        return Op(kind, (where, i), dt)


def _analyse(task, case):
    gm, present = trace_case(task, case)
    mms = _matmuls(gm)
    if not mms:
        return None
    g = _Graph(task, gm, present)
    if len(mms) == 1:
        try:
            return _product(task, case, g, mms[0]) + (None, None)
        except Unsupported as exc:
            try:
                return _grouped(task, case, g, mms)       # a grouped golden with one group
            except Unsupported:
                raise exc from None
    return _grouped(task, case, g, mms)


def _grouped(task, case, g, mms):
    """Several products that each take a row slice of one input and the g-th slice of a stacked
    weight (and of stacked vectors) and write their rows of one output buffer: one chain for all,
    the groups' rows (start, end) per group index."""
    g.picks = []
    first, groups = None, {}
    for mm in mms:
        g.picks = []
        try:
            r = _product(task, case, g, mm, grouped=True)
        except Unsupported as exc:
            why = str(exc).split(": ", 1)[-1]
            g.fail(f"{len(mms)} matrix products that are not one grouped product ({why})")
        sl = [p for p in g.picks if p[0] == "slice"]
        sel = {p[1] for p in g.picks if p[0] == "select"}
        if len(sl) < 2 or len(set(sl)) != 1 or len(sel) != 1:
            g.fail(f"{len(mms)} matrix products that are not one grouped product (row slices of one input "
                   "by slices of a stacked weight, into their rows of one output)")
        gi = sel.pop()
        if first is None:
            first = r
        elif r[:4] != first[:4] or _canon(r[4]) != _canon(first[4]) or _canon(r[5]) != _canon(first[5]):
            g.fail(f"the {len(mms)} products of a grouped golden differ in their operands or chains")
        if gi in groups:
            g.fail(f"group {gi} has two products")
        groups[gi] = sl[0][1:]
    spans = sorted(groups.values())
    if spans[0][0] != 0 or any(x[1] != y[0] for x, y in zip(spans, spans[1:])):
        g.fail("the grouped products' rows do not cover the output back to back")
    if all(_out_of(o, g.buffer) for o in g.outs):
        return first + (groups, None)
    return first + (groups, _swiglu_quant(g, g.buffer))


def _one_user(g, n, names: tuple):
    users = [u for u in n.users if _name(u) != "copy_"]
    if len(users) != 1 or _name(users[0]) not in names:
        g.fail(f"the grouped products' buffer is followed by {[_name(u) for u in users]}, not a SwiGLU + "
               "per-row dynamic quant")
    return users[0]


def _swiglu_quant(g, buf) -> dict:
    """The stage after a grouped product's buffer [M, N]: SwiGLU on the last dim's halves
    (silu(left) * right) and a per-row dynamic quant (scale = max(amax|act|, eps) / qmax,
    y = clamp(round(act / scale), lo, hi) to an integer dtype); the two outputs' positions."""
    bad = "the grouped products' buffer is followed by a stage other than a SwiGLU + per-row dynamic quant"
    rank = len(_shape_of(buf))
    n_cols = _shape_of(buf)[-1]
    views = [buf] + [u for u in buf.users if _name(u) == "copy_" and u.args[0] is buf]   # copy_ returns buf
    halves = [u for v in views for u in v.users if _name(u) == "slice" and u.args[1] % rank == rank - 1]
    if len(halves) != 2:
        g.fail(bad)
    left, right = sorted(halves, key=lambda h: h.args[2] or 0)
    if (left.args[2] or 0) != 0 or left.args[3] != n_cols // 2 or right.args[2] != n_cols // 2 or n_cols % 2:
        g.fail(bad)
    silu = _one_user(g, left, ("silu",))
    act = _one_user(g, silu, ("mul",))
    if set(act.args[:2]) != {silu, right}:
        g.fail(bad)
    users = {_name(u): u for u in act.users}
    if set(users) != {"abs", "div"}:
        g.fail(bad)
    amax = _one_user(g, users["abs"], ("amax",))
    if [d % rank for d in amax.args[1]] != [rank - 1]:
        g.fail(bad)
    cmin = _one_user(g, amax, ("clamp_min",))
    sdiv = _one_user(g, cmin, ("div",))
    eps, qmax = float(cmin.args[1]), float(sdiv.args[1])
    q = users["div"]
    unsq = q.args[1]
    if q.args[0] is not act or _name(unsq) != "unsqueeze" or unsq.args[0] is not sdiv:
        g.fail(bad)
    rnd = _one_user(g, q, ("round",))
    clamp = _one_user(g, rnd, ("clamp",))
    cast = _one_user(g, clamp, ("_to_copy",))
    lo, hi = float(clamp.args[1]), float(clamp.args[2])
    if len(g.outs) != 2 or _dtype_of(cast) != "int8":
        g.fail(bad)

    def is_scale(o):
        while o is not sdiv and hasattr(o, "op") and _name(o) in ("_to_copy", "clone", "alias") and \
                _dtype_of(o) == "float32":
            o = o.args[0]
        return o is sdiv

    if g.outs[0] is cast and is_scale(g.outs[1]):
        order = (0, 1)
    elif g.outs[1] is cast and is_scale(g.outs[0]):
        order = (1, 0)
    else:
        g.fail(bad)
    return {"kind": "swiglu_quant", "eps": eps, "qmax": qmax, "lo": lo, "hi": hi, "y": order[0], "scale": order[1]}


def _product(task, case, g, mm, grouped: bool = False):
    """One product's operands and chains: (a, a_trans, b, b_trans, prologue, epilogue, vec_round)."""
    a_node, b_node = (mm.args[1], mm.args[2]) if _name(mm) == "addmm" else (mm.args[0], mm.args[1])
    asrc = g.source(a_node, allow_trans=True)
    if asrc is None:
        g.fail("the left operand is computed, not an input (only the right one may have a prologue)")
    a, a_trans, a_casts = asrc
    cube_dt = case.dtypes[a]
    if cube_dt not in CUBE_DTYPES:
        g.fail(f"input {task.inputs[a].name} of dtype {cube_dt}: the lowering's cube dtypes are fp16/bf16/fp32/int8")
    if any(c not in {cube_dt} | EXACT_UPCASTS for c in a_casts):
        g.fail(f"the left operand is cast to {a_casts}")
    a_shape = list(case.shapes[a])
    if a_trans and len(a_shape) != 2:
        g.fail("a transposed left operand with batch dims")
    batch = 1
    if grouped:
        batch = task_dims = int(case.shapes[g.source(b_node, allow_trans=True)[0]][0])
        del task_dims
    if _name(mm) == "bmm":
        bsrc = g.source(b_node, allow_trans=True)
        if bsrc is None:
            g.fail("a batched product (bmm) whose right operand is computed")
        b_shape = list(case.shapes[bsrc[0]])
        if len(b_shape) < 3 or len(a_shape) != len(b_shape) or a_shape[:-2] != b_shape[:-2] or a_trans:
            g.fail(f"a batched product (bmm) of {a_shape} and {b_shape}: both operands must carry the same "
                   "batch dims (A not transposed)")
        batch = _prod(b_shape[:-2])
    n_cols = _shape_of(mm)[-1]
    vec_round: dict = {}
    # B: walk back from the product through the prologue to the weight
    prologue: list[Op] = []
    n, b_trans = b_node, False
    while n not in g.places:
        if not hasattr(n, "op") or n.op != "call_function":
            g.fail(f"the right operand is not an input ({n})")
        nm = _name(n)
        if nm in PASS:
            n = n.args[0]
            continue
        if _cast_dtype(n) is not None:
            if _cast_dtype(n) in ("float16", "bfloat16"):
                prologue.append(Op("round", (), _cast_dtype(n)))
            n = n.args[0]
            continue
        if g.pick(n):
            n = n.args[0]
            continue
        if _is_transpose(n):
            if prologue:
                g.fail("a transpose inside the right operand's prologue")
            b_trans = not b_trans
            n = n.args[0]
            continue
        main = n.args[0] if not isinstance(n.args[0], (int, float)) else n.args[1]
        if nm in BINARY and hasattr(n.args[1], "op") and not g.column(n.args[1], n_cols) and \
                g.column(n.args[0], n_cols):
            main = n.args[1]
        op = g.elementwise(n, main, n_cols, vec_round)
        if op is None:
            g.fail(f"aten.{nm} in the right operand's prologue")
        prologue.append(op)
        n = main
    b = g.places[n]
    prologue.reverse()
    if prologue and b_trans:
        g.fail("a prologue on a transposed right operand")
    if grouped and (len(case.shapes[b]) != 3 or prologue):
        g.fail("the right operand is not one group of a stacked [E, K, N] weight without a prologue")
    if not grouped and len(case.shapes[b]) != 2 and (batch == 1 or prologue):
        g.fail("a right operand with batch dims" + (" and a prologue" if prologue else " (not a bmm)"))
    if cube_dt == "int8" and (prologue or case.dtypes[b] != "int8"):
        g.fail("an int8 left operand with a right one that is not int8")
    if not prologue and case.dtypes[b] != cube_dt:
        g.fail(f"the operands have dtypes {cube_dt} and {case.dtypes[b]} with no elementwise prologue between")
    # C: forward from the product to the output
    epilogue: list[Op] = []
    if _name(mm) == "addmm":
        if mm.kwargs.get("beta", 1) != 1 or mm.kwargs.get("alpha", 1) != 1:
            g.fail("addmm with beta/alpha other than 1")
        col = g.column(mm.args[0], n_cols)
        if col is None:
            g.fail("addmm's bias is not a per-column vector")
        if col[1]:
            vec_round[col[0]] = col[1]
        epilogue.append(Op("add", ("col", col[0]), _dtype_of(mm)))
    n_rows = _shape_of(mm)[-2]
    n = mm
    while n is not g.out:
        users = list(n.users)
        if len(users) != 1:
            g.fail("the product's result is used more than once")
        u = users[0]
        nm = _name(u)
        if grouped and nm == "copy_" and u.args[1] is n:
            dst, buffers = u.args[0], ("zeros", "empty", "new_zeros", "zeros_like")
            if _name(dst) in buffers:               # every row: the buffer itself
                g.picks.append(("slice", 0, _shape_of(dst)[0]))
                buf = dst
            else:
                buf = dst.args[0] if g.pick(dst) else None
            if buf is None or _name(buf) not in buffers or getattr(g, "buffer", buf) is not buf:
                g.fail("a grouped product written elsewhere than rows of one buffer")
            g.buffer = buf
            break
        if nm in PASS:
            pass
        elif _cast_dtype(u) is not None:
            if _cast_dtype(u) in ("float16", "bfloat16"):
                epilogue.append(Op("round", (), _cast_dtype(u)))
            elif _cast_dtype(u) != "float32":
                g.fail(f"a cast of the product to {_cast_dtype(u)}")
        else:
            op = g.elementwise(u, n, n_cols, vec_round, n_rows)
            if op is None:
                g.fail(f"aten.{nm} after the matrix product")
            epilogue.append(op)
        n = u
    # the last rounding to the output's dtype is the kernel's store
    out_dt = _dtype_of(g.out)
    while epilogue and epilogue[-1].kind == "round" and epilogue[-1].dtype == out_dt:
        epilogue.pop()
    for op in epilogue:
        if op.operand and op.operand[0] == "col":
            numel = _prod(case.shapes[op.operand[1]])
            if numel not in (1, n_cols, batch * n_cols):
                g.fail(f"input {task.inputs[op.operand[1]].name} of {numel} elements broadcast over the product's "
                       f"columns (1, {n_cols} or {batch} x {n_cols} are lowered)")

    # dtypes relative to A's: one kernel serves the fp16 and the bf16 cases
    def rel(ops):
        return [Op(o.kind, o.operand, "A" if o.dtype == cube_dt else o.dtype) for o in ops]

    vec_round = {i: ("A" if d == cube_dt else d) for i, d in vec_round.items()}
    return a, a_trans, b, b_trans, rel(prologue), rel(epilogue), vec_round


def _out_of(o, buf) -> bool:
    """Output o is buffer `buf` or a row slice of it (a tensor-list output of its groups' rows)."""
    while o is not buf:
        if not hasattr(o, "op") or _name(o) not in ("slice", "alias", "view", "clone", "contiguous", "copy_"):
            return False
        if _name(o) == "slice" and o.args[1] != 0:
            return False
        o = o.args[0]
    return True


def _prod(dims) -> int:
    out = 1
    for d in dims:
        out *= int(d)
    return out


def _without_absent(ops: list[Op], absent: set) -> list[Op]:
    return [o for o in ops if not (o.operand and o.operand[0] in ("col", "row") and o.operand[1] in absent)]


def _canon(ops: list[Op]) -> list[tuple]:
    """A chain as the cases compare it: rounding to A's dtype and computing in it or in fp32 are one
    thing when A is fp32 (the fp32 case of a golden has no casts where the fp16 case has them)."""
    return [(o.kind, o.operand, "X" if o.dtype in ("A", "float32", "float64") else o.dtype) for o in ops
            if not (o.kind == "round" and o.dtype == "A")]


def _group_rule(task, cases, b: int) -> tuple:
    """The list attr that gives the grouped products' rows: (attr index, "ends") when it holds each
    group's cumulative end row, (attr index, "counts") when it holds each group's row count."""
    def fits(vals, groups, mode, n_groups):
        if len(vals) != n_groups:
            return False
        start = 0
        for gi, v in enumerate(vals):
            end = int(v) if mode == "ends" else start + int(v)
            if (gi in groups and groups[gi] != (start, end)) or (gi not in groups and end != start):
                return False
            start = end
        return True

    def n_groups(c):
        return int(c.shapes[b][0])

    for k, spec in enumerate(task.attrs):
        for mode in ("ends", "counts"):
            if all(groups is not None and isinstance(c.attrs.get(spec.name), (list, tuple)) and
                   fits(c.attrs[spec.name], groups, mode, n_groups(c))
                   for c, groups in cases):
                return k, mode
    raise Unsupported(f"{task.name}: the grouped products' rows follow no list attr (cumulative ends or counts)")


def _bool_attr_rule(task, cases) -> tuple | None:
    """(attr index, negated) of a bool attr that equals the per-case flag (or its negation)."""
    for k, spec in enumerate(task.attrs):
        vals = [c.attrs.get(spec.name, spec.default) for c, _ in cases]
        if not all(isinstance(v, bool) for v in vals):
            continue
        for neg in (False, True):
            if all(v != neg if flag else v == neg for v, (_, flag) in zip(vals, cases)):
                return k, neg
    return None


def _variants(task, groups) -> list[tuple]:
    """The epilogue variants of `groups` told apart by one input's dtype (a compile-time choice in the
    kernel): [(input, dtypes, chain)], the last one also serving cases without that input."""
    for i, spec in enumerate(task.inputs):
        sets = [{c.dtypes[i] for c in g[2] if c.shapes[i] is not None} for g in groups]
        if not all(sets) or any(sets[x] & sets[y] for x in range(len(sets)) for y in range(x + 1, len(sets))):
            continue
        default = spec.dtypes[0] if spec.dtypes else None     # an absent input's dtype macro
        picked = next((k for k, st in enumerate(sets) if default in st), len(groups) - 1)
        ok = all(_canon(_without_absent(g[1], {i})) == _canon(_without_absent(groups[picked][1], {i}))
                 for g in groups for c in g[2] if c.shapes[i] is None)
        if ok:
            chains = [(i, sorted(st), g[1]) for st, g in zip(sets, groups)]
            return chains[:picked] + chains[picked + 1:] + [chains[picked]]
    raise Unsupported(f"{task.name}: cases {', '.join(str(g[0].id) for g in groups)} have different epilogues "
                      "and no input's dtype tells them apart")


def plan_cube(task):
    """The cube plan of `task`, None when its golden has no matrix product; Unsupported when it has
    one this lowering does not handle."""
    if not task.cases:
        return None
    try:
        first = trace_case(task, task.cases[0])[0]
    except Exception:                 # noqa: BLE001 - not traceable this way: the other planners decide
        return None
    mms = _matmuls(first)
    if not mms:
        return None
    if len(task.outputs) > 2:         # said here: the vector planner after this one would only name the op
        raise Unsupported(f"{task.name}: aten.{_name(mms[0])}: {len(mms)} matrix product(s) into "
                          f"{len(task.outputs)} outputs; the cube lowering writes one product (or one grouped "
                          "product) and at most one stage after it, 2 outputs at the most")
    found, unserved = [], {}
    for case in task.cases:
        try:
            r = _analyse(task, case)
        except Unsupported as exc:
            if "cube dtypes" not in str(exc):
                raise
            unserved[case.id] = str(exc).split(": ", 1)[1]    # refused by the tiling function
            continue
        if r is None:
            raise Unsupported(f"{task.name}: case {case.id} has no matrix product but others do")
        found.append((case, r))
    if not found:
        raise Unsupported(f"{task.name}: {next(iter(unserved.values()))}")
    # the case with every input: the master chains; the others drop the ops of their absent inputs.
    # Cases whose epilogue differs (a golden branching on an input's dtype) form variants.
    order = sorted(found, key=lambda cr: (-sum(s is not None for s in cr[0].shapes), cr[0].dtypes[cr[1][0]] == "float32"))
    full = order[0]
    a, a_trans, b, b_trans, prologue, epilogue, vec_round, _, post = full[1]
    if any(r[8] != post for _, r in found):
        raise Unsupported(f"{task.name}: the cases differ in the stage after the product")
    if post is None and len(task.outputs) != 1:
        raise Unsupported(f"{task.name}: {len(task.outputs)} outputs of one matrix product")
    group_rule = _group_rule(task, [(c, r[7]) for c, r in found], b) if any(r[7] is not None for _, r in found) else None
    trans_rule = None
    if len({r[3] for _, r in found}) > 1:                 # B transposed in some cases: by a bool attr
        trans_rule = _bool_attr_rule(task, [(c, r[3]) for c, r in found])
        if trans_rule is None:
            raise Unsupported(f"{task.name}: B is transposed in some cases and no bool attr says which")
        order = [(c, r[:3] + (b_trans,) + r[4:]) for c, r in order]
    groups: list[tuple] = []          # (master case, its epilogue, [cases])
    for case, r in order:
        absent = {i for i, s in enumerate(case.shapes) if s is None}
        if r[:4] != (a, a_trans, b, b_trans) or _canon(r[4]) != _canon(_without_absent(prologue, absent)):
            raise Unsupported(f"{task.name}: case {case.id} lowers to a different product or chain than case "
                              f"{full[0].id}")
        vec_round.update(r[6])
        g = next((g for g in groups if _canon(r[5]) == _canon(_without_absent(g[1], absent))), None)
        if g is None:
            groups.append((case, r[5], [case]))
        else:
            g[2].append(case)
    variants = _variants(task, groups) if len(groups) > 1 else []
    for op in prologue + [o for v in variants for o in v[2]] + epilogue:
        if op.operand and op.operand[0] in ("col", "row") and not task.inputs[op.operand[1]].optional and \
                any(c.shapes[op.operand[1]] is None for c in task.cases):
            raise Unsupported(f"{task.name}: input {task.inputs[op.operand[1]].name} is absent in a case")
    plan = CubePlan(task, "matmul", a, a_trans, b, b_trans, prologue, epilogue, vec_round, unserved)
    plan.variants = variants
    plan.group_rule, plan.trans_rule, plan.post = group_rule, trans_rule, post
    plan.served_dtypes = sorted({c.dtypes[a] for c, _ in found})
    plan.notes.append(f"matmul: A = {task.inputs[a].name}{'^T' if a_trans else ''}, "
                      f"B = {'prologue(' if prologue else ''}{task.inputs[b].name}{')' if prologue else ''}"
                      f"{'^T' if b_trans else ''}, epilogue of {len(epilogue)} op(s)")
    return plan


# ---------------------------------------------------------------------------------------------
# The kernel

def _op_code(op: Op, row: str, vec: str, n: str, tmp: str) -> str:
    """One chain op on a float row `row` of `n` elements (vec: the op's vector, a float LocalTensor)."""
    k, (src, val) = op.kind, (op.operand + (None, None))[:2]
    if op.kind == "round":
        return f"RoundTo<{_cpp(op.dtype)}>({row}, {tmp}, {n});"
    if k == "relu":
        return f"Relu({row}, {row}, {n});"
    if src in ("scalar", "row"):
        v = vec if src == "row" else f"{float(val)!r}f".replace("inff", "INFINITY")
        return {"add": f"Adds({row}, {row}, {v}, {n});", "sub": f"Adds({row}, {row}, -{v}, {n});",
                "mul": f"Muls({row}, {row}, {v}, {n});", "div": f"Muls({row}, {row}, 1.0f / {v}, {n});",
                "rsub": f"Muls({row}, {row}, -1.0f, {n}); Adds({row}, {row}, {v}, {n});"}[k]
    return {"add": f"Add({row}, {row}, {vec}, {n});", "sub": f"Sub({row}, {row}, {vec}, {n});",
            "mul": f"Mul({row}, {row}, {vec}, {n});", "div": f"Div({row}, {row}, {vec}, {n});",
            "rsub": f"Sub({row}, {vec}, {row}, {n});"}[k]


_GE = {"float16": "DT_FLOAT16", "bfloat16": "DT_BF16", "float32": "DT_FLOAT", "int8": "DT_INT8"}


def _cpp(dt: str) -> str:
    return {"A": "AT", "float16": "half", "bfloat16": "bfloat16_t", "float32": "float"}[dt]


def _chain(plan: CubePlan, ops: list[Op], row: str, n: str, indent: str, rep: str = "vec_") -> str:
    from copilot.lowering.source import _ident

    lines = []
    for op in ops:
        if op.operand and op.operand[0] in ("col", "row"):
            i = op.operand[1]
            pre = "rv_" if op.operand[0] == "row" else rep
            code = _op_code(op, row, f"{pre}{_ident(plan.task.inputs[i].name)}", n, "roundTmp")
            if plan.task.inputs[i].optional:
                lines.append(f"{indent}if (t_.present[{i}]) {{ {code} }}")
            else:
                lines.append(f"{indent}{code}")
        else:
            rounded = op.kind != "round" and op.dtype in ("A", "float16", "bfloat16")
            lines.append(f"{indent}{_op_code(op, row, '', n, 'roundTmp')}")
            if rounded:
                lines.append(f"{indent}RoundTo<{_cpp(op.dtype)}>({row}, roundTmp, {n});")
            continue
        if op.dtype in ("A", "float16", "bfloat16"):
            lines.append(f"{indent}RoundTo<{_cpp(op.dtype)}>({row}, roundTmp, {n});")
    return "\n".join(lines)


def _vectors(plan: CubePlan, ops: list[Op], where: str = "col") -> list[int]:
    seen: list[int] = []
    for op in ops:
        if op.operand and op.operand[0] == where and op.operand[1] not in seen:
            seen.append(op.operand[1])
    return seen


def _vector_loads(plan: CubePlan, vecs: list[int], col0: str, n: str, indent: str, batched: bool = False) -> str:
    from copilot.lowering.source import _ident

    out = []
    for i in vecs:
        nm = _ident(plan.task.inputs[i].name)
        off = f"(t_.vlen[{i}] > t_.n ? static_cast<uint64_t>(bi) * t_.n : 0) + {col0}" if batched else col0
        load = f"LoadVector<DT_{nm.upper()}_T>(vec_{nm}, {nm}Gm_, {off}, {n}, t_.vlen[{i}], vecRaw, roundTmp);"
        if plan.task.inputs[i].optional:
            out.append(f"{indent}if (t_.present[{i}]) {{ {load} }}")
        else:
            out.append(f"{indent}{load}")
    return "\n".join(out)


def _row_values(plan: CubePlan, rows: list[int], indent: str) -> str:
    """The per-row scalars of the row vectors ([..., M, 1]) for row r of the tile."""
    from copilot.lowering.source import _ident

    out = []
    for i in rows:
        nm = _ident(plan.task.inputs[i].name)
        val = f"static_cast<float>({nm}Gm_.GetValue((rowBase + r) % t_.vlen[{i}]))"
        if plan.task.inputs[i].optional:
            val = f"t_.present[{i}] ? {val} : 0.0f"
        out.append(f"{indent}const float rv_{nm} = {val};")
    return "\n".join(out)


def _epilogue_code(plan: CubePlan, indent: str) -> str:
    """The epilogue chain, or its variants chosen at compile time by an input's dtype macro."""
    from copilot.dtypes import dtype as lookup_dtype
    from copilot.lowering.source import _macro_of

    if not plan.variants:
        return _chain(plan, plan.epilogue, "row", "nt", indent)
    out = []
    for k, (i, dtypes, chain) in enumerate(plan.variants):
        body = _chain(plan, chain, "row", "nt", indent + "    ")
        if k == len(plan.variants) - 1:
            out.append(f"{indent}{'} else {' if k else '{'}\n{body}")
            continue
        cond = _variant_cond(plan, k)
        out.append(f"{indent}{'} else ' if k else ''}if constexpr ({cond}) {{\n{body}")
    return "\n".join(out) + f"\n{indent}}}"


def _variant_cond(plan: CubePlan, k: int, host: bool = False) -> str:
    """The condition that selects variant k (the last one: none of the others): at compile time on the
    device (the dtype macros), at run time on the host (an absent input: the last variant)."""
    from copilot.dtypes import dtype as lookup_dtype
    from copilot.lowering.source import _macro_of

    if k == len(plan.variants) - 1:
        return "!(" + " || ".join(_variant_cond(plan, j, host) for j in range(k)) + ")"
    i, dtypes, _ = plan.variants[k]
    if host:
        return (f"(t->present[{i}] && (" + " || ".join(
            f"context->GetOptionalInputDesc({i})->GetDataType() == ge::{lookup_dtype(d).ge}" for d in dtypes) + "))")
    return "(" + " || ".join(f"std::is_same<{_macro_of(plan.task.inputs[i].name)}, {lookup_dtype(d).cpp}>::value"
                             for d in dtypes) + ")"


def _refused_inputs(plan: CubePlan, unused: list[int]) -> str:
    """The tiling's refusal: an optional input present that the chosen chain has no op for (no public
    case shows where the golden applies it)."""
    terms = [f"t->present[{i}]" for i in unused]
    for k, (_, _, chain) in enumerate(plan.variants):
        mine = {o.operand[1] for o in chain if o.operand and o.operand[0] in ("col", "row")}
        others = {o.operand[1] for v in plan.variants for o in v[2] if o.operand and o.operand[0] in ("col", "row")}
        missing = sorted(others - mine)
        if missing:
            terms.append(f"({_variant_cond(plan, k, host=True)} && ({' || '.join(f't->present[{i}]' for i in missing)}))")
    return " || ".join(terms) or "false"


def _epilogue_ops(plan: CubePlan) -> list[Op]:
    return [o for v in plan.variants for o in v[2]] if plan.variants else plan.epilogue


def _post_bind(plan: CubePlan) -> str:
    """The row stage's outputs and constants (SwiGLU + dynamic quant)."""
    p = plan.post
    if not p:
        return ""
    return (f"            qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ YT*>(outs[{p['y']}]));\n"
            f"            qScaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(outs[{p['scale']}]));")


def render(plan: CubePlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    ins = t.inputs
    an, bn, yn = _ident(ins[plan.a].name), _ident(ins[plan.b].name), _ident(t.outputs[0].name)
    epi_ops = _epilogue_ops(plan)
    pro_vecs, epi_vecs, row_vecs = _vectors(plan, plan.prologue), _vectors(plan, epi_ops), _vectors(plan, epi_ops, "row")
    bound = list(dict.fromkeys(pro_vecs + epi_vecs + row_vecs))
    vec_types = "\n".join(f"using DT_{_ident(ins[i].name).upper()}_T = {_macro_of(ins[i].name)};" for i in bound)
    vec_members = "\n".join(f"    GlobalTensor<DT_{_ident(ins[i].name).upper()}_T> {_ident(ins[i].name)}Gm_;"
                            for i in bound)
    vec_bind = "\n".join(f"        {_ident(ins[i].name)}Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ "
                         f"DT_{_ident(ins[i].name).upper()}_T*>(args[{i}]));" for i in bound)
    used = {plan.a, plan.b, *bound}
    unused = [i for i, spec in enumerate(ins) if i not in used and spec.optional]
    pro_decl = "\n".join(f"        LocalTensor<float> vec_{_ident(ins[i].name)} = vecBuf_.Get<float>()[{k} * VEC_CAP];\n"
                         f"        LocalTensor<float> rep_{_ident(ins[i].name)} = "
                         f"repBuf_.Get<float>()[{k} * rowsMax * pitch];"
                         for k, i in enumerate(pro_vecs))
    epi_decl = "\n".join(f"        LocalTensor<float> vec_{_ident(ins[i].name)} = vecBuf_.Get<float>()[{k} * VEC_CAP];"
                         for k, i in enumerate(epi_vecs))
    n_vec = max(len(pro_vecs), len(epi_vecs), 1)
    present = "\n".join(
        f"    t->present[{i}] = context->GetOptionalInputShape({i}) == nullptr ? 0 : 1;\n"
        f"    t->vlen[{i}] = t->present[{i}] ? static_cast<uint32_t>(context->GetOptionalInputShape({i})"
        f"->GetStorageShape().GetShapeSize()) : 0;" for i in range(len(ins)))
    text = _KERNEL + "\n" + _TILING
    subs = {
        "@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
        "@NIN@": str(len(ins)), "@AT@": _macro_of(ins[plan.a].name), "@BT@": _macro_of(ins[plan.b].name),
        "@YT@": _macro_of(t.outputs[plan.post["y"] if plan.post else 0].name), "@AI@": str(plan.a), "@BI@": str(plan.b),
        "@ATRANS@": "true" if plan.a_trans else "false", "@BTRANS@": "true" if plan.b_trans else "false",
        "@PROLOGUE@": "true" if plan.prologue else "false",
        "@BTRANS_TYPE@": "true" if plan.b_trans or plan.trans_rule else "false",
        "@TRANSB@": (f"(*attrs->GetBool({plan.trans_rule[0]}) != {'true' if plan.trans_rule[1] else 'false'})"
                     if plan.trans_rule else ("true" if plan.b_trans else "false")),
        "@GROUPED@": "true" if plan.group_rule else "false",
        "@POST@": "true" if plan.post else "false",
        "@TT@": "float" if plan.post else "YT",
        "@TILECAP@": "128 * 64" if plan.post else "128 * 128",
        "@OUTARGS@": ", ".join(f"GM_ADDR {_ident(o.name)}" for o in t.outputs),
        "@OUTLIST@": ", ".join(_ident(o.name) for o in t.outputs),
        "@POSTBIND@": _post_bind(plan),
        "@POSTFN@": _POST_FN if plan.post else "",
        "@POSTCALL@": "        Post();" if plan.post else "",
        "@POSTCONST@": (f"constexpr float EPS = {plan.post['eps']!r}f, QMAX = {plan.post['qmax']!r}f;   // the row stage's quant\n"
                        f"constexpr float LO = {plan.post['lo']!r}f, HI = {plan.post['hi']!r}f;") if plan.post else "",
        "@GROUPATTR@": str(plan.group_rule[0]) if plan.group_rule else "0",
        "@GROUPCOUNTS@": "true" if plan.group_rule and plan.group_rule[1] == "counts" else "false",
        "@ARGS@": ", ".join(f"GM_ADDR {_ident(i.name)}" for i in ins),
        "@ARGLIST@": ", ".join(_ident(i.name) for i in ins), "@Y@": yn,
        "@VECTYPES@": vec_types, "@VECMEMBERS@": vec_members, "@VECBIND@": vec_bind, "@NVEC@": str(n_vec),
        "@PRODECL@": pro_decl, "@EPIDECL@": epi_decl,
        "@PROLOADS@": _vector_loads(plan, pro_vecs, "n0_ + c0", "cw", "            ") + "\n" + "\n".join(
            f"            Replicate(rep_{_ident(ins[i].name)}, vec_{_ident(ins[i].name)}, cw, pitch, rowsMax);"
            for i in pro_vecs),
        "@PROVECS@": str(len(pro_vecs)),
        "@EPILOADS@": _vector_loads(plan, epi_vecs, "n0_ + tn * baseN", "nt", "            ", batched=True),
        "@ROWVALS@": _row_values(plan, row_vecs, "                "),
        "@UNUSED@": _refused_inputs(plan, unused),
        "@PROCHAIN@": _chain(plan, plan.prologue, "calc", "span", "                ", rep="rep_"),
        "@EPICHAIN@": _epilogue_code(plan, "                "),
        "@PRESENT@": present, "@A@": an, "@B@": bn,
        "@DESC@": plan.notes[0] if plan.notes else "",
        "@DTGUARD@": " && ".join(f"dt != matmul_tiling::DataType::{_GE[d]}" for d in plan.served_dtypes) or "false",
    }
    for key, val in subs.items():
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: @DESC@.
// A MIX kernel on the high-level Matmul API: each AIV owns a singleCoreM x singleCoreN block of the
// output; it runs the right operand's prologue on its own columns into its workspace slot (in the
// cube's dtype), asks its AIC for the block tile by tile (Iterate / GetTensorC to UB), applies the
// epilogue on the vector unit and writes the tile out. Chain ops compute in fp32 and round to the
// dtype the golden computes them in.
#include <cmath>
#include <type_traits>
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr uint32_t TILE_CAP = @TILECAP@;   // C tile elements (baseM x baseN): the tile and its epilogue fit UB
constexpr uint32_t POST_CAP = 2048;        // columns of a row-stage chunk
constexpr uint32_t VEC_CAP = 2048;         // columns of a prologue chunk (and of a vector slice)
constexpr uint32_t PRO_BYTES = 96 * 1024;  // UB for a prologue chunk's rows
constexpr uint32_t ROUND_CAP = 16384;      // elements the rounding scratch holds
constexpr uint32_t UB_BYTES = 192 * 1024 - 256;   // 910B's UB per AIV
constexpr uint32_t GROUP_CAP = 256;        // groups of a grouped product

constexpr uint32_t PRO_VECS = @PROVECS@;     // per-column vectors of the prologue
@POSTCONST@

struct @T@ {
    AscendC::tiling::TCubeTiling cube;
    uint32_t m, n, k;
    uint32_t mDim;
    uint32_t batch;                         // products (B's batch dims / groups; 1 for a 2-D B)
    uint32_t grouped;                       // rows of product g: [rowStart[g], rowStart[g + 1]) (else g x m)
    uint32_t transB;
    uint32_t rowStart[GROUP_CAP + 1];
    uint32_t present[@NIN@];
    uint32_t vlen[@NIN@];                   // elements of each input (broadcast vectors: 1, N, batch x N, rows)
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using AT = @AT@;                            // the cube's dtype
using CT = std::conditional<std::is_same<AT, int8_t>::value, int32_t, float>::type;   // L0C's dtype
using BT = @BT@;                            // the right operand as stored
using YT = @YT@;
using TT = @TT@;                            // a C tile as stored: the output, or fp32 rows for the row stage
@VECTYPES@

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// Round a float row to T's precision (the golden computes this op in T) and widen it back.
template <typename T>
__aicore__ inline void RoundTo(const LocalTensor<float>& row, const LocalTensor<half>& tmp, uint32_t n)
{
    if constexpr (!std::is_same<T, float>::value) {
        LocalTensor<T> narrow = tmp.ReinterpretCast<T>();
        Cast(narrow, row, RoundMode::CAST_RINT, n);
        Cast(row, narrow, RoundMode::CAST_NONE, n);
    }
}

// A tile of S (int8 / fp16 / bf16 / fp32) widened to float (int8 through half: exact).
template <typename S>
__aicore__ inline void ToFloat(const LocalTensor<float>& dst, const LocalTensor<S>& src, const LocalTensor<half>& tmp,
                               uint32_t n)
{
    if constexpr (std::is_same<S, float>::value) {
        Adds(dst, src, 0.0f, n);
    } else if constexpr (std::is_same<S, int32_t>::value) {
        Cast(dst, src, RoundMode::CAST_NONE, n);
    } else if constexpr (std::is_same<S, int8_t>::value) {
        Cast(tmp, src, RoundMode::CAST_NONE, n);
        Cast(dst, tmp, RoundMode::CAST_NONE, n);
    } else {
        Cast(dst, src, RoundMode::CAST_NONE, n);
    }
}

template <typename T>
__aicore__ inline void FromFloat(const LocalTensor<T>& dst, const LocalTensor<float>& src, uint32_t n)
{
    if constexpr (std::is_same<T, float>::value) {
        Adds(dst, src, 0.0f, n);
    } else {
        Cast(dst, src, RoundMode::CAST_RINT, n);
    }
}

// n elements of a per-column vector from GM (from element `off`) into a float row; a vector of one
// element (len 1) is broadcast.
template <typename V>
__aicore__ inline void LoadVector(const LocalTensor<float>& dst, const GlobalTensor<V>& src, uint64_t off, uint32_t n,
                                  uint32_t len, const LocalTensor<uint8_t>& raw, const LocalTensor<half>& tmp)
{
    if (len == 1) {
        Duplicate(dst, static_cast<float>(src.GetValue(0)), n);
        return;
    }
    LocalTensor<V> r = raw.ReinterpretCast<V>();
    DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(V)), 0, 0, 0};
    DataCopyPadExtParams<V> pad{false, 0, 0, 0};
    DataCopyPad(r, src[off], cp, pad);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    ToFloat(dst, r, tmp, n);
    SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
}

// A float vector of n columns copied into `rows` rows of `pitch` (chunk-wide ops on per-column data).
__aicore__ inline void Replicate(const LocalTensor<float>& dst, const LocalTensor<float>& vec, uint32_t n, uint32_t pitch,
                                 uint32_t rows)
{
    for (uint32_t r = 0; r < rows; ++r) {
        Adds(dst[r * pitch], vec, 0.0f, n);
    }
}

class @K@ {
public:
    using AType = MatmulType<TPosition::GM, CubeFormat::ND, AT, @ATRANS@>;
    using BType = MatmulType<TPosition::GM, CubeFormat::ND, AT, @BTRANS_TYPE@>;
    using CType = MatmulType<TPosition::VECIN, CubeFormat::ND, CT>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, CT>;

    __aicore__ inline void Run(GM_ADDR* args, GM_ADDR* outs, GM_ADDR workspace, const @T@& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm_, &t_.cube);
        const TCubeTiling& ct = t_.cube;
        const int32_t core = static_cast<int32_t>(GetBlockIdx());
        if (core >= ct.usedCoreNum) {
            return;
        }
        const uint32_t mi = static_cast<uint32_t>(core) % t_.mDim, ni = static_cast<uint32_t>(core) / t_.mDim;
        m0_ = mi * ct.singleCoreM;
        n0_ = ni * ct.singleCoreN;
        if (m0_ >= t_.m || n0_ >= t_.n) {
            return;
        }
        tailN_ = t_.n - n0_ < static_cast<uint32_t>(ct.singleCoreN) ? t_.n - n0_ : ct.singleCoreN;
        aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ AT*>(args[@AI@]));
        bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ BT*>(args[@BI@]));
        bAddr_ = args[@BI@];
        if constexpr (@POST@) {           // the product's fp32 rows for the row stage, in the workspace
            tGm_.SetGlobalBuffer(reinterpret_cast<__gm__ TT*>(GetUserWorkspace(workspace)));
@POSTBIND@
        } else {
            tGm_.SetGlobalBuffer(reinterpret_cast<__gm__ TT*>(outs[0]));
        }
@VECBIND@
        pipe_.InitBuffer(vecBuf_, @NVEC@ * VEC_CAP * sizeof(float));
        pipe_.InitBuffer(vecRawBuf_, VEC_CAP * sizeof(float));
        pipe_.InitBuffer(roundBuf_, ROUND_CAP * sizeof(half));
        pipe_.InitBuffer(rowBuf_, ct.baseN * sizeof(float));
        if constexpr (@PROLOGUE@) {
            Prologue(workspace);
        } else {
            mm_.SetOrgShape(t_.m, t_.n, t_.k, t_.k);
            bSameGm_.SetGlobalBuffer(reinterpret_cast<__gm__ AT*>(bAddr_));
        }
        const uint64_t aOff = @ATRANS@ ? m0_ : static_cast<uint64_t>(m0_) * t_.k;
        const uint64_t bOff = t_.transB ? static_cast<uint64_t>(n0_) * t_.k : n0_;
        const uint64_t kn = static_cast<uint64_t>(t_.k) * t_.n;
        // one product per batch / group (rows [start, end) of A and the output, B's bi-th slice),
        // this core's block of each
        for (uint32_t bi = 0; bi < t_.batch; ++bi) {
            const uint32_t start = t_.grouped ? t_.rowStart[bi] : bi * t_.m;
            const uint32_t rows = t_.grouped ? t_.rowStart[bi + 1] - start : t_.m;
            if (m0_ >= rows) {
                continue;
            }
            tailM_ = rows - m0_ < static_cast<uint32_t>(ct.singleCoreM) ? rows - m0_ : ct.singleCoreM;
            if constexpr (!@PROLOGUE@) {
                mm_.SetTensorB(bSameGm_[bi * kn + bOff], t_.transB != 0);
            }
            mm_.SetTensorA(aGm_[static_cast<uint64_t>(start) * t_.k + aOff], @ATRANS@);
            mm_.SetTail(tailM_, tailN_);
            Tiles(bi, start);
        }
        mm_.End();
@POSTCALL@
    }

private:
    // B' = prologue(B) on this core's columns, K x tailN in the cube's dtype, row length singleCoreN.
    __aicore__ inline void Prologue(GM_ADDR workspace)
    {
        const TCubeTiling& ct = t_.cube;
        const uint32_t sN = ct.singleCoreN;
        GM_ADDR ws = GetUserWorkspace(workspace);
        const uint64_t slot = static_cast<uint64_t>(GetBlockIdx()) * t_.k * sN;
        wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ AT*>(ws) + slot, static_cast<uint64_t>(t_.k) * sN);
        const uint32_t cwMax = tailN_ < VEC_CAP ? tailN_ : VEC_CAP;
        const uint32_t pitch = CeilTo(cwMax, 32);
        // rows of a chunk: the raw, float and cube-dtype copies and each vector replicated per row
        // what UB has left beside the tile buffers Tiles() takes afterwards
        const uint32_t tileBytes = ct.baseM * ct.baseN * (sizeof(float) + sizeof(YT));
        const uint32_t fixedBytes = ROUND_CAP * sizeof(half) + (@NVEC@ + 1) * VEC_CAP * sizeof(float) + tileBytes;
        const uint32_t proBytes = UB_BYTES > fixedBytes + 4096 ? UB_BYTES - fixedBytes - 4096 : 4096;
        uint32_t rowsMax = (proBytes < PRO_BYTES ? proBytes : PRO_BYTES) /
                           (pitch * (sizeof(BT) + sizeof(float) + sizeof(AT) + PRO_VECS * sizeof(float)));
        rowsMax = rowsMax * pitch > ROUND_CAP ? ROUND_CAP / pitch : rowsMax;
        rowsMax = rowsMax == 0 ? 1 : rowsMax;
        pipe_.InitBuffer(inQ_, 1, rowsMax * pitch * sizeof(BT));
        pipe_.InitBuffer(outQ_, 1, rowsMax * pitch * sizeof(AT));
        pipe_.InitBuffer(calcBuf_, rowsMax * pitch * sizeof(float));
        if (PRO_VECS > 0) {
            pipe_.InitBuffer(repBuf_, PRO_VECS * rowsMax * pitch * sizeof(float));
        }
        LocalTensor<uint8_t> vecRaw = vecRawBuf_.Get<uint8_t>();
        LocalTensor<half> roundTmp = roundBuf_.Get<half>();
@PRODECL@
        for (uint32_t c0 = 0; c0 < tailN_; c0 += VEC_CAP) {
            const uint32_t cw = tailN_ - c0 < VEC_CAP ? tailN_ - c0 : VEC_CAP;
@PROLOADS@
            for (uint32_t r0 = 0; r0 < t_.k; r0 += rowsMax) {
                const uint32_t rows = t_.k - r0 < rowsMax ? t_.k - r0 : rowsMax;
                LocalTensor<BT> raw = inQ_.AllocTensor<BT>();
                DataCopyExtParams cpIn{static_cast<uint16_t>(rows), static_cast<uint32_t>(cw * sizeof(BT)),
                                       static_cast<uint32_t>((t_.n - cw) * sizeof(BT)),
                                       static_cast<uint32_t>((pitch * sizeof(BT) - CeilTo(cw * sizeof(BT), 32)) / 32), 0};
                DataCopyPadExtParams<BT> pad{false, 0, 0, 0};
                DataCopyPad(raw, bGm_[static_cast<uint64_t>(r0) * t_.n + n0_ + c0], cpIn, pad);
                inQ_.EnQue(raw);
                raw = inQ_.DeQue<BT>();
                LocalTensor<float> calc = calcBuf_.Get<float>();
                const uint32_t span = rows * pitch;   // whole chunk at once (the vectors are replicated per row)
                ToFloat(calc, raw, roundTmp, span);
@PROCHAIN@
                inQ_.FreeTensor(raw);
                LocalTensor<AT> out = outQ_.AllocTensor<AT>();
                FromFloat(out, calc, rows * pitch);
                outQ_.EnQue(out);
                out = outQ_.DeQue<AT>();
                DataCopyExtParams cpOut{static_cast<uint16_t>(rows), static_cast<uint32_t>(cw * sizeof(AT)),
                                        static_cast<uint32_t>((pitch * sizeof(AT) - CeilTo(cw * sizeof(AT), 32)) / 32),
                                        static_cast<uint32_t>((sN - cw) * sizeof(AT)), 0};
                DataCopyPad(wsGm_[static_cast<uint64_t>(r0) * sN + c0], out, cpOut);
                outQ_.FreeTensor(out);
            }
        }
        mm_.SetOrgShape(t_.m, sN, t_.k, t_.k);
        mm_.SetTensorB(wsGm_);
    }

@POSTFN@    // The block's C tiles (iterateOrder 0: M first), each through UB, the epilogue and out.
    __aicore__ inline void Tiles(uint32_t bi, uint32_t start)
    {
        const TCubeTiling& ct = t_.cube;
        const uint32_t baseM = ct.baseM, baseN = ct.baseN;
        if (!tileBufs_) {
            pipe_.InitBuffer(cQue_, 1, baseM * baseN * sizeof(CT));
            pipe_.InitBuffer(yQue_, 1, baseM * baseN * sizeof(TT));
            tileBufs_ = true;
        }
        const uint64_t yBase = static_cast<uint64_t>(start) * t_.n;
        LocalTensor<uint8_t> vecRaw = vecRawBuf_.Get<uint8_t>();
        LocalTensor<half> roundTmp = roundBuf_.Get<half>();
@EPIDECL@
        const uint32_t mIter = (tailM_ + baseM - 1) / baseM;
        uint32_t i = 0;
        while (mm_.Iterate()) {
            LocalTensor<CT> c = cQue_.AllocTensor<CT>();
            mm_.GetTensorC(c);
            cQue_.EnQue(c);
            c = cQue_.DeQue<CT>();
            LocalTensor<float> cf = c.template ReinterpretCast<float>();
            const uint32_t tm = i % mIter, tn = i / mIter;
            const uint32_t mt = tailM_ - tm * baseM < baseM ? tailM_ - tm * baseM : baseM;
            const uint32_t nt = tailN_ - tn * baseN < baseN ? tailN_ - tn * baseN : baseN;
@EPILOADS@
            const uint64_t rowBase = static_cast<uint64_t>(start) + m0_ + tm * baseM;
            LocalTensor<TT> yt = yQue_.AllocTensor<TT>();
            for (uint32_t r = 0; r < mt; ++r) {
                // an int32 C row is widened into a float row (fp32 C: in place)
                LocalTensor<float> row = std::is_same<CT, float>::value ? cf[r * baseN] : rowBuf_.Get<float>();
                if constexpr (!std::is_same<CT, float>::value) {
                    Cast(row, c[r * baseN], RoundMode::CAST_NONE, nt);
                }
@ROWVALS@
@EPICHAIN@
                if constexpr (!std::is_same<CT, float>::value) {
                    FromFloat(yt[r * baseN], row, nt);
                }
            }
            if constexpr (std::is_same<CT, float>::value) {
                FromFloat(yt, cf, mt * baseN);
            }
            cQue_.FreeTensor(c);
            yQue_.EnQue(yt);
            yt = yQue_.DeQue<TT>();
            DataCopyExtParams cpOut{static_cast<uint16_t>(mt), static_cast<uint32_t>(nt * sizeof(TT)),
                                    static_cast<uint32_t>((baseN * sizeof(TT) - CeilTo(nt * sizeof(TT), 32)) / 32),
                                    static_cast<uint32_t>((t_.n - nt) * sizeof(TT)), 0};
            DataCopyPad(tGm_[yBase + static_cast<uint64_t>(m0_ + tm * baseM) * t_.n + n0_ + tn * baseN], yt, cpOut);
            yQue_.FreeTensor(yt);
            ++i;
        }
    }

    TPipe pipe_;
    Matmul<AType, BType, CType, BiasType> mm_;
    TQue<TPosition::VECIN, 1> inQ_, cQue_;
    TQue<TPosition::VECOUT, 1> outQ_, yQue_;
    TBuf<TPosition::VECCALC> calcBuf_, vecBuf_, vecRawBuf_, roundBuf_, repBuf_, rowBuf_, postBuf_;
    GlobalTensor<AT> aGm_, wsGm_, bSameGm_;
    GM_ADDR bAddr_ = nullptr;
    GlobalTensor<BT> bGm_;
    GlobalTensor<TT> tGm_;
    GlobalTensor<YT> qGm_;
    GlobalTensor<float> qScaleGm_;
@VECMEMBERS@
    @T@ t_;
    uint32_t m0_ = 0, n0_ = 0, tailM_ = 0, tailN_ = 0;
    bool tileBufs_ = false;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, @OUTARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GM_ADDR args[] = {@ARGLIST@};
    GM_ADDR outs[] = {@OUTLIST@};
    @K@ op;
    op.Run(args, outs, workspace, t);
}
"""

_POST_FN = r"""    // The row stage on the rows this core's blocks computed (whole rows: singleCoreN = N): SwiGLU on
    // the row's halves (act = left / (1 + exp(-left)) * right, written over the left half) and a
    // per-row dynamic quant (scale = max(amax |act|, EPS) / QMAX; y = clamp(round(act / scale))).
    __aicore__ inline void Post()
    {
        if (n0_ != 0) {
            return;
        }
        PipeBarrier<PIPE_ALL>();
        const TCubeTiling& ct = t_.cube;
        const uint32_t halfN = t_.n / 2;
        pipe_.InitBuffer(postBuf_, 5 * POST_CAP * sizeof(float));
        LocalTensor<float> left = postBuf_.Get<float>(), right = left[POST_CAP], tmp = left[2 * POST_CAP];
        LocalTensor<float> red = left[3 * POST_CAP];
        LocalTensor<int32_t> qi = left[4 * POST_CAP].template ReinterpretCast<int32_t>();
        LocalTensor<half> qh = roundBuf_.Get<half>();
        LocalTensor<YT> qy = right.template ReinterpretCast<YT>();
        for (uint32_t bi = 0; bi < t_.batch; ++bi) {
            const uint32_t start = t_.grouped ? t_.rowStart[bi] : bi * t_.m;
            const uint32_t rows = t_.grouped ? t_.rowStart[bi + 1] - start : t_.m;
            if (m0_ >= rows) {
                continue;
            }
            const uint32_t mine = rows - m0_ < static_cast<uint32_t>(ct.singleCoreM) ? rows - m0_ : ct.singleCoreM;
            for (uint32_t r = 0; r < mine; ++r) {
                const uint64_t row = static_cast<uint64_t>(start) + m0_ + r;
                const uint64_t base = row * t_.n;
                float amax = 0.0f;
                for (uint32_t c0 = 0; c0 < halfN; c0 += POST_CAP) {
                    const uint32_t cw = halfN - c0 < POST_CAP ? halfN - c0 : POST_CAP;
                    DataCopyExtParams cp{1, static_cast<uint32_t>(cw * sizeof(float)), 0, 0, 0};
                    DataCopyPadExtParams<float> pad{false, 0, 0, 0};
                    DataCopyPad(left, tGm_[base + c0], cp, pad);
                    DataCopyPad(right, tGm_[base + halfN + c0], cp, pad);
                    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
                    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                    Muls(tmp, left, -1.0f, cw);
                    Exp(tmp, tmp, cw);
                    Adds(tmp, tmp, 1.0f, cw);
                    Div(tmp, left, tmp, cw);
                    Mul(left, tmp, right, cw);
                    Abs(tmp, left, cw);
                    ReduceMax(red, tmp, right, static_cast<int32_t>(cw), false);
                    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
                    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
                    DataCopyPad(tGm_[base + c0], left, cp);
                    SetFlag<HardEvent::V_S>(EVENT_ID0);
                    WaitFlag<HardEvent::V_S>(EVENT_ID0);
                    const float v = red.GetValue(0);
                    amax = v > amax ? v : amax;
                    SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
                    WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
                }
                const float scale = (amax > EPS ? amax : EPS) / QMAX;
                qScaleGm_.SetValue(row, scale);
                for (uint32_t c0 = 0; c0 < halfN; c0 += POST_CAP) {
                    const uint32_t cw = halfN - c0 < POST_CAP ? halfN - c0 : POST_CAP;
                    DataCopyExtParams cp{1, static_cast<uint32_t>(cw * sizeof(float)), 0, 0, 0};
                    DataCopyPadExtParams<float> pad{false, 0, 0, 0};
                    DataCopyPad(left, tGm_[base + c0], cp, pad);
                    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
                    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                    Duplicate(tmp, scale, cw);
                    Div(left, left, tmp, cw);
                    Maxs(left, left, LO, cw);
                    Mins(left, left, HI, cw);
                    Cast(qi, left, RoundMode::CAST_RINT, cw);
                    Cast(qh, qi, RoundMode::CAST_NONE, cw);
                    Cast(qy, qh, RoundMode::CAST_RINT, cw);     // integral already: exact
                    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
                    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
                    DataCopyExtParams cpq{1, static_cast<uint32_t>(cw * sizeof(YT)), 0, 0, 0};
                    DataCopyPad(qGm_[row * halfN + c0], qy, cpq);
                    SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
                    WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
                }
            }
        }
    }

"""

_TILING = r"""namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& sa = context->GetInputShape(@AI@)->GetStorageShape();
    const gert::Shape& sb = context->GetInputShape(@BI@)->GetStorageShape();
    const size_t ra = sa.GetDimNum(), rb = sb.GetDimNum();
    if (ra < 2 || rb < 2) {
        return ge::GRAPH_FAILED;
    }
    uint64_t m = 1, batch = 1;
    for (size_t i = 0; i + 1 < ra; ++i) {
        m *= sa.GetDim(i);
    }
    for (size_t i = 0; i + 2 < rb; ++i) {
        batch *= sb.GetDim(i);
    }
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    (void)attrs;
    @T@* t = context->GetTilingData<@T@>();
    const bool transB = @TRANSB@;
    t->transB = transB ? 1 : 0;
    t->grouped = @GROUPED@ ? 1 : 0;
    if (@GROUPED@) {                  // a grouped product: A's rows split over B's groups by a list attr
        const gert::TypedContinuousVector<int64_t>* groupList = attrs->GetListInt(@GROUPATTR@);
        if (groupList == nullptr || rb != 3 || ra != 2 || @PROLOGUE@ || @ATRANS@ ||
            groupList->GetSize() != static_cast<size_t>(batch) ||
            batch > GROUP_CAP) {
            return ge::GRAPH_FAILED;
        }
        uint64_t at = 0, widest = 0;
        t->rowStart[0] = 0;
        for (size_t g = 0; g < groupList->GetSize(); ++g) {
            const int64_t v = groupList->GetData()[g];
            const uint64_t end = @GROUPCOUNTS@ ? at + static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
            if (v < 0 || end < at || end > m) {
                return ge::GRAPH_FAILED;
            }
            widest = end - at > widest ? end - at : widest;
            t->rowStart[g + 1] = static_cast<uint32_t>(end);
            at = end;
        }
        if (at != m) {
            return ge::GRAPH_FAILED;
        }
        m = widest > 0 ? widest : 1;  // the tiling of the widest group; narrower ones use fewer cores
    } else if (rb > 2) {              // a batched B: A carries the same batch dims, one product each
        uint64_t ab = 1;
        for (size_t i = 0; i + 2 < ra; ++i) {
            ab *= sa.GetDim(i);
        }
        if (ra != rb || ab != batch || @ATRANS@ || @PROLOGUE@) {
            return ge::GRAPH_FAILED;
        }
        m = sa.GetDim(ra - 2);
    }
    const uint64_t mAll = @GROUPED@ ? sa.GetDim(0) : m * batch;   // the output's rows
    (void)mAll;
    uint64_t k = sa.GetDim(ra - 1);
    if (@ATRANS@) {
        m = sa.GetDim(1);
        k = sa.GetDim(0);
    }
    const uint64_t n = transB ? sb.GetDim(rb - 2) : sb.GetDim(rb - 1);
    t->m = static_cast<uint32_t>(m);
    t->n = static_cast<uint32_t>(n);
    t->k = static_cast<uint32_t>(k);
    t->batch = static_cast<uint32_t>(batch);
@PRESENT@
    if (@UNUSED@) {
        return ge::GRAPH_FAILED;      // an optional input no public case gives: its op is not lowered
    }
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto dt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(@AI@)->GetDataType());
    if (@DTGUARD@) {
        return ge::GRAPH_FAILED;      // a dtype the cube lowering does not serve
    }
    matmul_tiling::MultiCoreMatmulTiling mt(plat);
    mt.SetDim(plat.GetCoreNumAiv());
    mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt, @ATRANS@);
    mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt, transB);
    mt.SetCType(matmul_tiling::TPosition::VECIN, matmul_tiling::CubeFormat::ND,
                dt == matmul_tiling::DataType::DT_INT8 ? matmul_tiling::DataType::DT_INT32 : matmul_tiling::DataType::DT_FLOAT);
    mt.SetShape(static_cast<int32_t>(m), static_cast<int32_t>(n), static_cast<int32_t>(k));
    mt.SetOrgShape(static_cast<int32_t>(m), static_cast<int32_t>(n), static_cast<int32_t>(k));
    mt.SetBias(false);
    if (mt.GetTiling(t->cube) == -1) {
        return ge::GRAPH_FAILED;
    }
    if (@POST@) {                     // the row stage needs whole rows per core: N not split
        const uint64_t aivs = plat.GetCoreNumAiv();
        const uint64_t sm = ((m + aivs - 1) / aivs + 15) / 16 * 16;
        mt.SetSingleShape(static_cast<int32_t>(sm), static_cast<int32_t>(n), -1);
        if (mt.GetTiling(t->cube) == -1 || t->cube.singleCoreN != static_cast<int32_t>(n) || n % 2 != 0) {
            return ge::GRAPH_FAILED;
        }
    }
    // a C tile and its epilogue must fit UB: cap the tile's area, keeping baseN wide when baseM is
    // small (decode shapes: long B rows per copy)
    if (t->cube.baseM * t->cube.baseN > static_cast<int32_t>(TILE_CAP)) {
        const int32_t bn = static_cast<int32_t>(TILE_CAP) / t->cube.baseM / 16 * 16;
        mt.SetFixSplit(-1, bn < 16 ? 16 : bn, -1);
        if (mt.GetTiling(t->cube) == -1) {
            return ge::GRAPH_FAILED;
        }
    }
    t->mDim = static_cast<uint32_t>((m + t->cube.singleCoreM - 1) / t->cube.singleCoreM);
    const uint32_t blocks = static_cast<uint32_t>((t->cube.usedCoreNum + 1) / 2);
    context->SetBlockDim(blocks);
    size_t* ws = context->GetWorkspaceSizes(1);
    const uint64_t slots = @PROLOGUE@ ? static_cast<uint64_t>(blocks) * 2 * k * t->cube.singleCoreN : 0;
    ws[0] = plat.GetLibApiWorkSpaceSize() + slots * (dt == matmul_tiling::DataType::DT_FLOAT ? 4 : 2) +
            (@POST@ ? mAll * n * sizeof(float) : 0);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
