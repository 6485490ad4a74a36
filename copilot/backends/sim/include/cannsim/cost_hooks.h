// Feeds the per-core cost timeline (cost_timeline.h) from the emulated API calls.
//
// The API implementation reports, for each instruction, the UB buffer slots it reads and writes
// (note_operand / note_write, from the operand checks every API already runs) and, for copies,
// how the bytes are laid out in GM (note_rows); `on_record` — called from `record_cost`, which
// every API calls once — then places the instruction on its pipe. `configure` takes the chip's
// cost parameters and the per-API vector weights from the harness; `block_json` is the block's
// figures for the runner.
//
// In a block process, nothing the timeline's events carry comes from memory kernel code can
// write: the per-call operand record (`pending`) lives in the vault's sealed page (vault.h), which
// only these hooks open, and the weights, the alignment of a copy and the scalar issue cost are
// applied by the launcher (`resolve`, from its own copy of the cost line and GM buffer list)
// from what the event says: the API's name hash, the element size, the GM address.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include "cost_timeline.h"
#include "types.h"
#include "vault.h"

namespace cannsim::cost {

struct Pending {
    int reads[8];
    int nreads = 0;
    int writes[4];
    int nwrites = 0;
    Range read_ranges[8], write_ranges[4];   // the UB bytes each operand touches (from its bounds check)
    double rows = 0, row_bytes = 0;
    uint64_t gm = 0;             // the copy's first GM byte (kernel address), 0 = none noted
    int cube_kind = 0;           // cube.h: Mmad input size class / LoadData target (L0A 0, L0B 1)
};
// The UB range each recently checked slot's operand touched (check_ub_range -> note_range): an
// operand noted before or after its check, or again by a later step of the same library call,
// takes it. In the sealed page beside the record, kept across calls.
struct CheckedRanges {
    struct Entry { int slot = -1; Range bytes; };
    Entry entries[16];
    int next = 0;
    Range find(int slot) const {
        for (const Entry& e : entries) if (e.slot == slot && slot >= 0) return e.bytes;
        return {};
    }
};
struct SealedRecord {
    Pending pending;
    CheckedRanges checked;
};
static_assert(sizeof(SealedRecord) <= vault::kSealedBytes, "the sealed page holds the operand record");

// FNV-1a of an API name (and of its element-size suffix): the key a vector event carries.
inline uint64_t name_hash(const char* s, uint64_t h = 14695981039346656037ull) {
    for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
    return h;
}

// Per-API vector weights by name hash: `plain` for `<Api>`, `sized[i]` for `<Api>.b8/.b16/.b32/.b64`
// (0 = not given). Sorted by hash once configured.
struct WeightTable {
    struct Entry { uint64_t hash; double plain, sized[4]; };
    std::vector<Entry> entries;
    Entry* find(uint64_t h) {
        auto it = std::lower_bound(entries.begin(), entries.end(), h, [](const Entry& e, uint64_t k) { return e.hash < k; });
        return it != entries.end() && it->hash == h ? &*it : nullptr;
    }
    const Entry* find(uint64_t h) const { return const_cast<WeightTable*>(this)->find(h); }
    void set(const std::string& key, double w) {
        static const char* const suffix[4] = {".b8", ".b16", ".b32", ".b64"};
        int size = -1;
        std::string api = key;
        for (int i = 0; i < 4; ++i) {
            const size_t n = std::strlen(suffix[i]);
            if (api.size() > n && api.compare(api.size() - n, n, suffix[i]) == 0) { size = i; api.resize(api.size() - n); break; }
        }
        const uint64_t h = name_hash(api.c_str());
        Entry* e = nullptr;
        for (auto& x : entries) if (x.hash == h) e = &x;
        if (!e) { entries.push_back({h, 0.0, {0, 0, 0, 0}}); e = &entries.back(); }
        (size < 0 ? e->plain : e->sized[size]) = w;
    }
    void sort() { std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.hash < b.hash; }); }
    // The weight of the API hashing to `h` on elements of size class `size` (unlisted: 1).
    double weight(uint64_t h, int size) const {
        const Entry* e = find(h);
        if (!e) return 1.0;
        if (e->sized[size] > 0) return e->sized[size];
        return e->plain > 0 ? e->plain : 1.0;
    }
};

struct Hooks {
    Params params;
    Timeline timeline;
    bool enabled = false;        // off until the harness configures a cost model: a run without a
                                 // `cost` line is functional only (no timing work at all)
    // Vector cycles per 256-byte repeat, relative to Add, by API name: the `weight.<Api>=<w>`
    // entries of the cost line (copilot.costmodel.API_WEIGHTS is the one table); unlisted APIs
    // weigh 1. A weight may be given per element size as `<Api>.b16` / `.b32` / `.b8` / `.b64` (one
    // repeat of 256 B holds twice as many 16-bit elements); that entry wins over the plain `<Api>`
    // one. In a block, only the launcher's copy weighs (resolve); the block's is for runs without one.
    WeightTable weights;
    // The block's vector work per (API, element bytes): instructions and 256-byte repeats, reported
    // in the block's figures so a calibration can refit the weights without re-running kernels.
    struct ApiCount { const char* api; int elem_bytes; double instructions, repeats; };
    std::vector<ApiCount> vector_counts;
    // Where end_block leaves the block's figures: the launcher's per-block record (shared with the
    // launcher process, see harness.cpp); null = the diagnostics stream (standalone tests).
    char* sink = nullptr;
    size_t sink_cap = 0;
};

inline Hooks& hooks() {
    static Hooks h;
    return h;
}

// The operand record of the instruction being emulated: in the vault's sealed page (readable; only
// the hooks below write it, inside a vault::Open).
inline SealedRecord& sealed_record() { return *static_cast<SealedRecord*>(vault::sealed_area()); }
inline Pending& pending() { return sealed_record().pending; }

// Whether API calls feed the timeline: a cost model is configured, or this is a block process
// whose calls are forwarded (kEventFd open); clearing `enabled` from kernel code stops nothing.
inline bool active() { return hooks().enabled || Timeline::events_open(); }

inline int size_index(int elem_bytes) { return elem_bytes <= 1 ? 0 : elem_bytes == 2 ? 1 : elem_bytes == 4 ? 2 : 3; }

// The weight of API `api` on elements of `elem_bytes` (see Hooks::weights).
inline double api_weight(const char* api, int elem_bytes) {
    return hooks().weights.weight(name_hash(api), size_index(elem_bytes));
}

inline void count_vector(const char* api, int elem_bytes, double bytes) {
    Hooks& h = hooks();
    const double repeats = std::max(1.0, std::ceil(bytes / h.params.vector_bytes_per_cycle));
    for (auto& c : h.vector_counts)
        if (c.elem_bytes == elem_bytes && (c.api == api || std::strcmp(c.api, api) == 0)) { c.instructions += 1; c.repeats += repeats; return; }
    h.vector_counts.push_back({api, elem_bytes, 1.0, repeats});
}

// Bytes per element of a dtype bit (runtime.h `DType`): 1 << 4 half, 1 << 8 float, ...
inline double element_bytes(uint32_t dtype_bit) {
    if (dtype_bit & ((1u << 0) | (1u << 1) | (1u << 12))) return 1.0;                 // int8, uint8, bool
    if (dtype_bit & ((1u << 2) | (1u << 3) | (1u << 4) | (1u << 5))) return 2.0;      // 16-bit
    if (dtype_bit & ((1u << 9) | (1u << 10) | (1u << 11))) return 8.0;                // 64-bit
    return 4.0;
}

// "key=value key=value ..." as written by copilot.costmodel.CostParams.cxx_line (minus "cost "),
// the per-API vector weights as `weight.<Api>=<w>`.
inline void configure(const char* line) {
    Params p;
    WeightTable weights;
    std::string s(line);
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find(' ', i);
        if (j == std::string::npos) j = s.size();
        const std::string kv = s.substr(i, j - i);
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) {
            const std::string k = kv.substr(0, eq);
            const double v = std::atof(kv.c_str() + eq + 1);
            if (k == "clock_ghz") p.clock_ghz = v;
            else if (k == "hbm_bytes_per_cycle") p.hbm_bytes_per_cycle = v;
            else if (k == "core_dma_bytes_per_cycle") p.core_dma_bytes_per_cycle = v;
            else if (k == "dma_latency_cycles") p.dma_latency_cycles = v;
            else if (k == "small_burst_bytes") p.small_burst_bytes = v;
            else if (k == "gm_unaligned_efficiency") p.gm_unaligned_efficiency = v;
            else if (k == "vector_bytes_per_cycle") p.vector_bytes_per_cycle = v;
            else if (k == "vector_issue_cycles") p.vector_issue_cycles = v;
            else if (k == "scalar_issue_cycles") p.scalar_issue_cycles = v;
            else if (k == "scalar_access_cycles") p.scalar_access_cycles = v;
            else if (k == "active_cores") p.active_cores = static_cast<int>(v);
            else if (k == "cube_macs_b16") p.cube_macs_per_cycle[0] = v;
            else if (k == "cube_macs_b8") p.cube_macs_per_cycle[1] = v;
            else if (k == "cube_macs_b32") p.cube_macs_per_cycle[2] = v;
            else if (k == "cube_issue_cycles") p.cube_issue_cycles = v;
            else if (k == "l1_to_l0a_bytes_per_cycle") p.l1_to_l0a_bytes_per_cycle = v;
            else if (k == "l1_to_l0b_bytes_per_cycle") p.l1_to_l0b_bytes_per_cycle = v;
            else if (k == "mte1_issue_cycles") p.mte1_issue_cycles = v;
            else if (k == "fixp_bytes_per_cycle") p.fixp_bytes_per_cycle = v;
            else if (k.compare(0, 7, "weight.") == 0) weights.set(k.substr(7), v);
        }
        i = j + 1;
    }
    weights.sort();
    hooks().params = p;
    hooks().weights = std::move(weights);
    hooks().enabled = true;
}

inline void begin_block(int64_t block_num) {
    Hooks& h = hooks();
    Params p = h.params;
    if (block_num > 0 && block_num < p.active_cores) p.active_cores = static_cast<int>(block_num);
    h.timeline.reset(p);
    {
        vault::Open open(false);
        sealed_record() = SealedRecord{};
    }
    h.vector_counts.clear();
}

inline void note_operand(int slot, bool is_dst) {
    if (!active()) return;
    vault::Open open(false);
    Pending& q = pending();
    const Range r = sealed_record().checked.find(slot);
    if (is_dst) { if (q.nwrites < 4) { q.write_ranges[q.nwrites] = r; q.writes[q.nwrites++] = slot; } }
    else if (q.nreads < 8) { q.read_ranges[q.nreads] = r; q.reads[q.nreads++] = slot; }
}
inline void note_write(int slot) {
    if (!active()) return;
    vault::Open open(false);
    Pending& q = pending();
    for (int i = 0; i < q.nwrites; ++i)
        if (q.writes[i] == slot) return;
    if (q.nwrites < 4) { q.write_ranges[q.nwrites] = sealed_record().checked.find(slot); q.writes[q.nwrites++] = slot; }
}
// The UB bytes [first, last) an operand of slot `slot` touches (tensor.h check_ub_range): joined to
// this call's operands of that slot, and kept for the ones noted later.
inline void note_range(int slot, uint64_t first, uint64_t last) {
    if (!active() || slot < 0 || last <= first || last > 0xffffffffull) return;
    vault::Open open(false);
    SealedRecord& rec = sealed_record();
    const Range r{static_cast<uint32_t>(first), static_cast<uint32_t>(last)};
    auto join = [&](Range& x) { x = x.hi > x.lo ? Range{std::min(x.lo, r.lo), std::max(x.hi, r.hi)} : r; };
    Pending& q = rec.pending;
    for (int i = 0; i < q.nreads; ++i) if (q.reads[i] == slot) join(q.read_ranges[i]);
    for (int i = 0; i < q.nwrites; ++i) if (q.writes[i] == slot) join(q.write_ranges[i]);
    CheckedRanges& c = rec.checked;
    for (auto& e : c.entries) if (e.slot == slot) { e.bytes = r; return; }
    c.entries[c.next] = {slot, r};
    c.next = (c.next + 1) % 16;
}
// GM buffers as the device allocator would place them: each starts 512-byte aligned, so a copy's
// alignment is its offset inside its buffer (the emulator's own buffers sit wherever mmap put them).
// A block's copies are judged by the launcher's list (resolve), registered before the blocks fork.
struct GmRegion { uintptr_t base; uint64_t bytes; };
inline std::vector<GmRegion>& gm_regions() {
    static std::vector<GmRegion> r;
    return r;
}
inline bool gm_aligned(uint64_t gm) {
    uintptr_t base = 0;
    for (const GmRegion& r : gm_regions())
        if (gm >= r.base && gm < r.base + r.bytes) { base = r.base; break; }
    return ((gm - base) % 512) == 0;
}

// A copy moves `rows` bursts of `row_bytes`; `gm` is the GM address of its first byte.
inline void note_rows(double rows, double row_bytes, const void* gm) {
    if (!active()) return;
    vault::Open open(false);
    Pending& q = pending();
    q.rows = rows;
    q.row_bytes = row_bytes;
    q.gm = reinterpret_cast<uintptr_t>(gm);
}

// The next cube instruction's class (cube.h): Mmad input size class or LoadData target.
inline void note_cube(int kind) {
    if (!active()) return;
    vault::Open open(false);
    pending().cube_kind = kind;
}

// The timeline's pipe of an AscendC pipe_t.
inline int timeline_pipe(int pipe) {
    switch (pipe) {
        case PIPE_S: return S; case PIPE_V: return V; case PIPE_MTE2: return MTE2; case PIPE_MTE3: return MTE3;
        case PIPE_M: return M; case PIPE_MTE1: return MTE1; case PIPE_FIX: return FIX; default: return MTE3;
    }
}

// A multi-row copy: `rows` bursts of `row_bytes` (the GM address was noted by the bounds check).
inline void set_row_shape(double rows, double row_bytes) {
    if (!active()) return;
    vault::Open open(false);
    Pending& q = pending();
    q.rows = rows;
    q.row_bytes = row_bytes;
}

// A scalar read or write of GM (GlobalTensor GetValue/SetValue): charged on the scalar unit and
// counted as GM traffic, so work done element by element on GM is not free.
inline void gm_scalar_access(uint64_t bytes, bool write) {
    if (active()) hooks().timeline.gm_scalar_access(static_cast<double>(bytes), write);
}

inline void scalar_access(int slot, bool write, uint64_t first = 0, uint64_t last = 0) {
    if (!active()) return;
    const Range r = last > first && last <= 0xffffffffull ? Range{static_cast<uint32_t>(first), static_cast<uint32_t>(last)} : Range{};
    hooks().timeline.scalar_access(slot, write, r);
}

// Called once per emulated instruction (from record_cost).
inline void on_record(int pipe, const char* api, uint32_t info, uint64_t elements, uint64_t bytes) {
    Hooks& h = hooks();
    Pending q = pending();
    {
        vault::Open open(false);
        pending() = Pending{};
    }
    if (!active()) return;
    Timeline& t = h.timeline;
    if (std::strcmp(api, "SetFlag") == 0) { t.set_flag(timeline_pipe(pipe), static_cast<int>(info), static_cast<int>(elements)); return; }
    if (std::strcmp(api, "WaitFlag") == 0) { t.wait_flag(timeline_pipe(pipe), static_cast<int>(info), static_cast<int>(elements)); return; }
    if (std::strcmp(api, "PipeBarrier") == 0) { if (pipe == PIPE_ALL) t.barrier_all(); return; }
    const Timeline::Slots reads{q.reads, static_cast<size_t>(q.nreads), q.read_ranges};
    const Timeline::Slots writes{q.writes, static_cast<size_t>(q.nwrites), q.write_ranges};
    if (pipe == PIPE_MTE2 || pipe == PIPE_MTE3 || pipe == PIPE_FIX) {
        const double rows = q.rows > 0 ? q.rows : 1.0;
        const double row_bytes = q.row_bytes > 0 ? q.row_bytes : static_cast<double>(bytes);
        const bool local = !t.forwarding();
        t.dma_at(timeline_pipe(pipe), rows, row_bytes, q.gm, local && (q.gm == 0 || gm_aligned(q.gm)), reads, writes);
        return;
    }
    if (pipe == PIPE_M || pipe == PIPE_MTE1) {   // Mmad: elements = MACs; LoadData: bytes
        t.cube(timeline_pipe(pipe), static_cast<double>(pipe == PIPE_M ? elements : bytes), q.cube_kind, reads, writes);
        return;
    }
    if (pipe == PIPE_V) {
        if (std::strcmp(api, "DataCopy") == 0) {          // UB -> UB copy
            count_vector(api, 1, static_cast<double>(bytes));
            t.vector(static_cast<double>(bytes), 1.0, reads, writes);
            return;
        }
        const double eb = element_bytes(info);
        const double vbytes = static_cast<double>(elements) * eb;
        count_vector(api, static_cast<int>(eb), vbytes);
        const int size = static_cast<int>(eb);
        const uint64_t key = name_hash(api);
        t.vector_api(vbytes, key, size, t.forwarding() ? 1.0 : h.weights.weight(key, size_index(size)), reads, writes);
        return;
    }
    t.scalar_issue();
}

// A block's event as the launcher replays it (in the launcher: its own weights, GM buffers and
// parameters): the weight of a vector API's instruction, the alignment of a copy, the cycles of a
// scalar issue. False for a field no honest block sends.
inline bool resolve(Event& e) {
    Hooks& h = hooks();
    if (e.op == EV_VECTOR && e.key != 0) {
        const int size = e.b == 1.0 ? 0 : e.b == 2.0 ? 1 : e.b == 4.0 ? 2 : e.b == 8.0 ? 3 : -1;
        if (size < 0) return false;
        e.b = h.weights.weight(e.key, size);
        e.key = 0;
    } else if (e.op == EV_DMA && e.key != 0) {
        e.c = gm_aligned(e.key) ? 1.0 : 0.0;
        e.key = 0;
    } else if (e.op == EV_SCALAR && e.key == 1) {
        e.a = h.params.scalar_issue_cycles;
        e.key = 0;
    } else if (e.key != 0) {
        return false;
    }
    return true;
}

// The block's figures as one JSON line; `vec` lists the vector work per API and element size as
// "<Api>.b<bits>": [instructions, repeats], the largest first, within the launcher's record size.
inline std::string block_json(long long block) {
    char buf[512];
    hooks().timeline.to_json(buf, sizeof(buf), block);
    std::string out(buf);
    std::vector<Hooks::ApiCount> counts = hooks().vector_counts;
    std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.repeats > b.repeats; });
    std::string vec;
    for (const auto& c : counts) {
        char item[160];
        std::snprintf(item, sizeof item, "%s\"%s.b%d\":[%.0f,%.0f]", vec.empty() ? "" : ",", c.api,
                      c.elem_bytes * 8, c.instructions, c.repeats);
        if (out.size() + vec.size() + std::strlen(item) > 960) break;   // the record holds 1016 bytes
        vec += item;
    }
    out.insert(out.size() - 1, ",\"vec\":{" + vec + "}");
    return out + "\n";
}

}  // namespace cannsim::cost
