"""The import contract between the engine and the front ends, checked over every module.

Engine: `copilot/` (except the command line: `cli.py`, `__main__.py`, `commands/`), `knowledge/`,
`sessions/`. Front ends: the command line and `tui/` (with `themes/`). The engine never imports a
UI library (textual, rich, prompt_toolkit) nor a front end; every import statement counts,
function-level ones included, and `importlib.import_module("...")` with a literal name too.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE_PACKAGES = ("copilot", "knowledge", "sessions")
FRONT_END_FILES = ("copilot/cli.py", "copilot/__main__.py")
FRONT_END_DIRS = ("copilot/commands",)
UI_LIBRARIES = ("textual", "rich", "prompt_toolkit")
FRONT_ENDS = ("tui", "themes", "copilot.cli", "copilot.commands", "copilot.__main__")


def engine_files() -> list[Path]:
    files = []
    for pkg in ENGINE_PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in FRONT_END_FILES or any(rel.startswith(d + "/") for d in FRONT_END_DIRS):
                continue
            files.append(path)
    return files


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in `source`, wherever it stands."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.append((node.lineno, prefix))
            found += [(node.lineno, f"{prefix}.{a.name}") for a in node.names if a.name != "*"]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            found.append((node.lineno, node.args[0].value))
    return found


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """One `module:line imports name` per offending import statement."""
    bad: dict[int, str] = {}
    for line, name in imported_names(source, module, is_package):
        for forbidden in UI_LIBRARIES + FRONT_ENDS:
            if line not in bad and (name == forbidden or name.startswith(forbidden + ".")):
                bad[line] = f"{module}:{line} imports {name}"
    return [bad[line] for line in sorted(bad)]


def test_the_engine_never_imports_a_ui_library_or_a_front_end():
    files = engine_files()
    assert len(files) > 50, "the engine's modules were not found"
    names = {module_name(p) for p in files}
    assert {"copilot.config", "copilot.evolution.engine", "knowledge.router", "sessions.store"} <= names
    assert not names & {"copilot.cli", "copilot.commands.tui"}
    bad = []
    for path in files:
        bad += violations(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")
    assert bad == [], "\n".join(bad)


@pytest.mark.parametrize("source, module, expected", [
    ("def f():\n    import textual.app\n", "copilot.x", ["copilot.x:2 imports textual.app"]),
    ("from rich.console import Console\n", "knowledge.y", ["knowledge.y:1 imports rich.console"]),
    ("from tui import app\n", "sessions.z", ["sessions.z:1 imports tui"]),
    ("from ..commands import tui\n", "copilot.evolution.w", ["copilot.evolution.w:1 imports copilot.commands"]),
    ("from . import cli\n", "copilot.v", ["copilot.v:1 imports copilot.cli"]),
    ("import importlib\nimportlib.import_module('prompt_toolkit')\n", "copilot.u",
     ["copilot.u:2 imports prompt_toolkit"]),
    ("import richer\nfrom copilot.tuition import x\n", "copilot.t", []),
])
def test_the_checker_finds_every_kind_of_import(source, module, expected):
    assert violations(source, module) == expected


def test_no_ui_library_is_loaded_by_importing_every_engine_module():
    """What the AST cannot see (a dependency that pulls a UI library in) shows in sys.modules."""
    modules = sorted(module_name(p) for p in engine_files() if p.name != "__main__.py")
    code = ("import importlib, json, sys\n"
            f"for m in {modules!r}:\n"
            "    importlib.import_module(m)\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {UI_LIBRARIES!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
