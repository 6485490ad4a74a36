// 16-bit floating-point storage types of the AscendC vector unit: half (IEEE binary16) and
// bfloat16_t (the top half of a binary32). Conversions from float round to nearest, ties to even,
// overflow to inf, and keep subnormals; NaN stays NaN (quiet).
#pragma once
#include <cstdint>
#include <cstring>
#include <cmath>
#include <type_traits>
#if __cplusplus >= 202002L
#include <bit>
#define CANNSIM_FP_CONSTEXPR constexpr
#else
#define CANNSIM_FP_CONSTEXPR inline
#endif

namespace cannsim {

#if __cplusplus >= 202002L
constexpr uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }
constexpr float bits_float(uint32_t u) { return std::bit_cast<float>(u); }
#else
inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
#endif

CANNSIM_FP_CONSTEXPR uint16_t float_to_half_bits(float f) {
    const uint32_t x = float_bits(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {                       // inf or nan
        if (ax == 0x7f800000u) return sign | 0x7c00u;
        return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    }
    if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
    if (ax < 0x38800000u) {                        // below the smallest normal half (2^-14)
        if (ax < 0x33000000u) return sign;         // below half the smallest subnormal
        const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        const int e = static_cast<int>(ax >> 23);
        const int shift = 126 - e;                 // value / 2^-24 = m >> shift
        uint32_t r = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (r & 1u))) ++r;
        return static_cast<uint16_t>(sign | r);
    }
    const uint32_t rebased = ax - 0x38000000u;     // exponent bias 127 -> 15
    uint32_t h = rebased >> 13;
    const uint32_t rem = rebased & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
}

CANNSIM_FP_CONSTEXPR float half_bits_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu;
    const uint32_t m = h & 0x3ffu;
    if (e == 0) {
        const float v = static_cast<float>(m) * 5.9604644775390625e-08f;   // m * 2^-24, exact
        return sign ? -v : v;
    }
    if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
    return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

CANNSIM_FP_CONSTEXPR uint16_t float_to_bf16_bits(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(rounded >> 16);
}

CANNSIM_FP_CONSTEXPR float bf16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// Shared shape of both 16-bit types: storage only, arithmetic through float.
#define CANNSIM_DEFINE_FP16_TYPE(NAME, TO_BITS, TO_FLOAT)                                         \
    struct NAME {                                                                                \
        uint16_t bits;                                                                           \
        NAME() = default;                                                                        \
        template <typename U, typename = std::enable_if_t<std::is_arithmetic_v<U>>>              \
        constexpr NAME(U v) : bits(TO_BITS(static_cast<float>(v))) {}                            \
        /* the other 16-bit type (and any class convertible to float) converts through float */ \
        template <typename U, typename = std::enable_if_t<std::is_class_v<U> &&                  \
                                                          std::is_convertible_v<U, float>>, int = 0> \
        constexpr NAME(const U& v) : bits(TO_BITS(static_cast<float>(v))) {}                     \
        static constexpr NAME from_bits(uint16_t b) { NAME r{}; r.bits = b; return r; }          \
        constexpr operator float() const { return TO_FLOAT(bits); }                              \
        template <typename U> NAME& operator+=(const U& o) { return *this = NAME(float(*this) + float(o)); } \
        template <typename U> NAME& operator-=(const U& o) { return *this = NAME(float(*this) - float(o)); } \
        template <typename U> NAME& operator*=(const U& o) { return *this = NAME(float(*this) * float(o)); } \
        template <typename U> NAME& operator/=(const U& o) { return *this = NAME(float(*this) / float(o)); } \
    };

}  // namespace cannsim

namespace cannsim::fp16_types {
CANNSIM_DEFINE_FP16_TYPE(half, ::cannsim::float_to_half_bits, ::cannsim::half_bits_to_float)
CANNSIM_DEFINE_FP16_TYPE(bfloat16_t, ::cannsim::float_to_bf16_bits, ::cannsim::bf16_bits_to_float)
}  // namespace cannsim::fp16_types

// On the device both names are global (compiler built-ins), so kernels use them unqualified.
using half = cannsim::fp16_types::half;
using bfloat16_t = cannsim::fp16_types::bfloat16_t;
static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>);
static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable_v<bfloat16_t>);
