"""Outputs whose length depends on the data (unique, nms): the kernel gets the output at an upper
bound, never the golden's length, writes the shape it produced into the `out_shape` argument, and
the judge compares that length and the values it covers with the golden (copilot/oracle/dynamic.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from copilot.oracle.dynamic import SHAPE_WORDS, bound, data_dependent, kernel_shape, read_shapes
from copilot.tasks import load_task

CANNBENCH = Path(__file__).resolve().parents[2] / "shared" / "cannbench" / "tasks"

_PROTO = """\
    operator:
      name: PosSelect
      inputs: [{name: x, dtype: [float32]}]
      outputs: [{name: y, dtype: [float32]}]
    """
_CASES = """\
    cases:
    - {case_id: 1, input_shape: [[1024]], dtype: [float32], value_range: [-1, 1]}
    - {case_id: 2, input_shape: [[4, 256]], dtype: [float32], value_range: [-1, 3]}
    """
_GOLDEN = "def pos_select(x):\n    return x[x > 0]\n"


def _task(root: Path) -> Path:
    d = root / "pos_select"
    d.mkdir()
    (d / "proto.yaml").write_text(textwrap.dedent(_PROTO))
    (d / "cases.yaml").write_text(textwrap.dedent(_CASES))
    (d / "golden.py").write_text(_GOLDEN)
    return d


# The positive values of x in order, one block, scalar compaction (n is small in these cases). LENGTH
# is what the kernel reports as the length it wrote; WRITE_SHAPE 0 leaves out_shape untouched.
_KERNEL = r'''
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct SelectTiling { uint32_t n; uint32_t capacity; };

extern "C" __global__ __aicore__ void pos_select(GM_ADDR x, GM_ADDR y, GM_ADDR out_shape, GM_ADDR workspace,
                                                 GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(SelectTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf, yBuf, shapeBuf;
    pipe.InitBuffer(xBuf, t.n * sizeof(float));
    pipe.InitBuffer(yBuf, t.n * sizeof(float));
    pipe.InitBuffer(shapeBuf, 32);
    AscendC::GlobalTensor<float> xg, yg;
    AscendC::GlobalTensor<uint64_t> shapeGm;
    xg.SetGlobalBuffer((__gm__ float*)x, t.n);
    yg.SetGlobalBuffer((__gm__ float*)y, t.capacity);
    shapeGm.SetGlobalBuffer((__gm__ uint64_t*)out_shape, 9);
    AscendC::LocalTensor<float> lx = xBuf.Get<float>();
    AscendC::LocalTensor<float> ly = yBuf.Get<float>();
    AscendC::DataCopy(lx, xg, t.n);
    AscendC::PipeBarrier<PIPE_ALL>();
    uint32_t m = 0;
    for (uint32_t i = 0; i < t.n; ++i) {
        float v = lx.GetValue(i);
        if (v > 0.0f) {
            ly.SetValue(m, v);
            ++m;
        }
    }
    AscendC::PipeBarrier<PIPE_ALL>();
    if (m > 0) {
        AscendC::DataCopyPad(yg, ly, AscendC::DataCopyExtParams{1, (uint32_t)(m * sizeof(float)), 0, 0, 0});
    }
#if WRITE_SHAPE
    AscendC::LocalTensor<uint64_t> shape = shapeBuf.Get<uint64_t>();
    shape.SetValue(0, 0x80000001ULL);          // bit 31 and rank 1
    shape.SetValue(1, (uint64_t)(LENGTH));
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopyPad(shapeGm, shape, AscendC::DataCopyExtParams{1, 2 * sizeof(uint64_t), 0, 0, 0});
#endif
}

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    auto* t = context->GetTilingData<SelectTiling>();
    t->n = (uint32_t)context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    t->capacity = (uint32_t)context->GetOutputShape(0)->GetStorageShape().GetShapeSize();
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
'''


def _check(tmp_path, length: str, write_shape: int = 1):
    from copilot.backends.sim import check_kernel

    task = load_task(_task(tmp_path))
    kernel = tmp_path / "pos_select.cpp"
    kernel.write_text(f"#define LENGTH {length}\n#define WRITE_SHAPE {write_shape}\n" + _KERNEL)
    report = check_kernel(kernel, task, cases="all")
    assert report.compiled, report.diagnostics
    return [{"id": c.id, "passed": c.passed, "failure_class": c.failure_class, "message": c.message}
            for c in report.cases]


def test_a_masked_select_golden_has_its_length_data_dependent(tmp_path):
    task = load_task(_task(tmp_path))
    assert data_dependent(task) == {"y": (0,)}
    case = task.case("2")
    assert bound(case) == 1024 and kernel_shape((517,), (0,), case) == (1024,)


def test_the_kernel_that_writes_its_values_and_length_passes(tmp_path):
    cases = _check(tmp_path, "m")
    assert [(c["id"], c["passed"]) for c in cases] == [("1", True), ("2", True)], cases


def test_a_wrong_length_fails_naming_both_lengths(tmp_path):
    cases = _check(tmp_path, "m + 1")
    assert not any(c["passed"] for c in cases)
    assert cases[0]["failure_class"] == "shape_mismatch"
    assert "wrote shape [" in cases[0]["message"] and "the golden's is [" in cases[0]["message"], cases[0]


def test_the_buffer_length_is_the_bound_not_the_answer(tmp_path):
    """A kernel that reports the length of the buffer it was given (as the old contract, which
    sized y to the golden's length, let it) reports the bound, 1024, and fails."""
    cases = _check(tmp_path, "t.capacity")
    assert not any(c["passed"] for c in cases)
    assert all("[1024] into out_shape" in c["message"] for c in cases), cases


def test_an_unwritten_shape_fails_with_a_clear_reason(tmp_path):
    cases = _check(tmp_path, "m", write_shape=0)
    assert not any(c["passed"] for c in cases)
    assert "did not write its shape into out_shape" in cases[0]["message"], cases[0]


def test_an_entry_without_the_shape_argument_is_refused_at_build(tmp_path):
    from copilot.backends.sim import build

    task = load_task(_task(tmp_path))
    src = (_KERNEL.replace("GM_ADDR y, GM_ADDR out_shape,", "GM_ADDR y,")
           .replace("shapeGm.SetGlobalBuffer((__gm__ uint64_t*)out_shape, 9);", ""))
    b = build("#define LENGTH m\n#define WRITE_SHAPE 0\n" + src, task, ["float32", "float32"])
    assert not b.ok
    sig = [d for d in b.diagnostics if d.id == "L4.API_SIGNATURE"]
    assert sig and "GM_ADDR x, y, out_shape, workspace, tiling" in sig[0].message, b.diagnostics


def test_shape_words_are_read_with_or_without_bit_31():
    import numpy as np

    words = np.full(2 * SHAPE_WORDS, -1, dtype=np.int64)
    words[0:2] = [1, 7]
    words[SHAPE_WORDS:SHAPE_WORDS + 2] = [0x80000001, 3000]
    got = read_shapes(words, ["a", "b"], {"a": (10,), "b": (4096,)})
    assert got["a"] == ((7,), "") and got["b"] == ((3000,), "")
    assert "larger than its buffer" in read_shapes(words, ["a", "b"], {"a": (5,), "b": (10,)})["a"][1]


@pytest.mark.parametrize("name, expected", [("unique", {"y": (0,)}), ("nms", {"keep_indices": (0,)}),
                                            ("moe_re_routing", {})])
def test_public_data_dependent_outputs(name, expected):
    d = CANNBENCH / "level3" / name
    if not (d / "proto.yaml").is_file():
        pytest.skip(f"CANN-Bench {name} not found at {d}")
    assert data_dependent(load_task(str(d))) == expected


def test_count_only_shapes_need_no_golden_and_the_roofline_counts_no_bound(tmp_path, monkeypatch):
    """A performance case's buffers are the bound, known from the trace: no golden run (a case over
    the oracle budget is timed), and the roofline does not charge the bound as written bytes."""
    import copilot.oracle
    from copilot.costmodel.estimate import bytes_moved, output_shapes

    task = load_task(_task(tmp_path))
    data_dependent(task)                                   # classified once, before the golden is barred
    monkeypatch.setattr(copilot.oracle, "reference", lambda *a, **k: pytest.fail("the golden ran"))
    outs = output_shapes(task, task.case("2"))
    assert [(o.name, o.shape, o.dtype, o.bound_dims) for o in outs] == [("y", (1024,), "float32", (0,))]
    assert bytes_moved(task.case("2"), outs) == 1024 * 4 + 4


def test_the_exporter_refuses_a_data_dependent_output_by_name(tmp_path):
    from copilot.errors import Unsupported
    from copilot.export.opspec import learn_output_rules

    with pytest.raises(Unsupported, match="output\\(s\\) y have a data-dependent length"):
        learn_output_rules(load_task(_task(tmp_path)))


_OPDEF = r'''
namespace ops {
class PosSelect : public OpDef {
public:
    explicit PosSelect(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND})MARK;
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(PosSelect);
}  // namespace ops
'''


@pytest.mark.parametrize("mark, ok", [(".OutputShapeDependOnCompute()", True), ("", False)])
def test_the_registration_marks_a_data_dependent_output(tmp_path, mark, ok):
    from copilot.backends.sim import build

    task = load_task(_task(tmp_path))
    src = "#define LENGTH m\n#define WRITE_SHAPE 1\n" + _KERNEL + _OPDEF.replace("MARK", mark)
    b = build(src, task, ["float32", "float32"])
    opdef = [d for d in b.diagnostics if d.id == "L4.OPDEF_MISMATCH" and d.is_error]
    assert b.ok is ok and bool(opdef) is not ok, b.diagnostics
    if not ok:
        assert "output 'y' of task pos_select has a data-dependent length" in opdef[0].message


def test_the_opdef_given_to_the_model_marks_the_data_dependent_output_and_builds(tmp_path):
    """The registration generation 1 is told to copy as it is (prompts.registration) marks y, and
    the kernel built with it passes the OpDef check (it was unmarked: a model that copied it was
    refused with L4.OPDEF_MISMATCH)."""
    from copilot.agents.prompts import registration
    from copilot.backends.sim import build
    from copilot.export.opdef import task_opdef

    task = load_task(_task(tmp_path))
    text = registration(task)
    assert '.UnknownShapeFormat({ge::FORMAT_ND})\n            .OutputShapeDependOnCompute();' in text
    assert text.count("OutputShapeDependOnCompute") == 1          # y only, not the input
    src = "#define LENGTH m\n#define WRITE_SHAPE 1\n" + _KERNEL + task_opdef(task, "PosSelect")
    b = build(src, task, ["float32", "float32"])
    assert b.ok and not [d for d in b.diagnostics if d.id == "L4.OPDEF_MISMATCH"], b.diagnostics
