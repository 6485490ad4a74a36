// Layout transforms: the TransDataTo5HD instruction (16 datablocks gathered lane by lane, the
// NCHW -> NC1HWC0 building block) in its three address forms, and the TransData library (NCDHW <->
// NDC1HWC0, NCDHW <-> FRACTAL_Z_3D on 16-bit types) with the Layout/MakeShape/MakeStride shape
// arguments and its host helper GetTransDataMaxMinTmpSize.
//
// TransDataTo5HD, one repeat: 16-bit types, dst block j lane i = src block i lane j (a 16 x 16
// transpose); 32-bit, lane j of the 16 source blocks fills dst blocks 2j (sources 0-7) and 2j + 1
// (sources 8-15); 8-bit, byte j (+16 with srcHighHalf) of the 16 sources fills the low (or, with
// dstHighHalf, high) 16 bytes of dst block j. Repeat r adds r * RepStride datablocks to every
// address; with repeatTimes == 1 the one repeat starts RepStride datablocks in (documented).
// TransData pads C (and N for FRACTAL_Z_3D) up to 16 with zeros and the NCDHW side's H*W plane up
// to 32 bytes (the documented input/output layout); the pad lanes it writes are zero here.
#pragma once
#include <array>
#include "hl_common.h"
#include "cannsim/layout_rules.h"

namespace cannsim {

constexpr uint32_t TRANS_FIVE_HD_TYPES = DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_I32 | DT_U32 | DT_F32;
constexpr uint32_t TRANS_DATA_TYPES = DT_I16 | DT_U16 | DT_F16 | DT_BF16;
inline const ApiDtypes kLayoutExtDtypes[] = {
    {"TransDataTo5HD", TRANS_FIVE_HD_TYPES, TRANS_FIVE_HD_TYPES | DT_BF16, TRANS_FIVE_HD_TYPES},
    {"TransData", TRANS_DATA_TYPES, TRANS_DATA_TYPES, 0},
};

// The live buffer slot holding UB byte `addr`, or -1 (an address list entry names no buffer).
inline int slot_holding(uint64_t addr) {
    const auto& s = detail::state();
    for (size_t i = 0; i < s.slots.size(); ++i)
        if (s.slots[i].live && addr >= s.slots[i].offset && addr < s.slots[i].offset + s.slots[i].bytes)
            return static_cast<int>(i);
    return -1;
}

struct Trans5hdList {
    uint64_t addr[16];
    int slot[16];
};

template <typename T>
inline void trans_5hd(const Trans5hdList& dst, const Trans5hdList& src, bool dst_high, bool src_high,
                      uint32_t repeats, uint32_t dst_rep, uint32_t src_rep, const SrcLoc& loc) {
    const char* api = "TransDataTo5HD";
    check_dtype_row(api, row_of(kLayoutExtDtypes, api), dtype_of<T>(), loc);
    if (repeats == 0) return;
    // Byte offset of repeat r from each list address (repeatTimes == 1 starts one stride in).
    auto off = [&](uint32_t r, uint32_t stride) { return uint64_t(repeats == 1 ? 1 : r) * stride * 32; };
    const Trans5hdList* lists[2] = {&dst, &src};
    const uint32_t strides[2] = {dst_rep, src_rep};
    static const char* names[2][16] = {
        {"dstList[0]", "dstList[1]", "dstList[2]", "dstList[3]", "dstList[4]", "dstList[5]", "dstList[6]", "dstList[7]",
         "dstList[8]", "dstList[9]", "dstList[10]", "dstList[11]", "dstList[12]", "dstList[13]", "dstList[14]", "dstList[15]"},
        {"srcList[0]", "srcList[1]", "srcList[2]", "srcList[3]", "srcList[4]", "srcList[5]", "srcList[6]", "srcList[7]",
         "srcList[8]", "srcList[9]", "srcList[10]", "srcList[11]", "srcList[12]", "srcList[13]", "srcList[14]", "srcList[15]"}};
    for (int k = 0; k < 2; ++k)
        for (int i = 0; i < 16; ++i) {
            const uint64_t a = lists[k]->addr[i];
            check_align32(api, names[k][i], a, loc);
            const int slot = lists[k]->slot[i] >= 0 ? lists[k]->slot[i] : slot_holding(a);
            if (slot < 0) {
                report("L2.UB_BOUNDS", Severity::Error, api, loc.line(),
                       fmt("%s %s holds UB address %llu, which is in no buffer of this kernel", api, names[k][i],
                           (unsigned long long)a), true);
                return;
            }
            check_ub_range(api, names[k][i], slot, a + off(0, strides[k]), a + off(repeats - 1, strides[k]) + 32, loc);
            cost::note_operand(slot, k == 0);
        }
    if (!count_only()) {
        for (uint32_t r = 0; r < repeats; ++r) {
            uint8_t in[16][32];
            for (int i = 0; i < 16; ++i) std::memcpy(in[i], ub_at(src.addr[i] + off(r, src_rep)), 32);
            uint8_t* out[16];
            for (int j = 0; j < 16; ++j) out[j] = ub_at(dst.addr[j] + off(r, dst_rep));
            if constexpr (sizeof(T) == 2) {
                for (int j = 0; j < 16; ++j)
                    for (int i = 0; i < 16; ++i) std::memcpy(out[j] + 2 * i, in[i] + 2 * j, 2);
            } else if constexpr (sizeof(T) == 4) {
                for (int j = 0; j < 8; ++j)
                    for (int i = 0; i < 16; ++i) std::memcpy(out[2 * j + i / 8] + 4 * (i % 8), in[i] + 4 * j, 4);
            } else {
                const int from = src_high ? 16 : 0, to = dst_high ? 16 : 0;
                for (int j = 0; j < 16; ++j)
                    for (int i = 0; i < 16; ++i) out[j][to + i] = in[i][from + j];
            }
        }
    }
    for (int j = 0; j < 16; ++j) {
        const int slot = dst.slot[j] >= 0 ? dst.slot[j] : slot_holding(dst.addr[j]);
        if (slot >= 0) mark_written(slot, PIPE_V);
    }
    const uint64_t bytes = uint64_t(repeats) * (sizeof(T) == 1 ? 256 : 512);
    record_cost(PIPE_V, api, dtype_of<T>(), bytes / sizeof(T), 2 * bytes);
}

}  // namespace cannsim

namespace AscendC {

constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;

struct TransDataTo5HDParams {
    TransDataTo5HDParams() {}
    TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn,
                         const uint16_t dstRepStrideIn, const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
};

// Each list entry a LocalTensor (its buffer is known).
template <typename T>
inline void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                           const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams& p,
                           CANNSIM_LOC) {
    cannsim::Trans5hdList d{}, s{};
    for (int i = 0; i < 16; ++i) {
        cannsim::check_live("TransDataTo5HD", dstList[i].slot_, dstList[i].gen_, loc);
        cannsim::check_live("TransDataTo5HD", srcList[i].slot_, srcList[i].gen_, loc);
        d.addr[i] = dstList[i].addr_; d.slot[i] = dstList[i].slot_;
        s.addr[i] = srcList[i].addr_; s.slot[i] = srcList[i].slot_;
    }
    cannsim::trans_5hd<T>(d, s, p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride, p.srcRepStride, loc);
}

// Entries are UB addresses (LocalTensor::GetPhyAddr): the buffer is found from the address.
template <typename T>
inline void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                           const TransDataTo5HDParams& p, CANNSIM_LOC) {
    cannsim::Trans5hdList d{}, s{};
    for (int i = 0; i < 16; ++i) {
        d.addr[i] = cannsim::ub_offset(dstList[i]); d.slot[i] = -1;
        s.addr[i] = cannsim::ub_offset(srcList[i]); s.slot[i] = -1;
    }
    cannsim::trans_5hd<T>(d, s, p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride, p.srcRepStride, loc);
}

// The 16 addresses stored one after another in a uint64_t LocalTensor (read on the scalar unit).
template <typename T>
inline void TransDataTo5HD(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src,
                           const TransDataTo5HDParams& p, CANNSIM_LOC) {
    using namespace cannsim;
    const HlSpan ds = span("dst", dst, 16), ss = span("src", src, 16);
    hl_check_spans("TransDataTo5HD", {ds, ss}, loc);
    Trans5hdList d{}, s{};
    for (int i = 0; i < 16; ++i) {
        std::memcpy(&d.addr[i], ub_at(dst.addr_ + 8 * i), 8); d.slot[i] = -1;
        std::memcpy(&s.addr[i], ub_at(src.addr_ + 8 * i), 8); s.slot[i] = -1;
        d.addr[i] = ub_offset(d.addr[i]);
        s.addr[i] = ub_offset(s.addr[i]);
    }
    if (count_only()) {            // no data, so no addresses: each list entry is a block of its tensor
        for (int i = 0; i < 16; ++i) { d.addr[i] = dst.addr_; d.slot[i] = dst.slot_; s.addr[i] = src.addr_; s.slot[i] = src.slot_; }
    }
    trans_5hd<T>(d, s, p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride, p.srcRepStride, loc);
}

// ---- shape arguments of the TransData library ----
template <typename... Ts>
struct Shape {
    std::array<int64_t, sizeof...(Ts)> dims;
    static constexpr size_t rank = sizeof...(Ts);
};
template <typename... Ts>
struct Stride {
    std::array<int64_t, sizeof...(Ts)> dims;
};
template <typename... Ts> inline Shape<Ts...> MakeShape(Ts... xs) { return Shape<Ts...>{{static_cast<int64_t>(xs)...}}; }
template <typename... Ts> inline Stride<Ts...> MakeStride(Ts... xs) { return Stride<Ts...>{{static_cast<int64_t>(xs)...}}; }

template <typename S, typename D>
struct Layout {
    S shape;
    D stride;
    const S& GetShape() const { return shape; }
    const D& GetStride() const { return stride; }
};
template <typename S, typename D> inline Layout<S, D> MakeLayout(const S& s, const D& d) { return Layout<S, D>{s, d}; }

template <typename T, typename U>
struct TransDataParams {
    T srcLayout;
    U dstLayout;
};

}  // namespace AscendC

namespace cannsim {

template <typename T>
inline void trans_data(AscendC::DataFormat from, AscendC::DataFormat to, const AscendC::LocalTensor<T>& dst,
                       const AscendC::LocalTensor<T>& src, const AscendC::LocalTensor<uint8_t>* tmp,
                       const int64_t* sdims, size_t srank, const int64_t* ddims, size_t drank, const SrcLoc& loc) {
    const char* api = "TransData";
    check_dtype_row(api, row_of(kLayoutExtDtypes, api), dtype_of<T>(), loc);
    std::string why;
    const TransDataDims x = trans_data_dims(from, to, sdims, srank, ddims, drank, why);
    if (!x.ok) {
        hl_param_error(api, loc, why);
        return;
    }
    const bool forward = from == AscendC::DataFormat::NCDHW;
    const AscendC::DataFormat f = forward ? to : from;
    const uint64_t n_ncdhw = trans_data_ncdhw_elems(x), n_other = trans_data_other_elems(f, x);
    const HlSpan d = span("dstTensor", dst, forward ? n_other : n_ncdhw, true);
    const HlSpan s = span("srcTensor", src, forward ? n_ncdhw : n_other);
    hl_check_spans(api, {d, s}, loc);
    hl_check_disjoint(api, d, s, loc);
    if (tmp) {
        const HlSpan t = span("sharedTmpBuffer", *tmp, tmp->GetSize());
        hl_check_spans(api, {t}, loc);
        hl_check_tmp_bytes(api, tmp->GetSize(), trans_data_tmp_bytes(f, x, sizeof(T)), loc);
        hl_check_disjoint(api, t, d, loc);
        hl_check_disjoint(api, t, s, loc);
    }
    if (!count_only()) {
        const int64_t hw = x.h * x.w, hwp = (hw + 15) / 16 * 16, c1 = (x.c + 15) / 16, n1 = (x.n + 15) / 16;
        std::vector<T> in(forward ? n_ncdhw : n_other);
        std::memcpy(in.data(), ub_at(src.addr_), in.size() * sizeof(T));
        std::vector<T> out(forward ? n_other : n_ncdhw, T{});
        // Index of element (n, c, d, p) (p = h * W + w) on each side; -1: a pad lane.
        auto at_ncdhw = [&](int64_t n, int64_t c, int64_t dd, int64_t p) { return ((n * x.c + c) * x.d + dd) * hwp + p; };
        auto at_other = [&](int64_t n, int64_t c, int64_t dd, int64_t p) {
            if (f == AscendC::DataFormat::NDC1HWC0) return (((n * x.d + dd) * c1 + c / 16) * hw + p) * 16 + c % 16;
            return ((((dd * c1 + c / 16) * hw + p) * n1 + n / 16) * 16 + n % 16) * 16 + c % 16;
        };
        for (int64_t n = 0; n < x.n; ++n)
            for (int64_t c = 0; c < x.c; ++c)
                for (int64_t dd = 0; dd < x.d; ++dd)
                    for (int64_t p = 0; p < hw; ++p) {
                        const int64_t a = at_ncdhw(n, c, dd, p), b = at_other(n, c, dd, p);
                        if (forward) out[b] = in[a]; else out[a] = in[b];
                    }
        std::memcpy(ub_at(dst.addr_), out.data(), out.size() * sizeof(T));
    }
    // Built from TransDataTo5HD passes: the data goes through the vector unit twice (in and out of
    // the staging copy).
    composite_cost(dtype_of<T>(), std::max(n_ncdhw, n_other), sizeof(T), &s, 1, d, {{"TransDataTo5HD", 2.0}});
}

template <typename P> inline const int64_t* dims_of(const P& layout) { return layout.GetShape().dims.data(); }
template <typename P> inline size_t rank_of(const P& layout) { return layout.GetShape().dims.size(); }

}  // namespace cannsim

namespace AscendC {

template <const TransDataConfig& config, typename T, typename U, typename S>
inline void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                      const LocalTensor<uint8_t>& sharedTmpBuffer, const TransDataParams<U, S>& params, CANNSIM_LOC) {
    cannsim::trans_data<T>(config.srcFormat, config.dstFormat, dstTensor, srcTensor, &sharedTmpBuffer,
                           cannsim::dims_of(params.srcLayout), cannsim::rank_of(params.srcLayout),
                           cannsim::dims_of(params.dstLayout), cannsim::rank_of(params.dstLayout), loc);
}

template <const TransDataConfig& config, typename T, typename U, typename S>
inline void TransData(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                      const TransDataParams<U, S>& params, CANNSIM_LOC) {
    cannsim::trans_data<T>(config.srcFormat, config.dstFormat, dstTensor, srcTensor, nullptr,
                           cannsim::dims_of(params.srcLayout), cannsim::rank_of(params.srcLayout),
                           cannsim::dims_of(params.dstLayout), cannsim::rank_of(params.dstLayout), loc);
}

}  // namespace AscendC
