"""What a resumed engine continues from, read back from the store.

The resume algorithm (docs/sessions.md has the long form):
1. `last_completed_round` L is the highest round with a RoundFinished.
2. If round L+1 was started and not finished (`round_in_progress`), the engine restores the random
   state that round started from (`random_state`), plans the round again (same parents, same
   candidate ids), skips the candidates whose evaluation completed, re-evaluates the stored code of
   the `in_flight` ones (no new LLM call), and proposes only the ones never proposed.
3. Else, if round L's decision was never made (`decision_pending`), the engine asks for it again.
4. Else it starts round L+1 with the pins, vetoes and steering text below.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot.events import Candidate

TERMINAL_STATUSES = frozenset({"build_failed", "incorrect", "passed", "crashed", "rejected_duplicate",
                               "vetoed"})
IN_FLIGHT_STATUSES = frozenset({"proposed", "built"})


@dataclass
class Budget:
    """What the session has spent so far; a resumed run counts on from here."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    llm_calls: int = 0
    evaluations: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class RoundSummary:
    round: int
    status: str                      # running | finished | awaiting_decision | decided
    strategies: list[str] = field(default_factory=list)
    candidates: int | None = None
    passed: int | None = None
    best_id: str | None = None
    best_time_us: float | None = None
    median_time_us: float | None = None
    started_at: float | None = None
    finished_at: float | None = None


@dataclass
class SessionState:
    name: str
    task: str
    task_path: str
    chip: str
    backend: str
    agent: str
    model: str
    settings: dict[str, Any]
    status: str
    reason: str
    created_at: float
    updated_at: float
    candidates: list[Candidate]      # every candidate, in proposal order, latest status and figures
    pins: list[str]
    vetoes: list[str]
    steer: str                       # steering text for the next round ("" if none)
    budget: Budget
    random_state: Any                # see the module docstring; decode with decode_random
    last_completed_round: int
    round_in_progress: int | None
    decision_pending: int | None     # a finished round whose decision was never made
    last_action: str | None          # "continue" | "stop" of the latest decision
    rounds: list[RoundSummary]
    in_flight: list[Candidate]       # proposed or built, not evaluated: evaluate these again
    # candidate id -> the per-case rows of its latest evaluation, as the engine recorded them (its
    # HAP, "k of n performance cases timed" and the cases the task could not time come from them)
    cases: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def completed_ids(self) -> set[str]:
        """Candidates whose evaluation finished: never evaluate these again."""
        return {c.id for c in self.candidates if c.status in TERMINAL_STATUSES}

    @property
    def population(self) -> list[Candidate]:
        """Passing, not vetoed candidates, fastest first."""
        ok = [c for c in self.candidates if c.status == "passed" and not c.vetoed and c.time_us]
        return sorted(ok, key=lambda c: c.time_us)

    @property
    def best(self) -> Candidate | None:
        pop = self.population
        return pop[0] if pop else None

    def candidate(self, cid: str) -> Candidate:
        for c in self.candidates:
            if c.id == cid:
                return c
        raise KeyError(cid)

    @property
    def next_round(self) -> int:
        """The round the engine runs next (a round in progress is run again)."""
        return self.round_in_progress or self.last_completed_round + 1


def encode_random(rng: random.Random) -> dict:
    """A `random.Random`'s state as JSON for `checkpoint_random_state` / `begin_round`."""
    version, internal, gauss = rng.getstate()
    return {"kind": "python-random", "version": version, "state": list(internal), "gauss": gauss}


def decode_random(state: dict) -> random.Random:
    """The `random.Random` saved by `encode_random`, ready to draw the same numbers again."""
    if not isinstance(state, dict) or state.get("kind") != "python-random":
        raise ValueError("not a state saved by sessions.state.encode_random")
    rng = random.Random()
    rng.setstate((state["version"], tuple(state["state"]), state["gauss"]))
    return rng


def _loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


_CANDIDATE_COLUMNS = ("id, code, round, origin, strategy, agency_mode, parent_ids, knobs, status, "
                      "time_us, timing, roofline_fraction, pinned, vetoed, notes")


def _candidate(row: tuple) -> Candidate:
    (cid, code, rnd, origin, strategy, mode, parents, knobs, status, time_us, timing, roofline,
     pinned, vetoed, notes) = row
    return Candidate(id=cid, code=code, round=rnd, origin=origin, strategy=strategy,
                     agency_mode=mode, parent_ids=json.loads(parents), knobs=json.loads(knobs),
                     status=status, time_us=time_us, timing=timing, roofline_fraction=roofline,
                     pinned=bool(pinned), vetoed=bool(vetoed), notes=json.loads(notes or "[]"))


def _restore_bottlenecks(conn: sqlite3.Connection, sid: int, candidates: list[Candidate]) -> None:
    """A candidate's bottleneck is that of its slowest performance case, as the engine records it;
    the store keeps it in the case's metrics, so a resumed agent is guided as before."""
    slowest: dict[str, tuple[float, str]] = {}
    for cid, time_us, metrics in conn.execute(
            "SELECT candidate_id, time_us, metrics FROM evaluations WHERE session_id=? AND time_us IS NOT NULL",
            (sid,)):
        m = _loads(metrics, {})
        if m.get("role") != "performance" or not m.get("bottleneck"):
            continue
        if cid not in slowest or time_us > slowest[cid][0]:
            slowest[cid] = (time_us, m["bottleneck"])
    for c in candidates:
        if c.id in slowest:
            c.bottleneck = slowest[c.id][1]


def _latest_cases(conn: sqlite3.Connection, sid: int) -> dict[str, list[dict[str, Any]]]:
    """Candidate id -> the cases of its latest CandidateEvaluated, read from the event log: the
    evaluations table keeps a projection of them (est_us and measured_us folded into time_us)."""
    cases: dict[str, list[dict[str, Any]]] = {}
    for cid, rows in conn.execute(
            "SELECT json_extract(payload, '$.candidate_id'), json_extract(payload, '$.cases') FROM events "
            "WHERE session_id=? AND kind='candidate_evaluated' ORDER BY seq", (sid,)):
        cases[cid] = _loads(rows, [])
    return cases


def _rounds(conn: sqlite3.Connection, sid: int) -> list[RoundSummary]:
    rows = conn.execute("SELECT round, status, strategies, candidates, passed, best_id, best_time_us, "
                        "median_time_us, started_at, finished_at FROM rounds WHERE session_id=? "
                        "ORDER BY round", (sid,)).fetchall()
    return [RoundSummary(r[0], r[1], _loads(r[2], []), *r[3:]) for r in rows]


def read_state(conn: sqlite3.Connection, sid: int, path: Path) -> SessionState:
    s = conn.execute("SELECT name, task, task_path, chip, backend, agent, model, settings, status, "
                     "reason, created_at, updated_at, last_round, steer, prompt_tokens, "
                     "completion_tokens, cost_usd, llm_calls, evaluations, random_state "
                     "FROM sessions WHERE id=?", (sid,)).fetchone()
    candidates = [_candidate(r) for r in conn.execute(
        f"SELECT {_CANDIDATE_COLUMNS} FROM candidates WHERE session_id=? ORDER BY seq", (sid,))]
    _restore_bottlenecks(conn, sid, candidates)
    rounds = _rounds(conn, sid)
    last_completed = s[12]
    in_progress = next((r.round for r in rounds if r.round > last_completed and r.status == "running"),
                       None)
    random_state = _loads(s[19])
    if in_progress is not None:
        start = conn.execute("SELECT random_state FROM rounds WHERE session_id=? AND round=?",
                             (sid, in_progress)).fetchone()[0]
        random_state = _loads(start, random_state)
    last = next((r for r in rounds if r.round == last_completed), None)
    decision_pending = (last_completed if s[8] == "running" and in_progress is None
                        and last is not None and last.status in ("finished", "awaiting_decision")
                        else None)
    action = conn.execute("SELECT kind FROM decisions WHERE session_id=? AND kind IN ('continue','stop') "
                          "ORDER BY id DESC LIMIT 1", (sid,)).fetchone()
    return SessionState(
        name=s[0], task=s[1], task_path=s[2], chip=s[3], backend=s[4], agent=s[5], model=s[6],
        settings=_loads(s[7], {}), status=s[8], reason=s[9], created_at=s[10], updated_at=s[11],
        candidates=candidates,
        pins=[c.id for c in candidates if c.pinned],
        vetoes=[c.id for c in candidates if c.vetoed],
        steer=s[13],
        budget=Budget(prompt_tokens=s[14], completion_tokens=s[15], cost_usd=s[16], llm_calls=s[17],
                      evaluations=s[18]),
        random_state=random_state,
        last_completed_round=last_completed,
        round_in_progress=in_progress,
        decision_pending=decision_pending,
        last_action=action[0] if action else None,
        rounds=rounds,
        in_flight=[c for c in candidates if c.status in IN_FLIGHT_STATUSES and not c.vetoed],
        cases=_latest_cases(conn, sid),
    )


def _rows(conn: sqlite3.Connection, sql: str, args: tuple, json_cols: tuple[str, ...] = ()) -> list[dict]:
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    out = []
    for row in cur:
        d = dict(zip(names, row))
        for col in json_cols:
            d[col] = _loads(d[col])
        out.append(d)
    return out


_SUMMARY_CANDIDATE_COLUMNS = ("id, seq, round, origin, strategy, agency_mode, parent_ids, status, time_us, "
                              "timing, roofline_fraction, pinned, vetoed, eval_count, notes")


def read_record(conn: sqlite3.Connection, sid: int, with_events: bool = False,
                summary: bool = False) -> dict:
    """Every table's rows for one session, JSON-able; candidates carry their code. With `summary`,
    no code, per-case evaluations or knowledge slices (what `sessions show` needs, much faster)."""
    session = _rows(conn, "SELECT * FROM sessions WHERE id=?", (sid,), ("settings", "random_state"))[0]
    session.pop("id")
    record = {
        "session": session,
        "rounds": _rows(conn, "SELECT * FROM rounds WHERE session_id=? ORDER BY round", (sid,),
                        ("strategies", "random_state")),
        "candidates": _rows(conn, f"SELECT {_SUMMARY_CANDIDATE_COLUMNS} FROM candidates "
                                  "WHERE session_id=? ORDER BY seq", (sid,), ("parent_ids", "notes")) if summary
        else _rows(conn, "SELECT * FROM candidates WHERE session_id=? ORDER BY seq", (sid,),
                   ("parent_ids", "knobs", "build_diagnostics", "diagnostics", "notes")),
        "evaluations": [] if summary else _rows(
            conn, "SELECT * FROM evaluations WHERE session_id=? ORDER BY id", (sid,),
            ("pipes", "metrics", "diagnostics")),
        "decisions": _rows(conn, "SELECT * FROM decisions WHERE session_id=? ORDER BY id", (sid,)),
        "llm_calls": _rows(conn, "SELECT * FROM llm_calls WHERE session_id=? ORDER BY id", (sid,)),
        "knowledge_slices": [] if summary else _rows(
            conn, "SELECT * FROM knowledge_slices WHERE session_id=? ORDER BY id", (sid,), ("cards",)),
        "llm_by_model": _rows(conn, "SELECT model, count(*) AS calls, sum(prompt_tokens) AS prompt_tokens, "
                                    "sum(completion_tokens) AS completion_tokens, sum(cost_usd) AS cost_usd "
                                    "FROM llm_calls WHERE session_id=? GROUP BY model ORDER BY model",
                              (sid,)),
    }
    for table in ("rounds", "candidates", "evaluations", "decisions", "llm_calls", "knowledge_slices"):
        for row in record[table]:
            row.pop("session_id", None)
            if table == "rounds":
                row.pop("random_state", None)
    session.pop("random_state", None)
    # [k, n]: k of the n performance cases of each candidate's latest evaluation have a time
    coverage = {cid: [k, n] for cid, k, n in conn.execute(
        "SELECT candidate_id, sum(time_us > 0 AND passed IS NOT 0), count(*) FROM evaluations "
        "WHERE session_id=? AND json_extract(metrics, '$.role')='performance' GROUP BY candidate_id", (sid,))}
    for c in record["candidates"]:
        c["pinned"], c["vetoed"] = bool(c["pinned"]), bool(c["vetoed"])
        c["perf_timed"] = coverage.get(c["id"])
    if with_events:
        record["events"] = [dict(json.loads(p), seq=q) for q, p in conn.execute(
            "SELECT seq, payload FROM events WHERE session_id=? ORDER BY seq", (sid,))]
    return record
