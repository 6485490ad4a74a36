#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct MoeGatingTopKSoftmaxCustomTilingData {
    uint32_t rows;         // product of the leading dims
    uint32_t e;            // experts (last dim)
    uint32_t k;
    uint32_t p;            // UB row stride in elements: 32 * 4^s >= e (Sort32 + 4-way merges)
    uint32_t kPad;         // k rounded up to 8
    uint32_t m;            // rows per tile
    uint32_t hasFinished;
    uint32_t formerNum;
    uint32_t formerRows;
    uint32_t tailRows;
    uint32_t padBits;      // lowest finite value of the 16-bit input type (bits)
    uint32_t compactIn;    // 1: rows are 32 B multiples: load the tile as one block, expand to stride p by vector
};
REGISTER_TILING_DEFAULT(MoeGatingTopKSoftmaxCustomTilingData);

using namespace AscendC;

template <typename T>
class KernelMoeGatingTopK {
public:
    static constexpr bool IS_FLOAT = (sizeof(T) == 4);

    __aicore__ inline KernelMoeGatingTopK() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR fin, GM_ADDR y, GM_ADDR ei, GM_ADDR ri,
                                const MoeGatingTopKSoftmaxCustomTilingData& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        if (idx < t.formerNum) {
            count_ = t.formerRows;
            first_ = idx * t.formerRows;
        } else {
            count_ = t.tailRows;
            first_ = t.formerNum * t.formerRows + (idx - t.formerNum) * t.tailRows;
        }
        if (first_ >= t.rows || count_ == 0) {
            count_ = 0;
            return;
        }
        if (first_ + count_ > t.rows) {
            count_ = t.rows - first_;
        }
        const uint64_t xLen = static_cast<uint64_t>(t.rows) * t.e;
        const uint64_t oLen = static_cast<uint64_t>(t.rows) * t.k;
        xGm_.SetGlobalBuffer((__gm__ T*)x, xLen);
        xbGm_.SetGlobalBuffer((__gm__ uint16_t*)x, xLen);
        if (t.hasFinished != 0) {
            finGm_.SetGlobalBuffer((__gm__ uint8_t*)fin, t.rows);
        }
        yGm_.SetGlobalBuffer((__gm__ T*)y, oLen);
        eiGm_.SetGlobalBuffer((__gm__ int32_t*)ei, oLen);
        riGm_.SetGlobalBuffer((__gm__ int32_t*)ri, oLen);

        const uint32_t m = t.m;
        const uint32_t mp = m * t.p;
        const uint32_t m8 = (m + 7) / 8 * 8;
        const uint32_t mk = m * t.k;
        pipe_.InitBuffer(xBuf_, mp * sizeof(T));              // input tile (compact or padded), 16-bit rounding
        pipe_.InitBuffer(fBuf_, mp * sizeof(float));          // fp32 work rows at stride p, sorted values
        pipe_.InitBuffer(patBuf_, mp * sizeof(uint32_t));
        pipe_.InitBuffer(s0Buf_, mp * 8);
        pipe_.InitBuffer(s1Buf_, mp * 8);
        pipe_.InitBuffer(accBuf_, m * 64 * sizeof(float));
        pipe_.InitBuffer(redBuf_, m8 * sizeof(float));
        pipe_.InitBuffer(oneBuf_, m8 * sizeof(float));
        pipe_.InitBuffer(bcBuf_, m8 * 32);
        pipe_.InitBuffer(oVBuf_, mk * sizeof(uint32_t));     // Gather byte offsets of the score of (row, j)
        pipe_.InitBuffer(oXBuf_, mk * sizeof(uint32_t));     // ... and of its index (score + 4)
        pipe_.InitBuffer(oFBuf_, mk * sizeof(uint32_t));     // ... of finished[row] in a half tile (2 * row)
        pipe_.InitBuffer(rbBuf_, mk * sizeof(int32_t));      // row_idx base j * rows + r, compact
        pipe_.InitBuffer(yCBuf_, (mk * sizeof(T) + 31) / 32 * 32);
        pipe_.InitBuffer(eCBuf_, mk * sizeof(int32_t));
        pipe_.InitBuffer(riBuf_, mk * sizeof(int32_t));
        pipe_.InitBuffer(finBuf_, (m + 31) / 32 * 32);
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        BuildPatterns();
        eVM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        eM2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        eVS_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        eVM3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        eM3V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        const uint32_t m = t_.m;
        for (uint32_t r = 0; r < count_; r += m) {
            const uint32_t mm = (count_ - r < m) ? (count_ - r) : m;
            const uint64_t row0 = static_cast<uint64_t>(first_) + r;
            if (r > 0) {
                SetFlag<HardEvent::MTE3_V>(eM3V_);
                WaitFlag<HardEvent::MTE3_V>(eM3V_);
            }
            SetFlag<HardEvent::V_MTE2>(eVM2_);
            WaitFlag<HardEvent::V_MTE2>(eVM2_);
            LoadTile(row0, mm);
            Softmax(mm);
            SortTile(mm);
            Finish(row0, mm);
            Store(row0, mm);
        }
    }

private:
    // column index pattern (0..p-1 per row) for Sort32; Gather offsets and the row_idx base of the compact
    // (row, j) outputs: i = r * k + j -> element r * p + j, row_idx base j * rows + r
    __aicore__ inline void BuildPatterns()
    {
        const uint32_t m = t_.m;
        const uint32_t P = t_.p;
        const uint32_t K = t_.k;
        const int32_t N = static_cast<int32_t>(m * K);
        LocalTensor<int32_t> pat = patBuf_.Get<int32_t>();
        Arange(pat, static_cast<int32_t>(0), static_cast<int32_t>(1), static_cast<int32_t>(P));
        PipeBarrier<PIPE_V>();
        for (uint32_t r = 1; r < m; r <<= 1) {
            const uint32_t cnt = (m - r < r) ? (m - r) : r;
            Adds(pat[r * P], pat, static_cast<int32_t>(0), static_cast<int32_t>(cnt * P));
            PipeBarrier<PIPE_V>();
        }
        LocalTensor<float> fF = s0Buf_.Get<float>();
        LocalTensor<int32_t> jI = s1Buf_.Get<int32_t>();
        LocalTensor<int32_t> rI = oFBuf_.Get<int32_t>();
        LocalTensor<int32_t> iI = rbBuf_.Get<int32_t>();
        LocalTensor<int32_t> oI = oVBuf_.Get<int32_t>();
        LocalTensor<int32_t> oX = oXBuf_.Get<int32_t>();
        Arange(fF, 0.5f, 1.0f, N);
        Arange(iI, static_cast<int32_t>(0), static_cast<int32_t>(1), N);
        PipeBarrier<PIPE_V>();
        Muls(fF, fF, 1.0f / static_cast<float>(K), N);
        PipeBarrier<PIPE_V>();
        Cast(rI, fF, RoundMode::CAST_FLOOR, static_cast<uint32_t>(N));                     // r = i / k
        PipeBarrier<PIPE_V>();
        Muls(oI, rI, static_cast<int32_t>(P - K), N);
        Muls(jI, rI, static_cast<int32_t>(K), N);
        PipeBarrier<PIPE_V>();
        Add(oI, oI, iI, N);                                                               // r * p + j
        Sub(jI, iI, jI, N);                                                               // j
        PipeBarrier<PIPE_V>();
        Muls(jI, jI, static_cast<int32_t>(t_.rows), N);
        PipeBarrier<PIPE_V>();
        Add(iI, jI, rI, N);                                                               // j * rows + r
        PipeBarrier<PIPE_V>();
        Muls(oX, oI, static_cast<int32_t>(8), N);                                         // structure bytes
        Muls(rI, rI, static_cast<int32_t>(2), N);                                         // finished half
        PipeBarrier<PIPE_V>();
        Adds(oX, oX, static_cast<int32_t>(4), N);                                         // index lane
        Muls(oI, oI, static_cast<int32_t>(8), N);                                         // score lane
        LocalTensor<float> one = oneBuf_.Get<float>();
        Duplicate(one, 1.0f, static_cast<int32_t>((m + 7) / 8 * 8));
        PipeBarrier<PIPE_V>();
    }

    __aicore__ inline LocalTensor<float> WorkF()
    {
        return fBuf_.Get<float>();
    }

    // rows land at stride p in the fp32 work tile; everything past e is the lowest value (softmax -> 0 or last)
    __aicore__ inline void LoadTile(uint64_t row0, uint32_t mm)
    {
        const uint32_t P = t_.p;
        const uint32_t E = t_.e;
        const int32_t n = static_cast<int32_t>(mm * P);
        const float low = -3.402823466e+38f;
        LocalTensor<float> xf = WorkF();
        if (t_.compactIn != 0) {
            // one contiguous block for the whole tile, widened / expanded to stride p by the vector unit
            DataCopyExtParams cp{1, static_cast<uint32_t>(mm * E * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(xBuf_.Get<T>(), xGm_[row0 * E], cp, pad);
            Duplicate(xf, low, n);
            LoadFinished(row0, mm);
            SetFlag<HardEvent::MTE2_V>(eM2V_);
            WaitFlag<HardEvent::MTE2_V>(eM2V_);
            PipeBarrier<PIPE_V>();
            const uint8_t dRep = static_cast<uint8_t>(P / 8);
            const uint8_t sRep = static_cast<uint8_t>(E * sizeof(T) / 32);
            const uint8_t rep = static_cast<uint8_t>(mm);
            LocalTensor<T> xin = xBuf_.Get<T>();
            for (uint32_t c = 0; c * 64 < E; ++c) {
                const uint64_t lanes = (E - c * 64 < 64) ? (E - c * 64) : 64;
                if constexpr (IS_FLOAT) {
                    Adds(xf[c * 64], xin[c * 64], 0.0f, lanes, rep, UnaryRepeatParams(1, 1, dRep, sRep));
                } else {
                    Cast(xf[c * 64], xin[c * 64], RoundMode::CAST_NONE, lanes, rep, UnaryRepeatParams(1, 1, dRep, sRep));
                }
            }
            PipeBarrier<PIPE_V>();
            return;
        }
        const uint32_t rowBytes = E * sizeof(T);
        const uint32_t rowPadBytes = (rowBytes + 31) / 32 * 32;
        const uint32_t gap = (P * sizeof(T) - rowPadBytes) / 32;
        const uint8_t rp = static_cast<uint8_t>((rowPadBytes - rowBytes) / sizeof(T));
        DataCopyExtParams cp{static_cast<uint16_t>(mm), rowBytes, 0, gap, 0};
        if constexpr (IS_FLOAT) {
            Duplicate(xf, low, n);
            SetFlag<HardEvent::V_MTE2>(eVM2_);
            WaitFlag<HardEvent::V_MTE2>(eVM2_);
            DataCopyPadExtParams<float> pad{rp != 0, 0, rp, low};
            DataCopyPad(xf, xGm_[row0 * E], cp, pad);
        } else {
            LocalTensor<uint16_t> xb = xBuf_.Get<uint16_t>();
            const uint16_t bits = static_cast<uint16_t>(t_.padBits);
            Duplicate(xb, bits, n);
            SetFlag<HardEvent::V_MTE2>(eVM2_);
            WaitFlag<HardEvent::V_MTE2>(eVM2_);
            DataCopyPadExtParams<uint16_t> pad{rp != 0, 0, rp, bits};
            DataCopyPad(xb, xbGm_[row0 * E], cp, pad);
        }
        LoadFinished(row0, mm);
        SetFlag<HardEvent::MTE2_V>(eM2V_);
        WaitFlag<HardEvent::MTE2_V>(eM2V_);
        if constexpr (!IS_FLOAT) {
            Cast(xf, xBuf_.Get<T>(), RoundMode::CAST_NONE, static_cast<uint32_t>(n));
            PipeBarrier<PIPE_V>();
        }
    }

    __aicore__ inline void LoadFinished(uint64_t row0, uint32_t mm)
    {
        if (t_.hasFinished != 0) {
            LocalTensor<uint8_t> fin = finBuf_.Get<uint8_t>();
            DataCopyExtParams cf{1, mm, 0, 0, 0};
            DataCopyPadExtParams<uint8_t> padF{false, 0, 0, 0};
            DataCopyPad(fin, finGm_[row0], cf, padF);
        }
    }

    __aicore__ inline void Softmax(uint32_t mm)
    {
        const uint32_t P = t_.p;
        const int32_t n = static_cast<int32_t>(mm * P);
        LocalTensor<float> xf = WorkF();
        if (P <= 512) {
            SoftmaxVec(xf, mm);
        } else {
            SoftmaxPerRow(xf, mm);
        }
        if constexpr (!IS_FLOAT) {
            // the golden sorts the softmax rounded to the input type: round the data chunks (pads stay lowest)
            LocalTensor<T> yt = xBuf_.Get<T>();
            if (P <= 512) {
                const uint32_t W = (P >= 64) ? 64 : 32;
                const uint32_t chunks = (t_.e + W - 1) / W;
                const uint8_t fr = static_cast<uint8_t>(P / 8);
                const uint8_t hr = static_cast<uint8_t>(P / 16);
                const uint8_t rep = static_cast<uint8_t>(mm);
                for (uint32_t c = 0; c < chunks; ++c) {
                    Cast(yt[c * W], xf[c * W], RoundMode::CAST_RINT, static_cast<uint64_t>(W), rep,
                         UnaryRepeatParams(1, 1, hr, fr));
                }
                PipeBarrier<PIPE_V>();
                for (uint32_t c = 0; c < chunks; ++c) {
                    Cast(xf[c * W], yt[c * W], RoundMode::CAST_NONE, static_cast<uint64_t>(W), rep,
                         UnaryRepeatParams(1, 1, fr, hr));
                }
            } else {
                Cast(yt, xf, RoundMode::CAST_RINT, static_cast<uint32_t>(n));
                PipeBarrier<PIPE_V>();
                Cast(xf, yt, RoundMode::CAST_NONE, static_cast<uint32_t>(n));
            }
            PipeBarrier<PIPE_V>();
        }
    }

    // all rows of the tile at once: column folds with a row repeat stride, one reduce per row, Brcb broadcast;
    // only the ceil(e / 64) column chunks holding data are touched (the rest stays at the lowest value)
    __aicore__ inline void SoftmaxVec(LocalTensor<float>& xf, uint32_t mm)
    {
        const uint32_t P = t_.p;
        const uint8_t rs = static_cast<uint8_t>(P / 8);
        const uint8_t rep = static_cast<uint8_t>(mm);
        const uint8_t bcRep = static_cast<uint8_t>((mm + 7) / 8);
        const uint32_t W = (P >= 64) ? 64 : 32;
        const uint32_t chunks = (t_.e + W - 1) / W;
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        LocalTensor<float> bc = bcBuf_.Get<float>();
        LocalTensor<float> one = oneBuf_.Get<float>();

        if (chunks >= 2) {
            Max(acc, xf, xf[64], static_cast<uint64_t>(64), rep, BinaryRepeatParams(1, 1, 1, 8, rs, rs));
            PipeBarrier<PIPE_V>();
            for (uint32_t c = 2; c < chunks; ++c) {
                Max(acc, acc, xf[c * 64], static_cast<uint64_t>(64), rep, BinaryRepeatParams(1, 1, 1, 8, 8, rs));
                PipeBarrier<PIPE_V>();
            }
            WholeReduceMax(red, acc, 64, static_cast<int32_t>(mm), 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
        } else {
            WholeReduceMax(red, xf, static_cast<int32_t>(W), static_cast<int32_t>(mm), 1, 1,
                           static_cast<int32_t>(rs), ReduceOrder::ORDER_ONLY_VALUE);
        }
        PipeBarrier<PIPE_V>();
        Brcb(bc, red, bcRep, BrcbRepeatParams(1, 8));
        PipeBarrier<PIPE_V>();
        for (uint32_t c = 0; c < chunks; ++c) {
            Sub(xf[c * W], xf[c * W], bc, static_cast<uint64_t>(W), rep, BinaryRepeatParams(1, 1, 0, rs, rs, 1));
        }
        PipeBarrier<PIPE_V>();
        for (uint32_t c = 0; c < chunks; ++c) {
            Exp(xf[c * W], xf[c * W], static_cast<uint64_t>(W), rep, UnaryRepeatParams(1, 1, rs, rs));
        }
        PipeBarrier<PIPE_V>();
        if (chunks >= 2) {
            Add(acc, xf, xf[64], static_cast<uint64_t>(64), rep, BinaryRepeatParams(1, 1, 1, 8, rs, rs));
            PipeBarrier<PIPE_V>();
            for (uint32_t c = 2; c < chunks; ++c) {
                Add(acc, acc, xf[c * 64], static_cast<uint64_t>(64), rep, BinaryRepeatParams(1, 1, 1, 8, 8, rs));
                PipeBarrier<PIPE_V>();
            }
            WholeReduceSum(red, acc, 64, static_cast<int32_t>(mm), 1, 1, 8);
        } else {
            WholeReduceSum(red, xf, static_cast<int32_t>(W), static_cast<int32_t>(mm), 1, 1, static_cast<int32_t>(rs));
        }
        PipeBarrier<PIPE_V>();
        Div(red, one, red, static_cast<int32_t>(mm));        // 1 / sum per row
        PipeBarrier<PIPE_V>();
        Brcb(bc, red, bcRep, BrcbRepeatParams(1, 8));
        PipeBarrier<PIPE_V>();
        for (uint32_t c = 0; c < chunks; ++c) {
            Mul(xf[c * W], xf[c * W], bc, static_cast<uint64_t>(W), rep, BinaryRepeatParams(1, 1, 0, rs, rs, 1));
        }
        PipeBarrier<PIPE_V>();
    }

    // long rows (p = 2048): one row at a time with count-form reductions
    __aicore__ inline void SoftmaxPerRow(LocalTensor<float>& xf, uint32_t mm)
    {
        const uint32_t P = t_.p;
        const int32_t E = static_cast<int32_t>(t_.e);
        LocalTensor<float> tmp = s1Buf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        for (uint32_t r = 0; r < mm; ++r) {
            LocalTensor<float> row = xf[r * P];
            ReduceMax(red, row, tmp, E);
            SetFlag<HardEvent::V_S>(eVS_);
            WaitFlag<HardEvent::V_S>(eVS_);
            const float mx = red.GetValue(0);
            Adds(row, row, -mx, static_cast<int32_t>(P));
            PipeBarrier<PIPE_V>();
            Exp(row, row, static_cast<int32_t>(P));
            PipeBarrier<PIPE_V>();
            ReduceSum(red, row, tmp, E);
            SetFlag<HardEvent::V_S>(eVS_);
            WaitFlag<HardEvent::V_S>(eVS_);
            const float s = red.GetValue(0);
            Muls(row, row, 1.0f / s, static_cast<int32_t>(P));
            PipeBarrier<PIPE_V>();
        }
    }

    // Sort32 on every 32 columns of every row, then 4-way merges (repeat over all row groups), Extract
    __aicore__ inline void SortTile(uint32_t mm)
    {
        const uint32_t P = t_.p;
        const uint32_t n = mm * P;
        LocalTensor<float> xf = WorkF();
        LocalTensor<uint32_t> pat = patBuf_.Get<uint32_t>();
        LocalTensor<float> src = s0Buf_.Get<float>();
        LocalTensor<float> dst = s1Buf_.Get<float>();
        const uint32_t reps = n / 32;
        for (uint32_t q = 0; q < reps; q += 255) {
            const uint32_t qc = (reps - q < 255) ? (reps - q) : 255;
            Sort32(src[q * 64], xf[q * 32], pat[q * 32], static_cast<int32_t>(qc));
        }
        PipeBarrier<PIPE_V>();
        sortedInS1_ = false;          // Sort32 wrote s0; every merge pass moves the rows to the other tile
        for (uint32_t L = 32; L < P; L *= 4) {
            const uint32_t groups = n / (4 * L);
            uint16_t lens[4] = {static_cast<uint16_t>(L), static_cast<uint16_t>(L), static_cast<uint16_t>(L),
                                static_cast<uint16_t>(L)};
            for (uint32_t g = 0; g < groups; g += 255) {
                const uint32_t gc = (groups - g < 255) ? (groups - g) : 255;
                const uint32_t base = g * 8 * L;
                MrgSortSrcList<float> list(src[base], src[base + 2 * L], src[base + 4 * L], src[base + 6 * L]);
                MrgSort4Info info(lens, false, 0b1111, static_cast<uint16_t>(gc));
                MrgSort(dst[base], list, info);
            }
            PipeBarrier<PIPE_V>();
            LocalTensor<float> t = src;
            src = dst;
            dst = t;
            sortedInS1_ = !sortedInS1_;
        }
    }

    // the first k structures of every sorted row gathered straight into compact tiles (no Extract), finished
    // rows set to e by vector arithmetic, row_idx from the base
    __aicore__ inline void Finish(uint64_t row0, uint32_t mm)
    {
        const uint32_t P = t_.p;
        const uint32_t N = mm * t_.k;
        const int32_t Ni = static_cast<int32_t>(N);
        LocalTensor<float> sorted = sortedInS1_ ? s1Buf_.Get<float>() : s0Buf_.Get<float>();
        LocalTensor<float> scratch = sortedInS1_ ? s0Buf_.Get<float>() : s1Buf_.Get<float>();
        LocalTensor<uint32_t> sortedU = sorted.template ReinterpretCast<uint32_t>();
        LocalTensor<int32_t> eC = eCBuf_.Get<int32_t>();
        Gather(eCBuf_.Get<uint32_t>(), sortedU, oXBuf_.Get<uint32_t>(), static_cast<uint32_t>(0), N);
        if (t_.hasFinished != 0) {
            const uint32_t hb = (N * 2 + 31) / 32 * 32;
            LocalTensor<half> finH = bcBuf_.Get<half>();
            LocalTensor<half> fE = scratch.template ReinterpretCast<half>();
            LocalTensor<int32_t> fI = scratch.template ReinterpretCast<int32_t>()[hb / 4];
            LocalTensor<int32_t> tI = WorkF().template ReinterpretCast<int32_t>();
            Cast(finH, finBuf_.Get<int8_t>(), RoundMode::CAST_NONE, mm);
            PipeBarrier<PIPE_V>();
            Gather(fE, finH, oFBuf_.Get<uint32_t>(), static_cast<uint32_t>(0), N);
            PipeBarrier<PIPE_V>();
            Cast(fI, fE, RoundMode::CAST_RINT, N);                    // 1 for a finished row, else 0
            Muls(tI, eC, static_cast<int32_t>(-1), Ni);
            PipeBarrier<PIPE_V>();
            Adds(tI, tI, static_cast<int32_t>(t_.e), Ni);             // e - idx
            PipeBarrier<PIPE_V>();
            Mul(tI, tI, fI, Ni);
            PipeBarrier<PIPE_V>();
            Add(eC, eC, tI, Ni);                                      // idx, or e when finished
        }
        if constexpr (IS_FLOAT) {
            Gather(yCBuf_.Get<uint32_t>(), sortedU, oVBuf_.Get<uint32_t>(), static_cast<uint32_t>(0), N);
        } else {
            LocalTensor<float> vC = WorkF();
            PipeBarrier<PIPE_V>();
            Gather(vC, sorted, oVBuf_.Get<uint32_t>(), static_cast<uint32_t>(0), N);
            PipeBarrier<PIPE_V>();
            Cast(yCBuf_.Get<T>(), vC, RoundMode::CAST_RINT, N);
        }
        Adds(riBuf_.Get<int32_t>(), rbBuf_.Get<int32_t>(), static_cast<int32_t>(row0), Ni);
        PipeBarrier<PIPE_V>();
    }

    __aicore__ inline void Store(uint64_t row0, uint32_t mm)
    {
        const uint32_t K = t_.k;
        const uint32_t N = mm * K;
        SetFlag<HardEvent::V_MTE3>(eVM3_);
        WaitFlag<HardEvent::V_MTE3>(eVM3_);
        DataCopyExtParams cy{1, static_cast<uint32_t>(N * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[row0 * K], yCBuf_.Get<T>(), cy);
        DataCopyExtParams ci{1, static_cast<uint32_t>(N * 4), 0, 0, 0};
        DataCopyPad(eiGm_[row0 * K], eCBuf_.Get<int32_t>(), ci);
        DataCopyPad(riGm_[row0 * K], riBuf_.Get<int32_t>(), ci);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> xBuf_, fBuf_, patBuf_, s0Buf_, s1Buf_, accBuf_, redBuf_, oneBuf_, bcBuf_,
        oVBuf_, oXBuf_, oFBuf_, rbBuf_, yCBuf_, eCBuf_, riBuf_, finBuf_;
    bool sortedInS1_ = false;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<uint16_t> xbGm_;
    GlobalTensor<uint8_t> finGm_;
    GlobalTensor<int32_t> eiGm_, riGm_;
    MoeGatingTopKSoftmaxCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    event_t eVM2_, eM2V_, eVS_, eVM3_, eM3V_;
};

extern "C" __global__ __aicore__ void moe_gating_top_k_softmax_custom(GM_ADDR x, GM_ADDR finished, GM_ADDR y,
                                                                      GM_ADDR expert_idx, GM_ADDR row_idx,
                                                                      GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelMoeGatingTopK<DTYPE_X> op;
    op.Init(x, finished, y, expert_idx, row_idx, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const size_t nd = xs.GetDimNum();
    if (nd < 1) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t E = static_cast<uint64_t>(xs.GetDim(nd - 1));
    uint64_t R = 1;
    for (size_t i = 0; i + 1 < nd; ++i) {
        R *= static_cast<uint64_t>(xs.GetDim(i));
    }
    if (E == 0 || E > 2048) {
        return ge::GRAPH_FAILED;
    }
    int64_t k = 1;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* kp = attrs->GetAttrPointer<int64_t>(0);
        if (kp != nullptr) {
            k = *kp;
        }
    }
    if (k < 1) {
        k = 1;
    }
    if (static_cast<uint64_t>(k) > E) {
        k = static_cast<int64_t>(E);
    }
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    const uint64_t tb = (dt == ge::DT_FLOAT) ? 4 : 2;
    const uint32_t padBits = (dt == ge::DT_BF16) ? 0xFF7Fu : 0xFBFFu;
    uint64_t P = 32;
    while (P < E) {
        P *= 4;
    }
    const uint64_t kPad = (static_cast<uint64_t>(k) + 7) / 8 * 8;
    const gert::StorageShape* fs = context->GetOptionalInputShape(1);
    const uint32_t hasFinished = (fs != nullptr && fs->GetStorageShape().GetShapeSize() > 0) ? 1 : 0;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    const uint64_t budget = ub - 8192 - 256 - 4096;

    uint64_t blockDim = R < coreNum ? R : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    MoeGatingTopKSoftmaxCustomTilingData* t = context->GetTilingData<MoeGatingTopKSoftmaxCustomTilingData>();
    t->rows = static_cast<uint32_t>(R);
    t->e = static_cast<uint32_t>(E);
    t->k = static_cast<uint32_t>(k);
    t->p = static_cast<uint32_t>(P);
    t->kPad = static_cast<uint32_t>(kPad);
    t->hasFinished = hasFinished;
    t->formerNum = static_cast<uint32_t>(R % blockDim);
    t->formerRows = static_cast<uint32_t>(R / blockDim + 1);
    t->tailRows = static_cast<uint32_t>(R / blockDim);
    t->padBits = padBits;
    t->compactIn = ((E * tb) % 32 == 0 && P <= 512) ? 1 : 0;
    // x (p * tb) + fp32 work + index pattern + two sort tiles + indices + per-row scratch + compact outputs
    const uint64_t perRow = P * tb + P * 4 + P * 4 + P * 16 + 256 + 8 + 32 +
                            static_cast<uint64_t>(k) * (4 + 4 + 4 + 4 + tb + 4 + 4) + 1;
    uint64_t m = (budget - 2048) / perRow;
    const uint64_t maxRows = (R % blockDim != 0) ? (R / blockDim + 1) : (R / blockDim);
    if (m > maxRows) {
        m = maxRows;
    }
    if (m > 255) {
        m = 255;
    }
    if (m < 1) {
        m = 1;
    }
    t->m = static_cast<uint32_t>(m);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (moe_gating_top_k_softmax).
class MoeGatingTopKSoftmaxCustom : public OpDef {
public:
    explicit MoeGatingTopKSoftmaxCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("finished")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_BOOL, ge::DT_BOOL, ge::DT_BOOL})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("expert_idx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("row_idx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("k").AttrType(OPTIONAL).Int(1);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(MoeGatingTopKSoftmaxCustom);
}  // namespace ops
