#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t GATHER_MAX_DIMS = 8;
constexpr uint32_t GATHER_VEC_CHUNK = 2048;     // output elements per vector tile
constexpr uint32_t GATHER_XROW_BYTES = 131072;  // UB bytes for the x rows of one vector tile
constexpr uint32_t GATHER_SCALAR_TILE = 4096;   // output elements per scalar tile
constexpr uint32_t GATHER_SLAB_BYTES = 98304;   // UB bytes for one window of x rows (slab mode)
constexpr uint32_t GATHER_SLAB_TILE = 2048;     // output elements per slab-mode tile

struct GatherCustomTilingData {
    uint64_t mode;          // 1: vector Gather from UB rows, 2: slab windows, 0: scalar gather from GM
    uint64_t ndim;          // collapsed dims
    uint64_t gpos;          // position of the gather dim among the collapsed dims
    uint64_t total;         // output (index) elements
    uint64_t xTotal;        // x elements
    uint64_t items;         // work items (scalar: elements; vector: rows or row chunks)
    uint64_t itemsPerCore;
    uint64_t ki;            // index size along the gather dim
    uint64_t kx;            // x size along the gather dim
    uint64_t rowsPerBlock;  // vector mode: rows per tile (>1: block mode)
    uint64_t chunks;        // vector row mode: chunks per row
    uint64_t pitch;         // vector mode: UB bytes per x row (32-B padded)
    uint64_t rowStride;     // vector block mode: x elements between consecutive rows
    uint64_t ri;            // slab mode: index size of the contiguous inner dim
    uint64_t cw;            // slab mode: inner columns per unit (power of 2)
    uint64_t win;           // slab mode: x rows (along the gather dim) per UB window
    uint64_t nwin;          // slab mode: windows along the gather dim
    uint64_t sUnits;        // scalar mode: 32-element units per core (former cores take one more)
    uint64_t sFormer;       // scalar mode: cores taking sUnits + 1 units
    uint64_t shape[GATHER_MAX_DIMS];   // collapsed index shape
    uint64_t stride[GATHER_MAX_DIMS];  // x element stride of each collapsed dim
};
REGISTER_TILING_DEFAULT(GatherCustomTilingData);

using namespace AscendC;

template <int N> struct GatherRaw { using T = uint8_t; };
template <> struct GatherRaw<2> { using T = uint16_t; };
template <> struct GatherRaw<4> { using T = uint32_t; };
template <> struct GatherRaw<8> { using T = uint64_t; };

// ---------------------------------------------------------------------------------------------
// Scalar path: any dtype, any dim. Index tiles are staged in UB, values read from GM one by one.
// ---------------------------------------------------------------------------------------------
template <typename T, typename TI>
class GatherScalar {
public:
    __aicore__ inline GatherScalar() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherCustomTilingData& t)
    {
        const uint64_t blk = static_cast<uint64_t>(GetBlockIdx());
        // former / tail split in 32-element units: the first sFormer cores take one unit more
        if (blk < t.sFormer) {
            start_ = blk * (t.sUnits + 1) * 32;
            len_ = (t.sUnits + 1) * 32;
        } else {
            start_ = (t.sFormer * (t.sUnits + 1) + (blk - t.sFormer) * t.sUnits) * 32;
            len_ = t.sUnits * 32;
        }
        if (start_ >= t.total) {
            len_ = 0;
            return;
        }
        if (start_ + len_ > t.total) {
            len_ = t.total - start_;
        }
        nd_ = static_cast<uint32_t>(t.ndim);
        g_ = static_cast<uint32_t>(t.gpos);
        for (uint32_t d = 0; d < GATHER_MAX_DIMS; ++d) {
            shape_[d] = t.shape[d];
            stride_[d] = t.stride[d];
        }
        xGm_.SetGlobalBuffer((__gm__ T*)x, t.xTotal);
        idxGm_.SetGlobalBuffer((__gm__ TI*)index + start_, len_);
        yGm_.SetGlobalBuffer((__gm__ T*)y + start_, len_);
        pipe_.InitBuffer(idxBuf_, GATHER_SCALAR_TILE * sizeof(TI));
        pipe_.InitBuffer(outBuf_, GATHER_SCALAR_TILE * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        if (len_ == 0) {
            return;
        }
        uint64_t c[GATHER_MAX_DIMS];
        uint64_t base = 0;
        uint64_t rem = start_;
        for (int32_t d = static_cast<int32_t>(nd_) - 1; d >= 0; --d) {
            c[d] = rem % shape_[d];
            rem = rem / shape_[d];
            if (static_cast<uint32_t>(d) != g_) {
                base += c[d] * stride_[d];
            }
        }
        const uint64_t gs = stride_[g_];
        const int32_t last = static_cast<int32_t>(nd_) - 1;

        LocalTensor<TI> idxL = idxBuf_.Get<TI>();
        LocalTensor<T> outL = outBuf_.Get<T>();
        event_t eMte2S = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        event_t eSMte3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE3));
        event_t eMte3S = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_S));
        event_t eSMte2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE2));

        // equal tiles inside the core's slice (multiples of 32 elements, at most GATHER_SCALAR_TILE): no short
        // last tile paying a full tile's copy and flag overhead
        const uint64_t tiles = (len_ + GATHER_SCALAR_TILE - 1) / GATHER_SCALAR_TILE;
        uint64_t per = (len_ + tiles - 1) / tiles;
        per = (per + 31) / 32 * 32;
        if (per > GATHER_SCALAR_TILE) {
            per = GATHER_SCALAR_TILE;
        }
        const uint64_t nt = (len_ + per - 1) / per;
        for (uint64_t i = 0; i < nt; ++i) {
            const uint32_t n = (i + 1 < nt) ? static_cast<uint32_t>(per)
                                            : static_cast<uint32_t>(len_ - i * per);
            if (i > 0) {
                SetFlag<HardEvent::S_MTE2>(eSMte2);
                WaitFlag<HardEvent::S_MTE2>(eSMte2);
            }
            DataCopyExtParams cpIn{1, static_cast<uint32_t>(n * sizeof(TI)), 0, 0, 0};
            DataCopyPadExtParams<TI> padI{false, 0, 0, 0};
            DataCopyPad(idxL, idxGm_[i * per], cpIn, padI);
            SetFlag<HardEvent::MTE2_S>(eMte2S);
            WaitFlag<HardEvent::MTE2_S>(eMte2S);

            for (uint32_t k = 0; k < n; ++k) {
                const int64_t iv = static_cast<int64_t>(idxL.GetValue(k));
                const uint64_t src = base + static_cast<uint64_t>(iv) * gs;
                outL.SetValue(k, xGm_.GetValue(src));
                // advance the odometer over the collapsed index shape
                int32_t d = last;
                while (true) {
                    c[d] += 1;
                    if (static_cast<uint32_t>(d) != g_) {
                        base += stride_[d];
                    }
                    if (c[d] < shape_[d] || d == 0) {
                        break;
                    }
                    if (static_cast<uint32_t>(d) != g_) {
                        base -= shape_[d] * stride_[d];
                    }
                    c[d] = 0;
                    --d;
                }
            }

            SetFlag<HardEvent::S_MTE3>(eSMte3);
            WaitFlag<HardEvent::S_MTE3>(eSMte3);
            DataCopyExtParams cpOut{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[i * per], outL, cpOut);
            SetFlag<HardEvent::MTE3_S>(eMte3S);
            WaitFlag<HardEvent::MTE3_S>(eMte3S);
        }
    }

private:
    TPipe pipe_;
    TBuf<TPosition::VECCALC> idxBuf_;
    TBuf<TPosition::VECCALC> outBuf_;
    GlobalTensor<T> xGm_;
    GlobalTensor<TI> idxGm_;
    GlobalTensor<T> yGm_;
    uint64_t shape_[GATHER_MAX_DIMS];
    uint64_t stride_[GATHER_MAX_DIMS];
    uint64_t start_ = 0;
    uint64_t len_ = 0;
    uint32_t nd_ = 1;
    uint32_t g_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Vector path: gather dim is the contiguous last dim of x, 16/32-bit data, x rows fit in UB.
// x rows are loaded into UB, indices converted to byte offsets, then vector Gather.
// ---------------------------------------------------------------------------------------------
template <typename T, typename TI>
class GatherVector {
public:
    __aicore__ inline GatherVector() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherCustomTilingData& t)
    {
        const uint64_t blk = static_cast<uint64_t>(GetBlockIdx());
        itemStart_ = blk * t.itemsPerCore;
        itemEnd_ = itemStart_;
        if (itemStart_ >= t.items) {
            return;
        }
        itemEnd_ = itemStart_ + t.itemsPerCore;
        if (itemEnd_ > t.items) {
            itemEnd_ = t.items;
        }
        nd_ = static_cast<uint32_t>(t.ndim);
        g_ = static_cast<uint32_t>(t.gpos);
        for (uint32_t d = 0; d < GATHER_MAX_DIMS; ++d) {
            shape_[d] = t.shape[d];
            stride_[d] = t.stride[d];
        }
        ki_ = t.ki;
        kx_ = t.kx;
        rows_ = t.rowsPerBlock;
        chunks_ = t.chunks;
        pitch_ = t.pitch;
        rowStride_ = t.rowStride;
        xGm_.SetGlobalBuffer((__gm__ T*)x, t.xTotal);
        idxGm_.SetGlobalBuffer((__gm__ TI*)index, t.total);
        yGm_.SetGlobalBuffer((__gm__ T*)y, t.total);
        pipe_.InitBuffer(xQ_, 1, GATHER_XROW_BYTES);
        pipe_.InitBuffer(idxQ_, 1, GATHER_VEC_CHUNK * sizeof(TI));
        pipe_.InitBuffer(outQ_, 1, GATHER_VEC_CHUNK * sizeof(T));
        pipe_.InitBuffer(offBuf_, GATHER_VEC_CHUNK * sizeof(int32_t));
        pipe_.InitBuffer(tmpBuf_, GATHER_VEC_CHUNK * sizeof(half));
        if (rows_ > 1) {
            pipe_.InitBuffer(rowBaseBuf_, GATHER_VEC_CHUNK * sizeof(int32_t));
            LocalTensor<int32_t> rb = rowBaseBuf_.Get<int32_t>();
            uint32_t k = 0;
            for (uint64_t r = 0; r < rows_; ++r) {
                const int32_t v = static_cast<int32_t>(r * pitch_);
                for (uint64_t j = 0; j < ki_; ++j) {
                    rb.SetValue(k, v);
                    ++k;
                }
            }
            event_t eSV = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
            SetFlag<HardEvent::S_V>(eSV);
            WaitFlag<HardEvent::S_V>(eSV);
        }
    }

    __aicore__ inline void Process()
    {
        if (itemStart_ >= itemEnd_) {
            return;
        }
        if (rows_ > 1) {
            ProcessBlocks();
        } else {
            ProcessRows();
        }
    }

private:
    __aicore__ inline void ProcessBlocks()
    {
        for (uint64_t r0 = itemStart_; r0 < itemEnd_; r0 += rows_) {
            uint64_t nr = itemEnd_ - r0;
            if (nr > rows_) {
                nr = rows_;
            }
            const uint32_t n = static_cast<uint32_t>(nr * ki_);
            // x rows -> UB (each row padded to 32 B)
            LocalTensor<T> xl = xQ_.AllocTensor<T>();
            DataCopyExtParams xp{static_cast<uint16_t>(nr), static_cast<uint32_t>(kx_ * sizeof(T)),
                                 static_cast<uint32_t>((rowStride_ - kx_) * sizeof(T)), 0, 0};
            DataCopyPadExtParams<T> padT{false, 0, 0, 0};
            DataCopyPad(xl, xGm_[r0 * rowStride_], xp, padT);
            xQ_.EnQue(xl);
            // index -> UB
            CopyIndexIn(r0 * ki_, n);
            xl = xQ_.DeQue<T>();
            LocalTensor<int32_t> offL = offBuf_.Get<int32_t>();
            ComputeOffsets(offL, n);
            LocalTensor<int32_t> rb = rowBaseBuf_.Get<int32_t>();
            Add(offL, offL, rb, static_cast<int32_t>(n));
            GatherOut(xl, offL, r0 * ki_, n);
            xQ_.FreeTensor(xl);
        }
    }

    __aicore__ inline void ProcessRows()
    {
        uint64_t loadedRow = 0;
        bool held = false;
        LocalTensor<T> xl;
        for (uint64_t it = itemStart_; it < itemEnd_; ++it) {
            const uint64_t row = it / chunks_;
            const uint64_t ch = it - row * chunks_;
            if (!held || row != loadedRow) {
                if (held) {
                    xQ_.FreeTensor(xl);
                }
                xl = xQ_.AllocTensor<T>();
                DataCopyExtParams xp{1, static_cast<uint32_t>(kx_ * sizeof(T)), 0, 0, 0};
                DataCopyPadExtParams<T> padT{false, 0, 0, 0};
                DataCopyPad(xl, xGm_[RowXOffset(row)], xp, padT);
                xQ_.EnQue(xl);
                xl = xQ_.DeQue<T>();
                held = true;
                loadedRow = row;
            }
            uint64_t n64 = ki_ - ch * GATHER_VEC_CHUNK;
            if (n64 > GATHER_VEC_CHUNK) {
                n64 = GATHER_VEC_CHUNK;
            }
            const uint32_t n = static_cast<uint32_t>(n64);
            const uint64_t off = row * ki_ + ch * GATHER_VEC_CHUNK;
            CopyIndexIn(off, n);
            LocalTensor<int32_t> offL = offBuf_.Get<int32_t>();
            ComputeOffsets(offL, n);
            GatherOut(xl, offL, off, n);
        }
        if (held) {
            xQ_.FreeTensor(xl);
        }
    }

    __aicore__ inline uint64_t RowXOffset(uint64_t row)
    {
        uint64_t off = 0;
        uint64_t rem = row;
        for (int32_t d = static_cast<int32_t>(g_) - 1; d >= 0; --d) {
            const uint64_t cd = rem % shape_[d];
            rem = rem / shape_[d];
            off += cd * stride_[d];
        }
        return off;
    }

    __aicore__ inline void CopyIndexIn(uint64_t off, uint32_t n)
    {
        LocalTensor<TI> il = idxQ_.AllocTensor<TI>();
        DataCopyExtParams ip{1, static_cast<uint32_t>(n * sizeof(TI)), 0, 0, 0};
        DataCopyPadExtParams<TI> padI{false, 0, 0, 0};
        DataCopyPad(il, idxGm_[off], ip, padI);
        idxQ_.EnQue(il);
    }

    // index tile (in idxQ_) -> byte offsets into the UB x rows (int32), frees the index tile
    __aicore__ inline void ComputeOffsets(LocalTensor<int32_t>& offL, uint32_t n)
    {
        LocalTensor<TI> il = idxQ_.DeQue<TI>();
        const int32_t cnt = static_cast<int32_t>(n);
        const int32_t elemBytes = static_cast<int32_t>(sizeof(T));
        if constexpr (sizeof(TI) == 4) {
            Muls(offL, il, elemBytes, cnt);
        } else if constexpr (sizeof(TI) == 8) {
            // low 32-bit words of the int64 indices (little endian, values < 2^31)
            LocalTensor<uint32_t> src = il.template ReinterpretCast<uint32_t>();
            LocalTensor<uint32_t> dst = offL.template ReinterpretCast<uint32_t>();
            uint64_t rsvdCnt = 0;
            const uint16_t rep = static_cast<uint16_t>((n + 31) / 32);
            GatherMaskParams gmp{static_cast<uint8_t>(1), rep, static_cast<uint16_t>(8), static_cast<uint8_t>(0)};
            GatherMask<uint32_t>(dst, src, static_cast<uint8_t>(1), false, static_cast<uint32_t>(0), gmp, rsvdCnt);
            Muls(offL, offL, elemBytes, cnt);
        } else {
            LocalTensor<half> h = tmpBuf_.Get<half>();
            Cast(h, il, RoundMode::CAST_NONE, n);
            Cast(offL, h, RoundMode::CAST_RINT, n);
            Muls(offL, offL, elemBytes, cnt);
        }
        idxQ_.FreeTensor(il);
    }

    __aicore__ inline void GatherOut(LocalTensor<T>& xl, LocalTensor<int32_t>& offL, uint64_t off, uint32_t n)
    {
        LocalTensor<T> ol = outQ_.AllocTensor<T>();
        LocalTensor<uint32_t> offU = offL.template ReinterpretCast<uint32_t>();
        Gather(ol, xl, offU, static_cast<uint32_t>(0), n);
        outQ_.EnQue(ol);
        ol = outQ_.DeQue<T>();
        DataCopyExtParams op{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[off], ol, op);
        outQ_.FreeTensor(ol);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> xQ_;
    TQue<TPosition::VECIN, 1> idxQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> offBuf_;
    TBuf<TPosition::VECCALC> tmpBuf_;
    TBuf<TPosition::VECCALC> rowBaseBuf_;
    GlobalTensor<T> xGm_;
    GlobalTensor<TI> idxGm_;
    GlobalTensor<T> yGm_;
    uint64_t shape_[GATHER_MAX_DIMS];
    uint64_t stride_[GATHER_MAX_DIMS];
    uint64_t itemStart_ = 0;
    uint64_t itemEnd_ = 0;
    uint64_t ki_ = 1;
    uint64_t kx_ = 1;
    uint64_t rows_ = 1;
    uint64_t chunks_ = 1;
    uint64_t pitch_ = 32;
    uint64_t rowStride_ = 1;
    uint32_t nd_ = 1;
    uint32_t g_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Slab path: layout [outer..., K (gather), R (contiguous)], 16/32-bit data. A unit is one outer
// position and a chunk of cw inner columns. The x slab x[o, k0:k0+wn, r0:r0+cw] is loaded into UB
// (one 32-B aligned row of cw elements per k), indices become byte offsets into it and a vector
// Gather collects the values. When K needs several windows, later windows re-read the y tile and
// Gather from [slab | previous y tile] so lanes outside the window keep their value.
// ---------------------------------------------------------------------------------------------
template <typename T, typename TI>
class GatherSlab {
public:
    __aicore__ inline GatherSlab() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherCustomTilingData& t)
    {
        const uint64_t blk = static_cast<uint64_t>(GetBlockIdx());
        uStart_ = blk * t.itemsPerCore;
        uEnd_ = uStart_;
        if (uStart_ >= t.items) {
            return;
        }
        uEnd_ = uStart_ + t.itemsPerCore;
        if (uEnd_ > t.items) {
            uEnd_ = t.items;
        }
        g_ = static_cast<uint32_t>(t.gpos);
        for (uint32_t d = 0; d < GATHER_MAX_DIMS; ++d) {
            shape_[d] = t.shape[d];
            stride_[d] = t.stride[d];
        }
        ki_ = t.ki;
        kx_ = t.kx;
        ri_ = t.ri;
        cw_ = static_cast<uint32_t>(t.cw);
        win_ = t.win;
        nwin_ = t.nwin;
        nchunk_ = t.chunks;
        gs_ = t.stride[g_];
        jt_ = GATHER_SLAB_TILE / cw_;
        xGm_.SetGlobalBuffer((__gm__ T*)x, t.xTotal);
        idxGm_.SetGlobalBuffer((__gm__ TI*)index, t.total);
        yGm_.SetGlobalBuffer((__gm__ T*)y, t.total);
        pipe_.InitBuffer(srcBuf_, GATHER_SLAB_BYTES + GATHER_SLAB_TILE * sizeof(T));
        pipe_.InitBuffer(idxBuf_, GATHER_SLAB_TILE * sizeof(TI));
        pipe_.InitBuffer(offBuf_, GATHER_SLAB_TILE * sizeof(int32_t));
        pipe_.InitBuffer(relBuf_, GATHER_SLAB_TILE * sizeof(int32_t));
        pipe_.InitBuffer(tmpBuf_, GATHER_SLAB_TILE * sizeof(int32_t));
        pipe_.InitBuffer(colBuf_, GATHER_SLAB_TILE * sizeof(int32_t));
        pipe_.InitBuffer(laneBuf_, GATHER_SLAB_TILE * sizeof(int32_t));
        pipe_.InitBuffer(outBuf_, GATHER_SLAB_TILE * sizeof(T));

        // col[k] = (k % cw) * sizeof(T); lane[k] = SLAB_BYTES + k * sizeof(T)
        LocalTensor<int32_t> col = colBuf_.Get<int32_t>();
        LocalTensor<int32_t> lane = laneBuf_.Get<int32_t>();
        for (uint32_t k = 0; k < cw_; ++k) {
            col.SetValue(k, static_cast<int32_t>(k * sizeof(T)));
        }
        for (uint32_t k = 0; k < 8; ++k) {
            lane.SetValue(k, static_cast<int32_t>(GATHER_SLAB_BYTES + k * sizeof(T)));
        }
        event_t eSV = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        SetFlag<HardEvent::S_V>(eSV);
        WaitFlag<HardEvent::S_V>(eSV);
        for (uint32_t len = cw_; len < GATHER_SLAB_TILE; len *= 2) {
            LocalTensor<int32_t> d = col[len];
            Adds(d, col, static_cast<int32_t>(0), static_cast<int32_t>(len));
        }
        for (uint32_t len = 8; len < GATHER_SLAB_TILE; len *= 2) {
            LocalTensor<int32_t> d = lane[len];
            Adds(d, lane, static_cast<int32_t>(len * sizeof(T)), static_cast<int32_t>(len));
        }
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
        event_t eM32 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_MTE2));

        LocalTensor<T> src = srcBuf_.Get<T>();
        LocalTensor<T> prev = src[GATHER_SLAB_BYTES / sizeof(T)];
        LocalTensor<TI> il = idxBuf_.Get<TI>();
        LocalTensor<int32_t> off = offBuf_.Get<int32_t>();
        LocalTensor<int32_t> rel = relBuf_.Get<int32_t>();
        LocalTensor<int32_t> tmp = tmpBuf_.Get<int32_t>();
        LocalTensor<int32_t> col = colBuf_.Get<int32_t>();
        LocalTensor<int32_t> lane = laneBuf_.Get<int32_t>();
        LocalTensor<T> out = outBuf_.Get<T>();
        LocalTensor<uint32_t> offU = off.template ReinterpretCast<uint32_t>();
        DataCopyPadExtParams<T> padT{false, 0, 0, 0};
        DataCopyPadExtParams<TI> padI{false, 0, 0, 0};

        const uint64_t sz = sizeof(T);
        const uint64_t szI = sizeof(TI);
        const uint32_t pitch = static_cast<uint32_t>(cw_ * sz);
        const uint32_t idxPitch = static_cast<uint32_t>(cw_ * szI);

        for (uint64_t u = uStart_; u < uEnd_; ++u) {
            const uint64_t o = u / nchunk_;
            const uint64_t ch = u - o * nchunk_;
            const uint64_t r0 = ch * cw_;
            uint64_t cc = ri_ - r0;
            if (cc > cw_) {
                cc = cw_;
            }
            const uint64_t xBase = OuterXOffset(o) + r0;
            const uint64_t iBase = o * ki_ * ri_ + r0;
            const uint32_t dataGap = static_cast<uint32_t>((pitch - (cc * sz + 31) / 32 * 32) / 32);
            const uint32_t idxGap = static_cast<uint32_t>((idxPitch - (cc * szI + 31) / 32 * 32) / 32);
            for (uint64_t w = 0; w < nwin_; ++w) {
                const uint64_t k0 = w * win_;
                uint64_t wn = kx_ - k0;
                if (wn > win_) {
                    wn = win_;
                }
                SetFlag<HardEvent::V_MTE2>(eV2);
                WaitFlag<HardEvent::V_MTE2>(eV2);
                DataCopyExtParams sp{static_cast<uint16_t>(wn), static_cast<uint32_t>(cc * sz),
                                     static_cast<uint32_t>((gs_ - cc) * sz), dataGap, 0};
                DataCopyPad(src, xGm_[xBase + k0 * gs_], sp, padT);
                for (uint64_t j0 = 0; j0 < ki_; j0 += jt_) {
                    uint64_t jn = ki_ - j0;
                    if (jn > jt_) {
                        jn = jt_;
                    }
                    const uint32_t n = static_cast<uint32_t>(jn * cw_);
                    const int32_t cnt = static_cast<int32_t>(n);
                    const uint64_t tOff = iBase + j0 * ri_;
                    if (j0 > 0) {
                        SetFlag<HardEvent::V_MTE2>(eV2);
                        WaitFlag<HardEvent::V_MTE2>(eV2);
                    }
                    if (w > 0) {
                        SetFlag<HardEvent::MTE3_MTE2>(eM32);
                        WaitFlag<HardEvent::MTE3_MTE2>(eM32);
                        DataCopyExtParams pp{static_cast<uint16_t>(jn), static_cast<uint32_t>(cc * sz),
                                             static_cast<uint32_t>((ri_ - cc) * sz), dataGap, 0};
                        DataCopyPad(prev, yGm_[tOff], pp, padT);
                    }
                    DataCopyExtParams ip{static_cast<uint16_t>(jn), static_cast<uint32_t>(cc * szI),
                                         static_cast<uint32_t>((ri_ - cc) * szI), idxGap, 0};
                    DataCopyPad(il, idxGm_[tOff], ip, padI);
                    SetFlag<HardEvent::MTE2_V>(eM2V);
                    WaitFlag<HardEvent::MTE2_V>(eM2V);

                    ToInt32(rel, il, tmp, n);
                    Adds(rel, rel, static_cast<int32_t>(-static_cast<int64_t>(k0)), cnt);
                    Maxs(off, rel, static_cast<int32_t>(0), cnt);
                    Mins(off, off, static_cast<int32_t>(wn - 1), cnt);
                    Muls(off, off, static_cast<int32_t>(pitch), cnt);
                    Add(off, off, col, cnt);
                    if (w > 0) {
                        // valid = (rel >= 0) * (rel < wn), as 0/1 integers
                        Adds(tmp, rel, static_cast<int32_t>(1), cnt);
                        Maxs(tmp, tmp, static_cast<int32_t>(0), cnt);
                        Mins(tmp, tmp, static_cast<int32_t>(1), cnt);
                        Muls(rel, rel, static_cast<int32_t>(-1), cnt);
                        Adds(rel, rel, static_cast<int32_t>(wn), cnt);
                        Maxs(rel, rel, static_cast<int32_t>(0), cnt);
                        Mins(rel, rel, static_cast<int32_t>(1), cnt);
                        Mul(tmp, tmp, rel, cnt);
                        // off = lane + valid * (slabOff - lane): invalid lanes read their previous value
                        Sub(off, off, lane, cnt);
                        Mul(off, off, tmp, cnt);
                        Add(off, off, lane, cnt);
                    }
                    SetFlag<HardEvent::MTE3_V>(eM3V);
                    WaitFlag<HardEvent::MTE3_V>(eM3V);
                    Gather(out, src, offU, static_cast<uint32_t>(0), n);
                    SetFlag<HardEvent::V_MTE3>(eV3);
                    WaitFlag<HardEvent::V_MTE3>(eV3);
                    DataCopyExtParams op{static_cast<uint16_t>(jn), static_cast<uint32_t>(cc * sz), dataGap,
                                         static_cast<uint32_t>((ri_ - cc) * sz), 0};
                    DataCopyPad(yGm_[tOff], out, op);
                }
            }
        }
    }

private:
    __aicore__ inline uint64_t OuterXOffset(uint64_t o)
    {
        uint64_t off = 0;
        uint64_t rem = o;
        for (int32_t d = static_cast<int32_t>(g_) - 1; d >= 0; --d) {
            const uint64_t cd = rem % shape_[d];
            rem = rem / shape_[d];
            off += cd * stride_[d];
        }
        return off;
    }

    __aicore__ inline void ToInt32(LocalTensor<int32_t>& dst, LocalTensor<TI>& il, LocalTensor<int32_t>& tmp, uint32_t n)
    {
        const int32_t cnt = static_cast<int32_t>(n);
        if constexpr (sizeof(TI) == 4) {
            Adds(dst, il, static_cast<int32_t>(0), cnt);
        } else if constexpr (sizeof(TI) == 8) {
            LocalTensor<uint32_t> s = il.template ReinterpretCast<uint32_t>();
            LocalTensor<uint32_t> d = dst.template ReinterpretCast<uint32_t>();
            uint64_t rsvdCnt = 0;
            const uint16_t rep = static_cast<uint16_t>((n + 31) / 32);
            GatherMaskParams gmp{static_cast<uint8_t>(1), rep, static_cast<uint16_t>(8), static_cast<uint8_t>(0)};
            GatherMask<uint32_t>(d, s, static_cast<uint8_t>(1), false, static_cast<uint32_t>(0), gmp, rsvdCnt);
        } else {
            LocalTensor<half> h = tmp.template ReinterpretCast<half>();
            Cast(h, il, RoundMode::CAST_NONE, n);
            Cast(dst, h, RoundMode::CAST_RINT, n);
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> srcBuf_;
    TBuf<TPosition::VECCALC> idxBuf_;
    TBuf<TPosition::VECCALC> offBuf_;
    TBuf<TPosition::VECCALC> relBuf_;
    TBuf<TPosition::VECCALC> tmpBuf_;
    TBuf<TPosition::VECCALC> colBuf_;
    TBuf<TPosition::VECCALC> laneBuf_;
    TBuf<TPosition::VECCALC> outBuf_;
    GlobalTensor<T> xGm_;
    GlobalTensor<TI> idxGm_;
    GlobalTensor<T> yGm_;
    uint64_t shape_[GATHER_MAX_DIMS];
    uint64_t stride_[GATHER_MAX_DIMS];
    uint64_t uStart_ = 0;
    uint64_t uEnd_ = 0;
    uint64_t ki_ = 1;
    uint64_t kx_ = 1;
    uint64_t ri_ = 1;
    uint64_t win_ = 1;
    uint64_t nwin_ = 1;
    uint64_t nchunk_ = 1;
    uint64_t gs_ = 1;
    uint64_t jt_ = 1;
    uint32_t cw_ = 8;
    uint32_t g_ = 0;
};

extern "C" __global__ __aicore__ void gather_custom(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    using RawT = typename GatherRaw<sizeof(DTYPE_X)>::T;
    if (t.total == 0) {
        return;
    }
    if (t.mode == 1) {
        if constexpr (sizeof(DTYPE_X) == 2 || sizeof(DTYPE_X) == 4) {
            GatherVector<RawT, DTYPE_INDEX> op;
            op.Init(x, index, y, t);
            op.Process();
        }
    } else if (t.mode == 2) {
        if constexpr (sizeof(DTYPE_X) == 2 || sizeof(DTYPE_X) == 4) {
            GatherSlab<RawT, DTYPE_INDEX> op;
            op.Init(x, index, y, t);
            op.Process();
        }
    } else {
        GatherScalar<RawT, DTYPE_INDEX> op;
        op.Init(x, index, y, t);
        op.Process();
    }
}

namespace optiling {
static uint32_t GatherDtypeBytes(ge::DataType dt)
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

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& is = context->GetInputShape(1)->GetStorageShape();
    const uint64_t dataBytes = GatherDtypeBytes(context->GetInputDesc(0)->GetDataType());
    const uint64_t idxBytes = GatherDtypeBytes(context->GetInputDesc(1)->GetDataType());

    int64_t nd = static_cast<int64_t>(is.GetDimNum());
    uint64_t ishape[GATHER_MAX_DIMS];
    uint64_t xshape[GATHER_MAX_DIMS];
    uint64_t xstride[GATHER_MAX_DIMS];
    if (nd <= 0) {
        nd = 1;
        ishape[0] = 1;
        xshape[0] = 1;
    } else {
        if (nd > static_cast<int64_t>(GATHER_MAX_DIMS)) {
            return ge::GRAPH_FAILED;
        }
        const int64_t xnd = static_cast<int64_t>(xs.GetDimNum());
        for (int64_t d = 0; d < nd; ++d) {
            ishape[d] = static_cast<uint64_t>(is.GetDim(d));
            xshape[d] = (d < xnd) ? static_cast<uint64_t>(xs.GetDim(d)) : 1;
        }
    }
    uint64_t acc = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
        xstride[d] = acc;
        acc *= xshape[d];
    }
    const uint64_t xTotal = acc;

    int64_t dim = 0;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* p = attrs->GetAttrPointer<int64_t>(0);
        if (p != nullptr) {
            dim = *p;
        }
    }
    if (dim < 0) {
        dim += nd;
    }
    if (dim < 0 || dim >= nd) {
        dim = 0;
    }

    // collapse: drop size-1 non-gather dims, merge adjacent non-gather dims contiguous in x
    uint64_t cshape[GATHER_MAX_DIMS];
    uint64_t cstride[GATHER_MAX_DIMS];
    bool cg[GATHER_MAX_DIMS];
    uint32_t ndc = 0;
    for (int64_t d = 0; d < nd; ++d) {
        const bool isG = (d == dim);
        if (!isG && ishape[d] == 1) {
            continue;
        }
        if (!isG && ndc > 0 && !cg[ndc - 1] && cstride[ndc - 1] == ishape[d] * xstride[d]) {
            cshape[ndc - 1] *= ishape[d];
            cstride[ndc - 1] = xstride[d];
        } else {
            cshape[ndc] = ishape[d];
            cstride[ndc] = xstride[d];
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

    uint64_t total = 1;
    for (int64_t d = 0; d < nd; ++d) {
        total *= ishape[d];
    }
    const uint64_t kx = xshape[dim];
    const uint64_t ki = cshape[gpos];

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }

    GatherCustomTilingData* t = context->GetTilingData<GatherCustomTilingData>();
    for (uint32_t d = 0; d < GATHER_MAX_DIMS; ++d) {
        t->shape[d] = (d < ndc) ? cshape[d] : 1;
        t->stride[d] = (d < ndc) ? cstride[d] : 0;
    }
    t->ndim = ndc;
    t->gpos = gpos;
    t->total = total;
    t->xTotal = xTotal;
    t->ki = ki;
    t->kx = kx;
    t->rowsPerBlock = 1;
    t->chunks = 1;
    const uint64_t pitch = (kx * dataBytes + 31) / 32 * 32;
    t->pitch = pitch;
    t->rowStride = kx;
    t->ri = 1;
    t->cw = 8;
    t->win = 1;
    t->nwin = 1;
    t->sUnits = 0;
    t->sFormer = 0;

    uint64_t blockDim = 1;
    const bool vec = (dataBytes == 2 || dataBytes == 4) && total > 0 && gpos == ndc - 1 &&
                     cstride[gpos] == 1 && pitch <= GATHER_XROW_BYTES && ki > 0;
    const bool slab = (dataBytes == 2 || dataBytes == 4) && total > 0 && ki > 0 && kx > 0 && ndc >= 2 &&
                      gpos == ndc - 2 && cstride[ndc - 1] == 1;
    if (total == 0) {
        t->mode = 0;
        t->items = 0;
        t->itemsPerCore = 1;
    } else if (vec) {
        t->mode = 1;
        const uint64_t rows = total / ki;
        uint64_t r = 1;
        if (ndc <= 2 && ki <= GATHER_VEC_CHUNK) {
            r = GATHER_VEC_CHUNK / ki;
            const uint64_t byX = GATHER_XROW_BYTES / pitch;
            if (r > byX) {
                r = byX;
            }
            if (r > 4095) {
                r = 4095;
            }
            uint64_t perCoreRows = (rows + coreNum - 1) / coreNum;
            if (r > perCoreRows) {
                r = perCoreRows;
            }
            if (r < 1) {
                r = 1;
            }
        }
        t->rowStride = (ndc == 2) ? cstride[0] : kx;
        uint64_t items;
        if (r > 1) {
            t->rowsPerBlock = r;
            t->chunks = 1;
            items = rows;
        } else {
            const uint64_t chunks = (ki + GATHER_VEC_CHUNK - 1) / GATHER_VEC_CHUNK;
            t->rowsPerBlock = 1;
            t->chunks = chunks;
            items = rows * chunks;
        }
        const uint64_t ipc = (items + coreNum - 1) / coreNum;
        t->items = items;
        t->itemsPerCore = ipc;
        blockDim = (items + ipc - 1) / ipc;
    } else if (slab) {
        t->mode = 2;
        const uint64_t ri = cshape[ndc - 1];
        uint64_t minB = dataBytes < idxBytes ? dataBytes : idxBytes;
        if (minB > 4) {
            minB = 4;
        }
        const uint64_t c0 = 32 / minB;
        const uint64_t riUp = (ri + c0 - 1) / c0 * c0;
        const uint64_t outer = total / (ki * ri);
        uint64_t c = c0;
        while (c * 2 <= 256 && c * 2 <= riUp && kx * c * 2 * dataBytes <= GATHER_SLAB_BYTES &&
               outer * ((ri + c * 2 - 1) / (c * 2)) >= coreNum) {
            c *= 2;
        }
        uint64_t win = GATHER_SLAB_BYTES / (c * dataBytes);
        if (win > kx) {
            win = kx;
        }
        if (win > 4095) {
            win = 4095;
        }
        const uint64_t chunks = (ri + c - 1) / c;
        const uint64_t items = outer * chunks;
        const uint64_t ipc = (items + coreNum - 1) / coreNum;
        t->ri = ri;
        t->cw = c;
        t->win = win;
        t->nwin = (kx + win - 1) / win;
        t->chunks = chunks;
        t->items = items;
        t->itemsPerCore = ipc;
        blockDim = (items + ipc - 1) / ipc;
    } else {
        t->mode = 0;
        // load balance: 32-element units dealt former / tail over every core, so the most loaded core
        // holds at most one unit more than the least loaded one
        const uint64_t nUnits = (total + 31) / 32;
        blockDim = nUnits < coreNum ? nUnits : coreNum;
        if (blockDim < 1) {
            blockDim = 1;
        }
        t->sUnits = nUnits / blockDim;
        t->sFormer = nUnits % blockDim;
        const uint64_t ipc = (t->sUnits + (t->sFormer > 0 ? 1 : 0)) * 32;
        t->items = total;
        t->itemsPerCore = ipc;
    }
    if (blockDim < 1) {
        blockDim = 1;
    }
    if (blockDim > coreNum) {
        blockDim = coreNum;
    }
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (gather).
class GatherCustom : public OpDef {
public:
    explicit GatherCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_INT8, ge::DT_INT8, ge::DT_INT8, ge::DT_INT32, ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("index")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16, ge::DT_BF16, ge::DT_INT8, ge::DT_INT8, ge::DT_INT8, ge::DT_INT32, ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(OPTIONAL).Int(0);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(GatherCustom);
}  // namespace ops


