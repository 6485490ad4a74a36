"""Attention (`softmax(scale * Q K^T + mask) V`, grouped kv heads, Q/K split in parts along D, BSND or
BNSD layouts, a bottom-right causal mask) lowers to a MIX kernel on the high-level Matmul API
(`cannsim/matmul.h`, docs/emulator-cube.md, docs/lowering.md "The attention pattern").

Recognition is structural and then checked numerically against the golden:

- the traced golden has exactly two batched products (aten bmm) and a softmax (`_softmax`, or
  exp / sum / div) between them; the inputs that reach the first product's left side are Q's parts
  (in `cat` order), its right side K's parts, the second product's right side V;
- for each distinct combination of attr values the smallest case is run through the golden in fp64
  on random inputs and compared with our attention model under each hypothesis (layout BSND/BNSD,
  causal or not, the scale from the attr or 1/sqrt(D)); exactly the matching hypothesis is kept;
- the hypotheses per combination become rules the tiling function evaluates from the attrs (a string
  attr that names the layout, a bool attr that switches the mask, a float attr with the <= 0 rule).

Each AIV takes blocks of at most 128 rows of one (batch, kv head): S = Q K^T on the cube (fp32),
the row softmax on the vector unit, P V on the cube in fp32 (P is not rounded to fp16/bf16: the
public bf16 cases fail the MARE limit with a rounded P), rows written to the output in its dtype.
Not served (Unsupported or per case): a sparse index mask (scatter), Skv above 16384 (a score row
must fit UB: no kv tiling yet), inputs that are not 4-D.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

SKV_MAX = 16384
MB_ROWS = 128
_VIEWS = {"view", "_unsafe_view", "reshape", "permute", "transpose", "expand", "clone", "contiguous", "unsqueeze",
          "squeeze", "alias", "detach", "t"}


@dataclass
class AttentionPlan:
    task: object
    q: list[int]                      # input indices of Q's parts along D
    k: list[int]
    v: int
    layout: tuple                     # ("const", bnsd) | ("attr", index, {value: bnsd})
    causal: tuple                     # ("const", bool) | ("attr", index, invert)
    scale: tuple                      # ("rsqrt",) | ("attr", index) | ("attr_or_rsqrt", index)
    pattern: str = "attention"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _placeholders_of(node) -> list:
    """Placeholders reaching `node` (depth first, argument order)."""
    seen, out = set(), []

    def walk(n):
        if n in seen:
            return
        seen.add(n)
        if n.op == "placeholder":
            out.append(n)
            return
        for a in n.all_input_nodes:
            walk(a)

    walk(node)
    return out


def _parts(node, ph_index) -> list[int] | None:
    """The inputs of one product operand, in concatenation order; None if anything but view ops
    and one `cat` lies between them and the product."""
    n = node
    while n.op == "call_function" and _name(n) in _VIEWS:
        n = n.args[0]
    if n.op == "placeholder":
        return [ph_index[n]]
    if n.op == "call_function" and _name(n) == "cat":
        out = []
        for a in n.args[0]:
            sub = _parts(a, ph_index)
            if sub is None:
                return None
            out += sub
        return out
    return None


def _structure(task, case):
    from copilot.lowering.cube import trace_case

    gm, present = trace_case(task, case)
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
    names = [_name(n) for n in nodes]
    bmms = [n for n in nodes if _name(n) in ("bmm", "mm", "matmul")]
    soft = "_softmax" in names or ("exp" in names or "exp_" in names) and "sum" in names
    if len(bmms) != 2 or not soft:
        return None
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    ph_index = {p: present[i] for i, p in enumerate(phs)}
    first, second = bmms
    if first not in second.all_input_nodes and not any(first in _ancestors(a) for a in second.all_input_nodes):
        return None
    q, k, v = _parts(first.args[0], ph_index), _parts(first.args[1], ph_index), _parts(second.args[1], ph_index)
    sparse = any(nm in ("scatter", "scatter_", "index_put", "index_put_", "gather") for nm in names)
    return q, k, v, sparse


def _ancestors(node) -> set:
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


def _scores(xs, q, k, v, bnsd: bool):
    """Q K^T per (batch, kv head) with the G query heads folded into rows (s major), V alike, under
    one layout hypothesis; None when the shapes do not fit it."""
    def bsnd(t):
        return t.permute(0, 2, 1, 3) if bnsd else t

    import torch

    qq = torch.cat([bsnd(xs[i]) for i in q], -1)
    kk = torch.cat([bsnd(xs[i]) for i in k], -1)
    vv = bsnd(xs[v])
    B, S, Nq, D = qq.shape
    Skv, Nkv = kk.shape[1], kk.shape[2]
    if kk.shape[0] != B or kk.shape[3] != D or Nq % Nkv or tuple(vv.shape[:3]) != (B, Skv, Nkv):
        return None
    G = Nq // Nkv
    qh = qq.reshape(B, S, Nkv, G, D).permute(0, 2, 1, 3, 4).reshape(B, Nkv, S * G, D)
    return qh @ kk.permute(0, 2, 3, 1), vv.permute(0, 2, 1, 3), (B, S, Nq, Nkv, G, Skv)


def _finish(raw, vh, dims, bnsd: bool, causal: bool, scale: float):
    """Our attention's output from the raw scores: what the kernel computes under one hypothesis."""
    import torch

    B, S, Nq, Nkv, G, Skv = dims
    s = raw * scale
    if causal:
        i = (torch.arange(S * G) // G).unsqueeze(-1)
        j = torch.arange(Skv).unsqueeze(0)
        s = s.masked_fill(j > i + (Skv - S), float("-inf"))
    mx = s.amax(-1, keepdim=True)
    p = torch.softmax(s, -1)
    p = torch.where(torch.isinf(mx) & (mx < 0), torch.zeros_like(p), p)
    o = (p @ vh).reshape(B, Nkv, S, G, -1).permute(0, 2, 1, 3, 4).reshape(B, S, Nq, -1)
    return o.permute(0, 2, 1, 3).contiguous() if bnsd else o.contiguous()


def _probe(task, case, q, k, v) -> set:
    """The hypotheses (bnsd, causal, scale kind) under which our model equals the golden on `case`."""
    import torch

    from copilot.oracle.golden import golden_arguments

    # batch 1 (dim 0 is the batch in both layouts) in fp32: the hypotheses differ far beyond its rounding
    g = torch.Generator().manual_seed(7)
    xs = [None if s is None else (torch.rand((1, *s[1:]), generator=g) * 2 - 1) for s in case.shapes]
    args, kwargs = golden_arguments(task, case, xs)
    with torch.no_grad():
        want = task.golden(*args, **kwargs)
        want = (want[0] if isinstance(want, (list, tuple)) else want).float()
        dqk = sum(int(case.shapes[i][-1]) for i in q)
        scales = {"rsqrt": 1.0 / math.sqrt(dqk)}
        for a in task.attrs:
            val = case.attrs.get(a.name)
            if a.type == "float" and isinstance(val, (int, float)) and val > 0:
                scales[("attr", a.name)] = float(val)
        hits = set()
        for bnsd in (False, True):
            sc = _scores(xs, q, k, v, bnsd)
            if sc is None:
                continue
            for causal in (False, True):
                for kind, scale in scales.items():
                    got = _finish(*sc, bnsd, causal, scale)
                    if got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-5):
                        hits.add((bnsd, causal, kind))
    return hits


def _combo(task, case) -> tuple:
    return tuple((a.name, repr(case.attrs.get(a.name))) for a in task.attrs)


def _attr_value(combo, name):
    import ast

    try:
        return ast.literal_eval(dict(combo)[name])
    except (ValueError, SyntaxError, KeyError):
        return None


def _rules(task, combos: dict) -> tuple:
    """The first (layout, causal, scale) rules that give, for every attr combination, one of the
    hypotheses its probe matched."""
    layouts = [("const", False), ("const", True)]
    layouts += [("attr", i, {"BNSD": True, "BSND": False}) for i, a in enumerate(task.attrs)
                if a.type in ("string", "str")]
    causals = [("const", False), ("const", True)]
    causals += [("attr", i, inv) for i, a in enumerate(task.attrs) if a.type == "bool" for inv in (False, True)]
    scales = [(kind, i) for i, a in enumerate(task.attrs) if a.type == "float"
              for kind in ("attr_or_rsqrt", "attr")] + [("rsqrt",)]

    def value(rule, combo):
        if rule[0] == "const":
            return rule[1]
        if rule[0] == "rsqrt":
            return "rsqrt"
        val = _attr_value(combo, task.attrs[rule[1]].name)
        if rule[0] == "attr" and isinstance(rule[2], dict):
            return rule[2].get(val)
        if rule[0] == "attr" and isinstance(rule[2], bool):
            return None if val is None else bool(val) != rule[2]
        name = task.attrs[rule[1]].name
        if rule[0] == "attr_or_rsqrt" and isinstance(val, (int, float)) and val <= 0:
            return "rsqrt"
        return ("attr", name) if isinstance(val, (int, float)) else None

    for sc in scales:                   # an attr's scale before a constant one; constant masks and layouts first
        for ca in causals:
            for la in layouts:
                if all((value(la, c), value(ca, c), value(sc, c)) in hits for c, hits in combos.items()):
                    return la, ca, sc
    raise Unsupported(f"{task.name}: no rule over the attrs gives the layout, causal mask and scale that the "
                      f"golden shows on each of {len(combos)} attr combinations")


def plan_attention(task):
    """An AttentionPlan, None if the golden is not an attention, Unsupported if it is one we do not serve."""
    try:
        st = _structure(task, task.cases[0])
    except Unsupported:
        return None
    if st is None:
        return None
    q, k, v, sparse = st
    if q is None or k is None or v is None or len(v) != 1:
        raise Unsupported(f"{task.name}: an attention whose Q/K/V are not inputs through views and one cat")
    if sparse:
        raise Unsupported(f"{task.name}: attention with a sparse index mask (scatter of selected kv positions) "
                          "is not lowered")
    if len(q) > 2 or len(k) > 2 or len(q) != len(k) and len(k) > 2:
        raise Unsupported(f"{task.name}: Q or K in more than two parts")
    v = v[0]
    for c in task.cases:
        if any(c.shapes[i] is None or len(c.shapes[i]) != 4 for i in q + k + [v]):
            raise Unsupported(f"{task.name}: case {c.id}: attention operands must be 4-D (BSND / BNSD)")
    by_combo: dict = {}
    for c in task.cases:
        key = _combo(task, c)
        size = sum(math.prod(s) for s in c.shapes if s is not None)
        if key not in by_combo or size < by_combo[key][0]:
            by_combo[key] = (size, c)
    if len(by_combo) > 12:
        raise Unsupported(f"{task.name}: {len(by_combo)} attr combinations (at most 12 are probed)")
    combos = {}
    for key, (_, c) in by_combo.items():
        hits = _probe(task, c, q, k, v)
        if not hits:
            raise Unsupported(f"{task.name}: case {c.id} does not match the attention model (layout, causal mask, "
                              "scale) under any hypothesis")
        combos[key] = hits
    layout, causal, scale = _rules(task, combos)
    plan = AttentionPlan(task, q, k, v, layout, causal, scale)
    for c in task.cases:
        skv = c.shapes[v][2 if _bnsd_of(plan, c) else 1]
        if skv > SKV_MAX:
            plan.unserved[c.id] = f"Skv {skv} > {SKV_MAX} (a score row must fit UB; no kv tiling yet)"
    plan.notes.append(f"attention: Q {[task.inputs[i].name for i in q]}, K {[task.inputs[i].name for i in k]}, "
                      f"V {task.inputs[v].name}; layout {_describe(task, layout)}, causal {_describe(task, causal)}, "
                      f"scale {_describe(task, scale)}; checked against the golden on {len(combos)} attr combination(s)")
    return plan


def _bnsd_of(plan, case) -> bool:
    if plan.layout[0] == "const":
        return plan.layout[1]
    a = plan.task.attrs[plan.layout[1]]
    return plan.layout[2].get(str(case.attrs.get(a.name)), False)


def _describe(task, rule) -> str:
    if rule[0] == "const":
        return ("BNSD" if rule[1] else "BSND") if isinstance(rule[1], bool) and len(rule) == 2 else str(rule[1])
    if rule[0] == "rsqrt":
        return "1/sqrt(D)"
    name = task.attrs[rule[1]].name
    if rule[0] == "attr_or_rsqrt":
        return f"{name} (<= 0: 1/sqrt(D))"
    return f"attr {name}"


def _layout_cpp(plan) -> str:
    r = plan.layout
    if r[0] == "const":
        return "true" if r[1] else "false"
    conds = [f'std::strcmp(attrs->GetAttrPointer<char>({r[1]}), "{val}") == 0' for val, b in r[2].items() if b]
    return " || ".join(conds) or "false"


def _causal_cpp(plan) -> str:
    r = plan.causal
    if r[0] == "const":
        return "true" if r[1] else "false"
    return f"{'!' if r[2] else ''}*attrs->GetAttrPointer<bool>({r[1]})"


def _scale_cpp(plan) -> str:
    r = plan.scale
    if r[0] == "rsqrt":
        return "1.0 / std::sqrt(static_cast<double>(dqk))"
    get = f"static_cast<double>(*attrs->GetAttrPointer<float>({r[1]}))"
    if r[0] == "attr":
        return get
    return f"({get} > 0.0 ? {get} : 1.0 / std::sqrt(static_cast<double>(dqk)))"


def render(plan: AttentionPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    ins = t.inputs
    yn = _ident(t.outputs[0].name)
    text = _KERNEL + "\n" + _TILING
    subs = {
        "@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
        "@QT@": _macro_of(ins[plan.q[0]].name), "@YT@": _macro_of(t.outputs[0].name),
        "@QIN@": ", ".join(str(i) for i in (plan.q + plan.q)[:2]), "@KIN@": ", ".join(str(i) for i in (plan.k + plan.k)[:2]),
        "@VIN@": str(plan.v), "@NQ@": str(len(plan.q)), "@NK@": str(len(plan.k)),
        "@ARGS@": ", ".join(f"GM_ADDR {_ident(i.name)}" for i in ins),
        "@ARGLIST@": ", ".join(_ident(i.name) for i in ins), "@Y@": yn,
        "@LAYOUT@": _layout_cpp(plan), "@CAUSAL@": _causal_cpp(plan), "@SCALE@": _scale_cpp(plan),
        "@DESC@": plan.notes[0] if plan.notes else "attention",
    }
    for key, val in subs.items():
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// Pattern: attention, y = softmax(scale * Q K^T (+ causal mask)) V per query head, a key/value head
// shared by G = Nq / Nkv query heads. A MIX kernel on the high-level Matmul API: each AIV takes a
// block of up to MB rows of one (batch, kv head) — rows are (s, g) pairs of its G query heads — stages
// the block's Q rows (parts concatenated along D) in its workspace slot, asks its AIC for
// S = Q K^T (fp32, IterateAll), runs the row softmax on the vector unit (scale, causal length, max,
// exp, sum, normalise; the masked tail is 0), stages V in fp32 once per (batch, kv head), asks for
// O = P V (fp32 x fp32 -> fp32) and writes O's rows to the output in its dtype.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr uint32_t MB_ROWS = 128;            // rows of a block (the cube's M)
constexpr uint32_t SKV_MAX = 16384;          // a score row in fp32 fits UB (no kv tiling yet)
constexpr uint32_t COPY_BYTES = 32 * 1024;   // UB chunk of a row copy (each side)
constexpr int32_t L1_HALF = 262016;          // each Matmul object's share of the AIC's L1 (910B: 524032 B)
constexpr int32_t L0C_HALF = 65536;          // and of L0C (128 KB)

constexpr uint32_t Q_IN[2] = {@QIN@};    // input indices of Q's parts
constexpr uint32_t K_IN[2] = {@KIN@};
constexpr uint32_t V_IN = @VIN@;

struct @T@ {
    AscendC::tiling::TCubeTiling mm1;        // S = Q K^T: (MB, Skv, Dqk), T x T -> float
    AscendC::tiling::TCubeTiling mm2;        // O = P V: (MB, Dv, Skv), float x float -> float
    uint32_t b, s, nq, nkv, g, skv, dqk, dv;
    uint32_t nQ, nK;                         // parts of Q and K along D
    uint32_t qd[2], kd[2];
    uint64_t qst[2][3], kst[2][3], vst[3], ost[3];   // (batch, seq, head) strides in elements
    uint32_t causal, stageK, mb, blocks, items, perAiv;
    float scale;
    uint64_t slot, qOff, kOff, sOff, vOff, oOff;     // bytes
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @QT@;
using YT = @YT@;

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

class @K@ {
public:
    using QType = MatmulType<TPosition::GM, CubeFormat::ND, T>;
    using KType = MatmulType<TPosition::GM, CubeFormat::ND, T, true>;
    using FType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

    __aicore__ inline void Run(GM_ADDR* args, GM_ADDR y, GM_ADDR workspace, const @T@& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm1_, &t_.mm1, mm2_, &t_.mm2);
        const uint32_t aiv = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t first = aiv * t_.perAiv;
        if (first >= t_.items) {
            return;
        }
        const uint32_t last = first + t_.perAiv < t_.items ? first + t_.perAiv : t_.items;
        for (uint32_t p = 0; p < t_.nQ; ++p) {
            qGm_[p].SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[Q_IN[p]]));
        }
        for (uint32_t p = 0; p < t_.nK; ++p) {
            kGm_[p].SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[K_IN[p]]));
        }
        vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[V_IN]));
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ YT*>(y));
        GM_ADDR ws = GetUserWorkspace(workspace) + static_cast<uint64_t>(aiv) * t_.slot;
        qsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws + t_.qOff));
        ksGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws + t_.kOff));
        sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.sOff));
        vsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.vOff));
        oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.oOff));
        const uint32_t rowPad = CeilTo(t_.skv, 64);
        pipe_.InitBuffer(rowBuf_, rowPad * sizeof(float));
        pipe_.InitBuffer(tmpBuf_, (rowPad / 32 + 64) * sizeof(float));
        pipe_.InitBuffer(inBuf_, COPY_BYTES);
        pipe_.InitBuffer(outBuf_, COPY_BYTES);
        uint64_t staged = ~0ull;
        for (uint32_t it = first; it < last; ++it) {
            const uint32_t head = it / t_.blocks;            // (batch, kv head)
            const uint32_t b = head / t_.nkv, n = head % t_.nkv;
            const uint32_t r0 = (it % t_.blocks) * t_.mb;
            const uint32_t rows = t_.g * t_.s - r0 < t_.mb ? t_.g * t_.s - r0 : t_.mb;
            if (staged != head) {
                StageKv(b, n);
                staged = head;
            }
            StageQ(b, n, r0, rows);
            PipeBarrier<PIPE_ALL>();
            GlobalTensor<T> kSrc = t_.stageK ? ksGm_ : kGm_[0][b * t_.kst[0][0] + n * t_.kst[0][2]];
            const uint32_t ldK = t_.stageK ? t_.dqk : static_cast<uint32_t>(t_.kst[0][1]);
            mm1_.SetOrgShape(rows, t_.skv, t_.dqk, ldK);
            mm1_.SetSingleShape(rows, t_.skv, t_.dqk);
            mm1_.SetTensorA(qsGm_);
            mm1_.SetTensorB(kSrc, true);
            mm1_.IterateAll(sGm_);
            Softmax(r0, rows);
            PipeBarrier<PIPE_ALL>();
            mm2_.SetOrgShape(rows, t_.dv, t_.skv, t_.skv);
            mm2_.SetSingleShape(rows, t_.dv, t_.skv);
            mm2_.SetTensorA(sGm_);
            mm2_.SetTensorB(vsGm_);
            mm2_.IterateAll(oGm_);
            WriteOut(b, n, r0, rows);
        }
        mm1_.End();
        mm2_.End();
    }

private:
    // rows x len elements, src row stride ss, dst row stride ds (elements), S -> D through UB
    template <typename S, typename D>
    __aicore__ inline void CopyRows(const GlobalTensor<D>& dst, uint64_t ds, const GlobalTensor<S>& src, uint64_t ss,
                                    uint32_t rows, uint32_t len)
    {
        const uint32_t pitch = CeilTo(len, 16);
        const uint32_t wide = sizeof(S) > sizeof(D) ? sizeof(S) : sizeof(D);
        uint32_t chunk = COPY_BYTES / (pitch * wide);
        chunk = chunk == 0 ? 1 : chunk;
        LocalTensor<S> in = inBuf_.Get<S>();
        LocalTensor<D> out = outBuf_.Get<D>();
        for (uint32_t r = 0; r < rows; r += chunk) {
            const uint32_t nr = rows - r < chunk ? rows - r : chunk;
            DataCopyExtParams cpIn{static_cast<uint16_t>(nr), static_cast<uint32_t>(len * sizeof(S)),
                                   static_cast<uint32_t>((ss - len) * sizeof(S)),
                                   static_cast<uint32_t>((pitch * sizeof(S) - CeilTo(len * sizeof(S), 32)) / 32), 0};
            DataCopyPadExtParams<S> pad{false, 0, 0, 0};
            DataCopyPad(in, src[r * ss], cpIn, pad);
            SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
            if constexpr (std::is_same<S, D>::value) {
                DataCopyExtParams cpOut{static_cast<uint16_t>(nr), static_cast<uint32_t>(len * sizeof(D)),
                                        static_cast<uint32_t>((pitch * sizeof(D) - CeilTo(len * sizeof(D), 32)) / 32),
                                        static_cast<uint32_t>((ds - len) * sizeof(D)), 0};
                DataCopyPad(dst[r * ds], in, cpOut);
            } else {
                SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
                WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                if constexpr (std::is_same<D, float>::value) {
                    Cast(out, in, RoundMode::CAST_NONE, nr * pitch);
                } else {
                    Cast(out, in, RoundMode::CAST_RINT, nr * pitch);
                }
                SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
                WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
                DataCopyExtParams cpOut{static_cast<uint16_t>(nr), static_cast<uint32_t>(len * sizeof(D)),
                                        static_cast<uint32_t>((pitch * sizeof(D) - CeilTo(len * sizeof(D), 32)) / 32),
                                        static_cast<uint32_t>((ds - len) * sizeof(D)), 0};
                DataCopyPad(dst[r * ds], out, cpOut);
                SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
                WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
            }
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
    }

    // K (if it has parts) and V (in fp32) of one (batch, kv head) into the slot.
    __aicore__ inline void StageKv(uint32_t b, uint32_t n)
    {
        if (t_.stageK) {
            uint32_t c = 0;
            for (uint32_t p = 0; p < t_.nK; ++p) {
                CopyRows<T, T>(ksGm_[c], t_.dqk, kGm_[p][b * t_.kst[p][0] + n * t_.kst[p][2]], t_.kst[p][1], t_.skv,
                               t_.kd[p]);
                c += t_.kd[p];
            }
        }
        CopyRows<T, float>(vsGm_, t_.dv, vGm_[b * t_.vst[0] + n * t_.vst[2]], t_.vst[1], t_.skv, t_.dv);
    }

    // The block's Q rows (s, g) -> slot rows, parts side by side.
    __aicore__ inline void StageQ(uint32_t b, uint32_t n, uint32_t r0, uint32_t rows)
    {
        for (uint32_t r = r0; r < r0 + rows;) {
            const uint32_t s = r / t_.g, g0 = r % t_.g;
            const uint32_t cnt = (t_.g - g0) < (r0 + rows - r) ? (t_.g - g0) : (r0 + rows - r);
            uint32_t c = 0;
            for (uint32_t p = 0; p < t_.nQ; ++p) {
                const uint64_t at = b * t_.qst[p][0] + s * t_.qst[p][1] + (n * t_.g + g0) * t_.qst[p][2];
                CopyRows<T, T>(qsGm_[static_cast<uint64_t>(r - r0) * t_.dqk + c], t_.dqk, qGm_[p][at], t_.qst[p][2], cnt,
                               t_.qd[p]);
                c += t_.qd[p];
            }
            r += cnt;
        }
    }

    // P = softmax(scale * S) row by row in place; a causal row keeps s + Skv - S + 1 columns.
    __aicore__ inline void Softmax(uint32_t r0, uint32_t rows)
    {
        LocalTensor<float> row = rowBuf_.Get<float>();
        LocalTensor<float> tmp = tmpBuf_.Get<float>();
        const uint32_t rowPad = CeilTo(t_.skv, 64);
        for (uint32_t i = 0; i < rows; ++i) {
            const uint32_t s = (r0 + i) / t_.g;
            int64_t keep = t_.skv;
            if (t_.causal) {
                const int64_t lim = static_cast<int64_t>(s) + t_.skv - t_.s + 1;
                keep = lim < keep ? lim : keep;
                keep = keep < 0 ? 0 : keep;
            }
            const uint32_t cnt = static_cast<uint32_t>(keep);
            Duplicate(row, 0.0f, rowPad);
            if (cnt > 0) {
                SetFlag<HardEvent::V_MTE2>(EVENT_ID1);
                WaitFlag<HardEvent::V_MTE2>(EVENT_ID1);
                DataCopyExtParams cpIn{1, static_cast<uint32_t>(cnt * sizeof(float)), 0, 0, 0};
                DataCopyPadExtParams<float> pad{true, 0, static_cast<uint8_t>(CeilTo(cnt, 8) - cnt), 0.0f};
                DataCopyPad(row, sGm_[static_cast<uint64_t>(i) * t_.skv], cpIn, pad);
                SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
                WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
                Muls(row, row, t_.scale, cnt);
                ReduceMax(tmp, row, tmp[16], cnt);
                SetFlag<HardEvent::V_S>(EVENT_ID1);
                WaitFlag<HardEvent::V_S>(EVENT_ID1);
                const float mx = tmp.GetValue(0);
                SetFlag<HardEvent::S_V>(EVENT_ID1);
                WaitFlag<HardEvent::S_V>(EVENT_ID1);
                Adds(row, row, -mx, cnt);
                Exp(row, row, cnt);
                ReduceSum(tmp, row, tmp[16], cnt);
                SetFlag<HardEvent::V_S>(EVENT_ID1);
                WaitFlag<HardEvent::V_S>(EVENT_ID1);
                const float sum = tmp.GetValue(0);
                SetFlag<HardEvent::S_V>(EVENT_ID1);
                WaitFlag<HardEvent::S_V>(EVENT_ID1);
                Muls(row, row, 1.0f / sum, cnt);
            }
            SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
            DataCopyExtParams cpOut{1, static_cast<uint32_t>(t_.skv * sizeof(float)), 0, 0, 0};
            DataCopyPad(sGm_[static_cast<uint64_t>(i) * t_.skv], row, cpOut);
            SetFlag<HardEvent::MTE3_V>(EVENT_ID1);
            WaitFlag<HardEvent::MTE3_V>(EVENT_ID1);
        }
    }

    // O's rows (s, g) to the output in its dtype.
    __aicore__ inline void WriteOut(uint32_t b, uint32_t n, uint32_t r0, uint32_t rows)
    {
        for (uint32_t r = r0; r < r0 + rows;) {
            const uint32_t s = r / t_.g, g0 = r % t_.g;
            const uint32_t cnt = (t_.g - g0) < (r0 + rows - r) ? (t_.g - g0) : (r0 + rows - r);
            const uint64_t at = b * t_.ost[0] + s * t_.ost[1] + (n * t_.g + g0) * t_.ost[2];
            CopyRows<float, YT>(yGm_[at], t_.ost[2], oGm_[static_cast<uint64_t>(r - r0) * t_.dv], t_.dv, cnt, t_.dv);
            r += cnt;
        }
    }

    TPipe pipe_;
    Matmul<QType, KType, FType, BiasType> mm1_;
    Matmul<FType, FType, FType, BiasType> mm2_;
    TBuf<TPosition::VECCALC> rowBuf_, tmpBuf_, inBuf_, outBuf_;
    GlobalTensor<T> qGm_[2], kGm_[2], vGm_, qsGm_, ksGm_;
    GlobalTensor<float> sGm_, vsGm_, oGm_;
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
// (batch, seq, head) strides and (B, S, N, D) of a 4-D BSND / BNSD tensor
static bool AttnDims(const gert::Shape& s, bool bnsd, uint64_t st[3], uint32_t d[4])
{
    if (s.GetDimNum() != 4) {
        return false;
    }
    uint64_t stride[4];
    uint64_t acc = 1;
    for (int32_t i = 3; i >= 0; --i) {
        stride[i] = acc;
        acc *= static_cast<uint64_t>(s.GetDim(i));
    }
    const int32_t ds = bnsd ? 2 : 1, dn = bnsd ? 1 : 2;
    st[0] = stride[0];
    st[1] = stride[ds];
    st[2] = stride[dn];
    d[0] = static_cast<uint32_t>(s.GetDim(0));
    d[1] = static_cast<uint32_t>(s.GetDim(ds));
    d[2] = static_cast<uint32_t>(s.GetDim(dn));
    d[3] = static_cast<uint32_t>(s.GetDim(3));
    return true;
}

static uint64_t Align512(uint64_t v) { return (v + 511) / 512 * 512; }

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    (void)attrs;
    const bool bnsd = @LAYOUT@;
    @T@* t = context->GetTilingData<@T@>();
    t->nQ = @NQ@;
    t->nK = @NK@;
    uint32_t qd[2][4], kd[2][4], vd[4], od[4];
    for (uint32_t p = 0; p < t->nQ; ++p) {
        if (!AttnDims(context->GetInputShape(Q_IN[p])->GetStorageShape(), bnsd, t->qst[p], qd[p])) {
            return ge::GRAPH_FAILED;
        }
        t->qd[p] = qd[p][3];
    }
    for (uint32_t p = 0; p < t->nK; ++p) {
        if (!AttnDims(context->GetInputShape(K_IN[p])->GetStorageShape(), bnsd, t->kst[p], kd[p])) {
            return ge::GRAPH_FAILED;
        }
        t->kd[p] = kd[p][3];
    }
    if (!AttnDims(context->GetInputShape(V_IN)->GetStorageShape(), bnsd, t->vst, vd) ||
        !AttnDims(context->GetOutputShape(0)->GetStorageShape(), bnsd, t->ost, od)) {
        return ge::GRAPH_FAILED;
    }
    t->b = qd[0][0];
    t->s = qd[0][1];
    t->nq = qd[0][2];
    t->skv = vd[1];
    t->nkv = vd[2];
    t->dv = vd[3];
    t->dqk = 0;
    uint32_t dk = 0;
    for (uint32_t p = 0; p < t->nQ; ++p) {
        if (qd[p][0] != t->b || qd[p][1] != t->s || qd[p][2] != t->nq) {
            return ge::GRAPH_FAILED;
        }
        t->dqk += qd[p][3];
    }
    for (uint32_t p = 0; p < t->nK; ++p) {
        if (kd[p][0] != t->b || kd[p][1] != t->skv || kd[p][2] != t->nkv) {
            return ge::GRAPH_FAILED;
        }
        dk += kd[p][3];
    }
    if (dk != t->dqk || vd[0] != t->b || t->nkv == 0 || t->nq % t->nkv != 0 || t->skv == 0 || t->skv > SKV_MAX ||
        od[0] != t->b || od[1] != t->s || od[2] != t->nq || od[3] != t->dv) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t dqk = t->dqk;
    t->g = t->nq / t->nkv;
    t->causal = (@CAUSAL@) ? 1 : 0;
    t->scale = static_cast<float>(@SCALE@);
    t->stageK = t->nK > 1 ? 1 : 0;
    const uint32_t rows = t->g * t->s;
    t->mb = rows < MB_ROWS ? rows : MB_ROWS;
    t->blocks = (rows + t->mb - 1) / t->mb;
    t->items = t->b * t->nkv * t->blocks;

    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const auto dt = static_cast<matmul_tiling::DataType>(context->GetInputDesc(Q_IN[0])->GetDataType());
    if (dt != matmul_tiling::DataType::DT_FLOAT16 && dt != matmul_tiling::DataType::DT_BF16) {
        return ge::GRAPH_FAILED;
    }
    matmul_tiling::MatmulApiTiling m1(plat);
    m1.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt);
    m1.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, dt, true);
    m1.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    m1.SetShape(static_cast<int32_t>(t->mb), static_cast<int32_t>(t->skv), static_cast<int32_t>(dqk));
    m1.SetOrgShape(static_cast<int32_t>(t->mb), static_cast<int32_t>(t->skv), static_cast<int32_t>(dqk));
    m1.SetBias(false);
    m1.SetBufferSpace(L1_HALF, L0C_HALF, -1);   // two objects share the AIC's L1 and L0C
    // and L0A / L0B: base blocks of at most 128 x 128 x (64 B16 | 32 fp32) keep both within 64 KB
    m1.SetFixSplit(-1, static_cast<int32_t>(t->skv < 128 ? (t->skv + 15) / 16 * 16 : 128), 64);
    if (m1.GetTiling(t->mm1) == -1) {
        return ge::GRAPH_FAILED;
    }
    matmul_tiling::MatmulApiTiling m2(plat);
    const auto f32 = matmul_tiling::DataType::DT_FLOAT;
    m2.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    m2.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    m2.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    m2.SetShape(static_cast<int32_t>(t->mb), static_cast<int32_t>(t->dv), static_cast<int32_t>(t->skv));
    m2.SetOrgShape(static_cast<int32_t>(t->mb), static_cast<int32_t>(t->dv), static_cast<int32_t>(t->skv));
    m2.SetBias(false);
    m2.SetBufferSpace(L1_HALF, L0C_HALF, -1);
    m2.SetFixSplit(-1, static_cast<int32_t>(t->dv < 128 ? (t->dv + 15) / 16 * 16 : 128), 32);
    if (m2.GetTiling(t->mm2) == -1) {
        return ge::GRAPH_FAILED;
    }
    // items (batch, kv head, row block) in contiguous runs per AIV; a MIX block is one AIC + two AIVs
    const uint32_t aivMax = 2 * plat.GetCoreNumAic();
    t->perAiv = (t->items + aivMax - 1) / aivMax;
    const uint32_t aivs = (t->items + t->perAiv - 1) / t->perAiv;
    const uint32_t blocks = (aivs + 1) / 2;
    context->SetBlockDim(blocks);
    const uint64_t es = 2;
    t->qOff = 0;
    t->kOff = Align512(t->qOff + static_cast<uint64_t>(t->mb) * dqk * es);
    t->sOff = Align512(t->kOff + (t->stageK ? static_cast<uint64_t>(t->skv) * dqk * es : 0));
    t->vOff = Align512(t->sOff + static_cast<uint64_t>(t->mb) * t->skv * 4);
    t->oOff = Align512(t->vOff + static_cast<uint64_t>(t->skv) * t->dv * 4);
    t->slot = Align512(t->oOff + static_cast<uint64_t>(t->mb) * t->dv * 4);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + t->slot * 2 * blocks;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
