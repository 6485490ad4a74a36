"""Evaluation on a Ray cluster: every candidate's evaluation is one Ray task on a worker.

`RayEvaluator` has the `Evaluator` interface of the engine (`evaluate`, `confirm`), so nothing
else changes: the engine awaits evaluations concurrently (up to `capacity`, the cluster's CPUs)
and records each as it completes, the store sees the same events. On the worker the evaluation
is the sim backend's own cascade (`SimEvaluator`, with its sandbox), one evaluator per worker
process so references and quick tiers are built once. A worker that dies mid-evaluation (the
process or its node lost) is retried once by Ray on any live worker; a second loss becomes a
failed evaluation with `EVAL.WORKER_LOST`, not a failed session.

Workers load the task by reference (a built-in name, or the task directory's path), so every
host needs Cannpilot installed and the task directory at the same path (a shared or identical
checkout). The driver passes no environment to the workers: API keys stay on the driver.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from copilot.errors import BadInput
from copilot.evolution.engine import Candidate, Evaluation
from copilot.tasks.model import Task

WORKER_LOST = "EVAL.WORKER_LOST"

# worker-process caches: (chip, perf, seed) -> SimEvaluator; task reference -> Task
_EVALUATORS: dict[tuple[str, str, int], Any] = {}
_TASKS: dict[str, Task] = {}


def task_ref(task: Task) -> str:
    """How a worker finds the task: its built-in name or the directory / file path."""
    return task.name if task.builtin else str(task.path.resolve())


def _worker_evaluator(chip: str, perf: str, seed: int):
    from copilot.evolution.evaluate import SimEvaluator

    key = (chip, perf, seed)
    if key not in _EVALUATORS:
        _EVALUATORS[key] = SimEvaluator(chip=chip, perf=perf, seed=seed)
    return _EVALUATORS[key]


def _worker_task(ref: str) -> Task:
    from copilot.tasks import load_task

    if ref not in _TASKS:
        _TASKS[ref] = load_task(ref)
    return _TASKS[ref]


def evaluate_on_worker(ref: str, candidate: Candidate, chip: str, perf: str, seed: int,
                       full: bool = False) -> Evaluation:
    """The body of one Ray task: the sim cascade (or the winner's full re-run) on this worker."""
    ev = _worker_evaluator(chip, perf, seed)
    task = _worker_task(ref)
    return ev.confirm(task, candidate) if full else ev.evaluate_sync(task, candidate)


def parse_address(spec: str) -> str:
    """`ray://HOST:PORT` (Ray client) or `HOST:PORT` (join the cluster's GCS) as Ray takes it."""
    spec = spec.strip()
    if spec in ("", "local"):
        raise BadInput("evaluators: give ray://HOST:PORT or HOST:PORT of a running Ray head")
    body = spec[len("ray://"):] if spec.startswith("ray://") else spec
    host, _, port = body.rpartition(":")
    if not host or not port.isdigit():
        raise BadInput(f"evaluators: '{spec}' is not ray://HOST:PORT or HOST:PORT")
    return spec


class RayEvaluator:
    """`Evaluator` whose evaluations run as Ray tasks on the workers of a running cluster."""

    def __init__(self, address: str, chip: str = "910B2", seed: int = 0, perf: str = "perf",
                 worker_fn=evaluate_on_worker) -> None:
        try:
            import ray
        except ImportError:
            raise BadInput("evaluators: ray is not installed here (pip install 'cannpilot[ray]')") from None
        self._ray = ray
        self.address = parse_address(address)
        self.chip, self.seed, self.perf = chip, seed, perf
        try:
            ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False,
                     include_dashboard=False, logging_level="ERROR")
        except Exception as e:      # ConnectionError, a client handshake error, a timeout ...
            raise BadInput(f"evaluators: cannot reach the Ray cluster at {self.address}: {e}") from None
        # one retry on a lost worker (Ray reschedules it on any live worker); a kernel's own
        # failure is an Evaluation, never an exception, so exceptions are not retried
        self._task = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(worker_fn)

    def with_perf(self, perf: str) -> RayEvaluator:
        """This evaluator with another performance tier (case ids, the tool agent's time_case): the
        same cluster, chip and seed; the workers keep one evaluator per tier."""
        other = copy.copy(self)
        other.perf = perf
        return other

    @property
    def capacity(self) -> int:
        """Evaluations worth running at once: the cluster's CPUs."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    async def evaluate(self, task: Task, candidate: Candidate) -> Evaluation:
        ref = self._task.remote(task_ref(task), candidate, self.chip, self.perf, self.seed)
        try:
            return await ref
        except asyncio.CancelledError:
            self._ray.cancel(ref, force=True)
            raise
        except Exception as e:
            return self._lost(e)

    def confirm(self, task: Task, candidate: Candidate) -> Evaluation:
        ref = self._task.remote(task_ref(task), candidate, self.chip, self.perf, self.seed, True)
        try:
            return self._ray.get(ref)
        except Exception as e:
            return self._lost(e)

    def _lost(self, error: Exception) -> Evaluation:
        text = str(error).strip().splitlines()
        return Evaluation(status="crashed", build_ok=False, diagnostics=[{
            "id": WORKER_LOST, "severity": "error",
            "message": f"the evaluation was lost twice on the Ray cluster ({type(error).__name__}: "
                       f"{text[0][:200] if text else ''})"}])

    def close(self) -> None:
        self._ray.shutdown()
