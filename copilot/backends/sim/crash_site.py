"""Where in the candidate a crash happened: the frames the launcher's crash handler captured
(offsets from the executable's load base) resolved to file:line:function with the build's debug
line tables (g++ -g1) by addr2line.

The frames are written by the crashing kernel's own process, so they are untrusted: a malformed
token is dropped, an offset outside the executable's loaded image is not looked up, and the only
file read is the build's binary. A forged frame resolves to nothing or to a wrong line.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
_INCLUDE_TAIL = INCLUDE_DIR.parts[-4:]          # ("copilot", "backends", "sim", "include")
MAX_FRAMES = 32
ADDR2LINE_TIMEOUT_S = 10
OUTPUT_CAP = 1 << 20            # bytes of addr2line output parsed
CACHED_BINARIES = 32
CACHED_ADDRESSES = 4096         # per binary
KERNEL_DIRS = ("candidate", "host")                   # where the build puts the candidate's device and host halves
LAUNCHER_FILES = {"harness.cpp", "harness_entry.h"}   # the launcher around the kernel, not an API
# Namespaces of the emulator that say nothing to the kernel's author.
HIDDEN_SCOPES = {"AscendC", "cannsim", "detail", "cannsim_glue", "cannsim_h", "(anonymous namespace)", "std"}
_TOKEN = re.compile(r"(r?)([0-9a-f]{1,12})")


@dataclass(frozen=True)
class Frame:
    function: str
    file: str
    line: int


UNKNOWN = Frame("", "", 0)      # an address outside the executable or without a line


@dataclass(frozen=True)
class CrashSite:
    line: int                   # the innermost line in the candidate's source, 0 when none was found
    api: str                    # the emulated API the kernel had called, "" when it crashed in its own code
    function: str               # the candidate's function holding `line`


def parse_frames(text) -> list[int | None]:
    """The launcher's frames ("r" marks a return address, "?" a frame outside the executable) as
    lookup addresses (a return address minus one: the call instruction); None for the rest."""
    if not isinstance(text, str):
        return []
    out: list[int | None] = []
    for tok in text[:MAX_FRAMES * 20].split()[:MAX_FRAMES]:
        m = _TOKEN.fullmatch(tok)
        if not m:
            out.append(None)
            continue
        addr = int(m.group(2), 16)
        out.append(addr - 1 if m.group(1) and addr else addr)
    return out


def _image(binary: Path) -> tuple[int, int] | None:
    """(link address of the ELF header, end of the loaded image) of a 64-bit little-endian ELF: the
    launcher's offsets count from the header's load address."""
    try:
        with open(binary, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return None
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            if phentsize < 56 or phnum > 256:
                return None
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return None
    base, end = None, 0
    for k in range(len(table) // phentsize):
        p_type, _, p_offset, p_vaddr, _, _, p_memsz = struct.unpack_from("<IIQQQQQ", table, k * phentsize)
        if p_type != 1:          # PT_LOAD
            continue
        if p_offset == 0 and base is None:
            base = p_vaddr
        end = max(end, p_vaddr + p_memsz)
    return (base, end) if base is not None else None


class _Cache:
    """Resolved addresses per binary (its path, size and mtime), least recently used dropped."""

    def __init__(self):
        self.lock = threading.Lock()
        self.binaries: OrderedDict[tuple, dict[int, list[Frame]]] = OrderedDict()

    def table(self, key: tuple) -> dict[int, list[Frame]]:
        with self.lock:
            t = self.binaries.pop(key, None)
            if t is None:
                t = {}
            self.binaries[key] = t
            while len(self.binaries) > CACHED_BINARIES:
                self.binaries.popitem(last=False)
            return t


_cache = _Cache()


def _addr2line(binary: Path, addrs: list[int]) -> dict[int, list[Frame]]:
    """addr -> its frames, innermost (inlined) first; an address addr2line cannot place is absent."""
    tool = shutil.which("addr2line")
    if tool is None or not addrs:
        return {}
    try:
        res = subprocess.run([tool, "-e", str(binary), "-f", "-i", "-C", "-a", *(hex(a) for a in addrs)],
                             capture_output=True, timeout=ADDR2LINE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return {}
    out: dict[int, list[Frame]] = {}
    current: list[Frame] | None = None
    lines = res.stdout[:OUTPUT_CAP].decode(errors="replace").splitlines()
    k = 0
    while k < len(lines):
        text = lines[k]
        if re.fullmatch(r"0x[0-9a-f]+", text):
            current = out.setdefault(int(text, 16), [])
            k += 1
            continue
        if current is None or k + 1 >= len(lines):
            break
        where = lines[k + 1].split(" (discriminator")[0]
        file, _, line = where.rpartition(":")
        if file and file != "??" and line.isdigit():
            current.append(Frame(text, file, int(line)))
        k += 2
    return {a: frames for a, frames in out.items() if frames}


def resolve(binary: Path, addrs: list[int | None]) -> list[Frame]:
    """The frames of `addrs` (innermost first, inlined calls expanded), resolved in `binary`."""
    try:
        st = binary.stat()
    except OSError:
        return []
    image = _image(binary)
    if image is None:
        return []
    base, end = image
    wanted = [None if a is None or base + a >= end else base + a for a in addrs]
    table = _cache.table((str(binary), st.st_size, st.st_mtime_ns))
    if len(table) > CACHED_ADDRESSES:
        table.clear()
    missing = sorted({a for a in wanted if a is not None and a not in table})
    if missing:
        found = _addr2line(binary, missing)
        for a in missing:
            table[a] = found.get(a, [])
    # an address that resolves to nothing stays as a blank frame: the API the kernel called is the
    # frame right inside the kernel's, not one further in behind a C library call
    return [f for a in wanted for f in (table.get(a) or [UNKNOWN] if a is not None else [UNKNOWN])]


def _is_kernel(frame: Frame, source_name: str) -> bool:
    p = Path(frame.file)
    return p.name == source_name and p.parent.name in KERNEL_DIRS


def _is_api(frame: Frame) -> bool:
    """A frame of the emulator's device API (not of the launcher around the kernel). The headers are
    told by their place in a checkout (…/copilot/backends/sim/include/…), not by this checkout's path:
    the precompiled header is keyed by the headers' contents and relative names, so a build may carry
    the line tables of another checkout's identical headers."""
    parts = Path(os.path.normpath(frame.file)).parts       # the name only: nothing is opened
    n = len(_INCLUDE_TAIL)
    inside = any(parts[k:k + n] == _INCLUDE_TAIL for k in range(len(parts) - n))
    return inside and parts[-1] not in LAUNCHER_FILES


_OPERATOR = re.compile(r"operator\s*(\(\)|\[\]|<<=|>>=|<<|>>|<=>|->\*?|[-+*/%^&|~!=<>]=?|&&|\|\||\+\+|--|,)")


def short_name(function: str) -> str:
    """`void AscendC::DataCopy<float>(AscendC::LocalTensor<float> const&, ...)` -> `DataCopy`;
    `AscendC::GlobalTensor<half>::GetValue(unsigned long) const` -> `GlobalTensor::GetValue`."""
    ops: list[str] = []

    def keep(m: re.Match) -> str:
        ops.append("operator" + m.group(1))
        return f"\0{len(ops) - 1}\0"

    text = _OPERATOR.sub(keep, function)
    flat, depth = [], 0
    for ch in text:                    # drop template arguments and parameter lists
        if ch in "<(":
            depth += 1
        elif ch in ">)" and depth:
            depth -= 1
        elif not depth:
            flat.append(ch)
    words = "".join(flat).replace("{lambda", " {lambda").split()
    words = [w for w in words if w not in ("const", "volatile", "&", "&&", "noexcept")]
    name = words[-1] if words else text
    parts = [p for p in name.split("::") if p and p not in HIDDEN_SCOPES]
    name = "::".join(parts[-2:]) if parts else name
    return re.sub("\0(\\d+)\0", lambda m: ops[int(m.group(1))], name)


def crash_site(frames: list[Frame], source_name: str) -> CrashSite | None:
    """The candidate's innermost line among `frames` and the emulated API it had called there (the
    frame right inside it, when that is the emulator's device API); without a candidate frame, the outermost AscendC API
    the crash was in, if any."""
    for k, f in enumerate(frames):
        if not _is_kernel(f, source_name):
            continue
        api = short_name(frames[k - 1].function) if k and _is_api(frames[k - 1]) else ""
        return CrashSite(f.line, api, short_name(f.function))
    apis = [f for f in frames if _is_api(f) and "AscendC::" in f.function.split("(")[0]]
    return CrashSite(0, short_name(apis[-1].function), "") if apis else None


def describe(site: CrashSite) -> str:
    """The words a crash message ends with: where in the candidate, through which API."""
    where = f"line {site.line}" + (f" (in {site.function})" if site.function else "")
    if site.api and site.line:
        return f"in the emulator's {site.api}, called from {where}"
    if site.api:
        return f"in the emulator's {site.api}"
    return f"at {where}"
