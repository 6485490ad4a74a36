"""`CannpilotApp`: the engineer's side of a tuning session.

The engine runs in a thread worker with its own asyncio loop (`_engine_thread`); it reaches the
app only through messages: `UISink` queues the domain events and wakes the app with `EngineEvents`, `TUIPolicy`
posts a `DecisionRequested` carrying a Future and waits. The app folds events into `BoardModel`
(one place), refreshes the panes at most every 50 ms (only the rows that changed), and resolves
decisions from the review screen, or at once when auto-continue is on.

Settings are the one model of the CLI (`copilot.config.Settings`); the app changes and saves its
`tui` section and the theme.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message

from themes import DEFAULT_THEME, THEME_NAMES, THEMES
from tui.bridge import DecisionRequested, EngineEvents, EngineStopped, TUIPolicy, UISink
from tui.commands import CannpilotCommands
from tui.decision import DecisionDraft
from tui.engine_host import SessionRequest
from tui.model import BoardModel, SliceInfo

if TYPE_CHECKING:
    from copilot.config import Settings

FLUSH_S = 0.1
log = logging.getLogger(__name__)


class TaskSlot:
    """The task of one engine run, handed from the engine thread to the workers that need it
    (`get` blocks until the engine is built, or failed to be: then None)."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self.task: Any = None

    def put(self, task: Any) -> None:
        self.task = task
        self._ready.set()

    def get(self) -> Any:
        self._ready.wait()
        return self.task

    @property
    def filled(self) -> bool:
        return self._ready.is_set()


class SessionReady(Message):
    """The engine of run `generation` is built (its task loaded)."""

    def __init__(self, generation: int, task: Any, stored: Any = None) -> None:
        super().__init__()
        self.generation = generation
        self.task = task
        self.stored = stored


class SlicePreview(Message):
    def __init__(self, generation: int, info: SliceInfo) -> None:
        super().__init__()
        self.generation = generation
        self.info = info


class CannpilotApp(App):
    TITLE = "Cannpilot"
    COMMANDS = App.COMMANDS | {CannpilotCommands}
    CSS_PATH = "app.tcss"

    BINDINGS = [
        Binding("f1,question_mark", "help", "Help", id="help"),
        Binding("t", "cycle_theme", "Theme", id="theme"),
        Binding("ctrl+n", "new_session", "New session", id="new_session", show=False),
        Binding("ctrl+o", "resume_session", "Resume", id="resume_session", show=False),
        Binding("f2", "settings", "Settings", id="settings"),
        Binding("q", "quit", "Quit", id="quit"),
    ]

    def __init__(self, request: SessionRequest | None = None, *, start: bool = True,
                 store: Any = "default", settings: Settings | None = None,
                 settings_path: Path | None = None,
                 agent_factory: Callable | None = None, evaluator_factory: Callable | None = None,
                 cursor_blink: bool = True, lesson: int | str | None = None, chip: str | None = None) -> None:
        """`store`: "default" (the settings' store file), a path, a store object, or None.
        `settings`: loaded by the caller (flags applied), else from `settings_path`."""
        super().__init__()
        from tui.settings import session_request

        if settings is None:
            from copilot.config import load_settings

            settings = load_settings(settings_path)
        self.settings_path = settings_path
        self.settings = settings
        self.request = request or session_request(settings)
        self.autostart = start
        self._store_spec = store
        self._store = None
        self._store_lock = threading.Lock()       # the engine thread and the UI both open it
        self._task_slot = TaskSlot()
        self.agent_factory = agent_factory
        self.evaluator_factory = evaluator_factory
        self.cursor_blink = cursor_blink
        self.lesson = lesson                      # `cannpilot learn N`: open the Learn screen alone
        self.lesson_chip = chip
        self.lesson_grader: Callable | None = None   # tests inject a fake grader here
        self.model = BoardModel()
        self.draft = DecisionDraft()
        self.model.queued = self.draft.queued
        self.auto_continue = settings.tui.auto_continue
        self.generation = 0
        self.policy: TUIPolicy | None = None
        self.pending: DecisionRequested | None = None
        self.decisions_sent: list = []            # every RoundDecision handed to the engine
        self.engine_status = "idle"               # idle | starting | running | finished | stopped | failed
        self.engine_error = ""
        self.task_obj: Any = None
        self._engine_loop: asyncio.AbstractEventLoop | None = None
        self._engine_task: asyncio.Task | None = None
        self._dirty: set[str] = set()
        self._flush_timer = None
        self._review_open = False
        self.painted_at: float | None = None      # first paint, for the benchmark

    # ---- start-up -------------------------------------------------------------------------

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        name = self.settings.theme if self.settings.theme in THEME_NAMES else DEFAULT_THEME
        self.theme = name
        if self.settings.tui.keymap:
            self.set_keymap(self.settings.tui.keymap)
        if self.lesson is not None:
            self.open_lesson(self.lesson, exit_on_leave=True)
            return
        from tui.screens.main import MainScreen

        self.push_screen(MainScreen(self.model))
        # first paint before anything heavy: the engine (and torch) start after the refresh
        self.call_after_refresh(self._after_first_paint)

    def _after_first_paint(self) -> None:
        import time

        self.painted_at = time.perf_counter()
        if self.autostart:
            self.start_session(self.request)
        if self.settings.tui.keymap:
            self._check_keymap()

    def _check_keymap(self) -> None:
        """An unknown binding id in `tui.keymap` is named (Textual would ignore it silently)."""
        from tui.screens.help import binding_rows
        from tui.settings import unknown_keymap_ids

        unknown = unknown_keymap_ids(self.settings, {row[3] for row in binding_rows(self) if row[3]})
        if unknown:
            self.notify(f"{self.settings.source_of('tui.keymap')}: `tui.keymap`: unknown binding id "
                        f"{', '.join(unknown)} (F1 lists the ids)", severity="warning", timeout=10)

    @property
    def main(self):
        from tui.screens.main import MainScreen

        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    # ---- the engine -----------------------------------------------------------------------

    def store(self):
        """The session store, opened on first use (from the engine thread or the UI)."""
        with self._store_lock:
            if self._store is None and self._store_spec is not None:
                from sessions import SessionStore

                spec = self._store_spec
                self._store = SessionStore(self.settings.store_path()) if spec == "default" else (
                    SessionStore(spec) if isinstance(spec, (str, Path)) else spec)
            return self._store

    def open_lesson(self, ref: int | str, exit_on_leave: bool = False, grader: Callable | None = None) -> None:
        """Teaching mode: the Learn screen on lesson `ref` (progress in the session store)."""
        from copilot.learn import get_lesson
        from tui.screens.learn import LearnScreen

        self.push_screen(LearnScreen(get_lesson(ref), self.store(), grader=grader or self.lesson_grader,
                                     chip=self.lesson_chip,
                                     cursor_blink=self.cursor_blink, exit_on_leave=exit_on_leave))

    def start_session(self, request: SessionRequest) -> None:
        """Start a new engine run (a new or resumed session); a running one is cancelled first."""
        self.cancel_engine()
        self.generation += 1
        self.request = request
        self.model = BoardModel()
        self.draft = DecisionDraft()
        self.model.queued = self.draft.queued
        self.pending = None
        self.engine_status = "starting"
        self.engine_error = ""
        self.task_obj = None
        self._task_slot = TaskSlot()
        if self.main is not None:
            self.main.set_model(self.model)
        self.policy = TUIPolicy(self.post_message, self.generation)
        self._engine_thread(self.generation, request, self.policy, self._task_slot)

    @work(thread=True, group="engine", exit_on_error=False)
    def _engine_thread(self, generation: int, request: SessionRequest, policy: TUIPolicy,
                       slot: TaskSlot) -> None:
        from copilot.evolution.session import run_to_end
        from tui.engine_host import build_engine

        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        status, detail = "finished", ""
        engine = None
        try:
            store = self.store() if generation == self.generation else None
            sinks = ([store] if store is not None else []) + [UISink(self.post_message, generation)]
            engine, stored = build_engine(request, sinks, policy, store=store,
                                          agent_factory=self.agent_factory,
                                          evaluator_factory=self.evaluator_factory)
            slot.put(engine.task)
            self.post_message(SessionReady(generation, engine.task, stored))
            task = loop.create_task(run_to_end(engine))     # closes the agent's connections in this loop
            self._engine_loop, self._engine_task = loop, task
            result = loop.run_until_complete(task)
            status, detail = result.status, result.reason
        except asyncio.CancelledError:
            status, detail = "cancelled", "the session run was cancelled"
        except Exception as exc:  # shown to the engineer; the app stays up
            status, detail = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            if not slot.filled:            # no task: waiting workers give up
                slot.put(None)
            self._engine_loop = self._engine_task = None
            loop.close()
            close = getattr(getattr(engine, "evaluator", None), "close", None)
            if close is not None:          # evaluation worker processes end with the run
                close()
        self.post_message(EngineStopped(generation, status, detail))

    def cancel_engine(self) -> None:
        loop, task = self._engine_loop, self._engine_task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:           # the loop closed meanwhile: the run is over anyway
                pass

    # ---- events from the engine -----------------------------------------------------------

    @on(EngineEvents)
    def _on_engine_events(self, message: EngineEvents) -> None:
        events = message.sink.drain()
        if message.generation != self.generation or not events:
            return
        if self.engine_status == "starting":
            self.engine_status = "running"
        for e in events:
            self._dirty |= self.model.apply(e)
            if e.kind == "round_started":
                self._preview_slice(message.generation, self._task_slot, e.round,
                                    "init" if e.round == 1 else "mutation")
            elif e.kind == "decision_made":
                self._dirty |= set(self.model.rows)     # queued markers are gone
        self._schedule_flush()

    @on(SessionReady)
    def _on_session_ready(self, message: SessionReady) -> None:
        if message.generation != self.generation:
            return
        self.task_obj = message.task
        if message.stored is not None:
            self._show_stored(message.stored)

    @on(EngineStopped)
    def _on_engine_stopped(self, message: EngineStopped) -> None:
        if message.generation != self.generation:
            return
        self.engine_status = message.status
        self.engine_error = message.detail if message.status == "failed" else ""
        if message.status == "failed":
            self.model.phase = "failed"
            self.notify(f"the session stopped with an error: {message.detail}", severity="error",
                        timeout=10)
        self._schedule_flush()

    def _show_stored(self, state) -> None:
        """A resumed session: its stored candidates go on the board at once."""
        from copilot.events import CandidateEvaluated, CandidateProposed, SessionStarted

        m = self.model
        m.apply(SessionStarted(state.name, task=state.task, chip=state.chip, backend=state.backend,
                               agent=state.agent, settings=dict(state.settings or {})))
        for c in state.candidates:
            m.apply(CandidateProposed(state.name, candidate=c))
            m.apply(CandidateEvaluated(state.name, candidate_id=c.id, status=c.status, time_us=c.time_us,
                                       timing=c.timing, roofline_fraction=c.roofline_fraction,
                                       cases=state.cases.get(c.id, [])))
        m.current_round = state.last_completed_round
        self._dirty |= set(m.rows)
        self._schedule_flush()

    @work(thread=True, group="slice", exclusive=True, exit_on_error=False)
    def _preview_slice(self, generation: int, slot: TaskSlot, round_: int, phase: str) -> None:
        """What an LLM agent's prompt holds in this phase (the offline agent sends none)."""
        task = slot.get()                 # set by the engine thread once the task is loaded
        if task is None or generation != self.generation:
            return
        from knowledge import assemble

        s = assemble(task, phase, self.model.chip or self.request.chip)
        info = SliceInfo(round_, phase, [c.to_json() for c in s.cards], s.total_tokens, "preview")
        self.post_message(SlicePreview(generation, info))

    @on(SlicePreview)
    def _on_slice_preview(self, message: SlicePreview) -> None:
        if message.generation != self.generation:
            return
        if any(s.source == "agent" and s.round == message.info.round for s in self.model.slices):
            return
        self.model.add_slice(message.info)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_S, self._flush_board)

    def _flush_board(self) -> None:
        self._flush_timer = None
        dirty, self._dirty = self._dirty, set()
        main = self.main
        if main is None or not main.is_attached or self._exit:
            return
        try:
            main.refresh_board(dirty)
        except NoMatches:        # the screen is being torn down
            pass

    def flush_now(self) -> None:
        """Apply pending updates at once (tests and the benchmark)."""
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        self._flush_board()

    # ---- decisions ------------------------------------------------------------------------

    @on(DecisionRequested)
    def _on_decision_requested(self, message: DecisionRequested) -> None:
        if message.generation != self.generation:
            message.resolve(self.draft.decision("stop"))
            return
        self.pending = message
        self.model.phase = "awaiting decision"
        self._schedule_flush()
        if self.draft.stop:
            self.resolve_decision("stop")
        elif self.auto_continue:
            self.resolve_decision("continue")
        else:
            self.open_review()

    def open_review(self) -> None:
        if self.pending is not None and not self._review_open:
            self._review_worker(self.pending)

    @work(group="review", exit_on_error=False)
    async def _review_worker(self, request: DecisionRequested) -> None:
        from tui.screens.review import ReviewScreen

        self._review_open = True
        try:
            choice = await self.push_screen_wait(ReviewScreen(self.model, request, self.draft))
        finally:
            self._review_open = False
        if request is self.pending and choice in ("continue", "stop"):
            self.resolve_decision(choice)

    def resolve_decision(self, action: str) -> bool:
        """Hand the draft to the waiting engine as its `RoundDecision`; False if none waits."""
        request = self.pending
        if request is None or request.done:
            return False
        decision = self.draft.decision(action)
        request.resolve(decision)
        self.decisions_sent.append(decision)
        self.pending = None
        self.draft = DecisionDraft()
        self.model.queued = self.draft.queued
        self.model.phase = "stopping" if action == "stop" else "next round"
        self._dirty |= set(self.model.rows)
        self._schedule_flush()
        if self._review_open and self.screen.__class__.__name__ == "ReviewScreen":
            self.screen.dismiss("resolved")
        return True

    def set_auto_continue(self, on: bool) -> None:
        self.auto_continue = on
        self.settings.tui.auto_continue = on
        self.save_settings()
        self.notify(f"auto-continue {'on' if on else 'off'}", timeout=2)
        if on and self.pending is not None:
            self.resolve_decision("stop" if self.draft.stop else "continue")
        self._schedule_flush()

    def draft_changed(self, *ids: str) -> None:
        """The engineer changed the queued decision: show it at once (one row and the status)."""
        self._dirty |= set(ids)
        self.flush_now()

    # ---- app-level actions ----------------------------------------------------------------

    def save_settings(self) -> None:
        """Write the settings file (atomically); a failure is shown, the app goes on."""
        try:
            self.settings.save(self.settings_path)
        except OSError as exc:
            self.notify(f"could not save settings to {self.settings_path or self.settings.path}: "
                        f"{exc.strerror or exc}", severity="warning")

    def watch_theme(self, theme: str) -> None:
        if theme in THEME_NAMES and self.settings.theme != theme:
            self.settings.theme = theme
            self.save_settings()
        if self.main is not None:
            self.main.refresh_code()

    def action_cycle_theme(self) -> None:
        names = list(THEME_NAMES)
        i = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(i + 1) % len(names)]
        self.notify(f"theme: {self.theme}", timeout=2)

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    @work(group="dialog", exit_on_error=False)
    async def action_new_session(self) -> None:
        from tui.screens.sessions import NewSessionScreen

        req = await self.push_screen_wait(NewSessionScreen(self.settings))
        if req is not None:
            self._abandon_pending()
            self.start_session(req)
            self.notify(f"new session on {req.task}", timeout=3)

    @work(group="dialog", exit_on_error=False)
    async def action_resume_session(self) -> None:
        from tui.screens.sessions import ResumeScreen

        if self.store() is None:
            self.notify("no session store in this run", severity="warning")
            return
        name = await self.push_screen_wait(ResumeScreen(self.store()))
        if name:
            self._abandon_pending()
            self.start_session(SessionRequest(resume=name, rounds=self.settings.rounds,
                                              variants=self.settings.variants))
            self.notify(f"resuming {name}", timeout=3)

    @work(group="dialog", exit_on_error=False)
    async def action_settings(self) -> None:
        from tui.screens.settings import SettingsScreen

        new = await self.push_screen_wait(SettingsScreen(self.settings))
        if new is not None:
            self.settings = new
            self.auto_continue = new.tui.auto_continue
            self.save_settings()
            self.notify("settings saved; chip, backend, agent, rounds and variants apply to the next "
                        "new session", timeout=4)
            self._schedule_flush()

    def _abandon_pending(self) -> None:
        if self.pending is not None:
            self.pending.resolve(DecisionDraft().decision("stop"))
            self.pending = None

    async def action_quit(self) -> None:
        self._abandon_pending()
        self.cancel_engine()
        self.exit()

    def on_unmount(self) -> None:
        self._abandon_pending()
        self.cancel_engine()
        if self._store is not None and self._store is not self._store_spec:   # opened here
            try:
                self._store.close()
            except Exception as exc:       # quitting goes on; the store's WAL is replayed next open
                log.warning("closing the session store failed: %s: %s", type(exc).__name__, exc)
