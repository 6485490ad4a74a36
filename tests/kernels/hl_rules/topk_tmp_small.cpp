// Rule kernel for L2.TMP_BUFFER: TopK given half the tmpLocal that GetTopKMaxMinTmpSize asks for.
// A complete top-8 candidate for the fixture task top8_rows (one row per TopK call) that breaks
// exactly this rule once, on the line marked EXPECT.
// Run: cannpilot check tests/kernels/hl_rules/topk_tmp_small.cpp --task tests/fixtures/tasks/top8_rows --cases 1
#include <cmath>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct RuleTopkTiling {
    uint32_t rows, cols, inner, tmpBytes;
    AscendC::tiling::TopkTiling topk;
};

extern "C" __global__ __aicore__ void top8_rows_custom(GM_ADDR x, GM_ADDR y, GM_ADDR indices, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(RuleTopkTiling);
    GET_TILING_DATA(t, tiling);
    using T = DTYPE_X;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xb, vb, ib, tb, sb;
    pipe.InitBuffer(xb, t.inner * sizeof(T));
    pipe.InitBuffer(vb, 32);
    pipe.InitBuffer(ib, 32);
    pipe.InitBuffer(tb, t.tmpBytes / 2);
    pipe.InitBuffer(sb, 32);
    AscendC::GlobalTensor<T> xGm, yGm;
    AscendC::GlobalTensor<int32_t> iGm;
    xGm.SetGlobalBuffer((__gm__ T*)x, t.rows * t.cols);
    yGm.SetGlobalBuffer((__gm__ T*)y, t.rows * 8);
    iGm.SetGlobalBuffer((__gm__ int32_t*)indices, t.rows * 8);
    AscendC::LocalTensor<T> xl = xb.Get<T>(), vl = vb.Get<T>();
    AscendC::LocalTensor<int32_t> il = ib.Get<int32_t>();
    AscendC::LocalTensor<bool> finish;
    AscendC::TopKInfo info{1, (int32_t)t.inner, (int32_t)t.cols};
    for (uint32_t r = 0; r < t.rows; ++r) {
        AscendC::DataCopy(xl, xGm[r * t.cols], t.cols);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::TopK<T>(vl, il, xl, sb.Get<int32_t>(), finish, tb.Get<uint8_t>(), 8, t.topk, info);  // EXPECT: L2.TMP_BUFFER
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(yGm[r * 8], vl, 8);
        AscendC::DataCopy(iGm[r * 8], il, 8);
        AscendC::PipeBarrier<PIPE_ALL>();
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<RuleTopkTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    t->rows = (uint32_t)shape.GetDim(0);
    t->cols = (uint32_t)shape.GetDim(1);
    t->inner = (t->cols + 31) / 32 * 32;
    const uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    uint32_t mx = 0, mn = 0;
    AscendC::GetTopKMaxMinTmpSize(platform, (int32_t)t->inner, 1, false, false, AscendC::TopKMode::TOPK_NORMAL, true,
                                  typeSize, mx, mn);
    t->tmpBytes = mn;
    AscendC::TopKTilingFunc(platform, (int32_t)t->inner, 1, 8, typeSize, false, AscendC::TopKMode::TOPK_NORMAL, true,
                            t->topk);
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
