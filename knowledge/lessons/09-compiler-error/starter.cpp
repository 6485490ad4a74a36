// Lesson 9 starter: y = 3 * x + 1. It does not compile: read the mapped error, fix GAP 1.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t totalLength;   // elements of x (a multiple of tileLength)
    uint32_t tileLength;    // elements per tile
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelAffine {
public:
    __aicore__ inline KernelAffine() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LessonTilingData& t)
    {
        total_ = t.totalLength;
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ float*)x, total_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, total_);
        pipe_.InitBuffer(inX_, 2, tile_ * sizeof(float));
        pipe_.InitBuffer(outY_, 2, tile_ * sizeof(float));
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
        LocalTensor<float> x = inX_.AllocTensor<float>();
        DataCopy(x, xGm_[i * tile_], tile_);
        inX_.EnQue(x);
    }

    __aicore__ inline void Compute()
    {
        LocalTensor<float> x = inX_.DeQue<float>();
        LocalTensor<float> y = outY_.AllocTensor<float>();
        // GAP 1: the compiler rejects this call. Which argument has the wrong type?
        Muls(y, x, 3.0, tile_);
        Adds(y, y, 1.0f, tile_);
        outY_.EnQue(y);
        inX_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<float> y = outY_.DeQue<float>();
        DataCopy(yGm_[i * tile_], y, tile_);
        outY_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> inX_;
    TQue<TPosition::VECOUT, 2> outY_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    uint32_t total_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_affine_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelAffine op;
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
class LessonAffineCustom : public OpDef {
public:
    explicit LessonAffineCustom(const char* name) : OpDef(name)
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
OP_ADD(LessonAffineCustom);
}  // namespace ops
