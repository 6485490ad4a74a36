"""What the LLM roles send: plain functions from (task, knowledge slice, parent, direction, ...) to
chat messages, so tests can read exactly what a model was told.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
from collections import OrderedDict

from copilot.events import Candidate
from copilot.evolution.engine import ProposalRequest
from copilot.evolution.population import Inspiration
from copilot.evolution.strategies import Strategy
from copilot.tasks.model import Task

log = logging.getLogger(__name__)


class _TaskMemo:
    """What the prompt texts derive from a task's golden (its outputs, rebuilt input ranges,
    inf/NaN cases), computed once per task and key. An entry holds the object it was derived
    from and is a hit only for that very object (a freed golden's `id` can be reused by another
    task's); the oldest entries go past `size`, so a long TUI session that loads many tasks keeps
    a bounded cache."""

    def __init__(self, size: int = 256):
        self.size = size
        self.entries: OrderedDict[tuple, tuple[object, object]] = OrderedDict()

    def get(self, owner: object, key: tuple, compute):
        hit = self.entries.get(key)
        if hit is not None and hit[0] is owner:
            self.entries.move_to_end(key)
            return hit[1]
        value = compute()
        self.entries[key] = (owner, value)
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value

OUTPUT_CONTRACT = """\
Reply with ONE complete AscendC source file in a single ```cpp block, or with SEARCH/REPLACE edit
blocks against the parent kernel:
<<<<<<< SEARCH
(exact lines of the parent)
=======
(new lines)
>>>>>>> REPLACE
The file holds, in any order: the tiling struct (REGISTER_TILING_DEFAULT(Type) and
GET_TILING_DATA(var, tiling) in the kernel), the device code, the entry
extern "C" __global__ __aicore__ void {op}_custom({args}, GM_ADDR workspace, GM_ADDR tiling)
and the host tiling function `static ge::graphStatus TilingFunc(gert::TilingContext* context)` in
`namespace optiling`, then the registration `namespace ops {{ class {op_type} : public OpDef {{...}};
OP_ADD({op_type}); }}` (Input/Output {names} in this order, one Attr per attribute,
AICore().SetTiling(optiling::TilingFunc), AddConfig("ascend910b")). CANN compiles the host half
(the optiling and ops namespaces) apart from the device half: they share only the tiling struct,
the declarations above it and top-level constexpr constants; device code uses no ge:: names.
Name the tiling struct {op_type}TilingData (RmsNormTiling, SoftMaxTiling, ... are AscendC's own).
Element types come from the DTYPE_<NAME> macros ({macros}); attributes
reach the kernel through the tiling data. A vector-only kernel may open its entry with
KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY); (never a MIX type without cube work). Use only the
AscendC APIs named in the knowledge; GetValue/SetValue of a LocalTensor or GlobalTensor count as
named (one 10-cycle scalar access each: slow in loops, see L4.instruction-costs; the estimate charges
AscendC calls and these accesses, not plain C++ arithmetic), and so do the basic vector
APIs (Add Sub Mul Div Max Min, Adds Muls Maxs Mins, Abs Exp Ln Sqrt Rsqrt Reciprocal Relu, Compare
Compares Select, Cast, Duplicate, And Or ShiftLeft ShiftRight, Gather GatherMask, ReduceSum/Max/Min,
WholeReduceSum/Max/Min, BlockReduceSum/Max/Min, Brcb, CreateVecIndex) with the dtypes of their
L4 cards. Two dependent vector calls need no PipeBarrier<PIPE_V> between them (the compiler's
auto-sync inserts it); the element-wise arithmetic APIs accept dst equal to a source."""

ROLE_TEXT = {
    "cake": "You write AscendC vector kernels for Huawei Ascend NPUs. Correctness first, then speed.",
    "cake-partial": ("You produce ONE variant of an existing, correct AscendC kernel, following one "
                     "direction. Keep the parent's pipeline topology: its queues, its stages and the pattern "
                     "by which work is split across cores (a direction about cores may change the core "
                     "count and each core's share, not the pattern). Change the compute, the tiling and "
                     "the buffering as far as the direction requires, and no further."),
    "repair": "You fix an AscendC kernel that failed. Change only what the failure requires.",
}


def task_statement(task: Task) -> str:
    ins = ", ".join(f"{i.name}: {'|'.join(i.dtypes)}" for i in task.inputs)
    outs = ", ".join(f"{o.name}: {'|'.join(o.dtypes)}" for o in task.outputs)
    attrs = ", ".join(f"{a.name}: {a.type} = {a.default!r}" for a in task.attrs) or "none"
    shapes = "; ".join(" x ".join(_shape(s) for s in c.shapes) + " " + "/".join(d for d in c.dtypes if d)
                       + "".join(f" {k}={v}" for k, v in (c.attrs or {}).items()) + _value_ranges(task, c)
                       for c in task.cases[:6])
    lines = [f"Operator {task.op_name} ({task.category}).",
             f"Formula: {task.formula}" if task.formula else "",
             f"Inputs: {ins}. Outputs: {outs}. Attributes (in proto order): {attrs}.",
             f"One kernel must serve every case; sample shapes: {shapes}.",
             _golden_outputs(task, task.cases[:6]),
             task.desc_text.strip(),
             "Where the description and its golden code disagree, the golden decides: every case is judged "
             "against the golden's outputs, computed by PyTorch on the CPU (its tie and NaN rules) on the "
             "inputs widened to float64, within the output dtype's tolerance (so a 16-bit kernel that "
             "accumulates in float32 is judged against the exact value, not against torch's 16-bit rounding)."
             if task.desc_text.strip() else "",
             _golden_casts(task),
             _special_cases(task),
             _golden_flags(task)]
    return "\n".join(x for x in lines if x)


_GOLDEN_OUTPUTS = _TaskMemo()


def _golden_outputs(task: Task, cases) -> str:
    """The golden's outputs for the sample cases, as the judge compares them: their dtypes may differ
    from the proto's (a `.sum` over int32 returns int64), and a golden may return fewer outputs than
    the proto declares. From a run on meta tensors; where the outputs depend on the values (unique's
    length), their dtypes from a real run of the case's shrunk twin. Once per task and cases."""
    return _GOLDEN_OUTPUTS.get(task.golden, (task.name, tuple(str(c.id) for c in cases)),
                               lambda: _golden_output_rows(task, cases))


def _golden_output_rows(task: Task, cases) -> str:
    from copilot.costmodel.estimate import meta_outputs, output_shapes
    from copilot.tasks.quick import twin

    rows = []
    for c in cases:
        try:
            outs, shaped = meta_outputs(task, c), True
        except Exception as exc:    # the golden needs values: a small real run gives the dtypes
            log.debug("%s case %s: no meta run (%s)", task.name, c.id, exc)
            try:
                outs, shaped = output_shapes(task, twin(c) or c), False
            except Exception as exc:
                log.debug("no output dtypes for %s case %s: %s", task.name, c.id, exc)
                continue
        rows.append(f"case {c.id}: " + ", ".join(f"{o.name} {_shape(tuple(o.shape))} {o.dtype}" if shaped
                                                 else f"{o.name} {o.dtype}" for o in outs)
                    + ("" if shaped else " (shapes depend on the values)") + _not_returned(task, outs))
    return ("The golden's outputs (judged in these dtypes; where they differ from the proto's, the golden "
            "decides): " + "; ".join(rows) + ".") if rows else ""


def _value_ranges(task: Task, case) -> str:
    """` (x in [-10000, 10000])`: the range of the inputs' values as the golden and the kernel get
    them (a design may hinge on it: unique's key range). Where the golden file's get_input rebuilt an
    input (roi_align's boxes), the min and max of the rebuilt tensor, not the declared range; finite
    ranges only, inf/NaN inputs are described in the case labels."""
    real = _reworked_ranges(task, case)
    parts = []
    for i, (spec, shape, (lo, hi)) in enumerate(zip(task.inputs, case.shapes, case.value_ranges or [])):
        if shape is None:
            continue
        if task.input_fn is not None and (real is None or real[i] is not None):
            parts.append(f"{spec.name} in [{real[i][0]:g}, {real[i][1]:g}] (rebuilt by the golden file's get_input)"
                         if real is not None and math.isfinite(real[i][0]) else
                         f"{spec.name}: values rebuilt by the golden file's get_input")
        elif math.isfinite(lo) and math.isfinite(hi):
            parts.append(f"{spec.name} in [{lo:g}, {hi:g}]")
    return f" ({', '.join(parts)})" if parts else ""


_REWORKED = _TaskMemo()


def _reworked_ranges(task: Task, case) -> list | None:
    """`reworked_ranges` of the case, once per task and case; None if get_input fails here (the
    judge reports that failure itself)."""
    from copilot.oracle.inputs import reworked_ranges

    if task.input_fn is None:
        return None

    def compute():
        try:
            return reworked_ranges(task, case)
        except Exception as exc:
            log.debug("%s case %s: no rebuilt input ranges (%s)", task.name, case.id, exc)
            return None
    return _REWORKED.get(task.input_fn, (task.name, str(case.id)), compute)


def special_inputs(task: Task, case) -> str:
    """` (x: 1 in 20 elements +-inf, the rest in [-100, 100])`: what a case's inf/NaN ranges put in
    its inputs (the generator's rule), so a failure where the golden is inf or NaN can be traced
    to the input that carries them; "" when every range is finite."""
    from copilot.oracle.inputs import NAN_FRACTION, SPECIAL_FRACTION, finite_bounds

    parts = []
    for spec, (lo, hi) in zip(task.inputs, case.value_ranges or []):
        if lo != lo or hi != hi:
            parts.append(f"{spec.name}: 1 in {round(1 / NAN_FRACTION)} elements NaN, the rest in [-1, 1]")
        elif math.isinf(lo) or math.isinf(hi):
            inf = "+-inf" if math.isinf(lo) and math.isinf(hi) else ("-inf" if math.isinf(lo) else "+inf")
            flo, fhi = finite_bounds(lo, hi)
            parts.append(f"{spec.name}: 1 in {round(1 / SPECIAL_FRACTION)} elements {inf}, the rest in "
                         f"[{flo:g}, {fhi:g}]")
    return f" ({'; '.join(parts)})" if parts else ""


_CAST = re.compile(r"\.(?:float|half|bfloat16)\(\)|\.to\((?:dtype=)?torch\.(?:float32|float16|bfloat16)\)")


def _golden_casts(task: Task) -> str:
    """Where the golden's module casts to a narrower float (roi_align's fallback: `x.float()`), the
    widened inputs do not make its arithmetic float64: said, so a kernel matches the golden's own
    precision and order. "" when its source shows no such cast or cannot be read."""
    from pathlib import Path

    try:
        source = Path(task.golden.__code__.co_filename).read_text(encoding="utf-8")
    except (AttributeError, OSError, UnicodeDecodeError):
        return ""
    casts = list(dict.fromkeys(m.group(0) for m in _CAST.finditer(source)))
    if not casts:
        return ""
    return (f"The golden's code casts internally ({', '.join(f'`{c}`' for c in casts[:3])}): where it does, "
            "its arithmetic runs in that dtype, not in float64, and the judge compares against that result.")


_SPECIAL = _TaskMemo()


def _special_cases(task: Task) -> str:
    """The cases whose inputs carry inf or NaN, the correctness tier's quick twins among them
    (roi_align's 13q and 14q), said up front: the sample shapes list six plain cases, and a
    kernel that skips a zero-weight term loses the NaN the golden outputs. Once per task."""
    return _SPECIAL.get(task.golden, (task.name,), lambda: _special_case_text(task))


def _special_case_text(task: Task) -> str:
    from copilot.tasks import select_cases

    cases, tier = list(task.cases), []
    try:
        tier = select_cases(task, "quick" if task.builtin else "twins")
    except Exception as exc:    # the task's own cases are still named
        log.debug("no correctness tier for %s: %s", task.name, exc)
    cases += [c for c in tier if str(c.id) not in {str(k.id) for k in cases}]
    groups: dict[str, list[str]] = {}
    for c in cases:
        what = special_inputs(task, c)
        if what:
            groups.setdefault(what, []).append(str(c.id))
    quick = [str(c.id) for c in tier if special_inputs(task, c)]
    text = ""
    if groups:
        text = ("Cases with inf/NaN inputs" + (f" (the quick correctness cases include {', '.join(quick)})" if quick else "")
                + ": " + "; ".join(f"{'case' if len(ids) == 1 else 'cases'} {', '.join(ids)}{what}"
                                   for what, ids in groups.items())
                + ". The golden's outputs on them follow IEEE arithmetic through its own operations "
                  "(0 * NaN, 0 * inf and inf - inf are NaN; L4.nan-inf-semantics for Max, Min and compares): "
                  "a kernel that skips a term the golden computes, a zero-weight one included, loses a NaN "
                  "or inf the golden outputs.")
    return text


def _not_returned(task: Task, outs) -> str:
    missing = [o.name for o in task.outputs[len(outs):]]
    return f" ({', '.join(missing)} not returned by the golden: not judged; its GM_ADDR may be nullptr, so never write it)" if missing else ""


def _golden_flags(task: Task) -> str:
    """The golden module's optional-dependency switches as the judge runs it (roi_align's
    `HAS_TORCHVISION`: torchvision is absent, so its pure-PyTorch fallback is the golden)."""
    env = getattr(task.golden, "__globals__", None) or {}
    flags = {k: v for k, v in env.items() if k.startswith("HAS_") and isinstance(v, bool)}
    if not flags:
        return ""
    return ("The golden runs with " + ", ".join(f"{k} = {v}" for k, v in sorted(flags.items()))
            + ": where it branches on these, only the branch taken decides.")


def _shape(s) -> str:
    """`[1024,1024]`; a tensor list as `{[96,64],[96,32]}`; an omitted optional input as `None`."""
    if s is None:
        return "None (omitted)"
    if isinstance(s, list):
        return "{" + ",".join(_shape(e) for e in s) + "}"
    return "[" + ",".join(map(str, s)) + "]"


def contract(task: Task) -> str:
    from copilot.oracle.dynamic import SHAPE_ARG, SHAPE_WORDS, data_dependent

    dynamic = data_dependent(task)
    args = ", ".join(f"GM_ADDR {t.name}" for t in task.inputs + task.outputs) + (f", GM_ADDR {SHAPE_ARG}"
                                                                                 if dynamic else "")
    macros = ", ".join(f"DTYPE_{t.name.upper()}" for t in task.inputs + task.outputs)
    names = ", ".join(t.name for t in task.inputs + task.outputs)
    op_type = "".join(p[:1].upper() + p[1:] for p in f"{task.name}_custom".split("_") if p)
    text = OUTPUT_CONTRACT.format(op=task.name, args=args, macros=macros, op_type=op_type, names=names)
    if dynamic:
        text += (f"\nOutput(s) {', '.join(dynamic)}: the length depends on the data (CANN's "
                 "OutputShapeDependOnCompute: mark its Output(...) in the OpDef with "
                 ".OutputShapeDependOnCompute()). Its GM buffer is allocated at an upper bound (each such dim at the "
                 "case's largest input element count; GetOutputShape(i) gives that bound, never the answer): write the "
                 f"valid elements first, contiguous, and write the shape you produced into {SHAPE_ARG} as uint64 words, "
                 f"{SHAPE_WORDS} per such output in proto order: the rank (bit 31 may be set), then each dim "
                 "(a DataCopyPad of the words from UB). The judge compares that shape with the golden's, then the "
                 "elements it covers.")
    optional = [t.name for t in task.inputs if t.optional]
    lists = [t.name for t in task.inputs if t.is_list]
    if optional:
        text += (f"\nOptional input(s) {', '.join(optional)}: a case may omit one; its GM_ADDR is then nullptr, "
                 "and in TilingFunc GetOptionalInputShape(i) / GetOptionalInputDesc(i) return nullptr for it "
                 "(GetInputShape(i) gives an empty shape): test it on the host and tell the kernel in the tiling data.")
    unset = [a.name for a in task.attrs if any(c.attrs.get(a.name, a.default) is None for c in task.cases)]
    if unset:
        text += (f"\nAttr(s) {', '.join(unset)} may be None in a case: such an attr is not passed, so in "
                 "TilingFunc GetAttrs()->GetStr(i) / GetInt(i) / GetFloat(i) / GetListInt(i) / GetListFloat(i) "
                 "returns nullptr for it (the attrs after it keep their indices): test the pointer and use the "
                 "golden's meaning of None.")
    lists_attrs = [f"{a.name} ({a.type})" for a in task.attrs if a.type in ("list_int", "list_float")]
    if lists_attrs:
        text += (f"\nList attr(s) {', '.join(lists_attrs)}: GetAttrs()->GetListInt(i) returns "
                 "const gert::TypedContinuousVector<int64_t>* and GetListFloat(i) one of float (fp32), each "
                 "with GetSize() and GetData(); i is the attr's index in proto order. Copy the values you need "
                 "into the tiling data.")
    text += ("\nTilingFunc may read each output's shape (context->GetOutputShape(i)->GetStorageShape(), "
             "i counting the outputs from 0): it is the shape of the golden's output for the case"
             + (f" (for {', '.join(dynamic)}: its bound, above)." if dynamic else "."))
    if lists:
        text += (f"\nTensor list input(s) {', '.join(lists)}: one GM_ADDR whose buffer holds the list's tensors in "
                 "order, each flattened, back to back; TilingFunc sees their concatenation as one 1-D input, so "
                 "the element count and sizes are not in the shapes: in every case the list's tensors have the "
                 "same number of elements, so derive the count from the output's shape (a list output is one "
                 "buffer too, its tensors back to back) and the size from the input's.")
    return text


def registration(task: Task) -> str:
    """The OpDef of the task's proto as the export writes it (every dtype combination the cases
    use, optional inputs OPTIONAL), for generation 1 to copy; "" when the proto gives none."""
    from copilot.export.opdef import task_opdef

    op_type = "".join(p[:1].upper() + p[1:] for p in f"{task.name}_custom".split("_") if p)
    try:
        opdef = task_opdef(task, op_type)
    except (ValueError, KeyError) as exc:     # the contract above still says how to write one
        log.info("no OpDef for %s: %s", task.name, exc)
        return ""
    unset = [a.name for a in task.attrs if a.default is None and not a.required]
    note = (f" {', '.join(unset)}: declared REQUIRED only because the proto gives no default; a case may "
            "still leave it None (see Output)") if unset else ""
    return ("## Registration (the OpDef for this proto; put it in the file as it is)" + note
            + "\n```cpp\n" + opdef + "```")


def messages(role: str, *sections: str) -> list[dict]:
    return [{"role": "system", "content": ROLE_TEXT[role]},
            {"role": "user", "content": "\n\n".join(s for s in sections if s)}]


def generation_prompt(task: Task, knowledge_text: str, tools_help: str = "") -> list[dict]:
    """Generation 1 (cold start): the init slice, the task, the contract, and the tools."""
    return messages("cake", "## Knowledge\n" + knowledge_text, "## Task\n" + task_statement(task),
                    "## Output\n" + contract(task), registration(task), tools_help)


def variant_prompt(req: ProposalRequest, knowledge_text: str) -> list[dict]:
    """cake-partial: one variant of the parent along one direction, aware of its siblings."""
    parent = req.parent
    parts = [
        "## Knowledge\n" + knowledge_text,
        "## Task\n" + task_statement(req.task),
        f"## Parent kernel {parent.id if parent else ''} ({req.parent_tier or 'baseline'} tier)\n"
        + parent_profile(parent) + f"\n```cpp\n{parent.code if parent else ''}\n```",
        f"## Your direction: {req.strategy.id}\n{req.strategy.text}" + _bound_line(parent),
    ]
    if req.sibling_strategies:
        parts.append("## Siblings\nOther variants this round take these directions; do not duplicate "
                     "them: " + ", ".join(req.sibling_strategies))
    if req.rejected_strategies:
        parts.append("## Rejected by the engineer\nDo not use these directions: "
                     + ", ".join(req.rejected_strategies))
    if req.steer:
        parts.append("## The engineer's guidance for this round\n" + req.steer)
    others = [i for i in req.inspirations if parent is None or i.candidate_id != parent.id]
    if others:                          # the parent alone is no inspiration: it is shown above
        parts.append(inspirations_section(req.inspirations, parent))
    parts.append("## Output\n" + contract(req.task))
    return messages("cake-partial", *parts)


def _bound_line(parent: Candidate | None) -> str:
    """What the direction's change should cut: the pipe class that bounds the parent."""
    if parent is None or not parent.bottleneck:
        return ""
    return (f"\nThe parent is bound by {parent.bottleneck}: apply the direction where it cuts the "
            f"{parent.bottleneck} time of the slowest core (a change elsewhere does not make it faster).")


def _figures(time_us: float | None, timing: str, roofline: float | None, bottleneck: str | None) -> str:
    if not time_us or time_us != time_us:                    # none, or NaN
        return "no time yet"
    roof = f", {roofline:.0%} of the roofline" if roofline else ""
    neck = f", bound by {bottleneck}" if bottleneck else ""
    return f"{time_us:.2f} us ({timing}){roof}{neck}"


def parent_profile(parent: Candidate | None) -> str:
    """The parent's figures in a few lines: time, roofline share and the pipe that bounds it."""
    if parent is None or not parent.time_us:
        return "Profile: no passing run yet."
    lines = [f"Profile: {parent.time_us:.2f} us ({parent.timing})"]
    if parent.roofline_fraction:
        lines.append(f"- {parent.roofline_fraction:.0%} of the roofline")
    if parent.bottleneck:
        lines.append(f"- bound by {parent.bottleneck} on its slowest performance case")
    return "\n".join(lines)


# The best inspiration is shown in full unless its diff against the parent is under this share of
# its code: then parent + diff already carry every line, and the full text would repeat the parent.
FULL_BEST_MIN_DIFF_SHARE = 0.5


def inspirations_section(inspirations: list[Inspiration], parent: Candidate | None) -> str:
    """Other candidates with their figures, strategy and bottleneck, their code as a unified diff
    against the parent (whose code is in the prompt once); the best one in full when it is far from
    the parent."""
    base = parent.code if parent else ""
    best = min(inspirations, key=lambda i: (i.time_us if i.time_us == i.time_us else math.inf))
    out = ["## Inspirations (figures of other candidates; code as a diff against the parent)"]
    for i in inspirations:
        head = (f"### {i.candidate_id} ({i.tier} tier, strategy: {i.strategy or 'n/a'}"
                f"{', the best so far' if i is best else ''}): "
                + _figures(i.time_us, i.timing, i.roofline_fraction, i.bottleneck))
        if parent is not None and i.candidate_id == parent.id:
            out.append(head + "\nThis is the parent itself.")
            continue
        diff = "\n".join(difflib.unified_diff(base.splitlines(), i.code.splitlines(), "parent",
                                               i.candidate_id, n=2, lineterm="")) if base else ""
        if not base or (i is best and len(diff) >= FULL_BEST_MIN_DIFF_SHARE * len(i.code)):
            out.append(head + f"\n```cpp\n{i.code}\n```")
        else:
            out.append(head + (f"\n```diff\n{diff}\n```" if diff else "\nSame code as the parent."))
    return "\n\n".join(out)


def repair_prompt(task: Task, code: str, diagnostics: list[dict], failure: str, knowledge_text: str,
                  direction: Strategy | None = None, results: str = "") -> list[dict]:
    """Repair: the exemplar and the cards of the failure's constraints, the failing code, the errors;
    for a variant, the direction it follows, which the fix keeps."""
    lines = []
    for d in grouped_diagnostics(diagnostics)[:12]:
        hint = f" Hint: {d['hint']}" if d.get("hint") else ""
        lines.append(f"- [{d.get('id')}] {where(d)}{d.get('message')}{hint}")
    return messages("repair", "## Knowledge\n" + knowledge_text, "## Task\n" + task_statement(task),
                    f"## The kernel\n```cpp\n{code}\n```",
                    f"## What failed ({failure})\n" + ("\n".join(lines) or "(no diagnostics)"),
                    ("## Case results (every case that ran)\n" + results) if results else "",
                    (f"## The variant's direction: {direction.id}\n{direction.text}\nKeep to it: fix the "
                     "failure without undoing the direction.") if direction else "",
                    "## Output\n" + contract(task))


def grouped_diagnostics(diagnostics: list[dict]) -> list[dict]:
    """One entry per (id, message): the same rule broken at twelve InitBuffer calls is one line
    that lists its lines, not twelve. The compiler's errors come first, in its order: a rule
    finding on a file that does not compile (a missing OpDef after a stray brace) is a consequence."""
    out: dict[tuple, dict] = {}
    for d in diagnostics:
        key = (d.get("id"), d.get("message"))
        if key in out:
            if d.get("line"):
                out[key]["lines"].append(d["line"])
            continue
        out[key] = dict(d, lines=[d["line"]] if d.get("line") else [])
    return sorted(out.values(), key=lambda d: not str(d.get("id") or "").startswith("CPP."))


def where(d: dict) -> str:
    lines = d.get("lines") or ([d["line"]] if d.get("line") else [])
    if not lines:
        return ""
    return f"line {lines[0]}: " if len(lines) == 1 else \
        f"lines {', '.join(map(str, lines[:6]))}{', ...' if len(lines) > 6 else ''} ({len(lines)} places): "
