"""The golden runs in a child process bounded by the oracle budget: its temporaries never reach the
caller's memory, a golden that needs more than the budget is one 'not judged' line (CaseTooLarge),
and the outputs that come back are the golden's, bit for bit."""

from __future__ import annotations

import os
import resource

import pytest
import torch

from copilot.errors import BadInput
from copilot.oracle import CaseTooLarge, make_inputs, reference
from copilot.oracle import golden as golden_mod
from copilot.tasks import load_task

# 0.3 GiB: far above the 67x67 case's estimate, far below the 1 GiB temporary below.
BUDGET_GB = "0.3"


def _with_golden(task_dir, body: str):
    (task_dir / "golden.py").write_text("import os\nimport signal\nimport torch\n" + body)
    return load_task(task_dir)


def test_the_golden_runs_in_another_process_and_its_outputs_come_back_equal(task_dir):
    task = _with_golden(task_dir, (
        "def scaled_tanh(x, scale=1.0):\n"
        "    y = torch.tanh(x * scale).to(x.dtype)\n"
        "    y.view(-1)[0] = os.getpid()\n"                           # exact in fp32 and fp64
        "    return y\n"))
    case = task.case("2")
    inputs = make_inputs(task, case)
    ref = reference(task, case, inputs)
    pid = ref.bench[0].view(-1)[0].item()
    assert pid != os.getpid() and ref.oracle[0].view(-1)[0].item() == pid
    want = torch.tanh(inputs[0] * case.attrs["scale"]).to(inputs[0].dtype)
    assert torch.equal(ref.bench[0].view(-1)[1:], want.view(-1)[1:])
    assert ref.oracle[0].dtype == torch.float64 and ref.outputs[0].shape == (1009, 1021)
    assert ref.outputs[0].dtype == "float32" and ref.outputs[0].name == "y"


def test_temporaries_over_the_budget_are_not_judged_and_never_reach_the_caller(task_dir, monkeypatch):
    # 1 GiB of fp64 temporaries, touched: the estimate (inputs and outputs) cannot see them
    task = _with_golden(task_dir, (
        "def scaled_tanh(x, scale=1.0):\n"
        "    t = torch.ones(1 << 27, dtype=torch.float64)\n"
        "    return torch.tanh(x * scale + t.sum() * 0).to(x.dtype)\n"))
    case = task.case("5")
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", BUDGET_GB)
    before = resource.getrlimit(resource.RLIMIT_AS)
    with pytest.raises(CaseTooLarge) as err:
        reference(task, case, make_inputs(task, case))
    line = str(err.value)
    assert "\n" not in line and "ran out of memory" in line and "budget of 0.3 GiB" in line and "not judged" in line
    # what the estimate counts (it cannot see the temporaries) and how an engineer raises the budget
    assert "its temporaries need more than the oracle budget of 0.3 GiB" in line
    assert "counts only the inputs, their fp64 copies and the outputs" in line
    assert "CANNPILOT_ORACLE_BUDGET_GB raises the budget" in line
    assert resource.getrlimit(resource.RLIMIT_AS) == before         # the caller's limits are untouched


def test_the_same_golden_under_a_budget_that_holds_it_is_judged(task_dir, monkeypatch):
    task = _with_golden(task_dir, (
        "def scaled_tanh(x, scale=1.0):\n"
        "    t = torch.ones(1 << 23, dtype=torch.float64)\n"         # 64 MiB
        "    return torch.tanh(x * scale + t.sum() * 0).to(x.dtype)\n"))
    case = task.case("5")
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", BUDGET_GB)
    assert reference(task, case, make_inputs(task, case)).outputs[0].shape == (67, 67)


def test_a_golden_that_raises_is_bad_input_with_its_message(task_dir):
    task = _with_golden(task_dir, "def scaled_tanh(x, scale=1.0):\n    raise ValueError('no such mode')\n")
    case = task.case("5")
    with pytest.raises(BadInput, match="golden raised ValueError: no such mode"):
        reference(task, case, make_inputs(task, case))


def test_a_golden_process_that_dies_is_not_judged_and_names_the_signal(task_dir):
    task = _with_golden(task_dir, (
        "def scaled_tanh(x, scale=1.0):\n    os.kill(os.getpid(), signal.SIGKILL)\n"))
    case = task.case("5")
    with pytest.raises(CaseTooLarge, match="killed by SIGKILL .*not judged"):
        reference(task, case, make_inputs(task, case))


def test_in_process_mode_gives_the_same_reference(task_dir, monkeypatch):
    task = load_task(task_dir)
    case = task.case("2")
    inputs = make_inputs(task, case)
    child = reference(task, case, inputs)
    monkeypatch.setattr(golden_mod, "GOLDEN_IN_CHILD", False)
    here = reference(task, case, inputs)
    assert all(torch.equal(a, b) for a, b in zip(child.oracle + child.bench, here.oracle + here.bench))
    assert child.outputs == here.outputs


def test_a_correctness_case_whose_golden_outgrows_the_budget_is_not_judged_and_the_cascade_goes_on(task_dir, monkeypatch, tmp_path):
    from copilot.evolution.evaluate import SimEvaluator

    task = _with_golden(task_dir, (
        "def scaled_tanh(x, scale=1.0):\n"
        "    t = torch.ones(1 << 27, dtype=torch.float64)\n"
        "    return torch.tanh(x * scale + t.sum() * 0).to(x.dtype)\n"))
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", BUDGET_GB)
    rows: list = []
    failed, _ = SimEvaluator(workdir=tmp_path / "ev")._judge(task, task.case("5"), {}, tmp_path / "k.cpp", rows, [])
    assert failed is None                  # the next case runs; nothing was built for this one
    assert rows == [{"id": "5", "role": "correctness", "passed": None, "failure_class": "too_large",
                     "message": rows[0]["message"]}]
    assert "not judged" in rows[0]["message"]
