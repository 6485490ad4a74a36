// Types shared by the kernel side and the host side of the high-level APIs: modes, shape infos and
// the tiling structs the host helpers fill (field names as the CANN API reference lists them), plus
// the emulator's temporary-buffer model, so that the host's Get...MaxMinTmpSize and the kernel's
// L2.TMP_BUFFER check agree by construction.
#pragma once
#include <cstdint>

namespace AscendC {

enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };
enum class TopKAlgo { RADIX_SELECT, MERGE_SORT };
enum class TopKOrder { UNSET, LARGEST, SMALLEST };
struct TopKConfig {
    TopKAlgo algo = TopKAlgo::MERGE_SORT;
    TopKOrder order = TopKOrder::UNSET;
    bool sorted = true;
};
constexpr TopKConfig defaultTopKConfig = {TopKAlgo::MERGE_SORT, TopKOrder::UNSET, true};

struct TopKInfo {
    int32_t outter = 1;   // rows
    int32_t inner = 0;    // row length, padded to a multiple of 32
    int32_t n = 0;        // valid elements per row
};

namespace tiling {
struct TopkTiling {
    int32_t tmpLocalSize = 0;
    int32_t allDataSize = 0;
    int32_t innerDataSize = 0;
    uint32_t sortRepeat = 0;
    int32_t mrgSortRepeat = 0;
    int32_t kAlignFourBytes = 0;
    int32_t kAlignTwoBytes = 0;
    int32_t maskOffset = 0;
    int32_t maskVreducev2FourBytes = 0;
    int32_t maskVreducev2TwoBytes = 0;
    int32_t mrgSortSrc1offset = 0;
    int32_t mrgSortSrc2offset = 0;
    int32_t mrgSortSrc3offset = 0;
    int32_t mrgSortTwoQueueSrc1Offset = 0;
    int32_t mrgFourQueueTailPara1 = 0;
    int32_t mrgFourQueueTailPara2 = 0;
    int32_t srcIndexOffset = 0;
    uint32_t copyUbToUbBlockCount = 0;
    int32_t topkMrgSrc1MaskSizeOffset = 0;
    int32_t topkNSmallSrcIndexOffset = 0;
    uint32_t vreduceValMask0 = 0;
    uint32_t vreduceValMask1 = 0;
    uint32_t vreduceIdxMask0 = 0;
    uint32_t vreduceIdxMask1 = 0;
    uint16_t vreducehalfValMask0 = 0;
    uint16_t vreducehalfValMask1 = 0;
    uint16_t vreducehalfValMask2 = 0;
    uint16_t vreducehalfValMask3 = 0;
    uint16_t vreducehalfValMask4 = 0;
    uint16_t vreducehalfValMask5 = 0;
    uint16_t vreducehalfValMask6 = 0;
    uint16_t vreducehalfValMask7 = 0;
};
struct SoftMaxTiling {
    uint32_t srcM = 0, srcK = 0, srcSize = 0;
    uint32_t outMaxM = 0, outMaxK = 0, outMaxSize = 0;
    uint32_t splitM = 0, splitK = 0, splitSize = 0;
    uint32_t reduceM = 0, reduceK = 0, reduceSize = 0;
    uint32_t rangeM = 0, tailM = 0, tailSplitSize = 0, tailReduceSize = 0;
};
using LogSoftMaxTiling = SoftMaxTiling;

struct RmsNormTiling {
    uint32_t bLength = 0, sLength = 0, hLength = 0, originalHLength = 0;
    float reciprocalOfHLength = 0;
    uint32_t mainBshLength = 0, mainBsLength = 0, mainBsLengthAlign = 0, loopRound = 0, inputTailPos = 0;
    uint32_t tailBshLength = 0, tailBsLength = 0;
};

struct LayerNormTiling {
    uint32_t bLength = 0, sLength = 0, hLength = 0, originalHLength = 0, inputXSize = 0, meanVarSize = 0;
    uint32_t numberOfTmpBuf = 0, meanTmpTensorPos = 0, meanTmpTensorSize = 0, varianceTmpTensorPos = 0;
    uint32_t varianceTmpTensorSize = 0, tmpBufSize = 0, oneTmpSize = 0, firstTmpStartPos = 0;
    uint32_t secondTmpStartPos = 0, thirdTmpStartPos = 0, loopRound = 0, inputRoundSize = 0, inputTailSize = 0;
    uint32_t inputTailPos = 0, meanVarRoundSize = 0, meanVarTailSize = 0, meanVarTailPos = 0, bshCurLength = 0;
    uint32_t bsCurLength = 0;
    float lastDimValueBack = 0.0f;
};
}  // namespace tiling

struct SoftMaxShapeInfo {
    uint32_t srcM = 0;      // product of the non-last axes
    uint32_t srcK = 0;      // last axis, 32 B aligned
    uint32_t oriSrcM = 0;   // the unpadded ones
    uint32_t oriSrcK = 0;
};
enum class SoftmaxMode { SOFTMAX_NORMAL = 0, SOFTMAX_OUTPUT_WITHOUT_BRC = 1 };
struct SoftmaxConfig {
    bool isCheckTiling = true;
    uint32_t oriSrcM = 0, oriSrcK = 0;
    SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};

}  // namespace AscendC

// The tiling structs stay in AscendC::tiling (as the reference's host signatures name them): a
// kernel may define its own struct of the same name (e.g. an RmsNormTiling of its own) at global
// scope or in optiling.

namespace cannsim::tmp_model {

inline uint32_t up32(uint64_t b) { return static_cast<uint32_t>((b + 31) / 32 * 32); }

// TopK (merge-sort algorithm), bytes of tmpLocal: one row at a time in Normal mode (scores,
// generated indices, two buffers of 8-byte (score, index) structures); all rows at once in Small
// mode. Minimum and maximum are equal: the emulator's model, not a vendor figure.
inline uint32_t topk_bytes(int32_t inner, int32_t outter, bool isInitIndex, bool small, bool isLargest,
                           uint32_t typeSize) {
    const uint64_t rows = small ? static_cast<uint64_t>(outter > 0 ? outter : 1) : 1;
    const uint64_t elems = rows * static_cast<uint64_t>(inner > 0 ? inner : 0);
    uint64_t b = up32(elems * 8) * 2;
    if (!isInitIndex) b += up32(elems * 4);
    if (!isLargest) b += up32(elems * typeSize);
    return static_cast<uint32_t>(b);
}

// Elementwise library APIs: `nodes` live float intermediates per element. Minimum: one 256-byte
// repeat per node (the API then loops); maximum: every element at once. The emulator's model.
struct ElementwiseTmp { const char* api; uint32_t nodes; };
inline constexpr ElementwiseTmp kElementwiseTmp[] = {
    {"Tanh", 2}, {"Sin", 3}, {"Cos", 3}, {"Tan", 4}, {"Asin", 4}, {"Acos", 4}, {"Atan", 4}, {"Sinh", 2},
    {"Cosh", 2}, {"Asinh", 2}, {"Acosh", 2}, {"Atanh", 2}, {"Erf", 3}, {"Erfc", 4}, {"Frac", 1}, {"Sign", 2},
    {"Trunc", 1}, {"Floor", 1}, {"Ceil", 1}, {"Round", 1}, {"Lgamma", 6}, {"Digamma", 6}, {"Exp", 3},
    {"Fmod", 2}, {"Xor", 1}, {"Power", 4}, {"ClampMax", 1}, {"ClampMin", 1}, {"Sigmoid", 1}, {"Gelu", 2},
    {"FasterGelu", 1}, {"FasterGeluV2", 2}, {"GeGLU", 2}, {"ReGlu", 1}, {"SwiGLU", 2}, {"Silu", 0},
    {"Swish", 0}, {"Log", 0}, {"Log2", 0}, {"Log10", 0},
    {"AscendQuant", 2}, {"AscendDequant", 2}, {"AscendAntiQuant", 2}, {"ReduceXorSum", 2}, {"CumSum", 2},
};
inline constexpr uint32_t elementwise_nodes(const char* api) {
    for (const auto& e : kElementwiseTmp) {
        const char* a = e.api; const char* b = api;
        while (*a && *a == *b) { ++a; ++b; }
        if (*a == 0 && *b == 0) return e.nodes;
    }
    return 1;
}
inline uint32_t elementwise_min_bytes(const char* api, uint32_t /*typeSize*/) { return elementwise_nodes(api) * 256; }
inline uint32_t elementwise_max_bytes(const char* api, uint64_t count) {
    const uint32_t n = elementwise_nodes(api);
    const uint64_t b = static_cast<uint64_t>(n) * up32(count * 4);
    return static_cast<uint32_t>(b > n * 256u ? b : n * 256u);
}

// Row-wise library APIs (softmax family, RmsNorm, LayerNorm): float working rows of k elements,
// `rows_buffers` of them plus a 32-byte reduce slot per row. Minimum: one row at a time; maximum:
// all rows at once.
inline uint32_t rowwise_min_bytes(uint32_t k, uint32_t rows_buffers) { return up32(uint64_t(k) * 4) * rows_buffers + 64; }
inline uint32_t rowwise_max_bytes(uint32_t m, uint32_t k, uint32_t rows_buffers) {
    return static_cast<uint32_t>(uint64_t(m ? m : 1) * rowwise_min_bytes(k, rows_buffers));
}
constexpr uint32_t kSoftmaxBuffers = 2, kRmsNormBuffers = 2, kLayerNormBuffers = 3;

// Sort with isFullSort: one buffer of 8-byte structures for the merge passes.
inline uint32_t sort_bytes(uint32_t elemCount) { return up32(static_cast<uint64_t>(elemCount) * 8); }

}  // namespace cannsim::tmp_model
