"""ROI align (Mask R-CNN's bilinear ROI pooling) lowers to a vector kernel of its own:

    y[r, c, ph, pw] = (1 / count) * sum over the bin's gh x gw samples of the bilinear value of
                      x[b(r), c] at (y(ph, iy), x(pw, ix)),
    y(ph, iy) = start_h + ph * bin_h + (iy + 0.5) * (bin_h / gh)   (x likewise)

with the box `(b, x0, y0, x1, y1)` of row r of `boxes` scaled by `spatial_scale` (minus 0.5 when
`aligned`; the ROI at least 1 x 1 when not), the grid `gh = gw = sampling_ratio` when it is > 0, else
`ceil(roi_h / pooled_h)`, `ceil(roi_w / pooled_w)` per ROI (data-dependent), and the corners clamped
as the torchvision reference's Python fallback does (samples below 0 move to 0, samples past the
last row / column take it twice; no sample is zeroed outside the map).

Matched by the golden's traced graph (gathers `aten.index` of the feature map with indices computed
from the boxes, summed over the sample axes), then confirmed on small fp64 probes against this
module's reference for every attr combination the cases use, and for moved attrs, which ties
spatial_scale, sampling_ratio and aligned to the attrs that hold them. The pooled size is y's shape.

The kernel (AIV only, two phases over every core):
1. x [B, C, H, W] -> a channel-last fp32 copy [B, H*W, Cp] in the workspace (Cp = C rounded up to
   8): tiles of channels x pixels in by one strided DMA, transposed by Gather, out by one DMA.
2. After SyncAll, a unit is (ROI, channel block, group of bin rows). Per sample row the two feature
   rows' pixel runs the ROI's samples touch come in by DMA (channels contiguous), and each sample is
   blended from its 4 corners' channel vectors in the golden's order of float operations
   ((w1 v1 + w2 v2) + w3 v3) + w4 v4, summed per bin, divided by the count; the [bins, channels]
   block is transposed back by Gather and written as y rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PROBE_SHAPES = ((2, 3, 9, 11), (1, 2, 6, 5))


@dataclass
class RoiAlignPlan:
    task: object
    x: int
    boxes: int
    scale_attr: str
    ratio_attr: str
    aligned_attr: str
    adaptive: bool                     # sampling ratio <= 0 (a grid of ceil(roi / pooled) per ROI) is served
    pattern: str = "roi_align"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _gathers_x_by_boxes(task, case) -> bool:
    """Whether the traced golden gathers the feature map (input 0) by `aten.index` with indices
    computed from the boxes (input 1); what it makes of the samples the probes tell."""
    from copilot.lowering.cube import trace_case
    from copilot.lowering.indexing import source_of

    gm, present = trace_case(task, case)
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if present != [0, 1] or len(places) != 2:
        return False
    x_ph, box_ph = places
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    index = [n for n in calls if _name(n) == "index"]
    if not index or len(index) % 4:            # four corners per sample chunk
        return False
    if any(source_of(n.args[0], {"_to_copy", "clone", "contiguous"}) is not x_ph for n in index):
        return False
    # the boxes reach the indices: some index argument depends on the boxes placeholder
    seen, todo = set(), [a for n in index for a in n.args[1] if a is not None]
    while todo:
        v = todo.pop()
        if v is box_ph:
            return True
        if id(v) in seen or not hasattr(v, "all_input_nodes"):
            continue
        seen.add(id(v))
        todo.extend(v.all_input_nodes)
    return False


def reference(x, boxes, pooled_h: int, pooled_w: int, scale: float, ratio: int, aligned: bool):
    """ROI align in float64 with the fallback's clamping (what the kernel computes, in fp32)."""
    import torch

    n_rois, (_, channels, height, width) = boxes.shape[0], x.shape
    out = torch.zeros((n_rois, channels, pooled_h, pooled_w), dtype=torch.float64)
    off = 0.5 if aligned else 0.0

    def corners(start, bin_size, grid, pooled, size):
        """Per (bin, sample) of one axis: low and high index and the high corner's weight."""
        at = torch.arange(pooled, dtype=torch.float64)[:, None] * bin_size + start
        v = (at + (torch.arange(grid, dtype=torch.float64)[None, :] + 0.5) * (bin_size / grid)).clamp(min=0)
        low = v.long()
        edge = low >= size - 1
        low = torch.where(edge, size - 1, low)
        high = torch.where(edge, size - 1, low + 1)
        return low, high, v - low

    for r in range(n_rois):
        b = int(boxes[r, 0])
        sw, sh = float(boxes[r, 1]) * scale - off, float(boxes[r, 2]) * scale - off
        rw, rh = float(boxes[r, 3]) * scale - off - sw, float(boxes[r, 4]) * scale - off - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / pooled_h, rw / pooled_w
        gh = ratio if ratio > 0 else math.ceil(bh)
        gw = ratio if ratio > 0 else math.ceil(bw)
        count = max(gh * gw, 1)
        gh, gw = max(0, min(gh, height)), max(0, min(gw, width))
        if gh == 0 or gw == 0:
            continue
        yl, yh, ly = corners(sh, bh, gh, pooled_h, height)     # [pooled_h, gh]
        xl, xh, lx = corners(sw, bw, gw, pooled_w, width)      # [pooled_w, gw]
        img = x[b].double()

        def at(rows, cols):
            return img[:, rows[:, :, None, None], cols[None, None, :, :]]   # [C, ph, iy, pw, ix]

        wy, wx = ly[:, :, None, None], lx[None, None, :, :]
        val = ((1 - wy) * (1 - wx) * at(yl, xl) + (1 - wy) * wx * at(yl, xh)
               + wy * (1 - wx) * at(yh, xl) + wy * wx * at(yh, xh))
        out[r] = val.sum(dim=(2, 4)) / count
    return out


def _probe_boxes(gen, n: int, batch: int, height: int, width: int, scale: float):
    """Legal boxes (integer batch index, inside the map after scaling), and one corner box."""
    import torch

    mx, my = (width - 1) / scale, (height - 1) / scale
    x0 = torch.rand(n, generator=gen, dtype=torch.float64) * 0.6 * mx
    y0 = torch.rand(n, generator=gen, dtype=torch.float64) * 0.6 * my
    x1 = torch.minimum(x0 + (0.05 + 0.6 * torch.rand(n, generator=gen, dtype=torch.float64)) * mx,
                       torch.full((n,), mx, dtype=torch.float64))
    y1 = torch.minimum(y0 + (0.05 + 0.6 * torch.rand(n, generator=gen, dtype=torch.float64)) * my,
                       torch.full((n,), my, dtype=torch.float64))
    b = torch.randint(0, batch, (n,), generator=gen).double()
    boxes = torch.stack([b, x0, y0, x1, y1], dim=1)
    boxes[-1, 1:] = torch.tensor([mx * 0.8, my * 0.7, mx, my], dtype=torch.float64)   # the last row / column
    return boxes


def _confirmed(task, roles: tuple, attrs: dict) -> str | None:
    """None when the golden computes `reference` on the probes with these attrs, else what differs."""
    import torch

    from copilot.lowering.capture import call_golden

    scale_a, ratio_a, aligned_a = roles
    gen = torch.Generator().manual_seed(29)
    for shape in _PROBE_SHAPES:
        x = torch.rand(shape, generator=gen, dtype=torch.float64) * 4 - 2
        boxes = _probe_boxes(gen, 4, shape[0], shape[2], shape[3], float(attrs[scale_a]))
        try:
            with torch.no_grad():
                out = call_golden(task, [x, boxes], dict(attrs))
        except Exception as exc:
            return f"the golden refuses a probe ({type(exc).__name__})"
        if isinstance(out, (list, tuple)):
            out = out[0] if len(out) == 1 else None
        if not isinstance(out, torch.Tensor) or out.dim() != 4 or tuple(out.shape[:2]) != (4, shape[1]):
            return "the output is not [rois, C, pooled_h, pooled_w]"
        ref = reference(x, boxes, out.shape[2], out.shape[3], float(attrs[scale_a]), int(attrs[ratio_a]),
                        bool(attrs[aligned_a]))
        if not torch.allclose(out.double(), ref, rtol=1e-5, atol=1e-5):
            return (f"the golden's values differ from bilinear ROI align on a probe (max "
                    f"{float((out.double() - ref).abs().max()):.3g}, attrs {attrs})")
    return None


def _roles(task):
    """(scale, sampling ratio, aligned) attr names: a float, an int that is not a pooled size, a bool;
    names saying what they hold win when there are several."""
    def pick(kind: str, word: str, exclude=()):
        cands = [a.name for a in task.attrs if a.type == kind and a.name not in exclude]
        named = [n for n in cands if word in n.lower()]
        return (named or cands or [None])[0]

    pooled = [a.name for a in task.attrs if a.type == "int" and ("out" in a.name.lower() or "pool" in a.name.lower())]
    return pick("float", "scale"), pick("int", "sampl", pooled), pick("bool", "align")


def plan_roi_align(task):
    """A RoiAlignPlan, None if the golden is no ROI align, Unsupported for an ROI align not served."""
    cases = task.cases
    if len(task.inputs) != 2 or len(task.outputs) != 1 or not cases:
        return None
    if any(s is None for s in cases[0].shapes) or len(cases[0].shapes[0]) != 4 or \
            len(cases[0].shapes[1]) != 2 or cases[0].shapes[1][1] not in (4, 5):
        return None
    try:
        if not _gathers_x_by_boxes(task, cases[0]):
            return None
    except Unsupported:
        return None
    if cases[0].shapes[1][1] != 5:
        raise Unsupported(f"{task.name}: boxes of {cases[0].shapes[1][1]} columns (rows (batch, x0, y0, x1, y1) "
                          "are served)")
    roles = _roles(task)
    if None in roles:
        raise Unsupported(f"{task.name}: an ROI align without a float scale, an int sampling ratio and a bool "
                          "aligned attr")
    defaults = {a.name: a.default for a in task.attrs}
    combos = []
    for c in cases:
        attrs = {**defaults, **{k: v for k, v in c.attrs.items() if v is not None}}
        key = tuple(sorted(attrs.items()))
        if key not in [k for k, _ in combos]:
            combos.append((key, attrs))
    scale_a, ratio_a, aligned_a = roles
    first = combos[0][1]
    ratio = int(first[ratio_a])
    # the attrs drive what they name: moved values agree with the reference too
    moved = [{**first, ratio_a: ratio + 1 if ratio > 0 else 2}, {**first, aligned_a: not bool(first[aligned_a])},
             {**first, scale_a: float(first[scale_a]) * 0.75}]
    for attrs in [a for _, a in combos] + moved:
        why = _confirmed(task, roles, attrs)
        if why:
            raise Unsupported(f"{task.name}: {why}")
    # the per-ROI grid (sampling ratio <= 0), served when the golden computes it
    adaptive = any(int(a[ratio_a]) <= 0 for _, a in combos) or _confirmed(task, roles, {**first, ratio_a: 0}) is None
    plan = RoiAlignPlan(task, 0, 1, scale_a, ratio_a, aligned_a, adaptive)
    for c in cases:
        if len(c.shapes[0]) != 4 or len(c.shapes[1]) != 2 or c.shapes[1][1] != 5:
            plan.unserved[c.id] = "x must be [B, C, H, W] and boxes [rois, 5]"
        elif c.dtypes[0] not in ("float16", "float32") or c.dtypes[1] != c.dtypes[0]:
            plan.unserved[c.id] = f"dtypes {c.dtypes} (fp16 or fp32, boxes as x)"
    grid = "<= 0: ceil(roi / pooled) per ROI" if adaptive else "> 0 only: the golden has no per-ROI grid"
    plan.notes.append(f"ROI align of {task.inputs[0].name} by {task.inputs[1].name} rows (batch, x0, y0, x1, y1); "
                      f"scale `{scale_a}`, sampling ratio `{ratio_a}` ({grid}), `{aligned_a}`; pooled size from "
                      "y's shape")
    return plan


def render(plan: RoiAlignPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [i.name for i in t.inputs] + [o.name for o in t.outputs]
    attr_names = [a.name for a in t.attrs]
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD)
    subs = {"@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
            "@XT@": _macro_of(t.inputs[plan.x].name), "@X_ID@": _ident(t.inputs[plan.x].name),
            "@B_ID@": _ident(t.inputs[plan.boxes].name), "@Y_ID@": _ident(t.outputs[0].name),
            "@ARGS@": ", ".join(f"GM_ADDR {_ident(n)}" for n in names),
            "@DTYPE_BYTES@": _dtype_bytes_fn(), "@SYNC@": SYNC_PIPES,
            "@RESERVE@": str(int(knobs["ub_reserve_bytes"])),
            "@SCALE@": str(attr_names.index(plan.scale_attr)), "@SCALE_NAME@": plan.scale_attr,
            "@RATIO@": str(attr_names.index(plan.ratio_attr)), "@RATIO_NAME@": plan.ratio_attr,
            "@ALIGNED@": str(attr_names.index(plan.aligned_attr)), "@ALIGNED_NAME@": plan.aligned_attr,
            "@RATIO_RANGE@": "*ratio > 4096" if plan.adaptive else "*ratio <= 0 || *ratio > 4096"}
    for k, v in subs.items():
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// ROI align: y[r, c, ph, pw] = mean over the bin's gh x gw samples of x[b(r), c] bilinear at
//   y = startH + ph * binH + (iy + 0.5) * (binH / gh), x = startW + pw * binW + (ix + 0.5) * (binW / gw),
// box (b, x0, y0, x1, y1) scaled by `@SCALE_NAME@` (- 0.5 when `@ALIGNED_NAME@`, else at least 1 x 1);
// gh = gw = `@RATIO_NAME@` when > 0, else ceil(roi / pooled) per ROI. Samples below 0 move to 0, past the
// last row / column take it for both corners.
// Phase 1: x -> a channel-last fp32 copy [B, H*W, cPitch] in the workspace (tiles transposed by Gather).
// Phase 2 (after SyncAll): a unit is (ROI, channel block, group of bin rows); per sample row the pixel
// runs of its two feature rows come in by DMA, channels contiguous, and each sample's 4 corner vectors
// are blended in the golden's order ((w1 v1 + w2 v2) + w3 v3) + w4 v4 into its bin's fp32 sum.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t GAP_PIXELS = 2;      // a run bridges at most this many unused pixels between samples

struct @T@ {
    uint32_t batch, channels, height, width;   // x [B, C, H, W]
    uint32_t rois, pooledH, pooledW;            // boxes [rois, 5], y [rois, C, pooledH, pooledW]
    float spatialScale;
    int32_t samplingRatio;
    uint32_t aligned;
    uint32_t cPitch;                            // channels per pixel in the copy (C rounded up to 8)
    uint32_t tChannels, tPixels;                // phase 1 tile: channels x pixels
    uint32_t tChannelBlocks, tPixelBlocks;
    uint32_t cBlock, cBlocks;                   // phase 2: channels per unit
    uint32_t binRows, rowGroups;                // phase 2: bin rows per unit
    uint32_t binPitch;                          // UB pitch of a channel's bins in the output tile
                                                // (pooledH * pooledW: every bin, y rows contiguous)
    uint32_t runPixels;                         // pixels per row run in UB
    uint64_t tUnits, units;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

// One sample's two corners along an axis of `size`, as the golden clamps them.
struct Corners {
    int32_t low, high;
    float l;                                    // weight of `high`; `low` takes 1 - l
};

__aicore__ inline Corners Clamp(float v, int32_t size)
{
    v = v < 0.0f ? 0.0f : v;
    Corners c;
    c.low = static_cast<int32_t>(v);
    if (c.low >= size - 1) {
        c.low = size - 1;
        c.high = size - 1;
    } else {
        c.high = c.low + 1;
    }
    c.l = v - static_cast<float>(c.low);
    return c;
}

__aicore__ inline int32_t Ceil(float v)
{
    int32_t i = static_cast<int32_t>(v);
    return static_cast<float>(i) < v ? i + 1 : i;
}

template <typename T>
class @K@ {
    static constexpr bool WIDE = !std::is_same<T, float>::value;   // fp16: the copy and the sums are fp32

public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR boxAddr, GM_ADDR yAddr, GM_ADDR workspace, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(xAddr));
        boxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(boxAddr));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(yAddr));
        xtGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)));
    }

    __aicore__ inline void Process()
    {
        Transpose();
        PipeBarrier<PIPE_ALL>();                // this core's copy is in GM before the barrier
        SyncAll();
        pipe_.Reset();
        Pool();
    }

private:
    __aicore__ inline void Range(uint64_t units, uint64_t& first, uint64_t& count)
    {
        const uint64_t idx = static_cast<uint64_t>(GetBlockIdx()), cores = static_cast<uint64_t>(GetBlockNum());
        const uint64_t base = units / cores, extra = units % cores;
        count = base + (idx < extra ? 1 : 0);
        first = idx * base + (idx < extra ? idx : extra);
    }

    // ---- phase 1: x [B, C, H*W] -> xt [B, H*W, cPitch] in fp32 ----
    __aicore__ inline void Transpose()
    {
        const uint32_t tc = td_.tChannels, tp = td_.tPixels;
        pipe_.InitBuffer(tileInQue_, 1, tc * tp * sizeof(T));
        pipe_.InitBuffer(tileOutQue_, 1, tc * tp * sizeof(float));
        if constexpr (WIDE) {
            pipe_.InitBuffer(tileWideBuf_, tc * tp * sizeof(T));
        }
        pipe_.InitBuffer(tileTableBuf_, 8 * tc * sizeof(uint32_t));
        // pixel p < 8, channel c of a group of 8 pixels: byte offset of in[c, p] (the group adds 8 p)
        LocalTensor<int32_t> table = tileTableBuf_.Get<int32_t>();
        const int32_t es = static_cast<int32_t>(sizeof(T));
        CreateVecIndex(table, static_cast<int32_t>(0), tc);
        Muls(table, table, static_cast<int32_t>(tp) * es, static_cast<int32_t>(tc));
        for (uint32_t p = 1; p < 8; ++p) {
            Adds(table[p * tc], table, static_cast<int32_t>(p) * es, static_cast<int32_t>(tc));
        }
        const LocalTensor<uint32_t> offsets = table.ReinterpretCast<uint32_t>();
        const uint64_t hw = static_cast<uint64_t>(td_.height) * td_.width;
        uint64_t first = 0, count = 0;
        Range(td_.tUnits, first, count);
        for (uint64_t u = first; u < first + count; ++u) {
            const uint64_t perImage = static_cast<uint64_t>(td_.tChannelBlocks) * td_.tPixelBlocks;
            const uint64_t b = u / perImage;
            const uint32_t c0 = static_cast<uint32_t>(u % perImage / td_.tPixelBlocks) * tc;
            const uint64_t p0 = u % td_.tPixelBlocks * tp;
            const uint32_t ct = td_.channels - c0 < tc ? td_.channels - c0 : tc;    // channels of x
            const uint32_t cw = td_.cPitch - c0 < tc ? td_.cPitch - c0 : tc;        // channels written
            const uint32_t pt = static_cast<uint32_t>(hw - p0 < tp ? hw - p0 : tp);
            LocalTensor<T> in = tileInQue_.AllocTensor<T>();
            const uint32_t rowBytes = pt * static_cast<uint32_t>(sizeof(T));
            DataCopyExtParams load(static_cast<uint16_t>(ct), rowBytes, static_cast<uint32_t>((hw - pt) * sizeof(T)),
                                   (tp * static_cast<uint32_t>(sizeof(T)) - (rowBytes + 31) / 32 * 32) / 32, 0);
            DataCopyPad(in, xGm_[(b * td_.channels + c0) * hw + p0], load, DataCopyPadExtParams<T>(false, 0, 0, 0));
            tileInQue_.EnQue(in);
            in = tileInQue_.DeQue<T>();
            if (ct < cw) {
                Duplicate(in[ct * tp], static_cast<T>(0.0f), static_cast<int32_t>((cw - ct) * tp));   // pad channels
            }
            LocalTensor<float> out = tileOutQue_.AllocTensor<float>();
            const uint32_t groups = (pt + 7) / 8;
            if constexpr (WIDE) {
                LocalTensor<T> wide = tileWideBuf_.Get<T>();
                for (uint32_t g = 0; g < groups; ++g) {
                    Gather(wide[g * 8 * tc], in, offsets, g * 8 * static_cast<uint32_t>(sizeof(T)), 8 * tc);
                }
                Cast(out, wide, RoundMode::CAST_NONE, static_cast<int32_t>(groups * 8 * tc));   // exact
            } else {
                for (uint32_t g = 0; g < groups; ++g) {
                    Gather(out[g * 8 * tc], in, offsets, g * 8 * static_cast<uint32_t>(sizeof(T)), 8 * tc);
                }
            }
            tileInQue_.FreeTensor(in);
            tileOutQue_.EnQue(out);
            out = tileOutQue_.DeQue<float>();
            DataCopyExtParams store(static_cast<uint16_t>(pt), cw * 4, (tc - cw) * 4 / 32, (td_.cPitch - cw) * 4, 0);
            DataCopyPad(xtGm_[(b * hw + p0) * td_.cPitch + c0], out, store);
            tileOutQue_.FreeTensor(out);
        }
    }

    // ---- phase 2: the bins of each unit from the channel-last copy ----
    __aicore__ inline void Pool()
    {
        const uint32_t cb = td_.cBlock;
        const uint32_t pitch = td_.binPitch;
        pipe_.InitBuffer(accBuf_, pitch * cb * sizeof(float));     // bins, and the pitch's padding
        if constexpr (WIDE) {
            pipe_.InitBuffer(tileBuf_, cb * pitch * sizeof(float));
        }
        pipe_.InitBuffer(runQue_, 2, 2 * td_.runPixels * cb * sizeof(float));
        pipe_.InitBuffer(valBuf_, cb * sizeof(float));
        pipe_.InitBuffer(countBuf_, cb * sizeof(float));
        pipe_.InitBuffer(outQue_, 1, cb * pitch * sizeof(T));
        pipe_.InitBuffer(binTableBuf_, 8 * pitch * sizeof(uint32_t));
        pipe_.InitBuffer(tableWorkBuf_, 8 * pitch * sizeof(float));
        pipe_.InitBuffer(boxRawBuf_, 32);
        pipe_.InitBuffer(boxBuf_, 32);
        // entry e = cl * pitch + j (channel cl < 8 of a group, bin j): byte offset of acc[j, cl],
        // i.e. 4 (e cb - floor(e / pitch) (pitch cb - 1)); the channel group adds 8 channels
        LocalTensor<int32_t> table = binTableBuf_.Get<int32_t>();
        LocalTensor<float> e = tableWorkBuf_.Get<float>();
        LocalTensor<int32_t> q = tableWorkBuf_.Get<int32_t>();
        const int32_t n = static_cast<int32_t>(8 * pitch);
        CreateVecIndex(e, 0.0f, 8 * pitch);
        Adds(e, e, 0.5f, n);
        Muls(e, e, 1.0f / static_cast<float>(pitch), n);
        Cast(q, e, RoundMode::CAST_FLOOR, n);                                // cl, exact below 2^22
        Muls(q, q, -static_cast<int32_t>(4 * (pitch * cb - 1)), n);
        CreateVecIndex(table, static_cast<int32_t>(0), 8 * pitch);
        Muls(table, table, static_cast<int32_t>(4 * cb), n);
        Add(table, table, q, n);
        uint64_t first = 0, count = 0;
        Range(td_.units, first, count);
        uint64_t roi = ~static_cast<uint64_t>(0);
        for (uint64_t u = first; u < first + count; ++u) {
            const uint64_t perRoi = static_cast<uint64_t>(td_.cBlocks) * td_.rowGroups;
            if (u / perRoi != roi) {
                roi = u / perRoi;
                SetUpRoi(roi);
            }
            const uint32_t c0 = static_cast<uint32_t>(u % perRoi / td_.rowGroups) * cb;
            const uint32_t ph0 = static_cast<uint32_t>(u % td_.rowGroups) * td_.binRows;
            const uint32_t rows = td_.pooledH - ph0 < td_.binRows ? td_.pooledH - ph0 : td_.binRows;
            PoolUnit(c0, ph0, rows);
            CopyOut(roi, c0, ph0, rows);
        }
    }

    // The ROI's box on the scalar unit, in fp32 as the golden computes it.
    __aicore__ inline void SetUpRoi(uint64_t r)
    {
        LocalTensor<T> raw = boxRawBuf_.Get<T>();
        LocalTensor<float> box = boxBuf_.Get<float>();
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(raw, boxGm_[r * 5], DataCopyExtParams(1, 5 * sizeof(T), 0, 0, 0),
                    DataCopyPadExtParams<T>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        if constexpr (WIDE) {
            Cast(box, raw, RoundMode::CAST_NONE, 8);
        } else {
            Adds(box, raw, 0.0f, 8);
        }
        SyncPipes<HardEvent::V_S>();
        int32_t b = static_cast<int32_t>(box.GetValue(0));          // truncated, kept inside the batch
        b = b < 0 ? 0 : (b >= static_cast<int32_t>(td_.batch) ? static_cast<int32_t>(td_.batch) - 1 : b);
        image_ = static_cast<uint64_t>(b);
        const float offset = td_.aligned ? 0.5f : 0.0f;
        startW_ = box.GetValue(1) * td_.spatialScale - offset;
        startH_ = box.GetValue(2) * td_.spatialScale - offset;
        float roiW = (box.GetValue(3) * td_.spatialScale - offset) - startW_;
        float roiH = (box.GetValue(4) * td_.spatialScale - offset) - startH_;
        if (!td_.aligned) {
            roiW = roiW < 1.0f ? 1.0f : roiW;
            roiH = roiH < 1.0f ? 1.0f : roiH;
        }
        binW_ = roiW / static_cast<float>(td_.pooledW);
        binH_ = roiH / static_cast<float>(td_.pooledH);
        const float gh = td_.samplingRatio > 0 ? static_cast<float>(td_.samplingRatio) : static_cast<float>(Ceil(binH_));
        const float gw = td_.samplingRatio > 0 ? static_cast<float>(td_.samplingRatio) : static_cast<float>(Ceil(binW_));
        stepH_ = binH_ / gh;
        stepW_ = binW_ / gw;
        const float count = gh * gw > 1.0f ? gh * gw : 1.0f;
        // samples per bin: the grid, none when it is empty, at most one per row / column of the map
        gridH_ = gh < 0.0f ? 0 : static_cast<int32_t>(gh);
        gridW_ = gw < 0.0f ? 0 : static_cast<int32_t>(gw);
        gridH_ = gridH_ > static_cast<int32_t>(td_.height) ? static_cast<int32_t>(td_.height) : gridH_;
        gridW_ = gridW_ > static_cast<int32_t>(td_.width) ? static_cast<int32_t>(td_.width) : gridW_;
        count_ = count;
        const uint32_t whole = static_cast<uint32_t>(count);
        countPow2_ = static_cast<float>(whole) == count && (whole & (whole - 1)) == 0;
        if (!countPow2_) {
            Duplicate(countBuf_.Get<float>(), count, static_cast<int32_t>(td_.cBlock));
        }
    }

    // Sample column k = pw * gridW + ix of the ROI.
    __aicore__ inline Corners Column(uint32_t k)
    {
        const uint32_t pw = k / static_cast<uint32_t>(gridW_), ix = k % static_cast<uint32_t>(gridW_);
        const float x = startW_ + static_cast<float>(pw) * binW_ + (static_cast<float>(ix) + 0.5f) * stepW_;
        return Clamp(x, static_cast<int32_t>(td_.width));
    }

    // Pixels [x0, x0 + n) of feature row `row`, channels c0.. of the block, into dst.
    __aicore__ inline void LoadRun(const LocalTensor<float>& dst, int32_t row, int32_t x0, uint32_t n, uint32_t c0)
    {
        const uint32_t cb = td_.cBlock;
        const uint64_t at = ((image_ * td_.height + static_cast<uint64_t>(row)) * td_.width + static_cast<uint64_t>(x0)) *
                            td_.cPitch + c0;
        if (cb == td_.cPitch) {              // the whole pixels: one contiguous run
            DataCopyPad(dst, xtGm_[at], DataCopyExtParams(1, n * cb * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
        } else {
            DataCopyPad(dst, xtGm_[at], DataCopyExtParams(static_cast<uint16_t>(n), cb * 4, (td_.cPitch - cb) * 4, 0, 0),
                        DataCopyPadExtParams<float>(false, 0, 0, 0));
        }
    }

    __aicore__ inline void PoolUnit(uint32_t c0, uint32_t ph0, uint32_t rows)
    {
        const uint32_t cb = td_.cBlock;
        const int32_t len = static_cast<int32_t>(cb);
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> val = valBuf_.Get<float>();
        if (gridH_ == 0 || gridW_ == 0) {
            Duplicate(acc, 0.0f, static_cast<int32_t>(rows * td_.pooledW * cb));     // no samples: 0 / count
        }
        const uint32_t columns = td_.pooledW * static_cast<uint32_t>(gridW_);
        for (uint32_t ph = ph0; ph < ph0 + rows; ++ph) {
            for (int32_t iy = 0; iy < gridH_; ++iy) {
                const float y = startH_ + static_cast<float>(ph) * binH_ + (static_cast<float>(iy) + 0.5f) * stepH_;
                const Corners cy = Clamp(y, static_cast<int32_t>(td_.height));
                const float hy = 1.0f - cy.l;
                // runs of neighbouring sample columns: one DMA per feature row per run
                for (uint32_t k = 0; k < columns;) {
                    const Corners start = Column(k);
                    int32_t last = start.high;
                    uint32_t end = k + 1;
                    for (; end < columns; ++end) {
                        const Corners next = Column(end);
                        if (next.high - start.low + 1 > static_cast<int32_t>(td_.runPixels) ||
                            next.low > last + static_cast<int32_t>(GAP_PIXELS)) {
                            break;
                        }
                        last = next.high > last ? next.high : last;
                    }
                    const uint32_t n = static_cast<uint32_t>(last - start.low + 1);
                    LocalTensor<float> run = runQue_.AllocTensor<float>();
                    const uint32_t highAt = cy.high == cy.low ? 0 : td_.runPixels * cb;   // bottom row: twice
                    LoadRun(run, cy.low, start.low, n, c0);
                    if (highAt != 0) {
                        LoadRun(run[highAt], cy.high, start.low, n, c0);
                    }
                    runQue_.EnQue(run);
                    run = runQue_.DeQue<float>();
                    for (uint32_t s = k; s < end; ++s) {
                        const Corners cx = Column(s);
                        const float hx = 1.0f - cx.l;
                        const uint32_t lowAt = static_cast<uint32_t>(cx.low - start.low) * cb;
                        const uint32_t highCol = static_cast<uint32_t>(cx.high - start.low) * cb;
                        LocalTensor<float> bin = acc[((ph - ph0) * td_.pooledW + s / static_cast<uint32_t>(gridW_)) * cb];
                        // the bin's first sample starts its sum, the others are added in (iy, ix) order
                        const bool first = iy == 0 && s % static_cast<uint32_t>(gridW_) == 0;
                        const LocalTensor<float>& sample = first ? bin : val;
                        Muls(sample, run[lowAt], hy * hx, len);
                        Axpy(sample, run[highCol], hy * cx.l, len);
                        Axpy(sample, run[highAt + lowAt], cy.l * hx, len);
                        Axpy(sample, run[highAt + highCol], cy.l * cx.l, len);
                        if (!first) {
                            Add(bin, bin, val, len);
                        }
                    }
                    runQue_.FreeTensor(run);
                    k = end;
                }
            }
        }
        if (countPow2_) {                     // 1 / count is exact: one multiply over the block
            Muls(acc, acc, 1.0f / count_, static_cast<int32_t>(rows * td_.pooledW * cb));
            return;
        }
        LocalTensor<float> count = countBuf_.Get<float>();
        for (uint32_t j = 0; j < rows * td_.pooledW; ++j) {
            Div(acc[j * cb], acc[j * cb], count, len);
        }
    }

    // acc [bins, cBlock] -> y[roi, c0.., ph0.., :] as channel rows (transposed by Gather); when the
    // unit holds every bin (pitch = bins) its channels are one contiguous block of y.
    __aicore__ inline void CopyOut(uint64_t roi, uint32_t c0, uint32_t ph0, uint32_t rows)
    {
        const uint32_t cb = td_.cBlock, pitch = td_.binPitch;
        LocalTensor<float> acc = accBuf_.Get<float>();
        const LocalTensor<uint32_t> table = binTableBuf_.Get<uint32_t>();
        LocalTensor<T> out = outQue_.AllocTensor<T>();
        if constexpr (WIDE) {
            LocalTensor<float> tile = tileBuf_.Get<float>();
            for (uint32_t c = 0; c < cb; c += 8) {
                Gather(tile[c * pitch], acc, table, c * 4, 8 * pitch);
            }
            Cast(out, tile, RoundMode::CAST_RINT, static_cast<int32_t>(cb * pitch));
        } else {
            for (uint32_t c = 0; c < cb; c += 8) {
                Gather(out[c * pitch], acc, table, c * 4, 8 * pitch);
            }
        }
        outQue_.EnQue(out);
        out = outQue_.DeQue<T>();
        const uint32_t cOut = td_.channels - c0 < cb ? td_.channels - c0 : cb;
        const uint32_t bins = rows * td_.pooledW;
        const uint64_t planeBins = static_cast<uint64_t>(td_.pooledH) * td_.pooledW;
        const uint64_t at = (roi * td_.channels + c0) * planeBins + static_cast<uint64_t>(ph0) * td_.pooledW;
        if (td_.binRows == td_.pooledH) {
            DataCopyPad(yGm_[at], out, DataCopyExtParams(1, cOut * pitch * static_cast<uint32_t>(sizeof(T)), 0, 0, 0));
        } else {
            const uint32_t rowBytes = bins * static_cast<uint32_t>(sizeof(T));
            DataCopyExtParams store(static_cast<uint16_t>(cOut), rowBytes,
                                    (pitch * static_cast<uint32_t>(sizeof(T)) - (rowBytes + 31) / 32 * 32) / 32,
                                    static_cast<uint32_t>((planeBins - bins) * sizeof(T)), 0);
            DataCopyPad(yGm_[at], out, store);
        }
        outQue_.FreeTensor(out);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 1> tileInQue_;
    TQue<QuePosition::VECOUT, 1> tileOutQue_;
    TBuf<QuePosition::VECCALC> tileWideBuf_;
    TBuf<QuePosition::VECCALC> tileTableBuf_;
    TQue<QuePosition::VECIN, 2> runQue_;
    TQue<QuePosition::VECOUT, 1> outQue_;
    TBuf<QuePosition::VECCALC> accBuf_;
    TBuf<QuePosition::VECCALC> tileBuf_;
    TBuf<QuePosition::VECCALC> tableWorkBuf_;
    TBuf<QuePosition::VECCALC> valBuf_;
    TBuf<QuePosition::VECCALC> countBuf_;
    TBuf<QuePosition::VECCALC> binTableBuf_;
    TBuf<QuePosition::VECCALC> boxRawBuf_;
    TBuf<QuePosition::VECCALC> boxBuf_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> boxGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<float> xtGm_;
    @T@ td_;
    uint64_t image_ = 0;
    float startW_ = 0.0f, startH_ = 0.0f, binW_ = 0.0f, binH_ = 0.0f, stepW_ = 0.0f, stepH_ = 0.0f;
    int32_t gridH_ = 0, gridW_ = 0;
    float count_ = 1.0f;                        // samples a bin's sum is divided by
    bool countPow2_ = true;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(tilingData, tiling);
    @K@<@XT@> op;
    op.Init(@X_ID@, @B_ID@, @Y_ID@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& bs = context->GetInputShape(1)->GetStorageShape();
    const gert::Shape& ys = context->GetOutputShape(0)->GetStorageShape();
    if (xs.GetDimNum() != 4 || bs.GetDimNum() != 2 || bs.GetDim(1) != 5 || ys.GetDimNum() != 4 ||
        ys.GetDim(0) != bs.GetDim(0) || ys.GetDim(1) != xs.GetDim(1)) {
        return ge::GRAPH_FAILED;   // x [B, C, H, W], boxes [rois, 5], y [rois, C, pooledH, pooledW]
    }
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    if ((dt != ge::DT_FLOAT16 && dt != ge::DT_FLOAT) || context->GetInputDesc(1)->GetDataType() != dt) {
        return ge::GRAPH_FAILED;   // fp16 or fp32, boxes in x's dtype
    }
    for (size_t a = 0; a < 4; ++a) {
        if (xs.GetDim(a) <= 0 || ys.GetDim(a) <= 0 || xs.GetDim(a) > 32767 || ys.GetDim(a) > 65535) {
            return ge::GRAPH_FAILED;   // empty or oversized axes
        }
    }
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    const float* scale = attrs->GetAttrPointer<float>(@SCALE@);            // `@SCALE_NAME@`
    const int64_t* ratio = attrs->GetAttrPointer<int64_t>(@RATIO@);        // `@RATIO_NAME@`
    const bool* aligned = attrs->GetAttrPointer<bool>(@ALIGNED@);          // `@ALIGNED_NAME@`
    if (scale == nullptr || ratio == nullptr || aligned == nullptr || @RATIO_RANGE@) {
        return ge::GRAPH_FAILED;   // the sampling ratios served
    }
    td->batch = static_cast<uint32_t>(xs.GetDim(0));
    td->channels = static_cast<uint32_t>(xs.GetDim(1));
    td->height = static_cast<uint32_t>(xs.GetDim(2));
    td->width = static_cast<uint32_t>(xs.GetDim(3));
    td->rois = static_cast<uint32_t>(ys.GetDim(0));
    td->pooledH = static_cast<uint32_t>(ys.GetDim(2));
    td->pooledW = static_cast<uint32_t>(ys.GetDim(3));
    td->spatialScale = *scale;
    td->samplingRatio = static_cast<int32_t>(*ratio);
    td->aligned = *aligned ? 1 : 0;
    td->cPitch = (td->channels + 7) / 8 * 8;

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t es = DtypeBytes(dt);
    const uint64_t room = ubSize - @RESERVE@;
    // phase 1: 128 channels x 128 pixels (512-byte copy rows out; in, fp16 also a gathered half copy)
    td->tChannels = td->cPitch < 128 ? td->cPitch : 128;
    const uint64_t hw = static_cast<uint64_t>(td->height) * td->width;
    td->tPixels = static_cast<uint32_t>(hw < 128 ? (hw + 15) / 16 * 16 : 128);
    td->tChannelBlocks = (td->cPitch + td->tChannels - 1) / td->tChannels;
    td->tPixelBlocks = static_cast<uint32_t>((hw + td->tPixels - 1) / td->tPixels);
    td->tUnits = static_cast<uint64_t>(td->batch) * td->tChannelBlocks * td->tPixelBlocks;
    // phase 2: the widest channel block (up to 1024: each vector instruction's issue cost is paid per
    // block) whose bin rows' fp32 sums fit 32 KB and that leaves UB for runs of 8 pixels
    constexpr uint64_t ACC_BYTES = 32 * 1024;
    const uint64_t wantPixels = td->width + 1 < 8 ? td->width + 1 : 8;
    for (uint32_t cBlocks = (td->cPitch + 1023) / 1024; cBlocks <= td->cPitch / 8; ++cBlocks) {
        const uint32_t cb = ((td->cPitch + cBlocks - 1) / cBlocks + 7) / 8 * 8;
        if (4ULL * td->pooledW * cb > ACC_BYTES) {
            continue;
        }
        // bin rows per unit: at most what the sums fit; fewer when that balances the cores (a core's
        // time grows with its units' bins) by more than the extra writes cost: a unit of every bin
        // writes its channels of y as one block
        const uint32_t fitRows = static_cast<uint32_t>(ACC_BYTES / (4ULL * td->pooledW * cb));
        const uint64_t perRoi = (td->cPitch + cb - 1) / cb * static_cast<uint64_t>(td->rois);
        uint32_t rows = 0;
        uint64_t best = 0;
        for (uint32_t g = 1; g <= td->pooledH; ++g) {
            const uint32_t r = (td->pooledH + g - 1) / g;
            const uint32_t groups = (td->pooledH + r - 1) / r;
            if (r > fitRows || r == rows) {
                continue;
            }
            // each further group writes its channel rows again (short rows cost a 512-byte burst)
            const uint64_t cost = (perRoi * groups + coreNum - 1) / coreNum * r * (100 + 15 * (groups - 1));
            if (rows == 0 || cost < best) {
                rows = r;
                best = cost;
            }
        }
        const uint64_t bins = static_cast<uint64_t>(rows) * td->pooledW;
        const uint32_t binPitch = rows == td->pooledH ? static_cast<uint32_t>(bins) : static_cast<uint32_t>((bins + 15) / 16 * 16);
        const uint64_t fixed = static_cast<uint64_t>(binPitch) * cb * (4 + es + (es == 4 ? 0 : 4)) +
                               2ULL * cb * 4 + 16ULL * binPitch * 4 + 64;
        // row runs: two slots of (low row, high row) x runPixels x cBlock floats, with the rest of UB
        uint64_t runPixels = room > fixed ? (room - fixed) / (2ULL * 2 * cb * 4) : 0;
        runPixels = runPixels > td->width + 1ULL ? td->width + 1ULL : runPixels;
        runPixels = runPixels > 4095 ? 4095 : runPixels;
        if (runPixels < wantPixels && cb > 8) {
            continue;
        }
        if (runPixels < 2) {
            return ge::GRAPH_FAILED;   // a sample's two columns must fit one run
        }
        td->cBlock = cb;
        td->cBlocks = (td->cPitch + cb - 1) / cb;
        td->binRows = rows;
        td->rowGroups = (td->pooledH + rows - 1) / rows;
        td->binPitch = binPitch;
        td->runPixels = static_cast<uint32_t>(runPixels);
        break;
    }
    if (td->cBlock == 0) {
        return ge::GRAPH_FAILED;
    }
    td->units = static_cast<uint64_t>(td->rois) * td->cBlocks * td->rowGroups;
    // every core takes part in both phases (SyncAll between them)
    uint64_t blockDim = td->tUnits > td->units ? td->tUnits : td->units;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    blockDim = blockDim == 0 ? 1 : blockDim;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = platform.GetLibApiWorkSpaceSize() + static_cast<size_t>(td->batch) * hw * td->cPitch * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
