"""The LLM roles end to end with a scripted LLM: replies, repairs, retries, errors, budgets, keys."""

from __future__ import annotations

import re

import pytest

from copilot.agents.llm import AgencySchedule, LLMAgent
from copilot.evolution import (Evaluation, EvolutionEngine, EvolutionSettings, Proposal, ProposalRequest,
                               RoundDecision, Strategy)
from copilot.events import Candidate
from copilot.llm import AuthenticationFailed, Budget, RateLimited
from copilot.tasks import load_task
from tests.fakes.fake_llm import Reply, ScriptedLLM
from tests.test_evolution import ScriptedPolicy

GOOD = '''```cpp
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void scaled_tanh_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {}
// GOOD %s
```'''
COMPILE_ERROR = GOOD.replace("// GOOD", "// COMPILE_ERROR")
WRONG = GOOD.replace("// GOOD", "// WRONG")


class CodeEvaluator:
    """Judges by markers in the code: COMPILE_ERROR fails the build, WRONG fails precision."""

    def __init__(self):
        self.seen = []

    async def evaluate(self, task, c):
        self.seen.append(c.code)
        if "COMPILE_ERROR" in c.code:
            return Evaluation("build_failed", build_ok=False, diagnostics=[
                {"id": "L4.API_SIGNATURE", "severity": "error", "line": 3,
                 "message": "no matching function for call to 'Add(LocalTensor<half>&, float)'"}])
        if "WRONG" in c.code:
            return Evaluation("incorrect", cases=[{"id": "1", "passed": False, "role": "correctness",
                                                   "failure_class": "systematic_drift",
                                                   "message": "every element 3% high"}])
        if "UNTIMED" in c.code:          # passes, but no performance case could be timed
            return Evaluation("passed", cases=[{"id": "1", "passed": True, "role": "correctness"}])
        return Evaluation("passed", time_us=10.0, cases=[{"id": "2", "role": "performance", "est_us": 10.0,
                                                          "bottleneck": "memory", "pipes_us": {"MTE2": 8.0}}])


class Sink:
    def __init__(self):
        self.events = []

    def emit(self, e):
        self.events.append(e)


@pytest.fixture
def task(task_dir):
    return load_task(task_dir)


def request(task, **kw):
    parent = Candidate("r0-base", "// parent kernel\nint p;", 0, "lowering", time_us=20.0, status="passed")
    base = dict(task=task, chip="910B2", round=2, index=1, strategy=Strategy("L3.double-buffering", "db", "use two buffers"),
                parent=parent, parent_tier="top", sibling_strategies=["L3.split-d", "L3.ub-budget"],
                steer="keep rows whole", rejected_strategies=["L3.merge-small-rows"])
    base.update(kw)
    return ProposalRequest(**base)


def agent(llm, schedule=None, sink=None):
    return LLMAgent(llm, CodeEvaluator(), sink=sink, session="t", schedule=schedule or AgencySchedule(),
                    use_lowering=False)


async def test_correct_reply_becomes_a_variant_and_the_prompt_carries_the_context(task):
    llm = ScriptedLLM([GOOD % 1])
    sink = Sink()
    p = await agent(llm, sink=sink).propose(request(task))
    assert p.code and "GOOD 1" in p.code and p.origin == "llm" and p.agency_mode == "single_pass"
    sent = llm.prompts[0]
    assert sent.role == "cake-partial" and sent.phase == "mutation"
    for words in ("use two buffers", "L3.split-d", "L3.ub-budget", "keep rows whole", "L3.merge-small-rows",
                  "// parent kernel", "20.00 us (estimate)"):
        assert words in sent.text
    used = [e for e in sink.events if e.kind == "knowledge_slice_used"]
    assert used and used[0].phase == "mutation" and used[0].total_tokens > 0


async def test_reply_without_code_is_a_recorded_failure(task):
    llm = ScriptedLLM(["You should use double buffering here; it will be faster."])
    p = await agent(llm).propose(request(task))
    assert p.code is None and "no code" in p.failure


async def test_compile_error_is_repaired_on_the_second_try(task):
    llm = ScriptedLLM([COMPILE_ERROR % 1, GOOD % 2])
    p = await agent(llm, AgencySchedule(generation1="single_pass")).baseline(task, "910B2")
    assert p.code and "GOOD 2" in p.code
    repair = llm.prompts[1]
    assert repair.phase == "repair"
    assert "L4.API_SIGNATURE" in repair.text and "no matching function" in repair.text and "line 3" in repair.text


async def test_precision_failure_is_repaired(task):
    llm = ScriptedLLM([WRONG % 1, GOOD % 2])
    p = await agent(llm, AgencySchedule(generation1="single_pass")).baseline(task, "910B2")
    assert "GOOD 2" in p.code
    assert "systematic_drift" in llm.prompts[1].text and "every element 3% high" in llm.prompts[1].text
    assert "wrong results on " + task.case("1").label() in llm.prompts[1].text   # the case, with its shapes


async def test_repairs_are_bounded(task):
    llm = ScriptedLLM([COMPILE_ERROR % i for i in range(10)])
    p = await agent(llm, AgencySchedule(generation1="single_pass", build_repairs=3)).baseline(task, "910B2")
    assert len(llm.prompts) == 4 and "COMPILE_ERROR" in p.code          # 1 try + 3 repairs, then give up


async def test_fix_loop_variant_repairs_before_returning(task):
    llm = ScriptedLLM([WRONG % 1, GOOD % 2])
    p = await agent(llm, AgencySchedule(later="fix_loop")).propose(request(task))
    assert "GOOD 2" in p.code and p.agency_mode == "fix_loop"


async def test_rate_limit_is_retried_then_succeeds(task):
    llm = ScriptedLLM([RateLimited, GOOD % 1])
    p = await agent(llm).propose(request(task))
    assert "GOOD 1" in p.code and len(llm.prompts) == 2
    total = llm.usage.snapshot()["total"]
    assert total["calls"] == 2 and total["failed"] == 1


async def test_tool_agent_uses_its_tools_in_generation_one(task):
    llm = ScriptedLLM([
        "Let me check alignment first.\nTOOL read_card L2.ALIGN_32B\n" + COMPILE_ERROR % 1 + "\nTOOL build",
        "Fixed.\n" + GOOD % 2 + "\nTOOL run_quick_cases\nTOOL show_pipe_profile",
        "DONE",
    ])
    p = await agent(llm).baseline(task, "910B2")
    assert "GOOD 2" in p.code and p.agency_mode == "tool_agent"
    second = llm.prompts[1].messages[-1]["content"]
    assert "[read_card L2.ALIGN_32B]" in second and "[build] FAILED" in second and "L4.API_SIGNATURE" in second
    third = llm.prompts[2].messages[-1]["content"]
    assert "[run_quick_cases] status passed" in third and "bound by memory" in third
    assert task.case("2").label() + " scale=2.0: 10.00 us est." in third      # the profile names the case
    assert "TOOL read_card L4.instruction-costs" in third


async def test_pipe_profile_says_which_run_gives_an_estimate(task):
    untimed = GOOD.replace("// GOOD", "// UNTIMED")
    llm = ScriptedLLM([
        "TOOL show_pipe_profile",
        WRONG % 1 + "\nTOOL run_quick_cases\nTOOL show_pipe_profile",
        untimed % 2 + "\nTOOL run_quick_cases\nTOOL show_pipe_profile",
        "DONE",
    ])
    p = await agent(llm).baseline(task, "910B2")
    assert "UNTIMED 2" in p.code
    before, failed, untimed_run = (llm.prompts[i].messages[-1]["content"] for i in (1, 2, 3))
    assert "nothing evaluated yet" in before and "TOOL run_quick_cases" in before
    assert "did not pass (incorrect)" in failed
    assert "[run_quick_cases] status passed" in untimed_run
    assert "none of its performance cases could be timed" in untimed_run and "stands as generation 1" in untimed_run


async def test_authentication_error_ends_the_session_clearly(task, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnop")
    llm = ScriptedLLM([AuthenticationFailed("the provider refused the key in OPENAI_API_KEY")])
    a = agent(llm)
    a.use_lowering = True
    e = EvolutionEngine(task, _WithBaseline(a), CodeEvaluator(), Sink(), None,
                        EvolutionSettings(rounds=2, variants=1), session="t",
                        strategies=[Strategy("L3.a", "a", "a"), Strategy("L3.b", "b", "b")])
    res = await e.run()
    assert res.status == "failed" and "OPENAI_API_KEY" in res.reason
    assert "sk-test-abcdefghijklmnop" not in res.reason
    assert len(llm.prompts) == 1                                         # not retried


class _WithBaseline:
    """An LLM agent whose baseline is given (as the lowering would), so round 1 calls the LLM."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    async def baseline(self, task, chip):
        return Proposal(code=GOOD % 0, origin="lowering", agency_mode="lowering")

    async def propose(self, req):
        return await self.inner.propose(req)


async def test_budget_cap_stops_mid_round_and_keeps_everything(task):
    llm = ScriptedLLM([Reply(GOOD % i, prompt_tokens=600, completion_tokens=400) for i in range(1, 9)],
                      budget=Budget(max_tokens=2500))
    e = EvolutionEngine(task, _WithBaseline(agent(llm)), CodeEvaluator(), Sink(), None,
                        EvolutionSettings(rounds=3, variants=2), session="t",
                        strategies=[Strategy("L3.a", "a", "a"), Strategy("L3.b", "b", "b")])
    res = await e.run()
    assert res.status == "budget_exhausted" and "2,500" in res.reason
    kept = set(e.population.candidates)
    assert {"r0-base", "r1-c1", "r1-c2"} <= kept and res.best is not None


async def test_api_key_never_reaches_events_or_the_store(task, tmp_path, monkeypatch):
    import json

    from copilot.evolution.session import SessionConfig, new_engine
    from sessions import SessionStore

    key = "sk-test-9f8e7d6c5b4a39281706"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    store = SessionStore(tmp_path / "s.db")
    sink = Sink()
    llm = ScriptedLLM([RateLimited(f"rate limited for key {key}"), GOOD % 1,
                       AuthenticationFailed(f"Incorrect API key provided: {key}")], sink=sink, session="keys")
    cfg = SessionConfig(task=task, agent="scripted", rounds=2, variants=1, name="keys")
    e = new_engine(cfg, [store, sink], agent=_WithBaseline(agent(llm, sink=sink)), evaluator=CodeEvaluator())
    res = await e.run()
    assert res.status == "failed" and key not in res.reason
    for ev in sink.events:
        assert key not in json.dumps(ev.to_json(), default=str)
    store.close()
    for f in tmp_path.glob("s.db*"):
        assert key.encode() not in f.read_bytes(), f.name


class TimedEvaluator(CodeEvaluator):
    """Passes everything; the time is the number after TIME in the code, so ranks are known."""

    async def evaluate(self, task, c):
        import re

        m = re.search(r"TIME (\d+)", c.code)
        return Evaluation("passed", time_us=float(m.group(1)) if m else 50.0, roofline_fraction=0.4)


async def test_three_scripted_rounds_send_tiers_inspirations_and_sibling_directions(task):
    times = iter([30, 20, 10, 40, 25, 15, 35, 45, 12, 22, 28, 38])

    def reply(prompt):
        t = next(times)
        return Reply(GOOD.replace("// GOOD %s", f"constexpr int kTile = {t}; // TIME {t}"))

    llm = ScriptedLLM([reply] * 12)
    strategies = [Strategy(f"L3.s{i}", f"strategy {i}", f"direction {i}") for i in range(1, 5)]
    e = EvolutionEngine(task, _WithBaseline(agent(llm)), TimedEvaluator(), Sink(), None,
                        EvolutionSettings(rounds=3, variants=4, stagnation_rounds=9), session="t",
                        strategies=strategies)
    res = await e.run()
    assert res.status == "finished" and len(res.rounds) == 3
    by_round = {r: [p for p in llm.prompts if p.round == r] for r in (1, 2, 3)}
    assert all(len(v) == 4 for v in by_round.values())
    # round 1: distinct directions, each told the other three
    dirs = [next(f"direction {i}" for i in range(1, 5) if f"## Your direction: L3.s{i}" in p.text) for p in by_round[1]]
    assert len(set(dirs)) == 4
    for p in by_round[1]:
        siblings = p.text.split("## Siblings")[1].split("##")[0]
        assert sum(f"L3.s{i}" in siblings for i in range(1, 5)) == 3
    # later rounds: parents come from the tiers, and inspirations carry code and figures
    for r in (2, 3):
        tiers = {t for p in by_round[r] for t in ("top tier", "middle tier", "bottom tier") if t in p.text}
        assert "top tier" in tiers and len(tiers) >= 2
        for p in by_round[r]:
            assert "## Inspirations" in p.text and "(top tier" in p.text and "us (estimate)" in p.text
            assert "TIME" in p.text.split("## Inspirations")[1]
    assert res.best.time_us == 10.0


TASK_FILES = {
    "proto.yaml": """operator:
  name: ScaledSoftsign
  category: elementwise
  formula: y = scale * x / (1 + |x|)
  attrs: [{name: scale, type: float, default: 1.0, required: false}]
  inputs: [{name: x, dtype: [float16, bfloat16, float32]}]
  outputs: [{name: y, dtype: [float16, bfloat16, float32]}]""",
    "golden.py": """import torch

def scaled_softsign(x, scale=1.0):
    return (scale * x / (1 + x.abs())).to(x.dtype)""",
    "cases.yaml": "cases:\n" + "".join(
        f"- {{case_id: {i}, input_shape: [[{n}]], dtype: [{d}], attrs: {{scale: 2.0}}, value_range: [-3, 3]}}\n"
        for i, (n, d) in enumerate([(1024, "float16"), (1009, "float32"), (4096, "bfloat16"), (65536, "float16"),
                                     (3000, "float32"), (77, "bfloat16"), (2048, "float16"), (128, "float32")], 1)),
    "desc.md": "Softsign scaled by an attribute.",
}


def _files_reply(names):
    return "Here is the task.\n\n" + "\n\n".join(f"{n}\n```\n{TASK_FILES[n]}\n```" for n in names)


async def test_task_is_drafted_from_a_description_and_repaired_once(tmp_path):
    from copilot.agents.taskwriter import draft_task

    llm = ScriptedLLM([_files_reply(["proto.yaml", "golden.py", "desc.md"]), _files_reply(list(TASK_FILES))])
    draft = await draft_task(llm, "softsign of x, times a scale attribute", tmp_path / "softsign")
    assert draft.attempts == 2 and "missing cases.yaml" in draft.notes[0]
    assert "missing cases.yaml" in llm.prompts[1].text
    task = load_task(draft.path)
    assert task.op_name == "ScaledSoftsign" and len(task.cases) == 8 and task.attrs[0].name == "scale"


async def test_a_draft_that_never_validates_is_bad_input(tmp_path):
    from copilot.agents.taskwriter import draft_task
    from copilot.errors import BadInput

    broken = _files_reply(list(TASK_FILES)).replace("def scaled_softsign", "def other_name")
    llm = ScriptedLLM([broken] * 3)
    with pytest.raises(BadInput, match="no golden function"):
        await draft_task(llm, "softsign", tmp_path / "softsign", repairs=2)
    assert not (tmp_path / "softsign").exists() and len(llm.prompts) == 3


async def test_resumed_llm_session_keeps_counting_its_budget(task, tmp_path):
    from copilot.evolution.session import SessionConfig, new_engine, resume_engine
    from sessions import SessionStore

    store = SessionStore(tmp_path / "s.db")
    llm = ScriptedLLM([Reply(GOOD % i, prompt_tokens=600, completion_tokens=400) for i in range(1, 5)],
                      sink=store, session="budgeted")
    cfg = SessionConfig(task=task, agent="scripted", rounds=2, variants=2, name="budgeted")
    e = new_engine(cfg, [store], ScriptedPolicy(RoundDecision(action="stop")), agent=_WithBaseline(agent(llm)),
                   evaluator=CodeEvaluator())
    await e.run()                                              # round 1: 2 calls, 2,000 tokens
    assert store.load_session("budgeted").budget.tokens == 2000
    llm2 = ScriptedLLM([Reply(GOOD % 9)], budget=Budget(max_tokens=1500), sink=store, session="budgeted")
    a2 = _WithBaseline(agent(llm2))
    a2.client = llm2
    e2, _ = resume_engine(store, "budgeted", [store], ScriptedPolicy(), rounds=3, agent=a2, evaluator=CodeEvaluator())
    assert llm2.usage.snapshot()["total"]["tokens"] == 2000
    res = await e2.run()
    assert res.status == "budget_exhausted" and len(llm2.prompts) == 0   # the cap was already spent
    store.close()



def test_run_json_tokens_and_cost_are_the_stores_totals(task, tmp_path, capsys):
    import json

    from copilot.commands.run import execute
    from copilot.evolution.session import SessionConfig, new_engine
    from sessions import SessionStore

    store = SessionStore(tmp_path / "s.db")
    llm = ScriptedLLM([Reply(GOOD % 1, prompt_tokens=700, completion_tokens=300, cost_usd=0.0125),
                       Reply(GOOD % 2, prompt_tokens=900, completion_tokens=450, cost_usd=0.02)],
                      sink=store, session="counted")
    cfg = SessionConfig(task=task, agent="scripted", rounds=1, variants=2, name="counted")
    e = new_engine(cfg, [store], agent=_WithBaseline(agent(llm)), evaluator=CodeEvaluator())
    assert execute(e, cfg, store, None, as_json=True) == 0
    doc = json.loads(capsys.readouterr().out)
    spent = SessionStore(tmp_path / "s.db").load_session("counted").budget
    assert (spent.tokens, spent.llm_calls) == (2350, 2)
    assert doc["tokens"] == spent.tokens
    assert doc["cost_usd"] == pytest.approx(spent.cost_usd) == pytest.approx(0.0325)


FLOAT_PARENT = ("// parent kernel\nLocalTensor<float> xf = calc.Get<float>();\n"
                "Cast(xf, xh, RoundMode::CAST_NONE, n);\nInitBuffer(inQueue, 1, bytes);")


def test_cake_partial_keeps_the_topology_and_may_change_compute():
    from copilot.agents.prompts import ROLE_TEXT

    text = ROLE_TEXT["cake-partial"]
    assert "queues" in text and "stages" in text and "split across cores" in text
    assert "compute" in text and "tiling" in text and "buffering" in text
    assert "Keep the pipeline structure; change tiling, buffering and core split" not in text


async def test_a_direction_the_parent_already_meets_is_replaced_by_the_next(task):
    llm = ScriptedLLM([GOOD % 1])
    parent = Candidate("r1-c2", FLOAT_PARENT, 1, "llm", time_us=20.0, status="passed")
    req = request(task, parent=parent, strategy=Strategy("L3.upcast-fp32", "fp32", "compute in float"))
    p = await agent(llm).propose(req)
    sent = llm.prompts[0].text
    assert "## Your direction: L3.upcast-fp32" not in sent
    taken = sent.split("## Your direction: ")[1].split("\n")[0]
    assert taken not in ("L3.split-d", "L3.ub-budget", "L3.merge-small-rows")   # siblings and rejected
    assert p.strategy == taken and "already casts its tiles to float" in p.notes[0]
    # a 16-bit parent without the cast: the direction stands
    llm2 = ScriptedLLM([GOOD % 2])
    half = Candidate("r1-c3", "// parent kernel\nLocalTensor<half> x;", 1, "llm", time_us=20.0, status="passed")
    p2 = await agent(llm2).propose(request(task, parent=half, strategy=Strategy("L3.upcast-fp32", "fp32", "compute in float")))
    assert "## Your direction: L3.upcast-fp32\ncompute in float" in llm2.prompts[0].text
    assert p2.strategy == "L3.upcast-fp32" and not p2.notes


async def test_the_fix_loop_repair_prompt_names_the_direction(task):
    llm = ScriptedLLM([COMPILE_ERROR % 1, GOOD % 2])
    p = await agent(llm, AgencySchedule(later="fix_loop")).propose(request(task))
    assert "GOOD 2" in p.code
    repair = llm.prompts[1]
    assert repair.phase == "repair"
    assert "## The variant's direction: L3.double-buffering\nuse two buffers" in repair.text
    assert "The variant's direction" not in llm.prompts[0].text


def test_inspirations_are_diffs_against_the_parent_with_figures_and_bottleneck(task):
    from copilot.agents.prompts import variant_prompt
    from copilot.evolution.population import Inspiration

    body = "\n".join(f"  stage_{i}();" for i in range(60))
    parent = Candidate("r1-c2", f"// parent\nconstexpr int kTile = 1024;\n{body}\n", 1, "llm", time_us=30.0,
                       roofline_fraction=0.25, bottleneck="MTE2", status="passed")
    near = parent.code.replace("kTile = 1024", "kTile = 4096")
    far = "// rewritten\n" + "\n".join(f"  fused_{i}();" for i in range(60))
    req = request(task, parent=parent, inspirations=[
        Inspiration("r1-c4", "top", far, 12.0, "estimate", 0.6, "L3.split-d", "V"),
        Inspiration("r1-c1", "middle", near, 20.0, "estimate", 0.4, "L3.ub-budget", "MTE3"),
        Inspiration("r1-c2", "bottom", parent.code, 30.0, "estimate", 0.25, "", "MTE2")])
    text = variant_prompt(req, "(knowledge)")[1]["content"]
    section = text.split("## Inspirations")[1].split("## Output")[0]
    # the close one as a diff: its changed line, not its whole code
    near_part = section.split("### r1-c1")[1].split("###")[0]
    assert "```diff" in near_part and "-constexpr int kTile = 1024;" in near_part
    assert "+constexpr int kTile = 4096;" in near_part and "stage_30" not in near_part
    assert "20.00 us (estimate), 40% of the roofline, bound by MTE3" in near_part
    # the best, far from the parent, in full; the parent itself named, not repeated
    best_part = section.split("### r1-c4")[1].split("###")[0]
    assert "the best so far" in best_part and "```cpp" in best_part and "fused_59();" in best_part
    assert "parent itself" in section.split("### r1-c2")[1] and section.count("stage_30") == 0
    # the parent's code once, with its profile in a few lines
    assert text.count("stage_30();") == 1
    assert "Profile: 30.00 us (estimate)\n- 25% of the roofline\n- bound by MTE2" in text


def test_directions_met_are_read_off_real_lowered_kernels():
    from copilot.agents.directions import already_met
    from copilot.lowering import lower

    t = load_task("sigmoid")                              # float16/float32; the lowering computes in float
    two = Candidate("p2", lower(t).source, 1, "lowering")
    one = Candidate("p1", lower(t, knobs={"buffer_num": 1}).source, 1, "lowering")
    assert "computes in float" in already_met("L3.upcast-fp32", t, two)
    assert "two buffers" in already_met("L3.double-buffering", t, two)
    assert already_met("L3.double-buffering", t, one) is None
    assert already_met("L3.split-d", t, two) is None       # not decidable: taken as given


def test_attr_constants_is_no_speed_direction_for_a_passing_parent(task):
    from copilot.agents.directions import already_met

    passing = Candidate("p", "// kernel", 1, "llm", status="passed", time_us=5.0)
    assert "passes" in already_met("L3.attr-constants", task, passing)          # scaled_tanh: float scale
    failing = Candidate("f", "// kernel", 1, "llm", status="incorrect")
    assert already_met("L3.attr-constants", task, failing) is None
    assert "no float attr" in already_met("L3.attr-constants", load_task("sigmoid"), failing)


def test_rounds_0_runs_generation_1_only(task, tmp_path, capsys):
    import json

    from copilot.commands.run import execute
    from copilot.config import Settings
    from copilot.evolution.session import SessionConfig, new_engine
    from sessions import SessionStore

    assert Settings(rounds=0).rounds == 0
    store = SessionStore(tmp_path / "s.db")
    llm = ScriptedLLM([Reply(GOOD % 1 + "\nDONE", prompt_tokens=800, completion_tokens=200)],
                      sink=store, session="gen1")
    cfg = SessionConfig(task=task, agent="scripted", rounds=0, variants=3, name="gen1")
    e = new_engine(cfg, [store], agent=agent(llm), evaluator=CodeEvaluator())
    assert execute(e, cfg, store, None, as_json=True) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p.role for p in llm.prompts] == ["cake"]                 # the tool agent's one turn, no variant
    assert doc["best"]["id"] == "r0-base" and doc["rounds"] == [] and doc["tokens"] == 1000


def test_read_card_finds_a_card_by_a_near_id_and_lists_the_close_ones_otherwise():
    from copilot.agents.llm import read_card

    assert read_card("L4.Compare", "910B2").startswith("[read_card L4.Compare-Select]\n### [L4.Compare-Select]")
    assert read_card("l4.select", "910B2").startswith("[read_card L4.Compare-Select]")
    assert read_card("L4.TopK", "910B2").startswith("[read_card L4.sort-topk]")
    assert read_card("L4.Scan", "910B2").startswith("[read_card L3.prefix-scan]")   # the word finds the scan card
    miss = read_card("L4.Unknownop", "910B2")
    assert miss.startswith("[read_card L4.Unknownop] no such card; cards of that level:") and "L4.Gather" in miss
    assert "no such card" in read_card("nothing-like-it", "910B2")


async def test_generation_1_lists_the_cards_its_slice_left_out(task):
    llm = ScriptedLLM([GOOD % 1 + "\nDONE"])
    await agent(llm).baseline(task, "910B2")
    sent = llm.prompts[0].text
    more = sent.split("## More cards")[1]
    assert "- L4.Gather: " in more and "- L4.Compare-Select: " in more and "TOOL read_card" in more
    shown = sent.split("## More cards")[0]
    assert all(f"- {cid}: " not in more for cid in re.findall(r"### \[([\w.-]+)\]", shown))


def test_generation_1_shows_the_cards_of_the_goldens_own_operations(tmp_path):
    from copilot.agents.llm import golden_ops, op_cards
    from tests.test_cannbench_intake import _task

    d = _task(tmp_path, """
        operator:
          name: ProbeOp
          inputs: [{name: x, dtype: [float32]}, {name: index, dtype: [int32]}]
          outputs: [{name: y, dtype: [float32]}]
        """, """
        cases:
        - {case_id: 1, input_shape: [[64, 32], [16, 32]], dtype: [float32, int32],
           value_range: [[-1, 1], [0, 63]]}
        """, "import torch\ndef probe_op(x, index):\n    return torch.gather(x, 0, index)\n")
    task = load_task(d)
    assert "gather" in golden_ops(task)
    text = op_cards(task, ["L2.GATHER_OFFSET"], "910B2")
    assert text.startswith("## Cards for the golden's operations (aten.gather -> L4.Gather)")
    assert "### [L4.Gather]" in text and "### [L2.GATHER_OFFSET]" not in text     # shown already: not twice
    scan = load_task(_task(tmp_path, """
        operator:
          name: ScanOp
          inputs: [{name: x, dtype: [int32]}]
          outputs: [{name: values, dtype: [int32]}, {name: indices, dtype: [int64]}]
        """, "cases:\n- {case_id: 1, input_shape: [[8, 16]], dtype: [int32]}\n",
        "import torch\ndef scan_op(x):\n    return torch.cummin(x, -1)\n", name="scan_op"))
    text = op_cards(scan, [], "910B2")          # a scan: the scan strategies, then int32 Compare/Select
    assert text.startswith("## Cards for the golden's operations (aten.cummin -> L3.prefix-scan, "
                           "aten.cummin -> L4.Compare-Select")
    assert "int32 EQ only" in text and "Select` on the index kept as float" in text
    scatter = load_task(_task(tmp_path, """
        operator:
          name: ScatterOp
          inputs: [{name: x, dtype: [float32]}, {name: index, dtype: [int64]}, {name: src, dtype: [float32]}]
          outputs: [{name: y, dtype: [float32]}]
        """, """
        cases:
        - {case_id: 1, input_shape: [[16, 8], [4, 8], [4, 8]], dtype: [float32, int64, float32],
           value_range: [[-1, 1], [0, 15], [-1, 1]]}
        """, "import torch\ndef scatter_op(x, index, src):\n    return torch.scatter_add(x, 0, index, src)\n",
        name="scatter_op"))
    text = op_cards(scatter, [], "910B2")
    assert "aten.scatter_add -> L3.scatter-strategies" in text and "GetUserWorkspace(workspace)" in text
    assert "### [L3.prefix-scan]" in op_cards(scan, ["L4.Compare-Select"], "910B2")
    assert op_cards(load_task(_task(tmp_path, """
        operator:
          name: Plain
          inputs: [{name: x, dtype: [float32]}]
          outputs: [{name: y, dtype: [float32]}]
        """, "cases:\n- {case_id: 1, input_shape: [[64]], dtype: [float32]}\n",
        "import torch\ndef plain(x):\n    return torch.exp(x)\n", name="plain")), [], "910B2") == ""


def test_an_omitted_optional_input_reaches_the_prompt_and_the_router_traces_its_golden(tmp_path):
    from copilot.agents.prompts import task_statement
    from knowledge.router import route_task
    from tests.test_cannbench_intake import _task

    d = _task(tmp_path, """
        operator:
          name: ProbeOp
          inputs: [{name: x, dtype: [float32]}, {name: bias, dtype: [float32], optional: true}]
          outputs: [{name: y, dtype: [float32]}]
        """, """
        cases:
        - {case_id: 1, input_shape: [[64, 32], null], dtype: [float32, float32]}
        """, "import torch\ndef probe_op(x, bias=None):\n"
             "    return torch.softmax(x if bias is None else x + bias, dim=-1)\n")
    task = load_task(d)
    assert "[64,32] x None (omitted) float32" in task_statement(task)
    r = route_task(task)
    assert r.patterns[0] == "softmax" and not r.notes


def test_vector_slices_hold_no_cube_rule_and_a_cube_diagnostic_still_brings_its_card():
    from knowledge import assemble

    cube = {"L2.L0A_CAPACITY", "L2.MMAD_DTYPE", "L2.FIXPIPE_QUANT", "L2.CUBE_POSITION", "L2.BT_CAPACITY"}
    for phase in ("init", "mutation", "tuning"):
        assert not cube & set(assemble("softmax", phase).ids), phase
    assert "L2.MMAD_DTYPE" in assemble("softmax", "repair", diagnostics=[{"id": "L2.MMAD_DTYPE"}]).ids


def test_generation_1_carries_the_optional_and_list_contracts(tmp_path):
    from copilot.agents.prompts import contract
    from tests.test_cannbench_intake import _task

    d = _task(tmp_path, """
        operator:
          name: ProbeOp
          inputs: [{name: x, dtype: [float32], is_list: true}, {name: bias, dtype: [float32], optional: true}]
          outputs: [{name: y, dtype: [float32]}]
          attrs: [{name: p, type: float, default: 2.0}]
        """, "cases:\n- {case_id: 1, input_shape: [[[64, 32], [64, 32]], null], dtype: [float32, float32]}\n",
        "import torch\ndef probe_op(x, bias=None, p=2.0):\n    return torch.stack([t.norm(p) for t in x])\n")
    task = load_task(d)
    text = contract(task)
    assert "Optional input(s) bias: a case may omit one; its GM_ADDR is then nullptr" in text
    assert "Tensor list input(s) x: one GM_ADDR" in text
    assert "same number of elements" in text
    assert "Optional input" not in contract(load_task("sigmoid"))


def test_split_d_and_the_tail_split_are_met_when_the_task_or_parent_shows_it(task):
    from copilot.agents.directions import already_met

    split = Candidate("p", "uint32_t formerNum; uint32_t tailLength;", 1, "llm", status="passed")
    plain = Candidate("q", "uint32_t perCore;", 1, "llm", status="passed")
    assert "former and tail" in already_met("L3.multicore-tail-split", task, split)
    assert already_met("L3.multicore-tail-split", task, plain) is None
    assert "fits in UB" in already_met("L3.split-d", task, plain)       # scaled_tanh: rows of 1021 floats
    assert already_met("L3.split-d", load_task("softmax"), plain) is None


async def test_a_parent_that_is_its_own_only_inspiration_adds_no_section(task):
    from copilot.evolution.population import Inspiration

    parent = Candidate("r0-base", "// parent kernel\nint p;", 0, "lowering", time_us=20.0, status="passed")
    me = Inspiration("r0-base", "top", parent.code, 20.0, "estimate", None, "baseline")
    llm = ScriptedLLM([GOOD % 1])
    await agent(llm).propose(request(task, parent=parent, inspirations=[me]))
    assert "## Inspirations" not in llm.prompts[0].text


def test_the_same_diagnostic_at_many_lines_is_one_line():
    from copilot.agents.prompts import grouped_diagnostics, where

    diags = [{"id": "L2.CORE_TYPE", "message": "InitBuffer of a UB buffer", "line": n} for n in range(10, 22)]
    diags.append({"id": "L2.UB_BOUNDS", "message": "past the end", "line": 40})
    g = grouped_diagnostics(diags)
    assert len(g) == 2 and where(g[0]) == "lines 10, 11, 12, 13, 14, 15, ... (12 places): "
    assert where(g[1]) == "line 40: "


async def test_generation_1_puts_the_operators_own_cards_before_the_pattern_slice(tmp_path):
    from tests.test_cannbench_intake import _task

    scan = load_task(_task(tmp_path, """
        operator:
          name: ScanOp
          inputs: [{name: x, dtype: [float32]}]
          outputs: [{name: values, dtype: [float32]}, {name: indices, dtype: [int64]}]
        """, "cases:\n- {case_id: 1, input_shape: [[8, 16]], dtype: [float32]}\n",
        "import torch\ndef scan_op(x):\n    return torch.cummin(x, 0)\n", name="scan_op"))
    llm = ScriptedLLM([GOOD % 1 + "\nDONE"])
    await agent(llm).baseline(scan, "910B2")
    sent = llm.prompts[0].text
    own, pattern = sent.index("## Cards for the golden's operations"), sent.index("## AscendC knowledge for writing")
    assert own < pattern                                  # the scan's cards come first
    assert sent.count("### [L3.prefix-scan]") == 1 and "- [L3.prefix-scan]" not in sent   # in full, once


def test_cards_reached_through_the_goldens_ops_lead_the_directions_and_stay_out_of_pattern_slices(tmp_path):
    from copilot.evolution.strategies import round_one_strategies
    from knowledge import assemble
    from tests.test_cannbench_intake import _task

    scatter = load_task(_task(tmp_path, """
        operator:
          name: ScatterOp
          inputs: [{name: x, dtype: [float32]}, {name: index, dtype: [int64]}, {name: src, dtype: [float32]}]
          outputs: [{name: y, dtype: [float32]}]
        """, """
        cases:
        - {case_id: 1, input_shape: [[16, 8], [4, 8], [4, 8]], dtype: [float32, int64, float32],
           value_range: [[-1, 1], [0, 15], [-1, 1]]}
        """, "import torch\ndef scatter_op(x, index, src):\n    return torch.scatter_add(x, 0, index, src)\n",
        name="scatter_op"))
    assert round_one_strategies(scatter)[0].id == "L3.scatter-strategies"
    rms = load_task("rms_norm")                           # a reduction: no scan or scatter card anywhere
    assert not {"L3.prefix-scan", "L3.scatter-strategies"} & {s.id for s in round_one_strategies(rms)}
    for phase in ("init", "mutation", "tuning"):
        assert not {"L3.prefix-scan", "L3.scatter-strategies"} & set(assemble(rms, phase, "910B2").ids)


async def test_a_variant_of_an_index_operator_carries_its_operations_cards_and_the_api_contract(tmp_path):
    from tests.test_cannbench_intake import _task

    gather = load_task(_task(tmp_path, """
        operator:
          name: ProbeOp
          inputs: [{name: x, dtype: [float32]}, {name: index, dtype: [int32]}]
          outputs: [{name: y, dtype: [float32]}]
        """, """
        cases:
        - {case_id: 1, input_shape: [[64, 32], [16, 32]], dtype: [float32, int32],
           value_range: [[-1, 1], [0, 63]]}
        """, "import torch\ndef probe_op(x, index):\n    return torch.gather(x, 0, index)\n"))
    llm = ScriptedLLM([GOOD % 1])
    await agent(llm).propose(request(gather))
    sent = llm.prompts[0].text
    assert "## Cards for the golden's operations (aten.gather -> L4.Gather" in sent
    assert "### [L4.Gather]" in sent and "Gather(dst, src, LocalTensor<uint32_t> byteOffsets" in sent
    assert "need no PipeBarrier<PIPE_V>" in sent and "Compares Select, Cast" in sent


def test_prompt_memo_is_per_object_and_bounded():
    """The prompt texts derived from a golden are cached per golden object: a second task with
    the same name and key but another golden (a freed golden's id reused) is computed afresh,
    and the cache keeps at most its size."""
    from copilot.agents.prompts import _TaskMemo

    memo, calls = _TaskMemo(size=2), []

    def compute(v):
        return lambda: calls.append(v) or v

    golden_a, golden_b = object(), object()
    assert memo.get(golden_a, ("relu",), compute("a")) == "a"
    assert memo.get(golden_a, ("relu",), compute("again")) == "a"
    assert memo.get(golden_b, ("relu",), compute("b")) == "b"
    for i in range(5):
        memo.get(golden_a, ("t", i), compute(i))
    assert len(memo.entries) == 2
    assert calls == ["a", "b", 0, 1, 2, 3, 4]
