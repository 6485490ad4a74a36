// SoftmaxFlashV3 (the Softmax PASA variant of SoftmaxFlash): half data, float statistics, rows
// [m, n] with n >= 512 a multiple of 64, m a multiple of 8, splitMeanCnt = 8. Following the
// reference's pseudo-code, with scalar = alpha / (1 - alpha) and baseK = n / 8:
//   local mean of group g = sum of the row's elements in group g / baseK, where element c is in
//   group (c % 64) / 8 (the two BlockReduceSum passes of the pseudo-code);
//   x' = x - (rowMean - localMean[group]) * scalar;
//   isUpdate false: mean = rowMean, max = rowmax(x'), dst = exp(x' - max), sum = rowsum(dst);
//   isUpdate true:  mean = (rowMean + inMean * (loopCnt - 1)) / loopCnt,
//     shiftCurr = (rowMean - mean) * scalar, shiftPrev = (inMean - mean) * scalar,
//     max = max(shiftCurr + rowmax(x'), shiftPrev + inMax), dst = exp(x' - (max - shiftCurr)),
//     expMax = exp(inMax - max + shiftPrev), sum = expMax * inSum + rowsum(dst).
// mean, sum, max (float) and expMax (half) hold one 32-byte block per row, every element the row's
// value; the inputs are read from element 0 of each row's block. Computed in double, rounded once
// per output (the reference's formulas are images; the pseudo-code is the source here).
#pragma once
#include <cmath>
#include "hl_common.h"
#include "hl_types.h"
#include "hl_types_ext.h"

namespace AscendC {

struct SoftMaxParams {
    SoftMaxParams() {}
    SoftMaxParams(uint32_t srcMIn, uint32_t srcKIn, uint32_t oriSrcMIn, uint32_t oriSrcKIn, uint32_t loopCntIn,
                  uint32_t splitMeanCntIn, float alphaIn)
        : srcM(srcMIn), srcK(srcKIn), oriSrcM(oriSrcMIn), oriSrcK(oriSrcKIn), loopCnt(loopCntIn),
          splitMeanCnt(splitMeanCntIn), alpha(alphaIn) {}
    uint32_t srcM = 0;          // product of the non-last axes
    uint32_t srcK = 0;          // last axis, 32 B aligned
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
    uint32_t loopCnt = 1;       // isUpdate: the iteration count of the formula, >= 1
    uint32_t splitMeanCnt = 8;  // only 8
    float alpha = 0.9375f;
};

}  // namespace AscendC

namespace cannsim {

inline const ApiDtypes kSoftmaxV3Dtypes[] = {
    {"SoftmaxFlashV3", DT_F16, DT_F16, 0},
    {"SoftmaxFlashV3Stats", DT_F32, DT_F32, 0},
};

template <typename T, typename U>
struct FlashV3Args {
    const AscendC::LocalTensor<T>* dst; const AscendC::LocalTensor<U>* mean; const AscendC::LocalTensor<U>* sum;
    const AscendC::LocalTensor<U>* max; const AscendC::LocalTensor<T>* src; const AscendC::LocalTensor<T>* exp_max;
    const AscendC::LocalTensor<U>* in_mean; const AscendC::LocalTensor<U>* in_sum; const AscendC::LocalTensor<U>* in_max;
    const AscendC::LocalTensor<uint8_t>* tmp;
};

template <typename T, typename U>
inline void softmax_flash_v3(bool update, const FlashV3Args<T, U>& a, const AscendC::SoftMaxParams& p, const SrcLoc& loc) {
    const char* api = "SoftmaxFlashV3";
    check_dtype_row(api, row_of(kSoftmaxV3Dtypes, api), dtype_of<T>(), loc);
    check_dtype_row(api, row_of(kSoftmaxV3Dtypes, "SoftmaxFlashV3Stats"), dtype_of<U>(), loc);
    const uint32_t m = p.srcM, n = p.srcK;
    if (n < 512 || n % 64 != 0 || m == 0 || m % 8 != 0) {
        hl_param_error(api, loc, fmt("SoftmaxFlashV3 needs a last axis n >= 512 and a multiple of 64 and rows m a "
                                     "multiple of 8 (SoftMaxParams srcM %u, srcK %u)", m, n));
        return;
    }
    if (p.splitMeanCnt != 8 || p.oriSrcM != m || p.oriSrcK != n || (update && p.loopCnt < 1) ||
        !(p.alpha > 0.0f && p.alpha < 1.0f)) {
        hl_param_error(api, loc, fmt("SoftmaxFlashV3 SoftMaxParams: splitMeanCnt must be 8 (is %u), oriSrcM/oriSrcK equal "
                                     "srcM/srcK (unaligned shapes are not supported; %u/%u vs %u/%u), loopCnt >= 1 with "
                                     "isUpdate (is %u), alpha in (0, 1) (is %g)",
                                     p.splitMeanCnt, p.oriSrcM, p.oriSrcK, m, n, p.loopCnt, static_cast<double>(p.alpha)));
        return;
    }
    const uint64_t total = uint64_t(m) * n, bu = 32 / sizeof(U), bt = 32 / sizeof(T);
    const HlSpan d = span("dstTensor", *a.dst, total, true), s = span("srcTensor", *a.src, total);
    const HlSpan me = span("meanTensor", *a.mean, m * bu, true), su = span("expSumTensor", *a.sum, m * bu, true),
                 mx = span("maxTensor", *a.max, m * bu, true);
    hl_check_spans(api, {d, s, me, su, mx}, loc);
    for (const HlSpan* o : {&me, &su, &mx}) hl_check_disjoint(api, *o, d, loc);
    hl_check_disjoint(api, me, su, loc);
    hl_check_disjoint(api, me, mx, loc);
    hl_check_disjoint(api, su, mx, loc);
    if (update)
        hl_check_spans(api, {span("expMaxTensor", *a.exp_max, m * bt, true), span("inMeanTensor", *a.in_mean, m * bu),
                             span("inExpSumTensor", *a.in_sum, m * bu), span("inMaxTensor", *a.in_max, m * bu)}, loc);
    if (a.tmp) {
        const HlSpan t = span("sharedTmpBuffer", *a.tmp, a.tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        const uint32_t need = tmp_model::rowwise_min_bytes(n, tmp_model::kSoftmaxV3Buffers);
        if (a.tmp->GetSize() < need)
            report("L2.TMP_BUFFER", Severity::Error, api, loc.line(),
                   fmt("SoftmaxFlashV3 sharedTmpBuffer holds %u bytes but needs at least %u (the minimum that the host "
                       "helper GetSoftMaxFlashV3MaxMinTmpSize returns for these arguments)", a.tmp->GetSize(), need));
        for (const HlSpan* o : {&d, &s, &me, &su, &mx}) hl_check_disjoint(api, t, *o, loc);
    }
    if (!count_only()) {
        const double scalar = static_cast<double>(p.alpha) / (1.0 - static_cast<double>(p.alpha));
        const double base_k = n / 8.0;
        std::vector<double> x(n);
        for (uint64_t r = 0; r < m; ++r) {
            double group[8] = {}, total_sum = 0;
            for (uint32_t c = 0; c < n; ++c) {
                x[c] = to_d(ld<T>(ub_at(a.src->addr_ + (r * n + c) * sizeof(T))));
                group[(c % 64) / 8] += x[c];
                total_sum += x[c];
            }
            const double row_mean = total_sum / n;
            double xmax = -INFINITY;
            bool nan = false;
            for (uint32_t c = 0; c < n; ++c) {
                x[c] -= (row_mean - group[(c % 64) / 8] / base_k) * scalar;
                nan |= std::isnan(x[c]);
                xmax = std::max(xmax, x[c]);
            }
            if (nan) xmax = NAN;
            double mean = row_mean, mxv = xmax, shift_curr = 0, emax = 0, insum = 0;
            if (update) {
                const double inmean = to_d(ld<U>(ub_at(a.in_mean->addr_ + r * bu * sizeof(U))));
                const double inmax = to_d(ld<U>(ub_at(a.in_max->addr_ + r * bu * sizeof(U))));
                insum = to_d(ld<U>(ub_at(a.in_sum->addr_ + r * bu * sizeof(U))));
                mean = (row_mean + inmean * (p.loopCnt - 1.0)) / p.loopCnt;
                shift_curr = (row_mean - mean) * scalar;
                const double shift_prev = (inmean - mean) * scalar;
                const double cur = shift_curr + xmax, prev = shift_prev + inmax;
                mxv = (std::isnan(cur) || std::isnan(prev)) ? NAN : std::max(cur, prev);
                emax = std::exp(inmax - mxv + shift_prev);
            }
            double sum = 0;
            for (uint32_t c = 0; c < n; ++c) {
                const double e = std::exp(x[c] - (mxv - shift_curr));
                sum += e;
                st<T>(ub_at(a.dst->addr_ + (r * n + c) * sizeof(T)), from_d<T>(e));
            }
            if (update) sum += emax * insum;
            for (uint64_t b = 0; b < bu; ++b) {
                st<U>(ub_at(a.mean->addr_ + (r * bu + b) * sizeof(U)), from_d<U>(mean));
                st<U>(ub_at(a.sum->addr_ + (r * bu + b) * sizeof(U)), from_d<U>(sum));
                st<U>(ub_at(a.max->addr_ + (r * bu + b) * sizeof(U)), from_d<U>(mxv));
            }
            if (update)
                for (uint64_t b = 0; b < bt; ++b) st<T>(ub_at(a.exp_max->addr_ + (r * bt + b) * sizeof(T)), from_d<T>(emax));
        }
    }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), total, sizeof(T), reads, 1, d,
                   {{"Cast", 2.0}, {"BlockReduceSum", 1}, {"Add", 1}, {"Sub", 2}, {"ReduceMax", 1}, {"Exp", 1},
                    {"ReduceSum", 2}});
    mark_written(a.mean->slot_, PIPE_V); mark_written(a.sum->slot_, PIPE_V); mark_written(a.max->slot_, PIPE_V);
    if (update) mark_written(a.exp_max->slot_, PIPE_V);
}

}  // namespace cannsim

namespace AscendC {

template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor, const LocalTensor<U>& expSumTensor,
                           const LocalTensor<U>& maxTensor, const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                           const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                           const LocalTensor<U>& inMaxTensor, const tiling::SoftMaxTiling& tiling, const SoftMaxParams& params,
                           CANNSIM_LOC) {
    (void)tiling;
    cannsim::softmax_flash_v3<T, U>(isUpdate, {&dstTensor, &meanTensor, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                               &inMeanTensor, &inExpSumTensor, &inMaxTensor, nullptr}, params, loc);
}

template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
inline void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor, const LocalTensor<U>& expSumTensor,
                           const LocalTensor<U>& maxTensor, const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                           const LocalTensor<U>& inMeanTensor, const LocalTensor<U>& inExpSumTensor,
                           const LocalTensor<U>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                           const tiling::SoftMaxTiling& tiling, const SoftMaxParams& params, CANNSIM_LOC) {
    (void)tiling;
    cannsim::softmax_flash_v3<T, U>(isUpdate, {&dstTensor, &meanTensor, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                               &inMeanTensor, &inExpSumTensor, &inMaxTensor, &sharedTmpBuffer}, params, loc);
}

}  // namespace AscendC
