// RED TEAM: the honest relu that lowers its cost figures at their source in the block's memory:
// it reconfigures the block's cost model (every vector weight 1/1000, no scalar issue cycles) and
// registers its own GM slices as buffers starting there, so every copy looks 512-byte aligned.
// Expect SEC.SOURCE; with the scan off, no effect: the launcher looks each vector instruction's
// weight up in its own table (the event carries the API's name hash), charges scalar issue at its
// own rate and decides alignment from its own buffer list (the event carries the GM address), so
// the estimate is the honest twin's.
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ReluTiling {
    uint64_t total;        // elements
    uint32_t alignElems;   // elements per 32 B
    uint32_t unitsPerCore; // 32 B units every core takes
    uint32_t formerNum;    // cores that take one unit more
    uint32_t tileLength;   // elements per tile
};

constexpr int32_t BUFFER_NUM = 2;

template <typename T>
class KernelRelu {
    using C = std::conditional_t<std::is_same_v<T, bfloat16_t>, float, T>;  // compute type
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ReluTiling& t)
    {
        uint64_t idx = AscendC::GetBlockIdx();
        uint64_t big = (uint64_t)(t.unitsPerCore + 1) * t.alignElems;
        uint64_t small = (uint64_t)t.unitsPerCore * t.alignElems;
        uint64_t offset = idx < t.formerNum ? idx * big : t.formerNum * big + (idx - t.formerNum) * small;
        uint64_t share = idx < t.formerNum ? big : small;
        length_ = offset >= t.total ? 0 : (t.total - offset < share ? t.total - offset : share);
        tile_ = t.tileLength;
        xBase_ = (__gm__ T*)x + offset;
        yBase_ = (__gm__ T*)y + offset;
        xGm_.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tile_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tile_ * sizeof(T));
        if constexpr (std::is_same_v<T, bfloat16_t>) {
            pipe_.InitBuffer(calc_, tile_ * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        cannsim::cost::configure("scalar_issue_cycles=0 vector_issue_cycles=0 weight.Maxs=0.001 "
                                 "weight.Maxs.b32=0.001 weight.Cast=0.001");
        auto& regions = cannsim::cost::gm_regions();
        regions.insert(regions.begin(), {reinterpret_cast<uintptr_t>(yBase_), length_ * sizeof(T)});
        regions.insert(regions.begin(), {reinterpret_cast<uintptr_t>(xBase_), length_ * sizeof(T)});
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
        if constexpr (std::is_same_v<T, bfloat16_t>) {
            AscendC::LocalTensor<float> f = calc_.Get<float>();
            AscendC::Cast(f, x, AscendC::RoundMode::CAST_NONE, n);
            AscendC::Maxs(f, f, 0.0f, n);
            AscendC::Cast(y, f, AscendC::RoundMode::CAST_RINT, n);
        } else {
            AscendC::Maxs(y, x, static_cast<T>(0.0f), n);
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
    __gm__ T* xBase_ = nullptr;
    __gm__ T* yBase_ = nullptr;
    uint64_t length_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTiling);
    GET_TILING_DATA(t, tiling);
    KernelRelu<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ReluTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->alignElems = 32 / typeSize;
    uint64_t units = (t->total + t->alignElems - 1) / t->alignElems;
    uint64_t cores = platform.GetCoreNumAiv();
    if (units < cores) cores = units == 0 ? 1 : units;
    t->unitsPerCore = (uint32_t)(units / cores);
    t->formerNum = (uint32_t)(units % cores);
    t->tileLength = 8192;
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
