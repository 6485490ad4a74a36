// Dilation2D (morphological dilation, NHWC, fp16) for Ascend 910B.
// y[b, oy, ox, c] = max_{dy,dx} x_pad[b, oy*sh - pt + rh*dy, ox*sw - pl + rw*dx, c] + f[dy, dx, c]
// with x_pad = -inf outside the image (torch pads with -inf, then adds the filter).
// Work unit = (channel block, b, R output rows oy0 + k*step, block of TW output columns), step chosen
// so the rows share input rows (step = rh / gcd(rh, sh): a dilated filter's taps line up). Every
// input row the R output rows need is loaded once and applied to every (output row, dy) using it. UB keeps one 32-B padded channel block per column, so one Add
// (input + filter row, the filter reused by every repeat: src1RepStride 0) and one Max cover all
// output columns of a tap, one repeat per column (src0RepStride = sw columns).
// Copies: C % 16 == 0 and the whole C in one block: rows are contiguous in GM and in UB (one big
// block per copy). Odd C in one block: contiguous copies plus a Gather re-layout to the padded
// stride and back. Several channel blocks: one copy block per column.
// A tap in the padding contributes max(acc, -inf + f): NaN where the filter is NaN or +inf, like torch.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct Dilation2dCustomTilingData {
    uint32_t N;
    uint32_t H;
    uint32_t W;
    uint32_t C;
    uint32_t fh;
    uint32_t fw;
    uint32_t sh;
    uint32_t sw;
    uint32_t rh;
    uint32_t rw;
    int32_t pt;
    int32_t pl;
    uint32_t OH;
    uint32_t OW;
    uint32_t TC;        // channels per block
    uint32_t ncb;       // channel blocks
    uint32_t TW;        // output columns per tile (<= 255)
    uint32_t twb;       // column tiles per output row
    uint32_t R;         // output rows per unit
    uint32_t rb;        // row blocks (step * rbq)
    uint32_t step;      // output rows of a unit are oyStart + k * step (they share input rows)
    uint32_t rbq;       // row blocks per residue class of oy mod step
    uint32_t nIx;       // input columns per tile buffer
    uint32_t copyMode;  // 0 dense (C % 16 == 0, one block), 1 per-column blocks, 2 gather re-layout
    uint32_t inBytes;
    uint32_t outBytes;
    uint32_t accBytes;
    uint32_t relaidBytes;
    uint32_t inTabBytes;
    uint32_t outTabBytes;
    uint32_t outRowStride;   // gather mode: elements between compact output rows in UB
    uint32_t units;
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
};
REGISTER_TILING_DEFAULT(Dilation2dCustomTilingData);

using namespace AscendC;

template <typename T>
class KernelDilation2d {
public:
    __aicore__ inline KernelDilation2d() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR filter, GM_ADDR y, const Dilation2dCustomTilingData& t)
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
        fGm_.SetGlobalBuffer((__gm__ T*)filter);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        const uint32_t tcp = (t.TC + 15) / 16 * 16;
        pipe_.InitBuffer(inQ_, 2, t.inBytes);
        pipe_.InitBuffer(tmpBuf_, t.TW * tcp * sizeof(T));
        pipe_.InitBuffer(filtBuf_, t.fh * t.fw * tcp * sizeof(T));
        pipe_.InitBuffer(fpadBuf_, t.fh * t.fw * tcp * sizeof(T));
        if (t.copyMode == 2) {
            pipe_.InitBuffer(outQ_, 1, t.outBytes);
            pipe_.InitBuffer(accBuf_, t.accBytes);
            pipe_.InitBuffer(relaidBuf_, t.relaidBytes);
            pipe_.InitBuffer(inTabBuf_, t.inTabBytes);
            pipe_.InitBuffer(outTabBuf_, t.outTabBytes);
            BuildTables(tcp);
        } else {
            pipe_.InitBuffer(outQ_, 2, t.outBytes);
        }
        eMte2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        eVMte2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        int32_t curCb = -1;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            uint32_t r = u;
            const uint32_t tw = r % t_.twb;
            r /= t_.twb;
            const uint32_t rbi = r % t_.rb;
            r /= t_.rb;
            const uint32_t b = r % t_.N;
            const uint32_t cb = r / t_.N;
            const uint32_t c0 = cb * t_.TC;
            const uint32_t ntc = (t_.C - c0) < t_.TC ? (t_.C - c0) : t_.TC;
            const uint32_t ntcp = (ntc + 15) / 16 * 16;
            if (static_cast<int32_t>(cb) != curCb) {
                LoadFilter(c0, ntc);
                curCb = static_cast<int32_t>(cb);
            }
            const uint32_t ox0 = tw * t_.TW;
            const uint32_t ntw = (t_.OW - ox0) < t_.TW ? (t_.OW - ox0) : t_.TW;
            const uint32_t q = rbi / t_.rbq;
            const uint32_t blkIdx = rbi % t_.rbq;
            const uint32_t oy0 = q + blkIdx * t_.R * t_.step;
            if (oy0 >= t_.OH) {
                continue;
            }
            uint32_t nr = (t_.OH - oy0 + t_.step - 1) / t_.step;
            nr = nr < t_.R ? nr : t_.R;
            Unit(b, oy0, nr, ox0, ntw, c0, ntc, ntcp);
        }
    }

private:
    // Gather tables (byte offsets) for odd C: padded(col, ch) <- raw[col * C + min(ch, C - 1)] and
    // compact[j = col * C + ch] <- acc[col * tcp + ch].
    __aicore__ inline void BuildTables(uint32_t tcp)
    {
        const uint32_t C = t_.C;
        const int32_t n2 = static_cast<int32_t>(t_.TW * C);
        LocalTensor<int32_t> a = outTabBuf_.Get<int32_t>();
        LocalTensor<float> bf = inTabBuf_.Get<float>();
        LocalTensor<int32_t> bi = inTabBuf_.Get<int32_t>();
        CreateVecIndex(a, static_cast<int32_t>(0), static_cast<uint32_t>(n2));
        Cast(bf, a, RoundMode::CAST_NONE, static_cast<uint32_t>(n2));          // j
        Adds(bf, bf, 0.5f, n2);
        Muls(bf, bf, 1.0f / static_cast<float>(C), n2);
        Cast(a, bf, RoundMode::CAST_FLOOR, static_cast<uint32_t>(n2));        // col
        Cast(bf, a, RoundMode::CAST_NONE, static_cast<uint32_t>(n2));
        Muls(bf, bf, static_cast<float>(tcp - C), n2);
        Cast(a, bf, RoundMode::CAST_RINT, static_cast<uint32_t>(n2));         // col * (tcp - C)
        CreateVecIndex(bi, static_cast<int32_t>(0), static_cast<uint32_t>(n2));
        Add(a, a, bi, n2);                                                    // col * tcp + ch
        Muls(a, a, static_cast<int32_t>(sizeof(T)), n2);
        // padded input table, one column at a time from a template row
        LocalTensor<int32_t> row = relaidBuf_.Get<int32_t>();
        CreateVecIndex(row, static_cast<int32_t>(0), tcp);
        Mins(row, row, static_cast<int32_t>(C - 1), static_cast<int32_t>(tcp));
        Muls(row, row, static_cast<int32_t>(sizeof(T)), static_cast<int32_t>(tcp));
        for (uint32_t col = 0; col < t_.nIx; ++col) {
            LocalTensor<int32_t> dst = bi[col * tcp];
            Adds(dst, row, static_cast<int32_t>(col * C * sizeof(T)), static_cast<int32_t>(tcp));
        }
    }

    __aicore__ inline void LoadFilter(uint32_t c0, uint32_t ntc)
    {
        LocalTensor<T> f = filtBuf_.Get<T>();
        SetFlag<HardEvent::V_MTE2>(eVMte2_);
        WaitFlag<HardEvent::V_MTE2>(eVMte2_);
        DataCopyExtParams cp{static_cast<uint16_t>(t_.fh * t_.fw), static_cast<uint32_t>(ntc * sizeof(T)),
                             static_cast<uint32_t>((t_.C - ntc) * sizeof(T)), 0, 0};
        DataCopyPadExtParams<T> pd{false, 0, 0, 0};
        DataCopyPad(f, fGm_[c0], cp, pd);
        SetFlag<HardEvent::MTE2_V>(eMte2V_);
        WaitFlag<HardEvent::MTE2_V>(eMte2V_);
        // What a padded tap contributes in torch: -inf + filter (-inf, or NaN where filter is NaN / +inf).
        const uint32_t ntcp = (ntc + 15) / 16 * 16;
        const int32_t n = static_cast<int32_t>(t_.fh * t_.fw * ntcp);
        LocalTensor<T> fp = fpadBuf_.Get<T>();
        LocalTensor<uint16_t> fpBits = fp.template ReinterpretCast<uint16_t>();
        Duplicate(fpBits, static_cast<uint16_t>(0xFC00), n);
        Add(fp, fp, f, n);
    }

    // acc columns [k0, k0 + cnt) = max(acc, -inf + filter[tap]) (taps lying in the padding)
    __aicore__ inline void MaxPad(LocalTensor<T>& acc, uint32_t k0, uint32_t cnt, uint32_t tap, uint32_t ntc,
                                  uint32_t ntcp)
    {
        if (cnt == 0) {
            return;
        }
        LocalTensor<T> fp = fpadBuf_.Get<T>();
        const uint8_t blk = static_cast<uint8_t>(ntcp / 16);
        BinaryRepeatParams pp;
        pp.dstBlkStride = 1;
        pp.src0BlkStride = 1;
        pp.src1BlkStride = 1;
        pp.dstRepStride = blk;
        pp.src0RepStride = blk;
        pp.src1RepStride = 0;
        for (uint32_t cc = 0; cc < ntc; cc += 128) {
            const uint32_t m = (ntc - cc) < 128 ? (ntc - cc) : 128;
            LocalTensor<T> ov = acc[k0 * ntcp + cc];
            LocalTensor<T> fv = fp[tap * ntcp + cc];
            Max(ov, ov, fv, static_cast<uint64_t>(m), static_cast<uint8_t>(cnt), pp);
        }
    }

    // Apply filter row dy of input row `in` (columns loadLo.. in UB) to one accumulator row.
    __aicore__ inline void ApplyRow(LocalTensor<T>& acc, LocalTensor<T>& in, uint32_t dy, int32_t ixStart,
                                    int32_t loadLo, int32_t loadHi, uint32_t ntw, uint32_t ntc, uint32_t ntcp)
    {
        LocalTensor<T> tmp = tmpBuf_.Get<T>();
        LocalTensor<T> filt = filtBuf_.Get<T>();
        const int32_t sw = static_cast<int32_t>(t_.sw);
        const int32_t rw = static_cast<int32_t>(t_.rw);
        const uint8_t blk = static_cast<uint8_t>(ntcp / 16);
        const uint8_t blkS = static_cast<uint8_t>(static_cast<uint32_t>(sw) * ntcp / 16);
        for (uint32_t dx = 0; dx < t_.fw; ++dx) {
            const uint32_t tap = dy * t_.fw + dx;
            const int32_t base = ixStart + static_cast<int32_t>(dx) * rw;   // input column of k = 0
            int32_t kLo = 0;
            if (base < loadLo) {
                kLo = (loadLo - base + sw - 1) / sw;
            }
            int32_t kHi = loadHi - base < 0 ? -1 : (loadHi - base) / sw;
            if (kHi > static_cast<int32_t>(ntw) - 1) {
                kHi = static_cast<int32_t>(ntw) - 1;
            }
            if (kLo > static_cast<int32_t>(ntw)) {
                kLo = static_cast<int32_t>(ntw);
            }
            if (kLo > kHi) {
                MaxPad(acc, 0, ntw, tap, ntc, ntcp);
                continue;
            }
            MaxPad(acc, 0, static_cast<uint32_t>(kLo), tap, ntc, ntcp);
            MaxPad(acc, static_cast<uint32_t>(kHi + 1), ntw - static_cast<uint32_t>(kHi + 1), tap, ntc, ntcp);
            const uint32_t cnt = static_cast<uint32_t>(kHi - kLo + 1);
            const uint32_t srcCol = static_cast<uint32_t>(base + kLo * sw - loadLo);
            BinaryRepeatParams ap;
            ap.dstBlkStride = 1;
            ap.src0BlkStride = 1;
            ap.src1BlkStride = 1;
            ap.dstRepStride = blk;
            ap.src0RepStride = blkS;
            ap.src1RepStride = 0;
            BinaryRepeatParams mp;
            mp.dstBlkStride = 1;
            mp.src0BlkStride = 1;
            mp.src1BlkStride = 1;
            mp.dstRepStride = blk;
            mp.src0RepStride = blk;
            mp.src1RepStride = blk;
            for (uint32_t cc = 0; cc < ntc; cc += 128) {
                const uint32_t m = (ntc - cc) < 128 ? (ntc - cc) : 128;
                LocalTensor<T> tv = tmp[static_cast<uint32_t>(kLo) * ntcp + cc];
                LocalTensor<T> iv = in[srcCol * ntcp + cc];
                LocalTensor<T> fv = filt[tap * ntcp + cc];
                LocalTensor<T> ov = acc[static_cast<uint32_t>(kLo) * ntcp + cc];
                Add(tv, iv, fv, static_cast<uint64_t>(m), static_cast<uint8_t>(cnt), ap);
                Max(ov, ov, tv, static_cast<uint64_t>(m), static_cast<uint8_t>(cnt), mp);
            }
        }
    }

    __aicore__ inline void Unit(uint32_t b, uint32_t oy0, uint32_t nr, uint32_t ox0, uint32_t ntw, uint32_t c0,
                                uint32_t ntc, uint32_t ntcp)
    {
        const bool gatherMode = t_.copyMode == 2;
        const uint32_t accRow = t_.TW * ntcp;   // elements between accumulator rows
        LocalTensor<T> out;
        LocalTensor<T> acc;
        if (gatherMode) {
            acc = accBuf_.Get<T>();
        } else {
            out = outQ_.AllocTensor<T>();
            acc = out;
        }
        LocalTensor<uint16_t> accBits = acc.template ReinterpretCast<uint16_t>();
        Duplicate(accBits, static_cast<uint16_t>(0xFC00), static_cast<int32_t>(nr * accRow));   // -inf

        const int32_t W = static_cast<int32_t>(t_.W);
        const int32_t H = static_cast<int32_t>(t_.H);
        const int32_t sh = static_cast<int32_t>(t_.sh);
        const int32_t rh = static_cast<int32_t>(t_.rh);
        const int32_t ixStart = static_cast<int32_t>(ox0) * static_cast<int32_t>(t_.sw) - t_.pl;
        const int32_t ixEnd = static_cast<int32_t>(ox0 + ntw - 1) * static_cast<int32_t>(t_.sw) - t_.pl +
                              static_cast<int32_t>(t_.fw - 1) * static_cast<int32_t>(t_.rw);
        const int32_t loadLo = ixStart > 0 ? ixStart : 0;
        const int32_t loadHi = ixEnd < W - 1 ? ixEnd : W - 1;
        const int32_t rowBase = static_cast<int32_t>(oy0) * sh - t_.pt;
        const int32_t rowStep = static_cast<int32_t>(t_.step) * sh;   // input rows between unit rows

        // filter rows that fall on padded input rows (or all rows when no column is inside)
        for (uint32_t r = 0; r < nr; ++r) {
            LocalTensor<T> accR = acc[r * accRow];
            for (uint32_t dy = 0; dy < t_.fh; ++dy) {
                const int32_t iy = rowBase + static_cast<int32_t>(r) * rowStep + static_cast<int32_t>(dy) * rh;
                if (iy < 0 || iy >= H || loadLo > loadHi) {
                    for (uint32_t dx = 0; dx < t_.fw; ++dx) {
                        MaxPad(accR, 0, ntw, dy * t_.fw + dx, ntc, ntcp);
                    }
                }
            }
        }
        if (loadLo <= loadHi) {
            const uint32_t ncols = static_cast<uint32_t>(loadHi - loadLo + 1);
            int32_t iyLo = rowBase;
            int32_t iyHi = rowBase + static_cast<int32_t>(nr - 1) * rowStep + static_cast<int32_t>(t_.fh - 1) * rh;
            iyLo = iyLo < 0 ? 0 : iyLo;
            iyHi = iyHi > H - 1 ? H - 1 : iyHi;
            for (int32_t iy = iyLo; iy <= iyHi; ++iy) {
                bool used = false;
                for (uint32_t dy = 0; dy < t_.fh && !used; ++dy) {
                    const int32_t num = iy - rowBase - static_cast<int32_t>(dy) * rh;
                    if (num >= 0 && num % rowStep == 0 && num / rowStep < static_cast<int32_t>(nr)) {
                        used = true;
                    }
                }
                if (!used) {
                    continue;
                }
                LocalTensor<T> in = inQ_.AllocTensor<T>();
                const uint64_t src = ((static_cast<uint64_t>(b) * t_.H + static_cast<uint64_t>(iy)) * t_.W +
                                      static_cast<uint64_t>(loadLo)) * t_.C + c0;
                DataCopyPadExtParams<T> pd{false, 0, 0, 0};
                if (t_.copyMode == 1) {
                    DataCopyExtParams cp{static_cast<uint16_t>(ncols), static_cast<uint32_t>(ntc * sizeof(T)),
                                         static_cast<uint32_t>((t_.C - ntc) * sizeof(T)), 0, 0};
                    DataCopyPad(in, xGm_[src], cp, pd);
                } else {
                    DataCopyExtParams cp{1, static_cast<uint32_t>(ncols * t_.C * sizeof(T)), 0, 0, 0};
                    DataCopyPad(in, xGm_[src], cp, pd);
                }
                inQ_.EnQue(in);
                in = inQ_.DeQue<T>();
                LocalTensor<T> rowT = in;
                if (gatherMode) {
                    LocalTensor<T> relaid = relaidBuf_.Get<T>();
                    LocalTensor<uint32_t> tab = inTabBuf_.Get<uint32_t>();
                    Gather(relaid, in, tab, static_cast<uint32_t>(0), ncols * ntcp);
                    rowT = relaid;
                }
                for (uint32_t dy = 0; dy < t_.fh; ++dy) {
                    const int32_t num = iy - rowBase - static_cast<int32_t>(dy) * rh;
                    if (num < 0 || num % rowStep != 0 || num / rowStep >= static_cast<int32_t>(nr)) {
                        continue;
                    }
                    LocalTensor<T> accR = acc[static_cast<uint32_t>(num / rowStep) * accRow];
                    ApplyRow(accR, rowT, dy, ixStart, loadLo, loadHi, ntw, ntc, ntcp);
                }
                inQ_.FreeTensor(in);
            }
        }

        const uint64_t dst = ((static_cast<uint64_t>(b) * t_.OH + oy0) * t_.OW + ox0) * t_.C + c0;
        if (gatherMode) {
            out = outQ_.AllocTensor<T>();
            LocalTensor<uint32_t> tab = outTabBuf_.Get<uint32_t>();
            for (uint32_t r = 0; r < nr; ++r) {
                LocalTensor<T> o = out[r * t_.outRowStride];
                LocalTensor<T> a = acc[r * accRow];
                Gather(o, a, tab, static_cast<uint32_t>(0), ntw * t_.C);
            }
            outQ_.EnQue(out);
            LocalTensor<T> o = outQ_.DeQue<T>();
            const uint32_t rowBytes = ntw * t_.C * sizeof(T);
            const uint32_t padBytes = (rowBytes + 31) / 32 * 32;
            DataCopyExtParams cpo{static_cast<uint16_t>(nr), rowBytes,
                                  static_cast<uint32_t>((t_.outRowStride * sizeof(T) - padBytes) / 32),
                                  static_cast<uint32_t>((t_.step * t_.OW - ntw) * t_.C * sizeof(T)), 0};
            DataCopyPad(yGm_[dst], o, cpo);
            outQ_.FreeTensor(o);
        } else {
            outQ_.EnQue(out);
            LocalTensor<T> o = outQ_.DeQue<T>();
            if (t_.copyMode == 0) {
                DataCopyExtParams cpo{static_cast<uint16_t>(nr), static_cast<uint32_t>(ntw * t_.C * sizeof(T)),
                                      static_cast<uint32_t>((t_.TW - ntw) * ntcp * sizeof(T) / 32),
                                      static_cast<uint32_t>((t_.step * t_.OW - ntw) * t_.C * sizeof(T)), 0};
                DataCopyPad(yGm_[dst], o, cpo);
            } else {
                for (uint32_t r = 0; r < nr; ++r) {
                    LocalTensor<T> orow = o[r * accRow];
                    DataCopyExtParams cpo{static_cast<uint16_t>(ntw), static_cast<uint32_t>(ntc * sizeof(T)), 0,
                                          static_cast<uint32_t>((t_.C - ntc) * sizeof(T)), 0};
                    DataCopyPad(yGm_[dst + static_cast<uint64_t>(r) * t_.step * t_.OW * t_.C], orow, cpo);
                }
            }
            outQ_.FreeTensor(o);
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> tmpBuf_, filtBuf_, fpadBuf_, accBuf_, relaidBuf_, inTabBuf_, outTabBuf_;
    GlobalTensor<T> xGm_, fGm_, yGm_;
    Dilation2dCustomTilingData t_;
    uint32_t first_ = 0, count_ = 0;
    event_t eMte2V_, eVMte2_;
};

extern "C" __global__ __aicore__ void dilation_2d_custom(GM_ADDR x, GM_ADDR filter, GM_ADDR y, GM_ADDR workspace,
                                                         GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelDilation2d<DTYPE_X> op;
    op.Init(x, filter, y, t);
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

// [1, h, w, 1] -> element i4; a 2-element list [h, w] -> element i2
static int64_t ListAt(const gert::TypedContinuousVector<int64_t>* v, size_t i4, size_t i2, int64_t dflt)
{
    if (v == nullptr) {
        return dflt;
    }
    const size_t n = v->GetSize();
    const int64_t* d = v->GetData();
    if (d == nullptr || n == 0) {
        return dflt;
    }
    if (n >= 4) {
        return d[i4];
    }
    if (n == 2) {
        return d[i2];
    }
    return d[0];
}

static int64_t FloorDiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) {
        --q;
    }
    return q;
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* xShape = context->GetInputShape(0);
    auto* fShape = context->GetInputShape(1);
    if (xShape == nullptr || fShape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& xs = xShape->GetStorageShape();
    const gert::Shape& fs = fShape->GetStorageShape();
    if (xs.GetDimNum() != 4 || fs.GetDimNum() != 3) {
        return ge::GRAPH_FAILED;
    }
    const int64_t N = xs.GetDim(0), H = xs.GetDim(1), W = xs.GetDim(2), C = xs.GetDim(3);
    const int64_t fh = fs.GetDim(0), fw = fs.GetDim(1);

    int64_t sh = 1, sw = 1, rh = 1, rw = 1;
    int64_t pads[4] = {0, 0, 0, 0};
    bool ceilMode = false;
    const char* pm = nullptr;
    auto* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const gert::TypedContinuousVector<int64_t>* st = attrs->GetListInt(0);
        const gert::TypedContinuousVector<int64_t>* rt = attrs->GetListInt(1);
        sh = ListAt(st, 1, 0, 1);
        sw = ListAt(st, 2, 1, 1);
        rh = ListAt(rt, 1, 0, 1);
        rw = ListAt(rt, 2, 1, 1);
        pm = attrs->GetAttrPointer<char>(2);
        const gert::TypedContinuousVector<int64_t>* pv = attrs->GetListInt(3);
        if (pv != nullptr && pv->GetData() != nullptr && pv->GetSize() >= 4) {
            for (int i = 0; i < 4; ++i) {
                pads[i] = pv->GetData()[i];
            }
        }
        const bool* cm = attrs->GetAttrPointer<bool>(4);
        ceilMode = cm != nullptr && *cm;
    }
    sh = sh < 1 ? 1 : sh;
    sw = sw < 1 ? 1 : sw;
    rh = rh < 1 ? 1 : rh;
    rw = rw < 1 ? 1 : rw;
    const int64_t effh = (fh - 1) * rh + 1;
    const int64_t effw = (fw - 1) * rw + 1;
    const int64_t padSum = pads[0] + pads[1] + pads[2] + pads[3];
    int64_t OH = 0, OW = 0, pt = 0, pl = 0;
    if (pm == nullptr || StrEq(pm, "SAME")) {
        OH = (H + sh - 1) / sh;
        OW = (W + sw - 1) / sw;
        int64_t padH = (OH - 1) * sh + effh - H;
        int64_t padW = (OW - 1) * sw + effw - W;
        padH = padH > 0 ? padH : 0;
        padW = padW > 0 ? padW : 0;
        pt = padH / 2;
        pl = padW / 2;
    } else if (StrEq(pm, "VALID")) {
        if (padSum > 0) {
            pt = pads[0];
            pl = pads[2];
        }
        OH = FloorDiv(H - effh + sh, sh);
        OW = FloorDiv(W - effw + sw, sw);
    } else {
        int64_t Hp = H, Wp = W;
        if (padSum > 0) {
            pt = pads[0];
            pl = pads[2];
            Hp += pads[0] + pads[1];
            Wp += pads[2] + pads[3];
        }
        OH = FloorDiv(Hp - effh + sh, sh);
        OW = FloorDiv(Wp - effw + sw, sw);
        if (ceilMode) {
            OH = FloorDiv(Hp - effh + sh - 1, sh) + 1;
            OW = FloorDiv(Wp - effw + sw - 1, sw) + 1;
        }
    }
    // The output buffer's own shape wins when the framework gives one.
    auto* yShape = context->GetOutputShape(0);
    if (yShape != nullptr) {
        const gert::Shape& ys = yShape->GetStorageShape();
        if (ys.GetDimNum() == 4 && ys.GetDim(1) > 0 && ys.GetDim(2) > 0) {
            OH = ys.GetDim(1);
            OW = ys.GetDim(2);
        }
    }
    OH = OH > 0 ? OH : 0;
    OW = OW > 0 ? OW : 0;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t cores = plat.GetCoreNumAiv();
    if (cores == 0) {
        cores = 1;
    }
    uint64_t usable = ub < 188160 ? ub : 188160;
    usable = usable > 4096 ? usable - 1024 : usable;

    const int64_t taps = fh * fw;
    auto gcd = [](int64_t a, int64_t b) -> int64_t {
        while (b != 0) {
            const int64_t t = a % b;
            a = b;
            b = t;
        }
        return a;
    };
    const int64_t step = rh / gcd(rh, sh);   // rows oy, oy + step, ... share input rows
    auto r32 = [](uint64_t v) -> uint64_t { return (v + 31) / 32 * 32; };

    // channel block candidates: the whole C (when it fits the 8-bit repeat strides and the filter
    // budget) and 256-channel blocks (512-B copy rows)
    int64_t tcMax = (255 * 16 / sw) / 16 * 16;
    tcMax = tcMax < 512 ? tcMax : 512;
    int64_t tcFilt = (32768 / (taps * 2)) / 16 * 16;
    tcFilt = tcFilt < 16 ? 16 : tcFilt;
    tcMax = tcMax < tcFilt ? tcMax : tcFilt;
    tcMax = tcMax < 16 ? 16 : tcMax;
    int64_t tcCand[2];
    int nTc = 0;
    {
        int64_t ncb0 = (C + tcMax - 1) / tcMax;
        ncb0 = ncb0 < 1 ? 1 : ncb0;
        int64_t tc0 = (C + ncb0 - 1) / ncb0;
        tc0 = (tc0 + 15) / 16 * 16;
        if (tc0 >= C) {
            tc0 = C;
        }
        tcCand[nTc++] = tc0;
        if (C > 256 && tcMax >= 256 && tc0 != 256) {
            tcCand[nTc++] = 256;
        }
    }

    // distinct input rows of a unit of r rows: k * step * sh + dy * rh (k < r, dy < fh)
    int64_t rowsFor[33] = {0};
    for (int64_t r = 1; r <= 32; ++r) {
        const int64_t span = (r - 1) * step * sh + (fh - 1) * rh + 1;
        int64_t cnt = 0;
        for (int64_t v = 0; v < span; ++v) {
            bool used = false;
            for (int64_t dy = 0; dy < fh && !used; ++dy) {
                const int64_t num = v - dy * rh;
                if (num >= 0 && num % (step * sh) == 0 && num / (step * sh) < r) {
                    used = true;
                }
            }
            cnt += used ? 1 : 0;
        }
        rowsFor[r] = cnt;
    }
    int64_t bestTw = 0, bestR = 1, bestNix = 1, bestTc = tcCand[0];
    uint32_t bestMode = 1;
    double bestCost = 1e300;
    for (int ti = 0; ti < nTc; ++ti) {
        const int64_t TCc = tcCand[ti];
        const int64_t ncbc = (C + TCc - 1) / TCc;
        const int64_t tcpc = (TCc + 15) / 16 * 16;
        for (int attempt = 0; attempt < 2; ++attempt) {
            uint32_t mode = (ncbc == 1) ? ((C % 16 == 0) ? 0 : 2) : 1;
            if (attempt == 1) {
                if (mode != 2) {
                    break;
                }
                mode = 1;   // per-column copies instead of the gather re-layout
            }
            const double colBytes = mode == 1 ? (TCc * 2 < 512 ? 512.0 : TCc * 2.0) : static_cast<double>(TCc * 2);
            const int64_t chunks = (TCc + 127) / 128;
            const int64_t twMax = OW < 255 ? (OW < 1 ? 1 : OW) : 255;
            for (int64_t tw = twMax; tw >= 1; --tw) {
                for (int64_t r = 1; r <= 32; ++r) {
                    if ((r - 1) * step >= OH && r > 1) {
                        break;
                    }
                    int64_t nix = (tw - 1) * sw + (fw - 1) * rw + 1;
                    nix = nix < W ? nix : W;
                    nix = nix < 1 ? 1 : nix;
                    uint64_t bytes = 2 * r32(nix * tcpc * 2) + r32(tw * tcpc * 2) + 2 * r32(taps * tcpc * 2);
                    if (mode == 2) {
                        const uint64_t relaid = nix * tcpc * 2 > tcpc * 4 ? nix * tcpc * 2 : tcpc * 4;
                        const uint64_t inTab = nix * tcpc * 4 > tw * C * 4 ? nix * tcpc * 4 : tw * C * 4;
                        const uint64_t ors = (tw * C + 15) / 16 * 16;
                        bytes += r32(relaid) + r32(inTab) + r32(tw * C * 4) + r32(r * tw * tcpc * 2) + r32(r * ors * 2);
                    } else {
                        bytes += 2 * r32(r * tw * tcpc * 2);
                    }
                    if (bytes > usable) {
                        break;
                    }
                    if (mode == 2 && (nix * C * 2 > 131040 || tw * tcpc * 2 > 131040)) {
                        break;
                    }
                    int64_t rowsLoaded = rowsFor[r];
                    rowsLoaded = rowsLoaded < H ? rowsLoaded : H;
                    const int64_t rbq = ((OH + step - 1) / step + r - 1) / r;
                    const int64_t units = ncbc * N * step * rbq * ((OW + tw - 1) / tw);
                    const double inB = rowsLoaded * nix * colBytes;
                    const double outB = r * tw * (mode == 1 ? colBytes : TCc * 2.0);
                    const double copies = rowsLoaded + (mode == 1 ? r : 1);
                    const double mem = (inB + outB) / 40000.0 + copies * 0.12;   // us, ~40 GB/s per core
                    double vec = r * fh * fw * 2.0 * chunks * (7.6 + tw) / 1850.0;
                    if (mode == 2) {
                        vec += rowsLoaded * 2.0 * (7.6 + nix * tcpc / 128.0) / 1850.0 +
                               r * 2.0 * (7.6 + tw * C / 128.0) / 1850.0;
                    }
                    const double unitTime = mem > vec ? mem : vec;
                    const double rounds = static_cast<double>((units + static_cast<int64_t>(cores) - 1) /
                                                              static_cast<int64_t>(cores));
                    const double cost = rounds * unitTime;
                    if (cost < bestCost) {
                        bestCost = cost;
                        bestTw = tw;
                        bestR = r;
                        bestNix = nix;
                        bestTc = TCc;
                        bestMode = mode;
                    }
                }
            }
        }
    }
    if (bestTw == 0) {
        return ge::GRAPH_FAILED;
    }
    const int64_t TC = bestTc;
    const int64_t ncb = (C + TC - 1) / TC;
    const int64_t tcp = (TC + 15) / 16 * 16;
    const uint32_t copyMode = bestMode;
    const int64_t TW = bestTw;
    const int64_t R = bestR;
    const int64_t nIx = bestNix;
    const int64_t twb = OW == 0 ? 0 : (OW + TW - 1) / TW;
    const int64_t rbq = OH == 0 ? 0 : ((OH + step - 1) / step + R - 1) / R;
    const int64_t rb = step * rbq;
    const int64_t units = ncb * N * rb * twb;
    uint64_t blockDim = static_cast<uint64_t>(units) < cores ? static_cast<uint64_t>(units) : cores;
    blockDim = blockDim == 0 ? 1 : blockDim;

    Dilation2dCustomTilingData* t = context->GetTilingData<Dilation2dCustomTilingData>();
    t->N = static_cast<uint32_t>(N);
    t->H = static_cast<uint32_t>(H);
    t->W = static_cast<uint32_t>(W);
    t->C = static_cast<uint32_t>(C);
    t->fh = static_cast<uint32_t>(fh);
    t->fw = static_cast<uint32_t>(fw);
    t->sh = static_cast<uint32_t>(sh);
    t->sw = static_cast<uint32_t>(sw);
    t->rh = static_cast<uint32_t>(rh);
    t->rw = static_cast<uint32_t>(rw);
    t->pt = static_cast<int32_t>(pt);
    t->pl = static_cast<int32_t>(pl);
    t->OH = static_cast<uint32_t>(OH);
    t->OW = static_cast<uint32_t>(OW);
    t->TC = static_cast<uint32_t>(TC);
    t->ncb = static_cast<uint32_t>(ncb);
    t->TW = static_cast<uint32_t>(TW);
    t->twb = static_cast<uint32_t>(twb);
    t->R = static_cast<uint32_t>(R);
    t->rb = static_cast<uint32_t>(rb);
    t->step = static_cast<uint32_t>(step);
    t->rbq = static_cast<uint32_t>(rbq);
    t->nIx = static_cast<uint32_t>(nIx);
    t->copyMode = copyMode;
    t->inBytes = static_cast<uint32_t>(r32(nIx * tcp * 2));
    if (copyMode == 2) {
        const uint64_t relaid = nIx * tcp * 2 > tcp * 4 ? nIx * tcp * 2 : tcp * 4;
        const uint64_t inTab = nIx * tcp * 4 > TW * C * 4 ? nIx * tcp * 4 : TW * C * 4;
        const uint64_t ors = (TW * C + 15) / 16 * 16;
        t->relaidBytes = static_cast<uint32_t>(r32(relaid));
        t->inTabBytes = static_cast<uint32_t>(r32(inTab));
        t->outTabBytes = static_cast<uint32_t>(r32(TW * C * 4));
        t->accBytes = static_cast<uint32_t>(r32(R * TW * tcp * 2));
        t->outRowStride = static_cast<uint32_t>(ors);
        t->outBytes = static_cast<uint32_t>(r32(R * ors * 2));
    } else {
        t->relaidBytes = 0;
        t->inTabBytes = 0;
        t->outTabBytes = 0;
        t->accBytes = 0;
        t->outRowStride = 0;
        t->outBytes = static_cast<uint32_t>(r32(R * TW * tcp * 2));
    }
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(static_cast<uint64_t>(units) % blockDim);
    t->formerUnits = static_cast<uint32_t>(static_cast<uint64_t>(units) / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(static_cast<uint64_t>(units) / blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (dilation_2d).
class Dilation2dCustom : public OpDef {
public:
    explicit Dilation2dCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("filter")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Attr("strides").AttrType(REQUIRED).ListInt();
        this->Attr("rates").AttrType(REQUIRED).ListInt();
        this->Attr("padding_mode").AttrType(OPTIONAL).String("SAME");
        this->Attr("pads").AttrType(OPTIONAL).ListInt({0, 0, 0, 0});
        this->Attr("ceil_mode").AttrType(OPTIONAL).Bool(false);
        this->Attr("data_format").AttrType(OPTIONAL).String("NHWC");
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(Dilation2dCustom);
}  // namespace ops
