// The shape rules and tmp-buffer sizes of TransData that the kernel side (trans_data.h) and the
// host helper GetTransDataMaxMinTmpSize (layout_host.h) share. No host type here: the device unit
// includes it, and CANN's device headers declare no `ge` namespace.
#pragma once
#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>
#include "cannsim/hl_types_ext.h"

namespace AscendC {

struct TransDataConfig {
    DataFormat srcFormat;
    DataFormat dstFormat;
};

}  // namespace AscendC

namespace cannsim {

inline std::string host_fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// The [N, C, D, H, W] a TransData call converts, from the NCDHW side's layout, with the other
// side's dimensions checked against it (C1 = ceil(C / 16), N1 = ceil(N / 16), C0 = N0 = 16).
struct TransDataDims {
    int64_t n = 0, c = 0, d = 0, h = 0, w = 0;
    bool ok = false;
};

inline bool trans_data_supported(AscendC::DataFormat from, AscendC::DataFormat to) {
    using F = AscendC::DataFormat;
    return (from == F::NCDHW && (to == F::NDC1HWC0 || to == F::FRACTAL_Z_3D)) ||
           (to == F::NCDHW && (from == F::NDC1HWC0 || from == F::FRACTAL_Z_3D));
}

inline size_t trans_data_rank(AscendC::DataFormat f) {
    using F = AscendC::DataFormat;
    return f == F::NCDHW ? 5 : f == F::NDC1HWC0 ? 6 : f == F::FRACTAL_Z_3D ? 7 : 0;
}

// The other side's dims for [N, C, D, H, W].
inline std::vector<int64_t> trans_data_other(AscendC::DataFormat f, const TransDataDims& x) {
    const int64_t c1 = (x.c + 15) / 16, n1 = (x.n + 15) / 16;
    if (f == AscendC::DataFormat::NDC1HWC0) return {x.n, x.d, c1, x.h, x.w, 16};
    return {x.d, c1, x.h, x.w, n1, 16, 16};
}

inline TransDataDims trans_data_dims(AscendC::DataFormat from, AscendC::DataFormat to, const int64_t* src, size_t src_rank,
                                     const int64_t* dst, size_t dst_rank, std::string& why) {
    TransDataDims x;
    if (!trans_data_supported(from, to)) {
        why = cannsim::host_fmt("TransData converts NCDHW <-> NDC1HWC0 and NCDHW <-> FRACTAL_Z_3D only (config is %d -> %d)",
                  static_cast<int>(from), static_cast<int>(to));
        return x;
    }
    if (src_rank != trans_data_rank(from) || dst_rank != trans_data_rank(to)) {
        why = cannsim::host_fmt("TransData params: srcLayout has %zu dimensions and dstLayout %zu, but the config's formats take %zu and %zu",
                  src_rank, dst_rank, trans_data_rank(from), trans_data_rank(to));
        return x;
    }
    const bool forward = from == AscendC::DataFormat::NCDHW;
    const int64_t* nc = forward ? src : dst;
    const int64_t* other = forward ? dst : src;
    x = {nc[0], nc[1], nc[2], nc[3], nc[4], false};
    if (x.n <= 0 || x.c <= 0 || x.d <= 0 || x.h <= 0 || x.w <= 0) {
        why = "TransData params: every NCDHW dimension must be positive";
        return x;
    }
    const AscendC::DataFormat f = forward ? to : from;
    const std::vector<int64_t> want = trans_data_other(f, x);
    for (size_t i = 0; i < want.size(); ++i)
        if (other[i] != want[i]) {
            why = cannsim::host_fmt("TransData params: dimension %zu of the %s layout is %lld, but NCDHW [%lld, %lld, %lld, %lld, %lld] "
                      "gives %lld (C1 = ceil(C / 16), N1 = ceil(N / 16), C0 = N0 = 16)",
                      i, f == AscendC::DataFormat::NDC1HWC0 ? "NDC1HWC0" : "FRACTAL_Z_3D", (long long)other[i],
                      (long long)x.n, (long long)x.c, (long long)x.d, (long long)x.h, (long long)x.w, (long long)want[i]);
            return x;
        }
    x.ok = true;
    return x;
}

// Elements of each side in UB: the NCDHW side's H*W plane padded to 32 bytes (16 elements).
inline uint64_t trans_data_ncdhw_elems(const TransDataDims& x) {
    return uint64_t(x.n) * x.c * x.d * ((x.h * x.w + 15) / 16 * 16);
}
inline uint64_t trans_data_other_elems(AscendC::DataFormat f, const TransDataDims& x) {
    uint64_t n = 1;
    for (int64_t v : trans_data_other(f, x)) n *= static_cast<uint64_t>(v);
    return n;
}

// The emulator's minimum tmp buffer: one staging copy of the larger side (the reference gives no
// formula; GetTransDataMaxMinTmpSize returns the same figure, so a kernel sized by it passes).
inline uint64_t trans_data_tmp_bytes(AscendC::DataFormat f, const TransDataDims& x, uint32_t type_size) {
    const uint64_t e = std::max(trans_data_ncdhw_elems(x), trans_data_other_elems(f, x));
    return (e * type_size + 31) / 32 * 32;
}

}  // namespace cannsim
