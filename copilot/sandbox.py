"""Run untrusted candidate code in a child process that cannot take the app down.

Layers, each used where this machine allows it (`sandbox_capabilities()` says which):
- a scrubbed environment (PATH, LANG, HOME and TMPDIR = the run directory; nothing else, so no
  API keys), the run directory as cwd, stdin closed;
- resource limits: CPU seconds, address space, processes, file size, no core files;
- a new session, whose whole process group is killed on the wall-clock timeout;
- no network: a fresh network namespace (`unshare -n`) when permitted;
- when started as root, the child drops to the `nobody` user (`setpriv`), so it cannot write the
  user's files and the process limit counts only sandboxed processes;
- inside the launcher, a seccomp filter refuses exec, sockets and namespace calls and kills a
  block or tiling child that forks (see cannsim/harness.cpp).
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SANDBOX_UID = 65534   # nobody
OUTPUT_CAP = 64 * 1024


@dataclass
class Limits:
    wall_seconds: float = 60.0
    cpu_seconds: int = 120            # the whole process tree's parent; blocks get their own
    address_space_bytes: int = 4 << 30
    processes: int = 64               # on top of what the sandbox user already runs
    file_bytes: int = 256 << 20


@dataclass
class SandboxResult:
    returncode: int | None            # None when killed on timeout
    signal: int | None
    timed_out: bool
    wall_seconds: float
    stdout: str
    stderr: str


def scrubbed_env(workdir: Path) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(workdir), "TMPDIR": str(workdir)}


def _probe(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@lru_cache(maxsize=1)
def sandbox_capabilities() -> dict:
    """What the sandbox enforces on this machine (for `cannpilot doctor` and the docs)."""
    root = os.geteuid() == 0
    unshare = shutil.which("unshare")
    setpriv = shutil.which("setpriv")
    netns = bool(unshare) and _probe([unshare, "-n", "true"])
    drop_user = root and bool(setpriv) and _probe(
        [setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups", "true"])
    return {
        "scrubbed_env": True,
        "private_tmpdir": True,
        "rlimits": ["RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_CORE"],
        "process_group_kill": True,
        "network_namespace": netns,
        "drop_to_nobody": drop_user,
        "nproc_limit_effective": drop_user or not root,
        "seccomp": os.path.exists("/proc/self/status") and "Seccomp:" in Path("/proc/self/status").read_text(),
        "notes": _notes(root, netns, drop_user),
    }


def _notes(root: bool, netns: bool, drop_user: bool) -> list[str]:
    notes = []
    if not netns:
        notes.append("no network namespace: candidate sockets are refused by the seccomp filter only")
    if root and not drop_user:
        notes.append("running as root without setpriv: candidate code runs as root (files writable)")
    if not root:
        notes.append("not root: candidate code runs as the current user; RLIMIT_NPROC counts its processes")
    return notes


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


def prepare_workdir(workdir: Path) -> None:
    """Let the sandbox user own the run directory."""
    caps = sandbox_capabilities()
    if caps["drop_to_nobody"]:
        os.chown(workdir, SANDBOX_UID, SANDBOX_UID)
        for p in workdir.iterdir():
            os.chown(p, SANDBOX_UID, SANDBOX_UID)


def run_sandboxed(argv: list[str], workdir: Path, limits: Limits) -> SandboxResult:
    """Run argv in workdir under the sandbox; never raises for anything the child does."""
    caps = sandbox_capabilities()
    prefix: list[str] = []
    if caps["network_namespace"]:
        prefix += [shutil.which("unshare") or "unshare", "-n", "--"]
    uid = os.getuid()
    if caps["drop_to_nobody"]:
        prefix += [shutil.which("setpriv") or "setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}",
                   "--clear-groups", "--"]
        uid = SANDBOX_UID
    nproc = limits.processes + (_count_processes(uid) if caps["nproc_limit_effective"] else 0)
    prlimit = shutil.which("prlimit")
    if prlimit:
        # Limits through prlimit(1), so no Python code runs between fork and exec (thread-safe).
        lim = [prlimit, f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
               f"--as={limits.address_space_bytes}", f"--fsize={limits.file_bytes}", "--core=0"]
        if caps["nproc_limit_effective"]:
            lim.append(f"--nproc={nproc}")
        prefix = prefix[:3] + lim + ["--"] + prefix[3:] if caps["network_namespace"] else lim + ["--"] + prefix

    def limit_child() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if caps["nproc_limit_effective"]:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    t0 = time.perf_counter()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            proc = subprocess.Popen(prefix + argv, cwd=workdir, env=scrubbed_env(workdir),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True, preexec_fn=None if prlimit else limit_child,
                                    close_fds=True)
        except OSError as e:
            return SandboxResult(None, None, False, 0.0, "", f"cannot start the sandboxed process: {e}")
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # The whole group goes, whether the launcher finished or not (stray children too).
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
    wall = time.perf_counter() - t0
    rc = proc.returncode
    return SandboxResult(
        returncode=None if timed_out else (rc if rc >= 0 else None),
        signal=-rc if rc is not None and rc < 0 else None,
        timed_out=timed_out, wall_seconds=wall,
        stdout=_read_capped(out_path), stderr=_read_capped(err_path))


def _read_capped(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(OUTPUT_CAP + 1)
    except OSError:
        return ""
    text = data[:OUTPUT_CAP].decode(errors="replace")
    return text + ("\n[output truncated]" if len(data) > OUTPUT_CAP else "")
