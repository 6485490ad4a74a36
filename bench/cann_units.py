"""Every kernel file of the repository cut into CANN's two units and compiled syntax-only with the
emulator's headers (device unit: kernel_operator.h + DTYPE macros; host unit: the op_host headers).

    nice -n 10 .venv/bin/python bench/cann_units.py [--lowered] [--out FILE]

A kernel's DTYPE_<NAME> macros come from the task named in its `--task` comment, else from its
entry's arguments as float. With --lowered, the lowering's output for every built-in task that
lowers is checked too (DTYPE macros from the task's first dtypes). Prints one line per kernel and
the totals.
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


def check_text(text: str, label: str, tmp: Path, macros: list[str] | None = None) -> tuple[str, bool] | None:
    """One kernel's row and whether both units compile; None when the text has no kernel entry."""
    entry = find_entry(text)
    if entry is None:
        return None
    units = split_units(text)
    default_t, legacy_t = _tiling_types(strip_comments(text), [camel(entry.name)])
    tiling = [f"-DCANNSIM_DEFAULT_TILING_TYPE={default_t}"] if default_t else []
    tiling += [f"-DCANNSIM_LEGACY_TILING_TYPE={legacy_t}"] if legacy_t else []
    dev_ok, dev_err = compile_unit(units.device, [], [DEVICE_MARK.replace("#define ", "-D").replace(" 1", "=1"),
                                                      *tiling, *(macros or dtype_macros(text, entry))], tmp, "device.cpp")
    host_ok, host_err = compile_unit(units.host, HOST_HEADERS, [], tmp, "host.cpp")
    opdef = bool(units.ops_blocks)
    return (f"{label}: device {'ok' if dev_ok else 'FAIL'} host {'ok' if host_ok else 'FAIL'}"
            f" opdef {'yes' if opdef else 'no'} {dev_err or host_err}"), dev_ok and host_ok


def lowered_sources():
    """(label, source, DTYPE macros) of the lowering's output for every built-in task that lowers."""
    from copilot.dtypes import dtype
    from copilot.lowering import lower
    from copilot.tasks import builtin_names, load_task

    for name in builtin_names():
        task = load_task(name)
        try:
            source = lower(task).source
        except Exception as exc:   # noqa: BLE001 - Unsupported and friends: the task does not lower
            print(f"lowered:{name}: not lowered ({str(exc)[:80]})", flush=True)
            continue
        macros = [f"-DDTYPE_{re.sub(r'[^A-Za-z0-9]', '_', s.name).upper()}={dtype(s.dtypes[0]).cpp}"
                  for s in task.inputs + task.outputs]
        yield f"lowered:{name}", source, macros


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path)
    ap.add_argument("--lowered", action="store_true", help="also the lowering's output for the built-in tasks")
    args = ap.parse_args()
    # tests/kernels/hostile holds adversarial kernels: they are compiled only inside the sandbox.
    files = sorted(p for d in DIRS for p in (REPO / d).rglob("*.cpp")
                   if "hostile" not in p.parts and "__global__" in p.read_text(errors="replace"))
    items = [(str(p.relative_to(REPO)), p.read_text(errors="replace"), None) for p in files]
    rows, ok_both = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for label, text, macros in items + (list(lowered_sources()) if args.lowered else []):
            got = check_text(text, label, Path(tmp), macros)
            if got is None:
                continue
            rows.append(got[0])
            ok_both += got[1]
            print(got[0], flush=True)
    total = f"{ok_both}/{len(rows)} kernels compile as two units (syntax only); {sum(' opdef yes' in r for r in rows)} carry an OpDef"
    print(total)
    if args.out:
        args.out.write_text("\n".join(rows + [total]) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
