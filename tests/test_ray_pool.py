"""The evaluator pool on a Ray cluster: a local head started here on 127.0.0.1 with two worker
CPUs; a session run through it end to end, the same results as local evaluation, a lost worker's
candidate retried once, a second loss reported, a bad address one clear error."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (the [ray] extra)")

REPO = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).parent / "ray"
FIXTURE = REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh"
# small cases keep every evaluation (and the winner's full re-run) to seconds
CASES = ("cases:\n"
         "- {case_id: 1, input_shape: [[64, 256]], dtype: [float32], attrs: {scale: 0.5}, value_range: [-3, 3]}\n"
         "- {case_id: 2, input_shape: [[33, 100]], dtype: [float16], attrs: {scale: 2.0}, value_range: [-3, 3]}\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """A Ray head on 127.0.0.1 with 2 CPUs; its address. `ray start` runs in a process group of
    its own, which its daemons keep: the module ends by stopping that group (`ray stop` would
    stop every Ray on the machine, other engineers' too)."""
    if not RAY.exists():
        pytest.skip("the ray command is not installed beside this Python")
    tmp = tmp_path_factory.mktemp("ray")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("CANNPILOT_MODEL", None)
    start = [str(RAY), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
             "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={tmp}"]
    proc = subprocess.Popen(start, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=180)
        assert proc.returncode == 0, out
        yield f"127.0.0.1:{port}"
    finally:
        if ray.is_initialized():
            ray.shutdown()
        _stop_group(proc.pid)
        shutil.rmtree(tmp, ignore_errors=True)


def _stop_group(pgid: int) -> None:
    """SIGTERM to the head's process group, SIGKILL to what is left of it after 30 s."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.5)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    from copilot.tasks import load_task

    d = tmp_path_factory.mktemp("task") / "scaled_tanh"
    shutil.copytree(FIXTURE, d)
    (d / "cases.yaml").write_text(CASES)
    return load_task(d)


@pytest.fixture(scope="module")
def code(task):
    from copilot.lowering import lower

    return lower(task).source


def _candidate(code: str, strategy: str = ""):
    from copilot.events import Candidate

    return Candidate(id="r1-c1", code=code, round=1, origin="human", strategy=strategy)


def test_an_evaluation_on_the_cluster_equals_the_local_one(head, task, code, tmp_path):
    from copilot.evolution.evaluate import SimEvaluator
    from copilot.evolution.ray_pool import RayEvaluator

    remote = RayEvaluator(head, chip="910B2")
    assert remote.capacity == 2
    got = asyncio.run(remote.evaluate(task, _candidate(code)))
    here = SimEvaluator(chip="910B2", workdir=tmp_path).evaluate_sync(task, _candidate(code))
    assert got.status == here.status == "passed"
    assert got.time_us == pytest.approx(here.time_us)
    assert [c["id"] for c in got.cases] == [c["id"] for c in here.cases]


def test_a_lost_worker_is_retried_once_and_a_second_loss_is_reported(head, task, code, tmp_path):
    from copilot.evolution.ray_pool import WORKER_LOST, RayEvaluator
    from tests.fakes.ray_workers import always_dies, dies_once

    once = tmp_path / "once"
    once.mkdir()
    ev = asyncio.run(RayEvaluator(head, worker_fn=dies_once).evaluate(task, _candidate(code, str(once))))
    assert ev.status == "passed"
    attempts = sorted(p.name for p in once.iterdir())
    assert len(attempts) == 2 and attempts[0].split("-")[2] != attempts[1].split("-")[2]   # another process

    twice = tmp_path / "twice"
    twice.mkdir()
    ev = asyncio.run(RayEvaluator(head, worker_fn=always_dies).evaluate(task, _candidate(code, str(twice))))
    assert ev.status == "crashed" and [d["id"] for d in ev.diagnostics] == [WORKER_LOST]
    assert len(list(twice.iterdir())) == 2                      # tried, retried once, then given up


def test_a_session_runs_through_the_cluster_end_to_end(head, task, tmp_path):
    env = {**os.environ, "CANNPILOT_STORE": str(tmp_path / "s.sqlite"), "CANNPILOT_CONFIG_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "copilot", "run", "--task", str(task.path), "--rounds", "1",
                        "--variants", "2", "--evaluators", head, "--json"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=420)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["best"] and doc["best"]["time_us"] > 0


def test_a_bad_cluster_address_is_one_clear_error(tmp_path):
    env = {**os.environ, "CANNPILOT_STORE": str(tmp_path / "s.sqlite"), "CANNPILOT_CONFIG_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "copilot", "run", "--task", "relu", "--rounds", "1",
                        "--evaluators", "ray://nowhere"], cwd=REPO, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "ray://HOST:PORT" in r.stderr
