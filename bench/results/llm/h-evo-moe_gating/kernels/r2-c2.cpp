// MoeGatingTopKSoftmax: per row softmax over the experts (float), rounded to the output dtype, then a
// full descending Sort of (score, index) pairs, Extract, and the first k values/indices per row.
// row_idx[r, j] = j * rows + r; expert_idx = E on rows marked finished.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct MoeGatingTopKSoftmaxCustomTilingData {
    uint32_t rows;         // prod(x.shape[:-1])
    uint32_t e;            // experts
    uint32_t ePad;         // e rounded up to 32
    uint32_t eStrideX;     // UB row stride of the x tile (elements, 32-byte multiple)
    uint32_t k;
    uint32_t kPadY;        // UB row stride of the y tile (elements)
    uint32_t kPad4;        // UB row stride of the int32 tiles (elements)
    uint32_t rowsPerTile;
    uint32_t hasFinished;
    uint32_t formerNum;
    uint32_t formerRows;
    uint32_t tailRows;
};
REGISTER_TILING_DEFAULT(MoeGatingTopKSoftmaxCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct MoeSameType { static constexpr bool value = false; };
template <typename A> struct MoeSameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelMoeGatingTopKSoftmax {
public:
    static constexpr bool IS_FLOAT = MoeSameType<T, float>::value;

    __aicore__ inline KernelMoeGatingTopKSoftmax() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR finished, GM_ADDR y, GM_ADDR expertIdx, GM_ADDR rowIdx,
                                const MoeGatingTopKSoftmaxCustomTilingData& t)
    {
        t_ = t;
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        if (idx < t.formerNum) {
            count_ = t.formerRows;
            first_ = idx * t.formerRows;
        } else {
            count_ = t.tailRows;
            first_ = t.formerNum * t.formerRows + (idx - t.formerNum) * t.tailRows;
        }
        if (first_ >= t.rows) {
            count_ = 0;
            return;
        }
        if (first_ + count_ > t.rows) {
            count_ = t.rows - first_;
        }
        hasFin_ = t.hasFinished != 0 && finished != nullptr;
        xGm_.SetGlobalBuffer((__gm__ T*)x);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        eGm_.SetGlobalBuffer((__gm__ int32_t*)expertIdx);
        rGm_.SetGlobalBuffer((__gm__ int32_t*)rowIdx);
        if (hasFin_) {
            fGm_.SetGlobalBuffer((__gm__ uint8_t*)finished);
        }
        const uint32_t R = t.rowsPerTile;
        pipe_.InitBuffer(xBuf_, R * t.eStrideX * sizeof(T));
        pipe_.InitBuffer(yBuf_, R * t.kPadY * sizeof(T));
        pipe_.InitBuffer(eBuf_, R * t.kPad4 * sizeof(int32_t));
        pipe_.InitBuffer(rBuf_, R * t.kPad4 * sizeof(int32_t));
        pipe_.InitBuffer(fBuf_, (R + 31) / 32 * 32);
        pipe_.InitBuffer(scBuf_, t.ePad * sizeof(float));
        pipe_.InitBuffer(tmpBuf_, t.ePad * sizeof(float));
        pipe_.InitBuffer(sortedBuf_, t.ePad * 8);
        pipe_.InitBuffer(sortTmpBuf_, t.ePad * 16);
        pipe_.InitBuffer(valBuf_, t.ePad * sizeof(float));
        pipe_.InitBuffer(indBuf_, t.ePad * sizeof(uint32_t));
        pipe_.InitBuffer(idxInitBuf_, t.ePad * sizeof(int32_t));
        pipe_.InitBuffer(jBuf_, t.kPad4 * sizeof(int32_t));
        pipe_.InitBuffer(redBuf_, 64);
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(roundBuf_, t.ePad * sizeof(T));
        }
        evVM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        evM2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        evM2S_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
        evVS_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
        evSV_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_V));
        evVM3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        evM3V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));

        // constant tables: initial sort indices 0..ePad-1, and j * rows for row_idx
        LocalTensor<int32_t> idxInit = idxInitBuf_.Get<int32_t>();
        CreateVecIndex(idxInit, static_cast<int32_t>(0), t.ePad);
        LocalTensor<int32_t> jt = jBuf_.Get<int32_t>();
        for (uint32_t j = 0; j < t.kPad4; ++j) {
            jt.SetValue(j, static_cast<int32_t>(j * t.rows));
        }
        SetFlag<HardEvent::S_V>(evSV_);
        WaitFlag<HardEvent::S_V>(evSV_);
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        const uint32_t R = t_.rowsPerTile;
        for (uint32_t r = 0; r < count_; r += R) {
            const uint32_t m = (count_ - r < R) ? count_ - r : R;
            DoTile(first_ + r, m);
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

    __aicore__ inline void DoTile(uint32_t row0, uint32_t m)
    {
        const uint32_t E = t_.e;
        const uint32_t K = t_.k;
        const int32_t e = static_cast<int32_t>(E);
        const int32_t k = static_cast<int32_t>(K);
        LocalTensor<T> xt = xBuf_.Get<T>();
        LocalTensor<T> yt = yBuf_.Get<T>();
        LocalTensor<int32_t> et = eBuf_.Get<int32_t>();
        LocalTensor<int32_t> rt = rBuf_.Get<int32_t>();
        LocalTensor<uint8_t> ft = fBuf_.Get<uint8_t>();
        LocalTensor<float> sc = scBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        LocalTensor<float> sorted = sortedBuf_.Get<float>();
        LocalTensor<float> sortTmp = sortTmpBuf_.Get<float>();
        LocalTensor<float> vals = valBuf_.Get<float>();
        LocalTensor<uint32_t> inds = indBuf_.Get<uint32_t>();
        LocalTensor<int32_t> indsI = indBuf_.Get<int32_t>();
        LocalTensor<uint32_t> idxInit = idxInitBuf_.Get<uint32_t>();
        LocalTensor<int32_t> jt = jBuf_.Get<int32_t>();
        LocalTensor<float> red = redBuf_.Get<float>();

        // load the x rows (and the finished flags)
        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        {
            DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(E * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(xt, xGm_[static_cast<uint64_t>(row0) * E], cp, pad);
        }
        if (hasFin_) {
            DataCopyExtParams cp{1, m, 0, 0, 0};
            DataCopyPadExtParams<uint8_t> pad{false, 0, 0, 0};
            DataCopyPad(ft, fGm_[row0], cp, pad);
        }
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        SetFlag<HardEvent::MTE2_S>(evM2S_);
        WaitFlag<HardEvent::MTE2_S>(evM2S_);

        const int32_t rep = static_cast<int32_t>(t_.ePad / 32);
        for (uint32_t r = 0; r < m; ++r) {
            LocalTensor<T> xr = xt[r * t_.eStrideX];
            Duplicate(sc, -1.0f, static_cast<int32_t>(t_.ePad));   // padding sorts last
            if constexpr (IS_FLOAT) {
                Adds(sc, xr, 0.0f, e);
            } else {
                Cast(sc, xr, RoundMode::CAST_NONE, E);
            }
            ReduceMax(red, sc, tmp, e);
            const float mx = ReadRed();
            Adds(sc, sc, -mx, e);
            Exp(sc, sc, e);
            ReduceSum(red, sc, tmp, e);
            const float sum = ReadRed();
            Muls(sc, sc, 1.0f / sum, e);
            if constexpr (!IS_FLOAT) {   // the golden's softmax is in T: sort the rounded values
                LocalTensor<T> rb = roundBuf_.Get<T>();
                Cast(rb, sc, RoundMode::CAST_RINT, E);
                Cast(sc, rb, RoundMode::CAST_NONE, E);
            }
            Sort<float, true>(sorted, sc, idxInit, sortTmp, rep);
            Extract(vals, inds, sorted, rep);
            LocalTensor<T> yr = yt[r * t_.kPadY];
            if constexpr (IS_FLOAT) {
                Adds(yr, vals, 0.0f, k);
            } else {
                Cast(yr, vals, RoundMode::CAST_RINT, K);
            }
            LocalTensor<int32_t> er = et[r * t_.kPad4];
            bool fin = false;
            if (hasFin_) {
                fin = ft.GetValue(r) != 0;
            }
            if (fin) {
                Duplicate(er, e, k);
            } else {
                Adds(er, indsI, static_cast<int32_t>(0), k);
            }
            LocalTensor<int32_t> rr = rt[r * t_.kPad4];
            Adds(rr, jt, static_cast<int32_t>(row0 + r), k);
        }

        SetFlag<HardEvent::V_MTE3>(evVM3_);
        WaitFlag<HardEvent::V_MTE3>(evVM3_);
        {
            const uint64_t off = static_cast<uint64_t>(row0) * K;
            DataCopyExtParams cy{static_cast<uint16_t>(m), static_cast<uint32_t>(K * sizeof(T)), 0, 0, 0};
            DataCopyPad(yGm_[off], yt, cy);
            DataCopyExtParams ci{static_cast<uint16_t>(m), static_cast<uint32_t>(K * sizeof(int32_t)), 0, 0, 0};
            DataCopyPad(eGm_[off], et, ci);
            DataCopyPad(rGm_[off], rt, ci);
        }
        SetFlag<HardEvent::MTE3_V>(evM3V_);
        WaitFlag<HardEvent::MTE3_V>(evM3V_);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> xBuf_, yBuf_, eBuf_, rBuf_, fBuf_, scBuf_, tmpBuf_, sortedBuf_, sortTmpBuf_;
    TBuf<TPosition::VECCALC> valBuf_, indBuf_, idxInitBuf_, jBuf_, redBuf_, roundBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<int32_t> eGm_, rGm_;
    GlobalTensor<uint8_t> fGm_;
    MoeGatingTopKSoftmaxCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    bool hasFin_ = false;
    event_t evVM2_, evM2V_, evM2S_, evVS_, evSV_, evVM3_, evM3V_;
};

extern "C" __global__ __aicore__ void moe_gating_top_k_softmax_custom(GM_ADDR x, GM_ADDR finished, GM_ADDR y,
                                                                      GM_ADDR expert_idx, GM_ADDR row_idx,
                                                                      GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelMoeGatingTopKSoftmax<DTYPE_X> op;
    op.Init(x, finished, y, expert_idx, row_idx, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(xs.GetDimNum());
    if (nd < 1) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = 1;
    for (int64_t i = 0; i + 1 < nd; ++i) {
        rows *= static_cast<uint64_t>(xs.GetDim(i));
    }
    const uint64_t E = static_cast<uint64_t>(xs.GetDim(nd - 1));
    int64_t k = 1;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* kp = attrs->GetAttrPointer<int64_t>(0);
        if (kp != nullptr) {
            k = *kp;
        }
    }
    if (k < 1) {
        k = 1;
    }
    if (static_cast<uint64_t>(k) > E) {
        k = static_cast<int64_t>(E);
    }
    bool hasFinished = false;
    const gert::StorageShape* fs = context->GetOptionalInputShape(1);
    if (fs != nullptr && fs->GetStorageShape().GetShapeSize() > 0) {
        hasFinished = true;
    }
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    const uint64_t xb = (dt == ge::DT_FLOAT) ? 4 : 2;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    // AIV-only kernel (KERNEL_TYPE_AIV_ONLY): all vector cores share the rows
    uint32_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    const uint64_t usable = ub - 8448;

    const uint64_t ePad = (E + 31) / 32 * 32;
    const uint64_t eStrideX = (E * xb + 31) / 32 * 32 / xb;
    const uint64_t kPadY = (static_cast<uint64_t>(k) * xb + 31) / 32 * 32 / xb;
    const uint64_t kPad4 = (static_cast<uint64_t>(k) * 4 + 31) / 32 * 32 / 4;
    // per-row scratch: sc, tmp, sorted(8B), sortTmp(16B), vals, inds, idxInit, round buffer
    const uint64_t fixed = ePad * (4 + 4 + 8 + 16 + 4 + 4 + 4 + (xb == 4 ? 0 : 2)) + kPad4 * 4 + 64 + 1024;
    const uint64_t perRow = eStrideX * xb + kPadY * xb + 2 * kPad4 * 4 + 1;
    uint64_t R = (usable > fixed + perRow) ? (usable - fixed) / perRow : 1;
    if (R > 1024) {
        R = 1024;
    }

    // Split unit: u whole rows, u * k a multiple of 16, so every core's slice of y (16-bit or float)
    // and of the int32 outputs starts on a 32-byte boundary; the first units % cores cores take one
    // unit more, the last core ends at the last row.
    uint64_t g = static_cast<uint64_t>(k);
    uint64_t b = 16;
    while (b != 0) {
        const uint64_t r = g % b;
        g = b;
        b = r;
    }
    const uint64_t u = 16 / g;
    const uint64_t units = (rows + u - 1) / u;
    uint64_t blockDim = units < coreNum ? units : coreNum;
    if (blockDim == 0) {
        blockDim = 1;
    }
    const uint64_t perUnits = units / blockDim;
    const uint64_t perCore = (perUnits + (units % blockDim ? 1 : 0)) * u;
    if (R > perCore) {
        R = perCore;
    }
    if (R == 0) {
        R = 1;
    }
    MoeGatingTopKSoftmaxCustomTilingData* t = context->GetTilingData<MoeGatingTopKSoftmaxCustomTilingData>();
    t->rows = static_cast<uint32_t>(rows);
    t->e = static_cast<uint32_t>(E);
    t->ePad = static_cast<uint32_t>(ePad);
    t->eStrideX = static_cast<uint32_t>(eStrideX);
    t->k = static_cast<uint32_t>(k);
    t->kPadY = static_cast<uint32_t>(kPadY);
    t->kPad4 = static_cast<uint32_t>(kPad4);
    t->rowsPerTile = static_cast<uint32_t>(R);
    t->hasFinished = hasFinished ? 1 : 0;
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerRows = static_cast<uint32_t>((perUnits + 1) * u);
    t->tailRows = static_cast<uint32_t>(perUnits * u);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (moe_gating_top_k_softmax).
class MoeGatingTopKSoftmaxCustom : public OpDef {
public:
    explicit MoeGatingTopKSoftmaxCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("finished")
            .ParamType(REQUIRED)
            .DataType({ge::DT_BOOL, ge::DT_BOOL, ge::DT_BOOL})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("expert_idx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("row_idx")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("k").AttrType(OPTIONAL).Int(1);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(MoeGatingTopKSoftmaxCustom);
}  // namespace ops

