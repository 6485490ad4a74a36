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


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_cannpilot_chip_in_the_environment_opens_the_tui_on_that_chip(tmp_path):
    """`CANNPILOT_CHIP=910B4 cannpilot`: the status bar of the first screen names 910B4."""
    import time

    root = DRIVE.parents[2]
    socket = f"cannpilot-chip-{tmp_path.name}"
    env = " ".join(f"{k}='{tmp_path / v}'" for k, v in (
        ("CANNPILOT_CONFIG_DIR", "config"), ("CANNPILOT_STORE", "s.sqlite"), ("CANNPILOT_DATA_DIR", "data"),
        ("CANNPILOT_CACHE_DIR", "cache"), ("CANNPILOT_STATE_DIR", "state")))
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "-f", "/dev/null", "new-session", "-d", "-s", "chip", "-x", "160", "-y", "45",
                    f"cd '{tmp_path}' && env {env} CANNPILOT_CHIP=910B4 TERM=xterm-256color "
                    f"'{root}/.venv/bin/cannpilot'; echo CANNPILOT_EXIT=$?; sleep 600"], check=True)
    try:
        screen = ""
        for _ in range(240):                           # readiness wait for the first screen
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "chip"], capture_output=True,
                                    text=True).stdout
            if "│ 910B4 │" in screen or "CANNPILOT_EXIT=" in screen:
                break
            time.sleep(0.25)
        assert "│ 910B4 │" in screen and "910B2" not in screen, screen
        subprocess.run([*tmux, "send-keys", "-t", "chip", "q"], check=True)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
