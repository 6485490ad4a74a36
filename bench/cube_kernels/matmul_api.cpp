// c = a @ b (+ bias) with the high-level Matmul API, a MIX kernel: each AIV owns a singleCoreM x
// singleCoreN block of C (the host's MultiCoreMatmulTiling split) and asks its AIC to compute it,
// with IterateAll (mode 0) or tile by tile with Iterate / GetTensorC (mode 1). Written for Cannpilot
// from the documented AscendC API.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

struct MmApiTiling {
    AscendC::tiling::TCubeTiling cube;
    uint32_t transB;
    uint32_t mode;
};
REGISTER_TILING_DEFAULT(MmApiTiling);

using namespace AscendC;

template <typename A, typename BIAS, typename C>
__aicore__ inline void MmApiRun(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, const MmApiTiling& t)
{
    using AType = MatmulType<TPosition::GM, CubeFormat::ND, A>;
    using BType = MatmulType<TPosition::GM, CubeFormat::ND, A, true>;
    using CType = MatmulType<TPosition::GM, CubeFormat::ND, C>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, BIAS>;
    TPipe pipe;
    Matmul<AType, BType, CType, BiasType> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t.cube);
    const TCubeTiling& ct = t.cube;
    const int32_t mDim = (ct.M + ct.singleCoreM - 1) / ct.singleCoreM;
    const int32_t core = static_cast<int32_t>(GetBlockIdx());
    if (core >= ct.usedCoreNum) {
        return;
    }
    const int32_t mi = core % mDim, ni = core / mDim;
    const int32_t m0 = mi * ct.singleCoreM, n0 = ni * ct.singleCoreN;
    const int32_t tailM = ct.M - m0 < ct.singleCoreM ? ct.M - m0 : ct.singleCoreM;
    const int32_t tailN = ct.N - n0 < ct.singleCoreN ? ct.N - n0 : ct.singleCoreN;
    GlobalTensor<A> ga, gb;
    GlobalTensor<BIAS> gbias;
    GlobalTensor<C> gc;
    ga.SetGlobalBuffer((__gm__ A*)a + static_cast<uint64_t>(m0) * ct.Ka, static_cast<uint64_t>(tailM) * ct.Ka);
    const uint64_t bOff = t.transB ? static_cast<uint64_t>(n0) * ct.Kb : static_cast<uint64_t>(n0);
    gb.SetGlobalBuffer((__gm__ A*)b + bOff, static_cast<uint64_t>(ct.Kb) * ct.N - bOff);
    gbias.SetGlobalBuffer((__gm__ BIAS*)bias + n0, tailN);
    gc.SetGlobalBuffer((__gm__ C*)c + static_cast<uint64_t>(m0) * ct.N + n0, static_cast<uint64_t>(ct.M - m0) * ct.N - n0);
    mm.SetTail(tailM, tailN);
    mm.SetTensorA(ga);
    mm.SetTensorB(gb, t.transB != 0);
    if (ct.isBias) {
        mm.SetBias(gbias);
    }
    if (t.mode == 0) {
        mm.IterateAll(gc);
    } else {
        // tile by tile: the API places each baseM x baseN tile of the block in C
        while (mm.Iterate()) {
            mm.GetTensorC(gc);
        }
    }
    mm.End();
}

extern "C" __global__ __aicore__ void mm_api_custom(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(t, tiling);
    MmApiRun<DTYPE_A, DTYPE_BIAS, DTYPE_C>(a, b, bias, c, t);
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& sa = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& sb = context->GetInputShape(1)->GetStorageShape();
    const bool transB = *context->GetAttrs()->GetBool(0);
    const int64_t mode = *context->GetAttrs()->GetInt(1);
    const int32_t m = static_cast<int32_t>(sa.GetDim(0)), k = static_cast<int32_t>(sa.GetDim(1));
    const int32_t n = static_cast<int32_t>(transB ? sb.GetDim(0) : sb.GetDim(1));
    const auto dt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(0)->GetDataType());
    const auto ct = static_cast<matmul_tiling::DataType>(context->GetOutputDesc(0)->GetDataType());
    const auto bt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(2)->GetDataType());
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    matmul_tiling::MultiCoreMatmulTiling mt(plat);
    mt.SetDim(plat.GetCoreNumAiv());
    mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt);
    mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt, transB);
    mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, ct);
    mt.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, bt);
    mt.SetShape(m, n, k);
    mt.SetOrgShape(m, n, k);
    mt.SetBias(true);
    mt.SetBufferSpace(-1, -1, -1);
    MmApiTiling* t = context->GetTilingData<MmApiTiling>();
    if (mt.GetTiling(t->cube) == -1) {
        return ge::GRAPH_FAILED;
    }
    t->transB = transB ? 1 : 0;
    t->mode = static_cast<uint32_t>(mode);
    // a MIX block is one AIC and two AIVs; each AIV computes one single-core block
    context->SetBlockDim(static_cast<uint32_t>((t->cube.usedCoreNum + 1) / 2));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
