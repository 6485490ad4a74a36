"""The lowering's index patterns: torch.gather as a kernel of its own (a window of x in UB read
through byte offsets, whole rows, or scalar reads when the window does not fit), cross-entropy
over class indices (rows or strided class axes, online logsumexp over class chunks, the cores'
partials combined after SyncAll), segment sums (atomic adds into a zeroed output, from a private
table per core or row by row; int64 data over column chunks each core owns), scatters (lanes owned by one core each, run in order along dim),
cummin (the same lanes), and what stays outside them exits 3 naming the op."""

from __future__ import annotations

import dataclasses
import shutil
import textwrap
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import Unsupported
from copilot.lowering import lower, plan_task, supports
from copilot.tasks import load_task, select_cases

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_index"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


def _fixture(name):
    return load_task(str(FIXTURES / name))


def test_gather_axis_comes_from_the_attr_and_only_bits_move():
    plan = plan_task(_fixture("lw_gather"))
    assert plan.pattern == "gather" and plan.dim_rule == ("attr", "dim")
    assert (plan.x, plan.index) == (0, 1) and not plan.unserved
    src = lower(_fixture("lw_gather")).source
    kernel, tiling = src.split("namespace optiling", 1)
    assert "GetAttrPointer<int64_t>(0)" in tiling          # dim is read at run time
    assert "Gather(" in kernel and "DataCopyPad(" in kernel
    for arith in ("Exp(", "Div(", "ReduceSum("):
        assert arith not in kernel


def test_take_along_dim_is_the_gather_with_negative_indices_wrapped():
    plan = plan_task(_fixture("lw_take_along_dim"))
    assert plan.pattern == "gather" and plan.wrap and plan.dim_rule == ("attr", "dim")
    assert list(plan.unserved) == ["4"]                      # the index broadcasts: not served
    kernel, tiling = lower(_fixture("lw_take_along_dim")).source.split("namespace optiling", 1)
    assert "Muls(negative, negative, static_cast<int32_t>(td_.axisLen), lanes);" in kernel
    assert "v = v < 0 ? v + static_cast<int64_t>(td_.axisLen) : v;" in kernel     # the scalar mode too
    assert "id[d] != xd[d]" in tiling
    plain = lower(_fixture("lw_gather")).source          # torch.gather keeps its clamp only
    assert "negative" not in plain and "id[d] != xd[d]" not in plain


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_take_along_dim_passes_the_emulator(tmp_path):
    task = _fixture("lw_take_along_dim")
    path = tmp_path / "lw_take_along_dim.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,2,3")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


def test_public_gather_lowers_as_a_gather_kernel():
    d = CANNBENCH / "level2" / "gather"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench gather not found at {d}")
    ok, why = supports(load_task(str(d)))
    assert ok and why == "gather", why


def _write_task(root: Path, name: str, golden: str) -> Path:
    d = root / name
    d.mkdir()
    (d / "golden.py").write_text("import torch\n\n\n" + textwrap.dedent(golden))
    (d / "proto.yaml").write_text(textwrap.dedent(f"""\
        operator:
          name: {name}
          attrs: [{{name: dim, type: int64, default: 0}}]
          inputs:
          - {{name: x, dtype: [float32]}}
          - {{name: index, dtype: [int64]}}
          outputs:
          - {{name: y, dtype: [float32]}}
        """))
    (d / "cases.yaml").write_text(textwrap.dedent("""\
        cases:
        - {case_id: 1, input_shape: [[6, 8], [3, 8]], dtype: [float32, int64], attrs: {dim: 0},
           value_range: [[-1, 1], [0, 5]]}
        """))
    return d


def test_gather_of_computed_data_is_not_the_gather_pattern(tmp_path):
    # the pattern moves x's bits; arithmetic before the gather is outside it and exits 3
    d = _write_task(tmp_path, "scaled_gather", """\
        def scaled_gather(x, index, dim=0):
            return torch.gather(x * 2.0, dim, index)
        """)
    with pytest.raises(Unsupported, match="gather"):
        lower(load_task(str(d)))


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_gather_columns_with_a_shorter_index_pass_the_emulator(tmp_path):
    # case 2: dim 1 of a 3-D x, the index shorter on the outer and the last dim, int64 index
    task = _fixture("lw_gather")
    path = tmp_path / "lw_gather.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="2")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


def test_index_select_is_a_row_gather_whose_axis_comes_from_the_attr():
    plan = plan_task(_fixture("lw_index_select"))
    assert plan.pattern == "index_select" and plan.dim_rule == ("attr", "dim") and not plan.unserved
    assert any("last axis" in n for n in plan.notes)          # case 3 selects along the last axis
    kernel, tiling = lower(_fixture("lw_index_select")).source.split("namespace optiling", 1)
    assert "GetAttrPointer<int64_t>(0)" in tiling
    assert "idx.GetValue(r)" in kernel and "DataCopyPad(" in kernel
    for arith in ("Gather(", "Exp(", "Add("):                 # rows move by copies, nothing is computed
        assert arith not in kernel


def test_indexing_by_one_integer_tensor_is_the_index_select(tmp_path):
    # x[:, index] traces to aten.index with one tensor at dim 1: the same row gather (y puts the
    # index's dims where dim was, the same layout); a boolean mask selects a data-dependent count
    d = _write_task(tmp_path, "take_columns", """\
        def take_columns(x, index, dim=0):
            return x[:, index]
        """)
    plan = plan_task(load_task(str(d)))
    assert plan.pattern == "index_select" and plan.dim_rule == ("const", 1)
    d = _write_task(tmp_path, "masked", """\
        def masked(x, index, dim=0):
            return x[index > 2]
        """)
    with pytest.raises(Unsupported):
        lower(load_task(str(d)))


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_builtin_gather_rows_lowers_and_passes_the_emulator(tmp_path):
    # issue 16: torch.index_select(x, 0, index.long()) of the built-in suite; case 1: rows of
    # 1028 B, case 4: rows of 240 KB copied in chunks, case 5: fewer rows than cores
    task = load_task("gather_rows")
    assert plan_task(task).pattern == "index_select"
    path = tmp_path / "gather_rows.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="1,4,5")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


def test_cross_entropy_reads_reduction_and_ignore_index_at_run_time():
    plan = plan_task(_fixture("lw_cross_entropy"))
    assert plan.pattern == "cross_entropy"
    assert plan.reduction_rule == ("attr", "reduction") and plan.ignore_rule == ("attr", "ignore_index")
    kernel, tiling = lower(_fixture("lw_cross_entropy")).source.split("namespace optiling", 1)
    assert "GetAttrPointer<char>(0)" in tiling and "GetAttrPointer<int64_t>(1)" in tiling
    assert "SyncAll()" in kernel                             # sum / mean combine the cores' partials


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_cross_entropy_with_class_chunks_passes_the_emulator(tmp_path):
    # case 4: (2, 5000, 7) logits, the class axis strided and split into chunks, mean over cores
    task = _fixture("lw_cross_entropy")
    path = tmp_path / "lw_cross_entropy.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="4")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases]


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_cross_entropy_runs_on_the_vector_unit_for_short_rows_and_few_positions(tmp_path):
    # case 6: two classes per row, reduction none, ignore_index 1 (rows transposed to positions);
    # case 7: 2 x 33 positions, sum (narrow class-major tiles)
    task = _fixture("lw_cross_entropy")
    src = lower(task).source
    kernel = src.split("namespace optiling", 1)[0]
    assert "expf(" not in kernel and "logf(" not in kernel      # ln / exp are vector instructions
    path = tmp_path / "lw_cross_entropy.cpp"
    path.write_text(src)
    report = check_kernel(path, task, chip="910B2", cases="6,7")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    assert report.compiled and report.correct, failed
    assert not [d for d in report.diagnostics if d.id == "L4.DEVICE_LIBC"]


def test_segment_sum_adds_rows_into_a_zeroed_output_by_atomics():
    task = _fixture("lw_segment_sum")
    plan = plan_task(task)
    assert plan.pattern == "segment_sum" and (plan.data, plan.ids) == (0, 1)
    kernel = lower(task).source.split("namespace optiling", 1)[0]
    # zeroed by every core before the barrier, then added into by atomic copies
    assert kernel.index("ZeroShare();") < kernel.index("SyncAll();") < kernel.index("AddTile(unitStart_ + u)")
    assert "SetAtomicAdd<Acc>()" in kernel and "SetAtomicNone()" in kernel


def test_segment_sum_of_int64_data_owns_columns_instead_of_atomic_adds():
    # GM has no int64 atomic add: int64 data is served by a kernel whose cores own column chunks
    # of y, emitted only when a case has int64 data
    task = _fixture("lw_segment_sum")
    plan = plan_task(task)
    assert {c.dtypes[0] for c in task.cases} >= {"int64", "float32"} and not plan.unserved
    kernel = lower(task).source.split("namespace optiling", 1)[0]
    wide = kernel[kernel.index("class KernelLwSegmentSumInt64"):kernel.index('extern "C"')]
    assert "SetAtomicAdd" not in wide and "MODE_OWNED_ROWS" in wide
    # arch 3510 adds int64 lanes; arch 2201 adds the int32 words and carries into the high word
    assert "#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510" in wide and "Gather(spare, carry, offset" in wide
    narrow = dataclasses.replace(task, cases=[c for c in task.cases if c.dtypes[0] != "int64"])
    assert "Int64" not in lower(narrow).source and "DT_INT64 &&" not in lower(narrow).source


def test_segment_sum_serves_every_public_case():
    d = CANNBENCH / "level2" / "unsorted_segment_sum"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench unsorted_segment_sum not found at {d}")
    task = load_task(str(d))
    plan = plan_task(task)
    assert any(c.dtypes[0] == "int64" for c in task.cases) and not plan.unserved


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_segment_sum_of_int64_data_passes_the_emulator_on_the_950(tmp_path):
    # the 950's own int64 vector Add (910B2's carry path runs in the every-case test below)
    task = _fixture("lw_segment_sum")
    path = tmp_path / "lw_segment_sum.cpp"
    path.write_text(lower(task, chip="950PR").source)
    wide = [c.id for c in task.cases if c.dtypes[0] == "int64"]
    report = check_kernel(path, task, chip="950PR", cases=",".join(wide))
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    assert report.compiled and report.correct and len(report.cases) == len(wide), failed


def test_scatter_traces_with_dim_between_two_inputs_and_reads_its_mode_at_run_time():
    # the golden is scatter(data, dim, indices, updates, reduce): traced by input names, as the
    # harness calls it; the five reductions are one kernel, picked from the string attr
    plan = plan_task(_fixture("lw_scatter"))
    assert plan.pattern == "scatter" and (plan.data, plan.index, plan.updates) == (0, 1, 2)
    assert plan.dim_rule == ("attr", "dim") and plan.mode_rule == ("attr", "reduce")
    kernel, tiling = lower(_fixture("lw_scatter")).source.split("namespace optiling", 1)
    assert "GetAttrPointer<char>(1)" in tiling and '"amax"' in tiling
    assert kernel.index("CopyShare();") < kernel.index("SyncAll();") < kernel.index("Lane(unitStart_ + u)")


def test_cummin_keeps_torchs_nan_and_tie_rule():
    plan = plan_task(_fixture("lw_cummin"))
    assert plan.pattern == "scan" and plan.op == "cummin" and plan.dim_rule == ("attr", "dim")
    kernel = lower(_fixture("lw_cummin")).source.split("namespace optiling", 1)[0]
    assert "v != v || (best == best && v <= best)" in kernel      # NaN takes over; a tie takes the later index


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name", ["lw_gather", "lw_index_select", "lw_cross_entropy", "lw_segment_sum", "lw_scatter",
                                  "lw_cummin"])
def test_every_case_of_each_index_fixture_passes_the_emulator(name, tmp_path):
    task = _fixture(name)
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == len(select_cases(task, "all"))
