// The run sandbox's root part as one program (copilot/sandbox.py builds it once, root-owned, and
// runs it in place of the unshare -> sh -> mount x4 -> prlimit -> setpriv chain; same layers,
// one exec before the launcher's instead of eight).
//
// Usage: sandbox_launch [--parent PID] [--cgroup-procs FILE]... --tmpfs BYTES --cpu SECONDS
//                       --as BYTES --fsize BYTES [--nproc N] [--uid UID] --cwd DIR -- ARGV...
//
// New network, pid, mount and IPC namespaces; this process waits for the namespace's pid 1 and
// exits as it did (the same signal, or its status). It is killed when its parent (PID, the app)
// dies, and pid 1 when it dies; pid 1's death ends every process of the namespace. So a killed app
// (SIGTERM, SIGKILL, Ctrl-C) leaves no launcher and no block running. Pid 1, before any untrusted
// code: mount propagation private, the cgroup joined, the cwd taken (before /tmp is covered),
// private tmpfs on /tmp, /var/tmp and /dev/shm, a fresh /proc, rlimits (CPU, address space, file
// size, no core, processes), supplementary groups cleared, the uid and gid set, inheritable and
// ambient capabilities cleared, no new privileges; then exec ARGV.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <linux/capability.h>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "sandbox: %s: %s\n", what, std::strerror(errno));
    _exit(125);
}

struct Options {
    std::vector<std::string> cgroup_procs;
    unsigned long long tmpfs = 64ull << 20, cpu = 120, as = 4ull << 30, fsize = 256ull << 20, nproc = 0;
    long uid = -1;
    long parent = -1;
    std::string cwd;
    char** argv = nullptr;
};

unsigned long long number(const char* s) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s || *end) {
        std::fprintf(stderr, "sandbox: not a number: %s\n", s);
        _exit(125);
    }
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") { ++i; break; }
        if (i + 1 >= argc) { std::fprintf(stderr, "sandbox: %s needs a value\n", a.c_str()); _exit(125); }
        const char* v = argv[++i];
        if (a == "--cgroup-procs") o.cgroup_procs.push_back(v);
        else if (a == "--tmpfs") o.tmpfs = number(v);
        else if (a == "--cpu") o.cpu = number(v);
        else if (a == "--as") o.as = number(v);
        else if (a == "--fsize") o.fsize = number(v);
        else if (a == "--nproc") o.nproc = number(v);
        else if (a == "--uid") o.uid = static_cast<long>(number(v));
        else if (a == "--parent") o.parent = static_cast<long>(number(v));
        else if (a == "--cwd") o.cwd = v;
        else { std::fprintf(stderr, "sandbox: unknown option %s\n", a.c_str()); _exit(125); }
    }
    if (i >= argc || o.cwd.empty()) { std::fprintf(stderr, "sandbox: no command or no --cwd\n"); _exit(125); }
    o.argv = argv + i;
    return o;
}

void write_text(const std::string& path, const std::string& text) {
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) die(path.c_str());
    if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) die(path.c_str());
    close(fd);
}

void limit(int resource, rlim_t soft, rlim_t hard, const char* name) {
    rlimit r{soft, hard};
    if (setrlimit(resource, &r) != 0) die(name);
}

void drop_inheritable_caps() {
    __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &head, data) != 0) die("capget");
    for (auto& d : data) d.inheritable = 0;
    if (syscall(SYS_capset, &head, data) != 0) die("capset");
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) die("ambient caps");
}

// Die (SIGKILL) with the waiter. `alive`: the read end of a pipe whose write end only the waiter
// holds (hung up = it is gone), for a waiter that died before the prctl.
void die_with_waiter(int alive) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("pdeathsig");
    pollfd p{alive, POLLIN, 0};
    if (poll(&p, 1, 0) != 0) _exit(125);
}

[[noreturn]] void pid_one(const Options& o, int alive) {
    die_with_waiter(alive);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) die("mount propagation");
    for (const auto& f : o.cgroup_procs) write_text(f, std::to_string(getpid()));
    if (chdir(o.cwd.c_str()) != 0) die("chdir");
    const std::string tmp = "size=" + std::to_string(o.tmpfs) + ",mode=1777";
    for (const char* d : {"/tmp", "/var/tmp", "/dev/shm"}) {
        struct stat st;
        if (stat(d, &st) == 0 && S_ISDIR(st.st_mode) &&
            mount("tmpfs", d, "tmpfs", MS_NOSUID | MS_NODEV, tmp.c_str()) != 0) die(d);
    }
    if (mount("proc", "/proc", "proc", 0, nullptr) != 0) die("/proc");
    limit(RLIMIT_CPU, o.cpu, o.cpu + 1, "RLIMIT_CPU");
    limit(RLIMIT_AS, o.as, o.as, "RLIMIT_AS");
    limit(RLIMIT_FSIZE, o.fsize, o.fsize, "RLIMIT_FSIZE");
    limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    if (o.nproc) limit(RLIMIT_NPROC, o.nproc, o.nproc, "RLIMIT_NPROC");
    if (o.uid >= 0) {
        const auto id = static_cast<uid_t>(o.uid);
        drop_inheritable_caps();
        if (setgroups(0, nullptr) != 0) die("setgroups");
        if (setresgid(id, id, id) != 0) die("setresgid");
        if (setresuid(id, id, id) != 0) die("setresuid");
        if (getuid() != id || geteuid() != id || getgid() != id) { errno = EPERM; die("uid drop"); }
        die_with_waiter(alive);   // a uid or gid change clears the parent-death signal
    }
    close(alive);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
    unsetenv("PWD");
    unsetenv("OLDPWD");
    execv(o.argv[0], o.argv);
    die(o.argv[0]);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    // Die with the app; an app that died before the prctl has left this process to a reaper.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("pdeathsig");
    if (o.parent >= 0 && getppid() != static_cast<pid_t>(o.parent)) _exit(125);
    int alive[2];
    if (pipe2(alive, O_CLOEXEC) != 0) die("pipe");
    if (unshare(CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC) != 0) die("unshare");
    const pid_t child = fork();
    if (child < 0) die("fork");
    if (child == 0) {
        close(alive[1]);
        pid_one(o, alive[0]);
    }
    close(alive[0]);
    // The waiter: nothing but wait and pass the ending on (as unshare --fork does).
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");              // passing a SIGSEGV on dumps nothing
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) die("waitpid");
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t all;
        sigemptyset(&all);
        sigaddset(&all, sig);
        sigprocmask(SIG_UNBLOCK, &all, nullptr);
        kill(getpid(), sig);
        _exit(128 + sig);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 125;
}
