"""`doctor` on this machine (no CANN, no NPU) and on one faked to have both (tests/fakes/fake_cann.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from copilot.backends.npu.toolchain import DEFAULT_HOMES, chosen_backend, parse_npu_smi, soc_of, versions_match
from tests.fakes.fake_cann import NPU_SMI, fake_cann_home

REPO = Path(__file__).resolve().parents[1]


def doctor(env: dict) -> dict:
    r = subprocess.run([sys.executable, "-m", "copilot", "doctor", "--json"], capture_output=True, text=True,
                       env=env, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_doctor_with_a_faked_cann(tmp_path):
    env = fake_cann_home(tmp_path)
    env["CANNPILOT_CONFIG_DIR"] = str(tmp_path / "cfg")
    env["CANNPILOT_BACKEND"] = "auto"
    report = doctor(env)
    npu = report["npu"]
    assert npu["cann_version"] == "8.2.RC1" and npu["compiler"].endswith("bisheng")
    assert npu["device_name"] == "Ascend910B2" and npu["soc"] == "ascend910b"
    assert npu["devices"] == [0, 1] and npu["busy_devices"] == [1] and npu["free_devices"] == [0]
    assert versions_match(npu["torch"], npu["torch_npu"])
    assert report["backends"]["npu"] is True and npu["missing"] == []
    assert report["session_backend"]["backend"] == "npu", report["session_backend"]


def test_doctor_on_this_machine_names_each_missing_piece(tmp_path):
    if any(Path(h).expanduser().is_dir() for h in DEFAULT_HOMES):
        pytest.skip("a CANN toolkit is installed in a default location on this machine")
    env = {k: v for k, v in os.environ.items() if k not in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"
    env["CANNPILOT_CONFIG_DIR"] = str(tmp_path / "cfg")
    report = doctor(env)
    missing = report["npu"]["missing"]
    assert any(m.startswith("CANN toolkit") for m in missing)
    assert any(m.startswith("NPU: no device") for m in missing)
    assert any(m.startswith("torch_npu") for m in missing)
    assert report["backends"]["npu"] is False and report["session_backend"]["backend"] == "sim"


def test_npu_smi_soc_and_backend_choice():
    name, devices, busy = parse_npu_smi(NPU_SMI)
    assert (name, devices, busy) == ("Ascend910B2", [0, 1], [1])
    assert soc_of("Ascend910_9362") == "ascend910b" and soc_of("Ascend910_9391") == "ascend910_93"
    assert soc_of("Ascend950PR") == "ascend950" and soc_of("GPU") is None
    assert not versions_match("2.13.0+cpu", "2.5.1")
    assert chosen_backend("auto", None)[0] == "sim" and chosen_backend("sim", None)[0] == "sim"
