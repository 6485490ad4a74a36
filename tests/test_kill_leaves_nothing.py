"""Issue 24: a `cannpilot check` killed mid-run leaves nothing behind: no sandbox launcher, no
harness block, no golden child (all die with the app), no shared-memory file of its golden.

The check runs as a real subprocess (the venv's `cannpilot`) in a mount namespace of its own whose
/dev/shm is a directory of the test, so the files it leaves there are told from those of every
other process on the machine; only the process tree it started is looked at.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import VALID_TASK


CACHE = Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"

HOSTILE = Path(__file__).parent / "kernels" / "hostile"


def _spin_kernel() -> str:
    """The hostile infinite loop on two blocks, without the system headers the source scan refuses:
    every block spins until it is killed, so the check is in its run when the test kills it."""
    lines = (HOSTILE / "infinite_loop.cpp").read_text().splitlines()
    code = "\n".join(x for x in lines if not x.startswith("#include <") or x == "#include <cstdint>") + "\n"
    assert "SetBlockDim(1)" in code
    return code.replace("SetBlockDim(1)", "SetBlockDim(2)")


# A golden that takes a minute: the check is computing its reference when the test kills it.
SLOW_GOLDEN = """\
import time

import torch


def scaled_tanh(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    time.sleep(60)
    return torch.tanh(x * scale).to(x.dtype)
"""


def _private_shm() -> bool:
    return os.geteuid() == 0 and shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "--", "sh", "-c", "mount --bind /tmp /dev/shm"], capture_output=True).returncode == 0


def _real_check(test):
    """A test that runs a real check: g++, and root for the private /dev/shm."""
    for mark in (pytest.mark.slow, pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"),
                 pytest.mark.skipif(not _private_shm(), reason="needs root for a private /dev/shm (unshare -m)")):
        test = mark(test)
    return test


def _cannpilot() -> list[str]:
    exe = Path(sys.executable).with_name("cannpilot")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "copilot.cli"]


def _start(tmp: Path, *args: str) -> subprocess.Popen:
    """`cannpilot ARGS` (the Popen's pid is cannpilot's) with TMP/shm as its /dev/shm."""
    shm = tmp / "shm"
    shm.mkdir()
    env = dict(os.environ, CANNPILOT_CACHE=str(CACHE), CANNPILOT_STORE=str(tmp / "store.sqlite"))
    return subprocess.Popen(["unshare", "-m", "--", "sh", "-c", 'mount --bind "$0" /dev/shm && exec "$@"', str(shm),
                             *_cannpilot(), *args], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                            stdout=(tmp / "out.txt").open("wb"), stderr=(tmp / "err.txt").open("wb"))


def _processes() -> dict[int, tuple[int, str, str, str]]:
    """{pid: (ppid, state, start time, name)} of every process now."""
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                text = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
            out[int(entry.name)] = (int(rest[1]), rest[0], rest[19], name)
    return out


def _tree(root: int) -> dict[int, tuple[int, str, str, str]]:
    """The live processes descending from `root` (root included)."""
    procs = _processes()
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in procs and pid not in tree:
            tree[pid] = procs[pid]
            todo += [p for p, (ppid, *_rest) in procs.items() if ppid == pid]
    return {p: v for p, v in tree.items() if v[1] not in "ZX"}


def _wait_for(proc: subprocess.Popen, tmp: Path, ready, what: str, seconds: float = 300):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        tree = _tree(proc.pid)
        if ready(tree):
            return tree
        if proc.poll() is not None:
            pytest.fail(f"the check ended ({proc.returncode}) before {what}: {(tmp / 'err.txt').read_text()[-2000:]}")
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"no {what} within {seconds:g} s")


def _left(recorded: dict[int, tuple], seconds: float = 5.0) -> list[str]:
    """What of the recorded processes still lives after `seconds` (same pid and start time)."""
    deadline = time.monotonic() + seconds
    while True:
        now = _processes()
        left = [f"{p} {v[3]}" for p, v in recorded.items()
                if p in now and now[p][2] == v[2] and now[p][1] not in "ZX"]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def _kill_and_collect(proc: subprocess.Popen, tree: dict, sig: int) -> list[str]:
    proc.send_signal(sig)
    proc.wait(timeout=30)
    left = _left(tree)
    for p in left:                     # the test cleans up what the check left (its own tree only)
        with contextlib.suppress(OSError):
            os.kill(int(p.split()[0]), signal.SIGKILL)
    return left


@_real_check
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_check_killed_while_its_blocks_run_leaves_no_process(tmp_path, sig):
    kernel = tmp_path / "spin.cpp"
    kernel.write_text(_spin_kernel())
    proc = _start(tmp_path, "check", str(kernel), "--task", "relu", "--cases", "all")
    # The harness's pid 1 and its two blocks (the tiling child has ended by then).
    tree = _wait_for(proc, tmp_path, lambda t: sum(v[3] == "harness" for v in t.values()) >= 3,
                     "harness blocks running")
    left = _kill_and_collect(proc, tree, sig)
    assert not left, f"left running after {signal.Signals(sig).name}: {left}"
    assert not list((tmp_path / "shm").iterdir())
    # Its run directory (inputs, outputs, the harness) goes with the next process's first run.
    from copilot import sandbox

    sandbox._remove_orphan_dirs.cache_clear()
    sandbox.make_run_dir("cannsim-run-").rmdir()
    assert not list(Path(tempfile.gettempdir()).glob(f"cannsim-run-{proc.pid}-*"))


@_real_check
def test_a_check_killed_while_its_golden_runs_leaves_no_process_and_no_shared_file(tmp_path):
    task = tmp_path / "slow_tanh"
    shutil.copytree(VALID_TASK, task)
    (task / "golden.py").write_text(SLOW_GOLDEN)
    kernel = tmp_path / "k.cpp"
    kernel.write_text("// never built: the check is killed while the golden runs\n")
    proc = _start(tmp_path, "check", str(kernel), "--task", str(task), "--cases", "1")
    # The golden's child: a fork of the check itself.
    tree = _wait_for(proc, tmp_path, lambda t: any(v[0] == proc.pid for v in t.values()), "a golden child")
    left = _kill_and_collect(proc, tree, signal.SIGTERM)
    assert not left, f"left running after SIGTERM: {left}"
    assert not list((tmp_path / "shm").iterdir()), "the golden's shared-memory file was left behind"


# The app of the next test: runs the spinning kernel through the sim runner with the sandbox as it is
# where no namespaces can be made (no root, or no unshare): the fallback shell chain, no pid
# namespace, no cgroup, so the blocks are plain children of the launcher.
NO_NAMESPACE_APP = """\
import sys
from pathlib import Path

from copilot import sandbox

caps = dict(sandbox.sandbox_capabilities(), pid_mount_ipc_namespaces=False, private_tmpdir=False, cgroup=None)
sandbox.sandbox_capabilities = lambda: caps

from copilot.backends.sim import build, run
from copilot.oracle import make_inputs, reference
from copilot.sandbox import Limits
from copilot.tasks import load_task

relu = load_task("relu")
case = next(c for c in relu.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)
b = build(Path(sys.argv[1]), relu, ["float32", "float32"])
assert b.ok, [d.message for d in b.diagnostics][:3]
inputs = make_inputs(relu, case)
outputs = reference(relu, case, inputs).outputs
print("built", flush=True)
run(b, relu, case, inputs, outputs=outputs, limits=Limits(wall_seconds=120), block_cpu_seconds=60)
"""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")
def test_without_namespaces_the_blocks_of_a_killed_app_die_with_it(tmp_path):
    """No pid namespace (the fallback where the sandbox cannot make one): the launcher dies with the
    app (setpriv --pdeathsig), and its blocks with the launcher (PR_SET_PDEATHSIG in the harness's
    children); before, the blocks spun on after a SIGKILL of the app until their CPU limit."""
    kernel = tmp_path / "spin.cpp"
    kernel.write_text(_spin_kernel())
    env = dict(os.environ, CANNPILOT_CACHE=str(CACHE), PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.Popen([sys.executable, "-c", NO_NAMESPACE_APP, str(kernel)], cwd=tmp_path, env=env,
                            stdin=subprocess.DEVNULL, stdout=(tmp_path / "out.txt").open("wb"),
                            stderr=(tmp_path / "err.txt").open("wb"))
    # The launcher and its two blocks, all named harness, none in a pid namespace of its own.
    tree = _wait_for(proc, tmp_path, lambda t: sum(v[3] == "harness" for v in t.values()) >= 3,
                     "harness blocks running")
    assert all(os.readlink(f"/proc/{p}/ns/pid") == os.readlink("/proc/self/ns/pid")
               for p, v in tree.items() if v[3] == "harness")
    left = _kill_and_collect(proc, tree, signal.SIGKILL)
    assert not left, f"left running after SIGKILL: {left}"


def test_what_a_killed_app_left_is_removed_by_the_next_and_nothing_else(tmp_path, monkeypatch):
    """Run directories (and golden files, cgroups) carry their maker's pid: a process's first run
    removes those of processes that are gone, never one of a live process or another name."""
    from copilot import sandbox

    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    sandbox._remove_orphan_dirs.cache_clear()
    left = tmp_path / f"cannsim-run-{gone.pid}-abc"
    (left / "sub").mkdir(parents=True)
    (left / "sub" / "case.txt").write_text("x")
    live = tmp_path / f"cannsim-run-{os.getpid()}-def"
    other = [tmp_path / "cannsim-run-12345678", tmp_path / f"cannsim-runner-{gone.pid}-x"]
    for d in (live, *other):
        d.mkdir()
    new = sandbox.make_run_dir("cannsim-run-")
    assert new.name.startswith(f"cannsim-run-{os.getpid()}-") and new.parent == tmp_path
    assert not left.exists() and live.exists() and all(d.exists() for d in other)
    assert sandbox.orphans(str(tmp_path), "cannsim-run-") == []
