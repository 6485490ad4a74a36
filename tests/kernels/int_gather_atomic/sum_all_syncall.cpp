// Sum of all elements in two phases without atomics: every core writes its partial sum to its own
// 32 B slot of the workspace, SyncAll waits until every core has, and block 0 adds the slots up.
// Without the barrier block 0 would read slots other cores have not written yet.
// Run: cannpilot check tests/kernels/int_gather_atomic/sum_all_syncall.cpp --task tests/fixtures/tasks/sum_all_atomic --cases all
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct SumAllTiling {
    uint64_t total;
    uint32_t perCore;
    uint32_t blocks;
};

extern "C" __global__ __aicore__ void sum_all_atomic_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(SumAllTiling);
    GET_TILING_DATA(t, tiling);
    const uint32_t b = AscendC::GetBlockIdx();
    const uint64_t first = (uint64_t)b * t.perCore;
    const uint32_t n = first >= t.total ? 0 : (t.total - first < t.perCore ? (uint32_t)(t.total - first) : t.perCore);
    AscendC::GlobalTensor<float> xGm, yGm, slots;
    xGm.SetGlobalBuffer((__gm__ float*)x + first, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, 1);
    slots.SetGlobalBuffer((__gm__ float*)workspace, (uint64_t)t.blocks * 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, part, work, all;
    pipe.InitBuffer(xb, (t.perCore * sizeof(float) + 31) / 32 * 32);
    pipe.InitBuffer(part, 32);
    pipe.InitBuffer(work, (t.perCore * sizeof(float) + 31) / 32 * 32);
    pipe.InitBuffer(all, t.blocks * 32);
    AscendC::LocalTensor<float> xl = xb.Get<float>(), p = part.Get<float>(), w = work.Get<float>();
    AscendC::Duplicate(p, 0.0f, 8);
    if (n > 0) {
        AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(float)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(xl, xGm, cp, pad);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::ReduceSum(p, xl, w, (int32_t)n);
    }
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(slots[(uint64_t)b * 8], p, 8);
    AscendC::SyncAll();
    if (b == 0) {
        AscendC::LocalTensor<float> a = all.Get<float>();
        AscendC::DataCopy(a, slots, t.blocks * 8);
        AscendC::PipeBarrier<PIPE_ALL>();
        float s = 0.0f;
        for (uint32_t k = 0; k < t.blocks; ++k) s += a.GetValue(k * 8);
        p.SetValue(0, s);
        AscendC::DataCopyExtParams one{1, (uint32_t)sizeof(float), 0, 0, 0};
        AscendC::DataCopyPad(yGm, p, one);
    }
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
    t->blocks = (uint32_t)((t->total + per - 1) / per);
    context->SetBlockDim(t->blocks);
    context->GetWorkspaceSizes(1)[0] = t->blocks * 32;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
