"""The distinct values of a tensor: `torch.unique(x, sorted=True, return_inverse=True)`:

    y       = the distinct values of x (flattened), ascending   (length M: data-dependent)
    inverse = for every element of x, the position of its value in y   (int64, x's shape)

Matched by the aten ops the golden runs on a small real tensor of each case's dtype (one
`_unique2`, nothing else) and by its outputs there (torch.unique's own); whether a case returns the
inverse is given by a bool attr (`return_inverse`) or is the same for every case.

Two paths. Presence (no sort): every element maps to an order-preserving key in a domain of at
most 65536 keys, so y is the present keys in order and the inverse a gather of each key's rank.
- uint8 / int8: the value (+ 128), 256 keys;
- float16 / bfloat16: the bits s as int16, k = s + 32768 for s >= 0, -s below (-0 and +0 share
  k = 32768; the zero y keeps is the sign of x's first zero, as torch's CPU unique keeps it);
- int32 / int64: k = x - min(x) when max - min < 65536 (a first pass finds them; int64 values are
  narrowed to int32, exact when every one lies in (-2^31, 2^31) by an fp32 guard). A wider range
  is found only at run time and takes the sort path; int64 outside int32 writes no shape (the case
  fails naming out_shape).
Sort (float32, and int32 / int64 of a wider range): a stable LSD radix sort of 32-bit keys, 8 bits
a pass, across all cores in the GM workspace (per-core digit counts, cursors from every core's
counts after a SyncAll, each element written at its cursor by scalar code); float32 keys are the
bits made order-preserving with -0 as +0 and every NaN above +inf (each NaN its own value, as
torch's), integers x - min. Each core then marks the first of each run of equal keys in its slice
of the sorted keys; y's values of float32 are read back from x at the run's first position (the
stable sort keeps x's first zero's sign, as torch's CPU unique does), the inverse is scattered to
each key's position.
The length M goes into the entry's out_shape argument (the data-dependent contract of
copilot/oracle/dynamic.py; y's GM is allocated at numel(x)).

NaN (fp16 / bf16, presence path): every NaN is its own value in torch.unique; there NaNs of one bit
pattern are one key (CANN-Bench's generator makes none). int32 / int64 reserve the sort's workspace
only up to 768 MiB; beyond that a range over 65536 keys writes no shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from copilot.errors import Unsupported

_SERVED = ("uint8", "int8", "float16", "bfloat16", "int32", "int64", "float32")
_PASSIVE = {"alias", "clone", "contiguous", "detach", "view", "_unsafe_view", "reshape", "flatten",
            "lift_fresh", "_to_copy"}


@dataclass
class UniquePlan:
    task: object
    inverse_rule: tuple                  # ("attr", name) | ("const", bool): whether inverse is written
    pattern: str = "unique"
    unserved: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    programs: list = field(default_factory=lambda: [None])
    axis_rule: None = None
    renders_itself: bool = True

    def render(self, knobs: dict) -> str:
        return render(self, knobs)


def _probe(task, case):
    """Whether the case's golden is torch.unique on a small tensor of its dtype, and whether it
    returns the inverse: True / False, or None when it is not unique."""
    import torch

    from copilot.dynamo_free import OpLog
    from copilot.lowering.capture import _torch_dtype, call_golden

    dt = _torch_dtype(case.dtypes[0])
    rank = len(case.shapes[0]) if case.shapes and case.shapes[0] is not None else 1
    g = torch.Generator().manual_seed(7)
    x = torch.randint(-5, 6, (24,), generator=g)
    x = (x.abs() if dt == torch.uint8 else x).to(dt).reshape((2, 12) if rank >= 2 else (24,))
    log = OpLog()
    try:
        with torch.no_grad(), log:
            out = call_golden(task, [x], dict(case.attrs))
    except Exception:          # the golden refuses a small tensor: not this pattern
        return None
    if [o for o in log.names() if o not in _PASSIVE] != ["_unique2"]:
        return None
    want_y, want_inv = torch.unique(x, sorted=True, return_inverse=True)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not outs or not isinstance(outs[0], torch.Tensor) or not torch.equal(outs[0], want_y):
        return None
    if len(outs) == 1:
        return False
    if len(outs) == 2 and isinstance(outs[1], torch.Tensor) and torch.equal(outs[1].reshape(-1), want_inv.reshape(-1)):
        return True
    return None


def plan_unique(task):
    """A UniquePlan, None when the golden is no torch.unique of its only input."""
    cases = task.cases
    if not cases or len(task.inputs) != 1 or len(task.outputs) not in (1, 2):
        return None
    first = _probe(task, cases[0])
    if first is None:
        return None
    found = [first]
    for c in cases[1:]:
        f = _probe(task, c)
        if f is None:
            raise Unsupported(f"{task.name}: case {c.id} is not the torch.unique the other cases are")
        found.append(f)
    if any(found) and len(task.outputs) != 2:
        raise Unsupported(f"{task.name}: the golden returns an inverse the proto has no output for")
    rule = None
    for a in task.attrs:
        if a.type == "bool" and all(bool(c.attrs.get(a.name, a.default)) == f for c, f in zip(cases, found)):
            rule = ("attr", a.name)
            break
    if rule is None:
        if len(set(found)) != 1:
            raise Unsupported(f"{task.name}: whether the inverse is returned varies between cases and no bool "
                              "attr gives it")
        rule = ("const", found[0])
    unserved = {}
    for c in cases:
        if c.dtypes[0] not in _SERVED:
            unserved[c.id] = f"dtype {c.dtypes[0]}"
    plan = UniquePlan(task, rule, unserved=unserved)
    plan.notes.append("unique by presence over an order-preserving key domain (<= 65536 keys), ranks by a prefix "
                      "count, the inverse a gather of the ranks; float32, and int32 / int64 of a wider range, by "
                      "a stable LSD radix sort across cores, the first of each run of equal keys kept")
    return plan


def render(plan: UniquePlan, knobs: dict) -> str:
    from copilot.backends.sim.build import camel
    from copilot.export.opdef import task_opdef
    from copilot.lowering.indexing import SYNC_PIPES, TILING_HEAD
    from copilot.lowering.source import _dtype_bytes_fn, _ident, _macro_of

    t = plan.task
    cls = camel(t.name)
    names = [i.name for i in t.inputs] + [o.name for o in t.outputs]
    if plan.inverse_rule[0] == "attr":
        idx = [a.name for a in t.attrs].index(plan.inverse_rule[1])
        inverse = f"*attrs->GetAttrPointer<bool>({idx})"
        inv_doc = f"attr {plan.inverse_rule[1]} is true"
    else:
        inverse = "true" if plan.inverse_rule[1] else "false"
        inv_doc = "always" if plan.inverse_rule[1] else "never"
    inv_arg = _ident(t.outputs[1].name) if len(t.outputs) == 2 else "nullptr"
    text = (_KERNEL + "\n" + _TILING).replace("@TILING_HEAD@", TILING_HEAD)
    subs = {"@OP@": t.op_name, "@NAME@": t.name, "@T@": f"{cls}TilingData", "@K@": f"Kernel{cls}",
            "@XT@": _macro_of(t.inputs[0].name), "@X_ID@": _ident(t.inputs[0].name),
            "@Y_ID@": _ident(t.outputs[0].name), "@INV_ID@": inv_arg, "@INV_DOC@": inv_doc,
            "@INVERSE@": inverse,
            "@ARGS@": ", ".join(f"GM_ADDR {_ident(n)}" for n in names),
            "@DTYPE_BYTES@": _dtype_bytes_fn(), "@SYNC@": SYNC_PIPES,
            "@RESERVE@": str(int(knobs["ub_reserve_bytes"]))}
    for k, v in subs.items():
        text = text.replace(k, v)
    text += "\n\n" + task_opdef(t, camel(f"{t.name}_custom")).rstrip("\n") + "\n"
    return text


_KERNEL = r"""// @OP@ (@NAME@): generated by the Cannpilot lowering agent.
// y = the distinct values of x (flattened), ascending; inverse[i] = the position of x[i]'s value in y
// (torch.unique(x, sorted=True, return_inverse=True)); the inverse is written when @INV_DOC@.
// y's length M depends on the data: y's GM holds numel(x) elements, the kernel writes M into out_shape.
//
// Two paths, chosen per case: presence over a small key domain (8- and 16-bit data, and int32 / int64
// whose range phase 0 finds within 65536 keys), or a sort (float32 always: 2^32 keys; int32 / int64 of
// a wider range). The tiling function picks by dtype; for int32 / int64 the kernel picks after phase 0.
//
// Presence path: every element maps to an order-preserving key k in [0, R), R <= 65536,
//   uint8: k = x; int8: k = x + 128 (R = 256)
//   fp16 / bf16 bits s (as int16): k = s + 32768 for s >= 0, k = -s below (R = 65536; -0 and +0 share
//     k = 32768, and y keeps the sign of x's first zero, as torch's CPU unique does)
//   int32 / int64: k = x - min(x), R = max - min + 1 (phase 0 finds them; at most 65536, int64 values
//     within int32)
// Phase 0 (int32 / int64): per-core min / max, combined after a SyncAll.
// Phase 1, each core over its slice of x: keys on the vector unit; the UB table gathered at each key,
//   and only the elements whose key it lacks (packed by GatherMask) marked by scalar code (for R <=
//   4096 counted, stopping once all R keys are present); the tables are added into one GM table
//   (atomic add).
// Phase 2, each core over a range of keys: its present keys counted; after a SyncAll every core knows
//   its offset in y; the present keys decoded into y, each key's rank (its position in y) into a GM table.
// Phase 3 (inverse): each core loads the rank table (int16, rank - 32768) and gathers rank[k(x)] per
//   element, widened to int64.
//
// Sort path: a stable LSD radix sort of 32-bit keys (11 bits a pass) across all cores, in GM workspace:
//   float32 bits b: NaN -> 0xFFFFFFFF (after +inf; every NaN its own value, as torch's), -0 -> +0, then
//     b | 2^31 for b >= 0 and ~b below; int32 / int64: k = x - min(x) (int64 values within int32, else
//     no shape is written and the case fails). Passes: 3 for float32 (a pass whose digit is the same
//     for every key is skipped), ceil(bits(max - min) / 11) for integers.
//   An element is key << 32 | its position in x (uint64: one scalar write moves both).
//   A pass: each core counts its slice's digits (scalar), the counts of all cores (summed on the vector
//     unit) give every core a cursor per digit (SyncAll), each element is written at its cursor, in order.
//   float32's y values are read back from x at a run's first position: the stable sort puts x's first
//     zero first in its run (torch keeps its sign), and every NaN is a run with its own bits.
//   Runs: each core over a slice of the sorted keys marks the first of each run of equal keys, counts
//     them (SyncAll: its offset in y), writes y and inverse[position] = the run's rank (scalar, scattered).
#include <cstring>
#include <type_traits>
#include "kernel_operator.h"
#include "tiling/platform/platform_ascendc.h"
#include "register/op_def_registry.h"

constexpr uint32_t MAX_KEYS = 65536;          // the key domain of 16-bit data: the largest R served
constexpr uint32_t SLOT = 8;                  // int32 per core in a workspace slot area (32 B)
constexpr uint32_t MAX_CORES = 64;
constexpr uint32_t SLOT_BYTES = 3 * MAX_CORES * SLOT * 4;   // areas: 0 min / max, 1 first zero, 2 counts
constexpr uint32_t RADIX_BITS = 11;           // sort path: bits of a digit (3 passes for 32-bit keys)
constexpr uint32_t RADIX = 1u << RADIX_BITS;
constexpr uint32_t HIST_BYTES = MAX_CORES * RADIX * 4;       // sort path: every core's digit counts

struct @T@ {
    uint64_t n;                         // elements of x
    uint64_t slice;                     // elements per core (the last core takes the rest)
    uint32_t tile;                      // elements per UB tile (a multiple of 256)
    uint32_t blockDim;
    uint32_t inverse;                   // 1: write inverse
    uint32_t sortable;                  // 1: the workspace holds the sort path's two arrays
    uint64_t sortStride;                // elements per sort array in the workspace (n, rounded up to 4)
};
REGISTER_TILING_DEFAULT(@T@);

using namespace AscendC;

using T = @XT@;

class @K@ {
    static constexpr bool IS_HALF16 = std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;
    static constexpr bool IS_WIDE = std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value;
    static constexpr bool IS_FLOAT32 = std::is_same<T, float>::value;      // sort path only
    static constexpr uint32_t KEYS_CAP = sizeof(T) == 1 ? 256 : MAX_KEYS;
    static constexpr uint32_t ZERO_KEY = 32768;          // fp16 / bf16: the key of +0 and -0
    static constexpr uint32_t COUNTED_KEYS = 4096;       // up to this R, phase 1 counts keys and stops when all are marked
    static constexpr float INT32_SAFE = 2147483520.0f;   // the largest fp32 below 2^31: int64 within it narrows exactly
    static constexpr uint32_t NAN_KEY = 0xFFFFFFFFu;      // float32: every NaN's sort key (above +inf's)
    // sort path, tableBuf_ (int32): the cursors, two row sums, then up to HIST_ROWS cores' counts
    static constexpr uint32_t HIST_ROWS = KEYS_CAP == MAX_KEYS ? (MAX_KEYS * 2 / 4 - 3 * RADIX) / RADIX : 1;
    enum class Path { PRESENCE, SORT, NONE };

public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR inverse, GM_ADDR outShape, GM_ADDR workspace,
                                const @T@& td)
    {
        td_ = td;
        block_ = static_cast<uint32_t>(GetBlockIdx());
        start_ = static_cast<uint64_t>(block_) * td_.slice;
        count_ = start_ >= td_.n ? 0 : (td_.n - start_ < td_.slice ? td_.n - start_ : td_.slice);
        xGm_.SetGlobalBuffer((__gm__ T*)x, td_.n);
        yGm_.SetGlobalBuffer((__gm__ T*)y, td_.n);
        if (td_.inverse != 0) {
            invGm_.SetGlobalBuffer((__gm__ int64_t*)inverse, td_.n);
        }
        shapeGm_.SetGlobalBuffer((__gm__ uint32_t*)outShape, 18);   // 9 uint64 words
        GM_ADDR ws = GetUserWorkspace(workspace);
        slotGm_.SetGlobalBuffer((__gm__ int32_t*)ws, 3 * MAX_CORES * SLOT);
        presGm_.SetGlobalBuffer((__gm__ int16_t*)(ws + SLOT_BYTES), MAX_KEYS);
        rankGm_.SetGlobalBuffer((__gm__ int16_t*)(ws + SLOT_BYTES + MAX_KEYS * 2), MAX_KEYS);
        if (td_.sortable != 0) {
            GM_ADDR sortWs = ws + SLOT_BYTES + 2 * MAX_KEYS * 2;
            histGm_.SetGlobalBuffer((__gm__ int32_t*)sortWs, MAX_CORES * RADIX);
            GM_ADDR arrays = sortWs + HIST_BYTES;
            for (uint32_t a = 0; a < 2; ++a) {
                sortGm_[a].SetGlobalBuffer((__gm__ uint64_t*)(arrays + a * td_.sortStride * 8), td_.n);
            }
        }
        pipe_.InitBuffer(tableBuf_, KEYS_CAP * 2);   // int32 / int64: 128 KB, also phase 0's rows (tile <= 8192)
        pipe_.InitBuffer(xBuf_, td_.tile * sizeof(T));
        pipe_.InitBuffer(offBuf_, td_.tile * 4);
        pipe_.InitBuffer(gBuf_, td_.tile * 4);
        pipe_.InitBuffer(wBuf_, td_.tile * 8);
        pipe_.InitBuffer(maskBuf_, td_.tile / 8);
        pipe_.InitBuffer(idxBuf_, td_.tile * 4);
        pipe_.InitBuffer(slotBuf_, MAX_CORES * SLOT * 4 + 64);
    }

    __aicore__ inline void Process()
    {
        if constexpr (IS_FLOAT32) {
            Runs(SortKeys((32 + RADIX_BITS - 1) / RADIX_BITS));
            return;
        }
        ZeroPresence();
        if constexpr (IS_WIDE) {
            MinMax();
        }
        SyncAll();
        if constexpr (IS_WIDE) {
            // every core reads the same slots and takes the same path
            const Path path = ReadRange();
            if (path == Path::NONE) {
                return;              // no shape written: the case fails naming out_shape
            }
            if (path == Path::SORT) {
                Runs(SortKeys(passes_));
                return;
            }
        }
        Mark();
        SyncAll();
        Rank();
        if (td_.inverse != 0) {
            SyncAll();
            Inverse();
        }
    }

private:
    // keys per core in phase 2 (and in zeroing the presence table), a multiple of 16
    __aicore__ inline uint32_t KeyChunk(uint32_t keys) const
    {
        const uint32_t c = (keys + td_.blockDim - 1) / td_.blockDim;
        return (c + 15) / 16 * 16;
    }

    __aicore__ inline void ZeroPresence()
    {
        const uint32_t chunk = KeyChunk(KEYS_CAP);
        const uint32_t k0 = block_ * chunk;
        if (k0 >= KEYS_CAP) {
            return;
        }
        const uint32_t kn = KEYS_CAP - k0 < chunk ? KEYS_CAP - k0 : chunk;
        LocalTensor<int16_t> zeros = tableBuf_.Get<int16_t>();
        Duplicate(zeros, static_cast<int16_t>(0), static_cast<int32_t>(kn));
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyPad(presGm_[k0], zeros, DataCopyExtParams(1, kn * 2, 0, 0, 0));
        SyncPipes<HardEvent::MTE3_V>();
    }

    __aicore__ inline void LoadTile(uint64_t t0, uint32_t len)
    {
        LocalTensor<T> xl = xBuf_.Get<T>();
        DataCopyPad(xl, xGm_[start_ + t0], DataCopyExtParams(1, len * static_cast<uint32_t>(sizeof(T)), 0, 0, 0),
                    DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        SyncPipes<HardEvent::MTE2_V>();
    }

    // int64 -> int32 lanes of a tile (exact once the range check passed)
    __aicore__ inline LocalTensor<int32_t> Narrow(uint32_t len)
    {
        LocalTensor<int32_t> v = offBuf_.Get<int32_t>();
        if constexpr (std::is_same<T, int64_t>::value) {
            Cast(v, xBuf_.Get<T>(), RoundMode::CAST_NONE, static_cast<int32_t>(len));
        } else {
            Adds(v, xBuf_.Get<int32_t>(), static_cast<int32_t>(0), static_cast<int32_t>(len));
        }
        return v;
    }

    // Phase 0: this core's min / max, lane-wise over the tiles, folded to 64 lanes, then scalar. int64
    // also keeps the fp32 min / max of its values: they show whether every value lies within int32.
    __aicore__ inline void MinMax()
    {
        LocalTensor<int32_t> slot = slotBuf_.Get<int32_t>();
        Duplicate(slot, static_cast<int32_t>(0), static_cast<int32_t>(SLOT));
        if (count_ > 0) {
            const uint32_t tile = td_.tile;
            LocalTensor<int32_t> lo = tableBuf_.Get<int32_t>();
            LocalTensor<int32_t> hi = lo[tile];
            LocalTensor<float> flo = tableBuf_.Get<float>()[2 * tile];
            LocalTensor<float> fhi = flo[tile];
            LocalTensor<float> f = wBuf_.Get<float>();
            uint32_t lanes = 0;
            for (uint64_t t0 = 0; t0 < count_; t0 += tile) {
                const uint32_t len = count_ - t0 < tile ? static_cast<uint32_t>(count_ - t0) : tile;
                SyncPipes<HardEvent::V_MTE2>();
                LoadTile(t0, len);
                LocalTensor<int32_t> v = Narrow(len);
                if constexpr (std::is_same<T, int64_t>::value) {
                    Cast(f, xBuf_.Get<T>(), RoundMode::CAST_RINT, static_cast<int32_t>(len));
                }
                if (t0 == 0) {               // the first tile seeds every lane it has
                    lanes = len;
                    Adds(lo, v, static_cast<int32_t>(0), static_cast<int32_t>(len));
                    Adds(hi, v, static_cast<int32_t>(0), static_cast<int32_t>(len));
                    if constexpr (std::is_same<T, int64_t>::value) {
                        Adds(flo, f, 0.0f, static_cast<int32_t>(len));
                        Adds(fhi, f, 0.0f, static_cast<int32_t>(len));
                    }
                } else {
                    Min(lo, lo, v, static_cast<int32_t>(len));
                    Max(hi, hi, v, static_cast<int32_t>(len));
                    if constexpr (std::is_same<T, int64_t>::value) {
                        Min(flo, flo, f, static_cast<int32_t>(len));
                        Max(fhi, fhi, f, static_cast<int32_t>(len));
                    }
                }
            }
            while (lanes > 64) {             // fold the upper lanes onto the lower ones
                const uint32_t half = (lanes / 2 + 63) / 64 * 64;
                const int32_t rest = static_cast<int32_t>(lanes - half);
                Min(lo, lo, lo[half], rest);
                Max(hi, hi, hi[half], rest);
                if constexpr (std::is_same<T, int64_t>::value) {
                    Min(flo, flo, flo[half], rest);
                    Max(fhi, fhi, fhi[half], rest);
                }
                lanes = half;
            }
            SyncPipes<HardEvent::V_S>();
            int32_t mn = lo.GetValue(0), mx = hi.GetValue(0);
            bool fits = true;
            for (uint32_t i = 0; i < lanes; ++i) {
                const int32_t a = lo.GetValue(i), b = hi.GetValue(i);
                mn = a < mn ? a : mn;
                mx = b > mx ? b : mx;
                if constexpr (std::is_same<T, int64_t>::value) {
                    fits = fits && flo.GetValue(i) >= -INT32_SAFE && fhi.GetValue(i) <= INT32_SAFE;
                }
            }
            slot.SetValue(0, mn);
            slot.SetValue(1, mx);
            slot.SetValue(2, fits ? 1 : 0);
            slot.SetValue(3, 1);             // this core has elements
        }
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(slotGm_[block_ * SLOT], slot, DataCopyExtParams(1, SLOT * 4, 0, 0, 0));
        SyncPipes<HardEvent::MTE3_S>();
    }

    __aicore__ inline void ReadSlots(uint32_t area)
    {
        LocalTensor<int32_t> all = slotBuf_.Get<int32_t>();
        SyncPipes<HardEvent::S_MTE2>();
        DataCopyPad(all, slotGm_[area * MAX_CORES * SLOT], DataCopyExtParams(1, td_.blockDim * SLOT * 4, 0, 0, 0),
                    DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_S>();
    }

    // The path of int32 / int64 data from its range: presence within 65536 keys, else the sort (its
    // passes_ from the range's bits) when the workspace holds it; none when int64 leaves int32.
    __aicore__ inline Path ReadRange()
    {
        ReadSlots(0);
        LocalTensor<int32_t> all = slotBuf_.Get<int32_t>();
        int64_t mn = 0, mx = 0;
        bool any = false, fits = true;
        for (uint32_t b = 0; b < td_.blockDim; ++b) {
            if (all.GetValue(b * SLOT + 3) == 0) {
                continue;
            }
            const int64_t a = all.GetValue(b * SLOT), c = all.GetValue(b * SLOT + 1);
            mn = !any || a < mn ? a : mn;
            mx = !any || c > mx ? c : mx;
            fits = fits && all.GetValue(b * SLOT + 2) != 0;
            any = true;
        }
        minKey_ = mn;
        keys_ = static_cast<uint32_t>(mx - mn + 1 <= MAX_KEYS ? mx - mn + 1 : 0);
        if (!any || !fits) {
            return Path::NONE;
        }
        if (mx - mn + 1 <= static_cast<int64_t>(MAX_KEYS)) {
            return Path::PRESENCE;
        }
        if (td_.sortable == 0) {
            return Path::NONE;
        }
        passes_ = 0;
        for (uint64_t span = static_cast<uint64_t>(mx - mn); span != 0; span >>= RADIX_BITS) {
            ++passes_;
        }
        return Path::SORT;
    }

    // Byte offsets 2 k of the keys of a tile's len elements (int32, into offBuf_): the rank table is int16.
    __aicore__ inline LocalTensor<int32_t> KeyOffsets(uint32_t len)
    {
        LocalTensor<int32_t> off = offBuf_.Get<int32_t>();
        const int32_t n = static_cast<int32_t>(len);
        if constexpr (sizeof(T) == 1) {
            LocalTensor<half> h = gBuf_.Get<half>();
            Cast(h, xBuf_.Get<T>(), RoundMode::CAST_NONE, n);
            if constexpr (std::is_same<T, int8_t>::value) {
                Adds(h, h, static_cast<half>(128.0f), n);
            }
            Muls(h, h, static_cast<half>(2.0f), n);
            Cast(off, h, RoundMode::CAST_RINT, n);
        } else if constexpr (IS_HALF16) {
            // k = s + 32768 (s >= 0) or -s, in fp32 (exact); the compare runs over whole 256 B repeats
            const int32_t padded = static_cast<int32_t>((len + 63) / 64 * 64);
            LocalTensor<float> s = wBuf_.Get<float>();
            LocalTensor<float> up = s[td_.tile];
            LocalTensor<uint8_t> nonNeg = maskBuf_.Get<uint8_t>();
            if (padded > n) {                // lanes past the tail: 0 (the Cast below overwrites the others)
                Duplicate(s[padded - 64], 0.0f, 64);
            }
            Cast(s, xBuf_.Get<T>().template ReinterpretCast<int16_t>(), RoundMode::CAST_NONE, n);
            Compares(nonNeg, s, 0.0f, CMPMODE::GE, static_cast<uint32_t>(padded));
            Adds(up, s, 32768.0f, padded);
            Muls(s, s, -1.0f, padded);
            Select(s, nonNeg, up, s, SELMODE::VSEL_TENSOR_TENSOR_MODE, static_cast<uint32_t>(padded));
            Muls(s, s, 2.0f, n);
            Cast(off, s, RoundMode::CAST_RINT, n);
        } else {
            LocalTensor<int32_t> v = Narrow(len);     // into off itself
            Adds(off, v, static_cast<int32_t>(-minKey_), n);
            Muls(off, off, static_cast<int32_t>(2), n);
        }
        return off;
    }

    // Phase 1: the keys present in this core's slice, added into the GM presence table.
    __aicore__ inline void Mark()
    {
        const uint32_t keys = IS_WIDE ? keys_ : KEYS_CAP;
        LocalTensor<int16_t> table = tableBuf_.Get<int16_t>();
        Duplicate(table, static_cast<int16_t>(0), static_cast<int32_t>(keys));
        LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
        CreateVecIndex(idx, static_cast<int32_t>(0), td_.tile);
        SyncPipes<HardEvent::V_S>();
        uint32_t present = 0;
        int32_t zero = 0;                    // fp16 / bf16: 1 the first zero here is +0, 2 it is -0
        for (uint64_t t0 = 0; t0 < count_ && present < keys; t0 += td_.tile) {
            const uint32_t len = count_ - t0 < td_.tile ? static_cast<uint32_t>(count_ - t0) : td_.tile;
            SyncPipes<HardEvent::S_MTE2>();
            SyncPipes<HardEvent::V_MTE2>();
            LoadTile(t0, len);
            LocalTensor<int32_t> off = KeyOffsets(len);
            // only the elements whose key is not yet marked reach the scalar loop: the table gathered
            // at each key, the absent ones' positions packed by GatherMask
            const uint32_t padded = (len + 63) / 64 * 64;
            LocalTensor<int16_t> seen = gBuf_.Get<int16_t>();
            LocalTensor<float> seenF = wBuf_.Get<float>();
            LocalTensor<int32_t> fresh = wBuf_.Get<int32_t>()[td_.tile];
            LocalTensor<uint8_t> absent = maskBuf_.Get<uint8_t>();
            if constexpr (IS_HALF16) {       // until this core's first zero: its sign (the first zero key)
                if (zero == 0) {
                    LocalTensor<float> keyF = wBuf_.Get<float>();   // the keys as KeyOffsets left them (2 k)
                    Compares(absent, keyF, static_cast<float>(2 * ZERO_KEY), CMPMODE::EQ, padded);
                    uint64_t zeros = 0;
                    GatherMask(fresh, idx, absent.ReinterpretCast<uint32_t>(), true, len, {1, 1, 8, 0}, zeros);
                    if (zeros > 0) {
                        SyncPipes<HardEvent::V_S>();
                        const uint32_t at = static_cast<uint32_t>(fresh.GetValue(0));
                        zero = xBuf_.Get<T>().template ReinterpretCast<uint16_t>().GetValue(at) == 0 ? 1 : 2;
                        SyncPipes<HardEvent::S_V>();
                    }
                }
            }
            Gather(seen, table, off.ReinterpretCast<uint32_t>(), 0, len);
            if (padded > len) {              // lanes past the tail count as marked
                Duplicate(seenF[padded - 64], 1.0f, 64);
            }
            Cast(seenF, seen, RoundMode::CAST_NONE, static_cast<int32_t>(len));
            Compares(absent, seenF, 0.0f, CMPMODE::EQ, padded);
            uint64_t freshCount = 0;
            GatherMask(fresh, off, absent.ReinterpretCast<uint32_t>(), true, padded, {1, 1, 8, 0}, freshCount);
            SyncPipes<HardEvent::V_S>();
            const uint32_t m = static_cast<uint32_t>(freshCount);
            if (keys <= COUNTED_KEYS) {      // few keys: count them, to stop once all are present
                for (uint32_t j = 0; j < m; ++j) {
                    const uint32_t k = static_cast<uint32_t>(fresh.GetValue(j)) >> 1;
                    if (table.GetValue(k) == 0) {
                        table.SetValue(k, 1);
                        ++present;
                    }
                }
            } else {                         // else mark (a key repeated within the tile is marked again)
                for (uint32_t j = 0; j < m; ++j) {
                    table.SetValue(static_cast<uint32_t>(fresh.GetValue(j)) >> 1, 1);
                }
            }
            SyncPipes<HardEvent::S_V>();
        }
        LocalTensor<int32_t> slot = slotBuf_.Get<int32_t>();
        SyncPipes<HardEvent::MTE3_S>();
        for (uint32_t i = 0; i < SLOT; ++i) {
            slot.SetValue(i, i == 0 ? zero : 0);
        }
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(slotGm_[(MAX_CORES + block_) * SLOT], slot, DataCopyExtParams(1, SLOT * 4, 0, 0, 0));
        SetAtomicAdd<int16_t>();
        DataCopyPad(presGm_, table, DataCopyExtParams(1, keys * 2, 0, 0, 0));
        SetAtomicNone();
        SyncPipes<HardEvent::MTE3_S>();
    }

    // The value of key k, as y holds it.
    __aicore__ inline void PutValue(const LocalTensor<T>& yl, uint32_t j, uint32_t k, bool zeroNeg)
    {
        if constexpr (IS_HALF16) {
            uint32_t bits = k >= ZERO_KEY ? k - ZERO_KEY : 65536 - k;
            bits = k == ZERO_KEY && zeroNeg ? 0x8000 : bits;
            yl.template ReinterpretCast<uint16_t>().SetValue(j, static_cast<uint16_t>(bits));
        } else if constexpr (IS_WIDE) {
            yl.SetValue(j, static_cast<T>(minKey_ + static_cast<int64_t>(k)));
        } else if constexpr (std::is_same<T, int8_t>::value) {
            yl.SetValue(j, static_cast<T>(static_cast<int32_t>(k) - 128));
        } else {
            yl.SetValue(j, static_cast<T>(k));
        }
    }

    __aicore__ inline void FlushY(const LocalTensor<T>& yl, uint64_t at, uint32_t len)
    {
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(yGm_[at], yl, DataCopyExtParams(1, len * static_cast<uint32_t>(sizeof(T)), 0, 0, 0));
        SyncPipes<HardEvent::MTE3_S>();
    }

    // This core's count of y's values into the slots; after a SyncAll, its offset in y (the counts of
    // the cores before it). Core 0 writes out_shape: rank 1, then M = every core's count (uint64 words).
    __aicore__ inline uint64_t OffsetInY(uint32_t count)
    {
        LocalTensor<int32_t> slot = slotBuf_.Get<int32_t>();
        for (uint32_t i = 0; i < SLOT; ++i) {
            slot.SetValue(i, i == 0 ? static_cast<int32_t>(count) : 0);
        }
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(slotGm_[(2 * MAX_CORES + block_) * SLOT], slot, DataCopyExtParams(1, SLOT * 4, 0, 0, 0));
        SyncPipes<HardEvent::MTE3_S>();
        SyncAll();
        ReadSlots(2);
        LocalTensor<int32_t> counts = slotBuf_.Get<int32_t>();
        uint64_t offset = 0, total = 0;
        for (uint32_t b = 0; b < td_.blockDim; ++b) {
            const uint64_t c = static_cast<uint64_t>(counts.GetValue(b * SLOT));
            offset += b < block_ ? c : 0;
            total += c;
        }
        if (block_ == 0) {
            LocalTensor<uint32_t> words = slotBuf_.Get<uint32_t>()[MAX_CORES * SLOT];
            words.SetValue(0, 1);
            words.SetValue(1, 0);
            words.SetValue(2, static_cast<uint32_t>(total));
            words.SetValue(3, static_cast<uint32_t>(total >> 32));
            SyncPipes<HardEvent::S_MTE3>();
            DataCopyPad(shapeGm_, words, DataCopyExtParams(1, 16, 0, 0, 0));
            SyncPipes<HardEvent::MTE3_S>();
        }
        return offset;
    }

    // Phase 2: this core's range of keys: its count, its offset in y after the others', y's values and the ranks.
    __aicore__ inline void Rank()
    {
        const uint32_t keys = IS_WIDE ? keys_ : KEYS_CAP;
        const uint32_t chunk = KeyChunk(keys);
        const uint32_t k0 = block_ * chunk;
        const uint32_t kn = k0 >= keys ? 0 : (keys - k0 < chunk ? keys - k0 : chunk);
        LocalTensor<int16_t> pres = tableBuf_.Get<int16_t>();
        uint32_t count = 0;
        if (kn > 0) {
            DataCopyPad(pres, presGm_[k0], DataCopyExtParams(1, kn * 2, 0, 0, 0),
                        DataCopyPadExtParams<int16_t>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_S>();
            for (uint32_t j = 0; j < kn; ++j) {
                count += pres.GetValue(j) != 0 ? 1 : 0;
            }
        }
        const uint64_t offset = OffsetInY(count);
        bool zeroNeg = false;
        if constexpr (IS_HALF16) {
            if (kn > 0 && k0 <= ZERO_KEY && ZERO_KEY < k0 + kn) {      // the first core that saw a zero says its sign
                ReadSlots(1);
                LocalTensor<int32_t> zs = slotBuf_.Get<int32_t>();
                for (uint32_t b = 0; b < td_.blockDim; ++b) {
                    const int32_t z = zs.GetValue(b * SLOT);
                    if (z != 0) {
                        zeroNeg = z == 2;
                        break;
                    }
                }
            }
        }
        if (kn == 0) {
            return;
        }
        // y in pieces of a tile; the ranks (rank - 32768, int16) overwrite the presence entries
        LocalTensor<T> yl = xBuf_.Get<T>();
        uint32_t filled = 0;
        uint64_t written = 0;
        for (uint32_t j = 0; j < kn; ++j) {
            if (pres.GetValue(j) == 0) {
                continue;
            }
            const uint64_t r = offset + written + filled;
            pres.SetValue(j, static_cast<int16_t>(static_cast<int32_t>(r) - 32768));
            PutValue(yl, filled, k0 + j, zeroNeg);
            if (++filled == td_.tile) {
                FlushY(yl, offset + written, filled);
                written += filled;
                filled = 0;
            }
        }
        if (filled > 0) {
            FlushY(yl, offset + written, filled);
        }
        if (td_.inverse != 0) {
            SyncPipes<HardEvent::S_MTE3>();
            DataCopyPad(rankGm_[k0], pres, DataCopyExtParams(1, kn * 2, 0, 0, 0));
            SyncPipes<HardEvent::MTE3_S>();
        }
    }

    // Phase 3: inverse[i] = rank[k(x[i])], gathered from the rank table in UB, widened to int64.
    __aicore__ inline void Inverse()
    {
        const uint32_t keys = IS_WIDE ? keys_ : KEYS_CAP;
        LocalTensor<int16_t> rank = tableBuf_.Get<int16_t>();
        SyncPipes<HardEvent::S_MTE2>();
        DataCopyPad(rank, rankGm_, DataCopyExtParams(1, keys * 2, 0, 0, 0), DataCopyPadExtParams<int16_t>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        LocalTensor<int16_t> got = gBuf_.Get<int16_t>();
        LocalTensor<float> wide = offBuf_.Get<float>();
        LocalTensor<int32_t> r32 = gBuf_.Get<int32_t>();
        LocalTensor<int64_t> r64 = wBuf_.Get<int64_t>();
        for (uint64_t t0 = 0; t0 < count_; t0 += td_.tile) {
            const uint32_t len = count_ - t0 < td_.tile ? static_cast<uint32_t>(count_ - t0) : td_.tile;
            const int32_t n = static_cast<int32_t>(len);
            SyncPipes<HardEvent::V_MTE2>();
            LoadTile(t0, len);
            SyncPipes<HardEvent::MTE3_V>();
            LocalTensor<int32_t> off = KeyOffsets(len);
            Gather(got, rank, off.ReinterpretCast<uint32_t>(), 0, len);
            Cast(wide, got, RoundMode::CAST_NONE, n);
            Adds(wide, wide, 32768.0f, n);
            Cast(r32, wide, RoundMode::CAST_RINT, n);
            Cast(r64, r32, RoundMode::CAST_NONE, n);
            SyncPipes<HardEvent::V_MTE3>();
            DataCopyPad(invGm_[start_ + t0], r64, DataCopyExtParams(1, len * 8, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE3_V>();
    }

    // Sort path: the sort key of element i of the x tile in xBuf_ (order-preserving, 32 bits).
    __aicore__ inline uint32_t SortKey(uint32_t i)
    {
        if constexpr (IS_FLOAT32) {
            uint32_t b = xBuf_.Get<T>().template ReinterpretCast<uint32_t>().GetValue(i);
            if ((b & 0x7FFFFFFFu) > 0x7F800000u) {
                return NAN_KEY;
            }
            b = b == 0x80000000u ? 0u : b;               // -0 sorts with +0
            return (b & 0x80000000u) != 0 ? ~b : (b | 0x80000000u);
        } else {
            return static_cast<uint32_t>(static_cast<int64_t>(xBuf_.Get<T>().GetValue(i)) - minKey_);
        }
    }

    // A tile of this core's slice for the scalar loops: x (src -1: the keys made by SortKey) or the
    // elements (key << 32 | position in x) of sort array src, into wBuf_.
    __aicore__ inline void LoadSortTile(int32_t src, uint64_t t0, uint32_t len)
    {
        SyncPipes<HardEvent::S_MTE2>();
        if (src < 0) {
            DataCopyPad(xBuf_.Get<T>(), xGm_[start_ + t0], DataCopyExtParams(1, len * static_cast<uint32_t>(sizeof(T)), 0, 0, 0),
                        DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        } else {
            DataCopyPad(wBuf_.Get<uint64_t>(), sortGm_[src][start_ + t0], DataCopyExtParams(1, len * 8, 0, 0, 0),
                        DataCopyPadExtParams<uint64_t>(false, 0, 0, 0));
        }
        SyncPipes<HardEvent::MTE2_S>();
    }

    __aicore__ inline uint64_t ElementAt(int32_t src, uint64_t t0, uint32_t i)
    {
        if (src < 0) {
            return (static_cast<uint64_t>(SortKey(i)) << 32) | static_cast<uint32_t>(start_ + t0 + i);
        }
        return wBuf_.Get<uint64_t>().GetValue(i);
    }

    // Each digit's first place in the pass's output for this core, from every core's counts (rows of
    // histGm_): after all smaller digits and after this digit of the cores before this one. The rows
    // are summed on the vector unit (all of them, and those before this core). False when one digit
    // holds every element (the pass would move nothing).
    __aicore__ inline bool Cursors(const LocalTensor<int32_t>& cursor)
    {
        LocalTensor<int32_t> before = cursor[RADIX];
        LocalTensor<int32_t> total = cursor[2 * RADIX];
        LocalTensor<int32_t> rows = cursor[3 * RADIX];
        Duplicate(before, static_cast<int32_t>(0), static_cast<int32_t>(2 * RADIX));
        for (uint32_t b0 = 0; b0 < td_.blockDim; b0 += HIST_ROWS) {
            const uint32_t nb = td_.blockDim - b0 < HIST_ROWS ? td_.blockDim - b0 : HIST_ROWS;
            SyncPipes<HardEvent::V_MTE2>();
            DataCopyPad(rows, histGm_[b0 * RADIX], DataCopyExtParams(1, nb * RADIX * 4, 0, 0, 0),
                        DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
            SyncPipes<HardEvent::MTE2_V>();
            for (uint32_t r = 0; r < nb; ++r) {
                Add(total, total, rows[r * RADIX], static_cast<int32_t>(RADIX));
                if (b0 + r < block_) {
                    Add(before, before, rows[r * RADIX], static_cast<int32_t>(RADIX));
                }
            }
        }
        SyncPipes<HardEvent::V_S>();
        uint32_t base = 0;
        bool moves = true;
        for (uint32_t d = 0; d < RADIX; ++d) {
            const uint32_t t = static_cast<uint32_t>(total.GetValue(d));
            cursor.SetValue(d, static_cast<int32_t>(base + static_cast<uint32_t>(before.GetValue(d))));
            base += t;
            moves = moves && t != td_.n;
        }
        return moves;
    }

    // One LSD pass over digit (key >> shift) & (RADIX - 1), from src (-1: x) into sort array dst: each
    // core counts its slice's digits, then writes each element at its digit's cursor, in order (the
    // sort is stable). False when every key has the same digit (nothing moves; never for pass 0, which
    // writes the elements first).
    __aicore__ inline bool SortPass(int32_t src, uint32_t dst, uint32_t shift)
    {
        LocalTensor<int32_t> cursor = tableBuf_.Get<int32_t>();
        Duplicate(cursor, static_cast<int32_t>(0), static_cast<int32_t>(RADIX));
        SyncPipes<HardEvent::V_S>();
        for (uint64_t t0 = 0; t0 < count_; t0 += td_.tile) {
            const uint32_t len = count_ - t0 < td_.tile ? static_cast<uint32_t>(count_ - t0) : td_.tile;
            LoadSortTile(src, t0, len);
            for (uint32_t i = 0; i < len; ++i) {
                const uint32_t d = static_cast<uint32_t>(ElementAt(src, t0, i) >> (32 + shift)) & (RADIX - 1);
                cursor.SetValue(d, cursor.GetValue(d) + 1);
            }
        }
        SyncPipes<HardEvent::S_MTE3>();
        DataCopyPad(histGm_[block_ * RADIX], cursor, DataCopyExtParams(1, RADIX * 4, 0, 0, 0));
        SyncPipes<HardEvent::MTE3_V>();
        SyncAll();
        const bool moves = Cursors(cursor);
        if (!moves && src >= 0) {
            SyncAll();                       // every core has read the counts before the next pass writes them
            return false;
        }
        for (uint64_t t0 = 0; t0 < count_; t0 += td_.tile) {
            const uint32_t len = count_ - t0 < td_.tile ? static_cast<uint32_t>(count_ - t0) : td_.tile;
            LoadSortTile(src, t0, len);
            for (uint32_t i = 0; i < len; ++i) {
                const uint64_t e = ElementAt(src, t0, i);
                const uint32_t d = static_cast<uint32_t>(e >> (32 + shift)) & (RADIX - 1);
                const int32_t at = cursor.GetValue(d);
                cursor.SetValue(d, at + 1);
                sortGm_[dst].SetValue(static_cast<uint32_t>(at), e);
            }
        }
        SyncAll();
        return true;
    }

    // The sort path's passes, low digit first: the sort array holding the sorted elements.
    __aicore__ inline uint32_t SortKeys(uint32_t passes)
    {
        int32_t src = -1;
        for (uint32_t p = 0; p < passes; ++p) {
            const uint32_t dst = src == 0 ? 1 : 0;
            if (SortPass(src, dst, RADIX_BITS * p)) {
                src = static_cast<int32_t>(dst);
            }
        }
        return static_cast<uint32_t>(src);
    }

    __aicore__ inline bool StartsRun(uint32_t k, uint32_t prev, bool first) const
    {
        return first || k != prev || (IS_FLOAT32 && k == NAN_KEY);
    }

    // Sort path, y and the inverse from the sorted elements: this core's slice of them, the first of
    // each run of equal keys (and every NaN) a value of y.
    __aicore__ inline void Runs(uint32_t src)
    {
        const uint32_t before = start_ > 0 && count_ > 0 ? static_cast<uint32_t>(sortGm_[src].GetValue(start_ - 1) >> 32) : 0;
        uint32_t prev = before;
        bool first = start_ == 0;
        uint32_t count = 0;
        for (uint64_t t0 = 0; t0 < count_; t0 += td_.tile) {
            const uint32_t len = count_ - t0 < td_.tile ? static_cast<uint32_t>(count_ - t0) : td_.tile;
            LoadSortTile(static_cast<int32_t>(src), t0, len);
            for (uint32_t i = 0; i < len; ++i) {
                const uint32_t k = static_cast<uint32_t>(wBuf_.Get<uint64_t>().GetValue(i) >> 32);
                count += StartsRun(k, prev, first) ? 1 : 0;
                prev = k;
                first = false;
            }
        }
        const uint64_t offset = OffsetInY(count);
        LocalTensor<T> yl = xBuf_.Get<T>();
        prev = before;
        first = start_ == 0;
        uint64_t rank = offset;              // y's values so far: the current run's rank + 1
        uint64_t written = offset;
        uint32_t filled = 0;
        for (uint64_t t0 = 0; t0 < count_; t0 += td_.tile) {
            const uint32_t len = count_ - t0 < td_.tile ? static_cast<uint32_t>(count_ - t0) : td_.tile;
            LoadSortTile(static_cast<int32_t>(src), t0, len);
            for (uint32_t i = 0; i < len; ++i) {
                const uint64_t e = wBuf_.Get<uint64_t>().GetValue(i);
                const uint32_t k = static_cast<uint32_t>(e >> 32);
                const uint32_t at = static_cast<uint32_t>(e);
                if (StartsRun(k, prev, first)) {
                    if constexpr (IS_FLOAT32) {
                        yl.SetValue(filled, xGm_.GetValue(at));
                    } else {
                        yl.SetValue(filled, static_cast<T>(minKey_ + static_cast<int64_t>(k)));
                    }
                    ++rank;
                    if (++filled == td_.tile) {
                        FlushY(yl, written, filled);
                        written += filled;
                        filled = 0;
                    }
                }
                if (td_.inverse != 0) {
                    invGm_.SetValue(at, static_cast<int64_t>(rank - 1));
                }
                prev = k;
                first = false;
            }
        }
        if (filled > 0) {
            FlushY(yl, written, filled);
        }
    }

@SYNC@
    TPipe pipe_;
    TBuf<QuePosition::VECCALC> tableBuf_, xBuf_, offBuf_, gBuf_, wBuf_, maskBuf_, idxBuf_, slotBuf_;
    GlobalTensor<T> xGm_, yGm_;
    GlobalTensor<int64_t> invGm_;
    GlobalTensor<uint32_t> shapeGm_;
    GlobalTensor<int32_t> slotGm_;
    GlobalTensor<int16_t> presGm_, rankGm_;
    GlobalTensor<int32_t> histGm_;                       // sort path: every core's digit counts
    GlobalTensor<uint64_t> sortGm_[2];                   // sort path: key << 32 | position in x
    @T@ td_;
    uint32_t block_ = 0;
    uint64_t start_ = 0;
    uint64_t count_ = 0;
    int64_t minKey_ = 0;                 // int32 / int64: min(x), the value of key 0
    uint32_t keys_ = 0;                  // int32 / int64: R = max - min + 1
    uint32_t passes_ = 0;                // int32 / int64 on the sort path: LSD passes of RADIX_BITS
};

extern "C" __global__ __aicore__ void @NAME@_custom(@ARGS@, GM_ADDR out_shape, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    @K@ op;
    op.Init(@X_ID@, @Y_ID@, @INV_ID@, out_shape, workspace, tilingData);
    op.Process();
}
"""

_TILING = r"""@TILING_HEAD@    const gert::RuntimeAttrs* attrs = context->GetAttrs();
    if (attrs == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const gert::Shape& xs = context->GetInputShape(0)->GetStorageShape();
    uint64_t n = 1;
    for (size_t a = 0; a < xs.GetDimNum(); ++a) {
        n *= static_cast<uint64_t>(xs.GetDim(a));
    }
    const ge::DataType dt = context->GetInputDesc(0)->GetDataType();
    if (n == 0 || n >= (1ull << 32)) {
        return ge::GRAPH_FAILED;   // empty, or more elements than the 32-bit positions of the sort path
    }
    td->n = n;
    td->inverse = (@INVERSE@) ? 1 : 0;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint64_t ubSize = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubSize);
    uint64_t coreNum = platform.GetCoreNumAiv();
    coreNum = coreNum > 64 ? 64 : (coreNum == 0 ? 1 : coreNum);
    // UB: the key table (int16 per key; 256 keys for 8-bit data, 65536 else) and per tile element x,
    // the key offsets, the gathered ranks / fp32 keys, the int64 inverse (also two fp32 temporaries),
    // the compare mask, the element positions (0, 1, ...); the table's room also holds phase 0's four lane-wise min / max rows (16 B).
    const uint64_t es = DtypeBytes(dt);
    const uint64_t keysCap = es == 1 ? 256 : 65536;
    const uint64_t fixed = @RESERVE@ + 64 * 8 * 4 + 64 + 1024;
    const uint64_t perElem = es + 4 + 4 + 8 + 1 + 4;
    if (ubSize < fixed + keysCap * 2 + 256 * perElem) {
        return ge::GRAPH_FAILED;   // not one tile fits beside the key table
    }
    uint64_t tile = (ubSize - fixed - keysCap * 2) / perElem;
    tile = tile / 256 * 256;
    tile = tile > 8192 ? 8192 : tile;     // phase 0's rows (16 B an element) stay within the table's 128 KB
    td->tile = static_cast<uint32_t>(tile);
    // cores: one per 16384 elements at least (the table phases cost every core the same)
    uint64_t blockDim = (n + 16383) / 16384;
    blockDim = blockDim > coreNum ? coreNum : blockDim;
    blockDim = blockDim == 0 ? 1 : blockDim;
    td->blockDim = static_cast<uint32_t>(blockDim);
    td->slice = (n + blockDim - 1) / blockDim;
    context->SetBlockDim(static_cast<uint32_t>(blockDim));
    // The path: float32 sorts (2^32 keys); 8- and 16-bit data take presence; int32 / int64 take the
    // path their range (phase 0, at run time) allows, so they reserve the sort's workspace too, while
    // it stays within SORT_WS_CAP (else a range over 65536 keys writes no shape). The sort holds every
    // core's digit counts (64 x 2048 uint32) and two arrays of uint64 elements (key << 32 | position).
    constexpr uint64_t SORT_WS_CAP = 768ull << 20;
    const bool isFloat32 = dt == ge::DT_FLOAT;
    const bool wide = dt == ge::DT_INT32 || dt == ge::DT_INT64;
    td->sortStride = (n + 3) / 4 * 4;
    const uint64_t sortBytes = 64 * 2048 * 4 + 2 * td->sortStride * 8;
    td->sortable = (isFloat32 || (wide && sortBytes <= SORT_WS_CAP)) ? 1 : 0;
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = platform.GetLibApiWorkSpaceSize() + 3 * 64 * 8 * 4 + 2 * 65536 * 2 + (td->sortable != 0 ? sortBytes : 0);
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
"""
