"""Bilinear resize of 4-D input (`aten.upsample_bilinear2d`, torch's `interpolate(mode='bilinear')`)
lowers to a vector kernel of its own (docs/lowering.md "Bilinear resize"):

    y[p, i, j] = lh0(i) (lw0(j) x[p, h0(i), w0(j)] + lw1(j) x[p, h0(i), w1(j)])
               + lh1(i) (lw0(j) x[p, h1(i), w0(j)] + lw1(j) x[p, h1(i), w1(j)])

per axis (torch's source index): src(i) = scale * (i + half) - half, clamped below at 0; the first
tap a0 = min(floor(src), In - 1), the second a0 + 1 (a0 at the last row / column), l1 = src - a0
clamped to [0, 1], l0 = 1 - l1. align_corners: scale (In - 1) / (Out - 1), half 0; otherwise
1 / scale_factor when the golden passes one, else In / Out, half 0.5; In == Out is the identity.

The golden's traced graph is one `upsample_bilinear2d` of its only input; align_corners is tied to
the bool attr that moves it when the golden is traced again, the scales to the float list attr the
traced op carries (output sizes come from y's shape), and small fp64 probes confirm the formula for
every align_corners value and both the size and the scale form the cases use.

The kernel: a unit is (plane n * C + c, block of output rows). The source rows the block needs are
brought to UB (one DMA of the row range when the rows are dense, scale_h <= 2; else one DMA of the
two rows per output row), widened to fp32; every output element's four taps are then one Gather
each over the whole block, by byte offsets = row part (per output row) + column part (per output
column, built once per core), blended in fp32 and rounded once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from copilot.errors import Unsupported
from copilot.lowering.conv import _source, single_op

_VIEWS = {"view", "_unsafe_view", "reshape", "clone", "contiguous", "alias", "detach"}
DTYPES = ("float16", "bfloat16", "float32")


@dataclass
class ResizePlan:
    task: object
    x: int
    align: tuple                       # ("const", bool) | ("attr", attr index)
    scales: int | None                 # the float list attr carrying (scale_h, scale_w), None: never given
    pattern: str = "resize_bilinear"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _resize_of(task, case):
    """(x input, align_corners, (scale_h, scale_w) or None) of the case's traced upsample_bilinear2d;
    None when the golden has none."""
    found = single_op(task, case, "upsample_bilinear2d", ("bilinear resize", "bilinear resizes"), _VIEWS)
    if found is None:
        return None
    node, ph_index = found
    xi = _source(node.args[0], ph_index)
    if xi is None:
        raise Unsupported(f"{task.name}: the resize does not read an input through views")
    args = list(node.args) + [None] * (5 - len(node.args))
    if args[1] is None:                 # the .vec form: sizes left to the scales
        raise Unsupported(f"{task.name}: case {case.id}: upsample_bilinear2d without output sizes")
    align = bool(node.kwargs.get("align_corners", args[2]))
    sh, sw = node.kwargs.get("scales_h", args[3]), node.kwargs.get("scales_w", args[4])
    scales = None if sh is None and sw is None else (sh, sw)
    return xi, align, scales


def _traced_align(task, case, attrs):
    import logging

    log = logging.getLogger("torch._subclasses.fake_tensor")
    was, log.disabled = log.disabled, True
    try:
        got = _resize_of(task, replace(case, attrs=attrs))
    except Exception:                   # the golden refuses this attr value
        return None
    finally:
        log.disabled = was
    return got[1] if got is not None else None


def _align_rule(task, case, first: bool) -> tuple:
    """The bool attr whose flip flips align_corners in the traced op, else the constant."""
    for i, a in enumerate(task.attrs):
        if not isinstance(case.attrs.get(a.name), bool):
            continue
        got = {v: _traced_align(task, case, {**case.attrs, a.name: v}) for v in (False, True)}
        if got == {False: False, True: True}:
            return ("attr", i)
    return ("const", first)


def _scale_attr(task, cases, per: dict) -> int | None:
    """The float list attr equal to the traced op's (scale_h, scale_w) in every case that passes
    them and None in every case that does not; None when no case passes scales."""
    if all(per[c.id][2] is None for c in cases):
        return None
    for i, a in enumerate(task.attrs):
        ok = True
        for c in cases:
            v, s = c.attrs.get(a.name), per[c.id][2]
            if s is None:
                ok = ok and v is None
            else:
                ok = ok and isinstance(v, (list, tuple)) and len(v) == 2 and \
                    all(isinstance(e, (int, float)) and abs(float(e) - float(t)) <= 1e-12 * abs(float(t))
                        for e, t in zip(v, s) if t is not None)
        if ok:
            return i
    raise Unsupported(f"{task.name}: the resize's scales follow from no list attr")


# ---- the formula, in fp64 (the probes compare the golden with it) ----

def _axis(size_in: int, size_out: int, align: bool, scale):
    """(first tap, second tap, weight of the first, weight of the second) per output index."""
    import torch

    j = torch.arange(size_out, dtype=torch.float64)
    if size_in == size_out:
        i0 = j.long()
        return i0, i0, torch.ones_like(j), torch.zeros_like(j)
    if align:
        ratio = (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
        src = ratio * j
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else size_in / size_out
        src = (ratio * (j + 0.5) - 0.5).clamp(min=0.0)
    i0 = torch.floor(src).clamp(max=size_in - 1)
    l1 = (src - i0).clamp(0.0, 1.0)
    i0 = i0.long()
    i1 = torch.where(i0 < size_in - 1, i0 + 1, i0)
    return i0, i1, 1.0 - l1, l1


def reference(x, size_out: tuple, align: bool, scales=None):
    """upsample_bilinear2d of x [N, C, H, W] to size_out by the kernel's formula (fp64)."""
    import torch

    sh, sw = scales if scales is not None else (None, None)
    h0, h1, lh0, lh1 = _axis(x.shape[2], size_out[0], align, sh)
    w0, w1, lw0, lw1 = _axis(x.shape[3], size_out[1], align, sw)
    x = x.to(torch.float64)
    top, bottom = x[:, :, h0, :], x[:, :, h1, :]
    top = top[..., w0] * lw0 + top[..., w1] * lw1
    bottom = bottom[..., w0] * lw0 + bottom[..., w1] * lw1
    return top * lh0[:, None] + bottom * lh1[:, None]


def _probe(task, xi: int, attrs: dict, align: bool, scales) -> bool:
    """Whether the golden computes the formula above on small fp64 probes under these attrs."""
    import torch

    from copilot.lowering.capture import call_golden

    g = torch.Generator().manual_seed(11)
    for shape in ((1, 2, 5, 7), (2, 1, 4, 9)):
        x = torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2
        inputs = [None] * len(task.inputs)
        inputs[xi] = x
        try:
            with torch.no_grad():
                out = call_golden(task, inputs, attrs)
        except Exception:
            return False
        if isinstance(out, (list, tuple)):
            if len(out) != 1:
                return False
            out = out[0]
        if not isinstance(out, torch.Tensor) or out.dtype != torch.float64 or out.dim() != 4 or \
                tuple(out.shape[:2]) != shape[:2]:
            return False
        ref = reference(x, tuple(out.shape[2:]), align, scales)
        if not torch.allclose(out, ref, rtol=1e-10, atol=1e-10):
            return False
    return True


def plan_resize(task):
    """A ResizePlan, None if the golden has no bilinear resize, Unsupported if we do not serve it."""
    cases = task.cases
    if not cases or len(task.outputs) != 1 or any(s is None for s in cases[0].shapes):
        return None
    try:
        first = _resize_of(task, cases[0])
    except Unsupported as exc:
        if "could not be traced" in str(exc):
            return None
        raise
    if first is None:
        return None
    xi = first[0]
    per = {}
    for c in cases:
        got = first if c is cases[0] else _resize_of(task, c)
        if got is None or got[0] != xi:
            raise Unsupported(f"{task.name}: case {c.id} is not the same bilinear resize")
        per[c.id] = got
    align = _align_rule(task, cases[0], first[1])
    for c in cases:
        want = c.attrs.get(task.attrs[align[1]].name) if align[0] == "attr" else align[1]
        if bool(want) != per[c.id][1]:
            raise Unsupported(f"{task.name}: case {c.id}: align_corners follows from no attr")
    scales = _scale_attr(task, cases, per)
    # each (align_corners, size / scale form) the cases use, and align_corners flipped, on probes
    forms = {}
    for c in cases:
        forms.setdefault((per[c.id][1], per[c.id][2] is not None), c)
    for (al, _), c in list(forms.items()):
        if align[0] == "attr":
            forms.setdefault((not al, _), replace(c, attrs={**c.attrs, task.attrs[align[1]].name: not al}))
    for (al, scaled), c in forms.items():
        s = c.attrs.get(task.attrs[scales].name) if scaled else None
        if not _probe(task, xi, dict(c.attrs), al, s):
            raise Unsupported(f"{task.name}: the golden is not bilinear interpolation on fp64 probes "
                              f"(align_corners={al}, {'scale' if scaled else 'size'} form)")
    unserved = {}
    for c in cases:
        if len(c.shapes[xi]) != 4:
            unserved[c.id] = f"x of rank {len(c.shapes[xi])} (the kernel resizes [N, C, H, W])"
        elif c.dtypes[xi] not in DTYPES:
            unserved[c.id] = f"dtype {c.dtypes[xi]} (the kernel resizes fp16 / bf16 / fp32)"
    plan = ResizePlan(task, xi, align, scales, unserved=unserved)
    plan.notes.append(f"bilinear resize of {task.inputs[xi].name} [N, C, H, W]; align_corners "
                      f"{task.attrs[align[1]].name if align[0] == 'attr' else align[1]}, scales "
                      f"{task.attrs[scales].name if scales is not None else 'In / Out'}, output sizes from "
                      f"y's shape; {len(forms)} form(s) confirmed on fp64 probes")
    return plan


def _attr_cpp(plan) -> str:
    t = plan.task
    if plan.align[0] == "const":
        text = f"    const bool align = {'true' if plan.align[1] else 'false'};\n"
    else:
        text = (f"    const bool* alignAttr = attrs->GetAttrPointer<bool>({plan.align[1]});   // `{t.attrs[plan.align[1]].name}`\n"
                f"    const bool align = alignAttr != nullptr && *alignAttr;\n")
    if plan.scales is None:
        return text + "    const float* scales = nullptr;\n"
    return text + (f"    // `{t.attrs[plan.scales].name}`: absent when the output size is given\n"
                   f"    const gert::TypedContinuousVector<float>* scaleAttr = attrs->GetListFloat({plan.scales});\n"
                   f"    if (scaleAttr != nullptr && scaleAttr->GetSize() != 2) {{\n"
                   f"        return ge::GRAPH_FAILED;\n    }}\n"
                   f"    const float* scales = scaleAttr != nullptr ? scaleAttr->GetData() : nullptr;\n")


def render(plan: ResizePlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [i.name for i in t.inputs] + [o.name for o in t.outputs]
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    subs = {"@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
            "@XT@": _macro_of(t.inputs[plan.x].name), "@X_ID@": _ident(t.inputs[plan.x].name),
            "@XI@": str(plan.x), "@Y_ID@": _ident(t.outputs[0].name), "@DESC@": plan.notes[0],
            "@ARGS@": ", ".join(f"GM_ADDR {_ident(n)}" for n in names), "@ATTRS@": _attr_cpp(plan),
            "@DTYPE_BYTES@": _dtype_bytes_fn() + "\n\n" + _AXIS_SCALE.rstrip("\n"),
            "@RESERVE@": str(int(knobs["ub_reserve_bytes"])),
            "@SPLIT@": core_split(knobs, "td->work", "td->units")}
    for k, v in subs.items():
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// y[p, i, j] = lh0(i) (lw0(j) x[p, h0(i), w0(j)] + lw1(j) x[p, h0(i), w1(j)])
//            + lh1(i) (lw0(j) x[p, h1(i), w0(j)] + lw1(j) x[p, h1(i), w1(j)])
// per axis: src = scale * (i + half) - half (>= 0), a0 = min(floor(src), In - 1), a1 = a0 + 1 (a0 at
// the edge), l1 = src - a0 in [0, 1], l0 = 1 - l1 (torch's source index, in fp32 as torch).
// A unit is (plane, block of output rows). Its source rows come to UB (dense: the rows' range in one
// DMA; sparse, scale_h > 2: rows h0, h0 + 1 per output row; a missing row h0 + 1 at the bottom edge is
// row h0 again) in one of two stage slots, widened to fp32. Each tap of the whole block is one Gather
// by byte offsets: the row part (per output row, computed per block on the vector unit) + the column
// part (per output column, built once per core); the blend is in fp32, rounded once to y's dtype.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t h, w, oh, ow;              // x [planes, h, w], y [planes, oh, ow]
    uint32_t wp;                        // source row pitch in UB (elements, 16-aligned)
    uint32_t op;                        // output row pitch in UB (elements, 16-aligned)
    uint32_t rows;                      // output rows per unit
    uint32_t blocks;                    // units per plane
    uint32_t stageRows;                 // source rows the stage holds
    uint32_t dense;                     // 1: the block's source row range in one DMA; 0: two rows per output row
    uint32_t widen;                     // 1: fp16 / bf16 rows widened to fp32 before the Gathers; 0: taps gathered as they are
    uint32_t tapBytes;                  // bytes of a gathered source element (4 widened / fp32, else 2)
    float scaleH, halfH, scaleW, halfW; // src = scale * (i + half) - half
    uint64_t planes;                    // n * c
    uint64_t work;                      // output elements (the core split's measure)
    uint64_t units;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @XT@;

// The staged rows in fp32: fp32 data as they are, fp16 / bf16 widened (exactly) into `wide`.
template <typename S>
__aicore__ inline LocalTensor<float> Widened(const LocalTensor<S>& staged, TBuf<QuePosition::VECCALC>& wide, int32_t len)
{
    if constexpr (std::is_same<S, float>::value) {
        return staged;
    } else {
        LocalTensor<float> rows = wide.Get<float>();
        Cast(rows, staged, RoundMode::CAST_NONE, len);
        return rows;
    }
}

// dst = the source elements at byte offsets off (+ base), in fp32: fp32 rows directly; fp16 / bf16
// rows gathered as 16-bit words into raw, then widened.
template <typename S>
__aicore__ inline void GatherTap(const LocalTensor<float>& dst, const LocalTensor<S>& src, const LocalTensor<uint32_t>& off,
                                 uint32_t base, uint32_t len, const LocalTensor<S>& raw)
{
    if constexpr (std::is_same<S, float>::value) {
        Gather(dst, src, off, base, len);
    } else {
        Gather(raw.template ReinterpretCast<uint16_t>(), src.template ReinterpretCast<uint16_t>(), off, base, len);
        Cast(dst, raw, RoundMode::CAST_NONE, static_cast<int32_t>(len));
    }
}

// out = lh0 top + lh1 bottom, written in y's dtype (fp16 / bf16 rounded once, to nearest even).
template <typename D>
__aicore__ inline void Rows(const LocalTensor<D>& out, const LocalTensor<float>& top, const LocalTensor<float>& bottom,
                            const LocalTensor<float>& lh0, const LocalTensor<float>& lh1, int32_t len)
{
    if constexpr (std::is_same<D, float>::value) {
        Mul(out, top, lh0, len);
        MulAddDst(out, bottom, lh1, len);
    } else {
        Mul(top, top, lh0, len);
        MulAddDst(top, bottom, lh1, len);
        Cast(out, top, RoundMode::CAST_RINT, len);
    }
}

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(xAddr));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(yAddr));
@UNIT_RANGE@        const uint32_t block = td_.rows * td_.op;
        const uint32_t rowVec = (td_.rows * sizeof(float) + 31) / 32 * 32;
        pipe_.InitBuffer(stageQue_, 2, td_.stageRows * td_.wp * sizeof(T));
        if (td_.widen) {
            pipe_.InitBuffer(wideBuf_, td_.stageRows * td_.wp * sizeof(float));   // fp16 / bf16 widened
        } else if (!std::is_same<T, float>::value) {
            pipe_.InitBuffer(rawBuf_, block * sizeof(T));                           // a tap as gathered
        }
        pipe_.InitBuffer(colOffBuf_, block * sizeof(int32_t));
        pipe_.InitBuffer(colStepBuf_, block * sizeof(int32_t));
        pipe_.InitBuffer(lw0Buf_, block * sizeof(float));
        pipe_.InitBuffer(lw1Buf_, block * sizeof(float));
        pipe_.InitBuffer(rowIdxBuf_, block * sizeof(uint32_t));
        pipe_.InitBuffer(off0Buf_, block * sizeof(int32_t));
        pipe_.InitBuffer(off1Buf_, block * sizeof(int32_t));
        pipe_.InitBuffer(lh0Buf_, block * sizeof(float));
        pipe_.InitBuffer(lh1Buf_, block * sizeof(float));
        pipe_.InitBuffer(tapBuf_, block * sizeof(float));
        pipe_.InitBuffer(topBuf_, block * sizeof(float));
        pipe_.InitBuffer(bottomBuf_, block * sizeof(float));
        pipe_.InitBuffer(rowOffBuf_, rowVec);
        pipe_.InitBuffer(rowSrcBuf_, rowVec);
        pipe_.InitBuffer(rowA0Buf_, rowVec);
        pipe_.InitBuffer(rowLh0Buf_, rowVec);
        pipe_.InitBuffer(rowLh1Buf_, rowVec);
        pipe_.InitBuffer(outQue_, 2, block * sizeof(T));
        BuildColumnTables();
    }

    __aicore__ inline void Process()
    {
        // units run block-major (unit = block * planes + plane): a core's consecutive units mostly share
        // their output rows, so the row tables and the block's offsets and weights are built once per run
        uint64_t built = ~0ull;
        for (uint64_t u = unitStart_; u < unitStart_ + unitCount_; ++u) {
            const uint64_t blk = u / td_.planes;
            const uint64_t plane = u % td_.planes;
            const uint32_t i0 = static_cast<uint32_t>(blk) * td_.rows;
            const uint32_t rn = td_.oh - i0 < td_.rows ? td_.oh - i0 : td_.rows;
            uint32_t first = 0;
            const uint32_t staged = LoadRows(plane, i0, rn, first);
            if (blk != built) {
                RowTables(i0, rn, first, staged);
                BlockTables(rn);
                built = blk;
            }
            Blend(staged, rn);
            CopyOut(plane, i0, rn);
        }
    }

private:
    // torch's source index along one axis: first tap a0 and the weight l1 of the second.
    __aicore__ inline void SourceIndex(uint32_t i, float scale, float half, uint32_t size, uint32_t& a0, float& l1) const
    {
        float src = scale * (static_cast<float>(i) + half) - half;
        src = src < 0.0f ? 0.0f : src;
        a0 = static_cast<uint32_t>(src);
        a0 = a0 > size - 1 ? size - 1 : a0;
        l1 = src - static_cast<float>(a0);
        l1 = l1 < 0.0f ? 0.0f : (l1 > 1.0f ? 1.0f : l1);
    }

    // Per output column j (row 0 of each table, then copied to every row of the block by doubling):
    // byte offset of w0(j) in an fp32 source row, the step to w1(j) (4 or 0 at the edge), lw0, lw1;
    // rowIdx[r, j] = 4 r picks output row r's value out of a per-row vector.
    __aicore__ inline void BuildColumnTables()
    {
        const int32_t op = static_cast<int32_t>(td_.op);
        LocalTensor<float> src = tapBuf_.Get<float>(), a0 = topBuf_.Get<float>(), a1 = bottomBuf_.Get<float>();
        LocalTensor<float> lw0 = lw0Buf_.Get<float>(), lw1 = lw1Buf_.Get<float>();
        LocalTensor<int32_t> colOff = colOffBuf_.Get<int32_t>(), colStep = colStepBuf_.Get<int32_t>();
        LocalTensor<int32_t> rowIdx = rowIdxBuf_.Get<int32_t>();
        CreateVecIndex(src, 0.0f, td_.op);
        Adds(src, src, td_.halfW, op);
        Muls(src, src, td_.scaleW, op);
        Adds(src, src, -td_.halfW, op);
        Maxs(src, src, 0.0f, op);
        Cast(a0, src, RoundMode::CAST_FLOOR, op);    // floor, kept in fp32 (exact below 2^24)
        Mins(a0, a0, static_cast<float>(td_.w - 1), op);
        Sub(lw1, src, a0, op);
        Maxs(lw1, lw1, 0.0f, op);
        Mins(lw1, lw1, 1.0f, op);
        Muls(lw0, lw1, -1.0f, op);
        Adds(lw0, lw0, 1.0f, op);
        Adds(a1, a0, 1.0f, op);
        Mins(a1, a1, static_cast<float>(td_.w - 1), op);
        if (td_.w == td_.ow) {
            Adds(a1, a0, 0.0f, op);                    // the identity: both taps are the column itself
        }
        Sub(a1, a1, a0, op);
        Muls(a1, a1, static_cast<float>(td_.tapBytes), op);
        Cast(colStep, a1, RoundMode::CAST_RINT, op);
        Muls(a0, a0, static_cast<float>(td_.tapBytes), op);
        Cast(colOff, a0, RoundMode::CAST_RINT, op);
        Duplicate(rowIdx, static_cast<int32_t>(0), op);
        for (uint32_t m = 1; m < td_.rows; m *= 2) {
            const int32_t len = static_cast<int32_t>((td_.rows - m < m ? td_.rows - m : m) * td_.op);
            Adds(colOff[m * td_.op], colOff, static_cast<int32_t>(0), len);
            Adds(colStep[m * td_.op], colStep, static_cast<int32_t>(0), len);
            Adds(lw0[m * td_.op], lw0, 0.0f, len);
            Adds(lw1[m * td_.op], lw1, 0.0f, len);
            Adds(rowIdx[m * td_.op], rowIdx, static_cast<int32_t>(m * sizeof(float)), len);
        }
    }

    // The block's source rows into a stage slot (the queue's two slots let the next block's DMAs run
    // under this block's vector work). Returns the stage rows filled and (dense) the first row's index.
    __aicore__ inline uint32_t LoadRows(uint64_t plane, uint32_t i0, uint32_t rn, uint32_t& first)
    {
        LocalTensor<T> stage = stageQue_.AllocTensor<T>();
        const uint64_t planeBase = plane * td_.h * td_.w;
        constexpr uint32_t epb = 32 / sizeof(T);
        const uint32_t gap = (td_.wp - (td_.w + epb - 1) / epb * epb) / epb;   // 32-byte blocks between rows
        const DataCopyPadExtParams<T> noPad(false, 0, 0, static_cast<T>(0.0f));
        const DataCopyExtParams oneRow(1, td_.w * sizeof(T), 0, 0, 0);
        float l1 = 0.0f;
        uint32_t staged = 2 * rn;
        if (td_.dense) {
            // rows first .. last + 1 (the last row again when last + 1 is past the bottom edge)
            uint32_t last = 0;
            SourceIndex(i0, td_.scaleH, td_.halfH, td_.h, first, l1);
            SourceIndex(i0 + rn - 1, td_.scaleH, td_.halfH, td_.h, last, l1);
            const uint32_t end = last + 1 < td_.h ? last + 1 : td_.h - 1;
            DataCopyPad(stage, xGm_[planeBase + static_cast<uint64_t>(first) * td_.w],
                        DataCopyExtParams(static_cast<uint16_t>(end - first + 1), td_.w * sizeof(T), 0, gap, 0), noPad);
            if (end == last) {
                DataCopyPad(stage[(last + 1 - first) * td_.wp], xGm_[planeBase + static_cast<uint64_t>(last) * td_.w],
                            oneRow, noPad);
            }
            staged = last + 2 - first;
        } else {
            for (uint32_t r = 0; r < rn; ++r) {        // rows a0, a0 + 1 of output row r at stage rows 2 r, 2 r + 1
                uint32_t a0 = 0;
                SourceIndex(i0 + r, td_.scaleH, td_.halfH, td_.h, a0, l1);
                if (a0 + 1 < td_.h) {
                    DataCopyPad(stage[2 * r * td_.wp], xGm_[planeBase + static_cast<uint64_t>(a0) * td_.w],
                                DataCopyExtParams(2, td_.w * sizeof(T), 0, gap, 0), noPad);
                } else {
                    DataCopyPad(stage[2 * r * td_.wp], xGm_[planeBase + static_cast<uint64_t>(a0) * td_.w], oneRow, noPad);
                    DataCopyPad(stage[(2 * r + 1) * td_.wp], xGm_[planeBase + static_cast<uint64_t>(a0) * td_.w], oneRow, noPad);
                }
            }
        }
        stageQue_.EnQue(stage);
        return staged;
    }

    // Per output row r of the block on the vector unit: the byte offset of its top source row in the
    // stage (dense: a0 - first, clamped into the staged rows; sparse: 2 r) and its weights lh0, lh1.
    __aicore__ inline void RowTables(uint32_t i0, uint32_t rn, uint32_t first, uint32_t staged)
    {
        const int32_t n = static_cast<int32_t>(rn);
        LocalTensor<float> src = rowSrcBuf_.Get<float>(), a0 = rowA0Buf_.Get<float>();
        LocalTensor<float> lh0 = rowLh0Buf_.Get<float>(), lh1 = rowLh1Buf_.Get<float>();
        const float rowBytes = static_cast<float>(td_.wp * td_.tapBytes);
        CreateVecIndex(src, static_cast<float>(i0), rn);
        Adds(src, src, td_.halfH, n);
        Muls(src, src, td_.scaleH, n);
        Adds(src, src, -td_.halfH, n);
        Maxs(src, src, 0.0f, n);
        Cast(a0, src, RoundMode::CAST_FLOOR, n);
        Mins(a0, a0, static_cast<float>(td_.h - 1), n);
        Sub(lh1, src, a0, n);
        Maxs(lh1, lh1, 0.0f, n);
        Mins(lh1, lh1, 1.0f, n);
        if (td_.h == td_.oh) {
            Duplicate(lh1, 0.0f, n);                   // the identity
        }
        Muls(lh0, lh1, -1.0f, n);
        Adds(lh0, lh0, 1.0f, n);
        if (td_.dense) {
            Adds(a0, a0, -static_cast<float>(first), n);
            Maxs(a0, a0, 0.0f, n);
            Mins(a0, a0, static_cast<float>(staged - 2), n);
        } else {
            CreateVecIndex(a0, 0.0f, rn);
            Muls(a0, a0, 2.0f, n);
        }
        Muls(a0, a0, rowBytes, n);
        Cast(rowOffBuf_.Get<int32_t>(), a0, RoundMode::CAST_RINT, n);
    }

    // Per element of the block: the byte offsets of its top taps (stage row of its output row + column
    // part; the bottom taps are one stage row further, the Gathers' base address) and its row weights.
    __aicore__ inline void BlockTables(uint32_t rn)
    {
        const uint32_t len = rn * td_.op;
        const int32_t n = static_cast<int32_t>(len);
        LocalTensor<uint32_t> rowIdx = rowIdxBuf_.Get<uint32_t>();
        LocalTensor<int32_t> off0 = off0Buf_.Get<int32_t>();
        Gather(off0.ReinterpretCast<uint32_t>(), rowOffBuf_.Get<uint32_t>(), rowIdx, 0, len);
        Add(off0, off0, colOffBuf_.Get<int32_t>(), n);
        Add(off1Buf_.Get<int32_t>(), off0, colStepBuf_.Get<int32_t>(), n);
        Gather(lh0Buf_.Get<float>(), rowLh0Buf_.Get<float>(), rowIdx, 0, len);
        Gather(lh1Buf_.Get<float>(), rowLh1Buf_.Get<float>(), rowIdx, 0, len);
    }

    // The block's rn output rows in fp32 from the staged rows, then rounded into an output tile.
    __aicore__ inline void Blend(uint32_t staged, uint32_t rn)
    {
        const uint32_t len = rn * td_.op;
        const int32_t n = static_cast<int32_t>(len);
        LocalTensor<T> stage = stageQue_.DeQue<T>();
        LocalTensor<int32_t> off0 = off0Buf_.Get<int32_t>(), off1 = off1Buf_.Get<int32_t>();
        LocalTensor<float> lh0 = lh0Buf_.Get<float>(), lh1 = lh1Buf_.Get<float>();
        LocalTensor<float> lw0 = lw0Buf_.Get<float>(), lw1 = lw1Buf_.Get<float>();
        LocalTensor<float> tap = tapBuf_.Get<float>(), top = topBuf_.Get<float>(), bottom = bottomBuf_.Get<float>();
        LocalTensor<uint32_t> o0 = off0.ReinterpretCast<uint32_t>(), o1 = off1.ReinterpretCast<uint32_t>();
        const uint32_t down = td_.wp * td_.tapBytes;  // the bottom taps: one stage row further
        // x00, x01 -> top, x10, x11 -> bottom (W first, as torch)
        if (td_.widen) {                               // fp16 / bf16 rows widened once (rows reused by many taps)
            const LocalTensor<float> rows = Widened(stage, wideBuf_, static_cast<int32_t>(staged * td_.wp));
            GatherTap(tap, rows, o0, 0, len, rows);
            Mul(top, tap, lw0, n);
            GatherTap(tap, rows, o1, 0, len, rows);
            MulAddDst(top, tap, lw1, n);
            GatherTap(tap, rows, o0, down, len, rows);
            Mul(bottom, tap, lw0, n);
            GatherTap(tap, rows, o1, down, len, rows);
            MulAddDst(bottom, tap, lw1, n);
        } else {                                       // fp32 rows, or taps widened one by one (fewer than the rows)
            const LocalTensor<T> raw = std::is_same<T, float>::value ? stage : rawBuf_.Get<T>();
            GatherTap(tap, stage, o0, 0, len, raw);
            Mul(top, tap, lw0, n);
            GatherTap(tap, stage, o1, 0, len, raw);
            MulAddDst(top, tap, lw1, n);
            GatherTap(tap, stage, o0, down, len, raw);
            Mul(bottom, tap, lw0, n);
            GatherTap(tap, stage, o1, down, len, raw);
            MulAddDst(bottom, tap, lw1, n);
        }
        stageQue_.FreeTensor(stage);
        LocalTensor<T> out = outQue_.AllocTensor<T>();
        Rows(out, top, bottom, lh0, lh1, n);
        outQue_.EnQue(out);
    }

    __aicore__ inline void CopyOut(uint64_t plane, uint32_t i0, uint32_t rn)
    {
        LocalTensor<T> out = outQue_.DeQue<T>();
        constexpr uint32_t epb = 32 / sizeof(T);
        const uint32_t gap = (td_.op - (td_.ow + epb - 1) / epb * epb) / epb;   // 32-byte blocks
        DataCopyPad(yGm_[(plane * td_.oh + i0) * td_.ow], out,
                    DataCopyExtParams(static_cast<uint16_t>(rn), td_.ow * sizeof(T), gap, 0, 0));
        outQue_.FreeTensor(out);
    }

    TPipe pipe_;
    TQue<QuePosition::VECOUT, 2> outQue_;
    TQue<QuePosition::VECIN, 2> stageQue_;             // the block's source rows
    TBuf<QuePosition::VECCALC> wideBuf_, rawBuf_;
    TBuf<QuePosition::VECCALC> colOffBuf_, colStepBuf_, lw0Buf_, lw1Buf_, rowIdxBuf_;   // per column, built once
    TBuf<QuePosition::VECCALC> off0Buf_, off1Buf_, lh0Buf_, lh1Buf_, tapBuf_, topBuf_, bottomBuf_;
    TBuf<QuePosition::VECCALC> rowOffBuf_, rowLh0Buf_, rowLh1Buf_, rowSrcBuf_, rowA0Buf_;   // per output row of the block
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X_ID@, @Y_ID@, tilingData);
    op.Process();
}
"""

_AXIS_SCALE = r"""// torch's scale of one axis: align_corners (In - 1) / (Out - 1); else 1 / scale_factor when given,
// else In / Out; In == Out is the identity (scale 1, half 0).
static void AxisScale(uint32_t in, uint32_t out, bool align, const float* factor, float& scale, float& half)
{
    half = 0.0f;
    if (in == out) {
        scale = 1.0f;
    } else if (align) {
        scale = out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
    } else {
        half = 0.5f;
        scale = factor != nullptr && *factor > 0.0f ? static_cast<float>(1.0 / static_cast<double>(*factor))
                                                     : static_cast<float>(in) / static_cast<float>(out);
    }
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& xs = context->GetInputShape(@XI@)->GetStorageShape();
    const gert::Shape& ys = context->GetOutputShape(0)->GetStorageShape();
    if (xs.GetDimNum() != 4 || ys.GetDimNum() != 4 || ys.GetDim(0) != xs.GetDim(0) || ys.GetDim(1) != xs.GetDim(1)) {
        return ge::GRAPH_FAILED;   // x [n, c, h, w], y [n, c, oh, ow]
    }
    const ge::DataType dt = context->GetInputDesc(@XI@)->GetDataType();
    if (dt != ge::DT_FLOAT16 && dt != ge::DT_BF16 && dt != ge::DT_FLOAT) {
        return ge::GRAPH_FAILED;   // the kernel resizes fp16 / bf16 / fp32
    }
    for (size_t a = 0; a < 4; ++a) {
        if (xs.GetDim(a) <= 0 || ys.GetDim(a) <= 0 || (a >= 2 && (xs.GetDim(a) > 65535 || ys.GetDim(a) > 65535))) {
            return ge::GRAPH_FAILED;   // empty or oversized axes
        }
    }
@ATTRS@    td->planes = static_cast<uint64_t>(xs.GetDim(0)) * static_cast<uint64_t>(xs.GetDim(1));
    td->h = static_cast<uint32_t>(xs.GetDim(2));
    td->w = static_cast<uint32_t>(xs.GetDim(3));
    td->oh = static_cast<uint32_t>(ys.GetDim(2));
    td->ow = static_cast<uint32_t>(ys.GetDim(3));
    AxisScale(td->h, td->oh, align, scales, td->scaleH, td->halfH);
    AxisScale(td->w, td->ow, align, scales != nullptr ? scales + 1 : nullptr, td->scaleW, td->halfW);
    td->wp = (td->w + 15) / 16 * 16;
    td->op = (td->ow + 15) / 16 * 16;
    td->work = td->planes * td->oh * td->ow;

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t es = DtypeBytes(dt);
    const uint64_t budget = ubSize > @RESERVE@ + 1024 ? ubSize - @RESERVE@ - 1024 : 0;
    // rows per block: up to 8192 output elements (long vector instructions), fewer until UB holds
    // them, and fewer when the units would leave cores idle
    uint64_t rows = 8192 / td->op > 0 ? 8192 / td->op : 1;
    rows = rows > td->oh ? td->oh : rows;
    const uint64_t perPlane = (td->oh + rows - 1) / rows;
    if (td->planes * perPlane < coreNum) {
        const uint64_t want = (coreNum + td->planes - 1) / td->planes;
        const uint64_t fewer = (td->oh + want - 1) / want;
        rows = fewer < rows ? (fewer > 0 ? fewer : 1) : rows;
    }
    // the source rows a block of `rows` output rows spans (dense), or two per output row (sparse)
    auto stageOf = [&](uint64_t r, bool dense) -> uint64_t {
        return dense ? static_cast<uint64_t>(static_cast<double>(r - 1) * td->scaleH) + 4 : 2 * r;   // + 2 rows of fp32 slack
    };
    const bool dense = stageOf(rows, true) <= 2 * rows;
    // fp16 / bf16: the staged rows are widened to fp32 once when that casts fewer elements than
    // widening the four taps of every output element
    const bool widen = es != 4 && stageOf(rows, dense) * td->wp <= 4 * rows * td->op;
    td->widen = widen ? 1 : 0;
    td->tapBytes = widen || es == 4 ? 4 : static_cast<uint32_t>(es);
    // UB per output element of a block: 5 column tables, 2 offsets, 2 row weights, 3 fp32 taps, 2 output
    // tiles (and a tap as gathered when not widened); per output row: 5 per-row values; per staged
    // source row: two queue slots (and the fp32 copy when widened)
    const uint64_t perElem = 12 * 4 + 2 * es + (!widen && es != 4 ? es : 0);
    const uint64_t perStaged = static_cast<uint64_t>(td->wp) * (2 * es + (widen ? 4 : 0));
    auto fits = [&](uint64_t r) -> bool {
        return r * td->op * perElem + 5 * ((r * 4 + 31) / 32 * 32) + stageOf(r, dense) * perStaged <= budget;
    };
    while (rows > 1 && !fits(rows)) {
        rows = rows * 3 / 4 > 0 ? rows * 3 / 4 : 1;
    }
    if (!fits(rows) || stageOf(rows, dense) > 4095) {
        return ge::GRAPH_FAILED;   // one output row and its source rows do not fit UB
    }
    td->dense = dense ? 1 : 0;
    td->rows = static_cast<uint32_t>(rows);
    td->stageRows = static_cast<uint32_t>(stageOf(rows, dense));
    td->blocks = static_cast<uint32_t>((td->oh + rows - 1) / rows);
    td->units = td->planes * td->blocks;                                   // block-major
@SPLIT@    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
