// Conv3DBackpropFilter: the weight gradient of a 3-D convolution, written for Cannpilot from the
// operator's maths and the documented AscendC API (a MIX kernel on the high-level Matmul API).
//
//   dW[co, c] = sum over p = (n, od, oh, ow) of grad[n, co, p] * col[p, c]
//   c = (ci, kd, kh, kw),  col[p, c] = x[n, ci, od*sd - pd + kd*dd, oh*sh - ph + kh*dh, ow*sw - pw + kw*dw]
//   (zero outside x), per group: co and ci within the group.
// That is a product (Cout/g x P) . (P x Kc) with a long reduction P = N Do Ho Wo. An item is one group
// and one block of COLS columns c; the AIV that owns it walks P in chunks of LINES output lines
// (one (n, od, oh) each, Wo positions) and per chunk
//   1. builds col^T for its columns (COLS x Kp, Kp = lines x Wo) in its workspace slot: per line the
//      x row (n, ci, id, ih) is loaded once into UB and Gather picks the Wo values each kw needs
//      (a zero slot for the padding), KW rows at a time;
//   2. stages the chunk of grad (Cout/g rows x Kp) in the slot (the Matmul's A rows must be <= 65535);
//   3. asks its AIC for C = A . col (fp32) and adds C to its fp32 accumulator in UB.
// At the end the accumulator goes to dW in the output dtype.
#include <type_traits>
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr uint32_t ACC_BYTES = 64 * 1024;   // the item's fp32 accumulator (Cout/g x COLS) in UB
constexpr uint32_t COL_BYTES = 64 * 1024;   // KW col^T rows of one chunk in UB; also the C tile
constexpr uint32_t STAGE_BYTES = 32 * 1024; // grad rows on their way to the slot
constexpr uint32_t W_MAX = 2048;            // the x row in UB (W elements; zeros at ZERO_AT for the padding)
constexpr uint32_t ZERO_AT = W_MAX - 16;
constexpr uint32_t KP_MAX = 16384;          // reduction length of one product

struct Conv3dBpfTiling {
    AscendC::tiling::TCubeTiling mm;        // (Cout/g, COLS, Kp) T x T^T -> float
    uint32_t n, cin, d, h, w, cout, od, oh, ow, kd, kh, kw;
    uint32_t sd, sh, sw, pd, ph, pw, dd, dh, dw, groups, cing, coutg;
    uint32_t kc, cols, colBlocks, items, perAiv, lines, owPad;
    uint64_t slot, aOff, bOff, cOff;        // bytes
};
REGISTER_TILING_DEFAULT(Conv3dBpfTiling);

using namespace AscendC;
using T = DTYPE_X;
using YT = DTYPE_Y;

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

class KernelConv3dBackpropFilter {
public:
    using AType = MatmulType<TPosition::GM, CubeFormat::ND, T>;
    using BType = MatmulType<TPosition::GM, CubeFormat::ND, T, true>;
    using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

    __aicore__ inline void Run(GM_ADDR x, GM_ADDR grad, GM_ADDR y, GM_ADDR workspace, const Conv3dBpfTiling& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm_, &t_.mm);
        const uint32_t aiv = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t first = aiv * t_.perAiv;
        if (first >= t_.items) {
            return;
        }
        const uint32_t last = MinU(first + t_.perAiv, t_.items);
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x));
        gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(grad));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ YT*>(y));
        GM_ADDR ws = GetUserWorkspace(workspace) + static_cast<uint64_t>(aiv) * t_.slot;
        aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws + t_.aOff));
        bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws + t_.bOff));
        cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.cOff));
        pipe_.InitBuffer(accBuf_, ACC_BYTES);
        pipe_.InitBuffer(colBuf_, COL_BYTES);
        pipe_.InitBuffer(stageBuf_, STAGE_BYTES);
        pipe_.InitBuffer(xRowBuf_, W_MAX * sizeof(T));
        pipe_.InitBuffer(offBuf_, 8 * t_.owPad * sizeof(uint32_t));
        Duplicate(xRowBuf_.Get<T>()[ZERO_AT], static_cast<T>(0.0f), 16);
        for (uint32_t it = first; it < last; ++it) {
            const uint32_t g = it / t_.colBlocks;
            const uint32_t c0 = (it % t_.colBlocks) * t_.cols;
            const uint32_t nc = MinU(t_.cols, t_.kc - c0);
            Item(g, c0, nc);
        }
        mm_.End();
    }

private:
    __aicore__ inline void Item(uint32_t g, uint32_t c0, uint32_t nc)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        const uint32_t ncPad = CeilTo(nc, 16);   // accumulator rows on 64-byte (fp32) / 32-byte (b16) pitches
        Duplicate(acc, 0.0f, t_.coutg * ncPad);
        PipeBarrier<PIPE_ALL>();
        const uint32_t linesPerN = t_.od * t_.oh;
        for (uint32_t n = 0; n < t_.n; ++n) {
            for (uint32_t l0 = 0; l0 < linesPerN; l0 += t_.lines) {
                const uint32_t lines = MinU(t_.lines, linesPerN - l0);
                const uint32_t kp = lines * t_.ow;
                BuildColumns(n, g, c0, nc, l0, lines);
                StageGrad(n, g, l0, kp);
                PipeBarrier<PIPE_ALL>();
                mm_.SetOrgShape(t_.coutg, nc, kp, kp);
                mm_.SetSingleShape(t_.coutg, nc, kp);
                mm_.SetTensorA(aGm_);
                mm_.SetTensorB(bGm_, true);
                mm_.IterateAll(cGm_);
                PipeBarrier<PIPE_ALL>();
                Accumulate(nc);
            }
        }
        // dW rows of this group's output channels, columns c0 .. c0 + nc
        LocalTensor<YT> out = colBuf_.Get<YT>();
        Cast(out, acc, RoundMode::CAST_RINT, t_.coutg * ncPad);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        const uint64_t at = static_cast<uint64_t>(g) * t_.coutg * t_.kc + c0;
        DataCopyExtParams o{static_cast<uint16_t>(t_.coutg), static_cast<uint32_t>(nc * sizeof(YT)),
                            static_cast<uint32_t>((ncPad * sizeof(YT) - CeilTo(nc * sizeof(YT), 32)) / 32),
                            static_cast<uint32_t>((t_.kc - nc) * sizeof(YT)), 0};
        DataCopyPad(yGm_[at], out, o);
        PipeBarrier<PIPE_ALL>();
    }

    // Byte offsets into the x row of the Wo values of each kw of a run (ZERO_AT for the padding).
    __aicore__ inline void KwOffsets(uint32_t kwFirst, uint32_t kws)
    {
        LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
        PipeBarrier<PIPE_ALL>();   // the previous run's Gathers have read the table
        for (uint32_t k = 0; k < kws; ++k) {
            for (uint32_t o = 0; o < t_.owPad; ++o) {
                const int64_t iw = static_cast<int64_t>(o) * t_.sw - t_.pw + static_cast<int64_t>(kwFirst + k) * t_.dw;
                const bool in = o < t_.ow && iw >= 0 && iw < static_cast<int64_t>(t_.w);
                off.SetValue(k * t_.owPad + o, static_cast<uint32_t>((in ? iw : ZERO_AT) * sizeof(T)));
            }
        }
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
    }

    // col^T rows c0 .. c0 + nc for the chunk's lines -> bGm_ (nc x kp). Columns are walked as runs of
    // consecutive kw that share (ci, kd, kh), so one x row load serves the run.
    __aicore__ inline void BuildColumns(uint32_t n, uint32_t g, uint32_t c0, uint32_t nc, uint32_t l0, uint32_t lines)
    {
        LocalTensor<T> xRow = xRowBuf_.Get<T>();
        LocalTensor<T> col = colBuf_.Get<T>();
        LocalTensor<uint32_t> off = offBuf_.Get<uint32_t>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        const uint32_t kp = lines * t_.ow;
        const uint32_t k3 = t_.kd * t_.kh * t_.kw;
        for (uint32_t c = c0; c < c0 + nc;) {
            const uint32_t ci = c / k3, r = c % k3;
            const uint32_t kdI = r / (t_.kh * t_.kw), khI = (r / t_.kw) % t_.kh, kwI = r % t_.kw;
            const uint32_t run = MinU(t_.kw - kwI, c0 + nc - c);
            KwOffsets(kwI, run);
            const uint64_t xChan = (static_cast<uint64_t>(n) * t_.cin + g * t_.cing + ci) * t_.d * t_.h * t_.w;
            for (uint32_t l = 0; l < lines; ++l) {
                const uint32_t line = l0 + l;
                const int64_t id = static_cast<int64_t>(line / t_.oh) * t_.sd - t_.pd + static_cast<int64_t>(kdI) * t_.dd;
                const int64_t ih = static_cast<int64_t>(line % t_.oh) * t_.sh - t_.ph + static_cast<int64_t>(khI) * t_.dh;
                const bool in = id >= 0 && id < static_cast<int64_t>(t_.d) && ih >= 0 && ih < static_cast<int64_t>(t_.h);
                if (!in) {
                    for (uint32_t k = 0; k < run; ++k) {
                        Duplicate(col[(k * t_.lines + l) * t_.owPad], static_cast<T>(0.0f), t_.owPad);
                    }
                    continue;
                }
                DataCopyExtParams p{1, static_cast<uint32_t>(t_.w * sizeof(T)), 0, 0, 0};
                DataCopyPad(xRow, xGm_[xChan + (static_cast<uint64_t>(id) * t_.h + ih) * t_.w], p, pad);
                SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
                WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                for (uint32_t k = 0; k < run; ++k) {
                    Gather(col[(k * t_.lines + l) * t_.owPad], xRow, off[k * t_.owPad], 0, t_.owPad);
                }
                SetFlag<HardEvent::V_MTE2>(EVENT_ID0);
                WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
            }
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            for (uint32_t k = 0; k < run; ++k) {
                // the lines' Wo values back to back: one row of col^T
                DataCopyExtParams o{static_cast<uint16_t>(lines), static_cast<uint32_t>(t_.ow * sizeof(T)),
                                    static_cast<uint32_t>((t_.owPad * sizeof(T) - CeilTo(t_.ow * sizeof(T), 32)) / 32), 0, 0};
                DataCopyPad(bGm_[static_cast<uint64_t>(c - c0 + k) * kp], col[k * t_.lines * t_.owPad], o);
            }
            SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
            c += run;
        }
        PipeBarrier<PIPE_ALL>();
    }

    // grad[n, group's co, p0 .. p0 + kp] -> aGm_ (Cout/g x kp)
    __aicore__ inline void StageGrad(uint32_t n, uint32_t g, uint32_t l0, uint32_t kp)
    {
        LocalTensor<T> st = stageBuf_.Get<T>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        const uint64_t pn = static_cast<uint64_t>(t_.od) * t_.oh * t_.ow;
        const uint32_t kpPad = CeilTo(kp, 16);
        const uint32_t rowsPer = MinU(STAGE_BYTES / (kpPad * sizeof(T)), 255);
        const uint32_t gap = static_cast<uint32_t>((kpPad * sizeof(T) - CeilTo(kp * sizeof(T), 32)) / 32);
        for (uint32_t r0 = 0; r0 < t_.coutg; r0 += rowsPer) {
            const uint32_t nr = MinU(rowsPer, t_.coutg - r0);
            const uint64_t at = (static_cast<uint64_t>(n) * t_.cout + g * t_.coutg + r0) * pn +
                                static_cast<uint64_t>(l0) * t_.ow;
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(kp * sizeof(T)),
                                static_cast<uint32_t>((pn - kp) * sizeof(T)), gap, 0};
            DataCopyPad(st, gGm_[at], p, pad);
            SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            DataCopyExtParams o{static_cast<uint16_t>(nr), static_cast<uint32_t>(kp * sizeof(T)), gap, 0, 0};
            DataCopyPad(aGm_[static_cast<uint64_t>(r0) * kp], st, o);
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
    }

    // acc += C (Cout/g x nc, fp32, from the slot)
    __aicore__ inline void Accumulate(uint32_t nc)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> c = colBuf_.Get<float>();
        const uint32_t ncPad = CeilTo(nc, 16);
        DataCopyExtParams p{static_cast<uint16_t>(t_.coutg), static_cast<uint32_t>(nc * sizeof(float)), 0,
                            static_cast<uint32_t>((ncPad * sizeof(float) - CeilTo(nc * sizeof(float), 32)) / 32), 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        DataCopyPad(c, cGm_, p, pad);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Add(acc, acc, c, t_.coutg * ncPad);
        PipeBarrier<PIPE_ALL>();
    }

    TPipe pipe_;
    Matmul<AType, BType, CType, BiasType> mm_;
    TBuf<TPosition::VECCALC> accBuf_, colBuf_, stageBuf_, xRowBuf_, offBuf_;
    GlobalTensor<T> xGm_, gGm_, aGm_, bGm_;
    GlobalTensor<float> cGm_;
    GlobalTensor<YT> yGm_;
    Conv3dBpfTiling t_;
};

extern "C" __global__ __aicore__ void conv_3d_backprop_filter_custom(GM_ADDR x, GM_ADDR grad, GM_ADDR y,
                                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelConv3dBackpropFilter op;
    op.Run(x, grad, y, workspace, t);
}

namespace optiling {
static uint64_t Align512(uint64_t v) { return (v + 511) / 512 * 512; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& gs = context->GetInputShape(1)->GetStorageShape();
    if (xs.GetDimNum() != 5 || gs.GetDimNum() != 5) {
        return ge::GRAPH_FAILED;
    }
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const gert::TypedContinuousVector<int64_t>* strides = attrs->GetListInt(0);
    const gert::TypedContinuousVector<int64_t>* pads = attrs->GetListInt(1);
    const gert::TypedContinuousVector<int64_t>* dils = attrs->GetListInt(2);
    const int64_t* groups = attrs->GetAttrPointer<int64_t>(3);
    const gert::TypedContinuousVector<int64_t>* fsize = attrs->GetListInt(4);
    if (strides == nullptr || pads == nullptr || dils == nullptr || fsize == nullptr || strides->GetSize() != 3 ||
        pads->GetSize() != 6 || dils->GetSize() != 3 || fsize->GetSize() != 5) {
        return ge::GRAPH_FAILED;
    }
    const int64_t* st = strides->GetData();
    const int64_t* pd = pads->GetData();
    const int64_t* dl = dils->GetData();
    const int64_t* fs = fsize->GetData();
    Conv3dBpfTiling* t = context->GetTilingData<Conv3dBpfTiling>();
    t->n = static_cast<uint32_t>(xs.GetDim(0));
    t->cin = static_cast<uint32_t>(xs.GetDim(1));
    t->d = static_cast<uint32_t>(xs.GetDim(2));
    t->h = static_cast<uint32_t>(xs.GetDim(3));
    t->w = static_cast<uint32_t>(xs.GetDim(4));
    t->cout = static_cast<uint32_t>(gs.GetDim(1));
    t->od = static_cast<uint32_t>(gs.GetDim(2));
    t->oh = static_cast<uint32_t>(gs.GetDim(3));
    t->ow = static_cast<uint32_t>(gs.GetDim(4));
    t->kd = static_cast<uint32_t>(fs[2]);
    t->kh = static_cast<uint32_t>(fs[3]);
    t->kw = static_cast<uint32_t>(fs[4]);
    t->sd = static_cast<uint32_t>(st[0]);
    t->sh = static_cast<uint32_t>(st[1]);
    t->sw = static_cast<uint32_t>(st[2]);
    t->pd = static_cast<uint32_t>(pd[0]);   // front / top / left: the golden pads symmetrically with these
    t->ph = static_cast<uint32_t>(pd[2]);
    t->pw = static_cast<uint32_t>(pd[4]);
    t->dd = static_cast<uint32_t>(dl[0]);
    t->dh = static_cast<uint32_t>(dl[1]);
    t->dw = static_cast<uint32_t>(dl[2]);
    t->groups = groups == nullptr ? 1 : static_cast<uint32_t>(*groups);
    if (t->groups == 0 || t->cin % t->groups != 0 || t->cout % t->groups != 0 || gs.GetDim(0) != xs.GetDim(0) ||
        fs[0] != t->cout || fs[1] * t->groups != t->cin || t->w + 32 > W_MAX || t->kw > 8 || t->ow == 0) {
        return ge::GRAPH_FAILED;
    }
    t->cing = t->cin / t->groups;
    t->coutg = t->cout / t->groups;
    t->kc = t->cing * t->kd * t->kh * t->kw;
    t->owPad = (t->ow + 15) / 16 * 16;
    // columns per item: the accumulator (Cout/g x cols fp32) must fit ACC_BYTES, cols <= 64
    uint32_t cols = ACC_BYTES / (t->coutg * 4);
    cols = cols / 16 * 16;
    cols = cols > 64 ? 64 : cols;
    if (cols == 0) {
        return ge::GRAPH_FAILED;
    }
    t->cols = cols < t->kc ? cols : t->kc;
    t->colBlocks = (t->kc + t->cols - 1) / t->cols;
    t->items = t->groups * t->colBlocks;
    // lines per chunk: KW col^T rows of them fit COL_BYTES, Kp <= KP_MAX, and the C tile fits COL_BYTES
    uint32_t lines = COL_BYTES / (t->kw * t->owPad * 2);
    const uint32_t byKp = KP_MAX / t->ow;
    lines = lines < byKp ? lines : byKp;
    lines = lines < t->od * t->oh ? lines : t->od * t->oh;
    if (lines == 0 || static_cast<uint64_t>(t->coutg) * ((t->cols + 15) / 16 * 16) * 4 > COL_BYTES) {
        return ge::GRAPH_FAILED;
    }
    t->lines = lines;
    const uint32_t kpMax = lines * t->ow;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto dt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(0)->GetDataType());
    matmul_tiling::MatmulApiTiling m(plat);
    m.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt);
    m.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt, true);
    m.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    m.SetShape(static_cast<int32_t>(t->coutg), static_cast<int32_t>(t->cols), static_cast<int32_t>(kpMax));
    m.SetOrgShape(static_cast<int32_t>(t->coutg), static_cast<int32_t>(t->cols), static_cast<int32_t>(kpMax));
    m.SetBias(false);
    m.SetBufferSpace(-1, -1, -1);
    if (m.GetTiling(t->mm) == -1) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t aivMax = 2 * plat.GetCoreNumAic();
    t->perAiv = (t->items + aivMax - 1) / aivMax;
    const uint32_t aivs = (t->items + t->perAiv - 1) / t->perAiv;
    const uint32_t blocks = (aivs + 1) / 2;
    context->SetBlockDim(blocks);
    t->aOff = 0;
    t->bOff = Align512(t->aOff + static_cast<uint64_t>(t->coutg) * kpMax * 2);
    t->cOff = Align512(t->bOff + static_cast<uint64_t>(t->cols) * kpMax * 2);
    t->slot = Align512(t->cOff + static_cast<uint64_t>(t->coutg) * t->cols * 4);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + t->slot * 2 * blocks;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class Conv3dBackpropFilterCustom : public OpDef {
public:
    explicit Conv3dBackpropFilterCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("grad").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("strides").AttrType(REQUIRED).ListInt();
        this->Attr("pads").AttrType(REQUIRED).ListInt();
        this->Attr("dilations").AttrType(REQUIRED).ListInt();
        this->Attr("groups").AttrType(OPTIONAL).Int(1);
        this->Attr("filter_size").AttrType(REQUIRED).ListInt();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(Conv3dBackpropFilterCustom);
}  // namespace ops
