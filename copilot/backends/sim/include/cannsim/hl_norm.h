// Row-wise library APIs: SoftMax (with and without sum/max outputs), SimpleSoftMax, LogSoftMax,
// RmsNorm and LayerNorm, with their tiling structs (hl_types.h) and host helpers (hl_host.h).
//
// Rows are the last axis: softmax over [m, k] (k 32-byte aligned, the first oriSrcK columns are
// the data when given), RmsNorm and LayerNorm over [B, S, H] (H 32-byte aligned; statistics over
// originalHLength). Computed in double, rounded once to the element type. sum/max outputs hold
// one 32-byte block per row, every element of it the row's value (documented).
#pragma once
#include <cmath>
#include "hl_common.h"
#include "hl_types.h"

namespace cannsim {

template <typename T> inline void check_last_axis_32b(const char* api, uint64_t k, const SrcLoc& loc) {
    if ((k * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("%s last axis of %llu elements is not 32-byte aligned (%llu bytes); pad it",
                                     api, (unsigned long long)k, (unsigned long long)(k * sizeof(T))));
}

enum class SmKind { Softmax, Log, Simple };

// Softmax of rows [m, k]; writes dst and, when given, sum/max (U per 32-byte block per row).
// Simple: uses the given sum/max instead of computing them.
template <typename T, typename U>
inline void softmax_rows(const char* api, SmKind kind, const AscendC::LocalTensor<T>& dst,
                         const AscendC::LocalTensor<U>* sum, const AscendC::LocalTensor<U>* max,
                         const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp,
                         const AscendC::tiling::SoftMaxTiling& tiling, const AscendC::SoftMaxShapeInfo& info,
                         const SrcLoc& loc) {
    hl_check_dtype(api, dtype_of<T>(), loc);
    const uint32_t m = info.srcM ? info.srcM : tiling.srcM;
    const uint32_t k = info.srcK ? info.srcK : tiling.srcK;
    if (m == 0 || k == 0) {
        hl_param_error(api, loc, fmt("%s has no shape: SoftMaxShapeInfo is empty and the tiling::SoftMaxTiling was not filled "
                                     "(SoftMaxTilingFunc on the host)", api));
        return;
    }
    check_last_axis_32b<T>(api, k, loc);
    const uint32_t ok = info.oriSrcK ? info.oriSrcK : k, om = info.oriSrcM ? info.oriSrcM : m;
    if (ok > k || om > m)
        hl_param_error(api, loc, fmt("%s oriSrcM/oriSrcK (%u, %u) exceed srcM/srcK (%u, %u)", api, om, ok, m, k));
    const uint64_t n = uint64_t(m) * k, blk = 32 / sizeof(U);
    const HlSpan d = span("dstTensor", dst, n, true), s = span("srcTensor", src, n);
    hl_check_spans(api, {d, s}, loc);
    HlSpan sm[2] = {s, s};
    int nsm = 0;
    for (const AscendC::LocalTensor<U>* t : {sum, max})
        if (t) {
            sm[nsm] = span(nsm == 0 ? "sumTensor" : "maxTensor", *t, uint64_t(m) * blk, kind != SmKind::Simple);
            hl_check_spans(api, {sm[nsm]}, loc);
            hl_check_disjoint(api, sm[nsm], d, loc);
            ++nsm;
        }
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::rowwise_min_bytes(k, tmp_model::kSoftmaxBuffers), loc,
                           "sharedTmpBuffer");
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
        for (int i = 0; i < nsm; ++i) hl_check_disjoint(api, t, sm[i], loc);
    }
    if (!count_only()) {
        std::vector<double> row(k);
        for (uint64_t r = 0; r < m; ++r) {
            const uint8_t* sp = ub_at(src.addr_ + r * k * sizeof(T));
            double mx = -INFINITY, sm_ = 0;
            for (uint32_t j = 0; j < k; ++j) row[j] = to_d(ld<T>(sp + j * sizeof(T)));
            if (kind == SmKind::Simple) {
                sm_ = to_d(ld<U>(ub_at(sum->addr_ + r * blk * sizeof(U))));
                mx = to_d(ld<U>(ub_at(max->addr_ + r * blk * sizeof(U))));
            } else {
                bool nan = false;
                for (uint32_t j = 0; j < ok; ++j) { nan |= std::isnan(row[j]); mx = std::max(mx, row[j]); }
                if (nan) mx = NAN;
                for (uint32_t j = 0; j < ok; ++j) sm_ += std::exp(row[j] - mx);
            }
            uint8_t* dp = ub_at(dst.addr_ + r * k * sizeof(T));
            for (uint32_t j = 0; j < k; ++j) {
                double v = 0;
                if (j < ok) v = kind == SmKind::Log ? (row[j] - mx) - std::log(sm_) : std::exp(row[j] - mx) / sm_;
                st<T>(dp + j * sizeof(T), from_d<T>(v));
            }
            if (kind != SmKind::Simple)
                for (uint64_t b = 0; b < blk; ++b) {
                    if (sum) st<U>(ub_at(sum->addr_ + (r * blk + b) * sizeof(U)), from_d<U>(sm_));
                    if (max) st<U>(ub_at(max->addr_ + (r * blk + b) * sizeof(U)), from_d<U>(mx));
                }
        }
    }
    const double cast = sizeof(T) == 2 ? 2.0 : 0.0;
    const HlSpan reads[1] = {s};
    if (kind == SmKind::Simple)
        composite_cost(dtype_of<T>(), n, sizeof(T), reads, 1, d, {{"Cast", cast}, {"Sub", 1}, {"Exp", 1}, {"Div", 1}});
    else
        composite_cost(dtype_of<T>(), n, sizeof(T), reads, 1, d,
                       {{"Cast", cast}, {"ReduceMax", 1}, {"Sub", 1}, {"Exp", 1}, {"ReduceSum", 1},
                        {kind == SmKind::Log ? "Ln" : "Div", 1}});
    for (int i = 0; i < nsm; ++i) mark_written(sm[i].slot, PIPE_V);
}

// RmsNorm / LayerNorm over rows of H (statistics over the first originalHLength elements).
template <typename T>
inline void norm_rows(const char* api, bool layer, const AscendC::LocalTensor<T>& dst,
                      const AscendC::LocalTensor<T>* mean, const AscendC::LocalTensor<T>* var,
                      const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<T>& gamma,
                      const AscendC::LocalTensor<T>* beta, const AscendC::LocalTensor<uint8_t>* tmp, double eps,
                      uint32_t B, uint32_t S, uint32_t H, uint32_t oriH, const SrcLoc& loc) {
    hl_check_dtype(api, dtype_of<T>(), loc);
    if (B == 0 || S == 0 || H == 0) {
        hl_param_error(api, loc, fmt("%s tiling has no shape (bLength %u, sLength %u, hLength %u): fill it on the host "
                                     "with %s", api, B, S, H, layer ? "GetLayerNormNDTilingInfo" : "GetRmsNormTilingInfo"));
        return;
    }
    check_last_axis_32b<T>(api, H, loc);
    if (oriH == 0) oriH = H;
    if (oriH > H) hl_param_error(api, loc, fmt("%s originalHLength %u exceeds hLength %u", api, oriH, H));
    oriH = std::min(oriH, H);
    const uint64_t rows = uint64_t(B) * S, n = rows * H;
    const HlSpan d = span(layer ? "output" : "dstLocal", dst, n, true), s = span(layer ? "inputX" : "srcLocal", src, n);
    const HlSpan g = span("gamma", gamma, H);
    hl_check_spans(api, {d, s, g}, loc);
    if (beta) hl_check_spans(api, {span("beta", *beta, H)}, loc);
    if (layer) {
        hl_check_spans(api, {span("outputMean", *mean, rows, true), span("outputVariance", *var, rows, true)}, loc);
        hl_check_disjoint(api, d, span("outputMean", *mean, rows, true), loc);
        hl_check_disjoint(api, d, span("outputVariance", *var, rows, true), loc);
    }
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(),
                           tmp_model::rowwise_min_bytes(H, layer ? tmp_model::kLayerNormBuffers : tmp_model::kRmsNormBuffers),
                           loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only()) {
        std::vector<double> x(H);
        for (uint64_t r = 0; r < rows; ++r) {
            for (uint32_t j = 0; j < H; ++j) x[j] = to_d(ld<T>(ub_at(src.addr_ + (r * H + j) * sizeof(T))));
            double mu = 0, v = 0;
            if (layer) {
                for (uint32_t j = 0; j < oriH; ++j) mu += x[j];
                mu /= oriH;
                for (uint32_t j = 0; j < oriH; ++j) v += (x[j] - mu) * (x[j] - mu);
                v /= oriH;
                st<T>(ub_at(mean->addr_ + r * sizeof(T)), from_d<T>(mu));
                st<T>(ub_at(var->addr_ + r * sizeof(T)), from_d<T>(v));
            } else {
                for (uint32_t j = 0; j < oriH; ++j) v += x[j] * x[j];
                v /= oriH;
            }
            const double inv = 1.0 / std::sqrt(v + eps);
            for (uint32_t j = 0; j < H; ++j) {
                const double gj = to_d(ld<T>(ub_at(gamma.addr_ + j * sizeof(T))));
                double y = (x[j] - mu) * inv * gj;
                if (beta) y += to_d(ld<T>(ub_at(beta->addr_ + j * sizeof(T))));
                st<T>(ub_at(dst.addr_ + (r * H + j) * sizeof(T)), from_d<T>(y));
            }
        }
    }
    const double cast = sizeof(T) == 2 ? 2.0 : 0.0;
    const HlSpan reads[2] = {s, g};
    if (layer)
        composite_cost(dtype_of<T>(), n, sizeof(T), reads, 2, d,
                       {{"Cast", cast}, {"ReduceSum", 2}, {"Sub", 1}, {"Mul", 3}, {"Add", 1}, {"Rsqrt", 1.0 / H}});
    else
        composite_cost(dtype_of<T>(), n, sizeof(T), reads, 2, d,
                       {{"Cast", cast}, {"Mul", 3}, {"ReduceSum", 1}, {"Rsqrt", 1.0 / H}});
    if (layer) { mark_written(mean->slot_, PIPE_V); mark_written(var->slot_, PIPE_V); }
}

// Softmax backward over rows: s = rowsum(grad * y); dst = front ? s (one 32-byte block per row, or
// broadcast over the row) : (grad - s) * y.
template <typename T>
inline void softmax_grad_rows(const char* api, bool front, bool block_out, const AscendC::LocalTensor<T>& dst,
                              const AscendC::LocalTensor<T>& grad, const AscendC::LocalTensor<T>& src,
                              const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::tiling::SoftMaxTiling& tiling,
                              const AscendC::SoftMaxShapeInfo& info, const SrcLoc& loc) {
    hl_check_dtype("SoftMax", dtype_of<T>(), loc, api);
    const uint32_t m = info.srcM ? info.srcM : tiling.srcM, k = info.srcK ? info.srcK : tiling.srcK;
    if (m == 0 || k == 0) {
        hl_param_error(api, loc, fmt("%s has no shape: SoftMaxShapeInfo is empty and the tiling::SoftMaxTiling was not filled", api));
        return;
    }
    check_last_axis_32b<T>(api, k, loc);
    const uint32_t ok = info.oriSrcK ? std::min(info.oriSrcK, k) : k;
    const uint64_t n = uint64_t(m) * k, blk = 32 / sizeof(T);
    const HlSpan d = span("dstTensor", dst, block_out ? m * blk : n, true), g = span("gradTensor", grad, n),
                 s = span("srcTensor", src, n);
    hl_check_spans(api, {d, g, s}, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::rowwise_min_bytes(k, tmp_model::kSoftmaxBuffers), loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, g, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only()) {
        std::vector<double> gv(k), yv(k);
        for (uint64_t r = 0; r < m; ++r) {
            double sum = 0;
            for (uint32_t j = 0; j < k; ++j) {
                gv[j] = to_d(ld<T>(ub_at(grad.addr_ + (r * k + j) * sizeof(T))));
                yv[j] = to_d(ld<T>(ub_at(src.addr_ + (r * k + j) * sizeof(T))));
                if (j < ok) sum += gv[j] * yv[j];
            }
            if (block_out) {
                for (uint64_t b = 0; b < blk; ++b) st<T>(ub_at(dst.addr_ + (r * blk + b) * sizeof(T)), from_d<T>(sum));
                continue;
            }
            for (uint32_t j = 0; j < k; ++j)
                st<T>(ub_at(dst.addr_ + (r * k + j) * sizeof(T)), from_d<T>(front ? sum : (gv[j] - sum) * yv[j]));
        }
    }
    const HlSpan reads[2] = {g, s};
    composite_cost(dtype_of<T>(), n, sizeof(T), reads, 2, d,
                   {{"Cast", sizeof(T) == 2 ? 3.0 : 0.0}, {"Mul", front ? 1.0 : 2.0}, {"ReduceSum", 1},
                    {"Sub", front ? 0.0 : 1.0}});
}

}  // namespace cannsim

namespace AscendC {

template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::SoftMaxTiling& tiling, bool isFront = false,
                        const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_grad_rows("SoftmaxGrad", isFront, false, dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling,
                               softmaxShapeInfo, loc);
}
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor, const LocalTensor<T>& srcTensor,
                        const tiling::SoftMaxTiling& tiling, bool isFront = false, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                        CANNSIM_LOC) {
    cannsim::softmax_grad_rows("SoftmaxGrad", isFront, false, dstTensor, gradTensor, srcTensor,
                               (const LocalTensor<uint8_t>*)nullptr, tiling, softmaxShapeInfo, loc);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
inline void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                             const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                             const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_grad_rows("SoftmaxGradFront", true, true, dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling,
                               softmaxShapeInfo, loc);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
inline void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                             const LocalTensor<T>& srcTensor, const tiling::SoftMaxTiling& tiling,
                             const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_grad_rows("SoftmaxGradFront", true, true, dstTensor, gradTensor, srcTensor,
                               (const LocalTensor<uint8_t>*)nullptr, tiling, softmaxShapeInfo, loc);
}

// ---- SoftMax: same or different sum/max types; with or without sum/max; tmp or not ----
#define CANNSIM_SOFTMAX_TEMPLATE                                                                                  \
    template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,     \
              const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
CANNSIM_SOFTMAX_TEMPLATE
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SoftMax", cannsim::SmKind::Softmax, dstTensor, &sumTensor, &maxTensor, srcTensor,
                          &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}
CANNSIM_SOFTMAX_TEMPLATE
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const tiling::SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SoftMax", cannsim::SmKind::Softmax, dstTensor, &sumTensor, &maxTensor, srcTensor,
                          (const LocalTensor<uint8_t>*)nullptr, tiling, softmaxShapeInfo, loc);
}
template <typename T1, typename T2, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T1>& dstTensor, const LocalTensor<T2>& sumTensor, const LocalTensor<T2>& maxTensor,
                    const LocalTensor<T1>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SoftMax", cannsim::SmKind::Softmax, dstTensor, &sumTensor, &maxTensor, srcTensor,
                          &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}
template <typename T1, typename T2, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftMax(const LocalTensor<T1>& dstTensor, const LocalTensor<T2>& sumTensor, const LocalTensor<T2>& maxTensor,
                    const LocalTensor<T1>& srcTensor, const tiling::SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SoftMax", cannsim::SmKind::Softmax, dstTensor, &sumTensor, &maxTensor, srcTensor,
                          (const LocalTensor<uint8_t>*)nullptr, tiling, softmaxShapeInfo, loc);
}
CANNSIM_SOFTMAX_TEMPLATE
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SoftMax", cannsim::SmKind::Softmax, dstTensor, (const LocalTensor<T>*)nullptr,
                          (const LocalTensor<T>*)nullptr, srcTensor, &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}
CANNSIM_SOFTMAX_TEMPLATE
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const tiling::SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SoftMax", cannsim::SmKind::Softmax, dstTensor, (const LocalTensor<T>*)nullptr,
                          (const LocalTensor<T>*)nullptr, srcTensor, (const LocalTensor<uint8_t>*)nullptr, tiling,
                          softmaxShapeInfo, loc);
}

// SimpleSoftMax: exp(x - inMax) / inSum with the given per-row max and sum.
CANNSIM_SOFTMAX_TEMPLATE
inline void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                          const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                          const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::SoftMaxTiling& tiling,
                          const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SimpleSoftMax", cannsim::SmKind::Simple, dstTensor, &inSumTensor, &inMaxTensor, srcTensor,
                          &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}
CANNSIM_SOFTMAX_TEMPLATE
inline void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                          const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor, const tiling::SoftMaxTiling& tiling,
                          const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("SimpleSoftMax", cannsim::SmKind::Simple, dstTensor, &inSumTensor, &inMaxTensor, srcTensor,
                          (const LocalTensor<uint8_t>*)nullptr, tiling, softmaxShapeInfo, loc);
}

// LogSoftMax: (x - max) - ln(sum), with the row sum and max written out.
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
inline void LogSoftMax(const LocalTensor<T>& dst, const LocalTensor<T>& sum, const LocalTensor<T>& max,
                       const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                       const tiling::LogSoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_rows("LogSoftMax", cannsim::SmKind::Log, dst, &sum, &max, src, &sharedTmpBuffer, tiling,
                          softmaxShapeInfo, loc);
}
#undef CANNSIM_SOFTMAX_TEMPLATE

// ---- RmsNorm: dst = x / sqrt(mean(x^2) + epsilon) * gamma over rows of H ----
template <typename T, bool isBasicBlock = false>
inline void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, const tiling::RmsNormTiling& tiling, CANNSIM_LOC) {
    cannsim::norm_rows("RmsNorm", false, dstLocal, (const LocalTensor<T>*)nullptr, (const LocalTensor<T>*)nullptr,
                       srcLocal, gammaLocal, (const LocalTensor<T>*)nullptr, &sharedTmpBuffer, cannsim::to_d(epsilon),
                       tiling.bLength, tiling.sLength, tiling.hLength, tiling.originalHLength, loc);
}
template <typename T, bool isBasicBlock = false>
inline void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
                    const T epsilon, const tiling::RmsNormTiling& tiling, CANNSIM_LOC) {
    cannsim::norm_rows("RmsNorm", false, dstLocal, (const LocalTensor<T>*)nullptr, (const LocalTensor<T>*)nullptr,
                       srcLocal, gammaLocal, (const LocalTensor<T>*)nullptr, (const LocalTensor<uint8_t>*)nullptr,
                       cannsim::to_d(epsilon), tiling.bLength, tiling.sLength, tiling.hLength, tiling.originalHLength, loc);
}

// ---- LayerNorm: output = (x - mean) / sqrt(var + epsilon) * gamma + beta; mean and variance per row ----
template <typename T, bool isReuseSource = false>
inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                      const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, tiling::LayerNormTiling& tiling, CANNSIM_LOC) {
    cannsim::norm_rows("LayerNorm", true, output, &outputMean, &outputVariance, inputX, gamma, &beta, &sharedTmpBuffer,
                       cannsim::to_d(epsilon), tiling.bLength, tiling.sLength, tiling.hLength, tiling.originalHLength, loc);
}
template <typename T, bool isReuseSource = false>
inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                      const T epsilon, tiling::LayerNormTiling& tiling, CANNSIM_LOC) {
    cannsim::norm_rows("LayerNorm", true, output, &outputMean, &outputVariance, inputX, gamma, &beta,
                       (const LocalTensor<uint8_t>*)nullptr, cannsim::to_d(epsilon), tiling.bLength, tiling.sLength,
                       tiling.hLength, tiling.originalHLength, loc);
}

// ---- Normalize: y = (x - mean) * rstd * gamma + beta with rstd = 1 / sqrt(variance + epsilon), rows [A, R] ----
enum class ReducePattern { AR = 0, RA };
struct NormalizePara {
    uint32_t aLength = 0;
    uint32_t rLength = 0;
    uint32_t rLengthWithPadding = 0;
};
struct NormalizeConfig {
    ReducePattern reducePattern = ReducePattern::AR;
    int32_t aLength = -1;
    bool isNoBeta = false;
    bool isNoGamma = false;
    bool isOnlyOutput = false;
};
constexpr NormalizeConfig NORMALIZE_DEFAULT_CFG = {ReducePattern::AR, -1, false, false, false};

namespace detail_normalize {
template <typename U, typename T>
inline void run(const LocalTensor<T>& out, const LocalTensor<float>& rstd, const LocalTensor<float>& mean,
                const LocalTensor<float>& var, const LocalTensor<T>& x, const LocalTensor<U>& gamma,
                const LocalTensor<U>& beta, const LocalTensor<uint8_t>* tmp, float eps, const NormalizePara& p,
                const NormalizeConfig& cfg, const cannsim::SrcLoc& loc) {
    using namespace cannsim;
    hl_check_dtype("Normalize", dtype_of<T>(), loc);
    if (sizeof(U) < sizeof(T))
        hl_param_error("Normalize", loc, "Normalize gamma/beta must be at least as precise as inputX");
    const uint64_t A = p.aLength, R = p.rLength, RP = p.rLengthWithPadding ? p.rLengthWithPadding : p.rLength;
    if (A == 0 || R == 0 || R > RP || (RP * sizeof(T)) % 32 != 0) {
        hl_param_error("Normalize", loc, fmt("Normalize NormalizePara {aLength %llu, rLength %llu, rLengthWithPadding %llu}: "
                                             "non-empty, rLength <= rLengthWithPadding, padded rows 32-byte aligned",
                                             (unsigned long long)A, (unsigned long long)R, (unsigned long long)RP));
        return;
    }
    const HlSpan d = span("output", out, A * RP, true), s = span("inputX", x, A * RP);
    hl_check_spans("Normalize", {d, s, span("inputMean", mean, A), span("inputVariance", var, A)}, loc);
    if (!cfg.isOnlyOutput) hl_check_spans("Normalize", {span("outputRstd", rstd, A, true)}, loc);
    if (!cfg.isNoGamma) hl_check_spans("Normalize", {span("gamma", gamma, R)}, loc);
    if (!cfg.isNoBeta) hl_check_spans("Normalize", {span("beta", beta, R)}, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans("Normalize", {t}, loc);
        hl_check_tmp_bytes("Normalize", tmp->GetSize(), tmp_model::rowwise_min_bytes(static_cast<uint32_t>(RP), 1), loc);
        hl_check_disjoint("Normalize", t, d, loc);
        hl_check_disjoint("Normalize", t, s, loc);
    }
    if (!count_only())
        for (uint64_t a = 0; a < A; ++a) {
            const double mu = ld<float>(ub_at(mean.addr_ + a * 4)), v = ld<float>(ub_at(var.addr_ + a * 4));
            const double rs = 1.0 / std::sqrt(v + eps);
            if (!cfg.isOnlyOutput) st<float>(ub_at(rstd.addr_ + a * 4), static_cast<float>(rs));
            for (uint64_t j = 0; j < R; ++j) {
                double y = (to_d(ld<T>(ub_at(x.addr_ + (a * RP + j) * sizeof(T)))) - mu) * rs;
                if (!cfg.isNoGamma) y *= to_d(ld<U>(ub_at(gamma.addr_ + j * sizeof(U))));
                if (!cfg.isNoBeta) y += to_d(ld<U>(ub_at(beta.addr_ + j * sizeof(U))));
                st<T>(ub_at(out.addr_ + (a * RP + j) * sizeof(T)), from_d<T>(y));
            }
        }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), A * RP, sizeof(T), reads, 1, d,
                   {{"Cast", sizeof(T) == 2 ? 2.0 : 0.0}, {"Sub", 1}, {"Mul", 2}, {"Add", 1}, {"Rsqrt", 1.0 / double(RP)}});
    if (!cfg.isOnlyOutput) mark_written(rstd.slot_, PIPE_V);
}
}  // namespace detail_normalize

template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NORMALIZE_DEFAULT_CFG>
inline void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd, const LocalTensor<float>& inputMean,
                      const LocalTensor<float>& inputVariance, const LocalTensor<T>& inputX, const LocalTensor<U>& gamma,
                      const LocalTensor<U>& beta, const LocalTensor<uint8_t>& sharedTmpBuffer, const float epsilon,
                      const NormalizePara& para, CANNSIM_LOC) {
    detail_normalize::run(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta, &sharedTmpBuffer, epsilon, para,
                          config, loc);
}
template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NORMALIZE_DEFAULT_CFG>
inline void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd, const LocalTensor<float>& inputMean,
                      const LocalTensor<float>& inputVariance, const LocalTensor<T>& inputX, const LocalTensor<U>& gamma,
                      const LocalTensor<U>& beta, const float epsilon, const NormalizePara& para, CANNSIM_LOC) {
    detail_normalize::run(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta,
                          (const LocalTensor<uint8_t>*)nullptr, epsilon, para, config, loc);
}

}  // namespace AscendC
