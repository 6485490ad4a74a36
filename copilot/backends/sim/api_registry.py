"""Which AscendC APIs the sim backend emulates, derived from the headers themselves.

The reference's list of SIMD API names per family (`data/ascendc-api-names.tsv`: family, name,
whether Atlas A2 and Atlas 350 support it, section) is matched against what the emulator headers
define in `namespace AscendC`:

- **emulated**: a function, macro-generated function or class of that name is defined;
- **declared**: the name only exists as a stub that reports `L4.API_UNKNOWN`
  (`CANNSIM_UNKNOWN_API(Name)` or a body calling `unknown_api("Name", ...)`);
- **missing**: neither (a kernel using it fails to compile).

Nothing is registered by hand: a header that defines an API makes it emulated. Forms come from the
definitions' parameter lists (count, mask-bit, mask-continuous, params struct); dtypes per chip from
the `{"Api", A2, 950, 310P}` rows of the dtype tables in the headers.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

INCLUDE = Path(__file__).resolve().parent / "include"
NAMES_TSV = Path(__file__).resolve().parent / "data" / "ascendc-api-names.tsv"

# The reference's vector families (issue 15); cube, matmul, HCCL, conv, cache, debug and tiling
# families are out of the emulator's scope.
VECTOR_FAMILIES = (
    "data movement", "memory vector compute", "scalar", "synchronisation", "atomics", "system",
    "math library", "activation", "normalization", "quantization", "reduce", "sort", "index",
    "select / dropout", "layout transforms",
)
CHIP_COLUMNS = {"A2": 0, "950": 1, "310P": 2}   # positions in a dtype row after the API name

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_FUNC = re.compile(r"\binline\s+(?:constexpr\s+)?(?:[\w:<>,*&]+\s+)+?\b([A-Z]\w*)\s*\(")
_CLASS = re.compile(r"\b(?:class|struct)\s+([A-Z]\w*)\b")
_MACRO_USE = re.compile(r"\b(CANNSIM_[A-Z0-9_]+)\(\s*([A-Z]\w*)\b")
_DECLARED = re.compile(r"CANNSIM_UNKNOWN_API\(\s*(\w+)\s*\)|unknown_api\(\s*\"(\w+)\"")
_ROW = re.compile(r"\{\s*\"([A-Z]\w*)\"\s*,\s*([^,{}]+?)\s*,\s*([^,{}]+?)\s*,\s*([^,{}]+?)\s*\}")
_DT_ENUM = re.compile(r"\bDT_(\w+)\s*=\s*1u\s*<<\s*(\d+)")
_DT_CONST = re.compile(r"constexpr\s+uint32_t\s+(\w+)\s*=\s*([^;]+);")
_DT_NAMES = {"I8": "int8_t", "U8": "uint8_t", "I16": "int16_t", "U16": "uint16_t", "F16": "half",
             "BF16": "bfloat16_t", "I32": "int32_t", "U32": "uint32_t", "F32": "float", "I64": "int64_t",
             "U64": "uint64_t", "F64": "double", "BOOL": "bool"}


@dataclass(frozen=True)
class ApiEntry:
    name: str
    family: str
    section: str
    chips: dict[str, bool]          # the reference's support: {"A2": y/n, "950": y/n}
    status: str                     # emulated | declared | missing
    forms: tuple[str, ...] = ()
    dtypes: dict[str, list[str]] | None = None
    header: str | None = None

    def to_json(self) -> dict:
        return {"name": self.name, "family": self.family, "section": self.section, "chips": dict(self.chips),
                "status": self.status, "forms": list(self.forms), "dtypes": self.dtypes, "header": self.header}


@dataclass
class Registry:
    entries: list[ApiEntry]
    extra_emulated: list[str] = field(default_factory=list)   # defined, not in the reference list

    def per_family(self, chip: str = "A2") -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for e in self.entries:
            if not e.chips.get(chip):
                continue
            f = out.setdefault(e.family, {"supported": 0, "emulated": 0, "declared": 0, "missing": 0})
            f["supported"] += 1
            f[e.status] += 1
        return out

    def to_json(self) -> dict:
        return {"apis": [e.to_json() for e in self.entries], "extra_emulated": self.extra_emulated,
                "families": {chip: self.per_family(chip) for chip in ("A2", "950")},
                "estimates_note": "status is derived from the emulator headers; costs are estimates"}


def read_names(path: Path = NAMES_TSV) -> list[tuple[str, str, str, bool, bool]]:
    """(family, name, section, A2, 950) rows of the reference's name list."""
    rows = []
    with path.open(encoding="utf-8") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    for r in csv.DictReader(lines, delimiter="\t"):
        rows.append((r["family"], r["name"], r["first_section"], r["A2"] == "y", r["Atlas350"] == "y"))
    return rows


def _headers(include: Path) -> dict[str, str]:
    files = [include / "kernel_operator.h", *sorted((include / "cannsim").glob("*.h"))]
    return {p.name: _COMMENTS.sub("", p.read_text(encoding="utf-8", errors="replace")) for p in files if p.is_file()}


def _params_after(text: str, open_paren: int) -> str:
    depth, i = 0, open_paren
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[open_paren + 1:i]
        i += 1
    return ""


def _form(params: str) -> str:
    if re.search(r"uint64_t\s+\w*mask\w*\s*\[\s*\]", params):
        return "mask-bit"
    if re.search(r"(?:uint64_t|int32_t)\s+mask\b", params):
        return "mask-continuous"
    if re.search(r"\b(count|calCount|dataSize)\b", params):
        return "count"
    if "Params" in params:
        return "params"
    return "other"


def _macro_bodies(text: str) -> dict[str, str]:
    out = {}
    for m in re.finditer(r"#define\s+(CANNSIM_[A-Z0-9_]+)\(([^)]*)\)", text):
        end = m.end()
        while True:
            nl = text.find("\n", end)
            if nl < 0 or not text[end:nl].rstrip().endswith("\\"):
                break
            end = nl + 1
        body = text[m.end():nl if nl > 0 else len(text)]
        first = m.group(2).split(",")[0].strip()
        out[m.group(1)] = (first, body)
    return out


def _dtype_rows(texts: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    allt = "\n".join(texts.values())
    bits = {f"DT_{n}": 1 << int(b) for n, b in _DT_ENUM.findall(allt)}
    consts: dict[str, int] = {}

    def value(expr: str) -> int | None:
        e = expr.strip()
        for tok in sorted(set(re.findall(r"\bdt::\w+|\bDT_\w+|\b[A-Z_]{3,}\b", e)), key=len, reverse=True):
            key = tok.split("::")[-1]
            v = bits.get(tok, consts.get(key))
            if v is None:
                return None
            e = re.sub(r"(?<![\w:])" + re.escape(tok) + r"\b", str(v), e)
        e = " ".join(e.replace("1u", "1").replace("0u", "0").split())
        if not re.fullmatch(r"[\d\s|&~()<]*", e):
            return None
        try:
            return int(eval(e, {"__builtins__": {}})) & 0xFFFFFFFF  # noqa: S307 - digits and bit operators only
        except Exception:
            return None

    for m in _DT_CONST.finditer(allt):
        v = value(m.group(2))
        if v is not None:
            consts[m.group(1)] = v
    rows: dict[str, dict[str, list[str]]] = {}
    for m in _ROW.finditer(allt):
        name, cols = m.group(1), m.groups()[1:]
        vals = [value(c) for c in cols]
        if any(v is None for v in vals):
            continue
        rows[name] = {chip: [_DT_NAMES[k[3:]] for k, b in bits.items() if vals[i] & b and k[3:] in _DT_NAMES]
                      for chip, i in CHIP_COLUMNS.items()}
    return rows


@lru_cache(maxsize=4)
def _scan(include: Path) -> tuple[dict[str, tuple[str, frozenset[str]]], frozenset[str], dict]:
    texts = _headers(include)
    defined: dict[str, tuple[str, set[str]]] = {}
    declared: set[str] = set()
    macros: dict[str, tuple[str, str]] = {}
    for text in texts.values():
        macros.update(_macro_bodies(text))
    for fname, text in texts.items():
        code = re.sub(r"#define[^\n]*(?:\\\n[^\n]*)*", "", text)   # macro bodies are read separately
        for m in _DECLARED.finditer(code):
            declared.add(m.group(1) or m.group(2))
        for m in _FUNC.finditer(code):
            if re.match(r"[^{;]*\)\s*(?:const\s*)?\{\s*(?:cannsim::)?unknown_api\(", code[m.end() - 1:m.end() + 400]):
                continue
            params = _params_after(code, m.end() - 1)
            if "UnknownCallSite" in params:
                continue
            ent = defined.setdefault(m.group(1), (fname, set()))
            ent[1].add(_form(params))
        for m in _CLASS.finditer(code):
            defined.setdefault(m.group(1), (fname, set()))
        for m in _MACRO_USE.finditer(code):
            macro, name = m.group(1), m.group(2)
            if macro == "CANNSIM_UNKNOWN_API" or macro not in macros:
                continue
            param, body = macros[macro]
            if not re.search(r"\b" + re.escape(param) + r"\s*\(", body):
                continue
            ent = defined.setdefault(name, (fname, set()))
            for pm in re.finditer(r"\b" + re.escape(param) + r"\s*\(", body):
                ent[1].add(_form(_params_after(body, pm.end() - 1)))
    frozen = {k: (v[0], frozenset(v[1])) for k, v in defined.items() if k not in declared}
    return frozen, frozenset(declared), _dtype_rows(texts)


def registry(include: Path = INCLUDE, names: Path = NAMES_TSV) -> Registry:
    defined, declared, rows = _scan(include)
    entries = []
    listed = set()
    for family, name, section, a2, a350 in read_names(names):
        if family not in VECTOR_FAMILIES:
            continue
        listed.add(name)
        if name in defined:
            header, forms = defined[name]
            status = "emulated"
        else:
            header, forms = None, frozenset()
            status = "declared" if name in declared else "missing"
        dt = rows.get(name)
        entries.append(ApiEntry(name, family, section, {"A2": a2, "950": a350}, status,
                                tuple(sorted(f for f in forms if f != "other")) or (("other",) if forms else ()),
                                {k: v for k, v in dt.items() if k in ("A2", "950")} if dt else None, header))
    extra = sorted(n for n in defined if n not in listed and defined[n][1])
    return Registry(entries, extra)
