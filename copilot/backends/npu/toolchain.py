"""What the NPU stack on this machine is: the CANN toolkit (path, version, compiler), the SoC, the
devices and whether they are busy, torch_npu and whether it matches torch. Used by `doctor` and by
the choice of backend (`auto`: npu when all of it is there, else sim).

Every probe is a file read or a short subprocess with a timeout; nothing here needs a device to
answer (a missing piece is reported, never raised).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

DEFAULT_HOMES = ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/latest",
                 "~/Ascend/ascend-toolkit/latest", "~/Ascend/latest")
# npu-smi / torch_npu device names -> the SoC name CANN's compiler takes (docs/npu-backend.md).
SOC_PATTERNS = ((r"^Ascend910B|^Ascend910_936", "ascend910b"), (r"^Ascend910_93", "ascend910_93"),
                (r"^Ascend950", "ascend950"), (r"^Ascend310P", "ascend310p"))
SOC_CHIP = {"ascend910b": "910B2", "ascend910_93": "910B2", "ascend950": "950PR", "ascend310p": "310P"}


@dataclass
class NpuStack:
    cann_home: str | None = None
    cann_version: str | None = None
    compiler: str | None = None           # bisheng
    cmake: str | None = None
    npu_smi: str | None = None
    device_name: str | None = None        # e.g. Ascend910B2
    soc: str | None = None                # e.g. ascend910b
    devices: list[int] = field(default_factory=list)
    busy_devices: list[int] = field(default_factory=list)
    torch: str = ""
    torch_npu: str | None = None
    torch_npu_error: str | None = None
    missing: list[str] = field(default_factory=list)   # one line per missing piece: what to install

    @property
    def free_devices(self) -> list[int]:
        return [d for d in self.devices if d not in self.busy_devices]

    @property
    def ready(self) -> bool:
        return not self.missing

    def to_json(self) -> dict:
        d = asdict(self)
        d["free_devices"] = self.free_devices
        d["ready"] = self.ready
        return d


def soc_of(device_name: str | None) -> str | None:
    for pattern, soc in SOC_PATTERNS:
        if device_name and re.search(pattern, device_name):
            return soc
    return None


def cann_home(env=None) -> str | None:
    env = os.environ if env is None else env
    for key in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        if env.get(key) and Path(env[key]).is_dir():
            return env[key]
    for h in DEFAULT_HOMES:
        p = Path(h).expanduser()
        if p.is_dir():
            return str(p)
    return None


def cann_version(home: str) -> str | None:
    """The toolkit version from its install records (`*install.info`: version=..., or version.cfg)."""
    root = Path(home)
    arch = f"{platform.machine()}-linux"
    for info in [root / arch / "ascend_toolkit_install.info", root / "ascend_toolkit_install.info",
                 *sorted(root.glob("*/ascend_toolkit_install.info"))]:
        try:
            m = re.search(r"^version=(\S+)", info.read_text(), re.M)
        except OSError:
            continue
        if m:
            return m.group(1)
    try:
        m = re.search(r"version=\[?([0-9][\w.]*)", (root / "version.cfg").read_text())
        return m.group(1) if m else None
    except OSError:
        return None


def find_compiler(home: str | None) -> str | None:
    if home:
        arch = f"{platform.machine()}-linux"
        for rel in (f"{arch}/ccec_compiler/bin/bisheng", "compiler/ccec_compiler/bin/bisheng",
                    "tools/ccec_compiler/bin/bisheng"):
            p = Path(home) / rel
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    return shutil.which("bisheng")


def _run(cmd: list[str], timeout: float = 20) -> str | None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def parse_npu_smi(text: str) -> tuple[str | None, list[int], list[int]]:
    """(device name, device ids, busy device ids) from `npu-smi info`: the device table rows
    `| <id>  <name> | ...`, and the process table rows `| <id> <chip> | <pid> | <name> | <mem> |`."""
    name, devices, busy = None, [], []
    in_procs = False
    for line in text.splitlines():
        if re.search(r"Process id|Process name", line):
            in_procs = True
            continue
        m = re.match(r"\|\s*(\d+)\s+(Ascend\S+|9\d\d\w*|310\w*)\s", line)
        if m and not in_procs:
            devices.append(int(m.group(1)))
            raw = m.group(2)
            name = name or (raw if raw.startswith("Ascend") else f"Ascend{raw}")
            continue
        p = re.match(r"\|\s*(\d+)\s+\d+\s+\|\s*(\d+)\s+\|", line)
        if in_procs and p and int(p.group(1)) not in busy:
            busy.append(int(p.group(1)))
    return name, sorted(set(devices)), sorted(busy)


def _torch_npu_probe(python: str = sys.executable) -> tuple[str | None, str | None, str | None, int]:
    """(torch_npu version, device name, error, device count), from a child interpreter."""
    code = ("import torch, torch_npu\nprint(torch_npu.__version__)\nn = torch.npu.device_count() "
            "if torch.npu.is_available() else 0\nprint(n)\nprint(torch.npu.get_device_name(0) if n else '')")
    try:
        r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        return None, None, "importing torch_npu timed out", 0
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["import failed"])[-1]
        return None, None, last, 0
    lines = r.stdout.strip().splitlines() + ["", "", ""]
    return lines[0] or None, lines[2] or None, None, int(lines[1] or 0)


def versions_match(torch_version: str, torch_npu_version: str) -> bool:
    """torch_npu X.Y.* is built for torch X.Y.*."""
    mm = (lambda v: tuple(re.findall(r"\d+", v)[:2]))
    return mm(torch_version) == mm(torch_npu_version)


def probe() -> NpuStack:
    import importlib.util

    import torch

    s = NpuStack(torch=torch.__version__)
    s.cann_home = cann_home()
    if s.cann_home:
        s.cann_version = cann_version(s.cann_home)
        s.compiler = find_compiler(s.cann_home)
    s.cmake = shutil.which("cmake")
    s.npu_smi = shutil.which("npu-smi")
    if s.npu_smi:
        out = _run([s.npu_smi, "info"])
        if out:
            s.device_name, s.devices, s.busy_devices = parse_npu_smi(out)
    if importlib.util.find_spec("torch_npu") is not None:
        ver, name, err, count = _torch_npu_probe()
        s.torch_npu, s.torch_npu_error = ver, err
        s.device_name = name or s.device_name
        if count and not s.devices:
            s.devices = list(range(count))
    s.soc = soc_of(s.device_name)

    miss = s.missing
    if not s.cann_home:
        miss.append("CANN toolkit: not found (set ASCEND_HOME_PATH or source <toolkit>/set_env.sh; install the "
                    "CANN toolkit from the Ascend community site)")
    elif not s.compiler:
        miss.append(f"compiler: no bisheng under {s.cann_home} (reinstall the CANN toolkit with its compiler)")
    if not s.cmake:
        miss.append("cmake: not on PATH (apt-get install cmake; the op project builds with CMake)")
    if not s.devices:
        miss.append("NPU: no device (npu-smi finds none; install the Ascend driver and firmware, or use the sim backend)")
    elif not s.free_devices:
        miss.append(f"NPU: all {len(s.devices)} device(s) busy (npu-smi lists processes on each)")
    if s.devices and not s.soc:
        miss.append(f"SoC: device {s.device_name or '?'} is not one the export knows (ascend910b, ascend910_93, ascend950)")
    if s.torch_npu is None:
        miss.append("torch_npu: " + (f"installed but does not import ({s.torch_npu_error})" if s.torch_npu_error
                                     else f"not installed (pip install torch_npu=={s.torch.split('+')[0]}.* matching torch "
                                          f"{s.torch}; extra cannpilot[npu])"))
    elif not versions_match(s.torch, s.torch_npu):
        miss.append(f"torch_npu {s.torch_npu} does not match torch {s.torch} (install torch_npu {'.'.join(s.torch.split('.')[:2])}.*)")
    return s


def chosen_backend(setting: str, stack: NpuStack | None) -> tuple[str, str]:
    """(backend, why) for a session with `backend: setting` on this machine."""
    if setting == "sim":
        return "sim", "settings say sim"
    ready = stack is not None and stack.ready
    if setting == "npu":
        return ("npu", "settings say npu") if ready else ("npu", "settings say npu, but the NPU stack is incomplete: "
                                                          "sessions will fail until it is")
    return ("npu", "auto: CANN, torch_npu and a free device are present") if ready else \
        ("sim", "auto: the NPU stack is incomplete, so the emulator")
