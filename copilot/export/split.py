"""The candidate seen as the halves CANN compiles apart: the tiling data (shared), the host half
(`namespace optiling`: TilingFunc and its helpers) and the device half (everything else).

The split is textual and keeps the candidate's own bytes: each piece is a slice of the candidate
file, found on a copy with comments and strings blanked (`strip_comments` keeps every offset).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copilot.backends.sim.build import camel, find_entry, strip_comments
from copilot.errors import Unsupported


@dataclass
class CandidateParts:
    entry: str                  # kernel entry, e.g. add_custom
    op_type: str                # the custom operator's type, e.g. AddCustom (CANN names the kernel after it)
    tiling_struct: str          # the tiling data type's name
    tiling_data: str            # constants and the tiling struct (text of the candidate)
    tiling_line: int            # the candidate line tiling_data starts at
    host: str                   # every top-level `namespace optiling { ... }` block, in order
    host_line: int              # the candidate line the first host block starts at
    legacy_tiling: bool         # BEGIN_TILING_DATA_DEF macros instead of a plain struct
    has_tiling_func: bool


_NS_RE = re.compile(r"\bnamespace\s+optiling\s*\{")
_STRUCT_RE = r"\b(?:struct|class)\s+{name}\b[^;{{]*\{{"


def _match_brace(code: str, open_at: int) -> int:
    """Offset just past the brace that closes the one at `open_at`."""
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise Unsupported("the candidate has an unbalanced brace; the exporter cannot split it")


def _line_at(code: str, offset: int) -> int:
    return code.count("\n", 0, offset) + 1


def _line_start(code: str, offset: int) -> int:
    return code.rfind("\n", 0, offset) + 1


def _line_end(code: str, offset: int) -> int:
    nl = code.find("\n", offset)
    return len(code) if nl < 0 else nl + 1


def split_candidate(source: str) -> CandidateParts:
    """Split one candidate file. Raises Unsupported when a part the export needs is missing."""
    code = strip_comments(source)
    entry = find_entry(source)
    if entry is None:
        raise Unsupported("the candidate has no `extern \"C\" __global__ __aicore__` kernel entry")

    hosts, first_host = [], None
    pos = 0
    while (m := _NS_RE.search(code, pos)) is not None:
        end = _match_brace(code, m.end() - 1)
        start = _line_start(code, m.start())
        first_host = first_host or start
        hosts.append(source[start:_line_end(code, end)])
        pos = end
    host = "".join(hosts)
    has_tiling = bool(re.search(r"\bTilingFunc\s*\(", strip_comments(host)))
    if not hosts or not has_tiling:
        raise Unsupported("the candidate has no host `TilingFunc` in `namespace optiling`; the op_host "
                          "half cannot be written")

    legacy = re.search(r"\bBEGIN_TILING_DATA_DEF\s*\(\s*(\w+)\s*\)", code)
    default = re.search(r"\bREGISTER_TILING_DEFAULT\s*\(\s*([\w:]+)\s*\)", code)
    if legacy:
        name = legacy.group(1)
        reg = re.search(r"\bREGISTER_TILING_DATA_CLASS\s*\([^)]*\)\s*;?", code)
        end_def = re.search(r"\bEND_TILING_DATA_DEF\s*;?", code)
        stop = (reg or end_def).end() if (reg or end_def) else None
        if stop is None:
            raise Unsupported(f"tiling data {name}: BEGIN_TILING_DATA_DEF without END_TILING_DATA_DEF")
        start = _first_decl(code, legacy.start())
    elif default:
        name = default.group(1).split("::")[-1]
        m = re.search(_STRUCT_RE.format(name=re.escape(name)), code)
        if not m:
            raise Unsupported(f"the tiling struct {name} named by REGISTER_TILING_DEFAULT is not defined "
                              "in the candidate")
        stop = _match_brace(code, m.end() - 1)
        stop = code.index(";", stop) + 1
        start = _first_decl(code, m.start())
    else:
        raise Unsupported("the candidate registers no tiling data (REGISTER_TILING_DEFAULT or "
                          "BEGIN_TILING_DATA_DEF)")
    start = _line_start(code, start)
    stop = _line_end(code, stop)
    data_lines = [ln for ln, c in zip(source[start:stop].splitlines(keepends=True),
                                      code[start:stop].splitlines(keepends=True))
                  if not c.lstrip().startswith(("#include", "using namespace"))]
    return CandidateParts(entry=entry.name, op_type=camel(entry.name), tiling_struct=name,
                          tiling_data="".join(data_lines), tiling_line=_line_at(code, start), host=host,
                          host_line=_line_at(code, first_host), legacy_tiling=bool(legacy),
                          has_tiling_func=has_tiling)


def _first_decl(code: str, struct_at: int) -> int:
    """Where the declarations the tiling struct may use begin: after the last preprocessor line
    (the includes) that precedes it, so `constexpr` sizes come along."""
    head = code[:struct_at]
    last = 0
    for m in re.finditer(r"^[ \t]*#[^\n]*\n", head, re.M):
        last = m.end()
    return last
