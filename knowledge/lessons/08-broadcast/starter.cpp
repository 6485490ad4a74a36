// Lesson 8 starter: y = x * gamma for x [R, 256] and gamma [256]. Fill GAP 1 and GAP 2.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t rows;          // R, a multiple of rowsPerTile
    uint32_t cols;          // 256
    uint32_t rowsPerTile;
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelScaleRows {
public:
    __aicore__ inline KernelScaleRows() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const LessonTilingData& t)
    {
        rows_ = t.rows;
        cols_ = t.cols;
        rpt_ = t.rowsPerTile;
        xGm_.SetGlobalBuffer((__gm__ float*)x, rows_ * cols_);
        gammaGm_.SetGlobalBuffer((__gm__ float*)gamma, cols_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, rows_ * cols_);
        pipe_.InitBuffer(inQ_, 2, rpt_ * cols_ * sizeof(float));
        pipe_.InitBuffer(gammaQ_, 1, cols_ * sizeof(float));
        pipe_.InitBuffer(outQ_, 2, rpt_ * cols_ * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < rows_ / rpt_; ++i) {
            // GAP 1: gamma is copied like a tile of x, from the tile's offset. gamma has only
            //        cols_ elements. Load it once, before this loop, and keep it until the end.
            LocalTensor<float> g = gammaQ_.AllocTensor<float>();
            DataCopy(g, gammaGm_[i * rpt_ * cols_], rpt_ * cols_);
            gammaQ_.EnQue(g);
            g = gammaQ_.DeQue<float>();
            CopyIn(i);
            Compute(g);
            CopyOut(i);
            gammaQ_.FreeTensor(g);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        DataCopy(x, xGm_[i * rpt_ * cols_], rpt_ * cols_);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(LocalTensor<float>& g)
    {
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        // GAP 2: every row of the tile is multiplied by the same gamma row (cols_ elements).
        Mul(y, x, g, static_cast<int32_t>(rpt_ * cols_));
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        DataCopy(yGm_[i * rpt_ * cols_], y, rpt_ * cols_);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECIN, 1> gammaQ_;
    TQue<TPosition::VECOUT, 2> outQ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> gammaGm_;
    GlobalTensor<float> yGm_;
    uint32_t rows_ = 0;
    uint32_t cols_ = 0;
    uint32_t rpt_ = 0;
};

extern "C" __global__ __aicore__ void lesson_scale_rows_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR workspace,
                                                               GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelScaleRows op;
    op.Init(x, gamma, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->rows = static_cast<uint32_t>(shape.GetDim(0));
    t->cols = static_cast<uint32_t>(shape.GetDim(1));
    t->rowsPerTile = 8;
    context->SetBlockDim(1);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonScaleRowsCustom : public OpDef {
public:
    explicit LessonScaleRowsCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("gamma")
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
OP_ADD(LessonScaleRowsCustom);
}  // namespace ops
