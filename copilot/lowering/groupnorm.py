"""Group normalisation (`F.group_norm`, traced as one `native_group_norm`) as a kernel of its own.

x is [N, C, *spatial]; its C channels form G groups of D = C / G channels, and each (sample,
group) is one contiguous run of L = D * S elements (S = the spatial size). Per group:
mean and biased variance over its L elements, then y = (x - mean) * rstd * gamma[c] + beta[c].

The kernel views x as rows in UB, each a contiguous GM run padded with zeros to 32 bytes:
- *channel rows* (S >= 64): a row is one channel's S positions, so the affine is two scalar
  instructions per row (`Muls` by rstd * gamma[c], `Adds` beta[c]); gamma and beta are staged in
  fp32 once per core;
- *group rows* (S < 64, e.g. [N, C] input with S = 1): a row is a whole group, and the affine
  multiplies by gamma and adds beta expanded per position (two tables of one sample, built once
  per core by a `Gather`), so one instruction covers every channel of the group.

Statistics are one read of the data: per tile, sum -> mean, then the centred squares (the
zero padding contributes mean^2 per pad lane, taken off exactly once), and tiles / parts are
combined with Chan's formula (count, mean, M2), which never subtracts two large sums.
Two modes, picked by the tiling function:
- MODE_RESIDENT: whole groups fit a tile: B groups per tile, read once, normalised in UB;
- MODE_STREAM: a group is cut into pieces (row blocks or chunks of one row) and the pieces into
  `parts` so every core works even when N x G is below the core count; phase 1 writes each part's
  (mean, M2) to a workspace slot, `SyncAll`, phase 2 combines the group's slots in order (the same
  bits on every core) and streams the pieces again through the affine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASS = {"_to_copy", "clone", "contiguous", "alias", "detach", "lift_fresh_copy", "view", "_unsafe_view"}


@dataclass
class GroupNormPlan:
    task: object
    pattern: str                      # "normalization"
    groups_rule: tuple                # ("attr", name) | ("const", G)
    eps_rule: tuple                   # ("attr", name) | ("const", eps)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: tuple = ("group", None)


def _source(n, places):
    """The placeholder `n` reads through conversions only, else None."""
    while n is not None and getattr(n, "op", None) == "call_function" and _name(n) in _PASS:
        n = n.args[0] if n.args else None
    return n if n in places else None


def _group_norm_of(gm):
    """(groups, eps) when the graph is one native_group_norm of (x, gamma, beta), else None."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(places) != 3:
        return None
    norms = [n for n in gm.graph.nodes if n.op == "call_function" and _name(n) == "native_group_norm"]
    if len(norms) != 1:
        return None
    g = norms[0]
    if [_source(a, places) for a in g.args[:3]] != places:
        return None
    for n in gm.graph.nodes:
        if n.op != "call_function" or n is g:
            continue
        if _name(n) == "getitem":
            if n.args[0] is not g or (n.args[1] != 0 and n.users):
                return None
        elif _name(n) not in _PASS:
            return None
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    out = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out
    while getattr(out, "op", None) == "call_function" and _name(out) in _PASS:
        out = out.args[0]
    if not (getattr(out, "op", None) == "call_function" and _name(out) == "getitem" and out.args[:2] == (g, 0)):
        return None
    groups, eps = g.args[6], g.args[7]
    if not isinstance(groups, int) or not isinstance(eps, float):
        return None
    return groups, eps


def plan_group_norm(task):
    """The group-norm plan of `task`, or None when its golden is not one group norm of its inputs."""
    from copilot.lowering.capture import SENTINELS, trace

    if len(task.inputs) != 3 or len(task.outputs) != 1 or not task.cases:
        return None
    if any(getattr(i, "is_list", False) or getattr(i, "optional", False) for i in task.inputs):
        return None
    try:
        first = _group_norm_of(trace(task, task.cases[0]))
    except Unsupported:
        return None
    if first is None:
        return None
    found = []
    for c in task.cases:
        f = _group_norm_of(trace(task, c)) if c is not task.cases[0] else first
        if f is None:
            raise Unsupported(f"{task.name}: case {c.id} is not the group norm case {task.cases[0].id} is")
        if any(d not in ("float16", "bfloat16", "float32") for d in c.dtypes):
            raise Unsupported(f"{task.name}: case {c.id} has {c.dtypes} data; the group-norm kernel takes float data")
        if len(c.shapes[0]) < 2 or list(c.shapes[1]) != [c.shapes[0][1]] or list(c.shapes[2]) != [c.shapes[0][1]]:
            raise Unsupported(f"{task.name}: case {c.id}: gamma and beta are not [C] of x's channel axis")
        found.append(f)
    groups = None
    for a in task.attrs:
        vals = [c.attrs.get(a.name, a.default) for c in task.cases]
        if a.type == "int" and all(isinstance(v, int) and v == f[0] for v, f in zip(vals, found)):
            groups = ("attr", a.name)
            break
    if groups is None:
        if len({f[0] for f in found}) != 1:
            raise Unsupported(f"{task.name}: the group count varies between cases and no int attr gives it")
        groups = ("const", found[0][0])
    eps = None
    rep = task.cases[0]
    for a in task.attrs:
        if a.type != "float":
            continue
        vals = [c.attrs.get(a.name, a.default) for c in task.cases]
        try:
            same = all(math.isclose(float(v), f[1], rel_tol=1e-6) for v, f in zip(vals, found))
        except (TypeError, ValueError):
            continue
        if same:
            moved = _group_norm_of(trace(task, rep, {**rep.attrs, a.name: SENTINELS[0]}))
            if moved is not None and moved[1] == SENTINELS[0]:
                eps = ("attr", a.name)
                break
    if eps is None:
        if len({f[1] for f in found}) != 1:
            raise Unsupported(f"{task.name}: eps varies between cases and no float attr gives it")
        eps = ("const", found[0][1])
    return GroupNormPlan(task, "normalization", groups, eps,
                         axis_rule=("group", groups[1] if groups[0] == "attr" else None))


def render(plan: GroupNormPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split, float_attr_field
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]
    if plan.groups_rule[0] == "attr":
        groups = (f"    const int64_t* groupsAttr = attrs->GetAttrPointer<int64_t>({names.index(plan.groups_rule[1])});"
                  f"   // `{plan.groups_rule[1]}`\n"
                  f"    if (groupsAttr == nullptr) {{\n"
                  f"        return ge::GRAPH_FAILED;\n"
                  f"    }}\n"
                  f"    const int64_t G = *groupsAttr;\n")
        groups_doc = f"the int attr `{plan.groups_rule[1]}`"
    else:
        groups = f"    const int64_t G = {int(plan.groups_rule[1])};\n"
        groups_doc = str(plan.groups_rule[1])
    eps = float_attr_field(plan.eps_rule, names, "eps")
    eps_doc = f"the float attr `{plan.eps_rule[1]}`" if plan.eps_rule[0] == "attr" else repr(plan.eps_rule[1])
    xn, gn, bn = (i.name for i in t.inputs)
    yn = t.outputs[0].name
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(xn)), ("@GT@", _macro_of(gn)), ("@BT@", _macro_of(bn)), ("@YT@", _macro_of(yn)),
                     ("@X@", _ident(xn)), ("@GAMMA@", _ident(gn)), ("@BETA@", _ident(bn)), ("@Y@", _ident(yn)),
                     ("@GROUPS@", groups), ("@EPS@", eps), ("@GROUPS_DOC@", groups_doc), ("@EPS_DOC@", eps_doc),
                     ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                     ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@CAP@", str(int(knobs["tile_elems"]))),
                     ("@SPLIT@", core_split(knobs, "td->groups * td->groupLen", "td->units")),
                     ("@SYNC@", SYNC_PIPES)):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: group normalisation of @X@ [N, C, *spatial]: G = @GROUPS_DOC@ groups of D = C / G
// channels; each (sample, group) is one contiguous run of L = D * S elements (S spatial positions):
//   mean, var = biased variance over the L elements; eps = @EPS_DOC@
//   y = (x - mean) * rsqrt(var + eps) * gamma[c] + beta[c]
// x sits in UB as rows, each a contiguous GM run padded with zeros to 32 bytes:
//   LAYOUT_CHANNELS (S >= 64): a row is one channel's S positions; the affine is a Muls and an
//     Adds per row with rstd * gamma[c] and beta[c] (gamma, beta staged in fp32 once per core);
//   LAYOUT_GROUPS (S < 64): a row is a whole group; gamma and beta expanded per position over one
//     sample (two tables built once per core by a Gather), so one Mul and one Add cover a group.
// Statistics: per tile the sum, then the centred squares (each zero pad lane adds mean^2, taken
// off once); tiles and parts combine by Chan's formula (count, mean, M2).
//   MODE_RESIDENT: a tile holds whole groups: read once, normalised in UB.
//   MODE_STREAM: a group's pieces (row blocks, or chunks of one long row) are split into parts so
//     every core works; phase 1 writes each part's (mean, M2) to a workspace slot, SyncAll,
//     phase 2 combines the group's slots in order and streams the pieces through the affine.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MODE_RESIDENT = 0;
constexpr uint32_t MODE_STREAM = 1;
constexpr uint32_t LAYOUT_CHANNELS = 0;
constexpr uint32_t LAYOUT_GROUPS = 1;
constexpr uint32_t SLOT_FLOATS = 8;     // one 32-byte slot: (mean, M2) of a part, or a tile's sums
constexpr uint32_t MAX_PARTS = 64;

struct @T@ {
    uint32_t mode;                      // MODE_*
    uint32_t layout;                    // LAYOUT_*
    uint32_t bufferNum;
    uint32_t blockDim;
    uint32_t channels;                  // C
    uint32_t groupsPerSample;           // G
    uint32_t groupRows;                 // rows per group: D (channel rows) or 1 (group rows)
    uint32_t rowLen;                    // elements of a row: S (channel rows) or L (group rows)
    uint32_t rowPad;                    // the row's stride in UB: rowLen rounded up to 32 bytes of x
    uint32_t tileRows;                  // rows per tile when rows are whole (chunks == 1)
    uint32_t chunks;                    // chunks per row (1: whole rows)
    uint32_t chunkLen;                  // elements per chunk when chunks > 1 (a multiple of 64)
    uint32_t tileLanes;                 // fp32 lanes of a tile
    uint32_t groupsPerTile;             // MODE_RESIDENT: whole groups per tile
    uint32_t parts;                     // MODE_STREAM: parts per group
    uint32_t partPieces;                // MODE_STREAM: pieces per part (the last part may have fewer)
    uint32_t pieces;                    // MODE_STREAM: pieces per group
    uint32_t tablePad;                  // LAYOUT_GROUPS: a group's stride in the gamma / beta tables
    uint32_t flatLen;                   // MODE_STREAM phase 1: elements per flat piece (512-byte bursts)
    uint32_t flatPieces;                // flat pieces per group (the first is the unaligned head)
    uint32_t flatParts;                 // phase-1 parts per group
    uint32_t flatPartPieces;            // flat pieces per phase-1 part
    float eps;
    uint64_t groups;                    // N * G
    uint64_t groupLen;                  // L
    uint64_t units;                     // MODE_RESIDENT: tiles of groups; MODE_STREAM: groups * parts
    uint64_t momentUnits;               // MODE_STREAM phase 1: groups * flatParts
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
using Param = @GT@;
using Out = @YT@;

// A group's running statistics: element count, mean, sum of squared deviations.
struct Moments {
    float count;
    float mean;
    float m2;
};

// Chan's combination of two disjoint sets' moments.
__aicore__ inline Moments Combine(const Moments& a, const Moments& b)
{
    if (a.count == 0.0f) {
        return b;
    }
    const float n = a.count + b.count;
    const float delta = b.mean - a.mean;
    const float w = b.count / n;
    return Moments{n, a.mean + delta * w, a.m2 + b.m2 + delta * delta * a.count * w};
}

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR gammaAddr, GM_ADDR betaAddr, GM_ADDR yAddr, GM_ADDR workspace,
                                const @T@& tiling)
    {
        td_ = tiling;
        const uint64_t total = td_.groups * td_.groupLen;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), total);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Out*>(yAddr), total);
        gammaGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Param*>(gammaAddr), td_.channels);
        betaGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Param*>(betaAddr), td_.channels);
        slotGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)),
                                (td_.momentUnits > 0 ? td_.momentUnits : 1) * SLOT_FLOATS);
@UNIT_RANGE@        const uint32_t lanes = td_.tileLanes;
        pipe_.InitBuffer(xQue_, td_.bufferNum, lanes * sizeof(Elem));
        pipe_.InitBuffer(yQue_, td_.bufferNum, lanes * sizeof(Out));
        if constexpr (!std::is_same<Elem, float>::value) {
            pipe_.InitBuffer(workBuf_, lanes * sizeof(float));
        }
        pipe_.InitBuffer(squareBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(reduceBuf_, (lanes / 64 + 8) * sizeof(float));
        const uint32_t slots = td_.groupsPerTile > MAX_PARTS ? td_.groupsPerTile : MAX_PARTS;
        pipe_.InitBuffer(statBuf_, 2 * slots * SLOT_FLOATS * sizeof(float));
        StageParams();
    }

    __aicore__ inline void Process()
    {
        if (td_.mode == MODE_RESIDENT) {
            if (unitCount_ > 0) {
                CopyTile(unitStart_);
            }
            for (uint64_t u = 0; u < unitCount_; ++u) {
                if (u + 1 < unitCount_) {              // the next tile's copy runs under this one's math
                    CopyTile(unitStart_ + u + 1);
                }
                ResidentTile(unitStart_ + u);
            }
            return;
        }
        // phase 1's units (groups x flatParts) over the same cores, former cores taking one more
        const uint64_t per = td_.momentUnits / td_.blockDim, extra = td_.momentUnits % td_.blockDim;
        const uint64_t blockIdx = static_cast<uint64_t>(GetBlockIdx());
        const uint64_t first = blockIdx * per + (blockIdx < extra ? blockIdx : extra);
        const uint64_t count = per + (blockIdx < extra ? 1 : 0);
        for (uint64_t u = 0; u < count; ++u) {
            PartMoments(first + u);
        }
        PipeBarrier<PIPE_ALL>();                  // every part's slot is in GM before the barrier
        SyncAll();
        for (uint64_t u = 0; u < unitCount_; ++u) {
            PartOutput(unitStart_ + u);
        }
    }

private:
    // gamma and beta in fp32, once per core; group rows also get both expanded per position.
    __aicore__ inline void StageParams()
    {
        const uint32_t C = td_.channels;
        const uint32_t cPad = (C + 63) / 64 * 64;
        pipe_.InitBuffer(gammaBuf_, cPad * sizeof(float));
        pipe_.InitBuffer(betaBuf_, cPad * sizeof(float));
        pipe_.InitBuffer(paramBuf_, (C * sizeof(Param) + 31) / 32 * 32);
        LocalTensor<Param> raw = paramBuf_.Get<Param>();
        LoadParam(gammaBuf_.Get<float>(), raw, gammaGm_);
        LoadParam(betaBuf_.Get<float>(), raw, betaGm_);
        if (td_.layout == LAYOUT_GROUPS) {
            BuildTables();
        }
        SyncPipes<HardEvent::V_S>();              // the scalar unit reads gamma[c] and beta[c]
    }

    template <typename T>
    __aicore__ inline void LoadParam(const LocalTensor<float>& dst, const LocalTensor<T>& raw, const GlobalTensor<T>& src)
    {
        SyncPipes<HardEvent::V_MTE2>();           // the staging buffer is free
        DataCopyExtParams in(1, td_.channels * sizeof(T), 0, 0, 0);
        DataCopyPad(raw, src, in, DataCopyPadExtParams<T>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        if constexpr (std::is_same<T, float>::value) {
            Adds(dst, raw, 0.0f, td_.channels);
        } else {
            Cast(dst, raw, RoundMode::CAST_NONE, td_.channels);
        }
    }

    // gammaRow_[g * tablePad + p] = gamma[g * D + floor(p / S)] for the G groups of a sample (p < L),
    // the same for beta: one Gather each through a byte-offset table computed in fp32 (exact below 2^24).
    __aicore__ inline void BuildTables()
    {
        const uint32_t G = td_.groupsPerSample;
        const uint32_t pad = td_.tablePad;
        const uint32_t n = G * pad;
        const uint32_t S = static_cast<uint32_t>(td_.groupLen / (td_.channels / G));
        const float D = static_cast<float>(td_.channels / G);
        pipe_.InitBuffer(gammaRowBuf_, n * sizeof(float));
        pipe_.InitBuffer(betaRowBuf_, n * sizeof(float));
        pipe_.InitBuffer(offsetBuf_, n * sizeof(uint32_t));
        LocalTensor<float> pos = gammaRowBuf_.Get<float>();
        LocalTensor<float> q = betaRowBuf_.Get<float>();
        LocalTensor<float> off = offsetBuf_.Get<float>();
        LocalTensor<int32_t> offInt = offsetBuf_.Get<int32_t>();
        CreateVecIndex(pos, 0.0f, n);                                   // lane i = g * pad + p
        Adds(off, pos, 0.5f, n);
        Muls(off, off, 1.0f / static_cast<float>(pad), n);
        Cast(offInt, off, RoundMode::CAST_FLOOR, n);
        Cast(q, offInt, RoundMode::CAST_RINT, n);                       // g
        Axpy(pos, q, -static_cast<float>(pad), n);                      // p
        Adds(pos, pos, 0.5f, n);
        Muls(pos, pos, 1.0f / static_cast<float>(S), n);
        Cast(offInt, pos, RoundMode::CAST_FLOOR, n);
        Cast(pos, offInt, RoundMode::CAST_RINT, n);                     // d = floor(p / S)
        Axpy(pos, q, D, n);                                             // channel g * D + d
        Mins(pos, pos, static_cast<float>(td_.channels - 1), n);        // pad lanes read the last channel
        Muls(pos, pos, static_cast<float>(sizeof(float)), n);
        Cast(offInt, pos, RoundMode::CAST_RINT, n);
        LocalTensor<uint32_t> offsets = offsetBuf_.Get<uint32_t>();
        Gather(gammaRowBuf_.Get<float>(), gammaBuf_.Get<float>(), offsets, 0, n);
        Gather(betaRowBuf_.Get<float>(), betaBuf_.Get<float>(), offsets, 0, n);
    }

    // rows [row0, row0 + rows) of group `group` (whole rows), or chunk `chunk` of one row
    __aicore__ inline void CopyIn(uint64_t group, uint32_t row0, uint32_t rows, uint32_t chunk)
    {
        LocalTensor<Elem> tile = xQue_.AllocTensor<Elem>();
        const uint64_t at = group * td_.groupLen + static_cast<uint64_t>(row0) * td_.rowLen +
                            static_cast<uint64_t>(chunk) * td_.chunkLen;
        const uint32_t len = PieceLen(chunk);
        const uint32_t stride = td_.chunks == 1 ? td_.rowPad : PieceLanes(1, chunk);
        // zeros pad each row to its 32-byte stride, so a sum over whole rows needs no mask
        DataCopyExtParams in(static_cast<uint16_t>(rows), len * sizeof(Elem), 0, 0, 0);
        DataCopyPad(tile, xGm_[at], in,
                    DataCopyPadExtParams<Elem>(true, 0, static_cast<uint8_t>(stride - len), static_cast<Elem>(0.0f)));
        xQue_.EnQue(tile);
    }

    __aicore__ inline void CopyOut(uint64_t group, uint32_t row0, uint32_t rows, uint32_t chunk)
    {
        LocalTensor<Out> tile = yQue_.DeQue<Out>();
        const uint64_t at = group * td_.groupLen + static_cast<uint64_t>(row0) * td_.rowLen +
                            static_cast<uint64_t>(chunk) * td_.chunkLen;
        DataCopyExtParams out(static_cast<uint16_t>(rows), PieceLen(chunk) * sizeof(Out), 0, 0, 0);
        DataCopyPad(yGm_[at], tile, out);
        yQue_.FreeTensor(tile);
    }

    // elements per row of a piece: the whole row, or this chunk of it
    __aicore__ inline uint32_t PieceLen(uint32_t chunk) const
    {
        if (td_.chunks == 1) {
            return td_.rowLen;
        }
        const uint32_t left = td_.rowLen - chunk * td_.chunkLen;
        return left < td_.chunkLen ? left : td_.chunkLen;
    }

    // The dequeued x tile as fp32 (16-bit x widened into the work tile).
    template <typename T>
    __aicore__ inline LocalTensor<float> Widen(const LocalTensor<T>& tile, uint32_t lanes)
    {
        if constexpr (std::is_same<T, float>::value) {
            return tile;
        } else {
            LocalTensor<float> work = workBuf_.Get<float>();
            Cast(work, tile, RoundMode::CAST_NONE, lanes);
            return work;
        }
    }

    // dst[0] = the sum of lanes [0, m) of src, pairwise (the mean's error then grows with log m,
    // not with m): the upper half is added onto the lower one in `scratch` until one repeat is left.
    __aicore__ inline void PairwiseSum(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                       const LocalTensor<float>& scratch, const LocalTensor<float>& work, uint32_t m,
                                       bool inPlace)
    {
        LocalTensor<float> from = src;
        while (m > 64) {
            const uint32_t h = ((m + 1) / 2 + 63) / 64 * 64;
            Add(scratch, from, from[h], m - h);
            if (h > m - h && !inPlace) {
                Adds(scratch[m - h], from[m - h], 0.0f, h - (m - h));     // the lanes without a partner
            }
            from = scratch;
            inPlace = true;
            m = h;
        }
        ReduceSum(dst, from, work, static_cast<int32_t>(m));
    }

    // Moments of the `count` elements held in lanes [0, lanes) of x (the rest zero pads), for
    // `n` such spans `stride` lanes apart; x is left centred on each span's mean. Two V -> S
    // waits for all spans together.
    __aicore__ inline void SpanMoments(const LocalTensor<float>& x, uint32_t n, uint32_t stride, uint32_t lanes,
                                       float count, Moments* out)
    {
        LocalTensor<float> sums = statBuf_.Get<float>();
        LocalTensor<float> squares = squareBuf_.Get<float>();
        LocalTensor<float> work = reduceBuf_.Get<float>();
        for (uint32_t b = 0; b < n; ++b) {
            PairwiseSum(sums[b * SLOT_FLOATS], x[b * stride], squares[b * stride], work, lanes, false);
        }
        SyncPipes<HardEvent::V_S>();
        for (uint32_t b = 0; b < n; ++b) {
            out[b].count = count;
            out[b].mean = sums.GetValue(b * SLOT_FLOATS) / count;
        }
        SyncPipes<HardEvent::S_V>();
        for (uint32_t b = 0; b < n; ++b) {
            Adds(x[b * stride], x[b * stride], -out[b].mean, lanes);
        }
        Mul(squares, x, x, (n - 1) * stride + lanes);
        for (uint32_t b = 0; b < n; ++b) {
            PairwiseSum(sums[b * SLOT_FLOATS], squares[b * stride], squares[b * stride], work, lanes, true);
        }
        SyncPipes<HardEvent::V_S>();
        const float pads = static_cast<float>(lanes) - count;     // each pad lane held (0 - mean)^2
        for (uint32_t b = 0; b < n; ++b) {
            const float m2 = sums.GetValue(b * SLOT_FLOATS) - pads * out[b].mean * out[b].mean;
            out[b].m2 = m2 < 0.0f ? 0.0f : m2;
        }
        SyncPipes<HardEvent::S_V>();
    }

    __aicore__ inline float Rstd(const Moments& m) const
    {
        return 1.0f / sqrtf(m.m2 / m.count + td_.eps);
    }

    // res = xc * rstd * gamma + beta over `rows` rows of a piece of `group` (xc: x centred),
    // starting at element `first` of the group's row `row0` (a chunk offset for long rows).
    __aicore__ inline void Affine(const LocalTensor<float>& res, const LocalTensor<float>& xc, uint64_t group,
                                  uint32_t row0, uint32_t rows, uint32_t first, uint32_t lanesPerRow, float rstd)
    {
        const uint32_t g = static_cast<uint32_t>(group % td_.groupsPerSample);
        if (td_.layout == LAYOUT_GROUPS) {           // one row per group: the expanded tables
            const uint32_t at = g * td_.tablePad + first;
            Muls(res, xc, rstd, lanesPerRow);
            Mul(res, res, gammaRowBuf_.Get<float>()[at], lanesPerRow);
            Add(res, res, betaRowBuf_.Get<float>()[at], lanesPerRow);
            return;
        }
        LocalTensor<float> gamma = gammaBuf_.Get<float>();
        LocalTensor<float> beta = betaBuf_.Get<float>();
        const uint32_t c0 = g * td_.groupRows + row0;
        for (uint32_t r = 0; r < rows; ++r) {        // one channel per row: two scalar instructions
            const uint32_t c = c0 + r;
            Muls(res[r * lanesPerRow], xc[r * lanesPerRow], rstd * gamma.GetValue(c), lanesPerRow);
            Adds(res[r * lanesPerRow], res[r * lanesPerRow], beta.GetValue(c), lanesPerRow);
        }
    }

    // y tile from fp32 results: fp32 y is the result tile itself, 16-bit y a rounding of it
    template <typename T>
    __aicore__ inline LocalTensor<float> ResultTile(const LocalTensor<T>& y, const LocalTensor<float>& xc)
    {
        if constexpr (std::is_same<T, float>::value) {
            return y;
        } else {
            return xc;
        }
    }

    template <typename T>
    __aicore__ inline void Narrow(const LocalTensor<T>& y, const LocalTensor<float>& res, uint32_t lanes)
    {
        if constexpr (!std::is_same<T, float>::value) {
            Cast(y, res, RoundMode::CAST_RINT, lanes);
        }
    }

    // MODE_RESIDENT: tile `unit` holds groups [g0, g0 + n)
    __aicore__ inline uint32_t TileGroups(uint64_t unit, uint64_t& g0) const
    {
        g0 = unit * td_.groupsPerTile;
        const uint64_t left = td_.groups - g0;
        return static_cast<uint32_t>(left < td_.groupsPerTile ? left : td_.groupsPerTile);
    }

    __aicore__ inline void CopyTile(uint64_t unit)
    {
        uint64_t g0;
        const uint32_t n = TileGroups(unit, g0);
        CopyIn(g0, 0, n * td_.groupRows, 0);
    }

    // MODE_RESIDENT: whole groups of tile `unit`, read once.
    __aicore__ inline void ResidentTile(uint64_t unit)
    {
        uint64_t g0;
        const uint32_t n = TileGroups(unit, g0);
        const uint32_t groupLanes = td_.groupRows * td_.rowPad;
        LocalTensor<Elem> tile = xQue_.DeQue<Elem>();
        LocalTensor<float> x = Widen(tile, n * groupLanes);
        Moments m[MAX_PARTS];
        SpanMoments(x, n, groupLanes, groupLanes, static_cast<float>(td_.groupLen), m);
        LocalTensor<Out> y = yQue_.AllocTensor<Out>();
        LocalTensor<float> res = ResultTile(y, x);
        for (uint32_t b = 0; b < n; ++b) {
            Affine(res[b * groupLanes], x[b * groupLanes], g0 + b, 0, td_.groupRows, 0, td_.rowPad, Rstd(m[b]));
        }
        Narrow(y, res, n * groupLanes);
        xQue_.FreeTensor(tile);
        yQue_.EnQue(y);
        CopyOut(g0, 0, n * td_.groupRows, 0);
    }

    // piece k of a group: (first row, rows, chunk)
    __aicore__ inline void Piece(uint32_t k, uint32_t& row0, uint32_t& rows, uint32_t& chunk) const
    {
        if (td_.chunks == 1) {
            row0 = k * td_.tileRows;
            const uint32_t left = td_.groupRows - row0;
            rows = left < td_.tileRows ? left : td_.tileRows;
            chunk = 0;
        } else {
            row0 = k / td_.chunks;
            rows = 1;
            chunk = k % td_.chunks;
        }
    }

    __aicore__ inline void PartRange(uint64_t unit, uint64_t& group, uint32_t& k0, uint32_t& k1) const
    {
        group = unit / td_.parts;
        k0 = static_cast<uint32_t>(unit % td_.parts) * td_.partPieces;
        k1 = k0 + td_.partPieces < td_.pieces ? k0 + td_.partPieces : td_.pieces;
    }

    __aicore__ inline uint32_t PieceLanes(uint32_t rows, uint32_t chunk) const
    {
        if (td_.chunks == 1) {
            return rows * td_.rowPad;
        }
        constexpr uint32_t perBlock = 32 / sizeof(Elem);
        return (PieceLen(chunk) + perBlock - 1) / perBlock * perBlock;
    }

    // Phase 1 reads a group as flat pieces (the layout does not matter to the moments) whose
    // GM starts are 512-byte aligned: piece 0 is the group's head up to the first aligned
    // element, then pieces of flatLen; [lo, hi) is empty when the head is.
    __aicore__ inline void FlatPiece(uint64_t group, uint32_t k, uint64_t& lo, uint64_t& hi) const
    {
        constexpr uint64_t burst = 512 / sizeof(Elem);
        const uint64_t g0 = group * td_.groupLen, g1 = g0 + td_.groupLen;
        const uint64_t head = (g0 + burst - 1) / burst * burst;           // first aligned element
        const uint64_t a = k == 0 ? g0 : head + static_cast<uint64_t>(k - 1) * td_.flatLen;
        const uint64_t b = k == 0 ? head : a + td_.flatLen;
        lo = a < g1 ? a : g1;
        hi = b < g1 ? b : g1;
    }

    // elements of phase-1 part p of a group
    __aicore__ inline float FlatPartCount(uint64_t group, uint32_t p) const
    {
        uint64_t lo, hi, lo1, hi1;
        const uint32_t k0 = p * td_.flatPartPieces;
        const uint32_t k1 = k0 + td_.flatPartPieces < td_.flatPieces ? k0 + td_.flatPartPieces : td_.flatPieces;
        FlatPiece(group, k0, lo, hi);
        FlatPiece(group, k1 - 1, lo1, hi1);
        return static_cast<float>(hi1 - lo);
    }

    __aicore__ inline void CopyFlat(uint64_t at, uint32_t n)
    {
        constexpr uint32_t perBlock = 32 / sizeof(Elem);
        LocalTensor<Elem> tile = xQue_.AllocTensor<Elem>();
        DataCopyExtParams in(1, n * sizeof(Elem), 0, 0, 0);
        const uint32_t pad = (n + perBlock - 1) / perBlock * perBlock - n;
        DataCopyPad(tile, xGm_[at], in, DataCopyPadExtParams<Elem>(true, 0, static_cast<uint8_t>(pad), static_cast<Elem>(0.0f)));
        xQue_.EnQue(tile);
    }

    // MODE_STREAM phase 1: the moments of one part of a group (flat pieces) into its workspace slot.
    __aicore__ inline void PartMoments(uint64_t unit)
    {
        constexpr uint32_t perBlock = 32 / sizeof(Elem);
        const uint64_t group = unit / td_.flatParts;
        const uint32_t k0 = static_cast<uint32_t>(unit % td_.flatParts) * td_.flatPartPieces;
        const uint32_t k1 = k0 + td_.flatPartPieces < td_.flatPieces ? k0 + td_.flatPartPieces : td_.flatPieces;
        Moments acc{0.0f, 0.0f, 0.0f};
        uint64_t lo, hi, nlo, nhi;
        uint32_t k = k0;
        FlatPiece(group, k, lo, hi);
        if (hi > lo) {
            CopyFlat(lo, static_cast<uint32_t>(hi - lo));
        }
        for (; k < k1; ++k) {
            if (k + 1 < k1) {                      // the next piece's copy runs under this one's math
                FlatPiece(group, k + 1, nlo, nhi);
                if (nhi > nlo) {
                    CopyFlat(nlo, static_cast<uint32_t>(nhi - nlo));
                }
            }
            if (hi > lo) {
                const uint32_t n = static_cast<uint32_t>(hi - lo);
                const uint32_t lanes = (n + perBlock - 1) / perBlock * perBlock;
                LocalTensor<Elem> tile = xQue_.DeQue<Elem>();
                LocalTensor<float> x = Widen(tile, lanes);
                Moments m;
                SpanMoments(x, 1, lanes, lanes, static_cast<float>(n), &m);
                xQue_.FreeTensor(tile);
                acc = Combine(acc, m);
            }
            lo = nlo;
            hi = nhi;
        }
        LocalTensor<float> slot = statBuf_.Get<float>()[MAX_PARTS * SLOT_FLOATS];
        SyncPipes<HardEvent::MTE3_S>();           // the previous slot is out
        slot.SetValue(0, acc.mean);
        slot.SetValue(1, acc.m2);
        SyncPipes<HardEvent::S_MTE3>();
        DataCopy(slotGm_[unit * SLOT_FLOATS], slot, SLOT_FLOATS);
    }

    // MODE_STREAM phase 2: the group's parts combined in order, then this part's pieces normalised.
    __aicore__ inline void PartOutput(uint64_t unit)
    {
        uint64_t group;
        uint32_t k0, k1, row0, rows, chunk;
        PartRange(unit, group, k0, k1);
        LocalTensor<float> slots = statBuf_.Get<float>()[MAX_PARTS * SLOT_FLOATS];
        SyncPipes<HardEvent::S_MTE2>();
        SyncPipes<HardEvent::MTE3_MTE2>();
        DataCopy(slots, slotGm_[group * td_.flatParts * SLOT_FLOATS], td_.flatParts * SLOT_FLOATS);
        SyncPipes<HardEvent::MTE2_S>();
        Moments all{0.0f, 0.0f, 0.0f};
        for (uint32_t p = 0; p < td_.flatParts; ++p) {
            all = Combine(all, Moments{FlatPartCount(group, p), slots.GetValue(p * SLOT_FLOATS),
                                       slots.GetValue(p * SLOT_FLOATS + 1)});
        }
        const float rstd = Rstd(all);
        SyncPipes<HardEvent::S_V>();
        if (k0 < k1) {
            Piece(k0, row0, rows, chunk);
            CopyIn(group, row0, rows, chunk);
        }
        for (uint32_t k = k0; k < k1; ++k) {
            Piece(k, row0, rows, chunk);
            if (k + 1 < k1) {
                uint32_t r1, n1, c1;
                Piece(k + 1, r1, n1, c1);
                CopyIn(group, r1, n1, c1);
            }
            const uint32_t lanes = PieceLanes(rows, chunk);
            LocalTensor<Elem> tile = xQue_.DeQue<Elem>();
            LocalTensor<float> x = Widen(tile, lanes);
            LocalTensor<Out> y = yQue_.AllocTensor<Out>();
            LocalTensor<float> res = ResultTile(y, x);
            Adds(x, x, -all.mean, lanes);
            Affine(res, x, group, row0, rows, chunk * td_.chunkLen, td_.chunks == 1 ? td_.rowPad : lanes, rstd);
            Narrow(y, res, lanes);
            xQue_.FreeTensor(tile);
            yQue_.EnQue(y);
            CopyOut(group, row0, rows, chunk);
        }
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> xQue_;
    TQue<QuePosition::VECOUT, 2> yQue_;
    TBuf<QuePosition::VECCALC> workBuf_;
    TBuf<QuePosition::VECCALC> squareBuf_;
    TBuf<QuePosition::VECCALC> reduceBuf_;
    TBuf<QuePosition::VECCALC> statBuf_;
    TBuf<QuePosition::VECCALC> gammaBuf_;
    TBuf<QuePosition::VECCALC> betaBuf_;
    TBuf<QuePosition::VECCALC> paramBuf_;
    TBuf<QuePosition::VECCALC> gammaRowBuf_;
    TBuf<QuePosition::VECCALC> betaRowBuf_;
    TBuf<QuePosition::VECCALC> offsetBuf_;
    GlobalTensor<Elem> xGm_;
    GlobalTensor<Param> gammaGm_;
    GlobalTensor<Param> betaGm_;
    GlobalTensor<Out> yGm_;
    GlobalTensor<float> slotGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(GM_ADDR @X@, GM_ADDR @GAMMA@, GM_ADDR @BETA@, GM_ADDR @Y@,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @GAMMA@, @BETA@, @Y@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@GROUPS@@EPS@    const gert::Shape& xShape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(xShape.GetDimNum());
    if (rank < 2 || G <= 0 || xShape.GetDim(1) % G != 0 || xShape.GetDim(1) == 0) {
        return ge::GRAPH_FAILED;
    }
    uint64_t spatial = 1;
    for (int32_t d = 2; d < rank; ++d) {
        spatial *= static_cast<uint64_t>(xShape.GetDim(d));
    }
    const uint64_t C = static_cast<uint64_t>(xShape.GetDim(1));
    const uint64_t D = C / static_cast<uint64_t>(G);
    td->channels = static_cast<uint32_t>(C);
    td->groupsPerSample = static_cast<uint32_t>(G);
    td->groups = static_cast<uint64_t>(xShape.GetDim(0)) * static_cast<uint64_t>(G);
    td->groupLen = D * spatial;
    if (td->groups == 0 || td->groupLen == 0 || td->groupLen >= (1ULL << 24)) {
        return ge::GRAPH_FAILED;   // counts are carried in fp32
    }
    const uint64_t eb = DtypeBytes(context->GetInputDesc(0)->GetDataType());
    const uint64_t perBlock = 32 / eb;        // x elements per 32-byte block

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    // fixed: gamma, beta in fp32 and their staging copy, the statistics slots
    const uint64_t cPad = (C + 63) / 64 * 64;
    uint64_t fixed = 2 * cPad * 4 + (C * eb + 31) / 32 * 32 + 2 * MAX_PARTS * SLOT_FLOATS * 4 + 2048;
    // group rows when channel runs are short and the expanded tables (two of one sample plus
    // their offset table) take at most a third of the UB
    const uint64_t tablePad = (td->groupLen + 63) / 64 * 64;
    const uint64_t tableBytes = 3 * static_cast<uint64_t>(G) * tablePad * 4;
    td->layout = spatial < 64 && tableBytes * 3 <= ubSize ? LAYOUT_GROUPS : LAYOUT_CHANNELS;
    if (td->layout == LAYOUT_GROUPS) {
        fixed += tableBytes;
        td->tablePad = static_cast<uint32_t>(tablePad);
    }
    td->groupRows = td->layout == LAYOUT_GROUPS ? 1 : static_cast<uint32_t>(D);
    td->rowLen = static_cast<uint32_t>(td->layout == LAYOUT_GROUPS ? td->groupLen : spatial);
    td->rowPad = static_cast<uint32_t>((td->rowLen + perBlock - 1) / perBlock * perBlock);
    if (ubSize <= reserve + fixed + 8192) {
        return ge::GRAPH_FAILED;
    }
    // per fp32 lane: x and y queue tiles, the fp32 work tile (16-bit x), the squares, the reduce work
    const uint64_t perLane8 = 8 * (td->bufferNum * (eb + eb) + (eb < 4 ? 4 : 0) + 4) + 1;
    uint64_t cap = (ubSize - reserve - fixed) * 8 / perLane8 / 64 * 64;
    const uint64_t capKnob = @CAP@;
    cap = capKnob > 0 && cap > capKnob ? capKnob : cap;
    cap = cap > 65536 - 64 ? 65536 - 64 : cap;
    const uint64_t groupLanes = static_cast<uint64_t>(td->groupRows) * td->rowPad;
    if (groupLanes <= cap) {
        // whole groups per tile: the fewest rounds over the cores, then the fewest groups per tile
        td->mode = MODE_RESIDENT;
        uint64_t bMax = cap / groupLanes;
        bMax = bMax > 64 ? 64 : bMax;
        uint64_t best = 1, bestCost = ~0ULL;
        for (uint64_t b = 1; b <= bMax; ++b) {
            const uint64_t tiles = (td->groups + b - 1) / b;
            const uint64_t cost = (tiles + coreNum - 1) / coreNum * b;
            if (cost < bestCost) {
                best = b;
                bestCost = cost;
            }
        }
        td->groupsPerTile = static_cast<uint32_t>(best);
        td->tileRows = static_cast<uint32_t>(best * td->groupRows);
        td->chunks = 1;
        td->chunkLen = td->rowPad;
        td->tileLanes = static_cast<uint32_t>(best * groupLanes);
        td->units = (td->groups + best - 1) / best;
        td->parts = 1;
    } else {
        td->mode = MODE_STREAM;
        if (td->rowPad <= cap) {                  // pieces of whole rows
            td->chunks = 1;
            td->tileRows = static_cast<uint32_t>(cap / td->rowPad);
            td->chunkLen = td->rowPad;
            td->pieces = (td->groupRows + td->tileRows - 1) / td->tileRows;
        } else {                                  // pieces are chunks of one long row
            // equal chunks of whole 512-byte GM bursts (an aligned row keeps every chunk aligned)
            const uint64_t burst = 512 / eb;
            const uint64_t n = (td->rowLen + cap - 1) / cap;
            uint64_t len = ((td->rowLen + n - 1) / n + burst - 1) / burst * burst;
            len = len > cap ? cap / burst * burst : len;
            td->chunkLen = static_cast<uint32_t>(len);
            td->chunks = static_cast<uint32_t>((td->rowLen + len - 1) / len);
            td->tileRows = 1;
            td->pieces = td->groupRows * td->chunks;
        }
        td->tileLanes = static_cast<uint32_t>(cap);    // phase 1's flat pieces fill the tile
        // parts per group: the fewest pieces on the busiest core, then the fewest parts
        auto partsOf = [&](uint64_t pieces) {
            uint64_t best = 1, bestCost = ~0ULL;
            for (uint64_t p = 1; p <= pieces && p <= MAX_PARTS; ++p) {
                const uint64_t per = (pieces + p - 1) / p;
                if ((p - 1) * per >= pieces) {
                    continue;                     // a part would be empty
                }
                const uint64_t cost = (td->groups * p + coreNum - 1) / coreNum * per;
                if (cost < bestCost) {
                    best = p;
                    bestCost = cost;
                }
            }
            return best;
        };
        td->parts = static_cast<uint32_t>(partsOf(td->pieces));
        td->partPieces = (td->pieces + td->parts - 1) / td->parts;
        td->units = td->groups * td->parts;
        td->groupsPerTile = 1;
        // phase 1: flat pieces of whole 512-byte bursts after the group's unaligned head
        const uint64_t burst = 512 / eb;
        td->flatLen = static_cast<uint32_t>(cap / burst * burst);
        td->flatPieces = static_cast<uint32_t>((td->groupLen + td->flatLen - 1) / td->flatLen + 1);
        td->flatParts = static_cast<uint32_t>(partsOf(td->flatPieces));
        td->flatPartPieces = (td->flatPieces + td->flatParts - 1) / td->flatParts;
        td->flatParts = (td->flatPieces + td->flatPartPieces - 1) / td->flatPartPieces;
        td->momentUnits = td->groups * td->flatParts;
    }

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize() + (td->momentUnits > 0 ? td->momentUnits : 1) * SLOT_FLOATS * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
