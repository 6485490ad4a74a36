"""Performance cases without a time. A case the task cannot time on this machine (unique's case 6:
its output length is data-dependent, so its shapes need the golden, which is over the oracle
budget) is left out of every candidate's fitness, with a row saying why; a case the kernel cannot
be timed on leaves the kernel passed but unranked, with a diagnostic saying so."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from copilot.events import Candidate
from copilot.evolution import Evaluation, EvolutionEngine, EvolutionSettings, Strategy
from copilot.evolution.engine import leaderboard
from copilot.evolution.population import perf_coverage
from copilot.evolution.session import SessionConfig, result_json
from copilot.tasks import load_task
from tests.test_evolution_fitness import Agent, Sink

REPO = Path(__file__).resolve().parents[1]

# y = tanh(x * scale) through a boolean index: the same values, but the golden no longer runs on
# meta tensors (the index's length depends on the data), so an output shape needs a real golden run.
GOLDEN = '''import torch


def scaled_tanh(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    kept = x[x == x]                 # every element of a NaN-free input; data-dependent on meta
    return torch.tanh(kept.reshape(x.shape) * scale).to(x.dtype)
'''
CASES = """cases:
- {case_id: 1, input_shape: [[64]], dtype: [float32], attrs: {scale: 0.5}, value_range: [-4, 4]}
- {case_id: 2, input_shape: [[1031]], dtype: [float32], attrs: {scale: 2.0}, value_range: [-3, 3]}
- {case_id: 3, input_shape: [[4099, 4097]], dtype: [float32], attrs: {scale: 1.0}, value_range: [-2, 2]}
"""


@pytest.fixture
def data_dependent(task_dir):
    """scaled_tanh with a data-dependent golden and a case (3) whose golden is over a tiny budget."""
    (task_dir / "golden.py").write_text(GOLDEN)
    (task_dir / "cases.yaml").write_text(CASES)
    return load_task(task_dir)


@pytest.fixture
def kernels(tmp_path):
    """Two different correct kernels of scaled_tanh (the lowering, and the same with another
    tile size), lowered from the plain task: the kernel does not see the golden."""
    from copilot.lowering import lower

    plain = tmp_path / "plain"
    shutil.copytree(REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh", plain)
    task = load_task(plain)
    a = lower(task).source
    b = a + "\n// the same kernel, another candidate\nconstexpr int kSecondCandidate = 1;\n"
    return a, b


def _budget_between(task, monkeypatch):
    """An oracle budget (0.1 GiB) that fits cases 1 and 2 and 3's quick twin, not case 3 (~0.45 GiB)."""
    from copilot.oracle import estimate_bytes

    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "0.1")
    assert estimate_bytes(task.case("3")) > 0.3 * 2**30


def test_a_passing_candidate_gets_a_time_from_the_cases_the_task_can_time(data_dependent, kernels, tmp_path,
                                                                          monkeypatch):
    from copilot.costmodel import geomean
    from copilot.evolution.evaluate import SimEvaluator

    _budget_between(data_dependent, monkeypatch)
    ev = SimEvaluator(workdir=tmp_path / "cands", perf="all")
    out = ev.evaluate_sync(data_dependent, Candidate("r1-c1", kernels[0], 1, "offline"))
    assert out.status == "passed", out.diagnostics[:3]
    perf = {c["id"]: c for c in out.cases if c["role"] == "performance"}
    assert sorted(perf) == ["1", "2", "3"]
    assert perf["1"]["est_us"] > 0 and perf["2"]["est_us"] > 0
    assert perf["3"]["est_us"] is None and perf["3"]["untimed_by"] == "task"
    assert perf["3"]["not_timed"].startswith("not timed: ")
    assert "its output shape needs the golden" in perf["3"]["not_timed"] and "budget" in perf["3"]["not_timed"]
    assert out.time_us == pytest.approx(geomean([perf["1"]["est_us"], perf["2"]["est_us"]]))
    assert out.timing == "estimate"
    assert out.perf_timed == (2, 3)
    assert not any(d["id"] == "EVO.UNTIMED" for d in out.diagnostics)

    best = ev.confirm(data_dependent, Candidate("r1-c1", kernels[0], 1, "offline"))   # the winner's re-run
    assert best.status == "passed" and best.time_us and best.perf_timed == (2, 3)
    assert [c["id"] for c in best.cases if c.get("untimed_by") == "task"] == ["3"]


def test_two_candidates_are_ranked_on_the_same_cases_even_if_the_budget_changes(data_dependent, kernels, tmp_path,
                                                                                monkeypatch):
    """The task's untimeable cases are decided at its first evaluation: a second candidate is not
    timed on a case the first could not be (its fitness would not be comparable)."""
    from copilot.evolution.evaluate import SimEvaluator

    _budget_between(data_dependent, monkeypatch)
    ev = SimEvaluator(workdir=tmp_path / "cands", perf="all")
    first = ev.evaluate_sync(data_dependent, Candidate("r1-c1", kernels[0], 1, "offline"))
    monkeypatch.setenv("CANNPILOT_ORACLE_BUDGET_GB", "2")     # case 3's golden would fit now
    second = ev.evaluate_sync(data_dependent, Candidate("r1-c2", kernels[1], 1, "offline"))
    assert first.status == second.status == "passed"

    def timed(ev_):
        return sorted(c["id"] for c in ev_.cases if c["role"] == "performance" and c["est_us"])

    assert timed(first) == timed(second) == ["1", "2"]
    assert first.perf_timed == second.perf_timed == (2, 3)


def test_a_kernel_the_cost_model_cannot_time_passes_unranked_and_says_why(task_dir, tmp_path, monkeypatch):
    import copilot.backends.sim.integrity as integrity
    from copilot.evolution.evaluate import SimEvaluator
    from copilot.lowering import lower

    (task_dir / "cases.yaml").write_text(CASES)
    task = load_task(task_dir)
    real = integrity.timed_case

    def no_estimate(build, task, case, *a, **k):
        t = real(build, task, case, *a, **k)
        return t if case.id != "2" else type(t)(t.passed, t.message, None, t.diagnostics, t.crashed, t.full)

    monkeypatch.setattr(integrity, "timed_case", no_estimate)
    ev = SimEvaluator(workdir=tmp_path / "cands", perf="all")
    out = ev.evaluate_sync(task, Candidate("r1-c1", lower(task).source, 1, "offline"))
    assert out.status == "passed" and out.time_us is None
    rows = {c["id"]: c for c in out.cases if c["role"] == "performance"}
    assert rows["1"]["est_us"] > 0
    assert rows["2"]["untimed_by"] == "kernel" and "cost model cannot time" in rows["2"]["not_timed"]
    assert rows["3"]["untimed_by"] == "kernel" and rows["3"]["not_timed"].startswith("not run: case 2")
    assert out.perf_timed == (1, 3)
    d = next(d for d in out.diagnostics if d["id"] == "EVO.UNTIMED")
    assert d["message"] == ("performance case 2: the kernel ran an instruction the cost model cannot time; "
                            "the candidate passed but is not ranked")


# --- what a user sees: the leaderboard, `run --json`, `sessions show`, report.md ---------------

def _cases(times: dict[str, float | None]) -> list[dict]:
    return [{"id": cid, "role": "performance", "est_us": t, "timing": "estimate"} if t else
            {"id": cid, "role": "performance", "est_us": None, "timing": "estimate", "untimed_by": "task",
             "not_timed": "not timed: its output shape needs the golden, which needs ~6.2 GiB, over the oracle "
                          "budget of 2.0 GiB"} for cid, t in times.items()]


class Evaluator:
    TABLE = {"r0-base": {"4": 800.0, "6": None, "10": 300.0}, "r1-c1": {"4": 658.7, "6": None, "10": 289.3}}

    async def evaluate(self, task, c):
        times = self.TABLE.get(c.id)
        if times is None:
            return Evaluation("incorrect")
        timed = [t for t in times.values() if t]
        return Evaluation("passed", time_us=math.exp(sum(map(math.log, timed)) / len(timed)), cases=_cases(times))


def test_perf_coverage_counts_the_timed_performance_rows():
    assert perf_coverage(_cases({"4": 658.7, "6": None, "10": 289.3})) == (2, 3)
    assert perf_coverage([{"id": "1", "role": "correctness", "passed": True}]) is None


async def test_the_leaderboard_and_run_json_say_how_many_performance_cases_were_timed(task_dir, tmp_path):
    task = load_task(task_dir)
    e = EvolutionEngine(task, Agent(), Evaluator(), Sink(), session="t",
                        settings=EvolutionSettings(rounds=1, variants=2, stagnation_rounds=9),
                        strategies=[Strategy(f"L3.s{i}", f"s{i}", f"d{i}") for i in (1, 2)])
    res = await e.run()
    assert res.best.id == "r1-c1"
    board = leaderboard(e.population, e.baseline, e.cases)
    assert board[0]["id"] == "r1-c1" and board[0]["perf_timed"] == [2, 3]
    doc = result_json(e, res, SessionConfig(task=task))
    assert doc["best"]["time_us"] == pytest.approx(math.sqrt(658.7 * 289.3))
    assert doc["best"]["perf_cases_timed"] == {"timed": 2, "of": 3}
    assert doc["best"]["not_timed"] == [{"id": "6", "reason": _cases({"6": None})[0]["not_timed"]}]


async def test_sessions_show_and_the_report_say_which_cases_were_not_timed(task_dir, tmp_path, cli, monkeypatch):
    import json

    from copilot.events import SessionStarted
    from sessions import SessionStore
    from sessions.export import export_session

    task = load_task(task_dir)
    path = tmp_path / "sessions.sqlite"
    with SessionStore(path) as store:
        store.emit(SessionStarted("u", task=task.name, chip="910B2", backend="sim", agent="fake", settings={},
                                  task_path=str(task.path)))
        e = EvolutionEngine(task, Agent(), Evaluator(), store, session="u",
                            settings=EvolutionSettings(rounds=1, variants=2, stagnation_rounds=9),
                            strategies=[Strategy(f"L3.s{i}", f"s{i}", f"d{i}") for i in (1, 2)])
        await e.run()
        export_session(store, "u", tmp_path / "out")
    monkeypatch.setenv("CANNPILOT_STORE", str(path))
    code, out, _ = cli("sessions", "show", "u", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["best"]["id"] == "r1-c1"
    assert doc["best"]["perf_cases_timed"] == {"timed": 2, "of": 3}
    assert [(c["id"], c["perf_timed"]) for c in doc["leaderboard"]] == [("r1-c1", [2, 3]), ("r0-base", [2, 3])]
    monkeypatch.setenv("COLUMNS", "200")         # the table's cells on one line
    code, out, _ = cli("sessions", "show", "u")
    assert code == 0 and "perf cases" in out and "2 of 3" in out
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| perf cases timed |" in report and "| 2 of 3 |" in report
    assert "Its time is over 2 of 3 performance cases" in report
    assert "- case 6: its output shape needs the golden, which needs ~6.2 GiB" in report


def test_the_progress_line_and_the_agents_feedback_say_why_a_case_has_no_time(capsys):
    from copilot.agents.llm import case_results
    from copilot.commands.run import _Progress
    from copilot.events import CandidateEvaluated

    cases = _cases({"4": 658.7, "6": None, "10": 289.3})
    _Progress().emit(CandidateEvaluated("s", candidate_id="r1-c1", status="passed", cases=cases,
                                        time_us=436.5, timing="estimate"))
    unranked = [cases[0], {"id": "6", "role": "performance", "est_us": None, "untimed_by": "kernel",
                           "not_timed": "not timed: the kernel ran an instruction the cost model cannot time"}]
    _Progress().emit(CandidateEvaluated("s", candidate_id="r1-c2", status="passed", cases=unranked))
    err = capsys.readouterr().err.splitlines()
    assert err == ["  r1-c1: passed 436.50 us (estimate) over 2 of 3 performance cases",
                   "  r1-c2: passed, not ranked (not timed: the kernel ran an instruction the cost model cannot time)"]
    text = case_results(Evaluation("passed", cases=cases))
    line = next(x for x in text.splitlines() if x.startswith("case 6"))
    assert line.startswith("case 6 (performance case): not timed: its output shape needs the golden, which needs "
                           "~6.2 GiB, over the oracle budget of 2.0 GiB")


def test_a_data_dependent_golden_runs_once_per_case_not_once_per_candidate(data_dependent, kernels, tmp_path,
                                                                           monkeypatch):
    """Output shapes (and the dtypes the builds need) of a golden that does not run on meta tensors
    take a real golden run: the evaluator keeps them, so a second candidate runs none."""
    import copilot.costmodel.estimate as estimate
    from copilot.evolution.evaluate import SimEvaluator

    _budget_between(data_dependent, monkeypatch)
    calls = []
    real = estimate.output_shapes

    def counting(task, case):
        calls.append(case.id)
        return real(task, case)

    monkeypatch.setattr(estimate, "output_shapes", counting)
    ev = SimEvaluator(workdir=tmp_path / "cands", perf="all")
    ev.evaluate_sync(data_dependent, Candidate("r1-c1", kernels[0], 1, "offline"))
    first = len(calls)
    second = ev.evaluate_sync(data_dependent, Candidate("r1-c2", kernels[1], 1, "offline"))
    assert second.status == "passed" and first > 0 and len(calls) == first


def test_the_review_screen_says_a_time_is_over_only_some_cases():
    from rich.console import Console

    from copilot.events import CandidateEvaluated, CandidateProposed, RoundFinished
    from tui.model import BoardModel
    from tui.screens.review import round_summary

    m = BoardModel()
    for cid, times in (("r1-c1", {"4": 658.7, "6": None, "10": 289.3}), ("r1-c2", {"4": 700.0, "10": 300.0})):
        m.apply(CandidateProposed("s", candidate=Candidate(cid, f"// {cid}", 1, "offline")))
        timed = [t for t in times.values() if t]
        m.apply(CandidateEvaluated("s", candidate_id=cid, status="passed", cases=_cases(times),
                                   time_us=math.exp(sum(map(math.log, timed)) / len(timed))))
    m.apply(RoundFinished("s", round=1, candidates=2, passed=2, best_id="r1-c1"))
    con = Console(width=160, record=True)
    con.print(round_summary(m, 1, 0, ""))
    lines = con.export_text().splitlines()
    assert any(x.startswith("Best so far: r1-c1 436.5 µs est. (2 of 3 cases)") for x in lines)
    assert any(x.startswith("r1-c1") and "436.5 µs est. (2 of 3 cases)" in x for x in lines)
    assert any(x.startswith("r1-c2") and "458.3 µs est." in x and "cases)" not in x for x in lines)


class TwoWorkers(Evaluator):
    """As if two worker processes had decided apart: r0-base's timed case 6, r1-c1's could not."""

    TABLE = {"r0-base": {"4": 800.0, "6": 5000.0, "10": 300.0}, "r1-c1": {"4": 658.7, "6": None, "10": 289.3}}


async def test_a_case_one_worker_left_out_for_the_task_is_left_out_of_every_candidates_time(task_dir):
    task = load_task(task_dir)
    sink = Sink()
    e = EvolutionEngine(task, Agent(), TwoWorkers(), sink, session="t",
                        settings=EvolutionSettings(rounds=1, variants=2, stagnation_rounds=9),
                        strategies=[Strategy(f"L3.s{i}", f"s{i}", f"d{i}") for i in (1, 2)])
    await e.run()
    base = e.population.get("r0-base")
    assert base.time_us == pytest.approx(math.sqrt(800.0 * 300.0))      # case 6 left out afterwards
    row6 = next(x for x in e.cases["r0-base"] if x["id"] == "6")
    assert row6["est_us"] is None and row6["untimed_by"] == "task" and "6.2 GiB" in row6["not_timed"]
    board = {r["id"]: r for r in leaderboard(e.population, e.baseline, e.cases)}
    assert board["r0-base"]["perf_timed"] == board["r1-c1"]["perf_timed"] == [2, 3]
    again = [x for x in sink.events if x.kind == "candidate_evaluated" and x.candidate_id == "r0-base"]
    assert [round(x.time_us, 2) for x in again] == [round((800.0 * 5000.0 * 300.0) ** (1 / 3), 2),
                                                    round(math.sqrt(800.0 * 300.0), 2)]
