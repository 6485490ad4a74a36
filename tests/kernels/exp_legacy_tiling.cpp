// Exp with the legacy tiling definition: BEGIN_TILING_DATA_DEF / TILING_DATA_FIELD_DEF /
// END_TILING_DATA_DEF / REGISTER_TILING_DATA_CLASS on the host, set_<field>() + SaveToBuffer, and
// GET_TILING_DATA in the kernel reading the same bytes. Computes y = base^(x * scale + shift)
// in float (Cast for fp16 and bf16).
#include <cmath>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ExpTilingData)
TILING_DATA_FIELD_DEF(uint64_t, total);
TILING_DATA_FIELD_DEF(uint32_t, alignElems);
TILING_DATA_FIELD_DEF(uint32_t, unitsPerCore);
TILING_DATA_FIELD_DEF(uint32_t, formerNum);
TILING_DATA_FIELD_DEF(uint32_t, tileLength);
TILING_DATA_FIELD_DEF(float, scale);   // y = exp((x * scale + shift) * lnBase)
TILING_DATA_FIELD_DEF(float, shift);
TILING_DATA_FIELD_DEF(float, lnBase);  // 1 for base -1 (e)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ExpCustom, ExpTilingData)
}  // namespace optiling

constexpr int32_t BUFFER_NUM = 2;

template <typename T>
class KernelExp {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const optiling::ExpTilingData& t)
    {
        uint64_t idx = AscendC::GetBlockIdx();
        uint64_t big = (uint64_t)(t.unitsPerCore + 1) * t.alignElems;
        uint64_t small = (uint64_t)t.unitsPerCore * t.alignElems;
        uint64_t offset = idx < t.formerNum ? idx * big : t.formerNum * big + (idx - t.formerNum) * small;
        uint64_t share = idx < t.formerNum ? big : small;
        length_ = offset >= t.total ? 0 : (t.total - offset < share ? t.total - offset : share);
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tile_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tile_ * sizeof(T));
        scale_ = t.scale * t.lnBase;
        shift_ = t.shift * t.lnBase;
        if constexpr (!std::is_same_v<T, float>) {
            pipe_.InitBuffer(calc_, tile_ * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        for (uint64_t off = 0; off < length_; off += tile_) {
            uint32_t n = length_ - off < tile_ ? (uint32_t)(length_ - off) : tile_;
            CopyIn(off, n);
            Compute(n);
            CopyOut(off, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint64_t off, uint32_t n)
    {
        AscendC::LocalTensor<T> x = inQ_.AllocTensor<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(x, xGm_[off], n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(x, xGm_[off], cp, pad);
        }
        inQ_.EnQue(x);
    }
    __aicore__ inline void Compute(uint32_t n)
    {
        AscendC::LocalTensor<T> x = inQ_.DeQue<T>();
        AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (std::is_same_v<T, float>) {
            AscendC::Muls(y, x, scale_, n);
            AscendC::Adds(y, y, shift_, n);
            AscendC::Exp(y, y, n);
        } else {
            AscendC::LocalTensor<float> f = calc_.Get<float>();
            AscendC::Cast(f, x, AscendC::RoundMode::CAST_NONE, n);
            AscendC::Muls(f, f, scale_, n);
            AscendC::Adds(f, f, shift_, n);
            AscendC::Exp(f, f, n);
            AscendC::Cast(y, f, AscendC::RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }
    __aicore__ inline void CopyOut(uint64_t off, uint32_t n)
    {
        AscendC::LocalTensor<T> y = outQ_.DeQue<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(yGm_[off], y, n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPad(yGm_[off], y, cp);
        }
        outQ_.FreeTensor(y);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> calc_;
    AscendC::GlobalTensor<T> xGm_, yGm_;
    uint64_t length_ = 0;
    uint32_t tile_ = 0;
    float scale_ = 1.0f;
    float shift_ = 0.0f;
};

extern "C" __global__ __aicore__ void exp_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelExp<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ExpTilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    uint32_t align = 32 / typeSize;
    uint64_t units = (total + align - 1) / align;
    uint64_t cores = platform.GetCoreNumAiv();
    if (units < cores) cores = units == 0 ? 1 : units;
    tiling.set_total(total);
    tiling.set_alignElems(align);
    tiling.set_unitsPerCore((uint32_t)(units / cores));
    tiling.set_formerNum((uint32_t)(units % cores));
    tiling.set_tileLength(8192);
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const float* base = attrs->GetAttrPointer<float>(0);
    const float* scale = attrs->GetAttrPointer<float>(1);
    const float* shift = attrs->GetAttrPointer<float>(2);
    float b = base ? *base : -1.0f;
    tiling.set_lnBase(b == -1.0f ? 1.0f : std::log(b));
    tiling.set_scale(scale ? *scale : 1.0f);
    tiling.set_shift(shift ? *shift : 0.0f);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    context->SetBlockDim((uint32_t)cores);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
