// ReduceSum along one axis: the reduction exemplar of the Cannpilot knowledge base, written for
// Cannpilot from documented AscendC behaviour. The tensor is viewed as [outer, R, inner] with R the
// reduced axis; the output is [outer, inner].
// Row mode (inner == 1): short rows are merged into one tile (one multi-block DataCopyPad) and
// reduced with ReduceSum one row at a time; long rows are reduced chunk by chunk with the partial
// sums added on the scalar unit (after a V->S flag). Column mode (inner > 1): an accumulator of
// `chunk` floats per work unit, R rows added into it with vector Add, several short rows per copy.
// Sums are kept in float for fp16/bf16 and cast back with CAST_RINT.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct ReduceSumTiling {
    uint32_t mode;          // 0: reduce the last axis (rows), 1: reduce an inner axis (columns)
    uint32_t units;         // rows (mode 0) or outer x column chunks (mode 1)
    uint32_t formerNum;     // the first formerNum cores take formerUnits units, the rest tailUnits
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t bufferNum;
    uint32_t r;             // length of the reduced axis
    uint32_t inner;         // product of the dims after it (1 in mode 0)
    uint32_t chunk;         // elements per copy: row chunk (mode 0) or column chunk (mode 1)
    uint32_t chunks;        // row chunks (mode 0) or column chunks (mode 1)
    uint32_t stride;        // UB stride of one merged row, elements (32-byte multiple)
    uint32_t rowsPerTile;   // rows merged into one copy
};
REGISTER_TILING_DEFAULT(ReduceSumTiling);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelReduceSum {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline KernelReduceSum() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ReduceSumTiling& t)
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
        const uint32_t tileElems = t.rowsPerTile * t.stride;
        const uint32_t outElems = t.mode == 0 ? RoundUp(t.rowsPerTile, 64) : RoundUp(t.chunk, 64);
        pipe_.InitBuffer(inQ_, t.bufferNum, tileElems * sizeof(T));
        pipe_.InitBuffer(outQ_, 1, outElems * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(calcBuf_, tileElems * sizeof(float));
        }
        pipe_.InitBuffer(accBuf_, outElems * sizeof(float));
        if (t.mode == 0) {
            pipe_.InitBuffer(tmpBuf_, t.stride * sizeof(float));
            pipe_.InitBuffer(redBuf_, 32);
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
    static __aicore__ inline uint32_t RoundUp(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }

    __aicore__ inline void Load(uint64_t off, uint32_t rows, uint32_t len)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(rows), static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    // The float view of a loaded tile: the tile itself for float, a Cast into scratch otherwise.
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

    // Cast the float results to T and write them to y[off, off + n).
    __aicore__ inline void Store(LocalTensor<float>& acc, uint64_t off, uint32_t n)
    {
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            Muls(y, acc, 1.0f, static_cast<int32_t>(n));
        } else {
            Cast(y, acc, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        y = outQ_.DeQue<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[off], y, cp);
        outQ_.FreeTensor(y);
    }

    __aicore__ inline float ReduceToScalar(LocalTensor<float>& src, uint32_t n)
    {
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        ReduceSum(red, src, tmp, static_cast<int32_t>(n));
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);          // the scalar unit must wait for the vector result
        WaitFlag<HardEvent::V_S>(e);
        return red.GetValue(0);
    }

    // ---------------- mode 0: one sum per row ----------------
    __aicore__ inline void ProcessRows()
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        const uint32_t k = t_.rowsPerTile;
        for (uint32_t r = 0; r < count_; r += k) {
            const uint32_t m = (count_ - r < k) ? count_ - r : k;
            const uint64_t row0 = first_ + r;
            if (t_.chunks == 1) {          // short rows: m whole rows in one copy
                Load(row0 * t_.r, m, t_.r);
                LocalTensor<T> x = inQ_.DeQue<T>();
                LocalTensor<float> f = AsFloat(x, m * t_.stride);
                for (uint32_t j = 0; j < m; ++j) {
                    LocalTensor<float> row = f[j * t_.stride];
                    acc.SetValue(j, ReduceToScalar(row, t_.r));
                }
                inQ_.FreeTensor(x);
            } else {                       // one long row, chunk by chunk
                float sum = 0.0f;
                for (uint32_t c = 0; c < t_.chunks; ++c) {
                    const uint32_t n = (t_.r - c * t_.chunk < t_.chunk) ? t_.r - c * t_.chunk : t_.chunk;
                    Load(row0 * t_.r + static_cast<uint64_t>(c) * t_.chunk, 1, n);
                    LocalTensor<T> x = inQ_.DeQue<T>();
                    LocalTensor<float> f = AsFloat(x, n);
                    sum += ReduceToScalar(f, n);
                    inQ_.FreeTensor(x);
                }
                acc.SetValue(0, sum);
            }
            // SetValue ran on the scalar unit: order S -> V before the vector unit reads acc.
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
            SetFlag<HardEvent::S_V>(e);
            WaitFlag<HardEvent::S_V>(e);
            Store(acc, row0, m);
        }
    }

    // ---------------- mode 1: one sum per column ----------------
    __aicore__ inline void ProcessColumns()
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        const uint32_t k = t_.rowsPerTile;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t o = u / t_.chunks;
            const uint32_t col = (u % t_.chunks) * t_.chunk;
            const uint32_t n = (t_.inner - col < t_.chunk) ? t_.inner - col : t_.chunk;
            const uint64_t base = static_cast<uint64_t>(o) * t_.r * t_.inner + col;
            const int32_t cnt = static_cast<int32_t>(n);
            Duplicate(acc, 0.0f, cnt);
            for (uint32_t i = 0; i < t_.r; i += k) {
                const uint32_t m = (t_.r - i < k) ? t_.r - i : k;
                if (k > 1) {   // m consecutive rows of the [R, inner] slice, each padded to 32 B
                    Load(base + static_cast<uint64_t>(i) * t_.inner, m, t_.inner);
                } else {
                    Load(base + static_cast<uint64_t>(i) * t_.inner, 1, n);
                }
                LocalTensor<T> x = inQ_.DeQue<T>();
                LocalTensor<float> f = AsFloat(x, m * t_.stride);
                for (uint32_t j = 0; j < m; ++j) {
                    LocalTensor<float> row = f[j * t_.stride];
                    Add(acc, acc, row, cnt);
                }
                inQ_.FreeTensor(x);
            }
            Store(acc, static_cast<uint64_t>(o) * t_.inner + col, n);
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_, accBuf_, tmpBuf_, redBuf_;
    GlobalTensor<T> xGm_, yGm_;
    ReduceSumTiling t_;
    uint32_t first_ = 0, count_ = 0;
};

extern "C" __global__ __aicore__ void reduce_sum_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelReduceSum<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static void SplitUnits(ReduceSumTiling* t, uint64_t units, uint64_t coreNum, gert::TilingContext* context)
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
    const uint64_t budget = ub - 4096;             // margin for the small result buffers
    // Elements of one input tile: 2 input buffers of T, the float scratch, and (mode 0) the
    // reduce tmp of the same length.
    const uint64_t perElem = 2 * bytes + scratch + 4;
    uint64_t tile = budget / perElem / 64 * 64;
    tile = tile > 16384 ? 16384 : tile;

    ReduceSumTiling* t = context->GetTilingData<ReduceSumTiling>();
    t->bufferNum = 2;
    t->r = static_cast<uint32_t>(r);
    if (inner == 1) {
        const uint64_t rPad = (r * bytes + 31) / 32 * 32 / bytes;
        t->mode = 0;
        t->inner = 1;
        SplitUnits(t, outer, coreNum, context);
        if (rPad <= tile) {   // whole rows, several per copy
            uint64_t k = tile / rPad;
            const uint64_t half = (t->formerUnits + 1) / 2;
            k = k > half ? half : k;
            k = k > 4095 ? 4095 : k;
            k = k == 0 ? 1 : k;
            t->chunk = static_cast<uint32_t>(r);
            t->chunks = 1;
            t->stride = static_cast<uint32_t>(rPad);
            t->rowsPerTile = static_cast<uint32_t>(k);
        } else {              // long rows: one row per tile, in chunks of `tile`
            t->chunk = static_cast<uint32_t>(tile);
            t->chunks = static_cast<uint32_t>((r + tile - 1) / tile);
            t->stride = static_cast<uint32_t>(tile);
            t->rowsPerTile = 1;
        }
    } else {
        uint64_t chunk = tile / 2 / 64 * 64;       // the accumulator and output take the rest
        const uint64_t innerPad = (inner * bytes + 31) / 32 * 32 / bytes;
        if (chunk >= innerPad) {
            chunk = inner;
        }
        if (outer < coreNum && inner > 64) {       // few outer slices: spread the columns
            const uint64_t spread = ((outer * inner + coreNum - 1) / coreNum + 63) / 64 * 64;
            chunk = spread < chunk ? spread : chunk;
        }
        const uint64_t chunks = (inner + chunk - 1) / chunk;
        t->mode = 1;
        t->inner = static_cast<uint32_t>(inner);
        t->chunk = static_cast<uint32_t>(chunk);
        t->chunks = static_cast<uint32_t>(chunks);
        SplitUnits(t, outer * chunks, coreNum, context);
        if (chunks == 1) {    // whole rows of the slice fit: merge several per copy
            uint64_t k = (tile / 2) / innerPad;
            k = k > r ? r : k;
            k = k > 4095 ? 4095 : k;
            k = k == 0 ? 1 : k;
            t->stride = static_cast<uint32_t>(innerPad);
            t->rowsPerTile = static_cast<uint32_t>(k);
        } else {
            t->stride = static_cast<uint32_t>((chunk * bytes + 31) / 32 * 32 / bytes);
            t->rowsPerTile = 1;
        }
    }
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (reduce_sum).
class ReduceSumCustom : public OpDef {
public:
    explicit ReduceSumCustom(const char* name) : OpDef(name)
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
        this->Attr("keepdim").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ReduceSumCustom);
}  // namespace ops
