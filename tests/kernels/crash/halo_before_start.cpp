// Crash kernel: each tile also reads a halo of HALO elements before it, but the first tile has
// none: the DataCopy of tile 0 reads GM before the start of input x (a buffer that fills whole
// pages, so the bytes before it are the guard page). Expect L2.GM_BOUNDS naming DataCopy and the
// line marked CRASH.
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct CrashTiling {
    uint32_t total;   // elements
};

constexpr uint32_t TILE = 256;
constexpr uint32_t HALO = 16;

extern "C" __global__ __aicore__ void relu_crash(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(CrashTiling);
    GET_TILING_DATA(t, tiling);
    using T = DTYPE_X;
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ;
    pipe.InitBuffer(inQ, 1, (TILE + HALO) * sizeof(T));
    AscendC::GlobalTensor<T> xGm;
    xGm.SetGlobalBuffer((__gm__ T*)x - HALO, t.total + HALO);
    AscendC::LocalTensor<T> a = inQ.AllocTensor<T>();
    AscendC::DataCopy(a, xGm, TILE + HALO);  // CRASH: DataCopy
    inQ.FreeTensor(a);
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
