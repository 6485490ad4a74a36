#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t SCATTER_MAX_DIMS = 8;
constexpr uint32_t SCATTER_COPY_BYTES = 49152;   // phase 1 (data -> y) ping-pong buffer bytes
constexpr uint32_t SCATTER_CAP = 4096;           // phase 2 elements per index / updates tile
constexpr uint32_t SCATTER_MAX_RLEN = 2048;      // inner elements per work unit
constexpr uint32_t SCATTER_PACK_VB = SCATTER_CAP * 4;  // byte offset of the value words in the pack source

struct ScatterCustomTilingData {
    uint64_t mode;          // 0 update, 1 add, 2 multiply, 3 amax, 4 amin
    uint64_t acc32;         // 1: 16-bit data accumulated in an fp32 GM workspace, rounded once
    uint64_t yTotal;        // elements of data / y
    uint64_t copyPerCore;   // phase 1 elements per core
    uint64_t idxTotal;      // elements of indices
    uint64_t ndim;          // collapsed index dims
    uint64_t gpos;          // scatter dim among them
    uint64_t ki;            // indices size along dim
    uint64_t inner;         // product of the collapsed index dims after dim
    uint64_t rlen;          // inner elements per unit
    uint64_t rchunks;       // units per outer position
    uint64_t units;
    uint64_t unitsPerCore;  // ceil(units / cores) (informative)
    uint64_t unitsBase;     // former/tail split: every core takes unitsBase units,
    uint64_t unitsRem;      // the first unitsRem cores one more
    uint64_t rBase;         // inner chunks: rchunks chunks of rBase elements,
    uint64_t rRem;          // the first rRem of them one element wider
    uint64_t packOk;        // 1: data <= 32 bit and y offsets fit int32: vector offset path
    uint64_t shape[SCATTER_MAX_DIMS];   // collapsed index shape
    uint64_t stride[SCATTER_MAX_DIMS];  // y element stride of each collapsed dim
};
REGISTER_TILING_DEFAULT(ScatterCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct ScatterSame { static constexpr bool value = false; };
template <typename A> struct ScatterSame<A, A> { static constexpr bool value = true; };

// storage type and kind (0 int, 1 float, 2 half bits, 3 bf16 bits)
template <typename T> struct ScatterStore { using U = T; static constexpr int KIND = 0; };
template <> struct ScatterStore<float> { using U = float; static constexpr int KIND = 1; };
template <> struct ScatterStore<half> { using U = uint16_t; static constexpr int KIND = 2; };
template <> struct ScatterStore<bfloat16_t> { using U = uint16_t; static constexpr int KIND = 3; };

__aicore__ inline float ScatterBitsToFloat(uint32_t b)
{
    union { uint32_t u; float f; } v;
    v.u = b;
    return v.f;
}

__aicore__ inline uint32_t ScatterFloatToBits(float f)
{
    union { uint32_t u; float f; } v;
    v.f = f;
    return v.u;
}

__aicore__ inline float ScatterHalfToFloat(uint16_t h)
{
    const uint32_t s = (static_cast<uint32_t>(h) & 0x8000u) << 16;
    const uint32_t e = (static_cast<uint32_t>(h) >> 10) & 0x1fu;
    uint32_t m = static_cast<uint32_t>(h) & 0x3ffu;
    if (e == 0) {
        if (m == 0) {
            return ScatterBitsToFloat(s);
        }
        int32_t ee = 113;
        while ((m & 0x400u) == 0) {
            m <<= 1;
            --ee;
        }
        m &= 0x3ffu;
        return ScatterBitsToFloat(s | (static_cast<uint32_t>(ee) << 23) | (m << 13));
    }
    if (e == 31) {
        return ScatterBitsToFloat(s | 0x7f800000u | (m << 13));
    }
    return ScatterBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}

__aicore__ inline uint16_t ScatterFloatToHalf(float f)
{
    const uint32_t x = ScatterFloatToBits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xffu) {
        return static_cast<uint16_t>(sign | 0x7c00u | (mant != 0 ? (0x200u | (mant >> 13)) : 0u));
    }
    const int32_t e = static_cast<int32_t>(exp) - 112;
    if (e >= 31) {
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (e <= 0) {
        if (e < -10) {
            return static_cast<uint16_t>(sign);
        }
        mant |= 0x800000u;
        const uint32_t shift = static_cast<uint32_t>(14 - e);
        uint32_t hm = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1u);
        const uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (hm & 1u) != 0)) {
            ++hm;
        }
        return static_cast<uint16_t>(sign | hm);
    }
    const uint32_t hm = mant >> 13;
    const uint32_t rem = mant & 0x1fffu;
    uint32_t r = sign | (static_cast<uint32_t>(e) << 10) | hm;
    if (rem > 0x1000u || (rem == 0x1000u && (hm & 1u) != 0)) {
        ++r;
    }
    return static_cast<uint16_t>(r);
}

__aicore__ inline float ScatterBf16ToFloat(uint16_t b)
{
    return ScatterBitsToFloat(static_cast<uint32_t>(b) << 16);
}

__aicore__ inline uint16_t ScatterFloatToBf16(float f)
{
    const uint32_t x = ScatterFloatToBits(f);
    if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0) {
        return static_cast<uint16_t>((x >> 16) | 0x40u);
    }
    const uint32_t r = x + 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(r >> 16);
}

template <typename U>
__aicore__ inline U ScatterFromBits(uint32_t b)
{
    if constexpr (ScatterSame<U, float>::value) {
        return ScatterBitsToFloat(b);
    } else {
        return static_cast<U>(b);
    }
}

template <typename U>
__aicore__ inline uint32_t ScatterBitsOf(U v)
{
    if constexpr (ScatterSame<U, float>::value) {
        return ScatterFloatToBits(v);
    } else {
        return static_cast<uint32_t>(v);
    }
}

__aicore__ inline float ScatterFloatOp(float a, float b, uint32_t mode)
{
    if (mode == 1) {
        return a + b;
    }
    if (mode == 2) {
        return a * b;
    }
    if (mode == 3) {
        if (a != a) {
            return a;
        }
        if (b != b) {
            return b;
        }
        return (b > a) ? b : a;
    }
    if (mode == 4) {
        if (a != a) {
            return a;
        }
        if (b != b) {
            return b;
        }
        return (b < a) ? b : a;
    }
    return b;
}

template <typename U, int KIND>
__aicore__ inline U ScatterCombine(U a, U b, uint32_t mode)
{
    if constexpr (KIND == 1) {
        return ScatterFloatOp(a, b, mode);
    } else if constexpr (KIND == 2) {
        return ScatterFloatToHalf(ScatterFloatOp(ScatterHalfToFloat(a), ScatterHalfToFloat(b), mode));
    } else if constexpr (KIND == 3) {
        return ScatterFloatToBf16(ScatterFloatOp(ScatterBf16ToFloat(a), ScatterBf16ToFloat(b), mode));
    } else {
        if (mode == 1) {
            return static_cast<U>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
        }
        if (mode == 2) {
            return static_cast<U>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
        }
        if (mode == 3) {
            return (b > a) ? b : a;
        }
        if (mode == 4) {
            return (b < a) ? b : a;
        }
        return b;
    }
}

template <typename DT, typename TI>
class ScatterKernel {
public:
    using U = typename ScatterStore<DT>::U;
    static constexpr int KIND = ScatterStore<DT>::KIND;

    __aicore__ inline ScatterKernel() {}

    __aicore__ inline void Init(GM_ADDR data, GM_ADDR indices, GM_ADDR updates, GM_ADDR y, GM_ADDR workspace,
                                const ScatterCustomTilingData& t)
    {
        blk_ = static_cast<uint64_t>(GetBlockIdx());
        mode_ = static_cast<uint32_t>(t.mode);
        acc32_ = (t.acc32 != 0);
        yTotal_ = t.yTotal;
        copyPerCore_ = t.copyPerCore;
        nd_ = static_cast<uint32_t>(t.ndim);
        g_ = static_cast<uint32_t>(t.gpos);
        ki_ = t.ki;
        inner_ = t.inner;
        rlen_ = t.rlen;
        rchunks_ = t.rchunks;
        units_ = t.units;
        upc_ = t.unitsPerCore;
        uBase_ = t.unitsBase;
        uRem_ = t.unitsRem;
        rBase_ = t.rBase;
        rRem_ = t.rRem;
        packOk_ = (t.packOk != 0) && (sizeof(U) <= 4);
        for (uint32_t d = 0; d < SCATTER_MAX_DIMS; ++d) {
            shape_[d] = t.shape[d];
            stride_[d] = t.stride[d];
        }
        dataGm_.SetGlobalBuffer((__gm__ U*)data, t.yTotal);
        yGm_.SetGlobalBuffer((__gm__ U*)y, t.yTotal);
        dataGmT_.SetGlobalBuffer((__gm__ DT*)data, t.yTotal);
        yGmT_.SetGlobalBuffer((__gm__ DT*)y, t.yTotal);
        if (acc32_) {
            wsGm_.SetGlobalBuffer((__gm__ float*)workspace, t.yTotal);
        }
        idxGm_.SetGlobalBuffer((__gm__ TI*)indices, t.idxTotal);
        updGm_.SetGlobalBuffer((__gm__ U*)updates, t.idxTotal);
        pipe_.InitBuffer(copyBuf0_, SCATTER_COPY_BYTES);
        pipe_.InitBuffer(copyBuf1_, SCATTER_COPY_BYTES);
        pipe_.InitBuffer(idxBuf_, SCATTER_CAP * sizeof(TI));
        if (packOk_) {
            // [0, CAP) int32 y offsets | [CAP, 2 CAP) values (raw, or fp32 for acc32)
            pipe_.InitBuffer(packBuf_, 2 * SCATTER_CAP * sizeof(uint32_t) + 32);
            pipe_.InitBuffer(updBuf_, acc32_ ? SCATTER_CAP * sizeof(U) : 32);
        } else {
            pipe_.InitBuffer(packBuf_, 32);
            pipe_.InitBuffer(updBuf_, SCATTER_CAP * sizeof(U));
        }
    }

    __aicore__ inline void Process()
    {
        if constexpr (KIND == 2 || KIND == 3) {
            if (acc32_) {
                CastSlice(true);      // ws = float(data)
                PipeBarrier<PIPE_ALL>();
                SyncAll();
                ScatterPhase();       // on ws, in fp32
                PipeBarrier<PIPE_ALL>();
                SyncAll();
                CastSlice(false);     // y = round(ws)
                return;
            }
        }
        CopyData();
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        ScatterPhase();
    }

private:
    // phase 1: y = data, split over all cores, ping-pong through two UB buffers
    __aicore__ inline void CopyData()
    {
        const uint64_t start = blk_ * copyPerCore_;
        if (start >= yTotal_) {
            return;
        }
        uint64_t len = copyPerCore_;
        if (start + len > yTotal_) {
            len = yTotal_ - start;
        }
        const uint64_t tileElems = SCATTER_COPY_BYTES / sizeof(U);
        const uint64_t tiles = (len + tileElems - 1) / tileElems;
        TEventID inEv0 = pipe_.AllocEventID<HardEvent::MTE2_MTE3>();
        TEventID inEv1 = pipe_.AllocEventID<HardEvent::MTE2_MTE3>();
        TEventID outEv0 = pipe_.AllocEventID<HardEvent::MTE3_MTE2>();
        TEventID outEv1 = pipe_.AllocEventID<HardEvent::MTE3_MTE2>();
        LocalTensor<U> b0 = copyBuf0_.Get<U>();
        LocalTensor<U> b1 = copyBuf1_.Get<U>();
        DataCopyPadExtParams<U> pad{false, 0, 0, 0};
        for (uint64_t i = 0; i < tiles; ++i) {
            const uint64_t n = (i + 1 < tiles) ? tileElems : (len - i * tileElems);
            const bool odd = (i & 1) != 0;
            LocalTensor<U>& b = odd ? b1 : b0;
            const event_t inEv = static_cast<event_t>(odd ? inEv1 : inEv0);
            const event_t outEv = static_cast<event_t>(odd ? outEv1 : outEv0);
            if (i >= 2) {
                WaitFlag<HardEvent::MTE3_MTE2>(outEv);
            }
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(U)), 0, 0, 0};
            DataCopyPad(b, dataGm_[start + i * tileElems], cp, pad);
            SetFlag<HardEvent::MTE2_MTE3>(inEv);
            WaitFlag<HardEvent::MTE2_MTE3>(inEv);
            DataCopyPad(yGm_[start + i * tileElems], b, cp);
            SetFlag<HardEvent::MTE3_MTE2>(outEv);
        }
        if (tiles >= 1) {
            WaitFlag<HardEvent::MTE3_MTE2>(static_cast<event_t>(((tiles - 1) & 1) != 0 ? outEv1 : outEv0));
        }
        if (tiles >= 2) {
            WaitFlag<HardEvent::MTE3_MTE2>(static_cast<event_t>(((tiles - 2) & 1) != 0 ? outEv1 : outEv0));
        }
        pipe_.ReleaseEventID<HardEvent::MTE2_MTE3>(inEv0);
        pipe_.ReleaseEventID<HardEvent::MTE2_MTE3>(inEv1);
        pipe_.ReleaseEventID<HardEvent::MTE3_MTE2>(outEv0);
        pipe_.ReleaseEventID<HardEvent::MTE3_MTE2>(outEv1);
    }

    // 16-bit data with add / multiply: toFloat: ws = float(data slice); else y slice = round(ws)
    __aicore__ inline void CastSlice(bool toFloat)
    {
        const uint64_t start = blk_ * copyPerCore_;
        if (start >= yTotal_) {
            return;
        }
        uint64_t len = copyPerCore_;
        if (start + len > yTotal_) {
            len = yTotal_ - start;
        }
        const uint64_t tileElems = SCATTER_COPY_BYTES / sizeof(float);
        const uint64_t tiles = (len + tileElems - 1) / tileElems;
        LocalTensor<DT> h = copyBuf0_.Get<DT>();
        LocalTensor<float> f = copyBuf1_.Get<float>();
        event_t eV2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        event_t eM2V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        event_t eM3V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        event_t eV3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        DataCopyPadExtParams<DT> padH{false, 0, 0, 0};
        DataCopyPadExtParams<float> padF{false, 0, 0, 0};
        for (uint64_t i = 0; i < tiles; ++i) {
            const uint64_t n = (i + 1 < tiles) ? tileElems : (len - i * tileElems);
            const uint64_t off = start + i * tileElems;
            if (i > 0) {
                SetFlag<HardEvent::V_MTE2>(eV2);
                WaitFlag<HardEvent::V_MTE2>(eV2);
            }
            if (toFloat) {
                DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(DT)), 0, 0, 0};
                DataCopyPad(h, dataGmT_[off], cp, padH);
            } else {
                DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
                DataCopyPad(f, wsGm_[off], cp, padF);
            }
            SetFlag<HardEvent::MTE2_V>(eM2V);
            WaitFlag<HardEvent::MTE2_V>(eM2V);
            if (i > 0) {
                SetFlag<HardEvent::MTE3_V>(eM3V);
                WaitFlag<HardEvent::MTE3_V>(eM3V);
            }
            if (toFloat) {
                Cast(f, h, RoundMode::CAST_NONE, static_cast<uint32_t>(n));
            } else {
                Cast(h, f, RoundMode::CAST_RINT, static_cast<uint32_t>(n));
            }
            SetFlag<HardEvent::V_MTE3>(eV3);
            WaitFlag<HardEvent::V_MTE3>(eV3);
            if (toFloat) {
                DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0};
                DataCopyPad(wsGm_[off], f, cp);
            } else {
                DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(DT)), 0, 0, 0};
                DataCopyPad(yGmT_[off], h, cp);
            }
        }
    }

    // former/tail split of the units over the cores: the first uRem_ cores take one unit more
    __aicore__ inline void CoreUnits(uint64_t& uStart, uint64_t& uEnd)
    {
        if (blk_ < uRem_) {
            uStart = blk_ * (uBase_ + 1);
            uEnd = uStart + uBase_ + 1;
        } else {
            uStart = uRem_ * (uBase_ + 1) + (blk_ - uRem_) * uBase_;
            uEnd = uStart + uBase_;
        }
        if (uEnd > units_) {
            uEnd = units_;
        }
    }

    // inner chunk rc of an outer position: the first rRem_ chunks are one element wider than the rest
    __aicore__ inline void ChunkRange(uint64_t rc, uint64_t& r0, uint64_t& rl)
    {
        if (rc < rRem_) {
            r0 = rc * (rBase_ + 1);
            rl = rBase_ + 1;
        } else {
            r0 = rRem_ * (rBase_ + 1) + (rc - rRem_) * rBase_;
            rl = rBase_;
        }
    }

    __aicore__ inline void ScatterPhase()
    {
        if constexpr (sizeof(U) <= 4) {
            if (packOk_) {
                ScatterUnitsPacked();
                return;
            }
        }
        ScatterUnits();
    }

    // one scalar element: y offset precomputed by vector, value (fp32 for acc32) precomputed by vector
    __aicore__ inline void ApplyOne(const LocalTensor<int32_t>& offT, const LocalTensor<U>& valU,
                                    const LocalTensor<float>& valF, uint32_t m)
    {
        const uint64_t off = static_cast<uint64_t>(static_cast<uint32_t>(offT.GetValue(m)));
        if constexpr (KIND == 2 || KIND == 3) {
            if (acc32_) {
                const float av = wsGm_.GetValue(off);
                wsGm_.SetValue(off, ScatterFloatOp(av, valF.GetValue(m), mode_));
                return;
            }
        }
        const U uv = valU.GetValue(m);
        if (mode_ == 0) {
            yGm_.SetValue(off, uv);
            return;
        }
        const U av = yGm_.GetValue(off);
        const U r = ScatterCombine<U, KIND>(av, uv, mode_);
        if (ScatterBitsOf<U>(r) != ScatterBitsOf<U>(av)) {
            yGm_.SetValue(off, r);
        }
    }

    // phase 2, broadcast operands: the column-offset row of a unit (the same for every index row) is built
    // once per unit in UB and replicated, yBase is a scalar Adds, gs a Duplicate'd tile made once per core;
    // the y offsets and fp32 values of a whole tile come from a few vector calls instead of the scalar odometer
    // and the scalar fp16/bf16 conversion of the parent.
    __aicore__ inline void ScatterUnitsPacked()
    {
        uint64_t uStart = 0;
        uint64_t uEnd = 0;
        CoreUnits(uStart, uEnd);
        if (uStart >= uEnd) {
            return;
        }
        LocalTensor<TI> il = idxBuf_.Get<TI>();
        LocalTensor<U> ul = updBuf_.Get<U>();
        LocalTensor<int32_t> offT = packBuf_.Get<int32_t>();
        LocalTensor<U> valU = packBuf_.Get<U>()[SCATTER_PACK_VB / sizeof(U)];   // raw values
        LocalTensor<float> valF = packBuf_.Get<float>()[SCATTER_CAP];
        LocalTensor<int32_t> colRep = copyBuf0_.Get<int32_t>();
        LocalTensor<int32_t> gsT = copyBuf1_.Get<int32_t>();
        LocalTensor<U> valDst = acc32_ ? ul : valU;

        const uint64_t gs = stride_[g_];
        const bool gsOne = (gs == 1);
        if (!gsOne) {
            Duplicate<int32_t>(gsT, static_cast<int32_t>(gs), static_cast<int32_t>(SCATTER_CAP));
            PipeBarrier<PIPE_V>();
        }
        event_t eM2V = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        event_t eVS = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        event_t eSV = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        event_t eSM2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE2));
        DataCopyPadExtParams<TI> padI{false, 0, 0, 0};
        DataCopyPadExtParams<U> padU{false, 0, 0, 0};
        const int32_t last = static_cast<int32_t>(nd_) - 1;
        const int32_t firstInner = static_cast<int32_t>(g_) + 1;
        const bool flat = (inner_ == 1);
        bool firstTile = true;

        for (uint64_t u = uStart; u < uEnd; ++u) {
            const uint64_t o = u / rchunks_;
            const uint64_t rc = u - o * rchunks_;
            uint64_t r0 = 0;
            uint64_t rl = 1;
            ChunkRange(rc, r0, rl);
            uint64_t yBase = 0;
            uint64_t rem = o;
            for (int32_t d = static_cast<int32_t>(g_) - 1; d >= 0; --d) {
                const uint64_t cd = rem % shape_[d];
                rem = rem / shape_[d];
                yBase += cd * stride_[d];
            }
            const uint64_t P = flat ? 1 : (rl + 15) / 16 * 16;
            uint64_t jt = SCATTER_CAP / P;
            if (!flat && jt > 4095) {
                jt = 4095;
            }
            if (jt < 1) {
                jt = 1;
            }
            if (!flat) {
                // column offsets of this unit, one row kept in UB and replicated to jt rows
                uint64_t cin[SCATTER_MAX_DIMS];
                uint64_t inOff = 0;
                rem = r0;
                for (int32_t d = last; d >= firstInner; --d) {
                    cin[d] = rem % shape_[d];
                    rem = rem / shape_[d];
                    inOff += cin[d] * stride_[d];
                }
                if (firstInner == last) {
                    Arange(colRep, static_cast<int32_t>(yBase + inOff), static_cast<int32_t>(stride_[last]),
                           static_cast<int32_t>(rl));
                } else {
                    SetFlag<HardEvent::V_S>(eVS);
                    WaitFlag<HardEvent::V_S>(eVS);
                    for (uint64_t rr = 0; rr < rl; ++rr) {
                        colRep.SetValue(static_cast<uint32_t>(rr), static_cast<int32_t>(yBase + inOff));
                        int32_t d = last;
                        while (d >= firstInner) {
                            cin[d] += 1;
                            inOff += stride_[d];
                            if (cin[d] < shape_[d] || d == firstInner) {
                                break;
                            }
                            inOff -= shape_[d] * stride_[d];
                            cin[d] = 0;
                            --d;
                        }
                    }
                    SetFlag<HardEvent::S_V>(eSV);
                    WaitFlag<HardEvent::S_V>(eSV);
                }
                PipeBarrier<PIPE_V>();
                for (uint64_t k = 1; k < jt; k <<= 1) {
                    const uint64_t cnt = (jt - k < k) ? (jt - k) : k;
                    Adds(colRep[static_cast<uint32_t>(k * P)], colRep, static_cast<int32_t>(0),
                         static_cast<int32_t>(cnt * P));
                    PipeBarrier<PIPE_V>();
                }
            }
            const uint32_t iRow = static_cast<uint32_t>((rl * sizeof(TI) + 31) / 32 * 32);
            const uint32_t uRow = static_cast<uint32_t>((rl * sizeof(U) + 31) / 32 * 32);
            const uint32_t iGap = static_cast<uint32_t>((P * sizeof(TI) - iRow) / 32);
            const uint32_t uGap = static_cast<uint32_t>((P * sizeof(U) - uRow) / 32);

            for (uint64_t j0 = 0; j0 < ki_; j0 += jt) {
                uint64_t jn = ki_ - j0;
                if (jn > jt) {
                    jn = jt;
                }
                const uint64_t gOff = (o * ki_ + j0) * inner_ + r0;
                if (!firstTile) {
                    SetFlag<HardEvent::S_MTE2>(eSM2);
                    WaitFlag<HardEvent::S_MTE2>(eSM2);
                }
                firstTile = false;
                const uint64_t n = flat ? jn : jn * P;
                if (flat) {
                    DataCopyExtParams ci{1, static_cast<uint32_t>(jn * sizeof(TI)), 0, 0, 0};
                    DataCopyPad(il, idxGm_[gOff], ci, padI);
                    DataCopyExtParams cu{1, static_cast<uint32_t>(jn * sizeof(U)), 0, 0, 0};
                    DataCopyPad(valDst, updGm_[gOff], cu, padU);
                } else {
                    DataCopyExtParams ci{static_cast<uint16_t>(jn), static_cast<uint32_t>(rl * sizeof(TI)),
                                         static_cast<uint32_t>((inner_ - rl) * sizeof(TI)), iGap, 0};
                    DataCopyPad(il, idxGm_[gOff], ci, padI);
                    DataCopyExtParams cu{static_cast<uint16_t>(jn), static_cast<uint32_t>(rl * sizeof(U)),
                                         static_cast<uint32_t>((inner_ - rl) * sizeof(U)), uGap, 0};
                    DataCopyPad(valDst, updGm_[gOff], cu, padU);
                }
                SetFlag<HardEvent::MTE2_V>(eM2V);
                WaitFlag<HardEvent::MTE2_V>(eM2V);

                // offsets of all rows of the tile: idx * gs + (yBase + column offset)
                LocalTensor<int32_t> isrc = offT;
                if constexpr (sizeof(TI) == 8) {
                    Cast(offT, il, RoundMode::CAST_NONE, static_cast<uint32_t>(n));
                    PipeBarrier<PIPE_V>();
                } else {
                    isrc = il.template ReinterpretCast<int32_t>();
                }
                if (!gsOne) {
                    Mul(offT, isrc, gsT, static_cast<int32_t>(n));
                    PipeBarrier<PIPE_V>();
                    isrc = offT;
                }
                if (flat) {
                    Adds(offT, isrc, static_cast<int32_t>(yBase), static_cast<int32_t>(n));
                } else {
                    Add(offT, isrc, colRep, static_cast<int32_t>(n));
                }
                if constexpr (KIND == 2 || KIND == 3) {
                    if (acc32_) {
                        Cast(valF, ul.template ReinterpretCast<DT>(), RoundMode::CAST_NONE, static_cast<uint32_t>(n));
                    }
                }
                SetFlag<HardEvent::V_S>(eVS);
                WaitFlag<HardEvent::V_S>(eVS);

                if (flat) {
                    for (uint64_t m = 0; m < jn; ++m) {
                        ApplyOne(offT, valU, valF, static_cast<uint32_t>(m));
                    }
                } else {
                    for (uint64_t jj = 0; jj < jn; ++jj) {
                        const uint64_t base = jj * P;
                        for (uint64_t rr = 0; rr < rl; ++rr) {
                            ApplyOne(offT, valU, valF, static_cast<uint32_t>(base + rr));
                        }
                    }
                }
            }
        }
        SetFlag<HardEvent::S_V>(eSV);
        WaitFlag<HardEvent::S_V>(eSV);
    }

    __aicore__ inline float ToFloat(U v)
    {
        if constexpr (KIND == 2) {
            return ScatterHalfToFloat(v);
        } else if constexpr (KIND == 3) {
            return ScatterBf16ToFloat(v);
        } else {
            return static_cast<float>(v);
        }
    }

    // phase 2: each unit owns all y lines of (outer o, inner range), so no two cores touch one element
    __aicore__ inline void ScatterUnits()
    {
        uint64_t uStart = 0;
        uint64_t uEnd = 0;
        CoreUnits(uStart, uEnd);
        if (uStart >= uEnd) {
            return;
        }
        LocalTensor<TI> il = idxBuf_.Get<TI>();
        LocalTensor<U> ul = updBuf_.Get<U>();
        event_t eM2S = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        event_t eSM2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE2));
        DataCopyPadExtParams<TI> padI{false, 0, 0, 0};
        DataCopyPadExtParams<U> padU{false, 0, 0, 0};
        const uint64_t gs = stride_[g_];
        const int32_t last = static_cast<int32_t>(nd_) - 1;
        const int32_t firstInner = static_cast<int32_t>(g_) + 1;
        bool firstTile = true;

        for (uint64_t u = uStart; u < uEnd; ++u) {
            const uint64_t o = u / rchunks_;
            const uint64_t rc = u - o * rchunks_;
            uint64_t r0 = 0;
            uint64_t rl = 1;
            ChunkRange(rc, r0, rl);
            // y offset of the outer coordinates
            uint64_t yBase = 0;
            uint64_t rem = o;
            for (int32_t d = static_cast<int32_t>(g_) - 1; d >= 0; --d) {
                const uint64_t cd = rem % shape_[d];
                rem = rem / shape_[d];
                yBase += cd * stride_[d];
            }
            // inner coordinates of r0
            uint64_t cin0[SCATTER_MAX_DIMS];
            uint64_t inOff0 = 0;
            rem = r0;
            for (int32_t d = last; d >= firstInner; --d) {
                cin0[d] = rem % shape_[d];
                rem = rem / shape_[d];
                inOff0 += cin0[d] * stride_[d];
            }
            const bool contig = (rl == inner_);
            const uint64_t pI = contig ? inner_ : ((rl * sizeof(TI) + 31) / 32 * 32) / sizeof(TI);
            const uint64_t pU = contig ? inner_ : ((rl * sizeof(U) + 31) / 32 * 32) / sizeof(U);
            const uint64_t pMax = pI > pU ? pI : pU;
            uint64_t jt = SCATTER_CAP / pMax;
            if (jt > 4095) {
                jt = 4095;
            }
            if (jt < 1) {
                jt = 1;
            }
            for (uint64_t j0 = 0; j0 < ki_; j0 += jt) {
                uint64_t jn = ki_ - j0;
                if (jn > jt) {
                    jn = jt;
                }
                const uint64_t gOff = (o * ki_ + j0) * inner_ + r0;
                if (!firstTile) {
                    SetFlag<HardEvent::S_MTE2>(eSM2);
                    WaitFlag<HardEvent::S_MTE2>(eSM2);
                }
                firstTile = false;
                if (contig) {
                    DataCopyExtParams ci{1, static_cast<uint32_t>(jn * inner_ * sizeof(TI)), 0, 0, 0};
                    DataCopyPad(il, idxGm_[gOff], ci, padI);
                    DataCopyExtParams cu{1, static_cast<uint32_t>(jn * inner_ * sizeof(U)), 0, 0, 0};
                    DataCopyPad(ul, updGm_[gOff], cu, padU);
                } else {
                    DataCopyExtParams ci{static_cast<uint16_t>(jn), static_cast<uint32_t>(rl * sizeof(TI)),
                                         static_cast<uint32_t>((inner_ - rl) * sizeof(TI)), 0, 0};
                    DataCopyPad(il, idxGm_[gOff], ci, padI);
                    DataCopyExtParams cu{static_cast<uint16_t>(jn), static_cast<uint32_t>(rl * sizeof(U)),
                                         static_cast<uint32_t>((inner_ - rl) * sizeof(U)), 0, 0};
                    DataCopyPad(ul, updGm_[gOff], cu, padU);
                }
                SetFlag<HardEvent::MTE2_S>(eM2S);
                WaitFlag<HardEvent::MTE2_S>(eM2S);

                for (uint64_t jj = 0; jj < jn; ++jj) {
                    uint64_t cin[SCATTER_MAX_DIMS];
                    for (int32_t d = firstInner; d <= last; ++d) {
                        cin[d] = cin0[d];
                    }
                    uint64_t inOff = inOff0;
                    const uint64_t bi = jj * pI;
                    const uint64_t bu = jj * pU;
                    for (uint64_t rr = 0; rr < rl; ++rr) {
                        const int64_t iv = static_cast<int64_t>(il.GetValue(static_cast<uint32_t>(bi + rr)));
                        const U uv = ul.GetValue(static_cast<uint32_t>(bu + rr));
                        const uint64_t yo = yBase + static_cast<uint64_t>(iv) * gs + inOff;
                        if (acc32_) {
                            const float av = wsGm_.GetValue(yo);
                            wsGm_.SetValue(yo, ScatterFloatOp(av, ToFloat(uv), mode_));
                        } else if (mode_ == 0) {
                            yGm_.SetValue(yo, uv);
                        } else {
                            const U av = yGm_.GetValue(yo);
                            yGm_.SetValue(yo, ScatterCombine<U, KIND>(av, uv, mode_));
                        }
                        // advance the inner odometer
                        int32_t d = last;
                        while (d >= firstInner) {
                            cin[d] += 1;
                            inOff += stride_[d];
                            if (cin[d] < shape_[d] || d == firstInner) {
                                break;
                            }
                            inOff -= shape_[d] * stride_[d];
                            cin[d] = 0;
                            --d;
                        }
                    }
                }
            }
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> copyBuf0_;
    TBuf<TPosition::VECCALC> copyBuf1_;
    TBuf<TPosition::VECCALC> idxBuf_;
    TBuf<TPosition::VECCALC> updBuf_;
    TBuf<TPosition::VECCALC> packBuf_;
    GlobalTensor<U> dataGm_;
    GlobalTensor<U> yGm_;
    GlobalTensor<TI> idxGm_;
    GlobalTensor<U> updGm_;
    GlobalTensor<DT> dataGmT_;
    GlobalTensor<DT> yGmT_;
    GlobalTensor<float> wsGm_;
    bool acc32_ = false;
    bool packOk_ = false;
    uint64_t shape_[SCATTER_MAX_DIMS];
    uint64_t stride_[SCATTER_MAX_DIMS];
    uint64_t blk_ = 0;
    uint64_t yTotal_ = 0;
    uint64_t copyPerCore_ = 0;
    uint64_t ki_ = 0;
    uint64_t inner_ = 1;
    uint64_t rlen_ = 1;
    uint64_t rchunks_ = 1;
    uint64_t units_ = 0;
    uint64_t upc_ = 1;
    uint64_t uBase_ = 0;
    uint64_t uRem_ = 0;
    uint64_t rBase_ = 1;
    uint64_t rRem_ = 0;
    uint32_t mode_ = 0;
    uint32_t nd_ = 1;
    uint32_t g_ = 0;
};

extern "C" __global__ __aicore__ void scatter_custom(GM_ADDR data, GM_ADDR indices, GM_ADDR updates, GM_ADDR y,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    ScatterKernel<DTYPE_DATA, DTYPE_INDICES> op;
    op.Init(data, indices, updates, y, workspace, t);
    op.Process();
}

namespace optiling {
static uint64_t ScatterDtypeBytes(ge::DataType dt)
{
    switch (dt) {
        case ge::DT_INT8:
        case ge::DT_UINT8:
            return 1;
        case ge::DT_FLOAT16:
        case ge::DT_BF16:
        case ge::DT_INT16:
            return 2;
        case ge::DT_INT64:
        case ge::DT_UINT64:
            return 8;
        default:
            return 4;
    }
}

static bool ScatterStrEq(const char* a, const char* b)
{
    if (a == nullptr) {
        return false;
    }
    while (*a != '\0' && *b != '\0') {
        char ca = *a;
        if (ca >= 'A' && ca <= 'Z') {
            ca = static_cast<char>(ca - 'A' + 'a');
        }
        if (ca != *b) {
            return false;
        }
        ++a;
        ++b;
    }
    return *a == '\0' && *b == '\0';
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& ds = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& is = context->GetInputShape(1)->GetStorageShape();
    const uint64_t dataBytes = ScatterDtypeBytes(context->GetInputDesc(0)->GetDataType());

    int64_t nd = static_cast<int64_t>(ds.GetDimNum());
    uint64_t dshape[SCATTER_MAX_DIMS];
    uint64_t ishape[SCATTER_MAX_DIMS];
    uint64_t ystride[SCATTER_MAX_DIMS];
    if (nd <= 0) {
        nd = 1;
        dshape[0] = 1;
        ishape[0] = (is.GetDimNum() > 0) ? static_cast<uint64_t>(is.GetDim(0)) : 1;
    } else {
        if (nd > static_cast<int64_t>(SCATTER_MAX_DIMS)) {
            return ge::GRAPH_FAILED;
        }
        const int64_t ind = static_cast<int64_t>(is.GetDimNum());
        for (int64_t d = 0; d < nd; ++d) {
            dshape[d] = static_cast<uint64_t>(ds.GetDim(d));
            ishape[d] = (d < ind) ? static_cast<uint64_t>(is.GetDim(d)) : 1;
        }
    }
    uint64_t acc = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
        ystride[d] = acc;
        acc *= dshape[d];
    }
    const uint64_t yTotal = acc;
    uint64_t idxTotal = 1;
    for (int64_t d = 0; d < nd; ++d) {
        idxTotal *= ishape[d];
    }

    int64_t dim = 0;
    uint64_t mode = 0;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* p = attrs->GetAttrPointer<int64_t>(0);
        if (p != nullptr) {
            dim = *p;
        }
        const char* r = attrs->GetAttrPointer<char>(1);
        if (ScatterStrEq(r, "add") || ScatterStrEq(r, "sum")) {
            mode = 1;
        } else if (ScatterStrEq(r, "multiply") || ScatterStrEq(r, "mul") || ScatterStrEq(r, "prod")) {
            mode = 2;
        } else if (ScatterStrEq(r, "amax") || ScatterStrEq(r, "max")) {
            mode = 3;
        } else if (ScatterStrEq(r, "amin") || ScatterStrEq(r, "min")) {
            mode = 4;
        }
    }
    if (dim < 0) {
        dim += nd;
    }
    if (dim < 0 || dim >= nd) {
        dim = 0;
    }

    // collapse the index shape: drop size-1 non-scatter dims, merge neighbours contiguous in y
    uint64_t cshape[SCATTER_MAX_DIMS];
    uint64_t cstride[SCATTER_MAX_DIMS];
    bool cg[SCATTER_MAX_DIMS];
    uint32_t ndc = 0;
    for (int64_t d = 0; d < nd; ++d) {
        const bool isG = (d == dim);
        if (!isG && ishape[d] == 1) {
            continue;
        }
        if (!isG && ndc > 0 && !cg[ndc - 1] && cstride[ndc - 1] == ishape[d] * ystride[d]) {
            cshape[ndc - 1] *= ishape[d];
            cstride[ndc - 1] = ystride[d];
        } else {
            cshape[ndc] = ishape[d];
            cstride[ndc] = ystride[d];
            cg[ndc] = isG;
            ++ndc;
        }
    }
    uint32_t gpos = 0;
    for (uint32_t d = 0; d < ndc; ++d) {
        if (cg[d]) {
            gpos = d;
        }
    }
    const uint64_t ki = cshape[gpos];
    uint64_t outer = 1;
    for (uint32_t d = 0; d < gpos; ++d) {
        outer *= cshape[d];
    }
    uint64_t inner = 1;
    for (uint32_t d = gpos + 1; d < ndc; ++d) {
        inner *= cshape[d];
    }

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }

    // work units: (outer position, inner chunk); never split one y line over two cores
    uint64_t rchunks = (inner + SCATTER_MAX_RLEN - 1) / SCATTER_MAX_RLEN;
    if (outer < coreNum) {
        const uint64_t want = (coreNum + outer - 1) / outer;
        if (want > rchunks) {
            rchunks = want;
        }
    }
    if (rchunks > inner) {
        rchunks = inner;
    }
    if (rchunks < 1) {
        rchunks = 1;
    }
    // former/tail split of the inner axis in whole elements (the work is scalar, per element): the first
    // rRem chunks take one element more, so the widest chunk is ceil(inner / rchunks) and no chunk is short
    const uint64_t rBase = inner / rchunks;
    const uint64_t rRem = inner % rchunks;
    const uint64_t rlen = rBase + ((rRem != 0) ? 1 : 0);
    uint64_t units = (idxTotal == 0 || ki == 0) ? 0 : outer * rchunks;

    uint64_t blockDim = units;
    const uint64_t byCopy = (yTotal + 8191) / 8192;
    if (byCopy > blockDim) {
        blockDim = byCopy;
    }
    if (blockDim > coreNum) {
        blockDim = coreNum;
    }
    if (blockDim < 1) {
        blockDim = 1;
    }
    uint64_t upc = (units + blockDim - 1) / blockDim;
    if (upc < 1) {
        upc = 1;
    }
    // former/tail split of the units: the first uRem cores take uBase + 1, the rest uBase
    const uint64_t uBase = units / blockDim;
    const uint64_t uRem = units % blockDim;
    const uint64_t align = 512 / dataBytes;
    uint64_t cpc = (yTotal + blockDim - 1) / blockDim;
    cpc = (cpc + align - 1) / align * align;
    if (cpc < 1) {
        cpc = 1;
    }

    ScatterCustomTilingData* t = context->GetTilingData<ScatterCustomTilingData>();
    t->mode = mode;
    const bool acc32 = (dataBytes == 2) && (mode == 1 || mode == 2);
    t->acc32 = acc32 ? 1 : 0;
    t->yTotal = yTotal;
    t->copyPerCore = cpc;
    t->idxTotal = idxTotal;
    t->ndim = ndc;
    t->gpos = gpos;
    t->ki = ki;
    t->inner = inner;
    t->rlen = rlen;
    t->rchunks = rchunks;
    t->units = units;
    t->unitsPerCore = upc;
    t->unitsBase = uBase;
    t->unitsRem = uRem;
    t->rBase = rBase;
    t->rRem = rRem;
    t->packOk = (dataBytes <= 4 && yTotal < (1ULL << 30)) ? 1 : 0;
    for (uint32_t d = 0; d < SCATTER_MAX_DIMS; ++d) {
        t->shape[d] = (d < ndc) ? cshape[d] : 1;
        t->stride[d] = (d < ndc) ? cstride[d] : 0;
    }
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = acc32 ? static_cast<size_t>(yTotal * sizeof(float)) : 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (scatter).
class ScatterCustom : public OpDef {
public:
    explicit ScatterCustom(const char* name) : OpDef(name)
    {
        this->Input("data")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16, ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("indices")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("updates")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16, ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16, ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(REQUIRED).Int();
        this->Attr("reduce").AttrType(REQUIRED).String();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ScatterCustom);
}  // namespace ops


