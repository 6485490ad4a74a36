// Atomic GM stores: SetAtomicAdd/Max/Min<T>, SetAtomicType<T>, SetAtomicNone, DisableDmaAtomic.
//
// While an atomic mode is set, every UB -> GM copy (DataCopy, DataCopyPad) combines each element with
// what GM holds (add, max, min) in the element type of the mode instead of overwriting it. GM is not
// cleared first (the kernel must zero it). Across blocks, within one SyncAll phase, the writes are
// applied in block order (block 0's, then block 1's, ...; sync.h), so float sums are reproducible.
// Each element is rounded once to the mode's type, as a single DMA accumulation would.
// Rules: the mode's type per chip (L2.DTYPE_UNSUPPORTED); a copy whose element type differs from
// the mode's type (L2.ATOMIC_DTYPE: the chip would accumulate the bits as the mode's type).
// Cost: the copy's own MTE3 cost (the accumulation is done by the DMA engine; no extra time is
// modelled, UNVERIFIED).
#pragma once
#include <cmath>
#include "sync.h"

namespace cannsim {

namespace atomic_op { enum : int { None = 0, Add = 1, Max = 2, Min = 3 }; }

inline const ApiDtypes kAtomicDtypes[] = {
    {"SetAtomicAdd", DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32,
     DT_I16 | DT_F16 | DT_F32},
    {"SetAtomicMax", DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, 0},
    {"SetAtomicMin", DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, 0},
    {"SetAtomicType", DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32, DT_I8 | DT_I16 | DT_F16 | DT_BF16 | DT_I32 | DT_F32,
     DT_I16 | DT_F16 | DT_F32},
};

template <typename A>
inline void set_atomic(const char* api, int op, const SrcLoc& loc) {
    check_dtype_row(api, row_of(kAtomicDtypes, api), dtype_of<A>(), loc);
    auto& s = detail::state();
    if (op >= 0) s.atomic_op = op;
    s.atomic_dtype = dtype_of<A>();
    record_cost(PIPE_S, api, dtype_of<A>(), 0, 0);
}

template <typename A>
inline void combine(uint8_t* gm, const uint8_t* ub, uint64_t n, int op) {
    for (uint64_t i = 0; i < n; ++i) {
        const A g = ld<A>(gm + i * sizeof(A)), u = ld<A>(ub + i * sizeof(A));
        const auto a = to_calc(g), b = to_calc(u);
        Calc<A> r;
        if (op == atomic_op::Add) r = a + b;
        else if (op == atomic_op::Max) r = (b > a || b != b) ? b : a;
        else r = (b < a || b != b) ? b : a;
        st<A>(gm + i * sizeof(A), from_calc<A>(r));
    }
}

inline void combine_as(uint32_t dtype, uint8_t* gm, const uint8_t* ub, uint64_t bytes, int op) {
    switch (dtype) {
        case DT_I8: combine<int8_t>(gm, ub, bytes, op); break;
        case DT_I16: combine<int16_t>(gm, ub, bytes / 2, op); break;
        case DT_F16: combine<half>(gm, ub, bytes / 2, op); break;
        case DT_BF16: combine<bfloat16_t>(gm, ub, bytes / 2, op); break;
        case DT_I32: combine<int32_t>(gm, ub, bytes / 4, op); break;
        case DT_U32: combine<uint32_t>(gm, ub, bytes / 4, op); break;
        default: combine<float>(gm, ub, bytes / 4, op); break;
    }
}

// The atomic state of a UB -> GM copy of element type T: checked once per copy call.
template <typename T>
inline bool atomic_store_begin(const char* api, const SrcLoc& loc) {
    auto& s = detail::state();
    if (s.atomic_op == atomic_op::None) return false;
    if (s.atomic_dtype != dtype_of<T>())
        report("L2.ATOMIC_DTYPE", Severity::Error, api, loc.line(),
               fmt("%s of %s to GM while the atomic mode is set for %s: the DMA accumulates the bytes as %s "
                   "(SetAtomicAdd/Max/Min<T> or SetAtomicType<T> must name the copied element type)",
                   api, dtype_name(dtype_of<T>()), dtype_name(s.atomic_dtype), dtype_name(s.atomic_dtype)));
    wait_atomic_turn();
    return true;
}

// One contiguous UB -> GM row: plain copy, or the atomic combination.
inline void gm_store(bool atomic, uint8_t* gm, const uint8_t* ub, uint64_t bytes) {
    if (!atomic) { std::memcpy(gm, ub, bytes); return; }
    const auto& s = detail::state();
    combine_as(s.atomic_dtype, gm, ub, bytes, s.atomic_op);
}

}  // namespace cannsim

namespace AscendC {

// @api SetAtomicAdd SetAtomicMax SetAtomicMin SetAtomicType SetAtomicNone DisableDmaAtomic
template <typename T>
inline void SetAtomicAdd(CANNSIM_LOC) { cannsim::set_atomic<T>("SetAtomicAdd", cannsim::atomic_op::Add, loc); }
template <typename T>
inline void SetAtomicMax(CANNSIM_LOC) { cannsim::set_atomic<T>("SetAtomicMax", cannsim::atomic_op::Max, loc); }
template <typename T>
inline void SetAtomicMin(CANNSIM_LOC) { cannsim::set_atomic<T>("SetAtomicMin", cannsim::atomic_op::Min, loc); }
template <typename T>
inline void SetAtomicType(CANNSIM_LOC) { cannsim::set_atomic<T>("SetAtomicType", -1, loc); }
inline void SetAtomicNone(CANNSIM_LOC) {
    (void)loc;
    cannsim::detail::state().atomic_op = cannsim::atomic_op::None;
    cannsim::record_cost(PIPE_S, "SetAtomicNone", 0, 0, 0);
}
inline void DisableDmaAtomic(CANNSIM_LOC) { SetAtomicNone(loc); }

// The store-atomic configuration as (type, op) codes: AtomicDtype::ATOMIC_NONE switches it off;
// only AtomicOp::ATOMIC_SUM exists.
enum class AtomicDtype : uint16_t { ATOMIC_NONE = 0, ATOMIC_F32, ATOMIC_F16, ATOMIC_S16, ATOMIC_S32, ATOMIC_S8, ATOMIC_BF16 };
enum class AtomicOp : uint16_t { ATOMIC_SUM = 0 };

// @api SetStoreAtomicConfig GetStoreAtomicConfig
template <AtomicDtype type, AtomicOp op>
inline void SetStoreAtomicConfig(CANNSIM_LOC) {
    (void)loc;
    static constexpr uint32_t kTypes[] = {0, cannsim::DT_F32, cannsim::DT_F16, cannsim::DT_I16, cannsim::DT_I32,
                                          cannsim::DT_I8, cannsim::DT_BF16};
    auto& s = cannsim::detail::state();
    s.atomic_op = type == AtomicDtype::ATOMIC_NONE ? cannsim::atomic_op::None : cannsim::atomic_op::Add;
    if (type != AtomicDtype::ATOMIC_NONE) s.atomic_dtype = kTypes[static_cast<int>(type)];
    cannsim::record_cost(PIPE_S, "SetStoreAtomicConfig", s.atomic_dtype, 0, 0);
}
inline void GetStoreAtomicConfig(uint16_t& atomicType, uint16_t& atomicOp) {
    const auto& s = cannsim::detail::state();
    static constexpr uint32_t kTypes[] = {0, cannsim::DT_F32, cannsim::DT_F16, cannsim::DT_I16, cannsim::DT_I32,
                                          cannsim::DT_I8, cannsim::DT_BF16};
    atomicType = 0;
    if (s.atomic_op == cannsim::atomic_op::Add)
        for (uint16_t k = 1; k < 7; ++k)
            if (kTypes[k] == s.atomic_dtype) atomicType = k;
    atomicOp = static_cast<uint16_t>(AtomicOp::ATOMIC_SUM);
}

}  // namespace AscendC
