// Transpose (the vector instruction): one 16 x 16 block of 2-byte elements, and the enhanced form
// with TransposeParamsExt (TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW) and its
// documented sharedTmpBuffer size ((cSize + 2) * h0 * w0 * sizeof(T), h0 = 32 for 8-bit types
// else 16, w0 = 32 / sizeof(T)). The other TransposeType values are documented as unsupported.
#pragma once
#include "hl_common.h"

namespace AscendC {

enum class TransposeType : uint8_t {
    TRANSPOSE_TYPE_NONE, TRANSPOSE_NZ2ND_0213, TRANSPOSE_NZ2NZ_0213, TRANSPOSE_NZ2NZ_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITH_N, TRANSPOSE_NZ2ND_012_WITHOUT_N, TRANSPOSE_NZ2NZ_012_WITHOUT_N, TRANSPOSE_ND2ND_ONLY,
    TRANSPOSE_ND_UB_GM, TRANSPOSE_GRAD_ND_UB_GM, TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW
};

struct TransposeParamsExt {
    TransposeParamsExt() {}
    TransposeParamsExt(const uint16_t n, const uint16_t c, const uint16_t h, const uint16_t w, const TransposeType t)
        : nSize(n), cSize(c), hSize(h), wSize(w), transposeType(t) {}
    uint16_t nSize = 0, cSize = 0, hSize = 0, wSize = 0;
    TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
};

}  // namespace AscendC

namespace cannsim {

template <typename T>
inline void transpose_16x16(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                            const SrcLoc& loc) {
    hl_check_dtype(api, dtype_of<T>(), loc);
    const HlSpan d = span("dst", dst, 256, true), s = span("src", src, 256);
    hl_check_spans(api, {d, s}, loc);
    if (!count_only()) {
        std::vector<T> buf(256);
        std::memcpy(buf.data(), ub_at(src.addr_), 256 * sizeof(T));
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) st<T>(ub_at(dst.addr_ + (j * 16 + i) * sizeof(T)), buf[i * 16 + j]);
    }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, "Transpose", dtype_of<T>(), 256, 256 * sizeof(T) * 2);
}

}  // namespace cannsim

namespace AscendC {

template <typename T>
inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, CANNSIM_LOC) {
    cannsim::transpose_16x16("Transpose", dst, src, loc);
}

template <typename T>
inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                      const TransposeParamsExt& p, CANNSIM_LOC) {
    using namespace cannsim;
    using TT = TransposeType;
    if (p.transposeType == TT::TRANSPOSE_ND2ND_B16) {
        if (sizeof(T) != 2) hl_check_dtype("Transpose", dtype_of<T>(), loc);
        transpose_16x16("Transpose", dst, src, loc);
        return;
    }
    if (p.transposeType != TT::TRANSPOSE_NCHW2NHWC && p.transposeType != TT::TRANSPOSE_NHWC2NCHW) {
        hl_param_error("Transpose", loc, fmt("Transpose transposeType %d is documented as not supported",
                                             static_cast<int>(p.transposeType)));
        return;
    }
    hl_check_dtype("TransposeNCHW", dtype_of<T>(), loc, "Transpose");
    const uint64_t N = p.nSize, C = p.cSize, HW = uint64_t(p.hSize) * p.wSize;
    if (C > 4095 || HW > 4095 || (HW * sizeof(T)) % 32 != 0)
        hl_param_error("Transpose", loc, fmt("Transpose cSize %llu must be <= 4095 and hSize * wSize %llu <= 4095 with "
                                             "hSize * wSize * sizeof(T) 32-byte aligned",
                                             (unsigned long long)C, (unsigned long long)HW));
    const uint64_t n = N * C * HW;
    const HlSpan d = span("dst", dst, n, true), s = span("src", src, n);
    hl_check_spans("Transpose", {d, s}, loc);
    hl_check_disjoint("Transpose", d, s, loc);
    if (arch() != 2002) {
        const uint64_t h0 = sizeof(T) == 1 ? 32 : 16, w0 = 32 / sizeof(T);
        const uint64_t need = (C + 2) * h0 * w0 * sizeof(T);
        const HlSpan t = span("sharedTmpBuffer", sharedTmpBuffer, sharedTmpBuffer.GetSize());
        hl_check_spans("Transpose", {t}, loc);
        hl_check_tmp_bytes("Transpose", sharedTmpBuffer.GetSize(), need, loc);
        hl_check_disjoint("Transpose", t, d, loc);
        hl_check_disjoint("Transpose", t, s, loc);
    }
    if (!count_only()) {
        std::vector<uint8_t> buf(n * sizeof(T));
        std::memcpy(buf.data(), ub_at(src.addr_), buf.size());
        const bool to_nhwc = p.transposeType == TT::TRANSPOSE_NCHW2NHWC;
        for (uint64_t b = 0; b < N; ++b)
            for (uint64_t c = 0; c < C; ++c)
                for (uint64_t x = 0; x < HW; ++x) {
                    const uint64_t nchw = (b * C + c) * HW + x, nhwc = (b * HW + x) * C + c;
                    const uint64_t from = to_nhwc ? nchw : nhwc, to = to_nhwc ? nhwc : nchw;
                    std::memcpy(ub_at(dst.addr_ + to * sizeof(T)), buf.data() + from * sizeof(T), sizeof(T));
                }
    }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, "Transpose", dtype_of<T>(), n, n * sizeof(T) * 2);
}

}  // namespace AscendC
