"""Refuses to let an API key or token reach the session store or an export.

Events should never carry credentials (copilot/events.py says so); this is the second line: every
string about to be written is checked against the shapes of common provider keys and against the
current values of the environment variables that hold credentials. A match is refused, and the
error names where the value was found, never the value.
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterator

from copilot.errors import CannpilotError

# Shapes of provider keys, each with the literals one of which any match contains: the regex only
# runs on text holding one (a plain substring test is far cheaper over a 6 KB kernel). The
# lookbehind keeps words like "task-specific_tiling" from matching.
SECRET_PATTERNS: list[tuple[tuple[str, ...], re.Pattern]] = [
    (("sk-",), re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{10,}")),      # OpenAI, Anthropic, ...
    (("AKIA",), re.compile(r"(?<![A-Za-z0-9])AKIA[0-9A-Z]{16}(?![0-9A-Z])")),  # AWS access key id
    (("AIza",), re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),     # Google API key
    (("gh",), re.compile(r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{36,}")),  # GitHub tokens
    (("hf_",), re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")),        # Hugging Face
    (("xox",), re.compile(r"(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}")),  # Slack
    (("bearer", "Bearer", "BEARER"),
     re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*")),              # an Authorization header
]
# Environment variables whose values are credentials.
SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_KEY", "_ACCESS_KEY", "_PASSWORD")
# Shorter values are too likely to occur by chance ("1", "true") to be treated as secrets.
MIN_SECRET_LENGTH = 8


class SecretRefused(CannpilotError):
    """A value about to be stored looks like a credential. Nothing was written."""

    exit_code = 2


class SecretGuard:
    """Finds credential-looking strings in a JSON-like value."""

    def __init__(self, extra_secrets: tuple[str, ...] = ()) -> None:
        self._extra = {s for s in extra_secrets if len(s) >= MIN_SECRET_LENGTH}

    def add(self, secret: str) -> None:
        """Also refuse this exact value (a key read from a config file rather than the environment)."""
        if len(secret) >= MIN_SECRET_LENGTH:
            self._extra.add(secret)

    def _known_values(self) -> list[tuple[str, str]]:
        known = [(name, value) for name, value in os.environ.items()
                 if name.upper().endswith(SECRET_ENV_SUFFIXES) and len(value) >= MIN_SECRET_LENGTH]
        known += [("a registered secret", value) for value in self._extra]
        return known

    def find(self, value: Any, where: str = "") -> tuple[str, str] | None:
        """(path, what matched) of the first secret-looking string in `value`, or None."""
        known = self._known_values()
        for path, text in _strings(value, where):
            for name, secret in known:
                if secret in text:
                    return path, f"the value of {name}"
            for triggers, pattern in SECRET_PATTERNS:
                if any(t in text for t in triggers) and pattern.search(text):
                    return path, "a string shaped like an API key or token"
        return None

    def check(self, value: Any, where: str) -> None:
        """Raise SecretRefused if `value` holds anything that looks like a credential."""
        found = self.find(value, where)
        if found:
            path, what = found
            raise SecretRefused(f"refused to store {path}: it holds {what}. Credentials never go "
                                "into the session store; remove it from the event (the value itself "
                                "is not shown here)")

    def redact(self, text: str) -> str:
        """`text` with every credential-looking substring replaced by [REDACTED]."""
        for _name, secret in self._known_values():
            text = text.replace(secret, "[REDACTED]")
        for _triggers, pattern in SECRET_PATTERNS:
            text = pattern.sub("[REDACTED]", text)
        return text


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(str(k), f"{path}.<key>")
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")
