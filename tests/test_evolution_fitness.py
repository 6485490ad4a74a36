"""The evolution's fitness: the mean HAP over the performance cases where CANN-Bench has baselines for
the task (else the geometric-mean time), and the winner's re-validation before it is reported."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from copilot.evolution import Evaluation, EvolutionEngine, EvolutionSettings, Proposal, Strategy
from copilot.evolution.engine import leaderboard
from copilot.evolution.session import SessionConfig, result_json
from copilot.scoring import Baseline, hap
from copilot.tasks import load_task

REPO = Path(__file__).resolve().parents[1]
CANNBENCH = REPO.parent / "shared" / "cannbench"
STRATEGIES = [Strategy(f"L3.s{i}", f"strategy {i}", f"do thing {i}") for i in range(1, 5)]

# sigmoid's 910B2 baselines for cases 1 and 5 (metadata/910b2.json): (baseline_perf_us, t_hw_us)
B1, B5 = Baseline(5.3, 1.09), Baseline(360.23, 139.81)
FAST_GEOMEAN = {"1": 1.09, "5": 450.0}   # fastest by geometric-mean time
HIGH_HAP = {"1": 5.3, "5": 150.0}        # best by mean HAP


def _cases(times: dict[str, float]) -> list[dict]:
    return [{"id": cid, "role": "performance", "est_us": t, "timing": "estimate"} for cid, t in times.items()]


def _evaluation(times: dict[str, float]) -> Evaluation:
    return Evaluation("passed", time_us=math.sqrt(math.prod(times.values())), cases=_cases(times))


class Agent:
    name = "fake"

    async def baseline(self, task, chip):
        return Proposal(code="// base\nint b;", origin="lowering", agency_mode="lowering")

    async def propose(self, req):
        return Proposal(code=f"// r{req.round}-c{req.index}\nint k{req.index};", origin="offline")


class Evaluator:
    """r1-c1 is the fastest by geometric mean, r1-c2 the best by HAP; `confirm` fails `refuse`."""

    def __init__(self, refuse: set[str] = frozenset()):
        self.refuse = set(refuse)
        self.confirmed: list[str] = []

    async def evaluate(self, task, c):
        table = {"r0-base": {"1": 5.3, "5": 360.23}, "r1-c1": FAST_GEOMEAN, "r1-c2": HIGH_HAP}
        if c.id not in table:
            return Evaluation("incorrect", diagnostics=[{"id": "PREC.systematic_drift"}])
        return _evaluation(table[c.id])

    def confirm(self, task, c):
        self.confirmed.append(c.id)
        if c.id in self.refuse:
            return Evaluation("incorrect", cases=[{"id": "7", "role": "correctness", "passed": False,
                                                   "message": "fresh inputs: 12 elements off"}],
                              diagnostics=[{"id": "EVO.REVALIDATION", "severity": "error",
                                            "message": "the winner failed its re-validation on case 7"}])
        return Evaluation("passed")


class Sink:
    def __init__(self):
        self.events = []

    def emit(self, e):
        self.events.append(e)


@pytest.fixture
def sigmoid():
    path = CANNBENCH / "tasks" / "level1" / "sigmoid"
    if not (path / "proto.yaml").exists() or not (CANNBENCH / "tasks" / "metadata" / "910b2.json").exists():
        pytest.skip(f"CANN-Bench is not beside the repository ({CANNBENCH})")
    return load_task(path)


def _engine(task, evaluator=None):
    s = EvolutionSettings(rounds=1, variants=4, stagnation_rounds=9)
    return EvolutionEngine(task, Agent(), evaluator or Evaluator(), Sink(), settings=s, session="t",
                           strategies=STRATEGIES)


def test_the_two_orders_differ_on_these_figures():
    geo = {k: math.sqrt(math.prod(v.values())) for k, v in (("fast", FAST_GEOMEAN), ("hap", HIGH_HAP))}
    mean_hap = {k: (hap(v["1"], B1) + hap(v["5"], B5)) / 2 for k, v in (("fast", FAST_GEOMEAN), ("hap", HIGH_HAP))}
    assert geo["fast"] < geo["hap"] and mean_hap["hap"] > mean_hap["fast"]


async def test_with_baselines_the_best_is_the_one_with_the_highest_mean_hap(sigmoid):
    e = _engine(sigmoid)
    res = await e.run()
    assert res.best.id == "r1-c2"
    assert res.best_hap == pytest.approx((hap(5.3, B1) + hap(150.0, B5)) / 2)
    assert res.speedup_vs_vendor == pytest.approx(math.sqrt((5.3 / 5.3) * (360.23 / 150.0)))
    board = leaderboard(e.population, e.baseline)
    assert [r["id"] for r in board[:3]] == ["r1-c2", "r1-c1", "r0-base"]
    assert board[0]["hap"] == pytest.approx(res.best_hap)
    doc = result_json(e, res, SessionConfig(task=sigmoid))
    assert doc["best"]["hap"] == pytest.approx(res.best_hap)
    assert doc["best"]["speedup_vs_vendor"] == pytest.approx(res.speedup_vs_vendor)
    assert doc["best"]["timing"] == "estimate"


async def test_without_baselines_the_best_is_the_fastest_geometric_mean(task_dir):
    task = load_task(task_dir)
    e = _engine(task)
    res = await e.run()
    assert res.best.id == "r1-c1" and res.best_hap is None and res.speedup_vs_vendor is None
    assert result_json(e, res, SessionConfig(task=task))["best"]["hap"] is None


async def test_a_winner_that_fails_its_revalidation_is_demoted_with_its_reason(sigmoid):
    ev = Evaluator(refuse={"r1-c2"})
    e = _engine(sigmoid, ev)
    sink = e.sink
    res = await e.run()
    assert ev.confirmed[:2] == ["r1-c2", "r1-c1"]
    assert res.best.id == "r1-c1"
    demoted = e.population.get("r1-c2")
    assert demoted.status == "incorrect"
    last = [x for x in sink.events if x.kind == "candidate_evaluated" and x.candidate_id == "r1-c2"][-1]
    assert last.diagnostics[0]["id"] == "EVO.REVALIDATION" and "case 7" in last.diagnostics[0]["message"]


# --- the sim evaluator's re-validation --------------------------------------------------------

SMALL_CASES = """cases:
- {case_id: 1, input_shape: [[64]], dtype: [float32], attrs: {scale: 0.5}, value_range: [-4, 4]}
- {case_id: 2, input_shape: [[1031]], dtype: [float32], attrs: {scale: 2.0}, value_range: [-3, 3]}
"""


@pytest.fixture
def small_task(task_dir):
    (task_dir / "cases.yaml").write_text(SMALL_CASES)
    return load_task(task_dir)


def test_a_winner_that_no_longer_builds_is_demoted_even_when_the_cascade_judged_every_case(small_task, tmp_path):
    from copilot.events import Candidate
    from copilot.evolution.evaluate import SimEvaluator

    ev = SimEvaluator(workdir=tmp_path / "cands", perf="all")     # the cascade judges every case
    out = ev.confirm(small_task, Candidate("r1-c1", "int not_a_kernel;\n", 1, "offline"))
    assert out.status == "build_failed" and not out.build_ok
    assert out.diagnostics[0]["id"] == "EVO.REVALIDATION" and "no longer builds" in out.diagnostics[0]["message"]


def test_the_winner_is_judged_on_fresh_inputs_on_every_case(small_task, tmp_path, monkeypatch):
    import copilot.oracle as oracle
    from copilot.events import Candidate
    from copilot.evolution.evaluate import REVALIDATION_SEED, SimEvaluator
    from copilot.lowering import lower

    seeds = []
    real = oracle.make_inputs

    def recording(task, case, seed=0, fresh=False):
        seeds.append((case.id, seed))
        return real(task, case, seed, fresh)

    monkeypatch.setattr(oracle, "make_inputs", recording)
    ev = SimEvaluator(workdir=tmp_path / "cands", perf="2", seed=3)
    cand = Candidate("r1-c1", lower(small_task).source, 1, "offline")
    out = ev.confirm(small_task, cand)
    assert out.status == "passed", out.diagnostics[:2]
    assert sorted(seeds) == [("1", 3 + REVALIDATION_SEED), ("2", 3 + REVALIDATION_SEED)]
    assert [(c["id"], c["role"]) for c in out.cases] == [("1", "correctness"), ("2", "performance")]
    assert out.cases[0]["passed"] is True and out.cases[1]["judged"] == "full"
