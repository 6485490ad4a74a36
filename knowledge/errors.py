"""Error mapper: compiler, emulator and runtime text -> Diagnostics with a constraint id, a hint
and the cards that explain it.

The table is data (`error_patterns.yaml`): each entry has a regex, the constraint id it means,
a hint, the cards, a severity and a `kind`: `primary` (names the problem) or `context` (a generic
line such as an error code that belongs to a nearby primary finding and stands alone only when
there is none). Compiler output is read one finding per `error:` line; `note:` / `In file
included from` / `required from` lines join the finding before them and give it the candidate's
file:line. Text that no entry matches keeps its raw text under the id `GEN.UNKNOWN`.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from copilot.diagnostics import Diagnostic
from knowledge.cards import card_index, cards_for_api, cards_for_constraint, resolve_id

PATTERNS_FILE = Path(__file__).resolve().parent / "error_patterns.yaml"
UNKNOWN_ID = "GEN.UNKNOWN"
_CONTEXT_WINDOW = 8  # lines within which a context line joins a primary finding

# Files that are ours or the toolchain's, never the candidate's: a location there is not the
# line the engineer has to change.
_HEADER_RE = re.compile(r"(kernel_operator|cannsim/|/impl/|basic_api|adv_api|/include/|"
                        r"tikcpp|ascendc_devkit|kernel_tpipe|\.h(pp)?$)")
# A compiler location: `file:line[:col]:` at the start of a line (after "from" in include chains).
_LOC_RE = re.compile(r"^\s*(?:In file included from\s+|from\s+)?(?P<file>[^\s:]+\.(?:cpp|cc|cxx|asc|h|hpp|cce))"
                     r":(?P<line>\d+)(?::(?P<col>\d+))?[:,]")
_ERROR_LINE_RE = re.compile(r"\b(fatal error|error)\s*:", re.I)
_NOTE_RE = re.compile(r"(\bnote:|^\s*In file included from|required from|In instantiation of|"
                      r"^\s+from\s|^\s*\d+\s*\||^\s*\|)", re.I)
# Lines g++ prints before the error they belong to.
_PRELUDE_RE = re.compile(r"(^\s*In file included from|^\s+from\s|In instantiation of|required from|"
                         r"In (?:member )?function|At global scope|In constructor|In lambda)")
_EMULATOR_ID_RE = re.compile(r"\b((?:L2|L4)\.[A-Z][A-Z0-9_]+|CPP\.COMPILE|RUN\.(?:CRASH|TIMEOUT|MEMORY)|"
                             r"PREC\.[a-z_]+|RUN\.TILING)\b")


@dataclass(frozen=True)
class ErrorPattern:
    name: str
    regex: re.Pattern
    id: str
    hint: str
    cards: tuple[str, ...]
    severity: str
    kind: str
    source: str


@functools.lru_cache(maxsize=1)
def load_patterns() -> tuple[ErrorPattern, ...]:
    data = yaml.safe_load(PATTERNS_FILE.read_text(encoding="utf-8"))
    out = []
    for e in data["patterns"]:
        out.append(ErrorPattern(
            name=e["name"], regex=re.compile(e["regex"], re.I), id=e["id"], hint=e.get("hint", ""),
            cards=tuple(e.get("cards") or ()), severity=e.get("severity", "error"),
            kind=e.get("kind", "primary"), source=e.get("source", "")))
    return tuple(out)


def _match(line: str) -> ErrorPattern | None:
    for p in load_patterns():
        if p.regex.search(line):
            return p
    return None


def _candidate_location(lines: list[str]) -> int:
    """The line number in the candidate file: where g++ says the template was `required from`,
    else the first location outside headers (include chains excluded), else 0."""
    def locs(ln: str):
        return [m for m in _LOC_RE.finditer(ln) if not _HEADER_RE.search(m.group("file"))]

    for ln in lines:
        if "required from" in ln and locs(ln):
            return int(locs(ln)[0].group("line"))
    for ln in lines:
        if re.match(r"\s*(In file included from|from\s)", ln):
            continue
        if locs(ln):
            return int(locs(ln)[0].group("line"))
    return 0


def _cards_for(pat: ErrorPattern | None, cid: str, api: str = "") -> list[str]:
    idx = card_index()
    out: list[str] = []
    for c in (list(pat.cards) if pat else []) + cards_for_constraint(cid) + cards_for_api(api)[:1]:
        if c in idx and c not in out:
            out.append(c)
    return out[:5]


def _from_json_line(line: str) -> Diagnostic | None:
    s = line.strip()
    if not (s.startswith("{") and s.endswith("}")):
        return None
    try:
        obj = json.loads(s)
    except ValueError:
        return None
    if not isinstance(obj, dict) or "id" not in obj:
        return None
    cid = str(obj["id"])
    api = str(obj.get("api", "") or "")
    return Diagnostic(id=cid, severity=obj.get("severity", "error"), message=str(obj.get("message", "")),
                      line=int(obj.get("line", 0) or 0), hint=_hint_for(cid), cards=_cards_for(None, cid, api),
                      api=api, raw=line)


@functools.lru_cache(maxsize=256)
def _hint_for(cid: str) -> str:
    cid = resolve_id(cid)
    for p in load_patterns():
        if p.id == cid and p.hint:
            return p.hint
    card = card_index().get(cid)
    return card.summary if card else ""


def explain(text: str) -> list[Diagnostic]:
    """Findings in a compiler / emulator / runtime log, in the order they appear."""
    if not text or not text.strip():
        return []
    lines = text.splitlines()
    findings: list[dict] = []      # {"start", "lines", "pat"} or {"start", "lines", "diag"}
    contexts: list[dict] = []
    claimed: set[int] = set()
    current: dict | None = None
    for i, line in enumerate(lines):
        d = _from_json_line(line)
        if d is not None:
            findings.append({"start": i, "lines": [line], "diag": d})
            claimed.add(i)
            current = None
            continue
        is_error = bool(_ERROR_LINE_RE.search(line)) and not re.search(r"\bnote:", line)
        if current is not None and not is_error and _NOTE_RE.search(line):
            current["lines"].append(line)
            claimed.add(i)
            if current["pat"] is None or current["pat"].kind == "fallback":
                better = _match(line)
                if better is not None and better.kind == "primary":
                    current["pat"] = better
            continue
        pat = _match(line)
        if pat is None:
            if is_error:  # an error line no entry knows: keep it
                current = {"start": i, "lines": [line], "pat": None}
                findings.append(current)
                claimed.add(i)
            elif current is not None and current.get("pat") is not None and line.startswith((" ", "\t")):
                current["lines"].append(line)
                claimed.add(i)
            continue
        if pat.kind == "context":
            contexts.append({"start": i, "lines": [line], "pat": pat})
            continue
        # Log lines (not compiler errors) that repeat the id of the finding just before join it.
        if (not is_error and current is not None and current.get("pat") is not None
                and current["pat"].id == pat.id and i - current["start"] <= _CONTEXT_WINDOW):
            current["lines"].append(line)
            claimed.add(i)
            continue
        current = {"start": i, "lines": [line], "pat": pat}
        claimed.add(i)
        # g++ prints the include chain and "In instantiation of ..." before its error.
        j = i - 1
        while j >= 0 and j not in claimed and _PRELUDE_RE.search(lines[j]):
            current["lines"].insert(0, lines[j])
            claimed.add(j)
            j -= 1
        findings.append(current)
    # Context lines join the nearest primary finding; alone, they become findings, one per id.
    for ctx in contexts:
        near = [f for f in findings if "diag" not in f and f["pat"] is not None
                and abs(f["start"] - ctx["start"]) <= _CONTEXT_WINDOW]
        if near:
            target = min(near, key=lambda f: abs(f["start"] - ctx["start"]))
            target["lines"].append(ctx["lines"][0])
            continue
        same = [f for f in findings if "diag" not in f and f["pat"] is not None
                and f["pat"].id == ctx["pat"].id and f["pat"].kind == "context"
                and abs(f["start"] - ctx["start"]) <= _CONTEXT_WINDOW]
        if same:
            same[0]["lines"].append(ctx["lines"][0])
        else:
            findings.append(ctx)
    findings.sort(key=lambda f: f["start"])
    out: list[Diagnostic] = []
    for f in findings:
        if "diag" in f:
            out.append(f["diag"])
            continue
        out.append(_diagnostic(f["pat"], f["lines"]))
    if not out:
        out.append(Diagnostic(id=UNKNOWN_ID, severity="error", message=text.strip().splitlines()[0][:300],
                              hint="No known pattern: read the raw text; if it recurs, add it to "
                                   "knowledge/error_patterns.yaml.", raw=text))
    return out


def _diagnostic(pat: ErrorPattern | None, lines: list[str]) -> Diagnostic:
    head = next((ln for ln in lines if _ERROR_LINE_RE.search(ln) and "note:" not in ln), None)
    if head is None and pat is not None:
        head = next((ln for ln in lines if pat.regex.search(ln)), lines[0])
    head = head or lines[0]
    if "errorStr:" in head:   # runtime logs: keep the message, drop the log prefix
        head = head[head.index("errorStr:"):]
    raw = "\n".join(lines)
    if pat is None:
        return Diagnostic(id=UNKNOWN_ID, severity="error", message=head.strip()[:300],
                          line=_candidate_location(lines),
                          hint="No known pattern: read the raw text; if it recurs, add it to "
                               "knowledge/error_patterns.yaml.", raw=raw)
    cid = pat.id
    if cid == "@emulator":
        m = _EMULATOR_ID_RE.search(raw)
        cid = m.group(1) if m else UNKNOWN_ID
    api = _api_in(raw)
    return Diagnostic(id=cid, severity=pat.severity, message=head.strip()[:300],
                      line=_candidate_location(lines), hint=pat.hint or _hint_for(cid),
                      cards=_cards_for(pat, cid, api), api=api, raw=raw)


_API_NAMES_RE = None


def _api_in(text: str) -> str:
    """The first AscendC API of our L4 cards named in the text (quoted by the compiler)."""
    global _API_NAMES_RE
    if _API_NAMES_RE is None:
        names = sorted({a for c in card_index().values() if c.level == "L4" for a in c.apis},
                       key=len, reverse=True)
        _API_NAMES_RE = re.compile(r"['‘`\s:(]((?:AscendC::)?(?:" + "|".join(map(re.escape, names)) +
                                   r"))(?:<[^'’`]*>)?(?=['’`(\s]|$)") if names else re.compile("$^")
    m = _API_NAMES_RE.search(text)
    return m.group(1).replace("AscendC::", "") if m else ""


def attach_cards(diagnostics):
    """Fill `cards` and an empty `hint` of diagnostics (dicts or `Diagnostic`s) that came with a
    constraint id, e.g. from the emulator: the cards of the id and of its API are added to those it
    has; the hint is the id's pattern hint, else the summary of its first card. The one way cards
    reach diagnostics (agents, CLI, TUI). Changes and returns the same list."""
    idx = card_index()
    for d in diagnostics:
        is_dict = isinstance(d, dict)
        cid = str((d.get("id") if is_dict else d.id) or "")
        api = str((d.get("api") if is_dict else getattr(d, "api", "")) or "")
        have = list((d.get("cards") if is_dict else d.cards) or [])
        cards = list(dict.fromkeys(have + _cards_for(None, cid, api)))
        hint = (d.get("hint") if is_dict else d.hint) or _hint_for(cid) or next(
            (idx[c].summary for c in cards if c in idx), "")
        if is_dict:
            d["cards"], d["hint"] = cards, hint
        else:
            d.cards, d.hint = cards, hint
    return diagnostics
