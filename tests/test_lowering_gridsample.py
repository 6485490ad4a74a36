"""3-D grid sampling as a kernel of its own (`copilot/lowering/gridsample.py`): the golden's
grid_sampler_3d is found in its traced graph, its interpolation / padding / align_corners are tied
to the attrs that move them and confirmed on fp64 probes; the kernel gathers the corners from a
volume in UB or, for a volume too large for UB, by one DMA per point and corner pair."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput, Unsupported
from copilot.lowering import lower, plan_task
from copilot.lowering.gridsample import GridSamplePlan, plan_grid_sample, reference
from copilot.tasks import load_task

CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
TASK = CANNBENCH / "level2" / "grid_sampler_3d"
NO_GXX = shutil.which("g++") is None


def _public():
    if not (TASK / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task grid_sampler_3d not found at {TASK}")
    try:
        return load_task(str(TASK))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench grid_sampler_3d does not load: {exc}")


def test_public_task_is_recognised_with_its_attrs():
    plan = plan_task(_public())
    assert isinstance(plan, GridSamplePlan) and not plan.unserved
    assert (plan.x, plan.grid) == (0, 1)
    names = {p: plan.task.attrs[r[1]].name for p, r in plan.rules.items()}
    assert names == {"mode": "interpolation_mode", "pad": "padding_mode", "align": "align_corners"}
    assert plan.rules["mode"][2] == {"bilinear": 0, "nearest": 1}
    assert plan.rules["pad"][2] == {"zeros": 0, "border": 1, "reflection": 2}
    assert len(plan.served) == 12           # 2 interpolations x 3 paddings x align_corners


def test_the_formula_matches_torch_on_edges():
    g = torch.Generator().manual_seed(3)
    x = torch.rand((1, 2, 3, 1, 4), generator=g, dtype=torch.float64)
    x[0, 1, 0, 0, 0] = float("inf")          # an inside corner with weight 0 makes NaN, as in torch
    grid = (torch.rand((1, 2, 3, 5, 3), generator=g, dtype=torch.float64) * 2 - 1) * 1.7
    grid[0, 0, 0, 0] = torch.tensor([-1.0, -1.0, -1.0], dtype=torch.float64)
    for mode, m in (("bilinear", 0), ("nearest", 1)):
        for pad, p in (("zeros", 0), ("border", 1), ("reflection", 2)):
            for align in (False, True):
                want = torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=align)
                got = reference(x, grid, m, p, align)
                assert torch.allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True), (mode, pad, align)


def test_the_tiling_reads_the_attrs_and_refuses_bicubic():
    src = lower(_public()).source
    tiling = src.split("namespace optiling")[1]
    assert 'std::strcmp(modeAttr, "nearest") == 0' in tiling and 'std::strcmp(padAttr, "reflection") == 0' in tiling
    assert "bicubic" not in tiling and "mode == 2" not in tiling
    assert "td->inUb = fitsUb ? 1 : 0;" in tiling   # volume in UB or in GM, by the case's sizes


def test_a_grid_sampler_with_more_arithmetic_is_refused(tmp_path):
    _public()
    copy = tmp_path / "grid_sampler_3d"
    shutil.copytree(TASK, copy)
    golden = copy / "golden.py"
    text = golden.read_text()
    assert "align_corners=align_corners\n    )" in text
    golden.write_text(text.replace("align_corners=align_corners\n    )", "align_corners=align_corners\n    ) * 2"))
    with pytest.raises(Unsupported, match=r"other ops around it \(mul\)"):
        plan_grid_sample(load_task(str(copy)))


@pytest.mark.skipif(NO_GXX, reason="needs g++")
def test_volume_in_ub_and_volume_in_gm_pass(tmp_path):
    task = _public()
    # case 14: bilinear, zeros, NaN input, volume in UB; case 12: nearest, a 3.5 MB volume in GM
    path = tmp_path / "grid_sampler_3d.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases="14,12")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed and len(report.cases) == 2, (errors, failed)


@pytest.mark.skipif(NO_GXX, reason="needs g++")
def test_grid_points_far_outside_a_volume_in_gm(tmp_path):
    # hidden-case shapes: a 0.9 MB fp32 volume (in GM), grids past [-1, 1] (every corner of a point
    # below the volume is out of bounds, not its +1 neighbour), a volume one voxel wide
    import yaml

    _public()
    task_dir = tmp_path / "grid_sampler_3d"
    task_dir.mkdir()
    for name in ("golden.py", "proto.yaml"):
        shutil.copy(TASK / name, task_dir / name)

    def case(i, xs, gs, align, lo, hi):
        return {"operator": "GridSampler3D", "case_id": i, "input_shape": [xs, gs], "dtype": ["float32"] * 2,
                "attrs": {"interpolation_mode": "bilinear", "padding_mode": "zeros", "align_corners": align},
                "value_range": [[-2, 2], [lo, hi]], "note": "edge"}

    cases = [case(1, [1, 1, 600, 200, 3], [1, 1, 1, 64, 3], False, -1.2, -1.05),
             case(2, [1, 2, 600, 200, 1], [1, 3, 5, 7, 3], True, -1.2, 1.2)]
    (task_dir / "cases.yaml").write_text(yaml.safe_dump({"cases": cases}, sort_keys=False))
    task = load_task(str(task_dir))
    src = lower(task).source
    path = tmp_path / "grid_sampler_3d.cpp"
    path.write_text(src)
    report = check_kernel(path, task, chip="910B2", cases="all")
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    assert report.compiled and not failed and len(report.cases) == 2, failed
