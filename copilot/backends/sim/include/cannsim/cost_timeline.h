// Per-core event model of the AscendC pipes, for the sim backend's time ESTIMATE.
//
// Every emulated instruction lands on its pipe (S, V, MTE2, MTE3; M, MTE1, FIX on the cube core). It starts when
//   - the scalar unit has issued it (issue is in program order, each issue costs scalar cycles),
//   - its pipe is free (pipes are in order),
//   - the UB buffers it reads hold their data (read after write), and
//   - the UB buffers it writes are no longer being read or written by earlier instructions
//     (write after read / write after write): this is what AllocTensor waiting for FreeTensor
//     costs on the chip, and why double buffering overlaps copies with compute. A pipe keeps its
//     own instructions in order, so a write after a write by the same pipe (several copies into
//     one buffer) waits only for that pipe, not for the earlier copy's data to land.
// Flags and barriers add the waits the kernel asked for. MTE2 and MTE3 are separate engines, each
// moving at most `core_dma_bytes_per_cycle`; together they share the core's slice of HBM bandwidth
// (chip bandwidth divided among the cores that stream at once). That sharing is modelled as a
// fluid bound: a core cannot finish before its total GM traffic has passed through its slice.
// Times are in cycles of the vector core clock; the runner converts to microseconds and adds the
// launch overhead. Everything here is a model: its outputs are estimates and labelled so.
//
// Out of the kernel's reach: in a block process the harness puts a pipe at descriptor kEventFd
// (`forward_to`), and every call becomes one fixed-size Event written there before the API call
// returns to kernel code. The launcher, a separate process, replays the events (`apply`, which
// checks every field) into a timeline of its own and reports that one's figures: what kernel code
// could change in its own memory is only the events it has not made yet. Whether a call is
// forwarded does not depend on memory kernel code can write: `forward_` is only a shortcut, and
// where it is off the open descriptor decides (`events_open`); the block's syscall filter refuses
// closing, replacing or changing kEventFd (harness.cpp, protect_event_fd). Nothing in an event
// comes from memory kernel code can write: a vector instruction's weight is looked up by the
// launcher from the API's name hash the event carries, a copy's GM alignment from the GM address,
// the scalar issue cost from the launcher's own parameters (cost_hooks.h `resolve`), and the
// operand slots from the sealed per-call record (vault.h). Dependencies are tracked twice: by slot,
// and by the UB bytes each operand really touches (its range, from the API's bounds check), so a
// kernel that rewrites its tensors' slot ids and the slot table still waits for the data.
#pragma once
#include <algorithm>
#include <map>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <initializer_list>
#include <unistd.h>
#include <vector>

namespace cannsim::cost {

enum Pipe : int { S = 0, V = 1, MTE2 = 2, MTE3 = 3, M = 4, MTE1 = 5, FIX = 6, NPIPES = 7 };

// Cost parameters of one chip. Filled from the chip profile (copilot/chips/<chip>.yaml) by the
// harness; the defaults are the 910B2 profile's provisional values.
struct Params {
    double clock_ghz = 1.8;                 // vector core clock
    double hbm_bytes_per_cycle = 1000.0;    // whole-chip HBM bandwidth, bytes per core cycle
    double core_dma_bytes_per_cycle = 64.0; // most one core's MTE can move per cycle
    double dma_latency_cycles = 600.0;      // from issue to first byte, per transfer
    double small_burst_bytes = 512.0;       // bursts (rows) shorter than this move at reduced rate
    double gm_unaligned_efficiency = 0.7;   // GM address not 512 B aligned (fact: ~70 %)
    double vector_bytes_per_cycle = 256.0;  // one repeat = 256 B per cycle at cost 1
    double vector_issue_cycles = 12.0;      // fixed start-up of every vector instruction
    double scalar_issue_cycles = 2.0;       // scalar cost of issuing any instruction
    double scalar_access_cycles = 10.0;     // GetValue / SetValue on UB
    int active_cores = 1;                   // cores streaming at once (min(blockDim, cores))
    // The cube core (cube.h): MACs per cycle by input element size (b16, b8, b32), the start-up of
    // an Mmad, and the L1 -> L0A / L0B (MTE1) and L0C -> GM (FIX) rates.
    double cube_macs_per_cycle[3] = {4096.0, 8192.0, 2048.0};
    double cube_issue_cycles = 16.0;
    double l1_to_l0a_bytes_per_cycle = 256.0;
    double l1_to_l0b_bytes_per_cycle = 128.0;
    double mte1_issue_cycles = 8.0;
    double fixp_bytes_per_cycle = 128.0;
};

struct BlockCost {
    double cycles = 0;                  // when the last pipe went idle
    double busy[NPIPES] = {};           // busy cycles per pipe
    double gm_bytes_in = 0, gm_bytes_out = 0;
    uint64_t instructions = 0;
    uint64_t unmodelled = 0;            // instructions the model has no cost for
};

// One timeline call, as a block process forwards it to the launcher (see the header comment).
enum EventOp : uint8_t {
    EV_VECTOR = 1, EV_DMA, EV_SCALAR_ACCESS, EV_GM_SCALAR, EV_SCALAR, EV_SET_FLAG, EV_WAIT_FLAG,
    EV_BARRIER, EV_UNMODELLED, EV_END, EV_BEGIN, EV_CUBE
};
// UB bytes [lo, hi) an operand touches (lo == hi: not known, tracked by slot only).
struct Range { uint32_t lo = 0, hi = 0; };
struct Event {
    uint32_t seq;               // 0, 1, 2, ... per block: a gap is a lost or suppressed event
    uint8_t op, pipe, nreads, nwrites;
    int32_t reads[8];           // UB slots (flags: event, id)
    int32_t writes[4];
    Range read_ranges[8], write_ranges[4];
    double a, b, c;             // bytes/weight, rows/row_bytes/aligned, cycles
    uint64_t key;               // vector: the API name's hash (b = element bytes; 0: b is the weight);
                                // DMA: the GM address (c = aligned until the launcher resolves it);
                                // scalar: 1 = one issue at the launcher's scalar_issue_cycles
};
constexpr int32_t kMaxEventSlot = 1 << 16;
constexpr int kEventFd = 4000;      // a block's event pipe (the launcher has nothing open there)
constexpr int kExitEventsLost = 88; // a block whose event could not be written ends with this

class Timeline {
public:
    explicit Timeline(const Params& p = Params{}) : p_(p) {}

    void reset(const Params& p) {
        const bool fwd = forward_;
        const uint32_t seq = seq_;
        *this = Timeline(p);
        forward_ = fwd;
        seq_ = seq;
    }
    const Params& params() const { return p_; }

    // From now on every call is written as an Event to `fd`, moved to kEventFd, instead of being
    // computed here (the harness, in a block process). fd < 0 changes nothing while kEventFd is open.
    void forward_to(int fd) {
        if (fd >= 0 && fd != kEventFd) {
            if (dup2(fd, kEventFd) != kEventFd) _exit(kExitEventsLost);
            close(fd);
        }
        forward_ = fd >= 0;
        seq_ = 0;
    }
    // Whether this process has an event pipe: only a block's harness opens kEventFd.
    static bool events_open() { return fcntl(kEventFd, F_GETFD) >= 0; }
    bool forwarding() const { return forward_ || events_open(); }
    // The first and the last event of a block (written by the harness before and after the entry):
    // the API calls counted so far on V, MTE2 and MTE3 (`a`, `b`, `c`), by a count kept apart from
    // the timeline, so the launcher can tell events that never came (see EventStream).
    void forward_mark(EventOp op, const double calls[3]) {
        if (!forwarding()) return;
        Event e{};
        e.op = op;
        e.a = calls[0]; e.b = calls[1]; e.c = calls[2];
        send(e);
    }

    // Replays one forwarded event (here, never forwarded again); false when a field is out of range
    // (a forged or torn event).
    bool apply(const Event& e) {
        if (e.nreads > 8 || e.nwrites > 4) return false;
        for (int i = 0; i < e.nreads; ++i) if (e.reads[i] < -1 || e.reads[i] >= kMaxEventSlot) return false;
        for (int i = 0; i < e.nwrites; ++i) if (e.writes[i] < -1 || e.writes[i] >= kMaxEventSlot) return false;
        for (const Range& r : e.read_ranges) if (r.hi < r.lo) return false;
        for (const Range& r : e.write_ranges) if (r.hi < r.lo) return false;
        for (double v : {e.a, e.b, e.c}) if (!(v >= 0.0 && v <= 1e18)) return false;   // NaN fails too
        const Slots reads{e.reads, e.nreads, e.read_ranges}, writes{e.writes, e.nwrites, e.write_ranges};
        switch (e.op) {
            case EV_VECTOR: if (!(e.b > 0.0)) return false; vector_here(e.a, e.b, reads, writes); return true;
            case EV_CUBE: if ((e.pipe != M && e.pipe != MTE1) || !(e.b <= 2.0)) return false;
                cube_here(e.pipe, e.a, static_cast<int>(e.b), reads, writes); return true;
            case EV_DMA: if (e.pipe != MTE2 && e.pipe != MTE3 && e.pipe != FIX) return false;
                dma_here(e.pipe, e.a, e.b, e.c != 0.0, reads, writes); return true;
            case EV_SCALAR_ACCESS: if (e.nreads != 1) return false; scalar_access_here(e.reads[0], e.pipe != 0, e.read_ranges[0]); return true;
            case EV_GM_SCALAR: gm_scalar_access_here(e.a, e.pipe != 0); return true;
            case EV_SCALAR: scalar_here(e.a); return true;
            case EV_SET_FLAG: case EV_WAIT_FLAG:
                if (e.pipe >= NPIPES || e.nreads != 2) return false;
                if (e.op == EV_SET_FLAG) set_flag_here(e.pipe, e.reads[0], e.reads[1]); else wait_flag_here(e.pipe, e.reads[0], e.reads[1]);
                return true;
            case EV_BARRIER: barrier_all_here(); return true;
            case EV_UNMODELLED: unmodelled_here(); return true;
            default: return false;
        }
    }

    // A vector instruction over `bytes` of its widest operand, costing `weight` cycles per
    // 256-byte repeat (1 for add-class ops; more for transcendentals).
    double vector(double bytes, double weight, std::initializer_list<int> reads,
                  std::initializer_list<int> writes) {
        return vector(bytes, weight, Slots{reads.begin(), reads.size()}, Slots{writes.begin(), writes.size()});
    }

    // GM -> UB (MTE2) or UB -> GM (MTE3): `rows` bursts of `row_bytes` each.
    double dma(int pipe, double rows, double row_bytes, bool gm_aligned_512, std::initializer_list<int> reads,
               std::initializer_list<int> writes) {
        return dma(pipe, rows, row_bytes, gm_aligned_512, Slots{reads.begin(), reads.size()},
                   Slots{writes.begin(), writes.size()});
    }

    // The same, with operand slots given as (pointer, count) and, where known, their UB ranges.
    struct Slots {
        const int* p; size_t n; const Range* ranges = nullptr;
        const int* begin() const { return p; } const int* end() const { return p + n; }
    };

    double vector(double bytes, double weight, Slots reads, Slots writes) {
        if (forwarding()) { Event e = event(EV_VECTOR, 0, reads, writes); e.a = bytes; e.b = weight; send(e); return 0; }
        return vector_here(bytes, weight, reads, writes);
    }
    // A vector API's instruction: forwarded with the API's name hash and its element size (the
    // launcher weighs it); here, weighed by `weight`.
    double vector_api(double bytes, uint64_t api_hash, int elem_bytes, double weight, Slots reads, Slots writes) {
        if (forwarding()) {
            Event e = event(EV_VECTOR, 0, reads, writes);
            e.a = bytes; e.b = elem_bytes; e.key = api_hash;
            send(e);
            return 0;
        }
        return vector_here(bytes, weight, reads, writes);
    }
    double vector_here(double bytes, double weight, Slots reads, Slots writes) {
        const double repeats = std::max(1.0, std::ceil(bytes / p_.vector_bytes_per_cycle));
        return issue(V, p_.vector_issue_cycles + repeats * weight, reads, writes);
    }

    double dma(int pipe, double rows, double row_bytes, bool gm_aligned_512, Slots reads, Slots writes) {
        if (forwarding()) {
            Event e = event(EV_DMA, pipe, reads, writes);
            e.a = rows; e.b = row_bytes; e.c = gm_aligned_512 ? 1.0 : 0.0;
            send(e);
            return 0;
        }
        return dma_here(pipe, rows, row_bytes, gm_aligned_512, reads, writes);
    }
    // A copy whose first GM byte is at `gm` (0: none noted): forwarded with the address (the
    // launcher decides the alignment from its own buffer list); here, `gm_aligned_512`.
    double dma_at(int pipe, double rows, double row_bytes, uint64_t gm, bool gm_aligned_512, Slots reads, Slots writes) {
        if (forwarding()) {
            Event e = event(EV_DMA, pipe, reads, writes);
            e.a = rows; e.b = row_bytes; e.c = 1.0; e.key = gm;
            send(e);
            return 0;
        }
        return dma_here(pipe, rows, row_bytes, gm_aligned_512, reads, writes);
    }
    double dma_here(int pipe, double rows, double row_bytes, bool gm_aligned_512, Slots reads, Slots writes) {
        const double bytes = rows * row_bytes;
        double eff = gm_aligned_512 ? 1.0 : p_.gm_unaligned_efficiency;
        if (row_bytes < p_.small_burst_bytes) eff *= std::max(0.125, row_bytes / p_.small_burst_bytes);
        double rate = std::min(p_.core_dma_bytes_per_cycle, hbm_share()) * eff;
        if (pipe == FIX) rate = std::min(rate, p_.fixp_bytes_per_cycle * eff);   // L0C -> GM through the fixpipe
        const double transfer = bytes / rate;
        if (pipe == MTE2) cost_.gm_bytes_in += bytes; else cost_.gm_bytes_out += bytes;
        hbm_cycles_ += bytes / (hbm_share() * eff);
        // The engine pipelines requests: it is busy for the transfer; the data lands a latency later.
        const double end = issue(pipe, transfer, reads, writes, p_.dma_latency_cycles);
        if (first_dma_ < 0) first_dma_ = end - p_.dma_latency_cycles - transfer;
        return end;
    }

    // Cube work: an Mmad of `units` MACs (pipe M, `kind` = input element size class 0 b16, 1 b8, 2 b32)
    // or a LoadData of `units` bytes into L0A (`kind` 0) or L0B (1) on MTE1.
    double cube(int pipe, double units, int kind, Slots reads, Slots writes) {
        if (forwarding()) { Event e = event(EV_CUBE, pipe, reads, writes); e.a = units; e.b = kind; send(e); return 0; }
        return cube_here(pipe, units, kind, reads, writes);
    }
    double cube_here(int pipe, double units, int kind, Slots reads, Slots writes) {
        kind = std::min(2, std::max(0, kind));
        const double cycles = pipe == M
            ? p_.cube_issue_cycles + units / p_.cube_macs_per_cycle[kind]
            : p_.mte1_issue_cycles + units / (kind == 1 ? p_.l1_to_l0b_bytes_per_cycle : p_.l1_to_l0a_bytes_per_cycle);
        return issue(pipe, cycles, reads, writes);
    }

    // UB -> UB copy on the vector pipe's data path (DataCopy local to local).
    double local_copy(double bytes, std::initializer_list<int> reads, std::initializer_list<int> writes) {
        return vector(bytes, 1.0, reads, writes);
    }

    // A scalar read or write of UB (GetValue/SetValue): waits for the data, stalls issue.
    void scalar_access(int slot, bool write, Range bytes = {}) {
        if (forwarding()) { Event e = event(EV_SCALAR_ACCESS, write, Slots{&slot, 1, &bytes}, Slots{nullptr, 0}); send(e); return; }
        scalar_access_here(slot, write, bytes);
    }
    void scalar_access_here(int slot, bool write, Range bytes = {}) {
        SlotTimes& st = at(slot);
        double t = std::max(s_time_, st.ready);
        if (write) t = std::max(t, st.readers_done);
        t = std::max(t, write ? ub_.write_wait(bytes, S) : ub_.ready(bytes));
        t += p_.scalar_access_cycles;
        s_time_ = t;
        cost_.busy[S] += p_.scalar_access_cycles;
        if (write) {
            st.ready = t;
            st.writer = S;
            ub_.written(bytes, t, S);
        } else {
            st.readers_done = std::max(st.readers_done, t);
            ub_.read(bytes, t);
        }
        ++cost_.instructions;
    }

    // A scalar access of GM: costed as a scalar access of UB (no data cache is modelled), its
    // bytes part of the core's GM traffic, so an element-by-element loop over GM is not free.
    void gm_scalar_access(double bytes, bool write) {
        if (forwarding()) { Event e{}; e.op = EV_GM_SCALAR; e.pipe = write; e.a = bytes; send(e); return; }
        gm_scalar_access_here(bytes, write);
    }
    void gm_scalar_access_here(double bytes, bool write) {
        const double t = p_.scalar_access_cycles;
        s_time_ += t;
        cost_.busy[S] += t;
        if (write) cost_.gm_bytes_out += bytes; else cost_.gm_bytes_in += bytes;
        ++cost_.instructions;
    }

    // Plain scalar work (loop control, address arithmetic) attributed to the S pipe.
    void scalar(double cycles) {
        if (forwarding()) { Event e{}; e.op = EV_SCALAR; e.a = cycles; send(e); return; }
        scalar_here(cycles);
    }
    // One scalar issue (an instruction the model has no pipe for), at the issue cost of whoever
    // computes the timeline (the launcher's parameters, for a block).
    void scalar_issue() {
        if (forwarding()) { Event e{}; e.op = EV_SCALAR; e.key = 1; send(e); return; }
        scalar_here(p_.scalar_issue_cycles);
    }
    void scalar_here(double cycles) {
        s_time_ += cycles;
        cost_.busy[S] += cycles;
    }

    // SetFlag<src_dst>(id): remember when `src` has finished everything issued so far.
    void set_flag(int src, int event, int id) {
        if (forwarding()) { forward_flag(EV_SET_FLAG, src, event, id); return; }
        set_flag_here(src, event, id);
    }
    void set_flag_here(int src, int event, int id) {
        flags_.push_back({event, id, src == S ? s_time_ : pipe_free_[src]});
    }
    // WaitFlag<src_dst>(id): `dst` (or the scalar unit) waits for that moment.
    void wait_flag(int dst, int event, int id) {
        if (forwarding()) { forward_flag(EV_WAIT_FLAG, dst, event, id); return; }
        wait_flag_here(dst, event, id);
    }
    void wait_flag_here(int dst, int event, int id) {
        for (auto it = flags_.begin(); it != flags_.end(); ++it) {
            if (it->event == event && it->id == id) {
                if (dst == S) s_time_ = std::max(s_time_, it->time);
                else pipe_free_[dst] = std::max(pipe_free_[dst], it->time);
                flags_.erase(it);
                return;
            }
        }
    }
    // PipeBarrier<pipe>: pipes are in order, so only PIPE_ALL (all = -1 here) changes anything:
    // the scalar unit waits until every pipe is idle.
    void barrier_all() {
        if (forwarding()) { Event e{}; e.op = EV_BARRIER; send(e); return; }
        barrier_all_here();
    }
    void barrier_all_here() {
        double t = s_time_;
        for (double f : pipe_free_) t = std::max(t, f);
        s_time_ = t;
    }

    void unmodelled() {
        if (forwarding()) { Event e{}; e.op = EV_UNMODELLED; send(e); return; }
        unmodelled_here();
    }
    void unmodelled_here() {
        ++cost_.unmodelled;
    }

    BlockCost finish() const {
        BlockCost c = cost_;
        c.cycles = std::max(s_time_, last_end_);
        for (double f : pipe_free_) c.cycles = std::max(c.cycles, f);
        if (first_dma_ >= 0) c.cycles = std::max(c.cycles, first_dma_ + hbm_cycles_ + p_.dma_latency_cycles);
        return c;
    }

    // One JSON object (no newline) with the block's figures in microseconds.
    int to_json(char* buf, size_t n, long long block) const {
        const BlockCost c = finish();
        const double us = 1.0 / (p_.clock_ghz * 1000.0);
        return std::snprintf(buf, n,
            "{\"kind\":\"cost\",\"block\":%lld,\"us\":%.6f,\"pipes_us\":{\"S\":%.6f,\"V\":%.6f,"
            "\"MTE2\":%.6f,\"MTE3\":%.6f,\"M\":%.6f,\"MTE1\":%.6f,\"FIX\":%.6f},\"hbm_us\":%.6f,"
            "\"gm_bytes_in\":%.0f,\"gm_bytes_out\":%.0f,\"instructions\":%llu,\"unmodelled\":%llu}",
            block, c.cycles * us, c.busy[S] * us, c.busy[V] * us, c.busy[MTE2] * us, c.busy[MTE3] * us,
            c.busy[M] * us, c.busy[MTE1] * us, c.busy[FIX] * us,
            hbm_cycles_ * us,
            c.gm_bytes_in, c.gm_bytes_out, (unsigned long long)c.instructions,
            (unsigned long long)c.unmodelled);
    }

private:
    static Event event(EventOp op, int pipe, Slots reads, Slots writes) {
        Event e{};
        e.op = op;
        e.pipe = static_cast<uint8_t>(pipe);
        for (size_t i = 0; i < reads.n && e.nreads < 8; ++i) {
            if (reads.ranges) e.read_ranges[e.nreads] = reads.ranges[i];
            e.reads[e.nreads++] = reads.p[i];
        }
        for (size_t i = 0; i < writes.n && e.nwrites < 4; ++i) {
            if (writes.ranges) e.write_ranges[e.nwrites] = writes.ranges[i];
            e.writes[e.nwrites++] = writes.p[i];
        }
        return e;
    }
    void forward_flag(EventOp op, int pipe, int event_id, int id) {
        const int ids[2] = {event_id, id};
        Event e = event(op, pipe, Slots{ids, 2}, Slots{nullptr, 0});
        send(e);
    }
    // One write per event (smaller than PIPE_BUF, so atomic): nothing stays behind in this process.
    void send(Event& e) {
        e.seq = seq_++;
        ssize_t n;
        while ((n = ::write(kEventFd, &e, sizeof e)) < 0 && errno == EINTR) {}
        if (n != static_cast<ssize_t>(sizeof e)) _exit(kExitEventsLost);   // never a silently lost event
    }

    struct SlotTimes {
        double ready = 0, readers_done = 0;
        int writer = -1;        // the pipe of the last write
    };
    struct Flag { int event, id; double time; };

    // The same times per UB byte range: segments [start, end) that some operand touched, split
    // where ranges begin and end (a few per buffer).
    class UbTimes {
    public:
        double ready(Range r) const {
            double t = 0;
            for (auto it = first(r); it != segs_.end() && it->first < r.hi; ++it) t = std::max(t, it->second.ready);
            return t;
        }
        double write_wait(Range r, int pipe) const {
            double t = 0;
            for (auto it = first(r); it != segs_.end() && it->first < r.hi; ++it)
                t = std::max({t, it->second.writer == pipe ? 0.0 : it->second.ready, it->second.readers_done});
            return t;
        }
        void read(Range r, double end) {
            for (auto it = split(r); it != segs_.end() && it->first < r.hi; ++it)
                it->second.readers_done = std::max(it->second.readers_done, end);
        }
        void written(Range r, double end, int pipe) {
            for (auto it = split(r); it != segs_.end() && it->first < r.hi; ++it) {
                it->second.ready = std::max(it->second.ready, end);
                it->second.writer = pipe;
            }
        }

    private:
        struct Seg { uint32_t end; double ready = 0, readers_done = 0; int writer = -1; };
        using Map = std::map<uint32_t, Seg>;
        // The first segment overlapping r (segments never overlap each other).
        Map::const_iterator first(Range r) const {
            if (r.hi <= r.lo) return segs_.end();
            auto it = segs_.upper_bound(r.lo);
            if (it != segs_.begin() && std::prev(it)->second.end > r.lo) --it;
            return it;
        }
        // Makes r's bytes exactly a run of segments (new ones, untouched, for the gaps); returns the first.
        Map::iterator split(Range r) {
            if (r.hi <= r.lo) return segs_.end();
            cut(r.lo);
            cut(r.hi);
            uint32_t at = r.lo;
            auto it = segs_.lower_bound(r.lo);
            while (at < r.hi) {
                if (it == segs_.end() || it->first > at) {
                    const uint32_t end = it == segs_.end() ? r.hi : std::min(r.hi, it->first);
                    it = segs_.emplace_hint(it, at, Seg{end});
                }
                at = it->second.end;
                ++it;
            }
            return segs_.lower_bound(r.lo);
        }
        // A segment boundary at x (the segment holding x, if any, split in two).
        void cut(uint32_t x) {
            auto it = segs_.upper_bound(x);
            if (it == segs_.begin()) return;
            --it;
            if (it->first < x && it->second.end > x) {
                Seg tail = it->second;
                it->second.end = x;
                segs_.emplace_hint(std::next(it), x, tail);
            }
        }
        Map segs_;
    };

    SlotTimes& at(int slot) {
        if (slot < 0) return scratch_;
        if (static_cast<size_t>(slot) >= slots_.size()) slots_.resize(slot + 1);
        return slots_[slot];
    }

    double hbm_share() const { return p_.hbm_bytes_per_cycle / std::max(1, p_.active_cores); }

    double issue(int pipe, double cycles, Slots reads, Slots writes, double latency = 0.0) {
        s_time_ += p_.scalar_issue_cycles;
        cost_.busy[S] += p_.scalar_issue_cycles;
        double start = std::max(s_time_, pipe_free_[pipe]);
        for (int r : reads) start = std::max(start, at(r).ready);
        for (int w : writes) {
            const SlotTimes& st = at(w);
            start = std::max({start, st.writer == pipe ? 0.0 : st.ready, st.readers_done});
        }
        if (reads.ranges) for (size_t i = 0; i < reads.n; ++i) start = std::max(start, ub_.ready(reads.ranges[i]));
        if (writes.ranges) for (size_t i = 0; i < writes.n; ++i) start = std::max(start, ub_.write_wait(writes.ranges[i], pipe));
        pipe_free_[pipe] = start + cycles;
        const double end = start + cycles + latency;
        cost_.busy[pipe] += cycles;
        for (int r : reads) { SlotTimes& st = at(r); st.readers_done = std::max(st.readers_done, end); }
        for (int w : writes) {
            SlotTimes& st = at(w);
            st.ready = std::max(st.ready, end);
            st.writer = pipe;
        }
        if (reads.ranges) for (size_t i = 0; i < reads.n; ++i) ub_.read(reads.ranges[i], end);
        if (writes.ranges) for (size_t i = 0; i < writes.n; ++i) ub_.written(writes.ranges[i], end, pipe);
        last_end_ = std::max(last_end_, end);
        ++cost_.instructions;
        return end;
    }

    Params p_;
    bool forward_ = false;      // a block process: calls become Events on kEventFd (see forwarding)
    uint32_t seq_ = 0;
    double s_time_ = 0;
    double pipe_free_[NPIPES] = {};
    double last_end_ = 0;      // when the last instruction's effects landed
    double hbm_cycles_ = 0;     // this core's GM traffic divided by its HBM share
    double first_dma_ = -1;     // start of its first transfer
    std::vector<SlotTimes> slots_;
    UbTimes ub_;
    SlotTimes scratch_;
    std::vector<Flag> flags_;
    BlockCost cost_;
};

}  // namespace cannsim::cost
