// Crash kernel: a store through the raw GM address of the output instead of DataCopy or
// SetValue. Expect RUN.INTEGRITY at the line marked CRASH.
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
    __gm__ DTYPE_Y* out = (__gm__ DTYPE_Y*)y;
    out[t.total - 1] = static_cast<DTYPE_Y>(0);  // CRASH
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
