"""Greedy non-maximum suppression lowers to a three-phase vector kernel of its own:

    iou[i, j] = inter / (area_i + area_j - inter + 1e-6),   inter = clamp(x2 - x1, 0) * clamp(y2 - y1, 0)
    keep = the boxes in descending score order, each kept unless a kept box before it has
           !(iou <= iou_threshold) with it (a NaN IoU suppresses)

The golden is a Python loop over the sorted order (`int(idx)`), which `make_fx` cannot trace; it is
recognised through its semantic model (`semantic.py`): this module's `reference`, the golden's own
IoU formula and comparison, must reproduce the golden exactly on the probes below (random boxes,
unordered corners, all-zero and duplicate boxes, NaN / inf corners, boxes small enough that the
1e-6 matters, a threshold equal to an IoU the decision turns on, the cases' thresholds).

The kernel (AIV only; every float op in fp32 in the golden's order, so every keep decision is the
golden's):
A. Every core sorts all scores (Sort, descending, stable; padding scores -inf rank last) and, for
   its slice of ranks, gathers the boxes in score order and their areas into the workspace as five
   arrays [x1 | y1 | x2 | y2 | area] (rank-major), with the order itself.
B. After SyncAll, core k takes ranks r = k, k + C, ... (cyclic: the upper triangle's rows shrink,
   so every core gets long and short ones). Row r compares box r with the boxes of rank >= 256
   floor(r / 256) (the triangle, at a 256-column granule that keeps every bit row 32-byte aligned):
   14 vector instructions per row and column tile, the last a Compare LE that writes one bit per
   box: the "compatible" matrix, one bit row per rank in the workspace.
C. After SyncAll, core 0 scans ranks in blocks of 32: a block's bit rows come in by one DMA (the
   next block's prefetched), the block's alive word is read once, the 32 decisions are scalar bit
   tests (a kept rank's own row word clears the later ranks of its block it suppresses), and each
   kept rank's row is ANDed into the alive bits of all later ranks (one vector And). The kept ranks'
   original indices are packed by GatherMask over the kept bits, widened to int64, written with
   their count into out_shape (rank 1, then M).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.lowering.semantic import Probe, SemanticModel

MAX_SORT = 8160          # one Sort call: at most 255 repeats of 32


@dataclass
class NmsPlan:
    task: object
    boxes: int                          # input position of boxes [N, 4]
    scores: int                         # input position of scores [N]
    threshold_attr: str
    pattern: str = "nms"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


# ---- the semantic model -------------------------------------------------------------------------

def _threshold_attr(task) -> str | None:
    floats = [a.name for a in task.attrs if a.type == "float"]
    return floats[0] if len(floats) == 1 and len(task.attrs) == 1 else None


def roles(task) -> dict | None:
    """{"boxes": position, "scores": position} when the proto can be NMS: two float inputs shaped
    [N, 4] and [N] in every case, one int64 output, one float attr."""
    if len(task.inputs) != 2 or len(task.outputs) != 1 or _threshold_attr(task) is None:
        return None
    if tuple(task.outputs[0].dtypes) != ("int64",) or not task.cases:
        return None
    found = None
    for case in task.cases:
        shapes = case.shapes
        if any(s is None or isinstance(s, list) for s in shapes):
            return None
        for b, s in ((0, 1), (1, 0)):
            if len(shapes[b]) == 2 and shapes[b][1] == 4 and tuple(shapes[s]) == (shapes[b][0],):
                break
        else:
            return None
        if found not in (None, (b, s)):
            return None
        found = (b, s)
    return {"boxes": found[0], "scores": found[1]}


def reference(tensors: dict, attrs: dict):
    """Greedy NMS as the model states it: fp32 IoU in the golden's order of operations, boxes
    visited in descending score order (stable), a box kept unless a kept box has !(iou <= thr)."""
    import torch

    boxes, scores = tensors["boxes"], tensors["scores"]
    thr = float(next(iter(attrs.values())))
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    x1 = torch.maximum(boxes[:, None, 0], boxes[None, :, 0])
    y1 = torch.maximum(boxes[:, None, 1], boxes[None, :, 1])
    x2 = torch.minimum(boxes[:, None, 2], boxes[None, :, 2])
    y2 = torch.minimum(boxes[:, None, 3], boxes[None, :, 3])
    inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    compatible = (inter / (area[:, None] + area[None, :] - inter + 1e-6)) <= thr
    alive = torch.ones(boxes.shape[0], dtype=torch.bool)
    keep = []
    for i in scores.sort(descending=True, stable=True).indices.tolist():
        if alive[i]:
            keep.append(i)
            alive &= compatible[i]
    return torch.tensor(keep, dtype=torch.long)


def _probes(task, roles_: dict):
    import torch

    name = _threshold_attr(task)
    g = torch.Generator().manual_seed(16)

    def scores(n):                       # distinct scores: the golden's sort is not stable
        return (torch.randperm(n, generator=g) + 1).float() / n

    def boxes(n, lo=-1.0, hi=1.0, ordered=True):
        b = torch.rand(n, 4, generator=g) * (hi - lo) + lo
        if ordered:
            b = torch.stack([torch.minimum(b[:, 0], b[:, 2]), torch.minimum(b[:, 1], b[:, 3]),
                             torch.maximum(b[:, 0], b[:, 2]), torch.maximum(b[:, 1], b[:, 3])], 1)
        return b

    def probe(what, b, thr):
        return Probe(what, {"boxes": b.contiguous(), "scores": scores(b.shape[0])}, {name: thr})

    yield probe("random boxes, threshold 0.5", boxes(97), 0.5)
    yield probe("unordered corners", boxes(64, ordered=False), 0.3)
    yield probe("all-zero boxes", torch.zeros(40, 4), 0.5)
    yield probe("duplicate boxes", boxes(20).repeat(3, 1), 0.7)
    special = boxes(80, -3.0, 3.0, ordered=False)
    pick = torch.rand(80, 4, generator=g)
    special[pick < 0.08] = float("nan")
    special[(pick >= 0.08) & (pick < 0.14)] = float("inf")
    special[(pick >= 0.14) & (pick < 0.20)] = -float("inf")
    yield probe("NaN and inf corners", special, 0.5)
    yield probe("tiny boxes (the 1e-6 matters)", boxes(90, 0.0, 1e-3), 0.45)
    yield probe("a single box", boxes(1), 0.5)
    # the threshold equal to the IoU of the two best boxes: `<=` keeps the second, `<` does not
    b = boxes(50)
    p = probe("threshold at an IoU", b, 0.5)
    order = p.tensors["scores"].sort(descending=True).indices
    top, second = int(order[0]), int(order[1])
    b[second] = b[top] + torch.tensor([0.05, 0.02, 0.07, 0.01])
    x = b[[top, second]]
    area = (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    w = (torch.minimum(x[0, 2], x[1, 2]) - torch.maximum(x[0, 0], x[1, 0])).clamp(min=0)
    h = (torch.minimum(x[0, 3], x[1, 3]) - torch.maximum(x[0, 1], x[1, 1])).clamp(min=0)
    inter = w * h
    iou = float(inter / (area[0] + area[1] - inter + 1e-6))
    yield Probe("threshold at an IoU", {"boxes": b, "scores": p.tensors["scores"]}, {name: iou})
    values = sorted({float(c.attrs[name]) for c in task.cases if c.attrs.get(name) is not None})
    for thr in dict.fromkeys(values[:1] + values[-1:]):
        yield probe(f"the cases' threshold {thr:g}", boxes(120, -50.0, 50.0), thr)


def _plan(task, roles_: dict) -> NmsPlan:
    plan = NmsPlan(task, roles_["boxes"], roles_["scores"], _threshold_attr(task))
    for c in task.cases:
        n = c.shapes[plan.boxes][0]
        if c.dtypes[plan.boxes] != "float32" or c.dtypes[plan.scores] != "float32":
            plan.unserved[c.id] = f"dtypes {c.dtypes[plan.boxes]} / {c.dtypes[plan.scores]}: the kernel is fp32"
        elif n > MAX_SORT:
            plan.unserved[c.id] = f"N = {n}: one Sort call orders at most {MAX_SORT} scores"
    plan.notes.append("recognised by its semantic model (greedy NMS, the golden's IoU formula, "
                      f"`iou <= {plan.threshold_attr}` keeps): the golden's loop cannot be traced")
    return plan


MODEL = SemanticModel("greedy NMS", roles, reference, _probes, _plan)


# ---- the kernel ---------------------------------------------------------------------------------

def render(plan: NmsPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, float_attr_field
    from copilot.lowering.source import _ident

    t = plan.task
    cls = camel(t.name)
    args = [_ident(s.name) for s in t.inputs]
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD)
    subs = {"@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
            "@ARGS@": ", ".join(f"GM_ADDR {a}" for a in args + [_ident(t.outputs[0].name)]),
            "@BOXES@": args[plan.boxes], "@SCORES@": args[plan.scores], "@KEEP@": _ident(t.outputs[0].name),
            "@BOXES_POS@": str(plan.boxes), "@DTYPE_BYTES@": "",
            "@THRESHOLD@": float_attr_field(("attr", plan.threshold_attr), [a.name for a in t.attrs], "threshold"), "@SYNC@": SYNC_PIPES,
            "@RESERVE@": str(int(knobs["ub_reserve_bytes"])), "@MAX_SORT@": str(MAX_SORT)}
    for k, v in subs.items():
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: greedy non-maximum suppression. iou = inter / (area_i + area_j - inter + 1e-6) in fp32 in
// the golden's order; a box is kept unless a kept box of higher score has !(iou <= threshold).
// A: every core sorts the scores; each gathers its slice of ranks' boxes and areas (score order)
//    into the workspace. B: core k computes the bit rows of ranks k, k + C, ... (bit j of row r:
//    iou(r, j) <= threshold), from column 256 floor(r / 256) on. C: core 0 scans blocks of 32 ranks.
#include <cmath>
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t COORDS = 5;             // x1, y1, x2, y2, area: the sorted arrays in the workspace
constexpr uint32_t ROW_GRANULE = 256;      // a bit row starts at a multiple of 256 columns (32 bytes)
constexpr uint32_t SCAN_BLOCK = 32;        // ranks per scan block: one uint32 alive word

struct @T@ {
    uint32_t n;                 // boxes
    uint32_t sortLen;           // n rounded up to 32 (Sort's repeats)
    uint32_t cols;              // n rounded up to 256: ranks in the workspace, bits per row
    uint32_t rowBytes;          // cols / 8
    uint32_t slice;             // phase A: ranks per core (a multiple of 8)
    uint32_t maxRows;           // phase B: rows per core at most
    uint32_t tileCols;          // phase B: columns per tile (a multiple of 256)
    uint32_t sortTmpBytes;
    uint32_t arenaBytes;        // UB of the largest phase
    float threshold;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR boxes, GM_ADDR scores, GM_ADDR keep, GM_ADDR outShape, GM_ADDR workspace,
                                const @T@& tiling)
    {
        td_ = tiling;
        cores_ = GetBlockNum();
        core_ = GetBlockIdx();
        boxesGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(boxes), static_cast<uint64_t>(td_.n) * 4);
        scoresGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scores), td_.n);
        keepGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(keep), td_.n);
        shapeGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t*>(outShape), 9);
        __gm__ uint8_t* ws = reinterpret_cast<__gm__ uint8_t*>(GetUserWorkspace(workspace));
        sortedGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws), COORDS * td_.cols);
        orderGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(ws + COORDS * td_.cols * 4), td_.cols);
        maskGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(ws + (COORDS + 1) * td_.cols * 4),
                                static_cast<uint64_t>(td_.cols) * td_.rowBytes);
        pipe_.InitBuffer(arena_, td_.arenaBytes);   // one arena, carved per phase
    }

    __aicore__ inline void Process()
    {
        SortAndGather();
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        CompatibleRows();
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        if (core_ == 0) {
            Scan();
        }
    }

private:
@SYNC@
    __aicore__ inline static uint32_t Up32(uint32_t b) { return (b + 31) / 32 * 32; }

    template <typename U>
    __aicore__ inline LocalTensor<U> At(uint32_t byteOffset)
    {
        return arena_.Get<uint8_t>()[byteOffset].template ReinterpretCast<U>();
    }

    // Phase A: the score order (every core) and this core's slice of sorted boxes and areas.
    __aicore__ inline void SortAndGather()
    {
        const uint32_t tmpAt = 8 * td_.sortLen;
        const uint32_t scoreAt = tmpAt + Up32(td_.sortTmpBytes);
        const uint32_t indexAt = scoreAt + 4 * td_.sortLen;
        const uint32_t sliceAt = indexAt + 4 * td_.cols;
        LocalTensor<float> sorted = At<float>(0);
        LocalTensor<float> tmp = At<float>(tmpAt);
        LocalTensor<float> score = At<float>(scoreAt);
        LocalTensor<int32_t> index = At<int32_t>(indexAt);
        Duplicate(score, -INFINITY, static_cast<int32_t>(td_.sortLen));   // padding ranks last
        CreateVecIndex(index, 0, td_.cols);
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(score, scoresGm_, DataCopyExtParams(1, td_.n * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        Sort<float, true>(sorted, score, index.ReinterpretCast<uint32_t>(), tmp, static_cast<int32_t>(td_.sortLen / 32));
        PipeBarrier<PIPE_V>();
        Extract(score, index.ReinterpretCast<uint32_t>(), sorted, static_cast<int32_t>(td_.sortLen / 32));
        const uint32_t k0 = core_ * td_.slice;
        if (k0 >= td_.cols) {
            return;
        }
        const uint32_t len = td_.cols - k0 < td_.slice ? td_.cols - k0 : td_.slice;
        // the boxes (n x 16 bytes) over the sort's buffers, which are free now
        LocalTensor<float> boxes = At<float>(0);
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(boxes, boxesGm_, DataCopyExtParams(1, td_.n * 16, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        LocalTensor<float> coord = At<float>(sliceAt);                   // COORDS arrays of `slice`
        LocalTensor<int32_t> offset = At<int32_t>(sliceAt + COORDS * 4 * td_.slice);
        // byte offset of box order[k]'s corner c: order * 16 + 4 c (padding ranks read the last box)
        Mins(offset, index[k0], static_cast<int32_t>(td_.n - 1), static_cast<int32_t>(len));
        PipeBarrier<PIPE_V>();
        Muls(offset, offset, 16, static_cast<int32_t>(len));
        for (uint32_t c = 0; c < 4; ++c) {
            PipeBarrier<PIPE_V>();
            Gather(coord[c * td_.slice], boxes, offset.ReinterpretCast<uint32_t>(), 0, len);
            PipeBarrier<PIPE_V>();
            Adds(offset, offset, 4, static_cast<int32_t>(len));
        }
        // area = (x2 - x1) * (y2 - y1), per box as the golden computes it
        LocalTensor<float> height = offset.ReinterpretCast<float>();
        PipeBarrier<PIPE_V>();
        Sub(coord[4 * td_.slice], coord[2 * td_.slice], coord, static_cast<int32_t>(len));
        Sub(height, coord[3 * td_.slice], coord[td_.slice], static_cast<int32_t>(len));
        PipeBarrier<PIPE_V>();
        Mul(coord[4 * td_.slice], coord[4 * td_.slice], height, static_cast<int32_t>(len));
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams out(1, len * 4, 0, 0, 0);
        for (uint32_t c = 0; c < COORDS; ++c) {
            DataCopyPad(sortedGm_[c * td_.cols + k0], coord[c * td_.slice], out);
        }
        DataCopyPad(orderGm_[k0], index[k0], out);
    }

    // Phase B: bit rows of ranks core, core + C, ... over column tiles.
    __aicore__ inline void CompatibleRows()
    {
        if (core_ >= td_.n) {
            return;
        }
        const uint32_t rows = (td_.n - core_ + cores_ - 1) / cores_;
        const uint32_t colAt = COORDS * td_.maxRows * 32;
        const uint32_t tmpAt = colAt + COORDS * 4 * td_.tileCols;
        const uint32_t bitsAt = tmpAt + 3 * 4 * td_.tileCols;
        LocalTensor<float> rowVal = At<float>(0);                 // [COORDS][maxRows][8]: one value per 32 B
        LocalTensor<float> col = At<float>(colAt);                // [COORDS][tileCols]
        LocalTensor<float> a = At<float>(tmpAt);
        LocalTensor<float> b = At<float>(tmpAt + 4 * td_.tileCols);
        LocalTensor<float> c = At<float>(tmpAt + 8 * td_.tileCols);
        LocalTensor<uint8_t> bits = At<uint8_t>(bitsAt);           // [maxRows][tileCols / 8]
        const uint32_t bitRow = td_.tileCols / 8;
        // rows of other tiles leave stale bits below their start column, which no one reads
        Duplicate(bits.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0), static_cast<int32_t>(rows * bitRow / 2));
        DataCopyExtParams rowIn(static_cast<uint16_t>(rows), 4, (cores_ - 1) * 4, 0, 0);
        for (uint32_t k = 0; k < COORDS; ++k) {
            DataCopyPad(rowVal[k * td_.maxRows * 8], sortedGm_[k * td_.cols + core_], rowIn,
                        DataCopyPadExtParams<float>(false, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE2_S>();
        const float thr = td_.threshold;
        for (uint32_t t0 = 0; t0 < td_.cols; t0 += td_.tileCols) {
            const uint32_t tw = td_.cols - t0 < td_.tileCols ? td_.cols - t0 : td_.tileCols;
            SyncPipes<HardEvent::V_MTE2>();                     // the previous tile's columns are consumed
            DataCopyPad(col, sortedGm_[t0], DataCopyExtParams(COORDS, tw * 4, (td_.cols - tw) * 4, (td_.tileCols - tw) * 4 / 32, 0),
                        DataCopyPadExtParams<float>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            SyncPipes<HardEvent::MTE3_V>();                     // the previous tile's bits are out
            for (uint32_t j = 0; j < rows; ++j) {
                const uint32_t r = core_ + j * cores_;
                const uint32_t c0 = r / ROW_GRANULE * ROW_GRANULE;
                if (c0 >= t0 + tw) {
                    break;                                      // later rows start further right
                }
                const uint32_t s = c0 > t0 ? c0 - t0 : 0;       // first column of the row in this tile
                const int32_t len = static_cast<int32_t>(tw - s);
                const float x1 = rowVal.GetValue(j * 8);
                const float y1 = rowVal.GetValue((td_.maxRows + j) * 8);
                const float x2 = rowVal.GetValue((2 * td_.maxRows + j) * 8);
                const float y2 = rowVal.GetValue((3 * td_.maxRows + j) * 8);
                const float area = rowVal.GetValue((4 * td_.maxRows + j) * 8);
                Maxs(a, col[s], x1, len);                               // max(x1_r, x1_j)
                Mins(b, col[2 * td_.tileCols + s], x2, len);            // min(x2_r, x2_j)
                PipeBarrier<PIPE_V>();
                Sub(b, b, a, len);
                Maxs(a, col[td_.tileCols + s], y1, len);
                Mins(c, col[3 * td_.tileCols + s], y2, len);
                PipeBarrier<PIPE_V>();
                Sub(c, c, a, len);
                Maxs(b, b, 0.0f, len);                                  // clamp(min=0): NaN stays NaN
                PipeBarrier<PIPE_V>();
                Maxs(c, c, 0.0f, len);
                Adds(a, col[4 * td_.tileCols + s], area, len);          // area_r + area_j
                PipeBarrier<PIPE_V>();
                Mul(b, b, c, len);                                      // inter
                PipeBarrier<PIPE_V>();
                Sub(a, a, b, len);
                PipeBarrier<PIPE_V>();
                Adds(a, a, 1e-6f, len);
                PipeBarrier<PIPE_V>();
                Div(a, b, a, len);                                      // iou
                PipeBarrier<PIPE_V>();
                CompareScalar(bits[j * bitRow + s / 8], a, thr, CMPMODE::LE, static_cast<uint32_t>(len));
                PipeBarrier<PIPE_V>();
            }
            SyncPipes<HardEvent::V_MTE3>();
            // every row's tile of bits at once: row j of this core is rank core + j C
            DataCopyPad(maskGm_[static_cast<uint64_t>(core_) * td_.rowBytes + t0 / 8], bits,
                        DataCopyExtParams(static_cast<uint16_t>(rows), tw / 8, (td_.tileCols - tw) / 8 / 32,
                                          cores_ * td_.rowBytes - tw / 8, 0));
        }
    }

    // Phase C (core 0): the greedy pass over the ranks, 32 at a time.
    __aicore__ inline void Scan()
    {
        const uint32_t aliveAt = 4 * td_.cols;
        const uint32_t keptAt = aliveAt + td_.cols / 8;
        const uint32_t slotAt = keptAt + td_.cols / 8;
        const uint32_t slotBytes = SCAN_BLOCK * td_.rowBytes;
        const uint32_t outAt = slotAt + 2 * slotBytes;
        const uint32_t shapeAt = outAt + 8 * td_.cols;
        LocalTensor<int32_t> order = At<int32_t>(0);
        LocalTensor<uint32_t> alive = At<uint32_t>(aliveAt);     // bit r: rank r not suppressed yet
        LocalTensor<uint32_t> kept = At<uint32_t>(keptAt);       // bit r: rank r kept
        Duplicate(alive.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0xFFFF), static_cast<int32_t>(td_.cols / 16));
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(order, orderGm_, DataCopyExtParams(1, td_.cols * 4, 0, 0, 0), DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        const uint32_t blocks = (td_.n + SCAN_BLOCK - 1) / SCAN_BLOCK;
        TEventID loadedS[2] = {GetTPipePtr()->AllocEventID<HardEvent::MTE2_S>(), GetTPipePtr()->AllocEventID<HardEvent::MTE2_S>()};
        TEventID loadedV[2] = {GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>(), GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>()};
        LoadBlock(0, At<uint8_t>(slotAt));
        SetFlag<HardEvent::MTE2_S>(loadedS[0]);
        SetFlag<HardEvent::MTE2_V>(loadedV[0]);
        uint32_t count = 0;
        for (uint32_t blk = 0; blk < blocks; ++blk) {
            const uint32_t slot = blk & 1;
            SyncPipes<HardEvent::V_S>();                         // the previous block's Ands are done
            if (blk + 1 < blocks) {
                SyncPipes<HardEvent::V_MTE2>();                  // ... and no longer read the other slot
                LoadBlock(blk + 1, At<uint8_t>(slotAt + (slot ^ 1) * slotBytes));
                SetFlag<HardEvent::MTE2_S>(loadedS[slot ^ 1]);
                SetFlag<HardEvent::MTE2_V>(loadedV[slot ^ 1]);
            }
            WaitFlag<HardEvent::MTE2_S>(loadedS[slot]);
            WaitFlag<HardEvent::MTE2_V>(loadedV[slot]);
            const uint32_t r0 = blk * SCAN_BLOCK;
            const uint32_t c0 = r0 / ROW_GRANULE * ROW_GRANULE;
            const uint32_t rowWords = (td_.cols - c0) / 32;      // uint32 words of a loaded row
            const uint32_t word = (r0 - c0) / 32;                // this block's word within it
            LocalTensor<uint32_t> rowsHere = At<uint32_t>(slotAt + slot * slotBytes);
            const uint32_t ranks = td_.n - r0 < SCAN_BLOCK ? td_.n - r0 : SCAN_BLOCK;
            uint32_t cur = alive.GetValue(blk);
            uint32_t keptBits = 0;
            for (uint32_t i = 0; i < ranks; ++i) {
                if (((cur >> i) & 1u) == 0) {
                    continue;
                }
                keptBits |= 1u << i;
                ++count;
                cur &= rowsHere.GetValue(i * rowWords + word);  // the block's later ranks it suppresses
                And(alive[c0 / 32].ReinterpretCast<uint16_t>(), alive[c0 / 32].ReinterpretCast<uint16_t>(),
                    rowsHere[i * rowWords].ReinterpretCast<uint16_t>(), static_cast<int32_t>(rowWords * 2));
                PipeBarrier<PIPE_V>();
            }
            kept.SetValue(blk, keptBits);
        }
        for (uint32_t blk = blocks; blk < td_.cols / 32; ++blk) {
            kept.SetValue(blk, 0u);
        }
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_S>(loadedS[0]);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_S>(loadedS[1]);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(loadedV[0]);
        GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(loadedV[1]);
        // the kept ranks' original indices in rank order, as int64
        LocalTensor<int32_t> packed = At<int32_t>(slotAt);
        LocalTensor<int64_t> out = At<int64_t>(outAt);
        SyncPipes<HardEvent::S_V>();
        uint64_t packedCount = 0;
        GatherMask(packed, order, kept, true, td_.cols, GatherMaskParams(1, 1, 8, 0), packedCount);
        PipeBarrier<PIPE_V>();
        Cast(out, packed, RoundMode::CAST_NONE, count);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyPad(keepGm_, out, DataCopyExtParams(1, count * 8, 0, 0, 0));
        LocalTensor<uint64_t> shape = At<uint64_t>(shapeAt);
        shape.SetValue(0, static_cast<uint64_t>(1));                                    // rank 1
        shape.SetValue(1, static_cast<uint64_t>(count));                                // M
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(shapeGm_, shape, DataCopyExtParams(1, 2 * sizeof(uint64_t), 0, 0, 0));
    }

    // The bit rows of block `blk`'s ranks, from the block's 256-column granule on.
    __aicore__ inline void LoadBlock(uint32_t blk, const LocalTensor<uint8_t>& dst)
    {
        const uint32_t r0 = blk * SCAN_BLOCK;
        const uint32_t c0 = r0 / ROW_GRANULE * ROW_GRANULE;
        const uint32_t ranks = td_.n - r0 < SCAN_BLOCK ? td_.n - r0 : SCAN_BLOCK;
        const uint32_t bytes = (td_.cols - c0) / 8;
        DataCopyPad(dst, maskGm_[static_cast<uint64_t>(r0) * td_.rowBytes + c0 / 8],
                    DataCopyExtParams(static_cast<uint16_t>(ranks), bytes, c0 / 8, 0, 0),
                    DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> arena_;
    GlobalTensor<float> boxesGm_, scoresGm_, sortedGm_;
    GlobalTensor<int64_t> keepGm_;
    GlobalTensor<uint64_t> shapeGm_;
    GlobalTensor<int32_t> orderGm_;
    GlobalTensor<uint8_t> maskGm_;
    @T@ td_;
    uint32_t cores_ = 1;
    uint32_t core_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR out_shape, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@BOXES@, @SCORES@, @KEEP@, out_shape, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@THRESHOLD@    const gert::Shape& shape = context->GetInputShape(@BOXES_POS@)->GetStorageShape();
    if (shape.GetDimNum() != 2 || shape.GetDim(1) != 4 || shape.GetDim(0) < 1 || shape.GetDim(0) > @MAX_SORT@) {
        return ge::GRAPH_FAILED;                  // one Sort call orders at most @MAX_SORT@ scores
    }
    const uint32_t n = static_cast<uint32_t>(shape.GetDim(0));
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
    td->n = n;
    td->sortLen = (n + 31) / 32 * 32;
    td->cols = (n + 255) / 256 * 256;
    td->rowBytes = td->cols / 8;
    td->sortTmpBytes = AscendC::GetSortTmpSize(platform, td->sortLen, 4);
    // phase B rows are cyclic over the cores; at least 8 rows a core (a row is ~14 instructions)
    uint32_t blockDim = (n + 7) / 8;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    blockDim = blockDim == 0 ? 1 : blockDim;
    td->maxRows = (n + blockDim - 1) / blockDim;
    td->slice = ((td->cols + blockDim - 1) / blockDim + 7) / 8 * 8;
    auto up32 = [](uint64_t b) { return (b + 31) / 32 * 32; };
    const uint64_t phaseA = 12ull * td->sortLen + up32(td->sortTmpBytes) + 4ull * td->cols + 24ull * td->slice;
    const uint64_t phaseC = 4ull * td->cols + 2ull * (td->cols / 8) + 2ull * 32 * td->rowBytes + 8ull * td->cols + 32;
    if (phaseA > budget || phaseC > budget) {
        return ge::GRAPH_FAILED;
    }
    // phase B: the widest column tile (whole 256-column granules) that fits beside the rows'
    // values: per column 5 arrays + 3 temporaries in fp32 and one bit per row
    const uint64_t fixed = 5ull * td->maxRows * 32;
    if (budget <= fixed + 256) {
        return ge::GRAPH_FAILED;
    }
    uint64_t tile = (budget - fixed) * 8 / (256 + td->maxRows) / 256 * 256;
    tile = tile > td->cols ? td->cols : tile;
    if (tile < 256) {
        return ge::GRAPH_FAILED;
    }
    td->tileCols = static_cast<uint32_t>(tile);
    const uint64_t phaseB = fixed + 32ull * td->tileCols + static_cast<uint64_t>(td->maxRows) * (td->tileCols / 8);
    uint64_t arena = phaseA > phaseB ? phaseA : phaseB;
    td->arenaBytes = static_cast<uint32_t>(arena > phaseC ? arena : phaseC);
    context->SetBlockDim(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    // the sorted boxes and areas, the order, the bit matrix (cols x cols bits)
    workspace[0] = platform.GetLibApiWorkSpaceSize() + (5ull + 1) * td->cols * 4 + static_cast<uint64_t>(td->cols) * td->rowBytes;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
