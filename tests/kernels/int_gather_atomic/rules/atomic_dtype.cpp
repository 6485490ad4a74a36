// Rule kernel for L2.ATOMIC_DTYPE: the atomic mode is set for half but the partial sums copied to GM
// are float, so the DMA would add the float bits as halves.
// Run: cannpilot check tests/kernels/int_gather_atomic/rules/atomic_dtype.cpp --task tests/fixtures/tasks/sum_all_atomic --cases 2
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct AtomicTiling {
    uint32_t total;
};

extern "C" __global__ __aicore__ void sum_all_atomic_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(AtomicTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, t.total);
    yGm.SetGlobalBuffer((__gm__ float*)y, 1);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, acc, work;
    pipe.InitBuffer(xb, (t.total * sizeof(float) + 31) / 32 * 32);
    pipe.InitBuffer(acc, 32);
    pipe.InitBuffer(work, (t.total * sizeof(float) + 31) / 32 * 32);
    AscendC::LocalTensor<float> xl = xb.Get<float>(), a = acc.Get<float>(), w = work.Get<float>();
    AscendC::DataCopyExtParams cp{1, t.total * (uint32_t)sizeof(float), 0, 0, 0};
    AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(xl, xGm, cp, pad);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::ReduceSum(a, xl, w, (int32_t)t.total);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopyExtParams one{1, (uint32_t)sizeof(float), 0, 0, 0};
    AscendC::DataCopyPad(yGm, a, one);
    AscendC::SetAtomicAdd<half>();
    AscendC::DataCopyPad(yGm, a, one);  // EXPECT: L2.ATOMIC_DTYPE
    AscendC::SetAtomicNone();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<AtomicTiling>();
    t->total = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
