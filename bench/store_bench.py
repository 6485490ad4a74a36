"""Session store figures: write cost per event, size per 1,000 candidates, time to load a session.

    .venv/bin/python bench/store_bench.py [--candidates 1000] [--rounds 20] [--events 3000] [--out FILE]

Events are those of a synthetic but realistic run (sessions/synthetic.py: ~6 KB kernels, 10
evaluated cases per candidate, an LLM call and a knowledge slice per candidate, decisions between
rounds). Write cost is measured for the three durability settings (full: fsync every commit;
normal: none; auto, the default: fsync the commits holding human or paid-for work) in alternating
blocks, so the ratios hold on a noisy machine. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sessions import SessionStore  # noqa: E402
from sessions.synthetic import emit_session  # noqa: E402


def _events(rounds: int, variants: int, code_bytes: int, seed: int) -> list:
    out: list = []
    emit_session(out.append, "bench", rounds=rounds, variants=variants, code_bytes=code_bytes, seed=seed)
    return out


def write_cost(tmp: Path, n_events: int, block: int = 100) -> dict:
    """Median and p95 ms per emit for each durability setting, interleaved in blocks."""
    events = _events(rounds=max(1, n_events // 100), variants=20, code_bytes=6000, seed=1)[:n_events]
    stores = {mode: SessionStore(tmp / f"write_{mode}.sqlite", durability=mode)
              for mode in ("full", "normal", "auto")}
    samples: dict[str, dict[str, list[float]]] = {m: {} for m in stores}
    for start in range(0, len(events), block):
        for mode, store in stores.items():
            for e in events[start:start + block]:
                t0 = time.perf_counter()
                store.emit(e)
                samples[mode].setdefault(e.kind, []).append(time.perf_counter() - t0)
    result = {}
    for mode, by_kind in samples.items():
        every = [x for xs in by_kind.values() for x in xs]
        every.sort()
        result[mode] = {
            "events": len(every),
            "median_ms": statistics.median(every) * 1e3,
            "mean_ms": statistics.fmean(every) * 1e3,
            "p95_ms": every[int(0.95 * (len(every) - 1))] * 1e3,
            "by_kind_median_ms": {k: statistics.median(v) * 1e3 for k, v in sorted(by_kind.items())},
        }
        stores[mode].close()
    result["full_over_normal"] = result["full"]["median_ms"] / result["normal"]["median_ms"]
    return result


def size_and_load(tmp: Path, candidates: int, rounds: int, repeats: int) -> dict:
    """Store size per 1,000 candidates, and the time to open the store and load the session."""
    path = tmp / "size.sqlite"
    variants = max(1, candidates // rounds)
    events = _events(rounds=rounds, variants=variants, code_bytes=6000, seed=2)
    t0 = time.perf_counter()
    with SessionStore(path, durability="normal") as store:
        for e in events:
            store.emit(e)
    write_s = time.perf_counter() - t0
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    n_cand = conn.execute("SELECT count(*) FROM candidates").fetchone()[0]
    n_eval = conn.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    code_bytes = conn.execute("SELECT sum(length(code)) FROM candidates").fetchone()[0]
    try:
        per_table = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
                                      "ORDER BY 2 DESC").fetchall())
    except sqlite3.OperationalError:
        per_table = {}
    conn.close()
    size = path.stat().st_size

    opens, loads, records = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        store = SessionStore(path)
        t1 = time.perf_counter()
        state = store.load_session("bench")
        t2 = time.perf_counter()
        store.session_record("bench")
        t3 = time.perf_counter()
        store.close()
        opens.append(t1 - t0)
        loads.append(t2 - t1)
        records.append(t3 - t2)
    return {
        "rounds": rounds, "candidates": n_cand, "evaluation_rows": n_eval, "events": len(events),
        "mean_code_bytes": code_bytes / n_cand,
        "file_bytes": size, "mb_per_1000_candidates": size / n_cand * 1000 / 1e6,
        "bytes_by_table": per_table,
        "write_all_s_normal": write_s,
        "open_ms_median": statistics.median(opens) * 1e3,
        "load_session_ms_median": statistics.median(loads) * 1e3,
        "resume_ms_median": statistics.median(o + lo for o, lo in zip(opens, loads)) * 1e3,
        "session_record_ms_median": statistics.median(records) * 1e3,
        "population": len(state.candidates),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--events", type=int, default=3000, help="events per mode for the write cost")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=None, help="where the stores go (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "store_bench.json")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        tmp = Path(d)
        writes = write_cost(tmp, args.events)
        size = size_and_load(tmp, args.candidates, args.rounds, args.repeats)
    result = {"machine": {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
                          "cpus": os.cpu_count(), "platform": platform.platform()},
              "write": writes, "size_and_load": size}

    rows = []
    for mode in ("auto", "full", "normal"):
        w = writes[mode]
        rows.append((f"write per event, median / mean / p95 ({mode})",
                     f"{w['median_ms']:.2f} / {w['mean_ms']:.2f} / {w['p95_ms']:.2f} ms"))
    rows += [
        ("full / normal (median)", f"{writes['full_over_normal']:.1f}x"),
        ("candidate_proposed (6 KB), median auto",
         f"{writes['auto']['by_kind_median_ms'].get('candidate_proposed', 0):.2f} ms"),
        ("candidate_evaluated (10 cases), median auto",
         f"{writes['auto']['by_kind_median_ms'].get('candidate_evaluated', 0):.2f} ms"),
        ("store size per 1,000 candidates", f"{size['mb_per_1000_candidates']:.1f} MB"),
        (f"open store ({size['file_bytes'] / 1e6:.1f} MB, quick_check)", f"{size['open_ms_median']:.0f} ms"),
        (f"load_session, {size['rounds']} rounds / {size['candidates']} candidates",
         f"{size['load_session_ms_median']:.0f} ms"),
        ("resume read (open + load_session)", f"{size['resume_ms_median']:.0f} ms"),
        ("session_record (export / show)", f"{size['session_record_ms_median']:.0f} ms"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  value")
    print(f"{'-' * width}  -------")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nJSON: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
