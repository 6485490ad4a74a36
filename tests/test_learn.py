"""Teaching mode: every lesson's starter fails with the diagnostics it teaches, its reference
passes, each hint is reachable; grading explains failures (never a traceback); progress is kept.

The 24 gradings (starter and reference of 12 lessons) run once per module, two at a time; the
builds are cached by content, so a second run only executes the cases.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from copilot.learn import get_lesson, grade, load_lessons
from copilot.learn.lessons import gap_line

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the sim backend needs g++")

LESSONS = load_lessons()


@pytest.fixture(scope="module")
def grades():
    jobs = [(l, kind) for l in LESSONS for kind in ("starter", "solution")]
    with ThreadPoolExecutor(max_workers=2) as pool:
        out = list(pool.map(lambda job: grade(job[0], getattr(job[0], job[1])), jobs))
    return {(l.number, kind): g for (l, kind), g in zip(jobs, out)}


def test_the_curriculum_has_twelve_lessons_numbered_in_order():
    assert [l.number for l in LESSONS] == list(range(1, len(LESSONS) + 1))
    assert len(LESSONS) >= 12
    for l in LESSONS:
        assert "GAP 1" in l.starter, l.key
        assert l.text.strip().startswith("# Lesson"), l.key
        assert "GAP" not in l.solution, l.key


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.key)
def test_the_starter_fails_with_the_expected_diagnostics(grades, lesson):
    g = grades[(lesson.number, "starter")]
    assert not g.passed
    for rule in lesson.starter_expects:
        assert rule in g.rules, (lesson.key, g.rules)
    for f in g.findings:
        if f.blocking:
            assert f.message and f.card and f.fix, (lesson.key, f)
            if f.line:   # the line is the learner's own, with its text
                assert f.code == lesson.starter.splitlines()[f.line - 1].strip()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.key)
def test_the_reference_passes(grades, lesson):
    g = grades[(lesson.number, "solution")]
    assert g.passed, (lesson.key, [f.text() for f in g.findings])
    assert g.cases and all(c.passed for c in g.cases)
    assert not set(lesson.absent) & set(g.rules)
    if lesson.time_target_us is not None:
        starter = grades[(lesson.number, "starter")]
        assert g.time_us <= lesson.time_target_us < starter.time_us


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda l: l.key)
def test_each_hint_is_reachable_and_points_at_the_starter(grades, lesson):
    from knowledge.cards import card_index

    idx = card_index()
    h1, h2, h3 = (lesson.hint(k) for k in (1, 2, 3))
    assert h1.card in idx and all(c in idx for c in lesson.concepts)
    starter = grades[(lesson.number, "starter")]
    assert h2.rule in starter.rules, (lesson.key, h2.rule, starter.rules)
    line = gap_line(lesson.starter, h2.gap)
    assert line > 0 and f"line {line}" in h2.render(lesson.starter)
    assert h3.render(lesson.starter) and h3.gap and gap_line(lesson.starter, h3.gap)
    with pytest.raises(Exception, match="hints 1-3"):
        lesson.hint(4)


def test_the_pipe_profile_comes_with_every_timed_case(grades):
    g = grades[(4, "starter")]
    assert g.cases[0].est_us and set(g.cases[0].pipes_us) == {"MTE2", "V", "MTE3", "S"}
    time_finding = next(f for f in g.findings if f.rule == "LESSON.TIME_TARGET")
    assert "est." in time_finding.message and time_finding.card == "L3.double-buffering"


def test_a_follow_on_finding_does_not_hide_the_real_error(grades):
    g = grades[(2, "starter")]
    assert g.findings[0].rule == "L2.GM_BOUNDS" and g.findings[0].line
    assert all(not f.blocking for f in g.findings if f.rule == "RUN.INTEGRITY")


def test_bad_input_is_one_message_not_a_traceback():
    lesson = get_lesson(1)
    g = grade(lesson, "   \n")
    assert not g.passed and g.findings[0].rule == "LESSON.INPUT" and "empty" in g.findings[0].message
    g = grade(lesson, "this is not C++ at all")
    assert not g.passed and not g.compiled and g.findings and all(f.message for f in g.findings)


def test_a_hanging_kernel_is_contained(tmp_path):
    lesson = get_lesson(1)
    hang = lesson.solution.replace("for (uint32_t i = 0; i < tiles; ++i) {",
                                   "for (uint32_t i = 0; i < tiles; i += 0) {")
    g = grade(lesson, hang, timeout=4)
    assert not g.passed and "RUN.TIMEOUT" in g.rules, g.rules
    assert next(f for f in g.findings if f.rule == "RUN.TIMEOUT").fix


def test_lessons_are_found_by_number_id_and_folder():
    assert get_lesson("3").id == "alignment"
    assert get_lesson("alignment").number == 3 and get_lesson("03-alignment").number == 3
    with pytest.raises(Exception, match="no lesson"):
        get_lesson(99)


def test_progress_is_kept_and_resumable(tmp_path):
    from sessions.lessons import attempts, open_lesson, progress, record_attempt, record_hint, save_work
    from sessions.store import SessionStore

    path = tmp_path / "s.sqlite"
    with SessionStore(path) as store:
        row = open_lesson(store, "01-first-kernel", learner="ana")
        assert row["attempts"] == 0 and row["code"] is None
        record_hint(store, "01-first-kernel", 2, learner="ana")
        record_hint(store, "01-first-kernel", 1, learner="ana")
        record_attempt(store, "01-first-kernel", passed=False, rules=["L2.QUEUE_PROTOCOL"], code="v1",
                       learner="ana")
        save_work(store, "01-first-kernel", code="v2", seconds=90, learner="ana")
        record_attempt(store, "01-first-kernel", passed=True, time_us=6.9, learner="ana")
    with SessionStore(path) as store:     # reopened: what a resumed Learn screen reads
        p = progress(store, "ana")["01-first-kernel"]
        assert (p["attempts"], p["hints_used"], p["passed"], p["code"], p["seconds"]) == (2, 2, 1, "v2", 90)
        assert p["passed_at"] is not None
        assert [a["passed"] for a in attempts(store, "01-first-kernel", "ana")] == [False, True]
        assert progress(store, "bob") == {}


def test_cli_lists_checks_and_hints(tmp_path, monkeypatch, capsys):
    from copilot.cli import main

    monkeypatch.setenv("CANNPILOT_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setenv("CANNPILOT_CONFIG_DIR", str(tmp_path / "cfg"))
    assert main(["learn", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["lessons"]) == len(LESSONS) and not doc["lessons"][0]["passed"]
    kernel = tmp_path / "k.cpp"
    kernel.write_text(get_lesson(9).starter)
    assert main(["learn", "9", "--check", str(kernel)]) == 1
    out = capsys.readouterr().out
    assert "L4.API_SIGNATURE" in out and "Muls(y, x, 3.0, tile_);" in out and "fix:" in out
    kernel.write_text(get_lesson(9).solution)
    assert main(["learn", "9", "--check", str(kernel)]) == 0
    assert "passed" in capsys.readouterr().out
    assert main(["learn", "9", "--hint", "2"]) == 0
    assert "hint 2/3" in capsys.readouterr().out
    assert main(["learn", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["lessons"][8]
    assert (row["passed"], row["attempts"], row["hints_used"]) == (True, 2, 2)
    assert main(["learn", "42"]) == 2
    assert main(["learn", "1", "--check", str(tmp_path / "missing.cpp")]) == 2
