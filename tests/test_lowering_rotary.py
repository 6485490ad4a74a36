"""Rotary position embedding as a kernel of its own (`copilot/lowering/rotary.py`): the golden is
recognised by what it computes on small fp64 probes (layout, rotation form, which table is cos, per
attr combination), the tiling function maps the attrs to (layout, form), and the fixture's cases
run every tiling path (whole periods with resident tables, pieces of a period with [B, S, D/2]
tables, tables copied per tile, one table row for more rows than a tile holds)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput
from copilot.lowering import lower, plan_task
from copilot.lowering.rotary import RotaryPlan, plan_rotary
from copilot.tasks import load_task

FIXTURE = Path(__file__).parent / "fixtures" / "lowering_struct" / "lw_rope"
CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
NO_GXX = shutil.which("g++") is None
ALL_VARIANTS = {(0, "half"): ("bsnd", "half"), (1, "half"): ("bnsd", "half"),
                (0, "interleaved"): ("bsnd", "interleaved"), (1, "interleaved"): ("bnsd", "interleaved")}


def _public(rel: str):
    d = CANNBENCH / rel
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task {rel} not found at {d}")
    try:
        return load_task(str(d))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench task {rel} does not load: {exc}")


def _variants(plan) -> dict:
    return {(g["layout"], g["rotaryMode"]): (layout, form) for g, layout, form in plan.variants}


def test_public_rotary_serves_every_layout_and_form():
    plan = plan_task(_public("level2/apply_rotary_pos_emb"))
    assert isinstance(plan, RotaryPlan) and plan.pattern == "rotary"
    assert not plan.unserved
    assert _variants(plan) == ALL_VARIANTS
    assert plan.x_inputs == [0, 1] and (plan.cos_input, plan.sin_input) == (2, 3)


def test_the_fixture_is_recognised_and_near_misses_are_not(tmp_path):
    plan = plan_rotary(load_task(str(FIXTURE)))
    assert plan is not None and _variants(plan) == ALL_VARIANTS and not plan.unserved
    # full-width tables (the built-in rotary_embedding) are the generic lane-map kernel's
    assert plan_rotary(load_task("rotary_embedding")) is None
    # the rotation with its sign flipped is not a rotary embedding: not this pattern
    wrong = tmp_path / "lw_rope"
    shutil.copytree(FIXTURE, wrong)
    golden = wrong / "golden.py"
    golden.write_text(golden.read_text().replace("[-x[..., h:], x[..., :h]]", "[x[..., h:], -x[..., :h]]")
                      .replace("[-x[..., 1::2], x[..., ::2]]", "[x[..., 1::2], -x[..., ::2]]"))
    assert plan_rotary(load_task(str(wrong))) is None


def test_the_kernel_holds_only_the_forms_its_cases_use():
    task = load_task(str(FIXTURE))
    both = lower(task).source
    kernel, tiling = both.split("namespace optiling")[:2]
    assert "td_.interleaved" in kernel and "(j ^ 1U)" in kernel and "j < H ? j + H : j - H" in kernel
    # attrs pick (layout, form) in the tiling function; unknown attrs fail it
    assert 'std::strcmp(attrs->GetAttrPointer<char>(1), "interleaved") == 0' in tiling
    assert "attrs of no variant the golden showed" in tiling
    half = lower(replace(task, cases=[c for c in task.cases if c.attrs["rotaryMode"] == "half"])).source
    assert "(j ^ 1U)" not in half and "td_.interleaved" not in half.split("namespace optiling")[0]
    # q and k share one expansion of the tables per tile
    assert kernel.count("Gather(cosTile") == 1 and kernel.count("Gather(sinTile") == 1


def _check(task, tmp_path, cases):
    path = tmp_path / "rope.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    return report


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_rotary_kernel_passes_the_fp32_paths(tmp_path):
    # 3: bsnd interleaved, [B, S, D/2] tables; 4: bnsd half, [B, S, D/2] tables, rows of 16
    report = _check(load_task(str(FIXTURE)), tmp_path, "3,4")
    assert len(report.cases) == 2


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_rotary_kernel_passes_every_path(tmp_path):
    report = _check(load_task(str(FIXTURE)), tmp_path, "all")
    assert len(report.cases) == 6


@pytest.mark.slow
@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_public_rotary_cases_the_generic_kernel_refused(tmp_path):
    # 12: bnsd interleaved bf16; 15: bnsd half, zeros; 19: bnsd half fp16
    _check(_public("level2/apply_rotary_pos_emb"), tmp_path, "12,15,19")
