// Quantization libraries: AscendQuant (per tensor and per channel, to int8), AscendDequant
// (int32 rows times a per-column scale) and AscendAntiQuant (int8 to half/bfloat16 with offset and
// scale), with their host helpers in hl_host.h.
//
// AscendQuant follows the documented steps: src, scale and offset go to half, y = src * scale +
// offset in half, then half -> int8 rounding to nearest even with saturation (NaN gives 0, as in
// Cast). AscendDequant computes float(src) * scale in float, rounded once to the output type;
// AscendAntiQuant (src + offset) * scale in float, rounded once.
#pragma once
#include "cast.h"
#include "hl_common.h"
#include "hl_types.h"

namespace AscendC {

struct DequantParams {
    uint32_t m = 1;          // rows
    uint32_t n = 0;          // src columns (int32, 32 B aligned)
    uint32_t calCount = 0;   // columns dequantised per row
};
enum class DeQuantMode { DEQUANT_WITH_SINGLE_ROW = 0, DEQUANT_WITH_MULTI_ROW };
struct AntiQuantShapeInfo {
    uint32_t offsetHeight = 0, offsetWidth = 0, scaleHeight = 0, scaleWidth = 0;
};

}  // namespace AscendC

namespace cannsim {

inline double half_round(double v) { return to_d(half(static_cast<float>(v))); }

// dst[i] = int8(half(half(src[i]) * half(scale_i)) + half(offset_i)), scale/offset per i % count.
template <typename T, typename S>
inline void ascend_quant(const AscendC::LocalTensor<int8_t>& dst, const AscendC::LocalTensor<T>& src,
                         const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::LocalTensor<S>* scaleT, double scale,
                         uint32_t scaleCount, const AscendC::LocalTensor<S>* offsetT, double offset,
                         uint32_t offsetCount, int64_t count, const SrcLoc& loc) {
    const char* api = "AscendQuant";
    hl_check_dtype(api, dtype_of<T>(), loc);
    const uint64_t n = count > 0 ? static_cast<uint64_t>(count) : 0;
    const HlSpan d = span("dstTensor", dst, n, true), s = span("srcTensor", src, n);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    if (scaleT) {
        if (scaleCount == 0 || n % scaleCount != 0)
            hl_param_error(api, loc, fmt("AscendQuant calCount %llu is not a multiple of scaleCount %u",
                                         (unsigned long long)n, scaleCount));
        hl_check_spans(api, {span("scaleTensor", *scaleT, scaleCount)}, loc);
    }
    if (offsetT) {
        if (offsetCount == 0 || n % offsetCount != 0)
            hl_param_error(api, loc, fmt("AscendQuant calCount %llu is not a multiple of offsetCount %u",
                                         (unsigned long long)n, offsetCount));
        hl_check_spans(api, {span("offsetTensor", *offsetT, offsetCount)}, loc);
    }
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::elementwise_min_bytes(api, sizeof(T)), loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only() && (!scaleT || scaleCount) && (!offsetT || offsetCount)) {
        for (uint64_t i = 0; i < n; ++i) {
            const double x = half_round(to_d(ld<T>(ub_at(src.addr_ + i * sizeof(T)))));
            const double sc = half_round(scaleT ? to_d(ld<S>(ub_at(scaleT->addr_ + (i % scaleCount) * sizeof(S)))) : scale);
            const double of = half_round(offsetT ? to_d(ld<S>(ub_at(offsetT->addr_ + (i % offsetCount) * sizeof(S)))) : offset);
            const double y = half_round(half_round(x * sc) + of);
            st<int8_t>(ub_at(dst.addr_ + i), cast_value<int8_t>(y, AscendC::RoundMode::CAST_RINT));
        }
    }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), n, sizeof(T), reads, 1, d,
                   {{"Cast", sizeof(T) == 4 ? 2.0 : 1.0}, {scaleT ? "Mul" : "Muls", 1}, {offsetT ? "Add" : "Adds", 1}});
}

}  // namespace cannsim

namespace AscendC {

// ---- AscendQuant: per tensor (float scale, offset) ----
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                        const uint32_t calCount, CANNSIM_LOC) {
    cannsim::ascend_quant<T, T>(dstTensor, srcTensor, &sharedTmpBuffer, nullptr, scale, 1, nullptr, offset, 1, calCount, loc);
}
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset, CANNSIM_LOC) {
    cannsim::ascend_quant<T, T>(dstTensor, srcTensor, &sharedTmpBuffer, nullptr, scale, 1, nullptr, offset, 1,
                                srcTensor.GetSize(), loc);
}
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                        const float offset, const uint32_t calCount, CANNSIM_LOC) {
    cannsim::ascend_quant<T, T>(dstTensor, srcTensor, nullptr, nullptr, scale, 1, nullptr, offset, 1, calCount, loc);
}
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                        const float offset, CANNSIM_LOC) {
    cannsim::ascend_quant<T, T>(dstTensor, srcTensor, nullptr, nullptr, scale, 1, nullptr, offset, 1, srcTensor.GetSize(), loc);
}
// ---- AscendQuant: per channel (scale tensor; offset tensor or scalar) ----
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                        const LocalTensor<T>& offsetTensor, const uint32_t scaleCount, const uint32_t offsetCount,
                        const uint32_t calCount, CANNSIM_LOC) {
    cannsim::ascend_quant(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, 0, scaleCount, &offsetTensor, 0,
                          offsetCount, calCount, loc);
}
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor, const uint32_t scaleCount,
                        const uint32_t offsetCount, const uint32_t calCount, CANNSIM_LOC) {
    cannsim::ascend_quant(dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, &scaleTensor, 0, scaleCount,
                          &offsetTensor, 0, offsetCount, calCount, loc);
}
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor, const T offset,
                        const uint32_t scaleCount, const uint32_t calCount, CANNSIM_LOC) {
    cannsim::ascend_quant(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, 0, scaleCount,
                          (const LocalTensor<T>*)nullptr, cannsim::to_d(offset), 1, calCount, loc);
}
template <typename T, bool isReuseSource = false>
inline void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<T>& scaleTensor, const T offset, const uint32_t scaleCount,
                        const uint32_t calCount, CANNSIM_LOC) {
    cannsim::ascend_quant(dstTensor, srcTensor, (const LocalTensor<uint8_t>*)nullptr, &scaleTensor, 0, scaleCount,
                          (const LocalTensor<T>*)nullptr, cannsim::to_d(offset), 1, calCount, loc);
}

// ---- AscendDequant: rows of int32 times a per-column scale ----
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                          const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>* tmp, DequantParams params,
                          const cannsim::SrcLoc& loc) {
    using namespace cannsim;
    const char* api = "AscendDequant";
    hl_check_dtype(api, dtype_of<dstT>(), loc);
    if (params.n == 0 || params.calCount == 0 || params.calCount > params.n || (params.n * 4) % 32 != 0) {
        hl_param_error(api, loc, fmt("AscendDequant DequantParams {m %u, n %u, calCount %u}: n must be a 32-byte "
                                     "aligned int32 row and 1 <= calCount <= n", params.m, params.n, params.calCount));
        return;
    }
    const uint32_t epb = 32 / sizeof(dstT);
    const uint32_t nd = (params.n + epb - 1) / epb * epb;    // dst row, 32 B aligned
    const HlSpan d = span("dstTensor", dstTensor, uint64_t(params.m) * nd, true);
    const HlSpan s = span("srcTensor", srcTensor, uint64_t(params.m) * params.n);
    hl_check_spans(api, {d, s, span("deqScale", deqScale, params.calCount)}, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::elementwise_min_bytes(api, 4), loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only())
        for (uint64_t r = 0; r < params.m; ++r)
            for (uint32_t j = 0; j < params.calCount; ++j) {
                double sc;
                if constexpr (std::is_same_v<scaleT, uint64_t>) {   // the float in the low 32 bits
                    const uint64_t bits = ld<uint64_t>(ub_at(deqScale.addr_ + j * 8));
                    float f; const uint32_t lo = static_cast<uint32_t>(bits); std::memcpy(&f, &lo, 4); sc = f;
                } else {
                    sc = to_d(ld<scaleT>(ub_at(deqScale.addr_ + j * sizeof(scaleT))));
                }
                const double x = static_cast<double>(ld<int32_t>(ub_at(srcTensor.addr_ + (r * params.n + j) * 4)));
                st<dstT>(ub_at(dstTensor.addr_ + (r * nd + j) * sizeof(dstT)),
                         from_d<dstT>(static_cast<double>(static_cast<float>(x) * static_cast<float>(sc))));
            }
    const HlSpan reads[1] = {s};
    composite_cost(DT_I32, uint64_t(params.m) * params.n, 4, reads, 1, d, {{"Cast", 2}, {"Mul", 1}});
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                          const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                          DequantParams params, CANNSIM_LOC) {
    AscendDequant<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, &sharedTmpBuffer, params, loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                          const LocalTensor<scaleT>& deqScale, DequantParams params, CANNSIM_LOC) {
    AscendDequant<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, (const LocalTensor<uint8_t>*)nullptr, params, loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                          const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                          const uint32_t calCount, CANNSIM_LOC) {
    const uint32_t n = (calCount + 7) / 8 * 8;
    AscendDequant<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, &sharedTmpBuffer, DequantParams{1, n, calCount}, loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
inline void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                          const LocalTensor<scaleT>& deqScale, const uint32_t calCount, CANNSIM_LOC) {
    const uint32_t n = (calCount + 7) / 8 * 8;
    AscendDequant<dstT, scaleT, mode>(dstTensor, srcTensor, deqScale, (const LocalTensor<uint8_t>*)nullptr,
                                      DequantParams{1, n, calCount}, loc);
}

// ---- AscendAntiQuant: dst = (src + offset) * scale, per column (tensors of K... see shapeInfo) or scalars ----
namespace detail_quant {
template <typename In, typename Out>
inline void anti_quant(const LocalTensor<Out>& dst, const LocalTensor<In>& src, const LocalTensor<Out>* offsetT,
                       double offset, const LocalTensor<Out>* scaleT, double scale,
                       const LocalTensor<uint8_t>* tmp, uint32_t k, const AntiQuantShapeInfo& info, bool transpose,
                       const cannsim::SrcLoc& loc) {
    using namespace cannsim;
    const char* api = "AscendAntiQuant";
    hl_check_dtype(api, dtype_of<Out>(), loc);
    const uint64_t total = src.GetSize();
    const uint32_t width = scaleT ? (info.scaleWidth ? info.scaleWidth : scaleT->GetSize()) : 1;
    if (k == 0 || (scaleT && !transpose && total % width != 0)) {
        hl_param_error(api, loc, fmt("AscendAntiQuant k %u and a scale of %u columns do not divide the %llu-element src",
                                     k, width, (unsigned long long)total));
        return;
    }
    const HlSpan d = span("dst", dst, total, true), s = span("src", src, total);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::elementwise_min_bytes(api, sizeof(Out)), loc);
        hl_check_disjoint(api, t, d, loc);
    }
    if (!count_only())
        for (uint64_t i = 0; i < total; ++i) {
            // isTranspose = false: src is [k, n], one offset/scale per column; true: [n, k], per row.
            const uint64_t ch = !scaleT ? 0 : transpose ? i / k : i % width;
            const double of = offsetT ? to_d(ld<Out>(ub_at(offsetT->addr_ + ch * sizeof(Out)))) : offset;
            const double sc = scaleT ? to_d(ld<Out>(ub_at(scaleT->addr_ + ch * sizeof(Out)))) : scale;
            const double x = to_d(ld<In>(ub_at(src.addr_ + i * sizeof(In))));
            st<Out>(ub_at(dst.addr_ + i * sizeof(Out)),
                    from_d<Out>(static_cast<float>(static_cast<float>(x + of) * static_cast<float>(sc))));
        }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<Out>(), total, sizeof(Out), reads, 1, d, {{"Cast", 2}, {"Add", 1}, {"Mul", 1}});
}
}  // namespace detail_quant

template <typename InputDataType, typename OutputDataType, bool isTranspose = false>
inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                            const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                            const AntiQuantShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    detail_quant::anti_quant(dst, src, &offset, 0, &scale, 0, &sharedTmpBuffer, k, shapeInfo, isTranspose, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose = false>
inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                            const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                            const uint32_t k, const AntiQuantShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    detail_quant::anti_quant(dst, src, &offset, 0, &scale, 0, (const LocalTensor<uint8_t>*)nullptr, k, shapeInfo,
                             isTranspose, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose = false>
inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                            const LocalTensor<OutputDataType>& scale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                            const uint32_t k, const AntiQuantShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    detail_quant::anti_quant(dst, src, (const LocalTensor<OutputDataType>*)nullptr, 0, &scale, 0, &sharedTmpBuffer, k,
                             shapeInfo, isTranspose, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose = false>
inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                            const OutputDataType offset, const OutputDataType scale,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                            const AntiQuantShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    detail_quant::anti_quant(dst, src, (const LocalTensor<OutputDataType>*)nullptr, cannsim::to_d(offset),
                             (const LocalTensor<OutputDataType>*)nullptr, cannsim::to_d(scale), &sharedTmpBuffer, k,
                             shapeInfo, isTranspose, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose = false>
inline void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                            const OutputDataType offset, const OutputDataType scale, const uint32_t k,
                            const AntiQuantShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    detail_quant::anti_quant(dst, src, (const LocalTensor<OutputDataType>*)nullptr, cannsim::to_d(offset),
                             (const LocalTensor<OutputDataType>*)nullptr, cannsim::to_d(scale),
                             (const LocalTensor<uint8_t>*)nullptr, k, shapeInfo, isTranspose, loc);
}

}  // namespace AscendC
