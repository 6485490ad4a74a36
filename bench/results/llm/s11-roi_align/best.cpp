// ROI align for x [B, C, H, W] and boxes [N, 5] (batch, x0, y0, x1, y1), the golden's float32 arithmetic.
// Phase 1 (all cores): the band of feature-map rows that any ROI samples is copied to a channel-last
// float workspace [B, H, W, Cp] (DataCopyPad of C strided rows, Gather transpose in UB), then SyncAll.
// Phase 2: units of (ROI, channel block of cb lanes, output row), in groups of k rows. For each sample row the
// window is the row pair (y_low, y_high) x a run of columns, loaded with one DataCopyPad into a 2-deep
// queue (MTE2 overlaps the vector work); each sample is Muls + Axpy over the channel lanes in the golden's order
// ((hy*hx)*v1 + (hy*lx)*v2) + ... and is added to its bin in (iy, ix) order. A sample, bin or row whose
// taps equal the previous one's reuses its vector (the same arithmetic on the same data, so exact).
// Groups of k output rows are transposed to [C, k, ow] by one Gather per channel chunk, scaled by 1/count,
// cast and written with one strided DataCopyPad.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t P1 = 64;          // phase-1 positions per tile (= UB row stride of the input tile)
constexpr uint32_t C1MAX = 64;       // phase-1 channels per tile
constexpr uint32_t SCAN_BOXES = 64;  // boxes per chunk when scanning for the row band

struct RoiAlignCustomTilingData {
    uint32_t B;
    uint32_t C;
    uint32_t H;
    uint32_t W;
    uint32_t N;
    uint32_t oh;
    uint32_t ow;
    int32_t samplingRatio;
    uint32_t aligned;
    float scale;
    uint32_t cb;            // channel lanes per block (multiple of 8)
    uint32_t cp;            // channels per position in the workspace (multiple of cb)
    uint32_t ncb;           // channel blocks
    uint32_t units;         // N * ncb
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t k;             // output rows per transposed group
    uint32_t cc;            // channels per transposition chunk
    uint32_t rs;            // UB row stride of a transposed group (elements, multiple of 16)
    uint32_t winBytes;      // one of the two window buffers (also the phase-1 input tiles)
    uint32_t arenaBytes;
    uint32_t c1;            // phase-1 channels per tile (multiple of 8)
    uint32_t offInF;        // phase 1 views
    uint32_t offTab1;
    uint32_t offOut1;
    uint32_t offScanT;
    uint32_t offScanF;
    uint32_t offAcc;        // phase 2 views
    uint32_t offTab2;
    uint32_t offOutF;
};
REGISTER_TILING_DEFAULT(RoiAlignCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

struct Tap {
    int32_t lo;
    int32_t hi;
    float l;
    float h;
};

// a * b rounded on its own (never contracted into a fused multiply-add with a later add)
__aicore__ inline float Prod(float a, float b)
{
    volatile float r = a * b;
    return r;
}
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }
__aicore__ inline uint32_t RoundUpU(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }

// ceil(v) of the automatic sampling grid; 0 (no samples) when v <= 0
__aicore__ inline int32_t GridCount(float v)
{
    if (!(v > 0.0f)) {
        return 0;
    }
    int32_t t = static_cast<int32_t>(v);
    if (static_cast<float>(t) < v) {
        ++t;
    }
    return t;
}

template <typename T>
class KernelRoiAlign {
public:
    static constexpr bool IS_HALF = !SameType<T, float>::value;

    __aicore__ inline KernelRoiAlign() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR boxes, GM_ADDR y, GM_ADDR ws, const RoiAlignCustomTilingData& t)
    {
        t_ = t;
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        boxGm_.SetGlobalBuffer((__gm__ T*)boxes);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        xtGm_.SetGlobalBuffer((__gm__ float*)ws);
        idx_ = static_cast<uint32_t>(GetBlockIdx());
        nblk_ = static_cast<uint32_t>(GetBlockNum());
        if (idx_ < t.formerNum) {
            count_ = t.formerUnits;
            first_ = idx_ * t.formerUnits;
        } else {
            count_ = t.tailUnits;
            first_ = t.formerNum * t.formerUnits + (idx_ - t.formerNum) * t.tailUnits;
        }
        if (first_ >= t.units) {
            count_ = 0;
        }
        pipe_.InitBuffer(arena_, t.arenaBytes);
        pipe_.InitBuffer(winQ_, 2, t.winBytes);
        pipe_.InitBuffer(outQ_, 2, t.cc * t.rs * static_cast<uint32_t>(sizeof(T)));
        pipe_.InitBuffer(tmpBuf_, t.cb * 4);
        pipe_.InitBuffer(boxBuf_, 64);
        pipe_.InitBuffer(boxFBuf_, 64);
        tmp_ = tmpBuf_.Get<float>();
    }

    __aicore__ inline void Process()
    {
        Phase1();
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        PipeBarrier<PIPE_ALL>();
        if (count_ == 0) {
            return;
        }
        BuildTab2();
        // units are (ROI, channel block, output row): each core takes a contiguous run of rows, so the
        // cores balance to within one row; a run is processed in groups of up to k rows
        const uint32_t end = first_ + count_;
        uint32_t cur = 0xFFFFFFFFu;
        uint32_t curCb = 0xFFFFFFFFu;
        for (uint32_t u = first_; u < end;) {
            const uint32_t ph = u % t_.oh;
            const uint32_t rest = u / t_.oh;
            const uint32_t cbi = rest % t_.ncb;
            const uint32_t r = rest / t_.ncb;
            const uint32_t rb = MinU(t_.oh, ph + (end - u));
            if (r != cur) {
                LoadRoi(r);
            }
            if (r != cur || cbi != curCb) {
                tmpValid_ = false;
            }
            cur = r;
            curCb = cbi;
            ProcessRows(r, cbi, ph, rb);
            u += rb - ph;
        }
        if (outHeld_) {
            outQ_.FreeTensor(outPrev_);
            outHeld_ = false;
        }
        if (winValid_) {
            winQ_.FreeTensor(win_);
            winValid_ = false;
        }
    }

private:
    template <HardEvent E>
    __aicore__ inline void Sync()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(E));
        SetFlag<E>(e);
        WaitFlag<E>(e);
    }

    // float view of n freshly copied elements: the buffer itself (float) or a Cast into f (half)
    __aicore__ inline LocalTensor<float> ToFloat(LocalTensor<T>& src, LocalTensor<float>& f, uint32_t n)
    {
        if constexpr (IS_HALF) {
            Sync<HardEvent::MTE2_V>();
            Cast(f, src, RoundMode::CAST_NONE, n);
            Sync<HardEvent::V_S>();
            return f;
        } else {
            Sync<HardEvent::MTE2_S>();
            return src.template ReinterpretCast<float>();
        }
    }

    // one sample coordinate along an axis, the golden's order of float operations
    __aicore__ inline void AxisTap(float start, float bin, float step, int32_t p, int32_t i, int32_t size, Tap& t) const
    {
        float v = start + Prod(static_cast<float>(p), bin);
        v = v + Prod(static_cast<float>(i) + 0.5f, step);
        if (v < 0.0f) {
            v = 0.0f;
        }
        int32_t lo = static_cast<int32_t>(v);
        int32_t hi = lo + 1;
        if (lo >= size - 1) {
            lo = size - 1;
            hi = size - 1;
        }
        t.lo = lo;
        t.hi = hi;
        t.l = v - static_cast<float>(lo);
        t.h = 1.0f - t.l;
    }

    __aicore__ inline void Geometry(float bx, float x0, float y0, float x1, float y1)
    {
        const float off = t_.aligned != 0 ? 0.5f : 0.0f;
        const float sw = Prod(x0, t_.scale) - off;
        const float sh = Prod(y0, t_.scale) - off;
        const float ew = Prod(x1, t_.scale) - off;
        const float eh = Prod(y1, t_.scale) - off;
        float rw = ew - sw;
        float rh = eh - sh;
        if (t_.aligned == 0) {
            rw = rw < 1.0f ? 1.0f : rw;
            rh = rh < 1.0f ? 1.0f : rh;
        }
        sw_ = sw;
        sh_ = sh;
        bh_ = rh / static_cast<float>(t_.oh);
        bw_ = rw / static_cast<float>(t_.ow);
        if (t_.samplingRatio > 0) {
            gh_ = t_.samplingRatio;
            gw_ = t_.samplingRatio;
        } else {
            gh_ = GridCount(bh_);
            gw_ = GridCount(bw_);
        }
        stepH_ = gh_ > 0 ? bh_ / static_cast<float>(gh_) : 0.0f;
        stepW_ = gw_ > 0 ? bw_ / static_cast<float>(gw_) : 0.0f;
        int32_t cnt = gh_ * gw_;
        if (cnt < 1) {
            cnt = 1;
        }
        inv_ = 1.0f / static_cast<float>(cnt);
        int32_t b = static_cast<int32_t>(bx);
        if (b < 0) {
            b = 0;
        }
        if (b > static_cast<int32_t>(t_.B) - 1) {
            b = static_cast<int32_t>(t_.B) - 1;
        }
        b_ = b;
    }

    // ---------------- phase 1: channel-last copy of the sampled row band ----------------
    __aicore__ inline void Phase1()
    {
        const int32_t H = static_cast<int32_t>(t_.H);
        LocalTensor<T> scanT = arena_.GetWithOffset<T>(SCAN_BOXES * 5, t_.offScanT);
        LocalTensor<float> scanF = arena_.GetWithOffset<float>(SCAN_BOXES * 5, t_.offScanF);
        int32_t y0 = H;
        int32_t y1 = -1;
        Tap ty;
        for (uint32_t r0 = 0; r0 < t_.N; r0 += SCAN_BOXES) {
            const uint32_t nb = MinU(SCAN_BOXES, t_.N - r0);
            Sync<HardEvent::S_MTE2>();
            DataCopyPad(scanT, boxGm_[static_cast<uint64_t>(r0) * 5],
                        DataCopyExtParams{1, static_cast<uint32_t>(nb * 5 * sizeof(T)), 0, 0, 0},
                        DataCopyPadExtParams<T>{false, 0, 0, 0});
            LocalTensor<float> f = ToFloat(scanT, scanF, RoundUpU(nb * 5, 16));
            for (uint32_t i = 0; i < nb; ++i) {
                Geometry(f.GetValue(i * 5), f.GetValue(i * 5 + 1), f.GetValue(i * 5 + 2), f.GetValue(i * 5 + 3),
                         f.GetValue(i * 5 + 4));
                if (gh_ <= 0 || gw_ <= 0) {
                    continue;
                }
                for (uint32_t ph = 0; ph < t_.oh; ++ph) {
                    for (int32_t iy = 0; iy < gh_; ++iy) {
                        AxisTap(sh_, bh_, stepH_, static_cast<int32_t>(ph), iy, H, ty);
                        y0 = ty.lo < y0 ? ty.lo : y0;
                        y1 = ty.hi > y1 ? ty.hi : y1;
                    }
                }
            }
        }
        if (y1 < y0) {
            return;
        }
        const uint32_t HW = t_.H * t_.W;
        const uint32_t hw0 = static_cast<uint32_t>(y0) * t_.W;
        const uint32_t hwLen = static_cast<uint32_t>(y1 - y0 + 1) * t_.W;
        const uint32_t c1 = t_.c1;
        const uint32_t nc1 = (t_.cp + c1 - 1) / c1;
        const uint32_t tiles = (hwLen + P1 - 1) / P1;
        const uint32_t units1 = t_.B * nc1 * tiles;
        if (idx_ >= units1) {
            return;
        }
        LocalTensor<float> inF = arena_.GetWithOffset<float>(c1 * P1, t_.offInF);
        LocalTensor<uint32_t> tab1 = arena_.GetWithOffset<uint32_t>(P1 * c1, t_.offTab1);
        LocalTensor<float> out1 = arena_.GetWithOffset<float>(P1 * c1, t_.offOut1);
        // tab1[p][c] = byte offset of (channel c, position p) in the [c1][P1] float tile
        for (uint32_t c = 0; c < c1; ++c) {
            tab1.SetValue(c, c * P1 * 4);
        }
        Sync<HardEvent::S_V>();
        LocalTensor<int32_t> tab1i = tab1.template ReinterpretCast<int32_t>();
        for (uint32_t p = 1; p < P1; ++p) {
            LocalTensor<int32_t> dst = tab1i[p * c1];
            Adds(dst, tab1i, static_cast<int32_t>(p * 4), static_cast<int32_t>(c1));
        }
        const uint32_t sz = static_cast<uint32_t>(sizeof(T));
        LocalTensor<T> prevIn;
        bool prevHeld = false;
        for (uint32_t u = idx_; u < units1; u += nblk_) {
            const uint32_t tile = u % tiles;
            const uint32_t rest = u / tiles;
            const uint32_t c0 = (rest % nc1) * c1;
            const uint32_t b = rest / nc1;
            const uint32_t p0 = hw0 + tile * P1;
            const uint32_t pAct = MinU(P1, hw0 + hwLen - p0);
            const uint32_t cr = c0 < t_.C ? MinU(c1, t_.C - c0) : 0;   // real channels of the tile
            const uint32_t len = MinU(c1, t_.cp - c0);                 // lanes written (pads included)
            const uint32_t dstGap = (P1 * sz - RoundUpU(pAct * sz, 32)) / 32;
            LocalTensor<T> in = winQ_.AllocTensor<T>();
            if (cr > 0) {
                DataCopyPad(in, xGm_[(static_cast<uint64_t>(b) * t_.C + c0) * HW + p0],
                            DataCopyExtParams{static_cast<uint16_t>(cr), pAct * sz, (HW - pAct) * sz, dstGap, 0},
                            DataCopyPadExtParams<T>{false, 0, 0, 0});
            }
            winQ_.EnQue(in);
            in = winQ_.DeQue<T>();
            LocalTensor<float> f;
            if constexpr (IS_HALF) {
                if (cr > 0) {
                    Cast(inF, in, RoundMode::CAST_NONE, cr * P1);
                }
                f = inF;
            } else {
                f = in.template ReinterpretCast<float>();
            }
            if (cr < c1) {   // padded lanes hold zeros
                LocalTensor<float> padRows = f[cr * P1];
                Duplicate(padRows, 0.0f, static_cast<int32_t>((c1 - cr) * P1));
            }
            Sync<HardEvent::MTE3_V>();
            Gather(out1, f, tab1, static_cast<uint32_t>(0), pAct * c1);
            if (prevHeld) {   // released one tile later: the next tile's copy gets the other buffer
                winQ_.FreeTensor(prevIn);
            }
            prevIn = in;
            prevHeld = true;
            Sync<HardEvent::V_MTE3>();
            DataCopyPad(xtGm_[(static_cast<uint64_t>(b) * HW + p0) * t_.cp + c0], out1,
                        DataCopyExtParams{static_cast<uint16_t>(pAct), len * 4, (c1 - len) * 4 / 32,
                                          (t_.cp - len) * 4, 0});
        }
        if (prevHeld) {
            winQ_.FreeTensor(prevIn);
        }
        Sync<HardEvent::MTE3_MTE2>();
    }

    // ---------------- phase 2 ----------------
    __aicore__ inline void BuildTab2()
    {
        LocalTensor<uint32_t> tab = arena_.GetWithOffset<uint32_t>(t_.cc * t_.rs, t_.offTab2);
        const uint32_t valid = t_.k * t_.ow;
        // tab[c][q] = byte offset of (bin q of the group, channel c) in the [k*ow][cb] accumulator
        for (uint32_t q = 0; q < t_.rs; ++q) {
            tab.SetValue(q, q < valid ? q * t_.cb * 4 : 0u);
        }
        Sync<HardEvent::S_V>();
        LocalTensor<int32_t> tabi = tab.template ReinterpretCast<int32_t>();
        for (uint32_t c = 1; c < t_.cc; ++c) {
            LocalTensor<int32_t> dst = tabi[c * t_.rs];
            Adds(dst, tabi, static_cast<int32_t>(c * 4), static_cast<int32_t>(t_.rs));
        }
    }

    __aicore__ inline void LoadRoi(uint32_t r)
    {
        LocalTensor<T> bt = boxBuf_.Get<T>();
        LocalTensor<float> bf = boxFBuf_.Get<float>();
        Sync<HardEvent::S_MTE2>();
        DataCopyPad(bt, boxGm_[static_cast<uint64_t>(r) * 5],
                    DataCopyExtParams{1, static_cast<uint32_t>(5 * sizeof(T)), 0, 0, 0},
                    DataCopyPadExtParams<T>{false, 0, 0, 0});
        LocalTensor<float> f = ToFloat(bt, bf, 16);
        Geometry(f.GetValue(0), f.GetValue(1), f.GetValue(2), f.GetValue(3), f.GetValue(4));
        // the ROI's column range over all samples
        const int32_t W = static_cast<int32_t>(t_.W);
        xa_ = W;
        xb_ = -1;
        Tap tx;
        for (uint32_t pw = 0; pw < t_.ow; ++pw) {
            for (int32_t ix = 0; ix < gw_; ++ix) {
                AxisTap(sw_, bw_, stepW_, static_cast<int32_t>(pw), ix, W, tx);
                xa_ = tx.lo < xa_ ? tx.lo : xa_;
                xb_ = tx.hi > xb_ ? tx.hi : xb_;
            }
        }
        colSame_ = 0;
        const uint32_t maskBins = t_.ow < 64 ? t_.ow : 64;
        for (uint32_t pw = 1; pw < maskBins; ++pw) {
            if (SameCol(pw)) {
                colSame_ |= 1ULL << pw;
            }
        }
    }

    __aicore__ inline bool Covers(uint32_t cbi, int32_t y0, int32_t y1, int32_t x0, int32_t x1) const
    {
        return winValid_ && wb_ == b_ && wcb_ == cbi && wy0_ <= y0 && y1 <= wy1_ && wx0_ <= x0 && x1 <= wx1_;
    }

    // Columns of a window of `rows` rows that fit one window buffer.
    __aicore__ inline uint32_t CapCols(uint32_t rows) const { return t_.winBytes / (rows * t_.cb * 4); }

    // Load rows [y0, y1] x columns [x0, x1] of channel block cbi into the next window buffer (the other
    // buffer's copy may still be in flight: the queue keeps MTE2 and V overlapped).
    // Copy rows [y0, y1] x columns [x0, x1] of channel block cbi into a new window buffer and enqueue it;
    // the buffer in use is kept until the new one is adopted, so the copy overlaps its vector reads.
    __aicore__ inline void IssueLoad(uint32_t cbi, int32_t y0, int32_t y1, int32_t x0, int32_t x1)
    {
        const uint32_t rows = static_cast<uint32_t>(y1 - y0 + 1);
        const uint32_t span = static_cast<uint32_t>(x1 - x0 + 1);
        const uint32_t cb = t_.cb;
        LocalTensor<float> w = winQ_.AllocTensor<float>();
        const uint64_t rowBase = (static_cast<uint64_t>(b_) * t_.H + static_cast<uint32_t>(y0)) * t_.W + x0;
        if (cb == t_.cp) {   // whole positions are contiguous: one copy of `rows` runs
            DataCopyPad(w, xtGm_[rowBase * t_.cp],
                        DataCopyExtParams{static_cast<uint16_t>(rows), span * cb * 4, (t_.W - span) * t_.cp * 4, 0, 0},
                        DataCopyPadExtParams<float>{false, 0, 0, 0});
        } else {
            for (uint32_t y = 0; y < rows; ++y) {
                LocalTensor<float> dst = w[y * span * cb];
                DataCopyPad(dst, xtGm_[(rowBase + static_cast<uint64_t>(y) * t_.W) * t_.cp + cbi * cb],
                            DataCopyExtParams{static_cast<uint16_t>(span), cb * 4, (t_.cp - cb) * 4, 0, 0},
                            DataCopyPadExtParams<float>{false, 0, 0, 0});
            }
        }
        winQ_.EnQue(w);
        pendValid_ = true;
        pb_ = b_;
        pcb_ = cbi;
        py0_ = y0;
        py1_ = y1;
        px0_ = x0;
        px1_ = x1;
    }

    // Make the enqueued window the current one and release the previous.
    __aicore__ inline void Adopt()
    {
        LocalTensor<float> w = winQ_.DeQue<float>();
        if (winValid_) {
            winQ_.FreeTensor(win_);
        }
        win_ = w;
        winValid_ = true;
        pendValid_ = false;
        wb_ = pb_;
        wcb_ = pcb_;
        wy0_ = py0_;
        wy1_ = py1_;
        wx0_ = px0_;
        wx1_ = px1_;
    }

    __aicore__ inline void LoadWindow(uint32_t cbi, int32_t y0, int32_t y1, int32_t x0, int32_t x1)
    {
        IssueLoad(cbi, y0, y1, x0, x1);
        Adopt();
    }

    __aicore__ inline uint32_t Pos(int32_t y, int32_t x) const
    {
        const uint32_t span = static_cast<uint32_t>(wx1_ - wx0_ + 1);
        return (static_cast<uint32_t>(y - wy0_) * span + static_cast<uint32_t>(x - wx0_)) * t_.cb;
    }

    static __aicore__ inline bool SameTap(const Tap& a, const Tap& b)
    {
        return a.lo == b.lo && a.hi == b.hi && a.l == b.l;
    }

    __aicore__ inline bool SameRow(uint32_t ph)
    {
        Tap a, b;
        for (int32_t iy = 0; iy < gh_; ++iy) {
            AxisTap(sh_, bh_, stepH_, static_cast<int32_t>(ph), iy, static_cast<int32_t>(t_.H), a);
            AxisTap(sh_, bh_, stepH_, static_cast<int32_t>(ph) - 1, iy, static_cast<int32_t>(t_.H), b);
            if (!SameTap(a, b)) {
                return false;
            }
        }
        return true;
    }

    __aicore__ inline bool SameCol(uint32_t pw)
    {
        Tap a, b;
        for (int32_t ix = 0; ix < gw_; ++ix) {
            AxisTap(sw_, bw_, stepW_, static_cast<int32_t>(pw), ix, static_cast<int32_t>(t_.W), a);
            AxisTap(sw_, bw_, stepW_, static_cast<int32_t>(pw) - 1, ix, static_cast<int32_t>(t_.W), b);
            if (!SameTap(a, b)) {
                return false;
            }
        }
        return true;
    }

    // dst = ((hy*hx)*v1 + (hy*lx)*v2) + (ly*hx)*v3) + (ly*lx)*v4 over the channel lanes
    __aicore__ inline void SampleInto(LocalTensor<float>& dst, const Tap& ty, const Tap& tx)
    {
        const int32_t cb = static_cast<int32_t>(t_.cb);
        const float w1 = Prod(ty.h, tx.h);
        const float w2 = Prod(ty.h, tx.l);
        const float w3 = Prod(ty.l, tx.h);
        const float w4 = Prod(ty.l, tx.l);
        // every corner term is issued, even with a zero weight: 0 * NaN is NaN in the golden
        LocalTensor<float> v1 = win_[Pos(ty.lo, tx.lo)];
        Muls(dst, v1, w1, cb);
        LocalTensor<float> v2 = win_[Pos(ty.lo, tx.hi)];
        Axpy(dst, v2, w2, cb);
        LocalTensor<float> v3 = win_[Pos(ty.hi, tx.lo)];
        Axpy(dst, v3, w3, cb);
        LocalTensor<float> v4 = win_[Pos(ty.hi, tx.hi)];
        Axpy(dst, v4, w4, cb);
    }

    // bin pw has the same column taps as bin pw - 1 (computed once per ROI for pw < 64)
    __aicore__ inline bool ColRepeats(uint32_t pw)
    {
        return pw < 64 ? ((colSame_ >> pw) & 1ULL) != 0 : SameCol(pw);
    }

    // One output row: for each sample row iy the windows are the row pair (y_low, y_high) x runs of
    // columns. Up to MAXW windows are planned on the scalar unit first, so window w + 1 is copied while
    // the vector unit works on window w; each bin receives its samples in (iy, ix) order (the golden's).
    __aicore__ inline void ComputeRow(uint32_t ph, LocalTensor<float>& rowAcc, uint32_t cbi)
    {
        const uint32_t cb = t_.cb;
        const int32_t H = static_cast<int32_t>(t_.H);
        const int32_t W = static_cast<int32_t>(t_.W);
        const int32_t J = static_cast<int32_t>(t_.ow) * gw_;
        Tap ty, tx;
        int32_t iy = 0, j = 0;
        while (iy < gh_) {
            // plan
            uint32_t nw = 0;
            while (nw < MAXW && iy < gh_) {
                AxisTap(sh_, bh_, stepH_, static_cast<int32_t>(ph), iy, H, ty);
                const int32_t cap = static_cast<int32_t>(CapCols(static_cast<uint32_t>(ty.hi - ty.lo + 1)));
                while (j < J && j / gw_ > 0 && ColRepeats(static_cast<uint32_t>(j / gw_))) {
                    ++j;
                }
                if (j >= J) {
                    ++iy;
                    j = 0;
                    continue;
                }
                AxisTap(sw_, bw_, stepW_, j / gw_, j % gw_, W, tx);
                const int32_t x0 = tx.lo;
                int32_t x1 = x0 + cap - 1;
                x1 = x1 > xb_ ? xb_ : x1;
                x1 = x1 < tx.hi ? tx.hi : x1;
                int32_t e = j + 1;
                for (; e < J; ++e) {
                    const int32_t pw = e / gw_;
                    if (pw > 0 && ColRepeats(static_cast<uint32_t>(pw))) {
                        continue;
                    }
                    AxisTap(sw_, bw_, stepW_, pw, e % gw_, W, tx);
                    if (tx.lo < x0 || tx.hi > x1) {
                        break;
                    }
                }
                planIy_[nw] = iy;
                planJ0_[nw] = j;
                planJ1_[nw] = e;
                planY0_[nw] = ty.lo;
                planY1_[nw] = ty.hi;
                planX0_[nw] = x0;
                planX1_[nw] = x1;
                ++nw;
                j = e;
                if (j >= J) {
                    ++iy;
                    j = 0;
                }
            }
            // run
            for (uint32_t w = 0; w < nw; ++w) {
                if (!Covers(cbi, planY0_[w], planY1_[w], planX0_[w], planX1_[w])) {
                    if (pendValid_) {   // copied ahead during the previous window
                        Adopt();
                    } else {
                        LoadWindow(cbi, planY0_[w], planY1_[w], planX0_[w], planX1_[w]);
                    }
                }
                if (w + 1 < nw && !Covers(cbi, planY0_[w + 1], planY1_[w + 1], planX0_[w + 1], planX1_[w + 1])) {
                    IssueLoad(cbi, planY0_[w + 1], planY1_[w + 1], planX0_[w + 1], planX1_[w + 1]);
                }
                AxisTap(sh_, bh_, stepH_, static_cast<int32_t>(ph), planIy_[w], H, ty);
                for (int32_t e = planJ0_[w]; e < planJ1_[w]; ++e) {
                    const int32_t pw = e / gw_;
                    const int32_t ix = e % gw_;
                    if (pw > 0 && ColRepeats(static_cast<uint32_t>(pw))) {   // copied from the previous bin below
                        continue;
                    }
                    LocalTensor<float> bin = rowAcc[static_cast<uint32_t>(pw) * cb];
                    AxisTap(sw_, bw_, stepW_, pw, ix, W, tx);
                    const bool held = tmpValid_ && SameTap(ty, ky_) && SameTap(tx, kx_);
                    if (planIy_[w] == 0 && ix == 0) {   // the bin's sum starts as its first sample (0 + s = s)
                        if (held) {
                            Muls(bin, tmp_, 1.0f, static_cast<int32_t>(cb));
                        } else {
                            SampleInto(bin, ty, tx);
                        }
                        continue;
                    }
                    if (!held) {
                        SampleInto(tmp_, ty, tx);
                        tmpValid_ = true;
                        ky_ = ty;
                        kx_ = tx;
                    }
                    Add(bin, bin, tmp_, static_cast<int32_t>(cb));
                }
            }
        }
        for (uint32_t pw = 1; pw < t_.ow; ++pw) {
            if (ColRepeats(pw)) {
                LocalTensor<float> bin = rowAcc[pw * cb];
                LocalTensor<float> prev = rowAcc[(pw - 1) * cb];
                Muls(bin, prev, 1.0f, static_cast<int32_t>(cb));
            }
        }
    }

    __aicore__ inline void WriteGroup(uint32_t r, uint32_t cbi, uint32_t ph0, uint32_t kr, uint32_t cReal)
    {
        const uint32_t sz = static_cast<uint32_t>(sizeof(T));
        LocalTensor<float> acc = arena_.GetWithOffset<float>(t_.k * t_.ow * t_.cb, t_.offAcc);
        LocalTensor<uint32_t> tab = arena_.GetWithOffset<uint32_t>(t_.cc * t_.rs, t_.offTab2);
        LocalTensor<float> outF = arena_.GetWithOffset<float>(t_.cc * t_.rs, t_.offOutF);
        const uint32_t bins = t_.oh * t_.ow;
        const uint32_t runBytes = kr * t_.ow * sz;
        const uint32_t srcGap = (t_.rs * sz - RoundUpU(runBytes, 32)) / 32;
        const uint32_t dstGap = (bins - kr * t_.ow) * sz;
        for (uint32_t c0 = 0; c0 < cReal; c0 += t_.cc) {
            const uint32_t ccAct = MinU(t_.cc, cReal - c0);
            const uint32_t cnt = ccAct * t_.rs;
            const uint64_t off = (static_cast<uint64_t>(r) * t_.C + cbi * t_.cb + c0) * bins + ph0 * t_.ow;
            DataCopyExtParams cp{static_cast<uint16_t>(ccAct), runBytes, srcGap, dstGap, 0};
            LocalTensor<T> o = outQ_.AllocTensor<T>();
            if constexpr (IS_HALF) {
                Gather(outF, acc, tab, static_cast<uint32_t>(c0 * 4), cnt);
                Muls(outF, outF, inv_, static_cast<int32_t>(cnt));
                Cast(o, outF, RoundMode::CAST_RINT, cnt);
            } else {
                Gather(o, acc, tab, static_cast<uint32_t>(c0 * 4), cnt);
                Muls(o, o, inv_, static_cast<int32_t>(cnt));
            }
            outQ_.EnQue(o);
            o = outQ_.DeQue<T>();
            DataCopyPad(yGm_[off], o, cp);
            if (outHeld_) {   // released one chunk later: the next chunk gets the other buffer
                outQ_.FreeTensor(outPrev_);
            }
            outPrev_ = o;
            outHeld_ = true;
        }
    }

    __aicore__ inline void ProcessRows(uint32_t r, uint32_t cbi, uint32_t ra, uint32_t rb)
    {
        const uint32_t cb = t_.cb;
        const uint32_t rowElems = t_.ow * cb;
        const uint32_t cReal = MinU(cb, t_.C - cbi * cb);
        const bool empty = gh_ <= 0 || gw_ <= 0;
        LocalTensor<float> acc = arena_.GetWithOffset<float>(t_.k * rowElems, t_.offAcc);
        for (uint32_t ph0 = ra; ph0 < rb; ph0 += t_.k) {
            const uint32_t kr = MinU(t_.k, rb - ph0);
            for (uint32_t j = 0; j < kr; ++j) {
                const uint32_t ph = ph0 + j;
                LocalTensor<float> rowAcc = acc[j * rowElems];
                if (empty) {
                    Duplicate(rowAcc, 0.0f, static_cast<int32_t>(rowElems));
                    continue;
                }
                if (ph > ra && SameRow(ph)) {   // same taps as the previous row (held in the accumulator)
                    const uint32_t prevSlot = j == 0 ? t_.k - 1 : j - 1;
                    if (prevSlot != j) {
                        LocalTensor<float> prev = acc[prevSlot * rowElems];
                        Muls(rowAcc, prev, 1.0f, static_cast<int32_t>(rowElems));
                    }
                    continue;
                }
                ComputeRow(ph, rowAcc, cbi);
            }
            WriteGroup(r, cbi, ph0, kr, cReal);
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> arena_, tmpBuf_, boxBuf_, boxFBuf_;
    TQue<TPosition::VECIN, 1> winQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    LocalTensor<float> win_;
    GlobalTensor<T> xGm_, boxGm_, yGm_;
    GlobalTensor<float> xtGm_;
    LocalTensor<float> tmp_;
    RoiAlignCustomTilingData t_;
    uint32_t idx_ = 0, nblk_ = 1, first_ = 0, count_ = 0;
    // current ROI
    int32_t b_ = 0, gh_ = 0, gw_ = 0, xa_ = 0, xb_ = -1;
    float sh_ = 0.0f, sw_ = 0.0f, bh_ = 0.0f, bw_ = 0.0f, stepH_ = 0.0f, stepW_ = 0.0f, inv_ = 1.0f;
    // loaded window
    bool winValid_ = false;
    int32_t wb_ = -1, wy0_ = 0, wy1_ = -1, wx0_ = 0, wx1_ = -1;
    uint32_t wcb_ = 0;
    // the sample held in tmp_
    bool tmpValid_ = false;
    Tap ky_, kx_;
    uint64_t colSame_ = 0;
    // the window being copied ahead (enqueued, not yet adopted)
    bool pendValid_ = false;
    int32_t pb_ = -1, py0_ = 0, py1_ = -1, px0_ = 0, px1_ = -1;
    uint32_t pcb_ = 0;
    // planned windows of the current row: sample row, sample range [j0, j1) of j = pw * gw + ix, window
    static constexpr uint32_t MAXW = 32;
    int32_t planIy_[MAXW], planJ0_[MAXW], planJ1_[MAXW], planY0_[MAXW], planY1_[MAXW], planX0_[MAXW], planX1_[MAXW];
    LocalTensor<T> outPrev_;
    bool outHeld_ = false;
};

extern "C" __global__ __aicore__ void roi_align_custom(GM_ADDR x, GM_ADDR boxes, GM_ADDR y, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    GM_ADDR usr = GetUserWorkspace(workspace);
    KernelRoiAlign<DTYPE_X> op;
    op.Init(x, boxes, y, usr, t);
    op.Process();
}

namespace optiling {
static uint64_t RoundUp64(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& bs = context->GetInputShape(1)->GetStorageShape();
    if (xs.GetDimNum() != 4 || bs.GetDimNum() != 2 || bs.GetDim(1) != 5) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t B = xs.GetDim(0), C = xs.GetDim(1), H = xs.GetDim(2), W = xs.GetDim(3);
    const uint64_t N = bs.GetDim(0);
    auto attrs = context->GetAttrs();
    const int64_t* ohp = attrs->GetAttrPointer<int64_t>(0);
    const int64_t* owp = attrs->GetAttrPointer<int64_t>(1);
    const float* scp = attrs->GetAttrPointer<float>(2);
    const int64_t* srp = attrs->GetAttrPointer<int64_t>(3);
    const bool* alp = attrs->GetAttrPointer<bool>(4);
    if (ohp == nullptr || owp == nullptr || scp == nullptr || *ohp <= 0 || *owp <= 0 || B == 0 || C == 0 ||
        H == 0 || W == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t oh = static_cast<uint64_t>(*ohp), ow = static_cast<uint64_t>(*owp);
    const bool half = context->GetInputDesc(0)->GetDataType() != ge::DT_FLOAT;
    const uint64_t sz = half ? 2 : 4;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();
    if (ub > 196608) {
        ub = 196608;
    }
    const uint64_t cp8 = RoundUp64(C, 8);
    const uint64_t cb = cp8 < 256 ? cp8 : 256;
    const uint64_t cp = RoundUp64(C, cb);
    const uint64_t small = cb * 4 + 64 + 64;

    RoiAlignCustomTilingData* t = context->GetTilingData<RoiAlignCustomTilingData>();
    const uint64_t total = ub - 12288 - small;   // arena + the two queues
    // phase 1 views (its input tiles use the window queue)
    const uint64_t c1 = cp < C1MAX ? cp : C1MAX;
    uint64_t a = 0;
    t->offInF = 0;
    if (half) {
        a += c1 * P1 * 4;
    }
    t->offTab1 = static_cast<uint32_t>(a);
    a += P1 * c1 * 4;
    t->offOut1 = static_cast<uint32_t>(a);
    a += P1 * c1 * 4;
    t->offScanT = static_cast<uint32_t>(a);
    a += RoundUp64(SCAN_BOXES * 5 * sz, 32);
    t->offScanF = static_cast<uint32_t>(a);
    a += SCAN_BOXES * 5 * 4;
    const uint64_t a1 = a;
    const uint64_t in1 = c1 * P1 * sz;

    // phase 2: k output rows per group and cc channels per transposition chunk, chosen by the copy-out
    // estimate (0.35 us per copy, rows billed >= 512 B at ~34 GB/s) among those that fit
    uint64_t bestK = 0, bestCc = 0;
    double bestEst = 0.0;
    const uint64_t ccList[6] = {8, 16, 32, 64, 128, 256};
    for (int pass = 0; pass < 2 && bestK == 0; ++pass) {
        uint64_t winMin = (pass == 0 ? 16 : 4) * cb * 4;
        winMin = winMin < in1 ? in1 : winMin;
        for (uint64_t k = 1; k <= oh; ++k) {
            const uint64_t rs = RoundUp64(k * ow, 16);
            for (int ci = 0; ci < 6; ++ci) {
                const uint64_t cc = ccList[ci];
                if (cc > cb) {
                    break;
                }
                const uint64_t a2 = k * ow * cb * 4 + cc * rs * (half ? 8 : 4);
                const uint64_t need = (a1 > a2 ? a1 : a2) + 2 * cc * rs * sz + 2 * winMin;
                if (need > total) {
                    continue;
                }
                const uint64_t groups = (oh + k - 1) / k;
                const uint64_t chunks = (cb + cc - 1) / cc;
                const uint64_t run = k * ow * sz < 512 ? 512 : k * ow * sz;
                const double est = static_cast<double>(groups) *
                                   (static_cast<double>(chunks) * 0.35 + static_cast<double>(cb * run) / 34000.0);
                if (bestK == 0 || est < bestEst) {
                    bestK = k;
                    bestCc = cc;
                    bestEst = est;
                }
            }
        }
    }
    if (bestK == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t rs = RoundUp64(bestK * ow, 16);
    t->offAcc = 0;
    a = bestK * ow * cb * 4;
    t->offTab2 = static_cast<uint32_t>(a);
    a += bestCc * rs * 4;
    t->offOutF = static_cast<uint32_t>(a);
    if (half) {
        a += bestCc * rs * 4;
    }
    const uint64_t arena = a1 > a ? a1 : a;
    t->arenaBytes = static_cast<uint32_t>(arena);
    t->winBytes = static_cast<uint32_t>((total - arena - 2 * bestCc * rs * sz) / 2 / 32 * 32);
    t->c1 = static_cast<uint32_t>(c1);

    t->B = static_cast<uint32_t>(B);
    t->C = static_cast<uint32_t>(C);
    t->H = static_cast<uint32_t>(H);
    t->W = static_cast<uint32_t>(W);
    t->N = static_cast<uint32_t>(N);
    t->oh = static_cast<uint32_t>(oh);
    t->ow = static_cast<uint32_t>(ow);
    t->samplingRatio = srp != nullptr ? static_cast<int32_t>(*srp) : -1;
    t->aligned = (alp != nullptr && *alp) ? 1u : 0u;
    t->scale = *scp;
    t->cb = static_cast<uint32_t>(cb);
    t->cp = static_cast<uint32_t>(cp);
    t->ncb = static_cast<uint32_t>(cp / cb);
    t->k = static_cast<uint32_t>(bestK);
    t->cc = static_cast<uint32_t>(bestCc);
    t->rs = static_cast<uint32_t>(rs);

    const uint64_t units = N * (cp / cb) * oh;
    const uint64_t blockDim = coreNum == 0 ? 1 : coreNum;   // every core takes part in phase 1
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));

    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = static_cast<size_t>(B * H * W * cp * 4) + static_cast<size_t>(plat.GetLibApiWorkSpaceSize());
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (roi_align).
class RoiAlignCustom : public OpDef {
public:
    explicit RoiAlignCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("boxes")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("outputHeight").AttrType(REQUIRED).Int();
        this->Attr("outputWidth").AttrType(REQUIRED).Int();
        this->Attr("spatial_scale").AttrType(REQUIRED).Float();
        this->Attr("sampling_ratio").AttrType(OPTIONAL).Int(-1);
        this->Attr("aligned").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(RoiAlignCustom);
}  // namespace ops
