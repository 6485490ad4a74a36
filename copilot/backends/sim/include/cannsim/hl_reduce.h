// The reduce library: Sum and Mean over rows (SumParams / MeanParams), ReduceSum / ReduceMax /
// ReduceMin / ReduceMean / ReduceProd / ReduceAny / ReduceAll with a Pattern::Reduce::AR or RA
// template argument over a 2-D srcShape, and ReduceXorSum. (The basic ReduceSum/Max/Min
// instructions are in reduce.h; these overloads differ by their template pattern and shape array.)
//
// Accumulation is in double, rounded once to the element type (the library's tree order is not
// modelled). Max/Min propagate NaN; Any/All treat nonzero as true and write 1 or 0.
#pragma once
#include <cmath>
#include "hl_common.h"
#include "hl_types.h"
#include "reduce.h"

namespace AscendC {

namespace Pattern::Reduce {
struct AR {};   // reduce the last axis: [a, r] -> [a]
struct RA {};   // reduce the first axis: [r, a] -> [a]
}  // namespace Pattern::Reduce

struct SumParams {
    uint32_t outter = 1;
    uint32_t inner = 0;   // row length padded to 32 bytes
    uint32_t n = 0;       // valid elements per row
};
using MeanParams = SumParams;

}  // namespace AscendC

namespace cannsim {

enum class HlRed { Sum, Max, Min, Mean, Prod, Any, All };

inline double hl_fold(HlRed k, double acc, double v) {
    switch (k) {
        case HlRed::Sum: case HlRed::Mean: return acc + v;
        case HlRed::Prod: return acc * v;
        case HlRed::Max: return std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v);
        case HlRed::Min: return std::isnan(acc) || std::isnan(v) ? NAN : std::min(acc, v);
        case HlRed::Any: return (acc != 0 || v != 0) ? 1.0 : 0.0;
        case HlRed::All: return (acc != 0 && v != 0) ? 1.0 : 0.0;
    }
    return acc;
}

// Rows of `len` valid elements `stride` apart (AR) or columns (RA): one result per kept index.
template <typename T>
inline void hl_reduce(const char* api, const char* row, HlRed kind, const AscendC::LocalTensor<T>& dst,
                      const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp, uint32_t keep,
                      uint32_t len, uint32_t stride, bool last_axis, const SrcLoc& loc) {
    hl_check_dtype(row, dtype_of<T>(), loc, api);
    if (keep == 0 || len == 0) {
        hl_param_error(api, loc, fmt("%s has an empty shape (%u x %u)", api, keep, len));
        return;
    }
    if ((uint64_t(stride) * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("%s rows of %u elements are not 32-byte aligned (%llu bytes); pad the inner axis",
                                     api, stride, (unsigned long long)(uint64_t(stride) * sizeof(T))));
    const uint64_t n = last_axis ? uint64_t(keep - 1) * stride + len : uint64_t(len - 1) * stride + keep;
    const HlSpan d = span("dstTensor", dst, keep, true), s = span("srcTensor", src, n);
    hl_check_spans(api, {d, s}, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::rowwise_min_bytes(last_axis ? len : keep, 1), loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only()) {
        std::vector<double> out(keep);
        for (uint32_t a = 0; a < keep; ++a) {
            double acc = 0;
            for (uint32_t r = 0; r < len; ++r) {
                const uint64_t i = last_axis ? uint64_t(a) * stride + r : uint64_t(r) * stride + a;
                const double v = to_d(ld<T>(ub_at(src.addr_ + i * sizeof(T))));
                acc = r == 0 ? (kind == HlRed::Any || kind == HlRed::All ? (v != 0 ? 1.0 : 0.0) : v) : hl_fold(kind, acc, v);
            }
            out[a] = kind == HlRed::Mean ? acc / len : acc;
        }
        for (uint32_t a = 0; a < keep; ++a) st<T>(ub_at(dst.addr_ + a * sizeof(T)), from_d<T>(out[a]));
    }
    const char* step = kind == HlRed::Max ? "ReduceMax" : kind == HlRed::Min ? "ReduceMin" : "ReduceSum";
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), uint64_t(keep) * len, sizeof(T), reads, 1, d,
                   {{last_axis ? step : (kind == HlRed::Max ? "Max" : kind == HlRed::Min ? "Min" : "Add"), 1},
                    {"Muls", kind == HlRed::Mean ? 1.0 / len : 0.0}});
}

template <class Pattern>
constexpr bool last_axis_pattern() { return std::is_same_v<Pattern, AscendC::Pattern::Reduce::AR>; }

}  // namespace cannsim

namespace AscendC {

// ---- Sum / Mean over rows ----
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                const SumParams& sumParams, CANNSIM_LOC) {
    if (sumParams.n > sumParams.inner) cannsim::hl_param_error("Sum", loc, "Sum sumParams.n exceeds sumParams.inner");
    cannsim::hl_reduce("Sum", "Sum", cannsim::HlRed::Sum, dstTensor, srcTensor, &sharedTmpBuffer, sumParams.outter,
                       std::min(sumParams.n, sumParams.inner), sumParams.inner, true, loc);
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SumParams& sumParams, CANNSIM_LOC) {
    if (sumParams.n > sumParams.inner) cannsim::hl_param_error("Sum", loc, "Sum sumParams.n exceeds sumParams.inner");
    cannsim::hl_reduce("Sum", "Sum", cannsim::HlRed::Sum, dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr,
                       sumParams.outter, std::min(sumParams.n, sumParams.inner), sumParams.inner, true, loc);
}
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false, int32_t reduceDim = -1>
inline void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                 const MeanParams& meanParams, CANNSIM_LOC) {
    if (meanParams.n > meanParams.inner) cannsim::hl_param_error("Mean", loc, "Mean meanParams.n exceeds meanParams.inner");
    cannsim::hl_reduce("Mean", "Mean", cannsim::HlRed::Mean, dstTensor, srcTensor, &sharedTmpBuffer, meanParams.outter,
                       std::min(meanParams.n, meanParams.inner), meanParams.inner, true, loc);
}
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false, int32_t reduceDim = -1>
inline void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const MeanParams& meanParams, CANNSIM_LOC) {
    if (meanParams.n > meanParams.inner) cannsim::hl_param_error("Mean", loc, "Mean meanParams.n exceeds meanParams.inner");
    cannsim::hl_reduce("Mean", "Mean", cannsim::HlRed::Mean, dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr,
                       meanParams.outter, std::min(meanParams.n, meanParams.inner), meanParams.inner, true, loc);
}

// ---- pattern reductions over srcShape = {first, last}; srcInnerPad: the last axis is stored padded to 32 B ----
#define CANNSIM_HL_REDUCE_PATTERN(NAME, KIND)                                                                       \
    template <typename T, class pattern, bool isReuseSource = false>                                                \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                              \
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad,      \
                     CANNSIM_LOC) {                                                                                 \
        const uint32_t epb = 32 / sizeof(T);                                                                        \
        const uint32_t stride = srcInnerPad ? (srcShape[1] + epb - 1) / epb * epb : srcShape[1];                    \
        constexpr bool ar = cannsim::last_axis_pattern<pattern>();                                                  \
        cannsim::hl_reduce(#NAME, #NAME "HL", KIND, dstTensor, srcTensor, &sharedTmpBuffer,                         \
                           ar ? srcShape[0] : srcShape[1], ar ? srcShape[1] : srcShape[0], stride, ar, loc);        \
    }                                                                                                               \
    template <typename T, class pattern, bool isReuseSource = false>                                                \
    inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],   \
                     bool srcInnerPad, CANNSIM_LOC) {                                                               \
        const uint32_t epb = 32 / sizeof(T);                                                                        \
        const uint32_t stride = srcInnerPad ? (srcShape[1] + epb - 1) / epb * epb : srcShape[1];                    \
        constexpr bool ar = cannsim::last_axis_pattern<pattern>();                                                  \
        cannsim::hl_reduce(#NAME, #NAME "HL", KIND, dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr,     \
                           ar ? srcShape[0] : srcShape[1], ar ? srcShape[1] : srcShape[0], stride, ar, loc);        \
    }
CANNSIM_HL_REDUCE_PATTERN(ReduceSum, cannsim::HlRed::Sum)
CANNSIM_HL_REDUCE_PATTERN(ReduceMax, cannsim::HlRed::Max)
CANNSIM_HL_REDUCE_PATTERN(ReduceMin, cannsim::HlRed::Min)
CANNSIM_HL_REDUCE_PATTERN(ReduceMean, cannsim::HlRed::Mean)
CANNSIM_HL_REDUCE_PATTERN(ReduceProd, cannsim::HlRed::Prod)
CANNSIM_HL_REDUCE_PATTERN(ReduceAny, cannsim::HlRed::Any)
CANNSIM_HL_REDUCE_PATTERN(ReduceAll, cannsim::HlRed::All)
#undef CANNSIM_HL_REDUCE_PATTERN

// ---- ReduceXorSum: dst[0] = sum of (src0[i] ^ src1[i]), wrapped to T ----
template <typename T, bool isReuseSource = false>
inline void ReduceXorSum(LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                         const LocalTensor<uint8_t>* tmp, const uint32_t calCount, const cannsim::SrcLoc& loc) {
    using namespace cannsim;
    hl_check_dtype("ReduceXorSum", dtype_of<T>(), loc);
    const HlSpan d = span("dstTensor", dstTensor, 1, true), a = span("src0Tensor", src0Tensor, calCount),
                 b = span("src1Tensor", src1Tensor, calCount);
    hl_check_spans("ReduceXorSum", {d, a, b}, loc);
    if (tmp) {
        hl_check_spans("ReduceXorSum", {span("sharedTmpBuffer", *tmp, tmp->GetSize())}, loc);
        hl_check_tmp_bytes("ReduceXorSum", tmp->GetSize(), tmp_model::elementwise_min_bytes("ReduceXorSum", 2), loc);
    }
    if (!count_only()) {
        int64_t acc = 0;
        for (uint32_t i = 0; i < calCount; ++i)
            acc += static_cast<int64_t>(ld<T>(ub_at(src0Tensor.addr_ + i * sizeof(T))) ^ ld<T>(ub_at(src1Tensor.addr_ + i * sizeof(T))));
        st<T>(ub_at(dstTensor.addr_), static_cast<T>(acc));
    }
    const HlSpan reads[2] = {a, b};
    composite_cost(dtype_of<T>(), calCount, sizeof(T), reads, 2, d, {{"Or", 1}, {"And", 2}, {"Not", 1}, {"ReduceSum", 1}});
}
template <typename T, bool isReuseSource = false>
inline void ReduceXorSum(LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                         LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount, CANNSIM_LOC) {
    ReduceXorSum<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, &sharedTmpBuffer, calCount, loc);
}
template <typename T, bool isReuseSource = false>
inline void ReduceXorSum(LocalTensor<T>& dstTensor, const LocalTensor<T>& src0Tensor, const LocalTensor<T>& src1Tensor,
                         const uint32_t calCount, CANNSIM_LOC) {
    ReduceXorSum<T, isReuseSource>(dstTensor, src0Tensor, src1Tensor, (const LocalTensor<uint8_t>*)nullptr, calCount, loc);
}

// ---- RepeatReduceSum: the sum of each repeat (continuous mask only) to dst[r * dstRepStride] ----
template <typename T, bool isSetMask = true>
inline void RepeatReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,
                            const int32_t mask, const int32_t dstBlkStride, const int32_t srcBlkStride,
                            const int32_t dstRepStride, const int32_t srcRepStride, CANNSIM_LOC) {
    (void)dstBlkStride;   // one value per repeat: the block stride of dst has nothing to stride
    cannsim::hl_check_dtype("RepeatReduceSum", cannsim::dtype_of<T>(), loc);
    auto L = cannsim::mask_lanes("RepeatReduceSum", static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::reduce_per_repeat("RepeatReduceSum", cannsim::RKind::Sum, dst, src, L, dstRepStride, srcBlkStride, srcRepStride,
                               ReduceOrder::ORDER_ONLY_VALUE, loc);
}

}  // namespace AscendC
