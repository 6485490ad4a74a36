"""A TextArea with C++ highlighting when Textual has no tree-sitter C++ grammar.

The installed Textual ships no tree-sitter (and no C++ grammar), so highlights come from Pygments'
C++ lexer, mapped onto the TextArea theme's syntax names (keyword, string, comment, ...). This
overrides TextArea's `_build_highlight_map` (a private hook, stable across Textual 8.x).
Lines with diagnostics are listed in `marked_lines` and drawn with the "diagnostic" style.
"""

from __future__ import annotations

from pygments.lexers.c_cpp import CppLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Token
from textual.widgets import TextArea

_LEXER = CppLexer(stripnl=False, ensurenl=False)

_NAMES = [
    (Comment.Preproc, "keyword"),
    (Comment, "comment"),
    (Keyword.Type, "type.builtin"),
    (Keyword, "keyword"),
    (String, "string"),
    (Number, "number"),
    (Name.Function, "function"),
    (Name.Class, "type.class"),
    (Name.Builtin, "type.builtin"),
    (Operator, "operator"),
    (Punctuation, "punctuation.bracket"),
]


def _name_for(tok) -> str | None:
    for base, name in _NAMES:
        if tok in base:
            return name
    return None


def cpp_highlights(text: str) -> dict[int, list[tuple[int, int | None, str]]]:
    """line -> [(start byte, end byte, highlight name)], the shape TextArea draws."""
    out: dict[int, list[tuple[int, int | None, str]]] = {}
    row, col = 0, 0                    # col in bytes
    for tok, value in _LEXER.get_tokens(text):
        name = _name_for(tok) if tok is not Token.Text else None
        for i, part in enumerate(value.split("\n")):
            if i:
                row, col = row + 1, 0
            n = len(part.encode("utf-8"))
            if name and n:
                out.setdefault(row, []).append((col, col + n, name))
            col += n
    return out


class CppEditor(TextArea):
    def __init__(self, text: str = "", **kwargs) -> None:
        kwargs.setdefault("show_line_numbers", True)
        kwargs.setdefault("tab_behavior", "indent")
        super().__init__(text, **kwargs)
        self.marked_lines: set[int] = set()      # 1-based

    def mark_lines(self, lines: set[int]) -> None:
        self.marked_lines = set(lines)
        self._build_highlight_map()
        self.refresh()

    def _build_highlight_map(self) -> None:
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        for row, spans in cpp_highlights(self.text).items():
            highlights[row].extend(spans)
        for line in getattr(self, "marked_lines", ()):
            highlights[line - 1].append((0, None, "diagnostic"))
