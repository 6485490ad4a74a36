// Exp, y = base ^ (scale * x + shift) (base -1 means e): Cannpilot's calibration kernel for the
// cost model (issue 4). Written for Cannpilot from documented AscendC behaviour.
//
// With k = ln(base) (1 for base e), y = exp(k*scale * x + k*shift): one Muls, one Adds and one Exp
// per element whatever the base; the host folds the attributes into the two constants.
//
// Tiling choices that make it a fair yardstick for the vendor's measured times:
//   - the tensor is split across the cores in 512-byte units, so every core's slice and every tile
//     starts 512-byte aligned in GM (unaligned GM moves at ~70 %: ascendc-facts 3.3);
//   - each core gets at least four tiles when it has work enough, so the copy-in of one tile
//     overlaps the compute of the previous one and the copy-out of the one before (two buffers per
//     queue); large slices use the largest tile the UB holds;
//   - fp16/bf16 are computed in float (no bf16 arithmetic on 910B; fp16 exp overflows early).
#include <cmath>
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct ExpCalTiling {
    uint32_t totalLength;   // elements of x
    uint32_t formerNum;     // the first formerNum cores take formerLength elements
    uint32_t formerLength;
    uint32_t tailLength;    // the other cores take tailLength (the last one is clipped to the end)
    uint32_t tileLength;    // elements per tile, a multiple of the 512-byte unit
    float mul;              // ln(base) * scale
    float add;              // ln(base) * shift
};
REGISTER_TILING_DEFAULT(ExpCalTiling);

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class ExpKernel {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline ExpKernel() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ExpCalTiling& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        uint64_t offset;
        if (idx < t.formerNum) {
            length_ = t.formerLength;
            offset = static_cast<uint64_t>(idx) * t.formerLength;
        } else {
            length_ = t.tailLength;
            offset = static_cast<uint64_t>(t.formerNum) * t.formerLength +
                     static_cast<uint64_t>(idx - t.formerNum) * t.tailLength;
        }
        if (offset >= t.totalLength) {
            length_ = 0;
            return;
        }
        if (offset + length_ > t.totalLength) {
            length_ = static_cast<uint32_t>(t.totalLength - offset);   // the last core ends the tensor
        }
        tileLength_ = t.tileLength;
        mul_ = t.mul;
        add_ = t.add;
        xGm_.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tileLength_ * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(calcBuf_, tileLength_ * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = (length_ + tileLength_ - 1) / tileLength_;
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t n = (i + 1 < tiles) ? tileLength_ : length_ - i * tileLength_;
            CopyIn(i, n);
            Compute(n);
            CopyOut(i, n);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            DataCopy(x, xGm_[static_cast<uint64_t>(i) * tileLength_], n);
        } else {   // the tensor's last tile: DataCopy would drop the bytes past the last 32-byte block
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, xGm_[static_cast<uint64_t>(i) * tileLength_], cp, pad);
        }
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        const int32_t cnt = static_cast<int32_t>(n);
        if constexpr (IS_FLOAT) {
            ExpFloat(y, x, cnt);
        } else {
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, n);
            ExpFloat(f, f, cnt);
            Cast(y, f, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void ExpFloat(LocalTensor<float>& dst, LocalTensor<float>& src, int32_t n)
    {
        Muls(dst, src, mul_, n);
        Adds(dst, dst, add_, n);
        Exp(dst, dst, n);
    }

    __aicore__ inline void CopyOut(uint32_t i, uint32_t n)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            DataCopy(yGm_[static_cast<uint64_t>(i) * tileLength_], y, n);
        } else {
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[static_cast<uint64_t>(i) * tileLength_], y, cp);
        }
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_;
    GlobalTensor<T> xGm_, yGm_;
    uint32_t length_ = 0;
    uint32_t tileLength_ = 0;
    float mul_ = 1.0f, add_ = 0.0f;
};

extern "C" __global__ __aicore__ void exp_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    ExpKernel<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint64_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();

    // Split in 512-byte units: every core's slice starts 512-byte aligned in GM.
    const uint64_t unit = 512 / bytes;
    const uint64_t units = (total + unit - 1) / unit;
    uint64_t blockDim = units < coreNum ? units : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    const uint64_t base = units / blockDim;
    const uint64_t former = units % blockDim;
    const uint64_t slice = (former > 0 ? base + 1 : base) * unit;

    // UB per tile element: two input and two output buffers of T, plus a float scratch for 16 bit.
    const uint64_t perElem = 2 * BUFFER_NUM * bytes + (bytes == 4 ? 0 : 4);
    uint64_t maxTile = (ub - 1024) / perElem / unit * unit;
    if (maxTile > 16384) {
        maxTile = 16384;
    }
    // At least four tiles per core, so copies overlap compute; never below one 512-byte unit.
    uint64_t tile = ((slice + 3) / 4 + unit - 1) / unit * unit;
    tile = tile > maxTile ? maxTile : tile;
    tile = tile < unit ? unit : tile;

    ExpCalTiling* t = context->GetTilingData<ExpCalTiling>();
    t->totalLength = static_cast<uint32_t>(total);
    t->formerNum = static_cast<uint32_t>(former);
    t->formerLength = static_cast<uint32_t>((base + 1) * unit);
    t->tailLength = static_cast<uint32_t>(base * unit);
    t->tileLength = static_cast<uint32_t>(tile);
    // Attributes in schema order: base, scale, shift.
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const float* baseAttr = attrs->GetAttrPointer<float>(0);
    const float* scale = attrs->GetAttrPointer<float>(1);
    const float* shift = attrs->GetAttrPointer<float>(2);
    const double b = baseAttr != nullptr ? *baseAttr : -1.0;
    if (b != -1.0 && !(b > 0.0)) {
        return ge::GRAPH_FAILED;   // the operator defines base -1 (e) or a positive base only
    }
    const double k = b == -1.0 ? 1.0 : std::log(b);
    t->mul = static_cast<float>(k * (scale != nullptr ? *scale : 1.0f));
    t->add = static_cast<float>(k * (shift != nullptr ? *shift : 0.0f));
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (exp).
class ExpCustom : public OpDef {
public:
    explicit ExpCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("base").AttrType(OPTIONAL).Float(-1.0);
        this->Attr("scale").AttrType(OPTIONAL).Float(1.0);
        this->Attr("shift").AttrType(OPTIONAL).Float(0.0);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ExpCustom);
}  // namespace ops
