// Crash kernel: kernel code throws and nothing catches it (the process ends in std::terminate).
// Expect RUN.CRASH at the line marked CRASH, with no API named.
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
    if (t.total % 32 != 0) {
        return;
    }
    throw t.total;  // CRASH
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
