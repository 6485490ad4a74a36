// MseLoss, y = sum((x - target)^2) / N over every element: the whole-tensor reduction exemplar of
// the Cannpilot knowledge base, written for Cannpilot from documented AscendC behaviour.
// Shows: a reduction to ONE value that still uses every core. Stage 1: each core squares the
// differences of its slice tile by tile and accumulates them lane-wise in a float tile, then one
// ReduceSum gives its partial sum, written to its own 32-byte slot of the user workspace. A
// SyncAll() waits until every core has written. Stage 2: core 0 reads the slots, adds them with
// one ReduceSum, scales by 1/N and writes y. No atomics, so the result is the same on every run.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t UNIT = 256;          // elements per split unit: whole 32 B blocks for every dtype
constexpr uint32_t SLOT_FLOATS = 8;     // one 32 B workspace slot per core

struct MseLossTilingData {
    uint64_t total;        // N, elements of x (and of target)
    uint32_t unitsBase;    // the split unit is 256 elements: every core takes unitsBase units,
    uint32_t unitsExtra;   //   and the first unitsExtra cores one more
    uint32_t usedCores;    // cores that run (<= vector cores, required by SyncAll)
    uint32_t tileLen;      // elements per tile (a multiple of 256)
    float invN;            // 1 / N, computed on the host in double
};
REGISTER_TILING_DEFAULT(MseLossTilingData);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelMseLoss {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline KernelMseLoss() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR target, GM_ADDR y, GM_ADDR workspace, const MseLossTilingData& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint64_t firstUnit = static_cast<uint64_t>(idx) * t.unitsBase + (idx < t.unitsExtra ? idx : t.unitsExtra);
        const uint64_t units = t.unitsBase + (idx < t.unitsExtra ? 1 : 0);
        const uint64_t start = firstUnit * UNIT;
        const uint64_t end = start + units * UNIT < t.total ? start + units * UNIT : t.total;
        count_ = end > start ? end - start : 0;   // the last core ends at N, mid-unit
        tileLen_ = t.tileLen;
        usedCores_ = t.usedCores;
        invN_ = t.invN;
        xGm_.SetGlobalBuffer((__gm__ T*)x + start, count_);
        targetGm_.SetGlobalBuffer((__gm__ T*)target + start, count_);
        yGm_.SetGlobalBuffer((__gm__ T*)y, 1);
        slotsGm_.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace), static_cast<uint64_t>(usedCores_) * SLOT_FLOATS);

        pipe_.InitBuffer(inX_, 2, tileLen_ * sizeof(T));         // double-buffered copy-in
        pipe_.InitBuffer(inTarget_, 2, tileLen_ * sizeof(T));
        pipe_.InitBuffer(accBuf_, tileLen_ * sizeof(float));      // lane-wise running sum of squares
        pipe_.InitBuffer(workBuf_, tileLen_ * sizeof(float));     // ReduceSum scratch
        pipe_.InitBuffer(slotBuf_, usedCores_ * SLOT_FLOATS * sizeof(float));
        pipe_.InitBuffer(meanBuf_, 32);
        if constexpr (!IS_FLOAT) {                                  // fp16/bf16 are squared in float
            pipe_.InitBuffer(xFloatBuf_, tileLen_ * sizeof(float));
            pipe_.InitBuffer(targetFloatBuf_, tileLen_ * sizeof(float));
            pipe_.InitBuffer(outBuf_, 32);
        }
    }

    __aicore__ inline void Process()
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        Duplicate(acc, 0.0f, tileLen_);
        const uint64_t tiles = (count_ + tileLen_ - 1) / tileLen_;
        for (uint64_t i = 0; i < tiles; ++i) {
            const uint32_t n = static_cast<uint32_t>(i + 1 < tiles ? tileLen_ : count_ - i * tileLen_);
            CopyIn(i * tileLen_, n);
            Accumulate(acc, n);
        }
        WritePartial(acc);
        SyncAll();                          // every slot is written before core 0 reads them
        if (GetBlockIdx() == 0) {
            WriteMean();
        }
    }

private:
    __aicore__ inline void CopyIn(uint64_t offset, uint32_t n)
    {
        LocalTensor<T> x = inX_.AllocTensor<T>();
        LocalTensor<T> target = inTarget_.AllocTensor<T>();
        DataCopyExtParams copy{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> noPad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[offset], copy, noPad);
        DataCopyPad(target, targetGm_[offset], copy, noPad);
        inX_.EnQue(x);
        inTarget_.EnQue(target);
    }

    // acc[j] += (x[j] - target[j])^2 for the n lanes of this tile; lanes past n keep their sum.
    __aicore__ inline void Accumulate(const LocalTensor<float>& acc, uint32_t n)
    {
        LocalTensor<T> x = inX_.DeQue<T>();
        LocalTensor<T> target = inTarget_.DeQue<T>();
        if constexpr (IS_FLOAT) {
            Sub(x, x, target, n);
            Mul(x, x, x, n);
            Add(acc, acc, x, n);
        } else {
            LocalTensor<float> xf = xFloatBuf_.Get<float>();
            LocalTensor<float> targetF = targetFloatBuf_.Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, n);
            Cast(targetF, target, RoundMode::CAST_NONE, n);
            Sub(xf, xf, targetF, n);
            Mul(xf, xf, xf, n);
            Add(acc, acc, xf, n);
        }
        inX_.FreeTensor(x);
        inTarget_.FreeTensor(target);
    }

    // This core's partial sum into slot 0 of its 8-float slot (the other 7 stay 0).
    __aicore__ inline void WritePartial(const LocalTensor<float>& acc)
    {
        LocalTensor<float> slot = slotBuf_.Get<float>();
        LocalTensor<float> work = workBuf_.Get<float>();
        Duplicate(slot, 0.0f, SLOT_FLOATS);
        ReduceSum(slot, acc, work, tileLen_);
        const event_t toMte3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(toMte3);
        WaitFlag<HardEvent::V_MTE3>(toMte3);
        DataCopy(slotsGm_[static_cast<uint64_t>(GetBlockIdx()) * SLOT_FLOATS], slot, SLOT_FLOATS);
    }

    // Core 0: the slots hold one partial sum and seven zeros each, so one ReduceSum over all of
    // them is the total.
    __aicore__ inline void WriteMean()
    {
        LocalTensor<float> slots = slotBuf_.Get<float>();
        LocalTensor<float> work = workBuf_.Get<float>();
        const uint32_t slotFloats = usedCores_ * SLOT_FLOATS;
        DataCopy(slots, slotsGm_, slotFloats);
        const event_t toV = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(toV);
        WaitFlag<HardEvent::MTE2_V>(toV);
        LocalTensor<float> mean = meanBuf_.Get<float>();
        ReduceSum(mean, slots, work, slotFloats);
        Muls(mean, mean, invN_, 1);
        DataCopyExtParams one{1, static_cast<uint32_t>(sizeof(T)), 0, 0, 0};
        const event_t toMte3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        if constexpr (IS_FLOAT) {
            SetFlag<HardEvent::V_MTE3>(toMte3);
            WaitFlag<HardEvent::V_MTE3>(toMte3);
            DataCopyPad(yGm_, mean, one);
        } else {
            LocalTensor<T> out = outBuf_.Get<T>();
            Cast(out, mean, RoundMode::CAST_RINT, 1);    // the one rounding to fp16/bf16
            SetFlag<HardEvent::V_MTE3>(toMte3);
            WaitFlag<HardEvent::V_MTE3>(toMte3);
            DataCopyPad(yGm_, out, one);
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inX_, inTarget_;
    TBuf<TPosition::VECCALC> accBuf_, workBuf_, slotBuf_, meanBuf_, xFloatBuf_, targetFloatBuf_, outBuf_;
    GlobalTensor<T> xGm_, targetGm_, yGm_;
    GlobalTensor<float> slotsGm_;
    uint64_t count_ = 0;
    uint32_t tileLen_ = 0;
    uint32_t usedCores_ = 0;
    float invN_ = 0.0f;
};

extern "C" __global__ __aicore__ void mse_loss_custom(GM_ADDR x, GM_ADDR target, GM_ADDR y, GM_ADDR workspace,
                                                      GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelMseLoss<DTYPE_X> op;
    op.Init(x, target, y, workspace, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<MseLossTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint64_t units = (total + UNIT - 1) / UNIT;
    const uint64_t cores = platform.GetCoreNumAiv();
    const uint64_t used = units == 0 ? 1 : (units < cores ? units : cores);
    t->total = total;
    t->usedCores = static_cast<uint32_t>(used);
    t->unitsBase = static_cast<uint32_t>(units / used);
    t->unitsExtra = static_cast<uint32_t>(units % used);
    // 4096-element tiles: two double-buffered fp32 inputs (64 KB) + the float accumulator, scratch
    // and fp32 copies (64 KB) stay well inside the UB of every chip, and a core's slice of the
    // 16M-element case still takes ~80 tiles, so the copy-in of one tile hides behind the math
    // of the previous one. A core whose slice is shorter uses a shorter tile.
    const uint64_t perCore = static_cast<uint64_t>(t->unitsBase + (t->unitsExtra ? 1 : 0)) * UNIT;
    t->tileLen = static_cast<uint32_t>(perCore < 4096 ? (perCore == 0 ? UNIT : perCore) : 4096);
    t->invN = total == 0 ? 0.0f : static_cast<float>(1.0 / static_cast<double>(total));
    context->SetBlockDim(t->usedCores);
    // the library's system workspace first, then one 32-byte slot per core for the partial sums
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize() + t->usedCores * 32;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class MseLossCustom : public OpDef {
public:
    explicit MseLossCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("target").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b").AddConfig("ascend950");
    }
};
OP_ADD(MseLossCustom);
}  // namespace ops
