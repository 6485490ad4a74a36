// GM as kernel code sees it: each input, output and workspace buffer sits at an address the
// process cannot touch (a PROT_NONE reservation), and the same bytes are mapped a second time, at
// a random address, where the emulator reads and writes them. The kernel's GM_ADDRs, GlobalTensor
// addresses and GetPhyAddr are all in the first space; every GM access of the emulated APIs
// (DataCopy, DataCopyPad, atomic stores, GetValue/SetValue, Fill, DumpTensor) goes through
// gm_real(). Kernel code that reads or writes GM through a raw pointer faults, and the harness
// reports it (RUN.INTEGRITY): its work would not be charged. Without registered aliases (test
// drivers, the tiling buffer) gm_real() is the identity.
//
// Where the real mappings are, and where the UB arena is (runtime.h UbArena), is kept in the
// vault's hidden pages (vault.h): a kernel that searches its memory for them finds nothing, and one
// that reads the vault faults (RUN.INTEGRITY).
#pragma once

#include <cstddef>
#include <cstdint>
#include "vault.h"

namespace cannsim {

struct GmAlias {
    uintptr_t alias;   // start of the PROT_NONE reservation (guard pages included)
    uintptr_t real;    // start of the real mapping, same layout
    uint64_t bytes;    // length of both
};

constexpr int kMaxGmAliases = 64;

// The hidden pages' contents.
struct RealMappings {
    GmAlias entries[kMaxGmAliases];
    int count;
    uint8_t* ub;       // the UB arena's host address (runtime.h UbArena)
};
static_assert(sizeof(RealMappings) <= vault::kHiddenBytes, "the vault's hidden pages hold the real mappings");

// Only inside a vault::Open(true).
inline RealMappings& real_mappings() { return *static_cast<RealMappings*>(vault::hidden_area()); }

inline bool register_gm_alias(const void* alias, void* real, uint64_t bytes) {
    vault::Open open(true);
    RealMappings& t = real_mappings();
    if (t.count < 0 || t.count >= kMaxGmAliases) return false;
    t.entries[t.count++] = {reinterpret_cast<uintptr_t>(alias), reinterpret_cast<uintptr_t>(real), bytes};
    return true;
}

// The emulator's address of the GM byte the kernel calls `p`.
// Opens the data key (vault.h open_data): the API's record_cost closes it.
template <typename T>
inline T* gm_real(T* p) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    T* real = p;
    {
        vault::Open open(true);
        const RealMappings& t = real_mappings();
        for (int i = 0; i < t.count && i < kMaxGmAliases; ++i) {
            const GmAlias& e = t.entries[i];
            if (a - e.alias < e.bytes) { real = reinterpret_cast<T*>(e.real + (a - e.alias)); break; }
        }
    }
    vault::open_data();
    return real;
}

// The alias region holding `addr`, if any (the crash handler's test for a raw GM access).
inline bool gm_alias_of(uintptr_t addr, GmAlias& out) {
    vault::Open open(true);
    const RealMappings& t = real_mappings();
    for (int i = 0; i < t.count && i < kMaxGmAliases; ++i)
        if (addr - t.entries[i].alias < t.entries[i].bytes) { out = t.entries[i]; return true; }
    return false;
}

namespace detail {
// The UB arena's host address (null before the first begin_block); opens the data key, as gm_real.
inline uint8_t* ub_real() {
    uint8_t* ub;
    {
        vault::Open open(true);
        ub = real_mappings().ub;
    }
    vault::open_data();
    return ub;
}
inline void set_ub_real(uint8_t* p) {
    vault::Open open(true);
    real_mappings().ub = p;
}
}  // namespace detail

}  // namespace cannsim
