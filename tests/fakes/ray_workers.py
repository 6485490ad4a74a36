"""Worker bodies for tests/test_ray_pool.py: a worker that dies on its first attempt (a lost node)
and one that always dies. Importable by the Ray workers the test starts (PYTHONPATH = repo)."""

from __future__ import annotations

import os
from pathlib import Path

from copilot.evolution.ray_pool import evaluate_on_worker


def _attempt(marker_dir: str) -> int:
    d = Path(marker_dir)
    n = len(list(d.glob("attempt-*"))) + 1
    (d / f"attempt-{n}-{os.getpid()}").write_text("")
    return n


def dies_once(ref, candidate, chip, perf, seed, full=False):
    if _attempt(candidate.strategy) == 1:       # the test passes its marker folder as the strategy
        os._exit(1)                       # the worker process is gone, as when its node is lost
    return evaluate_on_worker(ref, candidate, chip, perf, seed, full)


def always_dies(ref, candidate, chip, perf, seed, full=False):
    _attempt(candidate.strategy)
    os._exit(1)
