// Cummin along one axis. The tensor is viewed as [outer, R, inner], R the scanned axis.
// values[o, i, j] = min(x[o, 0..i, j]); indices = position of that minimum, with ties taking the
// LATEST position (torch.cummin uses less_equal), NaN propagating like torch.
//
// Mode 0 (inner == 1, scan along contiguous rows): the flattened tensor is split over the cores in
// blocks of CUMMIN_SUB elements. A core whose range starts inside a row first runs a carry-only pass
// over the head of that row. Each tile is screened hierarchically: when a tile / sub-chunk contains
// no row start and its minimum (vector ReduceMin) is greater than the running minimum, nothing in it
// can update the scan, and values / indices are filled with Duplicate; otherwise the sub-chunk is
// scanned on the scalar unit. int32 data is screened through a monotone float cast (a strict '>' of
// the rounded values implies a strict '>' of the integers) and scanned exactly in int32.
//
// Mode 1 (inner > 1): the scan runs across rows, vectorised over a chunk of the inner axis; k rows are
// loaded per copy (strided DataCopyPad). Per row: m = Min(mPrev, x); the "no update" indicator is
// built arithmetically from d = x - m (0 exactly when x <= mPrev): min(min(d * 2^100, 1) * 2^100, 1);
// idx = i + keep * (idxPrev - i), all exact in float (indices < 2^24).
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t CUMMIN_SUB = 256;   // screening granularity and mode-0 split unit (elements)

struct CumminCustomTilingData {
    uint32_t mode;         // 0: inner == 1 (scan along contiguous rows), 1: inner > 1
    uint32_t units;        // mode 0: blocks of CUMMIN_SUB elements; mode 1: outer x column chunks
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t r;            // length of the scanned axis
    uint32_t inner;        // product of the dims after it
    uint32_t total;        // number of elements
    uint32_t tileLen;      // mode 0: elements per tile (multiple of CUMMIN_SUB)
    uint32_t chunk;        // mode 1: columns per unit
    uint32_t chunks;       // mode 1: column chunks per outer slice
    uint32_t stride;       // mode 1: UB row stride in elements (multiple of 16)
    uint32_t rowsPerTile;  // mode 1: rows per copy
};
REGISTER_TILING_DEFAULT(CumminCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct CmSame { static constexpr bool value = false; };
template <typename A> struct CmSame<A, A> { static constexpr bool value = true; };
template <typename T> struct CmScan { using type = float; };
template <> struct CmScan<int32_t> { using type = int32_t; };

template <typename T>
class KernelCummin {
public:
    using ST = typename CmScan<T>::type;
    static constexpr bool IS_F32 = CmSame<T, float>::value;
    static constexpr bool IS_I32 = CmSame<T, int32_t>::value;
    static constexpr bool IS_16 = !IS_F32 && !IS_I32;

    __aicore__ inline KernelCummin() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR idx, const CumminCustomTilingData& t)
    {
        t_ = t;
        const uint32_t b = static_cast<uint32_t>(GetBlockIdx());
        uint32_t first = 0;
        uint32_t count = 0;
        if (b < t.formerNum) {
            count = t.formerUnits;
            first = b * t.formerUnits;
        } else {
            count = t.tailUnits;
            first = t.formerNum * t.formerUnits + (b - t.formerNum) * t.tailUnits;
        }
        if (count == 0 || first >= t.units) {
            count_ = 0;
            return;
        }
        if (first + count > t.units) {
            count = t.units - first;
        }
        first_ = first;
        count_ = count;
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        iGm_.SetGlobalBuffer((__gm__ int64_t*)idx);
        if (t.mode == 0) {
            const uint32_t e = t.tileLen;
            pipe_.InitBuffer(inQ_, 2, e * sizeof(T));
            pipe_.InitBuffer(valQ_, 2, e * sizeof(T));
            pipe_.InitBuffer(idxQ_, 2, e * sizeof(int64_t));
            if constexpr (!IS_F32) {
                pipe_.InitBuffer(fBuf_, e * sizeof(float));
            }
            pipe_.InitBuffer(iBuf_, e * sizeof(int32_t));
            pipe_.InitBuffer(tmpBuf_, e * sizeof(float));
            pipe_.InitBuffer(redBuf_, 64);
        } else {
            const uint32_t s = t.stride;
            const uint32_t e = t.rowsPerTile * s;
            pipe_.InitBuffer(inQ_, 2, e * sizeof(T));
            pipe_.InitBuffer(valQ_, 2, e * sizeof(T));
            pipe_.InitBuffer(idxQ_, 2, e * sizeof(int64_t));
            if constexpr (IS_16) {
                pipe_.InitBuffer(fBuf_, e * sizeof(float));
                pipe_.InitBuffer(vBuf_, e * sizeof(float));
            }
            pipe_.InitBuffer(ifBuf_, e * sizeof(float));
            pipe_.InitBuffer(iBuf_, e * sizeof(int32_t));
            pipe_.InitBuffer(dBuf_, s * sizeof(float));
            pipe_.InitBuffer(tBuf_, s * sizeof(float));
            if constexpr (IS_I32) {
                pipe_.InitBuffer(diBuf_, s * sizeof(int32_t));
            }
            pipe_.InitBuffer(vcBuf_, s * sizeof(ST));
            pipe_.InitBuffer(icBuf_, s * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        if (t_.mode == 0) {
            ProcessFlat();
        } else {
            ProcessCols();
        }
    }

private:
    __aicore__ inline void SyncVS()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e);
        WaitFlag<HardEvent::V_S>(e);
        pendingV_ = false;
    }

    __aicore__ inline void SyncSV()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        SetFlag<HardEvent::S_V>(e);
        WaitFlag<HardEvent::S_V>(e);
    }

    // ======================= mode 0: scan along contiguous rows =======================
    __aicore__ inline void ProcessFlat()
    {
        const uint64_t start = static_cast<uint64_t>(first_) * CUMMIN_SUB;
        uint64_t end = static_cast<uint64_t>(first_ + count_) * CUMMIN_SUB;
        if (end > t_.total) {
            end = t_.total;
        }
        const uint64_t pre = start % t_.r;
        pos_ = 0;
        cur_ = 0;
        curF_ = 0.0f;
        curIdx_ = 0;
        if (pre > 0) {
            RunRange(start - pre, start, false);   // carry-only pass over the head of the row
        }
        if (end > start) {
            RunRange(start, end, true);
        }
    }

    __aicore__ inline uint32_t TileLen(uint64_t a, uint64_t to)
    {
        const uint64_t left = to - a;
        return static_cast<uint32_t>(left < t_.tileLen ? left : t_.tileLen);
    }

    __aicore__ inline void LoadFlat(uint64_t off, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void RunRange(uint64_t from, uint64_t to, bool write)
    {
        const uint64_t tl = t_.tileLen;
        const uint64_t tiles = (to - from + tl - 1) / tl;
        LoadFlat(from, TileLen(from, to));
        for (uint64_t i = 0; i < tiles; ++i) {
            const uint64_t ts = from + i * tl;
            if (i + 1 < tiles) {
                LoadFlat(ts + tl, TileLen(ts + tl, to));   // prefetch the next tile
            }
            LocalTensor<T> x = inQ_.DeQue<T>();
            ComputeTile(x, ts, TileLen(ts, to), write);
            inQ_.FreeTensor(x);
        }
    }

    // True when the next len elements contain the first element of a row.
    __aicore__ inline bool HasRowStart(uint32_t len)
    {
        const uint32_t pw = pos_ >= t_.r ? 0 : pos_;
        return pw == 0 || pw + len > t_.r;
    }

    __aicore__ inline float MinOf(LocalTensor<float>& f, uint32_t a, uint32_t len)
    {
        LocalTensor<float> src = f[a];
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        ReduceMin(red, src, tmp, static_cast<int32_t>(len), false);
        SyncVS();
        return red.GetValue(0);
    }

    // Nothing in [a, a + len) updates the scan: repeat the running minimum and its index.
    __aicore__ inline void Fill(LocalTensor<float>& f, LocalTensor<T>& v, uint32_t a, uint32_t len, bool write)
    {
        pos_ = (pos_ >= t_.r ? 0 : pos_) + len;
        if (!write) {
            return;
        }
        const int32_t cnt = static_cast<int32_t>(len);
        if constexpr (IS_16) {
            LocalTensor<float> d = f[a];
            Duplicate(d, curF_, cnt);
        } else {
            LocalTensor<T> d = v[a];
            Duplicate(d, cur_, cnt);
        }
        LocalTensor<int32_t> ib = iBuf_.Get<int32_t>();
        LocalTensor<int32_t> di = ib[a];
        Duplicate(di, curIdx_, cnt);
        pendingV_ = true;
    }

    // Scalar scan of [a, a + len), restarting at every row start.
    __aicore__ inline void Scan(LocalTensor<T>& x, LocalTensor<float>& f, LocalTensor<T>& v, uint32_t a, uint32_t len,
                                bool write)
    {
        if (pendingV_) {   // a Fill (vector Duplicate) ran since the last V->S flag
            SyncVS();
        }
        LocalTensor<int32_t> ib = iBuf_.Get<int32_t>();
        const uint32_t r = t_.r;
        uint32_t pos = pos_;
        ST cur = cur_;
        float curF = curF_;
        int32_t ci = curIdx_;
        const uint32_t stop = a + len;
        for (uint32_t p = a; p < stop; ++p) {
            if (pos >= r) {
                pos = 0;
            }
            ST val;
            bool take;
            if constexpr (IS_I32) {
                val = x.GetValue(p);
                take = (pos == 0) || (val <= cur);
            } else {
                val = f.GetValue(p);
                take = (pos == 0) || (val != val) || ((cur == cur) && (val <= cur));
            }
            if (take) {
                cur = val;
                ci = static_cast<int32_t>(pos);
                if constexpr (IS_I32) {
                    curF = f.GetValue(p);
                } else {
                    curF = val;
                }
            }
            if (write) {
                if constexpr (IS_16) {
                    f.SetValue(p, cur);
                } else {
                    v.SetValue(p, cur);
                }
                ib.SetValue(p, ci);
            }
            ++pos;
        }
        pos_ = pos;
        cur_ = cur;
        curF_ = curF;
        curIdx_ = ci;
    }

    __aicore__ inline void ComputeTile(LocalTensor<T>& x, uint64_t ts, uint32_t n, bool write)
    {
        LocalTensor<float> f;
        if constexpr (IS_F32) {
            f = x;
        } else if constexpr (IS_I32) {
            f = fBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_RINT, n);
        } else {
            f = fBuf_.Get<float>();
            Cast(f, x, RoundMode::CAST_NONE, n);
        }
        LocalTensor<T> v;
        LocalTensor<int64_t> ix;
        if (write) {
            v = valQ_.AllocTensor<T>();
            ix = idxQ_.AllocTensor<int64_t>();
        }
        SyncVS();   // the scalar unit reads the tile (MTE2/V) and writes buffers the V/MTE3 side used
        bool done = false;
        if (!HasRowStart(n)) {
            if (MinOf(f, 0, n) > curF_) {
                Fill(f, v, 0, n, write);
                done = true;
            }
        }
        if (!done) {
            for (uint32_t a = 0; a < n; a += CUMMIN_SUB) {
                const uint32_t len = (n - a < CUMMIN_SUB) ? n - a : CUMMIN_SUB;
                if (!HasRowStart(len)) {
                    if (MinOf(f, a, len) > curF_) {
                        Fill(f, v, a, len, write);
                        continue;
                    }
                }
                Scan(x, f, v, a, len, write);
            }
        }
        if (write) {
            SyncSV();   // scalar SetValue results must land before the vector unit reads them
            if constexpr (IS_16) {
                Cast(v, f, RoundMode::CAST_RINT, n);
            }
            LocalTensor<int32_t> ib = iBuf_.Get<int32_t>();
            Cast(ix, ib, RoundMode::CAST_NONE, n);
            valQ_.EnQue(v);
            idxQ_.EnQue(ix);
            v = valQ_.DeQue<T>();
            ix = idxQ_.DeQue<int64_t>();
            DataCopyExtParams cv{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[ts], v, cv);
            DataCopyExtParams ci{1, static_cast<uint32_t>(n * sizeof(int64_t)), 0, 0, 0};
            DataCopyPad(iGm_[ts], ix, ci);
            valQ_.FreeTensor(v);
            idxQ_.FreeTensor(ix);
        }
    }

    // ======================= mode 1: scan across rows, vector over columns =======================
    __aicore__ inline void LoadRows(uint64_t off, uint32_t m, uint32_t n)
    {
        LocalTensor<T> x = inQ_.AllocTensor<T>();
        const uint32_t rowBytes = static_cast<uint32_t>(n * sizeof(T));
        const uint32_t ubGap = static_cast<uint32_t>((t_.stride * sizeof(T) - (rowBytes + 31) / 32 * 32) / 32);
        const uint32_t gmGap = static_cast<uint32_t>((t_.inner - n) * sizeof(T));
        DataCopyExtParams cp{static_cast<uint16_t>(m), rowBytes, gmGap, ubGap, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void ProcessCols()
    {
        const uint32_t k = t_.rowsPerTile;
        const uint32_t r = t_.r;
        const uint32_t inner = t_.inner;
        const uint32_t w = t_.chunk;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t o = u / t_.chunks;
            const uint32_t col = (u % t_.chunks) * w;
            const uint32_t n = (inner - col < w) ? inner - col : w;
            const uint64_t base = static_cast<uint64_t>(o) * r * inner + col;
            const uint32_t groups = (r + k - 1) / k;
            LoadRows(base, (r < k) ? r : k, n);
            for (uint32_t g = 0; g < groups; ++g) {
                const uint32_t i0 = g * k;
                const uint32_t m = (r - i0 < k) ? r - i0 : k;
                if (g + 1 < groups) {
                    const uint32_t i1 = i0 + k;
                    LoadRows(base + static_cast<uint64_t>(i1) * inner, (r - i1 < k) ? r - i1 : k, n);
                }
                LocalTensor<T> x = inQ_.DeQue<T>();
                ComputeGroup(x, base + static_cast<uint64_t>(i0) * inner, i0, m, n);
                inQ_.FreeTensor(x);
            }
        }
    }

    __aicore__ inline void ComputeGroup(LocalTensor<T>& x, uint64_t off, uint32_t i0, uint32_t m, uint32_t n)
    {
        const uint32_t s = t_.stride;
        const int32_t cnt = static_cast<int32_t>(n);
        const float big = 1.2676506e30f;   // 2^100
        LocalTensor<T> v = valQ_.AllocTensor<T>();
        LocalTensor<int64_t> ix = idxQ_.AllocTensor<int64_t>();
        LocalTensor<ST> xs;
        LocalTensor<ST> vs;
        if constexpr (IS_16) {
            LocalTensor<float> xf = fBuf_.Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, m * s);
            xs = xf;
            vs = vBuf_.Get<float>();
        } else {
            xs = x;
            vs = v;
        }
        LocalTensor<float> iF = ifBuf_.Get<float>();
        LocalTensor<float> dF = dBuf_.Get<float>();
        LocalTensor<float> tF = tBuf_.Get<float>();
        LocalTensor<ST> vc = vcBuf_.Get<ST>();
        LocalTensor<float> ic = icBuf_.Get<float>();
        for (uint32_t j = 0; j < m; ++j) {
            const uint32_t i = i0 + j;
            LocalTensor<ST> xr = xs[j * s];
            LocalTensor<ST> vr = vs[j * s];
            LocalTensor<float> ir = iF[j * s];
            if (i == 0) {
                Min(vr, xr, xr, cnt);
                Duplicate(ir, 0.0f, cnt);
                continue;
            }
            LocalTensor<ST> vp = (j == 0) ? vc : vs[(j - 1) * s];
            LocalTensor<float> ip = (j == 0) ? ic : iF[(j - 1) * s];
            Min(vr, vp, xr, cnt);
            if constexpr (IS_I32) {
                LocalTensor<int32_t> dI = diBuf_.Get<int32_t>();
                Sub(dI, xr, vr, cnt);                       // 0 exactly when x <= previous minimum
                Cast(dF, dI, RoundMode::CAST_RINT, cnt);    // nonzero ints stay nonzero (|.| >= 1)
                Abs(dF, dF, cnt);
                Mins(dF, dF, 1.0f, cnt);
            } else {
                Sub(dF, xr, vr, cnt);                       // >= 0, 0 exactly when x <= previous minimum
                Muls(dF, dF, big, cnt);
                Mins(dF, dF, 1.0f, cnt);
                Muls(dF, dF, big, cnt);
                Mins(dF, dF, 1.0f, cnt);                    // 1: keep the old index, 0: take i
            }
            const float fi = static_cast<float>(i);
            Adds(tF, ip, -fi, cnt);
            Mul(tF, tF, dF, cnt);
            Adds(ir, tF, fi, cnt);
        }
        LocalTensor<ST> vl = vs[(m - 1) * s];
        Min(vc, vl, vl, cnt);                               // carry the last row to the next group
        LocalTensor<float> il = iF[(m - 1) * s];
        Min(ic, il, il, cnt);
        if constexpr (IS_16) {
            Cast(v, vs, RoundMode::CAST_RINT, m * s);
        }
        LocalTensor<int32_t> i32 = iBuf_.Get<int32_t>();
        Cast(i32, iF, RoundMode::CAST_RINT, m * s);
        Cast(ix, i32, RoundMode::CAST_NONE, m * s);
        valQ_.EnQue(v);
        idxQ_.EnQue(ix);
        v = valQ_.DeQue<T>();
        ix = idxQ_.DeQue<int64_t>();
        const uint32_t inner = t_.inner;
        const uint32_t vBytes = static_cast<uint32_t>(n * sizeof(T));
        const uint32_t vGap = static_cast<uint32_t>((s * sizeof(T) - (vBytes + 31) / 32 * 32) / 32);
        DataCopyExtParams cv{static_cast<uint16_t>(m), vBytes, vGap, static_cast<uint32_t>((inner - n) * sizeof(T)), 0};
        DataCopyPad(yGm_[off], v, cv);
        const uint32_t iBytes = static_cast<uint32_t>(n * sizeof(int64_t));
        const uint32_t iGap = static_cast<uint32_t>((s * sizeof(int64_t) - (iBytes + 31) / 32 * 32) / 32);
        DataCopyExtParams cx{static_cast<uint16_t>(m), iBytes, iGap,
                             static_cast<uint32_t>((inner - n) * sizeof(int64_t)), 0};
        DataCopyPad(iGm_[off], ix, cx);
        valQ_.FreeTensor(v);
        idxQ_.FreeTensor(ix);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECOUT, 1> valQ_;
    TQue<TPosition::VECOUT, 1> idxQ_;
    TBuf<TPosition::VECCALC> fBuf_, vBuf_, iBuf_, ifBuf_, tmpBuf_, redBuf_, dBuf_, tBuf_, diBuf_, vcBuf_, icBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<int64_t> iGm_;
    CumminCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    // mode-0 scan state
    uint32_t pos_ = 0;     // position in its row of the next element
    ST cur_ = 0;           // running minimum
    float curF_ = 0.0f;    // its float image (screening)
    int32_t curIdx_ = 0;   // its index
    bool pendingV_ = false;   // vector writes issued since the last V->S flag
};

extern "C" __global__ __aicore__ void cummin_custom(GM_ADDR input, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);   // vector-only kernel: one block per AIV core
    GET_TILING_DATA(t, tiling);
    KernelCummin<DTYPE_INPUT> op;
    op.Init(input, values, indices, t);
    op.Process();
}

namespace optiling {
static void SplitUnits(CumminCustomTilingData* t, uint64_t units, uint64_t coreNum, gert::TilingContext* context)
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
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    const bool is16 = (dt == ge::DT_FLOAT16 || dt == ge::DT_BF16);
    const bool isF32 = (dt == ge::DT_FLOAT);
    const uint64_t bytes = is16 ? 2 : 4;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    const uint64_t budget = ub - 16384;

    CumminCustomTilingData* t = context->GetTilingData<CumminCustomTilingData>();
    const uint64_t total = outer * r * inner;
    t->r = static_cast<uint32_t>(r);
    t->inner = static_cast<uint32_t>(inner);
    t->total = static_cast<uint32_t>(total);
    t->tileLen = CUMMIN_SUB;
    t->chunk = 1;
    t->chunks = 1;
    t->stride = 16;
    t->rowsPerTile = 1;
    if (total == 0) {
        t->mode = 0;
        SplitUnits(t, 0, coreNum, context);
    } else if (inner == 1) {
        t->mode = 0;
        // two input, two value and two int64 index buffers, the float image, int32 indices, reduce tmp
        const uint64_t perElem = 4 * bytes + 16 + (isF32 ? 0 : 4) + 4 + 4;
        uint64_t tile = budget / perElem / CUMMIN_SUB * CUMMIN_SUB;
        tile = tile > 8192 ? 8192 : tile;
        tile = tile < CUMMIN_SUB ? CUMMIN_SUB : tile;
        t->tileLen = static_cast<uint32_t>(tile);
        SplitUnits(t, (total + CUMMIN_SUB - 1) / CUMMIN_SUB, coreNum, context);
    } else {
        t->mode = 1;
        const uint64_t innerPad = (inner + 15) / 16 * 16;
        uint64_t w = innerPad < 1024 ? innerPad : 1024;
        if (outer * ((inner + w - 1) / w) < coreNum && inner > 64) {   // few slices: spread the columns
            uint64_t spread = ((outer * inner + coreNum - 1) / coreNum + 63) / 64 * 64;
            spread = spread < 64 ? 64 : spread;
            w = spread < w ? spread : w;
        }
        if (w >= inner) {
            w = inner;
        }
        const uint64_t chunks = (inner + w - 1) / w;
        const uint64_t s = (w + 15) / 16 * 16;
        const uint64_t perElem = 4 * bytes + 16 + (is16 ? 8 : 0) + 8;
        const uint64_t small = 5 * s * 4 + 256;
        uint64_t k = (budget - small) / perElem / s;
        k = k > r ? r : k;
        k = k > 4095 ? 4095 : k;
        k = k == 0 ? 1 : k;
        t->chunk = static_cast<uint32_t>(w);
        t->chunks = static_cast<uint32_t>(chunks);
        t->stride = static_cast<uint32_t>(s);
        t->rowsPerTile = static_cast<uint32_t>(k);
        SplitUnits(t, outer * chunks, coreNum, context);
    }
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (cummin).
class CumminCustom : public OpDef {
public:
    explicit CumminCustom(const char* name) : OpDef(name)
    {
        this->Input("input")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("values")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("indices")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(REQUIRED).Int();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(CumminCustom);
}  // namespace ops
