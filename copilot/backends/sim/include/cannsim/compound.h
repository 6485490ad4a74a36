// Compound vector APIs (AddRelu, SubRelu, FusedMulAdd, MulAddDst, Axpy) and the scalar bit
// functions (GetBitCount, CountLeadingZero, CountBitsCntSameAsSignBit, GetSFFValue).
//
// AddRelu = Relu(src0 + src1), SubRelu = Relu(src0 - src1) (NaN kept, as Relu; an int16 sum wraps
// before the Relu, UNVERIFIED), FusedMulAdd:
// dst = src0 * dst + src1, MulAddDst: dst = src0 * src1 + dst, Axpy: dst = src * scalar + dst.
// Each element is computed in float (integers in int64) and rounded once to dst's type.
// Cost: one V instruction over the lanes (weights in copilot.costmodel.API_WEIGHTS).
#pragma once
#include "vec_ops.h"

namespace cannsim {

inline const ApiDtypes kCompoundDtypes[] = {
    {"AddRelu", DT_I16 | DT_F16 | DT_F32, DT_I16 | DT_F16 | DT_F32 | DT_BF16, DT_I16 | DT_F16 | DT_F32},
    {"SubRelu", DT_I16 | DT_F16 | DT_F32, DT_I16 | DT_F16 | DT_F32 | DT_BF16, DT_I16 | DT_F16 | DT_F32},
    {"FusedMulAdd", DT_F16 | DT_F32, DT_F16 | DT_F32 | DT_BF16, DT_F16 | DT_F32},
    {"MulAddDst", DT_F16 | DT_F32, DT_F16 | DT_F32 | DT_BF16, DT_F16 | DT_F32},
    {"Axpy", DT_F16 | DT_F32, DT_F16 | DT_F32, DT_F16 | DT_F32},
};

// dst[i] = f(dst[i], a[j], b[k]) with dst of type T and sources of type U; nops = 2 for Axpy.
template <typename T, typename U, typename F>
inline void run_accumulate(const char* api, Operand* ops, int nops, const Lanes& L, const SrcLoc& loc, F f) {
    check_dtype_row(api, row_of(kCompoundDtypes, api), dtype_of<U>(), loc);
    if (!std::is_same_v<T, U> && !(std::is_same_v<T, float> && std::is_same_v<U, half>))
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
               fmt("%s with dst %s and sources %s: dst must be the source type or float for half sources", api,
                   dtype_name(dtype_of<T>()), dtype_name(dtype_of<U>())));
    const uint64_t lanes = check_operands(api, ops, nops, L, loc);
    uint8_t* d = ub_at(ops[0].addr);
    const uint8_t* a = ub_at(ops[1].addr);
    const uint8_t* b = nops > 2 ? ub_at(ops[2].addr) : a;
    if (!count_only())
        for_lanes<3>(ops, L, [&](uint64_t i, uint64_t j, uint64_t k) {
            const Calc<T> dv = to_calc(ld<T>(d + i * sizeof(T)));
            const Calc<T> av = static_cast<Calc<T>>(to_calc(ld<U>(a + j * sizeof(U))));
            const Calc<T> bv = nops > 2 ? static_cast<Calc<T>>(to_calc(ld<U>(b + k * sizeof(U)))) : Calc<T>(0);
            st<T>(d + i * sizeof(T), from_calc<T>(f(dv, av, bv)));
        });
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<U>(), lanes, lanes * (sizeof(T) * 2 + sizeof(U) * (nops - 1)));
}

template <typename C> inline C relu_keep_nan(C v) { return (v > 0 || v != v) ? v : C(0); }
// An integer sum wraps to the element type before the Relu (the add is done in T's width).
template <typename T, typename C> inline C wrap_as(C v) {
    if constexpr (std::is_integral_v<T>) return static_cast<C>(static_cast<T>(v));
    else return v;
}

}  // namespace cannsim

#define CANNSIM_ACCUM_API(NAME, MASK_Q, EXPR)                                                                    \
    template <typename T, typename U = T, bool isSetMask = true>                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,    \
                     const int32_t& count, CANNSIM_LOC) {                                                  \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),     \
                                   cannsim::operand("src1", src1)};                                        \
        cannsim::run_accumulate<T, U>(#NAME, ops, 3, cannsim::count_lanes(count), loc,                     \
                                      [](auto d, auto a, auto b) { (void)d; return EXPR; });               \
    }                                                                                                      \
    template <typename T, typename U = T, bool isSetMask = true>                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,    \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& params, CANNSIM_LOC) { \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),     \
                                   cannsim::operand("src1", src1)};                                        \
        cannsim::set_binary_strides<T>(ops, params);                                                       \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);            \
        cannsim::run_accumulate<T, U>(#NAME, ops, 3, L, loc, [](auto d, auto a, auto b) { (void)d; return EXPR; }); \
    }                                                                                                      \
    template <typename T, typename U = T, bool isSetMask = true>                                           \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,    \
                     MASK_Q uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& params, \
                     CANNSIM_LOC) {                                                                        \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),     \
                                   cannsim::operand("src1", src1)};                                        \
        cannsim::set_binary_strides<T>(ops, params);                                                       \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, sizeof(T), true, loc);            \
        cannsim::run_accumulate<T, U>(#NAME, ops, 3, L, loc, [](auto d, auto a, auto b) { (void)d; return EXPR; }); \
    }

namespace AscendC {

// @api AddRelu SubRelu FusedMulAdd MulAddDst Axpy GetBitCount CountLeadingZero CountBitsCntSameAsSignBit GetSFFValue
CANNSIM_ACCUM_API(AddRelu, , cannsim::relu_keep_nan(cannsim::wrap_as<T>(a + b)))
CANNSIM_ACCUM_API(SubRelu, , cannsim::relu_keep_nan(cannsim::wrap_as<T>(a - b)))
CANNSIM_ACCUM_API(FusedMulAdd, , a * d + b)
CANNSIM_ACCUM_API(MulAddDst, const, a * b + d)

template <typename T, typename U = T, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, const int32_t& count,
                 CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src), cannsim::operand("src", src)};
    const float s = static_cast<float>(scalarValue);
    cannsim::run_accumulate<T, U>("Axpy", ops, 2, cannsim::count_lanes(count), loc,
                                  [s](auto d, auto a, auto) { return a * s + d; });
}
template <typename T, typename U = T, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask,
                 const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, params);
    ops[2] = ops[1];
    const float s = static_cast<float>(scalarValue);
    auto L = cannsim::mask_lanes("Axpy", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_accumulate<T, U>("Axpy", ops, 2, L, loc, [s](auto d, auto a, auto) { return a * s + d; });
}
template <typename T, typename U = T, bool isSetMask = true>
inline void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const U& scalarValue, uint64_t mask[],
                 const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, params);
    ops[2] = ops[1];
    const float s = static_cast<float>(scalarValue);
    auto L = cannsim::mask_lanes("Axpy", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_accumulate<T, U>("Axpy", ops, 2, L, loc, [s](auto d, auto a, auto) { return a * s + d; });
}

// Scalar bit functions (scalar unit).
template <int countValue>
inline int64_t GetBitCount(uint64_t valueIn) {
    const int ones = __builtin_popcountll(valueIn);
    return countValue ? ones : 64 - ones;
}
inline int64_t CountLeadingZero(uint64_t valueIn) { return valueIn == 0 ? 64 : __builtin_clzll(valueIn); }
// Bits after the sign bit, from the top, equal to the sign bit; -1 for 0 and -1.
inline int64_t CountBitsCntSameAsSignBit(int64_t valueIn) {
    if (valueIn == 0 || valueIn == -1) return -1;
    const uint64_t v = static_cast<uint64_t>(valueIn < 0 ? ~valueIn : valueIn);
    return __builtin_clzll(v) - 1;
}
// Position of the first bit equal to countValue from the least significant end; -1 when none.
template <int countValue>
inline int64_t GetSFFValue(uint64_t valueIn) {
    const uint64_t v = countValue ? valueIn : ~valueIn;
    return v == 0 ? -1 : __builtin_ctzll(v);
}

}  // namespace AscendC
