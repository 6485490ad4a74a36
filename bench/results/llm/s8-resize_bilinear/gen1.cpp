// ResizeBilinear (upsample_bilinear2d, NCHW) for Ascend 910B, AIV only.
// Unit of work: (column chunk, plane nc, block of k output rows). The input rows the block needs
// ([h0(first), h1(last)], columns of the chunk) are loaded once, rows at a 32-byte stride. Every
// needed input row is interpolated along W once: one Gather of its w0 and w1 columns (byte-offset
// table [w0 | w1] built with vector ops, exactly torch's float index rules), Cast to float, Mul by
// [l0w | l1w], Add of the halves -> t(row). Each output row is then t(h0) * l0h + t(h1) * l1h
// (torch's order), rounded once for 16-bit outputs, and the block is copied out.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct ResizeBilinearCustomTilingData {
    uint32_t nc;
    uint32_t h;
    uint32_t w;
    uint32_t oh;
    uint32_t ow;
    uint32_t alignCorners;
    float scaleH;
    float scaleW;
    uint32_t k;        // output rows per block
    uint32_t nBlocks;
    uint32_t nch;      // output column chunks
    uint32_t owc;      // output columns per chunk
    uint32_t owpc;     // UB stride of an output row / interpolated row (elements, 32 B multiple)
    uint32_t ts;       // UB stride of a loaded input row (elements): W when packed (nch == 1)
    uint32_t tileBytes; // one input tile buffer
    uint32_t nrMax;    // most input rows a block needs
    uint32_t units;
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
};
REGISTER_TILING_DEFAULT(ResizeBilinearCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct RbIsSame { static constexpr bool value = false; };
template <typename A> struct RbIsSame<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelResizeBilinear {
public:
    static constexpr bool IS_FLOAT = RbIsSame<T, float>::value;

    __aicore__ inline KernelResizeBilinear() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const ResizeBilinearCustomTilingData& t)
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
        pipe_.InitBuffer(outQ_, 2, t.k * t.owpc * sizeof(T));
        pipe_.InitBuffer(hrBuf_, t.nrMax * t.owpc * sizeof(float));
        pipe_.InitBuffer(gBuf_, 2 * t.owpc * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(gfBuf_, 2 * t.owpc * sizeof(float));
            pipe_.InitBuffer(voBuf_, t.k * t.owpc * sizeof(float));
        }
        pipe_.InitBuffer(offBuf_, 2 * t.owpc * sizeof(int32_t));
        pipe_.InitBuffer(wBuf_, 2 * t.owpc * sizeof(float));
        pipe_.InitBuffer(vtBuf_, t.owpc * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        const uint32_t perChunk = t_.nc * t_.nBlocks;
        uint32_t cur = 0xFFFFFFFFu;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t c = u / perChunk;
            const uint32_t rem = u % perChunk;
            if (c != cur) {
                BuildColTables(c);
                cur = c;
            }
            ProcessBlock(rem / t_.nBlocks, rem % t_.nBlocks);
        }
    }

private:
    static __aicore__ inline uint32_t RoundUp(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
    static __aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

    // torch's area_pixel_compute_source_index + guard_index_and_lambda, in float.
    __aicore__ inline void SrcIndex(float scale, uint32_t i, uint32_t in, uint32_t& i0, uint32_t& i1, float& l1)
    {
        float src;
        if (t_.alignCorners) {
            src = scale * static_cast<float>(i);
        } else {
            const float di = static_cast<float>(i) + 0.5f;
            src = scale * di;
            src = src - 0.5f;
            if (src < 0.0f) {
                src = 0.0f;
            }
        }
        uint32_t f = static_cast<uint32_t>(src);
        if (f > in - 1) {
            f = in - 1;
        }
        float l = src - static_cast<float>(f);
        l = l < 0.0f ? 0.0f : (l > 1.0f ? 1.0f : l);
        i0 = f;
        i1 = f < in - 1 ? f + 1 : f;
        l1 = l;
    }

    // Column tables of chunk c: offTab = [w0 - cb | w1 - cb] in bytes, wTab = [l0w | l1w].
    __aicore__ inline void BuildColTables(uint32_t c)
    {
        ow0_ = c * t_.owc;
        owcThis_ = MinU(t_.owc, t_.ow - ow0_);
        if (t_.nch == 1) {
            cb_ = 0;
            wc_ = t_.w;
        } else {
            uint32_t a0, a1, b0, b1;
            float l;
            SrcIndex(t_.scaleW, ow0_, t_.w, a0, a1, l);
            SrcIndex(t_.scaleW, ow0_ + owcThis_ - 1, t_.w, b0, b1, l);
            cb_ = a0;
            wc_ = b1 - a0 + 1;
        }
        const uint32_t n = t_.owpc;
        const int32_t cnt = static_cast<int32_t>(n);
        LocalTensor<int32_t> i0 = offBuf_.Get<int32_t>();
        LocalTensor<int32_t> i1 = i0[n];
        LocalTensor<float> l0 = wBuf_.Get<float>();
        LocalTensor<float> l1 = l0[n];
        LocalTensor<float> ft = vtBuf_.Get<float>();
        CreateVecIndex(i0, static_cast<int32_t>(ow0_), n);
        Cast(l1, i0, RoundMode::CAST_NONE, cnt);
        if (t_.alignCorners) {
            Muls(l1, l1, t_.scaleW, cnt);
        } else {
            Adds(l1, l1, 0.5f, cnt);
            Muls(l1, l1, t_.scaleW, cnt);
            Adds(l1, l1, -0.5f, cnt);
            Maxs(l1, l1, 0.0f, cnt);
        }
        Cast(i0, l1, RoundMode::CAST_FLOOR, cnt);
        Mins(i0, i0, static_cast<int32_t>(t_.w - 1), cnt);
        Cast(ft, i0, RoundMode::CAST_NONE, cnt);
        Sub(l1, l1, ft, cnt);
        Maxs(l1, l1, 0.0f, cnt);
        Mins(l1, l1, 1.0f, cnt);
        Muls(l0, l1, -1.0f, cnt);
        Adds(l0, l0, 1.0f, cnt);
        Adds(i1, i0, static_cast<int32_t>(1), cnt);
        Mins(i1, i1, static_cast<int32_t>(t_.w - 1), cnt);
        const int32_t ncb = -static_cast<int32_t>(cb_);
        const int32_t lim = static_cast<int32_t>(wc_ - 1);
        const int32_t esz = static_cast<int32_t>(sizeof(T));
        Adds(i0, i0, ncb, cnt);
        Mins(i0, i0, lim, cnt);
        Maxs(i0, i0, static_cast<int32_t>(0), cnt);
        Muls(i0, i0, esz, cnt);
        Adds(i1, i1, ncb, cnt);
        Mins(i1, i1, lim, cnt);
        Maxs(i1, i1, static_cast<int32_t>(0), cnt);
        Muls(i1, i1, esz, cnt);
    }

    // t(row) = x[row, w0] * l0w + x[row, w1] * l1w for the chunk's columns, into hr row `slot`.
    __aicore__ inline void InterpRow(LocalTensor<T>& tile, uint32_t rel)
    {
        const uint32_t n = t_.owpc;
        LocalTensor<T> g = gBuf_.Get<T>();
        LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
        LocalTensor<float> w = wBuf_.Get<float>();
        LocalTensor<float> hr = hrBuf_.Get<float>();
        LocalTensor<float> dst = hr[rel * n];
        Gather(g, tile, off, static_cast<uint32_t>((slack_ + rel * t_.ts) * sizeof(T)), 2 * n);
        LocalTensor<float> gf;
        if constexpr (IS_FLOAT) {
            gf = g.template ReinterpretCast<float>();
        } else {
            gf = gfBuf_.Get<float>();
            Cast(gf, g, RoundMode::CAST_NONE, static_cast<int32_t>(2 * n));
        }
        Mul(gf, gf, w, static_cast<int32_t>(2 * n));
        LocalTensor<float> g1 = gf[n];
        Add(dst, gf, g1, static_cast<int32_t>(n));
    }

    __aicore__ inline void ProcessBlock(uint32_t nc, uint32_t b)
    {
        const uint32_t oh0 = b * t_.k;
        const uint32_t nOh = MinU(t_.k, t_.oh - oh0);
        uint32_t ra, tmpA, tmpB, rb;
        float l;
        SrcIndex(t_.scaleH, oh0, t_.h, ra, tmpA, l);
        SrcIndex(t_.scaleH, oh0 + nOh - 1, t_.h, tmpB, rb, l);
        const uint32_t nr = rb - ra + 1;

        LocalTensor<T> tile = inQ_.AllocTensor<T>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        const uint64_t src = (static_cast<uint64_t>(nc) * t_.h + ra) * t_.w + cb_;
        if (t_.nch == 1) {
            // Packed rows in one burst from the 512-B aligned address below them; the Gathers skip
            // the slack through their srcBaseAddr.
            slack_ = static_cast<uint32_t>((src * sizeof(T)) % 512) / sizeof(T);
            DataCopyExtParams cp{1, static_cast<uint32_t>((slack_ + nr * t_.w) * sizeof(T)), 0, 0, 0};
            DataCopyPad(tile, xGm_[src - slack_], cp, pad);
        } else {
            slack_ = 0;
            const uint32_t blen = wc_ * sizeof(T);
            DataCopyExtParams cp{static_cast<uint16_t>(nr), blen, static_cast<uint32_t>((t_.w - wc_) * sizeof(T)),
                                 static_cast<uint32_t>((t_.ts * sizeof(T) - RoundUp(blen, 32)) / 32), 0};
            DataCopyPad(tile, xGm_[src], cp, pad);
        }
        inQ_.EnQue(tile);
        tile = inQ_.DeQue<T>();

        const uint32_t n = t_.owpc;
        const int32_t cnt = static_cast<int32_t>(n);
        LocalTensor<T> yt = outQ_.AllocTensor<T>();
        LocalTensor<float> vo;
        if constexpr (IS_FLOAT) {
            vo = yt.template ReinterpretCast<float>();
        } else {
            vo = voBuf_.Get<float>();
        }
        LocalTensor<float> hr = hrBuf_.Get<float>();
        LocalTensor<float> vt = vtBuf_.Get<float>();
        int32_t last = -1;
        for (uint32_t ohl = 0; ohl < nOh; ++ohl) {
            uint32_t h0, h1;
            float l1h;
            SrcIndex(t_.scaleH, oh0 + ohl, t_.h, h0, h1, l1h);
            const float l0h = 1.0f - l1h;
            const int32_t r0 = static_cast<int32_t>(h0 - ra);
            const int32_t r1 = static_cast<int32_t>(h1 - ra);
            if (r0 > last) {
                InterpRow(tile, static_cast<uint32_t>(r0));
                last = r0;
            }
            if (r1 > last) {
                InterpRow(tile, static_cast<uint32_t>(r1));
                last = r1;
            }
            LocalTensor<float> d = vo[ohl * n];
            LocalTensor<float> t0 = hr[static_cast<uint32_t>(r0) * n];
            LocalTensor<float> t1 = hr[static_cast<uint32_t>(r1) * n];
            Muls(d, t0, l0h, cnt);
            Muls(vt, t1, l1h, cnt);
            Add(d, d, vt, cnt);
        }
        inQ_.FreeTensor(tile);
        if constexpr (!IS_FLOAT) {
            Cast(yt, vo, RoundMode::CAST_RINT, static_cast<int32_t>(nOh * n));
        }
        outQ_.EnQue(yt);
        yt = outQ_.DeQue<T>();
        const uint64_t dst = (static_cast<uint64_t>(nc) * t_.oh + oh0) * t_.ow + ow0_;
        if (owcThis_ == t_.ow && n == t_.ow) {
            DataCopyExtParams cp{1, static_cast<uint32_t>(nOh * t_.ow * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[dst], yt, cp);
        } else {
            const uint32_t blen = owcThis_ * sizeof(T);
            DataCopyExtParams cp{static_cast<uint16_t>(nOh), blen,
                                 static_cast<uint32_t>((n * sizeof(T) - RoundUp(blen, 32)) / 32),
                                 static_cast<uint32_t>((t_.ow - owcThis_) * sizeof(T)), 0};
            DataCopyPad(yGm_[dst], yt, cp);
        }
        outQ_.FreeTensor(yt);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> hrBuf_, gBuf_, gfBuf_, voBuf_, offBuf_, wBuf_, vtBuf_;
    GlobalTensor<T> xGm_, yGm_;
    ResizeBilinearCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    uint32_t ow0_ = 0;
    uint32_t owcThis_ = 0;
    uint32_t cb_ = 0;
    uint32_t wc_ = 0;
    uint32_t slack_ = 0;
};

extern "C" __global__ __aicore__ void resize_bilinear_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelResizeBilinear<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static inline uint64_t RbRU(uint64_t a, uint64_t b) { return (a + b - 1) / b * b; }

// Same float arithmetic as the kernel (and torch).
static void RbSrcIndex(float scale, bool ac, uint64_t i, uint64_t in, uint64_t& i0, uint64_t& i1)
{
    float src;
    if (ac) {
        src = scale * static_cast<float>(i);
    } else {
        const float di = static_cast<float>(i) + 0.5f;
        src = scale * di;
        src = src - 0.5f;
        if (src < 0.0f) {
            src = 0.0f;
        }
    }
    uint64_t f = static_cast<uint64_t>(src);
    if (f > in - 1) {
        f = in - 1;
    }
    i0 = f;
    i1 = f < in - 1 ? f + 1 : f;
}

// The double the user wrote for a float32 attr: the shortest decimal (<= 9 digits) that rounds to it.
static double RbShortestDecimal(float v)
{
    if (!(v > 0.0f)) {
        return static_cast<double>(v);
    }
    const double m = static_cast<double>(v);
    for (int p = 1; p <= 9; ++p) {
        double lo = 1.0;
        for (int i = 1; i < p; ++i) {
            lo *= 10.0;
        }
        const double hi = lo * 10.0;
        // m * 10^e in [lo, hi): scale by an exact power of ten (multiply up, or divide down).
        double pw = 1.0;
        bool up = true;
        while (m * pw < lo && pw < 1e22) {
            pw *= 10.0;
        }
        if (m * pw >= hi) {
            up = false;
            pw = 1.0;
            while (m / pw >= hi && pw < 1e22) {
                pw *= 10.0;
            }
        }
        const double scaled = up ? m * pw : m / pw;
        const double r = static_cast<double>(static_cast<long long>(scaled + 0.5));
        const double d = up ? r / pw : r * pw;
        if (static_cast<float>(d) == v) {
            return d;
        }
    }
    return m;
}

static float RbScale(uint64_t in, uint64_t out, bool ac, bool hasSf, float sf)
{
    if (ac) {
        return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    }
    if (hasSf && sf > 0.0f) {
        return static_cast<float>(1.0 / RbShortestDecimal(sf));
    }
    return static_cast<float>(in) / static_cast<float>(out);
}

static uint64_t RbRowsNeeded(uint64_t k, uint64_t oh, uint64_t h, float scale, bool ac)
{
    uint64_t m = 0;
    for (uint64_t o0 = 0; o0 < oh; o0 += k) {
        const uint64_t o1 = (o0 + k < oh ? o0 + k : oh) - 1;
        uint64_t a0, a1, b0, b1;
        RbSrcIndex(scale, ac, o0, h, a0, a1);
        RbSrcIndex(scale, ac, o1, h, b0, b1);
        const uint64_t r = b1 - a0 + 1;
        m = r > m ? r : m;
    }
    return m;
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& s = context->GetInputShape(0)->GetStorageShape();
    if (s.GetDimNum() != 4) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t N = s.GetDim(0), C = s.GetDim(1), H = s.GetDim(2), W = s.GetDim(3);
    const auto* attrs = context->GetAttrs();
    const gert::TypedContinuousVector<int64_t>* osz = attrs->GetListInt(0);
    const bool* acPtr = attrs->GetAttrPointer<bool>(1);
    const gert::TypedContinuousVector<float>* sfv = attrs->GetListFloat(2);
    const bool ac = acPtr != nullptr && *acPtr;
    const bool hasSf = sfv != nullptr && sfv->GetSize() >= 1;
    const float sfH = hasSf ? sfv->GetData()[0] : 0.0f;
    const float sfW = hasSf ? sfv->GetData()[sfv->GetSize() >= 2 ? 1 : 0] : 0.0f;

    uint64_t OH = 0, OW = 0;
    const gert::StorageShape* ys = context->GetOutputShape(0);
    if (ys != nullptr && ys->GetStorageShape().GetDimNum() == 4) {
        OH = ys->GetStorageShape().GetDim(2);
        OW = ys->GetStorageShape().GetDim(3);
    }
    if ((OH == 0 || OW == 0) && osz != nullptr && osz->GetSize() >= 2) {
        OH = osz->GetData()[0];
        OW = osz->GetData()[1];
    }
    if ((OH == 0 || OW == 0) && hasSf) {
        OH = static_cast<uint64_t>(static_cast<double>(H) * RbShortestDecimal(sfH));
        OW = static_cast<uint64_t>(static_cast<double>(W) * RbShortestDecimal(sfW));
    }
    if (OH == 0 || OW == 0 || N * C * H * W == 0) {
        return ge::GRAPH_FAILED;
    }
    // torch uses the scale factor only when no size was given.
    const bool useSf = hasSf && (osz == nullptr || osz->GetSize() == 0);
    const float scaleH = RbScale(H, OH, ac, useSf, sfH);
    const float scaleW = RbScale(W, OW, ac, useSf, sfW);

    const uint64_t sz = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t coreNum = plat.GetCoreNumAiv();
    coreNum = coreNum == 0 ? 1 : coreNum;
    const uint64_t budget = ub > 32768 ? ub - 16384 : ub / 2;
    const uint64_t nc = N * C;

    uint64_t kSel = 0, nchSel = 0, owcSel = 0, owpcSel = 0, tsSel = 0, nrSel = 0, tbSel = 0;
    for (uint64_t nch = 1; nch <= 256 && kSel == 0; ++nch) {
        const uint64_t owc = (OW + nch - 1) / nch;
        if (nch > 1 && (OW + owc - 1) / owc != nch) {
            continue;
        }
        const uint64_t owpc = RbRU(owc * sz, 32) / sz;
        uint64_t wcMax = W;
        if (nch > 1) {
            wcMax = 0;
            for (uint64_t o0 = 0; o0 < OW; o0 += owc) {
                const uint64_t o1 = (o0 + owc < OW ? o0 + owc : OW) - 1;
                uint64_t a0, a1, b0, b1;
                RbSrcIndex(scaleW, ac, o0, W, a0, a1);
                RbSrcIndex(scaleW, ac, o1, W, b0, b1);
                const uint64_t wc = b1 - a0 + 1;
                wcMax = wc > wcMax ? wc : wcMax;
            }
        }
        const uint64_t ts = nch == 1 ? W : RbRU(wcMax * sz, 32) / sz;
        uint64_t kCap = nc * OH * nch / (4 * coreNum);
        kCap = kCap < 1 ? 1 : kCap;
        kCap = kCap > OH ? OH : kCap;
        kCap = kCap > 256 ? 256 : kCap;
        for (uint64_t k = kCap; k >= 1; --k) {
            const uint64_t nr = RbRowsNeeded(k, OH, H, scaleH, ac);
            const uint64_t tileBytes = nch == 1 ? RbRU(512 + nr * W * sz, 32) : RbRU(nr * ts * sz, 32);
            if (sz == 2 && tileBytes > 131040) {
                continue;
            }
            uint64_t b = 2 * tileBytes + nr * owpc * 4 + 2 * owpc * sz + 2 * owpc * 4 * 2 + owpc * 4 +
                         2 * RbRU(k * owpc * sz, 32) + 16 * 32;
            if (sz == 2) {
                b += 2 * owpc * 4 + k * owpc * 4;
            }
            if (b <= budget && nr <= 4095) {
                kSel = k;
                nchSel = nch;
                owcSel = owc;
                owpcSel = owpc;
                tsSel = ts;
                nrSel = nr;
                tbSel = tileBytes;
                break;
            }
        }
    }
    if (kSel == 0) {
        return ge::GRAPH_FAILED;
    }

    ResizeBilinearCustomTilingData* t = context->GetTilingData<ResizeBilinearCustomTilingData>();
    t->nc = static_cast<uint32_t>(nc);
    t->h = static_cast<uint32_t>(H);
    t->w = static_cast<uint32_t>(W);
    t->oh = static_cast<uint32_t>(OH);
    t->ow = static_cast<uint32_t>(OW);
    t->alignCorners = ac ? 1 : 0;
    t->scaleH = scaleH;
    t->scaleW = scaleW;
    t->k = static_cast<uint32_t>(kSel);
    t->nBlocks = static_cast<uint32_t>((OH + kSel - 1) / kSel);
    t->nch = static_cast<uint32_t>(nchSel);
    t->owc = static_cast<uint32_t>(owcSel);
    t->owpc = static_cast<uint32_t>(owpcSel);
    t->ts = static_cast<uint32_t>(tsSel);
    t->nrMax = static_cast<uint32_t>(nrSel);
    t->tileBytes = static_cast<uint32_t>(tbSel);
    const uint64_t units = nchSel * nc * t->nBlocks;
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
// The operator definition, from the task's proto (resize_bilinear).
class ResizeBilinearCustom : public OpDef {
public:
    explicit ResizeBilinearCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("output_size").AttrType(REQUIRED).ListInt();
        this->Attr("align_corners").AttrType(OPTIONAL).Bool(false);
        this->Attr("scale_factor").AttrType(REQUIRED).ListFloat();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ResizeBilinearCustom);
}  // namespace ops
