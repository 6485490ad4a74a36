"""The built-in lowering agent: a task's PyTorch golden -> one AscendC candidate file.

    lower(task, chip="910B2", knobs=None) -> LoweredKernel(source, knobs, pattern, notes)
    supports(task) -> (bool, reason)
    knob_space(task) / default_knobs(task)

Pipeline: capture (an aten graph per case, attrs bound; `capture.py`, `tracer.py`) -> IR (`ir.py`)
-> plan (variants, pattern, run-time layout rules; `plan.py`) -> emit (`emit.py`, `source.py`).
Anything outside the supported patterns raises `copilot.errors.Unsupported` naming the aten op or
the rule.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from copilot.errors import BadInput, Unsupported
from copilot.lowering.knobs import KNOBS, default_knobs, knob_space, parse_knob, resolve

__all__ = ["LoweredKernel", "lower", "supports", "knob_space", "default_knobs", "parse_knob", "KNOBS",
           "plan_task"]


@dataclass
class LoweredKernel:
    source: str
    knobs: dict
    pattern: str
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _task(task):
    if isinstance(task, str) or hasattr(task, "__fspath__"):
        from copilot.tasks import load_task

        return load_task(task)
    return task


_PLAN_CACHE: dict = {}


def plan_task(task):
    """The lowering plan of a task (cached per task path and golden)."""
    from copilot.lowering.plan import build_plan

    key = (str(getattr(task, "path", task)), getattr(task, "name", ""), tuple(c.id for c in task.cases))
    if key not in _PLAN_CACHE:
        _PLAN_CACHE[key] = build_plan(task)
    return _PLAN_CACHE[key]


def lower(task, chip: str = "910B2", knobs: dict | None = None) -> LoweredKernel:
    """Lower `task` (a Task or a task reference) to one candidate source for `chip`."""
    from copilot.lowering.emit import Emitter

    t0 = time.perf_counter()
    from copilot.chips import load_chip

    profile = load_chip(chip)          # BadInput for an unknown chip
    task = _task(task)
    if getattr(task, "kind", "cann") == "kernelbench":
        raise Unsupported(f"{task.name}: KernelBench-style tasks have no proto (dtypes, attrs); "
                          "the lowering needs a CANN-Bench task directory")
    k = resolve(knobs)
    plan = plan_task(task)
    if plan.unserved and len(plan.unserved) == len(task.cases):
        first = next(iter(plan.unserved.items()))
        raise Unsupported(f"{task.name}: no case can be served (case {first[0]}: {first[1]})")
    if getattr(profile, "arch", 2201) == 2002:
        raise Unsupported(f"{task.name}: chip {profile.name} (arch 2002) has no DataCopyPad, which every "
                          "lowered kernel uses for unaligned rows and tails")
    from copilot.lowering import cube, indexing
    from copilot.lowering.movement import MovementPlan, render

    from copilot.lowering import groupnorm, lists, rotary, rowcombine, rowmove, sinkhorn

    if isinstance(plan, rowmove.RowMovePlan):
        source = rowmove.render(plan, k)
        notes = [f"pattern {plan.pattern}; attrs served: {plan.variants}"]
    elif isinstance(plan, rowcombine.RowCombinePlan):
        source = rowcombine.render(plan, k)
        notes = [f"pattern {plan.pattern}; variants: " + "; ".join(f"{g} -> {o}" for g, o in plan.variants)]
    elif isinstance(plan, rotary.RotaryPlan):
        source = rotary.render(plan, k)
        notes = [f"pattern {plan.pattern}; variants: " +
                 "; ".join(f"{g} -> {layout}, {form}" for g, layout, form in plan.variants)]
    elif isinstance(plan, groupnorm.GroupNormPlan):
        source = groupnorm.render(plan, k)
        notes = [f"pattern {plan.pattern} (group norm); groups {plan.groups_rule}, eps {plan.eps_rule}"]
    elif isinstance(plan, lists.ListNormPlan):
        source = lists.render_norm(plan, k)
        notes = [f"pattern {plan.pattern}; the order: {plan.order_rule[0]} {plan.order_rule[1]}"]
    elif isinstance(plan, sinkhorn.SinkhornPlan):
        source = sinkhorn.render(plan, k)
        notes = [f"pattern {plan.pattern}; rounds {plan.rounds_rule}, eps {plan.eps_rule}"]
    elif isinstance(plan, MovementPlan):
        source = render(plan, k)
        notes = [f"pattern layout; the view's rule: {plan.rule[0]}"]
    elif indexing.is_index_plan(plan):
        source = indexing.render_plan(plan, k)
        notes = [f"pattern {plan.pattern}"]
    elif cube.is_cube_plan(plan):
        source = cube.render(plan, k)
        notes = [f"pattern {plan.pattern}"]
    elif getattr(plan, "renders_itself", False):      # attention / conv plans render their own kernel
        source = plan.render(k)
        notes = [f"pattern {plan.pattern}"]
    else:
        source = Emitter(plan, k, profile.name).emit()
        notes = [f"pattern {plan.pattern}; {len(plan.programs)} variant(s); reduction rule "
                 f"{plan.axis_rule or 'none (elementwise)'}"]
    for cid, why in plan.unserved.items():
        notes.append(f"case {cid} not served: {why} (the tiling function returns GRAPH_FAILED)")
    return LoweredKernel(source, k, plan.pattern, notes + plan.notes, time.perf_counter() - t0)


def supports(task) -> tuple[bool, str]:
    """Whether `task` lowers (at least partly), and why not / which cases are left out."""
    try:
        task = _task(task)
        plan = plan_task(task)
    except (Unsupported, BadInput) as exc:
        return False, str(exc)
    if plan.unserved:
        if len(plan.unserved) == len(task.cases):
            return False, f"no case can be served: {next(iter(plan.unserved.values()))}"
        return True, (f"{plan.pattern}; {len(plan.unserved)} of {len(task.cases)} cases not served: "
                      f"{next(iter(plan.unserved.values()))}")
    return True, plan.pattern
