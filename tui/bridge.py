"""Between the engine (its own thread and asyncio loop) and the app (Textual's loop).

- `UISink` is an `EventSink`: events are queued and one `EngineEvents` message wakes the app to
  drain them (`post_message` is thread-safe); mutable payloads are copied first so the UI never reads an object
  the engine thread is still changing.
- `TUIPolicy` is a `DecisionPolicy`: `decide` posts a `DecisionRequested` carrying an asyncio
  Future of the engine's loop and awaits it; the review screen (or auto-continue) resolves it with
  `DecisionRequested.resolve`, from the UI thread.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import dataclasses
import threading
from typing import Any, Callable

from textual.message import Message

from copilot.events import Candidate, CandidateProposed, Event


class EngineEvents(Message):
    """Domain events from the engine of session run `generation` are waiting in `sink`.

    One message wakes the app for any number of events (drained in one go): a burst of hundreds of
    events never queues up in front of the engineer's key presses."""

    def __init__(self, generation: int, sink: "UISink") -> None:
        super().__init__()
        self.generation = generation
        self.sink = sink


class DecisionRequested(Message):
    """The engine finished a round and waits for the engineer's `RoundDecision`."""

    def __init__(self, generation: int, round: int, rounds_left: int, leaderboard: list[dict[str, Any]],
                 future: asyncio.Future, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self.generation = generation
        self.round = round
        self.rounds_left = rounds_left
        self.leaderboard = leaderboard
        self.future = future
        self.loop = loop

    def resolve(self, decision) -> None:
        """Hand the decision to the waiting engine (safe from any thread, idempotent)."""

        def _set() -> None:
            if not self.future.done():
                self.future.set_result(decision)

        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(_set)

    @property
    def done(self) -> bool:
        return self.future.done()


class EngineStopped(Message):
    """The engine of run `generation` ended: `status` finished | stopped | cancelled | failed."""

    def __init__(self, generation: int, status: str, detail: str = "") -> None:
        super().__init__()
        self.generation = generation
        self.status = status
        self.detail = detail


class UISink:
    def __init__(self, post: Callable[[Message], Any], generation: int) -> None:
        self.post = post
        self.generation = generation
        self._events: collections.deque[Event] = collections.deque()
        self._lock = threading.Lock()
        self._woken = False

    def emit(self, event: Event) -> None:
        e = copy.copy(event)
        if isinstance(e, CandidateProposed):
            c: Candidate = e.candidate
            e.candidate = dataclasses.replace(c, parent_ids=list(c.parent_ids), knobs=dict(c.knobs))
        with self._lock:
            self._events.append(e)
            wake = not self._woken
            self._woken = True
        if wake:
            self.post(EngineEvents(self.generation, self))

    def drain(self) -> list[Event]:
        """Every event emitted so far, in order (called on the UI loop)."""
        with self._lock:
            out = list(self._events)
            self._events.clear()
            self._woken = False
        return out


class TUIPolicy:
    """Asks the app for every decision; keeps the decisions it returned (tests read them)."""

    def __init__(self, post: Callable[[Message], Any], generation: int) -> None:
        self.post = post
        self.generation = generation
        self.decisions: list = []

    async def decide(self, context):
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        board = [dict(r) for r in context.leaderboard]
        self.post(DecisionRequested(self.generation, context.round, context.rounds_left, board,
                                    future, loop))
        decision = await future
        self.decisions.append(decision)
        return decision
