"""A walk through lesson 1 in tmux as a learner types: the real `cannpilot learn 1`, real grading
on the emulator (g++), keys sent one by one; the store read back with `cannpilot learn --json`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("g++") is None, reason="needs tmux and g++")
def test_walk_through_lesson_1_in_tmux(tmp_path):
    socket = f"cannpilot-learn-{tmp_path.name}"
    envs = {k: str(tmp_path / v) for k, v in (
        ("CANNPILOT_CONFIG_DIR", "config"), ("CANNPILOT_STORE", "s.sqlite"), ("CANNPILOT_DATA_DIR", "data"),
        ("CANNPILOT_STATE_DIR", "state"))}
    env = " ".join(f"{k}='{v}'" for k, v in envs.items())
    tmux = ["tmux", "-L", socket]
    exe = ROOT / ".venv" / "bin" / "cannpilot"
    subprocess.run([*tmux, "-f", "/dev/null", "new-session", "-d", "-s", "learn", "-x", "160", "-y", "45",
                    f"sleep 1; cd '{tmp_path}' && env {env} TERM=xterm-256color '{exe}' learn 1; "
                    "echo CANNPILOT_EXIT=$?; sleep 600"], check=True)
    # keep 160x45 whatever client (none) is attached; the app starts after the resize
    subprocess.run([*tmux, "set-option", "-t", "learn", "window-size", "manual"], check=True)
    subprocess.run([*tmux, "resize-window", "-t", "learn", "-x", "160", "-y", "45"], check=True)
    shots: list[str] = []

    def screen() -> str:
        return subprocess.run([*tmux, "capture-pane", "-p", "-t", "learn"], capture_output=True, text=True).stdout

    def wait(text: str, timeout: float = 300) -> str:
        end = time.monotonic() + timeout     # a readiness wait, not a timing assertion
        s = ""
        while time.monotonic() < end:
            s = screen()
            if text in s or "CANNPILOT_EXIT=" in s and text != "CANNPILOT_EXIT=":
                break
            time.sleep(0.25)
        shots.append(s)
        assert text in s, f"waiting for {text!r}:\n{s}"
        return s

    def keys(*k: str, literal: bool = False) -> None:
        # tmux reads an argument ending in ';' as a command separator: escape it
        k = tuple(a[:-1] + "\\;" if a.endswith(";") else a for a in k)
        subprocess.run([*tmux, "send-keys", "-t", "learn", *(["-l"] if literal else []), *k], check=True)
        time.sleep(0.15)

    try:
        wait("Lesson 1", 120)
        wait("starter: fill the GAPs", 30)
        keys("C-r")                                   # grade the starter as it is
        s = wait("L2.QUEUE_PROTOCOL line")
        assert "fix:" in s and "DeQue" in s
        keys("C-t")                                   # first hint: a card to read
        wait("hint 1/3")
        keys("C-g")                                   # to the line the grader named (CopyOut's DeQue)
        for _ in range(7):                            # up to the GAP 2 comment
            keys("Up")
        keys("End")
        keys("Enter")
        keys("        outZ_.EnQue(z);", literal=True)
        keys("Up")
        keys("Up")                                    # the GAP 1 comment
        keys("End")
        keys("Enter")
        keys("        Add(z, x, y, tile_);", literal=True)
        keys("C-r")
        s = wait("lesson 1 passed")
        assert "µs est." in s and "MTE2" in s
        keys("Escape")
        wait("CANNPILOT_EXIT=0", 60)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
        if os.environ.get("LEARN_KEEP"):
            (tmp_path / "screens.txt").write_text("\n\f\n".join(shots))
    out = subprocess.run([str(exe), "learn", "--json"], capture_output=True, text=True,
                         env={**os.environ, **envs}, check=True).stdout
    first = json.loads(out)["lessons"][0]
    assert (first["passed"], first["attempts"], first["hints_used"]) == (True, 2, 1)
