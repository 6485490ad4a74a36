"""The TUI's evaluator in worker processes: same verdicts as in-process, workers end on close."""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from concurrent.futures.process import BrokenProcessPool

import pytest

from copilot.events import Candidate
from copilot.evolution.evaluate import SimEvaluator
from copilot.tasks import load_task
from tests.tui.conftest import TASK
from tests.tui.fakes import kernel
from tui.evaluation_process import ProcessEvaluator

pytestmark = pytest.mark.slow

REFUSED = 'extern "C" __global__ __aicore__ void k(GM_ADDR x) { system("ls"); }\n'


async def wait_async(condition, timeout: float = 60.0) -> bool:
    """Readiness wait that lets the event loop run (not a timing assertion)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return condition()


def wait_until(condition, timeout: float = 60.0) -> bool:
    """Readiness wait (not a timing assertion)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


async def test_a_worker_gives_the_in_process_verdict_and_close_ends_the_workers():
    task = load_task(TASK)
    refused = Candidate("r1-c1", REFUSED, 1, "human")
    pe = ProcessEvaluator(str(task.path), chip="910B2", workers=1)
    try:
        got = await pe.evaluate(task, refused)
        assert got == SimEvaluator(chip="910B2").evaluate_sync(task, refused)
        assert got.status == "build_failed" and got.diagnostics[0]["id"] == "LINT.FORBIDDEN"
        workers = multiprocessing.active_children()
        assert workers
        # a real build is running in the worker when the app closes the evaluator
        running = asyncio.ensure_future(pe.evaluate(task, Candidate("r1-c2", kernel(2048, 2, "x"), 1, "offline")))
        assert await wait_async(lambda: pe.running() == 1), "the worker never took the build up"
    finally:
        pe.close()
    assert wait_until(lambda: not any(p.is_alive() for p in workers)), "the workers outlived close()"
    done, _ = await asyncio.wait({running}, timeout=60)
    assert done, "an evaluation in flight was left hanging by close()"
    assert isinstance(running.exception(), BrokenProcessPool)       # abandoned, and said so


def test_the_winner_is_confirmed_in_a_worker_as_in_process():
    """The engine re-runs the winner in full through `confirm` before reporting it; the TUI's
    evaluator has it too, with the in-process verdict (relu: performance cases to re-run)."""
    task = load_task("relu")
    refused = Candidate("r1-c1", REFUSED, 1, "human")
    pe = ProcessEvaluator(str(task.path), chip="910B2", workers=1)
    try:
        got = pe.confirm(task, refused)
    finally:
        pe.close()
    assert got == SimEvaluator(chip="910B2").confirm(task, refused)
    assert got.status == "build_failed"
