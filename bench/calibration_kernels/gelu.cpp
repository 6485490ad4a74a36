// Gelu, y = x * Phi(x) (approximate "none": Phi(x) = (1 + erf(x / sqrt 2)) / 2) or
// y = x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))) (approximate "tanh", the same as
// 0.5 x (1 + tanh(...))): Cannpilot's calibration kernel for the cost model (issue 22).
// Written for Cannpilot from documented AscendC behaviour and its own numerical fit.
//
// Tiling as the sigmoid calibration kernel: 512-byte aligned slices per core, at least four tiles
// per core with two buffers per queue, fp16/bf16 computed in float.
//
// The exact form needs Phi to a small *relative* error in both tails (gelu of x = -5 is -7e-6, and
// the precision standard bounds small values absolutely), so it uses the complementary function:
// h(z) = erfc(z) / 2 = t exp(-z^2 + Q(t)), t = 1 / (1 + z / 2), z = |x| / sqrt 2, with Q a degree-7
// polynomial fitted by Cannpilot (docs/cost-model.md: relative error of h under
// 1.5e-5 in fp32 for z in [0, 9], below which exp underflows to 0). Then Phi = h for x < 0 and
// 1 - h for x >= 0, chosen without a compare: s = min(max(x * 1e30, 0), 1) is 1 for x > 0 and 0
// for x < 0 (fractional only where |x| < 1e-30, where h = 1/2 and the choice does not matter), and
// Phi = h + s (1 - 2h).
#include <cstring>
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct GeluCalTiling {
    uint32_t mode;          // 0: exact (erf), 1: tanh approximation
    uint32_t totalLength;   // elements of x
    uint32_t formerNum;     // the first formerNum cores take formerLength elements
    uint32_t formerLength;
    uint32_t tailLength;    // the other cores take tailLength (the last one is clipped to the end)
    uint32_t tileLength;    // elements per tile, a multiple of the 512-byte unit
};
REGISTER_TILING_DEFAULT(GeluCalTiling);

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr float INV_SQRT2 = 0.70710678118654752f;
constexpr float TANH_K1 = -1.5957691216057308f;          // -2 sqrt(2/pi)
constexpr float TANH_K3 = -1.5957691216057308f * 0.044715f;
// Q(t) = sum ERFC_Q[k] t^k, fitted so that t exp(-z^2 + Q(t)) = erfc(z) / 2 (see the header)
constexpr float ERFC_Q[8] = {-1.958670928e+00f, 9.993314867e-01f, 3.892342234e-01f, -2.410571267e-02f,
                             3.207628127e-01f, -9.699544515e-01f, 7.338912687e-01f, -1.836365137e-01f};

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class GeluKernel {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline GeluKernel() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const GeluCalTiling& t)
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
        xGm_.SetGlobalBuffer((__gm__ T*)x + offset, length_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + offset, length_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, tileLength_ * sizeof(T));
        mode_ = t.mode;
        pipe_.InitBuffer(w0Buf_, tileLength_ * sizeof(float));
        pipe_.InitBuffer(w1Buf_, tileLength_ * sizeof(float));
        pipe_.InitBuffer(w2Buf_, tileLength_ * sizeof(float));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(xfBuf_, tileLength_ * sizeof(float));
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
            GeluFloat(y, x, cnt);
        } else {
            LocalTensor<float> f = xfBuf_.Get<float>();
            LocalTensor<float> r = w2Buf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, n);
            GeluFloat(r, f, cnt);
            Cast(y, r, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    // dst may be the third scratch tile (w2), never x.
    __aicore__ inline void GeluFloat(const LocalTensor<float>& dst, const LocalTensor<float>& x, int32_t n)
    {
        LocalTensor<float> w0 = w0Buf_.Get<float>();
        LocalTensor<float> w1 = w1Buf_.Get<float>();
        LocalTensor<float> w2 = w2Buf_.Get<float>();
        if (mode_ == 1) {
            Mul(w0, x, x, n);
            Muls(w0, w0, TANH_K3, n);
            Adds(w0, w0, TANH_K1, n);
            Mul(w0, w0, x, n);             // -2 sqrt(2/pi) (x + 0.044715 x^3)
            Exp(w0, w0, n);
            Adds(w0, w0, 1.0f, n);
            Reciprocal(w0, w0, n);         // no Div: one reciprocal pass and a product, as sigmoid's
            Mul(dst, x, w0, n);            // x -> -inf: -inf * 0 = nan, as the formula gives
            return;
        }
        Abs(w0, x, n);
        Muls(w0, w0, INV_SQRT2, n);        // z
        Muls(w1, w0, 0.5f, n);
        Adds(w1, w1, 1.0f, n);
        Reciprocal(w1, w1, n);             // t
        Muls(w2, w1, ERFC_Q[7], n);
        Adds(w2, w2, ERFC_Q[6], n);
        for (int32_t k = 5; k >= 0; --k) {
            Mul(w2, w2, w1, n);
            Adds(w2, w2, ERFC_Q[k], n);
        }
        Mul(w0, w0, w0, n);
        Sub(w2, w2, w0, n);
        Exp(w2, w2, n);
        Mul(w2, w2, w1, n);                // h = erfc(z) / 2
        Muls(w0, x, 1e30f, n);
        Maxs(w0, w0, 0.0f, n);
        Mins(w0, w0, 1.0f, n);             // s: 1 for x > 0, 0 for x < 0
        Muls(w1, w2, -2.0f, n);
        Adds(w1, w1, 1.0f, n);
        Mul(w1, w1, w0, n);
        Add(w1, w1, w2, n);                // Phi = h + s (1 - 2h)
        Mul(dst, w1, x, n);
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
    TBuf<TPosition::VECCALC> w0Buf_, w1Buf_, w2Buf_, xfBuf_;
    GlobalTensor<T> xGm_, yGm_;
    uint32_t length_ = 0;
    uint32_t tileLength_ = 0;
    uint32_t mode_ = 0;
};

extern "C" __global__ __aicore__ void gelu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GeluKernel<DTYPE_X> op;
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

    // UB per tile element: two input and two output buffers of T, three float scratch tiles, plus
    // the float copy of x for 16 bit.
    const uint64_t perElem = 2 * BUFFER_NUM * bytes + 3 * 4 + (bytes == 4 ? 0 : 4);
    uint64_t maxTile = (ub - 1024) / perElem / unit * unit;
    if (maxTile > 16384) {
        maxTile = 16384;
    }
    // At least four tiles per core, so copies overlap compute; never below one 512-byte unit.
    uint64_t tile = ((slice + 3) / 4 + unit - 1) / unit * unit;
    tile = tile > maxTile ? maxTile : tile;
    tile = tile < unit ? unit : tile;

    GeluCalTiling* t = context->GetTilingData<GeluCalTiling>();
    const char* approximate = context->GetAttrs()->GetAttrPointer<char>(0);
    if (approximate != nullptr && std::strcmp(approximate, "tanh") == 0) {
        t->mode = 1;
    } else if (approximate == nullptr || std::strcmp(approximate, "none") == 0) {
        t->mode = 0;
    } else {
        return ge::GRAPH_FAILED;           // approximate is "none" or "tanh"
    }
    t->totalLength = static_cast<uint32_t>(total);
    t->formerNum = static_cast<uint32_t>(former);
    t->formerLength = static_cast<uint32_t>((base + 1) * unit);
    t->tailLength = static_cast<uint32_t>(base * unit);
    t->tileLength = static_cast<uint32_t>(tile);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (gelu).
class GeluCustom : public OpDef {
public:
    explicit GeluCustom(const char* name) : OpDef(name)
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
        this->Attr("approximate").AttrType(OPTIONAL).String("none");
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(GeluCustom);
}  // namespace ops
