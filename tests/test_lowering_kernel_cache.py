"""The lowered-kernel cache behind `cannpilot lower`: a second lowering of the same task files,
chip, knobs and code answers from disk, byte for byte, without importing torch."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import copilot.lowering
from copilot.lowering import kernel_cache
from copilot.paths import BUILTIN_DIR

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache, and a stand-in for Cannpilot's code in the key (the working tree may be
    edited while the tests run)."""
    monkeypatch.setenv("CANNPILOT_CACHE_DIR", str(tmp_path / "cache"))
    code = tmp_path / "code"
    code.mkdir()
    (code / "module.py").write_text("X = 1\n")
    monkeypatch.setattr(kernel_cache, "PACKAGE_DIR", code)
    return tmp_path / "cache" / "lowered"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.json")) if cache.exists() else []


def _count_lowerings(monkeypatch) -> list:
    calls = []
    real = copilot.lowering.lower

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(copilot.lowering, "lower", counted)
    return calls


def test_a_second_lowering_is_the_same_kernel_from_the_cache(cli, cache, tmp_path, monkeypatch):
    calls = _count_lowerings(monkeypatch)
    code, _, first_err = cli("lower", "--task", "relu", "-o", str(tmp_path / "a.cpp"))
    assert code == 0 and len(calls) == 1 and len(_entries(cache)) == 1
    code, _, err = cli("lower", "--task", "relu", "-o", str(tmp_path / "b.cpp"))
    assert code == 0 and len(calls) == 1          # not lowered again
    assert (tmp_path / "b.cpp").read_bytes() == (tmp_path / "a.cpp").read_bytes()
    assert "lowered-kernel cache" in err and "lowered-kernel cache" not in first_err
    notes = [line for line in first_err.splitlines() if "wrote" not in line]
    assert all(line in err for line in notes)      # the same notes as the lowering printed


def test_an_edited_task_or_another_knob_is_lowered_afresh(cli, cache, tmp_path, monkeypatch):
    task = tmp_path / "relu"
    shutil.copytree(BUILTIN_DIR / "relu", task)
    calls = _count_lowerings(monkeypatch)
    assert cli("lower", "--task", str(task))[0] == 0
    golden = task / "golden.py"
    golden.write_text(golden.read_text() + "\n# an edit\n")
    assert cli("lower", "--task", str(task))[0] == 0
    assert cli("lower", "--task", str(task), "--knob", "buffer_num=1")[0] == 0
    assert len(calls) == 3 and len(_entries(cache)) == 3


def test_a_change_to_cannpilots_code_is_a_new_key(cache):
    before = kernel_cache.key("relu", "910B2", {})
    (kernel_cache.PACKAGE_DIR / "module.py").write_text("X = 2\n")
    assert kernel_cache.key("relu", "910B2", {}) != before
    assert kernel_cache.key("relu", "950PR", {}) != kernel_cache.key("relu", "910B2", {})


def test_no_cache_neither_reads_nor_writes(cli, cache, monkeypatch):
    calls = _count_lowerings(monkeypatch)
    assert cli("lower", "--task", "relu")[0] == 0
    code, out, err = cli("lower", "--task", "relu", "--no-cache")
    assert code == 0 and out.startswith("// ") and "lowered-kernel cache" not in err
    assert len(calls) == 2 and len(_entries(cache)) == 1


def test_a_refused_task_is_not_stored(cli, cache):
    code, out, err = cli("lower", "--task", str(FIXTURES / "lowering_struct" / "lw_list_mix"))
    assert code == 3 and out == "" and _entries(cache) == []
    assert cli("lower", "--task", str(FIXTURES / "lowering_struct" / "lw_list_mix"))[0] == 3


def test_built_in_tasks_are_found_where_the_loader_finds_them(tmp_path, monkeypatch):
    from copilot.tasks import load_task

    assert kernel_cache.task_dir("relu") == BUILTIN_DIR / "relu"
    assert load_task("relu").builtin
    assert kernel_cache.task_dir("no_such_task") is None
    (tmp_path / "relu").mkdir()                 # a directory named like a built-in shadows it
    monkeypatch.chdir(tmp_path)
    assert kernel_cache.task_dir("relu") == Path("relu")


def test_a_cache_hit_does_not_import_torch(cli, cache, tmp_path):
    assert cli("lower", "--task", "relu")[0] == 0
    code = ("import sys\nfrom pathlib import Path\nfrom copilot.cli import main\n"
            "from copilot.lowering import kernel_cache\n"
            f"kernel_cache.PACKAGE_DIR = Path({str(kernel_cache.PACKAGE_DIR)!r})\n"
            f"rc = main(['lower', '--task', 'relu', '-o', {str(tmp_path / 'k.cpp')!r}])\n"
            "print(rc, 'torch' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.stdout.split() == ["0", "False"], out.stderr
    assert "relu_custom" in (tmp_path / "k.cpp").read_text()
