#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct ApplyRotaryPosEmbCustomTilingData {
    uint32_t layout;       // 0: [B,S,N,D], 1: [B,N,S,D]
    uint32_t mode;         // 0: half, 1: interleaved
    uint32_t b;
    uint32_t s;
    uint32_t n;
    uint32_t d;
    uint32_t h;            // d / 2
    uint32_t dp;           // row stride in UB (elements, 32 B multiple for the input type)
    uint32_t hpc;          // cos / sin plane row stride in UB
    uint32_t cos3d;        // cos / sin are (B, S, D/2)
    uint32_t rep;          // rows sharing one cos row inside a tile: n (layout 0) or 1 (layout 1)
    uint32_t units;        // layout 0: B*S groups of n rows; layout 1: rows
    uint32_t formerNum;    // the first formerNum cores take formerUnits units, the rest tailUnits
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t mRows;        // rows per tile (pattern size)
    uint32_t tileUnits;    // units per tile (rep <= mRows)
    uint32_t planeRows;    // cos / sin plane rows per tile (max)
};
REGISTER_TILING_DEFAULT(ApplyRotaryPosEmbCustomTilingData);

using namespace AscendC;

// y = x * cos_full + rot(x) * sin_full, computed in fp32 over whole tiles of rows:
//   cos_full / signed sin_full are gathered from the cos / sin planes (one row per position, [sin | -sin]),
//   rot(x) without its sign is one Gather of x (halves swapped, or pairs swapped for interleaved);
//   the Gather byte-offset patterns are built once per core with vector integer ops.
template <typename T>
class KernelRope {
public:
    static constexpr bool IS_F32 = (sizeof(T) == 4);

    __aicore__ inline KernelRope() {}

    __aicore__ inline void Init(GM_ADDR q, GM_ADDR k, GM_ADDR c, GM_ADDR s, GM_ADDR qo, GM_ADDR ko,
                                const ApplyRotaryPosEmbCustomTilingData& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        if (idx < t.formerNum) {
            uCount_ = t.formerUnits;
            uFirst_ = idx * t.formerUnits;
        } else {
            uCount_ = t.tailUnits;
            uFirst_ = t.formerNum * t.formerUnits + (idx - t.formerNum) * t.tailUnits;
        }
        if (uFirst_ >= t.units) {
            uCount_ = 0;
            return;
        }
        const uint64_t total = static_cast<uint64_t>(t.b) * t.s * t.n * t.d;
        const uint64_t cTotal = static_cast<uint64_t>(t.cos3d != 0 ? t.b : 1) * t.s * t.h;
        qGm_.SetGlobalBuffer((__gm__ T*)q, total);
        kGm_.SetGlobalBuffer((__gm__ T*)k, total);
        qoGm_.SetGlobalBuffer((__gm__ T*)qo, total);
        koGm_.SetGlobalBuffer((__gm__ T*)ko, total);
        cGm_.SetGlobalBuffer((__gm__ T*)c, cTotal);
        sGm_.SetGlobalBuffer((__gm__ T*)s, cTotal);
        const uint32_t nEl = t.mRows * t.dp;
        pl_ = t.planeRows * t.hpc;
        // two buffer sets (ping-pong): q, k and the cos / sin staging of a tile, results written in place
        for (uint32_t b = 0; b < 2; ++b) {
            pipe_.InitBuffer(qBuf_[b], nEl * sizeof(T));
            pipe_.InitBuffer(kBuf_[b], nEl * sizeof(T));
            pipe_.InitBuffer(cStBuf_[b], pl_ * sizeof(T));
            pipe_.InitBuffer(sStBuf_[b], pl_ * sizeof(T));
        }
        pipe_.InitBuffer(xfBuf_, IS_F32 ? 32 : nEl * sizeof(float));
        pipe_.InitBuffer(swBuf_, nEl * sizeof(float));
        pipe_.InitBuffer(c2Buf_, nEl * sizeof(float));
        pipe_.InitBuffer(s2Buf_, nEl * sizeof(float));
        pipe_.InitBuffer(patCBuf_, nEl * sizeof(uint32_t));
        pipe_.InitBuffer(patSBuf_, nEl * sizeof(uint32_t));
        pipe_.InitBuffer(patWBuf_, nEl * sizeof(uint32_t));
        pipe_.InitBuffer(cosFBuf_, pl_ * sizeof(float));
        pipe_.InitBuffer(sinFBuf_, 2 * pl_ * sizeof(float));     // [sin | -sin]
    }

    __aicore__ inline void Process()
    {
        if (uCount_ == 0) {
            return;
        }
        BuildPatterns();
        TEventID evIn[2];
        TEventID evOut[2];
        TEventID evFree[2];
        for (uint32_t b = 0; b < 2; ++b) {
            evIn[b] = pipe_.AllocEventID<HardEvent::MTE2_V>();
            evOut[b] = pipe_.AllocEventID<HardEvent::V_MTE3>();
            evFree[b] = pipe_.AllocEventID<HardEvent::MTE3_MTE2>();
        }
        const uint32_t nTiles = TileCount();
        // ping-pong: the loads of tile i+1 run while tile i is computed and stored
        Load(0, 0);
        SetFlag<HardEvent::MTE2_V>(static_cast<event_t>(evIn[0]));
        for (uint32_t i = 0; i < nTiles; ++i) {
            const uint32_t b = i & 1;
            const uint32_t nb = b ^ 1;
            if (i + 1 < nTiles) {
                if (i + 1 >= 2) {
                    WaitFlag<HardEvent::MTE3_MTE2>(static_cast<event_t>(evFree[nb]));
                }
                Load(i + 1, nb);
                SetFlag<HardEvent::MTE2_V>(static_cast<event_t>(evIn[nb]));
            }
            WaitFlag<HardEvent::MTE2_V>(static_cast<event_t>(evIn[b]));
            Compute(i, b);
            SetFlag<HardEvent::V_MTE3>(static_cast<event_t>(evOut[b]));
            WaitFlag<HardEvent::V_MTE3>(static_cast<event_t>(evOut[b]));
            Store(i, b);
            SetFlag<HardEvent::MTE3_MTE2>(static_cast<event_t>(evFree[b]));
        }
        WaitFlag<HardEvent::MTE3_MTE2>(static_cast<event_t>(evFree[(nTiles - 1) & 1]));
        if (nTiles >= 2) {
            WaitFlag<HardEvent::MTE3_MTE2>(static_cast<event_t>(evFree[(nTiles - 2) & 1]));
        }
        for (uint32_t b = 0; b < 2; ++b) {
            pipe_.ReleaseEventID<HardEvent::MTE2_V>(evIn[b]);
            pipe_.ReleaseEventID<HardEvent::V_MTE3>(evOut[b]);
            pipe_.ReleaseEventID<HardEvent::MTE3_MTE2>(evFree[b]);
        }
    }

private:
    // byte-offset patterns for one tile of mRows rows at stride dp, element e = i * dp + j:
    //   patC: cos plane  ((i / rep) * hpc + col(j)) * 4
    //   patS: sin planes patC + (negative lane ? plane bytes : 0)   ([sin | -sin])
    //   patW: x          (i * dp + swap(j)) * 4
    // half: col = j mod h, swap = (j + h) mod d, negative for j < h; interleaved: col = j >> 1, swap = j ^ 1,
    // negative for even j; pad lanes (j >= d) are clamped to d - 1 so every offset stays inside its buffer
    __aicore__ inline void BuildPatterns()
    {
        const uint32_t D = t_.d;
        const uint32_t H = t_.h;
        const int32_t nEl = static_cast<int32_t>(t_.mRows * t_.dp);
        LocalTensor<int32_t> A = patSBuf_.Get<int32_t>();
        LocalTensor<uint32_t> AU = patSBuf_.Get<uint32_t>();
        LocalTensor<int32_t> J = patWBuf_.Get<int32_t>();
        LocalTensor<uint32_t> JU = patWBuf_.Get<uint32_t>();
        LocalTensor<int32_t> X = patCBuf_.Get<int32_t>();
        LocalTensor<int32_t> I = s2Buf_.Get<int32_t>();
        LocalTensor<int32_t> Tt = swBuf_.Get<int32_t>();
        LocalTensor<float> F = c2Buf_.Get<float>();
        LocalTensor<int32_t> Y = c2Buf_.Get<int32_t>();   // F is dead when Y is written

        Arange(A, static_cast<int32_t>(0), static_cast<int32_t>(1), nEl);                      // e
        Arange(F, 0.5f, 1.0f, nEl);
        Muls(F, F, 1.0f / static_cast<float>(t_.dp), nEl);
        Cast(I, F, RoundMode::CAST_FLOOR, static_cast<uint32_t>(nEl));                           // i = e / dp
        Muls(Tt, I, static_cast<int32_t>(t_.dp), nEl);                                            // i * dp
        Sub(J, A, Tt, nEl);                                                                        // j
        Mins(J, J, static_cast<int32_t>(D - 1), nEl);                                             // clamp pads
        Cast(F, I, RoundMode::CAST_NONE, static_cast<uint32_t>(nEl));
        Adds(F, F, 0.5f, nEl);
        Muls(F, F, 1.0f / static_cast<float>(t_.rep), nEl);
        Cast(I, F, RoundMode::CAST_FLOOR, static_cast<uint32_t>(nEl));                           // g = i / rep
        Muls(I, I, static_cast<int32_t>(t_.hpc), nEl);                                           // g * hpc
        if (t_.mode == 0) {
            Cast(F, J, RoundMode::CAST_NONE, static_cast<uint32_t>(nEl));
            Adds(F, F, 0.5f, nEl);
            Muls(F, F, 1.0f / static_cast<float>(H), nEl);
            Cast(A, F, RoundMode::CAST_FLOOR, static_cast<uint32_t>(nEl));                       // q = j >= h
            Muls(X, A, static_cast<int32_t>(H), nEl);
            Sub(X, J, X, nEl);                                                                     // col = j - h q
            Muls(Y, A, static_cast<int32_t>(-static_cast<int32_t>(H)), nEl);
            Adds(Y, Y, static_cast<int32_t>(H), nEl);
            Add(Y, Y, X, nEl);                                                                     // swap = col + h (1 - q)
        } else {
            ShiftLeft(AU, JU, static_cast<uint32_t>(31), nEl);
            ShiftRight(AU, AU, static_cast<uint32_t>(31), nEl);                                  // b = j & 1
            ShiftRight(X.template ReinterpretCast<uint32_t>(), JU, static_cast<uint32_t>(1), nEl); // col = j >> 1
            Muls(Y, A, static_cast<int32_t>(-2), nEl);
            Adds(Y, Y, static_cast<int32_t>(1), nEl);
            Add(Y, Y, J, nEl);                                                                     // swap = j + 1 - 2 b
        }
        // A = 1 for a positive lane (q or b), negative lanes take -sin
        Muls(A, A, static_cast<int32_t>(-1), nEl);
        Adds(A, A, static_cast<int32_t>(1), nEl);                                                 // neg
        Add(X, X, I, nEl);
        Muls(X, X, static_cast<int32_t>(4), nEl);                                                 // patC
        Muls(A, A, static_cast<int32_t>(pl_ * 4), nEl);
        Add(A, A, X, nEl);                                                                         // patS
        Add(J, Tt, Y, nEl);
        Muls(J, J, static_cast<int32_t>(4), nEl);                                                 // patW
    }

    // cos / sin rows of the tile's positions: contiguous runs that break where the position wraps at s
    __aicore__ inline void LoadPlanes(LocalTensor<T>& cDst, LocalTensor<T>& sDst, uint64_t xStart, uint32_t planeRows)
    {
        const uint64_t S = t_.s;
        const uint32_t rowBytes = t_.h * sizeof(T);
        const bool packed = (t_.hpc == t_.h);
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        uint64_t x = xStart;
        uint32_t pr = 0;
        while (pr < planeRows) {
            const uint64_t sMod = x % S;
            uint64_t run = S - sMod;
            if (run > planeRows - pr) {
                run = planeRows - pr;
            }
            uint64_t cr = sMod;
            if (t_.cos3d != 0) {
                cr = (t_.layout == 0) ? x : (x / (static_cast<uint64_t>(t_.n) * S)) * S + sMod;
            }
            DataCopyExtParams cp{static_cast<uint16_t>(run), rowBytes, 0, 0, 0};
            if (packed) {
                cp.blockCount = 1;
                cp.blockLen = static_cast<uint32_t>(run * rowBytes);   // rows are 32 B multiples: one segment
            }
            DataCopyPad(cDst[pr * t_.hpc], cGm_[cr * t_.h], cp, pad);
            DataCopyPad(sDst[pr * t_.hpc], sGm_[cr * t_.h], cp, pad);
            pr += static_cast<uint32_t>(run);
            x += run;
        }
    }

    __aicore__ inline uint32_t TileCount()
    {
        if (t_.rep <= t_.mRows) {
            return (uCount_ + t_.tileUnits - 1) / t_.tileUnits;
        }
        const uint32_t cpu = (t_.rep + t_.mRows - 1) / t_.mRows;
        return uCount_ * cpu;
    }

    // tile i of this core: first row, rows, first position index (group or row), cos / sin plane rows
    __aicore__ inline void TileAt(uint32_t i, uint64_t& rowStart, uint32_t& m, uint64_t& xStart, uint32_t& planeRows)
    {
        const uint32_t rep = t_.rep;
        const uint32_t uEnd = uFirst_ + uCount_;
        if (rep <= t_.mRows) {
            const uint32_t u = uFirst_ + i * t_.tileUnits;
            uint32_t tu = uEnd - u;
            if (tu > t_.tileUnits) {
                tu = t_.tileUnits;
            }
            rowStart = static_cast<uint64_t>(u) * rep;
            m = tu * rep;
            xStart = (t_.layout == 0) ? u : rowStart;
            planeRows = (t_.layout == 0) ? tu : m;
        } else {
            const uint32_t cpu = (rep + t_.mRows - 1) / t_.mRows;
            const uint32_t u = uFirst_ + i / cpu;
            const uint32_t c = (i % cpu) * t_.mRows;
            m = (rep - c < t_.mRows) ? (rep - c) : t_.mRows;
            rowStart = static_cast<uint64_t>(u) * rep + c;
            xStart = u;
            planeRows = 1;
        }
    }

    __aicore__ inline DataCopyExtParams RowCopy(uint32_t m)
    {
        const uint32_t D = t_.d;
        if (t_.dp == D) {
            // rows are 32 B multiples: the whole tile is one contiguous segment
            return DataCopyExtParams{1, static_cast<uint32_t>(m * D * sizeof(T)), 0, 0, 0};
        }
        return DataCopyExtParams{static_cast<uint16_t>(m), static_cast<uint32_t>(D * sizeof(T)), 0, 0, 0};
    }

    __aicore__ inline void Load(uint32_t i, uint32_t b)
    {
        uint64_t rowStart = 0;
        uint32_t m = 0;
        uint64_t xStart = 0;
        uint32_t planeRows = 0;
        TileAt(i, rowStart, m, xStart, planeRows);
        DataCopyExtParams cx = RowCopy(m);
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        LocalTensor<T> qx = qBuf_[b].Get<T>();
        LocalTensor<T> kx = kBuf_[b].Get<T>();
        DataCopyPad(qx, qGm_[rowStart * t_.d], cx, pad);
        DataCopyPad(kx, kGm_[rowStart * t_.d], cx, pad);
        LocalTensor<T> cs = cStBuf_[b].Get<T>();
        LocalTensor<T> ss = sStBuf_[b].Get<T>();
        LoadPlanes(cs, ss, xStart, planeRows);
    }

    __aicore__ inline void Compute(uint32_t i, uint32_t b)
    {
        uint64_t rowStart = 0;
        uint32_t m = 0;
        uint64_t xStart = 0;
        uint32_t planeRows = 0;
        TileAt(i, rowStart, m, xStart, planeRows);
        const uint32_t n = m * t_.dp;
        const int32_t ni = static_cast<int32_t>(n);
        const int32_t pn = static_cast<int32_t>(planeRows * t_.hpc);
        LocalTensor<float> cosF = cosFBuf_.Get<float>();
        LocalTensor<float> sinF = sinFBuf_.Get<float>();
        if constexpr (IS_F32) {
            Muls(cosF, cStBuf_[b].Get<float>(), 1.0f, pn);
            Muls(sinF, sStBuf_[b].Get<float>(), 1.0f, pn);
        } else {
            Cast(cosF, cStBuf_[b].Get<T>(), RoundMode::CAST_NONE, static_cast<uint32_t>(pn));
            Cast(sinF, sStBuf_[b].Get<T>(), RoundMode::CAST_NONE, static_cast<uint32_t>(pn));
        }
        Muls(sinF[pl_], sinF, -1.0f, pn);
        LocalTensor<float> c2 = c2Buf_.Get<float>();
        LocalTensor<float> s2 = s2Buf_.Get<float>();
        Gather(c2, cosF, patCBuf_.Get<uint32_t>(), static_cast<uint32_t>(0), n);
        Gather(s2, sinF, patSBuf_.Get<uint32_t>(), static_cast<uint32_t>(0), n);
        LocalTensor<T> qx = qBuf_[b].Get<T>();
        LocalTensor<T> kx = kBuf_[b].Get<T>();
        Rotate(qx, ni);
        Rotate(kx, ni);
    }

    __aicore__ inline void Store(uint32_t i, uint32_t b)
    {
        uint64_t rowStart = 0;
        uint32_t m = 0;
        uint64_t xStart = 0;
        uint32_t planeRows = 0;
        TileAt(i, rowStart, m, xStart, planeRows);
        DataCopyExtParams cx = RowCopy(m);
        DataCopyPad(qoGm_[rowStart * t_.d], qBuf_[b].Get<T>(), cx);
        DataCopyPad(koGm_[rowStart * t_.d], kBuf_[b].Get<T>(), cx);
    }

    // x tile (input type, stride dp) -> y in place: y = x * c2 + swap(x) * s2 (s2 carries the sign)
    __aicore__ inline void Rotate(LocalTensor<T>& x, int32_t ni)
    {
        LocalTensor<float> c2 = c2Buf_.Get<float>();
        LocalTensor<float> s2 = s2Buf_.Get<float>();
        LocalTensor<float> sw = swBuf_.Get<float>();
        LocalTensor<uint32_t> patW = patWBuf_.Get<uint32_t>();
        if constexpr (IS_F32) {
            LocalTensor<float> xf = x.template ReinterpretCast<float>();
            Gather(sw, xf, patW, static_cast<uint32_t>(0), static_cast<uint32_t>(ni));
            Mul(xf, xf, c2, ni);
            Mul(sw, sw, s2, ni);
            Add(xf, xf, sw, ni);
        } else {
            LocalTensor<float> xf = xfBuf_.Get<float>();
            Cast(xf, x, RoundMode::CAST_NONE, static_cast<uint32_t>(ni));
            Gather(sw, xf, patW, static_cast<uint32_t>(0), static_cast<uint32_t>(ni));
            Mul(xf, xf, c2, ni);
            Mul(sw, sw, s2, ni);
            Add(xf, xf, sw, ni);
            Cast(x, xf, RoundMode::CAST_RINT, static_cast<uint32_t>(ni));
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> qBuf_[2], kBuf_[2], cStBuf_[2], sStBuf_[2];
    TBuf<TPosition::VECCALC> xfBuf_, swBuf_, c2Buf_, s2Buf_, patCBuf_, patSBuf_, patWBuf_, cosFBuf_, sinFBuf_;
    GlobalTensor<T> qGm_, kGm_, qoGm_, koGm_, cGm_, sGm_;
    ApplyRotaryPosEmbCustomTilingData t_;
    uint32_t uFirst_ = 0;
    uint32_t uCount_ = 0;
    uint32_t pl_ = 0;
};

extern "C" __global__ __aicore__ void apply_rotary_pos_emb_custom(GM_ADDR query, GM_ADDR key, GM_ADDR cos,
                                                                  GM_ADDR sin, GM_ADDR query_out, GM_ADDR key_out,
                                                                  GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelRope<DTYPE_QUERY> op;
    op.Init(query, key, cos, sin, query_out, key_out, t);
    op.Process();
}

namespace optiling {
static bool RopeStrEq(const char* a, const char* b)
{
    if (a == nullptr) {
        return false;
    }
    while (*a != '\0' && *b != '\0') {
        if (*a != *b) {
            return false;
        }
        ++a;
        ++b;
    }
    return *a == '\0' && *b == '\0';
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& qs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& cs = context->GetInputShape(2)->GetStorageShape();
    if (qs.GetDimNum() != 4) {
        return ge::GRAPH_FAILED;
    }
    int64_t layout = 0;
    uint32_t mode = 0;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* lp = attrs->GetAttrPointer<int64_t>(0);
        if (lp != nullptr) {
            layout = *lp;
        }
        const char* mp = attrs->GetAttrPointer<char>(1);
        if (RopeStrEq(mp, "interleaved")) {
            mode = 1;
        }
    }
    const uint64_t d0 = static_cast<uint64_t>(qs.GetDim(0));
    const uint64_t d1 = static_cast<uint64_t>(qs.GetDim(1));
    const uint64_t d2 = static_cast<uint64_t>(qs.GetDim(2));
    const uint64_t D = static_cast<uint64_t>(qs.GetDim(3));
    const uint64_t B = d0;
    const uint64_t S = (layout == 1) ? d2 : d1;
    const uint64_t N = (layout == 1) ? d1 : d2;
    if (D < 2 || S == 0 || N == 0 || B == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t H = D / 2;
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    const uint64_t sz = (dt == ge::DT_FLOAT) ? 4 : 2;
    const uint64_t al = 32 / sz;
    const uint64_t dp = (D + al - 1) / al * al;
    const uint64_t hpc = (H + al - 1) / al * al;
    const uint32_t cos3d = (cs.GetDimNum() == 3) ? 1 : 0;

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
    // per row element: two ping-pong sets of q, k (input type), fp32 x (16-bit only), swap, c2, s2 and three
    // u32 patterns; per plane row element: two staging sets of cos, sin + fp32 cos, sin, -sin
    const uint64_t cRow = dp * (4 * sz + (sz == 2 ? 4 : 0) + 24);
    const uint64_t cPlane = hpc * (4 * sz + 12);
    const uint64_t rows = B * S * N;
    const uint64_t rep = (layout == 1) ? 1 : N;
    const uint64_t units = rows / rep;
    uint64_t blockDim = units < coreNum ? units : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    const uint64_t formerNum = units % blockDim;
    const uint64_t formerUnits = units / blockDim + 1;
    const uint64_t tailUnits = units / blockDim;
    const uint64_t maxCoreUnits = (formerNum > 0) ? formerUnits : tailUnits;
    uint64_t tileUnits = 1;
    uint64_t mRows = 1;
    uint64_t planeRows = 1;
    const uint64_t unitBytes = (layout == 1) ? (cRow + cPlane) : (N * cRow + cPlane);
    if (unitBytes <= budget) {
        tileUnits = budget / unitBytes;
        if (tileUnits > maxCoreUnits) {
            tileUnits = maxCoreUnits;
        }
        if (tileUnits * rep > 4095) {
            tileUnits = 4095 / rep;
        }
        if (tileUnits < 1) {
            tileUnits = 1;
        }
        mRows = tileUnits * rep;
        planeRows = (layout == 1) ? mRows : tileUnits;
    } else {
        // one group of N rows does not fit: tiles inside a group, one cos row
        mRows = (budget - cPlane) / cRow;
        if (mRows < 1) {
            mRows = 1;
        }
        if (mRows >= rep) {
            mRows = rep - 1;
        }
        planeRows = 1;
    }
    if (mRows < 1) {
        mRows = 1;
    }

    ApplyRotaryPosEmbCustomTilingData* t = context->GetTilingData<ApplyRotaryPosEmbCustomTilingData>();
    t->layout = static_cast<uint32_t>(layout == 1 ? 1 : 0);
    t->mode = mode;
    t->b = static_cast<uint32_t>(B);
    t->s = static_cast<uint32_t>(S);
    t->n = static_cast<uint32_t>(N);
    t->d = static_cast<uint32_t>(D);
    t->h = static_cast<uint32_t>(H);
    t->dp = static_cast<uint32_t>(dp);
    t->hpc = static_cast<uint32_t>(hpc);
    t->cos3d = cos3d;
    t->rep = static_cast<uint32_t>(rep);
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(formerNum);
    t->formerUnits = static_cast<uint32_t>(formerUnits);
    t->tailUnits = static_cast<uint32_t>(tailUnits);
    t->mRows = static_cast<uint32_t>(mRows);
    t->tileUnits = static_cast<uint32_t>(tileUnits);
    t->planeRows = static_cast<uint32_t>(planeRows);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (apply_rotary_pos_emb).
class ApplyRotaryPosEmbCustom : public OpDef {
public:
    explicit ApplyRotaryPosEmbCustom(const char* name) : OpDef(name)
    {
        this->Input("query")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("key")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("cos")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("sin")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("query_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("key_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("layout").AttrType(OPTIONAL).Int(0);
        this->Attr("rotaryMode").AttrType(OPTIONAL).String("half");
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ApplyRotaryPosEmbCustom);
}  // namespace ops
