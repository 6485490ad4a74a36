"""The precision checker: every rule of the Ascend operator precision standard, by hand-computed
examples, plus the acceptance property on real same-precision outputs."""

from __future__ import annotations

import json
import math
import re

import ml_dtypes
import numpy as np
import pytest
import torch

from copilot.errors import BadInput
from copilot.oracle.precision import (THRESHOLDS, CaseVerdict, judge, judge_allclose, judge_outputs,
                                      truncate)

T16, T32 = 2**-10, 2**-13


def f64(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def ones(n: int) -> torch.Tensor:
    return torch.ones(n, dtype=torch.float64)


# ------------------------------------------------------------------------------------ thresholds

def test_thresholds_are_the_standard_table():
    table = {
        "float16": (-10, -7, -11, -16, -5),
        "bfloat16": (-7, -4, -8, -16, -3),
        "float32": (-13, -10, -14, -30, -8),
        "hifloat32": (-11, -8, -12, -28, -8),
        "float8_e4m3": (-3, 0, -4, -6, -1),
        "float8_e5m2": (-2, -1, -3, -5, 0),
    }
    for name, exps in table.items():
        th = THRESHOLDS[name]
        assert (th.T, th.mare, th.small_value, th.small_value_error, th.cancel) == \
            tuple(2.0**e for e in exps), name


def test_unknown_dtype_is_bad_input():
    with pytest.raises(BadInput, match="float128"):
        judge(ones(4), ones(4), None, "float128")


# ------------------------------------------------------------------------------ step 1: metrics

def test_normal_pass_reports_mere_and_mare():
    golden = ones(1000)
    actual = torch.full((1000,), 1 + 2**-11, dtype=torch.float64)
    v = judge(actual, golden, golden.to(torch.float16), "float16")
    expected = 2**-11 / (1 + 1e-7)
    assert v.passed and v.mode == "standard" and v.failure_class is None
    assert v.mere == pytest.approx(expected, rel=1e-12)
    assert v.mare == pytest.approx(expected, rel=1e-12)
    assert v.mere < T16


def test_one_element_over_the_mare_limit_fails():
    golden = ones(1000)
    actual = golden.clone()
    actual[500] = 1 + 2**-6                  # 2^-6 > MARE limit 2^-7; MERE 2^-6/1000 < T
    v = judge(actual, golden, golden.to(torch.float16), "float16")
    assert v.mere < T16
    assert v.mare == pytest.approx(2**-6 / (1 + 1e-7))
    assert not v.passed
    assert v.failure_class == "localized_outlier"
    assert v.worst_index == (500,)
    assert v.regions["normal"]["failed"] == 1 and v.regions["normal"]["ref_failed"] == 0
    assert "[500, 500]" in v.message and "reference is clean" in v.message


def test_the_mare_limit_is_the_table_power_of_two_not_ten_t():
    golden = ones(1000)
    actual = golden.clone()
    actual[0] = 1 + 9 * T16                  # 9T: under 10T, over the table's 2^-7 = 8T
    v = judge(actual, golden, golden.to(torch.float16), "float16")
    assert not v.passed and v.regions["normal"]["failed"] == 1


def test_mere_fails_with_small_per_element_errors():
    golden = ones(1000)
    actual = torch.full((1000,), 1 + 2**-9, dtype=torch.float64)    # 2T everywhere, < 2^-7
    v = judge(actual, golden, golden.to(torch.float16), "float16")
    assert v.mare < 2**-7 and v.mere == pytest.approx(2 * T16, rel=1e-6)
    assert not v.passed
    assert v.failure_class == "systematic_drift"
    assert v.regions["normal"]["failed"] == 0
    assert "MERE 2T" in v.message


# -------------------------------------------------------------------------- small-value region

def _small_case(kernel_errors: int, ref_errors: int):
    """fp16, 1000 elements of 1.0 with ten small ones (2^-14) at 10..19; the kernel is off by
    2^-15 (> bound 2^-16) at the first `kernel_errors` small points, the reference at the last
    `ref_errors`."""
    golden = ones(1000)
    golden[10:20] = 2**-14
    actual = golden.clone()
    actual[10:10 + kernel_errors] += 2**-15
    bench = golden.clone()
    if ref_errors:
        bench[20 - ref_errors:20] += 2**-15
    return judge(actual, golden, bench.to(torch.float16), "float16")


def test_small_value_region_fails_when_kernel_errors_exceed_twice_the_reference():
    v = _small_case(3, 0)
    assert v.mare == pytest.approx(2**-15 / (2**-14 + 1e-7))  # ~0.5 at the small points
    assert not v.passed and v.failure_class == "small_value_error"
    assert v.regions["small_value"] == {"count": 10, "kernel_errors": 3, "ref_errors": 0,
                                        "passed": False}
    assert v.worst_index == (10,)
    assert "3 kernel errors over 2^-16 vs 0 for the reference, the golden run by PyTorch on the CPU in the " \
        "output's own dtype" in v.message            # the message says what "the reference" is
    assert "small-value region" in v.message and "3 kernel errors" in v.message


def test_small_value_reference_count_zero_counts_as_one():
    v = _small_case(2, 0)                                     # 2 / max(0, 1) = 2 <= 2
    assert v.mare > 2**-7                                     # step 1 failed, regions decided
    assert v.passed
    assert v.regions["small_value"]["kernel_errors"] == 2


def test_small_value_ratio_rule_against_the_reference():
    assert _small_case(3, 2).passed                          # 3 / 2 <= 2
    assert _small_case(4, 2).passed                          # 4 / 2 <= 2
    v = _small_case(5, 2)                                     # 5 / 2 > 2
    assert not v.passed and v.failure_class == "small_value_error"
    assert v.regions["small_value"]["ref_errors"] == 2


def test_small_values_are_judged_by_absolute_error_not_relative():
    golden = ones(1000)
    golden[7] = 2**-20
    actual = golden.clone()
    actual[7] = 0.0                          # relative error ~1, absolute 2^-20 < bound 2^-16
    v = judge(actual, golden, golden.to(torch.float16), "float16")
    assert v.mare > 0.9
    assert v.passed
    assert v.regions["small_value"]["count"] == 1


def test_small_value_region_uses_the_truncated_golden():
    # 2^-11 * (1 - 2^-13) rounds to 2^-11 in fp16: not below the threshold, so normal region
    golden = ones(100)
    golden[3] = 2**-11 * (1 - 2**-13)
    v = judge(golden, golden, golden.to(torch.float16), "float16")
    assert v.regions["small_value"]["count"] == 0
    golden[3] = 2**-11 * (1 - 2**-9)         # rounds below 2^-11: small
    v = judge(golden, golden, golden.to(torch.float16), "float16")
    assert v.regions["small_value"]["count"] == 1


def test_cancellation_needs_the_golden_at_or_above_the_small_value_threshold():
    # |golden| just under 2^-11 but truncating to 2^-11: neither small nor cancellation, so the
    # kernel's relative error there is judged in the normal region, where the reference's own
    # cancellation errors cannot excuse it.
    golden = ones(1000)
    golden[3] = 2**-11 * (1 - 2**-13)
    golden[10:20] = 2**-8
    actual = golden.clone()
    actual[3] = 2**-12
    bench = golden.clone()
    bench[10:12] *= 1 + 2**-5
    v = judge(actual, golden, bench.to(torch.float16), "float16")
    assert v.regions["cancellation"]["count"] == 10
    assert v.regions["normal"]["failed"] == 1
    assert not v.passed


# ------------------------------------------------------------------------- cancellation region

def _cancel_case(kernel_errors: int, ref_errors: int):
    """fp16, 1000 ones with ten 2^-8 (in [2^-11, 2^-5)) at 100..109; errors are a relative 2^-5
    (> MARE limit 2^-7), kernel at the first points, reference at the last."""
    golden = ones(1000)
    golden[100:110] = 2**-8
    actual = golden.clone()
    actual[100:100 + kernel_errors] *= 1 + 2**-5
    bench = golden.clone()
    if ref_errors:
        bench[110 - ref_errors:110] *= 1 + 2**-5
    return judge(actual, golden, bench.to(torch.float16), "float16")


def test_cancellation_region_passes_within_twice_the_reference():
    v = _cancel_case(3, 2)
    assert v.mare == pytest.approx(2**-5, rel=1e-4)
    assert v.passed
    assert v.regions["cancellation"] == {"count": 10, "kernel_errors": 3, "ref_errors": 2,
                                         "passed": True}


def test_cancellation_region_fails_over_twice_the_reference():
    v = _cancel_case(3, 1)
    assert not v.passed
    assert v.failure_class == "small_value_error"
    assert v.regions["cancellation"]["passed"] is False
    assert "cancellation region" in v.message


def test_cancellation_region_needs_a_near_zero_kernel_output():
    # golden 2^-8 but the kernel says 0.5: not a cancellation, a wrong value in the normal region
    golden = ones(1000)
    golden[100:110] = 2**-8
    actual = golden.clone()
    actual[100] = 0.5
    bench = golden.clone()
    bench[105:110] *= 1 + 2**-5
    v = judge(actual, golden, bench.to(torch.float16), "float16")
    assert not v.passed
    assert v.regions["cancellation"]["count"] == 9
    assert v.regions["normal"]["failed"] == 1
    assert v.failure_class == "localized_outlier"


# ---------------------------------------------------- normal region: same-precision fallback

def _fallback_case(bench_bad: list[int] | slice | None):
    """fp32, 1000 ones; the kernel is off by 2^-8 (> limit 2^-10) at 0..3 (MERE stays < T)."""
    golden = ones(1000)
    actual = golden.clone()
    actual[0:4] = 1 + 2**-8
    if bench_bad is None:
        return judge(actual, golden, None, "float32")
    bench = golden.clone()
    bench[bench_bad] = 1 + 2**-8
    return judge(actual, golden, bench.to(torch.float32), "float32")


def test_fallback_applies_when_the_reference_fails_at_those_points():
    v = _fallback_case([0, 1])                                # 4 / 2 <= 2
    assert v.mere < T32 and v.mare > 2**-10
    assert v.passed
    assert v.regions["normal"]["failed"] == 4 and v.regions["normal"]["ref_failed"] == 2


def test_a_nan_in_the_reference_counts_as_a_reference_error():
    golden = ones(1000)
    actual = golden.clone()
    actual[0:4] = 1 + 2**-8
    bench = golden.clone()
    bench[0:2] = math.nan
    v = judge(actual, golden, bench.to(torch.float32), "float32")
    assert v.regions["normal"]["ref_failed"] == 2
    assert v.passed


def test_fallback_ratio_over_two_fails():
    v = _fallback_case([0])                                   # 4 / 1 > 2
    assert not v.passed and v.failure_class == "localized_outlier"
    assert "ratio 4 > 2" in v.message


def test_no_relaxation_where_the_reference_is_clean():
    v = _fallback_case(slice(500, 600))      # the reference fails 100 elements, none of 0..3
    assert v.regions["normal"]["ref_failed"] == 0
    assert v.regions["normal"]["ref_failed_total"] == 100
    assert not v.passed and v.failure_class == "localized_outlier"
    assert "reference is clean there" in v.message


def test_no_reference_means_no_relaxation():
    v = _fallback_case(None)
    assert not v.passed and v.regions["normal"]["ref_failed"] == 0


def _mere_case(kernel_t: float, ref_t: float):
    golden = ones(1000)
    actual = torch.full((1000,), 1 + kernel_t * T32, dtype=torch.float64)
    bench = torch.full((1000,), 1 + ref_t * T32, dtype=torch.float64)
    return judge(actual, golden, bench, "float32")


def test_normal_mere_relaxed_up_to_twice_a_failing_reference():
    v = _mere_case(2, 1.5)           # kernel 2T >= T, but the reference is at 1.5T and 2 <= 3
    assert v.mere == pytest.approx(2 * T32, rel=1e-6)
    assert v.passed
    assert v.regions["normal"]["ref_mere"] == pytest.approx(1.5 * T32, rel=1e-6)


def test_normal_mere_not_relaxed_by_a_clean_reference_or_beyond_twice():
    v = _mere_case(2, 0.5)
    assert not v.passed and v.failure_class == "systematic_drift"
    v = _mere_case(4, 1.5)                                    # 4T > 2 * 1.5T
    assert not v.passed and v.failure_class == "systematic_drift"


# --------------------------------------------------------------------------------- inf and nan

def test_matching_inf_and_nan_pass_and_are_excluded_from_the_statistics():
    golden = f64([1.0, math.inf, -math.inf, math.nan])
    v = judge(golden.to(torch.float32), golden, golden.to(torch.float32), "float32")
    assert v.passed and v.mere == 0.0 and v.mare == 0.0

    golden = f64([1.0, 2.0, math.inf])
    actual = f64([1.0, 2.0 * (1 + 2**-14), math.inf])
    v = judge(actual, golden, None, "float32")
    assert v.passed
    assert v.mere == pytest.approx(2 * 2**-14 / (2 + 1e-7) / 2)   # mean over the 2 finite ones


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_or_inf_where_the_golden_is_finite_fails(bad):
    golden = f64([1.0, 2.0, 3.0, 4.0])
    actual = golden.clone()
    actual[2] = bad
    v = judge(actual, golden, golden.to(torch.float32), "float32")
    assert not v.passed and v.failure_class == "nan_inf_introduced"
    assert v.worst_index == (2,)


def test_inf_of_the_wrong_sign_or_a_finite_value_for_nan_mismatch():
    golden = f64([1.0, math.inf])
    v = judge(f64([1.0, -math.inf]), golden, None, "float32")
    assert not v.passed and v.failure_class == "nan_inf_mismatch" and v.worst_index == (1,)
    golden = f64([math.nan, 1.0])
    v = judge(f64([0.0, 1.0]), golden, None, "float32")
    assert not v.passed and v.failure_class == "nan_inf_mismatch" and v.worst_index == (0,)
    v = judge(f64([math.inf, 1.0]), golden, None, "float32")
    assert v.failure_class == "nan_inf_mismatch"


def test_a_golden_past_the_output_range_expects_the_inf_it_rounds_to():
    # exp(101) in a float32 output (CANN-Bench exp case 5): the golden truncated to float32 is +inf
    golden = f64([1.0, math.exp(101), -math.exp(101), 3.4e38])
    actual = torch.tensor([1.0, math.inf, -math.inf, 3.4e38], dtype=torch.float32)
    v = judge(actual, golden, actual, "float32")
    assert v.passed, v.message
    v = judge(torch.tensor([1.0, 3.4e38, -math.inf, 3.4e38], dtype=torch.float32), golden, actual, "float32")
    assert not v.passed and v.failure_class == "nan_inf_mismatch" and v.worst_index == (1,)
    # a saturating Cast gives the largest finite of the same sign: accepted there too
    v = judge(torch.tensor([65504.0, math.inf, 65504.0, -65504.0], dtype=torch.float16),
              f64([65504.0, 1e6, 1e6, -1e6]), None, "float16")
    assert v.passed, v.message
    v = judge(torch.tensor([-65504.0], dtype=torch.float16), f64([1e6]), None, "float16")
    assert not v.passed and v.failure_class == "nan_inf_mismatch"


# ------------------------------------------------------------------------ exact and shape rules

def test_integer_outputs_must_match_exactly():
    golden = torch.arange(100, dtype=torch.int32)
    v = judge(golden.clone(), golden, None, "int32")
    assert v.passed and v.mode == "exact"
    wrong = golden.clone()
    wrong[[7, 90]] += 1
    v = judge(wrong, golden, None, "int32")
    assert not v.passed and v.failure_class == "integer_mismatch"
    assert v.worst_index == (7,) and "2 of 100" in v.message


def test_integer_output_against_a_float_oracle():
    golden = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64)
    assert judge(torch.tensor([3, 1, 2]), golden, None, "int64").passed
    assert not judge(torch.tensor([3, 1, 1]), golden, None, "int64").passed


def test_bool_outputs_must_match_exactly():
    golden = torch.tensor([[True, False], [False, True]])
    assert judge(golden.clone(), golden, None, "bool").passed
    v = judge(torch.tensor([[True, False], [True, True]]), golden, None, "bool")
    assert not v.passed and v.failure_class == "integer_mismatch" and v.worst_index == (1, 0)


@pytest.mark.parametrize("dtype", ["float16", "int32"])
def test_shape_mismatch(dtype):
    v = judge(torch.zeros(4, 4), torch.zeros(16, dtype=torch.float64), None, dtype)
    assert not v.passed and v.failure_class == "shape_mismatch"
    assert "[4, 4]" in v.message and "[16]" in v.message


# ---------------------------------------------------------------------------- failure classes

def _uniform(shape, seed=0) -> torch.Tensor:
    """Values in [1, 2): no small-value or cancellation elements."""
    return 1 + torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_zero_output_class():
    golden = _uniform(1000)
    v = judge(torch.zeros(1000, dtype=torch.float16), golden, golden.to(torch.float16), "float16")
    assert not v.passed and v.failure_class == "zero_output"
    assert "all zeros" in v.message


def test_unwritten_tail_is_a_localized_outlier_with_its_range():
    golden = _uniform(4096)
    actual = golden.to(torch.float32)
    actual[3584:] = 0
    v = judge(actual, golden, golden.to(torch.float32), "float32")
    assert not v.passed and v.failure_class == "localized_outlier"
    assert "flat [3584, 4095]" in v.message
    assert "trailing 512 elements" in v.message and "7x512" in v.message


def test_a_few_wrong_rows_are_a_localized_outlier():
    golden = _uniform((64, 128))
    actual = golden.clone()
    actual[5] *= 1.01
    actual[40, ::2] *= 1.01
    v = judge(actual, golden, golden.to(torch.float32), "float32")
    assert not v.passed and v.failure_class == "localized_outlier"
    assert "2 row(s)" in v.message and "(5,)" in v.message and "(40,)" in v.message
    assert v.worst_index[0] in (5, 40)


def test_uniform_scale_error_is_systematic_drift():
    golden = _uniform(10000)
    v = judge(golden * (1 + 3 * T32), golden, golden.to(torch.float32), "float32")
    assert not v.passed and v.failure_class == "systematic_drift"
    assert v.regions["normal"]["failed"] == 0
    v = judge(golden * (1 + 20 * T32), golden, golden.to(torch.float32), "float32")
    assert not v.passed and v.failure_class == "systematic_drift"
    assert v.regions["normal"]["failed"] == 10000
    assert "mean signed rel err 20T" in v.message


# --------------------------------------------------------------------------------- truncation

def test_truncation_rounds_fp64_directly_to_nearest_even():
    # Via float32 (torch, ml_dtypes) this would double-round to 1.0
    assert truncate(np.array([1 + 2**-8 + 2**-30]), "bfloat16")[0] == 1 + 2**-7
    assert truncate(np.array([1 + 2**-8]), "bfloat16")[0] == 1.0             # tie to even
    assert truncate(np.array([1 + 3 * 2**-8]), "bfloat16")[0] == 1 + 2**-6   # tie to even, up


def test_truncation_agrees_with_numpy_for_float16_and_float32():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(50000) * np.exp2(rng.integers(-160, 140, 50000))
    x = np.concatenate([x, [0.0, -0.0, 65519.99, 65520.0, -70000.0, 2**-25, 2**-25 * 1.5]])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(truncate(x, "float16"), x.astype(np.float16).astype(np.float64))
        np.testing.assert_array_equal(truncate(x, "float32"), x.astype(np.float32).astype(np.float64))
    specials = np.array([math.inf, -math.inf, math.nan])
    np.testing.assert_array_equal(truncate(specials, "bfloat16"), specials)


def test_truncation_agrees_with_ml_dtypes_where_no_double_rounding_occurs():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(20000) * np.exp2(rng.integers(-140, 120, 20000))).astype(np.float32)
    x = x.astype(np.float64)                 # exact float32 values: one rounding only
    got = truncate(x, "bfloat16")
    want = x.astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_array_equal(got, want)
    y = (rng.standard_normal(20000) * np.exp2(rng.integers(-10, 8, 20000))).astype(np.float16)
    y = y.astype(np.float64)
    for name, fmt in (("float8_e4m3", ml_dtypes.float8_e4m3fn), ("float8_e5m2", ml_dtypes.float8_e5m2)):
        got = truncate(y, name)
        want = y.astype(fmt).astype(np.float64)
        finite = np.isfinite(got) & np.isfinite(want)
        assert finite.sum() > 19000
        np.testing.assert_array_equal(got[finite], want[finite])


# ------------------------------------------------------------------------------- allclose mode

def test_allclose_float32():
    expected = _uniform(1000).to(torch.float32)
    assert judge_allclose(expected + 5e-5, expected, "float32").passed
    v = judge_allclose(expected + 5e-4, expected, "float32")        # > 1e-4 + 1e-4 * 2
    assert not v.passed and v.mode == "allclose" and v.failure_class == "systematic_drift"
    one_off = expected.clone()
    one_off[123] += 1e-3
    v = judge_allclose(one_off, expected, "float32")
    assert not v.passed and v.failure_class == "localized_outlier" and v.worst_index == (123,)


def test_allclose_half_precision_tolerance():
    expected = torch.ones(100, dtype=torch.float16)
    assert judge_allclose(expected + 0.015, expected, "float16").passed     # <= 0.01 + 0.01
    assert not judge_allclose(expected + 0.03, expected, "float16").passed
    exp_bf = torch.ones(100, dtype=torch.bfloat16)
    assert judge_allclose(exp_bf + 0.015625, exp_bf, "bfloat16").passed


def test_allclose_nan_inf_integers_and_shapes():
    expected = f64([1.0, math.inf, 3.0])
    assert judge_allclose(expected.clone(), expected, "float32").passed
    v = judge_allclose(f64([math.nan, math.inf, 3.0]), expected, "float32")
    assert v.failure_class == "nan_inf_introduced"
    v = judge_allclose(f64([1.0, -math.inf, 3.0]), expected, "float32")
    assert v.failure_class == "nan_inf_mismatch"
    ints = torch.tensor([1, 2, 3])
    assert judge_allclose(ints, ints, "int64").passed
    assert judge_allclose(ints + 1, ints, "int64").failure_class == "integer_mismatch"
    assert judge_allclose(torch.zeros(3), torch.zeros(2, 2), "float32").failure_class == "shape_mismatch"


# ------------------------------------------------------------------------ several outputs, JSON

def test_judge_outputs_names_the_failing_output():
    good = _uniform(100)
    bad = good.clone()
    bad[99] = 0
    v = judge_outputs([good, bad], [good, good], [None, None], ["float32", "float32"])
    assert not v.passed and v.message.startswith("output 1 of 2:")
    assert v.failure_class == "localized_outlier" and len(v.outputs) == 2
    v = judge_outputs([good, good], [good, good], None, ["float32", "float16"])
    assert v.passed and [o.passed for o in v.outputs] == [True, True]
    v = judge_outputs([good], [good, good], None, ["float32", "float32"])
    assert not v.passed and v.failure_class == "shape_mismatch"


def test_verdict_json_is_strict_json():
    golden = _uniform(100)
    for v in (judge(golden, golden, None, "float32"),
              judge(golden * 2, golden, None, "float32"),
              judge(torch.tensor([1, 2]), torch.tensor([1, 3]), None, "int32")):
        doc = v.to_json()
        text = json.dumps(doc, allow_nan=False)
        assert set(json.loads(text)) >= {"passed", "mode", "mere", "mare", "failure_class",
                                          "regions", "message", "worst_index"}
    assert judge(torch.tensor([1]), torch.tensor([1]), None, "int32").to_json()["mere"] is None


# ---------------------------------------------------------------- acceptance: real outputs

OPS = {
    "sigmoid": torch.sigmoid,
    "exp": torch.exp,
    "softmax": lambda x: torch.softmax(x, dim=-1),
}
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_acceptance_same_precision_output_passes_and_one_percent_at_20T_fails(dtype, op):
    th = THRESHOLDS[dtype]
    gen = torch.Generator().manual_seed(1234)
    x = (torch.rand(40000, 8, generator=gen, dtype=torch.float64) * 8 - 4).to(DTYPES[dtype])
    oracle = OPS[op](x.to(torch.float64))
    same = OPS[op](x)                                   # the golden run in the case's own dtype

    v = judge(same, oracle, same, dtype)
    assert v.passed, v.message

    normal = torch.nonzero(oracle.abs().reshape(-1) >= th.cancel).reshape(-1)
    assert normal.numel() > 50000
    pick = normal[torch.randperm(normal.numel(), generator=gen)[: normal.numel() // 100]]
    corrupt = same.clone().reshape(-1)
    corrupt[pick] = (oracle.reshape(-1)[pick] * (1 + 20 * th.T)).to(DTYPES[dtype])
    v = judge(corrupt.reshape(same.shape), oracle, same, dtype)
    assert not v.passed
    assert v.failure_class == "localized_outlier"
    assert v.regions["normal"]["failed"] == pick.numel()
    assert v.regions["normal"]["ref_failed"] == 0
    assert "scattered" in v.message


# ------------------------------------------------------------------------------- inputs, layering

def test_numpy_and_ml_dtypes_inputs_are_judged_like_tensors():
    golden = _uniform((32, 16))
    assert judge(golden.numpy().astype(np.float32), golden.numpy(), None, "float32").passed
    bf = golden.numpy().astype(ml_dtypes.bfloat16)
    assert judge(bf, golden, torch.from_numpy(golden.numpy()).to(torch.bfloat16), "bfloat16").passed
    wrong = golden.numpy().copy()
    wrong[3, 4] *= 1.5
    v = judge(wrong, golden.numpy(), None, "float32")
    assert not v.passed and v.worst_index == (3, 4)


def test_the_checker_imports_no_ui_library():
    import subprocess
    import sys
    code = ("import sys, copilot.oracle.precision; "
            "print([m for m in ('textual', 'rich', 'prompt_toolkit') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
