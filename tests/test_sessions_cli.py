"""`cannpilot sessions ...`: ls, show, export, replay, rm, resume; store location; bad input."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from copilot.events import LLMCall
from sessions import SecretGuard, SessionStore, default_store_path
from sessions.replay import replay_lines
from sessions.synthetic import emit_session

SHOW_KEYS = {"session", "resume", "best", "baseline_id", "ranked_by", "leaderboard", "candidates", "rounds",
             "decisions", "budget", "llm_by_model"}


@pytest.fixture
def store_path(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "sessions.sqlite"
    with SessionStore(path) as store:
        emit_session(store.emit, "tanh-tuning", rounds=3, variants=4, seed=5)
        emit_session(store.emit, "rmsnorm-night", rounds=1, variants=2, seed=6, finish=False)
    monkeypatch.setenv("CANNPILOT_STORE", str(path))
    return path


def test_ls_json_lists_every_session(store_path, cli):
    code, out, _ = cli("sessions", "ls", "--json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == {"tanh-tuning", "rmsnorm-night"}
    r = rows["tanh-tuning"]
    assert {"name", "task", "status", "rounds", "best_id", "best_time_us", "cost_usd", "updated_at"} <= set(r)
    assert r["status"] == "finished" and r["rounds"] == 3 and r["cost_usd"] > 0 and r["best_id"]
    assert rows["rmsnorm-night"]["status"] == "running"


def test_ls_table_and_store_option_in_either_place(store_path, cli, monkeypatch):
    monkeypatch.delenv("CANNPILOT_STORE")
    for args in (("sessions", "--store", str(store_path), "ls"), ("sessions", "ls", "--store", str(store_path))):
        code, out, _ = cli(*args)
        assert code == 0 and "tanh-tuning" in out and "rmsnorm-night" in out and "finished" in out


def test_ls_without_a_store_says_so_and_creates_nothing(tmp_path, cli, monkeypatch):
    path = tmp_path / "none" / "sessions.sqlite"
    monkeypatch.setenv("CANNPILOT_STORE", str(path))
    code, out, _ = cli("sessions", "ls")
    assert code == 0 and "No sessions yet" in out and not path.exists()


def test_store_location_defaults_to_the_user_data_dir(monkeypatch):
    import platformdirs

    monkeypatch.delenv("CANNPILOT_STORE", raising=False)
    assert default_store_path() == Path(platformdirs.user_data_dir("cannpilot", appauthor=False)) / "sessions.sqlite"
    monkeypatch.setenv("CANNPILOT_STORE", "~/elsewhere.sqlite")
    assert default_store_path() == Path("~/elsewhere.sqlite").expanduser()


def test_show_json_golden_structure(store_path, cli):
    code, out, _ = cli("sessions", "show", "tanh-tuning", "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == SHOW_KEYS
    assert doc["session"]["name"] == "tanh-tuning" and doc["session"]["task"] == "scaled_tanh"
    assert set(doc["resume"]) == {"last_completed_round", "round_in_progress", "decision_pending",
                                  "next_round", "in_flight", "pins", "vetoes", "steer"}
    assert doc["baseline_id"] == "r1-c1"
    assert set(doc["best"]) == {"id", "hap", "time_us", "timing", "roofline_fraction", "perf_cases_timed",
                                "speedup_vs_baseline"}
    assert doc["ranked_by"] == "time" and doc["best"]["hap"] is None     # scaled_tanh has no baselines
    times = [c["time_us"] for c in doc["leaderboard"]]
    assert times == sorted(times) and doc["best"]["id"] == next(c["id"] for c in doc["leaderboard"]
                                                               if not c["vetoed"])
    assert all("code" not in c for c in doc["candidates"]) and len(doc["candidates"]) == 12
    assert [r["round"] for r in doc["rounds"]] == [1, 2, 3]
    assert {d["kind"] for d in doc["decisions"]} >= {"pin", "continue", "stop"}
    assert doc["budget"]["tokens"] == doc["budget"]["prompt_tokens"] + doc["budget"]["completion_tokens"] > 0


def test_show_readable(store_path, cli):
    code, out, _ = cli("sessions", "show", "tanh-tuning")
    assert code == 0 and "leaderboard" in out and "rounds" in out and "decisions" in out and "r1-c1" in out


def test_unknown_session_exits_2_with_close_matches(store_path, cli):
    for action in ("show", "export", "replay", "rm", "resume"):
        extra = ("-o", "/tmp/never-written") if action == "export" else ()
        code, out, err = cli("sessions", action, "tanh-tunning", *extra)
        assert code == 2 and out == ""
        assert "no session named 'tanh-tunning'" in err and "did you mean: tanh-tuning" in err
        assert len(err.strip().splitlines()) == 1
    assert not Path("/tmp/never-written").exists()


@pytest.mark.parametrize("kind", ["corrupt", "newer"])
def test_bad_store_exits_2_with_one_line_and_is_not_touched(tmp_path, cli, monkeypatch, kind):
    path = tmp_path / "sessions.sqlite"
    if kind == "corrupt":
        path.write_bytes(b"\x00garbage" * 512)
    else:
        with SessionStore(path) as store:
            emit_session(store.emit, "s", rounds=1, variants=2)
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO schema_version VALUES (7, 0)")
        conn.commit()
        conn.close()
    before = path.read_bytes()
    monkeypatch.setenv("CANNPILOT_STORE", str(path))
    for args in (("ls",), ("show", "s"), ("rm", "s", "--yes")):
        code, out, err = cli("sessions", *args)
        assert code == 2 and str(path) in err and len(err.strip().splitlines()) == 1
        assert ("damaged" if kind == "corrupt" else "schema version 7") in err
    assert path.read_bytes() == before


def test_export_writes_report_json_and_passing_kernels(store_path, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-" + "Zx9" * 12)
    out_dir = tmp_path / "export"
    code, out, _ = cli("sessions", "export", "tanh-tuning", "-o", str(out_dir))
    assert code == 0
    with SessionStore(store_path) as store:
        rec = store.session_record("tanh-tuning")
    passing = sorted(c["id"] for c in rec["candidates"] if c["status"] == "passed")
    assert sorted(p.stem for p in (out_dir / "kernels").glob("*.cpp")) == passing
    for cid in passing:
        code_text = next(c["code"] for c in rec["candidates"] if c["id"] == cid)
        assert (out_dir / "kernels" / f"{cid}.cpp").read_text() == code_text
    report = (out_dir / "report.md").read_text()
    for section in ("## Totals", "## Leaderboard", "## Best kernel", "### Diff from the baseline `r1-c1`",
                    "## Rounds", "## Decisions", "```diff", "```cpp"):
        assert section in report
    doc = json.loads((out_dir / "session.json").read_text())
    best = doc["session"]["best_id"]
    assert (out_dir / "best.cpp").read_text() == (out_dir / "kernels" / f"{best}.cpp").read_text()
    assert f"`{best}`" in report and (out_dir / "best.diff").read_text().startswith("--- r1-c1.cpp")
    assert doc["events"][0]["kind"] == "session_started" and len(doc["evaluations"]) > 0
    assert f"{doc['session']['cost_usd']:.4f}" in report and str(doc["session"]["prompt_tokens"]) in report
    for path in out_dir.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "sk-live-" not in text and "api_key" not in text.lower()


def test_export_redacts_what_slipped_into_an_old_store(tmp_path, cli, monkeypatch):
    class Blind(SecretGuard):  # a store written before the guard existed
        def find(self, value, where=""):
            return None

    path = tmp_path / "old.sqlite"
    key = "sk-" + "q" * 40
    with SessionStore(path, guard=Blind()) as store:
        emit_session(store.emit, "old", rounds=1, variants=2)
        store.emit(LLMCall(session="old", model="m", role="cake", phase="init", prompt_tokens=1,
                           completion_tokens=1, cost_usd=0, latency_s=1, ok=False, error=f"bad key {key}"))
    code, _, err = cli("sessions", "export", "old", "--store", str(path), "-o", str(tmp_path / "x"))
    assert code == 0 and "REDACTED" in err
    assert key not in (tmp_path / "x" / "session.json").read_text()
    assert "[REDACTED]" in (tmp_path / "x" / "session.json").read_text()


def test_replay_prints_every_event_in_order_with_relative_time(store_path, cli):
    code, out, _ = cli("sessions", "replay", "rmsnorm-night")
    assert code == 0
    lines = out.splitlines()
    with SessionStore(store_path) as store:
        events = list(store.events("rmsnorm-night"))
    assert len(lines) == len(events)
    assert lines[0].split()[0] == "+0.000s" and "session_started" in lines[0]
    assert [ln.split()[2] for ln in lines] == [e["kind"] for e in events]
    offsets = [float(ln.split()[0][1:-1]) for ln in lines]
    assert offsets == sorted(offsets)
    assert any("r1-c1 passed" in ln for ln in lines)


def test_replay_speed_scales_and_caps_the_pauses():
    events = [{"kind": "x", "at": t, "seq": i} for i, t in enumerate((100.0, 101.0, 111.0, 3700.0))]
    pauses: list[float] = []
    lines = list(replay_lines(events, speed=10, max_pause=2.0, sleep=pauses.append))
    assert pauses == pytest.approx([0.1, 1.0, 2.0]) and len(lines) == 4
    assert lines[-1].split()[0] == "+3600.000s"


def test_rm_needs_confirmation_then_removes_everything(store_path, cli):
    code, _, err = cli("sessions", "rm", "rmsnorm-night")
    assert code == 2 and "--yes" in err
    code, out, _ = cli("sessions", "rm", "rmsnorm-night", "--yes")
    assert code == 0 and "Deleted" in out
    conn = sqlite3.connect(store_path)
    for table in ("candidates", "evaluations", "events", "llm_calls", "decisions", "rounds",
                  "knowledge_slices"):
        orphans = conn.execute(f"SELECT count(*) FROM {table} WHERE session_id NOT IN (SELECT id FROM sessions)")
        assert orphans.fetchone()[0] == 0
    assert [r[0] for r in conn.execute("SELECT name FROM sessions")] == ["tanh-tuning"]
    conn.close()


def test_resume_of_a_finished_session_needs_more_rounds(store_path, cli):
    code, out, err = cli("sessions", "resume", "tanh-tuning", "--decide", "auto")
    assert code == 2 and out == ""
    assert "already finished after round 3" in err and "--rounds N (N > 3)" in err
