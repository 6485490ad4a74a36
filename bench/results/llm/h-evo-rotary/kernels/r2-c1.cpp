// ApplyRotaryPosEmb: y = x * cos + rotate(x) * sin for query and key, in float.
// The rows of D elements are processed in tiles of whole rows (UB row stride DP, 32-byte multiple).
// Three constant tables (built once per core) turn every mode and layout into the same four vector
// steps per tile:
//   xs   = Gather(x, swapTab)        rotate_half / pairwise swap of each row
//   cosE = Gather(cosRows, cosTab)   cos (and sin) expanded to the row layout (row r uses cos row r/G)
//   sinE = Gather(sinRows, cosTab) * sign   (sign = -1 on the lanes that take -x2)
//   y    = x * cosE + xs * sinE
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct ApplyRotaryPosEmbCustomTilingData {
    uint32_t d;            // head dim
    uint32_t h;            // d / 2
    uint32_t dp;           // UB row stride of x tiles (elements)
    uint32_t hp;           // UB row stride of cos/sin rows (elements)
    uint32_t interleaved;  // 0: half, 1: interleaved
    uint32_t g;            // tile row r uses cos row r / g (relative)
    uint32_t tileRows;
    uint32_t segRows;      // rows per segment (tiles never cross a segment)
    uint32_t tilesPerSeg;
    uint32_t units;        // segments x tilesPerSeg
    uint32_t formerNum;
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t divA;         // cos base row of segment sg: (sg / divA) % modA * mulA
    uint32_t modA;
    uint32_t mulA;
    uint32_t cosRowsMax;
    uint32_t gm;           // when > 0: tile row r uses cos row (r / g) % gm (tiles start at multiples of g * gm)
};
REGISTER_TILING_DEFAULT(ApplyRotaryPosEmbCustomTilingData);

using namespace AscendC;

template <typename A, typename B> struct RopeSame { static constexpr bool value = false; };
template <typename A> struct RopeSame<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelRope {
public:
    static constexpr bool IS_FLOAT = RopeSame<T, float>::value;

    __aicore__ inline KernelRope() {}

    __aicore__ inline void Init(GM_ADDR q, GM_ADDR k, GM_ADDR cosp, GM_ADDR sinp, GM_ADDR qo, GM_ADDR ko,
                                const ApplyRotaryPosEmbCustomTilingData& t)
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
        qGm_.SetGlobalBuffer((__gm__ T*)q);
        kGm_.SetGlobalBuffer((__gm__ T*)k);
        cGm_.SetGlobalBuffer((__gm__ T*)cosp);
        sGm_.SetGlobalBuffer((__gm__ T*)sinp);
        qoGm_.SetGlobalBuffer((__gm__ T*)qo);
        koGm_.SetGlobalBuffer((__gm__ T*)ko);
        lanes_ = t.tileRows * t.dp;
        cLanes_ = t.cosRowsMax * t.hp;
        pipe_.InitBuffer(xRawBuf_, lanes_ * sizeof(T));
        pipe_.InitBuffer(oRawBuf_, lanes_ * sizeof(T));
        pipe_.InitBuffer(xfBuf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(xsBuf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(t1Buf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(ceBuf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(seBuf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(swapBuf_, lanes_ * sizeof(uint32_t));
        pipe_.InitBuffer(cosTabBuf_, lanes_ * sizeof(uint32_t));
        pipe_.InitBuffer(signBuf_, lanes_ * sizeof(float));
        pipe_.InitBuffer(cRawBuf_, cLanes_ * sizeof(T));
        pipe_.InitBuffer(sRawBuf_, cLanes_ * sizeof(T));
        pipe_.InitBuffer(cfBuf_, cLanes_ * sizeof(float));
        pipe_.InitBuffer(sfBuf_, cLanes_ * sizeof(float));
        evVM2_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE2));
        evM2V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        evVM3_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_MTE3));
        evM3V_ = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE3_V));

        // constant tables
        LocalTensor<uint32_t> sw = swapBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> ct = cosTabBuf_.Get<uint32_t>();
        LocalTensor<float> sg = signBuf_.Get<float>();
        const uint32_t D = t.d;
        const uint32_t H = t.h;
        for (uint32_t r = 0; r < t.tileRows; ++r) {
            const uint32_t crow = t.gm > 0 ? (r / t.g) % t.gm : r / t.g;
            for (uint32_t c = 0; c < t.dp; ++c) {
                const uint32_t lane = r * t.dp + c;
                uint32_t src = c;
                uint32_t ci = 0;
                float sgn = 0.0f;
                if (c < D) {
                    if (t.interleaved) {
                        src = c ^ 1u;
                        ci = c >> 1;
                        sgn = (c & 1u) ? 1.0f : -1.0f;
                    } else {
                        src = c < H ? c + H : c - H;
                        ci = c < H ? c : c - H;
                        sgn = c < H ? -1.0f : 1.0f;
                    }
                }
                sw.SetValue(lane, (r * t.dp + src) * 4);
                ct.SetValue(lane, (crow * t.hp + ci) * 4);
                sg.SetValue(lane, sgn);
            }
        }
        PipeBarrier<PIPE_ALL>();   // the scalar-built tables are complete before any vector use
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t sgI = u / t_.tilesPerSeg;
            const uint32_t ti = u % t_.tilesPerSeg;
            const uint32_t r0 = ti * t_.tileRows;
            const uint32_t rows = (t_.segRows - r0 < t_.tileRows) ? t_.segRows - r0 : t_.tileRows;
            const uint64_t gmRow = static_cast<uint64_t>(sgI) * t_.segRows + r0;
            const uint32_t cosBase = (sgI / t_.divA) % t_.modA * t_.mulA;
            uint32_t cosStart;
            uint32_t cosRows;
            if (t_.gm > 0) {
                cosStart = cosBase + (r0 / t_.g) % t_.gm;
                cosRows = (rows + t_.g - 1) / t_.g;
                if (cosRows > t_.gm) {
                    cosRows = t_.gm;
                }
            } else {
                cosStart = cosBase + r0 / t_.g;
                cosRows = (r0 + rows - 1) / t_.g - r0 / t_.g + 1;
            }
            // cos/sin are broadcast operands: expand them only when the tile needs other cos rows
            // (never again for [B, N, S, D] with a 2-D table, once per position for [B, S, N, D])
            if (cosStart != lastCosStart_ || cosRows != lastCosRows_) {
                LoadCos(cosStart, cosRows);
                lastCosStart_ = cosStart;
                lastCosRows_ = cosRows;
            }
            DoTensor(qGm_, qoGm_, gmRow, rows);
            DoTensor(kGm_, koGm_, gmRow, rows);
        }
    }

private:
    __aicore__ inline void LoadCos(uint32_t cosStart, uint32_t cosRows)
    {
        LocalTensor<T> cr = cRawBuf_.Get<T>();
        LocalTensor<T> sr = sRawBuf_.Get<T>();
        LocalTensor<float> cf = cfBuf_.Get<float>();
        LocalTensor<float> sf = sfBuf_.Get<float>();
        LocalTensor<float> ce = ceBuf_.Get<float>();
        LocalTensor<float> se = seBuf_.Get<float>();
        LocalTensor<uint32_t> ct = cosTabBuf_.Get<uint32_t>();
        LocalTensor<float> sg = signBuf_.Get<float>();
        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        // rows that are whole 32-byte blocks are contiguous in UB too: one long burst instead of many
        DataCopyExtParams cp = (t_.h == t_.hp)
            ? DataCopyExtParams{1, static_cast<uint32_t>(cosRows * t_.h * sizeof(T)), 0, 0, 0}
            : DataCopyExtParams{static_cast<uint16_t>(cosRows), static_cast<uint32_t>(t_.h * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        const uint64_t off = static_cast<uint64_t>(cosStart) * t_.h;
        DataCopyPad(cr, cGm_[off], cp, pad);
        DataCopyPad(sr, sGm_[off], cp, pad);
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        const uint32_t n = cosRows * t_.hp;
        LocalTensor<float> cSrc;
        LocalTensor<float> sSrc;
        if constexpr (IS_FLOAT) {
            cSrc = cr;
            sSrc = sr;
        } else {
            Cast(cf, cr, RoundMode::CAST_NONE, n);
            Cast(sf, sr, RoundMode::CAST_NONE, n);
            cSrc = cf;
            sSrc = sf;
        }
        Gather(ce, cSrc, ct, static_cast<uint32_t>(0), lanes_);
        Gather(se, sSrc, ct, static_cast<uint32_t>(0), lanes_);
        Mul(se, se, sg, static_cast<int32_t>(lanes_));
    }

    __aicore__ inline void DoTensor(GlobalTensor<T>& in, GlobalTensor<T>& out, uint64_t gmRow, uint32_t rows)
    {
        LocalTensor<T> xr = xRawBuf_.Get<T>();
        LocalTensor<T> orw = oRawBuf_.Get<T>();
        LocalTensor<float> xf = xfBuf_.Get<float>();
        LocalTensor<float> xs = xsBuf_.Get<float>();
        LocalTensor<float> t1 = t1Buf_.Get<float>();
        LocalTensor<float> ce = ceBuf_.Get<float>();
        LocalTensor<float> se = seBuf_.Get<float>();
        LocalTensor<uint32_t> sw = swapBuf_.Get<uint32_t>();
        const uint32_t n = rows * t_.dp;
        const int32_t ni = static_cast<int32_t>(n);
        SetFlag<HardEvent::V_MTE2>(evVM2_);
        WaitFlag<HardEvent::V_MTE2>(evVM2_);
        DataCopyExtParams cp = (t_.d == t_.dp)
            ? DataCopyExtParams{1, static_cast<uint32_t>(rows * t_.d * sizeof(T)), 0, 0, 0}
            : DataCopyExtParams{static_cast<uint16_t>(rows), static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(xr, in[gmRow * t_.d], cp, pad);
        SetFlag<HardEvent::MTE2_V>(evM2V_);
        WaitFlag<HardEvent::MTE2_V>(evM2V_);
        LocalTensor<float> x;
        if constexpr (IS_FLOAT) {
            x = xr;
        } else {
            Cast(xf, xr, RoundMode::CAST_NONE, n);
            x = xf;
        }
        Gather(xs, x, sw, static_cast<uint32_t>(0), n);
        Mul(t1, x, ce, ni);
        Mul(xs, xs, se, ni);
        SetFlag<HardEvent::MTE3_V>(evM3V_);   // the previous store has read the output tile
        WaitFlag<HardEvent::MTE3_V>(evM3V_);
        if constexpr (IS_FLOAT) {
            Add(orw, t1, xs, ni);
        } else {
            Add(t1, t1, xs, ni);
            Cast(orw, t1, RoundMode::CAST_RINT, n);
        }
        SetFlag<HardEvent::V_MTE3>(evVM3_);
        WaitFlag<HardEvent::V_MTE3>(evVM3_);
        DataCopyPad(out[gmRow * t_.d], orw, cp);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> xRawBuf_, oRawBuf_, xfBuf_, xsBuf_, t1Buf_, ceBuf_, seBuf_, swapBuf_, cosTabBuf_;
    TBuf<TPosition::VECCALC> signBuf_, cRawBuf_, sRawBuf_, cfBuf_, sfBuf_;
    GlobalTensor<T> qGm_, kGm_, cGm_, sGm_, qoGm_, koGm_;
    ApplyRotaryPosEmbCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
    uint32_t lanes_ = 0;
    uint32_t cLanes_ = 0;
    uint32_t lastCosStart_ = 0xFFFFFFFFu;
    uint32_t lastCosRows_ = 0xFFFFFFFFu;
    event_t evVM2_, evM2V_, evVM3_, evM3V_;
};

extern "C" __global__ __aicore__ void apply_rotary_pos_emb_custom(GM_ADDR query, GM_ADDR key, GM_ADDR cos,
                                                                  GM_ADDR sin, GM_ADDR query_out, GM_ADDR key_out,
                                                                  GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);   // vector-only kernel: no MIX launch
    GET_TILING_DATA(t, tiling);
    KernelRope<DTYPE_QUERY> op;
    op.Init(query, key, cos, sin, query_out, key_out, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& qs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& cs = context->GetInputShape(2)->GetStorageShape();
    if (qs.GetDimNum() != 4) {
        return ge::GRAPH_FAILED;
    }
    int64_t layout = 0;
    bool interleaved = false;
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs != nullptr) {
        const int64_t* lp = attrs->GetAttrPointer<int64_t>(0);
        if (lp != nullptr) {
            layout = *lp;
        }
        const char* mp = attrs->GetAttrPointer<char>(1);
        if (mp != nullptr && mp[0] == 'i') {
            interleaved = true;
        }
    }
    const uint64_t B = qs.GetDim(0);
    const uint64_t S = layout == 1 ? qs.GetDim(2) : qs.GetDim(1);
    const uint64_t N = layout == 1 ? qs.GetDim(1) : qs.GetDim(2);
    const uint64_t D = qs.GetDim(3);
    const uint64_t H = D / 2;
    const bool cos3D = cs.GetDimNum() == 3;
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    const uint64_t xb = dt == ge::DT_FLOAT ? 4 : 2;
    const uint64_t dp = (D * xb + 31) / 32 * 32 / xb;
    const uint64_t hp = (H * xb + 31) / 32 * 32 / xb;

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
    const uint64_t usable = ub - 8448 - 2048;
    // per lane: x raw + out raw (T), xf, xs, t1, cosE, sinE, swap, cosTab, sign (4 B each), plus the
    // cos/sin rows (raw + float, at most half a lane each when every row has its own cos row)
    const uint64_t perLane = 3 * xb + 8 * 4 + 4;
    const uint64_t reserve = 2 * hp * (2 * xb + 8) + 1024;
    const uint64_t maxLanesBudget = usable > reserve ? (usable - reserve) / perLane : dp;
    uint64_t maxRows = maxLanesBudget / dp;
    if (maxRows == 0) {
        maxRows = 1;
    }
    const uint64_t totalRows = B * S * N;
    uint64_t wantRows = (totalRows + 2 * coreNum - 1) / (2 * coreNum);   // >= 2 tiles per core when possible
    if (wantRows == 0) {
        wantRows = 1;
    }
    uint64_t g, tileRows, segRows, segs, divA, modA, mulA;
    uint64_t gm = 0;
    if (layout == 1 && !cos3D && S * 2 <= maxRows) {
        // [B, N, S, D] with one (S, D/2) table: every group of S rows uses cos rows 0..S-1, so a tile
        // holds several whole groups and the cos rows are the same for every tile
        g = 1;
        gm = S;
        segRows = B * N * S;
        segs = 1;
        uint64_t kk = maxRows / S;
        const uint64_t wantK = (wantRows + S - 1) / S;
        if (kk > wantK) {
            kk = wantK;
        }
        if (kk * S > 4095) {
            kk = 4095 / S;
        }
        if (kk == 0) {
            kk = 1;
        }
        tileRows = kk * S;
        divA = 1;
        modA = 1;
        mulA = 0;
    } else if (layout == 1) {
        g = 1;
        segRows = S;
        segs = B * N;
        tileRows = maxRows < S ? maxRows : S;
        if (tileRows > wantRows) {
            tileRows = wantRows;
        }
        divA = N;
        modA = B;
        mulA = cos3D ? S : 0;
    } else if (N <= maxRows) {
        g = N;
        segRows = S * N;
        segs = B;
        uint64_t k = maxRows / N;
        const uint64_t wantK = (wantRows + N - 1) / N;
        if (k > wantK) {
            k = wantK;
        }
        if (k > S) {
            k = S;
        }
        if (k == 0) {
            k = 1;
        }
        tileRows = k * N;
        divA = 1;
        modA = B;
        mulA = cos3D ? S : 0;
    } else {
        g = N;
        segRows = N;
        segs = B * S;
        tileRows = maxRows < N ? maxRows : N;
        divA = 1;
        modA = cos3D ? B * S : S;
        mulA = 1;
    }
    if (tileRows > 4095) {
        tileRows = 4095;
    }
    if (tileRows == 0) {
        tileRows = 1;
    }
    const uint64_t tilesPerSeg = (segRows + tileRows - 1) / tileRows;
    const uint64_t units = segs * tilesPerSeg;
    // block dim = min(vector cores, ceil(bytes / 16 KB)) (query + key bytes), never more blocks than units
    const uint64_t inBytes = 2 * totalRows * D * xb;
    uint64_t blockDim = (inBytes + 16383) / 16384;
    if (blockDim > coreNum) {
        blockDim = coreNum;
    }
    if (blockDim > units) {
        blockDim = units;
    }
    if (blockDim == 0) {
        blockDim = 1;
    }
    auto* t = context->GetTilingData<ApplyRotaryPosEmbCustomTilingData>();
    t->d = static_cast<uint32_t>(D);
    t->h = static_cast<uint32_t>(H);
    t->dp = static_cast<uint32_t>(dp);
    t->hp = static_cast<uint32_t>(hp);
    t->interleaved = interleaved ? 1 : 0;
    t->g = static_cast<uint32_t>(g);
    t->tileRows = static_cast<uint32_t>(tileRows);
    t->segRows = static_cast<uint32_t>(segRows);
    t->tilesPerSeg = static_cast<uint32_t>(tilesPerSeg);
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    t->divA = static_cast<uint32_t>(divA == 0 ? 1 : divA);
    t->modA = static_cast<uint32_t>(modA == 0 ? 1 : modA);
    t->mulA = static_cast<uint32_t>(mulA);
    t->cosRowsMax = static_cast<uint32_t>(gm > 0 ? gm : (tileRows + g - 1) / g + 1);
    t->gm = static_cast<uint32_t>(gm);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (apply_rotary_pos_emb).
class ApplyRotaryPosEmbCustom : public OpDef {
public:
    explicit ApplyRotaryPosEmbCustom(const char* name) : OpDef(name)
    {
        this->Input("query")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("key")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("cos")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("sin")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("query_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("key_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("layout").AttrType(OPTIONAL).Int(0);
        this->Attr("rotaryMode").AttrType(OPTIONAL).String("half");
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(ApplyRotaryPosEmbCustom);
}  // namespace ops


