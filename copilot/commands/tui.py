"""`cannpilot tui`: the terminal UI (also what `cannpilot` with no arguments opens).

Without --task or --session it opens the demo: built-in `rms_norm`, offline agent, sim backend,
910B2, round 1 starting at once. Textual and the engine are imported inside `run`, and the engine
(with torch) only after the first screen is painted.
"""

from __future__ import annotations

import argparse
import os
import sys

DEMO_TASK = "rms_norm"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tui", help="the terminal UI (default when no command is given)",
                       description="Open the Cannpilot TUI on a task, a stored session, or the demo.")
    p.add_argument("--task", help="built-in task name, task directory or KernelBench .py (default: the demo, "
                                  f"{DEMO_TASK})")
    p.add_argument("--session", help="resume this stored session (see `cannpilot sessions ls`)")
    p.add_argument("--chip", help="chip profile (default: settings, else 910B2)")
    p.add_argument("--rounds", type=int, help="rounds (default: settings, else 3)")
    p.add_argument("--variants", type=int, help="variants per round (default: settings, else 4)")
    p.add_argument("--agent", help="offline or an LLM model name (default: settings, else offline)")
    p.add_argument("--name", help="name of a new session (default: <task>-<time>)")
    p.add_argument("--store", help="session store file (default: $CANNPILOT_STORE or the user data dir)")
    # Development only: the fake agent/evaluator of tests/tui (no g++), also via CANNPILOT_TUI_FAKE=1.
    p.add_argument("--fake", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(handler=run)


def _fakes(delay: float):
    """The test fakes, loaded from the source tree (they are not part of the installed package)."""
    import importlib.util
    from pathlib import Path

    from copilot.errors import BadInput

    path = Path(__file__).resolve().parents[2] / "tests" / "tui" / "fakes.py"
    if not path.exists():
        raise BadInput(f"--fake needs a source checkout ({path} is missing)")
    spec = importlib.util.spec_from_file_location("cannpilot_tui_fakes", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.agent_factory(delay), mod.evaluator_factory(delay)


def run(args: argparse.Namespace) -> int:
    from copilot.errors import BadInput

    if (args.rounds is not None and args.rounds < 1) or (args.variants is not None and args.variants < 1):
        raise BadInput("--rounds and --variants must be at least 1")
    if args.task and args.session:
        raise BadInput("give --task (a new session) or --session (resume one), not both")
    if not sys.stdout.isatty() and not os.environ.get("CANNPILOT_TUI_FORCE"):
        raise BadInput("the TUI needs a terminal; for a headless session use `cannpilot run --task T`")
    from tui.app import CannpilotApp
    from tui.engine_host import SessionRequest
    from tui.settings import UISettings

    settings = UISettings.load()
    req = SessionRequest(task=args.task or DEMO_TASK, chip=args.chip or settings.chip,
                         backend=settings.backend, agent=args.agent or settings.agent,
                         rounds=args.rounds or settings.rounds, variants=args.variants or settings.variants,
                         name=args.name, resume=args.session)
    agent_factory = evaluator_factory = None
    if args.fake or os.environ.get("CANNPILOT_TUI_FAKE") == "1":
        delay = float(os.environ.get("CANNPILOT_TUI_FAKE_DELAY", "0.3"))
        agent_factory, evaluator_factory = _fakes(delay)
    app = CannpilotApp(req, store=args.store or "default", settings=settings,
                       agent_factory=agent_factory, evaluator_factory=evaluator_factory)
    app.run()
    return 1 if app.engine_status == "failed" else 0
