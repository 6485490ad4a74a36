// Layout-transform libraries: Broadcast (1-D/2-D with dim/axis template parameters; the rank 1..9
// form with GetBroadcastTilingInfo on Atlas 350), Pad and UnPad of [height, width] rows, and Fill
// of a GM range.
//
// Broadcast: dst[i, j] = src[i or 0, j or 0] along the broadcast axis (an axis where src is 1 and
// dst is not). Pad, scenario 1 (width not 32-byte aligned): each row of width W becomes
// leftPad + W + rightPad <= W rounded up to 32 bytes, padded with padValue; scenario 2 (width
// aligned, the last columns redundant): columns [oriWidth, oriWidth + rightPad) get padValue, rows
// keep their width. UnPad: rows of an aligned width W lose their last rightPad columns (packed).
// Fill: GM elements [0, size) become value, through UB (vector Duplicate then an MTE3 copy).
#pragma once
#include "hl_common.h"
#include "hl_types_ext.h"

namespace cannsim {

inline const ApiDtypes kLayoutDtypes[] = {
    {"Broadcast", DT_I8 | DT_U8 | DT_F16 | DT_F32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32 | DT_I64 | DT_U64, DT_I8 | DT_U8 | DT_F16 | DT_F32},
    {"BroadcastRank", 0, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32 | DT_I64 | DT_U64, 0},
    {"GetBroadcastTilingInfo", 0, DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32 | DT_I64 | DT_U64, 0},
    {"Pad", DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32, DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32, DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32},
    {"UnPad", DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32, DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32, DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32},
    {"Fill", DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32 | DT_I64 | DT_U64, 0},
};
inline void layout_dtype(const char* row, uint32_t dtype, const SrcLoc& loc, const char* api = nullptr) {
    check_dtype_row(api ? api : row, row_of(kLayoutDtypes, row), dtype, loc);
}

// dst[idx] = src[idx with every broadcast axis at 0], rank axes, row-major.
template <typename T>
inline void broadcast_nd(const char* api, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                         uint32_t rank, const uint32_t* dshape, const uint32_t* sshape,
                         const AscendC::LocalTensor<uint8_t>* tmp, const SrcLoc& loc) {
    uint64_t dn = 1, sn = 1;
    for (uint32_t i = 0; i < rank; ++i) {
        if (sshape[i] != dshape[i] && sshape[i] != 1) {
            hl_param_error(api, loc, fmt("%s axis %u: srcShape %u cannot broadcast to dstShape %u (it must be equal or 1)",
                                         api, i, sshape[i], dshape[i]));
            return;
        }
        dn *= dshape[i]; sn *= sshape[i];
    }
    const HlSpan d = span("dstLocal", dst, dn, true), s = span("srcLocal", src, sn);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::broadcast_min_bytes(), loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only()) {
        uint64_t sstride[9], dstride[9];
        uint64_t ss = 1, ds = 1;
        for (int i = static_cast<int>(rank) - 1; i >= 0; --i) { sstride[i] = ss; dstride[i] = ds; ss *= sshape[i]; ds *= dshape[i]; }
        for (uint64_t k = 0; k < dn; ++k) {
            uint64_t rem = k, so = 0;
            for (uint32_t i = 0; i < rank; ++i) {
                const uint64_t c = rem / dstride[i];
                rem %= dstride[i];
                if (sshape[i] != 1) so += c * sstride[i];
            }
            std::memcpy(ub_at(dst.addr_ + k * sizeof(T)), ub_at(src.addr_ + so * sizeof(T)), sizeof(T));
        }
    }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), dn, sizeof(T), reads, 1, d, {{"Brcb", double(sn) / double(dn ? dn : 1)}, {"Copy", 1}});
}

template <typename T>
inline void pad_rows(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::PadParams& p,
                     const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::tiling::PadTiling& t, const SrcLoc& loc) {
    const char* api = "Pad";
    layout_dtype(api, dtype_of<T>(), loc);
    const uint64_t H = t.srcHeight, W = t.srcWidth, oriW = t.srcOriWidth ? t.srcOriWidth : t.srcWidth;
    if (H == 0 || W == 0) {
        hl_param_error(api, loc, "Pad tiling has no shape (srcHeight/srcWidth 0): fill it on the host with PadTilingFunc");
        return;
    }
    const uint64_t epb = 32 / sizeof(T), Wa = (W + epb - 1) / epb * epb;
    if ((H * W) % epb != 0)
        hl_param_error(api, loc, fmt("Pad source of %llu x %llu elements is not a whole number of 32-byte blocks",
                                     (unsigned long long)H, (unsigned long long)W));
    const bool aligned = W % epb == 0;
    uint64_t Wd = W;
    if (!aligned) {
        Wd = W + p.leftPad + p.rightPad;
        if (Wd > Wa)
            hl_param_error(api, loc, fmt("Pad width %llu + leftPad %u + rightPad %u exceeds the 32-byte aligned width %llu",
                                         (unsigned long long)W, p.leftPad, p.rightPad, (unsigned long long)Wa));
    } else {
        if (p.leftPad != 0)
            hl_param_error(api, loc, fmt("Pad of an aligned width (redundant columns) pads only on the right; leftPad is %u", p.leftPad));
        if (oriW == W)
            hl_param_error(api, loc, "Pad on a width that is 32-byte aligned and all valid data is not supported");
        if (oriW + p.rightPad > W)
            hl_param_error(api, loc, fmt("Pad rightPad %u from the valid width %llu runs past the width %llu", p.rightPad,
                                         (unsigned long long)oriW, (unsigned long long)W));
    }
    const HlSpan d = span("dstTensor", dst, H * std::min(Wd, Wa), true), s = span("srcTensor", src, H * W);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    if (tmp) {
        const HlSpan ts = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {ts}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::pad_min_bytes(Wa), loc);
        hl_check_disjoint(api, ts, d, loc);
        hl_check_disjoint(api, ts, s, loc);
    }
    if (!count_only()) {
        const T pv = from_d<T>(static_cast<double>(p.padValue));
        std::vector<T> row(W);
        for (uint64_t r = 0; r < H; ++r) {
            std::memcpy(row.data(), ub_at(src.addr_ + r * W * sizeof(T)), W * sizeof(T));
            if (!aligned) {
                for (uint64_t j = 0; j < std::min(Wd, Wa); ++j) {
                    const T v = (j < p.leftPad || j >= p.leftPad + W) ? pv : row[j - p.leftPad];
                    st<T>(ub_at(dst.addr_ + (r * Wd + j) * sizeof(T)), v);
                }
            } else {
                for (uint64_t j = 0; j < W; ++j) {
                    const T v = (j >= oriW && j < oriW + p.rightPad) ? pv : row[j];
                    st<T>(ub_at(dst.addr_ + (r * W + j) * sizeof(T)), v);
                }
            }
        }
    }
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), H * Wa, sizeof(T), reads, 1, d, {{"Duplicate", 1}, {"Copy", 1}});
}

template <typename T>
inline void unpad_rows(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::UnPadParams& p,
                       const AscendC::LocalTensor<uint8_t>* tmp, const AscendC::tiling::UnPadTiling& t, const SrcLoc& loc) {
    const char* api = "UnPad";
    layout_dtype(api, dtype_of<T>(), loc);
    const uint64_t H = t.srcHeight, W = t.srcWidth, epb = 32 / sizeof(T);
    if (H == 0 || W == 0) {
        hl_param_error(api, loc, "UnPad tiling has no shape (srcHeight/srcWidth 0): fill it on the host with UnPadTilingFunc");
        return;
    }
    if (W % epb != 0)
        hl_param_error(api, loc, fmt("UnPad width %llu is not 32-byte aligned; UnPad works on aligned rows", (unsigned long long)W));
    if (p.rightPad == 0 || p.rightPad >= epb)
        hl_param_error(api, loc, fmt("UnPad rightPad %u must be above 0 and below one 32-byte block (%llu elements)", p.rightPad,
                                     (unsigned long long)epb));
    const uint64_t rp = std::min<uint64_t>(p.rightPad, W), Wd = W - rp;
    const HlSpan d = span("dstTensor", dst, H * Wd, true), s = span("srcTensor", src, H * W);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    if (tmp) {
        const HlSpan ts = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {ts}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), tmp_model::pad_min_bytes(W), loc);
        hl_check_disjoint(api, ts, d, loc);
        hl_check_disjoint(api, ts, s, loc);
    }
    if (!count_only())
        for (uint64_t r = 0; r < H; ++r)
            std::memmove(ub_at(dst.addr_ + r * Wd * sizeof(T)), ub_at(src.addr_ + r * W * sizeof(T)), Wd * sizeof(T));
    const HlSpan reads[1] = {s};
    composite_cost(dtype_of<T>(), H * W, sizeof(T), reads, 1, d, {{"GatherMask", 1}});
}

}  // namespace cannsim

namespace AscendC {

// ---- Broadcast: dim 1 or 2, axis 0 or 1 ----
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer, CANNSIM_LOC) {
    static_assert(dim == 1 || dim == 2, "Broadcast supports dim 1 and 2");
    static_assert(axis == 0 || axis == 1, "Broadcast supports axis 0 and 1");
    cannsim::layout_dtype("Broadcast", cannsim::dtype_of<T>(), loc);
    cannsim::broadcast_nd("Broadcast", dstLocal, srcLocal, dim, dstShape, srcShape, &sharedTmpBuffer, loc);
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], CANNSIM_LOC) {
    static_assert(dim == 1 || dim == 2, "Broadcast supports dim 1 and 2");
    static_assert(axis == 0 || axis == 1, "Broadcast supports axis 0 and 1");
    cannsim::layout_dtype("Broadcast", cannsim::dtype_of<T>(), loc);
    cannsim::broadcast_nd("Broadcast", dstLocal, srcLocal, dim, dstShape, srcShape, (const LocalTensor<uint8_t>*)nullptr, loc);
}

// Kernel-side tiling of the rank 1..9 Broadcast (Atlas 350).
template <class T, int constRank = -1, uint32_t* constDstShape = nullptr, uint32_t* constSrcShape = nullptr>
inline void GetBroadcastTilingInfo(uint32_t rank, const uint32_t* dstShape, const uint32_t* srcShape, bool srcInnerPad,
                                   BroadcastTiling& tiling, CANNSIM_LOC) {
    cannsim::layout_dtype("GetBroadcastTilingInfo", cannsim::dtype_of<T>(), loc);
    if (rank < 1 || rank > 9 || (constRank > 0 && static_cast<uint32_t>(constRank) != rank) || srcInnerPad) {
        cannsim::hl_param_error("GetBroadcastTilingInfo", loc,
                                cannsim::fmt("GetBroadcastTilingInfo rank %u must be 1..9 (and equal constRank %d); "
                                             "srcInnerPad must be false", rank, constRank));
        rank = std::min<uint32_t>(std::max<uint32_t>(rank, 1), 9);
    }
    tiling.rank = rank;
    tiling.srcInnerPad = srcInnerPad;
    for (uint32_t i = 0; i < rank; ++i) { tiling.dstShape[i] = dstShape[i]; tiling.srcShape[i] = srcShape[i]; }
}
template <class T, int constRank = -1, uint32_t* constDstShape = nullptr, uint32_t* constSrcShape = nullptr,
          bool constSrcInnerPad = false>
inline void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t* dstShape, const uint32_t* srcShape,
                      BroadcastTiling* tiling, CANNSIM_LOC) {
    cannsim::layout_dtype("BroadcastRank", cannsim::dtype_of<T>(), loc, "Broadcast");
    if (!tiling || tiling->rank == 0) {
        cannsim::hl_param_error("Broadcast", loc, "Broadcast with a BroadcastTiling needs one filled by GetBroadcastTilingInfo");
        return;
    }
    for (uint32_t i = 0; i < tiling->rank; ++i)
        if (dstShape[i] != tiling->dstShape[i] || srcShape[i] != tiling->srcShape[i]) {
            cannsim::hl_param_error("Broadcast", loc, cannsim::fmt("Broadcast shapes differ from the BroadcastTiling at axis %u", i));
            return;
        }
    cannsim::broadcast_nd("Broadcast", dst, src, tiling->rank, dstShape, srcShape, (const LocalTensor<uint8_t>*)nullptr, loc);
}

// ---- Pad / UnPad ----
template <typename T>
inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
                const LocalTensor<uint8_t>& sharedTmpBuffer, tiling::PadTiling& tiling, CANNSIM_LOC) {
    cannsim::pad_rows(dstTensor, srcTensor, padParams, &sharedTmpBuffer, tiling, loc);
}
template <typename T>
inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
                tiling::PadTiling& tiling, CANNSIM_LOC) {
    cannsim::pad_rows(dstTensor, srcTensor, padParams, (const LocalTensor<uint8_t>*)nullptr, tiling, loc);
}
template <typename T>
inline void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
                  LocalTensor<uint8_t>& sharedTmpBuffer, tiling::UnPadTiling& tiling, CANNSIM_LOC) {
    cannsim::unpad_rows(dstTensor, srcTensor, unPadParams, &sharedTmpBuffer, tiling, loc);
}
template <typename T>
inline void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
                  tiling::UnPadTiling& tiling, CANNSIM_LOC) {
    cannsim::unpad_rows(dstTensor, srcTensor, unPadParams, (const LocalTensor<uint8_t>*)nullptr, tiling, loc);
}

// ---- Fill: GM [0, size) = value; only before the kernel's first InitBuffer (it stages in UB) ----
template <typename T>
inline void Fill(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value, CANNSIM_LOC) {
    cannsim::layout_dtype("Fill", cannsim::dtype_of<T>(), loc);
    if (cannsim::detail::state().buffers_used > 0)
        cannsim::hl_param_error("Fill", loc, "Fill stages through UB and may only run before the kernel's first InitBuffer; "
                                             "zero GM before allocating buffers (or with DataCopy of a Duplicate)");
    gmWorkspaceAddr.check("Fill", 0, size, loc);
    if (!cannsim::count_only())
        for (uint64_t i = 0; i < size; ++i) std::memcpy(cannsim::gm_real(gmWorkspaceAddr.base_ + i), &value, sizeof(T));
    cannsim::record_cost(PIPE_V, "Duplicate", cannsim::dtype_of<T>(), std::min<uint64_t>(size, 256 / sizeof(T)), 256);
    cannsim::record_cost(PIPE_MTE3, "DataCopy", cannsim::dtype_of<T>(), size, size * sizeof(T));
}

}  // namespace AscendC
