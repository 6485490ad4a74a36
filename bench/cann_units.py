"""Every kernel file of the repository cut into CANN's two units and compiled syntax-only with the
emulator's headers (device unit: kernel_operator.h + DTYPE macros; host unit: the op_host headers).

    nice -n 10 .venv/bin/python bench/cann_units.py [--out FILE]

A kernel's DTYPE_<NAME> macros come from the task named in its `--task` comment, else from its
entry's arguments as float. Prints one line per kernel and the totals.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copilot.backends.sim.build import (CXX_FLAGS, DEVICE_MARK, HOST_HEADERS, INCLUDE_DIR, _tiling_types,  # noqa: E402
                                        camel, find_entry)
from copilot.backends.sim.units import strip_comments  # noqa: E402
from copilot.backends.sim.units import split_units  # noqa: E402

DIRS = ["knowledge/cards/L5", "knowledge/lessons", "bench/calibration_kernels", "bench/results/calibration/kernels",
        "tests/kernels"]


def dtype_macros(text: str, entry) -> list[str]:
    from copilot.dtypes import dtype
    from copilot.tasks import load_task

    m = re.search(r"--task\s+(\S+)", text)
    if m:
        try:
            t = load_task(m.group(1))
            return [f"-DDTYPE_{re.sub(r'[^A-Za-z0-9]', '_', s.name).upper()}={dtype(s.dtypes[0]).cpp}"
                    for s in t.inputs + t.outputs]
        except Exception:   # noqa: BLE001 - a task not found: fall back to the entry's names
            pass
    code = text[text.index(entry.name):]
    args = re.findall(r"GM_ADDR\s+(\w+)", code[:code.index(")")])
    return [f"-DDTYPE_{a.upper()}=float" for a in args if a not in ("workspace", "tiling")]


def compile_unit(text: str, headers: list[str], extra: list[str], tmp: Path, name: str) -> tuple[bool, str]:
    src = tmp / name
    src.write_text("".join(f'#include "{h}"\n' for h in headers) + f'#line 1 "{name}"\n' + text)
    p = subprocess.run(["g++", *CXX_FLAGS, "-D__NPU_ARCH__=2201", "-D__CCE_AICORE__=220", *extra, f"-I{INCLUDE_DIR}",
                        "-fsyntax-only", str(src)], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    err = next((ln for ln in p.stderr.splitlines() if ": error:" in ln), "")
    return p.returncode == 0, err


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    # tests/kernels/hostile holds adversarial kernels: they are compiled only inside the sandbox.
    files = sorted(p for d in DIRS for p in (REPO / d).rglob("*.cpp")
                   if "hostile" not in p.parts and "__global__" in p.read_text(errors="replace"))
    rows, ok_both = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            text = path.read_text(errors="replace")
            entry = find_entry(text)
            if entry is None:
                continue
            units = split_units(text)
            default_t, legacy_t = _tiling_types(strip_comments(text), [camel(entry.name)])
            tiling = [f"-DCANNSIM_DEFAULT_TILING_TYPE={default_t}"] if default_t else []
            tiling += [f"-DCANNSIM_LEGACY_TILING_TYPE={legacy_t}"] if legacy_t else []
            dev_ok, dev_err = compile_unit(units.device, [], [DEVICE_MARK.replace("#define ", "-D").replace(" 1", "=1"),
                                                              *tiling, *dtype_macros(text, entry)], Path(tmp), "device.cpp")
            host_ok, host_err = compile_unit(units.host, HOST_HEADERS, [], Path(tmp), "host.cpp")
            ok_both += dev_ok and host_ok
            opdef = bool(units.ops_blocks)
            row = (f"{path.relative_to(REPO)}: device {'ok' if dev_ok else 'FAIL'} host {'ok' if host_ok else 'FAIL'}"
                   f" opdef {'yes' if opdef else 'no'} {dev_err or host_err}")
            rows.append(row)
            print(row, flush=True)
    total = f"{ok_both}/{len(rows)} kernels compile as two units (syntax only); {sum(' opdef yes' in r for r in rows)} carry an OpDef"
    print(total)
    if args.out:
        args.out.write_text("\n".join(rows + [total]) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
