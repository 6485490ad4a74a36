// TopK along one axis. The tensor is viewed as [outer, R, inner]; every (outer, inner) pair is one
// row of R elements (stride inner). Rows are split over the cores (former/tail).
// A row is processed in chunks of C elements: the chunk is converted to float scores (x for
// largest, -x for smallest; lanes past the data are -inf), indexed with CreateVecIndex, fully sorted
// (Sort32 into runs of 32, then 4-way MrgSort passes: descending, equal scores keep their input
// order) and merged with the
// running top list of the row (MrgSort of two queues, the running list first, so earlier indices
// win ties); the first kPad = roundup(k, 32) structures are kept. At the end Extract gives scores and
// indices; the scores are turned back into x (sign, Cast to T) and the indices to int64.
// Strided rows (inner > 1) are loaded with a strided DataCopyPad (one element per 32-byte block) and
// compacted with Gather; their k results are spread to one element per block with Gather and written
// with a strided DataCopyPad. int8/uint8 strided rows use scalar accesses (not in the test cases).
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t TK_OUT_PIECE = 256;   // strided output: values spread per piece

struct TopKCustomTilingData {
    uint64_t outer;
    uint64_t r;            // length of the topk axis
    uint64_t inner;
    uint32_t k;
    uint32_t kPad;         // k rounded up to 32
    uint32_t chunk;        // elements sorted per chunk (multiple of 32)
    uint32_t largest;
    uint32_t rowsBase;     // every core takes rowsBase rows, the first rowsExtra cores one more
    uint32_t rowsExtra;
};
REGISTER_TILING_DEFAULT(TopKCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct TkSame { static constexpr bool value = false; };
template <typename A> struct TkSame<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelTopK {
public:
    static constexpr bool IS_F32 = TkSame<T, float>::value;
    static constexpr bool IS_F16 = TkSame<T, half>::value;
    static constexpr bool IS_BF16 = TkSame<T, bfloat16_t>::value;
    static constexpr bool IS_I32 = TkSame<T, int32_t>::value;
    static constexpr bool IS_I64 = TkSame<T, int64_t>::value;
    static constexpr bool IS_I8 = TkSame<T, int8_t>::value || TkSame<T, uint8_t>::value;
    static constexpr uint32_t SZ = sizeof(T);

    __aicore__ inline KernelTopK() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR idx, const TopKCustomTilingData& t)
    {
        t_ = t;
        const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
        row0_ = static_cast<uint64_t>(b) * t.rowsBase + (b < t.rowsExtra ? b : t.rowsExtra);
        rows_ = t.rowsBase + (b < t.rowsExtra ? 1 : 0);
        if (rows_ == 0) {
            return;
        }
        sign_ = t.largest != 0 ? 1.0f : -1.0f;
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        iGm_.SetGlobalBuffer((__gm__ int64_t*)idx);
        const uint32_t c = t.chunk;
        const uint32_t kp = t.kPad;
        strided_ = t.inner > 1;
        pipe_.InitBuffer(inQ_, 1, strided_ ? c * 32 : c * SZ);       // raw chunk (spread if strided)
        pipe_.InitBuffer(xcBuf_, c * (SZ < 4 ? 4 : SZ));              // compacted chunk / int8->half
        const uint32_t ck = c > kp ? c : kp;
        pipe_.InitBuffer(scBuf_, ck * sizeof(float));                 // scores, later the extracted scores
        pipe_.InitBuffer(ixBuf_, ck * sizeof(int32_t));               // indices, later the extracted ones
        pipe_.InitBuffer(catBuf_, c * 8);                             // Concat output (int8: half scratch)
        pipe_.InitBuffer(tmpBuf_, c * 16);                            // Concat / Sort scratch
        pipe_.InitBuffer(sortBuf_, c * 8);                            // sorted chunk
        pipe_.InitBuffer(rlBuf_, kp * 8);                             // running top list of the row
        pipe_.InitBuffer(mrgBuf_, (kp + c) * 8);                      // merge output
        pipe_.InitBuffer(outBuf_, kp * (SZ < 4 ? 4 : SZ));            // values as T (int8: via half)
        pipe_.InitBuffer(o64Buf_, kp * sizeof(int64_t));              // indices as int64
        if (strided_) {
            pipe_.InitBuffer(ldTbl_, c * 2 * sizeof(uint32_t));       // load compaction offsets
            pipe_.InitBuffer(stTbl_, TK_OUT_PIECE * 16 * sizeof(uint32_t));   // store spread offsets
            pipe_.InitBuffer(st64Tbl_, TK_OUT_PIECE * 8 * sizeof(uint32_t));  // int64 spread offsets
            pipe_.InitBuffer(spBuf_, TK_OUT_PIECE * 32);              // spread values
            BuildTables();
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t r = 0; r < rows_; ++r) {
            DoRow(row0_ + r);
        }
    }

private:
    __aicore__ inline void SyncVS()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
    }
    __aicore__ inline void SyncSV()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        SetFlag<HardEvent::S_V>(e);
        WaitFlag<HardEvent::S_V>(e);
    }

    // Offsets (bytes): load compaction and store spreading for strided rows.
    __aicore__ inline void BuildTables()
    {
        const uint32_t c = t_.chunk;
        LocalTensor<int32_t> ld = ldTbl_.Get<int32_t>();
        LocalTensor<int32_t> st = stTbl_.Get<int32_t>();
        LocalTensor<int32_t> st64 = st64Tbl_.Get<int32_t>();
        // scalar seeds (first 32-byte block of each table)
        for (uint32_t q = 0; q < 8; ++q) {
            ld.SetValue(q, static_cast<int32_t>((q / 2) * 32 + (q % 2) * 4));    // int64 load pattern
            st64.SetValue(q, static_cast<int32_t>((q % 2) * 4));                 // int64 store: lo, hi
        }
        SyncSV();
        if constexpr (IS_I64) {
            for (uint32_t cnt = 8; cnt < 2 * c; cnt *= 2) {                      // + (cnt / 2) * 32
                const uint32_t n = (2 * c - cnt < cnt) ? 2 * c - cnt : cnt;
                LocalTensor<int32_t> d = ld[cnt];
                Adds(d, ld, static_cast<int32_t>(cnt * 16), static_cast<int32_t>(n));
            }
        } else {
            Arange<int32_t>(ld, 0, 32, static_cast<int32_t>(c));                 // element i at i * 32
        }
        // store spread: lane q of the spread buffer takes element q / E (E lanes per 32-byte block)
        const uint32_t e = 32 / (SZ == 2 ? 2 : 4);                               // 16 (16-bit) or 8 lanes
        const uint32_t total = TK_OUT_PIECE * e;
        Duplicate(st, 0, static_cast<int32_t>(e));
        for (uint32_t cnt = e; cnt < total; cnt *= 2) {
            const uint32_t n = (total - cnt < cnt) ? total - cnt : cnt;
            LocalTensor<int32_t> d = st[cnt];
            Adds(d, st, static_cast<int32_t>((cnt / e) * (SZ == 2 ? 2 : 4)), static_cast<int32_t>(n));
        }
        const uint32_t total64 = TK_OUT_PIECE * 8;
        for (uint32_t cnt = 8; cnt < total64; cnt *= 2) {                        // + (cnt / 8) * 8
            const uint32_t n = (total64 - cnt < cnt) ? total64 - cnt : cnt;
            LocalTensor<int32_t> d = st64[cnt];
            Adds(d, st64, static_cast<int32_t>(cnt), static_cast<int32_t>(n));
        }
    }

    // Load n elements of row `base` starting at position s into the compacted chunk xc (as T).
    __aicore__ inline void LoadChunk(uint64_t base, uint64_t s, uint32_t n)
    {
        const uint64_t inner = t_.inner;
        if (!strided_) {
            LocalTensor<T> x = inQ_.AllocTensor<T>();
            DataCopyExtParams cp{1, n * SZ, 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, xGm_[base + s], cp, pad);
            inQ_.EnQue(x);
            return;
        }
        if constexpr (IS_I8) {
            // no 8-bit Gather: scalar copies (the V unit must be done with xc first)
            SyncVS();
            LocalTensor<T> xc = xcBuf_.Get<T>();
            for (uint32_t i = 0; i < n; ++i) {
                xc.SetValue(i, xGm_.GetValue(base + (s + i) * inner));
            }
            SyncSV();
            return;
        } else {
            LocalTensor<T> x = inQ_.AllocTensor<T>();
            DataCopyExtParams cp{static_cast<uint16_t>(n), SZ, static_cast<uint32_t>((inner - 1) * SZ), 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, xGm_[base + s * inner], cp, pad);
            inQ_.EnQue(x);
        }
    }

    // Scores of the chunk into sc[0, n32): sign * float(x), -inf past n.
    __aicore__ inline void Scores(uint32_t n, uint32_t n32)
    {
        LocalTensor<float> sc = scBuf_.Get<float>();
        LocalTensor<int32_t> scI = sc.ReinterpretCast<int32_t>();
        Duplicate(scI, static_cast<int32_t>(0xFF800000u), static_cast<int32_t>(n32));   // -inf
        LocalTensor<T> src;
        bool fromQueue = false;
        if constexpr (IS_I8) {
            if (strided_) {
                src = xcBuf_.Get<T>();
            } else {
                src = inQ_.DeQue<T>();
                fromQueue = true;
            }
        } else {
            LocalTensor<T> raw = inQ_.DeQue<T>();
            fromQueue = true;
            if (strided_) {   // compact the one-element-per-block chunk
                LocalTensor<uint32_t> ld = ldTbl_.Get<uint32_t>();
                LocalTensor<T> xc = xcBuf_.Get<T>();
                if constexpr (SZ == 2) {
                    LocalTensor<uint16_t> d = xc.template ReinterpretCast<uint16_t>();
                    LocalTensor<uint16_t> sraw = raw.template ReinterpretCast<uint16_t>();
                    Gather(d, sraw, ld, static_cast<uint32_t>(0), n);
                } else if constexpr (SZ == 4) {
                    LocalTensor<uint32_t> d = xc.template ReinterpretCast<uint32_t>();
                    LocalTensor<uint32_t> sraw = raw.template ReinterpretCast<uint32_t>();
                    Gather(d, sraw, ld, static_cast<uint32_t>(0), n);
                } else {
                    LocalTensor<uint32_t> d = xc.template ReinterpretCast<uint32_t>();
                    LocalTensor<uint32_t> sraw = raw.template ReinterpretCast<uint32_t>();
                    Gather(d, sraw, ld, static_cast<uint32_t>(0), 2 * n);
                }
                inQ_.FreeTensor(raw);
                fromQueue = false;
                src = xc;
            } else {
                src = raw;
            }
        }
        if constexpr (IS_F32) {
            Muls(sc, src, sign_, static_cast<int32_t>(n));
        } else {
            if constexpr (IS_F16 || IS_BF16) {
                Cast(sc, src, RoundMode::CAST_NONE, n);
            } else if constexpr (IS_I32) {
                Cast(sc, src, RoundMode::CAST_NONE, n);
            } else if constexpr (IS_I64) {
                Cast(sc, src, RoundMode::CAST_RINT, n);
            } else {   // int8 / uint8 -> half -> float
                LocalTensor<half> h = catBuf_.Get<half>();
                Cast(h, src, RoundMode::CAST_NONE, n);
                Cast(sc, h, RoundMode::CAST_NONE, n);
            }
            if (sign_ < 0.0f) {
                Muls(sc, sc, -1.0f, static_cast<int32_t>(n));
            }
        }
        if (fromQueue) {
            inQ_.FreeTensor(src);
        }
    }

    // Copy `structs` 8-byte structures (as int32 pairs: exact, no float flushing).
    __aicore__ inline void CopyStructs(LocalTensor<float>& dst, LocalTensor<float>& src, uint32_t structs)
    {
        LocalTensor<int32_t> d = dst.ReinterpretCast<int32_t>();
        LocalTensor<int32_t> s = src.ReinterpretCast<int32_t>();
        Adds(d, s, 0, static_cast<int32_t>(structs * 2));
    }

    // Sort the n32 scores of sc (indices ix) descending: Sort32 into runs of 32, then 4-way MrgSort
    // passes (ping-pong between two buffers) until one run is left; returns the buffer holding it.
    __aicore__ inline LocalTensor<float> SortChunk(uint32_t n32)
    {
        LocalTensor<float> sc = scBuf_.Get<float>();
        LocalTensor<uint32_t> ixU = ixBuf_.Get<uint32_t>();
        LocalTensor<float> cur = sortBuf_.Get<float>();
        LocalTensor<float> other = catBuf_.Get<float>();
        Sort32(cur, sc, ixU, static_cast<int32_t>(n32 / 32));
        uint32_t runLen = 32;
        uint32_t runs = n32 / 32;
        while (runs > 1) {
            for (uint32_t g = 0; g < runs; g += 4) {
                const uint32_t q = (runs - g < 4) ? runs - g : 4;
                const uint32_t start = g * runLen;   // structures
                uint16_t lens[4] = {0, 0, 0, 0};
                for (uint32_t i = 0; i < q; ++i) {
                    const uint32_t rs = start + i * runLen;
                    lens[i] = static_cast<uint16_t>(n32 - rs < runLen ? n32 - rs : runLen);
                }
                LocalTensor<float> dst = other[start * 2];
                LocalTensor<float> q0 = cur[start * 2];
                if (q == 1) {
                    CopyStructs(dst, q0, lens[0]);
                    continue;
                }
                LocalTensor<float> q1 = cur[(start + runLen) * 2];
                LocalTensor<float> q2 = q > 2 ? cur[(start + 2 * runLen) * 2] : q0;
                LocalTensor<float> q3 = q > 3 ? cur[(start + 3 * runLen) * 2] : q0;
                const uint16_t valid = q == 2 ? 0b11 : (q == 3 ? 0b111 : 0b1111);
                MrgSort4Info info(lens, false, valid, 1);
                MrgSortSrcList<float> list(q0, q1, q2, q3);
                MrgSort<float>(dst, list, info);
            }
            LocalTensor<float> t = cur;
            cur = other;
            other = t;
            runs = (runs + 3) / 4;
            runLen *= 4;
        }
        return cur;
    }

    __aicore__ inline void DoRow(uint64_t row)
    {
        const uint64_t r = t_.r;
        const uint64_t inner = t_.inner;
        const uint64_t o = row / inner;
        const uint64_t j = row % inner;
        const uint64_t base = o * r * inner + j;
        const uint32_t c = t_.chunk;
        const uint32_t kp = t_.kPad;
        LocalTensor<float> sc = scBuf_.Get<float>();
        LocalTensor<int32_t> ix = ixBuf_.Get<int32_t>();
        LocalTensor<uint32_t> ixU = ixBuf_.Get<uint32_t>();
        LocalTensor<float> rl = rlBuf_.Get<float>();
        LocalTensor<float> mrg = mrgBuf_.Get<float>();
        uint32_t have = 0;
        for (uint64_t s = 0; s < r; s += c) {
            const uint32_t n = static_cast<uint32_t>(r - s < c ? r - s : c);
            const uint32_t n32 = (n + 31) / 32 * 32;
            LoadChunk(base, s, n);
            Scores(n, n32);
            CreateVecIndex(ix, static_cast<int32_t>(s), n32);
            LocalTensor<float> run = SortChunk(n32);
            const uint32_t take = n32 < kp ? n32 : kp;
            if (have == 0) {
                CopyStructs(rl, run, take);
                have = take;
            } else {
                uint16_t lens[4] = {static_cast<uint16_t>(have), static_cast<uint16_t>(take), 0, 0};
                MrgSort4Info info(lens, false, 0b11, 1);
                MrgSortSrcList<float> list(rl, run, rl, rl);
                MrgSort<float>(mrg, list, info);
                const uint32_t keep = have + take < kp ? have + take : kp;
                CopyStructs(rl, mrg, keep);
                have = keep;
            }
        }
        // scores and indices of the top kPad
        Extract(sc, ixU, rl, static_cast<int32_t>(kp / 32));
        StoreRow(o, j);
    }

    __aicore__ inline void StoreRow(uint64_t o, uint64_t j)
    {
        const uint32_t k = t_.k;
        const uint32_t kp = t_.kPad;
        const uint64_t inner = t_.inner;
        LocalTensor<float> sc = scBuf_.Get<float>();
        LocalTensor<int32_t> ix = ixBuf_.Get<int32_t>();
        LocalTensor<T> out = outBuf_.Get<T>();
        LocalTensor<int64_t> o64 = o64Buf_.Get<int64_t>();
        if (sign_ < 0.0f) {
            Muls(sc, sc, -1.0f, static_cast<int32_t>(kp));
        }
        if constexpr (IS_F32) {
            Muls(out, sc, 1.0f, static_cast<int32_t>(kp));
        } else if constexpr (IS_F16 || IS_BF16 || IS_I32 || IS_I64) {
            Cast(out, sc, RoundMode::CAST_RINT, kp);
        } else {   // float -> half -> int8 / uint8 (exact: the scores came from 8-bit integers)
            LocalTensor<half> h = o64Buf_.Get<half>();
            Cast(h, sc, RoundMode::CAST_RINT, kp);
            Cast(out, h, RoundMode::CAST_RINT, kp);
        }
        Cast(o64, ix, RoundMode::CAST_NONE, kp);
        const uint64_t obase = o * k * inner + j;   // output (o, t, j) at (o * k + t) * inner + j
        if (inner == 1) {
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
            SetFlag<HardEvent::V_MTE3>(e);
            WaitFlag<HardEvent::V_MTE3>(e);
            DataCopyExtParams cv{1, k * SZ, 0, 0, 0};
            DataCopyPad(yGm_[obase], out, cv);
            DataCopyExtParams ci{1, static_cast<uint32_t>(k * sizeof(int64_t)), 0, 0, 0};
            DataCopyPad(iGm_[obase], o64, ci);
        } else if constexpr (IS_I8) {
            SyncVS();
            for (uint32_t t = 0; t < k; ++t) {
                yGm_.SetValue(obase + static_cast<uint64_t>(t) * inner, out.GetValue(t));
                iGm_.SetValue(obase + static_cast<uint64_t>(t) * inner, o64.GetValue(t));
            }
        } else {
            StoreSpread(obase);
        }
        event_t e2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        SetFlag<HardEvent::MTE3_V>(e2);   // the next row rewrites out / o64 / the spread buffer
        WaitFlag<HardEvent::MTE3_V>(e2);
        PipeBarrier<PIPE_ALL>();
    }

    // Strided store: spread TK_OUT_PIECE results to one per 32-byte block, then one strided copy.
    __aicore__ inline void StoreSpread(uint64_t obase)
    {
        const uint32_t k = t_.k;
        const uint64_t inner = t_.inner;
        LocalTensor<T> out = outBuf_.Get<T>();
        LocalTensor<int64_t> o64 = o64Buf_.Get<int64_t>();
        LocalTensor<uint32_t> st = stTbl_.Get<uint32_t>();
        LocalTensor<uint32_t> st64 = st64Tbl_.Get<uint32_t>();
        LocalTensor<uint8_t> sp = spBuf_.Get<uint8_t>();
        for (uint32_t t0 = 0; t0 < k; t0 += TK_OUT_PIECE) {
            const uint32_t m = (k - t0 < TK_OUT_PIECE) ? k - t0 : TK_OUT_PIECE;
            // values
            if constexpr (SZ == 2) {
                LocalTensor<uint16_t> d = sp.ReinterpretCast<uint16_t>();
                LocalTensor<uint16_t> s = out[t0].template ReinterpretCast<uint16_t>();
                Gather(d, s, st, static_cast<uint32_t>(0), m * 16);
            } else if constexpr (SZ == 4) {
                LocalTensor<uint32_t> d = sp.ReinterpretCast<uint32_t>();
                LocalTensor<uint32_t> s = out[t0].template ReinterpretCast<uint32_t>();
                Gather(d, s, st, static_cast<uint32_t>(0), m * 8);
            } else {
                LocalTensor<uint32_t> d = sp.ReinterpretCast<uint32_t>();
                LocalTensor<uint32_t> s = out[t0].template ReinterpretCast<uint32_t>();
                Gather(d, s, st64, static_cast<uint32_t>(0), m * 8);
            }
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
            SetFlag<HardEvent::V_MTE3>(e);
            WaitFlag<HardEvent::V_MTE3>(e);
            LocalTensor<T> spT = sp.ReinterpretCast<T>();
            DataCopyExtParams cv{static_cast<uint16_t>(m), SZ, 0, static_cast<uint32_t>((inner - 1) * SZ), 0};
            DataCopyPad(yGm_[obase + static_cast<uint64_t>(t0) * inner], spT, cv);
            event_t e1 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
            SetFlag<HardEvent::MTE3_V>(e1);
            WaitFlag<HardEvent::MTE3_V>(e1);
            // indices
            LocalTensor<uint32_t> d = sp.ReinterpretCast<uint32_t>();
            LocalTensor<uint32_t> s = o64[t0].template ReinterpretCast<uint32_t>();
            Gather(d, s, st64, static_cast<uint32_t>(0), m * 8);
            event_t e3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
            SetFlag<HardEvent::V_MTE3>(e3);
            WaitFlag<HardEvent::V_MTE3>(e3);
            LocalTensor<int64_t> sp64 = sp.ReinterpretCast<int64_t>();
            DataCopyExtParams ci{static_cast<uint16_t>(m), 8, 0, static_cast<uint32_t>((inner - 1) * 8), 0};
            DataCopyPad(iGm_[obase + static_cast<uint64_t>(t0) * inner], sp64, ci);
            event_t e4 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
            SetFlag<HardEvent::MTE3_V>(e4);
            WaitFlag<HardEvent::MTE3_V>(e4);
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TBuf<TPosition::VECCALC> xcBuf_, scBuf_, ixBuf_, catBuf_, tmpBuf_, sortBuf_, rlBuf_, mrgBuf_, outBuf_, o64Buf_;
    TBuf<TPosition::VECCALC> ldTbl_, stTbl_, st64Tbl_, spBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<int64_t> iGm_;
    TopKCustomTilingData t_;
    uint64_t row0_ = 0;
    uint64_t rows_ = 0;
    float sign_ = 1.0f;
    bool strided_ = false;
};

extern "C" __global__ __aicore__ void top_k_custom(GM_ADDR x, GM_ADDR y, GM_ADDR idx, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelTopK<DTYPE_X> op;
    op.Init(x, y, idx, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<TopKCustomTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(shape.GetDimNum());
    const int64_t* kAttr = context->GetAttrs()->GetAttrPointer<int64_t>(0);
    const int64_t* dimAttr = context->GetAttrs()->GetAttrPointer<int64_t>(1);
    const bool* largestAttr = context->GetAttrs()->GetAttrPointer<bool>(2);
    int64_t k = kAttr != nullptr ? *kAttr : 1;
    int64_t dim = dimAttr != nullptr ? *dimAttr : -1;
    const bool largest = largestAttr != nullptr ? *largestAttr : true;
    uint64_t outer = 1, inner = 1, r = 1;
    if (nd > 0) {
        if (dim < 0) {
            dim += nd;
        }
        if (dim < 0 || dim >= nd) {
            return ge::GRAPH_FAILED;
        }
        for (int64_t i = 0; i < dim; ++i) {
            outer *= static_cast<uint64_t>(shape.GetDim(i));
        }
        for (int64_t i = dim + 1; i < nd; ++i) {
            inner *= static_cast<uint64_t>(shape.GetDim(i));
        }
        r = static_cast<uint64_t>(shape.GetDim(dim));
    }
    if (k < 1) {
        k = 1;
    }
    if (static_cast<uint64_t>(k) > r) {
        k = static_cast<int64_t>(r);
    }
    const uint64_t kPad = (static_cast<uint64_t>(k) + 31) / 32 * 32;
    // chunk: 1024 contiguous elements (512 for strided rows), never more than the row needs
    uint64_t chunk = inner > 1 ? 512 : 1024;
    const uint64_t rPad = (r + 31) / 32 * 32;
    chunk = rPad < chunk ? rPad : chunk;
    t->outer = outer;
    t->r = r;
    t->inner = inner;
    t->k = static_cast<uint32_t>(k);
    t->kPad = static_cast<uint32_t>(kPad);
    t->chunk = static_cast<uint32_t>(chunk);
    t->largest = largest ? 1 : 0;
    const uint64_t rows = outer * inner;
    const uint64_t cores = platform.GetCoreNumAiv();
    const uint64_t used = rows == 0 ? 1 : (rows < cores ? rows : cores);
    t->rowsBase = static_cast<uint32_t>(rows / used);
    t->rowsExtra = static_cast<uint32_t>(rows % used);
    context->SetBlockDim(static_cast<uint32_t>(used));
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (top_k).
class TopKCustom : public OpDef {
public:
    explicit TopKCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_UINT8, ge::DT_INT32, ge::DT_INT64, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_UINT8, ge::DT_INT32, ge::DT_INT64, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("idx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("k").AttrType(REQUIRED).Int();
        this->Attr("dim").AttrType(REQUIRED).Int();
        this->Attr("largest").AttrType(OPTIONAL).Bool(true);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(TopKCustom);
}  // namespace ops
