// QuantMatmul, out = dequant(x1 @ x2): int8 x int8 -> int32 on the cube, the epilogue on the vector
// cores. A MIX kernel (one AIC and two AIVs per block, 1:2 as on 910B), written for Cannpilot from
// the documented AscendC API.
//   AIC: per 128 x 128 output tile, K in steps of 256: GM -> L1 with DataCopy ND2NZ, L1 -> L0A with
//        LoadData (Zz rows of fractals), L1 -> L0B with LoadDataWithTranspose (32 x 32 int8 squares
//        into Zn), Mmad accumulating in L0C, Fixpipe the int32 tile (ND) to this block's GM workspace;
//        CrossCoreSetFlag (mode 2) tells both AIVs, and the next tile waits until both have read it.
//   AIV: half of the tile's rows each: int32 (+ int32 bias) -> float, x scale (per tensor or channel),
//        + offset, x pertoken_scale, + float bias, -> float16 / bfloat16, to GM.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct QuantMatmulTiling {
    uint32_t batch;        // product of x1's batch dims
    uint32_t x2Batched;    // x2 has the batch dims too (else one weight for every batch)
    uint32_t m, k, n;
    uint32_t tilesM, tilesN;
    uint32_t scaleLen;     // 1 (per tensor) or n (per channel)
    uint32_t offsetLen;    // 0 (absent), 1 or n
    uint32_t hasPertoken;
    uint32_t biasKind;     // 0 none, 1 int32 (before the scale), 2 floating (after it)
    uint32_t biasBatched;  // bias of shape [batch, 1, n] (else [n] or [1, n])
    uint32_t blockDim;
};
REGISTER_TILING_DEFAULT(QuantMatmulTiling);

constexpr uint32_t BASE_M = 128;
constexpr uint32_t BASE_N = 128;
constexpr uint32_t BASE_K = 256;
constexpr uint32_t EPI_ROWS = 16;        // rows per vector step of the epilogue
constexpr uint16_t FLAG_TILE_READY = 1;  // AIC -> AIVs: the tile is in the workspace
constexpr uint16_t FLAG_TILE_FREE = 2;   // AIVs -> AIC: both have read it

using namespace AscendC;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

// The cube side: one 128 x 128 int32 tile at a time into the workspace.
class QuantMatmulCube {
public:
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR ws, const QuantMatmulTiling& t)
    {
        t_ = t;
        x1_.SetGlobalBuffer((__gm__ int8_t*)x1, static_cast<uint64_t>(t.batch) * t.m * t.k);
        x2_.SetGlobalBuffer((__gm__ int8_t*)x2, static_cast<uint64_t>(t.x2Batched ? t.batch : 1) * t.k * t.n);
        ws_.SetGlobalBuffer((__gm__ int32_t*)ws + static_cast<uint64_t>(GetBlockIdx()) * BASE_M * BASE_N,
                            BASE_M * BASE_N);
        pipe_.InitBuffer(a1_, 1, BASE_M * BASE_K);
        pipe_.InitBuffer(b1_, 1, BASE_K * BASE_N);
        pipe_.InitBuffer(a2_, 1, BASE_M * BASE_K);
        pipe_.InitBuffer(b2_, 1, BASE_K * BASE_N);
        pipe_.InitBuffer(c_, 1, BASE_M * BASE_N * sizeof(int32_t));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = t_.batch * t_.tilesM * t_.tilesN;
        uint32_t done = 0;
        for (uint32_t tile = GetBlockIdx(); tile < tiles; tile += t_.blockDim) {
            const uint32_t b = tile / (t_.tilesM * t_.tilesN);
            const uint32_t r = tile % (t_.tilesM * t_.tilesN);
            const uint32_t m0 = (r / t_.tilesN) * BASE_M, n0 = (r % t_.tilesN) * BASE_N;
            const uint32_t mt = t_.m - m0 < BASE_M ? t_.m - m0 : BASE_M;
            const uint32_t nt = t_.n - n0 < BASE_N ? t_.n - n0 : BASE_N;
            LocalTensor<int32_t> c = c_.AllocTensor<int32_t>();
            for (uint32_t k0 = 0; k0 < t_.k; k0 += BASE_K) {
                const uint32_t kt = t_.k - k0 < BASE_K ? t_.k - k0 : BASE_K;
                MatmulStep(b, m0, n0, k0, mt, nt, kt, c);
            }
            c_.EnQue(c);
            c = c_.DeQue<int32_t>();
            if (done > 0) {
                CrossCoreWaitFlag(FLAG_TILE_FREE);   // the AIVs have read the previous tile
            }
            FixpipeParamsV220 fp;
            fp.nSize = static_cast<uint16_t>(nt);
            fp.mSize = static_cast<uint16_t>(mt);
            fp.srcStride = static_cast<uint16_t>(CeilTo(mt, 16));
            fp.dstStride = BASE_N;
            fp.ndNum = 1;
            Fixpipe(ws_, c, fp);
            c_.FreeTensor(c);
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_TILE_READY);
            ++done;
        }
    }

private:
    __aicore__ inline void MatmulStep(uint32_t b, uint32_t m0, uint32_t n0, uint32_t k0, uint32_t mt, uint32_t nt,
                                      uint32_t kt, LocalTensor<int32_t>& c)
    {
        const uint32_t mp = CeilTo(mt, 16), kp = CeilTo(kt, 32), np = CeilTo(nt, 32);
        const uint64_t aOff = (static_cast<uint64_t>(b) * t_.m + m0) * t_.k + k0;
        const uint64_t bOff = (static_cast<uint64_t>(t_.x2Batched ? b : 0) * t_.k + k0) * t_.n + n0;
        LocalTensor<int8_t> a1 = a1_.AllocTensor<int8_t>();
        LocalTensor<int8_t> b1 = b1_.AllocTensor<int8_t>();
        // ND -> Nz: A (mt x kt) with mp rows per 32-column block, B (kt x nt) with kp rows
        DataCopy(a1, x1_[aOff], Nd2NzParams(1, mt, kt, 0, t_.k, mp, 1, 0));
        DataCopy(b1, x2_[bOff], Nd2NzParams(1, kt, nt, 0, t_.n, kp, 1, 0));
        a1_.EnQue(a1);
        b1_.EnQue(b1);
        a1 = a1_.DeQue<int8_t>();
        b1 = b1_.DeQue<int8_t>();
        LocalTensor<int8_t> a2 = a2_.AllocTensor<int8_t>();
        LocalTensor<int8_t> b2 = b2_.AllocTensor<int8_t>();
        const uint32_t mb = mp / 16, kb = kp / 32, nb = np / 16;
        for (uint32_t i = 0; i < mb; ++i) {   // L0A Zz: fractal row i = the i-th fractal of every 32-column block
            LoadData(a2[i * kb * 512], a1, LoadData2DParams(i, kb, mb, 0, 0, false, 0));
        }
        for (uint32_t cb = 0; cb < np / 32; ++cb) {   // L0B Zn: 32 x 32 squares transposed
            LoadDataWithTranspose(b2[2 * cb * 512], b1, LoadData2dTransposeParams(cb * kb, kb, 1, nb - 1, 0));
        }
        a1_.FreeTensor(a1);
        b1_.FreeTensor(b1);
        a2_.EnQue(a2);
        b2_.EnQue(b2);
        a2 = a2_.DeQue<int8_t>();
        b2 = b2_.DeQue<int8_t>();
        MmadParams mm(static_cast<uint16_t>(mt), static_cast<uint16_t>(np), static_cast<uint16_t>(kt));
        mm.cmatrixInitVal = k0 == 0;
        Mmad(c, a2, b2, mm);
        a2_.FreeTensor(a2);
        b2_.FreeTensor(b2);
    }

    TPipe pipe_;
    TQue<TPosition::A1, 1> a1_;
    TQue<TPosition::B1, 1> b1_;
    TQue<TPosition::A2, 1> a2_;
    TQue<TPosition::B2, 1> b2_;
    TQue<TPosition::CO1, 1> c_;
    GlobalTensor<int8_t> x1_, x2_;
    GlobalTensor<int32_t> ws_;
    QuantMatmulTiling t_;
};

// The vector side: the epilogue of half of each tile's rows.
template <typename S, typename BIAS, typename OUT>
class QuantMatmulEpilogue {
public:
    __aicore__ inline void Init(GM_ADDR scale, GM_ADDR offset, GM_ADDR pertoken, GM_ADDR bias, GM_ADDR out, GM_ADDR ws,
                                const QuantMatmulTiling& t)
    {
        t_ = t;
        aic_ = static_cast<uint32_t>(GetBlockIdx() / GetTaskRation());
        sub_ = static_cast<uint32_t>(GetSubBlockIdx());
        ws_.SetGlobalBuffer((__gm__ int32_t*)ws + static_cast<uint64_t>(aic_) * BASE_M * BASE_N, BASE_M * BASE_N);
        out_.SetGlobalBuffer((__gm__ OUT*)out, static_cast<uint64_t>(t.batch) * t.m * t.n);
        scale_.SetGlobalBuffer((__gm__ S*)scale, t.scaleLen);
        if (t.offsetLen > 0) offset_.SetGlobalBuffer((__gm__ float*)offset, t.offsetLen);
        if (t.hasPertoken) pertoken_.SetGlobalBuffer((__gm__ float*)pertoken, t.m);
        if (t.biasKind > 0) bias_.SetGlobalBuffer((__gm__ BIAS*)bias, static_cast<uint64_t>(t.n) * (t.biasBatched ? t.batch : 1));
        pipe_.InitBuffer(inQ_, 2, EPI_ROWS * BASE_N * sizeof(int32_t));
        pipe_.InitBuffer(outQ_, 2, EPI_ROWS * BASE_N * sizeof(OUT));
        pipe_.InitBuffer(acc_, EPI_ROWS * BASE_N * sizeof(float));
        pipe_.InitBuffer(scaleBuf_, BASE_N * sizeof(float));
        pipe_.InitBuffer(offsetBuf_, BASE_N * sizeof(float));
        pipe_.InitBuffer(biasBuf_, BASE_N * sizeof(float));
        pipe_.InitBuffer(stage_, BASE_N * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = t_.batch * t_.tilesM * t_.tilesN;
        for (uint32_t tile = aic_; tile < tiles; tile += t_.blockDim) {
            const uint32_t b = tile / (t_.tilesM * t_.tilesN);
            const uint32_t r = tile % (t_.tilesM * t_.tilesN);
            const uint32_t m0 = (r / t_.tilesN) * BASE_M, n0 = (r % t_.tilesN) * BASE_N;
            const uint32_t mt = t_.m - m0 < BASE_M ? t_.m - m0 : BASE_M;
            const uint32_t nt = t_.n - n0 < BASE_N ? t_.n - n0 : BASE_N;
            const uint32_t half = (mt + 1) / 2;
            const uint32_t rowLo = sub_ == 0 ? 0 : half, rowHi = sub_ == 0 ? half : mt;
            LoadColumnParams(b, n0, nt);
            CrossCoreWaitFlag(FLAG_TILE_READY);
            for (uint32_t row = rowLo; row < rowHi; row += EPI_ROWS) {
                const uint32_t rows = rowHi - row < EPI_ROWS ? rowHi - row : EPI_ROWS;
                Epilogue(b, m0, n0, row, rows, nt);
            }
            CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_TILE_FREE);
        }
    }

private:
    // The tile's columns of scale, offset and bias, as float (int32 bias stays int32, in biasBuf_).
    __aicore__ inline void LoadColumnParams(uint32_t b, uint32_t n0, uint32_t nt)
    {
        LocalTensor<float> sc = scaleBuf_.Get<float>();
        if (t_.scaleLen > 1) {
            LoadFloat(sc, scale_[n0], nt);
        }
        if (t_.offsetLen > 1) {
            LocalTensor<float> off = offsetBuf_.Get<float>();
            LoadFloat(off, offset_[n0], nt);
        }
        const uint64_t biasAt = static_cast<uint64_t>(t_.biasBatched ? b : 0) * t_.n + n0;
        if constexpr (SameType<BIAS, int32_t>::value) {
            if (t_.biasKind == 1) {
                LocalTensor<int32_t> bi = biasBuf_.Get<int32_t>();
                DataCopyExtParams cp{1, static_cast<uint32_t>(nt * sizeof(int32_t)), 0, 0, 0};
                DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
                DataCopyPad(bi, bias_[biasAt], cp, pad);
            }
        } else {
            if (t_.biasKind == 2) {
                LocalTensor<float> bf = biasBuf_.Get<float>();
                LoadFloat(bf, bias_[biasAt], nt);
            }
        }
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(e);
        WaitFlag<HardEvent::MTE2_V>(e);
    }

    template <typename T>
    __aicore__ inline void LoadFloat(LocalTensor<float>& dst, const GlobalTensor<T>& src, uint32_t n)
    {
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        if constexpr (SameType<T, float>::value) {
            DataCopyPad(dst, src, cp, pad);
        } else {
            LocalTensor<T> raw = stage_.Get<T>();
            DataCopyPad(raw, src, cp, pad);
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
            SetFlag<HardEvent::MTE2_V>(e);
            WaitFlag<HardEvent::MTE2_V>(e);
            Cast(dst, raw, RoundMode::CAST_NONE, n);
        }
    }

    __aicore__ inline void Epilogue(uint32_t b, uint32_t m0, uint32_t n0, uint32_t row, uint32_t rows, uint32_t nt)
    {
        LocalTensor<int32_t> in = inQ_.AllocTensor<int32_t>();
        DataCopyExtParams cpIn{static_cast<uint16_t>(rows), static_cast<uint32_t>(nt * sizeof(int32_t)),
                               static_cast<uint32_t>((BASE_N - nt) * sizeof(int32_t)),
                               static_cast<uint32_t>((BASE_N - CeilTo(nt, 8)) / 8), 0};
        DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
        DataCopyPad(in, ws_[static_cast<uint64_t>(row) * BASE_N], cpIn, pad);
        inQ_.EnQue(in);
        in = inQ_.DeQue<int32_t>();
        LocalTensor<float> acc = acc_.Get<float>();
        LocalTensor<float> sc = scaleBuf_.Get<float>();
        const int32_t cnt = static_cast<int32_t>(nt);
        float scalarScale = 0.0f;
        if (t_.scaleLen == 1) {
            scalarScale = static_cast<float>(scale_.GetValue(0));
        }
        for (uint32_t i = 0; i < rows; ++i) {
            LocalTensor<int32_t> ri = in[i * BASE_N];
            LocalTensor<float> rf = acc[i * BASE_N];
            if (t_.biasKind == 1) {
                LocalTensor<int32_t> bi = biasBuf_.Get<int32_t>();
                Add(ri, ri, bi, cnt);
            }
            Cast(rf, ri, RoundMode::CAST_NONE, nt);
            if (t_.scaleLen == 1) {
                Muls(rf, rf, scalarScale, cnt);
            } else {
                Mul(rf, rf, sc, cnt);
            }
            if (t_.offsetLen == 1) {
                Adds(rf, rf, offset_.GetValue(0), cnt);
            } else if (t_.offsetLen > 1) {
                LocalTensor<float> off = offsetBuf_.Get<float>();
                Add(rf, rf, off, cnt);
            }
            if (t_.hasPertoken) {
                Muls(rf, rf, pertoken_.GetValue(m0 + row + i), cnt);
            }
            if (t_.biasKind == 2) {
                LocalTensor<float> bf = biasBuf_.Get<float>();
                Add(rf, rf, bf, cnt);
            }
        }
        inQ_.FreeTensor(in);
        LocalTensor<OUT> y = outQ_.AllocTensor<OUT>();
        Cast(y, acc, RoundMode::CAST_RINT, rows * BASE_N);
        outQ_.EnQue(y);
        y = outQ_.DeQue<OUT>();
        const uint64_t dst = (static_cast<uint64_t>(b) * t_.m + m0 + row) * t_.n + n0;
        DataCopyExtParams cpOut{static_cast<uint16_t>(rows), static_cast<uint32_t>(nt * sizeof(OUT)),
                                static_cast<uint32_t>((BASE_N * sizeof(OUT) - CeilTo(nt * sizeof(OUT), 32)) / 32),
                                static_cast<uint32_t>((t_.n - nt) * sizeof(OUT)), 0};
        DataCopyPad(out_[dst], y, cpOut);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 2> inQ_;
    TQue<TPosition::VECOUT, 2> outQ_;
    TBuf<TPosition::VECCALC> acc_, scaleBuf_, offsetBuf_, biasBuf_, stage_;
    GlobalTensor<int32_t> ws_;
    GlobalTensor<OUT> out_;
    GlobalTensor<S> scale_;
    GlobalTensor<float> offset_, pertoken_;
    GlobalTensor<BIAS> bias_;
    QuantMatmulTiling t_;
    uint32_t aic_ = 0, sub_ = 0;
};

extern "C" __global__ __aicore__ void quant_matmul_custom(GM_ADDR x1, GM_ADDR x2, GM_ADDR scale, GM_ADDR offset,
                                                          GM_ADDR pertoken_scale, GM_ADDR bias, GM_ADDR out,
                                                          GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA(t, tiling);
    GM_ADDR ws = GetUserWorkspace(workspace);
    if ASCEND_IS_AIC {
        QuantMatmulCube op;
        op.Init(x1, x2, ws, t);
        op.Process();
    }
    if ASCEND_IS_AIV {
        QuantMatmulEpilogue<DTYPE_SCALE, DTYPE_BIAS, DTYPE_OUT> op;
        op.Init(scale, offset, pertoken_scale, bias, out, ws, t);
        op.Process();
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& s1 = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& s2 = context->GetInputShape(1)->GetStorageShape();
    const size_t d1 = s1.GetDimNum(), d2 = s2.GetDimNum();
    uint64_t batch = 1;
    for (size_t i = 0; i + 2 < d1; ++i) batch *= s1.GetDim(i);
    QuantMatmulTiling* t = context->GetTilingData<QuantMatmulTiling>();
    t->batch = static_cast<uint32_t>(batch);
    t->x2Batched = d2 > 2 ? 1 : 0;
    t->m = static_cast<uint32_t>(d1 >= 2 ? s1.GetDim(d1 - 2) : 1);
    t->k = static_cast<uint32_t>(s1.GetDim(d1 - 1));
    t->n = static_cast<uint32_t>(s2.GetDim(d2 - 1));
    t->tilesM = (t->m + BASE_M - 1) / BASE_M;
    t->tilesN = (t->n + BASE_N - 1) / BASE_N;
    t->scaleLen = static_cast<uint32_t>(context->GetInputShape(2)->GetStorageShape().GetShapeSize());
    const gert::StorageShape* off = context->GetOptionalInputShape(3);
    t->offsetLen = off == nullptr ? 0 : static_cast<uint32_t>(off->GetStorageShape().GetShapeSize());
    t->hasPertoken = context->GetOptionalInputShape(4) == nullptr ? 0 : 1;
    const gert::CompileTimeTensorDesc* bias = context->GetOptionalInputDesc(5);
    t->biasKind = bias == nullptr ? 0 : (bias->GetDataType() == ge::DT_INT32 ? 1 : 2);
    const gert::StorageShape* biasShape = context->GetOptionalInputShape(5);
    t->biasBatched = biasShape != nullptr && biasShape->GetStorageShape().GetShapeSize() > t->n ? 1 : 0;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint64_t tiles = static_cast<uint64_t>(t->batch) * t->tilesM * t->tilesN;
    const uint64_t aic = plat.GetCoreNumAic();
    const uint64_t blockDim = tiles < aic ? (tiles == 0 ? 1 : tiles) : aic;
    t->blockDim = static_cast<uint32_t>(blockDim);
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + blockDim * BASE_M * BASE_N * sizeof(int32_t);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (quant_matmul).
class QuantMatmulCustom : public OpDef {
public:
    explicit QuantMatmulCustom(const char* name) : OpDef(name)
    {
        this->Input("x1").ParamType(REQUIRED).DataType({ge::DT_INT8}).Format({ge::FORMAT_ND});
        this->Input("x2").ParamType(REQUIRED).DataType({ge::DT_INT8}).Format({ge::FORMAT_ND});
        this->Input("scale").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_BF16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("offset").ParamType(OPTIONAL).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("pertoken_scale").ParamType(OPTIONAL).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("bias").ParamType(OPTIONAL)
            .DataType({ge::DT_INT32, ge::DT_BF16, ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("out").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("output_dtype").AttrType(OPTIONAL).String("float16");
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(QuantMatmulCustom);
}  // namespace ops
