"""The lowering's `attention` pattern (copilot/lowering/attention.py): two batched products around a
softmax, Q/K/V traced to the inputs (Q and K in parts through one cat), the layout / causal mask /
scale identified against the golden per attr combination and read from the attrs at run time; a MIX
kernel on the Matmul API (S = Q K^T, the row softmax on the AIVs, P V in fp32)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import Unsupported
from copilot.lowering import lower
from copilot.tasks import load_task

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_attention"
NO_GXX = shutil.which("g++") is None
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
needs_cannbench = pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository")


def _plan(path):
    from copilot.lowering.attention import plan_attention

    return plan_attention(load_task(str(path)))


def test_split_q_k_layout_mask_and_scale_come_from_the_attrs():
    p = _plan(FIXTURES / "lw_attention")
    names = [i.name for i in p.task.inputs]
    attrs = [a.name for a in p.task.attrs]
    assert [names[i] for i in p.q] == ["q_a", "q_b"] and [names[i] for i in p.k] == ["k_a", "k_b"]
    assert names[p.v] == "v"
    assert p.layout == ("attr", attrs.index("layout"), {"BNSD": True, "BSND": False})
    assert p.causal == ("attr", attrs.index("causal"), False)
    assert p.scale == ("attr_or_rsqrt", attrs.index("scale"))
    src = lower(p.task).source
    assert 'std::strcmp(attrs->GetAttrPointer<char>(1), "BNSD") == 0' in src
    assert "REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm1_, &t_.mm1, mm2_, &t_.mm2)" in src


def test_a_mask_that_is_not_the_bottom_right_causal_one_is_refused():
    """The golden's mask is top-left (j > i): no hypothesis of the model matches it on case 1."""
    with pytest.raises(Unsupported, match="does not match the attention model") as exc:
        _plan(FIXTURES / "lw_attention_topleft")
    assert "\n" not in str(exc.value)


def test_goldens_without_two_products_around_a_softmax_are_left_to_the_other_planners():
    assert _plan(Path(__file__).resolve().parents[1] / "bench" / "ops" / "bias_gelu") is None
    assert _plan(Path(__file__).resolve().parents[1] / "bench" / "ops" / "linear_relu") is None


@needs_cannbench
def test_sparse_index_attention_is_refused_with_its_reason():
    with pytest.raises(Unsupported, match="sparse index mask"):
        _plan(CANNBENCH / "level4" / "sparse_flash_attention")


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_every_case_of_the_fixture_passes_the_emulator(tmp_path):
    """fp16 BSND causal with S < Skv and an unaligned Dv (40), bf16 BNSD MQA with an explicit scale,
    fp16 BNSD causal decode-like rows: one kernel."""
    task = load_task(str(FIXTURES / "lw_attention"))
    path = tmp_path / "lw_attention.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(x.id, x.line, x.message[:200]) for x in report.diagnostics if x.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    assert len(report.cases) == 3


@pytest.mark.slow
@needs_cannbench
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("name,cases", [("mha", "1,5,6"), ("gqa", "1,7,18"), ("mla", "7")])
def test_public_attention_cases_pass_the_emulator(name, cases, tmp_path, monkeypatch):
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "2")
    task = load_task(str(CANNBENCH / "level4" / name))
    path = tmp_path / f"{name}.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases if not c.passed]
