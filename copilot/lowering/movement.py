"""Layout transforms: a golden that only permutes the axes of its input (`permute`, `transpose`,
`.t()`, then `.contiguous()` / `.clone()`) lowers to a pure data-movement kernel.

No arithmetic touches the data, so every dtype moves as bits (8-byte elements as uint32 pairs,
1-byte ones through half for the UB gather). The permutation is a run-time rule read in the
tiling function: an int-list attr (`perm`), two int attrs swapped (`transpose(x, d0, d1)`), or
the same literal permutation in every case. The tiling function drops unit dims and merges input
dims that stay adjacent, then picks one of two modes:
- MODE_RUNS: the input's last axis stays last: whole contiguous rows are copied, many rows per
  DataCopyPad when they sit at a fixed input stride (the output rows are contiguous);
- MODE_TRANSPOSE: the output's last axis is another input axis: a tile of tileA x tileB elements
  (tileA along the output's last axis, tileB along the input's) is read as tileA input rows,
  transposed in UB with one Gather over a byte-offset table built once per core, and written as
  tileB output rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported

# aten ops a layout transform may contain besides its permutations
_PASS = {"clone", "contiguous", "alias", "detach", "lift_fresh_copy", "lift_fresh", "alias_copy"}
_PERMUTE = {"permute", "transpose", "t", "swapaxes", "numpy_T", "permute_copy", "transpose_copy", "mT"}


@dataclass
class MovementPlan:
    task: object
    pattern: str                      # "layout"
    rule: tuple                       # ("attr", name) | ("swap", a, b) | ("const", perm)
    perms: list[tuple]                # per case, the permutation traced
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _name(n) -> str:
    return str(getattr(n.target, "__name__", n.target)).split(".")[0]


def plan_movement(task):
    """The layout plan of `task`, or None when its golden is not a pure axis permutation."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 1 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        gm = trace(task, task.cases[0])
    except Unsupported:
        return None
    if _perm_of(gm) is None:
        return None
    perms = [tuple(range(len(task.cases[0].shapes[0])))]
    perms[0] = _perm_of(gm)
    for case in task.cases[1:]:
        p = _perm_of(trace(task, case))
        if p is None:
            raise Unsupported(f"{task.name}: case {case.id} is not the axis permutation the other cases are")
        perms.append(p)
    plan = MovementPlan(task, "layout", _rule(task, perms), perms)
    for c in task.cases:
        if len(c.shapes[0]) > 8:
            plan.unserved[c.id] = "more than 8 dims"
    return plan


def _perm_of(gm):
    """The permutation a graph applies to its one input (output dim k = input dim p[k]), or None."""
    order = None
    vals = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if order is not None:
                return None
            rank = len(n.meta["val"].shape)
            order = list(range(rank))
            vals[n] = order
            continue
        if n.op == "output":
            outs = n.args[0]
            outs = outs[0] if isinstance(outs, (list, tuple)) and len(outs) == 1 else outs
            return tuple(vals[outs]) if outs in vals else None
        if n.op != "call_function":
            return None
        name = _name(n)
        src = n.args[0] if n.args else None
        if src not in vals:
            return None
        cur = vals[src]
        r = len(cur)
        if name in _PASS:
            vals[n] = cur
        elif name in ("permute", "permute_copy"):
            vals[n] = [cur[d % r] for d in n.args[1]]
        elif name in ("transpose", "swapaxes", "transpose_copy"):
            a, b = n.args[1] % r, n.args[2] % r
            new = list(cur)
            new[a], new[b] = new[b], new[a]
            vals[n] = new
        elif name in ("t", "numpy_T", "mT"):
            new = list(cur)
            if name == "mT" or (name == "t" and r == 2):
                new[-1], new[-2] = new[-2], new[-1]
            else:
                new = new[::-1]
            vals[n] = new
        elif name == "_to_copy" and n.kwargs.get("dtype") in (None, n.args[0].meta["val"].dtype):
            vals[n] = cur
        else:
            return None
    return None


def _rule(task, perms) -> tuple:
    """How the tiling function finds the permutation of a case from its attrs."""
    for spec in task.attrs:
        vals = [c.attrs.get(spec.name) for c in task.cases]
        if all(isinstance(v, (list, tuple)) and len(v) == len(p) and
               all(isinstance(x, int) for x in v) and tuple(x % len(p) for x in v) == p
               for v, p in zip(vals, perms)):
            return ("attr", spec.name)
    ints = [a.name for a in task.attrs if a.type == "int"]
    for a in ints:
        for b in ints:
            if a != b and all(_swap(len(p), c.attrs.get(a), c.attrs.get(b)) == p for c, p in zip(task.cases, perms)):
                return ("swap", a, b)
    if len(set(perms)) == 1:
        return ("const", perms[0])
    raise Unsupported(f"{task.name}: the axis permutation differs between cases and no attr gives it "
                      "(an int list, or two int axes to swap)")


def _swap(rank, a, b):
    if not isinstance(a, int) or not isinstance(b, int):
        return None
    p = list(range(rank))
    p[a % rank], p[b % rank] = p[b % rank], p[a % rank]
    return tuple(p)


# ---------------------------------------------------------------------------------------------- render

def render(plan: MovementPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    T = f"{cls}TilingData"
    x, y = t.inputs[0].name, t.outputs[0].name
    xt, yt = _macro_of(x), _macro_of(y)
    text = _KERNEL
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", T), ("@K@", f"Kernel{cls}"),
                     ("@XT@", xt), ("@YT@", yt), ("@X@", _ident(x)), ("@Y@", _ident(y)),
                     ("@RULE@", _rule_comment(plan.rule))):
        text = text.replace(key, val)
    text += "\n" + _tiling(plan, knobs, T, _dtype_bytes_fn()) + "\n\n"
    text += task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


def _rule_comment(rule) -> str:
    if rule[0] == "attr":
        return f"the int-list attr `{rule[1]}` (output dim k is input dim {rule[1]}[k])"
    if rule[0] == "swap":
        return f"input dims `{rule[1]}` and `{rule[2]}` swapped"
    return f"the fixed permutation {list(rule[1])}"


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: layout (an axis permutation: output dim k is input dim perm[k]); the permutation is
// @RULE@. No arithmetic touches the data: elements move as bits.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MAX_DIMS = 8;
constexpr uint32_t MODE_RUNS = 0;       // the input's last axis stays last: rows copied whole
constexpr uint32_t MODE_TRANSPOSE = 1;  // the output's last axis is another input axis: tiles transposed in UB

struct @T@ {
    uint32_t mode;
    uint32_t bufferNum;
    uint32_t outerDims;                 // dims a unit of work indexes besides its tile (collapsed)
    uint32_t elemBytes;
    uint64_t outerShape[MAX_DIMS];
    int64_t outerInStride[MAX_DIMS];    // element strides of those dims in the input ...
    int64_t outerOutStride[MAX_DIMS];   // ... and in the output
    uint64_t tilesPerOuter;             // tiles per outer position
    // MODE_RUNS: `rows` output rows of `runLen` contiguous elements; consecutive rows are
    // `rowInStride` apart in the input; a tile is `tileRows` rows, or one `runChunk` of a long row
    uint64_t runLen;
    uint64_t rows;
    int64_t rowInStride;
    uint32_t tileRows;
    uint32_t runChunk;
    uint32_t runChunks;
    // MODE_TRANSPOSE: lenA along the output's last axis (input stride aInStride), lenB along the
    // input's last axis (output stride bOutStride); tiles of tileA x tileB, UB rows padded to pitchB
    // (input tile) and pitchA (output tile) elements
    uint32_t tileA;
    uint64_t lenA;
    uint64_t lenB;
    int64_t aInStride;
    int64_t bOutStride;
    uint32_t tileB;
    uint32_t pitchA;
    uint32_t pitchB;
    uint32_t tilesB;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint64_t numel;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

// Elements move as units of their own width; 8-byte elements as two uint32 units.
using Elem = @XT@;
using Unit = std::conditional<sizeof(Elem) == 1, Elem,
             std::conditional<sizeof(Elem) == 2, uint16_t, uint32_t>::type>::type;
// The UB gather moves 16- and 32-bit lanes: 1-byte elements go through half (exact for every int8/uint8).
using Lane = std::conditional<sizeof(Elem) == 1, half, Unit>::type;

class @K@ {
    static constexpr uint32_t UNITS = sizeof(Elem) / sizeof(Unit);   // units per element

public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(xAddr), td_.numel * UNITS);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(yAddr), td_.numel * UNITS);
        const uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < td_.formerNum) {
            unitStart_ = blockIdx * td_.formerUnits;
            unitCount_ = td_.formerUnits;
        } else {
            unitStart_ = td_.formerNum * td_.formerUnits + (blockIdx - td_.formerNum) * td_.tailUnits;
            unitCount_ = td_.tailUnits;
        }
        if (td_.mode == MODE_RUNS) {
            const uint32_t pitch = RowPitch(td_.runChunk);
            pipe_.InitBuffer(runQue_, td_.bufferNum, td_.tileRows * pitch * sizeof(Elem));
        } else {
            pipe_.InitBuffer(inQue_, td_.bufferNum, td_.tileA * td_.pitchB * sizeof(Elem));
            pipe_.InitBuffer(outQue_, td_.bufferNum, td_.tileB * td_.pitchA * sizeof(Elem));
            pipe_.InitBuffer(offsetBuf_, td_.tileB * td_.pitchA * UNITS * sizeof(uint32_t));
            if constexpr (sizeof(Elem) == 1) {
                pipe_.InitBuffer(laneInBuf_, td_.tileA * td_.pitchB * sizeof(half));
                pipe_.InitBuffer(laneOutBuf_, td_.tileB * td_.pitchA * sizeof(half));
            }
            BuildOffsets();
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            if (td_.mode == MODE_RUNS) {
                CopyRuns(unitStart_ + u);
            } else {
                TransposeTile(unitStart_ + u);
            }
        }
    }

private:
    // Rows start 32-byte aligned in UB.
    __aicore__ inline uint32_t RowPitch(uint64_t elems) const
    {
        const uint32_t align = 32 / sizeof(Elem) > 0 ? 32 / sizeof(Elem) : 1;
        return static_cast<uint32_t>((elems + align - 1) / align * align);
    }

    // Input and output element offsets of outer position `outer` (mixed radix, innermost last).
    __aicore__ inline void OuterOffsets(uint64_t outer, int64_t& inOff, int64_t& outOff) const
    {
        inOff = 0;
        outOff = 0;
        for (int32_t d = static_cast<int32_t>(td_.outerDims) - 1; d >= 0; --d) {
            const uint64_t i = outer % td_.outerShape[d];
            outer /= td_.outerShape[d];
            inOff += static_cast<int64_t>(i) * td_.outerInStride[d];
            outOff += static_cast<int64_t>(i) * td_.outerOutStride[d];
        }
    }

    // MODE_RUNS: `nr` rows of `len` elements from the input (rows rowInStride apart) into UB,
    // then to the output, where the rows are contiguous.
    __aicore__ inline void CopyRuns(uint64_t unit)
    {
        int64_t inOff = 0;
        int64_t outOff = 0;
        OuterOffsets(unit / td_.tilesPerOuter, inOff, outOff);
        const uint64_t t = unit % td_.tilesPerOuter;
        const uint64_t row0 = (t / td_.runChunks) * td_.tileRows;
        const uint64_t col0 = (t % td_.runChunks) * td_.runChunk;
        const uint64_t nrLeft = td_.rows - row0;
        const uint32_t nr = static_cast<uint32_t>(nrLeft < td_.tileRows ? nrLeft : td_.tileRows);
        const uint64_t lenLeft = td_.runLen - col0;
        const uint32_t len = static_cast<uint32_t>(lenLeft < td_.runChunk ? lenLeft : td_.runChunk);
        inOff += static_cast<int64_t>(row0) * td_.rowInStride + static_cast<int64_t>(col0);
        outOff += static_cast<int64_t>(row0 * td_.runLen + col0);
        const uint32_t bytes = len * sizeof(Elem);
        LocalTensor<Unit> tile = runQue_.AllocTensor<Unit>();
        const uint32_t gap = nr > 1 ? static_cast<uint32_t>((td_.rowInStride - len) * sizeof(Elem)) : 0;
        DataCopyExtParams in(static_cast<uint16_t>(nr), bytes, gap, 0, 0);
        DataCopyPad(tile, xGm_[inOff * UNITS], in, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
        runQue_.EnQue(tile);
        tile = runQue_.DeQue<Unit>();
        DataCopyExtParams out(static_cast<uint16_t>(nr), bytes, 0,
                              static_cast<uint32_t>((td_.runLen - len) * sizeof(Elem)), 0);
        DataCopyPad(yGm_[outOff * UNITS], tile, out);
        runQue_.FreeTensor(tile);
    }

    // Gather table (bytes): output-tile lane (j, i, h) reads input-tile lane (i, j, h), i.e.
    // offset[(j * pitchA + i) * UNITS + h] = ((i * pitchB + j) * UNITS + h) * sizeof(Lane).
    // Padding columns (i >= tileA) repeat the last row so every read stays in the tile.
    __aicore__ inline void BuildOffsets()
    {
        offsets_ = offsetBuf_.Get<uint32_t>();
        const uint32_t rowLanes = td_.pitchA * UNITS;
        for (uint32_t i = 0; i < td_.pitchA; ++i) {
            const uint32_t src = i < td_.tileA ? i : td_.tileA - 1;
            for (uint32_t h = 0; h < UNITS; ++h) {
                offsets_.SetValue(i * UNITS + h, (src * td_.pitchB * UNITS + h) * sizeof(Lane));
            }
        }
        SyncPipes<HardEvent::S_V>();
        LocalTensor<int32_t> table = offsets_.ReinterpretCast<int32_t>();
        for (uint32_t j = 1; j < td_.tileB; ++j) {
            Adds(table[j * rowLanes], table, static_cast<int32_t>(j * UNITS * sizeof(Lane)), rowLanes);
        }
    }

    // MODE_TRANSPOSE: a tileA x tileB block (input rows along the output's last axis) in, one
    // Gather, tileB rows of the output out.
    __aicore__ inline void TransposeTile(uint64_t unit)
    {
        int64_t inOff = 0;
        int64_t outOff = 0;
        OuterOffsets(unit / td_.tilesPerOuter, inOff, outOff);
        const uint64_t t = unit % td_.tilesPerOuter;
        const uint64_t a0 = (t / td_.tilesB) * td_.tileA;
        const uint64_t b0 = (t % td_.tilesB) * td_.tileB;
        const uint32_t na = static_cast<uint32_t>(td_.lenA - a0 < td_.tileA ? td_.lenA - a0 : td_.tileA);
        const uint32_t nb = static_cast<uint32_t>(td_.lenB - b0 < td_.tileB ? td_.lenB - b0 : td_.tileB);
        inOff += static_cast<int64_t>(a0) * td_.aInStride + static_cast<int64_t>(b0);
        outOff += static_cast<int64_t>(b0) * td_.bOutStride + static_cast<int64_t>(a0);

        LocalTensor<Unit> src = inQue_.AllocTensor<Unit>();
        const uint32_t inRowBytes = nb * sizeof(Elem);
        DataCopyExtParams in(static_cast<uint16_t>(na), inRowBytes,
                             na > 1 ? static_cast<uint32_t>((td_.aInStride - nb) * sizeof(Elem)) : 0,
                             (td_.pitchB * sizeof(Elem) - (inRowBytes + 31) / 32 * 32) / 32, 0);
        DataCopyPad(src, xGm_[inOff * UNITS], in, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
        inQue_.EnQue(src);
        src = inQue_.DeQue<Unit>();
        LocalTensor<Unit> dst = outQue_.AllocTensor<Unit>();
        const uint32_t lanes = td_.tileB * td_.pitchA * UNITS;
        if constexpr (sizeof(Elem) == 1) {
            LocalTensor<half> laneIn = laneInBuf_.Get<half>();
            LocalTensor<half> laneOut = laneOutBuf_.Get<half>();
            Cast(laneIn, src, RoundMode::CAST_NONE, td_.tileA * td_.pitchB);
            Gather(laneOut, laneIn, offsets_, 0, lanes);
            Cast(dst, laneOut, RoundMode::CAST_RINT, lanes);
        } else {
            Gather(dst, src, offsets_, 0, lanes);
        }
        inQue_.FreeTensor(src);
        outQue_.EnQue(dst);
        dst = outQue_.DeQue<Unit>();
        const uint32_t outRowBytes = na * sizeof(Elem);
        DataCopyExtParams out(static_cast<uint16_t>(nb), outRowBytes,
                              (td_.pitchA * sizeof(Elem) - (outRowBytes + 31) / 32 * 32) / 32,
                              nb > 1 ? static_cast<uint32_t>((td_.bOutStride - na) * sizeof(Elem)) : 0, 0);
        DataCopyPad(yGm_[outOff * UNITS], dst, out);
        outQue_.FreeTensor(dst);
    }

    template <HardEvent EVT>
    __aicore__ inline void SyncPipes()
    {
        const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(EVT));
        SetFlag<EVT>(id);
        WaitFlag<EVT>(id);
    }

    TPipe pipe_;
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, 2> runQue_;
    TQue<QuePosition::VECIN, 2> inQue_;
    TQue<QuePosition::VECOUT, 2> outQue_;
    TBuf<QuePosition::VECCALC> offsetBuf_;
    TBuf<QuePosition::VECCALC> laneInBuf_;
    TBuf<QuePosition::VECCALC> laneOutBuf_;
    LocalTensor<uint32_t> offsets_;
    GlobalTensor<Unit> xGm_;
    GlobalTensor<Unit> yGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(GM_ADDR @X@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @Y@, tilingData);
    op.Process();
}
"""


def _tiling(plan: MovementPlan, knobs: dict, T: str, dtype_bytes: str) -> str:
    t = plan.task
    rule = plan.rule
    idx = {a.name: i for i, a in enumerate(t.attrs)}
    if rule[0] == "attr":
        perm = (f"    const gert::TypedContinuousVector<int64_t>* permAttr = attrs->GetListInt({idx[rule[1]]});\n"
                f"    if (permAttr == nullptr || static_cast<int32_t>(permAttr->GetSize()) != rank) {{\n"
                f"        return ge::GRAPH_FAILED;\n"
                f"    }}\n"
                f"    for (int32_t k = 0; k < rank; ++k) {{\n"
                f"        perm[k] = permAttr->GetData()[k];\n"
                f"    }}\n")
    elif rule[0] == "swap":
        perm = (f"    for (int32_t k = 0; k < rank; ++k) {{\n"
                f"        perm[k] = k;\n"
                f"    }}\n"
                f"    int64_t d0 = *attrs->GetAttrPointer<int64_t>({idx[rule[1]]});\n"
                f"    int64_t d1 = *attrs->GetAttrPointer<int64_t>({idx[rule[2]]});\n"
                f"    d0 = d0 < 0 ? d0 + rank : d0;\n"
                f"    d1 = d1 < 0 ? d1 + rank : d1;\n"
                f"    if (d0 < 0 || d0 >= rank || d1 < 0 || d1 >= rank) {{\n"
                f"        return ge::GRAPH_FAILED;\n"
                f"    }}\n"
                f"    perm[d0] = d1;\n"
                f"    perm[d1] = d0;\n")
    else:
        p = rule[1]
        perm = (f"    static const int64_t kPerm[{len(p)}] = {{{', '.join(map(str, p))}}};\n"
                f"    if (rank != {len(p)}) {{\n"
                f"        return ge::GRAPH_FAILED;\n"
                f"    }}\n"
                f"    for (int32_t k = 0; k < rank; ++k) {{\n"
                f"        perm[k] = kPerm[k];\n"
                f"    }}\n")
    policy = knobs["block_dim_policy"]
    if policy == "all_cores":
        block = "    uint64_t blockDim = coreNum;\n"
    elif policy == "half_cores":
        block = "    uint64_t blockDim = coreNum / 2 > 0 ? coreNum / 2 : 1;\n"
    else:
        block = (f"    uint64_t blockDim = (numel + {knobs['min_work_elems']} - 1) / {knobs['min_work_elems']};\n"
                 f"    blockDim = blockDim > coreNum ? coreNum : blockDim;\n")
    cap = int(knobs["tile_elems"])
    text = _TILING
    for key, val in (("@T@", T), ("@DTYPE_BYTES@", dtype_bytes), ("@PERM@", perm), ("@BLOCK@", block),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(cap))):
        text = text.replace(key, val)
    return text


_TILING = r"""namespace optiling {
@DTYPE_BYTES@

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    @T@* td = context->GetTilingData<@T@>();
    if (td == nullptr) {
        return ge::GRAPH_FAILED;
    }
    std::memset(td, 0, sizeof(@T@));
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    (void)attrs;
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(shape.GetDimNum());
    if (rank > static_cast<int32_t>(MAX_DIMS)) {
        return ge::GRAPH_FAILED;
    }
    int64_t perm[MAX_DIMS] = {0};
@PERM@
    // the permutation must name every input dim once
    bool seen[MAX_DIMS] = {false};
    for (int32_t k = 0; k < rank; ++k) {
        perm[k] = perm[k] < 0 ? perm[k] + rank : perm[k];
        if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]]) {
            return ge::GRAPH_FAILED;
        }
        seen[perm[k]] = true;
    }
    int64_t inStride[MAX_DIMS];
    uint64_t numel = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
        inStride[d] = static_cast<int64_t>(numel);
        numel *= static_cast<uint64_t>(shape.GetDim(d));
    }
    td->numel = numel;
    td->elemBytes = DtypeBytes(context->GetInputDesc(0)->GetDataType());
    const uint64_t eb = td->elemBytes;

    // Output dims in order, unit dims dropped; an output dim whose input dim directly follows the
    // previous one's merges into it (they stay one contiguous run).
    uint64_t dims[MAX_DIMS];
    int64_t st[MAX_DIMS];
    int32_t src[MAX_DIMS];
    int32_t n = 0;
    for (int32_t k = 0; k < rank; ++k) {
        const int32_t d = static_cast<int32_t>(perm[k]);
        const uint64_t len = static_cast<uint64_t>(shape.GetDim(d));
        if (len == 1) {
            continue;
        }
        if (n > 0 && src[n - 1] == d - 1 && st[n - 1] == inStride[d] * static_cast<int64_t>(len)) {
            dims[n - 1] *= len;
            st[n - 1] = inStride[d];
            src[n - 1] = d;
            continue;
        }
        dims[n] = len;
        st[n] = inStride[d];
        src[n] = d;
        ++n;
    }
    if (n == 0) {
        dims[0] = 1;
        st[0] = 1;
        n = 1;
    }
    // output strides of the collapsed dims (the output is contiguous)
    int64_t os[MAX_DIMS];
    int64_t acc = 1;
    for (int32_t k = n - 1; k >= 0; --k) {
        os[k] = acc;
        acc *= static_cast<int64_t>(dims[k]);
    }

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 4096) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
    const uint64_t align = 32 / eb > 0 ? 32 / eb : 1;       // elements per 32-byte block
    uint64_t units = 0;
    uint32_t od = 0;

    if (st[n - 1] == 1) {
        td->mode = MODE_RUNS;
        td->runLen = dims[n - 1];
        td->rows = n >= 2 ? dims[n - 2] : 1;
        td->rowInStride = n >= 2 ? st[n - 2] : 0;
        for (int32_t k = 0; k + 2 < n; ++k) {
            td->outerShape[od] = dims[k];
            td->outerInStride[od] = st[k];
            td->outerOutStride[od] = os[k];
            ++od;
        }
        // a tile: as many whole rows as the double-buffered queue holds, or a chunk of one row
        uint64_t tileElems = budget / (td->bufferNum * eb);
        if (@CAP@ > 0 && tileElems > @CAP@) {
            tileElems = @CAP@;
        }
        tileElems = tileElems / align * align;
        const uint64_t pitch = (td->runLen + align - 1) / align * align;
        // rows batch into one copy when their input stride is a forward gap that fits the copy's field
        const bool batch = td->rowInStride >= static_cast<int64_t>(td->runLen) &&
            static_cast<uint64_t>(td->rowInStride - static_cast<int64_t>(td->runLen)) * eb < (1ULL << 32);
        if (pitch <= tileElems) {
            uint64_t nr = batch ? tileElems / pitch : 1;
            nr = nr > 4095 ? 4095 : nr;
            nr = nr > td->rows ? td->rows : nr;
            td->tileRows = static_cast<uint32_t>(nr);
            td->runChunk = static_cast<uint32_t>(td->runLen);
            td->runChunks = 1;
        } else {
            td->tileRows = 1;
            td->runChunk = static_cast<uint32_t>(tileElems);
            td->runChunks = static_cast<uint32_t>((td->runLen + tileElems - 1) / tileElems);
        }
        td->tilesPerOuter = ((td->rows + td->tileRows - 1) / td->tileRows) * td->runChunks;
    } else {
        td->mode = MODE_TRANSPOSE;
        int32_t r = -1;          // output position of the input's last (stride 1) dim
        for (int32_t k = 0; k < n; ++k) {
            if (st[k] == 1) {
                r = k;
            }
        }
        if (r < 0) {
            return ge::GRAPH_FAILED;
        }
        td->lenA = dims[n - 1];
        td->aInStride = st[n - 1];
        td->lenB = dims[r];
        td->bOutStride = os[r];
        for (int32_t k = 0; k + 1 < n; ++k) {
            if (k == r) {
                continue;
            }
            td->outerShape[od] = dims[k];
            td->outerInStride[od] = st[k];
            td->outerOutStride[od] = os[k];
            ++od;
        }
        // A tile costs its input and output copies (double-buffered) plus one uint32 offset per
        // 16/32-bit lane (and two half staging tiles for 1-byte data). Start from 256 x 256 and
        // halve the longer side until it fits; a short axis lets the other grow.
        const uint64_t laneBytes = eb == 8 ? 8 : 4;
        uint64_t ta = td->lenA < 256 ? td->lenA : 256;
        uint64_t tb = td->lenB < 256 ? td->lenB : 256;
        auto padded = [&](uint64_t v) { return (v + align - 1) / align * align; };
        auto bytes = [&](uint64_t a, uint64_t b) {
            const uint64_t inTile = a * padded(b);
            const uint64_t outTile = b * padded(a);
            return td->bufferNum * (inTile + outTile) * eb + outTile * laneBytes +
                (eb == 1 ? (inTile + outTile) * 2 : 0);
        };
        while (bytes(ta, tb) > budget && (ta > 1 || tb > 1)) {
            if (ta >= tb) {
                ta = (ta + 1) / 2;
            } else {
                tb = (tb + 1) / 2;
            }
        }
        // grow the shorter side back while the longer one is clipped by the tensor
        while (ta < td->lenA && bytes(ta * 2, tb) <= budget && ta * 2 <= 4095) {
            ta *= 2;
        }
        while (tb < td->lenB && bytes(ta, tb * 2) <= budget && tb * 2 <= 4095) {
            tb *= 2;
        }
        ta = ta > td->lenA ? td->lenA : ta;
        tb = tb > td->lenB ? td->lenB : tb;
        td->tileA = static_cast<uint32_t>(ta);
        td->tileB = static_cast<uint32_t>(tb);
        td->pitchA = static_cast<uint32_t>(padded(ta));
        td->pitchB = static_cast<uint32_t>(padded(tb));
        td->tilesB = static_cast<uint32_t>((td->lenB + tb - 1) / tb);
        td->tilesPerOuter = ((td->lenA + ta - 1) / ta) * td->tilesB;
        if (static_cast<uint64_t>(td->aInStride) * eb >= (1ULL << 32) ||
            static_cast<uint64_t>(td->bOutStride) * eb >= (1ULL << 32)) {
            return ge::GRAPH_FAILED;   // a row gap past the copy's 32-bit stride field
        }
    }
    td->outerDims = od;
    uint64_t outer = 1;
    for (uint32_t k = 0; k < od; ++k) {
        outer *= td->outerShape[k];
    }
    units = outer * td->tilesPerOuter;

    // multi-core split with tail cores
@BLOCK@    blockDim = blockDim > units ? units : blockDim;
    blockDim = blockDim == 0 ? 1 : blockDim;
    td->formerNum = units % blockDim;
    td->formerUnits = (units + blockDim - 1) / blockDim;
    td->tailUnits = units / blockDim;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
