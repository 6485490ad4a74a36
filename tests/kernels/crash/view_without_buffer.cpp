// Crash kernel: xGm never gets SetGlobalBuffer, so xGm[skip] is a null address plus an offset
// that no GM buffer holds; the DataCopy reading it faults inside the emulator. Expect RUN.CRASH
// naming DataCopy and the line marked CRASH.
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct CrashTiling {
    uint32_t total;   // elements
    uint32_t skip;    // elements before the first tile
};

constexpr uint32_t TILE = 256;

extern "C" __global__ __aicore__ void relu_crash(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(CrashTiling);
    GET_TILING_DATA(t, tiling);
    using T = DTYPE_X;
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, TILE * sizeof(T));
    AscendC::GlobalTensor<T> xGm, yGm;
    yGm.SetGlobalBuffer((__gm__ T*)y, t.total);
    AscendC::LocalTensor<T> a = inQ.AllocTensor<T>();
    AscendC::DataCopy(a, xGm[t.skip], TILE);  // CRASH: DataCopy
    inQ.EnQue(a);
    AscendC::LocalTensor<T> b = inQ.DeQue<T>();
    AscendC::DataCopy(yGm, b, TILE);
    inQ.FreeTensor(b);
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<CrashTiling>();
    t->total = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->skip = 1024;
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
