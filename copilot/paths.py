"""Where Cannpilot keeps things, importable without torch or the settings model.

The four user directories come from platformdirs, each overridable by an environment variable
(tests point them at temporary directories): CANNPILOT_CONFIG_DIR, CANNPILOT_DATA_DIR,
CANNPILOT_CACHE_DIR, CANNPILOT_STATE_DIR. The built-in tasks live in the repository's `bench/ops`.
A cache hit of `cannpilot lower` (copilot/lowering/kernel_cache.py) resolves a task and its cache
directory through this module alone, so it never imports torch.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "cannpilot"
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "bench" / "ops"


def _dir(env: str, default: str) -> Path:
    value = os.environ.get(env)
    return Path(value).expanduser() if value else Path(default)


def config_dir() -> Path:
    import platformdirs

    return _dir("CANNPILOT_CONFIG_DIR", platformdirs.user_config_dir(APP, appauthor=False))


def data_dir() -> Path:
    import platformdirs

    return _dir("CANNPILOT_DATA_DIR", platformdirs.user_data_dir(APP, appauthor=False))


def cache_dir() -> Path:
    import platformdirs

    return _dir("CANNPILOT_CACHE_DIR", platformdirs.user_cache_dir(APP, appauthor=False))


def state_dir() -> Path:
    import platformdirs

    return _dir("CANNPILOT_STATE_DIR", platformdirs.user_state_dir(APP, appauthor=False))


def builtin_task_dir(ref: str) -> Path | None:
    """The built-in task directory a bare name means (`rms_norm`), or None: a path that exists,
    or a reference with a `/`, is never a built-in name."""
    if "/" in ref or Path(ref).expanduser().exists():
        return None
    candidate = BUILTIN_DIR / ref
    return candidate if candidate.is_dir() else None
