// Rule kernel for L2.SYNCALL_MISMATCH through a block chain: block 1 waits for block 0's
// NotifyNextBlock, which block 0 never calls, so on the chip block 1 waits forever.
// Run: cannpilot check tests/kernels/int_gather_atomic/rules/wait_pre_block_mismatch.cpp --task tests/fixtures/tasks/sum_all_atomic --cases 2
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ChainTiling {
    uint32_t blocks;
};

extern "C" __global__ __aicore__ void sum_all_atomic_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ChainTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<int32_t> flags;
    flags.SetGlobalBuffer((__gm__ int32_t*)workspace, (uint64_t)t.blocks * 8);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> ub;
    pipe.InitBuffer(ub, t.blocks * 32 + 32);
    AscendC::LocalTensor<int32_t> u = ub.Get<int32_t>();
    AscendC::InitDetermineComputeWorkspace(flags, u);
    if (AscendC::GetBlockIdx() == 1) {
        AscendC::WaitPreBlock(flags, u);  // EXPECT: L2.SYNCALL_MISMATCH
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ChainTiling>();
    t->blocks = 2;
    context->SetBlockDim(2);
    context->GetWorkspaceSizes(1)[0] = 2 * 32;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
