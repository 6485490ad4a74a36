"""Recurrent layers (`nn.LSTM` / `nn.GRU` with their weights passed as tensor lists, one element per
layer and direction) lower to a MIX kernel on the high-level Matmul API (docs/lowering.md
"Recurrent layers").

Recognition is by the inputs' structure, then checked numerically against the golden:

- one plain 3-D input x, two 2-D tensor lists whose elements have the same row count gH (W_ih, then
  W_hh, in proto order), optionally two 1-D lists of gH (b_ih, b_hh), a 2-D list whose rows differ
  from gH (the LSTM projection W_hr), and plain 3-D optional inputs (h0, then c0);
- the attrs' roles from the case shapes: hidden size = the int attr with gH = gates x H on every case,
  layers and bidirectional = an int attr L and a bool attr with list length = L x directions, the
  projection = the int attr equal to W_hh's columns where W_hr is given, the bias switch = the bool
  attr false exactly where the bias lists are absent; batch-first is whichever bool attr (or none)
  makes the model match;
- the cell (LSTM: gates i, f, g, o; GRU: r, z, n with n = tanh(x_n + r (h_n + b_hn))) and the
  batch-first rule are chosen by running our model of the kernel's arithmetic against the golden in
  fp32 on the smallest case of every attr combination; exactly the matching hypothesis is kept.

The kernel: the batch is split into groups of rows, one AIV per (group, direction); per layer its
AIV converts the layer's weights to fp32 in its workspace slot, asks its AIC for the input projection
of every time step at once (X W_ih^T + b_ih, one product of S x rows), then per step for
h_{t-1} W_hh^T + b_hh (and, with a projection, for h = m W_hr^T), and runs the gate epilogue on the
vector unit (sigmoid, tanh, the c / h update). The two directions of a bidirectional group are the
two AIVs of one core; they meet at a cross-core barrier (mode 1) before each layer reads the last
one's output. Every product is fp32 x fp32 -> fp32 on the cube.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from copilot.errors import Unsupported

LSTM_GATES, GRU_GATES = 4, 3


@dataclass
class RecurrentPlan:
    task: object
    cell: str                         # "lstm" | "gru"
    roles: dict                       # input role -> input index (x, wih, whh, bih, bhh, whr, h0, c0)
    attrs: dict                       # attr role -> ("attr", index) | ("const", value)
    pattern: str = "recurrent"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    @property
    def gates(self) -> int:
        return LSTM_GATES if self.cell == "lstm" else GRU_GATES

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _shape_roles(task) -> dict | None:
    """Input roles from the element shapes (each list seen in any case that gives it); None if the
    inputs are not a recurrent layer's."""
    ins = task.inputs
    lists = [i for i, s in enumerate(ins) if s.is_list]
    plain = [i for i, s in enumerate(ins) if not s.is_list]
    if len(lists) < 2 or not plain or ins[plain[0]].optional:
        return None
    if any(c.shapes[plain[0]] is None or len(c.shapes[plain[0]]) != 3 for c in task.cases):
        return None
    seen = {}                            # list input -> (element rank, first element's rows)
    for i in lists:
        given = [c.shapes[i] for c in task.cases if c.shapes[i]]
        if not given or any(len({len(e) for e in s}) != 1 for s in given):
            return None
        seen[i] = (len(given[0][0]), given[0][0][0])
    two = [i for i in lists if seen[i][0] == 2]
    one = [i for i in lists if seen[i][0] == 1]
    if len(two) < 2 or seen[two[0]][1] != seen[two[1]][1] or len(one) not in (0, 2) or len(two) > 3:
        return None
    gh = seen[two[0]][1]
    roles = {"x": plain[0], "wih": two[0], "whh": two[1]}
    if len(two) == 3:
        if seen[two[2]][1] == gh:
            return None
        roles["whr"] = two[2]
    if one:
        if any(seen[i][1] != gh for i in one):
            return None
        roles["bih"], roles["bhh"] = one
    states = plain[1:]
    if len(states) > 2 or any(not ins[i].optional for i in states):
        return None
    for name, i in zip(("h0", "c0"), states):
        roles[name] = i
    return roles


def _int_attrs(task):
    return [i for i, a in enumerate(task.attrs) if a.type == "int"]


def _bool_attrs(task):
    return [i for i, a in enumerate(task.attrs) if a.type == "bool"]


def _val(task, case, rule):
    if rule[0] == "const":
        return rule[1]
    a = task.attrs[rule[1]]
    v = case.attrs.get(a.name, a.default)
    return v


def _attr_roles(task, roles: dict, gates: int) -> list[dict]:
    """Every assignment of attr roles the case shapes allow (batch-first is left open)."""
    sh = lambda c, r: c.shapes[roles[r]] if r in roles else None    # noqa: E731
    out = []
    ints, bools = _int_attrs(task), _bool_attrs(task)
    for hi in ints:
        if not all(isinstance(_val(task, c, ("attr", hi)), int) and
                   all(e[0] == gates * _val(task, c, ("attr", hi)) for e in sh(c, "wih")) for c in task.cases):
            continue
        for li in [i for i in ints if i != hi]:
            for bd in [("attr", i) for i in bools] + [("const", False)]:
                def dirs(c):
                    return 2 if _val(task, c, bd) else 1
                if not all(isinstance(_val(task, c, ("attr", li)), int) and
                           len(sh(c, "wih")) == _val(task, c, ("attr", li)) * dirs(c) == len(sh(c, "whh"))
                           for c in task.cases):
                    continue
                projs = [("attr", i) for i in ints if i not in (hi, li)] if "whr" in roles else []
                for pj in projs + [("const", 0)]:
                    def heff(c):
                        p = _val(task, c, pj) or 0
                        return p if p > 0 else _val(task, c, ("attr", hi))
                    ok = all(all(e[1] == heff(c) for e in sh(c, "whh")) and
                             ((_val(task, c, pj) or 0) > 0) == (sh(c, "whr") is not None) for c in task.cases)
                    if not ok:
                        continue
                    used = {bd[1]} if bd[0] == "attr" else set()
                    biases = [("attr", i) for i in bools if i not in used
                              if "bih" in roles and all(bool(_val(task, c, ("attr", i))) ==
                                                        (sh(c, "bih") is not None) for c in task.cases)]
                    for bs in biases + [("const", True)]:
                        out.append({"hidden": ("attr", hi), "layers": ("attr", li), "bidir": bd,
                                    "proj": pj, "bias": bs})
    return out


def model(xs, cell: str, hidden: int, layers: int, dirs: int, proj: int, batch_first: bool, use_bias: bool):
    """What the kernel computes, in torch (float64 or the inputs' float): (y, hn[, cn])."""
    import torch

    x, wih, whh, bih, bhh, whr, h0, c0 = xs
    if batch_first:
        x = x.transpose(0, 1)
    S, B = x.shape[0], x.shape[1]
    heff = proj if proj > 0 else hidden
    inp = x
    hn, cn = [], []
    for l in range(layers):
        outs = []
        for d in range(dirs):
            idx = l * dirs + d
            gx = inp @ wih[idx].T
            if use_bias and bih is not None:
                gx = gx + bih[idx]
            h = h0[idx] if h0 is not None else torch.zeros(B, heff, dtype=x.dtype)
            c = c0[idx] if c0 is not None else torch.zeros(B, hidden, dtype=x.dtype)
            ys = [None] * S
            for k in range(S):
                t = k if d == 0 else S - 1 - k
                r = h @ whh[idx].T
                if use_bias and bhh is not None:
                    r = r + bhh[idx]
                g = gx[t]
                H = hidden
                if cell == "lstm":
                    i_, f_ = torch.sigmoid(g[:, :H] + r[:, :H]), torch.sigmoid(g[:, H:2 * H] + r[:, H:2 * H])
                    gg, o_ = torch.tanh(g[:, 2 * H:3 * H] + r[:, 2 * H:3 * H]), torch.sigmoid(g[:, 3 * H:] + r[:, 3 * H:])
                    c = f_ * c + i_ * gg
                    h = o_ * torch.tanh(c)
                    if proj > 0:
                        h = h @ whr[idx].T
                else:
                    rr, z = torch.sigmoid(g[:, :H] + r[:, :H]), torch.sigmoid(g[:, H:2 * H] + r[:, H:2 * H])
                    n = torch.tanh(g[:, 2 * H:] + rr * r[:, 2 * H:])
                    h = n + z * (h - n)
                ys[t] = h
            outs.append(torch.stack(ys))
            hn.append(h)
            cn.append(c)
        inp = torch.cat(outs, -1)
    y = inp.transpose(0, 1) if batch_first else inp
    res = [y, torch.stack(hn)]
    if cell == "lstm":
        res.append(torch.stack(cn))
    return res


def _hypotheses(task, cells: list[str], cands: list[dict]) -> list[tuple]:
    return [(cell, tuple(sorted(c.items())), bf) for cell in cells for c in cands
            for bf in [("attr", i) for i in _bool_attrs(task)] + [("const", False)]]


def _probe(task, case, roles: dict, hyps: list[tuple]) -> list[tuple]:
    """The (cell, attr roles, batch-first rule) hypotheses under which the model equals the golden."""
    import warnings

    import torch

    from copilot.lowering.lists import _call_golden

    g = torch.Generator().manual_seed(11)

    def rnd(shape):
        return torch.rand(shape, generator=g) * 0.4 - 0.2

    # the sequence and the batch cut to k steps / rows (x's first two dims, the states' second)
    x_shape = case.shapes[roles["x"]]
    k = min(x_shape[0], x_shape[1], 3)
    cut = {roles["x"]: (k, k, x_shape[2])}
    for r in ("h0", "c0"):
        if r in roles and case.shapes[roles[r]] is not None:
            s0 = case.shapes[roles[r]]
            cut[roles[r]] = (s0[0], k, *s0[2:])
    ins = []
    for i, s in enumerate(case.shapes):
        s = cut.get(i, s)
        if s is None:
            ins.append(None)
        elif isinstance(s, list):
            ins.append([rnd(e) for e in s])
        else:
            ins.append(rnd(s))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _call_golden(task, ins, case.attrs)
    want = [w.float() for w in (want if isinstance(want, (list, tuple)) else [want])]
    xs = [ins[roles[r]] if r in roles else None for r in ("x", "wih", "whh", "bih", "bhh", "whr", "h0", "c0")]
    hits = []
    for hyp in hyps:
        cell, cand, bf = hyp[0], dict(hyp[1]), hyp[2]
        try:
            got = model(xs, cell, _val(task, case, cand["hidden"]), _val(task, case, cand["layers"]),
                        2 if _val(task, case, cand["bidir"]) else 1, _val(task, case, cand["proj"]) or 0,
                        bool(_val(task, case, bf)), bool(_val(task, case, cand["bias"])))
        except (RuntimeError, IndexError, TypeError):
            continue
        if len(got) == len(want) and all(a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5)
                                          for a, b in zip(got, want)):
            hits.append(hyp)
    return hits


def plan_recurrent(task):
    """A RecurrentPlan, None if the golden is not a recurrent layer over tensor-list weights,
    Unsupported if it is one we do not serve."""
    if not task.cases or not any(getattr(i, "is_list", False) for i in task.inputs):
        return None
    roles = _shape_roles(task)
    if roles is None:
        return None
    first = next(c for c in task.cases if c.shapes[roles["wih"]])
    gh = first.shapes[roles["wih"]][0][0]
    cells = [c for c, g in (("lstm", LSTM_GATES), ("gru", GRU_GATES)) if gh % g == 0]
    cands = [c for cell in cells for c in _attr_roles(task, roles, LSTM_GATES if cell == "lstm" else GRU_GATES)]
    if not cands:
        return None
    uniq = {tuple(sorted(c.items())): c for c in cands}
    by_combo: dict = {}
    bools = [task.attrs[i].name for i in _bool_attrs(task)]
    for c in task.cases:      # one probe per structure: bool attrs, the inputs given, the lists' lengths
        key = (tuple(repr(c.attrs.get(n)) for n in bools), tuple(s is None for s in c.shapes),
               tuple(len(s) if isinstance(s, list) else 0 for s in c.shapes))
        size = sum(c.numel(i) for i in range(len(c.shapes)))
        if key not in by_combo or size < by_combo[key][0]:
            by_combo[key] = (size, c)
    if len(by_combo) > 24:
        raise Unsupported(f"{task.name}: {len(by_combo)} attr / optional-input combinations (at most 24 are probed)")
    common = _hypotheses(task, cells, list(uniq.values()))
    for _, c in sorted(by_combo.values(), key=lambda sc: sc[0]):
        common = _probe(task, c, roles, common)
        if not common:
            raise Unsupported(f"{task.name}: case {c.id} does not match an LSTM / GRU model (gates, attr roles, "
                              "batch-first) under any hypothesis")
    cell, cand, bf = sorted(common, key=repr)[0]
    attrs = dict(cand)
    attrs["batch_first"] = bf
    plan = RecurrentPlan(task, cell, roles, attrs)
    names = {k: task.inputs[i].name for k, i in roles.items()}

    def desc(rule):
        return task.attrs[rule[1]].name if rule[0] == "attr" else repr(rule[1])

    plan.notes.append(f"recurrent: {cell.upper()} cell, inputs {names}; hidden {desc(attrs['hidden'])}, layers "
                      f"{desc(attrs['layers'])}, bidirectional {desc(attrs['bidir'])}, projection "
                      f"{desc(attrs['proj'])}, bias {desc(attrs['bias'])}, batch-first {desc(attrs['batch_first'])}; "
                      f"checked against the golden on {len(by_combo)} combination(s)")
    return plan


def _rule_cpp(task, rule, kind: str) -> str:
    if rule[0] == "const":
        return ("true" if rule[1] else "false") if kind == "bool" else str(int(rule[1]))
    if kind == "bool":
        return f"(*attrs->GetAttrPointer<bool>({rule[1]}))"
    return f"(*attrs->GetAttrPointer<int64_t>({rule[1]}))"


def render(plan: RecurrentPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.source import _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    r = plan.roles
    ins = ", ".join(f"GM_ADDR {_ident(i.name)}" for i in t.inputs)
    outs = ", ".join(f"GM_ADDR {_ident(o.name)}" for o in t.outputs)

    def idx(role):
        return str(r.get(role, -1))

    subs = {
        "@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
        "@XT@": _macro_of(t.inputs[r["x"]].name), "@DESC@": plan.notes[0] if plan.notes else "recurrent",
        "@LSTM@": "true" if plan.cell == "lstm" else "false", "@GATES@": str(plan.gates),
        "@ARGS@": ins, "@OUTARGS@": outs,
        "@ARGLIST@": ", ".join(_ident(i.name) for i in t.inputs),
        "@OUTLIST@": ", ".join(_ident(o.name) for o in t.outputs),
        "@NOUT@": str(len(t.outputs)),
        "@X_IN@": idx("x"), "@WIH_IN@": idx("wih"), "@WHH_IN@": idx("whh"), "@BIH_IN@": idx("bih"),
        "@BHH_IN@": idx("bhh"), "@WHR_IN@": idx("whr"), "@H0_IN@": idx("h0"), "@C0_IN@": idx("c0"),
        "@HIDDEN@": _rule_cpp(t, plan.attrs["hidden"], "int"), "@LAYERS@": _rule_cpp(t, plan.attrs["layers"], "int"),
        "@BIDIR@": _rule_cpp(t, plan.attrs["bidir"], "bool"), "@PROJ@": _rule_cpp(t, plan.attrs["proj"], "int"),
        "@BIAS@": _rule_cpp(t, plan.attrs["bias"], "bool"),
        "@BATCHFIRST@": _rule_cpp(t, plan.attrs["batch_first"], "bool"),
    }
    text = _KERNEL + "\n" + _TILING
    for key, val in subs.items():
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// @DESC@.
// Pattern: a recurrent layer stack (LSTM gates i, f, g, o / GRU gates r, z, n), numLayers x directions
// cells over S steps. A MIX kernel on the high-level Matmul API, every product fp32 x fp32 -> fp32:
// the batch is cut into groups of `bs` rows; one AIV per (group, direction). Per layer the AIV converts
// its direction's weights to fp32 in its workspace slot, asks its AIC for the input projection of all
// steps at once (Gx = X W_ih^T + b_ih, S x rows), then per step for R = h W_hh^T + b_hh (and with a
// projection for h = m W_hr^T) and runs the gate epilogue on the vector unit in row chunks. The layer's
// output (fp32) is the next layer's X; the two AIVs of a bidirectional group meet at a cross-core
// barrier (mode 1) before a layer reads it. Rows of X / Gx / Y are (t, j) at t * ts + j * js: (ts, js) =
// (rows, 1) for (S, B, .) inputs, (1, S) batch-first.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "register/op_def_registry.h"

constexpr bool IS_LSTM = @LSTM@;
constexpr uint32_t GATES = @GATES@;
constexpr int32_t X_IN = @X_IN@, WIH_IN = @WIH_IN@, WHH_IN = @WHH_IN@, BIH_IN = @BIH_IN@, BHH_IN = @BHH_IN@;
constexpr int32_t WHR_IN = @WHR_IN@, H0_IN = @H0_IN@, C0_IN = @C0_IN@;
constexpr uint32_t NOUT = @NOUT@;
constexpr uint32_t TILES = 12;                  // fp32 row tiles of rc x hp in UB
constexpr uint32_t UB_TILE_BYTES = 180 * 1024;  // their share of the AIV's 192 KB UB
constexpr uint16_t LAYER_FLAG = 3;              // the bidirectional pair's barrier

enum Slot : uint32_t { S_WIH = 0, S_WHH, S_WHR, S_BIH, S_BHH, S_ZB, S_GX, S_R, S_H, S_C, S_M, S_END };

struct @T@ {
    AscendC::tiling::TCubeTiling cube;     // (S x bs, max(gH, P), max(K)) fp32, B transposed, fp32 bias
    uint32_t s, b, in, h, p, heff, gh, layers, dirs, bf;
    uint32_t hasBias, hasH0, hasC0, bs, groups, rc, hp;
    uint64_t xbuf;                          // bytes of one X / Y buffer of a group
    uint64_t off[S_END];                    // byte offsets in a direction's slot
    uint64_t dirSlot, groupSlot;            // bytes
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @XT@;

__aicore__ inline uint32_t CeilTo(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

class @K@ {
public:
    using FType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using FTransType = MatmulType<TPosition::GM, CubeFormat::ND, float, true>;

    __aicore__ inline void Run(GM_ADDR* args, GM_ADDR* outs, GM_ADDR workspace, const @T@& tiling)
    {
        t_ = tiling;
        REGIST_MATMUL_OBJ(&pipe_, GetSysWorkSpacePtr(), mm_, &t_.cube);
        const uint32_t aiv = static_cast<uint32_t>(GetBlockIdx());
        const uint32_t group = t_.dirs == 2 ? aiv / 2 : aiv;
        dir_ = t_.dirs == 2 ? aiv % 2 : 0;
        if (group >= t_.groups) {
            return;
        }
        b0_ = group * t_.bs;
        nb_ = t_.b - b0_ < t_.bs ? t_.b - b0_ : t_.bs;
        ts_ = t_.bf ? 1 : nb_;
        js_ = t_.bf ? t_.s : 1;
        x_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[X_IN]));
        wih_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[WIH_IN]));
        whh_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[WHH_IN]));
        if constexpr (BIH_IN >= 0) {
            bih_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[BIH_IN]));
            bhh_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[BHH_IN]));
        }
        if constexpr (WHR_IN >= 0) {
            whr_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[WHR_IN]));
        }
        if constexpr (H0_IN >= 0) {
            h0_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[H0_IN]));
        }
        if constexpr (C0_IN >= 0) {
            c0_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(args[C0_IN]));
        }
        y_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(outs[0]));
        hn_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(outs[1]));
        if constexpr (NOUT > 2) {
            cn_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(outs[2]));
        }
        GM_ADDR ws = GetUserWorkspace(workspace) + static_cast<uint64_t>(group) * t_.groupSlot;
        xa_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws));
        xb_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws + t_.xbuf));
        GM_ADDR slot = ws + 2 * t_.xbuf + static_cast<uint64_t>(dir_) * t_.dirSlot;
        for (uint32_t k = 0; k < S_END; ++k) {
            sl_[k].SetGlobalBuffer(reinterpret_cast<__gm__ float*>(slot + t_.off[k]));
        }
        pipe_.InitBuffer(ub_, TILES * t_.rc * t_.hp * sizeof(float));
        LocalTensor<float> all = ub_.Get<float>();
        Duplicate(all, 0.0f, TILES * t_.rc * t_.hp);
        tileN_ = t_.rc * t_.hp;
        PipeBarrier<PIPE_ALL>();
        if (dir_ == 0) {                     // the group's x rows in fp32: X0 of layer 0
            const uint64_t in = t_.in;
            if (t_.bf) {
                Convert<T, float>(xa_, x_[static_cast<uint64_t>(b0_) * t_.s * in], static_cast<uint64_t>(nb_) * t_.s * in);
            } else {
                for (uint32_t s = 0; s < t_.s; ++s) {
                    Convert<T, float>(xa_[static_cast<uint64_t>(s) * nb_ * in],
                                      x_[(static_cast<uint64_t>(s) * t_.b + b0_) * in], static_cast<uint64_t>(nb_) * in);
                }
            }
        }
        Barrier();
        for (uint32_t l = 0; l < t_.layers; ++l) {
            Layer(l, (l % 2 == 0) ? xa_ : xb_, (l % 2 == 0) ? xb_ : xa_);
            Barrier();
        }
        mm_.End();
    }

private:
    __aicore__ inline LocalTensor<float> Tile(uint32_t k) { return ub_.Get<float>()[k * tileN_]; }

    __aicore__ inline void Barrier()
    {
        PipeBarrier<PIPE_ALL>();
        if (t_.dirs == 2) {
            CrossCoreSetFlag<1, PIPE_MTE3>(LAYER_FLAG);
            CrossCoreWaitFlag(LAYER_FLAG);
        }
    }

    // n contiguous elements S -> D through UB, in chunks of a tile.
    template <typename S, typename D>
    __aicore__ inline void Convert(const GlobalTensor<D>& dst, const GlobalTensor<S>& src, uint64_t n)
    {
        LocalTensor<S> in = Tile(0).template ReinterpretCast<S>();
        LocalTensor<D> out = Tile(TILES / 2).template ReinterpretCast<D>();
        const uint64_t chunk = static_cast<uint64_t>(tileN_) * (TILES / 2);
        for (uint64_t o = 0; o < n; o += chunk) {
            const uint32_t len = static_cast<uint32_t>(n - o < chunk ? n - o : chunk);
            DataCopyExtParams cpIn{1, static_cast<uint32_t>(len * sizeof(S)), 0, 0, 0};
            DataCopyPadExtParams<S> pad{false, 0, 0, 0};
            DataCopyPad(in, src[o], cpIn, pad);
            PipeBarrier<PIPE_ALL>();
            DataCopyExtParams cpOut{1, static_cast<uint32_t>(len * sizeof(D)), 0, 0, 0};
            if constexpr (std::is_same<S, D>::value) {
                DataCopyPad(dst[o], in, cpOut);
            } else {
                if constexpr (std::is_same<D, float>::value) {
                    Cast(out, in, RoundMode::CAST_NONE, len);
                } else {
                    Cast(out, in, RoundMode::CAST_RINT, len);
                }
                PipeBarrier<PIPE_ALL>();
                DataCopyPad(dst[o], out, cpOut);
            }
            PipeBarrier<PIPE_ALL>();
        }
    }

    __aicore__ inline void Zero(const GlobalTensor<float>& dst, uint64_t n)
    {
        LocalTensor<float> z = Tile(TILES - 1);
        Duplicate(z, 0.0f, tileN_);
        PipeBarrier<PIPE_ALL>();
        for (uint64_t o = 0; o < n; o += tileN_) {
            const uint32_t len = static_cast<uint32_t>(n - o < tileN_ ? n - o : tileN_);
            DataCopyExtParams cp{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0};
            DataCopyPad(dst[o], z, cp);
        }
        PipeBarrier<PIPE_ALL>();
    }

    // rows x len fp32 from GM (row stride `stride` elements) into a tile of pitch hp.
    __aicore__ inline void LoadRows(const LocalTensor<float>& dst, const GlobalTensor<float>& src, uint32_t rows,
                                    uint32_t len, uint64_t stride)
    {
        DataCopyExtParams cp{static_cast<uint16_t>(rows), static_cast<uint32_t>(len * sizeof(float)),
                             static_cast<uint32_t>((stride - len) * sizeof(float)),
                             static_cast<uint32_t>((t_.hp * sizeof(float) - CeilTo(len * sizeof(float), 32)) / 32), 0};
        DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
        DataCopyPad(dst, src, cp, pad);
    }

    template <typename D>
    __aicore__ inline void StoreRows(const GlobalTensor<D>& dst, const LocalTensor<D>& src, uint32_t rows, uint32_t len,
                                     uint64_t stride)
    {
        DataCopyExtParams cp{static_cast<uint16_t>(rows), static_cast<uint32_t>(len * sizeof(D)),
                             static_cast<uint32_t>((t_.hp * sizeof(D) - CeilTo(len * sizeof(D), 32)) / 32),
                             static_cast<uint32_t>((stride - len) * sizeof(D)), 0};
        DataCopyPad(dst, src, cp);
    }

    __aicore__ inline void Product(const GlobalTensor<float>& c, const GlobalTensor<float>& a, const GlobalTensor<float>& b,
                                   const GlobalTensor<float>& bias, uint32_t m, uint32_t n, uint32_t k)
    {
        PipeBarrier<PIPE_ALL>();
        mm_.SetOrgShape(m, n, k);
        mm_.SetSingleShape(m, n, k);
        mm_.SetTensorA(a);
        mm_.SetTensorB(b, true);
        mm_.SetBias(bias);
        mm_.IterateAll(c);
    }

    // Element idx = l * dirs + d of a weight list whose layer-0 elements hold e0 and the others e1 elements.
    __aicore__ inline uint64_t ListOffset(uint32_t l, uint64_t e0, uint64_t e1) const
    {
        const uint64_t idx = static_cast<uint64_t>(l) * t_.dirs + dir_;
        return l == 0 ? idx * e0 : t_.dirs * e0 + (idx - t_.dirs) * e1;
    }

    __aicore__ inline void Layer(uint32_t l, const GlobalTensor<float>& xin, const GlobalTensor<float>& yout)
    {
        const uint32_t gh = t_.gh, h = t_.h, heff = t_.heff, p = t_.p;
        const uint32_t in = l == 0 ? t_.in : t_.dirs * heff;
        const uint64_t idx = static_cast<uint64_t>(l) * t_.dirs + dir_;
        const bool last = l + 1 == t_.layers;
        Convert<T, float>(sl_[S_WIH], wih_[ListOffset(l, static_cast<uint64_t>(gh) * t_.in,
                                                      static_cast<uint64_t>(gh) * t_.dirs * heff)],
                          static_cast<uint64_t>(gh) * in);
        Convert<T, float>(sl_[S_WHH], whh_[idx * gh * heff], static_cast<uint64_t>(gh) * heff);
        if constexpr (WHR_IN >= 0) {
            if (p > 0) {
                Convert<T, float>(sl_[S_WHR], whr_[idx * p * h], static_cast<uint64_t>(p) * h);
                Zero(sl_[S_ZB], p);
            }
        }
        if (t_.hasBias) {
            Convert<T, float>(sl_[S_BIH], bih_[idx * gh], gh);
            Convert<T, float>(sl_[S_BHH], bhh_[idx * gh], gh);
        } else {
            Zero(sl_[S_BIH], gh);
            Zero(sl_[S_BHH], gh);
        }
        if (t_.hasH0) {
            Convert<T, float>(sl_[S_H], h0_[(idx * t_.b + b0_) * heff], static_cast<uint64_t>(nb_) * heff);
        } else {
            Zero(sl_[S_H], static_cast<uint64_t>(nb_) * heff);
        }
        if (IS_LSTM) {
            if (t_.hasC0) {
                Convert<T, float>(sl_[S_C], c0_[(idx * t_.b + b0_) * h], static_cast<uint64_t>(nb_) * h);
            } else {
                Zero(sl_[S_C], static_cast<uint64_t>(nb_) * h);
            }
        }
        // every step's input projection at once
        Product(sl_[S_GX], xin, sl_[S_WIH], sl_[S_BIH], t_.s * nb_, gh, in);
        for (uint32_t k = 0; k < t_.s; ++k) {
            const uint32_t t = dir_ == 0 ? k : t_.s - 1 - k;
            Product(sl_[S_R], sl_[S_H], sl_[S_WHH], sl_[S_BHH], nb_, gh, heff);
            PipeBarrier<PIPE_ALL>();
            for (uint32_t j0 = 0; j0 < nb_; j0 += t_.rc) {
                const uint32_t rn = nb_ - j0 < t_.rc ? nb_ - j0 : t_.rc;
                const LocalTensor<float> hNew = Step(t, j0, rn);
                if (!(IS_LSTM && p > 0)) {
                    Emit(hNew, t, j0, rn, last, yout);
                }
            }
            if (IS_LSTM && p > 0) {          // h = m W_hr^T, then its rows out
                Product(sl_[S_H], sl_[S_M], sl_[S_WHR], sl_[S_ZB], nb_, p, h);
                PipeBarrier<PIPE_ALL>();
                for (uint32_t j0 = 0; j0 < nb_; j0 += t_.rc) {
                    const uint32_t rn = nb_ - j0 < t_.rc ? nb_ - j0 : t_.rc;
                    LocalTensor<float> w = Tile(9);
                    LoadRows(w, sl_[S_H][static_cast<uint64_t>(j0) * p], rn, p, p);
                    PipeBarrier<PIPE_ALL>();
                    Emit(w, t, j0, rn, last, yout);
                }
            }
        }
        PipeBarrier<PIPE_ALL>();
        Convert<float, T>(hn_[(idx * t_.b + b0_) * heff], sl_[S_H], static_cast<uint64_t>(nb_) * heff);
        if constexpr (NOUT > 2) {
            Convert<float, T>(cn_[(idx * t_.b + b0_) * h], sl_[S_C], static_cast<uint64_t>(nb_) * h);
        }
    }

    // The gate epilogue of rows j0 .. j0 + rn at step t; returns the tile holding the new h (LSTM with
    // a projection: m = o tanh(c), written to its slot instead).
    __aicore__ inline LocalTensor<float> Step(uint32_t t, uint32_t j0, uint32_t rn)
    {
        const uint32_t gh = t_.gh, h = t_.h;
        const uint32_t n = rn * t_.hp;
        const uint64_t gxRow = (static_cast<uint64_t>(t) * ts_ + static_cast<uint64_t>(j0) * js_) * gh;
        LocalTensor<float> g[4] = {Tile(0), Tile(1), Tile(2), Tile(3)};
        LocalTensor<float> q[4] = {Tile(4), Tile(5), Tile(6), Tile(7)};
        LocalTensor<float> st = Tile(8), w = Tile(9);
        for (uint32_t k = 0; k < GATES; ++k) {
            LoadRows(g[k], sl_[S_GX][gxRow + k * h], rn, h, static_cast<uint64_t>(js_) * gh);
            LoadRows(q[k], sl_[S_R][static_cast<uint64_t>(j0) * gh + k * h], rn, h, gh);
        }
        if (IS_LSTM) {
            LoadRows(st, sl_[S_C][static_cast<uint64_t>(j0) * h], rn, h, h);
        } else {
            LoadRows(st, sl_[S_H][static_cast<uint64_t>(j0) * h], rn, h, h);
        }
        PipeBarrier<PIPE_ALL>();
        if (IS_LSTM) {
            for (uint32_t k = 0; k < 4; ++k) {  // pre-activations in q (the HL APIs do not work in place)
                Add(q[k], g[k], q[k], n);
            }
            Sigmoid(g[0], q[0], n);
            Sigmoid(g[1], q[1], n);
            Tanh(g[2], q[2], n);
            Sigmoid(g[3], q[3], n);
            Mul(st, g[1], st, n);            // c = f c + i g
            Mul(w, g[0], g[2], n);
            Add(st, st, w, n);
            Tanh(w, st, n);                  // m = o tanh(c)
            Mul(w, g[3], w, n);
            PipeBarrier<PIPE_ALL>();
            StoreRows<float>(sl_[S_C][static_cast<uint64_t>(j0) * h], st, rn, h, h);
            if (t_.p > 0) {
                StoreRows<float>(sl_[S_M][static_cast<uint64_t>(j0) * h], w, rn, h, h);
            } else {
                StoreRows<float>(sl_[S_H][static_cast<uint64_t>(j0) * h], w, rn, h, h);
            }
        } else {
            Add(q[0], g[0], q[0], n);
            Sigmoid(g[0], q[0], n);          // r
            Add(q[1], g[1], q[1], n);
            Sigmoid(g[1], q[1], n);          // z
            Mul(q[2], g[0], q[2], n);        // r (W_hn h + b_hn)
            Add(q[0], g[2], q[2], n);
            Tanh(g[2], q[0], n);             // n
            Sub(w, st, g[2], n);             // h = n + z (h - n)
            Mul(w, g[1], w, n);
            Add(w, w, g[2], n);
            PipeBarrier<PIPE_ALL>();
            StoreRows<float>(sl_[S_H][static_cast<uint64_t>(j0) * h], w, rn, h, h);
        }
        PipeBarrier<PIPE_ALL>();
        return w;
    }

    // New h rows (a tile of pitch hp) to the next layer's X, or to y in its dtype on the last layer.
    __aicore__ inline void Emit(const LocalTensor<float>& w, uint32_t t, uint32_t j0, uint32_t rn, bool last,
                                const GlobalTensor<float>& yout)
    {
        const uint32_t heff = t_.heff;
        const uint64_t width = static_cast<uint64_t>(t_.dirs) * heff;
        if (!last) {
            const uint64_t row = static_cast<uint64_t>(t) * ts_ + static_cast<uint64_t>(j0) * js_;
            StoreRows<float>(yout[row * width + dir_ * heff], w, rn, heff, js_ * width);
        } else {
            const uint64_t b = b0_ + j0;
            const uint64_t row = t_.bf ? b * t_.s + t : static_cast<uint64_t>(t) * t_.b + b;
            const uint64_t stride = (t_.bf ? static_cast<uint64_t>(t_.s) : 1) * width;
            if constexpr (std::is_same<T, float>::value) {
                StoreRows<T>(y_[row * width + dir_ * heff], w.template ReinterpretCast<T>(), rn, heff, stride);
            } else {
                LocalTensor<T> o = Tile(10).template ReinterpretCast<T>();
                Cast(o, w, RoundMode::CAST_RINT, rn * t_.hp);
                PipeBarrier<PIPE_ALL>();
                StoreRows<T>(y_[row * width + dir_ * heff], o, rn, heff, stride);
            }
        }
        PipeBarrier<PIPE_ALL>();
    }

    TPipe pipe_;
    Matmul<FType, FTransType, FType, FType> mm_;
    TBuf<TPosition::VECCALC> ub_;
    GlobalTensor<T> x_, wih_, whh_, bih_, bhh_, whr_, h0_, c0_, y_, hn_, cn_;
    GlobalTensor<float> xa_, xb_, sl_[S_END];
    @T@ t_;
    uint32_t dir_ = 0, b0_ = 0, nb_ = 0, ts_ = 1, js_ = 1, tileN_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, @OUTARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    GM_ADDR args[] = {@ARGLIST@};
    GM_ADDR outs[] = {@OUTLIST@};
    @K@ op;
    op.Run(args, outs, workspace, t);
}
"""

_TILING = r"""namespace optiling {
static uint64_t Align512(uint64_t v) { return (v + 511) / 512 * 512; }

static int64_t ListLen(gert::TilingContext* context, int32_t i)
{
    if (i < 0 || context->GetOptionalInputShape(i) == nullptr) {
        return -1;
    }
    return context->GetOptionalInputShape(i)->GetStorageShape().GetShapeSize();
}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    @T@* t = context->GetTilingData<@T@>();
    const gert::Shape& xs = context->GetInputShape(X_IN)->GetStorageShape();
    if (xs.GetDimNum() != 3) {
        return ge::GRAPH_FAILED;
    }
    const int64_t hidden = @HIDDEN@, layers = @LAYERS@, proj = @PROJ@;
    const bool bidir = @BIDIR@, bf = @BATCHFIRST@, biasOn = @BIAS@;
    t->bf = bf ? 1 : 0;
    t->s = static_cast<uint32_t>(xs.GetDim(bf ? 1 : 0));
    t->b = static_cast<uint32_t>(xs.GetDim(bf ? 0 : 1));
    t->in = static_cast<uint32_t>(xs.GetDim(2));
    if (hidden <= 0 || layers <= 0 || proj < 0 || proj >= hidden || t->s == 0 || t->b == 0 || t->in == 0) {
        return ge::GRAPH_FAILED;
    }
    t->h = static_cast<uint32_t>(hidden);
    t->p = static_cast<uint32_t>(proj);
    t->heff = proj > 0 ? t->p : t->h;
    t->gh = GATES * t->h;
    t->layers = static_cast<uint32_t>(layers);
    t->dirs = bidir ? 2 : 1;
    const uint64_t cells = static_cast<uint64_t>(t->layers) * t->dirs, gh = t->gh;
    // the lists hold exactly the cells' elements, back to back
    const uint64_t wihLen = t->dirs * gh * t->in + (cells - t->dirs) * gh * t->dirs * t->heff;
    if (ListLen(context, WIH_IN) != static_cast<int64_t>(wihLen) ||
        ListLen(context, WHH_IN) != static_cast<int64_t>(cells * gh * t->heff)) {
        return ge::GRAPH_FAILED;
    }
    const int64_t bihLen = ListLen(context, BIH_IN), bhhLen = ListLen(context, BHH_IN);
    t->hasBias = (biasOn && bihLen >= 0 && bhhLen >= 0) ? 1 : 0;
    if (t->hasBias && (bihLen != static_cast<int64_t>(cells * gh) || bhhLen != static_cast<int64_t>(cells * gh))) {
        return ge::GRAPH_FAILED;
    }
    if (proj > 0 && ListLen(context, WHR_IN) != static_cast<int64_t>(cells * t->p * t->h)) {
        return ge::GRAPH_FAILED;
    }
    if (!IS_LSTM && proj > 0) {
        return ge::GRAPH_FAILED;
    }
    const int64_t h0Len = ListLen(context, H0_IN), c0Len = ListLen(context, C0_IN);
    t->hasH0 = h0Len >= 0 ? 1 : 0;
    t->hasC0 = c0Len >= 0 ? 1 : 0;
    if ((t->hasH0 && h0Len != static_cast<int64_t>(cells * t->b * t->heff)) ||
        (t->hasC0 && c0Len != static_cast<int64_t>(cells * t->b * t->h))) {
        return ge::GRAPH_FAILED;
    }
    auto plat = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    const uint32_t aic = plat.GetCoreNumAic();
    const uint32_t groupsMax = t->dirs == 2 ? aic : 2 * aic;
    t->bs = (t->b + groupsMax - 1) / groupsMax;
    t->groups = (t->b + t->bs - 1) / t->bs;
    const uint32_t widest = t->h > t->heff ? t->h : t->heff;
    t->hp = (widest + 15) / 16 * 16;
    uint32_t rc = UB_TILE_BYTES / (TILES * t->hp * 4);
    if (rc == 0) {
        return ge::GRAPH_FAILED;
    }
    t->rc = rc < t->bs ? rc : t->bs;
    const uint64_t wmax = t->in > t->dirs * t->heff ? t->in : t->dirs * t->heff;
    const uint64_t rows = static_cast<uint64_t>(t->s) * t->bs;
    t->xbuf = Align512(rows * wmax * 4);
    const uint64_t sizes[S_END] = {gh * wmax, gh * t->heff, static_cast<uint64_t>(t->p) * t->h, gh, gh,
                                   static_cast<uint64_t>(t->p > 8 ? t->p : 8), rows * gh, t->bs * gh,
                                   t->bs * static_cast<uint64_t>(t->heff), t->bs * static_cast<uint64_t>(t->h),
                                   t->bs * static_cast<uint64_t>(t->h)};
    uint64_t at = 0;
    for (uint32_t k = 0; k < S_END; ++k) {
        t->off[k] = at;
        at += Align512(sizes[k] * 4);
    }
    t->dirSlot = at;
    t->groupSlot = 2 * t->xbuf + t->dirs * t->dirSlot;

    const auto f32 = matmul_tiling::DataType::DT_FLOAT;
    matmul_tiling::MatmulApiTiling mt(plat);
    mt.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    mt.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32, true);
    mt.SetCType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    mt.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, f32);
    const uint64_t kmax = wmax > t->heff ? wmax : t->heff;
    const int32_t m = static_cast<int32_t>(rows), n = static_cast<int32_t>(gh > t->p ? gh : t->p);
    const int32_t k = static_cast<int32_t>(kmax > t->h ? kmax : t->h);
    mt.SetShape(m, n, k);
    mt.SetOrgShape(m, n, k);
    mt.SetBias(true);
    if (mt.GetTiling(t->cube) == -1) {
        return ge::GRAPH_FAILED;
    }
    const uint32_t aivs = t->groups * t->dirs;
    context->SetBlockDim((aivs + 1) / 2);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = plat.GetLibApiWorkSpaceSize() + t->groupSlot * t->groups;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
