"""Structural patterns of the lowering agent: tensor-list inputs (a pointwise program over the
concatenated list buffers, one p-norm per list element), Sinkhorn rounds on resident matrices,
and the honest refusals around them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput, Unsupported
from copilot.lowering import lower, plan_task, supports
from copilot.tasks import load_task

FIXTURES = Path(__file__).parent / "fixtures" / "lowering_struct"
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
NO_GXX = shutil.which("g++") is None


def _fixture(name: str):
    return load_task(str(FIXTURES / name))


def _public(rel: str):
    d = CANNBENCH / rel
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task {rel} not found at {d}")
    try:
        return load_task(str(d))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench task {rel} does not load: {exc}")


def _check(task, tmp_path, cases="all"):
    kernel = lower(task)
    path = tmp_path / f"{task.name}.cpp"
    path.write_text(kernel.source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class, c.message[:200]) for c in report.cases if not c.passed]
    diags = [(d.id, d.line, d.message[:200]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and report.correct, (diags, failed)
    return kernel, report


# ---------------------------------------------------------------- tensor lists: planning

def test_pointwise_list_program_plans_over_the_concatenated_buffers():
    plan = plan_task(_fixture("lw_list_axpy"))
    assert plan.axis_rule is None                          # elementwise, no reduction
    assert [s.is_list for s in plan.task.inputs] == [False, False]
    # case 3: three lists of 1001 elements -> one 1-D input of 3003 elements per list
    assert plan.task.cases[2].shapes == [(3003,), (3003,)]
    assert any("tensor lists" in n for n in plan.notes)


def test_list_norm_reads_its_order_from_the_attr():
    plan = plan_task(_fixture("lw_list_norm"))
    assert plan.pattern == "list_norm" and plan.order_rule == ("attr", "p")
    src = lower(_fixture("lw_list_norm")).source
    tiling = src.split("namespace optiling")[1]
    assert "GetAttrPointer<float>(0)" in tiling and "3.5" not in src   # p is a run-time value
    for mode in ("NORM_ONE", "NORM_TWO", "NORM_MAX", "NORM_MIN", "NORM_ZERO", "NORM_POW"):
        assert mode in tiling
    kernel = src.split("namespace optiling")[0]
    assert "SyncAll();" in kernel and "sqrtf" not in kernel and "expf" not in kernel


def test_list_golden_reading_another_element_exits_3_in_one_line(cli):
    with pytest.raises(Unsupported, match="reads other elements"):
        plan_task(_fixture("lw_list_mix"))
    code, out, err = cli("lower", "--task", str(FIXTURES / "lw_list_mix"))
    assert code == 3 and out == ""
    assert "lw_list_mix: output 1 of the list reads other elements" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- tensor lists: on the emulator

@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_pointwise_list_kernel_passes_every_case(tmp_path):
    _check(_fixture("lw_list_axpy"), tmp_path)


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_list_norm_kernel_passes_every_order(tmp_path):
    # p = 1, 2, 3.5, inf, -inf, 0, -1 on fp16 / bf16 / fp32 lists of 1 to 4 tensors; case 3's
    # tensor is split into pieces on two cores and combined after SyncAll
    _, report = _check(_fixture("lw_list_norm"), tmp_path)
    assert len(report.cases) == 7


# ---------------------------------------------------------------- a variant outside the patterns

def test_a_variant_outside_the_patterns_is_not_served_and_refused_by_its_attrs():
    plan = plan_task(_fixture("lw_mode_partial"))
    assert set(plan.unserved) == {"2"} and "aten.i0" in plan.unserved["2"]
    assert plan.refused_variants == [({"mode": "bessel"}, [])]
    ok, why = supports(_fixture("lw_mode_partial"))
    assert ok and "1 of 3 cases not served" in why
    tiling = lower(_fixture("lw_mode_partial")).source.split("namespace optiling")[1]
    refusal = tiling.index('std::strcmp(attrs->GetAttrPointer<char>(0), "bessel") == 0')
    assert "return ge::GRAPH_FAILED" in tiling[refusal:refusal + 200]


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_served_variant_passes_and_the_refused_one_fails_at_tiling(tmp_path):
    task = _fixture("lw_mode_partial")
    path = tmp_path / "k.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="all")
    by_id = {c.id: c.passed for c in report.cases}
    assert by_id == {"1": True, "2": False, "3": True}
    assert any(d.id == "RUN.TILING" for d in report.diagnostics)


def test_variants_that_lower_alone_but_not_together_serve_the_largest():
    # layout 0 adds b along the last axis, layout 1 along dim 1: one kernel cannot place b both ways
    plan = plan_task(_fixture("lw_place_variants"))
    assert set(plan.unserved) == {"2"} and "does not share a kernel" in plan.unserved["2"]
    assert plan.refused_variants == [({}, [("eq", ("attr", "layout"), ("const", 1.0), True)])]
    assert "if ((attrLayout == 1.0)) {" in lower(_fixture("lw_place_variants")).source


def test_unit_dims_do_not_hide_an_operands_placement():
    # (1, S, 1, D) data with a (S, D/2) table: plain broadcasting would place the table too, and
    # the placement the other cases need fits it
    from copilot.lowering.plan import LoadRule, _fits_places

    class P:
        main_shape = (1, 500001, 1, 64)

    class C:
        shapes = [(1, 500001, 1, 64), (500001, 32)]

    assert _fits_places(C, P, LoadRule(1, lanes=("rep", 2)), (3, 1))
    assert not _fits_places(C, P, LoadRule(1, lanes=()), (3, 1))          # 32 lanes do not fill 64
    assert not _fits_places(C, P, LoadRule(1, lanes=("rep", 2)), (2, 1))   # 500001 is not dim 2


# ---------------------------------------------------------------- Sinkhorn rounds

def test_sinkhorn_rounds_and_eps_come_from_the_attrs():
    plan = plan_task(_fixture("lw_sinkhorn"))
    assert plan.pattern == "sinkhorn"
    assert plan.rounds_rule == ("attr", "rounds", -1) and plan.eps_rule == ("attr", "eps")
    src = lower(_fixture("lw_sinkhorn")).source
    kernel = src.split("namespace optiling")[0]
    assert "1e-08" not in src and "0.0001" not in src              # eps is a run-time value
    # GM -> row order, row <-> column order between the steps, column -> GM order
    assert kernel.count("Gather(") == 5
    assert "for (uint32_t k = 0; k < td_.loops; ++k)" in kernel


def test_a_softmax_is_not_taken_for_a_sinkhorn():
    from copilot.lowering.sinkhorn import plan_sinkhorn

    assert plan_sinkhorn(load_task("softmax")) is None


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_sinkhorn_kernel_passes_every_case(tmp_path):
    # one round; non-square matrices under two leading dims; 16 x 16 matrices, two tiles per core
    _check(_fixture("lw_sinkhorn"), tmp_path)


# ---------------------------------------------------------------- public tasks

@pytest.mark.parametrize("rel, pattern", [("level1/foreach_norm", "list_norm"),
                                          ("level1/foreach_addcdiv_scalar", "broadcast"),
                                          ("level3/mhc_sinkhorn", "sinkhorn")])
def test_public_tensor_list_tasks_lower(rel, pattern):
    ok, why = supports(_public(rel))
    assert ok and why == pattern, why


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
@pytest.mark.parametrize("rel, cases", [("level1/foreach_norm", "1,6,7,8,12,17"),
                                        ("level1/foreach_addcdiv_scalar", "1,6,12,13"),
                                        ("level3/mhc_sinkhorn", "7,9,13,18,19,20"),
                                        ("level2/apply_rotary_pos_emb", "2,8,14,16")])
def test_public_tensor_list_tasks_pass(rel, cases, tmp_path):
    _check(_public(rel), tmp_path, cases)
