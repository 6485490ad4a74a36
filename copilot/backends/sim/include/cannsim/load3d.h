// LoadData's 3-D form (Load3Dv2, LoadData3DParamsV2): img2col of a feature map in L1 (A1) into the
// left-matrix buffer L0A (A2) on MTE1. Written from the CANN 9.0.0 API reference 6.2.3.2.1.2 LoadData
// ("Load3D", table 6-171 and the Load3d data format section), facts only; see docs/emulator-cube.md.
//
// Source (A1): the feature map as C1 x l1H x l1W x C0 (NC1HWC0 of one image: C0 = 32 B of elements,
// C1 = channelSize / C0). Destination (A2): the window [mStartPt, +mExtension) x [kStartPt, +kExtension)
// of the img2col matrix M x K, M = Ho x Wo output positions (m = ho * Wo + wo), K = C1 x filterH x
// filterW x C0 with k = ((c1 * filterH + kh) * filterW + kw) * C0 + c0 (the FRACTAL_Z order of the
// weights; the reference shows the (kh, kw, c) order for one channel group, the C1 nesting is
// UNVERIFIED), in the Mmad left-matrix layout (Zz on A2/A3, Nz on Atlas 350), padded to whole fractals
// with zeros. Input row h = ho * strideH - padTop + kh * dilationH (w alike); outside the map: padValue.
// Ho = (l1H + padTop + padBottom - dilationH * (filterH - 1) - 1) / strideH + 1 (Wo alike).
//
// Rules: L2.LOAD3D_PARAMS (the fields' documented ranges, channelSize's legal values per dtype,
// enSmallK / fMatrixCtrl, a window that fits the map, dtype per position), L2.LOAD3D_ALIGN (kStartPt /
// kExtension on C0 and mStartPt / mExtension on 16 unless the window reaches the matrix's last
// fractal), plus L2.CUBE_POSITION / L2.CUBE_ALIGN / L2.CUBE_BOUNDS as for the 2-D form.
// Not emulated (L4.API_UNKNOWN): the B2 destination, enTranspose, channel sizes with a 4 / 8 tail
// (4, 8, N*16+4, ... : their packed L1 layout is not in the reference), the SetFmatrix path
// (isSetFMatrix = false). Cost (ESTIMATE): the destination's bytes on MTE1, as LoadData 2-D.
#pragma once
#include <cstdint>
#include <cstring>
#include "cube.h"

namespace AscendC {

struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
inline constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};

template <typename T>
struct LoadData3DParamsV2 {
    uint8_t padList[4] = {0, 0, 0, 0};     // left, right, top, bottom
    uint16_t l1H = 0, l1W = 0, channelSize = 0;
    uint16_t kExtension = 0, mExtension = 0, kStartPt = 0, mStartPt = 0;
    uint8_t strideW = 1, strideH = 1, filterW = 1, filterH = 1, dilationFilterW = 1, dilationFilterH = 1;
    bool enTranspose = false, enSmallK = false;
    T padValue = T(0);
    bool filterSizeW = false, filterSizeH = false, fMatrixCtrl = false;

    LoadData3DParamsV2() = default;
    LoadData3DParamsV2(const uint8_t pads[4], uint16_t h, uint16_t w, uint16_t c, uint16_t kExt, uint16_t mExt,
                       uint16_t kStart, uint16_t mStart, uint8_t sW, uint8_t sH, uint8_t fW, uint8_t fH, uint8_t dW,
                       uint8_t dH, bool transpose = false, bool smallK = false, T pad = T(0), bool fsW = false,
                       bool fsH = false, bool fCtrl = false)
        : l1H(h), l1W(w), channelSize(c), kExtension(kExt), mExtension(mExt), kStartPt(kStart), mStartPt(mStart),
          strideW(sW), strideH(sH), filterW(fW), filterH(fH), dilationFilterW(dW), dilationFilterH(dH),
          enTranspose(transpose), enSmallK(smallK), padValue(pad), filterSizeW(fsW), filterSizeH(fsH),
          fMatrixCtrl(fCtrl) {
        std::memcpy(padList, pads, 4);
    }
};

}  // namespace AscendC

namespace cannsim::load3d {

// channelSize values the reference lists for A2/A3/Atlas 350 (N >= 1), by element size; `tail`: a
// 4 / 8 / 16 remainder below one C0 (legal, but its packed L1 layout is not emulated).
inline bool channel_legal(uint32_t bytes, uint32_t c, bool& tail) {
    tail = false;
    if (c < 1 || c > 63) return false;
    const uint32_t c0 = 32 / bytes;
    const uint32_t r = c % c0;
    if (r == 0) return true;
    tail = true;
    if (bytes == 4) return r == 4;                                   // 4, N*8, N*8+4
    if (bytes == 2) return r == 4 || r == 8;                         // 4, 8, N*16, N*16+4, N*16+8
    return r == 4 || r == 8 || r == 16;                              // 4, 8, 16, N*32, N*32+4/8/16
}

struct Geometry {
    int64_t fh, fw, ho, wo, m, k, c1, c0;
};

template <typename U>
inline Geometry geometry(const AscendC::LoadData3DParamsV2<U>& p, uint32_t bytes) {
    Geometry g{};
    g.c0 = 32 / bytes;
    g.fh = p.filterH + (p.filterSizeH ? 256 : 0);
    g.fw = p.filterW + (p.filterSizeW ? 256 : 0);
    const int64_t eh = int64_t(p.dilationFilterH) * (g.fh - 1) + 1, ew = int64_t(p.dilationFilterW) * (g.fw - 1) + 1;
    const int64_t sh = p.strideH ? p.strideH : 1, sw = p.strideW ? p.strideW : 1;
    const int64_t hh = int64_t(p.l1H) + p.padList[2] + p.padList[3], ww = int64_t(p.l1W) + p.padList[0] + p.padList[1];
    g.ho = hh >= eh ? (hh - eh) / sh + 1 : 0;
    g.wo = ww >= ew ? (ww - ew) / sw + 1 : 0;
    g.m = g.ho * g.wo;
    g.c1 = (p.channelSize + g.c0 - 1) / g.c0;
    g.k = g.c1 * g.fh * g.fw * g.c0;
    return g;
}

}  // namespace cannsim::load3d

namespace AscendC {

template <typename T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, typename U = T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<U>& p, CANNSIM_LOC) {
    static_assert(std::is_same_v<T, U>, "LoadData3DParamsV2's padValue type must be the tensors' dtype");
    (void)cannsim::mix::CubeUse<sizeof(T)>::registered;
    using cannsim::report;
    using cannsim::Severity;
    const char* api = "LoadData";
    cannsim::check_cube_dtype("LoadData", cannsim::dtype_of<T>(), loc);
    if (!cannsim::check_position(api, "src", src, {TPosition::A1, TPosition::B1}, loc) ||
        !cannsim::check_position(api, "dst", dst, {TPosition::A2, TPosition::B2}, loc))
        return;
    cannsim::check_cube_align(api, "src", src, 32, loc);
    cannsim::check_cube_align(api, "dst", dst, 512, loc);
    constexpr bool a2_dtype = std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> || std::is_same_v<T, half> ||
                              std::is_same_v<T, bfloat16_t> || std::is_same_v<T, uint32_t> || std::is_same_v<T, int32_t> ||
                              std::is_same_v<T, float>;
    if (!a2_dtype) {
        report("L2.LOAD3D_PARAMS", Severity::Error, api, loc.line(),
               cannsim::fmt("LoadData 3-D on %s: A1/A2 take u8/s8/half/bfloat16/u32/s32/float",
                            cannsim::dtype_name(cannsim::dtype_of<T>())));
        return;
    }
    if (dst.pos_ == TPosition::B2 || src.pos_ == TPosition::B1) {
        constexpr bool b2_dtype = !(std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>);
        if (!b2_dtype)
            report("L2.LOAD3D_PARAMS", Severity::Error, api, loc.line(),
                   "LoadData 3-D into B1/B2 on 8-bit data: B1/B2 take half/bfloat16/u32/s32/float");
        cannsim::unknown_api("LoadData (3-D into B2)", loc.line());
        return;
    }
    if (!defaultConfig.isSetFMatrix) {
        cannsim::unknown_api("LoadData (3-D with the SetFmatrix feature map, isSetFMatrix = false)", loc.line());
        return;
    }
    // documented ranges (the uint8_t fields' [0, 255] hold by their type)
    std::string bad;
    auto range = [&](const char* name, int64_t v, int64_t lo, int64_t hi) {
        if (v < lo || v > hi) bad += cannsim::fmt("%s%s %lld not in [%lld, %lld]", bad.empty() ? "" : "; ", name,
                                                 (long long)v, (long long)lo, (long long)hi);
    };
    range("l1H", p.l1H, 1, 32767);
    range("l1W", p.l1W, 1, 32767);
    range("kExtension", p.kExtension, 1, 65535);
    range("mExtension", p.mExtension, 1, 65535);
    range("strideW", p.strideW, 1, 63);
    range("strideH", p.strideH, 1, 63);
    range("filterW", p.filterW, 1, 255);
    range("filterH", p.filterH, 1, 255);
    range("dilationFilterW", p.dilationFilterW, 1, 255);
    range("dilationFilterH", p.dilationFilterH, 1, 255);
    bool tail = false;
    if (!cannsim::load3d::channel_legal(sizeof(T), p.channelSize, tail))
        bad += cannsim::fmt("%schannelSize %u is not one the reference lists for %u-byte data (C0 = %u: multiples of C0, "
                            "or a 4/8%s remainder, at most 63)", bad.empty() ? "" : "; ", (unsigned)p.channelSize,
                            (unsigned)sizeof(T), (unsigned)(32 / sizeof(T)), sizeof(T) == 1 ? "/16" : "");
    if (p.enSmallK) bad += std::string(bad.empty() ? "" : "; ") + "enSmallK is no longer supported";
    if (p.fMatrixCtrl) bad += std::string(bad.empty() ? "" : "; ") + "fMatrixCtrl must be false";
    const cannsim::load3d::Geometry g = cannsim::load3d::geometry(p, sizeof(T));
    if (bad.empty() && g.m == 0)
        bad = cannsim::fmt("the dilated %lld x %lld filter does not fit the padded %u x %u map: no output position",
                           (long long)g.fh, (long long)g.fw, (unsigned)p.l1H, (unsigned)p.l1W);
    if (bad.empty() && (int64_t(p.mStartPt) + p.mExtension > g.m || int64_t(p.kStartPt) + p.kExtension > g.k))
        bad = cannsim::fmt("the window m [%u, %u) x k [%u, %u) leaves the img2col matrix of %lld x %lld",
                           (unsigned)p.mStartPt, (unsigned)(p.mStartPt + p.mExtension), (unsigned)p.kStartPt,
                           (unsigned)(p.kStartPt + p.kExtension), (long long)g.m, (long long)g.k);
    if (!bad.empty()) {
        report("L2.LOAD3D_PARAMS", Severity::Error, api, loc.line(), "LoadData3DParamsV2: " + bad);
        return;
    }
    const int64_t c0 = g.c0;
    std::string mis;
    if (p.kStartPt % c0) mis += cannsim::fmt("kStartPt %u is not a multiple of %lld", (unsigned)p.kStartPt, (long long)c0);
    if (p.kExtension % c0 && int64_t(p.kStartPt) + p.kExtension != g.k)
        mis += cannsim::fmt("%skExtension %u is not a multiple of %lld and does not reach K = %lld", mis.empty() ? "" : "; ",
                            (unsigned)p.kExtension, (long long)c0, (long long)g.k);
    if (p.mStartPt % 16 && int64_t(p.mStartPt) + p.mExtension != g.m)
        mis += cannsim::fmt("%smStartPt %u is not a multiple of 16", mis.empty() ? "" : "; ", (unsigned)p.mStartPt);
    if (p.mExtension % 16 && int64_t(p.mStartPt) + p.mExtension != g.m)
        mis += cannsim::fmt("%smExtension %u is not a multiple of 16 and does not reach M = %lld", mis.empty() ? "" : "; ",
                            (unsigned)p.mExtension, (long long)g.m);
    if (!mis.empty()) {
        report("L2.LOAD3D_ALIGN", Severity::Error, api, loc.line(), "LoadData3DParamsV2: " + mis +
               " (the window must start and end on fractals unless it covers the last one)");
        return;
    }
    if (p.enTranspose) {
        cannsim::unknown_api("LoadData (3-D with enTranspose)", loc.line());
        return;
    }
    if (tail) {
        cannsim::unknown_api("LoadData (3-D with a channelSize below a whole C0: packed 4/8-channel layout)", loc.line());
        return;
    }
    const int64_t mb = (p.mExtension + 15) / 16, kb = (p.kExtension + c0 - 1) / c0;
    const uint64_t src_bytes = uint64_t(g.c1) * p.l1H * p.l1W * c0 * sizeof(T);
    const uint64_t dst_bytes = uint64_t(mb) * kb * 512;
    cannsim::cube_range(api, "src", src, 0, src_bytes, loc);
    cannsim::cube_range(api, "dst", dst, 0, dst_bytes, loc);
    if (!cannsim::count_only()) {
        const T* s = reinterpret_cast<const T*>(cannsim::arena_at(src.addr_));
        T* d = reinterpret_cast<T*>(cannsim::arena_at(dst.addr_));
        const bool nz = cannsim::arch() == 3510;
        const uint64_t mpad = uint64_t(mb) * 16;
        for (int64_t i = 0; i < mpad; ++i) {
            for (int64_t j = 0; j < kb * c0; ++j) {
                T v = T(0);
                const int64_t m = p.mStartPt + i, k = p.kStartPt + j;
                if (i < p.mExtension && j < p.kExtension) {
                    const int64_t c = k % c0, tap = (k / c0) % (g.fh * g.fw), c1 = k / (c0 * g.fh * g.fw);
                    const int64_t kh = tap / g.fw, kw = tap % g.fw;
                    const int64_t h = (m / g.wo) * p.strideH - p.padList[2] + kh * p.dilationFilterH;
                    const int64_t w = (m % g.wo) * p.strideW - p.padList[0] + kw * p.dilationFilterW;
                    v = h < 0 || w < 0 || h >= p.l1H || w >= p.l1W ? p.padValue
                                                                 : s[((c1 * p.l1H + h) * p.l1W + w) * c0 + c];
                }
                const uint64_t off = nz ? cannsim::nz_offset(i, j, mpad, c0) : cannsim::zz_offset(i, j, kb, c0);
                d[off] = v;
            }
        }
    }
    cannsim::mark_written(dst.slot_, PIPE_MTE1);
    cannsim::cost::note_cube(0);
    cannsim::record_cost(PIPE_MTE1, "LoadData", cannsim::dtype_of<T>(), dst_bytes / sizeof(T), dst_bytes);
}

}  // namespace AscendC
