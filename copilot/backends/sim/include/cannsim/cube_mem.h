// The cube core's buffers (L1, L0A, L0B, L0C, BiasTable, Fixpipe buffer) as regions of the block's
// arena, next to UB: which buffer a TPosition addresses, their capacities and alignments, and
// InitBuffer on a cube position (capacity rule ids L2.L1_CAPACITY ... L2.FB_CAPACITY).
// Facts and sources: docs/emulator-cube.md.
#pragma once
#include "runtime.h"
#include "mix_core.h"

namespace cannsim {

// TPosition -> buffer (the reference's TPosition table for the separated AIC/AIV architecture).
inline int mem_of_position(int position) {
    using P = AscendC::TPosition;
    switch (static_cast<P>(position)) {
        case P::A1: case P::B1: case P::C1: case P::TSCM: return MEM_L1;
        case P::A2: return MEM_L0A;
        case P::B2: return MEM_L0B;
        case P::CO1: return MEM_L0C;
        case P::C2: return MEM_BT;
        case P::C2PIPE2GM: return MEM_FB;
        default: return MEM_UB;
    }
}

inline const char* mem_name(int mem) {
    static const char* n[] = {"UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return mem >= 0 && mem < MEM_COUNT ? n[mem] : "?";
}

inline const char* mem_capacity_id(int mem) {
    static const char* n[] = {"L2.UB_CAPACITY", "L2.L1_CAPACITY", "L2.L0A_CAPACITY", "L2.L0B_CAPACITY",
                              "L2.L0C_CAPACITY", "L2.BT_CAPACITY", "L2.FB_CAPACITY"};
    return n[mem];
}

// Start-address alignment of each buffer in bytes (UB 32, L1 32, L0A/L0B 512, L0C 64, BT/FB 64).
inline uint64_t mem_align(int mem) {
    static const uint64_t a[] = {32, 32, 512, 512, 64, 64, 64};
    return a[mem];
}

// A buffer of the other core type: UB on a cube core (AIC), L1/L0 on a vector core of a MIX kernel.
inline void check_core_type(int position, const SrcLoc& loc) {
    const mix::Identity& id = mix::self();
    const bool cube_pos = mem_of_position(position) != MEM_UB;
    if (cube_pos && id.core == mix::AIV && id.ratio >= 0)
        report("L2.CORE_TYPE", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer of a %s buffer on a vector core (AIV) of a MIX kernel: L1/L0 belong to the cube core; "
                   "put the cube part under ASCEND_IS_AIC", mem_name(mem_of_position(position))));
    if (!cube_pos && id.core == mix::AIC && position != static_cast<int>(AscendC::TPosition::GM))
        report("L2.CORE_TYPE", Severity::Error, "InitBuffer", loc.line(),
               "InitBuffer of a UB buffer on the cube core (AIC), which has no UB: put the vector part under ASCEND_IS_AIV");
}

// InitBuffer of `num` x `len` bytes on a cube position: slots in that buffer's region.
inline int alloc_cube_slots(int pipe_id, int position, bool is_queue, int num, uint64_t len, const SrcLoc& loc) {
    check_core_type(position, loc);
    auto& s = detail::state();
    const int mem = mem_of_position(position);
    const uint64_t al = mem_align(mem);
    const uint64_t rounded = (len + al - 1) / al * al;
    const uint64_t cap = cube_capacity(mem);
    const int first = static_cast<int>(s.slots.size());
    if (num <= 0 || len == 0)
        report(mem_capacity_id(mem), Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer with num=%d and len=%llu allocates nothing", num, (unsigned long long)len));
    if (s.buffers_used + num > s.chip.max_buffers)
        report("L2.BUFFER_COUNT", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer brings the kernel to %d buffers; at most %d buffers per kernel",
                   s.buffers_used + num, s.chip.max_buffers));
    if (is_queue && s.queue_buffers_per_pos[position] + num > s.chip.max_queue_buffers)
        report("L2.BUFFER_COUNT", Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer brings TPosition %d to %d queue buffers; at most %d per position on %s",
                   position, s.queue_buffers_per_pos[position] + num, s.chip.max_queue_buffers, s.chip.name));
    const uint64_t total = s.mem_used[mem] + rounded * static_cast<uint64_t>(num > 0 ? num : 0);
    if (total > cap)
        report(mem_capacity_id(mem), Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer of %d x %llu B (rounded to %llu B) brings %s use to %llu B; %s has %llu B of %s "
                   "per cube core",
                   num, (unsigned long long)rounded, (unsigned long long)al, mem_name(mem),
                   (unsigned long long)total, s.chip.name, (unsigned long long)cap, mem_name(mem)));
    if (total > s.mem_virtual[mem])
        report(mem_capacity_id(mem), Severity::Error, "InitBuffer", loc.line(),
               fmt("InitBuffer needs %llu B of %s, far beyond the %llu B of %s; cannot continue",
                   (unsigned long long)total, mem_name(mem), (unsigned long long)cap, s.chip.name),
               true);
    for (int i = 0; i < num; ++i) {
        detail::Slot sl;
        sl.offset = s.mem_base[mem] + s.mem_used[mem]; sl.bytes = rounded; sl.is_queue = is_queue;
        sl.pipe_id = pipe_id; sl.position = position; sl.mem = mem;
        s.slots.push_back(sl);
        s.mem_used[mem] += rounded;
        ++s.buffers_used;
        if (is_queue) ++s.queue_buffers_per_pos[position];
    }
    return first;
}

}  // namespace cannsim
