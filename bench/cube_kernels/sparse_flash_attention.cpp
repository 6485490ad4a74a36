// SparseFlashAttention: y = softmax(scale * Q K_sel^T) V_sel per query head, where K_sel / V_sel are the
// topK key / value rows sparseIndices picks for the query position (shared by the G = N1 / N2 query
// heads of a key head), minus those a bottom-right causal mask removes (index > s1 + S2 - S1). Written
// for Cannpilot from the operator's maths and the documented AscendC API: a MIX kernel on the
// high-level Matmul API.
//
// An item is one (batch, key head, query position). The AIV that owns it
//   1. reads the topK indices, keeps the valid ones (in range, causal) in a list;
//   2. gathers the kept K rows (input dtype) and V rows (as fp32) into its workspace slot, a chunk of
//      rows at a time through UB (one row copy in, one block copy out per chunk);
//   3. stages the G query rows (BSND: adjacent heads, BNSD: S1 * Dk apart) in the slot;
//   4. asks its AIC for S = Q K_sel^T (fp32), runs the row softmax on the vector unit, asks for
//      O = P V_sel (fp32 x fp32 -> fp32), and writes O's G rows to y in its dtype.
// A position with no kept index gets zero rows (the golden's all-masked rule).
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr uint32_t TOPK_MAX = 2048;          // kept indices in UB
constexpr uint32_t D_MAX = 1024;             // head dims the row buffers hold
constexpr uint32_t CHUNK_BYTES = 32 * 1024;  // UB rows per gather / copy step
constexpr int32_t L1_HALF = 262016;          // each Matmul object's share of the AIC's L1 (910B: 524032 B)
constexpr int32_t L0C_HALF = 65536;          // and of L0C

struct SfaTiling {
    AscendC::tiling::TCubeTiling mm1;        // S = Q K^T: (G, topK, Dk), T x T^T -> float
    AscendC::tiling::TCubeTiling mm2;        // O = P V: (G, Dv, topK), float x float -> float
    uint32_t b, s1, s2, n1, n2, g, dk, dv, topk, causal;
    uint64_t qst[3], kst[3], vst[3], ist[3], ost[3];   // (batch, seq, head) strides in elements
    uint32_t items, perAiv;
    float scale;
    uint64_t slot, qOff, kOff, vOff, sOff, oOff;       // bytes
};
REGISTER_TILING_DEFAULT(SfaTiling);

using namespace AscendC;
using T = DTYPE_QUERY;
using YT = DTYPE_Y;

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

class KernelSparseFlashAttention {
public:
    using QType = MatmulType<TPosition::GM, CubeFormat::ND, T>;
    using KType = MatmulType<TPosition::GM, CubeFormat::ND, T, true>;
    using FType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

    __aicore__ inline void Run(GM_ADDR q, GM_ADDR k, GM_ADDR v, GM_ADDR idx, GM_ADDR y, GM_ADDR workspace,
                               const SfaTiling& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm1_, &t_.mm1, mm2_, &t_.mm2);
        const uint32_t aiv = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t first = aiv * t_.perAiv;
        if (first >= t_.items) {
            return;
        }
        const uint32_t last = MinU(first + t_.perAiv, t_.items);
        qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(q));
        kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(k));
        vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(v));
        idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(idx));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ YT*>(y));
        GM_ADDR ws = GetUserWorkspace(workspace) + static_cast<uint64_t>(aiv) * t_.slot;
        qsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws + t_.qOff));
        ksGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws + t_.kOff));
        vsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.vOff));
        sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.sOff));
        oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.oOff));
        pipe_.InitBuffer(idxBuf_, TOPK_MAX * sizeof(int32_t));
        pipe_.InitBuffer(keptBuf_, TOPK_MAX * sizeof(int32_t));
        pipe_.InitBuffer(inBuf_, CHUNK_BYTES);
        pipe_.InitBuffer(outBuf_, 2 * CHUNK_BYTES);
        pipe_.InitBuffer(rowBuf_, TOPK_MAX * sizeof(float));
        pipe_.InitBuffer(tmpBuf_, (TOPK_MAX / 32 + 64) * sizeof(float));
        for (uint32_t it = first; it < last; ++it) {
            const uint32_t s = it % t_.s1;
            const uint32_t bn = it / t_.s1;
            const uint32_t b = bn / t_.n2, n = bn % t_.n2;
            const uint32_t cnt = KeptIndices(b, n, s);
            if (cnt == 0) {
                WriteZeros(b, n, s);
                continue;
            }
            GatherRows(b, n, cnt);
            StageQ(b, n, s);
            PipeBarrier<PIPE_ALL>();
            mm1_.SetOrgShape(t_.g, cnt, t_.dk, t_.dk);
            mm1_.SetSingleShape(t_.g, cnt, t_.dk);
            mm1_.SetTensorA(qsGm_);
            mm1_.SetTensorB(ksGm_, true);
            mm1_.IterateAll(sGm_);
            PipeBarrier<PIPE_ALL>();
            Softmax(cnt);
            PipeBarrier<PIPE_ALL>();
            mm2_.SetOrgShape(t_.g, t_.dv, cnt, cnt);
            mm2_.SetSingleShape(t_.g, t_.dv, cnt);
            mm2_.SetTensorA(sGm_);
            mm2_.SetTensorB(vsGm_);
            mm2_.IterateAll(oGm_);
            PipeBarrier<PIPE_ALL>();
            WriteOut(b, n, s);
        }
        mm1_.End();
        mm2_.End();
    }

private:
    // The valid indices of (b, n, s) into keptBuf_, in the order given; returns their count.
    __aicore__ inline uint32_t KeptIndices(uint32_t b, uint32_t n, uint32_t s)
    {
        LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
        LocalTensor<int32_t> kept = keptBuf_.Get<int32_t>();
        const uint64_t at = b * t_.ist[0] + s * t_.ist[1] + n * t_.ist[2];
        DataCopyExtParams p{1, static_cast<uint32_t>(t_.topk * sizeof(int32_t)), 0, 0, 0};
        DataCopyPadExtParams<int32_t> pad{false, 0, 0, 0};
        DataCopyPad(idx, idxGm_[at], p, pad);
        SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
        // causal, bottom-right aligned: position s sees keys up to s + S2 - S1
        const int64_t limit = t_.causal ? static_cast<int64_t>(s) + t_.s2 - t_.s1 : static_cast<int64_t>(t_.s2) - 1;
        uint32_t cnt = 0;
        for (uint32_t j = 0; j < t_.topk; ++j) {
            const int32_t i = idx.GetValue(j);
            if (i >= 0 && static_cast<uint32_t>(i) < t_.s2 && i <= limit) {
                kept.SetValue(cnt++, i);
            }
        }
        PipeBarrier<PIPE_ALL>();
        return cnt;
    }

    // K rows (input dtype) and V rows (fp32) of the kept indices into the slot, cnt x Dk and cnt x Dv.
    __aicore__ inline void GatherRows(uint32_t b, uint32_t n, uint32_t cnt)
    {
        LocalTensor<int32_t> kept = keptBuf_.Get<int32_t>();
        const uint64_t kBase = b * t_.kst[0] + n * t_.kst[2];
        const uint64_t vBase = b * t_.vst[0] + n * t_.vst[2];
        LocalTensor<T> in = inBuf_.Get<T>();
        LocalTensor<float> wide = outBuf_.Get<float>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        // K: a chunk of rows gathered into UB at the row pitch dkPad, then one copy to the slot
        const uint32_t dkPad = CeilTo(t_.dk, 16);
        const uint32_t kRows = MinU(CHUNK_BYTES / (dkPad * sizeof(T)), 255);
        for (uint32_t c0 = 0; c0 < cnt; c0 += kRows) {
            const uint32_t nr = MinU(kRows, cnt - c0);
            for (uint32_t r = 0; r < nr; ++r) {
                const uint64_t row = static_cast<uint64_t>(kept.GetValue(c0 + r));
                DataCopyExtParams p{1, static_cast<uint32_t>(t_.dk * sizeof(T)), 0, 0, 0};
                DataCopyPad(in[r * dkPad], kGm_[kBase + row * t_.kst[1]], p, pad);
            }
            SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            DataCopyExtParams o{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.dk * sizeof(T)),
                                static_cast<uint32_t>((dkPad * sizeof(T) - CeilTo(t_.dk * sizeof(T), 32)) / 32), 0, 0};
            DataCopyPad(ksGm_[static_cast<uint64_t>(c0) * t_.dk], in, o);
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
        // V: rows into UB, widened to fp32, one copy to the slot
        const uint32_t dvPad = CeilTo(t_.dv, 16);
        const uint32_t vRows = MinU(CHUNK_BYTES / (dvPad * sizeof(T)), MinU(2 * CHUNK_BYTES / (dvPad * 4), 255));
        for (uint32_t c0 = 0; c0 < cnt; c0 += vRows) {
            const uint32_t nr = MinU(vRows, cnt - c0);
            for (uint32_t r = 0; r < nr; ++r) {
                const uint64_t row = static_cast<uint64_t>(kept.GetValue(c0 + r));
                DataCopyExtParams p{1, static_cast<uint32_t>(t_.dv * sizeof(T)), 0, 0, 0};
                DataCopyPad(in[r * dvPad], vGm_[vBase + row * t_.vst[1]], p, pad);
            }
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            Cast(wide, in, RoundMode::CAST_NONE, nr * dvPad);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopyExtParams o{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.dv * 4),
                                static_cast<uint32_t>((dvPad * 4 - CeilTo(t_.dv * 4, 32)) / 32), 0, 0};
            DataCopyPad(vsGm_[static_cast<uint64_t>(c0) * t_.dv], wide, o);
            PipeBarrier<PIPE_ALL>();
        }
    }

    // The G query rows of (b, key head n, s) -> slot rows (G x Dk).
    __aicore__ inline void StageQ(uint32_t b, uint32_t n, uint32_t s)
    {
        LocalTensor<T> in = inBuf_.Get<T>();
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        const uint32_t dkPad = CeilTo(t_.dk, 16);
        const uint32_t rowsPer = MinU(CHUNK_BYTES / (dkPad * sizeof(T)), 255);
        for (uint32_t g0 = 0; g0 < t_.g; g0 += rowsPer) {
            const uint32_t nr = MinU(rowsPer, t_.g - g0);
            const uint64_t at = b * t_.qst[0] + s * t_.qst[1] + (n * t_.g + g0) * t_.qst[2];
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.dk * sizeof(T)),
                                static_cast<uint32_t>((t_.qst[2] - t_.dk) * sizeof(T)),
                                static_cast<uint32_t>((dkPad * sizeof(T) - CeilTo(t_.dk * sizeof(T), 32)) / 32), 0};
            DataCopyPad(in, qGm_[at], p, pad);
            SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            DataCopyExtParams o{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.dk * sizeof(T)),
                                static_cast<uint32_t>((dkPad * sizeof(T) - CeilTo(t_.dk * sizeof(T), 32)) / 32), 0, 0};
            DataCopyPad(qsGm_[static_cast<uint64_t>(g0) * t_.dk], in, o);
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
    }

    // P = softmax(scale * S) over the cnt kept columns of each of the G rows, in place.
    __aicore__ inline void Softmax(uint32_t cnt)
    {
        LocalTensor<float> row = rowBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        for (uint32_t i = 0; i < t_.g; ++i) {
            DataCopyExtParams cpIn{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
            DataCopyPadExtParams<float> pad{false, 0, 0, 0};
            DataCopyPad(row, sGm_[static_cast<uint64_t>(i) * cnt], cpIn, pad);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
            Muls(row, row, t_.scale, cnt);
            PipeBarrier<PIPE_V>();
            ReduceMax(tmp, row, tmp[16], cnt);
            SetFlag<HardEvent::V_S>(EVENT_ID1);
            WaitFlag<HardEvent::V_S>(EVENT_ID1);
            const float mx = tmp.GetValue(0);
            SetFlag<HardEvent::S_V>(EVENT_ID1);
            WaitFlag<HardEvent::S_V>(EVENT_ID1);
            Adds(row, row, -mx, cnt);
            PipeBarrier<PIPE_V>();
            Exp(row, row, cnt);
            PipeBarrier<PIPE_V>();
            ReduceSum(tmp, row, tmp[16], cnt);
            SetFlag<HardEvent::V_S>(EVENT_ID1);
            WaitFlag<HardEvent::V_S>(EVENT_ID1);
            const float sum = tmp.GetValue(0);
            SetFlag<HardEvent::S_V>(EVENT_ID1);
            WaitFlag<HardEvent::S_V>(EVENT_ID1);
            Muls(row, row, 1.0f / sum, cnt);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
            DataCopyExtParams cpOut{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
            DataCopyPad(sGm_[static_cast<uint64_t>(i) * cnt], row, cpOut);
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID1);
            SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
            WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);
        }
    }

    // O's G rows (fp32, slot) -> y in its dtype at (b, s, heads n * G ..).
    __aicore__ inline void WriteOut(uint32_t b, uint32_t n, uint32_t s)
    {
        LocalTensor<float> in = outBuf_.Get<float>();
        LocalTensor<YT> out = inBuf_.Get<YT>();
        const uint32_t dvPad = CeilTo(t_.dv, 16);
        const uint32_t rowsPer = MinU(CHUNK_BYTES / (dvPad * sizeof(YT)), MinU(2 * CHUNK_BYTES / (dvPad * 4), 255));
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        for (uint32_t g0 = 0; g0 < t_.g; g0 += rowsPer) {
            const uint32_t nr = MinU(rowsPer, t_.g - g0);
            DataCopyExtParams p{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.dv * 4), 0,
                                static_cast<uint32_t>((dvPad * 4 - CeilTo(t_.dv * 4, 32)) / 32), 0};
            DataCopyPad(in, oGm_[static_cast<uint64_t>(g0) * t_.dv], p, pad);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            Cast(out, in, RoundMode::CAST_RINT, nr * dvPad);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            const uint64_t at = b * t_.ost[0] + s * t_.ost[1] + (n * t_.g + g0) * t_.ost[2];
            DataCopyExtParams o{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.dv * sizeof(YT)),
                                static_cast<uint32_t>((dvPad * sizeof(YT) - CeilTo(t_.dv * sizeof(YT), 32)) / 32),
                                static_cast<uint32_t>((t_.ost[2] - t_.dv) * sizeof(YT)), 0};
            DataCopyPad(yGm_[at], out, o);
            PipeBarrier<PIPE_ALL>();
        }
    }

    __aicore__ inline void WriteZeros(uint32_t b, uint32_t n, uint32_t s)
    {
        LocalTensor<YT> out = inBuf_.Get<YT>();
        const uint32_t dvPad = CeilTo(t_.dv, 16);
        Duplicate(out, static_cast<YT>(0), dvPad);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        for (uint32_t g = 0; g < t_.g; ++g) {
            const uint64_t at = b * t_.ost[0] + s * t_.ost[1] + (n * t_.g + g) * t_.ost[2];
            DataCopyExtParams o{1, static_cast<uint32_t>(t_.dv * sizeof(YT)), 0, 0, 0};
            DataCopyPad(yGm_[at], out, o);
        }
        PipeBarrier<PIPE_ALL>();
    }

    TPipe pipe_;
    Matmul<QType, KType, FType, BiasType> mm1_;
    Matmul<FType, FType, FType, BiasType> mm2_;
    TBuf<TPosition::VECCALC> idxBuf_, keptBuf_, inBuf_, outBuf_, rowBuf_, tmpBuf_;
    GlobalTensor<T> qGm_, kGm_, vGm_, qsGm_, ksGm_;
    GlobalTensor<int32_t> idxGm_;
    GlobalTensor<float> vsGm_, sGm_, oGm_;
    GlobalTensor<YT> yGm_;
    SfaTiling t_;
};

extern "C" __global__ __aicore__ void sparse_flash_attention_custom(GM_ADDR query, GM_ADDR key, GM_ADDR value,
                                                                    GM_ADDR sparseIndices, GM_ADDR y,
                                                                    GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSparseFlashAttention op;
    op.Run(query, key, value, sparseIndices, y, workspace, t);
}

namespace optiling {
// (batch, seq, head) strides and (B, S, N, D) of a 4-D BSND / BNSD tensor
static bool LayoutDims(const gert::Shape& s, bool bnsd, uint64_t st[3], uint32_t d[4])
{
    if (s.GetDimNum() != 4) {
        return false;
    }
    uint64_t stride[4];
    uint64_t acc = 1;
    for (int32_t i = 3; i >= 0; --i) {
        stride[i] = acc;
        acc *= static_cast<uint64_t>(s.GetDim(i));
    }
    const int32_t ds = bnsd ? 2 : 1, dn = bnsd ? 1 : 2;
    st[0] = stride[0];
    st[1] = stride[ds];
    st[2] = stride[dn];
    d[0] = static_cast<uint32_t>(s.GetDim(0));
    d[1] = static_cast<uint32_t>(s.GetDim(ds));
    d[2] = static_cast<uint32_t>(s.GetDim(dn));
    d[3] = static_cast<uint32_t>(s.GetDim(3));
    return true;
}

static uint64_t Align512(uint64_t v) { return (v + 511) / 512 * 512; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const char* layout = attrs->GetAttrPointer<char>(1);
    const bool bnsd = layout != nullptr && std::strcmp(layout, "BNSD") == 0;
    SfaTiling* t = context->GetTilingData<SfaTiling>();
    uint32_t qd[4], kd[4], vd[4], id[4], od[4];
    if (!LayoutDims(context->GetInputShape(0)->GetStorageShape(), bnsd, t->qst, qd) ||
        !LayoutDims(context->GetInputShape(1)->GetStorageShape(), bnsd, t->kst, kd) ||
        !LayoutDims(context->GetInputShape(2)->GetStorageShape(), bnsd, t->vst, vd) ||
        !LayoutDims(context->GetInputShape(3)->GetStorageShape(), bnsd, t->ist, id) ||
        !LayoutDims(context->GetOutputShape(0)->GetStorageShape(), bnsd, t->ost, od)) {
        return ge::GRAPH_FAILED;
    }
    t->b = qd[0];
    t->s1 = qd[1];
    t->n1 = qd[2];
    t->dk = qd[3];
    t->s2 = kd[1];
    t->n2 = kd[2];
    t->dv = vd[3];
    t->topk = id[3];
    if (t->n2 == 0 || t->n1 % t->n2 != 0 || kd[0] != t->b || kd[3] != t->dk || vd[0] != t->b || vd[1] != t->s2 ||
        vd[2] != t->n2 || id[0] != t->b || id[1] != t->s1 || id[2] != t->n2 || t->topk == 0 || t->topk > TOPK_MAX ||
        t->dk > D_MAX || t->dv > D_MAX || od[3] != t->dv) {
        return ge::GRAPH_FAILED;
    }
    t->g = t->n1 / t->n2;
    t->causal = *attrs->GetAttrPointer<bool>(2) ? 1 : 0;
    t->scale = *attrs->GetAttrPointer<float>(0);
    t->items = t->b * t->n2 * t->s1;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto dt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(0)->GetDataType());
    if (dt != matmul_tiling::DataType::DT_FLOAT16 && dt != matmul_tiling::DataType::DT_BF16) {
        return ge::GRAPH_FAILED;
    }
    matmul_tiling::MatmulApiTiling m1(plat);
    m1.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt);
    m1.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt, true);
    m1.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    m1.SetShape(static_cast<int32_t>(t->g), static_cast<int32_t>(t->topk), static_cast<int32_t>(t->dk));
    m1.SetOrgShape(static_cast<int32_t>(t->g), static_cast<int32_t>(t->topk), static_cast<int32_t>(t->dk));
    m1.SetBias(false);
    m1.SetBufferSpace(L1_HALF, L0C_HALF, -1);   // two objects share the AIC's L1 and L0C
    // base blocks of at most 128 x 128 x (64 b16 | 32 fp32) keep each object's L0A / L0B within 64 KB
    m1.SetFixSplit(-1, static_cast<int32_t>(t->topk < 128 ? (t->topk + 15) / 16 * 16 : 128), 64);
    if (m1.GetTiling(t->mm1) == -1) {
        return ge::GRAPH_FAILED;
    }
    const auto f32 = matmul_tiling::DataType::DT_FLOAT;
    matmul_tiling::MatmulApiTiling m2(plat);
    m2.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    m2.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    m2.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    m2.SetShape(static_cast<int32_t>(t->g), static_cast<int32_t>(t->dv), static_cast<int32_t>(t->topk));
    m2.SetOrgShape(static_cast<int32_t>(t->g), static_cast<int32_t>(t->dv), static_cast<int32_t>(t->topk));
    m2.SetBias(false);
    m2.SetBufferSpace(L1_HALF, L0C_HALF, -1);
    m2.SetFixSplit(-1, static_cast<int32_t>(t->dv < 128 ? (t->dv + 15) / 16 * 16 : 128), 32);
    if (m2.GetTiling(t->mm2) == -1) {
        return ge::GRAPH_FAILED;
    }
    // items (batch, key head, position) in contiguous runs per AIV; a MIX block is one AIC + two AIVs
    const uint32_t aivMax = 2 * plat.GetCoreNumAic();
    t->perAiv = (t->items + aivMax - 1) / aivMax;
    const uint32_t aivs = (t->items + t->perAiv - 1) / t->perAiv;
    const uint32_t blocks = (aivs + 1) / 2;
    context->SetBlockDim(blocks);
    const uint64_t es = 2;
    t->qOff = 0;
    t->kOff = Align512(t->qOff + static_cast<uint64_t>(t->g) * t->dk * es);
    t->vOff = Align512(t->kOff + static_cast<uint64_t>(t->topk) * t->dk * es);
    t->sOff = Align512(t->vOff + static_cast<uint64_t>(t->topk) * t->dv * 4);
    t->oOff = Align512(t->sOff + static_cast<uint64_t>(t->g) * t->topk * 4);
    t->slot = Align512(t->oOff + static_cast<uint64_t>(t->g) * t->dv * 4);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + t->slot * 2 * blocks;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class SparseFlashAttentionCustom : public OpDef {
public:
    explicit SparseFlashAttentionCustom(const char* name) : OpDef(name)
    {
        this->Input("query").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("key").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("value").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("sparseIndices").ParamType(REQUIRED).DataType({ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("scaleValue").AttrType(REQUIRED).Float();
        this->Attr("inputLayout").AttrType(OPTIONAL).String("BSND");
        this->Attr("is_causal").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(SparseFlashAttentionCustom);
}  // namespace ops
