// Lesson 11 starter: y = x * x + x. The host picks a tile that does not fit: fill GAP 1 in TilingFunc.
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

constexpr int32_t BUFFER_NUM = 2;

class KernelSquareAdd {
public:
    __aicore__ inline KernelSquareAdd() {}

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
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tile_ * sizeof(float));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tile_ * sizeof(float));
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
        Mul(y, x, x, n);
        Add(y, y, x, n);
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
    TQue<TPosition::VECIN, BUFFER_NUM> inQ_;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQ_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> yGm_;
    uint32_t length_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void lesson_square_add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSquareAdd op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const uint32_t total = static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    // GAP 1: a fixed tile of 32768 floats, with 2 + 2 buffers of it, needs more UB than a core
    //        has. Ask the platform for the UB size and derive the tile from it instead.
    const uint64_t tile = 32768;
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->totalLength = total;
    t->blockLength = (total + 7) / 8 * 8;   // one core in this lesson
    t->tileLength = static_cast<uint32_t>(tile);
    context->SetBlockDim(1);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonSquareAddCustom : public OpDef {
public:
    explicit LessonSquareAddCustom(const char* name) : OpDef(name)
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
OP_ADD(LessonSquareAddCustom);
}  // namespace ops
