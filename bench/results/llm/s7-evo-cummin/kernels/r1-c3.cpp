#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t CUMMIN_TILE_BYTES = 98304;   // UB for the x / values / indices row tiles

struct CumminCustomTilingData {
    uint64_t mode;          // 1: vector scan over inner lanes, 0: scalar scan per line
    uint64_t lanes;         // vector mode: lanes per unit (multiple of 64)
    uint64_t chunks;        // vector mode: lane chunks per outer position
    uint64_t units;         // vector mode: outer * chunks
    uint64_t unitsPerCore;
    uint64_t outer;         // product of dims before dim
    uint64_t k;             // size of dim
    uint64_t inner;         // product of dims after dim
    uint64_t lines;         // outer * inner independent scans
    uint64_t linesPerCore;
    uint64_t total;
};
REGISTER_TILING_DEFAULT(CumminCustomTilingData);

using namespace AscendC;

// storage type and kind (0 int, 1 float, 2 half bits, 3 bf16 bits)
template <typename T> struct CumminStore { using U = T; static constexpr int KIND = 0; };
template <> struct CumminStore<float> { using U = float; static constexpr int KIND = 1; };
template <> struct CumminStore<half> { using U = uint16_t; static constexpr int KIND = 2; };
template <> struct CumminStore<bfloat16_t> { using U = uint16_t; static constexpr int KIND = 3; };

// torch.cummin update rule: take the new element when it is NaN, or when the running value is not
// NaN and new <= running (ties move the index to the later position, as torch's CPU kernel does)
template <typename U, int KIND>
__aicore__ inline bool CumminTake(U c, U m)
{
    if constexpr (KIND == 1) {
        if (c != c) {
            return true;
        }
        if (m != m) {
            return false;
        }
        return c <= m;
    } else if constexpr (KIND == 2 || KIND == 3) {
        constexpr uint32_t INF = (KIND == 2) ? 0x7c00u : 0x7f80u;
        const uint32_t cb = static_cast<uint32_t>(c);
        const uint32_t mb = static_cast<uint32_t>(m);
        const uint32_t ca = cb & 0x7fffu;
        const uint32_t ma = mb & 0x7fffu;
        if (ca > INF) {
            return true;
        }
        if (ma > INF) {
            return false;
        }
        if (ca == 0 && ma == 0) {
            return true;   // +0 == -0
        }
        const uint32_t ck = (cb & 0x8000u) != 0 ? (0xffffu - cb) : (cb | 0x8000u);
        const uint32_t mk = (mb & 0x8000u) != 0 ? (0xffffu - mb) : (mb | 0x8000u);
        return ck <= mk;
    } else {
        return c <= m;
    }
}

template <typename DT>
class CumminScalar {
public:
    using U = typename CumminStore<DT>::U;
    static constexpr int KIND = CumminStore<DT>::KIND;

    __aicore__ inline CumminScalar() {}

    __aicore__ inline void Init(GM_ADDR input, GM_ADDR values, GM_ADDR indices, const CumminCustomTilingData& t)
    {
        const uint64_t blk = static_cast<uint64_t>(GetBlockIdx());
        k_ = t.k;
        inner_ = t.inner;
        lStart_ = blk * t.linesPerCore;
        lEnd_ = lStart_;
        if (lStart_ >= t.lines) {
            return;
        }
        lEnd_ = lStart_ + t.linesPerCore;
        if (lEnd_ > t.lines) {
            lEnd_ = t.lines;
        }
        xGm_.SetGlobalBuffer((__gm__ U*)input, t.total);
        vGm_.SetGlobalBuffer((__gm__ U*)values, t.total);
        iGm_.SetGlobalBuffer((__gm__ int64_t*)indices, t.total);
    }

    __aicore__ inline void Process()
    {
        for (uint64_t l = lStart_; l < lEnd_; ++l) {
            const uint64_t o = l / inner_;
            const uint64_t r = l - o * inner_;
            uint64_t off = o * k_ * inner_ + r;
            U m = xGm_.GetValue(off);
            int64_t idx = 0;
            for (uint64_t kk = 0; kk < k_; ++kk) {
                const U c = xGm_.GetValue(off);
                if (CumminTake<U, KIND>(c, m)) {
                    m = c;
                    idx = static_cast<int64_t>(kk);
                }
                vGm_.SetValue(off, m);
                iGm_.SetValue(off, idx);
                off += inner_;
            }
        }
    }

private:
    GlobalTensor<U> xGm_;
    GlobalTensor<U> vGm_;
    GlobalTensor<int64_t> iGm_;
    uint64_t k_ = 1;
    uint64_t inner_ = 1;
    uint64_t lStart_ = 0;
    uint64_t lEnd_ = 0;
};

__aicore__ inline float CumminPosInf()
{
    union { uint32_t u; float f; } v;
    v.u = 0x7f800000u;
    return v.f;
}

// Vector scan when the scanned dim is not the last: the inner positions are the lanes. Per k the
// running min m and its index are updated with Compare (x <= m, x != x) and Select.
template <typename DT>
class CumminVector {
public:
    static constexpr bool IS_F32 = (CumminStore<DT>::KIND == 1);
    static constexpr bool IS_INT = (CumminStore<DT>::KIND == 0);

    __aicore__ inline CumminVector() {}

    __aicore__ inline void Init(GM_ADDR input, GM_ADDR values, GM_ADDR indices, const CumminCustomTilingData& t)
    {
        const uint64_t blk = static_cast<uint64_t>(GetBlockIdx());
        k_ = t.k;
        inner_ = t.inner;
        c_ = static_cast<uint32_t>(t.lanes);
        chunks_ = t.chunks;
        uStart_ = blk * t.unitsPerCore;
        uEnd_ = uStart_;
        if (uStart_ >= t.units) {
            return;
        }
        uEnd_ = uStart_ + t.unitsPerCore;
        if (uEnd_ > t.units) {
            uEnd_ = t.units;
        }
        xGm_.SetGlobalBuffer((__gm__ DT*)input, t.total);
        vGm_.SetGlobalBuffer((__gm__ DT*)values, t.total);
        iGm_.SetGlobalBuffer((__gm__ uint32_t*)indices, t.total * 2);
        const uint64_t perRow = static_cast<uint64_t>(c_) * (2 * sizeof(DT) + 8);
        kt_ = CUMMIN_TILE_BYTES / perRow;
        if (kt_ < 1) {
            kt_ = 1;
        }
        if (kt_ > 4095) {
            kt_ = 4095;
        }
        pipe_.InitBuffer(xBuf_, kt_ * c_ * sizeof(DT));
        pipe_.InitBuffer(vBuf_, kt_ * c_ * sizeof(DT));
        pipe_.InitBuffer(iBuf_, kt_ * c_ * 8);
        pipe_.InitBuffer(mBuf_, c_ * sizeof(float));
        pipe_.InitBuffer(xfBuf_, c_ * sizeof(float));
        pipe_.InitBuffer(idxBuf_, c_ * sizeof(int32_t) + 32);
        pipe_.InitBuffer(kBuf_, c_ * sizeof(int32_t));
        pipe_.InitBuffer(offBuf_, c_ * 2 * sizeof(uint32_t));
        pipe_.InitBuffer(maskABuf_, c_ / 8 < 256 ? 256 : c_ / 8);
        pipe_.InitBuffer(maskBBuf_, c_ / 8 < 256 ? 256 : c_ / 8);
        // interleave offsets for int64 indices: lane x = 2j <- idx[j] (byte 4j), lane 2j+1 <- zero word (byte 4c),
        // built by vector ops: off = 4 (x >> 1) + (x & 1) (4c - 4 (x >> 1)), in two halves of c lanes
        const int32_t cI = static_cast<int32_t>(c_);
        LocalTensor<int32_t> bitI = kBuf_.Get<int32_t>();
        LocalTensor<uint32_t> bitU = kBuf_.Get<uint32_t>();
        LocalTensor<int32_t> tI = xfBuf_.Get<int32_t>();
        for (uint32_t h = 0; h < 2; ++h) {
            LocalTensor<int32_t> dI = offBuf_.Get<int32_t>()[h * c_];
            LocalTensor<uint32_t> dU = offBuf_.Get<uint32_t>()[h * c_];
            Arange(dI, static_cast<int32_t>(h * c_), static_cast<int32_t>(1), cI);
            ShiftLeft(bitU, dU, static_cast<uint32_t>(31), cI);
            ShiftRight(bitU, bitU, static_cast<uint32_t>(31), cI);
            ShiftRight(dU, dU, static_cast<uint32_t>(1), cI);
            ShiftLeft(dU, dU, static_cast<uint32_t>(2), cI);
            Muls(tI, dI, static_cast<int32_t>(-1), cI);
            Adds(tI, tI, static_cast<int32_t>(c_ * 4), cI);
            Mul(tI, tI, bitI, cI);
            Add(dI, dI, tI, cI);
        }
        LocalTensor<int32_t> idxAll = idxBuf_.Get<int32_t>();
        LocalTensor<int32_t> zeroTail = idxAll[c_];
        Duplicate(zeroTail, static_cast<int32_t>(0), static_cast<int32_t>(8));
    }

    __aicore__ inline void Process()
    {
        if (uStart_ >= uEnd_) {
            return;
        }
        event_t eV2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        event_t eM2V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        event_t eM3V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        event_t eV3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        LocalTensor<DT> xt = xBuf_.Get<DT>();
        LocalTensor<DT> vt = vBuf_.Get<DT>();
        LocalTensor<uint32_t> it = iBuf_.Get<uint32_t>();
        LocalTensor<float> m = mBuf_.Get<float>();
        LocalTensor<float> xfBuf = xfBuf_.Get<float>();
        LocalTensor<int32_t> idxI = idxBuf_.Get<int32_t>();
        LocalTensor<float> idxF = idxI.template ReinterpretCast<float>();
        LocalTensor<uint32_t> idxU = idxI.template ReinterpretCast<uint32_t>();
        LocalTensor<int32_t> kI = kBuf_.Get<int32_t>();
        LocalTensor<float> kF = kI.template ReinterpretCast<float>();
        LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
        LocalTensor<uint8_t> mA = maskABuf_.Get<uint8_t>();
        LocalTensor<uint8_t> mB = maskBBuf_.Get<uint8_t>();
        LocalTensor<uint16_t> mA16 = mA.template ReinterpretCast<uint16_t>();
        LocalTensor<uint16_t> mB16 = mB.template ReinterpretCast<uint16_t>();
        DataCopyPadExtParams<DT> pad{false, 0, 0, 0};
        const uint64_t sz = sizeof(DT);
        const uint32_t cnt = c_;
        const int32_t cntI = static_cast<int32_t>(c_);
        const uint32_t pitchBytes = c_ * sizeof(DT);
        bool first = true;

        for (uint64_t u = uStart_; u < uEnd_; ++u) {
            const uint64_t o = u / chunks_;
            const uint64_t ch = u - o * chunks_;
            const uint64_t r0 = ch * c_;
            uint64_t cl = inner_ - r0;
            if (cl > c_) {
                cl = c_;
            }
            const uint64_t base = o * k_ * inner_ + r0;
            const uint32_t gapX = static_cast<uint32_t>((pitchBytes - (cl * sz + 31) / 32 * 32) / 32);
            const uint32_t gapI = static_cast<uint32_t>((c_ * 8 - (cl * 8 + 31) / 32 * 32) / 32);
            if constexpr (IS_INT) {
                Duplicate(m.template ReinterpretCast<int32_t>(), static_cast<int32_t>(0x7fffffff), cntI);
            } else {
                Duplicate(m, CumminPosInf(), cntI);
            }
            Duplicate(idxI, static_cast<int32_t>(0), cntI);
            for (uint64_t k0 = 0; k0 < k_; k0 += kt_) {
                uint64_t kn = k_ - k0;
                if (kn > kt_) {
                    kn = kt_;
                }
                if (!first) {
                    SetFlag<HardEvent::V_MTE2>(eV2);
                    WaitFlag<HardEvent::V_MTE2>(eV2);
                }
                DataCopyExtParams xp{static_cast<uint16_t>(kn), static_cast<uint32_t>(cl * sz),
                                     static_cast<uint32_t>((inner_ - cl) * sz), gapX, 0};
                DataCopyPad(xt, xGm_[base + k0 * inner_], xp, pad);
                SetFlag<HardEvent::MTE2_V>(eM2V);
                WaitFlag<HardEvent::MTE2_V>(eM2V);
                if (!first) {
                    SetFlag<HardEvent::MTE3_V>(eM3V);
                    WaitFlag<HardEvent::MTE3_V>(eM3V);
                }
                first = false;
                for (uint64_t kk = 0; kk < kn; ++kk) {
                    LocalTensor<DT> xr = xt[kk * c_];
                    LocalTensor<DT> vr = vt[kk * c_];
                    LocalTensor<uint32_t> ir = it[kk * c_ * 2];
                    if constexpr (IS_INT) {
                        // int32: m = Min(m, x); x <= m_old exactly when the new m equals x (Compare EQ on int32)
                        LocalTensor<int32_t> xi = xr.template ReinterpretCast<int32_t>();
                        LocalTensor<int32_t> mi = m.template ReinterpretCast<int32_t>();
                        Min(mi, mi, xi, cntI);
                        Compare(mA, mi, xi, CMPMODE::EQ, cnt);
                        Duplicate(kI, static_cast<int32_t>(k0 + kk), cntI);
                        Select(idxF, mA, kF, idxF, SELMODE::VSEL_TENSOR_TENSOR_MODE, cnt);
                        Adds(vr.template ReinterpretCast<int32_t>(), mi, static_cast<int32_t>(0), cntI);
                        Gather(ir, idxU, off, static_cast<uint32_t>(0), cnt * 2);
                        continue;
                    }
                    LocalTensor<float> xf;
                    if constexpr (IS_F32) {
                        xf = xr.template ReinterpretCast<float>();
                    } else {
                        xf = xfBuf;
                        Cast(xf, xr, RoundMode::CAST_NONE, cnt);
                    }
                    Compare(mA, xf, m, CMPMODE::LE, cnt);
                    Compare(mB, xf, xf, CMPMODE::NE, cnt);
                    Or(mA16, mA16, mB16, static_cast<int32_t>(c_ / 16));
                    Duplicate(kI, static_cast<int32_t>(k0 + kk), cntI);
                    Select(m, mA, xf, m, SELMODE::VSEL_TENSOR_TENSOR_MODE, cnt);
                    Select(idxF, mA, kF, idxF, SELMODE::VSEL_TENSOR_TENSOR_MODE, cnt);
                    if constexpr (IS_F32) {
                        LocalTensor<float> vf = vr.template ReinterpretCast<float>();
                        Muls(vf, m, 1.0f, cntI);
                    } else {
                        Cast(vr, m, RoundMode::CAST_RINT, cnt);
                    }
                    Gather(ir, idxU, off, static_cast<uint32_t>(0), cnt * 2);
                }
                SetFlag<HardEvent::V_MTE3>(eV3);
                WaitFlag<HardEvent::V_MTE3>(eV3);
                DataCopyExtParams vp{static_cast<uint16_t>(kn), static_cast<uint32_t>(cl * sz), gapX,
                                     static_cast<uint32_t>((inner_ - cl) * sz), 0};
                DataCopyPad(vGm_[base + k0 * inner_], vt, vp);
                DataCopyExtParams ip{static_cast<uint16_t>(kn), static_cast<uint32_t>(cl * 8), gapI,
                                     static_cast<uint32_t>((inner_ - cl) * 8), 0};
                DataCopyPad(iGm_[(base + k0 * inner_) * 2], it, ip);
            }
        }
    }

private:
    TPipe pipe_;
    TBuf<TPosition::VECCALC> xBuf_;
    TBuf<TPosition::VECCALC> vBuf_;
    TBuf<TPosition::VECCALC> iBuf_;
    TBuf<TPosition::VECCALC> mBuf_;
    TBuf<TPosition::VECCALC> xfBuf_;
    TBuf<TPosition::VECCALC> idxBuf_;
    TBuf<TPosition::VECCALC> kBuf_;
    TBuf<TPosition::VECCALC> offBuf_;
    TBuf<TPosition::VECCALC> maskABuf_;
    TBuf<TPosition::VECCALC> maskBBuf_;
    GlobalTensor<DT> xGm_;
    GlobalTensor<DT> vGm_;
    GlobalTensor<uint32_t> iGm_;
    uint64_t k_ = 1;
    uint64_t inner_ = 1;
    uint64_t chunks_ = 1;
    uint64_t uStart_ = 0;
    uint64_t uEnd_ = 0;
    uint64_t kt_ = 1;
    uint32_t c_ = 64;
};

// Vector scan along the last dim: 64 rows become the 64 lanes. A 64 x 64 tile is upcast to fp32 and
// transposed with one Gather; the scan runs over its 64 columns; values and int64 indices are
// transposed back with Gathers (the index one interleaves a zero high word).
template <typename DT>
class CumminRows {
public:
    static constexpr bool IS_F32 = (CumminStore<DT>::KIND == 1);
    static constexpr bool IS_INT = (CumminStore<DT>::KIND == 0);
    static constexpr bool IS_B32 = IS_F32 || IS_INT;   // 32-bit data: transposed as raw words
    static constexpr uint32_t R = 64;
    static constexpr uint32_t N = R * R;

    __aicore__ inline CumminRows() {}

    __aicore__ inline void Init(GM_ADDR input, GM_ADDR values, GM_ADDR indices, const CumminCustomTilingData& t)
    {
        const uint64_t blk = static_cast<uint64_t>(GetBlockIdx());
        k_ = t.k;
        rows_ = t.outer;
        uStart_ = blk * t.unitsPerCore;
        uEnd_ = uStart_;
        if (uStart_ >= t.units) {
            return;
        }
        uEnd_ = uStart_ + t.unitsPerCore;
        if (uEnd_ > t.units) {
            uEnd_ = t.units;
        }
        xGm_.SetGlobalBuffer((__gm__ DT*)input, t.total);
        vGm_.SetGlobalBuffer((__gm__ DT*)values, t.total);
        iGm_.SetGlobalBuffer((__gm__ uint32_t*)indices, t.total * 2);
        pipe_.InitBuffer(xInBuf_, N * sizeof(float));
        pipe_.InitBuffer(xFBuf_, N * sizeof(float));
        pipe_.InitBuffer(xTBuf_, N * sizeof(float));
        pipe_.InitBuffer(t1Buf_, N * sizeof(uint32_t));
        pipe_.InitBuffer(vTBuf_, N * sizeof(float));
        pipe_.InitBuffer(idxTBuf_, N * sizeof(int32_t) + 32);
        pipe_.InitBuffer(vOutHBuf_, N * sizeof(uint16_t));
        pipe_.InitBuffer(iOutBuf_, N * 2 * sizeof(uint32_t));
        pipe_.InitBuffer(t3Buf_, N * 2 * sizeof(uint32_t));
        pipe_.InitBuffer(mBuf_, R * sizeof(float));
        pipe_.InitBuffer(idxBuf_, R * sizeof(int32_t));
        pipe_.InitBuffer(kBuf_, R * sizeof(int32_t));
        pipe_.InitBuffer(maskABuf_, 256);
        pipe_.InitBuffer(maskBBuf_, 256);
        // transpose patterns by vector ops (R = 64): t1[i] = (b R + a) 4 with a = i >> 6, b = i & 63,
        // = ((i & 63) << 8) + ((i >> 6) << 2); t3[x] = t1[x >> 1] for even x, N * 4 (zero tail) for odd x
        const int32_t nI = static_cast<int32_t>(N);
        LocalTensor<int32_t> sA = xTBuf_.Get<int32_t>();
        LocalTensor<uint32_t> sAU = xTBuf_.Get<uint32_t>();
        LocalTensor<int32_t> sB = xFBuf_.Get<int32_t>();
        LocalTensor<uint32_t> sBU = xFBuf_.Get<uint32_t>();
        LocalTensor<int32_t> sC = vTBuf_.Get<int32_t>();
        LocalTensor<int32_t> t1I = t1Buf_.Get<int32_t>();
        LocalTensor<uint32_t> t1U = t1Buf_.Get<uint32_t>();
        Arange(sA, static_cast<int32_t>(0), static_cast<int32_t>(1), nI);
        ShiftRight(t1U, sAU, static_cast<uint32_t>(6), nI);
        ShiftLeft(t1U, t1U, static_cast<uint32_t>(2), nI);
        ShiftLeft(sBU, sAU, static_cast<uint32_t>(26), nI);
        ShiftRight(sBU, sBU, static_cast<uint32_t>(26), nI);
        ShiftLeft(sBU, sBU, static_cast<uint32_t>(8), nI);
        Add(t1I, t1I, sB, nI);
        for (uint32_t h = 0; h < 2; ++h) {
            LocalTensor<int32_t> dI = t3Buf_.Get<int32_t>()[h * N];
            LocalTensor<uint32_t> dU = t3Buf_.Get<uint32_t>()[h * N];
            Arange(sA, static_cast<int32_t>(h * N), static_cast<int32_t>(1), nI);   // x
            ShiftLeft(sBU, sAU, static_cast<uint32_t>(31), nI);
            ShiftRight(sBU, sBU, static_cast<uint32_t>(31), nI);                      // x & 1
            ShiftRight(sAU, sAU, static_cast<uint32_t>(1), nI);                       // i = x >> 1
            ShiftRight(dU, sAU, static_cast<uint32_t>(6), nI);
            ShiftLeft(dU, dU, static_cast<uint32_t>(2), nI);
            ShiftLeft(sAU, sAU, static_cast<uint32_t>(26), nI);
            ShiftRight(sAU, sAU, static_cast<uint32_t>(26), nI);
            ShiftLeft(sAU, sAU, static_cast<uint32_t>(8), nI);
            Add(dI, dI, sA, nI);                                                       // t1[i]
            Muls(sC, dI, static_cast<int32_t>(-1), nI);
            Adds(sC, sC, static_cast<int32_t>(N * 4), nI);
            Mul(sC, sC, sB, nI);
            Add(dI, dI, sC, nI);
        }
        LocalTensor<int32_t> idxT = idxTBuf_.Get<int32_t>();
        LocalTensor<int32_t> zeroTail = idxT[N];
        Duplicate(zeroTail, static_cast<int32_t>(0), static_cast<int32_t>(8));
    }

    __aicore__ inline void Process()
    {
        if (uStart_ >= uEnd_) {
            return;
        }
        event_t eV2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        event_t eM2V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        event_t eM3V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        event_t eV3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        LocalTensor<DT> xIn = xInBuf_.Get<DT>();
        LocalTensor<float> xInF = xInBuf_.Get<float>();
        LocalTensor<float> xF = xFBuf_.Get<float>();
        LocalTensor<uint32_t> xFU = xFBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> xInU = xInBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> xTU = xTBuf_.Get<uint32_t>();
        LocalTensor<float> xT = xTBuf_.Get<float>();
        LocalTensor<uint32_t> t1 = t1Buf_.Get<uint32_t>();
        LocalTensor<uint32_t> t3 = t3Buf_.Get<uint32_t>();
        LocalTensor<float> vT = vTBuf_.Get<float>();
        LocalTensor<uint32_t> vTU = vTBuf_.Get<uint32_t>();
        LocalTensor<int32_t> idxT = idxTBuf_.Get<int32_t>();
        LocalTensor<uint32_t> idxTU = idxTBuf_.Get<uint32_t>();
        LocalTensor<float> vOut = xFBuf_.Get<float>();     // xF is free once the tile is transposed
        LocalTensor<uint32_t> vOutU = xFBuf_.Get<uint32_t>();
        LocalTensor<DT> vOutH = vOutHBuf_.Get<DT>();
        LocalTensor<uint32_t> iOut = iOutBuf_.Get<uint32_t>();
        LocalTensor<float> m = mBuf_.Get<float>();
        LocalTensor<int32_t> idxR = idxBuf_.Get<int32_t>();
        LocalTensor<float> idxRF = idxBuf_.Get<float>();
        LocalTensor<int32_t> kI = kBuf_.Get<int32_t>();
        LocalTensor<float> kF = kBuf_.Get<float>();
        LocalTensor<uint8_t> mA = maskABuf_.Get<uint8_t>();
        LocalTensor<uint8_t> mB = maskBBuf_.Get<uint8_t>();
        LocalTensor<uint16_t> mA16 = maskABuf_.Get<uint16_t>();
        LocalTensor<uint16_t> mB16 = maskBBuf_.Get<uint16_t>();
        DataCopyPadExtParams<DT> pad{false, 0, 0, 0};
        const uint64_t sz = sizeof(DT);
        bool first = true;

        for (uint64_t u = uStart_; u < uEnd_; ++u) {
            const uint64_t row0 = u * R;
            uint64_t nr = rows_ - row0;
            if (nr > R) {
                nr = R;
            }
            if constexpr (IS_INT) {
                Duplicate(m.template ReinterpretCast<int32_t>(), static_cast<int32_t>(0x7fffffff), static_cast<int32_t>(R));
            } else {
                Duplicate(m, CumminPosInf(), static_cast<int32_t>(R));
            }
            Duplicate(idxR, static_cast<int32_t>(0), static_cast<int32_t>(R));
            for (uint64_t k0 = 0; k0 < k_; k0 += R) {
                uint64_t kcl = k_ - k0;
                if (kcl > R) {
                    kcl = R;
                }
                const uint64_t g = row0 * k_ + k0;
                if (!first) {
                    SetFlag<HardEvent::V_MTE2>(eV2);
                    WaitFlag<HardEvent::V_MTE2>(eV2);
                }
                const uint32_t gapX = static_cast<uint32_t>((R * sz - (kcl * sz + 31) / 32 * 32) / 32);
                DataCopyExtParams xp{static_cast<uint16_t>(nr), static_cast<uint32_t>(kcl * sz),
                                     static_cast<uint32_t>((k_ - kcl) * sz), gapX, 0};
                DataCopyPad(xIn, xGm_[g], xp, pad);
                SetFlag<HardEvent::MTE2_V>(eM2V);
                WaitFlag<HardEvent::MTE2_V>(eM2V);
                if (!first) {
                    SetFlag<HardEvent::MTE3_V>(eM3V);
                    WaitFlag<HardEvent::MTE3_V>(eM3V);
                }
                first = false;
                if constexpr (IS_B32) {
                    Gather(xTU, xInU, t1, static_cast<uint32_t>(0), N);
                } else {
                    Cast(xF, xIn, RoundMode::CAST_NONE, N);
                    Gather(xTU, xFU, t1, static_cast<uint32_t>(0), N);
                }
                for (uint64_t kk = 0; kk < kcl; ++kk) {
                    LocalTensor<float> xr = xT[kk * R];
                    LocalTensor<float> vr = vT[kk * R];
                    LocalTensor<int32_t> ir = idxT[kk * R];
                    if constexpr (IS_INT) {
                        LocalTensor<int32_t> xi = xr.template ReinterpretCast<int32_t>();
                        LocalTensor<int32_t> mi = m.template ReinterpretCast<int32_t>();
                        Min(mi, mi, xi, static_cast<int32_t>(R));
                        Compare(mA, mi, xi, CMPMODE::EQ, R);
                        Duplicate(kI, static_cast<int32_t>(k0 + kk), static_cast<int32_t>(R));
                        Select(idxRF, mA, kF, idxRF, SELMODE::VSEL_TENSOR_TENSOR_MODE, R);
                        Adds(vr.template ReinterpretCast<int32_t>(), mi, static_cast<int32_t>(0), static_cast<int32_t>(R));
                        Adds(ir, idxR, static_cast<int32_t>(0), static_cast<int32_t>(R));
                        continue;
                    }
                    Compare(mA, xr, m, CMPMODE::LE, R);
                    Compare(mB, xr, xr, CMPMODE::NE, R);
                    Or(mA16, mA16, mB16, static_cast<int32_t>(R / 16));
                    Duplicate(kI, static_cast<int32_t>(k0 + kk), static_cast<int32_t>(R));
                    Select(m, mA, xr, m, SELMODE::VSEL_TENSOR_TENSOR_MODE, R);
                    Select(idxRF, mA, kF, idxRF, SELMODE::VSEL_TENSOR_TENSOR_MODE, R);
                    Muls(vr, m, 1.0f, static_cast<int32_t>(R));
                    Adds(ir, idxR, static_cast<int32_t>(0), static_cast<int32_t>(R));
                }
                Gather(vOutU, vTU, t1, static_cast<uint32_t>(0), N);
                Gather(iOut, idxTU, t3, static_cast<uint32_t>(0), N * 2);
                if constexpr (!IS_B32) {
                    Cast(vOutH, vOut, RoundMode::CAST_RINT, N);
                }
                SetFlag<HardEvent::V_MTE3>(eV3);
                WaitFlag<HardEvent::V_MTE3>(eV3);
                DataCopyExtParams vp{static_cast<uint16_t>(nr), static_cast<uint32_t>(kcl * sz), gapX,
                                     static_cast<uint32_t>((k_ - kcl) * sz), 0};
                if constexpr (IS_B32) {
                    LocalTensor<DT> vo = xFBuf_.Get<DT>();
                    DataCopyPad(vGm_[g], vo, vp);
                } else {
                    DataCopyPad(vGm_[g], vOutH, vp);
                }
                const uint32_t gapI = static_cast<uint32_t>((R * 8 - (kcl * 8 + 31) / 32 * 32) / 32);
                DataCopyExtParams ip{static_cast<uint16_t>(nr), static_cast<uint32_t>(kcl * 8), gapI,
                                     static_cast<uint32_t>((k_ - kcl) * 8), 0};
                DataCopyPad(iGm_[g * 2], iOut, ip);
            }
        }
    }

private:
    TPipe pipe_;
    TBuf<TPosition::VECCALC> xInBuf_;
    TBuf<TPosition::VECCALC> xFBuf_;
    TBuf<TPosition::VECCALC> xTBuf_;
    TBuf<TPosition::VECCALC> t1Buf_;
    TBuf<TPosition::VECCALC> vTBuf_;
    TBuf<TPosition::VECCALC> idxTBuf_;
    TBuf<TPosition::VECCALC> vOutHBuf_;
    TBuf<TPosition::VECCALC> iOutBuf_;
    TBuf<TPosition::VECCALC> t3Buf_;
    TBuf<TPosition::VECCALC> mBuf_;
    TBuf<TPosition::VECCALC> idxBuf_;
    TBuf<TPosition::VECCALC> kBuf_;
    TBuf<TPosition::VECCALC> maskABuf_;
    TBuf<TPosition::VECCALC> maskBBuf_;
    GlobalTensor<DT> xGm_;
    GlobalTensor<DT> vGm_;
    GlobalTensor<uint32_t> iGm_;
    uint64_t k_ = 1;
    uint64_t rows_ = 1;
    uint64_t uStart_ = 0;
    uint64_t uEnd_ = 0;
};

extern "C" __global__ __aicore__ void cummin_custom(GM_ADDR input, GM_ADDR values, GM_ADDR indices,
                                                    GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    if (t.total == 0) {
        return;
    }
    // row scans (inner == 1): rows become lanes of a transposed tile; column scans (inner > 1): inner lanes.
    // int32 takes the same vector strategies (Min + Compare EQ + Select) instead of the scalar loop.
    if (t.mode == 2) {
        CumminRows<DTYPE_INPUT> op;
        op.Init(input, values, indices, t);
        op.Process();
        return;
    }
    if (t.mode == 1) {
        CumminVector<DTYPE_INPUT> op;
        op.Init(input, values, indices, t);
        op.Process();
        return;
    }
    CumminScalar<DTYPE_INPUT> op;
    op.Init(input, values, indices, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    int64_t nd = static_cast<int64_t>(xs.GetDimNum());
    int64_t dim = 0;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* p = attrs->GetAttrPointer<int64_t>(0);
        if (p != nullptr) {
            dim = *p;
        }
    }
    uint64_t outer = 1;
    uint64_t k = 1;
    uint64_t inner = 1;
    if (nd > 0) {
        if (dim < 0) {
            dim += nd;
        }
        if (dim < 0 || dim >= nd) {
            dim = 0;
        }
        for (int64_t d = 0; d < nd; ++d) {
            const uint64_t s = static_cast<uint64_t>(xs.GetDim(d));
            if (d < dim) {
                outer *= s;
            } else if (d == dim) {
                k = s;
            } else {
                inner *= s;
            }
        }
    }
    const uint64_t total = outer * k * inner;
    const uint64_t lines = outer * inner;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    CumminCustomTilingData* t = context->GetTilingData<CumminCustomTilingData>();
    t->mode = 0;
    t->lanes = 64;
    t->chunks = 1;
    t->units = 0;
    t->unitsPerCore = 1;
    if (inner >= 64 && total > 0) {
        uint64_t split = (coreNum + outer - 1) / outer;
        if (split < 1) {
            split = 1;
        }
        uint64_t c = (inner + split - 1) / split;
        c = (c + 63) / 64 * 64;
        if (c < 64) {
            c = 64;
        }
        if (c > 2048) {
            c = 2048;
        }
        const uint64_t chunks = (inner + c - 1) / c;
        const uint64_t units = outer * chunks;
        uint64_t upc = (units + coreNum - 1) / coreNum;
        uint64_t bd = (units + upc - 1) / upc;
        if (bd > coreNum) {
            bd = coreNum;
        }
        t->mode = 1;
        t->lanes = c;
        t->chunks = chunks;
        t->units = units;
        t->unitsPerCore = upc;
        t->outer = outer;
        t->k = k;
        t->inner = inner;
        t->lines = lines;
        t->linesPerCore = 1;
        t->total = total;
        context->SetBlockDim(static_cast<uint32_t>(bd < 1 ? 1 : bd));
        size_t* ws0 = context->GetWorkspaceSizes(1);
        ws0[0] = 0;
        return ge::GRAPH_SUCCESS;
    }
    if (inner == 1 && outer >= 64 && k >= 2 && total > 0) {
        const uint64_t units = (outer + 63) / 64;
        uint64_t upc = (units + coreNum - 1) / coreNum;
        uint64_t bd = (units + upc - 1) / upc;
        if (bd > coreNum) {
            bd = coreNum;
        }
        t->mode = 2;
        t->units = units;
        t->unitsPerCore = upc;
        t->outer = outer;
        t->k = k;
        t->inner = inner;
        t->lines = lines;
        t->linesPerCore = 1;
        t->total = total;
        context->SetBlockDim(static_cast<uint32_t>(bd < 1 ? 1 : bd));
        size_t* ws1 = context->GetWorkspaceSizes(1);
        ws1[0] = 0;
        return ge::GRAPH_SUCCESS;
    }
    uint64_t lpc = (lines + coreNum - 1) / coreNum;
    if (lpc < 1) {
        lpc = 1;
    }
    uint64_t blockDim = (lines + lpc - 1) / lpc;
    if (blockDim < 1) {
        blockDim = 1;
    }
    if (blockDim > coreNum) {
        blockDim = coreNum;
    }

    t->outer = outer;
    t->k = k;
    t->inner = inner;
    t->lines = lines;
    t->linesPerCore = lpc;
    t->total = total;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
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

