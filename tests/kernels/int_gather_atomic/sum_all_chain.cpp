// Sum of all elements in block order without atomics: each core reduces its share, waits for the
// previous core (WaitPreBlock), adds its partial to y, and lets the next core go (NotifyNextBlock).
// Run: cannpilot check tests/kernels/int_gather_atomic/sum_all_chain.cpp --task tests/fixtures/tasks/sum_all_atomic --cases all
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ChainTiling {
    uint64_t total;
    uint32_t perCore;
    uint32_t blocks;
};

extern "C" __global__ __aicore__ void sum_all_atomic_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ChainTiling);
    GET_TILING_DATA(t, tiling);
    const uint32_t b = AscendC::GetBlockIdx();
    const uint64_t first = (uint64_t)b * t.perCore;
    const uint32_t n = first >= t.total ? 0 : (t.total - first < t.perCore ? (uint32_t)(t.total - first) : t.perCore);
    AscendC::GlobalTensor<float> xGm, yGm;
    AscendC::GlobalTensor<int32_t> flags;
    xGm.SetGlobalBuffer((__gm__ float*)x + first, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, 1);
    flags.SetGlobalBuffer((__gm__ int32_t*)workspace, (uint64_t)t.blocks * 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, part, work, ub, acc;
    pipe.InitBuffer(xb, (t.perCore * sizeof(float) + 31) / 32 * 32);
    pipe.InitBuffer(part, 32);
    pipe.InitBuffer(acc, 32);
    pipe.InitBuffer(work, (t.perCore * sizeof(float) + 31) / 32 * 32);
    pipe.InitBuffer(ub, t.blocks * 32 + 32);
    AscendC::LocalTensor<float> xl = xb.Get<float>(), p = part.Get<float>(), w = work.Get<float>(), a = acc.Get<float>();
    AscendC::LocalTensor<int32_t> u = ub.Get<int32_t>();
    AscendC::InitDetermineComputeWorkspace(flags, u);
    AscendC::Duplicate(p, 0.0f, 8);
    if (n > 0) {
        AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(xl, xGm, cp, pad);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::ReduceSum(p, xl, w, (int32_t)n);
    }
    AscendC::WaitPreBlock(flags, u);
    AscendC::DataCopyExtParams one{1, (uint32_t)sizeof(float), 0, 0, 0};
    AscendC::Duplicate(a, 0.0f, 8);
    if (b > 0) {
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(a, yGm, one, pad);
    }
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(a, a, p, 8);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopyPad(yGm, a, one);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::NotifyNextBlock(flags, u);
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ChainTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint64_t cores = platform.GetCoreNumAiv();
    uint64_t per = (t->total + cores - 1) / cores;
    per = (per + 63) / 64 * 64;
    t->perCore = (uint32_t)per;
    t->blocks = (uint32_t)((t->total + per - 1) / per);
    context->SetBlockDim(t->blocks);
    context->GetWorkspaceSizes(1)[0] = t->blocks * 32;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
