"""Every L5 exemplar compiles and passes its built-in task's quick cases in the sim backend."""

from __future__ import annotations

import shutil

import pytest

from knowledge.cards import load_cards

EXEMPLARS = [c for c in load_cards() if c.level == "L5"]
# Beyond the quick tier: cases that take a code path no quick case reaches.
EXTRA_CASES = {"add": "quick,2"}   # case 2 keeps the shared [768] row in UB


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")
@pytest.mark.parametrize("card", EXEMPLARS, ids=[c.id for c in EXEMPLARS])
def test_exemplar_passes_in_the_sim(card):
    from copilot.backends.sim import check_kernel
    from copilot.tasks import load_task

    task = load_task(card.task)
    cases = EXTRA_CASES.get(card.task, "quick")
    if cases.startswith("quick,"):
        cases = ",".join([c.id for c in task.quick_cases()] + cases.split(",")[1:])
    report = check_kernel(card.kernel_path, task, chip="910B2", cases=cases)
    errors = [(d.id, d.line, d.message) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled, errors
    assert not errors
    assert report.correct, [c for c in report.cases if not c.passed]
    # No warnings either: an exemplar shows the clean way (flags before scalar reads, exact copies).
    assert not report.diagnostics, [(d.id, d.line, d.message) for d in report.diagnostics]
