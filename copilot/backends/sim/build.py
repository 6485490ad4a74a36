"""Compile a candidate into the sim backend's launcher executable.

The generated translation unit `#include`s the candidate by its absolute path (so g++ names the
candidate's file and lines), after the precompiled header of the emulator's API and the per-case
`DTYPE_<NAME>` macros, then includes `cannsim/harness_entry.h` (the calls into the candidate's entry
and TilingFunc). It is linked with the generic launcher, `cannsim/harness.cpp` (case file, sandbox,
GM buffers, tiling child, one forked process per block), compiled once per version of the headers and
per arch beside the precompiled header. Builds are cached by a hash of everything that goes into them.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from copilot.backends.base import Build
from copilot.chips import ChipProfile, load_chip
from copilot.diagnostics import Diagnostic
from copilot.dtypes import dtype as lookup_dtype
from copilot.errors import BadInput
from copilot.backends.sim import policy
from copilot.backends.sim.units import device_libc_calls, strip_comments, split_units, SplitError
from copilot.backends.sim.opdef import check_opdef
from copilot import sandbox

SIM_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = SIM_DIR / "include"
GXX = os.environ.get("CANNPILOT_CXX", "g++")
# -Og: measured on 2 shared cores, the launcher compiles in about the time of -O0 (~half of -O1)
# and the 16M-element emulation runs about as fast as with -O1 (twice as fast as -O0).
# -g1: line tables and inlined-call records only, so that a crash report names the candidate's line
# and the API it was in (crash_site.py). Measured (docs/results.md, issue 21, session 11): no build
# time cost (compiler CPU 0.96x per candidate, 1.00x cold with the precompiled headers), the
# launcher 235 KB -> 715 KB.
CXX_FLAGS = ["-std=c++20", "-Og", "-g1", "-pipe", "-fdiagnostics-plain-output", "-fmax-errors=20",
             "-Winvalid-pch"]
GENERATOR_VERSION = "4"
# -Wconversion finds a repeat count narrowed into the APIs' uint8_t repeatTime (L2.REPEAT_LIMIT);
# warnings do not change the precompiled headers.
WARN_FLAGS = ["-Wconversion", "-Wno-sign-conversion"]
SANDBOX_VERSION = "1"           # builds from the sandboxed compiler (root-owned copies)
COMPILE_TIMEOUT_S = 180
COMPILE_MEMORY = 3 << 30        # address space of each compiler process (a preprocessor bomb stops here)
# The headers each unit sees, as on CANN: op_kernel/ gets the kernel API (the tiling glue comes with
# it), op_host/ the graph, tiling and registration headers. The device unit is marked so the few
# headers both sides may include (register/tilingdata_base.h) leave the host types out.
DEVICE_HEADERS = ["kernel_operator.h", "cannsim/tiling.h"]
HOST_HEADERS = ["cannsim/host.h", "cannsim/tiling.h", "tiling/platform/platform_ascendc.h",
                "register/tilingdata_base.h", "register/op_def_registry.h", "tiling/tiling_api.h"]
DEVICE_MARK = "#define CANNSIM_DEVICE_UNIT 1"
PCH_HEADERS = DEVICE_HEADERS + [h for h in HOST_HEADERS if h not in DEVICE_HEADERS]
PCH_SYSTEM = ["<cerrno>", "<csignal>", "<cstdio>", "<cstdlib>", "<cstring>", "<fstream>", "<new>",
              "<string>", "<vector>", "<fcntl.h>", "<unistd.h>", "<sys/mman.h>", "<sys/wait.h>",
              "<sys/resource.h>", "<sys/prctl.h>", "<linux/filter.h>", "<linux/seccomp.h>",
              "<linux/audit.h>", "<sys/syscall.h>"]
NPU_ARCH_AICORE = {2201: 220, 2002: 200}

HINTS = {
    "L4.API_SIGNATURE": "no overload takes these argument types: compare with the AscendC signature "
                        "(tensor element types must match; scalars must have the tensor's type)",
    "L4.API_UNKNOWN": "this name is not an AscendC API on this chip (or not emulated): check the "
                      "spelling and the API list for the chip",
    "CPP.COMPILE": "fix the C++ error at this line",
    "L4.SPLIT_UNIT": "CANN compiles op_kernel and op_host apart: device code may not use what only the host "
                     "half declares (namespace optiling / ops, ge, gert, host includes) and the host half "
                     "sees only the tiling data of the device file; move the shared declaration into the "
                     "tiling data (before the registered struct) or duplicate it",
    "L4.NAME_CLASH": "the AscendC headers already put this name in the global or AscendC scope (as on CANN): "
                     "rename your type, e.g. <Op>TilingData or <Op>CustomTiling",
    "L4.DEVICE_LIBC": "compute the value in the host TilingFunc and pass it in the tiling data, or use the "
                      "vector APIs (Sqrt, Exp, Ln on a LocalTensor); on Atlas 350 AscendC::Std::sqrt / abs",
}

# Names only one side of a CANN op project declares: a device unit that uses a host name (or the
# reverse) compiled only because both halves shared one translation unit.
HOST_ONLY_NAMES = {"ge", "gert", "optiling", "platform_ascendc", "fe", "ops", "OpDef", "TilingFunc", "context",
                   "GetSizeByDataType", "TilingContext"}
DEVICE_ONLY_NAMES = {"AscendC", "LocalTensor", "GlobalTensor", "TPipe", "TQue", "TBuf", "TPosition", "GetBlockIdx",
                     "GetBlockNum", "half", "bfloat16_t", "GM_ADDR", "__aicore__", "__gm__", "event_t"}
_UNDECLARED = re.compile(r"was not declared|has not been declared|does not name a type|is not a member of|"
                         r"is not a namespace|not declared in|is not a class")


def cache_dir() -> Path:
    """Where builds and precompiled headers live: $CANNPILOT_CACHE or the platform cache dir."""
    env = os.environ.get("CANNPILOT_CACHE")
    if env:
        root = Path(env).expanduser()
    else:
        import platformdirs
        root = Path(platformdirs.user_cache_dir("cannpilot"))
    path = root / "sim"
    path.mkdir(parents=True, exist_ok=True)
    return path


# ---------------------------------------------------------------- source scanning

@dataclass
class EntryInfo:
    name: str
    num_args: int
    line: int


_ENTRY_RE = re.compile(r'extern\s+"C"\s+((?:(?:__global__|__aicore__|__vector__|__cube__|inline)\s+)+)'
                       r'void\s+(\w+)\s*\(')


def find_entry(src: str) -> EntryInfo | None:
    code = strip_comments(src)
    m = _ENTRY_RE.search(code)
    if not m or "__global__" not in m.group(1):
        return None
    depth, i, args, cur = 1, m.end(), [], []
    while i < len(code) and depth:
        ch = code[i]
        if ch in "([{<":
            depth += ch != "<"
        if ch in ")]}":
            depth -= 1
        if depth == 1 and ch == ",":
            args.append("".join(cur))
            cur = []
        elif depth:
            cur.append(ch)
        i += 1
    args.append("".join(cur))
    args = [a.strip() for a in args if a.strip() and a.strip() != "void"]
    return EntryInfo(m.group(2), len(args), code.count("\n", 0, m.start()) + 1)


def _line_of(code: str, pattern: str) -> int:
    m = re.search(pattern, code)
    return code.count("\n", 0, m.start()) + 1 if m else 0


def _tiling_types(code: str, op_names: list[str]) -> tuple[str | None, str | None]:
    default = re.search(r"\bREGISTER_TILING_DEFAULT\s*\(\s*([\w:]+)\s*\)", code)
    legacy = re.findall(r"\bREGISTER_TILING_DATA_CLASS\s*\(\s*(\w+)\s*,\s*([\w:]+)\s*\)", code)
    chosen = None
    for op, cls in legacy:
        if op in op_names:
            chosen = cls
            break
    if chosen is None and legacy:
        chosen = legacy[0][1]
    return (default.group(1) if default else None), chosen


def camel(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_") if p)


# ---------------------------------------------------------------- compiler output → diagnostics

_LOC_RE = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<rest>.*)$")
_ID_IN_TEXT = re.compile(r"\b((?:L[0-6]|RUN|CPP)\.[A-Z][A-Z0-9_]+)\b")


def _classify(msg: str) -> str:
    m = _ID_IN_TEXT.search(msg)
    if m:
        return m.group(1)
    if "AscendC::" in msg and re.search(r"redefinition of|conflicting declaration|conflicts with a previous|"
                                        r"is ambiguous|already declared", msg):
        return "L4.NAME_CLASH"
    if ("no matching function for call" in msg or "no matching member function" in msg
            or "too many arguments to function" in msg or "too few arguments to function" in msg):
        return "L4.API_SIGNATURE"
    if ("was not declared in this scope" in msg or "is not a member of 'AscendC" in msg
            or re.search(r"'(?:class |struct )?AscendC::[^']*' has no member named", msg)
            or "has no member named" in msg and "AscendC::" in msg):
        return "L4.API_UNKNOWN"
    return "CPP.COMPILE"


def _api_name(msg: str) -> str:
    m = re.search(r"call to '(?:AscendC::)?([\w]+)", msg) or re.search(r"'(?:AscendC::)?(\w+)' (?:was not|is not)", msg) \
        or re.search(r"no member named '(\w+)'", msg)
    return m.group(1) if m else ""


def parse_compiler_output(raw: str, candidate: Path | list[Path], glue: dict[str, int],
                          where: dict[int, str] | None = None) -> list[Diagnostic]:
    """g++ errors as Diagnostics at the candidate's line.

    An error inside the emulator's headers is attributed to the candidate line that instantiated
    it (the innermost "required from" frame in the candidate), or to the candidate line that
    included the header. `glue` maps names (entry, TilingFunc) to candidate lines for errors in
    the generated launcher.
    """
    cands = [str(c) for c in (candidate if isinstance(candidate, list) else [candidate])]
    cand_names = set(cands) | {os.path.realpath(c) for c in cands}
    diags: list[Diagnostic] = []
    chain: list[tuple[str, int]] = []      # "required from" / "In file included from" frames
    current: dict | None = None

    def in_candidate(path: str) -> bool:
        return path in cand_names or os.path.realpath(path) in cand_names

    def finish():
        nonlocal current
        if current is None:
            return
        line = current["line"] if in_candidate(current["file"]) else 0
        found = current["file"] if line else ""
        if not line:
            for f, ln in current["frames"]:
                if in_candidate(f):
                    line, found = ln, f
                    break
        if not line:
            for f, ln in current["notes"]:
                if in_candidate(f):
                    line, found = ln, f
                    break
        msg = current["msg"]
        if not line and not in_candidate(current["file"]):
            for name, ln in glue.items():
                if name and name in msg:
                    line = ln
                    break
        ident = _classify(msg)
        diags.append(Diagnostic(id=ident, severity="error", message=msg, line=line,
                                hint=HINTS.get(ident, ""), api=_api_name(msg),
                                raw="\n".join(current["raw"])))
        if where is not None:
            where[id(diags[-1])] = found
        current = None

    for text in raw.splitlines():
        if text.startswith("In file included from") or text.lstrip().startswith("from "):
            m = re.search(r"(?:In file included from|from)\s+(.+):(\d+)[:,]?$", text.strip())
            if m:
                chain.append((m.group(1), int(m.group(2))))
            continue
        m = _LOC_RE.match(text)
        if not m:
            if ": In " in text or ": At global scope" in text:
                finish()
            elif current is not None:
                current["raw"].append(text)
            continue
        rest = m.group("rest")
        loc = (m.group("file"), int(m.group("line")))
        if rest.startswith("error:") or rest.startswith("fatal error:"):
            finish()
            msg = rest.split(":", 1)[1].strip()
            frames = [f for f in chain]
            current = {"file": loc[0], "line": loc[1], "msg": msg, "frames": frames, "notes": [],
                       "raw": [text]}
            chain = []
        elif rest.startswith("note:") or rest.startswith("warning:"):
            if current is not None and rest.startswith("note:"):
                current["notes"].append(loc)
                current["raw"].append(text)
        elif "required from" in rest or "required by substitution" in rest or "in 'constexpr' expansion" in rest \
                or "instantiated from" in rest:
            if current is not None and not current["frames"]:
                finish()
            chain.append(loc)
        else:
            if current is not None:
                current["raw"].append(text)
    finish()
    # "In file included from" frames come innermost-first after "required from" ones; keep the
    # innermost candidate frame by order of appearance (done above). Deduplicate.
    seen, out = set(), []
    for d in diags:
        key = (d.id, d.line, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def split_findings(diags: list[Diagnostic], units, halves: dict[str, Path], where: dict[int, str]) -> list[Diagnostic]:
    """Compiler errors caused by the split into CANN's two units, as L4.SPLIT_UNIT: a name the
    failing half uses that only the other half declares (or a name of the other side's API)."""
    half_of = {str(p): u for u, p in halves.items()} | {os.path.realpath(p): u for u, p in halves.items()}
    # The words on the lines only the other half has (the declarations this half cannot see).
    texts = {u: strip_comments(getattr(units, u)).split("\n") for u in halves}
    only = {u: set(re.findall(r"\b\w+\b", "\n".join(t for t, o in zip(texts[u], texts[v]) if t.strip() and not o.strip())))
            for u, v in (("device", "host"), ("host", "device"))}
    other_api = {"device": HOST_ONLY_NAMES, "host": DEVICE_ONLY_NAMES}
    out = []
    for d in diags:
        unit = half_of.get(where.get(id(d), ""), "")
        names = ([n for q in re.findall(r"'([\w:]+)'", d.message) for n in q.split("::") if n]
                 if _UNDECLARED.search(d.message) else [])
        if unit and d.id in ("CPP.COMPILE", "L4.API_UNKNOWN") and names:
            other = "host" if unit == "device" else "device"
            crossing = [n for n in names if n in other_api[unit] or n in only[other]]
            if crossing:
                side = "device (op_kernel)" if unit == "device" else "host (op_host)"
                d = Diagnostic("L4.SPLIT_UNIT", "error",
                               f"the {side} half uses '{crossing[0]}', which only the {other} half declares: "
                               f"this compiles as one file but not as CANN's two units ({d.message})",
                               d.line, HINTS["L4.SPLIT_UNIT"], api=d.api, raw=d.raw)
        elif d.id == "L4.NAME_CLASH":
            d.hint = HINTS["L4.NAME_CLASH"]
        out.append(d)
    return out


_NARROW = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+):\s*warning: (?P<msg>(?:unsigned )?conversion "
                     r"from '(?P<src>[^']+)'[^\n]* to '(?:const )?(?:uint8_t|unsigned char)'[^\n]*)$", re.M)


_REPEAT_PARAM = re.compile(r"\buint8_t\s+repeatTimes?\b")


def repeat_apis() -> frozenset[str]:
    """The emulated APIs with a `uint8_t repeatTime` parameter: functions declaring one, and the
    names every API-defining macro with one is used for."""
    global _REPEAT_APIS
    try:
        return _REPEAT_APIS
    except NameError:
        pass
    names: set[str] = set()
    texts = [p.read_text(errors="replace") for d in include_dirs() for p in d.rglob("*.h")]
    for text in texts:
        for m in re.finditer(r"\binline\s+[\w:<>]+\s+(\w+)\s*\(([^{;]*)\)\s*\{", text):
            if _REPEAT_PARAM.search(m.group(2)):
                names.add(m.group(1))
        for m in re.finditer(r"#define\s+(CANNSIM_\w+)\s*\(\s*NAME\b((?:[^\n]*\\\n)*[^\n]*)", text):
            if _REPEAT_PARAM.search(m.group(2)):
                for t in texts:
                    names.update(re.findall(rf"\b{m.group(1)}\(\s*(\w+)", t))
    _REPEAT_APIS = frozenset(n for n in names if n != "NAME")
    return _REPEAT_APIS


def _call_name(code: str, offset: int) -> str:
    """The function whose argument list holds `offset` (innermost unclosed parenthesis)."""
    depth = 0
    for i in range(min(offset, len(code)) - 1, -1, -1):
        ch = code[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                m = re.search(r"(\w+)\s*(?:<[^()]*>)?\s*$", code[:i])
                return m.group(1) if m else ""
            depth -= 1
        elif ch in ";{}" and depth == 0:
            return ""
    return ""


def repeat_narrowing(raw: str, device_half: Path, device_text: str) -> list[Diagnostic]:
    """A repeat count wider than the APIs' `uint8_t repeatTime`, at the candidate's line: an error
    when the compiler sees the value change (a constant above 255), a warning when it may."""
    code = strip_comments(device_text)
    own = set(re.findall(r"\b(\w+)\s*\([^;{}()]*(?:\([^()]*\)[^;{}()]*)*\)\s*(?:const\s*)?\{", code))
    starts = [0] + [i + 1 for i, ch in enumerate(code) if ch == "\n"]
    names = {str(device_half), os.path.realpath(device_half)}
    out, seen = [], set()
    for m in _NARROW.finditer(raw):
        if m.group("file") not in names and os.path.realpath(m.group("file")) not in names:
            continue
        line, col = int(m.group("line")), int(m.group("col"))
        if line > len(starts):
            continue
        api = _call_name(code, starts[line - 1] + col - 1)
        # An API with a uint8_t repeatTime (not a function of the candidate's own of that name).
        if api not in repeat_apis() or api in own or (line, api) in seen:
            continue
        seen.add((line, api))
        certain = "changes value" in m.group("msg")
        out.append(Diagnostic("L2.REPEAT_LIMIT", "error" if certain else "warning",
                              f"{api}: the repeat count ({m.group('src')}) is narrowed into the 8-bit repeatTime "
                              f"parameter; the chip keeps its low 8 bits ({m.group('msg')})", line,
                              "repeat counts above 255 wrap: split the call into chunks of at most 255 repeats "
                              "or use the count form; cast a count known to fit with static_cast<uint8_t>",
                              api=api))
    return out


# ---------------------------------------------------------------- PCH and compile

def _gxx_version() -> str:
    global _GXX_VERSION
    try:
        return _GXX_VERSION
    except NameError:
        pass
    try:
        _GXX_VERSION = subprocess.run([GXX, "--version"], capture_output=True, text=True,
                                      timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        _GXX_VERSION = "unknown"
    return _GXX_VERSION


def include_dirs() -> list[Path]:
    extra = os.environ.get("CANNPILOT_SIM_INCLUDE_EXTRA")
    return ([Path(p) for p in extra.split(os.pathsep) if p] if extra else []) + [INCLUDE_DIR]


def headers_hash() -> str:
    h = hashlib.sha256()
    for d in include_dirs():
        for p in sorted(d.rglob("*")):
            if p.is_file() and p.suffix in (".h", ".hpp", ".cpp", ".inc"):
                h.update(str(p.relative_to(d)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def _arch_macros(chip: ChipProfile) -> list[str]:
    macros = [f"-D__NPU_ARCH__={chip.arch}"]
    if chip.arch in NPU_ARCH_AICORE:
        macros.append(f"-D__CCE_AICORE__={NPU_ARCH_AICORE[chip.arch]}")
    return macros


class _Lock:
    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _inc_flags(pch_dir: Path | None) -> list[str]:
    flags = [f"-I{pch_dir}"] if pch_dir else []
    return flags + [f"-I{d}" for d in include_dirs()]


def _pch_key(chip: ChipProfile, hh: str) -> str:
    flags = CXX_FLAGS + _arch_macros(chip)
    return hashlib.sha256(json.dumps([hh, flags, _gxx_version(), GENERATOR_VERSION]).encode()).hexdigest()[:24]


def _compile_once(product: Path, failed: Path, source: Path, text: str, command) -> bool:
    """Build `product` once for every process: under its directory's lock, write `source`, run
    `command(tmp)` and rename the temporary result into place. A compile error leaves `failed` (the
    compiler's output) so later builds do without; a timeout (a loaded machine, not broken headers)
    is tried again by the next build."""
    if product.exists():
        return True
    product.parent.mkdir(parents=True, exist_ok=True)
    with _Lock(product.parent / ".lock"):
        if product.exists():
            return True
        if failed.exists():
            return False
        source.write_text(text)
        tmp = product.with_name(f"{product.name}.tmp{os.getpid()}")
        try:
            proc = subprocess.run(command(tmp), capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S,
                                  env={**os.environ, "LC_ALL": "C"})
        except subprocess.TimeoutExpired:
            tmp.unlink(missing_ok=True)
            return False
        if proc.returncode != 0:
            failed.write_text(proc.stderr)
            tmp.unlink(missing_ok=True)
            return False
        os.replace(tmp, product)
    return True


def _pch_text(unit: str) -> str:
    headers = DEVICE_HEADERS if unit == "device" else HOST_HEADERS
    return (f"// Precompiled for the sim backend's generated {unit} units.\n#pragma once\n"
            + (DEVICE_MARK + "\n" if unit == "device" else "")
            + "".join(f"#include {s}\n" for s in PCH_SYSTEM)
            + "".join(f'#include "{h}"\n' for h in headers if any((d / h).exists() for d in include_dirs())))


PCH_KEEP_DAYS = 14      # a precompiled header unused this long (older headers, another g++) is removed
_PCH_SEEN: set[Path] = set()


def _note_pch_use(pch_dir: Path) -> None:
    """Stamp `pch_dir` as used (once per process) and, the first time a process sees a directory
    that does not exist yet (new headers, flags or g++), remove the precompiled headers no process
    has used for PCH_KEEP_DAYS: each is ~140 MB, and every change of the headers makes a new one.
    A directory in use is stamped by its users, so only stale ones go."""
    if pch_dir in _PCH_SEEN:
        return
    _PCH_SEEN.add(pch_dir)
    if not pch_dir.exists():
        cutoff = time.time() - PCH_KEEP_DAYS * 86400
        for old in pch_dir.parent.glob("*"):
            stamp = old / ".used"
            try:
                used = stamp.stat().st_mtime if stamp.exists() else old.stat().st_mtime
            except OSError:
                continue
            if old != pch_dir and old.is_dir() and used < cutoff:
                shutil.rmtree(old, ignore_errors=True)
    pch_dir.mkdir(parents=True, exist_ok=True)
    (pch_dir / ".used").touch()


def ensure_pch(chip: ChipProfile, hh: str | None = None) -> Path | None:
    """The directory holding `cannsim_pch.h` (the device unit's headers) and `cannsim_host_pch.h`
    (the host unit's) with their .gch for this chip's arch, built once."""
    hh = hh or headers_hash()
    flags = CXX_FLAGS + _arch_macros(chip)
    pch_dir = cache_dir() / "pch" / _pch_key(chip, hh)
    _note_pch_use(pch_dir)
    for name, unit in (("cannsim_pch.h", "device"), ("cannsim_host_pch.h", "host")):
        header = pch_dir / name
        ok = _compile_once(pch_dir / f"{name}.gch", pch_dir / f"{unit}.failed", header, _pch_text(unit),
                           lambda tmp, header=header: [GXX, *flags, *_inc_flags(None), "-x", "c++-header",
                                                       str(header), "-o", str(tmp)])
        if not ok:
            return None
    return pch_dir


def ensure_harness_object(chip: ChipProfile, hh: str | None = None) -> Path | None:
    """`harness.o`, the generic launcher (`cannsim/harness.cpp`) compiled once for this chip's arch
    with the flags and precompiled header of the launchers it is linked into; None if it does not
    compile (the launcher TU then includes `cannsim/harness.cpp` itself). It lives in the PCH's
    directory, whose key covers the headers (harness.cpp included), flags, arch and g++ version."""
    hh = hh or headers_hash()
    pch_dir = ensure_pch(chip, hh)
    obj_dir = cache_dir() / "pch" / _pch_key(chip, hh)
    tu = obj_dir / "harness_main.cpp"
    text = ("// The sim backend's generic launcher, compiled once and linked into every launcher.\n"
            + ('#include "cannsim_host_pch.h"\n' if pch_dir else "") + '#include "cannsim/harness.cpp"\n')
    obj = obj_dir / "harness.o"
    ok = _compile_once(obj, obj_dir / "harness.failed", tu, text,
                       lambda tmp: [GXX, *CXX_FLAGS, *_arch_macros(chip), *_inc_flags(pch_dir), "-c", str(tu),
                                    "-o", str(tmp)])
    return obj if ok else None


def _dtype_macros(task, dtypes: list[str]) -> list[tuple[str, str]]:
    names = [t.name for t in task.inputs] + [t.name for t in task.outputs]
    dts = list(dtypes)
    if len(dts) < len(names):
        fill = dts[0] if dts else "float32"
        dts += [fill] * (len(names) - len(dts))
    protos = [t.dtypes[0] if t.dtypes else "float32" for t in [*task.inputs, *task.outputs]]
    out = []
    for name, dt, proto in zip(names, dts, protos):
        # an omitted optional input (dtype None) keeps its macro: the proto's first dtype
        out.append((f"DTYPE_{re.sub(r'[^A-Za-z0-9]', '_', name).upper()}", lookup_dtype(dt or proto).cpp))
    return out


def _read_source(source) -> tuple[str, Path | None]:
    if isinstance(source, Path):
        path = source
    elif isinstance(source, str) and "\n" not in source and len(source) < 4096 and Path(source).is_file():
        path = Path(source)
    else:
        return str(source), None
    try:
        return path.read_text(errors="replace"), path.resolve()
    except OSError as e:
        raise BadInput(f"{path}: cannot read the kernel file ({e.strerror})") from None


# The status of a compile that did not end by itself (timed out, killed): not a verdict on the
# source, so it is never cached.
TRANSIENT = -1


def _sandboxed_compile(cmd: list[str], bdir: Path, out_dir: Path, readable: list[Path]) -> tuple[str, int]:
    """Run the compiler on candidate source in the sandbox: its own uid, no network, memory, CPU and
    time limits, and (with namespaces) a root holding only /usr, `readable` and `out_dir`. A compile
    stopped from outside is run a second time; (output, TRANSIENT) if that one is stopped too."""
    caps = sandbox.sandbox_capabilities()
    gxx = shutil.which(cmd[0]) or cmd[0]
    jail = None
    if caps["pid_mount_ipc_namespaces"] and os.path.realpath(gxx).startswith("/usr/"):
        jail = cache_dir() / "jail"
        jail.mkdir(exist_ok=True)
    limits = sandbox.Limits(wall_seconds=COMPILE_TIMEOUT_S, cpu_seconds=COMPILE_TIMEOUT_S,
                            address_space_bytes=COMPILE_MEMORY, processes=32, file_bytes=512 << 20,
                            memory_bytes=2 * COMPILE_MEMORY)
    binds = [(str(p), False) for p in readable] + [(str(out_dir), True)]
    for attempt in range(2):
        with sandbox.run_uid() as uid:
            if os.geteuid() == 0:
                os.chown(out_dir, uid, uid)
            res = sandbox.run_sandboxed(["env", "LC_ALL=C", *cmd], out_dir, limits, uid=uid, jail=jail,
                                        binds=binds)
        if not (res.timed_out or res.signal) or attempt:
            break
        # a compile stopped from outside (the wall clock of a loaded machine, a kill) says nothing
        # about the source: once more before it is reported
    if res.timed_out:
        return f"g++ did not finish within {COMPILE_TIMEOUT_S} s", TRANSIENT
    if res.signal:
        return (res.stderr + f"\ng++ was stopped by signal {res.signal} (the compile exceeded its memory or CPU "
                "limit, or the machine stopped it)"), TRANSIENT
    return res.stderr + res.stdout, res.returncode if res.returncode is not None else TRANSIENT


# The source analyses of one text, shared by the builds of its dtype combinations (each is about
# a second of Python on a 1,000-line lowered kernel: most of a tiling-only child's build).
@functools.lru_cache(maxsize=16)
def _scan(text: str) -> tuple[Diagnostic, ...]:
    return tuple(policy.scan(text))


@functools.lru_cache(maxsize=16)
def _split(text: str):
    return split_units(text)


# Tiling knobs of the host half (`constexpr uint64_t KNOB_<NAME> = <value>;`, one per line, as the
# lowering emits them): read from a data block of the launcher instead, so that candidates that
# differ only in these values share one compiled host unit and one link.
_KNOB_LINE = re.compile(r"^constexpr\s+uint64_t\s+(KNOB_[A-Z0-9_]+)\s*=\s*(\d+)\s*;\s*$")
MAX_KNOBS = 16
# The data block's first two words (unique in the launcher: the patch refuses a launcher where
# they occur more than once), then MAX_KNOBS values.
KNOB_MAGIC = (0x31766B6E6B6D6973, 0x6B636F6C62626F6B)
# What can tell a constant from a value read at run time: a host half using any of it keeps its literals.
_CONSTANT_PROBES = re.compile(r"__builtin_constant_p|is_constant_evaluated|\bconsteval\b|\bcannsim_knob")


def knob_params(host_text: str) -> tuple[str, list[int]] | None:
    """(the host half with each knob line reading its value from the launcher's knob block, the
    values) when the host half has knob lines and nothing that could tell the two apart; else None.
    The lines keep their numbers, so diagnostics land where they would."""
    bare = strip_comments(host_text)
    if _CONSTANT_PROBES.search(bare):
        return None
    lines, bare_lines = host_text.split("\n"), bare.split("\n")
    names, values = [], []
    for i, (line, b) in enumerate(zip(lines, bare_lines)):
        m = _KNOB_LINE.match(b.strip()) if "KNOB_" in b else None
        if m is None:
            continue
        if m.group(1) in names or len(names) == MAX_KNOBS or int(m.group(2)) >= 1 << 63:
            return None
        lines[i] = (f"static const uint64_t {m.group(1)} = static_cast<uint64_t>(cannsim_knob_block[{2 + len(names)}]);"
                    "   // tiling knob (sim: read from the launcher's knob block)")
        names.append(m.group(1))
        values.append(int(m.group(2)))
    if not names:
        return None
    return "\n".join(lines), values


def _knob_block_decl() -> str:
    return ('extern "C" { __attribute__((used)) volatile unsigned long long cannsim_knob_block[%d] = {%#xULL, %#xULL}; }'
            % (2 + MAX_KNOBS, *KNOB_MAGIC))


def _patch_knobs(launcher: Path, values: list[int], dest: Path) -> bool:
    """`dest`: a copy of the knob-parametrised `launcher` with `values` in its knob block; False
    when the block is not found exactly once (the caller then builds the literal host unit)."""
    import struct

    data = bytearray(launcher.read_bytes())
    magic = struct.pack("<QQ", *KNOB_MAGIC)
    at = data.find(magic)
    if at < 0 or data.find(magic, at + 1) >= 0:
        return False
    body = at + len(magic)
    if any(data[body:body + 8 * MAX_KNOBS]):        # placeholders are zeros
        return False
    data[body:body + 8 * len(values)] = struct.pack(f"<{len(values)}Q", *values)
    copy = dest.with_name(f"{dest.name}.tmp{_tmp_tag()}")
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o755)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(copy, 0o755)
    os.replace(copy, dest)
    return True


def build(source, task, dtypes: list[str], chip="910B2", *, source_policy: bool = True,
          knob_data: bool = True) -> Build:
    """Compile `source` (a path or the text of a candidate) for `task` with the case's dtypes
    (inputs then outputs; missing output dtypes default to the first input's). `source_policy`
    (off only in tests of the layers behind it): refuse what `policy.scan` finds. `knob_data`: a
    host half with tiling-knob lines is built once for all their values (`knob_params`); off, the
    literal host half is compiled (the winner's re-validation builds what is exported)."""
    chip = load_chip(chip)
    text, path = _read_source(source)
    refused = list(_scan(text)) if source_policy else []
    if refused:
        return Build(ok=False, diagnostics=refused, chip=chip.name, source_path=path, entry="")
    code = strip_comments(text)
    src_hash = hashlib.sha256(text.encode()).hexdigest()
    if path is None:
        src_dir = cache_dir() / "src" / src_hash[:24]
        src_dir.mkdir(parents=True, exist_ok=True)
        path = src_dir / f"{getattr(task, 'name', 'candidate')}.cpp"
        if not path.exists():
            path.write_text(text)

    from copilot.oracle.dynamic import SHAPE_ARG, data_dependent

    # an output whose length depends on the data adds the GM_ADDR its shape is written to
    shape_arg = [SHAPE_ARG] if data_dependent(task) else []
    n_io = len(task.inputs) + len(task.outputs) + len(shape_arg)
    entry = find_entry(text)
    pre: list[Diagnostic] = []
    if entry is None:
        pre.append(Diagnostic("L4.API_SIGNATURE", "error",
                              'no kernel entry found: expected extern "C" __global__ __aicore__ void '
                              f"<name>(GM_ADDR ...) taking the {n_io} inputs and outputs, then workspace "
                              "and tiling", 0, "declare the entry as in the candidate contract",
                              api="kernel entry"))
    elif entry.num_args != n_io + 2:
        names = ", ".join([t.name for t in task.inputs] + [t.name for t in task.outputs] + shape_arg
                          + ["workspace", "tiling"])
        pre.append(Diagnostic("L4.API_SIGNATURE", "error",
                              f"kernel entry '{entry.name}' takes {entry.num_args} arguments; task "
                              f"{task.name} needs {n_io + 2}: GM_ADDR {names}",
                              entry.line, "inputs then outputs in proto order, "
                              + (f"then GM_ADDR {SHAPE_ARG} (the shapes of the outputs whose length depends "
                                 "on the data), " if shape_arg else "")
                              + "then GM_ADDR workspace, GM_ADDR tiling", api="kernel entry"))
    if not re.search(r"\bTilingFunc\s*\(", code):
        pre.append(Diagnostic("CPP.COMPILE", "error",
                              "no host tiling function: expected static ge::graphStatus "
                              "TilingFunc(gert::TilingContext* context) in namespace optiling", 0,
                              "add the host TilingFunc (it sets the tiling data and the block dim)",
                              api="TilingFunc"))
    if pre:
        return Build(ok=False, diagnostics=pre, chip=chip.name, source_path=path,
                     entry=entry.name if entry else "")

    try:
        units = _split(text)
    except SplitError as e:
        return Build(ok=False, diagnostics=[Diagnostic("CPP.COMPILE", "error", f"{e}: the device and host halves "
                                                       "cannot be told apart", 0, HINTS["CPP.COMPILE"])],
                     chip=chip.name, source_path=path, entry=entry.name)
    registration = check_opdef(text, units, task, camel(entry.name))
    registration += [Diagnostic("L4.DEVICE_LIBC", "info", f"{name}() in device code is the C math library, "
                                "which the AscendC device API does not document: CANN's device compiler may "
                                "refuse it", line, HINTS["L4.DEVICE_LIBC"], api=name)
                     for name, line in device_libc_calls(units)]
    if any(d.is_error for d in registration):
        return Build(ok=False, diagnostics=registration, chip=chip.name, source_path=path, entry=entry.name)
    op_names = [getattr(task, "op_name", ""), camel(entry.name), camel(getattr(task, "name", ""))]
    default_t, legacy_t = _tiling_types(code, op_names)
    macros = _dtype_macros(task, dtypes)
    hh = headers_hash()
    flags = CXX_FLAGS + _arch_macros(chip)
    common = [entry.name, n_io, hh, flags, _gxx_version(), GENERATOR_VERSION, SANDBOX_VERSION, UNITS_LAYOUT]
    # The device object depends on the device half (its lines, not the blank lines after the last one),
    # the dtypes and the tiling types; the host object on the host half only. A knob that changes only
    # the tiling function (host half) reuses every device object of the candidate's parent.
    device_text = units.device.rstrip("\n") + "\n"
    dkey = _key(["device", device_text, path.name, macros, default_t, legacy_t, *common])
    hkey = _key(["host", units.host, path.name, *common])
    knobbed = knob_params(units.host) if knob_data else None
    # hh covers harness.cpp, so the key also determines the prebuilt harness object linked in.
    key = _key([dkey, hkey, str(path)] + (["knob-data"] if knobbed else []))
    bdir = cache_dir() / "builds" / key
    meta = bdir / "build.json"
    exe = bdir / "harness"
    if meta.exists():
        try:
            doc = json.loads(meta.read_text())
            if not doc["ok"] or exe.exists():
                return Build(ok=doc["ok"], diagnostics=registration + [Diagnostic(**d) for d in doc["diagnostics"]],
                             raw_output=doc.get("raw", ""), artifact=exe if doc["ok"] else None,
                             chip=chip.name, entry=entry.name, source_path=path, cached=True, key=key)
        except (OSError, ValueError, KeyError, TypeError):
            pass

    t0 = time.perf_counter()
    pch_dir = ensure_pch(chip, hh)
    harness_obj = ensure_harness_object(chip, hh)
    bdir.mkdir(parents=True, exist_ok=True)
    lines = ["// Generated by the sim backend: the device unit (op_kernel) of one candidate and one dtype "
             "combination."]
    if pch_dir:
        lines.append('#include "cannsim_pch.h"')
    else:
        lines += [DEVICE_MARK] + [f'#include "{h}"' for h in DEVICE_HEADERS]
    lines += ["#undef CANNSIM_DEFAULT_TILING_TYPE", "#undef CANNSIM_LEGACY_TILING_TYPE",
              f"#define CANNSIM_DEFAULT_TILING_TYPE {default_t or '::cannsim::NoTilingType'}",
              f"#define CANNSIM_LEGACY_TILING_TYPE {legacy_t or '::cannsim::NoTilingType'}"]
    lines += [f"#define {name} {cpp}" for name, cpp in macros]
    lines.append("#include HALF")
    lines += [f"#define CANNSIM_ENTRY {entry.name}", f"#define CANNSIM_NUM_IO {n_io}",
              "#define CANNSIM_DEVICE_GLUE 1", '#include "cannsim/harness_entry.h"', ""]
    host_lines = ["// Generated by the sim backend: the host unit (op_host) of one candidate."]
    if pch_dir:
        host_lines.append('#include "cannsim_host_pch.h"')
    else:
        host_lines += [f'#include "{h}"' for h in HOST_HEADERS]
    host_lines += ["#include HALF", "#define CANNSIM_HOST_GLUE 1", '#include "cannsim/harness_entry.h"']
    if harness_obj is None:
        host_lines.append('#include "cannsim/harness.cpp"')
    host_lines.append("")
    # The compiler sees copies of the two halves beside the unit TUs (the user's file may sit where
    # the sandbox cannot read); both keep the candidate's lines, so diagnostics land on them.
    readable = [*include_dirs(), *([pch_dir] if pch_dir else [])]
    compiler = [GXX, *flags, *WARN_FLAGS, *_inc_flags(pch_dir)]
    dev = _unit_object(cache_dir() / "objects", f"device-{dkey}", "candidate", path.name, device_text,
                       "launcher.cpp", "\n".join(lines), compiler, readable)
    if knobbed and dev.ok:
        got = _knob_launcher(knobbed, dev, host_lines, path.name, common, compiler, readable, flags, harness_obj,
                             bdir, exe)
        if got is not None:
            host, raw = got
            seconds = time.perf_counter() - t0
            diags = repeat_narrowing(dev.raw, dev.half, units.device)
            ok = not any(d.is_error for d in diags)
            _write_meta(bdir, meta, ok, diags, dev.raw + raw, seconds, ["knob data"], dev.cached, host.cached)
            return Build(ok=ok, diagnostics=registration + diags, raw_output=dev.raw + raw,
                         artifact=exe if ok else None, chip=chip.name, entry=entry.name, source_path=path,
                         cached=False, seconds=seconds, key=key)
        key = _key([dkey, hkey, str(path)])        # the literal host half after all
        bdir = cache_dir() / "builds" / key
        bdir.mkdir(parents=True, exist_ok=True)
        meta, exe = bdir / "build.json", bdir / "harness"
    host = _unit_object(cache_dir() / "objects", f"host-{hkey}", "host", path.name, units.host,
                        "host_unit.cpp", "\n".join(host_lines), compiler, readable)
    for obj in (dev, host):             # the units as built, beside the launcher, for inspection
        shutil.copyfile(obj.tu, bdir / obj.tu.name)
    halves = {"device": dev.half, "host": host.half}
    raw, rc, cmd = dev.raw + host.raw, 0 if dev.ok and host.ok else 1, []
    ok = rc == 0
    if ok:
        # The launcher object first: its .preinit_array entry (the syscall filter) then runs before any of
        # the candidate's.
        out_dir = Path(tempfile.mkdtemp(prefix=f"out{os.getpid()}-", dir=bdir))
        cmd = [GXX, *flags, *([str(harness_obj)] if harness_obj else []), str(dev.obj), str(host.obj),
               "-o", str(out_dir / "harness")]
        link_raw, rc = _sandboxed_compile(cmd, bdir, out_dir, [bdir, dev.obj.parent, host.obj.parent,
                                                                *([harness_obj.parent] if harness_obj else [])])
        raw += link_raw
        ok = rc == 0 and _take_product(out_dir / "harness", exe, 0o755)
        shutil.rmtree(out_dir, ignore_errors=True)
    seconds = time.perf_counter() - t0
    glue = {entry.name: entry.line, "TilingFunc": _line_of(code, r"\bTilingFunc\s*\(")}
    where: dict[int, str] = {}
    diags = parse_compiler_output(raw, list(halves.values()), glue, where) if not ok else []
    if diags:
        diags = split_findings(diags, units, halves, where)
    narrowed = repeat_narrowing(dev.raw, halves["device"], units.device)
    if ok and any(d.is_error for d in narrowed):
        ok = False
    diags = narrowed + diags
    if not ok and not any(d.is_error for d in diags):
        diags = [Diagnostic("CPP.COMPILE", "error", raw.strip().splitlines()[-1] if raw.strip() else
                            f"g++ failed with status {rc}", 0, HINTS["CPP.COMPILE"], raw=raw)]
    if not (dev.transient or host.transient or rc == TRANSIENT):
        _write_meta(bdir, meta, ok, diags, raw, seconds, cmd, dev.cached, host.cached)
    return Build(ok=ok, diagnostics=registration + diags, raw_output=raw, artifact=exe if ok else None, chip=chip.name,
                 entry=entry.name, source_path=path, cached=False, seconds=seconds, key=key)


def _write_meta(bdir: Path, meta: Path, ok: bool, diags: list, raw: str, seconds: float, cmd: list,
                device_cached: bool, host_cached: bool) -> None:
    meta_tmp = bdir / f"build.json.tmp{_tmp_tag()}"
    meta_tmp.write_text(json.dumps({"ok": ok, "diagnostics": [d.to_json() for d in diags], "raw": raw,
                                    "seconds": seconds, "command": cmd, "device_cached": device_cached,
                                    "host_cached": host_cached}))
    os.replace(meta_tmp, meta)


def _knob_launcher(knobbed, dev, host_lines: list[str], name: str, common: list, compiler: list[str],
                   readable: list[Path], flags: list[str], harness_obj: Path | None, bdir: Path, exe: Path):
    """The launcher of a candidate whose host half reads its tiling knobs from the knob block:
    the parametrised host unit compiled and linked with the device object once per (device
    object, host text without the values), then copied with this candidate's values patched in.
    (host unit, compiler output), or None when the parametrised host unit does not compile or
    link (a knob used where a constant is needed): the caller builds the literal one."""
    text, values = knobbed
    hkey = _key(["host-knob-data", text, name, *common])
    tu = "\n".join(host_lines).replace("#include HALF", _knob_block_decl() + "\n#include HALF")
    host = _unit_object(cache_dir() / "objects", f"host-{hkey}", "host", name, text, "host_unit.cpp", tu,
                        compiler, readable)
    if not host.ok:
        return None
    ldir = cache_dir() / "launchers" / _key([str(dev.obj), str(host.obj), str(harness_obj)])
    product, failed = ldir / "harness", ldir / "link.failed"
    ldir.mkdir(parents=True, exist_ok=True)
    with _Lock(ldir / ".lock"):
        if not product.exists() and not failed.exists():
            out_dir = Path(tempfile.mkdtemp(prefix=f"out{os.getpid()}-", dir=ldir))
            cmd = [GXX, *flags, *([str(harness_obj)] if harness_obj else []), str(dev.obj), str(host.obj),
                   "-o", str(out_dir / "harness")]
            link_raw, rc = _sandboxed_compile(cmd, ldir, out_dir, [ldir, dev.obj.parent, host.obj.parent,
                                                                   *([harness_obj.parent] if harness_obj else [])])
            if not (rc == 0 and _take_product(out_dir / "harness", product, 0o755)) and rc != TRANSIENT:
                failed.write_text(link_raw)
            shutil.rmtree(out_dir, ignore_errors=True)
    if not product.exists() or not _patch_knobs(product, values, exe):
        return None
    for obj in (dev, host):
        shutil.copyfile(obj.tu, bdir / obj.tu.name)
    return host, host.raw


# Bumped when the layout of the unit objects and the link changes (their cache keys include it).
UNITS_LAYOUT = "objects-1"


def _tmp_tag() -> str:
    """A temporary file's suffix no other process or thread uses at the same time."""
    return f"{os.getpid()}-{threading.get_ident()}"


def _key(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


@dataclass
class _UnitObject:
    ok: bool
    obj: Path                   # the compiled object (when ok)
    half: Path                  # the half as the compiler saw it (diagnostics name it)
    tu: Path                    # the generated translation unit
    raw: str                    # the compiler's output (warnings included)
    cached: bool
    transient: bool = False     # stopped from outside: not cached, the next build compiles again


def _unit_object(root: Path, key: str, sub: str, name: str, half_text: str, tu_name: str, tu_text: str,
                 compiler: list[str], readable: list[Path]) -> _UnitObject:
    """One unit compiled to an object once per key (and generated TU: with or without the
    precompiled header and the launcher object), under its directory's lock so that concurrent
    builds of the same unit (another dtype's launcher, another process) wait for it; a failed
    compile is cached too, with its output."""
    odir = root / f"{key[:-8]}{_key([key, tu_text])[:8]}"
    half, tu, obj, meta = odir / sub / name, odir / tu_name, odir / "unit.o", odir / "unit.json"

    def cached() -> _UnitObject | None:
        try:
            doc = json.loads(meta.read_text())
            if doc["ok"] and not obj.exists():
                return None
            return _UnitObject(doc["ok"], obj, half, tu, doc["raw"], True)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    if (hit := cached()) is not None:
        return hit
    half.parent.mkdir(parents=True, exist_ok=True)
    with _Lock(odir / ".lock"):
        if (hit := cached()) is not None:
            return hit
        half.write_text(half_text)
        tmp_tu = tu.with_name(f"{tu.name}.tmp{_tmp_tag()}")
        tmp_tu.write_text(tu_text.replace("#include HALF", f'#include "{half}"'))
        os.replace(tmp_tu, tu)
        out_dir = Path(tempfile.mkdtemp(prefix=f"out{os.getpid()}-", dir=odir))
        raw, rc = _sandboxed_compile([*compiler, "-c", str(tu), "-o", str(out_dir / "unit.o")], odir, out_dir,
                                     [odir, *readable])
        ok = rc == 0 and _take_product(out_dir / "unit.o", obj, 0o644)
        shutil.rmtree(out_dir, ignore_errors=True)
        if rc != TRANSIENT:
            meta_tmp = meta.with_name(f"unit.json.tmp{_tmp_tag()}")
            meta_tmp.write_text(json.dumps({"ok": ok, "raw": raw}))
            os.replace(meta_tmp, meta)
    return _UnitObject(ok, obj, half, tu, raw, False, transient=rc == TRANSIENT)


def _take_product(written: Path, dest: Path, mode: int) -> bool:
    """The cached product is the parent's own copy: root-owned, not the file the compiler's uid wrote."""
    try:
        data = sandbox.read_regular(written, 1 << 30)
    except sandbox.UnsafeFile:
        return False
    copy = dest.with_name(f"{dest.name}.tmp{_tmp_tag()}")
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(copy, mode)
    os.replace(copy, dest)
    return True
