"""TUI figures: time to first paint, key-to-screen latency while a round runs, and leaderboard
update time with 2,000 candidates. Prints a table and writes JSON (bench/results/tui_bench.json).

    .venv/bin/python bench/tui_bench.py [--quick] [-o FILE]

- first paint: a fresh interpreter builds the CLI parser (the `tui` command only, as `cannpilot`
  with no arguments does), creates the app as `cannpilot tui` does and runs it headless; measured
  from the interpreter's first line to the first refresh of the main screen (median of N runs),
  plus the whole process wall time.
- key latency: Pilot presses (cursor down, pin) while the engine runs a round whose fake evaluator
  burns CPU in the engine thread (GIL contention, worse than the real evaluator whose g++ runs in
  another process); time from sending the key until the app has processed it and refreshed.
- key latency, real round (`--only keys-real`): the demo's round 1 (offline agent, sim evaluator,
  g++) with the evaluations in the app's process, then in worker processes (the TUI's default);
  a `d` press every 0.5 s while the round runs, time until the code pane has toggled.
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
args = build_parser(("tui",)).parse_args(["tui"])   # what `cannpilot` with no arguments builds
from tui.app import CannpilotApp
from tui.engine_host import SessionRequest
from copilot.config import load_settings
settings = load_settings()
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
    from tests.tui.conftest import TASK
    from tests.tui.fakes import FakeAgent, FakeEvaluator
    from tui.app import CannpilotApp
    from tui.engine_host import SessionRequest
    from copilot.config import Settings
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
                           store=None, settings=Settings(), settings_path=Path(tmp) / "settings.yaml",
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
                    if app.pending is not None:
                        return None          # the round ended: the review screen took the key
                    await asyncio.sleep(0.0005)
                    if time.perf_counter() - t > 30:
                        raise RuntimeError(f"key {key} had no effect in 30 s: screen {app.screen}, focused {app.focused}, "
                                           f"engine {app.engine_status}, rows {len(app.model.rows)}, evaluated {len(ev.evaluated)}")
                return time.perf_counter() - t

            for i in range(presses):
                if app.pending is not None or app.engine_status != "running":
                    break                    # the round ended: keys now go to the review screen
                before = board.selected_id
                down = await key_until("down" if i % 2 == 0 else "up", lambda: board.selected_id != before)
                pins = list(app.draft.pins)
                pin = await key_until("p", lambda: app.draft.pins != pins) if down is not None else None
                if down is None or pin is None:
                    break
                lat_down.append(down)
                moved += 1
                lat_pin.append(pin)
                await asyncio.sleep(0.05)
            evaluated = len(ev.evaluated)
            still_running = app.pending is None and app.engine_status == "running"
            if app.pending is not None:              # let the review screen finish mounting
                while app.screen.__class__.__name__ != "ReviewScreen":
                    await pilot.pause(0.05)
                await pilot.pause(0.2)
            app.cancel_engine()

    def q(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    return {"presses": len(lat_down), "engine_thread_busy_ms_per_candidate": busy_s * 1000, "cursor_moved": moved, "round_running_throughout": running_at_start and still_running,
            "evaluations_during_test": evaluated,
            "cursor_key_ms_median": 1000 * statistics.median(lat_down), "cursor_key_ms_p95": 1000 * q(lat_down, 0.95),
            "pin_key_ms_median": 1000 * statistics.median(lat_pin), "pin_key_ms_p95": 1000 * q(lat_pin, 0.95)}


async def key_latency_real(presses: int, in_process: bool) -> dict:
    """Key latency while the real demo round runs (offline agent, sim evaluator, g++), with the
    evaluations in the app's process (threads) or in worker processes (the TUI's default)."""
    from tui.app import CannpilotApp
    from tui.engine_host import SessionRequest
    from copilot.config import Settings
    from tui.widgets.code_view import CodeView

    with tempfile.TemporaryDirectory() as tmp:
        env = {"CANNPILOT_CACHE_DIR": str(Path(tmp) / "cache"),    # no build cache shared between variants
               "CANNPILOT_TUI_EVAL_INPROCESS": "1" if in_process else "0"}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            app = CannpilotApp(SessionRequest(task="rms_norm", name="bench-real", rounds=1, variants=4),
                               store=None, settings=Settings(), settings_path=Path(tmp) / "settings.yaml",
                               cursor_blink=False)
            lat = []
            t_start = time.perf_counter()
            async with app.run_test(size=(160, 45)) as pilot:
                code = app.screen.query_one(CodeView)
                # from the first proposal of round 1 (evaluations running) until the round ends
                while not any(r.round == 1 for r in app.model.rows.values()):
                    await pilot.pause(0.05)
                    if app.engine_status in ("failed", "finished"):
                        raise SystemExit(f"the demo round did not run: {app.engine_error}")
                evaluating_from = time.perf_counter()
                while len(lat) < presses and app.pending is None and app.engine_status == "running":
                    before = code.show_diff
                    t = time.perf_counter()
                    app.simulate_key("d")
                    while code.show_diff == before:
                        await asyncio.sleep(0.0005)
                    lat.append(time.perf_counter() - t)
                    await asyncio.sleep(0.5)         # spread over the whole round
                window = time.perf_counter() - evaluating_from
                while app.pending is None and app.engine_status == "running":
                    await pilot.pause(0.1)
                round_s = time.perf_counter() - t_start
                passed = sum(r.status == "passed" for r in app.model.rows.values())
                app.cancel_engine()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def q(xs, p):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(p * len(xs)))]

    return {"evaluations": "in the app's process" if in_process else "in worker processes",
            "presses": len(lat), "window_s": window, "baseline_and_round1_s": round_s, "passed": passed,
            "key_ms_median": 1000 * statistics.median(lat), "key_ms_p95": 1000 * q(lat, 0.95),
            "key_ms_max": 1000 * max(lat), "load_avg_1m": os.getloadavg()[0]}


async def leaderboard(n: int) -> dict:
    from copilot.events import Candidate, CandidateEvaluated, CandidateProposed
    from tui.app import CannpilotApp
    from copilot.config import Settings
    from tui.widgets.leaderboard import Leaderboard

    with tempfile.TemporaryDirectory() as tmp:
        app = CannpilotApp(start=False, store=None, settings=Settings(), settings_path=Path(tmp) / "settings.yaml",
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
    ap.add_argument("--only", choices=("paint", "keys", "keys-real", "board"),
                    help="one figure only (no JSON written)")
    ap.add_argument("-o", "--output", default=str(ROOT / "bench" / "results" / "tui_bench.json"))
    a = ap.parse_args()
    os.environ.setdefault("CANNPILOT_CONFIG_DIR", tempfile.mkdtemp(prefix="cannpilot-bench-"))
    if a.only:
        fn = {"paint": lambda: first_paint(3), "keys": lambda: asyncio.run(key_latency(10, float(os.environ.get("BENCH_BUSY_S", "0.02")))),
              "keys-real": lambda: [asyncio.run(key_latency_real(400, in_process=v)) for v in (True, False)],
              "board": lambda: asyncio.run(leaderboard(2000))}[a.only]
        print(json.dumps(fn(), indent=2))
        return 0
    res = {"first_paint": first_paint(3 if a.quick else 7),
           "key_latency": asyncio.run(key_latency(10 if a.quick else 30)),
           "key_latency_real_round": [asyncio.run(key_latency_real(20 if a.quick else 400, in_process=v))
                                      for v in (True, False)],
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
        *[(f"key → screen, real demo round, evaluations {k['evaluations']}, median / p95 / max",
           f"{k['key_ms_median']:.1f} / {k['key_ms_p95']:.1f} / {k['key_ms_max']:.1f} ms")
          for k in res["key_latency_real_round"]],
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
