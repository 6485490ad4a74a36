"""Kernel times from the torch_npu profiler's output, following CANN-Bench §4.5.

The profiled region is, per repeat, the clock warm-up / cache flush (a MatMul and a ReduceMax)
then one call of the operator. Reading `kernel_details.csv` in start order, the flush kernels
split the stream into calls; every other kernel between two flushes belongs to that call and
their durations are summed. The median over repeats is the call's time. `api_statistic.csv`
tells whether the call copied memory between host and device (a CPU fallback).
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass, field
from pathlib import Path

FLUSH_MARKERS = ("matmul", "reducemax", "reduce_max")
FALLBACK_APIS = ("aclrtmemcpy",)


@dataclass
class KernelRecord:
    name: str
    type: str
    start_us: float
    duration_us: float

    @property
    def is_flush(self) -> bool:
        key = (self.type + " " + self.name).lower().replace(" ", "")
        return any(m in key for m in FLUSH_MARKERS)


@dataclass
class ProfileResult:
    calls: list[list[KernelRecord]] = field(default_factory=list)   # per repeat: the call's kernels
    api_counts: dict[str, int] = field(default_factory=dict)
    failure: str | None = None          # "no_npu_kernel" | "cpu_fallback" | "kernel_not_run" | "no_profile"
    message: str = ""

    @property
    def per_call_us(self) -> list[float]:
        return [sum(k.duration_us for k in c) for c in self.calls]

    @property
    def median_us(self) -> float | None:
        xs = self.per_call_us
        return statistics.median(xs) if xs and not self.failure else None


def _float(row: dict, *keys: str) -> float:
    for k in keys:
        v = row.get(k)
        if v not in (None, ""):
            return float(v)
    return 0.0


def read_kernels(path: Path) -> list[KernelRecord]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = [KernelRecord(r.get("Name", ""), r.get("Type", ""), _float(r, "Start Time(us)", "Start Time"),
                        _float(r, "Duration(us)", "Duration")) for r in rows]
    return sorted(out, key=lambda k: k.start_us)


def read_api_counts(path: Path) -> dict[str, int]:
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        return {r.get("API Name", ""): int(float(r.get("Count") or 0)) for r in csv.DictReader(f)}


def find_outputs(profile_dir: Path) -> tuple[Path | None, Path | None]:
    kernels = sorted(profile_dir.rglob("kernel_details.csv"))
    if not kernels:
        return None, None
    k = kernels[-1]
    return k, k.parent / "api_statistic.csv"


def split_calls(kernels: list[KernelRecord], repeats: int) -> list[list[KernelRecord]]:
    """The kernels of each call: the non-flush kernels after each group of flush kernels."""
    calls: list[list[KernelRecord]] = []
    in_flush = False
    for k in kernels:
        if k.is_flush:
            if not in_flush:
                calls.append([])
            in_flush = True
            continue
        in_flush = False
        if not calls:          # a kernel before the first flush: not part of a timed call
            continue
        calls[-1].append(k)
    return calls[-repeats:] if repeats else calls


def parse(profile_dir: Path, repeats: int, op_names: tuple[str, ...] = ()) -> ProfileResult:
    """Per-call kernel times and the anti-cheat verdict. `op_names`: names the submitted kernel may
    carry in the records (its op type, its entry); a call none of whose kernels matches did not run
    the submitted kernel."""
    kpath, apath = find_outputs(Path(profile_dir))
    if kpath is None:
        return ProfileResult(failure="no_profile", message=f"no kernel_details.csv under {profile_dir}")
    res = ProfileResult(calls=split_calls(read_kernels(kpath), repeats), api_counts=read_api_counts(apath))
    copies = {n: c for n, c in res.api_counts.items() if c and any(m in n.lower() for m in FALLBACK_APIS)}
    if copies:
        res.failure = "cpu_fallback"
        res.message = ("host/device copies during the timed calls (" +
                       ", ".join(f"{n} x{c}" for n, c in copies.items()) + "): CPU fallback (SUB-BEH-004)")
    elif len(res.calls) < repeats or any(not c for c in res.calls):
        res.failure = "no_npu_kernel"
        res.message = (f"{sum(1 for c in res.calls if not c)} of {repeats} timed call(s) ran no NPU kernel "
                       "besides the flush (SUB-BEH-004)")
    elif op_names:
        keys = [n.lower().replace("_", "") for n in op_names]
        missing = [i for i, c in enumerate(res.calls)
                   if not any(any(key in k.name.lower().replace("_", "") for key in keys) for k in c)]
        if missing:
            names = sorted({k.name for c in res.calls for k in c})
            res.failure = "kernel_not_run"
            res.message = (f"the submitted kernel ({'/'.join(op_names)}) did not run in {len(missing)} call(s); "
                           f"kernels seen: {', '.join(names)[:200]}")
    return res
