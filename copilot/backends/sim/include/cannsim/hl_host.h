// Host-side helpers of the high-level APIs (tiling functions and Get...MaxMinTmpSize), clean-room:
// the sizes follow the emulator's temporary-buffer model in cannsim/hl_types.h, which the kernel
// side checks (L2.TMP_BUFFER), so a kernel sized by these helpers passes and one sized smaller fails.
#ifndef CANNSIM_HL_HOST_H
#define CANNSIM_HL_HOST_H

#include <cstdint>
#include "cannsim/host.h"
#include "cannsim/hl_types.h"
#include "tiling/platform/platform_ascendc.h"

namespace AscendC {

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
