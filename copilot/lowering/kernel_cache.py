"""The lowered-kernel cache: `cannpilot lower` on a task it lowered before answers from disk.

Lowering itself takes a fraction of a second; what a user waits for on the command line is
`import torch` (~1.6 s of CPU; the tracer imports no `torch._dynamo`), on every run. A kernel is a
pure function of the task's files, the chip, the knobs, Cannpilot's own code and the torch that
traced the golden, so the key hashes exactly those, and a hit needs no torch at all. An entry is
one JSON file under `<cache dir>/lowered/` (platformdirs' cache dir, or `CANNPILOT_CACHE_DIR`),
written atomically; a kernel that did not lower (exit 2 or 3) is never stored, so its message is
always recomputed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import copilot
from copilot.atomic import atomic_write_text
from copilot.paths import builtin_task_dir, cache_dir

FORMAT = "cannpilot-lowered-kernel/1"
PACKAGE_DIR = Path(copilot.__file__).resolve().parent


def task_dir(ref: str) -> Path | None:
    """The task directory `load_task(ref)` would read, or None when `ref` names no directory
    (a KernelBench file, a bad reference: those are never cached)."""
    builtin = builtin_task_dir(ref)
    if builtin is not None:
        return builtin
    path = Path(ref).expanduser()
    return path if path.is_dir() else None


def _digest_tree(h, root: Path) -> None:
    """Every file under `root` (bytecode caches left out), by relative path and content."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")


def _torch_build() -> bytes:
    """torch's `version.py` (release and git commit), found without importing torch."""
    from importlib.util import find_spec

    spec = find_spec("torch")
    if spec is None or spec.origin is None:
        return b"no torch"
    try:
        return (Path(spec.origin).parent / "version.py").read_bytes()
    except OSError:
        return spec.origin.encode()


def key(ref: str, chip: str, knobs: dict) -> str | None:
    """The cache key of lowering `ref` for `chip` with `knobs`, or None when it is not cacheable."""
    tdir = task_dir(ref)
    if tdir is None:
        return None
    h = hashlib.sha256()
    h.update(json.dumps([FORMAT, sys.version, chip, sorted(knobs.items())], default=repr).encode())
    h.update(_torch_build())
    _digest_tree(h, PACKAGE_DIR)          # any change to Cannpilot's code is a new key
    h.update(b"\1task\1")
    _digest_tree(h, tdir.resolve())
    return h.hexdigest()


def cache_root() -> Path:
    return cache_dir() / "lowered"


def _entry(k: str) -> Path:
    return cache_root() / k[:2] / f"{k}.json"


def load(k: str) -> dict | None:
    """The stored kernel (`source`, `pattern`, `notes`, `knobs`) under key `k`, or None."""
    try:
        entry = json.loads(_entry(k).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or not isinstance(entry.get("source"), str):
        return None
    return entry


def store(k: str, kernel) -> None:
    """Store a `LoweredKernel` under key `k`; a cache that cannot be written is skipped."""
    text = json.dumps({"format": FORMAT, "source": kernel.source, "pattern": kernel.pattern,
                       "notes": list(kernel.notes), "knobs": kernel.knobs}, default=repr)
    try:
        atomic_write_text(_entry(k), text)
    except OSError:
        return
