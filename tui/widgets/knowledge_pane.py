"""The knowledge slice of the current phase: cards grouped L0–L5 with their tokens and the reason
each was chosen; Enter opens a card."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import Tree

from tui.model import SliceInfo

LEVEL_NAMES = {"L0": "hardware mental model", "L1": "operational semantics", "L2": "invariant constraints",
               "L3": "tiling strategies", "L4": "API specifications", "L5": "verified exemplars"}


class KnowledgePane(Tree):
    class CardChosen(Message):
        def __init__(self, card_id: str) -> None:
            super().__init__()
            self.card_id = card_id

    def __init__(self, **kwargs) -> None:
        super().__init__("knowledge slice", **kwargs)
        self.show_root = True
        self.guide_depth = 3
        self.slice: SliceInfo | None = None
        self.root.set_label("knowledge slice: none yet (sent with the first prompt)")

    def show(self, s: SliceInfo | None) -> None:
        if s is self.slice:
            return
        self.slice = s
        self.clear()
        if s is None:
            self.root.set_label("knowledge slice: none yet")
            return
        src = "sent to the agent" if s.source == "agent" else "assembled for this phase (the offline agent sends no prompt)"
        self.root.set_label(f"round {s.round} · phase {s.phase} · {s.total_tokens:,} tokens · {src}")
        by_level: dict[str, list[dict]] = {}
        for c in s.cards:
            by_level.setdefault(c.get("level", "?"), []).append(c)
        for level in sorted(by_level):
            cards = by_level[level]
            tokens = sum(int(c.get("tokens", 0)) for c in cards)
            node = self.root.add(f"{level} {LEVEL_NAMES.get(level, '')} — {len(cards)} card"
                                 f"{'s' if len(cards) != 1 else ''}, {tokens:,} tokens",
                                 expand=level in ("L2", "L3", "L5") or len(by_level) <= 2)
            for c in cards:
                node.add_leaf(f"{c['id']}  {int(c.get('tokens', 0)):,} tok — {c.get('reason', '')}",
                              data=c["id"])
        self.root.expand()

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data:
            event.stop()
            self.post_message(self.CardChosen(event.node.data))

    @property
    def highlighted_card(self) -> str | None:
        node = self.cursor_node
        return node.data if node is not None else None
