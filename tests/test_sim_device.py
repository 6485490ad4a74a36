"""Device half of the sim backend: the clean-room AscendC API emulation.

Two small C++ programs are compiled once per session against the emulator headers:
`tests/sim_device/ops_main.cpp` runs one API on arrays from files (checked against numpy here)
and `tests/sim_device/rules_main.cpp` holds one scenario per rule, with `// EXPECT: <id>` on every
line that must be reported.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
INCLUDE = REPO / "copilot" / "backends" / "sim" / "include"
SRC = REPO / "tests" / "sim_device"
BUILD = REPO / "build" / "sim_device"

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")]

BF16 = ml_dtypes.bfloat16
NP = {"half": np.float16, "float": np.float32, "bfloat16": BF16, "int32": np.int32, "int16": np.int16,
      "int8": np.int8, "uint8": np.uint8, "int64": np.int64}


def _build(name: str) -> Path:
    """Compile tests/sim_device/<name>.cpp once per content hash (headers included)."""
    h = hashlib.sha256()
    for p in sorted(INCLUDE.rglob("*.h")) + [SRC / f"{name}.cpp"]:
        h.update(p.read_bytes())
    out = BUILD / f"{name}-{h.hexdigest()[:16]}"
    if not out.exists():
        BUILD.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        subprocess.run(["g++", "-std=c++20", "-O0", "-I", str(INCLUDE), str(SRC / f"{name}.cpp"), "-o", str(tmp)],
                       check=True, capture_output=True, text=True)
        tmp.replace(out)
    return out


@pytest.fixture(scope="session")
def ops_bin() -> Path:
    return _build("ops_main")


@pytest.fixture(scope="session")
def rules_bin() -> Path:
    return _build("rules_main")


def parse_diags(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


class Ops:
    """Runs ops_main on numpy arrays."""

    def __init__(self, binary: Path, tmp: Path):
        self.binary, self.tmp = binary, tmp
        self.diags: list[dict] = []

    def __call__(self, op: str, out: np.ndarray, in0: np.ndarray, in1: np.ndarray | None = None,
                 sel: np.ndarray | None = None, **kw) -> np.ndarray:
        args = [str(self.binary), f"op={op}"]
        for name, arr in (("in0", in0), ("in1", in1), ("sel", sel), ("out", out)):
            if arr is not None:
                path = self.tmp / f"{name}.bin"
                np.ascontiguousarray(arr).tofile(path)
                args.append(f"{name}={path}")
        args += [f"{k}={v}" for k, v in kw.items()]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        self.diags = parse_diags(r.stderr)
        assert r.returncode == 0, r.stderr
        return np.fromfile(self.tmp / "out.bin", dtype=out.dtype)


@pytest.fixture
def ops(ops_bin: Path, tmp_path: Path) -> Ops:
    return Ops(ops_bin, tmp_path)


def rand(dtype: str, n: int, seed: int, lo: float = -4, hi: float = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype in ("int32", "int16"):
        return rng.integers(-1000, 1000, n).astype(NP[dtype])
    return rng.uniform(lo, hi, n).astype(np.float32).astype(NP[dtype])


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16 if a.itemsize == 2 else np.uint32 if a.itemsize == 4 else np.uint8)


# ---------------------------------------------------------------- half / bfloat16_t storage types

def test_half_and_bf16_round_to_nearest_even_with_inf_nan_subnormals(ops: Ops):
    specials = [0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, -65520.0, 1e6, np.inf, -np.inf,
                2.0**-24, 2.0**-25, 2.0**-25 * 1.0000001, 3 * 2.0**-26, 2.0**-14, 2.0**-14 - 2.0**-25,
                1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 3.0e38, 3.4e38, 1e-40, -1e-45]
    rng = np.random.default_rng(1)
    rand_bits = rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32)
    vals = np.concatenate([np.array(specials, np.float32), rand_bits.view(np.float32)])
    vals = vals[~np.isnan(vals)]
    ops("fp", np.zeros(1, np.uint16), vals, out2=ops.tmp / "bf.bin", out3=ops.tmp / "hf.bin",
        out4=ops.tmp / "bff.bin")
    hb = np.fromfile(ops.tmp / "out.bin", np.uint16)
    bb = np.fromfile(ops.tmp / "bf.bin", np.uint16)
    np.testing.assert_array_equal(hb, vals.astype(np.float16).view(np.uint16))
    np.testing.assert_array_equal(bb, vals.astype(BF16).view(np.uint16))
    # every half / bf16 bit pattern widens to the exact float
    all16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    hf = np.fromfile(ops.tmp / "hf.bin", np.float32)
    bff = np.fromfile(ops.tmp / "bff.bin", np.float32)
    ref_h = all16.view(np.float16).astype(np.float32)
    ref_b = all16.view(BF16).astype(np.float32)
    nan = np.isnan(ref_h)
    np.testing.assert_array_equal(np.isnan(hf), nan)
    np.testing.assert_array_equal(hf[~nan].view(np.uint32), ref_h[~nan].view(np.uint32))
    nanb = np.isnan(ref_b)
    np.testing.assert_array_equal(np.isnan(bff), nanb)
    np.testing.assert_array_equal(bff[~nanb].view(np.uint32), ref_b[~nanb].view(np.uint32))


# ---------------------------------------------------------------- count-form vector APIs

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "max": np.maximum, "min": np.minimum}


# Div is a floating-point API: no integer cases
BINARY_CASES = [(op, dt) for op in sorted(BINARY) for dt in ("half", "float", "int32", "int16")
                if not (op == "div" and dt.startswith("int"))]


@pytest.mark.parametrize("op,dtype", BINARY_CASES)
def test_binary_count_form_rounds_in_element_type(ops: Ops, op: str, dtype: str):
    n = 512
    a, b = rand(dtype, n, 2), rand(dtype, n, 3)
    if op == "div":
        b[np.abs(b.astype(np.float32)) < 0.1] = NP[dtype](0.5)
    got = ops(op, np.zeros(n, NP[dtype]), a, b, dtype=dtype, n=n)
    if dtype.startswith("int"):
        ref = BINARY[op](a.astype(np.int64), b.astype(np.int64)).astype(NP[dtype])
    else:
        ref = BINARY[op](a.astype(np.float32), b.astype(np.float32)).astype(NP[dtype])
    np.testing.assert_array_equal(bits(got), bits(ref))
    assert ops.diags == []


def test_half_add_overflows_to_inf(ops: Ops):
    a = np.full(128, 60000, np.float16)
    got = ops("add", np.zeros(128, np.float16), a, a, dtype="half", n=128)
    assert np.isinf(got).all()


UNARY = {"exp": np.exp, "ln": np.log, "abs": np.abs, "sqrt": np.sqrt,
         "rsqrt": lambda x: 1 / np.sqrt(x), "reciprocal": lambda x: 1 / x, "relu": lambda x: np.maximum(x, 0)}


@pytest.mark.parametrize("dtype", ["half", "float"])
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_count_form(ops: Ops, op: str, dtype: str):
    n = 256
    lo = 0.05 if op in ("ln", "sqrt", "rsqrt", "reciprocal") else -3
    a = rand(dtype, n, 4, lo, 3)
    got = ops(op, np.zeros(n, NP[dtype]), a, dtype=dtype, n=n)
    ref = UNARY[op](a.astype(np.float64)).astype(NP[dtype])
    if dtype == "half":   # one rounding of a float32 result: at most one half ulp from the exact value
        assert np.max(np.abs(bits(got).astype(np.int32) - bits(ref).astype(np.int32))) <= 1
    else:
        np.testing.assert_allclose(got, ref, rtol=2e-7, atol=0)
    assert ops.diags == []


SCALAR = {"adds": lambda x, s: x + s, "muls": lambda x, s: x * s, "maxs": np.maximum, "mins": np.minimum,
          "leakyrelu": lambda x, s: np.where(x >= 0, x, x * s)}


@pytest.mark.parametrize("dtype", ["half", "float"])
@pytest.mark.parametrize("op", sorted(SCALAR))
def test_scalar_count_form(ops: Ops, op: str, dtype: str):
    n, s = 256, 0.3
    a = rand(dtype, n, 5)
    got = ops(op, np.zeros(n, NP[dtype]), a, dtype=dtype, n=n, scalar=s)
    sv = np.float32(NP[dtype](s))
    ref = SCALAR[op](a.astype(np.float32), sv).astype(NP[dtype])
    np.testing.assert_array_equal(bits(got), bits(ref))


def test_duplicate_fills_count_elements_only(ops: Ops):
    got = ops("duplicate", np.full(256, 7, np.float32), np.zeros(256, np.float32), dtype="float", n=100, scalar=2.5)
    assert (got[:100] == 2.5).all() and (got[100:] == 7).all()


# ---------------------------------------------------------------- Cast

def _neighbours(v: float, dt) -> tuple[float, float]:
    """Largest value of dt <= v and smallest >= v (exact, from dt's own grid)."""
    x = np.array(v, dt)
    xv = float(x.astype(np.float64))
    if xv == v:
        return xv, xv
    other = np.nextafter(x, np.array(np.inf if xv < v else -np.inf, dt)) if dt is not BF16 else None
    if dt is BF16:
        b = x.view(np.uint16).astype(np.int32)
        step = 1 if (xv < v) == (xv >= 0) else -1
        other = np.array(b + step, np.uint16).view(BF16)
    ov = float(np.asarray(other).astype(np.float64))
    return (xv, ov) if xv < v else (ov, xv)


def _round_ref(v: float, mode: str, dt, maxf: float) -> float:
    if math.isnan(v) or math.isinf(v):
        return v
    lo, hi = _neighbours(v, dt)
    if lo == hi:
        r = lo
    elif mode == "floor":
        r = lo
    elif mode == "ceil":
        r = hi
    elif mode == "trunc":
        r = lo if v > 0 else hi
    elif mode == "round":
        r = (hi if v > 0 else lo) if abs(v - lo) == abs(hi - v) else (lo if v - lo < hi - v else hi)
    elif mode == "odd":
        lo_odd = int(np.array(lo, dt).view(np.uint16)) & 1
        r = lo if lo_odd else hi
        if abs(lo) > abs(hi):
            r = hi if int(np.array(hi, dt).view(np.uint16)) & 1 else lo
    else:  # rint / none
        r = float(np.array(v, dt).astype(np.float64))
    return max(-maxf, min(maxf, r))


@pytest.mark.parametrize("mode", ["none", "rint", "floor", "ceil", "round", "trunc", "odd"])
def test_cast_float_to_half_every_round_mode(ops: Ops, mode: str):
    rng = np.random.default_rng(7)
    vals = np.concatenate([rng.uniform(-10, 10, 2000), rng.uniform(-1e-5, 1e-5, 500),
                           [0.5 + 2.0**-12, -(0.5 + 2.0**-12), 1 + 2.0**-11, 1 + 3 * 2.0**-11, 70000, -70000,
                            65504, np.inf, -np.inf]]).astype(np.float32)
    vals = np.resize(vals, 2560)
    got = ops("cast", np.zeros(vals.size, np.float16), vals, src="float", dst="half", mode=mode, n=vals.size)
    ref = np.array([_round_ref(float(v), mode, np.float16, 65504.0) for v in vals], np.float16)
    np.testing.assert_array_equal(bits(got), bits(ref))
    assert ops.diags == []


@pytest.mark.parametrize("mode", ["rint", "floor", "ceil", "round", "trunc"])
def test_cast_float_to_bf16_and_int32(ops: Ops, mode: str):
    rng = np.random.default_rng(8)
    vals = np.concatenate([rng.uniform(-100, 100, 1000), [2.5, -2.5, 3.5, 0.5, -0.5, 3e9, -3e9, 2**22 + 0.5]])
    vals = np.resize(vals.astype(np.float32), 1024)
    got = ops("cast", np.zeros(1024, BF16), vals, src="float", dst="bfloat16", mode=mode, n=1024)
    ref = np.array([_round_ref(float(v), mode, BF16, 3.3895313892515355e38) for v in vals], BF16)
    np.testing.assert_array_equal(bits(got), bits(ref))
    got_i = ops("cast", np.zeros(1024, np.int32), vals, src="float", dst="int32", mode=mode, n=1024)
    f = {"rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
         "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)}[mode]
    ref_i = np.clip(f(vals.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
    np.testing.assert_array_equal(got_i, ref_i)


def test_cast_widening_and_narrowing_pairs(ops: Ops):
    h = rand("half", 256, 9, -300, 300)
    np.testing.assert_array_equal(ops("cast", np.zeros(256, np.float32), h, src="half", dst="float", n=256),
                                  h.astype(np.float32))
    b = rand("bfloat16", 256, 10)
    np.testing.assert_array_equal(ops("cast", np.zeros(256, np.float32), b, src="bfloat16", dst="float", n=256),
                                  b.astype(np.float32))
    i8 = ops("cast", np.zeros(256, np.int8), h, src="half", dst="int8", mode="trunc", n=256)
    np.testing.assert_array_equal(i8, np.clip(np.trunc(h.astype(np.float64)), -128, 127).astype(np.int8))
    u8 = ops("cast", np.zeros(256, np.uint8), h, src="half", dst="uint8", mode="rint", n=256)
    np.testing.assert_array_equal(u8, np.clip(np.rint(h.astype(np.float64)), 0, 255).astype(np.uint8))
    i32 = np.array([1, -7, 2**24 + 1, -(2**31)] * 64, np.int32)
    np.testing.assert_array_equal(ops("cast", np.zeros(256, np.float32), i32, src="int32", dst="float", n=256),
                                  i32.astype(np.float32))
    assert ops.diags == []


def test_cast_rejects_pair_not_in_arch_table(ops: Ops):
    h = rand("half", 256, 11)
    ops("cast", np.zeros(256, BF16), h, src="half", dst="bfloat16", mode="rint", n=256)
    assert [d["id"] for d in ops.diags] == ["L2.DTYPE_UNSUPPORTED"]
    ops("cast", np.zeros(256, BF16), h, src="half", dst="bfloat16", mode="rint", n=256, arch=3510)
    assert ops.diags == []


# ---------------------------------------------------------------- reductions, compare, select

@pytest.mark.parametrize("dtype", ["half", "float"])
def test_reduce_sum_max_min_count_form(ops: Ops, dtype: str):
    n = 1000
    a = rand(dtype, n, 12, -1, 1)
    a[700] = NP[dtype](5)
    a[800] = NP[dtype](5)   # tie: the first index wins
    a[10] = NP[dtype](-6)
    s = ops("reduce_sum", np.zeros(16, NP[dtype]), a, dtype=dtype, n=n)
    tol = 0.05 if dtype == "half" else 1e-4
    assert abs(float(s[0]) - float(a.astype(np.float64).sum())) < tol
    mx = ops("reduce_max", np.zeros(16, NP[dtype]), a, dtype=dtype, n=n, calindex=1)
    assert float(mx[0]) == 5 and int(bits(mx)[1]) == 700
    mn = ops("reduce_min", np.zeros(16, NP[dtype]), a, dtype=dtype, n=n, calindex=1)
    assert float(mn[0]) == -6 and int(bits(mn)[1]) == 10
    assert ops.diags == []


@pytest.mark.parametrize("cmp", ["lt", "gt", "eq", "le", "ge", "ne"])
def test_compare_bitmask_and_select(ops: Ops, cmp: str):
    n = 128
    a, b = rand("float", n, 13), rand("float", n, 14)
    b[::5] = a[::5]
    got = ops("compare", np.zeros(32, np.uint8), a, b, dtype="float", n=n, cmp=cmp)
    f = {"lt": np.less, "gt": np.greater, "eq": np.equal, "le": np.less_equal, "ge": np.greater_equal,
         "ne": np.not_equal}[cmp]
    ref = np.packbits(f(a, b), bitorder="little")
    np.testing.assert_array_equal(got[: n // 8], ref)
    sel = ops("select", np.zeros(n, np.float32), a, b, sel=np.resize(ref, 32), dtype="float", n=n, selmode=2)
    np.testing.assert_array_equal(sel, np.where(f(a, b), a, b))
    sel_s = ops("select", np.zeros(n, np.float32), a, b, sel=np.resize(ref, 32), dtype="float", n=n, selmode=1,
                scalar=9)
    np.testing.assert_array_equal(sel_s, np.where(f(a, b), a, np.float32(9)))
    cs = ops("compares", np.zeros(32, np.uint8), a, dtype="float", n=n, cmp=cmp, scalar=0.5)
    np.testing.assert_array_equal(cs[: n // 8], np.packbits(f(a, np.float32(0.5)), bitorder="little"))
    assert ops.diags == []


# ---------------------------------------------------------------- DataCopy / DataCopyPad

def test_datacopypad_gm_to_ub_pads_each_row_to_32_bytes(ops: Ops):
    gm = np.arange(1, 65, dtype=np.float16)
    # 3 rows of 5 halfs (10 B), GM gap 6 B between rows, UB rows padded to 32 B, 1 block gap on UB
    got = ops("pad_in", np.full(256, -1, np.float16), gm, dtype="half", bc=3, bl=10, ss=6, ds=1,
              ispad=1, lp=0, rp=2, scalar=0)
    rows = got.reshape(-1, 16)
    for r in range(3):
        base = r * 8   # 5 data + 3 gap halfs in GM
        np.testing.assert_array_equal(rows[2 * r, :5], gm[base:base + 5])
        assert (rows[2 * r, 5:] == 0).all()          # padded with paddingValue to the 32 B row end
        assert (rows[2 * r + 1] == -1).all()         # dstStride: one untouched 32 B block
    legacy = ops("pad_in", np.full(256, -1, np.float16), gm, dtype="half", bc=3, bl=10, ss=6, ds=1,
                 ispad=1, lp=0, rp=2, scalar=0, legacy=1)
    np.testing.assert_array_equal(legacy, got)
    left = ops("pad_in", np.full(64, -1, np.float16), gm, dtype="half", bc=1, bl=10, ss=0, ds=0, ispad=1,
               lp=2, rp=0, scalar=7)
    np.testing.assert_array_equal(left[:16], [7, 7, 1, 2, 3, 4, 5] + [7] * 9)
    assert ops.diags == []


def test_datacopypad_ub_to_gm_strides(ops: Ops):
    ub = np.arange(64, dtype=np.float32)
    # 2 rows of 3 floats (12 B); UB rows start every 32 B (+1 block srcStride), GM gap 4 B
    got = ops("pad_out", np.zeros(16, np.float32), ub, dtype="float", bc=2, bl=12, ss=1, ds=4)
    np.testing.assert_array_equal(got[:8], [0, 1, 2, 0, 16, 17, 18, 0])
    assert ops.diags == []


def test_datacopy_params_form_blocks_and_gaps(ops: Ops):
    gm = np.arange(128, dtype=np.float32)
    got = ops("copy_params_in", np.full(64, -1, np.float32), gm, dtype="float", bc=2, bl=1, ss=1, ds=2)
    np.testing.assert_array_equal(got[:8], gm[:8])
    assert (got[8:24] == -1).all()
    np.testing.assert_array_equal(got[24:32], gm[16:24])
    out = ops("copy_params_out", np.zeros(64, np.float32), gm[:64], dtype="float", bc=2, bl=1, ss=1, ds=0)
    np.testing.assert_array_equal(out[:16], np.concatenate([gm[:8], gm[16:24]]))


def test_datacopy_truncates_to_32_bytes(ops: Ops):
    gm = np.arange(1, 65, dtype=np.float16)
    got = ops("copy_params_in", np.zeros(64, np.float16), gm, dtype="half", bc=0, bl=0, ss=0, ds=0)
    assert (got == 0).all()


# ---------------------------------------------------------------- mask / repeat forms

def lanes_ref(repeat: int, nlanes: int, epb: int, blk: int, rep: int, active) -> list[tuple[int, int]]:
    """(lane id, element index) pairs of a strided mask-form call."""
    out = []
    for r in range(repeat):
        for e in range(nlanes):
            if active(r, e):
                out.append((r * nlanes + e, r * rep * epb + (e // epb) * blk * epb + e % epb))
    return out


def test_binary_mask_form_continuous_mask_and_strides(ops: Ops):
    a, b = rand("half", 1024, 15), rand("half", 1024, 16)
    init = np.full(1024, 9, np.float16)
    got = ops("add", init, a, b, dtype="half", mask=100, repeat=3, db=1, s0b=2, s1b=1, dr=8, s0r=16, s1r=8)
    ref = init.copy()
    for r in range(3):
        for e in range(100):
            blk, j = divmod(e, 16)
            d = r * 8 * 16 + blk * 16 + j
            i0 = r * 16 * 16 + blk * 2 * 16 + j
            i1 = r * 8 * 16 + blk * 16 + j
            ref[d] = np.float16(np.float32(a[i0]) + np.float32(b[i1]))
    np.testing.assert_array_equal(bits(got), bits(ref))
    assert ops.diags == []


def test_binary_mask_form_bit_mask(ops: Ops):
    a, b = rand("half", 256, 17), rand("half", 256, 18)
    lo, hi = 0xF0F0F0F0F0F0F0F0, 0x8000000000000001
    got = ops("mul", np.zeros(256, np.float16), a, b, dtype="half", mask_lo=lo, mask_hi=hi, repeat=2)
    ref = np.zeros(256, np.float16)
    for r in range(2):
        for e in range(128):
            if (lo >> e & 1) if e < 64 else (hi >> (e - 64) & 1):
                k = r * 128 + e
                ref[k] = np.float16(np.float32(a[k]) * np.float32(b[k]))
    np.testing.assert_array_equal(bits(got), bits(ref))


def test_unary_and_scalar_mask_forms(ops: Ops):
    a = rand("float", 256, 19, 0.1, 2)
    got = ops("sqrt", np.zeros(256, np.float32), a, dtype="float", mask=40, repeat=2, db=1, s0b=1, dr=8, s0r=8)
    ref = np.zeros(256, np.float32)
    for r in range(2):
        ref[r * 64:r * 64 + 40] = np.sqrt(a[r * 64:r * 64 + 40])
    np.testing.assert_allclose(got, ref, rtol=2e-7)
    got = ops("adds", np.zeros(256, np.float32), a, dtype="float", mask=64, repeat=2, scalar=1, db=1, s0b=1,
              dr=8, s0r=0)
    np.testing.assert_array_equal(got[:128], np.tile(a[:64] + 1, 2))
    dup = ops("duplicate", np.zeros(256, np.float32), a, dtype="float", mask=8, repeat=4, scalar=3, db=2, dr=8)
    ref = np.zeros(256, np.float32)
    for r in range(4):
        ref[r * 64:r * 64 + 8] = 3
    np.testing.assert_array_equal(dup, ref)


def test_reduce_mask_forms_old_and_new_names(ops: Ops):
    a = rand("float", 512, 20, -1, 1)
    whole = ops("whole_sum", np.zeros(64, np.float32), a, dtype="float", mask=64, repeat=8, dr=1, s0b=1, s0r=8)
    np.testing.assert_allclose(whole[:8], a.reshape(8, 64).sum(axis=1), rtol=1e-5, atol=1e-6)
    mx = ops("whole_max", np.zeros(64, np.float32), a, dtype="float", mask=64, repeat=8, dr=1, s0b=1, s0r=8)
    np.testing.assert_array_equal(mx[0:16:2], a.reshape(8, 64).max(axis=1))
    np.testing.assert_array_equal(bits(mx)[1:16:2], a.reshape(8, 64).argmax(axis=1))
    new = ops("rrepeat_max", np.zeros(64, np.float32), a, dtype="float", mask=64, repeat=8, dr=1, s0b=1, s0r=8)
    np.testing.assert_array_equal(new, mx)
    blk = ops("block_sum", np.zeros(128, np.float32), a, dtype="float", mask=64, repeat=2, dr=1, s0b=1, s0r=8)
    np.testing.assert_allclose(blk[:16], a[:128].reshape(16, 8).sum(axis=1), rtol=1e-5, atol=1e-6)
    blk_new = ops("rdblock_sum", np.zeros(128, np.float32), a, dtype="float", mask=64, repeat=2, dr=1, s0b=1,
                  s0r=8)
    np.testing.assert_array_equal(blk_new, blk)
    rs = ops("reduce_sum", np.zeros(8, np.float32), a, dtype="float", mask=64, repeat=8, s0r=8)
    assert abs(float(rs[0]) - float(a.sum())) < 1e-4
    assert ops.diags == []


# ---------------------------------------------------------------- rules, one scenario each

def _scenarios() -> dict[str, list[tuple[str, int]]]:
    lines = (SRC / "rules_main.cpp").read_text().splitlines()
    out: dict[str, list[tuple[str, int]]] = {}
    current = None
    for no, text in enumerate(lines, start=1):
        m = re.search(r"// SCENARIO: (\w+)", text)
        if m:
            current = m.group(1)
            out[current] = []
            continue
        m = re.search(r"// EXPECT: ([\w.]+)", text)
        if m and current:
            out[current].append((m.group(1), no))
    out.pop("end", None)
    return out


SCENARIOS = _scenarios()
FATAL = {"deque_empty", "alloc_beyond", "gm_bounds", "gm_bounds_value", "ub_bounds", "ub_bounds_value",
         "sync_wait_without_set"}
ARCH = {"dtype_3510": 3510, "datacopypad_310p": 2002}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_rule_reported_with_id_and_candidate_line(rules_bin: Path, tmp_path: Path, scenario: str):
    diag = tmp_path / "diag.jsonl"
    r = subprocess.run([str(rules_bin), scenario, str(ARCH.get(scenario, 2201)), str(diag)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == (86 if scenario in FATAL else 0), r.stdout + r.stderr
    found = parse_diags(diag.read_text())
    assert sorted((d["id"], d["line"]) for d in found) == sorted(SCENARIOS[scenario])
    for d in found:
        assert d["block"] == 0 and d["api"] and d["message"]
        assert d["severity"] == ("warning" if d["id"] == "L2.SYNC_MISSING" else "error")
        assert d.get("fatal", False) == (scenario in FATAL)


def test_every_rule_id_has_a_scenario():
    ids = {i for exp in SCENARIOS.values() for i, _ in exp}
    assert ids >= {"L2.UB_CAPACITY", "L2.BUFFER_COUNT", "L2.ALIGN_32B", "L2.DATACOPY_32B", "L2.REPEAT_LIMIT",
                   "L2.MASK_RANGE", "L2.DTYPE_UNSUPPORTED", "L2.QUEUE_PROTOCOL", "L2.GM_BOUNDS", "L2.UB_BOUNDS",
                   "L2.SYNC_PAIRING", "L2.SYNC_MISSING", "L2.TMP_BUFFER", "L4.API_UNKNOWN"}
    assert SCENARIOS["clean_double_buffer"] == []


def test_cost_counters_record_pipe_api_dtype(rules_bin: Path, tmp_path: Path):
    r = subprocess.run([str(rules_bin), "clean_double_buffer", "2201", str(tmp_path / "d.jsonl")],
                       capture_output=True, text=True, timeout=60)
    counters = json.loads(r.stdout.strip().splitlines()[-1])["counters"]
    by = {(c["pipe"], c["api"]): c for c in counters}
    assert by[("MTE2", "DataCopy")]["calls"] == 8 and by[("MTE2", "DataCopy")]["bytes"] == 8 * 512
    assert by[("MTE3", "DataCopy")]["calls"] == 4
    assert by[("V", "Add")]["elements"] == 1024 and by[("V", "Add")]["dtype"] == "half"


def test_rule_kernels_break_one_rule_each():
    """tests/kernels/rules: one candidate per constraint id, its offending line marked once."""
    seen = {}
    for path in sorted((REPO / "tests" / "kernels" / "rules").glob("*.cpp")):
        marks = re.findall(r"// EXPECT: ([\w.]+)", path.read_text())
        assert len(marks) == 1, path.name
        assert marks[0] not in seen, (path.name, seen.get(marks[0]))
        seen[marks[0]] = path.name
    rule_ids = {i for exp in SCENARIOS.values() for i, _ in exp} - {"L2.CMP_COUNT_256B"}
    assert set(seen) == rule_ids


def test_mask_register_forms_use_the_register(rules_bin: Path, tmp_path: Path):
    """isSetMask=false: a normal-mode register of 8 lanes; counter mode: 100 elements."""
    r = subprocess.run([str(rules_bin), "clean_idioms", "2201", str(tmp_path / "d.jsonl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "first=128.000000 h=5.000000 block=0" in r.stdout   # AscendC::printf reaches stdout
    counters = json.loads(r.stdout.strip().splitlines()[-1])["counters"]
    by = {(c["pipe"], c["api"]): c for c in counters}
    assert by[("V", "Mul")]["elements"] == 8
    assert by[("V", "Add")]["elements"] == 100
