// Softmax along one axis: the softmax exemplar of the Cannpilot knowledge base, written for
// Cannpilot from documented AscendC behaviour. The tensor is viewed as [outer, R, inner] with R the
// softmax axis. Last axis (inner == 1): whole rows per core, short rows merged into one tile, per
// row ReduceMax -> subtract -> Exp -> ReduceSum -> scale, with a V->S flag before each scalar read.
// Other axes (inner > 1): a column chunk per work unit, three passes over R with vector Max/Add
// accumulators (no scalar work). fp16/bf16 are computed in float.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct SoftmaxTiling {
    uint32_t mode;          // 0: softmax over the last axis (rows), 1: over an inner axis (columns)
    uint32_t units;         // rows (mode 0) or outer x column chunks (mode 1)
    uint32_t formerNum;     // the first formerNum cores take formerUnits units, the rest tailUnits
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t bufferNum;
    // mode 0
    uint32_t d;             // row length
    uint32_t dPad;          // row stride in UB (32-byte multiple), elements
    uint32_t rowsPerTile;
    // mode 1
    uint32_t r;             // length of the softmax axis
    uint32_t inner;         // product of the dims after it
    uint32_t chunk;         // columns per unit
    uint32_t chunks;        // ceil(inner / chunk)
};
REGISTER_TILING_DEFAULT(SoftmaxTiling);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelSoftmax {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline KernelSoftmax() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxTiling& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        if (idx < t.formerNum) {
            count_ = t.formerUnits;
            first_ = idx * t.formerUnits;
        } else {
            count_ = t.tailUnits;
            first_ = t.formerNum * t.formerUnits + (idx - t.formerNum) * t.tailUnits;
        }
        if (first_ >= t.units) {
            count_ = 0;
            return;
        }
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        const uint32_t tileElems = t.mode == 0 ? t.rowsPerTile * t.dPad : t.chunk;
        pipe_.InitBuffer(inQ_, t.bufferNum, tileElems * sizeof(T));
        pipe_.InitBuffer(outQ_, t.bufferNum, tileElems * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(calcBuf_, tileElems * sizeof(float));
        }
        if (t.mode == 0) {
            pipe_.InitBuffer(tmpBuf_, t.dPad * sizeof(float));
            pipe_.InitBuffer(redBuf_, 32);
        } else {
            pipe_.InitBuffer(maxBuf_, t.chunk * sizeof(float));
            pipe_.InitBuffer(sumBuf_, t.chunk * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        if (t_.mode == 0) {
            ProcessRows();
        } else {
            ProcessColumns();
        }
    }

private:
    // ---------------- mode 0: rows ----------------
    __aicore__ inline void ProcessRows()
    {
        const uint32_t k = t_.rowsPerTile;
        for (uint32_t r = 0; r < count_; r += k) {
            const uint32_t m = (count_ - r < k) ? count_ - r : k;
            const uint64_t off = static_cast<uint64_t>(first_ + r) * t_.d;
            LoadRows(off, m);
            ComputeRows(m);
            StoreRows(off, m);
        }
    }

    __aicore__ inline void LoadRows(uint64_t off, uint32_t m)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void ComputeRows(uint32_t m)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            SoftmaxRows(y, x, m);
        } else {
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, m * t_.dPad);
            SoftmaxRows(f, f, m);
            Cast(y, f, RoundMode::CAST_RINT, m * t_.dPad);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline float ScalarOf(LocalTensor<float>& red)
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
        return red.GetValue(0);
    }

    __aicore__ inline void SoftmaxRows(LocalTensor<float>& dst, LocalTensor<float>& src, uint32_t m)
    {
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        const int32_t n = static_cast<int32_t>(t_.d);
        for (uint32_t j = 0; j < m; ++j) {
            LocalTensor<float> s = src[j * t_.dPad];
            LocalTensor<float> o = dst[j * t_.dPad];
            ReduceMax(red, s, tmp, n);
            const float mx = ScalarOf(red);
            Adds(o, s, -mx, n);            // subtract the row max: exp never overflows
            Exp(o, o, n);
            ReduceSum(red, o, tmp, n);
            const float sum = ScalarOf(red);
            Muls(o, o, 1.0f / sum, n);
        }
    }

    __aicore__ inline void StoreRows(uint64_t off, uint32_t m)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[off], y, cp);
        outQ_.FreeTensor(y);
    }

    // ---------------- mode 1: columns ----------------
    __aicore__ inline void ProcessColumns()
    {
        LocalTensor<float> mx = maxBuf_.Get<float>();
        LocalTensor<float> sum = sumBuf_.Get<float>();
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t o = u / t_.chunks;
            const uint32_t c = u % t_.chunks;
            const uint32_t col = c * t_.chunk;
            const uint32_t n = (t_.inner - col < t_.chunk) ? t_.inner - col : t_.chunk;
            const uint64_t base = static_cast<uint64_t>(o) * t_.r * t_.inner + col;
            const int32_t cnt = static_cast<int32_t>(n);
            Duplicate(mx, -3.402823466e+38f, cnt);
            Duplicate(sum, 0.0f, cnt);
            for (uint32_t i = 0; i < t_.r; ++i) {          // pass 1: column max
                LoadSegment(base + static_cast<uint64_t>(i) * t_.inner, n);
                LocalTensor<T> x = inQ_.DeQue<T>();
                LocalTensor<float> f = AsFloat(x, n);
                Max(mx, mx, f, cnt);
                inQ_.FreeTensor(x);
            }
            for (uint32_t i = 0; i < t_.r; ++i) {          // pass 2: sum of exp(x - max)
                LoadSegment(base + static_cast<uint64_t>(i) * t_.inner, n);
                LocalTensor<T> x = inQ_.DeQue<T>();
                LocalTensor<float> f = AsFloat(x, n);
                Sub(f, f, mx, cnt);
                Exp(f, f, cnt);
                Add(sum, sum, f, cnt);
                inQ_.FreeTensor(x);
            }
            for (uint32_t i = 0; i < t_.r; ++i) {          // pass 3: exp(x - max) / sum
                const uint64_t off = base + static_cast<uint64_t>(i) * t_.inner;
                LoadSegment(off, n);
                LocalTensor<T> x = inQ_.DeQue<T>();
                LocalTensor<T> y = outQ_.AllocTensor<T>();
                if constexpr (IS_FLOAT) {
                    Sub(y, x, mx, cnt);
                    Exp(y, y, cnt);
                    Div(y, y, sum, cnt);
                } else {
                    LocalTensor<float> f = AsFloat(x, n);
                    Sub(f, f, mx, cnt);
                    Exp(f, f, cnt);
                    Div(f, f, sum, cnt);
                    Cast(y, f, RoundMode::CAST_RINT, n);
                }
                outQ_.EnQue(y);
                inQ_.FreeTensor(x);
                y = outQ_.DeQue<T>();
                DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
                DataCopyPad(yGm_[off], y, cp);
                outQ_.FreeTensor(y);
            }
        }
    }

    __aicore__ inline void LoadSegment(uint64_t off, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    // The float view of a loaded segment: the tile itself for float, a Cast into scratch otherwise.
    __aicore__ inline LocalTensor<float> AsFloat(LocalTensor<T>& x, uint32_t n)
    {
        if constexpr (IS_FLOAT) {
            return x;
        } else {
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, n);
            return f;
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_, tmpBuf_, redBuf_, maxBuf_, sumBuf_;
    GlobalTensor<T> xGm_, yGm_;
    SoftmaxTiling t_;
    uint32_t first_ = 0, count_ = 0;
};

extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSoftmax<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static void SplitUnits(SoftmaxTiling* t, uint64_t units, uint64_t coreNum, gert::TilingContext* context)
{
    uint64_t blockDim = units < coreNum ? units : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(shape.GetDimNum());
    const int64_t* dimAttr = context->GetAttrs()->GetAttrPointer<int64_t>(0);
    int64_t dim = dimAttr != nullptr ? *dimAttr : -1;
    if (dim < 0) {
        dim += nd;
    }
    if (nd == 0 || dim < 0 || dim >= nd) {
        return ge::GRAPH_FAILED;
    }
    uint64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) {
        outer *= shape.GetDim(i);
    }
    for (int64_t i = dim + 1; i < nd; ++i) {
        inner *= shape.GetDim(i);
    }
    const uint64_t r = shape.GetDim(dim);
    const uint64_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const uint64_t scratch = bytes == 4 ? 0 : 4;   // float copy of a 16-bit tile
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();
    const uint64_t budget = ub - 1024;

    SoftmaxTiling* t = context->GetTilingData<SoftmaxTiling>();
    if (inner == 1) {
        const uint64_t dPad = (r * bytes + 31) / 32 * 32 / bytes;
        const uint64_t fixed = dPad * 4 + 32;              // reduce scratch + result block
        uint64_t bufferNum = 2;
        uint64_t perRow = dPad * (2 * bufferNum * bytes + scratch);
        if (fixed + perRow > budget) {
            bufferNum = 1;
            perRow = dPad * (2 * bytes + scratch);
            if (fixed + perRow > budget) {
                return ge::GRAPH_FAILED;                   // needs the split-D (online softmax) variant
            }
        }
        const uint64_t rows = outer;
        SplitUnits(t, rows, coreNum, context);
        uint64_t k = (budget - fixed) / perRow;
        const uint64_t half = (t->formerUnits + 1) / 2;
        k = k > half ? half : k;
        k = k > 4095 ? 4095 : k;
        k = k == 0 ? 1 : k;
        t->mode = 0;
        t->bufferNum = static_cast<uint32_t>(bufferNum);
        t->d = static_cast<uint32_t>(r);
        t->dPad = static_cast<uint32_t>(dPad);
        t->rowsPerTile = static_cast<uint32_t>(k);
    } else {
        // in + out (double buffered) + float scratch + max and sum accumulators, per column.
        const uint64_t perCol = 2 * 2 * bytes + scratch + 8;
        uint64_t chunk = budget / perCol / 64 * 64;
        if (chunk > 8192) {
            chunk = 8192;
        }
        if (chunk > inner) {
            chunk = (inner + 63) / 64 * 64;
        }
        if (outer < coreNum) {   // few outer slices: cut the columns finer so every core gets work
            const uint64_t spread = ((outer * inner + coreNum - 1) / coreNum + 63) / 64 * 64;
            chunk = spread < chunk ? spread : chunk;
        }
        const uint64_t chunks = (inner + chunk - 1) / chunk;
        SplitUnits(t, outer * chunks, coreNum, context);
        t->mode = 1;
        t->bufferNum = 2;
        t->r = static_cast<uint32_t>(r);
        t->inner = static_cast<uint32_t>(inner);
        t->chunk = static_cast<uint32_t>(chunk);
        t->chunks = static_cast<uint32_t>(chunks);
    }
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (softmax).
class SoftmaxCustom : public OpDef {
public:
    explicit SoftmaxCustom(const char* name) : OpDef(name)
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
        this->Attr("dim").AttrType(OPTIONAL).Int(-1);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(SoftmaxCustom);
}  // namespace ops
