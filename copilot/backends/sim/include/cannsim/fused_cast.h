// Compound vector APIs that change the element type on the way out: AddReluCast, SubReluCast,
// MulCast, AddDeqRelu, and MulAddRelu (same type).
//
// AddReluCast/SubReluCast: Relu(src0 +/- src1) computed in the source type U, then converted to
// dst's type T (CAST_NONE: nearest-even for float -> narrower, saturating on overflow; NaN to an
// integer gives 0). MulCast: src0 * src1 in U, converted the same way. AddDeqRelu: int32 sum
// (wrapping in 32 bits, UNVERIFIED), times the DeqScale set by SetDeqScale, to half, then Relu.
// MulAddRelu: dst = Relu(src0 * dst + src1). The mask lanes of a mixed-width call count in the
// wider of the two types (documented). Cost: one V instruction over the lanes.
#pragma once
#include "vec_ops.h"
#include "cast.h"

namespace cannsim {

// Source types U per chip (A2/A3, 950, 310P); the allowed (T, U) pairs are checked separately.
inline const ApiDtypes kFusedCastDtypes[] = {
    {"AddReluCast", DT_I16 | DT_F16 | DT_F32, DT_I16 | DT_F16 | DT_F32 | DT_I64, DT_I16 | DT_F16 | DT_F32},
    {"SubReluCast", DT_I16 | DT_F16 | DT_F32, DT_I16 | DT_F16 | DT_F32 | DT_I64, DT_I16 | DT_F16 | DT_F32},
    {"MulCast", DT_F16, DT_F16 | DT_I64, DT_F16},
    {"AddDeqRelu", DT_I32, DT_I32, DT_I32},
    {"MulAddRelu", DT_F16 | DT_F32, DT_F16 | DT_F32 | DT_I64 | DT_U64, DT_F16 | DT_F32},
};

// The documented (dst, src) conversions of each API; `wide` pairs exist on Atlas 350 only.
struct CastPair { uint32_t dst, src; bool only_950; };
inline bool fused_pair_ok(const char* api, uint32_t dd, uint32_t sd) {
    static const CastPair relu_cast[] = {{DT_F16, DT_F32, false}, {DT_I8, DT_F16, false}, {DT_I8, DT_I16, false},
                                         {DT_F32, DT_I64, true}, {DT_I32, DT_I64, true}};
    static const CastPair mul_cast[] = {{DT_I8, DT_F16, false}, {DT_U8, DT_F16, false}, {DT_F32, DT_I64, true},
                                        {DT_I32, DT_I64, true}};
    const bool is950 = arch() == 3510;
    auto in = [&](const CastPair* p, size_t n) {
        for (size_t i = 0; i < n; ++i)
            if (p[i].dst == dd && p[i].src == sd && (!p[i].only_950 || is950)) return true;
        return false;
    };
    if (std::strcmp(api, "MulCast") == 0) return in(mul_cast, sizeof mul_cast / sizeof *mul_cast);
    if (std::strcmp(api, "AddDeqRelu") == 0) return dd == DT_F16 && sd == DT_I32;
    return in(relu_cast, sizeof relu_cast / sizeof *relu_cast);
}

enum class FusedOp { AddRelu, SubRelu, Mul, AddDeq, MulAddRelu };

template <typename U> inline double in_source_type(double v) {
    if constexpr (std::is_integral_v<U>) {   // integer arithmetic wraps in U's width
        if (!std::isfinite(v)) return 0;
        return static_cast<double>(static_cast<U>(static_cast<int64_t>(v)));
    } else {
        return to_double(cast_value<U>(v, AscendC::RoundMode::CAST_RINT));
    }
}

template <typename T, typename U>
inline void run_fused_cast(const char* api, FusedOp op, Operand* ops, const Lanes& L, bool count_form_only_64,
                           const SrcLoc& loc) {
    check_dtype_row(api, row_of(kFusedCastDtypes, api), dtype_of<U>(), loc);
    if (op != FusedOp::MulAddRelu && !fused_pair_ok(api, dtype_of<T>(), dtype_of<U>()))
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
               fmt("%s does not convert %s sources to a %s dst on arch %d (%s)", api, dtype_name(dtype_of<U>()),
                   dtype_name(dtype_of<T>()), arch(), chip().name));
    if (count_form_only_64 && !L.count_form && sizeof(U) == 8)
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
               fmt("%s with 64-bit sources exists only in the count form (dst, src0, src1, count)", api));
    const uint64_t lanes = check_operands(api, ops, 3, L, loc);
    uint8_t* d = ub_at(ops[0].addr);
    const uint8_t* a = ub_at(ops[1].addr);
    const uint8_t* b = ub_at(ops[2].addr);
    const double deq = detail::state().deq_scale;
    if (!count_only())
        for_lanes<3>(ops, L, [&](uint64_t i, uint64_t j, uint64_t k) {
            const double x = to_double(ld<U>(a + j * sizeof(U))), y = to_double(ld<U>(b + k * sizeof(U)));
            double v = 0;
            switch (op) {
                case FusedOp::AddRelu: v = in_source_type<U>(x + y); break;
                case FusedOp::SubRelu: v = in_source_type<U>(x - y); break;
                case FusedOp::Mul: v = in_source_type<U>(x * y); break;
                case FusedOp::AddDeq:
                    v = to_double(cast_value<half>(in_source_type<int32_t>(x + y) * deq, AscendC::RoundMode::CAST_RINT));
                    break;
                case FusedOp::MulAddRelu:
                    v = in_source_type<U>(x * to_double(ld<T>(d + i * sizeof(T))) + y);
                    break;
            }
            if (op != FusedOp::Mul && !(v > 0) && v == v) v = 0;   // Relu keeps NaN
            st<T>(d + i * sizeof(T), cast_value<T>(v, AscendC::RoundMode::CAST_RINT));
        });
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<U>(), lanes, lanes * (sizeof(T) + 2 * sizeof(U)));
}

}  // namespace cannsim

// Three forms (count, mask-bit, mask-continuous) of a (dst T, src0 U, src1 U) compound API.
#define CANNSIM_FUSED_CAST_API(NAME, OP, COUNT_T)                                                            \
    template <typename T, typename U>                                                                        \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,      \
                     COUNT_T count, CANNSIM_LOC) {                                                           \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),       \
                                   cannsim::operand("src1", src1)};                                          \
        cannsim::run_fused_cast<T, U>(#NAME, OP, ops, cannsim::count_lanes(count), true, loc);               \
    }                                                                                                        \
    template <typename T, typename U, bool isSetMask = true>                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,      \
                     uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams,       \
                     CANNSIM_LOC) {                                                                          \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),       \
                                   cannsim::operand("src1", src1)};                                          \
        cannsim::set_binary_strides<T>(ops, repeatParams);                                                   \
        const uint32_t es = sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U);                                   \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, es, true, loc);                     \
        cannsim::run_fused_cast<T, U>(#NAME, OP, ops, L, true, loc);                                         \
    }                                                                                                        \
    template <typename T, typename U, bool isSetMask = true>                                                 \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1,      \
                     uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams,         \
                     CANNSIM_LOC) {                                                                          \
        cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),       \
                                   cannsim::operand("src1", src1)};                                          \
        cannsim::set_binary_strides<T>(ops, repeatParams);                                                   \
        const uint32_t es = sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U);                                   \
        auto L = cannsim::mask_lanes(#NAME, mask, repeatTime, isSetMask, es, true, loc);                     \
        cannsim::run_fused_cast<T, U>(#NAME, OP, ops, L, true, loc);                                         \
    }

namespace AscendC {

CANNSIM_FUSED_CAST_API(AddReluCast, cannsim::FusedOp::AddRelu, const uint32_t)
CANNSIM_FUSED_CAST_API(SubReluCast, cannsim::FusedOp::SubRelu, const uint32_t)
CANNSIM_FUSED_CAST_API(MulCast, cannsim::FusedOp::Mul, uint32_t)
CANNSIM_FUSED_CAST_API(AddDeqRelu, cannsim::FusedOp::AddDeq, const int32_t&)

// The non-template AddDeqRelu: half dst, int32 sources.
inline void AddDeqRelu(const LocalTensor<half>& dst, const LocalTensor<int32_t>& src0, const LocalTensor<int32_t>& src1,
                       const int32_t& count, CANNSIM_LOC) {
    AddDeqRelu<half, int32_t>(dst, src0, src1, count, loc);
}
template <bool isSetMask = true>
inline void AddDeqRelu(const LocalTensor<half>& dst, const LocalTensor<int32_t>& src0, const LocalTensor<int32_t>& src1,
                       uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    AddDeqRelu<half, int32_t, isSetMask>(dst, src0, src1, mask, repeatTime, repeatParams, loc);
}
template <bool isSetMask = true>
inline void AddDeqRelu(const LocalTensor<half>& dst, const LocalTensor<int32_t>& src0, const LocalTensor<int32_t>& src1,
                       uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    AddDeqRelu<half, int32_t, isSetMask>(dst, src0, src1, mask, repeatTime, repeatParams, loc);
}

// MulAddRelu: dst = Relu(src0 * dst + src1), one element type.
template <typename T>
inline void MulAddRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
                       const int32_t& count, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("src1", src1)};
    cannsim::run_fused_cast<T, T>("MulAddRelu", cannsim::FusedOp::MulAddRelu, ops, cannsim::count_lanes(count), true, loc);
}
template <typename T, bool isSetMask = true>
inline void MulAddRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask[],
                       const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("src1", src1)};
    cannsim::set_binary_strides<T>(ops, repeatParams);
    auto L = cannsim::mask_lanes("MulAddRelu", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_fused_cast<T, T>("MulAddRelu", cannsim::FusedOp::MulAddRelu, ops, L, true, loc);
}
template <typename T, bool isSetMask = true>
inline void MulAddRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,
                       const uint8_t repeatTime, const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("src1", src1)};
    cannsim::set_binary_strides<T>(ops, repeatParams);
    auto L = cannsim::mask_lanes("MulAddRelu", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_fused_cast<T, T>("MulAddRelu", cannsim::FusedOp::MulAddRelu, ops, L, true, loc);
}

}  // namespace AscendC
