"""Absent optional inputs in the generic capture and plan: a case traces with its absent inputs
as None, its pattern of absent inputs is a variant of its own (selected in the tiling function
by `GetOptionalInputShape`), every variant reads from one union of loads, and a case whose
pattern no traced case had is refused by the tiling, never computed as another pattern."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.lowering import lower
from copilot.lowering.plan import build_plan
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_optional_bias"
NO_GXX = shutil.which("g++") is None


def _task(case_ids=None):
    task = load_task(str(FIXTURE))
    if case_ids is None:
        return task
    return replace(task, cases=[c for c in task.cases if c.id in case_ids])


def test_each_pattern_of_absent_inputs_is_a_variant_over_one_set_of_loads():
    plan = build_plan(_task())
    assert len(plan.programs) == 4 and not plan.unserved
    assert [(l.input, l.chunks) for l in plan.loads] == [(0, 1), (1, 1), (2, 1)]
    # the variant of case 4 (no scale, no bias) reads x only
    v4 = next(v for v, members in enumerate(plan.variant_cases) if members == [3])
    prog = plan.programs[v4]
    assert sorted(prog.nodes[n].params["load"] for n in range(len(prog.nodes)) if prog.nodes[n].op == "load") == [0]
    presence = {c[1][1]: c[3] for c in plan.conditions[v4] if c[1][0] == "present"}
    assert presence == {1: False, 2: False}


def test_the_tiling_reads_presence_from_the_optional_shapes():
    tiling = lower(_task()).source.split("namespace optiling")[1]
    assert "context->GetOptionalInputShape(1) != nullptr" in tiling
    assert "kPresence[NUM_INPUTS] = {2, -1, -1}" in tiling
    # traced with every input given, a case that leaves one out is refused
    assert "kPresence[NUM_INPUTS] = {2, 1, 1}" in lower(_task(["1"])).source
    assert "kPresence[NUM_INPUTS] = {2, 0, 0}" in lower(_task(["4"])).source


def _run(kernel_task, judged_task, tmp_path, cases):
    path = tmp_path / "opt.cpp"
    path.write_text(lower(kernel_task).source)
    return check_kernel(path, judged_task, chip="910B2", cases=cases)


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_every_pattern_of_absent_inputs_passes(tmp_path):
    report = _run(_task(), _task(), tmp_path, "all")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    assert report.compiled and not failed and len(report.cases) == 4, failed


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_a_pattern_no_traced_case_had_is_refused_by_the_tiling(tmp_path):
    # lowered from case 1 (scale and bias given), judged on case 4 (neither): refused, not computed
    report = _run(_task(["1"]), _task(), tmp_path, "4")
    assert [c.passed for c in report.cases] == [False]
    assert "RUN.TILING" in {d.id for d in report.diagnostics}
