"""The cost model's calibration kernels (bench/calibration_kernels/*.cpp) compute the right answers.

A few small cases per operator, chosen so every code path of each kernel runs: unaligned tails,
16-bit types through float, short rows merged a tile at a time, rows of two (shifted loads), and
the column softmax both resident and streamed. The full acceptance run is
`cannpilot check bench/calibration_kernels/OP.cpp --task OP --cases all` (figures in docs/cost-model.md).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel  # noqa: E402
from copilot.tasks import load_task  # noqa: E402
from copilot.tasks.model import Case  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

KERNELS = Path(__file__).resolve().parents[1] / "bench" / "calibration_kernels"
EXP_E = {"base": -1.0, "scale": 1.0, "shift": 0.0}

# operator -> [(shapes, dtypes, attrs, what the case exercises)]
CASES = {
    "sigmoid": [
        ([(1000, 37)], ["float16"], {}, "16-bit through float, unaligned last tile"),
        ([(64, 1024)], ["float32"], {}, "aligned slices"),
    ],
    "gelu": [
        ([(4099,)], ["float32"], {"approximate": "none"}, "exact form: erfc tails to a small relative error"),
        ([(300, 67)], ["bfloat16"], {"approximate": "tanh"}, "tanh form, 16-bit through float"),
    ],
    "group_norm": [
        ([(2, 8, 5, 7), (8,), (8,)], ["float16"] * 3, {"num_groups": 2, "epsilon": 1e-5},
         "resident groups, channel rows not 32-byte multiples"),
        ([(2, 4, 4100), (4,), (4,)], ["float32"] * 3, {"num_groups": 2, "epsilon": 1e-5},
         "streamed groups, channels longer than a chunk"),
        ([(40, 32), (32,), (32,)], ["bfloat16"] * 3, {"num_groups": 2, "epsilon": 1e-5},
         "channels of one element: gamma and beta as rows"),
    ],
    "exp": [
        ([(33, 65)], ["bfloat16"], {"base": 10.0, "scale": 0.5, "shift": 0.5}, "base 10 folded into the constants"),
        ([(4099,)], ["bfloat16"], EXP_E | {"scale": 1.5, "shift": -1.0}, "natural base, unaligned length"),
    ],
    "softmax": [
        ([(37, 1000)], ["float16"], {"dim": -1}, "rows (last axis)"),
        ([(5003, 2)], ["float16"], {"dim": -1}, "rows of two: shifted loads, odd row count"),
        ([(4, 33, 40)], ["float32"], {"dim": 1}, "column softmax, all rows resident"),
        ([(2, 3000, 20)], ["float16"], {"dim": 1}, "column softmax streamed in row blocks"),
    ],
    "rms_norm": [
        ([(500, 67), (67,)], ["bfloat16", "bfloat16"], {"epsilon": 1e-6}, "short rows, folded past 64 columns"),
        ([(300, 128), (128,)], ["float32", "float32"], {"epsilon": 1e-5}, "short rows of exactly two repeats"),
        ([(2049, 2), (2,)], ["float32", "float32"], {"epsilon": 1e-6}, "rows of two, last core clipped"),
        ([(7, 1000), (1000,)], ["bfloat16", "bfloat16"], {"epsilon": 1e-6}, "long rows"),
    ],
}


# the value range of every case: gelu's exact form is checked deep into its negative tail, where
# its values are small and the precision standard bounds them absolutely
RANGES = {"gelu": (-9.0, 6.0)}


def small_task(op: str):
    task = load_task(op)
    cases = [Case(id=str(i + 1), shapes=shapes, dtypes=dtypes, attrs=attrs,
                  value_ranges=[RANGES.get(op, (-4.0, 4.0))] * len(shapes), note=note)
             for i, (shapes, dtypes, attrs, note) in enumerate(CASES[op])]
    return dataclasses.replace(task, cases=cases)


@pytest.mark.parametrize("op", sorted(CASES))
def test_calibration_kernel_is_correct(op):
    report = check_kernel(KERNELS / f"{op}.cpp", small_task(op), chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message) for c in report.cases if not c.passed]
    assert report.compiled, report.diagnostics
    assert not failed, failed
    assert report.correct
    assert len(report.cases) == len(CASES[op])


def test_every_calibration_operator_has_a_kernel():
    assert {p.stem for p in KERNELS.glob("*.cpp")} == set(CASES)
