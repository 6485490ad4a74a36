"""TransDataTo5HD (the 16-datablock lane gather behind NCHW -> NC1HWC0), the TransData library
(NCDHW <-> NDC1HWC0, NCDHW <-> FRACTAL_Z_3D), CastDequant, BilinearInterpolation and SoftmaxFlashV3
of the emulator, checked against numpy (issue 15).

`tests/sim_device/layout_ext_main.cpp` runs one call on a UB arena; rule scenarios are in
`tests/sim_device/layout_ext_rules.cpp` (`// EXPECT: <id>` lines, nothing else may be reported).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.test_sim_api_cov import Arena
from tests.test_sim_device import SRC, _build, parse_diags
from tests.test_sim_sort_hl import _scenarios

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

RULES_SRC = "layout_ext_rules.cpp"
DTYPES = {"half": np.float16, "float": np.float32, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
          "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32}


@pytest.fixture(scope="module")
def layout_bin() -> Path:
    return _build("layout_ext_main")


@pytest.fixture(scope="module")
def layout_rules_bin() -> Path:
    return _build("layout_ext_rules")


@pytest.fixture
def arena(layout_bin: Path, tmp_path: Path) -> Arena:
    return Arena(layout_bin, tmp_path)


def _values(dt: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt in ("half", "float"):
        v = rng.standard_normal(n).astype(DTYPES[dt])
        v[:4] = [np.inf, -np.inf, np.nan, -0.0]
        return v
    info = np.iinfo(DTYPES[dt])
    v = rng.integers(info.min, info.max, n, endpoint=True).astype(DTYPES[dt])
    v[:2] = [info.min, info.max]
    return v


def _blocks(arena: Arena, base: int, step: int, dt: str, lanes: int) -> np.ndarray:
    return np.stack([arena.get(base + i * step, DTYPES[dt], lanes) for i in range(16)])


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.tobytes() == b.tobytes()      # bit for bit: NaN payloads and -0.0 included


# ---------------------------------------------------------------- TransDataTo5HD

@pytest.mark.parametrize("form", ["tensor", "addr", "addrtensor"])
@pytest.mark.parametrize("dt", ["half", "int16", "uint16"])
def test_16_bit_lists_transpose_sixteen_blocks(arena: Arena, form: str, dt: str):
    src = _values(dt, 16 * 16 * 4, 1).reshape(16, 64)       # list entry i: block i of a 128-byte row
    for i in range(16):
        arena.put(i * 128, src[i])
    arena.run("TransDataTo5HD", dt=dt, form=form, o0=0, sblk=128, od=8192, dblk=64, oa=16384)
    got = _blocks(arena, 8192, 64, dt, 16)
    assert _same(got, np.ascontiguousarray(src[:, :16].T))
    assert not arena.get(8192 + 32, np.uint8, 32).any()   # only the first 32 bytes of each dst entry


@pytest.mark.parametrize("dt", ["float", "int32", "uint32"])
def test_32_bit_lane_j_fills_dst_blocks_2j_and_2j_plus_1(arena: Arena, dt: str):
    src = _values(dt, 16 * 8, 2).reshape(16, 8)
    arena.put(0, src)
    arena.run("TransDataTo5HD", dt=dt, o0=0, sblk=32, od=4096, dblk=32)
    got = _blocks(arena, 4096, 32, dt, 8)
    want = np.empty((16, 8), DTYPES[dt])
    for j in range(8):
        want[2 * j], want[2 * j + 1] = src[:8, j], src[8:, j]
    assert _same(got, want)


@pytest.mark.parametrize("src_high,dst_high", [(0, 0), (1, 1), (1, 0), (0, 1)])
@pytest.mark.parametrize("dt", ["int8", "uint8"])
def test_8_bit_reads_and_writes_the_chosen_half_blocks(arena: Arena, dt: str, src_high: int, dst_high: int):
    src = _values(dt, 16 * 32, 3).reshape(16, 32)
    arena.put(0, src)
    keep = np.full((16, 32), 7, DTYPES[dt])
    arena.put(4096, keep)
    arena.run("TransDataTo5HD", dt=dt, o0=0, sblk=32, od=4096, dblk=32, sh=src_high, dh=dst_high)
    got = _blocks(arena, 4096, 32, dt, 32)
    want = keep.copy()
    cols = slice(16, 32) if dst_high else slice(0, 16)
    want[:, cols] = src[:, (16 if src_high else 0):(32 if src_high else 16)].T
    assert _same(got, want)


def test_the_documented_int8_example_high_halves(arena: Arena):
    src = np.array([[(i % 4) * 32 + k for k in range(32)] for i in range(16)], np.int8)
    arena.put(0, src)
    arena.run("TransDataTo5HD", dt="int8", o0=0, sblk=32, od=4096, dblk=32, sh=1, dh=1)
    got = _blocks(arena, 4096, 32, "int8", 32)
    assert not got[:, :16].any()
    assert list(got[0, 16:20]) == [16, 48, 80, 112] and list(got[15, 16:20]) == [31, 63, 95, 127]


def test_repeats_step_every_address_by_the_rep_strides(arena: Arena):
    reps, srep, drep = 3, 16, 20                                   # strides in 32-byte datablocks
    src = _values("half", 16 * 16 * srep * reps, 4)
    arena.put(0, src)
    arena.run("TransDataTo5HD", dt="half", o0=0, sblk=32, od=32768, dblk=32, repeat=reps, srep=srep, drep=drep)
    for r in range(reps):
        s = _blocks(arena, r * srep * 32, 32, "half", 16)
        d = _blocks(arena, 32768 + r * drep * 32, 32, "half", 16)
        assert _same(d, np.ascontiguousarray(s.T)), r


def test_one_repeat_starts_one_rep_stride_in_as_documented(arena: Arena):
    src = _values("half", 16 * 16 * 3, 5)
    arena.put(0, src)
    arena.run("TransDataTo5HD", dt="half", o0=0, sblk=32, od=16384, dblk=32, repeat=1, srep=16, drep=16)
    assert not arena.get(16384, np.uint8, 512).any()               # the list addresses themselves: untouched
    s = _blocks(arena, 512, 32, "half", 16)
    assert _same(_blocks(arena, 16384 + 512, 32, "half", 16), np.ascontiguousarray(s.T))
    arena.run("TransDataTo5HD", dt="half", o0=0, sblk=32, od=24576, dblk=32, repeat=0, srep=0, drep=0)
    assert not arena.get(24576, np.uint8, 512).any()               # repeatTimes 0: nothing


def test_nchw_to_nc1hwc0_by_hw_planes(arena: Arena):
    """The documented use: srcList[i] = start of channel i's HW plane; repeat over HW / 16."""
    c, hw = 16, 64
    x = _values("half", c * hw, 6).reshape(c, hw)
    arena.put(0, x)
    arena.run("TransDataTo5HD", dt="half", o0=0, sblk=hw * 2, od=8192, dblk=32, repeat=hw // 16, srep=1, drep=16)
    got = arena.get(8192, np.float16, hw * c).reshape(hw, c)       # [H*W, C0]
    assert _same(got, np.ascontiguousarray(x.T))


def test_the_instruction_is_costed_on_the_vector_pipe(arena: Arena):
    arena.put(0, _values("half", 16 * 16 * 2, 7))
    arena.run("TransDataTo5HD", dt="half", o0=0, sblk=32, od=8192, dblk=32, repeat=2, srep=16, drep=16)
    rows = [c for c in arena.counters() if c["api"] == "TransDataTo5HD"]
    assert rows == [{"pipe": "V", "api": "TransDataTo5HD", "dtype": "half", "calls": 1, "elements": 512, "bytes": 2048}]


# ---------------------------------------------------------------- TransData

def _ncdhw_padded(x: np.ndarray) -> np.ndarray:
    n, c, d, h, w = x.shape
    hwp = -(-h * w // 16) * 16
    out = np.zeros((n, c, d, hwp), x.dtype)
    out[..., :h * w] = x.reshape(n, c, d, h * w)
    return out


def _to_ndc1hwc0(x: np.ndarray) -> np.ndarray:
    n, c, d, h, w = x.shape
    c1 = -(-c // 16)
    pad = np.zeros((n, c1 * 16, d, h, w), x.dtype)
    pad[:, :c] = x
    return pad.reshape(n, c1, 16, d, h, w).transpose(0, 3, 1, 4, 5, 2)


def _to_fractal_z_3d(x: np.ndarray) -> np.ndarray:
    n, c, d, h, w = x.shape
    c1, n1 = -(-c // 16), -(-n // 16)
    pad = np.zeros((n1 * 16, c1 * 16, d, h, w), x.dtype)
    pad[:n, :c] = x
    return pad.reshape(n1, 16, c1, 16, d, h, w).transpose(4, 2, 5, 6, 0, 1, 3)


SHAPES = [(1, 16, 2, 4, 4), (2, 20, 1, 3, 5), (17, 3, 2, 1, 7)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["ndc", "fz"])
@pytest.mark.parametrize("dt", ["half", "int16", "uint16"])
def test_trans_data_forward_and_back(layout_bin: Path, tmp_path: Path, shape, mode: str, dt: str):
    n, c, d, h, w = shape
    x = _values(dt, int(np.prod(shape)), 8).reshape(shape)
    want = _to_ndc1hwc0(x) if mode == "ndc" else _to_fractal_z_3d(x)
    padded = _ncdhw_padded(x)
    a = Arena(layout_bin, tmp_path)
    a.put(0, padded)
    a.run("TransData", dt=dt, mode=mode, n=n, c=c, d=d, h=h, w=w, o0=0, od=16384, ot=32768, st=16384)
    assert _same(a.get(16384, DTYPES[dt], want.size).reshape(want.shape), np.ascontiguousarray(want))
    b = Arena(layout_bin, tmp_path)
    b.put(0, want)
    b.buf[16384:32768] = 0xAB                                      # the pad lanes are written (zeros)
    b.run("TransData", dt=dt, mode=mode, back=1, n=n, c=c, d=d, h=h, w=w, o0=0, od=16384)
    assert _same(b.get(16384, DTYPES[dt], padded.size).reshape(padded.shape), padded)


def test_trans_data_bfloat16_moves_the_bits(layout_bin: Path, tmp_path: Path):
    shape = (1, 16, 1, 2, 8)
    bits = np.arange(256, dtype=np.uint16).reshape(shape) * 257
    a = Arena(layout_bin, tmp_path)
    a.put(0, _ncdhw_padded(bits))
    a.run("TransData", dt="bf16", mode="ndc", n=1, c=16, d=1, h=2, w=8, o0=0, od=8192)
    want = _to_ndc1hwc0(bits)
    assert _same(a.get(8192, np.uint16, want.size).reshape(want.shape), np.ascontiguousarray(want))


def test_trans_data_host_minimum_passes_and_a_block_less_fails(layout_bin: Path, tmp_path: Path):
    out = subprocess.run([str(layout_bin), "op=host", "n=2", "c=20", "d=1", "h=3", "w=5"], capture_output=True,
                         text=True, timeout=60).stdout
    got = dict(m.groups() for m in re.finditer(r"(\w+)=(\d+)", out))
    assert got["ok"] == "1" and got["max"] == got["min"]
    need = int(got["min"])
    assert need == 2 * 1 * 2 * 15 * 16 * 2                        # the NDC1HWC0 side, the larger one
    x = _values("half", 2 * 20 * 15, 9).reshape(2, 20, 1, 3, 5)
    a = Arena(layout_bin, tmp_path)
    a.put(0, _ncdhw_padded(x))
    a.run("TransData", dt="half", mode="ndc", n=2, c=20, d=1, h=3, w=5, o0=0, od=8192, ot=16384, st=need)
    a.run("TransData", expect_ok=False, dt="half", mode="ndc", n=2, c=20, d=1, h=3, w=5, o0=0, od=8192, ot=16384,
          st=need - 32)
    assert [d["id"] for d in a.diags] == ["L2.TMP_BUFFER"]
    bad = subprocess.run([str(layout_bin), "op=host", "n=2", "c=20", "d=1", "h=3", "w=5", "c0=8"], capture_output=True,
                         text=True, timeout=60).stdout
    assert "ok=0" in bad


def test_trans_data_costs_two_passes_of_the_larger_side(arena: Arena):
    arena.put(0, _values("half", 16 * 16 * 16, 10))
    arena.run("TransData", dt="half", mode="fz", n=16, c=16, d=1, h=4, w=4, o0=0, od=16384)
    rows = [c for c in arena.counters() if c["pipe"] == "V"]
    assert rows == [{"pipe": "V", "api": "TransDataTo5HD", "dtype": "half", "calls": 1, "elements": 8192,
                     "bytes": 16384}]


# ---------------------------------------------------------------- CastDequant

def _s9(v: int) -> int:
    x = v & 0x1FF
    return x - 0x200 if x & 0x100 else x


def _quant(v: np.ndarray, scale, offset, np_dt) -> np.ndarray:
    x = v.astype(np.float64) * np.float64(np.float32(scale)) + offset
    info = np.iinfo(np_dt)
    return np.clip(np.rint(x), info.min, info.max).astype(np_dt)


def _int16_edges(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).integers(-32768, 32767, n, endpoint=True).astype(np.int16)
    v[:8] = [-32768, 32767, 0, 1, -1, 5, 7, -5]         # with scale 0.5: ties 2.5, 3.5, -2.5 round to even
    return v


@pytest.mark.parametrize("half_block", [1, 0])
@pytest.mark.parametrize("dt,sign", [("int8", 1), ("uint8", 0)])
def test_cast_dequant_int16_to_8_bit_fills_one_half_of_each_block(arena: Arena, dt: str, sign: int, half_block: int):
    n, np_dt = 256, DTYPES[dt]
    v = _int16_edges(n, 11)
    arena.put(0, v)
    arena.put(4096, np.full(2 * n, 0x5A, np.uint8))
    arena.run("CastDequant", dt=dt, st="int16", n=n, scale=0.5, offset=300, sign=sign, vec=0, half=half_block,
              o0=0, od=4096)
    got = arena.get(4096, np_dt, 2 * n).reshape(n // 16, 32)
    want = _quant(v, 0.5, _s9(300), np_dt).reshape(n // 16, 16)
    lo, hi = (slice(16, 32), slice(0, 16)) if half_block else (slice(0, 16), slice(16, 32))
    assert _same(got[:, lo], want)
    assert (got[:, hi].view(np.uint8) == 0x5A).all()


def test_cast_dequant_vector_mode_cycles_the_16_parameter_sets(arena: Arena):
    n = 128
    v = _int16_edges(n, 12)
    arena.put(0, v)
    arena.run("CastDequant", dt="int8", st="int16", n=n, scale=0.25, dscale=0.125, offset=-20, sign=1, vec=1,
              o0=0, od=4096, ov=8192)
    g = np.arange(n) % 16
    x = v.astype(np.float64) * (np.float32(0.25) + g * np.float32(0.125)).astype(np.float32) + (-20 + g)
    want = np.clip(np.rint(x), -128, 127).astype(np.int8).reshape(n // 16, 16)
    assert _same(arena.get(4096, np.int8, 2 * n).reshape(n // 16, 32)[:, 16:], want)
    words = arena.get(8192, np.uint64, 16)
    assert _same((words & 0xFFFFFFFF).astype(np.uint32).view(np.float32),
                 (np.float32(0.25) + np.arange(16) * np.float32(0.125)).astype(np.float32))


def test_cast_dequant_mask_forms_follow_the_lanes_and_strides(arena: Arena):
    v = _int16_edges(512, 13)
    arena.put(0, v)
    arena.put(4096, np.zeros(4096, np.uint8))
    m0 = 0x00000000FFFF00FF
    arena.run("CastDequant", dt="int8", st="int16", form="bit", m0=m0, m1=1 << 63, repeat=2, srep=16, drep=8,
              scale=1.0, offset=0, sign=1, vec=0, o0=0, od=4096)
    got = arena.get(4096, np.int8, 2 * 256).reshape(16, 32)[:, 16:].reshape(2, 128)
    want = np.zeros((2, 128), np.int8)
    lanes = [e for e in range(128) if (e < 64 and (m0 >> e) & 1) or e == 127]
    for r in range(2):
        for e in lanes:
            want[r, e] = np.clip(v[r * 256 + e], -128, 127)
    assert _same(got, want)
    arena.run("CastDequant", dt="uint8", st="int16", form="cont", mask=40, repeat=1, scale=1.0, offset=0, sign=0,
              vec=0, o0=0, od=12288)
    got = arena.get(12288, np.uint8, 96).reshape(3, 32)[:, 16:].ravel()[:40]
    assert _same(got, np.clip(v[:40], 0, 255).astype(np.uint8))


def test_cast_dequant_int32_to_half_scales_once(arena: Arena):
    v = np.random.default_rng(14).integers(-2 ** 31, 2 ** 31 - 1, 256, endpoint=True).astype(np.int32)
    v[:6] = [0, 1, -1, 2049, 2 ** 31 - 1, -2 ** 31]
    arena.put(0, v)
    arena.run("CastDequant", dt="half", st="int32", n=256, scale=0.0001, o0=0, od=4096)
    scale = np.float64(np.float16(0.0001))
    want = (v.astype(np.float64) * scale)
    want = np.clip(want, -65504, 65504).astype(np.float16)       # finite overflow saturates (Cast's rule)
    assert _same(arena.get(4096, np.float16, 256), want)


def test_cast_dequant_is_costed_on_the_vector_pipe(arena: Arena):
    arena.put(0, _int16_edges(256, 15))
    arena.run("CastDequant", dt="int8", st="int16", n=256, scale=1.0, sign=1, vec=0, o0=0, od=4096)
    assert [c for c in arena.counters() if c["api"] == "CastDequant"] == [
        {"pipe": "V", "api": "CastDequant", "dtype": "int16_t", "calls": 1, "elements": 256, "bytes": 1024}]


# ---------------------------------------------------------------- BilinearInterpolation

def _bilinear(src0, offsets, src1, h, v, mode, blk, vro, lanes, dst):
    out = dst.copy()
    for vi in range(v):
        acc = np.zeros((8, 16), np.float16)
        for hi in range(h):
            k = vi * h + hi
            for b in range(8):
                block = src0[offsets[8 * k + b] // 2:offsets[8 * k + b] // 2 + 16]
                w = src1[8 * k + b] if mode else src1[k]
                p = (block.astype(np.float32) * np.float32(w)).astype(np.float16)
                acc[b] = p if hi == 0 else (acc[b].astype(np.float32) + p.astype(np.float32)).astype(np.float16)
        for b in range(8):
            for e in range(16):
                if lanes[b * 16 + e]:
                    out[vi * vro + b * blk * 16 + e] = acc[b, e]
    return out


def _run_bilinear(arena: Arena, src0, offsets, src1, **kw) -> np.ndarray:
    arena.put(0, src0)
    arena.put(8192, offsets.astype(np.uint32))
    arena.put(12288, src1)
    arena.put(16384, np.full(8192, -7, np.float16))
    arena.run("BilinearInterpolation", dt="half", o0=0, n0=src0.size, oo=8192, o1=12288, n1=src1.size, od=16384,
              ot=32768, st=src0.size * 32 + src1.size * 32, **kw)
    return arena.get(16384, np.float16, 8192)


def test_bilinear_interpolation_matches_the_documented_example(layout_bin: Path, tmp_path: Path):
    a = Arena(layout_bin, tmp_path, size=128 * 1024)
    src0 = np.arange(1, 513, dtype=np.float16)
    got = _run_bilinear(a, src0, np.arange(32) * 32, np.arange(2, 18, dtype=np.float16), form="cont", mask=128, h=2,
                        v=2, mode=0, dblk=1, vro=128)
    assert list(got[:4]) == [389, 394, 399, 404] and got[255] == 4096
    assert (got[256:] == -7).all()


@pytest.mark.parametrize("mode", [0, 1])
def test_bilinear_interpolation_gathers_weights_and_keeps_masked_lanes(layout_bin: Path, tmp_path: Path, mode: int):
    rng = np.random.default_rng(16 + mode)
    src0 = rng.uniform(-2, 2, 1024).astype(np.float16)
    h, v, blk, vro = 3, 2, 2, 320
    offsets = rng.integers(0, 64, h * v * 8) * 32
    src1 = rng.uniform(-1, 1, h * v * 8).astype(np.float16)
    m0, m1 = 0xF0F0F0F0F0F0F0F0, 0x00000000FFFFFFFF
    a = Arena(layout_bin, tmp_path, size=128 * 1024)
    got = _run_bilinear(a, src0, offsets, src1, form="bit", m0=m0, m1=m1, h=h, v=v, mode=mode, dblk=blk, vro=vro)
    lanes = [(m0 >> e) & 1 if e < 64 else (m1 >> (e - 64)) & 1 for e in range(128)]
    want = _bilinear(src0, offsets, src1, h, v, mode, blk, vro, lanes, np.full(8192, -7, np.float16))
    assert _same(got, want)
    rows = [c for c in a.counters() if c["api"] == "BilinearInterpolation"]
    assert rows == [{"pipe": "V", "api": "BilinearInterpolation", "dtype": "half", "calls": 1,
                     "elements": 2 * h * v * 128, "bytes": 3 * h * v * 128 * 2}]


# ---------------------------------------------------------------- SoftmaxFlashV3

def _flash_v3(x, alpha, update=False, loop=1, inmean=None, inmax=None, insum=None):
    """The reference's pseudo-code, row by row in float64 (groups: (column % 64) // 8)."""
    m, n = x.shape
    x = x.astype(np.float64)
    scalar = alpha / (1 - alpha)
    group = (np.arange(n) % 64) // 8
    local = np.stack([x[:, group == g].sum(axis=1) for g in range(8)], axis=1) / (n / 8)
    mean = x.mean(axis=1, keepdims=True)
    xs = x - (mean - local[:, group]) * scalar
    if not update:
        mx = xs.max(axis=1, keepdims=True)
        dst = np.exp(xs - mx)
        return dst, mean, mx, dst.sum(axis=1, keepdims=True), None
    x_mean = (mean + inmean * (loop - 1)) / loop
    shift_curr, shift_prev = (mean - x_mean) * scalar, (inmean - x_mean) * scalar
    mx = np.maximum(shift_curr + xs.max(axis=1, keepdims=True), shift_prev + inmax)
    dst = np.exp(xs - (mx - shift_curr))
    exp_max = np.exp(inmax - mx + shift_prev)
    return dst, x_mean, mx, exp_max * insum + dst.sum(axis=1, keepdims=True), exp_max


@pytest.mark.parametrize("update", [0, 1])
def test_softmax_flash_v3_follows_the_pasa_pseudo_code(layout_bin: Path, tmp_path: Path, update: int):
    m, n, alpha, loop = 8, 1024, 0.96889, 3
    rng = np.random.default_rng(20 + update)
    x = (rng.standard_normal((m, n)) * 2 + np.linspace(-1, 3, n)).astype(np.float16)
    first = _flash_v3(x, np.float32(alpha))                       # a previous block of similar rows
    inmean = (first[1] + rng.uniform(-0.05, 0.05, (m, 1))).astype(np.float32)
    inmax = (first[2] - rng.uniform(0, 2, (m, 1))).astype(np.float32)
    insum = rng.uniform(10, 100, (m, 1)).astype(np.float32)
    a = Arena(layout_bin, tmp_path, size=96 * 1024)
    a.put(0, x)
    for off, v in ((40960, inmean), (41216, inmax), (41472, insum)):
        a.put(off, np.repeat(v, 8, axis=1))
    a.run("SoftmaxFlashV3", dt="half", m=m, n=n, update=update, loop=loop, alpha=alpha, o0=0, od=16384, om=32768, ox=33024,
          os=33280, oe=33536, oim=40960, oix=41216, ois=41472, ot=49152, st=16384)
    dst, mean, mx, total, exp_max = _flash_v3(x, np.float32(alpha), bool(update), loop, inmean, inmax, insum)
    np.testing.assert_allclose(a.get(16384, np.float16, m * n).reshape(m, n).astype(np.float64), dst, rtol=2e-3, atol=1e-6)
    for off, want in ((32768, mean), (33024, mx), (33280, total)):
        got = a.get(off, np.float32, m * 8).reshape(m, 8)
        assert (got == got[:, :1]).all()                              # one value per row, the whole block
        np.testing.assert_allclose(got[:, 0], want[:, 0], rtol=1e-5)
    if update:
        np.testing.assert_allclose(a.get(33536, np.float16, m * 16).reshape(m, 16).astype(np.float64),
                                   np.repeat(exp_max, 16, axis=1), rtol=2e-3)
        assert (exp_max > 1e-3).all()                                 # representable in half: the check means something
    rows = [c for c in a.counters() if c["pipe"] == "V"]
    assert sum(r["elements"] for r in rows if r["api"] == "Exp") == m * n


def test_softmax_flash_v3_host_minimum_is_what_the_kernel_checks(layout_bin: Path):
    out = subprocess.run([str(layout_bin), "op=host_v3", "m=8", "n=512", "update=1"], capture_output=True, text=True,
                         timeout=60).stdout
    got = dict(m.groups() for m in re.finditer(r"(\w+)=(\d+)", out))
    assert int(got["min"]) == 3 * 512 * 4 + 64 and int(got["max"]) == 8 * int(got["min"])
    rules = (SRC / RULES_SRC).read_text()
    assert "t.SetSize(3 * 2048 + 64 - 32);" in rules                # the rule scenario is one block below it


# ---------------------------------------------------------------- a hand-written kernel

KERNELS = REPO / "tests" / "kernels" / "layout_ext"


def _check(path: Path, cases: str):
    import os
    import tempfile
    os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))
    from copilot.backends.sim import check_kernel
    return check_kernel(path, str(REPO / "tests" / "fixtures" / "tasks" / "nchw_to_nc1hwc0"), cases=cases, timeout=120)


@pytest.mark.slow
def test_nchw_to_nc1hwc0_kernel_passes_its_task_with_estimates():
    report = _check(KERNELS / "nchw_to_nc1hwc0.cpp", "all")
    assert report.compiled and report.correct, [(c.id, c.message) for c in report.cases]
    assert len(report.cases) == 5 and not [d for d in report.diagnostics if d.severity == "error"]
    assert all(c.estimate is not None for c in report.cases)


@pytest.mark.slow
def test_a_single_repeat_with_rep_strides_is_reported_at_its_line():
    path = KERNELS / "nchw_one_repeat_stride.cpp"
    line = next(i for i, t in enumerate(path.read_text().splitlines(), start=1) if "EXPECT: L2.UB_BOUNDS" in t)
    report = _check(path, "1")
    assert not report.correct and ("L2.UB_BOUNDS", line) in {(d.id, d.line) for d in report.diagnostics}


# ---------------------------------------------------------------- rules

RULES = {k: v for k, v in _scenarios(RULES_SRC).items() if k != "name"}   # "name": the header comment's marker


def test_every_scenario_is_dispatched():
    main = (SRC / RULES_SRC).read_text().split("int main", 1)[1]
    assert set(RULES) == set(re.findall(r"S\((\w+)\)", main)) - {"name"}
    assert RULES["clean_calls"] == [] and RULES["t5hd_bf16_950"] == [] and RULES["cast_dequant_clean"] == []


@pytest.mark.parametrize("scenario", sorted(RULES))
def test_rule_reported_with_id_and_line(layout_rules_bin: Path, scenario: str):
    arch = 3510 if scenario.endswith("_950") else 2002 if scenario.endswith("_310p") else 2201
    r = subprocess.run([str(layout_rules_bin), scenario, str(arch)], capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 86), r.stderr
    found = [d for d in parse_diags(r.stderr) if "id" in d]
    assert sorted((d["id"], d["line"]) for d in found) == sorted(RULES[scenario]), r.stderr


def test_rule_ids_have_cards_naming_these_apis():
    repo = Path(__file__).resolve().parents[1]
    for prefix, name in (("t5hd", "layout-transdata"), ("trans_data", "layout-transdata"),
                         ("cast_dequant", "cast-dequant"), ("set_deq", "cast-dequant"),
                         ("bilinear", "bilinear-interpolation"), ("flash_v3", "softmax-flash-v3")):
        card = (repo / "knowledge" / "cards" / "L4" / f"{name}.md").read_text()
        for scenario, exp in RULES.items():
            if scenario.startswith(prefix):
                assert all(ident in card for ident, _ in exp), (scenario, name)
    cards = "\n".join(p.read_text() for p in (repo / "knowledge" / "cards").rglob("*.md"))
    for ident in {i for exp in RULES.values() for i, _ in exp}:
        assert f"id: {ident}\n" in cards, ident


def test_registry_lists_both_as_emulated_with_dtypes_per_chip():
    from copilot.backends.sim.api_registry import registry

    by = {a["name"]: a for a in registry().to_json()["apis"]}
    for name in ("TransDataTo5HD", "TransData", "CastDequant", "BilinearInterpolation", "SoftmaxFlashV3"):
        assert by[name]["status"] == "emulated", name
    assert "bfloat16_t" in by["TransDataTo5HD"]["dtypes"]["950"]
    assert "bfloat16_t" not in by["TransDataTo5HD"]["dtypes"]["A2"] and "int8_t" in by["TransDataTo5HD"]["dtypes"]["A2"]
    assert set(by["TransData"]["dtypes"]["A2"]) == {"int16_t", "uint16_t", "half", "bfloat16_t"}
    assert set(by["CastDequant"]["forms"]) == {"count", "mask-bit", "mask-continuous"}
    assert set(by["BilinearInterpolation"]["forms"]) == {"mask-bit", "mask-continuous"}
    assert by["BilinearInterpolation"]["dtypes"]["A2"] == ["half"]
