// Scatter (scatter_ / scatter_add_ / scatter_reduce_ with include_self) along one dim.
// data and y are viewed as [outer, Rd, inner], indices and updates as [outerI, Ri, innerI] (each
// indices dim <= the data dim). Every (oi, ji) "line" of indices writes only into the y line
// (o(oi), :, j(ji)), so lines are split over the cores and no two cores touch the same y element.
// Phase 1: every core copies its 256-element units of data to y (DMA through UB). SyncAll.
// Phase 2: line by line, in index order i (the order torch's CPU loop uses), the scalar unit applies
// y[o, idx, j] = update (or op= update: add, multiply, amax, amin). When the scatter runs along the
// last axis and a whole y row fits in UB, the row, its indices and its updates are loaded with DMA,
// scattered in UB and written back; otherwise the updates are applied to y in GM directly.
// 16-bit values are combined in float and rounded after every update, like the golden.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t SC_UNIT = 256;
constexpr uint32_t SC_MAXD = 8;
constexpr uint32_t SC_COPY_TILE = 8192;     // elements per copy tile
constexpr uint32_t SC_ROW_BYTES = 110 * 1024;   // UB for a y row + its indices and updates

struct ScatterCustomTilingData {
    uint64_t total;          // elements of data / y
    uint64_t outer, rd, inner;          // data view
    uint64_t outerI, ri, innerI;        // indices / updates view
    uint32_t nOuter, nInner;            // number of dims before / after dim
    uint32_t dataOuterDims[SC_MAXD];
    uint32_t idxOuterDims[SC_MAXD];
    uint32_t dataInnerDims[SC_MAXD];
    uint32_t idxInnerDims[SC_MAXD];
    uint32_t mode;           // 0 update, 1 add, 2 multiply, 3 amax, 4 amin
    uint32_t unitsBase, unitsExtra;     // phase-1 copy split
    uint32_t linesBase, linesExtra;     // phase-2 line split
    uint32_t usedCores;
    uint32_t rowPath;        // 1: inner == innerI == 1 and a y row fits in UB
    uint32_t floatAcc;       // 1: 16-bit add / multiply: accumulate a y line in float, round once
};
REGISTER_TILING_DEFAULT(ScatterCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct ScSame { static constexpr bool value = false; };
template <typename A> struct ScSame<A, A> { static constexpr bool value = true; };

template <typename T, typename TI>
class KernelScatter {
public:
    static constexpr bool IS_F16 = ScSame<T, half>::value;
    static constexpr bool IS_BF16 = ScSame<T, bfloat16_t>::value;
    static constexpr bool IS_F32 = ScSame<T, float>::value;
    static constexpr bool IS_INT = !IS_F16 && !IS_BF16 && !IS_F32;

    __aicore__ inline KernelScatter() {}

    __aicore__ inline void Init(GM_ADDR data, GM_ADDR indices, GM_ADDR updates, GM_ADDR y,
                                const ScatterCustomTilingData* t)
    {
        t_ = t;
        idx_ = static_cast<uint32_t>(GetBlockIdx());
        dGm_.SetGlobalBuffer((__gm__ T*)data);
        iGm_.SetGlobalBuffer((__gm__ TI*)indices);
        uGm_.SetGlobalBuffer((__gm__ T*)updates);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        pipe_.InitBuffer(copyQ_, 1, SC_COPY_TILE * sizeof(T));
        if (t->rowPath != 0) {
            pipe_.InitBuffer(rowBuf_, static_cast<uint32_t>(t->rd * sizeof(T)));
            pipe_.InitBuffer(ixBuf_, static_cast<uint32_t>(t->ri * sizeof(TI)));
            pipe_.InitBuffer(upBuf_, static_cast<uint32_t>(t->ri * sizeof(T)));
        }
        if (t->floatAcc != 0) {
            pipe_.InitBuffer(lineBuf_, static_cast<uint32_t>(t->rd * sizeof(float)));
        }
    }

    __aicore__ inline void Process()
    {
        if (t_->rowPath == 0) {
            CopyAll();
            SyncAll();   // y holds data everywhere before any core scatters into it
        }
        const uint64_t lines = t_->outerI * t_->innerI;
        const uint64_t first = static_cast<uint64_t>(idx_) * t_->linesBase + (idx_ < t_->linesExtra ? idx_ : t_->linesExtra);
        const uint64_t cnt = t_->linesBase + (idx_ < t_->linesExtra ? 1 : 0);
        if (t_->rowPath != 0) {
            RowPath(first, cnt);
            return;
        }
        for (uint64_t l = first; l < first + cnt && l < lines; ++l) {
            GmLine(l);
        }
    }

private:
    // ---------------- phase 1: y = data ----------------
    __aicore__ inline void CopyRange(uint64_t start, uint64_t end)
    {
        for (uint64_t off = start; off < end; off += SC_COPY_TILE) {
            const uint32_t n = static_cast<uint32_t>(end - off < SC_COPY_TILE ? end - off : SC_COPY_TILE);
            LocalTensor<T> b = copyQ_.AllocTensor<T>();
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(b, dGm_[off], cp, pad);
            copyQ_.EnQue(b);
            b = copyQ_.DeQue<T>();
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_MTE3));
            SetFlag<HardEvent::MTE2_MTE3>(e);
            WaitFlag<HardEvent::MTE2_MTE3>(e);
            DataCopyPad(yGm_[off], b, cp);
            event_t e2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_MTE2));
            SetFlag<HardEvent::MTE3_MTE2>(e2);
            WaitFlag<HardEvent::MTE3_MTE2>(e2);
            copyQ_.FreeTensor(b);
        }
    }

    __aicore__ inline void CopyAll()
    {
        const uint64_t u0 = static_cast<uint64_t>(idx_) * t_->unitsBase + (idx_ < t_->unitsExtra ? idx_ : t_->unitsExtra);
        const uint64_t un = t_->unitsBase + (idx_ < t_->unitsExtra ? 1 : 0);
        const uint64_t start = u0 * SC_UNIT;
        uint64_t end = (u0 + un) * SC_UNIT;
        end = end < t_->total ? end : t_->total;
        if (start < end) {
            CopyRange(start, end);
        }
        PipeBarrier<PIPE_ALL>();
    }

    // ---------------- coordinates ----------------
    // flat index over the indices dims -> flat index over the data dims (same coordinates)
    __aicore__ inline uint64_t MapFlat(uint64_t f, const uint32_t* idxDims, const uint32_t* dataDims, uint32_t nd)
    {
        uint64_t out = 0;
        uint64_t scale = 1;
        for (int32_t d = static_cast<int32_t>(nd) - 1; d >= 0; --d) {
            const uint64_t c = f % idxDims[d];
            f /= idxDims[d];
            out += c * scale;
            scale *= dataDims[d];
        }
        return out;
    }

    // ---------------- element combine ----------------
    __aicore__ inline float ToF(T v)
    {
        if constexpr (IS_BF16) {
            const uint16_t bits = *reinterpret_cast<const uint16_t*>(&v);
            const uint32_t w = static_cast<uint32_t>(bits) << 16;
            return *reinterpret_cast<const float*>(&w);
        } else {
            return static_cast<float>(v);
        }
    }
    __aicore__ inline T FromF(float f)
    {
        if constexpr (IS_BF16) {
            uint32_t w = *reinterpret_cast<const uint32_t*>(&f);
            if ((w & 0x7F800000u) == 0x7F800000u && (w & 0x007FFFFFu) != 0) {
                w = (w | 0x00400000u);                       // quiet NaN
            } else {
                w += 0x7FFFu + ((w >> 16) & 1u);             // round to nearest even
            }
            const uint16_t bits = static_cast<uint16_t>(w >> 16);
            return *reinterpret_cast<const T*>(&bits);
        } else {
            return static_cast<T>(f);
        }
    }
    __aicore__ inline T Combine(T y, T u)
    {
        const uint32_t m = t_->mode;
        if (m == 0) {
            return u;
        }
        if constexpr (IS_INT) {
            if (m == 1) {
                return static_cast<T>(y + u);
            } else if (m == 2) {
                return static_cast<T>(y * u);
            } else if (m == 3) {
                return u > y ? u : y;
            } else {
                return u < y ? u : y;
            }
        } else {
            const float a = ToF(y);
            const float b = ToF(u);
            float r;
            if (m == 1) {
                r = a + b;
            } else if (m == 2) {
                r = a * b;
            } else if (m == 3) {
                r = (b != b || a != a) ? (a != a ? a : b) : (b > a ? b : a);
            } else {
                r = (b != b || a != a) ? (a != a ? a : b) : (b < a ? b : a);
            }
            if constexpr (IS_F32) {
                return r;
            } else {
                return FromF(r);
            }
        }
    }

    __aicore__ inline float CombineF(float a, float b)
    {
        const uint32_t m = t_->mode;
        if (m == 1) {
            return a + b;
        } else if (m == 2) {
            return a * b;
        } else if (m == 3) {
            return (b != b || a != a) ? (a != a ? a : b) : (b > a ? b : a);
        } else if (m == 4) {
            return (b != b || a != a) ? (a != a ? a : b) : (b < a ? b : a);
        }
        return b;
    }

    // ---------------- phase 2, GM path: one indices line ----------------
    __aicore__ inline void GmLine(uint64_t l)
    {
        const uint64_t oi = l / t_->innerI;
        const uint64_t ji = l % t_->innerI;
        const uint64_t o = MapFlat(oi, t_->idxOuterDims, t_->dataOuterDims, t_->nOuter);
        const uint64_t j = MapFlat(ji, t_->idxInnerDims, t_->dataInnerDims, t_->nInner);
        const uint64_t ybase = o * t_->rd * t_->inner + j;
        const uint64_t ibase = oi * t_->ri * t_->innerI + ji;
        if constexpr (!IS_INT && !IS_F32) {
            if (t_->floatAcc != 0) {   // the y line in float: one rounding per element at the end
                LocalTensor<float> lf = lineBuf_.Get<float>();
                const uint64_t rd = t_->rd;
                for (uint64_t r = 0; r < rd; ++r) {
                    lf.SetValue(static_cast<uint32_t>(r), ToF(yGm_.GetValue(ybase + r * t_->inner)));
                }
                for (uint64_t i = 0; i < t_->ri; ++i) {
                    const uint64_t ip = ibase + i * t_->innerI;
                    const uint32_t id = static_cast<uint32_t>(iGm_.GetValue(ip));
                    lf.SetValue(id, CombineF(lf.GetValue(id), ToF(uGm_.GetValue(ip))));
                }
                for (uint64_t r = 0; r < rd; ++r) {
                    yGm_.SetValue(ybase + r * t_->inner, FromF(lf.GetValue(static_cast<uint32_t>(r))));
                }
                return;
            }
        }
        for (uint64_t i = 0; i < t_->ri; ++i) {
            const uint64_t ip = ibase + i * t_->innerI;
            const int64_t id = static_cast<int64_t>(iGm_.GetValue(ip));
            const T u = uGm_.GetValue(ip);
            const uint64_t yp = ybase + static_cast<uint64_t>(id) * t_->inner;
            if (t_->mode == 0) {
                yGm_.SetValue(yp, u);
            } else {
                yGm_.SetValue(yp, Combine(yGm_.GetValue(yp), u));
            }
        }
    }

    // ---------------- phase 2, row path (scatter along the last axis, rows in UB) ----------------
    __aicore__ inline void RowPath(uint64_t first, uint64_t cnt)
    {
        LocalTensor<T> row = rowBuf_.Get<T>();
        LocalTensor<TI> ix = ixBuf_.Get<TI>();
        LocalTensor<T> up = upBuf_.Get<T>();
        const uint64_t rd = t_->rd;
        const uint64_t ri = t_->ri;
        // rows of y without any indices line: plain copies
        const uint64_t lines = t_->outerI;
        for (uint64_t l = first; l < first + cnt && l < lines; ++l) {
            const uint64_t o = MapFlat(l, t_->idxOuterDims, t_->dataOuterDims, t_->nOuter);
            DataCopyExtParams cr{1, static_cast<uint32_t>(rd * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(row, dGm_[o * rd], cr, pad);
            DataCopyExtParams ci{1, static_cast<uint32_t>(ri * sizeof(TI)), 0, 0, 0};
            DataCopyPadExtParams<TI> padi{false, 0, 0, 0};
            DataCopyPad(ix, iGm_[l * ri], ci, padi);
            DataCopyExtParams cu{1, static_cast<uint32_t>(ri * sizeof(T)), 0, 0, 0};
            DataCopyPad(up, uGm_[l * ri], cu, pad);
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_S));
            SetFlag<HardEvent::MTE2_S>(e);
            WaitFlag<HardEvent::MTE2_S>(e);
            bool viaFloat = false;
            if constexpr (!IS_INT && !IS_F32) {
                if (t_->floatAcc != 0) {   // accumulate the row in float, round once at the end
                    viaFloat = true;
                    LocalTensor<float> lf = lineBuf_.Get<float>();
                    for (uint64_t r = 0; r < rd; ++r) {
                        lf.SetValue(static_cast<uint32_t>(r), ToF(row.GetValue(static_cast<uint32_t>(r))));
                    }
                    for (uint64_t i = 0; i < ri; ++i) {
                        const uint32_t id = static_cast<uint32_t>(ix.GetValue(static_cast<uint32_t>(i)));
                        lf.SetValue(id, CombineF(lf.GetValue(id), ToF(up.GetValue(static_cast<uint32_t>(i)))));
                    }
                    for (uint64_t r = 0; r < rd; ++r) {
                        row.SetValue(static_cast<uint32_t>(r), FromF(lf.GetValue(static_cast<uint32_t>(r))));
                    }
                }
            }
            if (!viaFloat) {
                for (uint64_t i = 0; i < ri; ++i) {
                    const uint32_t id = static_cast<uint32_t>(ix.GetValue(static_cast<uint32_t>(i)));
                    const T u = up.GetValue(static_cast<uint32_t>(i));
                    if (t_->mode == 0) {
                        row.SetValue(id, u);
                    } else {
                        row.SetValue(id, Combine(row.GetValue(id), u));
                    }
                }
            }
            event_t e2 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::S_MTE3));
            SetFlag<HardEvent::S_MTE3>(e2);
            WaitFlag<HardEvent::S_MTE3>(e2);
            DataCopyPad(yGm_[o * rd], row, cr);
            event_t e3 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_MTE2));
            SetFlag<HardEvent::MTE3_MTE2>(e3);
            WaitFlag<HardEvent::MTE3_MTE2>(e3);
            event_t e4 = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_S));
            SetFlag<HardEvent::MTE3_S>(e4);
            WaitFlag<HardEvent::MTE3_S>(e4);
        }
        // rows of y that no indices row reaches (o >= outerI in some dim) are copied as they are
        CopyUncoveredRows();
    }

    // Row path: copy the data rows that have no indices row (their outer coordinate lies outside
    // the indices' outer dims); split over the cores by rows.
    __aicore__ inline void CopyUncoveredRows()
    {
        const uint64_t rows = t_->outer;
        const uint32_t cores = t_->usedCores;
        for (uint64_t o = idx_; o < rows; o += cores) {
            // coordinates of data row o inside the indices' outer dims?
            uint64_t f = o;
            bool covered = true;
            for (int32_t d = static_cast<int32_t>(t_->nOuter) - 1; d >= 0; --d) {
                const uint64_t c = f % t_->dataOuterDims[d];
                f /= t_->dataOuterDims[d];
                if (c >= t_->idxOuterDims[d]) {
                    covered = false;
                }
            }
            if (!covered) {
                CopyRange(o * t_->rd, (o + 1) * t_->rd);
            }
        }
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> copyQ_;
    TBuf<TPosition::VECCALC> rowBuf_, ixBuf_, upBuf_, lineBuf_;
    GlobalTensor<T> dGm_, uGm_, yGm_;
    GlobalTensor<TI> iGm_;
    const ScatterCustomTilingData* t_ = nullptr;
    uint32_t idx_ = 0;
};

extern "C" __global__ __aicore__ void scatter_custom(GM_ADDR data, GM_ADDR indices, GM_ADDR updates, GM_ADDR y,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);   // vector-only kernel: one block per AIV core
    GET_TILING_DATA(t, tiling);
    KernelScatter<DTYPE_DATA, DTYPE_INDICES> op;
    op.Init(data, indices, updates, y, &t);
    op.Process();
}

namespace optiling {
static bool ScStrEq(const char* a, const char* b)
{
    if (a == nullptr) {
        return false;
    }
    while (*a != 0 && *b != 0) {
        if (*a != *b) {
            return false;
        }
        ++a;
        ++b;
    }
    return *a == *b;
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ScatterCustomTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const gert::Shape& ds = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& is = context->GetInputShape(1)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(ds.GetDimNum());
    const int64_t* dimAttr = context->GetAttrs()->GetAttrPointer<int64_t>(0);
    const char* red = context->GetAttrs()->GetAttrPointer<char>(1);
    int64_t dim = dimAttr != nullptr ? *dimAttr : 0;
    if (nd == 0) {
        return ge::GRAPH_FAILED;
    }
    if (dim < 0) {
        dim += nd;
    }
    if (dim < 0 || dim >= nd || static_cast<int64_t>(is.GetDimNum()) != nd || nd > static_cast<int64_t>(SC_MAXD)) {
        return ge::GRAPH_FAILED;
    }
    uint32_t mode = 0;
    if (ScStrEq(red, "add")) {
        mode = 1;
    } else if (ScStrEq(red, "multiply")) {
        mode = 2;
    } else if (ScStrEq(red, "amax")) {
        mode = 3;
    } else if (ScStrEq(red, "amin")) {
        mode = 4;
    }
    t->mode = mode;
    uint64_t outer = 1, inner = 1, outerI = 1, innerI = 1;
    t->nOuter = static_cast<uint32_t>(dim);
    t->nInner = static_cast<uint32_t>(nd - dim - 1);
    for (int64_t i = 0; i < dim; ++i) {
        t->dataOuterDims[i] = static_cast<uint32_t>(ds.GetDim(i));
        t->idxOuterDims[i] = static_cast<uint32_t>(is.GetDim(i));
        outer *= static_cast<uint64_t>(ds.GetDim(i));
        outerI *= static_cast<uint64_t>(is.GetDim(i));
    }
    for (int64_t i = dim + 1; i < nd; ++i) {
        t->dataInnerDims[i - dim - 1] = static_cast<uint32_t>(ds.GetDim(i));
        t->idxInnerDims[i - dim - 1] = static_cast<uint32_t>(is.GetDim(i));
        inner *= static_cast<uint64_t>(ds.GetDim(i));
        innerI *= static_cast<uint64_t>(is.GetDim(i));
    }
    for (uint32_t i = t->nOuter; i < SC_MAXD; ++i) {
        t->dataOuterDims[i] = 1;
        t->idxOuterDims[i] = 1;
    }
    for (uint32_t i = t->nInner; i < SC_MAXD; ++i) {
        t->dataInnerDims[i] = 1;
        t->idxInnerDims[i] = 1;
    }
    t->outer = outer;
    t->rd = static_cast<uint64_t>(ds.GetDim(dim));
    t->inner = inner;
    t->outerI = outerI;
    t->ri = static_cast<uint64_t>(is.GetDim(dim));
    t->innerI = innerI;
    t->total = static_cast<uint64_t>(ds.GetShapeSize());

    const uint64_t cores = platform.GetCoreNumAiv();
    auto dsz = [](ge::DataType d) -> uint64_t {
        return (d == ge::DT_FLOAT16 || d == ge::DT_BF16) ? 2 : ((d == ge::DT_INT64) ? 8 : 4);
    };
    const uint64_t szT = dsz(context->GetInputDesc(0)->GetDataType());
    const uint64_t szI = dsz(context->GetInputDesc(1)->GetDataType());
    const uint64_t r32 = (t->rd * szT + 31) / 32 * 32 + (t->ri * szI + 31) / 32 * 32 + (t->ri * szT + 31) / 32 * 32;
    const bool is16 = szT == 2 && context->GetInputDesc(0)->GetDataType() != ge::DT_INT16;
    const bool acc = is16 && (mode == 1 || mode == 2) && t->rd * 4 <= 48 * 1024;
    t->floatAcc = acc ? 1 : 0;
    const uint64_t extra = acc ? t->rd * 4 : 0;
    t->rowPath = (inner == 1 && innerI == 1 && r32 + extra <= SC_ROW_BYTES) ? 1 : 0;
    const uint64_t lines = outerI * innerI;
    const uint64_t units = (t->total + SC_UNIT - 1) / SC_UNIT;
    uint64_t used = cores;
    const uint64_t work = lines > units ? lines : units;
    used = work < used ? work : used;
    used = used == 0 ? 1 : used;
    t->usedCores = static_cast<uint32_t>(used);
    t->unitsBase = static_cast<uint32_t>(units / used);
    t->unitsExtra = static_cast<uint32_t>(units % used);
    t->linesBase = static_cast<uint32_t>(lines / used);
    t->linesExtra = static_cast<uint32_t>(lines % used);
    context->SetBlockDim(static_cast<uint32_t>(used));
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class ScatterCustom : public OpDef {
public:
    explicit ScatterCustom(const char* name) : OpDef(name)
    {
        this->Input("data")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16,
                       ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("indices")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64,
                       ge::DT_INT32, ge::DT_INT64, ge::DT_INT32, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("updates")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16,
                       ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_FLOAT, ge::DT_BF16, ge::DT_BF16,
                       ge::DT_INT32, ge::DT_INT32, ge::DT_INT64, ge::DT_INT64})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                     ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND,
                                 ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("dim").AttrType(REQUIRED).Int();
        this->Attr("reduce").AttrType(OPTIONAL).String("none");
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ScatterCustom);
}  // namespace ops
