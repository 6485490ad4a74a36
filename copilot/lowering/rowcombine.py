"""Index-driven row combine (moe_finalize_routing): output row r gathers K rows by an index and
sums them, weighted, onto residual rows:

    out[r] = skip1[r] + skip2[r] + sum_k w[r, k] * (rows[idx[pos(r, k)]] + bias[e[r, k]])

pos(r, k) = k R + r (k-major) or r K + k (r-major), from an int attr; idx -1 drops the whole term
(other negatives read row 0); an expert e outside [0, E) adds no bias; skip1, skip2, bias (with
e) and w are optional: absent, a residual is 0, the bias is not added and K = 1 with w = 1.
Every sum is in fp32, in the golden's order (skip1 + skip2, then k = 0, 1, ...).

The golden is recognised by what it computes: the inputs' roles (which optional float input is a
residual, the bias or the weights) and each attr value's position order are the ones under which
it matches the formula above on small fp64 probes, for every pattern of absent inputs the cases
have. The kernel branches on tiling flags saying which inputs are present.

The kernel works on tiles of output rows: the tile's indices, weights and experts are copied to
UB once, each gathered row (and bias row) is one DataCopyPad into its slot of the term tile, and
the weights scale the term rows before one Add per k.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.capture import call_golden_roles

ROLES = ("skip1", "skip2", "bias", "scales")
ORDERS = ("k_major", "r_major")


@dataclass
class RowCombinePlan:
    task: object
    pattern: str                          # "row_combine"
    roles: dict                           # role -> input position: rows, idx, experts, skip1, skip2, bias, scales
    variants: list[tuple]                 # (attr guards, order), one per attr combination
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _reference(rows, idx, skip1, skip2, bias, scales, experts, order: str):
    import torch

    H = rows.shape[-1]
    table = rows.reshape(-1, H)
    K = scales.shape[1] if scales is not None else 1
    R = idx.shape[0] // K
    out = torch.zeros(R, H, dtype=table.dtype)
    if skip1 is not None:
        out = skip1.clone()
        if skip2 is not None:
            out = out + skip2
    elif skip2 is not None:
        out = skip2.clone()
    r = torch.arange(R)
    for k in range(K):
        v = idx[k * R + r] if order == "k_major" else idx[r * K + k]
        term = table[v.clamp(min=0).long()]
        if bias is not None and experts is not None:
            e = experts[:, k]
            ok = (e >= 0) & (e < bias.shape[0])
            term = term + torch.where(ok[:, None], bias[e.clamp(0, bias.shape[0] - 1).long()], torch.zeros(()))
        term = torch.where((v != -1)[:, None], term, torch.zeros((), dtype=term.dtype))
        out = out + (scales[:, k][:, None] if scales is not None else 1.0) * term
    return out


def _probe_inputs(present: set, rows_rank: int, seed: int) -> dict:
    import torch

    g = torch.Generator().manual_seed(seed)
    R, H, E, M = 5, 16, 4, 24
    K = 3 if "scales" in present else 1
    shape = (M, H) if rows_rank == 2 else (4, M // 4, H)
    out = {"rows": torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1,
           "idx": torch.randint(-1, M, (R * K,), generator=g, dtype=torch.int32)}
    out["idx"][0] = -1          # a dropped term and an in-range one in every probe
    out["idx"][1] = M - 1
    if "skip1" in present:
        out["skip1"] = torch.rand(R, H, generator=g, dtype=torch.float64) * 2 - 1
    if "skip2" in present:
        out["skip2"] = torch.rand(R, H, generator=g, dtype=torch.float64) * 2 - 1
    if "bias" in present:
        out["bias"] = torch.rand(E, H, generator=g, dtype=torch.float64) * 2 - 1
    if "scales" in present:
        out["scales"] = torch.rand(R, K, generator=g, dtype=torch.float64)
    if "experts" in present:
        out["experts"] = torch.randint(-1, E + 1, (R, K), generator=g, dtype=torch.int32)
    return out


def _matches(task, roles: dict, present: set, rows_rank: int, attrs: dict, order: str) -> bool:
    import torch

    for seed in (16, 17):
        ins = _probe_inputs(present, rows_rank, seed)
        got = call_golden_roles(task, roles, ins, attrs)
        if got is None:
            return False
        got = got[0] if isinstance(got, (list, tuple)) and len(got) == 1 else got
        want = _reference(ins["rows"], ins["idx"], ins.get("skip1"), ins.get("skip2"), ins.get("bias"),
                          ins.get("scales"), ins.get("experts"), order)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or \
                not torch.allclose(got.double(), want, rtol=1e-12, atol=1e-12):
            return False
    return True


def plan_row_combine(task):
    """The row-combine plan of `task`, or None when its golden is not the combine above."""
    cases = task.cases
    if len(task.outputs) != 1 or not cases or any(a.type not in ("int", "bool", "string") for a in task.attrs):
        return None
    ints = [i for i, s in enumerate(task.inputs) if set(s.dtypes) <= {"int32"}]
    floats = [i for i, s in enumerate(task.inputs) if set(s.dtypes) <= {"float16", "bfloat16", "float32"}]
    if len(ints) + len(floats) != len(task.inputs) or not 1 <= len(ints) <= 2:
        return None
    required = [i for i in floats if not task.inputs[i].optional]
    optional = [i for i in floats if task.inputs[i].optional]
    idx = [i for i in ints if not task.inputs[i].optional]
    experts = [i for i in ints if task.inputs[i].optional]
    if len(required) != 1 or len(idx) != 1 or len(experts) > 1 or not 1 <= len(optional) <= 4:
        return None
    c0 = cases[0]
    if c0.shapes[idx[0]] is None or len(c0.shapes[idx[0]]) != 1:
        return None
    def attrs_of(c):
        return {a.name: c.attrs.get(a.name, a.default) for a in task.attrs}

    def present_of(c, roles):
        return {role for role, pos in roles.items() if c.shapes[pos] is not None}

    # the roles: the assignment of the optional float inputs under which the first case matches
    found = None
    base = {"rows": required[0], "idx": idx[0], **({"experts": experts[0]} if experts else {})}
    for perm in itertools.permutations(ROLES, len(optional)):
        roles = {**base, **dict(zip(perm, optional))}
        for order in ORDERS:
            if _matches(task, roles, present_of(c0, roles), len(c0.shapes[required[0]]), attrs_of(c0), order):
                found = roles
                break
        if found:
            break
    if found is None:
        return None
    roles = found
    variants, unserved, seen = [], {}, {}
    for c in cases:
        key = (repr(sorted(attrs_of(c).items())), tuple(sorted(present_of(c, roles))), len(c.shapes[roles["rows"]]))
        if key not in seen:
            seen[key] = [o for o in ORDERS if _matches(task, roles, present_of(c, roles), key[2], attrs_of(c), o)]
        orders = seen[key]
        guards = attrs_of(c)
        if not orders:
            unserved[c.id] = "the golden is not the row combine on probes for these attrs and inputs"
            continue
        prior = next((v for v in variants if v[0] == guards), None)
        if prior is None:
            variants.append((guards, orders[0]))
        elif prior[1] not in orders:
            raise Unsupported(f"{task.name}: one attr combination orders the indices two ways")
    if not variants:
        return None
    plan = RowCombinePlan(task, "row_combine", roles, variants, unserved)
    plan.notes.append("roles: " + ", ".join(f"{r} = {task.inputs[p].name}" for r, p in roles.items()))
    return plan


def render(plan: RowCombinePlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of, _variant_condition

    t = plan.task
    cls = camel(t.name)
    roles = plan.roles
    name = {r: t.inputs[p].name for r, p in roles.items()}
    sel = "".join(f"    if ({_variant_condition(t, g, [])}) {{\n        td->rowMajor = {ORDERS.index(o)};   // {o}\n"
                  f"        known = true;\n    }}\n" for g, o in plan.variants)
    select = ("    bool known = false;\n" + sel +
              "    if (!known) {\n        return ge::GRAPH_FAILED;   // attrs of no variant the golden showed\n    }\n")
    variants_doc = "".join(f"\n//   {', '.join(f'{k} = {v!r}' for k, v in g.items()) or 'always'}: {o}" for g, o in plan.variants)
    ins = [i.name for i in t.inputs]
    out = t.outputs[0].name

    def macro(role, fallback):
        return _macro_of(name[role]) if role in name else fallback

    def pos(role):
        return str(roles.get(role, -1))

    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for k, v in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                 ("@XT@", _macro_of(name["rows"])), ("@ST@", macro("scales", "float")), ("@YT@", _macro_of(out)),
                 ("@ROWS@", _ident(name["rows"])), ("@IDX@", _ident(name["idx"])),
                 ("@SKIP1@", _ident(name.get("skip1", "skip1"))), ("@SKIP2@", _ident(name.get("skip2", "skip2"))),
                 ("@BIAS@", _ident(name.get("bias", "bias"))), ("@SCALES@", _ident(name.get("scales", "scales"))),
                 ("@EXPERTS@", _ident(name.get("experts", "experts"))), ("@OUT@", _ident(out)),
                 ("@ROLES_DOC@", ", ".join(f"{r} = {n}" for r, n in name.items())), ("@VARIANTS_DOC@", variants_doc),
                 ("@ARGS@", ", ".join(f"GM_ADDR {_ident(n)}" for n in ins + [out])),
                 ("@CALL@", ", ".join(_ident(name[r]) if r in name else "nullptr"
                                       for r in ("rows", "idx", "skip1", "skip2", "bias", "scales", "experts"))
                  + f", {_ident(out)}"),
                 ("@P_ROWS@", pos("rows")), ("@P_IDX@", pos("idx")), ("@P_SKIP1@", pos("skip1")),
                 ("@P_SKIP2@", pos("skip2")), ("@P_BIAS@", pos("bias")), ("@P_SCALES@", pos("scales")),
                 ("@P_EXPERTS@", pos("experts")), ("@SELECT@", select),
                 ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                 # work: each gathered row costs a DMA's latency, about 1024 elements' worth of copying
                 ("@SPLIT@", core_split(knobs, "td->outRows * td->topK * (td->hidden + 1024)", "td->units")),
                 ("@SYNC@", SYNC_PIPES)):
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: index-driven row combine (fp32 sums, in this order):
//   out[r] = skip1[r] + skip2[r] + sum_k w[r, k] * (rows[idx[pos(r, k)]] + bias[e[r, k]])
// pos(r, k) = k R + r (k-major) or r K + k (r-major); idx -1 drops the term; an expert outside
// [0, E) adds no bias. Inputs: @ROLES_DOC@; every optional one may be absent (a tiling flag):
// no residual adds 0, no bias (or experts) adds none, no weights means K = 1 and w = 1.
// Variants (attrs -> order):@VARIANTS_DOC@
// A tile is tileRows output rows: its indices, weights and experts are copied to UB once; each
// gathered row (and bias row) is one DataCopyPad into its slot of the term tile (rows padded to
// rowPad elements), the weights scale the term rows, and one Add per k accumulates.
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint32_t hidden;                    // H
    uint32_t rowPad;                    // H rounded up to 16 elements: a row's slot in UB
    uint32_t topK;                      // K (1 without weights)
    uint32_t tileRows;
    uint32_t rowMajor;                  // 1: idx[r K + k]; 0: idx[k R + r]
    uint32_t hasSkip1;
    uint32_t hasSkip2;
    uint32_t hasBias;                   // bias and experts both present
    uint32_t hasScales;
    uint32_t blockDim;
    uint64_t outRows;                   // R
    uint64_t tableRows;                 // rows the index reads from (numel / H)
    uint64_t experts;                   // E
    uint64_t units;                     // tiles
    uint64_t formerNum;                 // cores taking formerUnits tiles; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
using Weight = @ST@;
using Out = @YT@;

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR rows, GM_ADDR idx, GM_ADDR skip1, GM_ADDR skip2, GM_ADDR bias, GM_ADDR scales,
                                GM_ADDR experts, GM_ADDR out, const @T@& tiling)
    {
        td_ = tiling;
        const uint64_t H = td_.hidden, R = td_.outRows, K = td_.topK;
        rowsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(rows), td_.tableRows * H);
        idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(idx), R * K);
        outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Out*>(out), R * H);
        if (td_.hasSkip1) {
            skip1Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(skip1), R * H);
        }
        if (td_.hasSkip2) {
            skip2Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(skip2), R * H);
        }
        if (td_.hasBias) {
            biasGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(bias), td_.experts * H);
            expertGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(experts), R * K);
        }
        if (td_.hasScales) {
            scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Weight*>(scales), R * K);
        }
@UNIT_RANGE@        const uint32_t lanes = td_.tileRows * td_.rowPad;
        const uint32_t metaLen = (td_.tileRows + 7) / 8 * 8 * td_.topK;   // K slots of tileRows, 32-byte aligned
        pipe_.InitBuffer(accBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(termBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(rawBuf_, lanes * sizeof(Elem));
        pipe_.InitBuffer(outBuf_, lanes * sizeof(Out));
        pipe_.InitBuffer(idxBuf_, metaLen * sizeof(int32_t));
        if (td_.hasBias) {
            pipe_.InitBuffer(biasBuf_, lanes * sizeof(float));
            pipe_.InitBuffer(biasRawBuf_, lanes * sizeof(Elem));
            pipe_.InitBuffer(expertBuf_, metaLen * sizeof(int32_t));
        }
        if (td_.hasScales) {
            pipe_.InitBuffer(scaleBuf_, metaLen * sizeof(float));
            pipe_.InitBuffer(scaleRawBuf_, (metaLen * sizeof(Weight) + 31) / 32 * 32);
        }
        // pad lanes of the staged rows stay zero (they are summed, never stored)
        Duplicate(rawBuf_.Get<Elem>(), static_cast<Elem>(0.0f), lanes);
        if (td_.hasBias) {
            Duplicate(biasRawBuf_.Get<Elem>(), static_cast<Elem>(0.0f), lanes);
        }
        SyncPipes<HardEvent::V_MTE2>();
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            const uint64_t r0 = (unitStart_ + u) * td_.tileRows;
            const uint64_t left = td_.outRows - r0;
            const uint32_t n = static_cast<uint32_t>(left < td_.tileRows ? left : td_.tileRows);
            LoadMeta(r0, n);
            Residual(r0, n);
            for (uint32_t k = 0; k < td_.topK; ++k) {
                AddTerm(k, n);
            }
            Store(r0, n);
        }
    }

private:
    // index of term (row i, k) in the tile's index block
    __aicore__ inline uint32_t IdxAt(uint32_t i, uint32_t k) const
    {
        return td_.rowMajor ? i * td_.topK + k : k * ((td_.tileRows + 7) / 8 * 8) + i;
    }

    // the tile's indices, experts and fp32 weights in UB, for scalar reads
    __aicore__ inline void LoadMeta(uint64_t r0, uint32_t n)
    {
        const uint32_t K = td_.topK;
        LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
        SyncPipes<HardEvent::S_MTE2>();            // the previous tile's scalar reads are done
        if (td_.rowMajor) {                        // idx[(r0 + i) K + k]: one block of n K
            DataCopyExtParams in(1, n * K * sizeof(int32_t), 0, 0, 0);
            DataCopyPad(idx, idxGm_[r0 * K], in, DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
        } else {                                   // idx[k R + r0 + i]: K runs of n, each in its slot
            const uint32_t slot = (td_.tileRows + 7) / 8 * 8;
            DataCopyExtParams in(static_cast<uint16_t>(K), n * sizeof(int32_t),
                                 static_cast<uint32_t>((td_.outRows - n) * sizeof(int32_t)),
                                 (slot * sizeof(int32_t) - (n * sizeof(int32_t) + 31) / 32 * 32) / 32, 0);
            DataCopyPad(idx, idxGm_[r0], in, DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
        }
        if (td_.hasBias) {
            DataCopyExtParams in(1, n * K * sizeof(int32_t), 0, 0, 0);
            DataCopyPad(expertBuf_.Get<int32_t>(), expertGm_[r0 * K], in, DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
        }
        if (td_.hasScales) {
            LocalTensor<float> w = scaleBuf_.Get<float>();
            DataCopyExtParams in(1, n * K * sizeof(Weight), 0, 0, 0);
            if constexpr (std::is_same<Weight, float>::value) {
                DataCopyPad(w.ReinterpretCast<Weight>(), scaleGm_[r0 * K], in, DataCopyPadExtParams<Weight>(false, 0, 0, 0));
            } else {
                LocalTensor<Weight> raw = scaleRawBuf_.Get<Weight>();
                DataCopyPad(raw, scaleGm_[r0 * K], in, DataCopyPadExtParams<Weight>(false, 0, 0, static_cast<Weight>(0.0f)));
                SyncPipes<HardEvent::MTE2_V>();
                Cast(w, raw, RoundMode::CAST_NONE, n * K);
                SyncPipes<HardEvent::V_S>();
            }
        }
        SyncPipes<HardEvent::MTE2_S>();
    }

    // n rows of H from GM into padded slots of the staging tile, in fp32 at dst
    __aicore__ inline void LoadRows(const LocalTensor<float>& dst, const GlobalTensor<Elem>& gm, uint64_t r0, uint32_t n)
    {
        LocalTensor<Elem> raw = rawBuf_.Get<Elem>();
        const uint32_t gap = (td_.rowPad * sizeof(Elem) - (td_.hidden * sizeof(Elem) + 31) / 32 * 32) / 32;
        DataCopyExtParams in(static_cast<uint16_t>(n), td_.hidden * sizeof(Elem), 0, gap, 0);
        SyncPipes<HardEvent::V_MTE2>();
        DataCopyPad(raw, gm[r0 * td_.hidden], in, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
        SyncPipes<HardEvent::MTE2_V>();
        ToFloat(dst, raw, n * td_.rowPad);
    }

    __aicore__ inline void Residual(uint64_t r0, uint32_t n)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        const uint32_t lanes = n * td_.rowPad;
        if (td_.hasSkip1) {
            LoadRows(acc, skip1Gm_, r0, n);
            if (td_.hasSkip2) {
                LocalTensor<float> term = termBuf_.Get<float>();
                LoadRows(term, skip2Gm_, r0, n);
                Add(acc, acc, term, lanes);
            }
        } else if (td_.hasSkip2) {
            LoadRows(acc, skip2Gm_, r0, n);
        } else {
            Duplicate(acc, 0.0f, lanes);
        }
    }

    // acc += w[:, k] * (rows[idx] + bias[e]) over the tile, a dropped row contributing w * 0
    __aicore__ inline void AddTerm(uint32_t k, uint32_t n)
    {
        const uint32_t H = td_.hidden, P = td_.rowPad, K = td_.topK;
        LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
        LocalTensor<Elem> raw = rawBuf_.Get<Elem>();
        LocalTensor<Elem> biasRaw;
        LocalTensor<int32_t> expert;
        if (td_.hasBias) {
            biasRaw = biasRawBuf_.Get<Elem>();
            expert = expertBuf_.Get<int32_t>();
        }
        SyncPipes<HardEvent::V_MTE2>();            // the previous term is consumed
        DataCopyExtParams row(1, H * sizeof(Elem), 0, 0, 0);
        for (uint32_t i = 0; i < n; ++i) {
            int64_t v = idx.GetValue(IdxAt(i, k));
            v = v < 0 ? 0 : (v >= static_cast<int64_t>(td_.tableRows) ? static_cast<int64_t>(td_.tableRows) - 1 : v);
            DataCopyPad(raw[i * P], rowsGm_[static_cast<uint64_t>(v) * H], row, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
            if (td_.hasBias) {
                const int32_t e = expert.GetValue(i * K + k);
                const uint64_t at = e >= 0 && static_cast<uint64_t>(e) < td_.experts ? static_cast<uint64_t>(e) : 0;
                DataCopyPad(biasRaw[i * P], biasGm_[at * H], row, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
            }
        }
        SyncPipes<HardEvent::MTE2_V>();
        LocalTensor<float> term = termBuf_.Get<float>();
        const uint32_t lanes = n * P;
        ToFloat(term, raw, lanes);
        if (td_.hasBias) {
            LocalTensor<float> b = biasBuf_.Get<float>();
            ToFloat(b, biasRaw, lanes);
            for (uint32_t i = 0; i < n; ++i) {
                const int32_t e = expert.GetValue(i * K + k);
                if (e < 0 || static_cast<uint64_t>(e) >= td_.experts) {
                    Duplicate(b[i * P], 0.0f, P);  // no bias for an expert out of range
                }
            }
            Add(term, term, b, lanes);
        }
        for (uint32_t i = 0; i < n; ++i) {
            if (idx.GetValue(IdxAt(i, k)) == -1) {
                Duplicate(term[i * P], 0.0f, P);   // a dropped term
            }
        }
        if (td_.hasScales) {
            LocalTensor<float> w = scaleBuf_.Get<float>();
            for (uint32_t i = 0; i < n; ++i) {
                Muls(term[i * P], term[i * P], w.GetValue(i * K + k), P);
            }
        }
        LocalTensor<float> acc = accBuf_.Get<float>();
        Add(acc, acc, term, lanes);
    }

    __aicore__ inline void Store(uint64_t r0, uint32_t n)
    {
        LocalTensor<float> acc = accBuf_.Get<float>();
        LocalTensor<Out> y = outBuf_.Get<Out>();
        SyncPipes<HardEvent::MTE3_V>();            // the previous tile left y
        if constexpr (std::is_same<Out, float>::value) {
            Adds(y.ReinterpretCast<float>(), acc, 0.0f, n * td_.rowPad);
        } else {
            Cast(y, acc, RoundMode::CAST_RINT, n * td_.rowPad);
        }
        const uint32_t gap = (td_.rowPad * sizeof(Out) - (td_.hidden * sizeof(Out) + 31) / 32 * 32) / 32;
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyExtParams out(static_cast<uint16_t>(n), td_.hidden * sizeof(Out), gap, 0, 0);
        DataCopyPad(outGm_[r0 * td_.hidden], y, out);
    }

    // fp32 copy of a staged tile (16-bit data through Cast)
    __aicore__ inline void ToFloat(const LocalTensor<float>& dst, const LocalTensor<Elem>& src, uint32_t lanes)
    {
        if constexpr (std::is_same<Elem, float>::value) {
            Adds(dst, src.ReinterpretCast<float>(), 0.0f, lanes);
        } else {
            Cast(dst, src, RoundMode::CAST_NONE, lanes);
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> accBuf_;
    TBuf<QuePosition::VECCALC> termBuf_;
    TBuf<QuePosition::VECCALC> rawBuf_;
    TBuf<QuePosition::VECCALC> outBuf_;
    TBuf<QuePosition::VECCALC> idxBuf_;
    TBuf<QuePosition::VECCALC> biasBuf_;
    TBuf<QuePosition::VECCALC> biasRawBuf_;
    TBuf<QuePosition::VECCALC> expertBuf_;
    TBuf<QuePosition::VECCALC> scaleBuf_;
    TBuf<QuePosition::VECCALC> scaleRawBuf_;
    GlobalTensor<Elem> rowsGm_;
    GlobalTensor<int32_t> idxGm_;
    GlobalTensor<Elem> skip1Gm_;
    GlobalTensor<Elem> skip2Gm_;
    GlobalTensor<Elem> biasGm_;
    GlobalTensor<int32_t> expertGm_;
    GlobalTensor<Weight> scaleGm_;
    GlobalTensor<Out> outGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@CALL@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@SELECT@    // which optional inputs the case has
    auto present = [&](int32_t pos) { return pos >= 0 && context->GetOptionalInputShape(pos) != nullptr; };
    td->hasSkip1 = present(@P_SKIP1@) ? 1 : 0;
    td->hasSkip2 = present(@P_SKIP2@) ? 1 : 0;
    td->hasBias = present(@P_BIAS@) && present(@P_EXPERTS@) ? 1 : 0;
    td->hasScales = present(@P_SCALES@) ? 1 : 0;
    const gert::Shape& rowsShape = context->GetInputShape(@P_ROWS@)->GetStorageShape();
    const gert::Shape& idxShape = context->GetInputShape(@P_IDX@)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(rowsShape.GetDimNum());
    if (rank < 2 || idxShape.GetDimNum() != 1) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t H = static_cast<uint64_t>(rowsShape.GetDim(rank - 1));
    uint64_t numel = 1;
    for (int32_t d = 0; d < rank; ++d) {
        numel *= static_cast<uint64_t>(rowsShape.GetDim(d));
    }
    const uint64_t K = td->hasScales ? static_cast<uint64_t>(context->GetOptionalInputShape(@P_SCALES@)->GetStorageShape().GetDim(1)) : 1;
    const uint64_t NK = static_cast<uint64_t>(idxShape.GetDim(0));
    if (H == 0 || K == 0 || NK % K != 0 || NK == 0) {
        return ge::GRAPH_FAILED;
    }
    td->hidden = static_cast<uint32_t>(H);
    td->rowPad = static_cast<uint32_t>((H + 15) / 16 * 16);
    td->topK = static_cast<uint32_t>(K);
    td->outRows = NK / K;
    td->tableRows = numel / H;
    td->experts = td->hasBias ? static_cast<uint64_t>(context->GetOptionalInputShape(@P_BIAS@)->GetStorageShape().GetDim(0)) : 0;
    if (td->hasBias && td->experts == 0) {
        td->hasBias = 0;
    }

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    const uint64_t eb = DtypeBytes(context->GetInputDesc(@P_ROWS@)->GetDataType());
    // per output row: acc, term (fp32), the staged rows, the output tile, bias (fp32 + staged),
    // and K indices, experts and weights
    const uint64_t perRow = td->rowPad * (4 + 4 + eb + 4 + (td->hasBias ? 4 + eb : 0)) + K * (4 + 4 + 4 + 4) + 64;
    if (ubSize <= reserve + perRow + 1024) {
        return ge::GRAPH_FAILED;   // one row of H does not fit
    }
    uint64_t tile = (ubSize - reserve - 1024) / perRow;
    const uint64_t share = (td->outRows + coreNum - 1) / coreNum;
    tile = tile > share ? share : tile;
    tile = tile > 4095 ? 4095 : tile;
    td->tileRows = static_cast<uint32_t>(tile == 0 ? 1 : tile);
    td->units = (td->outRows + td->tileRows - 1) / td->tileRows;

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
