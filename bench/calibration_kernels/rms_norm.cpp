// RmsNorm over the last axis, y = x / sqrt(mean(x^2) + epsilon) * gamma: Cannpilot's calibration
// kernel for the cost model (issue 4), written for Cannpilot from documented AscendC behaviour.
// Whole rows per core (former/tail split on rows); many rows per tile, brought in by a single
// multi-block DataCopyPad (each row padded to 32 B in UB); gamma loaded once per core with an
// explicit MTE2->V flag; fp16/bf16 computed in float.
//
// Long rows (more than 128 elements): per row Mul -> ReduceSum -> Sqrt, a V->S flag, and the row
// scaled by the scalar 1/rms (the knowledge base's exemplar).
// Short rows (at most 128 elements, i.e. at most two 256-byte float repeats): per-row instruction
// start-up would dominate, so a whole tile of rows is handled by a few instructions, each covering
// up to 255 rows through its repeat count (one repeat per row, the repeat stride = the row stride):
//   x^2 -> fold columns 64.. onto columns 0..63 (Add) -> WholeReduceSum per row, written 8 times
//   (dst offsets 0..7, dst repeat stride 8) so every row's sum fills one 32-byte block ->
//   * 1/D + eps -> Rsqrt -> Mul each row by its block (src1 block stride 0: all lanes read the
//   same 8 copies) -> Mul by gamma (src1 repeat stride 0). No scalar reads at all.
// Rows of two elements (pair mode): even a padded row would be one 4-byte burst per row, so the
// core's slice is read as one contiguous run, and twice more shifted by one element (GM offset +1,
// and a left padding of one element): x[i+1] and x[i-1] sit in the same lane as x[i]. The
// partner's square comes from x[i+1] on even lanes and x[i-1] on odd lanes (bit-masked Mul), so
// every lane holds its row's sum of squares; then whole-tile Rsqrt, Mul by x and by gamma laid out
// as g0 g1 g0 g1 ... Costs two extra reads of the slice, no per-row instruction.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct RmsNormCalTiling {
    uint32_t rows;          // product of all dims but the last
    uint32_t d;             // last-axis length
    uint32_t dPad;          // d rounded up to 32 bytes, in elements of T (the UB row stride)
    uint32_t formerNum;     // the first formerNum cores take formerRows rows, the rest tailRows
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t rowsPerTile;   // rows merged into one tile
    uint32_t bufferNum;     // 2 (double buffering) when it fits, else 1
    uint32_t shortRows;     // 1: rows of at most 128 elements, handled a tile at a time
    uint32_t pairMode;      // 1: rows of exactly two elements (see the header)
    float epsilon;
    float invD;
};
REGISTER_TILING_DEFAULT(RmsNormCalTiling);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class RmsNormKernel {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline RmsNormKernel() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const RmsNormCalTiling& t)
    {
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
        if (rowStart + rows_ > t.rows) {
            rows_ = t.rows - rowStart;   // pair mode splits in 512-byte units: the last core ends the tensor
        }
        pairMode_ = t.pairMode != 0;
        d_ = t.d;
        dPad_ = t.dPad;
        k_ = t.rowsPerTile;
        shortRows_ = t.shortRows != 0;
        epsilon_ = t.epsilon;
        invD_ = t.invD;
        xGm_.SetGlobalBuffer((__gm__ T*)x + static_cast<uint64_t>(rowStart) * d_, static_cast<uint64_t>(rows_) * d_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + static_cast<uint64_t>(rowStart) * d_, static_cast<uint64_t>(rows_) * d_);
        gammaGm_.SetGlobalBuffer((__gm__ T*)gamma, d_);

        if (pairMode_) {
            InitPairs();
            return;
        }
        const uint32_t tileElems = k_ * dPad_;
        pipe_.InitBuffer(inQ_, t.bufferNum, tileElems * sizeof(T));
        pipe_.InitBuffer(outQ_, t.bufferNum, tileElems * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(calcBuf_, tileElems * sizeof(float));
            pipe_.InitBuffer(gammaRawBuf_, dPad_ * sizeof(T));
        }
        pipe_.InitBuffer(gammaBuf_, dPad_ * sizeof(float));
        if (shortRows_) {
            pipe_.InitBuffer(sqBuf_, tileElems * sizeof(float));
            pipe_.InitBuffer(sumBuf_, k_ * 8 * sizeof(float));   // 8 copies of each row's sum
        } else {
            pipe_.InitBuffer(sqBuf_, dPad_ * sizeof(float));
            pipe_.InitBuffer(tmpBuf_, dPad_ * sizeof(float));
            pipe_.InitBuffer(sumBuf_, 32);
        }
        LoadGamma();
    }

    __aicore__ inline void Process()
    {
        if (pairMode_) {
            ProcessPairs();
            return;
        }
        for (uint32_t r = 0; r < rows_; r += k_) {
            const uint32_t m = (rows_ - r < k_) ? rows_ - r : k_;
            CopyIn(r, m);
            Compute(m);
            CopyOut(r, m);
        }
    }

private:
    // gamma goes through a TBuf, not a queue: the MTE2 -> V order needs a flag of its own.
    __aicore__ inline void LoadGamma()
    {
        LocalTensor<float> g = gammaBuf_.Get<float>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(d_ * sizeof(T)), 0, 0, 0};
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        if constexpr (IS_FLOAT) {
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(g, gammaGm_, cp, pad);
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
        } else {
            LocalTensor<T> raw = gammaRawBuf_.Get<T>();
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(raw, gammaGm_, cp, pad);
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
            Cast(g, raw, RoundMode::CAST_NONE, d_);
        }
    }

    // ---------------- pair mode: rows of two elements ----------------
    __aicore__ inline void InitPairs()
    {
        tileLen_ = 2 * k_;                                      // elements per tile, a multiple of 256
        pipe_.InitBuffer(inQ_, 2, 3 * tileLen_ * sizeof(T));   // x, x shifted left, x shifted right
        pipe_.InitBuffer(outQ_, 2, tileLen_ * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(calcBuf_, 3 * tileLen_ * sizeof(float));
            pipe_.InitBuffer(gammaRawBuf_, dPad_ * sizeof(T));
        }
        pipe_.InitBuffer(gammaBuf_, tileLen_ * sizeof(float));
        LoadGamma();
        // The scalar unit reads gamma's two values once, then lays them out as g0 g1 g0 g1 ...
        PipeBarrier<PIPE_ALL>();
        LocalTensor<float> g = gammaBuf_.Get<float>();
        const float g0 = g.GetValue(0);
        const float g1 = g.GetValue(1);
        const int32_t reps = static_cast<int32_t>(tileLen_ / 64);
        Duplicate(g, g0, EVEN_LANES, reps, 1, 8);
        Duplicate(g, g1, ODD_LANES, reps, 1, 8);
    }

    __aicore__ inline void ProcessPairs()
    {
        const uint32_t total = rows_ * 2;
        for (uint32_t o = 0; o < total; o += tileLen_) {
            const uint32_t n = (total - o < tileLen_) ? total - o : tileLen_;
            LoadPairs(o, n);
            ComputePairs(n);
            StorePairs(o, n);
        }
    }

    __aicore__ inline void LoadPairs(uint32_t o, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams all{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyExtParams allButOne{1, static_cast<uint32_t>((n - 1) * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> none{false, 0, 0, 0};
        DataCopyPadExtParams<T> shiftRight{true, 1, 0, 0};      // one leading zero element
        DataCopyPad(x, xGm_[o], all, none);                      // lane i: x[i]
        DataCopyPad(x[tileLen_], xGm_[o + 1], allButOne, none);  // lane i: x[i+1]
        DataCopyPad(x[2 * tileLen_], xGm_[o], allButOne, shiftRight);   // lane i: x[i-1]
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
        BinaryRepeatParams dense;
        Mul(next, next, next, EVEN_LANES, reps, dense);   // even lanes: the partner is x[i+1]
        Mul(next, prev, prev, ODD_LANES, reps, dense);    // odd lanes: the partner is x[i-1]
        Mul(prev, cur, cur, cnt);
        Add(prev, prev, next, cnt);                       // every lane: its row's sum of squares
        Muls(prev, prev, invD_, cnt);
        Adds(prev, prev, epsilon_, cnt);
        Rsqrt(prev, prev, cnt);
        Mul(prev, prev, cur, cnt);
        LocalTensor<float> gamma = gammaBuf_.Get<float>();
        if constexpr (IS_FLOAT) {
            Mul(y, prev, gamma, cnt);
        } else {
            Mul(prev, prev, gamma, cnt);
            Cast(y, prev, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void StorePairs(uint32_t o, uint32_t n)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams all{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[o], y, all);
        outQ_.FreeTensor(y);
    }

    // ---------------- rows of more than two elements ----------------
    // m rows in one copy; DataCopyPad pads each row to 32 B, so row j starts at j * dPad.
    __aicore__ inline void CopyIn(uint32_t r, uint32_t m)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(d_ * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[static_cast<uint64_t>(r) * d_], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t m)
    {
        LocalTensor<T> x = inQ_.DeQue<T>();
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            if (shortRows_) {
                NormShortRows(y, x, m);
            } else {
                NormRows(y, x, m);
            }
        } else {
            LocalTensor<float> f = calcBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, m * dPad_);
            if (shortRows_) {
                NormShortRows(f, f, m);
            } else {
                NormRows(f, f, m);
            }
            Cast(y, f, RoundMode::CAST_RINT, m * dPad_);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void NormRows(LocalTensor<float>& dst, LocalTensor<float>& src, uint32_t m)
    {
        LocalTensor<float> gamma = gammaBuf_.Get<float>();
        LocalTensor<float> sq = sqBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> sum = sumBuf_.Get<float>();
        const int32_t n = static_cast<int32_t>(d_);
        for (uint32_t j = 0; j < m; ++j) {
            LocalTensor<float> s = src[j * dPad_];
            LocalTensor<float> o = dst[j * dPad_];
            Mul(sq, s, s, n);
            ReduceSum(sum, sq, tmp, n);
            Muls(sum, sum, invD_, 1);
            Adds(sum, sum, epsilon_, 1);
            Sqrt(sum, sum, 1);
            // The scalar unit reads what the vector unit wrote: order V -> S explicitly.
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(e);
            WaitFlag<HardEvent::V_S>(e);
            const float inv = 1.0f / sum.GetValue(0);
            Muls(o, s, inv, n);
            Mul(o, o, gamma, n);
        }
    }

    // Rows of at most 128 elements, a tile at a time (see the header). Row j starts at j * dPad_.
    __aicore__ inline void NormShortRows(LocalTensor<float>& dst, LocalTensor<float>& src, uint32_t m)
    {
        LocalTensor<float> gamma = gammaBuf_.Get<float>();
        LocalTensor<float> sq = sqBuf_.Get<float>();
        LocalTensor<float> sums = sumBuf_.Get<float>();
        const uint8_t rowBlocks = static_cast<uint8_t>(dPad_ / 8);    // row stride in 32-byte blocks
        Mul(sq, src, src, static_cast<int32_t>(m * dPad_));
        for (uint32_t j = 0; j < m; j += 255) {
            const int32_t rep = static_cast<int32_t>((m - j < 255) ? m - j : 255);
            LocalTensor<float> rows = sq[j * dPad_];
            if (d_ > 64) {   // fold columns 64..d-1 onto 0..d-65
                BinaryRepeatParams fold(1, 1, 1, rowBlocks, rowBlocks, rowBlocks);
                Add(rows, rows, rows[64], static_cast<uint64_t>(d_ - 64), rep, fold);
            }
            const int32_t lanes = static_cast<int32_t>(d_ < 64 ? d_ : 64);
            for (int32_t c = 0; c < 8; ++c) {
                WholeReduceSum(sums[j * 8 + c], rows, lanes, rep, 8, 1, rowBlocks);
            }
        }
        const int32_t ns = static_cast<int32_t>(m * 8);
        Muls(sums, sums, invD_, ns);
        Adds(sums, sums, epsilon_, ns);
        Rsqrt(sums, sums, ns);
        for (uint32_t j = 0; j < m; j += 255) {
            const int64_t rep = (m - j < 255) ? m - j : 255;
            BinaryRepeatParams perRow(1, 1, 0, rowBlocks, rowBlocks, 1);     // src1: row j's block
            BinaryRepeatParams byGamma(1, 1, 1, rowBlocks, rowBlocks, 0);    // src1: gamma every row
            for (uint32_t c = 0; c < d_; c += 64) {
                const uint64_t lanes = (d_ - c < 64) ? d_ - c : 64;
                Mul(dst[j * dPad_ + c], src[j * dPad_ + c], sums[j * 8], lanes, rep, perRow);
                Mul(dst[j * dPad_ + c], dst[j * dPad_ + c], gamma[c], lanes, rep, byGamma);
            }
        }
    }

    __aicore__ inline void CopyOut(uint32_t r, uint32_t m)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(d_ * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[static_cast<uint64_t>(r) * d_], y, cp);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> calcBuf_, gammaRawBuf_, gammaBuf_, sqBuf_, tmpBuf_, sumBuf_;
    GlobalTensor<T> xGm_, yGm_, gammaGm_;
    uint32_t rows_ = 0, d_ = 0, dPad_ = 0, k_ = 1;
    bool shortRows_ = false, pairMode_ = false;
    uint32_t tileLen_ = 0;
    // Bit masks of the float lanes of one repeat (64 lanes: only the first word counts).
    uint64_t EVEN_LANES[2] = {0x5555555555555555ull, 0};
    uint64_t ODD_LANES[2] = {0xAAAAAAAAAAAAAAAAull, 0};
    float epsilon_ = 0.0f, invD_ = 0.0f;
};

extern "C" __global__ __aicore__ void rms_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR workspace,
                                                      GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    RmsNormKernel<DTYPE_X> op;
    op.Init(x, gamma, y, t);
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
    const float* eps = context->GetAttrs()->GetAttrPointer<float>(0);
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();

    const uint64_t dPad = (d * bytes + 31) / 32 * 32 / bytes;
    const bool shortRows = d <= 128;
    // Fixed UB: gamma (float, plus raw for 16-bit); long rows: x^2 and reduce scratch rows, the sum
    // block. Short rows: per row, a float x^2 row and 8 float sums.
    const uint64_t fixed = dPad * 4 + (bytes == 4 ? 0 : dPad * bytes) + (shortRows ? 0 : 2 * dPad * 4 + 32);
    const uint64_t extra = shortRows ? dPad * 4 + 32 : 0;
    const uint64_t budget = ub - 1024;
    uint64_t bufferNum = 2;
    uint64_t perRow = dPad * (2 * bufferNum * bytes + (bytes == 4 ? 0 : 4)) + extra;
    if (fixed + perRow > budget) {
        bufferNum = 1;
        perRow = dPad * (2 * bytes + (bytes == 4 ? 0 : 4)) + extra;
        if (fixed + perRow > budget) {
            return ge::GRAPH_FAILED;   // a row this long needs the split-D variant
        }
    }
    uint64_t k = (budget - fixed) / perRow;

    uint64_t blockDim = rows < coreNum ? rows : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    const uint64_t base = rows / blockDim;
    const uint64_t former = rows % blockDim;
    const uint64_t maxRows = former > 0 ? base + 1 : base;
    // At least two tiles per core when there are rows enough, so double buffering overlaps.
    const uint64_t half = (maxRows + 1) / 2;
    if (k > half) {
        k = half;
    }
    if (k > 4095) {
        k = 4095;   // DataCopyExtParams.blockCount limit
    }
    if (k == 0) {
        k = 1;
    }

    RmsNormCalTiling* t = context->GetTilingData<RmsNormCalTiling>();
    t->rows = static_cast<uint32_t>(rows);
    t->d = static_cast<uint32_t>(d);
    t->dPad = static_cast<uint32_t>(dPad);
    t->formerNum = static_cast<uint32_t>(former);
    t->formerRows = static_cast<uint32_t>(base + 1);
    t->tailRows = static_cast<uint32_t>(base);
    t->rowsPerTile = static_cast<uint32_t>(k);
    t->bufferNum = static_cast<uint32_t>(bufferNum);
    t->shortRows = shortRows ? 1 : 0;
    t->epsilon = eps != nullptr ? *eps : 1e-6f;
    t->invD = d == 0 ? 0.0f : 1.0f / static_cast<float>(d);
    t->pairMode = 0;
    if (d == 2) {
        // Pair mode: whole rows per core in 512-byte units, so every slice starts 512-byte aligned.
        const uint64_t unitRows = 256 / bytes;
        const uint64_t units = (rows + unitRows - 1) / unitRows;
        uint64_t dim = units < coreNum ? units : coreNum;
        dim = dim == 0 ? 1 : dim;
        const uint64_t ubase = units / dim;
        const uint64_t uformer = units % dim;
        const uint64_t slice = (uformer > 0 ? ubase + 1 : ubase) * unitRows;
        // At least four tiles per core when there is work enough; tiles of 128..2048 rows.
        uint64_t tileRows = ((slice + 3) / 4 + 127) / 128 * 128;
        tileRows = tileRows > 2048 ? 2048 : tileRows;
        tileRows = tileRows < 128 ? 128 : tileRows;
        t->formerNum = static_cast<uint32_t>(uformer);
        t->formerRows = static_cast<uint32_t>((ubase + 1) * unitRows);
        t->tailRows = static_cast<uint32_t>(ubase * unitRows);
        t->rowsPerTile = static_cast<uint32_t>(tileRows);
        t->bufferNum = 2;
        t->shortRows = 0;
        t->pairMode = 1;
        blockDim = dim;
    }
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (rms_norm).
class RmsNormCustom : public OpDef {
public:
    explicit RmsNormCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-06);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(RmsNormCustom);
}  // namespace ops
