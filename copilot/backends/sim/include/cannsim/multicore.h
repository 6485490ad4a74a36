// State shared by the blocks of one launch: every block runs in its own process, so what one core
// must see of the others (SyncAll arrivals, the order of atomic GM writes) lives in one MAP_SHARED
// page that the launcher maps before it forks the blocks.
//
// Per block: `arrived` = SyncAll calls made so far, `state` = running / ended / not run (sampled
// launches skip blocks). A block's phase is its SyncAll count; within a phase, atomic GM writes are
// applied in block order (block b waits until every earlier block has left the phase), so a
// float accumulation gives the same bits on every run.
#pragma once
#include <atomic>
#include <cstdint>
#include <ctime>
#include <sys/mman.h>

namespace cannsim::mc {

constexpr uint32_t kMaxBlocks = 1024;
enum BlockState : uint32_t { Running = 0, Ended = 1, NotRun = 2 };

constexpr uint32_t kIbEvents = 8;

struct Shared {
    uint32_t blocks = 0;
    std::atomic<uint32_t> arrived[kMaxBlocks];
    std::atomic<uint32_t> state[kMaxBlocks];
    std::atomic<uint32_t> ib_set[kMaxBlocks][kIbEvents];   // IBSet calls per (block, event)
    std::atomic<uint32_t> notified[kMaxBlocks];            // NotifyNextBlock calls per block
};

inline Shared*& shared() {
    static Shared* s = nullptr;
    return s;
}

// Set at static-initialisation time when the candidate instantiates SyncAll or another cross-block
// wait (sync.h): the launcher then starts every block at once, as those waits need.
inline bool& uses_sync_all_flag() {
    static bool on = false;
    return on;
}
inline bool uses_sync_all() { return uses_sync_all_flag(); }

// Launcher, before the first fork: `run[b]` says whether block b will be started.
inline bool setup(uint32_t blocks, const bool* run) {
    if (blocks > kMaxBlocks) return false;
    void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    Shared* s = static_cast<Shared*>(p);
    s->blocks = blocks;
    for (uint32_t b = 0; b < blocks; ++b) {
        s->arrived[b].store(0);
        s->state[b].store(run[b] ? Running : NotRun);
        s->notified[b].store(0);
        for (uint32_t e = 0; e < kIbEvents; ++e) s->ib_set[b][e].store(0);
    }
    shared() = s;
    return true;
}

// Launcher, when a block's process has ended (normally or not) or will never be started.
inline void block_ended(uint32_t b) {
    if (shared() && b < shared()->blocks) shared()->state[b].store(Ended);
}

inline void pause_briefly() {
    timespec ts{0, 50 * 1000};
    nanosleep(&ts, nullptr);
}

}  // namespace cannsim::mc
