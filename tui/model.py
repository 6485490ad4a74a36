"""The session as the TUI sees it: one place that folds engine events into UI state.

Plain Python (no Textual): the widgets read from it, tests and the benchmark drive it directly.
`apply(event)` returns the ids of the candidates whose row changed, so the leaderboard can update
just those rows instead of rebuilding the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from copilot import scoring
from copilot.costmodel import format_estimate
from copilot.events import Candidate, Event

# Status words shown next to the marker glyphs: state is never told by colour alone.
STATUS_WORDS = {
    "proposed": "… pending",
    "evaluating": "⚙ evaluating",
    "built": "⚙ built",
    "build_failed": "✗ build failed",
    "incorrect": "✗ incorrect",
    "passed": "✓ passed",
    "crashed": "✗ crashed",
    "rejected_duplicate": "= duplicate",
    "no_code": "∅ no code",
}


@dataclass
class Row:
    """One candidate with what the board shows about it."""

    id: str
    round: int
    origin: str
    strategy: str
    code: str
    parent_ids: list[str] = field(default_factory=list)
    status: str = "proposed"
    time_us: float | None = None
    timing: str = "estimate"
    roofline_fraction: float | None = None
    pinned: bool = False
    vetoed: bool = False
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    cases: list[dict[str, Any]] = field(default_factory=list)
    seq: int = 0                      # proposal order: the tie-breaker of every sort
    notes: list[str] = field(default_factory=list)   # the agent's reasons for the candidate

    @property
    def ranked(self) -> bool:
        return self.status == "passed" and bool(self.time_us)


@dataclass
class RoundInfo:
    round: int
    candidates: int = 0
    passed: int = 0
    best_id: str | None = None
    best_time_us: float | None = None
    median_time_us: float | None = None
    finished: bool = False


@dataclass
class SliceInfo:
    round: int
    phase: str
    cards: list[dict[str, Any]]       # {id, level, tokens, reason}
    total_tokens: int
    source: str = "agent"             # "agent": sent with a prompt; "preview": assembled for display


def format_time(time_us: float | None, timing: str, band: float | None = None) -> str:
    """A fitness time with its provenance: sim times are estimates, never measurements; an
    estimate carries its error band (`12.70 µs est. (×÷1.35)`) when the chip is calibrated."""
    if not time_us:
        return "—"
    if timing == "estimate":
        # four significant digits from 100 µs: the figure fits the leaderboard with its band
        digits = 2 if time_us < 100 else 1 if time_us < 1000 else 0
        return format_estimate(time_us, band, digits)
    return f"{time_us:.2f} µs meas."


def row_band(row: Row) -> float | None:
    """A candidate's error band: the widest of its timed cases' bands (None: no case has one)."""
    bands = [c["est_band"] for c in row.cases if c.get("est_band") is not None]
    return max(bands) if bands else None


def marks(row: Row) -> str:
    out = []
    if row.pinned:
        out.append("📌 pinned")
    if row.vetoed:
        out.append("✗ vetoed")
    return " ".join(out)


class BoardModel:
    """Everything the main screen shows, built from the event stream."""

    def __init__(self) -> None:
        self.session = ""
        self.task = ""
        self.chip = ""
        self.baselines: dict = {}             # case id -> CANN-Bench baseline, for a public task
        self.backend = ""
        self.agent = ""
        self.settings: dict[str, Any] = {}
        self.rows: dict[str, Row] = {}
        self.rounds: dict[int, RoundInfo] = {}
        self.current_round = 0
        self.phase = "starting"
        self.slices: list[SliceInfo] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost_usd = 0.0
        self.llm_calls = 0
        self.finished: str | None = None      # session status once SessionFinished arrived
        self.finish_reason = ""
        self.best_id: str | None = None
        self._seq = 0
        self._rank: dict[str, int] | None = None
        # the change queued for a candidate by the engineer's draft decision, as words
        self.queued: Callable[[str], str] = lambda cid: ""

    # ---- folding events -------------------------------------------------------------------

    def apply(self, e: Event) -> set[str]:
        """Fold one event in; returns the ids of rows whose displayed cells changed."""
        handler = getattr(self, f"_on_{e.kind}", None)
        return handler(e) or set() if handler else set()

    def _on_session_started(self, e) -> set[str]:
        self.session, self.task, self.chip = e.session, e.task, e.chip
        self.baselines = scoring.task_baselines(e.task_path, e.chip)
        self.backend, self.agent, self.settings = e.backend, e.agent, dict(e.settings)
        self.phase = "baseline"
        return set()

    def _on_round_started(self, e) -> set[str]:
        self.current_round = e.round
        self.rounds[e.round] = RoundInfo(e.round, candidates=len(e.strategies))
        self.phase = "proposing"
        return set()

    def _on_knowledge_slice_used(self, e) -> set[str]:
        self.add_slice(SliceInfo(e.round, e.phase, list(e.cards), e.total_tokens, "agent"))
        return set()

    def _on_llm_call(self, e) -> set[str]:
        self.prompt_tokens += e.prompt_tokens
        self.completion_tokens += e.completion_tokens
        self.cost_usd += e.cost_usd
        self.llm_calls += 1
        return set()

    def _on_candidate_proposed(self, e) -> set[str]:
        c: Candidate = e.candidate
        self._seq += 1
        self.rows[c.id] = Row(c.id, c.round, c.origin, c.strategy, c.code, list(c.parent_ids),
                              c.status, c.time_us, c.timing, c.roofline_fraction, c.pinned, c.vetoed,
                              seq=self._seq, notes=list(getattr(c, "notes", None) or []))
        if self.phase in ("proposing", "decision"):
            self.phase = "evaluating"
        return {c.id}

    def _on_evaluation_started(self, e) -> set[str]:
        row = self.rows.get(e.candidate_id)
        if row is None or row.status != "proposed":
            return set()
        row.status = "evaluating"
        return {row.id}

    def _on_candidate_built(self, e) -> set[str]:
        row = self.rows.get(e.candidate_id)
        if row is None:
            return set()
        if e.ok and row.status in ("proposed", "evaluating"):
            row.status = "built"
        if e.diagnostics:
            row.diagnostics = list(e.diagnostics)
        return {row.id}

    def _on_candidate_evaluated(self, e) -> set[str]:
        row = self.rows.get(e.candidate_id)
        if row is None:
            return set()
        row.status, row.time_us, row.timing = e.status, e.time_us, e.timing
        row.roofline_fraction, row.cases = e.roofline_fraction, list(e.cases)
        if e.diagnostics or not row.diagnostics:
            row.diagnostics = list(e.diagnostics)
        self._rank = None            # recomputed lazily on the next read
        return {row.id}

    def _on_round_finished(self, e) -> set[str]:
        info = self.rounds.setdefault(e.round, RoundInfo(e.round))
        info.candidates, info.passed, info.best_id = e.candidates, e.passed, e.best_id
        info.best_time_us, info.median_time_us, info.finished = e.best_time_us, e.median_time_us, True
        self.best_id = e.best_id
        self.phase = "round finished"
        return set()

    def _on_decision_needed(self, e) -> set[str]:
        self.phase = "awaiting decision"
        changed = set()
        for r in e.leaderboard:
            row = self.rows.get(r["id"])
            if row and (row.pinned, row.vetoed) != (bool(r["pinned"]), bool(r["vetoed"])):
                row.pinned, row.vetoed = bool(r["pinned"]), bool(r["vetoed"])
                changed.add(row.id)
        return changed

    def _on_decision_made(self, e) -> set[str]:
        changed = set()
        for cid in e.pins:
            if cid in self.rows:
                self.rows[cid].pinned = True
                changed.add(cid)
        for cid in e.vetoes:
            if cid in self.rows:
                self.rows[cid].vetoed, self.rows[cid].pinned = True, False
                changed.add(cid)
        self.phase = "stopping" if e.action == "stop" else "decision"
        return changed

    def _on_session_finished(self, e) -> set[str]:
        self.finished, self.finish_reason = e.status, e.reason
        self.best_id = e.best_id or self.best_id
        self.phase = e.status
        return set()

    # ---- derived figures ------------------------------------------------------------------

    def add_slice(self, s: SliceInfo) -> None:
        # a slice the agent really used replaces a preview of the same round and phase
        self.slices = [x for x in self.slices
                       if not (x.source == "preview" and x.round == s.round and x.phase == s.phase)]
        self.slices.append(s)

    @property
    def latest_slice(self) -> SliceInfo | None:
        return self.slices[-1] if self.slices else None

    def _ranking(self) -> dict[str, int]:
        if self._rank is None:
            ranked = sorted((r for r in self.rows.values() if r.ranked),
                            key=lambda r: (*self._fitness(r), r.round, r.seq))
            self._rank = {r.id: i + 1 for i, r in enumerate(ranked)}
        return self._rank

    def _fitness(self, row: Row) -> tuple:
        """As the engine ranks (copilot.evolution.population): by mean HAP when the task has
        CANN-Bench baselines, else by time."""
        if self.baselines:
            h = scoring.candidate_hap(row.cases, self.baselines)
            return (0, -h, row.time_us) if h is not None else (1, 0.0, row.time_us)
        return (0, 0.0, row.time_us)

    def rank(self, cid: str) -> int | None:
        return self._ranking().get(cid)

    @property
    def baseline(self) -> Row | None:
        b = self.rows.get("r0-base")
        return b if b and b.ranked else None

    def speedup(self, row: Row) -> float | None:
        base = self.baseline
        if not (base and row.ranked):
            return None
        return base.time_us / row.time_us  # type: ignore[operator]

    def best(self) -> Row | None:
        ranking = self._ranking()
        if not ranking:
            return None
        return self.rows[min(ranking, key=ranking.get)]  # type: ignore[arg-type]

    def parent_of(self, row: Row) -> Row | None:
        for pid in row.parent_ids:
            if pid in self.rows:
                return self.rows[pid]
        return None

    def progress(self) -> list[tuple[int, float | None, float | None]]:
        """(round, best time so far, median of the round's passing times) per round: the engine's
        figures for finished rounds, live ones for the round that runs."""
        out = []
        for r in sorted(self.rounds):
            info = self.rounds[r]
            if info.finished:
                out.append((r, info.best_time_us, info.median_time_us))
                continue
            times = sorted(x.time_us for x in self.rows.values()  # type: ignore[misc]
                           if x.round == r and x.ranked)
            best = self.best()
            out.append((r, best.time_us if best else None, times[len(times) // 2] if times else None))
        return out

    def cells(self, row: Row) -> tuple[str, ...]:
        """The leaderboard cells of one row, in column order."""
        rank = self.rank(row.id)
        speed = self.speedup(row)
        roof = row.roofline_fraction
        return (
            str(rank) if rank else "—",
            row.id,
            "base" if row.round == 0 else f"r{row.round}",
            row.origin,
            (row.strategy[3:] if row.strategy.startswith("L3.") else row.strategy) or "—",
            STATUS_WORDS.get(row.status, row.status),
            format_time(row.time_us, row.timing, row_band(row)),
            f"{speed:.2f}×" if speed else "—",
            f"{roof:.0%}" if roof and not math.isnan(roof) else "—",
            self.hap_text(row, band=False),
            " ".join(x for x in (marks(row), self.queued(row.id)) if x) or "",
        )

    def hap_text(self, row: Row, band: bool = True) -> str:
        """CANN-Bench's HAP of a candidate: the mean over its timed cases (estimates on sim), with
        its range at the ends of the error band unless `band` is False (the leaderboard's cell)."""
        h = scoring.candidate_hap(row.cases, self.baselines) if self.baselines and row.ranked else None
        if h is None:
            return "—"
        if not band:
            return f"{h:.2f}"
        lo_hi = scoring.candidate_hap_band(row.cases, self.baselines)
        if lo_hi and lo_hi[1] - lo_hi[0] >= 0.005:      # the band carried through HAP
            return f"{h:.2f} ({lo_hi[0]:.2f}–{lo_hi[1]:.2f})"
        return f"{h:.2f}"

    def best_score_text(self) -> str:
        """The CANN-Bench score of the session's best, over the cases the session judged."""
        best = self.best()
        if best is None or not self.baselines:
            return ""
        score, judged = scoring.session_score(best.cases, self.baselines)
        timed = [c for c in best.cases if c.get("role") == "performance" and c.get("est_us")
                 and str(c.get("id")) in self.baselines]
        faster = sum(scoring.vendor_verdict(c["est_us"], c.get("est_band"),
                                            self.baselines[str(c["id"])].baseline_us) == "faster" for c in timed)
        vendor = f", faster than the vendor on {faster} of {len(timed)} timed (band allowing)" if timed else ""
        return (f" · best {best.id}: HAP {self.hap_text(best)}, CANN-Bench score ≥ {score:.1f}/100 "
                f"({judged} of {len(self.baselines)} cases judged, est.){vendor}")


COLUMNS = (("rank", "rank"), ("id", "id"), ("gen", "round"), ("origin", "origin"),
           ("strategy", "strategy"), ("status", "status"), ("time", "time"),
           ("speedup", "speedup"), ("roof", "roofline"), ("HAP", "hap"), ("marks", "marks"))
