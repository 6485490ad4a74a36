// Unique: y = sorted distinct values of x (ascending), inverse[i] = position of x[i] in y.
// Strategy:
//  * integer dtypes: a min/max pass on every core (int32 Min/Max, per-core slots, SyncAll). When
//    max - min + 1 == M (M = length of y, from the golden's output shape) every value of the range
//    is present: y = arange(min, max + 1) and inverse = x - min, no sort needed.
//  * otherwise (floats, sparse integers): an exact sort. Score = -key as float (exact: floats,
//    16-bit floats widened, integers key - min below 2^24); Sort<float, true> on tiles of 2048,
//    runs in a GM workspace, then 4-way streaming MrgSort passes over all cores (SyncAll between
//    passes). Without inverse every pass drops duplicates, so runs shrink to the distinct values.
//    With inverse the value sort keeps the original index as payload; a rank pass marks the first
//    element of each value, writes y, computes ranks by a prefix scan and sorts (−index, rank)
//    pairs; merging those by index gives the ranks in input order = inverse.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t T0 = 2048;          // pass-0 tile: one Sort<float, true> call (64 repeats of 32)
constexpr uint32_t TR = 1024;          // rank-pass tile (its index-sort runs are TR long)
constexpr uint32_t QLEN = 1024;        // structures per MrgSort queue chunk (<= 4095)
constexpr uint32_t OUTS = 4 * QLEN;    // structures one merge step can emit
constexpr uint32_t EO = 2048;          // structures per chunk of the output passes
constexpr uint32_t SPLIT = 256;        // elementwise core-split unit
constexpr uint64_t SORT_CAP = 1ull << 24;   // the sort path needs index and rank exact in float
constexpr uint32_t UB_BYTES = 180 * 1024;
constexpr uint32_t UB_INT = 132352;    // integer kernels: scratch TBuf (the merge needs 132256 B) ...
constexpr uint32_t QUEUE_BYTES = 49152; // ... plus the dense inverse's double-buffered queues
constexpr uint32_t WS_SLOT_COUNT_OFF = 4096;  // user workspace: [0, 4K) min/max slots, [4K, 8K) counts
constexpr uint32_t WS_HEAD = 8192;

struct UniqueCustomTilingData {
    uint64_t total;       // N, elements of x
    uint64_t outLen;      // M, elements of y (the golden's shape)
    uint64_t offTabA;     // user-workspace byte offsets: run-length tables and ping-pong run buffers
    uint64_t offTabB;
    uint64_t offBufA;
    uint64_t offBufB;
    uint32_t withInverse;
    uint32_t sortable;    // N <= SORT_CAP: run buffers exist
    uint32_t cores;
    uint32_t runs0;       // ceil(N / T0)
    uint32_t passesV;     // merge passes of the value sort
    uint32_t tilesR;      // ceil(N / TR)
    uint32_t passesI;     // merge passes of the index sort
    uint32_t denseKnown;  // 8-bit with M == 256: every value occurs, no min/max pass
    int64_t denseMin;
};
REGISTER_TILING_DEFAULT(UniqueCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

__aicore__ inline uint32_t RoundUpU(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
__aicore__ inline float FloatFromBits(uint32_t bits)
{
    union { uint32_t u; float f; } v;
    v.u = bits;
    return v.f;
}

template <typename T>
class KernelUnique {
public:
    static constexpr bool IS_I8 = SameType<T, int8_t>::value || SameType<T, uint8_t>::value;
    static constexpr bool IS_I32 = SameType<T, int32_t>::value;
    static constexpr bool IS_I64 = SameType<T, int64_t>::value;
    static constexpr bool IS_INT = IS_I8 || IS_I32 || IS_I64;
    static constexpr bool IS_F32 = SameType<T, float>::value;
    // Elementwise tiles, as large as the UB allows (each copy costs a fixed ~0.35 us on top of its
    // bytes): min/max pass = 2 input buffers + key scratch + two 4096-lane accumulators; dense
    // inverse = 2 input + 2 int64 output buffers + key scratch.
    static constexpr uint32_t ACC = 4096;
    static constexpr uint32_t MM_TILE = IS_I32 ? 12288 : (IS_I64 ? 4096 : 8192);
    static constexpr uint32_t DN_TILE = 4096;   // y = arange chunks
    // dense inverse tile: 2 input + 2 int64 output queue buffers in QUEUE_BYTES
    static constexpr uint32_t QT = IS_I32 ? 2048 : (IS_I64 ? 1536 : 2560);

    __aicore__ inline KernelUnique() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR inverse, GM_ADDR workspace,
                                const UniqueCustomTilingData& t)
    {
        N_ = t.total;
        M_ = t.outLen;
        withInv_ = t.withInverse != 0;
        sortable_ = t.sortable != 0;
        cores_ = t.cores;
        blk_ = static_cast<uint32_t>(GetBlockIdx());
        runs0_ = t.runs0;
        passesV_ = t.passesV;
        tilesR_ = t.tilesR;
        passesI_ = t.passesI;
        denseKnown_ = t.denseKnown != 0;
        denseMin_ = t.denseMin;
        xGm_.SetGlobalBuffer((__gm__ T*)x, N_);
        yGm_.SetGlobalBuffer((__gm__ T*)y, M_);
        if (withInv_) {
            invGm_.SetGlobalBuffer((__gm__ int64_t*)inverse, N_);
        }
        GM_ADDR usr = GetUserWorkspace(workspace);
        slotsMM_.SetGlobalBuffer((__gm__ int32_t*)usr, static_cast<uint64_t>(cores_) * 8);
        slotsCnt_.SetGlobalBuffer((__gm__ uint32_t*)(usr + WS_SLOT_COUNT_OFF), static_cast<uint64_t>(cores_) * 8);
        const uint64_t tabLen = (t.offTabB - t.offTabA) / sizeof(uint32_t);
        tab_[0].SetGlobalBuffer((__gm__ uint32_t*)(usr + t.offTabA), tabLen);
        tab_[1].SetGlobalBuffer((__gm__ uint32_t*)(usr + t.offTabB), tabLen);
        if (sortable_) {
            const uint64_t bufFloats = (t.offBufB - t.offBufA) / sizeof(float);
            buf_[0].SetGlobalBuffer((__gm__ float*)(usr + t.offBufA), bufFloats);
            buf_[1].SetGlobalBuffer((__gm__ float*)(usr + t.offBufB), bufFloats);
        }
        if constexpr (IS_INT) {
            pipe_.InitBuffer(ub_, UB_INT);
            pipe_.InitBuffer(inQ_, 2, QT * sizeof(T));
            pipe_.InitBuffer(outQ_, 2, QT * sizeof(int64_t));
        } else {
            pipe_.InitBuffer(ub_, UB_BYTES);
        }
    }

    __aicore__ inline void Process()
    {
        if constexpr (IS_INT) {
            if (denseKnown_) {
                minKey_ = denseMin_;
                maxKey_ = denseMin_ + static_cast<int64_t>(M_) - 1;
            } else {
                MinMax();
                PipeBarrier<PIPE_ALL>();
                SyncAll();
                ReadMinMax();
            }
            if (maxKey_ - minKey_ + 1 == static_cast<int64_t>(M_)) {   // every value of [min, max] occurs
                Dense();
                return;
            }
            if (maxKey_ - minKey_ >= static_cast<int64_t>(SORT_CAP)) {
                return;   // key - min not exact as a float score: not supported
            }
        }
        if (!sortable_) {
            return;
        }
        const bool dedup = !withInv_;
        Pass0(dedup);
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        const uint32_t fin = MergeAll(0, T0, runs0_, passesV_, dedup);
        if (!withInv_) {
            YPass(fin);
            return;
        }
        RankPass(fin, false);
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        RankPass(fin, true);
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        const uint32_t fin2 = MergeAll(1 - fin, TR, tilesR_, passesI_, false);
        InversePass(fin2);
    }

private:
    template <HardEvent E> __aicore__ inline void Wait()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(E));
        SetFlag<E>(e);
        WaitFlag<E>(e);
    }

    template <typename U> __aicore__ inline LocalTensor<U> Carve(uint32_t& off, uint32_t count)
    {
        LocalTensor<U> t = ub_.GetWithOffset<U>(count, off);
        off += RoundUpU(count * static_cast<uint32_t>(sizeof(U)), 32);
        return t;
    }

    // [start, start + len) of `total` items for this core, in units of `unit`.
    __aicore__ inline void CoreRange(uint64_t total, uint64_t unit, uint64_t& start, uint64_t& len)
    {
        const uint64_t units = (total + unit - 1) / unit;
        const uint64_t b = blk_;
        const uint64_t base = units / cores_;
        const uint64_t extra = units % cores_;
        const uint64_t first = b * base + (b < extra ? b : extra);
        const uint64_t cnt = base + (b < extra ? 1 : 0);
        start = first * unit;
        uint64_t end = (first + cnt) * unit;
        if (end > total) {
            end = total;
        }
        len = end > start ? end - start : 0;
    }

    // laneOff[l] = 4 * (l + 6): Gather reads, for lane l of the structures at float 8 of a buffer,
    // the same lane of the previous structure (floats 6 and 7 hold the one before the chunk).
    __aicore__ inline void BuildLaneOff(LocalTensor<uint32_t>& laneOff, uint32_t lanes, int32_t first)
    {
        LocalTensor<int32_t> li = laneOff.template ReinterpretCast<int32_t>();
        CreateVecIndex(li, first, lanes);
        Muls(li, li, static_cast<int32_t>(4), lanes);
    }

    // ---------------- keys ----------------
    struct KeyBufs {
        LocalTensor<T> xin;
        LocalTensor<int32_t> k32;
        LocalTensor<half> h16;
        LocalTensor<float> f32;
    };

    __aicore__ inline void CarveKeys(uint32_t& off, uint32_t n, KeyBufs& k)
    {
        k.xin = Carve<T>(off, n);
        if constexpr (IS_I64 || IS_I8) {
            k.k32 = Carve<int32_t>(off, n);
        }
        if constexpr (IS_I8) {
            k.h16 = Carve<half>(off, n);
            k.f32 = Carve<float>(off, n);
        }
    }

    __aicore__ inline void CopyX(uint64_t g, uint32_t n, LocalTensor<T>& xin)
    {
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> noPad{false, 0, 0, 0};
        DataCopyPad(xin, xGm_[g], cp, noPad);
    }

    __aicore__ inline void LoadX(uint64_t g, uint32_t n, KeyBufs& k)
    {
        CopyX(g, n, k.xin);
        Wait<HardEvent::MTE2_V>();
    }

    // k.xin[0, n) as int32 keys (integer dtypes only; int32 keys are k.xin itself).
    __aicore__ inline LocalTensor<int32_t> KeyInt32(uint32_t n, KeyBufs& k)
    {
        if constexpr (IS_I32) {
            return k.xin.template ReinterpretCast<int32_t>();
        } else if constexpr (IS_I64) {
            Cast(k.k32, k.xin, RoundMode::CAST_NONE, n);
            return k.k32;
        } else {
            Cast(k.h16, k.xin, RoundMode::CAST_NONE, n);
            Cast(k.f32, k.h16, RoundMode::CAST_NONE, n);
            Cast(k.k32, k.f32, RoundMode::CAST_RINT, n);
            return k.k32;
        }
    }

    // x[g, g + n) as int32 keys (integer dtypes only).
    __aicore__ inline LocalTensor<int32_t> LoadKeyInt32(uint64_t g, uint32_t n, KeyBufs& k)
    {
        LoadX(g, n, k);
        return KeyInt32(n, k);
    }

    // sc[0, n) = exact descending-sort score -key (+0.0 folds -0.0 into +0.0); sc[n, len) = -inf.
    __aicore__ inline void Scores(uint64_t g, uint32_t n, uint32_t len, KeyBufs& k, LocalTensor<float>& sc)
    {
        Duplicate(sc, FloatFromBits(0xff800000u), len);
        if constexpr (IS_INT) {
            LocalTensor<int32_t> key = LoadKeyInt32(g, n, k);
            Adds(key, key, static_cast<int32_t>(-minKey_), n);
            Cast(sc, key, RoundMode::CAST_NONE, n);
            Muls(sc, sc, -1.0f, n);
        } else if constexpr (IS_F32) {
            LoadX(g, n, k);
            Muls(sc, k.xin, -1.0f, n);
        } else {
            LoadX(g, n, k);
            Cast(sc, k.xin, RoundMode::CAST_NONE, n);
            Muls(sc, sc, -1.0f, n);
        }
        Adds(sc, sc, 0.0f, n);
    }

    // ---------------- structures out, with optional dedup ----------------
    struct EmitBufs {
        LocalTensor<float> out;        // structures at float 8; floats 6, 7: the previous structure
        LocalTensor<float> prev;       // shifted copy, then the compacted structures
        LocalTensor<uint32_t> laneOff;
        LocalTensor<uint8_t> mask;
    };

    __aicore__ inline void CarveEmit(uint32_t& off, uint32_t maxStructs, EmitBufs& e)
    {
        e.out = Carve<float>(off, 8 + 2 * maxStructs);
        e.prev = Carve<float>(off, 2 * maxStructs);
        e.laneOff = Carve<uint32_t>(off, 2 * maxStructs);
        e.mask = Carve<uint8_t>(off, 2 * maxStructs / 8);
        BuildLaneOff(e.laneOff, 2 * maxStructs, 6);
    }

    // Writes the `count` structures at e.out[8] to dst at structure dstOff; with dedup only the
    // first structure of each score (scores equal to prevS, the last one written, are dropped).
    // In dedup mode the payload lane holds the score's bits, so lane-wise NE marks both lanes alike.
    __aicore__ inline uint32_t Emit(EmitBufs& e, uint32_t count, bool dedup, float& prevS,
                                    GlobalTensor<float>& dst, uint64_t dstOff)
    {
        if (count == 0) {
            return 0;
        }
        uint32_t kept = count;
        LocalTensor<float> body = e.out[8];
        if (dedup) {
            const uint32_t lanes = 2 * count;
            Wait<HardEvent::V_S>();
            e.out.SetValue(6, prevS);
            e.out.SetValue(7, prevS);
            Wait<HardEvent::S_V>();
            Gather(e.prev, e.out, e.laneOff, 0, lanes);
            Compare(e.mask, body, e.prev, CMPMODE::NE, RoundUpU(lanes, 64));
            uint64_t rsvd = 0;
            GatherMask(e.prev, body, e.mask.template ReinterpretCast<uint32_t>(), true, lanes,
                       GatherMaskParams{1, 1, 8, 0}, rsvd);
            Wait<HardEvent::V_S>();
            prevS = e.out.GetValue(8 + lanes - 2);
            kept = static_cast<uint32_t>(rsvd / 2);
            if (kept > 0) {
                Wait<HardEvent::V_MTE3>();
                DataCopyPad(dst[dstOff * 2], e.prev, DataCopyExtParams{1, kept * 8, 0, 0, 0});
            }
        } else {
            Wait<HardEvent::V_MTE3>();
            DataCopyPad(dst[dstOff * 2], body, DataCopyExtParams{1, count * 8, 0, 0, 0});
        }
        PipeBarrier<PIPE_ALL>();
        return kept;
    }

    // ---------------- pass 0: sorted runs of T0 ----------------
    __aicore__ inline void Pass0(bool dedup)
    {
        uint32_t off = 0;
        KeyBufs k;
        CarveKeys(off, T0, k);
        LocalTensor<float> sc = Carve<float>(off, T0);
        LocalTensor<float> concat = Carve<float>(off, T0);
        LocalTensor<uint32_t> idx = Carve<uint32_t>(off, T0);
        LocalTensor<int32_t> idxBase = Carve<int32_t>(off, T0);
        LocalTensor<float> sortTmp = Carve<float>(off, 2 * T0);
        LocalTensor<uint32_t> lens = Carve<uint32_t>(off, 1024);
        EmitBufs e;
        CarveEmit(off, T0, e);
        CreateVecIndex(idxBase, static_cast<int32_t>(0), T0);
        uint64_t t0 = 0, tn = 0;
        CoreRange(runs0_, 1, t0, tn);
        for (uint64_t i = 0; i < tn; ++i) {
            const uint64_t g = (t0 + i) * T0;
            const uint32_t n = static_cast<uint32_t>(N_ - g < T0 ? N_ - g : T0);
            PipeBarrier<PIPE_ALL>();
            Scores(g, n, T0, k, sc);
            LocalTensor<uint32_t> index = sc.template ReinterpretCast<uint32_t>();
            if (!dedup) {
                LocalTensor<int32_t> idxI = idx.template ReinterpretCast<int32_t>();
                Adds(idxI, idxBase, static_cast<int32_t>(g), T0);   // payload = global position
                index = idx;
            }
            Concat(concat, sc, sortTmp, T0 / 16);
            LocalTensor<float> body = e.out[8];
            Sort<float, true>(body, concat, index, sortTmp, T0 / 32);
            // stable sort: the -inf padding past n sorts after every real element
            float prevS = FloatFromBits(0x7fc00000u);
            const uint32_t kept = Emit(e, n, dedup, prevS, buf_[0], g);
            lens.SetValue(static_cast<uint32_t>(i), kept);
        }
        if (tn > 0) {
            Wait<HardEvent::S_MTE3>();
            DataCopyPad(tab_[0][t0], lens, DataCopyExtParams{1, static_cast<uint32_t>(tn * 4), 0, 0, 0});
        }
    }

    // ---------------- merge passes ----------------
    __aicore__ inline uint32_t MergeAll(uint32_t start, uint64_t cap, uint32_t runs, uint32_t passes, bool dedup)
    {
        uint32_t cur = start;
        for (uint32_t p = 0; p < passes; ++p) {
            MergePass(cur, cap, runs, dedup);
            PipeBarrier<PIPE_ALL>();
            SyncAll();
            cur = 1 - cur;
            runs = (runs + 3) / 4;
            cap *= 4;
        }
        return cur;
    }

    // One probe of a run: the score of structure `idx` (a 4-byte DMA, then a scalar read).
    __aicore__ inline float ScoreAt(GlobalTensor<float>& g, uint64_t idx, LocalTensor<float>& probe)
    {
        Wait<HardEvent::S_MTE2>();
        DataCopyPadExtParams<float> noPadF{false, 0, 0, 0};
        DataCopyPad(probe, g[idx * 2], DataCopyExtParams{1, 4, 0, 0, 0}, noPadF);
        Wait<HardEvent::MTE2_S>();
        return probe.GetValue(0);
    }

    // First index of the descending run [base, base + len) whose score is <= v (len if none).
    __aicore__ inline uint64_t FirstNotAbove(GlobalTensor<float>& g, uint64_t base, uint64_t len, float v,
                                             LocalTensor<float>& probe)
    {
        uint64_t lo = 0;
        uint64_t hi = len;
        while (lo < hi) {
            const uint64_t mid = (lo + hi) / 2;
            if (ScoreAt(g, base + mid, probe) <= v) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    // Runs of buffer `src` (run r at structure r * cap, length in its table) merged four at a time
    // into buffer 1 - src. Many tasks: task t (runs 4t..4t+3) goes to core t % cores. Few tasks and
    // no dedup (so every output position is known): a group of G = cores / tasks cores shares a
    // task; core j of the group takes, from every run, the scores in [v(j+1), v(j)) where v(j) is
    // the score at j / G of the task's longest run (equal scores all go to one core), and writes
    // them after the elements of the lower cores. This keeps the last passes on all cores.
    __aicore__ inline void MergePass(uint32_t src, uint64_t cap, uint32_t runs, bool dedup)
    {
        GlobalTensor<float>& sGm = buf_[src];
        GlobalTensor<float>& dGm = buf_[1 - src];
        uint32_t off = 0;
        LocalTensor<float> qb[4];
        for (uint32_t s = 0; s < 4; ++s) {
            qb[s] = Carve<float>(off, 2 * QLEN);
        }
        LocalTensor<uint32_t> lenL = Carve<uint32_t>(off, 8);
        LocalTensor<float> probe = Carve<float>(off, 8);
        EmitBufs e;
        CarveEmit(off, OUTS, e);
        LocalTensor<float> body = e.out[8];
        DataCopyPadExtParams<float> noPadF{false, 0, 0, 0};
        DataCopyPadExtParams<uint32_t> noPadU{false, 0, 0, 0};
        const uint32_t tasks = (runs + 3) / 4;
        const uint32_t G = (!dedup && tasks * 2 <= cores_) ? cores_ / tasks : 1;
        const uint32_t firstTask = G == 1 ? blk_ : blk_ / G;
        const uint32_t step = G == 1 ? cores_ : tasks;
        const uint32_t j = blk_ % G;
        for (uint32_t t = firstTask; t < tasks; t += step) {
            const uint32_t k = runs - 4 * t < 4 ? runs - 4 * t : 4;
            PipeBarrier<PIPE_ALL>();
            DataCopyPad(lenL, tab_[src][4 * t], DataCopyExtParams{1, k * 4, 0, 0, 0}, noPadU);
            Wait<HardEvent::MTE2_S>();
            uint64_t base[4], len[4], pos[4], end[4];
            uint64_t lenSum = 0;
            uint32_t ref = 0;
            for (uint32_t q = 0; q < 4; ++q) {
                base[q] = static_cast<uint64_t>(4 * t + q) * cap;
                len[q] = q < k ? lenL.GetValue(q) : 0;
                pos[q] = 0;
                end[q] = len[q];
                lenSum += len[q];
                ref = len[q] > len[ref] ? q : ref;
            }
            if (G > 1) {
                if (j > 0) {
                    const float v = ScoreAt(sGm, base[ref] + len[ref] * j / G, probe);
                    for (uint32_t q = 0; q < k; ++q) {
                        pos[q] = FirstNotAbove(sGm, base[q], len[q], v, probe);
                    }
                }
                if (j + 1 < G) {
                    const float v = ScoreAt(sGm, base[ref] + len[ref] * (j + 1) / G, probe);
                    for (uint32_t q = 0; q < k; ++q) {
                        end[q] = FirstNotAbove(sGm, base[q], len[q], v, probe);
                    }
                }
            }
            uint64_t outPos = 0;
            for (uint32_t q = 0; q < k; ++q) {
                outPos += pos[q];   // the elements the lower cores of the group write
            }
            const uint64_t outBase = static_cast<uint64_t>(t) * cap * 4;
            float prevS = FloatFromBits(0x7fc00000u);
            while (true) {
                uint32_t act[4];
                uint32_t na = 0;
                for (uint32_t q = 0; q < k; ++q) {
                    if (pos[q] < end[q]) {
                        act[na++] = q;
                    }
                }
                if (na == 0) {
                    break;
                }
                PipeBarrier<PIPE_ALL>();
                if (na == 1) {
                    const uint32_t q = act[0];
                    const uint32_t c = static_cast<uint32_t>(end[q] - pos[q] < OUTS ? end[q] - pos[q] : OUTS);
                    DataCopyPad(body, sGm[(base[q] + pos[q]) * 2], DataCopyExtParams{1, c * 8, 0, 0, 0}, noPadF);
                    Wait<HardEvent::MTE2_V>();
                    outPos += Emit(e, c, dedup, prevS, dGm, outBase + outPos);
                    pos[q] += c;
                    continue;
                }
                uint16_t lens[4] = {0, 0, 0, 0};
                for (uint32_t s = 0; s < na; ++s) {
                    const uint32_t q = act[s];
                    const uint32_t c = static_cast<uint32_t>(end[q] - pos[q] < QLEN ? end[q] - pos[q] : QLEN);
                    lens[s] = static_cast<uint16_t>(c);
                    DataCopyPad(qb[s], sGm[(base[q] + pos[q]) * 2], DataCopyExtParams{1, c * 8, 0, 0, 0}, noPadF);
                }
                Wait<HardEvent::MTE2_V>();
                MrgSortSrcList<float> list(qb[0], qb[1], qb[2], qb[3]);
                MrgSort4Info info(lens, true, static_cast<uint16_t>((1u << na) - 1), 1);
                MrgSort(body, list, info);
                Wait<HardEvent::V_S>();
                uint16_t taken[4] = {0, 0, 0, 0};
                GetMrgSortResult(taken[0], taken[1], taken[2], taken[3]);
                uint32_t total = 0;
                for (uint32_t s = 0; s < na; ++s) {
                    pos[act[s]] += taken[s];
                    total += taken[s];
                }
                if (total == 0) {
                    break;   // never expected: guards against an endless loop
                }
                outPos += Emit(e, total, dedup, prevS, dGm, outBase + outPos);
            }
            if (G == 1 || j == 0) {
                PipeBarrier<PIPE_ALL>();
                lenL.SetValue(0, static_cast<uint32_t>(G == 1 ? outPos : lenSum));
                Wait<HardEvent::S_MTE3>();
                DataCopyPad(tab_[1 - src][t], lenL, DataCopyExtParams{1, 4, 0, 0, 0});
            }
        }
    }

    // ---------------- y from sorted scores ----------------
    struct YBufs {
        LocalTensor<int32_t> i32;
        LocalTensor<int64_t> i64;
        LocalTensor<T> h;
        LocalTensor<T> b8;
    };

    __aicore__ inline void CarveY(uint32_t& off, uint32_t n, YBufs& yb)
    {
        if constexpr (IS_INT && !IS_I8) {
            yb.i32 = Carve<int32_t>(off, n);
        }
        if constexpr (IS_I64) {
            yb.i64 = Carve<int64_t>(off, n);
        }
        if constexpr (!IS_INT && !IS_F32) {
            yb.h = Carve<T>(off, n);
        }
        if constexpr (IS_I8) {
            yb.b8 = Carve<T>(off, n);
        }
    }

    // v: c scores (-key) in ascending key order; writes the values to y[yOff, yOff + c).
    __aicore__ inline void WriteY(LocalTensor<float>& v, uint32_t c, uint64_t yOff, YBufs& yb)
    {
        if (c == 0) {
            return;
        }
        if (yOff + c > M_) {
            c = yOff >= M_ ? 0 : static_cast<uint32_t>(M_ - yOff);
            if (c == 0) {
                return;
            }
        }
        if constexpr (IS_I8) {
            Wait<HardEvent::V_S>();
            for (uint32_t j = 0; j < c; ++j) {
                const float f = v.GetValue(j);
                const int64_t key = static_cast<int64_t>(static_cast<int32_t>(-f)) + minKey_;
                yb.b8.SetValue(j, static_cast<T>(key));
            }
            Wait<HardEvent::S_MTE3>();
            DataCopyPad(yGm_[yOff], yb.b8, DataCopyExtParams{1, c, 0, 0, 0});
        } else if constexpr (IS_INT) {
            Muls(v, v, -1.0f, c);
            Cast(yb.i32, v, RoundMode::CAST_RINT, c);
            Adds(yb.i32, yb.i32, static_cast<int32_t>(minKey_), c);
            if constexpr (IS_I64) {
                Cast(yb.i64, yb.i32, RoundMode::CAST_NONE, c);
                Wait<HardEvent::V_MTE3>();
                DataCopyPad(yGm_[yOff], yb.i64.template ReinterpretCast<T>(), DataCopyExtParams{1, c * 8, 0, 0, 0});
            } else {
                Wait<HardEvent::V_MTE3>();
                DataCopyPad(yGm_[yOff], yb.i32.template ReinterpretCast<T>(), DataCopyExtParams{1, c * 4, 0, 0, 0});
            }
        } else {
            Muls(v, v, -1.0f, c);
            Adds(v, v, 0.0f, c);   // -(+0) -> +0
            if constexpr (IS_F32) {
                Wait<HardEvent::V_MTE3>();
                DataCopyPad(yGm_[yOff], v.template ReinterpretCast<T>(), DataCopyExtParams{1, c * 4, 0, 0, 0});
            } else {
                Cast(yb.h, v, RoundMode::CAST_RINT, c);   // exact: the values came from T
                Wait<HardEvent::V_MTE3>();
                DataCopyPad(yGm_[yOff], yb.h, DataCopyExtParams{1, c * 2, 0, 0, 0});
            }
        }
        PipeBarrier<PIPE_ALL>();
    }

    // Without inverse: the single deduplicated run is y.
    __aicore__ inline void YPass(uint32_t fin)
    {
        uint32_t off = 0;
        LocalTensor<uint32_t> lenL = Carve<uint32_t>(off, 8);
        LocalTensor<float> structs = Carve<float>(off, 2 * EO);
        LocalTensor<float> vals = Carve<float>(off, EO);
        LocalTensor<uint32_t> pl = Carve<uint32_t>(off, EO);
        YBufs yb;
        CarveY(off, EO, yb);
        DataCopyPadExtParams<uint32_t> noPadU{false, 0, 0, 0};
        DataCopyPadExtParams<float> noPadF{false, 0, 0, 0};
        DataCopyPad(lenL, tab_[fin][0], DataCopyExtParams{1, 4, 0, 0, 0}, noPadU);
        Wait<HardEvent::MTE2_S>();
        uint64_t count = lenL.GetValue(0);
        if (count > M_) {
            count = M_;
        }
        uint64_t s = 0, l = 0;
        if constexpr (IS_I8) {
            if (blk_ == 0) {
                l = count;
            }
        } else {
            CoreRange(count, SPLIT, s, l);
        }
        for (uint64_t o = 0; o < l; o += EO) {
            const uint32_t c = static_cast<uint32_t>(l - o < EO ? l - o : EO);
            PipeBarrier<PIPE_ALL>();
            DataCopyPad(structs, buf_[fin][(s + o) * 2], DataCopyExtParams{1, c * 8, 0, 0, 0}, noPadF);
            Wait<HardEvent::MTE2_V>();
            Extract(vals, pl, structs, static_cast<int32_t>((c + 31) / 32));
            WriteY(vals, c, s + o, yb);
        }
    }

    // ---------------- rank pass (inverse) ----------------
    struct RBufs {
        LocalTensor<float> structs;
        LocalTensor<float> scb;      // scores at float 8; float 7 = the score before the tile
        LocalTensor<uint32_t> pl;    // original indices
        LocalTensor<float> prev;
        LocalTensor<float> comp;
        LocalTensor<uint8_t> mask;
        LocalTensor<uint32_t> offs1; // 4 * (i + 7)
        LocalTensor<float> small;
    };

    // Loads structures [s, s + n) of the value-sorted run and marks the first of each value.
    __aicore__ inline uint32_t RTile(GlobalTensor<float>& fin, uint64_t s, uint32_t n, float& prevS, RBufs& b)
    {
        PipeBarrier<PIPE_ALL>();
        DataCopyPadExtParams<float> noPadF{false, 0, 0, 0};
        DataCopyPad(b.structs, fin[s * 2], DataCopyExtParams{1, n * 8, 0, 0, 0}, noPadF);
        Wait<HardEvent::MTE2_V>();
        LocalTensor<float> scores = b.scb[8];
        Extract(scores, b.pl, b.structs, static_cast<int32_t>((n + 31) / 32));
        Wait<HardEvent::V_S>();
        b.scb.SetValue(7, prevS);
        Wait<HardEvent::S_V>();
        Gather(b.prev, b.scb, b.offs1, 0, n);
        Compare(b.mask, scores, b.prev, CMPMODE::NE, RoundUpU(n, 64));
        uint64_t rsvd = 0;
        GatherMask(b.comp, scores, b.mask.template ReinterpretCast<uint32_t>(), true, n,
                   GatherMaskParams{1, 1, 8, 0}, rsvd);
        Wait<HardEvent::V_S>();
        prevS = b.scb.GetValue(8 + n - 1);
        return static_cast<uint32_t>(rsvd);
    }

    // writeOut = false: count the distinct values of this core's tiles into its slot.
    // writeOut = true: write y, and the (-index, rank) runs of TR into buffer 1 - fin.
    __aicore__ inline void RankPass(uint32_t fin, bool writeOut)
    {
        uint32_t off = 0;
        RBufs b;
        b.structs = Carve<float>(off, 2 * TR);
        b.scb = Carve<float>(off, 8 + TR);
        b.pl = Carve<uint32_t>(off, TR);
        b.prev = Carve<float>(off, TR);
        b.comp = Carve<float>(off, TR);
        b.mask = Carve<uint8_t>(off, TR / 8);
        b.offs1 = Carve<uint32_t>(off, TR);
        b.small = Carve<float>(off, 64);
        LocalTensor<uint32_t> slotL = Carve<uint32_t>(off, 8 * 64);
        LocalTensor<uint32_t> lens = Carve<uint32_t>(off, 1024);
        BuildLaneOff(b.offs1, TR, 7);
        LocalTensor<float> scan, tmpv, ones, zeros, score2, concat, sortTmp, outS;
        LocalTensor<int32_t> offScan, offTmp, rankI;
        YBufs yb;
        LocalTensor<float> scanHi;
        if (writeOut) {
            scan = Carve<float>(off, 2 * TR);
            scanHi = scan[TR];
            tmpv = Carve<float>(off, TR);
            ones = Carve<float>(off, TR);
            zeros = Carve<float>(off, TR);
            score2 = Carve<float>(off, TR);
            concat = Carve<float>(off, TR);
            sortTmp = Carve<float>(off, 2 * TR);
            outS = Carve<float>(off, 2 * TR);
            offScan = Carve<int32_t>(off, TR);
            offTmp = Carve<int32_t>(off, TR);
            rankI = Carve<int32_t>(off, TR);
            CarveY(off, TR, yb);
            Duplicate(scan, 0.0f, TR);   // the zero half the scan's shifted reads fall into
            Duplicate(ones, 1.0f, TR);
            Duplicate(zeros, 0.0f, TR);
            CreateVecIndex(offScan, static_cast<int32_t>(TR), TR);
            Muls(offScan, offScan, static_cast<int32_t>(4), TR);   // 4 * (TR + i)
        }
        uint64_t t0 = 0, tn = 0;
        CoreRange(tilesR_, 1, t0, tn);
        GlobalTensor<float>& fGm = buf_[fin];
        float prevS = FloatFromBits(0x7fc00000u);
        if (tn > 0 && t0 > 0) {
            PipeBarrier<PIPE_ALL>();
            DataCopyPadExtParams<float> noPadF{false, 0, 0, 0};
            DataCopyPad(b.small, fGm[(t0 * TR - 1) * 2], DataCopyExtParams{1, 8, 0, 0, 0}, noPadF);
            Wait<HardEvent::MTE2_S>();
            prevS = b.small.GetValue(0);
        }
        uint64_t yPos = 0;
        if (writeOut) {
            PipeBarrier<PIPE_ALL>();
            DataCopyPadExtParams<uint32_t> noPadU{false, 0, 0, 0};
            DataCopyPad(slotL, slotsCnt_, DataCopyExtParams{1, cores_ * 32, 0, 0, 0}, noPadU);
            Wait<HardEvent::MTE2_S>();
            for (uint32_t c = 0; c < blk_; ++c) {
                yPos += slotL.GetValue(c * 8);
            }
        }
        uint64_t counted = 0;
        for (uint64_t i = 0; i < tn; ++i) {
            const uint64_t s = (t0 + i) * TR;
            const uint32_t n = static_cast<uint32_t>(N_ - s < TR ? N_ - s : TR);
            const uint32_t cnt = RTile(fGm, s, n, prevS, b);
            counted += cnt;
            if (!writeOut) {
                continue;
            }
            // ranks: inclusive prefix count of the marks, minus one, plus the values before the tile
            Select(scanHi, b.mask, ones, zeros, SELMODE::VSEL_TENSOR_TENSOR_MODE, RoundUpU(n, 64));
            for (uint32_t d = 1; d < n; d <<= 1) {
                Adds(offTmp, offScan, static_cast<int32_t>(-4 * static_cast<int32_t>(d)), n);
                Gather(tmpv, scan, offTmp.template ReinterpretCast<uint32_t>(), 0, n);
                Add(scanHi, scanHi, tmpv, n);
            }
            Adds(scanHi, scanHi, static_cast<float>(static_cast<int64_t>(yPos) - 1), n);
            Cast(rankI, scanHi, RoundMode::CAST_RINT, n);
            // pairs (-index, rank) sorted by index within the tile
            Duplicate(score2, FloatFromBits(0xff800000u), TR);
            Cast(score2, b.pl.template ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, n);
            Muls(score2, score2, -1.0f, n);
            Concat(concat, score2, sortTmp, TR / 16);
            Sort<float, true>(outS, concat, rankI.template ReinterpretCast<uint32_t>(), sortTmp, TR / 32);
            Wait<HardEvent::V_MTE3>();
            DataCopyPad(buf_[1 - fin][s * 2], outS, DataCopyExtParams{1, n * 8, 0, 0, 0});
            PipeBarrier<PIPE_ALL>();
            // y: the first structure of each value
            WriteY(b.comp, cnt, yPos, yb);
            yPos += cnt;
            lens.SetValue(static_cast<uint32_t>(i), n);
        }
        PipeBarrier<PIPE_ALL>();
        if (!writeOut) {
            slotL.SetValue(0, static_cast<uint32_t>(counted));
            for (uint32_t j = 1; j < 8; ++j) {
                slotL.SetValue(j, 0);
            }
            Wait<HardEvent::S_MTE3>();
            DataCopy(slotsCnt_[blk_ * 8], slotL, 8);
        } else if (tn > 0) {
            Wait<HardEvent::S_MTE3>();
            DataCopyPad(tab_[1 - fin][t0], lens, DataCopyExtParams{1, static_cast<uint32_t>(tn * 4), 0, 0, 0});
        }
    }

    // The index-sorted (−index, rank) run: its payloads in order are the inverse.
    __aicore__ inline void InversePass(uint32_t fin)
    {
        uint32_t off = 0;
        LocalTensor<float> structs = Carve<float>(off, 2 * EO);
        LocalTensor<float> vals = Carve<float>(off, EO);
        LocalTensor<uint32_t> pl = Carve<uint32_t>(off, EO);
        LocalTensor<int64_t> i64 = Carve<int64_t>(off, EO);
        DataCopyPadExtParams<float> noPadF{false, 0, 0, 0};
        uint64_t s = 0, l = 0;
        CoreRange(N_, SPLIT, s, l);
        for (uint64_t o = 0; o < l; o += EO) {
            const uint32_t c = static_cast<uint32_t>(l - o < EO ? l - o : EO);
            PipeBarrier<PIPE_ALL>();
            DataCopyPad(structs, buf_[fin][(s + o) * 2], DataCopyExtParams{1, c * 8, 0, 0, 0}, noPadF);
            Wait<HardEvent::MTE2_V>();
            Extract(vals, pl, structs, static_cast<int32_t>((c + 31) / 32));
            Cast(i64, pl.template ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, c);
            Wait<HardEvent::V_MTE3>();
            DataCopyPad(invGm_[s + o], i64, DataCopyExtParams{1, c * 8, 0, 0, 0});
        }
        PipeBarrier<PIPE_ALL>();
    }

    // ---------------- integer min/max and the dense case ----------------
    // Per-core int32 min and max into the core's slot. Two input buffers: the copy of tile i + 1
    // runs while tile i is reduced (flags per buffer instead of a barrier per tile).
    __aicore__ inline void MinMax()
    {
        uint32_t off = 0;
        KeyBufs k[2];
        CarveKeys(off, MM_TILE, k[0]);
        k[1] = k[0];
        k[1].xin = Carve<T>(off, MM_TILE);
        LocalTensor<int32_t> accMin = Carve<int32_t>(off, ACC);
        LocalTensor<int32_t> accMax = Carve<int32_t>(off, ACC);
        LocalTensor<int32_t> slot = Carve<int32_t>(off, 8);
        Duplicate(accMin, static_cast<int32_t>(2147483647), ACC);
        Duplicate(accMax, static_cast<int32_t>(-2147483647 - 1), ACC);
        uint64_t s = 0, l = 0;
        CoreRange(N_, SPLIT, s, l);
        // The copy of tile i + 1 is issued before tile i is reduced (a flag wait holds the scalar
        // unit, so the prefetch must come first in program order).
        TEventID loaded[2], freed[2];
        for (uint32_t b = 0; b < 2; ++b) {
            loaded[b] = pipe_.AllocEventID<HardEvent::MTE2_V>();
            freed[b] = pipe_.AllocEventID<HardEvent::V_MTE2>();
            SetFlag<HardEvent::V_MTE2>(static_cast<event_t>(freed[b]));
        }
        const uint64_t tiles = (l + MM_TILE - 1) / MM_TILE;
        if (tiles > 0) {
            WaitFlag<HardEvent::V_MTE2>(static_cast<event_t>(freed[0]));
            CopyX(s, static_cast<uint32_t>(l < MM_TILE ? l : MM_TILE), k[0].xin);
            SetFlag<HardEvent::MTE2_V>(static_cast<event_t>(loaded[0]));
        }
        for (uint64_t i = 0; i < tiles; ++i) {
            const uint32_t b = static_cast<uint32_t>(i & 1);
            const uint64_t o = i * MM_TILE;
            const uint32_t n = static_cast<uint32_t>(l - o < MM_TILE ? l - o : MM_TILE);
            if (i + 1 < tiles) {
                const uint64_t o1 = o + MM_TILE;
                WaitFlag<HardEvent::V_MTE2>(static_cast<event_t>(freed[b ^ 1]));
                CopyX(s + o1, static_cast<uint32_t>(l - o1 < MM_TILE ? l - o1 : MM_TILE), k[b ^ 1].xin);
                SetFlag<HardEvent::MTE2_V>(static_cast<event_t>(loaded[b ^ 1]));
            }
            WaitFlag<HardEvent::MTE2_V>(static_cast<event_t>(loaded[b]));
            LocalTensor<int32_t> key = KeyInt32(n, k[b]);
            for (uint32_t c = 0; c < n; c += ACC) {
                const uint32_t w = n - c < ACC ? n - c : ACC;
                Min(accMin, accMin, key[c], w);
                Max(accMax, accMax, key[c], w);
            }
            SetFlag<HardEvent::V_MTE2>(static_cast<event_t>(freed[b]));
        }
        for (uint32_t b = 0; b < 2; ++b) {
            WaitFlag<HardEvent::V_MTE2>(static_cast<event_t>(freed[b]));
            pipe_.ReleaseEventID<HardEvent::MTE2_V>(loaded[b]);
            pipe_.ReleaseEventID<HardEvent::V_MTE2>(freed[b]);
        }
        for (uint32_t h = ACC / 2; h >= 8; h >>= 1) {
            Min(accMin, accMin, accMin[h], h);
            Max(accMax, accMax, accMax[h], h);
        }
        Wait<HardEvent::V_S>();
        int32_t mn = accMin.GetValue(0);
        int32_t mx = accMax.GetValue(0);
        for (uint32_t jj = 1; jj < 8; ++jj) {
            const int32_t a = accMin.GetValue(jj);
            const int32_t bb = accMax.GetValue(jj);
            mn = a < mn ? a : mn;
            mx = bb > mx ? bb : mx;
        }
        slot.SetValue(0, mn);
        slot.SetValue(1, mx);
        for (uint32_t jj = 2; jj < 8; ++jj) {
            slot.SetValue(jj, 0);
        }
        Wait<HardEvent::S_MTE3>();
        DataCopy(slotsMM_[blk_ * 8], slot, 8);
    }

    __aicore__ inline void ReadMinMax()
    {
        uint32_t off = 0;
        LocalTensor<int32_t> slots = Carve<int32_t>(off, 8 * 64);
        DataCopyPadExtParams<int32_t> noPadI{false, 0, 0, 0};
        DataCopyPad(slots, slotsMM_, DataCopyExtParams{1, cores_ * 32, 0, 0, 0}, noPadI);
        Wait<HardEvent::MTE2_S>();
        int64_t mn = 2147483647;
        int64_t mx = -2147483647 - 1;
        for (uint32_t c = 0; c < cores_; ++c) {
            const int64_t a = slots.GetValue(c * 8);
            const int64_t b = slots.GetValue(c * 8 + 1);
            mn = a < mn ? a : mn;
            mx = b > mx ? b : mx;
        }
        minKey_ = mn;
        maxKey_ = mx;
        PipeBarrier<PIPE_ALL>();
    }

    // Every key of [min, max] occurs: y = min, min + 1, ..., max; inverse = x - min.
    __aicore__ inline void Dense()
    {
        uint32_t off = 0;
        LocalTensor<int32_t> yi = Carve<int32_t>(off, DN_TILE);
        LocalTensor<int64_t> y64 = Carve<int64_t>(off, DN_TILE);
        LocalTensor<T> yb8 = Carve<T>(off, 256);
        if constexpr (IS_I8) {
            if (blk_ == 0 && M_ <= 256) {
                for (uint32_t jj = 0; jj < static_cast<uint32_t>(M_); ++jj) {
                    yb8.SetValue(jj, static_cast<T>(minKey_ + jj));
                }
                Wait<HardEvent::S_MTE3>();
                DataCopyPad(yGm_, yb8, DataCopyExtParams{1, static_cast<uint32_t>(M_), 0, 0, 0});
            }
        } else {
            uint64_t s = 0, l = 0;
            CoreRange(M_, SPLIT, s, l);
            for (uint64_t o = 0; o < l; o += DN_TILE) {
                const uint32_t c = static_cast<uint32_t>(l - o < DN_TILE ? l - o : DN_TILE);
                PipeBarrier<PIPE_ALL>();
                CreateVecIndex(yi, static_cast<int32_t>(minKey_ + static_cast<int64_t>(s + o)), c);
                if constexpr (IS_I64) {
                    Cast(y64, yi, RoundMode::CAST_NONE, c);
                    Wait<HardEvent::V_MTE3>();
                    DataCopyPad(yGm_[s + o], y64.template ReinterpretCast<T>(), DataCopyExtParams{1, c * 8, 0, 0, 0});
                } else {
                    Wait<HardEvent::V_MTE3>();
                    DataCopyPad(yGm_[s + o], yi.template ReinterpretCast<T>(), DataCopyExtParams{1, c * 4, 0, 0, 0});
                }
            }
        }
        PipeBarrier<PIPE_ALL>();
        if (!withInv_) {
            return;
        }
        // inverse: CopyIn -> Compute -> CopyOut through two-buffer queues (the copy-out of tile i
        // overlaps the copy-in of tile i + 1); int64 / 8-bit key scratch in the TBuf
        KeyBufs k;
        if constexpr (IS_I64 || IS_I8) {
            k.k32 = Carve<int32_t>(off, QT);
        }
        if constexpr (IS_I8) {
            k.h16 = Carve<half>(off, QT);
            k.f32 = Carve<float>(off, QT);
        }
        uint64_t s = 0, l = 0;
        CoreRange(N_, SPLIT, s, l);
        for (uint64_t o = 0; o < l; o += QT) {
            const uint32_t n = static_cast<uint32_t>(l - o < QT ? l - o : QT);
            LocalTensor<T> x = inQ_.AllocTensor<T>();
            CopyX(s + o, n, x);
            inQ_.EnQue(x);
            k.xin = inQ_.DeQue<T>();
            LocalTensor<int32_t> key = KeyInt32(n, k);
            Adds(key, key, static_cast<int32_t>(-minKey_), n);
            LocalTensor<int64_t> r = outQ_.AllocTensor<int64_t>();
            Cast(r, key, RoundMode::CAST_NONE, n);
            outQ_.EnQue(r);
            inQ_.FreeTensor(k.xin);
            r = outQ_.DeQue<int64_t>();
            DataCopyPad(invGm_[s + o], r, DataCopyExtParams{1, n * 8, 0, 0, 0});
            outQ_.FreeTensor(r);
        }
        PipeBarrier<PIPE_ALL>();
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> ub_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<int64_t> invGm_;
    GlobalTensor<int32_t> slotsMM_;
    GlobalTensor<uint32_t> slotsCnt_;
    GlobalTensor<uint32_t> tab_[2];
    GlobalTensor<float> buf_[2];
    uint64_t N_ = 0;
    uint64_t M_ = 0;
    bool withInv_ = false;
    bool sortable_ = false;
    uint32_t cores_ = 1;
    uint32_t blk_ = 0;
    uint32_t runs0_ = 0;
    uint32_t passesV_ = 0;
    uint32_t tilesR_ = 0;
    uint32_t passesI_ = 0;
    bool denseKnown_ = false;
    int64_t denseMin_ = 0;
    int64_t minKey_ = 0;
    int64_t maxKey_ = 0;
};

extern "C" __global__ __aicore__ void unique_custom(GM_ADDR x, GM_ADDR y, GM_ADDR inverse, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelUnique<DTYPE_X> op;
    op.Init(x, y, inverse, workspace, t);
    op.Process();
}

namespace optiling {
static uint32_t MergePasses(uint64_t runs)
{
    uint32_t p = 0;
    while (runs > 1) {
        runs = (runs + 3) / 4;
        ++p;
    }
    return p;
}

static uint64_t Align512(uint64_t v) { return (v + 511) / 512 * 512; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<UniqueCustomTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const uint64_t outLen = context->GetOutputShape(0)->GetStorageShape().GetShapeSize();
    const bool* inv = context->GetAttrs()->GetAttrPointer<bool>(0);
    uint32_t cores = platform.GetCoreNumAiv();
    if (cores == 0) {
        cores = 1;
    }
    if (cores > 64) {
        cores = 64;   // slot arrays hold 64 cores
    }
    t->total = total;
    t->outLen = outLen;
    t->withInverse = (inv != nullptr && *inv) ? 1 : 0;
    t->sortable = (total > 0 && total <= SORT_CAP) ? 1 : 0;
    t->cores = cores;
    const uint64_t runs0 = (total + T0 - 1) / T0;
    const uint64_t tilesR = (total + TR - 1) / TR;
    t->runs0 = static_cast<uint32_t>(runs0);
    t->passesV = MergePasses(runs0);
    t->tilesR = static_cast<uint32_t>(tilesR);
    t->passesI = MergePasses(tilesR);
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    t->denseKnown = 0;
    t->denseMin = 0;
    if ((dt == ge::DT_UINT8 || dt == ge::DT_INT8) && outLen == 256) {
        t->denseKnown = 1;   // 256 distinct 8-bit values: all of them
        t->denseMin = dt == ge::DT_INT8 ? -128 : 0;
    }
    // a core's pass-0 / rank-pass lengths go out from a 1024-entry UB array
    const uint64_t tabBytes = Align512((tilesR > runs0 ? tilesR : runs0) * 4 + 32);
    const uint64_t bufBytes = t->sortable ? Align512(runs0 * T0 * 8) : 0;
    t->offTabA = WS_HEAD;
    t->offTabB = WS_HEAD + tabBytes;
    t->offBufA = WS_HEAD + 2 * tabBytes;
    t->offBufB = t->offBufA + bufBytes;
    const uint64_t userBytes = t->offBufB + bufBytes;
    context->SetBlockDim(cores);
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize() + userBytes;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (unique).
class UniqueCustom : public OpDef {
public:
    explicit UniqueCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("inverse")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("return_inverse").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(UniqueCustom);
}  // namespace ops
