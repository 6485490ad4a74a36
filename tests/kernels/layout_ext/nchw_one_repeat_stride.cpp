// Breaking twin of nchw_to_nc1hwc0.cpp: the rep strides stay set for a single repeat, so the one
// repeat starts one stride in and runs past the buffers (case 1: H * W = 16).
// Run: cannpilot check tests/kernels/layout_ext/nchw_one_repeat_stride.cpp --task tests/fixtures/tasks/nchw_to_nc1hwc0 --cases 1
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct Nc1hwc0Tiling {
    uint32_t groups;          // N * C / 16
    uint32_t hw;              // H * W, a multiple of 16
    uint32_t groupsPerCore;
};

class KernelNc1hwc0 {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const Nc1hwc0Tiling& t)
    {
        const uint32_t first = AscendC::GetBlockIdx() * t.groupsPerCore;
        groups_ = first >= t.groups ? 0 : (t.groups - first < t.groupsPerCore ? t.groups - first : t.groupsPerCore);
        hw_ = t.hw;
        const uint64_t per = 16ull * hw_;
        xGm_.SetGlobalBuffer((__gm__ half*)x + first * per, groups_ * per);
        yGm_.SetGlobalBuffer((__gm__ half*)y + first * per, groups_ * per);
        pipe_.InitBuffer(inQ_, 2, per * sizeof(half));
        pipe_.InitBuffer(outQ_, 2, per * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        const uint32_t per = 16 * hw_;
        const uint8_t repeats = static_cast<uint8_t>(hw_ / 16);
        const uint16_t srcRep = 1, dstRep = 16;
        for (uint32_t g = 0; g < groups_; ++g) {
            AscendC::LocalTensor<half> in = inQ_.AllocTensor<half>();
            AscendC::DataCopy(in, xGm_[(uint64_t)g * per], per);
            inQ_.EnQue(in);
            in = inQ_.DeQue<half>();
            AscendC::LocalTensor<half> out = outQ_.AllocTensor<half>();
            AscendC::LocalTensor<half> srcList[AscendC::NCHW_CONV_ADDR_LIST_SIZE];
            AscendC::LocalTensor<half> dstList[AscendC::NCHW_CONV_ADDR_LIST_SIZE];
            for (int i = 0; i < 16; ++i) {
                srcList[i] = in[i * hw_];
                dstList[i] = out[i * 16];
            }
            AscendC::TransDataTo5HDParams params(false, false, repeats, dstRep, srcRep);
            AscendC::TransDataTo5HD<half>(dstList, srcList, params);  // EXPECT: L2.UB_BOUNDS
            outQ_.EnQue(out);
            inQ_.FreeTensor(in);
            out = outQ_.DeQue<half>();
            AscendC::DataCopy(yGm_[(uint64_t)g * per], out, per);
            outQ_.FreeTensor(out);
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 2> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 2> outQ_;
    AscendC::GlobalTensor<half> xGm_, yGm_;
    uint32_t groups_ = 0, hw_ = 0;
};

extern "C" __global__ __aicore__ void nchw_to_nc1hwc0_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(Nc1hwc0Tiling);
    GET_TILING_DATA(t, tiling);
    KernelNc1hwc0 op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<Nc1hwc0Tiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto& shape = context->GetInputShape(0)->GetStorageShape();
    t->hw = (uint32_t)(shape.GetDim(2) * shape.GetDim(3));
    t->groups = (uint32_t)(shape.GetDim(0) * shape.GetDim(1) / 16);
    const uint32_t cores = platform.GetCoreNumAiv();
    t->groupsPerCore = (t->groups + cores - 1) / cores;
    context->SetBlockDim((t->groups + t->groupsPerCore - 1) / t->groupsPerCore);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

