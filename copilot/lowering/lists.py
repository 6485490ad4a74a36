"""Tensor-list inputs (`foreach_*` goldens: `[f(x1_i, x2_i, ...) for i in range(L)]`).

The kernel gets a tensor list as one GM buffer, its elements flattened back to back, and the
tiling function sees that concatenation as one 1-D input (`docs/tasks.md`, the kernel contract);
a list output is one buffer the same way. Two shapes of per-element program lower:

- *pointwise* (every op elementwise on same-sized operands, e.g. `x1 + x2 / x3 * scalar`): the
  program applied to each element is the program applied to the concatenation, so the task is
  lowered as a plain elementwise task whose inputs are the concatenated buffers (`flat_task`);
  the generic pipeline (capture, IR, plan, emit) does the rest;
- *one p-norm per element* (`torch.norm(x_i, p)`, traced as `linalg_vector_norm` over every
  dim): the list kernel below (`ListNormPlan`), one output value per element, p read from the
  attr at run time.

Either way the golden is first traced on the first case's real list structure (fake tensors) to
check that output i depends on element i of each list and on nothing else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

# ops that only convert or view a value, never mix elements
_PASS = {"_to_copy", "clone", "alias", "detach", "view", "reshape", "_unsafe_view", "lift_fresh_copy"}


def has_lists(task) -> bool:
    return any(getattr(i, "is_list", False) for i in task.inputs)


@dataclass
class ListNormPlan:
    """y[i] = ||x_i||_p for every element x_i of one tensor list."""

    task: object
    pattern: str                     # "list_norm"
    order_rule: tuple                # ("attr", name) | ("const", p)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _list_shape(task, case):
    """(list length, elements' numel) of a case: every list input has the same length and
    equal-sized elements (so the tiling function can split the buffer from its length alone)."""
    lengths, sizes = set(), set()
    for spec, shape in zip(task.inputs, case.shapes):
        if not spec.is_list:
            raise Unsupported(f"{task.name}: input '{spec.name}' is a plain tensor beside a tensor list; "
                              "the lowering takes tensor-list-only goldens")
        if not isinstance(shape, list) or not shape:
            raise Unsupported(f"{task.name}: case {case.id}: tensor list '{spec.name}' is absent or empty")
        lengths.add(len(shape))
        sizes.update(math.prod(s) for s in shape)
    if len(lengths) != 1 or len(sizes) != 1:
        raise Unsupported(f"{task.name}: case {case.id}: the lists' elements differ in count or size; the "
                          "kernel splits a list buffer into equal elements")
    return lengths.pop(), sizes.pop()


def _call_golden(task, lists: list, attrs: dict):
    from copilot.oracle.golden import golden_takes_inputs_by_name

    kw = {k: v for k, v in attrs.items() if v is not None}
    if golden_takes_inputs_by_name(task):
        return task.golden(**kw, **{s.name: x for s, x in zip(task.inputs, lists)})
    return task.golden(*lists, **kw)


def _trace_lists(task, case, shapes: list, attrs: dict | None = None):
    """The golden traced (`tracer.py`) on tensor lists of the given element shapes (one list per
    input), float elements in float32."""
    import torch

    from copilot.lowering.capture import _torch_dtype
    from copilot.lowering.tracer import trace_graph

    sample = []
    for elems, dt in zip(shapes, case.dtypes):
        tdt = _torch_dtype(dt)
        sample.append([(tuple(s), torch.float32 if tdt.is_floating_point else tdt) for s in elems])
    sizes = [len(s) for s in sample]

    def fn(*flat):
        lists, k = [], 0
        for n in sizes:
            lists.append(list(flat[k:k + n]))
            k += n
        return _call_golden(task, lists, case.attrs if attrs is None else attrs)

    try:
        with torch.no_grad():
            return trace_graph(fn, [t for s in sample for t in s])
    except Exception as exc:
        raise Unsupported(f"{task.name}: the golden could not be traced on case {case.id}'s tensor lists "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]})") from None


def _check_per_element(task, gm, length: int) -> list:
    """The output nodes, one per list element; refuses a golden whose output i reads anything but
    element i of each list."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(task.outputs) != 1 or len(outs) != length:
        raise Unsupported(f"{task.name}: the golden returns {len(outs)} tensors for lists of {length}; the "
                          "lowering takes one output list with one tensor per element")
    for i, o in enumerate(outs):
        seen, todo = set(), [o]
        while todo:
            n = todo.pop()
            if n in seen or not hasattr(n, "op"):
                continue
            seen.add(n)
            todo.extend(a for a in n.all_input_nodes)
        used = {places.index(p) % length for p in seen if p.op == "placeholder"}
        if used - {i}:
            raise Unsupported(f"{task.name}: output {i} of the list reads other elements of the input "
                              "lists; the lowering takes per-element programs")
    return outs


def _kind(task, gm, numel: int) -> tuple:
    """("pointwise",) or ("norm", ord) for the per-element program traced on one element."""
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    norms = [n for n in calls if _name(n) == "linalg_vector_norm"]
    if norms:
        n = norms[0]
        dims = n.args[2] if len(n.args) > 2 else n.kwargs.get("dim")
        keep = n.args[3] if len(n.args) > 3 else n.kwargs.get("keepdim", False)
        rank = len(n.args[0].meta["val"].shape)
        whole = dims is None or sorted(d % max(rank, 1) for d in dims) == list(range(rank))
        others = [c for c in calls if c is not n and _name(c) not in _PASS]
        if len(norms) == 1 and whole and not keep and not others:
            return ("norm", float(n.args[1] if len(n.args) > 1 else n.kwargs.get("ord", 2.0)))
        raise Unsupported(f"{task.name}: a per-element norm inside other arithmetic, over some dims, or "
                          "kept dims is not lowered for tensor lists")
    import torch

    for n in calls:
        if _name(n) in _PASS:
            continue
        tags = getattr(n.target, "tags", ())
        if torch.Tag.pointwise not in tags:
            raise Unsupported(f"{task.name}: aten.{_name(n)} in a tensor-list golden; the lowering takes "
                              "pointwise per-element programs and per-element norms")
        for a in n.all_input_nodes:
            v = a.meta.get("val")
            if v is not None and v.numel() not in (1, numel) or (v is not None and v.numel() == 1 and numel != 1
                                                                  and a.op == "placeholder"):
                raise Unsupported(f"{task.name}: aten.{_name(n)} broadcasts inside a list element")
    return ("pointwise",)


def flat_task(task):
    """The task as the kernel sees it: every tensor list one 1-D input (the concatenation), the
    golden called with one-element lists of those (valid for pointwise per-element programs)."""
    inputs = [replace(s, is_list=False) for s in task.inputs]
    cases = []
    for c in task.cases:
        shapes = [(sum(math.prod(e) for e in s),) for s in c.shapes]
        cases.append(replace(c, shapes=shapes))
    orig = task

    def golden(*xs, **attrs):
        out = _call_golden(orig, [[x] for x in xs], attrs)
        return out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out

    return replace(task, inputs=inputs, cases=cases, golden=golden, oracle_fn=None, bench_fn=None, input_fn=None)


def plan_lists(task):
    """The plan of a tensor-list task: a generic elementwise plan over the concatenated buffers,
    or a ListNormPlan. Unsupported for anything else."""
    if not task.cases:
        raise Unsupported(f"{task.name}: the task has no cases to trace")
    shapes = [_list_shape(task, c) for c in task.cases]
    first = task.cases[0]
    gm = _trace_lists(task, first, first.shapes)
    _check_per_element(task, gm, shapes[0][0])
    one = _trace_lists(task, first, [[s[0]] for s in first.shapes])
    kind = _kind(task, one, shapes[0][1])
    if kind[0] == "pointwise":
        from copilot.lowering.plan import build_plan

        plan = build_plan(flat_task(task))
        if plan.axis_rule is not None or any(l.lanes or l.chunks > 1 for l in plan.loads):
            raise Unsupported(f"{task.name}: the per-element program does not lower as elementwise "
                              f"({plan.pattern})")
        plan.notes.append("tensor lists: every list is one concatenated buffer, the program is pointwise")
        return plan
    return _plan_norm(task, kind[1])


def _plan_norm(task, p0: float) -> ListNormPlan:
    """Which attr the norm's order follows (traced once per case at a sentinel), else a literal."""
    from copilot.lowering.capture import SENTINELS

    orders = []
    for c in task.cases:
        g = _trace_lists(task, c, [[s[0]] for s in c.shapes])
        k = _kind(task, g, math.prod(c.shapes[0][0]))
        if k[0] != "norm":
            raise Unsupported(f"{task.name}: case {c.id} is not the per-element norm case {task.cases[0].id} is")
        orders.append(k[1])
    for a in task.attrs:
        if a.type != "float":
            continue
        vals = [c.attrs.get(a.name, a.default) for c in task.cases]
        if any(v is None for v in vals) or any(not _same(float(v), o) for v, o in zip(vals, orders)):
            continue
        c = task.cases[0]
        g = _trace_lists(task, c, [[s[0]] for s in c.shapes], {**c.attrs, a.name: SENTINELS[0]})
        k = _kind(task, g, math.prod(c.shapes[0][0]))
        if k == ("norm", SENTINELS[0]):
            return ListNormPlan(task, "list_norm", ("attr", a.name))
    if len({repr(o) for o in orders}) == 1:
        return ListNormPlan(task, "list_norm", ("const", orders[0]))
    raise Unsupported(f"{task.name}: the norm's order varies between cases and no float attr gives it")


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def render_norm(plan: ListNormPlan, knobs: dict) -> str:
    """The candidate source of a ListNormPlan."""
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    xn, yn = t.inputs[0].name, t.outputs[0].name
    if plan.order_rule[0] == "attr":
        pos = [a.name for a in t.attrs].index(plan.order_rule[1])
        order = (f"    const float* orderAttr = attrs->GetAttrPointer<float>({pos});   // `{plan.order_rule[1]}`\n"
                 f"    if (orderAttr == nullptr) {{\n"
                 f"        return ge::GRAPH_FAILED;\n"
                 f"    }}\n"
                 f"    const float p = *orderAttr;\n")
        order_doc = f"the float attr `{plan.order_rule[1]}`"
    else:
        p = plan.order_rule[1]
        lit = "INFINITY" if p == math.inf else "-INFINITY" if p == -math.inf else f"{p!r}f"
        order = f"    const float p = {lit};\n"
        order_doc = f"fixed at {plan.order_rule[1]}"
    text = (_NORM_KERNEL + "\n" + _NORM_TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(xn)), ("@YT@", _macro_of(yn)), ("@X@", _ident(xn)), ("@Y@", _ident(yn)),
                     ("@ORDER@", order), ("@ORDER_DOC@", order_doc), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(int(knobs["tile_elems"]))), ("@MINWORK@", str(int(knobs["min_work_elems"]))),
                     ("@SPLIT@", core_split(knobs, "td->tensors * td->tensorLen", "td->units")),
                     ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_NORM_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: one p-norm per tensor of a tensor list, y[i] = ||@X@_i||_p (torch.norm over every dim);
// p is @ORDER_DOC@. @X@ is one buffer, the list's tensors flattened back to back, all of
// `tensorLen` elements; y holds one value per tensor.
//   p = 1: sum |x|   p = 2: sqrt(sum x^2)   p = inf / -inf: max / min |x|   p = 0: count of x != 0
//   other p: (sum |x|^p)^(1/p), |x|^p = exp(p ln|x|)
// Work split: each tensor is cut into `parts` pieces so every core gets one; a piece accumulates
// |x|^p lane-wise in an fp32 tile (one vector op per tile, no reduction inside the loop) and
// reduces it once at its end into a 32-byte workspace slot. After SyncAll the first core combines
// each tensor's pieces in order (the same bits every run) and takes the root.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t NORM_POW = 0;      // general p
constexpr uint32_t NORM_ONE = 1;      // p = 1
constexpr uint32_t NORM_TWO = 2;      // p = 2
constexpr uint32_t NORM_MAX = 3;      // p = inf
constexpr uint32_t NORM_MIN = 4;      // p = -inf
constexpr uint32_t NORM_ZERO = 5;     // p = 0
constexpr uint32_t SLOT_FLOATS = 8;   // one 32-byte workspace slot per piece

struct @T@ {
    uint32_t mode;                      // NORM_*
    uint32_t bufferNum;
    uint32_t tileElems;                 // elements per tile (a multiple of 64)
    uint32_t blockDim;
    float order;                        // p
    float invOrder;                     // 1 / p
    uint64_t tensors;                   // list length = elements of y
    uint64_t tensorLen;                 // elements per tensor
    uint64_t parts;                     // pieces per tensor
    uint64_t partLen;                   // elements per piece (the last one may be shorter)
    uint64_t units;                     // tensors * parts
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
using Out = @YT@;

// fp16 / bf16 tiles are widened into `work`; an fp32 tile is used as it is.
template <typename T>
__aicore__ inline LocalTensor<float> Widened(const LocalTensor<T>& tile, const LocalTensor<float>& work, uint32_t n)
{
    if constexpr (std::is_same<T, float>::value) {
        return tile;
    } else {
        Cast(work, tile, RoundMode::CAST_NONE, n);
        return work;
    }
}

template <typename T>
__aicore__ inline void Narrow(const LocalTensor<T>& dst, const LocalTensor<float>& src, uint32_t n)
{
    if constexpr (std::is_same<T, float>::value) {
        Adds(dst, src, 0.0f, n);
    } else {
        Cast(dst, src, RoundMode::CAST_RINT, n);
    }
}

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR yAddr, GM_ADDR workspace, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), td_.tensors * td_.tensorLen);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Out*>(yAddr), td_.tensors);
        slotGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)),
                                td_.units * SLOT_FLOATS);
@UNIT_RANGE@        pipe_.InitBuffer(xQue_, td_.bufferNum, td_.tileElems * sizeof(Elem));
        pipe_.InitBuffer(magBuf_, td_.tileElems * sizeof(float));
        pipe_.InitBuffer(accBuf_, td_.tileElems * sizeof(float));
        // the combine step reads every piece's slot into one buffer
        pipe_.InitBuffer(slotBuf_, static_cast<uint32_t>(td_.units) * SLOT_FLOATS * sizeof(float));
        pipe_.InitBuffer(yBuf_, (td_.tensors * sizeof(Out) + 31) / 32 * 32);
        if (td_.mode == NORM_ZERO) {
            pipe_.InitBuffer(onesBuf_, td_.tileElems * sizeof(float));
            pipe_.InitBuffer(bitsBuf_, td_.tileElems / 8);
            Duplicate(onesBuf_.Get<float>(), 1.0f, td_.tileElems);
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            Piece(unitStart_ + u);
        }
        PipeBarrier<PIPE_ALL>();                  // every slot is in GM before the barrier
        SyncAll();
        if (GetBlockIdx() == 0) {
            Combine();
        }
    }

private:
    // Piece k of tensor i: accumulate |x|^p (or |x|, x^2, x != 0) over its tiles, reduce once.
    __aicore__ inline void Piece(uint64_t unit)
    {
        const uint64_t tensor = unit / td_.parts;
        const uint64_t begin = (unit % td_.parts) * td_.partLen;
        const uint64_t end = begin + td_.partLen < td_.tensorLen ? begin + td_.partLen : td_.tensorLen;
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> mag = magBuf_.Get<float>();
        // the accumulator starts at the value that contributes nothing
        Duplicate(acc, td_.mode == NORM_MIN ? INFINITY : 0.0f, td_.tileElems);
        for (uint64_t at = begin; at < end; at += td_.tileElems) {
            const uint32_t n = static_cast<uint32_t>(end - at < td_.tileElems ? end - at : td_.tileElems);
            CopyIn(tensor * td_.tensorLen + at, n);
            Accumulate(acc, mag, n);
        }
        LocalTensor<float> slot = slotBuf_.Get<float>();
        SyncPipes<HardEvent::MTE3_V>();           // the previous piece's slot is out
        if (td_.mode == NORM_MAX) {
            ReduceMax(slot, acc, mag, static_cast<int32_t>(td_.tileElems));
        } else if (td_.mode == NORM_MIN) {
            ReduceMin(slot, acc, mag, static_cast<int32_t>(td_.tileElems));
        } else {
            ReduceSum(slot, acc, mag, static_cast<int32_t>(td_.tileElems));
        }
        SyncPipes<HardEvent::V_MTE3>();
        DataCopy(slotGm_[unit * SLOT_FLOATS], slot, SLOT_FLOATS);
    }

    __aicore__ inline void CopyIn(uint64_t at, uint32_t n)
    {
        LocalTensor<Elem> tile = xQue_.AllocTensor<Elem>();
        DataCopyExtParams in(1, n * sizeof(Elem), 0, 0, 0);
        DataCopyPad(tile, xGm_[at], in, DataCopyPadExtParams<Elem>(false, 0, 0, 0));
        xQue_.EnQue(tile);
    }

    // acc[0, n) op= f(x) for the tile in the queue; f by the norm's order.
    __aicore__ inline void Accumulate(const LocalTensor<float>& acc, const LocalTensor<float>& mag, uint32_t n)
    {
        LocalTensor<Elem> tile = xQue_.DeQue<Elem>();
        const LocalTensor<float> x = Widened(tile, mag, n);
        switch (td_.mode) {
            case NORM_ONE:
                Abs(mag, x, n);
                Add(acc, acc, mag, n);
                break;
            case NORM_TWO:
                Mul(mag, x, x, n);
                Add(acc, acc, mag, n);
                break;
            case NORM_MAX:
                Abs(mag, x, n);
                Max(acc, acc, mag, n);
                break;
            case NORM_MIN:
                Abs(mag, x, n);
                Min(acc, acc, mag, n);
                break;
            case NORM_ZERO: {
                // compares run on whole 256-byte repeats; lanes past n are never accumulated
                const uint32_t whole = (n + 63) / 64 * 64;
                LocalTensor<uint8_t> bits = bitsBuf_.Get<uint8_t>();
                Compares(bits, x, 0.0f, CMPMODE::NE, whole);
                Select(mag, bits, onesBuf_.Get<float>(), 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, whole);
                Add(acc, acc, mag, n);
                break;
            }
            default:                              // |x|^p = exp(p ln|x|): ln 0 = -inf gives 0 for p > 0
                Abs(mag, x, n);
                Ln(mag, mag, n);
                Muls(mag, mag, td_.order, n);
                Exp(mag, mag, n);
                Add(acc, acc, mag, n);
                break;
        }
        xQue_.FreeTensor(tile);
    }

    // First core: each tensor's pieces in order, then the root; y narrowed to its dtype.
    __aicore__ inline void Combine()
    {
        LocalTensor<float> all = slotBuf_.Get<float>();
        SyncPipes<HardEvent::MTE3_MTE2>();
        DataCopy(all, slotGm_, static_cast<uint32_t>(td_.units) * SLOT_FLOATS);
        SyncPipes<HardEvent::MTE2_S>();
        LocalTensor<float> norms = accBuf_.Get<float>();
        SyncPipes<HardEvent::V_S>();
        for (uint64_t i = 0; i < td_.tensors; ++i) {
            float s = all.GetValue(static_cast<uint32_t>(i * td_.parts * SLOT_FLOATS));
            for (uint64_t k = 1; k < td_.parts; ++k) {
                const float v = all.GetValue(static_cast<uint32_t>((i * td_.parts + k) * SLOT_FLOATS));
                s = td_.mode == NORM_MAX ? (v > s ? v : s) : td_.mode == NORM_MIN ? (v < s ? v : s) : s + v;
            }
            norms.SetValue(static_cast<uint32_t>(i), s);
        }
        SyncPipes<HardEvent::S_V>();
        const uint32_t n = static_cast<uint32_t>(td_.tensors);
        if (td_.mode == NORM_TWO) {
            Sqrt(norms, norms, n);
        } else if (td_.mode == NORM_POW) {
            // s^(1/p) = exp(ln(s) / p): s = 0 gives 0 for p > 0, s = inf gives 0 for p < 0
            Ln(norms, norms, n);
            Muls(norms, norms, td_.invOrder, n);
            Exp(norms, norms, n);
        }
        LocalTensor<Out> y = yBuf_.Get<Out>();
        Narrow(y, norms, n);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams out(1, static_cast<uint32_t>(td_.tensors * sizeof(Out)), 0, 0, 0);
        DataCopyPad(yGm_, y, out);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> xQue_;
    TBuf<QuePosition::VECCALC> magBuf_;
    TBuf<QuePosition::VECCALC> accBuf_;
    TBuf<QuePosition::VECCALC> slotBuf_;
    TBuf<QuePosition::VECCALC> yBuf_;
    TBuf<QuePosition::VECCALC> onesBuf_;
    TBuf<QuePosition::VECCALC> bitsBuf_;
    GlobalTensor<Elem> xGm_;
    GlobalTensor<Out> yGm_;
    GlobalTensor<float> slotGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(GM_ADDR @X@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @Y@, workspace, tilingData);
    op.Process();
}
"""

_NORM_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@ORDER@    td->order = p;
    td->invOrder = 1.0f / p;
    if (p == 1.0f) {
        td->mode = NORM_ONE;
    } else if (p == 2.0f) {
        td->mode = NORM_TWO;
    } else if (std::isinf(p)) {
        td->mode = p > 0 ? NORM_MAX : NORM_MIN;
    } else if (p == 0.0f) {
        td->mode = NORM_ZERO;
    } else if (std::isnan(p)) {
        return ge::GRAPH_FAILED;
    } else {
        td->mode = NORM_POW;
    }
    // the list is one buffer of equal tensors; y has one value per tensor
    const uint64_t total = static_cast<uint64_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    td->tensors = static_cast<uint64_t>(context->GetOutputShape(0)->GetStorageShape().GetShapeSize());
    if (td->tensors == 0 || total % td->tensors != 0 || total == 0) {
        return ge::GRAPH_FAILED;
    }
    td->tensorLen = total / td->tensors;
    const uint64_t eb = DtypeBytes(context->GetInputDesc(0)->GetDataType());

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    // pieces: enough for every core, none shorter than the minimum work per core, at most 1024 slots
    const uint64_t minWork = @MINWORK@;
    uint64_t parts = (coreNum + td->tensors - 1) / td->tensors;
    const uint64_t byWork = (td->tensorLen + minWork - 1) / minWork;
    parts = parts > byWork ? byWork : parts;
    parts = parts * td->tensors > 1024 ? 1024 / td->tensors : parts;
    parts = parts == 0 ? 1 : parts;
    td->partLen = (td->tensorLen + parts - 1) / parts;
    td->parts = (td->tensorLen + td->partLen - 1) / td->partLen;
    td->units = td->tensors * td->parts;
    if (td->units > 4096) {
        return ge::GRAPH_FAILED;   // the combine step keeps one slot per piece in UB
    }
    // tile: queued elements + their fp32 magnitude + the accumulator (+ ones and bits for p = 0)
    const uint64_t fixed = td->units * 32 + td->tensors * 8 + 4096;
    if (ubSize <= reserve + fixed + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t perElem8 = 8 * (td->bufferNum * eb + 8) + (td->mode == NORM_ZERO ? 8 * 4 + 1 : 0);
    uint64_t tile = (ubSize - reserve - fixed) * 8 / perElem8 / 64 * 64;
    const uint64_t cap = @CAP@;
    tile = cap > 0 && tile > cap ? cap : tile;
    const uint64_t need = (td->partLen + 63) / 64 * 64;
    tile = tile > need ? need : tile;
    tile = tile > 65536 - 64 ? 65536 - 64 : tile;
    const uint64_t normsLen = (td->tensors + 63) / 64 * 64;   // the accumulator holds the norms at the end
    tile = tile < normsLen ? normsLen : tile;
    td->tileElems = static_cast<uint32_t>(tile < 64 ? 64 : tile);

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize() + td->units * SLOT_FLOATS * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
