// Tiling glue between a candidate's host TilingFunc and its kernel, for the sim backend.
//
// The host writes tiling bytes (a plain struct through GetTilingData<T>(), or a legacy
// BEGIN_TILING_DATA_DEF class through SaveToBuffer); the kernel reads the same bytes with
// GET_TILING_DATA. The runner finds the registered type in the source (REGISTER_TILING_DEFAULT or
// REGISTER_TILING_DATA_CLASS) and defines CANNSIM_DEFAULT_TILING_TYPE / CANNSIM_LEGACY_TILING_TYPE
// before the candidate is included, so registration works at any scope.
#ifndef CANNSIM_TILING_H
#define CANNSIM_TILING_H

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace optiling {}

namespace cannsim {

struct NoTilingType {};

template <typename Default, typename Legacy>
struct PickTiling {
    using type = std::conditional_t<!std::is_same_v<Default, NoTilingType>, Default, Legacy>;
    static_assert(!std::is_same_v<type, NoTilingType>,
                  "GET_TILING_DATA: the tiling type is unknown. Register it with "
                  "REGISTER_TILING_DEFAULT(YourTilingStruct); (plain struct) or "
                  "REGISTER_TILING_DATA_CLASS(OpType, YourTilingClass) (legacy macros).");
    static_assert(std::is_trivially_copyable_v<type>,
                  "GET_TILING_DATA: the tiling type must be trivially copyable (plain fields only).");
};

// Tiling key set by the host's context->SetTilingKey(k); read by TILING_KEY_IS(k).
inline uint64_t& tiling_key_storage() {
    static uint64_t key = 0;
    return key;
}
inline uint64_t tiling_key() { return tiling_key_storage(); }

template <typename T>
inline T read_tiling(const volatile void* src) {
    T v;
    std::memcpy(static_cast<void*>(&v), const_cast<const void*>(src), sizeof(T));
    return v;
}

}  // namespace cannsim

#ifndef CANNSIM_DEFAULT_TILING_TYPE
#define CANNSIM_DEFAULT_TILING_TYPE ::cannsim::NoTilingType
#endif
#ifndef CANNSIM_LEGACY_TILING_TYPE
#define CANNSIM_LEGACY_TILING_TYPE ::cannsim::NoTilingType
#endif

// Plain-struct registration: accepted at any scope (the runner reads the type from the source).
#define REGISTER_TILING_DEFAULT(type) static_assert(sizeof(type) > 0, "tiling type")
#define REGISTER_TILING_FOR_TILINGKEY(cond, type) static_assert(sizeof(type) > 0, "tiling type")

#define GET_TILING_DATA(var, tiling)                                                            \
    auto var = [&]() {                                                                          \
        using namespace optiling;                                                               \
        using cannsim_tiling_t_ = typename ::cannsim::PickTiling<CANNSIM_DEFAULT_TILING_TYPE,   \
                                                                 CANNSIM_LEGACY_TILING_TYPE>::type; \
        return ::cannsim::read_tiling<cannsim_tiling_t_>(tiling);                               \
    }()

#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) \
    type var = ::cannsim::read_tiling<type>(tiling)

#define GET_TILING_DATA_PTR_WITH_STRUCT(type, ptr, tiling) \
    const type* ptr = reinterpret_cast<const type*>(tiling)

#define GET_TILING_DATA_MEMBER(type, member, var, tiling)                          \
    decltype(type::member) var = ::cannsim::read_tiling<decltype(type::member)>(   \
        reinterpret_cast<const uint8_t*>(tiling) + offsetof(type, member))

#define TILING_KEY_IS(k) (::cannsim::tiling_key() == static_cast<uint64_t>(k))
#define GET_TILING_KEY() (::cannsim::tiling_key())

#endif  // CANNSIM_TILING_H
