"""Rotary position embedding (RoPE) on rows of the last axis, every layout and rotation form:

    y = x * cos_full + rotate(x) * sin_full

x is [B, S, N, D] (layout "bsnd") or [B, N, S, D] ("bnsd"); the tables are [S, D/2] or
[B, S, D/2]. The half form rotates the halves (rotate(x) = cat(-x[D/2:], x[:D/2]), tables
[c, c]); the interleaved form rotates pairs (rotate(x)[2i] = -x[2i + 1], [2i + 1] = x[2i],
tables [c0, c0, c1, c1, ...]). Several x inputs (query, key) share the tables.

The golden is recognised by what it computes, not by how it is spelled: for every attr
combination of the cases it is run on small fp64 probes, each hypothesis (layout, form, which
table is cos) evaluated by the formula above; exactly one must match. The tiling function maps
the attrs to (layout, form), so one kernel serves every variant.

The kernel streams tiles of whole rows of D. Rows that read one table row are consecutive (N
heads in bsnd, one row in bnsd), so the table rows of a tile are consecutive too, or whole
periods of S. Per tile, two Gathers expand the tables' half rows to the tile (one offset table
built once per core; the rotated form's sign folded into the sine tile) and every x input reuses
them: one Gather (rotate), two Muls and an Add per element.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported
from copilot.lowering.capture import call_golden

LAYOUTS = ("bsnd", "bnsd")
FORMS = ("half", "interleaved")


@dataclass
class RotaryPlan:
    task: object
    pattern: str                         # "rotary"
    x_inputs: list[int]                  # rotated inputs, output k is input x_inputs[k] rotated
    cos_input: int
    sin_input: int
    variants: list[tuple]                # (attr guards {name: value}, layout, form), one per attr combination
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None


def _reference(x, cos, sin, layout: str, form: str):
    import torch

    if cos.dim() == 2:
        cos, sin = cos[None], sin[None]
    h = x.shape[-1] // 2
    if form == "half":
        cf, sf = torch.cat([cos, cos], -1), torch.cat([sin, sin], -1)
        rot = torch.cat([-x[..., h:], x[..., :h]], -1)
    else:
        cf, sf = cos.repeat_interleave(2, -1), sin.repeat_interleave(2, -1)
        rot = torch.stack([-x[..., 1::2], x[..., 0::2]], -1).flatten(-2)
    at = (slice(None), slice(None), None) if layout == "bsnd" else (slice(None), None)
    return x * cf[at] + rot * sf[at]


def _probe(task, x_inputs, tables, table_rank: int, attrs: dict) -> list[tuple]:
    """The hypotheses (layout, form, cos input, sin input) the golden matches on fp64 probes."""
    import torch

    B, S, N, D = 2, 3, 5, 8
    g = torch.Generator().manual_seed(16)
    found = []
    for layout in LAYOUTS:
        xshape = (B, S, N, D) if layout == "bsnd" else (B, N, S, D)
        tshape = (S, D // 2) if table_rank == 2 else (B, S, D // 2)
        xs = {i: torch.rand(xshape, generator=g, dtype=torch.float64) * 2 - 1 for i in x_inputs}
        tabs = {i: torch.rand(tshape, generator=g, dtype=torch.float64) * 2 - 1 for i in tables}
        inputs = [xs.get(i, tabs.get(i)) for i in range(len(task.inputs))]
        try:
            with torch.no_grad():
                out = call_golden(task, inputs, attrs)
        except Exception:       # the golden refuses these shapes: not this layout
            continue
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(out) != len(x_inputs):
            return []
        for form in FORMS:
            for c, s in (tables, tables[::-1]):
                if all(isinstance(o, torch.Tensor) and o.shape == xs[i].shape and o.dtype == torch.float64 and
                       torch.allclose(o, _reference(xs[i], tabs[c], tabs[s], layout, form), rtol=1e-12, atol=1e-12)
                       for o, i in zip(out, x_inputs)):
                    found.append((layout, form, c, s))
    return found


def plan_rotary(task):
    """The rotary plan of `task`, or None when its golden is not the rotation above."""
    cases = task.cases
    if len(task.inputs) < 3 or not cases or any(a.type == "float" for a in task.attrs):
        return None
    if any(s is None or any(isinstance(d, (list, tuple)) for d in s) for c in cases for s in c.shapes):
        return None
    x0 = cases[0].shapes[0]
    if len(x0) != 4 or x0[-1] % 2:
        return None
    x_inputs = [i for i in range(len(task.inputs)) if all(tuple(c.shapes[i]) == tuple(c.shapes[0]) for c in cases)]
    tables = [i for i in range(len(task.inputs)) if i not in x_inputs]
    if len(tables) != 2 or len(x_inputs) != len(task.outputs):
        return None
    a, b = tables
    for c in cases:
        ta, tb, x = c.shapes[a], c.shapes[b], c.shapes[0]
        if tuple(ta) != tuple(tb) or len(ta) not in (2, 3) or len(x) != 4 or 2 * ta[-1] != x[-1]:
            return None
        if any(d not in ("float16", "bfloat16", "float32") for d in c.dtypes):
            return None
    keyed = [a_.name for a_ in task.attrs]

    def key(c):
        return tuple(repr(c.attrs.get(n, next(s.default for s in task.attrs if s.name == n))) for n in keyed)

    variants, roles, unserved = [], set(), {}
    by_key: dict = {}
    for c in cases:
        k = key(c)
        rank = len(c.shapes[a])
        if (k, rank) not in by_key:
            attrs = {n: c.attrs.get(n, next(s.default for s in task.attrs if s.name == n)) for n in keyed}
            by_key[(k, rank)] = _probe(task, x_inputs, tables, rank, attrs)
        found = by_key[(k, rank)]
        if len(found) != 1:
            if not by_key[(k, rank)] and not variants and c is cases[0]:
                return None      # the first case is not a rotation: not this pattern
            unserved[c.id] = "the golden is not one rotary form on probes for these attrs"
            continue
        layout, form, cos, sin = found[0]
        roles.add((cos, sin))
        guards = {n: c.attrs.get(n, next(s.default for s in task.attrs if s.name == n)) for n in keyed}
        if not any(v[0] == guards for v in variants):
            variants.append((guards, layout, form))
        x = c.shapes[0]
        S = c.shapes[a][-2]
        if (x[1] if layout == "bsnd" else x[2]) != S or (len(c.shapes[a]) == 3 and c.shapes[a][0] != x[0]):
            unserved[c.id] = f"tables {tuple(c.shapes[a])} do not match x {tuple(x)} in layout {layout}"
    if not variants:
        return None
    if len(roles) != 1:
        raise Unsupported(f"{task.name}: the cos and sin tables swap roles between cases")
    cos, sin = roles.pop()
    return RotaryPlan(task, "rotary", x_inputs, cos, sin, variants, unserved)


def render(plan: RotaryPlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD, UNIT_RANGE, core_split
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of, _variant_condition

    t = plan.task
    cls = camel(t.name)
    xs = [t.inputs[i].name for i in plan.x_inputs]
    ys = [o.name for o in t.outputs]
    cos_n, sin_n = t.inputs[plan.cos_input].name, t.inputs[plan.sin_input].name
    forms = {f for _, _, f in plan.variants}
    # the tiling function: attrs -> (layout, form); other attrs fail the tiling
    sel = []
    for guards, layout, form in plan.variants:
        cond = _variant_condition(t, guards, [])
        sel.append(f"    if ({cond}) {{\n        layout = {LAYOUTS.index(layout)};   // {layout}\n"
                   f"        td->interleaved = {1 if form == 'interleaved' else 0};   // {form}\n        known = true;\n    }}\n")
    select = ("    int32_t layout = 0;\n    bool known = false;\n" + "".join(sel) +
              "    if (!known) {\n        return ge::GRAPH_FAILED;   // attrs of no variant the golden showed\n    }\n")
    # the kernel's lane maps: only the forms some variant uses
    if forms == {"half"}:
        lane_map = ("        // half form: lane j < H reads -x[j + H], lane j >= H reads x[j - H]\n"
                    "        for (uint32_t j = 0; j < D; ++j) {\n"
                    "            rotTable_.SetValue(j, (j < H ? j + H : j - H) * sizeof(float));\n"
                    "            cosTable_.SetValue(j, (j < H ? j : j - H) * sizeof(float));\n"
                    "            sign_.SetValue(j, j < H ? -1.0f : 1.0f);\n"
                    "        }\n")
        form_doc = "the half form (rotate(x) = cat(-x[D/2:], x[:D/2]))"
    elif forms == {"interleaved"}:
        lane_map = ("        // interleaved form: lane 2i reads -x[2i + 1], lane 2i + 1 reads x[2i]\n"
                    "        for (uint32_t j = 0; j < D; ++j) {\n"
                    "            rotTable_.SetValue(j, (j ^ 1U) * sizeof(float));\n"
                    "            cosTable_.SetValue(j, (j / 2) * sizeof(float));\n"
                    "            sign_.SetValue(j, j % 2 == 0 ? -1.0f : 1.0f);\n"
                    "        }\n")
        form_doc = "the interleaved form (rotate(x)[2i] = -x[2i + 1], [2i + 1] = x[2i])"
    else:
        lane_map = ("        for (uint32_t j = 0; j < D; ++j) {\n"
                    "            if (td_.interleaved) {   // lane 2i reads -x[2i + 1], lane 2i + 1 reads x[2i]\n"
                    "                rotTable_.SetValue(j, (j ^ 1U) * sizeof(float));\n"
                    "                cosTable_.SetValue(j, (j / 2) * sizeof(float));\n"
                    "                sign_.SetValue(j, j % 2 == 0 ? -1.0f : 1.0f);\n"
                    "            } else {                 // lane j < H reads -x[j + H], lane j >= H reads x[j - H]\n"
                    "                rotTable_.SetValue(j, (j < H ? j + H : j - H) * sizeof(float));\n"
                    "                cosTable_.SetValue(j, (j < H ? j : j - H) * sizeof(float));\n"
                    "                sign_.SetValue(j, j < H ? -1.0f : 1.0f);\n"
                    "            }\n"
                    "        }\n")
        form_doc = "the half form (cat(-x[D/2:], x[:D/2])) or the interleaved form (pairs), from the tiling data"
    layouts = sorted({l for _, l, _ in plan.variants}, key=LAYOUTS.index)
    variants_doc = "".join(f"\n//   {', '.join(f'{k} = {v!r}' for k, v in g.items()) or 'always'}: {l}, {f}"
                           for g, l, f in plan.variants)
    nx = len(xs)
    args = ", ".join(f"GM_ADDR {_ident(n)}" for n in [i.name for i in t.inputs] + ys)
    init_args = ", ".join(_ident(n) for n in [i.name for i in t.inputs] + ys)
    in_names = [i.name for i in t.inputs]
    gm_x = "\n".join(f"        xGm_[{k}].SetGlobalBuffer(reinterpret_cast<__gm__ Elem*>({_ident(n)}Addr), td_.rows * td_.headDim);"
                     for k, n in enumerate(xs))
    gm_y = "\n".join(f"        yGm_[{k}].SetGlobalBuffer(reinterpret_cast<__gm__ Out*>({_ident(n)}Addr), td_.rows * td_.headDim);"
                     for k, n in enumerate(ys))
    init_params = ", ".join(f"GM_ADDR {_ident(n)}Addr" for n in in_names + ys)
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD).replace("@UNIT_RANGE@", UNIT_RANGE)
    for k, v in (("@OP@", t.op_name), ("@NAME@", t.name), ("@T@", f"{cls}TilingData"), ("@K@", f"Kernel{cls}"),
                 ("@XT@", _macro_of(xs[0])), ("@CT@", _macro_of(cos_n)), ("@YT@", _macro_of(ys[0])),
                 ("@NX@", str(nx)), ("@XS@", ", ".join(xs)), ("@COS@", cos_n), ("@SIN@", sin_n),
                 ("@COS_ID@", _ident(cos_n)), ("@SIN_ID@", _ident(sin_n)),
                 ("@COS_IN@", str(plan.cos_input)), ("@X0_IN@", str(plan.x_inputs[0])),
                 ("@FORM_DOC@", form_doc), ("@LAYOUT_DOC@", " or ".join(layouts)), ("@VARIANTS_DOC@", variants_doc),
                 ("@LANE_MAP@", lane_map), ("@SELECT@", select), ("@ARGS@", args), ("@INIT_ARGS@", init_args),
                 ("@INIT_PARAMS@", init_params), ("@GM_X@", gm_x), ("@GM_Y@", gm_y),
                 ("@DTYPE_BYTES@", _dtype_bytes_fn()),
                 ("@BUFNUM@", str(int(knobs["buffer_num"]))), ("@RESERVE@", str(int(knobs["ub_reserve_bytes"]))),
                 ("@CAP@", str(int(knobs["tile_elems"]))),
                 ("@SPLIT@", core_split(knobs, f"td->rows * td->headDim * {nx}", "td->units")),
                 ("@SYNC@", SYNC_PIPES)):
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// Pattern: rotary position embedding on rows of D of @XS@, the tables @COS@ / @SIN@ shared:
//   y = x * cos_full + rotate(x) * sin_full       (fp32 arithmetic, fp16 / bf16 through Cast)
// with @FORM_DOC@.
// x is [B, S, N, D] (bsnd) or [B, N, S, D] (bnsd); served here: @LAYOUT_DOC@. The tables are
// [S, D/2] or [B, S, D/2]. Variants (attrs -> layout, form):@VARIANTS_DOC@
// Rows reading one table row are consecutive (N heads in bsnd, 1 in bnsd), so a tile of rows
// reads consecutive table rows: a tile is whole periods of S table rows (tables resident in UB)
// or a piece of one period (its table rows resident, or copied in per tile). Per tile two Gathers
// expand the half rows to the tile (cos, and sin with rotate's sign folded in); every x reuses them.
#include <cstring>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t NUM_X = @NX@;             // rotated inputs sharing the tables

struct @T@ {
    uint32_t headDim;                   // D
    uint32_t halfDim;                   // H = D / 2: elements per table row
    uint32_t interleaved;               // 1: pairs (2i, 2i + 1) rotate; 0: the halves rotate
    uint32_t tileRows;                  // rows of D per tile
    uint32_t repRows;                   // rows of a tile reading one table row: min(rowsPerTableRow, tileRows)
    uint32_t tileTableRows;             // table rows one tile reads, at most
    uint32_t residentTable;             // 1: the whole table sits in UB for the launch
    uint32_t wholePeriods;              // 1: a tile is whole periods (table rows 0 .. S - 1 each)
    uint32_t bufferNum;
    uint32_t blockDim;
    uint64_t rows;                      // rows of D per x input: B * S * N
    uint64_t seqLen;                    // S
    uint64_t rowsPerTableRow;           // N (bsnd) or 1 (bnsd)
    uint64_t periodRows;                // S * rowsPerTableRow: rows reading table rows 0 .. S - 1 in turn
    uint64_t periodsPerBatch;           // 1 (bsnd) or N (bnsd)
    uint64_t tableBatched;              // the tables are [B, S, D/2]
    uint64_t tableRows;                 // S, or B * S
    uint64_t piecesPerPeriod;           // tiles per period (not wholePeriods)
    uint64_t units;                     // tiles
    uint64_t formerNum;                 // cores taking formerUnits tiles; the rest take tailUnits
    uint64_t formerUnits;
    uint64_t tailUnits;
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using Elem = @XT@;
using Table = @CT@;
using Out = @YT@;

class @K@ {
public:
    __aicore__ inline void Init(@INIT_PARAMS@, const @T@& tiling)
    {
        td_ = tiling;
@GM_X@
@GM_Y@
        cosGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Table*>(@COS_ID@Addr), td_.tableRows * td_.halfDim);
        sinGm_.SetGlobalBuffer(reinterpret_cast<__gm__ Table*>(@SIN_ID@Addr), td_.tableRows * td_.halfDim);
@UNIT_RANGE@        const uint32_t lanes = td_.tileRows * td_.headDim;
        pipe_.InitBuffer(xQue_, td_.bufferNum, lanes * sizeof(Elem));
        pipe_.InitBuffer(yQue_, td_.bufferNum, lanes * sizeof(Out));
        pipe_.InitBuffer(workBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(rotBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(cosTileBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(sinTileBuf_, lanes * sizeof(float));
        pipe_.InitBuffer(rotTableBuf_, lanes * sizeof(uint32_t));
        pipe_.InitBuffer(cosTableBuf_, lanes * sizeof(uint32_t));
        pipe_.InitBuffer(signBuf_, lanes * sizeof(float));
        const uint32_t stagedRows = td_.residentTable ? static_cast<uint32_t>(td_.tableRows) : td_.tileTableRows;
        const uint32_t stagedLen = (stagedRows * td_.halfDim + 7) / 8 * 8;
        pipe_.InitBuffer(cosRowsBuf_, stagedLen * sizeof(float));
        pipe_.InitBuffer(sinRowsBuf_, stagedLen * sizeof(float));
        if constexpr (!std::is_same<Table, float>::value) {
            pipe_.InitBuffer(rawBuf_, (RAW_ROWS * td_.halfDim * sizeof(Table) + 31) / 32 * 32);
        }
        cosRows_ = cosRowsBuf_.Get<float>();
        sinRows_ = sinRowsBuf_.Get<float>();
        BuildTables();
        if (td_.residentTable) {
            LoadTableRows(cosRows_, cosGm_, 0, static_cast<uint32_t>(td_.tableRows));
            LoadTableRows(sinRows_, sinGm_, 0, static_cast<uint32_t>(td_.tableRows));
        }
    }

    __aicore__ inline void Process()
    {
        for (uint64_t u = 0; u < unitCount_; ++u) {
            uint64_t row0 = 0, tableRow0 = 0;
            uint32_t rows = 0, tableRows = 0;
            Locate(unitStart_ + u, row0, rows, tableRow0, tableRows);
            const uint32_t lanes = rows * td_.headDim;
            uint32_t base = 0;             // byte offset of the tile's first table row in the staged rows
            if (td_.residentTable) {
                base = static_cast<uint32_t>(tableRow0 * td_.halfDim * sizeof(float));
            } else {
                SyncPipes<HardEvent::V_MTE2>();       // the previous tile's Gathers are done with them
                LoadTableRows(cosRows_, cosGm_, tableRow0, tableRows);
                LoadTableRows(sinRows_, sinGm_, tableRow0, tableRows);
            }
            LocalTensor<float> cosTile = cosTileBuf_.Get<float>();
            LocalTensor<float> sinTile = sinTileBuf_.Get<float>();
            Gather(cosTile, cosRows_, cosTable_, base, lanes);
            Gather(sinTile, sinRows_, cosTable_, base, lanes);
            Mul(sinTile, sinTile, sign_, lanes);      // rotate's sign: -x lands where sin is negated
            for (uint32_t k = 0; k < NUM_X; ++k) {
                CopyIn(k, row0, lanes);
                Rotate(cosTile, sinTile, lanes);
                CopyOut(k, row0, lanes);
            }
        }
    }

private:
    static constexpr uint32_t RAW_ROWS = 64;   // table rows per staging copy of a 16-bit table

    // Tile u: rows [row0, row0 + rows) of every x, reading table rows [tableRow0, + tableRows).
    __aicore__ inline void Locate(uint64_t u, uint64_t& row0, uint32_t& rows, uint64_t& tableRow0, uint32_t& tableRows)
    {
        if (td_.wholePeriods) {
            row0 = u * td_.tileRows;
            const uint64_t left = td_.rows - row0;
            rows = static_cast<uint32_t>(left < td_.tileRows ? left : td_.tileRows);
            tableRow0 = 0;
            tableRows = static_cast<uint32_t>(td_.seqLen);
            return;
        }
        const uint64_t period = u / td_.piecesPerPeriod;
        const uint64_t inPeriod = (u % td_.piecesPerPeriod) * td_.tileRows;
        row0 = period * td_.periodRows + inPeriod;
        const uint64_t left = td_.periodRows - inPeriod;
        rows = static_cast<uint32_t>(left < td_.tileRows ? left : td_.tileRows);
        const uint64_t first = inPeriod / td_.rowsPerTableRow;
        const uint64_t last = (inPeriod + rows - 1) / td_.rowsPerTableRow;
        const uint64_t batchRow = td_.tableBatched ? period / td_.periodsPerBatch * td_.seqLen : 0;
        tableRow0 = batchRow + first;
        tableRows = static_cast<uint32_t>(last - first + 1);
    }

    // Offset tables for one tile, built once per core: rotTable_ (lane -> its rotate partner),
    // cosTable_ (lane -> its table element: row (i / repRows) mod S, then the half-row lane) and
    // sign_ (-1 where rotate negates). Row 0 by scalar writes, the rest by doubling copies.
    __aicore__ inline void BuildTables()
    {
        const uint32_t D = td_.headDim, H = td_.halfDim;
        const uint32_t lanes = td_.tileRows * D;
        rotTable_ = rotTableBuf_.Get<uint32_t>();
        cosTable_ = cosTableBuf_.Get<uint32_t>();
        sign_ = signBuf_.Get<float>();
@LANE_MAP@        SyncPipes<HardEvent::S_V>();
        LocalTensor<int32_t> rot = rotTable_.ReinterpretCast<int32_t>();
        LocalTensor<int32_t> cos = cosTable_.ReinterpretCast<int32_t>();
        for (uint32_t n = D; n < lanes; n *= 2) {          // row i reads row i's own lanes
            const uint32_t c = n < lanes - n ? n : lanes - n;
            Adds(rot[n], rot, static_cast<int32_t>(n * sizeof(float)), c);
            Adds(sign_[n], sign_, 0.0f, c);
        }
        const uint32_t block = td_.repRows * D;              // rows reading one table row
        for (uint32_t n = D; n < block && n < lanes; n *= 2) {
            const uint32_t c = n < block - n ? n : block - n;
            Adds(cos[n], cos, 0, c);
        }
        const uint32_t S = static_cast<uint32_t>(td_.seqLen);
        uint32_t groups = 1;
        const uint32_t tileGroups = (td_.tileRows + td_.repRows - 1) / td_.repRows;
        while (groups < tileGroups) {                        // group g reads table row g mod S
            uint32_t c = groups < tileGroups - groups ? groups : tileGroups - groups;
            int32_t step = static_cast<int32_t>(groups * H * sizeof(float));
            if (groups < S) {
                c = c < S - groups ? c : S - groups;
            } else {
                step = 0;                                    // whole periods repeat (groups is a multiple of S)
                c = c / S * S > 0 ? c / S * S : c;
            }
            const uint32_t done = groups * block;
            const uint32_t count = c * block < lanes - done ? c * block : lanes - done;
            Adds(cos[done], cos, step, count);
            groups += c;
        }
    }

    // Table rows [row0, row0 + n) in fp32 at dst (a 16-bit table through the staging copy).
    __aicore__ inline void LoadTableRows(const LocalTensor<float>& dst, const GlobalTensor<Table>& gm, uint64_t row0,
                                         uint32_t n)
    {
        const uint32_t H = td_.halfDim;
        if constexpr (std::is_same<Table, float>::value) {
            DataCopyExtParams in(1, n * H * sizeof(float), 0, 0, 0);
            DataCopyPad(dst.ReinterpretCast<Table>(), gm[row0 * H], in, DataCopyPadExtParams<Table>(false, 0, 0, 0.0f));
            SyncPipes<HardEvent::MTE2_V>();
        } else {
            LocalTensor<Table> raw = rawBuf_.Get<Table>();
            for (uint32_t r = 0; r < n; r += RAW_ROWS) {
                const uint32_t m = n - r < RAW_ROWS ? n - r : RAW_ROWS;
                DataCopyExtParams in(1, m * H * sizeof(Table), 0, 0, 0);
                DataCopyPad(raw, gm[(row0 + r) * H], in, DataCopyPadExtParams<Table>(false, 0, 0, static_cast<Table>(0.0f)));
                SyncPipes<HardEvent::MTE2_V>();
                Cast(dst[r * H], raw, RoundMode::CAST_NONE, m * H);
                SyncPipes<HardEvent::V_MTE2>();        // the next copy overwrites raw
            }
        }
    }

    __aicore__ inline void CopyIn(uint32_t k, uint64_t row0, uint32_t lanes)
    {
        LocalTensor<Elem> tile = xQue_.AllocTensor<Elem>();
        DataCopyExtParams in(1, lanes * sizeof(Elem), 0, 0, 0);
        DataCopyPad(tile, xGm_[k][row0 * td_.headDim], in, DataCopyPadExtParams<Elem>(false, 0, 0, static_cast<Elem>(0.0f)));
        xQue_.EnQue(tile);
    }

    // y = x * cos + x[partner] * (sign * sin), in fp32
    __aicore__ inline void Rotate(const LocalTensor<float>& cosTile, const LocalTensor<float>& sinTile, uint32_t lanes)
    {
        LocalTensor<Elem> tile = xQue_.DeQue<Elem>();
        LocalTensor<Out> y = yQue_.AllocTensor<Out>();
        LocalTensor<float> x = workBuf_.Get<float>();
        LocalTensor<float> rot = rotBuf_.Get<float>();
        if constexpr (std::is_same<Elem, float>::value) {
            x = tile.ReinterpretCast<float>();
        } else {
            Cast(x, tile, RoundMode::CAST_NONE, lanes);
        }
        Gather(rot, x, rotTable_, 0, lanes);
        Mul(rot, rot, sinTile, lanes);
        if constexpr (std::is_same<Out, float>::value) {
            LocalTensor<float> acc = y.ReinterpretCast<float>();
            Mul(acc, x, cosTile, lanes);
            Add(acc, acc, rot, lanes);
        } else {
            LocalTensor<float> acc = workBuf_.Get<float>();
            Mul(acc, x, cosTile, lanes);
            Add(acc, acc, rot, lanes);
            Cast(y, acc, RoundMode::CAST_RINT, lanes);
        }
        xQue_.FreeTensor(tile);
        yQue_.EnQue(y);
    }

    __aicore__ inline void CopyOut(uint32_t k, uint64_t row0, uint32_t lanes)
    {
        LocalTensor<Out> y = yQue_.DeQue<Out>();
        DataCopyExtParams out(1, lanes * sizeof(Out), 0, 0, 0);
        DataCopyPad(yGm_[k][row0 * td_.headDim], y, out);
        yQue_.FreeTensor(y);
    }

@SYNC@
    TPipe pipe_;
    TQue<QuePosition::VECIN, 2> xQue_;
    TQue<QuePosition::VECOUT, 2> yQue_;
    TBuf<QuePosition::VECCALC> workBuf_;
    TBuf<QuePosition::VECCALC> rotBuf_;
    TBuf<QuePosition::VECCALC> cosTileBuf_;
    TBuf<QuePosition::VECCALC> sinTileBuf_;
    TBuf<QuePosition::VECCALC> rotTableBuf_;
    TBuf<QuePosition::VECCALC> cosTableBuf_;
    TBuf<QuePosition::VECCALC> signBuf_;
    TBuf<QuePosition::VECCALC> cosRowsBuf_;
    TBuf<QuePosition::VECCALC> sinRowsBuf_;
    TBuf<QuePosition::VECCALC> rawBuf_;
    LocalTensor<uint32_t> rotTable_;
    LocalTensor<uint32_t> cosTable_;
    LocalTensor<float> sign_;
    LocalTensor<float> cosRows_;
    LocalTensor<float> sinRows_;
    GlobalTensor<Elem> xGm_[NUM_X];
    GlobalTensor<Out> yGm_[NUM_X];
    GlobalTensor<Table> cosGm_;
    GlobalTensor<Table> sinGm_;
    @T@ td_;
    uint64_t unitStart_ = 0;
    uint64_t unitCount_ = 0;
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@INIT_ARGS@, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
@SELECT@    const gert::Shape& xShape = context->GetInputShape(@X0_IN@)->GetStorageShape();
    const gert::Shape& tShape = context->GetInputShape(@COS_IN@)->GetStorageShape();
    const int32_t tRank = static_cast<int32_t>(tShape.GetDimNum());
    if (xShape.GetDimNum() != 4 || (tRank != 2 && tRank != 3)) {
        return ge::GRAPH_FAILED;
    }
    const uint64_t B = static_cast<uint64_t>(xShape.GetDim(0));
    const uint64_t S = static_cast<uint64_t>(xShape.GetDim(layout == 0 ? 1 : 2));
    const uint64_t N = static_cast<uint64_t>(xShape.GetDim(layout == 0 ? 2 : 1));
    const uint64_t D = static_cast<uint64_t>(xShape.GetDim(3));
    if (D == 0 || D % 16 != 0 || B * S * N == 0 || static_cast<uint64_t>(tShape.GetDim(tRank - 1)) * 2 != D ||
        static_cast<uint64_t>(tShape.GetDim(tRank - 2)) != S || (tRank == 3 && static_cast<uint64_t>(tShape.GetDim(0)) != B)) {
        return ge::GRAPH_FAILED;   // tables must be [S, D/2] or [B, S, D/2]
    }
    td->headDim = static_cast<uint32_t>(D);
    td->halfDim = static_cast<uint32_t>(D / 2);
    td->rows = B * S * N;
    td->seqLen = S;
    td->rowsPerTableRow = layout == 0 ? N : 1;
    td->periodRows = S * td->rowsPerTableRow;
    td->periodsPerBatch = layout == 0 ? 1 : N;
    td->tableBatched = tRank == 3 ? 1 : 0;
    td->tableRows = tRank == 3 ? B * S : S;

    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    const uint32_t coreNum = platform.GetCoreNumAiv();
    td->bufferNum = @BUFNUM@;
    const uint64_t reserve = @RESERVE@;
    const uint64_t xb = DtypeBytes(context->GetInputDesc(@X0_IN@)->GetDataType());
    const uint64_t tb = DtypeBytes(context->GetInputDesc(@COS_IN@)->GetDataType());
    const uint64_t raw = tb < 4 ? (64 * D / 2 * tb + 31) / 32 * 32 : 0;
    // the whole table in fp32 (cos and sin) when it takes at most a quarter of the UB
    const uint64_t tableBytes = 2 * ((td->tableRows * D / 2 + 7) / 8 * 8) * 4;
    td->residentTable = tableBytes <= ubSize / 4 ? 1 : 0;
    // per lane of a tile: x and y queues, the fp32 work and rotate tiles, the expanded cos and
    // sin, two offset tables and the sign; per-tile table rows (not resident) take at most half a lane each
    const uint64_t perLane = td->bufferNum * (xb + xb) + 7 * 4 + (td->residentTable ? 0 : 4);
    const uint64_t fixed = reserve + raw + (td->residentTable ? tableBytes : 0) + 1024;
    if (ubSize <= fixed + perLane * D) {
        return ge::GRAPH_FAILED;   // not even one row of D fits
    }
    uint64_t capRows = (ubSize - fixed) / perLane / D;
    const uint64_t capKnob = @CAP@;
    if (capKnob > 0 && capKnob / D < capRows) {
        capRows = capKnob / D > 0 ? capKnob / D : 1;
    }
    const uint64_t rep = td->rowsPerTableRow;
    const uint64_t share = (td->rows + coreNum - 1) / coreNum;    // rows per core when every core works
    if (td->residentTable && td->tableBatched == 0 && td->periodRows <= capRows) {
        // whole periods per tile, no more than one core's share
        td->wholePeriods = 1;
        uint64_t tile = capRows / td->periodRows * td->periodRows;
        const uint64_t even = (share + td->periodRows - 1) / td->periodRows * td->periodRows;
        tile = tile > even ? even : tile;
        td->tileRows = static_cast<uint32_t>(tile);
        td->repRows = static_cast<uint32_t>(rep);
        td->tileTableRows = static_cast<uint32_t>(S);
        td->units = (td->rows + tile - 1) / tile;
    } else {
        // pieces of one period: whole table rows (rep rows each) or a divisor of rep rows
        td->wholePeriods = 0;
        uint64_t tile = 0;
        if (rep <= capRows) {
            uint64_t most = capRows / rep * rep;
            const uint64_t even = (share + rep - 1) / rep * rep;
            most = most > even ? even : most;
            const uint64_t pieces = (td->periodRows + most - 1) / most;
            tile = ((td->periodRows + pieces - 1) / pieces + rep - 1) / rep * rep;
        } else {
            for (uint64_t d = capRows; d >= 1; --d) {
                if (rep % d == 0) {
                    tile = d;
                    break;
                }
            }
        }
        td->tileRows = static_cast<uint32_t>(tile);
        td->repRows = static_cast<uint32_t>(rep < tile ? rep : tile);
        td->tileTableRows = static_cast<uint32_t>(tile >= rep ? tile / rep : 1);
        td->piecesPerPeriod = (td->periodRows + tile - 1) / tile;
        td->units = td->rows / td->periodRows * td->piecesPerPeriod;
    }
    if (static_cast<uint64_t>(td->tileRows) * D >= (1ULL << 24)) {
        return ge::GRAPH_FAILED;
    }

@SPLIT@    td->blockDim = static_cast<uint32_t>(blockDim);
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling"""
