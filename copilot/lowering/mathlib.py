"""fp32 device helpers for functions the vector unit has no instruction for.

Built only from Exp, Ln, Abs, Div, Mul, Muls, Adds, Maxs, Mins, Compares and Select. The
polynomial coefficients were fitted by weighted least squares on Chebyshev nodes (relative error
weighting, fp64) for this project; `docs/lowering.md` gives the measured max relative errors.

- erf: |x| < 1 -> x * P(x^2) (degree 6 in x^2); |x| >= 1 -> 1 - erfc(|x|) with
  erfc(u) = exp(-u^2) * t * Q(t), t = 1/u (degree 10), sign restored by Select.
- Phi (for exact gelu): the same two pieces, with erfc used directly for the lower tail so that
  gelu(x) keeps its relative accuracy for very negative x (no 1 + erf cancellation).
- tanh: |x| < 0.625 -> x * P(x^2) (degree 5); otherwise sign(x) * (1 - e) / (1 + e),
  e = exp(-2|x|).
- sigmoid 1 / (1 + exp(-x)); silu x / (1 + exp(-x)); gelu(tanh) = x / (1 + exp(-2z)) (the
  same identity without cancellation); softplus = max(z, 0) + log1p(exp(-|z|)), log1p by the
  (1 + w) - 1 correction; mish = x * n / (n + 2), n = e (e + 2), e = exp(min(x, 20)).
"""

from __future__ import annotations

ERF_SMALL = [1.128379165691384, -0.3761262557207291, 0.11283582277538787, -0.026853691863542778,
             0.005188099768912616, -0.0008008193332293967, 7.847262419900802e-05]
ERFC_TAIL = [0.5641897235774336, -2.867005636271458e-05, -0.28103069360936983, -0.01511285843064716,
             0.525430026143416, -0.32807895002101545, -0.8593340845553745, 1.9243663622924638,
             -1.753382633410728, 0.8014360973154583, -0.15087080930383726]
TANH_SMALL = [0.9999999953600108, -0.333332501732769, 0.13330891949111198, -0.05370252776763021,
              0.02053200782493655, -0.005594847759041392]
TANH_SPLIT = 0.625


def _horner(acc: str, var: str, coeffs: list[float], indent: str) -> str:
    """acc = P(var) by Horner's rule, highest coefficient first."""
    lines = [f"{indent}Duplicate({acc}, {coeffs[-1]!r}f, n);"]
    for c in reversed(coeffs[:-1]):
        lines.append(f"{indent}Mul({acc}, {acc}, {var}, n);")
        lines.append(f"{indent}Adds({acc}, {acc}, {c!r}f, n);")
    return "\n".join(lines)


def helpers(used: set[str]) -> str:
    """C++ device helpers for the composite ops in `used` (plus what they depend on)."""
    out = []
    I = "    "
    sig = ("__aicore__ inline void {name}(const LocalTensor<float>& dst, const LocalTensor<float>& x, "
           "const LocalTensor<float>& t0, const LocalTensor<float>& t1, const LocalTensor<float>& t2, "
           "const LocalTensor<float>& t3, const LocalTensor<uint8_t>& bits, uint32_t n)")
    need_erfc = bool(used & {"erf", "gelu"})
    if need_erfc:
        out.append(f"""// erfc(u) for u >= 1 (u in t0): exp(-u^2) * t * Q(t), t = 1/u. Result in dst; uses t1, t2.
__aicore__ inline void ErfcTail(const LocalTensor<float>& dst, const LocalTensor<float>& u,
                                const LocalTensor<float>& t1, const LocalTensor<float>& t2, uint32_t n)
{{
    Duplicate(t1, 1.0f, n);
    Div(t1, t1, u, n);                    // t = 1/u
{_horner("dst", "t1", ERFC_TAIL, I)}
    Mul(dst, dst, t1, n);
    Mul(t2, u, u, n);
    Muls(t2, t2, -1.0f, n);
    Exp(t2, t2, n);
    Mul(dst, dst, t2, n);
}}
""")
    if "erf" in used:
        out.append(sig.format(name="ErfF32") + f"""
{{
    // small |x|: x * P(x^2)
    Mul(t0, x, x, n);
{_horner("t3", "t0", ERF_SMALL, I)}
    Mul(t3, t3, x, n);
    // large |x|: sign(x) * (1 - erfc(|x|))
    Abs(t0, x, n);
    ErfcTail(dst, t0, t1, t2, n);
    Muls(dst, dst, -1.0f, n);
    Adds(dst, dst, 1.0f, n);
    Muls(t1, dst, -1.0f, n);
    Compares(bits, x, 0.0f, CMPMODE::LT, n);
    Select(dst, bits, t1, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    Compares(bits, t0, 1.0f, CMPMODE::LT, n);
    Select(dst, bits, t3, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
}}
""")
    if "gelu" in used:
        out.append(sig.format(name="GeluErfF32") + f"""
{{
    // gelu(x) = x * Phi(x), Phi(x) = 0.5 * erfc(-x / sqrt(2)), each tail computed without cancellation
    Muls(t3, x, 0.7071067811865476f, n);  // s = x / sqrt(2)
    Abs(t0, t3, n);
    ErfcTail(dst, t0, t1, t2, n);          // erfc(|s|)
    Muls(dst, dst, 0.5f, n);               // lower tail: 0.5 * erfc(|s|)
    Muls(t1, dst, -1.0f, n);
    Adds(t1, t1, 1.0f, n);                 // upper tail: 1 - 0.5 * erfc(|s|)
    Compares(bits, t3, 0.0f, CMPMODE::LT, n);
    Select(dst, bits, dst, t1, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    // |s| < 1: 0.5 + 0.5 * s * P(s^2)
    Mul(t0, t3, t3, n);
{_horner("t1", "t0", ERF_SMALL, I)}
    Mul(t1, t1, t3, n);
    Muls(t1, t1, 0.5f, n);
    Adds(t1, t1, 0.5f, n);
    Abs(t0, t3, n);
    Compares(bits, t0, 1.0f, CMPMODE::LT, n);
    Select(dst, bits, t1, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    Mul(dst, dst, x, n);
}}
""")
    if "tanh" in used:
        out.append(sig.format(name="TanhF32") + f"""
{{
    // |x| >= {TANH_SPLIT}: sign(x) * (1 - e) / (1 + e), e = exp(-2|x|)
    Abs(t0, x, n);
    Muls(t1, t0, -2.0f, n);
    Exp(t1, t1, n);
    Muls(t2, t1, -1.0f, n);
    Adds(t2, t2, 1.0f, n);
    Adds(t1, t1, 1.0f, n);
    Div(dst, t2, t1, n);
    Muls(t1, dst, -1.0f, n);
    Compares(bits, x, 0.0f, CMPMODE::LT, n);
    Select(dst, bits, t1, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    // |x| < {TANH_SPLIT}: x * P(x^2)
    Mul(t2, x, x, n);
{_horner("t3", "t2", TANH_SMALL, I)}
    Mul(t3, t3, x, n);
    Compares(bits, t0, {TANH_SPLIT}f, CMPMODE::LT, n);
    Select(dst, bits, t3, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
}}
""")
    if "fma" in used:
        out.append("""// c + a * b with the product kept exact (Dekker's split, no FMA instruction needed): the
// rounding error of a * b is added back, so c + a * b is as accurate as a fused multiply-add.
__aicore__ inline void FmaF32(const LocalTensor<float>& dst, const LocalTensor<float>& c,
                              const LocalTensor<float>& a, const LocalTensor<float>& b,
                              const LocalTensor<float>& t0, const LocalTensor<float>& t1,
                              const LocalTensor<float>& t2, const LocalTensor<float>& t3,
                              const LocalTensor<float>& t4, const LocalTensor<uint8_t>& bits, uint32_t n)
{
    Mul(dst, a, b, n);                    // p = fl(a * b)
    Muls(t0, a, 4097.0f, n);
    Sub(t1, t0, a, n);
    Sub(t0, t0, t1, n);                   // ah
    Sub(t1, a, t0, n);                    // al
    Muls(t2, b, 4097.0f, n);
    Sub(t3, t2, b, n);
    Sub(t2, t2, t3, n);                   // bh
    Sub(t3, b, t2, n);                    // bl
    Mul(t4, t0, t2, n);
    Sub(t4, t4, dst, n);                  // ah*bh - p
    Mul(t0, t0, t3, n);
    Add(t4, t4, t0, n);                   // + ah*bl
    Mul(t0, t1, t2, n);
    Add(t4, t4, t0, n);                   // + al*bh
    Mul(t0, t1, t3, n);
    Add(t4, t4, t0, n);                   // + al*bl = a*b - p
    Add(dst, c, dst, n);                  // s = c + p
    Add(t0, dst, t4, n);
    Abs(t1, dst, n);
    Compares(bits, t1, 3.0e38f, CMPMODE::LE, n);   // keep s where it is inf/nan or near overflow
    Select(dst, bits, t0, dst, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
}
""")
    if "log1p" in used or "softplus" in used:
        out.append("""// log1p(w): Ln(1 + w) * w / ((1 + w) - 1), or w where 1 + w rounds to 1. Uses t2, t3.
__aicore__ inline void Log1pF32(const LocalTensor<float>& dst, const LocalTensor<float>& w,
                                const LocalTensor<float>& t2, const LocalTensor<float>& t3,
                                const LocalTensor<uint8_t>& bits, uint32_t n)
{
    Adds(t2, w, 1.0f, n);
    Adds(t3, t2, -1.0f, n);
    Ln(t2, t2, n);
    Mul(t2, t2, w, n);
    Div(t2, t2, t3, n);
    Compares(bits, t3, 0.0f, CMPMODE::EQ, n);
    Select(dst, bits, w, t2, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
}
""")
    return "\n".join(out)


# ops implemented by a helper taking (dst, x, t0..t3, bits, n)
HELPER_OPS = {"erf": "ErfF32", "gelu": "GeluErfF32", "tanh": "TanhF32"}


def arg_helpers(used: set[str]) -> str:
    """Index reductions (argmax / argmin) as torch defines them: the first extreme wins, and a NaN
    is the extreme (its first occurrence). Scalar folds for row chunks, vector folds for columns."""
    out = []
    for op, name, cmp, mode in (("rargmax", "Max", ">", "GT"), ("rargmin", "Min", "<", "LT")):
        if op not in used:
            continue
        out.append(f"""// x replaces the running {name.lower()} `best` of an index reduction: x is strictly better, or x is
// NaN and best is not (a NaN is the extreme; ties keep the earlier index)
__aicore__ inline bool ArgBetter{name}(float x, float best)
{{
    return (x != x) ? (best == best) : (best == best && x {cmp} best);
}}

// The same per column: row x at reduced position pos against the running (best, index) vectors.
__aicore__ inline void ArgBetter{name}Cols(const LocalTensor<float>& index, const LocalTensor<float>& best,
                                       const LocalTensor<float>& x, float pos, const LocalTensor<float>& t0,
                                       const LocalTensor<float>& t1, const LocalTensor<uint8_t>& bits, uint32_t n)
{{
    Duplicate(t0, 1.0f, n);
    Compare(bits, x, best, CMPMODE::{mode}, n);
    Select(t1, bits, t0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);   // 1 where x is strictly better
    Compare(bits, x, x, CMPMODE::NE, n);
    Select(t0, bits, t0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);   // 1 where x is NaN
    Compare(bits, best, best, CMPMODE::EQ, n);
    Select(t0, bits, t0, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);   // ... and best is not
    Add(t1, t1, t0, n);
    Compares(bits, t1, 0.5f, CMPMODE::GT, n);
    Select(best, bits, x, best, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
    Duplicate(t0, pos, n);
    Select(index, bits, t0, index, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);
}}
""")
    return "\n".join(out)
