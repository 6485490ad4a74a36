"""The agent's reasons for a candidate (Proposal.notes) reach the candidate, the store, a resumed
session and the TUI's diff view."""

from __future__ import annotations

from copilot.events import Candidate, CandidateProposed, SessionStarted
from sessions import SessionStore
from tui.widgets.code_view import diff_lines


def test_the_notes_survive_the_store_and_a_resume(tmp_path):
    path = tmp_path / "s.sqlite"
    with SessionStore(path) as store:
        store.emit(SessionStarted(session="s1", task="relu", chip="910B2", backend="sim", agent="offline",
                                  settings={"rounds": 1}))
        store.emit(CandidateProposed(session="s1", candidate=Candidate(
            "r1-c1", "// k", 1, "offline", strategy="L3.ub-budget", agency_mode="knob_edit",
            notes=["tile_elems 0 -> 8192 (parent is memory-bound) (L3.ub-budget)",
                   "passed over, the tiling of every performance case unchanged: rows_per_tile 0 -> 8"])))
    with SessionStore(path) as store:
        c = store.load_session("s1").candidate("r1-c1")
    assert c.notes[0].startswith("tile_elems 0 -> 8192") and "rows_per_tile 0 -> 8" in c.notes[1]


def test_the_diff_view_leads_with_the_reasons():
    lines = [t.plain for t in diff_lines("a\nb\n", "a\nc\n", "r0-base", "r1-c1", ("tile_elems 0 -> 8192", "x"))]
    assert lines[0] == "why: tile_elems 0 -> 8192" and lines[1] == "     x"
    assert lines[2].startswith("--- r0-base")
    same = [t.plain for t in diff_lines("a\n", "a\n", "r0-base", "r1-c1", ("why not",))]
    assert same == ["why: why not", "r1-c1 is identical to its parent r0-base."]
    assert [t.plain for t in diff_lines("a\n", "a\n", "r0-base", "r1-c1")] == ["r1-c1 is identical to its parent r0-base."]
