// Lesson 4 starter: y = exp(x) / 2, correct but slow. Fill GAP 1 to meet the time target.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t totalLength;   // elements of x (a multiple of tileLength)
    uint32_t tileLength;    // elements per tile
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

// GAP 1: with one buffer per queue, CopyIn of the next tile waits until this tile is copied out.
constexpr int32_t BUFFER_NUM = 1;

class KernelExpScale {
public:
    __aicore__ inline KernelExpScale() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LessonTilingData& t)
    {
        total_ = t.totalLength;
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ float*)x, total_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, total_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tile_ * sizeof(float));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tile_ * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = total_ / tile_;
        for (uint32_t i = 0; i < tiles; ++i) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        DataCopy(x, xGm_[i * tile_], tile_);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute()
    {
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        Exp(y, x, tile_);
        Muls(y, y, 0.5f, tile_);
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        DataCopy(yGm_[i * tile_], y, tile_);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, BUFFER_NUM> inQ_;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    uint32_t total_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_exp_scale_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                              GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelExpScale op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->totalLength = static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    t->tileLength = 2048;
    context->SetBlockDim(1);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonExpScaleCustom : public OpDef {
public:
    explicit LessonExpScaleCustom(const char* name) : OpDef(name)
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
OP_ADD(LessonExpScaleCustom);
}  // namespace ops
