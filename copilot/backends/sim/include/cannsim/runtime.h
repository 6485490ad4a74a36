// Per-block runtime of the emulator: chip profile, UB arena, buffer slots, sync state,
// diagnostics (JSON lines) and cost counters. Interface: docs/emulator-contract.md.
#pragma once
#include <cstdint>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>
#if __cplusplus >= 202002L
#include <source_location>
#endif
#include "types.h"
#include "cost_hooks.h"
#include "gm_alias.h"
#include "multicore.h"

namespace cannsim {

#if __cplusplus >= 202002L
using SrcLoc = std::source_location;
#define CANNSIM_LOC ::cannsim::SrcLoc loc = ::cannsim::SrcLoc::current()
#else
struct SrcLoc {
    uint32_t line_ = 0;
    static constexpr SrcLoc current(uint32_t l = __builtin_LINE()) { SrcLoc s; s.line_ = l; return s; }
    constexpr uint32_t line() const { return line_; }
};
#define CANNSIM_LOC ::cannsim::SrcLoc loc = ::cannsim::SrcLoc::current()
#endif

struct ChipConfig {
    char     name[32];
    int      arch;               // 2201 (A2/A3), 3510 (950), 2002 (310P)
    int      vector_cores;
    uint64_t ub_bytes;           // usable UB bytes per vector core
    int      max_buffers;        // 64
    int      max_queue_buffers;  // per TPosition
    // AIC buffers (cube.h); 0 = the arch's default (cube_mem.h)
    uint64_t l1_bytes = 0, l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0, bt_bytes = 0, fb_bytes = 0;
};

// The physical buffer a TPosition lives in: UB on the vector core, L1/L0A/L0B/L0C/BT/FB on the cube core.
enum Mem : int { MEM_UB = 0, MEM_L1, MEM_L0A, MEM_L0B, MEM_L0C, MEM_BT, MEM_FB, MEM_COUNT };

enum class Severity { Warning, Error };

// Element type ids: one bit each so the dtype tables can be bit masks.
enum DType : uint32_t {
    DT_I8 = 1u << 0, DT_U8 = 1u << 1, DT_I16 = 1u << 2, DT_U16 = 1u << 3, DT_F16 = 1u << 4,
    DT_BF16 = 1u << 5, DT_I32 = 1u << 6, DT_U32 = 1u << 7, DT_F32 = 1u << 8, DT_I64 = 1u << 9,
    DT_U64 = 1u << 10, DT_F64 = 1u << 11, DT_BOOL = 1u << 12, DT_OTHER = 1u << 13
};

template <typename T> constexpr DType dtype_of() {
    if constexpr (std::is_same_v<T, half>) return DT_F16;
    else if constexpr (std::is_same_v<T, bfloat16_t>) return DT_BF16;
    else if constexpr (std::is_same_v<T, float>) return DT_F32;
    else if constexpr (std::is_same_v<T, double>) return DT_F64;
    else if constexpr (std::is_same_v<T, bool>) return DT_BOOL;
    else if constexpr (std::is_same_v<T, int8_t>) return DT_I8;
    else if constexpr (std::is_same_v<T, uint8_t>) return DT_U8;
    else if constexpr (std::is_same_v<T, int16_t>) return DT_I16;
    else if constexpr (std::is_same_v<T, uint16_t>) return DT_U16;
    else if constexpr (std::is_same_v<T, int32_t>) return DT_I32;
    else if constexpr (std::is_same_v<T, uint32_t>) return DT_U32;
    else if constexpr (std::is_same_v<T, int64_t>) return DT_I64;
    else if constexpr (std::is_same_v<T, uint64_t>) return DT_U64;
    else return DT_OTHER;
}

inline const char* dtype_name(uint32_t d) {
    switch (d) {
        case DT_I8: return "int8_t"; case DT_U8: return "uint8_t"; case DT_I16: return "int16_t";
        case DT_U16: return "uint16_t"; case DT_F16: return "half"; case DT_BF16: return "bfloat16_t";
        case DT_I32: return "int32_t"; case DT_U32: return "uint32_t"; case DT_F32: return "float";
        case DT_I64: return "int64_t"; case DT_U64: return "uint64_t"; case DT_F64: return "double";
        case DT_BOOL: return "bool"; default: return "other";
    }
}

inline const char* pipe_name(int p) {
    static const char* names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "ALL", "MTE4", "MTE5", "V2", "FIX"};
    return (p >= 0 && p < static_cast<int>(sizeof(names) / sizeof(names[0]))) ? names[p] : "?";
}

namespace detail {

enum class SlotState : uint8_t { Free, Allocated, Enqueued, Dequeued };

// One InitBuffer block in UB: a queue buffer or a TBuf.
struct Slot {
    uint64_t offset = 0, bytes = 0;
    bool is_queue = false;
    bool live = true;            // false once its TPipe is reset or destroyed
    SlotState state = SlotState::Free;
    uint32_t gen = 1;            // bumped on every FreeTensor: stale tensors are detected
    uint32_t pending_pipes = 0;  // bit per pipe that wrote it with no sync since
    uint32_t alloc_line = 0;
    int pipe_id = 0;
    int position = 0;
    int mem = MEM_UB;            // the buffer it lives in (cube_mem.h)
};

struct FlagKey {
    int event, id;
    bool operator<(const FlagKey& o) const { return event != o.event ? event < o.event : id < o.id; }
};

struct CostKey {
    int pipe; std::string api; uint32_t dtype;
    bool operator<(const CostKey& o) const {
        if (pipe != o.pipe) return pipe < o.pipe;
        if (api != o.api) return api < o.api;
        return dtype < o.dtype;
    }
};
struct CostValue { uint64_t calls = 0, elements = 0, bytes = 0; };

struct GmRegion { const uint8_t* base; uint64_t bytes; std::string name; };

// The UB arena: fresh anonymous pages, zero without being written, so a block faults in only the
// pages it touches (the chip's UB in one call, see begin_block) instead of zeroing the whole arena.
// Beside it, `alias`: a PROT_NONE reservation of the same size, where kernel code sees UB
// (LocalTensor::GetPhyAddr), so a scalar access through a raw `__ubuf__` pointer traps and the
// harness charges it as a scalar UB access before letting it through on a copy of the page
// (harness.cpp, ub_fault). A reservation costs one call; a second view of shared pages would cost
// a shared-memory arena per block. The arena itself sits at a random address known only to the
// vault's hidden pages (gm_alias.h ub_real), so it is neither beside the view nor in memory a
// kernel can search.
struct UbArena {
    uint8_t* alias = nullptr;
    size_t bytes = 0;
    UbArena() = default;
    UbArena(const UbArena&) = delete;
    UbArena& operator=(const UbArena&) = delete;
    ~UbArena() { release(); }
    void release() {
        if (alias) munmap(alias, bytes);
        if (uint8_t* data = ub_real()) munmap(data, bytes);
        set_ub_real(nullptr);
        alias = nullptr;
    }
    void reset(size_t n) {
        release();
        n = (n + 4095) / 4096 * 4096;
        void* m = vault::random_reservation(n);
        if (m) m = mmap(m, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        else m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {          // as operator new: the launcher's handler reports RUN.MEMORY
            if (std::new_handler h = std::get_new_handler()) h();
            throw std::bad_alloc();
        }
        vault::key_data(m, n);   // under the data key in a candidate's process (vault.h)
        set_ub_real(static_cast<uint8_t*>(m));
        m = nullptr;
        bytes = n;
        void* a = mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a != MAP_FAILED) alias = static_cast<uint8_t*>(a);
    }
};

struct State {
    ChipConfig chip{};
    int diag_fd = 2;
    int64_t block_idx = 0, block_num = 1;
    bool in_block = false;
    UbArena ub_storage;              // the arena's host address: detail::ub_real()
    uint8_t* ub_alias = nullptr;     // UB as kernel code sees it (UbArena::alias), or null
    uint64_t ub_virtual = 0;         // arena size we can actually back (> chip UB, for overflow runs)
    uint64_t ub_used = 0;
    int buffers_used = 0;
    int queue_buffers_per_pos[32] = {};
    int next_pipe_id = 1;
    std::vector<Slot> slots;
    std::set<std::pair<std::string, uint32_t>> reported;
    int errors = 0, warnings = 0;
    std::map<FlagKey, uint32_t> flags_set;   // -> line of SetFlag
    uint8_t event_ids_used[64] = {};         // bit per id, per HardEvent
    // vector mask register state
    bool mask_counter_mode = false;
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;
    float deq_scale = 1.0f;
    int atomic_op = 0;               // atomic.h: 0 none, 1 add, 2 max, 3 min, for DataCopy to GM
    uint32_t atomic_dtype = 0;
    std::map<CostKey, CostValue> costs;
    std::vector<GmRegion> gm_regions;
    // Cube buffers: where each one's region starts in the arena, how much of it InitBuffer took.
    uint64_t mem_base[MEM_COUNT] = {}, mem_used[MEM_COUNT] = {}, mem_virtual[MEM_COUNT] = {};

    State() {
        std::snprintf(chip.name, sizeof(chip.name), "%s", "910B2");
        chip.arch = 2201; chip.vector_cores = 48; chip.ub_bytes = 192 * 1024 - 256 - 8 * 1024;
        chip.max_buffers = 64; chip.max_queue_buffers = 8;
    }
};

inline State& state() { static State s; return s; }

inline void json_escape(std::string& out, const std::string& s) {
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); out += b; }
                else out += c;
        }
    }
}

inline void write_all(int fd, const std::string& s) {
    const char* p = s.data(); size_t n = s.size();
    while (n > 0) { ssize_t w = ::write(fd, p, n); if (w <= 0) return; p += w; n -= static_cast<size_t>(w); }
}

}  // namespace detail

// Report one finding. Fatal findings end the block with exit code 86 (see the contract).
// A library API that runs other APIs on the caller's behalf (the Matmul API, cannsim/matmul.h) reports
// their findings at the caller's line: non-zero while it does.
inline uint32_t& line_override() { static uint32_t l = 0; return l; }

inline void report(const char* id, Severity sev, const char* api, uint32_t line, const std::string& message,
                   bool fatal = false) {
    auto& s = detail::state();
    if (line_override()) line = line_override();
    const bool fresh = s.reported.insert({std::string(id), line}).second;
    if (fresh) {
        if (sev == Severity::Error) ++s.errors; else ++s.warnings;
        std::string j = "{\"id\":\"";
        detail::json_escape(j, id);
        j += "\",\"severity\":\""; j += (sev == Severity::Error ? "error" : "warning");
        j += "\",\"api\":\""; detail::json_escape(j, api);
        j += "\",\"line\":" + std::to_string(line);
        j += ",\"block\":" + std::to_string(s.block_idx);
        if (fatal) j += ",\"fatal\":true";
        // at most 600 bytes of message (what the runner keeps), so the line stays one pipe packet
        j += ",\"message\":\""; detail::json_escape(j, message.substr(0, 600)); j += "\"}\n";
        detail::write_all(s.diag_fd, j);
    }
    if (fatal) {
        std::fflush(stdout);
        std::fflush(stderr);
        std::_Exit(86);
    }
}

inline std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt(const char* f, ...) {
    char buf[1024];
    va_list ap; va_start(ap, f); std::vsnprintf(buf, sizeof buf, f, ap); va_end(ap);
    return buf;
}

// Count-only mode: every API runs its rule checks, queue/sync bookkeeping and cost accounting but
// skips its per-element data loops (copies and vector arithmetic), so neither GM nor UB data is
// touched. Scalar reads still work (GetValue returns whatever is there, zeros unless SetValue wrote
// it): a kernel whose control flow depends on data values is timed as if its data were zeros.
inline bool& count_only_flag() { static bool on = false; return on; }
inline bool count_only() { return count_only_flag(); }
inline void set_count_only(bool on) { count_only_flag() = on; }

inline const ChipConfig& chip() { return detail::state().chip; }
inline int arch() { return detail::state().chip.arch; }

inline void configure_chip(const ChipConfig& c) { detail::state().chip = c; }
inline void set_diag_fd(int fd) { detail::state().diag_fd = fd; }

// Optional: the harness may declare the GM buffers so that raw-pointer GlobalTensors without a
// declared size are still bounds checked.
inline void register_gm_buffer(const void* base, uint64_t bytes, const char* name) {
    detail::state().gm_regions.push_back({static_cast<const uint8_t*>(base), bytes, name ? name : ""});
    cost::gm_regions().push_back({reinterpret_cast<uintptr_t>(base), bytes});
}

// Capacity of a cube buffer: the chip profile's figure, else the A2 default (docs/emulator-cube.md).
inline uint64_t cube_capacity(int mem) {
    const ChipConfig& c = detail::state().chip;
    const bool a3510 = c.arch == 3510;
    switch (mem) {
        case MEM_L1: return c.l1_bytes ? c.l1_bytes : 524032;
        case MEM_L0A: return c.l0a_bytes ? c.l0a_bytes : 65536;
        case MEM_L0B: return c.l0b_bytes ? c.l0b_bytes : 65536;
        case MEM_L0C: return c.l0c_bytes ? c.l0c_bytes : (a3510 ? 262144 : 131072);
        case MEM_BT: return c.bt_bytes ? c.bt_bytes : (a3510 ? 4096 : 1024);
        case MEM_FB: return c.fb_bytes ? c.fb_bytes : (a3510 ? 4096 : 2048);
        default: return c.ub_bytes;
    }
}

inline void begin_block(int64_t idx, int64_t num) {
    auto& s = detail::state();
    const ChipConfig c = s.chip;
    const int fd = s.diag_fd;
    std::vector<detail::GmRegion> gm = std::move(s.gm_regions);
    s.~State();
    new (&s) detail::State();
    s.chip = c; s.diag_fd = fd; s.gm_regions = std::move(gm);
    s.block_idx = idx; s.block_num = num; s.in_block = true;
    cost::begin_block(num);
    // Back four times the chip's UB so an over-budget kernel can still run after the report; the
    // cube buffers (cube_mem.h) follow in the same arena, each backed twice its capacity.
    s.ub_virtual = c.ub_bytes * 4 + 64 * 1024;
    uint64_t arena = s.ub_virtual;
    for (int m = MEM_L1; m < MEM_COUNT; ++m) {
        s.mem_base[m] = arena;
        s.mem_virtual[m] = cube_capacity(m) * 2 + 4096;
        arena += (s.mem_virtual[m] + 4095) / 4096 * 4096;
    }
    s.mem_virtual[MEM_UB] = s.ub_virtual;
    s.ub_storage.reset(arena);                                      // page aligned
    s.ub_alias = s.ub_storage.alias;
#ifdef MADV_POPULATE_WRITE
    (void)madvise(detail::ub_real(), c.ub_bytes, MADV_POPULATE_WRITE);   // older kernels: faults as usual
#endif
}


struct EventPipes { int src, dst; const char* name; };

inline const EventPipes& event_pipes(AscendC::HardEvent e) {
    static const EventPipes t[] = {
        {PIPE_MTE2, PIPE_MTE1, "MTE2_MTE1"}, {PIPE_MTE1, PIPE_MTE2, "MTE1_MTE2"}, {PIPE_MTE1, PIPE_M, "MTE1_M"},
        {PIPE_M, PIPE_MTE1, "M_MTE1"}, {PIPE_MTE2, PIPE_V, "MTE2_V"}, {PIPE_V, PIPE_MTE2, "V_MTE2"},
        {PIPE_MTE3, PIPE_V, "MTE3_V"}, {PIPE_V, PIPE_MTE3, "V_MTE3"}, {PIPE_M, PIPE_V, "M_V"},
        {PIPE_V, PIPE_M, "V_M"}, {PIPE_V, PIPE_V, "V_V"}, {PIPE_MTE3, PIPE_MTE1, "MTE3_MTE1"},
        {PIPE_MTE1, PIPE_MTE3, "MTE1_MTE3"}, {PIPE_MTE1, PIPE_V, "MTE1_V"}, {PIPE_MTE2, PIPE_M, "MTE2_M"},
        {PIPE_M, PIPE_MTE2, "M_MTE2"}, {PIPE_V, PIPE_MTE1, "V_MTE1"}, {PIPE_M, PIPE_FIX, "M_FIX"},
        {PIPE_FIX, PIPE_M, "FIX_M"}, {PIPE_MTE3, PIPE_MTE2, "MTE3_MTE2"}, {PIPE_MTE2, PIPE_MTE3, "MTE2_MTE3"},
        {PIPE_S, PIPE_V, "S_V"}, {PIPE_V, PIPE_S, "V_S"}, {PIPE_S, PIPE_MTE2, "S_MTE2"},
        {PIPE_MTE2, PIPE_S, "MTE2_S"}, {PIPE_S, PIPE_MTE3, "S_MTE3"}, {PIPE_MTE3, PIPE_S, "MTE3_S"},
        {PIPE_MTE2, PIPE_FIX, "MTE2_FIX"}, {PIPE_FIX, PIPE_MTE2, "FIX_MTE2"}, {PIPE_FIX, PIPE_S, "FIX_S"},
        {PIPE_M, PIPE_S, "M_S"}, {PIPE_FIX, PIPE_MTE3, "FIX_MTE3"}, {PIPE_MTE1, PIPE_FIX, "MTE1_FIX"},
        {PIPE_FIX, PIPE_MTE1, "FIX_MTE1"}, {PIPE_FIX, PIPE_FIX, "FIX_FIX"}, {PIPE_ALL, PIPE_ALL, "MAX"}};
    return t[static_cast<int>(e)];
}

inline void end_block() {
    auto& s = detail::state();
    for (auto& sl : s.slots) {
        if (!sl.live || !sl.is_queue || sl.state == detail::SlotState::Free) continue;
        report("L2.QUEUE_PROTOCOL", Severity::Error, "AllocTensor", sl.alloc_line,
               fmt("queue buffer taken by AllocTensor at line %u is still held at kernel end", sl.alloc_line));
    }
    for (auto& [k, line] : s.flags_set)
        report("L2.SYNC_PAIRING", Severity::Error, "SetFlag", line,
               fmt("SetFlag<HardEvent::%s>(%d) is never consumed by a WaitFlag before kernel end; the event stays "
                   "set and can break the next kernel",
                   event_pipes(static_cast<AscendC::HardEvent>(k.event)).name, k.id));
    std::fflush(stdout);
    if (cost::hooks().enabled) {
        const std::string line = cost::block_json(s.block_idx);
        if (cost::hooks().sink && line.size() < cost::hooks().sink_cap)   // without its newline
            std::memcpy(cost::hooks().sink, line.data(), line.size() - 1);
        else if (!cost::hooks().sink)
            detail::write_all(s.diag_fd, line);
    }
    s.in_block = false;
}

inline int error_count() { return detail::state().errors; }
inline int warning_count() { return detail::state().warnings; }

// Cost accounting hook: every API call adds (pipe, api, dtype) -> calls, elements, bytes.
inline void record_cost(int pipe, const char* api, uint32_t dtype, uint64_t elements, uint64_t bytes) {
    auto& v = detail::state().costs[detail::CostKey{pipe, api, dtype}];
    ++v.calls; v.elements += elements; v.bytes += bytes;
    cost::on_record(pipe, api, dtype, elements, bytes);
    vault::close_data();   // the API's last step: kernel code runs without the real pages (vault.h)
}

inline std::string cost_counters_json() {
    auto& s = detail::state();
    std::string j = "{\"block\":" + std::to_string(s.block_idx) + ",\"counters\":[";
    bool first = true;
    for (auto& [k, v] : s.costs) {
        if (!first) j += ",";
        first = false;
        j += "{\"pipe\":\""; j += pipe_name(k.pipe); j += "\",\"api\":\""; detail::json_escape(j, k.api);
        j += "\",\"dtype\":\""; j += dtype_name(k.dtype);
        j += "\",\"calls\":" + std::to_string(v.calls) + ",\"elements\":" + std::to_string(v.elements) +
             ",\"bytes\":" + std::to_string(v.bytes) + "}";
    }
    return j + "]}";
}

inline void dump_cost_counters(int fd) { detail::write_all(fd, cost_counters_json() + "\n"); }

}  // namespace cannsim
