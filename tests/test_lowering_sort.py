"""The lowering's selection pattern: torch.topk / torch.sort along any axis as a kernel of its own
(fp32 scores through the TopK library API, chunked lanes merged through candidate rows, columns
transposed in UB), MoE gating (softmax + top-k over the experts), and what stays outside them
exits 3 naming the op."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import Unsupported
from copilot.lowering import lower, plan_task, supports
from copilot.tasks import load_task, select_cases

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_sort"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


def _fixture(name):
    return load_task(str(FIXTURES / name))


def test_topk_reads_k_dim_and_direction_at_run_time():
    plan = plan_task(_fixture("lw_topk"))
    assert plan.pattern == "topk" and not plan.unserved
    assert (plan.k_rule, plan.dim_rule, plan.largest_rule) == (("attr", "k"), ("attr", "dim"), ("attr", "largest"))
    kernel, tiling = lower(_fixture("lw_topk")).source.split("namespace optiling", 1)
    for pos, ctype in ((0, "int64_t"), (1, "int64_t"), (2, "bool")):
        assert f"GetAttrPointer<{ctype}>({pos})" in tiling
    assert "TopK<float, false" in kernel and "TopK<float, true" in kernel     # chunks, then candidates
    assert "TopKTilingFunc" in tiling
    assert "GetValue(" not in kernel                     # no scalar pass over the data


def test_sort_is_a_topk_of_the_whole_axis():
    plan = plan_task(_fixture("lw_sort"))
    assert plan.pattern == "topk" and plan.k_rule == ("axis",) and plan.largest_rule == ("attr", "descending")
    tiling = lower(_fixture("lw_sort")).source.split("namespace optiling", 1)[1]
    assert "const int64_t k = static_cast<int64_t>(axisLen);" in tiling


def test_stable_sort_with_int32_indices_is_the_selection_pattern():
    # the built-in sort: torch.sort(x, dim=-1, descending=True, stable=True), indices cast to int32
    task = load_task("sort")
    plan = plan_task(task)
    assert plan.pattern == "topk" and plan.k_rule == ("axis",) and plan.index_dtype == "int32"
    assert plan.largest_rule == ("const", True) and plan.dim_rule == ("const", -1) and not plan.unserved
    kernel = lower(task).source.split("namespace optiling", 1)[0]
    assert "using IndexOut = int32_t;" in kernel and "Cast(idxOut" not in kernel   # written as TopK gives them
    assert "using IndexOut = int64_t;" in lower(_fixture("lw_sort")).source        # torch's int64 otherwise


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_builtin_sort_lowers_and_passes_the_emulator(tmp_path):
    # case 1: rows of 1000 (a tail); case 9: rows of 4095, one TopK call per row (the rows mode
    # takes 4096 positions), TopK writing the result rows directly
    task = load_task("sort")
    path = tmp_path / "sort.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,9")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


def test_public_top_k_lowers_as_a_topk_kernel():
    d = CANNBENCH / "level3" / "top_k"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench top_k not found at {d}")
    ok, why = supports(load_task(str(d)))
    assert ok and why == "topk", why


def test_topk_of_computed_scores_is_not_the_pattern(tmp_path):
    # the pattern selects x itself; arithmetic before the selection exits 3 naming the op
    d = tmp_path / "scaled_topk"
    d.mkdir()
    (d / "golden.py").write_text("import torch\n\n\n" + textwrap.dedent("""\
        def scaled_topk(x, k=2):
            return torch.topk(x * 2.0, k, dim=-1)
        """))
    (d / "proto.yaml").write_text(textwrap.dedent("""\
        operator:
          name: scaled_topk
          attrs: [{name: k, type: int64, default: 2}]
          inputs:
          - {name: x, dtype: [float32]}
          outputs:
          - {name: y, dtype: [float32]}
          - {name: idx, dtype: [int64]}
        """))
    (d / "cases.yaml").write_text(textwrap.dedent("""\
        cases:
        - {case_id: 1, input_shape: [[6, 8]], dtype: [float32], attrs: {k: 2}, value_range: [-1, 1]}
        """))
    with pytest.raises(Unsupported, match="topk"):
        lower(load_task(str(d)))


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_chunked_rows_and_chunked_columns_pass_the_emulator(tmp_path):
    # case 2: rows of 9000 fp32 in chunks, the smallest; case 8: a column lane of 4500 in chunks
    task = _fixture("lw_topk")
    path = tmp_path / "lw_topk.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="2,8")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_columns_with_a_large_k_pass_the_emulator_through_the_workspace(tmp_path):
    # cases 10-12, 14: k of 700 to 1025 along dim 0 / a middle axis; a block of columns (rows of
    # at least 32 bytes) with its k results and 2k candidates per lane does not fit the 910B2 UB,
    # so the tiling function refused them (RUN.TILING) before x went through the workspace as
    # lanes; case 15: lanes of 4096 (a full sort), past a column copy's 4095 rows, refused too;
    # case 13: long fp32 columns of a small k, the smallest
    task = _fixture("lw_topk")
    path = tmp_path / "lw_topk.cpp"
    path.write_text(lower(task).source)
    assert "MODE_TRANSPOSED" in path.read_text().split("namespace optiling", 1)[1]
    report = check_kernel(path, task, chip="910B2", cases="10,11,12,13,14,15")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    assert report.compiled and report.correct and len(report.cases) == 6, failed


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name", ["lw_topk", "lw_sort", "lw_moe_gating"])
def test_every_case_of_each_sort_fixture_passes_the_emulator(name, tmp_path):
    task = _fixture(name)
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == len(select_cases(task, "all"))


def test_public_unique_is_its_own_pattern_not_a_selection():
    """torch.unique (aten._unique2) lowers through unique.py (tests/test_lowering_unique.py), and
    every public case's dtype is served (float32 and wide integer ranges by the sort path): the
    reason names the pattern and leaves no case out."""
    d = CANNBENCH / "level3" / "unique"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench unique not found at {d}")
    ok, why = supports(load_task(str(d)))
    assert ok and why == "unique"


def test_moe_gating_selects_on_the_logits_and_reads_the_optional_mask_at_run_time():
    plan = plan_task(_fixture("lw_moe_gating"))
    assert plan.pattern == "moe_gating" and plan.k_rule == ("attr", "k") and plan.finished == 1
    kernel, tiling = lower(_fixture("lw_moe_gating")).source.split("namespace optiling", 1)
    assert "GetOptionalInputShape(1)" in tiling
    assert "TopK<float, false" in kernel and "Exp(" in kernel and "ReduceSum(" in kernel


def test_gating_whose_third_output_is_not_the_row_index_is_not_the_pattern(tmp_path):
    d = tmp_path / "odd_gating"
    shutil.copytree(FIXTURES / "lw_moe_gating", d)
    g = (d / "golden.py").read_text().replace("return values, experts.to(torch.int32), row_idx.contiguous()",
                                               "return values, experts.to(torch.int32), (row_idx + 1).contiguous()")
    (d / "golden.py").write_text(g)
    with pytest.raises(Unsupported, match="row index"):
        lower(load_task(str(d)))


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_moe_gating_with_and_without_finished_passes_the_emulator(tmp_path):
    # every output compared (the public task compares y only): 2-D without the mask, 3-D with it
    task = _fixture("lw_moe_gating")
    path = tmp_path / "lw_moe_gating.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,2")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]
