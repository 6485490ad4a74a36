// Host-side helpers of the layout-transform and further normalization libraries: the tiling
// functions and Get<Api>MaxMinTmpSize. Sizes follow the emulator's tmp model in hl_types_ext.h, the
// one the kernel side checks (L2.TMP_BUFFER), so a kernel sized by these helpers passes.
#ifndef CANNSIM_HL_HOST_EXT_H
#define CANNSIM_HL_HOST_EXT_H

#include "cannsim/hl_host.h"
#include "cannsim/hl_types_ext.h"

namespace AscendC {
namespace host_ext {
inline uint32_t dim(const ge::Shape& s, size_t i) { return static_cast<uint32_t>(s.GetDim(i)); }
// [B, S, H] of a 3-D shape; a 2-D one is [1, S, H].
inline void bsh3(const ge::Shape& s, uint32_t& b, uint32_t& sl, uint32_t& h) {
    const size_t n = s.GetDimNum();
    b = n >= 3 ? dim(s, n - 3) : 1;
    sl = n >= 2 ? dim(s, n - 2) : 1;
    h = n >= 1 ? dim(s, n - 1) : 0;
}
inline uint32_t elements(const ge::Shape& s) { return static_cast<uint32_t>(s.GetShapeSize()); }
}  // namespace host_ext

// ---- Pad / UnPad ----
inline void GetPadMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue, uint32_t& minValue) {
    const uint32_t h = host_ext::dim(srcShape, 0), w = host_ext::dim(srcShape, 1), epb = typeSize ? 32 / typeSize : 1;
    const uint32_t wa = (w + epb - 1) / epb * epb;
    minValue = cannsim::tmp_model::pad_min_bytes(wa);
    maxValue = cannsim::tmp_model::pad_max_bytes(h, wa);
}
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, tiling::PadTiling& tiling) {
    (void)typeSize;
    tiling.srcHeight = host_ext::dim(srcShape, 0);
    tiling.srcWidth = host_ext::dim(srcShape, 1);
    tiling.srcOriWidth = host_ext::dim(oriSrcShape, 1);
    tiling.tmpBuffSize = stackBufferSize;
}
inline void GetUnPadMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape, const uint32_t typeSize,
                                  uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize;
    minValue = cannsim::tmp_model::pad_min_bytes(host_ext::dim(srcShape, 1));
    maxValue = cannsim::tmp_model::pad_max_bytes(host_ext::dim(srcShape, 0), host_ext::dim(srcShape, 1));
}
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                            tiling::UnPadTiling& tiling) {
    (void)typeSize;
    tiling.srcHeight = host_ext::dim(srcShape, 0);
    tiling.srcWidth = host_ext::dim(srcShape, 1);
    tiling.tmpBuffSize = stackBufferSize;
}

// ---- Broadcast ----
inline void GetBroadCastMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const ge::Shape& srcShape, const ge::Shape& dstShape,
                                      uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)srcShape; (void)isReuseSource;
    minValue = cannsim::tmp_model::broadcast_min_bytes();
    maxValue = cannsim::tmp_model::broadcast_max_bytes(host_ext::elements(dstShape), typeSize);
}

// ---- BatchNorm: srcShape [B, S, H], originSrcShape [originB, S, H] ----
inline bool GetBatchNormMaxMinTmpSize(const ge::Shape& srcShape, const ge::Shape& originSrcShape, const uint32_t typeSize,
                                      const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue,
                                      const bool isBasicBlock = false) {
    (void)originSrcShape; (void)typeSize; (void)isReuseSource; (void)isBasicBlock;
    uint32_t b, s, h;
    host_ext::bsh3(srcShape, b, s, h);
    if (!b || !s || !h) return false;
    minValue = cannsim::tmp_model::norm_ext_min_bytes(uint64_t(s) * h, cannsim::tmp_model::kBatchNormBuffers);
    maxValue = cannsim::tmp_model::norm_ext_max_bytes(b, uint64_t(s) * h, cannsim::tmp_model::kBatchNormBuffers);
    return true;
}
inline bool GetBatchNormNDTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape, const uint32_t stackBufferByteSize,
                                     const uint32_t typeSize, const bool isReuseSource, tiling::BatchNormTiling& tilling,
                                     const bool isBasicBlock = false) {
    (void)typeSize; (void)isReuseSource; (void)isBasicBlock;
    uint32_t ob, s2, h2;
    host_ext::bsh3(srcShape, tilling.bLength, tilling.sLength, tilling.hLength);
    host_ext::bsh3(originSrcShape, ob, s2, h2);
    tilling.originalBLength = ob;
    tilling.tmpBufSize = stackBufferByteSize;
    return tilling.bLength && tilling.sLength && tilling.hLength && ob <= tilling.bLength;
}

// ---- DeepNorm / LayerNormGrad / LayerNormGradBeta: rows of H ----
inline bool GetDeepNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                     const bool isBasicBlock, uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize; (void)isReuseSource; (void)isBasicBlock;
    uint32_t b, s, h;
    host_ext::bsh3(srcShape, b, s, h);
    if (!h) return false;
    minValue = cannsim::tmp_model::norm_ext_min_bytes(h, cannsim::tmp_model::kDeepNormBuffers);
    maxValue = cannsim::tmp_model::norm_ext_max_bytes(uint64_t(b) * s, h, cannsim::tmp_model::kDeepNormBuffers);
    return true;
}
inline bool GetDeepNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape, const uint32_t stackBufferSize,
                                  const uint32_t typeSize, const bool isReuseSource, const bool isBasicBlock,
                                  tiling::DeepNormTiling& tiling) {
    (void)typeSize; (void)isReuseSource; (void)isBasicBlock;
    uint32_t ob, os, oh;
    host_ext::bsh3(srcShape, tiling.bLength, tiling.sLength, tiling.hLength);
    host_ext::bsh3(originSrcShape, ob, os, oh);
    tiling.originalHLength = oh;
    tiling.tmpBufSize = stackBufferSize;
    return tiling.hLength && oh <= tiling.hLength;
}
inline void GetLayerNormGradMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                          uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize; (void)isReuseSource;
    uint32_t b, s, h;
    host_ext::bsh3(srcShape, b, s, h);
    minValue = cannsim::tmp_model::norm_ext_min_bytes(h, cannsim::tmp_model::kLayerNormGradBuffers);
    maxValue = cannsim::tmp_model::norm_ext_max_bytes(uint64_t(b) * s, h, cannsim::tmp_model::kLayerNormGradBuffers);
}
inline void GetLayerNormGradNDTilingInfo(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                         const bool isReuseSource, tiling::LayerNormGradTiling& tiling) {
    (void)typeSize; (void)isReuseSource;
    host_ext::bsh3(srcShape, tiling.bLength, tiling.sLength, tiling.hLength);
    tiling.originalHLength = tiling.hLength;
    tiling.tmpBufSize = stackBufferSize;
}
inline void GetLayerNormGradBetaMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                              uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize; (void)isReuseSource;
    uint32_t b, s, h;
    host_ext::bsh3(srcShape, b, s, h);
    minValue = cannsim::tmp_model::norm_ext_min_bytes(h, cannsim::tmp_model::kLayerNormGradBetaBuffers);
    maxValue = cannsim::tmp_model::norm_ext_max_bytes(uint64_t(b) * s, h, cannsim::tmp_model::kLayerNormGradBetaBuffers);
}
inline void GetLayerNormGradBetaNDTilingInfo(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                             const bool isReuseSource, tiling::LayerNormGradBetaTiling& tiling) {
    (void)typeSize; (void)isReuseSource;
    host_ext::bsh3(srcShape, tiling.bLength, tiling.sLength, tiling.hLength);
    tiling.originalHLength = tiling.hLength;
    tiling.tmpBufSize = stackBufferSize;
}

// ---- GroupNorm: srcShape [N, C, H, W] ----
inline void GetGroupNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const uint32_t groupNum, uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize; (void)isReuseSource;
    const uint64_t n = host_ext::dim(srcShape, 0), c = host_ext::dim(srcShape, 1);
    const uint64_t hw = uint64_t(host_ext::dim(srcShape, 2)) * host_ext::dim(srcShape, 3);
    const uint64_t per = groupNum ? c / groupNum * hw : c * hw;
    minValue = cannsim::tmp_model::norm_ext_min_bytes(per, cannsim::tmp_model::kGroupNormBuffers);
    maxValue = cannsim::tmp_model::norm_ext_max_bytes(n * (groupNum ? groupNum : 1), per, cannsim::tmp_model::kGroupNormBuffers);
}
inline void GetGroupNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                     const bool isReuseSource, const uint32_t groupNum, tiling::GroupNormTiling& tiling) {
    (void)typeSize; (void)isReuseSource;
    tiling.n = host_ext::dim(srcShape, 0);
    tiling.c = host_ext::dim(srcShape, 1);
    tiling.hw = host_ext::dim(srcShape, 2) * host_ext::dim(srcShape, 3);
    tiling.g = groupNum;
    tiling.tmpBufSize = stackBufferSize;
}

// ---- Welford: srcShape [rnLength, abLength] ----
inline void GetWelfordUpdateMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSizeT, const uint32_t typeSizeU,
                                          const bool isReuseSource, const bool isInplace, uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSizeT; (void)typeSizeU; (void)isReuseSource; (void)isInplace;
    const uint32_t ab = host_ext::dim(srcShape, srcShape.GetDimNum() - 1);
    minValue = maxValue = cannsim::tmp_model::norm_ext_min_bytes(ab, cannsim::tmp_model::kWelfordBuffers);
}
inline void GetWelfordFinalizeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                            uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize; (void)isReuseSource;
    const uint32_t ab = host_ext::dim(srcShape, srcShape.GetDimNum() - 1);
    minValue = maxValue = cannsim::tmp_model::norm_ext_min_bytes(ab, cannsim::tmp_model::kWelfordBuffers);
}

// ---- SoftmaxFlashV2 (srcShape [m, k]; dataTypeSize1 of x, dataTypeSize2 of sum/max) ----
inline uint32_t GetSoftMaxFlashV2MinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t dataTypeSize2,
                                            const bool isUpdate, const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize1; (void)dataTypeSize2; (void)isUpdate; (void)isBasicBlock; (void)isFlashOutputBrc;
    uint32_t m, k;
    detail_host::rows_cols(srcShape, m, k);
    return cannsim::tmp_model::rowwise_min_bytes(k, cannsim::tmp_model::kSoftmaxBuffers);
}
inline uint32_t GetSoftMaxFlashV2MaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t dataTypeSize2,
                                            const bool isUpdate, const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize1; (void)dataTypeSize2; (void)isUpdate; (void)isBasicBlock; (void)isFlashOutputBrc;
    uint32_t m, k;
    detail_host::rows_cols(srcShape, m, k);
    return cannsim::tmp_model::rowwise_max_bytes(m, k, cannsim::tmp_model::kSoftmaxBuffers);
}
inline void SoftMaxFlashV2TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t dataTypeSize2,
                                     const uint32_t localWorkSpaceSize, tiling::SoftMaxTiling& softmaxFlashTiling, const bool isUpdate,
                                     const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize1; (void)isUpdate; (void)isBasicBlock; (void)isFlashOutputBrc;
    SoftMaxTilingFunc(srcShape, dataTypeSize2, localWorkSpaceSize, softmaxFlashTiling);
}

// ---- SoftmaxFlashV3 (srcShape [m, n]; dataTypeSize1 2 (half), dataTypeSize2 4 (float)) ----
inline void GetSoftMaxFlashV3MaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t dataTypeSize2,
                                           uint32_t& maxValue, uint32_t& minValue, const bool isUpdate,
                                           const bool isBasicBlock = false) {
    (void)dataTypeSize1; (void)dataTypeSize2; (void)isUpdate; (void)isBasicBlock;
    uint32_t m, k;
    detail_host::rows_cols(srcShape, m, k);
    minValue = cannsim::tmp_model::rowwise_min_bytes(k, cannsim::tmp_model::kSoftmaxV3Buffers);
    maxValue = cannsim::tmp_model::rowwise_max_bytes(m, k, cannsim::tmp_model::kSoftmaxV3Buffers);
}
inline void SoftMaxFlashV3TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1, const uint32_t dataTypeSize2,
                                     const uint32_t localWorkSpaceSize, tiling::SoftMaxTiling& softmaxFlashV3Tiling,
                                     const bool isUpdate, const bool isBasicBlock = false) {
    (void)dataTypeSize1; (void)isUpdate; (void)isBasicBlock;
    SoftMaxTilingFunc(srcShape, dataTypeSize2, localWorkSpaceSize, softmaxFlashV3Tiling);
}

// ---- DropOut: srcShape [firstAxis, srcLastAxis] ----
inline void GetDropOutMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize; (void)isReuseSource;
    const size_t n = srcShape.GetDimNum();
    const uint64_t w = n ? host_ext::dim(srcShape, n - 1) : 0, h = n > 1 ? srcShape.GetShapeSize() / (w ? w : 1) : 1;
    minValue = cannsim::tmp_model::dropout_min_bytes(w);
    maxValue = cannsim::tmp_model::dropout_max_bytes(h, w);
}

}  // namespace AscendC

#endif  // CANNSIM_HL_HOST_EXT_H
