"""What an operator task is: its prototype (inputs, outputs, attrs), its cases and its golden."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

# An input of at most this many elements belongs to the quick tier (issue 2: "at most 1M").
QUICK_MAX_ELEMENTS = 1 << 20
# How many of the largest cases make the default performance tier.
PERF_CASES = 3


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtypes: tuple[str, ...]
    description: str = ""
    compare: bool = True          # outputs only: judged at all (public layout's `compare`)
    int_tolerance: int = 0        # outputs only: integer outputs may differ by this much
                                  # (our extension, for quantised values at rounding ties)


@dataclass(frozen=True)
class AttrSpec:
    name: str
    type: str            # float | int | bool | string | list_int | list_float
    default: Any = None
    required: bool = False
    description: str = ""


@dataclass
class Case:
    id: str
    shapes: list[tuple[int, ...]]
    dtypes: list[str]
    attrs: dict[str, Any]                       # complete: proto defaults filled in
    value_ranges: list[tuple[float, float]]     # one per input; may hold inf / nan
    note: str = ""

    def numel(self, i: int) -> int:
        return math.prod(self.shapes[i])

    @property
    def max_numel(self) -> int:
        return max((self.numel(i) for i in range(len(self.shapes))), default=0)

    @property
    def total_numel(self) -> int:
        return sum(self.numel(i) for i in range(len(self.shapes)))

    @property
    def is_quick(self) -> bool:
        return self.max_numel <= QUICK_MAX_ELEMENTS

    def label(self) -> str:
        shapes = " ".join("x".join(map(str, s)) or "scalar" for s in self.shapes)
        return f"case {self.id}: {shapes} {'/'.join(dict.fromkeys(self.dtypes))}"


@dataclass
class Task:
    name: str                    # directory (or file) name, snake_case
    op_name: str                 # the prototype's operator name, e.g. RmsNorm
    path: Path
    kind: str                    # "cann" (task directory) | "kernelbench" (Model file)
    category: str
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    attrs: list[AttrSpec]
    cases: list[Case]
    golden: Callable[..., Any] = field(repr=False)
    oracle_fn: Callable[..., Any] | None = field(default=None, repr=False)
    bench_fn: Callable[..., Any] | None = field(default=None, repr=False)
    difficulty: str = ""
    formula: str = ""
    description: str = ""
    schema: str = ""
    desc_text: str = ""          # desc.md
    builtin: bool = False
    # KernelBench tasks build their inputs themselves and are judged with allclose.
    make_inputs_fn: Callable[[], list] | None = field(default=None, repr=False)

    @property
    def precision_mode(self) -> str:
        return "allclose" if self.kind == "kernelbench" else "standard"

    @property
    def dtypes(self) -> list[str]:
        """Every dtype any case uses, in first-seen order."""
        seen: dict[str, None] = {}
        for case in self.cases:
            for d in case.dtypes:
                seen.setdefault(d, None)
        return list(seen)

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == str(case_id):
                return c
        raise KeyError(case_id)

    def quick_cases(self) -> list[Case]:
        quick = [c for c in self.cases if c.is_quick]
        if quick:
            return quick
        return [min(self.cases, key=lambda c: c.max_numel)] if self.cases else []

    def perf_cases(self) -> list[Case]:
        ranked = sorted(self.cases, key=lambda c: (-c.total_numel, c.id))
        return sorted(ranked[:PERF_CASES], key=lambda c: self.cases.index(c))
