"""The candidate seen as the halves CANN compiles apart: the tiling data (shared), the host half
(`namespace optiling`: TilingFunc and its helpers; `namespace ops`: the OpDef) and the device half
(everything else). The cut is the one the sim backend builds (`copilot.backends.sim.units`), so the
exported op_kernel / op_host are the units the emulator compiled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copilot.backends.sim.build import camel, find_entry
from copilot.backends.sim.units import SplitError, split_units, strip_comments
from copilot.errors import Unsupported


@dataclass
class CandidateParts:
    entry: str                  # kernel entry, e.g. add_custom
    op_type: str                # the custom operator's type, e.g. AddCustom (CANN names the kernel after it)
    tiling_struct: str          # the tiling data type's name
    tiling_data: str            # constants and the tiling struct (text of the candidate)
    tiling_line: int            # the candidate line tiling_data starts at
    host: str                   # every top-level `namespace optiling` / `namespace ops` block, in order
    host_line: int              # the candidate line the first host block starts at
    legacy_tiling: bool         # BEGIN_TILING_DATA_DEF macros instead of a plain struct
    has_tiling_func: bool
    device: str = ""            # the device half at the candidate's lines (host lines blank)
    has_opdef: bool = False     # the candidate registers its OpDef itself
    std_includes: tuple = ()    # the candidate's `#include <...>` headers (<charconv>, <algorithm>, ...)


def split_candidate(source: str) -> CandidateParts:
    """Split one candidate file. Raises Unsupported when a part the export needs is missing."""
    code = strip_comments(source)
    entry = find_entry(source)
    if entry is None:
        raise Unsupported("the candidate has no `extern \"C\" __global__ __aicore__` kernel entry")
    try:
        units = split_units(source)
    except SplitError as e:
        raise Unsupported(f"{e}; the exporter cannot split it") from None
    lines = source.splitlines(keepends=True)
    # The host file includes the tiling header: a host block's shared lines (a legacy tiling
    # definition) stay out, its namespace lines stay in when anything else is left.
    shared = set(units.shared_lines)
    host_parts = []
    for a, b in units.host_spans:
        own = [i for i in range(a, b + 1) if i not in shared]
        if any(strip_comments(lines[i - 1]).strip() for i in own):
            host_parts.append("".join(lines[i - 1] for i in range(a, b + 1) if i in own or i in (a, b)))
    host = "".join(host_parts)
    has_tiling = bool(re.search(r"\bTilingFunc\s*\(", strip_comments(host)))
    if not units.host_spans or not has_tiling:
        raise Unsupported("the candidate has no host `TilingFunc` in `namespace optiling`; the op_host "
                          "half cannot be written")
    if not units.tiling_struct:
        default = re.search(r"\bREGISTER_TILING_DEFAULT\s*\(\s*([\w:]+)\s*\)", code)
        if default:
            raise Unsupported(f"the tiling struct {default.group(1).split('::')[-1]} named by "
                              "REGISTER_TILING_DEFAULT is not defined in the candidate")
        raise Unsupported("the candidate registers no tiling data (REGISTER_TILING_DEFAULT or "
                          "BEGIN_TILING_DATA_DEF)")
    data = "".join(lines[i - 1] for i in units.shared_lines)
    return CandidateParts(entry=entry.name, op_type=camel(entry.name), tiling_struct=units.tiling_struct,
                          tiling_data=data, tiling_line=units.tiling_span[0], host=host,
                          host_line=units.host_spans[0][0] if units.host_spans else 0, legacy_tiling=units.legacy_tiling,
                          has_tiling_func=has_tiling, device=units.device, has_opdef=bool(units.ops_blocks),
                          std_includes=tuple(dict.fromkeys(re.findall(r"(?m)^[ \t]*#[ \t]*include[ \t]*<([^>\s]+)>", code))))
