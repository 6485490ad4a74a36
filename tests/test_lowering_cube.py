"""The lowering's `matmul` pattern (copilot/lowering/cube.py): matrix products with an elementwise
prologue on B and epilogue on C, lowered to a MIX kernel on the Matmul API; unsupported cube goldens
stay Unsupported (exit 3) with a one-line reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.errors import Unsupported

REPO = Path(__file__).resolve().parent.parent
LINEAR = REPO / "bench" / "ops" / "linear_relu"
CANNBENCH = REPO.parent / "shared" / "cannbench" / "tasks"
needs_cannbench = pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository")


def _plan(path):
    from copilot.lowering.cube import plan_cube
    from copilot.tasks.loader import load_task

    return plan_cube(load_task(path))


def test_linear_plan_reads_the_transposed_weight_and_the_epilogue():
    p = _plan(LINEAR)
    assert p.pattern == "matmul"
    assert (p.a, p.a_trans, p.b, p.b_trans) == (0, False, 1, True)      # F.linear: x @ weight^T
    assert not p.prologue
    assert [(o.kind, o.operand) for o in p.epilogue if o.kind != "round"] == [
        ("add", ("col", 2)), ("relu", ()), ("mul", ("col", 3))]
    assert p.served_dtypes == ["bfloat16", "float16", "float32"]


def test_non_cube_goldens_are_left_to_the_other_planners():
    from copilot.lowering.cube import plan_cube
    from copilot.tasks.loader import load_task

    assert plan_cube(load_task(REPO / "bench" / "ops" / "bias_gelu")) is None


def test_int8_cases_are_refused_by_the_tiling_function(tmp_path):
    """cube_mm_api mixes trans_b values by attr: one product per case is required."""
    with pytest.raises(Unsupported, match="different product"):
        _plan(REPO / "tests" / "data" / "cube_mm_api")


@needs_cannbench
def test_weight_quant_prologue_is_the_dequant():
    p = _plan(CANNBENCH / "level3" / "weight_quant_batch_matmul")
    names = [i.name for i in p.task.inputs]
    assert [(o.kind, names[o.operand[1]] if o.operand else None) for o in p.prologue] == [
        ("round", None), ("add", "antiquantOffset"), ("mul", "antiquantScale")]
    assert [o.kind for o in p.epilogue] == ["add", "round"]
    assert p.epilogue[0].operand == ("col", names.index("bias"))


@needs_cannbench
@pytest.mark.parametrize("task,why", [
    ("level3/grouped_matmul", "matrix products in one golden"),
    ("level3/quant_matmul", "bmm"),
])
def test_unsupported_cube_goldens_say_why(task, why):
    with pytest.raises(Unsupported, match=why) as exc:
        _plan(CANNBENCH / task)
    assert "\n" not in str(exc.value)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")
def test_lowered_linear_passes_every_case(tmp_path):
    from copilot.backends.sim import check_kernel
    from copilot.lowering import lower

    k = lower(str(LINEAR))
    assert k.pattern == "matmul"
    path = tmp_path / "k.cpp"
    path.write_text(k.source)
    report = check_kernel(path, str(LINEAR), cases="all", timeout=300)
    assert report.compiled, [d.message for d in report.diagnostics]
    assert report.correct, [(c.id, c.message) for c in report.cases if not c.passed]
    assert not [d for d in report.diagnostics if d.severity == "error"]


def test_matmul_goldens_route_to_the_cube_cards():
    from knowledge.assembler import exemplar_for
    from knowledge.router import route_task

    assert route_task(str(LINEAR)).patterns[0] == "matmul"
    assert exemplar_for("matmul").id == "L5.matmul-linear_relu"


@needs_cannbench
def test_public_cube_tasks_route_to_matmul():
    from knowledge.router import route_task

    assert route_task(str(CANNBENCH / "level3" / "weight_quant_batch_matmul")).patterns[0] == "matmul"
