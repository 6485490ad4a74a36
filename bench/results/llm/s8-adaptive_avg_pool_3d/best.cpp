// AdaptiveAvgPool3D for Ascend 910B (AIV only).
// Each (n, c) volume is pooled separably:
//   1. depth: the planes of an output depth window are added (vector Add over whole packed planes,
//      16-bit inputs are cast to float first);
//   2. height: the rows of each output row's window are added (vector Add of row vectors) and scaled
//      by 1 / (kd * kh) into R (one row of R per output row, a zero column after each row);
//   3. width: kw Gathers from R (precomputed byte-offset tables, taps outside a window read the zero
//      column), added, multiplied by 1 / kw per output column, cast, and copied out contiguously.
// Modes: 0 (grouped) unit = (nc, group of output depths), whole planes of the group in one copy;
// 1 (stream) unit = (nc, range of output depths, block of output rows): every input plane segment is
// read once (consecutive depth windows share at most one plane, kept in UB), with a 512-B aligned GM
// start, and re-laid to 32-B rows by one Gather (srcBaseAddr skips the alignment slack);
// 2 (chunked) unit = (nc, od, block of output rows) with row chunks for windows taller than UB.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct AdaptiveAvgPool3dCustomTilingData {
    uint32_t nc;
    uint32_t d;
    uint32_t h;
    uint32_t w;
    uint32_t od;
    uint32_t oh;
    uint32_t ow;
    uint32_t wpf;       // float row stride of the height-pool source and of R: roundup(W, 8)
    uint32_t rs;        // R row stride (floats) = wpf + 8 (8 zero floats after each row)
    uint32_t kw;        // largest width window
    uint32_t relayout;  // 1 when W % 8 != 0: packed rows are re-laid to stride wpf with a Gather
    uint32_t mode;      // 0 grouped, 1 stream, 2 chunked
    uint32_t tileBytes; // bytes of one input tile buffer
    uint32_t needTable; // stream: the re-layout Gather may be needed
    uint32_t relEsz;    // element size of the re-layout table (4: float acc, sizeof(T): raw tile)
    uint32_t odg;
    uint32_t ngroups;   // groups (mode 0), depth ranges (mode 1) or OD (mode 2)
    uint32_t rangeLen;  // output depths per range (mode 1)
    uint32_t ohb;       // output rows per block (OH in grouped mode)
    uint32_t nblocks;
    uint32_t cr;        // input rows per chunk (H in grouped mode)
    uint32_t g;         // planes per input tile
    uint32_t ps;        // UB plane stride in the tile and the float accumulator (elements)
    uint32_t rr;        // rows of R = odg * ohb
    uint32_t ep;        // entries per width tap in the offset table = roundup(rr * ow, 8)
    uint32_t owa;       // roundup(ow, 8)
    uint32_t units;
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
};
REGISTER_TILING_DEFAULT(AdaptiveAvgPool3dCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct AapIsSame { static constexpr bool value = false; };
template <typename A> struct AapIsSame<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelAdaptiveAvgPool3d {
public:
    static constexpr bool IS_FLOAT = AapIsSame<T, float>::value;

    __aicore__ inline KernelAdaptiveAvgPool3d() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const AdaptiveAvgPool3dCustomTilingData& t)
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
        if (count_ == 0 || first_ >= t.units) {
            count_ = 0;
            return;
        }
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        pipe_.InitBuffer(inQ_, 2, t.tileBytes);
        pipe_.InitBuffer(outQ_, 2, RoundUp(t.rr * t.ow * sizeof(T), 32));
        if (t.mode == 1) {
            pipe_.InitBuffer(accBuf_, t.cr * t.wpf * sizeof(float));
            pipe_.InitBuffer(fBuf_, 2 * t.cr * t.wpf * sizeof(float));
            if (t.needTable) {
                pipe_.InitBuffer(relTabBuf_, t.cr * t.wpf * sizeof(int32_t));
                if constexpr (!IS_FLOAT) {
                    pipe_.InitBuffer(tmpBuf_, t.cr * t.wpf * sizeof(T));
                }
            }
        } else {
            pipe_.InitBuffer(accBuf_, t.ps * sizeof(float));
            if constexpr (!IS_FLOAT) {
                pipe_.InitBuffer(tmpBuf_, t.ps * sizeof(float));
            }
            if (t.relayout) {
                pipe_.InitBuffer(relBuf_, t.cr * t.wpf * sizeof(float));
                pipe_.InitBuffer(relTabBuf_, t.cr * t.wpf * sizeof(int32_t));
            }
        }
        pipe_.InitBuffer(rBuf_, t.rr * t.rs * sizeof(float));
        pipe_.InitBuffer(offBuf_, t.kw * t.ep * sizeof(int32_t));
        pipe_.InitBuffer(gBuf_, t.ep * sizeof(float));
        pipe_.InitBuffer(oBuf_, t.ep * sizeof(float));
        pipe_.InitBuffer(rcpBuf_, t.ep * sizeof(float));
        pipe_.InitBuffer(baseBuf_, (t.kw + 1) * t.owa * sizeof(int32_t));
        BuildTables();
    }

    __aicore__ inline void Process()
    {
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t b = u % t_.nblocks;
            const uint32_t rest = u / t_.nblocks;
            const uint32_t grp = rest % t_.ngroups;
            const uint32_t nc = rest / t_.ngroups;
            if (t_.mode == 0) {
                ProcessGroup(nc, grp);
            } else if (t_.mode == 1) {
                ProcessStream(nc, grp, b);
            } else {
                ProcessBlock(nc, grp, b);
            }
        }
    }

private:
    static __aicore__ inline uint32_t RoundUp(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
    static __aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }
    static __aicore__ inline uint32_t MaxU(uint32_t a, uint32_t b) { return a > b ? a : b; }
    static __aicore__ inline uint32_t WinStart(uint32_t i, uint32_t in, uint32_t out) { return (i * in) / out; }
    static __aicore__ inline uint32_t WinEnd(uint32_t i, uint32_t in, uint32_t out)
    {
        return ((i + 1) * in + out - 1) / out;
    }

    // Offset tables for the width Gathers (entry k = r * OW + ow of tap j reads R[r, sw(ow) + j],
    // or R[r, wpf] = 0 past the window), the 1 / kw table, the re-layout table, and R's zero columns.
    __aicore__ inline void BuildTables()
    {
        const uint32_t OW = t_.ow;
        const uint32_t W = t_.w;
        const uint32_t kw = t_.kw;
        const uint32_t owa = t_.owa;
        LocalTensor<int32_t> base = baseBuf_.Get<int32_t>();
        LocalTensor<float> rcpBase = baseBuf_.Get<float>()[kw * owa];
        for (uint32_t ow = 0; ow < OW; ++ow) {
            const uint32_t s = WinStart(ow, W, OW);
            const uint32_t e = WinEnd(ow, W, OW);
            for (uint32_t j = 0; j < kw; ++j) {
                const uint32_t v = (j < e - s) ? (s + j) * 4 : t_.wpf * 4;
                base.SetValue(j * owa + ow, static_cast<int32_t>(v));
            }
            rcpBase.SetValue(ow, 1.0f / static_cast<float>(e - s));
        }
        event_t e0 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        SetFlag<HardEvent::S_V>(e0);
        WaitFlag<HardEvent::S_V>(e0);

        const int32_t n = static_cast<int32_t>(t_.rr * OW);
        LocalTensor<int32_t> a = gBuf_.Get<int32_t>();
        LocalTensor<float> bf = oBuf_.Get<float>();
        LocalTensor<int32_t> bi = oBuf_.Get<int32_t>();
        LocalTensor<int32_t> c = rcpBuf_.Get<int32_t>();
        CreateVecIndex(a, static_cast<int32_t>(0), static_cast<uint32_t>(n));
        Cast(bf, a, RoundMode::CAST_NONE, n);
        Adds(bf, bf, 0.5f, n);
        Muls(bf, bf, 1.0f / static_cast<float>(OW), n);
        Cast(c, bf, RoundMode::CAST_FLOOR, n);                 // row r of entry k
        Muls(bi, c, static_cast<int32_t>(OW), n);
        Sub(a, a, bi, n);                                      // ow of entry k
        Muls(a, a, static_cast<int32_t>(4), n);                // byte offset into the per-tap bases
        Muls(bi, c, static_cast<int32_t>(t_.rs * 4), n);       // byte offset of row r in R
        LocalTensor<uint32_t> au = a.ReinterpretCast<uint32_t>();
        LocalTensor<int32_t> off = offBuf_.Get<int32_t>();
        for (uint32_t j = 0; j < kw; ++j) {
            LocalTensor<int32_t> oj = off[j * t_.ep];
            Gather(oj, base[j * owa], au, 0, static_cast<uint32_t>(n));
            Add(oj, oj, bi, n);
        }
        LocalTensor<float> rcp = rcpBuf_.Get<float>();
        Gather(rcp, rcpBase, au, 0, static_cast<uint32_t>(n));

        if ((t_.mode == 1) ? (t_.needTable != 0) : (t_.relayout != 0)) {
            const int32_t wpf = static_cast<int32_t>(t_.wpf);
            const int32_t esz = static_cast<int32_t>(t_.relEsz);
            LocalTensor<int32_t> rt = relTabBuf_.Get<int32_t>();
            CreateVecIndex(rt, static_cast<int32_t>(0), t_.wpf);
            Mins(rt, rt, static_cast<int32_t>(W - 1), wpf);
            Muls(rt, rt, esz, wpf);
            for (uint32_t r = 1; r < t_.cr; r *= 2) {
                const uint32_t m = MinU(r, t_.cr - r);
                LocalTensor<int32_t> dstRows = rt[r * t_.wpf];
                Adds(dstRows, rt, static_cast<int32_t>(r * W) * esz, static_cast<int32_t>(m * t_.wpf));
            }
        }
        LocalTensor<float> R = rBuf_.Get<float>();
        Duplicate(R, 0.0f, static_cast<int32_t>(t_.rr * t_.rs));
    }

    // np planes [d0, d0 + np) of volume nc, rows [c0, c0 + rows), each packed at UB stride ps.
    __aicore__ inline void LoadPlanes(LocalTensor<T>& tile, uint32_t nc, uint32_t d0, uint32_t np, uint32_t c0,
                                      uint32_t rows)
    {
        const uint32_t blen = rows * t_.w * sizeof(T);
        const uint32_t padded = RoundUp(blen, 32);
        DataCopyExtParams cp{static_cast<uint16_t>(np), blen,
                             static_cast<uint32_t>((t_.h - rows) * t_.w * sizeof(T)),
                             static_cast<uint32_t>((t_.ps * sizeof(T) - padded) / 32), 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        const uint64_t off = (static_cast<uint64_t>(nc) * t_.d + d0) * t_.h * t_.w + static_cast<uint64_t>(c0) * t_.w;
        DataCopyPad(tile, xGm_[off], cp, pad);
    }

    // Float sum of planes [p0, p0 + k) of the tile over n elements; init: the sum starts here.
    __aicore__ inline LocalTensor<float> SumPlanes(LocalTensor<T>& tile, uint32_t p0, uint32_t k, uint32_t n,
                                                   bool init, bool allowView)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        const int32_t cnt = static_cast<int32_t>(n);
        uint32_t i = 0;
        if constexpr (IS_FLOAT) {
            if (init) {
                LocalTensor<float> f0 = tile[p0 * t_.ps].template ReinterpretCast<float>();
                if (k >= 2) {
                    LocalTensor<float> f1 = tile[(p0 + 1) * t_.ps].template ReinterpretCast<float>();
                    Add(acc, f0, f1, cnt);
                    i = 2;
                } else if (allowView) {
                    return f0;
                } else {
                    Adds(acc, f0, 0.0f, cnt);
                    i = 1;
                }
            }
            for (; i < k; ++i) {
                LocalTensor<float> fi = tile[(p0 + i) * t_.ps].template ReinterpretCast<float>();
                Add(acc, acc, fi, cnt);
            }
        } else {
            if (init) {
                Cast(acc, tile[p0 * t_.ps], RoundMode::CAST_NONE, cnt);
                i = 1;
            }
            LocalTensor<float> tmp = tmpBuf_.Get<float>();
            for (; i < k; ++i) {
                Cast(tmp, tile[(p0 + i) * t_.ps], RoundMode::CAST_NONE, cnt);
                Add(acc, acc, tmp, cnt);
            }
        }
        return acc;
    }

    // Packed rows (stride W) -> rows at stride wpf (only when W % 8 != 0).
    __aicore__ inline LocalTensor<float> Relayout(LocalTensor<float>& src, uint32_t rows)
    {
        if (!t_.relayout) {
            return src;
        }
        LocalTensor<float> dst = relBuf_.Get<float>();
        LocalTensor<uint32_t> tab = relTabBuf_.Get<uint32_t>();
        Gather(dst, src, tab, 0, rows * t_.wpf);
        return dst;
    }

    // Whole height windows available: R[rb + ohl] = sum of the window rows / (kd * kh).
    __aicore__ inline void HPoolAssign(LocalTensor<float>& src, uint32_t c0, uint32_t rb, uint32_t oh0,
                                       uint32_t nOh, uint32_t kd)
    {
        LocalTensor<float> R = rBuf_.Get<float>();
        const int32_t len = static_cast<int32_t>(t_.wpf);
        for (uint32_t ohl = 0; ohl < nOh; ++ohl) {
            const uint32_t oh = oh0 + ohl;
            const uint32_t sh = WinStart(oh, t_.h, t_.oh);
            const uint32_t eh = WinEnd(oh, t_.h, t_.oh);
            const uint32_t kh = eh - sh;
            const float s = 1.0f / static_cast<float>(kd * kh);
            LocalTensor<float> row = R[(rb + ohl) * t_.rs];
            LocalTensor<float> s0 = src[(sh - c0) * t_.wpf];
            if (kh == 1) {
                Muls(row, s0, s, len);
            } else {
                LocalTensor<float> s1 = src[(sh - c0 + 1) * t_.wpf];
                Add(row, s0, s1, len);
                for (uint32_t hh = sh + 2; hh < eh; ++hh) {
                    LocalTensor<float> sr = src[(hh - c0) * t_.wpf];
                    Add(row, row, sr, len);
                }
                Muls(row, row, s, len);
            }
        }
    }

    // Row chunk [c0, c1) of taller windows: R rows accumulate the rows inside their window.
    __aicore__ inline void HPoolAccum(LocalTensor<float>& src, uint32_t c0, uint32_t c1, uint32_t oh0, uint32_t nOh)
    {
        LocalTensor<float> R = rBuf_.Get<float>();
        const int32_t len = static_cast<int32_t>(t_.wpf);
        for (uint32_t ohl = 0; ohl < nOh; ++ohl) {
            const uint32_t oh = oh0 + ohl;
            const uint32_t lo = MaxU(WinStart(oh, t_.h, t_.oh), c0);
            const uint32_t hi = MinU(WinEnd(oh, t_.h, t_.oh), c1);
            LocalTensor<float> row = R[ohl * t_.rs];
            for (uint32_t hh = lo; hh < hi; ++hh) {
                LocalTensor<float> sr = src[(hh - c0) * t_.wpf];
                Add(row, row, sr, len);
            }
        }
    }

    __aicore__ inline void HPoolScale(uint32_t oh0, uint32_t nOh, uint32_t kd)
    {
        LocalTensor<float> R = rBuf_.Get<float>();
        const int32_t len = static_cast<int32_t>(t_.wpf);
        for (uint32_t ohl = 0; ohl < nOh; ++ohl) {
            const uint32_t oh = oh0 + ohl;
            const uint32_t kh = WinEnd(oh, t_.h, t_.oh) - WinStart(oh, t_.h, t_.oh);
            LocalTensor<float> row = R[ohl * t_.rs];
            Muls(row, row, 1.0f / static_cast<float>(kd * kh), len);
        }
    }

    // Width pooling of nRows rows of R into nRows * OW packed outputs at y[yOff].
    __aicore__ inline void WPoolOut(uint32_t nRows, uint64_t yOff)
    {
        const uint32_t n = nRows * t_.ow;
        const int32_t cnt = static_cast<int32_t>(n);
        LocalTensor<float> R = rBuf_.Get<float>();
        LocalTensor<float> O = oBuf_.Get<float>();
        LocalTensor<float> G = gBuf_.Get<float>();
        LocalTensor<float> rcp = rcpBuf_.Get<float>();
        LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
        Gather(O, R, off, 0, n);
        for (uint32_t j = 1; j < t_.kw; ++j) {
            Gather(G, R, off[j * t_.ep], 0, n);
            Add(O, O, G, cnt);
        }
        LocalTensor<T> yt = outQ_.AllocTensor<T>();
        if constexpr (IS_FLOAT) {
            LocalTensor<float> yf = yt.template ReinterpretCast<float>();
            Mul(yf, O, rcp, cnt);
        } else {
            Mul(O, O, rcp, cnt);
            Cast(yt, O, RoundMode::CAST_RINT, cnt);
        }
        outQ_.EnQue(yt);
        yt = outQ_.DeQue<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[yOff], yt, cp);
        outQ_.FreeTensor(yt);
    }

    // Grouped mode: whole planes of the group's depth range in one tile.
    __aicore__ inline void ProcessGroup(uint32_t nc, uint32_t grp)
    {
        const uint32_t od0 = grp * t_.odg;
        const uint32_t odCnt = MinU(t_.odg, t_.od - od0);
        const uint32_t dA = WinStart(od0, t_.d, t_.od);
        const uint32_t dB = WinEnd(od0 + odCnt - 1, t_.d, t_.od);
        LocalTensor<T> tile = inQ_.AllocTensor<T>();
        LoadPlanes(tile, nc, dA, dB - dA, 0, t_.h);
        inQ_.EnQue(tile);
        tile = inQ_.DeQue<T>();
        const uint32_t n = t_.h * t_.w;
        for (uint32_t odl = 0; odl < odCnt; ++odl) {
            const uint32_t od = od0 + odl;
            const uint32_t sd = WinStart(od, t_.d, t_.od);
            const uint32_t ed = WinEnd(od, t_.d, t_.od);
            LocalTensor<float> src = SumPlanes(tile, sd - dA, ed - sd, n, true, true);
            LocalTensor<float> rows = Relayout(src, t_.h);
            HPoolAssign(rows, 0, odl * t_.oh, 0, t_.oh, ed - sd);
        }
        inQ_.FreeTensor(tile);
        WPoolOut(odCnt * t_.oh, (static_cast<uint64_t>(nc) * t_.od + od0) * t_.oh * t_.ow);
    }

    // Stream mode: plane d, rows [c0, c0 + rows) -> cur (float, rows at stride wpf). The copy starts
    // at the 512-B aligned GM address below the segment; the Gather skips the slack.
    __aicore__ inline void LoadRealign(LocalTensor<float>& cur, uint32_t nc, uint32_t d, uint32_t c0, uint32_t rows)
    {
        const uint64_t elemOff = (static_cast<uint64_t>(nc) * t_.d + d) * t_.h * t_.w + static_cast<uint64_t>(c0) * t_.w;
        const uint32_t slackBytes = static_cast<uint32_t>((elemOff * sizeof(T)) % 512);
        const uint32_t slack = slackBytes / sizeof(T);
        LocalTensor<T> tile = inQ_.AllocTensor<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>((slack + rows * t_.w) * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(tile, xGm_[elemOff - slack], cp, pad);
        inQ_.EnQue(tile);
        tile = inQ_.DeQue<T>();
        const uint32_t n = rows * t_.wpf;
        const int32_t cnt = static_cast<int32_t>(n);
        if (slack != 0 || t_.relayout) {
            LocalTensor<uint32_t> tab = relTabBuf_.Get<uint32_t>();
            if constexpr (IS_FLOAT) {
                Gather(cur, tile, tab, slackBytes, n);
            } else {
                LocalTensor<T> g = tmpBuf_.Get<T>();
                Gather(g, tile, tab, slackBytes, n);
                Cast(cur, g, RoundMode::CAST_NONE, cnt);
            }
        } else {
            if constexpr (IS_FLOAT) {
                LocalTensor<float> tf = tile.template ReinterpretCast<float>();
                Adds(cur, tf, 0.0f, cnt);
            } else {
                Cast(cur, tile, RoundMode::CAST_NONE, cnt);
            }
        }
        inQ_.FreeTensor(tile);
    }

    // Stream mode: output depths [odA, odB) of one block of output rows; each plane read once.
    __aicore__ inline void ProcessStream(uint32_t nc, uint32_t rng, uint32_t b)
    {
        const uint32_t odA = rng * t_.rangeLen;
        const uint32_t odB = MinU(t_.od, odA + t_.rangeLen);
        const uint32_t oh0 = b * t_.ohb;
        const uint32_t nOh = MinU(t_.ohb, t_.oh - oh0);
        const uint32_t rA = WinStart(oh0, t_.h, t_.oh);
        const uint32_t rB = WinEnd(oh0 + nOh - 1, t_.h, t_.oh);
        const uint32_t rows = rB - rA;
        const uint32_t plane = t_.cr * t_.wpf;
        const int32_t cnt = static_cast<int32_t>(rows * t_.wpf);
        LocalTensor<float> fAll = fBuf_.Get<float>();
        LocalTensor<float> acc = accBuf_.Get<float>();
        int32_t lastIdx = -1;
        uint32_t lastBuf = 0;
        uint32_t nextBuf = 0;
        for (uint32_t od = odA; od < odB; ++od) {
            const uint32_t sd = WinStart(od, t_.d, t_.od);
            const uint32_t ed = WinEnd(od, t_.d, t_.od);
            const bool carried = lastIdx >= 0 && static_cast<uint32_t>(lastIdx) == sd;
            LocalTensor<float> pending = fAll[lastBuf * plane];
            bool havePending = carried;
            bool summed = false;
            for (uint32_t d = carried ? sd + 1 : sd; d < ed; ++d) {
                LocalTensor<float> cur = fAll[nextBuf * plane];
                LoadRealign(cur, nc, d, rA, rows);
                if (!havePending) {
                    pending = cur;
                    havePending = true;
                } else if (!summed) {
                    Add(acc, pending, cur, cnt);
                    summed = true;
                } else {
                    Add(acc, acc, cur, cnt);
                }
                lastIdx = static_cast<int32_t>(d);
                lastBuf = nextBuf;
                nextBuf ^= 1;
            }
            LocalTensor<float> src = summed ? acc : pending;
            HPoolAssign(src, rA, 0, oh0, nOh, ed - sd);
            WPoolOut(nOh, ((static_cast<uint64_t>(nc) * t_.od + od) * t_.oh + oh0) * t_.ow);
        }
    }

    // General mode: one output depth, a block of output rows, row chunks of at most cr rows.
    __aicore__ inline void ProcessBlock(uint32_t nc, uint32_t od, uint32_t b)
    {
        const uint32_t sd = WinStart(od, t_.d, t_.od);
        const uint32_t ed = WinEnd(od, t_.d, t_.od);
        const uint32_t kd = ed - sd;
        const uint32_t oh0 = b * t_.ohb;
        const uint32_t nOh = MinU(t_.ohb, t_.oh - oh0);
        const uint32_t rA = WinStart(oh0, t_.h, t_.oh);
        const uint32_t rB = WinEnd(oh0 + nOh - 1, t_.h, t_.oh);
        const bool single = (rB - rA) <= t_.cr;
        if (!single) {
            LocalTensor<float> R = rBuf_.Get<float>();
            Duplicate(R, 0.0f, static_cast<int32_t>(nOh * t_.rs));
        }
        for (uint32_t c0 = rA; c0 < rB; c0 += t_.cr) {
            const uint32_t c1 = MinU(c0 + t_.cr, rB);
            const uint32_t rows = c1 - c0;
            for (uint32_t dd = sd; dd < ed; dd += t_.g) {
                const uint32_t np = MinU(t_.g, ed - dd);
                LocalTensor<T> tile = inQ_.AllocTensor<T>();
                LoadPlanes(tile, nc, dd, np, c0, rows);
                inQ_.EnQue(tile);
                tile = inQ_.DeQue<T>();
                LocalTensor<float> src = SumPlanes(tile, 0, np, rows * t_.w, dd == sd, kd == 1);
                if (dd + np >= ed) {
                    LocalTensor<float> rws = Relayout(src, rows);
                    if (single) {
                        HPoolAssign(rws, c0, 0, oh0, nOh, kd);
                    } else {
                        HPoolAccum(rws, c0, c1, oh0, nOh);
                    }
                }
                inQ_.FreeTensor(tile);
            }
        }
        if (!single) {
            HPoolScale(oh0, nOh, kd);
        }
        WPoolOut(nOh, ((static_cast<uint64_t>(nc) * t_.od + od) * t_.oh + oh0) * t_.ow);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> accBuf_, tmpBuf_, relBuf_, relTabBuf_, rBuf_, offBuf_, gBuf_, oBuf_, rcpBuf_, baseBuf_, fBuf_;
    GlobalTensor<T> xGm_, yGm_;
    AdaptiveAvgPool3dCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
};

extern "C" __global__ __aicore__ void adaptive_avg_pool_3d_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace,
                                                                  GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelAdaptiveAvgPool3d<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static inline uint64_t AapRU(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }
static inline uint64_t AapWS(uint64_t i, uint64_t in, uint64_t out) { return i * in / out; }
static inline uint64_t AapWE(uint64_t i, uint64_t in, uint64_t out) { return ((i + 1) * in + out - 1) / out; }

// Largest input span of blk consecutive outputs (blocks starting at multiples of blk).
static uint64_t AapMaxSpan(uint64_t blk, uint64_t in, uint64_t out)
{
    uint64_t m = 0;
    for (uint64_t o0 = 0; o0 < out; o0 += blk) {
        const uint64_t o1 = (o0 + blk < out ? o0 + blk : out) - 1;
        const uint64_t s = AapWE(o1, in, out) - AapWS(o0, in, out);
        m = s > m ? s : m;
    }
    return m;
}

struct AapDims {
    uint64_t w, ow, sz, kw, wpf, rs, owa;
    bool relayout;
};

static uint64_t AapCommon(const AapDims& p, uint64_t rr)
{
    const uint64_t ep = AapRU(rr * p.ow, 8);
    return 2 * AapRU(rr * p.ow * p.sz, 32) + rr * p.rs * 4 + p.kw * ep * 4 + 3 * ep * 4 + (p.kw + 1) * p.owa * 4 + 16 * 32;
}

static uint64_t AapStreamTile(const AapDims& p, uint64_t cr) { return AapRU(512 + cr * p.w * p.sz, 32); }

static uint64_t AapStreamNeed(const AapDims& p, uint64_t ohb, uint64_t cr, bool needTable)
{
    uint64_t b = 2 * AapStreamTile(p, cr) + 3 * cr * p.wpf * 4;
    if (needTable) {
        b += cr * p.wpf * 4;
        if (p.sz != 4) {
            b += cr * p.wpf * p.sz;
        }
    }
    return b + AapCommon(p, ohb);
}

static uint64_t AapUbNeed(const AapDims& p, uint64_t odg, uint64_t ohb, uint64_t cr, uint64_t g)
{
    const uint64_t ps = AapRU(cr * p.w * p.sz, 32) / p.sz;
    const uint64_t rr = odg * ohb;
    const uint64_t ep = AapRU(rr * p.ow, 8);
    uint64_t b = 2 * AapRU(g * ps * p.sz, 32) + 2 * AapRU(rr * p.ow * p.sz, 32);
    b += ps * 4;                 // float accumulator
    if (p.sz != 4) {
        b += ps * 4;             // float copy of a 16-bit plane
    }
    if (p.relayout) {
        b += 2 * cr * p.wpf * 4;
    }
    b += rr * p.rs * 4 + p.kw * ep * 4 + 3 * ep * 4 + (p.kw + 1) * p.owa * 4;
    return b + 16 * 32;
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& s = context->GetInputShape(0)->GetStorageShape();
    if (s.GetDimNum() != 5) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t N = s.GetDim(0), C = s.GetDim(1), D = s.GetDim(2), H = s.GetDim(3), W = s.GetDim(4);
    const gert::TypedContinuousVector<int64_t>* os = context->GetAttrs()->GetListInt(0);
    if (os == nullptr || os->GetSize() == 0) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* v = os->GetData();
    int64_t od = v[0], oh = v[0], ow = v[0];
    if (os->GetSize() >= 3) {
        od = v[0];
        oh = v[1];
        ow = v[2];
    }
    if (od <= 0 || oh <= 0 || ow <= 0 || N * C * D * H * W == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t OD = od, OH = oh, OW = ow;
    const uint64_t sz = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t coreNum = plat.GetCoreNumAiv();
    coreNum = coreNum == 0 ? 1 : coreNum;
    const uint64_t budget = ub > 32768 ? ub - 16384 : ub / 2;

    AapDims p;
    p.w = W;
    p.ow = OW;
    p.sz = sz;
    p.kw = AapMaxSpan(1, W, OW);
    p.wpf = AapRU(W, 8);
    p.rs = p.wpf + 8;
    p.owa = AapRU(OW, 8);
    p.relayout = (W % 8) != 0;
    const uint64_t nc = N * C;
    const uint64_t kdMax = AapMaxSpan(1, D, OD);

    uint64_t odg = 0, ohb = 0, cr = 0, g = 0, rangeLen = 1, ngroups = 0, tileBytes = 0;
    bool grouped = false, stream = false;
    const bool needTable = p.relayout || (W * sz) % 512 != 0;
    if (nc * OD >= coreNum || OH == 1) {
        uint64_t cap = nc * OD / coreNum;
        cap = cap < 1 ? 1 : cap;
        cap = cap > OD ? OD : cap;
        for (uint64_t k = cap; k >= 1; --k) {
            const uint64_t gg = AapMaxSpan(k, D, OD);
            if (gg <= 4095 && AapUbNeed(p, k, OH, H, gg) <= budget) {
                odg = k;
                g = gg;
                ohb = OH;
                cr = H;
                grouped = true;
                break;
            }
        }
    }
    if (!grouped) {
        // Stream mode: the largest block of output rows whose input rows fit.
        uint64_t maxOhb = OH;
        if (nc * OD < coreNum) {
            const uint64_t want = (coreNum + nc * OD - 1) / (nc * OD);
            maxOhb = (OH + want - 1) / want;
        }
        for (uint64_t b = maxOhb; b >= 1; --b) {
            const uint64_t c = AapMaxSpan(b, H, OH);
            if (AapStreamNeed(p, b, c, needTable) <= budget && (sz == 4 || AapStreamTile(p, c) <= 131040)) {
                ohb = b;
                cr = c;
                stream = true;
                break;
            }
        }
        if (stream) {
            odg = 1;
            g = 1;
            const uint64_t nblocks = (OH + ohb - 1) / ohb;
            // Depth ranges: balance the cores against the one plane re-read per range.
            uint64_t best = ~0ULL;
            for (uint64_t r = 1; r <= OD && r <= 64; ++r) {
                const uint64_t len = (OD + r - 1) / r;
                const uint64_t rr = (OD + len - 1) / len;
                if (rr != r) {
                    continue;
                }
                const uint64_t units = nc * rr * nblocks;
                const uint64_t perCore = (units + coreNum - 1) / coreNum;
                const uint64_t cost = perCore * (AapMaxSpan(len, D, OD) * 4 + len);
                if (cost < best) {
                    best = cost;
                    rangeLen = len;
                    ngroups = rr;
                }
            }
            tileBytes = AapStreamTile(p, cr);
        }
    }
    if (!grouped && !stream) {
        odg = 1;
        uint64_t maxOhb = OH;
        if (nc * OD < coreNum) {
            const uint64_t want = (coreNum + nc * OD - 1) / (nc * OD);
            maxOhb = (OH + want - 1) / want;
        }
        for (uint64_t b = maxOhb; b >= 1; --b) {
            const uint64_t c = AapMaxSpan(b, H, OH);
            if (AapUbNeed(p, 1, b, c, 1) <= budget) {
                ohb = b;
                cr = c;
                break;
            }
        }
        if (ohb == 0) {
            ohb = 1;
            for (uint64_t c = AapMaxSpan(1, H, OH); c >= 1; --c) {
                if (AapUbNeed(p, 1, 1, c, 1) <= budget) {
                    cr = c;
                    break;
                }
            }
            if (cr == 0) {
                return ge::GRAPH_FAILED;
            }
        }
        g = 1;
        while (g < kdMax && g < 4095 && AapUbNeed(p, 1, ohb, cr, g + 1) <= budget) {
            ++g;
        }
    }

    AdaptiveAvgPool3dCustomTilingData* t = context->GetTilingData<AdaptiveAvgPool3dCustomTilingData>();
    t->nc = static_cast<uint32_t>(nc);
    t->d = static_cast<uint32_t>(D);
    t->h = static_cast<uint32_t>(H);
    t->w = static_cast<uint32_t>(W);
    t->od = static_cast<uint32_t>(OD);
    t->oh = static_cast<uint32_t>(OH);
    t->ow = static_cast<uint32_t>(OW);
    t->wpf = static_cast<uint32_t>(p.wpf);
    t->rs = static_cast<uint32_t>(p.rs);
    t->kw = static_cast<uint32_t>(p.kw);
    t->relayout = p.relayout ? 1 : 0;
    t->mode = grouped ? 0 : (stream ? 1 : 2);
    t->needTable = needTable ? 1 : 0;
    t->relEsz = stream ? static_cast<uint32_t>(sz) : 4;
    t->odg = static_cast<uint32_t>(odg);
    t->ngroups = static_cast<uint32_t>(stream ? ngroups : (OD + odg - 1) / odg);
    t->rangeLen = static_cast<uint32_t>(rangeLen);
    t->ohb = static_cast<uint32_t>(ohb);
    t->nblocks = static_cast<uint32_t>((OH + ohb - 1) / ohb);
    t->cr = static_cast<uint32_t>(cr);
    t->g = static_cast<uint32_t>(g);
    t->ps = static_cast<uint32_t>(AapRU(cr * W * sz, 32) / sz);
    t->tileBytes = static_cast<uint32_t>(stream ? tileBytes : AapRU(g * t->ps * sz, 32));
    t->rr = static_cast<uint32_t>(odg * ohb);
    t->ep = static_cast<uint32_t>(AapRU(odg * ohb * OW, 8));
    t->owa = static_cast<uint32_t>(p.owa);
    const uint64_t units = nc * t->ngroups * t->nblocks;
    uint64_t blockDim = units < coreNum ? units : coreNum;
    blockDim = blockDim == 0 ? 1 : blockDim;
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (adaptive_avg_pool_3d).
class AdaptiveAvgPool3dCustom : public OpDef {
public:
    explicit AdaptiveAvgPool3dCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("output_size").AttrType(REQUIRED).ListInt();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(AdaptiveAvgPool3dCustom);
}  // namespace ops
