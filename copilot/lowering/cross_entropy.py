"""Cross-entropy with class-index targets (`F.cross_entropy(input, target, reduction=...,
ignore_index=...)`, traced as `_log_softmax` over dim 1 then `nll_loss_forward` /
`nll_loss2d_forward`) lowers to a kernel of its own:

    loss[r] = logsumexp(x[r, :]) - x[r, target[r]]   (0 where target[r] == ignore_index)
    none: loss; sum: sum of loss; mean: sum of loss / number of targets not ignored

Rows r run over (n, spatial position); the class axis is dim 1. The tiling function reads the
reduction (a string attr) and ignore_index (an int attr), and picks a mode:
- MODE_SHORT (no spatial dims, at most 128 classes): a block of whole rows comes in as one burst
  and one Gather transposes it, so the rows become the positions of a class-major tile;
- MODE_COLUMNS (spatial dims: the classes of one position are S apart): a class-major tile is a
  chunk of classes x a block of positions (one strided copy); the block narrows, down to one
  32-byte block per class row, until every core has a unit;
- MODE_ROWS (no spatial dims, longer rows): a tile of whole rows, or one chunk of a long row; a
  max, exp and a sum per row on the vector unit, the chunks combined online.
On a class-major tile every statistic is a vector over positions: the max and the sum fold the
class rows by halving (log2 C instructions over contiguous data), x - max is one repeated Sub
(the max's repeat stride 0), exp is one call, and the target's logit is one Gather at computed
byte offsets. Targets are compared as fp32 (exact for class indices and |ignore_index| <= 2^24).
For sum and mean each core writes its partial (sum, count) to the workspace; after SyncAll the
first core adds them in core order (the same bits every run) and writes the loss.
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
// Everything is computed in fp32 on the vector unit; the statistics of class chunks are combined
// online (logsumexp's running max rescales the running sum of exp).
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MODE_ROWS = 0;       // long rows (no spatial dims): whole rows, or chunks of one row, per tile
constexpr uint32_t MODE_COLUMNS = 1;    // spatial dims: a class-major tile, a chunk of classes x a block of positions
constexpr uint32_t MODE_SHORT = 2;      // short rows (no spatial dims): a block of rows in one burst, transposed
                                        // in UB to the class-major tile
constexpr uint32_t REDUCE_NONE = 0;
constexpr uint32_t REDUCE_MEAN = 1;
constexpr uint32_t REDUCE_SUM = 2;
constexpr uint32_t PARTIAL_FLOATS = 8;  // one 32-byte workspace slot per core: (sum, count)
constexpr uint32_t SLOT_FLOATS = 8;     // a row's sum of exp in a 32-byte slot of its own (MODE_ROWS)
constexpr uint32_t NUM_STATS = 11;      // statistic vectors, one lane per row / position of a tile

struct @T@ {
    uint32_t mode;
    uint32_t reduction;
    uint32_t bufferNum;
    uint32_t tileRows;                  // rows: rows per tile
    uint32_t lanes;                     // columns / short: positions (rows) per tile = a class row of the tile
    uint32_t chunk;                     // classes per tile
    uint32_t chunks;                    // class chunks per row
    uint32_t pitch;                     // rows: UB pitch of a tile row (elements)
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
using LogitBits = typename std::conditional<sizeof(Logit) == 4, float, uint16_t>::type;

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

template <bool IS_MAX>
__aicore__ inline void Combine2(const LocalTensor<float>& d, const LocalTensor<float>& a, const LocalTensor<float>& b,
                                uint32_t n)
{
    if constexpr (IS_MAX) {
        Max(d, a, b, n);
    } else {
        Add(d, a, b, n);
    }
}

// Combines `rows` rows of `lanes` fp32 values (`lanes` apart) into row 0 of `acc` by halving: the
// upper rows onto the lower ones, about log2(rows) instructions over contiguous data. The max runs
// into a scratch `acc` of (rows + 1) / 2 rows (the tile is read again); the sum runs in place.
template <bool IS_MAX>
__aicore__ inline void FoldRows(const LocalTensor<float>& acc, const LocalTensor<float>& src, uint32_t rows,
                                uint32_t lanes)
{
    if (rows == 1) {
        if constexpr (IS_MAX) {
            Adds(acc, src, 0.0f, lanes);
        }
        return;
    }
    uint32_t half = rows / 2;
    Combine2<IS_MAX>(acc, src, src[(rows - half) * lanes], half * lanes);
    if (rows % 2 == 1) {
        Combine2<IS_MAX>(acc, acc, src[half * lanes], lanes);      // the middle row
    }
    for (rows = half; rows > 1; rows -= half) {
        half = rows / 2;
        Combine2<IS_MAX>(acc, acc, acc[(rows - half) * lanes], half * lanes);
    }
}

// x[c][p] -= m[p] over `rows` class rows of `lanes` positions: the repeats walk the class rows and
// the statistic's repeat stride is 0, so a few instructions cover the tile.
__aicore__ inline void SubPerPosition(const LocalTensor<float>& x, const LocalTensor<float>& m, uint32_t rows,
                                      uint32_t lanes)
{
    if (lanes >= 64 && (rows * 64 <= lanes || lanes > 2040)) {
        for (uint32_t c = 0; c < rows; ++c) {                     // few long class rows: one call each
            Sub(x[c * lanes], x[c * lanes], m, lanes);
        }
    } else if (lanes >= 64) {
        // one call per 64 positions, a repeat per class row (8-bit repeat stride: lanes <= 2040)
        const uint8_t stride = static_cast<uint8_t>(lanes / 8);
        for (uint32_t g = 0; g < lanes; g += 64) {
            for (uint32_t c0 = 0; c0 < rows; c0 += 255) {
                const uint32_t n = rows - c0 < 255 ? rows - c0 : 255;
                Sub(x[c0 * lanes + g], x[c0 * lanes + g], m[g], 64, static_cast<uint8_t>(n),
                    BinaryRepeatParams(1, 1, 1, stride, stride, 0));
            }
        }
    } else {
        // a class row is q 32-byte blocks: 8 class rows per repeat, block j of each takes block j of m
        const uint8_t q = static_cast<uint8_t>(lanes / 8);
        for (uint32_t j = 0; j < q; ++j) {
            for (uint32_t c0 = 0; c0 < rows; c0 += 8 * 255) {
                const uint32_t n = (rows - c0 + 7) / 8 < 255 ? (rows - c0 + 7) / 8 : 255;
                Sub(x[c0 * lanes + j * 8], x[c0 * lanes + j * 8], m[j * 8], 64, static_cast<uint8_t>(n),
                    BinaryRepeatParams(q, q, 0, static_cast<uint8_t>(8 * q), static_cast<uint8_t>(8 * q), 0));
            }
        }
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
@UNIT_RANGE@        // the statistic vectors have a lane per row (rows) or per position (class-major tiles)
        vec_ = ((td_.mode == MODE_ROWS ? td_.tileRows : td_.lanes) + 63) / 64 * 64;
        uint32_t tileElems = td_.tileRows * td_.pitch;
        if (td_.mode != MODE_ROWS) {
            // narrow tiles (under 64 positions) compute 8 class rows per repeat: rows rounded up to 8
            classRows_ = td_.lanes < 64 ? (td_.chunk + 7) / 8 * 8 : td_.chunk;
            tileElems = classRows_ * td_.lanes;
        }
        const uint32_t inBytes = td_.mode == MODE_SHORT ? td_.lanes * td_.chunk * sizeof(Logit) : tileElems * sizeof(Logit);
        pipe_.InitBuffer(xQue_, td_.bufferNum, Aligned(inBytes));
        pipe_.InitBuffer(xfBuf_, tileElems * sizeof(float));
        pipe_.InitBuffer(statBuf_, NUM_STATS * vec_ * sizeof(float));
        const uint32_t partials = td_.blockDim * PARTIAL_FLOATS;
        const uint32_t tmp = td_.pitch > vec_ ? td_.pitch : vec_;
        pipe_.InitBuffer(tmpBuf_, (tmp > partials ? tmp : partials) * sizeof(float));
        pipe_.InitBuffer(partBuf_, 4 * PARTIAL_FLOATS * sizeof(float));
        pipe_.InitBuffer(targetBuf_, Aligned(vec_ * sizeof(Target)));
        pipe_.InitBuffer(yBuf_, Aligned(vec_ * sizeof(Logit)) + 32);
        LocalTensor<float> stats = statBuf_.Get<float>();
        targetF_ = stats;
        keep_ = stats[vec_];
        pick_ = stats[2 * vec_];
        max_ = stats[3 * vec_];
        sum_ = stats[4 * vec_];
        work_ = stats[5 * vec_];
        offF_ = stats[6 * vec_];
        shift_ = stats[7 * vec_];
        laneBytes_ = stats[8 * vec_];
        off32_ = stats[9 * vec_].ReinterpretCast<int32_t>();
        slotTable_ = stats[10 * vec_].ReinterpretCast<int32_t>();
        if (td_.mode == MODE_ROWS) {
            // a 32-byte slot per row for its sum of exp, and the table that packs the slots
            pipe_.InitBuffer(slotBuf_, (vec_ + 2) * SLOT_FLOATS * sizeof(float));
            CreateVecIndex(slotTable_, 0, vec_);
            Muls(slotTable_, slotTable_, static_cast<int32_t>(SLOT_FLOATS * sizeof(float)), vec_);
            return;
        }
        pipe_.InitBuffer(foldBuf_, (classRows_ + 1) / 2 * td_.lanes * sizeof(float));
        // byte offset of each lane within a class row, for picking the target's logit
        CreateVecIndex(off32_, 0, vec_);
        Cast(laneBytes_, off32_, RoundMode::CAST_RINT, vec_);
        Muls(laneBytes_, laneBytes_, static_cast<float>(sizeof(float)), vec_);
        if (td_.mode == MODE_SHORT) {
            // the transpose: class c of tile row j comes from byte (j * C + c) * sizeof(Logit) of the burst
            pipe_.InitBuffer(tableBuf_, tileElems * sizeof(uint32_t));
            if constexpr (sizeof(Logit) != 4) {
                pipe_.InitBuffer(bitsBuf_, tileElems * sizeof(Logit));
            }
            LocalTensor<int32_t> table = tableBuf_.Get<int32_t>();
            CreateVecIndex(table, 0, td_.lanes);
            Muls(table, table, static_cast<int32_t>(td_.classes * sizeof(Logit)), td_.lanes);
            for (uint32_t c = 1; c < td_.chunk; ++c) {
                Adds(table[c * td_.lanes], table, static_cast<int32_t>(c * sizeof(Logit)), td_.lanes);
            }
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            if (td_.mode == MODE_ROWS) {
                RowTile(unitStart_ + u);
            } else if (td_.mode == MODE_COLUMNS) {
                ColumnTile(unitStart_ + u);
            } else {
                ShortTile(unitStart_ + u);
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

    // `n` targets from row r0 into UB (read by the scalar unit in MODE_ROWS); as fp32 in targetF_
    // (lanes past n hold ignore_index) and keep_ = 1 where the target is not ignore_index, else 0.
    __aicore__ inline LocalTensor<Target> LoadTargets(uint64_t r0, uint32_t n)
    {
        LocalTensor<Target> tg = targetBuf_.Get<Target>();
        SyncPipes<HardEvent::V_MTE2>();           // the previous tile's reads of the targets are done
        SyncPipes<HardEvent::S_MTE2>();
        DataCopyExtParams in(1, n * sizeof(Target), 0, 0, 0);
        DataCopyPad(tg, targetGm_[r0], in, DataCopyPadExtParams<Target>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        SyncPipes<HardEvent::MTE2_S>();
        const float ignore = static_cast<float>(td_.ignoreIndex);
        Duplicate(targetF_, ignore, vec_);
        Cast(targetF_, tg, RoundMode::CAST_RINT, n);
        Adds(keep_, targetF_, -ignore, vec_);     // targets are integers: |t - ignore| is 0 or >= 1
        Abs(keep_, keep_, vec_);
        Mins(keep_, keep_, 1.0f, vec_);
        return tg;
    }

    // `rows` rows of `len` logits (`stride` apart in GM) in, widened to fp32 (rows `pitch` apart).
    __aicore__ inline LocalTensor<float> LoadLogits(uint64_t at, uint32_t rows, uint32_t len, uint64_t stride,
                                                    uint32_t pitch)
    {
        LocalTensor<Logit> tile = xQue_.AllocTensor<Logit>();
        const uint32_t bytes = len * sizeof(Logit);
        DataCopyExtParams in(static_cast<uint16_t>(rows), bytes,
                             rows > 1 ? static_cast<uint32_t>((stride - len) * sizeof(Logit)) : 0,
                             (pitch * sizeof(Logit) - Aligned(bytes)) / 32, 0);
        DataCopyPad(tile, xGm_[at], in, DataCopyPadExtParams<Logit>(false, 0, 0, 0));
        xQue_.EnQue(tile);
        tile = xQue_.DeQue<Logit>();
        LocalTensor<float> xf = xfBuf_.Get<float>();
        ToFloat(xf, tile, rows * pitch);
        xQue_.FreeTensor(tile);
        return xf;
    }

    // MODE_ROWS: `tileRows` whole rows, or one row in `chunks` chunks. Per row a max, the row
    // shifted by it, exp and a sum; the sums stay in UB and ln runs once per tile.
    __aicore__ inline void RowTile(uint64_t unit)
    {
        const uint64_t r0 = unit * td_.tileRows;
        const uint32_t nr = static_cast<uint32_t>(td_.rows - r0 < td_.tileRows ? td_.rows - r0 : td_.tileRows);
        LocalTensor<Target> tg = LoadTargets(r0, nr);
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> slots = slotBuf_.Get<float>();
        LocalTensor<float> chunkSum = slots[vec_ * SLOT_FLOATS];
        LocalTensor<float> scale = slots[(vec_ + 1) * SLOT_FLOATS];
        for (uint32_t r = 0; r < nr; ++r) {
            const int64_t t = static_cast<int64_t>(tg.GetValue(r));
            LocalTensor<float> rowSum = slots[r * SLOT_FLOATS];
            float m = 0.0f;                       // the running max of the row
            float picked = 0.0f;                  // its target's logit (none when ignored)
            for (uint32_t k = 0; k < td_.chunks; ++k) {
                const uint64_t c0 = static_cast<uint64_t>(k) * td_.chunk;
                const uint32_t len = static_cast<uint32_t>(td_.classes - c0 < td_.chunk ? td_.classes - c0 : td_.chunk);
                if (td_.chunks > 1 || r == 0) {
                    tile_ = LoadLogits((r0 + r) * td_.classes + c0, td_.chunks > 1 ? 1 : nr, len, td_.classes, td_.pitch);
                }
                LocalTensor<float> row = td_.chunks > 1 ? tile_ : tile_[r * td_.pitch];
                ReduceMax(work_, row, tmp, static_cast<int32_t>(len));
                SyncPipes<HardEvent::V_S>();
                const float cm = work_.GetValue(0);
                const float mNew = k == 0 || cm > m ? cm : m;
                if (t >= static_cast<int64_t>(c0) && t < static_cast<int64_t>(c0 + len)) {
                    picked = row.GetValue(static_cast<uint32_t>(t - static_cast<int64_t>(c0)));
                }
                SyncPipes<HardEvent::S_V>();
                Adds(row, row, -mNew, static_cast<int32_t>(len));
                Exp(row, row, static_cast<int32_t>(len));
                if (k == 0) {
                    ReduceSum(rowSum, row, tmp, static_cast<int32_t>(len));
                } else {
                    // the running sum rescaled to the new max: sum * exp(m - mNew) + this chunk's sum
                    ReduceSum(chunkSum, row, tmp, static_cast<int32_t>(len));
                    Duplicate(scale, m - mNew, SLOT_FLOATS);
                    Exp(scale, scale, SLOT_FLOATS);
                    Mul(rowSum, rowSum, scale, 1);
                    Add(rowSum, rowSum, chunkSum, 1);
                }
                m = mNew;
            }
            shift_.SetValue(r, m - picked);
        }
        SyncPipes<HardEvent::S_V>();
        // loss = ln(sum of exp) + max - picked: the rows' sums packed from their slots by one Gather
        Gather(sum_, slots, slotTable_.ReinterpretCast<uint32_t>(), 0, nr);
        Ln(sum_, sum_, nr);
        Add(work_, sum_, shift_, nr);
        FinishTile(work_, r0, nr);
    }

    // MODE_COLUMNS: one image n, a block of positions, every class chunk in turn (the classes of a
    // position are S apart in GM: one strided copy brings a chunk's class rows).
    __aicore__ inline void ColumnTile(uint64_t unit)
    {
        const uint64_t n = unit / td_.blocksPerImage;
        const uint64_t p0 = (unit % td_.blocksPerImage) * td_.lanes;
        const uint32_t np = static_cast<uint32_t>(td_.spatial - p0 < td_.lanes ? td_.spatial - p0 : td_.lanes);
        const uint64_t r0 = n * td_.spatial + p0;
        LoadTargets(r0, np);
        for (uint32_t k = 0; k < td_.chunks; ++k) {
            const uint64_t c0 = static_cast<uint64_t>(k) * td_.chunk;
            const uint32_t cc = static_cast<uint32_t>(td_.classes - c0 < td_.chunk ? td_.classes - c0 : td_.chunk);
            LocalTensor<float> xf = LoadLogits((n * td_.classes + c0) * td_.spatial + p0, cc, np, td_.spatial, td_.lanes);
            ClassChunk(xf, c0, cc, k);
        }
        LossPerPosition(r0, np);
    }

    // MODE_SHORT: `lanes` whole rows in one burst; one Gather transposes them so that class c of
    // row j is lane j of class row c, and the rows are computed as positions.
    __aicore__ inline void ShortTile(uint64_t unit)
    {
        const uint64_t r0 = unit * td_.lanes;
        const uint32_t nr = static_cast<uint32_t>(td_.rows - r0 < td_.lanes ? td_.rows - r0 : td_.lanes);
        LoadTargets(r0, nr);
        LocalTensor<Logit> tile = xQue_.AllocTensor<Logit>();
        DataCopyExtParams in(1, static_cast<uint32_t>(nr * td_.classes * sizeof(Logit)), 0, 0, 0);
        DataCopyPad(tile, xGm_[r0 * td_.classes], in, DataCopyPadExtParams<Logit>(false, 0, 0, 0));
        xQue_.EnQue(tile);
        tile = xQue_.DeQue<Logit>();
        const uint32_t elems = td_.chunk * td_.lanes;
        LocalTensor<uint32_t> table = tableBuf_.Get<uint32_t>();
        LocalTensor<float> xf = xfBuf_.Get<float>();
        if constexpr (sizeof(Logit) == 4) {
            Gather(xf, tile.template ReinterpretCast<float>(), table, 0, elems);
        } else {
            LocalTensor<LogitBits> bits = bitsBuf_.Get<LogitBits>();
            Gather(bits, tile.template ReinterpretCast<LogitBits>(), table, 0, elems);
            ToFloat(xf, bits.template ReinterpretCast<Logit>(), elems);
        }
        xQue_.FreeTensor(tile);
        ClassChunk(xf, 0, td_.chunk, 0);
        LossPerPosition(r0, nr);
    }

    // A class-major chunk (cc class rows of `lanes` positions, classes c0..c0+cc) into the running
    // max_, sum_ and pick_ of every position.
    __aicore__ inline void ClassChunk(const LocalTensor<float>& xf, uint64_t c0, uint32_t cc, uint32_t k)
    {
        const uint32_t lanes = td_.lanes;
        LocalTensor<float> fold = foldBuf_.Get<float>();
        FoldRows<true>(fold, xf, cc, lanes);                      // the chunk's max per position
        if (k == 0) {
            Adds(max_, fold, 0.0f, lanes);
            Duplicate(sum_, 0.0f, lanes);
        } else {
            Max(fold, fold, max_, lanes);
            Sub(work_, max_, fold, lanes);                        // sum *= exp(max - max')
            Exp(work_, work_, lanes);
            Mul(sum_, sum_, work_, lanes);
            Adds(max_, fold, 0.0f, lanes);
        }
        PickLogits(xf, c0, cc, k);
        SubPerPosition(xf, max_, cc, lanes);
        Exp(xf, xf, classRows_ * lanes);
        FoldRows<false>(xf, xf, cc, lanes);                       // the chunk's sum of exp per position
        Add(sum_, sum_, xf, lanes);
    }

    // The target's logit of every position whose target falls in this chunk: one Gather at byte
    // (t - c0) * lanes * 4 + lane * 4 of the tile (t clamped into the chunk, so every read stays in it).
    __aicore__ inline void PickLogits(const LocalTensor<float>& xf, uint64_t c0, uint32_t cc, uint32_t k)
    {
        const uint32_t lanes = td_.lanes;
        const float first = static_cast<float>(c0);
        Adds(offF_, targetF_, -first, lanes);
        Maxs(offF_, offF_, 0.0f, lanes);
        Mins(offF_, offF_, static_cast<float>(cc - 1), lanes);
        Muls(offF_, offF_, static_cast<float>(lanes * sizeof(float)), lanes);
        Add(offF_, offF_, laneBytes_, lanes);
        Cast(off32_, offF_, RoundMode::CAST_RINT, lanes);
        if (td_.chunks == 1) {
            Gather(pick_, xf, off32_.ReinterpretCast<uint32_t>(), 0, lanes);
            return;
        }
        Gather(work_, xf, off32_.ReinterpretCast<uint32_t>(), 0, lanes);
        // in the chunk: min(max(t - c0 + 1, 0), 1) * min(max(c0 + cc - t, 0), 1) (integer targets)
        Adds(offF_, targetF_, 1.0f - first, lanes);
        Maxs(offF_, offF_, 0.0f, lanes);
        Mins(offF_, offF_, 1.0f, lanes);
        Mul(work_, work_, offF_, lanes);
        Muls(offF_, targetF_, -1.0f, lanes);
        Adds(offF_, offF_, first + static_cast<float>(cc), lanes);
        Maxs(offF_, offF_, 0.0f, lanes);
        Mins(offF_, offF_, 1.0f, lanes);
        Mul(work_, work_, offF_, lanes);
        if (k == 0) {
            Adds(pick_, work_, 0.0f, lanes);
        } else {
            Add(pick_, pick_, work_, lanes);
        }
    }

    // loss = max + ln(sum of exp) - picked for the tile's `n` positions.
    __aicore__ inline void LossPerPosition(uint64_t r0, uint32_t n)
    {
        Ln(work_, sum_, td_.lanes);
        Add(work_, work_, max_, td_.lanes);
        Sub(work_, work_, pick_, td_.lanes);
        FinishTile(work_, r0, n);
    }

    // The tile's `n` losses (ignored targets zeroed) out, or summed into this core's partial.
    __aicore__ inline void FinishTile(const LocalTensor<float>& loss, uint64_t r0, uint32_t n)
    {
        Mul(loss, loss, keep_, n);
        if (td_.reduction == REDUCE_NONE) {
            StoreLosses(loss, r0, n);
            return;
        }
        LocalTensor<float> part = partBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        ReduceSum(part, loss, tmp, static_cast<int32_t>(n));
        ReduceSum(part[PARTIAL_FLOATS], keep_, tmp, static_cast<int32_t>(n));
        SyncPipes<HardEvent::V_S>();
        partialSum_ += part.GetValue(0);
        partialCount_ += part.GetValue(PARTIAL_FLOATS);
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
    // core order (the same bits every run) and writes the loss.
    __aicore__ inline void Combine()
    {
        LocalTensor<float> slot = partBuf_.Get<float>()[2 * PARTIAL_FLOATS];
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
        LocalTensor<float> loss = partBuf_.Get<float>()[3 * PARTIAL_FLOATS];
        loss.SetValue(0, td_.reduction == REDUCE_MEAN ? total / count : total);
        SyncPipes<HardEvent::S_V>();
        StoreLosses(loss, 0, 1);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> xQue_;
    TBuf<QuePosition::VECCALC> xfBuf_;        // the fp32 tile
    TBuf<QuePosition::VECCALC> foldBuf_;      // class-major: the halving max
    TBuf<QuePosition::VECCALC> tableBuf_;     // short rows: the transpose's byte offsets
    TBuf<QuePosition::VECCALC> bitsBuf_;      // short rows, 16-bit logits: the transposed bits
    TBuf<QuePosition::VECCALC> slotBuf_;      // rows: a 32-byte slot per row's sum of exp
    TBuf<QuePosition::VECCALC> statBuf_;
    TBuf<QuePosition::VECCALC> tmpBuf_;
    TBuf<QuePosition::VECCALC> partBuf_;
    TBuf<QuePosition::VECCALC> targetBuf_;
    TBuf<QuePosition::VECCALC> yBuf_;
    LocalTensor<float> tile_;
    LocalTensor<float> targetF_;              // the targets as fp32 (class indices are exact)
    LocalTensor<float> keep_;                 // 1 where the target is not ignore_index
    LocalTensor<float> pick_;                 // class-major: the target's logit per position
    LocalTensor<float> max_;                  // class-major: the running max per position
    LocalTensor<float> sum_;                  // the running sum of exp(x - max)
    LocalTensor<float> work_;
    LocalTensor<float> offF_;
    LocalTensor<float> shift_;                // rows: max - picked per row
    LocalTensor<float> laneBytes_;            // class-major: lane * 4
    LocalTensor<int32_t> off32_;
    LocalTensor<int32_t> slotTable_;          // rows: r * 32, the byte offset of row r's slot
    GlobalTensor<Logit> xGm_;
    GlobalTensor<Target> targetGm_;
    GlobalTensor<Logit> yGm_;
    GlobalTensor<float> partialGm_;
    @T@ td_;
    uint32_t vec_ = 64;
    uint32_t classRows_ = 0;
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
    if (td->ignoreIndex > (1LL << 24) || td->ignoreIndex < -(1LL << 24)) {
        return ge::GRAPH_FAILED;   // targets are compared as fp32: exact within 2^24
    }
    const uint64_t images = static_cast<uint64_t>(xShape.GetDim(0));
    td->classes = static_cast<uint64_t>(xShape.GetDim(1));
    td->spatial = 1;
    for (int32_t d = 2; d < rank; ++d) {
        td->spatial *= static_cast<uint64_t>(xShape.GetDim(d));
    }
    td->rows = images * td->spatial;
    if (td->classes == 0 || td->rows == 0 || td->classes > (1ULL << 24) ||
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
    // per statistic lane: NUM_STATS fp32 vectors, a target, a loss out and reduction scratch
    const uint64_t statBytes = NUM_STATS * 4 + 8 + eb + 4;
    // short rows: per tile row, its logits queued, transposed (16-bit: as bits too), fp32, the
    // transpose's offset and the halving max
    const uint64_t shortRowBytes = td->classes * (td->bufferNum * eb + (eb < 4 ? eb : 0) + 4 + 4 + 2) + statBytes;

    if (td->spatial == 1 && td->classes <= 128 && 64 * shortRowBytes <= budget) {
        // short rows: rows become positions of a class-major tile (a few instructions per tile
        // instead of a max, exp, sum and a scalar round trip per row)
        td->mode = MODE_SHORT;
        uint64_t lanes = budget / shortRowBytes / 64 * 64;
        const uint64_t capLanes = cap / td->classes / 64 * 64;
        lanes = capLanes < lanes ? capLanes : lanes;
        const uint64_t share = up((td->rows + coreNum - 1) / coreNum, 64);   // every core gets rows
        lanes = share < lanes ? share : lanes;
        lanes = lanes > 8192 ? 8192 : (lanes < 64 ? 64 : lanes);
        td->lanes = static_cast<uint32_t>(lanes);
        td->chunk = static_cast<uint32_t>(td->classes);
        td->chunks = 1;
        td->units = (td->rows + lanes - 1) / lanes;
    } else if (td->spatial == 1) {
        // long rows: whole rows when one fits beside its statistics, else chunks of one row
        td->mode = MODE_ROWS;
        const uint64_t perElem = td->bufferNum * eb + 4;           // queued logits + their fp32 copy
        uint64_t chunk = td->classes < cap ? td->classes : cap;
        while (chunk > 64 && up(chunk, 64) * (perElem + 4) + 64 * (statBytes + 32) > budget) {
            chunk = (chunk + 1) / 2;
        }
        td->chunk = static_cast<uint32_t>(chunk);
        td->chunks = static_cast<uint32_t>((td->classes + chunk - 1) / chunk);
        td->pitch = static_cast<uint32_t>(up(chunk, 64));
        uint64_t rows = 1;
        if (td->chunks == 1) {
            // per row: its logits, its statistic lanes and its 32-byte slot; the scratch is one row
            rows = (budget - td->pitch * 4 - 64 * (statBytes + 32)) / (td->pitch * perElem + statBytes + 32);
            rows = rows > 4032 ? 4032 : (rows == 0 ? 1 : rows);
            const uint64_t perCore = (td->rows + coreNum - 1) / coreNum;
            rows = rows > perCore ? perCore : rows;
        }
        td->tileRows = static_cast<uint32_t>(rows);
        td->units = (td->rows + rows - 1) / rows;
    } else {
        // columns: a block of positions (vector lanes) x a chunk of classes. A class row of the
        // block is one burst of the copy: wide blocks make long bursts (under 512 bytes a burst
        // moves slowly), narrow ones (down to one 32-byte block) give every core a unit, but HBM
        // saturates once about a third of the cores stream. Take the width with the least work on
        // the busiest core: its vector work plus its copies, slowed by short bursts (up to 8x) and
        // by the cores sharing HBM.
        td->mode = MODE_COLUMNS;
        const uint64_t minLanes = 32 / eb;
        uint64_t lanes = 0;
        uint64_t least = ~0ULL;
        for (uint64_t l = up(td->spatial < 256 ? td->spatial : 256, 64);; l = l > 64 ? l - 64 : l / 2) {
            const uint64_t units = images * ((td->spatial + l - 1) / l);
            const uint64_t perCore = (units + coreNum - 1) / coreNum;
            const uint64_t burst = (l < td->spatial ? l : td->spatial) * eb;
            const uint64_t slow = burst >= 512 ? 1 : ((512 + burst - 1) / burst > 8 ? 8 : (512 + burst - 1) / burst);
            const uint64_t active = units < coreNum ? units : coreNum;
            const uint64_t saturated = coreNum / 3 > 0 ? coreNum / 3 : 1;
            const uint64_t work = perCore * l * (saturated + slow * (active > saturated ? active : saturated));
            if (work < least) {
                least = work;
                lanes = l;
            }
            if (l <= minLanes) {
                break;
            }
        }
        // per class row: its logits queued, fp32, half a row of the halving max
        const uint64_t perClass = lanes * (td->bufferNum * eb + 4 + 2);
        const uint64_t fixed = up(lanes, 64) * statBytes + 4096;
        if (fixed + 8 * perClass > budget) {
            return ge::GRAPH_FAILED;
        }
        uint64_t chunk = (budget - fixed) / perClass;
        chunk = lanes < 64 ? chunk / 8 * 8 : chunk;               // narrow tiles compute 8 class rows a repeat
        const uint64_t capRows = cap / lanes > 8 ? cap / lanes : 8;
        chunk = chunk > capRows ? capRows : chunk;
        chunk = chunk > 4088 ? 4088 : chunk;                      // a copy's 16-bit row count
        chunk = chunk > td->classes ? td->classes : chunk;
        td->lanes = static_cast<uint32_t>(lanes);
        td->chunk = static_cast<uint32_t>(chunk);
        td->chunks = static_cast<uint32_t>((td->classes + chunk - 1) / chunk);
        td->blocksPerImage = static_cast<uint32_t>((td->spatial + lanes - 1) / lanes);
        td->units = images * td->blocksPerImage;
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
