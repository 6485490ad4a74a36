"""Scatters: `data.clone().scatter_(dim, index, updates)` and its reductions (`scatter_add_`,
`scatter_reduce_(..., "prod" | "amin" | "amax", include_self=True)`) lower to a kernel of their
own:

    y = data; then for every index position p, in order along dim:
    y[p with its coordinate along dim replaced by index[p]] (=, +=, *=, min=, max=) updates[p]

The mode is a string attr (None / "update", "add", "multiply", "amin", "amax"), dim an int attr.
Every core first copies its share of data into y; after SyncAll it owns whole *lanes* (index
positions that differ only along dim): a lane writes only into its own line of y, so the lanes
are split over cores without two cores touching one element, and each lane runs along dim in
order, as torch does (the last update wins; products and sums in the same order). The lanes run
on the scalar unit (GM reads and writes element by element): correct for any shape, slow.
fp16 / bf16 are combined in an fp32 copy of y in the workspace and narrowed once at the end
(torch's CPU kernel accumulates them in fp32 too: per-step fp16 rounding loses sums that cancel).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASS = {"clone", "contiguous", "alias", "detach", "_to_copy"}
# traced op (and reduce argument) -> mode code
_MODES = {"scatter_": 0, "scatter": 0, "scatter_add_": 1, "scatter_add": 1}
_REDUCE = {"prod": 2, "amin": 3, "amax": 4}
_ATTR_MODES = {None: 0, "update": 0, "none": 0, "add": 1, "multiply": 2, "amin": 3, "amax": 4}


@dataclass
class ScatterPlan:
    task: object
    pattern: str                      # "scatter"
    data: int
    index: int
    updates: int
    dim_rule: tuple                   # ("attr", name) | ("const", d)
    mode_rule: tuple                  # ("attr", name) | ("const", code)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _source(v):
    from copilot.lowering.indexing import source_of

    return source_of(v, _PASS)


def _scatter_of(gm):
    """(data, index, updates positions, dim, mode code) for one scatter of a cloned input."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    ops = [n for n in calls if _name(n) in _MODES or _name(n) in ("scatter_reduce_", "scatter_reduce")]
    if len(ops) != 1 or len(ops[0].args) < 4 or not hasattr(ops[0].args[3], "op"):
        return None
    op = ops[0]
    if _name(op) in _MODES:
        if op.kwargs.get("reduce") is not None:
            return None
        mode = _MODES[_name(op)]
    else:
        reduce = op.args[4] if len(op.args) > 4 else op.kwargs.get("reduce")
        if reduce not in _REDUCE or not op.kwargs.get("include_self", True):
            return None
        mode = _REDUCE[reduce]
    data, idx, upd = _source(op.args[0]), _source(op.args[2]), _source(op.args[3])
    if any(v not in places for v in (data, idx, upd)) or len({data, idx, upd}) != 3:
        return None
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    if _source(out) is not op or any(c is not op and _name(c) not in _PASS for c in calls):
        return None
    return places.index(data), places.index(idx), places.index(upd), int(op.args[1]), mode


def plan_scatter(task):
    """The scatter plan of `task`, or None when its golden is not one scatter into a copy of an input."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 3 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        first = _scatter_of(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    found = [(task.cases[0], first)]
    for case in task.cases[1:]:
        g = _scatter_of(trace(task, case))
        if g is None or g[:3] != first[:3]:
            raise Unsupported(f"{task.name}: case {case.id} is not the scatter the other cases are")
        found.append((case, g))
    plan = ScatterPlan(task, "scatter", *first[:3], _rule(task, found, 3, "int", lambda v: v),
                       _rule(task, found, 4, "string", lambda v: _ATTR_MODES.get(v, -1)))
    for c in task.cases:
        if c.dtypes[plan.index] not in ("int32", "int64"):
            plan.unserved[c.id] = f"index dtype {c.dtypes[plan.index]}"
        elif len(c.shapes[plan.data]) > 8:
            plan.unserved[c.id] = "more than 8 dims"
    return plan


def _rule(task, found, k, kind, of_attr) -> tuple:
    for a in task.attrs:
        if a.type == kind and all(of_attr(c.attrs.get(a.name, a.default)) == g[k] for c, g in found):
            return ("attr", a.name)
    values = {g[k] for _, g in found}
    if len(values) == 1:
        return ("const", values.pop())
    raise Unsupported(f"{task.name}: the scatter's {'dim' if k == 3 else 'reduction'} varies between cases "
                      "and no attr gives it")


def render(plan: ScatterPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]
    if plan.dim_rule[0] == "attr":
        dim = f"*attrs->GetAttrPointer<int64_t>({names.index(plan.dim_rule[1])})"
    else:
        dim = str(int(plan.dim_rule[1]))
    if plan.mode_rule[0] == "attr":
        pos = names.index(plan.mode_rule[1])
        mode = (f"    // the reduction: unset / \"update\" / \"none\" replace, else add, multiply, amin, amax\n"
                f"    const char* reduce = attrs->GetAttrPointer<char>({pos});\n"
                f"    td->mode = SCATTER_UPDATE;\n"
                f"    if (reduce != nullptr && std::strcmp(reduce, \"add\") == 0) {{\n"
                f"        td->mode = SCATTER_ADD;\n"
                f"    }} else if (reduce != nullptr && std::strcmp(reduce, \"multiply\") == 0) {{\n"
                f"        td->mode = SCATTER_MUL;\n"
                f"    }} else if (reduce != nullptr && std::strcmp(reduce, \"amin\") == 0) {{\n"
                f"        td->mode = SCATTER_MIN;\n"
                f"    }} else if (reduce != nullptr && std::strcmp(reduce, \"amax\") == 0) {{\n"
                f"        td->mode = SCATTER_MAX;\n"
                f"    }} else if (reduce != nullptr && reduce[0] != '\\0' && std::strcmp(reduce, \"update\") != 0 &&\n"
                f"               std::strcmp(reduce, \"none\") != 0 && std::strcmp(reduce, \"None\") != 0) {{\n"
                f"        return ge::GRAPH_FAILED;\n"
                f"    }}\n")
    else:
        mode = f"    td->mode = {int(plan.mode_rule[1])};\n"
    dn, iname, un, yn = (t.inputs[plan.data].name, t.inputs[plan.index].name, t.inputs[plan.updates].name,
                         t.outputs[0].name)
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@DT@", _macro_of(dn)), ("@IT@", _macro_of(iname)), ("@D@", _ident(dn)), ("@I@", _ident(iname)),
                     ("@U@", _ident(un)), ("@Y@", _ident(yn)),
                     ("@DI@", str(plan.data)), ("@II@", str(plan.index)), ("@UI@", str(plan.updates)),
                     ("@ARGS@", ", ".join(f"GM_ADDR {_ident(i.name)}" for i in t.inputs)),
                     ("@DIM@", dim), ("@MODE@", mode), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@SPLIT@", core_split(knobs, "td->lanes * td->lineLen", "td->lanes")), ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: scatter, y = @D@; then for every position p of @I@, in order along dim:
//   y[p with its coordinate along dim replaced by @I@[p]] (=, +=, *=, min=, max=) @U@[p].
// A lane (index positions that differ only along dim) writes only into its own line of y, so
// lanes are split over the cores; each runs along dim in order on the scalar unit.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MAX_DIMS = 8;
constexpr uint32_t SCATTER_UPDATE = 0;
constexpr uint32_t SCATTER_ADD = 1;
constexpr uint32_t SCATTER_MUL = 2;
constexpr uint32_t SCATTER_MIN = 3;
constexpr uint32_t SCATTER_MAX = 4;

struct @T@ {
    uint32_t mode;
    uint32_t laneDims;                  // index dims other than dim
    uint64_t laneShape[MAX_DIMS];
    int64_t laneIdxStride[MAX_DIMS];    // their strides in the index, the updates and y
    int64_t laneUpdStride[MAX_DIMS];
    int64_t laneYStride[MAX_DIMS];
    uint64_t lineLen;                   // M: index positions along dim
    int64_t idxStride;                  // strides along dim
    int64_t updStride;
    int64_t yStride;
    int64_t axisLen;                    // y's length along dim: an index outside [0, N) is skipped
    uint64_t lanes;
    uint64_t yNumel;
    uint64_t updNumel;
    uint64_t idxNumel;
    uint32_t copyTile;                  // elements per copy of data into y
    uint64_t formerNum;                 // cores taking formerUnits lanes; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint32_t blockDim;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @DT@;
using Index = @IT@;
// 8-byte data is copied as uint32 pairs; the rest as itself
using Unit = std::conditional<sizeof(Elem) == 8, uint32_t, Elem>::type;
// where y is combined: fp16 / bf16 in an fp32 copy in the workspace (narrowed once at the end, as
// torch accumulates them), every other type in y itself
using Acc = std::conditional<std::is_floating_point<Elem>::value || std::is_integral<Elem>::value, Elem, float>::type;

// A tile from one element type to another (only called where they differ).
template <typename D, typename S>
__aicore__ inline void CastTile(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, uint32_t n)
{
    if constexpr (!std::is_same<D, S>::value) {
        Cast(dst, src, mode, n);
    }
}

// y (=, +=, *=, min=, max=) v; 16-bit floats through fp32, rounded once, as torch's CPU kernel.
template <typename T>
__aicore__ inline T Combine(uint32_t mode, T y, T v)
{
    using W = typename std::conditional<std::is_floating_point<T>::value || std::is_integral<T>::value, T, float>::type;
    const W a = static_cast<W>(y);
    const W b = static_cast<W>(v);
    W r = b;
    if (mode == SCATTER_ADD) {
        r = a + b;
    } else if (mode == SCATTER_MUL) {
        r = a * b;
    } else if (mode == SCATTER_MIN) {
        r = b != b ? b : (b < a ? b : a);       // a NaN update wins, a NaN in y stays
    } else if (mode == SCATTER_MAX) {
        r = b != b ? b : (a < b ? b : a);
    }
    return static_cast<T>(r);
}

class @K@ {
    static constexpr uint32_t UNITS = sizeof(Elem) / sizeof(Unit);
    static constexpr bool WIDE = !std::is_same<Acc, Elem>::value;

public:
    __aicore__ inline void Init(GM_ADDR dataAddr, GM_ADDR idxAddr, GM_ADDR updAddr, GM_ADDR yAddr, GM_ADDR workspace,
                                const @T@& tiling)
    {
        td_ = tiling;
        dataGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(dataAddr), td_.yNumel * UNITS);
        dataElemGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(dataAddr), td_.yNumel);
        yUnitGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(yAddr), td_.yNumel * UNITS);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(yAddr), td_.yNumel);
        idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Index*>(idxAddr), td_.idxNumel);
        updGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(updAddr), td_.updNumel);
        accGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Acc*>(WIDE ? GetUserWorkspace(workspace) : yAddr), td_.yNumel);
@UNIT_RANGE@        pipe_.InitBuffer(copyBuf_, td_.copyTile * (sizeof(Elem) + sizeof(Acc)));
    }

    __aicore__ inline void Process()
    {
        if constexpr (WIDE) {
            CastShare(true);
        } else {
            CopyShare();
        }
        SyncAll();                                // the combined copy holds data before any lane writes
        for (uint64_t u = 0; u < unitCount_; ++u) {
            Lane(unitStart_ + u);
        }
        if constexpr (WIDE) {
            PipeBarrier<PIPE_ALL>();
            SyncAll();                            // every lane is done with the fp32 copy
            CastShare(false);
        }
    }

private:
    // This core's share of data copied into y through UB.
    __aicore__ inline void CopyShare()
    {
        const uint64_t total = td_.yNumel * UNITS;
        const uint64_t per = ((total + td_.blockDim - 1) / td_.blockDim + 7) / 8 * 8;
        const uint64_t first = per * static_cast<uint64_t>(GetBlockIdx());
        const uint64_t begin = first < total ? first : total;
        const uint64_t end = begin + per < total ? begin + per : total;
        const uint64_t tile = td_.copyTile * UNITS;
        LocalTensor<Unit> buf = copyBuf_.Get<Unit>();
        for (uint64_t at = begin; at < end; at += tile) {
            const uint32_t n = static_cast<uint32_t>(end - at < tile ? end - at : tile);
            SyncPipes<HardEvent::MTE3_MTE2>();
            DataCopyExtParams move(1, n * sizeof(Unit), 0, 0, 0);
            DataCopyPad(buf, dataGm_[at], move, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_MTE3>();
            DataCopyPad(yUnitGm_[at], buf, move);
        }
        PipeBarrier<PIPE_ALL>();
    }

    // fp16 / bf16: this core's share of data widened into the fp32 copy (`in`), or of the copy
    // narrowed into y.
    __aicore__ inline void CastShare(bool in)
    {
        const uint64_t total = td_.yNumel;
        const uint64_t per = ((total + td_.blockDim - 1) / td_.blockDim + 15) / 16 * 16;
        const uint64_t first = per * static_cast<uint64_t>(GetBlockIdx());
        const uint64_t begin = first < total ? first : total;
        const uint64_t end = begin + per < total ? begin + per : total;
        LocalTensor<Elem> narrow = copyBuf_.Get<Elem>();
        LocalTensor<Acc> wide = narrow[td_.copyTile].template ReinterpretCast<Acc>();
        for (uint64_t at = begin; at < end; at += td_.copyTile) {
            const uint32_t n = static_cast<uint32_t>(end - at < td_.copyTile ? end - at : td_.copyTile);
            SyncPipes<HardEvent::MTE3_MTE2>();
            if (in) {
                DataCopyPad(narrow, dataElemGm_[at], DataCopyExtParams(1, n * sizeof(Elem), 0, 0, 0),
                            DataCopyPadExtParams<Elem>(false, 0, 0, 0));
                SyncPipes<HardEvent::MTE2_V>();
                CastTile(wide, narrow, RoundMode::CAST_NONE, n);
                SyncPipes<HardEvent::V_MTE3>();
                DataCopyPad(accGm_[at], wide, DataCopyExtParams(1, n * sizeof(Acc), 0, 0, 0));
            } else {
                DataCopyPad(wide, accGm_[at], DataCopyExtParams(1, n * sizeof(Acc), 0, 0, 0),
                            DataCopyPadExtParams<Acc>(false, 0, 0, 0));
                SyncPipes<HardEvent::MTE2_V>();
                CastTile(narrow, wide, RoundMode::CAST_RINT, n);
                SyncPipes<HardEvent::V_MTE3>();
                DataCopyPad(yGm_[at], narrow, DataCopyExtParams(1, n * sizeof(Elem), 0, 0, 0));
            }
        }
        PipeBarrier<PIPE_ALL>();
    }

    // One lane: its index, update and y offsets, then every position along dim in order.
    __aicore__ inline void Lane(uint64_t lane)
    {
        int64_t idxOff = 0;
        int64_t updOff = 0;
        int64_t yOff = 0;
        for (int32_t d = static_cast<int32_t>(td_.laneDims) - 1; d >= 0; --d) {
            const uint64_t i = lane % td_.laneShape[d];
            lane /= td_.laneShape[d];
            idxOff += static_cast<int64_t>(i) * td_.laneIdxStride[d];
            updOff += static_cast<int64_t>(i) * td_.laneUpdStride[d];
            yOff += static_cast<int64_t>(i) * td_.laneYStride[d];
        }
        for (uint64_t j = 0; j < td_.lineLen; ++j) {
            const int64_t t = static_cast<int64_t>(idxGm_.GetValue(static_cast<uint64_t>(idxOff)));
            const Acc v = static_cast<Acc>(updGm_.GetValue(static_cast<uint64_t>(updOff)));
            idxOff += td_.idxStride;
            updOff += td_.updStride;
            if (t < 0 || t >= td_.axisLen) {
                continue;
            }
            const uint64_t at = static_cast<uint64_t>(yOff + t * td_.yStride);
            accGm_.SetValue(at, td_.mode == SCATTER_UPDATE ? v : Combine(td_.mode, accGm_.GetValue(at), v));
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> copyBuf_;
    GlobalTensor<Unit> dataGm_;
    GlobalTensor<Elem> dataElemGm_;
    GlobalTensor<Unit> yUnitGm_;
    GlobalTensor<Elem> yGm_;
    GlobalTensor<Index> idxGm_;
    GlobalTensor<Elem> updGm_;
    GlobalTensor<Acc> accGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@D@, @I@, @U@, @Y@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@MODE@    const gert::Shape& yShape = context->GetInputShape(@DI@)->GetStorageShape();
    const gert::Shape& iShape = context->GetInputShape(@II@)->GetStorageShape();
    const gert::Shape& uShape = context->GetInputShape(@UI@)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(yShape.GetDimNum());
    const ge::DataType it = context->GetInputDesc(@II@)->GetDataType();
    if (rank < 1 || rank > static_cast<int32_t>(MAX_DIMS) || static_cast<int32_t>(iShape.GetDimNum()) != rank ||
        static_cast<int32_t>(uShape.GetDimNum()) != rank || (it != ge::DT_INT32 && it != ge::DT_INT64)) {
        return ge::GRAPH_FAILED;
    }
    int64_t dim = @DIM@;
    dim = dim < 0 ? dim + rank : dim;
    if (dim < 0 || dim >= rank) {
        return ge::GRAPH_FAILED;
    }
    int64_t ys[MAX_DIMS];
    int64_t is[MAX_DIMS];
    int64_t us[MAX_DIMS];
    int64_t yn = 1;
    int64_t in = 1;
    int64_t un = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
        ys[d] = yn;
        is[d] = in;
        us[d] = un;
        yn *= yShape.GetDim(d);
        in *= iShape.GetDim(d);
        un *= uShape.GetDim(d);
        if (iShape.GetDim(d) > uShape.GetDim(d) || (d != dim && iShape.GetDim(d) > yShape.GetDim(d))) {
            return ge::GRAPH_FAILED;   // torch: index dims fit inside the updates', and y's off dim
        }
    }
    td->yNumel = static_cast<uint64_t>(yn);
    td->idxNumel = static_cast<uint64_t>(in);
    td->updNumel = static_cast<uint64_t>(un);
    td->lineLen = static_cast<uint64_t>(iShape.GetDim(dim));
    td->idxStride = is[dim];
    td->updStride = us[dim];
    td->yStride = ys[dim];
    td->axisLen = yShape.GetDim(dim);
    td->lanes = 1;
    uint32_t ld = 0;
    for (int32_t d = 0; d < rank; ++d) {
        if (d == dim || iShape.GetDim(d) == 1) {
            continue;
        }
        td->laneShape[ld] = static_cast<uint64_t>(iShape.GetDim(d));
        td->laneIdxStride[ld] = is[d];
        td->laneUpdStride[ld] = us[d];
        td->laneYStride[ld] = ys[d];
        td->lanes *= td->laneShape[ld];
        ++ld;
    }
    td->laneDims = ld;

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t eb = DtypeBytes(context->GetInputDesc(@DI@)->GetDataType());
    td->copyTile = static_cast<uint32_t>((ubSize - reserve) / 2 / (eb + 4) / 64 * 64);
    if (td->lanes == 0 || td->lineLen == 0) {
        td->lanes = 1;      // nothing to scatter: one core copies data into y
        td->lineLen = 0;
    }
@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    const ge::DataType dt = context->GetInputDesc(@DI@)->GetDataType();
    const bool wide = dt == ge::DT_FLOAT16 || dt == ge::DT_BF16;      // combined in an fp32 copy
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize() + (wide ? td->yNumel * sizeof(float) : 0);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
