"""Adaptive average pooling over the last three axes of an NCDHW tensor:

    y[n, c, i, j, k] = mean of x[n, c, d0(i):d1(i), h0(j):h1(j), w0(k):w1(k)]
    with a0(i) = floor(i * In / Out), a1(i) = ceil((i + 1) * In / Out) along each axis

The aten ops the golden runs on a meta tensor of each case's x are one `_adaptive_avg_pool3d` of it,
or (output size 1, 1, 1, which torch runs so) one mean over the last three axes, kept; small fp64 probes then confirm the
windows above for each form (a golden that pools otherwise, or scales the mean, is not this
pattern). The output sizes come from y's shape in the tiling function, so any output_size the
golden accepts is served; a case of another graph (a 4-D, unbatched x) is refused.

The kernel (units of (plane n*C + c, output depth i, block of output rows) in contiguous runs per
AIV): a chunk of input rows is contiguous in GM and comes in as one burst (several depth slices
per DMA when it is a whole slice), loads issued one ahead; depths are added in fp32 (fp16 / bf16
widened first, as torch accumulates), width windows are one Gather per tap by byte-offset tables
built once on the vector unit, height windows strided Axpy runs (rows of one residue modulo the
height period share a stride) or a Gather per tap when the whole slice is one chunk, global pooling
one ReduceSum. Output depths that share a depth window are computed once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported

_PASSIVE = {"alias", "clone", "contiguous", "detach", "view", "_unsafe_view", "reshape", "empty", "empty_like"}


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


def _aten_ops(task, case) -> list | None:
    """The aten ops (op packet name, args) the golden runs on a meta tensor of the case's x, views
    and copies left out; None when it fails there. A meta run costs a millisecond or two where an
    FX trace of the same golden costs ~50 ms."""
    import torch

    from copilot.dynamo_free import OpLog
    from copilot.lowering.capture import _torch_dtype, call_golden

    x = torch.empty(case.shapes[0], dtype=_torch_dtype(case.dtypes[0]), device="meta")
    log = OpLog()
    try:
        with torch.no_grad(), log:
            call_golden(task, [x], dict(case.attrs))
    except Exception:         # the golden refuses meta tensors or these shapes: not confirmed
        return None
    return [(name, args, kwargs) for name, args, kwargs in log.ops if name not in _PASSIVE], x


def _pool_form(task, case) -> str | None:
    """How the case's golden pools its only input: "window" (`_adaptive_avg_pool3d` of x), "global"
    (output size 1, 1, 1: torch runs it as a mean over the last three axes, kept), or None when it
    runs anything else."""
    got = _aten_ops(task, case)
    if got is None:
        return None
    ops, x = got
    if len(ops) != 1 or not ops[0][1] or ops[0][1][0] is not x:
        return None
    name, args, kwargs = ops[0]
    if name == "_adaptive_avg_pool3d":
        return "window"
    if name == "mean" and len(args) >= 3 and args[2] is True and kwargs.get("dtype") is None:
        if sorted(int(a) % 5 for a in args[1]) == [2, 3, 4]:
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
    first = _pool_form(task, cases[0])
    if first is None or not _probe(task, cases[0]):
        return None
    probed = {first}
    for c in cases[1:]:
        form = _pool_form(task, c) if c.shapes[0] is not None and len(c.shapes[0]) == 5 else None
        if form is None:
            raise Unsupported(f"{task.name}: case {c.id} is not a 3-D adaptive average pool of a 5-D x "
                              "(the golden runs other aten ops on it)")
        if form not in probed:        # the other form: confirm its numbers too
            if not _probe(task, c):
                raise Unsupported(f"{task.name}: case {c.id} runs as a {form} pool but the golden's "
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
// A unit is (plane, output depth i, block of output rows j); output depths with the same depth window
// (upsampling) are one unit written to each. Its input rows are streamed in chunks (contiguous in GM:
// one burst; several depth slices per DMA when a chunk is a whole slice); per chunk, in fp32:
//   depth:  acc[r, :] = sum over d0(i) <= dd < d1(i) of x[plane, dd, r, :]
//   width:  wsum[r, k] = sum over taps t of acc[r, w0(k) + t]   (one Gather per tap over the chunk; a
//           tap past a short window reads a 0 after the sums)
//   height: mean[j, :] += wsum[r, :] / (depth count * height count of j) for r in j's height window
//           (strided Axpy runs, or one Gather per tap over all rows when a chunk is a whole slice)
//   global pooling (oh = ow = 1): one ReduceSum of the chunk instead of width and height
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
    uint32_t op;                        // output row pitch in UB (elements; fp32 and y rows 32-byte aligned)
    uint32_t kwMax;                     // the widest width window (taps per output column)
    uint32_t hStep, hPeriod;            // h / oh = hStep / hPeriod in lowest terms
    uint32_t khMax;                     // the tallest height window
    uint32_t heightGather;              // 1: height windows by Gather tables (one chunk = every row of a slice)
    uint32_t blockRows;                 // output rows per unit
    uint32_t hBlocks;                   // units per output depth
    uint32_t chunkRows;                 // input rows per DMA
    uint32_t depthSlices;               // depth slices per DMA (> 1 only when a chunk is a whole slice)
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

// acc (+)= the sum of `slices` depth slices of len elements at pitch `pitch` in `in`, in fp32 (fp16 /
// bf16 widened exactly, all slices by one Cast into `wide`); `first`: acc starts here.
template <typename S>
__aicore__ inline void AddDepths(const LocalTensor<float>& acc, const LocalTensor<S>& in, TBuf<QuePosition::VECCALC>& wide,
                                 bool first, uint32_t slices, uint32_t pitch, int32_t len)
{
    LocalTensor<float> src;
    if constexpr (std::is_same<S, float>::value) {
        src = in;
    } else {
        if (first && slices == 1) {
            Cast(acc, in, RoundMode::CAST_NONE, len);
            return;
        }
        src = wide.Get<float>();
        Cast(src, in, RoundMode::CAST_NONE, static_cast<int32_t>((slices - 1) * pitch) + len);
    }
    uint32_t s = 0;
    if (first) {
        if (slices == 1) {
            Adds(acc, src, 0.0f, len);
            return;
        }
        Add(acc, src, src[pitch], len);
        s = 2;
    }
    for (; s < slices; ++s) {
        Add(acc, acc, src[s * pitch], len);
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
        pipe_.InitBuffer(inQue_, 2, td_.depthSlices * chunk * sizeof(T));
        if (sizeof(T) != sizeof(float)) {
            pipe_.InitBuffer(wideBuf_, td_.depthSlices * chunk * sizeof(float));   // fp16 / bf16 widened to fp32
        }
        pipe_.InitBuffer(accBuf_, (chunk + 64) * sizeof(float));   // the sums, then 0s the short windows read
        pipe_.InitBuffer(tapOffBuf_, td_.kwMax * pooled * sizeof(int32_t));
        const uint32_t outRows = td_.blockRows * td_.op;
        pipe_.InitBuffer(wsumBuf_, pooled * sizeof(float) + td_.op * sizeof(float));   // + a 0 row the short windows read
        const uint32_t reduceTmp = td_.chunkPad / 64 + 8;         // ReduceSum's scratch for a whole chunk
        uint32_t tapLen = pooled > outRows ? pooled : outRows;
        tapLen = tapLen > reduceTmp ? tapLen : reduceTmp;
        pipe_.InitBuffer(tapBuf_, tapLen * sizeof(float));
        if (td_.heightGather) {
            pipe_.InitBuffer(rowOffBuf_, td_.khMax * outRows * sizeof(int32_t));
        }
        pipe_.InitBuffer(meanBuf_, td_.blockRows * td_.op * sizeof(float));
        pipe_.InitBuffer(widthScaleBuf_, td_.blockRows * td_.op * sizeof(float));
        pipe_.InitBuffer(outQue_, 2, td_.blockRows * td_.op * sizeof(T));   // a unit's rows go out while the next sums
        BuildWidthTables();
        if (td_.heightGather) {
            BuildHeightTables();
        }
    }

    // The unit's loads (chunk of input rows x group of depth slices) are issued one ahead of the
    // one being summed, across units too, so every DMA's latency hides behind the previous sums.
    __aicore__ inline void Process()
    {
        if (unitCount_ == 0) {
            return;
        }
        Load cur = FirstLoad(unitStart_);
        Issue(cur);
        LocalTensor<float> mean = meanBuf_.Get<float>();
        while (true) {
            Load next = cur;
            const bool more = Advance(next);
            if (more) {
                Issue(next);
            }
            if (!td_.heightGather && cur.r0 == cur.h0 && cur.dd == cur.d0) {
                Duplicate(mean, 0.0f, cur.rows * td_.op);
            }
            SumDepths(cur);
            if (cur.dd + cur.slices == cur.d1) {                // the chunk's depth window is summed
                if (td_.oh == 1 && td_.ow == 1) {
                    SumSlice(mean, cur);
                } else if (td_.heightGather) {
                    PoolWidths(cur.n);
                    GatherHeights(mean, cur);
                } else {
                    PoolWidths(cur.n);
                    PoolHeights(mean, cur);
                }
                if (cur.r0 + cur.n == cur.h1) {                 // the unit's last chunk
                    Mul(mean, mean, widthScaleBuf_.Get<float>(), static_cast<int32_t>(cur.rows * td_.op));
                    CopyOut(mean, cur);
                }
            }
            if (!more) {
                break;
            }
            cur = next;
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

    // One DMA: `slices` depth slices from dd of chunk rows [r0, r0 + n) of unit u (plane, output depth
    // i, output rows [j0, j0 + rows) reading input rows [h0, h1) and depths [d0, d1)).
    // `copies`: output depths from i with the same depth window (upsampled depth), computed once.
    struct Load {
        uint64_t u, plane;
        uint32_t i, j0, rows, h0, h1, d0, d1, r0, n, dd, slices, copies;
    };

    __aicore__ inline Load FirstLoad(uint64_t u)
    {
        Load l;
        const uint64_t perPlane = static_cast<uint64_t>(td_.od) * td_.hBlocks;
        l.u = u;
        l.plane = u / perPlane;
        l.i = static_cast<uint32_t>(u % perPlane) / td_.hBlocks;
        l.j0 = static_cast<uint32_t>(u % perPlane) % td_.hBlocks * td_.blockRows;
        l.rows = td_.oh - l.j0 < td_.blockRows ? td_.oh - l.j0 : td_.blockRows;
        l.h0 = WindowStart(l.j0, td_.h, td_.oh);
        l.h1 = WindowEnd(l.j0 + l.rows - 1, td_.h, td_.oh);
        l.d0 = WindowStart(l.i, td_.d, td_.od);
        l.d1 = WindowEnd(l.i, td_.d, td_.od);
        l.r0 = l.h0;
        l.n = l.h1 - l.h0 < td_.chunkRows ? l.h1 - l.h0 : td_.chunkRows;
        l.dd = l.d0;
        l.slices = l.d1 - l.d0 < td_.depthSlices ? l.d1 - l.d0 : td_.depthSlices;
        l.copies = 1;
        while (td_.hBlocks == 1 && u + l.copies < unitStart_ + unitCount_ && l.i + l.copies < td_.od &&
               WindowStart(l.i + l.copies, td_.d, td_.od) == l.d0 && WindowEnd(l.i + l.copies, td_.d, td_.od) == l.d1) {
            ++l.copies;
        }
        return l;
    }

    // The load after l: the next depth slices, else the next chunk, else the next unit of this core.
    __aicore__ inline bool Advance(Load& l)
    {
        if (l.dd + l.slices < l.d1) {
            l.dd += l.slices;
        } else if (l.r0 + l.n < l.h1) {
            l.r0 += l.n;
            l.n = l.h1 - l.r0 < td_.chunkRows ? l.h1 - l.r0 : td_.chunkRows;
            l.dd = l.d0;
        } else if (l.u + l.copies < unitStart_ + unitCount_) {
            l = FirstLoad(l.u + l.copies);
            return true;
        } else {
            return false;
        }
        l.slices = l.d1 - l.dd < td_.depthSlices ? l.d1 - l.dd : td_.depthSlices;
        return true;
    }

    // The load's rows are contiguous in GM (several slices only when a chunk is every row of a
    // slice): one burst per slice, each slice at the UB pitch chunkPad.
    __aicore__ inline void Issue(const Load& l)
    {
        constexpr uint32_t epb = 32 / sizeof(T);
        const uint32_t len = l.n * td_.w;
        const DataCopyExtParams copy(static_cast<uint16_t>(l.slices), len * sizeof(T), 0,
                                     (td_.chunkPad - (len + epb - 1) / epb * epb) / epb, 0);
        const DataCopyPadExtParams<T> pad(false, 0, 0, static_cast<T>(0.0f));
        LocalTensor<T> in = inQue_.AllocTensor<T>();
        DataCopyPad(in, xGm_[((l.plane * td_.d + l.dd) * td_.h + l.r0) * td_.w], copy, pad);
        inQue_.EnQue(in);
    }

    // acc[r, :] (+)= the load's depth slices of chunk row r, in fp32 (acc starts at the first load).
    __aicore__ inline void SumDepths(const Load& l)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<T> in = inQue_.DeQue<T>();
        AddDepths(acc, in, wideBuf_, l.dd == l.d0, l.slices, td_.chunkPad, static_cast<int32_t>(l.n * td_.w));
        inQue_.FreeTensor(in);
    }

    // Global pooling (oh = ow = 1): mean[0] += the sum of the chunk's rows / (depth count * h), one
    // ReduceSum (the width count is applied with widthScale at the end of the unit).
    __aicore__ inline void SumSlice(const LocalTensor<float>& mean, const Load& l)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<float> sum = wsumBuf_.Get<float>();
        ReduceSum(sum, acc, tapBuf_.Get<float>(), static_cast<int32_t>(l.n * td_.w));
        Axpy(mean, sum, 1.0f / static_cast<float>((l.d1 - l.d0) * td_.h), 1);
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

    // Every unit reads every row of a slice in one chunk: tap t of output row j is width-sum row
    // h0(j) + t, or the 0 row after the width sums past j's window (byte offsets, one Adds of the
    // column offsets per row and tap); widthScale[j, :] gets 1 / (height count of j) too.
    __aicore__ inline void BuildHeightTables()
    {
        LocalTensor<int32_t> off = rowOffBuf_.Get<int32_t>();
        LocalTensor<int32_t> column = tapBuf_.Get<int32_t>();
        LocalTensor<float> scale = widthScaleBuf_.Get<float>();
        LocalTensor<float> wsum = wsumBuf_.Get<float>();
        const uint32_t outRows = td_.blockRows * td_.op;
        Duplicate(wsum[td_.chunkRows * td_.op], 0.0f, static_cast<int32_t>(td_.op));
        SyncPipes<HardEvent::V_S>();
        for (uint32_t k = 0; k < td_.op; ++k) {
            column.SetValue(k, static_cast<int32_t>(k * sizeof(float)));
        }
        SyncPipes<HardEvent::S_V>();
        for (uint32_t j = 0; j < td_.oh; ++j) {
            const uint32_t a0 = WindowStart(j, td_.h, td_.oh), a1 = WindowEnd(j, td_.h, td_.oh);
            for (uint32_t t = 0; t < td_.khMax; ++t) {
                const uint32_t row = a0 + t < a1 ? a0 + t : td_.chunkRows;
                Adds(off[t * outRows + j * td_.op], column, static_cast<int32_t>(row * td_.op * sizeof(float)),
                     static_cast<int32_t>(td_.op));
            }
            Muls(scale[j * td_.op], scale[j * td_.op], 1.0f / static_cast<float>(a1 - a0), static_cast<int32_t>(td_.op));
        }
    }

    // mean[j, :] = sum over j's height taps of width-sum rows / depth count: a Gather per tap over all rows.
    __aicore__ inline void GatherHeights(const LocalTensor<float>& mean, const Load& l)
    {
        LocalTensor<float> wsum = wsumBuf_.Get<float>();
        LocalTensor<uint32_t> off = rowOffBuf_.Get<uint32_t>();
        LocalTensor<float> tap = tapBuf_.Get<float>();
        const uint32_t outRows = td_.blockRows * td_.op;
        const int32_t len = static_cast<int32_t>(td_.oh * td_.op);
        Gather(mean, wsum, off, 0, static_cast<uint32_t>(len));
        for (uint32_t t = 1; t < td_.khMax; ++t) {
            Gather(tap, wsum, off[t * outRows], 0, static_cast<uint32_t>(len));
            Add(mean, mean, tap, len);
        }
        Muls(mean, mean, 1.0f / static_cast<float>(l.d1 - l.d0), len);
    }

    // mean[j, :] += wsum[r - r0, :] / (depth count * height count of j) for the chunk rows r in j's
    // height window. With H / oh = p / q in lowest terms, row j + q's window is row j's moved by p
    // rows, so the rows j of one residue mod q form a run: tap t of a run is one strided Axpy over
    // its rows (a row per repeat, 64 lanes per call), or a call per row when the strides exceed 255
    // blocks.
    __aicore__ inline void PoolHeights(const LocalTensor<float>& mean, const Load& l)
    {
        const uint32_t j0 = l.j0, rows = l.rows, r0 = l.r0, n = l.n;
        LocalTensor<float> wsum = wsumBuf_.Get<float>();
        const uint32_t depthCount = l.d1 - l.d0;
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

    __aicore__ inline void CopyOut(const LocalTensor<float>& mean, const Load& l)
    {
        const uint32_t rows = l.rows;
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
        for (uint32_t c = 0; c < l.copies; ++c) {
            DataCopyPad(yGm_[((l.plane * td_.od + l.i + c) * td_.oh + l.j0) * td_.ow], out, copy);
        }
        outQue_.FreeTensor(out);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> inQue_;
    TQue<QuePosition::VECOUT, 2> outQue_;
    TBuf<QuePosition::VECCALC> wideBuf_, accBuf_, tapOffBuf_, wsumBuf_, tapBuf_, meanBuf_, widthScaleBuf_, rowOffBuf_;
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
    // scales, a tap (upsampled rows) and its two output slots
    const uint64_t inRow = static_cast<uint64_t>(td->w) * (2 * es + (es == 4 ? 0 : 4) + 4) +
                           static_cast<uint64_t>(td->op) * 4 * (td->kwMax + 2);
    const uint64_t outRow = static_cast<uint64_t>(td->op) * (12 + 2 * es);
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
    // Depth slices per DMA: when a chunk is every row of a slice (a unit per output depth), a depth
    // window's slices are contiguous in GM: as many per DMA as the room left holds (at most the
    // widest window), fewer DMAs and one Cast for them all.
    td->depthSlices = 1;
    if (td->hBlocks == 1 && chunk == td->h) {
        uint64_t kdMax = 0;
        for (uint64_t i = 0; i < td->od; ++i) {
            const uint64_t kd = ((i + 1) * td->d + td->od - 1) / td->od - i * td->d / td->od;
            kdMax = kd > kdMax ? kd : kdMax;
        }
        const uint64_t used = blockRows * outRow + chunk * inRow;
        const uint64_t perSlice = static_cast<uint64_t>(td->chunkPad) * (2 * es + (es == 4 ? 0 : 4));
        const uint64_t slices = 1 + (room > used ? (room - used) / perSlice : 0);
        td->depthSlices = static_cast<uint32_t>(slices < kdMax ? slices : kdMax);
    }
    // Height windows: a Gather per tap over all output rows (2 khMax vector calls a unit) when a chunk
    // is every row of a slice and the tables fit, if that is fewer calls than the Axpy runs.
    for (uint32_t j = 0; j < td->oh; ++j) {
        const uint32_t kh = static_cast<uint32_t>((static_cast<uint64_t>(j + 1) * td->h + td->oh - 1) / td->oh -
                                                  static_cast<uint64_t>(j) * td->h / td->oh);
        td->khMax = kh > td->khMax ? kh : td->khMax;
    }
    if (td->hBlocks == 1 && chunk == td->h) {
        const uint64_t rowBlocks = td->op / 8;
        const bool strided = td->hPeriod * rowBlocks <= 255 && td->hStep * rowBlocks <= 255;
        uint64_t axpyCalls = 0;
        for (uint32_t res = 0; res < td->hPeriod && res < td->oh; ++res) {
            const uint64_t a0 = static_cast<uint64_t>(res) * td->h / td->oh;
            const uint64_t size = (static_cast<uint64_t>(res + 1) * td->h + td->oh - 1) / td->oh - a0;
            const uint64_t runRows = (td->oh - res + td->hPeriod - 1) / td->hPeriod;
            axpyCalls += size * (strided && runRows > 1 ? (td->op + 63) / 64 : runRows);
        }
        const uint64_t used = blockRows * outRow + chunk * inRow +
                              static_cast<uint64_t>(td->chunkPad) * (2 * es + (es == 4 ? 0 : 4)) * (td->depthSlices - 1);
        const uint64_t tables = static_cast<uint64_t>(td->khMax) * td->oh * td->op * 4 + td->oh * td->op * 4;
        if (2 * td->khMax + 1 < axpyCalls && used + tables <= room) {
            td->heightGather = 1;
        }
    }
    td->units = td->planes * td->od * td->hBlocks;
    td->work = td->planes * td->d * td->h * td->w;
@SPLIT@    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
