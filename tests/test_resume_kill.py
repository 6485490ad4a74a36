"""Issue 9 acceptance: a real `cannpilot run` SIGKILLed at random moments, resumed every time.

After each kill the store passes `PRAGMA integrity_check`; `run --session S` continues the
session; in the end the session is finished and no candidate was evaluated twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import VALID_TASK

pytestmark = pytest.mark.slow


def _start(store: Path, cache: Path, task: Path) -> subprocess.Popen:
    env = dict(os.environ, CANNPILOT_STORE=str(store), CANNPILOT_CACHE=str(cache))
    return subprocess.Popen([sys.executable, "-m", "copilot.cli", "run", "--task", str(task), "--session", "killme",
                             "--rounds", "3", "--variants", "2", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)


def test_sigkill_at_random_moments_then_resume(tmp_path):
    store, cache = tmp_path / "store.sqlite", tmp_path / "cache"
    rng = random.Random(20261129)
    kills = 0
    doc = None
    for attempt in range(40):
        proc = _start(store, cache, VALID_TASK)
        if kills < 10:
            time.sleep(rng.uniform(1.0, 8.0))
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                kills += 1
                conn = sqlite3.connect(store)
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
                conn.close()
                continue
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err.decode()[-2000:]
        doc = json.loads(out)
        if doc["status"] == "finished" and kills >= 10:
            break
    assert kills == 10, "the session finished before it could be killed ten times"
    assert doc is not None and doc["status"] == "finished"
    rounds = [r["round"] for r in doc["rounds"]]
    assert rounds == list(range(1, len(rounds) + 1)) and len(rounds) >= 2   # 3, or fewer on stagnation
    assert "last round" in doc["reason"] or "stagnation" in doc["reason"]
    conn = sqlite3.connect(store)
    counts = conn.execute("SELECT c.id, c.eval_count, c.status FROM candidates c JOIN sessions s "
                          "ON s.id = c.session_id WHERE s.name = 'killme'").fetchall()
    conn.close()
    evaluated = [(cid, n) for cid, n, status in counts if status not in ("rejected_duplicate", "no_code")]
    assert evaluated and all(n == 1 for _, n in evaluated), counts
    ids = [cid for cid, _, _ in counts]
    assert len(ids) == len(set(ids))
    # The export of the finished session carries the report and a best kernel that passes `check`.
    env = dict(os.environ, CANNPILOT_STORE=str(store), CANNPILOT_CACHE=str(cache))
    out_dir = tmp_path / "export"
    exp = subprocess.run([sys.executable, "-m", "copilot.cli", "sessions", "export", "killme", "-o", str(out_dir)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert exp.returncode == 0, exp.stderr
    report = (out_dir / "report.md").read_text()
    assert "killme" in report and doc["best"]["id"] in report and "estimate" in report.lower()
    assert json.loads((out_dir / "session.json").read_text())["candidates"]
    chk = subprocess.run([sys.executable, "-m", "copilot.cli", "check", str(out_dir / "best.cpp"), "--task",
                          str(VALID_TASK), "--cases", "quick", "--json"], capture_output=True, text=True, env=env,
                         timeout=600)
    assert chk.returncode == 0, chk.stderr[-2000:]
    assert json.loads(chk.stdout)["correct"] is True
