"""The one shape every finding takes: compiler error, emulator rule, runtime failure, precision miss.

`id` is a constraint id of the knowledge base (`L2.UB_CAPACITY`, `L4.API_SIGNATURE`, `RUN.CRASH`, ...);
`cards` are the knowledge cards that explain it (filled by the knowledge base's error mapper).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass
class Diagnostic:
    id: str
    severity: Severity
    message: str
    line: int = 0                 # line in the candidate file, 0 when unknown
    hint: str = ""
    cards: list[str] = field(default_factory=list)
    api: str = ""                 # the AscendC API involved, when there is one
    raw: str = ""                 # the raw compiler or runtime text it came from

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"
