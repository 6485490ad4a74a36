"""Adaptive average pooling over the last three axes of an NCDHW tensor:

    y[n, c, i, j, k] = mean of x[n, c, d0(i):d1(i), h0(j):h1(j), w0(k):w1(k)]
    with a0(i) = floor(i * In / Out), a1(i) = ceil((i + 1) * In / Out) along each axis

The golden's traced graph is one `_adaptive_avg_pool3d` of its only input; small fp64 probes then
confirm the windows above (a golden that pools otherwise, or scales the mean, is not this pattern).
The output sizes come from y's shape in the tiling function, so any output_size the golden accepts
is served.

The kernel (one AIV per run of units): a unit is (plane n*C + c, output depth i, block of output
rows j). Its input rows [h0(first), h1(last)) are streamed in chunks that fit UB: per depth of the
window one DMA of the chunk's rows (each row at a 32-byte pitch), summed in fp32 over the depth
window (fp16 / bf16 cast first, as torch accumulates them); each chunk row is added to the row sum
of every output row whose height window holds it. The width windows are then index tables built
once by the scalar unit: tap t of output k gathers row-sum element w0(k) + t, or a zero past the
window, and the sum of taps is divided by the window's element count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_PASSIVE = {"alias", "clone", "contiguous", "detach", "view", "_unsafe_view", "reshape"}


@dataclass
class AdaptivePoolPlan:
    task: object
    x: int
    pattern: str = "adaptive_avg_pool3d"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _pool_form(task, case) -> str | None:
    """How the case's traced golden pools its only input: "window" (`_adaptive_avg_pool3d`),
    "global" (output size 1, 1, 1: torch traces it as a mean over the last three axes, kept), or
    None when the graph is anything else."""
    from copilot.lowering.cube import trace_case

    gm, present = trace_case(task, case)
    calls = [n for n in gm.graph.nodes if n.op == "call_function" and _name(n) not in _PASSIVE]
    if len(calls) != 1 or len(present) != 1 or calls[0].args[0].op != "placeholder":
        return None
    op = calls[0]
    if _name(op) == "_adaptive_avg_pool3d":
        return "window"
    if _name(op) == "mean" and len(op.args) >= 3 and op.args[2] is True and not op.kwargs.get("dtype"):
        if sorted(int(a) % 5 for a in op.args[1]) == [2, 3, 4]:
            return "global"
    return None


def _window_matrix(size_in: int, size_out: int):
    """[Out, In] fp64: row i averages x[a0(i):a1(i)] along one axis."""
    import torch

    m = torch.zeros((size_out, size_in), dtype=torch.float64)
    for i in range(size_out):
        a0, a1 = i * size_in // size_out, -(-(i + 1) * size_in // size_out)
        m[i, a0:a1] = 1.0 / (a1 - a0)
    return m


def _probe(task, case) -> bool:
    """Whether the golden computes the windows above on small fp64 probes with the case's attrs."""
    import torch

    from copilot.lowering.capture import call_golden

    g = torch.Generator().manual_seed(13)
    for shape in ((2, 3, 5, 7, 6), (1, 2, 9, 4, 11)):
        x = torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2
        try:
            with torch.no_grad():
                out = call_golden(task, [x], dict(case.attrs))
        except Exception:           # the golden refuses these shapes: not confirmed
            return False
        if isinstance(out, (list, tuple)):
            if len(out) != 1:
                return False
            out = out[0]
        if not isinstance(out, torch.Tensor) or out.dim() != 5 or tuple(out.shape[:2]) != shape[:2]:
            return False
        if out.numel() > 1 << 22 or out.dtype != torch.float64:
            return False
        md, mh, mw = (_window_matrix(shape[a], out.shape[a]) for a in (2, 3, 4))
        ref = torch.einsum("id,jh,kw,ncdhw->ncijk", md, mh, mw, x)
        if not torch.allclose(out, ref, rtol=1e-12, atol=1e-12):
            return False
    return True


def plan_adaptive_pool(task):
    """An AdaptivePoolPlan, None if the golden is no 3-D adaptive average pool."""
    cases = task.cases
    if not cases or len(task.inputs) != 1 or len(task.outputs) != 1 or any(s is None for s in cases[0].shapes):
        return None
    if len(cases[0].shapes[0]) != 5:
        return None
    try:
        first = _pool_form(task, cases[0])
    except Unsupported:
        return None
    if first is None or not _probe(task, cases[0]):
        return None
    probed = {first}
    for c in cases[1:]:
        form = _pool_form(task, c) if c.shapes[0] is not None and len(c.shapes[0]) == 5 else None
        if form is None:
            raise Unsupported(f"{task.name}: case {c.id} is not a 3-D adaptive average pool of a 5-D x "
                              "(its traced golden is another graph)")
        if form not in probed:        # the other traced form: confirm its numbers too
            if not _probe(task, c):
                raise Unsupported(f"{task.name}: case {c.id} traces as a {form} pool but the golden's "
                                  "numbers on probes are not adaptive average windows")
            probed.add(form)
    unserved = {}
    for c in cases:
        if c.dtypes[0] not in ("float16", "bfloat16", "float32"):
            unserved[c.id] = f"dtype {c.dtypes[0]} (the kernel averages fp16 / bf16 / fp32)"
    plan = AdaptivePoolPlan(task, 0, unserved=unserved)
    plan.notes.append(f"adaptive average pool over D, H, W of {task.inputs[0].name}; windows "
                      "[floor(i In / Out), ceil((i + 1) In / Out)), output sizes from y's shape")
    return plan


def render(plan: AdaptivePoolPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [i.name for i in t.inputs] + [o.name for o in t.outputs]
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    subs = {"@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
            "@XT@": _macro_of(t.inputs[plan.x].name), "@X_ID@": _ident(t.inputs[plan.x].name),
            "@Y_ID@": _ident(t.outputs[0].name), "@DESC@": plan.notes[0],
            "@ARGS@": ", ".join(f"GM_ADDR {_ident(n)}" for n in names),
            "@DTYPE_BYTES@": _dtype_bytes_fn(), "@SYNC@": SYNC_PIPES,
            "@RESERVE@": str(int(knobs["ub_reserve_bytes"])),
            "@SPLIT@": core_split(knobs, "td->work", "td->units")}
    for k, v in subs.items():
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// y[n, c, i, j, k] = mean of x[n, c, d0(i):d1(i), h0(j):h1(j), w0(k):w1(k)],
//   a0(i) = floor(i * In / Out), a1(i) = ceil((i + 1) * In / Out) along each axis.
// A unit is (plane, output depth i, block of output rows j). Its input rows are streamed in chunks;
// per chunk, in fp32:
//   depth:  acc[r, :] = sum over d0(i) <= dd < d1(i) of x[plane, dd, r, :]   (one DMA + Add per depth)
//   width:  wsum[r, k] = sum over taps t of acc[r, w0(k) + t]   (one Gather per tap over the chunk; a
//           tap past a short window reads the zero column w of the row)
//   height: mean[j, :] += wsum[r, :] / (depth count * height count of j) for r in j's height window
// and at the end of the unit mean[j, k] /= width count of k, rounded once to y's dtype.
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t d, h, w;                   // x [planes, d, h, w]
    uint32_t od, oh, ow;                // y [planes, od, oh, ow]
    uint32_t chunkPad;                  // chunkRows * w rounded up to 64 elements: a chunk's UB slot
    uint32_t op;                        // output row pitch in UB (elements, 16-aligned)
    uint32_t kwMax;                     // the widest width window (taps per output column)
    uint32_t hStep, hPeriod;            // h / oh = hStep / hPeriod in lowest terms
    uint32_t blockRows;                 // output rows per unit
    uint32_t hBlocks;                   // units per output depth
    uint32_t chunkRows;                 // input rows per DMA
    uint64_t planes;                    // n * c
    uint64_t work;                      // input elements (the core split's measure)
    uint64_t units;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @XT@;

__aicore__ inline uint32_t WindowStart(uint32_t i, uint32_t in, uint32_t out)
{
    return static_cast<uint32_t>(static_cast<uint64_t>(i) * in / out);
}

__aicore__ inline uint32_t WindowEnd(uint32_t i, uint32_t in, uint32_t out)
{
    return static_cast<uint32_t>((static_cast<uint64_t>(i + 1) * in + out - 1) / out);
}

// acc = x's depth slice (first) or acc += it, in fp32 (fp16 / bf16 widened exactly through `wide`).
template <typename S>
__aicore__ inline void AddDepth(const LocalTensor<float>& acc, const LocalTensor<S>& in, TBuf<QuePosition::VECCALC>& wide,
                                bool first, int32_t len)
{
    if constexpr (std::is_same<S, float>::value) {
        if (first) {
            Adds(acc, in, 0.0f, len);
        } else {
            Add(acc, acc, in, len);
        }
    } else if (first) {
        Cast(acc, in, RoundMode::CAST_NONE, len);
    } else {
        LocalTensor<float> widened = wide.Get<float>();
        Cast(widened, in, RoundMode::CAST_NONE, len);
        Add(acc, acc, widened, len);
    }
}

// The fp32 means in y's dtype (rounded to nearest even) or copied.
template <typename D>
__aicore__ inline void FromFloat(const LocalTensor<D>& out, const LocalTensor<float>& mean, int32_t len)
{
    if constexpr (std::is_same<D, float>::value) {
        Adds(out, mean, 0.0f, len);
    } else {
        Cast(out, mean, RoundMode::CAST_RINT, len);
    }
}

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(xAddr));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(yAddr));
@UNIT_RANGE@        const uint32_t chunk = td_.chunkPad;
        const uint32_t pooled = td_.chunkRows * td_.op;
        pipe_.InitBuffer(inQue_, 2, chunk * sizeof(T));
        if (sizeof(T) != sizeof(float)) {
            pipe_.InitBuffer(wideBuf_, chunk * sizeof(float));   // fp16 / bf16 widened to fp32
        }
        pipe_.InitBuffer(accBuf_, (chunk + 64) * sizeof(float));   // the sums, then 0s the short windows read
        pipe_.InitBuffer(tapOffBuf_, td_.kwMax * pooled * sizeof(int32_t));
        pipe_.InitBuffer(wsumBuf_, pooled * sizeof(float));
        pipe_.InitBuffer(tapBuf_, pooled * sizeof(float));
        pipe_.InitBuffer(meanBuf_, td_.blockRows * td_.op * sizeof(float));
        pipe_.InitBuffer(widthScaleBuf_, td_.blockRows * td_.op * sizeof(float));
        pipe_.InitBuffer(outQue_, 1, td_.blockRows * td_.op * sizeof(T));
        BuildWidthTables();
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = unitStart_; u < unitStart_ + unitCount_; ++u) {
            const uint64_t perPlane = static_cast<uint64_t>(td_.od) * td_.hBlocks;
            const uint64_t plane = u / perPlane;
            const uint32_t i = static_cast<uint32_t>(u % perPlane) / td_.hBlocks;
            const uint32_t j0 = static_cast<uint32_t>(u % perPlane) % td_.hBlocks * td_.blockRows;
            const uint32_t rows = td_.oh - j0 < td_.blockRows ? td_.oh - j0 : td_.blockRows;
            LocalTensor<float> mean = meanBuf_.Get<float>();
            Duplicate(mean, 0.0f, rows * td_.op);
            const uint32_t h0 = WindowStart(j0, td_.h, td_.oh);
            const uint32_t h1 = WindowEnd(j0 + rows - 1, td_.h, td_.oh);
            for (uint32_t r0 = h0; r0 < h1; r0 += td_.chunkRows) {
                const uint32_t n = h1 - r0 < td_.chunkRows ? h1 - r0 : td_.chunkRows;
                SumDepths(plane, i, r0, n);
                PoolWidths(n);
                PoolHeights(mean, i, j0, rows, r0, n);
            }
            Mul(mean, mean, widthScaleBuf_.Get<float>(), static_cast<int32_t>(rows * td_.op));
            CopyOut(mean, plane, i, j0, rows);
        }
    }

private:
    // Tap t of output column k of chunk row r reads acc[r w + w0(k) + t], or a 0 after the chunk's
    // sums (at zeroAt) past k's window: byte offsets = min(r w + column(t, k), zeroAt) with column(t, k)
    // huge past the window. Row offsets and the periodic columns are doubled row by row (row r + m =
    // row r + m rows); widthScale[j, k] = 1 / (width count of k), the same for every row j.
    __aicore__ inline void BuildWidthTables()
    {
        constexpr int32_t PAST = 0x3fffffff;
        LocalTensor<int32_t> off = tapOffBuf_.Get<int32_t>();
        LocalTensor<int32_t> column = tapBuf_.Get<int32_t>();
        LocalTensor<float> scale = widthScaleBuf_.Get<float>();
        const uint32_t pooled = td_.chunkRows * td_.op;
        const int32_t zeroAt = static_cast<int32_t>(td_.chunkPad * sizeof(float));
        LocalTensor<float> acc = accBuf_.Get<float>();
        Duplicate(acc[td_.chunkPad], 0.0f, 64);
        Duplicate(off, 0, static_cast<int32_t>(td_.op));                  // row offsets r w (bytes)
        for (uint32_t m = 1; m < td_.chunkRows; m *= 2) {
            const uint32_t copyRows = td_.chunkRows - m < m ? td_.chunkRows - m : m;
            Adds(off[m * td_.op], off, static_cast<int32_t>(m * td_.w * sizeof(float)), static_cast<int32_t>(copyRows * td_.op));
        }
        for (uint32_t t = td_.kwMax; t-- > 0;) {
            SyncPipes<HardEvent::V_S>();
            for (uint32_t k = 0; k < td_.op; ++k) {
                const uint32_t w0 = k < td_.ow ? WindowStart(k, td_.w, td_.ow) : 0;
                const uint32_t w1 = k < td_.ow ? WindowEnd(k, td_.w, td_.ow) : 0;
                column.SetValue(k, w0 + t < w1 ? static_cast<int32_t>((w0 + t) * sizeof(float)) : PAST);
                if (t == 0) {
                    scale.SetValue(k, k < td_.ow ? 1.0f / static_cast<float>(w1 - w0) : 0.0f);
                }
            }
            SyncPipes<HardEvent::S_V>();
            for (uint32_t m = 1; m < td_.chunkRows; m *= 2) {
                const uint32_t copyRows = td_.chunkRows - m < m ? td_.chunkRows - m : m;
                Adds(column[m * td_.op], column, 0, static_cast<int32_t>(copyRows * td_.op));
            }
            Add(off[t * pooled], off, column, static_cast<int32_t>(pooled));
            Mins(off[t * pooled], off[t * pooled], zeroAt, static_cast<int32_t>(pooled));
        }
        for (uint32_t m = 1; m < td_.blockRows; m *= 2) {
            const uint32_t copyRows = td_.blockRows - m < m ? td_.blockRows - m : m;
            Adds(scale[m * td_.op], scale, 0.0f, static_cast<int32_t>(copyRows * td_.op));
        }
    }

    // acc[r, :] = sum over the depth window of x[plane, dd, r0 + r, :] for n rows, in fp32.
    __aicore__ inline void SumDepths(uint64_t plane, uint32_t i, uint32_t r0, uint32_t n)
    {
        const uint32_t d0 = WindowStart(i, td_.d, td_.od);
        const uint32_t d1 = WindowEnd(i, td_.d, td_.od);
        // the chunk's rows are contiguous in GM: one burst, dense in UB
        const DataCopyExtParams copy(1, n * td_.w * sizeof(T), 0, 0, 0);
        const DataCopyPadExtParams<T> pad(false, 0, 0, static_cast<T>(0.0f));
        LocalTensor<float> acc = accBuf_.Get<float>();
        const int32_t len = static_cast<int32_t>(n * td_.w);
        for (uint32_t dd = d0; dd < d1; ++dd) {
            LocalTensor<T> in = inQue_.AllocTensor<T>();
            DataCopyPad(in, xGm_[((plane * td_.d + dd) * td_.h + r0) * td_.w], copy, pad);
            inQue_.EnQue(in);
            in = inQue_.DeQue<T>();
            AddDepth(acc, in, wideBuf_, dd == d0, len);
            inQue_.FreeTensor(in);
        }
    }

    // wsum[r, k] = sum of k's width taps of acc row r, for the chunk's n rows.
    __aicore__ inline void PoolWidths(uint32_t n)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<uint32_t> off = tapOffBuf_.Get<uint32_t>();
        LocalTensor<float> wsum = wsumBuf_.Get<float>();
        LocalTensor<float> tap = tapBuf_.Get<float>();
        const uint32_t pooled = td_.chunkRows * td_.op;
        const uint32_t len = n * td_.op;
        Gather(wsum, acc, off, 0, len);
        for (uint32_t t = 1; t < td_.kwMax; ++t) {
            Gather(tap, acc, off[t * pooled], 0, len);
            Add(wsum, wsum, tap, static_cast<int32_t>(len));
        }
    }

    // mean[j, :] += wsum[r - r0, :] / (depth count * height count of j) for the chunk rows r in j's
    // height window. With H / oh = p / q in lowest terms, row j + q's window is row j's moved by p
    // rows, so the rows j of one residue mod q form a run: tap t of a run is one strided Axpy over
    // its rows (a row per repeat, 64 lanes per call), or a call per row when the strides exceed 255
    // blocks.
    __aicore__ inline void PoolHeights(const LocalTensor<float>& mean, uint32_t i, uint32_t j0, uint32_t rows,
                                       uint32_t r0, uint32_t n)
    {
        LocalTensor<float> wsum = wsumBuf_.Get<float>();
        const uint32_t depthCount = WindowEnd(i, td_.d, td_.od) - WindowStart(i, td_.d, td_.od);
        const uint32_t rowBlocks = td_.op / 8;                 // 32-byte blocks per fp32 row
        const uint32_t p = td_.hStep, q = td_.hPeriod;
        const bool strided = q * rowBlocks <= 255 && p * rowBlocks <= 255;
        for (uint32_t residue = 0; residue < q && residue < rows; ++residue) {
            const uint32_t j = j0 + residue;
            const uint32_t a0 = WindowStart(j, td_.h, td_.oh);
            const uint32_t size = WindowEnd(j, td_.h, td_.oh) - a0;
            const uint32_t runRows = (rows - residue + q - 1) / q;
            const float scale = 1.0f / static_cast<float>(depthCount * size);
            for (uint32_t t = 0; t < size; ++t) {
                // the run's rows m whose tap t (input row a0 + m p + t) lies in this chunk: [first, last)
                uint32_t first = 0;
                while (first < runRows && a0 + first * p + t < r0) {
                    ++first;
                }
                uint32_t last = first;
                while (last < runRows && a0 + last * p + t < r0 + n) {
                    ++last;
                }
                if (last - first > 1 && strided) {
                    const UnaryRepeatParams strides(1, 1, static_cast<uint8_t>(q * rowBlocks),
                                                    static_cast<uint8_t>(p * rowBlocks));
                    for (uint32_t lane = 0; lane < td_.op; lane += 64) {
                        const uint64_t lanes = td_.op - lane < 64 ? td_.op - lane : 64;
                        Axpy(mean[(residue + first * q) * td_.op + lane], wsum[(a0 + first * p + t - r0) * td_.op + lane],
                             scale, lanes, static_cast<uint8_t>(last - first), strides);
                    }
                    continue;
                }
                for (uint32_t m = first; m < last; ++m) {
                    Axpy(mean[(residue + m * q) * td_.op], wsum[(a0 + m * p + t - r0) * td_.op], scale,
                         static_cast<int32_t>(td_.op));
                }
            }
        }
    }

    __aicore__ inline void CopyOut(const LocalTensor<float>& mean, uint64_t plane, uint32_t i, uint32_t j0, uint32_t rows)
    {
        LocalTensor<T> out = outQue_.AllocTensor<T>();
        const int32_t len = static_cast<int32_t>(rows * td_.op);
        FromFloat(out, mean, len);
        outQue_.EnQue(out);
        out = outQue_.DeQue<T>();
        // rows at the UB pitch op go out as one burst when op == ow, else a burst per row
        constexpr uint32_t epb = 32 / sizeof(T);
        const uint32_t gap = (td_.op - (td_.ow + epb - 1) / epb * epb) / epb;   // 32-byte blocks
        const DataCopyExtParams copy = td_.op == td_.ow ? DataCopyExtParams(1, rows * td_.ow * sizeof(T), 0, 0, 0)
                                                        : DataCopyExtParams(static_cast<uint16_t>(rows), td_.ow * sizeof(T), gap, 0, 0);
        DataCopyPad(yGm_[((plane * td_.od + i) * td_.oh + j0) * td_.ow], out, copy);
        outQue_.FreeTensor(out);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> inQue_;
    TQue<QuePosition::VECOUT, 1> outQue_;
    TBuf<QuePosition::VECCALC> wideBuf_, accBuf_, tapOffBuf_, wsumBuf_, tapBuf_, meanBuf_, widthScaleBuf_;
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

_TILING = r"""@TILING_HEAD@    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape& ys = context->GetOutputShape(0)->GetStorageShape();
    if (xs.GetDimNum() != 5 || ys.GetDimNum() != 5 || ys.GetDim(0) != xs.GetDim(0) || ys.GetDim(1) != xs.GetDim(1)) {
        return ge::GRAPH_FAILED;   // x [n, c, d, h, w], y [n, c, od, oh, ow]
    }
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    if (dt != ge::DT_FLOAT16 && dt != ge::DT_BF16 && dt != ge::DT_FLOAT) {
        return ge::GRAPH_FAILED;   // the kernel averages fp16 / bf16 / fp32
    }
    for (size_t a = 0; a < 5; ++a) {
        if (xs.GetDim(a) <= 0 || ys.GetDim(a) <= 0 || xs.GetDim(a) > 65535 || ys.GetDim(a) > 65535) {
            return ge::GRAPH_FAILED;   // empty or oversized axes
        }
    }
    td->planes = static_cast<uint64_t>(xs.GetDim(0)) * static_cast<uint64_t>(xs.GetDim(1));
    td->d = static_cast<uint32_t>(xs.GetDim(2));
    td->h = static_cast<uint32_t>(xs.GetDim(3));
    td->w = static_cast<uint32_t>(xs.GetDim(4));
    td->od = static_cast<uint32_t>(ys.GetDim(2));
    td->oh = static_cast<uint32_t>(ys.GetDim(3));
    td->ow = static_cast<uint32_t>(ys.GetDim(4));
    const uint64_t es = DtypeBytes(dt);
    const uint64_t epb = 32 / es;
    td->op = static_cast<uint32_t>((td->ow + epb - 1) / epb * epb);   // fp32 and y rows 32-byte aligned
    td->op = (td->op + 7) / 8 * 8;
    for (uint32_t k = 0; k < td->ow; ++k) {
        const uint32_t kw = static_cast<uint32_t>((static_cast<uint64_t>(k + 1) * td->w + td->ow - 1) / td->ow -
                                                  static_cast<uint64_t>(k) * td->w / td->ow);
        td->kwMax = kw > td->kwMax ? kw : td->kwMax;
    }

    uint32_t g = td->h, r = td->oh;
    while (r != 0) {
        const uint32_t m = g % r;
        g = r;
        r = m;
    }
    td->hStep = td->h / g;
    td->hPeriod = td->oh / g;

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    // UB per input row of a chunk: two DMA slots, the fp32 copy of fp16 / bf16, the depth sum, the
    // width taps' offsets, the width sums and a tap; per output row of a block: its mean, its width
    // scales and its output row
    const uint64_t inRow = static_cast<uint64_t>(td->w) * (2 * es + (es == 4 ? 0 : 4) + 4) +
                           static_cast<uint64_t>(td->op) * 4 * (td->kwMax + 2);
    const uint64_t outRow = static_cast<uint64_t>(td->op) * (8 + es);
    const uint64_t fixed = @RESERVE@ + 1024 + 128 * (2 * es + 8);   // + a chunk's rounding and its 0s
    if (ubSize <= fixed + inRow + outRow) {
        return ge::GRAPH_FAILED;   // not even one input row and one output row fit UB
    }
    const uint64_t room = ubSize - fixed;
    // The widest input span of blocks of b output rows.
    auto span = [&](uint64_t b) {
        uint64_t widest = 0;
        for (uint64_t j0 = 0; j0 < td->oh; j0 += b) {
            const uint64_t j1 = j0 + b < td->oh ? j0 + b : td->oh;
            const uint64_t rows = (j1 * td->h + td->oh - 1) / td->oh - j0 * td->h / td->oh;
            widest = rows > widest ? rows : widest;
        }
        return widest;
    };
    // Output rows per unit: all of them unless the cores need more units; then fewer until a block's
    // input span fits UB in one chunk (each input row read once); at most 255 (one DMA's row count).
    uint64_t blocks = (coreNum + td->planes * td->od - 1) / (td->planes * td->od);
    blocks = blocks > td->oh ? td->oh : blocks;
    uint64_t blockRows = (td->oh + blocks - 1) / blocks;
    blockRows = blockRows > 255 ? 255 : blockRows;
    while (blockRows > 1 && span(blockRows) * inRow + blockRows * outRow > room) {
        --blockRows;
    }
    td->blockRows = static_cast<uint32_t>(blockRows);
    td->hBlocks = static_cast<uint32_t>((td->oh + blockRows - 1) / blockRows);
    // Input rows per chunk: the widest block's span when it fits, else what fits (one output row's
    // window is then summed over several chunks).
    uint64_t chunk = (room - blockRows * outRow) / inRow;
    const uint64_t widest = span(blockRows);
    chunk = chunk > widest ? widest : chunk;
    td->chunkRows = static_cast<uint32_t>(chunk);
    td->chunkPad = static_cast<uint32_t>((chunk * td->w + 63) / 64 * 64);
    td->units = td->planes * td->od * td->hBlocks;
    td->work = td->planes * td->d * td->h * td->w;
@SPLIT@    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
