"""Every rule kernel (tests/kernels/rules/*.cpp) is reported with its constraint id and line.

Each file names its task in a `Run: cannpilot check ... --task T --cases C` comment and marks the
offending line with `// EXPECT: <id>`.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

from copilot.backends.sim import check_kernel  # noqa: E402

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"), pytest.mark.slow]

RULES = Path(__file__).parent / "kernels" / "rules"
RULE_FILES = sorted(RULES.glob("*.cpp"))


def _expectations(text: str) -> list[tuple[str, int]]:
    return [(m.group(1), text.count("\n", 0, m.start()) + 1)
            for m in re.finditer(r"//\s*EXPECT:\s*([A-Z0-9_.]+)", text)]


@pytest.mark.skipif(not RULE_FILES, reason="no rule kernels yet")
@pytest.mark.parametrize("path", RULE_FILES, ids=[p.stem for p in RULE_FILES])
def test_rule_kernel_is_reported_with_its_id_and_line(path):
    text = path.read_text()
    task = re.search(r"--task\s+(\S+)", text)
    assert task, f"{path.name}: no `--task T` in its header comment"
    cases = re.search(r"--cases\s+(\S+)", text)
    expected = _expectations(text)
    assert expected, f"{path.name}: no // EXPECT: line"
    report = check_kernel(path, task.group(1), cases=cases.group(1) if cases else "quick", timeout=60)
    got = {(d.id, d.line) for d in report.diagnostics}
    for ident, line in expected:
        assert (ident, line) in got, f"{path.name}: expected {ident} at line {line}, got {sorted(got)}"
    if any(d.severity == "error" for d in report.diagnostics):
        assert not report.correct
