"""The built-in lowering agent: capture and pattern classification, unsupported ops named, knob
validation, the CLI, and lowered kernels that pass the emulator on test-only tasks."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

from copilot.errors import BadInput, Unsupported
from copilot.lowering import default_knobs, knob_space, lower, supports
from copilot.tasks import load_task

FIXTURES = Path(__file__).parent / "fixtures" / "lowering"
LOWERING_TASKS = sorted(p.name for p in FIXTURES.iterdir() if (p / "proto.yaml").is_file())

from copilot.backends.sim import check_kernel

NO_GXX = shutil.which("g++") is None     # the emulator compiles kernels with the host g++


# ---------------------------------------------------------------- capture and patterns

@pytest.mark.parametrize("name, pattern", [
    ("relu", "elementwise"),
    ("add", "broadcast"),
    ("where", "broadcast"),
    ("swiglu", "elementwise-chunk"),
    ("reduce_sum", "reduction"),
    ("softmax", "softmax"),
    ("rms_norm", "normalization"),
    ("group_norm", "normalization"),
    ("add_rms_norm_dynamic_quant", "fusion"),
])
def test_builtin_task_is_classified(name, pattern):
    ok, why = supports(name)
    assert ok, why
    assert why.startswith(pattern)


def test_plan_reads_axis_and_attrs_at_run_time():
    from copilot.lowering import plan_task

    softmax = plan_task(load_task("softmax"))
    assert softmax.axis_rule == ("attr", "dim")          # dim=-1, 0, 1, 2 across cases
    rms = plan_task(load_task("rms_norm"))
    assert rms.axis_rule == ("last", 1)
    gelu = plan_task(load_task("gelu"))
    assert len(gelu.programs) == 2                         # approximate="none" / "tanh"
    assert {g["approximate"] for g in gelu.guards} == {"none", "tanh"}
    src = lower("leaky_relu").source
    assert "0.01" not in src.split("namespace optiling")[0]  # the slope comes from tiling data


def test_emitted_file_follows_the_candidate_contract():
    src = lower("layer_norm").source
    for needle in ["REGISTER_TILING_DEFAULT(", "GET_TILING_DATA(", "namespace optiling",
                   "static ge::graphStatus TilingFunc(gert::TilingContext* context)",
                   'extern "C" __global__ __aicore__ void layer_norm_custom(GM_ADDR x, GM_ADDR gamma, '
                   "GM_ADDR beta, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)",
                   "GetCoreMemSize(platform_ascendc::CoreMemType::UB", "GetCoreNumAiv()",
                   "DataCopyPad(", "DTYPE_X", "SetBlockDim("]:
        assert needle in src, needle


def test_rotate_half_is_a_lane_map_of_the_row():
    """rotary_embedding's cat(-x[..., D/2:], x[..., :D/2]) reads x's rows rotated by D/2 through a
    Gather table and picks the negated half by a lane mask; cos[None, :, None, :] broadcasts with
    unit dims between its own."""
    from copilot.lowering import plan_task

    plan = plan_task(load_task("rotary_embedding"))
    assert [l.lanes for l in plan.loads].count(("rot", 2)) == 1
    assert {l.align for l in plan.loads if l.input == 1} == {("dims", (3, 1))}
    src = lower("rotary_embedding").source
    assert "rotTable_" in src and "Gather(dst, laneSrc_, rotTable_" in src
    assert "kLoadPlace" in src.split("namespace optiling")[1]


def test_strided_slice_inside_a_row_names_the_op(tmp_path):
    d = _write_task(tmp_path, "even_lanes", "def even_lanes(x):\n    return x[..., ::2] * 2.0\n")
    with pytest.raises(Unsupported, match=r"aten.slice \[0:9:2\]"):
        lower(load_task(str(d)))


def test_index_reduction_carries_value_and_first_index():
    ok, why = supports("argmax")
    assert ok and why == "reduction", why
    src = lower("argmax").source
    assert "ReduceMax(" in src and ", true);" in src          # calIndex: value and index per row chunk
    assert "ArgBetterMax(" in src and "ArgBetterMaxCols(" in src   # rows and columns fold (value, index)
    assert "indices are carried in fp32" in src


def test_integer_data_lowers_on_int32_lanes(tmp_path):
    from copilot.lowering import plan_task

    task = load_task(str(FIXTURES / "lw_int_gcd_max"))
    assert plan_task(task).calc == "int32"
    src = lower(task).source
    assert "using Calc = int32_t;" in src and "GcdInt32(" in src and "Max(" in src
    # a task with float and integer cases picks the lane type per build; int64 cases are narrowed
    # per tile (tests/test_lowering_int64.py)
    d = tmp_path / "lw_mixed_max"
    d.mkdir()
    (d / "proto.yaml").write_text(textwrap.dedent("""\
        operator:
          name: lw_mixed_max
          category: broadcast
          formula: "y"
          attrs: []
          inputs:
          - {name: x, dtype: [float16, int32, int64]}
          - {name: z, dtype: [float16, int32, int64]}
          outputs:
          - {name: y, dtype: [float16, int32, int64]}
        """))
    (d / "golden.py").write_text("import torch\n\n\ndef lw_mixed_max(x, z):\n    return torch.maximum(x, z)\n")
    (d / "cases.yaml").write_text("cases:\n" + "".join(
        f"- case_id: {i}\n  input_shape: [[4, 9], [9]]\n  dtype: [{dt}, {dt}]\n  attrs: {{}}\n"
        "  value_range: [-9, 9]\n" for i, dt in enumerate(("float16", "int32", "int64"), 1)))
    (d / "desc.md").write_text("# lw_mixed_max\n")
    task = load_task(str(d))
    ok, why = supports(task)
    assert ok and "not served" not in why, why
    assert plan_task(task).calc == ("by", 0)
    assert "std::conditional<std::is_integral<DTYPE_X>::value, int32_t, float>" in lower(task).source


def _write_task(root: Path, name: str, golden: str) -> Path:
    d = root / name
    d.mkdir()
    (d / "proto.yaml").write_text(textwrap.dedent(f"""\
        operator:
          name: {name}
          category: reduction
          formula: "y"
          attrs: []
          inputs:
          - {{name: x, dtype: [float32]}}
          outputs:
          - {{name: y, dtype: [float32]}}
        """))
    (d / "golden.py").write_text("import torch\n\n\n" + textwrap.dedent(golden))
    (d / "cases.yaml").write_text("cases:\n- case_id: 1\n  input_shape: [[4, 9]]\n  dtype: [float32]\n"
                                  "  attrs: {}\n  value_range: [-1, 1]\n")
    (d / "desc.md").write_text(f"# {name}\n")
    return d


def test_unknown_aten_op_is_unsupported_with_its_name(tmp_path):
    d = _write_task(tmp_path, "cumsum_op", "def cumsum_op(x):\n    return torch.cumsum(x, dim=-1)\n")
    with pytest.raises(Unsupported, match="aten.cumsum"):
        lower(str(d))
    ok, why = supports(str(d))
    assert not ok and "aten.cumsum" in why


def test_reduction_of_a_reduction_is_unsupported(tmp_path):
    d = _write_task(tmp_path, "nested", "def nested(x):\n    return x - x.sum(-1, keepdim=True).amax()\n")
    with pytest.raises(Unsupported):
        lower(str(d))


# ---------------------------------------------------------------- knobs

def test_knob_space_and_defaults_are_consistent():
    space = knob_space(None)
    defaults = default_knobs(None)
    assert set(space) == set(defaults)
    for name, values in space.items():
        assert defaults[name] in values, name
    assert {"tile_elems", "buffer_num", "block_dim_policy", "rows_per_tile", "split_d_elems"} <= set(space)


@pytest.mark.parametrize("knobs, error, needle", [
    ({"tile_elems": 100}, BadInput, "multiple of 64"),
    ({"buffer_num": 3}, BadInput, "buffer_num"),
    ({"block_dim_policy": "everything"}, BadInput, "block_dim_policy"),
    ({"no_such_knob": 1}, BadInput, "unknown"),
    ({"tile_elems": 131072}, Unsupported, "L2.UB_CAPACITY"),
    ({"ub_reserve_bytes": 100000}, Unsupported, "L2.UB_CAPACITY"),
])
def test_bad_knobs_are_rejected_up_front(knobs, error, needle):
    with pytest.raises(error, match=needle):
        lower("relu", knobs=knobs)


def test_knobs_change_the_kernel():
    a = lower("relu").source
    b = lower("relu", knobs={"buffer_num": 1, "tile_elems": 2048, "block_dim_policy": "all_cores"}).source
    assert a != b
    assert "constexpr uint64_t KNOB_BUFFER_NUM = 1;" in b and "KNOB_TILE_ELEMS = 2048;" in b


# ---------------------------------------------------------------- CLI

def test_cli_writes_only_the_kernel_to_stdout(cli):
    code, out, err = cli("lower", "--task", "relu")
    assert code == 0
    assert out.startswith("// ") and 'void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace' in out
    assert "pattern" in err


def test_cli_output_file(cli, tmp_path):
    dst = tmp_path / "k" / "relu.cpp"
    code, out, _ = cli("lower", "--task", "relu", "-o", str(dst), "--knob", "buffer_num=1")
    assert code == 0 and out == ""
    assert "relu_custom" in dst.read_text()


def test_cli_exit_codes(cli, tmp_path):
    scan = _write_task(tmp_path, "scan", "def scan(x):\n    return torch.cumsum(x, dim=-1)\n")
    code, out, err = cli("lower", "--task", str(scan))
    assert code == 3 and out == "" and "aten.cumsum" in err
    code, out, err = cli("lower", "--task", "relu", "--knob", "tile_elems=100")
    assert code == 2 and out == "" and "tile_elems" in err
    code, _, err = cli("lower", "--task", "relu", "--knob", "bogus")
    assert code == 2 and "name=value" in err


# ---------------------------------------------------------------- emulator: test-only tasks

def test_every_lowering_fixture_is_in_the_public_layout():
    assert len(LOWERING_TASKS) >= 8
    for name in LOWERING_TASKS:
        task = load_task(str(FIXTURES / name))
        dtypes = {d for c in task.cases for d in c.dtypes}
        if dtypes <= {"int8", "int16", "int32"}:
            assert dtypes == {"int8", "int16", "int32"}, name       # an integer fixture: every integer width
        else:
            assert {"float16", "bfloat16", "float32"} <= dtypes, name


def _unaligned(case) -> bool:
    """Some input's last dim is not a whole number of 32-byte blocks."""
    from copilot.dtypes import dtype as dtype_of

    return any(s and (s[-1] * dtype_of(d).itemsize) % 32 for s, d in zip(case.shapes, case.dtypes))


def test_fixtures_cover_every_pattern_unaligned_in_all_float_dtypes():
    """The acceptance item: test-only tasks in each pattern, unaligned, fp16 + bf16 + fp32."""
    from copilot.lowering import plan_task

    by_pattern: dict[str, set[str]] = {}
    for name in LOWERING_TASKS:
        task = load_task(str(FIXTURES / name))
        ok, why = supports(task)
        assert ok and why == plan_task(task).pattern, (name, why)   # every case served
        assert any(_unaligned(c) for c in task.cases), name
        by_pattern.setdefault(why, set()).add(name)
    assert set(by_pattern) == {"elementwise", "elementwise-chunk", "broadcast", "reduction",
                               "normalization", "softmax", "fusion"}
    multi_output = [n for n in by_pattern["fusion"] if len(load_task(str(FIXTURES / n)).outputs) > 1]
    assert multi_output, "no multi-output fixture"
    rules = {plan_task(load_task(str(FIXTURES / n))).axis_rule for n in LOWERING_TASKS}
    assert {("last", 1), ("last", 2), ("attr", "dim"), ("group", "num_groups"), None} <= rules


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name", LOWERING_TASKS)
def test_lowered_kernel_passes_the_emulator(name, tmp_path):
    task = load_task(str(FIXTURES / name))
    kernel = lower(task)
    path = tmp_path / f"{name}.cpp"
    path.write_text(kernel.source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(d.id, d.line, d.message[:200]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name", ["lw_log_softmax", "lw_masked_bias"])
def test_lowered_kernel_passes_on_950(name, tmp_path):
    task = load_task(str(FIXTURES / name))
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task, chip="950PR").source)
    report = check_kernel(path, task, chip="950PR", cases="all")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases if not c.passed]


def test_chip_is_checked():
    with pytest.raises(BadInput, match="unknown chip"):
        lower("relu", chip="nope")
    with pytest.raises(Unsupported, match="DataCopyPad"):
        lower("relu", chip="310P")


# ---------------------------------------------------------------- capture of goldens as written

CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


def _public(rel: str):
    d = CANNBENCH / rel
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task {rel} not found at {d}")
    try:
        return load_task(str(d))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench task {rel} does not load yet: {exc}")


def test_attr_expressions_are_computed_in_the_tiling_function():
    """`1 - beta1`, `1 - beta1 ** step` and ln(torch.tensor(base)) come from the attrs at run
    time, and the `base > 0` branch of the golden selects the variant."""
    task = load_task(str(FIXTURES / "lw_adam_step"))
    src = lower(task).source
    tiling = src.split("namespace optiling")[1]
    assert "static_cast<float>((1.0 - attrBeta1))" in tiling
    assert "static_cast<float>((1.0 - pow(attrBeta1, attrStep)))" in tiling
    assert "static_cast<float>(log(attrBase))" in tiling
    assert "!(attrBase > 0.0)" in tiling and "(attrBase > 0.0)) {" in tiling
    kernel = src.split("namespace optiling")[0]
    assert "0.9f" not in kernel and "0.1f" not in kernel     # no attr value baked into the kernel


@pytest.mark.skipif(NO_GXX, reason="g++ is required to build the kernel")
def test_a_float_attr_is_read_back_as_the_decimal_the_case_wrote(tmp_path):
    """The tiling receives beta = fp32(0.999); 1 - beta from that rounding is 111 ulps from the
    golden's fp32(1 - 0.999). The lowered tiling reads the attr's shortest decimal (0.999) and the
    kernel's constant is the golden's, bit for bit (ones in, the constant out)."""
    from copilot.backends.sim import build, run
    from copilot.oracle import make_inputs, reference

    d = tmp_path / "one_minus"
    d.mkdir()
    (d / "proto.yaml").write_text(textwrap.dedent("""\
        operator:
          name: one_minus
          category: elementwise
          formula: "y = x * (1 - beta)"
          attrs:
          - {name: beta, type: float, required: true}
          inputs:
          - {name: x, dtype: [float32]}
          outputs:
          - {name: y, dtype: [float32]}
        """))
    (d / "golden.py").write_text("import torch\n\n\ndef one_minus(x, beta: float):\n    return x * (1 - beta)\n")
    (d / "cases.yaml").write_text("cases:\n- case_id: 1\n  input_shape: [[4, 40]]\n  dtype: [float32]\n"
                                  "  attrs: {beta: 0.999}\n  value_range: [[1, 1]]\n")
    (d / "desc.md").write_text("# one_minus\n")
    task = load_task(str(d))
    src = lower(task).source
    assert "AttrDecimal(*attrs->GetAttrPointer<float>(0))" in src.split("namespace optiling")[1]
    path = tmp_path / "one_minus.cpp"
    path.write_text(src)
    case = task.cases[0]
    inputs = make_inputs(task, case)
    ref = reference(task, case, inputs)
    b = build(path, task, list(case.dtypes) + [o.dtype for o in ref.outputs], "910B2")
    assert b.ok, [x.message for x in b.diagnostics]
    r = run(b, task, case, inputs, outputs=ref.outputs)
    assert r.ok, [x.message for x in r.diagnostics]
    y = set(r.outputs[0].flatten().tolist())
    assert y == {float(np.float32(1 - 0.999))}                        # the golden's constant, exactly
    assert float(np.float32(1.0 - float(np.float32(0.999)))) not in y  # not the rounding's


@pytest.mark.skipif(NO_GXX, reason="g++ is required to build the kernel")
def test_a_reciprocal_is_one_instruction_not_a_division(tmp_path):
    """1 / (1 + exp(-x)) is one rounding either way: Reciprocal, not Duplicate(1) and Div (Div is the
    slowest vector API in the fitted cost model)."""
    task = load_task("sigmoid")
    src = lower(task).source
    device = src.split("namespace optiling")[0]
    assert "Reciprocal(" in device and "Div(" not in device and "Duplicate(slot[1], 1.0f" not in device
    path = tmp_path / "sigmoid.cpp"
    path.write_text(src)
    report = check_kernel(path, task, chip="910B2", cases="quick")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases if not c.passed]


def test_expression_that_matches_only_by_coincidence_is_not_chosen(tmp_path):
    """beta1 and beta1 ** step are equal while step is 1: the int attr is moved to tell them apart."""
    from copilot.lowering.capture import capture

    task = load_task(str(FIXTURES / "lw_adam_step"))
    cap = capture(task)
    exprs = {repr(e) for consts in cap.attr_consts for e in consts.values()}
    assert repr(("sub", ("const", 1.0), ("pow", ("attr", "beta1"), ("attr", "step")))) in exprs
    assert repr(("attr", "beta1")) in exprs                  # beta1 * m keeps the plain attr


def test_in_place_ops_and_numeric_byte_inputs_lower(tmp_path):
    d = tmp_path / "inplace"
    d.mkdir()
    (d / "proto.yaml").write_text(textwrap.dedent("""\
        operator:
          name: inplace
          category: elementwise
          formula: "y"
          attrs: []
          inputs:
          - {name: x, dtype: [float32]}
          - {name: w, dtype: [int8, float32]}
          outputs:
          - {name: y, dtype: [float32]}
        """))
    (d / "golden.py").write_text("import torch\n\n\ndef inplace(x, w):\n    y = x * w\n    y.add_(1.0)\n"
                                 "    return y.sqrt_()\n")
    (d / "cases.yaml").write_text("cases:\n- case_id: 1\n  input_shape: [[4, 9], [4, 9]]\n  dtype: [float32, int8]\n"
                                  "  attrs: {}\n  value_range: [[0, 1], [0, 3]]\n")
    (d / "desc.md").write_text("# inplace\n")
    kernel = lower(str(d))
    assert "DTYPE_W" in kernel.source and "Sqrt(" in kernel.source


def test_public_goldens_capture_as_written():
    for rel, pattern in [("level1/exp", "elementwise"), ("level2/rms_norm", "normalization"),
                         ("level1/masked_scale", "broadcast"), ("level2/apply_adam_w", "broadcast")]:
        task = _public(rel)
        ok, why = supports(task)
        assert ok and why == pattern, (rel, why)


def test_rows_that_fit_are_loaded_once_and_gamma_is_staged_once_per_core():
    """rms_norm reads x in both passes: in MODE_ROWS the second pass reuses the resident tile;
    gamma (one row's worth in every case) is copied in on the core's first tile only."""
    src = lower("rms_norm").source
    assert "if (td_.mode != MODE_ROWS) {   // whole rows: still resident from pass 0" in src
    copy_in = src.split("__aicore__ inline void CopyIn(")[1].split("\n    }\n")[0]
    assert ("if (pass == 1) { if (td_.mode != MODE_ROWS) { CopyLoad0(row0, nr, col0, cw, pitch); } "
            "if (td_.mode != MODE_ROWS || !staged_) { CopyLoad1(row0, nr, col0, cw, pitch); } }") in copy_in
    assert "staged_ = true;" in src
    assert "staged_" not in lower("softmax").source        # nothing there is the same for every row


def test_split_along_an_attr_axis_is_a_run_time_rule():
    """swi_glu chunks its input along `dim` (-1, 0, 1, 2 across cases): the tiling function reads
    the axis from the attr and offsets the second chunk along it."""
    from copilot.lowering import plan_task

    task = _public("level1/swi_glu")
    plan = plan_task(task)
    assert {lr.chunk_axis for lr in plan.loads} == {("attr", "dim")}
    assert {lr.chunk for lr in plan.loads} == {0, 1} and not plan.unserved
    src = lower(task).source
    assert "ldDims[l][ca] /= kLoadChunks[l];" in src and "kLoadChunkAttr[2] = {0, 0}" in src

