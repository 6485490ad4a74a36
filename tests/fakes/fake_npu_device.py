"""The fake NPU device of the tests: what the chip does, stood in for by the emulator.

A kernel launch runs the exported kernel through the sim backend (the same file, built with the
emulator's headers) and records a kernel whose duration is the cost model's estimate. torch ops
called while the fake profiler is on are recorded as the built-in kernels the chip would run
(matmul -> MatMul, max -> ReduceMax, others by name), host/device copies as `aclrtMemcpy` API
calls. A fatal rule breach kills the process (a device fault), a kernel the emulator times out
on hangs (the chip would), other rule errors raise like an aicore exception.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import torch

KERNELS: list[dict] = []          # {"name", "type", "start", "dur"}
APIS: dict[str, int] = {}
STATE = {"profiling": False, "clock": 0.0, "in_kernel": 0}
_BUILDS: dict = {}
FLUSH_US = {"MatMul": 40.0, "ReduceMax": 15.0}
# Rule breaches that would fault the chip (out-of-bounds accesses; docs/emulator-contract.md).
FATAL = {"RUN.CRASH", "L2.GM_BOUNDS", "L2.UB_BOUNDS"}


def record_kernel(name: str, type_: str, dur: float) -> None:
    if not STATE["profiling"]:
        return
    KERNELS.append({"name": name, "type": type_, "start": STATE["clock"], "dur": dur})
    STATE["clock"] += dur + 2.0


def record_api(name: str) -> None:
    if STATE["profiling"] and not STATE["in_kernel"]:
        APIS[name] = APIS.get(name, 0) + 1


def reset() -> None:
    KERNELS.clear()
    APIS.clear()
    STATE["clock"] = 0.0


def _output_shape(rule: dict, shapes: list[tuple], attrs: dict) -> tuple:
    if rule.get("axis_attr") and rule.get("last_div", 1) != 1:
        s = list(shapes[rule["like"]])
        a = int(attrs[rule["axis_attr"]])
        s[a] //= rule["last_div"]
        return tuple(s)
    if rule.get("axis_attr"):
        from copilot.export.opspec import reduce_shape

        keep = bool(rule.get("keep_attr") and attrs[rule["keep_attr"]])
        return reduce_shape(tuple(shapes[rule["like"]]), int(attrs[rule["axis_attr"]]), keep)
    if rule["like"] >= 0:
        base = tuple(shapes[rule["like"]])
    else:
        base = tuple(torch.broadcast_shapes(*shapes))
    out = base[:len(base) - rule["drop"]] + (1,) * rule["ones"]
    div = rule.get("last_div", 1)
    return out[:-1] + (out[-1] // div,) if div != 1 else out


def rejoined(kernel: Path, host: Path) -> str:
    """The one-file candidate the emulator builds, from the two halves CANN compiles: op_kernel is
    the device half at the candidate's lines (host lines blank); op_host carries the host half,
    which starts at the candidate line its first comment names, after op_host's own includes, and
    ends with the OpDef the export may have added."""
    device = kernel.read_text().split("\n")
    text = host.read_text()
    first = re.search(r"from line (\d+)", text.split("\n", 1)[0])
    tail = text.split('_tiling_data.h"\n\n', 1)
    hosted = tail[1].split("\n") if len(tail) == 2 else []
    at = int(first.group(1)) - 1 if first else len(device)
    for i, line in enumerate(hosted):
        if at + i < len(device) and not device[at + i].strip():
            device[at + i] = line
        else:
            device.extend(hosted[i:])
            break
    return "\n".join(device)


def launch(op: dict, kernel: Path, args: tuple, chip: str = "910B2"):
    """Run `op` (a manifest entry) on tensors `args` (inputs then attrs, schema order)."""
    from copilot.backends.sim import build, run
    from copilot.costmodel.estimate import OutputShape
    from copilot.dtypes import from_torch
    from copilot.tasks import load_task
    from copilot.tasks.model import Case

    task = load_task(op["task_path"])
    n = len(op["inputs"])
    tensors, attr_vals = list(args[:n]), list(args[n:])
    attrs = {a["name"]: (attr_vals[i] if i < len(attr_vals) else a["default"]) for i, a in enumerate(op["attrs"])}
    dtypes = [from_torch(t.dtype).name for t in tensors]
    shapes = [tuple(t.shape) for t in tensors]
    outs = []
    for k, rule in enumerate(op["output_rules"]):
        dt = dtypes[rule["dtype_like"]] if rule["dtype_like"] is not None else rule["dtype"]
        outs.append(OutputShape(op["outputs"][k], _output_shape(rule, shapes, attrs), dt))
    case = Case(id="npu", shapes=shapes, dtypes=dtypes, attrs=attrs, value_ranges=[(-1.0, 1.0)] * n)
    key = (str(kernel), tuple(dtypes), tuple(o.dtype for o in outs))
    if key not in _BUILDS:
        host = Path(str(kernel).replace("/op_kernel/", "/op_host/"))
        _BUILDS[key] = build(rejoined(kernel, host), task, dtypes + [o.dtype for o in outs], chip)
    b = _BUILDS[key]
    if not b.ok:
        raise RuntimeError("fake device: the kernel binary does not load: "
                           + "; ".join(f"{d.id} {d.message}" for d in b.diagnostics)[:500] + b.raw_output[-500:])
    STATE["in_kernel"] += 1
    try:
        from copilot.backends.sim.runner import default_limits

        limits = default_limits()
        limits.wall_seconds = float(os.environ.get("FAKE_NPU_KERNEL_WALL", limits.wall_seconds))
        r = run(b, task, case, [t.contiguous() for t in tensors], outputs=outs, chip=chip, limits=limits)
    finally:
        STATE["in_kernel"] -= 1
    ids = [d.id for d in r.diagnostics if d.is_error]
    if "RUN.TIMEOUT" in ids:
        while True:                 # the chip would never come back
            time.sleep(60)
    if set(ids) & FATAL:
        os.abort()                  # a device fault takes the process down
    if ids:
        raise RuntimeError(f"EZ9999: aicore exception in {op['op_type']} ({', '.join(dict.fromkeys(ids))})")
    est = r.extra.get("estimate")
    record_kernel(f"{op['op_type']}_fake_kernel", op["op_type"], est.time_us if est else 1.0)
    return r.outputs[0] if len(r.outputs) == 1 else tuple(r.outputs)
