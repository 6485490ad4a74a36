// LIMIT KERNEL (sandbox test): reads through a wild pointer; expect RUN.CRASH (a genuine crash, no limit named)
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
    volatile uint64_t* volatile p = reinterpret_cast<uint64_t*>(0x10);
    y[0] = static_cast<uint8_t>(p[t.total % 2]);
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
