// Lesson 2 reference: y = 2 * x split over several cores; the last core takes what is left.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t totalLength;   // elements of x
    uint32_t blockLength;   // elements per core, a multiple of 8 (32 bytes of float)
    uint32_t tileLength;    // elements per tile, a multiple of 8
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelScale {
public:
    __aicore__ inline KernelScale() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LessonTilingData& t)
    {
        const uint32_t offset = GetBlockIdx() * t.blockLength;
        length_ = t.blockLength;
        if (offset >= t.totalLength) {
            length_ = 0;
            return;
        }
        if (offset + length_ > t.totalLength) {
            length_ = t.totalLength - offset;   // the tail: the last core stops at the end of x
        }
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ float*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ float*)y + offset, length_);
        pipe_.InitBuffer(inQ_, 1, tile_ * sizeof(float));
        pipe_.InitBuffer(outQ_, 1, tile_ * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = (length_ + tile_ - 1) / tile_;
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t n = (i + 1 < tiles) ? tile_ : length_ - i * tile_;
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t n)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        DataCopy(x, xGm_[i * tile_], n);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        Muls(y, x, 2.0f, n);
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        DataCopy(yGm_[i * tile_], y, n);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    uint32_t length_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_scale_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelScale op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const uint32_t total = static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    const uint32_t blockDim = 8;
    const uint32_t units = (total + 7) / 8;                     // 32-byte blocks of float
    const uint32_t perCore = (units + blockDim - 1) / blockDim;  // rounded up: the last core gets less
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->totalLength = total;
    t->blockLength = perCore * 8;
    t->tileLength = 1024;
    context->SetBlockDim(blockDim);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonScaleCustom : public OpDef {
public:
    explicit LessonScaleCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(LessonScaleCustom);
}  // namespace ops
