"""The L0-L5 AscendC knowledge base: cards (data) and the code that loads, routes and assembles them.

Imports no UI library. Public API:
- `load_cards()`, `get_card(id)`, `KnowledgeCard`, `cards_for_constraint(id)`, `resolve_id(id)`
- `route(task) -> list[str]` (patterns, shared with the lowering agent)
- `assemble(task_or_patterns, phase, chip, diagnostics, budget_tokens, model) -> KnowledgeSlice`
- `explain(text) -> list[Diagnostic]`, `attach_cards(diagnostics)`
"""

from knowledge.assembler import KnowledgeSlice, SliceCard, assemble
from knowledge.cards import (PATTERNS, PHASES, CardError, KnowledgeCard, cards_for_constraint, get_card,
                             load_cards, resolve_id)
from knowledge.errors import attach_cards, explain
from knowledge.router import route

__all__ = ["KnowledgeSlice", "SliceCard", "assemble", "PATTERNS", "PHASES", "CardError",
           "KnowledgeCard", "cards_for_constraint", "get_card", "load_cards", "resolve_id", "attach_cards",
           "explain", "route"]
