// Lesson 6 starter: the sum of every row of x [R, 64]. Fill GAP 1 in Compute().
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t rows;          // R, a multiple of rowsPerTile
    uint32_t cols;          // 64: one row is one 256-byte repeat of floats
    uint32_t rowsPerTile;
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

class KernelRowSum {
public:
    __aicore__ inline KernelRowSum() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const LessonTilingData& t)
    {
        rows_ = t.rows;
        cols_ = t.cols;
        rpt_ = t.rowsPerTile;
        xGm_.SetGlobalBuffer((__gm__ float*)x, rows_ * cols_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, rows_);
        pipe_.InitBuffer(inQ_, 2, rpt_ * cols_ * sizeof(float));
        pipe_.InitBuffer(outQ_, 2, rpt_ * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < rows_ / rpt_; ++i) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        DataCopy(x, xGm_[i * rpt_ * cols_], rpt_ * cols_);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute()
    {
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        // GAP 1: reduce each row to one value with one instruction: one repeat per row.
        //        Arguments: dst, src, mask (elements per repeat), repeatTime (rows),
        //        dstRepStride (elements), srcBlkStride, srcRepStride (32-byte blocks per row).
        WholeReduceSum(y, x, 128, static_cast<int32_t>(rpt_), 1, 1, 8);
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t i)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        DataCopy(yGm_[i * rpt_], y, rpt_);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECOUT, 2> outQ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    uint32_t rows_ = 0;
    uint32_t cols_ = 0;
    uint32_t rpt_ = 0;
};

extern "C" __global__ __aicore__ void lesson_row_sum_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelRowSum op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->cols = static_cast<uint32_t>(shape.GetDim(1));
    t->rows = static_cast<uint32_t>(shape.GetDim(0));
    t->rowsPerTile = 64;
    context->SetBlockDim(1);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonRowSumCustom : public OpDef {
public:
    explicit LessonRowSumCustom(const char* name) : OpDef(name)
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
OP_ADD(LessonRowSumCustom);
}  // namespace ops
