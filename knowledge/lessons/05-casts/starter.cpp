// Lesson 5 starter: y = exp(x) for bfloat16. It does not build for 910B: fill GAP 1 in Compute().
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t totalLength;   // elements of x (a multiple of tileLength)
    uint32_t tileLength;    // elements per tile
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelExp16 {
public:
    __aicore__ inline KernelExp16() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LessonTilingData& t)
    {
        total_ = t.totalLength;
        tile_ = t.tileLength;
        xGm_.SetGlobalBuffer((__gm__ bfloat16_t*)x, total_);
        yGm_.SetGlobalBuffer((__gm__ bfloat16_t*)y, total_);
        pipe_.InitBuffer(inQ_, 2, tile_ * sizeof(bfloat16_t));
        pipe_.InitBuffer(outQ_, 2, tile_ * sizeof(bfloat16_t));
        pipe_.InitBuffer(calc_, tile_ * sizeof(float));   // float scratch: never crosses pipes
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
        LocalTensor<bfloat16_t> x = inQ_.AllocTensor<bfloat16_t>();
        DataCopy(x, xGm_[i * tile_], tile_);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute()
    {
        LocalTensor<bfloat16_t> x = inQ_.DeQue<bfloat16_t>();
        LocalTensor<bfloat16_t> y = outQ_.AllocTensor<bfloat16_t>();
        // GAP 1: 910B's vector unit has no bfloat16 arithmetic. Compute in the float scratch calc_
        //        instead: Cast up, Exp, Cast back (choose each Cast's RoundMode).
        Exp(y, x, tile_);
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<bfloat16_t> y = outQ_.DeQue<bfloat16_t>();
        DataCopy(yGm_[i * tile_], y, tile_);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECOUT, 2> outQ_;
    TBuf<TPosition::VECCALC> calc_;
    GlobalTensor<bfloat16_t> xGm_;
    GlobalTensor<bfloat16_t> yGm_;
    uint32_t total_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_exp16_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelExp16 op;
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
class LessonExp16Custom : public OpDef {
public:
    explicit LessonExp16Custom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(LessonExp16Custom);
}  // namespace ops
