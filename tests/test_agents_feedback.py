"""What the agents tell the model about an evaluation: every case that ran (a failing performance
case too, with how it was judged), each estimate explained, and kernels that work across blocks
judged on a full run rather than on sampled blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from copilot.agents import prompts
from copilot.agents.llm import LLMAgent, case_results, explain_estimate
from copilot.evolution import Evaluation
from copilot.tasks import load_task
from tests.fakes.fake_llm import ScriptedLLM

REPO = Path(__file__).resolve().parents[1]
CANNBENCH = REPO.parent / "shared" / "cannbench"

PERF_ROW = {"id": "4", "role": "performance", "est_us": 31200.0, "bottleneck": "memory", "block_dim": 40,
            "pipes_us": {"MTE2": 30100.0, "V": 2000.0, "S": 500.0, "MTE3": 0.0}, "hbm_us": 12000.0,
            "t_hw_us": 1200.0, "judged": "sampled blocks",
            "vector_counts": {"Add.b32": [10, 100], "Exp.b32": [10, 100], "Gather.b32": [5, 4000]}}


def _incorrect_on_a_performance_case() -> Evaluation:
    return Evaluation("incorrect", cases=[
        {"id": "1", "role": "correctness", "passed": True, "message": "pass: MERE 0"},
        {"id": "2q", "role": "correctness", "passed": True, "message": "pass: MERE 0"},
        {"id": "6", "role": "performance", "passed": False, "judged": "sampled blocks",
         "message": "1048576 of 2949120 elements differ (exact); first at (3, 7): got 5, expected 9"}])


def test_case_results_name_a_failing_performance_case_with_its_first_mismatch():
    text = case_results(_incorrect_on_a_performance_case(), lambda cid: f"case {cid}: 8192x4096 int32")
    lines = text.splitlines()
    assert lines[0].startswith("case 1: 8192x4096 int32: pass")
    fail = next(x for x in lines if x.startswith("case 6"))
    assert "(performance case, judged on sampled blocks): FAIL" in fail
    assert "first at (3, 7): got 5, expected 9" in fail
    assert "later cases did not run" in lines[-1]


def test_a_timed_case_that_was_judged_reads_pass_and_one_over_the_oracle_budget_not_judged():
    ev = Evaluation("passed", cases=[dict(PERF_ROW), dict(PERF_ROW, id="6", judged=False)])
    lines = case_results(ev).splitlines()
    assert "(performance case, judged on sampled blocks): pass — 31200.00 us est." in lines[0]
    assert "(performance case, not judged: no oracle fits): not judged — 31200.00 us est." in lines[1]
    assert "this run does not check this case's values" not in lines[0]
    assert lines[1].endswith("a run with a larger budget checks them, so the kernel must be right on it too)")


def test_a_case_whose_golden_ran_out_of_memory_is_said_to_be_checked_by_a_run_with_a_larger_budget():
    """roi_align's 16q (auto sampling: the fallback's temporaries span the map) under a 2 GiB budget:
    the tool result says its values are not checked here but will be, not just '~0.0 GiB'."""
    row = {"id": "16q", "role": "correctness", "passed": None, "failure_class": "too_large",
           "message": "golden.py: the golden ran out of memory: ...; not judged"}
    line = case_results(Evaluation("passed", cases=[row]))
    assert line.startswith("case 16q: not judged golden.py: the golden ran out of memory")
    assert "this run does not check this case's values: its golden needs more memory than the run's oracle " \
           "budget; a run with a larger budget checks them" in line


def test_a_status_without_a_failing_case_says_the_diagnostics_decide():
    ev = Evaluation("incorrect", cases=[{"id": "1", "role": "correctness", "passed": True, "message": "pass"}],
                    diagnostics=[{"id": "L2.SYNC_MISSING", "severity": "error", "line": 9, "message": "x"}])
    assert "no listed case failed its values; the diagnostics below decide" in case_results(ev)


def test_an_estimate_is_explained_by_cores_pipes_bound_roofline_and_instructions():
    text = explain_estimate(PERF_ROW)
    assert text.startswith("31200.00 us est.") and "on 40 cores" in text
    assert "MTE2 30100.0, V 2000.0, S 500.0" in text and "MTE3" not in text   # busiest first, idle left out
    assert "HBM share 12000.0" in text and "bound by memory" in text and "roofline 1200.00 us (4% of it; the inputs read" in text
    # the costliest vector work first (repeats x the model's weight), at most four kinds
    assert text.index("Gather.b32 5 instr / 4000 repeats") < text.index("Exp.b32") < text.index("Add.b32")
    assert "Gather.b32 5 instr / 4000 repeats x weight 2," in text     # its cycles per repeat, to rank savings


async def test_the_tool_and_the_repair_prompt_list_the_failing_performance_case(task_dir):
    task = load_task(task_dir)

    class Ev:
        async def evaluate(self, task, c):
            return _incorrect_on_a_performance_case()

    code = '```cpp\nextern "C" __global__ __aicore__ void scaled_tanh_custom(GM_ADDR x) {}\n```'
    fixed = code.replace("{}", "{ }")
    llm = ScriptedLLM([code + "\nTOOL run_quick_cases", "DONE", fixed, fixed])
    agent = LLMAgent(llm, Ev(), session="t", use_lowering=False)
    await agent.baseline(task, "910B2")
    tool = llm.prompts[1].messages[-1]["content"]
    assert "[run_quick_cases] status incorrect" in tool
    assert "(performance case, judged on sampled blocks): FAIL 1048576 of 2949120" in tool
    repair = llm.prompts[2].messages[-1]["content"]
    assert "## Case results (every case that ran)" in repair and "got 5, expected 9" in repair
    assert "wrong results on" in repair and "(performance case, judged on sampled blocks)" in repair


def test_repair_prompt_without_results_has_no_results_section(task_dir):
    msgs = prompts.repair_prompt(load_task(task_dir), "int k;", [], "build failed", "K")
    assert "## Case results" not in msgs[-1]["content"]


def test_cross_block_calls_are_found_in_code_not_in_comments(tmp_path):
    from copilot.backends.base import Build
    from copilot.backends.sim.integrity import crosses_blocks

    def build(src):
        p = tmp_path / f"k{abs(hash(src))}.cpp"
        p.write_text(src)
        return Build(True, [], source_path=p)

    assert not crosses_blocks(build("// every core ends with SyncAll() in the two-stage variant\nint x;"))
    assert crosses_blocks(build("void f() { AscendC::SyncAll(); }"))
    assert crosses_blocks(build("void f() { SetAtomicAdd<float>(); }"))
    assert not crosses_blocks(Build(True, []))


def test_a_scatter_that_syncs_its_cores_is_judged_on_a_full_run():
    """A relay session's scatter kernel (copy, SyncAll, scatter): on sampled blocks the copies of
    the blocks that ran miss the scatters of those that did not, so its values look wrong; every
    block run gives the golden's."""
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    from copilot.backends import sim
    from copilot.backends.sim import integrity
    from copilot.costmodel.estimate import output_shapes
    from copilot.oracle import make_inputs, reference

    task = load_task(CANNBENCH / "tasks" / "level2" / "scatter")
    case = task.case("9")                   # 1537x769 float32, reduce add, 48 blocks
    src = REPO / "bench" / "results" / "llm" / "h-scatter" / "gen1.cpp"
    b = sim.build(src, task, list(case.dtypes) + [o.dtype for o in output_shapes(task, case)], "910B2")
    assert b.ok
    inputs = make_inputs(task, case, 0)
    ref = reference(task, case, inputs)
    t = integrity.timed_case(b, task, case, "910B2", inputs, ref)
    assert t.full and t.passed and t.estimate is not None, t.message
    sampled = integrity.judge_sampled  # the sampled judge on the same kernel fails it
    run = sim.run(b, task, case, inputs, outputs=ref.outputs, chip="910B2", sample_blocks=True)
    ok, msg, _ = sampled(task, ref, run.outputs, inputs, case, run)
    assert not ok and "normal region" in msg


def test_the_instruction_cost_card_states_the_models_910b2_figures():
    """The card's numbers are the cost model's: a fitted weight or parameter that changes must
    change the card too."""
    import re as _re

    from copilot.costmodel import API_WEIGHTS, cost_params
    from knowledge.cards import card_index

    text = " ".join(card_index()["L4.instruction-costs"].render("full").split())
    p = cost_params("910B2")
    assert f"{p.vector_issue_cycles:.4f}" in text and f"{p.launch_us:.1f} us launch" in text
    assert f"{p.dma_latency_us} us latency" in text and f"{p.core_dma_gbps:.0f} GB/s per engine" in text
    assert f"{p.hbm_gbps:.0f} GB/s sustained" in text and f"{p.scalar_issue_cycles:.0f} cycles" in text
    for api, w in p.weights.items():                        # every fitted weight, as fitted
        assert f"{api} {w:g}" in text, api
    raw = card_index()["L4.instruction-costs"].render("full")
    for line in raw.splitlines():                           # "- <weight>: Api, Api, ..."
        m = _re.match(r"- ([\d.]+): (.*)$", line)
        if m:
            for name in m.group(2).split(", "):
                assert API_WEIGHTS[name] == float(m.group(1)), name


def test_the_instruction_cost_card_reaches_first_kernels_and_variants_of_every_pattern():
    from knowledge import assemble
    from knowledge.cards import PATTERNS

    for pattern in PATTERNS:
        for phase in ("init", "mutation"):
            assert "L4.instruction-costs" in [c.id for c in assemble(pattern, phase).cards], (pattern, phase)
    assert "L4.instruction-costs" not in [c.id for c in assemble("elementwise", "tuning").cards]


def test_generation_one_gets_the_protos_opdef_with_optional_inputs_and_every_combination():
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    moe = load_task(CANNBENCH / "tasks" / "level3" / "moe_gating_top_k_softmax")
    text = prompts.generation_prompt(moe, "K")[-1]["content"]
    reg = text[text.index("## Registration"):]
    assert 'this->Input("finished")\n            .ParamType(OPTIONAL)' in reg
    assert "OP_ADD(MoeGatingTopKSoftmaxCustom);" in reg
    gather = prompts.registration(load_task(CANNBENCH / "tasks" / "level2" / "gather"))
    x = gather[gather.index('Input("x")'):gather.index('Input("index")')]
    assert x.count("ge::DT_") == 18          # 6 x 3 dtype columns, not six padded by repetition


def test_a_direction_that_cannot_cut_the_parents_bound_is_replaced_by_one_that_can(task_dir):
    from copilot.agents.directions import CUTS, effective_request
    from copilot.evolution import ProposalRequest, Strategy
    from copilot.events import Candidate

    task = load_task(task_dir)
    strategies = [Strategy("L3.gm-512b-alignment", "a", "align GM"), Strategy("L3.upcast-fp32", "u", "fp32"),
                  Strategy("L3.reduction-strategies", "r", "reduce better"), Strategy("L3.ub-budget", "b", "bigger tiles")]

    def req(strategy, bound, siblings=()):
        parent = Candidate("r1-c1", "LocalTensor<half> x;", 1, "llm", time_us=20.0, status="passed",
                           bottleneck=bound)
        return ProposalRequest(task=task, chip="910B2", round=2, index=1, strategy=strategy, parent=parent,
                               parent_tier="top", sibling_strategies=list(siblings))

    # vector-bound: GM alignment cuts copies only; the next direction that cuts vector time is taken
    out, note = effective_request(req(strategies[0], "vector"), strategies)
    assert out.strategy.id == "L3.reduction-strategies"
    assert "bound by vector, which L3.gm-512b-alignment does not cut" in note
    # a sibling's direction is not taken twice
    out, _ = effective_request(req(strategies[0], "vector", ["L3.reduction-strategies"]), strategies)
    assert out.strategy.id == "L3.ub-budget"
    # memory-bound: the alignment stands; no profile: every direction stands
    assert effective_request(req(strategies[0], "memory"), strategies) == (req(strategies[0], "memory"), "")
    assert effective_request(req(strategies[2], None), strategies)[1] == ""
    assert "L3.upcast-fp32" in CUTS and not CUTS["L3.upcast-fp32"]     # a precision recipe cuts no bound


def test_the_variant_prompt_names_the_bound_its_direction_should_cut(task_dir):
    from copilot.evolution import ProposalRequest, Strategy
    from copilot.events import Candidate

    task = load_task(task_dir)
    parent = Candidate("r1-c1", "int k;", 1, "llm", time_us=20.0, status="passed", bottleneck="scalar")
    req = ProposalRequest(task=task, chip="910B2", round=2, index=1, parent=parent, parent_tier="top",
                          strategy=Strategy("L3.merge-small-rows", "m", "merge rows"))
    text = prompts.variant_prompt(req, "K")[-1]["content"]
    assert "## Your direction: L3.merge-small-rows\nmerge rows\nThe parent is bound by scalar" in text


def test_the_contract_gives_the_vector_kernel_type_and_counts_getvalue_as_named(task_dir):
    text = prompts.contract(load_task(task_dir))
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY)" in text and "never a MIX type" in text
    assert "GetValue/SetValue of a LocalTensor or GlobalTensor count as" in text


def test_the_sample_shapes_carry_their_attrs(task_dir):
    task = load_task(task_dir)
    c = task.cases[0]
    text = prompts.task_statement(task)
    assert all(f"{k}={v}" in text for k, v in c.attrs.items()) and c.attrs


def test_the_statement_gives_the_golden_s_output_dtypes_even_where_they_depend_on_the_values(task_dir):
    """moe_re_routing's counts come back int64 from the golden's `.sum` (the proto says "same dtype as
    the input"); unique without return_inverse returns y only: the model is told both up front."""
    task = load_task(task_dir)
    c = task.cases[0]
    shape = "[" + ",".join(map(str, c.shapes[0])) + "]"
    assert f"The golden's outputs (judged in these dtypes" in (text := prompts.task_statement(task))
    assert f"case {c.id}: y {shape} {c.dtypes[0]}" in text
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    moe = prompts.task_statement(load_task(CANNBENCH / "tasks" / "level3" / "moe_re_routing"))
    assert "expert_token_num int64 (shapes depend on the values)" in moe
    unique = prompts.task_statement(load_task(CANNBENCH / "tasks" / "level3" / "unique"))
    assert "case 1: y float16 (shapes depend on the values) (inverse not returned by the golden: not judged; its GM_ADDR may be nullptr, so never write it)" in unique
    assert "case 2: y float32, inverse int64 (shapes depend on the values);" in unique
    assert "[8192,8192] int32 return_inverse=True (x in [-10000, 10000])" in unique    # the key range


def test_an_attr_that_may_be_none_is_said_to_arrive_as_nullptr():
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    text = prompts.contract(load_task(CANNBENCH / "tasks" / "level2" / "scatter"))
    assert "Attr(s) reduce may be None in a case" in text and "returns nullptr" in text
    assert "may be None" not in prompts.contract(load_task(CANNBENCH / "tasks" / "level2" / "gather"))


async def test_each_tool_result_says_what_is_left_of_the_budget(task_dir):
    from copilot.agents.llm import AgencySchedule
    from tests.test_agents import CodeEvaluator

    task = load_task(task_dir)
    code = '```cpp\nextern "C" __global__ __aicore__ void scaled_tanh_custom(GM_ADDR x) {}\n// GOOD\n```'
    llm = ScriptedLLM([code + "\nTOOL build", "TOOL run_quick_cases", "DONE"])
    agent = LLMAgent(llm, CodeEvaluator(), session="t", use_lowering=False,
                     schedule=AgencySchedule(max_tool_turns=5))
    await agent.baseline(task, "910B2")
    assert "Budget: at most 5 turns and 400,000 tokens" in llm.prompts[0].messages[-1]["content"]
    first, second = (llm.prompts[i].messages[-1]["content"] for i in (1, 2))
    assert "[budget] turn 1 of at most 5;" in first and "[budget] turn 2 of at most 5;" in second
    assert "of 400,000 tokens used" in first and "more turn(s)" in first


async def test_a_lowered_kernel_that_fails_hands_generation_one_to_the_model(task_dir, monkeypatch):
    from copilot.agents.offline import OfflineAgent
    from copilot.evolution import Proposal
    from tests.test_agents import GOOD, WRONG, CodeEvaluator

    async def lowered(self, task, chip):
        return Proposal(code=WRONG % 0, origin="lowering")

    monkeypatch.setattr(OfflineAgent, "baseline", lowered)
    task = load_task(task_dir)
    llm = ScriptedLLM([GOOD % 1])
    p = await LLMAgent(llm, CodeEvaluator(), session="t").baseline(task, "910B2")
    assert "GOOD 1" in p.code and p.origin == "llm"
    assert "the lowering's kernel was incorrect" in p.notes[0] and "systematic_drift" in p.notes[0]

    async def lowered_ok(self, task, chip):
        return Proposal(code=GOOD % 0, origin="lowering")

    monkeypatch.setattr(OfflineAgent, "baseline", lowered_ok)
    llm2 = ScriptedLLM([])
    p2 = await LLMAgent(llm2, CodeEvaluator(), session="t").baseline(task, "910B2")
    assert p2.origin == "lowering" and not llm2.prompts


async def test_a_later_failing_kernel_does_not_replace_the_last_passing_one(task_dir):
    from tests.test_agents import GOOD, WRONG, CodeEvaluator

    task = load_task(task_dir)
    llm = ScriptedLLM([GOOD % 1 + "\nTOOL run_quick_cases", WRONG % 2 + "\nFaster now. DONE"])
    p = await LLMAgent(llm, CodeEvaluator(), session="t", use_lowering=False).baseline(task, "910B2")
    assert "GOOD 1" in p.code and len(llm.prompts) == 2                 # no repair of the failing one
    assert any("the last kernel that passed run_quick_cases stands" in n for n in p.notes)
    assert "the last kernel that passed run_quick_cases stands" in llm.prompts[0].messages[-1]["content"]


async def test_older_tool_turns_are_compacted_and_an_edit_reply_gets_its_kernel_back(task_dir):
    from tests.test_agents import GOOD, WRONG, CodeEvaluator

    task = load_task(task_dir)
    edit = "<<<<<<< SEARCH\n// WRONG 1\n=======\n// GOOD 2\n>>>>>>> REPLACE\nTOOL run_quick_cases"
    llm = ScriptedLLM([WRONG % 1 + "\nTOOL run_quick_cases", edit, "DONE"])
    p = await LLMAgent(llm, CodeEvaluator(), session="t", use_lowering=False).baseline(task, "910B2")
    assert "GOOD 2" in p.code
    second, third = llm.prompts[1].messages, llm.prompts[2].messages
    assert "// WRONG 1" in second[-2]["content"]                        # the newest turn is whole
    assert "[run_quick_cases] status incorrect" in second[-1]["content"]
    assert "every element 3% high" in second[-1]["content"]
    old_reply, old_result = third[2]["content"], third[3]["content"]
    assert "// WRONG 1" not in old_reply and "[kernel of this turn: superseded]" in old_reply
    assert old_result.startswith("[compacted] [run_quick_cases] status incorrect")
    assert "FAIL" in old_result and "(performance case" not in old_result
    assert third[0] == second[0] and third[1] == second[1]              # the task prompt stays whole
    latest = third[-1]["content"]                                       # an edit-only reply: its kernel in full
    assert "[latest kernel] yours after your edits" in latest and "// GOOD 2" in latest


def test_list_attrs_are_said_to_arrive_as_typed_vectors_and_none_keeps_the_indices():
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    text = prompts.contract(load_task(CANNBENCH / "tasks" / "level2" / "resize_bilinear"))
    assert "List attr(s) output_size (list_int), scale_factor (list_float)" in text
    assert "TypedContinuousVector<int64_t>" in text and "GetListFloat(i)" in text
    assert "Attr(s) output_size, scale_factor may be None" in text and "keep their indices" in text
    assert "List attr" not in prompts.contract(load_task(CANNBENCH / "tasks" / "level2" / "gather"))


def test_resampling_and_pooling_goldens_bring_the_index_rules_card(monkeypatch):
    import copilot.agents.llm as llm_mod
    from knowledge import assemble
    from knowledge.cards import card_index

    card = card_index()["L3.interpolation-index-rules"]
    assert card.ops and not card.fits_pattern(["elementwise"])          # reached through ops only
    for op in ("upsample_bilinear2d", "grid_sampler_3d", "_adaptive_avg_pool3d"):
        monkeypatch.setattr(llm_mod, "golden_ops", lambda task, op=op: [op])
        text = llm_mod.op_cards(None, [], "910B2")
        assert f"aten.{op} -> L3.interpolation-index-rules" in text and "floor(i * In / Out)" in text
    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["add", "mul"])
    assert "L3.interpolation-index-rules" not in llm_mod.op_cards(None, [], "910B2")
    task = load_task(REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh")
    assert "L3.interpolation-index-rules" not in [c.id for c in assemble(task, "init", chip="910B2").cards]


def test_resize_bilinear_traces_to_the_index_rules_card():
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    from copilot.agents.llm import op_cards

    text = op_cards(load_task(CANNBENCH / "tasks" / "level2" / "resize_bilinear"), [], "910B2")
    assert "aten.upsample_bilinear2d -> L3.interpolation-index-rules" in text


@pytest.mark.skipif(__import__("shutil").which("g++") is None, reason="g++ is required")
def test_a_none_list_attr_keeps_the_index_of_the_attrs_after_it(tmp_path):
    """Case 1 has size=None before flag=True: flag must still be attr 1 (it read as nullptr when the
    None attr was dropped and flag moved to slot 0)."""
    from copilot.backends.sim import check_kernel

    task = load_task(REPO / "tests" / "fixtures" / "tasks" / "none_list_attr")
    report = check_kernel(REPO / "tests" / "kernels" / "attrs" / "none_list_attr.cpp", task, chip="910B2", cases="all")
    assert report.compiled and report.correct, [(c.id, c.message[:200]) for c in report.cases if not c.passed]
    assert len(report.cases) == 2


async def test_siblings_whose_directions_are_met_are_not_all_replaced_by_the_same_card(task_dir, monkeypatch):
    """Gather's round 1: three directions the parent met were each replaced by L3.load-balance."""
    import asyncio

    import copilot.agents.directions as directions
    from copilot.evolution import ProposalRequest, Strategy
    from copilot.events import Candidate
    from tests.test_agents import GOOD, CodeEvaluator

    task = load_task(task_dir)
    met = {"L3.split-d", "L3.multicore-tail-split", "L3.double-buffering"}
    monkeypatch.setattr(directions, "already_met",
                        lambda sid, task, parent: "met by the parent" if sid in met else None)
    order = [Strategy(i, i, i) for i in ("L3.split-d", "L3.multicore-tail-split", "L3.double-buffering",
                                          "L3.load-balance", "L3.ub-budget", "L3.row-tiling")]
    monkeypatch.setattr(directions, "round_one_strategies", lambda task: order)
    parent = Candidate("r0-base", "// parent", 0, "llm", time_us=20.0, status="passed")
    asked = order[:3]
    reqs = [ProposalRequest(task=task, chip="910B2", round=1, index=i + 1, strategy=s, parent=parent,
                            parent_tier="baseline", sibling_strategies=[o.id for o in asked if o is not s])
            for i, s in enumerate(asked)]
    llm = ScriptedLLM([GOOD % i for i in range(3)])
    a = LLMAgent(llm, CodeEvaluator(), session="t", use_lowering=False)
    props = await asyncio.gather(*(a.propose(q) for q in reqs))
    taken = [p.strategy for p in props]
    assert taken == ["L3.load-balance", "L3.ub-budget", "L3.row-tiling"]
    assert all("replaced by" in p.notes[0] for p in props)
    # the next round starts afresh
    again = await LLMAgent(ScriptedLLM([GOOD % 9]), CodeEvaluator(), session="t",
                           use_lowering=False).propose(reqs[0])
    assert again.strategy == "L3.load-balance"


def test_later_rounds_do_not_draw_a_parent_that_its_own_child_already_beats():
    from copilot.evolution import Population
    from copilot.events import Candidate

    pop = Population()
    pop.add(Candidate("r0-base", "int a;", 0, "llm", status="passed", time_us=20.0))
    pop.add(Candidate("r1-c1", "int b;", 1, "llm", status="passed", time_us=10.0, parent_ids=["r0-base"]))
    pop.add(Candidate("r1-c2", "int c;", 1, "llm", status="passed", time_us=15.0, parent_ids=["r0-base"]))
    pop.add(Candidate("r1-c3", "int d;", 1, "llm", status="incorrect", parent_ids=["r0-base"]))
    assert pop.superseded() == {"r0-base"}
    drawn = {c.id for _ in range(20) for c, _ in pop.sample_parents(3)}
    assert drawn == {"r1-c1", "r1-c2"}
    # a child that is slower does not make its parent stale; with nothing else passing it is drawn
    alone = Population()
    alone.add(Candidate("r0-base", "int a;", 0, "llm", status="passed", time_us=20.0))
    alone.add(Candidate("r1-c1", "int b;", 1, "llm", status="passed", time_us=30.0, parent_ids=["r0-base"]))
    assert alone.superseded() == set() and "r0-base" in {c.id for c, _ in alone.sample_parents(3)}


def test_a_timed_case_says_what_its_hbm_share_means():
    from copilot.costmodel import cost_params

    text = explain_estimate(PERF_ROW)
    assert "its HBM share 12000.0 (its bytes at its share of the HBM bandwidth" in text
    assert "more cores do not copy faster" in text
    p = cost_params("910B2")
    assert f"at HBM's peak {p.hbm_peak_gbps:.0f} GB/s" in text
    assert f"sustained {p.hbm_gbps:.0f} GB/s is at {p.hbm_gbps / p.hbm_peak_gbps:.0%} of a memory roofline" in text
    # 31200 us est. on 32600 us of busy pipes: about 4% overlap (the launch is taken off first)
    assert "the slowest core runs 31196.7 us" in text and "for 32600.0 us of pipe busy time: its pipes overlap 4%" in text


def test_pooling_goldens_bring_gather_and_the_index_ramp_cards(monkeypatch):
    import copilot.agents.llm as llm_mod

    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["_adaptive_avg_pool3d"])
    text = llm_mod.op_cards(None, [], "910B2")
    for cid in ("L3.interpolation-index-rules", "L4.Gather", "L2.GATHER_OFFSET", "L4.Fill-Index", "L4.Cast"):
        assert f"aten._adaptive_avg_pool3d -> {cid}" in text
    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["permute", "constant_pad_nd", "im2col", "amax"])
    assert "aten.im2col -> L4.repeat-params" in llm_mod.op_cards(None, [], "910B2")   # dilation_2d's stencil
    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["select", "maximum", "sort", "_local_scalar_dense"])
    nms = llm_mod.op_cards(None, [], "910B2")
    assert "aten.sort -> L4.Gather" in nms and "aten.sort -> L4.Atomic-SyncAll" in nms


def test_weighted_sums_bring_the_fused_arithmetic_card(monkeypatch):
    """Axpy's signature and dtype pairs (asked for on roi_align): reached through the golden's ops only."""
    import copilot.agents.llm as llm_mod
    from knowledge import assemble

    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["index", "mul", "sum", "roi_align"])
    text = llm_mod.op_cards(None, [], "910B2")
    assert "aten.roi_align -> L3.roi-align" in text and "aten.roi_align -> L4.compound-arith" in text
    assert "Axpy<T, U>(LocalTensor<T> dst, LocalTensor<U> src, const U& scalarValue" in text
    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["addcmul"])
    assert "aten.addcmul -> L4.compound-arith" in llm_mod.op_cards(None, [], "910B2")
    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["exp"])
    assert "L4.compound-arith" not in llm_mod.op_cards(None, [], "910B2")
    assert "L4.compound-arith" not in assemble(["fusion"], "init").ids     # not by pattern


def test_the_statement_says_how_outputs_are_judged_and_the_registration_why_optional_attrs_are_required():
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    task = load_task(CANNBENCH / "tasks" / "level2" / "resize_bilinear")
    assert "widened to float64, within the output dtype's tolerance" in prompts.task_statement(task)
    reg = prompts.registration(task)
    assert "output_size, scale_factor: declared REQUIRED only because the proto gives no default" in reg
    assert "GetOutputShape(i)->GetStorageShape()" in prompts.contract(task)
    pool = load_task(CANNBENCH / "tasks" / "level3" / "adaptive_avg_pool_3d")   # required: no note
    assert "declared REQUIRED only because" not in prompts.registration(pool)


def test_a_case_label_says_which_input_carries_inf_or_nan_and_such_tasks_get_the_nan_card(monkeypatch):
    import copilot.agents.llm as llm_mod
    from copilot.agents.llm import special_inputs

    task = load_task(REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh")
    assert special_inputs(task, task.case("3")) == " (x: 1 in 20 elements +-inf, the rest in [-100, 100])"
    assert special_inputs(task, task.case("5")) == " (x: 1 in 8 elements NaN, the rest in [-1, 1])"
    assert special_inputs(task, task.case("1")) == ""
    monkeypatch.setattr(llm_mod, "golden_ops", lambda task: ["tanh"])
    assert "inf/nan inputs -> L4.nan-inf-semantics" in llm_mod.op_cards(task, [], "910B2")
    assert "L4.nan-inf-semantics" not in llm_mod.op_cards(task, ["L4.nan-inf-semantics"], "910B2")


async def test_the_tool_results_name_the_special_values_of_a_case(task_dir):
    from tests.test_agents import CodeEvaluator, WRONG

    task = load_task(REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh")

    class InfCaseFails(CodeEvaluator):
        async def evaluate(self, task, c):
            return Evaluation("incorrect", cases=[{"id": "3", "passed": False, "role": "correctness",
                                                   "failure_class": "nan_inf_mismatch", "message": "x"}])

    llm = ScriptedLLM([WRONG % 1 + "\nTOOL run_quick_cases", "DONE"])
    agent = LLMAgent(llm, InfCaseFails(), session="t", use_lowering=False,
                     schedule=__import__("copilot.agents.llm", fromlist=["AgencySchedule"]).AgencySchedule(
                         precision_repairs=0))
    await agent.baseline(task, "910B2")
    assert "(x: 1 in 20 elements +-inf, the rest in [-100, 100]): FAIL" in llm.prompts[1].messages[-1]["content"]


def test_the_statement_says_which_optional_dependency_the_golden_runs_with():
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    import importlib.util

    text = prompts.task_statement(load_task(CANNBENCH / "tasks" / "level3" / "roi_align"))
    has = importlib.util.find_spec("torchvision") is not None
    assert f"The golden runs with HAS_TORCHVISION = {has}" in text
    assert "The golden runs with" not in prompts.task_statement(load_task(CANNBENCH / "tasks" / "level2" / "gather"))


def test_a_performance_case_whose_output_shape_needs_an_oversized_golden_is_left_untimed(monkeypatch, tmp_path):
    """unique's case 6: its output length is data-dependent, so its shapes need the golden itself,
    which is over the oracle budget: the case goes untimed instead of failing the session."""
    import copilot.costmodel.estimate as estimate
    from copilot.evolution.evaluate import SimEvaluator, Untimed
    from copilot.oracle import CaseTooLarge

    def too_large(task, case):
        raise CaseTooLarge(f"{task.name} case {case.id}: the oracle needs ~6.2 GiB, over the budget")

    monkeypatch.setattr(estimate, "output_shapes", too_large)
    task = load_task(REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh")
    ev = SimEvaluator(workdir=tmp_path)
    untimed = ev._time_case(task, task.case("4"), {}, tmp_path / "k.cpp")
    assert isinstance(untimed, Untimed) and untimed.task        # the task's reason: left out for everyone
    assert untimed.reason == "not timed: scaled_tanh case 4: the oracle needs ~6.2 GiB, over the budget"


def test_output_dtypes_of_a_case_whose_golden_does_not_fit_come_from_its_twin(monkeypatch):
    """unique's case 6 ended two sessions at the build of every dtype combination."""
    import copilot.costmodel.estimate as estimate
    from copilot.oracle import CaseTooLarge

    task = load_task(REPO / "tests" / "fixtures" / "tasks" / "scaled_tanh")
    real = estimate.output_shapes

    def shapes(task, case):
        if not case.is_quick:
            raise CaseTooLarge(f"{task.name} case {case.id}: over the budget")
        return real(task, case)

    monkeypatch.setattr(estimate, "output_shapes", shapes)
    big = task.case("4")
    assert not big.is_quick and estimate.output_dtypes(task, big) == ("float16",)


def test_run_timeout_says_what_ran_out_and_that_it_is_the_emulators_time():
    from copilot.backends.sim.runner import RUN_HINTS, _run_failures, wall_timeout
    from knowledge.cards import get_card

    wall = wall_timeout(216.5)
    assert wall.id == "RUN.TIMEOUT" and "216.5 s of wall clock" in wall.message
    assert "per input and output element" in wall.message
    cpu = _run_failures({"blocks": [(3, "signal", 24), (7, "signal", 24)]}, set(), 30, True)
    assert [d.id for d in cpu] == ["RUN.TIMEOUT"] and "30 s of CPU time" in cpu[0].message
    assert "2 blocks (3, 7)" in cpu[0].message
    for text in (RUN_HINTS["RUN.TIMEOUT"], get_card("RUN.TIMEOUT").body):
        assert "not the chip" in text and "GetValue" in text


def test_the_profile_states_the_cores_copy_rate_and_the_cases_hbm_floor_as_the_card_does():
    from copilot.costmodel import cost_params
    from knowledge.cards import card_index

    p = cost_params("910B2")
    row = dict(PERF_ROW, block_dim=48, memory_us=100.0)
    text = explain_estimate(row)
    share = p.hbm_gbps / 48
    assert f"= {share:.1f} GB/s per core, below one core's {p.core_dma_gbps:.0f} GB/s copy engine" in text
    assert "idle ones included" in text
    floor = 100.0 * p.hbm_peak_gbps / p.hbm_gbps            # the roofline's memory term is at the peak
    assert f"HBM floor {floor:.1f} us" in text and f"sustained {p.hbm_gbps:.0f} GB/s" in text
    few = explain_estimate(dict(PERF_ROW, block_dim=8))
    assert f"above one core's {p.core_dma_gbps:.0f} GB/s copy engine, so a core copies at " \
           f"{p.core_dma_gbps:.1f} GB/s at most" in few and "HBM floor" not in few
    card = " ".join(card_index()["L4.instruction-costs"].render("full").split())
    assert f"{p.hbm_gbps:.0f} GB/s / blockDim" in card and "HBM floor" in card and "idle ones" in card
    assert f"{share:.1f} GB/s at 48 cores" in card


def test_compiler_errors_are_listed_before_the_rule_findings_they_cause():
    from copilot.agents.prompts import grouped_diagnostics

    diags = [{"id": "L4.OPDEF_MISSING", "severity": "error", "line": 0, "message": "no OpDef"},
             {"id": "CPP.COMPILE", "severity": "error", "line": 88, "message": "expected declaration before '}'"},
             {"id": "CPP.COMPILE", "severity": "error", "line": 90, "message": "'outQ_' does not name a type"},
             {"id": "L2.UB_CAPACITY", "severity": "error", "line": 12, "message": "UB over"}]
    assert [(d["id"], d["lines"]) for d in grouped_diagnostics(diags)] == [
        ("CPP.COMPILE", [88]), ("CPP.COMPILE", [90]), ("L4.OPDEF_MISSING", []), ("L2.UB_CAPACITY", [12])]


def test_the_statement_states_the_ranges_of_the_inputs_the_kernel_gets_after_get_input():
    """roi_align's cases declare boxes in [-1, 1]; its get_input rebuilds them as batch indices and
    pixel coordinates inside the map, and both the golden and the kernel get those. The statement
    gives the rebuilt tensor's min and max (x, passed through as generated, keeps its declared range)."""
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    from copilot.oracle.inputs import make_inputs

    task = load_task(CANNBENCH / "tasks" / "level3" / "roi_align")
    text = prompts.task_statement(task)
    assert "boxes in [-1, 1]" not in text
    for case in task.cases[:6]:
        x, boxes = make_inputs(task, case)
        lo, hi = float(boxes.min()), float(boxes.max())
        assert hi > 10
        lo_x, hi_x = case.value_ranges[0]
        assert (f"(x in [{lo_x:g}, {hi_x:g}], boxes in [{lo:g}, {hi:g}] (rebuilt by the golden file's get_input))"
                in text)


def test_the_statement_announces_the_inf_and_nan_cases_the_quick_tier_runs():
    """roi_align's sample shapes are six plain cases, but the quick tier runs 13q (+-inf in x) and 14
    (NaN in x); the relay's model lost 0 * NaN by skipping zero-weight corners. The statement names
    them and their values up front; a task without such cases says nothing."""
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    text = prompts.task_statement(load_task(CANNBENCH / "tasks" / "level3" / "roi_align"))
    assert "Cases with inf/NaN inputs (the quick correctness cases include 14, 13q): " \
           "cases 13, 13q (x: 1 in 20 elements +-inf, the rest in [-100, 100]); " \
           "case 14 (x: 1 in 8 elements NaN, the rest in [-1, 1])." in text
    assert "0 * NaN, 0 * inf and inf - inf are NaN" in text and "a zero-weight one included" in text
    plain = prompts.task_statement(load_task(REPO / "tests" / "fixtures" / "tasks" / "sum_all_atomic"))
    assert "inf/NaN inputs" not in plain


def test_the_cost_and_queue_cards_state_what_our_model_does_where_the_relay_had_to_guess():
    """The roi_align relay's model asked whether MTE2 and MTE3 share one HBM budget, whether
    AllocTensor / DeQue / WaitFlag block the scalar unit, and which buffer AllocTensor returns
    after a FreeTensor: the cards say what Cannpilot's cost model and emulator do, citing the code."""
    from knowledge.cards import card_index

    costs = card_index()["L4.instruction-costs"]
    text = " ".join(costs.render("full").split())
    assert "a core's MTE2 reads and MTE3 writes draw on ONE budget" in text
    assert "(reads and writes together, each at its row and alignment efficiency) at 1640 GB/s / launched cores" in text
    assert "AllocTensor, EnQue, DeQue and FreeTensor cost nothing and wait for nothing" in text
    assert "S waits only at GetValue/SetValue (for the data), WaitFlag<X_S>" in text
    assert any("cost_timeline.h" in s for s in costs.sources)
    queues = card_index()["L4.TPipe-TQue-TBuf"]
    text = " ".join(queues.render("full").split())
    assert "Which buffer AllocTensor returns, in Cannpilot's emulator (pipe.h): round robin" in text
    assert "returns the other buffer when it is free, not `a`: free-then-alloc still double buffers" in text
    assert any("cannsim/pipe.h" in s for s in queues.sources)


def test_the_statement_says_a_golden_that_casts_internally_computes_in_its_own_dtype():
    """'on the inputs widened to float64' read to the roi_align relay's model as an fp64 reference,
    while the fallback golden computes `x.float()`: the statement names the cast and what it means."""
    if not CANNBENCH.is_dir():
        pytest.skip(f"CANN-Bench not found at {CANNBENCH}")
    text = prompts.task_statement(load_task(CANNBENCH / "tasks" / "level3" / "roi_align"))
    assert "The golden's code casts internally (`.float()`): where it does, its arithmetic runs in that " \
           "dtype, not in float64, and the judge compares against that result." in text
    plain = prompts.task_statement(load_task(REPO / "tests" / "fixtures" / "tasks" / "sum_all_atomic"))
    assert "casts internally" not in plain
