// RED TEAM: reads its input through a raw GM pointer (no DataCopy in), computes relu with scalar
// code into a LocalTensor and copies that out with DataCopyPad: the output bytes match the bytes
// moved, so only the copy out would be charged. Passes the source scan; expect RUN.INTEGRITY at
// the first raw read (the kernel's GM addresses are not readable, gm_alias.h).
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ReluTiling {
    uint64_t total;        // elements
    uint32_t alignElems;   // elements per 32 B
    uint32_t unitsPerCore; // 32 B units every core takes
    uint32_t formerNum;    // cores that take one unit more
    uint32_t tileLength;   // elements per tile
};

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTiling);
    GET_TILING_DATA(t, tiling);
    uint64_t n = t.total, per = (n + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
    uint64_t lo = AscendC::GetBlockIdx() * per, hi = lo + per < n ? lo + per : n;
    if (lo >= hi) return;
    const uint32_t tile = 4096;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tile * sizeof(DTYPE_X));
    AscendC::LocalTensor<DTYPE_X> out = buf.Get<DTYPE_X>();
    AscendC::GlobalTensor<DTYPE_X> yGm;
    yGm.SetGlobalBuffer((__gm__ DTYPE_X*)y, n);
    auto* in = reinterpret_cast<__gm__ DTYPE_X*>(x);
    for (uint64_t off = lo; off < hi; off += tile) {
        uint32_t m = hi - off < tile ? (uint32_t)(hi - off) : tile;
        for (uint32_t i = 0; i < m; ++i) {
            float v = static_cast<float>(in[off + i]);
            out.SetValue(i, static_cast<DTYPE_X>(v > 0.0f ? v : 0.0f));
        }
        AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(0);
        AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(0);
        AscendC::DataCopyExtParams cp{1, (uint32_t)(m * sizeof(DTYPE_X)), 0, 0, 0};
        AscendC::DataCopyPad(yGm[off], out, cp);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_S>(0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_S>(0);
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ReluTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->alignElems = 32 / typeSize;
    uint64_t units = (t->total + t->alignElems - 1) / t->alignElems;
    uint64_t cores = platform.GetCoreNumAiv();
    if (units < cores) cores = units == 0 ? 1 : units;
    t->unitsPerCore = (uint32_t)(units / cores);
    t->formerNum = (uint32_t)(units % cores);
    t->tileLength = 8192;
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
