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
   12 vector instructions per row and column tile (the x and y extents side by side: one Sub and
   one clamp serve both), the last a Compare LE that writes one bit per box: the "compatible"
   matrix, one bit row per rank, each scan block's 32 rows contiguous in the workspace; two
   ReduceMax give the row's largest IoU with the later ranks of its block and past it.
C. After SyncAll, core 0 scans ranks in blocks of 32: a block's bit rows come in by one DMA (up to
   4 blocks ahead), the block's alive word is read once, the 32 decisions are scalar bit
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
//    iou(r, j) <= threshold), from column 256 floor(r / 256) on, and each row's largest IoU past
//    its 32-rank block. C: core 0 scans blocks of 32 ranks.
#include <cmath>
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t COORDS = 5;             // x1, y1, x2, y2, area: the sorted arrays in the workspace
constexpr uint32_t ROW_GRANULE = 256;      // a bit row starts at a multiple of 256 columns (32 bytes)
constexpr uint32_t SCAN_BLOCK = 32;        // ranks per scan block: one uint32 alive word
constexpr uint32_t MAX_DEPTH = 4;          // scan blocks in flight
constexpr uint32_t MAX_TILES = 8;          // column tiles of phase B

struct @T@ {
    uint32_t n;                 // boxes
    uint32_t sortLen;           // n rounded up to 32 (Sort's repeats)
    uint32_t cols;              // n rounded up to 256: ranks in the workspace, bits per row
    uint32_t rowBytes;          // cols / 8
    uint32_t slice;             // phase A: ranks per core (a multiple of 8)
    uint32_t maxRows;           // phase B: rows per core at most
    uint32_t tileCols;          // phase B: columns per tile (a multiple of 256)
    uint32_t tiles;
    uint32_t depth;             // phase C: scan blocks loaded ahead
    uint32_t sortTmpBytes;
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
        // workspace: sorted [x1 | y1 | x2 | y2 | area] (cols each), the order (cols), each row's
        // largest IoU with the later ranks of its block and past it (cols + 64 each), the bit rows
        __gm__ uint8_t* ws = reinterpret_cast<__gm__ uint8_t*>(GetUserWorkspace(workspace));
        sortedGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws), COORDS * td_.cols);
        orderGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(ws + COORDS * td_.cols * 4), td_.cols);
        rowMaxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + (COORDS + 1) * td_.cols * 4), td_.cols + 64);
        diagMaxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + ((COORDS + 2) * td_.cols + 64) * 4), td_.cols + 64);
        maskGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(ws + ((COORDS + 3) * td_.cols + 128) * 4),
                                static_cast<uint64_t>(td_.cols) * td_.rowBytes);
    }

    __aicore__ inline void Process()
    {
        SortAndGather();
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        pipe_.Reset();
        CompatibleRows();
        PipeBarrier<PIPE_ALL>();
        SyncAll();
        if (core_ == 0) {
            pipe_.Reset();
            Scan();
        }
    }

private:
@SYNC@
    __aicore__ inline static uint32_t Up32(uint32_t b) { return (b + 31) / 32 * 32; }

    // The bit rows of a scan block are contiguous in GM: block b's 32 rows start at column
    // c0 = 256 floor(b / 8) and are (cols - c0) / 8 bytes each; the blocks follow each other.
    __aicore__ inline uint32_t RowPitch(uint32_t blk) const { return td_.rowBytes - 32 * (blk / 8); }
    __aicore__ inline uint64_t BlockAt(uint32_t blk) const
    {
        const uint64_t g = blk / 8;
        return 256 * (g * td_.rowBytes - 16 * g * (g > 0 ? g - 1 : 0)) + static_cast<uint64_t>(blk % 8) * 32 * RowPitch(blk);
    }

    // Phase A: the score order (every core) and this core's slice of sorted boxes and areas.
    __aicore__ inline void SortAndGather()
    {
        const uint32_t work = 8 * td_.sortLen + Up32(td_.sortTmpBytes);
        pipe_.InitBuffer(workBuf_, work > 16 * td_.n + 32 ? work : 16 * td_.n + 32);   // the sort, then the boxes
        pipe_.InitBuffer(scoreBuf_, 4 * td_.sortLen);
        pipe_.InitBuffer(indexBuf_, 4 * td_.cols);
        pipe_.InitBuffer(coordBuf_, COORDS * 4 * td_.slice);
        pipe_.InitBuffer(offsetBuf_, 4 * td_.slice);
        LocalTensor<float> sorted = workBuf_.Get<float>();
        LocalTensor<float> tmp = sorted[2 * td_.sortLen];
        LocalTensor<float> score = scoreBuf_.Get<float>();
        LocalTensor<int32_t> index = indexBuf_.Get<int32_t>();
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
        LocalTensor<float> boxes = workBuf_.Get<float>();        // n x 4, over the sort's buffers
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(boxes, boxesGm_, DataCopyExtParams(1, td_.n * 16, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        LocalTensor<float> coord = coordBuf_.Get<float>();       // COORDS arrays of `slice`
        LocalTensor<int32_t> offset = offsetBuf_.Get<int32_t>();
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

    // Phase B: bit rows of ranks core, core + C, ... over column tiles, 32 rows a bit buffer.
    __aicore__ inline void CompatibleRows()
    {
        const uint32_t rows = (td_.n - core_ + cores_ - 1) / cores_;   // blockDim <= n: at least one
        const uint32_t bitRow = td_.tileCols / 8;
        pipe_.InitBuffer(rowValBuf_, COORDS * td_.maxRows * 32);     // [COORDS][maxRows][8]: a value per 32 B
        pipe_.InitBuffer(colBuf_, COORDS * 4 * td_.tileCols);         // [COORDS][tileCols]
        // a: max(x1) then max(y1) of a row, adjacent; b: min(x2) then min(y2): one Sub and one clamp
        // serve both axes
        pipe_.InitBuffer(aBuf_, 8 * td_.tileCols + 256);               // + one repeat: the block's masked max
        pipe_.InitBuffer(bBuf_, 8 * td_.tileCols);
        pipe_.InitBuffer(bitsBuf_[0], SCAN_BLOCK * bitRow);
        pipe_.InitBuffer(bitsBuf_[1], SCAN_BLOCK * bitRow);
        pipe_.InitBuffer(rowMaxBuf_, (td_.tiles + 1) * td_.maxRows * 32);   // [tiles][maxRows][8], then the block's
        pipe_.InitBuffer(reduceTmpBuf_, td_.tileCols / 8 + 64);
        LocalTensor<float> rowVal = rowValBuf_.Get<float>();
        LocalTensor<float> col = colBuf_.Get<float>();
        LocalTensor<float> a = aBuf_.Get<float>();
        LocalTensor<float> b = bBuf_.Get<float>();
        LocalTensor<float> rowMax = rowMaxBuf_.Get<float>();
        // rows a tile does not reach leave stale bits below their start column, which no one reads
        Duplicate(bitsBuf_[0].Get<uint16_t>(), static_cast<uint16_t>(0), static_cast<int32_t>(SCAN_BLOCK * bitRow / 2));
        Duplicate(bitsBuf_[1].Get<uint16_t>(), static_cast<uint16_t>(0), static_cast<int32_t>(SCAN_BLOCK * bitRow / 2));
        LocalTensor<float> diagMax = rowMax[td_.tiles * td_.maxRows * 8];
        Duplicate(rowMax, -INFINITY, static_cast<int32_t>((td_.tiles + 1) * td_.maxRows * 8));
        DataCopyExtParams rowIn(static_cast<uint16_t>(rows), 4, (cores_ - 1) * 4, 0, 0);
        for (uint32_t k = 0; k < COORDS; ++k) {
            DataCopyPad(rowVal[k * td_.maxRows * 8], sortedGm_[k * td_.cols + core_], rowIn,
                        DataCopyPadExtParams<float>(false, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE2_S>();
        TEventID bitsOut[2] = {GetTPipePtr()->AllocEventID<HardEvent::MTE3_V>(), GetTPipePtr()->AllocEventID<HardEvent::MTE3_V>()};
        bool pending[2] = {false, false};
        uint32_t groups = 0;
        const float thr = td_.threshold;
        for (uint32_t t = 0; t < td_.tiles; ++t) {
            const uint32_t t0 = t * td_.tileCols;
            const uint32_t tw = td_.cols - t0 < td_.tileCols ? td_.cols - t0 : td_.tileCols;
            const uint32_t real = td_.n < t0 + tw ? td_.n : t0 + tw;   // columns past n are padding
            SyncPipes<HardEvent::V_MTE2>();                             // the previous tile's columns are consumed
            DataCopyPad(col, sortedGm_[t0], DataCopyExtParams(COORDS, tw * 4, (td_.cols - tw) * 4, (td_.tileCols - tw) * 4 / 32, 0),
                        DataCopyPadExtParams<float>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            for (uint32_t g = 0; g * SCAN_BLOCK < rows; ++g) {
                const uint32_t j0 = g * SCAN_BLOCK;
                if ((core_ + j0 * cores_) / ROW_GRANULE * ROW_GRANULE >= t0 + tw) {
                    break;                                              // later rows start further right
                }
                const uint32_t q = groups & 1;
                if (pending[q]) {
                    WaitFlag<HardEvent::MTE3_V>(bitsOut[q]);            // this buffer's last rows are out
                }
                LocalTensor<uint8_t> bits = bitsBuf_[q].Get<uint8_t>();
                const uint32_t j1 = rows - j0 < SCAN_BLOCK ? rows : j0 + SCAN_BLOCK;
                for (uint32_t j = j0; j < j1; ++j) {
                    const uint32_t r = core_ + j * cores_;
                    const uint32_t c0 = r / ROW_GRANULE * ROW_GRANULE;
                    if (c0 >= t0 + tw) {
                        break;
                    }
                    const uint32_t s = c0 > t0 ? c0 - t0 : 0;           // first column of the row in this tile
                    const int32_t len = static_cast<int32_t>(tw - s);
                    const float x1 = rowVal.GetValue(j * 8);
                    const float y1 = rowVal.GetValue((td_.maxRows + j) * 8);
                    const float x2 = rowVal.GetValue((2 * td_.maxRows + j) * 8);
                    const float y2 = rowVal.GetValue((3 * td_.maxRows + j) * 8);
                    const float area = rowVal.GetValue((4 * td_.maxRows + j) * 8);
                    Maxs(a, col[s], x1, len);                           // max(x1_r, x1_j)
                    Maxs(a[len], col[td_.tileCols + s], y1, len);       // max(y1_r, y1_j)
                    Mins(b, col[2 * td_.tileCols + s], x2, len);        // min(x2_r, x2_j)
                    Mins(b[len], col[3 * td_.tileCols + s], y2, len);   // min(y2_r, y2_j)
                    PipeBarrier<PIPE_V>();
                    Sub(b, b, a, 2 * len);                              // w, then h
                    PipeBarrier<PIPE_V>();
                    Maxs(b, b, 0.0f, 2 * len);                          // clamp(min=0): NaN stays NaN
                    Adds(a, col[4 * td_.tileCols + s], area, len);      // area_r + area_j
                    PipeBarrier<PIPE_V>();
                    Mul(b, b, b[len], len);                             // inter
                    PipeBarrier<PIPE_V>();
                    Sub(a, a, b, len);
                    PipeBarrier<PIPE_V>();
                    Adds(a, a, 1e-6f, len);
                    PipeBarrier<PIPE_V>();
                    Div(a, b, a, len);                                  // iou
                    PipeBarrier<PIPE_V>();
                    CompareScalar(bits[(j - j0) * bitRow + s / 8], a, thr, CMPMODE::LE, static_cast<uint32_t>(len));
                    // the largest IoU with ranks past the row's scan block (NaN wins): the scan skips
                    // the And of a kept row that suppresses none of them
                    const uint32_t past = (r / SCAN_BLOCK + 1) * SCAN_BLOCK;
                    const uint32_t lo = past > t0 + s ? past : t0 + s;
                    if (real > lo) {
                        ReduceMax(rowMax[(t * td_.maxRows + j) * 8], a[lo - t0 - s], reduceTmpBuf_.Get<float>(),
                                  static_cast<int32_t>(real - lo));
                    }
                    // ... and with the later ranks of its own block (lanes r % 32 + 1 .. 31 of the
                    // block's repeat): the scan skips reading its row word when it suppresses none
                    const uint32_t first = past - SCAN_BLOCK;
                    if (first >= t0 + s && first < t0 + tw) {
                        const uint32_t end = real < past ? real - first : SCAN_BLOCK;    // lanes < end
                        const uint32_t from = r - first + 1;
                        if (end > from) {
                            uint64_t lanes[2] = {((1ull << end) - 1) & ~((1ull << from) - 1), 0};
                            ReduceMax(diagMax[j * 8], a[first - t0 - s], reduceTmpBuf_.Get<float>(), lanes, 1, 8);
                        }
                    }
                    PipeBarrier<PIPE_V>();
                }
                SyncPipes<HardEvent::V_MTE3>();
                // each row's bits of this tile to its place in its scan block
                for (uint32_t j = j0; j < j1; ++j) {
                    const uint32_t r = core_ + j * cores_;
                    const uint32_t c0 = r / ROW_GRANULE * ROW_GRANULE;
                    if (c0 >= t0 + tw) {
                        break;
                    }
                    const uint32_t s = c0 > t0 ? c0 - t0 : 0;
                    const uint32_t blk = r / SCAN_BLOCK;
                    DataCopyPad(maskGm_[BlockAt(blk) + (r % SCAN_BLOCK) * RowPitch(blk) + (t0 + s - c0) / 8],
                                bits[(j - j0) * bitRow + s / 8], DataCopyExtParams(1, (tw - s) / 8, 0, 0, 0));
                }
                SetFlag<HardEvent::MTE3_V>(bitsOut[q]);
                pending[q] = true;
                ++groups;
            }
        }
        for (uint32_t q = 0; q < 2; ++q) {
            if (pending[q]) {
                WaitFlag<HardEvent::MTE3_V>(bitsOut[q]);
            }
            GetTPipePtr()->ReleaseEventID<HardEvent::MTE3_V>(bitsOut[q]);
        }
        for (uint32_t t = 1; t < td_.tiles; ++t) {
            Max(rowMax, rowMax, rowMax[t * td_.maxRows * 8], static_cast<int32_t>(td_.maxRows * 8));
            PipeBarrier<PIPE_V>();
        }
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams maxOut(static_cast<uint16_t>(rows), 4, 0, (cores_ - 1) * 4, 0);
        DataCopyPad(rowMaxGm_[core_], rowMax, maxOut);
        DataCopyPad(diagMaxGm_[core_], diagMax, maxOut);
    }

    // Phase C (core 0): the greedy pass over the ranks, 32 at a time, `depth` blocks loaded ahead.
    __aicore__ inline void Scan()
    {
        pipe_.InitBuffer(orderBuf_, 4 * td_.cols);
        pipe_.InitBuffer(aliveBuf_, td_.cols / 8);                // bit r: rank r not suppressed yet
        pipe_.InitBuffer(keptBuf_, td_.cols / 8);                 // bit r: rank r kept
        pipe_.InitBuffer(quietBuf_, td_.cols / 8);                // bit r: rank r suppresses no rank of a later block
        pipe_.InitBuffer(quietHereBuf_, td_.cols / 8);            // bit r: ... none of the later ranks of its own block
        pipe_.InitBuffer(outBuf_, 8 * td_.cols);
        pipe_.InitBuffer(shapeBuf_, 32);
        for (uint32_t d = 0; d < td_.depth; ++d) {
            pipe_.InitBuffer(slotBuf_[d], SCAN_BLOCK * td_.rowBytes);
        }
        LocalTensor<int32_t> order = orderBuf_.Get<int32_t>();
        LocalTensor<uint32_t> alive = aliveBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> kept = keptBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> quiet = quietBuf_.Get<uint32_t>();
        LocalTensor<uint32_t> quietHere = quietHereBuf_.Get<uint32_t>();
        LocalTensor<float> largest = outBuf_.Get<float>();      // the rows' largest IoUs, before the output
        Duplicate(alive.ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0xFFFF), static_cast<int32_t>(td_.cols / 16));
        DataCopyPad(order, orderGm_, DataCopyExtParams(1, td_.cols * 4, 0, 0, 0), DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
        DataCopyPad(largest, rowMaxGm_, DataCopyExtParams(1, td_.cols * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        DataCopyPad(largest[td_.cols], diagMaxGm_, DataCopyExtParams(1, td_.cols * 4, 0, 0, 0),
                    DataCopyPadExtParams<float>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        // a largest IoU <= threshold (no NaN): the rank suppresses none of those ranks
        CompareScalar(quiet.ReinterpretCast<uint8_t>(), largest, td_.threshold, CMPMODE::LE, td_.cols);
        CompareScalar(quietHere.ReinterpretCast<uint8_t>(), largest[td_.cols], td_.threshold, CMPMODE::LE, td_.cols);
        const uint32_t blocks = (td_.n + SCAN_BLOCK - 1) / SCAN_BLOCK;
        TEventID loadedS[MAX_DEPTH];
        TEventID loadedV[MAX_DEPTH];
        for (uint32_t d = 0; d < td_.depth; ++d) {
            loadedS[d] = GetTPipePtr()->AllocEventID<HardEvent::MTE2_S>();
            loadedV[d] = GetTPipePtr()->AllocEventID<HardEvent::MTE2_V>();
            if (d < blocks) {
                LoadBlock(d, d, loadedS[d], loadedV[d]);
            }
        }
        uint32_t count = 0;
        for (uint32_t blk = 0; blk < blocks; ++blk) {
            const uint32_t slot = blk % td_.depth;
            WaitFlag<HardEvent::MTE2_S>(loadedS[slot]);
            WaitFlag<HardEvent::MTE2_V>(loadedV[slot]);
            SyncPipes<HardEvent::V_S>();                         // the previous block's Ands are done
            const uint32_t r0 = blk * SCAN_BLOCK;
            const uint32_t c0 = r0 / ROW_GRANULE * ROW_GRANULE;
            const uint32_t rowWords = RowPitch(blk) / 4;        // uint32 words of a loaded row
            const uint32_t word = (r0 - c0) / 32;                // this block's word within it
            LocalTensor<uint32_t> rowsHere = slotBuf_[slot].Get<uint32_t>();
            const uint32_t ranks = td_.n - r0 < SCAN_BLOCK ? td_.n - r0 : SCAN_BLOCK;
            const uint32_t quietPast = quiet.GetValue(blk);
            const uint32_t quietBlock = quietHere.GetValue(blk);
            uint32_t cur = alive.GetValue(blk);
            uint32_t keptBits = 0;
            for (uint32_t i = 0; i < ranks; ++i) {
                if (((cur >> i) & 1u) == 0) {
                    continue;
                }
                keptBits |= 1u << i;
                ++count;
                if (((quietBlock >> i) & 1u) == 0) {
                    cur &= rowsHere.GetValue(i * rowWords + word);  // the block's later ranks it suppresses
                }
                if (((quietPast >> i) & 1u) == 0) {              // it suppresses some rank of a later block
                    And(alive[c0 / 32].ReinterpretCast<uint16_t>(), alive[c0 / 32].ReinterpretCast<uint16_t>(),
                        rowsHere[i * rowWords].ReinterpretCast<uint16_t>(), static_cast<int32_t>(rowWords * 2));
                    PipeBarrier<PIPE_V>();
                }
            }
            kept.SetValue(blk, keptBits);
            if (blk + td_.depth < blocks) {
                SyncPipes<HardEvent::V_MTE2>();                  // this slot's Ands are done
                LoadBlock(blk + td_.depth, slot, loadedS[slot], loadedV[slot]);
            }
        }
        for (uint32_t blk = blocks; blk < td_.cols / 32; ++blk) {
            kept.SetValue(blk, 0u);
        }
        for (uint32_t d = 0; d < td_.depth; ++d) {
            GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_S>(loadedS[d]);
            GetTPipePtr()->ReleaseEventID<HardEvent::MTE2_V>(loadedV[d]);
        }
        // the kept ranks' original indices in rank order, as int64
        LocalTensor<int32_t> packed = slotBuf_[0].Get<int32_t>();
        LocalTensor<int64_t> out = outBuf_.Get<int64_t>();
        SyncPipes<HardEvent::S_V>();
        uint64_t packedCount = 0;
        GatherMask(packed, order, kept, true, td_.cols, GatherMaskParams(1, 1, 8, 0), packedCount);
        PipeBarrier<PIPE_V>();
        Cast(out, packed, RoundMode::CAST_NONE, count);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyPad(keepGm_, out, DataCopyExtParams(1, count * 8, 0, 0, 0));
        LocalTensor<uint64_t> shape = shapeBuf_.Get<uint64_t>();
        shape.SetValue(0, static_cast<uint64_t>(1));             // rank 1
        shape.SetValue(1, static_cast<uint64_t>(count));         // M
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(shapeGm_, shape, DataCopyExtParams(1, 2 * sizeof(uint64_t), 0, 0, 0));
    }

    // Block `blk`'s bit rows (from its 256-column granule on) into slot `slot`.
    __aicore__ inline void LoadBlock(uint32_t blk, uint32_t slot, TEventID s, TEventID v)
    {
        const uint32_t r0 = blk * SCAN_BLOCK;
        const uint32_t c0 = r0 / ROW_GRANULE * ROW_GRANULE;
        const uint32_t ranks = td_.n - r0 < SCAN_BLOCK ? td_.n - r0 : SCAN_BLOCK;
        DataCopyPad(slotBuf_[slot].Get<uint8_t>(), maskGm_[BlockAt(blk)], DataCopyExtParams(1, ranks * RowPitch(blk), 0, 0, 0),
                    DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
        SetFlag<HardEvent::MTE2_S>(s);
        SetFlag<HardEvent::MTE2_V>(v);
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> workBuf_, scoreBuf_, indexBuf_, coordBuf_, offsetBuf_;                  // phase A
    TBuf<TPosition::VECCALC> rowValBuf_, colBuf_, aBuf_, bBuf_, bitsBuf_[2], rowMaxBuf_, reduceTmpBuf_;  // B
    TBuf<TPosition::VECCALC> orderBuf_, aliveBuf_, keptBuf_, quietBuf_, quietHereBuf_, outBuf_, shapeBuf_;  // C
    TBuf<TPosition::VECCALC> slotBuf_[MAX_DEPTH];
    GlobalTensor<float> boxesGm_, scoresGm_, sortedGm_, rowMaxGm_, diagMaxGm_;
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
    auto up32 = [](uint64_t b) { return (b + 31) / 32 * 32; };
    td->n = n;
    td->sortLen = (n + 31) / 32 * 32;
    td->cols = (n + 255) / 256 * 256;
    td->rowBytes = td->cols / 8;
    td->sortTmpBytes = AscendC::GetSortTmpSize(platform, td->sortLen, 4);
    // phase B rows are cyclic over the cores; at least 8 rows a core (a row is 14 vector instructions)
    uint32_t blockDim = (n + 7) / 8;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    td->maxRows = (n + blockDim - 1) / blockDim;
    td->slice = ((td->cols + blockDim - 1) / blockDim + 7) / 8 * 8;
    uint64_t work = 8ull * td->sortLen + up32(td->sortTmpBytes);
    work = work > 16ull * n + 32 ? work : 16ull * n + 32;
    const uint64_t phaseA = work + 4ull * td->sortLen + 4ull * td->cols + 24ull * td->slice;
    // phase C: order, alive and kept bits, the int64 output, `depth` slots of 32 bit rows
    const uint64_t phaseC = 4ull * td->cols + 4ull * (td->cols / 8) + 8ull * td->cols + 32;
    const uint64_t slot = 32ull * td->rowBytes;
    if (phaseA > budget || phaseC + slot > budget) {
        return ge::GRAPH_FAILED;
    }
    uint64_t depth = (budget - phaseC) / slot;
    depth = depth > 4 ? 4 : depth;
    td->depth = static_cast<uint32_t>(depth);
    // phase B: the widest column tile (whole 256-column granules) beside the rows' values: per
    // column 5 arrays and 4 temporaries in fp32, two buffers of 32 bit rows, the reduce's space;
    // the tiles evened out
    const uint64_t fixed = 5ull * td->maxRows * 32 + 9ull * td->maxRows * 32 + 64 + 256;
    if (budget <= fixed + 256 * 41) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t widest = (budget - fixed) * 8 / (36 * 8 + 64 + 1) / 256 * 256;
    const uint64_t tiles = (td->cols + widest - 1) / widest;
    if (widest < 256 || tiles > 8) {
        return ge::GRAPH_FAILED;
    }
    td->tiles = static_cast<uint32_t>(tiles);
    td->tileCols = static_cast<uint32_t>((td->cols / 256 + tiles - 1) / tiles * 256);
    context->SetBlockDim(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    // the sorted boxes and areas, the order, the rows' largest IoUs, the bit rows (the triangle fits cols x cols bits)
    workspace[0] = platform.GetLibApiWorkSpaceSize() + ((5ull + 3) * td->cols + 128) * 4 +
                   static_cast<uint64_t>(td->cols) * td->rowBytes;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
