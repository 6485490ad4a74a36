// CrossEntropyLoss over x (N, C, d1, ...) with hard (class index) or soft (probability) targets.
//  mode 0 (no spatial dims): rows of C classes; per row max -> exp -> sum on the vector unit, the
//         per-row results collected in small tensors, then one Ln per tile.
//  mode 1 (spatial dims S > 1): a unit is (n, a chunk of w spatial positions); two passes over the C
//         class rows with lane-wise Max / Exp / Add accumulators; x[target] picked with Compares+Select.
// reduction none writes the per-sample losses; mean/sum: every core writes its partial sum and count
// to its own workspace slots, SyncAll, core 0 combines (mean = sum / count of non-ignored samples).
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t CE_SLOT = 8;   // floats per 32-byte workspace slot

struct CrossEntropyLossCustomTilingData {
    uint32_t mode;          // 0 rows, 1 columns
    uint32_t reduction;     // 0 none, 1 mean, 2 sum
    int32_t ignoreIndex;
    uint32_t ignoreValid;   // 0 when ignore_index is outside int32 (never matches)
    uint32_t n;
    uint32_t c;
    uint32_t s;             // product of the spatial dims
    uint32_t units;         // rows (mode 0) or n x chunks (mode 1)
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t usedCores;
    // mode 0
    uint32_t cPad;          // C rounded up to 64 (float scratch length)
    uint32_t cStrideX;      // UB row stride of the x tile (elements)
    uint32_t cStrideT;      // UB row stride of the soft-target tile (elements)
    uint32_t rowsPerTile;
    uint32_t tmpFloats;
    // mode 1
    uint32_t w;             // spatial positions per unit
    uint32_t wPad;          // w rounded up to 64
    uint32_t chunks;        // ceil(S / w)
    uint32_t cb;            // class rows per copy
};
REGISTER_TILING_DEFAULT(CrossEntropyLossCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct CeSame { static constexpr bool value = false; };
template <typename A> struct CeSame<A, A> { static constexpr bool value = true; };
template <bool B, typename A, typename C> struct CeCond { using type = A; };
template <typename A, typename C> struct CeCond<false, A, C> { using type = C; };

template <typename T, typename TT>
class KernelCrossEntropy {
public:
    static constexpr bool IS_FLOAT = CeSame<T, float>::value;
    static constexpr bool T64 = CeSame<TT, int64_t>::value;
    static constexpr bool HARD = CeSame<TT, int32_t>::value || T64;
    static constexpr bool TT_FLOAT = CeSame<TT, float>::value;
    using TU = typename CeCond<HARD, int32_t, TT>::type;

    __aicore__ inline KernelCrossEntropy() {}

    __aicore__ inline void Init(GM_ADDR input, GM_ADDR target, GM_ADDR loss, GM_ADDR workspace,
                                const CrossEntropyLossCustomTilingData& t)
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
        } else if (first_ + count_ > t.units) {
            count_ = t.units - first_;
        }
        xGm_.SetGlobalBuffer((__gm__ T*)input);
        tGm_.SetGlobalBuffer((__gm__ TU*)target);
        yGm_.SetGlobalBuffer((__gm__ T*)loss);
        if (t.reduction != 0) {
            slotGm_.SetGlobalBuffer((__gm__ float*)GetUserWorkspace(workspace),
                                    static_cast<uint64_t>(t.usedCores) * CE_SLOT * 2);
        }
        evVM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        evM2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        evM2S_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        evVS_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        evSV_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        evVM3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        evM3V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));
        evSM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE2));
        const uint32_t accLen = t.mode == 0 ? (t.rowsPerTile + 63) / 64 * 64 : t.wPad;
        accLen_ = accLen;
        if (t.mode == 0) {
            const uint32_t R = t.rowsPerTile;
            pipe_.InitBuffer(xBuf_, R * t.cStrideX * sizeof(T));
            if constexpr (!HARD) {
                pipe_.InitBuffer(stBuf_, R * t.cStrideT * sizeof(TT));
                pipe_.InitBuffer(tfBuf_, t.cPad * sizeof(float));
            } else {
                pipe_.InitBuffer(tiBuf_, (R * (T64 ? 8 : 4) + 31) / 32 * 32);
            }
            if constexpr (!IS_FLOAT) {
                pipe_.InitBuffer(fBuf_, t.cPad * sizeof(float));
            }
            pipe_.InitBuffer(tmpBuf_, t.tmpFloats * sizeof(float));
            pipe_.InitBuffer(redBuf_, 64);
            pipe_.InitBuffer(aBuf_, accLen * sizeof(float));
            pipe_.InitBuffer(bBuf_, accLen * sizeof(float));
            pipe_.InitBuffer(lBuf_, accLen * sizeof(float));
            pipe_.InitBuffer(vBuf_, accLen * sizeof(float));
            pipe_.InitBuffer(oBuf_, accLen * sizeof(T));
        } else {
            const uint32_t W = t.wPad;
            pipe_.InitBuffer(xBuf_, t.cb * W * sizeof(T));
            if constexpr (!IS_FLOAT) {
                pipe_.InitBuffer(fBuf_, W * sizeof(float));
            }
            pipe_.InitBuffer(tiBuf_, W * 8);
            pipe_.InitBuffer(tfBuf_, W * sizeof(float));
            pipe_.InitBuffer(vBuf_, W * sizeof(float));
            pipe_.InitBuffer(mxBuf_, W * sizeof(float));
            pipe_.InitBuffer(xtBuf_, W * sizeof(float));
            pipe_.InitBuffer(lBuf_, W * sizeof(float));
            pipe_.InitBuffer(mkBuf_, (W / 8 + 31) / 32 * 32);
            pipe_.InitBuffer(oBuf_, W * sizeof(T));
        }
        pipe_.InitBuffer(accBuf_, accLen * sizeof(float));
        pipe_.InitBuffer(cntBuf_, accLen * sizeof(float));
        pipe_.InitBuffer(slotBuf_, (t.usedCores * CE_SLOT * sizeof(float) + 31) / 32 * 32);
        pipe_.InitBuffer(fin1Buf_, 64);
        pipe_.InitBuffer(fin2Buf_, 64);
        pipe_.InitBuffer(fin3Buf_, 64);
        pipe_.InitBuffer(finTBuf_, 64);
        if (t.reduction != 0) {
            pipe_.InitBuffer(workBuf_, (t.usedCores * CE_SLOT + 64) * sizeof(float) > accLen * sizeof(float) ?
                                           (t.usedCores * CE_SLOT + 64) * sizeof(float) : accLen * sizeof(float));
        }
    }

    __aicore__ inline void Process()
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> cnt = cntBuf_.Get<float>();
        Duplicate(acc, 0.0f, static_cast<int32_t>(accLen_));
        Duplicate(cnt, 0.0f, static_cast<int32_t>(accLen_));
        if (count_ > 0) {
            if (t_.mode == 0) {
                ProcessRows();
            } else {
                ProcessColumns();
            }
        }
        if (t_.reduction != 0) {
            WritePartial();
            SyncAll();
            if (GetBlockIdx() == 0) {
                WriteTotal();
            }
        }
    }

private:
    __aicore__ inline float ReadRed()
    {
        SetFlag<HardEvent::V_S>(evVS_);
        WaitFlag<HardEvent::V_S>(evVS_);
        LocalTensor<float> red = redBuf_.Get<float>();
        return red.GetValue(0);
    }

    __aicore__ inline int64_t TargetAt(LocalTensor<int32_t>& ti, uint32_t j)
    {
        if constexpr (T64) {
            const uint32_t lo = static_cast<uint32_t>(ti.GetValue(2 * j));
            const int32_t hi = ti.GetValue(2 * j + 1);
            return static_cast<int64_t>((static_cast<uint64_t>(static_cast<int64_t>(hi)) << 32) |
                                        static_cast<uint64_t>(lo));
        } else {
            return static_cast<int64_t>(ti.GetValue(j));
        }
    }

    // ---------------- mode 0: rows ----------------
    __aicore__ inline void ProcessRows()
    {
        const uint32_t R = t_.rowsPerTile;
        for (uint32_t r = 0; r < count_; r += R) {
            const uint32_t m = (count_ - r < R) ? count_ - r : R;
            RowTile(first_ + r, m);
        }
    }

    __aicore__ inline void RowTile(uint32_t row0, uint32_t m)
    {
        const uint32_t C = t_.c;
        const int32_t c = static_cast<int32_t>(C);
        LocalTensor<T> xt = xBuf_.Get<T>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        LocalTensor<float> a = aBuf_.Get<float>();
        LocalTensor<float> b = bBuf_.Get<float>();
        LocalTensor<float> l = lBuf_.Get<float>();
        LocalTensor<float> v = vBuf_.Get<float>();

        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        {
            DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(C * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(xt, xGm_[static_cast<uint64_t>(row0) * C], cp, pad);
            if constexpr (!HARD) {
                DataCopyPadExtParams<TU> padT{false, 0, 0, 0};
                LocalTensor<TU> stu = stBuf_.Get<TU>();
                DataCopyExtParams cpt{static_cast<uint16_t>(m), static_cast<uint32_t>(C * sizeof(TU)), 0, 0, 0};
                DataCopyPad(stu, tGm_[static_cast<uint64_t>(row0) * C], cpt, padT);
            } else {
                LocalTensor<int32_t> ti = tiBuf_.Get<int32_t>();
                DataCopyExtParams ct{1, static_cast<uint32_t>(m * (T64 ? 8 : 4)), 0, 0, 0};
                DataCopyPadExtParams<int32_t> padI{false, 0, 0, 0};
                DataCopyPad(ti, tGm_[static_cast<uint64_t>(row0) * (T64 ? 2 : 1)], ct, padI);
            }
        }
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        SetFlag<HardEvent::MTE2_S>(evM2S_);
        WaitFlag<HardEvent::MTE2_S>(evM2S_);

        for (uint32_t r = 0; r < m; ++r) {
            LocalTensor<T> xr = xt[r * t_.cStrideX];
            LocalTensor<float> f;
            if constexpr (IS_FLOAT) {
                f = xr;
            } else {
                f = fBuf_.Get<float>();
                Cast(f, xr, RoundMode::CAST_NONE, C);
            }
            float av = 1.0f;
            float bv = 0.0f;
            float valid = 1.0f;
            bool ignored = false;
            int64_t tgt = 0;
            if constexpr (HARD) {
                LocalTensor<int32_t> ti = tiBuf_.Get<int32_t>();
                tgt = TargetAt(ti, r);
                ignored = t_.ignoreValid != 0 && tgt == static_cast<int64_t>(t_.ignoreIndex);
                if (tgt < 0) {
                    tgt = 0;
                }
                if (tgt >= static_cast<int64_t>(C)) {
                    tgt = C - 1;
                }
            } else {
                LocalTensor<float> tf = tfBuf_.Get<float>();
                LocalTensor<TU> st = stBuf_.Get<TU>();
                LocalTensor<TU> sr = st[r * t_.cStrideT];
                if constexpr (TT_FLOAT) {
                    Adds(tf, sr, 0.0f, c);
                } else {
                    Cast(tf, sr, RoundMode::CAST_NONE, C);
                }
                ReduceSum(red, tf, tmp, c);
                av = ReadRed();                    // sum of the target probabilities
                Mul(tf, tf, f, c);
                ReduceSum(red, tf, tmp, c);
                bv = -ReadRed();                   // - sum(t * x)
            }
            ReduceMax(red, f, tmp, c);
            const float mx = ReadRed();
            float xv = 0.0f;
            if constexpr (HARD) {
                xv = f.GetValue(static_cast<uint32_t>(tgt));
            }
            Adds(f, f, -mx, c);
            Exp(f, f, c);
            ReduceSum(red, f, tmp, c);
            float s = ReadRed();
            if constexpr (HARD) {
                bv = mx - xv;                      // loss = ln(s) + max - x[t]
            } else {
                bv = bv + mx * av;                 // loss = (ln(s) + max) * sum(t) - sum(t * x)
            }
            if (ignored) {
                s = 1.0f;
                av = 0.0f;
                bv = 0.0f;
                valid = 0.0f;
            }
            l.SetValue(r, s);
            a.SetValue(r, av);
            b.SetValue(r, bv);
            v.SetValue(r, valid);
        }
        SetFlag<HardEvent::S_V>(evSV_);
        WaitFlag<HardEvent::S_V>(evSV_);
        const int32_t mm = static_cast<int32_t>(m);
        Ln(l, l, mm);
        Mul(l, l, a, mm);
        Add(l, l, b, mm);
        FinishLosses(l, v, static_cast<uint64_t>(row0), m);
    }

    // per-sample losses l[0..n) (valid flags v): store them (none) or accumulate (mean/sum)
    __aicore__ inline void FinishLosses(LocalTensor<float>& l, LocalTensor<float>& v, uint64_t outOff, uint32_t n)
    {
        const int32_t nn = static_cast<int32_t>(n);
        if (t_.reduction == 0) {
            SetFlag<HardEvent::MTE3_V>(evM3V_);
            WaitFlag<HardEvent::MTE3_V>(evM3V_);
            LocalTensor<T> o = oBuf_.Get<T>();
            if constexpr (IS_FLOAT) {
                Adds(o, l, 0.0f, nn);
            } else {
                Cast(o, l, RoundMode::CAST_RINT, n);
            }
            SetFlag<HardEvent::V_MTE3>(evVM3_);
            WaitFlag<HardEvent::V_MTE3>(evVM3_);
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[outOff], o, cp);
        } else {
            LocalTensor<float> acc = accBuf_.Get<float>();
            LocalTensor<float> cnt = cntBuf_.Get<float>();
            Add(acc, acc, l, nn);
            Add(cnt, cnt, v, nn);
        }
    }

    // ---------------- mode 1: columns ----------------
    __aicore__ inline void ProcessColumns()
    {
        const uint32_t S = t_.s;
        const uint32_t C = t_.c;
        const uint32_t W = t_.wPad;
        const int32_t wp = static_cast<int32_t>(W);
        LocalTensor<T> xt = xBuf_.Get<T>();
        LocalTensor<int32_t> ti = tiBuf_.Get<int32_t>();
        LocalTensor<float> tf = tfBuf_.Get<float>();
        LocalTensor<float> v = vBuf_.Get<float>();
        LocalTensor<float> mx = mxBuf_.Get<float>();
        LocalTensor<float> xs = xtBuf_.Get<float>();
        LocalTensor<float> sum = lBuf_.Get<float>();
        LocalTensor<uint8_t> mk = mkBuf_.Get<uint8_t>();
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t nIdx = u / t_.chunks;
            const uint32_t ch = u % t_.chunks;
            const uint32_t s0 = ch * t_.w;
            const uint32_t w = (S - s0 < t_.w) ? S - s0 : t_.w;
            const int32_t wi = static_cast<int32_t>(w);
            const uint64_t tOff = static_cast<uint64_t>(nIdx) * S + s0;
            const uint64_t xBase = static_cast<uint64_t>(nIdx) * C * S + s0;

            // targets of the w positions -> float class ids (-1 for ignored) and valid flags
            SetFlag<HardEvent::V_MTE2>(evVM2_);
            WaitFlag<HardEvent::V_MTE2>(evVM2_);
            {
                DataCopyExtParams ct{1, static_cast<uint32_t>(w * (T64 ? 8 : 4)), 0, 0, 0};
                DataCopyPadExtParams<int32_t> padI{false, 0, 0, 0};
                DataCopyPad(ti, tGm_[tOff * (T64 ? 2 : 1)], ct, padI);
            }
            SetFlag<HardEvent::MTE2_S>(evM2S_);
            WaitFlag<HardEvent::MTE2_S>(evM2S_);
            SetFlag<HardEvent::V_S>(evVS_);      // the previous unit's vector work on tf / v is done
            WaitFlag<HardEvent::V_S>(evVS_);
            for (uint32_t j = 0; j < W; ++j) {
                float tv = -1.0f;
                float vv = 0.0f;
                if (j < w) {
                    const int64_t tg = TargetAt(ti, j);
                    const bool ign = t_.ignoreValid != 0 && tg == static_cast<int64_t>(t_.ignoreIndex);
                    if (!ign) {
                        tv = static_cast<float>(tg);
                        vv = 1.0f;
                    }
                }
                tf.SetValue(j, tv);
                v.SetValue(j, vv);
            }
            SetFlag<HardEvent::S_V>(evSV_);
            WaitFlag<HardEvent::S_V>(evSV_);
            SetFlag<HardEvent::S_MTE2>(evSM2_);
            WaitFlag<HardEvent::S_MTE2>(evSM2_);
            Duplicate(mx, -3.402823466e+38f, wp);
            Duplicate(xs, 0.0f, wp);
            Duplicate(sum, 0.0f, wp);
            for (uint32_t pass = 0; pass < 2; ++pass) {
                for (uint32_t c0 = 0; c0 < C; c0 += t_.cb) {
                    const uint32_t nb = (C - c0 < t_.cb) ? C - c0 : t_.cb;
                    SetFlag<HardEvent::V_MTE2>(evVM2_);
                    WaitFlag<HardEvent::V_MTE2>(evVM2_);
                    {
                        const uint32_t gap = (W * sizeof(T) - (w * sizeof(T) + 31) / 32 * 32) / 32;
                        DataCopyExtParams cp{static_cast<uint16_t>(nb), static_cast<uint32_t>(w * sizeof(T)),
                                             static_cast<uint32_t>((S - w) * sizeof(T)), gap, 0};
                        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
                        DataCopyPad(xt, xGm_[xBase + static_cast<uint64_t>(c0) * S], cp, pad);
                    }
                    SetFlag<HardEvent::MTE2_V>(evM2V_);
                    WaitFlag<HardEvent::MTE2_V>(evM2V_);
                    for (uint32_t r = 0; r < nb; ++r) {
                        LocalTensor<T> xr = xt[r * W];
                        LocalTensor<float> f;
                        if constexpr (IS_FLOAT) {
                            f = xr;
                        } else {
                            f = fBuf_.Get<float>();
                            Cast(f, xr, RoundMode::CAST_NONE, W);
                        }
                        if (pass == 0) {
                            Max(mx, mx, f, wi);
                            Compares(mk, tf, static_cast<float>(c0 + r), CMPMODE::EQ, W);
                            Select(xs, mk, f, xs, SELMODE::VSEL_TENSOR_TENSOR_MODE, W);
                        } else {
                            Sub(f, f, mx, wi);
                            Exp(f, f, wi);
                            Add(sum, sum, f, wi);
                        }
                    }
                }
            }
            Ln(sum, sum, wi);
            Add(sum, sum, mx, wi);
            Sub(sum, sum, xs, wi);
            Mul(sum, sum, v, wi);
            FinishLosses(sum, v, tOff, w);
        }
    }

    // ---------------- reduction to one value ----------------
    __aicore__ inline void WritePartial()
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> cnt = cntBuf_.Get<float>();
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> s1 = fin1Buf_.Get<float>();
        LocalTensor<float> s2 = fin2Buf_.Get<float>();
        Duplicate(s1, 0.0f, 16);
        Duplicate(s2, 0.0f, 16);
        ReduceSum(s1, acc, work, static_cast<int32_t>(accLen_));
        ReduceSum(s2, cnt, work, static_cast<int32_t>(accLen_));
        SetFlag<HardEvent::V_MTE3>(evVM3_);
        WaitFlag<HardEvent::V_MTE3>(evVM3_);
        const uint64_t idx = static_cast<uint64_t>(GetBlockIdx());
        DataCopy(slotGm_[idx * CE_SLOT], s1, CE_SLOT);
        DataCopy(slotGm_[static_cast<uint64_t>(t_.usedCores) * CE_SLOT + idx * CE_SLOT], s2, CE_SLOT);
    }

    __aicore__ inline void WriteTotal()
    {
        LocalTensor<float> slots = slotBuf_.Get<float>();
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> s1 = fin1Buf_.Get<float>();
        LocalTensor<float> s2 = fin2Buf_.Get<float>();
        LocalTensor<float> s3 = fin3Buf_.Get<float>();
        const uint32_t nf = t_.usedCores * CE_SLOT;
        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        DataCopy(slots, slotGm_, nf);
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        ReduceSum(s1, slots, work, static_cast<int32_t>(nf));
        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        DataCopy(slots, slotGm_[nf], nf);
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        ReduceSum(s2, slots, work, static_cast<int32_t>(nf));
        if (t_.reduction == 1) {
            Div(s3, s1, s2, 1);
        } else {
            Adds(s3, s1, 0.0f, 1);
        }
        DataCopyExtParams one{1, static_cast<uint32_t>(sizeof(T)), 0, 0, 0};
        if constexpr (IS_FLOAT) {
            SetFlag<HardEvent::V_MTE3>(evVM3_);
            WaitFlag<HardEvent::V_MTE3>(evVM3_);
            DataCopyPad(yGm_, s3, one);
        } else {
            LocalTensor<T> o = finTBuf_.Get<T>();
            Cast(o, s3, RoundMode::CAST_RINT, 1);
            SetFlag<HardEvent::V_MTE3>(evVM3_);
            WaitFlag<HardEvent::V_MTE3>(evVM3_);
            DataCopyPad(yGm_, o, one);
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> xBuf_, stBuf_, tfBuf_, tiBuf_, fBuf_, tmpBuf_, redBuf_, aBuf_, bBuf_, lBuf_, vBuf_;
    TBuf<TPosition::VECCALC> oBuf_, mxBuf_, xtBuf_, mkBuf_, accBuf_, cntBuf_, slotBuf_, workBuf_;
    TBuf<TPosition::VECCALC> fin1Buf_, fin2Buf_, fin3Buf_, finTBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<TU> tGm_;
    GlobalTensor<float> slotGm_;
    CrossEntropyLossCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    uint32_t accLen_ = 64;
    event_t evVM2_, evM2V_, evM2S_, evVS_, evSV_, evVM3_, evM3V_, evSM2_;
};

extern "C" __global__ __aicore__ void cross_entropy_loss_custom(GM_ADDR input, GM_ADDR target, GM_ADDR loss,
                                                                GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelCrossEntropy<DTYPE_INPUT, DTYPE_TARGET> op;
    op.Init(input, target, loss, workspace, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& ts = context->GetInputShape(1)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(xs.GetDimNum());
    if (nd < 1) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t N = static_cast<uint64_t>(xs.GetDim(0));
    const uint64_t C = nd >= 2 ? static_cast<uint64_t>(xs.GetDim(1)) : static_cast<uint64_t>(xs.GetDim(0));
    uint64_t S = 1;
    for (int64_t i = 2; i < nd; ++i) {
        S *= static_cast<uint64_t>(xs.GetDim(i));
    }
    const uint64_t rowsN = nd >= 2 ? N : 1;
    const ge::DataType xdt = context->GetInputDesc(0)->GetDataType();
    const ge::DataType tdt = context->GetInputDesc(1)->GetDataType();
    const bool hard = (tdt == ge::DT_INT32 || tdt == ge::DT_INT64);
    const uint64_t xb = (xdt == ge::DT_FLOAT) ? 4 : 2;
    const uint64_t tb = (tdt == ge::DT_FLOAT || tdt == ge::DT_INT32) ? 4 : (tdt == ge::DT_INT64 ? 8 : 2);
    (void)ts;

    uint32_t reduction = 1;
    int64_t ignore = -100;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const char* rs = attrs->GetAttrPointer<char>(0);
        if (rs != nullptr) {
            if (rs[0] == 'n') {
                reduction = 0;
            } else if (rs[0] == 's') {
                reduction = 2;
            } else {
                reduction = 1;
            }
        }
        const int64_t* ip = attrs->GetAttrPointer<int64_t>(1);
        if (ip != nullptr) {
            ignore = *ip;
        }
    }

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    const uint64_t usable = ub - 8448 - 4096;

    CrossEntropyLossCustomTilingData* t = context->GetTilingData<CrossEntropyLossCustomTilingData>();
    t->reduction = reduction;
    t->ignoreValid = (ignore >= -2147483647LL - 1 && ignore <= 2147483647LL) ? 1 : 0;
    t->ignoreIndex = static_cast<int32_t>(t->ignoreValid ? ignore : 0);
    t->n = static_cast<uint32_t>(rowsN);
    t->c = static_cast<uint32_t>(C);
    t->s = static_cast<uint32_t>(S);

    uint64_t units = 0;
    uint64_t accLen = 64;
    if (S == 1 || !hard) {
        // rows of C classes (soft targets: the spatial dims are folded into rows is not supported; S == 1)
        const uint64_t cPad = (C + 63) / 64 * 64;
        const uint64_t cStrideX = (C * xb + 31) / 32 * 32 / xb;
        uint64_t tmpFloats = cPad / 4;
        if (tmpFloats < 256) {
            tmpFloats = 256;
        }
        const uint64_t fixed = (xb == 4 ? 0 : cPad * 4) + (hard ? 0 : cPad * 4) + tmpFloats * 4 + 64 + 2048;
        const uint64_t cStrideT = (C * tb + 31) / 32 * 32 / tb;
        const uint64_t perRow = cStrideX * xb + (hard ? 8 : cStrideT * tb) + 7 * 4 + xb;
        uint64_t R = usable > fixed + perRow ? (usable - fixed) / perRow : 1;
        if (R > 1024) {
            R = 1024;
        }
        units = rowsN * S;
        const uint64_t perCore = (units + coreNum - 1) / coreNum;
        if (R > perCore) {
            R = perCore;
        }
        if (R == 0) {
            R = 1;
        }
        t->mode = 0;
        t->cPad = static_cast<uint32_t>(cPad);
        t->cStrideX = static_cast<uint32_t>(cStrideX);
        t->cStrideT = static_cast<uint32_t>(cStrideT);
        t->rowsPerTile = static_cast<uint32_t>(R);
        t->tmpFloats = static_cast<uint32_t>(tmpFloats);
        accLen = (R + 63) / 64 * 64;
        t->w = 0;
        t->wPad = 64;
        t->chunks = 1;
        t->cb = 1;
    } else {
        uint64_t w = 1024;
        if (w > S) {
            w = S;
        }
        // spread over the cores when N is small
        const uint64_t want = (rowsN * S + coreNum * 2 - 1) / (coreNum * 2);
        if (w > want) {
            w = want;
        }
        if (w < 64 && S >= 64) {
            w = 64;
        }
        if (w == 0) {
            w = 1;
        }
        const uint64_t wPad = (w + 63) / 64 * 64;
        const uint64_t chunks = (S + w - 1) / w;
        // x tile of cb rows; lane buffers: f, ti(8), tf, v, mx, xt, l, o, acc, cnt
        const uint64_t lane = wPad * (4 + 8 + 4 * 7 + xb) + wPad / 8 + 1024;
        uint64_t cb = usable > lane ? (usable - lane) / (wPad * xb) : 1;
        if (cb > C) {
            cb = C;
        }
        if (cb > 4095) {
            cb = 4095;
        }
        if (cb == 0) {
            cb = 1;
        }
        units = rowsN * chunks;
        t->mode = 1;
        t->w = static_cast<uint32_t>(w);
        t->wPad = static_cast<uint32_t>(wPad);
        t->chunks = static_cast<uint32_t>(chunks);
        t->cb = static_cast<uint32_t>(cb);
        t->cPad = 64;
        t->cStrideX = 0;
        t->cStrideT = 0;
        t->rowsPerTile = 1;
        t->tmpFloats = 64;
        accLen = wPad;
    }
    uint64_t blockDim = units < coreNum ? units : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    t->usedCores = static_cast<uint32_t>(blockDim);
    (void)accLen;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + blockDim * 32 * 2;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (cross_entropy_loss).
class CrossEntropyLossCustom : public OpDef {
public:
    explicit CrossEntropyLossCustom(const char* name) : OpDef(name)
    {
        this->Input("input")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("target")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("loss")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("reduction").AttrType(OPTIONAL).String("mean");
        this->Attr("ignore_index").AttrType(OPTIONAL).Int(-100);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(CrossEntropyLossCustom);
}  // namespace ops
