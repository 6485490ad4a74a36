"""The dtypes Cannpilot knows, by their task-file names, with their torch, GE and C++ spellings."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class DType:
    name: str          # as written in tasks: "float16"
    torch: torch.dtype
    ge: str            # ge::DataType enumerator: "DT_FLOAT16"
    cpp: str           # AscendC kernel type: "half"
    itemsize: int
    is_float: bool


_ALL = [
    DType("float16", torch.float16, "DT_FLOAT16", "half", 2, True),
    DType("bfloat16", torch.bfloat16, "DT_BF16", "bfloat16_t", 2, True),
    DType("float32", torch.float32, "DT_FLOAT", "float", 4, True),
    DType("int8", torch.int8, "DT_INT8", "int8_t", 1, False),
    DType("int16", torch.int16, "DT_INT16", "int16_t", 2, False),
    DType("int32", torch.int32, "DT_INT32", "int32_t", 4, False),
    DType("int64", torch.int64, "DT_INT64", "int64_t", 8, False),
    DType("uint8", torch.uint8, "DT_UINT8", "uint8_t", 1, False),
    DType("bool", torch.bool, "DT_BOOL", "bool", 1, False),
]

DTYPES: dict[str, DType] = {d.name: d for d in _ALL}
ALIASES = {"fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32",
           "float": "float32"}
FLOAT_DTYPES = ("float16", "bfloat16", "float32")


def dtype(name: str) -> DType:
    """The DType for a task-file name or a common alias; KeyError for anything else."""
    key = ALIASES.get(name, name)
    return DTYPES[key]


def from_torch(t: torch.dtype) -> DType:
    for d in _ALL:
        if d.torch == t:
            return d
    raise KeyError(str(t))
