"""Phase-differentiated assembly of a knowledge slice: (task or patterns, phase, chip,
diagnostics) -> ordered cards within a token budget, each with its token count and the reason
it was chosen.

| phase    | what goes in                                                                  |
|----------|-------------------------------------------------------------------------------|
| init     | L0/L1 summaries; L2 for the pattern (compact); L3 for the pattern (compact);   |
|          | L4 for the APIs the pattern's exemplar uses (compact); the L5 exemplar (full)  |
| mutation | L2, L3 of the pattern and L4 of its exemplar's APIs, one-line summaries        |
| repair   | the pattern's L5 exemplar and the cards of the diagnostics' ids (full)         |
| tuning   | L3 strategies of the pattern, the imperative `strategy` line of each          |

Under a budget, cards are taken in priority order; a card that does not fit falls back to its
one-line summary, and is left out if even that does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from knowledge.cards import LEVELS, PHASES, KnowledgeCard, card_index, cards_for_api, load_cards, resolve_id
from knowledge.router import routing
from knowledge.tokens import count_tokens, tokenizer_name

_LEVEL_ORDER = {lv: i for i, lv in enumerate(LEVELS)}

# Exemplars by operator family (knowledge.router.FAMILY_OPS) where they fit better than the
# pattern's, each with what the family's kernel takes from it, first the one for the family's own
# data movement: a sort/select kernel sorts like the row sort and merges across cores like the
# scalar reduction; a scatter moves rows like the row gather and combines like the reduction.
_CROSS_CORE = ("L5.reduction-to-scalar-mse_loss",
               "its cross-core protocol (per-core results in GM workspace slots, SyncAll, one core combines)")
FAMILY_EXEMPLARS: dict[str, tuple[tuple[str, str], ...]] = {
    "sort/select": (("L5.sort-sort_rows", "its in-UB sort (-inf padding, Sort32 runs, MrgSort passes, Extract)"),
                    _CROSS_CORE),
    "scatter": (("L5.gather-gather_rows", "its row moves (GM -> UB -> GM through a TQueBind, DataCopyPad rows)"),
                _CROSS_CORE),
    "gather/index": (("L5.gather-gather_rows", "its row gather (index read into UB, DataCopyPad rows, TQueBind)"),),
}

_CUBE_PATTERNS = {"matmul", "conv", "attention"}

_PHASE_HEADERS = {
    "init": "AscendC knowledge for writing a new kernel",
    "mutation": "AscendC rules to keep while changing the kernel",
    "repair": "AscendC knowledge for fixing the reported problems",
    "tuning": "Tiling strategies to try",
}


@dataclass
class SliceCard:
    id: str
    level: str
    tokens: int
    reason: str
    text: str
    mode: str = "full"

    def to_json(self) -> dict:
        return {"id": self.id, "level": self.level, "tokens": self.tokens, "reason": self.reason}


@dataclass
class KnowledgeSlice:
    phase: str
    patterns: list[str]
    chip: str
    cards: list[SliceCard] = field(default_factory=list)
    tokenizer: str = ""
    dropped: list[str] = field(default_factory=list)
    notes: list[dict] = field(default_factory=list)     # e.g. the router's KB.ROUTE_FALLBACK
    family: str = ""                                    # the operator family (router.op_family)
    exemplar_note: str = ""                             # what to take from the exemplar, for a family

    @property
    def total_tokens(self) -> int:
        return sum(c.tokens for c in self.cards)

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.cards]

    def render(self) -> str:
        if not self.cards:
            return ""
        fam = f"{self.family} operator; patterns " if self.family else ""
        head = f"## {_PHASE_HEADERS[self.phase]} ({fam}{', '.join(self.patterns)}; chip {self.chip})"
        for n in self.notes:                    # a guessed pattern is said, not hidden
            head += f"\nNote: {n['message']}."
        if self.exemplar_note and any(c.level == "L5" for c in self.cards):
            head += f"\nNote: {self.exemplar_note}."
        parts: list[str] = []
        for i, c in enumerate(self.cards):
            one_line = c.mode in ("summary", "strategy")
            if i:
                prev_one_line = self.cards[i - 1].mode in ("summary", "strategy")
                parts.append("\n" if one_line and prev_one_line else "\n\n")
            parts.append(c.text)
        return head + "\n\n" + "".join(parts) + "\n"

    def to_json(self) -> dict:
        doc = {"phase": self.phase, "total_tokens": self.total_tokens,
               "cards": [c.to_json() for c in self.cards]}
        if self.notes:
            doc["notes"] = list(self.notes)
        return doc


def _diag_ids(diagnostics) -> list[tuple[str, str, list[str]]]:
    out = []
    for d in diagnostics or ():
        if isinstance(d, str):
            out.append((d, "", []))
        elif isinstance(d, dict):
            out.append((str(d.get("id", "")), str(d.get("api", "") or ""), list(d.get("cards") or [])))
        else:
            out.append((str(getattr(d, "id", "")), str(getattr(d, "api", "") or ""),
                        list(getattr(d, "cards", None) or [])))
    return [t for t in out if t[0]]


def exemplar_for(pattern: str, chip: str = "910B2") -> KnowledgeCard | None:
    l5 = [c for c in load_cards() if c.level == "L5" and pattern in c.patterns]
    fitting = [c for c in l5 if c.fits_chip(chip)]
    return (fitting or l5 or [None])[0]


def _pattern_apis(patterns: list[str], chip: str) -> set[str]:
    apis: set[str] = set()
    for p in patterns:
        ex = exemplar_for(p, chip)
        if ex is not None:
            apis.update(ex.apis)
    return apis


def assemble(task_or_patterns, phase: str, chip: str = "910B2", diagnostics=(),
             budget_tokens: int | None = None, model: str | None = None) -> KnowledgeSlice:
    """The knowledge slice for one prompt. See the module doc for what each phase holds."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; use one of {', '.join(PHASES)}")
    routed = routing(task_or_patterns)
    patterns = routed.patterns
    primary = patterns[0]
    cards = [c for c in load_cards() if c.fits_chip(chip)]
    idx = card_index()
    # (priority: lower first, card, mode, reason)
    picks: list[tuple[int, KnowledgeCard, str, str]] = []
    taken: set[str] = set()

    def pick(prio: int, card: KnowledgeCard | None, mode: str, reason: str) -> None:
        if card is None or card.id in taken:
            return
        taken.add(card.id)
        picks.append((prio, card, mode, reason))

    pat_text = "/".join(patterns)
    ex = exemplar_for(primary, chip)
    ex_reason = f"verified {primary} exemplar"
    family, ex_note = routed.family, ""
    family_ex = [(idx[cid], what) for cid, what in FAMILY_EXEMPLARS.get(family, ())
                 if cid in idx and idx[cid].fits_chip(chip)]
    extra_ex: list[KnowledgeCard] = []
    if family_ex:
        ex, extra_ex = family_ex[0][0], [c for c, _ in family_ex[1:]]
        ex_reason = f"verified exemplar for a {family} operator"
        ex_note = ("; ".join(f"the exemplar {c.id} is here for {what}" for c, what in family_ex)
                   + f"; the {family} strategy itself is in the operator's cards")
    elif family and ex is not None:
        if set(ex.patterns) & _CUBE_PATTERNS:       # a data-movement family is a vector kernel
            vector = [p for p in patterns if p not in _CUBE_PATTERNS] + ["reduction"]
            ex = exemplar_for(vector[0], chip) or ex
            ex_reason = f"verified {vector[0]} exemplar for a {family} operator"
        ex_note = (f"no verified {family} exemplar exists: take the kernel skeleton (OpDef, tiling, queues, "
                   f"core split) from {ex.id}, and the {family} strategy from the operator's cards")
    if ex is not None and not ex.fits_chip(chip):
        ex_reason += f" (written for {', '.join(ex.chips)}: adapt it to {chip})"
    exemplars = [e for e in (ex, *extra_ex) if e is not None]     # the family's first is the skeleton
    if phase == "init":
        apis = _pattern_apis(patterns[:2], chip) | {a for e in exemplars for a in e.apis}
        for e in exemplars:
            pick(0, e, "full", ex_reason)
        for c in cards:
            if c.level in ("L0", "L1") and "init" in c.phases and c.fits_pattern(patterns):
                pick(1, c, "summary", f"{c.level} mental model")
        for c in cards:
            if c.level == "L2" and "init" in c.phases and c.fits_pattern(patterns):
                pick(2, c, "compact", f"constraint that {pat_text} kernels meet")
        for c in cards:
            if c.level == "L3" and "init" in c.phases and c.fits_pattern(patterns):
                pick(3, c, "compact", f"tiling strategy for {pat_text}")
        for c in cards:
            if c.level == "L4" and set(c.apis) & apis:
                pick(4, c, "compact", f"API used by the {primary} exemplar")
    elif phase == "mutation":
        apis = _pattern_apis(patterns[:2], chip)
        for c in cards:
            if "mutation" not in c.phases or not c.fits_pattern(patterns):
                continue
            if c.level in ("L2", "L3"):
                pick(_LEVEL_ORDER[c.level], c, "summary", f"{c.level} rule for {pat_text} edits")
            elif c.level == "L4" and set(c.apis) & apis:
                pick(4, c, "summary", f"API used by the {primary} exemplar")
    elif phase == "repair":
        for cid, api, extra in _diag_ids(diagnostics):
            cid = resolve_id(cid)
            if cid in idx:
                pick(0, idx[cid], "full", f"diagnostic {cid}")
            for other in extra:
                if other in idx:
                    pick(1, idx[other], "full", f"card named by diagnostic {cid}")
            for other in cards_for_api(api):
                pick(2, idx[other], "compact", f"API {api} named by diagnostic {cid}")
        for e in exemplars:
            pick(3, e, "full", ex_reason)
    elif phase == "tuning":
        for c in cards:
            if c.level == "L3" and "tuning" in c.phases and c.fits_pattern(patterns):
                pick(0 if primary in c.patterns else 1, c, "strategy", f"strategy for {pat_text}")

    sl = KnowledgeSlice(phase=phase, patterns=patterns, chip=chip, tokenizer=tokenizer_name(model),
                        notes=routed.notes, family=family, exemplar_note=ex_note)
    ordered = sorted(picks, key=lambda p: p[0])
    chosen = _fit_budget(ordered, budget_tokens, model, sl.dropped, _task_dtypes(task_or_patterns), chip)
    # Present by level (mental model first, exemplar last), keeping priority order within a level.
    chosen.sort(key=lambda t: (_LEVEL_ORDER[t[2].level], t[0], t[1]))
    sl.cards = [t[3] for t in chosen]
    return sl


def _task_dtypes(task) -> tuple[str, ...]:
    """The dtypes a task's inputs and outputs take, plus float32 (fp16/bf16 are computed in float):
    the rows of the cast table a compact L4.Cast keeps. None for a pattern name."""
    specs = list(getattr(task, "inputs", None) or ()) + list(getattr(task, "outputs", None) or ())
    found = {d for spec in specs for d in getattr(spec, "dtypes", ())}
    return tuple(sorted(found | {"float32"})) if found else ()


def _fit_budget(ordered, budget, model, dropped, dtypes=(), chip="") -> list:
    """(priority, order, card, SliceCard) for the picks, within `budget` tokens.

    Without a budget every card gets the mode it was picked with. With one: every card first gets
    its one-line summary (in priority order, the lowest-priority ones left out when even those do
    not fit); then cards are upgraded to their mode in priority order. A card meant in full (the
    exemplar, the diagnostics' cards) may push out lower-priority summaries to make room; a compact
    upgrade happens only when it fits."""
    def make(card, mode, reason):
        text = card.render(mode, dtypes, chip)
        return SliceCard(card.id, card.level, count_tokens(text, model), reason, text, mode)

    if budget is None:
        return [(prio, i, card, make(card, mode, reason)) for i, (prio, card, mode, reason) in enumerate(ordered)]
    sel: list[list] = []   # [prio, order, card, SliceCard, wanted mode, reason]
    used = 0
    for i, (prio, card, mode, reason) in enumerate(ordered):
        sc = make(card, "summary" if mode != "strategy" else "strategy", reason)
        if used + sc.tokens <= budget:
            sel.append([prio, i, card, sc, mode, reason])
            used += sc.tokens
        else:
            dropped.append(card.id)
    for entry in list(sel):
        if entry not in sel or entry[4] in ("summary", "strategy"):
            continue
        up = make(entry[2], entry[4], entry[5])
        extra = up.tokens - entry[3].tokens
        pos = sel.index(entry)
        floor = sum(e[3].tokens for e in sel[:pos + 1] if e[0] <= entry[0]) + sum(
            e[3].tokens for e in sel[pos + 1:] if e[0] <= entry[0])
        if entry[4] == "full" and floor + extra <= budget:
            while used + extra > budget and sel[-1] is not entry and sel[-1][0] > entry[0]:
                gone = sel.pop()
                used -= gone[3].tokens
                dropped.append(gone[2].id)
        if used + extra <= budget:
            entry[3] = up
            used += extra
        else:
            entry[3].reason += " (summary: budget)"
    return [(e[0], e[1], e[2], e[3]) for e in sel]
