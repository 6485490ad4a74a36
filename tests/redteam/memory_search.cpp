// RED TEAM: finds the emulator's real mappings by searching its own memory, with no emulator name:
// the data segment between the linker's `edata` and `end` (where the GM alias table and the
// runtime's UB arena pointer used to live), then the emulator's vault at its documented address.
// With them it reads its input from the real GM mapping and computes relu with scalar code
// straight into the real UB arena (neither charged), and only copies out with DataCopyPad (whose
// bytes match the output, so the raw-write check passes). Prints what it found. Passes the source
// scan; expect: nothing in the data segment, and RUN.INTEGRITY at its first read of the vault
// (a protection key the kernel's code runs without).
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

extern "C" char edata, end;

struct ReluTiling {
    uint64_t total;        // elements
    uint32_t alignElems;   // elements per 32 B
    uint32_t unitsPerCore; // 32 B units every core takes
    uint32_t formerNum;    // cores that take one unit more
    uint32_t tileLength;   // elements per tile
};

static bool aligned_page(uint64_t v) { return v != 0 && (v & 4095) == 0; }

// {alias, real, bytes} with alias <= gm < alias + bytes: a GM alias record; {real, alias} with the
// alias view holding `ub`: the UB arena. Words from lo to hi.
static void search(const volatile uint64_t* lo, const volatile uint64_t* hi, uint64_t gm, uint64_t ub,
                   uint64_t& gm_real, uint64_t& ub_real)
{
    for (const volatile uint64_t* p = lo + 1; p + 2 < hi; ++p) {
        const uint64_t w0 = p[0], w1 = p[1], w2 = p[2];
        if (!gm_real && aligned_page(w0) && aligned_page(w1) && w1 != w0 && w2 % 4096 == 0 && w2 < (1ull << 36)
            && gm >= w0 && gm - w0 < w2)
            gm_real = w1 + (gm - w0);
        const uint64_t prev = p[-1];
        if (!ub_real && aligned_page(w0) && aligned_page(prev) && prev != w0 && ub >= w0 && ub - w0 < (1u << 21))
            ub_real = prev + (ub - w0);
    }
}

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTiling);
    GET_TILING_DATA(t, tiling);
    uint64_t n = t.total, per = (n + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
    per = (per + 7) / 8 * 8;
    uint64_t lo = AscendC::GetBlockIdx() * per, hi = lo + per < n ? lo + per : n;
    if (lo >= hi) return;
    const uint32_t tile = 4096;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tile * sizeof(DTYPE_X));
    AscendC::LocalTensor<DTYPE_X> out = buf.Get<DTYPE_X>();
    AscendC::GlobalTensor<DTYPE_X> yGm;
    yGm.SetGlobalBuffer((__gm__ DTYPE_X*)y, n);

    uint64_t xr = 0, ur = 0;
    const uint64_t data_lo = (reinterpret_cast<uint64_t>(&edata) + 7) / 8 * 8;
    search(reinterpret_cast<const volatile uint64_t*>(data_lo), reinterpret_cast<const volatile uint64_t*>(&end),
           reinterpret_cast<uint64_t>(x), out.GetPhyAddr(), xr, ur);
    printf("search data segment: gm %d ub %d\n", xr != 0, ur != 0);
    if (!xr || !ur) {
        const uint64_t vault = 0x200000000000ull;   // the emulator's vault (open source: its address is known)
        search(reinterpret_cast<const volatile uint64_t*>(vault), reinterpret_cast<const volatile uint64_t*>(vault + 3 * 4096),
               reinterpret_cast<uint64_t>(x), out.GetPhyAddr(), xr, ur);
        printf("search vault: gm %d ub %d\n", xr != 0, ur != 0);
    }
    if (!xr || !ur) return;
    auto* in = reinterpret_cast<const DTYPE_X*>(xr);
    auto* ubuf = reinterpret_cast<DTYPE_X*>(ur);
    for (uint64_t off = lo; off < hi; off += tile) {
        uint32_t m = hi - off < tile ? (uint32_t)(hi - off) : tile;
        for (uint32_t i = 0; i < m; ++i) {
            float v = static_cast<float>(in[off + i]);
            ubuf[i] = static_cast<DTYPE_X>(v > 0.0f ? v : 0.0f);
        }
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
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->alignElems = 32 / typeSize;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t cores = platform.GetCoreNumAiv();
    if (t->total < cores * 8) cores = 1;
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
