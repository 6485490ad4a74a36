// Softmax along one axis: Cannpilot's calibration kernel for the cost model (issue 4), written for
// Cannpilot from documented AscendC behaviour. The tensor is viewed as [outer, R, inner], R the
// softmax axis.
//
// Last axis (inner == 1), mode 0: whole rows per core, short rows merged into one copy, per row
// ReduceMax -> subtract -> Exp -> ReduceSum -> scale (the knowledge base's exemplar, unchanged).
//
// Other axes (inner > 1), mode 1: a work unit is one outer slice x a chunk of W columns. Its rows
// come in as blocks of rb rows x W columns, each block ONE strided DataCopyPad (rows of W*sizeof(T)
// bytes, inner*sizeof(T) apart in GM; a single contiguous run when W == inner). Reductions across
// rows are vector ops over row vectors: a halving tree of Max (Add) over the block, then one Max
// (Add) into the running column max (sum). Subtracting the max and scaling by 1/sum are binary ops
// in mask/repeat form, one instruction per 64 columns for up to 255 rows (src1 repeat stride 0
// re-reads the same row vector). When all R rows of a unit fit in the UB (resident), the block is
// read once and written once; otherwise three passes stream it (max, sum, output).
//
// Last axis of length two (mode 2): softmax of a pair is y[i] = 1 / (1 + exp(x[partner] - x[i])).
// Rows of 4-8 bytes would be one tiny burst each, so the core's slice is read as one contiguous
// run and twice more shifted by one element (GM offset +1, and a left padding of one element):
// x[i+1] and x[i-1] land in the lane of x[i]. A bit-masked Sub takes the partner from x[i+1] on
// even lanes and from x[i-1] on odd lanes; the rest is whole-tile Exp, Adds, Reciprocal.
// fp16/bf16 are computed in float.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct SoftmaxCalTiling {
    uint32_t mode;          // 0: last axis (rows), 1: an inner axis (columns), 2: last axis of length 2
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
    uint32_t chunk;         // columns per unit (W), a multiple of 32 bytes
    uint32_t chunks;        // ceil(inner / chunk)
    uint32_t rowBlock;      // rows per block (rb); rb >= r means resident
};
REGISTER_TILING_DEFAULT(SoftmaxCalTiling);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class SoftmaxKernel {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline SoftmaxKernel() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxCalTiling& t)
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
        if (first_ + count_ > t.units) {
            count_ = t.units - first_;   // mode 2 splits in 512-byte units: the last core ends the tensor
        }
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        if (t.mode == 2) {
            tileLen_ = 2 * t.rowsPerTile;                          // elements, a multiple of 256
            pipe_.InitBuffer(inQ_, 2, 3 * tileLen_ * sizeof(T));  // x, x shifted left, x shifted right
            pipe_.InitBuffer(outQ_, 2, tileLen_ * sizeof(T));
            if constexpr (!IS_FLOAT) {
                pipe_.InitBuffer(calcBuf_, 3 * tileLen_ * sizeof(float));
            }
            pipe_.InitBuffer(tmpBuf_, tileLen_ * sizeof(float));  // the +inf test
        } else if (t.mode == 0) {
            const uint32_t tileElems = t.rowsPerTile * t.dPad;
            pipe_.InitBuffer(inQ_, t.bufferNum, tileElems * sizeof(T));
            pipe_.InitBuffer(outQ_, t.bufferNum, tileElems * sizeof(T));
            if constexpr (!IS_FLOAT) {
                pipe_.InitBuffer(calcBuf_, tileElems * sizeof(float));
            }
            pipe_.InitBuffer(tmpBuf_, t.dPad * sizeof(float));
            pipe_.InitBuffer(redBuf_, 32);
        } else {
            const uint32_t rb = t.rowBlock < t.r ? t.rowBlock : t.r;
            const uint32_t blockElems = rb * t.chunk;
            pipe_.InitBuffer(inQ_, t.bufferNum, blockElems * sizeof(T));
            pipe_.InitBuffer(outQ_, t.bufferNum, blockElems * sizeof(T));
            if constexpr (!IS_FLOAT) {
                pipe_.InitBuffer(calcBuf_, blockElems * sizeof(float));
            }
            pipe_.InitBuffer(redBuf_, ((rb + 1) / 2) * t.chunk * sizeof(float));   // tree scratch
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
        } else if (t_.mode == 1) {
            ProcessColumns();
        } else {
            ProcessPairs();
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

    // ---------------- mode 2: rows of two ----------------
    __aicore__ inline void ProcessPairs()
    {
        const uint64_t start = static_cast<uint64_t>(first_) * 2;
        const uint32_t total = count_ * 2;
        for (uint32_t o = 0; o < total; o += tileLen_) {
            const uint32_t n = (total - o < tileLen_) ? total - o : tileLen_;
            LoadPairs(start + o, n);
            ComputePairs(n);
            StorePairs(start + o, n);
        }
    }

    __aicore__ inline void LoadPairs(uint64_t off, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams all{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyExtParams allButOne{1, static_cast<uint32_t>((n - 1) * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> none{false, 0, 0, 0};
        DataCopyPadExtParams<T> shiftRight{true, 1, 0, 0};       // one leading zero element
        DataCopyPad(x, xGm_[off], all, none);                     // lane i: x[i]
        DataCopyPad(x[tileLen_], xGm_[off + 1], allButOne, none); // lane i: x[i+1]
        DataCopyPad(x[2 * tileLen_], xGm_[off], allButOne, shiftRight);   // lane i: x[i-1]
        inQ_.EnQue(x);
    }

    __aicore__ inline void ComputePairs(uint32_t n)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        LocalTensor<float> f;
        if constexpr (IS_FLOAT) {
            f = x;
        } else {
            f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, 3 * tileLen_);
        }
        LocalTensor<float> cur = f;
        LocalTensor<float> next = f[tileLen_];
        LocalTensor<float> prev = f[2 * tileLen_];
        const int32_t cnt = static_cast<int32_t>(n);
        const int64_t reps = (n + 63) / 64;
        // A pair holding +inf is nan in both places (x - max = inf - inf): +inf -> nan in each
        // lane array (a -inf floored to a finite value tests 0, so it stays -inf).
        LocalTensor<float> g = tmpBuf_.Get<float>();
        for (uint32_t k = 0; k < 3; ++k) {
            LocalTensor<float> s = f[k * tileLen_];
            Maxs(g, s, -3.0e38f, cnt);
            Sub(g, g, g, cnt);                            // 0, or nan where s is +inf
            Add(s, s, g, cnt);
        }
        BinaryRepeatParams dense;
        Sub(next, next, cur, EVEN_LANES, reps, dense);    // even lanes: partner x[i+1] minus x[i]
        Sub(next, prev, cur, ODD_LANES, reps, dense);     // odd lanes: partner x[i-1] minus x[i]
        Exp(next, next, cnt);                             // inf for a dominant partner gives y = 0
        Adds(next, next, 1.0f, cnt);
        if constexpr (IS_FLOAT) {
            Reciprocal(y, next, cnt);
        } else {
            Reciprocal(next, next, cnt);
            Cast(y, next, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void StorePairs(uint64_t off, uint32_t n)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams all{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[off], y, all);
        outQ_.FreeTensor(y);
    }

    // ---------------- mode 1: columns ----------------
    __aicore__ inline void ProcessColumns()
    {
        LocalTensor<float> mx = maxBuf_.Get<float>();
        LocalTensor<float> sum = sumBuf_.Get<float>();
        const uint32_t rb = t_.rowBlock < t_.r ? t_.rowBlock : t_.r;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t o = u / t_.chunks;
            const uint32_t col = (u % t_.chunks) * t_.chunk;
            n_ = (t_.inner - col < t_.chunk) ? t_.inner - col : t_.chunk;
            wPad_ = (n_ * sizeof(T) + 31) / 32 * 32 / sizeof(T);
            const uint64_t base = static_cast<uint64_t>(o) * t_.r * t_.inner + col;
            Duplicate(mx, -3.402823466e+38f, static_cast<int32_t>(wPad_));
            Duplicate(sum, 0.0f, static_cast<int32_t>(wPad_));
            if (rb >= t_.r) {
                ResidentUnit(base, mx, sum);
            } else {
                StreamedUnit(base, rb, mx, sum);
            }
        }
    }

    // All R rows in the UB: one read, one write.
    __aicore__ inline void ResidentUnit(uint64_t base, LocalTensor<float>& mx, LocalTensor<float>& sum)
    {
        const uint32_t m = t_.r;
        LoadBlock(base, m);
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<float> f = AsFloat(x, m);
        TreeReduce<true>(mx, f, m);
        RowsWithVector<true>(f, f, mx, m);
        Exp(f, f, static_cast<int32_t>(m * wPad_));
        TreeReduce<false>(sum, f, m);
        Reciprocal(sum, sum, static_cast<int32_t>(wPad_));
        WriteBlock(base, x, f, sum, m);
    }

    // R too long for the UB: pass 1 column max, pass 2 column sum of exp, pass 3 output.
    __aicore__ inline void StreamedUnit(uint64_t base, uint32_t rb, LocalTensor<float>& mx, LocalTensor<float>& sum)
    {
        for (uint32_t i = 0; i < t_.r; i += rb) {
            const uint32_t m = (t_.r - i < rb) ? t_.r - i : rb;
            LoadBlock(base + static_cast<uint64_t>(i) * t_.inner, m);
            LocalTensor<T> x = inQ_.DeQue<T>();
            LocalTensor<float> f = AsFloat(x, m);
            TreeReduce<true>(mx, f, m);
            inQ_.FreeTensor(x);
        }
        for (uint32_t i = 0; i < t_.r; i += rb) {
            const uint32_t m = (t_.r - i < rb) ? t_.r - i : rb;
            LoadBlock(base + static_cast<uint64_t>(i) * t_.inner, m);
            LocalTensor<T> x = inQ_.DeQue<T>();
            LocalTensor<float> f = AsFloat(x, m);
            RowsWithVector<true>(f, f, mx, m);
            Exp(f, f, static_cast<int32_t>(m * wPad_));
            TreeReduce<false>(sum, f, m);
            inQ_.FreeTensor(x);
        }
        Reciprocal(sum, sum, static_cast<int32_t>(wPad_));
        for (uint32_t i = 0; i < t_.r; i += rb) {
            const uint32_t m = (t_.r - i < rb) ? t_.r - i : rb;
            const uint64_t off = base + static_cast<uint64_t>(i) * t_.inner;
            LoadBlock(off, m);
            LocalTensor<T> x = inQ_.DeQue<T>();
            LocalTensor<float> f = AsFloat(x, m);
            RowsWithVector<true>(f, f, mx, m);
            Exp(f, f, static_cast<int32_t>(m * wPad_));
            WriteBlock(off, x, f, sum, m);
        }
    }

    // m rows of n_ columns, GM rows inner elements apart, UB rows wPad_ elements apart.
    __aicore__ inline void LoadBlock(uint64_t off, uint32_t m)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(n_ * sizeof(T)),
                             static_cast<uint32_t>((t_.inner - n_) * sizeof(T)), 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    // y = f * (1 / sum) row by row, then the block goes out with the same strides; frees x.
    __aicore__ inline void WriteBlock(uint64_t off, LocalTensor<T>& x, LocalTensor<float>& f, LocalTensor<float>& rec,
                                      uint32_t m)
    {
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            RowsWithVector<false>(y, f, rec, m);
        } else {
            RowsWithVector<false>(f, f, rec, m);
            Cast(y, f, RoundMode::CAST_RINT, m * wPad_);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
        y = outQ_.DeQue<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(n_ * sizeof(T)), 0,
                             static_cast<uint32_t>((t_.inner - n_) * sizeof(T)), 0};
        DataCopyPad(yGm_[off], y, cp);
        outQ_.FreeTensor(y);
    }

    // acc = max (IS_MAX) or sum of acc and the m rows of src, column by column: a halving tree
    // into the scratch buffer (src is left intact), then one op into acc.
    template <bool IS_MAX>
    __aicore__ inline void TreeReduce(LocalTensor<float>& acc, LocalTensor<float>& src, uint32_t m)
    {
        const int32_t w = static_cast<int32_t>(wPad_);
        if (m == 1) {
            Combine<IS_MAX>(acc, acc, src, w);
            return;
        }
        LocalTensor<float> red = redBuf_.Get<float>();
        uint32_t k = m / 2;
        Combine<IS_MAX>(red, src, src[k * wPad_], static_cast<int32_t>(k * wPad_));
        if (m % 2 == 1) {
            Combine<IS_MAX>(red, red, src[(m - 1) * wPad_], w);
        }
        while (k > 1) {
            const uint32_t h = k / 2;
            Combine<IS_MAX>(red, red, red[h * wPad_], static_cast<int32_t>(h * wPad_));
            if (k % 2 == 1) {
                Combine<IS_MAX>(red, red, red[(k - 1) * wPad_], w);
            }
            k = h;
        }
        Combine<IS_MAX>(acc, acc, red, w);
    }

    template <bool IS_MAX>
    __aicore__ inline void Combine(const LocalTensor<float>& dst, const LocalTensor<float>& a,
                                   const LocalTensor<float>& b, int32_t n)
    {
        if constexpr (IS_MAX) {
            Max(dst, a, b, n);
        } else {
            Add(dst, a, b, n);
        }
    }

    // dst row j = src row j - vec (IS_SUB) or * vec, for the first n_ columns of m rows: one
    // instruction per 64 columns and 255 rows (src1 repeat stride 0 re-reads vec for every row).
    template <bool IS_SUB, typename D>
    __aicore__ inline void RowsWithVector(const LocalTensor<D>& dst, const LocalTensor<float>& src,
                                          const LocalTensor<float>& vec, uint32_t m)
    {
        const uint8_t stride = static_cast<uint8_t>(wPad_ / 8);   // row stride in 32-byte blocks
        BinaryRepeatParams p(1, 1, 1, stride, stride, 0);
        for (uint32_t c = 0; c < n_; c += 64) {
            const uint64_t lanes = (n_ - c < 64) ? n_ - c : 64;
            for (uint32_t j = 0; j < m; j += 255) {
                const int64_t rep = (m - j < 255) ? m - j : 255;
                if constexpr (IS_SUB) {
                    Sub(dst[j * wPad_ + c], src[j * wPad_ + c], vec[c], lanes, rep, p);
                } else {
                    Mul(dst[j * wPad_ + c], src[j * wPad_ + c], vec[c], lanes, rep, p);
                }
            }
        }
    }

    // The float view of a loaded block: the block itself for float, a Cast into scratch otherwise.
    __aicore__ inline LocalTensor<float> AsFloat(LocalTensor<T>& x, uint32_t m)
    {
        if constexpr (IS_FLOAT) {
            return x;
        } else {
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, m * wPad_);
            return f;
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_, tmpBuf_, redBuf_, maxBuf_, sumBuf_;
    GlobalTensor<T> xGm_, yGm_;
    SoftmaxCalTiling t_;
    uint32_t first_ = 0, count_ = 0;
    uint32_t n_ = 0, wPad_ = 0;   // mode 1: columns of the current unit, and its UB row stride
    uint32_t tileLen_ = 0;        // mode 2: elements per tile
    // Bit masks of the float lanes of one repeat (64 lanes: only the first word counts).
    uint64_t EVEN_LANES[2] = {0x5555555555555555ull, 0};
    uint64_t ODD_LANES[2] = {0xAAAAAAAAAAAAAAAAull, 0};
};

extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    SoftmaxKernel<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static void SplitUnits(SoftmaxCalTiling* t, uint64_t units, uint64_t coreNum, gert::TilingContext* context)
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

    SoftmaxCalTiling* t = context->GetTilingData<SoftmaxCalTiling>();
    t->rowBlock = 0;
    if (inner == 1 && r == 2) {
        // Rows of two: whole rows per core in 512-byte units, so every slice starts 512-byte aligned.
        const uint64_t unitRows = 256 / bytes;
        const uint64_t units = (outer + unitRows - 1) / unitRows;
        uint64_t blockDim = units < coreNum ? units : coreNum;
        blockDim = blockDim == 0 ? 1 : blockDim;
        const uint64_t base = units / blockDim;
        const uint64_t former = units % blockDim;
        const uint64_t slice = (former > 0 ? base + 1 : base) * unitRows;
        // At least four tiles per core when there is work enough; tiles of 128..2048 rows.
        uint64_t tileRows = ((slice + 3) / 4 + 127) / 128 * 128;
        tileRows = tileRows > 2048 ? 2048 : tileRows;
        tileRows = tileRows < 128 ? 128 : tileRows;
        t->mode = 2;
        t->units = static_cast<uint32_t>(outer);
        t->formerNum = static_cast<uint32_t>(former);
        t->formerUnits = static_cast<uint32_t>((base + 1) * unitRows);
        t->tailUnits = static_cast<uint32_t>(base * unitRows);
        t->bufferNum = 2;
        t->d = 2;
        t->dPad = static_cast<uint32_t>(32 / bytes);
        t->rowsPerTile = static_cast<uint32_t>(tileRows);
        context->SetBlockDim(static_cast<uint32_t>(blockDim));
    } else if (inner == 1) {
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
        // UB per block element: input and output (two buffers each), the float copy of a 16-bit
        // block, half a block of float tree scratch; plus the max and sum row vectors.
        const uint64_t align = 32 / bytes;
        const uint64_t perElem = 2 * 2 * bytes + scratch + 2;
        const uint64_t maxW = 1024;                         // row stride stays within 255 blocks
        const uint64_t blockElems = (budget - 2 * maxW * 4) / perElem;
        const uint64_t innerPad = (inner + align - 1) / align * align;
        uint64_t w = innerPad < maxW ? innerPad : maxW;
        // Resident when R rows of at least 256 bytes (or of the whole inner extent) fit.
        uint64_t wRes = blockElems / r / align * align;
        wRes = wRes > w ? w : wRes;
        uint64_t rb;
        if (wRes >= w || wRes * bytes >= 256) {
            w = wRes;
            rb = r;
        } else {   // streamed: rows of 512 bytes, as many as fit
            const uint64_t w512 = 512 / bytes;
            w = w < w512 ? w : w512;
            rb = blockElems / w;
        }
        // Few outer slices: narrower chunks so more cores get a unit, but not below 512-byte
        // rows: shorter bursts move at a reduced rate (ascendc-facts 3.3), so more cores would
        // not be faster.
        if (outer < coreNum) {
            const uint64_t perOuter = (coreNum + outer - 1) / outer;
            uint64_t spread = ((inner + perOuter - 1) / perOuter + align - 1) / align * align;
            const uint64_t minW = 512 / bytes;
            spread = spread < minW ? minW : spread;
            if (spread < w) {
                w = spread;
                if (rb < r) {
                    rb = blockElems / w;
                    rb = rb >= r ? r : rb;
                }
            }
        }
        rb = rb > 4095 ? 4095 : rb;                         // DataCopyExtParams.blockCount
        const uint64_t chunks = (inner + w - 1) / w;
        SplitUnits(t, outer * chunks, coreNum, context);
        t->mode = 1;
        t->bufferNum = 2;
        t->r = static_cast<uint32_t>(r);
        t->inner = static_cast<uint32_t>(inner);
        t->chunk = static_cast<uint32_t>(w);
        t->chunks = static_cast<uint32_t>(chunks);
        t->rowBlock = static_cast<uint32_t>(rb);
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
