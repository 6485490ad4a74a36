"""The hand-written cube kernels of bench/cube_kernels/ for the operators the lowering does not reach pass
small public cases of their CANN-Bench task on 910B2. Only conv_3d_backprop_filter's small cases are cheap
enough for the suite (stride 2, NaN inputs, groups = 2: ~40 s at load 80); mla_prolog (75 MB of weights per
case, ~150 s a case) and sparse_flash_attention (~160 s for its smallest MLA case) are checked by
bench/cube_handwritten.py, which runs every public case of all three."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CANNBENCH = REPO.parent / "shared" / "cannbench"
KERNELS = REPO / "bench" / "cube_kernels"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository (../shared/cannbench)")]


@pytest.mark.parametrize("level, op, cases", [
    ("level3", "conv_3d_backprop_filter", "9,14,16"), # stride 2; NaN inputs; groups = 2
])
def test_handwritten_kernel_passes_public_cases(level, op, cases, monkeypatch):
    from copilot.backends.sim import check_kernel

    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "2")
    report = check_kernel(KERNELS / f"{op}.cpp", str(CANNBENCH / "tasks" / level / op), cases=cases, timeout=900)
    assert report.compiled, [d.message for d in report.diagnostics]
    assert [str(c.id) for c in report.cases if c.passed] == cases.split(","), \
        [(c.id, c.failure_class, c.message) for c in report.cases]
    assert not [d for d in report.diagnostics if d.severity == "error"]
