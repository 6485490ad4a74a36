"""Block row movement by a count table (moe_re_routing): tokens grouped in (rank, expert) blocks
are regrouped in (expert, rank) order.

    counts [N, E]; block (n, e) holds counts[n, e] consecutive rows of tokens [A, H]
    src_start = exclusive scan of counts in (n, e) order, dst_start = in (e, n) order
    out[dst_start(n, e) + j] = tokens[src_start(n, e) + j]     (the same for the optional scales [A])
    idx[dst] = src (the gather index), count[e] = sum_n counts[n, e]

Outputs: the moved tokens, the moved scales (zeros when absent), the gather index (int32) and the
per-expert totals (the counts' dtype). The golden builds the permutation on the host
(`.item()`, `repeat_interleave`), so it is recognised by what it computes on fp64 probes for each
attr combination of the cases (outside the formula, e.g. another `expert_token_num_type`, a case
is not served).

Every block is a run of consecutive rows in both orders, so the kernel moves runs: each core takes
an equal range of source rows, scans the count table on the scalar unit (the table is copied to
UB once) and copies each run in chunks GM -> UB -> GM, with the index run from one int32 ramp.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.lowering.capture import call_golden


@dataclass
class RowMovePlan:
    task: object
    pattern: str                          # "row_move"
    tokens: int
    counts: int
    scales: int | None
    variants: list[dict]                  # attr guards of the served attr combinations
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _reference(tokens, counts, scales):
    import torch

    N, E = counts.shape
    src = torch.cat([torch.zeros(1, dtype=torch.int64), counts.reshape(-1).long().cumsum(0)[:-1]])
    dst_flat = torch.cat([torch.zeros(1, dtype=torch.int64), counts.t().reshape(-1).long().cumsum(0)[:-1]])
    dst = dst_flat.reshape(E, N).t().reshape(-1)
    idx = torch.empty(tokens.shape[0], dtype=torch.int32)
    for b in range(N * E):
        c = int(counts.reshape(-1)[b])
        idx[dst[b]:dst[b] + c] = torch.arange(int(src[b]), int(src[b]) + c, dtype=torch.int32)
    moved = tokens[idx.long()]
    ms = scales[idx.long()] if scales is not None else torch.zeros(tokens.shape[0], dtype=torch.float32)
    return moved, ms, idx, counts.sum(0)


def _matches(task, tokens: int, counts: int, scales: int | None, with_scales: bool, attrs: dict, cdt) -> bool:
    import torch

    for seed in (16, 17):
        g = torch.Generator().manual_seed(seed)
        c = torch.randint(1, 4, (2, 3), generator=g).to(cdt)
        A = int(c.sum())
        ins = [None] * len(task.inputs)
        ins[tokens] = torch.rand(A, 4, generator=g, dtype=torch.float64)
        ins[counts] = c
        if with_scales:
            ins[scales] = torch.rand(A, generator=g, dtype=torch.float64)
        try:
            with torch.no_grad():
                got = call_golden(task, ins, attrs)
        except Exception:
            return False
        want = _reference(ins[tokens], c, ins[scales] if with_scales else None)
        if not isinstance(got, (list, tuple)) or len(got) != 4:
            return False
        for a, b in zip(got, want):
            if not isinstance(a, torch.Tensor) or a.shape != b.shape or not torch.equal(a.double(), b.double()):
                return False
        if got[2].dtype != torch.int32:      # the totals' dtype is the output's (a sum widens int32)
            return False
    return True


def plan_row_move(task):
    """The row-move plan of `task`, or None when its golden is not the regrouping above."""
    import torch

    cases = task.cases
    if len(task.outputs) != 4 or not cases or any(a.type != "int" for a in task.attrs):
        return None
    req = [i for i, s in enumerate(task.inputs) if not s.optional]
    opt = [i for i, s in enumerate(task.inputs) if s.optional]
    if len(req) != 2 or len(opt) > 1:
        return None
    counts = [i for i in req if set(task.inputs[i].dtypes) <= {"int32", "int64"}]
    if len(counts) != 1:
        return None
    counts = counts[0]
    tokens = next(i for i in req if i != counts)
    scales = opt[0] if opt else None
    c0 = cases[0]
    if len(c0.shapes[tokens] or ()) != 2 or len(c0.shapes[counts] or ()) != 2:
        return None

    def attrs_of(c):
        return {a.name: c.attrs.get(a.name, a.default) for a in task.attrs}

    variants, unserved, seen = [], {}, {}
    for c in cases:
        has = scales is not None and c.shapes[scales] is not None
        cdt = torch.int64 if c.dtypes[counts] == "int64" else torch.int32
        key = (repr(sorted(attrs_of(c).items())), has, str(cdt))
        if key not in seen:
            seen[key] = _matches(task, tokens, counts, scales, has, attrs_of(c), cdt)
        if not seen[key]:
            if c is cases[0]:
                return None
            unserved[c.id] = "the golden is not the block regrouping on probes for these attrs"
            continue
        if attrs_of(c) not in variants:
            variants.append(attrs_of(c))
    return RowMovePlan(task, "row_move", tokens, counts, scales, variants, unserved)


def render(plan: RowMovePlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of, _variant_condition

    t = plan.task
    cls = camel(t.name)
    ins = [i.name for i in t.inputs]
    outs = [o.name for o in t.outputs]
    sel = " || ".join(f"({_variant_condition(t, g, [])})" for g in plan.variants)
    select = (f"    if (!({sel})) {{\n        return ge::GRAPH_FAILED;   // attrs of no variant the golden showed\n    }}\n")
    scales_name = ins[plan.scales] if plan.scales is not None else None
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for k, v in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                 ("@XT@", _macro_of(ins[plan.tokens])), ("@CT@", _macro_of(ins[plan.counts])),
                 ("@ST@", _macro_of(scales_name) if scales_name else "float"), ("@ET@", _macro_of(outs[3])),
                 ("@TOKENS@", ins[plan.tokens]), ("@COUNTS@", ins[plan.counts]),
                 ("@SCALES@", scales_name or "(none)"),
                 ("@ARGS@", ", ".join(f"GM_ADDR {_ident(n)}" for n in ins + outs)),
                 ("@CALL@", ", ".join([_ident(ins[plan.tokens]), _ident(ins[plan.counts]),
                                       _ident(scales_name) if scales_name else "nullptr"] +
                                      [_ident(n) for n in outs])),
                 ("@P_TOKENS@", str(plan.tokens)), ("@P_COUNTS@", str(plan.counts)),
                 ("@P_SCALES@", str(plan.scales if plan.scales is not None else -1)), ("@SELECT@", select),
                 ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                 ("@SPLIT@", core_split(knobs, "td->tokens * td->hidden", "td->tokens")),
                 ("@SYNC@", SYNC_PIPES)):
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: block row movement by a count table. @COUNTS@ [N, E]: block (n, e) holds counts[n, e]
// consecutive rows of @TOKENS@ [A, H]; the blocks are regrouped from (rank, expert) order to
// (expert, rank) order:
//   out[dstStart(n, e) + j] = tokens[srcStart(n, e) + j], the same for @SCALES@ (zeros when absent),
//   idx[dst] = src, count[e] = sum_n counts[n, e]
// srcStart / dstStart are exclusive scans of the table in the two orders (scalar unit, the table
// copied to UB once). Each core takes an equal range of source rows and moves its part of every
// block as runs of consecutive rows, in chunks GM -> UB -> GM; the index run is one int32 ramp
// plus the run's first source row.
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t hidden;                    // H
    uint32_t ranks;                     // N
    uint32_t experts;                   // E
    uint32_t chunkRows;                 // rows per copy
    uint32_t hasScales;
    uint32_t blockDim;
    uint64_t tokens;                    // A
    uint64_t formerNum;                 // cores taking formerUnits source rows; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
using Count = @CT@;
using Scale = @ST@;
using Total = @ET@;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR tokens, GM_ADDR counts, GM_ADDR scales, GM_ADDR outTokens, GM_ADDR outScales,
                                GM_ADDR outIdx, GM_ADDR outTotals, const @T@& tiling)
    {
        td_ = tiling;
        const uint64_t A = td_.tokens, H = td_.hidden, NE = static_cast<uint64_t>(td_.ranks) * td_.experts;
        tokGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(tokens), A * H);
        cntGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Count*>(counts), NE);
        outTokGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(outTokens), A * H);
        outScaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(outScales), A);
        outIdxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(outIdx), A);
        totalGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Total*>(outTotals), td_.experts);
        if (td_.hasScales) {
            scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Scale*>(scales), A);
        }
@UNIT_RANGE@        const uint32_t T = td_.chunkRows;
        pipe_.InitBuffer(rowBuf_, (T * H * sizeof(Elem) + 31) / 32 * 32);
        pipe_.InitBuffer(scaleBuf_, (T * sizeof(float) + 31) / 32 * 32);
        pipe_.InitBuffer(idxBuf_, (T * sizeof(int32_t) + 31) / 32 * 32);
        pipe_.InitBuffer(rampBuf_, (T * sizeof(int32_t) + 31) / 32 * 32);
        pipe_.InitBuffer(countBuf_, (NE * sizeof(Count) + 31) / 32 * 32);
        pipe_.InitBuffer(totalBuf_, (td_.experts * sizeof(Total) + 31) / 32 * 32);
        CreateVecIndex(rampBuf_.Get<int32_t>(), 0, T);
        if (!td_.hasScales) {
            Duplicate(scaleBuf_.Get<float>(), 0.0f, T);    // the moved scales are zeros
        }
        LocalTensor<Count> cnt = countBuf_.Get<Count>();
        DataCopyExtParams in(1, static_cast<uint32_t>(NE * sizeof(Count)), 0, 0, 0);
        DataCopyPad(cnt, cntGm_, in, DataCopyPadExtParams<Count>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_S>();
        SyncPipes<HardEvent::V_S>();
    }

    __aicore__ inline void Process()
    {
        LocalTensor<Count> cnt = countBuf_.Get<Count>();
        const uint32_t N = td_.ranks, E = td_.experts;
        const uint64_t lo = unitStart_, hi = unitStart_ + unitCount_;
        uint64_t src = 0;                                   // srcStart of block (n, e)
        for (uint32_t n = 0; n < N; ++n) {
            for (uint32_t e = 0; e < E; ++e) {
                const uint64_t c = static_cast<uint64_t>(cnt.GetValue(n * E + e));
                if (src + c > lo && src < hi) {
                    const uint64_t a = src > lo ? src : lo;
                    const uint64_t b = src + c < hi ? src + c : hi;
                    MoveRun(a, DstStart(n, e) + (a - src), b - a);
                }
                src += c;
            }
        }
        if (GetBlockIdx() == 0) {
            LocalTensor<Total> total = totalBuf_.Get<Total>();
            for (uint32_t e = 0; e < E; ++e) {
                uint64_t s = 0;
                for (uint32_t n = 0; n < N; ++n) {
                    s += static_cast<uint64_t>(cnt.GetValue(n * E + e));
                }
                total.SetValue(e, static_cast<Total>(s));
            }
            SyncPipes<HardEvent::S_MTE3>();
            DataCopyExtParams out(1, E * sizeof(Total), 0, 0, 0);
            DataCopyPad(totalGm_, total, out);
        }
    }

private:
    // dstStart(n, e): every row of the experts before e, then of the ranks before n in expert e
    __aicore__ inline uint64_t DstStart(uint32_t n, uint32_t e)
    {
        LocalTensor<Count> cnt = countBuf_.Get<Count>();
        const uint32_t N = td_.ranks, E = td_.experts;
        uint64_t at = 0;
        for (uint32_t e2 = 0; e2 < e; ++e2) {
            for (uint32_t n2 = 0; n2 < N; ++n2) {
                at += static_cast<uint64_t>(cnt.GetValue(n2 * E + e2));
            }
        }
        for (uint32_t n2 = 0; n2 < n; ++n2) {
            at += static_cast<uint64_t>(cnt.GetValue(n2 * E + e));
        }
        return at;
    }

    // rows [src, src + len) to [dst, dst + len), with their scales and index run
    __aicore__ inline void MoveRun(uint64_t src, uint64_t dst, uint64_t len)
    {
        const uint64_t H = td_.hidden;
        LocalTensor<Elem> rows = rowBuf_.Get<Elem>();
        LocalTensor<float> scale = scaleBuf_.Get<float>();
        LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
        LocalTensor<int32_t> ramp = rampBuf_.Get<int32_t>();
        for (uint64_t r = 0; r < len; r += td_.chunkRows) {
            const uint32_t n = static_cast<uint32_t>(len - r < td_.chunkRows ? len - r : td_.chunkRows);
            SyncPipes<HardEvent::MTE3_MTE2>();             // the previous chunk has left UB
            SyncPipes<HardEvent::MTE3_V>();
            DataCopyExtParams in(1, static_cast<uint32_t>(n * H * sizeof(Elem)), 0, 0, 0);
            DataCopyPad(rows, tokGm_[(src + r) * H], in, DataCopyPadExtParams<Elem>(false, 0, 0, 0));
            if (td_.hasScales) {
                DataCopyExtParams scaleIn(1, n * sizeof(float), 0, 0, 0);
                DataCopyPad(scale.ReinterpretCast<Scale>(), scaleGm_[src + r], scaleIn,
                            DataCopyPadExtParams<Scale>(false, 0, 0, 0));
            }
            Adds(idx, ramp, static_cast<int32_t>(src + r), n);
            SyncPipes<HardEvent::MTE2_MTE3>();
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyExtParams out(1, static_cast<uint32_t>(n * H * sizeof(Elem)), 0, 0, 0);
            DataCopyPad(outTokGm_[(dst + r) * H], rows, out);
            DataCopyExtParams one(1, n * sizeof(float), 0, 0, 0);
            DataCopyPad(outScaleGm_[dst + r], scale, one);
            DataCopyPad(outIdxGm_[dst + r], idx, one);
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> rowBuf_;
    TBuf<QuePosition::VECCALC> scaleBuf_;
    TBuf<QuePosition::VECCALC> idxBuf_;
    TBuf<QuePosition::VECCALC> rampBuf_;
    TBuf<QuePosition::VECCALC> countBuf_;
    TBuf<QuePosition::VECCALC> totalBuf_;
    GlobalTensor<Elem> tokGm_;
    GlobalTensor<Count> cntGm_;
    GlobalTensor<Scale> scaleGm_;
    GlobalTensor<Elem> outTokGm_;
    GlobalTensor<float> outScaleGm_;
    GlobalTensor<int32_t> outIdxGm_;
    GlobalTensor<Total> totalGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@CALL@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@SELECT@    const gert::Shape& tokShape = context->GetInputShape(@P_TOKENS@)->GetStorageShape();
    const gert::Shape& cntShape = context->GetInputShape(@P_COUNTS@)->GetStorageShape();
    if (tokShape.GetDimNum() != 2 || cntShape.GetDimNum() != 2) {
        return ge::GRAPH_FAILED;
    }
    td->tokens = static_cast<uint64_t>(tokShape.GetDim(0));
    td->hidden = static_cast<uint32_t>(tokShape.GetDim(1));
    td->ranks = static_cast<uint32_t>(cntShape.GetDim(0));
    td->experts = static_cast<uint32_t>(cntShape.GetDim(1));
    td->hasScales = @P_SCALES@ >= 0 && context->GetOptionalInputShape(@P_SCALES@) != nullptr ? 1 : 0;
    if (td->tokens == 0 || td->hidden == 0 || td->ranks * td->experts == 0 || td->ranks * td->experts > 8192) {
        return ge::GRAPH_FAILED;
    }
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    const uint64_t eb = DtypeBytes(context->GetInputDesc(@P_TOKENS@)->GetDataType());
    const uint64_t fixed = reserve + static_cast<uint64_t>(td->ranks) * td->experts * 8 + td->experts * 8 + 1024;
    const uint64_t perRow = td->hidden * eb + 3 * 4;
    if (ubSize <= fixed + perRow) {
        return ge::GRAPH_FAILED;   // one row of H does not fit
    }
    uint64_t chunk = (ubSize - fixed) / perRow;
    chunk = chunk > 4096 ? 4096 : chunk;
    td->chunkRows = static_cast<uint32_t>(chunk);

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
