"""Segment sums: `zeros((num_segments,) + data.shape[1:]).index_add_(0, segment_ids, data)`
(unsorted_segment_sum) lowers to a kernel of its own:

    y[s] = sum of data[j] over the rows j with segment_ids[j] == s (0 for an empty segment)

Rows of data are split over the cores; every core adds its rows into the output by atomic adds
in GM, so the output is first zeroed (each core its share, then SyncAll). fp16/bf16 data
accumulate in fp32 in the workspace (as the golden does) and a last pass narrows them into y;
fp32 and int32 accumulate in y itself. Two modes:
- MODE_TABLE (every segment fits in UB): each core sums its rows into a private table of all
  segments (a vector Add per row, or scalar adds for one-element rows) and adds the table to GM
  in one atomic copy;
- MODE_ROWS: each row (or chunk of a long row) goes to GM by its own atomic copy.
Segment ids are read by the scalar unit; an id outside [0, num_segments) drops its row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASS = {"clone", "contiguous", "alias", "detach", "_to_copy", "view", "reshape", "_unsafe_view"}


@dataclass
class SegmentSumPlan:
    task: object
    pattern: str                      # "segment_sum"
    data: int
    ids: int
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _source(v):
    from copilot.lowering.indexing import source_of

    return source_of(v, _PASS)


def _segment_sum_of(gm):
    """(data position, ids position) when the graph adds data rows into zeros by index along dim 0."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    adds = [n for n in calls if _name(n) in ("index_add_", "index_add")]
    if len(adds) != 1 or len(adds[0].args) < 4 or adds[0].args[1] != 0 or adds[0].kwargs.get("alpha", 1) != 1:
        return None
    add = adds[0]
    base = _source(add.args[0])
    if not (hasattr(base, "op") and base.op == "call_function" and _name(base) in ("zeros", "zeros_like", "new_zeros")):
        return None
    ids, data = _source(add.args[2]), _source(add.args[3])
    if ids not in places or data not in places or ids is data:
        return None
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    if _source(out) is not add:
        return None
    if any(c not in (add, base) and _name(c) not in _PASS for c in calls):
        return None
    return places.index(data), places.index(ids)


def plan_segment_sum(task):
    """The segment-sum plan of `task`, or None when its golden is not one index_add_ into zeros."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 2 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        first = _segment_sum_of(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    for case in task.cases[1:]:
        if _segment_sum_of(trace(task, case)) != first:
            raise Unsupported(f"{task.name}: case {case.id} is not the segment sum the other cases are")
    plan = SegmentSumPlan(task, "segment_sum", *first)
    for c in task.cases:
        if c.dtypes[plan.data] not in ("float16", "bfloat16", "float32", "int32"):
            plan.unserved[c.id] = (f"data dtype {c.dtypes[plan.data]}: the atomic adds of GM take fp32 / int32 "
                                   "(no int64 accumulation)")
        elif c.dtypes[plan.ids] not in ("int32", "int64"):
            plan.unserved[c.id] = f"segment id dtype {c.dtypes[plan.ids]}"
    return plan


def render(plan: SegmentSumPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    dn, iname, yn = t.inputs[plan.data].name, t.inputs[plan.ids].name, t.outputs[0].name
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@DT@", _macro_of(dn)), ("@IT@", _macro_of(iname)), ("@D@", _ident(dn)), ("@I@", _ident(iname)),
                     ("@Y@", _ident(yn)), ("@DI@", str(plan.data)), ("@II@", str(plan.ids)),
                     ("@ARGS@", ", ".join(f"GM_ADDR {_ident(i.name)}" for i in t.inputs)),
                     ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@BUFNUM@", str(int(knobs["buffer_num"]))),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@SPLIT@", core_split(knobs, "td->rows * td->cols", "td->units")), ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: segment sum, y[s] = sum of @D@[j] over the rows j with @I@[j] == s (rows along dim 0).
// The cores add their rows into GM with atomic adds: fp16 / bf16 accumulate in fp32 in the
// workspace and are narrowed into y at the end; fp32 and int32 accumulate in y.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MODE_TABLE = 0;    // every segment fits in UB: a private table per core, one atomic copy
constexpr uint32_t MODE_ROWS = 1;     // each row (chunk) added to GM by its own atomic copy

struct @T@ {
    uint32_t mode;
    uint32_t bufferNum;
    uint32_t tileRows;                  // data rows per tile
    uint32_t chunk;                     // elements of a row per tile
    uint32_t pitch;                     // UB pitch of a tile row (elements; 1: one-element rows, packed)
    uint32_t tablePitch;                // UB pitch of a table row
    uint32_t chunks;                    // chunks per row
    uint64_t rows;                      // data rows (ids)
    uint64_t cols;                      // elements per row (data.shape[1:])
    uint64_t segments;                  // y rows
    uint64_t units;                     // (row tile, chunk) pieces
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint32_t blockDim;
    uint32_t zeroTile;                  // elements zeroed / narrowed per copy
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Data = @DT@;
using SegmentId = @IT@;
// the accumulation type: fp32 for float data (in the workspace for fp16 / bf16), int32 for int32
using Acc = std::conditional<std::is_same<Data, int32_t>::value, int32_t, float>::type;

template <typename T>
__aicore__ inline void Widen(const LocalTensor<Acc>& dst, const LocalTensor<T>& src, uint32_t n)
{
    if constexpr (std::is_same<T, Acc>::value) {
        Adds(dst, src, static_cast<Acc>(0), n);
    } else {
        Cast(dst, src, RoundMode::CAST_NONE, n);
    }
}

template <typename T>
__aicore__ inline void Narrow(const LocalTensor<T>& dst, const LocalTensor<Acc>& src, uint32_t n)
{
    if constexpr (std::is_same<T, Acc>::value) {
        Adds(dst, src, static_cast<Acc>(0), n);
    } else {
        Cast(dst, src, RoundMode::CAST_RINT, n);
    }
}

class @K@ {
    static constexpr bool NARROW = !std::is_same<Data, Acc>::value;   // fp16 / bf16: sums in the workspace

public:
    __aicore__ inline void Init(GM_ADDR dataAddr, GM_ADDR idsAddr, GM_ADDR yAddr, GM_ADDR workspace, const @T@& tiling)
    {
        td_ = tiling;
        dataGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Data*>(dataAddr), td_.rows * td_.cols);
        idsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ SegmentId*>(idsAddr), td_.rows);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Data*>(yAddr), td_.segments * td_.cols);
        GM_ADDR accAddr = NARROW ? GetUserWorkspace(workspace) : yAddr;
        accGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Acc*>(accAddr), td_.segments * td_.cols);
@UNIT_RANGE@        const uint32_t tileElems = (td_.tileRows * td_.pitch + 63) / 64 * 64;
        pipe_.InitBuffer(dataQue_, td_.bufferNum, tileElems * sizeof(Data));
        pipe_.InitBuffer(accBuf_, tileElems * sizeof(Acc));
        pipe_.InitBuffer(idsBuf_, (td_.tileRows * sizeof(SegmentId) + 31) / 32 * 32);
        pipe_.InitBuffer(zeroBuf_, td_.zeroTile * (sizeof(Acc) + sizeof(Data)));
        if (td_.mode == MODE_TABLE) {
            pipe_.InitBuffer(tableBuf_, (td_.segments * td_.tablePitch * sizeof(Acc) + 31) / 32 * 32);
        }
    }

    __aicore__ inline void Process()
    {
        ZeroShare();
        SyncAll();                                // every core's share is zero before any add
        if (td_.mode == MODE_TABLE) {
            table_ = tableBuf_.Get<Acc>();
            Duplicate(table_, static_cast<Acc>(0), td_.segments * td_.tablePitch);
        }
        for (uint64_t u = 0; u < unitCount_; ++u) {
            AddTile(unitStart_ + u);
        }
        if (td_.mode == MODE_TABLE) {
            FlushTable();
        }
        if constexpr (NARROW) {
            PipeBarrier<PIPE_ALL>();
            SyncAll();                            // every core's adds are in the workspace
            NarrowShare();
        }
    }

private:
    // This core's share of the accumulator's elements: [begin, end).
    __aicore__ inline void Share(uint64_t& begin, uint64_t& end) const
    {
        const uint64_t total = td_.segments * td_.cols;
        const uint64_t per = (total + td_.blockDim - 1) / td_.blockDim;
        begin = per * static_cast<uint64_t>(GetBlockIdx());
        begin = begin > total ? total : begin;
        end = begin + per > total ? total : begin + per;
    }

    __aicore__ inline void ZeroShare()
    {
        uint64_t begin = 0;
        uint64_t end = 0;
        Share(begin, end);
        LocalTensor<Acc> zero = zeroBuf_.Get<Acc>();
        Duplicate(zero, static_cast<Acc>(0), td_.zeroTile);
        SyncPipes<HardEvent::V_MTE3>();
        for (uint64_t at = begin; at < end; at += td_.zeroTile) {
            const uint32_t n = static_cast<uint32_t>(end - at < td_.zeroTile ? end - at : td_.zeroTile);
            DataCopyExtParams out(1, n * sizeof(Acc), 0, 0, 0);
            DataCopyPad(accGm_[at], zero, out);
        }
        PipeBarrier<PIPE_ALL>();
    }

    // fp16 / bf16: this core's share of the fp32 sums narrowed into y.
    __aicore__ inline void NarrowShare()
    {
        uint64_t begin = 0;
        uint64_t end = 0;
        Share(begin, end);
        LocalTensor<Acc> acc = zeroBuf_.Get<Acc>();
        LocalTensor<Data> y = acc[td_.zeroTile].template ReinterpretCast<Data>();
        for (uint64_t at = begin; at < end; at += td_.zeroTile) {
            const uint32_t n = static_cast<uint32_t>(end - at < td_.zeroTile ? end - at : td_.zeroTile);
            SyncPipes<HardEvent::MTE3_MTE2>();
            DataCopyExtParams in(1, n * sizeof(Acc), 0, 0, 0);
            DataCopyPad(acc, accGm_[at], in, DataCopyPadExtParams<Acc>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            Narrow(y, acc, n);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyExtParams out(1, n * sizeof(Data), 0, 0, 0);
            DataCopyPad(yGm_[at], y, out);
        }
    }

    // One unit: `tileRows` rows from j0, the chunk of their elements from c0.
    __aicore__ inline void AddTile(uint64_t unit)
    {
        const uint64_t j0 = (unit / td_.chunks) * td_.tileRows;
        const uint64_t c0 = (unit % td_.chunks) * td_.chunk;
        const uint32_t nr = static_cast<uint32_t>(td_.rows - j0 < td_.tileRows ? td_.rows - j0 : td_.tileRows);
        const uint32_t len = static_cast<uint32_t>(td_.cols - c0 < td_.chunk ? td_.cols - c0 : td_.chunk);
        LocalTensor<SegmentId> ids = idsBuf_.Get<SegmentId>();
        SyncPipes<HardEvent::S_MTE2>();           // the previous tile's id reads are done
        DataCopyExtParams idIn(1, nr * sizeof(SegmentId), 0, 0, 0);
        DataCopyPad(ids, idsGm_[j0], idIn, DataCopyPadExtParams<SegmentId>(false, 0, 0, 0));
        LocalTensor<Data> tile = dataQue_.AllocTensor<Data>();
        const uint32_t bytes = len * sizeof(Data);
        if (td_.pitch == 1) {                     // one-element rows: one burst of nr elements
            DataCopyExtParams in(1, nr * sizeof(Data), 0, 0, 0);
            DataCopyPad(tile, dataGm_[j0], in, DataCopyPadExtParams<Data>(false, 0, 0, 0));
        } else {
            DataCopyExtParams in(static_cast<uint16_t>(nr), bytes,
                                 nr > 1 ? static_cast<uint32_t>((td_.cols - len) * sizeof(Data)) : 0,
                                 (td_.pitch * sizeof(Data) - (bytes + 31) / 32 * 32) / 32, 0);
            DataCopyPad(tile, dataGm_[j0 * td_.cols + c0], in, DataCopyPadExtParams<Data>(false, 0, 0, 0));
        }
        dataQue_.EnQue(tile);
        tile = dataQue_.DeQue<Data>();
        LocalTensor<Acc> acc = accBuf_.Get<Acc>();
        SyncPipes<HardEvent::MTE3_V>();           // the previous tile's atomic copies are done with acc
        Widen(acc, tile, nr * td_.pitch);
        dataQue_.FreeTensor(tile);
        SyncPipes<HardEvent::MTE2_S>();
        SyncPipes<HardEvent::V_S>();
        const int64_t segments = static_cast<int64_t>(td_.segments);
        if (td_.pitch == 1) {
            // one-element rows: scalar adds into the table
            for (uint32_t r = 0; r < nr; ++r) {
                const int64_t s = static_cast<int64_t>(ids.GetValue(r));
                if (s >= 0 && s < segments) {
                    const uint32_t at = static_cast<uint32_t>(s);
                    table_.SetValue(at, table_.GetValue(at) + acc.GetValue(r));
                }
            }
            SyncPipes<HardEvent::S_V>();
        } else if (td_.mode == MODE_TABLE) {
            for (uint32_t r = 0; r < nr; ++r) {
                const int64_t s = static_cast<int64_t>(ids.GetValue(r));
                if (s >= 0 && s < segments) {
                    LocalTensor<Acc> row = table_[static_cast<uint32_t>(s) * td_.pitch];
                    Add(row, row, acc[r * td_.pitch], len);
                }
            }
        } else {
            SyncPipes<HardEvent::V_MTE3>();
            SetAtomicAdd<Acc>();
            for (uint32_t r = 0; r < nr; ++r) {
                const int64_t s = static_cast<int64_t>(ids.GetValue(r));
                if (s >= 0 && s < segments) {
                    DataCopyExtParams out(1, len * sizeof(Acc), 0, 0, 0);
                    DataCopyPad(accGm_[static_cast<uint64_t>(s) * td_.cols + c0], acc[r * td_.pitch], out);
                }
            }
            SetAtomicNone();
        }
    }

    // MODE_TABLE: the core's table added to GM in one atomic copy.
    __aicore__ inline void FlushTable()
    {
        SyncPipes<HardEvent::V_MTE3>();
        SyncPipes<HardEvent::S_MTE3>();
        SetAtomicAdd<Acc>();
        const uint32_t bytes = static_cast<uint32_t>(td_.cols * sizeof(Acc));
        if (td_.tablePitch == 1) {
            DataCopyExtParams out(1, static_cast<uint32_t>(td_.segments * sizeof(Acc)), 0, 0, 0);
            DataCopyPad(accGm_, table_, out);
            SetAtomicNone();
            return;
        }
        for (uint64_t s0 = 0; s0 < td_.segments; s0 += 4095) {
            const uint32_t n = static_cast<uint32_t>(td_.segments - s0 < 4095 ? td_.segments - s0 : 4095);
            DataCopyExtParams out(static_cast<uint16_t>(n), bytes, (td_.pitch * sizeof(Acc) - (bytes + 31) / 32 * 32) / 32,
                                  0, 0);
            DataCopyPad(accGm_[s0 * td_.cols], table_[static_cast<uint32_t>(s0) * td_.pitch], out);
        }
        SetAtomicNone();
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> dataQue_;
    TBuf<QuePosition::VECCALC> accBuf_;
    TBuf<QuePosition::VECCALC> idsBuf_;
    TBuf<QuePosition::VECCALC> zeroBuf_;
    TBuf<QuePosition::VECCALC> tableBuf_;
    LocalTensor<Acc> table_;
    GlobalTensor<Data> dataGm_;
    GlobalTensor<SegmentId> idsGm_;
    GlobalTensor<Data> yGm_;
    GlobalTensor<Acc> accGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@D@, @I@, @Y@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::Shape& dShape = context->GetInputShape(@DI@)->GetStorageShape();
    const gert::Shape& yShape = context->GetOutputShape(0)->GetStorageShape();
    const ge::DataType dt = context->GetInputDesc(@DI@)->GetDataType();
    const ge::DataType it = context->GetInputDesc(@II@)->GetDataType();
    if (dShape.GetDimNum() < 1 || yShape.GetDimNum() != dShape.GetDimNum() ||
        (dt != ge::DT_FLOAT && dt != ge::DT_FLOAT16 && dt != ge::DT_BF16 && dt != ge::DT_INT32) ||
        (it != ge::DT_INT32 && it != ge::DT_INT64)) {
        return ge::GRAPH_FAILED;   // fp32 / int32 accumulation by atomic adds; int32 / int64 ids
    }
    td->rows = static_cast<uint64_t>(dShape.GetDim(0));
    td->segments = static_cast<uint64_t>(yShape.GetDim(0));
    td->cols = 1;
    for (size_t d = 1; d < dShape.GetDimNum(); ++d) {
        td->cols *= static_cast<uint64_t>(dShape.GetDim(d));
    }
    if (static_cast<uint64_t>(context->GetInputShape(@II@)->GetStorageShape().GetShapeSize()) != td->rows ||
        td->segments == 0 || td->cols == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t eb = DtypeBytes(dt);
    const uint64_t ib = DtypeBytes(it);

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 16384) {
        return ge::GRAPH_FAILED;
    }
    td->zeroTile = 2048;
    const uint64_t budget = ubSize - reserve - td->zeroTile * (4 + eb) - 1024;
    auto up = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
    const uint64_t perElem = td->bufferNum * eb + 4;               // queued data + its accumulation copy
    // a row chunk: the whole row when a few rows fit, else as long as a tile of 8 rows allows
    uint64_t chunk = td->cols;
    while (chunk > 64 && 8 * up(chunk, 16) * perElem > budget / 2) {
        chunk = (chunk + 1) / 2;
    }
    td->chunk = static_cast<uint32_t>(chunk);
    td->chunks = static_cast<uint32_t>((td->cols + chunk - 1) / chunk);
    td->pitch = td->cols == 1 ? 1 : static_cast<uint32_t>(up(chunk, 16));
    td->tablePitch = td->pitch;
    // the table of every segment, when it fits in half the UB and rows are whole
    const uint64_t table = up(td->segments * td->tablePitch * 4, 32);
    td->mode = td->chunks == 1 && table <= budget / 2 ? MODE_TABLE : MODE_ROWS;
    if (td->cols == 1 && td->mode != MODE_TABLE) {
        return ge::GRAPH_FAILED;   // one-element rows add through the table only
    }
    const uint64_t left = budget - (td->mode == MODE_TABLE ? table : 0);
    uint64_t rows = left / (td->pitch * perElem + ib);
    rows = rows > (td->pitch == 1 ? 16384 : 4095) ? (td->pitch == 1 ? 16384 : 4095) : (rows == 0 ? 1 : rows);
    rows = td->pitch == 1 ? up(rows, 64) : rows;
    const uint64_t perCore = (td->rows + coreNum - 1) / coreNum;
    rows = rows > perCore ? perCore : rows;
    td->tileRows = static_cast<uint32_t>(rows);
    td->units = ((td->rows + rows - 1) / rows) * td->chunks;

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize() + (eb == 4 ? 0 : td->segments * td->cols * sizeof(float));
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
