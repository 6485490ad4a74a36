"""The engine, the knowledge base and the session store never import a UI library."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

ENGINE_MODULES = ["copilot", "copilot.tasks", "copilot.oracle", "copilot.dtypes", "copilot.diagnostics",
                  "copilot.oracle.precision", "copilot.backends.sim", "copilot.chips", "copilot.sandbox",
                  "copilot.llm", "copilot.llm.litellm_client", "copilot.config", "copilot.costmodel",
                  "copilot.evolution", "copilot.agents.offline", "copilot.agents.llm", "copilot.lowering",
                  "knowledge", "knowledge.assembler", "knowledge.router", "knowledge.errors", "sessions"]
UI = ("textual", "rich", "prompt_toolkit")


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_engine_module_imports_no_ui_library(module):
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.fail(f"{module} is missing")
    try:
        present = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        present = False
    if not present:
        pytest.skip(f"{module} is not part of this build yet")
    code = (f"import sys, json, {module}\n"
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {UI!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
