"""Count-only mode of the emulator (performance cases) and the functional-only switch.

Count-only runs control flow, rule checks and cost accounting but moves no data: its estimates must
equal those of a functional run, every data-independent rule must still fire, and a kernel whose
control flow depends on data is timed as if its data were zeros. `timing=False` runs the kernel
functionally without the cost model.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends import sim  # noqa: E402
from copilot.costmodel.estimate import estimate_case, output_shapes  # noqa: E402
from copilot.dtypes import dtype  # noqa: E402
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.tasks import load_task, select_cases  # noqa: E402
from copilot.tasks.model import Case  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "tests" / "kernels" / "rules"

# kernel -> task: its largest quick-tier case (multi-block), count and mask/repeat API forms,
# queues, TBuf, Cast, reductions and DataCopyPad tails.
KERNELS = {
    "tests/kernels/relu_tail_pad.cpp": "relu",
    "tests/kernels/abs_mask_repeat.cpp": "abs",
    "tests/kernels/softmax_rows.cpp": "softmax",
    "tests/kernels/rms_norm_bf16_cast.cpp": "rms_norm",
    "knowledge/cards/L5/elementwise-sigmoid.cpp": "sigmoid",
    "knowledge/cards/L5/softmax-softmax.cpp": "softmax",
    "knowledge/cards/L5/normalization-rms_norm.cpp": "rms_norm",
}


def _largest_quick_case(task):
    import math

    return max(select_cases(task, "quick"), key=lambda c: sum(math.prod(s) for s in c.shapes))


def _build(path: Path, task, case):
    outs = output_shapes(task, case)
    b = sim.build(path, task, list(case.dtypes) + [o.dtype for o in outs], "910B2")
    assert b.ok, [(d.id, d.line, d.message) for d in b.diagnostics]
    return b, outs


@pytest.mark.parametrize("kernel", sorted(KERNELS), ids=[Path(k).stem for k in sorted(KERNELS)])
def test_count_only_estimate_equals_the_functional_run(kernel):
    task = load_task(KERNELS[kernel])
    case = _largest_quick_case(task)
    b, outs = _build(ROOT / kernel, task, case)
    inputs = make_inputs(task, case)
    ref = reference(task, case, inputs)
    functional = sim.run(b, task, case, inputs, outputs=ref.outputs)
    assert functional.ok, [(d.id, d.message) for d in functional.diagnostics]
    full = functional.extra["estimate"]
    assert full is not None and full.block_dim > 1

    metas = [torch.empty(s, dtype=t.dtype, device="meta") for s, t in zip(case.shapes, inputs)]
    counted = sim.run(b, task, case, metas, outputs=outs, count_only=True)
    assert counted.ok and counted.outputs == []
    est = counted.extra["estimate"]
    assert (est.time_us, est.pipes_us, est.hbm_us, est.bottleneck) == \
           (full.time_us, full.pipes_us, full.hbm_us, full.bottleneck)

    # What performance cases use: count-only on the first, middle and last block. Another block can
    # be slower by a GM alignment penalty (a few ns here), so equal to 0.1 %.
    sampled = estimate_case(b, task, case, "910B2", outs)
    assert sampled.timing == "estimate" and sampled.time_us >= sampled.t_hw_us
    assert sampled.time_us == pytest.approx(max(full.time_us, sampled.t_hw_us), rel=1e-3)
    assert sampled.pipes_us == pytest.approx(full.pipes_us, rel=1e-3)


def _rule_kernels():
    out = []
    for path in sorted(RULES.glob("*.cpp")):
        text = path.read_text()
        expected = [(m.group(1), text.count("\n", 0, m.start()) + 1)
                    for m in re.finditer(r"//\s*EXPECT:\s*([A-Z0-9_.]+)", text)]
        task = re.search(r"--task\s+(\S+)", text).group(1)
        cases = re.search(r"--cases\s+(\S+)", text)
        out.append(pytest.param(path, task, cases.group(1) if cases else "quick", expected, id=path.stem))
    return out


@pytest.mark.parametrize("path,task_name,cases,expected", _rule_kernels())
def test_rule_kernel_reports_its_constraint_id_in_count_only_mode(path, task_name, cases, expected):
    task = load_task(task_name)
    case = select_cases(task, cases)[0]
    outs = output_shapes(task, case)
    b = sim.build(path, task, list(case.dtypes) + [o.dtype for o in outs], "910B2")
    if not b.ok:     # caught by the compiler: the same in every mode, so this is the check
        got = {(d.id, d.line) for d in b.diagnostics}
        assert expected and all(e in got for e in expected), (expected, sorted(got))
        return
    metas = [torch.empty(s, dtype=dtype(d).torch, device="meta") for s, d in zip(case.shapes, case.dtypes)]
    run = sim.run(b, task, case, metas, outputs=outs, count_only=True, sample_blocks=True)
    got = {(d.id, d.line) for d in run.diagnostics}
    for ident, line in expected:
        assert (ident, line) in got, f"{path.name}: expected {ident} at line {line}, got {sorted(got)}"


# Relu whose number of vector passes depends on values read back with GetValue: the first input
# element (loaded from GM) and the first element of x + 1 (computed by the vector unit).
DATA_DEPENDENT = r"""
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct ProbeTiling { uint32_t total; };
constexpr uint32_t TILE = 1024;

extern "C" __global__ __aicore__ void relu_probe(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ProbeTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> inQ;
    AscendC::TQue<AscendC::TPosition::VECOUT, 1> outQ;
    pipe.InitBuffer(inQ, 1, TILE * sizeof(float));
    pipe.InitBuffer(outQ, 1, TILE * sizeof(float));
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, t.total);
    yGm.SetGlobalBuffer((__gm__ float*)y, t.total);
    for (uint32_t off = 0; off < t.total; off += TILE) {
        AscendC::LocalTensor<float> a = inQ.AllocTensor<float>();
        AscendC::DataCopy(a, xGm[off], TILE);
        inQ.EnQue(a);
        AscendC::LocalTensor<float> b = inQ.DeQue<float>();
        AscendC::LocalTensor<float> c = outQ.AllocTensor<float>();
        AscendC::Adds(c, b, 1.0f, TILE);
        AscendC::PipeBarrier<PIPE_ALL>();
        const int passes = 1 + (b.GetValue(0) != 0.0f ? 2 : 0) + (c.GetValue(0) != 0.0f ? 4 : 0);
        for (int p = 0; p < passes; ++p) AscendC::Relu(c, b, TILE);
        outQ.EnQue(c);
        inQ.FreeTensor(b);
        AscendC::LocalTensor<float> d = outQ.DeQue<float>();
        AscendC::DataCopy(yGm[off], d, TILE);
        outQ.FreeTensor(d);
    }
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<ProbeTiling>();
    t->total = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    task = load_task("relu")
    c0 = task.cases[0]
    case = Case("probe", [(64, 1024)], ["float32"], dict(c0.attrs), c0.value_ranges[:1])
    path = tmp_path_factory.mktemp("probe") / "relu_probe.cpp"
    path.write_text(DATA_DEPENDENT)
    b, outs = _build(path, task, case)
    return task, case, b, outs


def test_count_only_times_data_dependent_control_flow_as_if_every_value_were_zero(probe):
    task, case, b, outs = probe
    shape = case.shapes[0]

    def functional(x):
        r = sim.run(b, task, case, [x], outputs=outs)
        assert r.ok, [(d.id, d.message) for d in r.diagnostics]
        return r.extra["estimate"]

    ones, zeros = functional(torch.ones(shape)), functional(torch.zeros(shape))   # 7 and 5 Relu passes
    counted = sim.run(b, task, case, [torch.empty(shape, device="meta")], outputs=outs, count_only=True)
    assert counted.ok
    est = counted.extra["estimate"]                                                # 1 pass: nothing computed
    assert ones.pipes_us["V"] > zeros.pipes_us["V"] > 2 * est.pipes_us["V"]
    assert ones.pipes_us["MTE2"] == zeros.pipes_us["MTE2"] == est.pipes_us["MTE2"]


def test_timing_switch_runs_the_kernel_without_the_cost_model(probe):
    task, case, b, outs = probe
    x = torch.linspace(-3, 3, 64 * 1024).reshape(case.shapes[0])
    timed = sim.run(b, task, case, [x], outputs=outs)
    bare = sim.run(b, task, case, [x], outputs=outs, timing=False)
    assert timed.ok and bare.ok
    assert torch.equal(bare.outputs[0], torch.relu(x)) and torch.equal(timed.outputs[0], bare.outputs[0])
    assert timed.time_us is not None and timed.extra["estimate"] is not None
    assert bare.time_us is None and bare.extra["estimate"] is None and bare.pipe_times is None
