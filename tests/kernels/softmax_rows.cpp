// Softmax over any axis. The shape is seen as [outer, R, inner] around the softmax axis.
// inner == 1 (contiguous rows): one row per step, widened to float, ReduceMax for the row max,
// Adds(-max) + Exp, ReduceSum for the row sum, Muls(1/sum), rounded back (CAST_RINT).
// inner > 1 (strided axis): columns are processed in chunks with three passes over R (running Max,
// then sum of exp, then the normalised output), using elementwise Max/Add/Sub/Exp/Div.
// Rows and chunks whose byte length is not a 32 B multiple move with DataCopyPad.
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct SoftmaxTiling {
    uint64_t outer;
    uint64_t reduce;       // R, the softmax axis length
    uint64_t inner;        // elements after the axis (1: contiguous rows)
    uint64_t units;        // rows (inner == 1) or (outer x chunk) units (inner > 1)
    uint32_t chunk;        // inner elements per unit (inner > 1)
    uint32_t unitsPerCore;
    uint32_t formerNum;
    uint32_t bufLen;       // elements per UB buffer (32 B aligned for float)
};

constexpr uint32_t TMP_BYTES = 8 * 1024;

template <typename T>
class KernelSoftmax {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const SoftmaxTiling& t)
    {
        t_ = t;
        uint64_t idx = AscendC::GetBlockIdx();
        first_ = idx < t.formerNum ? idx * (t.unitsPerCore + 1)
                                   : t.formerNum * (t.unitsPerCore + 1) + (idx - t.formerNum) * t.unitsPerCore;
        count_ = idx < t.formerNum ? t.unitsPerCore + 1 : t.unitsPerCore;
        uint64_t total = t.outer * t.reduce * t.inner;
        xGm_.SetGlobalBuffer((__gm__ T*)x, total);
        yGm_.SetGlobalBuffer((__gm__ T*)y, total);
        pipe_.InitBuffer(inQ_, 2, t.bufLen * sizeof(T));
        pipe_.InitBuffer(outQ_, 2, t.bufLen * sizeof(T));
        pipe_.InitBuffer(xf_, t.bufLen * sizeof(float));
        // Row mode only keeps a reduction result in acc_; column mode keeps two running vectors.
        uint32_t accLen = t.inner == 1 ? 64 : t.bufLen;
        pipe_.InitBuffer(acc_, accLen * sizeof(float));
        pipe_.InitBuffer(acc2_, accLen * sizeof(float));
        pipe_.InitBuffer(tmp_, TMP_BYTES);
    }
    __aicore__ inline void Process()
    {
        for (uint64_t u = first_; u < first_ + count_; ++u) {
            if (t_.inner == 1) {
                Row(u);
            } else {
                Columns(u);
            }
        }
    }

private:
    __aicore__ inline void Load(uint64_t off, uint32_t n, const AscendC::LocalTensor<float>& xf)
    {
        AscendC::LocalTensor<T> x = inQ_.AllocTensor<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(x, xGm_[off], n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(x, xGm_[off], cp, pad);
        }
        inQ_.EnQue(x);
        x = inQ_.DeQue<T>();
        if constexpr (std::is_same_v<T, float>) {
            AscendC::DataCopy(xf, x, (n + 7) / 8 * 8);
        } else {
            AscendC::Cast(xf, x, AscendC::RoundMode::CAST_NONE, n);
        }
        inQ_.FreeTensor(x);
    }
    __aicore__ inline void Store(uint64_t off, uint32_t n, const AscendC::LocalTensor<float>& yf)
    {
        AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
        if constexpr (std::is_same_v<T, float>) {
            AscendC::DataCopy(y, yf, (n + 7) / 8 * 8);
        } else {
            AscendC::Cast(y, yf, AscendC::RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        y = outQ_.DeQue<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(yGm_[off], y, n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPad(yGm_[off], y, cp);
        }
        outQ_.FreeTensor(y);
    }
    __aicore__ inline float ScalarOf(const AscendC::LocalTensor<float>& t)
    {
        event_t vToS = static_cast<event_t>(pipe_.FetchEventID(AscendC::HardEvent::V_S));
        AscendC::SetFlag<AscendC::HardEvent::V_S>(vToS);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(vToS);
        float v = t.GetValue(0);
        event_t sToV = static_cast<event_t>(pipe_.FetchEventID(AscendC::HardEvent::S_V));
        AscendC::SetFlag<AscendC::HardEvent::S_V>(sToV);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(sToV);
        return v;
    }
    __aicore__ inline void Row(uint64_t row)
    {
        uint32_t n = (uint32_t)t_.reduce;
        uint64_t off = row * t_.reduce;
        AscendC::LocalTensor<float> xf = xf_.Get<float>();
        AscendC::LocalTensor<float> red = acc_.Get<float>();
        AscendC::LocalTensor<float> tmp = tmp_.Get<float>();
        Load(off, n, xf);
        AscendC::ReduceMax(red, xf, tmp, n);
        float rowMax = ScalarOf(red);
        AscendC::Adds(xf, xf, -rowMax, n);
        AscendC::Exp(xf, xf, n);
        AscendC::ReduceSum(red, xf, tmp, n);
        float rowSum = ScalarOf(red);
        AscendC::Muls(xf, xf, 1.0f / rowSum, n);
        Store(off, n, xf);
    }
    __aicore__ inline void Columns(uint64_t unit)
    {
        uint64_t chunks = (t_.inner + t_.chunk - 1) / t_.chunk;
        uint64_t o = unit / chunks;
        uint64_t c0 = (unit % chunks) * t_.chunk;
        uint32_t n = (uint32_t)(t_.inner - c0 < t_.chunk ? t_.inner - c0 : t_.chunk);
        uint64_t base = o * t_.reduce * t_.inner + c0;
        AscendC::LocalTensor<float> xf = xf_.Get<float>();
        AscendC::LocalTensor<float> mx = acc_.Get<float>();
        AscendC::LocalTensor<float> sum = acc2_.Get<float>();
        Load(base, n, mx);
        for (uint64_t r = 1; r < t_.reduce; ++r) {
            Load(base + r * t_.inner, n, xf);
            AscendC::Max(mx, mx, xf, n);
        }
        AscendC::Duplicate(sum, 0.0f, n);
        for (uint64_t r = 0; r < t_.reduce; ++r) {
            Load(base + r * t_.inner, n, xf);
            AscendC::Sub(xf, xf, mx, n);
            AscendC::Exp(xf, xf, n);
            AscendC::Add(sum, sum, xf, n);
        }
        for (uint64_t r = 0; r < t_.reduce; ++r) {
            Load(base + r * t_.inner, n, xf);
            AscendC::Sub(xf, xf, mx, n);
            AscendC::Exp(xf, xf, n);
            AscendC::Div(xf, xf, sum, n);
            Store(base + r * t_.inner, n, xf);
        }
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xf_, acc_, acc2_, tmp_;
    AscendC::GlobalTensor<T> xGm_, yGm_;
    SoftmaxTiling t_;
    uint64_t first_ = 0, count_ = 0;
};

extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(SoftmaxTiling);
    GET_TILING_DATA(t, tiling);
    KernelSoftmax<DTYPE_X> op;
    op.Init(x, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<SoftmaxTiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t cores = platform.GetCoreNumAiv();
    uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    int64_t rank = (int64_t)shape.GetDimNum();
    const int64_t* dimAttr = context->GetAttrs()->GetAttrPointer<int64_t>(0);
    int64_t dim = dimAttr ? *dimAttr : -1;
    if (dim < 0) dim += rank;
    if (dim < 0 || dim >= rank) return ge::GRAPH_FAILED;
    t->outer = 1;
    t->inner = 1;
    for (int64_t i = 0; i < dim; ++i) t->outer *= shape.GetDim(i);
    for (int64_t i = dim + 1; i < rank; ++i) t->inner *= shape.GetDim(i);
    t->reduce = shape.GetDim(dim);
    if (t->inner == 1) {
        // Per row element: 2+2 queue buffers of T and one float buffer.
        uint64_t maxLen = (ub - TMP_BYTES - 1024) / (4 * typeSize + sizeof(float)) / 8 * 8;
        if (t->reduce > maxLen) return ge::GRAPH_FAILED;   // a row does not fit: needs a split-row variant
        t->units = t->outer;
        t->chunk = 1;
        t->bufLen = (uint32_t)((t->reduce + 7) / 8 * 8);
    } else {
        uint64_t chunk = t->inner < 2048 ? t->inner : 2048;
        // Spread over the cores when there are few (outer x chunk) units.
        uint64_t perOuter = (cores + t->outer - 1) / t->outer;
        if (perOuter > 1) {
            uint64_t spread = (t->inner + perOuter - 1) / perOuter;
            spread = (spread + 7) / 8 * 8;
            if (spread < chunk) chunk = spread < 64 ? 64 : spread;
            if (chunk > t->inner) chunk = t->inner;
        }
        t->chunk = (uint32_t)chunk;
        t->units = t->outer * ((t->inner + chunk - 1) / chunk);
        t->bufLen = (uint32_t)((chunk + 7) / 8 * 8);
    }
    if (t->units < cores) cores = t->units == 0 ? 1 : t->units;
    t->unitsPerCore = (uint32_t)(t->units / cores);
    t->formerNum = (uint32_t)(t->units % cores);
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
