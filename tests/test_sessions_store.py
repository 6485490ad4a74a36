"""The session store: schema and migrations, refusal of files it must not touch, the projection of
events into tables, the secret guard, readers during writes, and SIGKILL at random moments."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from copilot.events import (Candidate, CandidateBuilt, CandidateEvaluated, CandidateProposed,
                            DecisionMade, KnowledgeSliceUsed, LLMCall, RoundFinished, RoundStarted,
                            SessionFinished, SessionStarted)
from sessions import (NotAStore, SecretRefused, SessionExists, SessionStore, StoreCorrupt, StoreTooNew,
                      code_hash)
from sessions import schema
from sessions.synthetic import emit_session

REPO = Path(__file__).resolve().parents[1]
TABLES = {"schema_version", "sessions", "rounds", "candidates", "evaluations", "decisions", "llm_calls",
          "knowledge_slices", "events"}


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "sessions.sqlite"


def _start(store: SessionStore, name: str = "s1") -> None:
    store.emit(SessionStarted(session=name, task="scaled_tanh", chip="910B2", backend="sim",
                              agent="offline", settings={"rounds": 3, "task_path": "/tasks/scaled_tanh"}))


# ---- schema, migrations, refusal -----------------------------------------------------------------

def test_new_store_has_the_schema_in_wal_mode(store_path):
    with SessionStore(store_path) as store:
        conn = sqlite3.connect(store_path)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert TABLES <= tables
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.schema_version() == schema.code_version()
        assert conn.execute("PRAGMA application_id").fetchone()[0] == schema.APPLICATION_ID
        conn.close()


def test_migrations_run_in_order_and_keep_data(store_path, monkeypatch):
    with SessionStore(store_path) as store:
        _start(store)
    v1 = schema.code_version()
    seen = []

    def v2_data(conn):  # a data migration written as a function
        seen.append("v2")
        conn.execute("UPDATE sessions SET reason='migrated'")

    v3 = "ALTER TABLE sessions ADD COLUMN label TEXT NOT NULL DEFAULT '';\nCREATE INDEX s_label ON sessions (label);"
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS + [v2_data, v3])
    with SessionStore(store_path) as store:
        assert store.schema_version() == v1 + 2
        assert seen == ["v2"]
        conn = sqlite3.connect(store_path)
        assert [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")] == \
            list(range(1, v1 + 3))
        assert conn.execute("SELECT name, reason, label FROM sessions").fetchall() == [("s1", "migrated", "")]
        conn.close()
    with SessionStore(store_path) as store:  # already current: nothing runs again
        assert seen == ["v2"]


def test_a_failing_migration_leaves_the_store_at_its_version(store_path, monkeypatch):
    with SessionStore(store_path) as store:
        _start(store)
    current = schema.code_version()
    monkeypatch.setattr(schema, "MIGRATIONS",
                        schema.MIGRATIONS + ["ALTER TABLE sessions ADD COLUMN x INT; SELECT * FROM nowhere"])
    with pytest.raises(sqlite3.OperationalError):
        SessionStore(store_path)
    conn = sqlite3.connect(store_path)
    assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == current
    assert "x" not in [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
    conn.close()


def test_newer_store_is_refused_and_left_byte_identical(store_path):
    with SessionStore(store_path) as store:
        _start(store)
    conn = sqlite3.connect(store_path)
    conn.execute("INSERT INTO schema_version VALUES (99, 0)")
    conn.commit()
    conn.close()
    before = store_path.read_bytes()
    with pytest.raises(StoreTooNew) as err:
        SessionStore(store_path)
    msg = str(err.value)
    assert str(store_path) in msg and "99" in msg and f"version {schema.code_version()}" in msg
    assert err.value.exit_code == 2
    assert store_path.read_bytes() == before


@pytest.mark.parametrize("damage", ["garbage", "truncated_header", "damaged_pages"])
def test_corrupt_store_is_refused_and_left_byte_identical(store_path, damage):
    if damage == "garbage":
        store_path.parent.mkdir(parents=True)
        store_path.write_bytes(b"this is my notes file, not a database\n" * 100)
    else:
        with SessionStore(store_path) as store:
            emit_session(store.emit, "s1", rounds=2, variants=4)
        data = bytearray(store_path.read_bytes())
        if damage == "truncated_header":
            data = data[:10]
        else:  # overwrite the middle pages with noise: the b-trees no longer hold together
            rng = random.Random(1)
            page = 4096
            for p in range(2, len(data) // page):
                for i in range(p * page + 8, p * page + 200):
                    data[i] = rng.randrange(256)
        store_path.write_bytes(bytes(data))
    before = store_path.read_bytes()
    with pytest.raises(StoreCorrupt) as err:
        SessionStore(store_path)
    assert str(store_path) in str(err.value) and "not modified" in str(err.value)
    assert store_path.read_bytes() == before


def test_another_applications_database_is_refused(store_path):
    store_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(store_path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    before = store_path.read_bytes()
    with pytest.raises(NotAStore):
        SessionStore(store_path)
    assert store_path.read_bytes() == before


# ---- events -> tables ----------------------------------------------------------------------------

def _cand(cid: str, rnd: int = 1, origin: str = "llm", code: str | None = None, **kw) -> Candidate:
    return Candidate(id=cid, code=code or f"// {cid}\nint kernel_{cid.replace('-', '_')}();\n",
                     round=rnd, origin=origin, **kw)


def test_events_are_projected_into_the_tables(store_path):
    store = SessionStore(store_path)
    _start(store)
    store.emit(RoundStarted(session="s1", round=1, strategies=["L3.DOUBLE_BUFFER"]))
    store.emit(KnowledgeSliceUsed(session="s1", round=1, phase="init", total_tokens=900,
                                  cards=[{"id": "L3.DOUBLE_BUFFER", "level": "L3", "tokens": 900}],
                                  candidate_id="r1-c2"))
    store.emit(LLMCall(session="s1", model="gpt-4o", role="cake-partial", phase="init", prompt_tokens=5000,
                       completion_tokens=1200, cost_usd=0.031, latency_s=8.5, round=1,
                       candidate_id="r1-c2"))
    store.emit(LLMCall(session="s1", model="gpt-4o", role="cake-partial", phase="repair",
                       prompt_tokens=100, completion_tokens=0, cost_usd=0.0, latency_s=30.0, ok=False,
                       error="Timeout: no answer in 30 s", round=1))
    store.emit(CandidateProposed(session="s1", candidate=_cand("r1-c1", origin="lowering",
                                                               knobs={"tile": 1024})))
    store.emit(CandidateProposed(session="s1", candidate=_cand("r1-c2", strategy="L3.DOUBLE_BUFFER",
                                                               agency_mode="tool_agent",
                                                               parent_ids=["r1-c1"])))
    store.emit(CandidateBuilt(session="s1", candidate_id="r1-c1", ok=True, seconds=0.4))
    store.emit(CandidateBuilt(session="s1", candidate_id="r1-c2", ok=False,
                              diagnostics=[{"id": "L2.UB_CAPACITY", "line": 12}]))
    store.emit(CandidateEvaluated(session="s1", candidate_id="r1-c1", status="passed", time_us=10.0,
                                  roofline_fraction=0.5,
                                  cases=[{"id": "c0", "passed": True, "mere": 1e-4, "mare": 2e-3,
                                          "est_us": 9.5, "pipes": {"MTE2": 6.0, "V": 3.0}},
                                         {"id": "c1", "passed": True, "mere": 2e-4, "mare": 1e-3,
                                          "measured_us": 10.5, "failure_class": None}]))
    store.emit(RoundFinished(session="s1", round=1, candidates=2, passed=1, best_id="r1-c1",
                             best_time_us=10.0, median_time_us=10.0))
    store.emit(DecisionMade(session="s1", round=1, pins=["r1-c1"], vetoes=["r1-c2"], steer="bigger tiles"))
    store.emit(SessionFinished(session="s1", status="stopped", best_id="r1-c1", reason="user stop"))
    store.close()

    db = sqlite3.connect(store_path)
    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731
    assert q("SELECT name, task, task_path, chip, backend, agent, status, reason, best_id, last_round, "
             "steer, prompt_tokens, completion_tokens, llm_calls, evaluations FROM sessions") == [
        ("s1", "scaled_tanh", "/tasks/scaled_tanh", "910B2", "sim", "offline", "stopped", "user stop",
         "r1-c1", 1, "bigger tiles", 5100, 1200, 2, 1)]
    assert q("SELECT round(cost_usd, 3) FROM sessions") == [(0.031,)]
    assert q("SELECT id, origin, strategy, agency_mode, parent_ids, knobs, status, time_us, "
             "roofline_fraction, pinned, vetoed, build_ok, eval_count FROM candidates ORDER BY seq") == [
        ("r1-c1", "lowering", "", "lowering", "[]", '{"tile":1024}', "passed", 10.0, 0.5, 1, 0, 1, 1),
        ("r1-c2", "llm", "L3.DOUBLE_BUFFER", "tool_agent", '["r1-c1"]', "{}", "build_failed", None, None,
         0, 1, 0, 0)]
    assert json.loads(q("SELECT build_diagnostics FROM candidates WHERE id='r1-c2'")[0][0])[0]["id"] == \
        "L2.UB_CAPACITY"
    assert q("SELECT code_hash FROM candidates WHERE id='r1-c1'")[0][0] == code_hash(_cand("r1-c1").code)
    rows = q("SELECT case_id, passed, time_us, timing, pipes, metrics, failure_class FROM evaluations "
             "ORDER BY id")
    assert rows[0][:4] == ("c0", 1, 9.5, "estimate") and json.loads(rows[0][4]) == {"MTE2": 6.0, "V": 3.0}
    assert json.loads(rows[0][5]) == {"mere": 1e-4, "mare": 2e-3}
    assert rows[1][:4] == ("c1", 1, 10.5, "measured") and rows[1][6] is None
    assert q("SELECT round, kind, candidate_id, text FROM decisions ORDER BY id") == [
        (1, "pin", "r1-c1", ""), (1, "veto", "r1-c2", ""), (1, "steer", None, "bigger tiles"),
        (1, "continue", None, "")]
    assert q("SELECT phase, ok, error FROM llm_calls ORDER BY id") == [
        ("init", 1, ""), ("repair", 0, "Timeout: no answer in 30 s")]
    assert q("SELECT round, phase, candidate_id, total_tokens FROM knowledge_slices") == [
        (1, "init", "r1-c2", 900)]
    assert q("SELECT round, status, candidates, passed, best_id FROM rounds") == [
        (1, "decided", 2, 1, "r1-c1")]
    kinds = [r[0] for r in q("SELECT kind FROM events ORDER BY seq")]
    assert kinds[0] == "session_started" and kinds[-1] == "session_finished" and len(kinds) == 13
    first = json.loads(q("SELECT payload FROM events ORDER BY seq LIMIT 1")[0][0])
    assert first["settings"]["rounds"] == 3 and first["kind"] == "session_started"


def test_a_second_session_start_with_a_taken_name_is_refused(store_path):
    store = SessionStore(store_path)
    _start(store)
    with pytest.raises(SessionExists, match="sessions resume s1"):
        _start(store)
    assert len(list(store.events("s1"))) == 1


def test_an_evaluation_done_again_replaces_the_case_rows_and_counts(store_path):
    store = SessionStore(store_path)
    _start(store)
    store.emit(CandidateProposed(session="s1", candidate=_cand("r1-c1")))
    for t in (10.0, 9.0):
        store.emit(CandidateEvaluated(session="s1", candidate_id="r1-c1", status="passed", time_us=t,
                                      cases=[{"id": "c0", "passed": True, "est_us": t}]))
    rec = store.session_record("s1")
    assert rec["candidates"][0]["eval_count"] == 2 and rec["candidates"][0]["time_us"] == 9.0
    assert [e["time_us"] for e in rec["evaluations"]] == [9.0]


def test_code_hash_ignores_comments_and_whitespace_but_not_code():
    a = "int x = 1; // one\nint y;\n"
    assert code_hash(a) == code_hash("int x = 1;   /* other */\n\n int y;")
    assert code_hash(a) != code_hash("int x = 2;\nint y;\n")


def test_find_by_code_hash(store_path):
    store = SessionStore(store_path)
    _start(store)
    store.emit(CandidateProposed(session="s1", candidate=_cand("r1-c1", code="int a;  // x")))
    assert store.find_by_code_hash("s1", code_hash("int a;")) == "r1-c1"
    assert store.find_by_code_hash("s1", code_hash("int b;")) is None


# ---- secret guard --------------------------------------------------------------------------------

def _count_events(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("where", ["error", "settings"])
def test_secret_shaped_values_are_refused_and_nothing_is_written(store_path, where):
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    store = SessionStore(store_path)
    if where == "settings":
        with pytest.raises(SecretRefused) as err:
            store.emit(SessionStarted(session="s1", task="t", chip="c", backend="sim", agent="gpt-4o",
                                      settings={"headers": {"Authorization": f"Bearer {key}"}}))
        assert store.session_names() == []
    else:
        _start(store)
        with pytest.raises(SecretRefused) as err:
            store.emit(LLMCall(session="s1", model="gpt-4o", role="cake", phase="init", prompt_tokens=1,
                               completion_tokens=1, cost_usd=0, latency_s=1, ok=False,
                               error=f"AuthenticationError: Incorrect API key provided: {key}"))
    assert key not in str(err.value) and err.value.exit_code == 2
    assert _count_events(store_path) == (0 if where == "settings" else 1)
    assert key.encode() not in store_path.read_bytes()
    store.close()


def test_values_of_key_environment_variables_are_refused(store_path, monkeypatch):
    monkeypatch.setenv("DASHSCOPE_API_KEY", "plain-looking-value-42")
    monkeypatch.setenv("HF_TOKEN", "another-plain-value-99")
    store = SessionStore(store_path)
    _start(store)
    for text in ("proxy said plain-looking-value-42", "another-plain-value-99"):
        with pytest.raises(SecretRefused, match="DASHSCOPE_API_KEY|HF_TOKEN"):
            store.emit(DecisionMade(session="s1", round=1, steer=text))
    assert _count_events(store_path) == 1


def test_guard_lets_ordinary_kernels_and_text_through(store_path, monkeypatch):
    monkeypatch.setenv("SHORT_TOKEN", "1")  # too short to be a credential: "1" is everywhere
    store = SessionStore(store_path)
    _start(store)
    code = ("// task-specific_tiling for the mask-projection kernel\n"
            "constexpr int32_t TILE = 1024; // desk-checked\n")
    store.emit(CandidateProposed(session="s1", candidate=_cand("r1-c1", code=code,
                                                               strategy="task-specific_tiling")))
    assert store.load_session("s1").candidates[0].code == code


# ---- readers never block the writer --------------------------------------------------------------

READER = textwrap.dedent("""
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN")
    count = lambda: conn.execute("SELECT count(*) FROM events").fetchone()[0]
    print(count(), flush=True)
    sys.stdin.readline()            # the writer commits while this read transaction is open
    print(count(), flush=True)
    conn.execute("COMMIT")
    print(count(), flush=True)
""")


def test_a_reader_in_another_process_never_blocks_the_writer(store_path):
    # busy_timeout 0: if the reader held a lock the writer needs, emit would fail at once.
    store = SessionStore(store_path, busy_timeout_ms=0)
    _start(store)
    reader = subprocess.Popen([sys.executable, "-c", READER, str(store_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "1"
        emit_session(store.emit, "s2", rounds=2, variants=3)
        total = _count_events(store_path)
        assert total > 20
        reader.stdin.write("go\n")
        reader.stdin.flush()
        assert reader.stdout.readline().strip() == "1"        # its snapshot stayed consistent
        assert reader.stdout.readline().strip() == str(total)  # and it sees everything after
    finally:
        reader.kill()
        reader.wait()


WRITER = textwrap.dedent("""
    import sys
    from sessions import SessionStore
    from sessions.synthetic import emit_session
    store = SessionStore(sys.argv[1], busy_timeout_ms=int(sys.argv[3]))
    def emit(event):
        seq = store.emit(event)
        print(seq, flush=True)
    emit_session(emit, sys.argv[2], rounds=int(sys.argv[4]), variants=6, code_bytes=6000)
    print("done", flush=True)
""")


@pytest.mark.slow
def test_sessions_show_runs_while_a_writer_is_writing(store_path):
    with SessionStore(store_path) as store:
        _start(store, "other")
    env = dict(os.environ, PYTHONPATH=str(REPO), CANNPILOT_STORE=str(store_path))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store_path), "live", "0", "8"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert writer.stdout.readline().strip().isdigit()  # writing has begun
        for _ in range(3):
            out = subprocess.run([sys.executable, "-m", "copilot.cli", "sessions", "show", "live", "--json"],
                                 capture_output=True, text=True, env=env, timeout=120)
            assert out.returncode == 0, out.stderr
            assert json.loads(out.stdout)["session"]["name"] == "live"
        lines = writer.communicate(timeout=300)[0].split()
        assert writer.returncode == 0 and lines[-1] == "done", writer.stderr.read()
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()


# ---- SIGKILL at random moments ---------------------------------------------------------------------

@pytest.mark.slow
def test_sigkill_at_random_moments_loses_no_committed_event(store_path):
    rng = random.Random(20261129)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    store_path.parent.mkdir(parents=True)
    for i in range(10):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store_path), f"run{i}", "10000", "50"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        committed = []
        first = writer.stdout.readline().strip()
        assert first.isdigit(), "the writer did not start"
        committed.append(int(first))
        # Let it write for a random number of further commits, then kill it mid-stream.
        for _ in range(rng.randint(0, 120)):
            line = writer.stdout.readline().strip()
            if not line.isdigit():
                break
            committed.append(int(line))
        os.kill(writer.pid, signal.SIGKILL)
        rest = writer.communicate()[0].split()
        assert writer.returncode == -signal.SIGKILL
        committed += [int(x) for x in rest if x.isdigit()]

        conn = sqlite3.connect(store_path)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = {r[0] for r in conn.execute(
            "SELECT seq FROM events e JOIN sessions s ON s.id=e.session_id WHERE s.name=?", (f"run{i}",))}
        assert set(committed) <= stored, f"kill {i}: committed events missing"
        assert len(stored) - len(committed) <= 1  # at most the one being reported when killed
        # The projection agrees with the log: every proposed candidate has its row.
        proposed = conn.execute("SELECT count(*) FROM events e JOIN sessions s ON s.id=e.session_id "
                                "WHERE s.name=? AND kind='candidate_proposed'", (f"run{i}",)).fetchone()[0]
        rows = conn.execute("SELECT count(*) FROM candidates c JOIN sessions s ON s.id=c.session_id "
                            "WHERE s.name=?", (f"run{i}",)).fetchone()[0]
        assert proposed == rows
        conn.close()
    # After ten crashes the store still opens and every session reads back.
    with SessionStore(store_path) as store:
        assert len(store.session_names()) == 10
        for name in store.session_names():
            store.load_session(name)


# ---- durability policy -----------------------------------------------------------------------------

def test_auto_durability_fsyncs_the_commits_that_hold_human_or_paid_work(store_path):
    store = SessionStore(store_path)
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)

    def fsynced(event) -> bool:
        statements.clear()
        store.emit(event)
        return "PRAGMA synchronous=FULL" in statements

    assert fsynced(SessionStarted(session="s1", task="t", chip="c", backend="sim", agent="gpt-4o"))
    assert fsynced(CandidateProposed(session="s1", candidate=_cand("r1-c1", origin="llm")))
    assert fsynced(CandidateProposed(session="s1", candidate=_cand("r1-c2", origin="human")))
    assert not fsynced(CandidateProposed(session="s1", candidate=_cand("r1-c3", origin="offline")))
    assert not fsynced(CandidateBuilt(session="s1", candidate_id="r1-c1", ok=True))
    assert not fsynced(CandidateEvaluated(session="s1", candidate_id="r1-c1", status="passed"))
    assert fsynced(LLMCall(session="s1", model="m", role="cake", phase="init", prompt_tokens=1,
                           completion_tokens=1, cost_usd=0.1, latency_s=1))
    assert fsynced(DecisionMade(session="s1", round=1, steer="x"))
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # back to NORMAL
    full = SessionStore(store_path.with_name("full.sqlite"), durability="full")
    assert full._conn.execute("PRAGMA synchronous").fetchone()[0] == 2


def test_no_sessions_module_imports_a_ui_library():
    code = ("import sys, json, pkgutil, importlib, sessions\n"
            "for m in pkgutil.iter_modules(sessions.__path__):\n"
            "    importlib.import_module('sessions.' + m.name)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('textual', 'rich', 'prompt_toolkit'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
