// Rule kernel for L2.DATACOPY_32B: DataCopy of 10 floats (40 B, not a 32 B multiple)
// A complete ReLU candidate for the built-in task `relu` (one block, tail
// handled with DataCopyPad) that breaks exactly this rule once, on the line marked EXPECT.
// Run: cannpilot check tests/kernels/rules/datacopy_32b.cpp --task relu --cases 9
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct RuleTiling {
    uint32_t total;   // elements
};

constexpr uint32_t TILE = 256;   // elements per tile (a 32 B multiple for every dtype)

extern "C" __global__ __aicore__ void relu_rule(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(RuleTiling);
    GET_TILING_DATA(t, tiling);
    using T = DTYPE_X;
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ;
    AscendC::TBuf<AscendC::TPosition::VECCALC> calc;
    pipe.InitBuffer(inQ, 1, TILE * sizeof(T));
    pipe.InitBuffer(outQ, 1, TILE * sizeof(T));
    pipe.InitBuffer(calc, TILE * sizeof(float));
    AscendC::GlobalTensor<T> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ T*)x, t.total);
    yGm.SetGlobalBuffer((__gm__ T*)y, t.total);
    AscendC::LocalTensor<float> f = calc.Get<float>();
    for (uint32_t off = 0; off < t.total; off += TILE) {
        uint32_t n = t.total - off < TILE ? t.total - off : TILE;
        AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
        AscendC::LocalTensor<T> a = inQ.AllocTensor<T>();
        AscendC::DataCopyPad(a, xGm[off], cp, AscendC::DataCopyPadExtParams<T>{false, 0, 0, 0});
        inQ.EnQue(a);
        AscendC::LocalTensor<T> b = inQ.DeQue<T>();
        AscendC::LocalTensor<T> c = outQ.AllocTensor<T>();
        if constexpr (std::is_same_v<T, bfloat16_t>) {
            AscendC::Cast(f, b, AscendC::RoundMode::CAST_NONE, n);
            AscendC::Relu(f, f, n);
            AscendC::Cast(c, f, AscendC::RoundMode::CAST_RINT, n);
        } else {
            AscendC::Relu(c, b, n);
        }
        outQ.EnQue(c);
        inQ.FreeTensor(b);
        AscendC::LocalTensor<T> d = outQ.DeQue<T>();
        AscendC::DataCopyPad(yGm[off], d, cp);
        outQ.FreeTensor(d);
    }
    AscendC::DataCopy(f[64], f, 10);  // EXPECT: L2.DATACOPY_32B
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<RuleTiling>();
    t->total = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
