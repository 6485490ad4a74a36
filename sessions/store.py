"""`SessionStore`: the durable record of tuning sessions, one SQLite file in WAL mode.

The store is an `EventSink`: `emit(event)` appends the event to the `events` log and projects it
into the tables (sessions, rounds, candidates, evaluations, decisions, llm_calls, knowledge_slices)
in one short transaction, committed before `emit` returns. A crash therefore loses at most the
event being emitted, never one that `emit` returned for, and the tables always agree with the log.

Durability (`durability=`, measured in bench/store_bench.py, reasoning in docs/sessions.md):
"auto" (default) runs SQLite with synchronous=NORMAL, which in WAL mode already survives any
process crash (SIGKILL, closed terminal, dropped SSH), and forces an fsync of the WAL on the commits
that carry what cannot be recomputed: human decisions, paid LLM calls and the code they produced,
session start and end, round ends. An OS crash or power loss can then cost only recomputable
events after the last such commit. "full" fsyncs every commit; "normal" never does.
Readers in other processes (`cannpilot sessions show` while the TUI runs) read a snapshot and
never block the writer.

Opening never rewrites a file it does not understand: a file that is not SQLite, fails
`PRAGMA quick_check`, is another application's database or has a newer schema is refused with a
`StoreError` before anything is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from copilot.events import (
    Candidate,
    CandidateBuilt,
    CandidateEvaluated,
    CandidateProposed,
    DecisionMade,
    Event,
    RoundStarted,
    SessionStarted,
)
from sessions.errors import (
    NotAStore,
    SessionExists,
    SessionNotFound,
    StoreCorrupt,
    StoreMissing,
    StoreTooNew,
)
from sessions import schema
from sessions.schema import APPLICATION_ID
from sessions.secret_guard import SecretGuard

SQLITE_HEADER = b"SQLite format 3\x00"
# Keys of a per-case evaluation dict that have their own column; the rest goes to `metrics`.
_CASE_COLUMNS = {"id", "case_id", "passed", "time_us", "est_us", "measured_us", "timing", "pipes",
                 "failure_class", "failure", "diagnostics"}


def default_store_path() -> Path:
    """`CANNPILOT_STORE`, else `sessions.sqlite` in the platform's user data directory."""
    env = os.environ.get("CANNPILOT_STORE")
    if env:
        return Path(env).expanduser()
    from copilot.config import data_dir

    return data_dir() / "sessions.sqlite"




from copilot.evolution.population import code_hash  # noqa: E402  (one normalization for both)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class SessionStore:
    """One store file. Thread-safe; one instance per process is enough."""

    def __init__(self, path: str | os.PathLike | None = None, *, create: bool = True,
                 durability: str = "auto", busy_timeout_ms: int = 10_000,
                 guard: SecretGuard | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self.guard = guard or SecretGuard()
        self.last_seq: int | None = None
        self._lock = threading.RLock()
        self.durability = durability.lower()
        if self.durability not in ("auto", "full", "normal"):
            raise ValueError(f"durability must be auto, full or normal, not {durability!r}")
        self._conn = self._open(create, "FULL" if self.durability == "full" else "NORMAL",
                                busy_timeout_ms)

    # ---- opening -------------------------------------------------------------------------------

    def _open(self, create: bool, synchronous: str, busy_timeout_ms: int) -> sqlite3.Connection:
        path = self.path
        if path.exists():
            if path.is_dir():
                raise StoreCorrupt(path, "it is a directory")
            with open(path, "rb") as f:
                head = f.read(len(SQLITE_HEADER))
            if head and head != SQLITE_HEADER:
                raise StoreCorrupt(path, "not a SQLite database")
        elif not create:
            raise StoreMissing(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                               timeout=busy_timeout_ms / 1000)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            version = self._check_readable(conn)
            # Only now, with a file we understand, do we write anything.
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise StoreCorrupt(path, f"cannot switch to WAL journal mode (got {mode})")
            conn.execute(f"PRAGMA synchronous={synchronous}")
            conn.execute("PRAGMA foreign_keys=ON")
            if version < schema.code_version():
                self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_readable(self, conn: sqlite3.Connection) -> int:
        """The store's schema version (0 for an empty file); raises if it must not be touched."""
        path = self.path
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            if [r[0] for r in rows] != ["ok"]:
                raise StoreCorrupt(path, "PRAGMA quick_check: " + "; ".join(r[0] for r in rows[:3]))
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            if not tables:
                if app_id not in (0, APPLICATION_ID):
                    raise NotAStore(path)
                return 0
            if "schema_version" not in tables or app_id != APPLICATION_ID:
                raise NotAStore(path)
            version = conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(path, str(exc)) from None
        if version > schema.code_version():
            raise StoreTooNew(path, version, schema.code_version())
        return version

    def _migrate(self, conn: sqlite3.Connection) -> None:
        while True:
            conn.execute("BEGIN IMMEDIATE")
            try:
                has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE name='schema_version'"
                                         ).fetchone()
                version = (conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
                           or 0) if has_table else 0
                if version >= schema.code_version():  # another process migrated meanwhile
                    conn.execute("COMMIT")
                    if version > schema.code_version():
                        raise StoreTooNew(self.path, version, schema.code_version())
                    return
                step = schema.MIGRATIONS[version]
                if callable(step):
                    step(conn)
                else:
                    for statement in _statements(step):
                        conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                             (version + 1, time.time()))
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "SessionStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing: the EventSink ----------------------------------------------------------------

    def emit(self, event: Event) -> int:
        """Commit `event` to the log and the tables; returns its sequence number once committed
        (on disk too if the durability setting says so).

        Raises SecretRefused (nothing written) if the event holds a credential-looking string,
        SessionExists for a SessionStarted whose name is taken.
        """
        payload = event.to_json()
        self.guard.check(payload, f"{event.kind} event field")
        text = _dumps(payload)
        with self._write(fsync=self.durability == "auto" and _precious(event.kind, payload)) as conn:
            sid = self._session_for_event(conn, event, payload)
            seq = conn.execute("INSERT INTO events (session_id, kind, at, payload) VALUES (?,?,?,?)",
                               (sid, event.kind, event.at, text)).lastrowid
            project = _PROJECTIONS.get(event.kind)
            if project:
                project(conn, sid, payload, seq)
            conn.execute("UPDATE sessions SET updated_at=max(updated_at, ?) WHERE id=?",
                         (event.at, sid))
        self.last_seq = seq
        return seq

    @contextmanager
    def _write(self, fsync: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction; with `fsync`, its commit (and every earlier one) reaches the disk
        before this returns."""
        with self._lock:
            conn = self._conn
            if fsync:
                conn.execute("PRAGMA synchronous=FULL")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            finally:
                if fsync:
                    conn.execute("PRAGMA synchronous=NORMAL")

    def _session_for_event(self, conn: sqlite3.Connection, event: Event, payload: dict) -> int:
        name = event.session
        row = conn.execute("SELECT id FROM sessions WHERE name=?", (name,)).fetchone()
        if isinstance(event, SessionStarted):
            if row:
                raise SessionExists(name, self.path)
            settings = payload.get("settings") or {}
            model = event.model or settings.get("model") or ("" if event.agent == "offline" else event.agent)
            task_path = event.task_path or str(settings.get("task_path", ""))
            return conn.execute(
                "INSERT INTO sessions (name, task, task_path, chip, backend, agent, model, settings,"
                " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (name, event.task, task_path, event.chip, event.backend,
                 event.agent, str(model), _dumps(settings), event.at,
                 event.at)).lastrowid
        if row:
            return row[0]
        # An event for a session never started: keep it rather than lose it.
        return conn.execute("INSERT INTO sessions (name, created_at, updated_at) VALUES (?,?,?)",
                            (name, event.at, event.at)).lastrowid

    # ---- writing: convenience for the engine (each emits the matching event) -------------------

    def begin_session(self, name: str, *, task: str, chip: str, backend: str, agent: str,
                      settings: dict | None = None) -> int:
        return self.emit(SessionStarted(session=name, task=task, chip=chip, backend=backend,
                                        agent=agent, settings=settings or {}))

    def begin_round(self, name: str, round: int, strategies: list[str] | None = None,
                    random_state: Any = None) -> int:
        """Emit RoundStarted and checkpoint the random state the round starts from."""
        event = RoundStarted(session=name, round=round, strategies=list(strategies or []))
        if random_state is not None and hasattr(event, "random_state"):
            event.random_state = random_state
            return self.emit(event)
        seq = self.emit(event)
        if random_state is not None:
            self.checkpoint_random_state(name, random_state, round=round)
        return seq

    def propose(self, name: str, candidate: Candidate) -> int:
        return self.emit(CandidateProposed(session=name, candidate=candidate))

    def built(self, name: str, candidate_id: str, ok: bool, diagnostics: list | None = None,
              seconds: float = 0.0) -> int:
        return self.emit(CandidateBuilt(session=name, candidate_id=candidate_id, ok=ok,
                                        diagnostics=diagnostics or [], seconds=seconds))

    def evaluated(self, name: str, candidate_id: str, status: str, **figures: Any) -> int:
        return self.emit(CandidateEvaluated(session=name, candidate_id=candidate_id, status=status,
                                            **figures))

    def decide(self, name: str, round: int, **decision: Any) -> int:
        return self.emit(DecisionMade(session=name, round=round, **decision))

    def checkpoint_random_state(self, name: str, state: Any, round: int | None = None) -> None:
        """Save the engine's random state (JSON-able, see sessions.state.encode_random) so a resumed
        session draws the same parents. With `round`, it is the state that round started from."""
        self.guard.check(state, "random state")
        text = _dumps(state)
        with self._write() as conn:
            sid = self._require_id(conn, name)
            conn.execute("UPDATE sessions SET random_state=? WHERE id=?", (text, sid))
            if round is not None:
                conn.execute("INSERT INTO rounds (session_id, round, random_state) VALUES (?,?,?) "
                             "ON CONFLICT(session_id, round) DO UPDATE SET random_state=excluded.random_state",
                             (sid, round, text))

    def mark_resumed(self, name: str) -> None:
        """Record in the event log that the session was resumed, and set it running again."""
        now = time.time()
        with self._write() as conn:
            sid = self._require_id(conn, name)
            conn.execute("INSERT INTO events (session_id, kind, at, payload) VALUES (?,?,?,?)",
                         (sid, "session_resumed", now,
                          _dumps({"session": name, "at": now, "kind": "session_resumed"})))
            conn.execute("UPDATE sessions SET status='running', reason='', updated_at=? WHERE id=?",
                         (now, sid))

    def resume_session(self, name: str):
        """Mark the session resumed and return the state to continue from (see sessions.state)."""
        self.mark_resumed(name)
        return self.load_session(name)

    def delete_session(self, name: str) -> None:
        with self._write() as conn:
            sid = self._require_id(conn, name)
            conn.execute("DELETE FROM sessions WHERE id=?", (sid,))

    # ---- reading -------------------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A consistent read of the store (one read transaction); never blocks a writer."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    def _require_id(self, conn: sqlite3.Connection, name: str) -> int:
        row = conn.execute("SELECT id FROM sessions WHERE name=?", (name,)).fetchone()
        if not row:
            known = [r[0] for r in conn.execute("SELECT name FROM sessions ORDER BY name")]
            raise SessionNotFound(name, self.path, known)
        return row[0]

    def session_names(self) -> list[str]:
        with self.snapshot() as conn:
            return [r[0] for r in conn.execute("SELECT name FROM sessions ORDER BY name")]

    def list_sessions(self) -> list[dict]:
        """One summary per session, most recently updated first."""
        sql = """
        SELECT s.name, s.task, s.chip, s.backend, s.agent, s.status, s.last_round, s.cost_usd,
               s.prompt_tokens + s.completion_tokens, s.created_at, s.updated_at,
               (SELECT count(*) FROM candidates c WHERE c.session_id=s.id),
               (SELECT c.id FROM candidates c WHERE c.session_id=s.id AND c.status='passed'
                  AND c.time_us IS NOT NULL ORDER BY c.time_us, c.seq LIMIT 1),
               (SELECT min(c.time_us) FROM candidates c WHERE c.session_id=s.id AND c.status='passed')
        FROM sessions s ORDER BY s.updated_at DESC"""
        keys = ("name", "task", "chip", "backend", "agent", "status", "rounds", "cost_usd", "tokens",
                "created_at", "updated_at", "candidates", "best_id", "best_time_us")
        with self.snapshot() as conn:
            return [dict(zip(keys, row)) for row in conn.execute(sql)]

    def load_session(self, name: str):
        """The state a resumed engine continues from (see sessions.state.SessionState)."""
        from sessions.state import read_state

        with self.snapshot() as conn:
            return read_state(conn, self._require_id(conn, name), self.path)

    def session_record(self, name: str, with_events: bool = False, summary: bool = False) -> dict:
        """Everything stored about one session, as JSON-able dicts (export; `summary` for show)."""
        from sessions.state import read_record

        with self.snapshot() as conn:
            return read_record(conn, self._require_id(conn, name), with_events, summary)

    def events(self, name: str) -> Iterator[dict]:
        """The session's events in order, each its to_json() plus `seq`."""
        with self.snapshot() as conn:
            sid = self._require_id(conn, name)
            rows = conn.execute("SELECT seq, payload FROM events WHERE session_id=? ORDER BY seq",
                                (sid,)).fetchall()
        for seq, payload in rows:
            d = json.loads(payload)
            d["seq"] = seq
            yield d

    def find_by_code_hash(self, name: str, digest: str) -> str | None:
        """Id of an earlier candidate of the session with the same normalized code, if any."""
        with self.snapshot() as conn:
            sid = self._require_id(conn, name)
            row = conn.execute("SELECT id FROM candidates WHERE session_id=? AND code_hash=? "
                               "ORDER BY seq LIMIT 1", (sid, digest)).fetchone()
        return row[0] if row else None


# Events that hold human input or paid-for work: fsynced even under durability="auto".
_PRECIOUS_KINDS = frozenset({"session_started", "decision_made", "llm_call", "round_finished",
                             "session_finished"})


def _precious(kind: str, payload: dict) -> bool:
    if kind == "candidate_proposed":
        return payload["candidate"].get("origin") in ("llm", "human")
    return kind in _PRECIOUS_KINDS


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (ours hold no ';' inside literals)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


# ---- projections: one function per event kind; run inside the event's transaction -------------

def _session_started(conn, sid, e, seq) -> None:
    pass  # the row is written by _session_for_event


def _round_started(conn, sid, e, seq) -> None:
    state = e.get("random_state")
    conn.execute(
        "INSERT INTO rounds (session_id, round, status, strategies, started_at, random_state) "
        "VALUES (?,?,?,?,?,?) ON CONFLICT(session_id, round) DO UPDATE SET status='running', "
        "strategies=excluded.strategies, started_at=coalesce(rounds.started_at, excluded.started_at), "
        "random_state=coalesce(excluded.random_state, rounds.random_state)",
        (sid, e["round"], "running", _dumps(e.get("strategies") or []), e["at"],
         _dumps(state) if state is not None else None))
    if state is not None:
        conn.execute("UPDATE sessions SET random_state=? WHERE id=?", (_dumps(state), sid))


def _candidate_proposed(conn, sid, e, seq) -> None:
    c = e["candidate"]
    digest = code_hash(c["code"])
    row = conn.execute("SELECT status, code_hash FROM candidates WHERE session_id=? AND id=?",
                       (sid, c["id"])).fetchone()
    if row and row[0] not in ("proposed", "built") and row[1] == digest:
        # The same kernel proposed again (a resumed engine re-planning its round): its completed
        # evaluation stands. The event stays in the log.
        return
    conn.execute(
        "INSERT INTO candidates (session_id, id, seq, round, origin, strategy, agency_mode, "
        "parent_ids, knobs, status, time_us, timing, roofline_fraction, pinned, vetoed, code, "
        "code_hash, proposed_at, notes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(session_id, id) DO UPDATE SET round=excluded.round, origin=excluded.origin, "
        "strategy=excluded.strategy, agency_mode=excluded.agency_mode, "
        "parent_ids=excluded.parent_ids, knobs=excluded.knobs, status=excluded.status, "
        "time_us=excluded.time_us, timing=excluded.timing, "
        "roofline_fraction=excluded.roofline_fraction, pinned=max(candidates.pinned, excluded.pinned), "
        "vetoed=max(candidates.vetoed, excluded.vetoed), code=excluded.code, "
        "code_hash=excluded.code_hash, proposed_at=excluded.proposed_at, notes=excluded.notes",
        (sid, c["id"], seq, c["round"], c["origin"], c.get("strategy", ""),
         c.get("agency_mode", ""), _dumps(c.get("parent_ids") or []), _dumps(c.get("knobs") or {}),
         c.get("status", "proposed"), c.get("time_us"), c.get("timing", "estimate"),
         c.get("roofline_fraction"), int(bool(c.get("pinned"))), int(bool(c.get("vetoed"))),
         c["code"], digest, e["at"], _dumps(c.get("notes") or [])))


def _candidate_built(conn, sid, e, seq) -> None:
    conn.execute(
        "UPDATE candidates SET built_at=?, build_ok=?, build_seconds=?, build_diagnostics=?, "
        "status=? WHERE session_id=? AND id=?",
        (e["at"], int(bool(e["ok"])), e.get("seconds", 0.0), _dumps(e.get("diagnostics") or []),
         "built" if e["ok"] else "build_failed", sid, e["candidate_id"]))


def _candidate_evaluated(conn, sid, e, seq) -> None:
    cid = e["candidate_id"]
    if e.get("recorded_again"):
        # the same evaluation on the session's case set: new figures, the same evaluation (its
        # count, time and diagnostics stay)
        new = 0
        conn.execute("UPDATE candidates SET status=?, time_us=?, timing=?, roofline_fraction=? "
                     "WHERE session_id=? AND id=?",
                     (e["status"], e.get("time_us"), e.get("timing", "estimate"), e.get("roofline_fraction"),
                      sid, cid))
    else:
        new = 1
        conn.execute(
            "UPDATE candidates SET status=?, time_us=?, timing=?, roofline_fraction=?, diagnostics=?, "
            "evaluated_at=?, eval_count=eval_count+1 WHERE session_id=? AND id=?",
            (e["status"], e.get("time_us"), e.get("timing", "estimate"), e.get("roofline_fraction"),
             _dumps(e.get("diagnostics") or []), e["at"], sid, cid))
    # The table holds the latest evaluation; earlier ones stay in the event log.
    conn.execute("DELETE FROM evaluations WHERE session_id=? AND candidate_id=?", (sid, cid))
    rows = []
    for i, case in enumerate(e.get("cases") or []):
        time_us = next((case[k] for k in ("time_us", "measured_us", "est_us") if case.get(k) is not None),
                       None)
        timing = case.get("timing") or ("measured" if case.get("measured_us") is not None
                                        else e.get("timing", "estimate"))
        passed = case.get("passed")
        rows.append((sid, cid, str(case.get("id", case.get("case_id", i))),
                     None if passed is None else int(bool(passed)), time_us, timing,
                     _dumps(case.get("pipes") or {}),
                     _dumps({k: v for k, v in case.items() if k not in _CASE_COLUMNS}),
                     case.get("failure_class", case.get("failure")),
                     _dumps(case.get("diagnostics") or []), e["at"]))
    conn.executemany(
        "INSERT INTO evaluations (session_id, candidate_id, case_id, passed, time_us, timing, pipes, "
        "metrics, failure_class, diagnostics, at) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.execute("UPDATE sessions SET evaluations=evaluations+? WHERE id=?", (new, sid))


def _round_finished(conn, sid, e, seq) -> None:
    conn.execute(
        "INSERT INTO rounds (session_id, round, status, finished_at, candidates, passed, best_id, "
        "best_time_us, median_time_us) VALUES (?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(session_id, round) DO UPDATE SET status=excluded.status, "
        "finished_at=excluded.finished_at, candidates=excluded.candidates, passed=excluded.passed, "
        "best_id=excluded.best_id, best_time_us=excluded.best_time_us, "
        "median_time_us=excluded.median_time_us",
        (sid, e["round"], "finished", e["at"], e.get("candidates"), e.get("passed"), e.get("best_id"),
         e.get("best_time_us"), e.get("median_time_us")))
    conn.execute("UPDATE sessions SET last_round=max(last_round, ?) WHERE id=?", (e["round"], sid))


def _decision_needed(conn, sid, e, seq) -> None:
    conn.execute("UPDATE rounds SET status='awaiting_decision' WHERE session_id=? AND round=?",
                 (sid, e["round"]))


def _decision_made(conn, sid, e, seq) -> None:
    rnd, at = e["round"], e["at"]
    rows = [(sid, rnd, "pin", cid, "", at) for cid in e.get("pins") or []]
    rows += [(sid, rnd, "unpin", cid, "", at) for cid in e.get("unpins") or []]
    rows += [(sid, rnd, "veto", cid, "", at) for cid in e.get("vetoes") or []]
    rows += [(sid, rnd, "edit", cid, "", at) for cid in e.get("edits") or []]
    if e.get("steer"):
        rows.append((sid, rnd, "steer", None, e["steer"], at))
    rows.append((sid, rnd, e.get("action", "continue"), None, "", at))
    conn.executemany("INSERT INTO decisions (session_id, round, kind, candidate_id, text, at) "
                     "VALUES (?,?,?,?,?,?)", rows)
    for cid in e.get("pins") or []:
        conn.execute("UPDATE candidates SET pinned=1 WHERE session_id=? AND id=?", (sid, cid))
    for cid in e.get("unpins") or []:
        conn.execute("UPDATE candidates SET pinned=0 WHERE session_id=? AND id=?", (sid, cid))
    for cid in e.get("vetoes") or []:
        conn.execute("UPDATE candidates SET vetoed=1, pinned=0 WHERE session_id=? AND id=?", (sid, cid))
    # Steering applies to the round after this decision; an empty steer clears it.
    conn.execute("UPDATE sessions SET steer=? WHERE id=?", (e.get("steer") or "", sid))
    conn.execute("UPDATE rounds SET status='decided' WHERE session_id=? AND round=?", (sid, rnd))


def _llm_call(conn, sid, e, seq) -> None:
    conn.execute(
        "INSERT INTO llm_calls (session_id, round, candidate_id, model, role, phase, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, ok, error, at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (sid, e.get("round", 0), e.get("candidate_id"), e["model"], e["role"], e["phase"],
         e["prompt_tokens"], e["completion_tokens"], e["cost_usd"], e["latency_s"],
         int(bool(e.get("ok", True))), e.get("error", ""), e["at"]))
    conn.execute("UPDATE sessions SET prompt_tokens=prompt_tokens+?, "
                 "completion_tokens=completion_tokens+?, cost_usd=cost_usd+?, llm_calls=llm_calls+1 "
                 "WHERE id=?", (e["prompt_tokens"], e["completion_tokens"], e["cost_usd"], sid))


def _knowledge_slice_used(conn, sid, e, seq) -> None:
    conn.execute("INSERT INTO knowledge_slices (session_id, round, phase, candidate_id, cards, "
                 "total_tokens, at) VALUES (?,?,?,?,?,?,?)",
                 (sid, e["round"], e["phase"], e.get("candidate_id"), _dumps(e.get("cards") or []),
                  e["total_tokens"], e["at"]))


def _session_finished(conn, sid, e, seq) -> None:
    conn.execute("UPDATE sessions SET status=?, best_id=coalesce(?, best_id), reason=? WHERE id=?",
                 (e["status"], e.get("best_id"), e.get("reason", ""), sid))


_PROJECTIONS = {
    "session_started": _session_started,
    "round_started": _round_started,
    "candidate_proposed": _candidate_proposed,
    "candidate_built": _candidate_built,
    "candidate_evaluated": _candidate_evaluated,
    "round_finished": _round_finished,
    "decision_needed": _decision_needed,
    "decision_made": _decision_made,
    "llm_call": _llm_call,
    "knowledge_slice_used": _knowledge_slice_used,
    "session_finished": _session_finished,
}
