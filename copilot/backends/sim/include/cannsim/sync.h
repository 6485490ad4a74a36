// SyncAll: the all-core barrier, hard (no arguments) and soft (GM + UB workspace) forms.
//
// Blocks run as separate processes; a kernel that instantiates SyncAll makes the launcher start
// every block at once (multicore.h), and each call waits until every other started block has made
// as many SyncAll calls or ended. A block that ends with fewer calls than another waits for is a hang
// on the chip: L2.SYNCALL_MISMATCH, fatal. In count-only launches (three sampled blocks, zero data)
// the barrier does not wait; its cost is accounted the same way.
// Cost (ESTIMATE): all pipes drain (as PipeBarrier<PIPE_ALL>) plus kSyncAllCycles of cross-core
// handshake; the wait for slower cores is not modelled (every core's estimate is taken alone).
#pragma once
#include "multicore.h"
#include "vec_engine.h"

namespace AscendC {
struct SyncAllConfig {
    pipe_t triggerPipe;
    pipe_t waitPipe;
};
inline constexpr SyncAllConfig DEFAULT_SYNC_ALL_CONFIG = {PIPE_ALL, PIPE_ALL};
}  // namespace AscendC

namespace cannsim {

constexpr double kSyncAllCycles = 1000;   // UNVERIFIED: handshake latency of the hardware barrier

// Instantiated by SyncAll: its initialiser runs before main and tells the launcher (multicore.h).
template <int N> struct SyncAllUse {
    static inline const bool registered = (mc::uses_sync_all_flag() = true);
};

inline void sync_all_cost() {
    if (cost::active()) {
        cost::hooks().timeline.barrier_all();
        cost::hooks().timeline.scalar(kSyncAllCycles);
    }
    record_cost(PIPE_S, "SyncAll", 0, 0, 0);
}

// Wait at the barrier among blocks [0, parties).
inline void sync_all_wait(int64_t parties, const SrcLoc& loc) {
    auto& st = detail::state();
    if (st.block_num > st.chip.vector_cores)
        report("L2.SYNCALL_CORES", Severity::Error, "SyncAll", loc.line(),
               fmt("SyncAll with %lld blocks on %s, which has %d vector cores: the blocks beyond the cores run in a "
                   "later round and never reach the barrier, so the kernel hangs on the chip",
                   (long long)st.block_num, st.chip.name, st.chip.vector_cores));
    sync_all_cost();
    mc::Shared* sh = mc::shared();
    const int64_t me = st.block_idx;
    if (count_only() || !sh || me < 0 || me >= static_cast<int64_t>(sh->blocks)) return;
    const uint32_t gen = sh->arrived[me].fetch_add(1) + 1;
    const int64_t n = std::min<int64_t>(parties, sh->blocks);
    for (;;) {
        bool all = true;
        for (int64_t o = 0; o < n; ++o) {
            if (o == me) continue;
            const uint32_t s = sh->state[o].load();
            if (s == mc::NotRun || sh->arrived[o].load() >= gen) continue;
            if (s == mc::Ended)
                report("L2.SYNCALL_MISMATCH", Severity::Error, "SyncAll", loc.line(),
                       fmt("block %lld waits at its SyncAll number %u but block %lld ended after %u SyncAll calls: "
                           "every block must call SyncAll the same number of times, or the chip hangs",
                           (long long)me, gen, (long long)o, sh->arrived[o].load()),
                       true);
            all = false;
        }
        if (all) return;
        mc::pause_briefly();
    }
}

// Within the current phase (SyncAll count), wait until every earlier block has left it: atomic GM
// writes are then applied in block order.
inline void wait_atomic_turn() {
    mc::Shared* sh = mc::shared();
    const int64_t me = detail::state().block_idx;
    if (count_only() || !sh || me <= 0 || me >= static_cast<int64_t>(sh->blocks)) return;
    const uint32_t phase = sh->arrived[me].load();
    for (;;) {
        bool all = true;
        for (int64_t o = 0; o < me && all; ++o)
            all = sh->state[o].load() != mc::Running || sh->arrived[o].load() > phase;
        if (all) return;
        mc::pause_briefly();
    }
}

}  // namespace cannsim

namespace AscendC {

// @api SyncAll: hard form
template <bool isAIVOnly = true, const SyncAllConfig& config = DEFAULT_SYNC_ALL_CONFIG>
inline void SyncAll(CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    cannsim::sync_all_wait(cannsim::detail::state().block_num, loc);
}

// Soft form: gmWorkspace holds one 32 B flag block per core and must start zeroed; ubWorkspace is
// the core's own 32 B; usedCores (0 = all blocks) may not exceed the launch's block count.
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace,
                    const int32_t usedCores = 0, CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    const int64_t blocks = cannsim::detail::state().block_num;
    int64_t parties = usedCores > 0 ? usedCores : blocks;
    if (parties > blocks) {
        cannsim::report("L2.SYNCALL_CORES", cannsim::Severity::Error, "SyncAll", loc.line(),
                        cannsim::fmt("SyncAll usedCores %d exceeds the launch's %lld blocks: the barrier waits for "
                                     "cores that do not exist and hangs", usedCores, (long long)blocks));
        parties = blocks;
    }
    const uint64_t need_gm = static_cast<uint64_t>(parties) * 8;
    if (gmWorkspace.sized_ && gmWorkspace.GetSize() < need_gm)
        cannsim::report("L2.SYNCALL_WORKSPACE", cannsim::Severity::Error, "SyncAll", loc.line(),
                        cannsim::fmt("SyncAll gmWorkspace holds %llu int32 but %lld cores need %llu (32 B per core)",
                                     (unsigned long long)gmWorkspace.GetSize(), (long long)parties,
                                     (unsigned long long)need_gm));
    if (ubWorkspace.GetSize() < 8)
        cannsim::report("L2.SYNCALL_WORKSPACE", cannsim::Severity::Error, "SyncAll", loc.line(),
                        cannsim::fmt("SyncAll ubWorkspace holds %u int32 but needs 8 (32 B)", ubWorkspace.GetSize()));
    cannsim::check_live("SyncAll", ubWorkspace.slot_, ubWorkspace.gen_, loc);
    cannsim::check_align32("SyncAll", "ubWorkspace", ubWorkspace.addr_, loc);
    cannsim::sync_all_wait(parties, loc);
}

}  // namespace AscendC

// Block-to-block flags: IBSet/IBWait (event per block), NotifyNextBlock/WaitPreBlock (a chain in
// block order, after InitDetermineComputeWorkspace). The k-th wait is satisfied by the k-th set of
// the awaited block; waiting on a block that ended without it is L2.SYNCALL_MISMATCH (fatal: the
// chip hangs). The GM workspace contents are not modelled (the flags live in the shared page); its
// documented minimum sizes are checked (L2.SYNCALL_WORKSPACE). Count-only launches do not wait.
namespace cannsim {

inline uint32_t& ib_consumed(int64_t block, int32_t event) {
    static uint32_t c[mc::kMaxBlocks][mc::kIbEvents] = {};
    return c[block][event];
}
inline uint32_t& pre_consumed() {
    static uint32_t c = 0;
    return c;
}

inline void check_ib_workspace(const char* api, uint64_t gm_elems, uint64_t gm_need, uint32_t ub_elems,
                               uint32_t ub_need, const SrcLoc& loc) {
    if (gm_elems < gm_need)
        report("L2.SYNCALL_WORKSPACE", Severity::Error, api, loc.line(),
               fmt("%s gmWorkspace holds %llu int32 but needs %llu", api, (unsigned long long)gm_elems,
                   (unsigned long long)gm_need));
    if (ub_elems < ub_need)
        report("L2.SYNCALL_WORKSPACE", Severity::Error, api, loc.line(),
               fmt("%s ubWorkspace holds %u int32 but needs %u", api, ub_elems, ub_need));
}

// Wait until `count()` > `seen` or the awaited block `who` has ended.
template <typename Count>
inline void wait_flag_of(const char* api, int64_t who, uint32_t seen, Count count, const char* what, const SrcLoc& loc) {
    mc::Shared* sh = mc::shared();
    if (count_only() || !sh || who < 0 || who >= static_cast<int64_t>(sh->blocks)) return;
    for (;;) {
        if (count() > seen) return;
        const uint32_t s = sh->state[who].load();
        if (s == mc::NotRun) return;
        if (s == mc::Ended && count() <= seen)
            report("L2.SYNCALL_MISMATCH", Severity::Error, api, loc.line(),
                   fmt("block %lld waits for %s of block %lld, which ended without it: on the chip this wait never "
                       "ends", (long long)detail::state().block_idx, what, (long long)who),
                   true);
        mc::pause_briefly();
    }
}

}  // namespace cannsim

namespace AscendC {

// @api IBSet IBWait InitDetermineComputeWorkspace NotifyNextBlock WaitPreBlock
template <bool isAIVOnly = true>
inline void IBSet(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx,
                  int32_t eventID, CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    const int64_t blocks = cannsim::detail::state().block_num;
    if (gmWorkspace.sized_)
        cannsim::check_ib_workspace("IBSet", gmWorkspace.GetSize(),
                                    (uint64_t(blocks) * (eventID + 1) + blockIdx + 1) * 8, ubWorkspace.GetSize(), 8, loc);
    cannsim::record_cost(PIPE_MTE3, "IBSet", cannsim::DT_I32, 8, 32);
    cannsim::mc::Shared* sh = cannsim::mc::shared();
    if (!sh || cannsim::count_only() || blockIdx < 0 || blockIdx >= static_cast<int64_t>(sh->blocks) || eventID < 0 ||
        eventID >= static_cast<int32_t>(cannsim::mc::kIbEvents))
        return;
    sh->ib_set[blockIdx][eventID].fetch_add(1);
}
template <bool isAIVOnly = true>
inline void IBWait(const GlobalTensor<int32_t>& gmWorkspace, const LocalTensor<int32_t>& ubWorkspace, int32_t blockIdx,
                   int32_t eventID, CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    const int64_t blocks = cannsim::detail::state().block_num;
    if (gmWorkspace.sized_)
        cannsim::check_ib_workspace("IBWait", gmWorkspace.GetSize(),
                                    (uint64_t(blocks) * (eventID + 1) + blockIdx + 1) * 8, ubWorkspace.GetSize(), 8, loc);
    cannsim::record_cost(PIPE_MTE2, "IBWait", cannsim::DT_I32, 8, 32);
    cannsim::mc::Shared* sh = cannsim::mc::shared();
    if (!sh || blockIdx < 0 || blockIdx >= static_cast<int64_t>(sh->blocks) || eventID < 0 ||
        eventID >= static_cast<int32_t>(cannsim::mc::kIbEvents))
        return;
    uint32_t& seen = cannsim::ib_consumed(blockIdx, eventID);
    cannsim::wait_flag_of("IBWait", blockIdx, seen, [&] { return sh->ib_set[blockIdx][eventID].load(); }, "an IBSet", loc);
    ++seen;
}
inline void InitDetermineComputeWorkspace(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace,
                                          CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    const uint64_t blocks = static_cast<uint64_t>(cannsim::detail::state().block_num);
    if (gmWorkspace.sized_)
        cannsim::check_ib_workspace("InitDetermineComputeWorkspace", gmWorkspace.GetSize(), blocks * 8,
                                    ubWorkspace.GetSize(), static_cast<uint32_t>(blocks * 8 + 8), loc);
    cannsim::record_cost(PIPE_MTE3, "InitDetermineComputeWorkspace", cannsim::DT_I32, blocks * 8, blocks * 32);
}
inline void NotifyNextBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace, CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    (void)gmWorkspace; (void)ubWorkspace; (void)loc;
    cannsim::record_cost(PIPE_MTE3, "NotifyNextBlock", cannsim::DT_I32, 8, 32);
    cannsim::mc::Shared* sh = cannsim::mc::shared();
    const int64_t me = cannsim::detail::state().block_idx;
    if (sh && !cannsim::count_only() && me >= 0 && me < static_cast<int64_t>(sh->blocks)) sh->notified[me].fetch_add(1);
}
inline void WaitPreBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace, CANNSIM_LOC) {
    (void)cannsim::SyncAllUse<0>::registered;
    (void)gmWorkspace; (void)ubWorkspace;
    cannsim::record_cost(PIPE_MTE2, "WaitPreBlock", cannsim::DT_I32, 8, 32);
    cannsim::mc::Shared* sh = cannsim::mc::shared();
    const int64_t me = cannsim::detail::state().block_idx;
    if (!sh || me <= 0) return;
    uint32_t& seen = cannsim::pre_consumed();
    cannsim::wait_flag_of("WaitPreBlock", me - 1, seen, [&] { return sh->notified[me - 1].load(); },
                          "a NotifyNextBlock", loc);
    ++seen;
}

}  // namespace AscendC
