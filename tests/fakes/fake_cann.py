"""A fake CANN toolchain for tests: stands in for `bash build.sh` (structure checks, then the
exported op_host and op_kernel sources compiled with the emulator's headers) and for an installed
toolkit (`fake_cann_home`: install records, a bisheng, npu-smi) so `doctor` can be tried.

`run_build` is what `CANNPILOT_NPU_BUILD_RUNNER=tests.fakes.fake_cann:run_build` selects. On
success it writes `dist/cann_bench-1.0.0-py3-none-any.whl`: the exported `cann_bench` package
with a `_C` module that registers torch.ops.cann_bench.* on the fake device (the emulator).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import zipfile
from pathlib import Path

from copilot.backends.npu.build import BuildOutcome
from copilot.backends.sim.build import INCLUDE_DIR
from tests.fakes.fake_npu_device import rejoined

REQUIRED = ("build.sh", "setup.py", "CMakeLists.txt", "cann_bench/__init__.py", "csrc/extension.cpp",
            "cannpilot_export.json")
SOCS = ("ascend910b", "ascend910_93", "ascend950")

_C_TEMPLATE = '''"""Fake _C (tests only): torch.ops.cann_bench.* on the fake NPU device (the emulator)."""
import json
from pathlib import Path

import torch

from tests.fakes import fake_npu_device

_MANIFEST = json.loads((Path(__file__).parent / "cannpilot_export.json").read_text())
_PROJECT = Path(%(project)r)
_lib = torch.library.Library("cann_bench", "DEF")


def _impl(op):
    def call(*args):
        return fake_npu_device.launch(op, _PROJECT / op["kernel"], args, %(chip)r)
    return call


for _op in _MANIFEST["ops"]:
    _lib.define(_op["schema"])
    _lib.impl(_op["name"], _impl(_op), "CompositeExplicitAutograd")
'''


def check_structure(project: Path, soc: str) -> list[str]:
    errors = [f"{rel}: missing" for rel in REQUIRED if not (project / rel).is_file()]
    if soc not in SOCS:
        errors.append(f"--soc={soc}: not a SoC this toolchain builds ({', '.join(SOCS)})")
    if (project / "build.sh").is_file() and not os.access(project / "build.sh", os.X_OK):
        errors.append("build.sh: not executable")
    if errors:
        return errors
    manifest = json.loads((project / "cannpilot_export.json").read_text())
    for op in manifest["ops"]:
        for key in ("kernel", "host"):
            if not (project / op[key]).is_file():
                errors.append(f"{op[key]}: missing")
        plugin = project / op["kernel"].replace("/op_kernel/", "/op_plugin/").replace(".cpp", "_plugin.cpp")
        if not plugin.is_file():
            errors.append(f"{plugin.relative_to(project)}: missing")
        if f'm.def("{op["schema"]}")' not in (project / "csrc/extension.cpp").read_text():
            errors.append(f"csrc/extension.cpp: schema of {op['name']} not registered")
    return errors


def compile_sources(project: Path, chip: str = "910B2") -> tuple[bool, str]:
    """op_host with g++ against the emulator's host headers; op_kernel through the sim backend."""
    from copilot.backends.sim import build
    from copilot.costmodel.estimate import output_shapes
    from copilot.tasks import load_task

    log, ok = [], True
    manifest = json.loads((project / "cannpilot_export.json").read_text())
    for op in manifest["ops"]:
        host = project / op["host"]
        r = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", f"-I{INCLUDE_DIR}", str(host)],
                           capture_output=True, text=True, timeout=300)
        log.append(r.stderr)
        ok = ok and r.returncode == 0
        task = load_task(op["task_path"])
        case = task.cases[0]
        dtypes = list(case.dtypes) + [o.dtype for o in output_shapes(task, case)]
        kernel = project / op["kernel"]
        b = build(rejoined(kernel, host), task, dtypes, chip)
        if not b.ok:
            ok = False
            for d in b.diagnostics:
                log.append(f"{kernel}:{d.line or 1}:1: error: [{d.id}] {d.message}")
    return ok, "\n".join(x for x in log if x)


def _wheel(project: Path, chip: str) -> Path:
    dist = project / "dist"
    dist.mkdir(exist_ok=True)
    files = {"cann_bench/__init__.py": (project / "cann_bench/__init__.py").read_bytes(),
             "cann_bench/_C.py": (_C_TEMPLATE % {"project": str(project), "chip": chip}).encode(),
             "cann_bench/cannpilot_export.json": (project / "cannpilot_export.json").read_bytes(),
             "cann_bench-1.0.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: cann_bench\nVersion: 1.0.0\n",
             "cann_bench-1.0.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: fake_cann\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             "cann_bench-1.0.0.dist-info/top_level.txt": b"cann_bench\n"}
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("cann_bench-1.0.0.dist-info/RECORD,,")
    files["cann_bench-1.0.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    path = dist / "cann_bench-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def run_build(project: Path, soc: str, timeout: float) -> BuildOutcome:
    project = Path(project)
    errors = check_structure(project, soc)
    if errors:
        return BuildOutcome(False, "fake build.sh: project structure:\n" + "\n".join(errors))
    chip = "950PR" if soc == "ascend950" else "910B2"
    ok, log = compile_sources(project, chip)
    if not ok:
        return BuildOutcome(False, log)
    _wheel(project, chip)
    return BuildOutcome(True, log + "\nfake build.sh: ok\n")


# ---------------------------------------------------------------- a machine faked to have CANN

NPU_SMI = """#!/bin/sh
cat <<'TABLE'
+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.0                   Version: 24.1.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B2               | OK            | 92.1        40                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3380 / 65536         |
+===========================+===============+====================================================+
| 1     910B2               | OK            | 90.3        41                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          3380 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| 1       0                 | 4242          | python3                  | 1024                    |
+===========================+===============+====================================================+
TABLE
"""


def fake_cann_home(root: Path, version: str = "8.2.RC1") -> dict:
    """A toolkit tree, a bisheng and npu-smi; returns the environment to run doctor in."""
    import platform

    home = root / "Ascend" / "ascend-toolkit" / "latest"
    arch = home / f"{platform.machine()}-linux"
    (arch / "ccec_compiler" / "bin").mkdir(parents=True)
    (arch / "ascend_toolkit_install.info").write_text(f"package_name=Ascend-cann-toolkit\nversion={version}\n")
    bisheng = arch / "ccec_compiler" / "bin" / "bisheng"
    bisheng.write_text("#!/bin/sh\necho 'bisheng (fake) clang version 15.0.5'\n")
    bisheng.chmod(0o755)
    bindir = root / "bin"
    bindir.mkdir()
    (bindir / "npu-smi").write_text(NPU_SMI.replace("%%", "%"))
    (bindir / "npu-smi").chmod(0o755)
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, ASCEND_HOME_PATH=str(home), PATH=f"{bindir}:{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(repo / "tests" / "fakes" / "npu_site"), str(repo)]))
    return env
