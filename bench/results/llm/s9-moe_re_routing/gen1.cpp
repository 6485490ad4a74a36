#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t MRR_MAX_NE = 128;

struct MoeReRoutingCustomTilingData {
    uint32_t A;
    uint32_t H;
    uint32_t rowBytes;     // H * sizeof(token)
    uint32_t N;
    uint32_t E;
    uint32_t Np;           // N rounded up to 8
    uint32_t Ep;           // E rounded up to 8
    uint32_t hasScales;
    uint32_t chunkBytes;   // ping-pong chunk of the byte mover
    uint32_t poolBytes;    // >= 2 * chunkBytes and >= 3 * Np * Ep * 4
    uint32_t matBytes;     // Np * Ep * 4
    uint32_t idxChunk;     // int32 elements per idx tile
    uint32_t zeroChunk;    // float elements of the zero tile
};
REGISTER_TILING_DEFAULT(MoeReRoutingCustomTilingData);

using namespace AscendC;

template <typename TC>
class KernelMoeReRouting {
public:
    __aicore__ inline KernelMoeReRouting() {}

    __aicore__ inline void Init(GM_ADDR tokens, GM_ADDR counts, GM_ADDR scales, GM_ADDR outTok, GM_ADDR outScales,
                                GM_ADDR outIdx, GM_ADDR outNum, const MoeReRoutingCustomTilingData& t)
    {
        t_ = t;
        tokGm_.SetGlobalBuffer((__gm__ uint8_t*)tokens);
        cntGm_.SetGlobalBuffer((__gm__ TC*)counts);
        if (t.hasScales) {
            scGm_.SetGlobalBuffer((__gm__ uint8_t*)scales);
        }
        outTokGm_.SetGlobalBuffer((__gm__ uint8_t*)outTok);
        outScGm_.SetGlobalBuffer((__gm__ uint8_t*)outScales);
        outScF_.SetGlobalBuffer((__gm__ float*)outScales);
        idxGm_.SetGlobalBuffer((__gm__ int32_t*)outIdx);
        numGm_.SetGlobalBuffer((__gm__ int64_t*)outNum);
        pipe_.InitBuffer(poolBuf_, t.poolBytes);
        pipe_.InitBuffer(matBuf_, t.matBytes);
        pipe_.InitBuffer(matTBuf_, t.matBytes);
        pipe_.InitBuffer(idxQ_, 2, t.idxChunk * 4);
        pipe_.InitBuffer(zeroBuf_, t.zeroChunk * 4);
        evR_[0] = static_cast<event_t>(pipe_.AllocEventID<HardEvent::MTE3_MTE2>());
        evR_[1] = static_cast<event_t>(pipe_.AllocEventID<HardEvent::MTE3_MTE2>());
        evF_[0] = static_cast<event_t>(pipe_.AllocEventID<HardEvent::MTE2_MTE3>());
        evF_[1] = static_cast<event_t>(pipe_.AllocEventID<HardEvent::MTE2_MTE3>());
    }

    __aicore__ inline void Setup()
    {
        const uint32_t N = t_.N, E = t_.E, Np = t_.Np, Ep = t_.Ep;
        const uint32_t S = Np * Ep;
        LocalTensor<int32_t> poolI = poolBuf_.Get<int32_t>();
        Duplicate(poolI, static_cast<int32_t>(0), static_cast<int32_t>(2 * S));   // zero pads (raw int64 = 2S words)
        event_t e0 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        SetFlag<HardEvent::V_MTE2>(e0);
        WaitFlag<HardEvent::V_MTE2>(e0);
        LocalTensor<float> M = matBuf_.Get<float>();
        LocalTensor<float> Mt = matTBuf_.Get<float>();
        if constexpr (sizeof(TC) == 8) {
            LocalTensor<int64_t> raw = poolBuf_.Get<int64_t>();
            const uint32_t rowPad = (E * 8 + 31) / 32 * 32;
            DataCopyExtParams cp{static_cast<uint16_t>(N), static_cast<uint32_t>(E * 8), 0,
                                 static_cast<uint32_t>((Ep * 8 - rowPad) / 32), 0};
            DataCopyPadExtParams<int64_t> pad{false, 0, 0, 0};
            DataCopyPad(raw, cntGm_, cp, pad);
            event_t e1 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
            SetFlag<HardEvent::MTE2_V>(e1);
            WaitFlag<HardEvent::MTE2_V>(e1);
            LocalTensor<int32_t> tmpI = poolBuf_.GetWithOffset<int32_t>(S, 2 * S * 4);
            Cast(tmpI, raw, RoundMode::CAST_NONE, S);
            Cast(M, tmpI, RoundMode::CAST_NONE, S);
        } else {
            LocalTensor<int32_t> raw = poolBuf_.Get<int32_t>();
            DataCopyExtParams cp{static_cast<uint16_t>(N), static_cast<uint32_t>(E * 4), 0, 0, 0};
            DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
            DataCopyPad(raw, cntGm_, cp, pad);
            event_t e1 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
            SetFlag<HardEvent::MTE2_V>(e1);
            WaitFlag<HardEvent::MTE2_V>(e1);
            Cast(M, raw, RoundMode::CAST_NONE, S);
        }
        // transpose M [Np][Ep] -> Mt [Ep][Np]: t = j * Np + i reads byte (i * Ep + j) * 4
        LocalTensor<int32_t> tab = poolBuf_.GetWithOffset<int32_t>(S, 2 * S * 4);
        LocalTensor<float> fr = poolBuf_.Get<float>();
        LocalTensor<int32_t> q = poolBuf_.GetWithOffset<int32_t>(S, S * 4);
        const int32_t cnt = static_cast<int32_t>(S);
        CreateVecIndex(fr, 0.0f, S);
        Adds(fr, fr, 0.5f, cnt);
        Muls(fr, fr, 1.0f / static_cast<float>(Np), cnt);
        Cast(q, fr, RoundMode::CAST_FLOOR, S);
        CreateVecIndex(tab, static_cast<int32_t>(0), S);
        Muls(tab, tab, static_cast<int32_t>(Ep * 4), cnt);
        Muls(q, q, static_cast<int32_t>((Np * Ep - 1) * 4), cnt);
        Sub(tab, tab, q, cnt);
        Gather(Mt, M, tab.ReinterpretCast<uint32_t>(), 0, S);
        // inclusive scans: M[i][j] = sum_{i' <= i} n(i', j); Mt[j][i] = sum_{j' <= j} n(i, j')
        for (uint32_t i = 1; i < N; ++i) {
            LocalTensor<float> cur = M[i * Ep];
            LocalTensor<float> prv = M[(i - 1) * Ep];
            Add(cur, cur, prv, static_cast<int32_t>(Ep));
        }
        for (uint32_t j = 1; j < E; ++j) {
            LocalTensor<float> cur = Mt[j * Np];
            LocalTensor<float> prv = Mt[(j - 1) * Np];
            Add(cur, cur, prv, static_cast<int32_t>(Np));
        }
        if (!t_.hasScales) {
            LocalTensor<float> z = zeroBuf_.Get<float>();
            Duplicate(z, 0.0f, static_cast<int32_t>(t_.zeroChunk));
        }
        if (GetBlockIdx() == 0) {   // expert_token_num = column sums (last inclusive row)
            LocalTensor<float> colSum = M[(N - 1) * Ep];
            LocalTensor<int32_t> ci = poolBuf_.Get<int32_t>();
            Cast(ci, colSum, RoundMode::CAST_RINT, Ep);
            event_t e2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
            // the golden's sum(dim=0) of an integer tensor is int64 whatever the count dtype
            LocalTensor<int64_t> c64 = poolBuf_.GetWithOffset<int64_t>(Ep, 1024);
            Cast(c64, ci, RoundMode::CAST_NONE, Ep);
            SetFlag<HardEvent::V_MTE3>(e2);
            WaitFlag<HardEvent::V_MTE3>(e2);
            DataCopyExtParams co{1, static_cast<uint32_t>(E * 8), 0, 0, 0};
            DataCopyPad(numGm_, c64, co);
        }
        event_t e3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e3);
        WaitFlag<HardEvent::V_S>(e3);
        colStart_[0] = 0;
        for (uint32_t j = 1; j < E; ++j) {
            colStart_[j] = colStart_[j - 1] + static_cast<int32_t>(M.GetValue((N - 1) * Ep + j - 1));
        }
        rowStart_[0] = 0;
        for (uint32_t i = 1; i < N; ++i) {
            rowStart_[i] = rowStart_[i - 1] + static_cast<int32_t>(Mt.GetValue((E - 1) * Np + i - 1));
        }
        PipeBarrier<PIPE_ALL>();   // the pool is reused by the byte mover below
    }

    __aicore__ inline void Process()
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t nb = static_cast<uint32_t>(GetBlockNum());
        const uint32_t A = t_.A;
        const uint32_t base = A / nb, rem = A % nb;
        const uint32_t d0 = idx * base + (idx < rem ? idx : rem);
        const uint32_t d1 = d0 + base + (idx < rem ? 1 : 0);
        if (d0 < d1) {
            if (!t_.hasScales) {
                WriteZeros(d0, d1);
            }
            Walk(d0, d1);
        }
        for (uint32_t s = 0; s < 2; ++s) {
            if (pending_[s]) {
                WaitFlag<HardEvent::MTE3_MTE2>(evR_[s]);
                pending_[s] = false;
            }
        }
    }

private:
    __aicore__ inline int32_t DstOf(uint32_t tIdx)
    {
        const uint32_t N = t_.N;
        const uint32_t i = tIdx % N, j = tIdx / N;
        int32_t v = colStart_[j];
        if (i > 0) {
            LocalTensor<float> M = matBuf_.Get<float>();
            v += static_cast<int32_t>(M.GetValue((i - 1) * t_.Ep + j));
        }
        return v;
    }

    __aicore__ inline void Walk(uint32_t d0, uint32_t d1)
    {
        const uint32_t N = t_.N, E = t_.E, Ep = t_.Ep, Np = t_.Np;
        const uint32_t T = N * E;
        LocalTensor<float> M = matBuf_.Get<float>();
        LocalTensor<float> Mt = matTBuf_.Get<float>();
        // the last block whose destination start is <= d0
        uint32_t lo = 0, hi = T - 1;
        while (lo < hi) {
            const uint32_t mid = (lo + hi + 1) / 2;
            if (DstOf(mid) <= static_cast<int32_t>(d0)) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        uint32_t tIdx = lo;
        uint32_t i = tIdx % N, j = tIdx / N;
        int64_t dd = DstOf(tIdx);
        int32_t prevD = (i > 0) ? static_cast<int32_t>(M.GetValue((i - 1) * Ep + j)) : 0;
        while (tIdx < T && dd < static_cast<int64_t>(d1)) {
            const int32_t curD = static_cast<int32_t>(M.GetValue(i * Ep + j));
            const int64_t n = curD - prevD;
            int64_t s = rowStart_[i];
            if (j > 0) {
                s += static_cast<int32_t>(Mt.GetValue((j - 1) * Np + i));
            }
            const int64_t a = dd > static_cast<int64_t>(d0) ? dd : static_cast<int64_t>(d0);
            const int64_t b = (dd + n) < static_cast<int64_t>(d1) ? (dd + n) : static_cast<int64_t>(d1);
            if (a < b) {
                const uint64_t m = static_cast<uint64_t>(b - a);
                const uint64_t sa = static_cast<uint64_t>(s + (a - dd));
                const uint64_t rb = t_.rowBytes;
                Move(outTokGm_, tokGm_, static_cast<uint64_t>(a) * rb, sa * rb, m * rb);
                if (t_.hasScales) {
                    Move(outScGm_, scGm_, static_cast<uint64_t>(a) * 4, sa * 4, m * 4);
                }
                WriteIdx(static_cast<uint32_t>(a), static_cast<int32_t>(sa), static_cast<uint32_t>(m));
            }
            dd += n;
            prevD = curD;
            ++tIdx;
            ++i;
            if (i == N) {
                i = 0;
                ++j;
                prevD = 0;
            }
        }
    }

    // GM -> UB -> GM byte copy through two ping-pong chunks
    __aicore__ inline void Move(const GlobalTensor<uint8_t>& dst, const GlobalTensor<uint8_t>& src, uint64_t dOff,
                                uint64_t sOff, uint64_t bytes)
    {
        const uint64_t CH = t_.chunkBytes;
        uint64_t done = 0;
        DataCopyPadExtParams<uint8_t> pad{false, 0, 0, 0};
        while (done < bytes) {
            const uint32_t len = static_cast<uint32_t>((bytes - done) < CH ? (bytes - done) : CH);
            const uint32_t slot = k_ & 1;
            LocalTensor<uint8_t> b = poolBuf_.GetWithOffset<uint8_t>(static_cast<uint32_t>(CH), static_cast<uint32_t>(slot * CH));
            if (pending_[slot]) {
                WaitFlag<HardEvent::MTE3_MTE2>(evR_[slot]);
                pending_[slot] = false;
            }
            DataCopyExtParams cp{1, len, 0, 0, 0};
            DataCopyPad(b, src[sOff + done], cp, pad);
            SetFlag<HardEvent::MTE2_MTE3>(evF_[slot]);
            WaitFlag<HardEvent::MTE2_MTE3>(evF_[slot]);
            DataCopyPad(dst[dOff + done], b, cp);
            SetFlag<HardEvent::MTE3_MTE2>(evR_[slot]);
            pending_[slot] = true;
            ++k_;
            done += len;
        }
    }

    __aicore__ inline void WriteIdx(uint32_t a, int32_t sa, uint32_t m)
    {
        const uint32_t IC = t_.idxChunk;
        for (uint32_t off = 0; off < m; off += IC) {
            const uint32_t len = (m - off) < IC ? (m - off) : IC;
            LocalTensor<int32_t> v = idxQ_.AllocTensor<int32_t>();
            const int32_t first = sa + static_cast<int32_t>(off);
            CreateVecIndex(v, first, (len + 7) / 8 * 8);
            idxQ_.EnQue(v);
            v = idxQ_.DeQue<int32_t>();
            DataCopyExtParams co{1, static_cast<uint32_t>(len * 4), 0, 0, 0};
            DataCopyPad(idxGm_[a + off], v, co);
            idxQ_.FreeTensor(v);
        }
    }

    __aicore__ inline void WriteZeros(uint32_t d0, uint32_t d1)
    {
        LocalTensor<float> z = zeroBuf_.Get<float>();
        const uint32_t ZC = t_.zeroChunk;
        for (uint32_t off = d0; off < d1; off += ZC) {
            const uint32_t len = (d1 - off) < ZC ? (d1 - off) : ZC;
            DataCopyExtParams co{1, static_cast<uint32_t>(len * 4), 0, 0, 0};
            DataCopyPad(outScF_[off], z, co);
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> poolBuf_, matBuf_, matTBuf_, zeroBuf_;
    TQue<TPosition::VECOUT, 1> idxQ_;
    GlobalTensor<uint8_t> tokGm_, scGm_, outTokGm_, outScGm_;
    GlobalTensor<float> outScF_;
    GlobalTensor<int32_t> idxGm_;
    GlobalTensor<TC> cntGm_;
    GlobalTensor<int64_t> numGm_;
    MoeReRoutingCustomTilingData t_;
    event_t evR_[2];
    event_t evF_[2];
    bool pending_[2] = {false, false};
    uint32_t k_ = 0;
    int32_t colStart_[MRR_MAX_NE];
    int32_t rowStart_[MRR_MAX_NE];
};

extern "C" __global__ __aicore__ void moe_re_routing_custom(GM_ADDR tokens, GM_ADDR expert_token_num_per_rank,
    GM_ADDR per_token_scales, GM_ADDR permute_tokens, GM_ADDR permute_per_token_scales, GM_ADDR permute_token_idx,
    GM_ADDR expert_token_num, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelMoeReRouting<DTYPE_EXPERT_TOKEN_NUM_PER_RANK> op;
    op.Init(tokens, expert_token_num_per_rank, per_token_scales, permute_tokens, permute_per_token_scales,
            permute_token_idx, expert_token_num, t);
    op.Setup();
    op.Process();
}

namespace optiling {
static uint64_t MrrRoundUp(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& ts = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& cs = context->GetInputShape(1)->GetStorageShape();
    if (ts.GetDimNum() < 1 || cs.GetDimNum() < 1) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t A = ts.GetDim(0);
    const uint64_t H = ts.GetDimNum() > 1 ? ts.GetDim(1) : 1;
    const uint64_t N = cs.GetDim(0);
    const uint64_t E = cs.GetDimNum() > 1 ? cs.GetDim(1) : 1;
    if (A == 0 || N == 0 || E == 0 || N > 128 || E > 128) {
        return ge::GRAPH_FAILED;
    }
    const ge::DataType tokDt = context->GetInputDesc(0)->GetDataType();
    const uint64_t esz = tokDt == ge::DT_INT8 ? 1 : 2;
    const auto* scShape = context->GetOptionalInputShape(2);
    const bool hasScales = scShape != nullptr && scShape->GetStorageShape().GetShapeSize() > 0;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    const uint64_t budget = ub - 16384;
    uint64_t coreNum = plat.GetCoreNumAiv();
    coreNum = coreNum == 0 ? 1 : coreNum;

    const uint64_t Np = MrrRoundUp(N, 8);
    const uint64_t Ep = MrrRoundUp(E, 8);
    const uint64_t matBytes = Np * Ep * 4;
    const uint64_t idxChunk = 2048;
    const uint64_t zeroChunk = 1024;
    const uint64_t fixed = 2 * matBytes + 2 * idxChunk * 4 + zeroChunk * 4 + 1024;
    if (fixed + 3 * matBytes > budget) {
        return ge::GRAPH_FAILED;
    }
    uint64_t chunk = (budget - fixed) / 2;
    chunk = chunk > 65536 ? 65536 : chunk;
    chunk = chunk / 32 * 32;
    uint64_t pool = 2 * chunk;
    pool = pool < 3 * matBytes ? 3 * matBytes : pool;
    pool = pool < 2048 ? 2048 : pool;
    if (chunk < 1024) {
        return ge::GRAPH_FAILED;
    }

    MoeReRoutingCustomTilingData* t = context->GetTilingData<MoeReRoutingCustomTilingData>();
    t->A = static_cast<uint32_t>(A);
    t->H = static_cast<uint32_t>(H);
    t->rowBytes = static_cast<uint32_t>(H * esz);
    t->N = static_cast<uint32_t>(N);
    t->E = static_cast<uint32_t>(E);
    t->Np = static_cast<uint32_t>(Np);
    t->Ep = static_cast<uint32_t>(Ep);
    t->hasScales = hasScales ? 1 : 0;
    t->chunkBytes = static_cast<uint32_t>(chunk);
    t->poolBytes = static_cast<uint32_t>(MrrRoundUp(pool, 32));
    t->matBytes = static_cast<uint32_t>(matBytes);
    t->idxChunk = static_cast<uint32_t>(idxChunk);
    t->zeroChunk = static_cast<uint32_t>(zeroChunk);

    uint64_t blockDim = A / 8;
    blockDim = blockDim < 1 ? 1 : blockDim;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (moe_re_routing).
class MoeReRoutingCustom : public OpDef {
public:
    explicit MoeReRoutingCustom(const char* name) : OpDef(name)
    {
        this->Input("tokens")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_BF16, ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("expert_token_num_per_rank")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("per_token_scales")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("permute_tokens")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_BF16, ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("permute_per_token_scales")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("permute_token_idx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32, ge::DT_INT32, ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("expert_token_num")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("expert_token_num_type").AttrType(OPTIONAL).Int(1);
        this->Attr("idx_type").AttrType(OPTIONAL).Int(0);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(MoeReRoutingCustom);
}  // namespace ops
