// Reads an optional ListInt attr (slot 0, None in a case) and a bool attr after it (slot 1):
// y = x + len(size) + (flag ? 10 : 0), one core, scalar GM accesses (a test of attr slots only).
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct NoneListAttrTiling {
    uint32_t total;
    float add;
};

extern "C" __global__ __aicore__ void none_list_attr_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(NoneListAttrTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, t.total);
    yGm.SetGlobalBuffer((__gm__ float*)y, t.total);
    for (uint32_t i = 0; i < t.total; ++i) yGm.SetValue(i, xGm.GetValue(i) + t.add);
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<NoneListAttrTiling>();
    t->total = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const gert::TypedContinuousVector<int64_t>* size = context->GetAttrs()->GetListInt(0);
    const bool* flag = context->GetAttrs()->GetBool(1);
    t->add = (size ? (float)size->GetSize() : 0.0f) + (flag && *flag ? 10.0f : 0.0f);
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ops {
class NoneListAttrCustom : public OpDef {
public:
    explicit NoneListAttrCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("size").AttrType(OPTIONAL).ListInt();
        this->Attr("flag").AttrType(OPTIONAL).Bool(false);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(NoneListAttrCustom);
}  // namespace ops
