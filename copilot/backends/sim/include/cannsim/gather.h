// Gather (per element, byte offsets), Gatherb (per 32 B data block), GatherMask (compaction by a
// fixed or a tensor bit pattern), Brcb (8 scalars to 8 blocks), CreateVecIndex and Arange.
//
// Gather: dst[i] = the element at UB byte address src + srcBaseAddr + srcOffset[i]. Offsets must be
// multiples of sizeof(T) and (rule L2.GATHER_OFFSET) should stay inside src's buffer; an address
// outside UB is fatal (L2.UB_BOUNDS). Mask forms: 256 B of dst per repeat, lane e of repeat r reads
// srcOffset[r * lanes + e] and writes dst[r * dstRepStride * (32 / sizeof(T)) + e].
// Gatherb: block j of repeat r copies the 32 B at src0 + offset[r * 8 + j] (32 B aligned) to dst
// block r * dstRepStride + j * dstBlkStride.
// GatherMask: lane e of repeat r (element (e / E) * blk * E + e % E + r * rep * E of src0) is kept
// when bit e of the repeat's pattern is 1; kept elements are packed densely into dst in order and
// their count goes to rsvdCnt. Normal mode: 256 B per repeat; counter mode (reduceMode true, A2
// form one): `mask` elements per repeat. Patterns 1..7 are the fixed ones of the reference
// (L2.GATHER_PATTERN otherwise); a tensor pattern is read from bit 0 of src1Pattern, each repeat
// src1RepeatStride blocks further on. The call leaves the mask register in normal mode.
// Costs: Gather and GatherMask are V instructions over their lanes; Brcb and Gatherb move 32 B per block.
#pragma once
#include "vec_ops.h"

namespace AscendC {

struct GatherRepeatParams {
    GatherRepeatParams() = default;
    GatherRepeatParams(uint16_t dstBlkStrideIn, uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
    uint8_t blockNumber = 8;
    uint16_t src0BlkStride = 1;
    uint16_t src1BlkStride = 1;
    uint16_t src0RepStride = 8;
    uint16_t src1RepStride = 8;
};

struct BrcbRepeatParams {
    BrcbRepeatParams() = default;
    BrcbRepeatParams(uint16_t dstBlkStrideIn, uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint16_t dstBlkStride = 1;
    uint16_t dstRepStride = 8;
};

struct GatherMaskParams {
    GatherMaskParams() = default;
    GatherMaskParams(uint8_t src0BlockStrideIn, uint16_t repeatTimesIn, uint16_t src0RepeatStrideIn,
                     uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = 1;
    uint16_t repeatTimes = 1;
    uint16_t src0RepeatStride = 8;
    uint8_t src1RepeatStride = 8;
};

enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
inline constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::VERSION_V1;

}  // namespace AscendC

namespace cannsim {

inline const ApiDtypes kGatherDtypes[] = {
    {"Gather", DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_F32 | DT_F16 | DT_BF16,
     DT_U8 | DT_I8 | DT_U16 | DT_I16 | DT_F16 | DT_BF16 | DT_U32 | DT_I32 | DT_F32 | DT_U64 | DT_I64,
     DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_F32 | DT_F16},
    {"Gatherb", DT_U16 | DT_U32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_F16 | DT_F32 | DT_BF16 | DT_U64 | DT_I64, 0},
    {"GatherMask", DT_F16 | DT_BF16 | DT_U16 | DT_I16 | DT_F32 | DT_U32 | DT_I32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_F32 | DT_I32 | DT_U32,
     DT_F16 | DT_U16 | DT_I16 | DT_F32 | DT_U32 | DT_I32},
    {"Brcb", DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_F16 | DT_BF16 | DT_F32,
     DT_I8 | DT_U8 | DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_F16 | DT_F32 | DT_BF16 | DT_U64 | DT_I64,
     DT_I16 | DT_U16 | DT_I32 | DT_U32 | DT_F16 | DT_F32},
    {"CreateVecIndex", DT_I16 | DT_F16 | DT_I32 | DT_F32, DT_I8 | DT_I16 | DT_F16 | DT_I32 | DT_F32 | DT_I64,
     DT_I16 | DT_F16 | DT_I32 | DT_F32},
    {"Arange", DT_I16 | DT_F16 | DT_I32 | DT_F32, DT_I16 | DT_F16 | DT_I32 | DT_F32 | DT_I64,
     DT_I16 | DT_F16 | DT_I32 | DT_F32},
};

template <typename T> inline void check_gather_dtype(const char* api, const SrcLoc& loc) {
    check_dtype_row(api, row_of(kGatherDtypes, api), dtype_of<T>(), loc);
}

inline void gather_cost(const char* api, uint32_t dtype, uint64_t elements, uint64_t bytes) {
    record_cost(PIPE_V, api, dtype, elements, bytes);
}

// Where element/block offset `off` (bytes from `base`) lands; reports and returns false when the
// read would leave UB (fatal) — a read outside src's own buffer is reported once and still done.
inline bool gather_source(const char* api, const Operand& src, uint64_t base, uint64_t off, uint32_t bytes,
                          uint32_t align, const SrcLoc& loc) {
    const uint64_t a = base + off;
    if (off % align != 0)
        report("L2.GATHER_OFFSET", Severity::Error, api, loc.line(),
               fmt("%s offset %llu B is not a multiple of %u B", api, (unsigned long long)off, align));
    const UbExtent e = slot_extent(src.slot);
    if (a < e.lo || a + bytes > e.hi) {
        if (a + bytes > detail::state().chip.ub_bytes)
            report("L2.UB_BOUNDS", Severity::Error, api, loc.line(),
                   fmt("%s reads UB bytes [%llu, %llu) past the end of UB (%llu bytes): offset %llu B", api,
                       (unsigned long long)a, (unsigned long long)(a + bytes),
                       (unsigned long long)detail::state().chip.ub_bytes, (unsigned long long)off),
                   true);
        report("L2.GATHER_OFFSET", Severity::Error, api, loc.line(),
               fmt("%s offset %llu B reads UB bytes [%llu, %llu), outside src's buffer [%llu, %llu)", api,
                   (unsigned long long)off, (unsigned long long)a, (unsigned long long)(a + bytes),
                   (unsigned long long)e.lo, (unsigned long long)e.hi));
    }
    return true;
}

template <typename T>
inline void run_gather(Operand* ops, uint32_t srcBaseAddr, const Lanes& L, uint16_t dstRepStride, const SrcLoc& loc) {
    check_gather_dtype<T>("Gather", loc);
    // ops: dst, src (checked for liveness/alignment only), offsets (uint32 lanes)
    for (int i = 0; i < 3; ++i) {
        check_live("Gather", ops[i].slot, ops[i].gen, loc);
        check_align32("Gather", ops[i].name, ops[i].addr, loc);
        cost::note_operand(ops[i].slot, ops[i].is_dst);
    }
    const uint64_t E = 32 / sizeof(T);
    const uint64_t lanes_total = L.count_form ? L.count : static_cast<uint64_t>(L.repeat) * L.lanes_per_repeat;
    uint64_t dst_hi = 0, active = 0;
    auto dst_index = [&](uint64_t r, uint64_t e) { return L.count_form ? e : r * dstRepStride * E + e; };
    if (lanes_total > 0) {
        const uint64_t last_r = L.count_form ? 0 : static_cast<uint64_t>(L.repeat) - 1;
        const uint64_t last_e = L.count_form ? L.count - 1 : static_cast<uint64_t>(L.lanes_per_repeat) - 1;
        dst_hi = dst_index(last_r, last_e) + 1;
        check_ub_range("Gather", "dst", ops[0].slot, ops[0].addr, ops[0].addr + dst_hi * sizeof(T), loc);
        check_ub_range("Gather", "srcOffset", ops[2].slot, ops[2].addr, ops[2].addr + lanes_total * 4, loc);
    }
    const uint8_t* offs = ub_at(ops[2].addr);
    uint8_t* d = ub_at(ops[0].addr);
    const uint64_t base = ops[1].addr + srcBaseAddr;
    auto one = [&](uint64_t r, uint64_t e, uint64_t k) {
        ++active;
        if (count_only()) return;
        const uint32_t off = ld<uint32_t>(offs + k * 4);
        gather_source("Gather", ops[1], base, off, sizeof(T), sizeof(T), loc);
        std::memcpy(d + dst_index(r, e) * sizeof(T), ub_at(base + off), sizeof(T));
    };
    if (L.count_form) {
        if (count_only()) active = L.count;
        else for (uint64_t k = 0; k < L.count; ++k) one(0, k, k);
    } else {
        for (int r = 0; r < L.repeat; ++r)
            for (int e = 0; e < L.lanes_per_repeat; ++e)
                if (L.active(r, e)) one(r, e, static_cast<uint64_t>(r) * L.lanes_per_repeat + e);
    }
    mark_written(ops[0].slot, PIPE_V);
    gather_cost("Gather", dtype_of<T>(), active, active * (sizeof(T) * 2 + 4));
}

inline uint64_t fixed_gather_pattern(uint8_t p, uint64_t lane) {
    switch (p) {
        case 1: return (lane % 2) == 0;
        case 2: return (lane % 2) == 1;
        case 3: return (lane % 4) == 0;
        case 4: return (lane % 4) == 1;
        case 5: return (lane % 4) == 2;
        case 6: return (lane % 4) == 3;
        default: return 1;
    }
}

// GatherMask with pattern bits from `bit(r, e)`.
template <typename T, typename BitF>
inline void run_gather_mask(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0, bool reduceMode,
                            uint32_t mask, const AscendC::GatherMaskParams& p, uint64_t& rsvdCnt, const SrcLoc& loc,
                            BitF bit) {
    check_gather_dtype<T>("GatherMask", loc);
    Operand ops[2] = {operand("dst", dst, true), operand("src0", src0)};
    for (auto& o : ops) {
        check_live("GatherMask", o.slot, o.gen, loc);
        check_align32("GatherMask", o.name, o.addr, loc);
        cost::note_operand(o.slot, o.is_dst);
    }
    const int repeat = checked_repeat("GatherMask", p.repeatTimes, false, loc);
    const uint64_t E = 32 / sizeof(T);
    uint64_t lanes = reduceMode ? mask : 256 / sizeof(T);
    if (reduceMode && mask == 0) {
        report("L2.MASK_RANGE", Severity::Error, "GatherMask", loc.line(),
               "GatherMask counter mode (reduceMode true) with mask 0: no element per repeat");
        lanes = 0;
    }
    const uint64_t blk = p.src0BlockStride, rep = p.src0RepeatStride;
    auto src_index = [&](uint64_t r, uint64_t e) { return r * rep * E + (e / E) * blk * E + e % E; };
    if (repeat > 0 && lanes > 0) {
        uint64_t hi = 0;
        for (uint64_t e = lanes > E ? lanes - E : 0; e < lanes; ++e) hi = std::max(hi, src_index(repeat - 1, e));
        check_ub_range("GatherMask", "src0", ops[1].slot, ops[1].addr, ops[1].addr + (hi + 1) * sizeof(T), loc);
    }
    uint64_t kept = 0;
    const uint8_t* s = ub_at(ops[1].addr);
    uint8_t* d = ub_at(ops[0].addr);
    const UbExtent de = slot_extent(ops[0].slot);
    for (uint64_t r = 0; r < static_cast<uint64_t>(repeat); ++r)
        for (uint64_t e = 0; e < lanes; ++e) {
            if (!bit(r, e)) continue;
            if (!count_only()) {
                const uint64_t at = ops[0].addr + kept * sizeof(T);
                if (at + sizeof(T) > de.hi)
                    check_ub_range("GatherMask", "dst", ops[0].slot, ops[0].addr, at + sizeof(T), loc);
                std::memcpy(d + kept * sizeof(T), s + src_index(r, e) * sizeof(T), sizeof(T));
            }
            ++kept;
        }
    rsvdCnt = kept;
    detail::state().mask_counter_mode = false;
    mark_written(ops[0].slot, PIPE_V);
    const uint64_t visited = static_cast<uint64_t>(repeat) * lanes;
    gather_cost("GatherMask", dtype_of<T>(), visited, visited * sizeof(T) + kept * sizeof(T));
}

}  // namespace cannsim

namespace AscendC {

// @api Gather Gatherb GatherMask Brcb CreateVecIndex Arange
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint32_t count, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src),
                               cannsim::operand("srcOffset", srcOffset)};
    cannsim::run_gather<T>(ops, srcBaseAddr, cannsim::count_lanes(count), 8, loc);
}
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint64_t mask, const uint8_t repeatTime,
                   const uint16_t dstRepStride, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src),
                               cannsim::operand("srcOffset", srcOffset)};
    auto L = cannsim::mask_lanes("Gather", mask, repeatTime, true, sizeof(T), true, loc);
    cannsim::run_gather<T>(ops, srcBaseAddr, L, dstRepStride, loc);
}
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint64_t mask[], const uint8_t repeatTime,
                   const uint16_t dstRepStride, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src),
                               cannsim::operand("srcOffset", srcOffset)};
    auto L = cannsim::mask_lanes("Gather", mask, repeatTime, true, sizeof(T), true, loc);
    cannsim::run_gather<T>(ops, srcBaseAddr, L, dstRepStride, loc);
}

template <typename T>
inline void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& offset,
                    const uint8_t repeatTime, const GatherRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::check_gather_dtype<T>("Gatherb", loc);
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("offset", offset)};
    for (auto& o : ops) {
        cannsim::check_live("Gatherb", o.slot, o.gen, loc);
        cannsim::check_align32("Gatherb", o.name, o.addr, loc);
        cannsim::cost::note_operand(o.slot, o.is_dst);
    }
    const uint64_t blk = repeatParams.dstBlkStride, rep = repeatParams.dstRepStride;
    if (repeatTime > 0) {
        const uint64_t last = ((repeatTime - 1) * rep + 7 * blk) * 32 + 32;
        cannsim::check_ub_range("Gatherb", "dst", ops[0].slot, ops[0].addr, ops[0].addr + last, loc);
        cannsim::check_ub_range("Gatherb", "offset", ops[2].slot, ops[2].addr, ops[2].addr + repeatTime * 8u * 4u, loc);
    }
    const uint8_t* offs = cannsim::ub_at(ops[2].addr);
    for (uint64_t r = 0; r < repeatTime && !cannsim::count_only(); ++r)
        for (uint64_t j = 0; j < 8; ++j) {
            const uint32_t off = cannsim::ld<uint32_t>(offs + (r * 8 + j) * 4);
            cannsim::gather_source("Gatherb", ops[1], ops[1].addr, off, 32, 32, loc);
            std::memcpy(cannsim::ub_at(ops[0].addr + (r * rep + j * blk) * 32), cannsim::ub_at(ops[1].addr + off), 32);
        }
    cannsim::mark_written(ops[0].slot, PIPE_V);
    const uint64_t n = uint64_t(repeatTime) * 8 * 32 / sizeof(T);
    cannsim::gather_cost("Gatherb", cannsim::dtype_of<T>(), n, n * sizeof(T) * 2);
}

template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                       uint64_t& rsvdCnt, CANNSIM_LOC) {
    if (sizeof(U) != (sizeof(T) == 1 ? 1 : sizeof(T)) || !std::is_unsigned_v<U>)
        cannsim::report("L2.DTYPE_UNSUPPORTED", cannsim::Severity::Error, "GatherMask", loc.line(),
                        cannsim::fmt("GatherMask src1Pattern of %s with %s data: the pattern type must be the unsigned "
                                     "type of the data's width (uint16_t for 16-bit, uint32_t for 32-bit data)",
                                     cannsim::dtype_name(cannsim::dtype_of<U>()),
                                     cannsim::dtype_name(cannsim::dtype_of<T>())));
    cannsim::check_live("GatherMask", src1Pattern.slot_, src1Pattern.gen_, loc);
    cannsim::check_align32("GatherMask", "src1Pattern", src1Pattern.addr_, loc);
    const uint64_t lanes = reduceMode ? mask : 256 / sizeof(T);
    const uint64_t rstep = uint64_t(gatherMaskParams.src1RepeatStride) * 32;
    if (gatherMaskParams.repeatTimes > 0 && lanes > 0)
        cannsim::check_ub_range("GatherMask", "src1Pattern", src1Pattern.slot_, src1Pattern.addr_,
                                src1Pattern.addr_ + (gatherMaskParams.repeatTimes - 1) * rstep + (lanes + 7) / 8, loc);
    const uint8_t* pat = cannsim::ub_at(src1Pattern.addr_);
    cannsim::run_gather_mask<T>(dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, loc,
                                [&](uint64_t r, uint64_t e) { return (pat[r * rstep + e / 8] >> (e % 8)) & 1u; });
}
template <typename T, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                       uint64_t& rsvdCnt, CANNSIM_LOC) {
    const uint8_t top = cannsim::arch() == 2002 ? 6 : 7;
    if (src1Pattern < 1 || src1Pattern > top)
        cannsim::report("L2.GATHER_PATTERN", cannsim::Severity::Error, "GatherMask", loc.line(),
                        cannsim::fmt("GatherMask fixed pattern %u is outside 1..%u on arch %d (%s)", src1Pattern, top,
                                     cannsim::arch(), cannsim::chip().name));
    cannsim::run_gather_mask<T>(dst, src0, reduceMode, mask, gatherMaskParams, rsvdCnt, loc,
                                [src1Pattern](uint64_t, uint64_t e) { return cannsim::fixed_gather_pattern(src1Pattern, e); });
}

// Brcb: element r * 8 + j of src0 fills data block j of repeat r of dst.
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t repeatTime,
                 const BrcbRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::check_gather_dtype<T>("Brcb", loc);
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0)};
    for (auto& o : ops) {
        cannsim::check_live("Brcb", o.slot, o.gen, loc);
        cannsim::check_align32("Brcb", o.name, o.addr, loc);
        cannsim::cost::note_operand(o.slot, o.is_dst);
    }
    const uint64_t blk = repeatParams.dstBlkStride == 0 ? 1 : repeatParams.dstBlkStride;
    const uint64_t rep = repeatParams.dstRepStride, E = 32 / sizeof(T);
    if (repeatTime > 0) {
        cannsim::check_ub_range("Brcb", "src0", ops[1].slot, ops[1].addr, ops[1].addr + repeatTime * 8u * sizeof(T), loc);
        cannsim::check_ub_range("Brcb", "dst", ops[0].slot, ops[0].addr,
                                ops[0].addr + ((repeatTime - 1) * rep + 7 * blk) * 32 + 32, loc);
    }
    for (uint64_t r = 0; r < repeatTime && !cannsim::count_only(); ++r)
        for (uint64_t j = 0; j < 8; ++j) {
            const T v = cannsim::ld<T>(cannsim::ub_at(ops[1].addr + (r * 8 + j) * sizeof(T)));
            uint8_t* b = cannsim::ub_at(ops[0].addr + (r * rep + j * blk) * 32);
            for (uint64_t k = 0; k < E; ++k) cannsim::st<T>(b + k * sizeof(T), v);
        }
    cannsim::mark_written(ops[0].slot, PIPE_V);
    const uint64_t n = uint64_t(repeatTime) * 8 * E;
    cannsim::gather_cost("Brcb", cannsim::dtype_of<T>(), n, n * sizeof(T));
}

// CreateVecIndex: lane k (count form) or lane e of repeat r (value r * lanes + e) gets firstValue + k.
template <typename T>
inline void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count, CANNSIM_LOC) {
    cannsim::check_gather_dtype<T>("CreateVecIndex", loc);
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("dst", dst)};
    const double f = static_cast<double>(cannsim::to_calc(firstValue));
    uint64_t k = 0;
    cannsim::run_unary<T>("CreateVecIndex", ops, cannsim::count_lanes(count), loc,
                          [&](auto) { return static_cast<cannsim::Calc<T>>(f + static_cast<double>(k++)); });
}
template <typename T>
inline void create_vec_index_mask(LocalTensor<T>& dst, const T& firstValue, const cannsim::Lanes& L,
                                  uint16_t dstBlkStride, uint8_t dstRepStride, const cannsim::SrcLoc& loc) {
    cannsim::check_gather_dtype<T>("CreateVecIndex", loc);
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("dst", dst)};
    ops[0].blk = ops[1].blk = dstBlkStride; ops[0].rep = ops[1].rep = dstRepStride;
    const uint64_t lanes = cannsim::check_operands("CreateVecIndex", ops, 2, L, loc);
    const double f = static_cast<double>(cannsim::to_calc(firstValue));
    uint8_t* d = cannsim::ub_at(ops[0].addr);
    for (int r = 0; r < L.repeat && !cannsim::count_only(); ++r)
        for (int e = 0; e < L.lanes_per_repeat; ++e)
            if (L.active(r, e))
                cannsim::st<T>(d + cannsim::element_index(ops[0], L, r, e) * sizeof(T),
                               cannsim::from_calc<T>(static_cast<cannsim::Calc<T>>(
                                   f + static_cast<double>(r) * L.lanes_per_repeat + e)));
    cannsim::mark_written(ops[0].slot, PIPE_V);
    cannsim::record_cost(PIPE_V, "CreateVecIndex", cannsim::dtype_of<T>(), lanes, lanes * sizeof(T));
}
template <typename T>
inline void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, uint64_t mask, uint8_t repeatTime,
                           uint16_t dstBlkStride, uint8_t dstRepStride, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("CreateVecIndex", mask, repeatTime, true, sizeof(T), true, loc);
    create_vec_index_mask(dst, firstValue, L, dstBlkStride, dstRepStride, loc);
}
template <typename T>
inline void CreateVecIndex(LocalTensor<T>& dst, const T& firstValue, uint64_t mask[], uint8_t repeatTime,
                           uint16_t dstBlkStride, uint8_t dstRepStride, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("CreateVecIndex", mask, repeatTime, true, sizeof(T), true, loc);
    create_vec_index_mask(dst, firstValue, L, dstBlkStride, dstRepStride, loc);
}

// Arange: dst[i] = firstValue + i * diffValue, each value rounded once to T. diffValue >= 0 and
// count > 0 (L2.ARANGE_ARGS).
template <typename T>
inline void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count, CANNSIM_LOC) {
    cannsim::check_gather_dtype<T>("Arange", loc);
    const double f = static_cast<double>(cannsim::to_calc(firstValue));
    const double step = static_cast<double>(cannsim::to_calc(diffValue));
    if (count <= 0 || step < 0)
        cannsim::report("L2.ARANGE_ARGS", cannsim::Severity::Error, "Arange", loc.line(),
                        cannsim::fmt("Arange needs count > 0 and diffValue >= 0; got count %d, diffValue %g", count, step));
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("dst", dst)};
    uint64_t k = 0;
    cannsim::run_unary<T>("Arange", ops, cannsim::count_lanes(count), loc, [&](auto) {
        const double v = f + static_cast<double>(k++) * step;
        if constexpr (std::is_integral_v<T>) return static_cast<int64_t>(v);
        else return static_cast<float>(v);
    });
}

}  // namespace AscendC
