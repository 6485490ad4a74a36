"""Run a task's golden on the CPU: the fp64 oracle (truth) and the same-precision bench.

Memory: the oracle widens every float input to fp64, so a case costs about
`sum(elements) * (itemsize + 8)` for the inputs plus the same again for the outputs. Cases whose
estimate exceeds the budget (`CANNPILOT_ORACLE_BUDGET_GB`, default half the machine's memory,
at most 16 GiB) raise `CaseTooLarge`: they are judged for speed only (cost-model estimate), their
correctness is established on the smaller cases of the same task. The estimate cannot see a golden's
temporaries (roi_align's pure-torch fallback materialises 1 GiB gathers, dilation_2d's `unfold`
windows), so the golden runs in a forked child whose address space may grow by the budget at most: a
case whose golden needs more is `CaseTooLarge` too, and the caller's memory never holds the temporaries.

Speed: torch's CPU kernels for fp16 convolutions accumulate in fp32 and round once, but run at
about 1/50 of the fp32 kernels' rate (0.2 GFLOP/s on a 3-D weight gradient). The golden's fp16
convolutions are therefore computed by the fp32 kernels and rounded once to fp16: the same bits,
50x sooner (`tests/test_oracle_convolution.py` holds the two equal).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from copilot.dtypes import from_torch
from copilot.errors import BadInput, CannpilotError
from copilot.oracle.inputs import golden_takes_inputs_by_name
from copilot.sandbox import orphans
from copilot.tasks.model import Case, Task


class CaseTooLarge(CannpilotError):
    """The case would not fit the oracle's memory budget."""


@dataclass(frozen=True)
class OutputSpec:
    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass
class Reference:
    oracle: list[torch.Tensor]      # fp64 truth (integer outputs stay integer)
    bench: list[torch.Tensor]       # same-precision CPU reference, in the output dtypes
    outputs: list[OutputSpec]       # what the kernel must produce


def _memory_total() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 << 30


def oracle_budget_bytes() -> int:
    env = os.environ.get("CANNPILOT_ORACLE_BUDGET_GB")
    if env:
        try:
            return int(float(env) * (1 << 30))
        except ValueError:
            raise BadInput(f"CANNPILOT_ORACLE_BUDGET_GB={env!r} is not a number of GiB") from None
    return min(_memory_total() // 2, 16 << 30)


def estimate_bytes(case: Case) -> int:
    """Peak bytes the oracle needs for this case (inputs, fp64 copies, outputs of both runs)."""
    from copilot.dtypes import dtype as dtype_of

    inputs = sum(case.numel(i) * dtype_of(d).itemsize for i, d in enumerate(case.dtypes) if d)
    widened = sum(case.numel(i) * 8 for i in range(len(case.shapes)))
    # Outputs are rarely larger than the largest input; two runs plus temporaries of the golden.
    return inputs + 3 * widened


def _as_list(result: Any, where: str, n_outputs: int = 0) -> list[torch.Tensor]:
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    if n_outputs == 1 and len(items) != 1 and items and all(isinstance(t, torch.Tensor) for t in items):
        # one proto output and a list of tensors: a tensor-list output (foreach_norm's y), laid out
        # as tensor-list inputs are, its elements flattened back to back in one buffer
        items = [torch.cat([t.detach().reshape(-1) for t in items])]
    out = []
    for i, t in enumerate(items):
        if not isinstance(t, torch.Tensor):
            raise BadInput(f"{where}: output {i} is a {type(t).__name__}, not a tensor")
        out.append(t.detach().contiguous())
    return out


def _widen(t):
    """fp64 copy of a float input (lists element-wise; None stays None)."""
    if isinstance(t, list):
        return [_widen(e) for e in t]
    return t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() else t


def golden_arguments(task: Task, case: Case, inputs: list) -> tuple[list, dict]:
    """Positional and keyword arguments of the golden for one case.

    Inputs go by name when the golden's signature names every proto input (as the public
    harness calls it: gru takes its optional inputs after the attrs, scatter takes `dim` between
    two inputs), else in proto order. Attrs go by keyword; None only where the case says None."""
    attrs = {k: v for k, v in case.attrs.items() if v is not None or k in case.given_none}
    if task.kind == "cann" and golden_takes_inputs_by_name(task):
        return [], {**attrs, **{s.name: x for s, x in zip(task.inputs, inputs)}}
    return list(inputs), attrs


_CONVOLUTIONS = {torch.ops.aten.convolution.default, torch.ops.aten.convolution_backward.default}


class HalfConvolutionsInFloat(TorchDispatchMode):
    """fp16 CPU convolutions (forward, transposed, and their gradients) on the fp32 kernels, with
    one rounding to fp16 at the end, at the fp32 kernels' speed. Torch's own fp16 kernels return the
    same bits on most CPUs; where they round partial sums to fp16 (conv_transpose2d on an AMD EPYC),
    they differ and this is the more exact of the two."""

    def __init__(self) -> None:
        super().__init__()
        self.widened = 0                # convolutions run on the fp32 kernels

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _CONVOLUTIONS and any(isinstance(a, torch.Tensor) and a.dtype == torch.float16
                                         and a.device.type == "cpu" for a in args):
            self.widened += 1
            def widen(a):
                return a.float() if isinstance(a, torch.Tensor) and a.dtype == torch.float16 else a

            out = func(*[widen(a) for a in args], **kwargs)
            if isinstance(out, tuple):
                return tuple(o.half() if isinstance(o, torch.Tensor) else o for o in out)
            return out.half()
        return func(*args, **kwargs)


def _tensors(inputs: list):
    for t in inputs:
        if isinstance(t, (list, tuple)):      # a tensor-list input
            yield from t
        else:
            yield t


# What torch and the C++ runtime say when an allocation is refused (an address-space limit).
_OUT_OF_MEMORY = ("can't allocate memory", "Cannot allocate memory", "std::bad_alloc")


def _call(fn, task: Task, case: Case, inputs: list, label: str) -> list[torch.Tensor]:
    where = f"{task.path if task.kind == 'kernelbench' else task.path / 'golden.py'} ({label}, {case.label()})"
    args, kwargs = golden_arguments(task, case, inputs)
    try:
        half = any(isinstance(t, torch.Tensor) and t.dtype == torch.float16 for t in _tensors(inputs))
        with torch.no_grad(), (HalfConvolutionsInFloat() if half else contextlib.nullcontext()):
            result = fn(*args, **kwargs)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if isinstance(exc, MemoryError) or any(k in first for k in _OUT_OF_MEMORY):
            raise CaseTooLarge(f"{where}: the golden ran out of memory: its temporaries need more than the "
                               f"oracle budget of {oracle_budget_bytes() / 2**30:.1f} GiB (the estimate, ~"
                               f"{estimate_bytes(case) / 2**30:.1f} GiB, counts only the inputs, their fp64 "
                               "copies and the outputs); not judged (CANNPILOT_ORACLE_BUDGET_GB raises the "
                               "budget)") from None
        raise BadInput(f"{where}: golden raised {type(exc).__name__}: {first}") from None
    return _as_list(result, where, len(task.outputs))


def memory_ceiling(extra: int | None = None):
    """A context in which this process's address space may grow by at most `extra` bytes
    (default: the oracle budget plus 4 GiB of slack for thread arenas): a golden whose
    temporaries outgrow it raises CaseTooLarge instead of taking the machine's memory."""
    import contextlib
    import re
    import resource

    @contextlib.contextmanager
    def ceiling():
        old = resource.getrlimit(resource.RLIMIT_AS)
        try:
            with open("/proc/self/status", encoding="ascii") as f:
                size = int(re.search(r"VmSize:\s+(\d+)", f.read()).group(1)) * 1024
            limit = size + (extra if extra is not None else oracle_budget_bytes() + (4 << 30))
            if old[1] != resource.RLIM_INFINITY:
                limit = min(limit, old[1])
            resource.setrlimit(resource.RLIMIT_AS, (limit, old[1]))
        except (OSError, AttributeError, ValueError):
            pass                        # no /proc or no rlimits: the estimate alone guards
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_AS, old)
    return ceiling()


def reference(task: Task, case: Case, inputs: list[torch.Tensor]) -> Reference:
    """The oracle and bench outputs for one case, computed within the oracle budget (see the module
    text): CaseTooLarge when the estimate or the golden's real peak exceeds it."""
    need = estimate_bytes(case)
    budget = oracle_budget_bytes()
    if need > budget:
        raise CaseTooLarge(f"{task.name} {case.label()}: the oracle needs ~{need / 2**30:.1f} GiB, "
                           f"over the budget of {budget / 2**30:.1f} GiB (CANNPILOT_ORACLE_BUDGET_GB); "
                           "judge correctness on the quick tier")
    if not GOLDEN_IN_CHILD:
        return _reference_here(task, case, inputs)
    return _in_child(lambda: _reference_here(task, case, inputs), budget, f"{task.name} {case.label()}")


# Run goldens in a forked child bounded by the budget (off where there is no fork).
GOLDEN_IN_CHILD = hasattr(os, "fork")

# One golden child at a time per process: the session's memory holds at most one budget of temporaries.
_CHILD_LOCK = threading.Lock()


def _vm_size() -> int:
    import re

    with open("/proc/self/status", encoding="ascii") as f:
        return int(re.search(r"VmSize:\s+(\d+)", f.read()).group(1)) * 1024


def _child_setup(budget: int) -> None:
    """In the forked child: die with the parent, one thread, address space at most `budget` more."""
    import ctypes
    import resource

    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    # GNU OpenMP's thread pool does not survive fork: a child that starts a parallel region after
    # the parent has used one hangs; a single thread never touches the pool.
    torch.set_num_threads(1)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _vm_size() + budget
        for cap in (soft, hard):
            if cap != resource.RLIM_INFINITY:
                limit = min(limit, cap)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, AttributeError, ValueError):
        pass                        # no /proc or no rlimits: the estimate alone guards


GOLDEN_FILE_PREFIX = "cannpilot-golden-"


def _shared_file() -> tuple[int | None, str]:
    """(descriptor, path) of an empty file for the child's outputs that outlives no process: an
    anonymous memory file (memfd, not bounded by /dev/shm's size), named by /proc/self/fd, which
    goes with the last descriptor or mapping. Where there is none, a file named after this process
    in /dev/shm (the temp dir when /dev/shm is missing), whose orphans a later run removes."""
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            fd = os.memfd_create(GOLDEN_FILE_PREFIX.rstrip("-"))
            return fd, f"/proc/self/fd/{fd}"
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    _remove_orphans(shm or tempfile.gettempdir())
    fd, path = tempfile.mkstemp(prefix=f"{GOLDEN_FILE_PREFIX}{os.getpid()}-", suffix=".pt", dir=shm)
    os.close(fd)
    return None, path


@functools.lru_cache(maxsize=None)
def _remove_orphans(directory: str) -> None:
    """Once per process: the golden files of processes that are gone (killed before their cleanup)."""
    for path in orphans(directory, GOLDEN_FILE_PREFIX):
        with contextlib.suppress(OSError):
            os.unlink(path)


def _in_child(compute, budget: int, what: str) -> Reference:
    """`compute()` in a forked child under the budget; its Reference comes back through a file in
    shared memory, mapped (not copied) into this process."""
    fd, path = _shared_file()
    try:
        with _CHILD_LOCK:
            pid = os.fork()
            if pid == 0:                # the child: never returns into the caller's code
                code = 1
                try:
                    _child_setup(budget)
                    try:
                        ref = compute()
                        payload = ("ok", ref.oracle, ref.bench, [(o.name, list(o.shape), o.dtype) for o in ref.outputs])
                    except CaseTooLarge as exc:
                        payload = ("too_large", str(exc))
                    except BadInput as exc:
                        payload = ("bad_input", str(exc))
                    except MemoryError:
                        payload = ("too_large", f"{what}: the golden ran out of memory (oracle budget "
                                   f"{budget / 2**30:.1f} GiB); not judged (CANNPILOT_ORACLE_BUDGET_GB "
                                   "raises the budget)")
                    except Exception as exc:            # noqa: BLE001 - one line for the caller
                        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                        payload = ("bad_input", f"{what}: the golden's reference failed: {type(exc).__name__}: {text}")
                    torch.save(payload, path)
                    code = 0
                finally:
                    os._exit(code)
            try:
                _, status = os.waitpid(pid, 0)
            except BaseException:       # interrupted: the child must not outlive the caller
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise
        return _child_result(path, status, budget, what)
    finally:
        with contextlib.suppress(OSError):
            if fd is None:
                os.unlink(path)
            else:
                os.close(fd)


def _child_result(path: str, status: int, budget: int, what: str) -> Reference:
    gib = f"{budget / 2**30:.1f} GiB"
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        raise CaseTooLarge(f"{what}: the golden's process was killed by {sig} (oracle budget {gib}, "
                           "CANNPILOT_ORACLE_BUDGET_GB); not judged")
    if os.waitstatus_to_exitcode(status) != 0 or os.path.getsize(path) == 0:
        raise CaseTooLarge(f"{what}: the golden's process failed before returning its outputs (oracle "
                           f"budget {gib}: likely out of memory); not judged")
    payload = torch.load(path, mmap=True, weights_only=True)
    if payload[0] == "too_large":
        raise CaseTooLarge(payload[1])
    if payload[0] == "bad_input":
        raise BadInput(payload[1])
    _, oracle, bench, outputs = payload
    return Reference(oracle=list(oracle), bench=list(bench),
                     outputs=[OutputSpec(n, tuple(s), d) for n, s, d in outputs])


def _reference_here(task: Task, case: Case, inputs: list[torch.Tensor]) -> Reference:
    bench_fn = task.bench_fn or task.golden
    bench = _call(bench_fn, task, case, inputs, "same-precision run")
    oracle_fn = task.oracle_fn or task.golden
    wide = [_widen(t) for t in inputs]
    oracle = [_widen(t) for t in _call(oracle_fn, task, case, wide, "fp64 oracle run")]
    del wide
    if len(oracle) != len(bench):
        raise BadInput(f"{task.name}: the fp64 run returned {len(oracle)} outputs but the "
                       f"same-precision run {len(bench)}")
    names = [o.name for o in task.outputs]
    specs = []
    for i, t in enumerate(bench):
        try:
            dt = from_torch(t.dtype).name
        except KeyError:
            raise BadInput(f"{task.name}: output {i} has unsupported dtype {t.dtype}") from None
        specs.append(OutputSpec(names[i] if i < len(names) else f"out{i}", tuple(t.shape), dt))
    return Reference(oracle=oracle, bench=bench, outputs=specs)


def smoke_golden(task: Task, cases: list[Case] | None = None) -> None:
    """Run the golden once on the smallest of `cases` (default: of the task's cases): raises
    BadInput if it fails."""
    from copilot.oracle.inputs import make_inputs

    case = min(cases or task.cases, key=lambda c: c.total_numel)
    reference(task, case, make_inputs(task, case))


# What torch says when an op needs values a meta tensor does not have (`.item()`, `nonzero`,
# data-dependent shapes, ops without a meta kernel): the shapes cannot be judged without data.
_NEEDS_VALUES = ("meta", "data-dependent", "data dependent", "item()", "unbacked", "symbolic")


@dataclass(frozen=True)
class ShapeCheck:
    case_id: str
    ok: bool | None           # True: the golden takes the shapes; False: it raised; None: needs values
    detail: str = ""          # the output shapes, or why the case failed / could not be judged


def check_shapes(task: Task, case: Case) -> ShapeCheck:
    """Run the golden on meta tensors: does it take the case's shapes, dtypes and attrs?"""
    from copilot.oracle.inputs import meta_inputs

    args, kwargs = golden_arguments(task, case, meta_inputs(task, case))
    try:
        with torch.no_grad():
            result = task.golden(*args, **kwargs)
        outs = result if isinstance(result, (list, tuple)) else [result]
        shapes = [tuple(t.shape) for t in outs if isinstance(t, torch.Tensor)]
    except Exception as exc:
        text = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        if isinstance(exc, NotImplementedError) or any(k in text.lower() for k in _NEEDS_VALUES):
            return ShapeCheck(case.id, None, f"needs values ({text[:160]})")
        return ShapeCheck(case.id, False, text[:300])
    return ShapeCheck(case.id, True, " ".join("x".join(map(str, s)) or "scalar" for s in shapes))
