"""Run one case of a built candidate in the sandbox and turn what happened into Diagnostics.

Inputs and outputs move through sealed memfds (anonymous shared memory, no path) that the launcher
inherits and maps as GM (MAP_SHARED, guard pages on both sides). This process never loads candidate
code.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import mmap
import os
import shutil
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from copilot.backends.base import Build, PipeTimes, Run
from copilot.backends.sim import crash_site, opcodes
from copilot.chips import ChipProfile, load_chip
from copilot.diagnostics import Diagnostic
from copilot.dtypes import dtype as lookup_dtype
from copilot.errors import BadInput
from copilot.oracle.dynamic import SHAPE_ARG, SHAPE_WORDS, data_dependent, kernel_shape, read_shapes, written_part
from copilot.sandbox import (Limits, UnsafeFile, make_run_dir, prepare_workdir, run_sandboxed,
                             run_uid, sandbox_capabilities)

PAGE = os.sysconf("SC_PAGE_SIZE")

# A case's wall-clock limit (`copilot.backends.sim.case_limits`): the base, `CANNPILOT_SIM_TIMEOUT`
# or this many seconds, plus SECONDS_PER_ELEMENT per input and output element, times the host's
# load per core (at most LOAD_FACTOR_CAP).
BASE_TIMEOUT_S = 60.0

# Emulation wall time per element (inputs + outputs) allowed on top of the base timeout. A correct
# kernel needs about 0.16 us per element on the shared 2-core machine (mish, 67M elements: 10.8 s;
# docs/results.md, issue 14); 2 us leaves room for heavier kernels and a loaded machine.
SECONDS_PER_ELEMENT = 2e-6


# The most the host's load stretches a case's wall-clock limit: a busy host gives a run about
# cores / load of each core it would have (unique's case 15, 10.9M elements: 103.1 s of a 103.7 s
# limit once, killed another time, both at load ~20 on 2 cores; docs/results.md, issue 21), and a
# kernel that waits forever (no CPU used) costs at most this many times the idle host's limit.
LOAD_FACTOR_CAP = 8.0
GE_CODES = {"DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 6,
            "DT_UINT16": 7, "DT_UINT32": 8, "DT_INT64": 9, "DT_UINT64": 10, "DT_DOUBLE": 11, "DT_BOOL": 12,
            "DT_BF16": 27}
EXIT_FATAL_RULE, EXIT_REPORTED = 86, 89
DIAG_CAP = 4 << 20          # bytes of the result channel read back
# diag.jsonl is written by the launcher only: at most 4 MB of findings, then each child's first
# error (harness.cpp kDiagCap); read whole, every error line counted whatever came before it.
DIAG_READ_CAP = 6 << 20
FINDING_GROUPS = 200        # distinct findings kept per severity class (errors, the rest)
MESSAGE_CAP = 600           # characters of one runtime message kept
LOCATED_REPORTS = 8         # crash reports of one run whose frames are resolved to a line
SIGNALS = {4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV",
           24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS"}
RUN_HINTS = {
    "RUN.CRASH": "the kernel crashed: check pointer arithmetic, GM offsets per block and tensor sizes",
    "RUN.TIMEOUT": "the limit is the emulator's time on this host, not the chip's: either the kernel hangs (a "
                   "loop whose bound never changes, a DeQue or WaitFlag that waits forever) or it is too slow "
                   "to emulate (the emulator executes every vector lane and every scalar GetValue/SetValue: "
                   "per-element scalar loops over millions of elements, or millions of tiny vector calls); "
                   "use fewer, larger vector instructions and keep scalar work per tile, not per element. A correct "
                   "kernel killed on a busy host may pass on a quieter one: the limit is CANNPILOT_SIM_TIMEOUT "
                   f"({BASE_TIMEOUT_S:g} s) plus {SECONDS_PER_ELEMENT * 1e6:g} us per input and output element, "
                   f"times the host's load per core (1 to {LOAD_FACTOR_CAP:g}); "
                   "`cannpilot check --timeout S` gives a case S seconds",
    "RUN.MEMORY": "the kernel asked for more memory than the sandbox allows",
    "RUN.TILING": "the host TilingFunc failed: it must return ge::GRAPH_SUCCESS and set the block dim",
    "RUN.INTEGRITY": "the run's results could not be trusted: a block must return from the kernel entry, "
                     "write GM only through DataCopy/SetValue, and leave the run directory alone",
}
# The hint of a RUN.CRASH that is a SIGKILL no limit of the sandbox accounts for (no fault of the code known).
UNKNOWN_KILL_HINT = ("nothing the sandbox recorded says why (no kill at the memory cap in the run's cgroup, no CPU "
                     "or wall-clock limit reached): another process (the host's own OOM killer, a user) may have "
                     "killed it; run the case again alone and watch the host's free memory")
UNKNOWN_BLOCK_KILL = ("RUN.CRASH", "the kernel was killed by SIGKILL (cause unknown)")


@dataclass
class OutputSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str


def default_limits() -> Limits:
    return Limits(wall_seconds=float(os.environ.get("CANNPILOT_SIM_TIMEOUT", BASE_TIMEOUT_S)))


def _np_view(t: torch.Tensor) -> np.ndarray:
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy()
    return t.numpy()


def _pad_for(nbytes: int) -> int:
    """Bytes in front of the data so that it ends within 32 bytes of the trailing guard page."""
    return ((PAGE - nbytes % PAGE) % PAGE) // 32 * 32


def _gm_size(pad: int, nbytes: int) -> int:
    return max(PAGE, math.ceil((pad + nbytes) / PAGE) * PAGE)


class _Gm:
    """One GM buffer: a sealed memfd of `size` bytes and this process's MAP_SHARED mapping of it
    (kept with the descriptor, so a buffer used again has its page tables already filled)."""

    def __init__(self, size: int):
        self.size = size
        self.fd = os.memfd_create("cannsim-gm", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(self.fd, size)
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(self.fd)
            raise
        self.fresh = True                  # all zeros, pages not yet allocated

    def bytes(self, offset: int = 0, count: int | None = None) -> np.ndarray:
        return np.frombuffer(self.map, dtype=np.uint8, count=self.size - offset if count is None else count,
                             offset=offset)

    def close(self) -> None:
        with contextlib.suppress(BufferError):     # an output tensor still views it: unmapped with it
            self.map.close()
        os.close(self.fd)


class _GmPool:
    """GM buffers kept between the runs of this process, by size. Allocating shmem pages costs
    about as much as writing them again (docs/sim-backend.md, throughput), so a case of a size seen
    before reuses the pages. Only where the sandbox has a pid namespace: when a run ends every one of
    its processes is gone, so nothing can still write a buffer that is handed to the next run.
    Outputs are copied out of their buffer, never returned as views of it: a view would share its
    pages with every process forked while it lives (MAP_SHARED), so the pool could hand them to a
    run in one process while a tensor in another still reads them."""

    def __init__(self):
        self.lock = threading.RLock()      # the runs of several threads share the pool
        self.idle: list[_Gm] = []          # oldest first

    @staticmethod
    def cap() -> int:
        if not sandbox_capabilities()["pid_mount_ipc_namespaces"]:
            return 0
        return int(os.environ.get("CANNPILOT_SIM_GM_POOL_BYTES", str(GM_POOL_BYTES)))

    def take(self, size: int) -> _Gm | None:
        with self.lock:
            for k, gm in enumerate(self.idle):
                if gm.size == size:
                    del self.idle[k]
                    return gm
        return None

    def give_back(self, buffers: list[_Gm]) -> None:
        cap = self.cap()
        with self.lock:
            self.idle += [gm for gm in buffers if gm.size <= cap]
            closing = [gm for gm in buffers if gm.size > cap]
            while sum(gm.size for gm in self.idle) > cap:
                closing.append(self.idle.pop(0))
        for gm in closing:
            gm.close()

    def forget(self) -> None:
        """In a forked child: the idle memfds are the parent's too, so never hand them out here."""
        self.lock = threading.RLock()
        for gm in self.idle:
            os.close(gm.fd)
        self.idle = []


GM_POOL_BYTES = 512 << 20       # idle GM kept for the next runs of this process
_gm_pool = _GmPool()
os.register_at_fork(after_in_child=_gm_pool.forget)
MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)   # Linux 5.14; the mmap module names it from 3.12
SPLIT_BYTES = 16 << 20      # a copy from this size runs in two threads (numpy copies and madvise drop the GIL)


def _populate(gm: _Gm) -> None:
    """Allocates a fresh buffer's pages and fills this process's page tables, in one call per half
    instead of a fault per 4 KiB page."""
    def part(lo: int, hi: int) -> None:
        with contextlib.suppress(OSError):
            gm.map.madvise(MADV_POPULATE_WRITE, lo, hi - lo)

    half = gm.size // 2 // PAGE * PAGE
    if gm.size >= SPLIT_BYTES:
        _in_two(lambda: part(0, half), lambda: part(half, gm.size))
    else:
        part(0, gm.size)
    gm.fresh = False


def _gm_buffer(t: torch.Tensor | None, nbytes: int, output: bool = False) -> tuple[_Gm, int]:
    """(buffer, pad): GM of `size` bytes holding `t` `pad` bytes in and zeros around it (all zeros
    when `t` is None), sealed at its size so that nothing can shrink it under the parent's mapping.
    An `output`'s data is poisoned by the launcher instead."""
    pad = _pad_for(nbytes)
    size = _gm_size(pad, nbytes)
    gm = _gm_pool.take(size) if t is not None or output else None
    if gm is None:
        gm = _Gm(size)
    try:
        if not gm.fresh:                   # reused: zero what the data does not cover
            gm.bytes(0, pad)[:] = 0
            gm.bytes(pad + nbytes)[:] = 0
        if gm.fresh and ((t is not None and nbytes) or (output and _gm_pool.cap() > 0)):
            _populate(gm)                  # pooled: its pages serve the next runs too
        if t is not None and nbytes:       # one copy, straight into the shared pages
            _split_copy(gm.bytes(pad, nbytes), np.frombuffer(memoryview(_np_view(t)).cast("B"), dtype=np.uint8))
    except BaseException:
        gm.close()
        raise
    return gm, pad


POISON_CHUNK = 1 << 20      # bytes compared at a time (the comparison stays in cache)


def _split_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[:] = src (flat byte arrays of one length), a large one as two halves at once."""
    if len(dst) < SPLIT_BYTES:
        np.copyto(dst, src)
        return
    half = len(dst) // 2 // PAGE * PAGE
    _in_two(lambda: np.copyto(dst[:half], src[:half]), lambda: np.copyto(dst[half:], src[half:]))


def _read_range(fd: int, view: memoryview, offset: int) -> None:
    done = 0
    while done < len(view):
        got = os.preadv(fd, [view[done:done + (1 << 30)]], offset + done)
        if got <= 0:                       # sealed at its size: cannot happen
            raise UnsafeFile(f"GM ended {len(view) - done} bytes early")
        done += got


def _in_two(first, second) -> None:
    """first() here and second() in a helper thread, at once: a large copy then uses both cores of a
    machine the launcher is not running on yet (or no longer). An error of either is raised here."""
    failed: list[BaseException] = []

    def other() -> None:
        try:
            second()
        except BaseException as e:
            failed.append(e)

    helper = threading.Thread(target=other, name="cannsim-gm-copy")
    helper.start()
    try:
        first()
    finally:
        helper.join()
    if failed:
        raise failed[0]


def _transfer(move, fd: int, view: memoryview, offset: int) -> None:
    """`move(fd, view, offset)` for the whole of `view`, a large one as two halves at once."""
    if len(view) < SPLIT_BYTES:
        move(fd, view, offset)
        return
    half = len(view) // 2 // PAGE * PAGE
    _in_two(lambda: move(fd, view[:half], offset), lambda: move(fd, view[half:], offset + half))


HUGE_OUTPUT = 2 << 20       # outputs from this size get memory of huge pages, mapped in one call


def _tensor_memory(nbytes: int) -> np.ndarray:
    """Fresh bytes for an output tensor. Large ones come as transparent huge pages mapped in one
    call: a 4 KiB page fault per page of a 64 MB output costs more than reading it."""
    if nbytes < HUGE_OUTPUT:
        return np.empty(nbytes, dtype=np.uint8)
    m = mmap.mmap(-1, nbytes, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):
            m.madvise(mmap.MADV_HUGEPAGE)

    def populate(lo: int, hi: int) -> None:
        with contextlib.suppress(OSError):
            m.madvise(MADV_POPULATE_WRITE, lo, hi - lo)

    half = nbytes // 2 // HUGE_OUTPUT * HUGE_OUTPUT
    if nbytes >= SPLIT_BYTES:              # zeroing the fresh pages is most of this: both cores
        _in_two(lambda: populate(0, half), lambda: populate(half, nbytes))
    else:
        populate(0, nbytes)
    return np.frombuffer(m, dtype=np.uint8)       # the array keeps the mapping alive


def _output_nbytes(spec: OutputSpec) -> int:
    return math.prod(spec.shape) * lookup_dtype(spec.dtype).itemsize


def _read_tensor(gm: _Gm, pad: int, spec: OutputSpec, count_written: bool = True) -> tuple[torch.Tensor, int]:
    """The output tensor in `gm` (one copy, read straight into the tensor's own memory) and, when
    `count_written`, how many of its bytes differ from the poison the launcher wrote (0xFF; else 0)."""
    dt = lookup_dtype(spec.dtype)
    n = math.prod(spec.shape)
    np_dtype = np.int16 if dt.torch == torch.bfloat16 else torch.empty(0, dtype=dt.torch).numpy().dtype
    nbytes = n * np.dtype(np_dtype).itemsize
    size = _gm_size(pad, nbytes)
    if os.fstat(gm.fd).st_size != size or gm.size != size:
        raise UnsafeFile(f"{spec.name}: {os.fstat(gm.fd).st_size} bytes of GM where {size} were mapped")
    out = _tensor_memory(nbytes)
    try:
        _transfer(_read_range, gm.fd, memoryview(out), pad)
    except UnsafeFile as e:
        raise UnsafeFile(f"{spec.name}: {e}") from None
    arr = out.view(np_dtype)
    written = 0
    if count_written:
        for lo in range(0, nbytes, POISON_CHUNK):
            written += int(np.count_nonzero(out[lo:lo + POISON_CHUNK] != 0xFF))
    t = torch.from_numpy(arr)
    if dt.torch == torch.bfloat16:
        t = t.view(torch.bfloat16)
    return t.reshape(spec.shape), written


def _golden_default(task, name: str):
    """The golden's keyword default of an attr that neither the case nor the proto sets, or None."""
    import inspect

    try:
        p = inspect.signature(task.golden).parameters.get(name)
    except (TypeError, ValueError, AttributeError):
        return None
    if p is None or p.default is inspect.Parameter.empty:
        return None
    return p.default


def _attr_line(kind: str, value) -> str:
    if kind in ("float",):
        b = struct.pack("<f", float(value))
        k = "f"
    elif kind in ("int",):
        b = struct.pack("<q", int(value))
        k = "i"
    elif kind == "bool":
        b = struct.pack("<?", bool(value))
        k = "b"
    elif kind in ("string", "str"):
        b = str(value).encode() + b"\0"
        k = "s"
    elif kind in ("list_int", "listint"):
        b = b"".join(struct.pack("<q", int(v)) for v in value)
        k = "I"
    elif kind in ("list_float", "listfloat"):
        b = b"".join(struct.pack("<f", float(v)) for v in value)
        k = "F"
    else:
        raise BadInput(f"attr type '{kind}' is not supported by the sim backend")
    return f"attr {k} {b.hex() or '-'}"


def _chip_line(chip: ChipProfile) -> str:
    return ("chip " + " ".join(str(v) for v in (
        chip.name, chip.soc_version, chip.short_soc_version, chip.arch, chip.vector_cores, chip.cube_cores,
        chip.ub_bytes, chip.max_buffers, chip.max_queue_buffers, chip.l1_bytes, chip.l0a_bytes, chip.l0b_bytes,
        chip.l0c_bytes, chip.l2_bytes, chip.hbm_bytes)))


def _blocks_text(blocks: list[int]) -> str:
    if len(blocks) == 1:
        return f"block {blocks[0]}"
    return f"{len(blocks)} blocks ({', '.join(map(str, blocks[:6]))}{', ...' if len(blocks) > 6 else ''})"


def _estimate(cost_lines: list[str], params, block_dim: int):
    """The kernel-time estimate from the blocks' cost lines (the launcher's result channel, one per
    block that ended normally); None when none was written or an instruction the model cannot time
    ran (an estimate that ignores work would be made up)."""
    from copilot.costmodel import combine, parse_block_costs

    blocks = parse_block_costs(cost_lines)
    if not blocks:
        return None
    est = combine(blocks, params, block_dim)
    return None if est.unmodelled else est


def _finding(text: str) -> dict | None:
    """One line of diag.jsonl as a dict, its "block" the child the launcher read it from ("from",
    harness.cpp DiagStream) where it came through a child's findings pipe; None for anything else."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    if "from" in doc:
        doc["block"] = doc.pop("from")
    return doc


def collect_diagnostics(lines: list[str], locate=None) -> list[Diagnostic]:
    """Runtime JSON lines → Diagnostics, one per (id, line) with the blocks it happened in.
    `locate(doc)` may give a finding without a line its line from the frames it carries."""
    groups: dict[tuple, dict] = {}
    order = []
    kept = {False: 0, True: 0}     # groups of warnings and infos, of errors
    for text in lines:
        doc = _finding(text)
        if doc is None or doc.get("kind") == "cost":   # cost figures travel on the result channel
            continue
        for k in ("message", "api", "hint", "id", "severity"):
            if k in doc:
                doc[k] = "".join(ch for ch in str(doc[k])[:MESSAGE_CAP] if ch.isprintable())
        if doc.get("severity") not in ("error", "warning", "info"):
            doc["severity"] = "error"
        if locate is not None and doc.get("frames") and not doc.get("line"):
            locate(doc)
        # the severity too: a warning a kernel wrote with an error's id and line is not that error
        key = (doc.get("id", "RUN.CRASH"), int(doc.get("line", 0) or 0),
               doc.get("message", "") if not doc.get("line") else "", doc["severity"])
        if key not in groups:
            # capped per class, so no number of warnings (a kernel can write its own) hides an error
            error = doc["severity"] == "error"
            if kept[error] >= FINDING_GROUPS:
                continue
            kept[error] += 1
            groups[key] = {"doc": doc, "blocks": []}
            order.append(key)
        b = doc.get("block")
        if isinstance(b, int) and b >= 0 and b not in groups[key]["blocks"]:
            groups[key]["blocks"].append(b)
    out = []
    for key in order:
        doc, blocks = groups[key]["doc"], sorted(groups[key]["blocks"])
        msg = doc.get("message", "")
        if len(blocks) > 1:
            msg += f" [{_blocks_text(blocks)}]"
        elif blocks:
            msg += f" [block {blocks[0]}]"
        ident = doc.get("id", "RUN.CRASH")
        out.append(Diagnostic(id=ident, severity=doc.get("severity", "error"), message=msg,
                              line=int(doc.get("line", 0) or 0), hint=doc.get("hint", "") or RUN_HINTS.get(ident, ""),
                              api=doc.get("api", "") or "", raw=json.dumps(doc)))
    return out


def _locate_crash(doc: dict, build: Build) -> None:
    """A harness crash report's line, API and words from its frames (crash_site); unchanged when
    they resolve to no candidate line or API."""
    if build.artifact is None or build.source_path is None:
        return
    frames = crash_site.resolve(build.artifact, crash_site.parse_frames(doc.get("frames")))
    site = crash_site.crash_site(frames, build.source_path.name)
    if site is None:
        return
    doc["line"] = site.line
    doc["api"] = doc.get("api") or site.api
    doc["message"] = f"{doc.get('message', '')}, {crash_site.describe(site)}"


def wall_timeout(wall_seconds: float) -> Diagnostic:
    """The RUN.TIMEOUT of a run killed at its wall-clock limit (the emulator's, scaled to the case)."""
    return Diagnostic("RUN.TIMEOUT", "error", f"the run did not finish within its {wall_seconds:g} s of wall clock "
                      "(the emulator's limit for this case on this host, by default a base plus "
                      f"{SECONDS_PER_ELEMENT * 1e6:g} us per input and output element, times the host's load per "
                      "core) and was killed", 0,
                      RUN_HINTS["RUN.TIMEOUT"])


def _size(nbytes: int) -> str:
    return f"{nbytes / (1 << 30):.2f} GiB" if nbytes >= 1 << 30 else f"{nbytes / (1 << 20):.0f} MiB"


def memory_cap_kill(memory, what: str) -> Diagnostic | None:
    """The RUN.MEMORY of a run whose cgroup recorded an OOM kill at its cap (`memory`: the
    sandbox's MemoryRecord), naming the cap and the peak; None when no such kill was recorded."""
    if memory is None or not memory.oom_kills:
        return None
    cap = f" of {_size(memory.cap_bytes)}" if memory.cap_bytes else ""
    peak = f" (peak usage {_size(memory.peak_bytes)})" if memory.peak_bytes else ""
    return Diagnostic("RUN.MEMORY", "error", f"{what} was killed at the sandbox's memory cap{cap} for the run's "
                      f"processes{peak}: the kernel's OOM killer ended {memory.oom_kills} process(es) of the run",
                      0, RUN_HINTS["RUN.MEMORY"])


def launcher_stopped(res, result: dict, cpu_seconds: int) -> Diagnostic:
    """The failure of a launcher that ended before its run did (not at the wall clock): the limit
    that stopped it where the launcher (its CPU limit) or the run's cgroup (an OOM kill) recorded
    one, a SIGKILL of unknown cause, else the crash it had."""
    if result.get("launcher_cpu_limit"):
        return Diagnostic("RUN.TIMEOUT", "error", f"the emulator's launcher used its {cpu_seconds} s of CPU time "
                          "(the sandbox's CPU limit for the launcher: twice the case's wall-clock limit before the "
                          "load factor) and stopped; the launcher replays every block's cost events, so the kernel "
                          "issues too many instructions (or instructions whose UB operands span too many others) "
                          "to emulate", 0, RUN_HINTS["RUN.TIMEOUT"])
    memory = memory_cap_kill(res.memory, "the emulator's launcher")
    if memory is not None:
        return memory
    stderr = f": {res.stderr.strip()[-300:]}" if res.stderr.strip() else ""
    if res.signal == 9:
        return Diagnostic("RUN.CRASH", "error", "the emulator's launcher was killed by SIGKILL (cause unknown) "
                          f"before the run finished{stderr}", 0, UNKNOWN_KILL_HINT)
    why = f"signal {SIGNALS.get(res.signal, res.signal)}" if res.signal else f"status {res.returncode}"
    return Diagnostic("RUN.CRASH", "error", f"the launcher stopped with {why} before the run finished{stderr}", 0,
                      RUN_HINTS["RUN.CRASH"])


def _run_failures(result: dict, reported_blocks: set[int], block_cpu: int, tiling_reported: bool,
                  memory=None) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    by_kind: dict[tuple[str, str], list[int]] = {}
    for b, kind, detail in result["blocks"]:
        if kind == "noend":
            by_kind.setdefault(("RUN.INTEGRITY", "the block ended without returning from the kernel entry "
                                "(the process exited from kernel code), so its results and cost are not "
                                "trusted"), []).append(b)
            continue
        if kind == "events":
            by_kind.setdefault(("RUN.INTEGRITY", "the block's cost events reached the launcher incomplete or "
                                "malformed (a sequence gap, no end, a field out of range, or fewer vector/DMA "
                                "events than the API calls counted apart), so its cost is not trusted"), []).append(b)
            continue
        if kind == "exit" and detail in (0, EXIT_REPORTED):
            continue
        if kind == "exit" and detail == EXIT_FATAL_RULE:
            if b not in reported_blocks:
                by_kind.setdefault(("RUN.CRASH", "the kernel stopped at a fatal rule breach"), []).append(b)
            continue
        if kind == "exit":
            by_kind.setdefault(("RUN.CRASH", f"the kernel exited with status {detail} (exit() called in "
                                             "kernel code?)"), []).append(b)
            continue
        sig = SIGNALS.get(detail, f"signal {detail}")
        if sig == "SIGXCPU":
            by_kind.setdefault(("RUN.TIMEOUT", f"a block used more than its {block_cpu} s of CPU time in the "
                                               "emulator and was stopped (a hang, or too much per-element work "
                                               "to emulate)"), []).append(b)
        elif sig == "SIGSYS":
            by_kind.setdefault(("RUN.CRASH", "the kernel made a forbidden system call (process or thread "
                                             "creation) and the sandbox stopped it"), []).append(b)
        elif sig == "SIGKILL" and (killed := memory_cap_kill(memory, "the kernel")) is not None:
            by_kind.setdefault(("RUN.MEMORY", killed.message), []).append(b)
        elif sig == "SIGKILL" and result["block_cpu"].get(b, 0.0) >= block_cpu:
            by_kind.setdefault(("RUN.TIMEOUT", f"a block used more than its {block_cpu} s of CPU time in the "
                                               "emulator and was killed (SIGKILL at the limit's hard end)"), []).append(b)
        elif sig == "SIGKILL":
            by_kind.setdefault(UNKNOWN_BLOCK_KILL, []).append(b)
        elif sig == "SIGXFSZ":
            by_kind.setdefault(("RUN.CRASH", "the kernel wrote more output than the sandbox allows"), []).append(b)
        else:
            by_kind.setdefault(("RUN.CRASH", f"the kernel crashed with {sig}"), []).append(b)
    for (ident, msg), blocks in by_kind.items():
        diags.append(Diagnostic(ident, "error", f"{msg} [{_blocks_text(sorted(blocks))}]", 0,
                                UNKNOWN_KILL_HINT if (ident, msg) == UNKNOWN_BLOCK_KILL else RUN_HINTS.get(ident, "")))
    if result.get("tiling_signal") and not tiling_reported:
        sig = SIGNALS.get(result["tiling_signal"], f"signal {result['tiling_signal']}")
        if sig == "SIGXCPU":
            diags.append(Diagnostic("RUN.TIMEOUT", "error", "the host TilingFunc did not finish (CPU limit)", 0,
                                    RUN_HINTS["RUN.TIMEOUT"], api="TilingFunc"))
        elif sig == "SIGSYS":
            diags.append(Diagnostic("RUN.CRASH", "error", "the host TilingFunc made a forbidden system call "
                                    "(process or thread creation) and the sandbox stopped it", 0,
                                    RUN_HINTS["RUN.CRASH"], api="TilingFunc"))
        else:
            diags.append(Diagnostic("RUN.CRASH", "error", f"the host TilingFunc crashed with {sig}", 0,
                                    RUN_HINTS["RUN.CRASH"], api="TilingFunc"))
    if result.get("not_run"):
        diags.append(Diagnostic("RUN.TIMEOUT", "warning", f"{result['not_run']} blocks were not run after a "
                                "block timed out", 0, ""))
    return diags


def _parse_result(text: str) -> dict:
    r: dict = {"blocks": [], "end": None, "block_dim": 0, "key": 0, "filter": None, "costs": {}, "block_cpu": {}}
    for line in text.splitlines():
        parts = line.split(maxsplit=2) if line.startswith("cost ") else line.split()
        if not parts:
            continue
        k = parts[0]
        if k == "cost" and len(parts) == 3 and parts[1].isdigit():
            r["costs"][int(parts[1])] = parts[2]
        elif k == "block" and len(parts) >= 4:
            r["blocks"].append((int(parts[1]), parts[2], int(parts[3])))
            if parts[2] == "signal" and len(parts) >= 6:      # a killed block's CPU seconds
                with contextlib.suppress(ValueError):
                    r["block_cpu"][int(parts[1])] = float(parts[5])
        elif k == "launcher_cpu_limit":
            r["launcher_cpu_limit"] = True
        elif k == "blockdim":
            r["block_dim"] = int(parts[1])
        elif k == "key":
            r["key"] = int(parts[1])
        elif k == "tiling_signal":
            r["tiling_signal"] = int(parts[1])
        elif k == "not_run":
            r["not_run"] = int(parts[1])
        elif k == "filter":
            r["filter"] = parts[1] == "1"
        elif k == "end":
            r["end"] = parts[1] if len(parts) > 1 else ""
        elif k in ("workspace", "tiling_bytes"):
            r[k] = int(parts[1])
        elif k == "tiling_digest" and len(parts) > 1:
            r["tiling_digest"] = parts[1]
    return r


def run(build: Build, task, case, inputs: list[torch.Tensor], outputs: list | None = None,
        chip: ChipProfile | str | None = None, limits: Limits | None = None,
        block_cpu_seconds: int | None = None, jobs: int | None = None, sample_blocks: bool = False,
        count_only: bool = False, timing: bool = True, tiling_only: bool = False) -> Run:
    """Run `case` of `task` on the built launcher. `outputs` are the output specs (name, shape,
    dtype); by default they come from the task's reference.

    `sample_blocks`: run only the first, middle and last block (estimates). `count_only`: the device
    API runs control flow, rule checks and cost accounting but moves no data; GM is anonymous zero
    memory, no tensor memfd is written or read back (`inputs` may be meta tensors) and `outputs` of
    the Run is empty. `timing=False` leaves the cost model out (functional only: no estimate).
    `tiling_only`: run the host TilingFunc and stop (count-only, no block runs): the Run carries the
    block dim, the tiling key and `extra["tiling_digest"]`, the digest of all the device sees of the
    host's decisions (every run reports it)."""
    if not build.ok or build.artifact is None:
        raise BadInput("cannot run a candidate that did not build")
    chip = load_chip(chip or build.chip)
    if refused := opcodes.findings(build.artifact):    # code that could open the vault itself
        return Run(ok=False, outputs=[], diagnostics=refused)
    limits = limits or default_limits()
    if outputs is None and count_only:     # no values: shapes from the golden on meta tensors
        from copilot.costmodel.estimate import output_shapes
        outputs = output_shapes(task, case)
    elif outputs is None:
        from copilot.oracle import reference
        outputs = reference(task, case, inputs).outputs
    # An output whose length depends on the data is allocated at its bound, never at the golden's
    # length; the kernel writes the shape it produced into the out_shape argument.
    dynamic = data_dependent(task)
    outputs = [OutputSpec(o.name, kernel_shape(tuple(o.shape), dynamic[o.name], case) if o.name in dynamic
                          else tuple(o.shape), str(o.dtype)) for o in outputs]
    if tiling_only:
        count_only, timing = True, False
    block_cpu = block_cpu_seconds or max(1, int(min(limits.wall_seconds, 30)))
    jobs = jobs or max(1, min(2, os.cpu_count() or 1))

    workdir = make_run_dir("cannsim-run-")
    try:
        with run_uid() as uid:
            return _run_in(workdir, uid, build, task, case, inputs, outputs, chip, limits, block_cpu, jobs,
                           sample_blocks, count_only, timing, list(dynamic), tiling_only)
    finally:
        if os.environ.get("CANNPILOT_KEEP_RUN"):
            pass
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _gm_bytes_out(cost_line: str) -> float:
    try:
        return float(json.loads(cost_line).get("gm_bytes_out", 0.0))
    except (ValueError, AttributeError, TypeError):
        return 0.0


def _run_in(workdir: Path, uid: int, build: Build, task, case, inputs, outputs, chip, limits, block_cpu: int,
            jobs: int, sample_blocks: bool, count_only: bool, timing: bool, dynamic: list[str],
            tiling_only: bool = False) -> Run:
    result_fd = diag_fd = -1
    gms: list[_Gm] = []                 # inputs' then outputs' GM, inherited by the launcher
    shape_gm = None                     # the out_shape words of a task with data-dependent outputs
    try:
        from copilot.costmodel import cost_params

        params = cost_params(chip.name)
        lines = [_chip_line(chip), f"jobs {jobs}", f"block_cpu_seconds {block_cpu}",
                 f"sample_blocks {int(sample_blocks)}", f"count_only {int(count_only)}",
                 f"tiling_only {int(tiling_only)}"]
        if timing:
            lines.append(params.cxx_line(chip.vector_cores))
        gm_bytes = 0
        from copilot.oracle.inputs import kernel_tensors

        for i, (spec, t) in enumerate(zip(task.inputs, kernel_tensors(inputs))):
            if t is None:              # an omitted optional input: the entry's argument is a null GM address
                dt = lookup_dtype(spec.dtypes[0])
                lines.append(f"input {spec.name} {GE_CODES[dt.ge]} 0 null 0 0")
                continue
            dt = lookup_dtype(str(t.dtype).replace("torch.", ""))
            nbytes = t.numel() * dt.itemsize
            if count_only:             # anonymous GM in the launcher: same padding, no memfd
                pad, name = _pad_for(nbytes), "-"
            else:                      # meta tensors (shapes only): the memfd stays zeros
                gm, pad = _gm_buffer(None if t.is_meta else t, nbytes)
                gms.append(gm)
                name = f"fd:{gm.fd}"
            gm_bytes += nbytes
            lines.append(f"input {spec.name} {GE_CODES[dt.ge]} {t.dim()} {' '.join(map(str, t.shape))} "
                         f"{name} {pad} {nbytes}")
        out_pads = []
        # One slot per DECLARED output, in proto order (as CANN passes them): a declared output the
        # golden does not return for this case gets a null GM address; only returned ones are judged.
        returned = {s.name: s for s in outputs}
        declared = {o.name: o for o in getattr(task, "outputs", [])}
        slots = [returned.get(n, n) for n in declared]
        slots += [s for s in outputs if s.name not in declared]
        for spec in slots:
            if isinstance(spec, str):  # declared, not returned: null GM address, later slots keep their index
                dt = lookup_dtype(declared[spec].dtypes[0])
                lines.append(f"output {spec} {GE_CODES[dt.ge]} 0 null 0 0")
                continue
            dt = lookup_dtype(spec.dtype)
            nbytes = math.prod(spec.shape) * dt.itemsize
            if count_only:
                pad, name = _pad_for(nbytes), "-"
            else:
                gm, pad = _gm_buffer(None, nbytes, output=True)
                gms.append(gm)
                name = f"fd:{gm.fd}"
            out_pads.append(pad)
            gm_bytes += nbytes
            lines.append(f"output {spec.name} {GE_CODES[dt.ge]} {len(spec.shape)} "
                         f"{' '.join(map(str, spec.shape))} {name} {pad} {nbytes}")
        shape_spec = OutputSpec(SHAPE_ARG, (SHAPE_WORDS * len(dynamic),), "int64") if dynamic else None
        if shape_spec is not None:     # after the outputs, before workspace: poisoned like them
            nbytes = _output_nbytes(shape_spec)
            if count_only:
                shape_pad, name = _pad_for(nbytes), "-"
            else:
                shape_gm, shape_pad = _gm_buffer(None, nbytes, output=True)
                name = f"fd:{shape_gm.fd}"
            gm_bytes += nbytes
            lines.append(f"output {SHAPE_ARG} {GE_CODES['DT_INT64']} 1 {shape_spec.shape[0]} {name} {shape_pad} {nbytes}")
        values = getattr(case, "attrs", {}) or {}
        for a in getattr(task, "attrs", []):
            v = values.get(a.name, a.default)
            if v is None:
                v = _golden_default(task, a.name)   # what the golden ran with; later attrs keep their index
            # an attr that stays None holds its slot empty: its getter returns nullptr, later attrs keep their index
            lines.append("attr n -" if v is None else _attr_line(a.type, v))
        # The result channel: a file of the parent's, inherited as a descriptor by the launcher only.
        result_fd = os.open(workdir / "result.txt", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        lines.append(f"result_fd {result_fd}")
        # The findings too: the launcher copies each child's findings pipe into it (harness.cpp
        # DiagStream); no child holds it, and the run's uid cannot open it by path.
        diag_fd = os.open(workdir / "diag.jsonl", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        lines.append(f"diag_fd {diag_fd}")
        (workdir / "case.txt").write_text("\n".join(lines) + "\n")
        exe = workdir / "harness"
        try:
            os.link(build.artifact, exe)
        except OSError:
            shutil.copy2(build.artifact, exe)
        prepare_workdir(workdir, uid, [])
        lim = Limits(wall_seconds=limits.wall_seconds, cpu_seconds=limits.cpu_seconds,
                     address_space_bytes=max(limits.address_space_bytes, (2 << 30) + 3 * gm_bytes),
                     processes=max(limits.processes, 4 * chip.cube_cores) + jobs,   # a MIX launch: 3 per cube core
                     file_bytes=limits.file_bytes,
                     memory_bytes=limits.memory_bytes + 3 * gm_bytes)
        t0 = time.perf_counter()
        res = run_sandboxed(["./harness", "case.txt"], workdir, lim, uid=uid,
                            pass_fds=(result_fd, diag_fd, *(gm.fd for gm in gms),
                                      *([shape_gm.fd] if shape_gm else [])))
        wall = time.perf_counter() - t0
        integrity: list[Diagnostic] = []

        def untrusted(what: str, e: Exception) -> None:
            integrity.append(Diagnostic("RUN.INTEGRITY", "error", f"{what} was tampered with ({e}); the run "
                                        "is not trusted", 0, RUN_HINTS["RUN.INTEGRITY"]))

        os.lseek(diag_fd, 0, os.SEEK_SET)
        diag_lines = os.read(diag_fd, DIAG_READ_CAP).decode(errors="replace").splitlines()
        located = 0

        def locate(doc: dict) -> None:     # a few reports: each is an addr2line run
            nonlocal located
            located += 1
            if located <= LOCATED_REPORTS:
                _locate_crash(doc, build)

        diags = collect_diagnostics(diag_lines, locate)
        findings = [doc for doc in map(_finding, diag_lines) if doc is not None and doc.get("kind") != "cost"]
        reported_blocks = {doc.get("block") for doc in findings if doc.get("source") == "harness"}
        # blocks with an error finding (a fatal rule ends the block with 86)
        fatal_blocks = {doc.get("block") for doc in findings if doc.get("severity", "error") == "error"}
        os.lseek(result_fd, 0, os.SEEK_SET)
        result = _parse_result(os.read(result_fd, DIAG_CAP).decode(errors="replace"))
        tiling_reported = -1 in reported_blocks
        # A block that exited 86 has its fatal rule in diag.jsonl (from the runtime).
        run_diags = _run_failures(result, {b for b in fatal_blocks if isinstance(b, int)}, block_cpu,
                                  tiling_reported, res.memory)
        if res.timed_out:
            run_diags.append(wall_timeout(limits.wall_seconds))
        elif result["end"] is None:
            run_diags.append(launcher_stopped(res, result, lim.cpu_seconds))
        cost_lines = [result["costs"][b] for b in sorted(result["costs"])]
        api_bytes = sum(_gm_bytes_out(x) for x in cost_lines)
        # Bytes written off the APIs show as more non-poison bytes than the APIs moved; when the
        # APIs moved at least every output byte that cannot be, and the count is skipped.
        audit = timing and not count_only and result["end"] == "ok"
        count_written = audit and sum(_output_nbytes(s) for s in outputs) > api_bytes
        outs, written, shapes = [], 0, {}
        if not count_only:
            try:
                out_gms = dict(zip((s.name for s in slots if not isinstance(s, str)),
                                   zip(gms[len(gms) - len(out_pads):], out_pads)))
                for spec in outputs:
                    gm, pad = out_gms[spec.name]
                    t, w = _read_tensor(gm, pad, spec, count_written)
                    outs.append(t)
                    written += w
                if shape_gm is not None:
                    words, w = _read_tensor(shape_gm, shape_pad, shape_spec, count_written)
                    written += w
                    shapes = read_shapes(words.numpy(), dynamic, {s.name: s.shape for s in outputs})
                    # what the judge sees: the part of each buffer the kernel says it wrote
                    outs = [written_part(t, shapes[s.name][0]) if shapes.get(s.name, (None,))[0] is not None
                            else t for s, t in zip(outputs, outs)]
            except UnsafeFile as e:
                outs = []
                untrusted("an output GM buffer", e)
        if audit and outs:
            if written > api_bytes:
                integrity.append(Diagnostic(
                    "RUN.INTEGRITY", "error", f"the kernel wrote {written} output bytes but its DataCopy/SetValue "
                    f"calls moved {api_bytes:.0f}: output was written outside the emulated APIs (raw pointer "
                    "stores), which the cost model cannot time; refused", 0, RUN_HINTS["RUN.INTEGRITY"]))
        diags += run_diags + integrity
        ended = "tiling_only" if tiling_only else "ok"
        ok = (result["end"] == ended and not res.timed_out and not any(d.is_error for d in diags)
              and all(kind == "exit" and detail == 0 for _, kind, detail in result["blocks"]))
        estimate = _estimate(cost_lines, params, result["block_dim"]) if ok and timing else None
        return Run(ok=ok, outputs=outs, diagnostics=diags, block_dim=result["block_dim"],
                   tiling_key=result["key"], wall_seconds=wall, stdout=res.stdout,
                   time_us=estimate.time_us if estimate else None, timing="estimate",
                   pipe_times=PipeTimes(mte2=estimate.pipes_us.get("MTE2", 0.0), v=estimate.pipes_us.get("V", 0.0),
                                        mte3=estimate.pipes_us.get("MTE3", 0.0), s=estimate.pipes_us.get("S", 0.0))
                   if estimate else None,
                   bottleneck=estimate.bottleneck if estimate else None,
                   extra={"seccomp": result["filter"], "workdir_kept": bool(os.environ.get("CANNPILOT_KEEP_RUN")),
                          "out_shapes": shapes, "tiling_digest": result.get("tiling_digest"),
                          "stderr": res.stderr[-2000:], "estimate": estimate})
    finally:
        for fd in (result_fd, diag_fd):
            if fd >= 0:
                os.close(fd)
        _gm_pool.give_back(gms + ([shape_gm] if shape_gm is not None else []))
