"""The main screen: leaderboard, progress chart, code, diagnostics, knowledge slice, status bar."""

from __future__ import annotations

import json

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, TabbedContent, TabPane

from tui.model import BoardModel, Row
from tui.widgets.code_view import CodeView
from tui.widgets.diagnostics_pane import DiagnosticsPane
from tui.widgets.knowledge_pane import KnowledgePane
from tui.widgets.leaderboard import Leaderboard
from tui.widgets.progress_chart import ProgressChart
from tui.widgets.status_bar import StatusBar


class MainScreen(Screen):
    CSS_PATH = "main.tcss"

    BINDINGS = [
        Binding("p", "pin", "Pin", id="pin"),
        Binding("x", "veto", "Veto", id="veto"),
        Binding("e", "edit", "Edit", id="edit"),
        Binding("s", "steer", "Steer", id="steer"),
        Binding("n", "next_round", "Next round", id="next_round"),
        Binding("a", "toggle_auto", "Auto", id="auto_continue"),
        Binding("S", "stop", "Stop", id="stop"),
        Binding("d", "toggle_diff", "Diff", id="diff"),
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("o", "cycle_sort", "Sort", id="sort", show=False),
        Binding("r", "raw_output", "Raw output", id="raw_output", show=False),
        Binding("k", "open_card", "Card", id="open_card", show=False),
        Binding("g", "jump_to_line", "Go to line", id="jump_to_line", show=False),
        Binding("1", "focus_pane('leaderboard')", "Board", id="focus_board", show=False),
        Binding("2", "focus_pane('code')", "Code", id="focus_code", show=False),
        Binding("3", "focus_pane('diagnostics')", "Diagnostics", id="focus_diagnostics", show=False),
        Binding("4", "focus_pane('knowledge')", "Knowledge", id="focus_knowledge", show=False),
    ]

    def __init__(self, model: BoardModel) -> None:
        super().__init__()
        self.model = model
        self._selection_timer = None
        self._sigs: dict[str, object] = {}

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Input(placeholder="filter: words matching id, rN, origin, strategy, status, pinned, vetoed "
                                "(Enter applies, Esc clears)", id="filter")
        with Horizontal(id="top"):
            yield Leaderboard(self.model, id="leaderboard")
            yield ProgressChart(id="progress")
        with Horizontal(id="bottom"):
            yield CodeView(id="code")
            with TabbedContent(id="tabs", initial="tab-diagnostics"):
                with TabPane("Diagnostics", id="tab-diagnostics"):
                    yield DiagnosticsPane(id="diagnostics")
                with TabPane("Knowledge slice", id="tab-knowledge"):
                    yield KnowledgePane(id="knowledge")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#leaderboard").border_title = "leaderboard (times on sim are estimates)"
        self.query_one("#filter", Input).display = False
        self.query_one(Leaderboard).focus()
        self.refresh_board(set())

    # ---- state -> widgets -----------------------------------------------------------------

    @property
    def board(self) -> Leaderboard:
        return self.query_one(Leaderboard)

    def set_model(self, model: BoardModel) -> None:
        self.model = model
        self.board.model = model
        self.board.rebuild()
        self.query_one(CodeView).show(None, None)
        self.query_one(DiagnosticsPane).show([])
        self.query_one(KnowledgePane).show(None)
        self.refresh_board(set())

    def selected_row(self) -> Row | None:
        cid = self.board.selected_id
        return self.model.rows.get(cid) if cid else None

    def refresh_board(self, changed: set[str]) -> None:
        app = self.app
        board = self.board
        first = board.row_count == 0
        board.sync(changed)
        if first and board.row_count:
            board.move_cursor(row=0, animate=False)
        m = self.model
        title = "leaderboard (times on sim are estimates)" + m.best_score_text()
        if title != self._sigs.get("board_title"):
            self._sigs["board_title"] = title
            board.border_title = title
        rounds = getattr(app.request, "rounds", 0) or int(m.settings.get("rounds", 0))
        budget_usd = app.settings.budget.max_usd or 0.0
        # each pane is redrawn only when what it shows changed: a burst of events costs one
        # leaderboard update, not a repaint of every widget
        status_sig = (m.session, m.task, m.chip, m.backend, m.agent, m.current_round, rounds, m.phase,
                      m.prompt_tokens + m.completion_tokens, round(m.cost_usd, 2), budget_usd,
                      app.auto_continue, app.draft.describe())
        if status_sig != self._sigs.get("status"):
            self._sigs["status"] = status_sig
            self.query_one(StatusBar).show(m, rounds, budget_usd, app.auto_continue,
                                           app.draft.describe())
        progress = m.progress()
        timing = next((r.timing for r in m.rows.values() if r.time_us), "estimate") if progress else "estimate"
        if (progress, timing) != self._sigs.get("progress"):
            self._sigs["progress"] = (progress, timing)
            self.query_one(ProgressChart).show(progress, timing)
        self.query_one(KnowledgePane).show(m.latest_slice)
        subtitle = self._board_subtitle()
        if board.border_subtitle != subtitle:
            board.border_subtitle = subtitle
        sel = board.selected_id
        if sel and (sel in changed or first):
            self.show_selected(keep_focus_line=True)

    def _board_subtitle(self) -> str:
        m, b = self.model, self.board
        n = len(m.rows)
        shown = b.row_count
        f = f" · filter \"{b.filter_text}\" ({shown}/{n})" if b.filter_text else f" · {n} candidate{'s' if n != 1 else ''}"
        best = m.best()
        best_s = f" · best {best.id}" if best else ""
        return f"sorted by {b.sort_by}{f}{best_s}"

    def show_selected(self, keep_focus_line: bool = False) -> None:
        row = self.selected_row()
        self.query_one(CodeView).show(row, self.model.parent_of(row) if row else None, keep_focus_line)
        diags = row.diagnostics if row else []
        pane = self.query_one(DiagnosticsPane)
        if diags is not pane.diagnostics:
            pane.show(self._with_cards(diags))
        n = len(diags)
        self.query_one(TabbedContent).get_tab("tab-diagnostics").label = f"Diagnostics ({n})" if n else "Diagnostics"

    @staticmethod
    def _with_cards(diags: list[dict]) -> list[dict]:
        """Diagnostics that came without cards get them (`knowledge.attach_cards`, on copies)."""
        if not diags or all("cards" in d and "hint" in d for d in diags):
            return diags
        from knowledge import attach_cards

        return attach_cards([dict(d) for d in diags])

    def refresh_code(self) -> None:
        self.query_one(CodeView).render_code()

    @on(Leaderboard.SelectionChanged)
    def _selection(self, _: Leaderboard.SelectionChanged) -> None:
        # highlighting a kernel costs tens of ms: wait until the cursor rests (keys stay instant)
        if self._selection_timer is not None:
            self._selection_timer.stop()
        self._selection_timer = self.set_timer(0.04, self._selection_settled)

    def _selection_settled(self) -> None:
        self._selection_timer = None
        self.show_selected()

    @on(DiagnosticsPane.JumpToLine)
    def _jump(self, message: DiagnosticsPane.JumpToLine) -> None:
        self.query_one(CodeView).jump_to(message.line)

    @on(KnowledgePane.CardChosen)
    def _card(self, message: KnowledgePane.CardChosen) -> None:
        self.open_card(message.card_id)

    # ---- actions --------------------------------------------------------------------------

    def _need_row(self) -> Row | None:
        row = self.selected_row()
        if row is None:
            self.notify("no candidate selected", severity="warning", timeout=2)
        return row

    def action_pin(self) -> None:
        row = self._need_row()
        if row is None:
            return
        if row.vetoed:
            self.notify(f"{row.id} is vetoed; it cannot be pinned", severity="warning", timeout=3)
            return
        # the row's marker and the status bar's "next decision" line show it: no toast
        self.app.draft.toggle_pin(row.id, row.pinned)
        self.app.draft_changed(row.id)

    def action_veto(self) -> None:
        row = self._need_row()
        if row is None:
            return
        if row.vetoed:
            self.notify(f"{row.id} is already vetoed", timeout=2)
            return
        self.app.draft.toggle_veto(row.id)
        self.app.draft_changed(row.id)

    @work(group="dialog", exit_on_error=False)
    async def action_edit(self) -> None:
        from tui.screens.editor import EditorScreen

        row = self._need_row()
        if row is None:
            return
        if not row.code:
            self.notify(f"{row.id} has no code to edit", severity="warning")
            return
        edit = await self.app.push_screen_wait(EditorScreen(row, self.app.cursor_blink))
        if edit is not None:
            self.app.draft.edits.append(edit)
            self.notify(f"edit of {row.id} queued: it is evaluated as a human candidate when the round ends",
                        timeout=3)
            self.app.draft_changed()

    @work(group="dialog", exit_on_error=False)
    async def action_steer(self) -> None:
        from tui.screens.dialogs import SteerScreen

        text = await self.app.push_screen_wait(SteerScreen(self.app.draft.steer, self.app.cursor_blink))
        if text is not None:
            self.app.draft.steer = text.strip()
            self.notify("steering set for the next round" if text.strip() else "steering cleared", timeout=2)
            self.app.draft_changed()

    def action_next_round(self) -> None:
        app = self.app
        if app.pending is not None:
            app.resolve_decision("continue")
        elif app.engine_status in ("finished", "stopped", "cancelled", "failed"):
            self.notify("the session has ended: ctrl+n starts a new one", timeout=3)
        else:
            self.notify("the round is still running: your decision is kept for its end", timeout=2)

    def action_toggle_auto(self) -> None:
        self.app.set_auto_continue(not self.app.auto_continue)

    def action_stop(self) -> None:
        app = self.app
        if app.pending is not None:
            app.resolve_decision("stop")
            self.notify("stopping the session", timeout=2)
        else:
            app.draft.stop = not app.draft.stop
            self.notify("the session stops when this round ends" if app.draft.stop else "stop withdrawn",
                        timeout=3)
            app.draft_changed()

    def action_toggle_diff(self) -> None:
        on_ = self.query_one(CodeView).toggle_diff()
        self.notify("diff against the parent" if on_ else "source", timeout=1)

    def action_cycle_sort(self) -> None:
        self.board.action_cycle_sort()
        self.board.border_subtitle = self._board_subtitle()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.value = self.board.filter_text
        box.cursor_blink = self.app.cursor_blink
        box.focus()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.board.set_filter(event.value)
        if not event.value.strip():
            event.input.display = False
        self.board.focus()
        self.board.border_subtitle = self._board_subtitle()
        self.show_selected()

    def key_escape(self) -> None:
        box = self.query_one("#filter", Input)
        if box.has_focus:
            box.value = ""
            box.display = False
            self.board.set_filter("")
            self.board.focus()
            self.board.border_subtitle = self._board_subtitle()

    def action_focus_pane(self, pane: str) -> None:
        if pane in ("diagnostics", "knowledge"):
            self.query_one(TabbedContent).active = f"tab-{pane}"
        self.query_one(f"#{pane}").focus()

    def action_jump_to_line(self) -> None:
        d = self.query_one(DiagnosticsPane).current
        if d and d.get("line"):
            self.query_one(CodeView).jump_to(int(d["line"]))
        else:
            self.notify("no diagnostic with a line selected", timeout=2)

    def action_open_card(self) -> None:
        card = None
        if self.query_one(TabbedContent).active == "tab-knowledge":
            card = self.query_one(KnowledgePane).highlighted_card
        if card is None:
            d = self.query_one(DiagnosticsPane).current
            if d and d.get("cards"):
                card = d["cards"][0]
        if card is None:
            self.notify("highlight a card in the knowledge slice or a diagnostic first", timeout=2)
            return
        self.open_card(card)

    def open_card(self, card_id: str) -> None:
        from tui.screens.dialogs import CardScreen

        self.app.push_screen(CardScreen(card_id))

    def action_raw_output(self) -> None:
        from tui.screens.dialogs import TextScreen

        row = self._need_row()
        if row is None:
            return
        parts = []
        for d in row.diagnostics:
            if d.get("raw"):
                parts.append(f"--- {d.get('id')} (line {d.get('line') or '?'}) ---\n{d['raw']}")
        parts.append("--- diagnostics (JSON) ---\n" + json.dumps(row.diagnostics, indent=2))
        parts.append("--- cases (JSON) ---\n" + json.dumps(row.cases, indent=2))
        self.app.push_screen(TextScreen(f"raw output · {row.id} · {row.status}", "\n\n".join(parts)))
