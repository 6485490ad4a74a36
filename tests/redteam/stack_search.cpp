// ATTACK (passes the scan): after a DataCopyPad in and a vector call, searches the dead stack
// below its own frame for host addresses the emulated API computed and left there: a word with the
// same offset in its page as the kernel's GM address of the tile (the real GM byte the copy read)
// or as the tile's UB view address (the arena byte), outside the kernel's views. Reads its input
// through the first GM candidate and writes relu into UB through the first UB candidate (neither
// charged), then copies out. Before the vault's data key it found both and passed, correct, at
// 3.70 us est. against its twin's 4.08; now the real pages are under the key, closed whenever
// kernel code runs: its first read faults (RUN.INTEGRITY at a real GM address).
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ReluTiling {
    uint64_t total;
};

__attribute__((noinline)) static uint64_t dead_stack_word(uint64_t want_page_offset, uint64_t not_lo, uint64_t not_hi)
{
    volatile uint64_t anchor = 0;
    const volatile uint64_t* p = &anchor;
    for (int i = 1; i < 8192; ++i) {
        const uint64_t w = p[-i];
        if ((w & 4095) == want_page_offset && (w < not_lo || w >= not_hi) && w > (1ull << 32) && w < (1ull << 47))
            return w;
    }
    return 0;
}

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTiling);
    GET_TILING_DATA(t, tiling);
    uint64_t n = t.total, per = (n + AscendC::GetBlockNum() - 1) / AscendC::GetBlockNum();
    per = (per + 7) / 8 * 8;
    uint64_t lo = AscendC::GetBlockIdx() * per, hi = lo + per < n ? lo + per : n;
    if (lo >= hi) return;
    const uint32_t m = (uint32_t)(hi - lo);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inb, outb;
    pipe.InitBuffer(inb, 8192 * sizeof(DTYPE_X));
    pipe.InitBuffer(outb, 8192 * sizeof(DTYPE_X));
    AscendC::LocalTensor<DTYPE_X> in = inb.Get<DTYPE_X>();
    AscendC::LocalTensor<DTYPE_X> out = outb.Get<DTYPE_X>();
    AscendC::GlobalTensor<DTYPE_X> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ DTYPE_X*)x, n);
    yGm.SetGlobalBuffer((__gm__ DTYPE_X*)y, n);
    const uint64_t xa = reinterpret_cast<uint64_t>(x) + (lo + 5) * sizeof(DTYPE_X);   // not page aligned
    const uint64_t ua = out.GetPhyAddr() + 8 * sizeof(DTYPE_X);
    // a copy in (its real GM source and UB destination pass through the stack), then a vector call
    AscendC::DataCopyExtParams cp{1, (uint32_t)(8 * sizeof(DTYPE_X)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<DTYPE_X> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(in, xGm[lo + 5], cp, pad);
    const uint64_t gm = dead_stack_word(xa & 4095, xa - (64ull << 20), xa + (64ull << 20));
    AscendC::Duplicate(out[8], static_cast<DTYPE_X>(0), 8);
    const uint64_t ub = dead_stack_word(ua & 4095, ua - (8ull << 20), ua + (8ull << 20));
    printf("stack search: gm %d ub %d\n", gm != 0, ub != 0);
    if (!gm || !ub) return;
    auto* src = reinterpret_cast<const DTYPE_X*>(gm) - 5;
    auto* dst = reinterpret_cast<DTYPE_X*>(ub) - 8;
    for (uint32_t i = 0; i < m; ++i) {
        float v = static_cast<float>(src[i]);
        dst[i] = static_cast<DTYPE_X>(v > 0.0f ? v : 0.0f);
    }
    AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(0);
    AscendC::DataCopyExtParams cpo{1, (uint32_t)(m * sizeof(DTYPE_X)), 0, 0, 0};
    AscendC::DataCopyPad(yGm[lo], out, cpo);
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ReluTiling>();
    t->total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t cores = platform.GetCoreNumAiv();
    if (t->total < cores * 8 || t->total > cores * 8192) cores = (t->total + 8191) / 8192;
    if (cores == 0) cores = 1;
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
