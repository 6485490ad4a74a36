// Host-side helpers of the layout and further normalization libraries for tests/test_sim_api_cov.py:
// prints each helper's tmp sizes and tiling fields as `key=value` lines. Usage: api_cov_host
#include <cstdio>
#include "tiling/tiling_api.h"

using namespace AscendC;

int main() {
    fe::PlatFormInfos pi;
    platform_ascendc::PlatformAscendC plat(&pi);
    uint32_t mx = 0, mn = 0;
    GetPadMaxMinTmpSize(ge::Shape({16, 15}), 2, mx, mn);
    std::printf("pad_min=%u pad_max=%u\n", mn, mx);
    tiling::PadTiling pt;
    PadTilingFunc(ge::Shape({16, 16}), ge::Shape({16, 14}), mn, 2, pt);
    std::printf("pad_h=%u pad_w=%u pad_ow=%u\n", pt.srcHeight, pt.srcWidth, pt.srcOriWidth);
    GetUnPadMaxMinTmpSize(plat, ge::Shape({16, 16}), 2, mx, mn);
    std::printf("unpad_min=%u unpad_max=%u\n", mn, mx);
    GetBroadCastMaxMinTmpSize(plat, ge::Shape({64, 1}), ge::Shape({64, 16}), 4, false, mx, mn);
    std::printf("brc_min=%u brc_max=%u\n", mn, mx);
    tiling::BatchNormTiling bt;
    const bool bn_ok = GetBatchNormMaxMinTmpSize(ge::Shape({8, 2, 16}), ge::Shape({6, 2, 16}), 4, false, mx, mn);
    GetBatchNormNDTilingInfo(ge::Shape({8, 2, 16}), ge::Shape({6, 2, 16}), mn, 4, false, bt);
    std::printf("bn_ok=%d bn_min=%u bn_max=%u bn_b=%u bn_ob=%u bn_s=%u bn_h=%u\n", bn_ok, mn, mx, bt.bLength, bt.originalBLength,
                bt.sLength, bt.hLength);
    tiling::DeepNormTiling dt;
    GetDeepNormMaxMinTmpSize(ge::Shape({2, 4, 64}), 4, false, false, mx, mn);
    GetDeepNormTilingInfo(ge::Shape({2, 4, 64}), ge::Shape({2, 4, 60}), mn, 4, false, false, dt);
    std::printf("dn_min=%u dn_max=%u dn_h=%u dn_oh=%u\n", mn, mx, dt.hLength, dt.originalHLength);
    tiling::GroupNormTiling gt;
    GetGroupNormMaxMinTmpSize(ge::Shape({2, 8, 4, 2}), 4, false, 4, mx, mn);
    GetGroupNormNDTilingInfo(ge::Shape({2, 8, 4, 2}), mn, 4, false, 4, gt);
    std::printf("gn_min=%u gn_max=%u gn_n=%u gn_c=%u gn_hw=%u gn_g=%u\n", mn, mx, gt.n, gt.c, gt.hw, gt.g);
    tiling::LayerNormGradTiling lg;
    GetLayerNormGradMaxMinTmpSize(ge::Shape({2, 32, 16}), 4, false, mx, mn);
    GetLayerNormGradNDTilingInfo(ge::Shape({2, 32, 16}), mn, 4, false, lg);
    std::printf("lng_min=%u lng_max=%u lng_b=%u lng_s=%u lng_h=%u\n", mn, mx, lg.bLength, lg.sLength, lg.hLength);
    tiling::LayerNormGradBetaTiling lb;
    GetLayerNormGradBetaMaxMinTmpSize(ge::Shape({2, 32, 16}), 4, false, mx, mn);
    GetLayerNormGradBetaNDTilingInfo(ge::Shape({2, 32, 16}), mn, 4, false, lb);
    std::printf("lngb_min=%u lngb_max=%u lngb_h=%u\n", mn, mx, lb.hLength);
    GetWelfordUpdateMaxMinTmpSize(ge::Shape({1, 64}), 4, 4, false, false, mx, mn);
    std::printf("wu_min=%u wu_max=%u\n", mn, mx);
    GetWelfordFinalizeMaxMinTmpSize(ge::Shape({64}), 4, false, mx, mn);
    std::printf("wf_min=%u wf_max=%u\n", mn, mx);
    return 0;
}
