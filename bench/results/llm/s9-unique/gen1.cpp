// Unique (torch.unique sorted, return_inverse) for Ascend 910B.
// Paths: (a) small key space (8-bit, 16-bit floats, ints with max-min < 65536): per-tile sort + dedup,
//        presence tables merged by block 0, rank table, inverse by Gather of the rank table.
//        (b) wide keys (fp32, ints with range < 2^24, N <= 2^24): exact float sort keys, sorted runs of
//        2048 in a GM workspace, 4-way MrgSort passes, dedup + ranks, second sort by index for inverse.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct UniqueCustomTilingData {
    uint32_t total;
    uint32_t numTiles;
    uint32_t returnInverse;
    uint32_t sortEnabled;
    uint64_t presOff;
    uint64_t rankOff;
    uint64_t bufAOff;
    uint64_t bufBOff;
};
REGISTER_TILING_DEFAULT(UniqueCustomTilingData);

constexpr uint32_t UQ_TILE = 2048;
constexpr uint32_t UQ_MCH = 2048;
constexpr uint32_t UQ_T3 = 1024;
constexpr uint32_t UQ_UBSZ = 180224;
constexpr uint64_t UQ_SLOT_MM = 0;
constexpr uint64_t UQ_SLOT_CNT = 4096;
constexpr uint64_t UQ_SLOT_BYTES = 8192;
constexpr uint64_t UQ_PRES_STRIDE = 65536;
constexpr uint64_t UQ_RANK_BYTES = 131072;
constexpr uint32_t UQ_YCH = 4096;

using namespace AscendC;

template <typename A, typename B> struct UqSame { static constexpr bool value = false; };
template <typename A> struct UqSame<A, A> { static constexpr bool value = true; };

// UB byte offsets of the tile phases
constexpr uint32_t U_X = 0;
constexpr uint32_t U_S = 16384;
constexpr uint32_t U_IDX = 24576;
constexpr uint32_t U_SORT = 32768;
constexpr uint32_t U_TMP = 49152;
constexpr uint32_t U_V = 65536;
constexpr uint32_t U_SIDX = 73984;
constexpr uint32_t U_PREV = 82176;
constexpr uint32_t U_MASK = 90368;
constexpr uint32_t U_OFFP = 90624;
constexpr uint32_t U_SMALL = 98816;
constexpr uint32_t U_F = 99072;
constexpr uint32_t U_G = 107520;
constexpr uint32_t U_GT = 115968;
constexpr uint32_t U_OFF1 = 124160;
constexpr uint32_t U_OFF2 = 132352;
constexpr uint32_t U_OFF4 = 140544;
constexpr uint32_t U_ONES = 148736;
constexpr uint32_t U_ZEROS = 156928;

__aicore__ inline void UqFence() { PipeBarrier<PIPE_ALL>(); }

template <typename T>
class KernelUnique {
public:
    static constexpr bool IS_HALF = UqSame<T, half>::value;
    static constexpr bool IS_BF16 = UqSame<T, bfloat16_t>::value;
    static constexpr bool IS_F32 = UqSame<T, float>::value;
    static constexpr bool IS_I8 = UqSame<T, int8_t>::value;
    static constexpr bool IS_U8 = UqSame<T, uint8_t>::value;
    static constexpr bool IS_I32 = UqSame<T, int32_t>::value;
    static constexpr bool IS_I64 = UqSame<T, int64_t>::value;
    static constexpr bool IS_F16B = IS_HALF || IS_BF16;
    static constexpr bool IS_INT = IS_I32 || IS_I64;

    __aicore__ inline KernelUnique() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR inv, GM_ADDR usr, const UniqueCustomTilingData& t)
    {
        N_ = t.total;
        nt_ = t.numTiles;
        ri_ = t.returnInverse != 0;
        sortEn_ = t.sortEnabled != 0;
        presOff_ = t.presOff;
        rankOff_ = t.rankOff;
        aOff_ = t.bufAOff;
        bOff_ = t.bufBOff;
        ws_ = (__gm__ uint8_t*)usr;
        blk_ = static_cast<uint32_t>(GetBlockIdx());
        bnum_ = static_cast<uint32_t>(GetBlockNum());
        uint32_t base = nt_ / bnum_;
        uint32_t rem = nt_ % bnum_;
        tBeg_ = blk_ * base + (blk_ < rem ? blk_ : rem);
        tEnd_ = tBeg_ + base + (blk_ < rem ? 1 : 0);
        xGm_.SetGlobalBuffer((__gm__ T*)x, N_);
        yGm_.SetGlobalBuffer((__gm__ T*)y, N_);
        if (ri_ && inv != nullptr) {
            invGm_.SetGlobalBuffer((__gm__ int64_t*)inv, N_);
        } else {
            ri_ = false;
        }
        pipe_.InitBuffer(buf_, UQ_UBSZ);
    }

    __aicore__ inline void Process()
    {
        int64_t R = 0;
        bool table = false;
        if constexpr (IS_INT) {
            MinMax();
            R = gmax_ - gmin_ + 1;
            table = (R <= 65536);
        } else if constexpr (IS_F16B) {
            R = 65536;
            table = true;
        } else if constexpr (IS_I8 || IS_U8) {
            R = 256;
            table = true;
        }
        const bool useSort = sortEn_ && !table && (IS_F32 || R <= (int64_t)(1 << 24));
        if (useSort) {
            SortPath();
        } else if (table) {
            R_ = static_cast<uint32_t>(R);
            Rpad_ = (R_ + 31) / 32 * 32;
            TableMark();
            UqFence();
            SyncAll();
            if (blk_ == 0) {
                TableRank();
            }
            if (ri_) {
                UqFence();
                SyncAll();
                TableInverse();
            }
        }
    }

private:
    template <typename U> __aicore__ inline LocalTensor<U> L(uint32_t off, uint32_t count)
    {
        return buf_.GetWithOffset<U>(count, off);
    }
    template <typename U> __aicore__ inline GlobalTensor<U> WsG(uint64_t off, uint64_t count)
    {
        GlobalTensor<U> g;
        g.SetGlobalBuffer((__gm__ U*)(ws_ + off), count);
        return g;
    }
    template <typename U> __aicore__ inline void CopyIn(const LocalTensor<U>& dst, const GlobalTensor<U>& src, uint32_t count)
    {
        DataCopyExtParams cp{1, static_cast<uint32_t>(count * sizeof(U)), 0, 0, 0};
        DataCopyPadExtParams<U> pad{false, 0, 0, 0};
        DataCopyPad(dst, src, cp, pad);
    }
    template <typename U> __aicore__ inline void CopyOut(const GlobalTensor<U>& dst, const LocalTensor<U>& src, uint32_t count)
    {
        DataCopyExtParams cp{1, static_cast<uint32_t>(count * sizeof(U)), 0, 0, 0};
        DataCopyPad(dst, src, cp);
    }
    __aicore__ inline uint32_t TileLen(uint32_t t)
    {
        uint64_t s = (uint64_t)t * UQ_TILE;
        uint64_t r = (uint64_t)N_ - s;
        return r < UQ_TILE ? static_cast<uint32_t>(r) : UQ_TILE;
    }

    __aicore__ inline void MakeOff(uint32_t off, int32_t add)
    {
        LocalTensor<int32_t> idx = L<int32_t>(U_IDX, UQ_TILE);
        LocalTensor<int32_t> o = L<int32_t>(off, UQ_TILE);
        Adds(o, idx, add, UQ_TILE);
        Add(o, o, o, UQ_TILE);
        Add(o, o, o, UQ_TILE);
    }

    __aicore__ inline void InitConst()
    {
        UqFence();
        LocalTensor<int32_t> idx = L<int32_t>(U_IDX, UQ_TILE);
        CreateVecIndex(idx, (int32_t)0, UQ_TILE);
        MakeOff(U_OFFP, 7);
        MakeOff(U_OFF1, 7);
        MakeOff(U_OFF2, 6);
        MakeOff(U_OFF4, 4);
        LocalTensor<float> v = L<float>(U_V, UQ_TILE + 8);
        Duplicate(v, 0.0f, UQ_TILE + 8);
        LocalTensor<float> f = L<float>(U_F, UQ_TILE + 8);
        Duplicate(f, 0.0f, UQ_TILE + 8);
        LocalTensor<float> g = L<float>(U_G, UQ_TILE + 8);
        Duplicate(g, 0.0f, UQ_TILE + 8);
        LocalTensor<float> ones = L<float>(U_ONES, UQ_TILE);
        Duplicate(ones, 1.0f, UQ_TILE);
        LocalTensor<float> zeros = L<float>(U_ZEROS, UQ_TILE);
        Duplicate(zeros, 0.0f, UQ_TILE);
        UqFence();
    }

    // scores = -(exact float key) of the loaded x tile (n elements) into U_S
    __aicore__ inline void MakeScore(uint32_t n)
    {
        LocalTensor<float> s = L<float>(U_S, UQ_TILE);
        if constexpr (IS_F32) {
            LocalTensor<float> xf = L<float>(U_X, UQ_TILE);
            Muls(s, xf, -1.0f, n);
        } else if constexpr (IS_F16B) {
            LocalTensor<T> xt = L<T>(U_X, UQ_TILE);
            Cast(s, xt, RoundMode::CAST_NONE, n);
            Muls(s, s, -1.0f, n);
        } else if constexpr (IS_I8 || IS_U8) {
            LocalTensor<T> xt = L<T>(U_X, UQ_TILE);
            LocalTensor<half> h = L<half>(U_TMP, UQ_TILE);
            Cast(h, xt, RoundMode::CAST_NONE, n);
            Cast(s, h, RoundMode::CAST_NONE, n);
            Muls(s, s, -1.0f, n);
        } else {
            LocalTensor<int32_t> k = L<int32_t>(U_TMP, UQ_TILE);
            if constexpr (IS_I64) {
                LocalTensor<int64_t> x64 = L<int64_t>(U_X, UQ_TILE);
                Cast(k, x64, RoundMode::CAST_NONE, n);
                Adds(k, k, negMin_, n);
            } else {
                LocalTensor<int32_t> x32 = L<int32_t>(U_X, UQ_TILE);
                Adds(k, x32, negMin_, n);
            }
            Cast(s, k, RoundMode::CAST_RINT, n);
            Muls(s, s, -1.0f, n);
        }
    }

    // Concat + full Sort of nPad scores in U_S with the given index -> U_SORT
    __aicore__ inline void SortTile(uint32_t nPad, LocalTensor<uint32_t>& index)
    {
        LocalTensor<float> s = L<float>(U_S, UQ_TILE);
        LocalTensor<float> conc = L<float>(U_PREV, UQ_TILE);
        LocalTensor<float> tmp = L<float>(U_TMP, 2 * UQ_TILE);
        LocalTensor<float> sorted = L<float>(U_SORT, 2 * UQ_TILE);
        Concat(conc, s, tmp, static_cast<int32_t>(nPad / 16));
        Sort<float, true>(sorted, conc, index, tmp, static_cast<int32_t>(nPad / 32));
    }

    __aicore__ inline void MinMax()
    {
        LocalTensor<int32_t> amin = L<int32_t>(U_F, UQ_TILE);
        LocalTensor<int32_t> amax = L<int32_t>(U_G, UQ_TILE);
        Duplicate(amin, (int32_t)2147483647, UQ_TILE);
        Duplicate(amax, (int32_t)(-2147483647 - 1), UQ_TILE);
        for (uint32_t t = tBeg_; t < tEnd_; ++t) {
            uint32_t n = TileLen(t);
            UqFence();
            LocalTensor<T> xt = L<T>(U_X, UQ_TILE);
            CopyIn(xt, xGm_[(uint64_t)t * UQ_TILE], n);
            UqFence();
            LocalTensor<int32_t> v;
            if constexpr (IS_I64) {
                v = L<int32_t>(U_S, UQ_TILE);
                LocalTensor<int64_t> x64 = L<int64_t>(U_X, UQ_TILE);
                Cast(v, x64, RoundMode::CAST_NONE, n);
            } else {
                v = L<int32_t>(U_X, UQ_TILE);
            }
            Min(amin, amin, v, n);
            Max(amax, amax, v, n);
        }
        for (uint32_t len = UQ_TILE / 2; len >= 8; len >>= 1) {
            LocalTensor<int32_t> a2 = amin[len];
            LocalTensor<int32_t> b2 = amax[len];
            Min(amin, amin, a2, len);
            Max(amax, amax, b2, len);
        }
        UqFence();
        int32_t mn = amin.GetValue(0);
        int32_t mx = amax.GetValue(0);
        for (uint32_t i = 1; i < 8; ++i) {
            int32_t a = amin.GetValue(i);
            int32_t b = amax.GetValue(i);
            if (a < mn) mn = a;
            if (b > mx) mx = b;
        }
        LocalTensor<int32_t> sm = L<int32_t>(U_SMALL, 8);
        for (uint32_t i = 0; i < 8; ++i) sm.SetValue(i, 0);
        sm.SetValue(0, mn);
        sm.SetValue(1, mx);
        UqFence();
        GlobalTensor<int32_t> slot = WsG<int32_t>(UQ_SLOT_MM + (uint64_t)blk_ * 32, 8);
        CopyOut(slot, sm, 8);
        UqFence();
        SyncAll();
        LocalTensor<int32_t> sl = L<int32_t>(U_GT, 2048);
        GlobalTensor<int32_t> slots = WsG<int32_t>(UQ_SLOT_MM, (uint64_t)bnum_ * 8);
        CopyIn(sl, slots, bnum_ * 8);
        UqFence();
        int32_t gmn = 2147483647;
        int32_t gmx = -2147483647 - 1;
        for (uint32_t c = 0; c < bnum_; ++c) {
            int32_t a = sl.GetValue(c * 8);
            int32_t b = sl.GetValue(c * 8 + 1);
            if (a < gmn) gmn = a;
            if (b > gmx) gmx = b;
        }
        gmin_ = gmn;
        gmax_ = gmx;
        gmin32_ = gmn;
        negMin_ = static_cast<int32_t>(0u - static_cast<uint32_t>(gmn));
    }

    // ---------------- table path ----------------
    __aicore__ inline void TableMark()
    {
        InitConst();
        LocalTensor<uint8_t> pres = L<uint8_t>(U_F, 65536);
        LocalTensor<int32_t> pres32 = L<int32_t>(U_F, 16384);
        Duplicate(pres32, (int32_t)0, static_cast<int32_t>(Rpad_ / 4));
        LocalTensor<float> s = L<float>(U_S, UQ_TILE);
        LocalTensor<uint32_t> su = L<uint32_t>(U_S, UQ_TILE);
        LocalTensor<float> vfull = L<float>(U_V, UQ_TILE + 8);
        LocalTensor<float> v8 = L<float>(U_V + 32, UQ_TILE);
        LocalTensor<uint32_t> vu = L<uint32_t>(U_V, UQ_TILE + 8);
        LocalTensor<uint32_t> sidx = L<uint32_t>(U_SIDX, UQ_TILE);
        LocalTensor<float> prev = L<float>(U_PREV, UQ_TILE);
        LocalTensor<uint32_t> dsti = L<uint32_t>(U_PREV, UQ_TILE);
        LocalTensor<uint8_t> mask = L<uint8_t>(U_MASK, 256);
        LocalTensor<uint32_t> mask32 = L<uint32_t>(U_MASK, 64);
        LocalTensor<uint32_t> offp = L<uint32_t>(U_OFFP, UQ_TILE);
        LocalTensor<uint32_t> idxu = L<uint32_t>(U_IDX, UQ_TILE);
        LocalTensor<uint16_t> xb = L<uint16_t>(U_X, UQ_TILE);
        LocalTensor<float> sorted = L<float>(U_SORT, 2 * UQ_TILE);
        LocalTensor<T> xt = L<T>(U_X, UQ_TILE);
        uint32_t marked = 0;
        for (uint32_t t = tBeg_; t < tEnd_; ++t) {
            uint32_t n = TileLen(t);
            uint32_t nPad = (n + 31) / 32 * 32;
            uint32_t cmpN = (nPad + 63) / 64 * 64;
            UqFence();
            CopyIn(xt, xGm_[(uint64_t)t * UQ_TILE], n);
            UqFence();
            MakeScore(n);
            UqFence();
            uint32_t padBits = su.GetValue(0);
            for (uint32_t i = n; i < nPad; ++i) su.SetValue(i, padBits);
            UqFence();
            SortTile(nPad, idxu);
            Extract(v8, sidx, sorted, static_cast<int32_t>(nPad / 32));
            UqFence();
            vu.SetValue(7, 0x7FC00000u);
            UqFence();
            Gather(prev, vfull, offp, 0u, cmpN);
            Compare(mask, v8, prev, CMPMODE::NE, cmpN);
            uint64_t cnt = 0;
            GatherMask(s, v8, mask32, true, nPad, {1, 1, 8, 0}, cnt);
            if constexpr (IS_F16B) {
                uint64_t cnt2 = 0;
                LocalTensor<float> dstiF = L<float>(U_PREV, UQ_TILE);
                LocalTensor<float> sidxF = L<float>(U_SIDX, UQ_TILE);
                GatherMask(dstiF, sidxF, mask32, true, nPad, {1, 1, 8, 0}, cnt2);
            }
            UqFence();
            for (uint32_t j = 0; j < static_cast<uint32_t>(cnt); ++j) {
                if constexpr (IS_F16B) {
                    uint32_t pos = dsti.GetValue(j);
                    uint32_t bits = xb.GetValue(pos);
                    if (bits == 0x8000u) bits = 0;
                    pres.SetValue(bits, (uint8_t)1);
                } else {
                    float sc = s.GetValue(j);
                    int32_t k = static_cast<int32_t>(-sc);
                    if constexpr (IS_I8) k += 128;
                    if (pres.GetValue(k) == 0) {
                        pres.SetValue(k, (uint8_t)1);
                        ++marked;
                    }
                }
            }
            if constexpr (!IS_F16B) {
                if (marked >= R_) break;
            }
        }
        UqFence();
        GlobalTensor<uint8_t> pg = WsG<uint8_t>(presOff_ + (uint64_t)blk_ * UQ_PRES_STRIDE, Rpad_);
        CopyOut(pg, pres, Rpad_);
        UqFence();
    }

    __aicore__ inline void FlushY(LocalTensor<T>& yb, uint32_t& yc, uint64_t& yOut)
    {
        if (yc == 0) return;
        UqFence();
        GlobalTensor<T> yg = yGm_[yOut];
        CopyOut(yg, yb, yc);
        UqFence();
        yOut += yc;
        yc = 0;
    }

    __aicore__ inline void EmitY(LocalTensor<T>& yb, uint32_t k, uint32_t& yc, uint64_t& yOut)
    {
        if constexpr (IS_F16B) {
            LocalTensor<uint16_t> y16 = yb.template ReinterpretCast<uint16_t>();
            y16.SetValue(yc, (uint16_t)k);
        } else if constexpr (IS_I8) {
            yb.SetValue(yc, (int8_t)((int32_t)k - 128));
        } else if constexpr (IS_U8) {
            yb.SetValue(yc, (uint8_t)k);
        } else if constexpr (IS_I32) {
            yb.SetValue(yc, (int32_t)(gmin_ + (int64_t)k));
        } else if constexpr (IS_I64) {
            yb.SetValue(yc, (int64_t)(gmin_ + (int64_t)k));
        }
        ++yc;
        if (yc == UQ_YCH) FlushY(yb, yc, yOut);
    }

    __aicore__ inline void TableRank()
    {
        LocalTensor<uint8_t> mg = L<uint8_t>(0, 65536);
        LocalTensor<uint16_t> mg16 = L<uint16_t>(0, 32768);
        LocalTensor<uint8_t> tmp8 = L<uint8_t>(65536, 8192);
        LocalTensor<uint16_t> tmp16 = L<uint16_t>(65536, 4096);
        LocalTensor<uint16_t> rk = L<uint16_t>(73728, 32768);
        LocalTensor<T> yb = L<T>(139264, UQ_YCH);
        GlobalTensor<uint16_t> rankG = WsG<uint16_t>(rankOff_, 65536);
        UqFence();
        GlobalTensor<uint8_t> p0 = WsG<uint8_t>(presOff_, Rpad_);
        CopyIn(mg, p0, Rpad_);
        UqFence();
        for (uint32_t c = 1; c < bnum_; ++c) {
            for (uint32_t off = 0; off < Rpad_; off += 8192) {
                uint32_t len = Rpad_ - off < 8192 ? Rpad_ - off : 8192;
                UqFence();
                GlobalTensor<uint8_t> pc = WsG<uint8_t>(presOff_ + (uint64_t)c * UQ_PRES_STRIDE + off, len);
                CopyIn(tmp8, pc, len);
                UqFence();
                LocalTensor<uint16_t> dst = mg16[off / 2];
                LocalTensor<int16_t> dstI = mg16[off / 2].template ReinterpretCast<int16_t>();
                LocalTensor<int16_t> tmpI = tmp16.template ReinterpretCast<int16_t>();
                Add(dstI, dstI, tmpI, static_cast<int32_t>(len / 2));
            }
        }
        UqFence();
        uint32_t r = 0;
        uint32_t yc = 0;
        uint64_t yOut = 0;
        if constexpr (IS_F16B) {
            uint32_t zeroP = (uint32_t)mg.GetValue(0) | (uint32_t)mg.GetValue(0x8000);
            for (int32_t bb = 0xFFFF; bb >= 0x8001; --bb) {
                if (mg.GetValue(bb) != 0) {
                    rk.SetValue(bb - 0x8000, (uint16_t)r);
                    EmitY(yb, (uint32_t)bb, yc, yOut);
                    ++r;
                }
            }
            rk.SetValue(0, (uint16_t)r);
            UqFence();
            GlobalTensor<uint16_t> rn = rankG[0x8000];
            CopyOut(rn, rk, 32768);
            UqFence();
            if (zeroP != 0) {
                rk.SetValue(0, (uint16_t)r);
                EmitY(yb, 0u, yc, yOut);
                ++r;
            }
            for (uint32_t bb = 1; bb <= 0x7FFF; ++bb) {
                if (mg.GetValue(bb) != 0) {
                    rk.SetValue(bb, (uint16_t)r);
                    EmitY(yb, bb, yc, yOut);
                    ++r;
                }
            }
            UqFence();
            CopyOut(rankG, rk, 32768);
            UqFence();
        } else {
            for (uint32_t h = 0; h < 2; ++h) {
                uint32_t base = h * 32768;
                if (base >= R_) break;
                uint32_t lim = R_ - base < 32768 ? R_ - base : 32768;
                for (uint32_t i = 0; i < lim; ++i) {
                    if (mg.GetValue(base + i) != 0) {
                        rk.SetValue(i, (uint16_t)r);
                        EmitY(yb, base + i, yc, yOut);
                        ++r;
                    }
                }
                UqFence();
                GlobalTensor<uint16_t> rh = rankG[base];
                CopyOut(rh, rk, 32768);
                UqFence();
            }
        }
        FlushY(yb, yc, yOut);
    }

    __aicore__ inline void TableInverse()
    {
        LocalTensor<uint16_t> rk = L<uint16_t>(0, 65536);
        LocalTensor<T> x3 = L<T>(131072, 8192 / sizeof(T));
        LocalTensor<uint16_t> x3u = L<uint16_t>(131072, 4224);
        LocalTensor<uint32_t> offi = L<uint32_t>(139520, 2048);
        LocalTensor<uint16_t> w16 = L<uint16_t>(147712, 2048);
        LocalTensor<int32_t> w32 = L<int32_t>(147712, 1024);
        LocalTensor<int32_t> offs = L<int32_t>(151808, 1024);
        LocalTensor<uint32_t> offsu = L<uint32_t>(151808, 1024);
        LocalTensor<uint16_t> r16 = L<uint16_t>(155904, 1152);
        LocalTensor<int64_t> inv = L<int64_t>(158208, 1024);
        LocalTensor<half> h = L<half>(166400, 1024);
        LocalTensor<int32_t> k32 = L<int32_t>(168448, 1024);
        UqFence();
        GlobalTensor<uint16_t> rankG = WsG<uint16_t>(rankOff_, 65536);
        CopyIn(rk, rankG, 65536);
        for (uint32_t i = 0; i < 2048; ++i) {
            offi.SetValue(i, (i & 1u) ? 2048u : i);
        }
        UqFence();
        LocalTensor<int32_t> rz = L<int32_t>(155904 + 2048, 8);
        Duplicate(rz, (int32_t)0, 8);
        UqFence();
        uint64_t e0 = (uint64_t)tBeg_ * UQ_TILE;
        uint64_t e1 = (uint64_t)tEnd_ * UQ_TILE;
        if (e1 > N_) e1 = N_;
        for (uint64_t e = e0; e < e1; e += UQ_T3) {
            uint32_t n = (e1 - e) < UQ_T3 ? static_cast<uint32_t>(e1 - e) : UQ_T3;
            UqFence();
            CopyIn(x3, xGm_[e], n);
            UqFence();
            if constexpr (IS_F16B) {
                LocalTensor<int32_t> xz = L<int32_t>(131072 + 2048, 8);
                Duplicate(xz, (int32_t)0, 8);
                Gather(w16, x3u, offi, 0u, 2 * n);
                Add(offs, w32, w32, n);
            } else if constexpr (IS_I8 || IS_U8) {
                Cast(h, x3, RoundMode::CAST_NONE, n);
                if constexpr (IS_I8) {
                    Adds(h, h, (half)128.0f, n);
                }
                Cast(k32, h, RoundMode::CAST_RINT, n);
                Add(offs, k32, k32, n);
            } else if constexpr (IS_I32) {
                Adds(k32, x3, negMin_, n);
                Add(offs, k32, k32, n);
            } else if constexpr (IS_I64) {
                Cast(k32, x3, RoundMode::CAST_NONE, n);
                Adds(k32, k32, negMin_, n);
                Add(offs, k32, k32, n);
            }
            Gather(r16, rk, offsu, 0u, n);
            Gather(w16, r16, offi, 0u, 2 * n);
            Cast(inv, w32, RoundMode::CAST_NONE, n);
            UqFence();
            GlobalTensor<int64_t> ig = invGm_[e];
            CopyOut(ig, inv, n);
        }
        UqFence();
    }

    // ---------------- sort path ----------------
    __aicore__ inline void MergeGroup(uint64_t srcOff, uint64_t dstOff, uint64_t start, uint64_t L0)
    {
        uint64_t qs[4];
        uint64_t ql[4];
        uint64_t qp[4];
        uint32_t k = 0;
        for (uint32_t j = 0; j < 4; ++j) {
            uint64_t s = start + (uint64_t)j * L0;
            if (s < N_) {
                uint64_t len = N_ - s < L0 ? N_ - s : L0;
                qs[k] = s;
                ql[k] = len;
                qp[k] = 0;
                ++k;
            }
        }
        GlobalTensor<float> sg = WsG<float>(srcOff, 2ull * N_);
        GlobalTensor<float> dg = WsG<float>(dstOff, 2ull * N_);
        LocalTensor<float> q0 = L<float>(0, 2 * UQ_MCH);
        LocalTensor<float> q1 = L<float>(16384, 2 * UQ_MCH);
        LocalTensor<float> q2 = L<float>(32768, 2 * UQ_MCH);
        LocalTensor<float> q3 = L<float>(49152, 2 * UQ_MCH);
        LocalTensor<float> ob = L<float>(65536, 8 * UQ_MCH);
        uint64_t out = start;
        while (k >= 2) {
            uint16_t lens[4] = {0, 0, 0, 0};
            UqFence();
            for (uint32_t j = 0; j < k; ++j) {
                uint64_t rem = ql[j] - qp[j];
                uint32_t c = rem < UQ_MCH ? static_cast<uint32_t>(rem) : UQ_MCH;
                lens[j] = static_cast<uint16_t>(c);
                LocalTensor<float> qd = (j == 0) ? q0 : ((j == 1) ? q1 : ((j == 2) ? q2 : q3));
                GlobalTensor<float> gs = sg[2ull * (qs[j] + qp[j])];
                CopyIn(qd, gs, 2 * c);
            }
            UqFence();
            uint16_t vb = (k == 2) ? 0b0011 : ((k == 3) ? 0b0111 : 0b1111);
            MrgSort4Info info(lens, true, vb, 1);
            MrgSortSrcList<float> list(q0, q1, q2, q3);
            MrgSort<float>(ob, list, info);
            UqFence();
            uint16_t r0 = 0, r1 = 0, r2 = 0, r3 = 0;
            GetMrgSortResult(r0, r1, r2, r3);
            uint32_t rr[4] = {r0, r1, r2, r3};
            uint32_t tot = 0;
            for (uint32_t j = 0; j < k; ++j) {
                tot += rr[j];
                qp[j] += rr[j];
            }
            if (tot > 0) {
                GlobalTensor<float> gd = dg[2ull * out];
                CopyOut(gd, ob, 2 * tot);
            }
            out += tot;
            uint32_t nk = 0;
            for (uint32_t j = 0; j < k; ++j) {
                if (qp[j] < ql[j]) {
                    qs[nk] = qs[j];
                    ql[nk] = ql[j];
                    qp[nk] = qp[j];
                    ++nk;
                }
            }
            k = nk;
            UqFence();
        }
        if (k == 1) {
            for (uint64_t p = qp[0]; p < ql[0];) {
                uint64_t rem = ql[0] - p;
                uint32_t c = rem < 4 * UQ_MCH ? static_cast<uint32_t>(rem) : 4 * UQ_MCH;
                UqFence();
                GlobalTensor<float> gs = sg[2ull * (qs[0] + p)];
                CopyIn(ob, gs, 2 * c);
                UqFence();
                GlobalTensor<float> gd = dg[2ull * out];
                CopyOut(gd, ob, 2 * c);
                out += c;
                p += c;
            }
        }
        UqFence();
    }

    // returns 1 when the result ends in dstOff, 0 when in srcOff
    __aicore__ inline uint32_t MergeAll(uint64_t srcOff, uint64_t dstOff)
    {
        uint64_t cur = srcOff;
        uint64_t oth = dstOff;
        uint32_t which = 0;
        for (uint64_t L0 = UQ_TILE; L0 < N_; L0 *= 4) {
            uint64_t groups = (N_ + 4 * L0 - 1) / (4 * L0);
            for (uint64_t g = blk_; g < groups; g += bnum_) {
                MergeGroup(cur, oth, g * 4 * L0, L0);
            }
            UqFence();
            SyncAll();
            uint64_t tmp = cur;
            cur = oth;
            oth = tmp;
            which ^= 1u;
        }
        return which;
    }

    __aicore__ inline LocalTensor<float> Scan()
    {
        uint32_t curOff = U_F;
        uint32_t nxtOff = U_G;
        LocalTensor<float> gt = L<float>(U_GT, UQ_TILE);
        for (uint32_t i = 0; i < 3; ++i) {
            uint32_t tab = (i == 0) ? U_OFF1 : ((i == 1) ? U_OFF2 : U_OFF4);
            LocalTensor<float> curFull = L<float>(curOff, UQ_TILE + 8);
            LocalTensor<float> curD = L<float>(curOff + 32, UQ_TILE);
            LocalTensor<float> nxtD = L<float>(nxtOff + 32, UQ_TILE);
            LocalTensor<uint32_t> off = L<uint32_t>(tab, UQ_TILE);
            Gather(gt, curFull, off, 0u, UQ_TILE);
            Add(nxtD, curD, gt, UQ_TILE);
            uint32_t tt = curOff;
            curOff = nxtOff;
            nxtOff = tt;
        }
        for (uint32_t s = 8; s < UQ_TILE; s <<= 1) {
            LocalTensor<float> curD = L<float>(curOff + 32, UQ_TILE);
            LocalTensor<float> nxtD = L<float>(nxtOff + 32, UQ_TILE);
            LocalTensor<float> nxtS = nxtD[s];
            LocalTensor<float> curS = curD[s];
            Add(nxtS, curS, curD, static_cast<int32_t>(UQ_TILE - s));
            Adds(nxtD, curD, 0.0f, static_cast<int32_t>(s));
            uint32_t tt = curOff;
            curOff = nxtOff;
            nxtOff = tt;
        }
        return L<float>(curOff + 32, UQ_TILE);
    }

    __aicore__ inline void WriteY(uint32_t yRun, uint32_t cnt)
    {
        LocalTensor<float> d = L<float>(U_S, UQ_TILE);
        Muls(d, d, -1.0f, cnt);
        if constexpr (IS_F32) {
            Adds(d, d, 0.0f, cnt);
            UqFence();
            GlobalTensor<float> yg = yGm_[yRun];
            CopyOut(yg, d, cnt);
        } else if constexpr (IS_F16B) {
            Adds(d, d, 0.0f, cnt);
            LocalTensor<T> yh = L<T>(U_GT, UQ_TILE);
            Cast(yh, d, RoundMode::CAST_RINT, cnt);
            UqFence();
            GlobalTensor<T> yg = yGm_[yRun];
            CopyOut(yg, yh, cnt);
        } else if constexpr (IS_I8 || IS_U8) {
            LocalTensor<half> hh = L<half>(U_TMP, UQ_TILE);
            Cast(hh, d, RoundMode::CAST_RINT, cnt);
            LocalTensor<T> y8 = L<T>(U_GT, UQ_TILE);
            Cast(y8, hh, RoundMode::CAST_NONE, cnt);
            UqFence();
            GlobalTensor<T> yg = yGm_[yRun];
            CopyOut(yg, y8, cnt);
        } else if constexpr (IS_INT) {
            LocalTensor<int32_t> yi = L<int32_t>(U_GT, UQ_TILE);
            Cast(yi, d, RoundMode::CAST_RINT, cnt);
            Adds(yi, yi, gmin32_, cnt);
            if constexpr (IS_I32) {
                UqFence();
                GlobalTensor<int32_t> yg = yGm_[yRun];
                CopyOut(yg, yi, cnt);
            } else {
                LocalTensor<int64_t> y64 = L<int64_t>(U_TMP, UQ_TILE);
                Cast(y64, yi, RoundMode::CAST_NONE, cnt);
                UqFence();
                GlobalTensor<int64_t> yg = yGm_[yRun];
                CopyOut(yg, y64, cnt);
            }
        }
        UqFence();
    }

    __aicore__ inline uint32_t ProcessSorted(bool countOnly, uint64_t pOff, uint64_t qOff, uint32_t yRun)
    {
        InitConst();
        GlobalTensor<float> pg = WsG<float>(pOff, 2ull * N_);
        GlobalTensor<float> qg = WsG<float>(qOff, 2ull * N_);
        LocalTensor<float> sorted = L<float>(U_SORT, 2 * UQ_TILE);
        LocalTensor<float> small = L<float>(U_SMALL, 8);
        LocalTensor<uint32_t> smallu = L<uint32_t>(U_SMALL, 8);
        LocalTensor<float> vfull = L<float>(U_V, UQ_TILE + 8);
        LocalTensor<float> v8 = L<float>(U_V + 32, UQ_TILE);
        LocalTensor<uint32_t> vu = L<uint32_t>(U_V, UQ_TILE + 8);
        LocalTensor<uint32_t> sidx = L<uint32_t>(U_SIDX, UQ_TILE);
        LocalTensor<int32_t> sidxI = L<int32_t>(U_SIDX, UQ_TILE);
        LocalTensor<float> prev = L<float>(U_PREV, UQ_TILE);
        LocalTensor<uint8_t> mask = L<uint8_t>(U_MASK, 256);
        LocalTensor<uint32_t> mask32 = L<uint32_t>(U_MASK, 64);
        LocalTensor<uint32_t> offp = L<uint32_t>(U_OFFP, UQ_TILE);
        LocalTensor<float> s = L<float>(U_S, UQ_TILE);
        LocalTensor<uint32_t> su = L<uint32_t>(U_S, UQ_TILE);
        LocalTensor<float> fd = L<float>(U_F + 32, UQ_TILE);
        LocalTensor<float> ones = L<float>(U_ONES, UQ_TILE);
        LocalTensor<float> zeros = L<float>(U_ZEROS, UQ_TILE);
        LocalTensor<float> rankF = L<float>(U_GT, UQ_TILE);
        LocalTensor<int32_t> rankI = L<int32_t>(U_X, UQ_TILE);
        LocalTensor<uint32_t> rankU = L<uint32_t>(U_X, UQ_TILE);
        uint32_t lastBits = 0x7FC00000u;
        uint32_t cntAll = 0;
        for (uint32_t t = tBeg_; t < tEnd_; ++t) {
            uint32_t n = TileLen(t);
            uint32_t nPad = (n + 31) / 32 * 32;
            uint32_t cmpN = (nPad + 63) / 64 * 64;
            UqFence();
            GlobalTensor<float> src = pg[2ull * t * UQ_TILE];
            CopyIn(sorted, src, 2 * n);
            if (t == tBeg_ && t > 0) {
                GlobalTensor<float> ps = pg[2ull * t * UQ_TILE - 2];
                CopyIn(small, ps, 2);
            }
            UqFence();
            if (t == tBeg_) {
                lastBits = (t > 0) ? smallu.GetValue(0) : 0x7FC00000u;
            }
            Extract(v8, sidx, sorted, static_cast<int32_t>(nPad / 32));
            UqFence();
            vu.SetValue(7, lastBits);
            lastBits = vu.GetValue(8 + n - 1);
            UqFence();
            Gather(prev, vfull, offp, 0u, cmpN);
            Compare(mask, v8, prev, CMPMODE::NE, cmpN);
            uint64_t cnt = 0;
            GatherMask(s, v8, mask32, true, n, {1, 1, 8, 0}, cnt);
            uint32_t c32 = static_cast<uint32_t>(cnt);
            if (!countOnly) {
                if (c32 > 0) {
                    WriteY(yRun, c32);
                }
                if (ri_) {
                    Select(fd, mask, ones, zeros, SELMODE::VSEL_TENSOR_TENSOR_MODE, cmpN);
                    LocalTensor<float> cum = Scan();
                    Adds(rankF, cum, (float)yRun - 1.0f, cmpN);
                    Cast(rankI, rankF, RoundMode::CAST_RINT, cmpN);
                    Cast(s, sidxI, RoundMode::CAST_RINT, cmpN);
                    Muls(s, s, -1.0f, cmpN);
                    UqFence();
                    for (uint32_t i = n; i < nPad; ++i) su.SetValue(i, 0xFF800000u);
                    UqFence();
                    SortTile(nPad, rankU);
                    UqFence();
                    GlobalTensor<float> qd = qg[2ull * t * UQ_TILE];
                    CopyOut(qd, sorted, 2 * n);
                    UqFence();
                }
            }
            yRun += c32;
            cntAll += c32;
        }
        UqFence();
        return cntAll;
    }

    __aicore__ inline void SortPath()
    {
        InitConst();
        GlobalTensor<float> ag = WsG<float>(aOff_, 2ull * N_);
        LocalTensor<T> xt = L<T>(U_X, UQ_TILE);
        LocalTensor<int32_t> idxI = L<int32_t>(U_IDX, UQ_TILE);
        LocalTensor<int32_t> idxg = L<int32_t>(U_SIDX, UQ_TILE);
        LocalTensor<uint32_t> idxgU = L<uint32_t>(U_SIDX, UQ_TILE);
        LocalTensor<uint32_t> su = L<uint32_t>(U_S, UQ_TILE);
        LocalTensor<float> sorted = L<float>(U_SORT, 2 * UQ_TILE);
        for (uint32_t t = tBeg_; t < tEnd_; ++t) {
            uint32_t n = TileLen(t);
            uint32_t nPad = (n + 31) / 32 * 32;
            UqFence();
            CopyIn(xt, xGm_[(uint64_t)t * UQ_TILE], n);
            UqFence();
            MakeScore(n);
            Adds(idxg, idxI, static_cast<int32_t>(t * UQ_TILE), UQ_TILE);
            UqFence();
            for (uint32_t i = n; i < nPad; ++i) su.SetValue(i, 0xFF800000u);
            UqFence();
            SortTile(nPad, idxgU);
            UqFence();
            GlobalTensor<float> ad = ag[2ull * t * UQ_TILE];
            CopyOut(ad, sorted, 2 * n);
        }
        UqFence();
        SyncAll();
        uint32_t w = MergeAll(aOff_, bOff_);
        uint64_t pOff = w ? bOff_ : aOff_;
        uint64_t qOff = w ? aOff_ : bOff_;
        uint32_t myCnt = ProcessSorted(true, pOff, qOff, 0);
        LocalTensor<int32_t> sm = L<int32_t>(U_SMALL, 8);
        UqFence();
        for (uint32_t i = 0; i < 8; ++i) sm.SetValue(i, 0);
        sm.SetValue(0, static_cast<int32_t>(myCnt));
        UqFence();
        GlobalTensor<int32_t> slot = WsG<int32_t>(UQ_SLOT_CNT + (uint64_t)blk_ * 32, 8);
        CopyOut(slot, sm, 8);
        UqFence();
        SyncAll();
        LocalTensor<int32_t> sl = L<int32_t>(U_GT, 2048);
        GlobalTensor<int32_t> slots = WsG<int32_t>(UQ_SLOT_CNT, (uint64_t)bnum_ * 8);
        CopyIn(sl, slots, bnum_ * 8);
        UqFence();
        uint32_t yBase = 0;
        for (uint32_t c = 0; c < blk_; ++c) {
            yBase += static_cast<uint32_t>(sl.GetValue(c * 8));
        }
        UqFence();
        ProcessSorted(false, pOff, qOff, yBase);
        if (ri_) {
            UqFence();
            SyncAll();
            uint32_t w2 = MergeAll(qOff, pOff);
            uint64_t fOff = w2 ? pOff : qOff;
            GlobalTensor<float> fg = WsG<float>(fOff, 2ull * N_);
            LocalTensor<float> sc = L<float>(U_S, UQ_TILE);
            LocalTensor<uint32_t> pidx = L<uint32_t>(U_SIDX, UQ_TILE);
            LocalTensor<int32_t> pidxI = L<int32_t>(U_SIDX, UQ_TILE);
            LocalTensor<int64_t> inv = L<int64_t>(U_TMP, UQ_TILE);
            for (uint32_t t = tBeg_; t < tEnd_; ++t) {
                uint32_t n = TileLen(t);
                uint32_t nPad = (n + 31) / 32 * 32;
                UqFence();
                GlobalTensor<float> fs = fg[2ull * t * UQ_TILE];
                CopyIn(sorted, fs, 2 * n);
                UqFence();
                Extract(sc, pidx, sorted, static_cast<int32_t>(nPad / 32));
                Cast(inv, pidxI, RoundMode::CAST_NONE, n);
                UqFence();
                GlobalTensor<int64_t> ig = invGm_[(uint64_t)t * UQ_TILE];
                CopyOut(ig, inv, n);
            }
            UqFence();
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> buf_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<int64_t> invGm_;
    __gm__ uint8_t* ws_ = nullptr;
    uint32_t N_ = 0;
    uint32_t nt_ = 0;
    bool ri_ = false;
    bool sortEn_ = false;
    uint64_t presOff_ = 0;
    uint64_t rankOff_ = 0;
    uint64_t aOff_ = 0;
    uint64_t bOff_ = 0;
    uint32_t blk_ = 0;
    uint32_t bnum_ = 1;
    uint32_t tBeg_ = 0;
    uint32_t tEnd_ = 0;
    int64_t gmin_ = 0;
    int64_t gmax_ = 0;
    int32_t gmin32_ = 0;
    int32_t negMin_ = 0;
    uint32_t R_ = 0;
    uint32_t Rpad_ = 0;
};

extern "C" __global__ __aicore__ void unique_custom(GM_ADDR x, GM_ADDR y, GM_ADDR inverse, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GM_ADDR invArg = inverse;
    GM_ADDR wsArg = workspace;
    GM_ADDR tlArg = tiling;
    if (tlArg == nullptr) {   // inverse absent (return_inverse=False): arguments shifted by one
        tlArg = workspace;
        wsArg = inverse;
        invArg = nullptr;
    }
    GET_TILING_DATA(t, tlArg);
    GM_ADDR usr = GetUserWorkspace(wsArg);
    KernelUnique<DTYPE_X> op;
    op.Init(x, y, invArg, usr, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const uint64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    bool ri = false;
    auto attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const bool* p = attrs->GetAttrPointer<bool>(0);
        if (p != nullptr) {
            ri = *p;
        }
    }
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) coreNum = 1;
    if (coreNum > 64) coreNum = 64;
    uint64_t nt = (total + UQ_TILE - 1) / UQ_TILE;
    if (nt == 0) nt = 1;
    uint64_t bd = nt < coreNum ? nt : coreNum;
    const bool sortable = (dt == ge::DT_FLOAT || dt == ge::DT_INT32 || dt == ge::DT_INT64) && total <= (1ull << 24);

    UniqueCustomTilingData* t = context->GetTilingData<UniqueCustomTilingData>();
    t->total = static_cast<uint32_t>(total);
    t->numTiles = static_cast<uint32_t>(nt);
    t->returnInverse = ri ? 1u : 0u;
    t->sortEnabled = sortable ? 1u : 0u;
    t->presOff = UQ_SLOT_BYTES;
    t->rankOff = t->presOff + bd * UQ_PRES_STRIDE;
    t->bufAOff = t->rankOff + UQ_RANK_BYTES;
    const uint64_t sortBytes = (total * 8 + 511) / 512 * 512;
    t->bufBOff = t->bufAOff + sortBytes;
    const uint64_t user = t->bufAOff + (sortable ? 2 * sortBytes : 0);
    context->SetBlockDim(static_cast<uint32_t>(bd));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = user + plat.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (unique).
class UniqueCustom : public OpDef {
public:
    explicit UniqueCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT8, ge::DT_INT32, ge::DT_INT64, ge::DT_UINT8})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("inverse")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("return_inverse").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(UniqueCustom);
}  // namespace ops
