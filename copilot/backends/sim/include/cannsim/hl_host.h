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
CANNSIM_HL_TMP_HELPERS(SwiGLU) CANNSIM_HL_TMP_HELPERS(Log)
#undef CANNSIM_HL_TMP_HELPERS
// Silu and Swish name theirs Get<Api>TmpSize.
inline void GetSiluTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetSwishTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
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
                           const bool isLargest, TopkTiling& t) {
    if (inner <= 0 || inner % 32 != 0 || outter < 1 || k < 1 || k > inner || (dataTypeSize != 2 && dataTypeSize != 4))
        return false;
    const bool small = mode == TopKMode::TOPK_NSMALL;
    if (small && inner != 32) return false;
    t = TopkTiling{};
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
