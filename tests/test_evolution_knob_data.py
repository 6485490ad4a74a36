"""Tiling knobs as data: a candidate whose host half differs from its parent's only in the
`constexpr uint64_t KNOB_<NAME> = <value>;` lines reuses the parent's compiled host unit and link
(the launcher is copied with the values patched into its knob block) and runs as its literal build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from copilot.backends.sim import build, run
from copilot.backends.sim.build import knob_params
from copilot.backends.sim.units import split_units
from copilot.lowering import default_knobs, lower
from copilot.tasks import load_task

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

# Each block writes the tiling's value at its own index of y: the output shows both knobs.
KERNEL = """#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
struct KnobTiling { uint32_t value; };
extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(KnobTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> yg;
    yg.SetGlobalBuffer((__gm__ float*)y);
    yg.SetValue(AscendC::GetBlockIdx(), static_cast<float>(t.value));
}
namespace optiling {
constexpr uint64_t KNOB_BLOCKS = @BLOCKS@;
constexpr uint64_t KNOB_VALUE = @VALUE@;
@EXTRA@
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    context->GetTilingData<KnobTiling>()->value = static_cast<uint32_t>(KNOB_VALUE);
    context->SetBlockDim(static_cast<uint32_t>(KNOB_BLOCKS));
    return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class ReluCustom : public OpDef {
public:
    explicit ReluCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ReluCustom);
}
"""


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


def _candidate(root: Path, blocks: int, value: int, extra: str = "") -> Path:
    path = root / f"b{blocks}-v{value}-{len(extra)}" / "relu.cpp"       # same file name: same device half
    path.parent.mkdir(parents=True)
    path.write_text(KERNEL.replace("@BLOCKS@", str(blocks)).replace("@VALUE@", str(value)).replace("@EXTRA@", extra))
    return path


def _how(b) -> list:
    return json.loads((b.artifact.parent / "build.json").read_text())["command"]


def _written(b, task) -> list[float]:
    case = next(c for c in task.cases if c.dtypes == ["float32"] and c.max_numel >= 8)
    x = torch.zeros(case.shapes[0])
    r = run(b, task, case, [x], outputs=[type("O", (), {"name": "y", "shape": tuple(case.shapes[0]),
                                                        "dtype": "float32"})()])
    assert r.ok, [d.message for d in r.diagnostics]
    y = r.outputs[0].reshape(-1)
    return [float(v) for v in y[:r.block_dim]]


def test_a_child_that_changes_only_knob_values_reuses_the_parents_link_and_runs_as_its_literal_build(tmp_path, relu):
    parent = build(_candidate(tmp_path, 2, 3), relu, ["float32", "float32"])
    assert parent.ok, [d.message for d in parent.diagnostics]
    assert _how(parent) == ["knob data"]
    child_path = _candidate(tmp_path, 3, 5)
    child = build(child_path, relu, ["float32", "float32"])
    assert child.ok and _how(child) == ["knob data"]
    # one link for both: the two launchers differ only in the knob block's values
    a, b = parent.artifact.read_bytes(), child.artifact.read_bytes()
    assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) <= 16
    assert _written(parent, relu) == [3.0, 3.0]
    literal = build(child_path, relu, ["float32", "float32"], knob_data=False)
    assert literal.ok and _how(literal) != ["knob data"] and literal.artifact != child.artifact
    assert _written(child, relu) == _written(literal, relu) == [5.0, 5.0, 5.0]


def test_a_knob_used_where_a_constant_is_needed_keeps_its_literal_build(tmp_path, relu):
    path = _candidate(tmp_path, 2, 7, "static_assert(KNOB_VALUE > 0, \"a constant expression\");")
    b = build(path, relu, ["float32", "float32"])
    assert b.ok, [d.message for d in b.diagnostics]
    assert _how(b) != ["knob data"]
    assert _written(b, relu) == [7.0, 7.0]


def test_knob_lines_are_parametrised_in_place_and_what_could_tell_a_constant_apart_keeps_them():
    host = "namespace optiling {\nconstexpr uint64_t KNOB_A = 4;\n// constexpr uint64_t KNOB_B = 1;\nint f() { return KNOB_A; }\n}\n"
    text, values = knob_params(host)
    assert values == [4] and text.count("\n") == host.count("\n")
    assert "cannsim_knob_block[2]" in text.splitlines()[1] and text.splitlines()[2] == host.splitlines()[2]
    assert knob_params(host.replace("return KNOB_A", "return __builtin_constant_p(KNOB_A)")) is None
    assert knob_params(host + "constexpr uint64_t KNOB_A = 5;\n") is None          # the same name twice
    assert knob_params("namespace optiling {\nint f() { return 1; }\n}\n") is None


def test_the_lowering_emits_tiling_knobs_as_knob_lines_of_the_host_half_only():
    task = load_task("rms_norm")
    base = lower(task).source
    child = lower(task, knobs={**default_knobs(), "tile_elems": 2048, "buffer_num": 1, "rows_per_tile": 8,
                               "block_dim_policy": "all_cores", "min_work_elems": 4096}).source
    a, b = split_units(base), split_units(child)
    assert a.device == b.device
    assert a.host != b.host and knob_params(a.host)[0] == knob_params(b.host)[0]
    assert knob_params(b.host)[1] != knob_params(a.host)[1]
