// Crash kernel: the kernel class writes through the address of a GlobalTensor that never got
// SetGlobalBuffer (a null pointer) in its own code. Expect RUN.CRASH at the line marked CRASH,
// in KernelZero::Process, with no API named.
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct CrashTiling {
    uint32_t total;   // elements
};

template <typename T>
class KernelZero {
public:
    __aicore__ inline void Init(GM_ADDR y, const CrashTiling& t)
    {
        total_ = t.total;
        (void)y;   // the bug: yGm_.SetGlobalBuffer((__gm__ T*)y, total_) is missing
    }
    __aicore__ inline void Process()
    {
        __gm__ T* out = yGm_.GetPhyAddr();
        for (uint32_t i = 0; i < total_; ++i) {
            out[i] = static_cast<T>(0);  // CRASH
        }
    }

private:
    AscendC::GlobalTensor<T> yGm_;
    uint32_t total_ = 0;
};

extern "C" __global__ __aicore__ void relu_crash(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(CrashTiling);
    GET_TILING_DATA(t, tiling);
    KernelZero<DTYPE_Y> op;
    op.Init(y, t);
    op.Process();
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
