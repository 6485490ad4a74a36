// GroupNorm, y = (x - mean) / sqrt(var + eps) * gamma + beta over each (sample, group) of x (N, C, ...):
// Cannpilot's calibration kernel for the cost model (issue 22).
// Written for Cannpilot from documented AscendC behaviour.
//
// A group is Cg = C / num_groups channels of S spatial elements, contiguous in GM. Each core takes
// whole groups (former cores one more). Per group:
//   - statistics in one pass: sum and sum of squares in float, accumulated lane-wise over the
//     group's chunks into two tiles, folded pairwise and reduced once, var = E[x^2] - mean^2 (the
//     task's value ranges keep |mean| within a few standard deviations: no cancellation);
//   - y = (x - mean) * a_c + beta_c per channel c, a_c = rstd * gamma_c (centred first: folding the
//     mean into the shift, x * a_c + (beta_c - mean * a_c), cancels where y is near 0), so every
//     channel's chunk starts a fresh 32-byte aligned tile (channels are S long, S arbitrary);
//   - a group whose padded channels fit in UB is read once (resident) and normalised in place;
//     a larger one is read twice (statistics, then normalisation), each chunk through a
//     double-buffered queue so copies overlap compute;
//   - channels of one element (x is (N, C)) make a group one row of Cg elements: gamma and beta
//     are loaded once as float rows and applied as vectors (y = (x - mean) * A + beta,
//     A = rstd * gamma), not one instruction per channel.
// fp16/bf16 are computed in float.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct GroupNormCalTiling {
    uint32_t groups;            // N * num_groups
    uint32_t channelsPerGroup;  // Cg
    uint32_t channels;          // C
    uint32_t spatial;           // S: elements per channel
    uint32_t spatialPad;        // S rounded up to 16 elements (a resident channel's row in UB)
    uint32_t formerNum;         // the first formerNum cores take formerGroups groups, the rest tailGroups
    uint32_t formerGroups;
    uint32_t tailGroups;
    uint32_t tileLength;        // elements per streamed chunk (multiple of 16)
    uint32_t resident;          // 1: a whole group stays in UB (Cg rows of spatialPad <= residentCap)
    uint32_t residentCap;       // floats of the resident group buffer
    uint32_t rowGroups;         // 1: S = 1, a group is one row of Cg elements (gamma, beta as vectors)
    float epsilon;
    float invLength;            // 1 / (Cg * S)
};
REGISTER_TILING_DEFAULT(GroupNormCalTiling);

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class GroupNormKernel {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline GroupNormKernel() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, const GroupNormCalTiling& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        if (idx < t.formerNum) {
            count_ = t.formerGroups;
            first_ = idx * t.formerGroups;
        } else {
            count_ = t.tailGroups;
            first_ = t.formerNum * t.formerGroups + (idx - t.formerNum) * t.tailGroups;
        }
        if (first_ >= t.groups) {
            count_ = 0;
            return;
        }
        const uint64_t total = static_cast<uint64_t>(t.groups) * t.channelsPerGroup * t.spatial;
        xGm_.SetGlobalBuffer((__gm__ T*)x, total);
        yGm_.SetGlobalBuffer((__gm__ T*)y, total);
        gammaGm_.SetGlobalBuffer((__gm__ T*)gamma, t.channels);
        betaGm_.SetGlobalBuffer((__gm__ T*)beta, t.channels);
        const uint32_t tile = t.tileLength;
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tile * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tile * sizeof(T));
        pipe_.InitBuffer(fBuf_, tile * sizeof(float));
        pipe_.InitBuffer(acc1Buf_, tile * sizeof(float));
        pipe_.InitBuffer(acc2Buf_, tile * sizeof(float));
        pipe_.InitBuffer(workBuf_, tile * sizeof(float));
        pipe_.InitBuffer(statBuf_, 64);
        if (t.resident) {
            pipe_.InitBuffer(groupBuf_, t.residentCap * sizeof(float));
        }
        if (t.rowGroups) {
            pipe_.InitBuffer(gammaBuf_, tile * sizeof(float));
            pipe_.InitBuffer(betaBuf_, tile * sizeof(float));
            LoadChannelRow(gammaGm_, gammaBuf_.Get<float>());
            LoadChannelRow(betaGm_, betaBuf_.Get<float>());
        }
    }

    __aicore__ inline void Process()
    {
        for (uint32_t g = 0; g < count_; ++g) {
            const uint64_t group = first_ + g;
            const uint64_t base = group * t_.channelsPerGroup * static_cast<uint64_t>(t_.spatial);
            const uint32_t channel0 = static_cast<uint32_t>(group % (t_.channels / t_.channelsPerGroup)) *
                                      t_.channelsPerGroup;
            if (t_.rowGroups) {
                RowGroup(base, channel0);
            } else if (t_.resident) {
                ResidentGroup(base, channel0);
            } else {
                StreamedGroup(base, channel0);
            }
        }
    }

private:
    __aicore__ inline uint32_t ChunkLen(uint32_t c0) const
    {
        const uint32_t left = t_.spatial - c0;
        return left < t_.tileLength ? left : t_.tileLength;
    }

    __aicore__ inline void CopyIn(uint64_t offset, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[offset], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void CopyOut(uint64_t offset, uint32_t n)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[offset], y, cp);
        outQ_.FreeTensor(y);
    }

    // The dequeued chunk as float (in place for float inputs, else cast into dst).
    __aicore__ inline LocalTensor<float> AsFloat(LocalTensor<T>& x, LocalTensor<float>& dst, uint32_t n)
    {
        if constexpr (IS_FLOAT) {
            return x;
        } else {
            Cast(dst, x, RoundMode::CAST_NONE, n);
            return dst;
        }
    }

    __aicore__ inline void Accumulate(const LocalTensor<float>& v, uint32_t n)
    {
        LocalTensor<float> acc1 = acc1Buf_.Get<float>();
        LocalTensor<float> acc2 = acc2Buf_.Get<float>();
        LocalTensor<float> sq = workBuf_.Get<float>();
        const int32_t cnt = static_cast<int32_t>(n);
        Add(acc1, acc1, v, cnt);
        Mul(sq, v, v, cnt);
        Add(acc2, acc2, sq, cnt);
    }

    // mean and rstd of the group from the two accumulator tiles (their first `width` lanes).
    __aicore__ inline void Statistics(uint32_t width)
    {
        LocalTensor<float> acc1 = acc1Buf_.Get<float>();
        LocalTensor<float> acc2 = acc2Buf_.Get<float>();
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> stat = statBuf_.Get<float>();
        // fold the lanes pairwise down to 64 before the reduction: a sum of thousands of lanes
        // in one sequence loses the digits a group's variance needs
        uint32_t w = width;
        while (w > 64) {
            const uint32_t h = ((w + 1) / 2 + 7) / 8 * 8;       // h >= w - h: no lane is dropped
            Add(acc1, acc1, acc1[h], static_cast<int32_t>(w - h));
            Add(acc2, acc2, acc2[h], static_cast<int32_t>(w - h));
            w = h;
        }
        ReduceSum(stat, acc1, work, static_cast<int32_t>(w));
        ReduceSum(stat[8], acc2, work, static_cast<int32_t>(w));
        SyncVectorToScalar();
        mean_ = stat.GetValue(0) * t_.invLength;
        float var = stat.GetValue(8) * t_.invLength - mean_ * mean_;
        var = var > 0.0f ? var : 0.0f;
        Duplicate(stat, var + t_.epsilon, 8);
        Sqrt(stat, stat, 8);
        SyncVectorToScalar();
        rstd_ = 1.0f / stat.GetValue(0);
    }

    __aicore__ inline void SyncVectorToScalar()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
    }

    __aicore__ inline void Affine(uint32_t channel, float& a, float& b)
    {
        const float g = static_cast<float>(gammaGm_.GetValue(channel));
        const float be = static_cast<float>(betaGm_.GetValue(channel));
        a = rstd_ * g;
        b = be;
    }

    __aicore__ inline void ZeroAccumulators(uint32_t width)
    {
        Duplicate(acc1Buf_.Get<float>(), 0.0f, static_cast<int32_t>(width));
        Duplicate(acc2Buf_.Get<float>(), 0.0f, static_cast<int32_t>(width));
    }

    // y of one chunk from its float values v: (v - mean) * a + b, cast and queued for the copy out.
    __aicore__ inline void StoreChunk(const LocalTensor<float>& v, float a, float b, uint32_t n)
    {
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        const int32_t cnt = static_cast<int32_t>(n);
        if constexpr (IS_FLOAT) {
            Adds(y, v, -mean_, cnt);
            Muls(y, y, a, cnt);
            Adds(y, y, b, cnt);
        } else {
            Adds(v, v, -mean_, cnt);
            Muls(v, v, a, cnt);
            Adds(v, v, b, cnt);
            Cast(y, v, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
    }

    // gamma or beta (C elements, at most one chunk) as a float row.
    __aicore__ inline void LoadChannelRow(GlobalTensor<T>& src, LocalTensor<float> dst)
    {
        LocalTensor<T> v = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(t_.channels * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(v, src, cp, pad);
        inQ_.EnQue(v);
        v = inQ_.DeQue<T>();
        if constexpr (IS_FLOAT) {
            Adds(dst, v, 0.0f, static_cast<int32_t>(t_.channels));
        } else {
            Cast(dst, v, RoundMode::CAST_NONE, t_.channels);
        }
        inQ_.FreeTensor(v);
    }

    // S = 1: the group is one row of Cg elements, channel0 a multiple of 16 (or 0).
    __aicore__ inline void RowGroup(uint64_t base, uint32_t channel0)
    {
        LocalTensor<float> f = fBuf_.Get<float>();
        LocalTensor<float> a = acc1Buf_.Get<float>();
        const uint32_t m = t_.channelsPerGroup;
        const int32_t cnt = static_cast<int32_t>(m);
        ZeroAccumulators(m);
        CopyIn(base, m);
        LocalTensor<T> x = inQ_.DeQue<T>();
        if constexpr (IS_FLOAT) {
            Adds(f, x, 0.0f, cnt);
        } else {
            Cast(f, x, RoundMode::CAST_NONE, m);
        }
        inQ_.FreeTensor(x);
        Accumulate(f, m);
        Statistics(m);
        Muls(a, gammaBuf_.Get<float>()[channel0], rstd_, cnt);          // A = rstd * gamma
        LocalTensor<float> b = betaBuf_.Get<float>()[channel0];
        Adds(f, f, -mean_, cnt);
        Mul(f, f, a, cnt);
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            Add(y, f, b, cnt);
        } else {
            Add(f, f, b, cnt);
            Cast(y, f, RoundMode::CAST_RINT, m);
        }
        outQ_.EnQue(y);
        CopyOut(base, m);
    }

    // The group in UB: channel k at row k * spatialPad (a row fits one chunk).
    __aicore__ inline void ResidentGroup(uint64_t base, uint32_t channel0)
    {
        LocalTensor<float> grp = groupBuf_.Get<float>();
        const uint32_t s = t_.spatial;
        ZeroAccumulators(s);
        for (uint32_t k = 0; k < t_.channelsPerGroup; ++k) {
            CopyIn(base + static_cast<uint64_t>(k) * s, s);
            LocalTensor<T> x = inQ_.DeQue<T>();
            LocalTensor<float> row = grp[k * t_.spatialPad];
            if constexpr (IS_FLOAT) {
                Adds(row, x, 0.0f, static_cast<int32_t>(s));
            } else {
                Cast(row, x, RoundMode::CAST_NONE, s);
            }
            inQ_.FreeTensor(x);
            Accumulate(row, s);
        }
        Statistics(s);
        for (uint32_t k = 0; k < t_.channelsPerGroup; ++k) {
            float a, b;
            Affine(channel0 + k, a, b);
            LocalTensor<float> row = grp[k * t_.spatialPad];
            StoreChunk(row, a, b, s);
            CopyOut(base + static_cast<uint64_t>(k) * s, s);
        }
    }

    // The group streamed twice, channel by channel in chunks of tileLength.
    __aicore__ inline void StreamedGroup(uint64_t base, uint32_t channel0)
    {
        LocalTensor<float> f = fBuf_.Get<float>();
        const uint32_t width = t_.spatial < t_.tileLength ? t_.spatial : t_.tileLength;
        ZeroAccumulators(width);
        for (uint32_t k = 0; k < t_.channelsPerGroup; ++k) {
            const uint64_t row = base + static_cast<uint64_t>(k) * t_.spatial;
            for (uint32_t c0 = 0; c0 < t_.spatial; c0 += t_.tileLength) {
                const uint32_t n = ChunkLen(c0);
                CopyIn(row + c0, n);
                LocalTensor<T> x = inQ_.DeQue<T>();
                Accumulate(AsFloat(x, f, n), n);
                inQ_.FreeTensor(x);
            }
        }
        Statistics(width);
        for (uint32_t k = 0; k < t_.channelsPerGroup; ++k) {
            float a, b;
            Affine(channel0 + k, a, b);
            const uint64_t row = base + static_cast<uint64_t>(k) * t_.spatial;
            for (uint32_t c0 = 0; c0 < t_.spatial; c0 += t_.tileLength) {
                const uint32_t n = ChunkLen(c0);
                CopyIn(row + c0, n);
                LocalTensor<T> x = inQ_.DeQue<T>();
                StoreChunk(AsFloat(x, f, n), a, b, n);
                inQ_.FreeTensor(x);
                CopyOut(row + c0, n);
            }
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> fBuf_, acc1Buf_, acc2Buf_, workBuf_, statBuf_, groupBuf_, gammaBuf_, betaBuf_;
    GlobalTensor<T> xGm_, yGm_, gammaGm_, betaGm_;
    GroupNormCalTiling t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    float mean_ = 0.0f;
    float rstd_ = 1.0f;
};

extern "C" __global__ __aicore__ void group_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y,
                                                        GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GroupNormKernel<DTYPE_X> op;
    op.Init(x, gamma, beta, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    if (shape.GetDimNum() < 2) {
        return ge::GRAPH_FAILED;               // x is (N, C, ...)
    }
    const uint64_t n = static_cast<uint64_t>(shape.GetDim(0));
    const uint64_t c = static_cast<uint64_t>(shape.GetDim(1));
    uint64_t s = 1;
    for (size_t d = 2; d < shape.GetDimNum(); ++d) {
        s *= static_cast<uint64_t>(shape.GetDim(d));
    }
    const int64_t numGroups = *context->GetAttrs()->GetAttrPointer<int64_t>(0);
    const float* eps = context->GetAttrs()->GetAttrPointer<float>(1);
    if (numGroups <= 0 || c % static_cast<uint64_t>(numGroups) != 0 || n * c * s == 0) {
        return ge::GRAPH_FAILED;               // C must divide into num_groups groups
    }
    const uint64_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();

    GroupNormCalTiling* t = context->GetTilingData<GroupNormCalTiling>();
    const uint64_t cg = c / static_cast<uint64_t>(numGroups);
    const uint64_t groups = n * static_cast<uint64_t>(numGroups);
    // Chunks of 4096 elements: two queues of two buffers of T, four float tiles; the rest of UB
    // (less 2 KB) holds a resident group, or gamma and beta as float rows (S = 1).
    const uint64_t tile = 4096;
    const bool rowGroups = s == 1 && c <= tile && (numGroups == 1 || cg % 16 == 0);
    const uint64_t used = 2 * BUFFER_NUM * tile * bytes + (rowGroups ? 6 : 4) * tile * 4 + 64 + 2048;
    const uint64_t cap = ub > used ? (ub - used) / 4 / 16 * 16 : 0;
    const uint64_t sPad = (s + 15) / 16 * 16;
    t->groups = static_cast<uint32_t>(groups);
    t->channelsPerGroup = static_cast<uint32_t>(cg);
    t->channels = static_cast<uint32_t>(c);
    t->spatial = static_cast<uint32_t>(s);
    t->spatialPad = static_cast<uint32_t>(sPad);
    t->tileLength = static_cast<uint32_t>(tile);
    t->rowGroups = rowGroups ? 1 : 0;
    t->resident = (!rowGroups && s <= tile && cg * sPad <= cap) ? 1 : 0;
    t->residentCap = t->resident ? static_cast<uint32_t>(cg * sPad) : 0;
    t->epsilon = eps != nullptr ? *eps : 1e-5f;
    t->invLength = 1.0f / static_cast<float>(cg * s);
    uint64_t blockDim = groups < coreNum ? groups : coreNum;
    t->formerNum = static_cast<uint32_t>(groups % blockDim);
    t->formerGroups = static_cast<uint32_t>((groups + blockDim - 1) / blockDim);
    t->tailGroups = static_cast<uint32_t>(groups / blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (group_norm).
class GroupNormCustom : public OpDef {
public:
    explicit GroupNormCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("beta")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("num_groups").AttrType(REQUIRED).Int();
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-5);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(GroupNormCustom);
}  // namespace ops
