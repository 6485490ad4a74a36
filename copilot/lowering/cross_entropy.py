"""Cross-entropy with class-index targets (`F.cross_entropy(input, target, reduction=...,
ignore_index=...)`, traced as `_log_softmax` over dim 1 then `nll_loss_forward` /
`nll_loss2d_forward`) lowers to a kernel of its own:

    loss[r] = logsumexp(x[r, :]) - x[r, target[r]]   (0 where target[r] == ignore_index)
    none: loss; sum: sum of loss; mean: sum of loss / number of targets not ignored

Rows r run over (n, spatial position); the class axis is dim 1. The tiling function reads the
reduction (a string attr) and ignore_index (an int attr), and picks a mode:
- MODE_ROWS (no spatial dims: each row is contiguous): a tile of whole rows, or one chunk of a
  long row; max and sum of exp per row on the vector unit, combined across chunks online
  (logsumexp's running max rescales the running sum);
- MODE_COLUMNS (spatial dims: the classes of one position are S apart): a tile is a chunk of
  classes x a block of positions, so every statistic is a vector over positions (one Max / Sub /
  Exp / Add per class row).
The picked logit and the ignore test are scalar reads of the target. For sum and mean each core
writes its partial (sum, count) to the workspace; after SyncAll the first core adds them in core
order (the same bits every run) and writes the loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASS = {"clone", "contiguous", "alias", "detach", "_to_copy", "view", "reshape", "_unsafe_view"}
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


@dataclass
class CrossEntropyPlan:
    task: object
    pattern: str                      # "cross_entropy"
    x: int
    target: int
    reduction_rule: tuple             # ("attr", name) | ("const", code)
    ignore_rule: tuple                # ("attr", name) | ("const", value)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _source(v):
    from copilot.lowering.indexing import source_of

    return source_of(v, _PASS)


def _cross_entropy_of(gm):
    """(x position, target position, reduction code, ignore_index) when the graph is
    log_softmax over dim 1 followed by nll_loss, else None."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    nll = [n for n in calls if _name(n) in ("nll_loss_forward", "nll_loss2d_forward")]
    lsm = [n for n in calls if _name(n) == "_log_softmax"]
    if len(nll) != 1 or len(lsm) != 1:
        return None
    n, s = nll[0], lsm[0]
    if _source(n.args[0]) is not s or n.args[2] is not None or s.args[1] != 1:
        return None
    x, t = _source(s.args[0]), _source(n.args[1])
    if x not in places or t not in places or x is t:
        return None
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    if not (out.op == "call_function" and _name(out) == "getitem" and out.args[0] is n and out.args[1] == 0):
        return None
    known = {s, n, out}
    for c in calls:
        if c not in known and _name(c) not in _PASS and _name(c) != "getitem":
            return None
    return places.index(x), places.index(t), int(n.args[3]), int(n.args[4])


def plan_cross_entropy(task):
    """The cross-entropy plan of `task`, or None when its golden is not log_softmax + nll_loss."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 2 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        first = _cross_entropy_of(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    xi, ti = first[:2]
    found = [(task.cases[0], first)]
    plan = CrossEntropyPlan(task, "cross_entropy", xi, ti, ("const", 0), ("const", 0))
    for case in task.cases[1:]:
        if case.dtypes[ti] not in ("int32", "int64"):
            plan.unserved[case.id] = f"target dtype {case.dtypes[ti]} (probability targets are not lowered)"
            continue
        g = _cross_entropy_of(trace(task, case))
        if g is None or g[:2] != (xi, ti):
            raise Unsupported(f"{task.name}: case {case.id} is not the cross-entropy the other cases are")
        found.append((case, g))
    plan.reduction_rule = _reduction_rule(task, found)
    plan.ignore_rule = _ignore_rule(task, found)
    return plan


def _reduction_rule(task, found) -> tuple:
    for a in task.attrs:
        if a.type == "string" and all(c.attrs.get(a.name, a.default) == _REDUCTIONS[g[2]] for c, g in found):
            return ("attr", a.name)
    codes = {g[2] for _, g in found}
    if len(codes) == 1:
        return ("const", codes.pop())
    raise Unsupported(f"{task.name}: the loss reduction varies between cases and no string attr gives it")


def _ignore_rule(task, found) -> tuple:
    for a in task.attrs:
        if a.type == "int" and all(c.attrs.get(a.name, a.default) == g[3] for c, g in found):
            return ("attr", a.name)
    values = {g[3] for _, g in found}
    if len(values) == 1:
        return ("const", values.pop())
    raise Unsupported(f"{task.name}: ignore_index varies between cases and no int attr gives it")


def render(plan: CrossEntropyPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]
    if plan.reduction_rule[0] == "attr":
        pos = names.index(plan.reduction_rule[1])
        reduction = (f"    const char* reductionAttr = attrs->GetAttrPointer<char>({pos});\n"
                     f"    if (reductionAttr == nullptr) {{\n"
                     f"        return ge::GRAPH_FAILED;\n"
                     f"    }}\n"
                     f"    if (std::strcmp(reductionAttr, \"none\") == 0) {{\n"
                     f"        td->reduction = REDUCE_NONE;\n"
                     f"    }} else if (std::strcmp(reductionAttr, \"mean\") == 0) {{\n"
                     f"        td->reduction = REDUCE_MEAN;\n"
                     f"    }} else if (std::strcmp(reductionAttr, \"sum\") == 0) {{\n"
                     f"        td->reduction = REDUCE_SUM;\n"
                     f"    }} else {{\n"
                     f"        return ge::GRAPH_FAILED;\n"
                     f"    }}\n")
    else:
        reduction = f"    td->reduction = {int(plan.reduction_rule[1])};\n"
    if plan.ignore_rule[0] == "attr":
        ignore = f"    td->ignoreIndex = *attrs->GetAttrPointer<int64_t>({names.index(plan.ignore_rule[1])});\n"
    else:
        ignore = f"    td->ignoreIndex = {int(plan.ignore_rule[1])};\n"
    xn, tn, yn = t.inputs[plan.x].name, t.inputs[plan.target].name, t.outputs[0].name
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(xn)), ("@TT@", _macro_of(tn)), ("@X@", _ident(xn)), ("@TG@", _ident(tn)),
                     ("@Y@", _ident(yn)), ("@XI@", str(plan.x)), ("@TI@", str(plan.target)),
                     ("@ARGS@", ", ".join(f"GM_ADDR {_ident(i.name)}" for i in t.inputs)),
                     ("@REDUCTION@", reduction), ("@IGNORE@", ignore), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(int(knobs["tile_elems"]))),
                     ("@SPLIT@", core_split(knobs, "td->rows * td->classes", "td->units")),
                     ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: cross-entropy with class-index targets over dim 1 of @X@ (rows = the other positions):
//   loss[r] = logsumexp(@X@[r, :]) - @X@[r, @TG@[r]], 0 where @TG@[r] == ignore_index;
//   reduction none (loss per row), sum, or mean (over the rows not ignored).
// Everything is computed in fp32; the statistics of a row chunk are combined online.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MODE_ROWS = 0;       // no spatial dims: each row's classes are contiguous
constexpr uint32_t MODE_COLUMNS = 1;    // spatial dims: a chunk of classes x a block of positions
constexpr uint32_t REDUCE_NONE = 0;
constexpr uint32_t REDUCE_MEAN = 1;
constexpr uint32_t REDUCE_SUM = 2;
constexpr uint32_t PARTIAL_FLOATS = 8;  // one 32-byte workspace slot per core: (sum, count)

struct @T@ {
    uint32_t mode;
    uint32_t reduction;
    uint32_t bufferNum;
    uint32_t tileRows;                  // rows: rows per tile; columns: positions per tile
    uint32_t chunk;                     // classes per tile
    uint32_t pitch;                     // UB pitch of a tile row (elements)
    uint32_t chunks;                    // class chunks per row
    uint32_t blocksPerImage;            // columns: position blocks per image n
    int64_t ignoreIndex;
    uint64_t classes;                   // C
    uint64_t spatial;                   // S: positions per image (1 without spatial dims)
    uint64_t rows;                      // N * S targets
    uint64_t units;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint32_t blockDim;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Logit = @XT@;
using Target = @TT@;

// fp16 / bf16 logits are widened to fp32 and losses narrowed back; fp32 is copied.
template <typename T>
__aicore__ inline void ToFloat(const LocalTensor<float>& dst, const LocalTensor<T>& src, uint32_t n)
{
    if constexpr (std::is_same<T, float>::value) {
        Adds(dst, src, 0.0f, n);
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

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR targetAddr, GM_ADDR yAddr, GM_ADDR workspace, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Logit*>(xAddr), td_.rows * td_.classes);
        targetGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Target*>(targetAddr), td_.rows);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Logit*>(yAddr), td_.reduction == REDUCE_NONE ? td_.rows : 1);
        if (td_.reduction != REDUCE_NONE) {
            partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)),
                                       td_.blockDim * PARTIAL_FLOATS);
        }
@UNIT_RANGE@        const uint32_t tileElems = (td_.mode == MODE_ROWS ? td_.tileRows : td_.chunk) * td_.pitch;
        pipe_.InitBuffer(xQue_, td_.bufferNum, tileElems * sizeof(Logit));
        pipe_.InitBuffer(xfBuf_, tileElems * sizeof(float));
        // a statistic vector and the reductions' scratch (which also takes every core's partials)
        const uint32_t partials = td_.blockDim * PARTIAL_FLOATS;
        pipe_.InitBuffer(workBuf_, td_.pitch * sizeof(float));
        pipe_.InitBuffer(tmpBuf_, (td_.pitch > partials ? td_.pitch : partials) * sizeof(float));
        pipe_.InitBuffer(targetBuf_, Aligned(td_.tileRows * sizeof(Target)));
        pipe_.InitBuffer(lossBuf_, Aligned(td_.tileRows * sizeof(float)));
        pipe_.InitBuffer(yBuf_, Aligned(td_.tileRows * sizeof(Logit)) + 32);
        if (td_.mode == MODE_COLUMNS) {
            pipe_.InitBuffer(maxBuf_, td_.pitch * sizeof(float));
            pipe_.InitBuffer(sumBuf_, td_.pitch * sizeof(float));
            pipe_.InitBuffer(pickBuf_, td_.pitch * sizeof(float));
            pipe_.InitBuffer(keepBuf_, td_.pitch * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            if (td_.mode == MODE_ROWS) {
                RowTile(unitStart_ + u);
            } else {
                ColumnTile(unitStart_ + u);
            }
        }
        if (td_.reduction != REDUCE_NONE) {
            Combine();
        }
    }

private:
    __aicore__ inline static uint32_t Aligned(uint32_t bytes)
    {
        return (bytes + 31) / 32 * 32;
    }

    // `n` targets from row r0 into UB, read by the scalar unit.
    __aicore__ inline LocalTensor<Target> LoadTargets(uint64_t r0, uint32_t n)
    {
        LocalTensor<Target> tg = targetBuf_.Get<Target>();
        SyncPipes<HardEvent::S_MTE2>();           // the previous tile's scalar reads are done
        DataCopyExtParams in(1, n * sizeof(Target), 0, 0, 0);
        DataCopyPad(tg, targetGm_[r0], in, DataCopyPadExtParams<Target>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_S>();
        return tg;
    }

    // `rows` rows of `len` logits (`stride` apart in GM) in, widened to fp32 (rows `pitch` apart).
    __aicore__ inline LocalTensor<float> LoadLogits(uint64_t at, uint32_t rows, uint32_t len, uint64_t stride)
    {
        LocalTensor<Logit> tile = xQue_.AllocTensor<Logit>();
        const uint32_t bytes = len * sizeof(Logit);
        DataCopyExtParams in(static_cast<uint16_t>(rows), bytes,
                             rows > 1 ? static_cast<uint32_t>((stride - len) * sizeof(Logit)) : 0,
                             (td_.pitch * sizeof(Logit) - (bytes + 31) / 32 * 32) / 32, 0);
        DataCopyPad(tile, xGm_[at], in, DataCopyPadExtParams<Logit>(false, 0, 0, 0));
        xQue_.EnQue(tile);
        tile = xQue_.DeQue<Logit>();
        LocalTensor<float> xf = xfBuf_.Get<float>();
        ToFloat(xf, tile, rows * td_.pitch);
        xQue_.FreeTensor(tile);
        return xf;
    }

    // MODE_ROWS: `tileRows` whole rows, or one row in `chunks` chunks.
    __aicore__ inline void RowTile(uint64_t unit)
    {
        const uint64_t r0 = unit * td_.tileRows;
        const uint32_t nr = static_cast<uint32_t>(td_.rows - r0 < td_.tileRows ? td_.rows - r0 : td_.tileRows);
        LocalTensor<Target> tg = LoadTargets(r0, nr);
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> loss = lossBuf_.Get<float>();
        // per row: running max m, running sum of exp(x - m), the picked logit
        float m = 0.0f;
        float s = 0.0f;
        float picked = 0.0f;
        for (uint32_t r = 0; r < nr; ++r) {
            const int64_t t = static_cast<int64_t>(tg.GetValue(r));
            for (uint32_t k = 0; k < td_.chunks; ++k) {
                const uint64_t c0 = static_cast<uint64_t>(k) * td_.chunk;
                const uint32_t len = static_cast<uint32_t>(td_.classes - c0 < td_.chunk ? td_.classes - c0 : td_.chunk);
                LocalTensor<float> row;
                if (td_.chunks > 1 || r == 0) {
                    LocalTensor<float> xf = LoadLogits((r0 + r) * td_.classes + c0, td_.chunks > 1 ? 1 : nr, len,
                                                       td_.classes);
                    tile_ = xf;
                }
                row = td_.chunks > 1 ? tile_ : tile_[r * td_.pitch];
                ReduceMax(work, row, tmp, static_cast<int32_t>(len));
                SyncPipes<HardEvent::V_S>();
                const float cm = work.GetValue(0);
                const float mNew = k == 0 || cm > m ? cm : m;
                if (t >= static_cast<int64_t>(c0) && t < static_cast<int64_t>(c0 + len)) {
                    picked = row.GetValue(static_cast<uint32_t>(t - static_cast<int64_t>(c0)));
                }
                SyncPipes<HardEvent::S_V>();
                Adds(work, row, -mNew, static_cast<int32_t>(len));
                Exp(work, work, static_cast<int32_t>(len));
                ReduceSum(work, work, tmp, static_cast<int32_t>(len));
                SyncPipes<HardEvent::V_S>();
                const float cs = work.GetValue(0);
                s = k == 0 ? cs : s * expf(m - mNew) + cs;
                m = mNew;
                SyncPipes<HardEvent::S_V>();
            }
            const bool keep = t != td_.ignoreIndex;
            const float l = keep ? m + logf(s) - picked : 0.0f;
            partialSum_ += l;
            partialCount_ += keep ? 1.0f : 0.0f;
            if (td_.reduction == REDUCE_NONE) {
                loss.SetValue(r, l);
            }
        }
        if (td_.reduction == REDUCE_NONE) {
            SyncPipes<HardEvent::S_V>();
            StoreLosses(loss, r0, nr);
        }
    }

    // MODE_COLUMNS: one image n, a block of positions, every class chunk in turn.
    __aicore__ inline void ColumnTile(uint64_t unit)
    {
        const uint64_t n = unit / td_.blocksPerImage;
        const uint64_t p0 = (unit % td_.blocksPerImage) * td_.tileRows;
        const uint32_t np = static_cast<uint32_t>(td_.spatial - p0 < td_.tileRows ? td_.spatial - p0 : td_.tileRows);
        const uint64_t r0 = n * td_.spatial + p0;
        LocalTensor<Target> tg = LoadTargets(r0, np);
        LocalTensor<float> mx = maxBuf_.Get<float>();
        LocalTensor<float> sum = sumBuf_.Get<float>();
        LocalTensor<float> pick = pickBuf_.Get<float>();
        LocalTensor<float> keep = keepBuf_.Get<float>();
        LocalTensor<float> chunkMax = workBuf_.Get<float>();
        LocalTensor<float> e = tmpBuf_.Get<float>();
        const uint32_t lanes = td_.pitch;
        float count = 0.0f;
        for (uint32_t p = 0; p < np; ++p) {
            const bool k = static_cast<int64_t>(tg.GetValue(p)) != td_.ignoreIndex;
            keep.SetValue(p, k ? 1.0f : 0.0f);
            pick.SetValue(p, 0.0f);                  // an ignored target may pick nothing
            count += k ? 1.0f : 0.0f;
        }
        for (uint32_t k = 0; k < td_.chunks; ++k) {
            const uint64_t c0 = static_cast<uint64_t>(k) * td_.chunk;
            const uint32_t cc = static_cast<uint32_t>(td_.classes - c0 < td_.chunk ? td_.classes - c0 : td_.chunk);
            LocalTensor<float> xf = LoadLogits((n * td_.classes + c0) * td_.spatial + p0, cc, np, td_.spatial);
            // the picked logit of each position whose target falls in this chunk
            SyncPipes<HardEvent::V_S>();
            for (uint32_t p = 0; p < np; ++p) {
                const int64_t t = static_cast<int64_t>(tg.GetValue(p)) - static_cast<int64_t>(c0);
                if (t >= 0 && t < static_cast<int64_t>(cc)) {
                    pick.SetValue(p, xf.GetValue(static_cast<uint32_t>(t) * td_.pitch + p));
                }
            }
            SyncPipes<HardEvent::S_V>();
            // running max over the chunk's class rows, then the running sum rescaled to it
            Adds(chunkMax, xf, 0.0f, lanes);
            for (uint32_t c = 1; c < cc; ++c) {
                Max(chunkMax, chunkMax, xf[c * td_.pitch], lanes);
            }
            if (k == 0) {
                Adds(mx, chunkMax, 0.0f, lanes);
                Duplicate(sum, 0.0f, lanes);
            } else {
                Max(chunkMax, chunkMax, mx, lanes);
                Sub(e, mx, chunkMax, lanes);
                Exp(e, e, lanes);
                Mul(sum, sum, e, lanes);
                Adds(mx, chunkMax, 0.0f, lanes);
            }
            for (uint32_t c = 0; c < cc; ++c) {
                Sub(e, xf[c * td_.pitch], mx, lanes);
                Exp(e, e, lanes);
                Add(sum, sum, e, lanes);
            }
        }
        // loss = (max + ln(sum) - picked) * keep
        LocalTensor<float> loss = lossBuf_.Get<float>();
        Ln(e, sum, lanes);
        Add(e, e, mx, lanes);
        Sub(e, e, pick, lanes);
        Mul(loss, e, keep, np);
        if (td_.reduction == REDUCE_NONE) {
            StoreLosses(loss, r0, np);
            return;
        }
        ReduceSum(e, loss, chunkMax, static_cast<int32_t>(np));
        SyncPipes<HardEvent::V_S>();
        partialSum_ += e.GetValue(0);
        partialCount_ += count;
        SyncPipes<HardEvent::S_V>();
    }

    // `n` fp32 losses out as the logits' dtype.
    __aicore__ inline void StoreLosses(const LocalTensor<float>& loss, uint64_t r0, uint32_t n)
    {
        LocalTensor<Logit> y = yBuf_.Get<Logit>();
        SyncPipes<HardEvent::MTE3_V>();           // the previous tile's copy out is done with y
        FromFloat(y, loss, n);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams out(1, n * sizeof(Logit), 0, 0, 0);
        DataCopyPad(yGm_[r0], y, out);
    }

    // sum / mean: every core's (sum, count) through the workspace; the first core adds them in
    // core order and writes the loss.
    __aicore__ inline void Combine()
    {
        LocalTensor<float> slot = workBuf_.Get<float>();
        SyncPipes<HardEvent::V_S>();
        slot.SetValue(0, partialSum_);
        slot.SetValue(1, partialCount_);
        for (uint32_t i = 2; i < PARTIAL_FLOATS; ++i) {
            slot.SetValue(i, 0.0f);
        }
        SyncPipes<HardEvent::S_MTE3>();
        DataCopy(partialGm_[static_cast<uint64_t>(GetBlockIdx()) * PARTIAL_FLOATS], slot, PARTIAL_FLOATS);
        PipeBarrier<PIPE_ALL>();                  // the slot is in GM before the barrier
        SyncAll();
        if (GetBlockIdx() != 0) {
            return;
        }
        LocalTensor<float> all = tmpBuf_.Get<float>();
        DataCopy(all, partialGm_, td_.blockDim * PARTIAL_FLOATS);
        SyncPipes<HardEvent::MTE2_S>();
        float total = 0.0f;
        float count = 0.0f;
        for (uint32_t b = 0; b < td_.blockDim; ++b) {
            total += all.GetValue(b * PARTIAL_FLOATS);
            count += all.GetValue(b * PARTIAL_FLOATS + 1);
        }
        LocalTensor<float> loss = lossBuf_.Get<float>();
        loss.SetValue(0, td_.reduction == REDUCE_MEAN ? total / count : total);
        SyncPipes<HardEvent::S_V>();
        StoreLosses(loss, 0, 1);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> xQue_;
    TBuf<QuePosition::VECCALC> xfBuf_;
    TBuf<QuePosition::VECCALC> workBuf_;
    TBuf<QuePosition::VECCALC> tmpBuf_;
    TBuf<QuePosition::VECCALC> targetBuf_;
    TBuf<QuePosition::VECCALC> lossBuf_;
    TBuf<QuePosition::VECCALC> yBuf_;
    TBuf<QuePosition::VECCALC> maxBuf_;
    TBuf<QuePosition::VECCALC> sumBuf_;
    TBuf<QuePosition::VECCALC> pickBuf_;
    TBuf<QuePosition::VECCALC> keepBuf_;
    LocalTensor<float> tile_;
    GlobalTensor<Logit> xGm_;
    GlobalTensor<Target> targetGm_;
    GlobalTensor<Logit> yGm_;
    GlobalTensor<float> partialGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
    float partialSum_ = 0.0f;
    float partialCount_ = 0.0f;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @TG@, @Y@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@REDUCTION@@IGNORE@    const gert::Shape& xShape = context->GetInputShape(@XI@)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(xShape.GetDimNum());
    const ge::DataType tt = context->GetInputDesc(@TI@)->GetDataType();
    if (rank < 2 || (tt != ge::DT_INT32 && tt != ge::DT_INT64)) {
        return ge::GRAPH_FAILED;   // (N, C, ...) logits with class-index targets
    }
    td->classes = static_cast<uint64_t>(xShape.GetDim(1));
    td->spatial = 1;
    for (int32_t d = 2; d < rank; ++d) {
        td->spatial *= static_cast<uint64_t>(xShape.GetDim(d));
    }
    td->rows = static_cast<uint64_t>(xShape.GetDim(0)) * td->spatial;
    if (td->classes == 0 || td->rows == 0 ||
        static_cast<uint64_t>(context->GetInputShape(@TI@)->GetStorageShape().GetShapeSize()) != td->rows) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t eb = DtypeBytes(context->GetInputDesc(@XI@)->GetDataType());

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 16384) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve - 4096;
    auto up = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
    const uint64_t cap = @CAP@ > 0 ? @CAP@ : (1ULL << 20);
    const uint64_t perElem = td->bufferNum * eb + 4;               // queued logits + their fp32 copy

    if (td->spatial == 1) {
        // rows: whole rows when one fits beside its statistic vectors, else chunks of one row
        td->mode = MODE_ROWS;
        uint64_t chunk = td->classes < cap ? td->classes : cap;
        while (chunk > 64 && up(chunk, 64) * (perElem + 8) + 4096 > budget) {
            chunk = (chunk + 1) / 2;
        }
        td->chunk = static_cast<uint32_t>(chunk);
        td->chunks = static_cast<uint32_t>((td->classes + chunk - 1) / chunk);
        td->pitch = static_cast<uint32_t>(up(chunk, 64));
        uint64_t rows = 1;
        if (td->chunks == 1) {
            // per row: its logits, a target, a loss and its copy out
            rows = (budget - td->pitch * 8) / (td->pitch * perElem + 8 + 4 + eb);
            rows = rows > 4095 ? 4095 : (rows == 0 ? 1 : rows);
            const uint64_t perCore = (td->rows + coreNum - 1) / coreNum;
            rows = rows > perCore ? perCore : rows;
        }
        td->tileRows = static_cast<uint32_t>(rows);
        td->units = (td->rows + rows - 1) / rows;
    } else {
        // columns: a block of positions (vector lanes) x a chunk of classes
        td->mode = MODE_COLUMNS;
        uint64_t block = up(td->spatial < 256 ? td->spatial : 256, 64);
        uint64_t chunk = td->classes < cap ? td->classes : cap;
        auto bytes = [&](uint64_t b, uint64_t c) { return c * b * perElem + b * (6 * 4 + 8 + eb); };
        while (chunk > 1 && bytes(block, chunk) > budget) {
            chunk = (chunk + 1) / 2;
        }
        chunk = chunk > 4095 ? 4095 : chunk;
        td->chunk = static_cast<uint32_t>(chunk);
        td->chunks = static_cast<uint32_t>((td->classes + chunk - 1) / chunk);
        td->pitch = static_cast<uint32_t>(block);
        td->tileRows = static_cast<uint32_t>(td->spatial < block ? td->spatial : block);
        td->blocksPerImage = static_cast<uint32_t>((td->spatial + td->tileRows - 1) / td->tileRows);
        td->units = static_cast<uint64_t>(xShape.GetDim(0)) * td->blocksPerImage;
        if (td->spatial * eb >= (1ULL << 32)) {
            return ge::GRAPH_FAILED;   // a class row gap past the copy's 32-bit stride field
        }
    }

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize() + blockDim * PARTIAL_FLOATS * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
