"""Run untrusted candidate code (and the compiler on candidate source) in a child that cannot take
the app down, read what it should not, or outlive its run. docs/security.md is the trust model.

Layers, each used where this machine allows it (`sandbox_capabilities()` says which):
- a scrubbed environment (PATH, LANG, HOME = TMPDIR = /tmp; no API keys), stdin closed;
- namespaces (root): network (no network), pid (nothing outlives the run: when the launcher
  exits the kernel kills every process left), mount with private tmpfs on /tmp, /var/tmp and
  /dev/shm and a fresh /proc, IPC; an optional jail (a tmpfs root with only /usr and the given
  directories bound in) for the compiler;
- a uid of its own per run (root: taken from a pool and locked for the run), so concurrent runs
  cannot signal or write each other and RLIMIT_NPROC counts only this run;
- a cgroup per run (memory and process caps for the whole tree; v1 or v2, when writable), else
  the rlimit fallback: CPU seconds, address space per process, processes, file size, no core;
- a new session whose process group is killed on the wall-clock timeout;
- nothing outlives the app: the run's first process gets SIGKILL when the app dies (SIGTERM,
  SIGKILL, Ctrl-C), checked against the race of an app that died first, and so does the pid
  namespace's pid 1 when the first process dies (again after the uid drop, which clears it);
- inside the launcher, a seccomp filter (cannsim/harness.cpp).
The parent reads back only through `read_regular` (no-follow, regular file, owner, size cap) and
the descriptors it opened itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SANDBOX_UID = 65534            # nobody: the fallback when the uid pool is unusable
UID_POOL = (1_500_000, 4096)   # first uid, count: one per concurrent run
OUTPUT_CAP = 64 * 1024
STATE_DIR = Path("/run/cannpilot")


class UnsafeFile(Exception):
    """A file the sandbox left is not a regular file of the expected owner and size."""


@dataclass
class Limits:
    wall_seconds: float = 60.0
    cpu_seconds: int = 120            # the whole process tree's parent; blocks get their own
    address_space_bytes: int = 4 << 30
    processes: int = 64               # processes of this run
    file_bytes: int = 256 << 20
    memory_bytes: int = 6 << 30       # the whole run (cgroup), when a cgroup is available
    tmpfs_bytes: int = 64 << 20       # each private /tmp, /var/tmp, /dev/shm


@dataclass
class SandboxResult:
    returncode: int | None            # None when killed on timeout
    signal: int | None
    timed_out: bool
    wall_seconds: float
    stdout: str
    stderr: str
    uid: int = -1                     # the uid the run had (owner of what it wrote)
    memory: "MemoryRecord | None" = None   # the run's cgroup memory figures (None: no cgroup)


@dataclass
class MemoryRecord:
    """What the run's memory cgroup recorded, read after the run and before the cgroup goes: its
    cap, its peak usage and how many of its processes the kernel's OOM killer ended at the cap."""
    cap_bytes: int | None
    peak_bytes: int | None
    oom_kills: int | None             # None: this kernel's cgroup does not count them


def scrubbed_env(workdir: Path | None = None) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": "/tmp", "TMPDIR": "/tmp"}


def _probe(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _cgroup_layout() -> str | None:
    if os.geteuid() != 0:
        return None
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return "v2" if os.access("/sys/fs/cgroup", os.W_OK) else None
    if os.access("/sys/fs/cgroup/memory", os.W_OK) and os.access("/sys/fs/cgroup/pids", os.W_OK):
        return "v1"
    return None


@lru_cache(maxsize=1)
def sandbox_capabilities() -> dict:
    """What the sandbox enforces on this machine (for `cannpilot doctor` and the docs)."""
    root = os.geteuid() == 0
    unshare = shutil.which("unshare")
    setpriv = shutil.which("setpriv")
    netns = bool(unshare) and _probe([unshare, "-n", "true"])
    namespaces = root and bool(unshare) and _probe(
        [unshare, "-n", "-p", "-f", "-m", "-i", "--kill-child", "--", "sh", "-c",
         "mount -t tmpfs -o size=1m tmpfs /tmp && mount -t proc proc /proc"])
    drop_user = root and bool(setpriv) and _probe(
        [setpriv, f"--reuid={UID_POOL[0]}", f"--regid={UID_POOL[0]}", "--clear-groups", "true"])
    cgroup = _cgroup_layout()
    dies_with_parent = bool(setpriv) and _probe([setpriv, "--pdeathsig", "KILL", "true"])
    return {
        "scrubbed_env": True,
        "dies_with_parent": dies_with_parent,
        "private_tmpdir": namespaces,
        "rlimits": ["RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CORE"],
        "process_group_kill": True,
        "network_namespace": netns,
        "pid_mount_ipc_namespaces": namespaces,
        "drop_to_nobody": drop_user,
        "uid_per_run": drop_user,
        "cgroup": cgroup,
        "nproc_limit_effective": drop_user or not root,
        "seccomp": os.path.exists("/proc/self/status") and "Seccomp:" in Path("/proc/self/status").read_text(),
        "protection_keys": _protection_keys(),
        "notes": _notes(root, netns, drop_user, namespaces, cgroup, dies_with_parent) + (
            [] if _protection_keys() else ["no protection keys (pku): the emulator's vault is a plain page, so a kernel "
                                           "that searches its memory can forge its cost record and find GM and UB"]),
    }


def _protection_keys() -> bool:
    """x86 memory protection keys (CPU `pku`, enabled by the kernel: `ospke`): what keeps the
    emulator's vault (cannsim/vault.h) out of kernel code's reach."""
    try:
        flags = next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("flags")), [])
    except OSError:
        return False
    return "pku" in flags and "ospke" in flags


def _notes(root: bool, netns: bool, drop_user: bool, namespaces: bool, cgroup: str | None,
           dies_with_parent: bool) -> list[str]:
    notes = []
    if not dies_with_parent:
        notes.append("no setpriv --pdeathsig: where the sandbox launcher is not used (the compiler, no root), a run "
                     "of an app that is killed lives on until its limits end it")
    if not netns:
        notes.append("no network namespace: candidate sockets are refused by the seccomp filter only")
    if root and not drop_user:
        notes.append("running as root without setpriv: candidate code runs as root (files writable)")
    if not root:
        notes.append("not root: candidate code runs as the current user; RLIMIT_NPROC counts its processes; "
                     "no pid/mount namespace, private /tmp or cgroup")
    if root and not namespaces:
        notes.append("no pid/mount namespaces: a process left by a run is killed with its process group only")
    if not cgroup:
        notes.append("no writable cgroup: memory is capped per process (RLIMIT_AS), processes by RLIMIT_NPROC")
    return notes


# ---------------------------------------------------------------- per-run uid

_uid_lock = threading.Lock()
_uid_next = [0]


@contextlib.contextmanager
def run_uid():
    """A uid of the pool no other run (in any process) holds, for the duration of the block; the
    current uid when the sandbox cannot switch users."""
    if not sandbox_capabilities()["drop_to_nobody"]:
        yield os.getuid()
        return
    lock_dir = STATE_DIR / "uids"
    lock_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    first, count = UID_POOL
    with _uid_lock:
        start = _uid_next[0]
        _uid_next[0] = (start + 1) % count
    for k in range(count):
        uid = first + (start + k + os.getpid()) % count
        fd = os.open(lock_dir / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            _kill_uid(uid)          # a leftover of a crashed parent (namespaces normally prevent it)
            yield uid
        finally:
            _kill_uid(uid)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        return
    yield SANDBOX_UID


def _kill_uid(uid: int) -> None:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass


# ---------------------------------------------------------------- cgroup per run

class _Cgroup:
    """A memory + pids cgroup for one run (v1: two hierarchies; v2: one), removed afterwards."""

    def __init__(self, name: str, limits: Limits):
        self.dirs: list[Path] = []
        layout = sandbox_capabilities()["cgroup"]
        try:
            if layout == "v1":
                mem = Path("/sys/fs/cgroup/memory/cannpilot") / name
                pids = Path("/sys/fs/cgroup/pids/cannpilot") / name
                for d in (mem, pids):
                    _remove_stale_cgroups(str(d.parent))
                    d.mkdir(parents=True, exist_ok=True)
                    self.dirs.append(d)
                (mem / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                (pids / "pids.max").write_text(str(limits.processes))
            elif layout == "v2":
                base = Path("/sys/fs/cgroup/cannpilot")
                base.mkdir(exist_ok=True)
                with contextlib.suppress(OSError):
                    (base / "cgroup.subtree_control").write_text("+memory +pids")
                d = base / name
                _remove_stale_cgroups(str(base))
                d.mkdir(exist_ok=True)
                self.dirs.append(d)
                (d / "memory.max").write_text(str(limits.memory_bytes))
                (d / "pids.max").write_text(str(limits.processes))
        except OSError:
            self.close()
            self.dirs = []

    def memory(self) -> MemoryRecord | None:
        """The memory cgroup's cap, peak and OOM kills (v1: memory.limit_in_bytes,
        memory.max_usage_in_bytes, memory.oom_control's oom_kill; v2: memory.max, memory.peak,
        memory.events' oom_kill); None without one."""
        if not self.dirs:
            return None
        d = self.dirs[0]
        v1 = (d / "memory.oom_control").exists()

        def number(name: str, key: str | None = None) -> int | None:
            try:
                text = (d / name).read_text()
            except OSError:
                return None
            if key is not None:
                text = next((line.split()[1] for line in text.splitlines() if line.split()[:1] == [key]), "")
            text = text.strip()
            return int(text) if text.isdigit() else None

        if v1:
            return MemoryRecord(number("memory.limit_in_bytes"), number("memory.max_usage_in_bytes"),
                                number("memory.oom_control", "oom_kill"))
        return MemoryRecord(number("memory.max"), number("memory.peak"), number("memory.events", "oom_kill"))

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def close(self) -> None:
        for d in self.dirs:
            for _ in range(50):
                try:
                    pids = (d / "cgroup.procs").read_text().split()
                except OSError:
                    break
                if not pids:
                    break
                for p in pids:
                    with contextlib.suppress(OSError):
                        os.kill(int(p), signal.SIGKILL)
                time.sleep(0.01)
            with contextlib.suppress(OSError):
                d.rmdir()


@lru_cache(maxsize=None)
def _remove_stale_cgroups(base: str) -> None:
    """Once per process: remove the empty cgroups of apps that are gone (killed before they could
    remove them, or whose last process exited after `close` gave up)."""
    for path in orphans(base, "run-"):
        with contextlib.suppress(OSError):
            os.rmdir(path)     # fails while a process is left in it


def orphans(directory: str, prefix: str) -> list[str]:
    """The entries of `directory` named `<prefix><pid>-...` whose process is gone: what an app
    killed before its cleanup left (every such name carries its maker's pid)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            pid, sep, _ = entry.name[len(prefix):].partition("-")
            if entry.name.startswith(prefix) and sep and pid.isdigit() and not pid_alive(int(pid)):
                found.append(entry.path)
    return found


def make_run_dir(prefix: str) -> Path:
    """A new directory `<prefix><pid>-...` in the temp dir for one run; a process's first one
    removes those its killed predecessors left."""
    _remove_orphan_dirs(tempfile.gettempdir(), prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


@lru_cache(maxsize=None)
def _remove_orphan_dirs(directory: str, prefix: str) -> None:
    for path in orphans(directory, prefix):
        shutil.rmtree(path, ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """Whether a process of this id exists (a zombie counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


# ---------------------------------------------------------------- safe reads

def read_regular(path: Path, cap: int, owners: set[int] | None = None, exact_size: int | None = None,
                 dir_fd: int | None = None) -> bytes:
    """At most `cap` bytes of `path`, which must be a regular file (not a link, FIFO or device),
    owned by one of `owners` and, when given, of exactly `exact_size` bytes. Never blocks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY,
                     dir_fd=dir_fd)
    except OSError as e:
        raise UnsafeFile(f"{Path(path).name}: cannot be opened ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(f"{Path(path).name}: not a regular file")
        if owners is not None and st.st_uid not in owners:
            raise UnsafeFile(f"{Path(path).name}: owned by uid {st.st_uid}, not by the run")
        if exact_size is not None and st.st_size != exact_size:
            raise UnsafeFile(f"{Path(path).name}: {st.st_size} bytes where {exact_size} were written")
        return _read_fd(fd, cap)
    finally:
        os.close(fd)


def _read_fd(fd: int, cap: int) -> bytes:
    chunks, n = [], 0
    while n < cap:
        b = os.read(fd, min(1 << 20, cap - n))
        if not b:
            break
        chunks.append(b)
        n += len(b)
    return b"".join(chunks)


def _text_of(fd: int) -> str:
    """The first OUTPUT_CAP bytes written to a descriptor the parent opened (not reopened by path)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = _read_fd(fd, OUTPUT_CAP + 1)
    except OSError:
        return ""
    text = data[:OUTPUT_CAP].decode(errors="replace")
    return text + ("\n[output truncated]" if len(data) > OUTPUT_CAP else "")


# ---------------------------------------------------------------- the run

def prepare_workdir(workdir: Path, uid: int | None = None, writable: list[str] = ()) -> None:
    """The run directory stays the parent's (the run cannot create, replace or link anything in
    it); the files named in `writable` are handed to the run's uid."""
    if uid is None or os.geteuid() != 0:
        return
    os.chmod(workdir, 0o755)
    for name in writable:
        p = workdir / name
        if not p.exists():
            p.touch(mode=0o600)
        os.chown(p, uid, uid)
        os.chmod(p, 0o600)


def _bind_script(jail: Path, binds: list[tuple[str, bool]]) -> str:
    """Shell lines (run as root inside the mount namespace) that make `jail` a root with /usr and
    `binds` (path, writable) only, at their own paths."""
    q = shlex.quote
    lines = [f"mount -t tmpfs -o size=16m,mode=755 tmpfs {q(str(jail))}"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{link}"):
            lines.append(f"ln -s {q(os.readlink('/' + link))} {q(str(jail / link))}")
        elif os.path.isdir(f"/{link}"):
            lines.append(f"mkdir -p {q(str(jail / link))} && mount --rbind -o ro /{link} {q(str(jail / link))}")
    lines.append(f"mkdir -p {q(str(jail / 'usr'))} && mount --rbind /usr {q(str(jail / 'usr'))} "
                 f"&& mount -o remount,bind,ro {q(str(jail / 'usr'))}")
    lines.append(f"mkdir -p {q(str(jail / 'dev'))} {q(str(jail / 'tmp'))} {q(str(jail / 'etc'))}")
    lines.append(f"touch {q(str(jail / 'dev/null'))} && mount --bind /dev/null {q(str(jail / 'dev/null'))}")
    lines.append(f"mount -t tmpfs -o size=256m,mode=1777 tmpfs {q(str(jail / 'tmp'))}")
    for path, writable in binds:
        target = q(str(jail) + path)
        lines.append(f"mkdir -p {target} && mount --bind {q(path)} {target}"
                     + ("" if writable else f" && mount -o remount,bind,ro {target}"))
    return "\n".join(lines)


def run_sandboxed(argv: list[str], workdir: Path, limits: Limits, *, uid: int | None = None,
                  jail: Path | None = None, binds: list[tuple[str, bool]] = (),
                  pass_fds: tuple[int, ...] = ()) -> SandboxResult:
    """Run argv with `workdir` as its cwd under the sandbox; never raises for anything the child
    does. `uid`: the run's uid (from `run_uid`). `jail` + `binds`: the child sees only /usr and
    the bound directories (the compiler). `pass_fds`: descriptors the child inherits."""
    caps = sandbox_capabilities()
    uid = os.getuid() if uid is None else uid
    q = shlex.quote
    cg = _Cgroup(f"run-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}", limits) \
        if caps["cgroup"] else None
    lim = [shutil.which("prlimit") or "prlimit", f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
           f"--as={limits.address_space_bytes}", f"--fsize={limits.file_bytes}", "--core=0"]
    nproc = None
    if caps["nproc_limit_effective"]:
        own = _count_processes(uid) if uid == os.getuid() or uid == SANDBOX_UID else 0
        nproc = limits.processes + own
        lim.append(f"--nproc={nproc}")
    drop = []
    if caps["drop_to_nobody"] and uid != os.getuid():
        # --pdeathsig after the uid change (setpriv sets it last): the change clears the one before.
        drop = [shutil.which("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--inh-caps=-all", *(["--pdeathsig", "KILL"] if caps["dies_with_parent"] else []), "--"]
    tail = lim + ["--"] + drop
    launch = _launch_program() if caps["pid_mount_ipc_namespaces"] and jail is None else None
    if launch is not None:
        # One program does the root part below (sandbox_launch.cpp): one exec instead of eight.
        prefix = [str(launch), "--parent", str(os.getpid()), "--tmpfs", str(limits.tmpfs_bytes),
                  "--cpu", str(limits.cpu_seconds), "--as", str(limits.address_space_bytes),
                  "--fsize", str(limits.file_bytes), "--cwd", str(workdir)]
        prefix += [a for f in (cg.procs_files() if cg else []) for a in ("--cgroup-procs", f)]
        if nproc is not None:
            prefix += ["--nproc", str(nproc)]
        if drop:
            prefix += ["--uid", str(uid)]
        prefix.append("--")
    elif caps["pid_mount_ipc_namespaces"]:
        # Root part, inside the namespaces, before any untrusted code: private tmp dirs and /proc,
        # the cgroup, the jail; then limits, the uid drop and exec. The cwd is taken before /tmp
        # is covered, so a run directory under /tmp stays reachable as "./".
        size = limits.tmpfs_bytes
        script = ["set -e", f"cd {q(str(workdir))}"]
        script += [f"echo $$ > {q(f)}" for f in (cg.procs_files() if cg else [])]
        if jail is not None:
            script.append(_bind_script(jail, list(binds)))
            tail = [shutil.which("chroot") or "chroot", str(jail)] + tail + \
                ["sh", "-c", f"cd {q(str(workdir))} && exec \"$@\"", "compile"]
        else:
            for d in ("/tmp", "/var/tmp", "/dev/shm"):
                script.append(f"if [ -d {d} ]; then mount -t tmpfs -o size={size},mode=1777,nosuid,nodev tmpfs {d}; fi")
            script.append("mount -t proc proc /proc")
        script.append('unset PWD OLDPWD; exec "$@"')
        prefix = _with_parent(caps) + [shutil.which("unshare") or "unshare", "-n", "-p", "-f", "-m", "-i",
                                       "--kill-child", "--", "sh", "-c", "\n".join(script), "sandbox"] + tail
    else:
        prefix = _with_parent(caps) + (
            [shutil.which("unshare") or "unshare", "-n", "--"] if caps["network_namespace"] else []) + tail

    t0 = time.perf_counter()
    out_fd = os.open(workdir / "stdout.txt", os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    err_fd = os.open(workdir / "stderr.txt", os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            proc = subprocess.Popen(prefix + argv, cwd=workdir, env=scrubbed_env(),
                                    stdin=subprocess.DEVNULL, stdout=out_fd, stderr=err_fd,
                                    start_new_session=True, close_fds=True, pass_fds=pass_fds)
        except OSError as e:
            return SandboxResult(None, None, False, 0.0, "", f"cannot start the sandboxed process: {e}", uid)
        timed_out = False
        memory = None
        try:
            timed_out = not _wait_exit(proc, limits.wall_seconds)
        finally:
            # The whole group goes, whether the launcher finished or not (stray children too).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if cg:
                memory = cg.memory()      # every process of the run is gone: the counts are final
                cg.close()
        wall = time.perf_counter() - t0
        rc = proc.returncode
        return SandboxResult(
            returncode=None if timed_out else (rc if rc >= 0 else None),
            signal=-rc if rc is not None and rc < 0 else None,
            timed_out=timed_out, wall_seconds=wall,
            stdout=_text_of(out_fd), stderr=_text_of(err_fd), uid=uid, memory=memory)
    finally:
        os.close(out_fd)
        os.close(err_fd)


def _with_parent(caps: dict) -> list[str]:
    """The prefix that makes the run's first process die with this one (what sandbox_launch does
    itself): the parent-death signal, then exit if this process was already gone by then."""
    if not caps["dies_with_parent"]:
        return []
    return [shutil.which("setpriv") or "setpriv", "--pdeathsig", "KILL", "--",
            "sh", "-c", 'test "$PPID" = "$0" || exit 125; exec "$@"', str(os.getpid())]


LAUNCH_SOURCE = Path(__file__).with_name("sandbox_launch.cpp")
_launch_lock = threading.Lock()


@lru_cache(maxsize=1)
def _launch_program() -> Path | None:
    """The compiled sandbox_launch.cpp (root-owned, in a root-only directory, keyed by the source's
    hash), built on first use; None (the shell chain is used) when it cannot be built or
    CANNPILOT_SANDBOX_LAUNCH=0."""
    if os.environ.get("CANNPILOT_SANDBOX_LAUNCH", "1") == "0" or os.geteuid() != 0:
        return None
    import hashlib

    src = LAUNCH_SOURCE.read_bytes()
    out_dir = STATE_DIR / "bin"
    exe = out_dir / f"sandbox_launch-{hashlib.sha256(src).hexdigest()[:16]}"
    with _launch_lock:
        try:
            out_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            st = os.lstat(exe) if exe.exists() else None
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_uid == 0 and not st.st_mode & 0o022:
                return exe
            cxx = shutil.which("g++") or shutil.which("c++")
            if cxx is None:
                return None
            tmp = out_dir / f".{exe.name}.{os.getpid()}.{threading.get_ident()}"
            done = subprocess.run([cxx, "-O2", "-std=c++17", "-o", str(tmp), str(LAUNCH_SOURCE)],
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            if done.returncode != 0:
                return None
            os.chmod(tmp, 0o700)
            os.replace(tmp, exe)
            return exe
        except (OSError, subprocess.SubprocessError):
            return None


def _wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Whether `proc` ended within `timeout` seconds. Sleeps on a pidfd, so the parent wakes when the
    child ends (Popen.wait with a timeout polls with sleeps of up to 50 ms, most of a short run's
    wall time); Popen.wait where the kernel has no pidfd."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        waiter = select.poll()
        waiter.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while not waiter.poll(max(0.0, deadline - time.monotonic()) * 1000):
            if time.monotonic() >= deadline:
                return proc.poll() is not None
    finally:
        os.close(fd)
    proc.wait()
    return True


def _count_processes(uid: int) -> int:
    n = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n
