"""The lowering's reduction structure: short rows transposed in UB (MODE_SHORT), the next tile's
copies issued before this tile's compute, column runs spread over the cores, long rows kept
resident (held queue tiles, in-place slots, single buffers), and the public norm /
softmax cases that exercise them (the emulator runs behind `-m slow`)."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.lowering import lower
from copilot.tasks import load_task

NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"


def _task(root: Path, name: str, golden: str, inputs: str, attrs: str, cases: str):
    d = root / name
    d.mkdir()
    (d / "golden.py").write_text("import torch\n\n\n" + textwrap.dedent(golden))
    (d / "proto.yaml").write_text(f"operator:\n  name: {name}\n  attrs: [{attrs}]\n  inputs:\n"
                                  + textwrap.indent(textwrap.dedent(inputs), "  ")
                                  + "  outputs:\n  - {name: y, dtype: [float16, float32]}\n")
    (d / "cases.yaml").write_text(textwrap.dedent(cases))
    return load_task(str(d))


def _rms(tmp_path):
    return _task(tmp_path, "short_rms", """\
        def short_rms(x, w, eps=1e-6):
            acc = torch.promote_types(x.dtype, torch.float32)
            xa = x.to(acc)
            return (xa * torch.rsqrt(xa.pow(2).mean(-1, keepdim=True) + eps) * w.to(acc)).to(x.dtype)
        """, """\
        - {name: x, dtype: [float16, float32]}
        - {name: w, dtype: [float16, float32]}
        """, "{name: eps, type: float, default: 1.0e-6, required: false}", """\
        cases:
        - {case_id: 1, input_shape: [[257, 2], [2]], dtype: [float16, float16], attrs: {eps: 1.0e-6}, value_range: [-2, 2]}
        - {case_id: 2, input_shape: [[3, 67, 7], [7]], dtype: [float32, float32], attrs: {eps: 1.0e-5}, value_range: [-3, 3]}
        - {case_id: 3, input_shape: [[130, 33], [33]], dtype: [float16, float16], attrs: {eps: 1.0e-6}, value_range: [-1, 1]}
        - {case_id: 4, input_shape: [[9, 100], [100]], dtype: [float32, float32], attrs: {eps: 1.0e-6}, value_range: [-1, 1]}
        - {case_id: 5, input_shape: [[5000, 3], [3]], dtype: [float32, float32], attrs: {eps: 1.0e-6}, value_range: [-1, 1]}
        """)


def _softmax(tmp_path):
    return _task(tmp_path, "short_softmax", """\
        def short_softmax(x, dim=-1):
            acc = torch.promote_types(x.dtype, torch.float32)
            return torch.softmax(x.to(acc), dim=dim).to(x.dtype)
        """, """\
        - {name: x, dtype: [float16, float32]}
        """, "{name: dim, type: int, default: -1, required: false}", """\
        cases:
        - {case_id: 1, input_shape: [[300, 5]], dtype: [float16], attrs: {dim: -1}, value_range: [-4, 4]}
        - {case_id: 2, input_shape: [[64, 2, 31]], dtype: [float32], attrs: {dim: 2}, value_range: [-8, 8]}
        - {case_id: 3, input_shape: [[37, 700]], dtype: [float16], attrs: {dim: 0}, value_range: [-3, 3]}
        - {case_id: 4, input_shape: [[5, 129, 3]], dtype: [float32], attrs: {dim: 1}, value_range: [-3, 3]}
        """)


def test_short_rows_are_transposed_and_only_reductions_emit_them(tmp_path):
    src = lower(_rms(tmp_path)).source
    kernel, tiling = src.split("namespace optiling", 1)
    assert "MODE_SHORT = 4" in kernel and "Gather(dst, shortSrc_, shortIn_, 0, n);" in kernel
    assert "Gather(shortSrc_, src, shortOut_, 0, n);" in kernel       # outputs go back to rows
    assert "kLoadStaged[2] = {0, 1}" in tiling                        # w: one row's values, filled once per core
    assert "ShortRowsTile(td, rows, rowLen" in tiling
    for name in ("relu", "add"):                                       # no reduction: no transposed path
        assert "MODE_SHORT" not in lower(name).source


def test_next_tile_is_copied_in_before_this_one_is_computed():
    src = lower("rms_norm").source
    assert "TQue<QuePosition::VECIN, 2> inQue0_;" in src             # two copies in flight
    assert "CopyAhead(row0 + td_.tileRows" in src
    assert "SplitCopyIn(nu, npass, nrow, ncol);" in src              # long rows: the next chunk or pass


def _long_rms(tmp_path):
    return _task(tmp_path, "long_rms", """\
        def long_rms(x, w, eps=1e-6):
            acc = torch.promote_types(x.dtype, torch.float32)
            xa = x.to(acc)
            return (xa * torch.rsqrt(xa.pow(2).mean(-1, keepdim=True) + eps) * w.to(acc)).to(x.dtype)
        """, """\
        - {name: x, dtype: [float16, float32]}
        - {name: w, dtype: [float16, float32]}
        """, "{name: eps, type: float, default: 1.0e-6, required: false}", """\
        cases:
        - {case_id: 1, input_shape: [[50, 8192], [8192]], dtype: [float32, float32], attrs: {eps: 1.0e-6}, value_range: [-5, 5]}
        - {case_id: 2, input_shape: [[49, 8192], [8192]], dtype: [float16, float16], attrs: {eps: 1.0e-6}, value_range: [-2, 2]}
        - {case_id: 3, input_shape: [[3, 6001], [6001]], dtype: [float32, float32], attrs: {eps: 1.0e-5}, value_range: [-1, 1]}
        - {case_id: 4, input_shape: [[2, 20000], [20000]], dtype: [float32, float32], attrs: {eps: 1.0e-6}, value_range: [-1, 1]}
        """)


def _long_softmax(tmp_path):
    return _task(tmp_path, "long_softmax", """\
        def long_softmax(x, dim=-1):
            acc = torch.promote_types(x.dtype, torch.float32)
            return torch.softmax(x.to(acc), dim=dim).to(x.dtype)
        """, """\
        - {name: x, dtype: [float16, float32]}
        """, "{name: dim, type: int, default: -1, required: false}", """\
        cases:
        - {case_id: 1, input_shape: [[51, 8193]], dtype: [float32], attrs: {dim: -1}, value_range: [-50, 50]}
        - {case_id: 2, input_shape: [[4, 12000]], dtype: [float16], attrs: {dim: 1}, value_range: [-4, 4]}
        - {case_id: 3, input_shape: [[3, 30001]], dtype: [float32], attrs: {dim: -1}, value_range: [-4, 4]}
        """)


def test_long_rows_stay_resident_in_fewer_working_tiles(tmp_path):
    src = lower(_long_rms(tmp_path)).source
    kernel, tiling = src.split("namespace optiling", 1)
    # x (float) is computed in its queue tile in MODE_ROWS, freed after the tile's last pass
    assert "HoldLoad0(slot[2], row0, nr, cw, pitch);" in kernel and "ReleaseHeld();" in kernel
    assert "const uint32_t slots = NUM_SLOTS - td_.holdLoad;" in kernel
    assert "constexpr uint32_t ROW_TMPS = 0;" in kernel              # the row code needs no scratch tile
    assert "holdBytes8" in tiling and "bufferNum = 1;" in tiling      # single buffers when that makes a row fit
    # one-instruction ops write over an operand they read last: softmax's exp and division in place
    soft = lower(_long_softmax(tmp_path)).source
    assert "constexpr uint32_t NUM_SLOTS = 2;" in soft and "Exp(slot[0], slot[0], n);" in soft


def test_quant_quotients_multiply_by_the_reciprocal_only_where_int8_tolerates_it():
    d = CANNBENCH / "level2" / "dynamic_quant"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench dynamic_quant not found at {d}")
    src = lower(load_task(str(d))).source      # round(x / s) to int8, precision_thresholds {int8: 1}
    assert "1.0f / stat_[" in src and "CAST_TRUNC" not in src   # .to(int8) of a rounded value: nothing
    soft = lower("softmax").source         # exp / sum: a float output only scaled: x * (1 / s) as well
    assert "Div(" not in soft.split("namespace optiling")[0] and "= (1.0f / stat_[" in soft


def test_a_quant_epilogue_divides_by_the_rms_through_its_reciprocal(tmp_path):
    """add_rms_norm_dynamic_quant's x / rms reaches the int8 output through round and the per-row
    scale (fp32) through abs and a row max only: x * (1 / rms) is within an ulp there. So it is
    where it feeds a float output through a multiply; a quotient that is then cancelled (x / s - c)
    stays a true Div."""
    d = CANNBENCH / "level3" / "add_rms_norm_dynamic_quant"
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench add_rms_norm_dynamic_quant not found at {d}")
    src = lower(load_task(str(d))).source
    assert "Div(" not in src.split("namespace optiling")[0].split("ComputeColV0")[0]
    assert src.count("= (1.0f / stat_[3][s]);") == 1             # once per row, for both passes that divide
    plain = lower(_task(tmp_path, "div_rms", """\
        def div_rms(x, w, eps=1e-6):
            xa = x.to(torch.float32)
            return (xa / torch.sqrt(xa.pow(2).mean(-1, keepdim=True) + eps) * w.to(torch.float32)).to(x.dtype)
        """, """\
        - {name: x, dtype: [float16, float32]}
        - {name: w, dtype: [float16, float32]}
        """, "{name: eps, type: float, default: 1.0e-6, required: false}", """\
        cases:
        - {case_id: 1, input_shape: [[7, 300], [300]], dtype: [float32, float32], attrs: {eps: 1.0e-6}, value_range: [-2, 2]}
        """)).source
    assert "= (1.0f / stat_[" in plain and "Div(slot[" not in plain
    cancelled = lower(_task(tmp_path, "share_minus", """\
        def share_minus(x, c=0.5):
            return x / x.abs().sum(-1, keepdim=True) - c
        """, "- {name: x, dtype: [float32]}\n", "{name: c, type: float, default: 0.5, required: false}", """\
        cases:
        - {case_id: 1, input_shape: [[7, 300]], dtype: [float32], attrs: {c: 0.5}, value_range: [-2, 2]}
        """)).source
    assert "Div(slot[" in cancelled and "= (1.0f / stat_[" not in cancelled


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("make", [_rms, _softmax, _long_rms, _long_softmax],
                         ids=["rms", "softmax", "long_rms", "long_softmax"])
def test_short_rows_and_column_runs_pass_the_emulator(make, tmp_path):
    task = make(tmp_path)
    path = tmp_path / "k.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    assert report.compiled and report.correct, ([d.message for d in report.diagnostics if d.severity == "error"], failed)


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("rel,cases", [("level2/rms_norm", "15,16,5,18"), ("level2/softmax", "13,16,17"),
                                       ("level2/dynamic_quant", "2,16,18")])
def test_public_short_rows_pass(rel, cases, tmp_path):
    d = CANNBENCH / rel
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench {rel} not found at {d}")
    task = load_task(str(d))
    path = tmp_path / "k.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    assert report.compiled and report.correct, [(c.id, c.failure_class) for c in report.cases if not c.passed]
