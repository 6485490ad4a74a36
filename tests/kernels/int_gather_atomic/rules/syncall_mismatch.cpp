// Rule kernel for L2.SYNCALL_MISMATCH: block 0 skips the barrier the other blocks wait at, so on the
// chip they wait forever; the emulator reports it at the waiting SyncAll when block 0 has ended.
// Run: cannpilot check tests/kernels/int_gather_atomic/rules/syncall_mismatch.cpp --task tests/fixtures/tasks/sum_all_atomic --cases 2
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct MismatchTiling {
    uint32_t blocks;
};

extern "C" __global__ __aicore__ void sum_all_atomic_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(MismatchTiling);
    GET_TILING_DATA(t, tiling);
    if (AscendC::GetBlockIdx() != 0) {
        AscendC::SyncAll();  // EXPECT: L2.SYNCALL_MISMATCH
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<MismatchTiling>();
    t->blocks = 4;
    context->SetBlockDim(4);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
