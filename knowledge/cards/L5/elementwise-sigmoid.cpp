// Sigmoid, y = 1 / (1 + exp(-x)): the elementwise exemplar of the Cannpilot knowledge base.
// Written for Cannpilot from documented AscendC behaviour. Shows: a multi-core split in 32-byte
// units with former/tail cores, double-buffered tiles sized from the UB, DataCopyPad for the one
// unaligned tail, and fp16/bf16 computed in float.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct SigmoidTiling {
    uint32_t totalLength;   // elements of x
    uint32_t formerNum;     // the first formerNum cores take formerLength elements
    uint32_t formerLength;
    uint32_t tailLength;    // the other cores take tailLength (the last one is clipped to the end)
    uint32_t tileLength;    // elements per tile, a multiple of 64
};
REGISTER_TILING_DEFAULT(SigmoidTiling);

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelSigmoid {
public:
    __aicore__ inline KernelSigmoid() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SigmoidTiling& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        uint32_t offset;
        if (idx < t.formerNum) {
            length_ = t.formerLength;
            offset = idx * t.formerLength;
        } else {
            length_ = t.tailLength;
            offset = t.formerNum * t.formerLength + (idx - t.formerNum) * t.tailLength;
        }
        if (offset >= t.totalLength) {
            length_ = 0;
            return;
        }
        if (offset + length_ > t.totalLength) {
            length_ = t.totalLength - offset;   // only the last core ends unaligned
        }
        tileLength_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tileLength_ * sizeof(T));
        if constexpr (!SameType<T, float>::value) {
            pipe_.InitBuffer(calcBuf_, tileLength_ * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (length_ == 0) {
            return;
        }
        const uint32_t tiles = (length_ + tileLength_ - 1) / tileLength_;
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t n = (i + 1 < tiles) ? tileLength_ : length_ - i * tileLength_;
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            DataCopy(x, xGm_[i * tileLength_], n);
        } else {   // DataCopy would silently drop the bytes past the last 32-byte block
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, xGm_[i * tileLength_], cp, pad);
        }
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        const int32_t cnt = static_cast<int32_t>(n);
        if constexpr (SameType<T, float>::value) {
            SigmoidFloat(y, x, cnt);
        } else {   // no bf16 arithmetic on 910B, and fp16 exp overflows early: compute in float
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, n);
            SigmoidFloat(f, f, cnt);
            Cast(y, f, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    // 1 / (1 + exp(-x)); exp(-x) = inf for very negative x gives exactly 0, as it should.
    __aicore__ inline void SigmoidFloat(LocalTensor<float>& dst, LocalTensor<float>& src, int32_t n)
    {
        Muls(dst, src, -1.0f, n);
        Exp(dst, dst, n);
        Adds(dst, dst, 1.0f, n);
        Reciprocal(dst, dst, n);
    }

    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            DataCopy(yGm_[i * tileLength_], y, n);
        } else {
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[i * tileLength_], y, cp);
        }
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    uint32_t length_ = 0;
    uint32_t tileLength_ = 0;
};

extern "C" __global__ __aicore__ void sigmoid_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSigmoid<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint32_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint32_t coreNum = plat.GetCoreNumAiv();

    // UB per tile element: 2 input + 2 output buffers of T, plus a float scratch for 16-bit types.
    const uint64_t perElem = 4 * bytes + (bytes == 4 ? 0 : 4);
    uint64_t tile = (ub - 1024) / perElem / 64 * 64;
    if (tile > 16384) {
        tile = 16384;
    }

    // Split in 32-byte units; tiny inputs get at least 4096 elements per core.
    const uint64_t align = 32 / bytes;
    const uint64_t units = (total + align - 1) / align;
    uint64_t blockDim = (total + 4095) / 4096;
    if (blockDim > coreNum) {
        blockDim = coreNum;
    }
    if (blockDim > units) {
        blockDim = units;
    }
    if (blockDim == 0) {
        blockDim = 1;
    }
    const uint64_t base = units / blockDim;

    SigmoidTiling* t = context->GetTilingData<SigmoidTiling>();
    t->totalLength = static_cast<uint32_t>(total);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerLength = static_cast<uint32_t>((base + 1) * align);
    t->tailLength = static_cast<uint32_t>(base * align);
    t->tileLength = static_cast<uint32_t>(tile);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (sigmoid).
class SigmoidCustom : public OpDef {
public:
    explicit SigmoidCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(SigmoidCustom);
}  // namespace ops
