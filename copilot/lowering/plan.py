"""From a captured task to a lowering plan: variants, the pattern, and the run-time layout rules.

The layout rules are what let one kernel serve every case: the tiling function evaluates them on
the case's shapes and attrs.
- reduction axes: `("last", k)` (the last k axes: norms) or `("attr", name)` (one axis given by an
  int attr: softmax, reductions) or `("group", attr)` (group_norm) or None (elementwise);
- per input: where its dims sit in the iteration space, `gap` = number of trailing iteration dims
  after its last dim (0 = numpy broadcasting; batch/group norm parameters sit on the channel axis:
  `("start", 1)`), and chunk k of n along the last axis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.capture import Capture, capture
from copilot.lowering.ir import Load, Program, normalise
from copilot.lowering import wideint

ONE_BYTE = {"bool", "uint8", "int8"}
FLOATS = {"float16", "bfloat16", "float32"}
INTEGERS = {"int8", "int16", "int32", "int64"}
# IR ops an integer case may use: exact on int32 lanes (Max/Min/Add/Sub/Mul, gcd by shifts)
INT_OPS = {"load", "max", "min", "add", "sub", "mul", "gcd"}


@dataclass
class LoadRule:
    input: int
    chunks: int = 1
    chunk: int = 0
    align: tuple = ("gap", 0)     # ("gap", g) or ("start", s)
    chunk_axis: tuple = ("last",)  # ("last",) or ("attr", name): the axis a chunk divides
    lanes: tuple = ()               # lane map along the last axis (see ir.Load)


@dataclass
class Plan:
    task: object
    pattern: str
    programs: list[Program]                 # one per variant
    guards: list[dict]
    conditions: list[list[tuple]]           # per variant: attr comparisons that select it
    variant_cases: list[list[int]]
    loads: list[LoadRule]
    axis_rule: tuple | None
    main_input: int | None                  # input whose shape is the iteration space
    unserved: dict[str, str] = field(default_factory=dict)   # case id -> reason
    notes: list[str] = field(default_factory=list)
    # working type: "float" (every case fp32), "int32" (every case integer data, exact int32 lanes)
    # or ("by", i): int32 where input i is an integer, fp32 where it is a float (maximum)
    calc: object = "float"
    refused_input: int | None = None     # integer data in this input is not served (GRAPH_FAILED)
    # int64 data narrowed per tile to int32 lanes when below 2^wide_bits (wideint.py), else None
    wide_bits: int | None = None
    # argmax / argmin of integer data: ranked in fp32, lanes past 2^24 again in int64 (wideint.py)
    int_arg: bool = False
    # variants outside the patterns, as (guards, conditions): the tiling function refuses their attrs
    refused_variants: list = field(default_factory=list)

    @property
    def has_reduction(self) -> bool:
        return self.axis_rule is not None


def build_plan(task) -> Plan:
    from copilot.lowering.lists import has_lists, plan_lists
    from copilot.lowering.recurrent import plan_recurrent

    recurrent = plan_recurrent(task)  # nn.LSTM / nn.GRU over tensor-list weights: its own MIX kernel
    if recurrent is not None:
        return recurrent
    if has_lists(task):               # tensor lists: elementwise over the buffers, or a list kernel
        return plan_lists(task)
    from copilot.lowering.semantic import plan_semantic

    modelled = plan_semantic(task)    # an untraceable golden matched by a semantic model (nms): its own kernel
    if modelled is not None:
        return modelled
    from copilot.lowering.roialign import plan_roi_align

    roi_aligned = plan_roi_align(task)  # bilinear ROI pooling by boxes: its own two-phase vector kernel
    if roi_aligned is not None:
        return roi_aligned
    from copilot.lowering.sinkhorn import plan_sinkhorn

    sinkhorned = plan_sinkhorn(task)   # iterative row / column normalisation: its own kernel
    if sinkhorned is not None:
        return sinkhorned
    from copilot.lowering.rotary import plan_rotary

    rotated = plan_rotary(task)       # rotary position embedding, every layout and form: its own kernel
    if rotated is not None:
        return rotated
    from copilot.lowering.rowcombine import plan_row_combine

    combined = plan_row_combine(task)  # rows gathered by an index, weighted and summed: its own kernel
    if combined is not None:
        return combined
    from copilot.lowering.swiglu import plan_swiglu_quant

    swiglued = plan_swiglu_quant(task)  # dequant + SwiGLU + per-token int8 quant: its own kernel
    if swiglued is not None:
        return swiglued
    from copilot.lowering.rowmove import plan_row_move

    moved_rows = plan_row_move(task)  # blocks of rows regrouped by a count table: its own kernel
    if moved_rows is not None:
        return moved_rows
    from copilot.lowering.engram import plan_engram

    engram = plan_engram(task)        # engram gate: dual RMSNorm gate, depthwise causal conv, residual
    if engram is not None:
        return engram
    from copilot.lowering.groupnorm import plan_group_norm

    grouped = plan_group_norm(task)   # one group norm of (x, gamma, beta): its own kernel
    if grouped is not None:
        return grouped
    from copilot.lowering.movement import plan_movement

    moved = plan_movement(task)       # a pure layout transform: its own data-movement kernel
    if moved is not None:
        return moved
    from copilot.lowering.unique import plan_unique

    uniqued = plan_unique(task)       # torch.unique: presence over a key domain, ranks, a gather: its own kernel
    if uniqued is not None:
        return uniqued
    from copilot.lowering.indexing import plan_index

    indexed = plan_index(task)        # an index gather / scatter / scan: its own kernel
    if indexed is not None:
        return indexed
    from copilot.lowering.gridsample import plan_grid_sample

    sampled = plan_grid_sample(task)  # 3-D grid_sample (trilinear / nearest at grid points): its own kernel
    if sampled is not None:
        return sampled
    from copilot.lowering.resize import plan_resize

    resized = plan_resize(task)       # bilinear resize of [N, C, H, W] (gathers by computed index): its own kernel
    if resized is not None:
        return resized
    from copilot.lowering.conv import plan_conv

    convolved = plan_conv(task)       # a 2-D convolution: depthwise on the vector unit, else img2col + cube
    if convolved is not None:
        return convolved
    from copilot.lowering.pooling import plan_adaptive_pool

    pooled = plan_adaptive_pool(task)  # 3-D adaptive average pool (windows by computed index): its own kernel
    if pooled is not None:
        return pooled
    from copilot.lowering.dilation import plan_dilation

    dilated = plan_dilation(task)     # a max-plus window (morphological dilation): its own vector kernel
    if dilated is not None:
        return dilated
    from copilot.lowering.attention import plan_attention

    attended = plan_attention(task)   # softmax(Q K^T) V: its own MIX kernel (attention.py)
    if attended is not None:
        return attended
    from copilot.lowering.cube import plan_cube

    cubed = plan_cube(task)           # a matrix product with elementwise prologue/epilogue: a MIX kernel
    if cubed is not None:
        return cubed
    _check_dtypes(task)
    cap: Capture = capture(task)
    refused = _refused_variants(task, cap)
    if refused:                       # plan the other variants; the attrs of these are refused at run time
        return _plan_apart(task, refused)
    variants = list(zip(cap.variants, cap.guards, cap.conditions))
    try:
        return _plan_captured(task, cap)
    except Unsupported as exc:
        # variants that lower alone but not together (an input placed differently per variant):
        # the largest one that lowers is served, the others refused by their attrs
        if len(variants) < 2 or not all(g or c for _, g, c in variants):
            raise
        why = "its variant does not share a kernel with the served one (" + str(exc).split(": ", 1)[-1] + ")"
        for v in sorted(range(len(variants)), key=lambda v: -len(variants[v][0])):
            others = [(m, g, c, why) for u, (m, g, c) in enumerate(variants) if u != v]
            try:
                return _plan_apart(task, others)
            except Unsupported:
                continue
        raise


def _plan_apart(task, refused: list) -> Plan:
    """The plan of the cases outside `refused` ((case indices, guards, conditions, reason) each)."""
    from dataclasses import replace

    out = {i for members, *_ in refused for i in members}
    plan = build_plan(replace(task, cases=[c for i, c in enumerate(task.cases) if i not in out]))
    plan.refused_variants = plan.refused_variants + [(g, cs) for _, g, cs, _ in refused]
    for members, _, _, why in refused:
        for i in members:
            plan.unserved[task.cases[i].id] = why
    return plan


def _plan_captured(task, cap: Capture) -> Plan:
    """The plan of captured cases whose every variant lowers."""
    per_case: list[Program] = [None] * len(task.cases)
    for v, members in enumerate(cap.variants):
        for i in members:
            per_case[i] = normalise(task, task.cases[i], cap.traces[i].gm, cap.attr_consts[v])
        ref = per_case[members[0]].structure()
        for i in members[1:]:
            if per_case[i].structure() != ref:
                raise Unsupported(f"{task.name}: case {task.cases[i].id} lowers to a different program "
                                  f"than case {task.cases[members[0]].id}")
    _merge_variants(task, cap, per_case)
    _union_loads(task, per_case)
    programs = [per_case[m[0]] for m in cap.variants]
    load_keys = [tuple((l.input, l.chunks, l.chunk, l.lanes) for l in p.loads) for p in programs]
    if len(set(load_keys)) != 1:
        raise Unsupported(f"{task.name}: variants read the inputs differently")
    for p in programs:
        _check_mask_use(task, p)
    axis_rule = _axis_rule(task, per_case)
    main_input = _main_input(task, per_case, axis_rule)
    loads = _load_rules(task, per_case, axis_rule)
    plan = Plan(task, _pattern(task, programs, axis_rule), programs, cap.guards, cap.conditions, cap.variants, loads,
                axis_rule, main_input)
    try:
        plan.calc = _calc_type(task, programs)
    except Unsupported as exc:
        # float cases lower; the integer ones (an op with no exact int32 form) are listed as not served
        ints = [_integer_case(c) for c in task.cases]
        sel = next((i for i in range(len(task.inputs))
                    if all((c.dtypes[i] in INTEGERS) == k for c, k in zip(task.cases, ints))), None)
        if all(ints) or sel is None:
            raise
        plan.refused_input = sel
        reason = str(exc).split(": ", 1)[1]
        for c, k in zip(task.cases, ints):
            if k:
                plan.unserved[c.id] = reason
    if plan.calc != "float" and plan.refused_input is None:
        plan.wide_bits = wideint.narrow_bits(programs)
    plan.int_arg = any(map(_integer_case, task.cases)) and all(map(wideint.arg_only, programs))
    _check_cases(plan, per_case)
    return plan


def _union_loads(task, per_case: list[Program]) -> None:
    """Cases that leave out optional inputs read fewer inputs: every program gets the loads of all
    (each variant's nodes read only its own), so one kernel serves every pattern of absent inputs.
    Programs whose loads differ otherwise are left as they are."""
    if all(c.shapes[i] is not None for c in task.cases for i in range(len(task.inputs))):
        return
    keys = list(dict.fromkeys((l.input, l.chunks, l.chunk, l.lanes) for p in per_case for l in p.loads))
    for c, p in zip(task.cases, per_case):
        have = [(l.input, l.chunks, l.chunk, l.lanes) for l in p.loads]
        if any(c.shapes[k[0]] is not None for k in keys if k not in have):
            return                     # a present input some variants read and this one does not
    for p in per_case:
        have = {(l.input, l.chunks, l.chunk, l.lanes): j for j, l in enumerate(p.loads)}
        loads = [p.loads[have[k]] if k in have else Load(k[0], k[1], k[2], lanes=k[3]) for k in keys]
        where = {j: keys.index(k) for k, j in have.items()}
        for n in p.nodes:
            if n.op == "load" and n.params["load"] >= 0:
                n.params = {**n.params, "load": where[n.params["load"]]}
        p.loads = loads


def _refused_variants(task, cap: Capture) -> list:
    """Variants whose program is outside the patterns while another lowers, each as (case indices,
    guards, conditions, reason); only when their attrs tell them apart from every served case."""
    if len(cap.variants) < 2:
        return []
    refused = []
    for v, members in enumerate(cap.variants):
        try:
            normalise(task, task.cases[members[0]], cap.traces[members[0]].gm, cap.attr_consts[v])
        except Unsupported as exc:
            if not (cap.guards[v] or cap.conditions[v]):
                raise
            refused.append((members, cap.guards[v], cap.conditions[v], str(exc).split(": ", 1)[-1]))
    if len(refused) == len(cap.variants):
        raise Unsupported(f"{task.name}: {refused[0][3]}")
    return refused


def _integer_case(case) -> bool:
    given = [d for d in case.dtypes if d is not None]      # absent optional inputs have no dtype
    return bool(given) and all(d in INTEGERS for d in given)


def _calc_type(task, programs):
    """int32 lanes for cases whose data are all integers, fp32 for the rest; a task with both
    picks per build from an input that is an integer exactly in the integer cases."""
    ints = [_integer_case(c) for c in task.cases]
    if not any(ints) or all(map(wideint.arg_only, programs)):
        return "float"    # an index reduction ranks integers in fp32, exactly (wideint.exact_arg_rows)
    for p in programs:
        bad = sorted({n.op for n in p.nodes if n.op not in INT_OPS and n.kind == "full"})
        if bad:
            raise Unsupported(f"{task.name}: '{bad[0]}' on integer data; integer cases lower Max/Min/Add/Sub/Mul "
                              "and gcd (exact int32 lanes) only")
        red = sorted({n.op for n in p.nodes if n.kind == "stat"})
        if red:
            raise Unsupported(f"{task.name}: reduction '{red[0]}' on integer data: the reduce APIs take "
                              "half/float only on arch 2201, and fp32 is not exact past 2^24")
        if any(n.kind != "full" for n in p.nodes if n.op not in ("const", "attr")) or \
                any(n.op in ("const", "attr") for n in p.nodes):
            raise Unsupported(f"{task.name}: a scalar operand on integer data")
    if all(ints):
        return "int32"
    for i in range(len(task.inputs)):
        if all((c.dtypes[i] in INTEGERS) == k for c, k in zip(task.cases, ints)):
            return ("by", i)
    raise Unsupported(f"{task.name}: no input tells the integer cases from the float ones")


def _merge_variants(task, cap: Capture, per_case: list[Program]) -> None:
    """Variants whose graphs differ only where the IR does not (a dtype cast that is a no-op in
    fp32, say) become one; the rest must be told apart by their attrs."""
    merged: list[int] = []
    for v, members in enumerate(cap.variants):
        same = next((u for u in merged if per_case[cap.variants[u][0]].structure() ==
                     per_case[members[0]].structure()), None)
        if same is None:
            merged.append(v)
            continue
        cap.variants[same] = cap.variants[same] + members
        cap.guards[same] = {k: x for k, x in cap.guards[same].items() if cap.guards[v].get(k, object()) == x}
        cap.conditions[same] = [c for c in cap.conditions[same] if c in cap.conditions[v]]
    cap.variants = [cap.variants[v] for v in merged]
    cap.guards = [cap.guards[v] for v in merged]
    cap.conditions = [cap.conditions[v] for v in merged]
    cap.attr_consts = [cap.attr_consts[v] for v in merged]
    if len(merged) == 1:
        cap.guards, cap.conditions = [{}], [[]]
    keys = [(tuple(sorted(g.items(), key=repr)), tuple(c)) for g, c in zip(cap.guards, cap.conditions)]
    if len(set(map(repr, keys))) != len(keys):
        raise Unsupported(f"{task.name}: cases trace to different programs that no attr tells apart "
                          "(the golden branches on shapes or dtypes)")


def _check_dtypes(task):
    for spec in task.inputs + task.outputs:
        bad = [d for d in spec.dtypes if d not in FLOATS | ONE_BYTE | INTEGERS]
        if bad:
            raise Unsupported(f"{task.name}: {spec.name} has dtype {bad[0]}; the lowering handles float16/bfloat16/"
                              "float32, bool/uint8 masks and int8/int16/int32 data (int64 cases are listed as not served)")
    for spec in task.inputs:
        if "bool" in spec.dtypes and set(spec.dtypes) & FLOATS:
            raise Unsupported(f"{task.name}: input {spec.name} is bool in some cases and float in others")
    for spec in task.outputs:
        if set(spec.dtypes) & {"bool", "uint8"}:
            raise Unsupported(f"{task.name}: output {spec.name} of dtype {spec.dtypes}")


def _check_mask_use(task, p: Program):
    """bool inputs are masks read as bytes: only their zero / non-zero value may matter."""
    mask_inputs = {i for i, s in enumerate(task.inputs) if "bool" in s.dtypes}
    for ni, node in enumerate(p.nodes):
        if node.op != "load" or node.params["load"] < 0 or p.loads[node.params["load"]].input not in mask_inputs:
            continue
        for user in p.nodes:
            if ni not in user.args:
                continue
            ok = (user.op == "cmp" and user.params.get("mode") in ("NE", "EQ") and
                  any(p.nodes[a].op == "const" and p.nodes[a].params["value"] == 0.0 for a in user.args)) \
                or (user.op == "where" and user.args[0] == ni)
            if not ok:
                raise Unsupported(f"{task.name}: mask input {task.inputs[p.loads[node.params['load']].input].name} "
                                  f"is used as a number ({user.op}), not as a condition")


def _axis_rule(task, progs: list[Program]):
    if not any(p.has_reduction for p in progs):
        return None
    if not all(p.has_reduction for p in progs):
        raise Unsupported(f"{task.name}: some cases reduce and others do not")
    if all(p.reduce_dims == ("group",) for p in progs):
        attrs = {p.group_attr for p in progs}
        if len(attrs) != 1 or None in attrs:
            raise Unsupported(f"{task.name}: the group count of group_norm is not an int attr")
        return ("group", attrs.pop())
    facts = [(len(p.main_shape), p.reduce_dims) for p in progs]
    if all(tuple(d) == tuple(range(r)) for r, d in facts) and len({r for r, _ in facts}) > 1:
        return ("all",)      # every element to one value, whatever the rank
    ks = {len(d) for _, d in facts}
    if len(ks) == 1:
        k = ks.pop()
        if all(tuple(d) == tuple(range(r - k, r)) for r, d in facts):
            return ("last", k)
        if k == 1:
            for spec in task.attrs:
                if spec.type != "int":
                    continue
                if all(c.attrs.get(spec.name) is not None and
                       c.attrs[spec.name] % r == d[0] for c, (r, d) in zip(task.cases, facts)):
                    return ("attr", spec.name)
    raise Unsupported(f"{task.name}: the reduced axes {[d for _, d in facts][:3]}... follow no rule "
                      "(last k axes, or one axis given by an int attr)")


def _main_input(task, progs, axis_rule):
    """The input whose shape is the iteration space (reductions), else None (broadcast of all)."""
    for i in range(len(task.inputs)):
        if all(c.shapes[i] is not None and tuple(c.shapes[i]) == tuple(p.main_shape) for c, p in zip(task.cases, progs)):
            return i
    if axis_rule is not None:
        raise Unsupported(f"{task.name}: no input has the shape of the reduced tensor")
    return None


def _load_rules(task, progs, axis_rule) -> list[LoadRule]:
    rules = []
    for li, ld in enumerate(progs[0].loads):
        gaps = []
        # a case that leaves the optional input out does not read it
        reading = [(c, p) for c, p in zip(task.cases, progs) if c.shapes[ld.input] is not None]
        for c, p in reading:
            g = p.loads[li].gap or 0
            gaps.append((len(p.main_shape), len(c.shapes[ld.input]), g))
        if any(isinstance(g, tuple) for _, _, g in gaps):
            places = {g for _, _, g in gaps if isinstance(g, tuple)}
            # a case whose unit dims let plain broadcasting place the input too must fit the places
            if len(places) != 1 or not all(isinstance(g, tuple) or _fits_places(c, p, ld, next(iter(places)))
                                           for (c, p), (_, _, g) in zip(reading, gaps)):
                raise Unsupported(f"{task.name}: input {task.inputs[ld.input].name} broadcasts along "
                                  "different axes in different cases")
            align = ("dims", next(iter(places)))
        elif len({g for _, _, g in gaps}) == 1:
            align = ("gap", gaps[0][2])
        else:
            starts = {r - g - ri for r, ri, g in gaps}
            if len(starts) != 1:
                raise Unsupported(f"{task.name}: input {task.inputs[ld.input].name} broadcasts along "
                                  "different axes in different cases")
            align = ("start", starts.pop())
        rules.append(LoadRule(ld.input, ld.chunks, ld.chunk, align, _chunk_axis(task, progs, li), ld.lanes))
    return rules


def _fits_places(case, prog, ld, places: tuple) -> bool:
    """Input dim d of `ld` at iteration dim (rank - places[d]) fits this case's shapes."""
    shape, main = list(case.shapes[ld.input]), list(prog.main_shape)
    if len(places) != len(shape):
        return False
    for d, (n, at) in enumerate(zip(shape, places)):
        n = 2 * n if d == len(shape) - 1 and ld.lanes == ("rep", 2) else n
        if not 0 < at <= len(main) or n not in (1, main[len(main) - at]):
            return False
    return True


def _chunk_axis(task, progs, li) -> tuple:
    """The axis a chunked load divides, as a run-time rule: the last axis, or an int attr's."""
    axes = [p.loads[li].axis for p in progs]
    if progs[0].loads[li].chunks == 1 or all(a == -1 for a in axes):
        return ("last",)
    inp = progs[0].loads[li].input
    for spec in task.attrs:
        if spec.type == "int" and all(
                c.attrs.get(spec.name) is not None and
                c.attrs[spec.name] % len(c.shapes[inp]) == a % len(c.shapes[inp])
                for c, a in zip(task.cases, axes) if c.shapes[inp] is not None):
            return ("attr", spec.name)
    raise Unsupported(f"{task.name}: input {task.inputs[inp].name} is split along axes that follow no "
                      "rule (the last axis, or one given by an int attr)")


def _chunk_dim(lr: LoadRule, case) -> int:
    rank = len(case.shapes[lr.input])
    return rank - 1 if lr.chunk_axis[0] == "last" else case.attrs[lr.chunk_axis[1]] % rank


def _pattern(task, programs, axis_rule) -> str:
    ops = {n.op for p in programs for n in p.nodes}
    aten = {o for p in programs for o in p.aten_ops}
    multi_out = len(task.outputs) > 1
    if axis_rule is None:
        if any(l.chunks > 1 for p in programs for l in p.loads):
            return "elementwise-chunk"
        if "where" in ops or len(task.inputs) > 1:
            return "broadcast"
        return "elementwise"
    if multi_out:
        return "fusion"          # an elementwise prologue/epilogue with its own outputs
    if aten & {"_softmax", "_log_softmax", "softmax", "log_softmax"}:
        return "softmax"
    if aten & {"native_layer_norm", "native_group_norm", "rsqrt", "linalg_vector_norm"}:
        base = "normalization"
        if multi_out or ("rmax" in ops and "rsum" in ops):
            return "fusion"
        return base
    return "reduction" if not multi_out else "fusion"


def layout(plan: Plan, case) -> dict:
    """The iteration space of one case as the tiling function will compute it (for checks/docs)."""
    p_shape = _case_main_shape(plan, case)
    rule = plan.axis_rule
    if rule is None:
        return {"mode": "rows", "outer": p_shape[:-1], "R": p_shape[-1] if p_shape else 1, "inner": 1}
    if rule[0] == "group":
        G = case.attrs[rule[1]]
        return {"mode": "rows", "outer": p_shape[:2], "R": math.prod(p_shape[2:]), "inner": 1,
                "segRows": p_shape[1] // G}
    r = len(p_shape)
    if rule[0] == "all":
        a, k = 0, r
    elif rule[0] == "last":
        a, k = r - rule[1], rule[1]
    else:
        a, k = case.attrs[rule[1]] % r, 1
    inner = math.prod(p_shape[a + k:])
    return {"mode": "rows" if inner == 1 else "columns", "outer": p_shape[:a],
            "R": math.prod(p_shape[a:a + k]), "inner": inner, "axis": a, "k": k}


def _case_main_shape(plan, case):
    if plan.main_input is not None:
        return tuple(case.shapes[plan.main_input])
    shapes = []
    loads = [lr for lr in plan.loads if case.shapes[lr.input] is not None]   # absent inputs are not read
    for lr in loads:
        s = list(case.shapes[lr.input])
        if lr.chunks > 1:
            s[_chunk_dim(lr, case)] //= lr.chunks
        shapes.append(s)
    rank = max(max(lr.align[1]) if lr.align[0] == "dims" else
               len(s) + (lr.align[1] if lr.align[0] == "gap" else 0) for s, lr in zip(shapes, loads))
    out = [1] * rank
    for s, lr in zip(shapes, loads):
        for i, j in _placed(lr, len(s), rank).items():
            if s[i] != 1:
                out[j] = s[i] * (2 if lr.lanes == ("rep", 2) and i == len(s) - 1 else 1)
    return tuple(out)


def _placed(lr: LoadRule, n: int, rank: int) -> dict:
    """Input dim -> iteration dim of a load with `n` dims in a space of `rank` dims."""
    if lr.align[0] == "dims":
        return {i: rank - p for i, p in enumerate(lr.align[1])}
    g = lr.align[1] if lr.align[0] == "gap" else rank - lr.align[1] - n
    return {i: rank - g - n + i for i in range(n)}


def _check_cases(plan: Plan, progs):
    task = plan.task
    for c in task.cases:
        if c.id in plan.unserved:
            continue
        if "int64" in c.dtypes and plan.wide_bits is None and not plan.int_arg:
            plan.unserved[c.id] = ("int64 data: arch 2201 has no int64 vector arithmetic and the lowering "
                                   "computes integers on int32 lanes")
            continue
        lay = layout(plan, c)
        read = [lr for lr in plan.loads if c.shapes[lr.input] is not None]
        if lay["mode"] == "columns":
            for lr in read:
                if tuple(c.shapes[lr.input]) != tuple(_case_main_shape(plan, c)):
                    plan.unserved[c.id] = (f"reduction over axis {lay['axis']} (not the last) with a "
                                           f"broadcast input {task.inputs[lr.input].name}")
        if lay["mode"] == "rows" and plan.axis_rule is not None and plan.axis_rule[0] != "group":
            a = lay.get("axis", len(_case_main_shape(plan, c)) - 1)
            main = _case_main_shape(plan, c)
            for lr in read:
                s = list(c.shapes[lr.input])
                # dims of the input that fall in the reduced run must be all full or all 1
                placed = {j: s[i] for i, j in _placed(lr, len(s), len(main)).items()}
                red = [placed.get(j, 1) for j in range(a, len(main))]
                if any(d != 1 for d in red) and red != list(main[a:]):
                    plan.unserved[c.id] = (f"input {task.inputs[lr.input].name} broadcasts inside the "
                                           "reduced axes")
