"""The roofline's vector term: the work the golden's math needs, from its aten ops on meta tensors."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.chips import load_chip  # noqa: E402
from copilot.costmodel import API_WEIGHTS, cost_params  # noqa: E402
from copilot.costmodel.estimate import bytes_moved, case_roofline, output_shapes, vector_work  # noqa: E402
from copilot.tasks import load_task  # noqa: E402
from copilot.tasks.model import Case  # noqa: E402

CHIP = load_chip("910B2")


def _case(task_name: str, shape, dtype: str) -> tuple:
    task = load_task(task_name)
    c0 = task.cases[0]
    n = len(task.inputs)
    return task, Case("probe", [shape] * n, [dtype] * n, dict(c0.attrs), c0.value_ranges[:n])


def _terms(task, case):
    return case_roofline(task, case, output_shapes(task, case), CHIP)


def test_transcendental_heavy_task_has_a_vector_term_above_its_memory_term():
    for name in ("mish", "erf"):
        t_hw, terms = _terms(*_case(name, (4096, 4096), "float32"))
        assert terms["vector_us"] > terms["memory_us"] > 0, (name, terms)
        assert t_hw == terms["vector_us"]


def test_add_is_memory_bound():
    t_hw, terms = _terms(*_case("add", (4096, 4096), "float16"))
    assert 0 < terms["vector_us"] < 0.5 * terms["memory_us"]
    assert t_hw == terms["memory_us"]


def test_vector_work_follows_the_api_weights():
    task, case = _case("exp", (1024, 1024), "float32")    # golden: x * scale + shift, then exp
    work = vector_work(task, case, CHIP.arch).weighted_bytes
    n = 1024 * 1024
    assert work == pytest.approx(n * 4 * (API_WEIGHTS["Mul"] + API_WEIGHTS["Add"] + API_WEIGHTS["Exp"]))
    # fp16 works on half the bytes; bf16 has no vector arithmetic on A2/A3 and is computed in fp32
    assert vector_work(*_case("exp", (1024, 1024), "float16"), CHIP.arch).weighted_bytes == pytest.approx(work / 2)
    assert vector_work(*_case("exp", (1024, 1024), "bfloat16"), CHIP.arch).weighted_bytes == pytest.approx(work)


def test_reductions_count_the_elements_they_read():
    task, case = _case("reduce_sum", (512, 4096), "float32")
    work = vector_work(task, case, CHIP.arch).weighted_bytes
    cheapest = min(API_WEIGHTS[a] for a in ("ReduceSum", "WholeReduceSum", "BlockReduceSum"))
    assert work == pytest.approx(512 * 4096 * 4 * cheapest)


def test_unknown_op_keeps_the_memory_term_and_says_why():
    task, case = _case("relu", (1024, 1024), "float32")
    odd = dataclasses.replace(task, golden=lambda x: torch.special.i0(x))
    t_hw, terms = _terms(odd, case)
    assert terms["vector_us"] is None and "i0" in terms["vector_note"]
    assert t_hw == terms["memory_us"] == pytest.approx(
        bytes_moved(case, output_shapes(odd, case)) / (cost_params("910B2").hbm_peak_gbps * 1e3))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")
def test_no_estimate_falls_below_a_vector_bound_roofline(tmp_path):
    from copilot.backends import sim
    from copilot.costmodel.estimate import estimate_case
    from copilot.lowering import lower

    task, case = _case("erf", (2048, 2048), "float16")
    path = tmp_path / "erf.cpp"
    path.write_text(lower(task).source)
    outs = output_shapes(task, case)
    b = sim.build(path, task, ["float16", outs[0].dtype], "910B2")
    assert b.ok, [d.message for d in b.diagnostics]
    est = estimate_case(b, task, case, "910B2", outs)
    terms = est.roofline_terms
    assert terms["vector_us"] > terms["memory_us"]
    assert est.t_hw_us == terms["vector_us"] and est.time_us >= est.t_hw_us
    assert 0 < est.roofline_fraction <= 1 and est.to_json()["roofline_terms"] == terms
