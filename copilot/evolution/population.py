"""The population of candidates: ranking, tiers, parent sampling, inspirations, duplicates.

Fitness is the mean HAP over the performance cases (CANN-Bench's hardware-anchored score, higher is
better) when the task has the benchmark's baselines for the chip, else the candidate's time (µs,
geometric mean over the performance cases): lower is better. Both are estimated on the sim backend,
measured on an NPU. Only passing candidates are ranked; with baselines, a passing candidate without
a HAP (no timed case with a baseline) ranks after those with one.
Tiers follow the collaborative-evolution scheme: the top 30 % are exploited, the middle 40 %
balanced, the bottom 30 % explored.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass

from copilot.events import Candidate

TIER_SHARES = (("top", 0.3), ("middle", 0.4), ("bottom", 0.3))


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_SPACE = re.compile(r"\s+")
_AROUND_PUNCT = re.compile(r" ?([^\w ]) ?")


def normalize_code(code: str) -> str:
    """Code without comments, with white space kept only where it separates two words: two
    candidates that differ only in formatting or comments are the same kernel."""
    text = _SPACE.sub(" ", _COMMENT.sub(" ", code)).strip()
    return _AROUND_PUNCT.sub(r"\1", text)


def code_hash(code: str) -> str:
    """sha256 of the normalized code (deduplication here and in the session store)."""
    return hashlib.sha256(normalize_code(code).encode()).hexdigest()


def perf_coverage(cases: list[dict]) -> tuple[int, int] | None:
    """(k, n): k of the evaluation's n performance cases have a time (estimated on sim); None when
    it has no performance row (it stopped before them). A row without `est_us` is a case the task
    or the kernel could not be timed on (its `not_timed` says why)."""
    perf = [c for c in cases if c.get("role") == "performance"]
    if not perf:
        return None
    return sum(1 for c in perf if c.get("est_us") and c.get("passed") is not False), len(perf)


@dataclass(frozen=True)
class Inspiration:
    """A candidate shown to an agent as an example, with its figures."""

    candidate_id: str
    tier: str
    code: str
    time_us: float
    timing: str
    roofline_fraction: float | None
    strategy: str
    bottleneck: str | None = None

    def render(self) -> str:
        roof = f", {self.roofline_fraction:.0%} of the roofline" if self.roofline_fraction else ""
        return (f"// Inspiration {self.candidate_id} ({self.tier} tier, strategy: {self.strategy or 'n/a'}): "
                f"{self.time_us:.2f} us ({self.timing}){roof}\n{self.code}")


class Population:
    def __init__(self, rng: random.Random | None = None) -> None:
        self.candidates: dict[str, Candidate] = {}
        self.hashes: dict[str, str] = {}          # code hash -> first candidate id with it
        self.rng = rng or random.Random(0)
        self.hap: dict[str, float] = {}           # candidate id -> mean HAP (tasks with baselines)
        self.by_hap = False                       # rank by HAP (the task has baselines)

    def __len__(self) -> int:
        return len(self.candidates)

    def add(self, c: Candidate) -> None:
        self.candidates[c.id] = c
        self.hashes.setdefault(code_hash(c.code), c.id)

    def duplicate_of(self, code: str) -> str | None:
        """The id of an earlier candidate with the same normalized code, if any."""
        return self.hashes.get(code_hash(code))

    def get(self, cid: str) -> Candidate:
        return self.candidates[cid]

    def passing(self) -> list[Candidate]:
        return [c for c in self.candidates.values() if c.status == "passed" and c.time_us]

    def fitness(self, c: Candidate) -> tuple:
        """The sort key of a passing candidate: smaller is better."""
        if self.by_hap:
            h = self.hap.get(c.id)
            return (0, -h, c.time_us) if h is not None else (1, 0.0, c.time_us)
        return (0, 0.0, c.time_us)

    def ranked(self) -> list[Candidate]:
        """Passing candidates, best first (ties: earlier id first)."""
        return sorted(self.passing(), key=lambda c: (*self.fitness(c), c.round, c.id))

    def best(self) -> Candidate | None:
        ranked = self.ranked()
        return ranked[0] if ranked else None

    def tiers(self) -> dict[str, list[Candidate]]:
        """Passing, non-vetoed candidates split 30 / 40 / 30 by rank (at least one in top)."""
        ranked = [c for c in self.ranked() if not c.vetoed]
        n = len(ranked)
        if n == 0:
            return {"top": [], "middle": [], "bottom": []}
        n_top = max(1, round(n * 0.3))
        n_bottom = round(n * 0.3) if n - n_top > 1 else 0
        n_mid = n - n_top - n_bottom
        return {"top": ranked[:n_top], "middle": ranked[n_top:n_top + n_mid],
                "bottom": ranked[n_top + n_mid:]}

    def tier_of(self, cid: str) -> str | None:
        for name, members in self.tiers().items():
            if any(c.id == cid for c in members):
                return name
        return None

    def sample_parents(self, k: int) -> list[tuple[Candidate, str]]:
        """k parents, drawn tier by tier in proportion 30 / 40 / 30 (exploit / balance / explore).

        Pinned candidates are always among the parents (first). Vetoed ones never are. An empty
        tier gives its share to the nearest non-empty one. Stale parents (beaten by a child of their
        own) are left out while any other candidate passes.
        """
        tiers = self.tiers()
        beaten = self.superseded()
        fresh = {name: [c for c in members if c.id not in beaten] for name, members in tiers.items()}
        if any(fresh.values()):
            tiers = fresh
        pinned = [c for c in self.ranked() if c.pinned and not c.vetoed]
        chosen: list[tuple[Candidate, str]] = [(c, "pinned") for c in pinned[:k]]
        remaining = k - len(chosen)
        if remaining <= 0 or not any(tiers.values()):
            return chosen
        quotas = _split(remaining, [share for _, share in TIER_SHARES])
        order = [name for name, _ in TIER_SHARES]
        for i, name in enumerate(order):
            if not tiers[name]:
                # give this tier's quota to the closest non-empty tier
                for j in sorted(range(len(order)), key=lambda j: abs(j - i)):
                    if tiers[order[j]]:
                        quotas[j] += quotas[i]
                        quotas[i] = 0
                        break
        for name, q in zip(order, quotas):
            members = tiers[name]
            for _ in range(q):
                chosen.append((self.rng.choice(members), name))
        return chosen

    def superseded(self) -> set[str]:
        """Stale parents: the ids of candidates that a passing child of their own already beats
        (drawing one again repeats a step that was taken; its tier draws from the others first)."""
        passing = {c.id: c for c in self.passing()}
        return {pid for c in passing.values() for pid in c.parent_ids
                if pid in passing and self.fitness(c) < self.fitness(passing[pid])}

    def inspirations(self, exclude: str | None = None) -> list[Inspiration]:
        """The best candidate, one from the middle tier and one from the bottom tier."""
        tiers = self.tiers()
        out = []
        picks = [("top", tiers["top"][:1])]
        for name in ("middle", "bottom"):
            pool = [c for c in tiers[name] if c.id != exclude]
            picks.append((name, [self.rng.choice(pool)] if pool else []))
        for name, cands in picks:
            for c in cands:
                if c.id == exclude and name != "top":
                    continue
                out.append(Inspiration(c.id, name, c.code, c.time_us or math.nan, c.timing,
                                       c.roofline_fraction, c.strategy, c.bottleneck))
        return out


def _split(total: int, shares: list[float]) -> list[int]:
    """Integer quotas proportional to shares, summing to total (largest remainders)."""
    raw = [total * s for s in shares]
    quotas = [int(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - quotas[i], reverse=True)[:total - sum(quotas)]:
        quotas[i] += 1
    return quotas
