"""The task loader: the public layout, KernelBench files, tiers, and one clear error per bad task."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from copilot.errors import BadInput
from copilot.tasks import load_task, select_cases


def test_valid_task_loads_with_defaults_filled(task_dir):
    task = load_task(task_dir)
    assert task.name == "scaled_tanh" and task.op_name == "ScaledTanh"
    assert [i.name for i in task.inputs] == ["x"]
    assert task.case("3").attrs == {"scale": 1.0}          # default from the proto
    assert task.case("3").value_ranges[0] == (float("-inf"), float("inf"))
    assert task.dtypes == ["float16", "float32", "bfloat16"]


def test_quick_tier_is_cases_of_at_most_1m_elements(task_dir):
    task = load_task(task_dir)
    assert [c.id for c in select_cases(task, "quick")] == ["1", "2", "3", "5"]
    assert [c.id for c in select_cases(task, "all")] == ["1", "2", "3", "4", "5"]
    assert [c.id for c in select_cases(task, "2,4")] == ["2", "4"]
    assert "4" in [c.id for c in select_cases(task, "perf")]


def test_quick_tier_falls_back_to_smallest_case(task_dir):
    (task_dir / "cases.yaml").write_text(
        "cases:\n- {case_id: 7, input_shape: [[4096, 4096]], dtype: [float16]}\n"
        "- {case_id: 8, input_shape: [[2048, 2048]], dtype: [float32]}\n")
    assert [c.id for c in load_task(task_dir).quick_cases()] == ["8"]


def test_cases_csv_with_python_literals(task_dir):
    (task_dir / "cases.yaml").unlink()
    (task_dir / "cases.csv").write_text(
        "operator,case_id,input_shape,dtype,attrs,value_range,note\n"
        "ScaledTanh,1,\"[[33, 127]]\",\"['float16']\",{'scale': 2.0},\"['-inf', 'inf']\",inf case\n"
        "ScaledTanh,2,\"[[1000003]]\",\"['bfloat16']\",{},[-1, 1],long\n")
    task = load_task(task_dir)
    assert task.case("1").shapes == [(33, 127)] and task.case("1").attrs["scale"] == 2.0
    assert task.case("2").dtypes == ["bfloat16"]


def test_unknown_case_id_names_the_cases(task_dir):
    with pytest.raises(BadInput, match=r"no case '9' \(cases: 1, 2, 3, 4, 5"):
        select_cases(load_task(task_dir), "9")


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture changed: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new))


# Each malformed task: how to break it, and the words its one-line message must contain.
MALFORMED = {
    "missing proto": (lambda d: (d / "proto.yaml").unlink(), r"missing proto\.yaml"),
    "missing golden": (lambda d: (d / "golden.py").unlink(), r"missing golden\.py"),
    "missing cases": (lambda d: (d / "cases.yaml").unlink(), r"missing cases\.yaml"),
    "unreadable yaml": (lambda d: _write(d / "proto.yaml", "operator:\n  name: [unclosed\n"),
                        r"proto\.yaml: line \d+, column \d+: unreadable YAML"),
    "unknown dtype in proto": (lambda d: _replace(d / "proto.yaml", "[float16, bfloat16, float32]}",
                                                  "[float16, complex32]}"),
                               r"unknown dtype 'complex32'"),
    "unknown dtype in case": (lambda d: _replace(d / "cases.yaml", "dtype: [float32], attrs: {scale: 2.0}",
                                                 "dtype: [float128], attrs: {scale: 2.0}"),
                              r"case 2, input 'x': unknown dtype 'float128'"),
    "golden function missing": (lambda d: _replace(d / "golden.py", "def scaled_tanh", "def something_else"),
                                r"no golden function: define `def scaled_tanh"),
    "golden import raises": (lambda d: _write(d / "golden.py", "import torch\nraise RuntimeError('boom')\n"),
                             r"importing it raised RuntimeError: boom"),
    "shape count mismatch": (lambda d: _replace(d / "cases.yaml", "input_shape: [[67, 67]]",
                                                "input_shape: [[67, 67], [67]]"),
                             r"case 5: input_shape has 2 shapes but the proto has 1 inputs"),
    "negative dim": (lambda d: _replace(d / "cases.yaml", "[[67, 67]]", "[[67, -1]]"),
                     r"case 5: shape of input 'x' must be a list of non-negative integers"),
    "attr not in proto": (lambda d: _replace(d / "cases.yaml", "attrs: {scale: 0.5}", "attrs: {scael: 0.5}"),
                          r"case 1: attr\(s\) 'scael' not in the proto \(declared: scale\)"),
    "value range malformed": (lambda d: _replace(d / "cases.yaml", "value_range: [-4, 4]", "value_range: [-4, huge]"),
                              r"case 1: value_range entry 'huge' is not a number"),
    "value range reversed": (lambda d: _replace(d / "cases.yaml", "value_range: [-4, 4]", "value_range: [4, -4]"),
                             r"case 1: value_range \[4.0, -4.0\] has lo > hi"),
    "path escapes task dir": (lambda d: ((d / "golden.py").unlink(),
                                         os.symlink(d.parent / "outside.py", d / "golden.py"),
                                         _write(d.parent / "outside.py", "def scaled_tanh(x, scale=1.0): return x\n")),
                              r"golden\.py: resolves to .*outside\.py, outside the task directory"),
    "dtype not allowed by proto": (lambda d: _replace(d / "cases.yaml", "dtype: [float32], attrs: {scale: 2.0}",
                                                      "dtype: [int32], attrs: {scale: 2.0}"),
                                   r"input 'x' has dtype int32, which the proto does not allow"),
    "attr of wrong type": (lambda d: _replace(d / "cases.yaml", "attrs: {scale: 0.5}", "attrs: {scale: fast}"),
                           r"attr 'scale' = 'fast' is not a float"),
    "our former int_tolerance key": (lambda d: _replace(d / "proto.yaml", "{name: y, dtype: [float16, bfloat16, float32]}",
                                                        "{name: y, dtype: [float16, bfloat16, float32], int_tolerance: 1}"),
                                     r"\(y\): int_tolerance is no longer read; .*precision_thresholds: \{int8: 1\}"),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_task_gives_one_clear_line_and_exit_2(kind, task_dir, cli):
    breaker, pattern = MALFORMED[kind]
    breaker(task_dir)
    with pytest.raises(BadInput, match=pattern):
        load_task(task_dir)
    code, out, err = cli("tasks", "show", str(task_dir))
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cannpilot: error: "), err
    assert "Traceback" not in err


def test_golden_that_raises_at_run_time_is_bad_input(task_dir, cli):
    _replace(task_dir / "golden.py", "return torch.tanh(x * scale).to(x.dtype)",
             "raise ValueError('unsupported layout')")
    code, _, err = cli("tasks", "show", str(task_dir))
    assert code == 2
    assert "golden raised ValueError: unsupported layout" in err


def test_unknown_task_name_suggests_close_names(cli):
    code, _, err = cli("tasks", "show", "no_such_operator_xyz")
    assert code == 2 and "unknown task 'no_such_operator_xyz'" in err


KERNELBENCH = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """Scaled GELU."""
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
    def forward(self, x):
        return torch.nn.functional.gelu(x) * self.scale

def get_inputs():
    return [torch.randn(16, 257)]

def get_init_inputs():
    return [0.5]
'''


def test_kernelbench_file_becomes_a_one_case_allclose_task(tmp_path):
    path = tmp_path / "scaled_gelu.py"
    path.write_text(KERNELBENCH)
    task = load_task(path)
    assert task.kind == "kernelbench" and task.precision_mode == "allclose"
    assert task.cases[0].shapes == [(16, 257)] and task.cases[0].dtypes == ["float32"]
    from copilot.oracle import make_inputs, reference

    ref = reference(task, task.cases[0], make_inputs(task, task.cases[0]))
    assert ref.outputs[0].shape == (16, 257) and ref.oracle[0].dtype.is_floating_point


def test_kernelbench_file_without_get_inputs_is_bad_input(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text(KERNELBENCH.replace("def get_inputs", "def get_inputs_renamed"))
    with pytest.raises(BadInput, match="`get_inputs` is missing"):
        load_task(path)
