// LIMIT KERNEL (sandbox test): strided copies into staggered UB rows forever: each one's UB range spans about a thousand others, so the launcher that replays their cost events does far more work than the block and reaches its (lowered) CPU limit first; expect RUN.TIMEOUT naming the launcher's limit
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
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    constexpr uint32_t ROWS = 4, BLOCKS = 1024;      // 4 rows of 1024 32-byte blocks (128 KiB)
    pipe.InitBuffer(buf, ROWS * BLOCKS * 32);
    AscendC::LocalTensor<float> stage = buf.Get<float>();
    AscendC::GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), t.total);
    AscendC::DataCopyExtParams in(ROWS, 8, 0, BLOCKS - 1, 0);     // a block of each row, 8 bytes each
    for (uint64_t k = 0; t.total > 0; ++k) {
        AscendC::DataCopyPad(stage[(k % BLOCKS) * 8], xGm[(k * 2) % (t.total - 8)], in,
                             AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    }
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
