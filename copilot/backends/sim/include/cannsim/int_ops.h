// Bitwise and shift APIs on integer tensors: And, Or, Not, ShiftLeft, ShiftRight, and the
// tensor-scalar Ands, Ors, Subs, Divs of Atlas 350, each in the count form and both mask forms.
//
// Bitwise ops work on the element's bits. ShiftLeft: unsigned types shift logically; signed types
// shift arithmetically, which keeps the sign bit and drops the bit below it. ShiftRight: unsigned
// logical, signed arithmetic (sign copied); with roundEn (signed only) the last bit shifted out is
// added back (round half up). Shift counts: A2/A3 [0, 16] for 16-bit and [0, 32] for 32-bit
// elements (L2.SHIFT_RANGE); Atlas 350 any count >= 0, a count past the width gives 0 (or -1 for a
// negative value shifted right).
#pragma once
#include "vec_ops.h"
#include "compound.h"

namespace cannsim {

inline const ApiDtypes kIntOpsDtypes[] = {
    {"And", DT_I16 | DT_U16, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_I64 | DT_U64, DT_I16 | DT_U16},
    {"Or", DT_I16 | DT_U16, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_I64 | DT_U64, DT_I16 | DT_U16},
    {"Not", DT_I16 | DT_U16,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32 | DT_I64 | DT_U64, DT_I16 | DT_U16},
    {"Ands", 0, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_I64 | DT_U64, 0},
    {"Ors", 0, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_I64 | DT_U64, 0},
    {"Subs", 0, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32 | DT_I64 | DT_U64, 0},
    {"Divs", 0, DT_F16 | DT_F32, 0},
    {"ShiftLeft", DT_I16 | DT_U16 | DT_I32 | DT_U32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_I64 | DT_U64, DT_I16 | DT_U16 | DT_I32 | DT_U32},
    {"ShiftRight", DT_I16 | DT_U16 | DT_I32 | DT_U32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_I64 | DT_U64, DT_I16 | DT_U16 | DT_I32 | DT_U32},
};

// Same-size unsigned storage of T: bitwise ops run on it.
template <typename T> using Bits = std::conditional_t<sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

template <typename T>
inline void check_int_dtype(const char* api, const SrcLoc& loc) {
    check_dtype_row(api, row_of(kIntOpsDtypes, api), dtype_of<T>(), loc);
}

template <typename T>
inline int checked_shift(const char* api, int64_t n, const SrcLoc& loc) {
    const int width = static_cast<int>(sizeof(T) * 8);
    const bool a2_limits = arch() != 3510;
    if (n < 0 || (a2_limits && n > width))
        report("L2.SHIFT_RANGE", Severity::Error, api, loc.line(),
               fmt("%s shift count %lld is outside [0, %d] for %d-bit elements on arch %d (%s)", api, (long long)n,
                   a2_limits ? width : 64, width, arch(), chip().name));
    return n < 0 ? 0 : static_cast<int>(std::min<int64_t>(n, 64));
}

template <typename T> inline T shift_left(T v, int n) {
    using U = Bits<T>;
    const int w = static_cast<int>(sizeof(T) * 8);
    const U x = static_cast<U>(v);
    const U moved = n >= w ? U(0) : static_cast<U>(x << n);
    if constexpr (std::is_signed_v<T>) {
        const U sign = static_cast<U>(U(1) << (w - 1));
        return static_cast<T>(static_cast<U>((x & sign) | (moved & static_cast<U>(~sign))));
    } else {
        return static_cast<T>(moved);
    }
}

template <typename T> inline T shift_right(T v, int n, bool round) {
    const int w = static_cast<int>(sizeof(T) * 8);
    if constexpr (std::is_signed_v<T>) {
        const int64_t x = static_cast<int64_t>(v);
        if (n >= w) return static_cast<T>(x < 0 ? -1 : 0);
        int64_t r = x >> n;
        if (round && n > 0) r += (x >> (n - 1)) & 1;
        return static_cast<T>(r);
    } else {
        using U = Bits<T>;
        return n >= w ? T(0) : static_cast<T>(static_cast<U>(v) >> n);
    }
}

}  // namespace cannsim

// Bitwise binary op: operates on Bits<T>; the dtype rule is checked on T.
#define CANNSIM_BITWISE_API(NAME, EXPR)                                                                   \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     const int32_t& count, CANNSIM_LOC) {                                                 \
        using B = cannsim::Bits<T>;                                                                       \
        cannsim::check_int_dtype<T>(#NAME, loc);                                                          \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),    \
                                   cannsim::operand("src1", src1)};                                       \
        cannsim::run_binary<B>(#NAME, ops, cannsim::count_lanes(count), loc, [](auto a, auto b) { return EXPR; }); \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& params, CANNSIM_LOC) { \
        using B = cannsim::Bits<T>;                                                                       \
        cannsim::check_int_dtype<T>(#NAME, loc);                                                          \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),    \
                                   cannsim::operand("src1", src1)};                                       \
        cannsim::set_binary_strides<T>(ops, params);                                                      \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_binary<B>(#NAME, ops, L, loc, [](auto a, auto b) { return EXPR; });                  \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& params,   \
                     CANNSIM_LOC) {                                                                       \
        using B = cannsim::Bits<T>;                                                                       \
        cannsim::check_int_dtype<T>(#NAME, loc);                                                          \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),    \
                                   cannsim::operand("src1", src1)};                                       \
        cannsim::set_binary_strides<T>(ops, params);                                                      \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_binary<B>(#NAME, ops, L, loc, [](auto a, auto b) { return EXPR; });                  \
    }

// Tensor-scalar op on element values (F(a) of the Calc type, scalar `s`) or on bits.
#define CANNSIM_INT_SCALAR_API(NAME, STORE, SCALAR, EXPR, EXTRA_PARAM, EXTRA_ARG)                         \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,          \
                     const int32_t& count, CANNSIM_LOC) {                                                 \
        cannsim::check_int_dtype<T>(#NAME, loc);                                                          \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        const auto s = SCALAR; const bool roundEn = false; (void)roundEn;                                 \
        cannsim::run_unary<STORE>(#NAME, ops, cannsim::count_lanes(count), loc, [=](auto a) { return EXPR; }); \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,          \
                     uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& params EXTRA_PARAM, \
                     CANNSIM_LOC) {                                                                       \
        cannsim::check_int_dtype<T>(#NAME, loc);                                                          \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::set_unary_strides(ops, params);                                                          \
        const auto s = SCALAR; const bool roundEn = EXTRA_ARG; (void)roundEn;                             \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_unary<STORE>(#NAME, ops, L, loc, [=](auto a) { return EXPR; });                      \
    }                                                                                                     \
    template <typename T, bool isSetMask = true>                                                          \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalarValue,          \
                     uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& params EXTRA_PARAM, \
                     CANNSIM_LOC) {                                                                       \
        cannsim::check_int_dtype<T>(#NAME, loc);                                                          \
        cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};     \
        cannsim::set_unary_strides(ops, params);                                                          \
        const auto s = SCALAR; const bool roundEn = EXTRA_ARG; (void)roundEn;                             \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);           \
        cannsim::run_unary<STORE>(#NAME, ops, L, loc, [=](auto a) { return EXPR; });                      \
    }

#define CANNSIM_COMMA ,
#define CANNSIM_NOTHING

namespace AscendC {

// @api And Or Not Ands Ors Subs Divs ShiftLeft ShiftRight
CANNSIM_BITWISE_API(And, a & b)
CANNSIM_BITWISE_API(Or, a | b)

template <typename T, bool isSetMask = true>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count, CANNSIM_LOC) {
    using B = cannsim::Bits<T>;
    cannsim::check_int_dtype<T>("Not", loc);
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::run_unary<B>("Not", ops, cannsim::count_lanes(count), loc, [](auto a) { return ~a; });
}
template <typename T, bool isSetMask = true>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const uint8_t repeatTime,
                const UnaryRepeatParams& params, CANNSIM_LOC) {
    using B = cannsim::Bits<T>;
    cannsim::check_int_dtype<T>("Not", loc);
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, params);
    auto L = cannsim::mask_lanes("Not", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_unary<B>("Not", ops, L, loc, [](auto a) { return ~a; });
}
template <typename T, bool isSetMask = true>
inline void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask[], const uint8_t repeatTime,
                const UnaryRepeatParams& params, CANNSIM_LOC) {
    using B = cannsim::Bits<T>;
    cannsim::check_int_dtype<T>("Not", loc);
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, params);
    auto L = cannsim::mask_lanes("Not", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_unary<B>("Not", ops, L, loc, [](auto a) { return ~a; });
}

CANNSIM_INT_SCALAR_API(Ands, cannsim::Bits<T>, static_cast<int64_t>(static_cast<cannsim::Bits<T>>(scalarValue)),
                       a & s, CANNSIM_NOTHING, false)
CANNSIM_INT_SCALAR_API(Ors, cannsim::Bits<T>, static_cast<int64_t>(static_cast<cannsim::Bits<T>>(scalarValue)),
                       a | s, CANNSIM_NOTHING, false)
CANNSIM_INT_SCALAR_API(Subs, T, cannsim::to_calc<T>(scalarValue), a - s, CANNSIM_NOTHING, false)
CANNSIM_INT_SCALAR_API(Divs, T, cannsim::to_calc<T>(scalarValue), cannsim::safe_div(a, decltype(a)(s)),
                       CANNSIM_NOTHING, false)
CANNSIM_INT_SCALAR_API(ShiftLeft, T, cannsim::checked_shift<T>("ShiftLeft", static_cast<int64_t>(scalarValue), loc),
                       static_cast<int64_t>(cannsim::shift_left<T>(static_cast<T>(a), s)), CANNSIM_NOTHING, false)
CANNSIM_INT_SCALAR_API(ShiftRight, T,
                       cannsim::checked_shift<T>("ShiftRight", static_cast<int64_t>(scalarValue), loc),
                       static_cast<int64_t>(cannsim::shift_right<T>(static_cast<T>(a), s, roundEn)),
                       CANNSIM_COMMA bool roundEnArg = false, roundEnArg)

}  // namespace AscendC
