"""The generic lowering writes only the code a task can reach: the modes its tiling function can
select for some legal shape, the statistics a reduction needs, the folds and scratch tiles the
compute calls. Correctness of the kernels is tests/test_lowering.py's; these check what is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from copilot.lowering import lower

BENCH = Path(__file__).resolve().parents[2] / "shared" / "cannbench" / "tasks"


def _used_tmps(src: str) -> set[str]:
    """Scratch tiles referenced outside their declaration and binding."""
    body = [line for line in src.splitlines()
            if not re.match(r"\s*(LocalTensor<\w+> tmp\d|tmp\d+ = calc\[)", line)]
    return set(re.findall(r"\btmp\d+\b", "\n".join(body)))


def _declared_tmps(src: str) -> set[str]:
    decl = re.search(r"LocalTensor<\w+> (tmp\d+(?:, tmp\d+)*);", src)
    return set(decl.group(1).split(", ")) if decl else set()


@pytest.mark.parametrize("name", ["sigmoid", "relu", "add", "where"])
def test_elementwise_kernel_has_no_reduction_scaffolding(name):
    src = lower(name).source
    for absent in ("MODE_SPLIT", "ProcessSplit", "SplitTile", "NextSplitStep", "SplitCopyIn", "FoldMax",
                   "FoldMin", "InitStats", "FinishV0", "stat_[", "MODE_COLUMNS"):
        assert absent not in src, f"{name}: {absent} is written but unreachable"
    # a long row of an elementwise program is cut into independent chunks: that mode stays
    assert "td_.mode == MODE_CHUNKS" in src and "td->mode = MODE_CHUNKS" in src
    assert _declared_tmps(src) == _used_tmps(src)


def test_cannbench_sigmoid_is_smaller():
    task = BENCH / "level1" / "sigmoid"
    if not task.is_dir():
        pytest.skip(f"CANN-Bench tasks not found at {BENCH}")
    src = lower(str(task)).source
    assert "MODE_SPLIT" not in src and "FoldMax" not in src and "InitStatsV0" not in src
    assert _declared_tmps(src) == {"tmp0"}       # 1 / (1 + exp(-x)) needs one scratch tile
    assert src.count("\n") < 700


@pytest.mark.parametrize("name", ["softmax", "rms_norm", "reduce_sum", "layer_norm"])
def test_reduction_kernel_keeps_the_split_mode(name):
    src = lower(name).source
    assert "td->mode = MODE_SPLIT" in src             # the tiling can pick it for a long row ...
    assert "td_.mode == MODE_SPLIT" in src and "void ProcessSplit()" in src   # ... and the kernel serves it
    assert "InitStats(pass, nr)" in src and "float stat_[NUM_STATS]" in src
    assert "MODE_CHUNKS" not in src                   # an elementwise-only mode
    assert _declared_tmps(src) == _used_tmps(src)


@pytest.mark.parametrize("name, fold", [("reduce_max", "FoldMax"), ("reduce_min", "FoldMin"),
                                        ("softmax", "FoldMax")])
def test_a_max_or_min_reduction_keeps_its_fold(name, fold):
    src = lower(name).source
    assert re.search(rf"inline float {fold}\(", src)
    assert src.count(f"{fold}(") > 1                 # defined and called


def test_knob_that_forces_the_split_keeps_the_code_either_way():
    # split_d_elems makes the tiling choose MODE_SPLIT / MODE_CHUNKS for rows past it: both loops
    # are written whatever the knob, so the knob still selects a mode the kernel has
    for name, mode in (("softmax", "ProcessSplit"), ("relu", "ProcessChunks")):
        src = lower(name, knobs={"split_d_elems": 2048}).source
        assert "KNOB_SPLIT_D_ELEMS = 2048" in src and f"void {mode}()" in src


def test_every_builtin_still_lowers():
    from copilot.tasks import builtin_names

    from copilot.errors import Unsupported

    lowered = 0
    for name in builtin_names():
        try:
            src = lower(name).source
        except Unsupported:          # refused with its reason before and after (gather_rows, sort)
            continue
        lowered += 1
        if "NUM_TMPS" in src:                         # the generic emitter: no scratch tile unused
            assert _declared_tmps(src) <= _used_tmps(src), name
        defined = set(re.findall(r"\b(MODE_[A-Z]+) = \d", src))
        assert set(re.findall(r"\bMODE_[A-Z]+\b", src)) <= defined, name   # every mode named is defined
    assert lowered >= 47
