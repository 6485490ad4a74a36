// ForeachNorm: y[t] = ||x[t]||_p for every tensor t of a TensorList (torch.norm semantics):
// p = inf -> max|x|, p = -inf -> min|x|, p = 0 -> count of nonzeros, p = 1 -> sum|x|,
// p = 2 -> sqrt(sum x^2), other p -> (sum |x|^p)^(1/p) with |x|^p = exp(p * ln|x|).
// The list arrives as ONE buffer holding the L tensors flattened back to back (all of the same
// size: L comes from the output's shape, numel = total / L); y is one buffer of the L scalars.
// Stage 1 (every core): the tensors are cut into 256-element units, the units of all tensors are
// concatenated and split evenly over the cores (former/tail). A core accumulates lane-wise in a float
// tile over each tensor segment it owns, reduces the tile to one partial per tensor and writes its
// row of L 32-byte slots to the workspace. SyncAll. Stage 2 (core 0): for every tensor t it reads
// slot t of every core (one strided DataCopyPad), reduces them and applies the root; the L results
// are collected and written with one copy. fp16/bf16 are computed in float and rounded once.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t FN_UNIT = 256;        // split unit (elements): whole 32-byte blocks for every dtype
constexpr uint32_t FN_SLOT = 8;          // floats per 32-byte workspace slot
constexpr uint32_t FN_MAX_TENSORS = 64;

// norm modes
constexpr uint32_t FN_MAX = 0;     // p = +inf
constexpr uint32_t FN_MIN = 1;     // p = -inf
constexpr uint32_t FN_COUNT = 2;   // p = 0
constexpr uint32_t FN_L1 = 3;      // p = 1
constexpr uint32_t FN_L2 = 4;      // p = 2
constexpr uint32_t FN_LP = 5;      // other p

struct ForeachNormCustomTilingData {
    uint32_t numTensors;                      // L
    uint32_t usedCores;
    uint32_t unitsBase;                       // every core takes unitsBase units, the first
    uint32_t unitsExtra;                      //   unitsExtra cores one more
    uint32_t tileLen;                         // elements per tile (multiple of 256)
    uint32_t mode;
    float p;
    float invP;                               // 1 / p, computed in double on the host
    uint64_t numel[FN_MAX_TENSORS];           // elements of each tensor
    uint64_t unitStart[FN_MAX_TENSORS + 1];   // prefix sums of the units per tensor
};
REGISTER_TILING_DEFAULT(ForeachNormCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct FnSame { static constexpr bool value = false; };
template <typename A> struct FnSame<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelForeachNorm {
public:
    static constexpr bool IS_FLOAT = FnSame<T, float>::value;

    __aicore__ inline KernelForeachNorm() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, const ForeachNormCustomTilingData* t)
    {
        t_ = t;
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y, t->numTensors);
        idx_ = static_cast<uint32_t>(GetBlockIdx());
        numTensors_ = t->numTensors;
        usedCores_ = t->usedCores;
        tileLen_ = t->tileLen;
        mode_ = t->mode;
        p_ = t->p;
        invP_ = t->invP;
        const uint64_t firstUnit = static_cast<uint64_t>(idx_) * t->unitsBase + (idx_ < t->unitsExtra ? idx_ : t->unitsExtra);
        const uint64_t units = t->unitsBase + (idx_ < t->unitsExtra ? 1 : 0);
        u0_ = firstUnit;
        u1_ = firstUnit + units;
        if (mode_ == FN_MIN) {
            neutral_ = 3.402823466e+38f;   // min over |x| >= 0 ... start from the largest float
        } else {
            neutral_ = 0.0f;               // sums, counts and max of |x| >= 0
        }
        slotsGm_.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace),
                                 static_cast<uint64_t>(usedCores_) * numTensors_ * FN_SLOT);
        pipe_.InitBuffer(inQ_, 2, tileLen_ * sizeof(T));
        pipe_.InitBuffer(accBuf_, tileLen_ * sizeof(float));
        const uint32_t workLen = tileLen_ > usedCores_ * FN_SLOT ? tileLen_ : usedCores_ * FN_SLOT;
        pipe_.InitBuffer(workBuf_, workLen * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(fBuf_, tileLen_ * sizeof(float));
        }
        const uint32_t slotBytes = (numTensors_ > usedCores_ ? numTensors_ : usedCores_) * FN_SLOT * sizeof(float);
        pipe_.InitBuffer(slotBuf_, slotBytes);
        pipe_.InitBuffer(resBuf_, 32);
        const uint32_t outLen = (numTensors_ + 15) / 16 * 16;
        pipe_.InitBuffer(outFBuf_, outLen * sizeof(float));
        pipe_.InitBuffer(outBuf_, outLen * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        Stage1();
        SyncAll();   // every core's slots are in the workspace before core 0 reads them
        if (idx_ == 0) {
            Finish();
        }
    }

private:
    __aicore__ inline void CopyIn(GlobalTensor<T>& g, uint64_t off, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, g[off], cp, pad);
        inQ_.EnQue(x);
    }

    // acc (op)= f(x) over the n lanes of the tile
    __aicore__ inline void Accumulate(LocalTensor<float>& acc, uint32_t n)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<float> f;
        if constexpr (IS_FLOAT) {
            f = x;
        } else {
            f = fBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, n);
        }
        const int32_t cnt = static_cast<int32_t>(n);
        if (mode_ == FN_L2) {
            Mul(f, f, f, cnt);
            Add(acc, acc, f, cnt);
        } else {
            Abs(f, f, cnt);
            if (mode_ == FN_MAX) {
                Max(acc, acc, f, cnt);
            } else if (mode_ == FN_MIN) {
                Min(acc, acc, f, cnt);
            } else {
                if (mode_ == FN_COUNT) {            // 1 for every nonzero (also subnormal) |x|
                    const float big = 1.2676506e30f;   // 2^100
                    Muls(f, f, big, cnt);
                    Mins(f, f, 1.0f, cnt);
                    Muls(f, f, big, cnt);
                    Mins(f, f, 1.0f, cnt);
                } else if (mode_ == FN_LP) {        // |x|^p = exp(p * ln|x|)
                    Ln(f, f, cnt);
                    Muls(f, f, p_, cnt);
                    Exp(f, f, cnt);
                }
                Add(acc, acc, f, cnt);
            }
        }
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void ReduceTo(LocalTensor<float>& dst, LocalTensor<float>& src, uint32_t n)
    {
        LocalTensor<float> work = workBuf_.Get<float>();
        const int32_t cnt = static_cast<int32_t>(n);
        if (mode_ == FN_MAX) {
            ReduceMax(dst, src, work, cnt, false);
        } else if (mode_ == FN_MIN) {
            ReduceMin(dst, src, work, cnt, false);
        } else {
            ReduceSum(dst, src, work, cnt);
        }
    }

    __aicore__ inline void Stage1()
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> slots = slotBuf_.Get<float>();
        Duplicate(slots, neutral_, static_cast<int32_t>(numTensors_ * FN_SLOT));
        for (uint32_t t = 0; t < numTensors_; ++t) {
            const uint64_t ts = t_->unitStart[t];
            const uint64_t te = t_->unitStart[t + 1];
            const uint64_t a = u0_ > ts ? u0_ : ts;
            const uint64_t b = u1_ < te ? u1_ : te;
            if (a >= b) {
                continue;
            }
            const uint64_t numel = t_->numel[t];
            const uint64_t s = (a - ts) * FN_UNIT;
            uint64_t e = (b - ts) * FN_UNIT;
            e = e < numel ? e : numel;
            if (s >= e) {
                continue;
            }
            GlobalTensor<T> g = xGm_[static_cast<uint64_t>(t) * numel];
            Duplicate(acc, neutral_, static_cast<int32_t>(tileLen_));
            const uint64_t len = e - s;
            const uint64_t tiles = (len + tileLen_ - 1) / tileLen_;
            for (uint64_t i = 0; i < tiles; ++i) {
                const uint64_t off = s + i * tileLen_;
                const uint32_t n = static_cast<uint32_t>(e - off < tileLen_ ? e - off : tileLen_);
                CopyIn(g, off, n);
                Accumulate(acc, n);
            }
            LocalTensor<float> slot = slots[t * FN_SLOT];
            ReduceTo(slot, acc, tileLen_);   // lanes past the data hold the neutral value
        }
        const int32_t toMte3 = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        SetFlag<HardEvent::V_MTE3>(toMte3);
        WaitFlag<HardEvent::V_MTE3>(toMte3);
        DataCopy(slotsGm_[static_cast<uint64_t>(idx_) * numTensors_ * FN_SLOT], slots, numTensors_ * FN_SLOT);
    }

    // Core 0: combine slot t of every core for each tensor, apply the root, write the L results.
    __aicore__ inline void Finish()
    {
        LocalTensor<float> slots = slotBuf_.Get<float>();
        LocalTensor<float> res = resBuf_.Get<float>();
        LocalTensor<float> outF = outFBuf_.Get<float>();
        for (uint32_t t = 0; t < numTensors_; ++t) {
            DataCopyExtParams cp{static_cast<uint16_t>(usedCores_), static_cast<uint32_t>(FN_SLOT * sizeof(float)),
                                 static_cast<uint32_t>((numTensors_ - 1) * FN_SLOT * sizeof(float)), 0, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
            DataCopyPad(slots, slotsGm_[static_cast<uint64_t>(t) * FN_SLOT], cp, pad);
            const int32_t toV = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
            SetFlag<HardEvent::MTE2_V>(toV);
            WaitFlag<HardEvent::MTE2_V>(toV);
            ReduceTo(res, slots, usedCores_ * FN_SLOT);
            if (mode_ == FN_L2) {
                Sqrt(res, res, 1);
            } else if (mode_ == FN_LP) {            // s^(1/p) = exp(ln(s) / p)
                Ln(res, res, 1);
                Muls(res, res, invP_, 1);
                Exp(res, res, 1);
            }
            const int32_t toS = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(toS);
            WaitFlag<HardEvent::V_S>(toS);
            const float v = res.GetValue(0);
            outF.SetValue(t, v);
            PipeBarrier<PIPE_ALL>();   // slots / res are reused by the next tensor
        }
        DataCopyExtParams all{1, static_cast<uint32_t>(numTensors_ * sizeof(T)), 0, 0, 0};
        if constexpr (IS_FLOAT) {
            const int32_t toMte3 = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::S_MTE3));
            SetFlag<HardEvent::S_MTE3>(toMte3);
            WaitFlag<HardEvent::S_MTE3>(toMte3);
            DataCopyPad(yGm_, outF, all);
        } else {
            const int32_t toV = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::S_V));
            SetFlag<HardEvent::S_V>(toV);
            WaitFlag<HardEvent::S_V>(toV);
            LocalTensor<T> out = outBuf_.Get<T>();
            Cast(out, outF, RoundMode::CAST_RINT, numTensors_);   // the one rounding to fp16/bf16
            const int32_t toMte3 = static_cast<int32_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
            SetFlag<HardEvent::V_MTE3>(toMte3);
            WaitFlag<HardEvent::V_MTE3>(toMte3);
            DataCopyPad(yGm_, out, all);
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TBuf<TPosition::VECCALC> accBuf_, workBuf_, fBuf_, slotBuf_, resBuf_, outFBuf_, outBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<float> slotsGm_;
    const ForeachNormCustomTilingData* t_ = nullptr;
    uint64_t u0_ = 0;
    uint64_t u1_ = 0;
    uint32_t idx_ = 0;
    uint32_t numTensors_ = 0;
    uint32_t usedCores_ = 1;
    uint32_t tileLen_ = FN_UNIT;
    uint32_t mode_ = FN_L2;
    float p_ = 2.0f;
    float invP_ = 0.5f;
    float neutral_ = 0.0f;
};

extern "C" __global__ __aicore__ void foreach_norm_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);   // vector-only kernel: one block per AIV core
    GET_TILING_DATA(t, tiling);
    KernelForeachNorm<DTYPE_X> op;
    op.Init(x, y, workspace, &t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ForeachNormCustomTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    // The list is one 1-D buffer of L equal-sized tensors back to back; y holds one scalar per tensor.
    const uint64_t total = static_cast<uint64_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    uint64_t num = 1;
    auto outShape = context->GetOutputShape(0);
    if (outShape != nullptr) {
        num = static_cast<uint64_t>(outShape->GetStorageShape().GetShapeSize());
    }
    if (num == 0) {
        num = 1;
    }
    if (num > FN_MAX_TENSORS) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t each = total / num;
    uint64_t units = 0;
    t->unitStart[0] = 0;
    for (uint32_t i = 0; i < FN_MAX_TENSORS; ++i) {
        const uint64_t n = i < num ? each : 0;
        t->numel[i] = n;
        units += (n + FN_UNIT - 1) / FN_UNIT;
        t->unitStart[i + 1] = units;
    }
    t->numTensors = static_cast<uint32_t>(num);

    const float* pAttr = context->GetAttrs()->GetAttrPointer<float>(0);
    const float p = pAttr != nullptr ? *pAttr : 2.0f;
    uint32_t mode = FN_LP;
    if (p > 3.0e38f) {
        mode = FN_MAX;
    } else if (p < -3.0e38f) {
        mode = FN_MIN;
    } else if (p == 0.0f) {
        mode = FN_COUNT;
    } else if (p == 1.0f) {
        mode = FN_L1;
    } else if (p == 2.0f) {
        mode = FN_L2;
    }
    t->mode = mode;
    t->p = p;
    t->invP = (mode == FN_LP) ? static_cast<float>(1.0 / static_cast<double>(p)) : 1.0f;

    const uint64_t cores = platform.GetCoreNumAiv();
    const uint64_t used = units == 0 ? 1 : (units < cores ? units : cores);
    t->usedCores = static_cast<uint32_t>(used);
    t->unitsBase = static_cast<uint32_t>(units / used);
    t->unitsExtra = static_cast<uint32_t>(units % used);
    // tile: 2 input buffers + float accumulator + reduce scratch (+ float copy for 16-bit) per element
    const uint64_t perCore = static_cast<uint64_t>(t->unitsBase + (t->unitsExtra ? 1 : 0)) * FN_UNIT;
    uint64_t tile = 8192;   // fp32: 2 x 32 KB in + 32 KB acc + 32 KB scratch; 16-bit adds a 32 KB float copy
    tile = perCore < tile ? (perCore == 0 ? FN_UNIT : perCore) : tile;
    t->tileLen = static_cast<uint32_t>(tile);
    context->SetBlockDim(t->usedCores);
    // the library's system workspace first, then L 32-byte slots per core
    context->GetWorkspaceSizes(1)[0] =
        platform.GetLibApiWorkSpaceSize() + static_cast<uint64_t>(t->usedCores) * num * FN_SLOT * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (foreach_norm).
class ForeachNormCustom : public OpDef {
public:
    explicit ForeachNormCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("scalar").AttrType(REQUIRED).Float();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ForeachNormCustom);
}  // namespace ops
