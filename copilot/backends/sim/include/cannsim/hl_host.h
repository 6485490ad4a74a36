// Host-side helpers of the high-level APIs (tiling functions and Get...MaxMinTmpSize), clean-room:
// the sizes follow the emulator's temporary-buffer model in cannsim/hl_types.h, which the kernel
// side checks (L2.TMP_BUFFER), so a kernel sized by these helpers passes and one sized smaller fails.
#ifndef CANNSIM_HL_HOST_H
#define CANNSIM_HL_HOST_H

#include <cstdint>
#include <initializer_list>
#include <vector>
#include "cannsim/host.h"
#include "cannsim/hl_types.h"
#include "tiling/platform/platform_ascendc.h"

namespace ge {
// The shape argument of the host helpers: ge::Shape(std::vector<int64_t>{...}).
class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    Shape(const gert::Shape& s) { for (size_t i = 0; i < s.GetDimNum(); ++i) dims_.push_back(s.GetDim(i)); }
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    std::vector<int64_t> GetDims() const { return dims_; }
    int64_t GetShapeSize() const {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return dims_.empty() ? 0 : n;
    }

private:
    std::vector<int64_t> dims_;
};
}  // namespace ge

namespace AscendC {

// ---- elementwise math and activation libraries ----
#define CANNSIM_HL_TMP_HELPERS(NAME)                                                                              \
    inline void Get##NAME##MaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool,           \
                                         uint32_t& maxValue, uint32_t& minValue) {                                 \
        (void)typeSize;                                                                                           \
        const uint64_t n = static_cast<uint64_t>(srcShape.GetShapeSize());                                        \
        minValue = cannsim::tmp_model::elementwise_min_bytes(#NAME, typeSize);                                   \
        maxValue = cannsim::tmp_model::elementwise_max_bytes(#NAME, n);                                          \
        if (cannsim::tmp_model::elementwise_nodes(#NAME) == 0) minValue = maxValue = 0;                          \
    }                                                                                                             \
    inline void Get##NAME##TmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount,              \
                                               uint32_t& extraBuf) {                                              \
        maxLiveNodeCount = typeSize ? cannsim::tmp_model::elementwise_nodes(#NAME) * 4 / typeSize : 0;           \
        extraBuf = 0;                                                                                             \
    }
CANNSIM_HL_TMP_HELPERS(Tanh) CANNSIM_HL_TMP_HELPERS(Sin) CANNSIM_HL_TMP_HELPERS(Cos) CANNSIM_HL_TMP_HELPERS(Tan)
CANNSIM_HL_TMP_HELPERS(Asin) CANNSIM_HL_TMP_HELPERS(Acos) CANNSIM_HL_TMP_HELPERS(Atan) CANNSIM_HL_TMP_HELPERS(Sinh)
CANNSIM_HL_TMP_HELPERS(Cosh) CANNSIM_HL_TMP_HELPERS(Asinh) CANNSIM_HL_TMP_HELPERS(Acosh) CANNSIM_HL_TMP_HELPERS(Atanh)
CANNSIM_HL_TMP_HELPERS(Erf) CANNSIM_HL_TMP_HELPERS(Erfc) CANNSIM_HL_TMP_HELPERS(Frac) CANNSIM_HL_TMP_HELPERS(Sign)
CANNSIM_HL_TMP_HELPERS(Trunc) CANNSIM_HL_TMP_HELPERS(Floor) CANNSIM_HL_TMP_HELPERS(Ceil) CANNSIM_HL_TMP_HELPERS(Round)
CANNSIM_HL_TMP_HELPERS(Lgamma) CANNSIM_HL_TMP_HELPERS(Digamma) CANNSIM_HL_TMP_HELPERS(Exp) CANNSIM_HL_TMP_HELPERS(Fmod)
CANNSIM_HL_TMP_HELPERS(Xor) CANNSIM_HL_TMP_HELPERS(Power) CANNSIM_HL_TMP_HELPERS(ClampMax) CANNSIM_HL_TMP_HELPERS(ClampMin)
CANNSIM_HL_TMP_HELPERS(Sigmoid) CANNSIM_HL_TMP_HELPERS(Gelu) CANNSIM_HL_TMP_HELPERS(FasterGelu)
CANNSIM_HL_TMP_HELPERS(FasterGeluV2) CANNSIM_HL_TMP_HELPERS(GeGLU) CANNSIM_HL_TMP_HELPERS(ReGlu)
CANNSIM_HL_TMP_HELPERS(SwiGLU) CANNSIM_HL_TMP_HELPERS(Log) CANNSIM_HL_TMP_HELPERS(AscendQuant)
CANNSIM_HL_TMP_HELPERS(AscendDequant) CANNSIM_HL_TMP_HELPERS(AscendAntiQuant) CANNSIM_HL_TMP_HELPERS(CumSum)
#undef CANNSIM_HL_TMP_HELPERS
// Silu and Swish name theirs Get<Api>TmpSize.
inline void GetSiluTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetSwishTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
}

// ---- softmax family: shape [..., k], rows = product of the other axes ----
namespace detail_host {
inline void rows_cols(const ge::Shape& shape, uint32_t& m, uint32_t& k) {
    const size_t nd = shape.GetDimNum();
    k = nd ? static_cast<uint32_t>(shape.GetDim(nd - 1)) : 0;
    uint64_t r = 1;
    for (size_t i = 0; i + 1 < nd; ++i) r *= static_cast<uint64_t>(shape.GetDim(i));
    m = nd ? static_cast<uint32_t>(r) : 0;
}
}  // namespace detail_host

inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t, const bool) {
    uint32_t m, k;
    detail_host::rows_cols(srcShape, m, k);
    return cannsim::tmp_model::rowwise_max_bytes(m, k, cannsim::tmp_model::kSoftmaxBuffers);
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t, const bool) {
    uint32_t m, k;
    detail_host::rows_cols(srcShape, m, k);
    return cannsim::tmp_model::rowwise_min_bytes(k, cannsim::tmp_model::kSoftmaxBuffers);
}
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize, const uint32_t localWorkSpaceSize,
                              tiling::SoftMaxTiling& t) {
    uint32_t m, k;
    detail_host::rows_cols(srcShape, m, k);
    t = tiling::SoftMaxTiling{};
    t.srcM = m; t.srcK = k; t.srcSize = m * k;
    t.outMaxM = m; t.outMaxK = dataTypeSize ? 32 / dataTypeSize : 8; t.outMaxSize = t.outMaxM * t.outMaxK;
    const uint32_t per_row = cannsim::tmp_model::rowwise_min_bytes(k, cannsim::tmp_model::kSoftmaxBuffers);
    uint32_t split = per_row ? localWorkSpaceSize / per_row : 0;
    if (split == 0) split = 1;
    if (split > m) split = m;
    t.splitM = split; t.splitK = k; t.splitSize = split * k;
    t.reduceM = split; t.reduceK = t.outMaxK; t.reduceSize = split * t.outMaxK;
    t.rangeM = split ? m / split : 0; t.tailM = split ? m % split : 0;
    t.tailSplitSize = t.tailM * k; t.tailReduceSize = t.tailM * t.outMaxK;
}
inline uint32_t GetLogSoftMaxMaxTmpSize(const ge::Shape& s, const uint32_t ts, const bool r) { return GetSoftMaxMaxTmpSize(s, ts, r); }
inline uint32_t GetLogSoftMaxMinTmpSize(const ge::Shape& s, const uint32_t ts, const bool r) { return GetSoftMaxMinTmpSize(s, ts, r); }
inline void SoftMaxGradTilingFunc(const ge::Shape& s, const uint32_t ts, const uint32_t ws, tiling::SoftMaxTiling& t,
                                  const bool /*isFront*/ = false) {
    SoftMaxTilingFunc(s, ts, ws, t);
}
inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape& s, const uint32_t ts, const bool, const bool r) {
    return GetSoftMaxMaxTmpSize(s, ts, r);
}
inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape& s, const uint32_t ts, const bool, const bool r) {
    return GetSoftMaxMinTmpSize(s, ts, r);
}
inline void LogSoftMaxTilingFunc(const ge::Shape& s, const uint32_t ts, const uint32_t ws, tiling::LogSoftMaxTiling& t) {
    SoftMaxTilingFunc(s, ts, ws, t);
}

// ---- RmsNorm and LayerNorm: shape [B, S, H] ----
namespace detail_host {
inline void bsh(const ge::Shape& shape, uint32_t& b, uint32_t& s, uint32_t& h) {
    const size_t nd = shape.GetDimNum();
    b = nd >= 3 ? static_cast<uint32_t>(shape.GetDim(0)) : 1;
    s = nd >= 2 ? static_cast<uint32_t>(shape.GetDim(nd - 2)) : 1;
    h = nd >= 1 ? static_cast<uint32_t>(shape.GetDim(nd - 1)) : 0;
}
}  // namespace detail_host

inline bool GetRmsNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                    uint32_t& minValue, const bool /*isBasicBlock*/ = false) {
    uint32_t b, s, h;
    detail_host::bsh(srcShape, b, s, h);
    if (h == 0 || typeSize == 0 || (h * typeSize) % 32 != 0) return false;
    minValue = cannsim::tmp_model::rowwise_min_bytes(h, cannsim::tmp_model::kRmsNormBuffers);
    maxValue = cannsim::tmp_model::rowwise_max_bytes(b * s, h, cannsim::tmp_model::kRmsNormBuffers);
    return true;
}
inline bool GetRmsNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                 const uint32_t stackBufferByteSize, const uint32_t typeSize, tiling::RmsNormTiling& t,
                                 const bool isBasicBlock = false) {
    uint32_t mx = 0, mn = 0;
    if (!GetRmsNormMaxMinTmpSize(srcShape, typeSize, mx, mn, isBasicBlock) || stackBufferByteSize < mn) return false;
    uint32_t b, s, h, ob, os, oh;
    detail_host::bsh(srcShape, b, s, h);
    detail_host::bsh(originSrcShape, ob, os, oh);
    t = tiling::RmsNormTiling{};
    t.bLength = b; t.sLength = s; t.hLength = h; t.originalHLength = oh ? oh : h;
    t.reciprocalOfHLength = 1.0f / static_cast<float>(t.originalHLength);
    const uint32_t per_row = cannsim::tmp_model::rowwise_min_bytes(h, cannsim::tmp_model::kRmsNormBuffers);
    uint32_t rows = stackBufferByteSize / per_row;
    if (rows > b * s) rows = b * s;
    t.mainBsLength = rows; t.mainBshLength = rows * h; t.mainBsLengthAlign = (rows + 7) / 8 * 8;
    t.loopRound = rows ? (b * s) / rows : 0;
    t.inputTailPos = t.loopRound * t.mainBshLength;
    t.tailBsLength = rows ? (b * s) % rows : 0; t.tailBshLength = t.tailBsLength * h;
    return true;
}

inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool, uint32_t& maxValue,
                                      uint32_t& minValue) {
    uint32_t b, s, h;
    detail_host::bsh(srcShape, b, s, h);
    (void)typeSize;
    minValue = cannsim::tmp_model::rowwise_min_bytes(h, cannsim::tmp_model::kLayerNormBuffers);
    maxValue = cannsim::tmp_model::rowwise_max_bytes(b * s, h, cannsim::tmp_model::kLayerNormBuffers);
}
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const bool /*isComputeRstd*/, const bool /*isOnlyOutput*/, uint32_t& maxValue,
                                      uint32_t& minValue) {
    GetLayerNormMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool /*isReuseSource*/, tiling::LayerNormTiling& t) {
    uint32_t b, s, h;
    detail_host::bsh(srcShape, b, s, h);
    t = tiling::LayerNormTiling{};
    t.bLength = b; t.sLength = s; t.hLength = h; t.originalHLength = h;
    t.inputXSize = b * s * h; t.meanVarSize = b * s; t.numberOfTmpBuf = cannsim::tmp_model::kLayerNormBuffers;
    t.tmpBufSize = stackBufferSize / 4;
    const uint32_t per_row = cannsim::tmp_model::rowwise_min_bytes(h, cannsim::tmp_model::kLayerNormBuffers);
    uint32_t rows = per_row ? stackBufferSize / per_row : 0;
    if (rows > b * s) rows = b * s;
    t.bsCurLength = rows; t.bshCurLength = rows * h; t.oneTmpSize = rows * h;
    t.loopRound = rows ? (b * s) / rows : 0;
    t.inputRoundSize = t.bshCurLength; t.inputTailSize = rows ? ((b * s) % rows) * h : 0;
    t.inputTailPos = t.loopRound * t.inputRoundSize;
    t.meanVarRoundSize = rows; t.meanVarTailSize = rows ? (b * s) % rows : 0; t.meanVarTailPos = t.loopRound * rows;
    t.lastDimValueBack = h ? 1.0f / static_cast<float>(h) : 0.0f;
    (void)typeSize;
}
inline void GetLayerNormNDTillingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                      const bool isReuseSource, tiling::LayerNormTiling& t) {
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, t);
}

// ---- sort ----
inline uint32_t GetSortTmpSize(const platform_ascendc::PlatformAscendC&, const uint32_t elemCount,
                               const uint32_t /*dataTypeSize*/) {
    return cannsim::tmp_model::sort_bytes(elemCount);
}
// Concat in layout one copies the scores: no temporary space.
inline uint32_t GetConcatTmpSize(const platform_ascendc::PlatformAscendC&, const uint32_t, const uint32_t) { return 0; }

inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const int32_t inner, const int32_t outter,
                                 const bool /*isReuseSource*/, const bool isInitIndex, TopKMode mode,
                                 const bool isLargest, const uint32_t dataTypeSize, uint32_t& maxValue,
                                 uint32_t& minValue) {
    if (inner <= 0 || inner % 32 != 0 || outter < 1 || (dataTypeSize != 2 && dataTypeSize != 4)) return false;
    minValue = maxValue = cannsim::tmp_model::topk_bytes(inner, outter, isInitIndex, mode == TopKMode::TOPK_NSMALL,
                                                         isLargest, dataTypeSize);
    return true;
}

inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC&, const int32_t inner, const int32_t outter,
                           const int32_t k, const uint32_t dataTypeSize, const bool isInitIndex, TopKMode mode,
                           const bool isLargest, tiling::TopkTiling& t) {
    if (inner <= 0 || inner % 32 != 0 || outter < 1 || k < 1 || k > inner || (dataTypeSize != 2 && dataTypeSize != 4))
        return false;
    const bool small = mode == TopKMode::TOPK_NSMALL;
    if (small && inner != 32) return false;
    t = tiling::TopkTiling{};
    t.tmpLocalSize = static_cast<int32_t>(
        cannsim::tmp_model::topk_bytes(inner, outter, isInitIndex, small, isLargest, dataTypeSize));
    t.allDataSize = inner * outter;
    t.innerDataSize = inner;
    t.sortRepeat = static_cast<uint32_t>((small ? inner * outter : inner) / 32);
    int passes = 0;
    for (int64_t run = 32; run < inner; run *= 4) ++passes;
    t.mrgSortRepeat = passes;
    t.kAlignFourBytes = (k + 7) / 8 * 8;
    t.kAlignTwoBytes = (k + 15) / 16 * 16;
    t.srcIndexOffset = inner;
    return true;
}

}  // namespace AscendC

#endif  // CANNSIM_HL_HOST_H
