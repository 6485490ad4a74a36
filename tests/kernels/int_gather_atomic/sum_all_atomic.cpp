// Sum of all elements to one scalar on every core: block 0 zeroes y, SyncAll makes every core wait
// for that, each core reduces its share with ReduceSum and adds its partial sum to y with
// SetAtomicAdd<float> + DataCopyPad (the emulator applies the adds in block order).
// Run: cannpilot check tests/kernels/int_gather_atomic/sum_all_atomic.cpp --task tests/fixtures/tasks/sum_all_atomic --cases all
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct SumAllTiling {
    uint64_t total;
    uint32_t perCore;   // a multiple of 64 floats
    uint32_t tile;      // a multiple of 64 floats
};

class KernelSumAll {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SumAllTiling& t)
    {
        const uint64_t first = (uint64_t)AscendC::GetBlockIdx() * t.perCore;
        count_ = first >= t.total ? 0 : (t.total - first < t.perCore ? (uint32_t)(t.total - first) : t.perCore);
        tile_ = t.tile;
        xGm_.SetGlobalBuffer((__gm__ float*)x + first, count_);
        yGm_.SetGlobalBuffer((__gm__ float*)y, 1);
        pipe_.InitBuffer(inQ_, 2, tile_ * sizeof(float));
        pipe_.InitBuffer(acc_, 64 * sizeof(float));
        pipe_.InitBuffer(part_, 64 * sizeof(float));
        pipe_.InitBuffer(work_, tile_ * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<float> acc = acc_.Get<float>();
        AscendC::LocalTensor<float> part = part_.Get<float>();
        AscendC::LocalTensor<float> work = work_.Get<float>();
        AscendC::Duplicate(acc, 0.0f, 64);
        AscendC::DataCopyExtParams one{1, (uint32_t)sizeof(float), 0, 0, 0};
        if (AscendC::GetBlockIdx() == 0) {
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::DataCopyPad(yGm_, acc, one);
        }
        AscendC::SyncAll();
        for (uint32_t off = 0; off < count_; off += tile_) {
            const uint32_t n = count_ - off < tile_ ? count_ - off : tile_;
            AscendC::LocalTensor<float> x = inQ_.AllocTensor<float>();
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(float)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(x, xGm_[off], cp, pad);
            inQ_.EnQue(x);
            x = inQ_.DeQue<float>();
            AscendC::ReduceSum(part, x, work, (int32_t)n);
            AscendC::Add(acc, acc, part, 8);
            inQ_.FreeTensor(x);
        }
        AscendC::PipeBarrier<PIPE_ALL>();
        if (count_ > 0) {
            AscendC::SetAtomicAdd<float>();
            AscendC::DataCopyPad(yGm_, acc, one);
            AscendC::SetAtomicNone();
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> acc_, part_, work_;
    AscendC::GlobalTensor<float> xGm_, yGm_;
    uint32_t count_ = 0, tile_ = 0;
};

extern "C" __global__ __aicore__ void sum_all_atomic_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(SumAllTiling);
    GET_TILING_DATA(t, tiling);
    KernelSumAll op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<SumAllTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint64_t cores = platform.GetCoreNumAiv();
    uint64_t per = (t->total + cores - 1) / cores;
    per = (per + 63) / 64 * 64;
    t->perCore = (uint32_t)per;
    t->tile = 8192;
    context->SetBlockDim((uint32_t)((t->total + per - 1) / per));
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
