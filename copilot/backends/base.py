"""What every backend returns: a Build (did the candidate compile) and a Run (one case's outputs).

Backends (contract, architecture.md): `build(candidate, task, dtypes, chip) -> Build` and
`run(build, task, case, inputs) -> Run`. Times in a Run are labelled: `timing` is "measured" on an
NPU and "estimate" from a cost model; the sim backend leaves `time_us` to the cost model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from copilot.diagnostics import Diagnostic


@dataclass
class PipeTimes:
    """Busy time per pipe, in microseconds (filled by the cost model)."""

    mte2: float = 0.0
    v: float = 0.0
    mte3: float = 0.0
    s: float = 0.0


@dataclass
class Build:
    ok: bool
    diagnostics: list[Diagnostic]
    raw_output: str = ""
    artifact: Path | None = None      # the launcher executable (sim) or the built package (npu)
    backend: str = "sim"
    chip: str = ""
    entry: str = ""                   # the kernel entry's name
    source_path: Path | None = None   # the candidate file the diagnostics' lines refer to
    cached: bool = False
    seconds: float = 0.0              # compile time (0 when the cache answered)
    key: str = ""


@dataclass
class Run:
    ok: bool                          # every block finished and no rule reported an error
    outputs: list[Any]                # torch tensors, in the task's output order
    diagnostics: list[Diagnostic]
    block_dim: int = 0
    tiling_key: int = 0
    wall_seconds: float = 0.0         # wall time of the emulation (the sandboxed child)
    time_us: float | None = None      # kernel time; None until the cost model fills it
    timing: str = "estimate"          # "estimate" (sim) | "measured" (npu)
    pipe_times: PipeTimes | None = None
    bottleneck: str | None = None
    stdout: str = ""                  # the kernel's printf output (truncated)
    extra: dict = field(default_factory=dict)


class Backend(Protocol):
    name: str

    def build(self, source: Any, task: Any, dtypes: list[str], chip: Any) -> Build: ...

    def run(self, build: Build, task: Any, case: Any, inputs: list[Any]) -> Run: ...
