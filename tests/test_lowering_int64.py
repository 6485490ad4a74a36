"""int64 data in the lowering (arch 2201 has no int64 vector arithmetic): an elementwise integer
program runs on int32 lanes for each tile whose values are below the program's bound (2^31 for
max/min/gcd, one bit less per add, half the bits for a product), and a tile with a larger value is
computed on the scalar unit in int64, so every value is exact. argmax / argmin of integer data
rank in fp32 (exact below 2^24) and a lane whose extreme is past 2^24 is ranked again in int64."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.lowering import lower, plan_task
from copilot.tasks import load_task, select_cases

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_int64"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


def _fixture(name):
    return load_task(str(FIXTURES / name))


def test_the_narrowing_bound_follows_the_programs_arithmetic():
    gcd = plan_task(_fixture("lw_gcd64"))
    assert gcd.wide_bits == 31 and not gcd.unserved          # gcd never exceeds its operands
    mix = plan_task(_fixture("lw_max_gcd64"))
    assert mix.wide_bits == 30 and not mix.unserved          # max - gcd needs one more bit


def test_int64_tiles_are_narrowed_with_a_scalar_path_for_wide_values():
    kernel = lower(_fixture("lw_max_gcd64")).source.split("namespace optiling", 1)[0]
    assert "constexpr float NARROW_BOUND = 1073741824.0f;" in kernel
    assert "NarrowToCalc(dst, buf" in kernel and "PastNarrow(raw)" in kernel   # tiles and per-row values
    assert "ScalarTileV0(row0, nr, col0, cw, pitch);" in kernel
    assert "WrapSub(v" in kernel and "Gcd64(v" in kernel      # the scalar path's int64 arithmetic
    # the guard sits between the loads and the first vector op of the program
    body = kernel.split("__aicore__ inline void ComputeV0", 1)[1]
    assert body.index("if (wide_[0] || wide_[1])") < body.index("Max(")


def test_public_int64_cases_are_served():
    for name in ("gcd", "maximum", "arg_max"):
        d = CANNBENCH / "level2" / name
        if not (d / "proto.yaml").is_file():
            pytest.skip(f"CANN-Bench {name} not found at {d}")
        plan = plan_task(load_task(str(d)))
        assert not plan.unserved, plan.unserved
        assert (plan.wide_bits, plan.int_arg) == ((None, True) if name == "arg_max" else (31, False))


def test_argmax_of_integers_ranks_again_in_int64_past_2_to_the_24():
    kernel = lower(_fixture("lw_argmax_int")).source.split("namespace optiling", 1)[0]
    assert "Cast(dst, src, RoundMode::CAST_RINT, n);   // int64: exact below 2^24" in kernel
    rows = kernel.split("__aicore__ inline void FinishV0", 1)[1]
    assert rows.index("ExactArgRowsV0(base, nr);") < rows.index("StoreStat0(")
    assert "ExactArgColsV0(outOff, wc);" in kernel and "if (x > best) {" in kernel   # the first maximum wins


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_gcd_of_values_past_2_to_the_31_is_exact_on_the_emulator(tmp_path):
    # case 2: values to 2^40 with a one-value-per-row operand (scalar tiles); case 1 narrowed
    task = _fixture("lw_gcd64")
    path = tmp_path / "lw_gcd64.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,2")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("chip", ["910B2", "950PR"])
@pytest.mark.parametrize("name", ["lw_gcd64", "lw_max_gcd64", "lw_argmax_int"])
def test_every_case_of_each_int64_fixture_passes_the_emulator(name, chip, tmp_path):
    task = _fixture(name)
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task, chip=chip).source)
    report = check_kernel(path, task, chip=chip, cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == len(select_cases(task, "all"))
