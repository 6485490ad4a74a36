"""The evaluation cascade of a candidate on the sim backend.

lint (what is visibly wrong in the source) → build → one smoke case → every correctness case
(the quick tier; for a task that is not built in, also the shrunk twins of its larger cases, so
the tier has every dtype, value range, rank and alignment class of the task) → the performance
cases (time ESTIMATED by the cost model). The fitness is the geometric mean over the performance
cases timed; a case that cannot be timed for the task's reason on this machine (its output shape
needs a golden over the oracle budget: unique's case 6) is left out for every candidate of the task,
with a row saying why, so all are ranked on the same cases; a kernel the cost model cannot time on
a case is passed but not ranked. The winner's `confirm` builds it again and judges every
case of the task on fresh inputs before it is reported correct. Each step stops the
cascade on failure, so a broken candidate costs a compile, not a suite. Results are cached by the
candidate's normalized code, and references (the fp64 oracle) by case: a round of variants of the
same task computes each golden once.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import shutil
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

from copilot.costmodel import geomean
from copilot.evolution.engine import Evaluation
from copilot.evolution.population import code_hash
from copilot.events import Candidate
from copilot.tasks.model import Case, Task

# Constructs no kernel needs and a hostile one would: refused before compiling.
FORBIDDEN = [
    (re.compile(r"\b(fork|vfork|execve?|execvp|system|popen|socket|connect|ptrace|dlopen)\s*\("),
     "calls a process, network or loader function"),
    (re.compile(r"\bgetenv\s*\(|\benviron\b"), "reads the environment"),
    (re.compile(r"#\s*include\s*<(thread|fstream|filesystem|sys/socket\.h|unistd\.h|cstdlib)>"),
     "includes a system header kernels do not use"),
]


def lint(code: str) -> list[dict]:
    """Findings visible in the source alone, as diagnostics dicts (errors stop the cascade)."""
    from copilot.backends.sim.build import find_entry, strip_comments

    out = []
    bare = strip_comments(code)
    if not bare.strip():
        return [{"id": "AGENT.NO_CODE", "severity": "error", "message": "empty candidate", "line": 0}]
    if find_entry(bare) is None:
        out.append({"id": "CPP.COMPILE", "severity": "error", "line": 0,
                    "message": 'no kernel entry: expected extern "C" __global__ __aicore__ void <name>(GM_ADDR ...)'})
    for pattern, why in FORBIDDEN:
        m = pattern.search(bare)
        if m:
            line = bare.count("\n", 0, m.start()) + 1
            out.append({"id": "LINT.FORBIDDEN", "severity": "error", "line": line,
                        "message": f"the candidate {why} ({m.group(0).strip()}): refused before building"})
    return out


@dataclass
class _Ref:
    inputs: list
    ref: object


# A case whose inputs and references take more bytes than this is kept on disk between uses.
REF_MEMORY_BYTES = 32 << 20


def _nbytes(obj) -> int:
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(x) for x in obj)
    return 0


class _RefStore:
    """The inputs and oracle references of a session's cases, computed once and reused by every
    candidate (they do not change). Small cases stay in memory; a large one (performance cases of
    up to 68M elements, whose fp64 oracle alone is 0.5 GB) is written to a private directory and
    mapped back from it for each use, so the process holds only the cases being run and its RSS
    stays bounded by the largest case instead of growing with the task."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir: Path | None = None
        self.memory: dict[tuple, _Ref] = {}
        self.disk: dict[tuple, Path] = {}
        self.locks: dict[tuple, threading.Lock] = {}
        self.lock = threading.Lock()

    def get(self, key: tuple, compute) -> _Ref:
        import torch

        with self.lock:
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:          # one computation per case, even with two evaluations at once
            with self.lock:
                hit, path = self.memory.get(key), self.disk.get(key)
            if hit is not None:
                return hit
            if path is not None:
                return torch.load(path, mmap=True, weights_only=False)
            r = compute()
            if _nbytes(r.inputs) + _nbytes(r.ref.oracle) + _nbytes(r.ref.bench) <= REF_MEMORY_BYTES:
                with self.lock:
                    self.memory[key] = r
                return r
            path = self._spill_dir() / f"{len(self.disk)}.pt"
            torch.save(r, path)
            with self.lock:
                self.disk[key] = path
            return r

    def _spill_dir(self) -> Path:
        with self.lock:
            if self.dir is None:
                self.root.mkdir(parents=True, exist_ok=True)
                prune_stale_spills(self.root)
                # the owner in the name: a later process on this host removes it once that pid is gone
                self.dir = Path(tempfile.mkdtemp(prefix=f"refs-{os.getpid()}-{_host_key()}-", dir=self.root))
                self._finalizer = weakref.finalize(self, shutil.rmtree, self.dir, True)
            return self.dir

    def close(self) -> None:
        """Remove the spilled cases now (also done when the store is collected or the process
        exits normally; a process that ends by `os._exit` or a signal must call this first)."""
        with self.lock:
            if self.dir is not None:
                self._finalizer()
                self.dir, self.disk = None, {}


def _host_key() -> str:
    import socket

    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname()) or "host"


def prune_stale_spills(root: Path) -> list[Path]:
    """Remove the spill directories (`refs-<pid>-<host>-*`, up to 1 GB a case) of this host's
    processes that are gone: an evaluator killed, or ended by `os._exit`, before it could remove its
    own. Another host's (a cache directory shared by a cluster's hosts) are left alone; a directory
    without an owner in its name (an older layout) goes once it is a day old."""
    removed = []
    for d in root.glob("refs-*"):
        parts = d.name.split("-")
        owner = parts[1]
        if owner.isdigit() and len(parts) > 3:
            if parts[2] != _host_key():
                continue
            try:
                os.kill(int(owner), 0)
                continue                    # alive (or a pid of someone else's: kept, to be safe)
            except (ProcessLookupError, OverflowError):
                pass
            except PermissionError:
                continue
        else:
            try:
                if time.time() - d.stat().st_mtime < 86400:
                    continue
            except OSError:
                continue
        shutil.rmtree(d, ignore_errors=True)
        removed.append(d)
    return removed


class _ScanStore:
    """The reference's share of each output's precision scan (`precision.ReferenceScan`) per case
    of the session, kept in this process for every candidate judged against the same references;
    the oldest cases are dropped past `SCAN_MEMORY_BYTES`."""

    def __init__(self) -> None:
        from collections import OrderedDict

        self.scans: OrderedDict[tuple, list] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple, task: Task, ref) -> list:
        from copilot.oracle.precision import ReferenceScan
        from copilot.oracle.verdict import task_thresholds

        with self.lock:
            hit = self.scans.get(key)
            if hit is None:
                th = task_thresholds(task)
                hit = [ReferenceScan(o, b, spec.dtype, th.get(spec.dtype.lower()))
                       for o, b, spec in zip(ref.oracle, ref.bench, ref.outputs)]
                self.scans[key] = hit
            self.scans.move_to_end(key)
            total = sum(sc.nbytes for scans in self.scans.values() for sc in scans)
            while len(self.scans) > 1 and total > SCAN_MEMORY_BYTES:
                _, old = self.scans.popitem(last=False)
                total -= sum(sc.nbytes for sc in old)
            return hit


# Bytes of precomputed scan sides kept (13 bytes per element of the judged outputs).
SCAN_MEMORY_BYTES = 768 << 20


# Dtype combinations of one candidate compiled at once (the machine has two cores).
BUILD_WORKERS = 2


@dataclass(frozen=True)
class Untimed:
    """A performance case left without a time, and why. `task`: for the task's reason on this
    machine, the same for every candidate (the case is left out of everyone's fitness); else the
    kernel's own (it passed but is not ranked)."""

    reason: str
    task: bool

    def row(self, case: Case) -> dict:
        return {"id": case.id, "role": "performance", "est_us": None, "timing": "estimate",
                "not_timed": self.reason, "untimed_by": "task" if self.task else "kernel"}


class SimEvaluator:
    """`Evaluator` for the sim backend (CPU emulator + cost model)."""

    def __init__(self, chip: str = "910B2", workdir: Path | None = None, perf: str = "perf",
                 seed: int = 0) -> None:
        from copilot.config import cache_dir

        self.chip = chip
        self.perf = perf
        self.seed = seed
        self.workdir = Path(workdir or cache_dir() / "candidates")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._cache: dict[str, Evaluation] = {}
        self._refs = _RefStore(self.workdir)
        self._scans = _ScanStore()
        self._tiers: dict[str, list[Case]] = {}
        # (task, case id) -> the output shapes of a performance case, or why the task cannot have
        # them here: found at the task's first evaluation and kept, so every candidate of the task
        # is timed on the same cases
        self._perf_outs: dict[tuple[str, str], list | str] = {}
        self._out_dtypes: dict[tuple[str, str], tuple[str, ...]] = {}    # (task, case id) -> output dtypes
        self._lock = threading.Lock()

    async def evaluate(self, task: Task, candidate: Candidate) -> Evaluation:
        return await asyncio.to_thread(self.evaluate_sync, task, candidate)

    def close(self) -> None:
        """Free what the session's cases hold on disk (the large cases' inputs and references)."""
        self._refs.close()

    # The cascade --------------------------------------------------------------------------

    def evaluate_sync(self, task: Task, candidate: Candidate) -> Evaluation:
        key = f"{task.name}:{self.chip}:{code_hash(candidate.code)}"
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        ev = self._cascade(task, candidate)
        with self._lock:
            self._cache[key] = ev
        return ev

    def _cascade(self, task: Task, candidate: Candidate) -> Evaluation:
        from copilot.tasks import select_cases

        findings = lint(candidate.code)
        if any(f["severity"] == "error" for f in findings):
            return Evaluation("build_failed", diagnostics=findings, build_ok=False)
        path = self._source(task, candidate)
        # smallest first: a broken candidate stops at its cheapest failing case
        ordered = sorted(self.correctness_cases(task), key=lambda c: c.total_numel)
        cases_out, diags = [], list(findings)
        builds, build_seconds = self._build_all(task, path, ordered + select_cases(task, self.perf))
        for b in builds.values():
            diags += [d.to_json() for d in b.diagnostics]
        if not all(b.ok for b in builds.values()):
            return Evaluation("build_failed", diagnostics=_dedupe(diags), build_ok=False,
                              build_seconds=build_seconds)
        for case in ordered:
            failed, seconds = self._judge(task, case, builds, path, cases_out, diags)
            build_seconds += seconds
            if failed is not None:
                failed.build_seconds = build_seconds
                return failed

        times, roofs = [], []
        perf = select_cases(task, self.perf)
        for i, case in enumerate(perf):
            timed = self._time_case(task, case, builds, path)
            if isinstance(timed, Evaluation):       # the timed run was wrong or broke: no score
                cases_out.append(timed.cases[0])
                return Evaluation(timed.status, cases=cases_out, diagnostics=_dedupe(diags + timed.diagnostics),
                                  build_seconds=build_seconds)
            if isinstance(timed, Untimed):
                cases_out.append(timed.row(case))
                if timed.task:                      # left out of every candidate's fitness
                    continue
                times = []                          # this kernel: passed, not ranked
                cases_out += [Untimed(f"not run: case {case.id} could not be timed, so the candidate is not "
                                      "ranked", False).row(c) for c in perf[i + 1:]]
                diags.append(_untimed_diagnostic(case, timed))
                break
            est_us, roof, extra = timed
            times.append(est_us)
            if roof:
                roofs.append(roof)
            cases_out.append({"id": case.id, "role": "performance", "est_us": est_us,
                              "roofline_fraction": roof, **extra})
        if perf and not times and all(r.get("untimed_by") == "task" for r in cases_out if r.get("not_timed")):
            diags.append({"id": "EVO.UNTIMED", "severity": "warning", "line": 0,
                          "message": "no performance case of the task can be timed on this machine: the "
                                     "candidate passed but is not ranked"})
        time_us = geomean(times) if times else None
        roof = geomean(roofs) if roofs and len(roofs) == len(times) else None
        return Evaluation("passed", time_us=time_us, timing="estimate", roofline_fraction=roof,
                          cases=cases_out, diagnostics=_dedupe(diags), build_seconds=build_seconds)

    # Pieces -------------------------------------------------------------------------------

    def _source(self, task: Task, candidate: Candidate) -> Path:
        """The candidate's file: one directory per candidate, the file named after the task, so
        candidates whose device halves are the same share their compiled device objects."""
        path = self.workdir / f"{task.name}-{code_hash(candidate.code)}" / f"{task.name}.cpp"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(candidate.code, encoding="utf-8")
        return path

    def _build_all(self, task: Task, path: Path, cases: list[Case], knob_data: bool = True) -> tuple[dict, float]:
        """Every dtype combination the cases need, built at once ({combination: Build}, seconds).
        `knob_data`: tiling knobs read from the launcher's knob block (a tiling-only child links
        nothing); off, the literal source as exported is compiled."""
        from concurrent.futures import ThreadPoolExecutor

        from copilot.backends import sim

        combos = list(dict.fromkeys(tuple(c.dtypes) + self._output_dtypes(task, c) for c in cases))
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=BUILD_WORKERS) as pool:
            done = list(pool.map(lambda k: sim.build(path, task, list(k), self.chip, knob_data=knob_data), combos))
        return dict(zip(combos, done)), time.perf_counter() - t0

    def _output_dtypes(self, task: Task, case: Case) -> tuple[str, ...]:
        """A case's output dtypes, found once per evaluator: where the golden does not run on meta
        tensors (unique) they take a real golden run, one per case instead of one per candidate."""
        from copilot.costmodel.estimate import output_dtypes

        key = (task.name, case.id)
        with self._lock:
            hit = self._out_dtypes.get(key)
        if hit is None:
            hit = output_dtypes(task, case)
            with self._lock:
                self._out_dtypes[key] = hit
        return hit

    def correctness_cases(self, task: Task) -> list[Case]:
        """The correctness tier: the quick tier, and for a task that is not built in (a public
        task's quick tier is 1-4 small cases) the twins of its larger cases too."""
        from copilot.tasks import select_cases

        with self._lock:
            hit = self._tiers.get(task.name)
        if hit is None:
            hit = select_cases(task, "quick" if task.builtin else "twins")
            with self._lock:
                self._tiers[task.name] = hit
        return hit

    def _judge(self, task: Task, case: Case, builds: dict, path: Path, cases_out: list,
               diags: list, seed: int | None = None) -> tuple[Evaluation | None, float]:
        """Build (once per dtype combination), run and judge one correctness case, appending its
        row and diagnostics: (the Evaluation that stops the cascade if it failed, else None;
        seconds spent building)."""
        from copilot.backends import sim
        from copilot.oracle import CaseTooLarge, run_verdict

        seconds = 0.0
        try:
            r = self._reference(task, case, seed)
        except CaseTooLarge as e:       # no oracle fits (its estimate or the golden's real peak): not judged
            cases_out.append({"id": case.id, "role": "correctness", "passed": None,
                              "failure_class": "too_large", "message": str(e)})
            return None, seconds
        out_dtypes = [o.dtype for o in r.ref.outputs]
        bkey = tuple(case.dtypes) + tuple(out_dtypes)
        b = builds.get(bkey)
        if b is None:
            t0 = time.perf_counter()
            b = sim.build(path, task, list(case.dtypes) + out_dtypes, self.chip)
            seconds = time.perf_counter() - t0
            builds[bkey] = b
            diags += [d.to_json() for d in b.diagnostics]
        if not b.ok:
            return Evaluation("build_failed", diagnostics=_dedupe(diags), build_ok=False), seconds
        run = sim.run(b, task, case, r.inputs, outputs=r.ref.outputs, chip=self.chip)
        diags += [d.to_json() for d in run.diagnostics]
        verdict = run_verdict(task, r.ref, run, r.inputs, case, scans=self._scans_of(task, case, r, seed))
        passed = bool(verdict.passed)
        cases_out.append({"id": case.id, "passed": passed, "mere": _num(verdict.mere),
                          "mare": _num(verdict.mare), "failure_class": verdict.failure_class,
                          "message": verdict.message, "role": "correctness"})
        if passed:
            return None, seconds
        crashed = any(d.id.startswith("RUN.") for d in run.diagnostics if d.is_error)
        return Evaluation("crashed" if crashed else "incorrect", cases=cases_out,
                          diagnostics=_dedupe(diags)), seconds

    def _reference(self, task: Task, case: Case, seed: int | None = None) -> _Ref:
        from copilot.oracle import make_inputs, reference

        seed = self.seed if seed is None else seed

        def compute() -> _Ref:
            inputs = make_inputs(task, case, seed)
            return _Ref(inputs, reference(task, case, inputs))

        if seed != self.seed:           # the re-validation's fresh inputs are used once
            return compute()
        return self._refs.get((task.name, case.id, seed), compute)

    def _scans_of(self, task: Task, case: Case, r: _Ref, seed: int | None) -> list | None:
        """The kept reference side of the case's scans (the session's seed only: the re-validation's
        fresh inputs are judged once)."""
        if seed is not None and seed != self.seed:
            return None
        return self._scans.get((task.name, case.id, self.seed, self.chip), task, r.ref)

    def _case_outputs(self, task: Task, case: Case) -> list | str:
        """A performance case's output shapes, or why the task cannot have them on this machine (a
        data-dependent shape, unique's, needs the golden, which does not fit the oracle budget).
        Decided at the task's first evaluation and kept for the evaluator's life: a later candidate
        is timed on the same cases even if memory or the budget changed meanwhile."""
        from copilot.costmodel.estimate import output_shapes
        from copilot.oracle import CaseTooLarge

        key = (task.name, case.id)
        with self._lock:
            hit = self._perf_outs.get(key)
        if hit is None:
            try:
                hit = output_shapes(task, case)
            except CaseTooLarge as e:
                hit = str(e)
            with self._lock:
                hit = self._perf_outs.setdefault(key, hit)
        return hit

    def _time_case(self, task: Task, case: Case, builds: dict, path: Path, full: bool = False,
                   seed: int | None = None):
        """(est_us, roofline_fraction, extra) for one performance case, judged: the run that gives
        the estimate runs the sampled blocks (every block when `full`) on real inputs, and the
        elements they wrote are compared with the oracle. An Evaluation (one case) when that run
        fails or is wrong; an `Untimed` when the case has no time: for the task's reason (its output
        shape needs a golden over the oracle budget) or the kernel's (the cost model cannot time it)."""
        from copilot.backends.sim.integrity import timed_case
        from copilot.costmodel.estimate import build_for_case, estimate_case
        from copilot.oracle import CaseTooLarge

        outs = self._case_outputs(task, case)
        if isinstance(outs, str):
            return Untimed(f"not timed: {outs}", True)
        b, outs, _ = build_for_case(path, task, case, self.chip, builds, outs)
        if not b.ok:
            return Untimed(f"not timed: the kernel does not build for the case's dtypes "
                           f"{'/'.join(d for d in case.dtypes if d)}", False)
        try:
            r = self._reference(task, case, seed)
        except CaseTooLarge:        # no oracle fits: count-only estimate, marked unjudged
            est = estimate_case(b, task, case, self.chip, outs)
            if est is None:
                return Untimed("not timed: the kernel's count-only run (no oracle fits the case) failed or ran an "
                               "instruction the cost model cannot time", False)
            return est.time_us, est.roofline_fraction, _estimate_row(est, False)
        t = timed_case(b, task, case, self.chip, r.inputs, r.ref, full=full,
                       scans=self._scans_of(task, case, r, seed))
        judged = "full" if t.full else "sampled blocks"
        if not t.passed:
            row = {"id": case.id, "role": "performance", "passed": False, "message": t.message, "judged": judged}
            return Evaluation("crashed" if t.crashed else "incorrect", cases=[row],
                              diagnostics=[d.to_json() for d in t.diagnostics])
        est = t.estimate
        if est is None:
            return Untimed("not timed: the kernel ran an instruction the cost model cannot time", False)
        return est.time_us, est.roofline_fraction, _estimate_row(est, judged)

    def confirm(self, task: Task, candidate: Candidate) -> Evaluation:
        """The winner's re-validation before it is exported or reported as best (the benchmark's
        second trial): built again for every dtype combination, every case of the task judged on
        fresh inputs (another seed than the cascade's), every performance case run in full (all
        blocks, every element judged). 'passed' with the full-run estimate, or the failure with an
        EVO.REVALIDATION diagnostic naming the case."""
        from copilot.tasks import select_cases

        path = self._source(task, candidate)
        perf = select_cases(task, self.perf)
        builds, _ = self._build_all(task, path, list(task.cases) + perf, knob_data=False)   # what is exported
        diags = [d.to_json() for b in builds.values() for d in b.diagnostics]
        if not all(b.ok for b in builds.values()):
            return _demoted(Evaluation("build_failed", diagnostics=_dedupe(diags), build_ok=False),
                            "it no longer builds")
        seed = self.seed + REVALIDATION_SEED
        cases_out, times = [], []
        perf_ids = {c.id for c in perf}
        for case in task.cases:
            if case.id in perf_ids:          # judged in full below
                continue
            failed, _ = self._judge(task, case, builds, path, cases_out, diags, seed=seed)
            if failed is not None:
                return _demoted(failed, f"case {case.id} failed on fresh inputs (seed {seed})")
        for case in perf:
            timed = self._time_case(task, case, builds, path, full=True, seed=seed)
            if isinstance(timed, Evaluation):
                return _demoted(Evaluation(timed.status, cases=timed.cases, diagnostics=timed.diagnostics),
                                f"performance case {case.id} failed its full run on fresh inputs (seed {seed})")
            if isinstance(timed, Untimed):
                cases_out.append(timed.row(case))
                if timed.task:              # left out, as in the cascade
                    continue
                return Evaluation("passed", time_us=None, timing="estimate", cases=cases_out,
                                  diagnostics=[_untimed_diagnostic(case, timed)])
            times.append(timed[0])
            cases_out.append({"id": case.id, "role": "performance", "est_us": timed[0], **timed[2]})
        return Evaluation("passed", time_us=geomean(times) if times else None, timing="estimate", cases=cases_out)


# The re-validation draws its inputs with the session's seed plus this (fresh values, reproducible).
REVALIDATION_SEED = 7919

def _untimed_diagnostic(case: Case, untimed: Untimed) -> dict:
    """Why a passing kernel is not ranked: a performance case it could not be timed on."""
    return {"id": "EVO.UNTIMED", "severity": "warning", "line": 0,
            "message": f"performance case {case.id}: {untimed.reason.removeprefix('not timed: ')}; the candidate "
                       "passed but is not ranked"}


def _estimate_row(est, judged) -> dict:
    """A performance case's estimate as its row carries it: the figures that explain the time (the
    slowest core's pipes and vector work, the cores, the roofline) and how the case was judged."""
    return {"bottleneck": est.bottleneck, "pipes_us": est.pipes_us, "t_hw_us": est.t_hw_us, "timing": "estimate",
            "est_band": est.band, "judged": judged, "block_dim": est.block_dim, "hbm_us": est.hbm_us,
            "vector_counts": est.vector_counts, "memory_us": (est.roofline_terms or {}).get("memory_us")}


def _demoted(ev: Evaluation, reason: str) -> Evaluation:
    """A winner's failed re-validation, with the reason first among its diagnostics."""
    ev.diagnostics = [{"id": "EVO.REVALIDATION", "severity": "error", "line": 0,
                       "message": f"the best kernel was demoted: {reason}"}, *ev.diagnostics]
    return ev


def _num(x):
    try:
        return None if x is None or math.isnan(x) or math.isinf(x) else float(x)
    except TypeError:
        return None


def _dedupe(diags: list[dict]) -> list[dict]:
    seen, out = set(), []
    for d in diags:
        k = (d.get("id"), d.get("line"), d.get("message") if not d.get("line") else None)
        if k not in seen:
            seen.add(k)
            out.append(d)
    return out
