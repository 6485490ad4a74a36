"""The fake torch_npu.profiler: records what the fake device ran and writes it in the layout of
the real profiler's output (ASCEND_PROFILER_OUTPUT/kernel_details.csv and api_statistic.csv)."""

from __future__ import annotations

import csv
import enum
import os
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

from tests.fakes import fake_npu_device as _dev


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel(enum.Enum):
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics(enum.Enum):
    PipeUtilization = "PipeUtilization"


class _ExperimentalConfig:
    def __init__(self, **kw):
        self.kw = kw


_BUILTIN = {"matmul": "MatMul", "mm": "MatMul", "max": "ReduceMax", "amax": "ReduceMax"}
_IGNORED = {"size", "dim", "stride", "numel", "is_contiguous", "element_size", "data_ptr", "clone", "npu", "cpu",
            "__get__", "__set__", "__len__", "__iter__", "contiguous", "__repr__", "__format__", "item"}


class _RecordOps(TorchFunctionMode):
    """torch calls outside a fake kernel launch are built-in kernels on the chip."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", str(func))
        if not _dev.STATE["in_kernel"] and name not in _IGNORED and "cann_bench" not in str(func) \
                and isinstance(out, torch.Tensor):
            kernel = _BUILTIN.get(name, name.strip("_").title())
            _dev.record_kernel(f"{kernel}_builtin", kernel, _dev.FLUSH_US.get(kernel, 5.0))
        return out


class profile:
    def __init__(self, activities=None, on_trace_ready=None, experimental_config=None, **kw):
        self.on_trace_ready = on_trace_ready
        self._mode = _RecordOps()

    def __enter__(self):
        _dev.reset()
        _dev.STATE["profiling"] = True
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        _dev.STATE["profiling"] = False
        if self.on_trace_ready:
            self.on_trace_ready(self)
        return False

    def step(self):
        pass


def tensorboard_trace_handler(dir_name: str, **kw):
    def handler(prof):
        out = Path(dir_name) / f"fakehost_{os.getpid()}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "kernel_details.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["Name", "Type", "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)"])
            for k in _dev.KERNELS:
                w.writerow([k["name"], k["type"], "AI_VECTOR_CORE", f"{k['start']:.3f}", f"{k['dur']:.3f}", "0"])
        with open(out / "api_statistic.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["Device_id", "Level", "API Name", "Time(us)", "Count"])
            for name, count in _dev.APIS.items():
                w.writerow(["0", "runtime", name, "10.0", str(count)])
    return handler
