"""MoE gating's tiles (copilot/lowering/moe.py): whole tokens per tile, every core busy, on the
emulator with every output compared (the test-only fixture lw_moe_gating)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.chips import load_chip
from copilot.lowering import lower
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_sort" / "lw_moe_gating"
NO_GXX = shutil.which("g++") is None


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_short_rows_spread_over_every_core_in_tiles_of_whole_tokens(tmp_path):
    """Case 4: 13,000 tokens of 12 experts are one tile of 271 tokens on each of the 48 cores (the
    vector instructions in row blocks of 248), case 5 several tiles a core with E and k off their
    pitches, case 6 rows of 2,112 scores (over 255 blocks: a call a row)."""
    task = load_task(str(FIXTURE))
    path = tmp_path / "lw_moe_gating.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="4,5,6")
    assert report.compiled and report.correct, [(c.id, c.failure_class, c.message[:200]) for c in report.cases]
    cores = {c.id: c.block_dim for c in report.cases}
    assert cores["4"] == cores["5"] == load_chip("910B2").vector_cores
