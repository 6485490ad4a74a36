// Cast between element types with every RoundMode. Rounding rules follow the Cast docs:
// RINT = nearest, ties to even; FLOOR/CEIL toward -inf/+inf; ROUND = nearest, ties away from
// zero; TRUNC toward zero; ODD = round to odd (only float -> half); NONE = RINT when the
// conversion loses precision, exact otherwise. Out-of-range results saturate (the documented
// default), NaN to an integer gives 0.
#pragma once
#include <cfloat>
#include <climits>
#include "vec_engine.h"

namespace cannsim {

inline double round_int(double v, AscendC::RoundMode m) {
    using M = AscendC::RoundMode;
    switch (m) {
        case M::CAST_FLOOR: return std::floor(v);
        case M::CAST_CEIL: return std::ceil(v);
        case M::CAST_ROUND: return std::round(v);
        case M::CAST_TRUNC: return std::trunc(v);
        default: return std::nearbyint(v);   // RINT/NONE/ODD: default FP env rounds to even
    }
}

// Round v onto a binary floating grid with `mant` fraction bits and minimum normal exponent
// `emin`, using mode m; finite overflow saturates to max_finite.
inline double round_fp(double v, int mant, int emin, double max_finite, AscendC::RoundMode m) {
    using M = AscendC::RoundMode;
    if (std::isnan(v) || std::isinf(v) || v == 0) return v;
    const double a = std::fabs(v);
    int e = std::ilogb(a);
    if (e < emin) e = emin;
    const double ulp = std::ldexp(1.0, e - mant);
    const double q = a / ulp;
    const double lo = std::floor(q) * ulp, hi = lo + ulp;
    double r;
    if (lo == a) r = a;
    else {
        const bool neg = v < 0;
        switch (m) {
            case M::CAST_TRUNC: r = lo; break;
            case M::CAST_FLOOR: r = neg ? hi : lo; break;
            case M::CAST_CEIL: r = neg ? lo : hi; break;
            case M::CAST_ROUND: r = (a - lo >= hi - a) ? hi : lo; break;
            case M::CAST_ODD: {
                const double k = std::floor(q);
                r = std::fmod(k, 2.0) != 0 ? lo : hi;
                break;
            }
            default: {
                const double dl = a - lo, dh = hi - a;
                if (dl < dh) r = lo;
                else if (dh < dl) r = hi;
                else r = std::fmod(std::floor(q), 2.0) == 0 ? lo : hi;
            }
        }
    }
    if (r > max_finite) r = max_finite;
    return v < 0 ? -r : r;
}

template <typename D>
inline D cast_value(double v, AscendC::RoundMode m) {
    using M = AscendC::RoundMode;
    if constexpr (std::is_same_v<D, half>) {
        return half(static_cast<float>(round_fp(v, 10, -14, 65504.0, m)));
    } else if constexpr (std::is_same_v<D, bfloat16_t>) {
        return bfloat16_t(static_cast<float>(round_fp(v, 7, -126, 3.3895313892515355e38, m)));
    } else if constexpr (std::is_same_v<D, float>) {
        return static_cast<float>(round_fp(v, 23, -126, static_cast<double>(FLT_MAX), m));
    } else if constexpr (std::is_same_v<D, double>) {
        return v;
    } else if constexpr (std::is_integral_v<D>) {
        if (std::isnan(v)) return D(0);
        double r = round_int(v, m == M::CAST_NONE ? M::CAST_RINT : m);
        const double lo = static_cast<double>(std::numeric_limits<D>::min());
        const double hi = static_cast<double>(std::numeric_limits<D>::max());
        if (r <= lo) return std::numeric_limits<D>::min();
        if (r >= hi) return std::numeric_limits<D>::max();
        return static_cast<D>(r);
    } else {
        return D(static_cast<float>(v));
    }
}

template <typename S> inline double to_double(S v) {
    if constexpr (std::is_integral_v<S>) return static_cast<double>(v);
    else return static_cast<double>(static_cast<float>(v));
}

inline const char* round_mode_name(AscendC::RoundMode m) {
    static const char* n[] = {"CAST_NONE", "CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND",
                              "CAST_TRUNC", "CAST_ODD", "CAST_HYBRID", "CAST_EVEN", "CAST_ZERO"};
    return n[static_cast<int>(m)];
}

template <typename D, typename S>
inline void run_cast(Operand* ops, const Lanes& L, AscendC::RoundMode mode, const SrcLoc& loc) {
    const uint32_t sd = dtype_of<S>(), dd = dtype_of<D>();
    bool known = false;
    const bool ok = cast_supported(sd, dd, static_cast<int>(mode), &known);
    if (!ok) {
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, "Cast", loc.line(),
               known ? fmt("Cast %s -> %s does not accept %s on arch %d (%s)", dtype_name(sd), dtype_name(dd),
                           round_mode_name(mode), arch(), chip().name)
                     : fmt("Cast %s -> %s is not a supported conversion on arch %d (%s)", dtype_name(sd),
                           dtype_name(dd), arch(), chip().name));
    }
    const uint64_t lanes = check_operands("Cast", ops, 2, L, loc);
    uint8_t* d = ub_at(ops[0].addr); const uint8_t* s = ub_at(ops[1].addr);
    const float deq = detail::state().deq_scale;
    if (!count_only()) for_lanes<2>(ops, L, [&](uint64_t i, uint64_t j) {
        double v = to_double(ld<S>(s + j * sizeof(S)));
        if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float>)   // float -> float: round to an integer
            if (std::isfinite(v)) v = round_int(v, mode);
        if constexpr (std::is_same_v<S, int32_t> && std::is_same_v<D, half>) v *= deq;
        st<D>(d + i * sizeof(D), cast_value<D>(v, mode));
    });
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, "Cast", dtype_of<S>(), lanes, lanes * (sizeof(S) + sizeof(D)));
}

}  // namespace cannsim

namespace AscendC {

template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint32_t count, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::run_cast<T, U>(ops, cannsim::count_lanes(count), roundMode, loc);
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, uint64_t mask,
                 const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, params);
    const uint32_t es = sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U);
    auto L = cannsim::mask_lanes("Cast", mask, repeatTime, isSetMask, es, true, loc);
    cannsim::run_cast<T, U>(ops, L, roundMode, loc);
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::set_unary_strides(ops, params);
    const uint32_t es = sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U);
    auto L = cannsim::mask_lanes("Cast", mask, repeatTime, isSetMask, es, true, loc);
    cannsim::run_cast<T, U>(ops, L, roundMode, loc);
}

inline void SetDeqScale(half scale) { cannsim::detail::state().deq_scale = static_cast<float>(scale); }

// Scalar conversions used in kernel scalar code (the scalar Cast pages of the API reference:
// float -> half with CAST_ODD, float -> int32_t with CAST_RINT/ROUND/CEIL/FLOOR, float <-> bfloat16_t
// with RINT; ToFloat / ToBfloat16 are the old names).
template <typename T, typename U, RoundMode roundMode>
inline U Cast(T valueIn) {
    static_assert(std::is_same_v<T, float> &&
                      ((std::is_same_v<U, half> && roundMode == RoundMode::CAST_ODD) ||
                       (std::is_same_v<U, int32_t> &&
                        (roundMode == RoundMode::CAST_RINT || roundMode == RoundMode::CAST_ROUND ||
                         roundMode == RoundMode::CAST_CEIL || roundMode == RoundMode::CAST_FLOOR))),
                  "scalar Cast<T, U, roundMode> supports float -> half (CAST_ODD) and float -> int32_t "
                  "(CAST_RINT, CAST_ROUND, CAST_CEIL, CAST_FLOOR)");
    return cannsim::cast_value<U>(static_cast<double>(valueIn), roundMode);
}
inline bfloat16_t Cast(const float& fVal) { return cannsim::cast_value<bfloat16_t>(fVal, RoundMode::CAST_RINT); }
inline float Cast(const bfloat16_t& bVal) { return static_cast<float>(bVal); }
inline float ToFloat(const bfloat16_t& v) { return Cast(v); }
inline bfloat16_t ToBfloat16(const float& v) { return Cast(v); }

}  // namespace AscendC
