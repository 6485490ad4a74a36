"""Chip profiles: the numbers the sim backend checks against, each with where it comes from.

Profiles are data (`<name>.yaml` beside this file). A number's `source` names the fact it rests on
(`ascendc-facts.md §...`); a source starting with "provisional" marks a default to confirm on
hardware.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from copilot.errors import BadInput

CHIP_DIR = Path(__file__).resolve().parent
DEFAULT_CHIP = "910B2"

_NUMBERS = ("arch", "vector_cores", "cube_cores", "ub_bytes", "ub_reserved_default", "max_buffers",
            "max_queue_buffers", "l1_bytes", "l0a_bytes", "l0b_bytes", "l0c_bytes", "l2_bytes", "hbm_bytes")


@dataclass(frozen=True)
class ChipProfile:
    name: str
    soc_version: str
    short_soc_version: str
    arch: int
    vector_cores: int
    cube_cores: int
    ub_bytes: int               # usable UB per vector core (GetCoreMemSize(UB) and the capacity rule)
    ub_reserved_default: int
    max_buffers: int
    max_queue_buffers: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    l2_bytes: int
    hbm_bytes: int
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def provisional(self, key: str) -> bool:
        return self.sources.get(key, "").startswith("provisional")

    def to_json(self) -> dict:
        return {
            "name": self.name, "soc_version": self.soc_version, "short_soc_version": self.short_soc_version,
            **{k: {"value": getattr(self, k), "source": self.sources.get(k, ""),
                   "provisional": self.provisional(k)} for k in _NUMBERS},
        }


def list_chips() -> list[str]:
    return sorted(p.stem for p in CHIP_DIR.glob("*.yaml"))


def load_chip(name: str | ChipProfile) -> ChipProfile:
    """The profile of chip `name` (e.g. "910B2", case-insensitive); BadInput for an unknown chip."""
    if isinstance(name, ChipProfile):
        return name
    known = list_chips()
    match = next((k for k in known if k.lower() == str(name).lower()), None)
    if match is None:
        raise BadInput(f"unknown chip '{name}': known chips are {', '.join(known)}")
    path = CHIP_DIR / f"{match}.yaml"
    return _read_profile(path, path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _read_profile(path: Path, mtime_ns: int) -> ChipProfile:
    """Parsed once per file version: the evaluator asks for the profile many times per candidate."""
    data = yaml.safe_load(path.read_text())
    values, sources = {}, {}
    for key in _NUMBERS:
        entry = data[key]
        values[key] = int(entry["value"])
        sources[key] = str(entry.get("source", "provisional"))
    return ChipProfile(name=str(data["name"]), soc_version=str(data["soc_version"]),
                       short_soc_version=str(data["short_soc_version"]), sources=sources, **values)
