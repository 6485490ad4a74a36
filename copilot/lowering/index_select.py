"""Row gathers by a list of positions: `torch.index_select(x, dim, index)` (and `x[..., index, ...]`,
`aten.index` with one integer index tensor) lowers to a kernel of its own:

    y[o, i, c] = x[o, index[i], c]      x viewed as [outer, N, inner], y as [outer, M, inner]

M is the index's element count: an index of any shape lays y out the same way (`x[index]` puts
the index's dims where dim was). Nothing is computed, so elements move as bits (8-byte elements
as uint32 pairs). A unit is a tile of up to T output rows x a chunk of C columns of one outer
position: the tile's indices come in by one copy and are read on the scalar unit (a negative one
counts from the end, as `x[index]` does; then clamped into [0, N) so every read stays inside x),
each row is one copy from x into its row of the tile, and the tile goes out by one strided copy
(its rows are consecutive in y). A row longer than the UB allows goes in chunks of columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.lowering.indexing import _PASS, INDEX_ENTRY, INDEX_SHAPES, _dim_rule, match_cases, source_of
from copilot.lowering.movement import _name

_INDEX_DTYPES = {"int8", "int16", "int32", "int64"}
_DATA_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "uint8": 1, "bool": 1, "int16": 2,
               "int32": 4, "int64": 8, "float64": 8}


@dataclass
class IndexSelectPlan:
    task: object
    pattern: str                      # "index_select"
    x: int                            # input positions of the data and the index
    index: int
    dim_rule: tuple                   # ("attr", name) | ("const", d)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _select_of(gm):
    """(x placeholder position, index placeholder position, traced dim) when the graph is one
    `index_select(x, dim, index)` or `index(x, [None, ..., index])` of two inputs (the index
    possibly cast), else None."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    sel = [n for n in calls if _name(n) in ("index_select", "index")]
    if len(sel) != 1 or sel[0] is not out:
        return None
    s = sel[0]
    if _name(s) == "index_select":
        if len(s.args) != 3:
            return None
        x, dim, index = s.args
    else:
        given = [(d, t) for d, t in enumerate(s.args[1]) if t is not None] if len(s.args) == 2 else []
        if len(given) != 1:
            return None
        x, (dim, index) = s.args[0], given[0]
        val = index.meta.get("val") if hasattr(index, "meta") else None
        if val is None or val.dtype.is_floating_point or str(val.dtype) == "torch.bool":
            return None                                   # a mask selects a data-dependent count
    x, idx = source_of(x, _PASS), source_of(index, _PASS | {"_to_copy"})
    if x not in places or idx not in places or x is idx:
        return None
    rank = len(x.meta["val"].shape) if "val" in getattr(x, "meta", {}) else None
    if rank is None:
        return None
    for n in calls:
        if n is not s and _name(n) not in _PASS | {"_to_copy"}:
            return None
    return places.index(x), places.index(idx), int(dim) if int(dim) >= 0 else int(dim) + rank


def plan_index_select(task):
    """The row-gather plan of `task`, or None when its golden is not one index_select / x[index]."""
    found = match_cases(task, _select_of, "index_select", lambda a, b: a[:2] == b[:2])
    if found is None:
        return None
    xi, ii = found[0][:2]
    dims = [g[2] for g in found]
    plan = IndexSelectPlan(task, "index_select", xi, ii, _dim_rule(task, dims, xi))
    for c in task.cases:
        if c.dtypes[ii] not in _INDEX_DTYPES:
            plan.unserved[c.id] = f"index dtype {c.dtypes[ii]} (int8/int16/int32/int64 are served)"
        elif c.dtypes[xi] not in _DATA_BYTES:
            plan.unserved[c.id] = f"data dtype {c.dtypes[xi]}"
        elif len(c.shapes[xi]) > 8:
            plan.unserved[c.id] = "more than 8 dims"
    if any(len(c.shapes[xi]) and d == len(c.shapes[xi]) - 1 for c, d in zip(task.cases, dims)):
        plan.notes.append("index_select along the last axis: rows of one element, one copy each (slow)")
    return plan


def render(plan: IndexSelectPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UB_BUDGET, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    xn, iname, yn = t.inputs[plan.x].name, t.inputs[plan.index].name, t.outputs[0].name
    if plan.dim_rule[0] == "attr":
        pos = [a.name for a in t.attrs].index(plan.dim_rule[1])
        dim, dim_doc = f"*attrs->GetAttrPointer<int64_t>({pos})", f"the int attr `{plan.dim_rule[1]}`"
    else:
        dim, dim_doc = str(int(plan.dim_rule[1])), f"fixed at {plan.dim_rule[1]}"
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    text = text.replace("@UB_BUDGET@", UB_BUDGET)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(xn)), ("@IT@", _macro_of(iname)), ("@XI@", str(plan.x)),
                     ("@II@", str(plan.index)), ("@X@", _ident(xn)), ("@I@", _ident(iname)), ("@Y@", _ident(yn)),
                     ("@ARGS@", ", ".join(f"GM_ADDR {_ident(i.name)}" for i in t.inputs)),
                     ("@DIM@", dim), ("@DIMDOC@", dim_doc), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(int(knobs["tile_elems"]))), ("@SYNC@", SYNC_PIPES),
                     ("@SPLIT@", core_split(knobs, "td->outer * td->count * td->inner", "units"))):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: index_select, y[o, i, c] = x[o, @I@[i], c] with x viewed as [outer, N, inner] around dim
// (@DIMDOC@) and y as [outer, M, inner], M = @I@'s element count. Rows move as bits.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t bufferNum;
    uint64_t outer;                     // positions before dim
    uint64_t axisLen;                   // N: x's length along dim; indices are clamped into [0, N)
    uint64_t inner;                     // elements of one row (after dim)
    uint64_t count;                     // M: output rows per outer position
    uint32_t tileRows;                  // T: output rows per tile
    uint32_t colChunk;                  // C: columns per tile row (a row longer than the UB goes in chunks)
    uint32_t pitch;                     // UB pitch of a tile row (elements, 32-byte rows)
    uint64_t rowBlocks;                 // tiles along M
    uint64_t colChunks;                 // chunks along a row
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

// x moves in units of its own width (8-byte elements as two uint32 units)
using Elem = @XT@;
using Unit = std::conditional<sizeof(Elem) == 1, uint8_t,
             std::conditional<sizeof(Elem) == 2, uint16_t, uint32_t>::type>::type;
// the index moves as int8 / int16 / int32, or int64 as uint32 pairs; it is read as Index
using Index = @IT@;
using IndexUnit = std::conditional<sizeof(Index) == 8, uint32_t, Index>::type;

class @K@ {
    static constexpr uint32_t UNITS = sizeof(Elem) / sizeof(Unit);

public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR idxAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(xAddr), td_.outer * td_.axisLen * td_.inner * UNITS);
        idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ IndexUnit*>(idxAddr),
                               td_.count * sizeof(Index) / sizeof(IndexUnit));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(yAddr), td_.outer * td_.count * td_.inner * UNITS);
@UNIT_RANGE@        pipe_.InitBuffer(tileQue_, td_.bufferNum, td_.tileRows * td_.pitch * sizeof(Elem));
        pipe_.InitBuffer(idxBuf_, (td_.tileRows * sizeof(Index) + 31) / 32 * 32);
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            Tile(unitStart_ + u);
        }
    }

private:
    // unit = (outer position, block of T output rows, chunk of C columns)
    __aicore__ inline void Tile(uint64_t unit)
    {
        const uint64_t c0 = (unit % td_.colChunks) * td_.colChunk;
        const uint64_t i0 = (unit / td_.colChunks % td_.rowBlocks) * td_.tileRows;
        const uint64_t o = unit / (td_.colChunks * td_.rowBlocks);
        const uint32_t nr = static_cast<uint32_t>(td_.count - i0 < td_.tileRows ? td_.count - i0 : td_.tileRows);
        const uint32_t len = static_cast<uint32_t>(td_.inner - c0 < td_.colChunk ? td_.inner - c0 : td_.colChunk);
        const uint32_t bytes = len * sizeof(Elem);

        // the tile's indices, read on the scalar unit
        LocalTensor<IndexUnit> idxUnits = idxBuf_.Get<IndexUnit>();
        SyncPipes<HardEvent::S_MTE2>();                      // the previous tile's indices are read
        DataCopyPad(idxUnits, idxGm_[i0 * sizeof(Index) / sizeof(IndexUnit)],
                    DataCopyExtParams(1, static_cast<uint32_t>(nr * sizeof(Index)), 0, 0, 0),
                    DataCopyPadExtParams<IndexUnit>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_S>();
        LocalTensor<Index> idx = idxUnits.template ReinterpretCast<Index>();

        const int64_t n = static_cast<int64_t>(td_.axisLen);
        const uint64_t xBase = o * td_.axisLen * td_.inner + c0;
        LocalTensor<Unit> tile = tileQue_.AllocTensor<Unit>();
        DataCopyExtParams row(1, bytes, 0, 0, 0);
        for (uint32_t r = 0; r < nr; ++r) {
            int64_t v = static_cast<int64_t>(idx.GetValue(r));
            v = v < 0 ? v + n : v;                           // x[index]: a negative index counts from the end
            v = v < 0 ? 0 : (v >= n ? n - 1 : v);           // stray values stay inside x
            const uint64_t at = (xBase + static_cast<uint64_t>(v) * td_.inner) * UNITS;
            DataCopyPad(tile[r * td_.pitch * UNITS], xGm_[at], row, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
        }
        tileQue_.EnQue(tile);
        tile = tileQue_.DeQue<Unit>();
        // nr consecutive rows of y, inner apart
        DataCopyExtParams out(static_cast<uint16_t>(nr), bytes,
                              (td_.pitch * sizeof(Elem) - (bytes + 31) / 32 * 32) / 32,
                              static_cast<uint32_t>((td_.inner - len) * sizeof(Elem)), 0);
        DataCopyPad(yGm_[((o * td_.count + i0) * td_.inner + c0) * UNITS], tile, out);
        tileQue_.FreeTensor(tile);
    }

@SYNC@
    TPipe pipe_;
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, 2> tileQue_;
    TBuf<QuePosition::VECCALC> idxBuf_;
    GlobalTensor<Unit> xGm_;
    GlobalTensor<IndexUnit> idxGm_;
    GlobalTensor<Unit> yGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

""" + INDEX_ENTRY

_TILING = r"""@TILING_HEAD@""" + INDEX_SHAPES + r"""    int64_t dim = @DIM@;
    dim = dim < 0 ? dim + rank : dim;
    if (rank < 1 || rank > 8 || dim < 0 || dim >= rank) {
        return ge::GRAPH_FAILED;
    }
    td->outer = 1;
    td->inner = 1;
    for (int32_t d = 0; d < rank; ++d) {
        const uint64_t n = static_cast<uint64_t>(xShape.GetDim(d));
        if (d < dim) {
            td->outer *= n;
        } else if (d == dim) {
            td->axisLen = n;
        } else {
            td->inner *= n;
        }
    }
    td->count = 1;
    for (uint32_t d = 0; d < iShape.GetDimNum(); ++d) {
        td->count *= static_cast<uint64_t>(iShape.GetDim(d));
    }
    if (td->outer * td->inner * td->count == 0 || td->axisLen == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t eb = DtypeBytes(context->GetInputDesc(@XI@)->GetDataType());
    const uint64_t ib = DtypeBytes(context->GetInputDesc(@II@)->GetDataType());

@UB_BUDGET@    const uint64_t room = budget - 4096;                               // the fixed objects' slack
    auto up = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
    const uint64_t align = 32 / eb;                                    // elements per 32-byte block
    const uint64_t cap = @CAP@ > 0 ? @CAP@ : (1ULL << 20);
    // UB bytes of tiles of r rows of c columns (queued) and their indices
    auto bytes = [&](uint64_t r, uint64_t c) { return td->bufferNum * r * up(c, align) * eb + up(r * ib, 32); };
    // columns: a whole row when 8 rows (or all M) fit, else chunks halved until they do
    const uint64_t fewRows = td->count < 8 ? td->count : 8;
    uint64_t cols = td->inner < cap ? td->inner : cap;
    while (cols > align && bytes(fewRows, cols) > room) {
        cols = up(cols / 2, align);
    }
    td->colChunk = static_cast<uint32_t>(cols);
    td->pitch = static_cast<uint32_t>(up(cols, align));
    td->colChunks = (td->inner + cols - 1) / cols;
    // rows: as many as the UB holds (a copy moves at most 4095 rows), fewer while tiles are fewer than cores
    uint64_t rows = room / (td->bufferNum * td->pitch * eb + ib);
    rows = rows > 4095 ? 4095 : (rows == 0 ? 1 : rows);
    rows = rows > td->count ? td->count : rows;
    while (rows > 1 && td->outer * ((td->count + rows - 1) / rows) * td->colChunks < coreNum) {
        rows = (rows + 1) / 2;
    }
    td->tileRows = static_cast<uint32_t>(rows);
    td->rowBlocks = (td->count + rows - 1) / rows;
    if (td->inner * eb >= (1ULL << 32)) {
        return ge::GRAPH_FAILED;   // a row gap past the copy's 32-bit stride field
    }
    const uint64_t units = td->outer * td->rowBlocks * td->colChunks;
@SPLIT@    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
