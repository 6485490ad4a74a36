// LIMIT KERNEL (sandbox test): fills 1 GiB of host memory, past a lowered cgroup cap (within the address-space limit), with nothing the source scan refuses; expect RUN.MEMORY naming the cap
#include <cstdint>
#include <vector>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"

struct LimitTiling {
    uint64_t total;
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(LimitTiling);
    GET_TILING_DATA(t, tiling);
    std::vector<char> big(1ull << 30, static_cast<char>(t.total));
    y[0] = static_cast<uint8_t>(big[t.total % big.size()]);
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
