"""Errors of the session store that reach the user. All are bad input (exit 2)."""

from __future__ import annotations

import difflib
from pathlib import Path

from copilot.errors import BadInput


class StoreError(BadInput):
    """The store file cannot be used as it is. It was left untouched."""


class StoreCorrupt(StoreError):
    def __init__(self, path: Path, detail: str) -> None:
        super().__init__(f"session store {path} is damaged ({detail}); it was not modified. Move it "
                         "aside and keep it for recovery (`sqlite3 FILE .recover`), or point "
                         "--store / CANNPILOT_STORE at another file")


class StoreTooNew(StoreError):
    def __init__(self, path: Path, found: int, known: int) -> None:
        self.found, self.known = found, known
        super().__init__(f"session store {path} has schema version {found}, newer than version "
                         f"{known} that this cannpilot knows; it was not modified. Upgrade cannpilot, "
                         "or point --store / CANNPILOT_STORE at another file")


class NotAStore(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} is a SQLite database but not a Cannpilot session store; it was not "
                         "modified. Point --store / CANNPILOT_STORE at another file")


class StoreMissing(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(f"no session store at {path} yet: run a session first, or point --store / "
                         "CANNPILOT_STORE at an existing store")


class SessionNotFound(BadInput):
    def __init__(self, name: str, path: Path, known: list[str]) -> None:
        self.name = name
        self.matches = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
        if self.matches:
            hint = "did you mean: " + ", ".join(self.matches) + "?"
        elif known:
            hint = f"{len(known)} session(s) there; list them with `cannpilot sessions ls`"
        else:
            hint = "the store holds no sessions yet"
        super().__init__(f"no session named {name!r} in {path}; {hint}")


class SessionExists(BadInput):
    def __init__(self, name: str, path: Path) -> None:
        super().__init__(f"a session named {name!r} already exists in {path}: resume it with "
                         f"`cannpilot sessions resume {name}`, or choose another name")
