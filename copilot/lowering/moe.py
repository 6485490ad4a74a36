"""MoE gating: softmax over the experts, then the top k of each token (`moe_gating_top_k_softmax`):

    y = topk(softmax(x, -1), k).values;  expert_idx = their experts (int32; E where `finished`);
    row_idx[r, j] = j * R + r  (R tokens: the flat position of (r, j) in the transposed [k, R])

Softmax is monotonic, so the kernel selects on x itself: a tile of B tokens' expert rows (fp32
scores, -inf padding) goes through the TopK library API once; the first value of each row is its
maximum, so y = exp(v - max) * (1 / sum(exp(x - max))) needs one pass over the row for the sum.
Gating rows are short (E of 4 to a few hundred), so the tile is sized for whole tokens, not
elements: every core gets ceil(R / cores) tokens, in as few tiles as the UB holds (double-buffered
when there are several), each tile in and out as one burst and every vector instruction over all
its rows (per-row values as 32-byte blocks, strided repeats). The golden may take an optional `finished` mask (bool per token): a
finished token's experts become E (TopK's finished rows). The row-index output is checked on a
probe input against j * R + r when the plan is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.movement import _name

_DTYPES = ("float16", "bfloat16", "float32")
_PASS = {"_to_copy", "clone", "contiguous", "alias", "detach"}


@dataclass
class MoeGatingPlan:
    task: object
    pattern: str                      # "moe_gating"
    k_rule: tuple                     # ("attr", name) | ("const", k)
    finished: int | None              # input position of the optional finished mask
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _trace(task, case):
    """The golden traced (`tracer.py`) on inputs of the case's shapes, floats in float32; absent
    optional inputs None."""
    import torch

    from copilot.lowering.capture import _torch_dtype
    from copilot.lowering.tracer import trace_graph

    present = [i for i, s in enumerate(case.shapes) if s is not None]
    sample = []
    for i in present:
        dt = _torch_dtype(case.dtypes[i])
        sample.append((tuple(case.shapes[i]), torch.float32 if dt.is_floating_point else dt))
    kw = {k: v for k, v in case.attrs.items() if v is not None}

    def fn(*xs):
        args = {s.name: None for s in task.inputs}
        args.update({task.inputs[i].name: x for i, x in zip(present, xs)})
        return task.golden(**args, **kw)

    try:
        with torch.no_grad():
            return trace_graph(fn, sample), present
    except Exception as exc:
        raise Unsupported(f"{task.name}: the golden could not be traced on case {case.id} "
                          f"({type(exc).__name__}: {str(exc).splitlines()[0][:160]})") from None


def _gating_of(gm):
    """k when the graph is softmax(x, -1) -> topk(k, -1, largest) with (values, int32 indices
    (possibly replaced where a mask input is set), an index output that reads no input)."""
    places = [n for n in gm.graph.nodes if n.op == "placeholder"]
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    soft = [n for n in calls if _name(n) == "_softmax"]
    tops = [n for n in calls if _name(n) == "topk"]
    if len(soft) != 1 or len(tops) != 1 or not places:
        return None
    s, t = soft[0], tops[0]

    def source(v):
        while hasattr(v, "op") and v.op == "call_function" and _name(v) in _PASS:
            v = v.args[0]
        return v

    if source(s.args[0]) is not places[0] or s.args[1] not in (-1, len(s.args[0].meta["val"].shape) - 1):
        return None
    targs = list(t.args) + [None] * 4
    if source(t.args[0]) is not s or targs[2] not in (-1, None) or targs[3] is False:
        return None
    out = next(o for o in gm.graph.nodes if o.op == "output").args[0]
    if not isinstance(out, (list, tuple)) or len(out) != 3:
        return None
    v0 = source(out[0])
    if not (_name(v0) == "getitem" and v0.args[0] is t and v0.args[1] == 0):
        return None

    def ancestors(v):
        seen, todo = set(), [v]
        while todo:
            n = todo.pop()
            if id(n) in seen or not hasattr(n, "op"):
                continue
            seen.add(id(n))
            todo.extend(a for a in n.all_input_nodes)
            if n.op == "placeholder":
                yield n
            if n is t:
                yield t

    if any(True for _ in ancestors(out[2])):
        return None                                   # the row index is built from shapes only
    if not any(a is t for a in ancestors(out[1])):
        return None                                   # the experts are the top-k's indices
    return int(targs[1])


def plan_moe_gating(task):
    """The gating plan of `task`, or None when its golden is not softmax + top-k over experts."""
    names = [i.name for i in task.inputs]
    if len(task.outputs) != 3 or not task.cases or not 1 <= len(names) <= 2:
        return None
    if len(names) == 2 and not task.inputs[1].optional:
        return None
    try:
        gm, _ = _trace(task, task.cases[0])
    except Unsupported:
        return None
    if _gating_of(gm) is None:
        return None
    ks = []
    for case in task.cases:
        gm, present = _trace(task, case)
        k = _gating_of(gm)
        if k is None:
            raise Unsupported(f"{task.name}: case {case.id} is not the softmax + top-k the other cases are")
        ks.append(k)
    from copilot.lowering.sort import _rule

    plan = MoeGatingPlan(task, "moe_gating", _rule(task, ks, ("int",), "k"), 1 if len(names) == 2 else None)
    _check_row_index(task)
    for c, k in zip(task.cases, ks):
        e = c.shapes[0][-1]
        if c.dtypes[0] not in _DTYPES:
            plan.unserved[c.id] = f"dtype {c.dtypes[0]}"
        elif e > 4064 or len(c.shapes[0]) > 8:
            plan.unserved[c.id] = f"{e} experts: more than one TopK call (4064)"
    return plan


def _check_row_index(task):
    """The golden's third output on a probe must be j * R + r (R tokens), else not this pattern."""
    import torch

    for rank in (2, 3):
        lead = (3,) if rank == 2 else (2, 3)
        x = torch.randn(*lead, 8)
        args = {s.name: None for s in task.inputs}
        args[task.inputs[0].name] = x
        out = task.golden(**args, k=2)
        rows = x.numel() // 8
        want = (torch.arange(2).reshape(1, 2) * rows + torch.arange(rows).reshape(rows, 1)).reshape(*lead, 2)
        if out[2].shape != want.shape or not torch.equal(out[2].to(torch.int64), want):
            raise Unsupported(f"{task.name}: the third output is not the row index j * R + r of the top-k")


def render(plan: MoeGatingPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [a.name for a in t.attrs]
    k = (f"*attrs->GetAttrPointer<int64_t>({names.index(plan.k_rule[1])})" if plan.k_rule[0] == "attr"
         else str(int(plan.k_rule[1])))
    x = t.inputs[0].name
    fin = t.inputs[plan.finished].name if plan.finished is not None else None
    y, e, r = (o.name for o in t.outputs)
    args = [f"GM_ADDR {_ident(x)}"] + ([f"GM_ADDR {_ident(fin)}"] if fin else [])
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for key, val in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                     ("@XT@", _macro_of(x)), ("@ARGS@", ", ".join(args)), ("@X@", _ident(x)),
                     ("@FIN@", _ident(fin) if fin else "nullptr"), ("@Y@", _ident(y)), ("@E@", _ident(e)),
                     ("@R@", _ident(r)), ("@KVAL@", k), ("@FINPOS@", str(plan.finished or 0)),
                     ("@HASFIN@", "true" if fin else "false"),
                     ("@DTYPE_BYTES@", _dtype_bytes_fn()), ("@SYNC@", SYNC_PIPES),
                     ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                     ("@SPLIT@", core_split(knobs, f"units * {int(knobs['min_work_elems'])}", "units"))):
        text = text.replace(key, val)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: MoE gating, y = topk(softmax(x, -1), k) with the experts' indices and the row index
// j * R + r. Softmax is monotonic: the TopK library API selects on x's fp32 scores, the first
// value of a row is its maximum, and y = exp(v - max) * (1 / sum(exp(x - max))) over the row.
// A tile is B whole tokens: their rows arrive in one burst, every vector instruction covers all
// B rows (a per-row value reaches its row as a 32-byte block, src1 block stride 0), and the
// three outputs leave as one dense burst each.
#include <cmath>
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

struct @T@ {
    uint64_t rows;                      // R tokens
    uint32_t experts;                   // E
    uint32_t k;
    uint32_t kPitch;                    // k rounded up to 8: TopK's output rows
    uint32_t rowPitch;                  // E rounded up to 32: TopK's inner, the score rows
    uint32_t lanes;                     // tokens per tile (B)
    uint32_t padded;                    // E < rowPitch: the dense rows are spread to rowPitch by a Gather
    uint32_t wide;                      // rowPitch / 8 > 255 blocks: row strides too long for one repeat
    uint32_t hasFinished;
    uint32_t buffers;                   // 2: the next tile's rows load while this one computes
    uint32_t tmpBytes;
    uint64_t formerNum;                 // cores taking formerUnits tiles; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
    AscendC::tiling::TopkTiling topk;   // B rows x rowPitch
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
constexpr uint32_t ROW_BLOCK = 248;     // rows per strided instruction (repeat count <= 255)

class @K@ {
public:
    __aicore__ inline void Init(GM_ADDR xAddr, GM_ADDR finishedAddr, GM_ADDR yAddr, GM_ADDR expertAddr,
                                GM_ADDR rowAddr, const @T@& tiling)
    {
        td_ = tiling;
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(xAddr), td_.rows * td_.experts);
        if (td_.hasFinished) {
            finishedGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(finishedAddr), td_.rows);
        }
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>(yAddr), td_.rows * td_.k);
        expertGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(expertAddr), td_.rows * td_.k);
        rowGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(rowAddr), td_.rows * td_.k);
@UNIT_RANGE@        const uint32_t b = td_.lanes;
        const uint32_t dense = b * td_.experts;
        sentinel_ = (dense + 7) / 8 * 8;                       // a -inf cell after the dense rows
        const uint32_t scores = (b * td_.rowPitch + 63) / 64 * 64;  // whole compare repeats
        const uint32_t outs = b * td_.k;
        const bool f32 = std::is_same<Elem, float>::value;
        const bool ownScores = td_.padded || !f32;             // fp32 rows of rowPitch are scored in place
        const uint32_t rawBytes = Bytes(f32 && td_.padded ? (sentinel_ + 8) * 4 : dense * sizeof(Elem));
        pipe_.InitBuffer(rawBuf_[0], rawBytes);
        pipe_.InitBuffer(rawBuf_[1], td_.buffers == 2 ? rawBytes : Bytes(0));
        pipe_.InitBuffer(denseBuf_, Bytes(!f32 && td_.padded ? (sentinel_ + 8) * 4 : 0));
        pipe_.InitBuffer(scoreBuf_, Bytes(ownScores ? scores * 4 : 0));
        pipe_.InitBuffer(padTableBuf_, Bytes(td_.padded ? scores * 4 : 0));
        pipe_.InitBuffer(maskBuf_, Bytes(td_.padded ? (td_.rowPitch + 63) / 64 * 8 : 0));
        pipe_.InitBuffer(tmpBuf_, Bytes(td_.tmpBytes));
        pipe_.InitBuffer(srcIdxBuf_, 32);                        // TopK without init indices: defined, not read
        pipe_.InitBuffer(workBuf_, Bytes(td_.wide ? td_.rowPitch * 4 : 0));
        pipe_.InitBuffer(valBuf_, Bytes(b * td_.kPitch * 4));
        pipe_.InitBuffer(expertBuf_, Bytes(b * td_.kPitch * 4));
        pipe_.InitBuffer(sumBuf_, Bytes(b * (td_.wide ? 8 : 1) * 4));
        pipe_.InitBuffer(blockBuf_, Bytes(b * 32));
        pipe_.InitBuffer(maxTableBuf_, Bytes(b * 32));
        pipe_.InitBuffer(sumTableBuf_, Bytes(b * 32));
        pipe_.InitBuffer(finishedBuf_[0], Bytes(b));
        pipe_.InitBuffer(finishedBuf_[1], Bytes(td_.buffers == 2 ? b : 0));
        const bool denseK = td_.k == td_.kPitch;
        pipe_.InitBuffer(outTableBuf_, Bytes(denseK ? 0 : outs * 4));
        pipe_.InitBuffer(yFloatBuf_, Bytes(denseK ? 0 : outs * 4));
        pipe_.InitBuffer(expertOutBuf_, Bytes(denseK ? 0 : outs * 4));
        pipe_.InitBuffer(yBuf_, Bytes(f32 ? 0 : outs * sizeof(Elem)));
        pipe_.InitBuffer(rowTableBuf_, Bytes(outs * 4));
        pipe_.InitBuffer(rowBuf_, Bytes(outs * 4));
        BuildTables();
    }

    __aicore__ inline void Process()
    {
        if (unitCount_ == 0) {
            return;
        }
        Load(unitStart_, 0);
        for (uint64_t u = 0; u < unitCount_; ++u) {
            const uint32_t slot = td_.buffers == 2 ? static_cast<uint32_t>(u % 2) : 0;
            SyncPipes<HardEvent::MTE2_V>();                      // this tile's rows have landed
            if (td_.buffers == 2 && u + 1 < unitCount_) {
                SyncPipes<HardEvent::V_MTE2>();                  // the other slot's last reader is done
                Load(unitStart_ + u + 1, 1 - slot);
            }
            Compute(unitStart_ + u, slot);
            if (td_.buffers == 1 && u + 1 < unitCount_) {
                SyncPipes<HardEvent::V_MTE2>();
                Load(unitStart_ + u + 1, 0);
            }
        }
    }

private:
    __aicore__ inline static uint32_t Bytes(uint32_t n)
    {
        n = (n + 31) / 32 * 32;
        return n < 256 ? 256 : n;
    }

@SYNC@
    // q = floor(i / d) and i - q * d for i < n, in fp32 (exact: n < 2^22, the +0.5 keeps the
    // rounded quotient off the integers); i becomes the remainder.
    __aicore__ inline void DivMod(const LocalTensor<float>& i, const LocalTensor<float>& q, uint32_t d, uint32_t n)
    {
        CreateVecIndex(i, 0.0f, n);
        PipeBarrier<PIPE_V>();
        Adds(q, i, 0.5f, n);
        PipeBarrier<PIPE_V>();
        Muls(q, q, 1.0f / static_cast<float>(d), n);
        PipeBarrier<PIPE_V>();
        Cast(q, q, RoundMode::CAST_FLOOR, n);
        PipeBarrier<PIPE_V>();
        Axpy(i, q, -static_cast<float>(d), n);
        PipeBarrier<PIPE_V>();
    }

    // The Gather tables, built once per core: the padded scores from the dense rows (past E: the
    // -inf cell), each row's first TopK value and its sum over a 32-byte block, the dense outputs
    // from TopK's rows of kPitch, and row_idx's j * R + l.
    __aicore__ inline void BuildTables()
    {
        const uint32_t b = td_.lanes, P = td_.rowPitch, K = td_.k;
        if (td_.padded) {
            if constexpr (std::is_same<Elem, float>::value) {
                Duplicate(rawBuf_[0].Get<float>()[sentinel_], -INFINITY, 8);
                if (td_.buffers == 2) {
                    Duplicate(rawBuf_[1].Get<float>()[sentinel_], -INFINITY, 8);
                }
            } else {
                Duplicate(denseBuf_.Get<float>()[sentinel_], -INFINITY, 8);
            }
            // row 0: byte offset 4j for j < E, the -inf cell past E; row l adds 4lE (doubling),
            // and the shifted -inf entries come back to the cell as the table's minimum with it
            const uint32_t n = (P + 63) / 64 * 64;
            LocalTensor<float> j = scoreBuf_.Get<float>();
            LocalTensor<int32_t> table = padTableBuf_.Get<int32_t>();
            CreateVecIndex(j, 0.0f, n);
            PipeBarrier<PIPE_V>();
            CompareScalar(maskBuf_.Get<uint8_t>(), j, static_cast<float>(td_.experts), CMPMODE::LT, n);
            PipeBarrier<PIPE_V>();
            Select(j, maskBuf_.Get<uint8_t>(), j, static_cast<float>(sentinel_), SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
            PipeBarrier<PIPE_V>();
            Muls(j, j, 4.0f, n);
            PipeBarrier<PIPE_V>();
            Cast(table, j, RoundMode::CAST_RINT, P);
            for (uint32_t r = 1; r < b; r *= 2) {
                PipeBarrier<PIPE_V>();
                Adds(table[r * P], table, static_cast<int32_t>(r * td_.experts * 4), (r < b - r ? r : b - r) * P);
            }
            PipeBarrier<PIPE_V>();
            Mins(table, table, static_cast<int32_t>(sentinel_ * 4), b * P);
        }
        LocalTensor<float> blockRow = blockBuf_.Get<float>();
        CreateVecIndex(blockRow, 0.0f, b * 8);
        PipeBarrier<PIPE_V>();
        Muls(blockRow, blockRow, 0.125f, b * 8);
        PipeBarrier<PIPE_V>();
        LocalTensor<int32_t> maxTable = maxTableBuf_.Get<int32_t>();
        LocalTensor<int32_t> sumTable = sumTableBuf_.Get<int32_t>();
        Cast(maxTable, blockRow, RoundMode::CAST_FLOOR, b * 8);
        PipeBarrier<PIPE_V>();
        Muls(sumTable, maxTable, static_cast<int32_t>(td_.wide ? 32 : 4), b * 8);
        PipeBarrier<PIPE_V>();
        Muls(maxTable, maxTable, static_cast<int32_t>(td_.kPitch * 4), b * 8);
        const uint32_t outs = b * K;
        LocalTensor<float> j = rowBuf_.Get<float>();
        LocalTensor<float> l = valBuf_.Get<float>();
        DivMod(j, l, K, outs);
        LocalTensor<int32_t> rowTable = rowTableBuf_.Get<int32_t>();
        LocalTensor<int32_t> lInt = expertBuf_.Get<int32_t>();
        Cast(rowTable, j, RoundMode::CAST_RINT, outs);
        Cast(lInt, l, RoundMode::CAST_RINT, outs);
        PipeBarrier<PIPE_V>();
        Muls(rowTable, rowTable, static_cast<int32_t>(td_.rows), outs);
        PipeBarrier<PIPE_V>();
        Add(rowTable, rowTable, lInt, outs);
        if (K != td_.kPitch) {
            Axpy(j, l, static_cast<float>(td_.kPitch), outs);     // l * kPitch + j
            PipeBarrier<PIPE_V>();
            Muls(j, j, 4.0f, outs);
            PipeBarrier<PIPE_V>();
            Cast(outTableBuf_.Get<int32_t>(), j, RoundMode::CAST_RINT, outs);
        }
        PipeBarrier<PIPE_V>();
    }

    // Row l of t (rows of P floats, B rows) -= or *= the value in block l of `blocks`.
    template <bool MUL>
    __aicore__ inline void ByRowBlocks(const LocalTensor<float>& t, const LocalTensor<float>& blocks, uint32_t P)
    {
        const uint32_t b = td_.lanes;
        if (P / 8 <= 255) {
            const uint8_t s = static_cast<uint8_t>(P / 8);
            const BinaryRepeatParams rep(1, 1, 0, s, s, 1);
            for (uint32_t r = 0; r < b; r += ROW_BLOCK) {
                const uint8_t rows = static_cast<uint8_t>(b - r < ROW_BLOCK ? b - r : ROW_BLOCK);
                for (uint32_t c = 0; c < P; c += 64) {
                    const uint64_t mask = P - c < 64 ? P - c : 64;
                    if constexpr (MUL) {
                        Mul(t[r * P + c], t[r * P + c], blocks[r * 8], mask, rows, rep);
                    } else {
                        Sub(t[r * P + c], t[r * P + c], blocks[r * 8], mask, rows, rep);
                    }
                }
            }
            return;
        }
        // rows longer than 255 blocks: one call per row, its 64-lane chunks the repeats
        const BinaryRepeatParams rep(1, 1, 0, 8, 8, 0);
        const uint32_t full = P / 64, rest = P % 64;
        for (uint32_t l = 0; l < b; ++l) {
            if constexpr (MUL) {
                Mul(t[l * P], t[l * P], blocks[l * 8], 64, static_cast<uint8_t>(full), rep);
                if (rest) {
                    Mul(t[l * P + full * 64], t[l * P + full * 64], blocks[l * 8], rest, 1, rep);
                }
            } else {
                Sub(t[l * P], t[l * P], blocks[l * 8], 64, static_cast<uint8_t>(full), rep);
                if (rest) {
                    Sub(t[l * P + full * 64], t[l * P + full * 64], blocks[l * 8], rest, 1, rep);
                }
            }
        }
    }

    // sums[l] = the sum of row l of t (t is overwritten): the 64-lane chunks fold onto the first
    // (one Add per chunk for ROW_BLOCK rows), then one WholeReduceSum per ROW_BLOCK rows; wide rows
    // one ReduceSum each (sums[l * 8])
    __aicore__ inline void RowSums(const LocalTensor<float>& sums, const LocalTensor<float>& t)
    {
        const uint32_t b = td_.lanes, P = td_.rowPitch;
        if (td_.wide) {
            for (uint32_t l = 0; l < b; ++l) {
                ReduceSum(sums[l * 8], t[l * P], workBuf_.Get<float>(), static_cast<int32_t>(P));
            }
            return;
        }
        const uint8_t s = static_cast<uint8_t>(P / 8);
        const BinaryRepeatParams rep(1, 1, 1, s, s, s);
        for (uint32_t r = 0; r < b; r += ROW_BLOCK) {
            const uint8_t rows = static_cast<uint8_t>(b - r < ROW_BLOCK ? b - r : ROW_BLOCK);
            for (uint32_t c = 64; c < P; c += 64) {
                const uint64_t mask = P - c < 64 ? P - c : 64;
                Add(t[r * P], t[r * P], t[r * P + c], mask, rows, rep);
                PipeBarrier<PIPE_V>();
            }
            WholeReduceSum(sums[r], t[r * P], static_cast<int32_t>(P < 64 ? P : 64), rows, 1, 1, s);
        }
    }

    // Tile `unit`'s tokens into `slot`: their rows are contiguous in GM, one burst.
    __aicore__ inline void Load(uint64_t unit, uint32_t slot)
    {
        const uint64_t r0 = unit * td_.lanes;
        const uint32_t n = static_cast<uint32_t>(td_.rows - r0 < td_.lanes ? td_.rows - r0 : td_.lanes);
        DataCopyPad(rawBuf_[slot].Get<Elem>(), xGm_[r0 * td_.experts],
                    DataCopyExtParams(1, n * td_.experts * sizeof(Elem), 0, 0, 0), DataCopyPadExtParams<Elem>(false, 0, 0, 0));
        if (td_.hasFinished) {
            DataCopyPad(finishedBuf_[slot].Get<uint8_t>(), finishedGm_[r0], DataCopyExtParams(1, n, 0, 0, 0),
                        DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
        }
    }

    // Tile `unit` (its rows in `slot`): the k best of each token, softmax of them, out.
    __aicore__ inline void Compute(uint64_t unit, uint32_t slot)
    {
        const uint64_t r0 = unit * td_.lanes;
        const uint32_t n = static_cast<uint32_t>(td_.rows - r0 < td_.lanes ? td_.rows - r0 : td_.lanes);
        const uint32_t b = td_.lanes, P = td_.rowPitch, K = td_.k;
        const bool denseK = K == td_.kPitch;
        LocalTensor<Elem> raw = rawBuf_[slot].Get<Elem>();
        LocalTensor<uint8_t> done = finishedBuf_[slot].Get<uint8_t>();
        // fp32 scores in rows of rowPitch, -inf past E (ranks last, adds nothing to the sum)
        LocalTensor<float> score = td_.padded || !std::is_same<Elem, float>::value ? scoreBuf_.Get<float>()
                                                                                  : raw.template ReinterpretCast<float>();
        if constexpr (std::is_same<Elem, float>::value) {
            if (td_.padded) {
                Gather(score, raw.template ReinterpretCast<float>(), padTableBuf_.Get<uint32_t>(), 0, b * P);
            }
        } else if (td_.padded) {
            LocalTensor<float> dense = denseBuf_.Get<float>();
            Cast(dense, raw, RoundMode::CAST_NONE, b * td_.experts);
            PipeBarrier<PIPE_V>();
            Gather(score, dense, padTableBuf_.Get<uint32_t>(), 0, b * P);
        } else {
            Cast(score, raw, RoundMode::CAST_NONE, b * P);
        }
        PipeBarrier<PIPE_V>();
        LocalTensor<float> val = valBuf_.Get<float>();
        LocalTensor<int32_t> expert = expertBuf_.Get<int32_t>();
        if (denseK) {
            SyncPipes<HardEvent::MTE3_V>();                      // TopK's rows are the last tile's outputs
        }
        TopKInfo info;
        info.outter = static_cast<int32_t>(b);
        info.inner = static_cast<int32_t>(P);
        info.n = static_cast<int32_t>(td_.experts);             // a finished token's experts are n = E
        if (td_.hasFinished) {
            TopK<float, false, true, false, TopKMode::TOPK_NORMAL>(val, expert, score, srcIdxBuf_.Get<int32_t>(),
                                                                   done.template ReinterpretCast<bool>(),
                                                                   tmpBuf_.Get<uint8_t>(), static_cast<int32_t>(K),
                                                                   td_.topk, info, true);
        } else {
            LocalTensor<bool> none;
            TopK<float, false, false, false, TopKMode::TOPK_NORMAL>(val, expert, score, srcIdxBuf_.Get<int32_t>(), none,
                                                                    tmpBuf_.Get<uint8_t>(), static_cast<int32_t>(K),
                                                                    td_.topk, info, true);
        }
        // softmax of the selected: each row's maximum is its first value
        LocalTensor<float> blocks = blockBuf_.Get<float>();
        LocalTensor<float> sums = sumBuf_.Get<float>();
        PipeBarrier<PIPE_V>();
        Gather(blocks, val, maxTableBuf_.Get<uint32_t>(), 0, b * 8);
        PipeBarrier<PIPE_V>();
        ByRowBlocks<false>(score, blocks, P);
        ByRowBlocks<false>(val, blocks, td_.kPitch);
        PipeBarrier<PIPE_V>();
        Exp(score, score, b * P);
        Exp(val, val, b * td_.kPitch);
        PipeBarrier<PIPE_V>();
        RowSums(sums, score);
        PipeBarrier<PIPE_V>();
        Reciprocal(sums, sums, b * (td_.wide ? 8 : 1));
        PipeBarrier<PIPE_V>();
        Gather(blocks, sums, sumTableBuf_.Get<uint32_t>(), 0, b * 8);
        PipeBarrier<PIPE_V>();
        ByRowBlocks<true>(val, blocks, td_.kPitch);
        PipeBarrier<PIPE_V>();
        // dense [B, k] outputs: TopK's rows of kPitch closed up by a Gather unless k == kPitch
        LocalTensor<float> yFloat = val;
        LocalTensor<int32_t> expertOut = expert;
        if (!denseK) {
            SyncPipes<HardEvent::MTE3_V>();                      // the last tile's outputs are out
            yFloat = yFloatBuf_.Get<float>();
            expertOut = expertOutBuf_.Get<int32_t>();
            Gather(yFloat, val, outTableBuf_.Get<uint32_t>(), 0, b * K);
            Gather(expertOut, expert, outTableBuf_.Get<uint32_t>(), 0, b * K);
            PipeBarrier<PIPE_V>();
        }
        LocalTensor<Elem> y = yFloat.template ReinterpretCast<Elem>();
        if constexpr (!std::is_same<Elem, float>::value) {
            y = yBuf_.Get<Elem>();
            Cast(y, yFloat, RoundMode::CAST_RINT, b * K);
        }
        LocalTensor<int32_t> row = rowBuf_.Get<int32_t>();
        Adds(row, rowTableBuf_.Get<int32_t>(), static_cast<int32_t>(r0), b * K);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyPad(yGm_[r0 * K], y, DataCopyExtParams(1, n * K * sizeof(Elem), 0, 0, 0));
        DataCopyPad(expertGm_[r0 * K], expertOut, DataCopyExtParams(1, n * K * 4, 0, 0, 0));
        DataCopyPad(rowGm_[r0 * K], row, DataCopyExtParams(1, n * K * 4, 0, 0, 0));
    }

    TPipe pipe_;
    TBuf<TPosition::VECCALC> rawBuf_[2], finishedBuf_[2];
    TBuf<TPosition::VECCALC> denseBuf_, scoreBuf_, padTableBuf_, maskBuf_, tmpBuf_, srcIdxBuf_, workBuf_;
    TBuf<TPosition::VECCALC> valBuf_, expertBuf_, sumBuf_, blockBuf_, maxTableBuf_, sumTableBuf_;
    TBuf<TPosition::VECCALC> outTableBuf_, yFloatBuf_, expertOutBuf_, yBuf_, rowTableBuf_, rowBuf_;
    GlobalTensor<Elem> xGm_;
    GlobalTensor<uint8_t> finishedGm_;
    GlobalTensor<Elem> yGm_;
    GlobalTensor<int32_t> expertGm_;
    GlobalTensor<int32_t> rowGm_;
    @T@ td_;
    uint32_t sentinel_ = 0;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR @Y@, GM_ADDR @E@, GM_ADDR @R@,
                                                     GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X@, @FIN@, @Y@, @E@, @R@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    const int32_t rank = static_cast<int32_t>(shape.GetDimNum());
    if (rank < 1 || rank > 8) {
        return ge::GRAPH_FAILED;
    }
    uint64_t rows = 1;
    for (int32_t d = 0; d + 1 < rank; ++d) {
        rows *= static_cast<uint64_t>(shape.GetDim(d));
    }
    const uint64_t experts = static_cast<uint64_t>(shape.GetDim(rank - 1));
    const int64_t k = @KVAL@;
    if (k < 1 || static_cast<uint64_t>(k) > experts || experts > 4064 || rows == 0 ||
        rows * static_cast<uint64_t>(k) > 0x7fffffffULL) {
        return ge::GRAPH_FAILED;
    }
    td->hasFinished = @HASFIN@ && context->GetOptionalInputShape(@FINPOS@) != nullptr ? 1 : 0;
    const uint32_t eb = DtypeBytes(context->GetInputDesc(0)->GetDataType());
    td->rows = rows;
    td->experts = static_cast<uint32_t>(experts);
    td->k = static_cast<uint32_t>(k);
    td->kPitch = (td->k + 7) / 8 * 8;
    td->rowPitch = static_cast<uint32_t>((experts + 31) / 32 * 32);
    td->padded = td->rowPitch != td->experts ? 1 : 0;
    td->wide = td->rowPitch / 8 > 255 ? 1 : 0;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    const uint64_t reserve = @RESERVE@;
    if (ubSize <= reserve + 8192) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t budget = ubSize - reserve;
    auto tmpOf = [&](uint64_t b) {
        uint32_t hi = 0;
        uint32_t lo = 0;
        AscendC::GetTopKMaxMinTmpSize(platform, static_cast<int32_t>(td->rowPitch), static_cast<int32_t>(b), false,
                                      false, AscendC::TopKMode::TOPK_NORMAL, true, 4, hi, lo);
        return static_cast<uint64_t>(lo);
    };
    // UB bytes of a tile of b tokens: the dense rows (and their fp32 cast), the scores and their
    // Gather table, TopK's rows and space, the per-row blocks, the dense outputs and their tables
    const uint64_t P = td->rowPitch;
    const uint64_t kp = td->kPitch;
    const bool denseK = td->k == td->kPitch;
    auto bytes = [&](uint64_t b, uint64_t buffers) {
        uint64_t perRow = (experts * eb + 1) * buffers + (eb != 4 && td->padded ? 4 * experts : 0);
        perRow += (td->padded || eb != 4 ? 4 * P : 0) + (td->padded ? 4 * P : 0);
        perRow += kp * 8 + (td->wide ? 32 : 4) + 32 * 3;
        perRow += static_cast<uint64_t>(td->k) * ((denseK ? 0 : 12) + (eb == 4 ? 0 : eb) + 8);
        return b * perRow + tmpOf(b) + (td->wide ? 4 * P : 0) + P / 8 + 64 * 8 + 26 * 256;
    };
    auto fit = [&](uint64_t lanes, uint64_t buffers) {
        while (lanes > 1 && bytes(lanes, buffers) > budget) {
            lanes -= (lanes + 15) / 16;
        }
        return lanes;
    };
    // one tile per core where it fits: every core gets rows, as few instructions as possible;
    // several tiles a core double-buffer the rows (the next tile loads while this one computes).
    // A single tile of many rows and a load worth hiding (>= 128 tokens, >= 16 KB) is halved so
    // the second half's load runs under the first half's vector work.
    const uint64_t perCore = (rows + coreNum - 1) / coreNum;
    uint64_t lanes = fit(perCore < 4096 ? perCore : 4096, 1);
    if (lanes == perCore && perCore >= 128 && perCore * experts * eb >= 16384) {
        lanes = (perCore + 1) / 2;
    }
    td->buffers = lanes < perCore ? 2 : 1;
    if (td->buffers == 2) {
        lanes = fit(lanes, 2);
    }
    if (bytes(lanes, td->buffers) > budget) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t tiles = (perCore + lanes - 1) / lanes;
    lanes = (perCore + tiles - 1) / tiles;                     // equal tiles, no short last one
    td->lanes = static_cast<uint32_t>(lanes);
    if (!AscendC::TopKTilingFunc(platform, static_cast<int32_t>(td->rowPitch), static_cast<int32_t>(lanes),
                                 static_cast<int32_t>(td->k), 4, false, AscendC::TopKMode::TOPK_NORMAL, true, td->topk)) {
        return ge::GRAPH_FAILED;
    }
    td->tmpBytes = static_cast<uint32_t>(tmpOf(lanes));
    const uint64_t units = (rows + lanes - 1) / lanes;
@SPLIT@    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
