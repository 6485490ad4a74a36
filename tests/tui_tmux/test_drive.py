"""Runs tests/tui_tmux/drive.sh: the real `cannpilot` in tmux, driven as an engineer would."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

DRIVE = Path(__file__).with_name("drive.sh")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_drive_the_tui_in_tmux():
    proc = subprocess.run(["bash", str(DRIVE)], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-6000:] + proc.stdout[-2000:]
    assert "all checks passed" in proc.stderr
