// GridSampler3D (torch.nn.functional.grid_sample on 5-D input) for Ascend 910B.
// Work unit = (n, chunk of output points, group of channels). Per unit the source indices, the
// validity and the trilinear weights of every output point are computed once with vector ops, as
// torch's CPU code does (unnormalise, border/reflection, floor/nearbyint, weights
// (x1 - x) * (y1 - y) * (z1 - z) ...), and kept in UB. A corner outside the volume is pointed at a
// zero element placed after the volume in UB (torch skips it: it must add exactly 0, also when the
// input holds inf/NaN). Then for every channel of the unit the channel's volume (or a segment of it
// when it does not fit in UB) is loaded into UB and the 8 (1) corners are collected with Gather and
// blended in float (nearest: the gathered value is the output, no arithmetic). With segments, the
// corners outside the loaded segment read zero blocks around it (5 vector ops per corner and segment).
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct GridSampler3dCustomTilingData {
    uint32_t N;
    uint32_t C;
    uint32_t D;
    uint32_t H;
    uint32_t W;
    uint32_t P;          // Do * Ho * Wo
    uint32_t mode;       // 0 bilinear (trilinear), 1 nearest
    uint32_t pad;        // 0 zeros, 1 border, 2 reflection
    uint32_t align;      // align_corners
    uint32_t corners;    // 8 or 1
    uint32_t pc;         // points per chunk (multiple of 64)
    uint32_t chunks;     // chunks per batch
    uint32_t cgroups;    // channel groups
    uint32_t cPer;       // channels per group
    uint32_t units;
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t segLen;     // elements of a volume segment
    uint32_t segs;       // segments per channel volume
    uint32_t sc;         // points per index sub-chunk (scratch)
    uint32_t sg;         // points per segment-offset sub-chunk
    uint32_t zIdx;       // element index of the zero slot in the volume buffer
    uint32_t volBytes;   // bytes of the volume buffer (also index scratch)
};
REGISTER_TILING_DEFAULT(GridSampler3dCustomTilingData);

using namespace AscendC;

__aicore__ inline uint32_t MinU32(uint32_t a, uint32_t b) { return a < b ? a : b; }

template <typename T, typename TG>
class KernelGridSampler3d {
public:
    static constexpr bool X_F32 = sizeof(T) == 4;
    static constexpr bool G_F32 = sizeof(TG) == 4;

    __aicore__ inline KernelGridSampler3d() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR grid, GM_ADDR y, const GridSampler3dCustomTilingData& t)
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
            count_ = t.units - first_;
        }
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        gGm_.SetGlobalBuffer((__gm__ TG*)grid);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        const uint32_t pc = t.pc;
        const uint32_t K = t.corners;
        pipe_.InitBuffer(volBuf_, t.volBytes);
        pipe_.InitBuffer(offBuf_, K * pc * 4);
        if (t.mode == 0) {
            pipe_.InitBuffer(wBuf_, K * pc * 4);
        }
        pipe_.InitBuffer(outQ_, 2, pc * sizeof(T));
        pipe_.InitBuffer(gatFBuf_, t.mode == 0 ? pc * 4 : pc * sizeof(T));
        if constexpr (!X_F32) {
            if (t.mode == 0) {
                pipe_.InitBuffer(accBuf_, pc * 4);
                pipe_.InitBuffer(gatHBuf_, pc * 2);
            }
        }
        if (t.segs > 1) {
            pipe_.InitBuffer(segBuf_, 2 * t.sg * 4);
        }
        eMte2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        eVMte2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        const uint32_t perN = t_.chunks * t_.cgroups;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t n = u / perN;
            const uint32_t r = u % perN;
            const uint32_t ch = r / t_.cgroups;
            const uint32_t g = r % t_.cgroups;
            const uint32_t p0 = ch * t_.pc;
            if (p0 >= t_.P) {
                continue;
            }
            const uint32_t np = MinU32(t_.pc, t_.P - p0);
            const uint32_t c0 = g * t_.cPer;
            if (c0 >= t_.C) {
                continue;
            }
            const uint32_t c1 = MinU32(c0 + t_.cPer, t_.C);
            BuildIndices(n, p0, np);
            for (uint32_t c = c0; c < c1; ++c) {
                Channel(n, c, p0, np);
            }
        }
    }

private:
    // MTE2 may overwrite the volume buffer only after the vector unit finished reading it.
    __aicore__ inline void WaitVtoMte2()
    {
        SetFlag<HardEvent::V_MTE2>(eVMte2_);
        WaitFlag<HardEvent::V_MTE2>(eVMte2_);
    }
    __aicore__ inline void WaitMte2toV()
    {
        SetFlag<HardEvent::MTE2_V>(eMte2V_);
        WaitFlag<HardEvent::MTE2_V>(eMte2V_);
    }

    // dst = (f >= 0 && f <= S-1) ? 1 : 0 for integer-valued f (clamp trick, no compare)
    __aicore__ inline void Valid(LocalTensor<float>& dst, LocalTensor<float>& f, float S, LocalTensor<float>& tmp,
                                 uint32_t np)
    {
        Adds(dst, f, 1.0f, np);
        Maxs(dst, dst, 0.0f, np);
        Mins(dst, dst, 1.0f, np);
        Muls(tmp, f, -1.0f, np);
        Adds(tmp, tmp, S, np);
        Maxs(tmp, tmp, 0.0f, np);
        Mins(tmp, tmp, 1.0f, np);
        Mul(dst, dst, tmp, np);
    }

    // dst = clamp(f, 0, S-1) * stride as int32
    __aicore__ inline void ClampIdx(LocalTensor<int32_t>& dst, LocalTensor<float>& f, float Sm1, int32_t stride,
                                    LocalTensor<float>& tmp, uint32_t np)
    {
        Maxs(tmp, f, 0.0f, np);
        Mins(tmp, tmp, Sm1, np);
        Cast(dst, tmp, RoundMode::CAST_RINT, np);
        if (stride != 1) {
            Muls(dst, dst, stride, np);
        }
    }

    // s0_ holds the raw grid coordinate of this axis; produce torch's weights of the low / high
    // corner, their validity (0/1) and clamped, stride-scaled indices (nearest: only v0 / i0).
    __aicore__ inline void Axis(uint32_t np, uint32_t size, int32_t stride, LocalTensor<float>& w0,
                                LocalTensor<float>& w1, LocalTensor<float>& v0, LocalTensor<float>& v1,
                                LocalTensor<int32_t>& i0, LocalTensor<int32_t>& i1)
    {
        const float S = static_cast<float>(size);
        const float Sm1 = static_cast<float>(size - 1);
        LocalTensor<float>& c = s0_;
        // unnormalise
        Adds(c, c, 1.0f, np);
        if (t_.align) {
            Muls(c, c, 0.5f, np);
            Muls(c, c, Sm1, np);
        } else {
            Muls(c, c, S, np);
            Adds(c, c, -1.0f, np);
            Muls(c, c, 0.5f, np);
        }
        if (t_.pad == 1) {
            Maxs(c, c, 0.0f, np);
            Mins(c, c, Sm1, np);
        } else if (t_.pad == 2) {
            const float lo = t_.align ? 0.0f : -0.5f;
            const float span = t_.align ? Sm1 : S;
            if (size <= 1 && t_.align) {
                Duplicate(c, 0.0f, static_cast<int32_t>(np));
            } else {
                Adds(s2_, c, -lo, np);                       // t = |c - lo|
                Abs(s2_, s2_, np);
                Duplicate(s3_, span, static_cast<int32_t>(np));
                Div(s3_, s2_, s3_, np);                      // t / span
                Cast(s5i_, s3_, RoundMode::CAST_FLOOR, np);
                Cast(s1_, s5i_, RoundMode::CAST_NONE, np);   // flips = floor(t / span)
                Muls(s3_, s1_, -span, np);
                Add(s3_, s2_, s3_, np);                      // e = t - flips * span (exact)
                Muls(s4_, s3_, -1099511627776.0f, np);       // e < 0 -> 1, else 0
                Maxs(s4_, s4_, 0.0f, np);
                Mins(s4_, s4_, 1.0f, np);
                Muls(s4_, s4_, span, np);
                Add(s3_, s3_, s4_, np);                      // extra = fmod(t, span)
                Muls(s2_, s1_, 0.5f, np);                    // odd = flips - 2 * floor(flips / 2)
                Cast(s5i_, s2_, RoundMode::CAST_FLOOR, np);
                Cast(s2_, s5i_, RoundMode::CAST_NONE, np);
                Muls(s2_, s2_, 2.0f, np);
                Sub(s1_, s1_, s2_, np);
                Adds(s4_, s3_, lo, np);                      // even: extra + lo
                Muls(s2_, s3_, -1.0f, np);                   // odd: (span - extra) + lo
                Adds(s2_, s2_, span, np);
                Adds(s2_, s2_, lo, np);
                Mul(s2_, s2_, s1_, np);
                Muls(s1_, s1_, -1.0f, np);
                Adds(s1_, s1_, 1.0f, np);
                Mul(s4_, s4_, s1_, np);
                Add(c, s4_, s2_, np);
            }
            Maxs(c, c, 0.0f, np);
            Mins(c, c, Sm1, np);
        }
        if (t_.mode == 0) {
            Cast(s5i_, c, RoundMode::CAST_FLOOR, np);
            Cast(s1_, s5i_, RoundMode::CAST_NONE, np);       // f = floor(c)
            Adds(s2_, s1_, 1.0f, np);                        // f + 1
            Sub(w0, s2_, c, np);                             // (f + 1) - c
            Sub(w1, c, s1_, np);                             // c - f
            Valid(v0, s1_, S, s4_, np);
            Valid(v1, s2_, S, s4_, np);
            ClampIdx(i0, s1_, Sm1, stride, s3_, np);
            ClampIdx(i1, s2_, Sm1, stride, s3_, np);
        } else {
            Cast(s5i_, c, RoundMode::CAST_RINT, np);         // nearbyint (half to even)
            Cast(s1_, s5i_, RoundMode::CAST_NONE, np);
            Valid(v0, s1_, S, s4_, np);
            ClampIdx(i0, s1_, Sm1, stride, s3_, np);
        }
    }

    __aicore__ inline void LoadCoord(uint32_t axis, uint32_t np)
    {
        CreateVecIndex(gidx_, static_cast<int32_t>(0), np);
        Muls(gidx_, gidx_, static_cast<int32_t>(3 * sizeof(TG)), np);
        if (axis != 0) {
            Adds(gidx_, gidx_, static_cast<int32_t>(axis * sizeof(TG)), np);
        }
        LocalTensor<uint32_t> offs = gidx_.ReinterpretCast<uint32_t>();
        if constexpr (G_F32) {
            Gather(s0_, gridRaw_, offs, static_cast<uint32_t>(0), np);
        } else {
            Gather(gh_, gridRaw_, offs, static_cast<uint32_t>(0), np);
            Cast(s0_, gh_, RoundMode::CAST_NONE, np);
        }
    }

    // Indices of the chunk's points, computed in sub-chunks of t_.sc points (scratch sized for those).
    __aicore__ inline void BuildIndices(uint32_t n, uint32_t p0, uint32_t np)
    {
        for (uint32_t j = 0; j < np; j += t_.sc) {
            const uint32_t m = MinU32(t_.sc, np - j);
            BuildSub(n, p0 + j, m, j);
        }
    }

    __aicore__ inline void BuildSub(uint32_t n, uint32_t p0, uint32_t np, uint32_t j)
    {
        const uint32_t pc = t_.sc;          // scratch views are sized for one sub-chunk
        const uint32_t fullPc = t_.pc;
        uint32_t o = 0;
        gridRaw_ = volBuf_.GetWithOffset<TG>(3 * pc, o);
        o += 3 * pc * sizeof(TG);
        gidx_ = volBuf_.GetWithOffset<int32_t>(pc, o);
        o += pc * 4;
        gh_ = volBuf_.GetWithOffset<TG>(pc, o);
        o += pc * 2;
        s0_ = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        s1_ = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        s2_ = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        s3_ = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        s4_ = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        s5i_ = volBuf_.GetWithOffset<int32_t>(pc, o);
        o += pc * 4;
        LocalTensor<float> wa = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        LocalTensor<float> wb = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        LocalTensor<float> va = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        LocalTensor<float> vb = volBuf_.GetWithOffset<float>(pc, o);
        o += pc * 4;
        LocalTensor<int32_t> ia = volBuf_.GetWithOffset<int32_t>(pc, o);
        o += pc * 4;
        LocalTensor<int32_t> ib = volBuf_.GetWithOffset<int32_t>(pc, o);
        o += pc * 4;

        LocalTensor<int32_t> off[8];
        LocalTensor<float> w[8];
        LocalTensor<float> val[8];
        for (uint32_t k = 0; k < t_.corners; ++k) {
            off[k] = offBuf_.GetWithOffset<int32_t>(pc, (k * fullPc + j) * 4);
            if (t_.mode == 0) {
                w[k] = wBuf_.GetWithOffset<float>(pc, (k * fullPc + j) * 4);
            }
            val[k] = volBuf_.GetWithOffset<float>(pc, o);
            o += pc * 4;
        }

        // grid chunk -> UB (the volume buffer is free between channels)
        WaitVtoMte2();
        DataCopyExtParams cp{1, static_cast<uint32_t>(np * 3 * sizeof(TG)), 0, 0, 0};
        DataCopyPadExtParams<TG> pd{false, 0, 0, 0};
        DataCopyPad(gridRaw_, gGm_[(static_cast<uint64_t>(n) * t_.P + p0) * 3], cp, pd);
        WaitMte2toV();

        const int32_t strideH = static_cast<int32_t>(t_.W);
        const int32_t strideD = static_cast<int32_t>(t_.H * t_.W);
        if (t_.mode == 0) {
            // x: corners 0 (x0) and 1 (x1)
            LoadCoord(0, np);
            Axis(np, t_.W, 1, w[0], w[1], val[0], val[1], off[0], off[1]);
            // y: corner bit 1
            LoadCoord(1, np);
            Axis(np, t_.H, strideH, wa, wb, va, vb, ia, ib);
            for (uint32_t k = 0; k < 2; ++k) {
                Add(off[2 + k], off[k], ib, np);
                Mul(w[2 + k], w[k], wb, np);
                Mul(val[2 + k], val[k], vb, np);
                Add(off[k], off[k], ia, np);
                Mul(w[k], w[k], wa, np);
                Mul(val[k], val[k], va, np);
            }
            // z: corner bit 2
            LoadCoord(2, np);
            Axis(np, t_.D, strideD, wa, wb, va, vb, ia, ib);
            for (uint32_t k = 0; k < 4; ++k) {
                Add(off[4 + k], off[k], ib, np);
                Mul(w[4 + k], w[k], wb, np);
                Mul(val[4 + k], val[k], vb, np);
                Add(off[k], off[k], ia, np);
                Mul(w[k], w[k], wa, np);
                Mul(val[k], val[k], va, np);
            }
        } else {
            LoadCoord(0, np);
            Axis(np, t_.W, 1, wa, wb, val[0], vb, off[0], ib);
            LoadCoord(1, np);
            Axis(np, t_.H, strideH, wa, wb, va, vb, ia, ib);
            Add(off[0], off[0], ia, np);
            Mul(val[0], val[0], va, np);
            LoadCoord(2, np);
            Axis(np, t_.D, strideD, wa, wb, va, vb, ia, ib);
            Add(off[0], off[0], ia, np);
            Mul(val[0], val[0], va, np);
        }
        // Invalid corners: single segment -> the zero slot (as byte offset); several segments -> the
        // corner's element index in the whole volume as float, -2^24 when invalid.
        for (uint32_t k = 0; k < t_.corners; ++k) {
            if (t_.segs == 1) {
                Cast(s5i_, val[k], RoundMode::CAST_RINT, np);          // 0 / 1
                Mul(off[k], off[k], s5i_, np);
                const int32_t z = static_cast<int32_t>(t_.zIdx);
                Muls(s5i_, s5i_, -z, np);
                Adds(s5i_, s5i_, z, np);                            // (1 - valid) * zIdx
                Add(off[k], off[k], s5i_, np);
                Muls(off[k], off[k], static_cast<int32_t>(sizeof(T)), np);   // element -> byte offsets
            } else {
                LocalTensor<float> gf = off[k].ReinterpretCast<float>();
                Cast(s1_, off[k], RoundMode::CAST_NONE, np);
                Mul(s1_, s1_, val[k], np);
                Adds(s2_, val[k], -1.0f, np);
                Muls(s2_, s2_, 16777216.0f, np);
                Add(gf, s1_, s2_, np);
            }
        }
    }

    // Byte offsets of corner k for the segment held at element `epb` of the volume buffer, with zero
    // blocks before it and at element epb + lenPad: outside the segment -> a zero (5 vector ops).
    __aicore__ inline void SegOffsets(LocalTensor<int32_t>& offk, uint32_t segBase, uint32_t lenPad, uint32_t np)
    {
        const uint32_t pc = t_.sg;
        constexpr uint32_t EPB = 32 / sizeof(T);
        LocalTensor<float> gf = offk.ReinterpretCast<float>();
        LocalTensor<float> sF = segBuf_.GetWithOffset<float>(pc, 0);
        LocalTensor<int32_t> sI = segBuf_.GetWithOffset<int32_t>(pc, pc * 4);
        Adds(sF, gf, static_cast<float>(EPB) - static_cast<float>(segBase), np);
        Maxs(sF, sF, static_cast<float>(EPB - 1), np);
        Mins(sF, sF, static_cast<float>(EPB + lenPad), np);
        Cast(sI, sF, RoundMode::CAST_RINT, np);
        Muls(sI, sI, static_cast<int32_t>(sizeof(T)), np);
    }

    // Gather points [j, j + m) of one corner with byte offsets bo (bo[0] is point j) and blend them.
    __aicore__ inline void Blend(LocalTensor<T>& out, LocalTensor<float>& acc, LocalTensor<T>& v,
                                 LocalTensor<uint32_t>& bo, LocalTensor<float>& wk, uint32_t j, uint32_t m,
                                 bool isFirst)
    {
        if (t_.mode == 1) {
            // nearest: the value itself (0 from a zero slot when outside); other segments add exactly 0
            LocalTensor<T> oj = out[j];
            if (isFirst) {
                Gather(oj, v, bo, static_cast<uint32_t>(0), m);
            } else {
                LocalTensor<T> g = gatFBuf_.Get<T>();
                LocalTensor<T> gj = g[j];
                Gather(gj, v, bo, static_cast<uint32_t>(0), m);
                Add(oj, oj, gj, m);
            }
            return;
        }
        LocalTensor<float> gatF = gatFBuf_.Get<float>();
        LocalTensor<float> gj = gatF[j];
        if constexpr (X_F32) {
            Gather(gj, v, bo, static_cast<uint32_t>(0), m);
        } else {
            LocalTensor<T> gatH = gatHBuf_.Get<T>();
            LocalTensor<T> hj = gatH[j];
            Gather(hj, v, bo, static_cast<uint32_t>(0), m);
            Cast(gj, hj, RoundMode::CAST_NONE, m);
        }
        LocalTensor<float> aj = acc[j];
        LocalTensor<float> wj = wk[j];
        if (isFirst) {
            Mul(aj, gj, wj, m);
        } else {
            Mul(gj, gj, wj, m);
            Add(aj, aj, gj, m);
        }
    }

    __aicore__ inline void Channel(uint32_t n, uint32_t c, uint32_t p0, uint32_t np)
    {
        const uint32_t pc = t_.pc;
        LocalTensor<T> out = outQ_.AllocTensor<T>();
        LocalTensor<float> acc;
        if constexpr (X_F32) {
            acc = out.template ReinterpretCast<float>();
        } else {
            if (t_.mode == 0) {
                acc = accBuf_.Get<float>();
            }
        }
        const uint32_t vol = t_.D * t_.H * t_.W;
        const uint64_t base = (static_cast<uint64_t>(n) * t_.C + c) * vol;
        for (uint32_t s = 0; s < t_.segs; ++s) {
            const uint32_t segBase = s * t_.segLen;
            const uint32_t len = MinU32(t_.segLen, vol - segBase);
            constexpr uint32_t EPB = 32 / sizeof(T);
            const uint32_t lenPad = (len + EPB - 1) / EPB * EPB;
            LocalTensor<T> v = volBuf_.Get<T>();
            LocalTensor<T> vdst = t_.segs == 1 ? v : v[EPB];
            WaitVtoMte2();
            DataCopyExtParams cp{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pd{false, 0, 0, 0};
            DataCopyPad(vdst, xGm_[base + segBase], cp, pd);
            WaitMte2toV();
            if (t_.segs == 1) {
                LocalTensor<int16_t> zs = volBuf_.GetWithOffset<int16_t>(16, t_.zIdx * sizeof(T));
                Duplicate(zs, static_cast<int16_t>(0), 16);      // the zero slot (32 B)
            } else {
                LocalTensor<int16_t> z0 = volBuf_.GetWithOffset<int16_t>(16, 0);
                LocalTensor<int16_t> z1 = volBuf_.GetWithOffset<int16_t>(16, (EPB + lenPad) * sizeof(T));
                Duplicate(z0, static_cast<int16_t>(0), 16);      // zero block before the segment
                Duplicate(z1, static_cast<int16_t>(0), 16);      // and after it
            }
            for (uint32_t k = 0; k < t_.corners; ++k) {
                LocalTensor<int32_t> offk = offBuf_.GetWithOffset<int32_t>(pc, k * pc * 4);
                LocalTensor<float> wk;
                if (t_.mode == 0) {
                    wk = wBuf_.GetWithOffset<float>(pc, k * pc * 4);
                }
                const bool isFirst = (s == 0 && k == 0);
                if (t_.segs == 1) {
                    LocalTensor<uint32_t> bo = offk.ReinterpretCast<uint32_t>();
                    Blend(out, acc, v, bo, wk, 0, np, isFirst);
                } else {
                    for (uint32_t j = 0; j < np; j += t_.sg) {
                        const uint32_t m = MinU32(t_.sg, np - j);
                        LocalTensor<int32_t> offkj = offk[j];
                        SegOffsets(offkj, segBase, lenPad, m);
                        LocalTensor<int32_t> sI = segBuf_.GetWithOffset<int32_t>(t_.sg, t_.sg * 4);
                        LocalTensor<uint32_t> bo = sI.ReinterpretCast<uint32_t>();
                        Blend(out, acc, v, bo, wk, j, m, isFirst);
                    }
                }
            }
        }
        if constexpr (!X_F32) {
            if (t_.mode == 0) {
                Cast(out, acc, RoundMode::CAST_RINT, np);
            }
        }
        outQ_.EnQue(out);
        LocalTensor<T> o = outQ_.DeQue<T>();
        DataCopyExtParams cpo{1, static_cast<uint32_t>(np * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[(static_cast<uint64_t>(n) * t_.C + c) * t_.P + p0], o, cpo);
        outQ_.FreeTensor(o);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> volBuf_, offBuf_, wBuf_, gatFBuf_, accBuf_, gatHBuf_, segBuf_;
    TQue<TPosition::VECOUT, 1> outQ_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<TG> gGm_;
    LocalTensor<TG> gridRaw_, gh_;
    LocalTensor<int32_t> gidx_, s5i_;
    LocalTensor<float> s0_, s1_, s2_, s3_, s4_;
    GridSampler3dCustomTilingData t_;
    uint32_t first_ = 0, count_ = 0;
    event_t eMte2V_, eVMte2_;
};

extern "C" __global__ __aicore__ void grid_sampler_3d_custom(GM_ADDR x, GM_ADDR grid, GM_ADDR y, GM_ADDR workspace,
                                                             GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelGridSampler3d<DTYPE_X, DTYPE_GRID> op;
    op.Init(x, grid, y, t);
    op.Process();
}

namespace optiling {
static bool StrEq(const char* a, const char* b)
{
    if (a == nullptr || b == nullptr) {
        return false;
    }
    while (*a != '\0' && *b != '\0') {
        if (*a != *b) {
            return false;
        }
        ++a;
        ++b;
    }
    return *a == *b;
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* xShape = context->GetInputShape(0);
    auto* gShape = context->GetInputShape(1);
    if (xShape == nullptr || gShape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& xs = xShape->GetStorageShape();
    const gert::Shape& gs = gShape->GetStorageShape();
    if (xs.GetDimNum() != 5 || gs.GetDimNum() != 5) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t N = static_cast<uint64_t>(xs.GetDim(0));
    const uint64_t C = static_cast<uint64_t>(xs.GetDim(1));
    const uint64_t D = static_cast<uint64_t>(xs.GetDim(2));
    const uint64_t H = static_cast<uint64_t>(xs.GetDim(3));
    const uint64_t W = static_cast<uint64_t>(xs.GetDim(4));
    const uint64_t P = static_cast<uint64_t>(gs.GetDim(1)) * static_cast<uint64_t>(gs.GetDim(2)) *
                       static_cast<uint64_t>(gs.GetDim(3));

    uint32_t mode = 0, pad = 0, align = 0;
    auto* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const char* im = attrs->GetAttrPointer<char>(0);
        const char* pm = attrs->GetAttrPointer<char>(1);
        const bool* ac = attrs->GetAttrPointer<bool>(2);
        if (im != nullptr && StrEq(im, "nearest")) {
            mode = 1;
        }
        if (pm != nullptr) {
            if (StrEq(pm, "border")) {
                pad = 1;
            } else if (StrEq(pm, "reflection")) {
                pad = 2;
            }
        }
        if (ac != nullptr && *ac) {
            align = 1;
        }
    }
    const uint64_t tb = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const uint64_t gb = context->GetInputDesc(1)->GetDataType() == ge::DT_FLOAT ? 4 : 2;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t cores = plat.GetCoreNumAiv();
    if (cores == 0) {
        cores = 1;
    }
    uint64_t usable = ub < 188160 ? ub : 188160;
    usable = usable > 4096 ? usable - 1024 : usable;

    const uint64_t K = mode == 0 ? 8 : 1;
    const uint64_t V = D * H * W;
    const uint64_t scr = 3 * gb + 54 + 4 * K;   // index scratch bytes per point (inside the volume buffer)
    // UB bytes per chunk point outside the volume buffer (offsets, weights, out x2, gather, acc)
    const uint64_t ppSingle = mode == 0 ? (64 + 2 * tb + 4 + (tb == 2 ? 6 : 0)) : (4 + 3 * tb);
    const uint64_t ppMulti = ppSingle;          // segment offsets use a fixed sub-chunk buffer
    const uint64_t SG = 2048;
    const uint64_t Pr = (P + 63) / 64 * 64;
    const uint64_t pcCap = Pr < 16384 ? (Pr == 0 ? 64 : Pr) : 16384;

    // Candidate layouts: the whole volume (one segment) or segments of segLen elements; for each the
    // largest chunk of points that fits, scored with the estimate's figures (HBM ~1.5 TB/s shared by
    // the cores for the volume reloads, vector cycles for gathers, segment masks and blends, the
    // busiest core's number of units).
    uint64_t pc = 0, segs = 1, segLen = V, volBytes = 0, zIdx = 0, sc = 64, sg = SG, cPerBest = 1;
    double bestCost = 1e300;
    const uint64_t cand[10] = {0, 65472, 49152, 32768, 24576, 16384, 12288, 8192, 4096, 2048};
    for (int ci = 0; ci < 10; ++ci) {
        uint64_t L = cand[ci];
        uint64_t S = 1, fixedBytes = 0, z = 0, pp = ppSingle;
        if (ci == 0) {
            z = (V * tb + 31) / 32 * 32 / tb;
            fixedBytes = z * tb + 32;
            if (tb == 2 && z * 2 > 131040) {
                continue;
            }
            L = V;
        } else {
            if (L >= V) {
                continue;
            }
            S = (V + L - 1) / L;
            fixedBytes = 32 + (L * tb + 31) / 32 * 32 + 32;
            pp = ppMulti;
            if (V >= 16777216) {
                continue;   // float element indices must stay exact
            }
        }
        const uint64_t segTmp = S > 1 ? SG * 8 : 0;
        if (fixedBytes + segTmp + 64 * pp >= usable) {
            continue;
        }
        // index sub-chunk: scratch inside the volume buffer, at least 256 points
        uint64_t s = fixedBytes / scr / 64 * 64;
        s = s > 2048 ? 2048 : s;
        s = s < 256 ? 256 : s;
        const uint64_t vbytes = fixedBytes > s * scr ? fixedBytes : s * scr;
        if (vbytes + segTmp + 64 * pp > usable) {
            continue;
        }
        uint64_t p = (usable - vbytes - segTmp) / pp / 64 * 64;
        p = p > pcCap ? pcCap : p;
        if (p < 64) {
            continue;
        }
        if (s > p) {
            s = p;
        }
        const uint64_t chunksU = (P + p - 1) / p;
        const uint64_t units0 = N * chunksU;
        // channel groups: the split with the fewest channel passes on the busiest core
        uint64_t cPerU = C == 0 ? 1 : C, roundsU = 1, bestLoad = ~0ULL;
        for (uint64_t g = 1; g <= C && g <= 256; ++g) {
            const uint64_t cp = (C + g - 1) / g;
            const uint64_t gg = (C + cp - 1) / cp;
            const uint64_t rr = (units0 * gg + cores - 1) / cores;
            if (rr * cp < bestLoad) {
                bestLoad = rr * cp;
                cPerU = cp;
                roundsU = rr;
            }
        }
        const double rounds = static_cast<double>(roundsU);
        // one unit: cPerU channels x (volume load + S x K corner passes) + the index build
        const double hbm = static_cast<double>(cPerU) * V * tb / (1.5e12 / static_cast<double>(cores));
        const double nsub = S > 1 ? static_cast<double>((p + SG - 1) / SG) : 1.0;
        const double rep32 = 7.6 * nsub + p / 64.0, rep16 = 7.6 * nsub + p * tb / 256.0;
        double perCorner = 2.0 * rep16;                                  // Gather
        if (S > 1) {
            perCorner += 5.0 * rep32;                                    // segment offsets
        }
        if (mode == 0) {
            perCorner += (tb == 2 ? 3.0 : 2.0) * rep32;                  // cast, mul, add
        } else if (S > 1) {
            perCorner += rep16;                                          // add of the segments
        }
        const double vecCycles = static_cast<double>(cPerU) * S * K * perCorner +
                                 180.0 * (7.6 * static_cast<double>((p + s - 1) / s) + p / 64.0);
        const double vec = vecCycles / 1.85e9;
        const double cost = rounds * (hbm > vec ? hbm : vec);
        if (cost < bestCost) {
            bestCost = cost;
            pc = p;
            segs = S;
            segLen = L;
            zIdx = z;
            sc = s;
            sg = SG < p ? SG : p;
            cPerBest = cPerU;
            volBytes = fixedBytes > s * scr ? fixedBytes : s * scr;
        }
    }
    if (pc == 0) {
        return ge::GRAPH_FAILED;
    }

    const uint64_t chunks = P == 0 ? 0 : (P + pc - 1) / pc;
    const uint64_t units0 = N * chunks;
    const uint64_t cPer = C == 0 ? 1 : cPerBest;
    const uint64_t cgroups = C == 0 ? 1 : (C + cPer - 1) / cPer;
    const uint64_t units = (C == 0) ? 0 : units0 * cgroups;
    uint64_t blockDim = units < cores ? units : cores;
    if (blockDim == 0) {
        blockDim = 1;
    }

    GridSampler3dCustomTilingData* t = context->GetTilingData<GridSampler3dCustomTilingData>();
    t->N = static_cast<uint32_t>(N);
    t->C = static_cast<uint32_t>(C);
    t->D = static_cast<uint32_t>(D);
    t->H = static_cast<uint32_t>(H);
    t->W = static_cast<uint32_t>(W);
    t->P = static_cast<uint32_t>(P);
    t->mode = mode;
    t->pad = pad;
    t->align = align;
    t->corners = static_cast<uint32_t>(K);
    t->pc = static_cast<uint32_t>(pc);
    t->chunks = static_cast<uint32_t>(chunks);
    t->cgroups = static_cast<uint32_t>(cgroups);
    t->cPer = static_cast<uint32_t>(cPer);
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    t->segLen = static_cast<uint32_t>(segLen);
    t->segs = static_cast<uint32_t>(segs);
    t->zIdx = static_cast<uint32_t>(zIdx);
    t->sc = static_cast<uint32_t>(sc);
    t->sg = static_cast<uint32_t>(sg);
    t->volBytes = static_cast<uint32_t>((volBytes + 31) / 32 * 32);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (grid_sampler_3d).
class GridSampler3dCustom : public OpDef {
public:
    explicit GridSampler3dCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("grid")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("interpolation_mode").AttrType(OPTIONAL).String("bilinear");
        this->Attr("padding_mode").AttrType(OPTIONAL).String("zeros");
        this->Attr("align_corners").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(GridSampler3dCustom);
}  // namespace ops
