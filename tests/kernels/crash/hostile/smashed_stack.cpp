// Crash kernel (inline assembly: built with the source scan off): the stack pointer is set into the
// null page and written through, so the crash handler's frame walk has no stack to read. Expect
// RUN.CRASH at the line marked CRASH, from the faulting PC alone.
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct CrashTiling {
    uint32_t total;   // elements
};

extern "C" __global__ __aicore__ void relu_crash(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(CrashTiling);
    GET_TILING_DATA(t, tiling);
    if (t.total == 0) {
        return;
    }
    asm volatile("mov $0x18, %%rsp\n\tmovq $0, (%%rsp)" ::: "memory");  // CRASH
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<CrashTiling>();
    t->total = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
