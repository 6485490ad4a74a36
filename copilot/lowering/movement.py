"""Layout transforms: a golden that only views its input (axis permutations; slices with steps,
selected indices and new unit axes), then `.contiguous()` / `.clone()`, lowers to a pure
data-movement kernel.

No arithmetic touches the data, so every dtype moves as bits (8-byte elements as uint32 pairs,
1-byte ones through half for the UB gather). The view is a run-time rule read in the tiling
function: for a permutation an int-list attr (`perm`), two int attrs swapped (`transpose(x, d0,
d1)`) or one literal permutation; for slices TF StridedSlice attrs (begin / end / strides and five
bit masks), checked against every case's traced view. The tiling function builds the output as a
strided view of the input (dims, input strides, offset), drops unit dims, merges dims that stay one
contiguous run, then picks a mode:
- MODE_RUNS: the output's last dim walks the input contiguously: whole rows are copied, many per
  DataCopyPad when they sit at a fixed input stride (the output rows are contiguous);
- MODE_TRANSPOSE: the output's last axis is another input axis: a tile of tileA x tileB elements
  (tileA along the output's last axis, tileB along the input's) is read as tileA input rows,
  transposed in UB with one Gather over a byte-offset table built once per core, and written as
  tileB output rows;
- MODE_STRIDED: the output's last axis steps 2..8 elements through the input: each row's window is
  read whole and every step-th element gathered (the same table machinery).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported

# aten ops a layout transform may contain besides its permutations
_PASS = {"clone", "contiguous", "alias", "detach", "lift_fresh_copy", "lift_fresh", "alias_copy"}
_PERMUTE = {"permute", "transpose", "t", "swapaxes", "numpy_T", "permute_copy", "transpose_copy", "mT"}


@dataclass
class MovementPlan:
    task: object
    pattern: str                      # "layout"
    rule: tuple                       # ("attr", name) | ("swap", a, b) | ("const", perm)
    perms: list[tuple]                # per case, the permutation traced
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _name(n) -> str:
    return str(getattr(n.target, "__name__", n.target)).split(".")[0]


def plan_movement(task):
    """The layout plan of `task`, or None when its golden is not a pure view of its input (an axis
    permutation, or slices / selected indices / new unit axes)."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 1 or len(task.outputs) != 1 or not task.cases:
        return None
    try:
        gm = trace(task, task.cases[0])
    except Unsupported:
        return None
    if _perm_of(gm) is not None:
        perms = [_perm_of(gm)]
        for case in task.cases[1:]:
            p = _perm_of(trace(task, case))
            if p is None:
                raise Unsupported(f"{task.name}: case {case.id} is not the axis permutation the other cases are")
            perms.append(p)
        plan = MovementPlan(task, "layout", _rule(task, perms), perms)
    elif _view_of(gm, task.cases[0].shapes[0]) is not None:
        views = [_view_of(gm, task.cases[0].shapes[0])]
        for case in task.cases[1:]:
            v = _view_of(trace(task, case), case.shapes[0])
            if v is None:
                raise Unsupported(f"{task.name}: case {case.id} is not a view of its input as the other cases are")
            views.append(v)
        plan = MovementPlan(task, "layout", _slice_rule(task, views), [])
    else:
        return None
    for c in task.cases:
        if len(c.shapes[0]) > 8:
            plan.unserved[c.id] = "more than 8 dims"
    return plan


_VIEW_OPS = {"slice", "select", "unsqueeze", "squeeze", "permute", "transpose", "t", "view", "reshape",
             "_unsafe_view", "expand", "narrow"}


def _view_of(gm, shape):
    """(sizes, strides, offset) of the graph's output as a strided view of its contiguous input,
    replayed on meta tensors; None when an op is not a view."""
    import torch

    vals = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if vals:
                return None
            vals[n] = torch.empty(tuple(shape), device="meta")
            continue
        if n.op == "output":
            out = n.args[0]
            out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
            v = vals.get(out)
            return None if v is None else (tuple(v.shape), tuple(v.stride()), int(v.storage_offset()))
        if n.op != "call_function" or not n.args or n.args[0] not in vals:
            return None
        name = _name(n)
        if name in _PASS:
            vals[n] = vals[n.args[0]]
        elif name in _VIEW_OPS:
            args = [vals.get(a, a) if hasattr(a, "op") else a for a in n.args]
            try:
                if name in ("view", "reshape", "_unsafe_view"):
                    v = args[0].view(args[1])       # a reshape that would copy is not a view
                else:
                    v = n.target(*args, **n.kwargs)
            except Exception:
                return None
            vals[n] = v
        else:
            return None
    return None


# TF-style StridedSlice attrs: begin / end / strides lists and five bit masks over their positions
_TF_LISTS = ("begin", "end", "strides")
_TF_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "shrink_axis_mask", "new_axis_mask")


def tf_slice_view(shape, attrs: dict):
    """The view x[...] that TF StridedSlice attrs select: (sizes, strides, offset), or None when
    the attrs are out of range. Mask bits index the attr lists: new axis, ellipsis (covering the dims
    the other entries leave), shrink (an index), begin/end masks (the axis start / end); negative
    begin/end count from the end; entries past the lists take whole axes."""
    begin, end, steps = (list(attrs.get(k) or []) for k in _TF_LISTS)
    bm, em, elm, sm, nm = (int(attrs.get(k) or 0) for k in _TF_MASKS)
    ndim, nb = len(shape), len(begin)
    inner = [1] * ndim
    for d in range(ndim - 2, -1, -1):
        inner[d] = inner[d + 1] * shape[d + 1]
    ell = next((i for i in range(32) if elm >> i & 1), None)
    n_new = sum(1 for i in range(nb) if nm >> i & 1)
    n_ell = max(0, ndim - (nb - n_new - 1)) if ell is not None else 0
    sizes, strides, offset = [], [], 0
    d = p = 0
    while d < ndim or p < nb:
        if p < nb and nm >> p & 1:
            sizes.append(1)
            strides.append(0)
            p += 1
        elif ell is not None and p == ell:
            for _ in range(n_ell):
                if d < ndim:
                    sizes.append(shape[d])
                    strides.append(inner[d])
                d += 1
            p += 1
        elif d < ndim and p < nb:
            size = shape[d]
            b = begin[p]
            e = end[p] if p < len(end) else size
            s = steps[p] if p < len(steps) else 1
            b = b + size if b < 0 else b
            e = e + size if e < 0 else e
            if bm >> p & 1:
                b = 0 if s > 0 else size - 1
            if em >> p & 1:
                e = size if s > 0 else -1
            if s <= 0:
                return None
            if sm >> p & 1:
                b = b + size if b < 0 else b
                if not 0 <= b < size:
                    return None
                offset += b * inner[d]
            else:
                b = min(max(b + size if b < 0 else b, 0), size)
                e = min(max(e + size if e < 0 else e, 0), size)
                sizes.append(max(0, -(-(e - b) // s)))
                strides.append(inner[d] * s)
                offset += b * inner[d]
            d += 1
            p += 1
        elif d < ndim:
            sizes.append(shape[d])
            strides.append(inner[d])
            d += 1
        else:
            p += 1
    return tuple(sizes), tuple(strides), offset


def _same_view(a, b) -> bool:
    """Equal as strided views (the stride of a unit dim does not matter)."""
    return a[0] == b[0] and a[2] == b[2] and all(s == t for n, s, t in zip(a[0], a[1], b[1]) if n != 1)


def _slice_rule(task, views) -> tuple:
    names = {a.name: i for i, a in enumerate(task.attrs)}
    kinds = {a.name: a.type for a in task.attrs}
    if all(names.get(k) is not None and kinds[k] == "list_int" for k in _TF_LISTS) and \
            all(kinds.get(k, "int") == "int" for k in _TF_MASKS):
        if all(_same_view(tf_slice_view(c.shapes[0], c.attrs) or ((), (), -1), v) for c, v in zip(task.cases, views)):
            return ("tf_slice", tuple(names.get(k, -1) for k in _TF_LISTS + _TF_MASKS))
    raise Unsupported(f"{task.name}: the golden slices its input, and no attrs give the slices at run time "
                      "(TF StridedSlice attrs: begin/end/strides lists and bit masks)")


def _perm_of(gm):
    """The permutation a graph applies to its one input (output dim k = input dim p[k]), or None."""
    order = None
    vals = {}
    for n in gm.graph.nodes:
        if n.op == "placeholder":
            if order is not None:
                return None
            rank = len(n.meta["val"].shape)
            order = list(range(rank))
            vals[n] = order
            continue
        if n.op == "output":
            outs = n.args[0]
            outs = outs[0] if isinstance(outs, (list, tuple)) and len(outs) == 1 else outs
            return tuple(vals[outs]) if outs in vals else None
        if n.op != "call_function":
            return None
        name = _name(n)
        src = n.args[0] if n.args else None
        if src not in vals:
            return None
        cur = vals[src]
        r = len(cur)
        if name in _PASS:
            vals[n] = cur
        elif name in ("permute", "permute_copy"):
            vals[n] = [cur[d % r] for d in n.args[1]]
        elif name in ("transpose", "swapaxes", "transpose_copy"):
            a, b = n.args[1] % r, n.args[2] % r
            new = list(cur)
            new[a], new[b] = new[b], new[a]
            vals[n] = new
        elif name in ("t", "numpy_T", "mT"):
            new = list(cur)
            if name == "mT" or (name == "t" and r == 2):
                new[-1], new[-2] = new[-2], new[-1]
            else:
                new = new[::-1]
            vals[n] = new
        elif name == "_to_copy" and n.kwargs.get("dtype") in (None, n.args[0].meta["val"].dtype):
            vals[n] = cur
        else:
            return None
    return None


def _rule(task, perms) -> tuple:
    """How the tiling function finds the permutation of a case from its attrs."""
    for spec in task.attrs:
        vals = [c.attrs.get(spec.name) for c in task.cases]
        if all(isinstance(v, (list, tuple)) and len(v) == len(p) and
               all(isinstance(x, int) for x in v) and tuple(x % len(p) for x in v) == p
               for v, p in zip(vals, perms)):
            return ("attr", spec.name)
    ints = [a.name for a in task.attrs if a.type == "int"]
    for a in ints:
        for b in ints:
            if a != b and all(_swap(len(p), c.attrs.get(a), c.attrs.get(b)) == p for c, p in zip(task.cases, perms)):
                return ("swap", a, b)
    if len(set(perms)) == 1:
        return ("const", perms[0])
    raise Unsupported(f"{task.name}: the axis permutation differs between cases and no attr gives it "
                      "(an int list, or two int axes to swap)")


def _swap(rank, a, b):
    if not isinstance(a, int) or not isinstance(b, int):
        return None
    p = list(range(rank))
    p[a % rank], p[b % rank] = p[b % rank], p[a % rank]
    return tuple(p)


# ---------------------------------------------------------------------------------------------- render

def render(plan: MovementPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    T = f"{cls}TilingData"
    x, y = t.inputs[0].name, t.outputs[0].name
    xt, yt = _macro_of(x), _macro_of(y)
    text = _KERNEL
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", T), ("@K@", f"Kernel{cls}"),
                     ("@XT@", xt), ("@YT@", yt), ("@X@", _ident(x)), ("@Y@", _ident(y)),
                     ("@RULE@", _rule_comment(plan.rule))):
        text = text.replace(key, val)
    text += "\n" + _tiling(plan, knobs, T, _dtype_bytes_fn()) + "\n\n"
    text += task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


def _rule_comment(rule) -> str:
    if rule[0] == "attr":
        return f"the int-list attr `{rule[1]}` (output dim k is input dim {rule[1]}[k])"
    if rule[0] == "swap":
        return f"input dims `{rule[1]}` and `{rule[2]}` swapped"
    return f"the fixed permutation {list(rule[1])}"


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: layout (an axis permutation: output dim k is input dim perm[k]); the permutation is
// @RULE@. No arithmetic touches the data: elements move as bits.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MAX_DIMS = 8;
constexpr uint32_t MODE_RUNS = 0;       // the input's last axis stays last: rows copied whole
constexpr uint32_t MODE_TRANSPOSE = 1;  // the output's last axis is another input axis: tiles transposed in UB
constexpr uint32_t MODE_STRIDED = 2;    // the output's last axis steps through the input: strided lanes gathered

struct @T@ {
    uint32_t mode;
    uint32_t bufferNum;
    uint32_t outerDims;                 // dims a unit of work indexes besides its tile (collapsed)
    uint32_t elemBytes;
    uint64_t outerShape[MAX_DIMS];
    int64_t outerInStride[MAX_DIMS];    // element strides of those dims in the input ...
    int64_t outerOutStride[MAX_DIMS];   // ... and in the output
    uint64_t tilesPerOuter;             // tiles per outer position
    // MODE_RUNS: `rows` output rows of `runLen` contiguous elements; consecutive rows are
    // `rowInStride` apart in the input; a tile is `tileRows` rows, or one `runChunk` of a long row
    uint64_t runLen;
    uint64_t rows;
    int64_t rowInStride;
    uint32_t tileRows;
    uint32_t runChunk;
    uint32_t runChunks;
    // MODE_TRANSPOSE: lenA along the output's last axis (input stride aInStride), lenB along the
    // input's last axis (output stride bOutStride); tiles of tileA x tileB, UB rows padded to pitchB
    // (input tile) and pitchA (output tile) elements
    uint32_t tileA;
    uint64_t lenA;
    uint64_t lenB;
    int64_t aInStride;
    int64_t bOutStride;
    uint32_t tileB;
    uint32_t pitchA;
    uint32_t pitchB;
    uint32_t tilesB;
    // MODE_STRIDED: as MODE_RUNS, but consecutive output elements are `step` apart in the input:
    // a tile reads each row's window ((len - 1) * step + 1 elements, UB pitch pitchW) and gathers
    // every step-th element into rows of pitchL
    uint32_t step;
    uint32_t pitchW;
    uint32_t pitchL;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint64_t numel;                     // input elements
    uint64_t outNumel;
    int64_t baseOffset;                 // input element of the output's first element
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

// Elements move as units of their own width; 8-byte elements as two uint32 units.
using Elem = @XT@;
using Unit = std::conditional<sizeof(Elem) == 1, Elem,
             std::conditional<sizeof(Elem) == 2, uint16_t, uint32_t>::type>::type;
// The UB gather moves 16- and 32-bit lanes: 1-byte elements go through half (exact for every int8/uint8).
using Lane = std::conditional<sizeof(Elem) == 1, half, Unit>::type;

class @K@ {
    static constexpr uint32_t UNITS = sizeof(Elem) / sizeof(Unit);   // units per element

public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(xAddr), td_.numel * UNITS);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Unit*>(yAddr), td_.outNumel * UNITS);
        const uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        if (blockIdx < td_.formerNum) {
            unitStart_ = blockIdx * td_.formerUnits;
            unitCount_ = td_.formerUnits;
        } else {
            unitStart_ = td_.formerNum * td_.formerUnits + (blockIdx - td_.formerNum) * td_.tailUnits;
            unitCount_ = td_.tailUnits;
        }
        if (td_.mode == MODE_RUNS) {
            const uint32_t pitch = RowPitch(td_.runChunk);
            pipe_.InitBuffer(runQue_, td_.bufferNum, td_.tileRows * pitch * sizeof(Elem));
        } else if (td_.mode == MODE_TRANSPOSE) {
            InitGather(td_.tileA * td_.pitchB, td_.tileB * td_.pitchA);
            BuildOffsets(td_.tileB, td_.pitchA, td_.tileA, td_.pitchB, 1);
        } else {
            InitGather(td_.tileRows * td_.pitchW, td_.tileRows * td_.pitchL);
            BuildOffsets(td_.tileRows, td_.pitchL, td_.runChunk, td_.step, td_.pitchW);
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            if (td_.mode == MODE_RUNS) {
                CopyRuns(unitStart_ + u);
            } else if (td_.mode == MODE_TRANSPOSE) {
                TransposeTile(unitStart_ + u);
            } else {
                StridedTile(unitStart_ + u);
            }
        }
    }

private:
    // Rows start 32-byte aligned in UB.
    __aicore__ inline uint32_t RowPitch(uint64_t elems) const
    {
        const uint32_t align = 32 / sizeof(Elem) > 0 ? 32 / sizeof(Elem) : 1;
        return static_cast<uint32_t>((elems + align - 1) / align * align);
    }

    // Input and output element offsets of outer position `outer` (mixed radix, innermost last).
    __aicore__ inline void OuterOffsets(uint64_t outer, int64_t& inOff, int64_t& outOff) const
    {
        inOff = td_.baseOffset;
        outOff = 0;
        for (int32_t d = static_cast<int32_t>(td_.outerDims) - 1; d >= 0; --d) {
            const uint64_t i = outer % td_.outerShape[d];
            outer /= td_.outerShape[d];
            inOff += static_cast<int64_t>(i) * td_.outerInStride[d];
            outOff += static_cast<int64_t>(i) * td_.outerOutStride[d];
        }
    }

    // Unit `unit` of the row modes: `nr` rows from row0, `len` elements from col0 (elements `step`
    // apart in the input), and where they start in the input and the output.
    __aicore__ inline void RowTile(uint64_t unit, uint32_t step, int64_t& inOff, int64_t& outOff,
                                   uint32_t& nr, uint32_t& len) const
    {
        OuterOffsets(unit / td_.tilesPerOuter, inOff, outOff);
        const uint64_t t = unit % td_.tilesPerOuter;
        const uint64_t row0 = (t / td_.runChunks) * td_.tileRows;
        const uint64_t col0 = (t % td_.runChunks) * td_.runChunk;
        const uint64_t nrLeft = td_.rows - row0;
        nr = static_cast<uint32_t>(nrLeft < td_.tileRows ? nrLeft : td_.tileRows);
        const uint64_t lenLeft = td_.runLen - col0;
        len = static_cast<uint32_t>(lenLeft < td_.runChunk ? lenLeft : td_.runChunk);
        inOff += static_cast<int64_t>(row0) * td_.rowInStride + static_cast<int64_t>(col0 * step);
        outOff += static_cast<int64_t>(row0 * td_.runLen + col0);
    }

    // MODE_RUNS: `nr` rows of `len` elements from the input (rows rowInStride apart) into UB,
    // then to the output, where the rows are contiguous.
    __aicore__ inline void CopyRuns(uint64_t unit)
    {
        int64_t inOff = 0;
        int64_t outOff = 0;
        uint32_t nr = 0;
        uint32_t len = 0;
        RowTile(unit, 1, inOff, outOff, nr, len);
        const uint32_t bytes = len * sizeof(Elem);
        LocalTensor<Unit> tile = runQue_.AllocTensor<Unit>();
        const uint32_t gap = nr > 1 ? static_cast<uint32_t>((td_.rowInStride - len) * sizeof(Elem)) : 0;
        DataCopyExtParams in(static_cast<uint16_t>(nr), bytes, gap, 0, 0);
        DataCopyPad(tile, xGm_[inOff * UNITS], in, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
        runQue_.EnQue(tile);
        tile = runQue_.DeQue<Unit>();
        DataCopyExtParams out(static_cast<uint16_t>(nr), bytes, 0,
                              static_cast<uint32_t>((td_.runLen - len) * sizeof(Elem)), 0);
        DataCopyPad(yGm_[outOff * UNITS], tile, out);
        runQue_.FreeTensor(tile);
    }

    __aicore__ inline void InitGather(uint32_t srcElems, uint32_t dstElems)
    {
        pipe_.InitBuffer(inQue_, td_.bufferNum, srcElems * sizeof(Elem));
        pipe_.InitBuffer(outQue_, td_.bufferNum, dstElems * sizeof(Elem));
        pipe_.InitBuffer(offsetBuf_, dstElems * UNITS * sizeof(uint32_t));
        if constexpr (sizeof(Elem) == 1) {
            pipe_.InitBuffer(laneInBuf_, srcElems * sizeof(half));
            pipe_.InitBuffer(laneOutBuf_, dstElems * sizeof(half));
        }
    }

    // Gather table (bytes) of an output tile of `rows` rows at `pitch`: lane (j, i, h) reads
    // source element i * q + j * p (unit h of it); lanes past `valid` repeat the last valid one so
    // every read stays in the source tile. Transpose: q = pitchB, p = 1; strided: q = step, p = pitchW.
    __aicore__ inline void BuildOffsets(uint32_t rows, uint32_t pitch, uint32_t valid, uint32_t q, uint32_t p)
    {
        offsets_ = offsetBuf_.Get<uint32_t>();
        const uint32_t rowLanes = pitch * UNITS;
        for (uint32_t i = 0; i < pitch; ++i) {
            const uint32_t src = (i < valid ? i : valid - 1) * q;
            for (uint32_t h = 0; h < UNITS; ++h) {
                offsets_.SetValue(i * UNITS + h, (src * UNITS + h) * sizeof(Lane));
            }
        }
        SyncPipes<HardEvent::S_V>();
        LocalTensor<int32_t> table = offsets_.ReinterpretCast<int32_t>();
        for (uint32_t j = 1; j < rows; ++j) {
            Adds(table[j * rowLanes], table, static_cast<int32_t>(j * p * UNITS * sizeof(Lane)), rowLanes);
        }
    }

    // dst lanes from src through the table; 1-byte data goes through half (exact).
    __aicore__ inline void GatherLanes(const LocalTensor<Unit>& dst, const LocalTensor<Unit>& src,
                                       uint32_t srcElems, uint32_t lanes)
    {
        if constexpr (sizeof(Elem) == 1) {
            LocalTensor<half> laneIn = laneInBuf_.Get<half>();
            LocalTensor<half> laneOut = laneOutBuf_.Get<half>();
            Cast(laneIn, src, RoundMode::CAST_NONE, srcElems);
            Gather(laneOut, laneIn, offsets_, 0, lanes);
            Cast(dst, laneOut, RoundMode::CAST_RINT, lanes);
        } else {
            Gather(dst, src, offsets_, 0, lanes);
        }
    }

    // MODE_STRIDED: `nr` row windows in, the strided lanes gathered, `nr` rows of `len` out.
    __aicore__ inline void StridedTile(uint64_t unit)
    {
        int64_t inOff = 0;
        int64_t outOff = 0;
        uint32_t nr = 0;
        uint32_t len = 0;
        RowTile(unit, td_.step, inOff, outOff, nr, len);
        const uint32_t window = (len - 1) * td_.step + 1;

        GatherTile(inOff, nr, window, td_.rowInStride, td_.pitchW, td_.tileRows * td_.pitchW,
                   outOff, nr, len, static_cast<int64_t>(td_.runLen), td_.pitchL, td_.tileRows * td_.pitchL * UNITS);
    }

    // MODE_TRANSPOSE: a tileA x tileB block (input rows along the output's last axis) in, one
    // Gather, tileB rows of the output out.
    __aicore__ inline void TransposeTile(uint64_t unit)
    {
        int64_t inOff = 0;
        int64_t outOff = 0;
        OuterOffsets(unit / td_.tilesPerOuter, inOff, outOff);
        const uint64_t t = unit % td_.tilesPerOuter;
        const uint64_t a0 = (t / td_.tilesB) * td_.tileA;
        const uint64_t b0 = (t % td_.tilesB) * td_.tileB;
        const uint32_t na = static_cast<uint32_t>(td_.lenA - a0 < td_.tileA ? td_.lenA - a0 : td_.tileA);
        const uint32_t nb = static_cast<uint32_t>(td_.lenB - b0 < td_.tileB ? td_.lenB - b0 : td_.tileB);
        inOff += static_cast<int64_t>(a0) * td_.aInStride + static_cast<int64_t>(b0);
        outOff += static_cast<int64_t>(b0) * td_.bOutStride + static_cast<int64_t>(a0);

        GatherTile(inOff, na, nb, td_.aInStride, td_.pitchB, td_.tileA * td_.pitchB,
                   outOff, nb, na, td_.bOutStride, td_.pitchA, td_.tileB * td_.pitchA * UNITS);
    }

    // `inRows` input rows of `inLen` elements (`inStride` apart in GM) into UB rows of `inPitch`,
    // `lanes` gathered through the table, `outRows` rows of `outLen` out (`outStride` apart in GM).
    __aicore__ inline void GatherTile(int64_t inOff, uint32_t inRows, uint32_t inLen, int64_t inStride,
                                      uint32_t inPitch, uint32_t srcElems, int64_t outOff, uint32_t outRows,
                                      uint32_t outLen, int64_t outStride, uint32_t outPitch, uint32_t lanes)
    {
        LocalTensor<Unit> src = inQue_.AllocTensor<Unit>();
        const uint32_t inRowBytes = inLen * sizeof(Elem);
        DataCopyExtParams in(static_cast<uint16_t>(inRows), inRowBytes,
                             inRows > 1 ? static_cast<uint32_t>((inStride - inLen) * sizeof(Elem)) : 0,
                             (inPitch * sizeof(Elem) - (inRowBytes + 31) / 32 * 32) / 32, 0);
        DataCopyPad(src, xGm_[inOff * UNITS], in, DataCopyPadExtParams<Unit>(false, 0, 0, 0));
        inQue_.EnQue(src);
        src = inQue_.DeQue<Unit>();
        LocalTensor<Unit> dst = outQue_.AllocTensor<Unit>();
        GatherLanes(dst, src, srcElems, lanes);
        inQue_.FreeTensor(src);
        outQue_.EnQue(dst);
        dst = outQue_.DeQue<Unit>();
        const uint32_t outRowBytes = outLen * sizeof(Elem);
        DataCopyExtParams out(static_cast<uint16_t>(outRows), outRowBytes,
                              (outPitch * sizeof(Elem) - (outRowBytes + 31) / 32 * 32) / 32,
                              outRows > 1 ? static_cast<uint32_t>((outStride - outLen) * sizeof(Elem)) : 0, 0);
        DataCopyPad(yGm_[outOff * UNITS], dst, out);
        outQue_.FreeTensor(dst);
    }

    template <HardEvent EVT>
    __aicore__ inline void SyncPipes()
    {
        const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(EVT));
        SetFlag<EVT>(id);
        WaitFlag<EVT>(id);
    }

    TPipe pipe_;
    TQueBind<QuePosition::VECIN, QuePosition::VECOUT, 2> runQue_;
    TQue<QuePosition::VECIN, 2> inQue_;
    TQue<QuePosition::VECOUT, 2> outQue_;
    TBuf<QuePosition::VECCALC> offsetBuf_;
    TBuf<QuePosition::VECCALC> laneInBuf_;
    TBuf<QuePosition::VECCALC> laneOutBuf_;
    LocalTensor<uint32_t> offsets_;
    GlobalTensor<Unit> xGm_;
    GlobalTensor<Unit> yGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(GM_ADDR @X@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @Y@, tilingData);
    op.Process();
}
"""


def _tiling(plan: MovementPlan, knobs: dict, T: str, dtype_bytes: str) -> str:
    t = plan.task
    rule = plan.rule
    idx = {a.name: i for i, a in enumerate(t.attrs)}
    if rule[0] == "tf_slice":
        view = _TF_VIEW
        for key, i in zip(("@BEGIN@", "@END@", "@STRIDES@", "@BM@", "@EM@", "@ELM@", "@SM@", "@NM@"), rule[1]):
            view = view.replace(key, str(i))
    else:
        if rule[0] == "attr":
            perm = (f"    const gert::TypedContinuousVector<int64_t>* permAttr = attrs->GetListInt({idx[rule[1]]});\n"
                    f"    if (permAttr == nullptr || static_cast<int32_t>(permAttr->GetSize()) != rank) {{\n"
                    f"        return ge::GRAPH_FAILED;\n"
                    f"    }}\n"
                    f"    for (int32_t k = 0; k < rank; ++k) {{\n"
                    f"        perm[k] = permAttr->GetData()[k];\n"
                    f"    }}\n")
        elif rule[0] == "swap":
            perm = (f"    for (int32_t k = 0; k < rank; ++k) {{\n"
                    f"        perm[k] = k;\n"
                    f"    }}\n"
                    f"    int64_t d0 = *attrs->GetAttrPointer<int64_t>({idx[rule[1]]});\n"
                    f"    int64_t d1 = *attrs->GetAttrPointer<int64_t>({idx[rule[2]]});\n"
                    f"    d0 = d0 < 0 ? d0 + rank : d0;\n"
                    f"    d1 = d1 < 0 ? d1 + rank : d1;\n"
                    f"    if (d0 < 0 || d0 >= rank || d1 < 0 || d1 >= rank) {{\n"
                    f"        return ge::GRAPH_FAILED;\n"
                    f"    }}\n"
                    f"    perm[d0] = d1;\n"
                    f"    perm[d1] = d0;\n")
        else:
            p = rule[1]
            perm = (f"    static const int64_t kPerm[{len(p)}] = {{{', '.join(map(str, p))}}};\n"
                    f"    if (rank != {len(p)}) {{\n"
                    f"        return ge::GRAPH_FAILED;\n"
                    f"    }}\n"
                    f"    for (int32_t k = 0; k < rank; ++k) {{\n"
                    f"        perm[k] = kPerm[k];\n"
                    f"    }}\n")
        view = _PERM_VIEW.replace("@PERM@", perm)
    policy = knobs["block_dim_policy"]
    if policy == "all_cores":
        block = "    uint64_t blockDim = coreNum;\n"
    elif policy == "half_cores":
        block = "    uint64_t blockDim = coreNum / 2 > 0 ? coreNum / 2 : 1;\n"
    else:
        block = (f"    uint64_t blockDim = (td->outNumel + {knobs['min_work_elems']} - 1) / {knobs['min_work_elems']};\n"
                 f"    blockDim = blockDim > coreNum ? coreNum : blockDim;\n")
    cap = int(knobs["tile_elems"])
    text = _TILING
    for key, val in (("@T@", T), ("@DTYPE_BYTES@", dtype_bytes), ("@VIEW@", view), ("@BLOCK@", block),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(cap))):
        text = text.replace(key, val)
    return text


_PERM_VIEW = r"""    // an axis permutation: output dim k is input dim perm[k]
    int64_t perm[MAX_DIMS] = {0};
@PERM@    bool seen[MAX_DIMS] = {false};
    for (int32_t k = 0; k < rank; ++k) {
        perm[k] = perm[k] < 0 ? perm[k] + rank : perm[k];
        if (perm[k] < 0 || perm[k] >= rank || seen[perm[k]]) {
            return ge::GRAPH_FAILED;   // the permutation must name every input dim once
        }
        seen[perm[k]] = true;
        vDims[k] = inDims[perm[k]];
        vSt[k] = inStride[perm[k]];
    }
    vn = rank;"""

# TF StridedSlice semantics, as `tf_slice_view` in the lowering states them.
_TF_VIEW = r"""    // TF StridedSlice attrs: begin / end / strides, and bit masks over their positions
    const gert::TypedContinuousVector<int64_t>* beginAttr = attrs->GetListInt(@BEGIN@);
    const gert::TypedContinuousVector<int64_t>* endAttr = attrs->GetListInt(@END@);
    const gert::TypedContinuousVector<int64_t>* stepAttr = attrs->GetListInt(@STRIDES@);
    if (beginAttr == nullptr || endAttr == nullptr || stepAttr == nullptr) {
        return ge::GRAPH_FAILED;
    }
    auto maskAttr = [&](int32_t i) -> int64_t {
        const int64_t* v = i < 0 ? nullptr : attrs->GetInt(static_cast<size_t>(i));
        return v == nullptr ? 0 : *v;
    };
    const int64_t beginMask = maskAttr(@BM@), endMask = maskAttr(@EM@), ellipsisMask = maskAttr(@ELM@);
    const int64_t shrinkMask = maskAttr(@SM@), newAxisMask = maskAttr(@NM@);
    const int64_t nb = static_cast<int64_t>(beginAttr->GetSize());
    const int64_t ne = static_cast<int64_t>(endAttr->GetSize());
    const int64_t ns = static_cast<int64_t>(stepAttr->GetSize());
    auto bit = [](int64_t mask, int64_t p) { return p < 63 && ((mask >> p) & 1) != 0; };
    int64_t ellipsis = -1;      // the first ellipsis bit covers the dims the other entries leave
    for (int64_t i = 0; i < 32 && ellipsis < 0; ++i) {
        ellipsis = bit(ellipsisMask, i) ? i : -1;
    }
    int64_t newAxes = 0;
    for (int64_t i = 0; i < nb; ++i) {
        newAxes += bit(newAxisMask, i) ? 1 : 0;
    }
    int64_t ellipsisDims = ellipsis >= 0 ? rank - (nb - newAxes - 1) : 0;
    ellipsisDims = ellipsisDims < 0 ? 0 : ellipsisDims;
    int32_t d = 0;
    int64_t p = 0;
    while (d < rank || p < nb) {
        if (vn >= static_cast<int32_t>(2 * MAX_DIMS)) {
            return ge::GRAPH_FAILED;
        }
        if (p < nb && bit(newAxisMask, p)) {            // a new unit axis
            vDims[vn] = 1;
            vSt[vn] = 0;
            ++vn;
            ++p;
        } else if (p == ellipsis) {                    // whole axes
            for (int64_t k = 0; k < ellipsisDims && d < rank && vn < static_cast<int32_t>(2 * MAX_DIMS); ++k, ++d) {
                vDims[vn] = inDims[d];
                vSt[vn] = inStride[d];
                ++vn;
            }
            ++p;
        } else if (d < rank && p < nb) {
            const int64_t size = static_cast<int64_t>(inDims[d]);
            int64_t b = beginAttr->GetData()[p];
            int64_t e = p < ne ? endAttr->GetData()[p] : size;
            const int64_t s = p < ns ? stepAttr->GetData()[p] : 1;
            if (s <= 0) {
                return ge::GRAPH_FAILED;   // torch slices forward only
            }
            b = b < 0 ? b + size : b;
            e = e < 0 ? e + size : e;
            b = bit(beginMask, p) ? 0 : b;
            e = bit(endMask, p) ? size : e;
            if (bit(shrinkMask, p)) {                  // one index: the axis goes
                b = b < 0 ? b + size : b;
                if (b < 0 || b >= size) {
                    return ge::GRAPH_FAILED;
                }
                base += b * inStride[d];
            } else {                                   // Python slice rules: clamped to the axis
                b = b < 0 ? b + size : b;
                e = e < 0 ? e + size : e;
                b = b < 0 ? 0 : (b > size ? size : b);
                e = e < 0 ? 0 : (e > size ? size : e);
                vDims[vn] = static_cast<uint64_t>(e > b ? (e - b + s - 1) / s : 0);
                vSt[vn] = inStride[d] * s;
                base += b * inStride[d];
                ++vn;
            }
            ++d;
            ++p;
        } else if (d < rank) {                         // past the lists: whole axes
            vDims[vn] = inDims[d];
            vSt[vn] = inStride[d];
            ++vn;
            ++d;
        } else {
            ++p;
        }
    }"""

_TILING = r"""namespace optiling {
@DTYPE_BYTES@

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    @T@* td = context->GetTilingData<@T@>();
    if (td == nullptr) {
        return ge::GRAPH_FAILED;
    }
    std::memset(td, 0, sizeof(@T@));
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    (void)attrs;
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(shape.GetDimNum());
    if (rank > static_cast<int32_t>(MAX_DIMS)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t inDims[MAX_DIMS];
    int64_t inStride[MAX_DIMS];
    uint64_t numel = 1;
    for (int32_t d = rank - 1; d >= 0; --d) {
        inDims[d] = static_cast<uint64_t>(shape.GetDim(d));
        inStride[d] = static_cast<int64_t>(numel);
        numel *= inDims[d];
    }
    td->numel = numel;
    td->elemBytes = DtypeBytes(context->GetInputDesc(0)->GetDataType());
    const uint64_t eb = td->elemBytes;

    // The output as a strided view of the input: its dims in order, their input element strides,
    // and the input offset of its first element.
    uint64_t vDims[2 * MAX_DIMS];
    int64_t vSt[2 * MAX_DIMS];
    int32_t vn = 0;
    int64_t base = 0;
@VIEW@
    td->baseOffset = base;
    td->outNumel = 1;
    for (int32_t k = 0; k < vn; ++k) {
        td->outNumel *= vDims[k];
    }
    if (td->outNumel != static_cast<uint64_t>(context->GetOutputShape(0)->GetStorageShape().GetShapeSize())) {
        return ge::GRAPH_FAILED;   // the output shape is not the view's
    }
    if (td->outNumel == 0) {       // nothing to move
        td->mode = MODE_RUNS;
        td->bufferNum = 1;
        td->tileRows = 1;
        td->runChunk = 1;
        td->runChunks = 1;
        context->SetBlockDim(1);
        size_t* ws = context->GetWorkspaceSizes(1);
        ws[0] = 0;
        return ge::GRAPH_SUCCESS;
    }

    // Unit dims dropped; an output dim that steps through the input contiguously after the
    // previous one merges into it (they stay one run).
    uint64_t dims[MAX_DIMS];
    int64_t st[MAX_DIMS];
    int32_t n = 0;
    for (int32_t k = 0; k < vn; ++k) {
        if (vDims[k] == 1) {
            continue;
        }
        if (n > 0 && st[n - 1] == vSt[k] * static_cast<int64_t>(vDims[k])) {
            dims[n - 1] *= vDims[k];
            st[n - 1] = vSt[k];
            continue;
        }
        if (n == static_cast<int32_t>(MAX_DIMS) - 1) {
            return ge::GRAPH_FAILED;
        }
        dims[n] = vDims[k];
        st[n] = vSt[k];
        ++n;
    }
    if (n == 0) {
        dims[0] = 1;
        st[0] = 1;
        n = 1;
    }
    bool unitStride = false;
    for (int32_t k = 0; k < n; ++k) {
        unitStride = unitStride || st[k] == 1;
    }
    // the last axis steps through the input a few elements at a time: strided lanes gathered in UB
    const bool strided = st[n - 1] >= 2 && st[n - 1] <= 8 && (n == 1 || st[n - 2] > 0);
    if (!unitStride && !strided) {
        // no output dim walks the input contiguously: rows of one element
        dims[n] = 1;
        st[n] = 1;
        ++n;
    }
    // output strides of the collapsed dims (the output is contiguous)
    int64_t os[MAX_DIMS];
    int64_t acc = 1;
    for (int32_t k = n - 1; k >= 0; --k) {
        os[k] = acc;
        acc *= static_cast<int64_t>(dims[k]);
    }

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 4096) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
    const uint64_t align = 32 / eb > 0 ? 32 / eb : 1;       // elements per 32-byte block
    uint64_t units = 0;
    uint32_t od = 0;

    if (st[n - 1] != 1 && !unitStride) {
        td->mode = MODE_STRIDED;
        td->step = static_cast<uint32_t>(st[n - 1]);
        td->runLen = dims[n - 1];
        td->rows = n >= 2 ? dims[n - 2] : 1;
        td->rowInStride = n >= 2 ? st[n - 2] : 0;
        for (int32_t k = 0; k + 2 < n; ++k) {
            td->outerShape[od] = dims[k];
            td->outerInStride[od] = st[k];
            td->outerOutStride[od] = os[k];
            ++od;
        }
        // per output element: its window share (step elements) and its own copy, double-buffered,
        // plus a uint32 offset per lane (and half staging for 1-byte data)
        const uint64_t laneBytes = eb == 8 ? 8 : 4;
        auto padded = [&](uint64_t v) { return (v + align - 1) / align * align; };
        auto rowBytes = [&](uint64_t len) {
            const uint64_t w = padded((len - 1) * td->step + 1);
            const uint64_t l = padded(len);
            return td->bufferNum * (w + l) * eb + l * laneBytes + (eb == 1 ? (w + l) * 2 : 0);
        };
        uint64_t chunk = td->runLen;
        if (@CAP@ > 0 && chunk > @CAP@) {
            chunk = @CAP@;
        }
        while (chunk > 1 && rowBytes(chunk) > budget) {
            chunk = (chunk + 1) / 2;
        }
        td->runChunk = static_cast<uint32_t>(chunk);
        td->runChunks = static_cast<uint32_t>((td->runLen + chunk - 1) / chunk);
        const uint64_t window = (chunk - 1) * td->step + 1;
        const bool batch = td->runChunks == 1 && td->rowInStride >= static_cast<int64_t>(window) &&
            static_cast<uint64_t>(td->rowInStride - static_cast<int64_t>(window)) * eb < (1ULL << 32);
        uint64_t nr = batch ? budget / rowBytes(chunk) : 1;
        nr = nr > 4095 ? 4095 : (nr == 0 ? 1 : nr);
        nr = nr > td->rows ? td->rows : nr;
        td->tileRows = static_cast<uint32_t>(nr);
        td->pitchW = static_cast<uint32_t>(padded(window));
        td->pitchL = static_cast<uint32_t>(padded(chunk));
        td->tilesPerOuter = ((td->rows + td->tileRows - 1) / td->tileRows) * td->runChunks;
    } else if (st[n - 1] == 1) {
        td->mode = MODE_RUNS;
        td->runLen = dims[n - 1];
        td->rows = n >= 2 ? dims[n - 2] : 1;
        td->rowInStride = n >= 2 ? st[n - 2] : 0;
        for (int32_t k = 0; k + 2 < n; ++k) {
            td->outerShape[od] = dims[k];
            td->outerInStride[od] = st[k];
            td->outerOutStride[od] = os[k];
            ++od;
        }
        // a tile: as many whole rows as the double-buffered queue holds, or a chunk of one row
        uint64_t tileElems = budget / (td->bufferNum * eb);
        if (@CAP@ > 0 && tileElems > @CAP@) {
            tileElems = @CAP@;
        }
        tileElems = tileElems / align * align;
        const uint64_t pitch = (td->runLen + align - 1) / align * align;
        // rows batch into one copy when their input stride is a forward gap that fits the copy's field
        const bool batch = td->rowInStride >= static_cast<int64_t>(td->runLen) &&
            static_cast<uint64_t>(td->rowInStride - static_cast<int64_t>(td->runLen)) * eb < (1ULL << 32);
        if (pitch <= tileElems) {
            uint64_t nr = batch ? tileElems / pitch : 1;
            nr = nr > 4095 ? 4095 : nr;
            nr = nr > td->rows ? td->rows : nr;
            td->tileRows = static_cast<uint32_t>(nr);
            td->runChunk = static_cast<uint32_t>(td->runLen);
            td->runChunks = 1;
        } else {
            td->tileRows = 1;
            td->runChunk = static_cast<uint32_t>(tileElems);
            td->runChunks = static_cast<uint32_t>((td->runLen + tileElems - 1) / tileElems);
        }
        td->tilesPerOuter = ((td->rows + td->tileRows - 1) / td->tileRows) * td->runChunks;
    } else {
        td->mode = MODE_TRANSPOSE;
        int32_t r = -1;          // output position of the input's last (stride 1) dim
        for (int32_t k = 0; k < n; ++k) {
            if (st[k] == 1) {
                r = k;
            }
        }
        if (r < 0) {
            return ge::GRAPH_FAILED;
        }
        td->lenA = dims[n - 1];
        td->aInStride = st[n - 1];
        td->lenB = dims[r];
        td->bOutStride = os[r];
        for (int32_t k = 0; k + 1 < n; ++k) {
            if (k == r) {
                continue;
            }
            td->outerShape[od] = dims[k];
            td->outerInStride[od] = st[k];
            td->outerOutStride[od] = os[k];
            ++od;
        }
        // A tile costs its input and output copies (double-buffered) plus one uint32 offset per
        // 16/32-bit lane (and two half staging tiles for 1-byte data). Start from 256 x 256 and
        // halve the longer side until it fits; a short axis lets the other grow.
        const uint64_t laneBytes = eb == 8 ? 8 : 4;
        uint64_t ta = td->lenA < 256 ? td->lenA : 256;
        uint64_t tb = td->lenB < 256 ? td->lenB : 256;
        auto padded = [&](uint64_t v) { return (v + align - 1) / align * align; };
        auto bytes = [&](uint64_t a, uint64_t b) {
            const uint64_t inTile = a * padded(b);
            const uint64_t outTile = b * padded(a);
            return td->bufferNum * (inTile + outTile) * eb + outTile * laneBytes +
                (eb == 1 ? (inTile + outTile) * 2 : 0);
        };
        while (bytes(ta, tb) > budget && (ta > 1 || tb > 1)) {
            if (ta >= tb) {
                ta = (ta + 1) / 2;
            } else {
                tb = (tb + 1) / 2;
            }
        }
        // grow the shorter side back while the longer one is clipped by the tensor
        while (ta < td->lenA && bytes(ta * 2, tb) <= budget && ta * 2 <= 4095) {
            ta *= 2;
        }
        while (tb < td->lenB && bytes(ta, tb * 2) <= budget && tb * 2 <= 4095) {
            tb *= 2;
        }
        ta = ta > td->lenA ? td->lenA : ta;
        tb = tb > td->lenB ? td->lenB : tb;
        td->tileA = static_cast<uint32_t>(ta);
        td->tileB = static_cast<uint32_t>(tb);
        td->pitchA = static_cast<uint32_t>(padded(ta));
        td->pitchB = static_cast<uint32_t>(padded(tb));
        td->tilesB = static_cast<uint32_t>((td->lenB + tb - 1) / tb);
        td->tilesPerOuter = ((td->lenA + ta - 1) / ta) * td->tilesB;
        if (static_cast<uint64_t>(td->aInStride) * eb >= (1ULL << 32) ||
            static_cast<uint64_t>(td->bOutStride) * eb >= (1ULL << 32)) {
            return ge::GRAPH_FAILED;   // a row gap past the copy's 32-bit stride field
        }
    }
    td->outerDims = od;
    uint64_t outer = 1;
    for (uint32_t k = 0; k < od; ++k) {
        outer *= td->outerShape[k];
    }
    units = outer * td->tilesPerOuter;

    // multi-core split with tail cores
@BLOCK@    blockDim = blockDim > units ? units : blockDim;
    blockDim = blockDim == 0 ? 1 : blockDim;
    td->formerNum = units % blockDim;
    td->formerUnits = (units + blockDim - 1) / blockDim;
    td->tailUnits = units / blockDim;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
