// GM as kernel code sees it: each input, output and workspace buffer sits at an address the
// process cannot touch (a PROT_NONE reservation), and the same bytes are mapped a second time where
// the emulator reads and writes them. The kernel's GM_ADDRs, GlobalTensor addresses and GetPhyAddr
// are all in the first space; every GM access of the emulated APIs (DataCopy, DataCopyPad, atomic
// stores, GetValue/SetValue, Fill, DumpTensor) goes through gm_real(). Kernel code that reads or
// writes GM through a raw pointer faults, and the harness reports it (RUN.INTEGRITY): its work would
// not be charged. Without registered aliases (test drivers, the tiling buffer) gm_real() is the
// identity.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cannsim {

struct GmAlias {
    uintptr_t alias;   // start of the PROT_NONE reservation (guard pages included)
    uintptr_t real;    // start of the real mapping, same layout
    uint64_t bytes;    // length of both
};

constexpr int kMaxGmAliases = 64;

struct GmAliasTable {
    GmAlias entries[kMaxGmAliases];
    int count = 0;
};

inline GmAliasTable& gm_alias_table() {
    static GmAliasTable t;
    return t;
}

inline bool register_gm_alias(const void* alias, void* real, uint64_t bytes) {
    GmAliasTable& t = gm_alias_table();
    if (t.count >= kMaxGmAliases) return false;
    t.entries[t.count++] = {reinterpret_cast<uintptr_t>(alias), reinterpret_cast<uintptr_t>(real), bytes};
    return true;
}

// The emulator's address of the GM byte the kernel calls `p`.
template <typename T>
inline T* gm_real(T* p) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const GmAliasTable& t = gm_alias_table();
    for (int i = 0; i < t.count; ++i) {
        const GmAlias& e = t.entries[i];
        if (a - e.alias < e.bytes) return reinterpret_cast<T*>(e.real + (a - e.alias));
    }
    return p;
}

// The alias region holding `addr`, if any (the crash handler's test for a raw GM access).
inline const GmAlias* gm_alias_of(uintptr_t addr) {
    const GmAliasTable& t = gm_alias_table();
    for (int i = 0; i < t.count; ++i)
        if (addr - t.entries[i].alias < t.entries[i].bytes) return &t.entries[i];
    return nullptr;
}

}  // namespace cannsim
