// int32 maximum with a broadcast row, as an engineer would write it: the row b is loaded once into
// UB (padded to 32 B), each core takes a contiguous share of the rows of a, and every row is one
// Max over C int32 lanes against b; rows whose byte length is not a 32 B multiple move with DataCopyPad.
// Run: cannpilot check tests/kernels/int_gather_atomic/maximum_i32_bcast.cpp --task tests/fixtures/tasks/maximum_i32_bcast --cases all
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct MaxBcastTiling {
    uint32_t rows;
    uint32_t cols;
    uint32_t rowsPerCore;
};

class KernelMaxBcast {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, const MaxBcastTiling& t)
    {
        const uint32_t first = AscendC::GetBlockIdx() * t.rowsPerCore;
        rows_ = first >= t.rows ? 0 : (t.rows - first < t.rowsPerCore ? t.rows - first : t.rowsPerCore);
        cols_ = t.cols;
        const uint32_t rowBytes = (cols_ * sizeof(int32_t) + 31) / 32 * 32;
        aGm_.SetGlobalBuffer((__gm__ int32_t*)a + (uint64_t)first * cols_, (uint64_t)rows_ * cols_);
        yGm_.SetGlobalBuffer((__gm__ int32_t*)y + (uint64_t)first * cols_, (uint64_t)rows_ * cols_);
        bGm_.SetGlobalBuffer((__gm__ int32_t*)b, cols_);
        pipe_.InitBuffer(bBuf_, rowBytes);
        pipe_.InitBuffer(inQ_, 2, rowBytes);
        pipe_.InitBuffer(outQ_, 2, rowBytes);
    }
    __aicore__ inline void Process()
    {
        if (rows_ == 0) return;
        AscendC::LocalTensor<int32_t> b = bBuf_.Get<int32_t>();
        AscendC::DataCopyExtParams cp{1, (uint32_t)(cols_ * sizeof(int32_t)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(b, bGm_, cp, pad);
        AscendC::PipeBarrier<PIPE_ALL>();
        for (uint32_t r = 0; r < rows_; ++r) {
            AscendC::LocalTensor<int32_t> a = inQ_.AllocTensor<int32_t>();
            AscendC::DataCopyPad(a, aGm_[(uint64_t)r * cols_], cp, pad);
            inQ_.EnQue(a);
            a = inQ_.DeQue<int32_t>();
            AscendC::LocalTensor<int32_t> y = outQ_.AllocTensor<int32_t>();
            AscendC::Max(y, a, b, (int32_t)cols_);
            outQ_.EnQue(y);
            inQ_.FreeTensor(a);
            y = outQ_.DeQue<int32_t>();
            AscendC::DataCopyPad(yGm_[(uint64_t)r * cols_], y, cp);
            outQ_.FreeTensor(y);
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> bBuf_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQ_;
    AscendC::GlobalTensor<int32_t> aGm_, bGm_, yGm_;
    uint32_t rows_ = 0, cols_ = 0;
};

extern "C" __global__ __aicore__ void maximum_i32_bcast_custom(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR workspace,
                                                               GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(MaxBcastTiling);
    GET_TILING_DATA(t, tiling);
    KernelMaxBcast op;
    op.Init(a, b, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<MaxBcastTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto& shape = context->GetInputShape(0)->GetStorageShape();
    t->cols = (uint32_t)shape.GetDim(shape.GetDimNum() - 1);
    t->rows = (uint32_t)(shape.GetShapeSize() / t->cols);
    const uint32_t cores = platform.GetCoreNumAiv();
    t->rowsPerCore = (t->rows + cores - 1) / cores;
    context->SetBlockDim((t->rows + t->rowsPerCore - 1) / t->rowsPerCore);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
