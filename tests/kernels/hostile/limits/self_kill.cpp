// LIMIT KERNEL (sandbox test): sends itself SIGKILL, which no limit of the sandbox accounts for; expect RUN.CRASH 'killed by SIGKILL (cause unknown)'
#include <cstdint>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"

struct LimitTiling {
    uint64_t total;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(LimitTiling);
    GET_TILING_DATA(t, tiling);
    if (t.total > 0) kill(getpid(), SIGKILL);
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<LimitTiling>();
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
