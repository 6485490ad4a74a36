// BiasGelu, y = gelu(x + bias) with the erf or the tanh form: the fusion exemplar of the Cannpilot
// knowledge base, written for Cannpilot from documented AscendC behaviour. Shows: two operators
// fused in one pass over UB (no round trip through GM), whole rows per core, short rows merged into
// one tile with a multi-block DataCopyPad, the [D] bias replicated once per core into a float TBuf
// laid out like the tile (explicit MTE2->V flag), and functions the basic API lacks (erfc, tanh)
// composed from Exp, Reciprocal, Mul and Adds, in float. Rows too long for one tile (LLM FFN
// widths such as 11008) are cut into column chunks, the bias chunk then arriving through its own
// VECIN queue next to x.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct BiasGeluTiling {
    uint32_t rows;          // product of all dims but the last
    uint32_t d;             // last-axis length (= bias length)
    uint32_t dPad;          // row stride in UB, elements (32-byte multiple)
    uint32_t formerNum;     // the first formerNum cores take formerRows rows, the rest tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t rowsPerTile;
    uint32_t bufferNum;
    uint32_t approximate;   // 0: erf form, 1: tanh form
    uint32_t colChunk;      // columns per tile (= d when whole rows fit)
    uint32_t colChunks;     // ceil(d / colChunk); > 1 means one row chunk per tile
};
REGISTER_TILING_DEFAULT(BiasGeluTiling);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelBiasGelu {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline KernelBiasGelu() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR bias, GM_ADDR y, const BiasGeluTiling& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        uint32_t rowStart;
        if (idx < t.formerNum) {
            rows_ = t.formerRows;
            rowStart = idx * t.formerRows;
        } else {
            rows_ = t.tailRows;
            rowStart = t.formerNum * t.formerRows + (idx - t.formerNum) * t.tailRows;
        }
        if (rows_ == 0 || rowStart >= t.rows) {
            rows_ = 0;
            return;
        }
        const uint64_t first = static_cast<uint64_t>(rowStart) * t.d;
        xGm_.SetGlobalBuffer((__gm__ T*)x + first, static_cast<uint64_t>(rows_) * t.d);
        yGm_.SetGlobalBuffer((__gm__ T*)y + first, static_cast<uint64_t>(rows_) * t.d);
        biasGm_.SetGlobalBuffer((__gm__ T*)bias, t.d);
        const uint32_t tileElems = t.colChunks == 1 ? t.rowsPerTile * t.dPad : t.colChunk;
        pipe_.InitBuffer(inQ_, t.bufferNum, tileElems * sizeof(T));
        pipe_.InitBuffer(outQ_, t.bufferNum, tileElems * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(vBuf_, tileElems * sizeof(float));
        }
        pipe_.InitBuffer(aBuf_, tileElems * sizeof(float));
        pipe_.InitBuffer(bBuf_, tileElems * sizeof(float));
        pipe_.InitBuffer(pBuf_, tileElems * sizeof(float));
        pipe_.InitBuffer(biasBuf_, tileElems * sizeof(float));
        if (t.colChunks == 1) {
            LoadBias();
        } else {
            pipe_.InitBuffer(biasQ_, t.bufferNum, tileElems * sizeof(T));
        }
    }

    __aicore__ inline void Process()
    {
        if (t_.colChunks > 1) {
            ProcessChunks();
            return;
        }
        const uint32_t k = t_.rowsPerTile;
        for (uint32_t r = 0; r < rows_; r += k) {
            const uint32_t m = (rows_ - r < k) ? rows_ - r : k;
            CopyIn(r, m);
            Compute(m);
            CopyOut(r, m);
        }
    }

private:
    // rowsPerTile copies of the bias, one per padded row, so one Add covers a merged tile.
    __aicore__ inline void LoadBias()
    {
        LocalTensor<float> biasF = biasBuf_.Get<float>();
        LocalTensor<float> stage = aBuf_.Get<float>();
        LocalTensor<T> raw = IS_FLOAT ? biasF.template ReinterpretCast<T>() : stage.template ReinterpretCast<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        for (uint32_t j = 0; j < t_.rowsPerTile; ++j) {
            LocalTensor<T> row = raw[j * t_.dPad];
            DataCopyPad(row, biasGm_, cp, pad);
        }
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(e);   // a TBuf filled by MTE2 and read by V: order them
        WaitFlag<HardEvent::MTE2_V>(e);
        if constexpr (!IS_FLOAT) {
            Cast(biasF, raw, RoundMode::CAST_NONE, t_.rowsPerTile * t_.dPad);
        }
    }

    __aicore__ inline void CopyIn(uint32_t r, uint32_t m)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[static_cast<uint64_t>(r) * t_.d], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t m)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        LocalTensor<float> biasF = biasBuf_.Get<float>();
        const uint32_t n = m * t_.dPad;   // padding lanes are computed too and never stored
        const int32_t cnt = static_cast<int32_t>(n);
        if constexpr (IS_FLOAT) {
            Add(x, x, biasF, cnt);
            Gelu(y, x, cnt);
        } else {
            LocalTensor<float> v = vBuf_.Get<float>();
            Cast(v, x, RoundMode::CAST_NONE, n);
            Add(v, v, biasF, cnt);
            Gelu(v, v, cnt);
            Cast(y, v, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    // Long rows: tile = one chunk of one row; the bias chunk comes through its own queue.
    __aicore__ inline void ProcessChunks()
    {
        for (uint32_t r = 0; r < rows_; ++r) {
            for (uint32_t c = 0; c < t_.colChunks; ++c) {
                const uint32_t col = c * t_.colChunk;
                const uint32_t n = (t_.d - col < t_.colChunk) ? t_.d - col : t_.colChunk;
                const uint64_t off = static_cast<uint64_t>(r) * t_.d + col;
                DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
                DataCopyPadExtParams<T> pad{false, 0, 0, 0};
                LocalTensor<T> x = inQ_.AllocTensor<T>();
                DataCopyPad(x, xGm_[off], cp, pad);
                inQ_.EnQue(x);
                LocalTensor<T> bias = biasQ_.AllocTensor<T>();
                DataCopyPad(bias, biasGm_[col], cp, pad);
                biasQ_.EnQue(bias);

                x = inQ_.DeQue<T>();
                bias = biasQ_.DeQue<T>();
                LocalTensor<T> y = outQ_.AllocTensor<T>();
                const int32_t cnt = static_cast<int32_t>(n);
                if constexpr (IS_FLOAT) {
                    Add(x, x, bias, cnt);
                    Gelu(y, x, cnt);
                } else {
                    LocalTensor<float> v = vBuf_.Get<float>();
                    LocalTensor<float> biasF = biasBuf_.Get<float>();
                    Cast(v, x, RoundMode::CAST_NONE, n);
                    Cast(biasF, bias, RoundMode::CAST_NONE, n);
                    Add(v, v, biasF, cnt);
                    Gelu(v, v, cnt);
                    Cast(y, v, RoundMode::CAST_RINT, n);
                }
                outQ_.EnQue(y);
                inQ_.FreeTensor(x);
                biasQ_.FreeTensor(bias);

                y = outQ_.DeQue<T>();
                DataCopyPad(yGm_[off], y, cp);
                outQ_.FreeTensor(y);
            }
        }
    }

    __aicore__ inline void Gelu(LocalTensor<float>& dst, LocalTensor<float>& v, int32_t n)
    {
        LocalTensor<float> a = aBuf_.Get<float>();
        LocalTensor<float> b = bBuf_.Get<float>();
        LocalTensor<float> p = pBuf_.Get<float>();
        if (t_.approximate == 1) {
            // tanh form: 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)), u = sqrt(2/pi) (v + 0.044715 v^3)
            Mul(a, v, v, n);
            Mul(a, a, v, n);
            Muls(a, a, 0.044715f, n);
            Add(a, a, v, n);
            Muls(a, a, -1.5957691216057308f, n);   // -2 sqrt(2/pi)
            Exp(a, a, n);
            Adds(a, a, 1.0f, n);
            Div(dst, v, a, n);
            return;
        }
        // erf form: v * Phi(v), Phi(v) = 0.5 + sign(v) (0.5 - q), q = 0.5 erfc(|v| / sqrt(2)).
        // erfc(z) = t exp(-z^2 + poly(t)), t = 1 / (1 + z / 2): a Chebyshev fit with relative
        // error below 1.2e-7 for every z >= 0, so tiny tails keep their precision.
        Abs(a, v, n);
        Muls(a, a, 0.7071067811865476f, n);         // z
        Muls(b, a, 0.5f, n);
        Adds(b, b, 1.0f, n);
        Reciprocal(b, b, n);                        // t
        const float c[9] = {-0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f,
                            0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
        Muls(p, b, 0.17087277f, n);
        for (int32_t i = 0; i < 9; ++i) {           // Horner: p = (p + c[i]) * t, last without * t
            Adds(p, p, c[i], n);
            if (i < 8) {
                Mul(p, p, b, n);
            }
        }
        Mul(a, a, a, n);                            // z^2
        Sub(p, p, a, n);
        Exp(p, p, n);
        Mul(p, p, b, n);                            // erfc(z)
        Muls(p, p, -0.5f, n);
        Adds(p, p, 0.5f, n);                        // 0.5 - q
        Mins(a, v, 1.0f, n);                        // sign(v) from the clamped value, finite for +-inf
        Maxs(a, a, -1.0f, n);
        Abs(b, a, n);
        Adds(b, b, 1e-30f, n);
        Div(a, a, b, n);
        Mul(p, p, a, n);
        Adds(p, p, 0.5f, n);                        // Phi(v)
        Mul(dst, v, p, n);
    }

    __aicore__ inline void CopyOut(uint32_t r, uint32_t m)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[static_cast<uint64_t>(r) * t_.d], y, cp);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_, biasQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> vBuf_, aBuf_, bBuf_, pBuf_, biasBuf_;
    GlobalTensor<T> xGm_, yGm_, biasGm_;
    BiasGeluTiling t_;
    uint32_t rows_ = 0;
};

extern "C" __global__ __aicore__ void bias_gelu_custom(GM_ADDR x, GM_ADDR bias, GM_ADDR y, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelBiasGelu<DTYPE_X> op;
    op.Init(x, bias, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const uint64_t total = shape.GetShapeSize();
    const uint64_t d = shape.GetDimNum() == 0 ? 1 : shape.GetDim(shape.GetDimNum() - 1);
    const uint64_t rows = d == 0 ? 0 : total / d;
    const uint64_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const char* approx = context->GetAttrs()->GetAttrPointer<char>(0);
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();

    const uint64_t dPad = (d * bytes + 31) / 32 * 32 / bytes;
    const uint64_t budget = ub - 1024;
    // Per tile element: in/out queues of T, float copy (16-bit only), three float temporaries, bias.
    const uint64_t floatCopy = bytes == 4 ? 0 : 4;
    uint64_t bufferNum = 2;
    uint64_t perElem = 2 * bufferNum * bytes + floatCopy + 12 + 4;
    uint64_t blockDim = rows < coreNum ? rows : coreNum;
    blockDim = blockDim == 0 ? 1 : blockDim;
    const uint64_t base = rows / blockDim;
    const uint64_t former = rows % blockDim;
    uint64_t k = 1;
    uint64_t colChunk = d;
    uint64_t colChunks = 1;
    if (dPad * perElem <= budget) {     // whole rows, k of them per tile
        k = budget / (dPad * perElem);
        const uint64_t half = (base + 2) / 2;
        k = k > half ? half : k;
        k = k > 4095 ? 4095 : k;
        k = k == 0 ? 1 : k;
    } else {                            // long rows: column chunks, the bias chunk in its own queue
        perElem += bufferNum * bytes;
        colChunk = budget / perElem / 64 * 64;
        colChunks = (d + colChunk - 1) / colChunk;
    }

    BiasGeluTiling* t = context->GetTilingData<BiasGeluTiling>();
    t->rows = static_cast<uint32_t>(rows);
    t->d = static_cast<uint32_t>(d);
    t->dPad = static_cast<uint32_t>(dPad);
    t->formerNum = static_cast<uint32_t>(former);
    t->formerRows = static_cast<uint32_t>(base + 1);
    t->tailRows = static_cast<uint32_t>(base);
    t->rowsPerTile = static_cast<uint32_t>(k);
    t->bufferNum = static_cast<uint32_t>(bufferNum);
    t->approximate = (approx != nullptr && approx[0] == 't') ? 1 : 0;
    t->colChunk = static_cast<uint32_t>(colChunk);
    t->colChunks = static_cast<uint32_t>(colChunks);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (bias_gelu).
class BiasGeluCustom : public OpDef {
public:
    explicit BiasGeluCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("bias")
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
OP_ADD(BiasGeluCustom);
}  // namespace ops
