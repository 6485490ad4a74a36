"""The TUI's remembered preferences: theme, auto-continue, the defaults of a new session, key
remaps. One JSON file in the config directory (`CANNPILOT_CONFIG_DIR`, else the platform's user
config dir), written atomically (temp file + `os.replace`) so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

FILE_NAME = "tui.json"


def config_dir() -> Path:
    """Same place as `copilot.config.config_dir()` (not imported: it pulls pydantic into the
    first paint)."""
    env = os.environ.get("CANNPILOT_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("cannpilot", appauthor=False))


@dataclass
class UISettings:
    theme: str = "cannpilot-dark"
    auto_continue: bool = False
    chip: str = "910B2"
    backend: str = "sim"
    agent: str = "offline"           # "offline" or an LLM model name
    budget_usd: float = 0.0          # 0: no budget
    rounds: int = 3
    variants: int = 4
    keymap: dict[str, str] = field(default_factory=dict)   # binding id -> keys, e.g. {"pin": "P"}

    @classmethod
    def load(cls, path: Path | None = None) -> "UISettings":
        """The saved settings; defaults for anything missing, unknown or unreadable."""
        path = path or config_dir() / FILE_NAME
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(raw, dict):
            return cls()
        known = {f.name: f for f in fields(cls)}
        kept: dict[str, Any] = {}
        default = cls()
        for k, v in raw.items():
            if k in known and isinstance(v, type(getattr(default, k))) or (
                    k in known and isinstance(getattr(default, k), float) and isinstance(v, int)):
                kept[k] = v
        return cls(**kept)

    def save(self, path: Path | None = None) -> Path:
        path = path or config_dir() / FILE_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tui-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(asdict(self), f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return path
