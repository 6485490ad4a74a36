// Add with numpy-style broadcasting: the broadcast exemplar of the Cannpilot knowledge base,
// written for Cannpilot from documented AscendC behaviour. The host collapses the broadcast
// pattern to at most 8 dims (adjacent dims merged when both operands are full or broadcast alike),
// so most cases become [rows, cols] with each operand either running along the columns or
// constant along them. A work unit is a chunk of one output row; an operand constant along the
// row is read once (GetValue on GM) and spread with Duplicate; the others arrive by DataCopyPad. An
// operand that is the same row for every output row (a bias of shape [D]) is loaded once per core
// into a TBuf and kept there.
// fp16/bf16 are added in float (no bf16 arithmetic on 910B) and rounded back with CAST_RINT.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

constexpr uint32_t MAX_LEAD = 7;

struct AddTiling {
    uint32_t lead;               // leading (row) dims after collapsing, 0..7
    uint32_t leadDims[MAX_LEAD];
    uint32_t stride1[MAX_LEAD];  // element strides of x1 / x2 in those dims (0 = broadcast)
    uint32_t stride2[MAX_LEAD];
    uint32_t cols;               // last collapsed dim of the output
    uint32_t col1;               // 1 when x1 runs along the columns, 0 when constant along them
    uint32_t col2;
    uint32_t chunk;              // columns per work unit
    uint32_t chunks;
    uint32_t units;              // rows x chunks
    uint32_t formerNum;          // the first formerNum cores take formerUnits units, the rest tailUnits
    uint32_t formerUnits;
    uint32_t tailUnits;
    uint32_t keep1;              // 1: x1 is one row shared by all output rows, loaded once per core
    uint32_t keep2;
};
REGISTER_TILING_DEFAULT(AddTiling);

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };

template <typename T>
class KernelAdd {
public:
    static constexpr bool IS_FLOAT = SameType<T, float>::value;

    __aicore__ inline KernelAdd() {}

    __aicore__ inline void Init(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, const AddTiling& t)
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
        x1Gm_.SetGlobalBuffer((__gm__ T*)x1);
        x2Gm_.SetGlobalBuffer((__gm__ T*)x2);
        yGm_.SetGlobalBuffer((__gm__ T*)y);
        if (!t.keep1) {
            pipe_.InitBuffer(in1Q_, BUFFER_NUM, t.chunk * sizeof(T));
        }
        if (!t.keep2) {
            pipe_.InitBuffer(in2Q_, BUFFER_NUM, t.chunk * sizeof(T));
        }
        pipe_.InitBuffer(outQ_, BUFFER_NUM, t.chunk * sizeof(T));
        if constexpr (!IS_FLOAT) {
            pipe_.InitBuffer(f1Buf_, t.chunk * sizeof(float));
            pipe_.InitBuffer(f2Buf_, t.chunk * sizeof(float));
        }
        if (t.keep1 || t.keep2) {
            pipe_.InitBuffer(keepBuf_, t.chunk * sizeof(float));
            LoadKept(t.keep1 ? x1Gm_ : x2Gm_);
        }
    }

    __aicore__ inline void Process()
    {
        for (uint32_t u = first_; u < first_ + count_; ++u) {
            const uint32_t row = u / t_.chunks;
            const uint32_t col = (u % t_.chunks) * t_.chunk;
            const uint32_t n = (t_.cols - col < t_.chunk) ? t_.cols - col : t_.chunk;
            uint64_t off1 = 0, off2 = 0;
            RowOffsets(row, off1, off2);
            if (!t_.keep1) {
                CopyIn(in1Q_, x1Gm_, off1 + (t_.col1 ? col : 0), t_.col1 != 0, n);
            }
            if (!t_.keep2) {
                CopyIn(in2Q_, x2Gm_, off2 + (t_.col2 ? col : 0), t_.col2 != 0, n);
            }
            Compute(n);
            CopyOut(static_cast<uint64_t>(row) * t_.cols + col, n);
        }
    }

private:
    // The shared row, as float, in a TBuf for the whole kernel. A TBuf filled by MTE2 and read by V
    // gets no queue synchronisation: the MTE2 -> V flag orders them.
    __aicore__ inline void LoadKept(GlobalTensor<T>& gm)
    {
        LocalTensor<float> keep = keepBuf_.Get<float>();
        LocalTensor<T> raw = IS_FLOAT ? keep.template ReinterpretCast<T>()
                                      : f1Buf_.Get<float>().template ReinterpretCast<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(t_.cols * sizeof(T)), 0, 0, 0};
        DataCopyPadExtParams<T> pad{false, 0, 0, 0};
        DataCopyPad(raw, gm, cp, pad);
        event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::MTE2_V));
        SetFlag<HardEvent::MTE2_V>(e);
        WaitFlag<HardEvent::MTE2_V>(e);
        if constexpr (!IS_FLOAT) {
            Cast(keep, raw, RoundMode::CAST_NONE, t_.cols);
        }
    }

    // Offsets of the first element of output row `row` in x1 and x2 (row-major over lead dims).
    __aicore__ inline void RowOffsets(uint32_t row, uint64_t& off1, uint64_t& off2)
    {
        uint32_t rest = row;
        for (int32_t k = static_cast<int32_t>(t_.lead) - 1; k >= 0; --k) {
            const uint32_t i = rest % t_.leadDims[k];
            rest /= t_.leadDims[k];
            off1 += static_cast<uint64_t>(i) * t_.stride1[k];
            off2 += static_cast<uint64_t>(i) * t_.stride2[k];
        }
    }

    __aicore__ inline void CopyIn(TQue<TPosition::VECIN, 1>& q, GlobalTensor<T>& gm, uint64_t off, bool alongRow,
                                  uint32_t n)
    {
        LocalTensor<T> x = q.AllocTensor<T>();
        if (alongRow) {
            DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
            DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, gm[off], cp, pad);
        } else {   // constant along the row: one scalar read, spread by the vector unit
            const T v = gm.GetValue(off);
            Duplicate(x, v, static_cast<int32_t>(n));
        }
        q.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t n)
    {
        LocalTensor<float> keep;
        if (t_.keep1 || t_.keep2) {
            keep = keepBuf_.Get<float>();
        }
        LocalTensor<T> a, b;
        if (!t_.keep1) {
            a = in1Q_.DeQue<T>();
        }
        if (!t_.keep2) {
            b = in2Q_.DeQue<T>();
        }
        LocalTensor<T> y = outQ_.AllocTensor<T>();
        const int32_t cnt = static_cast<int32_t>(n);
        if constexpr (IS_FLOAT) {
            Add(y, t_.keep1 ? keep : a, t_.keep2 ? keep : b, cnt);
        } else {
            LocalTensor<float> fa = f1Buf_.Get<float>();
            LocalTensor<float> fb = f2Buf_.Get<float>();
            if (!t_.keep1) {
                Cast(fa, a, RoundMode::CAST_NONE, n);
            }
            if (!t_.keep2) {
                Cast(fb, b, RoundMode::CAST_NONE, n);
            }
            Add(fa, t_.keep1 ? keep : fa, t_.keep2 ? keep : fb, cnt);
            Cast(y, fa, RoundMode::CAST_RINT, n);
        }
        outQ_.EnQue(y);
        if (!t_.keep1) {
            in1Q_.FreeTensor(a);
        }
        if (!t_.keep2) {
            in2Q_.FreeTensor(b);
        }
    }

    __aicore__ inline void CopyOut(uint64_t off, uint32_t n)
    {
        LocalTensor<T> y = outQ_.DeQue<T>();
        DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0};
        DataCopyPad(yGm_[off], y, cp);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, 1> in1Q_, in2Q_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> f1Buf_, f2Buf_, keepBuf_;
    GlobalTensor<T> x1Gm_, x2Gm_, yGm_;
    AddTiling t_;
    uint32_t first_ = 0, count_ = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelAdd<DTYPE_X1> op;
    op.Init(x1, x2, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& s1 = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& s2 = context->GetInputShape(1)->GetStorageShape();
    const int64_t n1 = static_cast<int64_t>(s1.GetDimNum());
    const int64_t n2 = static_cast<int64_t>(s2.GetDimNum());
    const int64_t nd = n1 > n2 ? n1 : n2;

    // Collapse the broadcast pattern: dims[] of the output, with per-operand "broadcast" flags.
    uint64_t dims[16];
    bool b1[16], b2[16];
    int64_t m = 0;
    for (int64_t i = 0; i < nd; ++i) {
        const int64_t a = i - (nd - n1) >= 0 ? s1.GetDim(i - (nd - n1)) : 1;
        const int64_t b = i - (nd - n2) >= 0 ? s2.GetDim(i - (nd - n2)) : 1;
        if (a != b && a != 1 && b != 1) {
            return ge::GRAPH_FAILED;   // shapes do not broadcast
        }
        const int64_t o = a > b ? a : b;
        if (o == 1) {
            continue;
        }
        const bool f1 = a == 1, f2 = b == 1;
        if (m > 0 && b1[m - 1] == f1 && b2[m - 1] == f2) {
            dims[m - 1] *= static_cast<uint64_t>(o);
        } else {
            if (m == 16) {
                return ge::GRAPH_FAILED;
            }
            dims[m] = static_cast<uint64_t>(o);
            b1[m] = f1;
            b2[m] = f2;
            ++m;
        }
    }
    if (m == 0) {
        dims[0] = 1;
        b1[0] = b2[0] = false;
        m = 1;
    }
    if (m - 1 > static_cast<int64_t>(MAX_LEAD)) {
        return ge::GRAPH_FAILED;
    }

    AddTiling* t = context->GetTilingData<AddTiling>();
    // Strides of each operand over the collapsed dims (its own extent is 1 where it broadcasts).
    uint64_t st1 = 1, st2 = 1;
    t->cols = static_cast<uint32_t>(dims[m - 1]);
    t->col1 = b1[m - 1] ? 0 : 1;
    t->col2 = b2[m - 1] ? 0 : 1;
    st1 *= b1[m - 1] ? 1 : dims[m - 1];
    st2 *= b2[m - 1] ? 1 : dims[m - 1];
    t->lead = static_cast<uint32_t>(m - 1);
    uint64_t rows = 1;
    for (int64_t k = m - 2; k >= 0; --k) {
        t->leadDims[k] = static_cast<uint32_t>(dims[k]);
        t->stride1[k] = b1[k] ? 0 : static_cast<uint32_t>(st1);
        t->stride2[k] = b2[k] ? 0 : static_cast<uint32_t>(st2);
        st1 *= b1[k] ? 1 : dims[k];
        st2 *= b2[k] ? 1 : dims[k];
        rows *= dims[k];
    }

    const uint64_t bytes = context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const uint64_t coreNum = plat.GetCoreNumAiv();
    // Per column of a chunk: three double-buffered queues of T, two float scratch rows for 16-bit,
    // and the float copy of a shared row.
    const uint64_t perElem = 3 * BUFFER_NUM * bytes + (bytes == 4 ? 0 : 8) + 4;
    uint64_t chunk = (ub - 1024) / perElem / 64 * 64;
    chunk = chunk > 16384 ? 16384 : chunk;
    const uint64_t cols = dims[m - 1];
    if (rows < coreNum) {   // few rows: cut them into chunks so every core gets work
        const uint64_t spread = ((rows * cols + coreNum - 1) / coreNum + 63) / 64 * 64;
        chunk = spread < chunk ? spread : chunk;
    }
    if (chunk > cols) {
        chunk = (cols + 15) / 16 * 16;
    }
    const uint64_t chunks = (cols + chunk - 1) / chunk;
    const uint64_t units = rows * chunks;
    uint64_t blockDim = units < coreNum ? units : coreNum;
    blockDim = blockDim == 0 ? 1 : blockDim;
    t->chunk = static_cast<uint32_t>(chunk);
    t->chunks = static_cast<uint32_t>(chunks);
    t->units = static_cast<uint32_t>(units);
    t->formerNum = static_cast<uint32_t>(units % blockDim);
    t->formerUnits = static_cast<uint32_t>(units / blockDim + 1);
    t->tailUnits = static_cast<uint32_t>(units / blockDim);
    // An operand running along the row with stride 0 in every lead dim is the same row for all
    // output rows: keep it in UB when it fits in one chunk.
    bool same1 = t->col1 == 1, same2 = t->col2 == 1;
    for (int64_t k = 0; k < m - 1; ++k) {
        same1 = same1 && t->stride1[k] == 0;
        same2 = same2 && t->stride2[k] == 0;
    }
    t->keep1 = (same1 && chunks == 1 && rows > 1) ? 1 : 0;
    t->keep2 = (same2 && chunks == 1 && rows > 1 && !t->keep1) ? 1 : 0;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the task's proto (add).
class AddCustom : public OpDef {
public:
    explicit AddCustom(const char* name) : OpDef(name)
    {
        this->Input("x1")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("x2")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(AddCustom);
}  // namespace ops
