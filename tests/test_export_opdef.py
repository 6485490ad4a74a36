"""The OpDef the lowering and the export write: one dtype combination per column, optional inputs
marked OPTIONAL, from the task's proto."""

from __future__ import annotations

import re

from copilot.export.opdef import dtype_columns, opdef_source


def _columns(src: str, name: str) -> list[str]:
    m = re.search(rf'"{name}"\)\s*\.ParamType\((\w+)\)\s*\.DataType\(\{{([^}}]*)\}}\)', src)
    return [m.group(1)] + [d.strip().removeprefix("ge::") for d in m.group(2).split(",")]


def test_lists_of_one_length_pair_by_position():
    assert dtype_columns([("x", ("float16", "float32")), ("y", ("float16", "float32"))]) == \
        [("float16", "float16"), ("float32", "float32")]


def test_lists_of_other_lengths_combine_and_equal_lists_move_together():
    data = ("float16", "float32", "int32")
    cols = dtype_columns([("x", data), ("index", ("int32", "int64")), ("y", data)])
    assert len(cols) == 6 and len(set(cols)) == 6
    assert all(x == y for x, _, y in cols)                          # y follows x, as in gather
    assert {(x, i) for x, i, _ in cols} == {(x, i) for x in data for i in ("int32", "int64")}


def test_opdef_marks_optional_inputs_and_lists_every_combination():
    src = opdef_source("GatherCustom", "gather", [("x", ("float16", "int8")), ("index", ("int32", "int64", "int8")),
                                                  ("bias", ("float16", "int8"))],
                       [("y", ("float16", "int8"))], [], ["ascend910b"], optional=("bias",))
    x, idx, bias, y = (_columns(src, n) for n in ("x", "index", "bias", "y"))
    assert x[0] == idx[0] == y[0] == "REQUIRED" and bias[0] == "OPTIONAL"
    assert len(x) == len(idx) == len(y) == 1 + 6
    assert list(zip(x[1:], idx[1:])) == [("DT_FLOAT16", "DT_INT32"), ("DT_FLOAT16", "DT_INT64"),
                                         ("DT_FLOAT16", "DT_INT8"), ("DT_INT8", "DT_INT32"),
                                         ("DT_INT8", "DT_INT64"), ("DT_INT8", "DT_INT8")]
    assert x[1:] == y[1:] == bias[1:]
