"""Selection along an axis: `torch.topk(x, k, dim, largest)` (and `torch.sort(x, dim, descending)`,
a top-k with k = the axis length) lowers to a kernel of its own:

    values, indices = the k largest (smallest) elements of every line along dim, in order

Every line along dim (a *lane*) is independent. The tiling function views x as
[outer, N, inner] (N along dim) and picks:
- MODE_ROWS (inner == 1, dim is the last axis): a tile is a block of whole lanes, contiguous in GM;
- MODE_COLUMNS (dim is not last): a tile is a block of neighbouring columns (lanes of one outer
  position, adjacent in GM), copied in as N rows and transposed in UB by one Gather;
- MODE_TRANSPOSED (dim is not last, when no block of columns with its k results fits the UB, a
  large k, or when it moves fewer GM bytes: narrow blocks of long lanes): x goes through the
  workspace transposed (square tiles, one Gather each) into lanes as rows of fp32 scores, the
  rows' selection runs on them, and the results come back the same way.
A lane is selected in chunks of at most 4096 positions (4064 in MODE_COLUMNS; the TopK API's rows
are at most 4096): each chunk's scores (fp32: every input dtype converts to it; integers are exact up to 2^24) go through
the TopK library API (Sort32 + merge passes on the vector unit), whose k best per lane join a
candidate row; a full candidate row is reduced to k by one more TopK with the candidates' own
indices. The k smallest are the k largest of -x (exact, ties keep their order), so the last
chunk is padded with -inf: padding never outranks a real element. Values come back from the fp32 scores (exact for every input that ranks exactly),
indices as int64 (or int32 when the golden casts them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name
from copilot.lowering.scan import values_indices_op

_DTYPES = ("float16", "bfloat16", "float32", "int8", "uint8", "int32", "int64")
MAX_ROW_CHUNK = 4096                   # one TopK call takes a whole lane of 4096 (rows; columns through
                                       # MODE_TRANSPOSED past 4064, the column copy's rows)


@dataclass
class TopKPlan:
    task: object
    pattern: str                      # "topk"
    k_rule: tuple                     # ("attr", name) | ("const", k) | ("axis",): k = N (a sort)
    dim_rule: tuple                   # ("attr", name) | ("const", d)
    largest_rule: tuple               # ("attr", name) | ("const", bool)
    index_dtype: str = "int64"        # the indices output: int64 (torch's) or int32 (the golden casts)
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _select_of(gm):
    """(k or None for a full sort, dim, largest, index dtype) when the graph is one topk / sort of
    its only input returning (values, indices), the indices as int64 or cast to int32. A sort's
    `stable` flag needs nothing: equal scores keep their order of position in the TopK API (both
    directions), which is torch's stable order."""
    import torch

    s = values_indices_op(gm, ("topk", "sort"), index_casts=(torch.int32, torch.int64))
    if s is None:
        return None
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    index_dtype = "int32" if out[1].kwargs.get("dtype") == torch.int32 else "int64"
    args = list(s.args) + [None] * 5
    if _name(s) == "topk":
        k = int(args[1])
        dim = int(s.kwargs.get("dim", args[2] if args[2] is not None else -1))
        largest = bool(s.kwargs.get("largest", args[3] if args[3] is not None else True))
        return k, dim, largest, index_dtype
    # sort(self, dim=-1, descending=False) or sort.stable(self, *, stable, dim=-1, descending=False)
    positional = len(s.args) > 1 and not isinstance(s.args[1], bool)
    dim = int(s.kwargs.get("dim", args[1] if positional else -1))
    descending = bool(s.kwargs.get("descending", args[2] if positional and args[2] is not None else False))
    return None, dim, descending, index_dtype


def _rule(task, values, types, what):
    for a in task.attrs:
        if a.type in types and all(c.attrs.get(a.name, a.default) == v for c, v in zip(task.cases, values)):
            return ("attr", a.name)
    if len(set(values)) == 1:
        return ("const", values[0])
    raise Unsupported(f"{task.name}: the {what} varies between cases and no attr gives it")


def plan_topk(task):
    """The selection plan of `task`, or None when its golden is not one topk / sort of its input."""
    from copilot.lowering.capture import trace

    if len(task.inputs) != 1 or len(task.outputs) != 2 or not task.cases:
        return None
    try:
        first = _select_of(trace(task, task.cases[0]))
    except Unsupported as exc:
        if "_unique2" in str(exc) or "unique_dim" in str(exc):
            raise Unsupported(f"{task.name}: aten._unique2 (torch.unique): the output's length is the number of "
                              "distinct values, known only after the data is sorted; the selection pattern selects "
                              "along one axis with outputs of fixed length, and all of x sorted across cores (a "
                              "GM-level merge sort), an adjacent-difference compaction and the length written to "
                              "out_shape are not lowered") from None
        return None
    if first is None:
        return None
    found = [first]
    for case in task.cases[1:]:
        g = _select_of(trace(task, case))
        if g is None or (g[0] is None) != (first[0] is None) or g[3] != first[3]:
            raise Unsupported(f"{task.name}: case {case.id} is not the selection the other cases are")
        found.append(g)
    k_rule = ("axis",) if first[0] is None else _rule(task, [f[0] for f in found], ("int",), "k")
    plan = TopKPlan(task, "topk", k_rule, _rule(task, [f[1] for f in found], ("int",), "axis"),
                    _rule(task, [f[2] for f in found], ("bool",), "direction"), index_dtype=first[3])
    for c, f in zip(task.cases, found):
        shape = c.shapes[0]
        n = shape[f[1]] if shape else 1
        k = n if f[0] is None else f[0]
        if c.dtypes[0] not in _DTYPES:
            plan.unserved[c.id] = f"dtype {c.dtypes[0]}"
        elif len(shape) > 8:
            plan.unserved[c.id] = "more than 8 dims"
        elif n > MAX_ROW_CHUNK and k > 2048:
            plan.unserved[c.id] = f"k = {k} of a line of {n}: chunked selection keeps at most 2048 per lane"
    if any(c.dtypes[0] in ("int32", "int64") for c in task.cases):
        plan.notes.append("int32 / int64 data rank through fp32: exact for |x| <= 2^24")
    return plan


def render(plan: TopKPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]

    def attr(rule, ctype):
        if rule[0] == "attr":
            return f"*attrs->GetAttrPointer<{ctype}>({names.index(rule[1])})"
        if isinstance(rule[1], bool):
            return "true" if rule[1] else "false"
        return str(int(rule[1]))

    dim = attr(plan.dim_rule, "int64_t")
    if plan.k_rule[0] == "axis":
        k, what = "static_cast<int64_t>(axisLen)", "sort (k = the axis length)"
        largest = attr(plan.largest_rule, "bool")   # descending
    else:
        k, what = attr(plan.k_rule, "int64_t"), "top-k"
        largest = attr(plan.largest_rule, "bool")
    x, v, i = t.inputs[0].name, t.outputs[0].name, t.outputs[1].name
    wide = plan.index_dtype == "int64"
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@WHAT@", what), ("@XT@", _macro_of(x)), ("@X@", _ident(x)), ("@V@", _ident(v)),
                     ("@I@", _ident(i)), ("@DIM@", dim), ("@KVAL@", k), ("@LARGEST@", largest),
                     ("@IDXSTAGE@", _IDX_STAGE[wide]), ("@IDXSTAGE_T@", _IDX_STAGE_T[wide]), ("@IDXSTAGEDOC@", _IDX_STAGE_DOC[wide]),
                     ("@IDXSTAGEBYTES@", "8" if wide else "0"), ("@IDXBYTES@", "8" if wide else "4"), ("@IDXT@", f"{plan.index_dtype}_t"),
                     ("@IDXNAME@", plan.index_dtype),
                     ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@SYNC@", SYNC_PIPES),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@SPLIT@", core_split(knobs, "td->outer * td->axisLen * td->inner", "units"))):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


# The TopK API's int32 indices: widened to int64 in TopK's temporary space, or written as they are.
_IDX_STAGE = {True: """        LocalTensor<int64_t> idxOut = tmpBuf_.Get<int64_t>();
        Cast(idxOut, idx, RoundMode::CAST_NONE, n);
""", False: """        const LocalTensor<int32_t>& idxOut = idx;
"""}
_IDX_STAGE_T = {True: """            LocalTensor<int64_t> idxOut = tmp.ReinterpretCast<int64_t>();     // over the consumed tile
            Cast(idxOut, idx, RoundMode::CAST_NONE, n);
""", False: """            const LocalTensor<int32_t>& idxOut = idx;
"""}
_IDX_STAGE_DOC = {True: "TopK's temporary space is free too: the int64 indices",
                  False: "the int32 indices go out as TopK wrote them"}

_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: @WHAT@ along dim. x is viewed as [outer, N, inner]; a lane is one line along dim.
// Scores are fp32 (every input dtype converts exactly; integers up to 2^24); each chunk of a lane
// goes through the TopK library API, the chunks' winners join a candidate row that one more TopK
// (with the candidates' own indices) reduces to k. Values come back from the scores, indices as
// @IDXNAME@.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MODE_ROWS = 0;      // dim is last: a tile is a block of whole lanes
constexpr uint32_t MODE_COLUMNS = 1;   // dim is not last: a block of adjacent columns, transposed in UB
constexpr uint32_t MODE_TRANSPOSED = 2; // dim is not last, large k: x transposed into lanes through the workspace

struct @T@ {
    uint32_t mode;
    uint32_t largest;                   // 1: the k largest, 0: the k smallest
    uint64_t outer;                     // positions before dim
    uint64_t axisLen;                   // N, positions along dim
    uint64_t inner;                     // positions after dim (1 in MODE_ROWS)
    uint32_t k;
    uint32_t kPitch;                    // k rounded up to 8: TopK's output row
    uint32_t outPitch;                  // k rounded up to 32: output rows in UB (32 B for every dtype)
    uint32_t lanes;                     // lanes per tile (B)
    uint32_t lanePitch;                 // columns: B rounded up to 32 bytes of x and of fp32 (a UB row of a chunk)
    uint32_t chunkLen;                  // positions per chunk
    uint32_t chunkPitch;                // a full chunk rounded up to 32 (TopK's inner)
    uint32_t tailLen;                   // positions of the last chunk (its row is chunkPitch too)
    uint32_t chunks;
    uint32_t candCap;                   // candidate slots per lane (chunked lanes)
    uint32_t direct;                    // 1: one chunk, TopK writes the result rows (no staging rows)
    uint32_t tmpBytes;                  // TopK's temporary space (int64 indices: later their staging)
    uint64_t blocksPerOuter;            // lane blocks per outer position
    uint64_t blocks;                    // lane blocks
    uint32_t segments;                  // > 1: a block's chunks split into segments over the cores
    uint32_t segChunks;                 // chunks per segment
    uint64_t formerNum;                 // cores taking formerUnits blocks; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    uint32_t side;                      // MODE_TRANSPOSED: the transposes' square tiles (side x side)
    uint64_t lanesOff;                  // MODE_TRANSPOSED, workspace floats: x as lanes of fp32 scores,
    uint64_t resultsOff;                //   then the results (scores, then int32 positions) as lanes of k
    AscendC::tiling::TopkTiling chunkTopk;    // B lanes x chunkPitch
    AscendC::tiling::TopkTiling mergeTopk;    // one lane's candidates, their own indices
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
using IndexOut = @IDXT@;                 // the indices output

class @K@ {
    static constexpr uint32_t IDX_PER_BLOCK = 32 / sizeof(IndexOut);     // indices per 32-byte block

public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR valuesAddr, GM_ADDR indicesAddr, GM_ADDR workspace,
                                const @T@& tiling)
    {
        td_ = tiling;
        if (td_.segments > 1) {
            candGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)),
                                    td_.blocks * td_.segments * td_.lanes * td_.kPitch * 2);
        }
        const uint64_t lanesTotal = td_.outer * td_.inner;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), lanesTotal * td_.axisLen);
        valuesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(valuesAddr), lanesTotal * td_.k);
        indicesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ IndexOut*>(indicesAddr), lanesTotal * td_.k);
        transposed_ = td_.mode == MODE_TRANSPOSED;
        if (transposed_) {
            __gm__ float* ws = reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace));
            lanesGm_.SetGlobalBuffer(ws + td_.lanesOff, lanesTotal * td_.axisLen);
            resultsGm_.SetGlobalBuffer(ws + td_.resultsOff, lanesTotal * td_.k * 2);
        }
@UNIT_RANGE@        columns_ = td_.mode == MODE_COLUMNS;
        rowsIn_ = columns_ ? td_.lanePitch : td_.lanes;        // UB rows of the scores' buffers
        // MODE_TRANSPOSED: x's dtype only in the transposes' tiles (the lanes are fp32 scores)
        const uint32_t tile = transposed_ ? td_.side * td_.side : rowsIn_ * td_.chunkPitch;
        pipe_.InitBuffer(rawBuf_, Bytes(tile * sizeof(Elem)));
        pipe_.InitBuffer(scoreBuf_, Bytes(rowsIn_ * td_.chunkPitch * sizeof(float)));
        const uint32_t scores = (td_.lanes * td_.chunkPitch + 63) / 64 * 64;     // whole compare repeats
        pipe_.InitBuffer(posBuf_, Bytes(scores * sizeof(float)));
        pipe_.InitBuffer(maskBuf_, Bytes(scores / 8));
        if constexpr (sizeof(Elem) == 1) {
            const uint32_t halves = transposed_ ? tile : (tile > rowsIn_ * td_.outPitch ? tile : rowsIn_ * td_.outPitch);
            pipe_.InitBuffer(halfBuf_, Bytes(halves * sizeof(half)));
        }
        if (columns_) {
            pipe_.InitBuffer(laneMajorBuf_, Bytes(scores * sizeof(float)));
            pipe_.InitBuffer(inTableBuf_, Bytes(td_.lanes * td_.chunkPitch * sizeof(uint32_t)));
            pipe_.InitBuffer(outTableBuf_, Bytes(td_.k * td_.lanePitch * sizeof(uint32_t)));
            pipe_.InitBuffer(outTBuf_, Bytes(2 * td_.k * td_.lanePitch * sizeof(float)));
        }
        pipe_.InitBuffer(tmpBuf_, Bytes(td_.tmpBytes));
        pipe_.InitBuffer(srcIdxBuf_, 32);                     // TopK without init indices: defined, not read
        if (!td_.direct) {
            pipe_.InitBuffer(chunkValBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(float)));
            pipe_.InitBuffer(chunkIdxBuf_, Bytes(td_.lanes * td_.kPitch * sizeof(int32_t)));
        }
        if (td_.chunks > 1) {
            pipe_.InitBuffer(candValBuf_, Bytes(td_.lanes * td_.candCap * sizeof(float)));
            pipe_.InitBuffer(candIdxBuf_, Bytes(td_.lanes * td_.candCap * sizeof(int32_t)));
            pipe_.InitBuffer(mergeValBuf_, Bytes(td_.kPitch * sizeof(float)));
            pipe_.InitBuffer(mergeIdxBuf_, Bytes(td_.kPitch * sizeof(int32_t)));
        }
        const uint32_t outRows = columns_ ? td_.lanePitch : td_.lanes;
        pipe_.InitBuffer(outValBuf_, Bytes(outRows * td_.outPitch * sizeof(float)));
        pipe_.InitBuffer(outIdxBuf_, Bytes(outRows * td_.outPitch * sizeof(int32_t)));
        pad_ = -INFINITY;                                     // scores are negated for the smallest
        BuildTables();
    }

    __aicore__ inline void Process()
    {
        if (transposed_) {
            TransposeIn();
            PipeBarrier<PIPE_ALL>();                           // every lane is in the workspace before the barrier
            SyncAll();
        }
        SelectLanes();
        if (transposed_) {
            PipeBarrier<PIPE_ALL>();                           // every lane's results are in the workspace
            SyncAll();
            TransposeOut();
        }
    }

private:
    // The selection of every lane block: rows of x, columns of x, or the workspace's lanes.
    __aicore__ inline void SelectLanes()
    {
        if (td_.segments <= 1) {
            for (uint64_t u = 0; u < unitCount_; ++u) {
                Locate(unitStart_ + u);
                SelectChunks(0, td_.chunks);
                WriteOut();
            }
            return;
        }
        // few lane blocks, long lanes: a unit is (block, segment of chunks); every unit's kPitch
        // best per lane go to the workspace, then each block merges its segments' candidates
        for (uint64_t u = 0; u < unitCount_; ++u) {
            const uint64_t unit = unitStart_ + u;
            const uint32_t seg = static_cast<uint32_t>(unit % td_.segments);
            const uint32_t c1 = (seg + 1) * td_.segChunks;
            Locate(unit / td_.segments);
            SelectChunks(seg * td_.segChunks, c1 < td_.chunks ? c1 : td_.chunks);
            SaveCandidates(unit);
        }
        PipeBarrier<PIPE_ALL>();                               // the candidates are in GM before the barrier
        SyncAll();
        for (uint64_t block = GetBlockIdx(); block < td_.blocks; block += GetBlockNum()) {
            Locate(block);
            MergeSegments(block);
            WriteOut();
        }
    }

    // Buffer bytes: 32-byte granules, at least one 256-byte repeat.
    __aicore__ inline static uint32_t Bytes(uint32_t n)
    {
        n = (n + 31) / 32 * 32;
        return n < 256 ? 256 : n;
    }

@SYNC@
    // posBuf_: every score's position within its lane row (the padding test of a short chunk);
    // columns mode: the Gather tables that transpose a chunk in (lane-major) and the results out.
    __aicore__ inline void BuildTables()
    {
        LocalTensor<float> pos = posBuf_.Get<float>();
        const uint32_t scores = (td_.lanes * td_.chunkPitch + 63) / 64 * 64;
        Duplicate(pos, static_cast<float>(td_.chunkPitch), static_cast<int32_t>(scores));   // past the last lane
        PipeBarrier<PIPE_V>();
        CreateVecIndex(pos, 0.0f, td_.chunkPitch);
        for (uint32_t r = 1; r < td_.lanes; r *= 2) {
            const uint32_t n = r < td_.lanes - r ? r : td_.lanes - r;
            PipeBarrier<PIPE_V>();
            DataCopy(pos[r * td_.chunkPitch], pos, n * td_.chunkPitch);
        }
        if (!columns_) {
            return;
        }
        // in: score[l][j] = chunk[j][l], byte offset (j * lanePitch + l) * 4
        LocalTensor<int32_t> in = inTableBuf_.Get<int32_t>();
        CreateVecIndex(in, 0, td_.chunkPitch);
        Muls(in, in, static_cast<int32_t>(td_.lanePitch * sizeof(float)), td_.chunkPitch);
        for (uint32_t r = 1; r < td_.lanes; r *= 2) {
            const uint32_t n = r < td_.lanes - r ? r : td_.lanes - r;
            Adds(in[r * td_.chunkPitch], in, static_cast<int32_t>(r * sizeof(float)), n * td_.chunkPitch);
        }
        // out: result[j][l] = lane l's j-th best, byte offset (l * outPitch + j) * 4
        LocalTensor<int32_t> out = outTableBuf_.Get<int32_t>();
        CreateVecIndex(out, 0, td_.lanePitch);
        Muls(out, out, static_cast<int32_t>(td_.outPitch * sizeof(float)), td_.lanePitch);
        for (uint32_t j = 1; j < td_.k; j *= 2) {
            const uint32_t n = j < td_.k - j ? j : td_.k - j;
            Adds(out[j * td_.lanePitch], out, static_cast<int32_t>(j * sizeof(float)), n * td_.lanePitch);
        }
    }

    // Block `block` of lanes: its GM offsets and how many lanes it has.
    __aicore__ inline void Locate(uint64_t block)
    {
        lanes_ = td_.lanes;
        if (columns_) {
            const uint64_t o = block / td_.blocksPerOuter;
            const uint64_t c0 = (block % td_.blocksPerOuter) * td_.lanes;
            lanes_ = static_cast<uint32_t>(td_.inner - c0 < td_.lanes ? td_.inner - c0 : td_.lanes);
            xOff_ = o * td_.axisLen * td_.inner + c0;
            yOff_ = o * td_.k * td_.inner + c0;
        } else {
            const uint64_t l0 = block * td_.lanes;
            const uint64_t lanesTotal = td_.outer * td_.inner;   // inner is 1 but in MODE_TRANSPOSED
            lanes_ = static_cast<uint32_t>(lanesTotal - l0 < td_.lanes ? lanesTotal - l0 : td_.lanes);
            xOff_ = l0 * td_.axisLen;
            yOff_ = l0 * td_.k;
        }
    }

    // Chunks [c0, c1) of the block's lanes: one chunk and one call gives the k best; chunked
    // lanes keep kPitch candidates per chunk, reduced when the candidate rows fill, and merged
    // last into the result rows.
    __aicore__ inline void SelectChunks(uint32_t c0, uint32_t c1)
    {
        const bool chunked = td_.chunks > 1;
        SyncPipes<HardEvent::MTE3_MTE2>();                     // the previous block's results are out
        SyncPipes<HardEvent::MTE3_V>();
        if (chunked) {
            Duplicate(candValBuf_.Get<float>(), pad_, static_cast<int32_t>(td_.lanes * td_.candCap));
        }
        filled_ = 0;
        for (uint32_t c = c0; c < c1; ++c) {
            const uint32_t len = c + 1 == td_.chunks ? td_.tailLen : td_.chunkLen;
            const uint64_t at = static_cast<uint64_t>(c) * td_.chunkLen;
            LoadScores(xOff_ + at * (columns_ ? td_.inner : 1), lanes_, len);
            const uint32_t want = chunked ? td_.kPitch : td_.k;
            const uint32_t wantPitch = (want + 7) / 8 * 8;
            // direct: TopK writes the result rows themselves (their pitch is TopK's, or one lane)
            LocalTensor<float> val = td_.direct ? outValBuf_.Get<float>() : chunkValBuf_.Get<float>();
            LocalTensor<int32_t> idx = td_.direct ? outIdxBuf_.Get<int32_t>() : chunkIdxBuf_.Get<int32_t>();
            LocalTensor<bool> finish;
            TopKInfo info;
            info.outter = static_cast<int32_t>(td_.lanes);
            info.inner = static_cast<int32_t>(td_.chunkPitch);
            info.n = static_cast<int32_t>(td_.chunkPitch);   // the padding ranks last
            TopK<float, false, false, false, TopKMode::TOPK_NORMAL>(
                val, idx, scoreLaneMajor_, srcIdxBuf_.Get<int32_t>(), finish, tmpBuf_.Get<uint8_t>(),
                static_cast<int32_t>(want), td_.chunkTopk, info, true);
            if (td_.direct) {
                return;
            }
            if (!chunked) {
                Repitch(outValBuf_.Get<float>(), val, td_.lanes, wantPitch, td_.outPitch);
                Repitch(outIdxBuf_.Get<float>(), idx.ReinterpretCast<float>(), td_.lanes, wantPitch, td_.outPitch);
                return;
            }
            Adds(idx, idx, static_cast<int32_t>(at), static_cast<int32_t>(td_.lanes * wantPitch));   // lane positions
            MakeRoom();
            DataCopyParams join(static_cast<uint16_t>(td_.lanes), static_cast<uint16_t>(wantPitch / 8),
                                0, static_cast<uint16_t>((td_.candCap - wantPitch) / 8));
            PipeBarrier<PIPE_V>();
            DataCopy(candValBuf_.Get<float>()[filled_], val, join);
            DataCopy(candIdxBuf_.Get<int32_t>()[filled_], idx, join);
            PipeBarrier<PIPE_V>();
            filled_ += wantPitch;
        }
        MergeIntoResults();
    }

    // Before kPitch more candidates join: full rows are reduced to their kPitch best.
    __aicore__ inline void MakeRoom()
    {
        if (filled_ + td_.kPitch <= td_.candCap) {
            return;
        }
        for (uint32_t l = 0; l < lanes_; ++l) {
            MergeLane(l, candValBuf_.Get<float>()[l * td_.candCap], candIdxBuf_.Get<int32_t>()[l * td_.candCap], true);
        }
        filled_ = td_.kPitch;
    }

    __aicore__ inline void MergeIntoResults()
    {
        for (uint32_t l = 0; l < lanes_; ++l) {
            MergeLane(l, outValBuf_.Get<float>()[l * td_.outPitch], outIdxBuf_.Get<int32_t>()[l * td_.outPitch], false);
        }
    }

    // A unit's kPitch best per lane (result rows) to its workspace slot: scores, then positions.
    __aicore__ inline void SaveCandidates(uint64_t unit)
    {
        const uint64_t slot = unit * td_.lanes * td_.kPitch * 2;
        DataCopyParams save(static_cast<uint16_t>(td_.lanes), static_cast<uint16_t>(td_.kPitch / 8),
                            static_cast<uint16_t>((td_.outPitch - td_.kPitch) / 8), 0);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopy(candGm_[slot], outValBuf_.Get<float>(), save);
        DataCopy(candGm_[slot + td_.lanes * td_.kPitch], outIdxBuf_.Get<float>(), save);
    }

    // Every segment's candidates of block `block` from the workspace through the candidate rows.
    __aicore__ inline void MergeSegments(uint64_t block)
    {
        SyncPipes<HardEvent::MTE3_V>();
        Duplicate(candValBuf_.Get<float>(), pad_, static_cast<int32_t>(td_.lanes * td_.candCap));
        filled_ = 0;
        DataCopyParams join(static_cast<uint16_t>(td_.lanes), static_cast<uint16_t>(td_.kPitch / 8), 0,
                            static_cast<uint16_t>((td_.candCap - td_.kPitch) / 8));
        for (uint32_t s = 0; s < td_.segments; ++s) {
            const uint64_t slot = (block * td_.segments + s) * td_.lanes * td_.kPitch * 2;
            MakeRoom();
            SyncPipes<HardEvent::V_MTE2>();
            DataCopy(candValBuf_.Get<float>()[filled_], candGm_[slot], join);
            DataCopy(candIdxBuf_.Get<float>()[filled_], candGm_[slot + td_.lanes * td_.kPitch], join);
            SyncPipes<HardEvent::MTE2_V>();
            filled_ += td_.kPitch;
        }
        MergeIntoResults();
    }

    // `lanes` lanes of `len` positions in, as fp32 scores in rows of chunkPitch (lane-major), the
    // positions past len holding the padding score.
    __aicore__ inline void LoadScores(uint64_t xOff, uint32_t lanes, uint32_t len)
    {
        LocalTensor<Elem> raw = rawBuf_.Get<Elem>();
        SyncPipes<HardEvent::V_MTE2>();                      // the previous chunk's scores are consumed
        if (columns_) {
            // len rows (one per position) of `lanes` adjacent columns, rows lanePitch apart
            const uint32_t bytes = lanes * sizeof(Elem);
            DataCopyExtParams in(static_cast<uint16_t>(len), bytes,
                                 static_cast<uint32_t>((td_.inner - lanes) * sizeof(Elem)),
                                 (td_.lanePitch * sizeof(Elem) - (bytes + 31) / 32 * 32) / 32, 0);
            DataCopyPad(raw, xGm_[xOff], in, DataCopyPadExtParams<Elem>(false, 0, 0, 0));
        } else if (transposed_) {
            // the workspace's lanes are fp32 scores (negated for the smallest): straight in
            const uint32_t bytes = len * sizeof(float);
            DataCopyExtParams in(static_cast<uint16_t>(lanes), bytes,
                                 static_cast<uint32_t>((td_.axisLen - len) * sizeof(float)),
                                 (td_.chunkPitch * sizeof(float) - (bytes + 31) / 32 * 32) / 32, 0);
            DataCopyPad(scoreBuf_.Get<float>(), lanesGm_[xOff], in, DataCopyPadExtParams<float>(false, 0, 0, 0));
        } else {
            const uint32_t bytes = len * sizeof(Elem);
            DataCopyExtParams in(static_cast<uint16_t>(lanes), bytes,
                                 static_cast<uint32_t>((td_.axisLen - len) * sizeof(Elem)),
                                 (td_.chunkPitch * sizeof(Elem) - (bytes + 31) / 32 * 32) / 32, 0);
            DataCopyPad(raw, xGm_[xOff], in, DataCopyPadExtParams<Elem>(false, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE2_V>();
        LocalTensor<float> score = scoreBuf_.Get<float>();
        if (!transposed_) {
            ToScore(score, raw, rowsIn_ * td_.chunkPitch);
        }
        if (!td_.largest && !transposed_) {
            // the k smallest are the k largest of -x (ties keep their order of position; -x is exact)
            PipeBarrier<PIPE_V>();
            Muls(score, score, -1.0f, rowsIn_ * td_.chunkPitch);
        }
        scoreLaneMajor_ = score;
        const uint32_t m = td_.lanes * td_.chunkPitch;
        if (columns_) {
            // position-major [chunkPitch][lanePitch] -> lane-major [lanes][chunkPitch]
            PipeBarrier<PIPE_V>();
            scoreLaneMajor_ = laneMajorBuf_.Get<float>();
            Gather(scoreLaneMajor_, score, inTableBuf_.Get<uint32_t>(), 0, m);
        }
        if (len < td_.chunkPitch || columns_) {
            PipeBarrier<PIPE_V>();
            LocalTensor<uint8_t> real = maskBuf_.Get<uint8_t>();
            CompareScalar(real, posBuf_.Get<float>(), static_cast<float>(len), CMPMODE::LT, (m + 63) / 64 * 64);
            PipeBarrier<PIPE_V>();
            Select(scoreLaneMajor_, real, scoreLaneMajor_, pad_, SELMODE::VSEL_TENSOR_SCALAR_MODE, m);
        }
        PipeBarrier<PIPE_V>();
    }

    // MODE_TRANSPOSED, tmpBuf_ between selections: a side x side fp32 tile at 0, the transposed tile
    // (scores, then positions) at 4 side^2 bytes, the Gather table at 12 side^2; the int64 indices
    // (8 side^2 bytes) are staged at 0 over the tile and the consumed scores.
    __aicore__ inline void BuildTransposeTable()
    {
        const uint32_t s = td_.side;
        // t[l][j] = tile[j][l]: byte offset (j * side + l) * 4; a square transpose is its own inverse
        LocalTensor<int32_t> table = tmpBuf_.Get<uint8_t>()[12 * s * s].ReinterpretCast<int32_t>();
        CreateVecIndex(table, 0, s);
        PipeBarrier<PIPE_V>();
        Muls(table, table, static_cast<int32_t>(s * sizeof(float)), s);
        for (uint32_t r = 1; r < s; r *= 2) {
            const uint32_t n = r < s - r ? r : s - r;
            PipeBarrier<PIPE_V>();
            Adds(table[r * s], table, static_cast<int32_t>(r * sizeof(float)), n * s);
        }
        PipeBarrier<PIPE_V>();
    }

    // The transposes' grid of tiles [outer][along / side][inner / side], columns fastest
    // (neighbouring cores take neighbouring columns): how many tiles, and tile t's outer position,
    // first position along and first column with their counts (side but at the edges).
    __aicore__ inline uint64_t Tiles(uint64_t along)
    {
        return td_.outer * ((along + td_.side - 1) / td_.side) * ((td_.inner + td_.side - 1) / td_.side);
    }

    __aicore__ inline void TileAt(uint64_t t, uint64_t along, uint64_t& o, uint64_t& a0, uint64_t& c0, uint32_t& alongN,
                                  uint32_t& cols)
    {
        const uint32_t s = td_.side;
        const uint64_t alongTiles = (along + s - 1) / s;
        const uint64_t colTiles = (td_.inner + s - 1) / s;
        o = t / (alongTiles * colTiles);
        a0 = (t / colTiles % alongTiles) * s;
        c0 = (t % colTiles) * s;
        alongN = static_cast<uint32_t>(along - a0 < s ? along - a0 : s);
        cols = static_cast<uint32_t>(td_.inner - c0 < s ? td_.inner - c0 : s);
    }

    // x [outer][N][inner] -> the workspace's lanes [outer * inner][N] of fp32 scores, square tiles
    // of side positions x side columns over the cores.
    __aicore__ inline void TransposeIn()
    {
        const uint32_t s = td_.side;
        LocalTensor<uint8_t> tmp = tmpBuf_.Get<uint8_t>();
        LocalTensor<float> tile = tmp.ReinterpretCast<float>();
        LocalTensor<float> tileT = tmp[4 * s * s].ReinterpretCast<float>();
        LocalTensor<uint32_t> table = tmp[12 * s * s].ReinterpretCast<uint32_t>();
        LocalTensor<Elem> raw = rawBuf_.Get<Elem>();
        BuildTransposeTable();
        for (uint64_t t = GetBlockIdx(); t < Tiles(td_.axisLen); t += GetBlockNum()) {
            uint64_t o, r0, c0;
            uint32_t rows, cols;
            TileAt(t, td_.axisLen, o, r0, c0, rows, cols);
            SyncPipes<HardEvent::V_MTE2>();                    // the previous tile's raw is converted
            DataCopyExtParams in(static_cast<uint16_t>(rows), cols * sizeof(Elem),
                                 static_cast<uint32_t>((td_.inner - cols) * sizeof(Elem)),
                                 (s * sizeof(Elem) - (cols * sizeof(Elem) + 31) / 32 * 32) / 32, 0);
            DataCopyPad(raw, xGm_[(o * td_.axisLen + r0) * td_.inner + c0], in, DataCopyPadExtParams<Elem>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            ToScore(tile, raw, s * s);
            if (!td_.largest) {
                PipeBarrier<PIPE_V>();
                Muls(tile, tile, -1.0f, s * s);               // the k smallest are the k largest of -x
            }
            SyncPipes<HardEvent::MTE3_V>();                    // the previous tile is out
            PipeBarrier<PIPE_V>();
            Gather(tileT, tile, table, 0, s * s);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyExtParams out(static_cast<uint16_t>(cols), rows * sizeof(float),
                                  (s * sizeof(float) - (rows * sizeof(float) + 31) / 32 * 32) / 32,
                                  static_cast<uint32_t>((td_.axisLen - rows) * sizeof(float)), 0);
            DataCopyPad(lanesGm_[(o * td_.inner + c0) * td_.axisLen + r0], tileT, out);
        }
    }

    // The workspace's results [outer * inner][k] -> values, indices [outer][k][inner]: square tiles
    // of side lanes x side results, each transposed by the Gather table.
    __aicore__ inline void TransposeOut()
    {
        const uint32_t s = td_.side;
        const uint64_t idxAt = td_.outer * td_.inner * td_.k;
        LocalTensor<uint8_t> tmp = tmpBuf_.Get<uint8_t>();
        LocalTensor<float> tile = tmp.ReinterpretCast<float>();
        LocalTensor<float> val = tmp[4 * s * s].ReinterpretCast<float>();
        LocalTensor<int32_t> idx = tmp[8 * s * s].ReinterpretCast<int32_t>();
        LocalTensor<uint32_t> table = tmp[12 * s * s].ReinterpretCast<uint32_t>();
        LocalTensor<Elem> y = rawBuf_.Get<Elem>();
        const uint32_t n = s * s;
        SyncPipes<HardEvent::MTE3_V>();                        // the selections' last writes are out
        BuildTransposeTable();
        for (uint64_t t = GetBlockIdx(); t < Tiles(td_.k); t += GetBlockNum()) {
            uint64_t o, j0, c0;
            uint32_t kk, cols;
            TileAt(t, td_.k, o, j0, c0, kk, cols);
            const uint64_t from = (o * td_.inner + c0) * td_.k + j0;
            // cols lanes of kk results, rows side apart: scores, then positions, each transposed
            DataCopyExtParams in(static_cast<uint16_t>(cols), kk * sizeof(float),
                                 static_cast<uint32_t>((td_.k - kk) * sizeof(float)),
                                 (s * sizeof(float) - (kk * sizeof(float) + 31) / 32 * 32) / 32, 0);
            SyncPipes<HardEvent::MTE3_V>();                    // the previous tile is out
            SyncPipes<HardEvent::MTE3_MTE2>();
            SyncPipes<HardEvent::V_MTE2>();
            DataCopyPad(tile, resultsGm_[from], in, DataCopyPadExtParams<float>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            Gather(val, tile, table, 0, n);
            SyncPipes<HardEvent::V_MTE2>();
            DataCopyPad(tile, resultsGm_[idxAt + from], in, DataCopyPadExtParams<float>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            Gather(idx, tile.ReinterpretCast<int32_t>(), table, 0, n);
            PipeBarrier<PIPE_V>();
            if (!td_.largest) {
                Muls(val, val, -1.0f, n);                     // the smallest were selected as -x
                PipeBarrier<PIPE_V>();
            }
            FromScore(y, val, n);
@IDXSTAGE_T@            SyncPipes<HardEvent::V_MTE3>();
            // kk rows of cols columns, inner apart in GM
            const uint64_t to = (o * td_.k + j0) * td_.inner + c0;
            DataCopyExtParams out(static_cast<uint16_t>(kk), cols * sizeof(Elem),
                                  (s * sizeof(Elem) - (cols * sizeof(Elem) + 31) / 32 * 32) / 32,
                                  static_cast<uint32_t>((td_.inner - cols) * sizeof(Elem)), 0);
            DataCopyPad(valuesGm_[to], y, out);
            DataCopyExtParams outIdx(static_cast<uint16_t>(kk), cols * sizeof(IndexOut),
                                     (s * sizeof(IndexOut) - (cols * sizeof(IndexOut) + 31) / 32 * 32) / 32,
                                     static_cast<uint32_t>((td_.inner - cols) * sizeof(IndexOut)), 0);
            DataCopyPad(indicesGm_[to], idxOut, outIdx);
        }
    }

    // One lane's candidates (scores, lane positions) reduced to its kPitch best, into dst.
    __aicore__ inline void MergeLane(uint32_t l, const LocalTensor<float>& dstVal, const LocalTensor<int32_t>& dstIdx,
                                     bool inPlace)
    {
        LocalTensor<float> cand = candValBuf_.Get<float>()[l * td_.candCap];
        LocalTensor<int32_t> candIdx = candIdxBuf_.Get<int32_t>()[l * td_.candCap];
        LocalTensor<float> val = mergeValBuf_.Get<float>();
        LocalTensor<int32_t> idx = mergeIdxBuf_.Get<int32_t>();
        LocalTensor<bool> finish;
        TopKInfo info;
        info.outter = 1;
        info.inner = static_cast<int32_t>(td_.candCap);
        info.n = static_cast<int32_t>(td_.candCap);
        PipeBarrier<PIPE_V>();
        TopK<float, true, false, false, TopKMode::TOPK_NORMAL>(
            val, idx, cand, candIdx, finish, tmpBuf_.Get<uint8_t>(), static_cast<int32_t>(td_.kPitch),
            td_.mergeTopk, info, true);
        PipeBarrier<PIPE_V>();
        DataCopy(dstVal, val, td_.kPitch);
        DataCopy(dstIdx, idx, td_.kPitch);
        if (inPlace) {
            // the row keeps its kPitch best; the rest is padding again
            Duplicate(cand[td_.kPitch], pad_, static_cast<int32_t>(td_.candCap - td_.kPitch));
        }
        PipeBarrier<PIPE_V>();
    }

    // rows of `from` elements -> rows of `to` (both multiples of 8 fp32 lanes)
    __aicore__ inline void Repitch(const LocalTensor<float>& dst, const LocalTensor<float>& src, uint32_t rows,
                                   uint32_t from, uint32_t to)
    {
        PipeBarrier<PIPE_V>();
        const uint32_t w = from < to ? from : to;
        DataCopyParams p(static_cast<uint16_t>(rows), static_cast<uint16_t>(w / 8),
                         static_cast<uint16_t>((from - w) / 8), static_cast<uint16_t>((to - w) / 8));
        DataCopy(dst, src, p);
    }

    // The result rows (outPitch apart, lane-major) back to x's dtype and @IDXNAME@, out to GM.
    __aicore__ inline void WriteOut()
    {
        const uint64_t yOff = yOff_;
        const uint32_t lanes = lanes_;
        LocalTensor<float> val = outValBuf_.Get<float>();
        LocalTensor<int32_t> idx = outIdxBuf_.Get<int32_t>();
        uint32_t n = td_.lanes * td_.outPitch;
        PipeBarrier<PIPE_V>();
        if (transposed_) {
            // `lanes` rows of k scores, then of k positions, to the workspace (TransposeOut converts)
            DataCopyExtParams out(static_cast<uint16_t>(lanes), td_.k * sizeof(float),
                                  (td_.outPitch * sizeof(float) - (td_.k * sizeof(float) + 31) / 32 * 32) / 32, 0, 0);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyPad(resultsGm_[yOff], val, out);
            DataCopyPad(resultsGm_[td_.outer * td_.inner * td_.k + yOff], idx.ReinterpretCast<float>(), out);
            return;
        }
        if (columns_) {
            // lane-major [lanePitch][outPitch] -> position-major [k][lanePitch]
            LocalTensor<float> outT = outTBuf_.Get<float>();
            n = td_.k * td_.lanePitch;
            Gather(outT, val, outTableBuf_.Get<uint32_t>(), 0, n);
            Gather(outT[n].ReinterpretCast<int32_t>(), idx, outTableBuf_.Get<uint32_t>(), 0, n);
            PipeBarrier<PIPE_V>();
            val = outT;
            idx = outT[n].ReinterpretCast<int32_t>();
        }
        // the scores' input buffer is free now: y (@IDXSTAGEDOC@)
        LocalTensor<Elem> y = rawBuf_.Get<Elem>();
        if (!td_.largest) {
            Muls(val, val, -1.0f, n);                         // the smallest were selected as -x
            PipeBarrier<PIPE_V>();
        }
        FromScore(y, val, n);
@IDXSTAGE@        SyncPipes<HardEvent::V_MTE3>();
        if (columns_) {
            // k rows of `lanes` columns, inner apart in GM
            DataCopyExtParams out(static_cast<uint16_t>(td_.k), lanes * sizeof(Elem), 0,
                                  static_cast<uint32_t>((td_.inner - lanes) * sizeof(Elem)), 0);
            out.srcStride = (td_.lanePitch * sizeof(Elem) - (lanes * sizeof(Elem) + 31) / 32 * 32) / 32;
            DataCopyPad(valuesGm_[yOff], y, out);
            DataCopyExtParams outIdx(static_cast<uint16_t>(td_.k), lanes * sizeof(IndexOut),
                                     (td_.lanePitch - (lanes + IDX_PER_BLOCK - 1) / IDX_PER_BLOCK * IDX_PER_BLOCK) *
                                         sizeof(IndexOut) / 32,
                                     static_cast<uint32_t>((td_.inner - lanes) * sizeof(IndexOut)), 0);
            DataCopyPad(indicesGm_[yOff], idxOut, outIdx);
        } else {
            // `lanes` rows of k, contiguous in GM
            DataCopyExtParams out(static_cast<uint16_t>(lanes), td_.k * sizeof(Elem),
                                  (td_.outPitch * sizeof(Elem) - (td_.k * sizeof(Elem) + 31) / 32 * 32) / 32, 0, 0);
            DataCopyPad(valuesGm_[yOff], y, out);
            DataCopyExtParams outIdx(static_cast<uint16_t>(lanes), td_.k * sizeof(IndexOut),
                                     (td_.outPitch - (td_.k + IDX_PER_BLOCK - 1) / IDX_PER_BLOCK * IDX_PER_BLOCK) *
                                         sizeof(IndexOut) / 32, 0, 0);
            DataCopyPad(indicesGm_[yOff], idxOut, outIdx);
        }
    }

    // x's dtype -> fp32 scores (1-byte integers through half)
    template <typename T>
    __aicore__ inline void ToScore(const LocalTensor<float>& dst, const LocalTensor<T>& src, uint32_t n)
    {
        if constexpr (std::is_same<T, float>::value) {
            DataCopy(dst, src, n);
        } else if constexpr (sizeof(T) == 1) {
            LocalTensor<half> h = halfBuf_.Get<half>();
            Cast(h, src, RoundMode::CAST_NONE, n);
            Cast(dst, h, RoundMode::CAST_NONE, n);
        } else if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
            Cast(dst, src, RoundMode::CAST_NONE, n);
        } else {
            Cast(dst, src, RoundMode::CAST_RINT, n);          // int32 / int64: exact up to 2^24
        }
    }

    // fp32 scores -> x's dtype (every score is a value of x's dtype: exact)
    template <typename T>
    __aicore__ inline void FromScore(const LocalTensor<T>& dst, const LocalTensor<float>& src, uint32_t n)
    {
        if constexpr (std::is_same<T, float>::value) {
            DataCopy(dst, src, n);
        } else if constexpr (sizeof(T) == 1) {
            LocalTensor<half> h = halfBuf_.Get<half>();
            Cast(h, src, RoundMode::CAST_RINT, n);
            Cast(dst, h, RoundMode::CAST_RINT, n);
        } else {
            Cast(dst, src, RoundMode::CAST_RINT, n);
        }
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> rawBuf_, scoreBuf_, laneMajorBuf_, posBuf_, maskBuf_, halfBuf_, inTableBuf_, outTableBuf_;
    TBuf<TPosition::VECCALC> tmpBuf_, srcIdxBuf_, chunkValBuf_, chunkIdxBuf_, candValBuf_, candIdxBuf_;
    TBuf<TPosition::VECCALC> mergeValBuf_, mergeIdxBuf_, outValBuf_, outIdxBuf_, outTBuf_;
    GlobalTensor<Elem> xGm_;
    GlobalTensor<Elem> valuesGm_;
    GlobalTensor<IndexOut> indicesGm_;
    GlobalTensor<float> candGm_;                             // workspace: segments' candidates
    GlobalTensor<float> lanesGm_;                            // MODE_TRANSPOSED: x's lanes as scores
    GlobalTensor<float> resultsGm_;                          // MODE_TRANSPOSED: the lanes' results
    LocalTensor<float> scoreLaneMajor_;
    @T@ td_;
    uint64_t xOff_ = 0;
    uint64_t yOff_ = 0;
    uint32_t lanes_ = 0;
    uint32_t filled_ = 0;                                    // candidate slots in use per lane
    float pad_ = 0.0f;
    bool columns_ = false;
    bool transposed_ = false;
    uint32_t rowsIn_ = 0;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(GM_ADDR @X@, GM_ADDR @V@, GM_ADDR @I@, GM_ADDR workspace,
                                                     GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @V@, @I@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(shape.GetDimNum());
    const int32_t dims = rank > 0 ? rank : 1;
    int64_t dim = @DIM@;
    dim = dim < 0 ? dim + dims : dim;
    if (rank > 8 || dim < 0 || dim >= dims) {
        return ge::GRAPH_FAILED;
    }
    uint64_t outer = 1;
    uint64_t axisLen = 1;
    uint64_t inner = 1;
    for (int32_t d = 0; d < rank; ++d) {
        const uint64_t n = static_cast<uint64_t>(shape.GetDim(d));
        if (d < dim) {
            outer *= n;
        } else if (d == dim) {
            axisLen = n;
        } else {
            inner *= n;
        }
    }
    const int64_t k = @KVAL@;
    if (k < 1 || static_cast<uint64_t>(k) > axisLen || outer * inner == 0) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t eb = DtypeBytes(context->GetInputDesc(0)->GetDataType());
    td->largest = (@LARGEST@) ? 1 : 0;
    td->outer = outer;
    td->axisLen = axisLen;
    td->inner = inner;
    td->k = static_cast<uint32_t>(k);
    td->kPitch = (td->k + 7) / 8 * 8;
    td->outPitch = (td->k + 31) / 32 * 32;
    td->mode = inner == 1 ? MODE_ROWS : MODE_COLUMNS;
    auto up32 = [](uint64_t v) { return static_cast<uint32_t>((v + 31) / 32 * 32); };
    // A lane is one TopK call when it fits (4096 positions in rows, 4064 in columns), else chunks
    // of at least kPitch positions whose kPitch best join a candidate row of candCap (>= 2 kPitch)
    // slots.
    uint32_t maxChunk = td->mode == MODE_COLUMNS ? 4064 : 4096;         // columns: < 4096 copy rows
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    const bool largest = true;                                // the smallest select on -x
    auto topkTmp = [&](uint32_t inner32, uint32_t rows, bool initIndex) {
        uint32_t hi = 0;
        uint32_t lo = 0;
        AscendC::GetTopKMaxMinTmpSize(platform, static_cast<int32_t>(inner32), static_cast<int32_t>(rows), false,
                                      initIndex, AscendC::TopKMode::TOPK_NORMAL, largest, 4, hi, lo);
        return static_cast<uint64_t>(lo);
    };
    bool columns = td->mode == MODE_COLUMNS;
    uint32_t side = 0;                                        // MODE_TRANSPOSED: the transposes' tiles
    // columns: a copied-in row of B lanes is 32-byte aligned in x's dtype and in fp32
    const uint32_t laneAlign = eb >= 4 ? 8 : 32 / eb;
    auto lanePitchOf = [&](uint32_t b) { return (b + laneAlign - 1) / laneAlign * laneAlign; };
    auto candCapOf = [&](uint32_t c) {
        if (c >= axisLen) {
            return 0u;
        }
        const uint32_t cap = 4 * td->kPitch < 1024 ? 4 * td->kPitch : 1024;
        return up32(cap > 2 * td->kPitch ? cap : 2 * td->kPitch);
    };
    // one chunk per lane and TopK's rows are the result rows (same pitch, or one lane): no staging
    auto directOf = [&](uint32_t b, uint32_t c) {
        return c >= axisLen && (b == 1 || td->kPitch == td->outPitch);
    };
    // UB bytes of the kernel's buffers for tiles of b lanes and chunks of c positions
    auto bytes = [&](uint32_t b, uint32_t c) {
        const uint64_t bp = lanePitchOf(b);
        const uint64_t rows = columns ? bp : b;
        const uint64_t cp = up32(c);
        const uint64_t cap = candCapOf(c);
        const uint64_t raw = side > 0 ? static_cast<uint64_t>(side) * side : rows * cp;   // x's dtype (and half)
        uint64_t s = raw * (eb + (eb == 1 ? 2 : 0)) + rows * cp * 4 + b * cp * (4 + 1);
        if (columns) {
            s += b * cp * 8 + td->k * bp * 12;
        }
        uint64_t tmp = topkTmp(static_cast<uint32_t>(cp), b, false);
        if (cap > 0) {
            s += b * cap * 8 + td->kPitch * 8;
            const uint64_t m = topkTmp(static_cast<uint32_t>(cap), 1, true);
            tmp = m > tmp ? m : tmp;
        }
        const uint64_t tiles = 16ull * side * side;           // MODE_TRANSPOSED: tile, transposed tile, table
        tmp = tiles > tmp ? tiles : tmp;
        const uint64_t idx64 = rows * td->outPitch * @IDXSTAGEBYTES@;
        s += (tmp > idx64 ? tmp : idx64) + (directOf(b, c) ? 0 : 2 * b * td->kPitch * 4);
        s += rows * td->outPitch * (4 + 4 + (eb == 1 ? 2 : 0));
        return s + 40 * 256;
    };
    if (ubSize <= reserve + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
    const uint32_t minChunk = up32(td->kPitch);
    uint32_t chunk = 0;
    uint32_t lanes = 0;
    // lanes per tile and chunk length for the mode: false when even one lane does not fit
    auto fit = [&]() {
        chunk = static_cast<uint32_t>(axisLen <= maxChunk ? axisLen : 2048);
        if (axisLen > maxChunk && 2 * td->kPitch > 4096) {
            return false;                                     // two chunks' candidates must fit one TopK
        }
        chunk = axisLen > maxChunk && chunk < minChunk ? minChunk : chunk;
        const uint64_t lanesTotal = columns ? inner : outer * inner;
        // columns: up to 256 lanes a block (short lanes: fewer, wider blocks, each a fixed cost of
        // copies and Gathers; the UB and the cores narrow it below)
        lanes = columns ? 256 : 32;
        lanes = lanesTotal < lanes ? static_cast<uint32_t>(lanesTotal) : lanes;
        // while more cores than blocks, narrower blocks
        while (lanes > 1 && outer * inner / lanes < coreNum && (!columns || lanes > laneAlign)) {
            lanes /= 2;
        }
        // shrink to the UB: lanes down to one aligned row, then chunks down to kPitch, then lanes to 1
        const uint32_t minLanes = columns ? laneAlign : 1;
        while (bytes(lanes, chunk) > budget) {
            if (lanes > minLanes) {
                lanes /= 2;
            } else if (chunk > minChunk && chunk > 32) {
                chunk = up32(chunk / 2) > minChunk ? up32(chunk / 2) : minChunk;
            } else if (lanes > 1) {
                lanes /= 2;
            } else {
                return false;
            }
        }
        return true;
    };
    bool fits = fit();
    if (columns) {
        // Columns: a block of L adjacent columns comes in as rows of L elements and its results go
        // out as k rows of L, rows of L * eb bytes (L is small when k or N is large: the results
        // are k rows of at least 32 bytes per block, the candidates 2k per lane). The other route,
        // MODE_TRANSPOSED: x through the workspace transposed into lanes by square tiles (64 x 64:
        // 256-byte rows of fp32), the lanes selected as rows, the results back the same way; it
        // moves x three times but in longer rows, and serves any k the rows do. The cheaper by
        // the GM bytes each moves, a copy's bytes over its rows' efficiency (rows under 512 bytes
        // move at row / 512 of the rate, at least 1/8: the cost model's short-burst rule), wins;
        // MODE_TRANSPOSED also when no block of columns fits.
        auto moved = [](double bytes, double row) {
            const double eff = row >= 512 ? 1.0 : (row <= 64 ? 0.125 : row / 512);
            return bytes / eff;
        };
        auto least = [](uint64_t a, uint64_t b) { return static_cast<double>(a < b ? a : b); };
        const double xs = static_cast<double>(outer) * axisLen * inner;
        const double ys = static_cast<double>(outer) * td->k * inner;
        const double ib = @IDXBYTES@;
        const double viaColumns = moved(xs * eb, lanes * eb) + moved(ys * eb, lanes * eb) + moved(ys * ib, lanes * ib);
        const bool columnsChunked = fits && chunk < axisLen;
        columns = false;
        maxChunk = 4096;
        bool viaLanes = false;
        const uint32_t sides[2] = {64, 32};
        for (uint32_t s : sides) {
            side = s;
            if ((viaLanes = fit())) {
                break;
            }
        }
        const double tile = least(side, inner);
        const double viaTransposed = viaLanes
            ? moved(xs * eb, tile * eb) + moved(xs * 4, least(side, axisLen) * 4) + moved(xs * 4, least(chunk, axisLen) * 4) +
              moved(2 * ys * 4, td->k * 4.0) + moved(2 * ys * 4, least(side, td->k) * 4) + moved(ys * eb, tile * eb) +
              moved(ys * ib, tile * ib)
            : 0.0;
        // A lane the columns must chunk (the UB) but the lanes take whole also saves its candidates'
        // merge, one more TopK call per lane, lane by lane; chunking columns means the narrowest
        // block already (rows of 32 bytes), where the transposes move as few bytes or fewer.
        const bool lanesWhole = viaLanes && chunk >= axisLen;
        if (viaLanes && (!fits || viaTransposed < viaColumns || (columnsChunked && lanesWhole))) {
            td->mode = MODE_TRANSPOSED;
            fits = true;
        } else {
            columns = true;                                   // the column plan again
            side = 0;
            maxChunk = 4064;
            fits = fits && fit();
        }
    }
    if (!fits) {
        return ge::GRAPH_FAILED;
    }
    td->side = side;
    td->lanes = lanes;
    td->lanePitch = lanePitchOf(lanes);
    td->chunkLen = chunk;
    td->chunkPitch = up32(chunk);
    td->chunks = static_cast<uint32_t>((axisLen + chunk - 1) / chunk);
    td->tailLen = static_cast<uint32_t>(axisLen - static_cast<uint64_t>(td->chunks - 1) * chunk);
    td->candCap = candCapOf(chunk);
    td->direct = directOf(lanes, chunk) ? 1 : 0;
    const bool chunked = td->chunks > 1;
    if (chunked && td->candCap > 4096) {
        return ge::GRAPH_FAILED;                              // a candidate row is one TopK call
    }
    if (!AscendC::TopKTilingFunc(platform, static_cast<int32_t>(td->chunkPitch), static_cast<int32_t>(lanes),
                                 static_cast<int32_t>(chunked ? td->kPitch : td->k), 4, false,
                                 AscendC::TopKMode::TOPK_NORMAL, largest, td->chunkTopk)) {
        return ge::GRAPH_FAILED;
    }
    uint64_t tmp = topkTmp(td->chunkPitch, lanes, false);
    if (chunked) {
        if (!AscendC::TopKTilingFunc(platform, static_cast<int32_t>(td->candCap), 1, static_cast<int32_t>(td->kPitch),
                                     4, true, AscendC::TopKMode::TOPK_NORMAL, largest, td->mergeTopk)) {
            return ge::GRAPH_FAILED;
        }
        const uint64_t m = topkTmp(td->candCap, 1, true);
        tmp = m > tmp ? m : tmp;
    }
    const uint64_t idx64 = static_cast<uint64_t>(columns ? td->lanePitch : lanes) * td->outPitch * @IDXSTAGEBYTES@;
    tmp = tmp > 16ull * side * side ? tmp : 16ull * side * side;
    td->tmpBytes = static_cast<uint32_t>(tmp > idx64 ? tmp : idx64);
    td->blocksPerOuter = columns ? (inner + lanes - 1) / lanes : 0;
    td->blocks = columns ? outer * td->blocksPerOuter : (outer * inner + lanes - 1) / lanes;
    // fewer blocks than cores and chunked lanes: the chunks split into segments, one unit each
    td->segments = 1;
    td->segChunks = td->chunks;
    if (chunked && td->blocks < coreNum) {
        uint64_t seg = (coreNum + td->blocks - 1) / td->blocks;
        seg = seg > td->chunks ? td->chunks : seg;
        td->segChunks = static_cast<uint32_t>((td->chunks + seg - 1) / seg);
        td->segments = (td->chunks + td->segChunks - 1) / td->segChunks;
    }
    const uint64_t units = td->blocks * td->segments;
@SPLIT@    // workspace floats: the segments' candidates; MODE_TRANSPOSED: then x's lanes, then their results
    const uint64_t candFloats = td->segments > 1 ? units * lanes * td->kPitch * 2 : 0;
    td->lanesOff = (candFloats + 127) / 128 * 128;
    td->resultsOff = td->lanesOff + (outer * inner * axisLen + 127) / 128 * 128;
    const uint64_t wsFloats = side > 0 ? td->resultsOff + outer * inner * td->k * 2 : candFloats;
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = wsFloats > 0 ? platform.GetLibApiWorkSpaceSize() + wsFloats * sizeof(float) : 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
