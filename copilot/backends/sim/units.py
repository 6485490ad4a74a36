"""A candidate file as the two translation units CANN compiles apart.

A candidate is one file. Its host half is every top-level `namespace optiling { ... }` and
`namespace ops { ... }` block (TilingFunc, its helpers, the OpDef) and the `#include`s of host
headers (`register/`, `tiling/`, `graph/`, `exe_graph/`, `platform/`); its device half is the
rest. The tiling data (the struct REGISTER_TILING_DEFAULT names with the declarations between the
last `#include` and it, or a legacy BEGIN_TILING_DATA_DEF ... REGISTER_TILING_DATA_CLASS block)
belongs to both, with every top-level `constexpr` scalar constant outside the host blocks: they
are the tiling header CANN's project shares between op_host and op_kernel.

Both units keep the candidate's lines where they are (a line of the other half is blank), so the
compiler's line numbers are the candidate's. Standard-library includes go to both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


HOST_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?:register|tiling|graph|exe_graph|platform)/')
STD_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<")
SHARED_CONST = re.compile(r"^[ \t]*(?:static[ \t]+)?constexpr[ \t]+[\w:]+[ \t]+\w+[ \t]*=[^;{}]*;[ \t]*$")
_NS_RE = re.compile(r"\bnamespace\s+(optiling|ops)\s*\{")
_STRUCT_RE = r"\b(?:struct|class)\s+{name}\b[^;{{]*\{{"


# One lexeme at a time, in priority order: a line comment, a block comment (to the end if
# unterminated), the "C" of `extern "C"`, a string literal (escapes skipped; ends at its quote or
# the end of the line).
_LEXEMES = re.compile(r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|"C"|"((?:\\[\s\S]|[^"\\\n])*)(")?')


def _blank(m: re.Match) -> str:
    text = m.group(0)
    if text.startswith("//"):
        return " " * len(text)
    if text.startswith("/*"):
        return re.sub(r"[^\n]", " ", text)
    if text == '"C"':
        return text
    return '"' + " " * len(m.group(1)) + (m.group(2) or "")


def strip_comments(src: str) -> str:
    """The source with comments and string contents blanked, newlines kept (lines stay put)."""
    return _LEXEMES.sub(_blank, src)


class SplitError(ValueError):
    """The candidate cannot be cut into halves (an unbalanced brace)."""


@dataclass
class Units:
    device: str                          # the candidate with host lines blanked
    host: str                            # only the host lines and the tiling data
    host_spans: list[tuple[int, int]]    # 1-based inclusive line ranges of the host blocks
    tiling_span: tuple[int, int] | None  # 1-based inclusive line range of the tiling data
    tiling_struct: str                   # the tiling data's type name ("" if none)
    legacy_tiling: bool
    ops_blocks: list[tuple[int, int]]    # char ranges (in the source) of the `namespace ops` blocks
    shared_lines: list[int]              # 1-based lines both halves get (the tiling header's content)


def match_brace(code: str, open_at: int) -> int:
    """Offset just past the brace that closes the one at `open_at`."""
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise SplitError("the candidate has an unbalanced brace")


def line_at(code: str, offset: int) -> int:
    return code.count("\n", 0, offset) + 1


def _depth_at(code: str, offset: int) -> int:
    return code.count("{", 0, offset) - code.count("}", 0, offset)


def tiling_range(code: str) -> tuple[int, int, str, bool] | None:
    """(start, stop, type name, legacy) of the tiling data in the comment-blanked source: from the
    line after the last preprocessor line before the definition to the end of its line."""
    legacy = re.search(r"\bBEGIN_TILING_DATA_DEF\s*\(\s*(\w+)\s*\)", code)
    default = re.search(r"\bREGISTER_TILING_DEFAULT\s*\(\s*([\w:]+)\s*\)", code)
    if legacy:
        name = legacy.group(1)
        reg = re.search(r"\bREGISTER_TILING_DATA_CLASS\s*\([^)]*\)\s*;?", code)
        end_def = re.search(r"\bEND_TILING_DATA_DEF\s*;?", code)
        if not (reg or end_def):
            return None
        stop = (reg or end_def).end()
        start = legacy.start()
        # Inside a namespace block the data starts at its first line, not at the includes.
        ns_open = code.rfind("{", 0, start)
        if _depth_at(code, start) > 0 and ns_open >= 0:
            start = code.find("\n", ns_open) + 1
        else:
            start = first_decl(code, start)
    elif default:
        name = default.group(1).split("::")[-1]
        m = re.search(_STRUCT_RE.format(name=re.escape(name)), code)
        if not m:
            return None
        stop = match_brace(code, m.end() - 1)
        stop = code.index(";", stop) + 1
        start = first_decl(code, m.start())
    else:
        return None
    start = code.rfind("\n", 0, start) + 1
    nl = code.find("\n", stop)
    return start, (len(code) if nl < 0 else nl + 1), name, bool(legacy)


def first_decl(code: str, struct_at: int) -> int:
    """Where the declarations the tiling struct may use begin: after the last preprocessor line
    (the includes) that precedes it, so `constexpr` sizes come along."""
    last = 0
    for m in re.finditer(r"^[ \t]*#[^\n]*\n", code[:struct_at], re.M):
        last = m.end()
    return last


def host_blocks(code: str) -> list[tuple[int, int, str]]:
    """(start, end, namespace) of each top-level optiling / ops block, whole lines."""
    out, pos = [], 0
    while (m := _NS_RE.search(code, pos)) is not None:
        end = match_brace(code, m.end() - 1)
        if _depth_at(code, m.start()) != 0:
            pos = m.end()
            continue
        start = code.rfind("\n", 0, m.start()) + 1
        nl = code.find("\n", end)
        out.append((start, len(code) if nl < 0 else nl + 1, m.group(1)))
        pos = end
    return out


def split_units(source: str) -> Units:
    code = strip_comments(source)
    lines = source.splitlines(keepends=True)
    clines = code.splitlines(keepends=True)
    blocks = host_blocks(code)
    tiling = tiling_range(code)
    host_lines: set[int] = set()            # 0-based
    spans = []
    for start, end, _ in blocks:
        a, b = line_at(code, start) - 1, line_at(code, end - 1) - 1
        host_lines.update(range(a, b + 1))
        spans.append((a + 1, b + 1))
    tiling_lines: set[int] = set()
    tiling_span = None
    if tiling:
        a, b = line_at(code, tiling[0]) - 1, line_at(code, tiling[1] - 1) - 1
        tiling_lines = {i for i in range(a, b + 1)
                        if not clines[i].lstrip().startswith(("#include", "using namespace"))}
        tiling_span = (a + 1, b + 1)
        # A legacy definition inside a namespace block: the device half gets the block's first
        # and last lines too, so the class keeps its namespace.
        for (start, end, _), (sa, sb) in zip(blocks, spans):
            if start <= tiling[0] < end:
                tiling_lines |= {sa - 1, sb - 1}
    # Top-level scalar constants outside the host blocks are shared too (the tiling header carries
    # them): a BUFFER_NUM the TilingFunc also reads.
    depth = 0
    for i, c in enumerate(clines):
        if depth == 0 and i not in host_lines and SHARED_CONST.match(c):
            tiling_lines.add(i)
        depth += c.count("{") - c.count("}")
    device, host = [], []
    for i, (text, c) in enumerate(zip(lines, clines)):
        blank = "\n" if text.endswith("\n") else ""
        is_host_inc = c.lstrip().startswith("#") and bool(HOST_INCLUDE.match(text))
        legacy_base = is_host_inc and tiling is not None and tiling[3] and "tilingdata_base.h" in text
        on_device = (i not in host_lines and (not is_host_inc or legacy_base)) or i in tiling_lines
        on_host = i in host_lines or i in tiling_lines or is_host_inc or bool(STD_INCLUDE.match(c))
        device.append(text if on_device else blank)
        host.append(text if on_host else blank)
    return Units(device="".join(device), host="".join(host), host_spans=spans, tiling_span=tiling_span,
                 tiling_struct=tiling[2] if tiling else "", legacy_tiling=bool(tiling and tiling[3]),
                 ops_blocks=[(s, e) for s, e, ns in blocks if ns == "ops"],
                 shared_lines=sorted(i + 1 for i in tiling_lines))


# The C math library in device scalar code. The AscendC API reference documents no libc on the
# device: its scalar math is AscendC::Std::min/max (A2 and Atlas 350) and Std::abs/sqrt (Atlas 350
# only); whether CANN's device compiler links sqrtf and the like is unverified.
_LIBC_MATH = ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "fabs", "sin", "cos", "tan",
              "tanh", "sinh", "cosh", "asin", "acos", "atan", "atan2", "erf", "erfc", "floor", "ceil", "round",
              "trunc", "fmod", "cbrt", "hypot", "fmin", "fmax", "lround", "rint", "nearbyint")
_LIBC_CALL = re.compile(r"(?<![\w.>])(?:(?:::)?std::|::)?\b((?:" + "|".join(_LIBC_MATH) + r")[fl]?)\s*\(")


def device_libc_calls(units: Units) -> list[tuple[str, int]]:
    """(name, line) of each C math library call in the device half, first per name; a function of
    the candidate's own of that name (or a member call) is not one."""
    code = strip_comments(units.device)
    own = set(re.findall(r"\b(\w+)\s*\([^;{}()]*\)\s*(?:const\s*)?\{", code))
    out, seen = [], set()
    for m in _LIBC_CALL.finditer(code):
        name = m.group(1)
        before = code[max(0, m.start() - 9):m.start()]
        if name in own or name in seen or before.endswith("Std::") or re.search(r"\w::$", before):
            continue
        seen.add(name)
        out.append((name, line_at(code, m.start())))
    return out
