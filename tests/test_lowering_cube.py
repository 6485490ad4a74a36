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


def test_an_int64_accumulation_is_refused_with_its_reason():
    """cube_mm_api's int8 cases accumulate in int64 and return int32: not an exact cube product here."""
    with pytest.raises(Unsupported, match=r"cast to \['int64'\]") as exc:
        _plan(REPO / "tests" / "data" / "cube_mm_api")
    assert "\n" not in str(exc.value)


@needs_cannbench
def test_a_chain_of_products_with_four_outputs_names_its_real_reason(cli):
    """mla_prolog (4 products, norms and rotary between them, 4 outputs) was refused as 'aten.mm is not
    supported by the lowering' (the vector planner's words after the cube planner stood aside)."""
    code, out, err = cli("lower", "--task", str(CANNBENCH / "level4" / "mla_prolog"))
    assert code == 3 and not out
    line = err.strip()
    assert "\n" not in line and "not supported by the lowering" not in line
    assert "aten.mm: 4 matrix product(s) into 4 outputs" in line and "2 outputs at the most" in line


@needs_cannbench
def test_weight_quant_prologue_is_the_dequant():
    p = _plan(CANNBENCH / "level3" / "weight_quant_batch_matmul")
    names = [i.name for i in p.task.inputs]
    assert [(o.kind, names[o.operand[1]] if o.operand else None) for o in p.prologue] == [
        ("round", None), ("add", "antiquantOffset"), ("mul", "antiquantScale")]
    assert [o.kind for o in p.epilogue] == ["add"]          # the rounding to the output is the store
    assert p.epilogue[0].operand == ("col", names.index("bias"))


@needs_cannbench
def test_quant_matmul_epilogue_variants_follow_the_bias_dtype():
    """int32 bias before the scale, a float bias after it: two chains picked by the bias's dtype; the
    per-token scale is a row operand, the per-tensor/channel scale a (broadcast) column one."""
    p = _plan(CANNBENCH / "level3" / "quant_matmul")
    names = [i.name for i in p.task.inputs]
    assert p.served_dtypes == ["int8"] and not p.prologue
    chains = {tuple(dt): [(o.kind, o.operand[0], names[o.operand[1]]) for o in ch] for _, dt, ch in p.variants}
    assert chains[("bfloat16",)] == [("mul", "col", "scale"), ("add", "col", "bias")]
    assert chains[("int32",)] == [("add", "col", "bias"), ("mul", "col", "scale"), ("mul", "row", "pertoken_scale")]
    assert p.variants[-1][1] == ["int32"]      # an absent bias takes the proto's first dtype: int32


@needs_cannbench
def test_grouped_matmul_groups_come_from_the_list_attr():
    p = _plan(CANNBENCH / "level3" / "grouped_matmul")
    attrs = [a.name for a in p.task.attrs]
    assert p.group_rule == (attrs.index("group_list"), "ends")
    assert p.trans_rule == (attrs.index("transpose_weight"), False)
    assert [(o.kind, o.operand) for o in p.epilogue] == [("add", ("col", 2))]


@needs_cannbench
def test_grouped_swiglu_quant_has_its_row_stage():
    """The grouped products fill an fp32 buffer (dequant: per-row x_scale, per-group-column weight_scale);
    SwiGLU + per-row int8 quant follow as the row stage, its two outputs in the golden's order."""
    p = _plan(CANNBENCH / "level4" / "grouped_matmul_swiglu_quant")
    names = [i.name for i in p.task.inputs]
    assert [(o.kind, o.operand[0], names[o.operand[1]]) for o in p.epilogue] == [
        ("mul", "row", "x_scale"), ("mul", "col", "weight_scale")]
    assert p.group_rule == (0, "ends")
    assert p.post["kind"] == "swiglu_quant" and (p.post["y"], p.post["scale"]) == (0, 1)
    assert (p.post["qmax"], p.post["lo"], p.post["hi"]) == (127.0, -128.0, 127.0)


CHAIN = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x, w1, w2):
        return (x @ w1) @ w2

def get_inputs():
    return [torch.randn(16, 32), torch.randn(32, 48), torch.randn(48, 8)]

def get_init_inputs():
    return []
'''


def test_chained_products_are_refused_with_one_line(tmp_path):
    path = tmp_path / "chain.py"
    path.write_text(CHAIN)
    with pytest.raises(Unsupported, match="not one grouped product") as exc:
        _plan(path)
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
