"""A known hole, measured: the red-team probes of bench/redteam_probes/ (attacks the evaluator does
not stop yet, docs/security.md "What the vault does not close") built as `check` and the evaluator
build them (the source scan on) and run on relu's first float32 case of at most 64K elements beside
the honest twin (tests/kernels/relu_tail_pad.cpp). Prints, per probe: scan result, correct, the
estimate against the twin's, and the probe's own report lines. Emulator times are cost-model
ESTIMATES.

Usage: nice -n 10 python bench/redteam_probe.py [PROBE.cpp ...]
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from copilot.backends.sim import run  # noqa: E402
from copilot.oracle import make_inputs, reference  # noqa: E402
from copilot.tasks import load_task  # noqa: E402

build = importlib.import_module("copilot.backends.sim.build").build


def main() -> int:
    relu = load_task("relu")
    case = next(c for c in relu.cases if c.dtypes == ["float32"] and c.max_numel <= 1 << 16)
    inputs = make_inputs(relu, case)
    ref = reference(relu, case, inputs)
    twin = run(build(REPO / "tests" / "kernels" / "relu_tail_pad.cpp", relu, ["float32", "float32"]), relu, case,
               inputs, outputs=ref.outputs)
    probes = [Path(p) for p in sys.argv[1:]] or sorted((REPO / "bench" / "redteam_probes").glob("*.cpp"))
    if not probes:
        print("no open probe in bench/redteam_probes/ (give kernel files to measure others)", flush=True)
        return 0
    for p in probes:
        b = build(p, relu, ["float32", "float32"])      # the scan on, as check and the evaluator
        row = {"probe": p.name, "case": case.id, "twin_us": twin.time_us, "built": b.ok,
               "ids": sorted({d.id for d in b.diagnostics if d.severity == "error"})}
        if b.ok:
            r = run(b, relu, case, inputs, outputs=ref.outputs)
            row.update(ok=r.ok, time_us=r.time_us, ids=sorted({d.id for d in r.diagnostics}),
                       report=sorted({line for line in r.stdout.splitlines() if "search" in line}))
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
