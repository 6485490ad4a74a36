// Clean-room stand-in for the msopgen operator definition API. Every call is accepted and ignored:
// the sim backend takes inputs, outputs, dtypes and attrs from the task, not from the OpDef.
#ifndef CANNSIM_OP_DEF_REGISTRY_H
#define CANNSIM_OP_DEF_REGISTRY_H

#include <cstdint>
#include <string>
#include <vector>
#include "cannsim/host.h"
#include "cannsim/tiling.h"
#include "register/tilingdata_base.h"
// The high-level APIs' host helpers (also reachable as tiling/tiling_api.h, the CANN header).
#include "cannsim/hl_host.h"

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class DependScope { ALL = 0, TILING = 1 };
enum class FollowType { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3 };
enum class InitValueType { INIT_VALUE_UINT64_T = 0, INIT_VALUE_DEFAULT = 1 };
struct ScalarVar {
    ScalarVar() = default;
    template <typename T> ScalarVar(T) {}
};

class OpParamDef {
public:
    OpParamDef& ParamType(Option) { return *this; }
    OpParamDef& DataType(std::vector<ge::DataType>) { return *this; }
    OpParamDef& DataTypeList(std::vector<ge::DataType>) { return *this; }
    OpParamDef& DataTypeForBinQuery(std::vector<ge::DataType>) { return *this; }
    OpParamDef& Format(std::vector<ge::Format>) { return *this; }
    OpParamDef& FormatList(std::vector<ge::Format>) { return *this; }
    OpParamDef& FormatForBinQuery(std::vector<ge::Format>) { return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
    OpParamDef& ValueDepend(Option) { return *this; }
    OpParamDef& ValueDepend(Option, DependScope) { return *this; }
    OpParamDef& IgnoreContiguous() { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    OpParamDef& Scalar() { return *this; }
    OpParamDef& ScalarList() { return *this; }
    OpParamDef& To(ge::DataType) { return *this; }
    OpParamDef& To(const char*) { return *this; }
    OpParamDef& Version(uint32_t) { return *this; }
    OpParamDef& InitValue(uint64_t) { return *this; }
    OpParamDef& InitValue(const ScalarVar&) { return *this; }
    OpParamDef& OutputShapeDependOnCompute() { return *this; }
    OpParamDef& Follow(const char*) { return *this; }
    OpParamDef& Follow(const char*, FollowType) { return *this; }
    OpParamDef& Comment(const char*) { return *this; }
};

class OpAttrDef {
public:
    OpAttrDef& AttrType(Option) { return *this; }
    OpAttrDef& Bool() { return *this; }
    OpAttrDef& Bool(bool) { return *this; }
    OpAttrDef& Float() { return *this; }
    OpAttrDef& Float(float) { return *this; }
    OpAttrDef& Int() { return *this; }
    OpAttrDef& Int(int64_t) { return *this; }
    OpAttrDef& String() { return *this; }
    OpAttrDef& String(const char*) { return *this; }
    OpAttrDef& ListBool() { return *this; }
    OpAttrDef& ListBool(std::vector<bool>) { return *this; }
    OpAttrDef& ListFloat() { return *this; }
    OpAttrDef& ListFloat(std::vector<float>) { return *this; }
    OpAttrDef& ListInt() { return *this; }
    OpAttrDef& ListInt(std::vector<int64_t>) { return *this; }
    OpAttrDef& ListListInt() { return *this; }
    OpAttrDef& ListListInt(std::vector<std::vector<int64_t>>) { return *this; }
    OpAttrDef& Version(uint32_t) { return *this; }
    OpAttrDef& Comment(const char*) { return *this; }
};

class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char*) {}
    OpParamDef& Input(const char*) { return param_; }
    OpParamDef& Output(const char*) { return param_; }
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
private:
    OpParamDef param_;
};

class OpAICoreDef {
public:
    template <typename F> OpAICoreDef& SetTiling(F) { return *this; }
    template <typename F> OpAICoreDef& SetTilingParse(F) { return *this; }
    template <typename F> OpAICoreDef& SetCheckSupport(F) { return *this; }
    template <typename F> OpAICoreDef& SetOpSelectFormat(F) { return *this; }
    OpAICoreDef& AddConfig(const char*) { return *this; }
    OpAICoreDef& AddConfig(const char*, OpAICoreConfig&) { return *this; }
    OpAICoreDef& AddConfig(const char*, OpAICoreConfig&&) { return *this; }
};

class OpMC2Def {
public:
    OpMC2Def& HcclGroup(const char*) { return *this; }
    OpMC2Def& HcclGroup(std::vector<const char*>) { return *this; }
};

class OpDef {
public:
    explicit OpDef(const char*) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char*) { return param_; }
    OpParamDef& Output(const char*) { return param_; }
    OpAttrDef& Attr(const char*) { return attr_; }
    template <typename F> OpDef& SetInferShape(F) { return *this; }
    template <typename F> OpDef& SetInferShapeRange(F) { return *this; }
    template <typename F> OpDef& SetInferDataType(F) { return *this; }
    OpAICoreDef& AICore() { return aicore_; }
    OpMC2Def& MC2() { return mc2_; }
    OpDef& Comment(const char*) { return *this; }
private:
    OpParamDef param_;
    OpAttrDef attr_;
    OpAICoreDef aicore_;
    OpMC2Def mc2_;
};

}  // namespace ops

// Registers an OpDef class with the graph engine; a no-op here.
#define OP_ADD(opType, ...) [[maybe_unused]] static const int cannsim_op_add_##opType = 0

#endif  // CANNSIM_OP_DEF_REGISTRY_H
