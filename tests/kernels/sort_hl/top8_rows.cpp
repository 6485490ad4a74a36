// Top-8 of each row with the TopK library API (Normal mode), written as an engineer would.
// Rows of `cols` elements are padded in UB to inner = cols rounded up to 32 (the padding holds
// -inf, so it is never selected before a real element); each core takes a contiguous range of
// rows and handles up to `tileRows` rows per TopK call. Values come back in rows of k rounded up to
// 32 bytes (kpad), indices in rows of 8 int32; both are copied out as rows of exactly 8.
// Run: cannpilot check tests/kernels/sort_hl/top8_rows.cpp --task tests/fixtures/tasks/top8_rows --cases all
#include <cmath>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr int32_t K = 8;

struct Top8Tiling {
    uint32_t rows;
    uint32_t cols;
    uint32_t inner;         // cols rounded up to 32
    uint32_t rowsPerCore;
    uint32_t formerNum;     // the first formerNum cores take one row more
    uint32_t tileRows;      // rows per TopK call
    uint32_t tmpBytes;
    AscendC::tiling::TopkTiling topk;   // from TopKTilingFunc for (inner, tileRows)
};

template <typename T>
class KernelTop8 {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR idx, const Top8Tiling& t)
    {
        t_ = t;
        const uint32_t b = AscendC::GetBlockIdx();
        first_ = b < t.formerNum ? b * (t.rowsPerCore + 1) : t.formerNum * (t.rowsPerCore + 1) + (b - t.formerNum) * t.rowsPerCore;
        count_ = b < t.formerNum ? t.rowsPerCore + 1 : t.rowsPerCore;
        xGm_.SetGlobalBuffer((__gm__ T*)x, (uint64_t)t.rows * t.cols);
        yGm_.SetGlobalBuffer((__gm__ T*)y, (uint64_t)t.rows * K);
        iGm_.SetGlobalBuffer((__gm__ int32_t*)idx, (uint64_t)t.rows * K);
        kpad_ = (K * sizeof(T) + 31) / 32 * 32 / sizeof(T);
        pipe_.InitBuffer(inQ_, 1, t.tileRows * t.inner * sizeof(T));
        pipe_.InitBuffer(valQ_, 1, t.tileRows * kpad_ * sizeof(T));
        pipe_.InitBuffer(idxQ_, 1, t.tileRows * K * sizeof(int32_t));
        pipe_.InitBuffer(tmp_, t.tmpBytes);
        pipe_.InitBuffer(srcIdx_, 32);   // isInitIndex = false: defined, not read
    }
    __aicore__ inline void Process()
    {
        for (uint32_t r = 0; r < count_; r += t_.tileRows) {
            const uint32_t n = count_ - r < t_.tileRows ? count_ - r : t_.tileRows;
            Tile(first_ + r, n);
        }
    }

private:
    __aicore__ inline void Tile(uint32_t row0, uint32_t nrows)
    {
        AscendC::LocalTensor<T> x = inQ_.AllocTensor<T>();
        // -inf everywhere first: the gaps between padded rows keep it after the copy.
        AscendC::Duplicate(x, static_cast<T>(-INFINITY), (int32_t)(nrows * t_.inner));
        AscendC::PipeBarrier<PIPE_ALL>();
        const uint32_t rowBytes = t_.cols * sizeof(T);
        const uint32_t gapBlocks = (t_.inner * sizeof(T) - (rowBytes + 31) / 32 * 32) / 32;
        AscendC::DataCopyExtParams cp{(uint16_t)nrows, rowBytes, 0, gapBlocks, 0};
        AscendC::DataCopyPadExtParams<T> pad{true, 0, 0, static_cast<T>(-INFINITY)};
        AscendC::DataCopyPad(x, xGm_[(uint64_t)row0 * t_.cols], cp, pad);
        inQ_.EnQue(x);
        x = inQ_.DeQue<T>();

        AscendC::LocalTensor<T> v = valQ_.AllocTensor<T>();
        AscendC::LocalTensor<int32_t> i = idxQ_.AllocTensor<int32_t>();
        AscendC::LocalTensor<bool> finish;
        AscendC::TopKInfo info;
        info.outter = (int32_t)nrows;
        info.inner = (int32_t)t_.inner;
        info.n = (int32_t)t_.cols;
        AscendC::TopK<T, false, false, false, AscendC::TopKMode::TOPK_NORMAL>(
            v, i, x, srcIdx_.Get<int32_t>(), finish, tmp_.Get<uint8_t>(), K, t_.topk, info, true);
        inQ_.FreeTensor(x);
        valQ_.EnQue(v);
        idxQ_.EnQue(i);
        v = valQ_.DeQue<T>();
        i = idxQ_.DeQue<int32_t>();
        // Values: rows of kpad in UB (32 B each), 8 elements each in GM.
        AscendC::DataCopyExtParams vout{(uint16_t)nrows, (uint32_t)(K * sizeof(T)), 0, 0, 0};
        AscendC::DataCopyPad(yGm_[(uint64_t)row0 * K], v, vout);
        AscendC::DataCopy(iGm_[(uint64_t)row0 * K], i, nrows * K);
        valQ_.FreeTensor(v);
        idxQ_.FreeTensor(i);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ_;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> valQ_, idxQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> tmp_, srcIdx_;
    AscendC::GlobalTensor<T> xGm_, yGm_;
    AscendC::GlobalTensor<int32_t> iGm_;
    Top8Tiling t_;
    uint32_t first_ = 0, count_ = 0, kpad_ = 8;
};

extern "C" __global__ __aicore__ void top8_rows_custom(GM_ADDR x, GM_ADDR y, GM_ADDR indices, GM_ADDR workspace,
                                                       GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(Top8Tiling);
    GET_TILING_DATA(t, tiling);
    KernelTop8<DTYPE_X> op;
    op.Init(x, y, indices, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<Top8Tiling>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    uint32_t cores = platform.GetCoreNumAiv();
    const uint32_t typeSize = ge::GetSizeByDataType(context->GetInputDesc(0)->GetDataType());
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    if (shape.GetDimNum() != 2) return ge::GRAPH_FAILED;
    t->rows = (uint32_t)shape.GetDim(0);
    t->cols = (uint32_t)shape.GetDim(1);
    if (t->cols < (uint32_t)K || t->cols > 4096) return ge::GRAPH_FAILED;   // TopK Normal: inner <= 4096
    t->inner = (t->cols + 31) / 32 * 32;
    if (t->rows < cores) cores = t->rows;
    t->rowsPerCore = t->rows / cores;
    t->formerNum = t->rows % cores;
    const uint32_t perCore = t->rowsPerCore + (t->formerNum ? 1 : 0);
    // tmp is per row in Normal mode; the rest of UB holds the input tile and the two outputs.
    uint32_t tmpMax = 0, tmpMin = 0;
    if (!AscendC::GetTopKMaxMinTmpSize(platform, (int32_t)t->inner, 1, false, false, AscendC::TopKMode::TOPK_NORMAL, true,
                                       typeSize, tmpMax, tmpMin))
        return ge::GRAPH_FAILED;
    t->tmpBytes = tmpMin;
    const uint64_t perRow = (uint64_t)t->inner * typeSize + 32 + K * 4 + 64;
    uint64_t tile = (ub - tmpMin - 1024) / perRow;
    if (tile > 255) tile = 255;                       // DataCopyPad blockCount is 16-bit; keep repeats small
    if (tile > perCore) tile = perCore;
    if (tile == 0) return ge::GRAPH_FAILED;
    t->tileRows = (uint32_t)tile;
    if (!AscendC::TopKTilingFunc(platform, (int32_t)t->inner, (int32_t)t->tileRows, K, typeSize, false,
                                 AscendC::TopKMode::TOPK_NORMAL, true, t->topk))
        return ge::GRAPH_FAILED;
    context->SetBlockDim(cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
