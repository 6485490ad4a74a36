// UnsortedSegmentSum: y[s, :] = sum of data[j, :] over the rows j with segment_ids[j] == s.
// Three stages separated by SyncAll, accumulating in a GM workspace of accT (float for
// fp16/bf16/fp32, int32 for int32/int64), like the golden's fp32 accumulation:
//  1. every core zeroes its slice of the workspace;
//  2. every core takes a block of rows: with few segments (the whole [numSeg, inner] accumulator fits
//     in UB) it adds its rows into a local accumulator with vector Add and adds that accumulator to the
//     workspace with one atomic-add copy; otherwise every row (chunk) is atomically added to its row
//     of the workspace;
//  3. every core converts its slice of the workspace to y.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t USS_CHUNK = 4096;   // columns per row chunk (mode direct)

struct UnsortedSegmentSumCustomTilingData {
    uint32_t n;            // rows of data
    uint32_t inner;        // elements per row
    uint32_t innerPad;     // UB row stride (elements, 32-byte multiple for every type)
    uint32_t numSeg;
    uint32_t local;        // 0: atomic add per row, 1: local UB accumulator (vector adds), 2: compact local
                           //    accumulator for short rows (scalar adds)
    uint32_t rowsPerTile;  // local mode: rows per load
    uint32_t rowFormer;    // row split: the first rowFormerNum cores take rowFormer rows
    uint32_t rowTail;
    uint32_t rowFormerNum;
    uint32_t outTotal;     // numSeg * inner
    uint32_t outFormer;    // element split of the workspace / y (multiples of 8)
    uint32_t outTail;
    uint32_t outFormerNum;
    uint32_t usedCores;
};
REGISTER_TILING_DEFAULT(UnsortedSegmentSumCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct UssSame { static constexpr bool value = false; };
template <typename A> struct UssSame<A, A> { static constexpr bool value = true; };
template <bool B, typename A, typename C> struct UssCond { using type = A; };
template <typename A, typename C> struct UssCond<false, A, C> { using type = C; };

template <typename T, typename TI>
class KernelUss {
public:
    static constexpr bool IS_INT = UssSame<T, int32_t>::value || UssSame<T, int64_t>::value;
    using AT = typename UssCond<IS_INT, int32_t, float>::type;
    static constexpr bool SAME = UssSame<T, AT>::value;
    static constexpr bool ID64 = UssSame<TI, int64_t>::value;

    __aicore__ inline KernelUss() {}

    __aicore__ inline void Init(GM_ADDR data, GM_ADDR ids, GM_ADDR y, GM_ADDR workspace,
                                const UnsortedSegmentSumCustomTilingData& t)
    {
        t_ = t;
        idx_ = static_cast<uint32_t>(GetBlockIdx());
        dGm_.SetGlobalBuffer((__gm__ T*)data);
        iGm_.SetGlobalBuffer((__gm__ int32_t*)ids);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        wGm_.SetGlobalBuffer((__gm__ AT*)GetUserWorkspace(workspace));
        uint32_t tileElems = USS_CHUNK;
        if (t.local == 1) {
            tileElems = t.rowsPerTile * t.innerPad;
        } else if (t.local == 2) {
            tileElems = t.inner == 1 ? (t.rowsPerTile + 15) / 16 * 16 : t.rowsPerTile * t.innerPad;
        }
        pipe_.InitBuffer(inBuf_, tileElems * sizeof(T));
        pipe_.InitBuffer(cvBuf_, tileElems * sizeof(AT));
        pipe_.InitBuffer(idBuf_, (t.rowsPerTile * 8 + 31) / 32 * 32);
        if (t.local == 1) {
            pipe_.InitBuffer(accBuf_, t.numSeg * t.innerPad * sizeof(AT));
        } else if (t.local == 2) {
            pipe_.InitBuffer(accBuf_, (t.numSeg * t.inner + 7) / 8 * 8 * sizeof(AT));
        }
        pipe_.InitBuffer(zBuf_, USS_CHUNK * sizeof(AT));
        pipe_.InitBuffer(oBuf_, USS_CHUNK * sizeof(T));
        evVM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        evM2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        evM2S_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        evVM3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        evM3V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        evM3M2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_MTE2));
        evM2M3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_MTE3));
    }

    __aicore__ inline void Process()
    {
        uint32_t oFirst, oCount;
        Split(t_.outFormer, t_.outTail, t_.outFormerNum, t_.outTotal, oFirst, oCount);
        ZeroSlice(oFirst, oCount);
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        uint32_t rFirst, rCount;
        Split(t_.rowFormer, t_.rowTail, t_.rowFormerNum, t_.n, rFirst, rCount);
        if (rCount > 0) {
            if (t_.local == 1) {
                AccumulateLocal(rFirst, rCount);
            } else if (t_.local == 2) {
                AccumulateScalar(rFirst, rCount);
            } else {
                AccumulateDirect(rFirst, rCount);
            }
        }
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        ConvertSlice(oFirst, oCount);
    }

private:
    __aicore__ inline void Split(uint32_t former, uint32_t tail, uint32_t formerNum, uint32_t total,
                                 uint32_t& first, uint32_t& count)
    {
        if (idx_ < formerNum) {
            first = idx_ * former;
            count = former;
        } else {
            first = formerNum * former + (idx_ - formerNum) * tail;
            count = tail;
        }
        if (first >= total) {
            first = 0;
            count = 0;
        } else if (first + count > total) {
            count = total - first;
        }
    }

    __aicore__ inline void ZeroSlice(uint32_t first, uint32_t count)
    {
        LocalTensor<AT> z = zBuf_.Get<AT>();
        Duplicate(z, static_cast<AT>(0), static_cast<int32_t>(USS_CHUNK));
        SetFlag<HardEvent::V_MTE3>(evVM3_);
        WaitFlag<HardEvent::V_MTE3>(evVM3_);
        for (uint32_t o = 0; o < count; o += USS_CHUNK) {
            const uint32_t n = (count - o < USS_CHUNK) ? count - o : USS_CHUNK;
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(AT)), 0, 0, 0};
            DataCopyPad(wGm_[static_cast<uint64_t>(first) + o], z, cp);
        }
    }

    __aicore__ inline int64_t IdAt(LocalTensor<int32_t>& ids, uint32_t r)
    {
        if constexpr (ID64) {
            const uint32_t lo = static_cast<uint32_t>(ids.GetValue(2 * r));
            const int32_t hi = ids.GetValue(2 * r + 1);
            return static_cast<int64_t>((static_cast<uint64_t>(static_cast<int64_t>(hi)) << 32) |
                                        static_cast<uint64_t>(lo));
        } else {
            return static_cast<int64_t>(ids.GetValue(r));
        }
    }

    // data (T) -> accT, count elements
    __aicore__ inline LocalTensor<AT> ToAcc(LocalTensor<T>& in, uint32_t count)
    {
        if constexpr (SAME) {
            return in.template ReinterpretCast<AT>();
        } else {
            LocalTensor<AT> cv = cvBuf_.Get<AT>();
            Cast(cv, in, RoundMode::CAST_NONE, count);
            return cv;
        }
    }

    __aicore__ inline void LoadIds(uint32_t row0, uint32_t m)
    {
        LocalTensor<int32_t> ids = idBuf_.Get<int32_t>();
        DataCopyExtParams ci{1, static_cast<uint32_t>(m * (ID64 ? 8 : 4)), 0, 0, 0};
        DataCopyPadExtParams<int32_t> padI{false, 0, 0, 0};
        DataCopyPad(ids, iGm_[static_cast<uint64_t>(row0) * (ID64 ? 2 : 1)], ci, padI);
    }

    __aicore__ inline void AccumulateLocal(uint32_t rFirst, uint32_t rCount)
    {
        const uint32_t inner = t_.inner;
        const uint32_t ip = t_.innerPad;
        LocalTensor<AT> acc = accBuf_.Get<AT>();
        Duplicate(acc, static_cast<AT>(0), static_cast<int32_t>(t_.numSeg * ip));
        LocalTensor<T> in = inBuf_.Get<T>();
        LocalTensor<int32_t> ids = idBuf_.Get<int32_t>();
        const uint32_t R = t_.rowsPerTile;
        for (uint32_t r = 0; r < rCount; r += R) {
            const uint32_t m = (rCount - r < R) ? rCount - r : R;
            const uint32_t row0 = rFirst + r;
            SetFlag<HardEvent::V_MTE2>(evVM2_);
            WaitFlag<HardEvent::V_MTE2>(evVM2_);
            DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(inner * sizeof(T)), 0,
                                 static_cast<uint32_t>((ip * sizeof(T) - (inner * sizeof(T) + 31) / 32 * 32) / 32), 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(in, dGm_[static_cast<uint64_t>(row0) * inner], cp, pad);
            LoadIds(row0, m);
            SetFlag<HardEvent::MTE2_V>(evM2V_);
            WaitFlag<HardEvent::MTE2_V>(evM2V_);
            SetFlag<HardEvent::MTE2_S>(evM2S_);
            WaitFlag<HardEvent::MTE2_S>(evM2S_);
            LocalTensor<AT> a = ToAcc(in, m * ip);
            for (uint32_t j = 0; j < m; ++j) {
                const int64_t s = IdAt(ids, j);
                if (s < 0 || s >= static_cast<int64_t>(t_.numSeg)) {
                    continue;
                }
                LocalTensor<AT> dst = acc[static_cast<uint32_t>(s) * ip];
                LocalTensor<AT> src = a[j * ip];
                Add(dst, dst, src, static_cast<int32_t>(inner));
            }
        }
        // one atomic add of the whole local accumulator (rows padded to ip in UB, contiguous in GM)
        SetFlag<HardEvent::V_MTE3>(evVM3_);
        WaitFlag<HardEvent::V_MTE3>(evVM3_);
        SetAtomicAdd<AT>();
        const uint32_t gap = (ip * sizeof(AT) - (inner * sizeof(AT) + 31) / 32 * 32) / 32;
        for (uint32_t s0 = 0; s0 < t_.numSeg; s0 += 4095) {
            const uint32_t ns = (t_.numSeg - s0 < 4095) ? t_.numSeg - s0 : 4095;
            DataCopyExtParams co{static_cast<uint16_t>(ns), static_cast<uint32_t>(inner * sizeof(AT)), gap, 0, 0};
            DataCopyPad(wGm_[static_cast<uint64_t>(s0) * inner], acc[s0 * ip], co);
        }
        SetAtomicNone();
    }

    // short rows, many segments: a compact [numSeg, inner] accumulator updated by the scalar unit
    __aicore__ inline void AccumulateScalar(uint32_t rFirst, uint32_t rCount)
    {
        const uint32_t inner = t_.inner;
        const uint32_t ip = t_.innerPad;
        LocalTensor<AT> acc = accBuf_.Get<AT>();
        Duplicate(acc, static_cast<AT>(0), static_cast<int32_t>((t_.numSeg * inner + 7) / 8 * 8));
        LocalTensor<T> in = inBuf_.Get<T>();
        LocalTensor<int32_t> ids = idBuf_.Get<int32_t>();
        event_t evVS = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        event_t evSM3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE3));
        const uint32_t R = t_.rowsPerTile;
        for (uint32_t r = 0; r < rCount; r += R) {
            const uint32_t m = (rCount - r < R) ? rCount - r : R;
            const uint32_t row0 = rFirst + r;
            SetFlag<HardEvent::V_MTE2>(evVM2_);
            WaitFlag<HardEvent::V_MTE2>(evVM2_);
            if (inner == 1) {   // contiguous elements: one block
                DataCopyExtParams cp{1, static_cast<uint32_t>(m * sizeof(T)), 0, 0, 0};
                DataCopyPadExtParams<T> pad{false, 0, 0, 0};
                DataCopyPad(in, dGm_[static_cast<uint64_t>(row0)], cp, pad);
            } else {
                DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(inner * sizeof(T)), 0,
                                     static_cast<uint32_t>((ip * sizeof(T) - (inner * sizeof(T) + 31) / 32 * 32) / 32), 0};
                DataCopyPadExtParams<T> pad{false, 0, 0, 0};
                DataCopyPad(in, dGm_[static_cast<uint64_t>(row0) * inner], cp, pad);
            }
            LoadIds(row0, m);
            SetFlag<HardEvent::MTE2_V>(evM2V_);
            WaitFlag<HardEvent::MTE2_V>(evM2V_);
            SetFlag<HardEvent::MTE2_S>(evM2S_);
            WaitFlag<HardEvent::MTE2_S>(evM2S_);
            const uint32_t stride = inner == 1 ? 1 : ip;
            LocalTensor<AT> a = ToAcc(in, inner == 1 ? (m + 15) / 16 * 16 : m * ip);
            SetFlag<HardEvent::V_S>(evVS);
            WaitFlag<HardEvent::V_S>(evVS);
            for (uint32_t j = 0; j < m; ++j) {
                const int64_t s = IdAt(ids, j);
                if (s < 0 || s >= static_cast<int64_t>(t_.numSeg)) {
                    continue;
                }
                const uint32_t base = static_cast<uint32_t>(s) * inner;
                for (uint32_t c = 0; c < inner; ++c) {
                    const AT v = a.GetValue(j * stride + c);
                    acc.SetValue(base + c, static_cast<AT>(acc.GetValue(base + c) + v));
                }
            }
        }
        SetFlag<HardEvent::S_MTE3>(evSM3);
        WaitFlag<HardEvent::S_MTE3>(evSM3);
        SetAtomicAdd<AT>();
        DataCopyExtParams co{1, static_cast<uint32_t>(t_.numSeg * inner * sizeof(AT)), 0, 0, 0};
        DataCopyPad(wGm_, acc, co);
        SetAtomicNone();
    }

    __aicore__ inline void AccumulateDirect(uint32_t rFirst, uint32_t rCount)
    {
        const uint32_t inner = t_.inner;
        LocalTensor<T> in = inBuf_.Get<T>();
        LocalTensor<int32_t> ids = idBuf_.Get<int32_t>();
        const uint32_t R = t_.rowsPerTile;
        for (uint32_t r = 0; r < rCount; r += R) {
            const uint32_t m = (rCount - r < R) ? rCount - r : R;
            const uint32_t row0 = rFirst + r;
            SetFlag<HardEvent::MTE3_MTE2>(evM3M2_);
            WaitFlag<HardEvent::MTE3_MTE2>(evM3M2_);
            LoadIds(row0, m);
            SetFlag<HardEvent::MTE2_S>(evM2S_);
            WaitFlag<HardEvent::MTE2_S>(evM2S_);
            for (uint32_t j = 0; j < m; ++j) {
                const int64_t s = IdAt(ids, j);
                if (s < 0 || s >= static_cast<int64_t>(t_.numSeg)) {
                    continue;
                }
                for (uint32_t c0 = 0; c0 < inner; c0 += USS_CHUNK) {
                    const uint32_t w = (inner - c0 < USS_CHUNK) ? inner - c0 : USS_CHUNK;
                    SetFlag<HardEvent::V_MTE2>(evVM2_);
                    WaitFlag<HardEvent::V_MTE2>(evVM2_);
                    SetFlag<HardEvent::MTE3_MTE2>(evM3M2_);
                    WaitFlag<HardEvent::MTE3_MTE2>(evM3M2_);
                    DataCopyExtParams cp{1, static_cast<uint32_t>(w * sizeof(T)), 0, 0, 0};
                    DataCopyPadExtParams<T> pad{false, 0, 0, 0};
                    DataCopyPad(in, dGm_[static_cast<uint64_t>(row0 + j) * inner + c0], cp, pad);
                    SetFlag<HardEvent::MTE2_V>(evM2V_);
                    WaitFlag<HardEvent::MTE2_V>(evM2V_);
                    LocalTensor<AT> a = ToAcc(in, (w + 7) / 8 * 8);
                    SetFlag<HardEvent::V_MTE3>(evVM3_);
                    WaitFlag<HardEvent::V_MTE3>(evVM3_);
                    SetAtomicAdd<AT>();
                    DataCopyExtParams co{1, static_cast<uint32_t>(w * sizeof(AT)), 0, 0, 0};
                    DataCopyPad(wGm_[static_cast<uint64_t>(s) * inner + c0], a, co);
                    SetAtomicNone();
                    SetFlag<HardEvent::MTE3_V>(evM3V_);
                    WaitFlag<HardEvent::MTE3_V>(evM3V_);
                }
            }
        }
    }

    __aicore__ inline void ConvertSlice(uint32_t first, uint32_t count)
    {
        LocalTensor<AT> z = zBuf_.Get<AT>();
        LocalTensor<T> o = oBuf_.Get<T>();
        for (uint32_t q = 0; q < count; q += USS_CHUNK) {
            const uint32_t n = (count - q < USS_CHUNK) ? count - q : USS_CHUNK;
            SetFlag<HardEvent::V_MTE2>(evVM2_);
            WaitFlag<HardEvent::V_MTE2>(evVM2_);
            SetFlag<HardEvent::MTE3_MTE2>(evM3M2_);
            WaitFlag<HardEvent::MTE3_MTE2>(evM3M2_);
            DataCopyExtParams ci{1, static_cast<uint32_t>(n * sizeof(AT)), 0, 0, 0};
            DataCopyPadExtParams<AT> pad{false, 0, 0, 0};
            DataCopyPad(z, wGm_[static_cast<uint64_t>(first) + q], ci, pad);
            SetFlag<HardEvent::MTE2_V>(evM2V_);
            WaitFlag<HardEvent::MTE2_V>(evM2V_);
            SetFlag<HardEvent::MTE3_V>(evM3V_);
            WaitFlag<HardEvent::MTE3_V>(evM3V_);
            DataCopyExtParams co{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            if constexpr (SAME) {
                SetFlag<HardEvent::MTE2_MTE3>(evM2M3_);
                WaitFlag<HardEvent::MTE2_MTE3>(evM2M3_);
                LocalTensor<T> zt = z.template ReinterpretCast<T>();
                DataCopyPad(yGm_[static_cast<uint64_t>(first) + q], zt, co);
            } else {
                if constexpr (UssSame<T, int64_t>::value) {
                    Cast(o, z, RoundMode::CAST_NONE, (n + 7) / 8 * 8);
                } else {
                    Cast(o, z, RoundMode::CAST_RINT, (n + 7) / 8 * 8);
                }
                SetFlag<HardEvent::V_MTE3>(evVM3_);
                WaitFlag<HardEvent::V_MTE3>(evVM3_);
                DataCopyPad(yGm_[static_cast<uint64_t>(first) + q], o, co);
            }
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> inBuf_, cvBuf_, idBuf_, accBuf_, zBuf_, oBuf_;
    GlobalTensor<T> dGm_, yGm_;
    GlobalTensor<int32_t> iGm_;
    GlobalTensor<AT> wGm_;
    UnsortedSegmentSumCustomTilingData t_;
    uint32_t idx_ = 0;
    event_t evVM2_, evM2V_, evM2S_, evVM3_, evM3V_, evM3M2_;
    event_t evM2M3_ = static_cast<event_t>(0);
};

extern "C" __global__ __aicore__ void unsorted_segment_sum_custom(GM_ADDR data, GM_ADDR segment_ids, GM_ADDR y,
                                                                  GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelUss<DTYPE_DATA, DTYPE_SEGMENT_IDS> op;
    op.Init(data, segment_ids, y, workspace, t);
    op.Process();
}

namespace optiling {
static void UssSplit(uint64_t units, uint64_t cores, uint64_t unitElems, uint32_t& former, uint32_t& tail,
                     uint32_t& formerNum)
{
    const uint64_t base = units / cores;
    formerNum = static_cast<uint32_t>(units % cores);
    former = static_cast<uint32_t>((base + 1) * unitElems);
    tail = static_cast<uint32_t>(base * unitElems);
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& ds = context->GetInputShape(0)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(ds.GetDimNum());
    const uint64_t N = nd > 0 ? static_cast<uint64_t>(ds.GetDim(0)) : 1;
    uint64_t inner = 1;
    for (int64_t i = 1; i < nd; ++i) {
        inner *= static_cast<uint64_t>(ds.GetDim(i));
    }
    int64_t numSeg = 1;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* np = attrs->GetAttrPointer<int64_t>(0);
        if (np != nullptr) {
            numSeg = *np;
        }
    }
    if (numSeg < 1) {
        numSeg = 1;
    }
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    const uint64_t xb = (dt == ge::DT_FLOAT16 || dt == ge::DT_BF16) ? 2 : (dt == ge::DT_INT64 ? 8 : 4);
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
    const uint64_t usable = ub - 8448 - 4096;
    // UB stride of a row: a multiple of 16 elements (a 32-byte multiple for every data and accumulator type)
    const uint64_t innerPad = (inner + 15) / 16 * 16;
    const uint64_t fixed = USS_CHUNK * (4 + xb) + 1024;
    const uint64_t accBytes = static_cast<uint64_t>(numSeg) * innerPad * 4;
    uint64_t local = 0;
    uint64_t R = 1;
    if (inner <= USS_CHUNK && accBytes <= 96 * 1024 && fixed + accBytes + innerPad * (xb + 4) + 64 <= usable) {
        local = 1;
        R = (usable - fixed - accBytes) / (innerPad * (xb + 4) + 8);
        if (R * innerPad > USS_CHUNK * 4) {
            R = USS_CHUNK * 4 / innerPad;
        }
    } else if (inner < 16 && static_cast<uint64_t>(numSeg) * inner * 4 <= 64 * 1024) {
        local = 2;
        R = inner == 1 ? 2048 : 2048 / innerPad;
    } else {
        R = 1024;
    }
    if (R > 4095) {
        R = 4095;
    }
    if (R == 0) {
        R = 1;
    }
    uint64_t blockDim = coreNum;
    const uint64_t outTotal = static_cast<uint64_t>(numSeg) * inner;
    if (N < blockDim && (outTotal + 4095) / 4096 < blockDim) {
        blockDim = N > (outTotal + 4095) / 4096 ? N : (outTotal + 4095) / 4096;
    }
    if (blockDim == 0) {
        blockDim = 1;
    }
    if (blockDim > coreNum) {
        blockDim = coreNum;
    }
    const uint64_t perCoreRows = (N + blockDim - 1) / blockDim;
    if (R > perCoreRows && perCoreRows > 0) {
        R = perCoreRows;
    }
    auto* t = context->GetTilingData<UnsortedSegmentSumCustomTilingData>();
    t->n = static_cast<uint32_t>(N);
    t->inner = static_cast<uint32_t>(inner);
    t->innerPad = static_cast<uint32_t>(innerPad);
    t->numSeg = static_cast<uint32_t>(numSeg);
    t->local = static_cast<uint32_t>(local);
    t->rowsPerTile = static_cast<uint32_t>(R);
    UssSplit(N, blockDim, 1, t->rowFormer, t->rowTail, t->rowFormerNum);
    t->outTotal = static_cast<uint32_t>(outTotal);
    UssSplit((outTotal + 7) / 8, blockDim, 8, t->outFormer, t->outTail, t->outFormerNum);
    t->usedCores = static_cast<uint32_t>(blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + (outTotal * 4 + 31) / 32 * 32 + 64;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class UnsortedSegmentSumCustom : public OpDef {
public:
    explicit UnsortedSegmentSumCustom(const char* name) : OpDef(name)
    {
        this->Input("data")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT,
                       ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("segment_ids")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64,
                       ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT,
                       ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("num_segments").AttrType(REQUIRED).Int();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(UnsortedSegmentSumCustom);
}  // namespace ops

