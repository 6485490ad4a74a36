// Mixed AIC/AIV launches and the cross-core flags (CrossCoreSetFlag / CrossCoreWaitFlag).
//
// A kernel is MIX when it declares KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_x), or uses cube
// APIs and cross-core flags together (what the compiler infers); AIC-only when it declares so or uses
// cube APIs without flags. The declaration and the uses register at static-initialisation time (class
// template statics), so the launcher, the same program, knows before it forks. A MIX launch of
// blockDim blocks runs 1 + ratio processes per block: the AIC (cube core) and its AIVs (1:2 on A2/A3).
// GetBlockIdx on an AIV is block * ratio + sub-block, GetSubBlockIdx the sub-block, GetTaskRation the
// ratio; GetBlockNum is blockDim on both (UNVERIFIED for the AIV side).
//
// Flags live in one MAP_SHARED page the launcher maps before the first fork (`setup`); a wait polls
// its counter and, when the cores that could set it have all ended, reports L2.CROSS_CORE_FLAG (a hang
// on the chip). In count-only launches waits do not block. Cost (ESTIMATE): a set costs the scalar
// issue on its pipe; the wait for the other core is not modelled (each core's timeline is its own).
#pragma once
#include <atomic>
#include <cstdint>
#include <ctime>
#include <functional>
#include <sys/mman.h>

enum KernelType : int32_t {
    KERNEL_TYPE_AIV_ONLY = 0, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2
};

namespace cannsim::mix {

enum Core : int32_t { AIV = 0, AIC = 1 };

inline int& declared_type() { static int t = -1; return t; }
inline bool& uses_cube() { static bool on = false; return on; }
inline bool& uses_cross_core() { static bool on = false; return on; }

template <int T> struct DeclareType { static inline const bool registered = (declared_type() = T, true); };
template <int N> struct CubeUse { static inline const bool registered = (uses_cube() = true); };
template <int N> struct CrossCoreUse { static inline const bool registered = (uses_cross_core() = true); };

// AIVs per AIC in this kernel's launch; -1 when the kernel is not MIX (one process per block).
inline int ratio() {
    switch (declared_type()) {
        case KERNEL_TYPE_MIX_AIC_1_2: return 2;
        case KERNEL_TYPE_MIX_AIC_1_1: return 1;
        case KERNEL_TYPE_MIX_AIC_1_0: return 0;
        case -1: return uses_cube() && uses_cross_core() ? 2 : -1;
        default: return -1;
    }
}
// Processes per block of the launch.
inline int processes_per_block() { return ratio() < 0 ? 1 : 1 + ratio(); }
inline bool aic_only() {
    return declared_type() == KERNEL_TYPE_AIC_ONLY || (declared_type() == -1 && uses_cube() && !uses_cross_core());
}

// This process's core (set by the launcher in the child before the kernel runs).
struct Identity { int32_t core = AIV; int64_t block = 0, sub = 0, blocks = 1; int32_t ratio = -1; uint32_t proc = 0; };
inline Identity& self() { static Identity id; return id; }

constexpr uint32_t kMaxProcs = 3 * 1024;
constexpr uint32_t kFlags = 16;
struct Shared {
    uint32_t procs = 0;
    std::atomic<uint32_t> inbox[kMaxProcs][kFlags];   // flags delivered per process and flag id
    // sets of a group flag (mode 2 from the AIVs, mode 1, mode 0) so far: the set that completes the
    // group delivers it, keyed by the AIC (mode 2) or the first AIV (mode 1) of the block
    std::atomic<uint32_t> group2[kMaxProcs][kFlags], group1[kMaxProcs][kFlags], group0[2][kFlags];
    std::atomic<uint32_t> ended[kMaxProcs];
    // a process blocked in CrossCoreWaitFlag: flag id + 1 (0 = not waiting) and the count it waits for
    std::atomic<uint32_t> waiting[kMaxProcs], wait_target[kMaxProcs];
};
inline Shared*& shared() { static Shared* s = nullptr; return s; }

// One mailbox per process for the high-level Matmul API of a MIX kernel (cannsim/matmul.h): an AIV
// posts a request, its AIC serves it and marks it served. The body is the Matmul header's payload.
struct MatmulBox {
    std::atomic<uint32_t> posted, served;
    alignas(8) uint8_t body[1024];
};
inline MatmulBox*& matmul_boxes() { static MatmulBox* b = nullptr; return b; }
// What the launcher does after the kernel returns (end the block, report, exit), so that an AIC that
// served its AIVs' Matmul calls ends there as on the chip; empty outside the launcher.
inline std::function<void()>& finish() { static std::function<void()> f; return f; }

// Launcher: map the flag page for `procs` processes (before the first fork).
inline bool setup(uint32_t procs) {
    if (procs > kMaxProcs) return false;
    void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    shared() = static_cast<Shared*>(p);
    shared()->procs = procs;
    void* b = mmap(nullptr, sizeof(MatmulBox) * procs, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) return false;
    matmul_boxes() = static_cast<MatmulBox*>(b);
    return true;
}
inline void proc_ended(uint32_t proc) {
    if (shared() && proc < shared()->procs) shared()->ended[proc].store(1);
}

// Launcher, in the child of process `proc` of a launch of `block_dim` blocks: this core's identity;
// returns (GetBlockIdx, GetBlockNum) for begin_block.
inline void enter(uint32_t proc, int64_t block_dim, int64_t& idx, int64_t& num) {
    Identity& id = self();
    id.proc = proc;
    id.blocks = block_dim;
    id.ratio = ratio();
    const int per = processes_per_block();
    id.block = proc / per;
    const int r = static_cast<int>(proc % per);
    if (id.ratio < 0) {
        id.core = aic_only() ? AIC : AIV;
        id.sub = 0;
        idx = proc;
    } else {
        id.core = r == 0 ? AIC : AIV;
        id.sub = r == 0 ? 0 : r - 1;
        idx = id.core == AIC ? id.block : id.block * id.ratio + id.sub;
    }
    num = block_dim;
}

inline uint32_t proc_of(int64_t block, int core, int64_t sub) {
    const int per = processes_per_block();
    return static_cast<uint32_t>(block * per + (core == AIC ? 0 : 1 + sub));
}

inline void pause_briefly() {
    timespec ts{0, 50 * 1000};
    nanosleep(&ts, nullptr);
}

}  // namespace cannsim::mix

namespace AscendC {
constexpr int32_t AIV = cannsim::mix::AIV;
constexpr int32_t AIC = cannsim::mix::AIC;
}  // namespace AscendC

// The core a kernel runs on, as a value (the device compiler makes it a constant per core binary).
#define g_coreType (::cannsim::mix::self().core)
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)
#define KERNEL_TASK_TYPE_DEFAULT(x) ((void)::cannsim::mix::DeclareType<static_cast<int>(x)>::registered)
