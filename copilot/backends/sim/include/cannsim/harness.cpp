// The sim backend's launcher: the generic part of every candidate's executable (case-file parsing,
// sandbox, GM buffers, tiling child, block loop, result output). The runner compiles it once per
// version of the headers and per arch into an object cached beside the precompiled header, and links
// it with each candidate's launcher TU, which ends with `cannsim/harness_entry.h`. That glue defines
// the calls into candidate code declared below (the entry with CANNSIM_NUM_IO + 2 GM_ADDRs, and
// optiling::TilingFunc) and main(), which stays in the candidate's TU so that a candidate defining
// its own main gets the compile error at its line. Including this file after the glue in one TU
// gives the same executable.
//
// Usage: harness CASE_FILE. Reads the case description (chip, tensors, attrs), runs the candidate's
// optiling::TilingFunc in a child, maps the GM buffers MAP_SHARED with guard pages, forks one child
// per block (begin_block, entry, end_block), and writes result.txt and diag.jsonl (descriptors of the
// runner's, or files in the cwd). Each child reports its findings on a pipe of its own (kDiagFd),
// which this process copies into diag.jsonl: no child holds the file.
// A tensor's data is "fd:N", an inherited memfd of the runner's (shmem: no page-cache dirty
// tracking, no path), closed once mapped; a file path; "null" for an omitted optional input (a
// null GM address, no shape for GetOptionalInputShape); or "-" for anonymous zero-filled GM
// (count-only runs: nothing reads or writes its data, and untouched pages cost nothing).
// Candidate code never runs without the syscall filter: execve, sockets and namespace calls are
// refused for the whole process (the filter is installed from this object's .preinit_array entry,
// and the runner links this object first, so it runs before any .preinit_array entry, constructor
// or static initialiser of the candidate's object, whatever its priority), and fork/clone kill the
// tiling and block children.
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <initializer_list>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <memory>
#include <new>
#include <poll.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>
#include <vector>

#include "cannsim/runtime.h"
#include "cannsim/mix_core.h"
#include "cannsim/gm_alias.h"
#include "cannsim/host.h"
#include "cannsim/tiling.h"
#include "tiling/platform/platform_ascendc.h"

// Defined by the per-candidate glue (cannsim/harness_entry.h).
namespace cannsim_glue {
int run_tiling(gert::TilingContext* ctx);
void call_entry(uint8_t** args);
int launcher_main(int argc, char** argv);   // the glue's main() calls it
}  // namespace cannsim_glue

namespace cannsim_h {

constexpr int kExitFatalRule = 86;   // the device runtime reported a fatal rule and stopped
constexpr int kExitReported = 89;    // the harness's own handler reported the failure
constexpr size_t kTilingCapacity = 64 * 1024;
// A child's findings pipe (packet mode: one finding per write, read back one per read), beside the
// event pipe (cost_timeline.h kEventFd); the launcher has nothing open there either.
constexpr int kDiagFd = cannsim::cost::kEventFd + 1;
constexpr size_t kDiagPacket = 4096;   // PIPE_BUF: a write up to this size is one packet
constexpr uint64_t kDiagCap = 4u << 20;   // bytes of findings copied into diag.jsonl (the runner's read cap)

// ---------------------------------------------------------------- syscall filter
#if defined(__x86_64__)
#define CANNSIM_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CANNSIM_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

static bool g_filter_ok = false;

// Syscall numbers per action, and the filter built from them: fixed-size, no allocation (the base
// filter is installed before the C++ runtime has started).
struct SyscallList {
    long nr[40];
    size_t n = 0;
    SyscallList(std::initializer_list<long> l) { for (long x : l) if (n < 40) nr[n++] = x; }
    void add(long x) { if (n < 40) nr[n++] = x; }
};

static bool install_filter(const SyscallList& kill, const SyscallList& eperm, const SyscallList& enosys) {
#ifdef CANNSIM_AUDIT_ARCH
    sock_filter f[8 + 2 * 120];
    size_t n = 0;
    f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CANNSIM_AUDIT_ARCH, 1, 0);
    f[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    auto add = [&](const SyscallList& nrs, uint32_t action) {
        for (size_t i = 0; i < nrs.n; ++i) {
            f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nrs.nr[i]), 0, 1);
            f[n++] = BPF_STMT(BPF_RET | BPF_K, action);
        }
    };
    add(kill, SECCOMP_RET_KILL_PROCESS);
    add(eperm, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    add(enosys, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
    f[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog prog{static_cast<unsigned short>(n), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
#else
    (void)kill; (void)eperm; (void)enosys;
    return false;
#endif
}

// The vault (vault.h) cannot be unmapped, remapped, re-protected or re-keyed: pkey_* and the
// calls that could hand its pages to anyone else are refused, and mmap(MAP_FIXED), munmap,
// mprotect, madvise and mremap are refused for a range that could reach it (a length of 4 GiB or
// more, or a start whose high 32 bits are the vault's or the one below: the vault sits at a 4 GiB
// boundary). Fixed-size, no allocation (runs from the .preinit_array entry).
static bool install_vault_filter() {
#ifdef CANNSIM_AUDIT_ARCH
    constexpr uint8_t kToAllow = 254, kToDeny = 255;      // jump targets, resolved per syscall
    sock_filter f[200];
    size_t n = 0;
    auto lo = [](int i) { return static_cast<uint32_t>(offsetof(struct seccomp_data, args) + 8 * i); };
    auto hi = [&](int i) { return lo(i) + 4; };
    f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CANNSIM_AUDIT_ARCH, 1, 0);
    f[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    // one block per syscall: [ld nr][jeq nr, else skip] body [ret allow][ret deny]
    auto block = [&](long nr, auto body) {
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        const size_t head = n++;
        const size_t start = n;
        body();
        const size_t allow = n++, deny = n++;
        f[allow] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        f[deny] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
        for (size_t i = start; i < allow; ++i) {
            if (BPF_CLASS(f[i].code) != BPF_JMP) continue;
            for (uint8_t* t : {&f[i].jt, &f[i].jf})
                if (*t == kToAllow) *t = static_cast<uint8_t>(allow - i - 1);
                else if (*t == kToDeny) *t = static_cast<uint8_t>(deny - i - 1);
        }
        f[head] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, static_cast<uint8_t>(n - start));
    };
    auto range = [&](int addr, int len) {     // deny when [args[addr], +args[len]) may reach the vault
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, hi(len));
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, kToDeny);
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, hi(addr));
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cannsim::vault::kWindowHi - 1, kToDeny, 0);
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, cannsim::vault::kWindowHi, kToDeny, 0);
    };
    auto only_if = [&](int arg, uint32_t bits) {   // the rest of the block only when args[arg] has `bits`
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, lo(arg));
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 0, kToAllow);
    };
    block(SYS_mmap, [&] { only_if(3, MAP_FIXED); range(0, 1); });
    block(SYS_munmap, [&] { range(0, 1); });
    block(SYS_mprotect, [&] { range(0, 1); });
    block(SYS_madvise, [&] { range(0, 1); });
    block(SYS_mremap, [&] { range(0, 1); only_if(3, MREMAP_FIXED); range(4, 2); });
    // pkey_mprotect only to put pages under the data key (what the block does to its real GM pages,
    // and the UB arena, before the entry): never with another key, PROT_EXEC or near the vault
    const int data_key = cannsim::vault::key_numbers().data;
    block(SYS_pkey_mprotect, [&] {
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, lo(3));
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, data_key > 0 ? static_cast<uint32_t>(data_key) : ~0u, 0, kToDeny);
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, hi(3));
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, kToDeny);
        f[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, lo(2));
        f[n++] = BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, kToDeny, 0);
        range(0, 1);
    });
    for (long nr : {long(SYS_pkey_alloc), long(SYS_pkey_free), long(SYS_process_madvise),
                    long(SYS_remap_file_pages), long(SYS_shmat), long(SYS_userfaultfd)})
        block(nr, [&] { f[n++] = BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0); f[n - 1].k = 1; });   // straight to deny
    f[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog prog{static_cast<unsigned short>(n), f};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
#else
    return false;
#endif
}

// Whole process, before any candidate code: the first entry of the executable's .preinit_array
// (the dynamic loader runs those before every constructor and static initialiser).
static void install_base_filter(int, char**, char**) {
    cannsim::vault::setup();
    SyscallList kill = {SYS_execve, SYS_execveat, SYS_ptrace, SYS_process_vm_writev,
                        SYS_process_vm_readv};
    SyscallList eperm = {SYS_socket, SYS_socketpair, SYS_connect, SYS_bind, SYS_listen,
                               SYS_accept, SYS_accept4, SYS_setsid, SYS_setpgid, SYS_unshare,
                               SYS_setns, SYS_mount, SYS_umount2, SYS_chroot, SYS_pivot_root,
                               SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf,
                               SYS_perf_event_open, SYS_io_uring_setup, SYS_init_module,
                               SYS_finit_module, SYS_reboot, SYS_kexec_load};
    g_filter_ok = install_filter(kill, eperm, {}) && install_vault_filter();
}
__attribute__((section(".preinit_array"), used)) static void (*const g_install_base_filter)(int, char**, char**) =
    install_base_filter;

// Tiling and block children: no new processes or threads, no file opened (a child has what it
// needs open; /proc/self/mem would write through the vault's protection keys), and none truncated or
// punched (where the run shares the parent's uid, result.txt and diag.jsonl are its files by path).
static void forbid_fork() {
    SyscallList eperm = {SYS_openat, SYS_open_by_handle_at, SYS_truncate, SYS_ftruncate, SYS_fallocate};
#ifdef SYS_open
    eperm.add(SYS_open);
#endif
#ifdef SYS_creat
    eperm.add(SYS_creat);
#endif
#ifdef SYS_openat2
    eperm.add(SYS_openat2);
#endif
    SyscallList kill = {SYS_clone};
#ifdef SYS_fork
    kill.add(SYS_fork);
#endif
#ifdef SYS_vfork
    kill.add(SYS_vfork);
#endif
    SyscallList enosys = {};
#ifdef SYS_clone3
    enosys.add(SYS_clone3);
#endif
    install_filter(kill, eperm, enosys);
}

// A block's event pipe stays where the timeline writes it (cost_timeline.h kEventFd), and a child's
// findings pipe where the reporter writes it (kDiagFd): closing either, putting another descriptor
// there or changing its flags (fcntl, ioctl FIONBIO) is refused, so no data kernel code can write
// decides whether its API calls and its findings reach the launcher.
static bool protect_event_fd() {
#ifdef CANNSIM_AUDIT_ARCH
    const uint32_t fds[2] = {static_cast<uint32_t>(cannsim::cost::kEventFd), static_cast<uint32_t>(kDiagFd)};
    const uint32_t deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    auto arg_lo = [](int i) { return static_cast<uint32_t>(offsetof(struct seccomp_data, args) + 8 * i); };
    std::vector<sock_filter> f;
    auto stmt = [&](uint16_t code, uint32_t k) { f.push_back(BPF_STMT(code, k)); };
    auto jump = [&](uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { f.push_back(BPF_JUMP(code, k, jt, jf)); };
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    jump(BPF_JMP | BPF_JEQ | BPF_K, CANNSIM_AUDIT_ARCH, 1, 0);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    // (syscall, index of its descriptor argument): refused when that argument is kEventFd or kDiagFd
    std::vector<std::pair<long, int>> on_fd = {{SYS_close, 0}, {SYS_dup3, 1}, {SYS_ioctl, 0}};
#ifdef SYS_dup2
    on_fd.push_back({SYS_dup2, 1});
#endif
    for (const uint32_t fd : fds) {
        for (const auto& [nr, arg] : on_fd) {
            stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
            jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 3);
            stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(arg));
            jump(BPF_JMP | BPF_JEQ | BPF_K, fd, 0, 1);
            stmt(BPF_RET | BPF_K, deny);
        }
        // fcntl on it: only F_GETFD (the timeline's check that it is open)
        stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, 5);
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(0));
        jump(BPF_JMP | BPF_JEQ | BPF_K, fd, 0, 3);
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(1));
        jump(BPF_JMP | BPF_JEQ | BPF_K, F_GETFD, 1, 0);
        stmt(BPF_RET | BPF_K, deny);
    }
#ifdef SYS_close_range
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1);
    stmt(BPF_RET | BPF_K, deny);
#endif
    // no new executable memory: code the kernel writes (a WRPKRU of its own, say) never runs
    for (long nr : {long(SYS_mmap), long(SYS_mprotect), long(SYS_pkey_mprotect)}) {
        stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 3);
        stmt(BPF_LD | BPF_W | BPF_ABS, arg_lo(2));
        jump(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1);
        stmt(BPF_RET | BPF_K, deny);
    }
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
#else
    return false;
#endif
}

// ---------------------------------------------------------------- case description
struct TensorDesc {
    bool is_output = false;
    std::string name;
    int ge_dtype = 0;
    std::vector<int64_t> shape;
    std::string path;
    uint64_t pad = 0;     // bytes before the data in the file (puts the data end near a page end)
    uint64_t nbytes = 0;  // data bytes
};

struct AttrDesc {
    char kind = 'i';
    std::vector<char> bytes;
};

struct CaseDesc {
    cannsim::ChipConfig chip{};
    fe::PlatFormInfos platform;
    std::vector<TensorDesc> tensors;
    std::vector<AttrDesc> attrs;
    int jobs = 1;
    bool sample_blocks = false;   // time only the first, middle and last block (estimates)
    bool count_only = false;      // checks and accounting only: no data moves (cannsim::count_only)
    bool tiling_only = false;     // stop after the tiling child: block dim, key, workspace, digest
    int block_cpu_seconds = 10;
    uint64_t max_workspace = 1ull << 30;
    int result_fd = -1;           // opened by the runner; closed in every child before candidate code
    int diag_fd = -1;             // the same for diag.jsonl (the children report on their own pipes)
};

static std::vector<char> unhex(const std::string& s) {
    std::vector<char> out;
    if (s == "-") return out;
    for (size_t i = 0; i + 1 < s.size(); i += 2) out.push_back(static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16)));
    return out;
}

static bool parse_case(const char* path, CaseDesc& c) {
    std::ifstream in(path);
    if (!in) return false;
    std::string key;
    while (in >> key) {
        if (key == "chip") {
            std::string name, soc, short_soc;
            in >> name >> soc >> short_soc >> c.chip.arch >> c.chip.vector_cores >> c.platform.core_num_aic
               >> c.chip.ub_bytes >> c.chip.max_buffers >> c.chip.max_queue_buffers >> c.platform.l1_bytes
               >> c.platform.l0a_bytes >> c.platform.l0b_bytes >> c.platform.l0c_bytes >> c.platform.l2_bytes
               >> c.platform.hbm_bytes;
            std::snprintf(c.chip.name, sizeof c.chip.name, "%s", name.c_str());
            std::snprintf(c.platform.soc_version, sizeof c.platform.soc_version, "%s", soc.c_str());
            std::snprintf(c.platform.short_soc_version, sizeof c.platform.short_soc_version, "%s", short_soc.c_str());
            c.platform.arch = static_cast<uint32_t>(c.chip.arch);
            c.platform.core_num_aiv = static_cast<uint32_t>(c.chip.vector_cores);
            c.platform.ub_bytes = c.chip.ub_bytes;
            c.chip.l1_bytes = c.platform.l1_bytes; c.chip.l0a_bytes = c.platform.l0a_bytes;   // the cube buffers
            c.chip.l0b_bytes = c.platform.l0b_bytes; c.chip.l0c_bytes = c.platform.l0c_bytes;
        } else if (key == "input" || key == "output") {
            TensorDesc t;
            t.is_output = key == "output";
            size_t ndim = 0;
            in >> t.name >> t.ge_dtype >> ndim;
            t.shape.resize(ndim);
            for (auto& d : t.shape) in >> d;
            in >> t.path >> t.pad >> t.nbytes;
            c.tensors.push_back(t);
        } else if (key == "attr") {
            AttrDesc a;
            std::string hex;
            in >> a.kind >> hex;
            a.bytes = unhex(hex);
            c.attrs.push_back(a);
        } else if (key == "jobs") {
            in >> c.jobs;
        } else if (key == "cost") {
            std::string rest;
            std::getline(in, rest);
            cannsim::cost::configure(rest.c_str());
        } else if (key == "sample_blocks") {
            int on = 0;
            in >> on;
            c.sample_blocks = on != 0;
        } else if (key == "count_only") {
            int on = 0;
            in >> on;
            c.count_only = on != 0;
        } else if (key == "tiling_only") {
            int on = 0;
            in >> on;
            c.tiling_only = on != 0;
        } else if (key == "block_cpu_seconds") {
            in >> c.block_cpu_seconds;
        } else if (key == "max_workspace") {
            in >> c.max_workspace;
        } else if (key == "result_fd") {
            in >> c.result_fd;
        } else if (key == "diag_fd") {
            in >> c.diag_fd;
        } else {
            std::string rest;
            std::getline(in, rest);
        }
    }
    return true;
}

// ---------------------------------------------------------------- diagnostics
static int g_diag_fd = -1;
static int64_t g_block = -1;

static void json_escape(const char* s, char* out, size_t cap) {
    size_t o = 0;
    for (; *s && o + 7 < cap; ++s) {
        unsigned char ch = static_cast<unsigned char>(*s);
        if (ch == '"' || ch == '\\') { out[o++] = '\\'; out[o++] = static_cast<char>(ch); }
        else if (ch < 0x20) { o += std::snprintf(out + o, cap - o, "\\u%04x", ch); }
        else out[o++] = static_cast<char>(ch);
    }
    out[o] = 0;
}

// ---------------------------------------------------------------- where a crash happened
// The faulting instruction and its callers, as offsets from the executable's load base (the runner
// resolves them to source lines with the build's debug line tables). Filled by the crash paths
// before they report; "?" stands for a frame outside the executable (libc, libstdc++).
extern "C" char __executable_start;   // the ELF header of the executable (GNU ld, gold, lld)
extern "C" char _end;
static char g_frames[32 * 19 + 1];
static sigjmp_buf g_walk_jump;
static volatile sig_atomic_t g_walking = 0;

struct FrameWalk {
    uintptr_t pc[40];
    int n = 0;
};

static _Unwind_Reason_Code walk_frame(_Unwind_Context* ctx, void* arg) {
    auto* w = static_cast<FrameWalk*>(arg);
    int before = 0;
    const uintptr_t ip = _Unwind_GetIPInfo(ctx, &before);
    if (w->n >= 40) return _URC_END_OF_STACK;
    w->pc[w->n++] = before ? ip : ip | (uintptr_t(1) << 63);   // top bit: a return address
    return _URC_NO_REASON;
}

// `pc` is the faulting instruction (0 when not from a signal: every frame of the walk is listed).
// The walk uses the unwind tables (-Og leaves no frame-pointer chain); a stack the kernel smashed
// can make it fault, which ends the walk (the nested fault jumps back here) with the frames so far.
static void capture_frames(uintptr_t pc) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(&__executable_start), hi = reinterpret_cast<uintptr_t>(&_end);
    size_t o = 0;
    auto add = [&](uintptr_t a, bool ret) {
        if (o + 20 >= sizeof g_frames) return;
        if (a >= lo && a < hi) o += std::snprintf(g_frames + o, sizeof g_frames - o, "%s%s%llx", o ? " " : "",
                                                 ret ? "r" : "", static_cast<unsigned long long>(a - lo));
        else o += std::snprintf(g_frames + o, sizeof g_frames - o, "%s?", o ? " " : "");
    };
    g_frames[0] = 0;
    static FrameWalk w;
    w.n = 0;
    if (sigsetjmp(g_walk_jump, 1) == 0) {
        g_walking = 1;
        sigset_t faults;
        sigemptyset(&faults);
        sigaddset(&faults, SIGSEGV);
        sigaddset(&faults, SIGBUS);
        sigprocmask(SIG_UNBLOCK, &faults, nullptr);
        _Unwind_Backtrace(walk_frame, &w);
    }
    g_walking = 0;
    int from = 0;
    if (pc) {   // the walk goes through the handler and the signal frame first
        from = w.n;
        for (int k = 0; k < w.n; ++k)
            if (w.pc[k] == pc) { from = k + 1; break; }
        add(pc, false);
    }
    for (int k = from; k < w.n && k < from + 31; ++k) {
        const bool ret = (w.pc[k] >> 63) != 0;
        add(w.pc[k] & ~(uintptr_t(1) << 63), ret);
    }
}

static uintptr_t fault_pc(void* ctx) {
    if (!ctx) return 0;
    const auto* uc = static_cast<const ucontext_t*>(ctx);
#if defined(__x86_64__)
    return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
    (void)uc;
    return 0;
#endif
}

// Harness findings, in the runtime's JSON-lines format (with the frames of a crash, when captured).
static void report(const char* id, const char* severity, int line, const char* api, const char* fmt, ...) {
    char msg[768], esc[1600], buf[2048 + sizeof g_frames];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_escape(msg, esc, sizeof esc);
    int n = std::snprintf(buf, sizeof buf,
                          "{\"id\":\"%s\",\"severity\":\"%s\",\"api\":\"%s\",\"line\":%d,\"block\":%lld,"
                          "\"message\":\"%s\",\"frames\":\"%s\",\"source\":\"harness\"}\n",
                          id, severity, api, line, static_cast<long long>(g_block), esc, g_frames);
    if (g_diag_fd >= 0 && n > 0) (void)!write(g_diag_fd, buf, static_cast<size_t>(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
}

// ---------------------------------------------------------------- GM buffers with guard pages
struct GmBuffer {
    std::string name;
    uint8_t* region = nullptr;   // guard page, mapping, guard page
    size_t region_len = 0;
    uint8_t* data = nullptr;
    uint64_t nbytes = 0;
    uint8_t* alias_region = nullptr;   // the PROT_NONE twin of `region` the kernel is given (gm_alias.h)
    uint8_t* alias = nullptr;          // `data` as the kernel sees it
};
static std::vector<GmBuffer> g_gm;

static size_t page_size() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Maps `fd` (or anonymous shared memory when fd < 0) so that the data of `nbytes`, starting `pad`
// bytes into the mapping, ends within 32 bytes of a PROT_NONE guard page. `populate`: map the
// pages writable now, in one call, instead of one write fault per page (the output poison writes
// every one of them).
static bool map_gm(const std::string& name, int fd, uint64_t pad, uint64_t nbytes, GmBuffer& out,
                   bool populate = false) {
    size_t ps = page_size();
    size_t body = round_up(pad + nbytes == 0 ? 1 : pad + nbytes, ps);
    size_t total = body + 2 * ps;
    void* r = cannsim::vault::random_reservation(total);   // not beside its alias (alias_gm)
    if (!r) r = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return false;
    uint8_t* base = static_cast<uint8_t*>(r);
    const int flags = MAP_SHARED | MAP_FIXED;
    void* m;
    if (fd >= 0) m = mmap(base + ps, body, PROT_READ | PROT_WRITE, flags, fd, 0);
    else m = mmap(base + ps, body, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { munmap(r, total); return false; }
#ifdef MADV_POPULATE_WRITE
    if (populate) (void)madvise(m, body, MADV_POPULATE_WRITE);   // older kernels: faults as usual
#endif
    out.name = name;
    out.region = base;
    out.region_len = total;
    out.data = base + ps + pad;
    out.nbytes = nbytes;
    return true;
}

// Gives `b` an address range of the same layout that nobody can touch: the kernel gets it, the
// emulator's GM accesses translate it to the real mapping (cannsim::gm_real), a raw access faults.
static bool alias_gm(GmBuffer& b) {
    void* r = mmap(nullptr, b.region_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return false;
    b.alias_region = static_cast<uint8_t*>(r);
    b.alias = b.alias_region + (b.data - b.region);
    return cannsim::register_gm_alias(b.alias_region, b.region, b.region_len);
}

static const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGABRT: return "SIGABRT";
        case SIGSYS: return "SIGSYS";
        case SIGXCPU: return "SIGXCPU";
        case SIGKILL: return "SIGKILL";
        case SIGXFSZ: return "SIGXFSZ";
        case SIGTRAP: return "SIGTRAP";
        default: return "signal";
    }
}

static size_t g_page = 4096;
static uintptr_t g_ub_open[4];     // UB view pages opened for the instruction being single-stepped
static int g_ub_open_n = 0;

// The live UB buffer (slot) holding byte `off` of the arena, or -1.
static int ub_slot_at(uint64_t off) {
    const auto& st = cannsim::detail::state();
    for (size_t k = 0; k < st.slots.size(); ++k)
        if (st.slots[k].live && off >= st.slots[k].offset && off < st.slots[k].offset + st.slots[k].bytes)
            return static_cast<int>(k);
    return -1;
}

static bool in_ub_view(uintptr_t addr) {
    const auto& st = cannsim::detail::state();
    const uintptr_t base = reinterpret_cast<uintptr_t>(st.ub_alias);
    return base && addr >= base && addr - base < st.ub_storage.bytes;
}

static const char* g_phase = "kernel";

static void crash_handler(int sig, siginfo_t* info, void* ctx) {
    if (g_walking) siglongjmp(g_walk_jump, 1);   // the frame walk itself faulted (capture_frames)
    capture_frames(fault_pc(ctx));
    uintptr_t addr = reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr);
    size_t ps = page_size();
#ifndef SEGV_PKUERR
#define SEGV_PKUERR 4
#endif
    if (sig == SIGSEGV && (cannsim::vault::contains(addr) || (info && info->si_code == SEGV_PKUERR))) {
        report("RUN.INTEGRITY", "error", 0, "", "%s: the %s read or wrote the emulator's protected state at 0x%llx "
               "(%s); kernel code reaches the emulator only through the AscendC APIs", signal_name(sig), g_phase,
               static_cast<unsigned long long>(addr), cannsim::vault::contains(addr)
                   ? "the vault: the cost hooks' operand record, where GM and UB really are"
                   : "the real GM or UB pages behind the kernel's views, under the vault's data key");
        _exit(kExitReported);
    }
    if ((sig == SIGSEGV || sig == SIGBUS) && in_ub_view(addr)) {
        report("RUN.INTEGRITY", "error", 0, "", "%s: the %s accessed UB byte %llu through a raw pointer in a way "
               "the emulator cannot charge (an instruction touching several UB pages, or a host without "
               "single-stepping); use LocalTensor::GetValue/SetValue or the vector APIs", signal_name(sig), g_phase,
               static_cast<unsigned long long>(addr - reinterpret_cast<uintptr_t>(cannsim::detail::state().ub_alias)));
        _exit(kExitReported);
    }
    if (sig == SIGSEGV || sig == SIGBUS) {
        for (const auto& b : g_gm) {
            uintptr_t alo = reinterpret_cast<uintptr_t>(b.alias_region);
            if (b.alias_region && addr >= alo && addr < alo + b.region_len) {
                const long long off = static_cast<long long>(addr - reinterpret_cast<uintptr_t>(b.alias));
                report("RUN.INTEGRITY", "error", 0, "", "%s: the %s accessed GM buffer '%s' (byte %lld of %llu) "
                       "through a raw pointer; GM is read and written with DataCopy/DataCopyPad or "
                       "GlobalTensor::GetValue/SetValue, whose work is charged (a raw access would not be)",
                       signal_name(sig), g_phase, b.name.c_str(), off, static_cast<unsigned long long>(b.nbytes));
                _exit(kExitReported);
            }
        }
        for (const auto& b : g_gm) {
            // an aliased buffer's real mapping is known to the vault only (forget_real)
            cannsim::GmAlias e{};
            const bool aliased = b.alias_region && cannsim::gm_alias_of(reinterpret_cast<uintptr_t>(b.alias_region), e);
            uintptr_t lo = aliased ? e.real : reinterpret_cast<uintptr_t>(b.region);
            uintptr_t start = aliased ? lo + static_cast<uintptr_t>(b.alias - b.alias_region) : reinterpret_cast<uintptr_t>(b.data);
            uintptr_t end = start + b.nbytes;
            uintptr_t hi = lo + b.region_len;
            if (addr >= lo && addr < start) {
                report("L2.GM_BOUNDS", "error", 0, "", "%s: the %s accessed GM %zu bytes before the start of "
                       "buffer '%s' (%llu bytes); the chip reports an out-of-range MTE/scalar address",
                       signal_name(sig), g_phase, static_cast<size_t>(start - addr), b.name.c_str(),
                       static_cast<unsigned long long>(b.nbytes));
                _exit(kExitReported);
            }
            if (addr >= end && addr < hi) {
                report("L2.GM_BOUNDS", "error", 0, "", "%s: the %s accessed GM %zu bytes past the end of "
                       "buffer '%s' (%llu bytes); the chip reports an out-of-range MTE/scalar address",
                       signal_name(sig), g_phase, static_cast<size_t>(addr - end), b.name.c_str(),
                       static_cast<unsigned long long>(b.nbytes));
                _exit(kExitReported);
            }
        }
        if (addr < 16 * ps) {
            report("RUN.CRASH", "error", 0, "", "%s: null pointer dereference in the %s (address 0x%llx)",
                   signal_name(sig), g_phase, static_cast<unsigned long long>(addr));
            _exit(kExitReported);
        }
        report("RUN.CRASH", "error", 0, "", "%s: invalid memory access in the %s at address 0x%llx "
               "(outside every GM buffer and UB)", signal_name(sig), g_phase, static_cast<unsigned long long>(addr));
        _exit(kExitReported);
    }
    report("RUN.CRASH", "error", 0, "", "%s in the %s", signal_name(sig), g_phase);
    _exit(kExitReported);
}

// ---------------------------------------------------------------- scalar UB access through raw pointers
// Kernel code sees UB at a PROT_NONE reservation beside the arena (runtime.h UbArena), so
// `(__ubuf__ T*)t.GetPhyAddr()` dereferenced faults here. On x86-64 the fault is charged as one
// scalar UB access (as GetValue/SetValue are: legal on the chip, at scalar cost), the page is
// mapped with a copy of the arena's page and the instruction single-stepped (the trap flag); the
// trap copies the page back and reserves it again. Elsewhere, and for an instruction that touches
// more pages than a scalar access can, the run is refused.
static bool ub_fault(int sig, siginfo_t* info, void* ctx) {
#if defined(__x86_64__)
    auto* uc = static_cast<ucontext_t*>(ctx);
    constexpr greg_t kTrapFlag = 0x100;
    if (sig == SIGTRAP) {
        if (g_ub_open_n == 0) return false;
        auto& st = cannsim::detail::state();
        const uintptr_t base = reinterpret_cast<uintptr_t>(st.ub_alias);
        uint8_t* ub = cannsim::detail::ub_real();
        for (int k = 0; k < g_ub_open_n; ++k) {
            void* page = reinterpret_cast<void*>(g_ub_open[k]);
            std::memcpy(ub + (g_ub_open[k] - base), page, g_page);
            if (mmap(page, g_page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
                _exit(kExitReported);
        }
        g_ub_open_n = 0;
        uc->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
        return true;
    }
    const uintptr_t addr = reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr);
    if (sig != SIGSEGV || !in_ub_view(addr) || g_ub_open_n >= 4) return false;
    const uint64_t off = addr - reinterpret_cast<uintptr_t>(cannsim::detail::state().ub_alias);
    cannsim::cost::scalar_access(ub_slot_at(off), (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0, off, off + 1);
    const uintptr_t page = addr & ~(static_cast<uintptr_t>(g_page) - 1);
    void* at = reinterpret_cast<void*>(page);
    if (mmap(at, g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) return false;
    auto& st = cannsim::detail::state();
    std::memcpy(at, cannsim::detail::ub_real() + (page - reinterpret_cast<uintptr_t>(st.ub_alias)), g_page);
    g_ub_open[g_ub_open_n++] = page;
    uc->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
    return true;
#else
    (void)sig; (void)info; (void)ctx;
    return false;
#endif
}

static void fault_handler(int sig, siginfo_t* info, void* ctx) {
    if (!ub_fault(sig, info, ctx)) crash_handler(sig, info, ctx);
}

static void out_of_memory() {
    report("RUN.MEMORY", "error", 0, "", "the %s ran out of memory (an allocation failed under the "
           "sandbox's address-space limit)", g_phase);
    _exit(kExitReported);
}

static void on_terminate() {
    capture_frames(0);   // __cxa_throw's caller is still on the stack
    report("RUN.CRASH", "error", 0, "", "the %s ended with an uncaught C++ exception (std::terminate)", g_phase);
    _exit(kExitReported);
}

// The result channel: written by this (launcher) process only. Children close it before they run
// candidate code, so a kernel cannot write a verdict or a cost line there.
static int g_result_fd = -1;

// Per block, in memory shared with the launcher: set by the harness after the entry returned and
// end_block ran (a block that exits any other way has no record), with the block's cost figures.
struct BlockRecord {
    int done;
    char cost[1016];
};
static BlockRecord* g_records = nullptr;
static pid_t g_launcher_pid = 0;

// The launcher's own CPU limit (the sandbox's RLIMIT_CPU): at the soft limit the kernel sends
// SIGXCPU, which a pid namespace's init (this process) would ignore without a handler, so the hard
// limit's SIGKILL would end the run with no word of why. The handler records it on the result
// channel first. Only a SIGXCPU from the kernel (SI_KERNEL: the rlimit) counts, and only in the
// launcher (children reset it: enter_candidate_child).
static void launcher_cpu_limit(int, siginfo_t* info, void*) {
    if (info->si_code != SI_KERNEL || getpid() != g_launcher_pid) return;
    static const char line[] = "launcher_cpu_limit\n";
    if (g_result_fd >= 0) (void)!write(g_result_fd, line, sizeof line - 1);
    _exit(kExitReported);
}

// Drops a buffer's real addresses from this copy (the vault's table keeps them): memory a kernel
// can search holds only the alias.
static void forget_real(GmBuffer& b) {
    if (!b.alias_region) return;
    explicit_bzero(&b.region, sizeof b.region);
    explicit_bzero(&b.data, sizeof b.data);
}

// Every descriptor above stderr but the diagnostics and `keep` (one a static initialiser of the
// candidate opened in the launcher, /proc/self/mem say, is gone before candidate code runs here).
static void close_other_fds(int keep) {
    int keeps[2] = {g_diag_fd, keep};
    if (keeps[0] > keeps[1]) std::swap(keeps[0], keeps[1]);
    unsigned from = 3;
    for (int k : keeps) {
        if (k < static_cast<int>(from)) continue;
        if (k > static_cast<int>(from) && syscall(SYS_close_range, from, static_cast<unsigned>(k - 1), 0) != 0)
            for (int fd = static_cast<int>(from); fd < k; ++fd) close(fd);
        from = static_cast<unsigned>(k) + 1;
    }
    if (syscall(SYS_close_range, from, ~0u, 0) != 0)
        for (int fd = static_cast<int>(from); fd < 65536; ++fd) close(fd);
}

// Zeroes the stack below this frame: the launcher's dead frames (mapping GM, placing the arena)
// may hold addresses the vault keeps.
__attribute__((noinline)) static void scrub_stack() {
    char below[128 * 1024];
    explicit_bzero(below, sizeof below);
    asm volatile("" : : "r"(below) : "memory");
}

// Puts the real GM pages of every aliased buffer (the bodies between their guard pages) under the
// vault's data key: a kernel that found a real address (a dead stack frame of an emulated API)
// faults on it unless an API is running (vault.h open_data/close_data).
static void key_real_gm() {
    const size_t ps = page_size();
    cannsim::GmAlias e[cannsim::kMaxGmAliases];
    int count = 0;
    {
        cannsim::vault::Open open(true);
        const cannsim::RealMappings& t = cannsim::real_mappings();
        for (int i = 0; i < t.count && i < cannsim::kMaxGmAliases; ++i) e[count++] = t.entries[i];
    }
    for (int i = 0; i < count; ++i)
        if (e[i].bytes > 2 * ps) cannsim::vault::key_data(reinterpret_cast<void*>(e[i].real + ps), e[i].bytes - 2 * ps);
    explicit_bzero(e, sizeof e);
}

static void enter_candidate_child(const char* phase, int64_t block, int cpu_seconds, int keep_fd = -1) {
    // A child dies with the launcher: without a pid namespace (no root, the shell chain's fallback)
    // nothing else would end it before its CPU limit when the app and its launcher are killed. A
    // launcher already gone before the prctl is seen in getppid().
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != g_launcher_pid) _exit(kExitReported);
    if (g_result_fd >= 0) close(g_result_fd);
    close_other_fds(keep_fd);
    for (auto& b : g_gm) forget_real(b);
    key_real_gm();
    g_phase = phase;
    g_block = block;
    static char altstack[64 * 1024];
    stack_t ss{};
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    sigaltstack(&ss, nullptr);
    struct sigaction sa{};
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    for (int s : {SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(s, &sa, nullptr);
    // SIGSEGV and SIGTRAP come back for every charged raw UB access (ub_fault); a fault while the
    // handler runs (the signal is blocked then) kills the process.
    g_page = page_size();
    struct sigaction ub{};
    ub.sa_sigaction = fault_handler;
    ub.sa_flags = SA_SIGINFO | SA_ONSTACK;
    for (int s : {SIGSEGV, SIGTRAP}) sigaction(s, &ub, nullptr);
    std::set_new_handler(out_of_memory);
    std::set_terminate(on_terminate);
    signal(SIGXCPU, SIG_DFL);   // the launcher's handler is not a child's: its CPU limit ends it
    if (cpu_seconds > 0) {
        rlimit rl{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds + 1)};
        setrlimit(RLIMIT_CPU, &rl);
    }
    forbid_fork();
}

// ---------------------------------------------------------------- a block's cost events
// The block's own per-API vector counts (`"vec":{...}` of its record, for calibration refits; not
// used in the estimate), as `,"vec":{...}` when present and well-formed, else empty.
static std::string vector_counts(BlockRecord& r) {
    r.cost[sizeof r.cost - 1] = 0;
    const char* v = std::strstr(r.cost, "\"vec\":{");
    if (!v) return "";
    const char* end = std::strchr(v + 7, '}');
    if (!end) return "";
    for (const char* q = v + 7; q < end; ++q)
        if (*q < 0x20 || *q > 0x7e || *q == '{') return "";
    return "," + std::string(v, end + 1);
}

// The block's API calls so far that become vector (V) and DMA (MTE2, MTE3) events, from the
// runtime's per-API counters: kept apart from the timeline, so a kernel that switches forwarding
// off around its work and restores the timeline afterwards leaves counts its events do not match.
static void api_calls(double out[3]) {
    out[0] = out[1] = out[2] = 0;
    for (const auto& [k, v] : cannsim::detail::state().costs) {
        if (k.api == "SetFlag" || k.api == "WaitFlag" || k.api == "PipeBarrier") continue;
        // Fixpipe's GM writes travel as DMA events on the FIX pipe, counted with MTE3's
        const int at = k.pipe == PIPE_V ? 0 : k.pipe == PIPE_MTE2 ? 1 : k.pipe == PIPE_MTE3 || k.pipe == PIPE_FIX ? 2 : -1;
        if (at >= 0) out[at] += static_cast<double>(v.calls);
    }
}

// The launcher's end of one block's event pipe: whole events are replayed into a timeline owned by
// this process; a sequence gap, an invalid field, an event before the begin mark or after the end
// mark, a torn event, or vector/DMA events fewer or more than the calls counted between the marks
// marks the block's figures as untrusted.
struct EventStream {
    int fd = -1;
    cannsim::cost::Timeline timeline;
    uint32_t expect = 0;
    bool ended = false, bad = false;
    double begin[3] = {0, 0, 0}, seen[3] = {0, 0, 0};
    size_t have = 0;
    alignas(cannsim::cost::Event) char buf[64 * sizeof(cannsim::cost::Event)];

    void start(int read_fd, cannsim::cost::Params p, uint32_t block_dim) {
        if (block_dim > 0 && static_cast<int>(block_dim) < p.active_cores) p.active_cores = static_cast<int>(block_dim);
        fd = read_fd;
        timeline.reset(p);
        expect = 0;
        ended = bad = false;
        have = 0;
        for (int k = 0; k < 3; ++k) begin[k] = seen[k] = 0;
    }
    // Reads what is there; false at the end of the stream (closes it).
    bool read_some() {
        if (fd < 0) return false;
        const ssize_t n = read(fd, buf + have, sizeof buf - have);
        if (n < 0 && errno == EINTR) return true;
        if (n <= 0) {
            if (have) bad = true;   // a torn event
            close(fd);
            fd = -1;
            return false;
        }
        have += static_cast<size_t>(n);
        size_t off = 0;
        for (; have - off >= sizeof(cannsim::cost::Event); off += sizeof(cannsim::cost::Event)) {
            cannsim::cost::Event e;
            std::memcpy(&e, buf + off, sizeof e);
            if (bad) continue;
            if (ended || e.seq != expect || (e.seq == 0) != (e.op == cannsim::cost::EV_BEGIN)) { bad = true; continue; }
            ++expect;
            if (e.op == cannsim::cost::EV_BEGIN) {
                begin[0] = e.a; begin[1] = e.b; begin[2] = e.c;
            } else if (e.op == cannsim::cost::EV_END) {
                ended = true;
                if (e.a - begin[0] != seen[0] || e.b - begin[1] != seen[1] || e.c - begin[2] != seen[2]) bad = true;
            } else if (!cannsim::cost::resolve(e) || !timeline.apply(e)) {
                bad = true;
            } else if (e.op == cannsim::cost::EV_VECTOR) {
                ++seen[0];
            } else if (e.op == cannsim::cost::EV_DMA) {
                ++seen[e.pipe == cannsim::cost::MTE2 ? 1 : 2];
            }
        }
        std::memmove(buf, buf + off, have - off);
        have -= off;
        return true;
    }
    void drain() { while (read_some()) {} }
};

// ---------------------------------------------------------------- a child's findings
// diag.jsonl is this process's alone (the runner's descriptor, closed in every child). A child
// reports on a packet-mode pipe at kDiagFd: each finding is one write, hence one packet, read back
// whole, so text kernel code writes there (an unterminated line, say) is a packet of its own and
// cannot swallow the next finding, and nothing written can be taken back. A packet that is one JSON
// object is copied as one line, with the child it came from as "from" (last, so it wins over any
// "from" of the packet); anything else is dropped. Past kDiagCap bytes only each child's first error
// is still copied: a flood (of the kernel's own lines, say) cannot push a finding out of the file.
static int g_diag_file = -1;
static uint64_t g_diag_written = 0;

// A pipe whose write end (for the child, moved to kDiagFd there) is fds[1]; false when the kernel
// has no packet-mode pipes.
static bool diag_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC | O_DIRECT) != 0) return false;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return true;
}

// In the child, before candidate code: findings go to the pipe, never to the file.
static void report_to_pipe(int write_end) {
    if (write_end != kDiagFd) {
        if (dup2(write_end, kDiagFd) != kDiagFd) _exit(cannsim::cost::kExitEventsLost);
        close(write_end);
    }
    g_diag_fd = kDiagFd;
    cannsim::set_diag_fd(kDiagFd);
}

struct DiagStream {
    int fd = -1;
    int64_t from = -1;
    bool error_past_cap = false;

    void start(int read_fd, int64_t child) { fd = read_fd; from = child; error_past_cap = false; }
    // Copies the packets that are there; false once the stream ended (closes it).
    bool read_some() {
        char buf[kDiagPacket + 32];
        while (fd >= 0) {
            ssize_t n = read(fd, buf, kDiagPacket);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == EAGAIN) return true;
            if (n <= 0) break;
            while (n > 0 && buf[n - 1] == '\n') --n;
            if (n < 2 || buf[0] != '{' || buf[n - 1] != '}' || std::memchr(buf, '\n', n) || std::memchr(buf, '\r', n))
                continue;
            n += std::snprintf(buf + n - 1, 32, ",\"from\":%lld}\n", static_cast<long long>(from)) - 1;
            if (g_diag_written + static_cast<uint64_t>(n) > kDiagCap) {
                static const char kError[] = "\"severity\":\"error\"";
                if (error_past_cap || !memmem(buf, static_cast<size_t>(n), kError, sizeof kError - 1)) continue;
                error_past_cap = true;
            }
            g_diag_written += static_cast<uint64_t>(n);
            cannsim::detail::write_all(g_diag_file, std::string(buf, static_cast<size_t>(n)));
        }
        close(fd);
        fd = -1;
        return false;
    }
    // After the child is gone: what is left in the pipe is all there is.
    void drain() { if (read_some()) { close(fd); fd = -1; } }
};

// ---------------------------------------------------------------- tiling (runs in a child)
struct TilingShared {
    int done;
    uint32_t status;
    uint32_t block_dim;
    int block_dim_line;
    uint64_t key;
    uint64_t data_size;
    uint64_t workspace_total;
    uint64_t workspace_num;
    uint8_t data[kTilingCapacity];
};

static uint64_t tiling_digest(const TilingShared& t) {
    uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](const void* p, size_t n) {
        for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(p)[i]) * 0x100000001b3ull;
    };
    const uint64_t size = t.data_size < kTilingCapacity ? t.data_size : kTilingCapacity;
    mix(&t.block_dim, sizeof t.block_dim);
    mix(&t.key, sizeof t.key);
    mix(&t.workspace_total, sizeof t.workspace_total);
    mix(&size, sizeof size);
    mix(t.data, size);
    return h;
}

static void fill_context(const CaseDesc& c, gert::TilingContext& ctx, TilingShared* shared) {
    for (const auto& t : c.tensors) {
        gert::StorageShape* s;
        gert::CompileTimeTensorDesc* d;
        if (t.is_output) {
            s = &ctx.out_shapes_[ctx.num_outputs_];
            d = &ctx.out_desc_[ctx.num_outputs_];
            ++ctx.num_outputs_;
        } else {
            s = &ctx.in_shapes_[ctx.num_inputs_];
            d = &ctx.in_desc_[ctx.num_inputs_];
            auto& tensor = ctx.in_tensor_[ctx.num_inputs_];
            ctx.in_absent_[ctx.num_inputs_] = t.path == "null";
            ++ctx.num_inputs_;
            for (int64_t dim : t.shape) { tensor.shape_.MutableOriginShape().AppendDim(dim); tensor.shape_.MutableStorageShape().AppendDim(dim); }
            tensor.dtype_ = static_cast<ge::DataType>(t.ge_dtype);
        }
        for (int64_t dim : t.shape) { s->MutableOriginShape().AppendDim(dim); s->MutableStorageShape().AppendDim(dim); }
        d->SetDataType(static_cast<ge::DataType>(t.ge_dtype));
    }
    for (const auto& a : c.attrs) ctx.attrs_.cannsim_add(a.kind, a.bytes.data(), a.bytes.size());
    ctx.raw_.cannsim_bind(shared->data, kTilingCapacity);
}

}  // namespace cannsim_h

int cannsim_glue::launcher_main(int argc, char** argv) {
    using namespace cannsim_h;
    if (argc < 2) { std::fprintf(stderr, "usage: harness CASE_FILE\n"); return 2; }
    CaseDesc c;
    if (!parse_case(argv[1], c)) { std::fprintf(stderr, "harness: cannot read %s\n", argv[1]); return 2; }
    g_launcher_pid = getpid();
    g_diag_file = c.diag_fd >= 0 ? c.diag_fd : open("diag.jsonl", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
    g_diag_fd = g_diag_file;   // the launcher's own findings; a child's come through its pipe
    g_result_fd = c.result_fd;
    {
        struct sigaction xcpu{};
        xcpu.sa_sigaction = launcher_cpu_limit;
        xcpu.sa_flags = SA_SIGINFO;
        sigaction(SIGXCPU, &xcpu, nullptr);
    }
    FILE* result = c.result_fd >= 0 ? fdopen(c.result_fd, "w") : std::fopen("result.txt", "w");
    if (g_diag_fd < 0 || !result) return 2;
    std::setvbuf(result, nullptr, _IONBF, 0);
    std::fprintf(result, "filter %d\n", g_filter_ok ? 1 : 0);

    cannsim::configure_chip(c.chip);
    cannsim::set_diag_fd(g_diag_fd);
    platform_ascendc::PlatformAscendCManager::current() = &c.platform;

    cannsim::set_count_only(c.count_only);

    // GM buffers: the runner's memfds ("fd:N"), files, or anonymous memory for "-". (g_gm never
    // grows past this: no stale copy of a real address is left in freed heap.)
    g_gm.reserve(c.tensors.size() + 2);
    std::vector<uint8_t*> args;
    for (const auto& t : c.tensors) {
        if (t.path == "null") {             // an omitted optional input: a null GM address
            args.push_back(nullptr);
            continue;
        }
        const bool anonymous = t.path == "-";
        const bool inherited = t.path.rfind("fd:", 0) == 0;
        int fd = anonymous ? -1 : inherited ? std::atoi(t.path.c_str() + 3) : open(t.path.c_str(), O_RDWR | O_CLOEXEC);
        GmBuffer b;
        const bool poison = t.is_output && !c.count_only;
        if ((!anonymous && fd < 0) || !map_gm(t.name, fd, t.pad, t.nbytes, b, poison)) {
            std::fprintf(stderr, "harness: cannot map %s\n", t.path.c_str());
            return 3;
        }
        if (fd >= 0) close(fd);
        // Poison outputs: NaN for floats, -1 for ints. Count-only runs never read them back.
        if (poison) std::memset(b.data, 0xFF, t.nbytes);
        if (!alias_gm(b)) { std::fprintf(stderr, "harness: cannot alias %s\n", t.path.c_str()); return 3; }
        g_gm.push_back(b);
        forget_real(b);
        args.push_back(b.alias);
        cannsim::register_gm_buffer(b.alias, t.nbytes, t.name.c_str());
    }

    // Tiling, in a child: candidate host code gets no fork either.
    GmBuffer tiling_shm;
    if (!map_gm("tiling-result", -1, 0, sizeof(TilingShared), tiling_shm)) return 3;
    auto* shared = reinterpret_cast<TilingShared*>(tiling_shm.data);
    std::memset(shared, 0, sizeof(TilingShared));
    int tiling_diag[2];
    if (!diag_pipe(tiling_diag)) { std::fprintf(stderr, "harness: no packet-mode pipe for the findings\n"); return 3; }
    fflush(nullptr);
    pid_t tp = fork();
    if (tp == 0) {
        close(tiling_diag[0]);
        report_to_pipe(tiling_diag[1]);
        enter_candidate_child("host TilingFunc", -1, c.block_cpu_seconds);
        if (!protect_event_fd()) _exit(cannsim::cost::kExitEventsLost);
        gert::TilingContext ctx;
        ctx.platform_ = &c.platform;
        fill_context(c, ctx, shared);
        shared->status = static_cast<uint32_t>(cannsim_glue::run_tiling(&ctx));
        shared->block_dim = ctx.GetBlockDim();
        shared->block_dim_line = ctx.block_dim_line_;
        shared->key = ctx.GetTilingKey();
        shared->data_size = ctx.GetRawTilingData()->GetDataSize();
        uint64_t ws = 0;
        for (size_t i = 0; i < ctx.GetWorkspaceNum(); ++i) ws += ctx.workspace_sizes_[i];
        shared->workspace_total = ws;
        shared->workspace_num = ctx.GetWorkspaceNum();
        shared->done = 1;
        fflush(nullptr);
        _exit(0);
    }
    close(tiling_diag[1]);
    DiagStream tiling_findings;
    tiling_findings.start(tiling_diag[0], -1);
    for (pollfd pf{tiling_diag[0], POLLIN, 0}; tiling_findings.fd >= 0;)
        if (poll(&pf, 1, -1) > 0 || errno == EINTR) tiling_findings.read_some();
        else break;
    int st = 0;
    waitpid(tp, &st, 0);
    tiling_findings.drain();
    std::fprintf(result, "tiling_status %d %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                 WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (!shared->done) {
        if (WIFSIGNALED(st)) std::fprintf(result, "tiling_signal %d\n", WTERMSIG(st));
        std::fprintf(result, "end tiling_failed\n");
        return 0;
    }
    std::fprintf(result, "blockdim %u\nkey %llu\ntiling_bytes %llu\nworkspace %llu\n", shared->block_dim,
                 static_cast<unsigned long long>(shared->key), static_cast<unsigned long long>(shared->data_size),
                 static_cast<unsigned long long>(shared->workspace_total));
    if (shared->status != ge::GRAPH_SUCCESS) {
        report("RUN.TILING", "error", 0, "TilingFunc", "optiling::TilingFunc returned %u instead of "
               "ge::GRAPH_SUCCESS", shared->status);
        std::fprintf(result, "end tiling_failed\n");
        return 0;
    }
    uint32_t block_dim = shared->block_dim;
    if (block_dim == 0) {
        report("RUN.TILING", "error", 0, "SetBlockDim", "TilingFunc never set a block dim: call "
               "context->SetBlockDim(n) with 1 <= n <= %d (the vector cores of %s)", c.chip.vector_cores, c.chip.name);
        std::fprintf(result, "end tiling_failed\n");
        return 0;
    }
    if (static_cast<int64_t>(block_dim) > c.chip.vector_cores) {
        report("L2.CORE_COUNT", "error", shared->block_dim_line, "SetBlockDim", "SetBlockDim(%u) exceeds the %d vector cores of %s: "
               "the launch fails on the chip; use at most PlatformAscendC::GetCoreNumAiv() blocks",
               block_dim, c.chip.vector_cores, c.chip.name);
        std::fprintf(result, "end core_count\n");
        return 0;
    }
    if (shared->workspace_total > c.max_workspace) {
        report("RUN.MEMORY", "error", 0, "GetWorkspaceSizes", "the workspace asked for (%llu bytes) exceeds "
               "the emulator's limit of %llu bytes", static_cast<unsigned long long>(shared->workspace_total),
               static_cast<unsigned long long>(c.max_workspace));
        std::fprintf(result, "end workspace\n");
        return 0;
    }
    // Everything the device side sees of the host's decisions, as one FNV-1a digest: two runs of
    // one device object with equal digests on one case execute alike (a tiling-only candidate whose
    // digests equal its parent's on every case is the parent again).
    std::fprintf(result, "tiling_digest %016llx\n", static_cast<unsigned long long>(tiling_digest(*shared)));
    if (c.tiling_only) {
        std::fprintf(result, "end tiling_only\n");
        return 0;
    }
    GmBuffer ws, tiling;
    if (!map_gm("workspace", -1, 0, shared->workspace_total, ws) ||
        !map_gm("tiling", -1, 0, kTilingCapacity, tiling)) return 3;
    std::memcpy(tiling.data, shared->data, kTilingCapacity);
    if (!alias_gm(ws)) return 3;        // the tiling stays where it is: GET_TILING_DATA reads it in place
    g_gm.push_back(ws);
    g_gm.push_back(tiling);
    forget_real(ws);
    cannsim::register_gm_buffer(ws.alias, shared->workspace_total, "workspace");
    cannsim::register_gm_buffer(tiling.data, kTilingCapacity, "tiling");
    args.push_back(ws.alias);
    args.push_back(tiling.data);
    cannsim::tiling_key_storage() = shared->key;

    // Blocks, `jobs` at a time. A timed-out block stops the launch of further blocks.
    // With sample_blocks only the first, middle and last block run: under the standard split every
    // core gets the same work but the tail ones, so these include the slowest core.
    // A MIX kernel (mix_core.h) runs one process per core: block b's AIC is process b * per, its
    // AIVs the next ones; they all start at once, their cross-core flags wait on each other.
    const uint32_t per = static_cast<uint32_t>(cannsim::mix::processes_per_block());
    if (per > 1 && static_cast<int64_t>(block_dim) > static_cast<int64_t>(c.platform.core_num_aic)) {
        report("L2.CORE_COUNT", "error", shared->block_dim_line, "SetBlockDim", "SetBlockDim(%u) of a MIX kernel exceeds "
               "the %u cube cores of %s: a MIX block is one AIC and its AIVs; use at most GetCoreNumAic() blocks",
               block_dim, c.platform.core_num_aic, c.chip.name);
        std::fprintf(result, "end core_count\n");
        return 0;
    }
    const uint32_t procs = block_dim * per;
    std::vector<uint32_t> order;
    for (uint32_t b = 0; b < block_dim; ++b)
        if (!c.sample_blocks || block_dim <= 3 || b == 0 || b == block_dim / 2 || b + 1 == block_dim)
            for (uint32_t r = 0; r < per; ++r) order.push_back(b * per + r);
    std::vector<pid_t> pids(procs, 0);
    GmBuffer records_shm;
    if (!map_gm("block-records", -1, 0, sizeof(BlockRecord) * procs, records_shm)) return 3;
    g_records = reinterpret_cast<BlockRecord*>(records_shm.data);
    std::memset(g_records, 0, sizeof(BlockRecord) * procs);
    // Blocks share SyncAll arrivals and atomic-write turns (cannsim/multicore.h); a kernel that uses
    // SyncAll gets every block started at once so that the barrier can complete.
    {
        std::unique_ptr<bool[]> run(new bool[procs + 1]());
        for (uint32_t b : order) run[b] = true;
        if (!cannsim::mc::setup(procs, run.get()) || !cannsim::mix::setup(procs)) return 3;
        for (uint32_t b = 0; b < procs; ++b) if (!run[b]) cannsim::mix::proc_ended(b);
    }
    // (a MIX block's cores wait on each other: they run together, `jobs` blocks at a time)
    const uint32_t jobs = static_cast<uint32_t>(c.jobs > 0 ? c.jobs : 1);
    const uint32_t max_jobs = cannsim::mc::uses_sync_all() ? static_cast<uint32_t>(order.size()) : jobs * per;
    // Each block forwards its cost events on a pipe of its own; this process replays them (the
    // block's figures are computed here, never in the block's memory).
    std::vector<EventStream> streams(procs);
    std::vector<DiagStream> findings(procs);
    const cannsim::cost::Params params = cannsim::cost::hooks().params;
    uint32_t next = 0, running = 0;
    bool stop = false;
    auto launch = [&](uint32_t i) {
        int fds[2], diag[2];
        if (pipe2(fds, O_CLOEXEC) != 0) { std::fprintf(result, "block %u events 3\n", i); stop = true; return; }
        if (!diag_pipe(diag)) {
            close(fds[0]);
            close(fds[1]);
            std::fprintf(result, "block %u events 3\n", i);
            stop = true;
            return;
        }
        fflush(nullptr);
        pid_t p = fork();
        if (p == 0) {
            close(fds[0]);
            close(diag[0]);
            report_to_pipe(diag[1]);
            enter_candidate_child("kernel", i, c.block_cpu_seconds, fds[1]);
            int64_t core_idx = i, core_num = block_dim;
            cannsim::mix::enter(i, block_dim, core_idx, core_num);
            cannsim::begin_block(core_idx, core_num);
            double calls[3];
            api_calls(calls);
            cannsim::cost::hooks().timeline.forward_to(fds[1]);   // now at kEventFd
            if (!protect_event_fd()) _exit(cannsim::cost::kExitEventsLost);
            cannsim::cost::hooks().timeline.forward_mark(cannsim::cost::EV_BEGIN, calls);
            cannsim::cost::hooks().sink = g_records[i].cost;
            cannsim::cost::hooks().sink_cap = sizeof g_records[i].cost;
            scrub_stack();
            cannsim::vault::close_data();   // begin_block touched the arena
            // (also the end of an AIC that served its AIVs' Matmul calls: cannsim/matmul.h)
            cannsim::mix::finish() = [&calls, i] {
                cannsim::end_block();
                fflush(nullptr);
                api_calls(calls);
                cannsim::cost::hooks().timeline.forward_mark(cannsim::cost::EV_END, calls);
                g_records[i].done = 1;
                _exit(0);
            };
            cannsim_glue::call_entry(args.data());
            cannsim::mix::finish()();
        }
        close(fds[1]);
        close(diag[1]);
        if (p < 0) { close(fds[0]); close(diag[0]); std::fprintf(result, "block %u events 3\n", i); stop = true; return; }
        streams[i].start(fds[0], params, block_dim);
        findings[i].start(diag[0], i);
        pids[i] = p;
        ++running;
    };
    auto finish_block = [&](uint32_t i, int bst, const rusage& ru) {
        --running;
        cannsim::mc::block_ended(i);
        cannsim::mix::proc_ended(i);
        EventStream& es = streams[i];
        es.drain();   // the block is gone: what is left in its pipe is all there is
        findings[i].drain();
        if (WIFEXITED(bst) && WEXITSTATUS(bst) == 0 && !g_records[i].done) {
            std::fprintf(result, "block %u noend 0\n", i);
        } else if (WIFEXITED(bst)) {
            std::fprintf(result, "block %u exit %d\n", i, WEXITSTATUS(bst));
            if (WEXITSTATUS(bst) == 0 && cannsim::cost::hooks().enabled) {
                if (es.bad || !es.ended) {
                    std::fprintf(result, "block %u events %d\n", i, es.bad ? 2 : 1);
                } else {
                    char buf[512];
                    es.timeline.to_json(buf, sizeof buf, i);
                    std::fprintf(result, "cost %u %s%s}\n", i, std::string(buf, std::strlen(buf) - 1).c_str(),
                                 vector_counts(g_records[i]).c_str());
                }
            }
        } else if (WIFSIGNALED(bst)) {
            int sig = WTERMSIG(bst);
            // and the CPU seconds it had used (wait4): a SIGKILL at its CPU limit's hard end is told
            // apart from one by the memory cap or of unknown origin
            std::fprintf(result, "block %u signal %d %s %.2f\n", i, sig, signal_name(sig),
                         ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6);
            if (sig == SIGXCPU || sig == SIGKILL) stop = true;
        }
    };
    const uint32_t to_run = static_cast<uint32_t>(order.size());
    while (next < to_run || running > 0) {
        while (!stop && next < to_run && running < max_jobs) launch(order[next++]);
        if (stop) for (uint32_t k = next; k < to_run; ++k) { cannsim::mc::block_ended(order[k]); cannsim::mix::proc_ended(order[k]); }
        if (running == 0) break;
        // Read the running blocks' events until one of them ends; a block whose pipe is closed (it
        // is exiting, or closed it and lives on) is looked at every millisecond.
        std::vector<pollfd> pfds;
        std::vector<uint32_t> who;
        bool closed_alive = false;
        for (uint32_t i = 0; i < procs; ++i) {
            if (pids[i] <= 0) continue;
            if (streams[i].fd >= 0) { pfds.push_back({streams[i].fd, POLLIN, 0}); who.push_back(i); }
            else closed_alive = true;
        }
        const size_t events = pfds.size();   // then the findings pipes (a full one would stall its block)
        for (uint32_t i = 0; i < procs; ++i)
            if (pids[i] > 0 && findings[i].fd >= 0) { pfds.push_back({findings[i].fd, POLLIN, 0}); who.push_back(i); }
        if (poll(pfds.data(), pfds.size(), closed_alive || events == 0 ? 1 : -1) < 0 && errno != EINTR) break;
        for (size_t k = 0; k < pfds.size(); ++k)
            if (pfds[k].revents) {
                if (k < events) streams[who[k]].read_some();
                else findings[who[k]].read_some();
            }
        int bst = 0;
        rusage ru{};
        pid_t done;
        while ((done = wait4(-1, &bst, WNOHANG, &ru)) > 0) {
            uint32_t i = 0;
            while (i < procs && pids[i] != done) ++i;
            if (i == procs) continue;
            pids[i] = -1;
            finish_block(i, bst, ru);
        }
        if (done < 0 && errno == ECHILD && running > 0) break;
    }
    if (next < to_run) std::fprintf(result, "not_run %u\n", to_run - next);
    std::fprintf(result, "end ok\n");
    return 0;
}
