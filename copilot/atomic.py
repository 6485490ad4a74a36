"""Atomic file writes: a reader sees the old file or the new one, never half of one. Imports
nothing heavy, so a fast command path (a cached `cannpilot lower`) can use it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` so a reader sees the old file or the new one, never half of one.

    A path that names something other than a regular file (`/dev/null`, a FIFO, a terminal) is
    written in place: renaming over it would replace the device with a file.
    """
    path = Path(path)
    if path.exists() and not path.is_file():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
