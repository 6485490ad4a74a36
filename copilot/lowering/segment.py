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

int64 data has no GM atomic add, so its kernel (emitted only when a case has int64 data) splits
the columns instead: each core owns whole columns of y (a chunk of data.shape[1:] in every row)
and adds every data row's chunk into them itself, so no element of y is written by two cores and
the sums are exact (wrapping as torch's). MODE_OWNED_TABLE keeps every segment's chunk in UB and
writes it out once (on arch 2201 as 16-bit limbs, two int32 Adds a row); MODE_OWNED_ROWS zeroes
the segments no row names, and per tile of rows (deduplicated by a stamp per segment) reads its
segments' rows of y once an earlier tile led them, adds, writes them back. MODE_SPLIT_TABLE (narrow
rows, where column chunks would keep most cores idle) splits the rows instead: a table of whole
rows per core, the tables added up after SyncAll. Arch 3510 adds int64 lanes on the vector unit;
arch 2201 adds their int32 words and carries the low word's overflow into the high word by one
Gather (`AddInt64`).
"""

from __future__ import annotations

import textwrap
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

    @property
    def wide(self) -> bool:
        """Whether a served case has int64 data (the owned-columns kernel is emitted)."""
        return any(c.dtypes[self.data] == "int64" and c.id not in self.unserved for c in self.task.cases)


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
        if c.dtypes[plan.data] not in ("float16", "bfloat16", "float32", "int32", "int64"):
            plan.unserved[c.id] = f"data dtype {c.dtypes[plan.data]}"
        elif c.dtypes[plan.ids] not in ("int32", "int64"):
            plan.unserved[c.id] = f"segment id dtype {c.dtypes[plan.ids]}"
    if plan.wide:
        plan.notes.append("int64 data: each core owns column chunks of y and adds into them itself "
                          "(GM has no int64 atomic add)")
    return plan


def render(plan: SegmentSumPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    dn, iname, yn = t.inputs[plan.data].name, t.inputs[plan.ids].name, t.outputs[0].name
    wide = plan.wide
    split = core_split(knobs, "td->rows * td->cols", "td->units")
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD)
    for key, val in (("@WIDE_DOC@", _WIDE_DOC if wide else ""), ("@WIDE_FIELDS@", _WIDE_FIELDS if wide else ""),
                     ("@WIDE_KERNEL@", _WIDE_KERNEL if wide else ""), ("@ENTRY@", _WIDE_ENTRY if wide else _ENTRY),
                     ("@WIDE_DTYPE@", " && dt != ge::DT_INT64" if wide else ""),
                     ("@WIDE_TILING@", _WIDE_TILING.replace("@SPLIT@", textwrap.indent(split, "    ")) if wide else ""),
                     ("@UNIT_RANGE@", UNIT_RANGE)):
        text = text.replace(key, val)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@DT@", _macro_of(dn)), ("@IT@", _macro_of(iname)), ("@D@", _ident(dn)), ("@I@", _ident(iname)),
                     ("@Y@", _ident(yn)), ("@DI@", str(plan.data)), ("@II@", str(plan.ids)),
                     ("@ARGS@", ", ".join(f"GM_ADDR {_ident(i.name)}" for i in t.inputs)),
                     ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@BUFNUM@", str(int(knobs["buffer_num"]))),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@SPLIT@", split), ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: segment sum, y[s] = sum of @D@[j] over the rows j with @I@[j] == s (rows along dim 0).
// The cores add their rows into GM with atomic adds: fp16 / bf16 accumulate in fp32 in the
// workspace and are narrowed into y at the end; fp32 and int32 accumulate in y.@WIDE_DOC@
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
    uint32_t zeroTile;                  // elements zeroed / narrowed per copy@WIDE_FIELDS@
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

// Rows [j0, j0 + nr) of `gm` (rows of `cols` elements), their chunk [c0, c0 + len), into `tile`
// rows `pitch` apart; one-element rows (pitch 1) as one burst of nr elements.
template <typename T>
__aicore__ inline void LoadRowChunk(const LocalTensor<T>& tile, const GlobalTensor<T>& gm, uint64_t j0, uint32_t nr,
                                    uint64_t c0, uint32_t len, uint64_t cols, uint32_t pitch)
{
    const uint32_t bytes = len * sizeof(T);
    if (pitch == 1) {
        DataCopyExtParams in(1, nr * sizeof(T), 0, 0, 0);
        DataCopyPad(tile, gm[j0], in, DataCopyPadExtParams<T>(false, 0, 0, 0));
    } else {
        DataCopyExtParams in(static_cast<uint16_t>(nr), bytes, nr > 1 ? static_cast<uint32_t>((cols - len) * sizeof(T)) : 0,
                             (pitch * sizeof(T) - (bytes + 31) / 32 * 32) / 32, 0);
        DataCopyPad(tile, gm[j0 * cols + c0], in, DataCopyPadExtParams<T>(false, 0, 0, 0));
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
        LoadRowChunk(tile, dataGm_, j0, nr, c0, len, td_.cols, td_.pitch);
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

@WIDE_KERNEL@extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
@ENTRY@}
"""

_ENTRY = """    @K@ op;
    op.Init(@D@, @I@, @Y@, workspace, tilingData);
    op.Process();
"""

_TILING = r"""@TILING_HEAD@    const gert::Shape& dShape = context->GetInputShape(@DI@)->GetStorageShape();
    const gert::Shape& yShape = context->GetOutputShape(0)->GetStorageShape();
    const ge::DataType dt = context->GetInputDesc(@DI@)->GetDataType();
    const ge::DataType it = context->GetInputDesc(@II@)->GetDataType();
    if (dShape.GetDimNum() < 1 || yShape.GetDimNum() != dShape.GetDimNum() ||
        (dt != ge::DT_FLOAT && dt != ge::DT_FLOAT16 && dt != ge::DT_BF16 && dt != ge::DT_INT32@WIDE_DTYPE@) ||
        (it != ge::DT_INT32 && it != ge::DT_INT64)) {
        return ge::GRAPH_FAILED;
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
@WIDE_TILING@    const uint64_t perElem = td->bufferNum * eb + 4;               // queued data + its accumulation copy
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
    workspace[0] = platform.GetLibApiWorkSpaceSize() + (eb == 2 ? td->segments * td->cols * sizeof(float) : 0);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""

# ---------------------------------------------------------------- int64 data: owned columns
_WIDE_DOC = r"""
// int64 data (no int64 atomic add in GM): each core owns whole columns of y and adds into them
// itself, so no element of y is written by two cores and every sum is exact."""

_WIDE_FIELDS = r"""
    uint32_t zeroRows;                  // int64, MODE_OWNED_ROWS: rows of the zero tile (rows a zeroing copy)"""

_WIDE_ENTRY = r"""    if constexpr (std::is_same<Data, int64_t>::value) {
        @K@Int64 op;
        op.Init(@D@, @I@, @Y@, workspace, tilingData);
        op.Process();
    } else {
        @K@ op;
        op.Init(@D@, @I@, @Y@, workspace, tilingData);
        op.Process();
    }
"""

_WIDE_KERNEL = r"""// int64 data. A unit is a chunk of columns (`chunk` elements of every row of data and y), owned by
// one core: every data row's chunk is added into its segment's chunk by that core alone.
constexpr uint32_t MODE_OWNED_TABLE = 2;   // every segment's chunk fits in UB: summed there, written out once
constexpr uint32_t MODE_OWNED_ROWS = 3;    // per tile, its segments' rows of y read (once led), added to, written back
constexpr uint32_t MODE_SPLIT_TABLE = 4;   // narrow rows: the rows split over the cores, their tables added up
#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
constexpr uint32_t LIMB_WORDS = 2048;      // int32 words a step of AddInt64 and of the limb passes (1024 int64 lanes)
#endif

class @K@Int64 {
public:
    __aicore__ inline void Init(GM_ADDR dataAddr, GM_ADDR idsAddr, GM_ADDR yAddr, GM_ADDR workspace, const @T@& tiling)
    {
        td_ = tiling;
        dataGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(dataAddr), td_.rows * td_.cols);
        idsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ SegmentId*>(idsAddr), td_.rows);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(yAddr), td_.segments * td_.cols);
@UNIT_RANGE@        pipe_.InitBuffer(idsBuf_, (td_.tileRows * sizeof(SegmentId) + 31) / 32 * 32);
        pipe_.InitBuffer(dataBuf_, (td_.tileRows * td_.pitch * sizeof(int64_t) + 31) / 32 * 32);
        if (td_.mode == MODE_OWNED_TABLE || td_.mode == MODE_SPLIT_TABLE) {
            pipe_.InitBuffer(tableBuf_, (td_.segments * td_.pitch * sizeof(int64_t) * (Limbs() ? 2 : 1) + 31) / 32 * 32);
        }
        if (td_.mode == MODE_SPLIT_TABLE) {       // every core's table (laid out as y), 32 B apart, in the workspace
            pipe_.InitBuffer(sumBuf_, td_.tileRows * td_.pitch * sizeof(int64_t));
            partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(GetUserWorkspace(workspace)),
                                       td_.blockDim * PartialStride());
        }
        if (Limbs()) {
            pipe_.InitBuffer(highBuf_, td_.tileRows * td_.pitch * sizeof(int64_t));
        }
        if (td_.mode == MODE_OWNED_ROWS && td_.tileRows > 1) {
            pipe_.InitBuffer(sumBuf_, td_.tileRows * td_.pitch * sizeof(int64_t));
            pipe_.InitBuffer(leadBuf_, (2 * td_.tileRows * sizeof(int32_t) + 31) / 32 * 32);   // lead, load
            pipe_.InitBuffer(stampBuf_, (td_.segments * sizeof(int32_t) + 31) / 32 * 32);
        } else if (td_.mode == MODE_OWNED_ROWS) {
            pipe_.InitBuffer(sumBuf_, td_.pitch * sizeof(int64_t));
        }
        if (td_.mode == MODE_OWNED_ROWS) {
            pipe_.InitBuffer(zeroBuf_, td_.zeroRows * td_.pitch * sizeof(int64_t));
            Duplicate(zeroBuf_.Get<int32_t>(), 0, static_cast<int32_t>(2 * td_.zeroRows * td_.pitch));
            SyncPipes<HardEvent::V_MTE3>();
            const uint64_t tiles = (td_.rows + td_.tileRows - 1) / td_.tileRows;
            zeroPerTile_ = (td_.segments + tiles - 1) / tiles;
        }
#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
        // the carries (and a zero word after them), the spare words, the Gather's byte offsets
        pipe_.InitBuffer(limbBuf_, (3 * LIMB_WORDS + 8) * sizeof(uint32_t));
        LocalTensor<int32_t> offset = limbBuf_.Get<int32_t>()[2 * LIMB_WORDS + 8];
        CreateVecIndex(offset, 0, LIMB_WORDS);
        ShiftRight(offset.ReinterpretCast<uint32_t>(), offset.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(1), LIMB_WORDS);
        Muls(offset, offset, 8, LIMB_WORDS);               // word 2i + 1 (a high word) reads word 2i, 8i bytes in
        uint64_t even[2] = {0x5555555555555555ULL, 0};
        Duplicate(offset, static_cast<int32_t>(LIMB_WORDS * sizeof(uint32_t)), even, LIMB_WORDS / 64, 1, 8);   // low words read the zero
        Duplicate(limbBuf_.Get<int32_t>()[LIMB_WORDS], 0, 8);
#endif
    }

    __aicore__ inline void Process()
    {
        if (td_.mode == MODE_SPLIT_TABLE) {
            SplitRows();
            return;
        }
        for (uint64_t u = 0; u < unitCount_; ++u) {
            Chunk(unitStart_ + u);
        }
    }

private:
    // MODE_SPLIT_TABLE: this core's rows (whole) summed into a table of its own, every core's
    // table to the workspace, SyncAll, then this core's share of y's elements added up over the
    // tables (AddInt64).
    __aicore__ inline void SplitRows()
    {
        LocalTensor<int64_t> table = tableBuf_.Get<int64_t>();
        Duplicate(table.ReinterpretCast<int32_t>(), 0, static_cast<int32_t>(2 * td_.segments * td_.pitch * (Limbs() ? 2 : 1)));
        SyncPipes<HardEvent::V_S>();
        addsSinceCarry_ = 0;
        const uint32_t len = static_cast<uint32_t>(td_.cols);
        for (uint64_t u = 0; u < unitCount_; ++u) {
            const uint64_t j0 = (unitStart_ + u) * td_.tileRows;
            const uint32_t nr = static_cast<uint32_t>(td_.rows - j0 < td_.tileRows ? td_.rows - j0 : td_.tileRows);
            LoadTile(j0, nr, 0, len);
            AddIntoTable(nr, len);
        }
        GlobalTensor<int64_t> mine = partialGm_[static_cast<uint64_t>(GetBlockIdx()) * PartialStride()];
        if (td_.pitch == 1) {
            SyncPipes<HardEvent::S_MTE3>();
            DataCopyExtParams out(1, static_cast<uint32_t>(td_.segments * sizeof(int64_t)), 0, 0, 0);
            DataCopyPad(mine, table, out);
        } else {
            WriteTable(mine, 0, len);
        }
        PipeBarrier<PIPE_ALL>();
        SyncAll();                                // every core's table is in the workspace
        const uint64_t total = td_.segments * td_.cols;
        const uint64_t per = ((total + td_.blockDim - 1) / td_.blockDim + 3) / 4 * 4;
        const uint32_t block = td_.tileRows * td_.pitch;
        uint64_t begin = per * static_cast<uint64_t>(GetBlockIdx());
        begin = begin > total ? total : begin;
        const uint64_t end = begin + per > total ? total : begin + per;
        LocalTensor<int64_t> sum = sumBuf_.Get<int64_t>();
        LocalTensor<int64_t> part = dataBuf_.Get<int64_t>();
        for (uint64_t at = begin; at < end; at += block) {
            const uint32_t n = static_cast<uint32_t>(end - at < block ? end - at : block);
            DataCopyExtParams in(1, n * sizeof(int64_t), 0, 0, 0);
            SyncPipes<HardEvent::MTE3_MTE2>();    // the previous block's sums are out
            DataCopyPad(sum, partialGm_[at], in, DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
            for (uint32_t b = 1; b < td_.blockDim; ++b) {
                SyncPipes<HardEvent::V_MTE2>();   // the previous table's block is added
                DataCopyPad(part, partialGm_[b * PartialStride() + at], in, DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
                SyncPipes<HardEvent::MTE2_V>();
                AddInt64(sum, part, n);
            }
            SyncPipes<HardEvent::MTE2_V>();
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyPad(yGm_[at], sum, in);
        }
    }

    // Whether the table is kept as 16-bit limbs (arch 2201, rows longer than one element): there
    // an AddInt64 is ten instructions however short the row, a limb row two.
    __aicore__ inline bool Limbs() const
    {
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        return false;
#else
        return td_.mode == MODE_OWNED_TABLE || (td_.mode == MODE_SPLIT_TABLE && td_.pitch > 1);
#endif
    }

    // Elements from one core's table to the next in the workspace.
    __aicore__ inline uint64_t PartialStride() const
    {
        return (td_.segments * td_.cols + 3) / 4 * 4;
    }

    // One unit: columns [c0, c0 + len) of every row.
    __aicore__ inline void Chunk(uint64_t unit)
    {
        const uint64_t c0 = unit * td_.chunk;
        const uint32_t len = static_cast<uint32_t>(td_.cols - c0 < td_.chunk ? td_.cols - c0 : td_.chunk);
        if (td_.mode == MODE_OWNED_TABLE) {
            SyncPipes<HardEvent::MTE3_V>();       // the previous chunk's table is out
            Duplicate(tableBuf_.Get<int32_t>(), 0, static_cast<int32_t>(2 * td_.segments * td_.pitch * (Limbs() ? 2 : 1)));
            SyncPipes<HardEvent::V_S>();
            addsSinceCarry_ = 0;
        } else if (td_.tileRows > 1) {
            MarkSegments();
            zeroNext_ = 0;
        } else {
            ZeroRows(0, td_.segments, c0, len);
        }
        for (uint64_t j0 = 0; j0 < td_.rows; j0 += td_.tileRows) {
            const uint32_t nr = static_cast<uint32_t>(td_.rows - j0 < td_.tileRows ? td_.rows - j0 : td_.tileRows);
            LoadTile(j0, nr, c0, len);
            if (td_.mode == MODE_OWNED_TABLE) {
                AddIntoTable(nr, len);
            } else {
                AddIntoRows(j0, nr, c0, len);
            }
        }
        if (td_.mode == MODE_OWNED_TABLE) {
            WriteTable(yGm_, c0, len);
        } else if (td_.tileRows > 1) {
            ZeroUntouched(td_.segments, c0, len);
        }
    }

    // MODE_OWNED_ROWS, tiles of several rows: stamp[s] = -1 for a segment no row names, -2 for one
    // no row has led yet (then the data row that last led it).
    __aicore__ inline void MarkSegments()
    {
        LocalTensor<SegmentId> ids = idsBuf_.Get<SegmentId>();
        LocalTensor<int32_t> stamp = stampBuf_.Get<int32_t>();
        const int64_t segments = static_cast<int64_t>(td_.segments);
        SyncPipes<HardEvent::S_V>();              // the previous chunk's stamps are done with
        Duplicate(stamp, -1, static_cast<int32_t>(td_.segments));
        SyncPipes<HardEvent::V_S>();
        for (uint64_t j0 = 0; j0 < td_.rows; j0 += td_.tileRows) {
            const uint32_t nr = static_cast<uint32_t>(td_.rows - j0 < td_.tileRows ? td_.rows - j0 : td_.tileRows);
            SyncPipes<HardEvent::S_MTE2>();
            DataCopyExtParams idIn(1, nr * sizeof(SegmentId), 0, 0, 0);
            DataCopyPad(ids, idsGm_[j0], idIn, DataCopyPadExtParams<SegmentId>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_S>();
            for (uint32_t r = 0; r < nr; ++r) {
                const int64_t s = static_cast<int64_t>(ids.GetValue(r));
                if (s >= 0 && s < segments) {
                    stamp.SetValue(static_cast<uint32_t>(s), -2);
                }
            }
        }
    }

    // Segments [zeroNext_, end) that no row names are zeroed in y, in runs: a named segment's row
    // is written whole by the first tile that adds into it. Each tile zeroes its share while its
    // rows' reads are in flight, so the zeroing overlaps the tiles' work.
    __aicore__ inline void ZeroUntouched(uint64_t end, uint64_t c0, uint32_t len)
    {
        LocalTensor<int32_t> stamp = stampBuf_.Get<int32_t>();
        uint64_t run = zeroNext_;
        for (uint64_t s = zeroNext_; s < end; ++s) {
            if (stamp.GetValue(static_cast<uint32_t>(s)) != -1) {
                ZeroRows(run, s - run, c0, len);
                run = s + 1;
            }
        }
        ZeroRows(run, end - run, c0, len);
        zeroNext_ = end;
    }

    // Rows [s0, s0 + n) of y's chunk zeroed from the zero tile, `zeroRows` rows a copy.
    __aicore__ inline void ZeroRows(uint64_t s0, uint64_t n, uint64_t c0, uint32_t len)
    {
        const uint32_t bytes = len * sizeof(int64_t);
        for (uint64_t at = s0; at < s0 + n; at += td_.zeroRows) {
            const uint32_t k = static_cast<uint32_t>(s0 + n - at < td_.zeroRows ? s0 + n - at : td_.zeroRows);
            DataCopyExtParams out(static_cast<uint16_t>(k), bytes, (td_.pitch * sizeof(int64_t) - (bytes + 31) / 32 * 32) / 32,
                                  static_cast<uint32_t>((td_.cols - len) * sizeof(int64_t)), 0);
            DataCopyPad(yGm_[at * td_.cols + c0], zeroBuf_.Get<int64_t>(), out);
        }
    }

    // The ids of rows [j0, j0 + nr) and their chunk of data (rows `pitch` apart; one burst for one-element rows).
    __aicore__ inline void LoadTile(uint64_t j0, uint32_t nr, uint64_t c0, uint32_t len)
    {
        LocalTensor<SegmentId> ids = idsBuf_.Get<SegmentId>();
        LocalTensor<int64_t> tile = dataBuf_.Get<int64_t>();
        SyncPipes<HardEvent::S_MTE2>();           // the previous tile's id (and one-element row) reads are done
        SyncPipes<HardEvent::V_MTE2>();           // and its adds
        DataCopyExtParams idIn(1, nr * sizeof(SegmentId), 0, 0, 0);
        DataCopyPad(ids, idsGm_[j0], idIn, DataCopyPadExtParams<SegmentId>(false, 0, 0, 0));
        LoadRowChunk(tile, dataGm_, j0, nr, c0, len, td_.cols, td_.pitch);
        SyncPipes<HardEvent::MTE2_S>();
        SyncPipes<HardEvent::MTE2_V>();
    }

    // Each row's chunk added into its segment's in the table: scalar adds for one-element rows
    // (MODE_SPLIT_TABLE), else two limb Adds a row on arch 2201, one int64 Add on arch 3510.
    __aicore__ inline void AddIntoTable(uint32_t nr, uint32_t len)
    {
        LocalTensor<SegmentId> ids = idsBuf_.Get<SegmentId>();
        LocalTensor<int64_t> tile = dataBuf_.Get<int64_t>();
        LocalTensor<int64_t> table = tableBuf_.Get<int64_t>();
        const int64_t segments = static_cast<int64_t>(td_.segments);
#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
        if (Limbs()) {
            if (addsSinceCarry_ + nr > 65535) {   // a limb word holds 65536 limbs below 2^16
                CarryLimbs();
                addsSinceCarry_ = 0;
            }
            addsSinceCarry_ += nr;
            SplitLimbs(2 * nr * td_.pitch);
        }
#endif
        for (uint32_t r = 0; r < nr; ++r) {
            const int64_t s = static_cast<int64_t>(ids.GetValue(r));
            if (s < 0 || s >= segments) {
                continue;
            }
            const uint32_t at = static_cast<uint32_t>(s) * td_.pitch;
            if (td_.pitch == 1) {
                table.SetValue(at, static_cast<int64_t>(static_cast<uint64_t>(table.GetValue(at)) +
                                                        static_cast<uint64_t>(tile.GetValue(r))));   // wraps as torch's
            } else {
#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
                LocalTensor<int32_t> low = table.ReinterpretCast<int32_t>();
                LocalTensor<int32_t> high = low[2 * td_.segments * td_.pitch];
                Add(low[2 * at], low[2 * at], tile.ReinterpretCast<int32_t>()[2 * r * td_.pitch], 2 * len);
                Add(high[2 * at], high[2 * at], highBuf_.Get<int32_t>()[2 * r * td_.pitch], 2 * len);
#else
                Add(table[at], table[at], tile[r * td_.pitch], len);
#endif
            }
        }
    }

#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
    // Arch 2201's limbs: each int32 word w of the int64 values is kept as its low 16 bits (the
    // table's first plane) and its high 16 bits (the second), each in an int32 word of its own, so
    // a row is added by two int32 Adds with no carry for 65535 rows. The tile is split in place:
    // high = w >> 16 into highBuf_, low = w - (high << 16).
    __aicore__ inline void SplitLimbs(uint32_t words)
    {
        LocalTensor<uint32_t> w = dataBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> high = highBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> spare = limbBuf_.Get<uint32_t>()[LIMB_WORDS + 8];
        for (uint32_t at = 0; at < words; at += LIMB_WORDS) {
            const uint32_t n = words - at < LIMB_WORDS ? words - at : LIMB_WORDS;
            ShiftRight(high[at], w[at], static_cast<uint32_t>(16), n);
            ShiftLeft(spare, high[at], static_cast<uint32_t>(16), n);
            Sub(w[at].ReinterpretCast<int32_t>(), w[at].ReinterpretCast<int32_t>(), spare.ReinterpretCast<int32_t>(), n);
        }
    }

    // The limb planes brought back below 2^16 each, carries moved up: low -> high of the same word,
    // the high limb of a low int32 word onto the low limb of its high word (one Gather, as in
    // AddInt64), that one's carry on again; what passes bit 63 is dropped, as torch's sums wrap.
    __aicore__ inline void CarryLimbs()
    {
        LocalTensor<int32_t> low = tableBuf_.Get<int32_t>();
        LocalTensor<int32_t> high = low[2 * td_.segments * td_.pitch];
        LocalTensor<uint32_t> carry = limbBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> spare = carry[LIMB_WORDS + 8];
        LocalTensor<uint32_t> offset = carry[2 * LIMB_WORDS + 8];
        const uint32_t words = static_cast<uint32_t>(2 * td_.segments * td_.pitch);
        for (uint32_t at = 0; at < words; at += LIMB_WORDS) {
            const uint32_t n = words - at < LIMB_WORDS ? words - at : LIMB_WORDS;
            KeepLow16(low[at], carry, spare, n);
            Add(high[at], high[at], carry.ReinterpretCast<int32_t>(), n);
            KeepLow16(high[at], carry, spare, n);
            Gather(spare, carry, offset, 0, n);   // bit 32's carry: word 2i + 1 takes word 2i's
            Add(low[at], low[at], spare.ReinterpretCast<int32_t>(), n);
            KeepLow16(low[at], carry, spare, n);
            Add(high[at], high[at], carry.ReinterpretCast<int32_t>(), n);
            KeepLow16(high[at], carry, spare, n);
        }
    }

    // x = x & 0xFFFF, carry = x >> 16 (as unsigned words).
    __aicore__ inline void KeepLow16(const LocalTensor<int32_t>& x, const LocalTensor<uint32_t>& carry,
                                     const LocalTensor<uint32_t>& spare, uint32_t n)
    {
        ShiftRight(carry, x.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(16), n);
        ShiftLeft(spare, carry, static_cast<uint32_t>(16), n);
        Sub(x, x, spare.ReinterpretCast<int32_t>(), n);
    }
#endif

    // Each row of the tile names its lead, the first row of the tile with its segment (-1: an id
    // outside the segments); a lead's load is 1 when an earlier tile led its segment. stamp[s] is
    // the data row that last led segment s (negative: none yet).
    __aicore__ inline void LeadRows(uint64_t j0, uint32_t nr)
    {
        LocalTensor<SegmentId> ids = idsBuf_.Get<SegmentId>();
        LocalTensor<int32_t> lead = leadBuf_.Get<int32_t>();
        LocalTensor<int32_t> load = lead[td_.tileRows];
        LocalTensor<int32_t> stamp = stampBuf_.Get<int32_t>();
        const int64_t segments = static_cast<int64_t>(td_.segments);
        for (uint32_t r = 0; r < nr; ++r) {
            const int64_t s = static_cast<int64_t>(ids.GetValue(r));
            int32_t first = -1;
            if (s >= 0 && s < segments) {
                const int32_t led = stamp.GetValue(static_cast<uint32_t>(s));
                if (led >= 0 && static_cast<uint64_t>(led) >= j0) {
                    first = static_cast<int32_t>(static_cast<uint64_t>(led) - j0);
                } else {
                    first = static_cast<int32_t>(r);
                    load.SetValue(r, led >= 0 ? 1 : 0);
                    stamp.SetValue(static_cast<uint32_t>(s), static_cast<int32_t>(j0 + r));
                }
            }
            lead.SetValue(r, first);
        }
    }

    // The tile's rows onto their copies in the sum tile (only the leads' are kept), then each
    // other row onto its lead's.
    __aicore__ inline void AddStagedRows(uint32_t nr, uint32_t len)
    {
        LocalTensor<int64_t> tile = dataBuf_.Get<int64_t>();
        LocalTensor<int64_t> sum = sumBuf_.Get<int64_t>();
        LocalTensor<int32_t> lead = leadBuf_.Get<int32_t>();
        AddInt64(sum, tile, nr * td_.pitch);
        for (uint32_t r = 0; r < nr; ++r) {
            const int32_t first = lead.GetValue(r);
            if (first >= 0 && first != static_cast<int32_t>(r)) {
                AddInt64(sum[static_cast<uint32_t>(first) * td_.pitch], tile[r * td_.pitch], len);
            }
        }
    }

    // MODE_OWNED_ROWS: a row whose segment came earlier in the tile adds into that row's copy (its
    // lead), so each segment of the tile is read and written once; a lead row starts from zero when
    // no earlier tile led its segment, else from y's row. A tile of one row (no room for the
    // stamps: y was zeroed whole) reads y's row.
    __aicore__ inline void AddIntoRows(uint64_t j0, uint32_t nr, uint64_t c0, uint32_t len)
    {
        LocalTensor<SegmentId> ids = idsBuf_.Get<SegmentId>();
        LocalTensor<int64_t> tile = dataBuf_.Get<int64_t>();
        LocalTensor<int64_t> sum = sumBuf_.Get<int64_t>();
        const int64_t segments = static_cast<int64_t>(td_.segments);
        if (td_.tileRows == 1) {
            const int64_t s = static_cast<int64_t>(ids.GetValue(0));
            if (s >= 0 && s < segments) {
                AddOneRow(static_cast<uint64_t>(s) * td_.cols + c0, len);
            }
            return;
        }
        LocalTensor<int32_t> lead = leadBuf_.Get<int32_t>();
        LocalTensor<int32_t> load = lead[td_.tileRows];
        LeadRows(j0, nr);
        const uint32_t bytes = len * sizeof(int64_t);
        DataCopyExtParams row(1, bytes, 0, 0, 0);
        SyncPipes<HardEvent::MTE3_V>();           // the previous tile's rows are out of the sums and in y
        Duplicate(sum.ReinterpretCast<int32_t>(), 0, static_cast<int32_t>(2 * nr * td_.pitch));
        SyncPipes<HardEvent::V_MTE2>();           // so the reads below come after those writes too
        for (uint32_t r = 0; r < nr; ++r) {
            if (lead.GetValue(r) == static_cast<int32_t>(r) && load.GetValue(r) != 0) {
                DataCopyPad(sum[r * td_.pitch], yGm_[static_cast<uint64_t>(ids.GetValue(r)) * td_.cols + c0], row,
                            DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
            }
        }
        const uint64_t zeroEnd = zeroNext_ + zeroPerTile_;
        ZeroUntouched(zeroEnd < td_.segments ? zeroEnd : td_.segments, c0, len);
        SyncPipes<HardEvent::MTE2_V>();
        AddStagedRows(nr, len);
        SyncPipes<HardEvent::V_MTE3>();
        for (uint32_t r = 0; r < nr; ++r) {
            if (lead.GetValue(r) == static_cast<int32_t>(r)) {
                DataCopyPad(yGm_[static_cast<uint64_t>(ids.GetValue(r)) * td_.cols + c0], sum[r * td_.pitch], row);
            }
        }
    }

    // A tile of one row: its segment's row read, added to, written back.
    __aicore__ inline void AddOneRow(uint64_t at, uint32_t len)
    {
        LocalTensor<int64_t> sum = sumBuf_.Get<int64_t>();
        DataCopyExtParams row(1, len * sizeof(int64_t), 0, 0, 0);
        SyncPipes<HardEvent::MTE3_MTE2>();
        DataCopyPad(sum, yGm_[at], row, DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        AddInt64(sum, dataBuf_.Get<int64_t>(), len);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyPad(yGm_[at], sum, row);
    }

    // Every segment's chunk of the table to `out` (laid out as y), empty ones as zeros.
    __aicore__ inline void WriteTable(const GlobalTensor<int64_t>& out, uint64_t c0, uint32_t len)
    {
#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
        if (Limbs()) {                            // the limbs carried, then each word = low | high << 16
            CarryLimbs();
            LocalTensor<uint32_t> low = tableBuf_.Get<uint32_t>();
            LocalTensor<uint32_t> high = low[2 * td_.segments * td_.pitch];
            const uint32_t words = static_cast<uint32_t>(2 * td_.segments * td_.pitch);
            ShiftLeft(high, high, static_cast<uint32_t>(16), words);
            Or(low.ReinterpretCast<uint16_t>(), low.ReinterpretCast<uint16_t>(), high.ReinterpretCast<uint16_t>(), 2 * words);
        }
#endif
        SyncPipes<HardEvent::V_MTE3>();
        LocalTensor<int64_t> table = tableBuf_.Get<int64_t>();
        const uint32_t bytes = len * sizeof(int64_t);
        for (uint64_t s0 = 0; s0 < td_.segments; s0 += 4095) {
            const uint32_t n = static_cast<uint32_t>(td_.segments - s0 < 4095 ? td_.segments - s0 : 4095);
            DataCopyExtParams rows(static_cast<uint16_t>(n), bytes, (td_.pitch * sizeof(int64_t) - (bytes + 31) / 32 * 32) / 32,
                                   static_cast<uint32_t>((td_.cols - len) * sizeof(int64_t)), 0);
            DataCopyPad(out[s0 * td_.cols + c0], table[static_cast<uint32_t>(s0) * td_.pitch], rows);
        }
    }

    // y += x over n int64 lanes, wrapping as torch's.
    __aicore__ inline void AddInt64(const LocalTensor<int64_t>& y, const LocalTensor<int64_t>& x, uint32_t n)
    {
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
        Add(y, y, x, n);                          // arch 3510 adds int64 lanes
#else
        // Arch 2201 has no int64 vector add. An int64 lane is a low and a high int32 word: the words
        // are added (wrapping), the carry out of each low word, ((a & b) | ((a | b) & ~sum)) >> 31,
        // is moved onto its high word by one Gather (low words read a zero word) and added there.
        LocalTensor<uint32_t> carry = limbBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> spare = carry[LIMB_WORDS + 8];
        LocalTensor<uint32_t> offset = carry[2 * LIMB_WORDS + 8];
        for (uint32_t at = 0; at < n; at += LIMB_WORDS / 2) {
            const uint32_t words = 2 * (n - at < LIMB_WORDS / 2 ? n - at : LIMB_WORDS / 2);
            LocalTensor<int32_t> a = y[at].template ReinterpretCast<int32_t>();
            LocalTensor<int32_t> b = x[at].template ReinterpretCast<int32_t>();
            LocalTensor<uint16_t> a16 = a.ReinterpretCast<uint16_t>();
            LocalTensor<uint16_t> b16 = b.ReinterpretCast<uint16_t>();
            LocalTensor<uint16_t> carry16 = carry.ReinterpretCast<uint16_t>();
            LocalTensor<uint16_t> spare16 = spare.ReinterpretCast<uint16_t>();
            And(carry16, a16, b16, 2 * words);
            Or(spare16, a16, b16, 2 * words);
            Add(a, a, b, words);                  // the words' sums
            Not(spare16, spare16, 2 * words);
            Or(spare16, spare16, a16, 2 * words);
            Not(spare16, spare16, 2 * words);     // (a | b) & ~sum
            Or(carry16, carry16, spare16, 2 * words);
            ShiftRight(carry, carry, static_cast<uint32_t>(31), words);
            Gather(spare, carry, offset, 0, words);
            Add(a, a, spare.ReinterpretCast<int32_t>(), words);
        }
#endif
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> idsBuf_;
    TBuf<QuePosition::VECCALC> dataBuf_;
    TBuf<QuePosition::VECCALC> tableBuf_;
    TBuf<QuePosition::VECCALC> sumBuf_;
    TBuf<QuePosition::VECCALC> leadBuf_;
    TBuf<QuePosition::VECCALC> stampBuf_;
    TBuf<QuePosition::VECCALC> highBuf_;
    TBuf<QuePosition::VECCALC> zeroBuf_;
#if !(defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510)
    TBuf<QuePosition::VECCALC> limbBuf_;
#endif
    GlobalTensor<int64_t> dataGm_;
    GlobalTensor<SegmentId> idsGm_;
    GlobalTensor<int64_t> yGm_;
    GlobalTensor<int64_t> partialGm_;
    @T@ td_;
    uint64_t zeroPerTile_ = 0;                // segments a tile zeroes (MODE_OWNED_ROWS)
    uint64_t zeroNext_ = 0;
    uint32_t addsSinceCarry_ = 0;             // rows added into the limbs since they were carried
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

"""
_WIDE_TILING = r"""    if (dt == ge::DT_INT64) {
        // int64: each core owns chunks of columns, a multiple of 32 B, about one chunk per core
        // (every core reads every id and the data rows' chunk it owns); the arch 2201 carry
        // scratch of AddInt64 is kept out of the budget on every chip.
        const uint64_t wide = ubSize - reserve - 1024 - (3 * 2048 + 8) * sizeof(uint32_t);
        uint64_t chunk = td->cols == 1 ? 1 : up((td->cols + coreNum - 1) / coreNum, 4);
        // GM bursts 512 B aligned run at full rate, 32 B aligned ones at about 70 %: chunks of 512 B
        // multiples (rows of y 512 B apart) are taken when no core gets more than 1.4x the columns
        const uint64_t chunk512 = up((td->cols + coreNum - 1) / coreNum, 64);
        if (td->cols % 64 == 0 && 10 * chunk512 <= 14 * chunk) {
            chunk = chunk512;
        }
        while (chunk > 4 && 16 * chunk * sizeof(int64_t) > wide / 2) {     // 16 rows of data and sums fit half the UB
            chunk = up(chunk / 2, 4);
        }
        td->chunk = static_cast<uint32_t>(chunk > td->cols ? td->cols : chunk);
        td->chunks = static_cast<uint32_t>((td->cols + td->chunk - 1) / td->chunk);
        td->pitch = td->cols == 1 ? 1 : static_cast<uint32_t>(up(td->chunk, 4));
        const uint64_t table = up(td->segments * td->pitch * sizeof(int64_t), 32);
        uint64_t rows = 1;
        // arch 2201 keeps the table as two limb planes and the tile's high limbs beside it
        // (budgeted on every chip)
        const uint64_t planes = td->pitch == 1 ? 1 : 2;
        const uint64_t wholePitch = td->cols == 1 ? 1 : up(td->cols, 4);
        const uint64_t wholePlanes = td->cols == 1 ? 1 : 2;
        const uint64_t wholeTable = up(td->segments * wholePitch * sizeof(int64_t), 32);
        if ((2 * td->chunks < coreNum || td->cols == 1) && wholePlanes * wholeTable <= wide / 2 &&
            wholePlanes * wholeTable + 8 * ((wholePlanes + 1) * wholePitch * sizeof(int64_t) + ib) <= wide) {
            // narrow rows: column chunks would keep most cores idle, so the rows are split over the
            // cores instead, each summing whole rows into a table of its own; the rest of the UB
            // holds a tile of rows (packed when one element long), a sum tile (and high limbs)
            td->mode = MODE_SPLIT_TABLE;
            td->chunk = static_cast<uint32_t>(td->cols);
            td->chunks = 1;
            td->pitch = static_cast<uint32_t>(wholePitch);
            rows = (wide - wholePlanes * wholeTable) / ((wholePlanes + 1) * wholePitch * sizeof(int64_t) + ib);
            const uint64_t cap = td->pitch == 1 ? 16384 : 4095;
            const uint64_t perCore = up((td->rows + coreNum - 1) / coreNum, 4);
            rows = rows > cap ? cap : rows;
            rows = rows > perCore ? perCore : rows;
            rows = td->pitch == 1 ? (rows < 4 ? 4 : rows / 4 * 4) : (rows < 1 ? 1 : rows);
        } else if (planes * table <= wide / 2) {
            // every segment's chunk in UB; the rest holds data tiles
            td->mode = MODE_OWNED_TABLE;
            rows = (wide - planes * table) / (planes * td->pitch * sizeof(int64_t) + ib);
            rows = rows > 4095 ? 4095 : rows;
        } else {
            // tiles of up to 64 rows when a stamp per segment (the row that led it) fits half the
            // UB, else of one row (then y's chunk is zeroed whole first); a zero tile of 16 rows
            // (24 KB for case-sized chunks: long bursts) or, with one-row tiles, what is left
            td->mode = MODE_OWNED_ROWS;
            td->pitch = static_cast<uint32_t>(up(td->chunk, 4));
            const uint64_t rowBytes = td->pitch * sizeof(int64_t);
            const uint64_t stamps = up(td->segments * sizeof(int32_t), 32);
            uint64_t zeroRows = 16;
            if (stamps + (zeroRows + 4) * rowBytes + 64 <= wide && stamps <= wide / 2) {
                rows = (wide - stamps - zeroRows * rowBytes - 64) / (2 * rowBytes + ib + 2 * sizeof(int32_t));
                rows = rows > 64 ? 64 : rows;
            }
            if (rows < 2) {
                rows = 1;
                zeroRows = (wide - 2 * rowBytes - 64) / rowBytes;
            }
            zeroRows = zeroRows > 4095 ? 4095 : zeroRows;
            zeroRows = zeroRows > td->segments ? td->segments : zeroRows;
            td->zeroRows = static_cast<uint32_t>(zeroRows);
        }
        td->tileRows = static_cast<uint32_t>(rows);
        td->tablePitch = td->pitch;
        td->units = td->mode == MODE_SPLIT_TABLE ? (td->rows + rows - 1) / rows : td->chunks;
@SPLIT@        td->blockDim = static_cast<uint32_t>(blockDim);
        size_t* workspace = context->GetWorkspaceSizes(1);
        workspace[0] = platform.GetLibApiWorkSpaceSize() +
                       (td->mode == MODE_SPLIT_TABLE ? blockDim * up(td->segments * td->cols, 4) * sizeof(int64_t) : 0);
        return ge::GRAPH_SUCCESS;
    }
"""
