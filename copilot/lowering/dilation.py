"""Morphological dilation (grey-scale, max-plus) over an NHWC image with a [kh, kw, C] filter:

    y[b, oh, ow, c] = max over (dy, dx) of xp[b, oh*sh + dy*rh, ow*sw + dx*rw, c] + f[dy, dx, c]

where xp is x with pt rows above and pl columns left of it (and enough after) of -inf: a tap in the
padding adds the filter to -inf, which never wins the max but makes NaN where the filter is NaN or
+inf, as the golden's padded image does.

Matched by what the golden runs: its aten ops on fake tensors of each case's shapes (a few ms a
case) are one `im2col` (kernel, rate, stride), an optional `constant_pad_nd` of -inf before it (the
padding), an `add` of the filter and an `amax` over the taps, with views around them; one FX trace
per distinct op sequence names the image and the filter inputs. Stride and rate are tied to the
attrs that hold them (conv.py's rule). The leading padding, per variant of the string / bool attrs:
TensorFlow's SAME formula, a list attr's element or a constant, told apart by rerunning the golden
with each pad-named list attr moved far from its value; where the golden refuses such pads (VALID: its
output size ignores them) the variant is served only for the pads its cases have. Small fp64 probes
then confirm the formula above (layout, filter layout, -inf padding, the output size the golden
gives): a golden that does not match is not this pattern; a variant that does not is refused.

The kernel (one AIV per run of units): a unit is (channel block, image, output row, run of at most
255 output pixels); channels are padded to whole 32-byte blocks in UB, so every pixel starts a
block. Per filter row dy, the span of the padded input row the run reads is one DMA (its padding
filled with -inf); per tap dx one `Add` of the filter (the tap's channels repeated by a repeat
stride of 0, the input pixels picked by a repeat stride of sw pixels) and one `Max` into the
accumulator, which the first tap's sum starts. Channels that are not whole blocks and under 512
bytes a pixel move packed (one DMA burst per span and per output run instead of one per pixel) and
a `Gather` by byte-offset tables (built once per core) puts them to the pitch and back. fp16 / fp32
are computed in their own type: the max of correctly rounded sums is the correctly rounded max.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.conv import _describe, _rule, _rule_cpp, _source
from copilot.lowering.movement import _name

PARAMS = ("sh", "sw", "rh", "rw")
_KEYWORDS = {"sh": "stride", "sw": "stride", "rh": "rate", "rw": "rate"}
_WINDOW_OPS = {"permute", "view", "_unsafe_view", "reshape", "clone", "contiguous", "alias", "unsqueeze", "expand",
               "constant_pad_nd", "im2col", "add", "amax"}
# a pad attr's element e is moved by 840 (e + 1): values no SAME padding takes, and each axis's padded
# size keeps its residue modulo every stride up to 8 (840 = lcm(1..8)), so a golden whose output size
# follows the padded image (a ceil_mode that needs whole strides) accepts the moved pads as it did the case's
MOVED_PAD = 840


@dataclass
class DilationPlan:
    task: object
    x: int
    f: int
    rules: dict                        # sh, sw, rh, rw -> conv rule
    variants: list                     # (guards {attr: value}, pad-top rule, pad-left rule, fixed {list attr: value})
    pattern: str = "dilation"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _recorded(task, case, attrs: dict, shapes: list | None = None):
    """The golden run on meta tensors of the case's shapes (or these) with these attrs: (its aten ops'
    names, the window {sh sw rh rw pt pl} when it has one im2col, else None); None when the golden
    raises. Meta tensors have no storage and take no FX trace or fake-tensor dispatch (about 50x
    cheaper than a trace), so every case and every moved attr costs a millisecond or two."""
    import torch

    from copilot.dynamo_free import OpLog
    from copilot.lowering.capture import _torch_dtype, call_golden

    tensors = [None if s is None else torch.zeros(s, dtype=_torch_dtype(d), device="meta")
               for s, d in zip(shapes or case.shapes, case.dtypes)]
    record = OpLog()
    try:
        with torch.no_grad(), torch.device("meta"), record:      # the golden's own tensors too: no storage
            call_golden(task, tensors, attrs)
    except Exception:           # the golden refuses these shapes / attrs
        return None
    names = tuple(record.names())
    cols = [a for n, a, _ in record.ops if n == "im2col"]
    if len(cols) != 1:
        return names, None
    _, kernel, rate, padding, stride = cols[0][:5]
    if any(int(p) for p in padding):
        raise Unsupported(f"{task.name}: case {case.id}: im2col's own (zero) padding inside a max-plus window")
    pt = pl = 0
    pads = [a for n, a, _ in record.ops if n == "constant_pad_nd"]
    if pads:
        widths, value = pads[0][1], pads[0][2] if len(pads[0]) > 2 else 0.0
        if len(pads) != 1 or value != float("-inf") or len(widths) != 4:
            raise Unsupported(f"{task.name}: case {case.id}: the window's padding is not -inf on H and W")
        pl, pt = int(widths[0]), int(widths[2])
    vals = (stride[0], stride[1], rate[0], rate[1], pt, pl)
    return names, dict(zip(("sh", "sw", "rh", "rw", "pt", "pl"), (int(v) for v in vals)))


def _roles(task, case):
    """(image input, filter input) of the case's traced window."""
    from copilot.lowering.cube import trace_case

    gm, present = trace_case(task, case)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    names = [_name(n) for n in calls]
    odd = [n for n in names if n not in _WINDOW_OPS]
    if odd:
        raise Unsupported(f"{task.name}: a max-plus window with other ops around it ({odd[0]}) is not lowered")
    src = calls[names.index("im2col")].args[0]
    if _name(src) == "constant_pad_nd":
        src = src.args[0]
    while _name(src) == "permute":
        src = src.args[0]
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    x = _source(src, {p: present[i] for i, p in enumerate(phs)})
    others = [i for i in present if i != x]
    if x is None or len(others) != 1:
        raise Unsupported(f"{task.name}: case {case.id}: the window's image and filter are not two inputs")
    return x, others[0]


def _same_before(size: int, stride: int, rate: int, k: int) -> int:
    """TensorFlow's SAME padding before the image: half the total (the rest goes after)."""
    out = (size + stride - 1) // stride
    return max((out - 1) * stride + (k - 1) * rate + 1 - size, 0) // 2


def _value(rule, attrs: dict, task, axis: dict) -> int:
    """A rule's value for attrs and one axis's facts (size, stride, rate, k)."""
    if rule[0] == "const":
        return int(rule[1])
    if rule[0] == "list":
        return int(attrs[task.attrs[rule[1]].name][rule[2]])
    if rule[0] == "same":
        return _same_before(axis["size"], axis["stride"], axis["rate"], axis["k"])
    return int(attrs[task.attrs[rule[1]].name])


def _reference(x, f, sh, sw, rh, rw, pt, pl, oh, ow):
    """The dilation above in torch (fp64 probes): a tap in the padding adds its filter to -inf."""
    import torch

    B, H, W, C = x.shape
    y = torch.full((B, oh, ow, C), float("-inf"), dtype=x.dtype)
    for dy in range(f.shape[0]):
        ih = torch.arange(oh) * sh - pt + dy * rh
        for dx in range(f.shape[1]):
            iw = torch.arange(ow) * sw - pl + dx * rw
            ok = ((ih >= 0) & (ih < H))[:, None] & ((iw >= 0) & (iw < W))[None, :]
            v = torch.where(ok[None, :, :, None], x[:, ih.clamp(0, H - 1)][:, :, iw.clamp(0, W - 1)], float("-inf"))
            y = torch.maximum(y, v + f[dy, dx])
    return y


def _probe(task, case, xi: int, fi: int, attrs: dict, rules: dict, pads: tuple) -> bool:
    """Whether the golden computes the dilation above on two small fp64 probes under these rules, with
    the case's filter size and image sizes of the case's residue modulo the stride (a golden whose
    output size needs whole strides accepts them as it did the case); shapes it refuses are passed
    over, at most four tried."""
    import torch

    from copilot.lowering.capture import call_golden

    g = torch.Generator().manual_seed(13)
    sh, sw, rh, rw = (_value(rules[k], attrs, task, {}) for k in PARAMS)
    kh, kw = case.shapes[fi][:2]
    if min(sh, sw, rh, rw) <= 0:
        return False
    ran = 0
    for extra in range(4):
        H = (kh - 1) * rh + 2 * sh + 2 + extra * sh
        W = (kw - 1) * rw + 3 * sw + 1 + extra * sw
        H, W, C = H + (case.shapes[xi][1] - H) % sh, W + (case.shapes[xi][2] - W) % sw, 3
        x = torch.rand((2, H, W, C), generator=g, dtype=torch.float64) * 4 - 2
        f = torch.rand((kh, kw, C), generator=g, dtype=torch.float64) - 0.5
        inputs = [None] * len(task.inputs)
        inputs[xi], inputs[fi] = x, f
        try:
            with torch.no_grad():
                out = call_golden(task, inputs, attrs)
        except Exception:           # the golden refuses these shapes (a ceil_mode short of a stride)
            continue
        if isinstance(out, (list, tuple)):
            if len(out) != 1:
                return False
            out = out[0]
        if not isinstance(out, torch.Tensor) or out.dim() != 4 or out.shape[0] != 2 or out.shape[3] != C:
            return False
        oh, ow = out.shape[1], out.shape[2]
        pt = _value(pads[0], attrs, task, {"size": H, "stride": sh, "rate": rh, "k": kh})
        pl = _value(pads[1], attrs, task, {"size": W, "stride": sw, "rate": rw, "k": kw})
        ref = _reference(x, f, sh, sw, rh, rw, pt, pl, oh, ow)
        if out.dtype != torch.float64 or not torch.allclose(out, ref, rtol=1e-12, atol=1e-12):
            return False
        ran += 1
        if ran == 2:
            return True
    return False


def _pad_rules(task, members: list, facts: dict, xi: int, fi: int):
    """(top rule, left rule, fixed) for the cases of one variant: each rule gives the leading padding
    the golden runs with in every member, in its first member with two larger filters (TF SAME then
    pads at least 1, unlike a constant 0) and with each pad-named list attr moved (MOVED_PAD);
    `fixed` holds the pad attrs the golden refuses to move here, at the members' value (the tiling
    serves only that value). None when no rule fits."""
    c0 = members[0]
    runs = [(m.shapes, m.attrs, facts[m.id]) for m in members]      # (shapes, attrs, window)
    w0 = facts[c0.id]
    for more in (0, 1):
        # an effective filter of stride + 2 or more: TF SAME pads at least 1 before the image
        kh = max(c0.shapes[fi][0] + 1, -(-(w0["sh"] + 1) // w0["rh"]) + 1) + more
        kw = max(c0.shapes[fi][1] + 1, -(-(w0["sw"] + 1) // w0["rw"]) + 1) + more
        shapes = list(c0.shapes)
        shapes[fi] = [kh, kw, *shapes[fi][2:]]
        got = _recorded(task, c0, c0.attrs, shapes)
        if got is not None and got[1] is not None:
            runs.append((shapes, c0.attrs, got[1]))
    lists, fixed = [], {}
    for i, a in enumerate(task.attrs):
        v = c0.attrs.get(a.name)
        if not (a.type.startswith("list") and "pad" in a.name.lower() and isinstance(v, (list, tuple))):
            continue
        attrs = {**c0.attrs, a.name: [int(p) + MOVED_PAD * (e + 1) for e, p in enumerate(v)]}
        got = _recorded(task, c0, attrs)
        if got is None or got[1] is None:
            if all(m.attrs.get(a.name) == v for m in members):
                fixed[a.name] = list(v)
            continue
        runs.append((c0.shapes, attrs, got[1]))
        lists += [("list", i, e) for e in range(len(v))]

    def axis(shapes, window, key):
        ax, s, r = (1, "sh", "rh") if key == "pt" else (2, "sw", "rw")
        return {"size": shapes[xi][ax], "stride": window[s], "rate": window[r], "k": shapes[fi][ax - 1]}

    rules = []
    for key in ("pt", "pl"):
        cands = [("same",), *lists, ("const", facts[c0.id][key])]
        fits = [r for r in cands if all(_value(r, at, task, axis(sh, w, key)) == w[key] for sh, at, w in runs)]
        if not fits:
            return None
        rules.append(fits[0])
    return rules[0], rules[1], fixed


def plan_dilation(task):
    """A DilationPlan, None if the golden is no max-plus window, Unsupported if we do not serve it."""
    cases = task.cases
    if not cases or any(s is None for s in cases[0].shapes):
        return None
    runs = {cases[0].id: _recorded(task, cases[0], cases[0].attrs)}
    if runs[cases[0].id] is None or runs[cases[0].id][1] is None or "amax" not in runs[cases[0].id][0]:
        return None
    roles: dict = {}            # op sequence -> (image, filter) of a trace of its first case
    for c in cases:
        got = runs.get(c.id) or _recorded(task, c, c.attrs)
        if got is None or got[1] is None:
            raise Unsupported(f"{task.name}: case {c.id} is not the same max-plus window")
        runs[c.id] = got
        if got[0] not in roles:
            roles[got[0]] = _roles(task, c)
        if roles[got[0]] != next(iter(roles.values())):
            raise Unsupported(f"{task.name}: case {c.id}: the image and filter are other inputs than case {cases[0].id}'s")
    xi, fi = next(iter(roles.values()))
    for c in cases:
        if len(c.shapes[xi]) != 4 or len(c.shapes[fi]) != 3:
            raise Unsupported(f"{task.name}: case {c.id}: the image must be 4-D and the filter [kh, kw, C]")
    facts = {c.id: runs[c.id][1] for c in cases}
    rules = {k: _rule(task, cases, k, [facts[c.id][k] for c in cases], _KEYWORDS) for k in PARAMS}
    keyed = [a.name for a in task.attrs if a.type in ("string", "bool")]
    groups: dict = {}
    for c in cases:
        groups.setdefault(tuple(repr(c.attrs.get(n)) for n in keyed), []).append(c)
    variants, unserved = [], {}
    for members in groups.values():
        attrs = dict(members[0].attrs)
        found = _pad_rules(task, members, facts, xi, fi)
        if found is None or not _probe(task, members[0], xi, fi, attrs, rules, found[:2]):
            if len(groups) == 1:
                return None          # the only variant is not this formula: not this pattern
            unserved.update({c.id: "the golden is not the NHWC max-plus dilation on probes for these attrs "
                                   "(padding TF SAME, from a pads attr or constant)" for c in members})
            continue
        guards = {n: attrs[n] for n in keyed}
        # a bool attr under which the golden computes the same thing either way guards nothing
        for a in task.attrs:
            if a.type == "bool" and a.name in guards and _probe(task, members[0], xi, fi,
                                                                {**attrs, a.name: not attrs[a.name]}, rules, found[:2]):
                guards.pop(a.name)
        variant = (guards, *found)
        if variant not in variants:
            variants.append(variant)
    for c in cases:
        if c.id not in unserved and any(d not in ("float16", "float32") for d in c.dtypes):
            unserved[c.id] = f"dtype {c.dtypes[xi]} (the kernel adds and compares in fp16 or fp32)"
    if not variants:
        raise Unsupported(f"{task.name}: no case's attrs give a max-plus dilation the kernel serves")
    plan = DilationPlan(task, xi, fi, rules, variants, unserved=unserved)
    plan.notes.append(f"dilation: x {task.inputs[xi].name}, filter {task.inputs[fi].name}; "
                      + ", ".join(f"{k} {_describe(task, r)}" for k, r in rules.items()) + "; padding "
                      + "; ".join(f"{_guards_doc(g, fixed)}: top {_pad_doc(task, pt)}, left {_pad_doc(task, pl)}"
                                  for g, pt, pl, fixed in variants))
    return plan


def _guards_doc(guards: dict, fixed: dict) -> str:
    parts = [f"{k} {v}" for k, v in guards.items()] + [f"{k} {v} only" for k, v in fixed.items()]
    return ", ".join(parts) or "always"


def _pad_doc(task, r) -> str:
    return "TF SAME" if r[0] == "same" else _describe(task, r)


def _pad_cpp(r, axis: str) -> str:
    if r[0] == "same":
        return f"SameBefore('{axis}')"
    return _rule_cpp(r)

def render(plan: DilationPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of, _variant_condition

    t = plan.task
    cls = camel(t.name)
    sel = []
    index = {a.name: i for i, a in enumerate(t.attrs)}
    for guards, pt, pl, fixed in plan.variants:
        cond = " && ".join([_variant_condition(t, guards, [])] +
                           [f"ListIs({index[n]}, {{{', '.join(str(int(v)) for v in vals)}}})" for n, vals in fixed.items()])
        sel.append(f"    if ({cond}) {{\n"
                   f"        pt = {_pad_cpp(pt, 'h')};\n        pl = {_pad_cpp(pl, 'w')};\n        known = true;\n    }}\n")
    helpers = ""
    if any(r[0] == "same" for v in plan.variants for r in v[1:3]):
        helpers += _SAME_BEFORE
    if any(v[3] for v in plan.variants):
        helpers += _LIST_IS
    select = (helpers + "    int64_t pt = 0, pl = 0;\n    bool known = false;\n" + "".join(sel) +
              "    if (!known) {\n        return ge::GRAPH_FAILED;   // attrs of no variant the golden showed\n    }\n")
    ys = [o.name for o in t.outputs]
    names = [i.name for i in t.inputs] + ys
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    subs = {"@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
            "@XT@": _macro_of(t.inputs[plan.x].name), "@XI@": str(plan.x), "@FI@": str(plan.f),
            "@X_ID@": _ident(t.inputs[plan.x].name), "@F_ID@": _ident(t.inputs[plan.f].name),
            "@Y_ID@": _ident(ys[0]), "@DESC@": plan.notes[0],
            "@ARGS@": ", ".join(f"GM_ADDR {_ident(n)}" for n in names),
            "@SELECT@": select, "@DTYPE_BYTES@": _dtype_bytes_fn(), "@SYNC@": SYNC_PIPES,
            "@RESERVE@": str(int(knobs["ub_reserve_bytes"])),
            "@SPLIT@": core_split(knobs, "td->work", "td->units")}
    for k in PARAMS:
        subs[f"@{k.upper()}@"] = _rule_cpp(plan.rules[k])
    for k, v in subs.items():
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_SAME_BEFORE = r"""    // TensorFlow's SAME padding before the image along one axis: half the total
    auto SameBefore = [&](char axis) -> int64_t {
        const int64_t size = axis == 'h' ? td->h : td->w, s = axis == 'h' ? td->sh : td->sw;
        const int64_t r = axis == 'h' ? td->rh : td->rw, k = axis == 'h' ? td->kh : td->kw;
        const int64_t out = (size + s - 1) / s;
        const int64_t total = (out - 1) * s + (k - 1) * r + 1 - size;
        return total > 0 ? total / 2 : 0;
    };
"""
_LIST_IS = r"""    // a list attr equal to the values the golden was traced with (it refuses others here)
    auto ListIs = [&](size_t index, std::initializer_list<int64_t> want) -> bool {
        const gert::TypedContinuousVector<int64_t>* got = attrs->GetListInt(index);
        if (got == nullptr || got->GetSize() != want.size()) {
            return false;
        }
        size_t i = 0;
        for (int64_t v : want) {
            if (got->GetData()[i++] != v) {
                return false;
            }
        }
        return true;
    };
"""

_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// Morphological dilation, NHWC: y[b, oh, ow, c] = max over taps (dy, dx) of
//   xp[b, oh*sh + dy*rh, ow*sw + dx*rw, c] + f[dy, dx, c]
// where xp is x with pt rows and pl columns of -inf before it (and after, as far as a window reads):
// a tap in the padding gives -inf + f, which is NaN where f is NaN or +inf, as in the golden.
// A unit is (channel block, image, output row, run of at most 255 output pixels); channels are
// padded to whole 32-byte blocks in UB (pitch cbp), so every pixel starts a block. Per filter row,
// the span of the padded input row the run reads is one DMA (its padding set to -inf); per tap one
// Add of the tap's filter channels (repeat stride 0) to the run's input pixels (repeat stride sw
// pixels) and one Max into the accumulator, which the first tap's sum starts. Computed in the input
// type: the max of correctly rounded sums is the correctly rounded max.
// Packed pixels (one channel block of c channels, not whole blocks, under 512 bytes: a DMA burst per
// pixel would move at a fraction of the rate): the span and the output run move as one burst each,
// packed, and a Gather per group of pixels spreads them to the pitch (packs them back), by byte
// offset tables built once per core.
#include <cmath>
#include <initializer_list>
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t batch, h, w, c;            // x [batch, h, w, c]
    uint32_t kh, kw;                    // filter [kh, kw, c]
    uint32_t oh, ow;                    // y [batch, oh, ow, c]
    int32_t sh, sw, rh, rw, pt, pl;     // strides, rates, leading padding
    uint32_t cbp;                       // channels per block, their pitch in UB (whole 32-byte blocks)
    uint32_t cBlocks;
    uint32_t packed;                    // 1: pixels move packed (c channels) and are gathered to the pitch
    uint32_t group;                     // pixels per Gather: whole 32-byte blocks of packed channels
    uint32_t run;                       // output pixels per unit (<= 255: one repeat each)
    uint32_t runs;                      // units per output row
    uint32_t span;                      // input pixels one filter row of a unit reads, at most
    uint64_t work;                      // the core split's measure (elements x taps, instruction issue)
    uint64_t units;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @XT@;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR fAddr, GM_ADDR yAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(xAddr));
        fGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(fAddr));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(yAddr));
@UNIT_RANGE@        pipe_.InitBuffer(rowQue_, 2, td_.span * td_.cbp * sizeof(T));
        pipe_.InitBuffer(accQue_, 2, td_.run * td_.cbp * sizeof(T));
        pipe_.InitBuffer(sumBuf_, td_.run * td_.cbp * sizeof(T));
        pipe_.InitBuffer(fBuf_, td_.kh * td_.kw * td_.cbp * sizeof(T));
        if (td_.packed) {
            pipe_.InitBuffer(packedInQue_, 2, (td_.span * td_.c + td_.cbp) * sizeof(T));
            pipe_.InitBuffer(packedOutQue_, 2, td_.run * td_.c * sizeof(T));
            const uint32_t toPitch = td_.group * td_.cbp, toPacked = (td_.group * td_.c + 7) / 8 * 8;
            pipe_.InitBuffer(tableBuf_, (toPitch + toPacked + (toPitch > toPacked ? toPitch : toPacked)) * 4);
            toPitch_ = tableBuf_.GetWithOffset<int32_t>(toPitch, 0);
            toPacked_ = tableBuf_.GetWithOffset<int32_t>(toPacked, toPitch * 4);
            LocalTensor<int32_t> scratch = tableBuf_.GetWithOffset<int32_t>(toPitch > toPacked ? toPitch : toPacked,
                                                                            (toPitch + toPacked) * 4);
            // toPitch_[q * cbp + k]: the byte of packed element q * c + k; toPacked_[p * c + k]: of p * cbp + k
            OffsetTable(toPitch_, scratch, toPitch, td_.cbp, static_cast<int32_t>(td_.c) - static_cast<int32_t>(td_.cbp));
            OffsetTable(toPacked_, scratch, td_.group * td_.c, td_.c, static_cast<int32_t>(td_.cbp) - static_cast<int32_t>(td_.c));
        }
    }

    __aicore__ inline void Process()
    {
        uint32_t loadedBlock = td_.cBlocks;           // the channel block whose filter is in UB
        const uint64_t unitsPerImage = static_cast<uint64_t>(td_.oh) * td_.runs;
        for (uint64_t u = unitStart_; u < unitStart_ + unitCount_; ++u) {
            const uint32_t cBlock = static_cast<uint32_t>(u / (td_.batch * unitsPerImage));
            const uint32_t b = static_cast<uint32_t>(u / unitsPerImage % td_.batch);
            const uint32_t oy = static_cast<uint32_t>(u % unitsPerImage / td_.runs);
            const uint32_t ox0 = static_cast<uint32_t>(u % td_.runs) * td_.run;
            const uint32_t n = td_.ow - ox0 < td_.run ? td_.ow - ox0 : td_.run;
            const uint32_t c0 = cBlock * td_.cbp;
            const uint32_t cn = td_.c - c0 < td_.cbp ? td_.c - c0 : td_.cbp;
            if (cBlock != loadedBlock) {
                LoadFilter(c0, cn);
                loadedBlock = cBlock;
            }
            // acc = the first tap's sum, then Max with each other tap's
            LocalTensor<T> acc = accQue_.AllocTensor<T>();
            LocalTensor<T> sum = sumBuf_.Get<T>();
            for (uint32_t dy = 0; dy < td_.kh; ++dy) {
                const int32_t iy = static_cast<int32_t>(oy) * td_.sh - td_.pt + static_cast<int32_t>(dy) * td_.rh;
                LocalTensor<T> row = LoadRow(b, iy, ox0, n, c0, cn);
                for (uint32_t dx = 0; dx < td_.kw; ++dx) {
                    const uint32_t tap = dy * td_.kw + dx;
                    const uint32_t from = dx * static_cast<uint32_t>(td_.rw) * td_.cbp;
                    if (tap == 0) {
                        AddTap(acc, row[from], tap, n);
                    } else {
                        AddTap(sum, row[from], tap, n);
                        Max(acc, acc, sum, static_cast<int32_t>(n * td_.cbp));
                    }
                }
                rowQue_.FreeTensor(row);
            }
            accQue_.EnQue(acc);
            CopyOut(b, oy, ox0, n, c0, cn);
        }
    }

private:
    // The unit's channels of every tap, tap after tap at pitch cbp.
    __aicore__ inline void LoadFilter(uint32_t c0, uint32_t cn)
    {
        SyncPipes<HardEvent::V_MTE2>();             // the previous block's Adds are done with it
        DataCopyExtParams in(static_cast<uint16_t>(td_.kh * td_.kw), cn * sizeof(T), (td_.c - cn) * sizeof(T),
                             PadBlocks(cn), 0);
        DataCopyPad(fBuf_.Get<T>(), fGm_[c0], in, DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0.0f)));
        SyncPipes<HardEvent::MTE2_V>();
    }

    // Whole 32-byte blocks between a pixel's cn channels and the next pixel in UB.
    __aicore__ inline uint32_t PadBlocks(uint32_t cn) const
    {
        constexpr uint32_t epb = 32 / sizeof(T);
        return (td_.cbp - (cn + epb - 1) / epb * epb) / epb;
    }

    // The span of padded input row iy that a run of n output pixels from ox0 reads: the pixels in the
    // image by one DMA, the padding (columns outside the image, or a whole row above / below it) -inf.
    __aicore__ inline LocalTensor<T> LoadRow(uint32_t b, int32_t iy, uint32_t ox0, uint32_t n, uint32_t c0, uint32_t cn)
    {
        const int32_t first = static_cast<int32_t>(ox0) * td_.sw - td_.pl;
        const int32_t pixels = static_cast<int32_t>(n - 1) * td_.sw + static_cast<int32_t>(td_.kw - 1) * td_.rw + 1;
        const int32_t ix0 = first > 0 ? first : 0;
        int32_t ix1 = first + pixels - 1 < static_cast<int32_t>(td_.w) - 1 ? first + pixels - 1 : static_cast<int32_t>(td_.w) - 1;
        if (iy < 0 || iy >= static_cast<int32_t>(td_.h)) {
            ix1 = ix0 - 1;
        }
        LocalTensor<T> row = rowQue_.AllocTensor<T>();
        if (ix0 <= ix1) {
            const uint64_t src = ((static_cast<uint64_t>(b) * td_.h + static_cast<uint32_t>(iy)) * td_.w + ix0) * td_.c + c0;
            const uint32_t inImage = static_cast<uint32_t>(ix1 - ix0 + 1);
            LocalTensor<T> dst = row[static_cast<uint32_t>(ix0 - first) * td_.cbp];
            if (td_.packed) {
                LocalTensor<T> packed = packedInQue_.AllocTensor<T>();
                DataCopyExtParams in(1, inImage * td_.c * sizeof(T), 0, 0, 0);
                DataCopyPad(packed, xGm_[src], in, DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0.0f)));
                packedInQue_.EnQue(packed);
                packed = packedInQue_.DeQue<T>();
                for (uint32_t p = 0; p < inImage; p += td_.group) {
                    const uint32_t m = inImage - p < td_.group ? inImage - p : td_.group;
                    Gather(dst[p * td_.cbp], packed, toPitch_.ReinterpretCast<uint32_t>(),
                           static_cast<uint32_t>(p * td_.c * sizeof(T)), m * td_.cbp);
                }
                packedInQue_.FreeTensor(packed);
            } else if (cn == td_.c && td_.cbp == td_.c) {    // whole aligned pixels: one contiguous block
                DataCopyExtParams in(1, inImage * td_.c * sizeof(T), 0, 0, 0);
                DataCopyPad(dst, xGm_[src], in, DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0.0f)));
            } else {
                DataCopyExtParams in(static_cast<uint16_t>(inImage), cn * sizeof(T), (td_.c - cn) * sizeof(T),
                                     PadBlocks(cn), 0);
                DataCopyPad(dst, xGm_[src], in, DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0.0f)));
            }
        }
        rowQue_.EnQue(row);
        row = rowQue_.DeQue<T>();
        const uint32_t before = ix0 <= ix1 ? static_cast<uint32_t>(ix0 - first) : static_cast<uint32_t>(pixels);
        const uint32_t after = ix0 <= ix1 ? static_cast<uint32_t>(first + pixels - 1 - ix1) : 0;
        if (before > 0) {
            Duplicate(row, static_cast<T>(-INFINITY), static_cast<int32_t>(before * td_.cbp));
        }
        if (after > 0) {
            Duplicate(row[static_cast<uint32_t>(pixels) * td_.cbp - after * td_.cbp], static_cast<T>(-INFINITY),
                      static_cast<int32_t>(after * td_.cbp));
        }
        return row;
    }

    // dst[p] = src[p * sw] + f[tap] for the run's n pixels: one repeat a pixel, 256 bytes of channels a call.
    __aicore__ inline void AddTap(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t tap, uint32_t n)
    {
        constexpr uint32_t epb = 32 / sizeof(T);
        constexpr uint32_t lanes = 256 / sizeof(T);
        const uint8_t pitch = static_cast<uint8_t>(td_.cbp / epb);
        const BinaryRepeatParams rp(1, 1, 1, pitch, static_cast<uint8_t>(pitch * td_.sw), 0);
        LocalTensor<T> f = fBuf_.Get<T>();
        for (uint32_t s = 0; s < td_.cbp; s += lanes) {
            const uint64_t mask = td_.cbp - s < lanes ? td_.cbp - s : lanes;
            Add(dst[s], src[s], f[tap * td_.cbp + s], mask, static_cast<uint8_t>(n), rp);
        }
    }

    // table[i] = (i + (i / pitch) * delta) * sizeof(T), the byte offset entry i gathers from; i / pitch
    // as floor((i + 0.5) / pitch) in fp32 (exact: i < 2^16, pitch < 2^9)
    __aicore__ inline void OffsetTable(const LocalTensor<int32_t>& table, const LocalTensor<int32_t>& scratch,
                                       uint32_t count, uint32_t pitch, int32_t delta)
    {
        LocalTensor<float> quotient = scratch.ReinterpretCast<float>();
        CreateVecIndex(quotient, 0.0f, count);
        Adds(quotient, quotient, 0.5f, count);
        Muls(quotient, quotient, 1.0f / static_cast<float>(pitch), count);
        Cast(table, quotient, RoundMode::CAST_FLOOR, count);
        Muls(table, table, delta, count);
        CreateVecIndex(scratch, 0, count);
        Add(table, table, scratch, count);
        Muls(table, table, static_cast<int32_t>(sizeof(T)), count);
    }

    __aicore__ inline void CopyOut(uint32_t b, uint32_t oy, uint32_t ox0, uint32_t n, uint32_t c0, uint32_t cn)
    {
        LocalTensor<T> acc = accQue_.DeQue<T>();
        const uint64_t dst = ((static_cast<uint64_t>(b) * td_.oh + oy) * td_.ow + ox0) * td_.c + c0;
        if (td_.packed) {
            LocalTensor<T> packed = packedOutQue_.AllocTensor<T>();
            for (uint32_t p = 0; p < n; p += td_.group) {
                const uint32_t m = n - p < td_.group ? n - p : td_.group;
                Gather(packed[p * td_.c], acc, toPacked_.ReinterpretCast<uint32_t>(),
                       static_cast<uint32_t>(p * td_.cbp * sizeof(T)), m * td_.c);
            }
            accQue_.FreeTensor(acc);
            packedOutQue_.EnQue(packed);
            packed = packedOutQue_.DeQue<T>();
            DataCopyPad(yGm_[dst], packed, DataCopyExtParams(1, n * td_.c * sizeof(T), 0, 0, 0));
            packedOutQue_.FreeTensor(packed);
            return;
        }
        DataCopyExtParams out(static_cast<uint16_t>(n), cn * sizeof(T), PadBlocks(cn), (td_.c - cn) * sizeof(T), 0);
        DataCopyPad(yGm_[dst], acc, out);
        accQue_.FreeTensor(acc);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> rowQue_;
    TQue<QuePosition::VECOUT, 2> accQue_;
    TBuf<QuePosition::VECCALC> sumBuf_;
    TBuf<QuePosition::VECCALC> fBuf_;
    TQue<QuePosition::VECIN, 2> packedInQue_;
    TQue<QuePosition::VECOUT, 2> packedOutQue_;
    TBuf<QuePosition::VECCALC> tableBuf_;
    LocalTensor<int32_t> toPitch_;
    LocalTensor<int32_t> toPacked_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> fGm_;
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
    op.Init(@X_ID@, @F_ID@, @Y_ID@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& xs = context->GetInputShape(@XI@)->GetStorageShape();
    const gert::Shape& fs = context->GetInputShape(@FI@)->GetStorageShape();
    const gert::Shape& ys = context->GetOutputShape(0)->GetStorageShape();
    if (xs.GetDimNum() != 4 || fs.GetDimNum() != 3 || ys.GetDimNum() != 4) {
        return ge::GRAPH_FAILED;   // x [batch, h, w, c], filter [kh, kw, c], y [batch, oh, ow, c]
    }
    const ge::DataType dt = context->GetInputDesc(@XI@)->GetDataType();
    if (dt != ge::DT_FLOAT16 && dt != ge::DT_FLOAT) {
        return ge::GRAPH_FAILED;   // the kernel adds and compares in fp16 or fp32
    }
    td->batch = static_cast<uint32_t>(xs.GetDim(0));
    td->h = static_cast<uint32_t>(xs.GetDim(1));
    td->w = static_cast<uint32_t>(xs.GetDim(2));
    td->c = static_cast<uint32_t>(xs.GetDim(3));
    td->kh = static_cast<uint32_t>(fs.GetDim(0));
    td->kw = static_cast<uint32_t>(fs.GetDim(1));
    td->oh = static_cast<uint32_t>(ys.GetDim(1));
    td->ow = static_cast<uint32_t>(ys.GetDim(2));
    td->sh = static_cast<int32_t>(@SH@);
    td->sw = static_cast<int32_t>(@SW@);
    td->rh = static_cast<int32_t>(@RH@);
    td->rw = static_cast<int32_t>(@RW@);
    if (td->sh <= 0 || td->sw <= 0 || td->rh <= 0 || td->rw <= 0 || fs.GetDim(2) != xs.GetDim(3) ||
        ys.GetDim(0) != xs.GetDim(0) || ys.GetDim(3) != xs.GetDim(3) || td->batch * td->oh * td->ow * td->c == 0 ||
        td->kh * td->kw == 0 || td->sw > 255) {
        return ge::GRAPH_FAILED;
    }
@SELECT@    if (pt < 0 || pl < 0) {
        return ge::GRAPH_FAILED;
    }
    td->pt = static_cast<int32_t>(pt);
    td->pl = static_cast<int32_t>(pl);

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint32_t es = DtypeBytes(dt), epb = 32 / es;
    // channel block: all channels when the pitch fits a repeat stride of sw pixels (<= 255 blocks)
    uint32_t blocks = (td->c + epb - 1) / epb;
    const uint32_t maxBlocks = 255 / static_cast<uint32_t>(td->sw);
    blocks = blocks > maxBlocks ? maxBlocks : blocks;
    blocks = blocks > 128 ? 128 : blocks;           // at most 4 KB of channels per pixel
    // and the filter's taps and two windows of input pixels in half the UB (a 16 x 16 filter of 1024
    // channels takes more than all of it)
    const uint64_t window = static_cast<uint64_t>(td->kw - 1) * td->rw + 1;
    const uint64_t fitBlocks = ubSize / 2 / ((static_cast<uint64_t>(td->kh) * td->kw + 2 * window) * 32);
    if (fitBlocks == 0) {
        return ge::GRAPH_FAILED;
    }
    blocks = blocks > fitBlocks ? static_cast<uint32_t>(fitBlocks) : blocks;
    td->cBlocks = (td->c + blocks * epb - 1) / (blocks * epb);
    td->cbp = ((td->c + td->cBlocks - 1) / td->cBlocks + epb - 1) / epb * epb;
    // packed pixels: one block of c channels that are not whole blocks and make bursts under 512 B;
    // a Gather takes group pixels: whole blocks of packed channels, about 4096 table entries
    td->packed = td->cBlocks == 1 && td->c != td->cbp && td->c * es < 512 ? 1 : 0;
    uint32_t g = epb;
    for (uint32_t a = td->c % epb; a != 0;) {      // group = epb / gcd(c, epb)
        const uint32_t t = g % a;
        g = a;
        a = t;
    }
    td->group = epb / g;
    const uint32_t periods = 4096 / (td->group * (td->cbp + td->c));
    td->group *= periods > 1 ? periods : 1;
    // output pixels per unit: what fits the UB (two input spans, two accumulators, the sum, the
    // filter; packed: two packed spans and runs, the tables), at most 255 (one repeat per pixel),
    // fewer when that leaves cores idle
    const uint64_t reserve = @RESERVE@;
    const uint64_t pixelBytes = static_cast<uint64_t>(td->cbp) * es;
    const uint64_t packedBytes = td->packed ? static_cast<uint64_t>(td->c) * es : 0;
    const uint64_t fixed = reserve + static_cast<uint64_t>(td->kh) * td->kw * pixelBytes + 2 * window * pixelBytes +
                           (td->packed ? 2 * window * packedBytes + 2 * pixelBytes + 4 * 3 * static_cast<uint64_t>(td->group) * (td->cbp + td->c) + 256 : 0);
    const uint64_t perPixel = (3 + 2 * static_cast<uint64_t>(td->sw)) * pixelBytes + (2 * td->sw + 2) * packedBytes;
    if (ubSize <= fixed + perPixel) {
        return ge::GRAPH_FAILED;   // not even one output pixel's window fits UB
    }
    uint64_t run = (ubSize - fixed) / perPixel;
    run = run > 255 ? 255 : run;
    run = run > td->ow ? td->ow : run;
    const uint64_t rows = static_cast<uint64_t>(td->cBlocks) * td->batch * td->oh;
    uint64_t runs = (td->ow + run - 1) / run;
    if (rows * runs < coreNum) {
        const uint64_t want = (coreNum + rows - 1) / rows;
        const uint64_t most = (td->ow + 7) / 8;          // at least 8 pixels a unit
        runs = want < most ? (want > runs ? want : runs) : (most > runs ? most : runs);
    }
    td->run = static_cast<uint32_t>((td->ow + runs - 1) / runs);
    td->runs = static_cast<uint32_t>((td->ow + td->run - 1) / td->run);
    td->span = (td->run - 1) * static_cast<uint32_t>(td->sw) + (td->kw - 1) * static_cast<uint32_t>(td->rw) + 1;
    td->units = rows * td->runs;
    // the core split's measure: output elements x taps, plus a 256-lane repeat for each of a unit's
    // vector instructions (their issue, not their lanes, is the cost of a small unit)
    const uint64_t unitInstructions = static_cast<uint64_t>(td->kh) * (2 * td->kw + 3) + 2;
    td->work = static_cast<uint64_t>(td->batch) * td->oh * td->ow * td->c * td->kh * td->kw +
               td->units * unitInstructions * 256;
@SPLIT@    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
