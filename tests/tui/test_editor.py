"""The editor's C++ highlighting (tree-sitter) and diagnostic line marks, drawn as the user sees them."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.tui.fakes import kernel
from tui.widgets.cpp_editor import DIAGNOSTIC_STYLE, CppEditor

SOURCE = """\
#include "kernel_operator.h"
// copy one tile
extern "C" __global__ __aicore__ void copy(GM_ADDR x, GM_ADDR y)
{
    for (int32_t i = 0; i < 8; i++) {
        DataCopy(yGm[i], xGm[i], 256);
    }
    return;
}
"""


class EditorApp(App):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield CppEditor(self.text)


def style_at(editor: CppEditor, row: int, word: str):
    """The rich Style `word` is drawn with on screen row `row` (no scrolling; one style per word)."""
    chars, styles = [], []
    for seg in editor.render_line(row):
        chars.append(seg.text)
        styles.extend([seg.style] * len(seg.text))
    text = "".join(chars)
    start = text.index(word)
    drawn = set(styles[start:start + len(word)])
    assert len(drawn) == 1, f"{word!r} is drawn in {len(drawn)} styles"
    return drawn.pop()


def syntax_style(editor: CppEditor, name: str):
    return editor._theme.syntax_styles[name]


async def test_cpp_is_highlighted_through_tree_sitter():
    app = EditorApp(SOURCE)
    async with app.run_test(size=(100, 20)):
        ed = app.query_one(CppEditor)
        assert ed.highlighting and ed.language == "cpp" and ed.is_syntax_aware

        ed.move_cursor((8, 1))     # the cursor and its line style away from the rows looked at

        def colour(row: int, word: str):
            return style_at(ed, row, word).color

        assert colour(0, "#include") == syntax_style(ed, "include").color
        assert colour(1, "// copy one tile") == syntax_style(ed, "comment").color
        # AscendC qualifiers read as keywords, the builtin type after them as a type
        assert colour(2, "__aicore__") == syntax_style(ed, "keyword").color
        assert colour(2, "GM_ADDR") == syntax_style(ed, "keyword").color
        assert colour(2, "void") == syntax_style(ed, "type.builtin").color
        assert colour(4, "for") == syntax_style(ed, "repeat").color
        assert colour(5, "DataCopy") == syntax_style(ed, "function.call").color
        assert colour(7, "return") == syntax_style(ed, "keyword.return").color
        assert syntax_style(ed, "keyword").color != syntax_style(ed, "comment").color


async def test_a_generated_kernel_is_highlighted_past_its_ascendc_qualifiers():
    app = EditorApp(kernel(256, 2, "note"))
    async with app.run_test(size=(120, 40)):
        ed = app.query_one(CppEditor)
        row = next(i for i in range(ed.document.line_count) if "void Init(" in ed.document.get_line(i))
        for word, name in (("__aicore__", "keyword"), ("void", "type.builtin"), ("Init", "function"),
                           ("uint32_t", "type.builtin")):
            assert style_at(ed, row, word).color == syntax_style(ed, name).color, word


async def test_marked_lines_are_drawn_with_the_diagnostic_style_and_cleared():
    app = EditorApp(SOURCE)
    async with app.run_test(size=(100, 20)) as pilot:
        ed = app.query_one(CppEditor)
        ed.move_cursor((8, 1))
        ed.mark_lines({6})
        await pilot.pause()
        marked = style_at(ed, 5, "DataCopy")
        assert marked.underline and marked.bold and marked.bgcolor == DIAGNOSTIC_STYLE.bgcolor
        assert marked.color == syntax_style(ed, "function.call").color      # still highlighted
        assert not style_at(ed, 4, "for").underline
        ed.mark_lines(set())
        await pilot.pause()
        assert not style_at(ed, 5, "DataCopy").underline
