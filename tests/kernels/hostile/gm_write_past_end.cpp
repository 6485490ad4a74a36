// HOSTILE KERNEL (sandbox test): writes just past the end of its output with a raw pointer; expect RUN.INTEGRITY (the kernel's view of GM faults on any raw access)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <vector>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"

struct HostileTiling {
    uint64_t total;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(HostileTiling);
    GET_TILING_DATA(t, tiling);
    volatile float* out = reinterpret_cast<volatile float*>(y);
    for (uint64_t i = 0; i < t.total + 64; ++i) {
        out[i] = 0.0f;
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<HostileTiling>();
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
