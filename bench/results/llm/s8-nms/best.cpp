// NMS (the golden's greedy loop), AIV only, as a bitmask NMS:
//  phase 0 (every core): Sort the scores descending (stable for ties), gather the sorted boxes
//          (x1, y1, x2, y2) and their areas into UB;
//  phase 1 (all cores, rows interleaved): for sorted row p, the golden's IoU with every later
//          column q, evaluated in its float order (maximum/minimum, clamp, ((ai + aj) - inter) +
//          1e-6, Div); ok bit = (iou <= thr) (NaN -> suppress), one row of bits to GM workspace;
//  SyncAll;
//  phase 2 (core 0): rows in sorted order, 32 per block; a row alive at its turn is kept and its
//          ok row is ANDed into the alive bitmap; kept original indices written as int64.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct NmsCustomTilingData {
    uint32_t n;        // boxes
    uint32_t np;       // n rounded up to 256
    uint32_t outCap;   // elements of keep_indices
    uint32_t rowsPerCore;
    float thr;
};
REGISTER_TILING_DEFAULT(NmsCustomTilingData);

using namespace AscendC;

class KernelNms {
public:
    __aicore__ inline KernelNms() {}

    __aicore__ inline void Init(GM_ADDR boxes, GM_ADDR scores, GM_ADDR keep, GM_ADDR workspace,
                                const NmsCustomTilingData& t)
    {
        t_ = t;
        np_ = t.np;
        boxGm_.SetGlobalBuffer((__gm__ float*)boxes);
        scoreGm_.SetGlobalBuffer((__gm__ float*)scores);
        outGm_.SetGlobalBuffer((__gm__ int64_t*)keep);
        maskGm_.SetGlobalBuffer((__gm__ uint8_t*)GetUserWorkspace(workspace));
        pipe_.InitBuffer(poolA_, 8 * np_);
        pipe_.InitBuffer(poolB_, 16 * np_);
        pipe_.InitBuffer(poolC_, 16 * np_);
        pipe_.InitBuffer(bitsQ_, 2, np_ / 8);
        pipe_.InitBuffer(aliveBuf_, np_ / 8);
        rp_ = (t.rowsPerCore + 7) / 8 * 8;
        pipe_.InitBuffer(rowBuf_, 5 * rp_ * 4);
    }

    __aicore__ inline void Process()
    {
        SortAndGather();
        Rows();
        SyncAll();
        if (GetBlockIdx() == 0) {
            Scan();
        }
    }

private:
    static constexpr uint32_t GROUP = 128;   // mask rows per scan copy

    // Pool regions (bytes): R0 [0, 4np) R1 [4np, 8np) in poolA_; R2 [8np, 16np) R3 [16np, 24np) in
    // poolB_; R4 [24np, 40np) in poolC_ (no region crosses a buffer).
    template <typename U> __aicore__ inline LocalTensor<U> P(uint32_t byteOff)
    {
        if (byteOff < 8 * np_) {
            return poolA_.Get<U>()[byteOff / sizeof(U)];
        }
        if (byteOff < 24 * np_) {
            return poolB_.Get<U>()[(byteOff - 8 * np_) / sizeof(U)];
        }
        return poolC_.Get<U>()[(byteOff - 24 * np_) / sizeof(U)];
    }
    __aicore__ inline LocalTensor<float> F(uint32_t byteOff) { return P<float>(byteOff); }
    __aicore__ inline LocalTensor<int32_t> I32(uint32_t byteOff) { return P<int32_t>(byteOff); }

    // Mask layout in GM: groups of GROUP rows; a group's rows hold the columns [cs, np) with
    // cs = 256 * floor(g0 / 256), packed back to back, so a group is one contiguous burst.
    __aicore__ inline uint32_t RowBytes(uint32_t g0) { return (np_ - g0 / 256 * 256) / 8; }
    __aicore__ inline uint64_t GroupBase(uint32_t g0)
    {
        uint64_t b = 0;
        for (uint32_t g = 0; g < g0; g += GROUP) {
            b += static_cast<uint64_t>(GROUP) * RowBytes(g);
        }
        return b;
    }

    template <HardEvent E> __aicore__ inline void Sync()
    {
        event_t e = static_cast<event_t>(pipe_.FetchEventID(E));
        SetFlag<E>(e);
        WaitFlag<E>(e);
    }

    __aicore__ inline void SortAndGather()
    {
        const uint32_t n = t_.n;
        const uint32_t np = np_;
        const int32_t cnp = static_cast<int32_t>(np);
        LocalTensor<float> s = F(0);
        LocalTensor<int32_t> idx = I32(4 * np);
        LocalTensor<float> sorted = F(8 * np);
        LocalTensor<float> tmp = F(16 * np);
        LocalTensor<float> concat = F(24 * np);
        Duplicate(s, -3.0e38f, cnp);
        CreateVecIndex(idx, static_cast<int32_t>(0), np);
        Sync<HardEvent::V_MTE2>();
        const uint32_t padR = ((n + 7) / 8 * 8) - n;
        DataCopyExtParams cp{1, n * 4, 0, 0, 0};
        DataCopyPadExtParams<float> pad{padR != 0, 0, static_cast<uint8_t>(padR), -3.0e38f};
        DataCopyPad(s, scoreGm_, cp, pad);
        Sync<HardEvent::MTE2_V>();
        for (uint32_t off = 0; off < np; off += 3840) {
            const uint32_t len = (np - off < 3840) ? np - off : 3840;
            LocalTensor<float> cDst = concat[off];
            LocalTensor<float> cSrc = s[off];
            Concat(cDst, cSrc, tmp, static_cast<int32_t>(len / 16));
        }
        LocalTensor<uint32_t> idxU = idx.ReinterpretCast<uint32_t>();
        Sort<float, true>(sorted, concat, idxU, tmp, static_cast<int32_t>(np / 32));
        Extract(s, idxU, sorted, static_cast<int32_t>(np / 32));   // s: sorted scores, idx: sorted order
        // boxes -> R2..R3
        Sync<HardEvent::V_MTE2>();
        LocalTensor<float> bx = F(8 * np);
        DataCopyExtParams cpb{1, n * 16, 0, 0, 0};
        DataCopyPadExtParams<float> padb{false, 0, 0, 0};
        DataCopyPad(bx, boxGm_, cpb, padb);
        Sync<HardEvent::MTE2_V>();
        LocalTensor<int32_t> offI = I32(0);
        Muls(offI, idx, static_cast<int32_t>(16), cnp);
        Mins(offI, offI, static_cast<int32_t>((n - 1) * 16), cnp);   // pads read box n-1
        LocalTensor<uint32_t> offU = offI.ReinterpretCast<uint32_t>();
        x1_ = F(24 * np);
        y1_ = F(28 * np);
        x2_ = F(32 * np);
        y2_ = F(36 * np);
        Gather(x1_, bx, offU, 0, np);
        Gather(y1_, bx, offU, 4, np);
        Gather(x2_, bx, offU, 8, np);
        Gather(y2_, bx, offU, 12, np);
        area_ = F(0);
        LocalTensor<float> hgt = F(8 * np);
        Sub(area_, x2_, x1_, cnp);
        Sub(hgt, y2_, y1_, cnp);
        Mul(area_, area_, hgt, cnp);
        order_ = I32(4 * np);
        Sync<HardEvent::V_S>();
    }

    __aicore__ inline void Rows()
    {
        const uint32_t np = np_;
        const uint32_t blocks = static_cast<uint32_t>(GetBlockNum());
        LocalTensor<float> a = F(8 * np);
        LocalTensor<float> b = F(12 * np);
        LocalTensor<float> c = F(16 * np);
        // This core's rows p = idx + j * blocks: their (x1, y1, x2, y2, area) gathered into rowBuf_.
        const uint32_t me = static_cast<uint32_t>(GetBlockIdx());
        const int32_t rp = static_cast<int32_t>(rp_);
        LocalTensor<int32_t> offI = I32(8 * np);
        CreateVecIndex(offI, static_cast<int32_t>(0), rp_);
        Muls(offI, offI, static_cast<int32_t>(blocks * 4), rp);
        Adds(offI, offI, static_cast<int32_t>(me * 4), rp);
        Mins(offI, offI, static_cast<int32_t>((t_.n - 1) * 4), rp);
        LocalTensor<uint32_t> offU = offI.ReinterpretCast<uint32_t>();
        LocalTensor<float> rs = rowBuf_.Get<float>();
        LocalTensor<float> r0 = rs[0];
        LocalTensor<float> r1 = rs[rp_];
        LocalTensor<float> r2 = rs[2 * rp_];
        LocalTensor<float> r3 = rs[3 * rp_];
        LocalTensor<float> r4 = rs[4 * rp_];
        Gather(r0, x1_, offU, 0, rp_);
        Gather(r1, y1_, offU, 0, rp_);
        Gather(r2, x2_, offU, 0, rp_);
        Gather(r3, y2_, offU, 0, rp_);
        Gather(r4, area_, offU, 0, rp_);
        Sync<HardEvent::V_S>();
        uint32_t j = 0;
        for (uint32_t p = me; p < t_.n; p += blocks, ++j) {
            const uint32_t cs = p / 64 * 64;      // columns before cs are never needed for row p
            const int32_t cnt = static_cast<int32_t>(np - cs);
            const float xi1 = rs.GetValue(j);
            const float yi1 = rs.GetValue(rp_ + j);
            const float xi2 = rs.GetValue(2 * rp_ + j);
            const float yi2 = rs.GetValue(3 * rp_ + j);
            const float ai = rs.GetValue(4 * rp_ + j);
            LocalTensor<float> X1 = x1_[cs];
            LocalTensor<float> Y1 = y1_[cs];
            LocalTensor<float> X2 = x2_[cs];
            LocalTensor<float> Y2 = y2_[cs];
            LocalTensor<float> A = area_[cs];
            Maxs(a, X1, xi1, cnt);
            Mins(b, X2, xi2, cnt);
            Sub(b, b, a, cnt);
            Maxs(b, b, 0.0f, cnt);          // w
            Maxs(a, Y1, yi1, cnt);
            Mins(c, Y2, yi2, cnt);
            Sub(c, c, a, cnt);
            Maxs(c, c, 0.0f, cnt);          // h
            Mul(b, b, c, cnt);              // inter
            Adds(a, A, ai, cnt);
            Sub(a, a, b, cnt);
            Adds(a, a, 1e-6f, cnt);         // ((ai + aj) - inter) + 1e-6
            Div(b, b, a, cnt);              // iou
            LocalTensor<uint8_t> bits = bitsQ_.AllocTensor<uint8_t>();
            Compares(bits, b, t_.thr, CMPMODE::LE, static_cast<uint32_t>(cnt));
            bitsQ_.EnQue(bits);
            bits = bitsQ_.DeQue<uint8_t>();
            DataCopyExtParams cp{1, static_cast<uint32_t>(cnt / 8), 0, 0, 0};
            const uint32_t g0 = p / GROUP * GROUP;
            const uint32_t rowStart = g0 / 256 * 256;   // the group's rows start at this column
            DataCopyPad(maskGm_[GroupBase(g0) + static_cast<uint64_t>(p - g0) * RowBytes(g0) + (cs - rowStart) / 8],
                        bits, cp);
            bitsQ_.FreeTensor(bits);
        }
    }

    // Mask rows [g0, g0 + GROUP) from column cs = 256 * floor(g0 / 256) into chunk half `half`.
    __aicore__ inline void LoadGroup(uint32_t g0, uint32_t half)
    {
        const uint32_t rowsG = (t_.n - g0 < GROUP) ? t_.n - g0 : GROUP;
        LocalTensor<uint8_t> dst = half == 0 ? poolB_.Get<uint8_t>() : poolC_.Get<uint8_t>();
        DataCopyExtParams cp{1, rowsG * RowBytes(g0), 0, 0, 0};
        DataCopyPadExtParams<uint8_t> pad{false, 0, 0, 0};
        DataCopyPad(dst, maskGm_[GroupBase(g0)], cp, pad);
    }

    __aicore__ inline void Scan()
    {
        const uint32_t n = t_.n;
        const uint32_t np = np_;
        LocalTensor<uint32_t> alive = aliveBuf_.Get<uint32_t>();
        LocalTensor<uint16_t> alive16 = aliveBuf_.Get<uint16_t>();
        LocalTensor<int32_t> pos = I32(0);                        // kept rows (byte offsets into order_)
        Duplicate(alive16, static_cast<uint16_t>(0xFFFF), static_cast<int32_t>(np / 16));
        uint32_t m = 0;
        Sync<HardEvent::V_MTE2>();
        LoadGroup(0, 0);
        uint32_t half = 0;
        for (uint32_t g0 = 0; g0 < n; g0 += GROUP, half ^= 1) {
            Sync<HardEvent::MTE2_S>();                            // this group's rows are in UB
            Sync<HardEvent::MTE2_V>();
            if (g0 + GROUP < n) {
                Sync<HardEvent::V_MTE2>();                        // the other half is no longer read
                LoadGroup(g0 + GROUP, half ^ 1);
            }
            const uint32_t rowsG = (n - g0 < GROUP) ? n - g0 : GROUP;
            const uint32_t cs = g0 / 256 * 256;
            const uint32_t rowBytes = (np - cs) / 8;
            const uint32_t rowWords = rowBytes / 4;
            LocalTensor<uint32_t> chunk32 = half == 0 ? poolB_.Get<uint32_t>() : poolC_.Get<uint32_t>();
            LocalTensor<uint16_t> chunk16 = half == 0 ? poolB_.Get<uint16_t>() : poolC_.Get<uint16_t>();
            LocalTensor<uint16_t> aliveV = alive16[cs / 16];
            const int32_t andCnt = static_cast<int32_t>(rowBytes / 2);
            for (uint32_t k = g0 / 32; k * 32 < g0 + rowsG; ++k) {
                Sync<HardEvent::V_S>();                           // alive word k is final
                uint32_t cur = alive.GetValue(k);
                const uint32_t rows = (n - k * 32 < 32) ? n - k * 32 : 32;
                const uint32_t wk = k - cs / 32;
                for (uint32_t bIdx = 0; bIdx < rows; ++bIdx) {
                    if (((cur >> bIdx) & 1u) == 0) {
                        continue;
                    }
                    const uint32_t p = k * 32 + bIdx;
                    const uint32_t r = p - g0;
                    cur &= chunk32.GetValue(r * rowWords + wk);
                    LocalTensor<uint16_t> rowV = chunk16[r * rowWords * 2];
                    And(aliveV, aliveV, rowV, andCnt);
                    pos.SetValue(m, static_cast<int32_t>(p * 4));
                    ++m;
                }
            }
        }
        const uint32_t outN = m < t_.outCap ? m : t_.outCap;
        if (outN == 0) {
            return;
        }
        Sync<HardEvent::S_V>();
        LocalTensor<int32_t> outI = I32(8 * np);
        LocalTensor<int64_t> out64 = P<int64_t>(16 * np);
        LocalTensor<uint32_t> posU = pos.ReinterpretCast<uint32_t>();
        Gather(outI, order_, posU, 0, outN);
        Cast(out64, outI, RoundMode::CAST_NONE, outN);
        Sync<HardEvent::V_MTE3>();
        DataCopyExtParams cp{1, outN * 8, 0, 0, 0};
        DataCopyPad(outGm_, out64, cp);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> poolA_, poolB_, poolC_, aliveBuf_, rowBuf_;
    TQue<TPosition::VECOUT, 1> bitsQ_;
    GlobalTensor<float> boxGm_, scoreGm_;
    GlobalTensor<int64_t> outGm_;
    GlobalTensor<uint8_t> maskGm_;
    NmsCustomTilingData t_;
    uint32_t np_ = 0;
    uint32_t rp_ = 8;
    LocalTensor<float> x1_, y1_, x2_, y2_, area_;
    LocalTensor<int32_t> order_;
};

extern "C" __global__ __aicore__ void nms_custom(GM_ADDR boxes, GM_ADDR scores, GM_ADDR keep_indices,
                                                 GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(t, tiling);
    KernelNms op;
    op.Init(boxes, scores, keep_indices, workspace, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& bs = context->GetInputShape(0)->GetStorageShape();
    if (bs.GetDimNum() != 2 || bs.GetDim(1) != 4 || bs.GetDim(0) <= 0) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t n = bs.GetDim(0);
    const float* thrP = context->GetAttrs()->GetAttrPointer<float>(0);
    if (thrP == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t np = (n + 255) / 256 * 256;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint64_t coreNum0 = plat.GetCoreNumAiv();
    coreNum0 = coreNum0 == 0 ? 1 : coreNum0;
    const uint64_t bd0 = n < coreNum0 ? n : coreNum0;
    const uint64_t rowsPerCore = (n + bd0 - 1) / bd0;
    if (40 * np + 3 * (np / 8) + 5 * ((rowsPerCore + 7) / 8 * 8) * 4 + 8192 > ub || np / 32 > 255) {
        return ge::GRAPH_FAILED;   // more boxes than one core's UB sorts (about 4500)
    }
    uint64_t outCap = n;
    const gert::StorageShape* os = context->GetOutputShape(0);
    if (os != nullptr && os->GetStorageShape().GetDimNum() == 1 && os->GetStorageShape().GetDim(0) >= 0) {
        outCap = static_cast<uint64_t>(os->GetStorageShape().GetDim(0));
    }
    uint64_t coreNum = plat.GetCoreNumAiv();
    coreNum = coreNum == 0 ? 1 : coreNum;
    const uint64_t blockDim = n < coreNum ? n : coreNum;

    NmsCustomTilingData* t = context->GetTilingData<NmsCustomTilingData>();
    t->n = static_cast<uint32_t>(n);
    t->np = static_cast<uint32_t>(np);
    t->outCap = static_cast<uint32_t>(outCap);
    t->rowsPerCore = static_cast<uint32_t>(rowsPerCore);
    t->thr = *thrP;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = static_cast<size_t>((n + 127) / 128 * 128 * (np / 8)) + plat.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (nms).
class NmsCustom : public OpDef {
public:
    explicit NmsCustom(const char* name) : OpDef(name)
    {
        this->Input("boxes")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("scores")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("keep_indices")
            .ParamType(REQUIRED)
            .DataType({ge::DT_INT64})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Attr("iou_threshold").AttrType(REQUIRED).Float();
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(NmsCustom);
}  // namespace ops
