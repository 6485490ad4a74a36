// The CmpMask register: Compare with the result in the register (one repeat, mask forms),
// GetCmpMask / SetCmpMask, and Select<T, SELMODE::VSEL_CMPMASK_SPR>(dst, src0, src1, repeatTime,
// params) that takes its per-lane bits from the register and its lanes from the vector mask
// register (SetVectorMask).
//
// The register holds 128 bits, one per lane, least significant bit first (lane 0 = bit 0 of byte
// 0), the layout Compare's tensor form writes. Inactive lanes of a register Compare give 0. The
// other SELMODEs of the register Select (scalar or address held in the register) are not emulated
// and report L2.API_PARAM.
#pragma once
#include "cmpsel.h"

namespace cannsim {

inline const ApiDtypes kCmpRegisterDtypes[] = {
    {"CompareRegister", DT_F16 | DT_F32, DT_F16 | DT_F32, DT_F16 | DT_F32},
    {"SelectRegister", DT_F16 | DT_F32, DT_F16 | DT_F32, DT_F16 | DT_F32},
};

// The register, per core (each block runs in its own process; begin_block leaves it as it was, as
// the chip does between kernels: InitSocState does not clear it either).
inline uint8_t* cmp_register() { static uint8_t r[16] = {}; return r; }

inline void check_align16(const char* api, const char* name, uint64_t addr, const SrcLoc& loc) {
    if (addr % 16 != 0)
        report("L2.API_PARAM", Severity::Error, api, loc.line(),
               fmt("%s %s UB address %llu is not 16-byte aligned as the API requires", api, name, (unsigned long long)addr));
}

template <typename T>
inline void compare_to_register(Operand* ops, const Lanes& L, AscendC::CMPMODE mode, const SrcLoc& loc) {
    check_dtype_row("Compare", row_of(kCmpRegisterDtypes, "CompareRegister"), dtype_of<T>(), loc);
    const uint64_t lanes = check_operands("Compare", ops, 2, L, loc);
    uint8_t bits[16] = {};
    const uint8_t* a = ub_at(ops[0].addr);
    const uint8_t* b = ub_at(ops[1].addr);
    if (!count_only())
        for (int e = 0; e < L.lanes_per_repeat && e < 128; ++e) {
            if (!L.active(0, e)) continue;
            const bool t = cmp(to_calc(ld<T>(a + element_index(ops[0], L, 0, e) * sizeof(T))),
                               to_calc(ld<T>(b + element_index(ops[1], L, 0, e) * sizeof(T))), mode);
            if (t) bits[e / 8] |= static_cast<uint8_t>(1u << (e % 8));
        }
    std::memcpy(cmp_register(), bits, 16);
    record_cost(PIPE_V, "Compare", dtype_of<T>(), lanes, lanes * sizeof(T) * 2);
}

}  // namespace cannsim

namespace AscendC {

// ---- Compare, result in the CmpMask register (one repeat) ----
template <typename T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask[],
                    const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("src0", src0), cannsim::operand("src1", src1), cannsim::operand("src1", src1)};
    ops[0].blk = repeatParams.src0BlkStride; ops[1].blk = repeatParams.src1BlkStride;
    auto L = cannsim::mask_lanes("Compare", mask, 1, isSetMask, sizeof(T), true, loc);
    cannsim::compare_to_register<T>(ops, L, cmpMode, loc);
}
template <typename T, bool isSetMask = true>
inline void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode, const uint64_t mask,
                    const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    cannsim::Operand ops[3] = {cannsim::operand("src0", src0), cannsim::operand("src1", src1), cannsim::operand("src1", src1)};
    ops[0].blk = repeatParams.src0BlkStride; ops[1].blk = repeatParams.src1BlkStride;
    auto L = cannsim::mask_lanes("Compare", mask, 1, isSetMask, sizeof(T), true, loc);
    cannsim::compare_to_register<T>(ops, L, cmpMode, loc);
}

// ---- GetCmpMask: the register's 128 bits to dst (16-byte aligned, at least 128 bytes) ----
template <typename T>
inline void GetCmpMask(const LocalTensor<T>& dst, CANNSIM_LOC) {
    cannsim::check_live("GetCmpMask", dst.slot_, dst.gen_, loc);
    cannsim::check_align16("GetCmpMask", "dst", dst.addr_, loc);
    if (static_cast<uint64_t>(dst.GetSize()) * sizeof(T) < 128)
        cannsim::report("L2.API_PARAM", cannsim::Severity::Error, "GetCmpMask", loc.line(),
                        cannsim::fmt("GetCmpMask dst holds %llu bytes; the API needs at least 128",
                                     (unsigned long long)(static_cast<uint64_t>(dst.GetSize()) * sizeof(T))));
    cannsim::check_ub_range("GetCmpMask", "dst", dst.slot_, dst.addr_, dst.addr_ + 16, loc);
    if (!cannsim::count_only()) std::memcpy(cannsim::ub_at(dst.addr_), cannsim::cmp_register(), 16);
    cannsim::mark_written(dst.slot_, PIPE_V);
    cannsim::record_cost(PIPE_V, "GetCmpMask", cannsim::dtype_of<T>(), 16 / sizeof(T), 16);
}

// ---- SetCmpMask: 128 bits from src (16-byte aligned) into the register ----
template <typename T>
inline void SetCmpMask(const LocalTensor<T>& src, CANNSIM_LOC) {
    cannsim::check_live("SetCmpMask", src.slot_, src.gen_, loc);
    cannsim::check_align16("SetCmpMask", "src", src.addr_, loc);
    cannsim::check_ub_range("SetCmpMask", "src", src.slot_, src.addr_, src.addr_ + 16, loc);
    cannsim::cost::note_operand(src.slot_, false);
    if (!cannsim::count_only()) std::memcpy(cannsim::cmp_register(), cannsim::ub_at(src.addr_), 16);
    cannsim::record_cost(PIPE_V, "SetCmpMask", cannsim::dtype_of<T>(), 16 / sizeof(T), 16);
}

// ---- Select without a selMask tensor: bits from the CmpMask register, lanes from the mask register ----
template <typename T, SELMODE selMode>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint8_t repeatTime,
                   const BinaryRepeatParams& repeatParams, CANNSIM_LOC) {
    using namespace cannsim;
    check_dtype_row("Select", row_of(kCmpRegisterDtypes, "SelectRegister"), dtype_of<T>(), loc);
    if (selMode != SELMODE::VSEL_CMPMASK_SPR)
        report("L2.API_PARAM", Severity::Error, "Select", loc.line(),
               "Select without a selMask tensor is emulated for SELMODE::VSEL_CMPMASK_SPR (bits from SetCmpMask/Compare) only");
    Operand ops[3] = {operand("dst", dst, true), operand("src0", src0), operand("src1", src1)};
    set_binary_strides<T>(ops, repeatParams);
    auto L = mask_lanes("Select", uint64_t(0), repeatTime, false, sizeof(T), true, loc);   // lanes: SetVectorMask
    const uint64_t lanes = check_operands("Select", ops, 3, L, loc);
    const uint8_t* m = cmp_register();
    uint8_t* d = ub_at(dst.addr_);
    const uint8_t* a = ub_at(src0.addr_);
    const uint8_t* b = ub_at(src1.addr_);
    if (!count_only())
        for (int r = 0; r < L.repeat; ++r)
            for (int e = 0; e < L.lanes_per_repeat; ++e) {
                if (!L.active(r, e)) continue;
                const bool bit = e < 128 && ((m[e / 8] >> (e % 8)) & 1u);
                const uint64_t di = element_index(ops[0], L, r, e);
                const uint64_t si = bit ? element_index(ops[1], L, r, e) : element_index(ops[2], L, r, e);
                std::memcpy(d + di * sizeof(T), (bit ? a : b) + si * sizeof(T), sizeof(T));
            }
    mark_written(dst.slot_, PIPE_V);
    record_cost(PIPE_V, "Select", dtype_of<T>(), lanes, lanes * sizeof(T) * 3);
}

}  // namespace AscendC
