"""Iterative row / column normalisation of small matrices (Sinkhorn-Knopp, mhc_sinkhorn):

    x = exp(x - rowmax(x)); x = x / rowsum(x) + eps; x = x / (colsum(x) + eps)      (first round)
    repeat k times: x = x / (rowsum(x) + eps); x = x / (colsum(x) + eps)

over the last two axes of x ([..., R, C], every leading dim one matrix). The golden is recognised
from its traced graph (the first round, then k copies of the loop body); k follows an int attr
(`k = attr - 1`) and eps a float attr, both read in the tiling function, so one kernel serves
every iteration count and eps.

The kernel keeps a tile of T matrices resident in UB for all the rounds. The matrices are tiny
(R, C <= 16), so the tile is kept position-major: element (i, j) of the T matrices is a block of T
lanes. Row steps run in row order (the j-th positions of every row one block of R T lanes), column
steps in column order (row i one block of C T lanes), so a statistic is C - 1 (R - 1) vector adds
over R T (C T) lanes and the divisions are vector ops of the same widths; one Gather switches
order between the steps (offset tables built once per core) and one each way to GM order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASS = {"clone", "contiguous", "alias", "detach", "_to_copy", "lift_fresh_copy"}


@dataclass
class SinkhornPlan:
    task: object
    pattern: str                      # "sinkhorn"
    rounds_rule: tuple                # ("attr", name, offset) (loops = attr + offset) | ("const", loops)
    eps_rule: tuple                   # ("attr", name) | ("const", value)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _dims(n, rank: int) -> list[int] | None:
    d = n.args[1] if len(n.args) > 1 else None
    if not isinstance(d, (list, tuple)) or len(d) != 1:
        return None
    return [d[0] % rank]


def _rounds_of(gm):
    """(loop count, eps values) when the graph is the Sinkhorn iteration above, else None."""
    calls = [n for n in gm.graph.nodes if n.op == "call_function" and _name(n) not in _PASS]
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(places) != 1:
        return None
    x = places[0]
    val = x.meta.get("val")
    if val is None or val.dim() < 2:
        return None
    rank = val.dim()
    row, col = [rank - 1], [rank - 2]
    it = iter(calls)
    eps: list[float] = []

    def take(name, *args, dims=None):
        n = next(it, None)
        if n is None or _name(n) != name:
            raise LookupError
        if dims is not None:
            if _dims(n, rank) != dims or not (len(n.args) > 2 and n.args[2] is True):
                raise LookupError
            args = args[:1]
        for a, want in zip(n.args, args):
            if want == "eps":
                if not isinstance(a, float):
                    raise LookupError
                eps.append(a)
            elif a is not want:
                raise LookupError
        return n

    try:
        m = take("amax", x, dims=row)
        e = take("exp", take("sub", x, m))
        d = take("div", e, take("sum", e, dims=row))
        cur = take("add", d, "eps")
        cur = take("div", cur, take("add", take("sum", cur, dims=col), "eps"))
        loops = 0
        while True:
            n = next(it, None)
            if n is None:
                break
            if _name(n) != "sum" or n.args[0] is not cur or _dims(n, rank) != row:
                return None
            cur = take("div", cur, take("add", n, "eps"))
            cur = take("div", cur, take("add", take("sum", cur, dims=col), "eps"))
            loops += 1
    except LookupError:
        return None
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    if out is not cur or len(set(eps)) != 1:
        return None
    return loops, eps[0]


def plan_sinkhorn(task):
    """The Sinkhorn plan of `task`, or None when its golden is not the iteration above."""
    from copilot.lowering.capture import SENTINELS, trace

    if len(task.inputs) != 1 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        first = _rounds_of(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    # the graph depends on the rank and the attrs only: one trace per distinct pair
    def key(c):
        return len(c.shapes[0]), repr(sorted(c.attrs.items()))
    by_key = {key(task.cases[0]): first}
    found = []
    for c in task.cases:
        if key(c) not in by_key:
            by_key[key(c)] = _rounds_of(trace(task, c))
        f = by_key[key(c)]
        if f is None:
            raise Unsupported(f"{task.name}: case {c.id} is not the Sinkhorn iteration case "
                              f"{task.cases[0].id} is")
        if c.dtypes[0] != "float32":
            raise Unsupported(f"{task.name}: case {c.id} has {c.dtypes[0]} data; the Sinkhorn kernel is fp32")
        found.append(f)
    # attrs are moved on the case with the fewest rounds (the shortest traces)
    rep = task.cases[min(range(len(found)), key=lambda i: found[i][0])]
    loops0 = min(f[0] for f in found)
    rounds = None
    for a in task.attrs:
        if a.type != "int":
            continue
        vals = [c.attrs.get(a.name, a.default) for c in task.cases]
        offsets = {f[0] - v for f, v in zip(found, vals) if isinstance(v, int)}
        if len(offsets) == 1 and len(vals) == len(task.cases):
            moved = _rounds_of(trace(task, rep, {**rep.attrs, a.name: rep.attrs.get(a.name, a.default) + 1}))
            if moved is not None and moved[0] == loops0 + 1:
                rounds = ("attr", a.name, offsets.pop())
                break
    if rounds is None:
        if len({f[0] for f in found}) != 1:
            raise Unsupported(f"{task.name}: the round count varies between cases and no int attr gives it")
        rounds = ("const", found[0][0])
    eps = None
    for a in task.attrs:
        if a.type == "float" and all(c.attrs.get(a.name, a.default) == f[1] for c, f in zip(task.cases, found)):
            moved = _rounds_of(trace(task, rep, {**rep.attrs, a.name: SENTINELS[0]}))
            if moved is not None and moved[1] == SENTINELS[0]:
                eps = ("attr", a.name)
                break
    if eps is None:
        if len({f[1] for f in found}) != 1:
            raise Unsupported(f"{task.name}: eps varies between cases and no float attr gives it")
        eps = ("const", found[0][1])
    return SinkhornPlan(task, "sinkhorn", rounds, eps)


def render(plan: SinkhornPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split, float_attr_field
    from copilot.lowering.source import _dtype_bytes_fn, _ident

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]
    if plan.rounds_rule[0] == "attr":
        _, name, off = plan.rounds_rule
        rounds = (f"    const int64_t* roundsAttr = attrs->GetAttrPointer<int64_t>({names.index(name)});   // `{name}`\n"
                  f"    if (roundsAttr == nullptr || *roundsAttr + ({off}) < 0) {{\n"
                  f"        return ge::GRAPH_FAILED;\n"
                  f"    }}\n"
                  f"    td->loops = static_cast<uint32_t>(*roundsAttr + ({off}));   // rounds after the first\n")
        rounds_doc = f"`{name}` {'-' if off < 0 else '+'} {abs(off)}"
    else:
        rounds = f"    td->loops = {int(plan.rounds_rule[1])};\n"
        rounds_doc = str(plan.rounds_rule[1])
    eps = float_attr_field(plan.eps_rule, names, "eps")
    eps_doc = f"`{plan.eps_rule[1]}`" if plan.eps_rule[0] == "attr" else repr(plan.eps_rule[1])
    xn, yn = t.inputs[0].name, t.outputs[0].name
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@X@", _ident(xn)), ("@Y@", _ident(yn)), ("@ROUNDS@", rounds), ("@EPS@", eps),
                     ("@ROUNDS_DOC@", rounds_doc), ("@EPS_DOC@", eps_doc), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     # vector work: about four ops per element and round
                     ("@SPLIT@", core_split(knobs, "td->matrices * td->positions * 4 * (td->loops + 1)", "td->units")),
                     ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: Sinkhorn-Knopp on every R x C matrix of the last two axes of @X@ (fp32):
//   x = exp(x - rowmax(x)); x = x / rowsum(x) + eps; x = x / (colsum(x) + eps)
//   then `loops` times: x = x / (rowsum(x) + eps); x = x / (colsum(x) + eps)
// loops = @ROUNDS_DOC@, eps = @EPS_DOC@ (both from the tiling data).
// A tile of T matrices stays in UB for every round, position-major: row steps in row order
// (element (i, j) of matrix b at (j * R + i) * T + b: a row statistic is one vector of R * T
// lanes), column steps in column order ((i * C + j) * T + b: a column statistic is one vector of
// C * T lanes). One Gather switches order between steps, one each way to and from GM order.
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t rows;                      // R
    uint32_t cols;                      // C
    uint32_t positions;                 // R * C
    uint32_t tileMatrices;              // T: matrices per tile (a multiple of 8)
    uint32_t loops;                     // rounds after the first
    uint32_t blockDim;
    float eps;
    uint64_t matrices;                  // every leading position of @X@
    uint64_t units;                     // tiles
    uint64_t formerNum;                 // cores taking formerUnits tiles; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(xAddr), td_.matrices * td_.positions);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(yAddr), td_.matrices * td_.positions);
@UNIT_RANGE@        const uint32_t R = td_.rows, C = td_.cols, T = td_.tileMatrices, P = td_.positions;
        lanes_ = P * T;
        pipe_.InitBuffer(byRowBuf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(byColBuf_, lanes_ * sizeof(float));
        for (uint32_t k = 0; k < 4; ++k) {
            pipe_.InitBuffer(tableBuf_[k], lanes_ * sizeof(uint32_t));
        }
        pipe_.InitBuffer(statBuf_, (R > C ? R : C) * T * sizeof(float));
        byRow_ = byRowBuf_.Get<float>();
        byCol_ = byColBuf_.Get<float>();
        stat_ = statBuf_.Get<float>();
        // Element (i, j) of matrix b sits at b P + i C + j in GM order, (j R + i) T + b in row order
        // (the C positions of a row are C blocks of R T lanes apart), (i C + j) T + b in column
        // order. Each table gives, per lane of its destination, the source's byte offset.
        BuildTable(Table(GM_TO_ROWS), R, T, 1, C, P);            // dst (j, i, b) <- GM order
        BuildTable(Table(ROWS_TO_COLS), C, T, T, R * T, 1);      // dst (i, j, b) <- row order
        BuildTable(Table(COLS_TO_ROWS), R, T, T, C * T, 1);      // dst (j, i, b) <- column order
        BuildTable(Table(COLS_TO_GM), R, C, 1, C * T, T);        // dst (b, i, j) <- column order
        Duplicate(byCol_, 0.0f, lanes_);          // a short last tile computes on zeros, never stored
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            const uint64_t m0 = (unitStart_ + u) * td_.tileMatrices;
            const uint64_t left = td_.matrices - m0;
            const uint32_t count = static_cast<uint32_t>(left < td_.tileMatrices ? left : td_.tileMatrices);
            const uint32_t len = count * td_.positions;
            SyncPipes<HardEvent::MTE3_V>();        // the previous tile is out of byRow_
            SyncPipes<HardEvent::V_MTE2>();
            DataCopyExtParams io(1, len * sizeof(float), 0, 0, 0);
            DataCopyPad(byCol_, xGm_[m0 * td_.positions], io, DataCopyPadExtParams<float>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            Gather(byRow_, byCol_, Table(GM_TO_ROWS), 0, lanes_);
            Normalise();
            Gather(byRow_, byCol_, Table(COLS_TO_GM), 0, lanes_);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyPad(yGm_[m0 * td_.positions], byRow_, io);
        }
    }

private:
    static constexpr uint32_t GM_TO_ROWS = 0;
    static constexpr uint32_t ROWS_TO_COLS = 1;
    static constexpr uint32_t COLS_TO_ROWS = 2;
    static constexpr uint32_t COLS_TO_GM = 3;

    __aicore__ inline LocalTensor<uint32_t> Table(uint32_t k)
    {
        return tableBuf_[k].Get<uint32_t>();
    }

    // Destination lane L = (u n1 + v) n2 + w holds the source's byte offset 4 (cu u + cv v + cw w).
    // In fp32 (every value an integer below 2^24), floor((x + 0.5) / n) by CAST_FLOOR; the table
    // itself is the scratch of the casts.
    __aicore__ inline void BuildTable(const LocalTensor<uint32_t>& table, uint32_t n1, uint32_t n2, uint32_t cu,
                                      uint32_t cv, uint32_t cw)
    {
        LocalTensor<float> lane = byRow_;
        LocalTensor<float> q = byCol_;
        LocalTensor<float> t = table.ReinterpretCast<float>();
        LocalTensor<int32_t> ti = table.ReinterpretCast<int32_t>();
        CreateVecIndex(lane, 0.0f, lanes_);
        Adds(t, lane, 0.5f, lanes_);
        Muls(t, t, 1.0f / static_cast<float>(n2), lanes_);
        Cast(ti, t, RoundMode::CAST_FLOOR, lanes_);
        Cast(q, ti, RoundMode::CAST_RINT, lanes_);                      // q = floor(L / n2) = u n1 + v
        Axpy(lane, q, -static_cast<float>(n2), lanes_);                 // w = L - q n2
        Muls(lane, lane, static_cast<float>(cw), lanes_);
        Adds(t, q, 0.5f, lanes_);
        Muls(t, t, 1.0f / static_cast<float>(n1), lanes_);
        Cast(ti, t, RoundMode::CAST_FLOOR, lanes_);
        Cast(t, ti, RoundMode::CAST_RINT, lanes_);                      // u = floor(q / n1)
        Axpy(q, t, -static_cast<float>(n1), lanes_);                    // v = q - u n1
        Axpy(lane, q, static_cast<float>(cv), lanes_);
        Axpy(lane, t, static_cast<float>(cu), lanes_);
        Muls(lane, lane, static_cast<float>(sizeof(float)), lanes_);
        Cast(ti, lane, RoundMode::CAST_RINT, lanes_);
    }

    // Row order: position (i, j) of the tile's matrices at (j R + i) T, so the j-th positions of
    // every row are one block of R T lanes and a row statistic is one vector of R T lanes.
    __aicore__ inline LocalTensor<float> RowBlock(uint32_t j)
    {
        return byRow_[j * td_.rows * td_.tileMatrices];
    }

    // Column order: position (i, j) at (i C + j) T, so row i is one block of C T lanes and a
    // column statistic is one vector of C T lanes.
    __aicore__ inline LocalTensor<float> ColBlock(uint32_t i)
    {
        return byCol_[i * td_.cols * td_.tileMatrices];
    }

    // Every round on the resident tile: row steps in row order, column steps in column order,
    // one Gather between them (it arrives in row order and leaves in column order).
    __aicore__ inline void Normalise()
    {
        const uint32_t width = td_.rows * td_.tileMatrices;
        // first round: a stable row softmax plus eps, then a column normalisation
        Adds(stat_, RowBlock(0), 0.0f, width);
        for (uint32_t j = 1; j < td_.cols; ++j) {
            Max(stat_, stat_, RowBlock(j), width);
        }
        for (uint32_t j = 0; j < td_.cols; ++j) {
            Sub(RowBlock(j), RowBlock(j), stat_, width);
        }
        Exp(byRow_, byRow_, lanes_);
        RowNormalise(false);
        Adds(byRow_, byRow_, td_.eps, lanes_);
        Gather(byCol_, byRow_, Table(ROWS_TO_COLS), 0, lanes_);
        ColumnNormalise();
        for (uint32_t k = 0; k < td_.loops; ++k) {
            Gather(byRow_, byCol_, Table(COLS_TO_ROWS), 0, lanes_);
            RowNormalise(true);
            Gather(byCol_, byRow_, Table(ROWS_TO_COLS), 0, lanes_);
            ColumnNormalise();
        }
    }

    // x[i, j] /= rowsum(x)[i] (+ eps): C - 1 adds and C divisions of R T lanes
    __aicore__ inline void RowNormalise(bool addEps)
    {
        const uint32_t width = td_.rows * td_.tileMatrices;
        Adds(stat_, RowBlock(0), addEps ? td_.eps : 0.0f, width);
        for (uint32_t j = 1; j < td_.cols; ++j) {
            Add(stat_, stat_, RowBlock(j), width);
        }
        for (uint32_t j = 0; j < td_.cols; ++j) {
            Div(RowBlock(j), RowBlock(j), stat_, width);
        }
    }

    // x[i, :] /= colsum(x) + eps: R - 1 adds and R divisions of C T lanes
    __aicore__ inline void ColumnNormalise()
    {
        const uint32_t width = td_.cols * td_.tileMatrices;
        Adds(stat_, ColBlock(0), td_.eps, width);
        for (uint32_t i = 1; i < td_.rows; ++i) {
            Add(stat_, stat_, ColBlock(i), width);
        }
        for (uint32_t i = 0; i < td_.rows; ++i) {
            Div(ColBlock(i), ColBlock(i), stat_, width);
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> byRowBuf_;
    TBuf<QuePosition::VECCALC> byColBuf_;
    TBuf<QuePosition::VECCALC> tableBuf_[4];
    TBuf<QuePosition::VECCALC> statBuf_;
    LocalTensor<float> byRow_;
    LocalTensor<float> byCol_;
    LocalTensor<float> stat_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    @T@ td_;
    uint32_t lanes_ = 0;
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

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr || context->GetInputDesc(0)->GetDataType() != ge::DT_FLOAT) {
        return ge::GRAPH_FAILED;   // fp32 matrices only
    }
@ROUNDS@@EPS@    const gert::Shape& xShape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(xShape.GetDimNum());
    if (rank < 2) {
        return ge::GRAPH_FAILED;
    }
    td->rows = static_cast<uint32_t>(xShape.GetDim(rank - 2));
    td->cols = static_cast<uint32_t>(xShape.GetDim(rank - 1));
    td->positions = td->rows * td->cols;
    td->matrices = 1;
    for (int32_t d = 0; d < rank - 2; ++d) {
        td->matrices *= static_cast<uint64_t>(xShape.GetDim(d));
    }
    if (td->positions == 0 || td->matrices == 0) {
        return ge::GRAPH_FAILED;
    }

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 4096) {
        return ge::GRAPH_FAILED;
    }
    // per matrix of a tile: two orders, four tables (6 x P fp32 words) and max(R, C) words of
    // statistics; T: the UB's worth, at most one tile per core, a multiple of 8 (32-byte aligned)
    const uint64_t perMatrix = (6 * static_cast<uint64_t>(td->positions) + (td->rows > td->cols ? td->rows : td->cols)) * sizeof(float);
    uint64_t T = (ubSize - reserve - 4096) / perMatrix / 8 * 8;
    const uint64_t share = (td->matrices + coreNum - 1) / coreNum;
    const uint64_t need = (share + 7) / 8 * 8;
    T = T > need ? need : T;
    if (T == 0 || T * td->positions >= (1ULL << 22)) {
        return ge::GRAPH_FAILED;   // a matrix too large for the resident tile
    }
    td->tileMatrices = static_cast<uint32_t>(T);
    td->units = (td->matrices + T - 1) / T;

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
