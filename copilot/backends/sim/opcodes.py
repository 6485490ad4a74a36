"""Instructions no candidate's code may contain: the ones that set the protection-key rights
register (PKRU) from user mode, which would open the vault (cannsim/vault.h) for kernel code.

WRPKRU (0F 01 EF) writes PKRU; XRSTOR (0F AE /5, memory operand) can load it from memory. The
emulator's own WRPKRU is one out-of-line function, `cannsim::vault::wrpkru` (the candidate cannot
define a symbol in `cannsim`: the source scan refuses the name), so in a linked launcher every other
occurrence of those bytes in executable code, at any offset (the middle of another instruction, an
immediate operand, a jump target the compiler never meant), is the candidate's: the launcher is
refused before it runs (id SEC.BINARY). Code written at run time cannot run (a block's seccomp
filter refuses PROT_EXEC). What stays reachable is the code that already holds such instructions:
the emulator's own function and the C library's `pkey_set` (docs/security.md "What remains").
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from copilot.diagnostics import Diagnostic

ID = "SEC.BINARY"
HINT = ("the kernel's code contains an instruction that sets the protection-key register (WRPKRU or "
        "XRSTOR): kernel code never needs it; remove the inline machine code or byte constants that form it")
ALLOWED_SYMBOL = b"_ZN7cannsim5vault6wrpkruEj"
# WRPKRU anywhere; XRSTOR/XRSTOR64 with a memory operand (ModRM reg = 5, mod != 3).
PATTERN = re.compile(rb"\x0f\x01\xef|\x0f\xae[\x28-\x2f\x68-\x6f\xa8-\xaf]")
SHF_EXECINSTR = 0x4
SHT_SYMTAB = 2

_verdicts: dict[tuple[str, int, int], list[Diagnostic]] = {}


def _sections(data: bytes):
    """(type, flags, addr, offset, size, link, entsize) of each section of an ELF64 little-endian file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _, stype, flags, addr, off, size, link, _, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        out.append((stype, flags, addr, off, size, link, entsize))
    return out


def _allowed_ranges(data: bytes, sections) -> list[tuple[int, int]]:
    """Virtual address ranges of the emulator's own WRPKRU function (its symbol, from .symtab)."""
    ranges = []
    for stype, _, _, off, size, link, entsize in sections:
        if stype != SHT_SYMTAB or not entsize:
            continue
        strtab = sections[link]
        for k in range(size // entsize):
            name_off, _, _, _, value, sym_size = struct.unpack_from("<IBBHQQ", data, off + k * entsize)
            start = strtab[3] + name_off
            if data[start:start + len(ALLOWED_SYMBOL) + 1] == ALLOWED_SYMBOL + b"\0" and sym_size:
                ranges.append((value, value + sym_size))
    return ranges


def findings(executable: Path) -> list[Diagnostic]:
    """The SEC.BINARY findings of a linked launcher (empty when it may run); cached per file version."""
    st = executable.stat()
    key = (str(executable), st.st_mtime_ns, st.st_size)
    if key in _verdicts:
        return _verdicts[key]
    data = executable.read_bytes()
    try:
        sections = _sections(data)
    except (ValueError, struct.error) as e:
        found = [Diagnostic(ID, "error", f"the launcher could not be inspected ({e})", 0, HINT)]
    else:
        allowed = _allowed_ranges(data, sections)
        hits = []
        for _, flags, addr, off, size, _, _ in sections:
            if not flags & SHF_EXECINSTR:
                continue
            for m in PATTERN.finditer(data, off, off + size):
                va = addr + m.start() - off
                if not any(lo <= va < hi for lo, hi in allowed):
                    hits.append((va, "WRPKRU" if m.group().startswith(b"\x0f\x01") else "XRSTOR"))
        found = [Diagnostic(ID, "error", f"{what} at 0x{va:x} in the kernel's code: an instruction that can "
                            "open the emulator's protected memory; refused before it runs", 0, HINT)
                 for va, what in hits[:3]]
    _verdicts[key] = found
    return found
