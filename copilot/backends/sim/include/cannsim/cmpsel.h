// Compare / Compares (bitmask output, bit i = lane i) and Select.
#pragma once
#include "vec_engine.h"

namespace cannsim {

template <typename C> inline bool cmp(C a, C b, AscendC::CMPMODE m) {
    using M = AscendC::CMPMODE;
    switch (m) {
        case M::LT: return a < b; case M::GT: return a > b; case M::EQ: return a == b;
        case M::LE: return a <= b; case M::GE: return a >= b; default: return a != b;
    }
}

inline void check_cmp_count(const char* api, uint64_t count, uint32_t esize, const SrcLoc& loc) {
    if ((count * esize) % 256 != 0)
        report("L2.CMP_COUNT_256B", Severity::Error, api, loc.line(),
               fmt("%s count %llu x %u B = %llu B is not a multiple of 256 B (one repeat); the count form of %s "
                   "requires whole repeats",
                   api, (unsigned long long)count, esize, (unsigned long long)(count * esize), api));
}

// Bit position in the output mask of lane (r, e).
inline uint64_t mask_bit(const Lanes& L, int r, int e) {
    return L.count_form ? static_cast<uint64_t>(e) : static_cast<uint64_t>(r) * L.lanes_per_repeat + e;
}

template <typename T, typename U, typename GetB>
inline void run_compare(const char* api, const AscendC::LocalTensor<U>& dst, Operand* ops, int nops, const Lanes& L,
                        AscendC::CMPMODE mode, const SrcLoc& loc, GetB get_b) {
    check_dtype(api, dtype_of<T>(), loc);
    if (std::is_same_v<T, int32_t> && mode != AscendC::CMPMODE::EQ && arch() == 2201)
        report("L2.DTYPE_UNSUPPORTED", Severity::Error, api, loc.line(),
               fmt("%s on int32_t supports only CMPMODE::EQ on arch %d (%s)", api, arch(), chip().name));
    const uint64_t lanes = check_operands(api, ops, nops, L, loc);
    check_live(api, dst.slot_, dst.gen_, loc);
    check_align32(api, "dst", dst.addr_, loc);
    const uint64_t nbits = L.count_form ? L.count : static_cast<uint64_t>(L.repeat) * L.lanes_per_repeat;
    check_ub_range(api, "dst", dst.slot_, dst.addr_, dst.addr_ + (nbits + 7) / 8, loc);
    uint8_t* d = ub_at(dst.addr_);
    const uint8_t* a = ub_at(ops[0].addr);
    auto put = [&](uint64_t bit, bool v) {
        if (v) d[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
        else d[bit / 8] &= static_cast<uint8_t>(~(1u << (bit % 8)));
    };
    if (count_only()) {          // count-only mode: checks and accounting, no data
    } else if (L.count_form) {
        for (uint64_t k = 0; k < L.count; ++k) put(k, cmp(to_calc(ld<T>(a + k * sizeof(T))), get_b(k), mode));
    } else {
        for (int r = 0; r < L.repeat; ++r)
            for (int e = 0; e < L.lanes_per_repeat; ++e) {
                if (!L.active(r, e)) continue;
                put(mask_bit(L, r, e),
                    cmp(to_calc(ld<T>(a + element_index(ops[0], L, r, e) * sizeof(T))),
                        get_b(nops > 1 ? element_index(ops[1], L, r, e) : 0), mode));
            }
    }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T) * nops);
}

template <typename T, typename U, typename GetB>
inline void run_select(const char* api, Operand* ops, int nops, const AscendC::LocalTensor<U>& selMask,
                       AscendC::SELMODE mode, const Lanes& L, const SrcLoc& loc, GetB get_b) {
    check_dtype(api, dtype_of<T>(), loc);
    const uint64_t lanes = check_operands(api, ops, nops, L, loc);
    check_live(api, selMask.slot_, selMask.gen_, loc);
    check_align32(api, "selMask", selMask.addr_, loc);
    const bool repeat_mask = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
    const uint64_t per = L.count_form ? 256 / sizeof(T) : static_cast<uint64_t>(L.lanes_per_repeat);
    const uint64_t nbits = repeat_mask ? per : (L.count_form ? L.count : static_cast<uint64_t>(L.repeat) * per);
    check_ub_range(api, "selMask", selMask.slot_, selMask.addr_, selMask.addr_ + (nbits + 7) / 8, loc);
    const uint8_t* m = ub_at(selMask.addr_);
    uint8_t* d = ub_at(ops[0].addr);
    const uint8_t* a = ub_at(ops[1].addr);
    auto bit = [&](uint64_t b) { if (repeat_mask) b %= per; return (m[b / 8] >> (b % 8)) & 1u; };
    if (count_only()) {          // count-only mode: checks and accounting, no data
    } else if (L.count_form) {
        for (uint64_t k = 0; k < L.count; ++k)
            st<T>(d + k * sizeof(T), bit(k) ? ld<T>(a + k * sizeof(T)) : get_b(k));
    } else {
        for (int r = 0; r < L.repeat; ++r)
            for (int e = 0; e < L.lanes_per_repeat; ++e) {
                if (!L.active(r, e)) continue;
                const uint64_t di = element_index(ops[0], L, r, e), ai = element_index(ops[1], L, r, e);
                st<T>(d + di * sizeof(T), bit(mask_bit(L, r, e)) ? ld<T>(a + ai * sizeof(T))
                                                                : get_b(nops > 2 ? element_index(ops[2], L, r, e) : 0));
            }
    }
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T) * nops);
}

}  // namespace cannsim

namespace AscendC {

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    uint32_t count, CANNSIM_LOC) {
    cannsim::check_cmp_count("Compare", count, sizeof(T), loc);
    cannsim::Operand ops[2] = {cannsim::operand("src0", src0), cannsim::operand("src1", src1)};
    const uint8_t* b = cannsim::ub_at(src1.addr_);
    cannsim::run_compare<T>("Compare", dst, ops, 2, cannsim::count_lanes(count), cmpMode, loc,
                            [b](uint64_t k) { return cannsim::to_calc(cannsim::ld<T>(b + k * sizeof(T))); });
}
template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("src0", src0), cannsim::operand("src1", src1)};
    ops[0].blk = params.src0BlkStride; ops[0].rep = params.src0RepStride;
    ops[1].blk = params.src1BlkStride; ops[1].rep = params.src1RepStride;
    auto L = cannsim::mask_lanes("Compare", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    const uint8_t* b = cannsim::ub_at(src1.addr_);
    cannsim::run_compare<T>("Compare", dst, ops, 2, L, cmpMode, loc,
                            [b](uint64_t k) { return cannsim::to_calc(cannsim::ld<T>(b + k * sizeof(T))); });
}
template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
                    const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("src0", src0), cannsim::operand("src1", src1)};
    ops[0].blk = params.src0BlkStride; ops[0].rep = params.src0RepStride;
    ops[1].blk = params.src1BlkStride; ops[1].rep = params.src1RepStride;
    auto L = cannsim::mask_lanes("Compare", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    const uint8_t* b = cannsim::ub_at(src1.addr_);
    cannsim::run_compare<T>("Compare", dst, ops, 2, L, cmpMode, loc,
                            [b](uint64_t k) { return cannsim::to_calc(cannsim::ld<T>(b + k * sizeof(T))); });
}

template <typename T, typename U>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     uint32_t count, CANNSIM_LOC) {
    cannsim::check_cmp_count("Compares", count, sizeof(T), loc);
    cannsim::Operand ops[1] = {cannsim::operand("src0", src0)};
    const auto s = cannsim::to_calc<T>(src1Scalar);
    cannsim::run_compare<T>("Compares", dst, ops, 1, cannsim::count_lanes(count), cmpMode, loc, [s](uint64_t) { return s; });
}
// Both mask forms of Compares (M: uint64_t for the continuous mask, const uint64_t* for the bits).
template <typename T, typename U, bool isSetMask, typename M>
inline void compares_masked(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                            M mask, const uint8_t repeatTime, const UnaryRepeatParams& params, cannsim::SrcLoc loc) {
    cannsim::Operand ops[1] = {cannsim::operand("src0", src0)};
    ops[0].blk = params.srcBlkStride; ops[0].rep = params.srcRepStride;
    auto L = cannsim::mask_lanes("Compares", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    const auto s = cannsim::to_calc<T>(src1Scalar);
    cannsim::run_compare<T>("Compares", dst, ops, 1, L, cmpMode, loc, [s](uint64_t) { return s; });
}
template <typename T, typename U, bool isSetMask = true>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {
    compares_masked<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, params, loc);
}
template <typename T, typename U, bool isSetMask = true>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                     const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& params, CANNSIM_LOC) {
    compares_masked<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, params, loc);
}
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T src1Scalar, CMPMODE cmpMode,
                          uint32_t count, CANNSIM_LOC) {
    Compares(dst, src0, src1Scalar, cmpMode, count, loc);
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, CANNSIM_LOC) {
    const bool scalar = selMode == SELMODE::VSEL_TENSOR_SCALAR_MODE;
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("src1", src1)};
    const uint8_t* b = cannsim::ub_at(src1.addr_);
    cannsim::Lanes L = cannsim::count_lanes(count);
    cannsim::run_select<T>("Select", ops, scalar ? 2 : 3, selMask, selMode, L, loc,
                           [b, scalar](uint64_t k) { return cannsim::ld<T>(b + (scalar ? 0 : k) * sizeof(T)); });
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0, T src1Scalar,
                   SELMODE selMode, uint32_t count, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0)};
    cannsim::run_select<T>("Select", ops, 2, selMask, selMode, cannsim::count_lanes(count), loc,
                           [src1Scalar](uint64_t) { return src1Scalar; });
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, const uint8_t repeatTime,
                   const BinaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("src1", src1)};
    cannsim::set_binary_strides<T>(ops, params);
    auto L = cannsim::mask_lanes("Select", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    const uint8_t* b = cannsim::ub_at(src1.addr_);
    cannsim::run_select<T>("Select", ops, 3, selMask, selMode, L, loc,
                           [b](uint64_t k) { return cannsim::ld<T>(b + k * sizeof(T)); });
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask[], const uint8_t repeatTime,
                   const BinaryRepeatParams& params, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("dst", dst, true), cannsim::operand("src0", src0),
                               cannsim::operand("src1", src1)};
    cannsim::set_binary_strides<T>(ops, params);
    auto L = cannsim::mask_lanes("Select", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    const uint8_t* b = cannsim::ub_at(src1.addr_);
    cannsim::run_select<T>("Select", ops, 3, selMask, selMode, L, loc,
                           [b](uint64_t k) { return cannsim::ld<T>(b + k * sizeof(T)); });
}

}  // namespace AscendC
