"""Export as a CANN-Bench submission / opp project, and the submission validator."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from copilot.backends.sim.build import INCLUDE_DIR
from copilot.errors import Unsupported
from copilot.export import ExportItem, export
from copilot.export.split import split_candidate
from copilot.export.validate import validate
from copilot.lowering import lower
from copilot.tasks import load_task


@pytest.fixture(scope="module")
def add_kernel() -> str:
    return lower("add").source


@pytest.fixture(scope="module")
def exported(tmp_path_factory, add_kernel):
    out = tmp_path_factory.mktemp("exp") / "sub"
    return export([ExportItem(load_task("add"), add_kernel, "c7", "lowering"),
                   ExportItem(load_task("rms_norm"), lower("rms_norm").source, "c9", "lowering")], out)


def rules(findings) -> list[str]:
    return sorted(f.rule for f in findings)


def test_export_layout_and_kernel_is_the_candidates_device_half(exported, add_kernel):
    root = exported.directory
    assert exported.findings == []
    for rel in ("build.sh", "setup.py", "README.md", "CMakeLists.txt", "cann_bench/__init__.py",
                "csrc/extension.cpp", "csrc/ops/add_custom/op_host/add_custom.cpp",
                "csrc/ops/add_custom/op_plugin/add_custom_plugin.cpp"):
        assert (root / rel).is_file(), rel
    kernel = root / "csrc/ops/add_custom/op_kernel/add_custom.cpp"
    device = split_candidate(add_kernel).device
    assert kernel.read_bytes() == device.encode() and "TilingFunc" not in device and "OP_ADD" not in device
    manifest = json.loads((root / "cannpilot_export.json").read_text())
    op = next(o for o in manifest["ops"] if o["task"] == "add")
    assert op["sha256"] == hashlib.sha256(add_kernel.encode()).hexdigest()
    assert op["kernel_sha256"] == hashlib.sha256(device.encode()).hexdigest()
    assert op["op_type"] == "AddCustom" and op["schema"] == "add(Tensor x1, Tensor x2) -> Tensor"
    assert manifest["measured_on_npu"] is False
    assert (root / "build.sh").stat().st_mode & 0o100
    init = (root / "cann_bench/__init__.py").read_text()
    assert "def add(x1, x2):" in init and "def rms_norm(" in init
    build = (root / "build.sh").read_text()
    assert "--soc=" in build and "get_device_name" in build and "npu-smi" in build and "ascend950" in build


def test_host_half_compiles_with_emulator_headers(exported):
    host = exported.directory / "csrc/ops/rms_norm_custom/op_host/rms_norm_custom.cpp"
    text = host.read_text()
    assert "OP_ADD(RmsNormCustom)" in text and ".SetTiling(optiling::TilingFunc)" in text
    assert 'this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-06)' in text
    assert text.count("OP_ADD(") == 1   # the lowering's own OpDef, carried unchanged
    assert "#include <charconv>" in text    # the candidate's own std headers (AttrDecimal needs it)
    r = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", f"-I{INCLUDE_DIR}", str(host)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_opp_format(tmp_path, add_kernel):
    r = export([ExportItem(load_task("add"), add_kernel)], tmp_path / "opp", "opp")
    assert r.findings == []
    assert (tmp_path / "opp/add_custom/op_kernel/add_custom.cpp").read_bytes() == split_candidate(add_kernel).device.encode()
    assert (tmp_path / "opp/add_custom/op_host/add_custom.cpp").is_file()
    assert not (tmp_path / "opp/cann_bench").exists()
    assert "npu_op_kernel_sources(cannpilot_kernels OP_TYPE AddCustom" in (tmp_path / "opp/CMakeLists.txt").read_text()


def test_split_needs_a_tiling_func(add_kernel):
    with pytest.raises(Unsupported, match="TilingFunc"):
        split_candidate(add_kernel.split("namespace optiling {")[0])
    with pytest.raises(Unsupported, match="kernel entry"):
        split_candidate("int main() {}")
    parts = split_candidate(add_kernel)
    assert parts.entry == "add_custom" and parts.tiling_struct == "AddTilingData"
    assert "struct AddTilingData" in parts.tiling_data and "TilingFunc" in parts.host


def test_refuses_a_foreign_nonempty_directory(tmp_path, add_kernel):
    (tmp_path / "mine.txt").write_text("keep me")
    from copilot.errors import BadInput

    with pytest.raises(BadInput, match="not empty"):
        export([ExportItem(load_task("add"), add_kernel)], tmp_path)
    assert (tmp_path / "mine.txt").read_text() == "keep me"


# ---------------------------------------------------------------- validator

def _copy(exported, tmp_path) -> Path:
    import shutil

    dst = tmp_path / "sub"
    shutil.copytree(exported.directory, dst)
    return dst


def test_structure_rules(tmp_path):
    assert rules(validate(tmp_path / "missing")) == ["EVAL-CANN-001"]
    (tmp_path / "empty").mkdir()
    assert rules(validate(tmp_path / "empty")) == ["AUTO-CANN-002", "EVAL-CANN-002"]


def test_interface_names_match_the_tasks(exported, tmp_path):
    root = _copy(exported, tmp_path)
    init = root / "cann_bench/__init__.py"
    init.write_text(init.read_text().replace("def add(", "def plus("))
    found = validate(root)
    assert rules(found) == ["EVAL-CANN-005"]
    assert "add" in found[0].expected and "plus" in found[0].actual and found[0].hint


@pytest.mark.parametrize("body, rule", [
    ("    return torch.add(x1, x2)", "SUB-BEH-001"),
    ("    return x1 @ x2", "SUB-BEH-001"),
    ("    return torch.nn.functional.relu(x1)", "SUB-BEH-001"),
    ("    return torch.ops.cann_bench.add(x1.transpose(0, 1).contiguous(), x2)", "SUB-BEH-002"),
    ("    return torch.ops.cann_bench.add(x1[:, 1:], x2)", "SUB-BEH-002"),
    ("    return torch_npu.npu_add(x1, x2)", "SUB-BEH-003"),
    ("    return torch.ops.aten.add(x1, x2)", "SUB-BEH-003"),
    ("    return torch.ops.cann_bench.add(x1.cpu(), x2).npu()", "SUB-BEH-004"),
    ("    global _last\n    return _last", "SUB-BEH-005"),
    ("    torch.npu.synchronize = lambda: None\n    return torch.ops.cann_bench.add(x1, x2)", "SUB-BEH-006"),
    ("    return Lazy(x1)", "SUB-BEH-007"),
])
def test_binding_behaviour_rules(exported, tmp_path, body, rule):
    root = _copy(exported, tmp_path)
    init = root / "cann_bench/__init__.py"
    text = init.read_text().replace("    return torch.ops.cann_bench.add(x1, x2)", body)
    init.write_text("import torch_npu\n" + text)
    found = validate(root)
    assert rule in rules(found), [f.line() for f in found]
    hit = next(f for f in found if f.rule == rule)
    assert hit.location.startswith("cann_bench/__init__.py:")


def test_lazy_tensor_class_and_cxx_routing(exported, tmp_path):
    root = _copy(exported, tmp_path)
    init = root / "cann_bench/__init__.py"
    init.write_text(init.read_text() + "\nclass Lazy(torch.Tensor):\n    pass\n")
    plugin = root / "csrc/ops/add_custom/op_plugin/add_custom_plugin.cpp"
    text = plugin.read_text().replace("aclnnAddCustomGetWorkspaceSize(", "aclnnAddGetWorkspaceSize(")
    text = text.replace("    return y;", "    y = at::softmax(y, -1);\n    return y.permute({1, 0});")
    plugin.write_text(text)
    found = validate(root)
    assert {"SUB-BEH-007", "SUB-BEH-003", "SUB-BEH-001", "SUB-BEH-002"} <= set(rules(found)), \
        [f.line() for f in found]
    # all reported at once, each with a location, expectation and fix
    assert all(f.location and f.expected and f.actual and f.hint for f in found)


def test_edited_kernel_is_reported(exported, tmp_path):
    root = _copy(exported, tmp_path)
    k = root / "csrc/ops/add_custom/op_kernel/add_custom.cpp"
    k.write_text(k.read_text() + "\n// tweak\n")
    assert rules(validate(root)) == ["CANNPILOT-KERNEL"]


def test_cli_export_and_validate(cli, tmp_path, add_kernel):
    k = tmp_path / "k.cpp"
    k.write_text(add_kernel)
    code, out, err = cli("export", str(k), "--task", "add", "-o", str(tmp_path / "o"), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["valid"] and doc["ops"][0]["op_type"] == "AddCustom"
    code, out, _ = cli("validate-submission", str(tmp_path / "o"))
    assert code == 0 and "no finding" in out
    code, out, _ = cli("validate-submission", str(tmp_path / "nothing"), "--json")
    assert code == 1 and json.loads(out)["findings"][0]["rule"] == "EVAL-CANN-001"
    code, _, err = cli("export", str(k), "-o", str(tmp_path / "p"))
    assert code == 2 and "--task" in err


def test_build_sh_soc_detection_and_override(exported, tmp_path):
    """Without torch_npu or npu-smi the script asks for --soc; with it, it goes on to need CANN."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "ASCEND_HOME_PATH"}
    env["PATH"] = "/usr/bin:/bin"
    build = exported.directory / "build.sh"
    r = subprocess.run(["bash", str(build)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 1 and "--soc=" in r.stderr
    r = subprocess.run(["bash", str(build), "--soc=ascend950"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode != 0 and "SoC ascend950" in r.stdout and "ASCEND_HOME_PATH" in r.stderr
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "npu-smi").write_text("#!/bin/sh\necho '| 0     Ascend950PR   | OK |'\n")
    (fake_bin / "npu-smi").chmod(0o755)
    env["PATH"] = f"{fake_bin}:/usr/bin:/bin"
    r = subprocess.run(["bash", str(build)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "SoC ascend950" in r.stdout


def test_reduction_output_follows_the_axis_attr(tmp_path):
    r = export([ExportItem(load_task("reduce_sum"), lower("reduce_sum").source)], tmp_path / "rs")
    assert r.findings == [] and r.specs[0].rules[0].axis_attr == "dim" and r.specs[0].rules[0].keep_attr == "keepdim"
    plugin = (tmp_path / "rs/csrc/ops/reduce_sum_custom/op_plugin/reduce_sum_custom_plugin.cpp").read_text()
    assert "if (keepdim) { y_shape[y_axis] = 1; }" in plugin
