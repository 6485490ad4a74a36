"""Cumulative minimum / maximum with indices: `torch.cummin(x, dim)` / `torch.cummax(x, dim)`
lower to a kernel of their own:

    values[..., i, ...] = min(x[..., :i + 1, ...]) along dim; indices = where that value was taken

torch's rule, kept exactly: position i replaces the running value when x[i] is NaN, or when the
running value is not NaN and x[i] <= it (>= for cummax): a tie takes the later index, a NaN stays
until the next NaN. `dim` is an int attr. Every line along dim (a *lane*) is independent: lanes
are split over the cores and each runs in order on the scalar unit (GM reads and writes element
by element), for every dtype and any length; correct, not fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_SCANS = {"cummin": 0, "cummax": 1}


@dataclass
class ScanPlan:
    task: object
    pattern: str                      # "scan"
    op: str                           # "cummin" | "cummax"
    dim_rule: tuple                   # ("attr", name) | ("const", d)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def values_indices_op(gm, names, index_casts: tuple = ()):
    """The graph's one call of an op in `names` on its only input when the graph returns that
    call's (values, indices) pair and nothing else, else None. With `index_casts` (dtypes, e.g.
    (torch.int32,)) the indices may come back through one `_to_copy` to one of them."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    ops = [n for n in calls if _name(n) in names]
    if len(places) != 1 or len(ops) != 1 or ops[0].args[0] is not places[0]:
        return None
    s = ops[0]
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    if not isinstance(out, (list, tuple)) or len(out) != 2:
        return None
    out = list(out)
    cast = out[1]
    if (index_casts and cast.op == "call_function" and _name(cast) == "_to_copy" and len(cast.args) == 1
            and set(cast.kwargs) <= {"dtype"} and cast.kwargs.get("dtype") in index_casts):
        out[1] = cast.args[0]
    else:
        cast = None
    if any(not (o.op == "call_function" and _name(o) == "getitem" and o.args[0] is s and o.args[1] == k)
           for k, o in enumerate(out)):
        return None
    if any(c is not s and c is not cast and _name(c) != "getitem" for c in calls):
        return None
    return s


def _scan_of(gm):
    """(op, dim) when the graph is one cummin / cummax of its input returning (values, indices)."""
    s = values_indices_op(gm, _SCANS)
    return None if s is None else (_name(s), int(s.args[1]))


def plan_scan(task):
    """The scan plan of `task`, or None when its golden is not one cummin / cummax."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 1 or len(task.outputs) != 2 or not task.cases:
        return None
    try:
        first = _scan_of(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    dims = [first[1]]
    for case in task.cases[1:]:
        g = _scan_of(trace(task, case))
        if g is None or g[0] != first[0]:
            raise Unsupported(f"{task.name}: case {case.id} is not the {first[0]} the other cases are")
        dims.append(g[1])
    rule = None
    for a in task.attrs:
        if a.type == "int" and all(c.attrs.get(a.name, a.default) == d for c, d in zip(task.cases, dims)):
            rule = ("attr", a.name)
            break
    if rule is None:
        if len(set(dims)) != 1:
            raise Unsupported(f"{task.name}: the {first[0]} axis varies between cases and no int attr gives it")
        rule = ("const", dims[0])
    plan = ScanPlan(task, "scan", first[0], rule)
    for c in task.cases:
        if c.dtypes[0] not in ("float16", "bfloat16", "float32", "int32", "int16", "int8", "int64"):
            plan.unserved[c.id] = f"dtype {c.dtypes[0]}"
        elif len(c.shapes[0]) > 8:
            plan.unserved[c.id] = "more than 8 dims"
    return plan


def render(plan: ScanPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    if plan.dim_rule[0] == "attr":
        dim = f"*attrs->GetAttrPointer<int64_t>({[a.name for a in t.attrs].index(plan.dim_rule[1])})"
    else:
        dim = str(int(plan.dim_rule[1]))
    x, v, i = t.inputs[0].name, t.outputs[0].name, t.outputs[1].name
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@SCAN@", plan.op), ("@BETTER@", "<=" if plan.op == "cummin" else ">="),
                     ("@XT@", _macro_of(x)), ("@X@", _ident(x)), ("@V@", _ident(v)), ("@I@", _ident(i)),
                     ("@DIM@", dim), ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@SPLIT@", core_split(knobs, "td->lanes * td->lineLen", "td->lanes"))):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: scan, @SCAN@ along dim with indices (torch's rule: position i takes over when @X@[i]
// is NaN, or when the running value is not NaN and @X@[i] @BETTER@ it: a tie takes the later index).
// Every line along dim is independent: lines are split over the cores, each runs in order on the
// scalar unit.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MAX_DIMS = 8;

struct @T@ {
    uint32_t laneDims;                  // dims other than dim
    uint64_t laneShape[MAX_DIMS];
    int64_t laneStride[MAX_DIMS];
    uint64_t lineLen;                   // length along dim
    int64_t lineStride;                 // stride along dim
    uint64_t lanes;
    uint64_t numel;
    uint64_t formerNum;                 // cores taking formerUnits lanes; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR valuesAddr, GM_ADDR indicesAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), td_.numel);
        valuesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(valuesAddr), td_.numel);
        indicesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(indicesAddr), td_.numel);
@UNIT_RANGE@    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            Lane(unitStart_ + u);
        }
    }

private:
    __aicore__ inline void Lane(uint64_t lane)
    {
        int64_t at = 0;
        for (int32_t d = static_cast<int32_t>(td_.laneDims) - 1; d >= 0; --d) {
            at += static_cast<int64_t>(lane % td_.laneShape[d]) * td_.laneStride[d];
            lane /= td_.laneShape[d];
        }
        using W = typename std::conditional<std::is_floating_point<Elem>::value || std::is_integral<Elem>::value,
                                            Elem, float>::type;
        W best = static_cast<W>(0);
        int64_t bestAt = 0;
        for (uint64_t i = 0; i < td_.lineLen; ++i) {
            const Elem raw = xGm_.GetValue(static_cast<uint64_t>(at));
            const W v = static_cast<W>(raw);
            if (i == 0 || v != v || (best == best && v @BETTER@ best)) {
                best = v;
                bestAt = static_cast<int64_t>(i);
                running_ = raw;
            }
            valuesGm_.SetValue(static_cast<uint64_t>(at), running_);
            indicesGm_.SetValue(static_cast<uint64_t>(at), bestAt);
            at += td_.lineStride;
        }
    }

    GlobalTensor<Elem> xGm_;
    GlobalTensor<Elem> valuesGm_;
    GlobalTensor<int64_t> indicesGm_;
    Elem running_{};
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(GM_ADDR @X@, GM_ADDR @V@, GM_ADDR @I@, GM_ADDR workspace,
                                                     GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @V@, @I@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(shape.GetDimNum());
    if (rank > static_cast<int32_t>(MAX_DIMS)) {
        return ge::GRAPH_FAILED;
    }
    int64_t dim = @DIM@;
    dim = dim < 0 ? dim + (rank > 0 ? rank : 1) : dim;
    if (dim < 0 || dim >= (rank > 0 ? rank : 1)) {
        return ge::GRAPH_FAILED;
    }
    int64_t st[MAX_DIMS];
    int64_t n = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
        st[d] = n;
        n *= shape.GetDim(d);
    }
    td->numel = static_cast<uint64_t>(n);
    td->lineLen = rank > 0 ? static_cast<uint64_t>(shape.GetDim(dim)) : 1;
    td->lineStride = rank > 0 ? st[dim] : 1;
    td->lanes = 1;
    uint32_t ld = 0;
    for (int32_t d = 0; d < rank; ++d) {
        if (d == dim || shape.GetDim(d) == 1) {
            continue;
        }
        td->laneShape[ld] = static_cast<uint64_t>(shape.GetDim(d));
        td->laneStride[ld] = st[d];
        td->lanes *= td->laneShape[ld];
        ++ld;
    }
    td->laneDims = ld;
    if (td->numel == 0) {
        td->lanes = 0;
    }
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint32_t coreNum = platform.GetCoreNumAiv();
@SPLIT@    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
