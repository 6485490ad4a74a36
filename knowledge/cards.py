"""Knowledge cards: one Markdown file per card under `knowledge/cards/L<n>/`, YAML front matter + body.

Front matter keys (all required): id, level, title, patterns, chips, phases, apis, constraints,
summary, sources. L3 cards also carry `strategy` (an imperative one-liner used as a meta-prompt).
L5 cards may name a kernel source beside them (`<file>.cpp`, key `kernel`) and the built-in
`task` they were verified on.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

CARDS_DIR = Path(__file__).resolve().parent / "cards"

LEVELS = ("L0", "L1", "L2", "L3", "L4", "L5")
PATTERNS = ("elementwise", "broadcast", "reduction", "normalization", "softmax", "fusion", "matmul", "conv",
            "attention")
PHASES = ("init", "mutation", "repair", "tuning")
REQUIRED_KEYS = ("id", "level", "title", "patterns", "chips", "phases", "apis", "constraints",
                 "summary", "sources")
_LIST_KEYS = ("patterns", "chips", "phases", "apis", "constraints", "sources")
_ID_RE = re.compile(r"^(L[0-5]|CPP|RUN|PREC|GEN)\.[A-Za-z0-9_.\-]+$")

# Chip families as they are named in the cards' `chips` lists, with the NPU arch they belong to.
_CHIP_FAMILIES = {
    "910B": "2201", "910_93": "2201", "910C": "2201", "A2": "2201", "A3": "2201",
    "950": "3510", "310P": "2002", "910A": "1001", "910": "1001", "310B": "3002",
}


# Task dtype names as the cards' tables spell them.
_DTYPE_WORDS = {"float16": "half", "bfloat16": "bf16", "float32": "float", "int8": "int8", "uint8": "uint8",
                "int16": "int16", "uint16": "uint16", "int32": "int32", "uint32": "uint32", "int64": "int64"}


class CardError(ValueError):
    """A card file whose front matter is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class KnowledgeCard:
    id: str
    level: str
    title: str
    patterns: tuple[str, ...]
    chips: tuple[str, ...]
    phases: tuple[str, ...]
    apis: tuple[str, ...]
    constraints: tuple[str, ...]
    summary: str
    sources: tuple[str, ...]
    body: str
    path: Path
    strategy: str = ""
    task: str = ""
    kernel_path: Path | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    # -- matching -------------------------------------------------------------------------
    @property
    def ops(self) -> tuple[str, ...]:
        """The aten ops (of a task's golden) that reach this card; a card with ops is reached
        through them only, never through a pattern (a scan's card in every reduction slice is noise)."""
        return tuple(map(str, self.extra.get("ops") or ()))

    def fits_pattern(self, patterns) -> bool:
        if self.ops:
            return False
        return "all" in self.patterns or any(p in self.patterns for p in patterns)

    def fits_chip(self, chip: str) -> bool:
        if "all" in self.chips:
            return True
        arch = chip_arch(chip)
        for c in self.chips:
            if chip.upper().startswith(c.upper()) or c == arch or _CHIP_FAMILIES.get(c) == arch:
                return True
        return False

    # -- rendering -------------------------------------------------------------------------
    def kernel_source(self) -> str:
        if self.kernel_path and self.kernel_path.is_file():
            return self.kernel_path.read_text(encoding="utf-8")
        return ""

    def first_paragraph(self) -> str:
        for block in re.split(r"\n\s*\n", self.body.strip()):
            if block.strip() and not block.lstrip().startswith("#"):
                return block.strip()
        return ""

    def compact_body(self) -> str:
        """What `compact` adds to the summary: the fix of an L2 card, nothing for L3 (its strategy
        says it), the first paragraph (signatures) of the others."""
        if self.level == "L3":
            return ""
        if self.level == "L2":
            m = re.search(r"\bFix:\s*(.*?)(?:\n\s*\n|$)", self.body, re.S)
            return ("Fix: " + " ".join(m.group(1).split())) if m else ""
        return self.first_paragraph()

    def dtype_rows(self, dtypes, chip: str) -> str:
        """For a card whose front matter sets `compact_rows: dtype` (L4.Cast): the rows of its table
        for `chip` whose first cell names one of `dtypes` (the task's, as half/bf16/float/int8...),
        with the table's heading and header; "" when none match. The table for a chip is the one whose
        heading paragraph names its family (950) or, for every other chip, the first table."""
        if self.extra.get("compact_rows") != "dtype" or not dtypes:
            return ""
        blocks = re.split(r"\n\s*\n", self.body.strip())
        tables = [(blocks[i - 1] if i else "", b) for i, b in enumerate(blocks) if b.lstrip().startswith("|")]
        if not tables:
            return ""
        arch = chip_arch(chip)
        named = [t for t in tables if any(_CHIP_FAMILIES.get(w.strip("(),/")) == arch for w in t[0].split())]
        heading, table = (named or tables)[0]
        lines = table.strip().splitlines()
        wanted = {_DTYPE_WORDS.get(d, d) for d in dtypes}
        rows = [ln for ln in lines[2:] if {c.strip(" *") for c in ln.strip("|").split("|")[0].split(",")} & wanted]
        if not rows:
            return ""
        return "\n".join([heading.strip().splitlines()[-1], *lines[:2], *rows])

    def render(self, mode: str, dtypes=(), chip: str = "") -> str:
        """`strategy` (the L3 imperative line), `summary` (one line), `compact` (title, summary and
        `compact_body`, plus `dtype_rows` for the task's dtypes on `chip`) or `full` (whole body; an L5
        card also carries its kernel source)."""
        strategy = f" Strategy: {self.strategy}" if self.strategy else ""
        if mode == "strategy":
            return f"- [{self.id}] {self.strategy or self.summary}"
        if mode == "summary":
            return f"- [{self.id}] {self.summary}{strategy}"
        head = f"### [{self.id}] {self.title}"
        if mode == "compact":
            rows = self.dtype_rows(dtypes, chip) if chip else ""
            return f"{head}\n{self.summary}{strategy}\n{self.compact_body()}".rstrip() + (f"\n\n{rows}" if rows else "")
        text = f"{head}\n{self.body.strip()}"
        if strategy:
            text += f"\n{strategy.strip()}"
        src = self.kernel_source()
        if src:
            text += f"\n\n```cpp\n{src.rstrip()}\n```"
        return text


def chip_arch(chip: str) -> str:
    """The NPU arch number (`2201`, `3510`, `2002`, ...) of a chip name such as `910B2`."""
    c = chip.upper()
    for prefix, arch in sorted(_CHIP_FAMILIES.items(), key=lambda kv: -len(kv[0])):
        if c.startswith(prefix.upper()):
            return arch
    return c


def parse_card(path: Path) -> KnowledgeCard:
    text = path.read_text(encoding="utf-8")
    m = re.match(r"^---\s*\n(.*?)\n---\s*\n?(.*)$", text, re.S)
    if not m:
        raise CardError(f"{path}: no YAML front matter (the file must start with '---')")
    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        raise CardError(f"{path}: front matter is not valid YAML: {exc}") from None
    if not isinstance(meta, dict):
        raise CardError(f"{path}: front matter must be a mapping")
    missing = [k for k in REQUIRED_KEYS if k not in meta]
    if missing:
        raise CardError(f"{path}: front matter lacks {', '.join(missing)}")
    for k in _LIST_KEYS:
        v = meta[k]
        if v is None:
            meta[k] = []
        elif isinstance(v, str):
            meta[k] = [v]
        elif not isinstance(v, list):
            raise CardError(f"{path}: '{k}' must be a list")
    for k in ("patterns", "chips", "phases"):
        odd = [v for v in meta[k] if not isinstance(v, str)]
        if odd:  # YAML reads 910_93 as the number 91093: names must stay strings
            raise CardError(f"{path}: '{k}' holds {odd!r}, not names: quote them (e.g. \"910_93\")")
    cid, level = str(meta["id"]), str(meta["level"])
    if level not in LEVELS:
        raise CardError(f"{path}: level {level!r} is not one of {', '.join(LEVELS)}")
    if not _ID_RE.match(cid):
        raise CardError(f"{path}: id {cid!r} is not of the form L<n>.<name> or CPP./RUN./PREC.<name>")
    if path.parent.name != level:
        raise CardError(f"{path}: card of level {level} lies in folder {path.parent.name}")
    bad_phase = [p for p in meta["phases"] if p not in PHASES]
    if bad_phase or not meta["phases"]:
        raise CardError(f"{path}: phases must be a non-empty subset of {', '.join(PHASES)}")
    bad_pat = [p for p in meta["patterns"] if p != "all" and p not in PATTERNS]
    if bad_pat or not meta["patterns"]:
        raise CardError(f"{path}: unknown pattern(s) {bad_pat}; use {', '.join(PATTERNS)} or all")
    if not meta["chips"]:
        raise CardError(f"{path}: chips must not be empty (use [all])")
    if not str(meta["summary"]).strip() or "\n" in str(meta["summary"]).strip():
        raise CardError(f"{path}: summary must be one non-empty line")
    if not meta["sources"]:
        raise CardError(f"{path}: sources must name at least one source")
    if level == "L3" and not str(meta.get("strategy", "")).strip():
        raise CardError(f"{path}: an L3 card needs a `strategy` line")
    kernel = None
    if meta.get("kernel"):
        kernel = path.parent / str(meta["kernel"])
        if not kernel.is_file():
            raise CardError(f"{path}: kernel file {kernel.name} not found beside the card")
    known = set(REQUIRED_KEYS) | {"strategy", "task", "kernel"}
    return KnowledgeCard(
        id=cid, level=level, title=str(meta["title"]),
        patterns=tuple(map(str, meta["patterns"])), chips=tuple(map(str, meta["chips"])),
        phases=tuple(map(str, meta["phases"])), apis=tuple(map(str, meta["apis"])),
        constraints=tuple(map(str, meta["constraints"])), summary=str(meta["summary"]).strip(),
        sources=tuple(map(str, meta["sources"])), body=m.group(2), path=path,
        strategy=str(meta.get("strategy", "") or "").strip(), task=str(meta.get("task", "") or ""),
        kernel_path=kernel, extra={k: v for k, v in meta.items() if k not in known},
    )


@functools.lru_cache(maxsize=4)
def _load(root: str) -> tuple[KnowledgeCard, ...]:
    cards, seen = [], {}
    for path in sorted(Path(root).glob("L[0-5]/*.md")):
        card = parse_card(path)
        if card.id in seen:
            raise CardError(f"{path}: id {card.id} already used by {seen[card.id]}")
        seen[card.id] = path
        cards.append(card)
    return tuple(cards)


def load_cards(root: Path | None = None) -> tuple[KnowledgeCard, ...]:
    """Every card, ordered by level then file name. Raises CardError on the first bad card."""
    return _load(str(root or CARDS_DIR))


def card_index(root: Path | None = None) -> dict[str, KnowledgeCard]:
    return {c.id: c for c in load_cards(root)}


def get_card(card_id: str) -> KnowledgeCard:
    """The card with this id; KeyError naming the id when there is none."""
    idx = card_index()
    if card_id in idx:
        return idx[card_id]
    lowered = {k.lower(): v for k, v in idx.items()}
    if card_id.lower() in lowered:
        return lowered[card_id.lower()]
    raise KeyError(card_id)


def resolve_id(card_id: str) -> str:
    """The card id for a constraint id or a bare precision failure class (`localized_outlier`
    -> `PREC.localized_outlier`); the input unchanged when no card matches."""
    idx = card_index()
    if card_id in idx:
        return card_id
    if f"PREC.{card_id}" in idx:
        return f"PREC.{card_id}"
    return card_id


def cards_for_constraint(constraint_id: str) -> list[str]:
    """Card ids that explain a constraint id: its own card first, then L3 strategies that fix it,
    then the L1/L4 card whose first constraint it is, when exactly one is (the semantics behind
    the rule; several such cards are API cards, which reach a diagnostic through its API)."""
    idx = card_index()
    constraint_id = resolve_id(constraint_id)
    out = [constraint_id] if constraint_id in idx else []
    fixes = [c.id for c in idx.values() if c.level == "L3" and constraint_id in c.constraints]
    explains = [c.id for c in idx.values() if c.level in ("L1", "L4") and tuple(c.constraints[:1]) == (constraint_id,)]
    return out + fixes[:2] + (explains if len(explains) == 1 else [])


def cards_for_api(api: str) -> list[str]:
    """L4 card ids that document an API name (old or new name)."""
    if not api:
        return []
    return [c.id for c in load_cards() if c.level == "L4" and api in c.apis]
