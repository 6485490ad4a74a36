"""The host half of the sim backend: the tiling API a candidate's TilingFunc sees, the launch."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
import torch

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import build, check_kernel, run  # noqa: E402
from copilot.chips import load_chip  # noqa: E402
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

# Writes what the host API answered into the float32 output (one value per element).
PROBE = r"""#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"
struct Probe { float v[16]; };
extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(Probe);
    GET_TILING_DATA(p, tiling);
    AscendC::GlobalTensor<float> out;
    out.SetGlobalBuffer((__gm__ float*)y);
    if (AscendC::GetBlockIdx() == 0) {
        for (int i = 0; i < 16; ++i) out.SetValue(i, p.v[i]);
        out.SetValue(16, (float)AscendC::GetBlockNum());
        out.SetValue(17, TILING_KEY_IS(7) ? 1.0f : 0.0f);
    }
}
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* p = context->GetTilingData<Probe>();
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ub = 0;
    plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    const gert::StorageShape* s = context->GetInputShape(0);
    p->v[0] = (float)plat.GetCoreNumAiv();
    p->v[1] = (float)plat.GetCoreNumAic();
    p->v[2] = (float)ub;
    p->v[3] = (float)s->GetStorageShape().GetDimNum();
    p->v[4] = (float)s->GetOriginShape().GetDim(1);
    p->v[5] = (float)s->GetStorageShape().GetShapeSize();
    p->v[6] = (float)context->GetInputDesc(0)->GetDataType();
    p->v[7] = *context->GetAttrs()->GetAttrPointer<float>(0);
    p->v[8] = *context->GetAttrs()->GetFloat(0);
    p->v[9] = (float)context->GetOutputShape(0)->GetStorageShape().GetShapeSize();
    p->v[10] = plat.GetSocVersion() == platform_ascendc::SocVersion::ASCEND910B ? 1.0f : 0.0f;
    context->SetTilingKey(7);
    context->SetBlockDim(3);
    *context->GetWorkspaceSizes(1) = 1024;
    return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class LeakyReluCustom : public OpDef {
public:
    explicit LeakyReluCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT, ge::DT_FLOAT16}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("negative_slope").AttrType(OPTIONAL).Float(0.01f);
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }
};
OP_ADD(LeakyReluCustom);
}
"""


@pytest.fixture(scope="module")
def leaky():
    return load_task("leaky_relu")


def _probe(tmp_path, task, chip: str, case_id: str):
    path = tmp_path / "probe.cpp"
    path.write_text(PROBE)
    case = task.case(case_id)
    inputs = make_inputs(task, case)
    ref = reference(task, case, inputs)
    b = build(path, task, list(case.dtypes) + [o.dtype for o in ref.outputs], chip)
    assert b.ok, [d.message for d in b.diagnostics]
    return case, run(b, task, case, inputs, outputs=ref.outputs)


@pytest.mark.parametrize("chip", ["910B4", "950PR"])
def test_tiling_context_and_platform_answer_from_the_case_and_chip(tmp_path, leaky, chip):
    case_id = next(c.id for c in leaky.cases if c.dtypes[0] == "float32" and len(c.shapes[0]) == 2)
    case, r = _probe(tmp_path, leaky, chip, case_id)
    assert r.ok, [d.message for d in r.diagnostics]
    v = r.outputs[0].flatten()[:18].tolist()
    profile = load_chip(chip)
    shape = case.shapes[0]
    assert v[0] == profile.vector_cores and v[1] == profile.cube_cores
    assert v[2] == float(profile.ub_bytes)
    assert v[3] == len(shape) and v[4] == shape[1] and v[5] == float(torch.tensor(shape).prod())
    assert v[6] == 0.0                       # ge::DT_FLOAT
    assert v[7] == pytest.approx(case.attrs["negative_slope"]) and v[8] == v[7]
    assert v[9] == v[5]
    assert v[10] == (1.0 if profile.short_soc_version == "Ascend910B" else 0.0)
    assert v[16] == 3.0 and v[17] == 1.0     # block dim and tiling key reach the kernel
    assert r.block_dim == 3 and r.tiling_key == 7


def test_block_dim_above_the_vector_cores_is_core_count_at_the_setblockdim_line(tmp_path, leaky):
    text = PROBE.replace("context->SetBlockDim(3);", "context->SetBlockDim(64);")
    path = tmp_path / "cores.cpp"
    path.write_text(text)
    line = text.splitlines().index("    context->SetBlockDim(64);") + 1
    report = check_kernel(path, leaky, chip="910B4", cases="9")
    assert ("L2.CORE_COUNT", line) in {(d.id, d.line) for d in report.diagnostics}
    assert not report.correct


def test_a_failing_tiling_function_is_reported(tmp_path, leaky):
    path = tmp_path / "fail.cpp"
    path.write_text(PROBE.replace("    return ge::GRAPH_SUCCESS;\n}\n}", "    return ge::GRAPH_FAILED;\n}\n}"))
    report = check_kernel(path, leaky, cases="9")
    assert "RUN.TILING" in {d.id for d in report.diagnostics}
    assert report.compiled and not report.correct
    # no block ran: the case's verdict is the refusal, not a judgement of buffers nothing wrote
    (case,) = report.cases
    assert case.failure_class == "RUN.TILING" and "TilingFunc returned" in case.message
