// SoftmaxFlashV2 (FlashAttention-2 row update; same-type and half/float forms, with or without the
// row max of this block), its kernel-side SoftMaxFlashV2TilingFunc, SoftmaxFlash (the first
// version: dst = exp(x - max) / sum, expMax = exp(inMax - max) * inSum / sum), AdjustSoftMaxRes
// and DropOut.
//
// SoftmaxFlashV2 over rows [m, k] (the first oriSrcK columns): isUpdate false: max = rowmax(x),
// dst = exp(x - max), sum = rowsum(dst); isUpdate true: max = max(inMax, rowmax(x)),
// dst = exp(x - max), expMax = exp(inMax - max), sum = expMax * inSum + rowsum(dst). sum, max,
// expMax (and outReduceMax = rowmax(x)) hold one 32-byte block per row, every element the row's
// value; inSum/inMax are read from element 0 of each row's block.
// AdjustSoftMaxRes: every row whose max (element 0 of its block, or element r with stepSizeMode != 0)
// has the bit pattern `from` is set to `to`; returns whether any row matched.
// DropOut: dst = mask ? src / keepProb : 0, the mask one byte per element (byte mode) or one bit
// per element, least significant bit first (bit mode, as the Select instruction reads a bit mask);
// mask rows are maskLastAxis bytes apart (extra bytes are padding). dropOutMode 0 infers the mode:
// maskLastAxis >= srcLastAxis is byte mode, otherwise bit mode.
#pragma once
#include <cmath>
#include "hl_common.h"
#include "hl_types.h"
#include "hl_types_ext.h"

namespace cannsim {

inline const ApiDtypes kSoftmaxExtDtypes[] = {
    {"SoftmaxFlashV2", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"SoftmaxFlash", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"AdjustSoftMaxRes", HL_FLOATS, HL_FLOATS, HL_FLOATS},
    {"DropOut", HL_FLOATS, HL_FLOATS_BFLOAT, HL_FLOATS},
};

template <typename T> inline uint32_t float_bits(T v) {
    if constexpr (sizeof(T) == 4) { uint32_t b; std::memcpy(&b, &v, 4); return b; }
    else { uint16_t b; std::memcpy(&b, &v, 2); return b; }
}

// Tensors of one SoftmaxFlashV2 call; T = x/dst/expMax type, U = sum/max type.
template <typename T, typename U> struct FlashV2Args {
    const AscendC::LocalTensor<T>* dst; const AscendC::LocalTensor<T>* reduce_max;   // reduce_max: T-typed, optional
    const AscendC::LocalTensor<U>* sum; const AscendC::LocalTensor<U>* max;
    const AscendC::LocalTensor<T>* src; const AscendC::LocalTensor<T>* exp_max;
    const AscendC::LocalTensor<U>* in_sum; const AscendC::LocalTensor<U>* in_max;
    const AscendC::LocalTensor<uint8_t>* tmp;
};

template <typename T, typename U>
inline void softmax_flash_v2(bool update, const FlashV2Args<T, U>& a, const AscendC::tiling::SoftMaxTiling& tiling,
                             const AscendC::SoftMaxShapeInfo& info, const SrcLoc& loc, bool v1 = false) {
    const char* api = v1 ? "SoftmaxFlash" : "SoftmaxFlashV2";
    check_dtype_row(api, row_of(kSoftmaxExtDtypes, api), dtype_of<T>(), loc);
    const uint32_t m = info.srcM ? info.srcM : tiling.srcM, k = info.srcK ? info.srcK : tiling.srcK;
    if (m == 0 || k == 0) {
        hl_param_error(api, loc, fmt("%s has no shape: SoftMaxShapeInfo is empty and the tiling::SoftMaxTiling was not "
                                     "filled (SoftMaxTilingFunc / SoftMaxFlashV2TilingFunc)", api));
        return;
    }
    if ((uint64_t(k) * sizeof(T)) % 32 != 0)
        hl_param_error(api, loc, fmt("%s last axis of %u elements is not 32-byte aligned; pad it", api, k));
    const uint32_t ok = info.oriSrcK ? std::min(info.oriSrcK, k) : k;
    const uint64_t n = uint64_t(m) * k, bu = 32 / sizeof(U), bt = 32 / sizeof(T);
    const HlSpan d = span("dstTensor", *a.dst, n, true), s = span("srcTensor", *a.src, n);
    const HlSpan su = span("expSumTensor", *a.sum, m * bu, true), mx = span("maxTensor", *a.max, m * bu, true);
    hl_check_spans(api, {d, s, su, mx}, loc);
    hl_check_disjoint(api, su, mx, loc);
    hl_check_disjoint(api, su, d, loc);
    hl_check_disjoint(api, mx, d, loc);
    if (update)
        hl_check_spans(api, {span("expMaxTensor", *a.exp_max, m * bt, true), span("inExpSumTensor", *a.in_sum, m * bu),
                             span("inMaxTensor", *a.in_max, m * bu)}, loc);
    if (a.reduce_max) hl_check_spans(api, {span("outReduceMax", *a.reduce_max, m * bt, true)}, loc);
    if (a.tmp) {
        const HlSpan t = span("sharedTmpBuffer", *a.tmp, a.tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, a.tmp->GetSize(), tmp_model::rowwise_min_bytes(k, tmp_model::kSoftmaxBuffers), loc,
                           "sharedTmpBuffer");
        for (const HlSpan* o : {&d, &s, &su, &mx}) hl_check_disjoint(api, t, *o, loc);
    }
    if (!count_only()) {
        std::vector<double> row(k);
        for (uint64_t r = 0; r < m; ++r) {
            double rmax = -INFINITY;
            bool nan = false;
            for (uint32_t j = 0; j < k; ++j) row[j] = to_d(ld<T>(ub_at(a.src->addr_ + (r * k + j) * sizeof(T))));
            for (uint32_t j = 0; j < ok; ++j) { nan |= std::isnan(row[j]); rmax = std::max(rmax, row[j]); }
            if (nan) rmax = NAN;
            double mxv = rmax, emax = 0, insum = 0;
            if (update) {
                const double inmax = to_d(ld<U>(ub_at(a.in_max->addr_ + r * bu * sizeof(U))));
                insum = to_d(ld<U>(ub_at(a.in_sum->addr_ + r * bu * sizeof(U))));
                mxv = (std::isnan(inmax) || std::isnan(rmax)) ? NAN : std::max(inmax, rmax);
                emax = std::exp(inmax - mxv);
            }
            double sum = 0;
            for (uint32_t j = 0; j < k; ++j) {
                row[j] = j < ok ? std::exp(row[j] - mxv) : 0.0;
                if (j < ok) sum += row[j];
            }
            if (update) sum += emax * insum;
            if (v1 && update) emax = emax * insum / sum;   // SoftmaxFlash: the factor that rescales the previous output
            for (uint32_t j = 0; j < k; ++j)
                st<T>(ub_at(a.dst->addr_ + (r * k + j) * sizeof(T)), from_d<T>(v1 ? row[j] / sum : row[j]));
            for (uint64_t b = 0; b < bu; ++b) {
                st<U>(ub_at(a.sum->addr_ + (r * bu + b) * sizeof(U)), from_d<U>(sum));
                st<U>(ub_at(a.max->addr_ + (r * bu + b) * sizeof(U)), from_d<U>(mxv));
            }
            for (uint64_t b = 0; b < bt; ++b) {
                if (update) st<T>(ub_at(a.exp_max->addr_ + (r * bt + b) * sizeof(T)), from_d<T>(emax));
                if (a.reduce_max) st<T>(ub_at(a.reduce_max->addr_ + (r * bt + b) * sizeof(T)), from_d<T>(rmax));
            }
        }
    }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), n, sizeof(T), reads, 1, d,
                   {{"Cast", sizeof(T) == 2 ? 2.0 : 0.0}, {"ReduceMax", 1}, {"Sub", 1}, {"Exp", 1}, {"ReduceSum", 1},
                    {"Mul", update ? 1.0 / k : 0.0}, {"Add", update ? 1.0 / k : 0.0}});
    mark_written(a.sum->slot_, PIPE_V); mark_written(a.max->slot_, PIPE_V);
    if (update) mark_written(a.exp_max->slot_, PIPE_V);
    if (a.reduce_max) mark_written(a.reduce_max->slot_, PIPE_V);
}

template <typename T1, typename T2>
inline bool adjust_softmax_res(const AscendC::LocalTensor<T1>& res, const AscendC::LocalTensor<T2>& max, uint32_t from, T1 to,
                               bool step_one, const AscendC::SoftMaxShapeInfo& info, const SrcLoc& loc) {
    const char* api = "AdjustSoftMaxRes";
    check_dtype_row(api, row_of(kSoftmaxExtDtypes, api), dtype_of<T1>(), loc);
    check_dtype_row(api, row_of(kSoftmaxExtDtypes, api), dtype_of<T2>(), loc);
    const uint64_t m = info.srcM, k = info.srcK, step = step_one ? 1 : 32 / sizeof(T2);
    if (m == 0 || k == 0 || (k * sizeof(T1)) % 32 != 0) {
        hl_param_error(api, loc, fmt("AdjustSoftMaxRes SoftMaxShapeInfo {srcM %llu, srcK %llu}: non-empty, srcK 32-byte aligned",
                                     (unsigned long long)m, (unsigned long long)k));
        if (m == 0 || k == 0) return false;
    }
    const HlSpan r = span("softMaxRes", res, m * k, true), x = span("maxTensor", max, m * step);
    hl_check_spans(api, {r, x}, loc);
    hl_check_disjoint(api, r, x, loc);
    bool any = false;
    if (!count_only())
        for (uint64_t i = 0; i < m; ++i)
            if (float_bits(ld<T2>(ub_at(max.addr_ + i * step * sizeof(T2)))) == from) {
                any = true;
                for (uint64_t j = 0; j < k; ++j) st<T1>(ub_at(res.addr_ + (i * k + j) * sizeof(T1)), to);
            }
    const HlSpan reads[1] = {x};
    composite_cost(dtype_of<T1>(), m * k, sizeof(T1), reads, 1, r, {{"Compare", double(m) / double(m * k)}, {"Select", 1}});
    return any;
}

template <typename T>
inline void drop_out(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                     const AscendC::LocalTensor<uint8_t>& mask, const AscendC::LocalTensor<uint8_t>* tmp, float keepProb,
                     const AscendC::DropOutShapeInfo& info, uint32_t mode, const SrcLoc& loc) {
    const char* api = "DropOut";
    check_dtype_row(api, row_of(kSoftmaxExtDtypes, api), dtype_of<T>(), loc);
    const uint64_t H = info.firstAxis, W = info.srcLastAxis, MW = info.maskLastAxis;
    if (H == 0 || W == 0 || MW == 0 || mode > 4) {
        hl_param_error(api, loc, fmt("DropOut DropOutShapeInfo {firstAxis %llu, srcLastAxis %llu, maskLastAxis %llu} must be "
                                     "non-zero and dropOutMode 0..4 (%u)", (unsigned long long)H, (unsigned long long)W,
                                     (unsigned long long)MW, mode));
        return;
    }
    if (!(keepProb > 0.0f && keepProb < 1.0f))
        hl_param_error(api, loc, fmt("DropOut keepProb %g is outside (0, 1)", keepProb));
    const bool bit = mode == 3 || mode == 4 || (mode == 0 && MW < W);
    if (bit && (W % 8 != 0 || MW * 8 < W))
        hl_param_error(api, loc, fmt("DropOut bit mode needs srcLastAxis (%llu) a multiple of 8 and maskLastAxis (%llu) >= "
                                     "srcLastAxis / 8", (unsigned long long)W, (unsigned long long)MW));
    if (!bit && MW < W)
        hl_param_error(api, loc, fmt("DropOut byte mode needs maskLastAxis (%llu) >= srcLastAxis (%llu)", (unsigned long long)MW,
                                     (unsigned long long)W));
    const HlSpan d = span("dstLocal", dst, H * W, true), s = span("srcLocal", src, H * W), mk = span("maskLocal", mask, H * MW);
    hl_check_spans(api, {d, s}, loc);
    hl_check_spans(api, {mk}, loc, 1);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::dropout_min_bytes(W), loc, "sharedTmpBuffer");
        for (const HlSpan* o : {&d, &s, &mk}) hl_check_disjoint(api, t, *o, loc);
    }
    if (!count_only()) {
        const float scale = 1.0f / keepProb;
        for (uint64_t r = 0; r < H; ++r)
            for (uint64_t j = 0; j < W; ++j) {
                const uint8_t* mp = ub_at(mask.addr_ + r * MW);
                const bool keep = bit ? ((mp[j / 8] >> (j % 8)) & 1u) != 0 : mp[j] != 0;
                const float v = keep ? static_cast<float>(ld<T>(ub_at(src.addr_ + (r * W + j) * sizeof(T)))) * scale : 0.0f;
                st<T>(ub_at(dst.addr_ + (r * W + j) * sizeof(T)), from_d<T>(v));
            }
    }
    const HlSpan reads[2] = {s, mk};
    composite_cost(dtype_of<T>(), H * W, sizeof(T), reads, 2, d, {{"GatherMask", MW != (bit ? W / 8 : W) ? 1.0 : 0.0},
                                                                   {"Select", 1}, {"Muls", 1}});
}

}  // namespace cannsim

namespace AscendC {

// ---- SoftmaxFlashV2 ----
#define CANNSIM_FLASHV2_TEMPLATE                                                                                 \
    template <typename T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,          \
              bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
CANNSIM_FLASHV2_TEMPLATE
inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor, const LocalTensor<T>& maxTensor,
                           const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                           const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor,
                           const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<T, T>(isUpdate, {&dstTensor, nullptr, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                               &inExpSumTensor, &inMaxTensor, nullptr}, tiling, softmaxShapeInfo, loc);
}
CANNSIM_FLASHV2_TEMPLATE
inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& outReduceMax, const LocalTensor<T>& expSumTensor,
                           const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                           const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor,
                           const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<T, T>(isUpdate, {&dstTensor, &outReduceMax, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                               &inExpSumTensor, &inMaxTensor, nullptr}, tiling, softmaxShapeInfo, loc);
}
CANNSIM_FLASHV2_TEMPLATE
inline void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                           const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                           const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                           const LocalTensor<float>& inMaxTensor, const tiling::SoftMaxTiling& tiling,
                           const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<half, float>(isUpdate, {&dstTensor, nullptr, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                                      &inExpSumTensor, &inMaxTensor, nullptr}, tiling, softmaxShapeInfo, loc);
}
CANNSIM_FLASHV2_TEMPLATE
inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& outExpSum, const LocalTensor<T>& outMax,
                           const LocalTensor<T>& srcTensor, const LocalTensor<T>& outExpMax, const LocalTensor<T>& inExpSum,
                           const LocalTensor<T>& inMax, const LocalTensor<uint8_t>& sharedTmpBuffer,
                           const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<T, T>(isUpdate, {&dstTensor, nullptr, &outExpSum, &outMax, &srcTensor, &outExpMax, &inExpSum, &inMax,
                                               &sharedTmpBuffer}, tiling, softmaxShapeInfo, loc);
}
CANNSIM_FLASHV2_TEMPLATE
inline void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& outReduceMax, const LocalTensor<T>& expSumTensor,
                           const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor,
                           const LocalTensor<T>& inExpSumTensor, const LocalTensor<T>& inMaxTensor,
                           const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::SoftMaxTiling& tiling,
                           const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<T, T>(isUpdate, {&dstTensor, &outReduceMax, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                               &inExpSumTensor, &inMaxTensor, &sharedTmpBuffer}, tiling, softmaxShapeInfo, loc);
}
CANNSIM_FLASHV2_TEMPLATE
inline void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                           const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                           const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                           const LocalTensor<float>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                           const tiling::SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<half, float>(isUpdate, {&dstTensor, nullptr, &expSumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                                      &inExpSumTensor, &inMaxTensor, &sharedTmpBuffer}, tiling, softmaxShapeInfo, loc);
}
#undef CANNSIM_FLASHV2_TEMPLATE

// ---- SoftmaxFlash (the first version, to be retired by the reference): dst normalised by the running sum,
// expMax = exp(inMax - max) * inSum / sum ----
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
inline void SoftmaxFlash(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                         const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inSumTensor,
                         const LocalTensor<T>& inMaxTensor, const tiling::SoftMaxTiling& tiling, bool isUpdate = false,
                         const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<T, T>(isUpdate, {&dstTensor, nullptr, &sumTensor, &maxTensor, &srcTensor, &expMaxTensor, &inSumTensor,
                                               &inMaxTensor, nullptr}, tiling, softmaxShapeInfo, loc, true);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
inline void SoftmaxFlash(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor, const LocalTensor<float>& maxTensor,
                         const LocalTensor<half>& srcTensor, const LocalTensor<half>& expMaxTensor,
                         const LocalTensor<float>& inSumTensor, const LocalTensor<float>& inMaxTensor,
                         const tiling::SoftMaxTiling& tiling, bool isUpdate = false, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                         CANNSIM_LOC) {
    cannsim::softmax_flash_v2<half, float>(isUpdate, {&dstTensor, nullptr, &sumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                                      &inSumTensor, &inMaxTensor, nullptr}, tiling, softmaxShapeInfo, loc, true);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
inline void SoftmaxFlash(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                         const LocalTensor<T>& srcTensor, const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inSumTensor,
                         const LocalTensor<T>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                         const tiling::SoftMaxTiling& tiling, bool isUpdate = false, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                         CANNSIM_LOC) {
    cannsim::softmax_flash_v2<T, T>(isUpdate, {&dstTensor, nullptr, &sumTensor, &maxTensor, &srcTensor, &expMaxTensor, &inSumTensor,
                                               &inMaxTensor, &sharedTmpBuffer}, tiling, softmaxShapeInfo, loc, true);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false>
inline void SoftmaxFlash(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor, const LocalTensor<float>& maxTensor,
                         const LocalTensor<half>& srcTensor, const LocalTensor<half>& expMaxTensor,
                         const LocalTensor<float>& inSumTensor, const LocalTensor<float>& inMaxTensor,
                         const LocalTensor<uint8_t>& sharedTmpBuffer, const tiling::SoftMaxTiling& tiling, bool isUpdate = false,
                         const SoftMaxShapeInfo& softmaxShapeInfo = {}, CANNSIM_LOC) {
    cannsim::softmax_flash_v2<half, float>(isUpdate, {&dstTensor, nullptr, &sumTensor, &maxTensor, &srcTensor, &expMaxTensor,
                                                      &inSumTensor, &inMaxTensor, &sharedTmpBuffer}, tiling, softmaxShapeInfo, loc,
                                           true);
}

// Kernel-side tiling of SoftmaxFlashV2 for a shape known only on the device.
inline constexpr tiling::SoftMaxTiling SoftMaxFlashV2TilingFunc(const SoftMaxShapeInfo& shapeInfo, const uint32_t dataTypeSize1,
                                                                const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                                                const bool isUpdate = false, const bool isBasicBlock = false,
                                                                const bool isDataFormatNZ = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize1; (void)localWorkSpaceSize; (void)isUpdate; (void)isBasicBlock; (void)isDataFormatNZ; (void)isFlashOutputBrc;
    tiling::SoftMaxTiling t{};
    t.srcM = shapeInfo.srcM; t.srcK = shapeInfo.srcK; t.srcSize = shapeInfo.srcM * shapeInfo.srcK;
    t.outMaxM = shapeInfo.srcM; t.outMaxK = dataTypeSize2 ? 32 / dataTypeSize2 : 8; t.outMaxSize = t.outMaxM * t.outMaxK;
    t.splitM = shapeInfo.srcM; t.splitK = shapeInfo.srcK; t.splitSize = t.srcSize;
    t.reduceM = shapeInfo.srcM; t.reduceK = t.outMaxK; t.reduceSize = t.outMaxSize;
    t.rangeM = 1;
    return t;
}

// ---- AdjustSoftMaxRes ----
template <typename T1, typename T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
inline bool AdjustSoftMaxRes(const LocalTensor<T1>& softMaxRes, const LocalTensor<T2>& maxTensor, const uint32_t from, const T1 to,
                             const SoftMaxShapeInfo& softmaxShapeInfo, CANNSIM_LOC) {
    return cannsim::adjust_softmax_res(softMaxRes, maxTensor, from, to, stepSizeMode != 0, softmaxShapeInfo, loc);
}

// ---- DropOut ----
template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
inline void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
                    const float keepProb, const DropOutShapeInfo& info, CANNSIM_LOC) {
    cannsim::drop_out(dstLocal, srcLocal, maskLocal, (const LocalTensor<uint8_t>*)nullptr, keepProb, info, dropOutMode, loc);
}
template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
inline void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const float keepProb, const DropOutShapeInfo& info, CANNSIM_LOC) {
    cannsim::drop_out(dstLocal, srcLocal, maskLocal, &sharedTmpBuffer, keepProb, info, dropOutMode, loc);
}

}  // namespace AscendC
