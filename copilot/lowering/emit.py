"""Emit one AscendC candidate file from a lowering plan.

Kernel shape (what the tiling function chooses per case, at run time):
- MODE_ROWS: whole rows in UB, up to `tileRows` short rows merged per tile, one row statistic
  per row; each reduction pass reloads the tile (pass count = reduction depth + 1).
- MODE_SPLIT: a row (or a group of rows sharing statistics: group_norm) too long for one tile,
  streamed in chunks of `tileCols` along D; statistics accumulate across chunks, pass by pass.
- MODE_CHUNKS: elementwise only: the flattened (row, chunk) pieces are the units of work.
- MODE_COLUMNS: the reduced axis is not the last: a unit is (outer index, a run of `tileCols`
  inner columns); `tileRows` reduced positions are loaded per step with one strided DataCopyPad,
  statistics are fp32 vectors over the column run.
- MODE_SHORT: rows shorter than 129 elements: a tile of whole rows is transposed in UB (one Gather)
  and computed by the column code (positions x rows), the outputs transposed back.
With double buffering the next tile's (or split step's) copies are issued before this one's compute.
All arithmetic is fp32: fp16/bf16 inputs are Cast up after the copy in and Cast down (RINT)
before the copy out; masks (bool/uint8/int8) go uint8 -> half -> float.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from copilot.errors import Unsupported
from copilot.lowering import intlib, mathlib, wideint
from copilot.lowering.ir import REDUCE, Node, Program
from copilot.lowering.plan import ONE_BYTE, Plan

COMPOSITE = {"erf", "gelu", "tanh", "sigmoid", "silu", "gelu_tanh", "mish", "hardswish", "log1p",
             "softplus", "rsqrt", "recip", "not", "cmp", "where", "round", "trunc", "fma"}
SWAP = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}
REDUCE_API = {"rsum": "ReduceSum", "rmax": "ReduceMax", "rmin": "ReduceMin", "rargmax": "ReduceMax",
              "rargmin": "ReduceMin"}
REDUCE_INIT = {"rsum": "0.0f", "rmax": "-__builtin_inff()", "rmin": "__builtin_inff()", "rargmax": "0.0f",
               "rargmin": "0.0f"}
ARG_VALUE_INIT = {"rargmax": "-__builtin_inff()", "rargmin": "__builtin_inff()"}
ARG_BETTER = {"rargmax": "ArgBetterMax", "rargmin": "ArgBetterMin"}
VEC_COMBINE = {"rsum": "Add", "rmax": "Max", "rmin": "Min"}
# ops emitted as vector instructions that read each operand element before writing the same
# element of dst (or stage a scalar operand in tmp0 first): dst may be one of their operands
IN_PLACE = {"add", "sub", "mul", "div", "max", "min", "neg", "abs", "exp", "log", "sqrt", "relu", "sq"}


def _power_of_two(literal: str) -> bool:
    """A literal divisor whose reciprocal is exact (so x * (1 / c) equals x / c)."""
    try:
        v = abs(float(literal.rstrip("f")))
    except ValueError:
        return False
    return v > 0 and math.frexp(v)[0] == 0.5


def _row_invariant_loads(plan: Plan) -> frozenset:
    """Loads whose data is one row's worth in every case (rms_norm's gamma): in MODE_ROWS every
    row reads the same values, so the tile is staged once per core."""
    from copilot.lowering.plan import layout

    if plan.axis_rule is None or plan.axis_rule[0] == "group":
        return frozenset()
    out = set()
    for l, lr in enumerate(plan.loads):
        if lr.chunks != 1 or lr.input == plan.main_input:
            continue
        if all(math.prod(c.shapes[lr.input]) == layout(plan, c)["R"] for c in plan.task.cases):
            out.add(l)
    return frozenset(out)


def _camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]", name) if p)


def _macro(name: str) -> str:
    return "DTYPE_" + re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def _flt(v: float) -> str:
    if math.isinf(v):
        return "__builtin_inff()" if v > 0 else "(-__builtin_inff())"
    if math.isnan(v):
        return "__builtin_nanf(\"\")"
    r = repr(float(v))
    if "e" not in r and "." not in r:
        r += ".0"
    return r + "f"


class VariantCode:
    """Pass schedule and slot assignment of one variant's program."""

    def __init__(self, prog: Program, plan: Plan, staged: frozenset = frozenset(), resident: bool = True):
        self.p = prog
        nodes = prog.nodes
        self.avail = [0] * len(nodes)
        self.rpass: dict[int, int] = {}
        for i, n in enumerate(nodes):
            if n.op in REDUCE:
                q = self.avail[n.args[0]]
                self.rpass[i] = q
                self.avail[i] = q + 1
            else:
                self.avail[i] = max((self.avail[a] for a in n.args), default=0)
        full_outs = [v for v, k in prog.outputs if k == "full"]
        self.npass = max([q + 1 for q in self.rpass.values()] + [max((self.avail[v] for v in full_outs), default=0) + 1])
        self.stats = [i for i, n in enumerate(nodes) if n.kind == "stat"]
        self.stat_index = {i: k for k, i in enumerate(self.stats)}
        # full nodes computed in each pass
        self.pass_nodes: list[list[int]] = []
        for q in range(self.npass):
            roots = [i for i, p in self.rpass.items() if p == q]
            if q == self.npass - 1:
                roots += full_outs
            need: set[int] = set()
            stack = list(roots)
            while stack:
                j = stack.pop()
                if j in need:
                    continue
                need.add(j)
                for a in nodes[j].args:
                    if nodes[a].kind == "full":
                        stack.append(a)
            self.pass_nodes.append(sorted(i for i in need if nodes[i].kind == "full"))
        # Inputs read in several passes stay resident: their fp32 tile gets a slot of its own, filled
        # in the first pass that reads it; in MODE_ROWS later passes reuse it instead of reloading.
        use_pass: dict[int, list[int]] = {}
        for q in range(self.npass):
            for i in self.pass_nodes[q]:
                if nodes[i].op == "load":
                    use_pass.setdefault(i, []).append(q)
        # (knob row_residency=reload: no resident slots, every pass reloads its inputs)
        self.first_pass = {i: qs[0] for i, qs in use_pass.items()
                           if (len(qs) > 1 and resident) or nodes[i].params["load"] in staged}
        # Inputs the same for every row (gamma, beta, bias) are staged: loaded on the first tile
        # of the core, replicated over its rows, and kept for every later tile.
        self.staged = {i for i in self.first_pass if nodes[i].params["load"] in staged}
        # placed after the pool, staged ones first: the top slot is an input read in several passes
        resident_slot = {i: -1 - k for k, i in enumerate(sorted(self.first_pass, key=lambda j: (j not in self.staged, j)))}
        # slots: linear scan per pass
        self.slot: list[dict[int, int]] = []
        self.nslot = 1
        for q in range(self.npass):
            order = self.pass_nodes[q]
            last_use: dict[int, int] = {}
            for i in order:
                for a in nodes[i].args:
                    if nodes[a].kind == "full":
                        last_use[a] = i
            keep = set(full_outs) if q == self.npass - 1 else set()
            keep |= {nodes[i].args[0] for i, p in self.rpass.items() if p == q}
            free: list[int] = []
            used = 0
            assign: dict[int, int] = {}
            for i in order:
                dying = [a for a in sorted(set(nodes[i].args))
                         if a in assign and last_use.get(a) == i and a not in keep and a not in resident_slot]
                # one-instruction ops may write over an operand they read for the last time (in place)
                if nodes[i].op in IN_PLACE:
                    free.extend(assign[a] for a in dying)
                if i in resident_slot:
                    assign[i] = resident_slot[i]
                elif free:
                    assign[i] = free.pop()
                else:
                    assign[i] = used
                    used += 1
                if nodes[i].op not in IN_PLACE:
                    free.extend(assign[a] for a in dying)
            # reduced values stay live until the end of the pass (reduced after compute)
            self.slot.append(assign)
            self.nslot = max(self.nslot, used)
        if resident_slot:
            pool = self.nslot
            for assign in self.slot:
                for i, k in assign.items():
                    if k < 0:
                        assign[i] = pool - 1 - k
            self.nslot = pool + len(resident_slot)
        self.top_resident = next((i for i, k in resident_slot.items() if k == -len(resident_slot)), None)
        self.loads_in_pass = [sorted({nodes[i].params["load"] for i in self.pass_nodes[q] if nodes[i].op == "load"})
                              for q in range(self.npass)]
        # loads a MODE_ROWS pass can skip (their tile is resident from an earlier pass)
        self.resident_in_pass = [sorted({nodes[i].params["load"] for i in self.pass_nodes[q]
                                         if i in self.first_pass and self.first_pass[i] < q})
                                 for q in range(self.npass)]
        self.staged_in_pass = [sorted({nodes[i].params["load"] for i in self.pass_nodes[q]
                                       if i in self.staged and self.first_pass[i] == q})
                               for q in range(self.npass)]
        self.ops = {n.op for n in nodes}
        # first-pass loads of the next tile issued before this tile's compute (MODE_ROWS/CHUNKS,
        # double buffering): empty when a later pass reloads one of them through the same queue
        first = [l for l in self.loads_in_pass[0] if l not in self.staged_in_pass[0]]
        reloaded = any(l in self.loads_in_pass[q] and l not in self.resident_in_pass[q]
                       for q in range(1, self.npass) for l in first)
        self.ahead = [] if reloaded else first


class Emitter:
    def __init__(self, plan: Plan, knobs: dict, chip: str):
        self.plan, self.knobs, self.chip = plan, knobs, chip
        self.task = plan.task
        self.op = self.task.name
        self.cls = _camel(self.op)
        # structural knobs (copilot/lowering/knobs.py): staging of row-invariant operands, residency
        self.staged = _row_invariant_loads(plan) if knobs.get("stage_invariant", "stage") == "stage" else frozenset()
        # x / s by a row statistic that may be x * (1 / s): one reciprocal per row (a statistic of its
        # own, computed with the statistics) and a multiply, instead of a division per element
        self.vcs = [VariantCode(self._with_reciprocals(p), plan, self.staged,
                                knobs.get("row_residency", "keep") == "keep") for p in plan.programs]
        self.nslot = max(v.nslot for v in self.vcs)
        self.online = [self._online_softmax(v) for v in self.vcs]
        # A float input every variant keeps resident in its top slot is held in its queue tile in
        # MODE_ROWS (the tiling function sets holdLoad): the working copy and its slot are not needed.
        tops = {v.p.nodes[v.top_resident].params["load"] if v.top_resident is not None
                and v.top_resident not in v.staged and v.nslot == self.nslot else None for v in self.vcs}
        self.held = tops.pop() if len(tops) == 1 else None
        if self.held is not None and (plan.calc != "float" or plan.loads[self.held].chunks != 1
                                      or plan.loads[self.held].lanes):
            self.held = None
        self.nstat = max(1, max(len(v.stats) for v in self.vcs))
        self.ops = set().union(*(v.ops for v in self.vcs))
        # an index reduction keeps its running max / min in the last statistic row (one per program)
        self.arg_ops = self.ops & set(ARG_BETTER)
        if any(sum(n.op in ARG_BETTER for n in v.p.nodes) > 1 for v in self.vcs):
            raise Unsupported(f"{self.op}: two index reductions in one program")
        if self.arg_ops:
            self.nstat += 1
            if any(v.p.nodes[a].op in ARG_BETTER and v.p.nodes[a].kind == "stat"
                   for v in self.vcs for n in v.p.nodes for a in n.args):
                raise Unsupported(f"{self.op}: an index (argmax/argmin) used in arithmetic")
        # scratch tiles: composite functions on full tiles, or a statistic broadcast over a tile
        needs = False
        for v in self.vcs:
            for n in v.p.nodes:
                if n.kind != "full":
                    continue
                stat_arg = any(v.p.nodes[a].kind == "stat" for a in n.args)
                if n.op in COMPOSITE or (stat_arg and n.op not in ("add", "sub", "mul", "div", "max", "min")):
                    needs = True
        self.ntmp = 4 if needs else 1
        if "fma" in self.ops:
            self.ntmp = 5
        if "gcd" in self.ops:
            self.ntmp = intlib.GCD_TMPS
        if self.ops & set(ARG_BETTER):
            self.ntmp = max(self.ntmp, 2)     # the column fold of an index reduction
        # working tile type: fp32, int32 (integer data) or chosen per build (`Calc`)
        self.calc = plan.calc
        self.ctype = "float" if self.calc == "float" else "Calc"
        if knobs.get("arith") == "native":    # structural knob: fp16 data computed in fp16 (knobs.native_input)
            from copilot.lowering.knobs import native_input

            sel = native_input(plan)
            if sel is not None:
                self.calc, self.ctype, self.held = ("half", sel), "Calc", None
        # int64 inputs: narrowed per tile, a tile past the int32 range on the scalar unit (wideint.py)
        self.wide = plan.wide_bits is not None and any("int64" in s.dtypes for s in self.task.inputs)
        # bool inputs are read as uint8_t (only zero / non-zero matters); int8/uint8 as themselves
        self.mask_inputs = {i for i, s in enumerate(self.task.inputs) if "bool" in s.dtypes}
        byte_inputs = {i for i, s in enumerate(self.task.inputs) if set(s.dtypes) & ONE_BYTE}
        self.byte_outputs = {i for i, s in enumerate(self.task.outputs) if set(s.dtypes) & ONE_BYTE}
        self.has_bytes = bool(byte_inputs or self.byte_outputs)
        self.align = 32 if self.has_bytes else 16
        self.full_outs = [k for k, (_, kind) in enumerate(self.plan.programs[0].outputs) if kind == "full"]
        self.stat_outs = [k for k, (_, kind) in enumerate(self.plan.programs[0].outputs) if kind == "stat"]
        for v in self.vcs:
            kinds = [k for _, k in v.p.outputs]
            if kinds != [k for _, k in self.plan.programs[0].outputs]:
                raise Unsupported(f"{self.op}: variants produce outputs of different kinds")
            if any(k == "scalar" for k in kinds):
                raise Unsupported(f"{self.op}: an output that does not depend on the inputs")
        if len(plan.loads) > 8 or len(self.full_outs) > 8:
            raise Unsupported(f"{self.op}: L2.BUFFER_COUNT: {len(plan.loads)} streamed inputs / "
                              f"{len(self.full_outs)} outputs exceed 8 queue buffers per position")
        # scalar table: attr expressions computed in TilingFunc
        self.scalars: list[tuple] = []
        for p in plan.programs:
            used = {a for n in p.nodes for a in n.args} | {v for v, _ in p.outputs}
            for i, n in enumerate(p.nodes):
                if n.op == "attr" and i in used and n.params["expr"] not in self.scalars:
                    self.scalars.append(n.params["expr"])
        self.columns = bool(plan.axis_rule and plan.axis_rule[0] == "attr")
        # lane maps along the last axis (rotate-half, a repeated half row): one Gather table each
        self.lane_maps = sorted({l.lanes for l in plan.loads if l.lanes})
        if self.lane_maps and (plan.has_reduction or self.columns):
            raise Unsupported(f"{self.op}: a lane map (rotate-half / repeat of the last axis) in a reduction")
        # short rows (MODE_SHORT, rowLen < 64): the tile is transposed in UB and computed by the
        # column code, so one instruction covers a position of every row of the tile
        self.short = bool(plan.has_reduction and plan.axis_rule[0] in ("last", "attr") and self.calc == "float"
                          and not self.arg_ops and all(l.chunks == 1 for l in plan.loads))
        if self.short:
            try:
                for vi, v in enumerate(self.vcs):
                    self.compute_cols(vi, v)
            except Unsupported:
                self.short = False
        self.colcode = self.columns or self.short

    def _with_reciprocals(self, prog: Program) -> Program:
        """`prog` with every division by a row statistic that `_reciprocal_quotients` allows written as
        x * r, r = recip(s) a statistic inserted after s (row modes: `1.0f / s` once per row in the
        scalar statistic code, then `Muls`; column and short modes: one `Reciprocal` over the statistic
        vector, then `Mul`). Div costs 7-16 adds per repeat in the fitted cost model, Muls one."""
        divs = self._reciprocal_quotients(prog)
        if not divs:
            return prog
        stats = sorted({prog.nodes[i].args[1] for i in divs})
        new: list = []
        where: dict[int, int] = {}
        recip: dict[int, int] = {}
        for i, n in enumerate(prog.nodes):
            args = tuple(where[a] for a in n.args)
            if i in divs:
                n = replace(n, op="mul", args=(args[0], recip[n.args[1]]))
            elif args != n.args:
                n = replace(n, args=args)
            where[i] = len(new)
            new.append(n)
            if i in stats:
                recip[i] = len(new)
                new.append(Node("recip", (where[i],), "stat", {}))
        return replace(prog, nodes=new, outputs=[(where[v], k) for v, k in prog.outputs])

    @staticmethod
    def _online_softmax(v: VariantCode) -> dict | None:
        """Softmax's max and sum of exp in the column code (MODE_COLUMNS, MODE_SHORT): `m = rmax(x)` in
        pass 0, `s = rsum(exp(x - m))` in pass 1 and the output in pass 2. The column modes reload x
        every pass, so pass 0 keeps a running max and rescales the sum whenever it grows (s exp(m_old -
        m_new)): x crosses GM twice instead of three times and exp(x - m) is computed twice, not three
        times. None when the program is not of that form (x a resident load read by nothing else in
        pass 1)."""
        nodes = v.p.nodes
        if v.npass != 3 or sorted(v.rpass.values()) != [0, 1]:
            return None
        s = next(i for i, q in v.rpass.items() if q == 1)
        e = nodes[s].args[0]
        if nodes[s].op != "rsum" or nodes[e].op != "exp" or nodes[nodes[e].args[0]].op != "sub":
            return None
        d = nodes[e].args[0]
        x, m = nodes[d].args
        if (nodes[m].op != "rmax" or v.rpass.get(m) != 0 or nodes[m].args[0] != x or nodes[x].op != "load"
                or x not in v.first_pass or set(v.pass_nodes[1]) != {x, d, e} or v.slot[1][d] == v.slot[0][x]):
            return None
        return {"m": m, "s": s, "x": x, "work": v.slot[1][d]}

    @staticmethod
    def online_max(v: VariantCode, online: dict, ind: str) -> list[str]:
        """The running max of the column code's online softmax: the tile's max (folded in a copy: x is
        needed afterwards), the new max (kept finite, so a column that starts with -inf rescales by
        exp(-inf) = 0, not exp(-inf + inf) = NaN), the sum rescaled by exp(old max - new max)."""
        x, w = f"slot[{v.slot[0][online['x']]}]", f"slot[{online['work']}]"
        m, s = f"StatVec({v.stat_index[online['m']]})", f"StatVec({v.stat_index[online['s']]})"
        return [f"{ind}uint32_t m = nb - nb / 2;   // rmax of the tile: the first halving from x into the work tile",
                f"{ind}DataCopy({w}, {x}, m * pitch);",
                f"{ind}if (nb > m) {{",
                f"{ind}    Max({w}, {w}, {x}[m * pitch], (nb - m) * pitch);",
                f"{ind}}}",
                f"{ind}while (m > 1) {{",
                f"{ind}    const uint32_t h = m / 2;",
                f"{ind}    Max({w}, {w}, {w}[(m - h) * pitch], h * pitch);",
                f"{ind}    m -= h;",
                f"{ind}}}",
                f"{ind}Max(tmp0, {m}, {w}, wc);",
                f"{ind}Maxs(tmp0, tmp0, -3.40282347e+38f, wc);",
                f"{ind}Sub({w}, {m}, tmp0, wc);",
                f"{ind}Exp({w}, {w}, wc);",
                f"{ind}Mul({s}, {s}, {w}, wc);   // the sum so far, against the new max",
                f"{ind}DataCopy({m}, tmp0, AlignUpTo(wc, VEC_ALIGN));"]

    def _reciprocal_quotients(self, prog: Program) -> set:
        """Divisions of a full value by a row statistic whose quotient may be x * (1 / s) (within an ulp
        and a half of x / s):
        - it reaches float outputs only, through steps that scale it (mul, div, abs, neg, sqrt, max/min
          reductions, clamps by a constant), and their precision thresholds are far above an fp32 ulp
          (softmax's `exp / sum`, a normalisation's `x / norm`): a few ulps of relative error, never a
          cancellation, a comparison or a rounding that could magnify them;
        - or, in a quant epilogue where the task tolerates an integer off by 1 (quant outputs:
          `precision_thresholds: {int8: 1}`), it reaches an integer output through round and integer
          clamps (the rounding differs by at most 1 at a tie), and every other path only scales it
          into a float output (the per-row scale)."""
        from copilot.oracle.verdict import task_thresholds

        tol = task_thresholds(self.task)
        coarse = {"float32": 2.0 ** -13, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}   # the standard's MERE
        nodes = prog.nodes
        users: dict[int, list[int]] = {}
        for i, n in enumerate(nodes):
            for a in set(n.args):
                users.setdefault(a, []).append(i)
        out_ok, out_float = {}, {}
        for k, (node, _) in enumerate(prog.outputs):
            dts = self.task.outputs[k].dtypes
            ok = all(d.startswith(("int", "uint")) and tol.get(d, 0.0) >= 1.0 for d in dts)
            out_ok[node] = out_ok.get(node, True) and ok
            out_float[node] = out_float.get(node, True) and all(
                d.startswith(("float", "bfloat")) and tol.get(d, coarse.get(d, 0.0)) >= 2.0 ** -16 for d in dts)
        scaling = {"mul", "div", "abs", "neg", "sqrt", "rmax", "rmin"}

        def const_args(n, i) -> bool:
            return all(a == i or nodes[a].op == "const" for a in n.args)

        def reaches(i: int, rounded: bool):
            """None when a path from node i is not allowed, else whether one reaches an integer output."""
            hit = False
            if i in out_ok:
                if rounded and out_ok[i]:
                    hit = True
                elif rounded or not out_float[i]:
                    return None
            for u in users.get(i, []):
                n = nodes[u]
                if n.op in ("round", "trunc"):
                    r = reaches(u, True)
                elif rounded and n.op in ("max", "min") and all(
                        a == i or (nodes[a].op == "const" and float(nodes[a].params["value"]).is_integer())
                        for a in n.args):
                    r = reaches(u, True)
                elif not rounded and (n.op in scaling or (n.op in ("max", "min") and const_args(n, i))):
                    r = reaches(u, False)
                else:
                    return None
                if r is None:
                    return None
                hit = hit or r
            return hit

        return {i for i, n in enumerate(nodes)
                if n.op == "div" and n.kind == "full" and len(n.args) == 2 and nodes[n.args[1]].kind == "stat"
                and nodes[n.args[0]].kind == "full" and reaches(i, False) is not None}

    # ---------------------------------------------------------------- type helpers
    def in_type(self, i: int) -> str:
        return "uint8_t" if i in self.mask_inputs else _macro(self.task.inputs[i].name)

    def out_type(self, k: int) -> str:
        return _macro(self.task.outputs[k].name)

    # ---------------------------------------------------------------- scalar expressions
    def sexpr(self, v: VariantCode, i: int, stat_idx: str = "s") -> str:
        """C++ expression of a scalar or (row mode) stat node."""
        n = v.p.nodes[i]
        if n.op == "const":
            return _flt(n.params["value"])
        if n.op == "attr":
            return f"scalar_[{self.scalars.index(n.params['expr'])}]"
        if n.op == "rowlen":
            return "rowLenF_"
        if n.kind == "stat":
            return f"stat_[{v.stat_index[i]}][{stat_idx}]"
        a = [self.sexpr(v, x, stat_idx) for x in n.args]
        return self.scalar_op(n, a)

    def scalar_op(self, n, a: list[str]) -> str:
        op = n.op
        simple = {"add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
                  "neg": "(-{0})", "abs": "fabsf({0})", "exp": "expf({0})", "log": "logf({0})",
                  "sqrt": "sqrtf({0})", "rsqrt": "(1.0f / sqrtf({0}))", "recip": "(1.0f / {0})",
                  "sq": "({0} * {0})", "max": "FoldMax({0}, {1})", "min": "FoldMin({0}, {1})",
                  "relu": "FoldMax({0}, 0.0f)", "where": "(({0}) != 0.0f ? ({1}) : ({2}))",
                  "not": "(({0}) == 0.0f ? 1.0f : 0.0f)"}
        if op in simple:
            return simple[op].format(*a)
        if op == "cmp":
            sym = {"NE": "!=", "EQ": "==", "GT": ">", "LT": "<", "GE": ">=", "LE": "<="}[n.params["mode"]]
            return f"(({a[0]}) {sym} ({a[1]}) ? 1.0f : 0.0f)"
        raise Unsupported(f"{self.op}: '{op}' applied to a reduced value is not supported")

    # ---------------------------------------------------------------- vector op emission
    def vec(self, n, dst: str, args: list[tuple[str, str]], cnt: str, ind: str) -> list[str]:
        """Vector code for IR node `n` into tensor `dst`. args: ("t", tensor) or ("s", scalar)."""
        op = n.op
        L = []
        e = L.append
        A = args

        def ts(i):
            return A[i][0] == "t"
        if op == "gcd":
            if not (ts(0) and ts(1)) or self.calc != "int32":
                raise Unsupported(f"{self.op}: gcd needs two integer tensors")
            small = " && ".join(f"sizeof({_macro(s.name)}) <= 2" for s in self.task.inputs)
            e(intlib.gcd_call(dst, A[0][1], A[1][1], [f"tmp{k}" for k in range(intlib.GCD_TMPS)], cnt,
                              f"({small})"))
        elif op in ("add", "mul", "max", "min"):
            api = {"add": "Add", "mul": "Mul", "max": "Max", "min": "Min"}[op]
            if ts(0) and ts(1):
                e(f"{api}({dst}, {A[0][1]}, {A[1][1]}, {cnt});")
            else:
                tt, ss = (A[0][1], A[1][1]) if ts(0) else (A[1][1], A[0][1])
                e(f"{api}s({dst}, {tt}, {ss}, {cnt});")
        elif op == "sub":
            if ts(0) and ts(1):
                e(f"Sub({dst}, {A[0][1]}, {A[1][1]}, {cnt});")
            elif ts(0):
                e(f"Adds({dst}, {A[0][1]}, -({A[1][1]}), {cnt});")
            else:
                e(f"Muls({dst}, {A[1][1]}, -1.0f, {cnt});")
                e(f"Adds({dst}, {dst}, {A[0][1]}, {cnt});")
        elif op == "div":
            if ts(0) and ts(1):
                e(f"Div({dst}, {A[0][1]}, {A[1][1]}, {cnt});")
            elif ts(0) and A[1][1].startswith("stat_"):
                # a row statistic the precision needs divided by (Emitter._reciprocal_quotients)
                e(f"Duplicate(tmp0{dst[dst.rindex('['):] if dst.endswith('pitch]') else ''}, {A[1][1]}, {cnt});")
                e(f"Div({dst}, {A[0][1]}, tmp0{dst[dst.rindex('['):] if dst.endswith('pitch]') else ''}, {cnt});")
            elif ts(0) and _power_of_two(A[1][1]):
                e(f"Muls({dst}, {A[0][1]}, 1.0f / ({A[1][1]}), {cnt});")
            elif ts(0):
                # a true division, as the golden does (x * (1 / c) rounds differently)
                e(f"Duplicate(tmp0, {A[1][1]}, {cnt});")
                e(f"Div({dst}, {A[0][1]}, tmp0, {cnt});")
            else:
                e(f"Duplicate(tmp0, {A[0][1]}, {cnt});")
                e(f"Div({dst}, tmp0, {A[1][1]}, {cnt});")
        elif op == "cmp":
            mode = n.params["mode"]
            if ts(0) and ts(1):
                e(f"Compare(bits, {A[0][1]}, {A[1][1]}, CMPMODE::{mode}, {cnt});")
            elif ts(0):
                e(f"Compares(bits, {A[0][1]}, {A[1][1]}, CMPMODE::{mode}, {cnt});")
            else:
                e(f"Compares(bits, {A[1][1]}, {A[0][1]}, CMPMODE::{SWAP[mode]}, {cnt});")
            e(f"Duplicate(tmp0, 1.0f, {cnt});")
            e(f"Select({dst}, bits, tmp0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, {cnt});")
        elif op == "lanemask":
            e(f"DataCopy({dst}, laneMask_, {cnt});   // 1 on the first half of each row, 0 on the second")
        elif op == "where":
            c, a, b = A
            if c[0] != "t":
                raise Unsupported(f"{self.op}: where() with a scalar condition over a tensor")
            if a[0] == "t" and b[0] == "t":
                e(f"Compares(bits, {c[1]}, 0.0f, CMPMODE::NE, {cnt});")
                e(f"Select({dst}, bits, {a[1]}, {b[1]}, SELMODE::VSEL_TENSOR_TENSOR_MODE, {cnt});")
            elif a[0] == "t":
                e(f"Compares(bits, {c[1]}, 0.0f, CMPMODE::NE, {cnt});")
                e(f"Select({dst}, bits, {a[1]}, {b[1]}, SELMODE::VSEL_TENSOR_SCALAR_MODE, {cnt});")
            elif b[0] == "t":
                e(f"Compares(bits, {c[1]}, 0.0f, CMPMODE::EQ, {cnt});")
                e(f"Select({dst}, bits, {b[1]}, {a[1]}, SELMODE::VSEL_TENSOR_SCALAR_MODE, {cnt});")
            else:
                e(f"Compares(bits, {c[1]}, 0.0f, CMPMODE::NE, {cnt});")
                e(f"Duplicate(tmp0, {a[1]}, {cnt});")
                e(f"Select({dst}, bits, tmp0, {b[1]}, SELMODE::VSEL_TENSOR_SCALAR_MODE, {cnt});")
        elif op == "fma":
            if not all(k == "t" for k, _ in A):
                raise Unsupported(f"{self.op}: fma with scalar operands")
            e(f"FmaF32({dst}, {A[0][1]}, {A[1][1]}, {A[2][1]}, tmp0, tmp1, tmp2, tmp3, tmp4, bits, {cnt});")
        elif op == "leaky_relu":
            e(f"LeakyRelu({dst}, {A[0][1]}, {A[1][1]}, {cnt});")
        elif op == "softplus":
            x, beta, thr = A[0][1], A[1][1], A[2][1]
            e(f"Muls(tmp0, {x}, {beta}, {cnt});                 // z = beta * x")
            e(f"Abs(tmp1, tmp0, {cnt});")
            e(f"Muls(tmp1, tmp1, -1.0f, {cnt});")
            e(f"Exp(tmp1, tmp1, {cnt});                         // exp(-|z|)")
            e(f"Log1pF32({dst}, tmp1, tmp2, tmp3, bits, {cnt});")
            e(f"Maxs(tmp1, tmp0, 0.0f, {cnt});")
            e(f"Add({dst}, {dst}, tmp1, {cnt});")
            e(f"Muls({dst}, {dst}, 1.0f / ({beta}), {cnt});")
            e(f"Compares(bits, tmp0, {thr}, CMPMODE::GT, {cnt});   // linear above the threshold")
            e(f"Select({dst}, bits, {x}, {dst}, SELMODE::VSEL_TENSOR_TENSOR_MODE, {cnt});")
        else:
            if len(A) != 1 or A[0][0] != "t":
                raise Unsupported(f"{self.op}: '{op}' with these operands")
            x = A[0][1]
            unary = {"neg": [f"Muls({dst}, {x}, -1.0f, {cnt});"], "abs": [f"Abs({dst}, {x}, {cnt});"],
                     "exp": [f"Exp({dst}, {x}, {cnt});"], "log": [f"Ln({dst}, {x}, {cnt});"],
                     "sqrt": [f"Sqrt({dst}, {x}, {cnt});"], "relu": [f"Maxs({dst}, {x}, 0.0f, {cnt});            // relu, NaN kept"],
                     "sq": [f"Mul({dst}, {x}, {x}, {cnt});"],
                     "round": self.to_integral(dst, x, "CAST_RINT", cnt),
                     "trunc": self.to_integral(dst, x, "CAST_TRUNC", cnt),
                     "rsqrt": [f"Sqrt(tmp0, {x}, {cnt});", f"Reciprocal({dst}, tmp0, {cnt});"],
                     "recip": [f"Reciprocal({dst}, {x}, {cnt});"],
                     "not": [f"Compares(bits, {x}, 0.0f, CMPMODE::EQ, {cnt});",
                             f"Duplicate(tmp0, 1.0f, {cnt});",
                             f"Select({dst}, bits, tmp0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, {cnt});"],
                     "sigmoid": [f"Muls(tmp0, {x}, -1.0f, {cnt});", f"Exp(tmp0, tmp0, {cnt});",
                                 f"Adds(tmp0, tmp0, 1.0f, {cnt});",
                                 f"Reciprocal({dst}, tmp0, {cnt});           // 1 / (1 + exp(-x))"],
                     "silu": [f"Muls(tmp0, {x}, -1.0f, {cnt});", f"Exp(tmp0, tmp0, {cnt});",
                              f"Adds(tmp0, tmp0, 1.0f, {cnt});",
                              f"Div({dst}, {x}, tmp0, {cnt});             // x / (1 + exp(-x))"],
                     "gelu_tanh": [f"Mul(tmp0, {x}, {x}, {cnt});", f"Mul(tmp0, tmp0, {x}, {cnt});",
                                   f"Muls(tmp0, tmp0, 0.044715f, {cnt});", f"Add(tmp0, tmp0, {x}, {cnt});",
                                   f"Muls(tmp0, tmp0, -1.5957691216057308f, {cnt});  // -2 * sqrt(2/pi) * (x + 0.044715 x^3)",
                                   f"Exp(tmp0, tmp0, {cnt});", f"Adds(tmp0, tmp0, 1.0f, {cnt});",
                                   f"Div({dst}, {x}, tmp0, {cnt});             // x * sigmoid(2z) = 0.5 x (1 + tanh z)"],
                     "mish": [f"Mins(tmp0, {x}, 20.0f, {cnt});", f"Exp(tmp0, tmp0, {cnt});",
                              f"Adds(tmp1, tmp0, 2.0f, {cnt});",
                              f"Mul(tmp0, tmp0, tmp1, {cnt});            // n = e (e + 2)",
                              f"Adds(tmp1, tmp0, 2.0f, {cnt});", f"Div(tmp0, tmp0, tmp1, {cnt});",
                              f"Mul({dst}, {x}, tmp0, {cnt});             // x * tanh(softplus(x)) = x n / (n + 2)"],
                     "hardswish": [f"Adds(tmp0, {x}, 3.0f, {cnt});", f"Maxs(tmp0, tmp0, 0.0f, {cnt});",
                                   f"Mins(tmp0, tmp0, 6.0f, {cnt});", f"Mul({dst}, {x}, tmp0, {cnt});",
                                   f"Muls({dst}, {dst}, {_flt(1 / 6)}, {cnt});"],
                     "log1p": [f"Log1pF32({dst}, {x}, tmp2, tmp3, bits, {cnt});"],
                     }
            if op in unary:
                L.extend(unary[op])
            elif op in mathlib.HELPER_OPS:
                e(f"{mathlib.HELPER_OPS[op]}({dst}, {x}, tmp0, tmp1, tmp2, tmp3, bits, {cnt});")
            else:
                raise Unsupported(f"{self.op}: no vector lowering for '{op}'")
        return [ind + s for s in L]

    @staticmethod
    def to_integral(dst, x, mode, cnt) -> list[str]:
        """Round to an integral float through int32 (|x| >= 2^23 is already integral; NaN kept).
        int32 -> float takes CAST_RINT: exact here, and the one mode both A2 and 950 list."""
        return [f"Cast(tmp0.ReinterpretCast<int32_t>(), {x}, RoundMode::{mode}, {cnt});",
                f"Cast({dst}, tmp0.ReinterpretCast<int32_t>(), RoundMode::CAST_RINT, {cnt});",
                f"Abs(tmp1, {x}, {cnt});",
                f"Compares(bits, tmp1, 8388608.0f, CMPMODE::LT, {cnt});",
                f"Select({dst}, bits, {dst}, {x}, SELMODE::VSEL_TENSOR_TENSOR_MODE, {cnt});"]

    # ---------------------------------------------------------------- compute functions
    def compute_rows(self, vi: int, v: VariantCode) -> str:
        """ComputeV<vi>(pass, nr, cw, pitch, perRowStats): one tile in row/split/chunk mode."""
        nodes = v.p.nodes
        out = [f"    // variant {vi}: {v.npass} pass(es)",
               f"    __aicore__ inline void ComputeV{vi}(uint32_t pass, uint64_t row0, uint32_t nr, uint32_t col0, "
               f"uint32_t cw, uint32_t pitch, bool perRowStats)",
               "    {",
               "        const uint32_t n = AlignUpTo(nr * pitch, VEC_ALIGN);   // whole-tile count (full 256 B repeats)",
               "        (void)row0; (void)col0; (void)perRowStats;"]
        for q in range(v.npass):
            out.append(f"        {'if' if q == 0 else '} else if'} (pass == {q}) {{")
            ind = "            "
            assign = v.slot[q]
            for i in v.pass_nodes[q]:
                nd = nodes[i]
                dst = f"slot[{assign[i]}]"
                if nd.op == "load":
                    take = f"TakeLoad{nd.params['load']}({dst}, row0, nr, cw, pitch);"
                    if v.first_pass.get(i, q) < q:
                        out.append(f"{ind}if (td_.mode != MODE_ROWS) {{   // whole rows: still resident from pass {v.first_pass[i]}")
                        out.append(f"{ind}    {take}")
                        out.append(f"{ind}}}")
                    elif i in v.staged:
                        out.append(f"{ind}if (td_.mode != MODE_ROWS || !staged_) {{   // the same for every row: staged on the first tile")
                        out.append(f"{ind}    {take}")
                        out.append(f"{ind}}}")
                    elif i == v.top_resident and nd.params["load"] == self.held:
                        out.append(f"{ind}HoldLoad{self.held}({dst}, row0, nr, cw, pitch);   // kept for every pass of the tile")
                    else:
                        out.append(f"{ind}{take}")
                    if self.wide and i == max(k for k in v.pass_nodes[q] if nodes[k].op == "load"):
                        out.extend(wideint.guard(vi, len(self.plan.loads), ind))
                    continue
                stat_args = [a for a in nd.args if nodes[a].kind == "stat"]
                args = []
                for a in nd.args:
                    if nodes[a].kind == "full":
                        args.append(("t", f"slot[{v.slot[q][a]}]"))
                    else:
                        args.append(("s", self.sexpr(v, a)))
                if not stat_args:
                    out.append(f"{ind}// {nd.op}")
                    out.extend(self.vec(nd, dst, args, "n", ind))
                elif nd.op in ("add", "sub", "mul", "div", "max", "min"):
                    out.append(f"{ind}for (uint32_t j = 0; j < nr; ++j) {{   // {nd.op} with a row statistic")
                    out.append(f"{ind}    const uint32_t s = perRowStats ? j : 0;")
                    rargs = [(k, f"{a}[j * pitch]" if k == "t" else a) for k, a in args]
                    out.extend(self.vec(nd, f"{dst}[j * pitch]", rargs, "cw", ind + "    "))
                    out.append(f"{ind}}}")
                else:
                    # materialise the statistics over the tile, then a whole-tile op
                    mats = []
                    for k, a in enumerate(nd.args):
                        if nodes[a].kind == "stat":
                            mats.append(k)
                    if len(mats) > 1 or self.ntmp < 4:
                        raise Unsupported(f"{self.op}: '{nd.op}' of two row statistics over a tile")
                    k = mats[0]
                    out.append(f"{ind}for (uint32_t j = 0; j < nr; ++j) {{")
                    out.append(f"{ind}    const uint32_t s = perRowStats ? j : 0;")
                    out.append(f"{ind}    Duplicate(tmp3[j * pitch], {self.sexpr(v, nd.args[k])}, cw);")
                    out.append(f"{ind}}}")
                    args[k] = ("t", "tmp3")
                    out.extend(self.vec(nd, dst, args, "n", ind))
            # reductions of this pass: one partial per row, then fold into the row statistics
            reds = [i for i, p in v.rpass.items() if p == q]
            if reds:
                out.append(f"{ind}for (uint32_t j = 0; j < nr; ++j) {{")
                for k, i in enumerate(reds):
                    nd = nodes[i]
                    src = f"slot[{assign[nd.args[0]]}]"
                    extra = "" if nd.op == "rsum" else ", true" if nd.op in ARG_BETTER else ", false"
                    out.append(f"{ind}    {REDUCE_API[nd.op]}(partial[({k} * MAX_TILE_ROWS + j) * 8], "
                               f"{src}[j * pitch], work, cw{extra});")
                out.append(f"{ind}}}")
                out.append(f"{ind}WaitVectorForScalar();")
                out.append(f"{ind}for (uint32_t j = 0; j < nr; ++j) {{")
                out.append(f"{ind}    const uint32_t s = perRowStats ? j : 0;")
                for k, i in enumerate(reds):
                    nd = nodes[i]
                    part = f"partial.GetValue(({k} * MAX_TILE_ROWS + j) * 8)"
                    st = f"stat_[{v.stat_index[i]}][s]"
                    if nd.op in ARG_BETTER:
                        # (value, index) of this chunk's first max; a later chunk wins only when better
                        best = f"stat_[NUM_STATS - 1][s]"
                        out.append(f"{ind}    if ({ARG_BETTER[nd.op]}({part}, {best})) {{")
                        out.append(f"{ind}        {best} = {part};")
                        out.append(f"{ind}        {st} = static_cast<float>(col0 + partial.ReinterpretCast<uint32_t>()"
                                   f".GetValue(({k} * MAX_TILE_ROWS + j) * 8 + 1));")
                        out.append(f"{ind}    }}")
                        continue
                    fold = {"rsum": f"{st} += {part};",
                            "rmax": f"{st} = FoldMax({st}, {part});",
                            "rmin": f"{st} = FoldMin({st}, {part});"}[nd.op]
                    out.append(f"{ind}    {fold}")
                out.append(f"{ind}}}")
            if q == v.npass - 1:
                for k, (node, kind) in enumerate(v.p.outputs):
                    if kind == "full":
                        out.append(f"{ind}StoreOut{k}(slot[{assign[node]}], n);")
        out.append("        }")
        out.append("    }")
        return "\n".join(out)

    def finish_rows(self, vi: int, v: VariantCode) -> str:
        """FinishV<vi>(pass, base, nr): statistics that became available, and stat outputs."""
        nodes = v.p.nodes
        out = [f"    __aicore__ inline void InitStatsV{vi}(uint32_t pass, uint32_t nr)",
               "    {"]
        for q in range(v.npass):
            reds = [i for i, p in v.rpass.items() if p == q]
            if not reds:
                continue
            out.append(f"        if (pass == {q}) {{")
            out.append("            for (uint32_t s = 0; s < nr; ++s) {")
            for i in reds:
                out.append(f"                stat_[{v.stat_index[i]}][s] = {REDUCE_INIT[nodes[i].op]};")
                if nodes[i].op in ARG_VALUE_INIT:
                    out.append(f"                stat_[NUM_STATS - 1][s] = {ARG_VALUE_INIT[nodes[i].op]};   // running value")
            out.append("            }")
            out.append("        }")
        out.append("    }")
        out.append(f"    __aicore__ inline void FinishV{vi}(uint32_t pass, uint64_t base, uint32_t nr)")
        out.append("    {")
        out.append("        (void)base;")
        for q in range(v.npass):
            derived = [i for i in v.stats if nodes[i].op not in REDUCE and v.avail[i] == q + 1]
            souts = [(k, node) for k, (node, kind) in enumerate(v.p.outputs) if kind == "stat" and v.avail[node] == q + 1]
            if not derived and not souts:
                continue
            out.append(f"        if (pass == {q}) {{")
            if derived:
                out.append("            for (uint32_t s = 0; s < nr; ++s) {")
                for i in derived:
                    out.append(f"                stat_[{v.stat_index[i]}][s] = {self.scalar_op(nodes[i], [self.sexpr(v, a) for a in nodes[i].args])};")
                out.append("            }")
            for k, node in souts:
                if self.plan.int_arg and nodes[node].op in ARG_BETTER:
                    out.append(f"            ExactArgRowsV{vi}(base, nr);")
                out.append(f"            StoreStat{k}(base, nr, {v.stat_index[node]});")
            out.append("        }")
        out.append("    }")
        return "\n".join(out)

    def compute_cols(self, vi: int, v: VariantCode) -> str:
        """Column mode: tile = nb reduced positions x wc columns; statistics are vectors."""
        nodes = v.p.nodes
        out = [f"    __aicore__ inline void ComputeColV{vi}(uint32_t pass, uint64_t r0, uint32_t nb, uint32_t wc, uint32_t pitch)",
               "    {",
               "        const uint32_t n = AlignUpTo(nb * pitch, VEC_ALIGN);",
               "        (void)r0;"]
        online = self.online[vi]
        for qp in range(v.npass):
            out.append(f"        {'if' if qp == 0 else '} else if'} (pass == {qp}) {{")
            ind = "            "
            if online and qp == 1:
                out.append(f"{ind}// computed in pass 0 (the running max and its sum of exp)")
                continue
            # online softmax: pass 0 also sums exp(x - max) against the running max
            for q in ([0, 1] if online and qp == 0 else [qp]):
                assign = v.slot[q]
                if online and q == 1:
                    out.extend(self.online_max(v, online, ind))
                for i in v.pass_nodes[q]:
                    nd = nodes[i]
                    dst = f"slot[{assign[i]}]"
                    if nd.op == "load" and online and q == 1:
                        continue   # loaded in pass 0
                    if nd.op == "load":
                        take = f"TakeColLoad{nd.params['load']}({dst}, n);"
                        if self.short and v.first_pass.get(i, q) < q:
                            out.append(f"{ind}if (td_.mode != MODE_SHORT) {{   // short rows: still resident from pass {v.first_pass[i]}")
                            out.append(f"{ind}    {take}")
                            out.append(f"{ind}}}")
                        elif self.short and i in v.staged:
                            out.append(f"{ind}if (td_.mode != MODE_SHORT || !staged_) {{   // the same for every row: filled on the first tile")
                            out.append(f"{ind}    {take}")
                            out.append(f"{ind}}}")
                        else:
                            out.append(f"{ind}{take}")
                        continue
                    args = []
                    for a in nd.args:
                        if nodes[a].kind == "full":
                            args.append(("t", f"slot[{assign[a]}]"))
                        elif nodes[a].kind == "stat":
                            args.append(("v", f"StatVec({v.stat_index[a]})"))
                        else:
                            args.append(("s", self.sexpr(v, a)))
                    if not any(k == "v" for k, _ in args):
                        out.extend(self.vec(nd, dst, args, "n", ind))
                    elif nd.op in ("add", "sub", "mul", "div", "max", "min") and sum(k == "t" for k, _ in args) == 1:
                        out.extend(self.column_sweep(nd, dst, args, ind))
                    else:
                        vk = [k for k, (kind, _) in enumerate(args) if kind == "v"]
                        if len(vk) > 1:
                            raise Unsupported(f"{self.op}: '{nd.op}' of two column statistics over a tile")
                        k = vk[0]
                        out.append(f"{ind}for (uint32_t j = 0; j < nb; ++j) {{")
                        out.append(f"{ind}    DataCopy(tmp3[j * pitch], {args[k][1]}, pitch);")
                        out.append(f"{ind}}}")
                        args[k] = ("t", "tmp3")
                        out.extend(self.vec(nd, dst, args, "n", ind))
                reds = [i for i, p in v.rpass.items() if p == q and not (online and i == online["m"])]
                outs_q = {node for node, kind in v.p.outputs if kind == "full"} if q == v.npass - 1 else set()
                # a reduced tile nothing reads afterwards is folded by halving; a tile resident for later
                # passes (short rows) is kept and accumulated position by position
                foldable = [i for i in reds if nodes[i].op in VEC_COMBINE and nodes[i].args[0] not in outs_q
                            and sum(1 for r in reds if nodes[r].args[0] == nodes[i].args[0]) == 1]
                for i in foldable:
                    nd, src, stat = nodes[i], f"slot[{assign[nodes[i].args[0]]}]", f"StatVec({v.stat_index[i]})"
                    if self.short and nd.args[0] in v.first_pass:
                        out.append(f"{ind}if (td_.mode != MODE_SHORT) {{")
                        out.extend(self.column_fold(nd, src, stat, ind + "    "))
                        out.append(f"{ind}}} else {{")
                        out.append(f"{ind}    for (uint32_t j = 0; j < nb; ++j) {{")
                        out.append(f"{ind}        {VEC_COMBINE[nd.op]}({stat}, {stat}, {src}[j * pitch], wc);")
                        out.append(f"{ind}    }}")
                        out.append(f"{ind}}}")
                    else:
                        out.extend(self.column_fold(nd, src, stat, ind))
                reds = [i for i in reds if i not in foldable]
                if reds:
                    out.append(f"{ind}for (uint32_t j = 0; j < nb; ++j) {{")
                    for i in reds:
                        nd = nodes[i]
                        if nd.op in ARG_BETTER:
                            out.append(f"{ind}    {ARG_BETTER[nd.op]}Cols(StatVec({v.stat_index[i]}), StatVec(NUM_STATS - 1), "
                                       f"slot[{assign[nd.args[0]]}][j * pitch], static_cast<float>(r0 + j), tmp0, tmp1, bits, "
                                       "AlignUpTo(wc, VEC_ALIGN));")
                            continue
                        out.append(f"{ind}    {VEC_COMBINE[nd.op]}(StatVec({v.stat_index[i]}), StatVec({v.stat_index[i]}), "
                                   f"slot[{assign[nd.args[0]]}][j * pitch], wc);")
                    out.append(f"{ind}}}")
                if q == v.npass - 1:
                    for k, (node, kind) in enumerate(v.p.outputs):
                        if kind == "full":
                            out.append(f"{ind}StoreOut{k}(slot[{assign[node]}], n);")
        out.append("        }")
        out.append("    }")
        # init / finish
        out.append(f"    __aicore__ inline void InitColStatsV{vi}(uint32_t pass, uint32_t wn)")
        out.append("    {")
        for q in range(v.npass):
            reds = [i for i, p in v.rpass.items() if (0 if online and i == online["s"] else p) == q]
            if reds:
                out.append(f"        if (pass == {q}) {{")
                for i in reds:
                    out.append(f"            Duplicate(StatVec({v.stat_index[i]}), {REDUCE_INIT[nodes[i].op]}, wn);")
                    if nodes[i].op in ARG_VALUE_INIT:
                        out.append(f"            Duplicate(StatVec(NUM_STATS - 1), {ARG_VALUE_INIT[nodes[i].op]}, wn);   // running value")
                out.append("        }")
        out.append("    }")
        out.append(f"    __aicore__ inline void FinishColV{vi}(uint32_t pass, uint64_t outOff, uint32_t wc, uint32_t wn)")
        out.append("    {")
        out.append("        const uint32_t n = wn;")
        out.append("        (void)outOff; (void)wc; (void)n;")
        for q in range(v.npass):
            derived = [i for i in v.stats if nodes[i].op not in REDUCE and v.avail[i] == q + 1]
            souts = [(k, node) for k, (node, kind) in enumerate(v.p.outputs) if kind == "stat" and v.avail[node] == q + 1]
            if not derived and not souts:
                continue
            out.append(f"        if (pass == {q}) {{")
            for i in derived:
                nd = nodes[i]
                args = []
                for a in nd.args:
                    if nodes[a].kind == "stat":
                        args.append(("t", f"StatVec({v.stat_index[a]})"))
                    else:
                        args.append(("s", self.sexpr(v, a)))
                if not any(k == "t" for k, _ in args):
                    raise Unsupported(f"{self.op}: a statistic computed from scalars only")
                out.extend(self.vec(nd, f"StatVec({v.stat_index[i]})", args, "n", "            "))
            for k, node in souts:
                if self.plan.int_arg and nodes[node].op in ARG_BETTER:
                    out.append(f"            ExactArgColsV{vi}(outOff, wc);")
                out.append(f"            StoreColStat{k}(StatVec({v.stat_index[node]}), outOff, wc, wn);")
            out.append("        }")
        out.append("    }")
        return "\n".join(out)

    def column_sweep(self, nd, dst: str, args: list, ind: str) -> list[str]:
        """`x op statVec` over nb reduced positions x wc columns: one instruction per 64 columns
        whose repeats walk the positions (src1 repeat stride 0 re-reads the statistic), instead of
        one instruction per position; rows too far apart for a repeat stride (> 255 blocks) loop."""
        rargs = [("t", f"{a}[j0 * pitch + c0]") if k == "t" else ("t", f"{a}[c0]") if k == "v" else (k, a)
                 for k, a in args]
        stat_first = args[0][0] == "v"
        strides = "{1, 1, 1, 0, blk, blk}" if stat_first else "{1, 1, 1, blk, blk, 0}"
        cnt = f"mask, static_cast<uint8_t>(rep), BinaryRepeatParams{strides}"
        L = [f"{ind}if (pitch / 8 <= 255) {{   // {nd.op} with the column statistic: repeats walk the positions",
             f"{ind}    const uint8_t blk = static_cast<uint8_t>(pitch / 8);",
             f"{ind}    for (uint32_t c0 = 0; c0 < wc; c0 += VEC_ALIGN) {{",
             f"{ind}        const uint64_t mask = wc - c0 < VEC_ALIGN ? wc - c0 : VEC_ALIGN;",
             f"{ind}        for (uint32_t j0 = 0; j0 < nb; j0 += 255) {{",
             f"{ind}            const uint32_t rep = nb - j0 < 255 ? nb - j0 : 255;"]
        L += self.vec(nd, f"{dst}[j0 * pitch + c0]", rargs, cnt, ind + "            ")
        L += [f"{ind}        }}", f"{ind}    }}", f"{ind}}} else {{"]
        rargs = [("t", f"{a}[j * pitch]") if k == "t" else ("t", a) if k == "v" else (k, a) for k, a in args]
        L.append(f"{ind}    for (uint32_t j = 0; j < nb; ++j) {{")
        L += self.vec(nd, f"{dst}[j * pitch]", rargs, "wc", ind + "        ")
        L += [f"{ind}    }}", f"{ind}}}"]
        return L

    @staticmethod
    def column_fold(nd, src: str, stat: str, ind: str) -> list[str]:
        """Fold nb positions of the tile into the column statistic by halving: the upper half of
        the rows is combined into the lower half (one instruction each time), then row 0 into the
        statistic; the tile is not needed after its reduction."""
        api = VEC_COMBINE[nd.op]
        return [f"{ind}for (uint32_t m = nb; m > 1;) {{   // {nd.op}: halve the positions",
                f"{ind}    const uint32_t h = m / 2;",
                f"{ind}    {api}({src}, {src}, {src}[(m - h) * pitch], h * pitch);",
                f"{ind}    m -= h;",
                f"{ind}}}",
                f"{ind}{api}({stat}, {stat}, {src}, wc);"]

    # ---------------------------------------------------------------- whole file
    def emit(self) -> str:
        from copilot.lowering.source import render
        return render(self)
