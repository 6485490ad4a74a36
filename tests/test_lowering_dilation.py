"""Morphological dilation (max-plus window) as a kernel of its own (`copilot/lowering/dilation.py`):
CANN-Bench's dilation_2d golden is matched by its aten ops (im2col + a -inf pad + add + amax), the
stride / rate / padding rules are tied to its attrs, and the kernel serves shapes, strides, rates,
filters, dtypes and padding modes the public cases do not show (run here on the emulator)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from copilot.backends.sim import check_kernel
from copilot.errors import BadInput, Unsupported
from copilot.lowering import lower, plan_task
from copilot.lowering.dilation import DilationPlan
from copilot.tasks import load_task

CANNBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "cannbench" / "tasks"
TASK = CANNBENCH / "level3" / "dilation_2d"
NO_GXX = shutil.which("g++") is None


def _public():
    if not (TASK / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench task level3/dilation_2d not found at {TASK}")
    try:
        return load_task(str(TASK))
    except BadInput as exc:
        pytest.skip(f"CANN-Bench task level3/dilation_2d does not load: {exc}")


def _variant_task(tmp_path, cases: list[tuple]):
    """The public task's proto and golden with these cases: (x shape, filter shape, dtype, attrs)."""
    _public()
    d = tmp_path / "dilation_2d"
    d.mkdir()
    for name in ("golden.py", "desc.md"):
        shutil.copy(TASK / name, d / name)
    proto = yaml.safe_load((TASK / "proto.yaml").read_text())
    for spec in proto["operator"]["inputs"] + proto["operator"]["outputs"]:
        spec["dtype"] = ["float16", "float32", "bfloat16"]       # the proto names float16 only
    (d / "proto.yaml").write_text(yaml.safe_dump(proto, allow_unicode=True))
    base = {"strides": [1, 1, 1, 1], "rates": [1, 1, 1, 1], "padding_mode": "SAME", "pads": [0, 0, 0, 0],
            "ceil_mode": False, "data_format": "NHWC"}
    rows = [{"operator": "Dilation2D", "case_id": i + 1, "input_shape": [list(x), list(f)], "dtype": [dt, dt],
             "attrs": {**base, **attrs}, "value_range": [[-2, 2], [-0.5, 0.5]]}
            for i, (x, f, dt, attrs) in enumerate(cases)]
    (d / "cases.yaml").write_text(yaml.safe_dump({"cases": rows}))
    return load_task(str(d))


def _check(task, tmp_path, cases="all"):
    path = tmp_path / "dil.cpp"
    path.write_text(lower(task).source)
    report = check_kernel(path, task, chip="910B2", cases=cases)
    failed = [(c.id, c.failure_class) for c in report.cases if not c.passed]
    errors = [(d.id, d.line, d.message[:160]) for d in report.diagnostics if d.severity == "error"]
    assert report.compiled and not errors and not failed, (errors, failed)
    return report


def test_public_dilation_is_recognised_with_its_attr_rules():
    plan = plan_task(_public())
    assert isinstance(plan, DilationPlan) and not plan.unserved
    assert (plan.x, plan.f) == (0, 1)
    # strides / rates are [1, h, w, 1]
    assert plan.rules == {"sh": ("list", 0, 1), "sw": ("list", 0, 2), "rh": ("list", 1, 1), "rw": ("list", 1, 2)}
    by_mode = {g["padding_mode"]: (top, left, fixed) for g, top, left, fixed in plan.variants}
    assert by_mode["SAME"] == (("same",), ("same",), {})
    # VALID: the golden's output size ignores pads, so it refuses moved pads: served at [0, 0, 0, 0] only
    assert by_mode["VALID"] == (("const", 0), ("const", 0), {"pads": [0, 0, 0, 0]})
    # ceil_mode changes nothing under SAME or VALID: it selects no variant
    assert all("ceil_mode" not in g for g, *_ in plan.variants)


def test_explicit_pads_are_tied_to_their_elements(tmp_path):
    # a padding mode neither SAME nor VALID takes pads [top, bottom, left, right] (the golden's last branch)
    task = _variant_task(tmp_path, [([1, 9, 10, 5], [3, 2, 5], "float16",
                                     {"padding_mode": "EXPLICIT", "pads": [1, 2, 0, 3]})])
    (guards, top, left, fixed), = plan_task(task).variants
    assert (top, left, fixed) == (("list", 3, 0), ("list", 3, 2), {})


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_public_small_cases_pass(tmp_path):
    # 14: NaN in x and the filter (a NaN filter tap in the padding makes the output NaN, as in the
    # golden); 9: stride 2, VALID, 23 channels
    _check(_public(), tmp_path, "14,9")


@pytest.mark.skipif(NO_GXX, reason="g++ is required")
def test_shapes_strides_and_modes_the_public_cases_do_not_show(tmp_path):
    task = _variant_task(tmp_path, [
        # stride 3 x 2, rate 2 x 3, a 2 x 3 filter, 20 channels
        ([2, 9, 11, 20], [2, 3, 20], "float16", {"strides": [1, 3, 2, 1], "rates": [1, 2, 3, 1]}),
        # fp32, stride 8 along w: 300 channels in two channel blocks (a repeat stride of 8 pixels)
        ([1, 5, 20, 300], [2, 2, 300], "float32", {"strides": [1, 2, 8, 1], "padding_mode": "VALID"}),
        # explicit pads, ceil_mode on, rows above and below the image
        ([1, 6, 8, 16], [3, 3, 16], "float16", {"padding_mode": "EXPLICIT", "pads": [2, 1, 1, 2],
                                                "ceil_mode": True, "strides": [1, 2, 2, 1]}),
        # a 16 x 16 filter of 1024 channels: channel blocks sized so its taps fit UB
        ([1, 3, 5, 1024], [16, 16, 1024], "float16", {}),
    ])
    assert not plan_task(task).unserved
    assert len(_check(task, tmp_path).cases) == 4


def test_a_layout_and_a_dtype_it_does_not_serve_are_refused_with_a_reason(tmp_path, cli):
    task = _variant_task(tmp_path, [([1, 8, 8, 16], [3, 3, 16], "float16", {}),
                                    ([1, 16, 8, 8], [16, 3, 3], "float16", {"data_format": "NCHW"})])
    plan = plan_task(task)
    assert list(plan.unserved) == ["2"] and "NHWC max-plus dilation" in plan.unserved["2"]
    # bfloat16 only: no case is served, exit 3 with the reason on one line
    bf16 = tmp_path / "bf16"
    bf16.mkdir()
    task = _variant_task(bf16, [([1, 8, 8, 16], [3, 3, 16], "bfloat16", {})])
    with pytest.raises(Unsupported, match="dtype bfloat16"):
        lower(task)
    code, out, err = cli("lower", "--task", str(task.path))
    assert code == 3 and not out and "dtype bfloat16" in err.strip().splitlines()[-1]
