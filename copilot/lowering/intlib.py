"""int32 device helpers for integer operators with no vector instruction (gcd).

Built from int32 Add, Sub, Mul, Muls, Adds, Max, Min and uint32 ShiftRight (all on arch 2201).
Per-lane decisions are 0/1 int32 flags applied arithmetically (`v + f * (u - v)`), so no Select
(which takes only half/float) and no integer compare are needed.
"""

from __future__ import annotations

GCD_TMPS = 8          # int32 scratch tiles GcdInt32 takes
GCD_STEPS = 64        # bound on the binary-gcd steps for 32-bit magnitudes (31 + 31 bits, +2)
GCD_CHECK_EVERY = 8   # steps between the "every lane done" tests
EUCLID_STEPS = 26     # Euclid steps for 16-bit magnitudes (Lame: F(24) > 2^15, +1 swap, +1)

GCD = f"""// |x| on int32 lanes: x * (1 - 2 * signbit(x)).
__aicore__ inline void AbsInt32(const LocalTensor<int32_t>& dst, const LocalTensor<int32_t>& x,
                                const LocalTensor<int32_t>& sign, uint32_t n)
{{
    ShiftRight(sign.ReinterpretCast<uint32_t>(), x.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(31), n);
    Muls(sign, sign, -2, n);
    Adds(sign, sign, 1, n);
    Mul(dst, x, sign, n);
}}

// gcd of 16-bit magnitudes (a, b as int32 in g, b): Euclid on fp32 lanes, exact below 2^24 there
// (floor(a / b) rounds to the true quotient, q * b and a - q * b are exact). A lane whose b is 0
// divides by 1 and keeps a. About 8 vector ops a step, {EUCLID_STEPS} steps at most.
__aicore__ inline void GcdEuclidF32(const LocalTensor<int32_t>& g, const LocalTensor<int32_t>& b,
                                    const LocalTensor<float>& fa, const LocalTensor<float>& fb,
                                    const LocalTensor<float>& q, const LocalTensor<float>& divisor,
                                    const LocalTensor<float>& work, const LocalTensor<uint8_t>& bits, uint32_t n)
{{
    Cast(fa, g, RoundMode::CAST_RINT, n);   // exact: |values| < 2^24
    Cast(fb, b, RoundMode::CAST_RINT, n);
    for (uint32_t step = 0; step < {EUCLID_STEPS}; ++step) {{
        if (step % {GCD_CHECK_EVERY} == 0 && step > 0) {{
            ReduceMax(q, fb, work, n, false);          // done when b == 0 in every lane
            const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(id);
            WaitFlag<HardEvent::V_S>(id);
            if (q.GetValue(0) == 0.0f) {{
                break;
            }}
        }}
        Compares(bits, fb, 0.0f, CMPMODE::NE, n);
        Select(divisor, bits, fb, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, n);
        Div(q, fa, divisor, n);
        Cast(q, q, RoundMode::CAST_FLOOR, n);
        Mul(q, q, divisor, n);
        Sub(q, fa, q, n);                              // r = a mod b (0 where b is 0)
        Select(fa, bits, fb, fa, SELMODE::VSEL_TENSOR_TENSOR_MODE, n);   // a <- b (a where b is 0)
        Adds(fb, q, 0.0f, n);                          // b <- r
    }}
    Cast(g, fa, RoundMode::CAST_RINT, n);
}}

// gcd(|x|, |y|) on int32 lanes, as torch.gcd: the binary (Stein) algorithm with no per-lane branch.
// A step halves an even operand (both when both are even, the common factor 2 kept in pow2), or
// replaces the larger of two odd operands by half their difference; gcd(x, y) = pow2 * gcd(a, b)
// holds throughout. While a and b are both non-zero the sum of their bit lengths drops every step,
// so {GCD_STEPS} steps finish any pair; every {GCD_CHECK_EVERY} steps the loop ends early once min(a, b) is 0 in
// every lane. Then gcd = max(a, b) * pow2. SMALL (16-bit data): Euclid on fp32 lanes instead.
template <bool SMALL>
__aicore__ inline void GcdInt32(const LocalTensor<int32_t>& g, const LocalTensor<int32_t>& x,
                                const LocalTensor<int32_t>& y, const LocalTensor<int32_t>& b,
                                const LocalTensor<int32_t>& pow2, const LocalTensor<int32_t>& aHalf,
                                const LocalTensor<int32_t>& bHalf, const LocalTensor<int32_t>& aOdd,
                                const LocalTensor<int32_t>& bOdd, const LocalTensor<int32_t>& diff,
                                const LocalTensor<int32_t>& t, const LocalTensor<uint8_t>& bits, uint32_t n)
{{
    const LocalTensor<int32_t>& a = g;
    AbsInt32(a, x, t, n);
    AbsInt32(b, y, t, n);
    if constexpr (SMALL) {{
        GcdEuclidF32(a, b, aHalf.ReinterpretCast<float>(), bHalf.ReinterpretCast<float>(), diff.ReinterpretCast<float>(),
                     t.ReinterpretCast<float>(), aOdd.ReinterpretCast<float>(), bits, n);
        return;
    }}
    Duplicate(pow2, 1, n);
    for (uint32_t step = 0; step < {GCD_STEPS}; ++step) {{
        if (step % {GCD_CHECK_EVERY} == 0 && step > 0) {{
            // done when min(a, b) == 0 in every lane (padding lanes included)
            Min(t, a, b, n);
            Cast(diff.ReinterpretCast<float>(), t, RoundMode::CAST_RINT, n);   // only zero matters
            ReduceMax(aHalf.ReinterpretCast<float>(), diff.ReinterpretCast<float>(), bHalf.ReinterpretCast<float>(), n, false);
            const int32_t id = static_cast<int32_t>(GetTPipePtr()->FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(id);
            WaitFlag<HardEvent::V_S>(id);
            if (aHalf.ReinterpretCast<float>().GetValue(0) == 0.0f) {{
                break;
            }}
        }}
        ShiftRight(aHalf.ReinterpretCast<uint32_t>(), a.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(1), n);
        ShiftRight(bHalf.ReinterpretCast<uint32_t>(), b.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(1), n);
        Muls(aOdd, aHalf, 2, n);
        Sub(aOdd, a, aOdd, n);                 // a & 1
        Muls(bOdd, bHalf, 2, n);
        Sub(bOdd, b, bOdd, n);                 // b & 1
        // pow2 doubles where both are even: pow2 += pow2 * (1 - aOdd) * (1 - bOdd)
        Add(t, aOdd, bOdd, n);
        Mul(diff, aOdd, bOdd, n);
        Sub(t, diff, t, n);
        Adds(t, t, 1, n);
        Mul(t, t, pow2, n);
        Add(pow2, pow2, t, n);
        // an even operand is halved: aHalf <- aOdd ? a : a / 2 (likewise b)
        Sub(t, a, aHalf, n);
        Mul(t, t, aOdd, n);
        Add(aHalf, aHalf, t, n);
        Sub(t, b, bHalf, n);
        Mul(t, t, bOdd, n);
        Add(bHalf, bHalf, t, n);
        // both odd: the larger becomes half the difference (aOdd <- a >= b, bOdd <- a < b)
        Mul(aOdd, aOdd, bOdd, n);
        Sub(diff, a, b, n);
        ShiftRight(bOdd.ReinterpretCast<uint32_t>(), diff.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(31), n);
        Mul(bOdd, bOdd, aOdd, n);
        Sub(aOdd, aOdd, bOdd, n);
        ShiftRight(t.ReinterpretCast<uint32_t>(), diff.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(1), n);
        Sub(t, t, aHalf, n);
        Mul(t, t, aOdd, n);
        Add(a, aHalf, t, n);                   // a <- aOdd ? (a - b) / 2 : aHalf
        Muls(diff, diff, -1, n);
        ShiftRight(t.ReinterpretCast<uint32_t>(), diff.ReinterpretCast<uint32_t>(), static_cast<uint32_t>(1), n);
        Sub(t, t, bHalf, n);
        Mul(t, t, bOdd, n);
        Add(b, bHalf, t, n);                   // b <- bOdd ? (b - a) / 2 : bHalf
    }}
    Max(a, a, b, n);
    Mul(g, a, pow2, n);
}}
"""


def helpers(used: set[str]) -> str:
    return GCD if "gcd" in used else ""


def gcd_call(dst: str, x: str, y: str, tmps: list[str], cnt: str, small: str) -> str:
    """`small`: C++ constant expression, true when the data are 16-bit or narrower."""
    return f"GcdInt32<{small}>({dst}, {x}, {y}, {', '.join(tmps[:GCD_TMPS])}, bits, {cnt});"
