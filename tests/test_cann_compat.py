"""CANN compatibility of the emulator's headers: each emulated API form, called as a kernel calls
it, is accepted or refused here as the public AscendC headers / CANN API reference say.

One device unit (kernel_operator.h only, as op_kernel/ sees it) and one host unit (the op_host
headers) hold a C++20 `requires` probe per form; each is compiled once with -fsyntax-only, and a
form whose verdict differs from the reference fails with its name. Then the candidate-level
findings of the split build: a clash with a library tiling struct, a const mask array, a repeat
count of 300, a half using the other half's declarations, and the OpDef check.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import build  # noqa: E402
from copilot.backends.sim.build import CXX_FLAGS, DEVICE_MARK, INCLUDE_DIR  # noqa: E402
from copilot.backends.sim.units import split_units  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

from tests.cann_compat_forms import REFERENCE_FORMS  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

# (api, form, call, accepted). Calls see: LocalTensor<float> f, g; LocalTensor<half> h;
# LocalTensor<uint8_t> u8; LocalTensor<int16_t> i16; GlobalTensor<float> gm; uint64_t m[2];
# const uint64_t cm[2]; BinaryRepeatParams bp; UnaryRepeatParams up; uint8_t r8.
# Verdicts from the API reference (06_API参考, SIMD API): most level-0 forms take a non-const
# `uint64_t mask[]` or `uint64_t mask` and a `const uint8_t repeatTime`; Cast, Compare, Compares and
# MulAddDst take `const uint64_t mask[]`; the whole-row and block reductions (WholeReduce*, BlockReduce*,
# PairReduceSum, RepeatReduceSum) take `const uint64_t mask[]` and an `int32_t repeatTime` (checked at run
# time); scalars have the tensor's type. Every other form is in tests/cann_compat_forms.py.
DEVICE_FORMS = [
    ("Add", "count", "AscendC::Add(f, f, g, 64)", True),
    ("Add", "mask bits", "AscendC::Add(f, f, g, m, r8, bp)", True),
    ("Add", "mask bits, const array", "AscendC::Add(f, f, g, cm, r8, bp)", False),
    ("Add", "mask continuous", "AscendC::Add(f, f, g, (uint64_t)64, r8, bp)", True),
    ("Add", "mixed element types", "AscendC::Add(f, f, h, 64)", False),
    ("Sub", "mask bits", "AscendC::Sub(f, f, g, m, r8, bp)", True),
    ("Mul", "mask bits, const array", "AscendC::Mul(f, f, g, cm, r8, bp)", False),
    ("Max", "mask continuous", "AscendC::Max(f, f, g, (uint64_t)64, r8, bp)", True),
    ("Exp", "count", "AscendC::Exp(f, g, 64)", True),
    ("Exp", "mask bits", "AscendC::Exp(f, g, m, r8, up)", True),
    ("Exp", "mask bits, const array", "AscendC::Exp(f, g, cm, r8, up)", False),
    ("Relu", "mask continuous", "AscendC::Relu(f, g, (uint64_t)64, r8, up)", True),
    ("Abs", "mask bits, const array", "AscendC::Abs(f, g, cm, r8, up)", False),
    ("Adds", "count", "AscendC::Adds(f, g, 1.0f, 64)", True),
    ("Adds", "count, double scalar on float", "AscendC::Adds(f, g, 1.0, 64)", False),
    ("Muls", "mask bits", "AscendC::Muls(f, g, 2.0f, m, r8, up)", True),
    ("Muls", "mask bits, const array", "AscendC::Muls(f, g, 2.0f, cm, r8, up)", False),
    ("Maxs", "mask continuous", "AscendC::Maxs(f, g, 0.0f, (uint64_t)64, r8, up)", True),
    ("Duplicate", "count", "AscendC::Duplicate(f, 1.0f, 64)", True),
    ("Duplicate", "mask bits", "AscendC::Duplicate(f, 1.0f, m, r8, (uint16_t)1, (uint8_t)8)", True),
    ("Duplicate", "mask bits, const array", "AscendC::Duplicate(f, 1.0f, cm, r8, (uint16_t)1, (uint8_t)8)", False),
    ("Cast", "count", "AscendC::Cast(h, f, AscendC::RoundMode::CAST_ROUND, 64)", True),
    ("Cast", "mask bits", "AscendC::Cast(h, f, AscendC::RoundMode::CAST_ROUND, m, r8, up)", True),
    ("Cast", "mask bits, const array", "AscendC::Cast(h, f, AscendC::RoundMode::CAST_ROUND, cm, r8, up)", True),
    ("Cast", "without RoundMode", "AscendC::Cast(h, f, 64)", False),
    ("Compare", "count", "AscendC::Compare(u8, f, g, AscendC::CMPMODE::LT, 64)", True),
    ("Compare", "mask bits", "AscendC::Compare(u8, f, g, AscendC::CMPMODE::LT, m, r8, bp)", True),
    ("Compare", "mask bits, const array", "AscendC::Compare(u8, f, g, AscendC::CMPMODE::LT, cm, r8, bp)", True),
    ("WholeReduceSum", "mask bits, const array, int32 repeat", "AscendC::WholeReduceSum(f, g, cm, 300, 1, 1, 8)", True),
    ("BlockReduceMax", "mask bits, const array, int32 repeat", "AscendC::BlockReduceMax(f, g, 300, cm, 1, 1, 8)", True),
    ("Select", "mask bits", "AscendC::Select(f, u8, f, g, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, m, r8, bp)",
     True),
    ("Select", "mask bits, const array",
     "AscendC::Select(f, u8, f, g, AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE, cm, r8, bp)", False),
    ("Not", "mask bits", "AscendC::Not(i16, i16, m, r8, up)", True),
    ("Not", "mask bits, const array", "AscendC::Not(i16, i16, cm, r8, up)", False),
    ("ReduceSum", "count with tmp", "AscendC::ReduceSum(f, g, f, 64)", True),
    ("ReduceSum", "count without tmp", "AscendC::ReduceSum(f, g, 64)", False),
    ("WholeReduceSum", "mask continuous", "AscendC::WholeReduceSum(f, g, 64, 1, 1, 1, 8)", True),
    ("DataCopy", "GM to UB count", "AscendC::DataCopy(f, gm, 64)", True),
    ("DataCopy", "UB to GM count", "AscendC::DataCopy(gm, f, 64)", True),
    ("DataCopy", "UB to UB count", "AscendC::DataCopy(f, g, 64)", True),
    ("DataCopyPad", "GM to UB ext params",
     "AscendC::DataCopyPad(f, gm, AscendC::DataCopyExtParams{1, 32, 0, 0, 0}, "
     "AscendC::DataCopyPadExtParams<float>{false, 0, 0, 0})", True),
    ("DataCopyPad", "UB to GM ext params", "AscendC::DataCopyPad(gm, f, AscendC::DataCopyExtParams{1, 32, 0, 0, 0})",
     True),
    # MASK_PLACEHOLDER_LIST is a constexpr array in the real headers: it fits the const mask[] forms only.
    ("Cast", "isSetMask=false, MASK_PLACEHOLDER_LIST",
     "AscendC::Cast<B, A, false>(h, f, AscendC::RoundMode::CAST_ROUND, AscendC::MASK_PLACEHOLDER_LIST, r8, up)", True),
    ("Compare", "isSetMask=false, MASK_PLACEHOLDER_LIST",
     "AscendC::Compare<A, uint8_t, false>(u8, f, g, AscendC::CMPMODE::LT, AscendC::MASK_PLACEHOLDER_LIST, r8, bp)", True),
    ("Add", "isSetMask=false, MASK_PLACEHOLDER_LIST", "AscendC::Add<A, false>(f, f, g, AscendC::MASK_PLACEHOLDER_LIST, r8, bp)",
     False),
    ("Add", "isSetMask=false, MASK_PLACEHOLDER", "AscendC::Add<A, false>(f, f, g, AscendC::MASK_PLACEHOLDER, r8, bp)", True),
    ("GetBlockIdx", "no arguments", "AscendC::GetBlockIdx()", True),
    ("PipeBarrier", "PIPE_V", "AscendC::PipeBarrier<PIPE_V>()", True),
]

# Names the kernel headers put in scope (kernel_tiling.h's using-declarations, kernel_type.h's codes).
DEVICE_NAMES = ["RmsNormTiling", "LayerNormTiling", "SoftMaxTiling", "LogSoftMaxTiling", "TopkTiling", "PadTiling",
                "UnPadTiling", "BatchNormTiling", "GroupNormTiling", "DeepNormTiling", "ConfusionTransposeTiling",
                "TCubeTiling", "LayerNormGradTiling", "LayerNormSeparateTiling"]
DEVICE_CODES = {"DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_BF16": 27, "FORMAT_ND": 2}

# Host forms (TilingContext ctx; PlatformAscendC plat): gert / platform_ascendc / ge as op_host uses them.
HOST_FORMS = [
    ("GetTilingData", "typed pointer", "ctx->template GetTilingData<Td>()", True),
    ("GetRawTilingData", "SetDataSize", "ctx->GetRawTilingData()->SetDataSize(8)", True),
    ("SetBlockDim", "uint32", "ctx->SetBlockDim(8u)", True),
    ("GetWorkspaceSizes", "count", "ctx->GetWorkspaceSizes(1)", True),
    ("GetInputShape", "storage shape", "ctx->GetInputShape(0)->GetStorageShape().GetShapeSize()", True),
    ("GetInputDesc", "data type", "ctx->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT", True),
    ("GetAttrs", "attr pointer", "ctx->GetAttrs()->template GetAttrPointer<float>(0)", True),
    ("SetTilingKey", "uint64", "ctx->SetTilingKey(1ull)", True),
    ("GetCoreNumAiv", "platform", "plat.GetCoreNumAiv()", True),
    ("GetCoreMemSize", "UB", "plat.GetCoreMemSize(platform_ascendc::CoreMemType::UB, u64)", True),
    ("GetSizeByDataType", "ge", "ge::GetSizeByDataType(ge::DT_FLOAT16)", True),
    ("SoftMaxFlashV2TilingFunc", "library tiling",
     "AscendC::SoftMaxFlashV2TilingFunc(std::declval<ge::Shape&>(), 2u, 4u, 1024u, "
     "std::declval<AscendC::tiling::SoftMaxTiling&>(), false)", True),
]


def _probe_unit(forms, prelude: str, params: str, args: str) -> str:
    """One variable template per form: the parameters depend on its arguments, so a call that
    matches no overload makes the requires-expression false instead of an error."""
    lines = [prelude]
    for i, (api, form, call, _) in enumerate(forms):
        lines.append(f"template <class A, class B> constexpr bool form_{i}_t = requires({params}) {{ {call}; }};"
                     f"  // {api}: {form}")
        lines.append(f"constexpr bool form_{i} = form_{i}_t<{args}>;")
    return "\n".join(lines) + "\n"


def _compile(text: str, tmp_path: Path, name: str, extra: list[str] = ()) -> subprocess.CompletedProcess:
    src = tmp_path / name
    src.write_text(text)
    return subprocess.run(["g++", *CXX_FLAGS, "-D__NPU_ARCH__=2201", "-D__CCE_AICORE__=220", *extra,
                           f"-I{INCLUDE_DIR}", "-fsyntax-only", str(src)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "LC_ALL": "C"})


def _verdicts(forms, text: str, tmp_path: Path, name: str) -> list[str]:
    checks = "".join(f"static_assert(form_{i} == {'true' if ok else 'false'}, \"{api}: {form}\");\n"
                     for i, (api, form, _, ok) in enumerate(forms))
    proc = _compile(text + checks, tmp_path, name)
    wrong = re.findall(r'static assertion failed: (.+)$', proc.stderr, re.M)
    assert proc.returncode == 0 or wrong, proc.stderr[-3000:]
    return wrong


_DEVICE_PRELUDE = (DEVICE_MARK + '\n#include "kernel_operator.h"\n#include <type_traits>\n#include <utility>\n'
                   "template <class A, class X> using Dep = std::conditional_t<sizeof(A) != 0, X, void>;\n")
_DEVICE_PARAMS = ", ".join(
    ["AscendC::LocalTensor<A> f", "AscendC::LocalTensor<A> g", "AscendC::LocalTensor<B> h"]
    + [f"AscendC::LocalTensor<Dep<A, {t}>> {v}" for v, t in
       (("u8", "uint8_t"), ("i16", "int16_t"), ("u16", "uint16_t"), ("u32", "uint32_t"), ("i32", "int32_t"),
        ("i8", "int8_t"), ("bl", "bool"))]
    + ["AscendC::GlobalTensor<A> gm", "AscendC::GlobalTensor<Dep<A, int32_t>> gi32", "Dep<A, uint64_t>* m",
       "const Dep<A, uint64_t>* cm", "Dep<A, AscendC::BinaryRepeatParams> bp", "Dep<A, AscendC::UnaryRepeatParams> up",
       "Dep<A, uint8_t> r8"])


def _reference_forms() -> list[tuple[str, str, str, bool]]:
    """(api, form, call, accepted) for every row of the reference table: a form the emulator has is
    accepted, a gap is still refused, and a non-const `mask[]` refuses a const array."""
    out = []
    for api, call, gap, nonconst in REFERENCE_FORMS:
        if call is None:
            continue
        out.append((api, f"gap: {gap}" if gap else call, "AscendC::" + call, gap is None))
        if nonconst and gap is None:
            out.append((api, f"{call} with a const mask array", "AscendC::" + call.replace("(f, ", "(f, ", 1)
                        .replace(", m,", ", cm,"), False))
    return out


def test_device_forms_are_accepted_as_the_reference_says(tmp_path):
    forms = DEVICE_FORMS + _reference_forms()
    unit = _probe_unit(forms, _DEVICE_PRELUDE, _DEVICE_PARAMS, "float, half")
    unit += "".join(f"static_assert(sizeof(::{n}) > 0, \"{n} in the global scope\");\n" for n in DEVICE_NAMES)
    unit += "".join(f"static_assert({k} == {v}, \"{k} is the code {v}\");\n" for k, v in DEVICE_CODES.items())
    assert _verdicts(forms, unit, tmp_path, "device_forms.cpp") == []


def test_the_reference_table_covers_every_emulated_api():
    from copilot.backends.sim.api_registry import registry
    emulated = {e.name for e in registry().entries if e.status == "emulated"}
    covered = {api for api, *_ in REFERENCE_FORMS} | {api for api, *_ in HOST_FORMS}
    assert emulated - covered == set()
    # Every device name in the table is one the emulator defines, so a renamed API fails here too.
    assert {api for api, *_ in REFERENCE_FORMS} - emulated == set()


def test_host_forms_are_accepted_as_the_reference_says(tmp_path):
    prelude = ('#include "register/op_def_registry.h"\n#include "tiling/platform/platform_ascendc.h"\n'
               '#include "tiling/tiling_api.h"\n#include <utility>\nstruct Td { uint32_t n; };\n')
    params = "A* ctx, B plat, uint64_t& u64"
    unit = _probe_unit(HOST_FORMS, prelude, params, "gert::TilingContext, platform_ascendc::PlatformAscendC")
    # The host sees ge's enums, not the device's code macros.
    unit += "#ifdef DT_FLOAT\n#error DT_FLOAT is a macro on the host\n#endif\n"
    assert _verdicts(HOST_FORMS, unit, tmp_path, "host_forms.cpp") == []


def test_get_tiling_data_is_null_past_the_capacity(tmp_path):
    unit = ('#include "register/op_def_registry.h"\n#include <cstdio>\n'
            "struct Big { uint8_t b[4096]; };\nstruct Small { uint32_t n; };\n"
            "int main() { alignas(8) static uint8_t buf[256]; gert::TilingContext ctx;\n"
            "  ctx.GetRawTilingData()->cannsim_bind(buf, sizeof buf);\n"
            "  std::printf(\"%d %d\\n\", ctx.GetTilingData<Big>() == nullptr, ctx.GetTilingData<Small>() != nullptr); }\n")
    src = tmp_path / "cap.cpp"
    src.write_text(unit)
    exe = tmp_path / "cap"
    proc = subprocess.run(["g++", "-std=c++20", f"-I{INCLUDE_DIR}", str(src), "-o", str(exe)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert subprocess.run([str(exe)], capture_output=True, text=True, timeout=30).stdout.split() == ["1", "1"]


# ---------------------------------------------------------------- candidates built as two units

KERNEL = """#include "kernel_operator.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
struct TILE_T { uint32_t n; };
TOP
extern "C" __global__ __aicore__ void relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(TILE_T);
    GET_TILING_DATA(t, tiling);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 1024);
    AscendC::LocalTensor<float> f = buf.Get<float>();
    AscendC::BinaryRepeatParams bp;
    BODY
}
namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    context->GetTilingData<TILE_T>()->n = 1;
    HOST
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}
}
namespace ops {
class ReluCustom : public OpDef {
public:
    explicit ReluCustom(const char* name) : OpDef(name)
    {
        this->Input("INPUT").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ReluCustom);
}
"""


def _kernel(top="", body="", host="", tiling="ReluCustomTiling", input_name="x", opdef=True) -> str:
    text = (KERNEL.replace("TOP", top).replace("BODY", body).replace("HOST", host).replace("TILE_T", tiling)
            .replace("INPUT", input_name))
    return text if opdef else text[:text.index("namespace ops {")]


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


@pytest.fixture(scope="module")
def relu():
    return load_task("relu")


def _ids(b) -> dict[str, tuple[str, int]]:
    return {d.id: (d.severity, d.line) for d in b.diagnostics}


def test_a_clean_candidate_builds_as_two_units_and_carries_its_opdef(relu, tmp_path):
    text = _kernel(body="AscendC::Duplicate(f, 1.0f, 64);")
    b = build(text, relu, ["float32", "float32"])
    assert b.ok and not b.diagnostics, [(d.id, d.message) for d in b.diagnostics]
    units = split_units(text)
    assert "TilingFunc" not in units.device and "OP_ADD" not in units.device
    assert "__aicore__" not in units.host and "struct ReluCustomTiling" in units.host
    assert len(units.device.splitlines()) == len(text.splitlines()) == len(units.host.splitlines())


def test_a_global_rms_norm_tiling_clashes_with_the_library_struct(relu):
    text = _kernel(tiling="RmsNormTiling")
    b = build(text, relu, ["float32", "float32"])
    assert not b.ok and _ids(b).get("L4.NAME_CLASH") == ("error", _line(text, "struct RmsNormTiling"))


def test_a_const_mask_array_has_no_overload(relu):
    text = _kernel(body="const uint64_t mask[1] = {~0ull};\n    AscendC::Add(f, f, f, mask, 1, bp);")
    b = build(text, relu, ["float32", "float32"])
    assert not b.ok and _ids(b).get("L4.API_SIGNATURE") == ("error", _line(text, "AscendC::Add("))


def test_a_repeat_count_of_300_is_narrowed_at_build_time(relu):
    text = _kernel(body="uint64_t mask[1] = {~0ull};\n    constexpr uint32_t repeat = 300;\n"
                        "    AscendC::Add(f, f, f, mask, repeat, bp);\n"
                        "    uint32_t r = t.n;\n    AscendC::Add(f, f, f, mask, r, bp);")
    b = build(text, relu, ["float32", "float32"])
    got = [(d.id, d.severity, d.line) for d in b.diagnostics if d.id == "L2.REPEAT_LIMIT"]
    assert not b.ok and got == [("L2.REPEAT_LIMIT", "error", _line(text, "mask, repeat, bp")),
                                ("L2.REPEAT_LIMIT", "warning", _line(text, "mask, r, bp"))]


def test_a_half_using_the_other_half_is_a_split_unit_finding(relu):
    text = _kernel(top="static const uint32_t kTile = 64;", host="context->SetTilingKey(kTile);")
    b = build(text, relu, ["float32", "float32"])
    assert not b.ok and _ids(b).get("L4.SPLIT_UNIT") == ("error", _line(text, "SetTilingKey(kTile)"))
    # A top-level constexpr scalar is shared by both halves (the tiling header carries it).
    shared = _kernel(top="constexpr uint32_t kTile = 64;", host="context->SetTilingKey(kTile);")
    assert build(shared, relu, ["float32", "float32"]).ok


def test_device_code_using_ge_types_is_a_split_unit_finding(relu):
    text = _kernel(body="int code = ge::DT_FLOAT;\n    (void)code;")
    b = build(text, relu, ["float32", "float32"])
    assert not b.ok and "L4.SPLIT_UNIT" in _ids(b)


def test_the_opdef_is_checked_against_the_proto(relu):
    missing = build(_kernel(opdef=False), relu, ["float32", "float32"])
    assert _ids(missing).get("L4.OPDEF_MISSING", ("",))[0] == "warning"
    wrong = _kernel(input_name="z")
    b = build(wrong, relu, ["float32", "float32"])
    assert not b.ok and _ids(b).get("L4.OPDEF_MISMATCH") == ("error", _line(wrong, "class ReluCustom"))
    assert "input 'x' of task relu is missing" in b.diagnostics[0].message


def test_libc_math_in_device_code_is_reported(relu):
    text = _kernel(body="float s = sqrtf(2.0f) + std::exp(0.0f);\n    AscendC::Duplicate(f, s, 64);")
    b = build(text, relu, ["float32", "float32"])
    got = sorted((d.api, d.severity, d.line) for d in b.diagnostics if d.id == "L4.DEVICE_LIBC")
    line = _line(text, "sqrtf(2.0f)")
    assert b.ok and got == [("exp", "info", line), ("sqrtf", "info", line)], got
