// TransData's host helper GetTransDataMaxMinTmpSize (host code includes this through
// tiling/tiling_api.h); the shape rules it shares with the kernel side are in layout_rules.h.
#pragma once
#include <string>
#include <vector>
#include "cannsim/hl_host.h"
#include "cannsim/layout_rules.h"

namespace AscendC {

// Host side: the same minimum the kernel checks; max = min (documented: the maximum equals the minimum).
inline bool GetTransDataMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape,
                                      const ge::Shape& dstShape, const ge::DataType dataType,
                                      const TransDataConfig& config, uint32_t& maxValue, uint32_t& minValue) {
    const uint32_t size = dataType == ge::DT_FLOAT ? 4 : 2;
    std::vector<int64_t> s = srcShape.GetDims(), d = dstShape.GetDims();
    std::string why;
    const cannsim::TransDataDims x =
        cannsim::trans_data_dims(config.srcFormat, config.dstFormat, s.data(), s.size(), d.data(), d.size(), why);
    if (!x.ok) return false;
    const DataFormat f = config.srcFormat == DataFormat::NCDHW ? config.dstFormat : config.srcFormat;
    minValue = maxValue = static_cast<uint32_t>(cannsim::trans_data_tmp_bytes(f, x, size));
    return true;
}

}  // namespace AscendC
