// Lesson 1 starter: z = x + y on one core, in tiles of 1024 floats.
// Fill the two gaps marked GAP in Compute(); everything else is in place.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t totalLength;   // elements of x (a multiple of tileLength in this lesson)
    uint32_t tileLength;    // elements per tile
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const LessonTilingData& t)
    {
        total_ = t.totalLength;
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ float*)x, total_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, total_);
        zGm_.SetGlobalBuffer((__gm__ float*)z, total_);
        pipe_.InitBuffer(inX_, 1, tile_ * sizeof(float));
        pipe_.InitBuffer(inY_, 1, tile_ * sizeof(float));
        pipe_.InitBuffer(outZ_, 1, tile_ * sizeof(float));
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
        LocalTensor<float> y = inY_.AllocTensor<float>();
        DataCopy(x, xGm_[i * tile_], tile_);
        DataCopy(y, yGm_[i * tile_], tile_);
        inX_.EnQue(x);
        inY_.EnQue(y);
    }

    __aicore__ inline void Compute()
    {
        LocalTensor<float> x = inX_.DeQue<float>();
        LocalTensor<float> y = inY_.DeQue<float>();
        LocalTensor<float> z = outZ_.AllocTensor<float>();
        // GAP 1: compute z = x + y over the tile (one vector instruction).
        // GAP 2: hand z to CopyOut through its queue.
        inX_.FreeTensor(x);
        inY_.FreeTensor(y);
    }

    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<float> z = outZ_.DeQue<float>();
        DataCopy(zGm_[i * tile_], z, tile_);
        outZ_.FreeTensor(z);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inX_;
    TQue<TPosition::VECIN, 1> inY_;
    TQue<TPosition::VECOUT, 1> outZ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    GlobalTensor<float> zGm_;
    uint32_t total_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace,
                                                        GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelAdd op;
    op.Init(x, y, z, t);
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
class LessonAddCustom : public OpDef {
public:
    explicit LessonAddCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("z")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(LessonAddCustom);
}  // namespace ops
