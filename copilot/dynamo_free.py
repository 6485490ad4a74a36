"""Running torch ops on meta tensors without importing `torch._dynamo`.

torch's Python meta kernels and refs (the meta `mul`, every type-promoting ref) are wrapped in
`torch._disable_dynamo`, whose first call imports all of torch._dynamo (with sympy and
torch._inductor, ~1.4 s of a cold `cannpilot lower`) only to call the function with compilation
off. So does every `TorchDispatchMode.__torch_dispatch__` unless the mode's `_should_skip_dynamo`
says False. Nothing of ours runs under torch.compile: `DynamoFreeMode` is the base of our dispatch
modes, `no_dynamo_import` wraps a golden's run on meta tensors without one.
"""

from __future__ import annotations

import gc
import sys
import types
from contextlib import contextmanager

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_DISABLED: list | None = None     # the functions torch wraps in torch._disable_dynamo


@contextmanager
def no_dynamo_import():
    """Inside, a `torch._disable_dynamo` wrapper calls its function without importing dynamo: each
    is given its own function as the disabled form it caches (`__dynamo_disable`), taken away on
    exit. Nothing compiles while dynamo is not imported, so the call is the same; once dynamo is
    imported (a fake-tensor trace of a data-dependent golden) the context does nothing."""
    global _DISABLED
    if "torch._dynamo" in sys.modules:
        yield
        return
    if _DISABLED is None:
        _DISABLED = _disabled_functions()
    marked = [f for f in _DISABLED if "__dynamo_disable" not in f.__dict__]
    for f in marked:
        f.__dict__["__dynamo_disable"] = f
    try:
        yield
    finally:
        for f in marked:
            if f.__dict__.get("__dynamo_disable") is f:
                del f.__dict__["__dynamo_disable"]


def _disabled_functions() -> list:
    """Each `torch._disable_dynamo` wrapper's `fn` (from its closure: `__wrapped__` may skip
    layers). A torch whose wrapper is built otherwise gives none: dynamo is then imported as
    before, slower but the same."""
    try:
        code = torch._disable_dynamo(lambda: None).__code__
        at = code.co_freevars.index("fn")
        wrapped = (f.__closure__[at].cell_contents for f in gc.get_objects()
                   if type(f) is types.FunctionType and f.__code__ is code)
        return [f for f in wrapped if type(f) is types.FunctionType]
    except (AttributeError, ValueError, IndexError, TypeError):
        return []


class DynamoFreeMode(TorchDispatchMode):
    """A TorchDispatchMode that imports no torch._dynamo: its `__torch_dispatch__` is not wrapped in
    `torch._disable_dynamo`, and while it is active the ops it runs are in `no_dynamo_import`."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False            # never compiled

    def __enter__(self):
        quiet = no_dynamo_import()
        quiet.__enter__()
        self.__dict__.setdefault("_quiet", []).append(quiet)     # `with self:` nests in a dispatch
        return super().__enter__()

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            self._quiet.pop().__exit__(None, None, None)


class OpLog(DynamoFreeMode):
    """Runs every aten op as it comes and logs it as (name, args, kwargs): the probes that ask
    which ops a golden runs on meta tensors (pooling, dilation, unique)."""

    def __init__(self):
        super().__init__()
        self.ops: list[tuple[str, tuple, dict]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops.append((func.overloadpacket.__name__, args, kwargs))
        return func(*args, **kwargs)

    def names(self) -> list[str]:
        return [name for name, _, _ in self.ops]
