"""Acceptance kernels (tests/kernels/*.cpp) pass their built-in tasks on the emulator.

CI runs the quick tier; `cannpilot check KERNEL --task T --cases all` is the full acceptance run
(figures in docs/sim-backend.md).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"), pytest.mark.slow]

KERNELS = Path(__file__).parent / "kernels"

# kernel file -> (built-in task, what it demonstrates)
ACCEPTANCE = {
    "add_double_buffer.cpp": ("add", "double buffering, broadcasting, DataCopyPad tails"),
    "relu_tail_pad.cpp": ("relu", "unaligned tails with DataCopyPad"),
    "leaky_relu_tbuf.cpp": ("leaky_relu", "TBuf scratch, float attr"),
    "softmax_rows.cpp": ("softmax", "ReduceMax/ReduceSum over rows, strided axes"),
    "rms_norm_bf16_cast.cpp": ("rms_norm", "bf16 through Cast, ReduceSum, V_S sync"),
    "abs_mask_repeat.cpp": ("abs", "mask/repeat API form"),
    "exp_legacy_tiling.cpp": ("exp", "legacy BEGIN_TILING_DATA_DEF macros"),
    "square_dtype_macros.cpp": ("square", "DTYPE_X / DTYPE_Y macros"),
    "neg_tiling_key.cpp": ("neg", "SetTilingKey + TILING_KEY_IS dispatch"),
}


def test_every_acceptance_kernel_is_listed():
    assert {p.name for p in KERNELS.glob("*.cpp")} == set(ACCEPTANCE)


@pytest.mark.parametrize("kernel", sorted(ACCEPTANCE))
def test_acceptance_kernel_passes_the_quick_tier(kernel):
    task, _ = ACCEPTANCE[kernel]
    report = check_kernel(KERNELS / kernel, task, cases="quick")
    assert report.compiled, [d.message for d in report.diagnostics]
    failed = [(c.id, c.message) for c in report.cases if not c.passed]
    assert report.correct, (failed, [(d.id, d.line, d.message) for d in report.diagnostics])
    assert not [d for d in report.diagnostics if d.severity == "error"]
