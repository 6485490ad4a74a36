"""A fake torch_npu for tests (put tests/fakes/npu_site on PYTHONPATH). It stands in only for what
the chip does: tensors stay on the CPU, `Tensor.npu()` / `.cpu()` are host/device copies the
profiler sees, and kernels run through the emulator (tests/fakes/fake_npu_device.py)."""

from __future__ import annotations

import os
import types

import torch

from tests.fakes import fake_npu_device as _dev

__version__ = os.environ.get("FAKE_TORCH_NPU_VERSION", torch.__version__.split("+")[0] + ".post1")

_cpu = torch.Tensor.cpu


def _to_npu(self, *a, **k):
    _dev.record_api("aclrtMemcpy")
    out = self.clone()
    return out


def _to_cpu(self, *a, **k):
    _dev.record_api("aclrtMemcpy")
    return _cpu(self, *a, **k)


torch.Tensor.npu = _to_npu
torch.Tensor.cpu = _to_cpu

npu = types.SimpleNamespace(
    is_available=lambda: int(os.environ.get("FAKE_NPU_DEVICES", "1")) > 0,
    device_count=lambda: int(os.environ.get("FAKE_NPU_DEVICES", "1")),
    get_device_name=lambda i=0: os.environ.get("FAKE_NPU_DEVICE_NAME", "Ascend910B2"),
    set_device=lambda i: None,
    current_device=lambda: 0,
    synchronize=lambda *a: None,
)
torch.npu = npu

from . import profiler  # noqa: E402,F401
