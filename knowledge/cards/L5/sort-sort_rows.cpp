// Sort, values and int32 indices of every row sorted descending (stable): the sort/merge exemplar
// of the Cannpilot knowledge base, written for Cannpilot from documented AscendC behaviour.
// Shows: a row of n scores padded with -inf to L = n rounded up to 32; Sort32 sorts each run of 32
// into 8-byte (score, uint32 index) structures; MrgSort merges four runs at a time, ping-ponging
// between two UB buffers, until one run of L remains; Extract splits it into values and indices,
// and the first n of each go out. Rows are split over the cores; one row sorts in UB.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include <limits>

constexpr uint32_t RUN = 32;              // Sort32 sorts 32 scores per repeat
constexpr uint32_t MAX_ROW = 4096;        // padded row: 16 KB of fp32 scores, 32 KB of structures
constexpr uint32_t STRUCT_BYTES = 8;      // (score, index) structure

struct SortTilingData {
    uint32_t rowsBase;     // every core sorts rowsBase rows,
    uint32_t rowsExtra;    //   and the first rowsExtra cores one more
    uint32_t rowLen;       // n, elements per row (the last axis)
    uint32_t paddedLen;    // L, n rounded up to a multiple of 32
    float negInf;          // the padding score, made on the host (no C library on the device)
};
REGISTER_TILING_DEFAULT(SortTilingData);

using namespace AscendC;

template <typename T>
class KernelSortRows {
public:
    __aicore__ inline KernelSortRows() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR values, GM_ADDR indices, const SortTilingData& t)
    {
        const uint32_t idx = static_cast<uint32_t>(GetBlockIdx());
        const uint64_t firstRow = static_cast<uint64_t>(idx) * t.rowsBase + (idx < t.rowsExtra ? idx : t.rowsExtra);
        rows_ = t.rowsBase + (idx < t.rowsExtra ? 1 : 0);
        n_ = t.rowLen;
        L_ = t.paddedLen;
        negInf_ = static_cast<T>(t.negInf);
        const uint64_t start = firstRow * n_;
        xGm_.SetGlobalBuffer((__gm__ T*)x + start, static_cast<uint64_t>(rows_) * n_);
        valuesGm_.SetGlobalBuffer((__gm__ T*)values + start, static_cast<uint64_t>(rows_) * n_);
        indicesGm_.SetGlobalBuffer((__gm__ uint32_t*)indices + start, static_cast<uint64_t>(rows_) * n_);

        pipe_.InitBuffer(inX_, 2, L_ * sizeof(T));                 // next row's copy-in overlaps this sort
        pipe_.InitBuffer(outValues_, 2, L_ * sizeof(T));
        pipe_.InitBuffer(outIndices_, 2, L_ * sizeof(uint32_t));
        pipe_.InitBuffer(rampBuf_, L_ * sizeof(int32_t));
        pipe_.InitBuffer(sortedA_, L_ * STRUCT_BYTES);             // merge ping-pong
        pipe_.InitBuffer(sortedB_, L_ * STRUCT_BYTES);
        // 0, 1, ..., L-1: the index half of every structure, the same for every row
        CreateVecIndex(rampBuf_.Get<int32_t>(), static_cast<int32_t>(0), L_);
    }

    __aicore__ inline void Process()
    {
        for (uint32_t r = 0; r < rows_; ++r) {
            CopyIn(r);
            SortRow();
            CopyOut(r);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t r)
    {
        LocalTensor<T> x = inX_.AllocTensor<T>();
        // pad the last 32-byte block of the row with -inf on the way in (the -inf sorts last)
        const uint32_t perBlock = 32 / sizeof(T);
        const uint32_t blockEnd = (n_ + perBlock - 1) / perBlock * perBlock;
        DataCopyExtParams copy{1, static_cast<uint32_t>(n_ * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{true, 0, static_cast<uint8_t>(blockEnd - n_), negInf_};
        DataCopyPad(x, xGm_[static_cast<uint64_t>(r) * n_], copy, pad);
        inX_.EnQue(x);
    }

    __aicore__ inline void SortRow()
    {
        LocalTensor<T> x = inX_.DeQue<T>();
        const uint32_t perBlock = 32 / sizeof(T);
        const uint32_t blockEnd = (n_ + perBlock - 1) / perBlock * perBlock;
        if (blockEnd < L_) {                     // whole 32-byte blocks of padding up to L
            Duplicate(x[blockEnd], negInf_, L_ - blockEnd);
        }
        LocalTensor<uint32_t> ramp = rampBuf_.Get<uint32_t>();
        LocalTensor<T> a = sortedA_.Get<T>();
        LocalTensor<T> b = sortedB_.Get<T>();
        Sort32(a, x, ramp, static_cast<int32_t>(L_ / RUN));
        inX_.FreeTensor(x);

        // Merge passes: runs of `run` structures, four at a time, from src into dst. The last group
        // of a pass may have fewer runs, and its last run fewer structures.
        LocalTensor<T> src = a;
        LocalTensor<T> dst = b;
        for (uint32_t run = RUN; run < L_; run *= 4) {
            for (uint32_t first = 0; first < L_; first += 4 * run) {
                MergeGroup(dst, src, first, run);
            }
            LocalTensor<T> done = dst;
            dst = src;
            src = done;
        }

        LocalTensor<T> values = outValues_.AllocTensor<T>();
        LocalTensor<uint32_t> indices = outIndices_.AllocTensor<uint32_t>();
        Extract(values, indices, src, static_cast<int32_t>(L_ / RUN));
        outValues_.EnQue(values);
        outIndices_.EnQue(indices);
    }

    // Merge the runs starting at structure `first` into one run at the same place in dst.
    __aicore__ inline void MergeGroup(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t first,
                                      uint32_t run)
    {
        const uint32_t elemsPerStruct = STRUCT_BYTES / sizeof(T);
        const uint32_t left = L_ - first;
        const uint32_t queues = left > 3 * run ? 4 : (left + run - 1) / run;
        if (queues == 1) {                       // a lone last run: already merged, move it over
            DataCopy(dst[first * elemsPerStruct], src[first * elemsPerStruct], left * elemsPerStruct);
            return;
        }
        uint16_t lengths[4] = {0, 0, 0, 0};
        LocalTensor<T> q[4] = {src, src, src, src};   // unused queues: any tensor, validBit skips them
        for (uint32_t i = 0; i < queues; ++i) {
            const uint32_t begin = first + i * run;
            lengths[i] = static_cast<uint16_t>(left - i * run < run ? left - i * run : run);
            q[i] = src[begin * elemsPerStruct];
        }
        const uint16_t validBit = queues == 2 ? 0b0011 : queues == 3 ? 0b0111 : 0b1111;
        MrgSortSrcList<T> list(q[0], q[1], q[2], q[3]);
        MrgSort4Info info(lengths, false, validBit, 1);
        MrgSort(dst[first * elemsPerStruct], list, info);
    }

    __aicore__ inline void CopyOut(uint32_t r)
    {
        LocalTensor<T> values = outValues_.DeQue<T>();
        LocalTensor<uint32_t> indices = outIndices_.DeQue<uint32_t>();
        const uint64_t offset = static_cast<uint64_t>(r) * n_;
        DataCopyExtParams copyValues{1, static_cast<uint32_t>(n_ * sizeof(T)), 0, 0, 0};
        DataCopyExtParams copyIndices{1, static_cast<uint32_t>(n_ * sizeof(uint32_t)), 0, 0, 0};
        DataCopyPad(valuesGm_[offset], values, copyValues);      // the first n: the padding sorted last
        DataCopyPad(indicesGm_[offset], indices, copyIndices);
        outValues_.FreeTensor(values);
        outIndices_.FreeTensor(indices);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inX_;
    TQue<TPosition::VECOUT, 1> outValues_, outIndices_;
    TBuf<TPosition::VECCALC> rampBuf_, sortedA_, sortedB_;
    GlobalTensor<T> xGm_, valuesGm_;
    GlobalTensor<uint32_t> indicesGm_;
    uint32_t rows_ = 0;
    uint32_t n_ = 0;
    uint32_t L_ = 0;
    T negInf_;
};

extern "C" __global__ __aicore__ void sort_custom(GM_ADDR x, GM_ADDR values, GM_ADDR indices, GM_ADDR workspace,
                                                  GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelSortRows<DTYPE_X> op;
    op.Init(x, values, indices, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<SortTilingData>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto& shape = context->GetInputShape(0)->GetStorageShape();
    const uint64_t total = shape.GetShapeSize();
    const uint64_t n = shape.GetDimNum() == 0 ? 1 : shape.GetDim(shape.GetDimNum() - 1);
    if (n == 0 || n > MAX_ROW) {
        return ge::GRAPH_FAILED;          // a row sorts in UB: longer rows need a GM merge
    }
    const uint64_t rows = total / n;
    const uint64_t cores = platform.GetCoreNumAiv();
    const uint64_t used = rows == 0 ? 1 : (rows < cores ? rows : cores);
    t->rowLen = static_cast<uint32_t>(n);
    t->paddedLen = static_cast<uint32_t>((n + RUN - 1) / RUN * RUN);
    t->rowsBase = static_cast<uint32_t>(rows / used);
    t->rowsExtra = static_cast<uint32_t>(rows % used);
    t->negInf = -std::numeric_limits<float>::infinity();
    context->SetBlockDim(static_cast<uint32_t>(used));
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class SortCustom : public OpDef {
public:
    explicit SortCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("values").ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("indices").ParamType(REQUIRED)
            .DataType({ge::DT_INT32, ge::DT_INT32})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b").AddConfig("ascend950");
    }
};
OP_ADD(SortCustom);
}  // namespace ops
