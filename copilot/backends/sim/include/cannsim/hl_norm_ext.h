// Further normalization libraries: BatchNorm, DeepNorm, GroupNorm, LayerNormGrad, LayerNormGradBeta,
// WelfordUpdate and WelfordFinalize (tiling structs and tmp model in hl_types_ext.h, host helpers
// in hl_host_ext.h). Computed in double, rounded once to the element type; variances are the
// population ones (divided by the element count).
//
// BatchNorm over [B, S, H]: mean/variance per (s, h) over the batch axis (the first originalBLength
// batches), y = gamma[b] * (x - mean) / sqrt(var + eps) + beta[b] (gamma and beta have shape [B]).
// DeepNorm: LayerNorm over H of alpha * x + gx; meanLocal gets the mean, rstdLocal the variance (as
// the reference's example values show). GroupNorm over [N, C, H, W] with groupNum groups of C:
// mean/variance per (n, group), y = gamma[c] * (x - mean) / sqrt(var + eps) + beta[c].
// LayerNormGrad: the reference's formulas (pd_var, pd_mean over H; resForGamma = (x - mean) * rstd).
// LayerNormGradBeta: pdGamma[h] = sum over B*S of dy * resForGamma, pdBeta[h] = sum of dy.
// WelfordUpdate per lane j < abComputeLength: d = x - mean; mean' = mean + d * nRec;
// M' = M + d * (x - mean'). WelfordFinalize combines the per-lane (mean, M) with lane counts c_j
// (headCount/tailCount, or counts): Mean = rRec * sum c_j mean_j,
// Var = rRec * sum (M_j + c_j (mean_j - Mean)^2) (rRecWithCorrection with isCorrection on Atlas 350).
#pragma once
#include <cmath>
#include "hl_common.h"
#include "hl_types_ext.h"

namespace cannsim {

inline const ApiDtypes kNormExtDtypes[] = {
    {"BatchNorm", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"DeepNorm", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"GroupNorm", HL_FLOATS, HL_FLOATS, 0},
    {"LayerNormGrad", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"LayerNormGradBeta", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"WelfordUpdate", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS},
    {"WelfordFinalize", DT_F32, DT_F32, DT_F32},
};
inline void norm_ext_dtype(const char* api, uint32_t dtype, const SrcLoc& loc) {
    check_dtype_row(api, row_of(kNormExtDtypes, api), dtype, loc);
}

template <typename T> inline double ldd(const AscendC::LocalTensor<T>& t, uint64_t i) { return to_d(ld<T>(ub_at(t.addr_ + i * sizeof(T)))); }
template <typename T> inline void std_(const AscendC::LocalTensor<T>& t, uint64_t i, double v) { st<T>(ub_at(t.addr_ + i * sizeof(T)), from_d<T>(v)); }

// The sharedTmpBuffer of a library call: live, in UB, big enough, apart from the other operands.
inline void norm_ext_tmp(const char* api, const AscendC::LocalTensor<uint8_t>* tmp, uint32_t need,
                         std::initializer_list<HlSpan> others, const SrcLoc& loc) {
    if (!tmp) return;
    const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
    hl_check_spans(api, {t}, loc);
    hl_check_tmp_bytes(api, tmp->GetSize(), need, loc);
    for (const HlSpan& o : others) hl_check_disjoint(api, t, o, loc);
}

template <typename T>
inline bool shape_ok(const char* api, uint32_t B, uint32_t S, uint32_t H, const char* helper, const SrcLoc& loc) {
    if (B && S && H) return true;
    hl_param_error(api, loc, fmt("%s tiling has no shape (bLength %u, sLength %u, hLength %u): fill it on the host with %s",
                                 api, B, S, H, helper));
    return false;
}

template <typename T>
inline void batch_norm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean, const AscendC::LocalTensor<T>& var,
                       const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<T>& beta,
                       const AscendC::LocalTensor<uint8_t>* tmp, double eps, const AscendC::tiling::BatchNormTiling& t,
                       const SrcLoc& loc) {
    const char* api = "BatchNorm";
    norm_ext_dtype(api, dtype_of<T>(), loc);
    if (!shape_ok<T>(api, t.bLength, t.sLength, t.hLength, "GetBatchNormNDTilingInfo", loc)) return;
    const uint64_t B = t.bLength, SH = uint64_t(t.sLength) * t.hLength, oB = t.originalBLength ? std::min(t.originalBLength, t.bLength) : B;
    if ((SH * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("BatchNorm S*H = %llu elements is not 32-byte aligned", (unsigned long long)SH));
    if ((B * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("BatchNorm gamma/beta of B = %llu elements are not 32-byte aligned", (unsigned long long)B));
    const HlSpan d = span("output", out, B * SH, true), s = span("inputX", x, B * SH);
    const HlSpan m = span("outputMean", mean, SH, true), v = span("outputVariance", var, SH, true);
    hl_check_spans(api, {d, s, m, v, span("gamm", gamma, B), span("beta", beta, B)}, loc);
    hl_check_disjoint(api, m, v, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(SH, tmp_model::kBatchNormBuffers), {d, s, m, v}, loc);
    if (!count_only())
        for (uint64_t j = 0; j < SH; ++j) {
            double mu = 0, vv = 0;
            for (uint64_t b = 0; b < oB; ++b) mu += ldd(x, b * SH + j);
            mu /= double(oB);
            for (uint64_t b = 0; b < oB; ++b) { const double e = ldd(x, b * SH + j) - mu; vv += e * e; }
            vv /= double(oB);
            const double inv = 1.0 / std::sqrt(vv + eps);
            for (uint64_t b = 0; b < B; ++b)
                std_(out, b * SH + j, ldd(gamma, b) * (ldd(x, b * SH + j) - mu) * inv + ldd(beta, b));
            std_(mean, j, mu);
            std_(var, j, vv);
        }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), B * SH, sizeof(T), reads, 1, d,
                   {{"Cast", sizeof(T) == 2 ? 2.0 : 0.0}, {"Add", 2}, {"Sub", 1}, {"Mul", 3}, {"Rsqrt", 1.0 / double(B)}});
    mark_written(mean.slot_, PIPE_V); mark_written(var.slot_, PIPE_V);
}

template <typename T>
inline void deep_norm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean, const AscendC::LocalTensor<T>& var,
                      const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<T>& gx, const AscendC::LocalTensor<T>& beta,
                      const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<uint8_t>* tmp, double alpha, double eps,
                      bool reuse_src, const AscendC::tiling::DeepNormTiling& t, const SrcLoc& loc) {
    const char* api = "DeepNorm";
    norm_ext_dtype(api, dtype_of<T>(), loc);
    if (!shape_ok<T>(api, t.bLength, t.sLength, t.hLength, "GetDeepNormTilingInfo", loc)) return;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, H = t.hLength;
    const uint64_t oH = t.originalHLength ? std::min(t.originalHLength, t.hLength) : H;
    if ((H * sizeof(T)) % 32 != 0 || H > 2040)
        hl_param_error(api, loc, fmt("DeepNorm H = %llu must be 32-byte aligned and at most 2040", (unsigned long long)H));
    if (reuse_src && sizeof(T) == 2) hl_param_error(api, loc, "DeepNorm isReuseSrc is supported for float only, not half");
    const HlSpan d = span("dstLocal", out, rows * H, true), s = span("srcLocal", x, rows * H), g = span("gxLocal", gx, rows * H);
    hl_check_spans(api, {d, s, g, span("meanLocal", mean, rows, true), span("rstdLocal", var, rows, true),
                         span("betaLocal", beta, H), span("gammaLocal", gamma, H)}, loc);
    if (!reuse_src) hl_check_disjoint(api, d, s, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(H, tmp_model::kDeepNormBuffers), {d, s, g}, loc);
    if (!count_only()) {
        std::vector<double> z(H);
        for (uint64_t r = 0; r < rows; ++r) {
            double mu = 0, vv = 0;
            for (uint64_t j = 0; j < H; ++j) z[j] = alpha * ldd(x, r * H + j) + ldd(gx, r * H + j);
            for (uint64_t j = 0; j < oH; ++j) mu += z[j];
            mu /= double(oH);
            for (uint64_t j = 0; j < oH; ++j) vv += (z[j] - mu) * (z[j] - mu);
            vv /= double(oH);
            const double inv = 1.0 / std::sqrt(vv + eps);
            for (uint64_t j = 0; j < H; ++j) std_(out, r * H + j, (z[j] - mu) * inv * ldd(gamma, j) + ldd(beta, j));
            std_(mean, r, mu);
            std_(var, r, vv);
        }
    }
    const HlSpan reads[2] = {s, g};
    composite_cost(dtype_of<T>(), rows * H, sizeof(T), reads, 2, d,
                   {{"Cast", sizeof(T) == 2 ? 3.0 : 0.0}, {"Axpy", 1}, {"ReduceSum", 2}, {"Sub", 1}, {"Mul", 3}, {"Add", 1},
                    {"Rsqrt", 1.0 / double(H)}});
    mark_written(mean.slot_, PIPE_V); mark_written(var.slot_, PIPE_V);
}

template <typename T>
inline void group_norm(const AscendC::LocalTensor<T>& out, const AscendC::LocalTensor<T>& mean, const AscendC::LocalTensor<T>& var,
                       const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<T>& beta,
                       const AscendC::LocalTensor<uint8_t>* tmp, double eps, const AscendC::tiling::GroupNormTiling& t,
                       const SrcLoc& loc) {
    const char* api = "GroupNorm";
    norm_ext_dtype(api, dtype_of<T>(), loc);
    const uint64_t N = t.n, C = t.c, HW = t.hw, G = t.g;
    if (!N || !C || !HW || !G || C % G != 0) {
        hl_param_error(api, loc, fmt("GroupNorm tiling {n %llu, c %llu, hw %llu, groupNum %llu}: non-empty, C a multiple of "
                                     "groupNum (fill it with GetGroupNormNDTilingInfo)",
                                     (unsigned long long)N, (unsigned long long)C, (unsigned long long)HW, (unsigned long long)G));
        return;
    }
    const uint64_t per = C / G * HW, n = N * C * HW;
    const HlSpan d = span("output", out, n, true), s = span("inputX", x, n);
    hl_check_spans(api, {d, s, span("outputMean", mean, N * G, true), span("outputVariance", var, N * G, true),
                         span("gamma", gamma, C), span("beta", beta, C)}, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(per, tmp_model::kGroupNormBuffers), {d, s}, loc);
    if (!count_only())
        for (uint64_t i = 0; i < N * G; ++i) {
            const uint64_t base = i * per;
            double mu = 0, vv = 0;
            for (uint64_t k = 0; k < per; ++k) mu += ldd(x, base + k);
            mu /= double(per);
            for (uint64_t k = 0; k < per; ++k) { const double e = ldd(x, base + k) - mu; vv += e * e; }
            vv /= double(per);
            const double inv = 1.0 / std::sqrt(vv + eps);
            for (uint64_t k = 0; k < per; ++k) {
                const uint64_t c = (i % G) * (C / G) + k / HW;
                std_(out, base + k, ldd(gamma, c) * (ldd(x, base + k) - mu) * inv + ldd(beta, c));
            }
            std_(mean, i, mu);
            std_(var, i, vv);
        }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), n, sizeof(T), reads, 1, d,
                   {{"Cast", sizeof(T) == 2 ? 2.0 : 0.0}, {"ReduceSum", 2}, {"Sub", 1}, {"Mul", 3}, {"Add", 1},
                    {"Rsqrt", 1.0 / double(per)}});
    mark_written(mean.slot_, PIPE_V); mark_written(var.slot_, PIPE_V);
}

template <typename T>
inline void layer_norm_grad(const AscendC::LocalTensor<T>& pdx, const AscendC::LocalTensor<T>& res, const AscendC::LocalTensor<T>& dy,
                            const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<T>& var, const AscendC::LocalTensor<T>& mean,
                            const AscendC::LocalTensor<T>& gamma, const AscendC::LocalTensor<uint8_t>* tmp, double eps,
                            const AscendC::tiling::LayerNormGradTiling& t, const SrcLoc& loc) {
    const char* api = "LayerNormGrad";
    norm_ext_dtype(api, dtype_of<T>(), loc);
    if (!shape_ok<T>(api, t.bLength, t.sLength, t.hLength, "GetLayerNormGradNDTilingInfo", loc)) return;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, H = t.hLength;
    const uint64_t oH = t.originalHLength ? std::min(t.originalHLength, t.hLength) : H;
    if ((H * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("LayerNormGrad H = %llu is not 32-byte aligned; pad it with zeros", (unsigned long long)H));
    const HlSpan d = span("outputPdX", pdx, rows * H, true), r = span("resForGamma", res, rows * H, true);
    const HlSpan sdy = span("inputDy", dy, rows * H), sx = span("inputX", x, rows * H);
    hl_check_spans(api, {d, r, sdy, sx, span("inputVariance", var, rows), span("inputMean", mean, rows),
                         span("inputGamma", gamma, H)}, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(H, tmp_model::kLayerNormGradBuffers), {d, r, sdy, sx}, loc);
    if (!count_only()) {
        std::vector<double> xl(H), xm(H);
        for (uint64_t row = 0; row < rows; ++row) {
            const double mu = ldd(mean, row), v = ldd(var, row) + eps;
            const double rs = 1.0 / std::sqrt(v);
            double pd_var = 0, sum_xl = 0, sum_xm = 0;
            for (uint64_t j = 0; j < H; ++j) {
                xl[j] = ldd(dy, row * H + j) * ldd(gamma, j);
                xm[j] = ldd(x, row * H + j) - mu;
                if (j < oH) { pd_var += -0.5 * xl[j] * xm[j] * rs * rs * rs; sum_xl += -xl[j] * rs; sum_xm += -2.0 * xm[j]; }
            }
            const double pd_mean = sum_xl + pd_var / double(oH) * sum_xm;
            for (uint64_t j = 0; j < H; ++j) {
                std_(pdx, row * H + j, xl[j] * rs + pd_var * 2.0 / double(oH) * xm[j] + pd_mean / double(oH));
                std_(res, row * H + j, xm[j] * rs);
            }
        }
    }
    const HlSpan reads[2] = {sdy, sx};
    composite_cost(dtype_of<T>(), rows * H, sizeof(T), reads, 2, d,
                   {{"Cast", sizeof(T) == 2 ? 4.0 : 0.0}, {"Mul", 6}, {"Sub", 1}, {"Add", 2}, {"ReduceSum", 3},
                    {"Sqrt", 1.0 / double(H)}, {"Div", 1.0 / double(H)}});
    mark_written(res.slot_, PIPE_V);
}

template <typename T>
inline void layer_norm_grad_beta(const AscendC::LocalTensor<T>& pdg, const AscendC::LocalTensor<T>& pdb,
                                 const AscendC::LocalTensor<T>& res, const AscendC::LocalTensor<T>& dy,
                                 const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::tiling::LayerNormGradBetaTiling& t,
                                 const SrcLoc& loc) {
    const char* api = "LayerNormGradBeta";
    norm_ext_dtype(api, dtype_of<T>(), loc);
    if (!shape_ok<T>(api, t.bLength, t.sLength, t.hLength, "GetLayerNormGradBetaNDTilingInfo", loc)) return;
    const uint64_t rows = uint64_t(t.bLength) * t.sLength, H = t.hLength;
    if ((H * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("LayerNormGradBeta H = %llu is not 32-byte aligned", (unsigned long long)H));
    const HlSpan g = span("outputPdGamma", pdg, H, true), b = span("outputPdBeta", pdb, H, true);
    const HlSpan r = span("resForGamma", res, rows * H), sdy = span("inputDy", dy, rows * H);
    hl_check_spans(api, {g, b, r, sdy}, loc);
    hl_check_disjoint(api, g, b, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(H, tmp_model::kLayerNormGradBetaBuffers), {g, b, r, sdy}, loc);
    if (!count_only())
        for (uint64_t j = 0; j < H; ++j) {
            double sg = 0, sb = 0;
            for (uint64_t row = 0; row < rows; ++row) {
                const double d = ldd(dy, row * H + j);
                sg += d * ldd(res, row * H + j);
                sb += d;
            }
            std_(pdg, j, sg);
            std_(pdb, j, sb);
        }
    const HlSpan reads[2] = {r, sdy};
    composite_cost(dtype_of<T>(), rows * H, sizeof(T), reads, 2, g, {{"Cast", sizeof(T) == 2 ? 2.0 : 0.0}, {"Mul", 1}, {"Add", 2}});
    mark_written(pdb.slot_, PIPE_V);
}

template <typename T, typename U>
inline void welford_update(const AscendC::LocalTensor<U>& om, const AscendC::LocalTensor<U>& ov, const AscendC::LocalTensor<U>& im,
                           const AscendC::LocalTensor<U>& iv, const AscendC::LocalTensor<T>& x, const AscendC::LocalTensor<uint8_t>* tmp,
                           const AscendC::WelfordUpdateParam& p, bool inplace, const SrcLoc& loc) {
    const char* api = "WelfordUpdate";
    norm_ext_dtype(api, dtype_of<T>(), loc);
    if (!std::is_same_v<U, float>)
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
               fmt("WelfordUpdate mean/variance tensors must be float, not %s", dtype_name(dtype_of<U>())));
    if (p.rnLength != 1 || p.abLength == 0 || (p.abLength * sizeof(T)) % 32 != 0 || p.abComputeLength == 0 ||
        p.abComputeLength > p.abLength) {
        hl_param_error(api, loc, fmt("WelfordUpdate WelfordUpdateParam {rnLength %u, abLength %u, abComputeLength %u}: rnLength "
                                     "must be 1, abLength a multiple of %u, 0 < abComputeLength <= abLength",
                                     p.rnLength, p.abLength, p.abComputeLength, unsigned(32 / sizeof(T))));
        if (p.abLength == 0) return;
    }
    const uint64_t n = p.abLength, k = std::min(p.abComputeLength, p.abLength);
    const HlSpan a = span("outputMean", om, n, true), b = span("outputVariance", ov, n, true);
    const HlSpan c = span("inputMean", im, n), d = span("inputVariance", iv, n), s = span("inputX", x, n);
    hl_check_spans(api, {a, b, c, d, s}, loc);
    for (const HlSpan* o : {&a, &b})
        for (const HlSpan* i : {&c, &d, &s}) hl_check_disjoint(api, *o, *i, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(n, tmp_model::kWelfordBuffers), {a, b, c, d, s}, loc);
    if (!count_only())
        for (uint64_t j = 0; j < n; ++j) {
            if (j >= k) {
                if (inplace) { std_(om, j, ldd(im, j)); std_(ov, j, ldd(iv, j)); }
                continue;
            }
            const double xv = ldd(x, j), m0 = ldd(im, j), delta = xv - m0;
            const double m1 = m0 + delta * double(p.nRec);
            std_(om, j, m1);
            std_(ov, j, ldd(iv, j) + delta * (xv - m1));
        }
    const HlSpan reads[3] = {c, d, s};
    composite_cost(dtype_of<U>(), n, sizeof(U), reads, 3, a, {{"Cast", sizeof(T) == 2 ? 1.0 : 0.0}, {"Sub", 2}, {"Muls", 1}, {"Add", 2}, {"Mul", 1}});
    mark_written(ov.slot_, PIPE_V);
}

inline void welford_finalize(const AscendC::LocalTensor<float>& om, const AscendC::LocalTensor<float>& ov,
                             const AscendC::LocalTensor<float>& im, const AscendC::LocalTensor<float>& iv,
                             const AscendC::LocalTensor<int32_t>* counts, const AscendC::LocalTensor<uint8_t>* tmp,
                             const AscendC::WelfordFinalizePara& p, bool correction, const SrcLoc& loc) {
    const char* api = "WelfordFinalize";
    const uint64_t n = p.abLength;
    if (n == 0 || (n * 4) % 32 != 0) {
        hl_param_error(api, loc, fmt("WelfordFinalize abLength %u must be a non-zero multiple of 8", p.abLength));
        if (n == 0) return;
    }
    if (!counts && p.headCountLength + p.tailCountLength != p.abLength)
        hl_param_error(api, loc, fmt("WelfordFinalize without counts needs headCountLength %u + tailCountLength %u = abLength %u",
                                     p.headCountLength, p.tailCountLength, p.abLength));
    if (correction && arch() != 3510)
        hl_param_error(api, loc, "WelfordFinalize isCorrection (rRecWithCorrection) exists only on Atlas 350");
    const HlSpan a = span("outputMean", om, 8, true), b = span("outputVariance", ov, 8, true);
    const HlSpan c = span("inputMean", im, n), d = span("inputVariance", iv, n);
    hl_check_spans(api, {a, b, c, d}, loc);
    if (counts) hl_check_spans(api, {span("counts", *counts, n)}, loc);
    hl_check_disjoint(api, a, b, loc);
    norm_ext_tmp(api, tmp, tmp_model::norm_ext_min_bytes(n, tmp_model::kWelfordBuffers), {a, b, c, d}, loc);
    if (!count_only()) {
        auto cnt = [&](uint64_t j) -> double {
            if (counts) return double(ld<int32_t>(ub_at(counts->addr_ + j * 4)));
            return j < p.headCountLength ? double(p.headCount) : double(p.tailCount);
        };
        double mu = 0;
        for (uint64_t j = 0; j < n; ++j) mu += cnt(j) * ldd(im, j);
        mu *= double(p.rRec);
        double vv = 0;
        for (uint64_t j = 0; j < n; ++j) { const double e = ldd(im, j) - mu; vv += ldd(iv, j) + cnt(j) * e * e; }
        vv *= double(correction ? p.rRecWithCorrection : p.rRec);
        std_(om, 0, mu);
        std_(ov, 0, vv);
    }
    const HlSpan reads[2] = {c, d};
    composite_cost(DT_F32, n, 4, reads, 2, a, {{"Mul", 3}, {"Sub", 1}, {"ReduceSum", 2}, {"Add", 1}});
    mark_written(ov.slot_, PIPE_V);
}

}  // namespace cannsim

namespace AscendC {

// ---- BatchNorm ----
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
inline void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamm, const LocalTensor<T>& beta, const T epsilon,
                      tiling::BatchNormTiling& tiling, CANNSIM_LOC) {
    cannsim::batch_norm(output, outputMean, outputVariance, inputX, gamm, beta, (const LocalTensor<uint8_t>*)nullptr,
                        cannsim::to_d(epsilon), tiling, loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
inline void BatchNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamm, const LocalTensor<T>& beta,
                      const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, tiling::BatchNormTiling& tiling, CANNSIM_LOC) {
    cannsim::batch_norm(output, outputMean, outputVariance, inputX, gamm, beta, &sharedTmpBuffer, cannsim::to_d(epsilon),
                        tiling, loc);
}

// ---- DeepNorm: LayerNorm(alpha * x + gx) ----
template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
inline void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal, const LocalTensor<T>& rstdLocal,
                     const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
                     const LocalTensor<T>& gammaLocal, const LocalTensor<uint8_t>& sharedTmpBuffer, const T alpha, const T epsilon,
                     tiling::DeepNormTiling& tiling, CANNSIM_LOC) {
    cannsim::deep_norm(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal, gammaLocal, &sharedTmpBuffer,
                       cannsim::to_d(alpha), cannsim::to_d(epsilon), isReuseSrc, tiling, loc);
}
template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
inline void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal, const LocalTensor<T>& rstdLocal,
                     const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
                     const LocalTensor<T>& gammaLocal, const T alpha, const T epsilon, tiling::DeepNormTiling& tiling, CANNSIM_LOC) {
    cannsim::deep_norm(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal, gammaLocal,
                       (const LocalTensor<uint8_t>*)nullptr, cannsim::to_d(alpha), cannsim::to_d(epsilon), isReuseSrc, tiling, loc);
}

// ---- GroupNorm ----
template <typename T, bool isReuseSource = false>
inline void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta, const T epsilon,
                      tiling::GroupNormTiling& tiling, CANNSIM_LOC) {
    cannsim::group_norm(output, outputMean, outputVariance, inputX, gamma, beta, (const LocalTensor<uint8_t>*)nullptr,
                        cannsim::to_d(epsilon), tiling, loc);
}
template <typename T, bool isReuseSource = false>
inline void GroupNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
                      const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                      const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, tiling::GroupNormTiling& tiling, CANNSIM_LOC) {
    cannsim::group_norm(output, outputMean, outputVariance, inputX, gamma, beta, &sharedTmpBuffer, cannsim::to_d(epsilon), tiling,
                        loc);
}

// ---- LayerNormGrad / LayerNormGradBeta ----
struct LayerNormGradShapeInfo {
    DataFormat dataFormat = DataFormat::ND;
};
template <typename T, bool isReuseSource = false>
inline void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                          const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                          const LocalTensor<T>& inputGamma, LocalTensor<uint8_t>& sharedTmpBuffer, T epsilon,
                          tiling::LayerNormGradTiling& tiling, const LayerNormGradShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    (void)shapeInfo;
    cannsim::layer_norm_grad(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean, inputGamma, &sharedTmpBuffer,
                             cannsim::to_d(epsilon), tiling, loc);
}
template <typename T, bool isReuseSource = false>
inline void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                          const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                          const LocalTensor<T>& inputGamma, T epsilon, tiling::LayerNormGradTiling& tiling,
                          const LayerNormGradShapeInfo& shapeInfo = {}, CANNSIM_LOC) {
    (void)shapeInfo;
    cannsim::layer_norm_grad(outputPdX, resForGamma, inputDy, inputX, inputVariance, inputMean, inputGamma,
                             (const LocalTensor<uint8_t>*)nullptr, cannsim::to_d(epsilon), tiling, loc);
}
template <typename T, bool isReuseSource = false>
inline void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                              const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::LayerNormGradBetaTiling& tiling, CANNSIM_LOC) {
    cannsim::layer_norm_grad_beta(outputPdGamma, outputPdBeta, resForGamma, inputDy, &sharedTmpBuffer, tiling, loc);
}
template <typename T, bool isReuseSource = false>
inline void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                              const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                              tiling::LayerNormGradBetaTiling& tiling, CANNSIM_LOC) {
    cannsim::layer_norm_grad_beta(outputPdGamma, outputPdBeta, resForGamma, inputDy, (const LocalTensor<uint8_t>*)nullptr, tiling,
                                  loc);
}

// ---- Welford ----
template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
inline void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance, const LocalTensor<U>& inputMean,
                          const LocalTensor<U>& inputVariance, const LocalTensor<T>& inputX,
                          const LocalTensor<uint8_t>& sharedTmpBuffer, const WelfordUpdateParam& para, CANNSIM_LOC) {
    cannsim::welford_update(outputMean, outputVariance, inputMean, inputVariance, inputX, &sharedTmpBuffer, para,
                            config.isInplace, loc);
}
template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
inline void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance, const LocalTensor<U>& inputMean,
                          const LocalTensor<U>& inputVariance, const LocalTensor<T>& inputX, const WelfordUpdateParam& para,
                          CANNSIM_LOC) {
    cannsim::welford_update(outputMean, outputVariance, inputMean, inputVariance, inputX, (const LocalTensor<uint8_t>*)nullptr,
                            para, config.isInplace, loc);
}
template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                            const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                            const LocalTensor<uint8_t>& sharedTmpBuffer, WelfordFinalizePara& para, CANNSIM_LOC) {
    cannsim::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, (const LocalTensor<int32_t>*)nullptr,
                              &sharedTmpBuffer, para, config.isCorrection, loc);
}
template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                            const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                            const LocalTensor<int32_t>& counts, const LocalTensor<uint8_t>& sharedTmpBuffer,
                            WelfordFinalizePara& para, CANNSIM_LOC) {
    cannsim::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, &counts, &sharedTmpBuffer, para,
                              config.isCorrection, loc);
}
template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                            const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                            WelfordFinalizePara& para, CANNSIM_LOC) {
    cannsim::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, (const LocalTensor<int32_t>*)nullptr,
                              (const LocalTensor<uint8_t>*)nullptr, para, config.isCorrection, loc);
}
template <bool isReuseSource = false, const WelfordFinalizeConfig& config = WFFINALIZE_DEFAULT_CFG>
inline void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                            const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                            const LocalTensor<int32_t>& counts, WelfordFinalizePara& para, CANNSIM_LOC) {
    cannsim::welford_finalize(outputMean, outputVariance, inputMean, inputVariance, &counts,
                              (const LocalTensor<uint8_t>*)nullptr, para, config.isCorrection, loc);
}

}  // namespace AscendC
