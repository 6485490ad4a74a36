// Add with numpy broadcasting, double-buffered (two buffers per queue, so the copy-in of the next
// tile overlaps the compute of this one). The output is seen as rows of its last axis; work units
// are (row, column tile) pairs split over the cores. An operand whose last axis is broadcast is a
// per-row scalar (Adds), otherwise its tile is copied in (DataCopy, or DataCopyPad for a tail that
// is not a 32 B multiple). bf16 adds in float through Cast, then rounds back with CAST_RINT.
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t MAX_RANK = 8;

struct AddTiling {
    uint64_t rows;                 // product of the output dims except the last
    uint64_t cols;                 // output last dim
    uint64_t units;                // rows x column tiles
    uint32_t tileLength;
    uint32_t unitsPerCore;
    uint32_t formerNum;
    uint32_t rank;                 // output rank (>= 1)
    uint32_t scalar1, scalar2;     // 1 when the operand's last axis is broadcast
    uint64_t outDims[MAX_RANK];
    uint64_t stride1[MAX_RANK];    // element strides of x1 / x2 per output dim (0 = broadcast)
    uint64_t stride2[MAX_RANK];
};

template <typename T>
class KernelAdd {
    static constexpr bool kWiden = std::is_same_v<T, bfloat16_t>;
public:
    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, const AddTiling& t)
    {
        t_ = t;
        uint64_t idx = AscendC::GetBlockIdx();
        first_ = idx < t.formerNum ? idx * (t.unitsPerCore + 1)
                                   : t.formerNum * (t.unitsPerCore + 1) + (idx - t.formerNum) * t.unitsPerCore;
        count_ = idx < t.formerNum ? t.unitsPerCore + 1 : t.unitsPerCore;
        x1Gm_.SetGlobalBuffer((__gm__ T*)x1);
        x2Gm_.SetGlobalBuffer((__gm__ T*)x2);
        yGm_.SetGlobalBuffer((__gm__ T*)y, t.rows * t.cols);
        pipe_.InitBuffer(inQ1_, BUFFER_NUM, t.tileLength * sizeof(T));
        pipe_.InitBuffer(inQ2_, BUFFER_NUM, t.tileLength * sizeof(T));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, t.tileLength * sizeof(T));
        if constexpr (kWiden) {
            pipe_.InitBuffer(f1_, t.tileLength * sizeof(float));
            pipe_.InitBuffer(f2_, t.tileLength * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        uint64_t tiles = (t_.cols + t_.tileLength - 1) / t_.tileLength;
        for (uint64_t u = first_; u < first_ + count_; ++u) {
            uint64_t row = u / tiles;
            uint64_t c0 = (u % tiles) * t_.tileLength;
            uint32_t n = (uint32_t)(t_.cols - c0 < t_.tileLength ? t_.cols - c0 : t_.tileLength);
            uint64_t off1 = 0, off2 = 0, rest = row;
            for (int32_t d = (int32_t)t_.rank - 2; d >= 0; --d) {
                uint64_t coord = rest % t_.outDims[d];
                rest /= t_.outDims[d];
                off1 += coord * t_.stride1[d];
                off2 += coord * t_.stride2[d];
            }
            CopyIn(off1, off2, c0, n);
            Compute(off1, off2, n);
            CopyOut(row * t_.cols + c0, n);
        }
    }

private:
    __aicore__ inline void Fetch(AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM>& q,
                                 const AscendC::GlobalTensor<T>& gm, uint64_t off, uint32_t n)
    {
        AscendC::LocalTensor<T> t = q.template AllocTensor<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(t, gm[off], n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            AscendC::DataCopyPad(t, gm[off], cp, pad);
        }
        q.EnQue(t);
    }
    __aicore__ inline void CopyIn(uint64_t off1, uint64_t off2, uint64_t c0, uint32_t n)
    {
        if (!t_.scalar1) Fetch(inQ1_, x1Gm_, off1 + c0, n);
        if (!t_.scalar2) Fetch(inQ2_, x2Gm_, off2 + c0, n);
    }
    __aicore__ inline void Compute(uint64_t off1, uint64_t off2, uint32_t n)
    {
        AscendC::LocalTensor<T> y = outQ_.AllocTensor<T>();
        if (t_.scalar1 && t_.scalar2) {
            float s = (float)x1Gm_.GetValue(off1) + (float)x2Gm_.GetValue(off2);
            AscendC::Duplicate(y, (T)s, n);
        } else if (t_.scalar1 || t_.scalar2) {
            auto& q = t_.scalar1 ? inQ2_ : inQ1_;
            T s = t_.scalar1 ? x1Gm_.GetValue(off1) : x2Gm_.GetValue(off2);
            AscendC::LocalTensor<T> a = q.template DeQue<T>();
            if constexpr (kWiden) {
                AscendC::LocalTensor<float> fa = f1_.Get<float>();
                AscendC::Cast(fa, a, AscendC::RoundMode::CAST_NONE, n);
                AscendC::Adds(fa, fa, (float)s, n);
                AscendC::Cast(y, fa, AscendC::RoundMode::CAST_RINT, n);
            } else {
                AscendC::Adds(y, a, s, n);
            }
            q.FreeTensor(a);
        } else {
            AscendC::LocalTensor<T> a = inQ1_.DeQue<T>();
            AscendC::LocalTensor<T> b = inQ2_.DeQue<T>();
            if constexpr (kWiden) {
                AscendC::LocalTensor<float> fa = f1_.Get<float>();
                AscendC::LocalTensor<float> fb = f2_.Get<float>();
                AscendC::Cast(fa, a, AscendC::RoundMode::CAST_NONE, n);
                AscendC::Cast(fb, b, AscendC::RoundMode::CAST_NONE, n);
                AscendC::Add(fa, fa, fb, n);
                AscendC::Cast(y, fa, AscendC::RoundMode::CAST_RINT, n);
            } else {
                AscendC::Add(y, a, b, n);
            }
            inQ1_.FreeTensor(a);
            inQ2_.FreeTensor(b);
        }
        outQ_.EnQue(y);
    }
    __aicore__ inline void CopyOut(uint64_t off, uint32_t n)
    {
        AscendC::LocalTensor<T> y = outQ_.DeQue<T>();
        if ((n * sizeof(T)) % 32 == 0) {
            AscendC::DataCopy(yGm_[off], y, n);
        } else {
            AscendC::DataCopyExtParams cp{1, (uint32_t)(n * sizeof(T)), 0, 0, 0};
            AscendC::DataCopyPad(yGm_[off], y, cp);
        }
        outQ_.FreeTensor(y);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQ1_, inQ2_;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQ_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> f1_, f2_;
    AscendC::GlobalTensor<T> x1Gm_, x2Gm_, yGm_;
    AddTiling t_;
    uint64_t first_ = 0, count_ = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace,
                                                 GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(AddTiling);
    GET_TILING_DATA(t, tiling);
    KernelAdd<DTYPE_X1> op;
    op.Init(x1, x2, y, t);
    op.Process();
}

namespace optiling {
// Element strides of `in` (right-aligned to the output rank) per output dim; 0 where broadcast.
static void BroadcastStrides(const gert::Shape& in, const gert::Shape& out, uint64_t* strides)
{
    int64_t rank = (int64_t)out.GetDimNum();
    int64_t inRank = (int64_t)in.GetDimNum();
    uint64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
        int64_t k = d - (rank - inRank);
        int64_t size = k >= 0 ? in.GetDim(k) : 1;
        strides[d] = (size == 1 && out.GetDim(d) != 1) ? 0 : stride;
        stride *= (uint64_t)size;
    }
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<AddTiling>();
    const gert::Shape& out = context->GetOutputShape(0)->GetStorageShape();
    const gert::Shape& s1 = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& s2 = context->GetInputShape(1)->GetStorageShape();
    uint32_t rank = (uint32_t)out.GetDimNum();
    if (rank > MAX_RANK) return ge::GRAPH_FAILED;
    uint64_t total = out.GetShapeSize();
    bool same = s1 == out && s2 == out;
    if (rank == 0 || same) {
        // No broadcast: one flat row.
        t->rank = 1;
        t->outDims[0] = total;
        t->stride1[0] = t->stride2[0] = 1;
        t->rows = 1;
        t->cols = total;
        t->scalar1 = t->scalar2 = 0;
    } else {
        t->rank = rank;
        for (uint32_t d = 0; d < rank; ++d) t->outDims[d] = out.GetDim(d);
        BroadcastStrides(s1, out, t->stride1);
        BroadcastStrides(s2, out, t->stride2);
        t->cols = out.GetDim(rank - 1);
        t->rows = t->cols == 0 ? 0 : total / t->cols;
        t->scalar1 = t->stride1[rank - 1] == 0;
        t->scalar2 = t->stride2[rank - 1] == 0;
    }
    t->tileLength = 4096;
    t->units = t->rows * ((t->cols + t->tileLength - 1) / t->tileLength);
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t cores = platform.GetCoreNumAiv();
    if (t->units < cores) cores = t->units == 0 ? 1 : t->units;
    t->unitsPerCore = (uint32_t)(t->units / cores);
    t->formerNum = (uint32_t)(t->units % cores);
    context->SetBlockDim((uint32_t)cores);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
