// Elementwise vector APIs: binary (Add ...), unary (Exp ...), tensor-scalar (Adds ...) and
// Duplicate, each in the count form and the mask/repeat forms.
#pragma once
#include <cmath>
#include "vec_engine.h"

namespace cannsim {

template <typename T, typename F>
CANNSIM_HOT_LOOP void contiguous_binary(T* dp, const T* ap, const T* bp, uint64_t n, F f) {
    for (uint64_t k = 0; k < n; ++k) dp[k] = from_calc<T>(f(to_calc(ap[k]), to_calc(bp[k])));
}
template <typename T, typename F>
CANNSIM_HOT_LOOP void contiguous_unary(T* dp, const T* ap, uint64_t n, F f) {
    for (uint64_t k = 0; k < n; ++k) dp[k] = from_calc<T>(f(to_calc(ap[k])));
}

template <typename T, typename F>
inline void run_binary(const char* api, Operand* ops, const Lanes& L, const SrcLoc& loc, F f) {
    check_dtype(api, dtype_of<T>(), loc);
    const uint64_t lanes = check_operands(api, ops, 3, L, loc);
    uint8_t* d = ub_at(ops[0].addr); const uint8_t* a = ub_at(ops[1].addr); const uint8_t* b = ub_at(ops[2].addr);
    if (count_only()) {          // count-only mode: checks and accounting, no data
    } else if (L.count_form) {   // contiguous fast path
        contiguous_binary(reinterpret_cast<T*>(d), reinterpret_cast<const T*>(a), reinterpret_cast<const T*>(b),
                          L.count, f);
    } else for_lanes<3>(ops, L, [&](uint64_t i, uint64_t j, uint64_t k) {
        st<T>(d + i * sizeof(T), from_calc<T>(f(to_calc(ld<T>(a + j * sizeof(T))), to_calc(ld<T>(b + k * sizeof(T))))));
    });
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T) * 3);
}

template <typename T, typename F>
inline void run_unary(const char* api, Operand* ops, const Lanes& L, const SrcLoc& loc, F f) {
    check_dtype(api, dtype_of<T>(), loc);
    const uint64_t lanes = check_operands(api, ops, 2, L, loc);
    uint8_t* d = ub_at(ops[0].addr); const uint8_t* a = ub_at(ops[1].addr);
    if (count_only()) {          // count-only mode: checks and accounting, no data
    } else if (L.count_form) {   // contiguous fast path
        contiguous_unary(reinterpret_cast<T*>(d), reinterpret_cast<const T*>(a), L.count, f);
    } else for_lanes<2>(ops, L, [&](uint64_t i, uint64_t j) {
        st<T>(d + i * sizeof(T), from_calc<T>(f(to_calc(ld<T>(a + j * sizeof(T))))));
    });
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T) * 2);
}

template <typename T>
inline void set_binary_strides(Operand* ops, const AscendC::BinaryRepeatParams& p) {
    ops[0].blk = p.dstBlkStride; ops[1].blk = p.src0BlkStride; ops[2].blk = p.src1BlkStride;
    ops[0].rep = p.dstRepStride; ops[1].rep = p.src0RepStride; ops[2].rep = p.src1RepStride;
}
inline void set_unary_strides(Operand* ops, const AscendC::UnaryRepeatParams& p) {
    ops[0].blk = p.dstBlkStride; ops[1].blk = p.srcBlkStride;
    ops[0].rep = p.dstRepStride; ops[1].rep = p.srcRepStride;
}

template <typename C> inline C safe_div(C a, C b) {
    if constexpr (std::is_integral_v<C>) return b == 0 ? C(0) : a / b;
    else return a / b;
}
template <typename C> inline C to_c(float v) {
    if constexpr (std::is_integral_v<C>) return std::isfinite(v) ? static_cast<C>(v) : C(0);
    else return v;
}

}  // namespace cannsim

#define CANNSIM_BINARY_API(NAME, EXPR)                                                                    \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     const int32_t& count, CANNSIM_LOC) {                                                 \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),    \
                                   cannsim::operand("src1", src1)};                                       \
        cannsim::run_binary<T>(#NAME, ops, cannsim::count_lanes(count), loc, [](auto a, auto b) CANNSIM_LANE { return EXPR; }); \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& params, CANNSIM_LOC) { \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),    \
                                   cannsim::operand("src1", src1)};                                       \
        cannsim::set_binary_strides<T>(ops, params);                                                      \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_binary<T>(#NAME, ops, L, loc, [](auto a, auto b) CANNSIM_LANE { return EXPR; });                  \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& params,   \
                     CANNSIM_LOC) {                                                                       \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),    \
                                   cannsim::operand("src1", src1)};                                       \
        cannsim::set_binary_strides<T>(ops, params);                                                      \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_binary<T>(#NAME, ops, L, loc, [](auto a, auto b) CANNSIM_LANE { return EXPR; });                  \
    }

#define CANNSIM_UNARY_API(NAME, EXPR)                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, CANNSIM_LOC) { \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::run_unary<T>(#NAME, ops, cannsim::count_lanes(count), loc, [](auto a) CANNSIM_LANE { return EXPR; }); \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,                 \
                     const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {            \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::set_unary_strides(ops, params);                                                          \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_unary<T>(#NAME, ops, L, loc, [](auto a) CANNSIM_LANE { return EXPR; });                           \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask[],         \
                     const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {            \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::set_unary_strides(ops, params);                                                          \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_unary<T>(#NAME, ops, L, loc, [](auto a) CANNSIM_LANE { return EXPR; });                           \
    }

#define CANNSIM_SCALAR_API(NAME, EXPR)                                                                    \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,          \
                     const int32_t& count, CANNSIM_LOC) {                                                 \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        const auto s = cannsim::to_calc<T>(scalarValue);                                                  \
        cannsim::run_unary<T>(#NAME, ops, cannsim::count_lanes(count), loc, [s](auto a) CANNSIM_LANE { return EXPR; }); \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,          \
                     uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) { \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::set_unary_strides(ops, params);                                                          \
        const auto s = cannsim::to_calc<T>(scalarValue);                                                  \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_unary<T>(#NAME, ops, L, loc, [s](auto a) CANNSIM_LANE { return EXPR; });                          \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,          \
                     uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& params,    \
                     CANNSIM_LOC) {                                                                       \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::set_unary_strides(ops, params);                                                          \
        const auto s = cannsim::to_calc<T>(scalarValue);                                                  \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_unary<T>(#NAME, ops, L, loc, [s](auto a) CANNSIM_LANE { return EXPR; });                          \
    }

namespace AscendC {

CANNSIM_BINARY_API(Add, a + b)
CANNSIM_BINARY_API(Sub, a - b)
CANNSIM_BINARY_API(Mul, a * b)
CANNSIM_BINARY_API(Div, cannsim::safe_div(a, b))
CANNSIM_BINARY_API(Max, (a > b || a != a) ? a : b)
CANNSIM_BINARY_API(Min, (a < b || a != a) ? a : b)

CANNSIM_UNARY_API(Exp, cannsim::to_c<decltype(a)>(std::exp(static_cast<float>(a))))
CANNSIM_UNARY_API(Ln, cannsim::to_c<decltype(a)>(std::log(static_cast<float>(a))))
CANNSIM_UNARY_API(Abs, a < 0 ? -a : a)
CANNSIM_UNARY_API(Sqrt, cannsim::to_c<decltype(a)>(std::sqrt(static_cast<float>(a))))
CANNSIM_UNARY_API(Rsqrt, cannsim::to_c<decltype(a)>(1.0f / std::sqrt(static_cast<float>(a))))
CANNSIM_UNARY_API(Reciprocal, cannsim::to_c<decltype(a)>(1.0f / static_cast<float>(a)))
CANNSIM_UNARY_API(Relu, (a > 0 || a != a) ? a : decltype(a)(0))   // NaN passes through, as Max does

CANNSIM_SCALAR_API(Adds, a + s)
CANNSIM_SCALAR_API(Muls, a * s)
CANNSIM_SCALAR_API(Maxs, (a > s || a != a) ? a : s)
CANNSIM_SCALAR_API(Mins, (a < s || a != a) ? a : s)
CANNSIM_SCALAR_API(LeakyRelu, a >= 0 ? a : a * s)

// Duplicate: fill with a scalar.
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, const int32_t& count, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("dst", dst)};
    cannsim::run_unary<T>("Duplicate", ops, cannsim::count_lanes(count), loc,
                          [v = cannsim::to_calc<T>(scalarValue)](auto) CANNSIM_LANE { return v; });
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask, const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("dst", dst)};
    ops[0].blk = ops[1].blk = dstBlockStride; ops[0].rep = ops[1].rep = dstRepeatStride;
    auto L = cannsim::mask_lanes("Duplicate", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_unary<T>("Duplicate", ops, L, loc, [v = cannsim::to_calc<T>(scalarValue)](auto) CANNSIM_LANE { return v; });
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalarValue, uint64_t mask[], const uint8_t repeatTime,
                      const uint16_t dstBlockStride, const uint8_t dstRepeatStride, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("dst", dst)};
    ops[0].blk = ops[1].blk = dstBlockStride; ops[0].rep = ops[1].rep = dstRepeatStride;
    auto L = cannsim::mask_lanes("Duplicate", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_unary<T>("Duplicate", ops, L, loc, [v = cannsim::to_calc<T>(scalarValue)](auto) CANNSIM_LANE { return v; });
}

}  // namespace AscendC
