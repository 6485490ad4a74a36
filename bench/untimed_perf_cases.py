"""unique with a performance case the task cannot time here (case 6: its output length is
data-dependent, so its shape needs the golden, ~6.2 GiB against a 2 GiB oracle budget): a 0-round
session seeded with a kernel, through `cannpilot run`'s own `execute` (stdout: the `run --json`
document) into a session store for `cannpilot sessions show` / `export`. ESTIMATES (sim backend).

    CANNPILOT_ORACLE_BUDGET_GB=2 .venv/bin/python bench/untimed_perf_cases.py STORE SESSION [--all-cases]
        [--kernel bench/results/llm/s11-unique/gen1.cpp] [--task ../shared/cannbench/tasks/level3/unique]

By default the task keeps its public cases up to 4.2M elements and case 6, so the performance tier
is 2, 6, 16 and the run stays under ~1 GB here; `--all-cases` keeps every case (tier 4, 6, 10:
case 4's golden alone needs ~1.75 GiB, more with the emulator's copies; the re-validation judges
every case, 15's float sort past the emulator's wall-clock limit).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMALL = {"1", "2", "6", "7", "8", "9", "11", "12", "13", "14", "16", "17", "18", "19", "20"}


def main() -> int:
    from copilot.commands.run import execute
    from copilot.evolution import Proposal
    from copilot.evolution.session import SessionConfig, new_engine
    from copilot.tasks import load_task
    from sessions import SessionStore

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("session")
    ap.add_argument("--all-cases", action="store_true")
    ap.add_argument("--kernel", default=str(REPO / "bench" / "results" / "llm" / "s11-unique" / "gen1.cpp"))
    ap.add_argument("--task", default=str(REPO.parent / "shared" / "cannbench" / "tasks" / "level3" / "unique"))
    a = ap.parse_args()
    task = load_task(a.task)
    if not a.all_cases:
        task = dataclasses.replace(task, cases=[c for c in task.cases if c.id in SMALL])
    print(f"performance cases: {', '.join(c.id for c in task.perf_cases())}", file=sys.stderr)
    code = Path(a.kernel).read_text(encoding="utf-8")

    class Seeded:
        """The kernel as the baseline; no rounds."""

        name = "seeded"

        async def baseline(self, task, chip):
            return Proposal(code=code, origin="llm", agency_mode="tool_agent")

        async def propose(self, req):
            return Proposal(None, failure="a 0-round session")

    store = SessionStore(Path(a.store))
    cfg = SessionConfig(task=task, rounds=0, name=a.session)
    t0 = time.perf_counter()
    rc = execute(new_engine(cfg, [store], agent=Seeded()), cfg, store, None, True)
    print(f"exit {rc}, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
