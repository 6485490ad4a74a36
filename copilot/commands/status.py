"""What `cannpilot` with no arguments prints until the TUI is part of the build."""

from __future__ import annotations

import sys


def run(_args) -> int:
    from copilot import __version__
    from copilot.tasks import builtin_names

    names = builtin_names()
    print(f"Cannpilot {__version__}: a terminal copilot for AscendC kernel engineers.\n"
          f"{len(names)} built-in operator tasks. Try:\n"
          "  cannpilot tasks ls                 list the built-in tasks\n"
          "  cannpilot tasks show rms_norm      formula, inputs, attrs and cases of one task\n"
          "  cannpilot check K.cpp --task T     build and run a kernel on the CPU emulator\n"
          "  cannpilot doctor                   what this machine offers (g++, CANN, torch_npu, keys)\n"
          "  cannpilot --help                   every command", file=sys.stdout)
    return 0
