// Lesson 3 starter: y = max(x, 0) for any length. Fill GAP 1 (CopyIn) and GAP 2 (CopyOut).
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t totalLength;   // elements of x, any number
    uint32_t tileLength;    // elements per tile, a multiple of 8
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelRelu {
public:
    __aicore__ inline KernelRelu() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LessonTilingData& t)
    {
        total_ = t.totalLength;
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ float*)x, total_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, total_);
        pipe_.InitBuffer(inQ_, 1, tile_ * sizeof(float));
        pipe_.InitBuffer(outQ_, 1, tile_ * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = (total_ + tile_ - 1) / tile_;
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t n = (i + 1 < tiles) ? tile_ : total_ - i * tile_;
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t n)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        // GAP 1: DataCopy moves whole 32-byte blocks only. When n floats are not a multiple of
        //        32 bytes (the last tile), copy with DataCopyPad instead.
        DataCopy(x, xGm_[i * tile_], n);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        Relu(y, x, n);
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        // GAP 2: the same on the way out.
        DataCopy(yGm_[i * tile_], y, n);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    uint32_t total_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelRelu op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->totalLength = static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    t->tileLength = 1024;
    context->SetBlockDim(1);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonReluCustom : public OpDef {
public:
    explicit LessonReluCustom(const char* name) : OpDef(name)
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
OP_ADD(LessonReluCustom);
}  // namespace ops
