// RmsNorm over the last axis, y = x / sqrt(mean(x^2) + epsilon) * gamma: the normalization
// exemplar of the Cannpilot knowledge base, written for Cannpilot from documented AscendC
// behaviour. Shows: whole rows per core (former/tail split on rows), several short rows merged
// into one tile with a single multi-block DataCopyPad (each row padded to 32 B in UB), gamma
// loaded once per core with an explicit MTE2->V flag, per-row ReduceSum with a V->S flag before
// the scalar read, and fp16/bf16 computed in float.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct RmsNormCustomTiling {
    uint32_t rows;          // product of all dims but the last
    uint32_t d;             // last-axis length
    uint32_t dPad;          // d rounded up to 32 bytes, in elements of T (the UB row stride)
    uint32_t formerNum;     // the first formerNum cores take formerRows rows, the rest tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t rowsPerTile;   // rows merged into one tile
    uint32_t bufferNum;     // 2 (double buffering) when it fits, else 1
    float epsilon;
    float invD;
};
REGISTER_TILING_DEFAULT(RmsNormCustomTiling);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelRmsNorm {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline KernelRmsNorm() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const RmsNormCustomTiling& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        uint32_t rowStart;
        if (idx < t.formerNum) {
            rows_ = t.formerRows;
            rowStart = idx * t.formerRows;
        } else {
            rows_ = t.tailRows;
            rowStart = t.formerNum * t.formerRows + (idx - t.formerNum) * t.tailRows;
        }
        if (rows_ == 0 || rowStart >= t.rows) {
            rows_ = 0;
            return;
        }
        d_ = t.d;
        dPad_ = t.dPad;
        k_ = t.rowsPerTile;
        epsilon_ = t.epsilon;
        invD_ = t.invD;
        xGm_.SetGlobalBuffer((__gm__ T*)x + static_cast<uint64_t>(rowStart) * d_, static_cast<uint64_t>(rows_) * d_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + static_cast<uint64_t>(rowStart) * d_, static_cast<uint64_t>(rows_) * d_);
        gammaGm_.SetGlobalBuffer((__gm__ T*)gamma, d_);

        const uint32_t tileElems = k_ * dPad_;
        pipe_.InitBuffer(inQ_, t.bufferNum, tileElems * sizeof(T));
        pipe_.InitBuffer(outQ_, t.bufferNum, tileElems * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(calcBuf_, tileElems * sizeof(float));
            pipe_.InitBuffer(gammaRawBuf_, dPad_ * sizeof(T));
        }
        pipe_.InitBuffer(gammaBuf_, dPad_ * sizeof(float));
        pipe_.InitBuffer(sqBuf_, dPad_ * sizeof(float));
        pipe_.InitBuffer(tmpBuf_, dPad_ * sizeof(float));
        pipe_.InitBuffer(sumBuf_, 32);
        LoadGamma();
    }

    __aicore__ inline void Process()
    {
        for (uint32_t r = 0; r < rows_; r += k_) {
            const uint32_t m = (rows_ - r < k_) ? rows_ - r : k_;
            CopyIn(r, m);
            Compute(m);
            CopyOut(r, m);
        }
    }

private:
    // gamma goes through a TBuf, not a queue: the MTE2 -> V order needs a flag of its own.
    __aicore__ inline void LoadGamma()
    {
        LocalTensor<float> g = gammaBuf_.Get<float>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(d_ * sizeof(T)), 0, 0, 0};
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        if constexpr (IS_FLOAT) {
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(g, gammaGm_, cp, pad);
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
        } else {
            LocalTensor<T> raw = gammaRawBuf_.Get<T>();
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(raw, gammaGm_, cp, pad);
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
            Cast(g, raw, RoundMode::CAST_NONE, d_);
        }
    }

    // m rows in one copy; DataCopyPad pads each row to 32 B, so row j starts at j * dPad.
    __aicore__ inline void CopyIn(uint32_t r, uint32_t m)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(d_ * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[static_cast<uint64_t>(r) * d_], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t m)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            NormRows(y, x, m);
        } else {
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, m * dPad_);
            NormRows(f, f, m);
            Cast(y, f, RoundMode::CAST_RINT, m * dPad_);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void NormRows(LocalTensor<float>& dst, LocalTensor<float>& src, uint32_t m)
    {
        LocalTensor<float> gamma = gammaBuf_.Get<float>();
        LocalTensor<float> sq = sqBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> sum = sumBuf_.Get<float>();
        const int32_t n = static_cast<int32_t>(d_);
        for (uint32_t j = 0; j < m; ++j) {
            LocalTensor<float> s = src[j * dPad_];
            LocalTensor<float> o = dst[j * dPad_];
            Mul(sq, s, s, n);
            ReduceSum(sum, sq, tmp, n);
            Muls(sum, sum, invD_, 1);
            Adds(sum, sum, epsilon_, 1);
            Sqrt(sum, sum, 1);
            // The scalar unit reads what the vector unit wrote: order V -> S explicitly.
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(e);
            WaitFlag<HardEvent::V_S>(e);
            const float inv = 1.0f / sum.GetValue(0);
            Muls(o, s, inv, n);
            Mul(o, o, gamma, n);
        }
    }

    __aicore__ inline void CopyOut(uint32_t r, uint32_t m)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(d_ * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[static_cast<uint64_t>(r) * d_], y, cp);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_, gammaRawBuf_, gammaBuf_, sqBuf_, tmpBuf_, sumBuf_;
    GlobalTensor<T> xGm_, yGm_, gammaGm_;
    uint32_t rows_ = 0, d_ = 0, dPad_ = 0, k_ = 1;
    float epsilon_ = 0.0f, invD_ = 0.0f;
};

extern "C" __global__ __aicore__ void rms_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR workspace,
                                                      GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelRmsNorm<DTYPE_X> op;
    op.Init(x, gamma, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const uint64_t total = shape.GetShapeSize();
    const uint64_t d = shape.GetDimNum() == 0 ? 1 : shape.GetDim(shape.GetDimNum() - 1);
    const uint64_t rows = d == 0 ? 0 : total / d;
    const uint64_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const float* eps = context->GetAttrs()->GetAttrPointer<float>(0);
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();

    const uint64_t dPad = (d * bytes + 31) / 32 * 32 / bytes;
    // Fixed UB: gamma (float, plus raw for 16-bit), x^2 and reduce scratch rows, the sum block.
    const uint64_t fixed = dPad * 4 + (bytes == 4 ? 0 : dPad * bytes) + 2 * dPad * 4 + 32;
    const uint64_t budget = ub - 1024;
    uint64_t bufferNum = 2;
    uint64_t perRow = dPad * (2 * bufferNum * bytes + (bytes == 4 ? 0 : 4));
    if (fixed + perRow > budget) {
        bufferNum = 1;
        perRow = dPad * (2 * bytes + (bytes == 4 ? 0 : 4));
        if (fixed + perRow > budget) {
            return ge::GRAPH_FAILED;   // a row this long needs the split-D variant
        }
    }
    uint64_t k = (budget - fixed) / perRow;

    uint64_t blockDim = rows < coreNum ? rows : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    const uint64_t base = rows / blockDim;
    const uint64_t former = rows % blockDim;
    const uint64_t maxRows = former > 0 ? base + 1 : base;
    // At least two tiles per core when there are rows enough, so double buffering overlaps.
    const uint64_t half = (maxRows + 1) / 2;
    if (k > half) {
        k = half;
    }
    if (k > 4095) {
        k = 4095;   // DataCopyExtParams.blockCount limit
    }
    if (k == 0) {
        k = 1;
    }

    RmsNormCustomTiling* t = context->GetTilingData<RmsNormCustomTiling>();
    t->rows = static_cast<uint32_t>(rows);
    t->d = static_cast<uint32_t>(d);
    t->dPad = static_cast<uint32_t>(dPad);
    t->formerNum = static_cast<uint32_t>(former);
    t->formerRows = static_cast<uint32_t>(base + 1);
    t->tailRows = static_cast<uint32_t>(base);
    t->rowsPerTile = static_cast<uint32_t>(k);
    t->bufferNum = static_cast<uint32_t>(bufferNum);
    t->epsilon = eps != nullptr ? *eps : 1e-6f;
    t->invD = d == 0 ? 0.0f : 1.0f / static_cast<float>(d);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (rms_norm).
class RmsNormCustom : public OpDef {
public:
    explicit RmsNormCustom(const char* name) : OpDef(name)
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
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-06);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(RmsNormCustom);
}  // namespace ops
