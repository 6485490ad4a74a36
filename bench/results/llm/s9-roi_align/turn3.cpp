#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t ROI_MAXE = 1024;

struct RoiAlignCustomTilingData {
    uint32_t B;
    uint32_t C;
    uint32_t H;
    uint32_t W;
    uint32_t N;
    uint32_t oh;
    uint32_t ow;
    float scale;
    int32_t samplingRatio;
    uint32_t aligned;
    uint32_t Cp;        // channels padded to 16 in the channel-last workspace copy
    // phase 1: transpose x -> xt [B, H*W, Cp] (float)
    uint32_t cT1;
    uint32_t pT1;
    uint32_t nCT1;
    uint32_t nPT1;
    uint32_t units1;
    // phase 2: units (roi, channel block, bin-row group)
    uint32_t cwS;
    uint32_t G;
    uint32_t nCB;
    uint32_t nG;
    uint32_t rs;        // UB row stride (elements) of the transposed output tile
    uint32_t packed;    // G == oh: one contiguous output block per unit
    uint32_t capPx;     // pixels per row chunk
    uint32_t gapPx;     // largest gap bridged inside one chunk
    uint32_t units2;
    // buffers
    uint32_t inBytes;
    uint32_t outBytes;
    uint32_t scrBytes;
    uint32_t tBytes;
    uint32_t tab1Bytes;
    uint32_t tab2Bytes;
};
REGISTER_TILING_DEFAULT(RoiAlignCustomTilingData);

using namespace AscendC;

template <typename T>
class KernelRoiAlign {
public:
    static constexpr bool IS_HALF = (sizeof(T) == 2);
    static constexpr uint32_t ESZ = sizeof(T);

    __aicore__ inline KernelRoiAlign() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR boxes, GM_ADDR y, GM_ADDR ws, const RoiAlignCustomTilingData& t)
    {
        t_ = t;
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        boxGm_.SetGlobalBuffer((__gm__ T*)boxes);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        xtGm_.SetGlobalBuffer((__gm__ float*)ws);
        pipe_.InitBuffer(inQ_, 2, t.inBytes);
        pipe_.InitBuffer(outQ_, 1, t.outBytes);
        pipe_.InitBuffer(scrBuf_, t.scrBytes);
        pipe_.InitBuffer(tBuf_, t.tBytes);
        pipe_.InitBuffer(tab1Buf_, t.tab1Bytes);
        pipe_.InitBuffer(tab2Buf_, t.tab2Bytes);
        pipe_.InitBuffer(boxInBuf_, 64);
        pipe_.InitBuffer(boxFBuf_, 64);
    }

    // ---------------- phase 1: x [B, C, HW] -> xt [B, HW, Cp] float ----------------
    __aicore__ inline void Phase1()
    {
        const uint32_t cT = t_.cT1;
        const uint32_t pS = t_.pT1;
        const uint32_t HW = t_.H * t_.W;
        const uint32_t Cp = t_.Cp;
        LocalTensor<int32_t> tab = tab1Buf_.Get<int32_t>();
        // i = p * cT + c (p < 8)  ->  byte offset (c * pS + p) * ESZ
        BuildTable(tab, 8 * cT, cT, static_cast<int32_t>(pS * ESZ), static_cast<int32_t>((cT * pS - 1) * ESZ));
        LocalTensor<uint32_t> tabU = tab.ReinterpretCast<uint32_t>();
        uint32_t first = 0, count = 0;
        Split(t_.units1, first, count);
        const uint32_t perB = t_.nCT1 * t_.nPT1;
        for (uint32_t u = first; u < first + count; ++u) {
            const uint32_t b = u / perB;
            const uint32_t rem = u % perB;
            const uint32_t c0 = (rem / t_.nPT1) * cT;
            const uint32_t p0 = (rem % t_.nPT1) * pS;
            const uint32_t ct = (Cp - c0 < cT) ? Cp - c0 : cT;
            const uint32_t ctIn = (t_.C - c0 < ct) ? t_.C - c0 : ct;
            const uint32_t pt = (HW - p0 < pS) ? HW - p0 : pS;

            LocalTensor<T> in = inQ_.AllocTensor<T>();
            const uint32_t rowBlocks = (pt * ESZ + 31) / 32;
            DataCopyExtParams cp{static_cast<uint16_t>(ctIn), static_cast<uint32_t>(pt * ESZ),
                                 static_cast<uint32_t>((HW - pt) * ESZ),
                                 static_cast<uint32_t>(pS * ESZ / 32 - rowBlocks), 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(in, xGm_[(static_cast<uint64_t>(b) * t_.C + c0) * HW + p0], cp, pad);
            inQ_.EnQue(in);
            in = inQ_.DeQue<T>();
            if (ctIn < ct) {
                Duplicate(in[ctIn * pS], static_cast<T>(0.0f), static_cast<int32_t>((ct - ctIn) * pS));
            }
            LocalTensor<float> out = outQ_.AllocTensor<float>();
            const uint32_t groups = (pt + 7) / 8;
            if constexpr (IS_HALF) {
                LocalTensor<T> g = scrBuf_.Get<T>();
                for (uint32_t k = 0; k < groups; ++k) {
                    Gather(g[k * 8 * cT], in, tabU, k * 8 * ESZ, 8 * cT);
                }
                Cast(out, g, RoundMode::CAST_NONE, groups * 8 * cT);
            } else {
                for (uint32_t k = 0; k < groups; ++k) {
                    Gather(out[k * 8 * cT], in, tabU, k * 8 * ESZ, 8 * cT);
                }
            }
            inQ_.FreeTensor(in);
            outQ_.EnQue(out);
            out = outQ_.DeQue<float>();
            DataCopyExtParams co{static_cast<uint16_t>(pt), static_cast<uint32_t>(ct * 4),
                                 static_cast<uint32_t>((cT - ct) * 4 / 32),
                                 static_cast<uint32_t>((Cp - ct) * 4), 0};
            DataCopyPad(xtGm_[(static_cast<uint64_t>(b) * HW + p0) * Cp + c0], out, co);
            outQ_.FreeTensor(out);
        }
    }

    // ---------------- phase 2: ROI align from the channel-last copy ----------------
    __aicore__ inline void Phase2()
    {
        const uint32_t rs = t_.rs;
        LocalTensor<int32_t> tab = tab2Buf_.Get<int32_t>();
        // i = cl * rs + bin (cl < 16)  ->  byte offset (bin * cwS + cl) * ESZ
        BuildTable(tab, 16 * rs, rs, static_cast<int32_t>(t_.cwS * ESZ), static_cast<int32_t>((rs * t_.cwS - 1) * ESZ));
        uint32_t first = 0, count = 0;
        Split(t_.units2, first, count);
        const uint32_t perR = t_.nCB * t_.nG;
        int32_t curR = -1;
        for (uint32_t u = first; u < first + count; ++u) {
            const uint32_t r = u / perR;
            const uint32_t rem = u % perR;
            const uint32_t cb = rem / t_.nG;
            const uint32_t g = rem % t_.nG;
            if (static_cast<int32_t>(r) != curR) {
                SetupRoi(r);
                curR = static_cast<int32_t>(r);
            }
            ProcessUnit(r, cb, g);
        }
    }

private:
    __aicore__ inline void Split(uint32_t units, uint32_t& first, uint32_t& count)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t nb = static_cast<uint32_t>(GetBlockNum());
        const uint32_t base = units / nb;
        const uint32_t rem = units % nb;
        count = base + (idx < rem ? 1 : 0);
        first = idx * base + (idx < rem ? idx : rem);
    }

    // dst[i] = i * a - floor(i / div) * b, built with vector ops (n a multiple of 8).
    __aicore__ inline void BuildTable(LocalTensor<int32_t>& dst, uint32_t n, uint32_t div, int32_t a, int32_t b)
    {
        LocalTensor<float> fr = scrBuf_.Get<float>();
        LocalTensor<int32_t> q = scrBuf_.GetWithOffset<int32_t>(n, n * 4);
        const int32_t cnt = static_cast<int32_t>(n);
        CreateVecIndex(fr, 0.0f, n);
        Adds(fr, fr, 0.5f, cnt);
        Muls(fr, fr, 1.0f / static_cast<float>(div), cnt);
        Cast(q, fr, RoundMode::CAST_FLOOR, n);
        CreateVecIndex(dst, static_cast<int32_t>(0), n);
        Muls(dst, dst, a, cnt);
        Muls(q, q, b, cnt);
        Sub(dst, dst, q, cnt);
    }

    // a product rounded to float before any add (keeps the compiler from fusing it into an FMA,
    // the golden rounds every tensor op)
    __aicore__ static inline float MulR(float a, float b)
    {
        volatile float p = a * b;
        return p;
    }

    __aicore__ static inline int32_t CeilF(float v)
    {
        int32_t i = static_cast<int32_t>(v);
        if (static_cast<float>(i) < v) {
            ++i;
        }
        return i;
    }

    __aicore__ inline void SetupRoi(uint32_t r)
    {
        LocalTensor<T> bi = boxInBuf_.Get<T>();
        LocalTensor<float> bf = boxFBuf_.Get<float>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(5 * ESZ), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(bi, boxGm_[static_cast<uint64_t>(r) * 5], cp, pad);
        event_t e1 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(e1);
        WaitFlag<HardEvent::MTE2_V>(e1);
        if constexpr (IS_HALF) {
            Cast(bf, bi, RoundMode::CAST_NONE, 5);
        } else {
            Muls(bf, bi, 1.0f, 5);
        }
        event_t e2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(e2);
        WaitFlag<HardEvent::V_S>(e2);
        const float bv = bf.GetValue(0);
        const float x0 = bf.GetValue(1);
        const float y0 = bf.GetValue(2);
        const float x1 = bf.GetValue(3);
        const float y1 = bf.GetValue(4);

        int32_t bidx = static_cast<int32_t>(bv);
        if (bidx < 0) {
            bidx = 0;
        }
        if (bidx >= static_cast<int32_t>(t_.B)) {
            bidx = static_cast<int32_t>(t_.B) - 1;
        }
        b_ = static_cast<uint32_t>(bidx);
        const float off = t_.aligned ? 0.5f : 0.0f;
        const float sc = t_.scale;
        const float sw = MulR(x0, sc) - off;
        const float sh = MulR(y0, sc) - off;
        const float ewv = MulR(x1, sc) - off;
        const float ehv = MulR(y1, sc) - off;
        float rw = ewv - sw;
        float rh = ehv - sh;
        if (!t_.aligned) {
            rw = rw < 1.0f ? 1.0f : rw;
            rh = rh < 1.0f ? 1.0f : rh;
        }
        const float bh = rh / static_cast<float>(t_.oh);
        const float bw = rw / static_cast<float>(t_.ow);
        int32_t gh, gw, cnt;
        if (t_.samplingRatio > 0) {
            gh = t_.samplingRatio;
            gw = t_.samplingRatio;
            cnt = gh * gw;
        } else {
            gh = CeilF(rh / static_cast<float>(t_.oh));
            gw = CeilF(rw / static_cast<float>(t_.ow));
            cnt = gh * gw;
        }
        if (cnt < 1) {
            cnt = 1;
        }
        hasSamples_ = (gh > 0 && gw > 0);
        gh_ = gh;
        gw_ = gw;
        sh_ = sh;
        bh_ = bh;
        invCount_ = 1.0f / static_cast<float>(cnt);
        NS_ = 0;
        if (!hasSamples_) {
            return;
        }
        subH_ = bh / static_cast<float>(gh);
        const float subW = bw / static_cast<float>(gw);
        const int32_t Wm1 = static_cast<int32_t>(t_.W) - 1;
        // sample columns k = pw * gw + ix, the golden's float order
        for (uint32_t pw = 0; pw < t_.ow; ++pw) {
            const float base = sw + MulR(static_cast<float>(pw), bw);
            for (int32_t ix = 0; ix < gw; ++ix) {
                float xv = base + MulR(static_cast<float>(ix) + 0.5f, subW);
                xv = xv < 0.0f ? 0.0f : xv;
                int32_t xl = static_cast<int32_t>(xv);
                int32_t xh;
                if (xl >= Wm1) {
                    xl = Wm1;
                    xh = Wm1;
                } else {
                    xh = xl + 1;
                }
                const float lx = xv - static_cast<float>(xl);
                if (NS_ < ROI_MAXE) {
                    sxl_[NS_] = static_cast<int16_t>(xl);
                    sxh_[NS_] = static_cast<int16_t>(xh);
                    slx_[NS_] = lx;
                    shx_[NS_] = 1.0f - lx;
                    ++NS_;
                }
            }
        }
    }

    __aicore__ inline void LoadRow(LocalTensor<float>& dst, uint64_t pixBase, uint32_t n, uint32_t c0, uint32_t cw)
    {
        const uint32_t Cp = t_.Cp;
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        const uint64_t off = pixBase * Cp + c0;
        if (cw == Cp) {
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * Cp * 4), 0, 0, 0};
            DataCopyPad(dst, xtGm_[off], cp, pad);
        } else {
            DataCopyExtParams cp{static_cast<uint16_t>(n), static_cast<uint32_t>(cw * 4),
                                 static_cast<uint32_t>((Cp - cw) * 4), 0, 0};
            DataCopyPad(dst, xtGm_[off], cp, pad);
        }
    }

    __aicore__ inline void ProcessUnit(uint32_t r, uint32_t cb, uint32_t g)
    {
        const uint32_t O = t_.ow;
        const uint32_t cwS = t_.cwS;
        const uint32_t rs = t_.rs;
        const uint32_t c0 = cb * cwS;
        const uint32_t cw = (t_.Cp - c0 < cwS) ? t_.Cp - c0 : cwS;
        const uint32_t cOut = (t_.C - c0 < cw) ? t_.C - c0 : cw;
        const uint32_t ph0 = g * t_.G;
        const uint32_t gAct = (t_.oh - ph0 < t_.G) ? t_.oh - ph0 : t_.G;
        const int32_t cwN = static_cast<int32_t>(cw);
        LocalTensor<float> acc = scrBuf_.Get<float>();
        LocalTensor<float> tmp = tBuf_.Get<float>();
        LocalTensor<float> t1 = tmp;
        LocalTensor<float> t2 = tmp[cwS];
        Duplicate(acc, 0.0f, static_cast<int32_t>(rs * cwS));
        if (hasSamples_) {
            const int32_t Hm1 = static_cast<int32_t>(t_.H) - 1;
            const int32_t capPx = static_cast<int32_t>(t_.capPx);
            const int32_t gapPx = static_cast<int32_t>(t_.gapPx);
            const uint32_t hiOff = t_.capPx * cw;
            for (uint32_t ph = ph0; ph < ph0 + gAct; ++ph) {
                const float base = sh_ + MulR(static_cast<float>(ph), bh_);
                for (int32_t iy = 0; iy < gh_; ++iy) {
                    float yv = base + MulR(static_cast<float>(iy) + 0.5f, subH_);
                    yv = yv < 0.0f ? 0.0f : yv;
                    int32_t yl = static_cast<int32_t>(yv);
                    int32_t yh;
                    if (yl >= Hm1) {
                        yl = Hm1;
                        yh = Hm1;
                    } else {
                        yh = yl + 1;
                    }
                    const float ly = yv - static_cast<float>(yl);
                    const float hy = 1.0f - ly;
                    const uint64_t rowLo = (static_cast<uint64_t>(b_) * t_.H + static_cast<uint64_t>(yl)) * t_.W;
                    const uint64_t rowHi = (static_cast<uint64_t>(b_) * t_.H + static_cast<uint64_t>(yh)) * t_.W;
                    uint32_t k = 0;
                    while (k < NS_) {
                        int32_t xa = sxl_[k];
                        int32_t xb = sxh_[k];
                        uint32_t k1 = k + 1;
                        while (k1 < NS_) {
                            const int32_t xl = sxl_[k1];
                            const int32_t xh = sxh_[k1];
                            const int32_t na = xl < xa ? xl : xa;
                            const int32_t nb = xh > xb ? xh : xb;
                            if (nb - na + 1 > capPx || xl > xb + gapPx) {
                                break;
                            }
                            xa = na;
                            xb = nb;
                            ++k1;
                        }
                        const uint32_t n = static_cast<uint32_t>(xb - xa + 1);
                        LocalTensor<float> buf = inQ_.AllocTensor<float>();
                        LocalTensor<float> bufHi = buf[hiOff];
                        LoadRow(buf, rowLo + static_cast<uint64_t>(xa), n, c0, cw);
                        LoadRow(bufHi, rowHi + static_cast<uint64_t>(xa), n, c0, cw);
                        inQ_.EnQue(buf);
                        buf = inQ_.DeQue<float>();
                        for (uint32_t kk = k; kk < k1; ++kk) {
                            const uint32_t pw = kk / static_cast<uint32_t>(gw_);
                            const uint32_t ix = kk % static_cast<uint32_t>(gw_);
                            LocalTensor<float> accB = acc[((ph - ph0) * O + pw) * cwS];
                            const uint32_t ol = static_cast<uint32_t>(sxl_[kk] - xa) * cw;
                            const uint32_t ohx = static_cast<uint32_t>(sxh_[kk] - xa) * cw;
                            LocalTensor<float> v1 = buf[ol];
                            LocalTensor<float> v2 = buf[ohx];
                            LocalTensor<float> v3 = buf[hiOff + ol];
                            LocalTensor<float> v4 = buf[hiOff + ohx];
                            const float hx = shx_[kk];
                            const float lx = slx_[kk];
                            const float w1 = hy * hx;
                            const float w2 = hy * lx;
                            const float w3 = ly * hx;
                            const float w4 = ly * lx;
                            // the golden: ((w1*v1 + w2*v2) + w3*v3) + w4*v4, each product rounded,
                            // then the samples of a bin summed in order (iy, ix)
                            const bool first = (iy == 0 && ix == 0);
                            LocalTensor<float> d = first ? accB : t1;
                            Muls(d, v1, w1, cwN);
                            Muls(t2, v2, w2, cwN);
                            Add(d, d, t2, cwN);
                            Muls(t2, v3, w3, cwN);
                            Add(d, d, t2, cwN);
                            Muls(t2, v4, w4, cwN);
                            Add(d, d, t2, cwN);
                            if (!first) {
                                Add(accB, accB, t1, cwN);
                            }
                        }
                        inQ_.FreeTensor(buf);
                        k = k1;
                    }
                }
            }
            Muls(acc, acc, invCount_, static_cast<int32_t>(gAct * O * cwS));
        }
        // [bins][cwS] float -> [c][rs] of T, one DataCopyPad out
        LocalTensor<T> o = outQ_.AllocTensor<T>();
        LocalTensor<uint32_t> tab = tab2Buf_.Get<uint32_t>();
        const uint32_t gc = 16 * rs;
        if constexpr (IS_HALF) {
            LocalTensor<T> accH = scrBuf_.GetWithOffset<T>(rs * cwS, rs * cwS * 4);
            Cast(accH, acc, RoundMode::CAST_RINT, rs * cwS);
            for (uint32_t c1 = 0; c1 < cw; c1 += 16) {
                Gather(o[c1 * rs], accH, tab, c1 * ESZ, gc);
            }
        } else {
            for (uint32_t c1 = 0; c1 < cw; c1 += 16) {
                Gather(o[c1 * rs], acc, tab, c1 * ESZ, gc);
            }
        }
        outQ_.EnQue(o);
        o = outQ_.DeQue<T>();
        const uint32_t bins = t_.oh * O;
        const uint64_t yOff = (static_cast<uint64_t>(r) * t_.C + c0) * bins + static_cast<uint64_t>(ph0) * O;
        if (t_.packed) {
            DataCopyExtParams cp{1, static_cast<uint32_t>(cOut * bins * ESZ), 0, 0, 0};
            DataCopyPad(yGm_[yOff], o, cp);
        } else {
            const uint32_t len = gAct * O * ESZ;
            DataCopyExtParams cp{static_cast<uint16_t>(cOut), len,
                                 static_cast<uint32_t>(rs * ESZ / 32 - (len + 31) / 32),
                                 static_cast<uint32_t>((bins - gAct * O) * ESZ), 0};
            DataCopyPad(yGm_[yOff], o, cp);
        }
        outQ_.FreeTensor(o);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> scrBuf_, tBuf_, tab1Buf_, tab2Buf_, boxInBuf_, boxFBuf_;
    GlobalTensor<T> xGm_, boxGm_, yGm_;
    GlobalTensor<float> xtGm_;
    RoiAlignCustomTilingData t_;
    uint32_t b_ = 0;
    uint32_t NS_ = 0;
    int32_t gh_ = 0;
    int32_t gw_ = 1;
    bool hasSamples_ = false;
    float sh_ = 0.0f, bh_ = 0.0f, subH_ = 0.0f, invCount_ = 1.0f;
    int16_t sxl_[ROI_MAXE];
    int16_t sxh_[ROI_MAXE];
    float slx_[ROI_MAXE];
    float shx_[ROI_MAXE];
};

extern "C" __global__ __aicore__ void roi_align_custom(GM_ADDR x, GM_ADDR boxes, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    GM_ADDR usr = GetUserWorkspace(workspace);
    KernelRoiAlign<DTYPE_X> op;
    op.Init(x, boxes, y, usr, t);
    op.Phase1();
    PipeBarrier<PIPE_ALL>();
    SyncAll();
    op.Phase2();
}

namespace optiling {
static uint64_t RoiRoundUp(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& bs = context->GetInputShape(1)->GetStorageShape();
    if (xs.GetDimNum() != 4 || bs.GetDimNum() != 2) {
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
    const uint64_t oh = ohp != nullptr ? static_cast<uint64_t>(*ohp) : 1;
    const uint64_t ow = owp != nullptr ? static_cast<uint64_t>(*owp) : 1;
    const float scale = scp != nullptr ? *scp : 1.0f;
    const int64_t sr = srp != nullptr ? *srp : -1;
    const bool aligned = alp != nullptr ? *alp : false;
    if (B == 0 || C == 0 || H == 0 || W == 0 || N == 0 || oh == 0 || ow == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t esz = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT16 ? 2 : 4;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    const uint64_t budget = ub - 16384;
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }

    const uint64_t Cp = RoiRoundUp(C, 16);
    const uint64_t HW = H * W;
    // phase 1 tile
    const uint64_t cT1 = Cp < 128 ? Cp : 128;
    uint64_t pT1 = (8192 / cT1) / 16 * 16;
    pT1 = pT1 < 16 ? 16 : pT1;
    const uint64_t hwPad = RoiRoundUp(HW, 16);
    pT1 = pT1 > hwPad ? hwPad : pT1;
    const uint64_t nCT1 = (Cp + cT1 - 1) / cT1;
    const uint64_t nPT1 = (HW + pT1 - 1) / pT1;
    const uint64_t in1 = cT1 * pT1 * esz;
    const uint64_t out1 = cT1 * pT1 * 4;
    const uint64_t gat1 = esz == 2 ? cT1 * pT1 * 2 : 0;
    const uint64_t tab1 = 8 * cT1 * 4;

    // phase 2: choose channel block and bin-row group
    const uint64_t O = ow;
    uint64_t gt = ((512 / esz) + O - 1) / O;
    gt = gt > oh ? oh : gt;
    gt = gt < 1 ? 1 : gt;
    uint64_t bestScore = 0, bestC = 0, bestG = 0;
    const uint64_t cMax = Cp < 256 ? Cp : 256;
    const uint64_t cands[5] = {cMax, 128, 64, 32, 16};
    for (int ci = 0; ci < 5; ++ci) {
        const uint64_t c = cands[ci];
        if (c > cMax || (ci > 0 && c == cMax)) {
            continue;
        }
        for (uint64_t G = 1; G <= gt; ++G) {
            const bool packed = (G == oh);
            const uint64_t rs = packed ? oh * O : RoiRoundUp(G * O, 32 / esz);
            const uint64_t inB = in1 > 32768 ? in1 : 32768;
            uint64_t outB = c * rs * esz;
            outB = outB < out1 ? out1 : outB;
            uint64_t scr = rs * c * 4 + (esz == 2 ? rs * c * 2 : 0);
            scr = scr < gat1 ? gat1 : scr;
            scr = scr < 2 * 16 * rs * 4 ? 2 * 16 * rs * 4 : scr;
            scr = scr < 2 * 8 * cT1 * 4 ? 2 * 8 * cT1 * 4 : scr;
            const uint64_t tB = 2 * c * 4;
            const uint64_t tab2 = 16 * rs * 4;
            const uint64_t total = 2 * RoiRoundUp(inB, 32) + RoiRoundUp(outB, 32) + RoiRoundUp(scr, 32) +
                                   RoiRoundUp(tB, 32) + RoiRoundUp(tab1, 32) + RoiRoundUp(tab2, 32) + 128;
            if (total > budget) {
                continue;
            }
            const uint64_t rowB = G * O * esz;
            const uint64_t score = (rowB < 512 ? rowB : 512) * c * 4 + c;
            if (score > bestScore) {
                bestScore = score;
                bestC = c;
                bestG = G;
            }
        }
    }
    if (bestC == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t c = bestC, G = bestG;
    const bool packed = (G == oh);
    const uint64_t rs = packed ? oh * O : RoiRoundUp(G * O, 32 / esz);
    const uint64_t inB = in1 > 32768 ? in1 : 32768;
    uint64_t outB = c * rs * esz;
    outB = outB < out1 ? out1 : outB;
    uint64_t scr = rs * c * 4 + (esz == 2 ? rs * c * 2 : 0);
    scr = scr < gat1 ? gat1 : scr;
    scr = scr < 2 * 16 * rs * 4 ? 2 * 16 * rs * 4 : scr;
    scr = scr < 2 * 8 * cT1 * 4 ? 2 * 8 * cT1 * 4 : scr;
    const uint64_t nCB = (Cp + c - 1) / c;
    const uint64_t nG = (oh + G - 1) / G;
    const uint64_t units1 = B * nCT1 * nPT1;
    const uint64_t units2 = N * nCB * nG;
    uint64_t capPx = inB / (2 * c * 4);
    capPx = capPx < 1 ? 1 : capPx;
    uint64_t gapPx = 8192 / (c * 4);
    gapPx = gapPx < 1 ? 1 : gapPx;

    RoiAlignCustomTilingData* t = context->GetTilingData<RoiAlignCustomTilingData>();
    t->B = static_cast<uint32_t>(B);
    t->C = static_cast<uint32_t>(C);
    t->H = static_cast<uint32_t>(H);
    t->W = static_cast<uint32_t>(W);
    t->N = static_cast<uint32_t>(N);
    t->oh = static_cast<uint32_t>(oh);
    t->ow = static_cast<uint32_t>(ow);
    t->scale = scale;
    t->samplingRatio = static_cast<int32_t>(sr);
    t->aligned = aligned ? 1 : 0;
    t->Cp = static_cast<uint32_t>(Cp);
    t->cT1 = static_cast<uint32_t>(cT1);
    t->pT1 = static_cast<uint32_t>(pT1);
    t->nCT1 = static_cast<uint32_t>(nCT1);
    t->nPT1 = static_cast<uint32_t>(nPT1);
    t->units1 = static_cast<uint32_t>(units1);
    t->cwS = static_cast<uint32_t>(c);
    t->G = static_cast<uint32_t>(G);
    t->nCB = static_cast<uint32_t>(nCB);
    t->nG = static_cast<uint32_t>(nG);
    t->rs = static_cast<uint32_t>(rs);
    t->packed = packed ? 1 : 0;
    t->capPx = static_cast<uint32_t>(capPx);
    t->gapPx = static_cast<uint32_t>(gapPx);
    t->units2 = static_cast<uint32_t>(units2);
    t->inBytes = static_cast<uint32_t>(RoiRoundUp(inB, 32));
    t->outBytes = static_cast<uint32_t>(RoiRoundUp(outB, 32));
    t->scrBytes = static_cast<uint32_t>(RoiRoundUp(scr, 32));
    t->tBytes = static_cast<uint32_t>(RoiRoundUp(2 * c * 4, 32));
    t->tab1Bytes = static_cast<uint32_t>(RoiRoundUp(tab1, 32));
    t->tab2Bytes = static_cast<uint32_t>(RoiRoundUp(16 * rs * 4, 32));

    uint64_t blockDim = units1 > units2 ? units1 : units2;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    blockDim = blockDim < 1 ? 1 : blockDim;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = static_cast<size_t>(B * HW * Cp * 4) + static_cast<size_t>(plat.GetLibApiWorkSpaceSize());
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
