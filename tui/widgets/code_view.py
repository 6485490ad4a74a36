"""The selected candidate's AscendC source: highlighted, diagnostic lines marked in a gutter
(✗ error, ! warning, ▶ the line jumped to), or a unified diff against its parent.

Highlighting runs in a worker (Pygments costs tens of ms per kernel) and is cached; the view is a
`ScrollView` that draws only the visible lines, so a 1,000-line kernel costs what 40 lines do.
"""

from __future__ import annotations

import collections
import difflib
import threading

from rich.text import Text
from textual import work
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.model import Row


def diagnostic_lines(row: Row) -> dict[int, str]:
    """line number -> worst severity of the diagnostics pointing at it."""
    out: dict[int, str] = {}
    for d in row.diagnostics:
        line = d.get("line") or 0
        if line > 0:
            sev = d.get("severity", "error")
            if out.get(line) != "error":
                out[line] = sev
    return out


def code_lines(code: str, marks_items: tuple, focus_line: int | None, dark: bool) -> tuple[Text, ...]:
    """Highlighted source lines with a gutter: number, then ✗ / ! / ▶ (never colour alone)."""
    from rich.syntax import Syntax     # Pygments: imported in the highlighting worker, after the first paint

    marks = dict(marks_items)
    syntax = Syntax(code, "cpp", theme="monokai" if dark else "default", background_color="default")
    body = syntax.highlight(code)
    lines = body.split("\n", allow_blank=True)
    width = len(str(len(lines)))
    out = []
    for i, line in enumerate(lines, start=1):
        sev = marks.get(i)
        glyph = "▶" if i == focus_line else {"error": "✗", "warning": "!", "info": "·"}.get(sev or "", " ")
        style = {"error": "bold red", "warning": "bold yellow"}.get(sev or "", "dim")
        t = Text(no_wrap=True, end="")
        t.append(f"{i:>{width}} ", style="dim")
        t.append(f"{glyph} ", style="bold reverse" if i == focus_line else style)
        if sev in ("error", "warning"):
            line.stylize("underline")
        t.append_text(line)
        out.append(t)
    return tuple(out)


def diff_lines(parent_code: str, code: str, parent_id: str, cid: str, notes: tuple[str, ...] = ()) -> tuple[Text, ...]:
    """The unified diff parent -> candidate, after the agent's reasons for the candidate (`notes`)."""
    why = tuple(Text(f"why: {n}" if i == 0 else f"     {n}", style="italic", no_wrap=True, end="")
                for i, n in enumerate(notes))
    diff = "\n".join(difflib.unified_diff(parent_code.splitlines(), code.splitlines(),
                                         fromfile=parent_id, tofile=cid, lineterm=""))
    if not diff:
        return why + (Text(f"{cid} is identical to its parent {parent_id}."),)
    out = list(why)
    for line in diff.splitlines():
        style = ("bold" if line.startswith(("+++", "---")) else "green" if line.startswith("+")
                 else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
        out.append(Text(line, style=style, no_wrap=True, end=""))
    return tuple(out)


class CodeView(ScrollView):
    """Scrollable, virtualised code of one candidate."""

    can_focus = True

    class Rendered(Message):
        def __init__(self, key: tuple, lines: tuple[Text, ...]) -> None:
            super().__init__()
            self.key = key
            self.lines = lines

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.row: Row | None = None
        self.parent_row: Row | None = None
        self.show_diff = False
        self.focus_line: int | None = None
        self._lines: tuple[Text, ...] = (Text("No candidate selected yet.", style="dim"),)
        self._strips: dict[int, Strip] = {}
        self._want: tuple | None = None
        self._shown: tuple | None = None
        self.border_title = "code"

    # ---- what to show ---------------------------------------------------------------------

    def show(self, row: Row | None, parent: Row | None, keep_focus_line: bool = False) -> None:
        if not keep_focus_line or row is not self.row:
            self.focus_line = None
        self.row, self.parent_row = row, parent
        self.render_code()

    def toggle_diff(self) -> bool:
        self.show_diff = not self.show_diff
        self.render_code()
        return self.show_diff

    def jump_to(self, line: int) -> None:
        self.show_diff = False
        self.focus_line = line
        self.render_code()
        self.scroll_to(y=max(0, line - 4), animate=False)

    @property
    def text(self) -> str:
        """The plain text shown (tests)."""
        return "\n".join(t.plain for t in self._lines)

    def render_code(self) -> None:
        row, parent = self.row, self.parent_row
        self.border_subtitle = "d: back to source" if self.show_diff else "d: diff vs parent"
        if row is None:
            self._set((Text("No candidate selected yet.", style="dim"),))
            self.border_title = "code"
            return
        if not row.code:
            self._set((Text(f"{row.id}: the agent produced no code."),))
            self.border_title = f"code · {row.id}"
            return
        if self.show_diff:
            self.border_title = f"diff · {parent.id if parent else '—'} → {row.id}"
            if parent is None:
                self._set((Text(f"{row.id} has no parent to compare with."),))
                return
            key = ("diff", parent.code, row.code, parent.id, row.id, tuple(row.notes))
        else:
            marks = diagnostic_lines(row)
            dark = getattr(self.app, "current_theme", None) is None or self.app.current_theme.dark
            n = len(marks)
            extra = f" · {n} marked line{'s' if n != 1 else ''}" if n else ""
            self.border_title = f"code · {row.id} · AscendC{extra}"
            key = ("code", row.code, tuple(sorted(marks.items())), self.focus_line, dark)
        self._want = key
        cached = _cached(key)
        if cached is not None:
            self._set(cached, key)
        else:
            self._highlight(key)

    @work(thread=True, exclusive=True, group="code-highlight", exit_on_error=False)
    def _highlight(self, key: tuple) -> None:
        lines = _compute(key)
        self.post_message(self.Rendered(key, lines))

    def on_code_view_rendered(self, message: "CodeView.Rendered") -> None:
        if message.key == self._want:
            self._set(message.lines, message.key)

    @property
    def ready(self) -> bool:
        """The highlighted text asked for last is on screen (tests wait for it)."""
        return self._want is None or self._shown == self._want

    def _set(self, lines: tuple[Text, ...], key: tuple | None = None) -> None:
        if key is None:
            self._want = None
        self._shown = key
        self._lines = lines
        self._strips.clear()
        width = max((t.cell_len for t in lines), default=0)
        self.virtual_size = Size(width + 1, len(lines))
        self.refresh()

    # ---- drawing --------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        strip = self._strips.get(index)
        if strip is None:
            segments = list(self._lines[index].render(self.app.console))
            strip = Strip(segments).apply_style(self.rich_style)
            self._strips[index] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()


_CACHE: "collections.OrderedDict[tuple, tuple[Text, ...]]" = collections.OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()       # highlight workers write, the UI thread reads


def _compute(key: tuple) -> tuple[Text, ...]:
    """Highlight (in a worker thread) and remember the result."""
    if key[0] == "diff":
        lines = diff_lines(*key[1:])
    else:
        lines = code_lines(*key[1:])
    with _CACHE_LOCK:
        _CACHE[key] = lines
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return lines


def _cached(key: tuple) -> tuple[Text, ...] | None:
    with _CACHE_LOCK:
        return _CACHE.get(key)
