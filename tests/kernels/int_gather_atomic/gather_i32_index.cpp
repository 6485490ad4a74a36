// Gather by int32 index, as an engineer would write it: the whole source row sits in UB, each core
// takes a contiguous share of the index, turns every index into a byte offset (ShiftLeft by
// log2(sizeof(T))) and gathers with the UB Gather instruction, one tile at a time.
// Run: cannpilot check tests/kernels/int_gather_atomic/gather_i32_index.cpp --task tests/fixtures/tasks/gather_i32_index --cases all
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct GatherTiling {
    uint32_t srcLen;      // elements of x
    uint32_t idxLen;      // elements of index (= of y)
    uint32_t perCore;     // index elements per core (a multiple of 8)
    uint32_t tile;        // index elements per tile
};

template <typename T>
class KernelGather {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherTiling& t)
    {
        const uint32_t start = AscendC::GetBlockIdx() * t.perCore;
        count_ = start >= t.idxLen ? 0 : (t.idxLen - start < t.perCore ? t.idxLen - start : t.perCore);
        srcLen_ = t.srcLen;
        tile_ = t.tile;
        xGm_.SetGlobalBuffer((__gm__ T*)x, t.srcLen);
        idxGm_.SetGlobalBuffer((__gm__ int32_t*)index + start, count_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + start, count_);
        pipe_.InitBuffer(src_, (t.srcLen * sizeof(T) + 31) / 32 * 32);
        pipe_.InitBuffer(idxQ_, 1, tile_ * sizeof(int32_t));
        pipe_.InitBuffer(outQ_, 1, tile_ * sizeof(T));
    }
    __aicore__ inline void Process()
    {
        if (count_ == 0) return;
        AscendC::LocalTensor<T> src = src_.Get<T>();
        AscendC::DataCopyExtParams cp{1, (uint32_t)(srcLen_ * sizeof(T)), 0, 0, 0};
        AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        AscendC::DataCopyPad(src, xGm_, cp, pad);
        AscendC::PipeBarrier<PIPE_ALL>();
        for (uint32_t off = 0; off < count_; off += tile_) {
            const uint32_t n = count_ - off < tile_ ? count_ - off : tile_;
            AscendC::LocalTensor<int32_t> idx = idxQ_.AllocTensor<int32_t>();
            AscendC::DataCopyExtParams ci{1, (uint32_t)(n * sizeof(int32_t)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<int32_t> ipad{false, 0, 0, 0};
            AscendC::DataCopyPad(idx, idxGm_[off], ci, ipad);
            idxQ_.EnQue(idx);
            idx = idxQ_.DeQue<int32_t>();
            AscendC::ShiftLeft(idx, idx, (int32_t)(sizeof(T) == 2 ? 1 : 2), (int32_t)n);   // index -> byte offset
            AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
            AscendC::Gather(y, src, idx.template ReinterpretCast<uint32_t>(), (uint32_t)0, n);
            outQ_.EnQue(y);
            idxQ_.FreeTensor(idx);
            y = outQ_.DeQue<T>();
            AscendC::DataCopyExtParams co{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPad(yGm_[off], y, co);
            outQ_.FreeTensor(y);
        }
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> src_;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> idxQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ_;
    AscendC::GlobalTensor<T> xGm_, yGm_;
    AscendC::GlobalTensor<int32_t> idxGm_;
    uint32_t count_ = 0, srcLen_ = 0, tile_ = 0;
};

extern "C" __global__ __aicore__ void gather_i32_index_custom(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR workspace,
                                                              GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(GatherTiling);
    GET_TILING_DATA(t, tiling);
    KernelGather<DTYPE_X> op;
    op.Init(x, index, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<GatherTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    t->srcLen = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->idxLen = (uint32_t)context->GetInputShape(1)->GetStorageShape().GetShapeSize();
    const uint32_t cores = platform.GetCoreNumAiv();
    uint32_t per = (t->idxLen + cores - 1) / cores;
    per = (per + 7) / 8 * 8;
    t->perCore = per;
    t->tile = 4096;
    context->SetBlockDim((t->idxLen + per - 1) / per);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
