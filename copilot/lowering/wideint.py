"""int64 data on int32 lanes: narrowed per tile when exact, the scalar unit otherwise.

Arch 2201 (910B) has no int64 vector arithmetic or compare; its Cast has s64 -> s32 (saturating)
and s32 -> s64. An elementwise integer program (Max Min Add Sub Mul, gcd) is exact on int32 lanes
as long as every input value is below 2^k in magnitude, k chosen from the program so that no
intermediate value passes 2^31 - 1 (31 for max/min/gcd, 30 for one add, 15 for one product). Each
int64 tile is narrowed by one Cast and tested by Cast to fp32, Abs and ReduceMax (fp32 of x is
below 2^k exactly when x is); a tile with a value past the bound is computed again element by
element on the scalar unit in int64 (wrapping add/sub/mul and torch's gcd), so every value is
exact, and the common case (values of a few decimal digits) stays vector work.
"""

from __future__ import annotations

from .ir import Program

WIDE_OPS = {"load", "max", "min", "add", "sub", "mul", "gcd"}
INT32_MAX = 2 ** 31 - 1


def narrow_bits(programs: list[Program]) -> int | None:
    """Largest k <= 31 such that inputs below 2^k in magnitude keep every value of every program
    within int32, or None when a program has an op outside the int32 set."""
    best = None
    for k in range(31, 0, -1):
        if all(_fits(p, 2 ** k - 1) for p in programs):
            best = k
            break
    return best


def _fits(p: Program, bound: int) -> bool:
    mag: dict[int, int] = {}
    for i, n in enumerate(p.nodes):
        if n.op not in WIDE_OPS or n.kind != "full":
            return False
        a = [mag[x] for x in n.args]
        if n.op == "load":
            m = bound
        elif n.op in ("max", "min", "gcd"):
            m = max(a)
        elif n.op in ("add", "sub"):
            m = a[0] + a[1]
        else:
            m = a[0] * a[1]
        if m > INT32_MAX:
            return False
        mag[i] = m
    return True


def helpers(bits: int) -> str:
    """Device helpers: the narrowing of a tile with its range test, the scalar gcd and the
    per-value range test of a load read on the scalar unit."""
    return f"""// int64 data on int32 lanes: values below 2^{bits} in magnitude keep the program exact there.
constexpr float NARROW_BOUND = {float(2 ** bits):.1f}f;
constexpr int64_t NARROW_LIMIT = {2 ** bits}LL;

// A tile of the input dtype to the working type; an int64 tile is narrowed (Cast saturates) and
// `wide` is set when a valid lane is past the bound: fp32(x) < 2^{bits} exactly when |x| < 2^{bits}. The int64
// queue tile is free after the Cast and holds the test's fp32 magnitudes (2 n floats).
template <typename W, typename T>
__aicore__ inline void NarrowToCalc(const LocalTensor<W>& dst, const LocalTensor<T>& src, const LocalTensor<half>& scratch,
                                    uint32_t nr, uint32_t cw, uint32_t pitch, uint32_t n, bool& wide)
{{
    if constexpr (sizeof(T) == 8 && std::is_same<W, int32_t>::value) {{
        Cast(dst, src, RoundMode::CAST_NONE, n);
        LocalTensor<float> mag = src.template ReinterpretCast<float>();
        Cast(mag, dst, RoundMode::CAST_RINT, n);    // monotonic: below 2^k exactly when the value is
        Abs(mag, mag, n);
        // one reduction over the tile's span; padding between rows is stale data (mostly earlier
        // values of this input), so only when the span fails are padded rows tested one by one
        ReduceMax(mag[n], mag, mag[n + 8], (nr - 1) * pitch + cw, false);
        const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
        SetFlag<HardEvent::V_S>(id);
        WaitFlag<HardEvent::V_S>(id);
        wide = !(mag.GetValue(n) < NARROW_BOUND);
        if (wide && pitch != cw && nr > 1) {{
            for (uint32_t j = 0; j < nr; ++j) {{
                ReduceMax(mag[n + 8 * j], mag[j * pitch], mag[n + 8 * nr], cw, false);
            }}
            const int32_t rowId = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(rowId);
            WaitFlag<HardEvent::V_S>(rowId);
            wide = false;
            for (uint32_t j = 0; j < nr; ++j) {{
                wide = wide || !(mag.GetValue(n + 8 * j) < NARROW_BOUND);
            }}
        }}
    }} else {{
        (void)nr; (void)cw; (void)pitch;
        ToCalc(dst, src, scratch, n);
        wide = false;
    }}
}}

// The same test for one value read on the scalar unit (a load with one value per row).
template <typename T>
__aicore__ inline bool PastNarrow(T v)
{{
    if constexpr (sizeof(T) == 8) {{
        return v >= static_cast<T>(NARROW_LIMIT) || v <= -static_cast<T>(NARROW_LIMIT);
    }} else {{
        return false;
    }}
}}

// int64 arithmetic of the scalar fallback: add/sub/mul wrap as torch's do.
__aicore__ inline int64_t WrapAdd(int64_t a, int64_t b) {{ return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }}
__aicore__ inline int64_t WrapSub(int64_t a, int64_t b) {{ return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }}
__aicore__ inline int64_t WrapMul(int64_t a, int64_t b) {{ return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }}
// gcd(|a|, |b|) by Euclid on magnitudes (|INT64_MIN| = 2^63 as unsigned, as torch's result wraps)
__aicore__ inline int64_t Gcd64(int64_t a, int64_t b)
{{
    uint64_t u = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
    uint64_t v = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
    while (v != 0) {{
        const uint64_t r = u % v;
        u = v;
        v = r;
    }}
    return static_cast<int64_t>(u);
}}
"""


def scalar_tile(em, vi: int, prog: Program) -> str:
    """ScalarTileV<vi>: the tile's elements on the scalar unit in int64, read from GM and written
    into the output queue tiles (the path of a tile whose values do not fit the int32 lanes)."""
    plan = em.plan
    nodes = prog.nodes
    outs = [(k, node) for k, (node, kind) in enumerate(prog.outputs) if kind == "full"]
    o = [f"    // variant {vi}, a tile with a value past 2^{plan.wide_bits}: each element in int64 on the scalar unit",
         f"    __aicore__ inline void ScalarTileV{vi}(uint64_t row0, uint32_t nr, uint32_t col0, uint32_t cw, uint32_t pitch)",
         "    {"]
    for k, _ in outs:
        ty = em.out_type(k)
        o.append(f"        LocalTensor<{ty}> y{k} = outQue{k}_.AllocTensor<{ty}>();")
    used = sorted({nodes[i].params["load"] for i in range(len(nodes)) if nodes[i].op == "load"})
    o.append("        for (uint32_t j = 0; j < nr; ++j) {")
    for l in used:
        o.append(f"            const int64_t base{l} = RowOffset({l}, row0 + j) + (td_.loadAlongRow[{l}] ? col0 : 0);")
    o.append("            for (uint32_t c = 0; c < cw; ++c) {")
    ind = "                "
    gm = {l: f"in{plan.loads[l].input}Gm_" for l in used}
    fn = {"max": "({0} > {1} ? {0} : {1})", "min": "({0} < {1} ? {0} : {1})", "add": "WrapAdd({0}, {1})",
          "sub": "WrapSub({0}, {1})", "mul": "WrapMul({0}, {1})", "gcd": "Gcd64({0}, {1})"}
    for i, n in enumerate(nodes):
        if n.op == "load":
            l = n.params["load"]
            o.append(f"{ind}const int64_t v{i} = static_cast<int64_t>({gm[l]}.GetValue(base{l} + "
                     f"(td_.loadAlongRow[{l}] ? c : 0)));")
        else:
            o.append(f"{ind}const int64_t v{i} = {fn[n.op].format(*(f'v{a}' for a in n.args))};   // {n.op}")
    for k, node in outs:
        o.append(f"{ind}y{k}.SetValue(j * pitch + c, static_cast<{em.out_type(k)}>(v{node}));")
    o += ["            }", "        }", "        SyncPipes<HardEvent::S_MTE3>();   // scalar writes before the copy out"]
    for k, _ in outs:
        o.append(f"        outQue{k}_.EnQue(y{k});")
    o.append("    }")
    return "\n".join(o)


def guard(vi: int, nloads: int, ind: str) -> list[str]:
    """Lines of ComputeV<vi> after its loads: a tile past the int32 range takes the scalar path."""
    wide = " || ".join(f"wide_[{l}]" for l in range(nloads))
    return [f"{ind}if ({wide}) {{   // a value past the int32 lanes' exact range",
            f"{ind}    ScalarTileV{vi}(row0, nr, col0, cw, pitch);",
            f"{ind}    return;",
            f"{ind}}}"]


# ---------------------------------------------------------------- index reductions of integer data
ARG_OPS = {"rargmax": ">", "rargmin": "<"}
ARG_EXACT = 2 ** 24    # fp32 holds every integer below it in magnitude


def arg_only(p: Program) -> bool:
    """argmax / argmin of an input and nothing else: integer data rank in fp32, the lanes whose
    extreme is past 2^24 ranked again exactly (exact_arg_rows / exact_arg_cols)."""
    return (all(n.op == "load" or n.op in ARG_OPS for n in p.nodes if n.op not in ("const", "attr"))
            and any(n.op in ARG_OPS for n in p.nodes))


def _arg_node(prog: Program):
    i = next(i for i, n in enumerate(prog.nodes) if n.op in ARG_OPS)
    return i, prog.nodes[i], prog.nodes[prog.nodes[i].args[0]].params["load"]


def _lane_scan(gm: str, start: str, step: str, op: str) -> list[str]:
    """int64 scan of one lane of rowLen elements `step` apart from GM: `at` = the first extreme."""
    at = "r" if step == "1" else f"r * {step}"
    return [f"                int64_t best = static_cast<int64_t>({gm}.GetValue({start}));",
            "                uint64_t at = 0;",
            "                for (uint64_t r = 1; r < td_.rowLen; ++r) {",
            f"                    const int64_t x = static_cast<int64_t>({gm}.GetValue({start} + {at}));",
            f"                    if (x {ARG_OPS[op]} best) {{",
            "                        best = x;",
            "                        at = r;",
            "                    }",
            "                }"]


def exact_arg_rows(em, vi: int, v) -> str:
    """ExactArgRowsV<vi>(base, nr): integer data ranked in fp32 is exact when the row's extreme is
    below 2^24 in magnitude (rounding is monotonic, so the fp32 extreme is past 2^24 exactly when
    the true one is); a row whose extreme is not is ranked again in int64 from GM."""
    i, nd, l = _arg_node(v.p)
    ty = em.in_type(em.plan.loads[l].input)
    gm = f"in{em.plan.loads[l].input}Gm_"
    return "\n".join([
        f"    // integer rows whose fp32 extreme is past 2^24: ranked again in int64 (the first {nd.op[4:]} wins)",
        f"    __aicore__ inline void ExactArgRowsV{vi}(uint64_t base, uint32_t nr)",
        "    {",
        f"        if constexpr (std::is_integral<{ty}>::value) {{",
        "            for (uint32_t s = 0; s < nr; ++s) {",
        "                const float value = stat_[NUM_STATS - 1][s];",
        f"                if (value < {float(ARG_EXACT):.1f}f && value > -{float(ARG_EXACT):.1f}f) {{",
        "                    continue;",
        "                }",
        f"                const int64_t off = RowOffset({l}, base + s);",
        *_lane_scan(gm, "off", "1", nd.op),
        f"                stat_[{v.stat_index[i]}][s] = static_cast<float>(at);",
        "            }",
        "        }",
        "    }"])


def exact_arg_cols(em, vi: int, v) -> str:
    """ExactArgColsV<vi>(outOff, wc): the same for the column statistics of MODE_COLUMNS (a lane
    runs down the reduced axis, `inner` elements apart)."""
    i, nd, l = _arg_node(v.p)
    ty = em.in_type(em.plan.loads[l].input)
    gm = f"in{em.plan.loads[l].input}Gm_"
    return "\n".join([
        f"    // integer columns whose fp32 extreme is past 2^24: ranked again in int64 (the first {nd.op[4:]} wins)",
        f"    __aicore__ inline void ExactArgColsV{vi}(uint64_t outOff, uint32_t wc)",
        "    {",
        f"        if constexpr (std::is_integral<{ty}>::value) {{",
        "            WaitVectorForScalar();",
        "            LocalTensor<float> value = StatVec(NUM_STATS - 1);",
        f"            LocalTensor<float> index = StatVec({v.stat_index[i]});",
        "            const uint64_t lane0 = outOff / td_.inner * td_.rowLen * td_.inner + outOff % td_.inner;",
        "            bool ranked = false;",
        "            for (uint32_t c = 0; c < wc; ++c) {",
        "                const float m = value.GetValue(c);",
        f"                if (m < {float(ARG_EXACT):.1f}f && m > -{float(ARG_EXACT):.1f}f) {{",
        "                    continue;",
        "                }",
        *_lane_scan(gm, "lane0 + c", "td_.inner", nd.op),
        "                index.SetValue(c, static_cast<float>(at));",
        "                ranked = true;",
        "            }",
        "            if (ranked) {",
        "                SyncPipes<HardEvent::S_V>();   // scalar writes before the index tile is narrowed",
        "            }",
        "        }",
        "    }"])
