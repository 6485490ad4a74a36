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
        assert text in s, f"waiting for {text!r}; the grade panel:\n{grade_panel(s)}\nthe screen:\n{s}"
        return s

    def grade_panel(s: str) -> str:
        # the right-hand box under "grade" (what the grader said), first in a failure: CI logs cut long messages
        rows = s.splitlines()
        top = next((i for i, r in enumerate(rows) if "╭─ grade" in r), None)
        if top is None:
            return "(no grade panel on the screen)"
        col = rows[top].index("╭─ grade")
        return "\n".join(r[col:].rstrip() for r in rows[top:] if r[col:].strip(" │╰─╯"))

    def keys(*k: str, literal: bool = False, then: str | None = None) -> None:
        # tmux reads an argument ending in ';' as a command separator: escape it
        k = tuple(a[:-1] + "\\;" if a.endswith(";") else a for a in k)
        subprocess.run([*tmux, "send-keys", "-t", "learn", *(["-l"] if literal else []), *k], check=True)
        if then:
            # the editor's "Ln N, Col M" says the key has been taken: on a loaded machine a key sent
            # while an escape sequence (Up, End) is still being read can overtake it
            wait(then, 60)
        else:
            time.sleep(0.15)

    starter = subprocess.run([str(exe), "learn", "1", "--starter"], capture_output=True, text=True,
                             env={**os.environ, **envs}, check=True).stdout.splitlines()
    gap1 = next(i for i, line in enumerate(starter, 1) if "// GAP 1" in line)
    gap2 = next(i for i, line in enumerate(starter, 1) if "// GAP 2" in line)
    named = gap2 + 7                                  # CopyOut's DeQue, the line the grader names

    def at(line: int, col: int | None = None) -> str:
        return f"Ln {line}, Col {col}" if col else f"Ln {line}, Col "

    add, enque = "        Add(z, x, y, tile_);", "        outZ_.EnQue(z);"
    try:
        wait("Lesson 1", 120)
        wait("starter: fill the GAPs", 30)
        keys("C-r")                                   # grade the starter as it is
        s = wait("L2.QUEUE_PROTOCOL line")
        assert "fix:" in s and "DeQue" in s and f"line {named}:" in s
        keys("C-t")                                   # first hint: a card to read
        wait("hint 1/3")
        keys("C-g", then=at(named))                   # to the line the grader named
        for k in range(1, 8):                         # up to the GAP 2 comment
            keys("Up", then=at(named - k))
        keys("End", then=at(gap2, len(starter[gap2 - 1]) + 1))
        keys("Enter", then=at(gap2 + 1, 1))
        keys(enque, literal=True, then=at(gap2 + 1, len(enque) + 1))
        keys("Up", then=at(gap2))
        keys("Up", then=at(gap1))                     # the GAP 1 comment
        keys("End", then=at(gap1, len(starter[gap1 - 1]) + 1))
        keys("Enter", then=at(gap1 + 1, 1))
        keys(add, literal=True, then=at(gap1 + 1, len(add) + 1))
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
