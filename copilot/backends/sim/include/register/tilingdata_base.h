// Legacy tiling-data definition macros (BEGIN_TILING_DATA_DEF ...) for the sim backend.
// The class they define is a plain struct with set_/get_ accessors; SaveToBuffer copies its bytes
// and the kernel reads them back with GET_TILING_DATA (see cannsim/tiling.h).
#ifndef CANNSIM_TILINGDATA_BASE_H
#define CANNSIM_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#ifndef CANNSIM_DEVICE_UNIT
#include "cannsim/host.h"
#endif
#include "cannsim/tiling.h"

#define BEGIN_TILING_DATA_DEF(class_name) \
    class class_name {                    \
    public:

#define TILING_DATA_FIELD_DEF(data_type, field_name)                      \
    data_type field_name{};                                               \
    void set_##field_name(data_type v) { field_name = v; }                \
    data_type get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_ARR(data_type, arr_size, field_name)                      \
    data_type field_name[arr_size]{};                                                   \
    void set_##field_name(const data_type* v) { std::memcpy(field_name, v, sizeof(field_name)); } \
    const data_type* get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) \
    struct_type field_name{};

#define END_TILING_DATA_DEF                                                         \
    void SaveToBuffer(void* buf, size_t capacity) const {                            \
        size_t n = sizeof(*this) < capacity ? sizeof(*this) : capacity;              \
        std::memcpy(buf, static_cast<const void*>(this), n);                         \
    }                                                                                \
    size_t GetDataSize() const { return sizeof(*this); }                             \
    void SetDataPtr(void*) {}                                                        \
    }

// Binds an op type to its tiling class; the runner reads the pair from the source.
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
    [[maybe_unused]] static const int cannsim_tiling_class_##op_type = 0;

#endif  // CANNSIM_TILINGDATA_BASE_H
