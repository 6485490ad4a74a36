"""TUI figures: time to first paint, key-to-screen latency while a round runs, and leaderboard
update time with 2,000 candidates. Prints a table and writes JSON (bench/results/tui_bench.json).

    .venv/bin/python bench/tui_bench.py [--quick] [-o FILE]

- first paint: a fresh interpreter builds the CLI parser (as `cannpilot` does), creates the app as
  `cannpilot tui` does and runs it headless; measured from the interpreter's first line to the
  first refresh of the main screen (median of N runs), plus the whole process wall time.
- key latency: Pilot presses (cursor down, pin) while the engine runs a round whose fake evaluator
  burns CPU in the engine thread (GIL contention, worse than the real evaluator whose g++ runs in
  another process); time from sending the key until the app has processed it and refreshed.
- leaderboard: 2,000 candidates folded into the model and synced to the DataTable in flushes of
  50; then single-event flushes (a status change, a new best that re-ranks every row) against a
  full rebuild of the table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import time
t0 = time.perf_counter()
import sys
sys.argv = ["cannpilot", "tui"]
from copilot.cli import build_parser
args = build_parser().parse_args(["tui"])
from tui.app import CannpilotApp
from tui.engine_host import SessionRequest
from tui.settings import UISettings
settings = UISettings.load()
t_imports = time.perf_counter() - t0
app = CannpilotApp(SessionRequest(), start=False, store=None, settings=settings)
async def pilot(p):
    while app.painted_at is None:
        await p.pause(0.001)
    app.exit((app.painted_at - t0, time.process_time()))
paint, cpu = app.run(headless=True, auto_pilot=pilot, size=(160, 45))
print(f"{t_imports:.6f} {paint:.6f} {cpu:.6f}")
"""


def first_paint(runs: int) -> dict:
    paints, walls, imports, cpus = [], [], [], []
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["CANNPILOT_CONFIG_DIR"] = tmp
        for _ in range(runs):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                                 cwd=ROOT, timeout=120)
            walls.append(time.perf_counter() - t)
            if out.returncode != 0:
                raise SystemExit(out.stderr[-2000:])
            imp, paint, cpu = out.stdout.strip().splitlines()[-1].split()
            imports.append(float(imp))
            cpus.append(float(cpu))
            paints.append(float(paint))
    return {"runs": runs, "imports_s_median": statistics.median(imports),
            "first_paint_s_median": statistics.median(paints),
            "first_paint_cpu_s_median": statistics.median(cpus), "first_paint_s_max": max(paints),
            "process_wall_s_median": statistics.median(walls)}


async def key_latency(presses: int, busy_s: float = 0.02) -> dict:
    from copilot.evolution.engine import Evaluation
    from tests.tui.conftest import TASK
    from tests.tui.fakes import FakeAgent, FakeEvaluator
    from tui.app import CannpilotApp
    from tui.engine_host import SessionRequest
    from tui.settings import UISettings
    from tui.widgets.leaderboard import Leaderboard

    class BusyEvaluator(FakeEvaluator):
        """Holds the GIL ~20 ms per candidate, then answers like the fake."""

        async def evaluate(self, task, c):
            end = time.perf_counter() + busy_s
            x = 0
            while time.perf_counter() < end:
                x += 1
            await asyncio.sleep(0.03)
            return await super().evaluate(task, c)

    ev = BusyEvaluator()
    with tempfile.TemporaryDirectory() as tmp:
        app = CannpilotApp(SessionRequest(task=TASK, name="bench", rounds=2, variants=600, stagnation_rounds=9),
                           store=None, settings=UISettings(), settings_path=Path(tmp) / "tui.json",
                           agent_factory=lambda cfg: FakeAgent(), evaluator_factory=lambda cfg: ev,
                           cursor_blink=False)
        lat_down, lat_pin = [], []
        moved = 0
        async with app.run_test(size=(160, 45)) as pilot:
            while len(app.model.rows) < 50:
                await pilot.pause(0.05)
            board = app.screen.query_one(Leaderboard)
            board.focus()
            running_at_start = app.pending is None and app.engine_status == "running"
            async def key_until(key: str, changed) -> float:
                """Seconds from the key entering the app until its effect is in the app's state
                (the screen shows it on the next compositor frame, <= 1/60 s later)."""
                t = time.perf_counter()
                app.simulate_key(key)
                while not changed():
                    await asyncio.sleep(0.0005)
                    if time.perf_counter() - t > 30:
                        raise RuntimeError(f"key {key} had no effect in 30 s: screen {app.screen}, focused {app.focused}, "
                                           f"engine {app.engine_status}, rows {len(app.model.rows)}, evaluated {len(ev.evaluated)}")
                return time.perf_counter() - t

            for i in range(presses):
                before = board.selected_id
                lat_down.append(await key_until("down" if i % 2 == 0 else "up",
                                                lambda: board.selected_id != before))
                moved += 1
                pins = list(app.draft.pins)
                lat_pin.append(await key_until("p", lambda: app.draft.pins != pins))
                await asyncio.sleep(0.05)
            evaluated = len(ev.evaluated)
            still_running = app.pending is None and app.engine_status == "running"
            app.cancel_engine()

    def q(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    return {"presses": presses, "engine_thread_busy_ms_per_candidate": busy_s * 1000, "cursor_moved": moved, "round_running_throughout": running_at_start and still_running,
            "evaluations_during_test": evaluated,
            "cursor_key_ms_median": 1000 * statistics.median(lat_down), "cursor_key_ms_p95": 1000 * q(lat_down, 0.95),
            "pin_key_ms_median": 1000 * statistics.median(lat_pin), "pin_key_ms_p95": 1000 * q(lat_pin, 0.95)}


async def leaderboard(n: int) -> dict:
    from copilot.events import Candidate, CandidateEvaluated, CandidateProposed
    from tui.app import CannpilotApp
    from tui.settings import UISettings
    from tui.widgets.leaderboard import Leaderboard

    with tempfile.TemporaryDirectory() as tmp:
        app = CannpilotApp(start=False, store=None, settings=UISettings(), settings_path=Path(tmp) / "t.json",
                           cursor_blink=False)
        async with app.run_test(size=(160, 45)) as pilot:
            main = app.main
            board = main.query_one(Leaderboard)
            m = app.model
            flushes = []
            t_all = time.perf_counter()
            for start in range(0, n, 50):
                changed = set()
                for i in range(start, min(n, start + 50)):
                    r, k = 1 + i // 100, 1 + i % 100
                    cid = f"r{r}-c{k}"
                    c = Candidate(cid, f"// kernel {i}\nint k{i};", r, "offline", strategy=f"L3.s{k % 7}")
                    changed |= m.apply(CandidateProposed("b", candidate=c))
                    t_us = 50.0 + ((i * 7919) % 1000) / 10.0
                    status = "passed" if i % 9 else "incorrect"
                    changed |= m.apply(CandidateEvaluated("b", candidate_id=cid, status=status,
                                                          time_us=t_us if status == "passed" else None,
                                                          roofline_fraction=0.3))
                t = time.perf_counter()
                main.refresh_board(changed)
                await pilot.pause()
                flushes.append(time.perf_counter() - t)
            fill_s = time.perf_counter() - t_all

            def one(event) -> float:
                t = time.perf_counter()
                main.refresh_board(m.apply(event))
                return time.perf_counter() - t

            # a status change that does not move any rank (a failure)
            c = Candidate("rx-c1", "int z;", 99, "offline")
            m.apply(CandidateProposed("b", candidate=c))
            main.refresh_board({"rx-c1"})
            t_fail = min(one(CandidateEvaluated("b", candidate_id="rx-c1", status="crashed")) for _ in range(3))
            # a new best: every rank shifts by one
            worst = []
            for j in range(3):
                cid = f"rb-c{j}"
                m.apply(CandidateProposed("b", candidate=Candidate(cid, f"int best{j};", 99, "offline")))
                main.refresh_board({cid})
                worst.append(one(CandidateEvaluated("b", candidate_id=cid, status="passed", time_us=10.0 - j)))
            await pilot.pause()
            t = time.perf_counter()
            board.rebuild()
            await pilot.pause()
            rebuild = time.perf_counter() - t
            rows = board.row_count
    return {"candidates": rows, "fill_in_flushes_of_50_s": fill_s,
            "flush_of_50_ms_median": 1000 * statistics.median(flushes), "flush_of_50_ms_max": 1000 * max(flushes),
            "one_status_change_ms": 1000 * t_fail, "new_best_reranks_all_ms_median": 1000 * statistics.median(worst),
            "full_rebuild_ms": 1000 * rebuild}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    ap.add_argument("--only", choices=("paint", "keys", "board"), help="one figure only (no JSON written)")
    ap.add_argument("-o", "--output", default=str(ROOT / "bench" / "results" / "tui_bench.json"))
    a = ap.parse_args()
    os.environ.setdefault("CANNPILOT_CONFIG_DIR", tempfile.mkdtemp(prefix="cannpilot-bench-"))
    if a.only:
        fn = {"paint": lambda: first_paint(3), "keys": lambda: asyncio.run(key_latency(10, float(os.environ.get("BENCH_BUSY_S", "0.02")))),
              "board": lambda: asyncio.run(leaderboard(2000))}[a.only]
        print(json.dumps(fn(), indent=2))
        return 0
    res = {"first_paint": first_paint(3 if a.quick else 7),
           "key_latency": asyncio.run(key_latency(10 if a.quick else 30)),
           "leaderboard": asyncio.run(leaderboard(2000)),
           "machine": {"cpus": os.cpu_count(), "load_avg_1m": os.getloadavg()[0]}}
    from rich.console import Console
    from rich.table import Table

    t = Table(title="Cannpilot TUI figures")
    t.add_column("figure")
    t.add_column("value", justify="right")
    fp, kl, lb = res["first_paint"], res["key_latency"], res["leaderboard"]
    rows = [
        ("first paint (interpreter start → main screen), median", f"{fp['first_paint_s_median'] * 1000:.0f} ms"),
        ("first paint, worst of runs", f"{fp['first_paint_s_max'] * 1000:.0f} ms"),
        ("first paint, CPU time of the process (load-independent)", f"{fp['first_paint_cpu_s_median'] * 1000:.0f} ms"),
        ("  of which imports (wall)", f"{fp['imports_s_median'] * 1000:.0f} ms"),
        ("key → screen, cursor down during a round, median / p95",
         f"{kl['cursor_key_ms_median']:.1f} / {kl['cursor_key_ms_p95']:.1f} ms"),
        ("key → screen, pin during a round, median / p95",
         f"{kl['pin_key_ms_median']:.1f} / {kl['pin_key_ms_p95']:.1f} ms"),
        ("round kept running during the key test", str(kl["round_running_throughout"])),
        ("leaderboard: 2,000 candidates in flushes of 50 (total)", f"{lb['fill_in_flushes_of_50_s']:.2f} s"),
        ("leaderboard: one flush of 50 events, median / max",
         f"{lb['flush_of_50_ms_median']:.1f} / {lb['flush_of_50_ms_max']:.1f} ms"),
        ("leaderboard: one status change at 2,000 rows", f"{lb['one_status_change_ms']:.1f} ms"),
        ("leaderboard: new best, every rank shifts, at 2,000 rows", f"{lb['new_best_reranks_all_ms_median']:.1f} ms"),
        ("leaderboard: full rebuild at 2,000 rows (filter change only)", f"{lb['full_rebuild_ms']:.1f} ms"),
        ("machine: cpus / 1-min load", f"{res['machine']['cpus']} / {res['machine']['load_avg_1m']:.1f}"),
    ]
    for r in rows:
        t.add_row(*r)
    Console().print(t)
    out = Path(a.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
