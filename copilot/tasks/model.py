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
    optional: bool = False        # inputs only: a case may omit it (`null`); the golden gets None
    is_list: bool = False         # inputs only: a tensor list (TensorList), one shape per element


@dataclass(frozen=True)
class AttrSpec:
    name: str
    type: str            # float | int | bool | string | list_int | list_float | tensor
    default: Any = None
    required: bool = False
    description: str = ""


# One input of a case: a shape (tensor), None (an omitted optional input) or a list of shapes
# (a tensor list).
InputShape = Any


def element_shapes(shape: InputShape) -> list[tuple[int, ...]]:
    """The tensors one input stands for: none if omitted, one, or one per list element."""
    if shape is None:
        return []
    if isinstance(shape, list):
        return [tuple(s) for s in shape]
    return [tuple(shape)]


@dataclass
class Case:
    id: str
    shapes: list[InputShape]                    # one per proto input: tuple | None | list[tuple]
    dtypes: list[str | None]                    # one per proto input; None where omitted
    attrs: dict[str, Any]                       # complete: proto defaults filled in
    value_ranges: list[tuple[float, float]]     # one per input; may hold inf / nan
    note: str = ""
    given_none: tuple[str, ...] = ()            # attrs the case itself sets to None

    def numel(self, i: int) -> int:
        return sum(math.prod(s) for s in element_shapes(self.shapes[i]))

    def present(self, i: int) -> bool:
        return self.shapes[i] is not None

    @property
    def plain(self) -> bool:
        """Every input given as one tensor (no omitted input, no tensor list)."""
        return all(s is not None and not isinstance(s, list) for s in self.shapes)

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
        return f"case {self.id}: {shapes_text(self.shapes)} {'/'.join(dict.fromkeys(d for d in self.dtypes if d))}"


def shapes_text(shapes: list[InputShape]) -> str:
    """`1024x1024 [96x64,96x32] -`: a tensor, a tensor list, an omitted input."""
    def one(s):
        return "x".join(map(str, s)) or "scalar"
    parts = []
    for s in shapes:
        if s is None:
            parts.append("-")
        elif isinstance(s, list):
            parts.append("[" + ",".join(one(e) for e in s) + "]")
        else:
            parts.append(one(s))
    return " ".join(parts)


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
    # The golden file's own input generator (`get_input`): takes the generated inputs by name and
    # the attrs, returns them reworked to the operator's contract (distinct indices, legal boxes).
    input_fn: Callable[..., Any] | None = field(default=None, repr=False)
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
                if d is not None:
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
