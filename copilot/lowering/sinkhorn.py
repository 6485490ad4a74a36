"""Iterative row / column normalisation of small matrices (Sinkhorn-Knopp, mhc_sinkhorn):

    x = exp(x - rowmax(x)); x = x / rowsum(x) + eps; x = x / (colsum(x) + eps)      (first round)
    repeat k times: x = x / (rowsum(x) + eps); x = x / (colsum(x) + eps)

over the last two axes of x ([..., R, C], every leading dim one matrix). The golden is recognised
from its traced graph (the first round, then k copies of the loop body); k follows an int attr
(`k = attr - 1`) and eps a float attr, both read in the tiling function, so one kernel serves
every iteration count and eps.

The kernel keeps a tile of T matrices resident in UB for all the rounds. The matrices are tiny
(R, C <= 16), so the tile is transposed once by a Gather into position-major order: element
(i, j) of the T matrices is one vector of T lanes. A row sum is then C - 1 vector adds over T
lanes, a column sum R - 1 adds over C T lanes (a whole row of positions at once), and the
divisions are vector ops of the same widths; a second Gather puts the tile back in matrix order.
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
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
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
    if plan.eps_rule[0] == "attr":
        eps = (f"    const float* epsAttr = attrs->GetAttrPointer<float>({names.index(plan.eps_rule[1])});   // `{plan.eps_rule[1]}`\n"
               f"    if (epsAttr == nullptr) {{\n"
               f"        return ge::GRAPH_FAILED;\n"
               f"    }}\n"
               f"    td->eps = *epsAttr;\n")
        eps_doc = f"`{plan.eps_rule[1]}`"
    else:
        eps = f"    td->eps = {float(plan.eps_rule[1])!r}f;\n"
        eps_doc = repr(plan.eps_rule[1])
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
// A tile of T matrices stays in UB for every round. It is transposed once by a Gather into
// position-major order, x[(i * C + j) * T + b] = element (i, j) of matrix b, so each position
// is one vector of T lanes: row statistics are vectors of T lanes, column statistics one vector
// of C * T lanes, and every step is a few vector ops. A second Gather restores matrix order.
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
@UNIT_RANGE@        lanes_ = td_.positions * td_.tileMatrices;
        pipe_.InitBuffer(tileBuf_, lanes_ * sizeof(float));        // matrix order (GM layout)
        pipe_.InitBuffer(posBuf_, lanes_ * sizeof(float));         // position-major order
        pipe_.InitBuffer(toPosBuf_, lanes_ * sizeof(uint32_t));
        pipe_.InitBuffer(toTileBuf_, lanes_ * sizeof(uint32_t));
        pipe_.InitBuffer(statBuf_, td_.cols * td_.tileMatrices * sizeof(float));
        tile_ = tileBuf_.Get<float>();
        pos_ = posBuf_.Get<float>();
        stat_ = statBuf_.Get<float>();
        // toPos_[(i C + j) T + b] = byte offset of element (i, j) of matrix b in the tile (b P + i C + j)
        BuildTable(toPosBuf_.Get<uint32_t>(), td_.tileMatrices, td_.positions);
        // toTile_[b P + c] = byte offset of the same element in position-major order (c T + b)
        BuildTable(toTileBuf_.Get<uint32_t>(), td_.positions, td_.tileMatrices);
        Duplicate(tile_, 0.0f, lanes_);           // a short last tile computes on zeros, never stored
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            const uint64_t m0 = (unitStart_ + u) * td_.tileMatrices;
            const uint64_t left = td_.matrices - m0;
            const uint32_t count = static_cast<uint32_t>(left < td_.tileMatrices ? left : td_.tileMatrices);
            const uint32_t len = count * td_.positions;
            SyncPipes<HardEvent::MTE3_MTE2>();     // the previous tile is out of tile_
            SyncPipes<HardEvent::V_MTE2>();
            DataCopyExtParams io(1, len * sizeof(float), 0, 0, 0);
            DataCopyPad(tile_, xGm_[m0 * td_.positions], io, DataCopyPadExtParams<float>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            Gather(pos_, tile_, toPosBuf_.Get<uint32_t>(), 0, lanes_);
            Normalise();
            Gather(tile_, pos_, toTileBuf_.Get<uint32_t>(), 0, lanes_);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyPad(yGm_[m0 * td_.positions], tile_, io);
        }
    }

private:
    // lane L of a (major x minor) grid, L = a * minor + r, holds the byte offset 4 (a + r * major).
    __aicore__ inline void BuildTable(const LocalTensor<uint32_t>& table, uint32_t minor, uint32_t major)
    {
        LocalTensor<float> idx = tileBuf_.Get<float>();
        LocalTensor<float> a = posBuf_.Get<float>();
        LocalTensor<int32_t> whole = table.ReinterpretCast<int32_t>();
        CreateVecIndex(idx, 0.0f, lanes_);
        Adds(a, idx, 0.5f, lanes_);
        Muls(a, a, 1.0f / static_cast<float>(minor), lanes_);
        Cast(whole, a, RoundMode::CAST_FLOOR, lanes_);                   // a = floor((L + 0.5) / minor)
        Cast(a, whole, RoundMode::CAST_RINT, lanes_);
        Muls(idx, a, -static_cast<float>(minor), lanes_);
        CreateVecIndex(table.ReinterpretCast<float>(), 0.0f, lanes_);
        Add(idx, idx, table.ReinterpretCast<float>(), lanes_);           // r = L - a minor
        Muls(idx, idx, static_cast<float>(major), lanes_);
        Add(idx, idx, a, lanes_);
        Muls(idx, idx, static_cast<float>(sizeof(float)), lanes_);
        Cast(whole, idx, RoundMode::CAST_RINT, lanes_);                  // exact: offsets < 2^24
    }

    __aicore__ inline LocalTensor<float> At(uint32_t i, uint32_t j)
    {
        return pos_[(i * td_.cols + j) * td_.tileMatrices];
    }

    // Every round on the resident tile (position-major).
    __aicore__ inline void Normalise()
    {
        const uint32_t T = td_.tileMatrices;
        // first round: a stable row softmax plus eps, then a column normalisation
        for (uint32_t i = 0; i < td_.rows; ++i) {
            Adds(stat_, At(i, 0), 0.0f, T);
            for (uint32_t j = 1; j < td_.cols; ++j) {
                Max(stat_, stat_, At(i, j), T);
            }
            for (uint32_t j = 0; j < td_.cols; ++j) {
                Sub(At(i, j), At(i, j), stat_, T);
            }
        }
        Exp(pos_, pos_, lanes_);
        RowNormalise(false);
        Adds(pos_, pos_, td_.eps, lanes_);
        ColumnNormalise();
        for (uint32_t k = 0; k < td_.loops; ++k) {
            RowNormalise(true);
            ColumnNormalise();
        }
    }

    // x[i, j] /= rowsum(x)[i] (+ eps): C - 1 adds and C divisions of T lanes per row
    __aicore__ inline void RowNormalise(bool addEps)
    {
        const uint32_t T = td_.tileMatrices;
        for (uint32_t i = 0; i < td_.rows; ++i) {
            Adds(stat_, At(i, 0), addEps ? td_.eps : 0.0f, T);
            for (uint32_t j = 1; j < td_.cols; ++j) {
                Add(stat_, stat_, At(i, j), T);
            }
            for (uint32_t j = 0; j < td_.cols; ++j) {
                Div(At(i, j), At(i, j), stat_, T);
            }
        }
    }

    // x[i, :] /= colsum(x) + eps: the C positions of a row are one vector of C T lanes
    __aicore__ inline void ColumnNormalise()
    {
        const uint32_t width = td_.cols * td_.tileMatrices;
        Adds(stat_, At(0, 0), td_.eps, width);
        for (uint32_t i = 1; i < td_.rows; ++i) {
            Add(stat_, stat_, At(i, 0), width);
        }
        for (uint32_t i = 0; i < td_.rows; ++i) {
            Div(At(i, 0), At(i, 0), stat_, width);
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> tileBuf_;
    TBuf<QuePosition::VECCALC> posBuf_;
    TBuf<QuePosition::VECCALC> toPosBuf_;
    TBuf<QuePosition::VECCALC> toTileBuf_;
    TBuf<QuePosition::VECCALC> statBuf_;
    LocalTensor<float> tile_;
    LocalTensor<float> pos_;
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
    // per matrix of a tile: both orders, both tables (4 x P fp32 words) and C words of statistics;
    // T: the UB's worth, at most one tile per core, a multiple of 8 (32-byte aligned positions)
    const uint64_t perMatrix = (4 * static_cast<uint64_t>(td->positions) + td->cols) * sizeof(float);
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
