// Types shared by the kernel side and the host side of the layout-transform (Pad, UnPad, Broadcast)
// and the further normalization libraries (BatchNorm, DeepNorm, GroupNorm, LayerNormGrad,
// LayerNormGradBeta, WelfordUpdate, WelfordFinalize): parameter structs with the reference's field
// names, tiling structs in AscendC::tiling, and the emulator's tmp-buffer model so that the host
// helpers Get<Api>MaxMinTmpSize and the kernel's L2.TMP_BUFFER check agree by construction.
#pragma once
#include <cstdint>

namespace AscendC {

// Data layouts named by the library APIs (LayerNormGradShapeInfo, TransDataConfig), in the reference's order.
enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };

struct PadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
    int32_t padValue = 0;
};
struct UnPadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
};

// Broadcast with a kernel-side tiling (Atlas 350): ranks 1..9.
struct BroadcastTiling {
    uint32_t rank = 0;
    uint32_t dstShape[9] = {};
    uint32_t srcShape[9] = {};
    bool srcInnerPad = false;
};

struct DropOutShapeInfo {
    uint32_t firstAxis = 0;      // rows of srcLocal and maskLocal
    uint32_t srcLastAxis = 0;    // elements per srcLocal row
    uint32_t maskLastAxis = 0;   // uint8 elements per maskLocal row, padding included
};

struct WelfordUpdateParam {
    uint32_t rnLength = 1;
    uint32_t abLength = 0;
    uint32_t abComputeLength = 0;
    float nRec = 0;
};
struct WelfordUpdateConfig {
    bool isInplace = false;
};
constexpr WelfordUpdateConfig WFUPDATE_DEFAULT_CFG = {false};

struct WelfordFinalizePara {
    uint32_t rnLength = 0;
    uint32_t abLength = 0;
    uint32_t headCount = 0;
    uint32_t headCountLength = 0;
    uint32_t tailCount = 0;
    uint32_t tailCountLength = 0;
    float abRec = 0;
    float rRec = 0;
    float rRecWithCorrection = 0;
};
struct WelfordFinalizeConfig {
    bool isCorrection = false;
};
constexpr WelfordFinalizeConfig WFFINALIZE_DEFAULT_CFG = {false};

namespace tiling {
// The reference lists these structs by name only; their fields here are the emulator's: the shape
// the host helper was given and the tmp size it planned for.
struct PadTiling { uint32_t srcHeight = 0, srcWidth = 0, srcOriWidth = 0, tmpBuffSize = 0; };
struct UnPadTiling { uint32_t srcHeight = 0, srcWidth = 0, tmpBuffSize = 0; };
struct BatchNormTiling { uint32_t bLength = 0, sLength = 0, hLength = 0, originalBLength = 0, tmpBufSize = 0; };
struct DeepNormTiling { uint32_t bLength = 0, sLength = 0, hLength = 0, originalHLength = 0, tmpBufSize = 0; };
struct GroupNormTiling { uint32_t n = 0, c = 0, hw = 0, g = 0, tmpBufSize = 0; };   // [N, C, H, W], hw = H * W
struct LayerNormGradTiling { uint32_t bLength = 0, sLength = 0, hLength = 0, originalHLength = 0, tmpBufSize = 0; };
struct LayerNormGradBetaTiling { uint32_t bLength = 0, sLength = 0, hLength = 0, originalHLength = 0, tmpBufSize = 0; };
}  // namespace tiling

}  // namespace AscendC

namespace cannsim::tmp_model {

inline uint32_t up32_ext(uint64_t b) { return static_cast<uint32_t>((b + 31) / 32 * 32); }

// Pad / UnPad: one 32-byte-aligned float row (minimum), every row (maximum).
inline uint32_t pad_min_bytes(uint64_t width) { return up32_ext(width * 4) + 32; }
inline uint32_t pad_max_bytes(uint64_t height, uint64_t width) { return static_cast<uint32_t>((height ? height : 1) * pad_min_bytes(width)); }
// Broadcast: one 256-byte repeat (minimum), the whole output (maximum).
inline uint32_t broadcast_min_bytes() { return 256; }
inline uint32_t broadcast_max_bytes(uint64_t dst_elems, uint32_t typeSize) {
    const uint32_t b = up32_ext(dst_elems * typeSize);
    return b > 256 ? b : 256;
}
// DropOut: one cleaned mask row and one float row (minimum), every row (maximum).
inline uint32_t dropout_min_bytes(uint64_t width) { return up32_ext(width) + up32_ext(width * 4); }
inline uint32_t dropout_max_bytes(uint64_t height, uint64_t width) { return static_cast<uint32_t>((height ? height : 1) * dropout_min_bytes(width)); }
// Row-wise normalization libraries: `buffers` float rows of the reduced axis (minimum one row of
// each; maximum all rows).
inline uint32_t norm_ext_min_bytes(uint64_t row, uint32_t buffers) { return up32_ext(row * 4) * buffers + 64; }
inline uint32_t norm_ext_max_bytes(uint64_t rows, uint64_t row, uint32_t buffers) {
    return static_cast<uint32_t>((rows ? rows : 1) * norm_ext_min_bytes(row, buffers));
}
constexpr uint32_t kBatchNormBuffers = 3, kDeepNormBuffers = 3, kGroupNormBuffers = 3;
constexpr uint32_t kLayerNormGradBuffers = 4, kLayerNormGradBetaBuffers = 2, kWelfordBuffers = 2;

// SoftmaxFlashV3: rows of the float copy, its mean-shifted copy and the exp row.
constexpr uint32_t kSoftmaxV3Buffers = 3;
}  // namespace cannsim::tmp_model
