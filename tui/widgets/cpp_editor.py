"""A TextArea for AscendC: C++ highlighting through tree-sitter, diagnostic lines marked.

The C++ grammar comes from the `tree-sitter-cpp` package and is registered with
`TextArea.register_language` under the name "cpp" together with `CPP_HIGHLIGHT_QUERY`, a
highlight query written for this project (the package's own query only adds C++ keywords on top
of the C one, and knows nothing of AscendC's `__aicore__`-style qualifiers). Capture names are the
ones TextArea themes style (keyword, string, comment, type, function, ...).

Lines with diagnostics (`mark_lines`) are styled in `get_line`, TextArea's public hook for extra
line styling, so no private highlighting method is overridden. Without tree-sitter the editor still
works, as plain text, and `highlighting` says so.
"""

from __future__ import annotations

from functools import lru_cache

from rich.style import Style
from rich.text import Text
from textual.widgets import TextArea

# Our own query for the tree-sitter-cpp grammar. TextArea applies captures grouped by name in no
# promised order, so patterns avoid capturing one node twice (hence the `#not-match?` on types).
CPP_HIGHLIGHT_QUERY = r"""
(comment) @comment

[(string_literal) (raw_string_literal) (char_literal) (system_lib_string)] @string
(escape_sequence) @string.special
(number_literal) @number
[(true) (false)] @boolean
[(null) (this)] @constant.builtin

[(primitive_type) (sized_type_specifier) (auto)] @type.builtin
; a builtin type after an AscendC qualifier is parsed as a stray identifier
((identifier) @type.builtin
  (#match? @type.builtin "^(void|bool|char|short|int|long|float|double|unsigned|signed)$"))
((type_identifier) @type (#not-match? @type "^(__[a-z]+__|GM_ADDR)$"))
(namespace_identifier) @type

[
  "#include" "#define" "#if" "#ifdef" "#ifndef" "#elif" "#else" "#endif"
] @include
(preproc_directive) @include

["if" "else" "switch" "case" "default"] @conditional
["for" "while" "do" "break" "continue"] @repeat
["return" "co_return"] @keyword.return
["try" "catch" "throw"] @exception

[
  "class" "struct" "union" "enum" "namespace" "using" "typedef" "template" "typename"
  "public" "private" "protected" "virtual" "override" "final" "friend" "operator"
  "const" "constexpr" "consteval" "constinit" "static" "extern" "inline" "volatile"
  "mutable" "explicit" "noexcept" "thread_local" "register" "static_assert"
  "new" "delete" "sizeof" "alignof" "alignas" "decltype" "goto" "requires" "concept"
] @keyword

; AscendC qualifiers and macros read as identifiers by a C++ grammar
((identifier) @keyword
  (#match? @keyword "^(__aicore__|__global__|__gm__|__ubuf__|__inline__|GM_ADDR)$"))
((type_identifier) @keyword
  (#match? @keyword "^(__aicore__|__global__|__gm__|__ubuf__|GM_ADDR)$"))
((primitive_type) @keyword (#match? @keyword "^__[a-z]+__$"))

(function_declarator declarator: (identifier) @function)
(function_declarator declarator: (field_identifier) @function)
(function_declarator declarator: (qualified_identifier name: (identifier) @function))
(call_expression function: (identifier) @function.call)
(call_expression function: (qualified_identifier name: (identifier) @function.call))
(call_expression function: (field_expression field: (field_identifier) @method.call))
(template_function name: (identifier) @function.call)
(template_method name: (field_identifier) @method.call)

[
  "=" "+=" "-=" "*=" "/=" "%=" "&=" "|=" "^=" "<<=" ">>="
  "+" "-" "*" "/" "%" "++" "--" "<<" ">>" "&" "|" "^" "~" "!"
  "==" "!=" "<" ">" "<=" ">=" "&&" "||" "->" "::" "?"
] @operator

["(" ")" "[" "]" "{" "}"] @punctuation.bracket
["," ";" "." ":"] @punctuation.delimiter
"""

DIAGNOSTIC_STYLE = Style(underline=True, bold=True, bgcolor="#6b1f1f")


@lru_cache(maxsize=1)
def cpp_language():
    """The tree-sitter C++ `Language`, or None when tree-sitter is not installed."""
    try:
        import tree_sitter
        import tree_sitter_cpp
    except ImportError:
        return None
    return tree_sitter.Language(tree_sitter_cpp.language())


class CppEditor(TextArea):
    def __init__(self, text: str = "", **kwargs) -> None:
        kwargs.setdefault("show_line_numbers", True)
        kwargs.setdefault("tab_behavior", "indent")
        super().__init__(text, **kwargs)
        self.marked_lines: set[int] = set()      # 1-based
        language = cpp_language()
        self.highlighting = language is not None
        if language is not None:
            self.register_language("cpp", language, CPP_HIGHLIGHT_QUERY)
            self.language = "cpp"

    def on_mount(self) -> None:
        self._show_position()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._show_position()

    def _show_position(self) -> None:
        """The cursor's line and column under the editor, as the grader and the compiler number them."""
        row, col = self.cursor_location
        self.border_subtitle = f"Ln {row + 1}, Col {col + 1}"

    def mark_lines(self, lines: set[int]) -> None:
        self.marked_lines = set(lines)
        self.notify_style_update()          # drops the rendered-line cache
        self.refresh()

    def get_line(self, line_index: int) -> Text:
        line = super().get_line(line_index)
        if line_index + 1 in self.marked_lines:
            line.stylize(DIAGNOSTIC_STYLE)
        return line
