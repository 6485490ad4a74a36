// High-level math and activation libraries: elementwise APIs with the sharedTmpBuffer and
// framework-allocated forms, each with its host helpers Get<Api>MaxMinTmpSize and
// Get<Api>TmpBufferFactorSize (in hl_host.h, from the same table).
//
// Values are computed in double and rounded once to the element type (the library's own
// float-internal approximations are not modelled: results are the exact function, rounded).
// Operands follow the documented rules: 32 B aligned, dst/src and the tmp buffer do not overlap,
// a tmp buffer of at least the minimum the host helper gives. Cost: the vector instructions each
// API is built from (approximate counts), per element.
#pragma once
#include <cmath>
#include "hl_common.h"
#include "hl_types.h"

namespace cannsim {

// Digamma by recurrence to x >= 6 and the asymptotic series.
inline double digamma(double x) {
    if (std::isnan(x)) return x;
    if (x <= 0 && x == std::floor(x)) return std::nan("");
    double r = 0;
    if (x < 0) return digamma(1 - x) - M_PI / std::tan(M_PI * x);
    while (x < 6) { r -= 1 / x; x += 1; }
    const double f = 1 / (x * x);
    return r + std::log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

inline double gelu_tanh(double x) {   // tanh approximation of GELU
    return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// Run f over `count` elements of src (and src1) into dst with the shared checks and cost.
template <typename T, typename U, typename F>
inline void hl_elementwise(const char* api, const AscendC::LocalTensor<T>& dst,
                           const AscendC::LocalTensor<U>& src, const AscendC::LocalTensor<U>* src1,
                           const AscendC::LocalTensor<uint8_t>* tmp, int64_t count, std::initializer_list<Step> steps,
                           const SrcLoc& loc, F f) {
    hl_check_dtype(api, dtype_of<U>(), loc);
    if (count < 0) count = 0;
    const uint64_t n = static_cast<uint64_t>(count);
    const HlSpan d = span("dstTensor", dst, n, true), s = span("srcTensor", src, n);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    HlSpan reads[2] = {s, s};
    int nreads = 1;
    if (src1) {
        reads[1] = span("src1Tensor", *src1, n);
        hl_check_spans(api, {reads[1]}, loc);
        hl_check_disjoint(api, d, reads[1], loc);
        nreads = 2;
    }
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::elementwise_min_bytes(api, sizeof(U)), loc);
        hl_check_disjoint(api, t, d, loc);
        for (int i = 0; i < nreads; ++i) hl_check_disjoint(api, t, reads[i], loc);
    }
    if (!count_only()) {
        T* dp = reinterpret_cast<T*>(ub_at(dst.addr_));
        const U* sp = reinterpret_cast<const U*>(ub_at(src.addr_));
        const U* tp = src1 ? reinterpret_cast<const U*>(ub_at(src1->addr_)) : nullptr;
        for (uint64_t i = 0; i < n; ++i) dp[i] = from_d<T>(f(to_d(sp[i]), tp ? to_d(tp[i]) : 0.0));
    }
    composite_cost(dtype_of<U>(), n, sizeof(U), reads, nreads, d, steps);
}

}  // namespace cannsim

namespace AscendC {

// Unary APIs with the four documented forms (tmp or not; whole tensor or calCount).
#define CANNSIM_HL_UNARY4(NAME, STEPS, EXPR)                                                                      \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                            \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, CANNSIM_LOC) {        \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr, \
                                &sharedTmpBuffer, calCount, STEPS, loc, [](double x, double) { return EXPR; });   \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                            \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) {                                 \
        NAME<T, isReuseSource>(dstTensor, srcTensor, sharedTmpBuffer, srcTensor.GetSize(), loc);                  \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,   \
                     CANNSIM_LOC) {                                                                               \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr, \
                                (const LocalTensor<uint8_t>*)nullptr, calCount, STEPS, loc,                      \
                                [](double x, double) { return EXPR; });                                          \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, CANNSIM_LOC) {             \
        NAME<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize(), loc);                                   \
    }

// Unary APIs with only the calCount forms (tmp or not).
#define CANNSIM_HL_UNARY2(NAME, STEPS, EXPR)                                                                      \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                            \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, CANNSIM_LOC) {        \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr, \
                                &sharedTmpBuffer, calCount, STEPS, loc, [](double x, double) { return EXPR; });   \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,   \
                     CANNSIM_LOC) {                                                                               \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr, \
                                (const LocalTensor<uint8_t>*)nullptr, calCount, STEPS, loc,                      \
                                [](double x, double) { return EXPR; });                                          \
    }

// Binary APIs with the four forms.
#define CANNSIM_HL_BINARY4(NAME, STEPS, EXPR)                                                                \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,                           \
                     const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer,               \
                     const uint32_t calCount, CANNSIM_LOC) {                                                      \
        cannsim::hl_elementwise(#NAME, dstTensor, src0Tensor, &src1Tensor, &sharedTmpBuffer, calCount, STEPS, \
                                loc, [](double x, double y) { return EXPR; });                                    \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,                           \
                     const LocalTensor<T>& src1Tensor, const LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) { \
        NAME<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, sharedTmpBuffer, src0Tensor.GetSize(), loc);    \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,                           \
                     const LocalTensor<T>& src1Tensor, const uint32_t calCount, CANNSIM_LOC) {                    \
        cannsim::hl_elementwise(#NAME, dstTensor, src0Tensor, &src1Tensor, (const LocalTensor<uint8_t>*)nullptr, \
                                calCount, STEPS, loc, [](double x, double y) { return EXPR; });                   \
    }                                                                                                             \
    template <typename T, bool isReuseSource = false>                                                             \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor,                           \
                     const LocalTensor<T>& src1Tensor, CANNSIM_LOC) {                                             \
        NAME<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, src0Tensor.GetSize(), loc);                     \
    }

#define CANNSIM_STEPS(...) (std::initializer_list<cannsim::Step>{__VA_ARGS__})

// ---- math library ----
CANNSIM_HL_UNARY4(Tanh, CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 2}, {"Div", 1}), std::tanh(x))
CANNSIM_HL_UNARY4(Sin, CANNSIM_STEPS({"Muls", 6}, {"Adds", 4}, {"Cast", 2}), std::sin(x))
CANNSIM_HL_UNARY4(Cos, CANNSIM_STEPS({"Muls", 6}, {"Adds", 4}, {"Cast", 2}), std::cos(x))
CANNSIM_HL_UNARY4(Tan, CANNSIM_STEPS({"Muls", 8}, {"Adds", 5}, {"Cast", 2}, {"Div", 1}), std::tan(x))
CANNSIM_HL_UNARY4(Asin, CANNSIM_STEPS({"Muls", 8}, {"Adds", 6}, {"Sqrt", 1}, {"Select", 1}), std::asin(x))
CANNSIM_HL_UNARY4(Acos, CANNSIM_STEPS({"Muls", 8}, {"Adds", 7}, {"Sqrt", 1}, {"Select", 1}), std::acos(x))
CANNSIM_HL_UNARY4(Atan, CANNSIM_STEPS({"Muls", 8}, {"Adds", 6}, {"Div", 1}, {"Select", 1}), std::atan(x))
CANNSIM_HL_UNARY4(Sinh, CANNSIM_STEPS({"Exp", 2}, {"Sub", 1}, {"Muls", 1}), std::sinh(x))
CANNSIM_HL_UNARY4(Cosh, CANNSIM_STEPS({"Exp", 2}, {"Add", 1}, {"Muls", 1}), std::cosh(x))
CANNSIM_HL_UNARY4(Asinh, CANNSIM_STEPS({"Mul", 1}, {"Adds", 1}, {"Sqrt", 1}, {"Add", 1}, {"Ln", 1}), std::asinh(x))
CANNSIM_HL_UNARY4(Acosh, CANNSIM_STEPS({"Mul", 1}, {"Adds", 1}, {"Sqrt", 1}, {"Add", 1}, {"Ln", 1}), std::acosh(x))
CANNSIM_HL_UNARY4(Atanh, CANNSIM_STEPS({"Adds", 2}, {"Div", 1}, {"Ln", 1}, {"Muls", 1}), std::atanh(x))
CANNSIM_HL_UNARY4(Erf, CANNSIM_STEPS({"Muls", 10}, {"Adds", 8}, {"Div", 1}), std::erf(x))
CANNSIM_HL_UNARY4(Erfc, CANNSIM_STEPS({"Muls", 10}, {"Adds", 8}, {"Exp", 1}, {"Div", 1}), std::erfc(x))
CANNSIM_HL_UNARY4(Frac, CANNSIM_STEPS({"Cast", 2}, {"Sub", 1}), x - std::trunc(x))
CANNSIM_HL_UNARY4(Sign, CANNSIM_STEPS({"Compares", 2}, {"Select", 2}), x > 0 ? 1.0 : x < 0 ? -1.0 : x)
CANNSIM_HL_UNARY4(Trunc, CANNSIM_STEPS({"Cast", 2}), std::trunc(x))
CANNSIM_HL_UNARY2(Floor, CANNSIM_STEPS({"Cast", 2}), std::floor(x))
CANNSIM_HL_UNARY2(Ceil, CANNSIM_STEPS({"Cast", 2}), std::ceil(x))
CANNSIM_HL_UNARY2(Round, CANNSIM_STEPS({"Cast", 2}), std::nearbyint(x))
CANNSIM_HL_UNARY2(Lgamma, CANNSIM_STEPS({"Muls", 20}, {"Adds", 16}, {"Ln", 2}, {"Div", 2}, {"Select", 2}), std::lgamma(x))
CANNSIM_HL_UNARY2(Digamma, CANNSIM_STEPS({"Muls", 16}, {"Adds", 14}, {"Ln", 1}, {"Div", 6}, {"Select", 2}),
                  cannsim::digamma(x))

// Log (natural, base 2, base 10): whole tensor or calCount, no tmp buffer.
#define CANNSIM_HL_LOG(NAME, EXPR)                                                                                 \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t calCount,    \
                     CANNSIM_LOC) {                                                                                \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr,  \
                                (const LocalTensor<uint8_t>*)nullptr, calCount, CANNSIM_STEPS({"Ln", 1}, {"Muls", 1}), \
                                loc, [](double x, double) { return EXPR; });                                       \
    }                                                                                                              \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, CANNSIM_LOC) {              \
        NAME<T, isReuseSource>(dstTensor, srcTensor, srcTensor.GetSize(), loc);                                    \
    }
CANNSIM_HL_LOG(Log, std::log(x))
CANNSIM_HL_LOG(Log2, std::log2(x))
CANNSIM_HL_LOG(Log10, std::log10(x))

// Exp with a Taylor-expansion level (no default: it distinguishes this API from the basic Exp).
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& sharedTmpBuffer,
                const uint32_t calCount, CANNSIM_LOC) {
    cannsim::hl_elementwise("Exp", dstLocal, srcLocal, (const LocalTensor<T>*)nullptr, &sharedTmpBuffer,
                            calCount, CANNSIM_STEPS({"Exp", 1}, {"Muls", double(taylorExpandLevel)},
                                                    {"Adds", double(taylorExpandLevel)}),
                            loc, [](double x, double) { return std::exp(x); });
}
template <typename T, uint8_t taylorExpandLevel, bool isReuseSource = false>
inline void Exp(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t calCount, CANNSIM_LOC) {
    cannsim::hl_elementwise("Exp", dstLocal, srcLocal, (const LocalTensor<T>*)nullptr,
                            (const LocalTensor<uint8_t>*)nullptr, calCount,
                            CANNSIM_STEPS({"Exp", 1}, {"Muls", double(taylorExpandLevel)}, {"Adds", double(taylorExpandLevel)}),
                            loc, [](double x, double) { return std::exp(x); });
}

CANNSIM_HL_BINARY4(Fmod, CANNSIM_STEPS({"Div", 1}, {"Cast", 2}, {"Mul", 1}, {"Sub", 1}),
                   std::fmod(x, y))
CANNSIM_HL_BINARY4(Xor, CANNSIM_STEPS({"Or", 1}, {"And", 1}, {"Not", 1}, {"And", 1}),
                   static_cast<double>(static_cast<int64_t>(x) ^ static_cast<int64_t>(y)))

// Power: tensor^tensor, tensor^scalar, scalar^tensor.
CANNSIM_HL_BINARY4(Power, CANNSIM_STEPS({"Ln", 1}, {"Mul", 1}, {"Exp", 1}, {"Select", 2}),
                   std::pow(x, y))
template <typename T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, CANNSIM_LOC) {
    const double e = cannsim::to_d(src1Scalar);
    cannsim::hl_elementwise("Power", dstTensor, src0Tensor, (const LocalTensor<T>*)nullptr,
                            &sharedTmpBuffer, calCount, CANNSIM_STEPS({"Ln", 1}, {"Muls", 1}, {"Exp", 1}, {"Select", 2}),
                            loc, [e](double x, double) { return std::pow(x, e); });
}
template <typename T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                  const uint32_t calCount, CANNSIM_LOC) {
    const double e = cannsim::to_d(src1Scalar);
    cannsim::hl_elementwise("Power", dstTensor, src0Tensor, (const LocalTensor<T>*)nullptr,
                            (const LocalTensor<uint8_t>*)nullptr, calCount,
                            CANNSIM_STEPS({"Ln", 1}, {"Muls", 1}, {"Exp", 1}, {"Select", 2}), loc,
                            [e](double x, double) { return std::pow(x, e); });
}
template <typename T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar, CANNSIM_LOC) {
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Scalar, src0Tensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const T& src1Scalar,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) {
    Power<T, isReuseSource>(dstTensor, src0Tensor, src1Scalar, sharedTmpBuffer, src0Tensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, CANNSIM_LOC) {
    const double b = cannsim::to_d(src0Scalar);
    cannsim::hl_elementwise("Power", dstTensor, src1Tensor, (const LocalTensor<T>*)nullptr,
                            &sharedTmpBuffer, calCount, CANNSIM_STEPS({"Ln", 1}, {"Muls", 1}, {"Exp", 1}, {"Select", 2}),
                            loc, [b](double x, double) { return std::pow(b, x); });
}
template <typename T, bool isReuseSource = false>
inline void Power(const LocalTensor<T>& dstTensor, const T& src0Scalar, const LocalTensor<T>& src1Tensor,
                  const uint32_t calCount, CANNSIM_LOC) {
    const double b = cannsim::to_d(src0Scalar);
    cannsim::hl_elementwise("Power", dstTensor, src1Tensor, (const LocalTensor<T>*)nullptr,
                            (const LocalTensor<uint8_t>*)nullptr, calCount,
                            CANNSIM_STEPS({"Ln", 1}, {"Muls", 1}, {"Exp", 1}, {"Select", 2}), loc,
                            [b](double x, double) { return std::pow(b, x); });
}

// ClampMax / ClampMin: min(x, scalar) / max(x, scalar); NaN stays NaN.
#define CANNSIM_HL_CLAMP(NAME, EXPR)                                                                               \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                             \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const T scalar, const uint32_t calCount,         \
                     CANNSIM_LOC) {                                                                                \
        const double c = cannsim::to_d(scalar);                                                                    \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr,  \
                                &sharedTmpBuffer, calCount, CANNSIM_STEPS({"Compares", 1}, {"Select", 1}), loc,    \
                                [c](double x, double) { return EXPR; });                                           \
    }                                                                                                              \
    template <typename T, bool isReuseSource = false>                                                              \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const T scalar,             \
                     const uint32_t calCount, CANNSIM_LOC) {                                                       \
        const double c = cannsim::to_d(scalar);                                                                    \
        cannsim::hl_elementwise(#NAME, dstTensor, srcTensor, (const LocalTensor<T>*)nullptr,  \
                                (const LocalTensor<uint8_t>*)nullptr, calCount,                                    \
                                CANNSIM_STEPS({"Compares", 1}, {"Select", 1}), loc,                                \
                                [c](double x, double) { return EXPR; });                                           \
    }
CANNSIM_HL_CLAMP(ClampMax, std::isnan(x) ? x : (x > c ? c : x))
CANNSIM_HL_CLAMP(ClampMin, std::isnan(x) ? x : (x < c ? c : x))

// ---- activation library (elementwise) ----
CANNSIM_HL_UNARY4(Sigmoid, CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 1}, {"Reciprocal", 1}), 1.0 / (1.0 + std::exp(-x)))

template <typename T, bool isReuseSource = false>
inline void Silu(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize, CANNSIM_LOC) {
    cannsim::hl_elementwise("Silu", dstLocal, srcLocal, (const LocalTensor<T>*)nullptr,
                            (const LocalTensor<uint8_t>*)nullptr, dataSize,
                            CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 1}, {"Div", 1}), loc,
                            [](double x, double) { return x / (1.0 + std::exp(-x)); });
}
template <typename T, bool isReuseSource = false>
inline void Swish(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, uint32_t dataSize, const T scalarValue,
                  CANNSIM_LOC) {
    const double beta = cannsim::to_d(scalarValue);
    cannsim::hl_elementwise("Swish", dstLocal, srcLocal, (const LocalTensor<T>*)nullptr,
                            (const LocalTensor<uint8_t>*)nullptr, dataSize,
                            CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 1}, {"Div", 1}), loc,
                            [beta](double x, double) { return x / (1.0 + std::exp(-beta * x)); });
}

// Gelu (tanh approximation), FasterGelu (x * sigmoid(1.702 x)), FasterGeluV2 (UNVERIFIED: the
// same formula as FasterGelu); template flags accepted, same result.
#define CANNSIM_HL_GELU(NAME, STEPS, EXPR)                                                                          \
    template <typename T, bool highPrecision = false, bool highPerformance = false>                                \
    inline void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal,                               \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t dataSize, CANNSIM_LOC) {          \
        cannsim::hl_elementwise(#NAME, dstLocal, srcLocal, (const LocalTensor<T>*)nullptr,    \
                                &sharedTmpBuffer, dataSize, STEPS, loc, [](double x, double) { return EXPR; });    \
    }                                                                                                              \
    template <typename T, bool highPrecision = false, bool highPerformance = false>                                \
    inline void NAME(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dataSize,      \
                     CANNSIM_LOC) {                                                                                \
        cannsim::hl_elementwise(#NAME, dstLocal, srcLocal, (const LocalTensor<T>*)nullptr,    \
                                (const LocalTensor<uint8_t>*)nullptr, dataSize, STEPS, loc,                        \
                                [](double x, double) { return EXPR; });                                            \
    }
CANNSIM_HL_GELU(Gelu, CANNSIM_STEPS({"Mul", 2}, {"Muls", 2}, {"Adds", 1}, {"Exp", 1}, {"Div", 1}), cannsim::gelu_tanh(x))
CANNSIM_HL_GELU(FasterGelu, CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 1}, {"Div", 1}),
                x / (1.0 + std::exp(-1.702 * x)))
CANNSIM_HL_GELU(FasterGeluV2, CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 1}, {"Div", 1}),
                x / (1.0 + std::exp(-1.702 * x)))

// GLU variants: act(src0) * src1 (UNVERIFIED operand order: the reference's formulas are images).
CANNSIM_HL_BINARY4(GeGLU, CANNSIM_STEPS({"Mul", 3}, {"Muls", 2}, {"Adds", 1}, {"Exp", 1}, {"Div", 1}),
                   cannsim::gelu_tanh(x) * y)

template <typename T, bool isReuseSource = false>
inline void ReGlu(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
                  const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, CANNSIM_LOC) {
    cannsim::hl_elementwise("ReGlu", dstTensor, srcTensor0, &srcTensor1, &sharedTmpBuffer,
                            calCount, CANNSIM_STEPS({"Relu", 1}, {"Mul", 1}), loc,
                            [](double x, double y) { return (x > 0 ? x : (std::isnan(x) ? x : 0.0)) * y; });
}
template <typename T, bool isReuseSource = false>
inline void ReGlu(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
                  const uint32_t calCount, CANNSIM_LOC) {
    cannsim::hl_elementwise("ReGlu", dstTensor, srcTensor0, &srcTensor1,
                            (const LocalTensor<uint8_t>*)nullptr, calCount, CANNSIM_STEPS({"Relu", 1}, {"Mul", 1}), loc,
                            [](double x, double y) { return (x > 0 ? x : (std::isnan(x) ? x : 0.0)) * y; });
}

#define CANNSIM_SWIGLU_BODY(TMP, COUNT)                                                                             \
    const double beta = scalarValue;                                                                               \
    cannsim::hl_elementwise("SwiGLU", dstTensor, srcTensor0, &srcTensor1, TMP, COUNT,    \
                            CANNSIM_STEPS({"Muls", 1}, {"Exp", 1}, {"Adds", 1}, {"Div", 1}, {"Mul", 1}), loc,      \
                            [beta](double x, double y) { return x / (1.0 + std::exp(-beta * x)) * y; });
template <typename T, bool isReuseSource = false>
inline void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
                   const float& scalarValue, const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount,
                   CANNSIM_LOC) {
    CANNSIM_SWIGLU_BODY(&sharedTmpBuffer, calCount)
}
template <typename T, bool isReuseSource = false>
inline void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
                   const float& scalarValue, const LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) {
    CANNSIM_SWIGLU_BODY(&sharedTmpBuffer, srcTensor0.GetSize())
}
template <typename T, bool isReuseSource = false>
inline void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
                   const float& scalarValue, const uint32_t calCount, CANNSIM_LOC) {
    CANNSIM_SWIGLU_BODY((const LocalTensor<uint8_t>*)nullptr, calCount)
}
template <typename T, bool isReuseSource = false>
inline void SwiGLU(LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor0, const LocalTensor<T>& srcTensor1,
                   const float& scalarValue, CANNSIM_LOC) {
    CANNSIM_SWIGLU_BODY((const LocalTensor<uint8_t>*)nullptr, srcTensor0.GetSize())
}
#undef CANNSIM_SWIGLU_BODY

// ---- CumSum: prefix sums along the last axis (rows of inner) or the first axis (over outter) ----
enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
    CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, false, CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};
};

namespace detail_cumsum {
template <typename T>
inline void run(LocalTensor<T>& dst, LocalTensor<T>& lastRow, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                const CumSumInfo& info, const CumSumConfig& cfg, const cannsim::SrcLoc& loc) {
    using namespace cannsim;
    hl_check_dtype("CumSum", dtype_of<T>(), loc);
    const uint64_t O = info.outter, N = info.inner, n = O * N;
    if (O == 0 || N == 0 || (N * sizeof(T)) % 32 != 0) {
        hl_param_error("CumSum", loc, fmt("CumSum outter %llu and inner %llu must be > 0 with inner * sizeof(T) a multiple "
                                          "of 32 bytes", (unsigned long long)O, (unsigned long long)N));
        return;
    }
    const HlSpan d = span("dstTensor", dst, n, true), s = span("srcTensor", src, n);
    hl_check_spans("CumSum", {d, s}, loc);
    hl_check_disjoint("CumSum", d, s, loc);
    if (cfg.outputLastRow) hl_check_spans("CumSum", {span("lastRowTensor", lastRow, N, true)}, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans("CumSum", {t}, loc);
        hl_check_tmp_bytes("CumSum", tmp->GetSize(), tmp_model::elementwise_min_bytes("CumSum", sizeof(T)), loc);
        hl_check_disjoint("CumSum", t, d, loc);
        hl_check_disjoint("CumSum", t, s, loc);
    }
    if (!count_only()) {
        std::vector<double> acc(cfg.isLastAxis ? 1 : N, 0.0);
        for (uint64_t r = 0; r < O; ++r) {
            if (cfg.isLastAxis) acc[0] = 0;
            for (uint64_t j = 0; j < N; ++j) {
                double& a = acc[cfg.isLastAxis ? 0 : j];
                a += to_d(ld<T>(ub_at(src.addr_ + (r * N + j) * sizeof(T))));
                st<T>(ub_at(dst.addr_ + (r * N + j) * sizeof(T)), from_d<T>(a));
            }
        }
        if (cfg.outputLastRow)
            std::memcpy(ub_at(lastRow.addr_), ub_at(dst.addr_ + (O - 1) * N * sizeof(T)), N * sizeof(T));
    }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), n, sizeof(T), reads, 1, d,
                   {{"Add", cfg.isLastAxis ? std::log2(double(N)) + 1 : 1.0}, {"Cast", sizeof(T) == 2 ? 2.0 : 0.0}});
    if (cfg.outputLastRow) mark_written(lastRow.slot_, PIPE_V);
}
}  // namespace detail_cumsum

template <typename T, const CumSumConfig& config = defaultCumSumConfig>
inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                   LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo, CANNSIM_LOC) {
    detail_cumsum::run(dstTensor, lastRowTensor, srcTensor, &sharedTmpBuffer, cumSumInfo, config, loc);
}
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
inline void CumSum(LocalTensor<T>& dstTensor, LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
                   const CumSumInfo& cumSumInfo, CANNSIM_LOC) {
    detail_cumsum::run(dstTensor, lastRowTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, cumSumInfo, config, loc);
}

}  // namespace AscendC
