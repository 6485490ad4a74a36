"""`check --backend both`: the emulator and the chip on the same cases, estimate beside measured —
the calibration data the cost model needs, written in the calibration file's format
(op, case, input_shapes, dtypes, attrs, measured_us_<chip>, t_hw_us_<chip>, plus est_us_<chip>)."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def npu_config_for_cli(soc: str | None = None, session: str = "check"):
    from copilot.backends.npu.build import session_config
    from copilot.backends.npu.toolchain import probe
    from copilot.errors import Unsupported

    stack = probe()
    if not stack.ready and not soc:
        raise Unsupported("the npu backend needs CANN, torch_npu and a free NPU: "
                          + "; ".join(stack.missing) + " (see `cannpilot doctor`)")
    cfg = session_config(session, soc or stack.soc)
    if stack.free_devices:
        cfg.device = stack.free_devices[0]
    return cfg


def side_by_side(sim_report, npu_report) -> list[dict]:
    by_id = {c.id: c for c in npu_report.cases}
    rows = []
    for c in sim_report.cases:
        n = by_id.get(c.id)
        est = c.estimate.time_us if c.estimate else None
        meas = getattr(n, "measured_us", None) if n else None
        rows.append({"case": c.id, "sim_passed": c.passed, "npu_passed": n.passed if n else None,
                     "est_us": est, "measured_us": meas,
                     "t_hw_us": c.estimate.t_hw_us if c.estimate else None,
                     "ratio_est_over_measured": (est / meas) if est and meas else None})
    return rows


def write_calibration(path: Path, task, chip: str, rows: list[dict]) -> None:
    key = chip.lower()
    cases = {c.id: c for c in task.cases}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "case", "input_shapes", "dtypes", "attrs", f"measured_us_{key}", f"t_hw_us_{key}",
                    f"est_us_{key}"])
        for r in rows:
            if r["measured_us"] is None:
                continue
            c = cases[r["case"]]
            w.writerow([task.name, r["case"], json.dumps([list(s) for s in c.shapes]), json.dumps(c.dtypes),
                        json.dumps(c.attrs), f"{r['measured_us']:.3f}",
                        "" if r["t_hw_us"] is None else f"{r['t_hw_us']:.3f}",
                        "" if r["est_us"] is None else f"{r['est_us']:.3f}"])
