"""`Evaluator` for the npu backend: lint, then `check_kernel` on the device over the quick tier
(each passing case timed on fresh inputs); a candidate's time is the geometric mean of its
measured case times, labelled `measured`."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from copilot.backends.npu.build import NpuConfig
from copilot.evolution.engine import Evaluation


class NpuEvaluator:
    def __init__(self, config: NpuConfig, chip: str = "910B2", cases: str = "quick", seed: int = 0) -> None:
        self.config = config
        self.chip = chip
        self.cases = cases
        self.seed = seed
        self.workdir = config.build_root.parent / "candidates"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, Evaluation] = {}
        self._lock = threading.Lock()

    async def evaluate(self, task, candidate) -> Evaluation:
        return await asyncio.to_thread(self.evaluate_sync, task, candidate)

    def evaluate_sync(self, task, candidate) -> Evaluation:
        from copilot.costmodel import geomean
        from copilot.evolution.evaluate import lint
        from copilot.evolution.population import code_hash

        from copilot.backends.npu.runner import check_kernel

        key = f"{task.name}:{code_hash(candidate.code)}"
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        findings = lint(candidate.code)
        if any(f["severity"] == "error" for f in findings):
            return Evaluation("build_failed", timing="measured", diagnostics=findings, build_ok=False)
        path = Path(self.workdir) / f"{task.name}-{code_hash(candidate.code)}.cpp"
        path.write_text(candidate.code, encoding="utf-8")
        rep = check_kernel(path, task, self.chip, self.cases, config=self.config, seed=self.seed)
        diags = findings + [d.to_json() for d in rep.diagnostics]
        cases = [dict(c.to_json(), message=c.message, role="correctness") for c in rep.cases]
        if not rep.compiled:
            ev = Evaluation("build_failed", timing="measured", diagnostics=diags, build_ok=False,
                            build_seconds=rep.build_seconds)
        elif not rep.correct:
            crashed = any(d["id"] in ("RUN.NPU_CRASH", "RUN.NPU_HANG") for d in diags)
            ev = Evaluation("crashed" if crashed else "incorrect", timing="measured", cases=cases,
                            diagnostics=diags, build_seconds=rep.build_seconds)
        else:
            times = [c.measured_us for c in rep.cases if c.measured_us]
            ev = Evaluation("passed", time_us=geomean(times) if times else None, timing="measured", cases=cases,
                            diagnostics=diags, build_seconds=rep.build_seconds)
        with self._lock:
            self._cache[key] = ev
        return ev
