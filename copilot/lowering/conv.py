"""2-D convolutions (`aten.convolution`, not transposed: stride, padding, dilation, groups, an
optional bias) lower to a kernel of their own (docs/lowering.md "The conv pattern"):

- **depthwise** (every case has one input and one output channel per group): a vector kernel. Each
  AIV takes (image, channel, chunk of output pixels); the band of input rows the chunk reads goes to
  UB once with zero margins (the padding), every tap is one `Gather` of the chunk's pixels through an
  offset table (the tap is a constant shift of it: stride and dilation live in the table), and one
  multiply-add by the tap's weight into an fp32 sum that starts at the bias, carried as two floats
  (TwoSum; fp32 products split exactly): one fp32 multiply-add per tap left the public fp32 cases 2
  and 8 with 8x the reference's errors in the cancellation region;
- **otherwise**: img2col + matmul on the cube (a MIX kernel on the Matmul API). Each AIV takes
  (image, group, chunk of PC output pixels), builds the chunk's columns col[(ci, kh, kw), p] in its
  workspace slot with the same band + Gather (in the input dtype), asks its AIC for
  C = W_g (Cout_g x K) . col (K x PC) in fp32, adds the bias per output channel and writes the rows.

Parameters come from the traced convolution of every case and are tied to the attrs that carry them
(a list attr's element, an int attr, or a constant when no attr varies with it); groups are derived
from the shapes (C_in / the weight's C_in per group), the weight of rank 3 is [C, kh, kw] (unsqueezed
at dim 1 by the golden). The cube path's im2col is explicit (in GM), not the 3-D LoadData of the cube.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_VIEWS = {"view", "_unsafe_view", "reshape", "clone", "contiguous", "alias", "detach", "unsqueeze"}
PARAMS = ("sh", "sw", "ph", "pw", "dh", "dw")
BAND_BYTES = 64 * 1024


@dataclass
class ConvPlan:
    task: object
    x: int
    w: int
    bias: int | None
    rules: dict                        # param -> ("const", v) | ("list", attr index, element) | ("int", attr index)
    vector: bool                       # depthwise on the vector unit
    pattern: str = "conv"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _source(n, ph_index):
    while n is not None and n.op == "call_function" and _name(n) in _VIEWS:
        n = n.args[0]
    return ph_index.get(n) if n is not None else None


def single_op(task, case, aten: str, what: tuple[str, str], views=_VIEWS):
    """(the node, {placeholder: input index}) of the one `aten` call in the case's traced golden,
    None when it has none; Unsupported when it has several or any op but `views` around it.
    `what`: the op's name in the messages, singular and plural ("convolution", "convolutions")."""
    from copilot.lowering.cube import trace_case

    gm, present = trace_case(task, case)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    found = [n for n in calls if _name(n) == aten]
    if not found:
        return None
    if len(found) != 1:
        raise Unsupported(f"{task.name}: {len(found)} {what[1]} in one golden")
    node = found[0]
    other = [_name(n) for n in calls if n is not node and _name(n) not in views]
    if other:
        raise Unsupported(f"{task.name}: a {what[0]} with other ops around it ({other[0]}) is not lowered")
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return node, {p: present[i] for i, p in enumerate(phs)}


def _conv_of(task, case):
    found = single_op(task, case, "convolution", ("convolution", "convolutions"))
    if found is None:
        return None
    conv, ph_index = found
    x, w, b, stride, padding, dilation, transposed, _, groups = conv.args
    if transposed:
        raise Unsupported(f"{task.name}: transposed convolution is not lowered")
    if len(stride) != 2:
        raise Unsupported(f"{task.name}: a {len(stride)}-D convolution (only 2-D is lowered)")
    xi, wi = _source(x, ph_index), _source(w, ph_index)
    bi = None if b is None else _source(b, ph_index)
    if xi is None or wi is None or (b is not None and bi is None):
        raise Unsupported(f"{task.name}: the convolution's operands are not inputs through views")
    vals = dict(zip(PARAMS, (stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1])))
    return xi, wi, bi, vals, int(groups)


_KEYWORDS = {"sh": "stride", "sw": "stride", "ph": "pad", "pw": "pad", "dh": "dilat", "dw": "dilat"}


def _rule(task, cases, param: str, values: list[int], keywords: dict | None = None):
    """The attr (a list attr's element) that holds this parameter in every case; a parameter that
    never varies is tied to an attr only when the attr's name says what it holds (`keywords`: param
    -> a word of that name), else a constant."""
    varies = len(set(values)) > 1
    word = (keywords or _KEYWORDS)[param]
    named = [i for i, a in enumerate(task.attrs) if word in a.name.lower()]
    others = [i for i in range(len(task.attrs)) if i not in named] if varies else []
    for i in named + others:            # the attrs named for the parameter first
        a = task.attrs[i]
        if not a.type.startswith("list"):
            continue
        got = [c.attrs.get(a.name) for c in cases]
        if any(not isinstance(g, (list, tuple)) for g in got):
            continue
        n = min(len(g) for g in got)
        # a height parameter takes the first matching element, a width one the last ([h, w] lists;
        # [top, bottom, left, right] pads)
        for e in (range(n) if param.endswith("h") else reversed(range(n))):
            if all(int(g[e]) == v for g, v in zip(got, values)):
                return ("list", i, e)
    if not varies:
        return ("const", values[0])
    raise Unsupported(f"{task.name}: a convolution parameter ({param}: {values[:4]}...) that no attr holds")


def plan_conv(task):
    """A ConvPlan, None if the golden has no convolution, Unsupported if we do not serve it."""
    try:
        first = _conv_of(task, task.cases[0])
    except Unsupported as exc:
        if "could not be traced" in str(exc):
            return None
        raise
    if first is None:
        return None
    per = [first] + [_conv_of(task, c) for c in task.cases[1:]]
    if any(p is None or p[:3] != first[:3] for p in per):
        raise Unsupported(f"{task.name}: cases convolve different inputs")
    rules = {k: _rule(task, task.cases, k, [p[3][k] for p in per]) for k in PARAMS}
    xi, wi, bi = first[:3]
    vector = True
    for c, p in zip(task.cases, per):
        xs, ws = c.shapes[xi], c.shapes[wi]
        if len(xs) != 4 or len(ws) not in (3, 4):
            raise Unsupported(f"{task.name}: case {c.id}: x must be NCHW and the weight 4-D or [C, kh, kw]")
        cing = 1 if len(ws) == 3 else ws[1]
        if xs[1] % cing or xs[1] // cing != p[4]:
            raise Unsupported(f"{task.name}: case {c.id}: groups {p[4]} do not follow from the shapes")
        if not (cing == 1 and ws[0] == p[4]):
            vector = False
    plan = ConvPlan(task, xi, wi, bi, rules, vector)
    plan.notes.append(f"conv: x {task.inputs[xi].name}, weight {task.inputs[wi].name}, bias "
                      f"{task.inputs[bi].name if bi is not None else 'none'}; "
                      + ("depthwise on the vector unit (band + Gather + Axpy per tap)" if vector else
                         "img2col by the AIVs + Matmul on the cube") + "; "
                      + ", ".join(f"{k} {_describe(task, r)}" for k, r in rules.items()))
    return plan


def _describe(task, r) -> str:
    if r[0] == "const":
        return str(r[1])
    if r[0] == "list":
        return f"{task.attrs[r[1]].name}[{r[2]}]"
    return task.attrs[r[1]].name


def _rule_cpp(r) -> str:
    if r[0] == "const":
        return str(int(r[1]))
    if r[0] == "list":
        return f"static_cast<int64_t>(attrs->GetListInt({r[1]})->GetData()[{r[2]}])"
    return f"*attrs->GetAttrPointer<int64_t>({r[1]})"


def render(plan: ConvPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    ins = t.inputs
    text = (_VEC_KERNEL if plan.vector else _CUBE_KERNEL).replace("@COMMON@", _COMMON) + "\n" + _TILING
    text = text.replace("@MMINCLUDE@", "" if plan.vector else '#include "lib/matmul_intf.h"\n')
    bias_t = _macro_of(ins[plan.bias].name) if plan.bias is not None else _macro_of(ins[plan.x].name)
    subs = {
        "@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
        "@XT@": _macro_of(ins[plan.x].name), "@BT@": bias_t, "@YT@": _macro_of(t.outputs[0].name),
        "@XI@": str(plan.x), "@WI@": str(plan.w), "@BI@": str(plan.bias if plan.bias is not None else -1),
        "@ARGS@": ", ".join(f"GM_ADDR {_ident(i.name)}" for i in ins),
        "@ARGLIST@": ", ".join(_ident(i.name) for i in ins), "@Y@": _ident(t.outputs[0].name),
        "@VECTOR@": "true" if plan.vector else "false",
        "@DESC@": plan.notes[0] if plan.notes else "conv",
    }
    for k in PARAMS:
        subs[f"@{k.upper()}@"] = _rule_cpp(plan.rules[k])
    for key, val in subs.items():
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_COMMON = r"""#include <cmath>
#include <type_traits>
#include "kernel_operator.h"
@MMINCLUDE@#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr uint32_t BAND_BYTES = 64 * 1024;   // the input rows a chunk reads, with zero margins
constexpr uint32_t EPI_BYTES = 12 * 1024;    // one epilogue tile of rows (cube path: 6 of them)
constexpr uint32_t K_PART = 256;             // cube path: K summed in parts of this, added compensated
constexpr int32_t X_IN = @XI@, W_IN = @WI@, B_IN = @BI@;

struct @T@ {
    AscendC::tiling::TCubeTiling mm;         // cube path: C = W_g (coutg x k) . col (k x pc)
    uint32_t n, cin, h, w, cout, cing, coutg, kh, kw, groups;
    int32_t sh, sw, ph, pw, dh, dw;
    uint32_t ho, wo, p, pc, chunks, items, perAiv, hasBias;
    uint32_t ml, rp, bandMax, k;             // band: left margin, row pitch (elements), rows; k = cing*kh*kw
    uint32_t parts;                          // cube path: K parts (C of each in the slot)
    uint64_t slot, cOff;                     // cube path: bytes per AIV slot, C's offset in it
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @XT@;
using BT = @BT@;
using YT = @YT@;

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

template <typename S>
__aicore__ inline void ZeroFill(const LocalTensor<S>& t, uint32_t n)
{
    if constexpr (sizeof(S) == 2) {
        Duplicate(t.template ReinterpretCast<half>(), static_cast<half>(0), n);
    } else {
        Duplicate(t.template ReinterpretCast<float>(), 0.0f, n);
    }
}

// Input rows ho0*sh - ph ... of plane `plane` into the band (rows out of the image and the margins
// stay 0: the padding); returns the first row's index.
__aicore__ inline int32_t LoadBand(const LocalTensor<T>& band, const GlobalTensor<T>& x, const @T@& t, uint64_t plane,
                                   uint32_t ho0, uint32_t ho1)
{
    const int32_t hiLo = static_cast<int32_t>(ho0) * t.sh - t.ph;
    const int32_t rows = static_cast<int32_t>(ho1 - ho0) * t.sh + static_cast<int32_t>(t.kh - 1) * t.dh + 1;
    SetFlag<HardEvent::V_MTE2>(EVENT_ID2);
    WaitFlag<HardEvent::V_MTE2>(EVENT_ID2);
    ZeroFill(band, static_cast<uint32_t>(rows) * t.rp);
    SetFlag<HardEvent::V_MTE2>(EVENT_ID2);
    WaitFlag<HardEvent::V_MTE2>(EVENT_ID2);
    const int32_t r0 = hiLo > 0 ? hiLo : 0;
    const int32_t r1 = hiLo + rows < static_cast<int32_t>(t.h) ? hiLo + rows : static_cast<int32_t>(t.h);
    if (r1 > r0) {
        const uint32_t epb = 32 / sizeof(T);
        DataCopyExtParams cp{static_cast<uint16_t>(r1 - r0), static_cast<uint32_t>(t.w * sizeof(T)), 0,
                             static_cast<uint32_t>((t.rp * sizeof(T) - CeilTo(t.w * sizeof(T), 32)) / 32), 0};
        DataCopyPadExtParams<T> pad{true, 0, static_cast<uint8_t>(CeilTo(t.w, epb) - t.w), 0};
        DataCopyPad(band[static_cast<uint32_t>(r0 - hiLo) * t.rp + t.ml],
                    x[plane * t.h * t.w + static_cast<uint64_t>(r0) * t.w], cp, pad);
    }
    SetFlag<HardEvent::MTE2_V>(EVENT_ID2);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID2);
    return hiLo;
}

// Byte offsets in the band of the chunk's output pixels at tap (0, 0); a tap (i, j) adds a constant.
__aicore__ inline void BuildOffsets(const LocalTensor<int32_t>& off, const @T@& t, uint32_t p0, uint32_t pc, uint32_t ho0)
{
    SetFlag<HardEvent::V_S>(EVENT_ID2);
    WaitFlag<HardEvent::V_S>(EVENT_ID2);
    for (uint32_t j = 0; j < pc; ++j) {
        const uint32_t ho = (p0 + j) / t.wo, wo = (p0 + j) % t.wo;
        const int32_t e = static_cast<int32_t>((ho - ho0) * t.sh * t.rp + t.ml) - t.pw + static_cast<int32_t>(wo) * t.sw;
        off.SetValue(j, e * static_cast<int32_t>(sizeof(T)));
    }
    SetFlag<HardEvent::S_V>(EVENT_ID2);
    WaitFlag<HardEvent::S_V>(EVENT_ID2);
}

// One tap's pixels of the chunk: dst[j] = band at off[j] + the tap's shift.
__aicore__ inline void GatherTap(const LocalTensor<T>& dst, const LocalTensor<T>& band, const LocalTensor<int32_t>& tap,
                                 const LocalTensor<int32_t>& off, const @T@& t, uint32_t i, uint32_t j, uint32_t pc)
{
    const int32_t shift = (static_cast<int32_t>(i) * t.dh * static_cast<int32_t>(t.rp) + static_cast<int32_t>(j) * t.dw) *
                          static_cast<int32_t>(sizeof(T));
    Adds(tap, off, shift, pc);
    Gather(dst, band, tap.ReinterpretCast<uint32_t>(), 0, pc);
}

// n values of S from GM to float in UB (raw: a scratch of n S values).
template <typename S>
__aicore__ inline void LoadFloats(const LocalTensor<float>& dst, const LocalTensor<S>& raw, const GlobalTensor<S>& src, uint32_t n)
{
    SetFlag<HardEvent::V_MTE2>(EVENT_ID3);
    WaitFlag<HardEvent::V_MTE2>(EVENT_ID3);
    DataCopyExtParams cp{1, static_cast<uint32_t>(n * sizeof(S)), 0, 0, 0};
    DataCopyPadExtParams<S> pad{false, 0, 0, 0};
    DataCopyPad(raw, src, cp, pad);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID3);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID3);
    if constexpr (std::is_same<S, float>::value) {
        Adds(dst, raw, 0.0f, n);
    } else {
        Cast(dst, raw, RoundMode::CAST_NONE, n);
    }
    SetFlag<HardEvent::V_S>(EVENT_ID3);
    WaitFlag<HardEvent::V_S>(EVENT_ID3);
}

// A float row to D (rounded to nearest even) or copied.
template <typename D>
__aicore__ inline void FromFloat(const LocalTensor<D>& dst, const LocalTensor<float>& src, uint32_t n)
{
    if constexpr (std::is_same<D, float>::value) {
        Adds(dst, src, 0.0f, n);
    } else {
        Cast(dst, src, RoundMode::CAST_RINT, n);
    }
}

// acc + comp += x, the sum carried as two floats (TwoSum: the rounding error of acc + x goes to comp);
// x is overwritten, acc and sum swap (sum: the scratch the new sum is written to)
__aicore__ inline void TwoSum(LocalTensor<float>& acc, LocalTensor<float>& sum, const LocalTensor<float>& x,
                              const LocalTensor<float>& bv, const LocalTensor<float>& e1, const LocalTensor<float>& comp,
                              uint32_t n)
{
    Add(sum, acc, x, n);
    Sub(bv, sum, acc, n);
    Sub(e1, sum, bv, n);
    Sub(e1, acc, e1, n);
    Sub(x, x, bv, n);
    Add(e1, e1, x, n);
    Add(comp, comp, e1, n);
    LocalTensor<float> was = acc;
    acc = sum;
    sum = was;
}

// acc += comp where acc is finite (an inf term makes comp NaN); n a multiple of 64
__aicore__ inline void Compensate(const LocalTensor<float>& acc, const LocalTensor<float>& comp, const LocalTensor<float>& e1,
                                  const LocalTensor<float>& e2, const LocalTensor<uint8_t>& mask, uint32_t n)
{
    Sub(e1, acc, acc, n);
    Compares(mask, e1, 0.0f, CMPMODE::EQ, n);
    Add(e2, acc, comp, n);
    Select(acc, mask, e2, acc, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
}

// One tap's pixels widened to float (S = the input dtype; g: its scratch).
template <typename S>
__aicore__ inline void GatherTapFloat(const LocalTensor<float>& gf, const LocalTensor<S>& g, const LocalTensor<S>& band,
                                      const LocalTensor<int32_t>& tap, const LocalTensor<int32_t>& off, const @T@& t,
                                      uint32_t i, uint32_t j, uint32_t pc)
{
    if constexpr (std::is_same<S, float>::value) {
        GatherTap(gf, band, tap, off, t, i, j, pc);
    } else {
        GatherTap(g, band, tap, off, t, i, j, pc);
        Cast(gf, g, RoundMode::CAST_NONE, pc);
    }
}
"""

_VEC_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// Depthwise convolution on the vector unit: per (image, channel, chunk of output pixels) the input rows
// the chunk reads go to UB once (zero margins: the padding); each tap is one Gather of the chunk's
// pixels (stride and dilation are in the offsets, the tap is a constant shift) multiplied by the tap's
// weight and added to an fp32 sum that starts at the bias, carried as two floats (TwoSum per tap;
// fp32 products split exactly), rounded once at the end.
@COMMON@
class @K@ {
public:
    __aicore__ inline void Run(GM_ADDR* args, GM_ADDR y, const @T@& tiling)
    {
        t_ = tiling;
        const uint32_t core = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t first = core * t_.perAiv;
        if (first >= t_.items) {
            return;
        }
        const uint32_t last = first + t_.perAiv < t_.items ? first + t_.perAiv : t_.items;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[X_IN]));
        wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[W_IN]));
        if (t_.hasBias) {
            bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ BT*>(args[B_IN]));
        }
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ YT*>(y));
        const uint32_t pcPad = CeilTo(t_.pc, 64);
        const uint32_t taps = t_.kh * t_.kw;
        pipe_.InitBuffer(bandBuf_, BAND_BYTES);
        pipe_.InitBuffer(offBuf_, pcPad * sizeof(int32_t));
        pipe_.InitBuffer(tapBuf_, pcPad * sizeof(int32_t));
        pipe_.InitBuffer(gBuf_, pcPad * sizeof(T));
        pipe_.InitBuffer(gfBuf_, pcPad * sizeof(float));
        pipe_.InitBuffer(accBuf_, 10 * pcPad * sizeof(float));   // sum, its compensation and the scratch
        pipe_.InitBuffer(yBuf_, pcPad * sizeof(YT));
        pipe_.InitBuffer(wBuf_, CeilTo(taps + 1, 64) * sizeof(float));
        pipe_.InitBuffer(rawBuf_, CeilTo(taps + 1, 64) * sizeof(float));
        pipe_.InitBuffer(maskBuf_, pcPad);
        LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();
        LocalTensor<T> band = bandBuf_.Get<T>();
        LocalTensor<int32_t> off = offBuf_.Get<int32_t>(), tap = tapBuf_.Get<int32_t>();
        LocalTensor<T> g = gBuf_.Get<T>();
        LocalTensor<float> gf = gfBuf_.Get<float>(), wf = wBuf_.Get<float>();
        LocalTensor<float> sc = accBuf_.Get<float>();
        LocalTensor<float> acc = sc, comp = sc[pcPad], pr = sc[2 * pcPad], sum = sc[3 * pcPad], bv = sc[4 * pcPad];
        LocalTensor<float> e1 = sc[5 * pcPad], e2 = sc[6 * pcPad], hi = sc[7 * pcPad], lo = sc[8 * pcPad];
        LocalTensor<float> pe = sc[9 * pcPad];
        LocalTensor<YT> yt = yBuf_.Get<YT>();
        for (uint32_t it = first; it < last; ++it) {
            const uint32_t plane = it / t_.chunks;             // n * C + c
            const uint32_t c = plane % t_.cout;
            const uint32_t p0 = (it % t_.chunks) * t_.pc;
            const uint32_t pc = t_.p - p0 < t_.pc ? t_.p - p0 : t_.pc;
            const uint32_t ho0 = p0 / t_.wo, ho1 = (p0 + pc - 1) / t_.wo;
            LoadFloats(wf, rawBuf_.Get<T>(), wGm_[static_cast<uint64_t>(c) * taps], taps);
            float bias = 0.0f;
            if (t_.hasBias) {
                LoadFloats(wf[CeilTo(taps, 8)], rawBuf_.Get<BT>(), bGm_[c], 1);
                bias = wf.GetValue(CeilTo(taps, 8));
            }
            float wv[256];
            for (uint32_t q = 0; q < taps && q < 256; ++q) {
                wv[q] = wf.GetValue(q);
            }
            SetFlag<HardEvent::S_V>(EVENT_ID3);
            WaitFlag<HardEvent::S_V>(EVENT_ID3);
            LoadBand(band, xGm_, t_, plane, ho0, ho1);
            BuildOffsets(off, t_, p0, pc, ho0);
            // acc + comp carry the sum as two floats (TwoSum per tap); fp32 products are split exactly
            // (Dekker) so that the result is nearly the exact sum rounded once
            Duplicate(acc, bias, pc);
            Duplicate(comp, 0.0f, pc);
            for (uint32_t i = 0; i < t_.kh; ++i) {
                for (uint32_t j = 0; j < t_.kw; ++j) {
                    const float wq = wv[i * t_.kw + j];
                    GatherTapFloat(gf, g, band, tap, off, t_, i, j, pc);
                    Muls(pr, gf, wq, pc);
                    if constexpr (std::is_same<T, float>::value) {
                        const float wt = wq * 4097.0f;
                        const float wHi = wt - (wt - wq), wLo = wq - wHi;
                        Muls(e1, gf, 4097.0f, pc);
                        Sub(e2, e1, gf, pc);
                        Sub(hi, e1, e2, pc);
                        Sub(lo, gf, hi, pc);
                        Muls(e1, hi, wHi, pc);
                        Sub(pe, e1, pr, pc);
                        Axpy(pe, hi, wLo, pc);
                        Axpy(pe, lo, wHi, pc);
                        Axpy(pe, lo, wLo, pc);
                        Add(comp, comp, pe, pc);
                    }
                    TwoSum(acc, sum, pr, bv, e1, comp, pc);
                }
            }
            Compensate(acc, comp, e1, e2, mask, pcPad);
            SetFlag<HardEvent::MTE3_V>(EVENT_ID3);
            WaitFlag<HardEvent::MTE3_V>(EVENT_ID3);
            FromFloat(yt, acc, pc);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID3);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID3);
            DataCopyExtParams cp{1, static_cast<uint32_t>(pc * sizeof(YT)), 0, 0, 0};
            DataCopyPad(yGm_[static_cast<uint64_t>(plane) * t_.p + p0], yt, cp);
        }
    }

private:
    TPipe pipe_;
    TBuf<TPosition::VECCALC> bandBuf_, offBuf_, tapBuf_, gBuf_, gfBuf_, accBuf_, yBuf_, wBuf_, rawBuf_, maskBuf_;
    GlobalTensor<T> xGm_, wGm_;
    GlobalTensor<BT> bGm_;
    GlobalTensor<YT> yGm_;
    @T@ t_;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(t, tiling);
    GM_ADDR args[] = {@ARGLIST@};
    @K@ op;
    op.Run(args, @Y@, t);
}
"""

_CUBE_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// img2col + matmul, a MIX kernel on the high-level Matmul API: per (image, group, chunk of pc output
// pixels) an AIV builds the chunk's columns col[(ci, kh, kw), p] in its workspace slot (the band of
// input rows in UB, one Gather per tap and input channel), asks its AIC for C = W_g . col in fp32
// (IterateAll), adds the bias per output channel and writes the rows in the output's dtype.
@COMMON@
class @K@ {
public:
    using AType = MatmulType<TPosition::GM, CubeFormat::ND, T>;
    using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

    __aicore__ inline void Run(GM_ADDR* args, GM_ADDR y, GM_ADDR workspace, const @T@& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm_, &t_.mm);
        const uint32_t aiv = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t first = aiv * t_.perAiv;
        if (first >= t_.items) {
            return;
        }
        const uint32_t last = first + t_.perAiv < t_.items ? first + t_.perAiv : t_.items;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[X_IN]));
        wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[W_IN]));
        if (t_.hasBias) {
            bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ BT*>(args[B_IN]));
        }
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ YT*>(y));
        GM_ADDR ws = GetUserWorkspace(workspace) + static_cast<uint64_t>(aiv) * t_.slot;
        colGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws));
        cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.cOff));
        const uint32_t pcPad = CeilTo(t_.pc, 64);
        pipe_.InitBuffer(bandBuf_, BAND_BYTES);
        pipe_.InitBuffer(offBuf_, pcPad * sizeof(int32_t));
        pipe_.InitBuffer(tapBuf_, pcPad * sizeof(int32_t));
        pipe_.InitBuffer(colBuf_, pcPad * sizeof(T));
        pipe_.InitBuffer(epiBuf_, 6 * EPI_BYTES);
        pipe_.InitBuffer(yBuf_, EPI_BYTES);
        pipe_.InitBuffer(maskBuf_, EPI_BYTES / sizeof(float) / 8);
        pipe_.InitBuffer(biasBuf_, CeilTo(t_.coutg, 64) * sizeof(float));
        pipe_.InitBuffer(rawBuf_, CeilTo(t_.coutg, 64) * sizeof(float));
        LocalTensor<T> band = bandBuf_.Get<T>(), col = colBuf_.Get<T>();
        LocalTensor<int32_t> off = offBuf_.Get<int32_t>(), tap = tapBuf_.Get<int32_t>();
        LocalTensor<float> biasF = biasBuf_.Get<float>();
        const uint32_t taps = t_.kh * t_.kw;
        for (uint32_t it = first; it < last; ++it) {
            const uint32_t img = it / (t_.groups * t_.chunks);
            const uint32_t grp = (it / t_.chunks) % t_.groups;
            const uint32_t p0 = (it % t_.chunks) * t_.pc;
            const uint32_t pc = t_.p - p0 < t_.pc ? t_.p - p0 : t_.pc;
            const uint32_t ho0 = p0 / t_.wo, ho1 = (p0 + pc - 1) / t_.wo;
            BuildOffsets(off, t_, p0, pc, ho0);
            for (uint32_t ci = 0; ci < t_.cing; ++ci) {
                LoadBand(band, xGm_, t_, static_cast<uint64_t>(img) * t_.cin + grp * t_.cing + ci, ho0, ho1);
                for (uint32_t i = 0; i < t_.kh; ++i) {
                    for (uint32_t j = 0; j < t_.kw; ++j) {
                        SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
                        WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
                        GatherTap(col, band, tap, off, t_, i, j, pc);
                        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
                        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
                        DataCopyExtParams cp{1, static_cast<uint32_t>(pc * sizeof(T)), 0, 0, 0};
                        DataCopyPad(colGm_[static_cast<uint64_t>((ci * taps) + i * t_.kw + j) * t_.pc], col, cp);
                    }
                }
            }
            PipeBarrier<PIPE_ALL>();
            // one product per part of K (its own C in the slot): the cube's fp32 sum runs over at most
            // K_PART terms, the parts are added on the vector unit with TwoSum
            for (uint32_t q = 0; q < t_.parts; ++q) {
                const uint32_t k0 = q * K_PART;
                const uint32_t kq = t_.k - k0 < K_PART ? t_.k - k0 : K_PART;
                mm_.SetOrgShape(t_.coutg, t_.pc, t_.k, t_.k);
                mm_.SetSingleShape(t_.coutg, pc, kq);
                mm_.SetTensorA(wGm_[static_cast<uint64_t>(grp) * t_.coutg * t_.k + k0]);
                mm_.SetTensorB(colGm_[static_cast<uint64_t>(k0) * t_.pc]);
                mm_.IterateAll(cGm_[static_cast<uint64_t>(q) * t_.coutg * t_.pc]);
            }
            if (t_.hasBias) {
                LoadFloats(biasF, rawBuf_.Get<BT>(), bGm_[grp * t_.coutg], t_.coutg);
            }
            Epilogue(img, grp, p0, pc);
        }
        mm_.End();
    }

private:
    // rows x pc of part q's C into a tile of pitch `pitch`
    __aicore__ inline void LoadPart(const LocalTensor<float>& dst, uint32_t q, uint32_t r0, uint32_t rows, uint32_t pc,
                                    uint32_t pitch)
    {
        DataCopyExtParams cpIn{static_cast<uint16_t>(rows), static_cast<uint32_t>(pc * sizeof(float)),
                               static_cast<uint32_t>((t_.pc - pc) * sizeof(float)),
                               static_cast<uint32_t>((pitch * sizeof(float) - CeilTo(pc * sizeof(float), 32)) / 32), 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        DataCopyPad(dst, cGm_[(static_cast<uint64_t>(q) * t_.coutg + r0) * t_.pc], cpIn, pad);
    }

    // The parts' C rows + bias, summed as two floats (TwoSum), to y[img, grp * coutg + co, p0 : p0 + pc] in YT.
    __aicore__ inline void Epilogue(uint32_t img, uint32_t grp, uint32_t p0, uint32_t pc)
    {
        const uint32_t pitch = CeilTo(pc, 64);
        uint32_t rowsMax = EPI_BYTES / (pitch * sizeof(float));
        rowsMax = rowsMax == 0 ? 1 : rowsMax;
        LocalTensor<float> epi = epiBuf_.Get<float>();
        const uint32_t tile = EPI_BYTES / sizeof(float);
        LocalTensor<float> acc = epi, sum = epi[tile], pr = epi[2 * tile], e1 = epi[3 * tile], comp = epi[4 * tile];
        LocalTensor<float> bv = epi[5 * tile];
        LocalTensor<YT> yt = yBuf_.Get<YT>();
        LocalTensor<uint8_t> mask = maskBuf_.Get<uint8_t>();
        LocalTensor<float> biasF = biasBuf_.Get<float>();
        for (uint32_t r0 = 0; r0 < t_.coutg; r0 += rowsMax) {
            const uint32_t rows = t_.coutg - r0 < rowsMax ? t_.coutg - r0 : rowsMax;
            const uint32_t n = rows * pitch;
            PipeBarrier<PIPE_ALL>();
            LoadPart(acc, 0, r0, rows, pc, pitch);
            Duplicate(comp, 0.0f, n);
            const uint32_t terms = t_.parts + (t_.hasBias ? 1 : 0);
            for (uint32_t q = 1; q < terms; ++q) {
                PipeBarrier<PIPE_ALL>();
                if (q < t_.parts) {
                    LoadPart(pr, q, r0, rows, pc, pitch);
                } else {
                    for (uint32_t r = 0; r < rows; ++r) {
                        Duplicate(pr[r * pitch], biasF.GetValue(r0 + r), pitch);
                    }
                }
                PipeBarrier<PIPE_ALL>();
                TwoSum(acc, sum, pr, bv, e1, comp, n);
            }
            PipeBarrier<PIPE_ALL>();
            if (terms > 1) {
                Compensate(acc, comp, e1, pr, mask, n);
            }
            FromFloat(yt, acc, n);
            PipeBarrier<PIPE_ALL>();
            DataCopyExtParams cpOut{static_cast<uint16_t>(rows), static_cast<uint32_t>(pc * sizeof(YT)),
                                    static_cast<uint32_t>((pitch * sizeof(YT) - CeilTo(pc * sizeof(YT), 32)) / 32),
                                    static_cast<uint32_t>((t_.p - pc) * sizeof(YT)), 0};
            DataCopyPad(yGm_[(static_cast<uint64_t>(img) * t_.cout + grp * t_.coutg + r0) * t_.p + p0], yt, cpOut);
        }
        PipeBarrier<PIPE_ALL>();
    }

    TPipe pipe_;
    Matmul<AType, AType, CType, CType> mm_;
    TBuf<TPosition::VECCALC> bandBuf_, offBuf_, tapBuf_, colBuf_, epiBuf_, yBuf_, maskBuf_, biasBuf_, rawBuf_;
    GlobalTensor<T> xGm_, wGm_, colGm_;
    GlobalTensor<BT> bGm_;
    GlobalTensor<float> cGm_;
    GlobalTensor<YT> yGm_;
    @T@ t_;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GM_ADDR args[] = {@ARGLIST@};
    @K@ op;
    op.Run(args, @Y@, workspace, t);
}
"""

_TILING = r"""namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    (void)attrs;
    const gert::Shape& xs = context->GetInputShape(X_IN)->GetStorageShape();
    const gert::Shape& wsh = context->GetInputShape(W_IN)->GetStorageShape();
    const gert::Shape& ys = context->GetOutputShape(0)->GetStorageShape();
    if (xs.GetDimNum() != 4 || (wsh.GetDimNum() != 4 && wsh.GetDimNum() != 3) || ys.GetDimNum() != 4) {
        return ge::GRAPH_FAILED;
    }
    @T@* t = context->GetTilingData<@T@>();
    t->n = static_cast<uint32_t>(xs.GetDim(0));
    t->cin = static_cast<uint32_t>(xs.GetDim(1));
    t->h = static_cast<uint32_t>(xs.GetDim(2));
    t->w = static_cast<uint32_t>(xs.GetDim(3));
    const bool w3 = wsh.GetDimNum() == 3;         // [C, kh, kw]: one input channel per group
    t->cout = static_cast<uint32_t>(wsh.GetDim(0));
    t->cing = w3 ? 1 : static_cast<uint32_t>(wsh.GetDim(1));
    t->kh = static_cast<uint32_t>(wsh.GetDim(w3 ? 1 : 2));
    t->kw = static_cast<uint32_t>(wsh.GetDim(w3 ? 2 : 3));
    if (t->cing == 0 || t->cin % t->cing != 0) {
        return ge::GRAPH_FAILED;
    }
    t->groups = t->cin / t->cing;
    if (t->cout % t->groups != 0) {
        return ge::GRAPH_FAILED;
    }
    t->coutg = t->cout / t->groups;
    t->sh = static_cast<int32_t>(@SH@);
    t->sw = static_cast<int32_t>(@SW@);
    t->ph = static_cast<int32_t>(@PH@);
    t->pw = static_cast<int32_t>(@PW@);
    t->dh = static_cast<int32_t>(@DH@);
    t->dw = static_cast<int32_t>(@DW@);
    if (t->sh <= 0 || t->sw <= 0 || t->dh <= 0 || t->dw <= 0 || t->ph < 0 || t->pw < 0) {
        return ge::GRAPH_FAILED;
    }
    const int64_t ho = (static_cast<int64_t>(t->h) + 2 * t->ph - t->dh * (static_cast<int64_t>(t->kh) - 1) - 1) / t->sh + 1;
    const int64_t wo = (static_cast<int64_t>(t->w) + 2 * t->pw - t->dw * (static_cast<int64_t>(t->kw) - 1) - 1) / t->sw + 1;
    if (ho <= 0 || wo <= 0 || ys.GetDim(0) != t->n || ys.GetDim(1) != t->cout || ys.GetDim(2) != ho || ys.GetDim(3) != wo) {
        return ge::GRAPH_FAILED;
    }
    t->ho = static_cast<uint32_t>(ho);
    t->wo = static_cast<uint32_t>(wo);
    t->p = t->ho * t->wo;
    t->k = t->cing * t->kh * t->kw;
    t->hasBias = (B_IN >= 0 && context->GetOptionalInputShape(B_IN) != nullptr) ? 1 : 0;
    const uint32_t es = context->GetInputDesc(X_IN)->GetDataType() == ge::DT_FLOAT ? 4 : 2;
    const uint32_t epb = 32 / es;
    t->ml = (static_cast<uint32_t>(t->pw) + epb - 1) / epb * epb;
    t->rp = (t->ml + t->w + static_cast<uint32_t>(t->pw) + epb - 1) / epb * epb;
    // chunk of output pixels: the cube's N (its columns in the slot) or the vector path's row
    uint32_t pc = @VECTOR@ ? 1024 : static_cast<uint32_t>(4u * 1024 * 1024 / (static_cast<uint64_t>(t->k) * es));
    pc = pc > 2048 ? 2048 : pc;
    pc = pc < 16 ? 16 : pc / 16 * 16;
    pc = pc > t->p ? t->p : pc;
    auto bandRows = [&](uint32_t c) {
        return ((c + t->wo - 2) / t->wo) * static_cast<uint32_t>(t->sh) + (t->kh - 1) * static_cast<uint32_t>(t->dh) + 1;
    };
    while (pc > 16 && static_cast<uint64_t>(bandRows(pc)) * t->rp * es > BAND_BYTES) {
        pc = pc / 2 / 16 * 16 > 16 ? pc / 2 / 16 * 16 : 16;
    }
    if (static_cast<uint64_t>(bandRows(pc)) * t->rp * es > BAND_BYTES || t->kh * t->kw > 256) {
        return ge::GRAPH_FAILED;   // an output row's input band does not fit UB (no column banding yet)
    }
    t->pc = pc;
    t->bandMax = bandRows(pc);
    t->chunks = (t->p + pc - 1) / pc;
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    size_t* ws = context->GetWorkspaceSizes(1);
    if (@VECTOR@) {
        t->items = t->n * t->cout * t->chunks;
        const uint32_t cores = plat.GetCoreNumAiv();
        t->perAiv = (t->items + cores - 1) / cores;
        context->SetBlockDim((t->items + t->perAiv - 1) / t->perAiv);
        ws[0] = 0;
        return ge::GRAPH_SUCCESS;
    }
    const auto dt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(X_IN)->GetDataType());
    matmul_tiling::MatmulApiTiling mt(plat);
    mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt);
    mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt);
    mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    mt.SetShape(static_cast<int32_t>(t->coutg), static_cast<int32_t>(pc), static_cast<int32_t>(t->k));
    mt.SetOrgShape(static_cast<int32_t>(t->coutg), static_cast<int32_t>(pc), static_cast<int32_t>(t->k));
    mt.SetBias(false);
    if (mt.GetTiling(t->mm) == -1) {
        return ge::GRAPH_FAILED;
    }
    t->items = t->n * t->groups * t->chunks;
    const uint32_t aivMax = 2 * plat.GetCoreNumAic();
    t->perAiv = (t->items + aivMax - 1) / aivMax;
    const uint32_t aivs = (t->items + t->perAiv - 1) / t->perAiv;
    const uint32_t blocks = (aivs + 1) / 2;
    context->SetBlockDim(blocks);
    t->parts = (t->k + K_PART - 1) / K_PART;
    t->cOff = (static_cast<uint64_t>(t->k) * pc * es + 511) / 512 * 512;
    t->slot = (t->cOff + static_cast<uint64_t>(t->parts) * t->coutg * pc * 4 + 511) / 512 * 512;
    ws[0] = plat.GetLibApiWorkSpaceSize() + t->slot * 2 * blocks;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
