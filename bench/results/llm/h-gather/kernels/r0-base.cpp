// Gather (torch.gather semantics): y[..., i_d, ...] = x[..., index[..., i_d, ...], ...]
// Pure data movement: every dtype is moved as raw bits. The host coalesces the dims and picks:
//  rowMode  (gather axis is the last axis): a chunk of the x row is loaded into UB and the output row
//           tile is collected from it with the vector Gather (byte offsets).
//  column   (gather axis has an inner axis): a slab x[o, r0:r0+R, i0:i0+wB] is loaded (rows padded
//           to a 32-byte stride) and the output tile [mt rows x wB cols] is gathered from it.
// When the gather axis does not fit in UB it is cut in chunks; lanes whose index falls outside the
// current chunk gather their own previous value (the y tile reloaded into a "self" region placed
// right after the slab), so after the last chunk every lane holds its value.
// 8-byte types are gathered as pairs of 32-bit words; int8 data is widened to half for the Gather.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t GATHER_MAX_DIMS = 8;
constexpr uint32_t GATHER_SPLIT_UNIT = 32;
constexpr uint32_t GATHER_TILE = 8192;

struct GatherCustomTilingData {
    // common split: the first formerNum cores take formerLength items, the others tailLength
    uint32_t mode;           // 0 scalar fallback, 1 vector
    uint32_t totalLength;    // items: output elements (mode 0) or work units (mode 1)
    uint32_t formerNum;
    uint32_t formerLength;
    uint32_t tailLength;
    // ---- mode 0 (scalar) ----
    uint32_t tileLength;
    uint32_t ndim;
    uint32_t gatherSize;
    uint32_t gatherStride;
    uint32_t xTotal;
    uint32_t sizes[GATHER_MAX_DIMS];
    uint32_t strides[GATHER_MAX_DIMS];
    // ---- mode 1 (vector) ----
    uint32_t rowMode;        // 1: gather axis is the last axis
    uint32_t te;             // elements per tile
    uint32_t wB;             // columns per block (column mode), a power of two, multiple of 32 B
    uint32_t mt;             // gather-axis output rows per tile
    uint32_t mTiles;         // ceil(M / mt)
    uint32_t cBlocks;        // ceil(I / wB) (1 in rowMode)
    uint32_t mg;             // m-groups per column
    uint32_t mgTiles;        // m-tiles per m-group
    uint32_t rChunk;         // gather-axis rows of x per chunk
    uint32_t nChunks;
    uint32_t m;              // index size along the gather axis
    uint32_t xd;             // x size along the gather axis
    uint32_t inner;          // index size of the inner (last) axis, column mode
    uint32_t gS;             // x stride of the gather axis (elements)
    uint32_t gIS;            // index/y stride of the gather axis (elements)
    uint32_t nO;             // outer dims
    uint32_t osz[GATHER_MAX_DIMS];
    uint32_t oxst[GATHER_MAX_DIMS];
    uint32_t oist[GATHER_MAX_DIMS];
    uint32_t slabGBytes;     // gather-space slab capacity (bytes); the self region starts here
    uint32_t slabBytes;      // slab buffer (slab + self region)
    uint32_t slabRawBytes;   // int8 raw slab
    uint32_t idxRawBytes;
    uint32_t laneBytes;      // 4 * lanes: one int32 scratch tile
    uint32_t outGBytes;
    uint32_t outI8Bytes;
    uint32_t kr;             // rowMode: outer rows per tile
    uint32_t mPad;           // rowMode: UB row stride of index/y tiles (elements)
    uint32_t xdPad;          // rowMode: UB row stride of the x slab (elements)
    uint32_t outerCnt;       // number of outer rows
};
REGISTER_TILING_DEFAULT(GatherCustomTilingData);

using namespace AscendC;

template <int N> struct GatherUnit;
template <> struct GatherUnit<1> { using T = int8_t;  static constexpr uint32_t W = 1; };
template <> struct GatherUnit<2> { using T = int16_t; static constexpr uint32_t W = 1; };
template <> struct GatherUnit<4> { using T = int32_t; static constexpr uint32_t W = 1; };
template <> struct GatherUnit<8> { using T = int32_t; static constexpr uint32_t W = 2; };

template <bool B, typename A, typename C> struct GatherCond { using type = A; };
template <typename A, typename C> struct GatherCond<false, A, C> { using type = C; };

// ------------------------------------------------------------------------------------------------
// mode 0: scalar fallback (one element at a time)
// ------------------------------------------------------------------------------------------------
template <typename XU, uint32_t XW, typename IU, uint32_t IW>
class KernelGatherScalar {
public:
    __aicore__ inline KernelGatherScalar() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherCustomTilingData& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        uint32_t offset;
        if (idx < t.formerNum) {
            length_ = t.formerLength;
            offset = idx * t.formerLength;
        } else {
            length_ = t.tailLength;
            offset = t.formerNum * t.formerLength + (idx - t.formerNum) * t.tailLength;
        }
        if (offset >= t.totalLength) {
            length_ = 0;
            return;
        }
        if (offset + length_ > t.totalLength) {
            length_ = t.totalLength - offset;
        }
        start_ = offset;
        tileLength_ = t.tileLength;
        ndim_ = t.ndim;
        for (uint32_t k = 0; k < GATHER_MAX_DIMS; ++k) {
            sz_[k] = static_cast<int64_t>(t.sizes[k]);
            st_[k] = static_cast<int64_t>(t.strides[k]);
        }
        gSize_ = static_cast<int64_t>(t.gatherSize);
        gStride_ = static_cast<int64_t>(t.gatherStride);
        xGm_.SetGlobalBuffer((__gm__ XU*)x, static_cast<uint64_t>(t.xTotal) * XW);
        idxGm_.SetGlobalBuffer((__gm__ IU*)index + static_cast<uint64_t>(offset) * IW,
                               static_cast<uint64_t>(length_) * IW);
        yGm_.SetGlobalBuffer((__gm__ XU*)y + static_cast<uint64_t>(offset) * XW,
                             static_cast<uint64_t>(length_) * XW);
        pipe_.InitBuffer(idxBuf_, tileLength_ * IW * sizeof(IU));
        pipe_.InitBuffer(outBuf_, tileLength_ * XW * sizeof(XU));
    }

    __aicore__ inline void Process()
    {
        if (length_ == 0) {
            return;
        }
        int64_t c[GATHER_MAX_DIMS];
        int64_t base = 0;
        int64_t rem = static_cast<int64_t>(start_);
        for (int32_t k = static_cast<int32_t>(ndim_) - 1; k >= 0; --k) {
            c[k] = rem % sz_[k];
            rem = rem / sz_[k];
            base += c[k] * st_[k];
        }
        const int32_t last = static_cast<int32_t>(ndim_) - 1;
        const int64_t lastSz = sz_[last];
        const int64_t lastSt = st_[last];
        LocalTensor<IU> it = idxBuf_.Get<IU>();
        LocalTensor<XU> ot = outBuf_.Get<XU>();
        const event_t evMte2S = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        const event_t evSMte3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE3));
        const event_t evSMte2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE2));
        const event_t evMte3S = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_S));
        const uint32_t tiles = (length_ + tileLength_ - 1) / tileLength_;
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t n = (i + 1 < tiles) ? tileLength_ : length_ - i * tileLength_;
            if (i > 0) {
                WaitFlag<HardEvent::S_MTE2>(evSMte2);
            }
            DataCopyExtParams cpIn{1, static_cast<uint32_t>(n * IW * sizeof(IU)), 0, 0, 0};
            DataCopyPadExtParams<IU> pad{false, 0, 0, 0};
            DataCopyPad(it, idxGm_[static_cast<uint64_t>(i) * tileLength_ * IW], cpIn, pad);
            SetFlag<HardEvent::MTE2_S>(evMte2S);
            WaitFlag<HardEvent::MTE2_S>(evMte2S);
            if (i > 0) {
                WaitFlag<HardEvent::MTE3_S>(evMte3S);
            }
            for (uint32_t j = 0; j < n; ++j) {
                int64_t v;
                if constexpr (IW == 1) {
                    v = static_cast<int64_t>(it.GetValue(j));
                } else {
                    const uint32_t lo = static_cast<uint32_t>(it.GetValue(2 * j));
                    const int32_t hi = static_cast<int32_t>(it.GetValue(2 * j + 1));
                    v = static_cast<int64_t>((static_cast<uint64_t>(static_cast<int64_t>(hi)) << 32) |
                                             static_cast<uint64_t>(lo));
                }
                if (v < 0) {
                    v += gSize_;
                }
                if (v < 0) {
                    v = 0;
                } else if (v >= gSize_) {
                    v = gSize_ - 1;
                }
                const uint64_t off = static_cast<uint64_t>(base + v * gStride_);
                if constexpr (XW == 1) {
                    ot.SetValue(j, xGm_.GetValue(off));
                } else {
                    ot.SetValue(2 * j, xGm_.GetValue(2 * off));
                    ot.SetValue(2 * j + 1, xGm_.GetValue(2 * off + 1));
                }
                ++c[last];
                base += lastSt;
                if (c[last] == lastSz) {
                    int32_t k = last;
                    while (k > 0 && c[k] == sz_[k]) {
                        base -= st_[k] * sz_[k];
                        c[k] = 0;
                        --k;
                        ++c[k];
                        base += st_[k];
                    }
                }
            }
            SetFlag<HardEvent::S_MTE2>(evSMte2);
            SetFlag<HardEvent::S_MTE3>(evSMte3);
            WaitFlag<HardEvent::S_MTE3>(evSMte3);
            DataCopyExtParams cpOut{1, static_cast<uint32_t>(n * XW * sizeof(XU)), 0, 0, 0};
            DataCopyPad(yGm_[static_cast<uint64_t>(i) * tileLength_ * XW], ot, cpOut);
            SetFlag<HardEvent::MTE3_S>(evMte3S);
        }
        WaitFlag<HardEvent::S_MTE2>(evSMte2);
        WaitFlag<HardEvent::MTE3_S>(evMte3S);
    }

private:
    TPipe pipe_;
    TBuf<TPosition::VECCALC> idxBuf_;
    TBuf<TPosition::VECCALC> outBuf_;
    GlobalTensor<XU> xGm_;
    GlobalTensor<IU> idxGm_;
    GlobalTensor<XU> yGm_;
    int64_t sz_[GATHER_MAX_DIMS];
    int64_t st_[GATHER_MAX_DIMS];
    int64_t gSize_ = 1;
    int64_t gStride_ = 0;
    uint32_t ndim_ = 1;
    uint32_t start_ = 0;
    uint32_t length_ = 0;
    uint32_t tileLength_ = 0;
};

// ------------------------------------------------------------------------------------------------
// mode 1: vector Gather from a UB slab
// ------------------------------------------------------------------------------------------------
template <int XS, int IS>
class KernelGatherVec {
public:
    using XU = typename GatherUnit<XS>::T;                 // raw unit of x / y
    static constexpr uint32_t XW = GatherUnit<XS>::W;
    using IU = typename GatherUnit<IS>::T;                 // raw unit of index
    static constexpr uint32_t IW = GatherUnit<IS>::W;
    static constexpr bool X8 = (XS == 1);                  // int8 data: gathered as half
    static constexpr uint32_t L = (XS == 8) ? 2 : 1;       // gather lanes per element
    using G = typename GatherCond<(XS <= 2), half, float>::type;
    static constexpr uint32_t GS = sizeof(G);              // bytes per gather lane

    __aicore__ inline KernelGatherVec() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const GatherCustomTilingData& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        if (idx < t.formerNum) {
            count_ = t.formerLength;
            first_ = idx * t.formerLength;
        } else {
            count_ = t.tailLength;
            first_ = t.formerNum * t.formerLength + (idx - t.formerNum) * t.tailLength;
        }
        if (first_ >= t.totalLength) {
            count_ = 0;
            return;
        }
        if (first_ + count_ > t.totalLength) {
            count_ = t.totalLength - first_;
        }
        te_ = t.te;
        lanes_ = te_ * L;
        multi_ = t.nChunks > 1;
        xGm_.SetGlobalBuffer((__gm__ XU*)x);
        idxGm_.SetGlobalBuffer((__gm__ IU*)index);
        yGm_.SetGlobalBuffer((__gm__ XU*)y);

        pipe_.InitBuffer(idxRawBuf_, t.idxRawBytes);
        pipe_.InitBuffer(s1Buf_, t.laneBytes);
        pipe_.InitBuffer(s2Buf_, t.laneBytes);
        pipe_.InitBuffer(s3Buf_, t.laneBytes);
        pipe_.InitBuffer(colBuf_, t.laneBytes);
        if constexpr (L == 2) {
            pipe_.InitBuffer(pBuf_, t.laneBytes);
        }
        if constexpr (IW == 2) {
            pipe_.InitBuffer(eBuf_, te_ * 4);
        }
        if (multi_) {
            pipe_.InitBuffer(selfTabBuf_, t.laneBytes);
        }
        pipe_.InitBuffer(outGBuf_, t.outGBytes);
        if constexpr (X8) {
            pipe_.InitBuffer(outI8Buf_, t.outI8Bytes);
            pipe_.InitBuffer(slabRawBuf_, t.slabRawBytes);
        }
        pipe_.InitBuffer(slabBuf_, t.slabBytes);

        evVM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        evM2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        evVM3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        evM3V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        evM3M2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_MTE2));

        // constant offset tables (built once by the scalar unit)
        LocalTensor<int32_t> col = colBuf_.Get<int32_t>();
        if (t.rowMode) {
            for (uint32_t k = 0; k < lanes_; ++k) {
                uint32_t r = (k / L) / t.mPad;
                if (r >= t.kr) {
                    r = t.kr - 1;   // padding lanes stay inside the slab
                }
                col.SetValue(k, static_cast<int32_t>(r * t.xdPad * L * GS + (k % L) * GS));
            }
        } else {
            const uint32_t rowLanes = t.wB * L;
            for (uint32_t k = 0; k < lanes_; ++k) {
                col.SetValue(k, static_cast<int32_t>((k % rowLanes) * GS));
            }
        }
        if constexpr (L == 2) {
            LocalTensor<int32_t> p = pBuf_.Get<int32_t>();
            for (uint32_t k = 0; k < lanes_; ++k) {
                p.SetValue(k, static_cast<int32_t>((k / 2) * 4));
            }
        }
        if constexpr (IW == 2) {
            LocalTensor<int32_t> e = eBuf_.Get<int32_t>();
            for (uint32_t j = 0; j < te_; ++j) {
                e.SetValue(j, static_cast<int32_t>(j * 8));
            }
        }
        if (multi_) {
            LocalTensor<int32_t> s = selfTabBuf_.Get<int32_t>();
            for (uint32_t k = 0; k < lanes_; ++k) {
                s.SetValue(k, static_cast<int32_t>(t.slabGBytes + k * GS));
            }
        }
        PipeBarrier<PIPE_ALL>();   // the scalar-built tables are visible to the vector unit
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        uint32_t lastCol = 0xFFFFFFFFu;
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t colId = u / t_.mg;
            const uint32_t mgId = u % t_.mg;
            const uint32_t o = colId / t_.cBlocks;
            const uint32_t cb = colId % t_.cBlocks;
            // outer coordinates -> bases
            uint64_t xBase = 0;
            uint64_t iBase = 0;
            uint32_t nrows = 1;
            uint32_t rem = o;
            if (t_.rowMode) {
                rem = colId * t_.kr;
                nrows = (t_.outerCnt - rem < t_.kr) ? t_.outerCnt - rem : t_.kr;
            }
            for (int32_t k = static_cast<int32_t>(t_.nO) - 1; k >= 0; --k) {
                const uint32_t c = rem % t_.osz[k];
                rem = rem / t_.osz[k];
                xBase += static_cast<uint64_t>(c) * t_.oxst[k];
                iBase += static_cast<uint64_t>(c) * t_.oist[k];
            }
            uint32_t i0 = 0;
            uint32_t w = 0;
            if (!t_.rowMode) {
                i0 = cb * t_.wB;
                w = (t_.inner - i0 < t_.wB) ? t_.inner - i0 : t_.wB;
                xBase += i0;
                iBase += i0;
            }
            const uint32_t tBeg = mgId * t_.mgTiles;
            uint32_t tEnd = tBeg + t_.mgTiles;
            if (tEnd > t_.mTiles) {
                tEnd = t_.mTiles;
            }
            for (uint32_t c = 0; c < t_.nChunks; ++c) {
                const uint32_t r0 = c * t_.rChunk;
                const uint32_t nr = (t_.xd - r0 < t_.rChunk) ? t_.xd - r0 : t_.rChunk;
                if (multi_ || colId != lastCol) {
                    LoadSlab(xBase, w, r0, nr, nrows);
                    lastCol = colId;
                }
                for (uint32_t tt = tBeg; tt < tEnd; ++tt) {
                    const uint32_t m0 = tt * t_.mt;
                    const uint32_t mr = (t_.m - m0 < t_.mt) ? t_.m - m0 : t_.mt;
                    Tile(iBase + static_cast<uint64_t>(m0) * t_.gIS, w, mr, nrows, r0, nr, c);
                }
            }
        }
    }

private:
    __aicore__ inline uint32_t Pad32(uint32_t b) { return (b + 31) / 32 * 32; }

    __aicore__ inline void LoadSlab(uint64_t xBase, uint32_t w, uint32_t r0, uint32_t nr, uint32_t nrows)
    {
        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        LocalTensor<XU> raw;
        if constexpr (X8) {
            raw = slabRawBuf_.Get<XU>();
        } else {
            raw = slabBuf_.Get<XU>();
        }
        DataCopyPadExtParams<XU> pad{false, 0, 0, 0};
        if (t_.rowMode) {
            const uint32_t gmGap = nrows > 1 ? (t_.oxst[0] - nr) * XS : 0;
            const uint32_t ubGap = nrows > 1 ? (t_.xdPad * XS - Pad32(nr * XS)) / 32 : 0;
            DataCopyExtParams cp{static_cast<uint16_t>(nrows), nr * XS, gmGap, ubGap, 0};
            DataCopyPad(raw, xGm_[(xBase + r0) * XW], cp, pad);
        } else {
            const uint32_t rowB = t_.wB * XS;
            const uint32_t gap = (rowB - Pad32(w * XS)) / 32;
            uint32_t done = 0;
            while (done < nr) {
                const uint32_t k = (nr - done > 4095) ? 4095 : nr - done;
                DataCopyExtParams cp{static_cast<uint16_t>(k), w * XS, (t_.gS - w) * XS, gap, 0};
                DataCopyPad(raw[(done * rowB) / sizeof(XU)],
                            xGm_[(xBase + static_cast<uint64_t>(r0 + done) * t_.gS) * XW], cp, pad);
                done += k;
            }
        }
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        if constexpr (X8) {
            LocalTensor<half> sg = slabBuf_.Get<half>();
            const uint32_t cnt = t_.rowMode ? (nrows > 1 ? nrows * t_.xdPad : (nr + 31) / 32 * 32) : nr * t_.wB;
            Cast(sg, raw, RoundMode::CAST_NONE, cnt);
        }
    }

    // Copy one output-shaped tile between GM (at gmOff, in elements) and UB.
    __aicore__ inline DataCopyExtParams TileParams(uint32_t bytesPerElem, uint32_t w, uint32_t mr, uint32_t nrows,
                                                   bool toGm)
    {
        if (t_.rowMode) {
            const uint32_t gmGap = nrows > 1 ? (t_.oist[0] - mr) * bytesPerElem : 0;
            const uint32_t ubGap = nrows > 1 ? (t_.mPad * bytesPerElem - Pad32(mr * bytesPerElem)) / 32 : 0;
            if (toGm) {
                return DataCopyExtParams{static_cast<uint16_t>(nrows), mr * bytesPerElem, ubGap, gmGap, 0};
            }
            return DataCopyExtParams{static_cast<uint16_t>(nrows), mr * bytesPerElem, gmGap, ubGap, 0};
        }
        const uint32_t ubGap = (t_.wB * bytesPerElem - Pad32(w * bytesPerElem)) / 32;
        const uint32_t gmGap = (t_.gIS - w) * bytesPerElem;
        if (toGm) {
            return DataCopyExtParams{static_cast<uint16_t>(mr), w * bytesPerElem, ubGap, gmGap, 0};
        }
        return DataCopyExtParams{static_cast<uint16_t>(mr), w * bytesPerElem, gmGap, ubGap, 0};
    }

    __aicore__ inline void Tile(uint64_t gmOff, uint32_t w, uint32_t mr, uint32_t nrows, uint32_t r0, uint32_t nr,
                                uint32_t c)
    {
        const int32_t te = static_cast<int32_t>(te_);
        const int32_t n = static_cast<int32_t>(lanes_);
        LocalTensor<IU> raw = idxRawBuf_.Get<IU>();
        LocalTensor<int32_t> s1 = s1Buf_.Get<int32_t>();
        LocalTensor<int32_t> s2 = s2Buf_.Get<int32_t>();
        LocalTensor<int32_t> s3 = s3Buf_.Get<int32_t>();
        LocalTensor<int32_t> col = colBuf_.Get<int32_t>();
        LocalTensor<G> outG = outGBuf_.Get<G>();
        LocalTensor<G> slabG = slabBuf_.Get<G>();

        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        {
            DataCopyPadExtParams<IU> pad{false, 0, 0, 0};
            DataCopyPad(raw, idxGm_[gmOff * IW], TileParams(IS, w, mr, nrows, false), pad);
        }
        if (multi_ && c > 0) {
            DataCopyPadExtParams<XU> pad{false, 0, 0, 0};
            LocalTensor<XU> prev;
            if constexpr (X8) {
                prev = outI8Buf_.Get<XU>();
            } else {
                prev = slabBuf_.GetWithOffset<XU>(lanes_ * GS / sizeof(XU), t_.slabGBytes);
            }
            DataCopyPad(prev, yGm_[gmOff * XW], TileParams(XS, w, mr, nrows, false), pad);
        }
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        if constexpr (X8) {
            if (multi_ && c > 0) {
                LocalTensor<half> selfH = slabBuf_.GetWithOffset<half>(lanes_, t_.slabGBytes);
                LocalTensor<int8_t> prev = outI8Buf_.Get<int8_t>();
                Cast(selfH, prev, RoundMode::CAST_NONE, te_);
            }
        }

        // 1. indices as int32, element space
        LocalTensor<int32_t> idx32;
        if constexpr (IS == 4) {
            idx32 = raw.template ReinterpretCast<int32_t>();
        } else if constexpr (IS == 8) {
            LocalTensor<int32_t> e = eBuf_.Get<int32_t>();
            LocalTensor<float> dstF = s1.ReinterpretCast<float>();
            LocalTensor<float> srcF = raw.template ReinterpretCast<float>();
            LocalTensor<uint32_t> offE = e.ReinterpretCast<uint32_t>();
            Gather(dstF, srcF, offE, static_cast<uint32_t>(0), te_);
            idx32 = s1;
        } else {
            LocalTensor<half> h = s3.ReinterpretCast<half>();
            Cast(h, raw, RoundMode::CAST_NONE, te_);
            Cast(s1, h, RoundMode::CAST_ROUND, te_);
            idx32 = s1;
        }
        // 2. keep every lane (also the padding lanes) inside the gather axis
        Maxs(idx32, idx32, static_cast<int32_t>(0), te);
        Mins(idx32, idx32, static_cast<int32_t>(t_.xd - 1), te);
        // 3. lane space
        LocalTensor<int32_t> a = idx32;
        LocalTensor<int32_t> b = s2;
        if constexpr (L == 2) {
            LocalTensor<int32_t> p = pBuf_.Get<int32_t>();
            LocalTensor<float> dstF = s2.ReinterpretCast<float>();
            LocalTensor<float> srcF = idx32.ReinterpretCast<float>();
            LocalTensor<uint32_t> offP = p.ReinterpretCast<uint32_t>();
            Gather(dstF, srcF, offP, static_cast<uint32_t>(0), lanes_);
            a = s2;
            b = s1;
        }
        const int32_t rowBytes = static_cast<int32_t>(t_.rowMode ? L * GS : t_.wB * L * GS);
        // 4. byte offsets into the slab
        if (!multi_) {
            Muls(s3, a, rowBytes, n);
            Add(s3, s3, col, n);
        } else {
            LocalTensor<int32_t> selfTab = selfTabBuf_.Get<int32_t>();
            Adds(b, a, -static_cast<int32_t>(r0), n);                 // v = idx - r0
            Maxs(s3, b, static_cast<int32_t>(0), n);                  // cl = clamp(v, 0, nr - 1)
            Mins(s3, s3, static_cast<int32_t>(nr - 1), n);
            Sub(b, b, s3, n);                                         // d = v - cl (0 when inside)
            Muls(a, b, static_cast<int32_t>(-1), n);
            Max(b, b, a, n);                                          // |d|
            Mins(b, b, static_cast<int32_t>(1), n);                   // 0 inside, 1 outside
            Muls(s3, s3, rowBytes, n);
            Add(s3, s3, col, n);                                      // offset inside the chunk
            Sub(a, selfTab, s3, n);
            Mul(a, a, b, n);
            Add(s3, s3, a, n);                                        // outside: own previous value
        }
        // 5. gather
        LocalTensor<uint32_t> offU = s3.ReinterpretCast<uint32_t>();
        Gather(outG, slabG, offU, static_cast<uint32_t>(0), lanes_);
        if constexpr (X8) {
            LocalTensor<int8_t> o8 = outI8Buf_.Get<int8_t>();
            Cast(o8, outG, RoundMode::CAST_RINT, te_);
        }
        SetFlag<HardEvent::V_MTE3>(evVM3_);
        WaitFlag<HardEvent::V_MTE3>(evVM3_);
        if constexpr (X8) {
            LocalTensor<XU> o8 = outI8Buf_.Get<XU>();
            DataCopyPad(yGm_[gmOff * XW], o8, TileParams(XS, w, mr, nrows, true));
        } else {
            LocalTensor<XU> ou = outG.template ReinterpretCast<XU>();
            DataCopyPad(yGm_[gmOff * XW], ou, TileParams(XS, w, mr, nrows, true));
        }
        SetFlag<HardEvent::MTE3_V>(evM3V_);
        WaitFlag<HardEvent::MTE3_V>(evM3V_);
        if (multi_) {
            SetFlag<HardEvent::MTE3_MTE2>(evM3M2_);
            WaitFlag<HardEvent::MTE3_MTE2>(evM3M2_);
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> idxRawBuf_, s1Buf_, s2Buf_, s3Buf_, colBuf_, pBuf_, eBuf_, selfTabBuf_;
    TBuf<TPosition::VECCALC> outGBuf_, outI8Buf_, slabBuf_, slabRawBuf_;
    GlobalTensor<XU> xGm_;
    GlobalTensor<IU> idxGm_;
    GlobalTensor<XU> yGm_;
    GatherCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    uint32_t te_ = 0;
    uint32_t lanes_ = 0;
    bool multi_ = false;
    event_t evVM2_, evM2V_, evVM3_, evM3V_, evM3M2_;
};

extern "C" __global__ __aicore__ void gather_custom(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);   // vector-only kernel: no MIX launch
    GET_TILING_DATA(t, tiling);
    if (t.mode == 1) {
        KernelGatherVec<sizeof(DTYPE_X), sizeof(DTYPE_INDEX)> op;
        op.Init(x, index, y, t);
        op.Process();
    } else {
        KernelGatherScalar<typename GatherUnit<sizeof(DTYPE_X)>::T, GatherUnit<sizeof(DTYPE_X)>::W,
                           typename GatherUnit<sizeof(DTYPE_INDEX)>::T, GatherUnit<sizeof(DTYPE_INDEX)>::W> op;
        op.Init(x, index, y, t);
        op.Process();
    }
}

namespace optiling {
static uint64_t GatherR32(uint64_t b) { return (b + 31) / 32 * 32; }

static uint32_t GatherBytesOf(ge::DataType dt)
{
    switch (dt) {
        case ge::DT_INT8: return 1;
        case ge::DT_FLOAT16:
        case ge::DT_BF16: return 2;
        case ge::DT_INT64: return 8;
        default: return 4;
    }
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& is = context->GetInputShape(1)->GetStorageShape();
    const uint32_t esz = GatherBytesOf(context->GetInputDesc(0)->GetDataType());
    const uint32_t isz = GatherBytesOf(context->GetInputDesc(1)->GetDataType());
    int64_t nd = static_cast<int64_t>(is.GetDimNum());
    const int64_t xnd = static_cast<int64_t>(xs.GetDimNum());
    int64_t dim = 0;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* dp = attrs->GetAttrPointer<int64_t>(0);
        if (dp != nullptr) {
            dim = *dp;
        }
    }
    if (nd > xnd) {
        nd = xnd;
    }
    if (nd > static_cast<int64_t>(GATHER_MAX_DIMS)) {
        nd = GATHER_MAX_DIMS;
    }
    int64_t xsz[GATHER_MAX_DIMS + 1];
    int64_t isz_[GATHER_MAX_DIMS + 1];
    int64_t xstr[GATHER_MAX_DIMS + 1];
    if (nd == 0) {   // a scalar: one element
        nd = 1;
        xsz[0] = 1;
        isz_[0] = 1;
        dim = 0;
    } else {
        for (int64_t k = 0; k < nd; ++k) {
            xsz[k] = xs.GetDim(k);
            isz_[k] = is.GetDim(k);
        }
    }
    if (dim < 0) {
        dim += nd;
    }
    if (dim < 0 || dim >= nd) {
        dim = 0;
    }
    int64_t acc = 1;
    for (int64_t k = nd - 1; k >= 0; --k) {
        xstr[k] = acc;
        acc *= xsz[k];
    }
    const uint64_t xTotal = static_cast<uint64_t>(acc);
    uint64_t total = 1;
    for (int64_t k = 0; k < nd; ++k) {
        total *= static_cast<uint64_t>(isz_[k]);
    }

    // Coalesce: drop size-1 dims (but keep the gather dim and the last dim), merge neighbours that
    // are contiguous in x. csz: index sizes, cst: x strides, cg: gather flag.
    int64_t csz[GATHER_MAX_DIMS];
    int64_t cst[GATHER_MAX_DIMS];
    bool cg[GATHER_MAX_DIMS];
    int64_t cn = 0;
    for (int64_t k = 0; k < nd; ++k) {
        const bool g = (k == dim);
        if (isz_[k] == 1 && !g && k != nd - 1) {
            continue;
        }
        const int64_t st = xstr[k];
        if (cn > 0 && !g && !cg[cn - 1] && cst[cn - 1] == st * isz_[k]) {
            csz[cn - 1] *= isz_[k];
            cst[cn - 1] = st;
            continue;
        }
        csz[cn] = isz_[k];
        cst[cn] = st;
        cg[cn] = g;
        ++cn;
    }
    int64_t gp = 0;
    for (int64_t k = 0; k < cn; ++k) {
        if (cg[k]) {
            gp = k;
        }
    }
    int64_t cist[GATHER_MAX_DIMS];
    acc = 1;
    for (int64_t k = cn - 1; k >= 0; --k) {
        cist[k] = acc;
        acc *= csz[k];
    }

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    const uint64_t ubUsable = ub - 8448;

    GatherCustomTilingData* t = context->GetTilingData<GatherCustomTilingData>();
    // ---- scalar fallback description (always filled) ----
    t->tileLength = GATHER_TILE;
    t->ndim = static_cast<uint32_t>(cn);
    t->gatherSize = static_cast<uint32_t>(xsz[dim]);
    t->gatherStride = static_cast<uint32_t>(xstr[dim]);
    t->xTotal = static_cast<uint32_t>(xTotal);
    for (uint32_t k = 0; k < GATHER_MAX_DIMS; ++k) {
        t->sizes[k] = (k < cn) ? static_cast<uint32_t>(csz[k]) : 1;
        t->strides[k] = (k < cn) ? (cg[k] ? 0u : static_cast<uint32_t>(cst[k])) : 0;
    }

    // ---- vector geometry ----
    const bool rowMode = (gp == cn - 1);
    const uint32_t L = (esz == 8) ? 2 : 1;
    const uint32_t gsz = (esz == 8) ? 4 : (esz == 1 ? 2 : esz);
    const uint32_t minSz = esz < isz ? esz : isz;
    const uint32_t wS = 32 / minSz;
    const uint64_t M = static_cast<uint64_t>(csz[gp]);
    const uint64_t Xd = static_cast<uint64_t>(xsz[dim]);
    const uint64_t I = rowMode ? 1 : static_cast<uint64_t>(csz[cn - 1]);

    uint64_t te = 0, fixed = 0, lanes = 0;
    const uint64_t cand[4] = {4096, 2048, 1024, 512};
    for (int ci = 0; ci < 4; ++ci) {
        te = cand[ci];
        lanes = te * L;
        fixed = GatherR32(te * isz) + 5 * 4 * lanes + (L == 2 ? 4 * lanes : 0) + (isz == 8 ? 4 * te : 0) +
                GatherR32(gsz * lanes) + (esz == 1 ? GatherR32(te) : 0);
        if (fixed <= 72 * 1024) {
            break;
        }
    }
    bool vecOk = fixed + 4096 < ubUsable;
    const uint64_t slabBudget = vecOk ? ubUsable - fixed - 512 : 0;
    const uint64_t selfBytes = GatherR32(gsz * lanes);
    // outer dims: every coalesced dim except the gather dim and (column mode) the inner dim
    uint64_t outerCnt = 1;
    uint32_t nO = 0;
    for (int64_t k = 0; k < cn; ++k) {
        if (k == gp || (!rowMode && k == cn - 1)) {
            continue;
        }
        t->osz[nO] = static_cast<uint32_t>(csz[k]);
        t->oxst[nO] = static_cast<uint32_t>(cst[k]);
        t->oist[nO] = static_cast<uint32_t>(cist[k]);
        outerCnt *= static_cast<uint64_t>(csz[k]);
        ++nO;
    }
    for (uint32_t k = nO; k < GATHER_MAX_DIMS; ++k) {
        t->osz[k] = 1;
        t->oxst[k] = 0;
        t->oist[k] = 0;
    }
    uint64_t wB = wS, R = 0, nChunks = 1, slabG = 0, slabRaw = 0, slabTotal = 0;
    uint64_t kr = 1, mPad = te, xdPad = 0;
    if (vecOk) {
        if (rowMode) {
            const uint64_t perElem = L * gsz + (esz == 1 ? 1 : 0);
            const uint64_t xdr = (Xd + 31) / 32 * 32;
            if (xdr * perElem + 64 <= slabBudget) {
                R = Xd;
                nChunks = 1;
                // several short outer rows per tile
                const uint64_t mp = (M + wS - 1) / wS * wS;
                if (nO == 1 && mp * 2 <= te && outerCnt > 1) {
                    uint64_t k1 = te / mp;
                    const uint64_t k2 = (slabBudget - 64) / (xdr * perElem);
                    k1 = k1 < k2 ? k1 : k2;
                    k1 = k1 < 4095 ? k1 : 4095;
                    const uint64_t spread = (outerCnt + 2ULL * coreNum - 1) / (2ULL * coreNum);
                    k1 = k1 < spread ? k1 : spread;
                    if (k1 > 1) {
                        kr = k1;
                        mPad = mp;
                        xdPad = xdr;
                    }
                }
            } else {
                R = (slabBudget - selfBytes - 64) / perElem / 32 * 32;
                nChunks = (Xd + R - 1) / R;
            }
            const uint64_t rr = (kr > 1) ? kr * xdPad : (R + 31) / 32 * 32;
            slabG = GatherR32(rr * L * gsz);
            slabRaw = esz == 1 ? GatherR32(rr) : 0;
        } else {
            const uint64_t iCap = (I + wS - 1) / wS * wS;
            auto perRow = [&](uint64_t wb) { return wb * L * gsz + (esz == 1 ? wb : 0); };
            if (Xd * perRow(wS) + 64 <= slabBudget) {
                while (wB * 2 <= te && wB * 2 <= iCap && wB * 2 <= 1024 &&
                       Xd * perRow(wB * 2) + 64 <= slabBudget) {
                    wB *= 2;
                }
                R = Xd;
                nChunks = 1;
            } else {
                R = (slabBudget - selfBytes - 64) / perRow(wS);
                nChunks = (Xd + R - 1) / R;
            }
            slabG = GatherR32(R * wB * L * gsz);
            slabRaw = esz == 1 ? GatherR32(R * wB) : 0;
        }
        if (R == 0) {
            vecOk = false;
        }
        slabTotal = slabG + (nChunks > 1 ? selfBytes : 0);
        if (fixed + slabTotal + slabRaw > ubUsable) {
            vecOk = false;
        }
    }

    uint64_t blockDim = 1;
    if (vecOk && total > 0) {
        const uint64_t mt = rowMode ? (kr > 1 ? M : te) : te / wB;
        const uint64_t mTiles = (M + mt - 1) / mt;
        const uint64_t cBlocks = rowMode ? 1 : (I + wB - 1) / wB;
        const uint64_t rowGroups = rowMode ? (outerCnt + kr - 1) / kr : outerCnt;
        const uint64_t cols = rowGroups * cBlocks;
        uint64_t mg = 1;
        if (cols < 4ULL * coreNum) {
            mg = (4ULL * coreNum + cols - 1) / cols;
            if (mg > mTiles) {
                mg = mTiles;
            }
        }
        const uint64_t mgTiles = (mTiles + mg - 1) / mg;
        mg = (mTiles + mgTiles - 1) / mgTiles;
        const uint64_t units = cols * mg;
        blockDim = units < coreNum ? units : coreNum;
        if (blockDim == 0) {
            blockDim = 1;
        }
        t->mode = 1;
        t->totalLength = static_cast<uint32_t>(units);
        t->formerNum = static_cast<uint32_t>(units % blockDim);
        t->formerLength = static_cast<uint32_t>(units / blockDim + 1);
        t->tailLength = static_cast<uint32_t>(units / blockDim);
        t->rowMode = rowMode ? 1 : 0;
        t->te = static_cast<uint32_t>(te);
        t->wB = static_cast<uint32_t>(wB);
        t->mt = static_cast<uint32_t>(mt);
        t->mTiles = static_cast<uint32_t>(mTiles);
        t->cBlocks = static_cast<uint32_t>(cBlocks);
        t->mg = static_cast<uint32_t>(mg);
        t->mgTiles = static_cast<uint32_t>(mgTiles);
        t->rChunk = static_cast<uint32_t>(R);
        t->nChunks = static_cast<uint32_t>(nChunks);
        t->m = static_cast<uint32_t>(M);
        t->xd = static_cast<uint32_t>(Xd);
        t->inner = static_cast<uint32_t>(I);
        t->gS = static_cast<uint32_t>(xstr[dim]);
        t->gIS = static_cast<uint32_t>(cist[gp]);
        t->nO = nO;
        t->slabGBytes = static_cast<uint32_t>(slabG);
        t->slabBytes = static_cast<uint32_t>(slabTotal);
        t->slabRawBytes = static_cast<uint32_t>(slabRaw);
        t->idxRawBytes = static_cast<uint32_t>(GatherR32(te * isz));
        t->laneBytes = static_cast<uint32_t>(4 * lanes);
        t->outGBytes = static_cast<uint32_t>(GatherR32(gsz * lanes));
        t->outI8Bytes = static_cast<uint32_t>(esz == 1 ? GatherR32(te) : 32);
        t->kr = static_cast<uint32_t>(kr);
        t->mPad = static_cast<uint32_t>(mPad);
        t->xdPad = static_cast<uint32_t>(xdPad);
        t->outerCnt = static_cast<uint32_t>(outerCnt);
    } else {
        const uint64_t units = (total + GATHER_SPLIT_UNIT - 1) / GATHER_SPLIT_UNIT;
        blockDim = units < coreNum ? units : coreNum;
        if (blockDim == 0) {
            blockDim = 1;
        }
        const uint64_t base = units / blockDim;
        t->mode = 0;
        t->totalLength = static_cast<uint32_t>(total);
        t->formerNum = static_cast<uint32_t>(units % blockDim);
        t->formerLength = static_cast<uint32_t>((base + 1) * GATHER_SPLIT_UNIT);
        t->tailLength = static_cast<uint32_t>(base * GATHER_SPLIT_UNIT);
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
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("index")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_INT8, ge::DT_INT8, ge::DT_INT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_BF16, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(OPTIONAL).Int(0);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(GatherCustom);
}  // namespace ops
