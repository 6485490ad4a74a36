"""Build a candidate for the npu backend: export it as a one-operator CANN-Bench project (the same
files `cannpilot export` writes), build that with CANN's toolchain (`bash build.sh --soc=...`),
install the products into a per-session prefix (never the user's site-packages).

One build directory per candidate (keyed by a hash of the kernel, task and SoC), so a rebuilt
candidate is a cache hit and parallel builds never share files. `build_many` bounds parallel
builds by the cores.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from copilot.backends.base import Build
from copilot.diagnostics import Diagnostic
from copilot.errors import BadInput

GENERATOR_VERSION = "1"
RUNNER_ENV = "CANNPILOT_NPU_BUILD_RUNNER"     # module:function replacing `bash build.sh` (tests)


@dataclass
class BuildOutcome:
    ok: bool
    log: str


@dataclass
class NpuConfig:
    prefix: Path                              # per-session install root
    build_root: Path                          # one directory per candidate below it
    soc: str = "ascend910b"
    device: int = 0
    warmup: int = 3                           # CANN-Bench §4.5
    repeat: int = 5
    build_timeout: float = 1800.0
    run_timeout: float = 300.0
    flush_bytes: int = 192 << 20              # larger than the L2 of every supported chip
    flush_n: int = 1024                       # MatMul size of the clock warm-up
    python: str = sys.executable
    jobs: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))
    runner: Callable[[Path, str, float], BuildOutcome] | None = None

    def build_runner(self) -> Callable[[Path, str, float], BuildOutcome]:
        if self.runner is not None:
            return self.runner
        spec = os.environ.get(RUNNER_ENV)
        if spec:
            mod, _, fn = spec.partition(":")
            return getattr(importlib.import_module(mod), fn)
        return run_build_sh


@dataclass
class NpuBuild(Build):
    op: str = ""                    # the callable in cann_bench
    op_type: str = ""
    project: Path | None = None
    site: Path | None = None        # where the wheel is installed (goes on PYTHONPATH)
    opp: Path | None = None         # where the op package is installed, when there is one


def run_build_sh(project: Path, soc: str, timeout: float) -> BuildOutcome:
    """The real build: the project's own build.sh, as CANN-Bench runs it (EVAL-CANN-003)."""
    try:
        r = subprocess.run(["bash", "build.sh", f"--soc={soc}"], cwd=project, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return BuildOutcome(False, f"build.sh timed out after {timeout:.0f} s\n{(e.stdout or '')[-4000:]}")
    return BuildOutcome(r.returncode == 0, (r.stdout or "") + (r.stderr or ""))


_LOC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(?P<msg>.*)$")


def parse_build_log(log: str, project: Path, spec) -> list[Diagnostic]:
    """Compiler errors as diagnostics at the candidate's lines: the kernel file is the candidate
    byte for byte (same lines); host-file lines map back through the host half's first line."""
    from copilot.backends.sim.build import _classify
    from copilot.export.project import host_path, kernel_path

    kernel = kernel_path(spec)
    host = host_path(spec)
    host_text = (project / host).read_text() if (project / host).is_file() else ""
    header_lines = host_text[:host_text.find(spec.parts.host)].count("\n") if spec.parts.host in host_text else 0
    diags: list[Diagnostic] = []
    for raw in log.splitlines():
        m = _LOC.match(raw.strip())
        if not m:
            continue
        f, ln, msg = m.group("file"), int(m.group("line")), m.group("msg")
        line = 0
        if f.endswith(kernel):
            line = ln
        elif f.endswith(host) and ln > header_lines:
            line = spec.parts.host_line + ln - header_lines - 1
        diags.append(Diagnostic(_classify(msg), "error", msg, line=line, raw=raw))
    if not diags:
        tail = "\n".join(log.strip().splitlines()[-20:])
        diags.append(Diagnostic("NPU.BUILD", "error", "the CANN build failed without a compiler error "
                                "(see the log)", raw=tail, hint="run bash build.sh in the build directory"))
    return diags


def _key(source: str, task, soc: str) -> str:
    h = hashlib.sha256()
    for part in (GENERATOR_VERSION, source, task.name, str(task.path), soc):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def build(source, task, dtypes: list[str] | None = None, chip: str = "910B2", *, config: NpuConfig) -> NpuBuild:
    """Export, build and install one candidate (path or text). `dtypes` is accepted for the
    backend contract: one CANN build serves every dtype the OpDef lists."""
    from copilot.export import build_files, write_tree
    from copilot.export.opspec import op_spec

    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source and Path(source).is_file()):
        path = Path(source)
        text = path.read_text(encoding="utf-8")
    else:
        path, text = None, str(source)
    spec = op_spec(task, text)
    key = _key(text, task, config.soc)
    project = config.build_root / key
    site = config.prefix / key / "site"
    opp = config.prefix / key / "opp"
    made = NpuBuild(ok=False, diagnostics=[], backend="npu", chip=chip, entry=spec.parts.entry, source_path=path,
                    key=key, op=spec.name, op_type=spec.op_type, project=project, site=site, artifact=site)
    if (site / ".installed").is_file():
        made.ok, made.cached = True, True
        made.opp = opp if opp.is_dir() else None
        return made
    t0 = time.monotonic()
    write_tree(build_files([spec], "cann-bench", chip, config.soc), project)
    outcome = config.build_runner()(project, config.soc, config.build_timeout)
    made.seconds = time.monotonic() - t0
    made.raw_output = outcome.log[-20000:]
    if not outcome.ok:
        made.diagnostics = parse_build_log(outcome.log, project, spec)
        return made
    wheels = sorted((project / "dist").glob("cann_bench*.whl"))
    if not wheels:
        made.diagnostics = [Diagnostic("EVAL-CANN-003", "error", "build.sh exited 0 but wrote no dist/cann_bench*.whl")]
        return made
    err = install(project, wheels[-1], site, opp, config)
    if err:
        made.diagnostics = [Diagnostic("EVAL-CANN-004", "error", err)]
        return made
    made.ok = True
    made.opp = opp if opp.is_dir() else None
    return made


def install(project: Path, wheel: Path, site: Path, opp: Path, config: NpuConfig) -> str | None:
    """Install the op package (dist/*.run, when built) and the wheel into the session prefix."""
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir(parents=True)
    for run_pkg in sorted((project / "dist").glob("*.run")):
        r = subprocess.run(["bash", str(run_pkg), f"--install-path={opp}", "--quiet"], capture_output=True,
                           text=True, timeout=600)
        if r.returncode != 0:
            return f"installing {run_pkg.name} failed: {(r.stderr or r.stdout).strip()[-500:]}"
    r = subprocess.run([config.python, "-m", "pip", "install", "--no-deps", "--force-reinstall", "--no-index",
                        "--disable-pip-version-check", "--quiet", "--target", str(site), str(wheel)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        return f"pip install {wheel.name} failed: {(r.stderr or r.stdout).strip()[-500:]}"
    (site / ".installed").write_text(wheel.name + "\n")
    return None


def build_many(sources: list, task, chip: str, *, config: NpuConfig) -> list[NpuBuild]:
    """Build several candidates at once, at most `config.jobs` (and the cores) at a time."""
    if not sources:
        return []
    workers = max(1, min(config.jobs, os.cpu_count() or 1, len(sources)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda s: build(s, task, None, chip, config=config), sources))


def session_config(session: str, soc: str | None = None, **kw) -> NpuConfig:
    """The config of one session: its own install prefix and build directories under the cache."""
    from copilot.config import cache_dir

    if not re.fullmatch(r"[\w.-]+", session):
        raise BadInput(f"session name {session!r}: use letters, digits, '.', '_' or '-'")
    root = Path(cache_dir()) / "npu"
    return NpuConfig(prefix=root / "sessions" / session, build_root=root / "builds", soc=soc or "ascend910b", **kw)
