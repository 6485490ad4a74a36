// Kernel-side printing (printf, DumpTensor) and the APIs the emulator declares but does not
// implement: each reports L4.API_UNKNOWN at the caller's line instead of doing nothing silently.
#pragma once
#include <cinttypes>
#include "vec_engine.h"

namespace cannsim {

template <typename A> inline auto printf_arg(A a) {
    if constexpr (std::is_same_v<A, half> || std::is_same_v<A, bfloat16_t>) return static_cast<double>(static_cast<float>(a));
    else if constexpr (std::is_enum_v<A>) return static_cast<long long>(a);
    else return a;
}

// First argument of an unimplemented API: captures the caller's line on conversion.
struct UnknownCallSite {
    uint32_t line;
    template <typename T>
    UnknownCallSite(const T&, SrcLoc loc = SrcLoc::current()) : line(loc.line()) {}
};

inline void unknown_api(const char* api, uint32_t line) {
    cost::hooks().timeline.unmodelled();   // no cost for it: the time estimate is withheld
    report("L4.API_UNKNOWN", Severity::Error, api, line,
           fmt("%s is declared by the emulator but not emulated; the call did nothing (see docs/emulator-api.md)", api));
}

}  // namespace cannsim

namespace AscendC {

template <typename... Args>
inline void printf(const char* format, Args... args) {
    std::printf(format, cannsim::printf_arg(args)...);
}

template <typename T>
inline void DumpTensor(const LocalTensor<T>& t, uint32_t desc, uint32_t dumpSize, CANNSIM_LOC) {
    std::printf("DumpTensor desc=%u line=%u block=%lld:", desc, loc.line(), (long long)cannsim::detail::state().block_idx);
    for (uint32_t i = 0; i < dumpSize; ++i) {
        T v; std::memcpy(&v, cannsim::ub_at(t.addr_ + uint64_t(i) * sizeof(T)), sizeof(T));
        if constexpr (std::is_integral_v<T>) std::printf(" %lld", (long long)v);
        else std::printf(" %g", static_cast<double>(static_cast<float>(v)));
    }
    cannsim::vault::close_data();
    std::printf("\n");
}
template <typename T>
inline void DumpTensor(const GlobalTensor<T>& t, uint32_t desc, uint32_t dumpSize, CANNSIM_LOC) {
    std::printf("DumpTensor(GM) desc=%u line=%u block=%lld:", desc, loc.line(), (long long)cannsim::detail::state().block_idx);
    for (uint32_t i = 0; i < dumpSize; ++i) {
        const T v = *cannsim::gm_real(t.base_ + i);
        if constexpr (std::is_integral_v<T>) std::printf(" %lld", (long long)v);
        else std::printf(" %g", static_cast<double>(static_cast<float>(v)));
    }
    cannsim::vault::close_data();
    std::printf("\n");
}

inline int64_t GetSystemCycle() { return 0; }

#define CANNSIM_UNKNOWN_API(NAME)                                                          \
    template <typename... Explicit, typename... Rest>                                      \
    inline void NAME(cannsim::UnknownCallSite site, Rest&&...) { cannsim::unknown_api(#NAME, site.line); }

CANNSIM_UNKNOWN_API(Neg)
CANNSIM_UNKNOWN_API(Scatter)
CANNSIM_UNKNOWN_API(ReducePairElem)
CANNSIM_UNKNOWN_API(CastDeq)

template <typename... Explicit>
inline void DataSyncBarrier(CANNSIM_LOC) { cannsim::unknown_api("DataSyncBarrier", loc.line()); }

}  // namespace AscendC

#ifndef PRINTF
#define PRINTF AscendC::printf
#endif
#ifndef TRACE_START
#define TRACE_START(x)
#endif
#ifndef TRACE_STOP
#define TRACE_STOP(x)
#endif
#ifndef KERNEL_TASK_TYPE_DEFAULT
#define KERNEL_TASK_TYPE_DEFAULT(x)
#endif
#ifndef KERNEL_TASK_TYPE
#define KERNEL_TASK_TYPE(k, t)
#endif
