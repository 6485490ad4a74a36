// MlaProlog: the query / key preprocessing of multi-head latent attention, written for Cannpilot from
// the operator's maths and the documented AscendC API (a MIX kernel on the high-level Matmul API).
//
//   c_q   = RMSNorm(x W_dq)                       (T x Hcq, fp32)
//   qr    = c_q W_uq_qr, per head n: q_c = qr[n, :D], q_r = qr[n, D:]
//   query[n]      = q_c W_uk[n]                   (T x Hckv per head)
//   query_rope[n] = RoPE(q_r)
//   c_kv  = RMSNorm((x W_dkv_kr)[:, :Hckv]),  k_rope = RoPE((x W_dkv_kr)[:, Hckv:])
//
// Work split: an item is (token block of up to ROWS tokens, group of heads). Each AIV takes items in
// turn and runs the whole chain for them, so no barrier between cores is needed: the c_q product of a
// token block is recomputed by every head group of that block (the price of no barrier). The key path
// runs with head group 0.
// Precision: the products that take a float operand (c_q, q_c) split it into three bf16 rows
// (hi = bf16(v), mid = bf16(v - hi), lo = bf16(v - hi - mid)): A is (3 rows) x K and C's three parts
// are added on the AIV, so the bf16 x bf16 -> fp32 cube sees ~24 bits of the float operand. Two
// parts (16 bits) are not enough: RoPE's x1 cos - x2 sin cancels values of ~50 to below 2^-8, where
// the check allows 2^-16 of absolute error.
// Workspace: per AIV a slot (c_q raw, the hi/lo c_q rows, the hi/lo q_c rows of each head of the
// group, the q_c W_uk product, the key-path product); qr goes to one buffer shared by every AIV with
// the row pitch of W_uq_qr (the Matmul's C pitch is B's N), each item writing its own rows x columns.
#include <algorithm>
#include <cmath>
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr uint32_t ROWS = 128;            // tokens of a block (the split products' M is PARTS x ROWS)
constexpr uint32_t PARTS = 3;             // bf16 parts of a float operand
constexpr uint32_t HEADS_PER_CALL = 8;    // heads of one qr product (its N = 8 x (D + Dr))
constexpr uint32_t ROW_MAX = 2048;        // longest row the vector side handles (Hcq, Hckv + Dr)

struct MlaPrologTiling {
    AscendC::tiling::TCubeTiling mm;      // bf16 x bf16 -> fp32, sized for the largest of the products
    uint32_t tokens, he, hcq, n, d, dr, hckv, qrw;   // qrw = n * (d + dr)
    uint32_t blocks, groups, headsPerGroup, items, perAiv;
    float epsCq, epsCkv;
    uint64_t slot, cqOff, cqsOff, qcsOff, qoOff, kvOff, qrAllOff;   // bytes
};
REGISTER_TILING_DEFAULT(MlaPrologTiling);

using namespace AscendC;
using BF = bfloat16_t;

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

class KernelMlaProlog {
public:
    using AType = MatmulType<TPosition::GM, CubeFormat::ND, BF>;
    using BType = MatmulType<TPosition::GM, CubeFormat::ND, BF>;
    using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

    __aicore__ inline void Run(GM_ADDR* in, GM_ADDR* out, GM_ADDR workspace, const MlaPrologTiling& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm_, &t_.mm);
        const uint32_t aiv = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t first = aiv * t_.perAiv;
        if (first >= t_.items) {
            return;
        }
        const uint32_t last = MinU(first + t_.perAiv, t_.items);
        x_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[0]));
        wDq_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[1]));
        wUqQr_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[2]));
        wUk_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[3]));
        wDkvKr_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[4]));
        gammaCq_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[5]));
        gammaCkv_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[6]));
        sin_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[7]));
        cos_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(in[8]));
        query_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(out[0]));
        queryRope_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(out[1]));
        cKv_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(out[2]));
        kRope_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(out[3]));
        GM_ADDR user = GetUserWorkspace(workspace);
        GM_ADDR ws = user + static_cast<uint64_t>(aiv) * t_.slot;
        cq_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.cqOff));
        cqs_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(ws + t_.cqsOff));
        qcs_.SetGlobalBuffer(reinterpret_cast<__gm__ BF*>(ws + t_.qcsOff));
        qo_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.qoOff));
        kv_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.kvOff));
        qrAll_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(user + t_.qrAllOff));
        pipe_.InitBuffer(pairBuf_, PARTS * ROW_MAX * sizeof(float));
        pipe_.InitBuffer(rowBuf_, ROW_MAX * sizeof(float));
        pipe_.InitBuffer(tmpBuf_, 2 * ROW_MAX * sizeof(float));
        pipe_.InitBuffer(hiBuf_, ROW_MAX * sizeof(BF));
        pipe_.InitBuffer(loBuf_, ROW_MAX * sizeof(BF));
        pipe_.InitBuffer(gammaBuf_, ROW_MAX * sizeof(float));
        pipe_.InitBuffer(ropeBuf_, 4 * 128 * sizeof(float));   // cos, sin, two products (Dr <= 128)
        pipe_.InitBuffer(redBuf_, (ROW_MAX / 32 + 64) * sizeof(float));
        for (uint32_t it = first; it < last; ++it) {
            const uint32_t block = it / t_.groups, group = it % t_.groups;
            const uint32_t t0 = block * ROWS;
            const uint32_t rows = MinU(ROWS, t_.tokens - t0);
            const uint32_t h0 = group * t_.headsPerGroup;
            if (h0 >= t_.n) {
                continue;
            }
            const uint32_t heads = MinU(t_.headsPerGroup, t_.n - h0);
            QueryDown(t0, rows);
            for (uint32_t c0 = 0; c0 < heads; c0 += HEADS_PER_CALL) {
                QueryHeads(t0, rows, h0 + c0, MinU(HEADS_PER_CALL, heads - c0));
            }
            if (group == 0) {
                KeyPath(t0, rows);
            }
        }
        mm_.End();
    }

private:
    __aicore__ inline void Product(const GlobalTensor<BF>& a, uint32_t m, uint32_t k, const GlobalTensor<BF>& b,
                                   uint32_t n, uint32_t ldb, const GlobalTensor<float>& c)
    {
        PipeBarrier<PIPE_ALL>();   // A was written by this AIV's MTE3
        mm_.SetOrgShape(m, ldb, k);
        mm_.SetSingleShape(m, n, k);
        mm_.SetTensorA(a);
        mm_.SetTensorB(b);
        mm_.IterateAll(c);
        PipeBarrier<PIPE_ALL>();
    }

    // len floats of the PARTS GM rows gap elements apart, at parts[0], parts[lenPad], parts[2 lenPad]
    __aicore__ inline void LoadParts(const LocalTensor<float>& parts, const GlobalTensor<float>& src, uint32_t len,
                                     uint64_t gap)
    {
        const uint32_t lenPad = CeilTo(len, 8);
        DataCopyExtParams p{PARTS, static_cast<uint32_t>(len * sizeof(float)),
                            static_cast<uint32_t>((gap - len) * sizeof(float)),
                            static_cast<uint32_t>((lenPad - len) * sizeof(float) / 32), 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        DataCopyPad(parts, src, p, pad);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    }

    // sum = hi + (mid + lo) of the parts LoadParts brought in
    __aicore__ inline void SumParts(const LocalTensor<float>& sum, const LocalTensor<float>& parts, uint32_t len)
    {
        const uint32_t lenPad = CeilTo(len, 8);
        Add(sum, parts[lenPad], parts[2 * lenPad], len);
        PipeBarrier<PIPE_V>();
        Add(sum, sum, parts, len);
        PipeBarrier<PIPE_V>();
    }

    __aicore__ inline void LoadRow(const LocalTensor<float>& row, const GlobalTensor<float>& src, uint32_t len)
    {
        DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0};
        DataCopyPad(row, src, p, pad);
    }

    // bf16 GM -> fp32 UB
    __aicore__ inline void LoadBf16(const LocalTensor<float>& dst, const GlobalTensor<BF>& src, uint32_t len)
    {
        LocalTensor<BF> stage = hiBuf_.Get<BF>();
        DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(BF)), 0, 0, 0};
        DataCopyPadExtParams<BF> pad{false, 0, 0, 0};
        DataCopyPad(stage, src, p, pad);
        SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
        Cast(dst, stage, RoundMode::CAST_NONE, len);
        PipeBarrier<PIPE_ALL>();
    }

    // fp32 UB -> bf16 GM (round to nearest even)
    __aicore__ inline void StoreBf16(const GlobalTensor<BF>& dst, const LocalTensor<float>& src, uint32_t len)
    {
        LocalTensor<BF> stage = loBuf_.Get<BF>();
        Cast(stage, src, RoundMode::CAST_RINT, len);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(BF)), 0, 0, 0};
        DataCopyPad(dst, stage, p);
        PipeBarrier<PIPE_ALL>();
    }

    // v (fp32, UB) as PARTS bf16 rows of the GM matrix at dst, gap elements apart: hi, mid, lo.
    __aicore__ inline void StoreSplit(const GlobalTensor<BF>& dst, uint64_t gap, const LocalTensor<float>& v, uint32_t len)
    {
        LocalTensor<BF> part = hiBuf_.Get<BF>();
        LocalTensor<float> rest = tmpBuf_.Get<float>();
        LocalTensor<float> back = tmpBuf_.Get<float>()[ROW_MAX];
        Adds(rest, v, 0.0f, len);
        for (uint32_t i = 0; i < PARTS; ++i) {
            PipeBarrier<PIPE_V>();
            Cast(part, rest, RoundMode::CAST_RINT, len);
            PipeBarrier<PIPE_V>();
            Cast(back, part, RoundMode::CAST_NONE, len);
            PipeBarrier<PIPE_V>();
            Sub(rest, rest, back, len);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopyExtParams p{1, static_cast<uint32_t>(len * sizeof(BF)), 0, 0, 0};
            DataCopyPad(dst[i * gap], part, p);
            SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
        }
        PipeBarrier<PIPE_ALL>();
    }

    // row <- gamma * row / sqrt(mean(row^2) + eps), gamma already fp32 in gammaBuf_
    __aicore__ inline void RmsNorm(const LocalTensor<float>& row, uint32_t len, float eps)
    {
        LocalTensor<float> sq = tmpBuf_.Get<float>();
        LocalTensor<float> red = redBuf_.Get<float>();
        LocalTensor<float> gamma = gammaBuf_.Get<float>();
        Mul(sq, row, row, len);
        ReduceSum(red, sq, red[16], len);
        PipeBarrier<PIPE_V>();
        Muls(red, red, 1.0f / static_cast<float>(len), 8);   // mean of squares
        PipeBarrier<PIPE_V>();
        Adds(red, red, eps, 8);
        PipeBarrier<PIPE_V>();
        Sqrt(red, red, 8);
        SetFlag<HardEvent::V_S>(EVENT_ID0);
        WaitFlag<HardEvent::V_S>(EVENT_ID0);
        const float inv = 1.0f / red.GetValue(0);
        SetFlag<HardEvent::S_V>(EVENT_ID0);
        WaitFlag<HardEvent::S_V>(EVENT_ID0);
        Mul(row, row, gamma, len);
        Muls(row, row, inv, len);
    }

    // y = x * cos + rotate_half(x) * sin over Dr values at x (fp32 UB); cos / sin of token tok.
    __aicore__ inline void Rope(const LocalTensor<float>& y, const LocalTensor<float>& x, const LocalTensor<float>& cs,
                                const LocalTensor<float>& sn)
    {
        const uint32_t h = t_.dr / 2;
        LocalTensor<float> rope = ropeBuf_.Get<float>();
        LocalTensor<float> a = rope[256];
        LocalTensor<float> b = rope[384];
        Mul(a, x, cs, t_.dr);
        Mul(b, x[h], sn, h);          // x2 * sin (first half)
        Mul(b[h], x, sn[h], h);       // x1 * sin (second half)
        Sub(y, a, b, h);              // x1 cos - x2 sin
        Add(y[h], a[h], b[h], h);     // x2 cos + x1 sin
    }

    __aicore__ inline void LoadRopeAngles(uint32_t tok)
    {
        LocalTensor<float> rope = ropeBuf_.Get<float>();
        LoadBf16(rope, cos_[static_cast<uint64_t>(tok) * t_.dr], t_.dr);
        LoadBf16(rope[128], sin_[static_cast<uint64_t>(tok) * t_.dr], t_.dr);
    }

    // c_q = RMSNorm(x W_dq) for the block's tokens, as hi / lo bf16 rows of cqs (2 rows x Hcq).
    __aicore__ inline void QueryDown(uint32_t t0, uint32_t rows)
    {
        Product(x_[static_cast<uint64_t>(t0) * t_.he], rows, t_.he, wDq_, t_.hcq, t_.hcq, cq_);
        LoadBf16(gammaBuf_.Get<float>(), gammaCq_, t_.hcq);
        LocalTensor<float> row = rowBuf_.Get<float>();
        for (uint32_t r = 0; r < rows; ++r) {
            LoadRow(row, cq_[static_cast<uint64_t>(r) * t_.hcq], t_.hcq);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            RmsNorm(row, t_.hcq, t_.epsCq);
            StoreSplit(cqs_[static_cast<uint64_t>(r) * t_.hcq], static_cast<uint64_t>(rows) * t_.hcq, row, t_.hcq);
        }
    }

    // heads [hBeg, hBeg + heads): qr = c_q W_uq_qr[:, those heads], RoPE, then q_c W_uk per head.
    __aicore__ inline void QueryHeads(uint32_t t0, uint32_t rows, uint32_t hBeg, uint32_t heads)
    {
        const uint32_t hd = t_.d + t_.dr;
        const uint64_t col0 = static_cast<uint64_t>(hBeg) * hd;
        GlobalTensor<float> qr = qrAll_[static_cast<uint64_t>(PARTS * t0) * t_.qrw + col0];
        Product(cqs_, PARTS * rows, t_.hcq, wUqQr_[col0], heads * hd, t_.qrw, qr);
        LocalTensor<float> pair = pairBuf_.Get<float>();
        LocalTensor<float> q = rowBuf_.Get<float>();
        LocalTensor<float> rope = ropeBuf_.Get<float>();
        for (uint32_t r = 0; r < rows; ++r) {
            LoadRopeAngles(t0 + r);
            for (uint32_t h = 0; h < heads; ++h) {
                // the parts of this head's qr row, summed
                LoadParts(pair, qr[static_cast<uint64_t>(r) * t_.qrw + h * hd], hd, static_cast<uint64_t>(rows) * t_.qrw);
                SumParts(q, pair, hd);
                const uint64_t tokHead = static_cast<uint64_t>(t0 + r) * t_.n + hBeg + h;
                LocalTensor<float> y = pair;   // free after the sum
                PipeBarrier<PIPE_V>();
                Rope(y, q[t_.d], rope, rope[128]);
                PipeBarrier<PIPE_V>();
                StoreBf16(queryRope_[tokHead * t_.dr], y, t_.dr);
                const uint64_t qcAt = static_cast<uint64_t>(h) * PARTS * ROWS * t_.d;
                StoreSplit(qcs_[qcAt + static_cast<uint64_t>(r) * t_.d], static_cast<uint64_t>(rows) * t_.d, q, t_.d);
            }
        }
        for (uint32_t h = 0; h < heads; ++h) {
            const uint64_t qcAt = static_cast<uint64_t>(h) * PARTS * ROWS * t_.d;
            Product(qcs_[qcAt], PARTS * rows, t_.d, wUk_[static_cast<uint64_t>(hBeg + h) * t_.d * t_.hckv], t_.hckv, t_.hckv,
                    qo_);
            for (uint32_t r = 0; r < rows; ++r) {
                LoadParts(pair, qo_[static_cast<uint64_t>(r) * t_.hckv], t_.hckv, static_cast<uint64_t>(rows) * t_.hckv);
                SumParts(q, pair, t_.hckv);
                StoreBf16(query_[(static_cast<uint64_t>(t0 + r) * t_.n + hBeg + h) * t_.hckv], q, t_.hckv);
            }
        }
    }

    // c_kv = RMSNorm(first Hckv of x W_dkv_kr), k_rope = RoPE(its last Dr).
    __aicore__ inline void KeyPath(uint32_t t0, uint32_t rows)
    {
        const uint32_t w = t_.hckv + t_.dr;
        Product(x_[static_cast<uint64_t>(t0) * t_.he], rows, t_.he, wDkvKr_, w, w, kv_);
        LoadBf16(gammaBuf_.Get<float>(), gammaCkv_, t_.hckv);
        LocalTensor<float> row = rowBuf_.Get<float>();
        LocalTensor<float> rope = ropeBuf_.Get<float>();
        LocalTensor<float> y = pairBuf_.Get<float>();
        for (uint32_t r = 0; r < rows; ++r) {
            LoadRopeAngles(t0 + r);
            LoadRow(row, kv_[static_cast<uint64_t>(r) * w], w);
            SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
            Rope(y, row[t_.hckv], rope, rope[128]);
            PipeBarrier<PIPE_V>();
            StoreBf16(kRope_[static_cast<uint64_t>(t0 + r) * t_.dr], y, t_.dr);
            RmsNorm(row, t_.hckv, t_.epsCkv);
            PipeBarrier<PIPE_V>();
            StoreBf16(cKv_[static_cast<uint64_t>(t0 + r) * t_.hckv], row, t_.hckv);
        }
    }

    TPipe pipe_;
    Matmul<AType, BType, CType, BiasType> mm_;
    TBuf<TPosition::VECCALC> pairBuf_, rowBuf_, tmpBuf_, hiBuf_, loBuf_, gammaBuf_, ropeBuf_, redBuf_;
    GlobalTensor<BF> x_, wDq_, wUqQr_, wUk_, wDkvKr_, gammaCq_, gammaCkv_, sin_, cos_;
    GlobalTensor<BF> query_, queryRope_, cKv_, kRope_, cqs_, qcs_;
    GlobalTensor<float> cq_, qo_, kv_, qrAll_;
    MlaPrologTiling t_;
};

extern "C" __global__ __aicore__ void mla_prolog_custom(GM_ADDR token_x, GM_ADDR w_dq, GM_ADDR w_uq_qr, GM_ADDR w_uk,
                                                        GM_ADDR w_dkv_kr, GM_ADDR rmsnorm_gamma_cq,
                                                        GM_ADDR rmsnorm_gamma_ckv, GM_ADDR rope_sin, GM_ADDR rope_cos,
                                                        GM_ADDR query, GM_ADDR query_rope, GM_ADDR c_kv, GM_ADDR k_rope,
                                                        GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GM_ADDR in[] = {token_x, w_dq, w_uq_qr, w_uk, w_dkv_kr, rmsnorm_gamma_cq, rmsnorm_gamma_ckv, rope_sin, rope_cos};
    GM_ADDR out[] = {query, query_rope, c_kv, k_rope};
    KernelMlaProlog op;
    op.Run(in, out, workspace, t);
}

namespace optiling {
static uint64_t Align512(uint64_t v) { return (v + 511) / 512 * 512; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& dq = context->GetInputShape(1)->GetStorageShape();
    const gert::Shape& uq = context->GetInputShape(2)->GetStorageShape();
    const gert::Shape& uk = context->GetInputShape(3)->GetStorageShape();
    const gert::Shape& dkv = context->GetInputShape(4)->GetStorageShape();
    const gert::Shape& sn = context->GetInputShape(7)->GetStorageShape();
    if (xs.GetDimNum() != 3 || dq.GetDimNum() != 2 || uq.GetDimNum() != 2 || uk.GetDimNum() != 3 ||
        dkv.GetDimNum() != 2 || sn.GetDimNum() != 3) {
        return ge::GRAPH_FAILED;
    }
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    MlaPrologTiling* t = context->GetTilingData<MlaPrologTiling>();
    t->tokens = static_cast<uint32_t>(xs.GetDim(0) * xs.GetDim(1));
    t->he = static_cast<uint32_t>(xs.GetDim(2));
    t->hcq = static_cast<uint32_t>(dq.GetDim(1));
    t->n = static_cast<uint32_t>(*attrs->GetAttrPointer<int64_t>(0));
    t->d = static_cast<uint32_t>(uk.GetDim(1));
    t->hckv = static_cast<uint32_t>(uk.GetDim(2));
    t->dr = static_cast<uint32_t>(sn.GetDim(2));
    t->qrw = static_cast<uint32_t>(uq.GetDim(1));
    t->epsCq = *attrs->GetAttrPointer<float>(1);
    t->epsCkv = *attrs->GetAttrPointer<float>(2);
    const uint32_t hd = t->d + t->dr;
    // the vector side's limits: rows in UB, RoPE halves on 32-byte boundaries, a head's qr in one row
    if (t->tokens == 0 || t->n == 0 || uk.GetDim(0) != t->n || t->qrw != t->n * hd || uq.GetDim(0) != t->hcq ||
        dq.GetDim(0) != t->he || dkv.GetDim(0) != t->he || dkv.GetDim(1) != t->hckv + t->dr || t->dr % 16 != 0 ||
        t->dr > 128 || t->hcq > ROW_MAX || t->hckv + t->dr > ROW_MAX || hd > ROW_MAX || t->qrw > 65535 ||
        t->he > 65535) {
        return ge::GRAPH_FAILED;
    }
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint32_t aivMax = 2 * plat.GetCoreNumAic();
    t->blocks = (t->tokens + ROWS - 1) / ROWS;
    // head groups: enough items to fill the AIVs, at most 16 groups (each recomputes its block's c_q)
    uint32_t groups = aivMax / t->blocks;
    groups = groups < 1 ? 1 : (groups > 16 ? 16 : groups);
    groups = groups > t->n ? t->n : groups;
    t->headsPerGroup = (t->n + groups - 1) / groups;
    t->groups = (t->n + t->headsPerGroup - 1) / t->headsPerGroup;
    t->items = t->blocks * t->groups;
    t->perAiv = (t->items + aivMax - 1) / aivMax;
    const uint32_t aivs = (t->items + t->perAiv - 1) / t->perAiv;
    const uint32_t mixBlocks = (aivs + 1) / 2;
    context->SetBlockDim(mixBlocks);

    const auto bf16 = matmul_tiling::DataType::DT_BF16;
    const uint32_t maxN = std::max(std::max(t->hcq, t->hckv + t->dr), std::max(t->hckv, HEADS_PER_CALL * hd));
    const uint32_t maxK = std::max(std::max(t->he, t->hcq), t->d);
    matmul_tiling::MatmulApiTiling m(plat);
    m.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, bf16);
    m.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, bf16);
    m.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    m.SetShape(static_cast<int32_t>(PARTS * ROWS), static_cast<int32_t>(maxN), static_cast<int32_t>(maxK));
    m.SetOrgShape(static_cast<int32_t>(PARTS * ROWS), static_cast<int32_t>(maxN), static_cast<int32_t>(maxK));
    m.SetBias(false);
    m.SetBufferSpace(-1, -1, -1);
    if (m.GetTiling(t->mm) == -1) {
        return ge::GRAPH_FAILED;
    }
    t->cqOff = 0;
    t->cqsOff = Align512(t->cqOff + static_cast<uint64_t>(ROWS) * t->hcq * 4);
    t->qcsOff = Align512(t->cqsOff + static_cast<uint64_t>(PARTS * ROWS) * t->hcq * 2);
    t->qoOff = Align512(t->qcsOff + static_cast<uint64_t>(HEADS_PER_CALL) * PARTS * ROWS * t->d * 2);
    t->kvOff = Align512(t->qoOff + static_cast<uint64_t>(PARTS * ROWS) * t->hckv * 4);
    t->slot = Align512(t->kvOff + static_cast<uint64_t>(ROWS) * (t->hckv + t->dr) * 4);
    t->qrAllOff = t->slot * 2 * mixBlocks;
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + t->qrAllOff +
            static_cast<uint64_t>(t->blocks) * PARTS * ROWS * t->qrw * 4;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class MlaPrologCustom : public OpDef {
public:
    explicit MlaPrologCustom(const char* name) : OpDef(name)
    {
        this->Input("token_x").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("w_dq").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("w_uq_qr").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("w_uk").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("w_dkv_kr").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("rmsnorm_gamma_cq").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("rmsnorm_gamma_ckv").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("rope_sin").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("rope_cos").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("query").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("query_rope").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("c_kv").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("k_rope").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND}).UnknownShapeFormat({ge::FORMAT_ND});
        this->Attr("n_heads").AttrType(REQUIRED).Int();
        this->Attr("rmsnorm_epsilon_cq").AttrType(OPTIONAL).Float(1e-5);
        this->Attr("rmsnorm_epsilon_ckv").AttrType(OPTIONAL).Float(1e-5);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(MlaPrologCustom);
}  // namespace ops
