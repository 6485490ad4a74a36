"""Turning an LLM reply into kernel code.

A reply may hold prose around one fenced block, several blocks (a golden in Python, a kernel in
C++), a block cut off by the token limit, or search/replace edit blocks against a parent kernel:

    <<<<<<< SEARCH
    constexpr int32_t TILE = 1024;
    =======
    constexpr int32_t TILE = 2048;
    >>>>>>> REPLACE

`parse_reply` never raises on a bad reply: it returns `ParsedReply(ok=False, reason=...)`, which the
agent records as a failed candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KERNEL_ENTRY = re.compile(r'extern\s+"C"\s+__global__|__aicore__')
CPP_LANGS = {"cpp", "c++", "cxx", "cc", "c", "h", "hpp", "hh", "ascendc", "ascend-c", "ascend_c",
             "cuda", "cu"}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_SEARCH = re.compile(r"^[ \t]*<{5,9} ?SEARCH[ \t]*$")
_DIVIDER = re.compile(r"^[ \t]*={5,9}[ \t]*$")
_REPLACE = re.compile(r"^[ \t]*>{5,9} ?REPLACE[ \t]*$")
_LOOKS_CPP = re.compile(r"#include|;\s*$|\{\s*$|__aicore__|__global__", re.M)


@dataclass(frozen=True)
class CodeBlock:
    lang: str                 # the info string's first word, lower-cased ("" when untagged)
    text: str
    line: int                 # 1-based line of the opening fence in the reply
    terminated: bool = True   # False: the reply ended inside this block

    @property
    def is_cpp(self) -> bool:
        return self.lang in CPP_LANGS or (self.lang == "" and bool(_LOOKS_CPP.search(self.text)))

    @property
    def has_kernel_entry(self) -> bool:
        return bool(KERNEL_ENTRY.search(self.text))


@dataclass(frozen=True)
class EditBlock:
    search: str
    replace: str
    line: int                 # 1-based line of `<<<<<<< SEARCH` in the reply
    complete: bool = True     # False: the reply ended before `>>>>>>> REPLACE`


@dataclass
class ParsedReply:
    ok: bool
    code: str = ""
    kind: str = ""            # "block" | "edits" | "" when not ok
    truncated: bool = False   # the reply was cut off; the code may be incomplete
    reason: str = ""          # why not ok, one line
    edits_applied: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class EditResult:
    ok: bool
    code: str = ""
    applied: int = 0
    reason: str = ""
    notes: list[str] = field(default_factory=list)


# --- scanning -------------------------------------------------------------------------------------

def find_code_blocks(reply: str) -> list[CodeBlock]:
    """Every fenced block in order; an unterminated last block runs to the end of the reply."""
    lines = reply.splitlines()
    blocks: list[CodeBlock] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence = m.group("fence")
        lang = (m.group("info").strip().split() or [""])[0].lower()
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            c = _FENCE.match(lines[j])
            if c and c.group("fence")[0] == fence[0] and len(c.group("fence")) >= len(fence) \
                    and not c.group("info").strip():
                closed = True
                break
            body.append(lines[j])
            j += 1
        blocks.append(CodeBlock(lang=lang, text="\n".join(body) + ("\n" if body else ""),
                                line=i + 1, terminated=closed))
        i = j + 1
    return blocks


def find_edit_blocks(reply: str) -> list[EditBlock]:
    """Every SEARCH/REPLACE block in order, fenced or not."""
    lines = reply.splitlines()
    edits: list[EditBlock] = []
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        start = i
        search: list[str] = []
        replace: list[str] = []
        part = search
        complete = False
        i += 1
        while i < len(lines):
            if part is search and _DIVIDER.match(lines[i]):
                part = replace
            elif part is replace and _REPLACE.match(lines[i]):
                complete = True
                break
            else:
                part.append(lines[i])
            i += 1
        edits.append(EditBlock(search=_join(search), replace=_join(replace), line=start + 1,
                               complete=complete and part is replace))
        i += 1
    return edits


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + ("\n" if lines else "")


# --- applying edits -------------------------------------------------------------------------------

def apply_edits(parent: str, edits: list[EditBlock]) -> EditResult:
    """Apply complete edit blocks in order. Each SEARCH must match the current code: exactly, or
    line by line ignoring trailing whitespace, or ignoring indentation. The first that does not
    match fails the whole reply, naming its first line that did not match."""
    code = parent
    notes: list[str] = []
    applied = 0
    total = len(edits)
    for n, edit in enumerate(edits, 1):
        where = f"edit {n} of {total} (reply line {edit.line})"
        if not edit.search.strip():
            return EditResult(False, parent, applied,
                              f"{where}: the SEARCH section is empty; it must quote the lines to replace")
        new_code, how = _replace_once(code, edit.search, edit.replace)
        if new_code is None:
            bad_no, bad_line = _first_unmatched_line(code, edit.search)
            return EditResult(False, parent, applied,
                              f"{where}: SEARCH text not found in the parent kernel; first line that "
                              f"did not match (SEARCH line {bad_no}): {bad_line.strip()!r}")
        if how:
            notes.append(f"{where}: matched {how}")
        code = new_code
        applied += 1
    return EditResult(True, code, applied, notes=notes)


def _replace_once(code: str, search: str, replace: str) -> tuple[str | None, str]:
    """(new code, "" or how it matched) or (None, "") when SEARCH is not in the code."""
    hits = _line_aligned(code, search)
    if hits:
        idx = hits[0]
        how = "the first of several occurrences" if len(hits) > 1 else ""
        return code[:idx] + replace + code[idx + len(search):], how
    code_lines = code.splitlines(keepends=True)
    search_lines = search.splitlines()
    for how, norm in (("ignoring trailing whitespace", str.rstrip), ("ignoring indentation", str.strip)):
        want = [norm(s) for s in search_lines]
        have = [norm(s) for s in code_lines]
        for start in range(len(have) - len(want) + 1):
            if have[start:start + len(want)] == want:
                rep = replace if replace.endswith("\n") or not replace else replace + "\n"
                return "".join(code_lines[:start]) + rep + "".join(code_lines[start + len(want):]), how
    return None, ""


def _line_aligned(code: str, search: str) -> list[int]:
    """Offsets where `search` occurs starting at the beginning of a line."""
    hits, idx = [], code.find(search)
    while idx >= 0:
        if idx == 0 or code[idx - 1] == "\n" or search.startswith("\n"):
            hits.append(idx)
        idx = code.find(search, idx + 1)
    return hits


def _first_unmatched_line(code: str, search: str) -> tuple[int, str]:
    """The SEARCH line where the longest run of matching lines (ignoring whitespace) ends."""
    have = [s.strip() for s in code.splitlines()]
    want_raw = search.splitlines()
    want = [s.strip() for s in want_raw]
    best = 0
    for start in range(len(have)):
        k = 0
        while k < len(want) and start + k < len(have) and have[start + k] == want[k]:
            k += 1
        best = max(best, k)
        if best == len(want):
            break
    best = min(best, len(want) - 1)
    return best + 1, want_raw[best]


# --- the reply ------------------------------------------------------------------------------------

def parse_reply(reply: str, parent_code: str | None = None,
                finish_reason: str | None = None) -> ParsedReply:
    """Kernel code from a reply: edit blocks applied to `parent_code`, else the best code block."""
    cut_off = finish_reason == "length"
    edits = find_edit_blocks(reply)
    if edits:
        return _from_edits(edits, parent_code, cut_off)

    blocks = [b for b in find_code_blocks(reply) if b.text.strip()]
    entry = [b for b in blocks if b.has_kernel_entry]
    cpp = [b for b in blocks if b.is_cpp]
    notes: list[str] = []
    if entry:
        chosen = max(entry, key=lambda b: len(b.text))
    elif cpp:
        chosen = max(cpp, key=lambda b: len(b.text))
        notes.append("no block holds a kernel entry (extern \"C\" __global__ / __aicore__); "
                     "took the longest C++ block")
    elif not blocks and KERNEL_ENTRY.search(reply) and reply.lstrip().startswith(("#include", "//", "/*")):
        return ParsedReply(ok=True, code=reply.strip() + "\n", kind="block", truncated=cut_off,
                           notes=["the reply is bare code without a fence"])
    else:
        reason = "no code block and no edit block"
        if blocks:
            langs = ", ".join(sorted({b.lang or "untagged" for b in blocks}))
            reason = f"no C++ code block (found only: {langs}) and no edit block"
        return ParsedReply(ok=False, reason=reason, truncated=cut_off)
    if len(blocks) > 1:
        notes.append(f"{len(blocks)} code blocks; took the one at reply line {chosen.line}")
    truncated = cut_off or not chosen.terminated
    if not chosen.terminated:
        notes.append("the code block is not closed: the reply was cut off")
    return ParsedReply(ok=True, code=chosen.text, kind="block", truncated=truncated, notes=notes)


def _from_edits(edits: list[EditBlock], parent_code: str | None, cut_off: bool) -> ParsedReply:
    complete = [e for e in edits if e.complete]
    truncated = cut_off or len(complete) < len(edits)
    if parent_code is None:
        return ParsedReply(ok=False, truncated=truncated,
                           reason="the reply holds edit blocks but there is no parent kernel to "
                                  "apply them to")
    if not complete:
        return ParsedReply(ok=False, truncated=True,
                           reason="the edit block is cut off before `>>>>>>> REPLACE`")
    result = apply_edits(parent_code, complete)
    notes = list(result.notes)
    if len(complete) < len(edits):
        notes.append(f"ignored {len(edits) - len(complete)} edit block(s) cut off before "
                     "`>>>>>>> REPLACE`")
    if not result.ok:
        return ParsedReply(ok=False, truncated=truncated, reason=result.reason, notes=notes,
                           edits_applied=result.applied)
    return ParsedReply(ok=True, code=result.code, kind="edits", truncated=truncated,
                       edits_applied=result.applied, notes=notes)
