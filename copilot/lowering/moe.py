"""MoE gating: softmax over the experts, then the top k of each token (`moe_gating_top_k_softmax`):

    y = topk(softmax(x, -1), k).values;  expert_idx = their experts (int32; E where `finished`);
    row_idx[r, j] = j * R + r  (R tokens: the flat position of (r, j) in the transposed [k, R])

Softmax is monotonic, so the kernel selects on x itself: a tile of B tokens' expert rows (fp32
scores, -inf padding) goes through the TopK library API once; the first value of each row is its
maximum, so y = exp(v - max) / sum(exp(x - max)) needs one pass over the row for the sum. The
golden may take an optional `finished` mask (bool per token): a finished token's experts become E.
The row-index output is checked on a probe input against j * R + r when the plan is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_DTYPES = ("float16", "bfloat16", "float32")
_PASS = {"_to_copy", "clone", "contiguous", "alias", "detach"}


@dataclass
class MoeGatingPlan:
    task: object
    pattern: str                      # "moe_gating"
    k_rule: tuple                     # ("attr", name) | ("const", k)
    finished: int | None              # input position of the optional finished mask
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _trace(task, case):
    """make_fx of the golden on fake inputs of the case's shapes; absent optional inputs None."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    from copilot.lowering.capture import _torch_dtype

    mode = FakeTensorMode()
    present = [i for i, s in enumerate(case.shapes) if s is not None]
    sample = []
    for i in present:
        dt = _torch_dtype(case.dtypes[i])
        dt = torch.float32 if dt.is_floating_point else dt
        with mode:
            sample.append(torch.empty(tuple(case.shapes[i]), dtype=dt))
    kw = {k: v for k, v in case.attrs.items() if v is not None}

    def fn(*xs):
        args = {s.name: None for s in task.inputs}
        args.update({task.inputs[i].name: x for i, x in zip(present, xs)})
        return task.golden(**args, **kw)

    try:
        with torch.no_grad():
            return make_fx(fn, tracing_mode="fake")(*sample), present
    except Exception as exc:
        raise Unsupported(f"{task.name}: the golden could not be traced on case {case.id} "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]})") from None


def _gating_of(gm):
    """k when the graph is softmax(x, -1) -> topk(k, -1, largest) with (values, int32 indices
    (possibly replaced where a mask input is set), an index output that reads no input)."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    soft = [n for n in calls if _name(n) == "_softmax"]
    tops = [n for n in calls if _name(n) == "topk"]
    if len(soft) != 1 or len(tops) != 1 or not places:
        return None
    s, t = soft[0], tops[0]

    def source(v):
        while hasattr(v, "op") and v.op == "call_function" and _name(v) in _PASS:
            v = v.args[0]
        return v

    if source(s.args[0]) is not places[0] or s.args[1] not in (-1, len(s.args[0].meta["val"].shape) - 1):
        return None
    targs = list(t.args) + [None] * 4
    if source(t.args[0]) is not s or targs[2] not in (-1, None) or targs[3] is False:
        return None
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    if not isinstance(out, (list, tuple)) or len(out) != 3:
        return None
    v0 = source(out[0])
    if not (_name(v0) == "getitem" and v0.args[0] is t and v0.args[1] == 0):
        return None

    def ancestors(v):
        seen, todo = set(), [v]
        while todo:
            n = todo.pop()
            if id(n) in seen or not hasattr(n, "op"):
                continue
            seen.add(id(n))
            todo.extend(a for a in n.all_input_nodes)
            if n.op == "placeholder":
                yield n
            if n is t:
                yield t

    if any(True for _ in ancestors(out[2])):
        return None                                   # the row index is built from shapes only
    if not any(a is t for a in ancestors(out[1])):
        return None                                   # the experts are the top-k's indices
    return int(targs[1])


def plan_moe_gating(task):
    """The gating plan of `task`, or None when its golden is not softmax + top-k over experts."""
    names = [i.name for i in task.inputs]
    if len(task.outputs) != 3 or not task.cases or not 1 <= len(names) <= 2:
        return None
    if len(names) == 2 and not task.inputs[1].optional:
        return None
    try:
        gm, _ = _trace(task, task.cases[0])
    except Unsupported:
        return None
    if _gating_of(gm) is None:
        return None
    ks = []
    for case in task.cases:
        gm, present = _trace(task, case)
        k = _gating_of(gm)
        if k is None:
            raise Unsupported(f"{task.name}: case {case.id} is not the softmax + top-k the other cases are")
        ks.append(k)
    from copilot.lowering.sort import _rule

    plan = MoeGatingPlan(task, "moe_gating", _rule(task, ks, ("int",), "k"), 1 if len(names) == 2 else None)
    _check_row_index(task)
    for c, k in zip(task.cases, ks):
        e = c.shapes[0][-1]
        if c.dtypes[0] not in _DTYPES:
            plan.unserved[c.id] = f"dtype {c.dtypes[0]}"
        elif e > 4064 or len(c.shapes[0]) > 8:
            plan.unserved[c.id] = f"{e} experts: more than one TopK call (4064)"
    return plan


def _check_row_index(task):
    """The golden's third output on a probe must be j * R + r (R tokens), else not this pattern."""
    import torch

    for rank in (2, 3):
        lead = (3,) if rank == 2 else (2, 3)
        x = torch.randn(*lead, 8)
        args = {s.name: None for s in task.inputs}
        args[task.inputs[0].name] = x
        out = task.golden(**args, k=2)
        rows = x.numel() // 8
        want = (torch.arange(2).reshape(1, 2) * rows + torch.arange(rows).reshape(rows, 1)).reshape(*lead, 2)
        if out[2].shape != want.shape or not torch.equal(out[2].to(torch.int64), want):
            raise Unsupported(f"{task.name}: the third output is not the row index j * R + r of the top-k")


def render(plan: MoeGatingPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]
    k = (f"*attrs->GetAttrPointer<int64_t>({names.index(plan.k_rule[1])})" if plan.k_rule[0] == "attr"
         else str(int(plan.k_rule[1])))
    x = t.inputs[0].name
    fin = t.inputs[plan.finished].name if plan.finished is not None else None
    y, e, r = (o.name for o in t.outputs)
    args = [f"GM_ADDR {_ident(x)}"] + ([f"GM_ADDR {_ident(fin)}"] if fin else [])
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(x)), ("@ARGS@", ", ".join(args)), ("@X@", _ident(x)),
                     ("@FIN@", _ident(fin) if fin else "nullptr"), ("@Y@", _ident(y)), ("@E@", _ident(e)),
                     ("@R@", _ident(r)), ("@KVAL@", k), ("@FINPOS@", str(plan.finished or 0)),
                     ("@HASFIN@", "true" if fin else "false"),
                     ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@SYNC@", SYNC_PIPES),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@SPLIT@", core_split(knobs, "td->rows * td->experts", "units"))):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: MoE gating, y = topk(softmax(x, -1), k) with the experts' indices and the row index
// j * R + r. Softmax is monotonic: the TopK library API selects on x's fp32 scores, the first
// value of a row is its maximum, and y = exp(v - max) / sum(exp(x - max)) over the row, for a
// whole tile of rows per instruction (per-row values spread by Gathers of tables built once).
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint64_t rows;                      // R tokens
    uint32_t experts;                   // E
    uint32_t k;
    uint32_t kPitch;                    // k rounded up to 8: TopK's output row, and the int32 outputs' rows
    uint32_t outPitch;                  // k rounded up to 32: y's rows in UB
    uint32_t lanes;                     // tokens per tile (B)
    uint32_t rowPitch;                  // E rounded up to 32 (TopK's inner)
    uint32_t hasFinished;
    uint32_t tmpBytes;
    uint64_t formerNum;                 // cores taking formerUnits tiles; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    AscendC::tiling::TopkTiling topk;   // B rows x rowPitch
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR finishedAddr, GM_ADDR yAddr, GM_ADDR expertAddr,
                                GM_ADDR rowAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), td_.rows * td_.experts);
        if (td_.hasFinished) {
            finishedGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(finishedAddr), td_.rows);
        }
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(yAddr), td_.rows * td_.k);
        expertGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(expertAddr), td_.rows * td_.k);
        rowGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(rowAddr), td_.rows * td_.k);
@UNIT_RANGE@        const uint32_t tile = td_.lanes * td_.rowPitch;
        const uint32_t scores = (tile + 63) / 64 * 64;           // whole compare repeats
        pipe_.InitBuffer(rawBuf_, Bytes(tile * sizeof(Elem)));
        pipe_.InitBuffer(scoreBuf_, Bytes(scores * sizeof(float)));
        pipe_.InitBuffer(expBuf_, Bytes(scores * sizeof(float)));
        pipe_.InitBuffer(posBuf_, Bytes(scores * sizeof(float)));
        pipe_.InitBuffer(maskBuf_, Bytes(scores / 8));
        pipe_.InitBuffer(sumBuf_, Bytes(td_.lanes * 8 * sizeof(float)));
        pipe_.InitBuffer(workBuf_, Bytes(td_.rowPitch * sizeof(float)));
        pipe_.InitBuffer(tmpBuf_, Bytes(td_.tmpBytes));
        pipe_.InitBuffer(srcIdxBuf_, 32);                         // TopK without init indices: defined, not read
        pipe_.InitBuffer(valBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(float)));
        pipe_.InitBuffer(yFloatBuf_, Bytes(td_.lanes * td_.outPitch * sizeof(float)));
        pipe_.InitBuffer(yBuf_, Bytes(td_.lanes * td_.outPitch * sizeof(Elem)));
        pipe_.InitBuffer(expertBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(int32_t)));
        pipe_.InitBuffer(rowBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(int32_t)));
        pipe_.InitBuffer(rowTableBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(int32_t)));
        pipe_.InitBuffer(finishedBuf_, Bytes(td_.lanes));
        pipe_.InitBuffer(topBuf_, Bytes(td_.lanes * sizeof(float)));
        pipe_.InitBuffer(spreadBuf_, Bytes(scores * sizeof(float)));
        pipe_.InitBuffer(spreadKBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(float)));
        pipe_.InitBuffer(topTableBuf_, Bytes(td_.lanes * sizeof(uint32_t)));
        pipe_.InitBuffer(rowSpreadBuf_, Bytes(scores * sizeof(uint32_t)));
        pipe_.InitBuffer(kSpreadBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(uint32_t)));
        pipe_.InitBuffer(sumSpreadBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(uint32_t)));
        BuildTables();
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            Tile(unitStart_ + u);
        }
    }

private:
    __aicore__ inline static uint32_t Bytes(uint32_t n)
    {
        n = (n + 31) / 32 * 32;
        return n < 256 ? 256 : n;
    }

@SYNC@
    // Each score's position in its row (the padding test), and row_idx's table j * R + l.
    __aicore__ inline void BuildTables()
    {
        LocalTensor<float> pos = posBuf_.Get<float>();
        const uint32_t scores = (td_.lanes * td_.rowPitch + 63) / 64 * 64;
        Duplicate(pos, static_cast<float>(td_.rowPitch), static_cast<int32_t>(scores));
        PipeBarrier<PIPE_V>();
        CreateVecIndex(pos, 0.0f, td_.rowPitch);
        LocalTensor<int32_t> table = rowTableBuf_.Get<int32_t>();
        CreateVecIndex(table, 0, td_.kPitch);
        PipeBarrier<PIPE_V>();
        Muls(table, table, static_cast<int32_t>(td_.rows), td_.kPitch);
        // the Gather tables that spread row l's value (byte offset l * 4) over its row and its k
        // values, its sum (l * 4, or l * 32 from per-row ReduceSums), and pick its first value
        LocalTensor<int32_t> topTable = topTableBuf_.Get<int32_t>();
        LocalTensor<int32_t> rowSpread = rowSpreadBuf_.Get<int32_t>();
        LocalTensor<int32_t> kSpread = kSpreadBuf_.Get<int32_t>();
        LocalTensor<int32_t> sumSpread = sumSpreadBuf_.Get<int32_t>();
        const int32_t sumStride = td_.rowPitch <= 64 ? 4 : 32;
        CreateVecIndex(topTable, 0, td_.lanes);
        Duplicate(rowSpread, 0, static_cast<int32_t>(td_.rowPitch));
        Duplicate(kSpread, 0, static_cast<int32_t>(td_.kPitch));
        Duplicate(sumSpread, 0, static_cast<int32_t>(td_.kPitch));
        PipeBarrier<PIPE_V>();
        Muls(topTable, topTable, static_cast<int32_t>(td_.kPitch * sizeof(float)), td_.lanes);
        for (uint32_t r = 1; r < td_.lanes; r *= 2) {
            const uint32_t n = r < td_.lanes - r ? r : td_.lanes - r;
            PipeBarrier<PIPE_V>();
            DataCopy(pos[r * td_.rowPitch], pos, n * td_.rowPitch);
            Adds(table[r * td_.kPitch], table, static_cast<int32_t>(r), n * td_.kPitch);
            Adds(rowSpread[r * td_.rowPitch], rowSpread, static_cast<int32_t>(r * 4), n * td_.rowPitch);
            Adds(kSpread[r * td_.kPitch], kSpread, static_cast<int32_t>(r * 4), n * td_.kPitch);
            Adds(sumSpread[r * td_.kPitch], sumSpread, static_cast<int32_t>(r) * sumStride, n * td_.kPitch);
        }
        PipeBarrier<PIPE_V>();
    }

    // Tile `unit`: B tokens' expert rows in, the k best, softmax of them, out.
    __aicore__ inline void Tile(uint64_t unit)
    {
        const uint64_t r0 = unit * td_.lanes;
        const uint32_t lanes = static_cast<uint32_t>(td_.rows - r0 < td_.lanes ? td_.rows - r0 : td_.lanes);
        LocalTensor<Elem> raw = rawBuf_.Get<Elem>();
        SyncPipes<HardEvent::MTE3_V>();                          // the previous tile's results are out
        SyncPipes<HardEvent::V_MTE2>();
        const uint32_t bytes = td_.experts * sizeof(Elem);
        DataCopyExtParams in(static_cast<uint16_t>(lanes), bytes, 0,
                             (td_.rowPitch * sizeof(Elem) - (bytes + 31) / 32 * 32) / 32, 0);
        DataCopyPad(raw, xGm_[r0 * td_.experts], in, DataCopyPadExtParams<Elem>(false, 0, 0, 0));
        if (td_.hasFinished) {
            DataCopyPad(finishedBuf_.Get<uint8_t>(), finishedGm_[r0], DataCopyExtParams(1, lanes, 0, 0, 0),
                        DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE2_V>();
        const uint32_t m = td_.lanes * td_.rowPitch;
        LocalTensor<float> score = scoreBuf_.Get<float>();
        if constexpr (std::is_same<Elem, float>::value) {
            DataCopy(score, raw.template ReinterpretCast<float>(), m);
        } else {
            Cast(score, raw, RoundMode::CAST_NONE, m);
        }
        PipeBarrier<PIPE_V>();
        if (td_.experts < td_.rowPitch) {
            // the positions past E rank last and add nothing to the sum: -inf
            CompareScalar(maskBuf_.Get<uint8_t>(), posBuf_.Get<float>(), static_cast<float>(td_.experts), CMPMODE::LT,
                          (m + 63) / 64 * 64);
            PipeBarrier<PIPE_V>();
            Select(score, maskBuf_.Get<uint8_t>(), score, -INFINITY, SELMODE::VSEL_TENSOR_SCALAR_MODE, m);
            PipeBarrier<PIPE_V>();
        }
        LocalTensor<float> val = valBuf_.Get<float>();
        LocalTensor<int32_t> expert = expertBuf_.Get<int32_t>();
        LocalTensor<bool> finish;
        TopKInfo info;
        info.outter = static_cast<int32_t>(td_.lanes);
        info.inner = static_cast<int32_t>(td_.rowPitch);
        info.n = static_cast<int32_t>(td_.rowPitch);
        TopK<float, false, false, false, TopKMode::TOPK_NORMAL>(val, expert, score, srcIdxBuf_.Get<int32_t>(), finish,
                                                                tmpBuf_.Get<uint8_t>(), static_cast<int32_t>(td_.k),
                                                                td_.topk, info, true);
        // softmax of the selected, a whole tile per instruction: each row's maximum is its first
        // value, spread over the row's scores and its k values by Gathers of per-row tables
        LocalTensor<float> e = expBuf_.Get<float>();
        LocalTensor<float> sums = sumBuf_.Get<float>();
        LocalTensor<float> tops = topBuf_.Get<float>();
        LocalTensor<float> spread = spreadBuf_.Get<float>();           // a per-row value over a row
        LocalTensor<float> spreadK = spreadKBuf_.Get<float>();         // ... over its k values
        const uint32_t mk = td_.lanes * td_.kPitch;
        PipeBarrier<PIPE_V>();
        Gather(tops, val, topTableBuf_.Get<uint32_t>(), 0, td_.lanes);
        PipeBarrier<PIPE_V>();
        Gather(spread, tops, rowSpreadBuf_.Get<uint32_t>(), 0, m);
        Gather(spreadK, tops, kSpreadBuf_.Get<uint32_t>(), 0, mk);
        PipeBarrier<PIPE_V>();
        Sub(e, score, spread, m);
        Sub(val, val, spreadK, mk);
        PipeBarrier<PIPE_V>();
        Exp(e, e, m);
        Exp(val, val, mk);
        PipeBarrier<PIPE_V>();
        if (td_.rowPitch <= 64) {
            // one repeat per row: every row's sum in one instruction
            WholeReduceSum(sums, e, static_cast<int32_t>(td_.rowPitch), static_cast<int32_t>(td_.lanes), 1, 1,
                           static_cast<int32_t>(td_.rowPitch / 8));
        } else {
            for (uint32_t l = 0; l < lanes; ++l) {
                ReduceSum(sums[l * 8], e[l * td_.rowPitch], workBuf_.Get<float>(), td_.rowPitch);
            }
        }
        PipeBarrier<PIPE_V>();
        Gather(spreadK, sums, sumSpreadBuf_.Get<uint32_t>(), 0, mk);
        PipeBarrier<PIPE_V>();
        Div(val, val, spreadK, mk);
        PipeBarrier<PIPE_V>();
        LocalTensor<float> yFloat = yFloatBuf_.Get<float>();
        DataCopyParams rows(static_cast<uint16_t>(td_.lanes), static_cast<uint16_t>(td_.kPitch / 8), 0,
                            static_cast<uint16_t>((td_.outPitch - td_.kPitch) / 8));
        DataCopy(yFloat, val, rows);
        PipeBarrier<PIPE_V>();
        LocalTensor<Elem> y = yBuf_.Get<Elem>();
        if constexpr (std::is_same<Elem, float>::value) {
            DataCopy(y.template ReinterpretCast<float>(), yFloat, td_.lanes * td_.outPitch);
        } else {
            Cast(y, yFloat, RoundMode::CAST_RINT, td_.lanes * td_.outPitch);
        }
        if (td_.hasFinished) {
            // a finished token's experts are E (the sentinel downstream ops skip)
            SyncPipes<HardEvent::MTE2_S>();
            LocalTensor<uint8_t> done = finishedBuf_.Get<uint8_t>();
            bool finished[64];
            for (uint32_t l = 0; l < lanes; ++l) {
                finished[l] = done.GetValue(l) != 0;
            }
            SyncPipes<HardEvent::S_V>();
            for (uint32_t l = 0; l < lanes; ++l) {
                if (finished[l]) {
                    Duplicate(expert[l * td_.kPitch], static_cast<int32_t>(td_.experts), static_cast<int32_t>(td_.kPitch));
                }
            }
        }
        LocalTensor<int32_t> row = rowBuf_.Get<int32_t>();
        Adds(row, rowTableBuf_.Get<int32_t>(), static_cast<int32_t>(r0), td_.lanes * td_.kPitch);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams outY(static_cast<uint16_t>(lanes), td_.k * sizeof(Elem),
                               (td_.outPitch * sizeof(Elem) - (td_.k * sizeof(Elem) + 31) / 32 * 32) / 32, 0, 0);
        DataCopyPad(yGm_[r0 * td_.k], y, outY);
        DataCopyExtParams outIdx(static_cast<uint16_t>(lanes), td_.k * sizeof(int32_t),
                                 (td_.kPitch - td_.k) * sizeof(int32_t) / 32, 0, 0);
        DataCopyPad(expertGm_[r0 * td_.k], expert, outIdx);
        DataCopyPad(rowGm_[r0 * td_.k], row, outIdx);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> rawBuf_, scoreBuf_, expBuf_, posBuf_, maskBuf_, sumBuf_, workBuf_, tmpBuf_, srcIdxBuf_;
    TBuf<TPosition::VECCALC> valBuf_, yFloatBuf_, yBuf_, expertBuf_, rowBuf_, rowTableBuf_, finishedBuf_;
    TBuf<TPosition::VECCALC> topBuf_, spreadBuf_, spreadKBuf_, topTableBuf_, rowSpreadBuf_, kSpreadBuf_, sumSpreadBuf_;
    GlobalTensor<Elem> xGm_;
    GlobalTensor<uint8_t> finishedGm_;
    GlobalTensor<Elem> yGm_;
    GlobalTensor<int32_t> expertGm_;
    GlobalTensor<int32_t> rowGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR @E@, GM_ADDR @R@,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @FIN@, @Y@, @E@, @R@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(shape.GetDimNum());
    if (rank < 1 || rank > 8) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = 1;
    for (int32_t d = 0; d + 1 < rank; ++d) {
        rows *= static_cast<uint64_t>(shape.GetDim(d));
    }
    const uint64_t experts = static_cast<uint64_t>(shape.GetDim(rank - 1));
    const int64_t k = @KVAL@;
    if (k < 1 || static_cast<uint64_t>(k) > experts || experts > 4064 || rows == 0) {
        return ge::GRAPH_FAILED;
    }
    td->hasFinished = @HASFIN@ && context->GetOptionalInputShape(@FINPOS@) != nullptr ? 1 : 0;
    const uint32_t eb = DtypeBytes(context->GetInputDesc(0)->GetDataType());
    td->rows = rows;
    td->experts = static_cast<uint32_t>(experts);
    td->k = static_cast<uint32_t>(k);
    td->kPitch = (td->k + 7) / 8 * 8;
    td->outPitch = (td->k + 31) / 32 * 32;
    td->rowPitch = static_cast<uint32_t>((experts + 31) / 32 * 32);
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
    auto tmpOf = [&](uint32_t b) {
        uint32_t hi = 0;
        uint32_t lo = 0;
        AscendC::GetTopKMaxMinTmpSize(platform, static_cast<int32_t>(td->rowPitch), static_cast<int32_t>(b), false,
                                      false, AscendC::TopKMode::TOPK_NORMAL, true, 4, hi, lo);
        return static_cast<uint64_t>(lo);
    };
    // UB bytes of a tile of b tokens: x, scores, exps, positions, mask; TopK's space; the outputs
    auto bytes = [&](uint64_t b) {
        return b * td->rowPitch * (eb + 4 * 5 + 1) + td->rowPitch * 4 + tmpOf(static_cast<uint32_t>(b)) +
               b * td->kPitch * 4 * 7 + b * td->outPitch * (4 + eb) + b * 48 + 32 * 256;
    };
    uint64_t lanes = rows < 64 ? rows : 64;
    const uint64_t perCore = (rows + coreNum - 1) / coreNum;
    lanes = lanes > perCore ? perCore : lanes;
    while (lanes > 1 && bytes(lanes) > budget) {
        lanes /= 2;
    }
    if (bytes(lanes) > budget) {
        return ge::GRAPH_FAILED;
    }
    td->lanes = static_cast<uint32_t>(lanes);
    if (!AscendC::TopKTilingFunc(platform, static_cast<int32_t>(td->rowPitch), static_cast<int32_t>(lanes),
                                 static_cast<int32_t>(td->k), 4, false, AscendC::TopKMode::TOPK_NORMAL, true, td->topk)) {
        return ge::GRAPH_FAILED;
    }
    td->tmpBytes = static_cast<uint32_t>(tmpOf(td->lanes));
    const uint64_t units = (rows + lanes - 1) / lanes;
@SPLIT@    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
