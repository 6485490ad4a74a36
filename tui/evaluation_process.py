"""Evaluations in child processes, so the evaluator's Python work never holds the app's GIL.

The sim evaluator runs g++ and the emulator as subprocesses, but its own Python (source scans,
chip-profile parsing, inputs, the fp64 oracle, the cost model) runs in whatever process calls it.
In the TUI that is the app's process: every long Python stretch there delays the next key press.
`ProcessEvaluator` keeps the `Evaluator` interface (with `confirm`, the winner's full re-run) and
hands each candidate to a small pool of spawned workers, each holding its own `SimEvaluator` and
task (loaded once per worker).

Closing sets a shared event; each worker has a thread waiting on it that ends the worker at once,
so quitting mid-round never waits for an evaluation to finish.
"""

from __future__ import annotations

import asyncio
import atexit
import multiprocessing
import os
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

# ---- in the worker ------------------------------------------------------------------------

_task: Any = None
_evaluator: Any = None


def _start_worker(task_ref: str, chip: str, seed: int, stop) -> None:
    global _task, _evaluator
    # The worker inherits the terminal the app draws on: nothing it prints may land there.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    threading.Thread(target=_exit_when_set, args=(stop,), daemon=True).start()
    from copilot.evolution.evaluate import SimEvaluator
    from copilot.tasks import load_task

    _task = load_task(task_ref)
    _evaluator = SimEvaluator(chip=chip, seed=seed)
    # A worker told to stop may also be leaving its loop (the pool's shutdown): the exit then
    # waits here until the stop thread has removed the spilled cases, instead of cutting it off.
    atexit.register(_close_evaluator)


def _exit_when_set(stop) -> None:
    stop.wait()
    _close_evaluator()              # os._exit skips finalizers: the spilled cases go first
    os._exit(0)


def _close_evaluator() -> None:
    if _evaluator is not None:
        _evaluator.close()


def _evaluate(candidate):
    return _evaluator.evaluate_sync(_task, candidate)


def _confirm(candidate):
    return _evaluator.confirm(_task, candidate)


# ---- in the app ---------------------------------------------------------------------------

class ProcessEvaluator:
    """`Evaluator` for the sim backend whose work runs in `workers` spawned processes."""

    def __init__(self, task_ref: str, chip: str = "910B2", seed: int = 0, workers: int = 2) -> None:
        _start_resource_tracker()
        ctx = multiprocessing.get_context("spawn")     # never fork a process that runs threads
        self._stop = ctx.Event()
        self._pool = ProcessPoolExecutor(max_workers=max(1, workers), mp_context=ctx,
                                         initializer=_start_worker,
                                         initargs=(str(task_ref), chip, seed, self._stop))
        self.closed = False
        self._futures: set[Future] = set()

    async def evaluate(self, task, candidate):
        future = self._pool.submit(_evaluate, candidate)
        self._futures.add(future)
        future.add_done_callback(self._futures.discard)
        return await asyncio.wrap_future(future)

    def confirm(self, task, candidate):
        """The winner re-run in full before it is reported (`SimEvaluator.confirm`), in a worker.
        Blocks the calling thread: the engine calls it off the event loop (`asyncio.to_thread`)."""
        future = self._pool.submit(_confirm, candidate)
        self._futures.add(future)
        future.add_done_callback(self._futures.discard)
        return future.result()

    def running(self) -> int:
        """Evaluations a worker has taken up (not those waiting for a free worker)."""
        return sum(1 for f in list(self._futures) if f.running())

    def close(self) -> None:
        """End the workers now; evaluations still running are abandoned."""
        if self.closed:
            return
        self.closed = True
        self._stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _start_resource_tracker() -> None:
    """multiprocessing starts a resource-tracker process that is handed `sys.stderr`'s file
    descriptor. While Textual runs, `sys.stderr` is its print capture, which has none (-1), and
    the start fails; so the tracker is started here with stderr on /dev/null (it only reports
    leaked semaphores there, which would otherwise be drawn over the screen)."""
    from multiprocessing import resource_tracker

    saved = sys.stderr
    try:
        fd = saved.fileno()
    except (AttributeError, ValueError, OSError):
        fd = -1
    null = None
    try:
        if fd < 0 or os.isatty(fd):
            null = sys.stderr = open(os.devnull, "w")
        resource_tracker.ensure_running()
    finally:
        sys.stderr = saved
        if null is not None:
            null.close()
