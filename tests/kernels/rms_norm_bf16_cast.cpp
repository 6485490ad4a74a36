// RMSNorm over the last axis: y = x * rsqrt(mean(x^2) + epsilon) * gamma. Rows are split over the
// cores (former cores take one row more). Each row is widened to float with Cast (bf16 and fp16
// have no arithmetic on A2 for bf16), squared, summed with ReduceSum, scaled, multiplied by gamma
// (kept in float in UB for the whole kernel) and rounded back with CAST_RINT. Rows whose byte
// length is not a 32 B multiple move with DataCopyPad.
#include <cmath>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct RmsNormCastTiling {
    uint64_t rows;
    uint32_t cols;          // D, the normalised axis
    uint32_t colsAligned;   // D rounded up to 32 B of float
    uint32_t rowsPerCore;
    uint32_t formerNum;     // cores that take one row more
    uint32_t bufferNum;     // 2 when two rows fit, else 1
    float epsilon;
};

constexpr uint32_t TMP_BYTES = 8 * 1024;

template <typename T>
class KernelRmsNorm {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const RmsNormCastTiling& t)
    {
        uint64_t idx = AscendC::GetBlockIdx();
        uint64_t first = idx < t.formerNum ? idx * (t.rowsPerCore + 1)
                                           : t.formerNum * (t.rowsPerCore + 1) + (idx - t.formerNum) * t.rowsPerCore;
        rows_ = idx < t.formerNum ? t.rowsPerCore + 1 : t.rowsPerCore;
        cols_ = t.cols;
        eps_ = t.epsilon;
        xGm_.SetGlobalBuffer((__gm__ T*)x + first * cols_, rows_ * cols_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + first * cols_, rows_ * cols_);
        gammaGm_.SetGlobalBuffer((__gm__ T*)gamma, cols_);
        uint32_t rowBytes = t.colsAligned * sizeof(float);
        pipe_.InitBuffer(inQ_, t.bufferNum, rowBytes);
        pipe_.InitBuffer(outQ_, t.bufferNum, rowBytes);
        pipe_.InitBuffer(xf_, rowBytes);
        pipe_.InitBuffer(sq_, rowBytes);
        pipe_.InitBuffer(gammaF_, rowBytes);
        pipe_.InitBuffer(tmp_, TMP_BYTES);
        LoadGamma();
    }
    __aicore__ inline void Process()
    {
        for (uint64_t r = 0; r < rows_; ++r) {
            CopyIn(r);
            Compute();
            CopyOut(r);
        }
    }

private:
    __aicore__ inline void CopyRowIn(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src)
    {
        if ((cols_ * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(dst, src, cols_);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(cols_ * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(dst, src, cp, pad);
        }
    }
    __aicore__ inline void LoadGamma()
    {
        AscendC::LocalTensor<T> g = inQ_.AllocTensor<T>();
        CopyRowIn(g, gammaGm_);
        inQ_.EnQue(g);
        g = inQ_.DeQue<T>();
        AscendC::LocalTensor<float> gf = gammaF_.Get<float>();
        if constexpr (std::is_same_v<T, float>) {
            AscendC::DataCopy(gf, g, colsAlignedFloat());
        } else {
            AscendC::Cast(gf, g, AscendC::RoundMode::CAST_NONE, cols_);
        }
        inQ_.FreeTensor(g);
    }
    __aicore__ inline uint32_t colsAlignedFloat() const { return (cols_ + 7) / 8 * 8; }
    __aicore__ inline void CopyIn(uint64_t r)
    {
        AscendC::LocalTensor<T> x = inQ_.AllocTensor<T>();
        CopyRowIn(x, xGm_[r * cols_]);
        inQ_.EnQue(x);
    }
    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<T> x = inQ_.DeQue<T>();
        AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
        AscendC::LocalTensor<float> xf = xf_.Get<float>();
        AscendC::LocalTensor<float> sq = sq_.Get<float>();
        AscendC::LocalTensor<float> tmp = tmp_.Get<float>();
        if constexpr (std::is_same_v<T, float>) {
            AscendC::DataCopy(xf, x, colsAlignedFloat());
        } else {
            AscendC::Cast(xf, x, AscendC::RoundMode::CAST_NONE, cols_);
        }
        inQ_.FreeTensor(x);
        AscendC::Mul(sq, xf, xf, cols_);
        AscendC::ReduceSum(sq, sq, tmp, cols_);
        event_t vToS = static_cast<event_t>(pipe_.FetchEventID(AscendC::HardEvent::V_S));
        AscendC::SetFlag<AscendC::HardEvent::V_S>(vToS);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(vToS);
        float meanSq = sq.GetValue(0) / (float)cols_;
        float inv = 1.0f / std::sqrt(meanSq + eps_);
        event_t sToV = static_cast<event_t>(pipe_.FetchEventID(AscendC::HardEvent::S_V));
        AscendC::SetFlag<AscendC::HardEvent::S_V>(sToV);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(sToV);
        AscendC::Muls(xf, xf, inv, cols_);
        AscendC::Mul(xf, xf, gammaF_.Get<float>(), cols_);
        if constexpr (std::is_same_v<T, float>) {
            AscendC::DataCopy(y, xf, colsAlignedFloat());
        } else {
            AscendC::Cast(y, xf, AscendC::RoundMode::CAST_RINT, cols_);
        }
        outQ_.EnQue(y);
    }
    __aicore__ inline void CopyOut(uint64_t r)
    {
        AscendC::LocalTensor<T> y = outQ_.DeQue<T>();
        if ((cols_ * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(yGm_[r * cols_], y, cols_);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(cols_ * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPad(yGm_[r * cols_], y, cp);
        }
        outQ_.FreeTensor(y);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xf_, sq_, gammaF_, tmp_;
    AscendC::GlobalTensor<T> xGm_, yGm_, gammaGm_;
    uint64_t rows_ = 0;
    uint32_t cols_ = 0;
    float eps_ = 1e-6f;
};

extern "C" __global__ __aicore__ void rms_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR workspace,
                                                      GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(RmsNormCastTiling);
    GET_TILING_DATA(t, tiling);
    KernelRmsNorm<DTYPE_X> op;
    op.Init(x, gamma, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<RmsNormCastTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    uint32_t cols = (uint32_t)shape.GetDim(shape.GetDimNum() - 1);
    uint64_t rows = cols == 0 ? 0 : shape.GetShapeSize() / cols;
    t->rows = rows;
    t->cols = cols;
    t->colsAligned = (cols + 7) / 8 * 8;
    uint64_t rowBytes = (uint64_t)t->colsAligned * sizeof(float);
    // queues (in, out) x bufferNum + xf, sq, gamma + reduction tmp
    t->bufferNum = (4 * rowBytes + 3 * rowBytes + TMP_BYTES <= ub) ? 2 : 1;
    if (2 * rowBytes + 3 * rowBytes + TMP_BYTES > ub) {
        return ge::GRAPH_FAILED;   // a row does not fit in UB: needs a split-D variant
    }
    uint64_t cores = platform.GetCoreNumAiv();
    if (rows < cores) cores = rows == 0 ? 1 : rows;
    t->rowsPerCore = (uint32_t)(rows / cores);
    t->formerNum = (uint32_t)(rows % cores);
    const float* eps = context->GetAttrs()->GetAttrPointer<float>(0);
    t->epsilon = eps ? *eps : 1e-6f;
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
