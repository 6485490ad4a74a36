"""The LLM roles behind the `Agent` interface, with stage-adaptive agency.

- `cake` (`baseline`): the first kernel of a task. The lowering agent's kernel where the pattern is
  supported; otherwise generation 1 is a tool-using agent (build, run_quick_cases, read_card,
  show_diagnostics, show_pipe_profile), bounded in turns and tokens, to get past the cold-start
  feasibility wall. Then up to 3 repairs for build failures and 2 for precision failures, each
  prompted with the `repair` knowledge slice (exemplar + the cards of the failure's constraints).
- `cake-partial` (`propose`): one variant of a parent along one direction, told its siblings'
  directions and the inspirations; a single pass, or a bounded fix loop, per the schedule.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

from copilot.agents import prompts
from copilot.agents.prompts import special_inputs
from copilot.events import Candidate, EventSink, KnowledgeSliceUsed
from copilot.evolution.engine import BudgetExhausted, Evaluation, Proposal, ProposalRequest
from copilot.evolution.strategies import Strategy
from copilot.tasks.model import Task

log = logging.getLogger(__name__)

TOOLS_HELP = """\
## Tools
You may call tools before answering, one per line:
TOOL build               compile your latest kernel and get its diagnostics
TOOL run_quick_cases     build, run the quick correctness cases, then time the performance cases
TOOL time_case <ID>[,ID] judge the latest kernel, then time these cases of the task (at most 3): a code
                         path the performance cases do not reach (another dtype) gets its estimate too
TOOL read_card <ID>      read a knowledge card in full (ids as in the knowledge above or the list
                         below; cards above are shown compact or as one line: the full card has
                         every pair, field and limit, e.g. L4.Cast's per-chip pair table)
TOOL show_diagnostics    the last diagnostics with their explaining cards
TOOL show_pipe_profile   per-pipe busy times and the bottleneck (estimates) of the last passing
                         run_quick_cases
Put your kernel in a ```cpp block in the same reply as the tool calls that should see it.
Reply DONE when the kernel passes: the latest kernel is then judged and timed as generation 1 (later
rounds, if any, make variants of it); if it fails, the last kernel that passed run_quick_cases stands
instead. Speed work before DONE is welcome, within the turn budget. Older turns are shown compacted
(their kernels and long tool results cut to one line): the latest kernel and tool results are in full."""

TOOL_LINE = re.compile(r"^[ \t]*TOOL[ \t]+(build|run_quick_cases|time_case|read_card|show_diagnostics|show_pipe_profile)\b"
                       r"[ \t]*(.*)$", re.M)


@dataclass
class AgencySchedule:
    generation1: str = "tool_agent"         # tool_agent | single_pass
    later: str = "single_pass"              # single_pass | fix_loop
    max_tool_turns: int = 8
    max_tool_tokens: int = 400_000          # a turn resends the (compacted) conversation: 20-45k tokens each
    build_repairs: int = 3
    precision_repairs: int = 2


@dataclass
class _Trace:
    """What one agent episode saw, for the tools and the repair prompts."""

    code: str = ""
    last: Evaluation | None = None
    passing: str = ""                       # the last kernel whose run_quick_cases passed
    notes: list[str] = field(default_factory=list)


class LLMAgent:
    def __init__(self, client, evaluator, *, sink: EventSink | None = None, session: str = "session",
                 schedule: AgencySchedule | None = None, use_lowering: bool = True) -> None:
        self.client = client
        self.name = client.model
        self.evaluator = evaluator
        self.sink = sink
        self.session = session
        self.schedule = schedule or AgencySchedule()
        self.use_lowering = use_lowering
        self._labels: dict[str, dict[str, str]] = {}
        self._round_directions: dict[int, set[str]] = {}     # round -> the directions its variants took
        self._timers: dict[str, Any] = {}                    # case ids -> an evaluator timing those cases

    async def aclose(self) -> None:
        """Release the model client's connections (the end of a session)."""
        await self.client.aclose()

    # --- cake: the first kernel -------------------------------------------------------------

    async def baseline(self, task: Task, chip: str) -> Proposal | None:
        trace = _Trace()
        if self.use_lowering:
            from copilot.agents.offline import OfflineAgent

            p = await OfflineAgent().baseline(task, chip)
            if p is not None and p.code is not None:
                ev = await self._evaluate(task, p.code)     # cached: the engine's evaluation reuses it
                if ev.status == "passed":
                    return p
                trace.notes.append(f"the lowering's kernel was {ev.status} "
                                   f"({_failure_class(ev, lambda cid: self._case_label(task, cid))}): "
                                   "generation 1 is the model's")
        try:
            if self.schedule.generation1 == "tool_agent":
                await self._tool_agent(task, chip, trace)
            else:
                slice_ = self._slice(task, "init", chip, round_=1)
                reply = await self._ask(prompts.generation_prompt(task, slice_.render()), "init", "cake", 1)
                trace.code = self._extract(reply, None) or ""
            if trace.code and trace.passing and trace.code != trace.passing:
                ev = await self._evaluate(task, trace.code)     # cached: the repair loop reuses it
                if ev.status != "passed":
                    trace.notes.append(f"generation 1: the latest kernel was {ev.status}; "
                                       "the last kernel that passed run_quick_cases stands")
                    trace.code = trace.passing
            if trace.code:
                trace.code = await self._repair(task, chip, trace, round_=1, mode="generation 1")
        except BudgetExhausted:
            raise
        if not trace.code:
            return Proposal(code=None, origin="llm", agency_mode=self.schedule.generation1,
                            failure="generation 1 produced no usable code")
        return Proposal(code=trace.code, origin="llm", agency_mode=self.schedule.generation1, notes=trace.notes)

    # --- cake-partial: one variant ------------------------------------------------------------

    async def propose(self, req: ProposalRequest) -> Proposal:
        from copilot.agents.directions import effective_request

        mode = self.schedule.later
        # synchronous up to here: the round's variants take their directions in index order, and a
        # replacement skips what an earlier sibling was replaced by (three once got the same card)
        taken = self._round_directions.setdefault(req.round, set())
        req, replaced = effective_request(req, taken=taken)
        taken.add(req.strategy.id)
        notes = [replaced] if replaced else []
        slice_ = self._slice(req.task, "mutation", req.chip, round_=req.round, cid=f"r{req.round}-c{req.index}")
        extra = op_cards(req.task, slice_.ids, req.chip, mode="compact")   # a scatter's variant sees Gather too
        reply = await self._ask(prompts.variant_prompt(req, slice_.render() + ("\n" + extra if extra else "")),
                                "mutation", "cake-partial",
                                req.round, f"r{req.round}-c{req.index}")
        parent_code = req.parent.code if req.parent else None
        code = self._extract(reply, parent_code)
        if code is None:
            return Proposal(code=None, origin="llm", agency_mode=mode, strategy=req.strategy.id, notes=notes,
                            failure=self._last_failure or "the reply had no code block and no edit block")
        if mode == "fix_loop":
            trace = _Trace(code=code, notes=notes)
            code = await self._repair(req.task, req.chip, trace, round_=req.round, mode="variant",
                                      direction=req.strategy)
        return Proposal(code=code, origin="llm", agency_mode=mode, strategy=req.strategy.id, notes=notes)

    # --- generation 1: the tool-using agent ---------------------------------------------------

    async def _tool_agent(self, task: Task, chip: str, trace: _Trace) -> None:
        slice_ = self._slice(task, "init", chip, round_=1)
        extra = op_cards(task, _full_ids(slice_), chip)
        budget = (f"\nBudget: at most {self.schedule.max_tool_turns} turns and {self.schedule.max_tool_tokens:,} "
                  "tokens (each turn resends the conversation); every tool result says what is left.")
        # the operator's own cards first: a gather or a scan is routed by its pointwise parts, and the
        # cards it needs most would otherwise come after the pattern's whole slice
        msgs = prompts.generation_prompt(task, (extra + "\n" if extra else "") + slice_.render(),
                                         TOOLS_HELP + budget + "\n\n" + card_catalogue(slice_.ids + _ids(extra), chip))
        used = 0
        for turn in range(self.schedule.max_tool_turns):
            reply = await self._ask(msgs, "init", "cake", 1)
            used += reply.prompt_tokens + reply.completion_tokens
            code = self._extract(reply, trace.code or None)
            if code:
                trace.code = code
            calls = TOOL_LINE.findall(reply.text)
            if not calls:
                break                               # DONE, or a final answer without tools
            results = [await self._tool(task, chip, trace, name, arg.strip()) for name, arg in calls]
            if trace.code and not FULL_KERNEL.search(reply.text):
                results.append(f"[latest kernel] yours after your edits:\n```cpp\n{trace.code}\n```")
            results.append(self._budget_line(turn + 1, used))
            msgs = compact_turns(msgs) + [{"role": "assistant", "content": reply.text},
                                          {"role": "user", "content": "\n\n".join(results)}]
            if used >= self.schedule.max_tool_tokens:
                trace.notes.append(f"tool agent stopped at its token bound after {turn + 1} turns")
                break

    def _budget_line(self, turns: int, used: int) -> str:
        """What is left of generation 1's tool budget, so the model can plan its last turns."""
        s = self.schedule
        left = min(s.max_tool_turns - turns, max(0, s.max_tool_tokens - used) // max(1, used // turns))
        return (f"[budget] turn {turns} of at most {s.max_tool_turns}; {used:,} of {s.max_tool_tokens:,} tokens "
                f"used (about {left} more turn(s)); when they run out, the latest kernel stands as generation 1 if it "
                "passes, else the last kernel that passed run_quick_cases")

    async def _tool(self, task: Task, chip: str, trace: _Trace, name: str, arg: str) -> str:
        if name == "read_card":
            return read_card(arg, chip)
        if name in ("build", "run_quick_cases"):
            if not trace.code:
                return f"[{name}] there is no kernel yet: put one in a ```cpp block"
            trace.last = await self._evaluate(task, trace.code)
            ev = trace.last
            if name == "build" or not ev.build_ok:
                return f"[build] {'ok' if ev.build_ok else 'FAILED'}\n" + _diag_lines(ev.diagnostics)
            if ev.status == "passed":
                trace.passing = trace.code
            cases = case_results(ev, lambda cid: self._case_label(task, cid), chip)
            paths = untimed_paths(task, ev) if ev.status == "passed" else ""
            return f"[run_quick_cases] status {ev.status}\n{cases}\n" + (paths + "\n" if paths else "") + \
                _diag_lines(ev.diagnostics)
        if name == "time_case":
            return await self._time_cases(task, trace, arg)
        if name == "show_diagnostics":
            if trace.last is None:
                return "[show_diagnostics] nothing built yet"
            return "[show_diagnostics]\n" + _diag_lines(_with_cards(trace.last.diagnostics), cards=True)
        if name == "show_pipe_profile":
            ev = trace.last
            perf = [c for c in (ev.cases if ev else []) if c.get("role") == "performance"]
            if not perf:
                return "[show_pipe_profile] " + _no_profile(ev)
            return "[show_pipe_profile] (cost-model estimates)\n" + "\n".join(
                f"{self._case_label(task, c['id'])}: {explain_estimate(c, chip)}" for c in perf if c.get("est_us")) \
                + f"\n(what each instruction costs in this model: TOOL read_card {COST_CARD})"
        return f"[{name}] unknown tool"

    async def _time_cases(self, task: Task, trace: _Trace, arg: str) -> str:
        """`time_case`: the latest kernel judged on the correctness cases, then timed on the cases
        asked for (by an evaluator like the session's whose performance tier is those cases)."""
        ids = [i for i in re.split(r"[,\s]+", arg) if i][:MAX_TIMED_CASES]
        known = [c.id for c in task.cases]
        if not ids or any(i not in known for i in ids):
            bad = ", ".join(i for i in ids if i not in known)
            return (f"[time_case] {'no case ' + bad if bad else 'give case ids'}: TOOL time_case <ID>[,ID], "
                    f"ids of the task's cases ({known[0]} to {known[-1]})")
        if not trace.code:
            return "[time_case] there is no kernel yet: put one in a ```cpp block"
        timer = self._timer(",".join(ids))
        if timer is None:
            return f"[time_case] this evaluator ({type(self.evaluator).__name__}) times only its performance cases"
        ev = await timer.evaluate(task, Candidate(id="probe", code=trace.code, round=0, origin="llm"))
        rows = {str(c.get("id")): c for c in ev.cases if c.get("role") == "performance"}
        failing = [c for c in ev.cases if c.get("passed") is False and str(c.get("id")) in ids]

        def line(i: str) -> str:
            c = rows.get(i)
            if c is None:       # the evaluation stops at the first failing case
                return f"{self._case_label(task, i)}: not run (the timing stops at the first failing case, " \
                       f"case {failing[0]['id']})"
            if c.get("passed") is False:
                return f"{self._case_label(task, i)}: FAIL {c.get('message') or ''}".rstrip()
            return f"{self._case_label(task, i)}: " + (short_estimate(c) if c.get("est_us")
                                                        else c.get("not_timed") or "not timed")

        if ev.status != "passed":
            if failing:         # the timed run of an asked case was wrong
                return "[time_case] " + "\n".join(line(i) for i in dict.fromkeys(ids))
            return (f"[time_case] not timed: the kernel is {ev.status} on the correctness cases "
                    f"(TOOL run_quick_cases says where), so case(s) {', '.join(ids)} were not run")
        return "[time_case] (cost-model estimates, not part of the fitness)\n" + "\n".join(
            line(i) for i in dict.fromkeys(ids) if i in rows)

    def _timer(self, ids: str):
        """An evaluator like the session's whose performance cases are `ids` (kept per ids, so a
        kernel asked about twice is evaluated once); None when the session's evaluator cannot."""
        if ids not in self._timers:
            from copilot.evolution.evaluate import SimEvaluator

            ev = self.evaluator
            if isinstance(ev, SimEvaluator):        # the same chip, seed and files (built objects, references)
                self._timers[ids] = SimEvaluator(chip=ev.chip, workdir=ev.workdir, perf=ids, seed=ev.seed)
            elif hasattr(ev, "with_perf"):
                self._timers[ids] = ev.with_perf(ids)
            else:
                return None
        return self._timers[ids]

    def _case_label(self, task: Task, cid) -> str:
        """`case 18q: 2001x255 768x255 float32/int32 dim=0`: the shapes and attrs of a case (a
        quick twin included), so a result or a profile says which shape it is about."""
        labels = self._labels.get(task.name)
        if labels is None:
            cases = list(task.cases)
            tier = getattr(self.evaluator, "correctness_cases", None)
            try:
                cases += list(tier(task)) if tier else []
            except Exception as exc:    # labels only: without the tier, the task's own cases are named
                log.debug("no correctness tier to label cases of %s: %s", task.name, exc)
            labels = self._labels[task.name] = {
                str(c.id): c.label() + "".join(f" {k}={v}" for k, v in c.attrs.items()) + special_inputs(task, c)
                for c in cases}
        return labels.get(str(cid), f"case {cid}")

    # --- the fix loop -------------------------------------------------------------------------

    async def _repair(self, task: Task, chip: str, trace: _Trace, round_: int, mode: str,
                      direction: Strategy | None = None) -> str:
        """Evaluate and repair: up to `build_repairs` for build failures and `precision_repairs`
        for wrong results. Returns the last code (the engine evaluates it as the candidate).
        A variant's repairs are told its direction, so a fix does not undo it."""
        build_left, prec_left = self.schedule.build_repairs, self.schedule.precision_repairs
        while True:
            ev = await self._evaluate(task, trace.code)
            trace.last = ev
            if ev.status == "passed":
                return trace.code
            if ev.status in ("build_failed",) and build_left > 0:
                build_left -= 1
                failure = "build failed"
            elif ev.status in ("incorrect", "crashed") and prec_left > 0:
                prec_left -= 1
                failure = _failure_class(ev, lambda cid: self._case_label(task, cid))
            else:
                trace.notes.append(f"{mode}: gave up after repairs ({ev.status})")
                return trace.code
            diags = _with_cards(ev.diagnostics)
            slice_ = self._slice(task, "repair", chip, round_=round_, diagnostics=diags)
            knowledge = slice_.render()
            if direction is None:       # generation 1: the golden's own ops still need their cards
                extra = op_cards(task, _full_ids(slice_), chip)
                knowledge += ("\n" + extra) if extra else ""
            results = case_results(ev, lambda cid: self._case_label(task, cid), chip)
            reply = await self._ask(prompts.repair_prompt(task, trace.code, diags, failure, knowledge, direction,
                                                          results), "repair", "cake", round_)
            fixed = self._extract(reply, trace.code)
            if fixed is None or fixed == trace.code:
                trace.notes.append(f"{mode}: repair reply had no usable change")
                return trace.code
            trace.notes.append(f"{mode}: repaired after {failure}")
            trace.code = fixed

    # --- plumbing -----------------------------------------------------------------------------

    _last_failure: str = ""

    def _extract(self, reply, parent_code: str | None) -> str | None:
        from copilot.llm.parsing import parse_reply

        parsed = parse_reply(reply.text, parent_code, finish_reason=reply.finish_reason)
        if not parsed.ok:
            self._last_failure = parsed.reason
            return None
        return parsed.code

    async def _ask(self, messages: list[dict], phase: str, role: str, round_: int, cid: str | None = None):
        from copilot.llm.client import BudgetExceeded

        try:
            return await self.client.complete(messages, phase=phase, role=role, round=round_, candidate_id=cid)
        except BudgetExceeded as exc:
            raise BudgetExhausted(str(exc)) from None

    async def _evaluate(self, task: Task, code: str) -> Evaluation:
        probe = Candidate(id="probe", code=code, round=0, origin="llm")
        return await self.evaluator.evaluate(task, probe)

    def _slice(self, task: Task, phase: str, chip: str, round_: int, diagnostics=(), cid: str | None = None):
        from knowledge import assemble

        s = assemble(task, phase, chip=chip, diagnostics=list(diagnostics), model=self.name)
        if self.sink is not None:
            self.sink.emit(KnowledgeSliceUsed(self.session, round=round_, phase=phase, candidate_id=cid,
                                              cards=[{"id": c.id, "level": c.level, "tokens": c.tokens,
                                                      "reason": c.reason} for c in s.cards],
                                              total_tokens=s.total_tokens))
        return s


FULL_KERNEL = re.compile(r"^```(?:cpp|c\+\+)?[ \t]*\n", re.M)
COMPACT_RESULT_LINES = 4


def compact_turns(msgs: list[dict]) -> list[dict]:
    """The tool agent's conversation with its older turns cut down: the task prompt stays whole;
    every earlier reply keeps its words but not its kernel (a later one superseded it), and every
    earlier tool result keeps its header lines and first failures (a card read stays whole: the
    model asked for it). The newest reply and result are appended by the caller in full."""
    out = msgs[:2]
    for m in msgs[2:]:
        text = m["content"]
        if m["role"] == "assistant":
            text = re.sub(r"```(?:cpp|c\+\+)?[ \t]*\n.*?(?:```|\Z)", "[kernel of this turn: superseded]", text, flags=re.S)
            text = re.sub(r"<<<<<<< SEARCH\n.*?>>>>>>> REPLACE", "[edit block of this turn: applied]", text, flags=re.S)
        elif not text.startswith("[compacted]"):
            text = "[compacted] " + "\n\n".join(_compact_result(part) for part in text.split("\n\n["))
        out.append({"role": m["role"], "content": text})
    return out


def _compact_result(part: str) -> str:
    part = part if part.startswith("[") else "[" + part
    if part.startswith("[read_card") or part.startswith("[budget]"):
        return part
    if part.startswith("[latest kernel]"):
        return "[latest kernel] (superseded)"
    lines = part.splitlines()
    keep = [lines[0]] + [x for x in lines[1:] if "FAIL" in x or x.startswith("- [")][:COMPACT_RESULT_LINES]
    return "\n".join(keep) + (f"\n({len(lines) - len(keep)} more line(s) cut)" if len(lines) > len(keep) else "")


def _failure_class(ev: Evaluation, label=lambda cid: f"case {cid}") -> str:
    """The first failing case, named with its shapes and attrs, its kind (a performance case says
    how it was judged), its class and the judge's message."""
    for c in ev.cases:
        if c.get("passed") is False or (c.get("failure_class") and c.get("passed") is not None):
            return (f"wrong results on {label(c.get('id'))}{_kind(c)}: {c.get('failure_class') or ev.status} — "
                    f"{c.get('message', '')}")
    return f"run failed ({ev.status})"


def _kind(c: dict) -> str:
    if c.get("role") != "performance":
        return ""
    how = c.get("judged")
    if how is None:                     # not run (a case without a time)
        return " (performance case)"
    return " (performance case, " + ("not judged: no oracle fits" if how is False else f"judged on {how}") + ")"


UNCHECKED_NOTE = (" (this run does not check this case's values: its golden needs more memory than the run's "
                  "oracle budget; a run with a larger budget checks them, so the kernel must be right on it too)")


def case_results(ev: Evaluation, label=lambda cid: f"case {cid}", chip: str = "910B2") -> str:
    """Every case the evaluation ran, in order, each with its shapes, its kind, pass/FAIL and the
    judge's message (the first mismatch), the estimate of a timed case explained; then why the
    status is what it is when no listed case failed, and that the cases after a failure did not run."""
    lines = []
    for c in ev.cases:
        judged_perf = c.get("role") == "performance" and c.get("judged") not in (None, False)
        state = "pass" if c.get("passed") or (judged_perf and c.get("passed") is None) else \
            "FAIL" if c.get("passed") is False else "not judged"
        msg = c.get("message") or ""
        if c.get("not_timed"):          # a performance case without a time, and why
            state, msg = "not timed:", c["not_timed"].removeprefix("not timed: ")
        est = f" — {explain_estimate(c, chip)}" if c.get("est_us") else ""
        unchecked = (c.get("failure_class") == "too_large" and c.get("passed") is None) or \
            (c.get("role") == "performance" and c.get("judged") is False)
        note = UNCHECKED_NOTE if unchecked else ""
        lines.append(f"{label(c.get('id'))}{_kind(c)}: {state}{' ' + msg if msg else ''}{est}{note}")
    failed = any(c.get("passed") is False for c in ev.cases)
    if ev.status != "passed":
        if not failed:
            lines.append(f"(status {ev.status}: no listed case failed its values; the diagnostics below decide)")
        else:
            lines.append("(the evaluation stops at the first failing case: later cases did not run)")
    return "\n".join(lines) or "(no case ran)"


TOP_INSTRUCTIONS = 4
COST_CARD = "L4.instruction-costs"


MAX_TIMED_CASES = 3


def untimed_paths(task: Task, ev: Evaluation) -> str:
    """The dtype combinations of the task that no timed performance case has, each with its smallest
    case: a kernel's other code paths (unique: its sort path for floats beside its int path) are
    timed only when asked for, with time_case."""
    def combo(c) -> tuple:
        return tuple(d for d in c.dtypes if d)

    timed = {str(c.get("id")) for c in ev.cases if c.get("role") == "performance" and c.get("est_us")}
    seen = {combo(c) for c in task.cases if c.id in timed}
    smallest: dict[tuple, Any] = {}
    for c in sorted(task.cases, key=lambda c: (c.total_numel, c.id)):
        smallest.setdefault(combo(c), c)
    order = [c.id for c in task.cases]
    left = sorted(((k, c.id) for k, c in smallest.items() if k not in seen), key=lambda kc: order.index(kc[1]))
    if not timed or not left:
        return ""
    return ("[other dtypes] no timed case has " + ", ".join(f"{'/'.join(k)} (smallest: case {cid})" for k, cid in left)
            + ": TOOL time_case <ID> times a case on such a code path")


def short_estimate(c: dict) -> str:
    """A timed case in one short line: the estimate, the cores, the bound and the roofline share."""
    parts = [f"{c['est_us']:.2f} us est."]
    if c.get("block_dim"):
        parts.append(f"on {c['block_dim']} cores")
    if c.get("bottleneck"):
        parts.append(f"bound by {c['bottleneck']}")
    if c.get("t_hw_us"):
        parts.append(f"roofline {c['t_hw_us']:.2f} us ({c['t_hw_us'] / c['est_us']:.0%} of it)")
    return ", ".join(parts)


def explain_estimate(c: dict, chip: str = "910B2") -> str:
    """Why a performance case's estimate is what it is: the time, the cores, the slowest core's
    busy time per pipe and the bound, the roofline, and the vector instructions that cost most."""
    from copilot.costmodel import cost_params

    pipes = c.get("pipes_us") or {}
    parts = [f"{c['est_us']:.2f} us est."]
    if c.get("block_dim"):
        parts.append(f"on {c['block_dim']} cores (the slowest core's time + launch)")
    busy = ", ".join(f"{k} {v:.1f}" for k, v in sorted(pipes.items(), key=lambda kv: -kv[1]) if v > 0)
    p = cost_params(chip)
    if busy:
        cores = max(1, int(c.get("block_dim") or 1))
        share = p.hbm_gbps / cores
        rate = (f": {p.hbm_gbps:.0f} GB/s sustained split over the {cores} launched cores, idle ones included, "
                f"= {share:.1f} GB/s per core, " + ("below" if share < p.core_dma_gbps else "above")
                + f" one core's {p.core_dma_gbps:.0f} GB/s copy engine, so a core copies at "
                f"{min(share, p.core_dma_gbps):.1f} GB/s at most")
        parts.append(f"slowest core busy per pipe (us): {busy}"
                     + (f", its HBM share {c['hbm_us']:.1f} (its bytes at its share of the HBM bandwidth{rate}; "
                        "the cores streaming at once split it: past it, more cores do not copy faster)"
                        if c.get("hbm_us") else ""))
    if c.get("memory_us"):      # the roofline's memory term is at the peak: the floor at the sustained rate
        parts.append(f"HBM floor {c['memory_us'] * p.hbm_peak_gbps / p.hbm_gbps:.1f} us (the case's inputs read "
                     f"and outputs written once at the sustained {p.hbm_gbps:.0f} GB/s: no kernel's copies end sooner)")
    total, core = sum(v for v in pipes.values() if v > 0), c["est_us"] - p.launch_us
    if total > 0 and core > 0:          # overlap: a single buffer serialises copies and compute
        parts.append(f"the slowest core runs {core:.1f} us (the estimate less the {p.launch_us:.1f} us launch) for "
                     f"{total:.1f} us of pipe busy time: its pipes overlap {max(0.0, 1 - core / total):.0%}")
    if c.get("bottleneck"):
        parts.append(f"bound by {c['bottleneck']}")
    if c.get("t_hw_us"):
        parts.append(f"roofline {c['t_hw_us']:.2f} us ({c['t_hw_us'] / c['est_us']:.0%} of it; the inputs read and "
                     f"outputs written once at HBM's peak {p.hbm_peak_gbps:.0f} GB/s, or the golden's vector work "
                     f"on every core at full rate: a copy streaming at the sustained {p.hbm_gbps:.0f} GB/s is at "
                     f"{p.hbm_gbps / p.hbm_peak_gbps:.0%} of a memory roofline)")
    counts = c.get("vector_counts") or {}
    if counts:
        weights = cost_params(chip).vector_weights()

        def weight(api: str) -> float:
            return weights.get(api, weights.get(api.split(".")[0], 1.0))

        def cost(item):         # repeats x weight: the vector cycles an instruction kind takes
            return item[1][1] * weight(item[0])
        top = sorted(counts.items(), key=cost, reverse=True)[:TOP_INSTRUCTIONS]
        parts.append("top vector work: " + ", ".join(f"{api} {int(v[0])} instr / {int(v[1])} repeats "
                                                    f"x weight {weight(api):g}"
                                                    for api, v in top))
    return "; ".join(parts)


def _with_cards(diags: list[dict]) -> list[dict]:
    """Copies of the diagnostics with their knowledge cards and hint (the one path:
    `knowledge.attach_cards`)."""
    from knowledge import attach_cards

    return attach_cards([dict(d) for d in diags])


def _diag_lines(diags: list[dict[str, Any]], cards: bool = False) -> str:
    lines = []
    for d in prompts.grouped_diagnostics(diags)[:15]:
        extra = f" (cards: {', '.join(d.get('cards') or [])})" if cards and d.get("cards") else ""
        lines.append(f"- [{d.get('id')}] {prompts.where(d)}{d.get('message')}{extra}")
    return "\n".join(lines) or "(no diagnostics)"


def card_catalogue(shown: list[str], chip: str) -> str:
    """The cards the slice left out (rules, strategies, APIs), one line each, so the tool agent can
    read the ones its operator needs (a gather, a scan, a sort) instead of guessing ids."""
    from knowledge import load_cards

    rest = [c for c in load_cards() if c.level in ("L2", "L3", "L4", "L5") and c.id not in shown
            and c.fits_chip(chip)]
    if not rest:
        return ""
    return ("## More cards (not shown above; read one with TOOL read_card <ID>; their APIs count as named "
            "in the knowledge)\n" + "\n".join(f"- {c.id}: {c.title}" for c in rest))


def read_card(arg: str, chip: str) -> str:
    """The read_card tool: the card in full, found by its id, case-insensitively, or by a unique
    id prefix or word (`L4.Compare` -> `L4.Compare-Select`); else the ids that come close."""
    from knowledge import load_cards

    cards = [c for c in load_cards() if c.fits_chip(chip)] or list(load_cards())
    key = arg.strip().strip("`'\"").lower()
    hits = [c for c in cards if c.id.lower() == key]
    if not hits and key:
        words = [w for w in re.split(r"[^a-z0-9]+", key) if len(w) >= 3 and w not in ("prec", "run", "cpp")]
        hits = [c for c in cards if c.id.lower().startswith(key)]
        for where in ((lambda c: c.id), (lambda c: c.id + " " + c.title)):
            if not hits and words:
                hits = [c for c in cards if all(w in where(c).lower() for w in words)]
    if len(hits) == 1:
        c = hits[0]
        return f"[read_card {c.id}]\n" + c.render("full")
    level = [c for c in cards if c.level == key[:2].upper()]
    near, what = (hits, f"{len(hits)} match") if hits else (level, "cards of that level") if level else \
        ([c for c in cards if c.level in ("L3", "L4")], "the strategy and API cards")
    return f"[read_card {arg}] no such card; {what}: " + ", ".join(c.id for c in near[:60])


# aten ops of a golden -> the cards a kernel for them needs, beyond its pattern's exemplar
# (a gather is routed as elementwise: its slice would show Exp and Cast, not Gather).
OP_CARDS = {
    ("gather", "index_select", "take", "index", "embedding", "upsample_bilinear2d", "grid_sampler_3d",
     "_adaptive_avg_pool3d", "_adaptive_avg_pool2d"): ("L4.Gather", "L2.GATHER_OFFSET"),
    ("upsample_bilinear2d", "grid_sampler_3d", "_adaptive_avg_pool3d", "_adaptive_avg_pool2d"):
        ("L4.Fill-Index", "L4.Cast"),           # index ramps; float <-> int32 casts with their round modes
    ("im2col", "amax", "max_pool2d_with_indices"): ("L4.repeat-params",),   # a stencil's strided repeat form
    # a sort feeding a data-dependent pass (nms, unique): gather by the sorted index, cores in step
    ("sort", "argsort", "_unique2", "_local_scalar_dense"): ("L4.Gather", "L4.Atomic-SyncAll"),
    ("scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "scatter", "scatter_", "index_put",
     "index_put_", "index_copy", "index_add", "index_add_"): ("L4.Atomic-SyncAll",),
    ("nll_loss_forward", "linalg_vector_norm", "norm"): ("L4.Atomic-SyncAll", "L3.multicore-scalar-reduction"),
    ("cummin", "cummax", "cumsum", "cumprod", "logcumsumexp"): ("L4.Compare-Select",),
    ("cummin", "cummax", "minimum", "maximum", "where", "eq", "ne", "lt", "le", "gt", "ge", "clamp",
     "clamp_min", "clamp_max", "masked_fill", "argmax", "argmin", "sign", "isnan", "isinf"):
        ("L4.Compare-Select", "L4.nan-inf-semantics"),
    ("topk", "sort", "argsort", "_unique2", "unique_dim", "unique_consecutive", "kthvalue", "median"):
        ("L4.sort-topk", "L2.API_PARAM"),
    ("constant_pad_nd", "im2col", "pad", "reflection_pad2d"): ("L4.hl-layout",),
    ("repeat", "repeat_interleave", "expand"): ("L3.broadcast-strategies",),
}
MAX_OP_CARDS = 6         # an operator strategy card (L3) leads, the API cards follow


def own_cards(ops: list[str]) -> list[str]:
    """The ids of the cards reached through these aten ops only (their `ops`), in the ops' order."""
    from knowledge import load_cards

    return list(dict.fromkeys(c.id for op in ops for c in load_cards() if op in c.ops))


def golden_ops(task: Task) -> list[str]:
    """The aten ops the golden runs on the smallest correctness case (as the oracle calls it), then
    the golden's own name (a pure-python roi_align fallback traces as index/where/sum, torchvision's
    as `roi_align`: both reach the cards written for it); [] when it cannot be run."""
    from knowledge.router import trace_case

    tr = trace_case(task)
    if tr is None or tr.error:
        return []
    name = getattr(getattr(task, "golden", None), "__name__", "")
    return list(dict.fromkeys(tr.ops + ([name] if name.isidentifier() and name != "<lambda>" else [])))


def op_cards(task: Task, shown: list[str], chip: str, mode: str = "full") -> str:
    """The cards for the golden's own operations (a gather, a scan, a top-k) that the slice does
    not hold, at most MAX_OP_CARDS, rendered in `mode` (full for generation 1, compact for a variant)."""
    from knowledge.cards import card_index

    idx = card_index()
    picked: list[tuple[str, str]] = []
    ops = golden_ops(task)
    # the strategy cards written for the operator first (roi_align's name comes last in its trace)
    for op, ids in [(op, own_cards([op])) for op in ops] + \
            [(op, ids) for op in ops for keys, ids in OP_CARDS.items() if op in keys]:
        picked += [(cid, op) for cid in ids if cid in idx and cid not in shown
                   and idx[cid].fits_chip(chip) and cid not in [p[0] for p in picked]]
    if task is not None and any(special_inputs(task, c) for c in task.cases) and "L4.nan-inf-semantics" in idx \
            and "L4.nan-inf-semantics" not in shown and all(p[0] != "L4.nan-inf-semantics" for p in picked):
        picked.insert(min(len(picked), MAX_OP_CARDS - 1), ("L4.nan-inf-semantics", "inf/nan inputs"))
    picked = picked[:MAX_OP_CARDS]
    if not picked:
        return ""
    return ("## Cards for the golden's operations (" + ", ".join(f"{op if ' ' in op else 'aten.' + op} -> {cid}"
                                                              for cid, op in picked)
            + ")\n\n" + "\n\n".join(idx[cid].render(mode) for cid, _ in picked) + "\n")


def _full_ids(slice_) -> list[str]:
    """The cards a slice shows in full (a one-line summary does not count as shown)."""
    return [c.id for c in slice_.cards if c.mode == "full"]


def _ids(text: str) -> list[str]:
    return re.findall(r"^### \[([\w.-]+)\]", text, re.M)


def _no_profile(ev: Evaluation | None) -> str:
    """Why show_pipe_profile has no estimate to show, and which run would give one: estimates come only
    from the performance cases of a passing run_quick_cases."""
    if ev is None:
        return "nothing evaluated yet: TOOL run_quick_cases judges the latest kernel and times its performance cases"
    if ev.status != "passed":
        return (f"the last evaluation did not pass ({ev.status}): only a passing run_quick_cases times the "
                "performance cases")
    return ("the last run_quick_cases passed, but none of its performance cases could be timed here (most "
            "often their reference needs more memory than the oracle's budget): no estimate on this machine, "
            "and a kernel that passes still stands as generation 1")

