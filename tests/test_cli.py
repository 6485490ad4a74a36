"""The CLI contract: tasks ls/show JSON, doctor, exit codes, `cannpilot` with no arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from copilot.tasks import builtin_names


def test_tasks_ls_json_contract(cli):
    code, out, err = cli("tasks", "ls", "--json")
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == len(builtin_names()) >= 40
    for row in rows:
        assert set(row) == {"name", "category", "path", "inputs", "dtypes", "cases"}
        assert row["cases"] >= 8 and row["inputs"] and row["dtypes"]
    assert {r["category"] for r in rows} >= {"elementwise", "broadcast", "reduction", "normalization",
                                             "softmax", "fusion"}


def test_tasks_show_accepts_a_directory_outside_the_repository(task_dir, cli):
    code, out, _ = cli("tasks", "show", str(task_dir), "--json")
    assert code == 0
    d = json.loads(out)
    assert d["name"] == "scaled_tanh" and d["attrs"][0]["name"] == "scale"
    assert [c["quick"] for c in d["case_list"]] == [True, True, True, False, True]


def test_tasks_show_readable(task_dir, cli):
    code, out, _ = cli("tasks", "show", str(task_dir))
    assert code == 0 and "tanh(scale * x)" in out and "[nan,nan]" in out


def test_doctor_reports_keys_by_name_only(monkeypatch, cli):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-1234")
    code, out, _ = cli("doctor", "--json")
    assert code == 0
    report = json.loads(out)
    assert "OPENAI_API_KEY" in report["llm_keys_present"]
    assert "sk-test-not-a-real-key-1234" not in out
    assert report["gxx"] and report["backends"]["sim"] is True
    assert report["cann"]["bisheng"] is None or isinstance(report["cann"]["bisheng"], str)


def test_bad_option_exits_2_with_one_line(cli):
    code, _, _ = cli("tasks", "show")
    assert code == 2


def test_console_script_runs_with_no_arguments():
    env = dict(os.environ, TERM="dumb")
    out = subprocess.run([sys.executable, "-m", "copilot.cli", "--version"], capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 0 and out.stdout.startswith("cannpilot ")
