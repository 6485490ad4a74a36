// Clean-room host tiling API for the sim backend: the subset of ge / gert / fe that a candidate's
// TilingFunc uses. Names follow the public CANN documentation; the implementation is ours.
// The harness fills a gert::TilingContext from the case description before calling TilingFunc.
#ifndef CANNSIM_HOST_H
#define CANNSIM_HOST_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace ge {

using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649;

enum DataType : int {
    DT_FLOAT = 0,
    DT_FLOAT16 = 1,
    DT_INT8 = 2,
    DT_INT32 = 3,
    DT_UINT8 = 4,
    DT_INT16 = 6,
    DT_UINT16 = 7,
    DT_UINT32 = 8,
    DT_INT64 = 9,
    DT_UINT64 = 10,
    DT_DOUBLE = 11,
    DT_BOOL = 12,
    DT_BF16 = 27,
    DT_UNDEFINED = 28,
    DT_MAX = 29,
};

enum Format : int {
    FORMAT_NCHW = 0,
    FORMAT_NHWC = 1,
    FORMAT_ND = 2,
    FORMAT_NC1HWC0 = 3,
    FORMAT_FRACTAL_Z = 4,
    FORMAT_FRACTAL_NZ = 29,
    FORMAT_NCDHW = 30,
    FORMAT_NDHWC = 27,
    FORMAT_RESERVED = 40,
};

inline int GetSizeByDataType(DataType dt) {
    switch (dt) {
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: return 8;
        default: return -1;
    }
}

}  // namespace ge

namespace fe {
// Opaque in CANN; here it carries the chip numbers the harness configured.
class PlatFormInfos {
public:
    char soc_version[32] = "Ascend910B2";
    char short_soc_version[32] = "Ascend910B";
    uint32_t arch = 2201;
    uint32_t core_num_aiv = 48;
    uint32_t core_num_aic = 24;
    uint64_t ub_bytes = 196352;
    uint64_t l1_bytes = 524032;
    uint64_t l0a_bytes = 65536, l0b_bytes = 65536, l0c_bytes = 131072;
    uint64_t l2_bytes = 0, hbm_bytes = 0;
};
}  // namespace fe

namespace gert {

class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) {
        for (int64_t d : dims) AppendDim(d);
    }
    size_t GetDimNum() const { return dim_num_; }
    int64_t GetDim(size_t i) const { return i < dim_num_ ? dims_[i] : 0; }
    int64_t operator[](size_t i) const { return GetDim(i); }
    int64_t& operator[](size_t i) { return dims_[i]; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (size_t i = 0; i < dim_num_; ++i) n *= dims_[i];
        return n;
    }
    bool IsScalar() const { return dim_num_ == 0; }
    Shape& SetDimNum(size_t n) { dim_num_ = n < kMaxDimNum ? n : kMaxDimNum; return *this; }
    Shape& SetDim(size_t i, int64_t v) { if (i < kMaxDimNum) dims_[i] = v; return *this; }
    Shape& AppendDim(int64_t v) { if (dim_num_ < kMaxDimNum) dims_[dim_num_++] = v; return *this; }
    void SetScalar() { dim_num_ = 0; }
    bool operator==(const Shape& o) const {
        if (dim_num_ != o.dim_num_) return false;
        for (size_t i = 0; i < dim_num_; ++i) if (dims_[i] != o.dims_[i]) return false;
        return true;
    }
    bool operator!=(const Shape& o) const { return !(*this == o); }
private:
    size_t dim_num_ = 0;
    int64_t dims_[kMaxDimNum] = {};
};

class StorageShape {
public:
    StorageShape() = default;
    StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
        : origin_(origin), storage_(storage) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }
    Shape& MutableOriginShape() { return origin_; }
    Shape& MutableStorageShape() { return storage_; }
private:
    Shape origin_;
    Shape storage_;
};

class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetOriginFormat() const { return ge::FORMAT_ND; }
    ge::Format GetStorageFormat() const { return ge::FORMAT_ND; }
    void SetDataType(ge::DataType d) { dtype_ = d; }
private:
    ge::DataType dtype_ = ge::DT_FLOAT;
};

template <typename T>
class TypedContinuousVector {
public:
    size_t GetSize() const { return size_; }
    const T* GetData() const { return data_; }
    size_t GetCapacity() const { return size_; }
    T* MutableData() { return data_; }
    void Set(T* data, size_t n) { data_ = data; size_ = n; }
private:
    T* data_ = nullptr;
    size_t size_ = 0;
};
using ContinuousVector = TypedContinuousVector<int64_t>;

// Attributes in proto order. Each slot holds one attr's bytes; strings are NUL-terminated.
class RuntimeAttrs {
public:
    static constexpr size_t kMaxAttrs = 32;
    template <typename T>
    const T* GetAttrPointer(size_t index) const {
        if (index >= num_) return nullptr;
        return reinterpret_cast<const T*>(slots_[index].data());
    }
    const int64_t* GetInt(size_t i) const { return kind_is(i, 'i') ? GetAttrPointer<int64_t>(i) : nullptr; }
    const float* GetFloat(size_t i) const { return kind_is(i, 'f') ? GetAttrPointer<float>(i) : nullptr; }
    const bool* GetBool(size_t i) const { return kind_is(i, 'b') ? GetAttrPointer<bool>(i) : nullptr; }
    const char* GetStr(size_t i) const { return kind_is(i, 's') ? GetAttrPointer<char>(i) : nullptr; }
    const TypedContinuousVector<int64_t>* GetListInt(size_t i) const {
        return kind_is(i, 'I') ? &list_int_[i] : nullptr;
    }
    const TypedContinuousVector<float>* GetListFloat(size_t i) const {
        return kind_is(i, 'F') ? &list_float_[i] : nullptr;
    }
    size_t GetAttrNum() const { return num_; }

    // Harness side.
    void cannsim_add(char kind, const void* bytes, size_t n) {
        if (num_ >= kMaxAttrs) return;
        kinds_[num_] = kind;
        slots_[num_].assign(static_cast<const char*>(bytes), static_cast<const char*>(bytes) + n);
        slots_[num_].resize(n + 8, 0);  // room for a terminator and aligned reads
        if (kind == 'I') list_int_[num_].Set(reinterpret_cast<int64_t*>(slots_[num_].data()), n / 8);
        if (kind == 'F') list_float_[num_].Set(reinterpret_cast<float*>(slots_[num_].data()), n / 4);
        ++num_;
    }
private:
    bool kind_is(size_t i, char k) const { return i < num_ && kinds_[i] == k; }
    size_t num_ = 0;
    char kinds_[kMaxAttrs] = {};
    std::vector<char> slots_[kMaxAttrs];
    TypedContinuousVector<int64_t> list_int_[kMaxAttrs];
    TypedContinuousVector<float> list_float_[kMaxAttrs];
};

class TilingData {
public:
    void* GetData() { return data_; }
    size_t GetCapacity() const { return capacity_; }
    size_t GetDataSize() const { return size_; }
    void SetDataSize(size_t n) { size_ = n; }
    // Harness side.
    void cannsim_bind(void* data, size_t capacity) { data_ = data; capacity_ = capacity; size_ = 0; }
private:
    void* data_ = nullptr;
    size_t capacity_ = 0;
    size_t size_ = 0;
};

class Tensor {
public:
    const StorageShape& GetShape() const { return shape_; }
    const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
    const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype_; }
    template <typename T> const T* GetData() const { return static_cast<const T*>(data_); }
    StorageShape shape_;
    ge::DataType dtype_ = ge::DT_FLOAT;
    const void* data_ = nullptr;
};

class TilingContext {
public:
    static constexpr size_t kMaxIo = 32;
    static constexpr size_t kMaxWorkspaces = 16;

    const StorageShape* GetInputShape(size_t i) const { return i < num_inputs_ ? &in_shapes_[i] : nullptr; }
    // An omitted optional input: no shape, desc or tensor (CANN returns nullptr for it).
    const StorageShape* GetOptionalInputShape(size_t i) const { return i < num_inputs_ && in_absent_[i] ? nullptr : GetInputShape(i); }
    const StorageShape* GetOutputShape(size_t i) const { return i < num_outputs_ ? &out_shapes_[i] : nullptr; }
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const { return i < num_inputs_ ? &in_desc_[i] : nullptr; }
    const CompileTimeTensorDesc* GetOptionalInputDesc(size_t i) const { return i < num_inputs_ && in_absent_[i] ? nullptr : GetInputDesc(i); }
    const CompileTimeTensorDesc* GetOutputDesc(size_t i) const { return i < num_outputs_ ? &out_desc_[i] : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return i < num_inputs_ ? &in_tensor_[i] : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return i < num_inputs_ && in_absent_[i] ? nullptr : GetInputTensor(i); }
    const RuntimeAttrs* GetAttrs() const { return &attrs_; }
    size_t GetComputeNodeInputNum() const { return num_inputs_; }
    size_t GetComputeNodeOutputNum() const { return num_outputs_; }
    const char* GetNodeName() const { return node_name_; }
    const char* GetNodeType() const { return node_name_; }

    template <typename T>
    T* GetTilingData() {
        if (sizeof(T) > raw_.GetCapacity()) return nullptr;
        if (raw_.GetDataSize() < sizeof(T)) raw_.SetDataSize(sizeof(T));
        return static_cast<T*>(raw_.GetData());
    }
    TilingData* GetRawTilingData() { return &raw_; }

    // The defaulted line records where the candidate set the block dim (for L2.CORE_COUNT).
    ge::graphStatus SetBlockDim(uint32_t n, int line = __builtin_LINE()) {
        block_dim_ = n;
        block_dim_line_ = line;
        return ge::GRAPH_SUCCESS;
    }
    ge::graphStatus SetSimdNumBlocks(uint32_t n, int line = __builtin_LINE()) { return SetBlockDim(n, line); }
    uint32_t GetBlockDim() const { return block_dim_; }
    ge::graphStatus SetTilingKey(uint64_t k) { tiling_key_ = k; return ge::GRAPH_SUCCESS; }
    uint64_t GetTilingKey() const { return tiling_key_; }
    ge::graphStatus SetNeedAtomic(bool) { return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetScheduleMode(uint32_t) { return ge::GRAPH_SUCCESS; }
    int32_t GetDeterministic() const { return 0; }

    size_t* GetWorkspaceSizes(size_t n) {
        if (n > kMaxWorkspaces) return nullptr;
        if (n > workspace_num_) workspace_num_ = n;
        return workspace_sizes_;
    }
    size_t GetWorkspaceNum() const { return workspace_num_; }
    fe::PlatFormInfos* GetPlatformInfo() const { return platform_; }

    // Harness side: filled from the case description.
    size_t num_inputs_ = 0, num_outputs_ = 0;
    StorageShape in_shapes_[kMaxIo], out_shapes_[kMaxIo];
    CompileTimeTensorDesc in_desc_[kMaxIo], out_desc_[kMaxIo];
    Tensor in_tensor_[kMaxIo];
    bool in_absent_[kMaxIo] = {};
    RuntimeAttrs attrs_;
    TilingData raw_;
    uint32_t block_dim_ = 0;
    int block_dim_line_ = 0;
    uint64_t tiling_key_ = 0;
    size_t workspace_sizes_[kMaxWorkspaces] = {};
    size_t workspace_num_ = 0;
    fe::PlatFormInfos* platform_ = nullptr;
    const char* node_name_ = "candidate";
};

// Shape and dtype inference contexts, so msopgen-style InferShape/InferDataType functions compile.
class InferShapeContext {
public:
    const Shape* GetInputShape(size_t i) const { return i < n_in_ ? &in_[i] : nullptr; }
    const Shape* GetOptionalInputShape(size_t i) const { return GetInputShape(i); }
    Shape* GetOutputShape(size_t i) { return i < n_out_ ? &out_[i] : nullptr; }
    const RuntimeAttrs* GetAttrs() const { return &attrs_; }
    const Tensor* GetInputTensor(size_t) const { return nullptr; }
    const char* GetNodeName() const { return "candidate"; }
    size_t n_in_ = 0, n_out_ = 0;
    Shape in_[TilingContext::kMaxIo], out_[TilingContext::kMaxIo];
    RuntimeAttrs attrs_;
};

class InferDataTypeContext {
public:
    ge::DataType GetInputDataType(size_t i) const { return i < n_in_ ? in_[i] : ge::DT_UNDEFINED; }
    ge::DataType GetOptionalInputDataType(size_t i) const { return GetInputDataType(i); }
    ge::DataType GetOutputDataType(size_t i) const { return i < n_out_ ? out_[i] : ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType d) {
        if (i < TilingContext::kMaxIo) { out_[i] = d; if (i >= n_out_) n_out_ = i + 1; }
        return ge::GRAPH_SUCCESS;
    }
    const RuntimeAttrs* GetAttrs() const { return &attrs_; }
    size_t n_in_ = 0, n_out_ = 0;
    ge::DataType in_[TilingContext::kMaxIo] = {}, out_[TilingContext::kMaxIo] = {};
    RuntimeAttrs attrs_;
};

class InferShapeRangeContext {};
class TilingParseContext {
public:
    fe::PlatFormInfos* GetPlatformInfo() const { return nullptr; }
    template <typename T> T* GetCompiledInfo() { return nullptr; }
};

}  // namespace gert

#endif  // CANNSIM_HOST_H
