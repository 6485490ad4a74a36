"""Engram gate fusion (engram_gate_fusion): a gated value, a causal depthwise conv over the
sequence and a residual, on the vector unit. With keys k, hidden states q [B, L, HC, D], values
v [B, L, D], RMSNorm weights w1, w2, wc [HC, D], conv weights W [HC*D, 1, K] and an optional
conv state [B, HC*D, S], S = (K - 1) * dil, per token (b, l) and channel group hc:

    rms(x)  = sqrt(mean_d x^2 + eps)
    raw     = sum_d (k / rms(k) * w1) (q / rms(q) * w2) / sqrt(D)
    g       = sigmoid(sign(raw) * sqrt(max(|raw|, 1e-6)))
    vg[d]   = g * v[d]
    x[d]    = vg[d] / rms(vg) * wc[d]                  (channel c = hc * D + d)
    y[l, c] = sum_k W[c, k] * xcat[l + k * dil, c]     (xcat = [state or zeros, x] along l)
    out     = vg + SiLU(y);   conv_state_out = the last S positions of xcat

all in fp32, outputs in the activations' dtype. The golden is recognised by what it computes:
the inputs' roles (by shape), which [HC, D] weight is the conv norm's and which attrs give the
dilation, eps and the shape checks are the ones under which it gives this formula on small fp64
probes, with and without the state.

The kernel keeps whole rows of D channels in UB: a unit is a tile of tokens of one (b, hc)
sequence, the units of a sequence consecutive and split over the cores. Phase 1: each core turns
its tokens into x rows and gates g in a GM workspace (fp32); SyncAll; phase 2: each tile's x rows
sit after S history rows in UB (carried from the core's previous tile of the sequence, else read
back from the workspace, or the state / zeros before the sequence), so the conv is K
multiply-adds of shifted row blocks by a weight row, and no core recomputes another's rows. The
norm weights and the conv weights of hc are staged once per run of units of that hc (the conv
weights transposed to K rows of D by a Gather); the state moves between its [D, S] layout and
rows through TransDataTo5HD.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.capture import call_golden_roles

ACTIVATIONS = {"float16", "bfloat16"}
# probe sizes: B, L (with / without the state), HC, D, K, dilation, eps
PROBE = {"B": 2, "L": (5, 3), "HC": 2, "D": 8, "K": 3, "dil": 2, "eps": 0.25}


@dataclass
class EngramPlan:
    task: object
    pattern: str                          # "engram_gate"
    roles: dict                           # role -> input position
    attrs: dict                           # role (hc, hidden, kernel, dilation, eps) -> attr name
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _reference(keys, hidden, value, w1, w2, wc, weight, state, K: int, dil: int, eps: float):
    """The formula above in fp64, row-wise over the sequence (not the golden's channel-major conv)."""
    import torch

    B, L, HC, D = keys.shape
    C, S = HC * D, (K - 1) * dil

    def rms(x):
        return (x.pow(2).mean(-1, keepdim=True) + eps).sqrt()

    raw = ((keys / rms(keys) * w1) * (hidden / rms(hidden) * w2)).sum(-1) / math.sqrt(D)
    g = torch.sigmoid(raw.sign() * raw.abs().clamp_min(1e-6).sqrt())
    vg = g.unsqueeze(-1) * value.unsqueeze(2)
    x = (vg / rms(vg) * wc).reshape(B, L, C)
    hist = state.permute(0, 2, 1) if state is not None else torch.zeros(B, S, C, dtype=x.dtype)
    xcat = torch.cat([hist, x], dim=1)
    taps = weight.reshape(C, K)
    y = sum(taps[:, k] * xcat[:, k * dil:k * dil + L, :] for k in range(K))
    out = vg + torch.nn.functional.silu(y).reshape(B, L, HC, D)
    return out, xcat[:, L:L + S, :].permute(0, 2, 1)


def _probe(with_state: bool, seed: int) -> dict:
    import torch

    g = torch.Generator().manual_seed(seed)
    B, HC, D, K, dil = PROBE["B"], PROBE["HC"], PROBE["D"], PROBE["K"], PROBE["dil"]
    L = PROBE["L"][0 if with_state else 1]      # without the state: fewer tokens than S

    def rand(*shape):
        return torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1

    out = {"keys": rand(B, L, HC, D), "hidden": rand(B, L, HC, D), "value": rand(B, L, D),
           "w1": rand(HC, D), "w2": rand(HC, D), "wc": rand(HC, D), "weight": rand(HC * D, 1, K)}
    if with_state:
        out["state"] = rand(B, HC * D, (K - 1) * dil)
    return out


def _matches(task, roles: dict, attrs: dict) -> bool:
    import torch

    for with_state, seed in ((True, 16), (False, 17)):
        ins = _probe(with_state, seed)
        got = call_golden_roles(task, roles, ins, attrs)
        if not isinstance(got, (list, tuple)) or len(got) != 2:
            return False
        want = _reference(ins["keys"], ins["hidden"], ins["value"], ins["w1"], ins["w2"], ins["wc"],
                          ins["weight"], ins.get("state"), PROBE["K"], PROBE["dil"], PROBE["eps"])
        for a, b in zip(got, want):
            # the golden computes in fp32 whatever the inputs' dtype
            if not isinstance(a, torch.Tensor) or a.shape != b.shape or \
                    not torch.allclose(a.double(), b, rtol=1e-4, atol=1e-5):
                return False
    return True


def _shape_roles(task, case):
    """Input positions by role from one case's shapes, or None when they do not fit."""
    shapes = case.shapes
    if len(task.inputs) != 8 or len(task.outputs) != 2:
        return None
    opt = [i for i, s in enumerate(task.inputs) if s.optional]
    if len(opt) != 1:
        return None
    four = [i for i, s in enumerate(shapes) if s is not None and len(s) == 4]
    if len(four) != 2 or shapes[four[0]] != shapes[four[1]]:
        return None
    B, L, HC, D = shapes[four[0]]
    norms = [i for i, s in enumerate(shapes) if s is not None and list(s) == [HC, D]]
    value = [i for i, s in enumerate(shapes) if s is not None and list(s) == [B, L, D] and i not in norms]
    weight = [i for i, s in enumerate(shapes) if s is not None and len(s) == 3 and s[0] == HC * D and s[1] == 1
              and i not in value]
    if len(norms) != 3 or len(value) != 1 or len(weight) != 1 or opt[0] in four + norms + value + weight:
        return None
    return {"keys": four[0], "hidden": four[1], "value": value[0], "weight": weight[0], "state": opt[0],
            "norms": norms}


def _dims(case, roles):
    B, L, HC, D = case.shapes[roles["keys"]]
    return {"hc": HC, "hidden": D, "kernel": case.shapes[roles["weight"]][2]}


def plan_engram(task):
    """The engram-gate plan of `task`, or None when its golden is not the formula above."""
    cases = task.cases
    if not cases or any(a.type not in ("int", "float") for a in task.attrs):
        return None
    base = _shape_roles(task, cases[0])
    if base is None:
        return None
    if any(_shape_roles(task, c) is None for c in cases):
        return None
    ints = [a.name for a in task.attrs if a.type == "int"]
    floats = [a.name for a in task.attrs if a.type == "float"]
    if len(floats) != 1 or not 1 <= len(ints) <= 4:
        return None

    def value_of(c, name):
        return c.attrs.get(name, next(a.default for a in task.attrs if a.name == name))

    # each int attr is a shape check (equal to HC, D or K in every case) or the dilation
    options = []
    for name in ints:
        opts = [r for r in ("hc", "hidden", "kernel") if all(value_of(c, name) == _dims(c, base)[r] for c in cases)]
        options.append(opts + ["dilation"])
    probe_of = {"hc": PROBE["HC"], "hidden": PROBE["D"], "kernel": PROBE["K"], "dilation": PROBE["dil"]}
    found = None
    for assign in itertools.product(*options):
        if assign.count("dilation") != 1 or len(set(assign)) != len(assign):
            continue
        by_role = dict(zip(assign, ints))
        probe_attrs = {n: probe_of[r] for r, n in by_role.items()} | {floats[0]: PROBE["eps"]}
        for conv_norm in base["norms"]:
            w1, w2 = (i for i in base["norms"] if i != conv_norm)
            roles = {k: v for k, v in base.items() if k != "norms"} | {"w1": w1, "w2": w2, "wc": conv_norm}
            if _matches(task, roles, probe_attrs):
                found = (roles, by_role | {"eps": floats[0]})
                break
        if found:
            break
    if found is None:
        return None
    roles, attrs = found
    plan = EngramPlan(task, "engram_gate", roles, attrs)
    act = [roles[r] for r in ("keys", "hidden", "value", "state")]
    for c in cases:
        dt = {c.dtypes[i] for i in act if c.dtypes[i] is not None}
        if len(dt) != 1 or not dt <= ACTIVATIONS:
            plan.unserved[c.id] = (f"activations of dtype {sorted(dt)}: the kernel takes one 16-bit float dtype "
                                   "(the state transpose moves 16-bit lanes)")
        elif any(c.dtypes[roles[r]] != "float32" for r in ("w1", "w2", "wc", "weight")):
            plan.unserved[c.id] = "norm or conv weights that are not float32"
    plan.notes.append("roles: " + ", ".join(f"{r} = {task.inputs[p].name}" for r, p in roles.items()) +
                      "; attrs: " + ", ".join(f"{r} = {n}" for r, n in attrs.items()))
    return plan


def render(plan: EngramPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split, float_attr_field
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    roles = plan.roles
    names = [a.name for a in t.attrs]
    name = {r: t.inputs[p].name for r, p in roles.items()}

    def int_attr(role, var):
        n = plan.attrs.get(role)
        if n is None:
            return ""
        return (f"    const int64_t* {var}Attr = attrs->GetAttrPointer<int64_t>({names.index(n)});   // `{n}`\n"
                f"    if ({var}Attr == nullptr) {{\n        return ge::GRAPH_FAILED;\n    }}\n")

    checks = []
    for role, var, dim in (("hc", "hc", "HC"), ("hidden", "hidden", "D"), ("kernel", "kernel", "K")):
        if role in plan.attrs:
            checks.append(f"*{var}Attr != static_cast<int64_t>({dim})")
    attr_lines = "".join(int_attr(r, v) for r, v in (("hc", "hc"), ("hidden", "hidden"), ("kernel", "kernel"),
                                                     ("dilation", "dilation")))
    attr_lines += float_attr_field(("attr", plan.attrs["eps"]), names, "eps")
    ins = [i.name for i in t.inputs]
    outs = [o.name for o in t.outputs]
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for k, v in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                 ("@XT@", _macro_of(name["keys"])),
                 ("@ROLES_DOC@", ", ".join(f"{r} = {n}" for r, n in name.items())),
                 ("@ATTRS_DOC@", ", ".join(f"{r} = `{n}`" for r, n in plan.attrs.items())),
                 ("@ARGS@", ", ".join(f"GM_ADDR {_ident(n)}" for n in ins + outs)),
                 ("@CALL@", ", ".join(_ident(name[r]) for r in ("keys", "hidden", "value", "w1", "w2", "wc",
                                                                "weight", "state")) +
                  ", " + ", ".join(map(_ident, outs))),
                 ("@P_KEYS@", str(roles["keys"])), ("@P_HIDDEN@", str(roles["hidden"])),
                 ("@P_VALUE@", str(roles["value"])), ("@P_WEIGHT@", str(roles["weight"])),
                 ("@P_STATE@", str(roles["state"])),
                 ("@ATTRS@", attr_lines),
                 ("@SHAPE_CHECKS@", " || ".join(checks) or "false"),
                 ("@DILATION@", "*dilationAttr"),
                 ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                 ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                 # a unit's fixed work (history, staged weights) outweighs the knob's minimum: a core a unit
                 ("@SPLIT@", core_split(knobs, f"td->units * {int(knobs['min_work_elems'])}", "td->units")),
                 ("@SYNC@", SYNC_PIPES)):
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: engram gate fusion (fp32, outputs in the activations' dtype), per token l of a sequence
// (b, hc) of D channels:
//   rms(x) = sqrt(mean x^2 + eps);   raw = sum (k / rms(k) w1)(q / rms(q) w2) / sqrt(D)
//   g = sigmoid(sign(raw) sqrt(max(|raw|, 1e-6)));   vg = g v;   x = vg / rms(vg) wc
//   y[l] = sum_k W_k x[l - (K - 1 - k) dil]  (x before the sequence: the state, or zeros)
//   out = vg + SiLU(y);   stateOut = the last S = (K - 1) dil positions of [state, x]
// Inputs: @ROLES_DOC@. Attrs: @ATTRS_DOC@.
// A unit is a tile of up to tileRows tokens of one sequence; rows are D channels padded to rowPad.
// Phase 1 writes every token's x row and g to the workspace; after SyncAll, phase 2 puts a tile's
// x rows after S history rows in xBuf (carried from the core's previous tile of the sequence, else
// read back; the state or zeros before the sequence), so the conv is K multiply-adds of shifted
// row blocks by a weight row. Norm and conv weights of hc are staged once per run of units of
// that hc; the state moves between its [D, S] layout and rows through TransDataTo5HD.
// Rows x 64-lane chunks: a row-vector operand takes one call per chunk over up to 248 rows
// (repeat stride = one row) when a tile has more rows than a row has chunks, else one call a row.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t hidden;                    // D
    uint32_t rowPad;                    // D rounded up to 16: a row's slot in UB
    uint32_t hc;                        // HC
    uint32_t taps;                      // K
    uint32_t dilation;
    uint32_t history;                   // S = (K - 1) * dilation
    uint32_t weightChans;               // channels of the conv weights staged per Gather round
    uint32_t stateChans;                // channels of a state block moved per transpose (a multiple of 16)
    uint32_t tileRows;
    uint32_t hasState;
    uint32_t wholeSums;                 // D % 512 == 0: row sums by two WholeReduceSum levels
    uint32_t stridedRows;               // a row fits the 8-bit repeat stride (rowPad <= 2040)
    uint32_t workLen;                   // fp32 lanes of the scratch (two tiles, or the staging)
    uint32_t blockDim;
    float eps;
    float invHidden;                    // 1 / D
    float sqrtHidden;                   // sqrt(D)
    uint64_t batch;                     // B
    uint64_t seqLen;                    // L
    uint64_t seqs;                      // B * HC
    uint64_t tilesPerSeq;
    uint64_t units;
    uint64_t formerNum;                 // cores taking formerUnits units; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR keys, GM_ADDR hidden, GM_ADDR value, GM_ADDR w1, GM_ADDR w2, GM_ADDR wc,
                                GM_ADDR weight, GM_ADDR state, GM_ADDR out, GM_ADDR stateOut, GM_ADDR workspace,
                                const @T@& tiling)
    {
        td_ = tiling;
        const uint64_t D = td_.hidden, L = td_.seqLen, C = static_cast<uint64_t>(td_.hc) * D;
        const uint64_t rows = td_.batch * L;
        keysGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(keys), rows * C);
        hiddenGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(hidden), rows * C);
        valueGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(value), rows * D);
        w1Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w1), C);
        w2Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w2), C);
        wcGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(wc), C);
        weightGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weight), C * td_.taps);
        outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(out), rows * C);
        stateOutGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(stateOut), td_.batch * C * td_.history);
        xWs_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)), rows * C);
        gWs_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(GetUserWorkspace(workspace)) + rows * C, td_.seqs * L);
        if (td_.hasState) {
            stateGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(state), td_.batch * C * td_.history);
        }
@UNIT_RANGE@        const uint32_t P = td_.rowPad, T = td_.tileRows;
        const uint32_t slots = (T + 7) / 8 * 8;
        pipe_.InitBuffer(keysBuf_, T * P * sizeof(Elem));       // also the output tile
        pipe_.InitBuffer(hiddenBuf_, T * P * sizeof(Elem));
        pipe_.InitBuffer(valueBuf_, T * P * sizeof(Elem));
        pipe_.InitBuffer(workBuf_, td_.workLen * sizeof(float));
        pipe_.InitBuffer(xBuf_, (td_.history + T) * P * sizeof(float));
        pipe_.InitBuffer(normBuf_, 2 * P * sizeof(float));      // w1 * w2, wc
        pipe_.InitBuffer(tapBuf_, td_.taps * P * sizeof(float));
        pipe_.InitBuffer(rowBuf_, 8 * slots * sizeof(float));   // per-row scalars
        pipe_.InitBuffer(blockBuf_, slots * 8 * sizeof(float)); // one 32-byte block per row (Brcb)
        pipe_.InitBuffer(partBuf_, (td_.wholeSums ? slots * (P / 64) : 64) * sizeof(float));
        Duplicate(rowBuf_.Get<float>(), 0.0f, 8 * slots);
        // GatherMask pattern of one 256-byte repeat (128 16-bit lanes, 128 / SP channels of SP
        // columns): the first S columns of each channel
        pipe_.InitBuffer(patternBuf_, 32);
        LocalTensor<uint16_t> pattern = patternBuf_.Get<uint16_t>();
        const uint32_t words = StatePitch() / 16;
        for (uint32_t w = 0; w < 8; ++w) {
            const int32_t left = static_cast<int32_t>(td_.history) - 16 * static_cast<int32_t>(w % words);
            pattern.SetValue(w, static_cast<uint16_t>(left >= 16 ? 0xFFFFu : (left <= 0 ? 0u : (1u << left) - 1u)));
        }
        SyncPipes<HardEvent::S_V>();
    }

    // phase 1: every core's tokens to x and g in the workspace; phase 2: the conv of each tile
    // from its x rows and the S rows before them (carried in UB from the core's previous tile of
    // the sequence, else read back: no core recomputes another's rows)
    __aicore__ inline void Process()
    {
        uint64_t stagedHc = ~0ull;
        for (uint64_t u = unitStart_; u < unitStart_ + unitCount_; ++u) {
            const uint64_t seq = u / td_.tilesPerSeq, l0 = (u % td_.tilesPerSeq) * td_.tileRows;
            if (seq % td_.hc != stagedHc) {
                StageNorms(seq % td_.hc);
                stagedHc = seq % td_.hc;
            }
            GateRows(seq, l0, Rows(l0));
        }
        SyncAll();
        stagedHc = ~0ull;
        for (uint64_t u = unitStart_; u < unitStart_ + unitCount_; ++u) {
            const uint64_t seq = u / td_.tilesPerSeq, l0 = (u % td_.tilesPerSeq) * td_.tileRows;
            const uint32_t n = Rows(l0);
            if (seq % td_.hc != stagedHc) {
                StageTaps(seq % td_.hc);
                stagedHc = seq % td_.hc;
            }
            const bool carried = l0 > 0 && u > unitStart_;   // the previous unit is this sequence's previous tile
            if (carried) {
                CarryHistory(td_.tileRows);
            }
            ConvOut(seq, l0, n, carried);
            if (l0 + n == td_.seqLen && td_.history > 0) {
                StoreState(seq / td_.hc, seq % td_.hc, n);
            }
        }
    }

private:
    __aicore__ inline uint32_t Rows(uint64_t l0) const
    {
        const uint64_t left = td_.seqLen - l0;
        return static_cast<uint32_t>(left < td_.tileRows ? left : td_.tileRows);
    }

    // the w1 * w2 and wc rows of hc
    __aicore__ inline void StageNorms(uint64_t hc)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad;
        LocalTensor<float> norms = normBuf_.Get<float>();
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyExtParams row(1, D * sizeof(float), 0, 0, 0);
        DataCopyPad(norms, w1Gm_[hc * D], row, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        DataCopyPad(norms[P], w2Gm_[hc * D], row, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        SyncPipes<HardEvent::MTE2_V>();
        Mul(norms, norms, norms[P], P);
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(norms[P], wcGm_[hc * D], row, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        SyncPipes<HardEvent::MTE2_V>();
    }

    // the K conv weight rows of hc, W_k[d] = weight[(hc D + d) K + k]: per chunk of weightChans
    // channels one copy of its chans x K block into the scratch, then a Gather per k from byte
    // offsets d K 4 + k 4
    __aicore__ inline void StageTaps(uint64_t hc)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad, K = td_.taps, W = td_.weightChans;
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> raw = work;                       // W K fp32
        LocalTensor<int32_t> offsets = work[W * K].ReinterpretCast<int32_t>();
        LocalTensor<float> taps = tapBuf_.Get<float>();
        SyncPipes<HardEvent::MTE3_V>();                      // the scratch's last store is done
        CreateVecIndex(offsets, 0, W);
        Muls(offsets, offsets, static_cast<int32_t>(K * sizeof(float)), W);
        for (uint32_t d0 = 0; d0 < D; d0 += W) {
            const uint32_t chans = D - d0 < W ? D - d0 : W;
            DataCopyExtParams block(1, chans * K * sizeof(float), 0, 0, 0);
            SyncPipes<HardEvent::V_MTE2>();        // the previous chunk is gathered
            DataCopyPad(raw, weightGm_[(hc * D + d0) * K], block, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
            SyncPipes<HardEvent::MTE2_V>();
            for (uint32_t k = 0; k < K; ++k) {
                Gather(taps[k * P + d0], raw, offsets.ReinterpretCast<uint32_t>(), k * static_cast<uint32_t>(sizeof(float)), chans);
            }
        }
    }

    // the previous tile's last S rows become the history: blocks of prev rows, each block moved
    // from prev rows on (disjoint, in increasing order)
    __aicore__ inline void CarryHistory(uint32_t prev)
    {
        const uint32_t P = td_.rowPad, S = td_.history;
        LocalTensor<float> x = xBuf_.Get<float>();
        for (uint32_t r = 0; r < S; r += prev) {
            const uint32_t m = S - r < prev ? S - r : prev;
            Adds(x[r * P], x[(r + prev) * P], 0.0f, m * P);
        }
    }

    // state columns from..from+m of the sequence's D channels into history rows 0..m, by blocks of
    // 16 columns x stateChans channels: one copy of the block ([chans, 16], each channel's run in
    // a 32-byte row), 16 x 16 transposes to [16, chans], a Cast per column into its history row
    __aicore__ inline void LoadState(uint64_t b, uint64_t hc, uint32_t from, uint32_t m)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad, S = td_.history, W = td_.stateChans;
        LocalTensor<Elem> staged = workBuf_.Get<float>().ReinterpretCast<Elem>();   // W x 16
        LocalTensor<Elem> cols = staged[W * 16];                                     // 16 x W
        LocalTensor<float> x = xBuf_.Get<float>();
        const uint64_t C = static_cast<uint64_t>(td_.hc) * D;
        for (uint32_t c0 = from / 16 * 16; c0 < from + m; c0 += 16) {
            const uint32_t n = S - c0 < 16 ? S - c0 : 16;
            for (uint32_t d0 = 0; d0 < D; d0 += W) {
                const uint32_t chans = D - d0 < W ? D - d0 : W;
                SyncPipes<HardEvent::V_MTE2>();    // the previous block is cast
                DataCopyExtParams in(static_cast<uint16_t>(chans), n * sizeof(Elem), (S - n) * sizeof(Elem), 0, 0);
                DataCopyPad(staged, stateGm_[(b * C + hc * D + d0) * S + c0], in,
                            DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
                SyncPipes<HardEvent::MTE2_V>();
                Transpose16(cols, staged, (chans + 15) / 16, 16, true);
                const uint32_t j0 = c0 < from ? from : c0, j1 = c0 + n < from + m ? c0 + n : from + m;
                CastRows(x[(j0 - from) * P + d0], P, cols[(j0 - c0) * W], W, j1 - j0, chans, RoundMode::CAST_NONE);
            }
        }
    }

    // rows rows x chans lanes between tiles of row pitches dstPitch and srcPitch: one Cast per
    // 64-lane chunk over the rows (repeat strides of a row each) when that is fewer calls and both
    // pitches fit the 8-bit repeat stride, else one Cast a row
    template <typename To, typename From>
    __aicore__ inline void CastRows(const LocalTensor<To>& dst, uint32_t dstPitch, const LocalTensor<From>& src,
                                    uint32_t srcPitch, uint32_t rows, uint32_t chans, RoundMode mode)
    {
        const uint32_t dstStride = dstPitch * sizeof(To) / 32, srcStride = srcPitch * sizeof(From) / 32;
        if (dstStride > 255 || srcStride > 255 || rows > 255 || (chans + 63) / 64 >= rows) {
            for (uint32_t j = 0; j < rows; ++j) {
                Cast(dst[j * dstPitch], src[j * srcPitch], mode, chans);
            }
            return;
        }
        for (uint32_t c = 0; c < chans; c += 64) {
            const uint64_t mask = chans - c < 64 ? chans - c : 64;
            Cast(dst[c], src[c], mode, mask, static_cast<uint8_t>(rows),
                 UnaryRepeatParams(1, 1, static_cast<uint8_t>(dstStride), static_cast<uint8_t>(srcStride)));
        }
    }

    // a channel's columns in the staged state block: S rounded up to a power of two >= 16, so a
    // 256-byte repeat (128 16-bit lanes) holds whole channels for the GatherMask
    __aicore__ inline uint32_t StatePitch() const
    {
        uint32_t pitch = 16;
        while (pitch < td_.history) {
            pitch *= 2;
        }
        return pitch;
    }

    // 16 x 16 transposes between staged [channels, pitch] (16 columns of it) and cols [16 columns,
    // stateChans channels]: one call, a repeat per 16 channels (toCols: staged -> cols)
    __aicore__ inline void Transpose16(const LocalTensor<Elem>& cols, const LocalTensor<Elem>& staged,
                                       uint32_t reps, uint32_t pitch, bool toCols)
    {
        const uint32_t W = td_.stateChans;
        const uint16_t colStep = reps == 1 ? 0 : 1;                                  // 16 channels on
        const uint16_t stagedStep = reps == 1 ? 0 : static_cast<uint16_t>(pitch);   // 16 staged rows
        LocalTensor<half> c = cols.ReinterpretCast<half>();
        LocalTensor<half> st = staged.ReinterpretCast<half>();
        LocalTensor<half> colList[16];
        LocalTensor<half> stagedList[16];
        for (uint32_t i = 0; i < 16; ++i) {
            colList[i] = c[i * W];
            stagedList[i] = st[i * pitch];
        }
        const TransDataTo5HDParams params(false, false, static_cast<uint8_t>(reps), toCols ? colStep : stagedStep,
                                          toCols ? stagedStep : colStep);
        if (toCols) {
            TransDataTo5HD<half>(colList, stagedList, params);
        } else {
            TransDataTo5HD<half>(stagedList, colList, params);
        }
    }

    // history rows n..n+S (positions L-S..L of [state, x]) to stateOut[b, hc D + d, :], by blocks
    // of stateChans channels: a Cast a column into cols [SP, chans], 16 x 16 transposes to
    // [chans, SP], a GatherMask that keeps the S columns of every channel (dense [chans, S], as in
    // GM) and one contiguous copy out (not chans rows of S: short rows move slowly)
    __aicore__ inline void StoreState(uint64_t b, uint64_t hc, uint32_t n)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad, S = td_.history, W = td_.stateChans;
        const uint32_t SP = StatePitch();
        LocalTensor<Elem> cols = workBuf_.Get<float>().ReinterpretCast<Elem>();   // SP x W
        LocalTensor<Elem> staged = cols[SP * W];                                   // W x SP
        LocalTensor<Elem> dense = staged[(W * SP + 127) / 128 * 128];              // W x S
        LocalTensor<float> x = xBuf_.Get<float>();
        const uint64_t C = static_cast<uint64_t>(td_.hc) * D;
        for (uint32_t d0 = 0; d0 < D; d0 += W) {
            const uint32_t chans = D - d0 < W ? D - d0 : W;
            SyncPipes<HardEvent::MTE3_V>();        // the previous block is stored
            CastRows(cols, W, x[n * P + d0], P, S, chans, RoundMode::CAST_RINT);
            for (uint32_t c0 = 0; c0 < SP; c0 += 16) {
                Transpose16(cols[c0 * W], staged[c0], (chans + 15) / 16, SP, false);
            }
            uint64_t kept = 0;
            GatherMask(dense.ReinterpretCast<half>(), staged.ReinterpretCast<half>(), patternBuf_.Get<uint16_t>(), false, 0,
                       GatherMaskParams(1, static_cast<uint16_t>((chans * SP + 127) / 128), 8, 0), kept);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyExtParams out(1, chans * S * sizeof(Elem), 0, 0, 0);
            DataCopyPad(stateOutGm_[(b * C + hc * D + d0) * S], dense, out);
        }
        SyncPipes<HardEvent::MTE3_V>();
    }

    // m tokens from l of sequence seq = b HC + hc: x rows to the workspace ([B, L, HC, D], fp32)
    // and g to the workspace's gate runs ([B HC, L])
    __aicore__ inline void GateRows(uint64_t seq, uint64_t l, uint32_t m)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad, T = td_.tileRows, slots = (T + 7) / 8 * 8;
        const uint64_t b = seq / td_.hc, hc = seq % td_.hc;
        const uint64_t C = static_cast<uint64_t>(td_.hc) * D, tok = b * td_.seqLen + l;
        const uint32_t lanes = m * P;
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> a = work, b2 = work[T * P];           // the two fp32 scratch tiles
        LocalTensor<float> norms = normBuf_.Get<float>();
        LocalTensor<float> sums = rowBuf_.Get<float>();
        LocalTensor<float> sumK = sums, sumQ = sums[slots], dot = sums[2 * slots], sumV = sums[3 * slots];
        LocalTensor<float> g = sums[4 * slots], s = sums[5 * slots], t1 = sums[6 * slots], t2 = sums[7 * slots];
        const uint32_t gap = (P * sizeof(Elem) - (D * sizeof(Elem) + 31) / 32 * 32) / 32;
        SyncPipes<HardEvent::V_MTE2>();            // the previous rows are consumed
        DataCopyExtParams spread(static_cast<uint16_t>(m), D * sizeof(Elem), static_cast<uint32_t>((C - D) * sizeof(Elem)), gap, 0);
        DataCopyPad(keysBuf_.Get<Elem>(), keysGm_[tok * C + hc * D], spread, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
        DataCopyPad(hiddenBuf_.Get<Elem>(), hiddenGm_[tok * C + hc * D], spread, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
        DataCopyExtParams dense(static_cast<uint16_t>(m), D * sizeof(Elem), 0, gap, 0);
        DataCopyPad(valueBuf_.Get<Elem>(), valueGm_[tok * D], dense, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
        SyncPipes<HardEvent::MTE2_V>();
        SyncPipes<HardEvent::MTE3_V>();            // the previous x rows and g left the scratch
        // sums of k^2, k q w1 w2, q^2 and v^2 per row (each RowSums consumes its tile)
        Cast(a, keysBuf_.Get<Elem>(), RoundMode::CAST_NONE, lanes);
        Mul(b2, a, a, lanes);
        RowSums(sumK, b2, m);
        Cast(b2, hiddenBuf_.Get<Elem>(), RoundMode::CAST_NONE, lanes);
        Mul(a, a, b2, lanes);
        RowsTimesVec(a, a, norms, m);
        RowSums(dot, a, m);
        Mul(a, b2, b2, lanes);
        RowSums(sumQ, a, m);
        LocalTensor<float> vf = b2;
        Cast(vf, valueBuf_.Get<Elem>(), RoundMode::CAST_NONE, lanes);
        Mul(a, vf, vf, lanes);
        RowSums(sumV, a, m);
        // per row: raw = dot / (rms(k) rms(q) sqrt(D)), g = sigmoid(sign(raw) sqrt(max(|raw|, 1e-6)))
        Rms(sums, slots + m);                      // rms(k) and rms(q): adjacent slot runs
        Mul(t1, sumK, sumQ, m);
        Muls(t1, t1, td_.sqrtHidden, m);
        Div(t1, dot, t1, m);
        Abs(t2, t1, m);
        Maxs(t2, t2, 1e-6f, m);
        Sqrt(t2, t2, m);
        Sign(g, t1, m);
        Mul(t1, t2, g, m);
        Muls(t1, t1, -1.0f, m);
        Exp(t1, t1, m);
        Adds(t1, t1, 1.0f, m);
        Reciprocal(g, t1, m);
        // rms(vg) = sqrt(g^2 mean v^2 + eps): x = v wc (g / rms(vg)), vg = v g
        Mul(t1, g, g, m);
        Mul(sumV, sumV, t1, m);
        Rms(sumV, m);
        Div(s, g, sumV, m);
        RowsTimesVec(a, vf, norms[P], m);
        RowsTimesScalars(a, a, s, m);
        SyncPipes<HardEvent::V_MTE3>();
        const uint32_t xGap = (P * 4 - (D * 4 + 31) / 32 * 32) / 32;
        DataCopyExtParams rows(static_cast<uint16_t>(m), D * sizeof(float), xGap, static_cast<uint32_t>((C - D) * sizeof(float)), 0);
        DataCopyPad(xWs_[tok * C + hc * D], a, rows);
        DataCopyExtParams gates(1, m * sizeof(float), 0, 0, 0);
        DataCopyPad(gWs_[seq * td_.seqLen + l], g, gates);
    }

    // v -> sqrt(v / D + eps) on m row values
    __aicore__ inline void Rms(const LocalTensor<float>& v, uint32_t m)
    {
        Muls(v, v, td_.invHidden, m);
        Adds(v, v, td_.eps, m);
        Sqrt(v, v, m);
    }

    // the tile's x rows after the history in xBuf (with the history's rows inside the sequence
    // when not carried: one copy from the workspace), then y = sum_k W_k x[rows + k dil] and
    // out = v g + SiLU(y) (SiLU(y) = y / (1 + exp(-y))), stored. SiLU works in the tile's spent x
    // rows (the next history is the rows after them)
    __aicore__ inline void ConvOut(uint64_t seq, uint64_t l0, uint32_t n, bool carried)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad, T = td_.tileRows, S = td_.history, lanes = n * P;
        const uint32_t slots = (T + 7) / 8 * 8;
        const uint64_t b = seq / td_.hc, hc = seq % td_.hc;
        const uint64_t C = static_cast<uint64_t>(td_.hc) * D, tok = b * td_.seqLen + l0;
        LocalTensor<float> work = workBuf_.Get<float>();
        LocalTensor<float> x = xBuf_.Get<float>();
        LocalTensor<float> y = work, vg = work[T * P], t = x;
        LocalTensor<float> g = rowBuf_.Get<float>()[4 * slots];
        LocalTensor<float> taps = tapBuf_.Get<float>();
        // rows before the sequence: the state or zeros
        const uint32_t before = carried || l0 >= S ? 0 : static_cast<uint32_t>(S - l0);
        if (before > 0) {
            if (td_.hasState) {
                LoadState(b, hc, static_cast<uint32_t>(l0), before);
            } else {
                Duplicate(x, 0.0f, before * P);
            }
        }
        const uint32_t first = carried ? S : before;          // the first xBuf row read from GM
        const uint64_t from = l0 + first - S;                 // its position in the sequence
        const uint32_t xGap = (P * 4 - (D * 4 + 31) / 32 * 32) / 32;
        const uint32_t gap = (P * sizeof(Elem) - (D * sizeof(Elem) + 31) / 32 * 32) / 32;
        SyncPipes<HardEvent::V_MTE2>();            // xBuf, the value tile and g are consumed
        DataCopyExtParams rows(static_cast<uint16_t>(S + n - first), D * sizeof(float), static_cast<uint32_t>((C - D) * sizeof(float)), xGap, 0);
        DataCopyPad(x[first * P], xWs_[(b * td_.seqLen + from) * C + hc * D], rows, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        DataCopyExtParams dense(static_cast<uint16_t>(n), D * sizeof(Elem), 0, gap, 0);
        DataCopyPad(valueBuf_.Get<Elem>(), valueGm_[tok * D], dense, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
        DataCopyExtParams gates(1, n * sizeof(float), 0, 0, 0);
        DataCopyPad(g, gWs_[seq * td_.seqLen + l0], gates, DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        SyncPipes<HardEvent::MTE2_V>();
        Cast(vg, valueBuf_.Get<Elem>(), RoundMode::CAST_NONE, lanes);
        RowsTimesScalars(vg, vg, g, n);
        RowsTimesVec(y, x, taps, n);
        for (uint32_t k = 1; k < td_.taps; ++k) {
            RowsMulAdd(y, x[k * td_.dilation * P], taps[k * P], n);
        }
        Muls(t, y, -1.0f, lanes);
        Exp(t, t, lanes);
        Adds(t, t, 1.0f, lanes);
        Reciprocal(t, t, lanes);
        Mul(t, t, y, lanes);
        Add(t, t, vg, lanes);
        LocalTensor<Elem> o = keysBuf_.Get<Elem>();
        SyncPipes<HardEvent::MTE3_V>();            // the previous output tile is stored
        Cast(o, t, RoundMode::CAST_RINT, lanes);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams spread(static_cast<uint16_t>(n), D * sizeof(Elem), gap, static_cast<uint32_t>((C - D) * sizeof(Elem)), 0);
        DataCopyPad(outGm_[tok * C + hc * D], o, spread);
    }

    __aicore__ inline bool Strided(uint32_t n) const
    {
        return td_.stridedRows && n > td_.rowPad / 64;
    }

    // sums[i] = sum of the D lanes of row i (the tile is overwritten). wholeSums: one partial per
    // 64-lane chunk (WholeReduceSum over the tile), then one per row over its D / 64 partials;
    // else the chunks fold onto the first (Add, 248 rows a call) and one WholeReduceSum a row block
    __aicore__ inline void RowSums(const LocalTensor<float>& sums, const LocalTensor<float>& tile, uint32_t n)
    {
        const uint32_t D = td_.hidden, P = td_.rowPad;
        if (td_.wholeSums) {
            const uint32_t chunks = P / 64, total = n * chunks;
            LocalTensor<float> part = partBuf_.Get<float>();
            for (uint32_t r = 0; r < total; r += 248) {
                const uint8_t reps = static_cast<uint8_t>(total - r < 248 ? total - r : 248);
                WholeReduceSum(part[r], tile[r * 64], 64, reps, 1, 1, 8);
            }
            for (uint32_t r = 0; r < n; r += 248) {
                const uint8_t rows = static_cast<uint8_t>(n - r < 248 ? n - r : 248);
                WholeReduceSum(sums[r], part[r * chunks], static_cast<int32_t>(chunks), rows, 1, 1,
                               static_cast<uint16_t>(chunks / 8));
            }
            return;
        }
        const uint8_t rowStride = static_cast<uint8_t>(P / 8);
        for (uint32_t r = 0; r < n; r += 248) {
            const uint8_t rows = static_cast<uint8_t>(n - r < 248 ? n - r : 248);
            const BinaryRepeatParams rep(1, 1, 1, rowStride, rowStride, rowStride);
            for (uint32_t c = 64; c < D; c += 64) {
                const uint64_t mask = D - c < 64 ? D - c : 64;
                Add(tile[r * P], tile[r * P], tile[r * P + c], mask, rows, rep);
            }
            WholeReduceSum(sums[r], tile[r * P], static_cast<int32_t>(D < 64 ? D : 64), rows, 1, 1, rowStride);
        }
    }

    // dst row i = src row i * vec (P lanes)
    __aicore__ inline void RowsTimesVec(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                        const LocalTensor<float>& vec, uint32_t n)
    {
        const uint32_t P = td_.rowPad;
        if (!Strided(n)) {
            for (uint32_t i = 0; i < n; ++i) {
                Mul(dst[i * P], src[i * P], vec, P);
            }
            return;
        }
        const uint8_t rowStride = static_cast<uint8_t>(P / 8);
        for (uint32_t r = 0; r < n; r += 248) {
            const uint8_t rows = static_cast<uint8_t>(n - r < 248 ? n - r : 248);
            for (uint32_t c = 0; c < P; c += 64) {
                const uint64_t mask = P - c < 64 ? P - c : 64;
                Mul(dst[r * P + c], src[r * P + c], vec[c], mask, rows, BinaryRepeatParams(1, 1, 1, rowStride, rowStride, 0));
            }
        }
    }

    // dst row i += src row i * vec (P lanes)
    __aicore__ inline void RowsMulAdd(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                      const LocalTensor<float>& vec, uint32_t n)
    {
        const uint32_t P = td_.rowPad;
        if (!Strided(n)) {
            for (uint32_t i = 0; i < n; ++i) {
                MulAddDst(dst[i * P], src[i * P], vec, P);
            }
            return;
        }
        const uint8_t rowStride = static_cast<uint8_t>(P / 8);
        for (uint32_t r = 0; r < n; r += 248) {
            const uint8_t rows = static_cast<uint8_t>(n - r < 248 ? n - r : 248);
            for (uint32_t c = 0; c < P; c += 64) {
                const uint64_t mask = P - c < 64 ? P - c : 64;
                MulAddDst(dst[r * P + c], src[r * P + c], vec[c], mask, rows, BinaryRepeatParams(1, 1, 1, rowStride, rowStride, 0));
            }
        }
    }

    // dst row i = src row i * vals[i]: vals spread to a 32-byte block per row (Brcb) and strided
    // Mul calls (src1 block stride 0), or a Muls per row by the value read back as a scalar
    __aicore__ inline void RowsTimesScalars(const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                            const LocalTensor<float>& vals, uint32_t n)
    {
        const uint32_t P = td_.rowPad;
        if (!Strided(n)) {
            SyncPipes<HardEvent::V_S>();
            for (uint32_t i = 0; i < n; ++i) {
                Muls(dst[i * P], src[i * P], vals.GetValue(i), P);
            }
            return;
        }
        LocalTensor<float> blocks = blockBuf_.Get<float>();
        Brcb(blocks, vals, static_cast<uint8_t>((n + 7) / 8), BrcbRepeatParams(1, 8));
        const uint8_t rowStride = static_cast<uint8_t>(P / 8);
        for (uint32_t r = 0; r < n; r += 248) {
            const uint8_t rows = static_cast<uint8_t>(n - r < 248 ? n - r : 248);
            for (uint32_t c = 0; c < P; c += 64) {
                const uint64_t mask = P - c < 64 ? P - c : 64;
                Mul(dst[r * P + c], src[r * P + c], blocks[r * 8], mask, rows,
                    BinaryRepeatParams(1, 1, 0, rowStride, rowStride, 1));
            }
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> keysBuf_;
    TBuf<QuePosition::VECCALC> hiddenBuf_;
    TBuf<QuePosition::VECCALC> valueBuf_;
    TBuf<QuePosition::VECCALC> workBuf_;
    TBuf<QuePosition::VECCALC> xBuf_;
    TBuf<QuePosition::VECCALC> normBuf_;
    TBuf<QuePosition::VECCALC> tapBuf_;
    TBuf<QuePosition::VECCALC> rowBuf_;
    TBuf<QuePosition::VECCALC> blockBuf_;
    TBuf<QuePosition::VECCALC> partBuf_;
    TBuf<QuePosition::VECCALC> patternBuf_;
    GlobalTensor<Elem> keysGm_;
    GlobalTensor<Elem> hiddenGm_;
    GlobalTensor<Elem> valueGm_;
    GlobalTensor<float> w1Gm_;
    GlobalTensor<float> w2Gm_;
    GlobalTensor<float> wcGm_;
    GlobalTensor<float> weightGm_;
    GlobalTensor<Elem> stateGm_;
    GlobalTensor<Elem> outGm_;
    GlobalTensor<Elem> stateOutGm_;
    GlobalTensor<float> xWs_;                 // x of every token, [B, L, HC, D]
    GlobalTensor<float> gWs_;                 // g of every token, [B HC, L]
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@CALL@, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@ATTRS@    const gert::Shape& keysShape = context->GetInputShape(@P_KEYS@)->GetStorageShape();
    const gert::Shape& weightShape = context->GetInputShape(@P_WEIGHT@)->GetStorageShape();
    if (keysShape.GetDimNum() != 4 || weightShape.GetDimNum() != 3) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t B = keysShape.GetDim(0), L = keysShape.GetDim(1), HC = keysShape.GetDim(2), D = keysShape.GetDim(3);
    const uint64_t K = weightShape.GetDim(2);
    const int64_t dilation = @DILATION@;
    if (@SHAPE_CHECKS@ || B == 0 || L == 0 || HC == 0 || D == 0 || K == 0 || dilation < 1 ||
        static_cast<uint64_t>(weightShape.GetDim(0)) != HC * D || weightShape.GetDim(1) != 1) {
        return ge::GRAPH_FAILED;   // the golden's shape checks
    }
    const uint64_t S = (K - 1) * static_cast<uint64_t>(dilation);
    if (S > 128) {
        return ge::GRAPH_FAILED;   // the state's GatherMask pattern covers channels of up to 128 columns
    }
    const gert::StorageShape* stateShape = context->GetOptionalInputShape(@P_STATE@);
    td->hasState = stateShape != nullptr ? 1 : 0;
    if (td->hasState) {
        const gert::Shape& st = stateShape->GetStorageShape();
        if (st.GetDimNum() != 3 || static_cast<uint64_t>(st.GetDim(0)) != B ||
            static_cast<uint64_t>(st.GetDim(1)) != HC * D || static_cast<uint64_t>(st.GetDim(2)) != S) {
            return ge::GRAPH_FAILED;
        }
    }
    td->hidden = static_cast<uint32_t>(D);
    td->rowPad = static_cast<uint32_t>((D + 15) / 16 * 16);
    td->hc = static_cast<uint32_t>(HC);
    td->taps = static_cast<uint32_t>(K);
    td->dilation = static_cast<uint32_t>(dilation);
    td->history = static_cast<uint32_t>(S);
    td->wholeSums = D % 512 == 0 ? 1 : 0;
    td->stridedRows = td->rowPad / 8 <= 255 ? 1 : 0;
    if (!td->wholeSums && !td->stridedRows) {
        return ge::GRAPH_FAILED;   // rows over 2040 lanes fold only when D is a multiple of 512
    }
    td->invHidden = 1.0f / static_cast<float>(D);
    td->sqrtHidden = std::sqrt(static_cast<float>(D));
    td->batch = B;
    td->seqLen = L;
    td->seqs = B * HC;

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    const uint64_t eb = DtypeBytes(context->GetInputDesc(@P_KEYS@)->GetDataType());
    const uint64_t P = td->rowPad;
    // per token row: keys / hidden / value tiles, two fp32 scratch tiles, its x row, the row
    // scalars and block, its sum partials; fixed: S history rows, w1 w2 and wc, K conv rows
    const uint64_t perRow = P * (3 * eb + 2 * 4 + 4) + 8 * 4 + 32 + (td->wholeSums ? P / 64 * 4 : 0);
    const uint64_t fixed = P * 4 * (S + 2 + K) + 64 * 4 + 8 * 1024;
    if (ubSize <= reserve + fixed + perRow) {
        return ge::GRAPH_FAILED;   // the history rows and the weights of one sequence do not fit UB
    }
    uint64_t tile = (ubSize - reserve - fixed) / perRow;
    // spread the tokens over the cores
    const uint64_t share = (B * HC * L + coreNum - 1) / coreNum;
    tile = tile > share ? share : tile;
    tile = tile > L ? L : tile;
    tile = tile > 248 ? 248 : tile;
    tile = tile == 0 ? 1 : tile;
    td->tileRows = static_cast<uint32_t>(tile);
    // the scratch (two fp32 tiles) also stages, in chunks of channels, the conv weights (chans x K
    // and chans offsets) and the state's blocks (chans x 16 twice, 16-bit)
    // (the UB the tiles leave free widens the chunks: fewer rounds for short sequences)
    const uint64_t work = 2 * tile * P;
    const uint64_t room = work + (ubSize - reserve - fixed - tile * perRow) / 4;
    const uint64_t weightChans = room / (K + 1) / 16 * 16;
    // a state block: cols and staged (SP 16-bit lanes a channel each) and the dense copy (S)
    uint64_t SP = 16;                 // S rounded up to a power of two (the kernel's StatePitch)
    while (SP < S) {
        SP *= 2;
    }
    const uint64_t stateChans = (room - 128) / ((2 * SP + S + 1) / 2) / 16 * 16;
    td->weightChans = static_cast<uint32_t>(weightChans == 0 ? 16 : (weightChans > P ? P : weightChans));
    td->stateChans = static_cast<uint32_t>(stateChans == 0 ? 16 : (stateChans > P ? P : stateChans));
    const uint64_t stateNeed = td->stateChans * ((2 * SP + S + 1) / 2) + 128;
    const uint64_t need = td->weightChans * (K + 1) > stateNeed ? td->weightChans * (K + 1) : stateNeed;
    td->workLen = static_cast<uint32_t>(work > need ? work : need);
    td->tilesPerSeq = (L + tile - 1) / tile;
    td->units = td->seqs * td->tilesPerSeq;

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    // x (fp32, one row of D per token and hc) and g (one per token and hc), between the phases
    workspace[0] = platform.GetLibApiWorkSpaceSize() + (B * L * HC * D + B * HC * L) * sizeof(float);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
