"""Index gathers: `torch.gather(x, dim, index)` lowers to a kernel of its own: y[p] = x[p with its
coordinate along `dim` replaced by index[p]]. `take_along_dim(x, index, dim)` traces to expands
and `remainder(index, N)` around the gather: the expands are identities when the shapes already
agree (a case that broadcasts is not served), and the remainder is the wrap of a negative index
(index in [-N, N) counts from the end), three int32 ops on the tile. (`index_select`, whose index
is one list of positions shared by every row, is the row gather of `index_select.py`.)

The output has the index's shape. The tiling function reads `dim` (an int attr, or the one value
every case traces) and the two shapes, and picks a mode:
- MODE_COLUMNS (`dim` is not the last axis): the trailing dims that index and x share merge into
  one contiguous column run; a unit is a block of columns, whose window of x (every position along
  `dim` x the block's columns) stays in UB while the index rows of the block stream through: each
  tile's index becomes byte offsets into the window (`idx * pitch + column`) and one Gather reads
  the tile;
- MODE_ROWS (`dim` is the last axis): a unit is a block of whole x rows in UB, the matching index
  rows gathered from them (`idx + row * pitch`);
- MODE_SCALAR (the window does not fit the UB): the same units and tiles, each element read from
  GM by its index (scalar reads; correct for any length, slow).
Data move as bits (8-byte elements as uint32 pairs, 1-byte ones through half, exact); int8, int32
and int64 indices become int32 lanes, clamped into [0, N) so every Gather read stays in the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASS = {"clone", "contiguous", "alias", "detach", "lift_fresh_copy", "lift_fresh", "alias_copy"}
_INDEX_DTYPES = {"int8", "int32", "int64"}


@dataclass
class GatherPlan:
    task: object
    pattern: str                      # "gather"
    x: int                            # input positions of the data and the index
    index: int
    dim_rule: tuple                   # ("attr", name) | ("const", d)
    wrap: bool = False                # take_along_dim: a negative index counts from the end
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def source_of(v, passes: set):
    """The graph node `v` comes from through the pass-through ops `passes` (copies, casts, views)."""
    while hasattr(v, "op") and v.op == "call_function" and _name(v) in passes:
        v = v.args[0]
    return v


def _index_plans():
    from copilot.lowering.cross_entropy import CrossEntropyPlan
    from copilot.lowering.scan import ScanPlan
    from copilot.lowering.scatter import ScatterPlan
    from copilot.lowering.segment import SegmentSumPlan
    from copilot.lowering.moe import MoeGatingPlan
    from copilot.lowering.sort import TopKPlan
    from copilot.lowering.index_select import IndexSelectPlan

    return (GatherPlan, IndexSelectPlan, CrossEntropyPlan, SegmentSumPlan, ScatterPlan, ScanPlan, TopKPlan,
            MoeGatingPlan)


def _shape(v):
    val = v.meta.get("val") if hasattr(v, "meta") else None
    return tuple(val.shape) if val is not None and hasattr(val, "shape") else None


def _gather_of(gm):
    """(x placeholder position, index placeholder position, traced dim, wrap, broadcast) when the
    graph is one `aten.gather` of two inputs (the index possibly cast; take_along_dim's expands and
    `remainder(index, N)` around it: wrap; an expand that changes a shape: broadcast), else None."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    gathers = [n for n in calls if _name(n) == "gather"]
    if len(gathers) != 1 or gathers[0] is not out:
        return None
    g = gathers[0]
    if len(g.args) < 3 or g.kwargs.get("sparse_grad"):
        return None

    through = _PASS | {"_to_copy", "expand"}
    broadcast = any(_name(n) == "expand" and _shape(n) != _shape(n.args[0]) for n in calls)

    def source(v):
        while hasattr(v, "op") and v.op == "call_function" and _name(v) in through:
            v = v.args[0]
        return v

    index, wrap = g.args[2], False
    if hasattr(index, "op") and _name(index) == "remainder":
        # take_along_dim: remainder(index, N) with N = x's length along dim
        n_axis = _shape(g.args[0])
        if n_axis is None or len(index.args) != 2 or index.args[1] != n_axis[int(g.args[1])]:
            return None
        index, wrap = index.args[0], True
    x, idx = source(g.args[0]), source(index)
    if x not in places or idx not in places or x is idx:
        return None
    for n in calls:
        if n is not g and not (_name(n) in through or (wrap and n is g.args[2])):
            return None
    return places.index(x), places.index(idx), int(g.args[1]), wrap, broadcast


def plan_index(task):
    """The index plan of `task` (a gather, an index_select, a cross-entropy over class indices, a
    segment sum, a scatter, a cumulative min / max with indices, a top-k / sort, an MoE gating), or
    None."""
    from copilot.lowering.cross_entropy import plan_cross_entropy
    from copilot.lowering.index_select import plan_index_select
    from copilot.lowering.scan import plan_scan
    from copilot.lowering.scatter import plan_scatter
    from copilot.lowering.segment import plan_segment_sum
    from copilot.lowering.moe import plan_moe_gating
    from copilot.lowering.sort import plan_topk

    for planner in (_plan_gather, plan_index_select, plan_cross_entropy, plan_segment_sum, plan_scatter, plan_scan,
                    plan_topk, plan_moe_gating):
        plan = planner(task)
        if plan is not None:
            return plan
    return None


def match_cases(task, match, what: str, same):
    """`match(trace)` of every case of a task of two inputs and one output: None when the first
    case is not the pattern (or cannot be traced); Unsupported naming `what` when a later case's
    match is None or not `same(first, it)`."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 2 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        first = match(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    found = [first]
    for case in task.cases[1:]:
        g = match(trace(task, case))
        if g is None or not same(first, g):
            raise Unsupported(f"{task.name}: case {case.id} is not the {what} the other cases are")
        found.append(g)
    return found


def _plan_gather(task):
    """The gather plan of `task`, or None when its golden is not one torch.gather of its inputs."""
    found = match_cases(task, _gather_of, "gather", lambda a, b: a[:2] == b[:2] and a[3] == b[3])
    if found is None:
        return None
    first = found[0]
    xi, ii = first[:2]
    dims, spread = [g[2] for g in found], {c.id: g[4] for c, g in zip(task.cases, found)}
    plan = GatherPlan(task, "gather", xi, ii, _dim_rule(task, dims, xi), wrap=first[3])
    for c in task.cases:
        why = "take_along_dim broadcasts x or the index (only equal shapes off dim are served)" \
            if spread[c.id] else None
        if c.dtypes[ii] not in _INDEX_DTYPES:
            why = f"index dtype {c.dtypes[ii]} (int8/int32/int64 are served)"
        elif len(c.shapes[xi]) > 8:
            why = "more than 8 dims"
        if why:
            plan.unserved[c.id] = why
    if plan.wrap:
        plan.notes.append("take_along_dim: indices in [-N, N), a negative one counts from the end")
    return plan


def _dim_rule(task, dims, x: int = 0) -> tuple:
    """The int attr that gives the traced gather axis of every case (a negative attr counts from
    the end, as the kernel reads it), else the one axis every case traces."""
    for a in task.attrs:
        if a.type == "int" and all(c.attrs.get(a.name, a.default) in (d, d - len(c.shapes[x]))
                                   for c, d in zip(task.cases, dims)):
            return ("attr", a.name)
    if len(set(dims)) == 1:
        return ("const", dims[0])
    raise Unsupported(f"{task.name}: the gather axis varies between cases and no int attr gives it")


def render_plan(plan, knobs: dict) -> str:
    """The candidate source of an index plan."""
    if isinstance(plan, GatherPlan):
        return _render_gather(plan, knobs)
    from copilot.lowering import cross_entropy, index_select, moe, scan, scatter, segment, sort

    if isinstance(plan, index_select.IndexSelectPlan):
        return index_select.render(plan, knobs)
    if isinstance(plan, moe.MoeGatingPlan):
        return moe.render(plan, knobs)
    if isinstance(plan, sort.TopKPlan):
        return sort.render(plan, knobs)
    if isinstance(plan, segment.SegmentSumPlan):
        return segment.render(plan, knobs)
    if isinstance(plan, scatter.ScatterPlan):
        return scatter.render(plan, knobs)
    if isinstance(plan, scan.ScanPlan):
        return scan.render(plan, knobs)
    return cross_entropy.render(plan, knobs)


def is_index_plan(plan) -> bool:
    return isinstance(plan, _index_plans())


_WRAP = """        // take_along_dim: a negative index counts from the end (idx + N where idx < 0)
        LocalTensor<int32_t> negative = offsetBuf_.Get<int32_t>();
        ShiftRight(negative.ReinterpretCast<uint32_t>(), idx32.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(31), lanes);
        Muls(negative, negative, static_cast<int32_t>(td_.axisLen), lanes);
        Add(idx32, idx32, negative, lanes);
"""
_SAME_DIMS = """        if (d != dim && id[d] != xd[d]) {
            return ge::GRAPH_FAILED;   // take_along_dim broadcasts unequal shapes: not served
        }
"""
_WRAP_SCALAR = """                v = v < 0 ? v + static_cast<int64_t>(td_.axisLen) : v;   // take_along_dim: from the end
"""


def _render_gather(plan: GatherPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    T = f"{cls}TilingData"
    xn, iname, yn = t.inputs[plan.x].name, t.inputs[plan.index].name, t.outputs[0].name
    args = [_ident(i.name) for i in t.inputs]
    if plan.dim_rule[0] == "attr":
        pos = [a.name for a in t.attrs].index(plan.dim_rule[1])
        dim = f"*attrs->GetAttrPointer<int64_t>({pos})"
        dim_doc = f"the int attr `{plan.dim_rule[1]}`"
    else:
        dim = str(int(plan.dim_rule[1]))
        dim_doc = f"fixed at {plan.dim_rule[1]}"
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    text = text.replace("@UB_BUDGET@", UB_BUDGET)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", T), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(xn)), ("@IT@", _macro_of(iname)), ("@YT@", _macro_of(yn)),
                     ("@XI@", str(plan.x)), ("@II@", str(plan.index)),
                     ("@X@", _ident(xn)), ("@I@", _ident(iname)), ("@Y@", _ident(yn)),
                     ("@ARGS@", ", ".join(f"GM_ADDR {a}" for a in args)),
                     ("@DIM@", dim), ("@DIMDOC@", dim_doc), ("@WRAP@", _WRAP if plan.wrap else ""),
                     ("@WRAPS@", _WRAP_SCALAR if plan.wrap else ""), ("@SAMEDIMS@", _SAME_DIMS if plan.wrap else ""), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(int(knobs["tile_elems"]))),
                     ("@SPLIT@", core_split(knobs, "td->outNumel", "units")), ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


def core_split(knobs, work: str, units: str) -> str:
    """Tiling code that picks `blockDim` under the block_dim_policy knob (`work`: the case's
    element count) and splits `units` units of work over the cores, former cores taking one more."""
    policy = knobs["block_dim_policy"]
    if policy == "all_cores":
        text = "    uint64_t blockDim = coreNum;\n"
    elif policy == "half_cores":
        text = "    uint64_t blockDim = coreNum / 2 > 0 ? coreNum / 2 : 1;\n"
    else:
        text = (f"    uint64_t blockDim = ({work} + {knobs['min_work_elems']} - 1) / {knobs['min_work_elems']};\n"
                f"    blockDim = blockDim > coreNum ? coreNum : blockDim;\n")
    return ("    // multi-core split with tail cores\n" + text +
            f"    blockDim = blockDim > {units} ? {units} : blockDim;\n"
            f"    blockDim = blockDim == 0 ? 1 : blockDim;\n"
            f"    td->formerNum = {units} % blockDim;\n"
            f"    td->formerUnits = ({units} + blockDim - 1) / blockDim;\n"
            f"    td->tailUnits = {units} / blockDim;\n"
            f"    context->SetBlockDim(static_cast<uint32_t>(blockDim));\n")


# The snippets every index kernel shares: the opening of its TilingFunc, this core's range of
# units (former cores take one more), and the pipe-to-pipe wait.
def float_attr_field(rule: tuple, attr_names: list, field: str) -> str:
    """The tiling function's lines that set `td-><field>` from a float attr (`rule` ("attr", name))
    or from a literal (("const", value)); a missing attr fails the tiling."""
    if rule[0] == "attr":
        var = f"{field}Attr"
        return (f"    const float* {var} = attrs->GetAttrPointer<float>({attr_names.index(rule[1])});   // `{rule[1]}`\n"
                f"    if ({var} == nullptr) {{\n"
                f"        return ge::GRAPH_FAILED;\n"
                f"    }}\n"
                f"    td->{field} = *{var};\n")
    return f"    td->{field} = {float(rule[1])!r}f;\n"


TILING_HEAD = r"""namespace optiling {
@DTYPE_BYTES@

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    @T@* td = context->GetTilingData<@T@>();
    if (td == nullptr) {
        return ge::GRAPH_FAILED;
    }
    std::memset(td, 0, sizeof(@T@));
"""
UNIT_RANGE = r"""        const uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < td_.formerNum) {
            unitStart_ = blockIdx * td_.formerUnits;
            unitCount_ = td_.formerUnits;
        } else {
            unitStart_ = td_.formerNum * td_.formerUnits + (blockIdx - td_.formerNum) * td_.tailUnits;
            unitCount_ = td_.tailUnits;
        }
"""
# The entry of a kernel of (x, index) -> y, the tiling lines that read the two shapes, and those
# that read the UB, the cores and the buffer count and leave `budget` bytes of UB besides the reserve.
INDEX_ENTRY = r"""extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @I@, @Y@, tilingData);
    op.Process();
}
"""
INDEX_SHAPES = r"""    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    (void)attrs;
    const gert::Shape& xShape = context->GetInputShape(@XI@)->GetStorageShape();
    const gert::Shape& iShape = context->GetInputShape(@II@)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(xShape.GetDimNum());
"""
UB_BUDGET = r"""    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
"""
SYNC_PIPES = r"""    template <HardEvent EVT>
    __aicore__ inline void SyncPipes()
    {
        const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(EVT));
        SetFlag<EVT>(id);
        WaitFlag<EVT>(id);
    }
"""


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: gather, y[p] = x[p with its coordinate along dim replaced by @I@[p]] (torch.gather);
// dim is @DIMDOC@. y has @I@'s shape. Elements move as bits: no arithmetic touches x.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MAX_DIMS = 8;
constexpr uint32_t MODE_COLUMNS = 0;  // dim is not last: a window (all of dim x a column block) of x in UB
constexpr uint32_t MODE_ROWS = 1;     // dim is last: whole x rows in UB
constexpr uint32_t MODE_SCALAR = 2;   // the window does not fit UB: elements read from GM one by one

struct @T@ {
    uint32_t mode;
    uint32_t alongLast;                 // 1: dim is the last axis (rows), 0: columns follow it
    uint32_t bufferNum;
    uint32_t outerDims;                 // dims a unit indexes besides its block (collapsed)
    uint64_t outerShape[MAX_DIMS];
    int64_t outerXStride[MAX_DIMS];     // element strides of those dims in x ...
    int64_t outerIdxStride[MAX_DIMS];   // ... and in the index (= in y, which has its shape)
    uint64_t axisLen;                   // N: x's length along dim; indices are clamped into [0, N)
    int64_t axisXStride;                // x's stride along dim
    // columns: `lines` index rows (along dim, lineStride apart in the index) of `runLen` columns;
    // rows: `lines` rows (along the axis before dim, lineXStride / lineStride apart) of runLen = M
    uint64_t runLen;
    uint64_t lines;
    int64_t lineStride;
    int64_t lineXStride;
    uint32_t blockCols;                 // columns: columns per block; rows: a chunk of an index row
    uint32_t blockLines;                // rows: x rows per block (the window's rows)
    uint32_t tileLines;                 // index lines per tile
    uint32_t pitch;                     // UB pitch of an index / y tile row (elements)
    uint32_t windowPitch;               // UB pitch of a window row (elements)
    uint32_t windowRows;                // rows of the window buffer
    uint64_t colBlocks;                 // blocks along the run (columns) / along an index row (rows)
    uint64_t lineBlocks;                // blocks along the lines: line groups (columns) / x row blocks (rows)
    uint64_t linesPerGroup;             // columns: index lines one unit covers
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint64_t xNumel;
    uint64_t outNumel;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

// x moves in units of its own width (8-byte elements as two uint32 units); the UB gather moves
// 16- and 32-bit lanes, so 1-byte elements go through half (exact for every int8 / uint8).
using Elem = @XT@;
using Unit = std::conditional<sizeof(Elem) == 1, Elem,
             std::conditional<sizeof(Elem) == 2, uint16_t, uint32_t>::type>::type;
using Lane = std::conditional<sizeof(Elem) == 1, half, Unit>::type;
// the index moves as int8 / int32, or int64 as uint32 pairs (its low word is the index)
using Index = @IT@;
using IndexUnit = std::conditional<sizeof(Index) == 8, uint32_t, Index>::type;

class @K@ {
    static constexpr uint32_t UNITS = sizeof(Elem) / sizeof(Unit);         // units per x element
    static constexpr uint32_t IDX_UNITS = sizeof(Index) / sizeof(IndexUnit);

public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR idxAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(xAddr), td_.xNumel * UNITS);
        xElemGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), td_.xNumel);
        idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ IndexUnit*>(idxAddr), td_.outNumel * IDX_UNITS);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(yAddr), td_.outNumel * UNITS);
@UNIT_RANGE@        const uint32_t lanes = td_.tileLines * td_.pitch;        // elements of one index / y tile
        pipe_.InitBuffer(idxQue_, td_.bufferNum, Padded(lanes * IDX_UNITS) * sizeof(IndexUnit));
        pipe_.InitBuffer(yQue_, td_.bufferNum, Padded(lanes * UNITS) * sizeof(Unit));
        if (td_.mode == MODE_SCALAR) {
            return;
        }
        const uint32_t windowElems = td_.windowRows * td_.windowPitch;
        pipe_.InitBuffer(windowBuf_, Padded(windowElems * UNITS) * sizeof(Unit));
        pipe_.InitBuffer(idx32Buf_, Padded(lanes) * sizeof(int32_t));
        pipe_.InitBuffer(offsetBuf_, Padded(lanes * UNITS) * sizeof(uint32_t));
        pipe_.InitBuffer(tableBuf_, Padded(lanes * UNITS) * sizeof(uint32_t));
        if constexpr (sizeof(Elem) == 1) {
            pipe_.InitBuffer(windowLaneBuf_, Padded(windowElems) * sizeof(half));
            pipe_.InitBuffer(yLaneBuf_, Padded(lanes) * sizeof(half));
        }
        if constexpr (sizeof(Index) == 1) {
            pipe_.InitBuffer(idxHalfBuf_, Padded(lanes) * sizeof(half));
        }
        if constexpr (UNITS == 2) {
            pipe_.InitBuffer(pairBuf_, Padded(lanes * UNITS) * sizeof(uint32_t));
        }
        BuildTables();
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            if (td_.alongLast) {
                RowBlock(unitStart_ + u);
            } else {
                ColumnBlock(unitStart_ + u);
            }
        }
    }

private:
    // Element counts of vector operands round up to 64 lanes (256 B of 32-bit data).
    __aicore__ inline static uint32_t Padded(uint32_t n)
    {
        return (n + 63) / 64 * 64;
    }

    // x and index element offsets of outer position `outer` (mixed radix, innermost last).
    __aicore__ inline void OuterOffsets(uint64_t outer, int64_t& xOff, int64_t& idxOff) const
    {
        xOff = 0;
        idxOff = 0;
        for (int32_t d = static_cast<int32_t>(td_.outerDims) - 1; d >= 0; --d) {
            const uint64_t i = outer % td_.outerShape[d];
            outer /= td_.outerShape[d];
            xOff += static_cast<int64_t>(i) * td_.outerXStride[d];
            idxOff += static_cast<int64_t>(i) * td_.outerIdxStride[d];
        }
    }

    // Lane l of a tile gathers the window byte `clamp(idx) * idxScale + table[l]`. Columns: the
    // table is the lane's column (every tile row alike); rows: the lane's row in the window.
    // Tables are built once per core: a few scalar writes, then doubling copies.
    __aicore__ inline void BuildTables()
    {
        const uint32_t rowLanes = td_.pitch * UNITS;
        const uint32_t colStep = td_.alongLast ? 0 : UNITS * sizeof(Lane);       // per element along a row
        const uint32_t rowStep = td_.alongLast ? td_.windowPitch * UNITS * sizeof(Lane) : 0;
        table_ = tableBuf_.Get<uint32_t>();
        Ramp(table_, rowLanes, colStep, 1);
        for (uint32_t k = 1; k < td_.tileLines; k *= 2) {
            const uint32_t n = k < td_.tileLines - k ? k : td_.tileLines - k;
            Adds(table_.ReinterpretCast<int32_t>()[k * rowLanes], table_.ReinterpretCast<int32_t>(),
                 static_cast<int32_t>(k * rowStep), n * rowLanes);
        }
        if constexpr (UNITS == 2) {
            // the index of element k serves lanes 2k and 2k + 1: a gather table of (l / 2) * 4
            pairTable_ = pairBuf_.Get<uint32_t>();
            Ramp(pairTable_, td_.tileLines * rowLanes, sizeof(int32_t), 0);
        }
    }

    // dst[l] = (l / UNITS) * step + (l % UNITS) * unitStep * sizeof(Lane) for l < lanes: the first
    // 8 lanes by scalar writes, the rest by doubling copies with an offset.
    __aicore__ inline void Ramp(const LocalTensor<uint32_t>& dst, uint32_t lanes, uint32_t step, uint32_t unitStep)
    {
        for (uint32_t l = 0; l < 8; ++l) {
            dst.SetValue(l, (l / UNITS) * step + (l % UNITS) * unitStep * sizeof(Lane));
        }
        SyncPipes<HardEvent::S_V>();
        LocalTensor<int32_t> d = dst.ReinterpretCast<int32_t>();
        for (uint32_t k = 8; k < lanes; k *= 2) {
            const uint32_t n = k < lanes - k ? k : lanes - k;
            Adds(d[k], d, static_cast<int32_t>((k / UNITS) * step), n);
        }
    }

    // MODE_COLUMNS / MODE_SCALAR with columns: unit = (outer position, line group, column block).
    __aicore__ inline void ColumnBlock(uint64_t unit)
    {
        int64_t xOff = 0;
        int64_t idxOff = 0;
        const uint64_t perOuter = td_.lineBlocks * td_.colBlocks;
        OuterOffsets(unit / perOuter, xOff, idxOff);
        const uint64_t group = (unit % perOuter) / td_.colBlocks;
        const uint64_t c0 = (unit % td_.colBlocks) * td_.blockCols;
        const uint32_t cols = static_cast<uint32_t>(td_.runLen - c0 < td_.blockCols ? td_.runLen - c0 : td_.blockCols);
        xOff += static_cast<int64_t>(c0);
        idxOff += static_cast<int64_t>(c0);
        if (td_.mode != MODE_SCALAR) {
            LoadWindow(xOff, static_cast<uint32_t>(td_.axisLen), cols, td_.axisXStride);
        }
        const uint64_t line0 = group * td_.linesPerGroup;
        const uint64_t lineEnd = line0 + td_.linesPerGroup < td_.lines ? line0 + td_.linesPerGroup : td_.lines;
        for (uint64_t j = line0; j < lineEnd; j += td_.tileLines) {
            const uint32_t nr = static_cast<uint32_t>(lineEnd - j < td_.tileLines ? lineEnd - j : td_.tileLines);
            const int64_t at = idxOff + static_cast<int64_t>(j) * td_.lineStride;
            if (td_.mode == MODE_SCALAR) {
                ScalarTile(at, nr, cols, xOff, td_.axisXStride, 0, 1);
            } else {
                GatherTile(at, nr, cols, static_cast<int32_t>(td_.windowPitch * UNITS * sizeof(Lane)));
            }
        }
    }

    // MODE_ROWS / MODE_SCALAR along the last axis: unit = (outer position, x row block, chunk of
    // the index rows); the block's x rows are the window.
    __aicore__ inline void RowBlock(uint64_t unit)
    {
        int64_t xOff = 0;
        int64_t idxOff = 0;
        const uint64_t perOuter = td_.lineBlocks * td_.colBlocks;
        OuterOffsets(unit / perOuter, xOff, idxOff);
        const uint64_t row0 = ((unit % perOuter) / td_.colBlocks) * td_.blockLines;
        const uint64_t m0 = (unit % td_.colBlocks) * td_.blockCols;
        const uint32_t nr = static_cast<uint32_t>(td_.lines - row0 < td_.blockLines ? td_.lines - row0 : td_.blockLines);
        const uint32_t len = static_cast<uint32_t>(td_.runLen - m0 < td_.blockCols ? td_.runLen - m0 : td_.blockCols);
        xOff += static_cast<int64_t>(row0) * td_.lineXStride;
        idxOff += static_cast<int64_t>(row0) * td_.lineStride + static_cast<int64_t>(m0);
        if (td_.mode == MODE_SCALAR) {
            ScalarTile(idxOff, nr, len, xOff, 1, td_.lineXStride, 0);
            return;
        }
        LoadWindow(xOff, nr, static_cast<uint32_t>(td_.axisLen), td_.lineXStride);
        GatherTile(idxOff, nr, len, static_cast<int32_t>(UNITS * sizeof(Lane)));
    }

    // `rows` x rows of `len` elements (`stride` apart in GM) into the window (rows windowPitch
    // apart); 1-byte data is widened to half for the gather.
    __aicore__ inline void LoadWindow(int64_t xOff, uint32_t rows, uint32_t len, int64_t stride)
    {
        LocalTensor<Unit> window = windowBuf_.Get<Unit>();
        SyncPipes<HardEvent::V_MTE2>();           // the previous block's gathers are done with it
        const uint32_t bytes = len * sizeof(Elem);
        const uint32_t gapBlocks = (td_.windowPitch * sizeof(Elem) - (bytes + 31) / 32 * 32) / 32;
        for (uint32_t r0 = 0; r0 < rows; r0 += 4095) {
            const uint32_t nr = rows - r0 < 4095 ? rows - r0 : 4095;
            DataCopyExtParams in(static_cast<uint16_t>(nr), bytes,
                                 nr > 1 ? static_cast<uint32_t>((stride - len) * sizeof(Elem)) : 0, gapBlocks, 0);
            DataCopyPad(window[r0 * td_.windowPitch * UNITS], xGm_[(xOff + static_cast<int64_t>(r0) * stride) * UNITS],
                        in, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE2_V>();
        if constexpr (sizeof(Elem) == 1) {
            windowLanes_ = windowLaneBuf_.Get<half>();
            Cast(windowLanes_, window, RoundMode::CAST_NONE, rows * td_.windowPitch);
        }
    }

    // One tile: `nr` index rows of `len` elements (`lineStride` apart in GM) in, turned into
    // window offsets, gathered, and written to y at the same place.
    __aicore__ inline void GatherTile(int64_t idxOff, uint32_t nr, uint32_t len, int32_t idxScale)
    {
        const uint32_t lanes = nr * td_.pitch;
        LocalTensor<IndexUnit> idxTile = idxQue_.AllocTensor<IndexUnit>();
        CopyIndexIn(idxTile, idxOff, nr, len);
        idxQue_.EnQue(idxTile);
        idxTile = idxQue_.DeQue<IndexUnit>();

        // index -> int32 lanes, clamped into [0, N): padding lanes and stray values stay in the window
        LocalTensor<int32_t> idx32 = idx32Buf_.Get<int32_t>();
        if constexpr (sizeof(Index) == 8) {
            LowWords(idx32, idxTile, lanes);
        } else if constexpr (sizeof(Index) == 1) {
            LocalTensor<half> idxHalf = idxHalfBuf_.Get<half>();
            Cast(idxHalf, idxTile, RoundMode::CAST_NONE, lanes);
            Cast(idx32, idxHalf, RoundMode::CAST_RINT, lanes);
        } else {
            Adds(idx32, idxTile.template ReinterpretCast<int32_t>(), 0, lanes);
        }
        idxQue_.FreeTensor(idxTile);
@WRAP@        Maxs(idx32, idx32, 0, lanes);
        Mins(idx32, idx32, static_cast<int32_t>(td_.axisLen - 1), lanes);

        LocalTensor<int32_t> offsets = offsetBuf_.Get<int32_t>();
        if constexpr (UNITS == 2) {
            Gather(offsets, idx32, pairTable_, 0, lanes * UNITS);      // one index per uint32 unit
            Muls(offsets, offsets, idxScale, lanes * UNITS);
        } else {
            Muls(offsets, idx32, idxScale, lanes);
        }
        Add(offsets, offsets, table_.ReinterpretCast<int32_t>(), lanes * UNITS);

        LocalTensor<Unit> yTile = yQue_.AllocTensor<Unit>();
        LocalTensor<uint32_t> byteOffsets = offsets.ReinterpretCast<uint32_t>();
        if constexpr (sizeof(Elem) == 1) {
            LocalTensor<half> yLanes = yLaneBuf_.Get<half>();
            Gather(yLanes, windowLanes_, byteOffsets, 0, lanes);
            Cast(yTile, yLanes, RoundMode::CAST_RINT, lanes);
        } else {
            Gather(yTile, windowBuf_.Get<Unit>(), byteOffsets, 0, lanes * UNITS);
        }
        yQue_.EnQue(yTile);
        yTile = yQue_.DeQue<Unit>();
        CopyOut(yTile, idxOff, nr, len);
        yQue_.FreeTensor(yTile);
    }

    // The low uint32 word of every int64 index (even units), packed: GatherMask pattern 1.
    __aicore__ inline void LowWords(const LocalTensor<int32_t>& dst, const LocalTensor<IndexUnit>& src, uint32_t lanes)
    {
        const uint32_t repeats = (lanes * 2 + 63) / 64;               // 64 units in, 32 kept per repeat
        LocalTensor<uint32_t> out = dst.ReinterpretCast<uint32_t>();
        for (uint32_t r0 = 0; r0 < repeats; r0 += 255) {
            const uint32_t n = repeats - r0 < 255 ? repeats - r0 : 255;
            uint64_t kept = 0;
            GatherMask(out[r0 * 32], src.template ReinterpretCast<uint32_t>()[r0 * 64], static_cast<uint8_t>(1), false, 0,
                       GatherMaskParams(1, static_cast<uint16_t>(n), 8, 0), kept);
        }
    }

    // MODE_SCALAR: each element read from GM at `xOff + idx * idxStride + row * rowStride + col * colStride`.
    __aicore__ inline void ScalarTile(int64_t idxOff, uint32_t nr, uint32_t len, int64_t xOff, int64_t idxStride,
                                      int64_t rowStride, int64_t colStride)
    {
        LocalTensor<IndexUnit> idxTile = idxQue_.AllocTensor<IndexUnit>();
        CopyIndexIn(idxTile, idxOff, nr, len);
        SyncPipes<HardEvent::MTE2_S>();
        LocalTensor<Index> idx = idxTile.template ReinterpretCast<Index>();
        LocalTensor<Unit> yTile = yQue_.AllocTensor<Unit>();
        LocalTensor<Elem> y = yTile.template ReinterpretCast<Elem>();
        const int64_t last = static_cast<int64_t>(td_.axisLen) - 1;
        for (uint32_t r = 0; r < nr; ++r) {
            for (uint32_t c = 0; c < len; ++c) {
                int64_t v = static_cast<int64_t>(idx.GetValue(r * td_.pitch + c));
@WRAPS@                v = v < 0 ? 0 : (v > last ? last : v);
                const int64_t at = xOff + v * idxStride + static_cast<int64_t>(r) * rowStride +
                                   static_cast<int64_t>(c) * colStride;
                y.SetValue(r * td_.pitch + c, xElemGm_.GetValue(static_cast<uint64_t>(at)));
            }
        }
        idxQue_.FreeTensor(idxTile);
        SyncPipes<HardEvent::S_MTE3>();
        CopyOut(yTile, idxOff, nr, len);
        SyncPipes<HardEvent::MTE3_S>();           // the tile is rewritten by scalar stores next
        yQue_.FreeTensor(yTile);
    }

    __aicore__ inline void CopyIndexIn(const LocalTensor<IndexUnit>& tile, int64_t idxOff, uint32_t nr, uint32_t len)
    {
        const uint32_t bytes = len * sizeof(Index);
        DataCopyExtParams in(static_cast<uint16_t>(nr), bytes,
                             nr > 1 ? static_cast<uint32_t>((td_.lineStride - len) * sizeof(Index)) : 0,
                             (td_.pitch * sizeof(Index) - (bytes + 31) / 32 * 32) / 32, 0);
        DataCopyPad(tile, idxGm_[idxOff * IDX_UNITS], in, DataCopyPadExtParams<IndexUnit>(false, 0, 0, 0));
    }

    __aicore__ inline void CopyOut(const LocalTensor<Unit>& tile, int64_t yOff, uint32_t nr, uint32_t len)
    {
        const uint32_t bytes = len * sizeof(Elem);
        DataCopyExtParams out(static_cast<uint16_t>(nr), bytes, (td_.pitch * sizeof(Elem) - (bytes + 31) / 32 * 32) / 32,
                              nr > 1 ? static_cast<uint32_t>((td_.lineStride - len) * sizeof(Elem)) : 0, 0);
        DataCopyPad(yGm_[yOff * UNITS], tile, out);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> idxQue_;
    TQue<QuePosition::VECOUT, 2> yQue_;
    TBuf<QuePosition::VECCALC> windowBuf_;
    TBuf<QuePosition::VECCALC> windowLaneBuf_;
    TBuf<QuePosition::VECCALC> yLaneBuf_;
    TBuf<QuePosition::VECCALC> idxHalfBuf_;
    TBuf<QuePosition::VECCALC> idx32Buf_;
    TBuf<QuePosition::VECCALC> offsetBuf_;
    TBuf<QuePosition::VECCALC> tableBuf_;
    TBuf<QuePosition::VECCALC> pairBuf_;
    LocalTensor<uint32_t> table_;
    LocalTensor<uint32_t> pairTable_;
    LocalTensor<half> windowLanes_;
    GlobalTensor<Unit> xGm_;
    GlobalTensor<Elem> xElemGm_;
    GlobalTensor<IndexUnit> idxGm_;
    GlobalTensor<Unit> yGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

""" + INDEX_ENTRY

_TILING = r"""@TILING_HEAD@""" + INDEX_SHAPES + r"""    if (rank < 1 || rank > static_cast<int32_t>(MAX_DIMS) || static_cast<int32_t>(iShape.GetDimNum()) != rank) {
        return ge::GRAPH_FAILED;
    }
    int64_t dim = @DIM@;
    dim = dim < 0 ? dim + rank : dim;
    if (dim < 0 || dim >= rank) {
        return ge::GRAPH_FAILED;
    }
    uint64_t xd[MAX_DIMS];
    uint64_t id[MAX_DIMS];
    int64_t xs[MAX_DIMS];
    int64_t is[MAX_DIMS];
    uint64_t xNumel = 1;
    uint64_t iNumel = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
        xd[d] = static_cast<uint64_t>(xShape.GetDim(d));
        id[d] = static_cast<uint64_t>(iShape.GetDim(d));
        xs[d] = static_cast<int64_t>(xNumel);
        is[d] = static_cast<int64_t>(iNumel);
        xNumel *= xd[d];
        iNumel *= id[d];
        if (d != dim && id[d] > xd[d]) {
            return ge::GRAPH_FAILED;   // torch.gather: index dims other than dim fit inside x's
        }
@SAMEDIMS@    }
    const uint32_t ib = DtypeBytes(context->GetInputDesc(@II@)->GetDataType());
    const ge::DataType it = context->GetInputDesc(@II@)->GetDataType();
    if (it != ge::DT_INT8 && it != ge::DT_INT32 && it != ge::DT_INT64) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t eb = DtypeBytes(context->GetInputDesc(@XI@)->GetDataType());
    td->xNumel = xNumel;
    td->outNumel = iNumel;
    td->axisLen = xd[dim];
    td->axisXStride = xs[dim];
    if (iNumel == 0 || xd[dim] == 0) {
        return ge::GRAPH_FAILED;
    }

    // Trailing dims after dim that index and x share (every one after the first of them full)
    // form one run, contiguous in both; the rest index outer positions.
    int32_t runStart = rank;
    if (dim < rank - 1) {
        runStart = rank - 1;
        while (runStart - 1 > dim && id[runStart] == xd[runStart]) {
            --runStart;
        }
    }
    uint32_t od = 0;
    auto addOuter = [&](int32_t d) {
        if (id[d] == 1) {
            return;
        }
        td->outerShape[od] = id[d];
        td->outerXStride[od] = xs[d];
        td->outerIdxStride[od] = is[d];
        ++od;
    };

@UB_BUDGET@    const uint64_t units32 = eb == 8 ? 2 : 1;                         // uint32 units per x element
    // UB bytes per tile element: index and y tiles (queued), int32 index, offsets and table
    // (per unit), half staging for 1-byte data or index, the pair table for 8-byte data
    const uint64_t laneBytes = td->bufferNum * (ib + eb) + 4 + 8 * units32 + (eb == 1 ? 2 : 0) +
                               (ib == 1 ? 2 : 0) + (units32 == 2 ? 8 : 0);
    const uint64_t winBytes = eb + (eb == 1 ? 2 : 0);                 // per window element
    auto lcm = [](uint64_t a, uint64_t b) { uint64_t m = a; while (m % b != 0) { m += a; } return m; };
    const uint64_t align = lcm(32 / eb, 32 / ib);                     // tile pitch granule (elements)
    auto up = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
    const uint64_t cap = @CAP@ > 0 ? @CAP@ : (1ULL << 20);
    uint64_t units = 0;

    if (dim < rank - 1) {
        // columns: lines along dim, a run of runLen columns, outer positions from the other dims
        td->alongLast = 0;
        td->runLen = 1;
        for (int32_t d = runStart; d < rank; ++d) {
            td->runLen *= id[d];
        }
        td->lines = id[dim];
        td->lineStride = is[dim];
        for (int32_t d = 0; d < runStart; ++d) {
            if (d != dim) {
                addOuter(d);
            }
        }
        uint64_t outer = 1;
        for (uint32_t k = 0; k < od; ++k) {
            outer *= td->outerShape[k];
        }
        // the widest column block whose window (N x block) leaves room for 8 tile rows,
        // narrowed while the blocks are fewer than the cores
        uint64_t cols = up(td->runLen < cap ? td->runLen : cap, align);
        auto fits = [&](uint64_t c) { return td->axisLen * c * winBytes + 8 * c * laneBytes + 4096 <= budget; };
        while (cols > align && !fits(cols)) {
            cols = up(cols / 2, align);
        }
        while (cols > align && outer * ((td->runLen + cols - 1) / cols) < coreNum) {
            cols = up(cols / 2, align);
        }
        td->mode = fits(cols) ? MODE_COLUMNS : MODE_SCALAR;
        if (td->mode == MODE_SCALAR) {
            cols = up(td->runLen < 1024 ? td->runLen : 1024, align);
        }
        td->blockCols = static_cast<uint32_t>(cols < td->runLen ? cols : td->runLen);
        td->pitch = static_cast<uint32_t>(up(td->blockCols, align));
        td->windowPitch = td->pitch;
        td->windowRows = td->mode == MODE_SCALAR ? 0 : static_cast<uint32_t>(td->axisLen);
        const uint64_t winUsed = td->mode == MODE_SCALAR ? 0 : td->axisLen * td->pitch * winBytes;
        uint64_t rows = (budget - winUsed - 4096) / (td->pitch * laneBytes);
        rows = rows > 4095 ? 4095 : (rows == 0 ? 1 : rows);
        rows = rows > td->lines ? td->lines : rows;
        td->tileLines = static_cast<uint32_t>(rows);
        td->colBlocks = (td->runLen + td->blockCols - 1) / td->blockCols;
        // few blocks: the lines split into groups, each reloading the window
        uint64_t groups = 1;
        if (outer * td->colBlocks < coreNum) {
            groups = (coreNum + outer * td->colBlocks - 1) / (outer * td->colBlocks);
            const uint64_t most = (td->lines + 7) / 8;
            groups = groups > most ? most : groups;
        }
        td->linesPerGroup = (td->lines + groups - 1) / groups;
        td->lineBlocks = (td->lines + td->linesPerGroup - 1) / td->linesPerGroup;
        units = outer * td->lineBlocks * td->colBlocks;
    } else {
        // rows: dim is last; x rows of N along the axis before it, index rows of M
        td->alongLast = 1;
        td->runLen = id[dim];
        td->lines = rank >= 2 ? id[rank - 2] : 1;
        td->lineStride = rank >= 2 ? is[rank - 2] : 0;
        td->lineXStride = rank >= 2 ? xs[rank - 2] : 0;
        for (int32_t d = 0; d + 2 < rank; ++d) {
            addOuter(d);
        }
        uint64_t outer = 1;
        for (uint32_t k = 0; k < od; ++k) {
            outer *= td->outerShape[k];
        }
        const uint64_t xAlign = 32 / eb;
        td->windowPitch = static_cast<uint32_t>(up(td->axisLen, xAlign));
        uint64_t chunk = up(td->runLen < cap ? td->runLen : cap, align);
        auto bytes = [&](uint64_t r, uint64_t c) { return r * (td->windowPitch * winBytes + c * laneBytes) + 4096; };
        while (chunk > align && bytes(1, chunk) > budget) {
            chunk = up(chunk / 2, align);
        }
        td->mode = bytes(1, chunk) <= budget ? MODE_ROWS : MODE_SCALAR;
        if (td->mode == MODE_SCALAR) {
            td->windowPitch = 0;
            chunk = up(td->runLen < 1024 ? td->runLen : 1024, align);
        }
        td->blockCols = static_cast<uint32_t>(chunk < td->runLen ? chunk : td->runLen);
        td->pitch = static_cast<uint32_t>(up(td->blockCols, align));
        td->colBlocks = (td->runLen + td->blockCols - 1) / td->blockCols;
        uint64_t rows = (budget - 4096) / (td->windowPitch * winBytes + td->pitch * laneBytes);
        rows = rows > 4095 ? 4095 : (rows == 0 ? 1 : rows);
        rows = rows > td->lines ? td->lines : rows;
        // at least as many blocks as cores while rows last
        const uint64_t perCore = (td->lines * outer * td->colBlocks + coreNum - 1) / coreNum;
        rows = rows > perCore ? (perCore == 0 ? 1 : perCore) : rows;
        td->blockLines = static_cast<uint32_t>(rows);
        td->tileLines = td->blockLines;
        td->windowRows = td->mode == MODE_SCALAR ? 0 : td->blockLines;
        td->lineBlocks = (td->lines + rows - 1) / rows;
        units = outer * td->lineBlocks * td->colBlocks;
    }
    td->outerDims = od;
    if (static_cast<uint64_t>(td->lineStride) * 8 >= (1ULL << 32) ||
        static_cast<uint64_t>(td->axisXStride) * 8 >= (1ULL << 32) ||
        static_cast<uint64_t>(td->lineXStride) * 8 >= (1ULL << 32)) {
        return ge::GRAPH_FAILED;   // a row gap past the copy's 32-bit stride field
    }

@SPLIT@    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
