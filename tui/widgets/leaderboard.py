"""The live leaderboard: a DataTable updated row by row (never rebuilt on an event), sortable and
filterable."""

from __future__ import annotations

from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.widgets import DataTable

from tui.model import COLUMNS, BoardModel, Row

SORTS = ("rank", "time", "round", "id", "status")

_STATUS_ORDER = {"passed": 0, "built": 1, "evaluating": 1, "proposed": 2, "incorrect": 3, "crashed": 4,
                 "build_failed": 5, "rejected_duplicate": 6, "no_code": 7}


# Fixed widths (cells), so that at 160 columns the marks still show: `185.85 µs est. (×÷2.29)`,
# `1113 µs est. (×÷3.41)`, `12.34×`, `100%`, `0.40` (its band is in the title line), `📌 to pin`; a long strategy
# name is cut (the review screen and the code pane's title give it whole).
COLUMN_WIDTHS = {"rank": 4, "id": 7, "gen": 4, "origin": 8, "strategy": 14, "status": 14, "time": 22,
                 "speedup": 7, "roof": 4, "HAP": 4, "marks": 11}


class LiveCell:
    """A cell computed when drawn (rank, speedup): a new best re-ranks every row without touching
    any cell; DataTable draws only the visible rows."""

    __slots__ = ("fn",)

    def __init__(self, fn) -> None:
        self.fn = fn

    def __str__(self) -> str:
        return self.fn()

    def __eq__(self, other) -> bool:
        return str(self) == (other if isinstance(other, str) else str(other))

    __hash__ = None  # type: ignore[assignment]


LIVE = (0, 7)          # column indexes of rank and speedup


class Leaderboard(DataTable):
    """Rows keyed by candidate id. `sync(ids)` touches only those rows; sorting happens once per
    batch of events."""

    BINDINGS = [
        Binding("o", "cycle_sort", "Sort", id="sort"),
        Binding("home", "first_row", "Top row", id="first_row", show=False),
        Binding("end", "last_row", "Last row", id="last_row", show=False),
    ]

    class SelectionChanged(Message):
        def __init__(self, candidate_id: str | None) -> None:
            super().__init__()
            self.candidate_id = candidate_id

    def __init__(self, model: BoardModel, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.model = model
        self.sort_by = "rank"
        self.filter_text = ""
        self._cells: dict[str, tuple] = {}
        self._selected: str | None = None

    def on_mount(self) -> None:
        for label, key in COLUMNS:
            self.add_column(label, key=key, width=COLUMN_WIDTHS[label])

    def _update_dimensions(self, new_rows) -> None:
        """DataTable measures every cell of every new row to size auto-width columns; every column
        here has a fixed width and every row one line, so only the virtual size changes (this keeps
        adding 2,000 rows cheap). Overrides a private DataTable hook (Textual 8.2)."""
        width = sum(column.get_render_width(self) for column in self.columns.values())
        header = self.header_height if self.show_header else 0
        self.virtual_size = Size(width + self._row_label_column_width, self._total_row_height + header)

    # ---- what is shown --------------------------------------------------------------------

    def matches(self, row: Row) -> bool:
        if not self.filter_text:
            return True
        hay = " ".join((row.id, f"r{row.round}", row.origin, row.strategy, row.status,
                        "pinned" if row.pinned else "", "vetoed" if row.vetoed else "")).lower()
        return all(term in hay for term in self.filter_text.lower().split())

    def sync(self, changed: set[str] | None = None) -> None:
        """Bring the given rows (all when None) up to date, then restore the order."""
        ids = self.model.rows.keys() if changed is None else changed
        moved = False
        for cid in ids:
            row = self.model.rows.get(cid)
            if row is None:
                continue
            present = cid in self._cells
            if not self.matches(row):
                if present:
                    self.remove_row(cid)
                    del self._cells[cid]
                    moved = True
                continue
            cells = list(self.model.cells(row))
            if not present:
                cells[0] = LiveCell(lambda cid=cid: self._rank_text(cid))
                cells[7] = LiveCell(lambda cid=cid: self._speed_text(cid))
                self.add_row(*cells, key=cid)
                moved = True
            else:
                old = self._cells[cid]
                for i, ((_, col), new, was) in enumerate(zip(COLUMNS, cells, old)):
                    if i in LIVE:
                        cells[i] = was
                    elif new != was:
                        self.update_cell(cid, col, new)
                        if col in ("time", "status"):
                            moved = True
            self._cells[cid] = tuple(cells)
        if moved:
            self.reorder()

    def rebuild(self) -> None:
        """Only for a new filter or a new session: clear and add every matching row."""
        keep = self._selected
        self.clear()
        self._cells.clear()
        self.sync(None)
        if keep and keep in self._cells:
            self.select(keep)

    def _rank_text(self, cid: str) -> str:
        r = self.model.rank(cid)
        return str(r) if r else "—"

    def _speed_text(self, cid: str) -> str:
        row = self.model.rows.get(cid)
        sp = self.model.speedup(row) if row else None
        return f"{sp:.2f}×" if sp else "—"

    def _order_key(self, cid: str):
        row = self.model.rows[cid]
        rank = self.model.rank(cid)
        unranked = (1, _STATUS_ORDER.get(row.status, 9), row.seq)
        if self.sort_by == "rank" or self.sort_by == "time":
            return (0, rank, 0) if rank else unranked
        if self.sort_by == "round":
            return (-row.round, rank or 10**9, row.seq)
        if self.sort_by == "status":
            return (_STATUS_ORDER.get(row.status, 9), rank or 10**9, row.seq)
        return (row.round, row.seq)

    def reorder(self) -> None:
        selected = self.selected_id
        self.sort("id", key=self._order_key)
        if selected and selected in self._cells:
            index = self.get_row_index(selected)
            if index != self.cursor_row:
                self.move_cursor(row=index, animate=False, scroll=False)

    def set_sort(self, sort_by: str) -> None:
        self.sort_by = sort_by
        self.reorder()

    def action_cycle_sort(self) -> None:
        self.set_sort(SORTS[(SORTS.index(self.sort_by) + 1) % len(SORTS)])
        self.notify(f"leaderboard sorted by {self.sort_by}", timeout=2)

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip()
        self.rebuild()

    # ---- selection ------------------------------------------------------------------------

    @property
    def selected_id(self) -> str | None:
        if self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key((self.cursor_row, 0)).row_key
        except Exception:
            return None
        return key.value

    def select(self, cid: str) -> None:
        if cid in self._cells:
            self.move_cursor(row=self.get_row_index(cid), animate=False)

    def visible_ids(self) -> list[str]:
        return [self.coordinate_to_cell_key((i, 0)).row_key.value for i in range(self.row_count)]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        cid = event.row_key.value if event.row_key else None
        if cid != self._selected:
            self._selected = cid
            self.post_message(self.SelectionChanged(cid))
