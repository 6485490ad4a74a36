"""What the product's code never does, checked over every module: swallow an error with a bare
`except Exception: pass`, or reach into the test tree (fakes live in tests/, the product has none)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("copilot", "knowledge", "sessions", "tui", "themes")
_TESTS_PATH = re.compile(r"(^|[/\\])tests([/\\]|$)")


def product_files() -> list[Path]:
    return [p for pkg in PRODUCT for p in sorted((ROOT / pkg).rglob("*.py"))]


def swallowed(source: str) -> list[int]:
    """Lines of handlers that catch everything (bare, Exception, BaseException) and do nothing."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        types = [] if node.type is None else (node.type.elts if isinstance(node.type, ast.Tuple) else [node.type])
        names = {t.id for t in types if isinstance(t, ast.Name)} if types else {"<bare>"}
        inert = all(isinstance(b, ast.Pass) or (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))
                    for b in node.body)
        if names & {"Exception", "BaseException", "<bare>"} and inert:
            lines.append(node.lineno)
    return lines


def reads_tests(source: str) -> list[int]:
    """Lines that import from `tests` or name a path under tests/."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "tests" and not node.level:
            lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _TESTS_PATH.search(node.value):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("check, source, expected", [
    (swallowed, "try:\n    f()\nexcept Exception:\n    pass\n", [3]),
    (swallowed, "try:\n    f()\nexcept:\n    pass\n", [3]),
    (swallowed, "try:\n    f()\nexcept (OSError, BaseException):\n    ...\n", [3]),
    (swallowed, "try:\n    f()\nexcept Exception as e:\n    log.warning(e)\n", []),
    (swallowed, "try:\n    f()\nexcept FileNotFoundError:\n    pass\n", []),
    (reads_tests, "p = Path(__file__).parents[2] / 'tests' / 'tui' / 'fakes.py'\n", [1]),
    (reads_tests, "from tests.tui.fakes import FakeAgent\n", [1]),
    (reads_tests, "x = 'the contests/ dir'\nfrom .tests import y\n", []),
])
def test_the_checks_find_what_they_look_for(check, source, expected):
    assert check(source) == expected


def test_no_error_is_swallowed_in_the_product():
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in product_files() for line in swallowed(p.read_text())]
    assert bad == [], "name the error, log it, or comment a deliberate fallback that does something:\n" + \
        "\n".join(bad)


def test_no_product_module_reads_the_test_tree():
    files = product_files()
    assert any(p.name == "tui.py" for p in files)
    bad = [f"{p.relative_to(ROOT)}:{line}" for p in files for line in reads_tests(p.read_text())]
    assert bad == [], "\n".join(bad)
