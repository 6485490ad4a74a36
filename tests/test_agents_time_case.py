"""The tool agent's `time_case`: a kernel with several code paths (unique: a counting path for
integers, a sort path for floats) sees each path's estimate, not only the performance tier's, and
run_quick_cases names the dtypes no timed case has."""

from __future__ import annotations

from copilot.agents.llm import LLMAgent
from copilot.evolution import Evaluation
from copilot.tasks import load_task
from tests.fakes.fake_llm import ScriptedLLM

KERNEL = '```cpp\nextern "C" __global__ __aicore__ void scaled_tanh_custom(GM_ADDR x) {}\n```'


class PerfTierEvaluator:
    """Passes; times its performance cases (`perf`, case ids) at 10 us per case number."""

    def __init__(self, perf: str = "2"):
        self.perf, self.seen = perf, []

    async def evaluate(self, task, c):
        self.seen.append(self.perf)
        return Evaluation("passed", time_us=10.0, cases=[
            {"id": cid, "role": "performance", "est_us": 10.0 * int(cid), "block_dim": 8, "bottleneck": "vector",
             "t_hw_us": 2.5 * int(cid), "judged": "sampled blocks"} for cid in self.perf.split(",")])

    def with_perf(self, ids: str):
        return PerfTierEvaluator(ids)


async def test_time_case_times_the_cases_asked_for_and_quick_cases_names_the_untimed_dtypes(task_dir):
    task = load_task(task_dir)      # scaled_tanh: float16 (cases 1, 4), float32 (2, 5), bfloat16 (3)
    llm = ScriptedLLM([KERNEL + "\nTOOL run_quick_cases", "TOOL time_case 3, 1", "TOOL time_case 9", "DONE"])
    agent = LLMAgent(llm, PerfTierEvaluator(), session="t", use_lowering=False)
    await agent.baseline(task, "910B2")
    quick, timed, unknown = (llm.prompts[i].messages[-1]["content"] for i in (1, 2, 3))
    assert "[other dtypes] no timed case has float16 (smallest: case 1), bfloat16 (smallest: case 3)" in quick
    assert "TOOL time_case <ID>" in quick
    lines = timed.split("\n\n")[0].splitlines()
    assert lines[0] == "[time_case] (cost-model estimates, not part of the fitness)"
    assert lines[1].startswith(task.case("3").label() + " scale=1.0 (x: 1 in 20 elements +-inf")
    assert lines[1].endswith(": 30.00 us est., on 8 cores, bound by vector, roofline 7.50 us (25% of it)")
    assert lines[2].startswith(task.case("1").label() + " scale=0.5: 10.00 us est.")
    assert "[time_case] no case 9: TOOL time_case <ID>[,ID], ids of the task's cases (1 to 5)" in unknown
    assert set(agent.evaluator.seen) == {"2"}       # the session's evaluator kept its own tier


async def test_time_case_on_the_emulator_judges_then_times_a_case_outside_the_performance_tier(task_dir, tmp_path):
    """The real evaluator: the lowering's kernel for scaled_tanh, timed on case 3 (bfloat16, which
    none of the performance cases 1, 2, 4 has)."""
    from copilot.evolution.evaluate import SimEvaluator
    from copilot.lowering import lower

    task = load_task(task_dir)
    code = "```cpp\n" + lower(task).source + "\n```"
    llm = ScriptedLLM([code + "\nTOOL time_case 3", "DONE"])
    agent = LLMAgent(llm, SimEvaluator(workdir=tmp_path / "cands"), session="t", use_lowering=False)
    await agent.baseline(task, "910B2")
    reply = llm.prompts[1].messages[-1]["content"].split("\n\n")[0].splitlines()
    assert reply[0] == "[time_case] (cost-model estimates, not part of the fitness)" and len(reply) == 2
    assert reply[1].startswith(task.case("3").label()) and " us est., on " in reply[1]


async def test_time_case_on_a_ray_cluster_asks_the_workers_for_the_cases_tier(task_dir):
    """A RayEvaluator session: the tier travels with each task sent to the workers (no cluster here:
    the evaluator's remote task is a recorder)."""
    from copilot.evolution.ray_pool import RayEvaluator

    sent = []

    class Remote:
        def remote(self, ref, candidate, chip, perf, seed, *rest):
            sent.append(perf)
            return PerfTierEvaluator("2" if perf == "perf" else perf).evaluate(None, candidate)

    cluster = object.__new__(RayEvaluator)          # as __init__ leaves it, without ray.init
    cluster.chip, cluster.seed, cluster.perf, cluster._task = "910B2", 0, "perf", Remote()
    task = load_task(task_dir)
    llm = ScriptedLLM([KERNEL + "\nTOOL time_case 3", "DONE"])
    await LLMAgent(llm, cluster, session="t", use_lowering=False).baseline(task, "910B2")
    assert sent == ["3", "perf"] and cluster.perf == "perf"     # time_case, then generation 1's own check
    assert llm.prompts[1].messages[-1]["content"].startswith("[time_case] (cost-model estimates")


class StopsAtFailureEvaluator(PerfTierEvaluator):
    """Times its cases in order and stops at case 3, whose timed run fails (as SimEvaluator does)."""

    async def evaluate(self, task, c):
        rows = []
        for cid in self.perf.split(","):
            if cid == "3":
                rows.append({"id": cid, "role": "performance", "passed": False,
                             "message": "run error (RUN.TIMEOUT): the run did not finish"})
                return Evaluation("crashed", cases=rows)
            rows.append({"id": cid, "role": "performance", "est_us": 10.0 * int(cid), "block_dim": 8,
                         "bottleneck": "vector", "t_hw_us": 2.5 * int(cid), "judged": "sampled blocks"})
        return Evaluation("passed", time_us=10.0, cases=rows)

    def with_perf(self, ids: str):
        return StopsAtFailureEvaluator(ids)


async def test_time_case_says_which_cases_were_not_run_after_a_failing_one(task_dir):
    task = load_task(task_dir)
    llm = ScriptedLLM([KERNEL + "\nTOOL time_case 2,3,5", "DONE"])
    await LLMAgent(llm, StopsAtFailureEvaluator(), session="t", use_lowering=False).baseline(task, "910B2")
    lines = llm.prompts[1].messages[-1]["content"].split("\n\n")[0].splitlines()
    assert lines[0].startswith("[time_case] " + task.case("2").label()) and "20.00 us est." in lines[0]
    assert lines[1].startswith(task.case("3").label()) and ": FAIL run error (RUN.TIMEOUT)" in lines[1]
    assert lines[2].startswith(task.case("5").label())
    assert lines[2].endswith(": not run (the timing stops at the first failing case, case 3)")
