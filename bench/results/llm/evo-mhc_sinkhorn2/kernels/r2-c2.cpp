// MhcSinkhorn: linear-domain Sinkhorn-Knopp on a batch of n x n matrices ([B, n, n], fp32).
// Each core takes a contiguous range of matrices and processes them K at a time. A tile of K
// matrices is loaded with one multi-block DataCopyPad (each matrix padded to a 32-byte stride n2p),
// then transposed with one Gather into a "planar" layout P[p][k] (p = i * n + j, k = matrix), so that
// every matrix element (i, j) of the K matrices is one contiguous K-lane vector. Row reductions are
// then (n - 1) vector Max/Add of K lanes per row, column reductions (n - 1) vector Adds of n * K lanes,
// and the normalisations vector Muls by 1 / (sum + eps). A second Gather transposes back.
// The Gather offset tables are built once per core with Arange and doubling Adds (no scalar loops).
// Fast path (every n >= 2): the row operations use the mask/repeat form with block strides, one
// 32-byte block per matrix row i inside a repeat (rows in groups of up to 8; block stride = plane
// distance) and one repeat per 8 lanes,
// so the column scaling is a single instruction.
// Reductions are halving trees instead of chains: a row reduction folds columns [h, 2h) onto [0, h)
// for all rows and all lanes in one block-strided instruction per level (ceil(log2 n) levels, plus one
// for an odd leftover column); a column reduction folds whole row blocks with count-form Adds.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t MHC_GROUP = 8;   // work unit of the core split: 8 matrices = one 8-lane group

struct MhcSinkhornCustomTilingData {
    uint32_t units;        // matrices (B); formerUnits / tailUnits below count groups of MHC_GROUP
    uint32_t formerNum;    // the first formerNum cores take formerUnits matrices, the rest tailUnits
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t n;            // hc_mult
    uint32_t n2;           // n * n
    uint32_t n2p;          // n * n rounded up to 8 (UB stride of one matrix, floats)
    uint32_t lanes;        // K: matrices per tile, multiple of 8
    uint32_t iterStep;
    uint32_t fast;         // 1: n <= 8 and n * lanes / 8 <= 255: row ops in the block-strided repeat form
    float eps;
};
REGISTER_TILING_DEFAULT(MhcSinkhornCustomTilingData);

using namespace AscendC;

class KernelMhcSinkhorn {
public:
    __aicore__ inline KernelMhcSinkhorn() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const MhcSinkhornCustomTilingData& t)
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
        // groups -> matrices; only the last core's share can end inside a group
        first_ *= MHC_GROUP;
        count_ *= MHC_GROUP;
        if (count_ == 0 || first_ >= t.units) {
            count_ = 0;
            return;
        }
        if (first_ + count_ > t.units) {
            count_ = t.units - first_;
        }
        xGm_.SetGlobalBuffer((__gm__ float*)x);
        yGm_.SetGlobalBuffer((__gm__ float*)y);
        const uint32_t k = t.lanes;
        const uint32_t tileElems = k * t.n2p;
        pipe_.InitBuffer(inQ_, 2, tileElems * sizeof(float));
        pipe_.InitBuffer(outQ_, 2, tileElems * sizeof(float));
        pipe_.InitBuffer(pBuf_, tileElems * sizeof(float));
        pipe_.InitBuffer(fwdBuf_, k * t.n2 * sizeof(int32_t));
        pipe_.InitBuffer(bwdBuf_, tileElems * sizeof(int32_t));
        pipe_.InitBuffer(sBuf_, k * t.n * sizeof(float));
        pipe_.InitBuffer(rtBuf_, k * t.n * (t.n / 2 + 1) * sizeof(float));   // n rows x n/2 columns
        pipe_.InitBuffer(ctBuf_, k * t.n * (t.n / 2 + 1) * sizeof(float));
        pipe_.InitBuffer(oneBuf_, k * t.n * sizeof(float));
        BuildTables();
    }

    __aicore__ inline void Process()
    {
        if (count_ == 0) {
            return;
        }
        const uint32_t k = t_.lanes;
        for (uint32_t done = 0; done < count_; done += k) {
            const uint32_t m = (count_ - done < k) ? count_ - done : k;
            const uint64_t off = static_cast<uint64_t>(first_ + done) * t_.n2;
            CopyIn(off, m);
            Compute();
            CopyOut(off, m);
        }
    }

private:
    // fwd[p * K + k] = (k * n2p + p) * 4 : planar <- natural (padded) byte offsets
    // bwd[k * n2p + p] = (p * K + k) * 4 : natural (padded) <- planar byte offsets
    __aicore__ inline void BuildTables()
    {
        const uint32_t k = t_.lanes;
        const uint32_t n2 = t_.n2;
        const uint32_t n2p = t_.n2p;
        LocalTensor<int32_t> fwd = fwdBuf_.Get<int32_t>();
        LocalTensor<int32_t> bwd = bwdBuf_.Get<int32_t>();
        Arange<int32_t>(fwd, 0, static_cast<int32_t>(n2p * 4), static_cast<int32_t>(k));
        for (uint32_t c = 1; c < n2;) {
            const uint32_t cnt = (n2 - c < c) ? n2 - c : c;
            LocalTensor<int32_t> dst = fwd[c * k];
            Adds(dst, fwd, static_cast<int32_t>(c * 4), static_cast<int32_t>(cnt * k));
            c += cnt;
        }
        Arange<int32_t>(bwd, 0, static_cast<int32_t>(k * 4), static_cast<int32_t>(n2p));
        for (uint32_t c = 1; c < k;) {
            const uint32_t cnt = (k - c < c) ? k - c : c;
            LocalTensor<int32_t> dst = bwd[c * n2p];
            Adds(dst, bwd, static_cast<int32_t>(c * 4), static_cast<int32_t>(cnt * n2p));
            c += cnt;
        }
        LocalTensor<float> one = oneBuf_.Get<float>();
        Duplicate(one, 1.0f, static_cast<int32_t>(k * t_.n));
    }

    __aicore__ inline void CopyIn(uint64_t off, uint32_t m)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(t_.n2 * sizeof(float)), 0, 0, 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        DataCopyPad(x, xGm_[off], cp, pad);
        inQ_.EnQue(x);
    }

    __aicore__ inline void CopyOut(uint64_t off, uint32_t m)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        DataCopyExtParams cp{static_cast<uint16_t>(m), static_cast<uint32_t>(t_.n2 * sizeof(float)), 0, 0, 0};
        DataCopyPad(yGm_[off], y, cp);
        outQ_.FreeTensor(y);
    }

    __aicore__ inline BinaryRepeatParams Rp(uint32_t d, uint32_t s0, uint32_t s1)
    {
        BinaryRepeatParams p;
        p.dstBlkStride = static_cast<uint8_t>(d);
        p.src0BlkStride = static_cast<uint8_t>(s0);
        p.src1BlkStride = static_cast<uint8_t>(s1);
        p.dstRepStride = 1;
        p.src0RepStride = 1;
        p.src1RepStride = 1;
        return p;
    }

    __aicore__ inline void Op2(LocalTensor<float>& d, LocalTensor<float>& a, LocalTensor<float>& b, bool isMax,
                               uint64_t mask, uint32_t rep, const BinaryRepeatParams& p)
    {
        if (isMax) {
            Max(d, a, b, mask, static_cast<uint8_t>(rep), p);
        } else {
            Add(d, a, b, mask, static_cast<uint8_t>(rep), p);
        }
    }

    __aicore__ inline void Op2(LocalTensor<float>& d, LocalTensor<float>& a, LocalTensor<float>& b, bool isMax,
                               int32_t cnt)
    {
        if (isMax) {
            Max(d, a, b, cnt);
        } else {
            Add(d, a, b, cnt);
        }
    }

    // S[i] = max_j P[i][j] (isMax) or sum_j P[i][j], each a K-lane vector, as a halving tree over j.
    // Column c of a "row of vectors" lives at base + c * K; rows are rowStride apart.
    __aicore__ inline void RowReduce(LocalTensor<float>& P, LocalTensor<float>& S, bool isMax)
    {
        const uint32_t n = t_.n;
        const uint32_t k = t_.lanes;
        LocalTensor<float> T = rtBuf_.Get<float>();
        if (n == 1) {
            Adds(S, P, 0.0f, static_cast<int32_t>(k));
            return;
        }
        if (t_.fast != 0 && n <= 8) {
            // one group of rows: a chain over j (measured faster than the tree for n <= 8)
            const uint32_t c8 = k / 8;
            const uint64_t mask = n * 8;
            LocalTensor<float> p0 = P[0];
            LocalTensor<float> p1 = P[k];
            Op2(S, p0, p1, isMax, mask, c8, Rp(c8, n * c8, n * c8));
            for (uint32_t j = 2; j < n; ++j) {
                LocalTensor<float> pj = P[j * k];
                Op2(S, S, pj, isMax, mask, c8, Rp(c8, c8, n * c8));
            }
            return;
        }
        if (t_.fast != 0) {
            // block b = row i of a group of up to 8 rows; repeat r runs over (column c < h, 8-lane
            // group) of that row
            const uint32_t c8 = k / 8;
            const uint32_t tr = (n / 2) * c8;      // row stride of T in blocks
            for (uint32_t i0 = 0; i0 < n; i0 += 8) {
                const uint32_t gr = (n - i0 < 8) ? n - i0 : 8;
                const uint64_t mask = gr * 8;
                LocalTensor<float> src = P[(i0 * n) * k];
                LocalTensor<float> Tg = T[i0 * (n / 2) * k];
                LocalTensor<float> Sg = S[i0 * k];
                uint32_t srcRow = n * c8;
                uint32_t w = n;
                while (w > 1) {
                    const uint32_t h = w / 2;
                    const bool odd = (w & 1) != 0;
                    const bool last = (h == 1);
                    LocalTensor<float> hi = src[h * k];
                    if (last && !odd) {
                        Op2(Sg, src, hi, isMax, mask, h * c8, Rp(c8, srcRow, srcRow));
                    } else {
                        Op2(Tg, src, hi, isMax, mask, h * c8, Rp(tr, srcRow, srcRow));
                        if (odd) {                  // fold the leftover column w - 1 into column 0
                            LocalTensor<float> lo = src[(w - 1) * k];
                            if (last) {
                                Op2(Sg, Tg, lo, isMax, mask, c8, Rp(c8, tr, srcRow));
                            } else {
                                Op2(Tg, Tg, lo, isMax, mask, c8, Rp(tr, tr, srcRow));
                            }
                        }
                    }
                    src = Tg;
                    srcRow = tr;
                    w = h;
                }
            }
            return;
        }
        // n > 8: the same tree, one count-form instruction per row and level
        for (uint32_t i = 0; i < n; ++i) {
            LocalTensor<float> src = P[(i * n) * k];
            LocalTensor<float> t = T[0];
            LocalTensor<float> s = S[i * k];
            uint32_t w = n;
            while (w > 1) {
                const uint32_t h = w / 2;
                const bool odd = (w & 1) != 0;
                const bool last = (h == 1);
                LocalTensor<float> hi = src[h * k];
                if (last && !odd) {
                    Op2(s, src, hi, isMax, static_cast<int32_t>(k));
                } else {
                    Op2(t, src, hi, isMax, static_cast<int32_t>(h * k));
                    if (odd) {
                        LocalTensor<float> lo = src[(w - 1) * k];
                        if (last) {
                            Op2(s, t, lo, isMax, static_cast<int32_t>(k));
                        } else {
                            Op2(t, t, lo, isMax, static_cast<int32_t>(k));
                        }
                    }
                }
                src = t;
                w = h;
            }
        }
    }

    // P[i][j] = P[i][j] * S[i] (isSub false) or P[i][j] - S[i] (isSub true)
    __aicore__ inline void RowApply(LocalTensor<float>& P, LocalTensor<float>& S, bool isSub)
    {
        const uint32_t n = t_.n;
        const uint32_t k = t_.lanes;
        if (t_.fast != 0) {
            const uint32_t c8 = k / 8;
            const uint8_t rep = static_cast<uint8_t>(c8);
            for (uint32_t i0 = 0; i0 < n; i0 += 8) {
                const uint32_t gr = (n - i0 < 8) ? n - i0 : 8;
                const uint64_t mask = gr * 8;
                LocalTensor<float> Sg = S[i0 * k];
                for (uint32_t j = 0; j < n; ++j) {
                    LocalTensor<float> pj = P[(i0 * n + j) * k];
                    if (isSub) {
                        Sub(pj, pj, Sg, mask, rep, Rp(n * c8, n * c8, c8));
                    } else {
                        Mul(pj, pj, Sg, mask, rep, Rp(n * c8, n * c8, c8));
                    }
                }
            }
            return;
        }
        const int32_t cnt = static_cast<int32_t>(k);
        for (uint32_t i = 0; i < n; ++i) {
            LocalTensor<float> s = S[i * k];
            for (uint32_t j = 0; j < n; ++j) {
                LocalTensor<float> pj = P[(i * n + j) * k];
                if (isSub) {
                    Sub(pj, pj, s, cnt);
                } else {
                    Mul(pj, pj, s, cnt);
                }
            }
        }
    }

    // S = 1 / (S + eps) over the n vectors
    __aicore__ inline void InvPlusEps(LocalTensor<float>& S, LocalTensor<float>& one, float eps)
    {
        const int32_t cnt = static_cast<int32_t>(t_.n * t_.lanes);
        if (eps != 0.0f) {
            Adds(S, S, eps, cnt);
        }
        Div(S, one, S, cnt);
    }

    // P = P / (col_sum + eps): row i of all K matrices is the contiguous block P[i * n * K, n * K).
    __aicore__ inline void ColNorm(LocalTensor<float>& P, LocalTensor<float>& S, LocalTensor<float>& one)
    {
        const uint32_t n = t_.n;
        const uint32_t nk = n * t_.lanes;
        const int32_t cnt = static_cast<int32_t>(nk);
        if (n == 1) {
            Adds(S, P, 0.0f, cnt);
        } else if (n <= 8) {
            // chain over the row blocks (measured faster than the tree for n <= 8)
            LocalTensor<float> r0 = P[0];
            LocalTensor<float> r1 = P[nk];
            Add(S, r0, r1, cnt);
            for (uint32_t i = 2; i < n; ++i) {
                LocalTensor<float> ri = P[i * nk];
                Add(S, S, ri, cnt);
            }
        } else {
            // halving tree over the row blocks: fold rows [h, 2h) onto [0, h) with one Add each level
            LocalTensor<float> CT = ctBuf_.Get<float>();
            LocalTensor<float> src = P;
            uint32_t w = n;
            while (w > 1) {
                const uint32_t h = w / 2;
                const bool odd = (w & 1) != 0;
                const bool last = (h == 1);
                LocalTensor<float> hi = src[h * nk];
                if (last && !odd) {
                    Add(S, src, hi, cnt);
                } else {
                    Add(CT, src, hi, static_cast<int32_t>(h * nk));
                    if (odd) {
                        LocalTensor<float> lo = src[(w - 1) * nk];
                        if (last) {
                            Add(S, CT, lo, cnt);
                        } else {
                            Add(CT, CT, lo, cnt);
                        }
                    }
                }
                src = CT;
                w = h;
            }
        }
        InvPlusEps(S, one, t_.eps);
        if (t_.fast != 0) {
            // one instruction: block b = row i (stride n * C8), repeat r over the n * C8 blocks of a row;
            // S is read with block stride 0 (every row i uses the same column factors)
            const uint32_t c8 = t_.lanes / 8;
            for (uint32_t i0 = 0; i0 < n; i0 += 8) {
                const uint32_t gr = (n - i0 < 8) ? n - i0 : 8;
                LocalTensor<float> Pg = P[i0 * nk];
                Mul(Pg, Pg, S, static_cast<uint64_t>(gr * 8), static_cast<uint8_t>(n * c8), Rp(n * c8, n * c8, 0));
            }
            return;
        }
        for (uint32_t i = 0; i < n; ++i) {
            LocalTensor<float> ri = P[i * nk];
            Mul(ri, ri, S, cnt);
        }
    }

    __aicore__ inline void Compute()
    {
        const uint32_t n = t_.n;
        const uint32_t k = t_.lanes;
        const int32_t all = static_cast<int32_t>(t_.n2 * k);
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        LocalTensor<float> P = pBuf_.Get<float>();
        LocalTensor<float> S = sBuf_.Get<float>();
        LocalTensor<float> one = oneBuf_.Get<float>();
        LocalTensor<uint32_t> fwd = fwdBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> bwd = bwdBuf_.Get<uint32_t>();

        Gather(P, x, fwd, static_cast<uint32_t>(0), static_cast<uint32_t>(t_.n2 * k));   // -> planar
        inQ_.FreeTensor(x);

        // iteration 1: row softmax + eps, then column normalisation
        RowReduce(P, S, true);
        RowApply(P, S, true);                           // x - row_max
        Exp(P, P, all);
        RowReduce(P, S, false);
        Div(S, one, S, static_cast<int32_t>(n * k));   // 1 / row_sum
        RowApply(P, S, false);
        Adds(P, P, t_.eps, all);
        ColNorm(P, S, one);

        // iterations 2 .. iter_step
        for (uint32_t it = 1; it < t_.iterStep; ++it) {
            RowReduce(P, S, false);
            InvPlusEps(S, one, t_.eps);
            RowApply(P, S, false);
            ColNorm(P, S, one);
        }

        Gather(y, P, bwd, static_cast<uint32_t>(0), static_cast<uint32_t>(t_.n2p * k));   // -> natural
        outQ_.EnQue(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> pBuf_, fwdBuf_, bwdBuf_, sBuf_, oneBuf_, rtBuf_, ctBuf_;
    GlobalTensor<float> xGm_, yGm_;
    MhcSinkhornCustomTilingData t_;
    uint32_t first_ = 0;
    uint32_t count_ = 0;
};

extern "C" __global__ __aicore__ void mhc_sinkhorn_custom(GM_ADDR comb, GM_ADDR comb_out, GM_ADDR workspace,
                                                          GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelMhcSinkhorn op;
    op.Init(comb, comb_out, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int64_t nd = static_cast<int64_t>(shape.GetDimNum());
    if (nd < 2) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t n = static_cast<uint64_t>(shape.GetDim(nd - 1));
    if (n == 0 || static_cast<uint64_t>(shape.GetDim(nd - 2)) != n) {
        return ge::GRAPH_FAILED;
    }
    uint64_t b = 1;
    for (int64_t i = 0; i < nd - 2; ++i) {
        b *= static_cast<uint64_t>(shape.GetDim(i));
    }
    const int64_t* iterAttr = context->GetAttrs()->GetAttrPointer<int64_t>(0);
    const float* epsAttr = context->GetAttrs()->GetAttrPointer<float>(1);
    int64_t iterStep = iterAttr != nullptr ? *iterAttr : 20;
    if (iterStep < 1) {
        iterStep = 1;
    }
    const float eps = epsAttr != nullptr ? *epsAttr : 1e-6f;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    if (ub == 0 || ub > 196608) {
        ub = 196608;
    }
    uint64_t coreNum = plat.GetCoreNumAiv();
    if (coreNum == 0) {
        coreNum = 1;
    }
    const uint64_t budget = ub - 16384;

    const uint64_t n2 = n * n;
    const uint64_t n2p = (n2 + 7) / 8 * 8;
    // per matrix lane: 2 in + 2 out + planar + backward table (n2p floats each), forward table (n2),
    // row/column sums and ones (n each), row-tree and column-tree scratch
    const uint64_t perLane = n2p * 4 * 6 + n2 * 4 + n * 8 + 2 * n * (n / 2 + 1) * 4;

    // tiny inputs use few cores: block dim = min(vector cores, ceil(bytes / 16 KB)), bytes being the
    // data the launch moves (input + output); never more cores than matrices
    const uint64_t bytes = b * n * n * sizeof(float) * 2;
    uint64_t cores = (bytes + 16383) / 16384;
    cores = cores > coreNum ? coreNum : cores;
    cores = cores > b ? b : cores;
    cores = cores == 0 ? 1 : cores;

    // Former/tail split in units of MHC_GROUP matrices (one 8-lane group; 512 B of GM for n = 4):
    // the first formerNum cores take one group more than the rest; lanes are a multiple of 8 anyway,
    // so whole groups cost no extra vector work.
    const uint64_t groups = (b + MHC_GROUP - 1) / MHC_GROUP;
    cores = cores > groups ? groups : cores;
    cores = cores == 0 ? 1 : cores;
    MhcSinkhornCustomTilingData* t = context->GetTilingData<MhcSinkhornCustomTilingData>();
    t->units = static_cast<uint32_t>(b);
    t->formerNum = static_cast<uint32_t>(groups % cores);
    t->formerUnits = static_cast<uint32_t>(groups / cores + 1);
    t->tailUnits = static_cast<uint32_t>(groups / cores);
    const uint64_t perCore = (groups + cores - 1) / cores * MHC_GROUP;
    uint64_t lanes = budget / perLane / 8 * 8;
    lanes = lanes > 2048 ? 2048 : lanes;
    // fast path: block strides n * lanes / 8 and repeat counts must fit in 8 bits
    const bool fast = n >= 2;   // rows in groups of up to 8 blocks per repeat
    if (fast) {
        const uint64_t cap = 255 / n * 8;
        lanes = lanes > cap ? cap : lanes;
    }
    const uint64_t need = (perCore + 7) / 8 * 8;
    lanes = lanes > need ? need : lanes;
    lanes = lanes < 8 ? 8 : lanes;
    t->n = static_cast<uint32_t>(n);
    t->n2 = static_cast<uint32_t>(n2);
    t->n2p = static_cast<uint32_t>(n2p);
    t->lanes = static_cast<uint32_t>(lanes);
    t->iterStep = static_cast<uint32_t>(iterStep);
    t->fast = fast ? 1 : 0;
    t->eps = eps;
    context->SetBlockDim(static_cast<uint32_t>(cores));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (mhc_sinkhorn).
class MhcSinkhornCustom : public OpDef {
public:
    explicit MhcSinkhornCustom(const char* name) : OpDef(name)
    {
        this->Input("comb")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("comb_out")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Attr("iter_step").AttrType(OPTIONAL).Int(20);
        this->Attr("eps").AttrType(OPTIONAL).Float(1e-06);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(MhcSinkhornCustom);
}  // namespace ops
