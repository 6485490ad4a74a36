"""The lowering's data-movement and whole-tensor patterns: axis permutations and slices as layout
kernels (rules read from attrs at run time, every element width), and reductions of every element
to one value (mse_loss)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import Unsupported
from copilot.lowering import lower, plan_task, supports
from copilot.tasks import load_task

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_movement"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


def _fixture(name):
    return load_task(str(FIXTURES / name))


def test_permutation_rule_comes_from_the_attrs():
    perm = plan_task(_fixture("lw_permute"))
    assert perm.pattern == "layout" and perm.rule == ("attr", "perm")
    assert perm.perms[4] == (1, 0)                     # perm [-1, 0] normalised
    swap = plan_task(_fixture("lw_swap_axes"))
    assert swap.rule == ("swap", "dim0", "dim1")
    src = lower(_fixture("lw_permute")).source
    tiling = src.split("namespace optiling")[1]
    assert "GetListInt(0)" in tiling                   # the permutation is read at run time
    kernel = src.split("namespace optiling")[0]
    assert "Gather(" in kernel and "DataCopyPad(" in kernel
    for arith in ("Muls(", "Div(", "Exp("):
        assert arith not in kernel                     # bits move, nothing is computed on them


def test_public_transpose_lowers_as_a_layout_kernel():
    d = CANNBENCH / "level3" / "transpose"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench transpose not found at {d}")
    ok, why = supports(load_task(str(d)))
    assert ok and why == "layout", why


def _write_task(root: Path, name: str, golden: str, cases: str, attrs: str = "") -> Path:
    d = root / name
    d.mkdir()
    (d / "golden.py").write_text("import torch\n\n\n" + textwrap.dedent(golden))
    (d / "proto.yaml").write_text(textwrap.dedent(f"""\
        operator:
          name: {name}
          attrs: [{attrs}]
          inputs:
          - {{name: x, dtype: [float32]}}
          outputs:
          - {{name: y, dtype: [float32]}}
        """))
    (d / "cases.yaml").write_text(textwrap.dedent(cases))
    return d


def test_permutation_no_attr_gives_is_refused(tmp_path):
    d = _write_task(tmp_path, "rank_perm", """\
        def rank_perm(x):
            return x.permute(*range(x.dim() - 1, -1, -1)).contiguous() if x.dim() == 3 else x.t().contiguous()
        """, """\
        cases:
        - {case_id: 1, input_shape: [[3, 4, 5]], dtype: [float32], attrs: {}, value_range: [-1, 1]}
        - {case_id: 2, input_shape: [[3, 4]], dtype: [float32], attrs: {}, value_range: [-1, 1]}
        - {case_id: 3, input_shape: [[2, 3, 4]], dtype: [float32], attrs: {}, value_range: [-1, 1]}
        """)
    # (2, 1, 0) twice and (1, 0) once: the same permutation is not in every case and no attr names it
    with pytest.raises(Unsupported, match="axis permutation differs between cases"):
        lower(load_task(str(d)))


def test_slices_follow_tf_strided_slice_attrs():
    plan = plan_task(_fixture("lw_tf_slice"))
    assert plan.pattern == "layout" and plan.rule[0] == "tf_slice"
    assert plan.rule[1][:3] == (0, 1, 2) and plan.rule[1][6] == 3     # shrink_axis_mask; the other masks absent
    src = lower(_fixture("lw_tf_slice")).source
    assert "MODE_STRIDED" in src and "GetListInt(0)" in src


def test_tf_slice_view_matches_torch_indexing():
    from copilot.lowering.movement import tf_slice_view

    import torch
    x = torch.arange(4 * 6 * 5).reshape(4, 6, 5)
    attrs = {"begin": [1, -4, 0], "end": [4, -1, 5], "strides": [2, 1, 3], "new_axis_mask": 0}
    sizes, strides, offset = tf_slice_view(x.shape, attrs)
    assert torch.equal(x.as_strided(sizes, strides, offset), x[1:4:2, -4:-1, 0:5:3])
    # bit 1 of new_axis_mask is a new axis at list position 1; position 2 then slices dim 1
    sizes, strides, offset = tf_slice_view(x.shape, {"begin": [2, 0, 1], "end": [3, 0, 6], "strides": [1, 1, 2],
                                                     "shrink_axis_mask": 1, "new_axis_mask": 2})
    assert torch.equal(x.as_strided(sizes, strides, offset), x[2, None, 1:6:2])
    assert tf_slice_view(x.shape, {"begin": [0], "end": [4], "strides": [-1]}) is None   # torch slices forward


def test_slices_no_attrs_explain_are_refused(tmp_path):
    d = _write_task(tmp_path, "fixed_crop", """\
        def fixed_crop(x):
            return x[1:, ::2].clone()
        """, """\
        cases:
        - {case_id: 1, input_shape: [[3, 4]], dtype: [float32], attrs: {}, value_range: [-1, 1]}
        """)
    with pytest.raises(Unsupported, match="no attrs give the slices"):
        lower(load_task(str(d)))


def test_an_unset_attr_reaches_the_kernel_as_the_goldens_default():
    """The sim runner passes the golden's keyword default for an attr neither the case nor the proto
    sets, so the attrs after it keep their proto index."""
    from copilot.backends.sim.runner import _golden_default

    task = _fixture("lw_tf_slice")
    assert _golden_default(task, "shrink_axis_mask") == 0
    assert _golden_default(task, "begin") is None


def test_whole_tensor_mean_reduces_every_element_whatever_the_rank():
    plan = plan_task(load_task("mse_loss"))
    assert plan.axis_rule == ("all",) and plan.pattern == "reduction"
    assert "axisLen = mainRank;" in lower("mse_loss").source


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name", ["lw_permute", "lw_swap_axes", "lw_tf_slice"])
def test_layout_kernel_passes_the_emulator(name, tmp_path):
    task = _fixture(name)
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == len(task.cases)


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_mse_loss_passes_the_emulator(tmp_path):
    task = load_task("mse_loss")
    path = tmp_path / "mse_loss.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="2,3,9")     # 1-D, unaligned 2-D, tiny
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases if not c.passed]
