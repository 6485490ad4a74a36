// UB-to-UB Copy (mask/repeat forms with CopyRepeatParams; the count form on Atlas 350),
// PairReduceSum (sum of each even/odd pair of lanes), GetReduceRepeatSumSpr, SetNextTaskStart (no effect: no SuperKernel), and the system queries GetDataBlockSizeInBytes,
// GetICachePreloadStatus, GetProgramCounter and InitSocState.
//
// Copy in counter mask mode: the mask is the element count of each repeat and repeatTime applies
// (documented difference from the other vector APIs). PairReduceSum: a repeat's lanes 2p and 2p+1
// give result p; an inactive lane adds nothing (a pair with no active lane gives 0); dstRepStride
// counts in halved repeats (128 bytes).
#pragma once
#include "vec_ops.h"
#include "reduce.h"

namespace AscendC {
struct CopyRepeatParams {
    uint16_t dstStride = 1, srcStride = 1;           // data-block stride inside a repeat
    uint16_t dstRepeatSize = 8, srcRepeatSize = 8;   // repeat stride, in data blocks
    CopyRepeatParams() = default;
    CopyRepeatParams(uint16_t dstStrideIn, uint16_t srcStrideIn, uint16_t dstRepeatSizeIn, uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn), srcRepeatSize(srcRepeatSizeIn) {}
};
}  // namespace AscendC

namespace cannsim {

constexpr uint32_t COPY_MASK_TYPES = DT_I16 | DT_U16 | DT_F16 | DT_BF16 | DT_I32 | DT_U32 | DT_F32;
inline const ApiDtypes kUbMiscDtypes[] = {
    {"Copy", COPY_MASK_TYPES, COPY_MASK_TYPES, COPY_MASK_TYPES},
    {"CopyCount", 0, COPY_MASK_TYPES | DT_I8 | DT_U8 | DT_I64 | DT_U64, 0},   // the count form: Atlas 350 only
    {"PairReduceSum", DT_F16 | DT_F32, DT_F16 | DT_F32, DT_F16 | DT_F32},
};

inline void check_copy_stride(const AscendC::CopyRepeatParams& p, const SrcLoc& loc) {
    if (p.dstRepeatSize > 4095 || p.srcRepeatSize > 4095)
        report("L2.API_PARAM", Severity::Error, "Copy", loc.line(),
               fmt("Copy CopyRepeatParams dstRepeatSize %u / srcRepeatSize %u exceed the limit 4095", p.dstRepeatSize,
                   p.srcRepeatSize));
}

template <typename T>
inline void run_copy(Operand* ops, Lanes L, bool count_form, const SrcLoc& loc) {
    check_dtype_row("Copy", row_of(kUbMiscDtypes, count_form ? "CopyCount" : "Copy"), dtype_of<T>(), loc);
    const uint64_t lanes = check_operands("Copy", ops, 2, L, loc);
    uint8_t* d = ub_at(ops[0].addr);
    const uint8_t* s = ub_at(ops[1].addr);
    if (!count_only())
        for_lanes<2>(ops, L, [&](uint64_t i, uint64_t j) { std::memmove(d + i * sizeof(T), s + j * sizeof(T), sizeof(T)); });
    mark_written(ops[0].slot, PIPE_V);
    record_cost(PIPE_V, "Copy", dtype_of<T>(), lanes, lanes * sizeof(T) * 2);
}

// Copy's counter mode: `mask` elements in each of repeatTime repeats.
inline Lanes copy_lanes(uint64_t mask, uint8_t repeat, bool isSetMask, uint32_t esize, const SrcLoc& loc) {
    auto& s = detail::state();
    if (!s.mask_counter_mode) return mask_lanes("Copy", mask, repeat, isSetMask, esize, true, loc);
    Lanes L; L.count_form = false;
    L.repeat = repeat;
    L.lanes_per_repeat = 256 / static_cast<int>(esize);
    const uint64_t per = std::min<uint64_t>(isSetMask ? mask : s.mask_lo, static_cast<uint64_t>(max_mask_lanes(esize)));
    L.lo = per >= 64 ? ~0ull : ((1ull << per) - 1);
    L.hi = per > 64 ? (per >= 128 ? ~0ull : ((1ull << (per - 64)) - 1)) : 0;
    return L;
}

template <typename T>
inline void pair_reduce_sum(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const Lanes& L,
                            int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, const SrcLoc& loc) {
    const char* api = "PairReduceSum";
    check_dtype_row(api, row_of(kUbMiscDtypes, api), dtype_of<T>(), loc);
    Operand ops[1] = {operand("src", src)};
    ops[0].blk = static_cast<uint32_t>(srcBlkStride); ops[0].rep = static_cast<uint32_t>(srcRepStride);
    const uint64_t lanes = check_operands(api, ops, 1, L, loc);
    check_live(api, dst.slot_, dst.gen_, loc);
    check_align32(api, "dst", dst.addr_, loc);
    cost::note_operand(dst.slot_, true);
    const uint64_t half_rep = 128 / sizeof(T);   // results per repeat
    if (L.repeat > 0)
        check_ub_range(api, "dst", dst.slot_, dst.addr_,
                       dst.addr_ + ((uint64_t)(L.repeat - 1) * dstRepStride * half_rep + half_rep) * sizeof(T), loc);
    const uint8_t* s = ub_at(src.addr_);
    uint8_t* d = ub_at(dst.addr_);
    std::vector<float> out(half_rep);
    for (int r = 0; r < L.repeat && !count_only(); ++r) {
        for (uint64_t p = 0; p < half_rep; ++p) {
            float acc = 0;
            for (int e = static_cast<int>(2 * p); e < static_cast<int>(2 * p + 2); ++e)
                if (L.active(r, e)) acc += static_cast<float>(ld<T>(s + element_index(ops[0], L, r, e) * sizeof(T)));
            out[p] = acc;
        }
        for (uint64_t p = 0; p < half_rep; ++p)   // after reading the repeat: dst may overlap src
            st<T>(d + ((uint64_t)r * dstRepStride * half_rep + p) * sizeof(T), T(out[p]));
    }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, api, dtype_of<T>(), lanes, lanes * sizeof(T) * 3 / 2);
}

}  // namespace cannsim

namespace AscendC {

template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    cannsim::run_copy<T>(ops, cannsim::count_lanes(count), true, loc);
}
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime,
                 const CopyRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    ops[0].blk = repeatParams.dstStride; ops[1].blk = repeatParams.srcStride;
    ops[0].rep = repeatParams.dstRepeatSize; ops[1].rep = repeatParams.srcRepeatSize;
    cannsim::check_copy_stride(repeatParams, loc);
    auto L = cannsim::detail::state().mask_counter_mode
                 ? cannsim::copy_lanes(mask[0], repeatTime, isSetMask, sizeof(T), loc)
                 : cannsim::mask_lanes("Copy", mask, repeatTime, isSetMask, sizeof(T), true, loc);
    cannsim::run_copy<T>(ops, L, false, loc);
}
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime,
                 const CopyRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[2] = {cannsim::operand("dst", dst, true), cannsim::operand("src", src)};
    ops[0].blk = repeatParams.dstStride; ops[1].blk = repeatParams.srcStride;
    ops[0].rep = repeatParams.dstRepeatSize; ops[1].rep = repeatParams.srcRepeatSize;
    cannsim::check_copy_stride(repeatParams, loc);
    cannsim::run_copy<T>(ops, cannsim::copy_lanes(mask, repeatTime, isSetMask, sizeof(T), loc), false, loc);
}

template <typename T, bool isSetMask = true>
inline void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const uint64_t mask[],
                          const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("PairReduceSum", mask, repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::pair_reduce_sum(dst, src, L, dstRepStride, srcBlkStride, srcRepStride, loc);
}
template <typename T, bool isSetMask = true>
inline void PairReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,
                          const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride, CANNSIM_LOC) {
    auto L = cannsim::mask_lanes("PairReduceSum", static_cast<uint64_t>(mask), repeatTime, isSetMask, sizeof(T), false, loc);
    cannsim::pair_reduce_sum(dst, src, L, dstRepStride, srcBlkStride, srcRepStride, loc);
}

// The result of the last count-form ReduceSum (its special register), half or float.
template <typename T>
inline T GetReduceRepeatSumSpr(CANNSIM_LOC) {
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "GetReduceRepeatSumSpr takes half or float");
    (void)loc;
    return T(static_cast<float>(cannsim::reduce_sum_spr()));
}

// SuperKernel hint: lets the following sub-kernel start while this one's remaining instructions run.
// The emulator runs one kernel per launch, so there is nothing to overlap: no effect.
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX>
inline void SetNextTaskStart() {}

// ---- system queries ----
// One data block is 32 bytes on every supported chip.
inline constexpr int16_t GetDataBlockSizeInBytes() { return 32; }
// The emulator has no instruction cache: a preload is never in flight (0 = idle).
inline int64_t GetICachePreloadStatus() { return 0; }
// The emulator's program counter is the source line of the call (a position in the kernel).
inline int64_t GetProgramCounter(CANNSIM_LOC) { return static_cast<int64_t>(loc.line()); }
// Resets the core's global state a previous kernel may have left: normal mask mode with every lane
// on, no atomic GM mode, DeqScale 1.
inline void InitSocState() {
    auto& s = cannsim::detail::state();
    s.mask_counter_mode = false;
    s.mask_lo = ~0ull; s.mask_hi = ~0ull;
    s.atomic_op = 0; s.atomic_dtype = 0;
    s.deq_scale = 1.0f;
}

}  // namespace AscendC
