// BilinearInterpolation (ISASI): vRepeat vertical iterations, each writing 8 datablocks of dst
// (dstBlkStride blocks apart; iteration v starts v * vROffset elements in) as the sum of hRepeat
// horizontal iterations. Horizontal iteration k (counted over the whole call) reads the next 8
// byte offsets of src0Offset, each the start of a src0 datablock, and multiplies block b by
// src1[k] (repeatMode = false) or src1[8k + b] (repeatMode = true). Lanes outside the mask keep
// their dst value. Each product and each partial sum is rounded to half (the vector unit's
// multiply and add; the reference's example values are exact either way).
#pragma once
#include "hl_common.h"

namespace cannsim {

inline const ApiDtypes kBilinearDtypes[] = {{"BilinearInterpolation", DT_F16, DT_F16, 0}};

template <typename T>
inline void bilinear(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                     const AscendC::LocalTensor<uint32_t>& offsets, const AscendC::LocalTensor<T>& src1, const Lanes& L,
                     uint8_t hRepeat, bool repeatMode, uint16_t dstBlkStride, uint16_t vROffset, uint8_t vRepeat,
                     const AscendC::LocalTensor<uint8_t>& tmp, const SrcLoc& loc) {
    const char* api = "BilinearInterpolation";
    check_dtype_row(api, row_of(kBilinearDtypes, api), dtype_of<T>(), loc);
    if (hRepeat == 0 || vRepeat == 0) {
        hl_param_error(api, loc, fmt("BilinearInterpolation hRepeat %u and vRepeat %u must be in [1, 255]", hRepeat, vRepeat));
        return;
    }
    if (vROffset < 128 || (uint64_t(vROffset) * sizeof(T)) % 32 != 0) {
        hl_param_error(api, loc, fmt("BilinearInterpolation vROffset %u must be in [128, 65535) with vROffset * sizeof(T) "
                                     "a multiple of 32 bytes", vROffset));
        return;
    }
    const uint64_t iters = uint64_t(hRepeat) * vRepeat;
    const uint64_t epb = 32 / sizeof(T);
    const uint64_t dst_elems = uint64_t(vRepeat - 1) * vROffset + (7 * uint64_t(dstBlkStride) + 1) * epb;
    const HlSpan d = span("dst", dst, dst_elems, true), s0 = span("src0", src0, src0.GetSize()),
                 so = span("src0Offset", offsets, iters * 8), s1 = span("src1", src1, iters * (repeatMode ? 8 : 1)),
                 t = span("sharedTmpBuffer", tmp, tmp.GetSize());
    hl_check_spans(api, {d, s0, so, s1, t}, loc);
    hl_check_disjoint(api, s0, s1, loc);
    hl_check_disjoint(api, s0, so, loc);
    hl_check_disjoint(api, s1, so, loc);
    if (dstBlkStride > 0 && vRepeat > 1 && uint64_t(vROffset) < (7 * uint64_t(dstBlkStride) + 1) * epb)
        report("L2.OPERAND_OVERLAP", Severity::Error, api, loc.line(),
               fmt("BilinearInterpolation vertical iterations overlap in dst: each writes %llu elements from its start "
                   "(8 blocks, dstBlkStride %u) but vROffset is %u",
                   (unsigned long long)((7 * uint64_t(dstBlkStride) + 1) * epb), dstBlkStride, vROffset));
    const uint64_t need = uint64_t(src0.GetSize()) * 32 + uint64_t(src1.GetSize()) * 32;
    if (tmp.GetSize() < need)
        report("L2.TMP_BUFFER", Severity::Error, api, loc.line(),
               fmt("BilinearInterpolation sharedTmpBuffer holds %u bytes but needs at least src0.GetSize() * 32 + "
                   "src1.GetSize() * 32 = %llu", tmp.GetSize(), (unsigned long long)need));
    const uint64_t src0_bytes = uint64_t(src0.GetSize()) * sizeof(T);
    for (uint64_t k = 0; k < iters * 8 && !count_only(); ++k) {
        uint32_t off;
        std::memcpy(&off, ub_at(offsets.addr_ + 4 * k), 4);
        if (off % 32 != 0 || uint64_t(off) + 32 > src0_bytes) {
            report("L2.UB_BOUNDS", Severity::Error, api, loc.line(),
                   fmt("BilinearInterpolation src0Offset[%llu] = %u is not the start of a datablock of src0 (%llu bytes): "
                       "offsets are byte offsets of 32-byte blocks inside src0", (unsigned long long)k, off,
                       (unsigned long long)src0_bytes), true);
            return;
        }
    }
    if (!count_only()) {
        for (uint32_t v = 0; v < vRepeat; ++v) {
            T acc[8][32 / sizeof(T)];
            for (uint32_t h = 0; h < hRepeat; ++h) {
                const uint64_t k = uint64_t(v) * hRepeat + h;
                for (int b = 0; b < 8; ++b) {
                    uint32_t off;
                    std::memcpy(&off, ub_at(offsets.addr_ + 4 * (8 * k + b)), 4);
                    const T w = ld<T>(ub_at(src1.addr_ + sizeof(T) * (repeatMode ? 8 * k + b : k)));
                    for (uint64_t e = 0; e < epb; ++e) {
                        const T x = ld<T>(ub_at(src0.addr_ + off + sizeof(T) * e));
                        const T p = T(static_cast<float>(x) * static_cast<float>(w));
                        acc[b][e] = h == 0 ? p : T(static_cast<float>(acc[b][e]) + static_cast<float>(p));
                    }
                }
            }
            for (int b = 0; b < 8; ++b)
                for (uint64_t e = 0; e < epb; ++e)
                    if (L.active(0, static_cast<int>(b * epb + e)))
                        st<T>(ub_at(dst.addr_ + sizeof(T) * (uint64_t(v) * vROffset + (uint64_t(b) * dstBlkStride) * epb + e)),
                              acc[b][e]);
        }
    }
    mark_written(dst.slot_, PIPE_V);
    const uint64_t n = iters * 8 * epb;
    record_cost(PIPE_V, api, dtype_of<T>(), 2 * n, 3 * n * sizeof(T));   // a multiply and an add per lane
}

}  // namespace cannsim

namespace AscendC {

template <typename T>
inline void BilinearInterpolation(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src0Offset,
                                  const LocalTensor<T>& src1, uint64_t mask[], uint8_t hRepeat, bool repeatMode,
                                  uint16_t dstBlkStride, uint16_t vROffset, uint8_t vRepeat,
                                  const LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) {
    const cannsim::Lanes L = cannsim::mask_lanes("BilinearInterpolation", mask, 1, true, sizeof(T), true, loc);
    cannsim::bilinear(dst, src0, src0Offset, src1, L, hRepeat, repeatMode, dstBlkStride, vROffset, vRepeat, sharedTmpBuffer, loc);
}

template <typename T>
inline void BilinearInterpolation(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src0Offset,
                                  const LocalTensor<T>& src1, uint64_t mask, uint8_t hRepeat, bool repeatMode,
                                  uint16_t dstBlkStride, uint16_t vROffset, uint8_t vRepeat,
                                  const LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) {
    const cannsim::Lanes L = cannsim::mask_lanes("BilinearInterpolation", mask, 1, true, sizeof(T), true, loc);
    cannsim::bilinear(dst, src0, src0Offset, src1, L, hRepeat, repeatMode, dstBlkStride, vROffset, vRepeat, sharedTmpBuffer, loc);
}

}  // namespace AscendC
