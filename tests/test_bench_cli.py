"""`cannpilot bench`: the JSON contract, and a task that fails to load does not stop the bench."""

from __future__ import annotations

import io
import json
import shutil


def test_unloadable_task_is_reported_infeasible_and_the_bench_goes_on(tmp_path, cli):
    from tests.conftest import VALID_TASK

    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("broken_a", "broken_b"):
        shutil.copytree(VALID_TASK, suite / name)
    (suite / "broken_a" / "proto.yaml").write_text("operator: [unclosed\n")
    (suite / "broken_b" / "golden.py").unlink()
    code, out, err = cli("bench", "--suite", str(suite), "--rounds", "1", "--variants", "1",
                         "-o", str(tmp_path / "report"), "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) >= {"tasks", "summary"}
    assert [t["task"] for t in doc["tasks"]] == ["broken_a", "broken_b"]
    for t in doc["tasks"]:
        assert set(t) >= {"task", "feasible", "baseline_us", "best_us", "speedup", "roofline_fraction",
                          "candidates", "tokens"}
        assert t["feasible"] is False
    assert "unreadable YAML" in doc["tasks"][0]["reason"] and "missing golden.py" in doc["tasks"][1]["reason"]
    assert doc["summary"]["feasibility"] == 0.0
    assert set(doc["summary"]) >= {"feasibility", "median_speedup", "median_roofline_fraction"}
    assert (tmp_path / "report.md").read_text().count("| no |") == 2
    assert "[2/2] broken_b: infeasible" in err


def test_bench_rejects_a_suite_that_is_not_a_directory(tmp_path, cli):
    code, out, err = cli("bench", "--suite", str(tmp_path / "nope"))
    assert code == 2 and out == "" and "not a directory" in err


def test_a_task_the_lowering_cannot_serve_is_infeasible_with_the_reason(tmp_path, cli):
    from tests.conftest import VALID_TASK

    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copytree(VALID_TASK, suite / VALID_TASK.name)
    golden = suite / VALID_TASK.name / "golden.py"       # a scan: outside the lowering's patterns
    golden.write_text(f"import torch\n\n\ndef {VALID_TASK.name}(x, **kw):\n    return torch.cumsum(x, dim=-1)\n")
    code, out, err = cli("bench", "--suite", str(suite), "--rounds", "1", "--variants", "1",
                         "-o", str(tmp_path / "report"), "--json")
    assert code == 0
    row = json.loads(out)["tasks"][0]
    assert row["feasible"] is False
    assert "no baseline" in row["reason"] and "cumsum" in row["reason"], row["reason"]
    assert row["candidates"] == 0           # proposals without code never reach the evaluator
    assert json.loads((tmp_path / "report.json").read_text())["complete"] is True


class _Log(io.StringIO):
    def isatty(self):
        return False


def test_progress_in_a_log_names_the_running_case_after_a_quiet_spell():
    """Not on a terminal: finished operators always get a line; what runs now gets one only after
    `quiet_s` without output (a slow golden shows it is alive, a fast sweep stays one line per task)."""
    from copilot.commands.bench_cannbench import Progress

    now = [0.0]
    log = _Log()
    progress = Progress(2, stream=log, quiet_s=30.0, clock=lambda: now[0])
    progress.show("conv: case 1 (1/20)")
    now[0] = 29.0
    progress.show("conv: case 2 (2/20)")
    assert log.getvalue() == ""
    now[0] = 31.0
    progress.show("conv: case 3 (3/20)")
    assert log.getvalue() == "[0/2] running: conv: case 3 (3/20)\n"
    now[0] = 40.0
    progress.finish("conv: golden ran on 20/20 cases")
    now[0] = 60.0
    progress.show("add: case 1 (1/6)")     # 20 s after the finish line: quiet
    assert log.getvalue().splitlines()[-1] == "[1/2] conv: golden ran on 20/20 cases"
