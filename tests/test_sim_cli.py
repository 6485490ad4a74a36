"""`cannpilot check`: exit codes, the JSON document, the readable report."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

KERNELS = Path(__file__).parent / "kernels"


def test_check_json_for_a_correct_kernel(cli):
    code, out, err = cli("check", str(KERNELS / "relu_tail_pad.cpp"), "--task", "relu", "--cases", "9,1", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"compiled", "correct", "chip", "backend", "diagnostics", "cases", "summary"}
    assert doc["compiled"] is True and doc["correct"] is True
    assert doc["chip"] == "910B2" and doc["backend"] == "sim"
    assert [c["id"] for c in doc["cases"]] == ["9", "1"]
    for c in doc["cases"]:
        assert set(c) == {"id", "passed", "mere", "mare", "failure_class", "est_us", "t_hw_us",
                          "roofline_fraction", "roofline_terms", "pipes", "hbm_us", "bottleneck", "timing",
                          "est_band"}
        assert c["passed"] is True and c["timing"] == "estimate"
        assert 0 < c["est_band"] < 10              # 910B2 is calibrated: its bound class's band
        assert c["est_us"] >= c["t_hw_us"] > 0 and 0 < c["roofline_fraction"] <= 1
        assert set(c["pipes"]) == {"MTE2", "MTE3", "V", "S"}
        assert c["bottleneck"] in ("memory", "vector", "scalar", "latency")
    s = doc["summary"]
    assert s["timing"] == "estimate" and s["timed_cases"] == 2 and s["geomean_est_us"] > 0
    assert s["est_band"] == max(c["est_band"] for c in doc["cases"])
    assert "running" in err   # progress goes to stderr


def test_check_perf_times_the_largest_cases_and_judges_their_sampled_blocks(cli):
    code, out, err = cli("check", str(KERNELS / "relu_tail_pad.cpp"), "--task", "relu", "--cases", "perf", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["cases"]) == 3
    for c in doc["cases"]:
        assert c["passed"] is True and c["mere"] is None
        assert c["est_us"] >= c["t_hw_us"] > 0 and c["timing"] == "estimate"
    assert "first, middle and last blocks on real inputs, judged" in err


def test_check_reports_a_rule_with_its_source_line(cli, tmp_path):
    src = (KERNELS / "relu_tail_pad.cpp").read_text()
    bad = src.replace("            AscendC::Maxs(y, x, static_cast<T>(0.0f), n);",
                      "            AscendC::Maxs(y, x, static_cast<T>(0.0f), n + 9000);")
    path = tmp_path / "relu_bad.cpp"
    path.write_text(bad)
    line = bad.splitlines().index("            AscendC::Maxs(y, x, static_cast<T>(0.0f), n + 9000);") + 1
    code, out, _ = cli("check", str(path), "--task", "relu", "--cases", "9", "--json")
    assert code == 1
    doc = json.loads(out)
    assert any(d["line"] == line and d["id"].startswith("L2.") for d in doc["diagnostics"]), doc["diagnostics"]
    code, out, _ = cli("check", str(path), "--task", "relu", "--cases", "9")
    assert code == 1
    assert f"{line:>5} | " in out and "AscendC::Maxs(y, x, static_cast<T>(0.0f), n + 9000);" in out and "^^^" in out


def test_check_compile_error_exits_1_with_the_diagnostic(cli, tmp_path):
    path = tmp_path / "broken.cpp"
    path.write_text((KERNELS / "relu_tail_pad.cpp").read_text().replace("AscendC::Maxs(y, x, static_cast<T>(0.0f), n);",
                                                                          "AscendC::Maxs(y, x, n);"))
    code, out, _ = cli("check", str(path), "--task", "relu", "--cases", "9", "--json")
    assert code == 1
    doc = json.loads(out)
    assert doc["compiled"] is False and doc["cases"] == []
    errors = [d["id"] for d in doc["diagnostics"] if d["severity"] == "error"]
    assert errors[0] == "L4.API_SIGNATURE", doc["diagnostics"]


@pytest.mark.parametrize("args, needle", [
    (["check", "/no/such/kernel.cpp", "--task", "relu"], "no such kernel file"),
    (["check", str(KERNELS / "relu_tail_pad.cpp"), "--task", "no_such_task"], "unknown task"),
    (["check", str(KERNELS / "relu_tail_pad.cpp"), "--task", "relu", "--chip", "nope"], "unknown chip"),
    (["check", str(KERNELS / "relu_tail_pad.cpp"), "--task", "relu", "--cases", "999"], "no case"),
])
def test_check_bad_input_exits_2_with_one_line(cli, args, needle):
    code, out, err = cli(*args)
    assert code == 2
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
