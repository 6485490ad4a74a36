// Lesson 12 reference: RMS norm of x [R, 1024] with rows split over every vector core.
#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

struct LessonTilingData {
    uint32_t rows;          // R
    uint32_t cols;          // D = 1024
    uint32_t rowsPerCore;   // rounded up: the last core takes what is left
    uint32_t rowsPerTile;
    float epsilon;
    float invD;             // 1 / D
};
REGISTER_TILING_DEFAULT(LessonTilingData);

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;

class KernelRmsNormLesson {
public:
    __aicore__ inline KernelRmsNormLesson() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, const LessonTilingData& t)
    {
        cols_ = t.cols;
        rpt_ = t.rowsPerTile;
        eps_ = t.epsilon;
        invD_ = t.invD;
        const uint32_t first = GetBlockIdx() * t.rowsPerCore;
        rows_ = first >= t.rows ? 0 : (first + t.rowsPerCore > t.rows ? t.rows - first : t.rowsPerCore);
        if (rows_ == 0) {
            return;
        }
        xGm_.SetGlobalBuffer((__gm__ float*)x + first * cols_, rows_ * cols_);
        yGm_.SetGlobalBuffer((__gm__ float*)y + first * cols_, rows_ * cols_);
        gammaGm_.SetGlobalBuffer((__gm__ float*)gamma, cols_);
        pipe_.InitBuffer(inQ_, BUFFER_NUM, rpt_ * cols_ * sizeof(float));
        pipe_.InitBuffer(outQ_, BUFFER_NUM, rpt_ * cols_ * sizeof(float));
        pipe_.InitBuffer(gammaQ_, 1, cols_ * sizeof(float));
        pipe_.InitBuffer(sq_, cols_ * sizeof(float));
        pipe_.InitBuffer(tmp_, cols_ * sizeof(float));
        pipe_.InitBuffer(sum_, 32);
    }

    __aicore__ inline void Process()
    {
        if (rows_ == 0) {
            return;
        }
        LocalTensor<float> g = gammaQ_.AllocTensor<float>();
        DataCopy(g, gammaGm_, cols_);
        gammaQ_.EnQue(g);
        g = gammaQ_.DeQue<float>();
        for (uint32_t r = 0; r < rows_; r += rpt_) {
            const uint32_t m = (r + rpt_ <= rows_) ? rpt_ : rows_ - r;
            CopyIn(r, m);
            Compute(m, g);
            CopyOut(r, m);
        }
        gammaQ_.FreeTensor(g);
    }

private:
    __aicore__ inline void CopyIn(uint32_t r, uint32_t m)
    {
        LocalTensor<float> x = inQ_.AllocTensor<float>();
        DataCopy(x, xGm_[r * cols_], m * cols_);
        inQ_.EnQue(x);
    }

    __aicore__ inline void Compute(uint32_t m, LocalTensor<float>& g)
    {
        LocalTensor<float> x = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        LocalTensor<float> sq = sq_.Get<float>();
        LocalTensor<float> tmp = tmp_.Get<float>();
        LocalTensor<float> sum = sum_.Get<float>();
        const int32_t n = static_cast<int32_t>(cols_);
        for (uint32_t j = 0; j < m; ++j) {
            LocalTensor<float> row = x[j * cols_];
            LocalTensor<float> out = y[j * cols_];
            Mul(sq, row, row, n);
            ReduceSum(sum, sq, tmp, n);
            Muls(sum, sum, invD_, 1);
            Adds(sum, sum, eps_, 1);
            Sqrt(sum, sum, 1);
            event_t e = static_cast<event_t>(pipe_.FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(e);
            WaitFlag<HardEvent::V_S>(e);
            const float inv = 1.0f / sum.GetValue(0);
            Muls(out, row, inv, n);
            Mul(out, out, g, n);
        }
        outQ_.EnQue(y);
        inQ_.FreeTensor(x);
    }

    __aicore__ inline void CopyOut(uint32_t r, uint32_t m)
    {
        LocalTensor<float> y = outQ_.DeQue<float>();
        DataCopy(yGm_[r * cols_], y, m * cols_);
        outQ_.FreeTensor(y);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, BUFFER_NUM> inQ_;
    TQue<TPosition::VECOUT, BUFFER_NUM> outQ_;
    TQue<TPosition::VECIN, 1> gammaQ_;
    TBuf<TPosition::VECCALC> sq_;
    TBuf<TPosition::VECCALC> tmp_;
    TBuf<TPosition::VECCALC> sum_;
    GlobalTensor<float> xGm_;
    GlobalTensor<float> gammaGm_;
    GlobalTensor<float> yGm_;
    uint32_t rows_ = 0;
    uint32_t cols_ = 0;
    uint32_t rpt_ = 0;
    float eps_ = 0.0f;
    float invD_ = 0.0f;
};

extern "C" __global__ __aicore__ void lesson_rms_norm_custom(GM_ADDR x, GM_ADDR gamma, GM_ADDR y, GM_ADDR workspace,
                                                             GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelRmsNormLesson op;
    op.Init(x, gamma, y, t);
    op.Process();
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const uint32_t rows = static_cast<uint32_t>(shape.GetDim(0));
    const uint32_t cols = static_cast<uint32_t>(shape.GetDim(1));
    const float* eps = context->GetAttrs()->GetAttrPointer<float>(0);
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t blockDim = plat.GetCoreNumAiv();   // every vector core takes a share of the rows
    if (blockDim > rows) {
        blockDim = rows;
    }
    if (blockDim == 0) {
        blockDim = 1;
    }
    LessonTilingData* t = context->GetTilingData<LessonTilingData>();
    t->rows = rows;
    t->cols = cols;
    t->rowsPerCore = (rows + blockDim - 1) / blockDim;
    t->rowsPerTile = 2;
    t->epsilon = eps != nullptr ? *eps : 1e-6f;
    t->invD = 1.0f / static_cast<float>(cols);
    context->SetBlockDim(blockDim);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
// The operator definition, from the lesson task's proto.
class LessonRmsNormCustom : public OpDef {
public:
    explicit LessonRmsNormCustom(const char* name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Input("gamma")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT})
            .Format({ge::FORMAT_ND})
            .UnknownShapeFormat({ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-06);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};
OP_ADD(LessonRmsNormCustom);
}  // namespace ops
