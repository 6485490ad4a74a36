"""Goldens that cannot be traced, recognised by what they compute.

`make_fx` stops at a Python decision on a tensor's value (`int(t)`, `.item()`: the aten op
`_local_scalar_dense`), so a golden written as a data-dependent loop (greedy NMS) has no graph. Such
a golden is matched against a small library of *semantic models*: each model names the operator it
stands for, says which inputs and attrs play its roles (from the proto and the cases' shapes alone),
holds a reference implementation and a set of probe inputs, and plans its own kernel. A model is
accepted only when the golden, called as the harness calls it, returns exactly the model's outputs
(dtype, shape and every value) on every probe; otherwise the task is refused with one line naming
the model and the first probe that told them apart. The kernel is judged against the real golden on
every case afterwards, like any other lowering.

Adding a model: write a module with a `MODEL = SemanticModel(...)` and list it in `_MODEL_MODULES`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from copilot.errors import Unsupported

_MODEL_MODULES = ("copilot.lowering.nms",)

# What a trace says when the golden decides on a tensor's value in Python.
_DATA_DEPENDENT = ("DataDependentOutputException", "_local_scalar_dense", "data-dependent", "data dependent",
                   "GuardOnDataDependentSymNode")


@dataclass(frozen=True)
class Probe:
    """One probe: the tensors by role, the attrs by name, and what it tests (for the refusal)."""

    what: str
    tensors: dict[str, Any]
    attrs: dict[str, Any]


@dataclass(frozen=True)
class SemanticModel:
    name: str
    # roles(task) -> {role: input position} (attr roles are the model's business), or None when
    # the proto cannot be this operator
    roles: Callable[[Any], dict | None]
    reference: Callable[[dict, dict], Any]            # (tensors by role, attrs) -> the golden's output
    probes: Callable[[Any, dict], Iterable[Probe]]    # (task, roles) -> probes
    plan: Callable[[Any, dict], Any]                  # (task, roles) -> the lowering plan


def models() -> list[SemanticModel]:
    return [importlib.import_module(m).MODEL for m in _MODEL_MODULES]


def untraceable(task) -> str | None:
    """Why the golden's trace stops at a data-dependent scalar on the first case, or None when it
    traces (or fails for another reason, which the other planners report)."""
    from copilot.lowering.capture import trace

    if not task.cases:
        return None
    try:
        trace(task, task.cases[0])
    except Unsupported as exc:
        text = str(exc)
        return text.split(": ", 1)[-1] if any(k in text for k in _DATA_DEPENDENT) else None
    return None


def disagreement(task, model: SemanticModel, roles: dict) -> str | None:
    """The first probe on which the golden and the model differ (a one-line description), or None."""
    import torch

    from copilot.lowering.capture import call_golden_roles

    for probe in model.probes(task, roles):
        want = model.reference(probe.tensors, probe.attrs)
        got = call_golden_roles(task, roles, probe.tensors, probe.attrs)
        if not isinstance(got, torch.Tensor):
            return f"the golden refuses or returns no tensor on the probe '{probe.what}'"
        if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(got, want):
            return (f"the golden's output differs from the model's on the probe '{probe.what}' "
                    f"(shape {list(got.shape)} vs {list(want.shape)})")
    return None


def plan_semantic(task):
    """The plan of the first model that reproduces an untraceable golden; None when no model's
    roles fit the proto or the golden traces; Unsupported when the golden is untraceable, some
    model's roles fit and none reproduces it."""
    fitting = [(m, r) for m in models() if (r := m.roles(task)) is not None]
    if not fitting:
        return None
    why = untraceable(task)
    if why is None:
        return None
    misses = []
    for model, roles in fitting:
        miss = disagreement(task, model, roles)
        if miss is None:
            return model.plan(task, roles)
        misses.append(f"{model.name}: {miss}")
    raise Unsupported(f"{task.name}: the golden cannot be traced ({why[:120]}) and no semantic model "
                      f"reproduces it ({'; '.join(misses)})")
