"""The session store's schema, as ordered migrations.

`MIGRATIONS[i]` takes a store from version `i` to `i + 1`; each runs in its own transaction and
records its version in `schema_version`. Append new migrations, never edit a released one.
JSON columns hold UTF-8 JSON text; times are Unix seconds (float).
"""

from __future__ import annotations

# 'CnP1' read as a big-endian integer: lets `file` and we ourselves tell a Cannpilot store from any
# other SQLite database.
APPLICATION_ID = 0x436E5031

_V1 = """
CREATE TABLE schema_version (
    version     INTEGER PRIMARY KEY,
    applied_at  REAL NOT NULL
);

CREATE TABLE sessions (
    id                 INTEGER PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE,
    task               TEXT NOT NULL DEFAULT '',
    task_path          TEXT NOT NULL DEFAULT '',
    chip               TEXT NOT NULL DEFAULT '',
    backend            TEXT NOT NULL DEFAULT '',
    agent              TEXT NOT NULL DEFAULT '',      -- "offline" or a model name
    model              TEXT NOT NULL DEFAULT '',
    settings           TEXT NOT NULL DEFAULT '{}',    -- JSON: the run options
    status             TEXT NOT NULL DEFAULT 'running',
    reason             TEXT NOT NULL DEFAULT '',
    best_id            TEXT,
    created_at         REAL NOT NULL,
    updated_at         REAL NOT NULL,
    last_round         INTEGER NOT NULL DEFAULT 0,    -- last completed round
    steer              TEXT NOT NULL DEFAULT '',      -- steering text for the next round
    -- budget spent, kept current by every LLMCall and evaluation
    prompt_tokens      INTEGER NOT NULL DEFAULT 0,
    completion_tokens  INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL NOT NULL DEFAULT 0,
    llm_calls          INTEGER NOT NULL DEFAULT 0,
    evaluations        INTEGER NOT NULL DEFAULT 0,
    random_state       TEXT                           -- JSON, latest checkpoint
);

CREATE TABLE rounds (
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    round           INTEGER NOT NULL,
    status          TEXT NOT NULL DEFAULT 'running',  -- running | finished | awaiting_decision | decided
    strategies      TEXT NOT NULL DEFAULT '[]',       -- JSON
    started_at      REAL,
    finished_at     REAL,
    candidates      INTEGER,
    passed          INTEGER,
    best_id         TEXT,
    best_time_us    REAL,
    median_time_us  REAL,
    random_state    TEXT,                             -- JSON, taken when the round started
    PRIMARY KEY (session_id, round)
) WITHOUT ROWID;

CREATE TABLE candidates (
    session_id         INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id                 TEXT NOT NULL,
    seq                INTEGER NOT NULL,              -- event sequence that proposed it: keeps order
    round              INTEGER NOT NULL,
    origin             TEXT NOT NULL,                 -- lowering | offline | llm | human
    strategy           TEXT NOT NULL DEFAULT '',
    agency_mode        TEXT NOT NULL DEFAULT '',
    parent_ids         TEXT NOT NULL DEFAULT '[]',    -- JSON
    knobs              TEXT NOT NULL DEFAULT '{}',    -- JSON
    status             TEXT NOT NULL DEFAULT 'proposed',
    time_us            REAL,
    timing             TEXT NOT NULL DEFAULT 'estimate',  -- estimate | measured
    roofline_fraction  REAL,
    pinned             INTEGER NOT NULL DEFAULT 0,
    vetoed             INTEGER NOT NULL DEFAULT 0,
    code               TEXT NOT NULL,
    code_hash          TEXT NOT NULL,                 -- sha256 of the normalized code (dedup)
    proposed_at        REAL NOT NULL,
    built_at           REAL,
    build_ok           INTEGER,
    build_seconds      REAL,
    build_diagnostics  TEXT NOT NULL DEFAULT '[]',    -- JSON
    evaluated_at       REAL,
    eval_count         INTEGER NOT NULL DEFAULT 0,    -- > 1 means it was evaluated again
    diagnostics        TEXT NOT NULL DEFAULT '[]',    -- JSON, of the latest evaluation
    PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
CREATE INDEX candidates_by_hash ON candidates (session_id, code_hash);

CREATE TABLE evaluations (
    id              INTEGER PRIMARY KEY,
    session_id      INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    candidate_id    TEXT NOT NULL,
    case_id         TEXT NOT NULL,
    passed          INTEGER,
    time_us         REAL,
    timing          TEXT NOT NULL DEFAULT 'estimate',
    pipes           TEXT NOT NULL DEFAULT '{}',       -- JSON: busy time per pipe (MTE2, V, MTE3, S)
    metrics         TEXT NOT NULL DEFAULT '{}',       -- JSON: mere, mare and the rest of the case
    failure_class   TEXT,
    diagnostics     TEXT NOT NULL DEFAULT '[]',       -- JSON
    at              REAL NOT NULL
);
CREATE INDEX evaluations_by_candidate ON evaluations (session_id, candidate_id);

CREATE TABLE decisions (
    id            INTEGER PRIMARY KEY,
    session_id    INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    round         INTEGER NOT NULL,
    kind          TEXT NOT NULL,                      -- pin | veto | edit | steer | continue | stop
    candidate_id  TEXT,
    text          TEXT NOT NULL DEFAULT '',
    at            REAL NOT NULL
);
CREATE INDEX decisions_by_session ON decisions (session_id, round);

CREATE TABLE llm_calls (
    id                 INTEGER PRIMARY KEY,
    session_id         INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    round              INTEGER NOT NULL DEFAULT 0,
    candidate_id       TEXT,
    model              TEXT NOT NULL,
    role               TEXT NOT NULL,
    phase              TEXT NOT NULL,
    prompt_tokens      INTEGER NOT NULL,
    completion_tokens  INTEGER NOT NULL,
    cost_usd           REAL NOT NULL,
    latency_s          REAL NOT NULL,
    ok                 INTEGER NOT NULL,
    error              TEXT NOT NULL DEFAULT '',
    at                 REAL NOT NULL
);
CREATE INDEX llm_calls_by_session ON llm_calls (session_id);

CREATE TABLE knowledge_slices (
    id            INTEGER PRIMARY KEY,
    session_id    INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    round         INTEGER NOT NULL,
    phase         TEXT NOT NULL,
    candidate_id  TEXT,
    cards         TEXT NOT NULL DEFAULT '[]',         -- JSON: {id, level, tokens, reason}
    total_tokens  INTEGER NOT NULL,
    at            REAL NOT NULL
);
CREATE INDEX knowledge_slices_by_session ON knowledge_slices (session_id);

-- Append-only: every event as emitted, in order. The tables above are projections of it.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    at          REAL NOT NULL,
    payload     TEXT NOT NULL                         -- the event's to_json()
);
CREATE INDEX events_by_session ON events (session_id, seq);
"""

# Teaching mode (copilot/learn): one row per learner and lesson, and every graded attempt.
_V2 = """
CREATE TABLE lesson_progress (
    learner        TEXT NOT NULL,
    lesson         TEXT NOT NULL,                     -- the lesson's folder name, e.g. 01-first-kernel
    opened_at      REAL NOT NULL,
    updated_at     REAL NOT NULL,
    passed         INTEGER NOT NULL DEFAULT 0,
    passed_at      REAL,
    attempts       INTEGER NOT NULL DEFAULT 0,        -- gradings
    hints_used     INTEGER NOT NULL DEFAULT 0,        -- highest hint level shown (0-3)
    solution_shown INTEGER NOT NULL DEFAULT 0,
    seconds        REAL NOT NULL DEFAULT 0,           -- time spent with the lesson open
    code           TEXT,                              -- the learner's latest code (resume)
    PRIMARY KEY (learner, lesson)
) WITHOUT ROWID;

CREATE TABLE lesson_attempts (
    id        INTEGER PRIMARY KEY,
    learner   TEXT NOT NULL,
    lesson    TEXT NOT NULL,
    at        REAL NOT NULL,
    passed    INTEGER NOT NULL,
    rules     TEXT NOT NULL DEFAULT '[]',             -- JSON: the constraint ids reported
    time_us   REAL                                    -- cost-model estimate, when correct
);
CREATE INDEX lesson_attempts_by_lesson ON lesson_attempts (learner, lesson);
"""

# The agent's reasons for each candidate (JSON list of strings): the offline agent's move and what
# it addresses, the moves it passed over.
_V3 = """
ALTER TABLE candidates ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';
"""

# Ordered: index i migrates version i -> i + 1.
MIGRATIONS: list[str] = [_V1, _V2, _V3]


def code_version() -> int:
    """The newest schema version this code knows."""
    return len(MIGRATIONS)
