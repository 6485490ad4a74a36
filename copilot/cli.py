"""`cannpilot`: the command line. Each subcommand lives in `copilot/commands/<name>.py` with
`register(subparsers)` and `run(args) -> int`; heavy imports happen inside `run`.

Exit codes (contract): 0 success, 1 a negative verdict, 2 bad input, 3 unsupported.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from copilot import __version__
from copilot.errors import CannpilotError

# Subcommand modules in the order `--help` lists them. A module that is not there yet is skipped.
COMMANDS = ("tasks", "check", "lower", "run", "bench", "sessions", "knowledge", "chips", "emulator",
            "export", "validate_submission", "tui", "learn", "doctor")


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line (the CLI contract for bad input)."""

    def error(self, message: str) -> None:  # noqa: D401 - argparse API
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(names: tuple[str, ...] = COMMANDS) -> argparse.ArgumentParser:
    parser = _Parser(prog="cannpilot",
                     description="A terminal copilot for AscendC kernel engineers.")
    parser.add_argument("--version", action="version", version=f"cannpilot {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in names:
        try:
            module = importlib.import_module(f"copilot.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"copilot.commands.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["tui"] if _has_command("tui") else ["status"]
    if argv == ["status"]:
        from copilot.commands import status

        return status.run(None)
    # A command does not wait for every other command's imports (the TUI's first paint, a warm
    # `tasks show`); `--help` and an unknown command get the whole list.
    parser = build_parser((argv[0],) if argv[0] in COMMANDS else COMMANDS)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except CannpilotError as exc:
        print(f"cannpilot: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("cannpilot: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _has_command(name: str) -> bool:
    return importlib.util.find_spec(f"copilot.commands.{name}") is not None


if __name__ == "__main__":
    sys.exit(main())
