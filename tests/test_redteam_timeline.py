"""Red team, issue 24 hole (2): operand identities. A kernel that rewrites its tensors' slot ids
and the slot table (tests/redteam/relu_attacks.cpp mode slot_forge, in tests/test_redteam.py) makes
a vector op read a copy's bytes under a slot the copy never wrote. The launcher's timeline also
tracks UB by the bytes each operand touches, so the read still waits for the copy. This is the
timeline alone (one small C++ driver, no kernel build)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).parent
INCLUDE = HERE.parent / "copilot" / "backends" / "sim" / "include"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    exe = tmp_path_factory.mktemp("ub_ranges") / "ub_ranges"
    subprocess.run(["g++", "-std=c++20", "-O1", "-I", str(INCLUDE), str(HERE / "redteam" / "drivers" / "ub_ranges.cpp"),
                    "-o", str(exe)], check=True, capture_output=True, text=True, timeout=600)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60)
    return json.loads("{" + out.stdout)


def test_a_read_under_a_forged_slot_waits_for_the_bytes_it_reads(figures):
    assert figures["vector_end_ranges"] > figures["copy_end_1"]
    # by slot alone (the events before they carried ranges) the forged read did not wait
    assert figures["vector_end_slots_only"] < figures["copy_end_0"]


def test_a_replayed_event_with_an_inverted_range_is_refused(figures):
    assert figures["inverted_refused"] == 1 and figures["valid_applied"] == 1
