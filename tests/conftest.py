"""Shared fixtures: a valid task directory to copy and break, and a CLI runner."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
VALID_TASK = FIXTURES / "tasks" / "scaled_tanh"


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A fresh copy of a valid task directory, free to break."""
    dst = tmp_path / "scaled_tanh"
    shutil.copytree(VALID_TASK, dst)
    return dst


@pytest.fixture
def cli(capsys):
    """Run `cannpilot ARGS...` in-process; returns (exit code, stdout, stderr)."""
    from copilot.cli import main

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
