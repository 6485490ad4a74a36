"""`cannpilot` on the fake agent and evaluator of tests/tui (no g++, quick rounds): what drive.sh
launches with CANNPILOT_TUI_FAKE=1. The product has no fake mode; this test driver hands the fakes
to the `tui` command's `run`. CANNPILOT_TUI_FAKE_DELAY: seconds per fake proposal/evaluation."""

from __future__ import annotations

import functools
import os
import sys

from copilot import cli
from copilot.commands import tui
from tests.tui.fakes import agent_factory, evaluator_factory


def main(argv: list[str]) -> int:
    delay = float(os.environ.get("CANNPILOT_TUI_FAKE_DELAY", "0.3"))
    # `register` reads `tui.run` when the parser is built: the command then runs with the fakes
    tui.run = functools.partial(tui.run, agent_factory=agent_factory(delay),
                                evaluator_factory=evaluator_factory(delay))
    return cli.main(argv or ["tui"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
