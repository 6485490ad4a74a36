// The emulator's state that kernel code must not forge or read, in pages at a fixed address (so
// no pointer to them lives in memory a kernel can search) guarded by two x86 protection keys:
//   - the sealed page (page 0): readable, not writable by kernel code: the cost hooks' per-call
//     operand record (cost_hooks.h `pending`), which becomes the next cost event's slots;
//   - the hidden pages (1-2): neither readable nor writable: the real GM mappings' table and the UB
//     arena's host address (gm_alias.h), which would let a kernel read GM and work on UB uncharged;
//   - the data key: the real GM mappings and the UB arena themselves (key_data, in a candidate's
//     process), so a host address a kernel finds (a dead stack frame of an emulated API, say) is
//     of no use: the emulator's translations open it (open_data) and every API's record_cost
//     closes it again (close_data) before kernel code runs.
// The emulator's own code opens a key for the few instructions that need it (`Open`, WRPKRU: no
// system call) and closes it before kernel code runs again (a block is one thread). The launcher
// maps the vault from its .preinit_array entry, before any candidate code, and its syscall filter
// then refuses pkey_* and every mmap(MAP_FIXED)/munmap/mprotect/mremap/madvise whose range could
// reach the vault (harness.cpp, install_vault_filter): kernel code cannot unmap, remap or re-key
// it. Where the CPU or kernel has no protection keys the vault is a plain page (keys() < 0, said in
// `cannpilot doctor`): the layout is the same, nothing guards it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cannsim::vault {

constexpr uintptr_t kAddr = 0x200000000000ull;   // 32 TiB: far from the executable, heap, libraries
constexpr size_t kPage = 4096;
constexpr size_t kBytes = 3 * kPage;
constexpr uint32_t kWindowHi = static_cast<uint32_t>(kAddr >> 32);   // filter: high words kWindowHi-1, kWindowHi
constexpr uint32_t kMagic = 0x5641554c;

constexpr size_t kSealedOffset = 64;                     // the sealed area, after the magic
constexpr size_t kSealedBytes = kPage - kSealedOffset;
constexpr size_t kHiddenBytes = 2 * kPage;

// The protection keys (-1: none). In ordinary memory, not in the vault: a signal handler runs with
// every key closed, and must find them before it can open one. A kernel that rewrote them would
// only make the emulator's own accesses fault (it opens the wrong key, or none).
struct Keys {
    int sealed = -1, hidden = -1, data = -1;
};
inline Keys& key_numbers() {
    static Keys k;
    return k;
}

#if defined(__x86_64__)
inline uint32_t rdpkru() {
    uint32_t eax, edx;
    asm volatile(".byte 0x0f,0x01,0xee" : "=a"(eax), "=d"(edx) : "c"(0) : "memory");
    return eax;
}
// The one WRPKRU of the emulator, out of line: a launcher with those bytes anywhere else in its code
// is refused before it runs (copilot/backends/sim/opcodes.py, SEC.BINARY).
__attribute__((noinline)) inline void wrpkru(uint32_t v) {
    asm volatile(".byte 0x0f,0x01,0xef" : : "a"(v), "c"(0), "d"(0) : "memory");
}
#endif

// Maps the vault at kAddr and keys it (the launcher's preinit; lazily in tests). False when the
// address is taken (already mapped: the lazy call after the launcher's).
inline bool setup() {
    void* m = mmap(reinterpret_cast<void*>(kAddr), kBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m == MAP_FAILED) return false;
    if (m != reinterpret_cast<void*>(kAddr)) { munmap(m, kBytes); return false; }
    *reinterpret_cast<uint32_t*>(kAddr) = kMagic;
    Keys* k = &key_numbers();
    k->sealed = k->hidden = k->data = -1;
#if defined(__x86_64__) && defined(SYS_pkey_alloc) && defined(SYS_pkey_mprotect)
    // pkey_alloc gives this thread (and the processes it forks) the keys' rights: no write to the
    // sealed key, no access to the hidden and data ones
    const long s = syscall(SYS_pkey_alloc, 0, 2 /* PKEY_DISABLE_WRITE */);
    const long h = s >= 0 ? syscall(SYS_pkey_alloc, 0, 1 /* PKEY_DISABLE_ACCESS */) : -1;
    const long d = h >= 0 ? syscall(SYS_pkey_alloc, 0, 1 /* PKEY_DISABLE_ACCESS */) : -1;
    if (s > 0 && h > 0 && d > 0 && syscall(SYS_pkey_mprotect, kAddr + kPage, kHiddenBytes, PROT_READ | PROT_WRITE, h) == 0 &&
        syscall(SYS_pkey_mprotect, kAddr, kPage, PROT_READ | PROT_WRITE, s) == 0) {
        k->sealed = static_cast<int>(s);
        k->hidden = static_cast<int>(h);
        k->data = static_cast<int>(d);
    } else {
        syscall(SYS_pkey_mprotect, kAddr, kBytes, PROT_READ | PROT_WRITE, 0);   // all or nothing
    }
#endif
    return true;
}

inline const Keys& keys() {
    static const bool mapped = setup();   // false: mapped already (the launcher's preinit)
    (void)mapped;
    return key_numbers();
}
inline bool keyed() { return keys().hidden > 0; }

// While alive, this code may write the sealed page (hidden = false) or read and write the hidden
// pages (hidden = true). Never alive while kernel code runs.
class Open {
public:
    explicit Open(bool hidden) {
#if defined(__x86_64__)
        const Keys& k = keys();
        const int key = hidden ? k.hidden : k.sealed;
        if (key > 0) {
            saved_ = rdpkru();
            wrpkru(saved_ & ~(3u << (2 * key)));
            on_ = true;
        }
#else
        (void)hidden;
#endif
    }
    ~Open() {
#if defined(__x86_64__)
        if (on_) wrpkru(saved_);
#endif
    }
    Open(const Open&) = delete;
    Open& operator=(const Open&) = delete;

private:
    uint32_t saved_ = 0;
    bool on_ = false;
};

// The data key (the real GM pages and the UB arena): opened by the emulator's address translations
// (gm_real, ub_real) and left open for the rest of the API call; closed by record_cost, which every
// API calls last, by LocalTensor::GetValue/SetValue, and before the kernel's entry. RDPKRU first:
// no WRPKRU when the state is already the one wanted.
inline void open_data() {
#if defined(__x86_64__)
    const int key = key_numbers().data;
    if (key <= 0) return;
    const uint32_t v = rdpkru();
    if (v & (3u << (2 * key))) wrpkru(v & ~(3u << (2 * key)));
#endif
}
inline void close_data() {
#if defined(__x86_64__)
    const int key = key_numbers().data;
    if (key <= 0) return;
    const uint32_t v = rdpkru();
    if (!(v & (1u << (2 * key)))) wrpkru(v | (1u << (2 * key)));
#endif
}
// Puts [p, p + bytes) (page aligned, readable and writable) under the data key. False where there
// are no keys or the call failed (the pages stay as they were).
inline bool key_data(void* p, size_t bytes) {
#if defined(__x86_64__) && defined(SYS_pkey_mprotect)
    const int key = keys().data;
    return key > 0 && bytes > 0 && syscall(SYS_pkey_mprotect, p, bytes, PROT_READ | PROT_WRITE, key) == 0;
#else
    (void)p; (void)bytes;
    return false;
#endif
}

inline void* sealed_area() { (void)keys(); return reinterpret_cast<void*>(kAddr + kSealedOffset); }
inline void* hidden_area() { (void)keys(); return reinterpret_cast<void*>(kAddr + kPage); }

inline bool contains(uintptr_t a) { return a - kAddr < kBytes; }

// A PROT_NONE reservation of `bytes` at a random address (the real GM mappings, the UB arena), so
// that it is not beside the kernel's view of it; null if none could be placed.
inline void* random_reservation(size_t bytes) {
    for (int attempt = 0; attempt < 16; ++attempt) {
        uint64_t r = 0;
        if (syscall(SYS_getrandom, &r, sizeof r, 0) != static_cast<long>(sizeof r)) break;
        // 16-80 TiB, page aligned, outside the vault's filter window (28-36 TiB)
        uintptr_t a = (0x100000000000ull + r % 0x400000000000ull) & ~static_cast<uintptr_t>(kPage - 1);
        if (a + bytes > (uintptr_t(kWindowHi) - 1) << 32 && a < (uintptr_t(kWindowHi) + 1) << 32) continue;
        void* m = mmap(reinterpret_cast<void*>(a), bytes, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        r = 0;
        if (m == reinterpret_cast<void*>(a)) return m;
        if (m != MAP_FAILED) munmap(m, bytes);
    }
    return nullptr;
}

}  // namespace cannsim::vault
