"""`cannpilot tui`: the terminal UI (also what `cannpilot` with no arguments opens).

Without --task or --session it opens the demo: built-in `rms_norm`, offline agent, sim backend,
910B2, round 1 starting at once. Chip, rounds, variants, agent and store come from the settings
(`copilot.config`), flags first. Textual and the engine are imported inside `run`, and the engine
(with torch) only after the first screen is painted.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable

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
    p.add_argument("--store", help="session store file (default: settings `store`, $CANNPILOT_STORE, or the "
                                   "user data dir)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, agent_factory: Callable | None = None,
        evaluator_factory: Callable | None = None) -> int:
    """Open the TUI. The factories replace the engine's agent and evaluator (test drivers only:
    `tests/tui_tmux/fake_app.py`)."""
    from copilot.errors import BadInput

    if args.task and args.session:
        raise BadInput("give --task (a new session) or --session (resume one), not both")
    from copilot.config import load_settings
    from tui.app import CannpilotApp
    from tui.settings import check_theme, session_request

    # one precedence for every value: flags > CANNPILOT_* > settings.yaml > defaults
    settings = load_settings().with_flags({
        "--chip": ("chip", args.chip), "--rounds": ("rounds", args.rounds),
        "--variants": ("variants", args.variants), "--agent": ("model", args.agent),
        "--store": ("store", args.store)})
    check_theme(settings)
    if not sys.stdout.isatty() and not os.environ.get("CANNPILOT_TUI_FORCE"):
        raise BadInput("the TUI needs a terminal; for a headless session use `cannpilot run --task T`")
    req = session_request(settings, task=args.task or DEMO_TASK, name=args.name, resume=args.session)
    app = CannpilotApp(req, store="default", settings=settings, agent_factory=agent_factory,
                       evaluator_factory=evaluator_factory)
    app.run()
    return 1 if app.engine_status == "failed" else 0
