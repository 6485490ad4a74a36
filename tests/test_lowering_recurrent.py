"""The lowering's `recurrent` pattern (copilot/lowering/recurrent.py): nn.LSTM / nn.GRU goldens over
tensor-list weights, the input and attr roles read from the case shapes and checked against the golden,
one MIX kernel (the input projection of all steps and each step's h W_hh^T on the cube, the gate
epilogue on the AIVs)."""

from __future__ import annotations

import functools
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from copilot.errors import Unsupported
from copilot.tasks import load_task

NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
needs_cannbench = pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository")
FIXTURES = Path(__file__).parent / "fixtures" / "lowering_recurrent"


def test_the_model_is_torch_lstm_with_projection_bidirectional_and_two_layers():
    import torch

    from copilot.lowering.recurrent import model

    torch.manual_seed(0)
    S, B, I, H, P, L, D = 5, 3, 7, 6, 4, 2, 2
    ref = torch.nn.LSTM(I, H, num_layers=L, bidirectional=True, proj_size=P, batch_first=True).eval()
    x = torch.randn(B, S, I)
    h0, c0 = torch.randn(L * D, B, P), torch.randn(L * D, B, H)
    sfx = [f"l{l}{'_reverse' if d else ''}" for l in range(L) for d in range(D)]
    w = {k: [getattr(ref, f"{k}_{s}").detach() for s in sfx] for k in ("weight_ih", "weight_hh", "bias_ih",
                                                                       "bias_hh", "weight_hr")}
    with torch.no_grad():
        y, (hn, cn) = ref(x, (h0, c0))
    got = model([x, w["weight_ih"], w["weight_hh"], w["bias_ih"], w["bias_hh"], w["weight_hr"], h0, c0],
                "lstm", H, L, D, P, True, True)
    for a, b in zip(got, (y, hn, cn)):
        assert torch.allclose(a, b, atol=1e-5)


def test_the_model_is_torch_gru_without_bias():
    import torch

    from copilot.lowering.recurrent import model

    torch.manual_seed(1)
    ref = torch.nn.GRU(5, 4, num_layers=1, bias=False).eval()
    x = torch.randn(6, 2, 5)
    with torch.no_grad():
        y, hn = ref(x)
    got = model([x, [ref.weight_ih_l0.detach()], [ref.weight_hh_l0.detach()], None, None, None, None, None],
                "gru", 4, 1, 1, 0, False, False)
    assert torch.allclose(got[0], y, atol=1e-6) and torch.allclose(got[1], hn, atol=1e-6)


@needs_cannbench
@pytest.mark.parametrize("name,cell,roles", [
    ("lstm", "lstm", {"x": "x", "wih": "weight_ih", "whh": "weight_hh", "bih": "bias_ih", "bhh": "bias_hh",
                      "whr": "weight_hr", "h0": "h0", "c0": "c0"}),
    ("gru", "gru", {"x": "x", "wih": "weight_ih", "whh": "weight_hh", "bih": "bias_ih", "bhh": "bias_hh",
                    "h0": "h0"}),
])
def test_public_recurrent_tasks_plan_with_their_roles(name, cell, roles):
    from copilot.lowering.recurrent import plan_recurrent

    task = load_task(str(CANNBENCH / "level4" / name))
    plan = plan_recurrent(task)
    assert plan.cell == cell
    assert {k: task.inputs[i].name for k, i in plan.roles.items()} == roles
    attr = {k: (task.attrs[v[1]].name if v[0] == "attr" else v[1]) for k, v in plan.attrs.items()}
    assert attr == {"hidden": "hiddenSize", "layers": "numLayers", "bidir": "bidirectional", "bias": "bias",
                    "batch_first": "batchFirst", "proj": "projSize" if name == "lstm" else 0}
    src = plan.render({})
    assert "REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm_, &t_.cube)" in src
    assert "CrossCoreSetFlag<1, PIPE_MTE3>(LAYER_FLAG)" in src


@needs_cannbench
def test_a_golden_the_model_does_not_match_is_refused_in_one_line():
    from copilot.lowering.recurrent import plan_recurrent

    task = load_task(str(CANNBENCH / "level4" / "gru"))
    gold = task.golden

    @functools.wraps(gold)          # the same signature: called by input names as the golden is
    def doubled(*a, **k):           # the hidden state of a different cell
        y, hn = gold(*a, **k)
        return y * 2, hn
    with pytest.raises(Unsupported, match="does not match an LSTM / GRU model") as exc:
        plan_recurrent(replace(task, golden=doubled))
    assert "\n" not in str(exc.value)


@needs_cannbench
def test_tensor_list_goldens_that_are_not_recurrent_are_left_to_the_list_planner():
    from copilot.lowering.recurrent import plan_recurrent

    tasks = [p for p in CANNBENCH.glob("*/foreach_*") if p.is_dir()]
    assert tasks
    assert plan_recurrent(load_task(str(tasks[0]))) is None


def _check(task, cases, tmp_path):
    from copilot.backends.sim import check_kernel
    from copilot.lowering import lower

    path = tmp_path / f"{task.name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == (len(task.cases) if cases == "all" else len(cases.split(",")))


def test_roles_come_from_shapes_not_names():
    """The fixture names its attrs units / depth / two_way / proj / batch_major and has an unused int attr
    equal to the hidden size in one case."""
    from copilot.lowering.recurrent import plan_recurrent

    task = load_task(str(FIXTURES / "lw_lstm"))
    plan = plan_recurrent(task)
    attr = {k: (task.attrs[v[1]].name if v[0] == "attr" else v[1]) for k, v in plan.attrs.items()}
    assert plan.cell == "lstm" and attr == {"hidden": "units", "layers": "depth", "bidir": "two_way", "proj": "proj",
                                            "bias": "with_bias", "batch_first": "batch_major"}


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_every_case_of_the_fixture_passes_the_emulator(tmp_path, monkeypatch):
    """Two layers x two directions with a projection and h0 / c0; batch-first without bias; two layers
    (fp16: one build; the public runs below cover fp32 and bf16)."""
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "2")
    _check(load_task(str(FIXTURES / "lw_lstm")), "all", tmp_path)


@pytest.mark.slow
@needs_cannbench
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name,cases", [("lstm", "4,10,11,12,15,20"), ("gru", "8,12,18,20")])
def test_public_recurrent_cases_pass_the_emulator(name, cases, tmp_path, monkeypatch):
    """lstm: bidirectional (4), batch-first (10), no bias (11), bf16 bidirectional (12), h0 / c0 (15), a
    projection over two layers (20); gru: two layers x two directions (8), no bias (12), h0 (18), the smallest case (20)."""
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "2")
    _check(load_task(str(CANNBENCH / "level4" / name)), cases, tmp_path)
