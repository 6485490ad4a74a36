"""Compound casts, UB Copy, PairReduceSum, system queries, layout and normalization libraries of the
emulator, checked against numpy (issue 15 coverage).

`tests/sim_device/api_cov_main.cpp` is built once per content hash; it copies an arena file into one
UB buffer, runs one API on views at byte offsets and writes the arena back. Rule scenarios are in
`tests/sim_device/api_cov_rules.cpp` (`// EXPECT: <id>` lines, nothing else may be reported).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.test_sim_device import SRC, _build, parse_diags

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]

RULES_SRC = "api_cov_rules.cpp"


@pytest.fixture(scope="module")
def cov_bin() -> Path:
    return _build("api_cov_main")


@pytest.fixture(scope="module")
def cov_rules_bin() -> Path:
    return _build("api_cov_rules")


class Arena:
    """One UB buffer: numpy arrays at byte offsets, one API run, the bytes read back."""

    def __init__(self, binary: Path, tmp: Path, size: int = 64 * 1024):
        self.binary, self.tmp = binary, tmp
        self.buf = np.zeros(size, np.uint8)
        self.diags: list[dict] = []
        self.stdout = ""

    def put(self, off: int, arr: np.ndarray) -> None:
        b = np.ascontiguousarray(arr).view(np.uint8).ravel()
        self.buf[off:off + b.size] = b

    def get(self, off: int, dtype, n: int) -> np.ndarray:
        return self.buf[off:off + n * np.dtype(dtype).itemsize].copy().view(dtype)

    def run(self, op: str, expect_ok: bool = True, **kw) -> "Arena":
        src, out = self.tmp / "arena.bin", self.tmp / "arena.out"
        self.buf.tofile(src)
        args = [str(self.binary), f"op={op}", f"arena={src}", f"out={out}"] + [f"{k}={v}" for k, v in kw.items()]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 or (not expect_ok and r.returncode == 86), r.stderr   # 86: a fatal finding
        self.diags = [d for d in parse_diags(r.stderr) if "id" in d]
        self.stdout = r.stdout
        if r.returncode == 0:
            self.buf = np.fromfile(out, np.uint8)
        if expect_ok:
            assert self.diags == [], self.diags
        return self

    def scalars(self) -> dict[str, str]:
        return dict(m.groups() for m in re.finditer(r"(\w+)=(\S+)", "\n".join(
            ln for ln in self.stdout.splitlines() if not ln.startswith("{"))))

    def counters(self) -> list[dict]:
        line = [ln for ln in self.stdout.splitlines() if ln.startswith('{"block"')][-1]
        return json.loads(line)["counters"]


@pytest.fixture
def arena(cov_bin: Path, tmp_path: Path) -> Arena:
    return Arena(cov_bin, tmp_path)


def bits_equal(got: np.ndarray, want: np.ndarray):
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.itemsize]
    np.testing.assert_array_equal(got.view(u), want.astype(got.dtype).view(u))


def sat_round(v: np.ndarray, dtype) -> np.ndarray:
    """Nearest-even, saturating, NaN -> 0: CAST_NONE into an integer type."""
    info = np.iinfo(dtype)
    r = np.rint(np.nan_to_num(v.astype(np.float64), nan=0.0, posinf=info.max, neginf=info.min))
    return np.clip(r, info.min, info.max).astype(dtype)


def relu_keep_nan(v: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(v), v, np.maximum(v, 0))


# ---------------------------------------------------------------- compound casts

@pytest.mark.parametrize("op", ["AddReluCast", "SubReluCast"])
def test_relu_cast_half_to_int8_rounds_saturates_and_zeroes_nan(arena: Arena, op: str):
    a = np.array([1.5, 2.5, -3, 200, 127.4, 0.5, np.nan, np.inf, -np.inf, 126.5, 300, -0.0] * 32, np.float16)[:256]
    b = np.array([1, 0, 5, -100, 0, 0, 1, 0, 0, 0, 0, 0] * 32, np.float16)[:256]
    arena.put(0, a); arena.put(1024, b)
    arena.run(op, dt="int8", st="half", n=256, o0=0, o1=1024, od=4096)
    s = (a + b if op == "AddReluCast" else a - b).astype(np.float16)   # computed in half
    want = sat_round(relu_keep_nan(s.astype(np.float64)), np.int8)
    np.testing.assert_array_equal(arena.get(4096, np.int8, 256), want)


def test_add_relu_cast_float_to_half_and_int16_to_int8(arena: Arena):
    a = np.array([1e5, -1, 3.3, np.nan, 65519, 65520, 1e-8, np.inf], np.float32).repeat(8)
    b = np.zeros(64, np.float32)
    arena.put(0, a); arena.put(1024, b)
    arena.run("AddReluCast", dt="half", st="float", n=64, o0=0, o1=1024, od=4096)
    r = relu_keep_nan(a.astype(np.float64))
    want = np.where(np.isfinite(r), np.minimum(r, 65504), r)     # finite overflow saturates; inf and NaN kept
    bits_equal(arena.get(4096, np.float16, 64), want.astype(np.float16))
    x = np.array([32767, -32768, 100, 200, -5, 127, 128, 0], np.int16).repeat(16)
    y = np.array([1, 0, 27, 0, 0, 0, 0, 0], np.int16).repeat(16)
    arena.put(0, x); arena.put(1024, y)
    arena.run("AddReluCast", dt="int8", st="int16", n=128, o0=0, o1=1024, od=4096)
    s = (x.astype(np.int32) + y).astype(np.int16)                    # 32767 + 1 wraps in int16
    np.testing.assert_array_equal(arena.get(4096, np.int8, 128), np.clip(np.maximum(s, 0), -128, 127).astype(np.int8))


def test_relu_cast_mask_forms_count_lanes_in_the_wider_type(arena: Arena):
    a = np.arange(256, dtype=np.float16) - 100
    arena.put(0, a); arena.put(1024, np.zeros(256, np.float16))
    arena.buf[4096:4096 + 512] = 0x55
    # 2 repeats of 64 lanes; int8 dst repeats are 4 blocks (128 B) apart, half sources 8 blocks
    arena.run("AddReluCast", dt="int8", st="half", form="cont", mask=64, repeat=2, drep=4, srep=8, o0=0, o1=1024, od=4096)
    got = arena.get(4096, np.int8, 256)
    want = np.full(256, 0x55, np.int8)
    for r in range(2):
        want[r * 128:r * 128 + 64] = sat_round(np.maximum(a[r * 128:r * 128 + 64].astype(np.float64), 0), np.int8)
    np.testing.assert_array_equal(got, want)
    arena.buf[4096:4096 + 512] = 0x55
    arena.run("AddReluCast", dt="int8", st="half", form="bit", m0=0b1011, m1=1, repeat=1, drep=4, o0=0, o1=1024, od=4096)
    got = arena.get(4096, np.int8, 128)
    lanes = [0, 1, 3, 64]
    assert [i for i in range(128) if got[i] != 0x55] == [i for i in lanes if max(a[i], 0) != 0x55]
    np.testing.assert_array_equal(got[lanes], sat_round(np.maximum(a[lanes].astype(np.float64), 0), np.int8))


@pytest.mark.parametrize("dt,np_dt", [("int8", np.int8), ("uint8", np.uint8)])
def test_mul_cast_half_to_8bit_saturates(arena: Arena, dt: str, np_dt):
    a = np.array([2, -3, 100, 0.5, 1.5, np.nan, np.inf, -np.inf], np.float16).repeat(16)
    b = np.array([3, 5, 3, 1, 1, 1, 1, 1], np.float16).repeat(16)
    arena.put(0, a); arena.put(1024, b)
    arena.run("MulCast", dt=dt, st="half", n=128, o0=0, o1=1024, od=4096)
    np.testing.assert_array_equal(arena.get(4096, np_dt, 128), sat_round((a * b).astype(np.float64), np_dt))


@pytest.mark.parametrize("dt,np_dt", [("float", np.float32), ("half", np.float16)])
def test_mul_add_relu_uses_dst_as_the_multiplicand(arena: Arena, dt: str, np_dt):
    rng = np.random.default_rng(3)
    x, y, d = (rng.standard_normal(128).astype(np_dt) for _ in range(3))
    x[:4] = [np.nan, np.inf, -np.inf, 0]
    arena.put(0, x); arena.put(1024, y); arena.put(4096, d)
    arena.run("MulAddRelu", dt=dt, n=128, o0=0, o1=1024, od=4096)
    want = relu_keep_nan((x.astype(np.float64) * d + y)).astype(np_dt)
    np.testing.assert_allclose(arena.get(4096, np_dt, 128), want, rtol=2e-3 if dt == "half" else 1e-6, equal_nan=True)


def test_add_deq_relu_scales_the_int32_sum_to_half(arena: Arena):
    a = np.array([100, -100, 2**31 - 1, 7, 1 << 20, -5, 0, 3], np.int32).repeat(8)
    b = np.array([28, 50, 1, 0, 0, 0, 0, -4], np.int32).repeat(8)
    arena.put(0, a); arena.put(1024, b)
    arena.run("AddDeqRelu", n=64, deq=0.5, o0=0, o1=1024, od=4096)
    s = (a.astype(np.int64) + b).astype(np.int32).astype(np.float64) * 0.5          # int32 sum wraps
    want = np.maximum(np.clip(s, -65504, 65504), 0).astype(np.float16)
    bits_equal(arena.get(4096, np.float16, 64), want)


# ---------------------------------------------------------------- Copy / PairReduceSum / system

def test_copy_mask_forms_with_block_and_repeat_strides(arena: Arena):
    x = np.arange(512, dtype=np.int16)
    arena.put(0, x)
    arena.buf[4096:4096 + 2048] = 0
    # 2 repeats, 128 lanes each; dst blocks 2 apart, dst repeats 16 blocks apart
    arena.run("Copy", dt="int16", form="cont", mask=128, repeat=2, dblk=2, drep=16, o0=0, od=4096)
    got = arena.get(4096, np.int16, 512)
    want = np.zeros(512, np.int16)
    for r in range(2):
        for blk in range(8):
            want[r * 256 + blk * 32:r * 256 + blk * 32 + 16] = x[r * 128 + blk * 16:r * 128 + blk * 16 + 16]
    np.testing.assert_array_equal(got, want)
    arena.buf[4096:4096 + 2048] = 0
    arena.run("Copy", dt="float", form="bit", m0=0xF0F0, repeat=1, o0=0, od=4096)
    xf = arena.get(0, np.float32, 64)
    got = arena.get(4096, np.float32, 64)
    lanes = [i for i in range(64) if (0xF0F0 >> i) & 1]
    np.testing.assert_array_equal(got[lanes], xf[lanes])
    assert not got[[i for i in range(64) if i not in lanes]].any()


def test_copy_counter_mode_copies_mask_elements_per_repeat(arena: Arena):
    x = np.arange(256, dtype=np.float32) + 0.5
    arena.put(0, x)
    arena.run("Copy", dt="float", form="cont", counter=1, mask=10, repeat=3, o0=0, od=4096)
    got = arena.get(4096, np.float32, 192)
    for r in range(3):
        np.testing.assert_array_equal(got[r * 64:r * 64 + 10], x[r * 64:r * 64 + 10])
        assert not got[r * 64 + 10:(r + 1) * 64].any()


def test_copy_count_form_is_atlas_350_only(arena: Arena):
    arena.put(0, np.arange(64, dtype=np.int32))
    arena.run("Copy", dt="int32", form="count", n=64, o0=0, od=4096, arch=3510)
    np.testing.assert_array_equal(arena.get(4096, np.int32, 64), np.arange(64))
    arena.run("Copy", dt="int32", form="count", n=64, o0=0, od=4096, expect_ok=False)
    assert [d["id"] for d in arena.diags] == ["L4.API_UNKNOWN"]


@pytest.mark.parametrize("dt,np_dt", [("float", np.float32), ("half", np.float16)])
def test_pair_reduce_sum_adds_even_odd_lanes(arena: Arena, dt: str, np_dt):
    lanes = 256 // np.dtype(np_dt).itemsize
    x = (np.arange(2 * lanes) % 17 - 8).astype(np_dt)
    x[5] = np.inf
    arena.put(0, x)
    arena.run("PairReduceSum", dt=dt, form="cont", mask=lanes, repeat=2, drep=1, o0=0, od=4096)
    want = (x[0::2].astype(np.float64) + x[1::2]).astype(np_dt)
    np.testing.assert_array_equal(arena.get(4096, np_dt, lanes), want)
    arena.run("PairReduceSum", dt=dt, form="cont", mask=3, repeat=1, drep=1, o0=0, od=8192)
    np.testing.assert_array_equal(arena.get(8192, np_dt, 2), [x[0] + x[1], x[2]])


def test_system_queries_and_init_soc_state_resets_global_state(arena: Arena):
    s = arena.run("system").scalars()
    assert s["block"] == "32" and s["icache"] == "0" and int(s["pc"]) > 0
    assert (s["counter"], s["lo"], s["atomic"], s["deq"]) == ("0", str(2**64 - 1), "0", "1")


def test_new_basic_apis_are_costed_on_the_vector_pipe(arena: Arena):
    arena.put(0, np.ones(256, np.float16)); arena.put(1024, np.ones(256, np.float16))
    c = arena.run("AddReluCast", dt="int8", st="half", n=256, o0=0, o1=1024, od=4096).counters()
    row = [r for r in c if r["api"] == "AddReluCast"]
    assert row and row[0]["pipe"] == "V" and row[0]["elements"] == 256


@pytest.mark.parametrize("dt,np_dt", [("float", np.float32), ("half", np.float16)])
def test_compare_into_the_register_and_get_cmp_mask(arena: Arena, dt: str, np_dt):
    lanes = 256 // np.dtype(np_dt).itemsize
    a = (np.arange(lanes) % 7).astype(np_dt); b = np.full(lanes, 3, np_dt)
    a[1], a[2] = np.nan, np.inf
    arena.put(0, a); arena.put(1024, b)
    arena.buf[4096:4096 + 128] = 0xAA
    arena.run("CompareRegister", dt=dt, cmp=0, form="cont", mask=lanes - 4, o0=0, o1=1024, od=4096)   # CMPMODE 0 = LT
    want = np.zeros(128, bool)
    want[:lanes - 4] = (a < b)[:lanes - 4]
    got = np.unpackbits(arena.get(4096, np.uint8, 16), bitorder="little").astype(bool)
    np.testing.assert_array_equal(got, want)
    assert (arena.get(4096 + 16, np.uint8, 112) == 0xAA).all()       # only the 16 register bytes are written


def test_select_takes_bits_from_set_cmp_mask_and_lanes_from_the_mask_register(arena: Arena):
    a = np.arange(128, dtype=np.float32); b = -np.arange(128, dtype=np.float32) - 1
    bits = np.zeros(128, np.uint8); bits[[0, 3, 5, 40, 63]] = 1
    arena.put(0, a); arena.put(1024, b); arena.put(2048, np.packbits(bits, bitorder="little"))
    arena.buf[4096:4096 + 512] = 0
    arena.run("SelectRegister", dt="float", m0=(1 << 50) - 1, repeat=2, o0=0, o1=1024, oi=2048, od=4096)
    got = arena.get(4096, np.float32, 128)
    for r in range(2):
        lane = np.arange(64)
        sel = np.where(bits[:64] == 1, a[r * 64 + lane], b[r * 64 + lane])
        np.testing.assert_array_equal(got[r * 64:r * 64 + 50], sel[:50])
        assert not got[r * 64 + 50:(r + 1) * 64].any()


@pytest.mark.parametrize("dt,np_dt", [("float", np.float32), ("half", np.float16)])
def test_get_reduce_repeat_sum_spr_returns_the_count_form_sum(arena: Arena, dt: str, np_dt):
    x = (np.arange(300) % 13 - 6).astype(np_dt)
    arena.put(0, x)
    s = arena.run("ReduceSumSpr", dt=dt, n=300, o0=0, od=4096, ot=8192).scalars()
    assert float(s["spr"]) == float(arena.get(4096, np_dt, 1)[0]) == float(x.astype(np.float64).sum())


# ---------------------------------------------------------------- host helpers

@pytest.fixture(scope="module")
def host_sizes() -> dict[str, int]:
    binary = _build_host()
    out = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60, check=True).stdout
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", out)}


def _build_host() -> Path:
    """The host helpers compile as a host unit of their own (tiling/tiling_api.h, no kernel header)."""
    import hashlib
    from tests.test_sim_device import BUILD, INCLUDE
    h = hashlib.sha256()
    for p in sorted(INCLUDE.rglob("*.h")) + [SRC / "api_cov_host.cpp"]:
        h.update(p.read_bytes())
    out = BUILD / f"api_cov_host-{h.hexdigest()[:16]}"
    if not out.exists():
        BUILD.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        subprocess.run(["g++", "-std=c++20", "-O0", "-I", str(INCLUDE), str(SRC / "api_cov_host.cpp"), "-o", str(tmp)],
                       check=True, capture_output=True, text=True)
        tmp.replace(out)
    return out


def test_host_tiling_helpers_fill_shapes_and_size_tmp_buffers(host_sizes: dict[str, int]):
    s = host_sizes
    assert (s["pad_h"], s["pad_w"], s["pad_ow"]) == (16, 16, 14)
    assert (s["bn_b"], s["bn_ob"], s["bn_s"], s["bn_h"], s["bn_ok"]) == (8, 6, 2, 16, 1)
    assert (s["dn_h"], s["dn_oh"]) == (64, 60)
    assert (s["gn_n"], s["gn_c"], s["gn_hw"], s["gn_g"]) == (2, 8, 8, 4)
    assert (s["lng_b"], s["lng_s"], s["lng_h"], s["lngb_h"]) == (2, 32, 16, 16)
    for api in ("pad", "unpad", "brc", "bn", "dn", "gn", "lng", "lngb", "wu", "wf"):
        assert 0 < s[f"{api}_min"] <= s[f"{api}_max"], api


@pytest.mark.parametrize("api,op,kw", [
    ("pad", "Pad", dict(dt="half", h=16, w=15, right=1, o0=0, od=1024, ot=4096)),
    ("bn", "BatchNorm", dict(dt="float", b=8, s=2, h=16, ob=6, o0=0, o1=2048, o2=2304, od=4096, oi=8192, o3=8448, ot=12288)),
    ("lng", "LayerNormGrad", dict(dt="float", b=2, s=32, h=16, o0=0, o1=4096, o2=8192, o3=8704, o4=9216, od=12288,
                                  oi=16384, ot=20480)),
])
def test_a_tmp_buffer_of_the_host_minimum_passes_and_one_block_less_fails(arena: Arena, host_sizes, api, op, kw):
    arena.run(op, st=host_sizes[f"{api}_min"], **kw)
    arena.run(op, st=host_sizes[f"{api}_min"] - 32, expect_ok=False, **kw)
    assert [d["id"] for d in arena.diags] == ["L2.TMP_BUFFER"]


# ---------------------------------------------------------------- layout transforms

@pytest.mark.parametrize("dt,np_dt", [("half", np.float16), ("int32", np.int32), ("int16", np.int16)])
def test_pad_unaligned_width_pads_left_and_right(arena: Arena, dt: str, np_dt):
    epb = 32 // np.dtype(np_dt).itemsize
    w = epb - 3
    x = (np.arange(epb * w) - 7).astype(np_dt).reshape(epb, w)
    if dt == "int32":
        x[0, 0], x[1, 1] = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    arena.put(0, x)
    arena.run("Pad", dt=dt, h=epb, w=w, left=1, right=2, value=-5, o0=0, od=2048)
    want = np.pad(x, ((0, 0), (1, 2)), constant_values=-5)
    np.testing.assert_array_equal(arena.get(2048, np_dt, want.size).reshape(want.shape), want)


def test_pad_aligned_width_fills_the_redundant_columns(arena: Arena):
    x = np.arange(16 * 16, dtype=np.float32).reshape(16, 16)
    x[:, 14:] = np.nan
    arena.put(0, x)
    arena.run("Pad", dt="float", h=16, w=16, ow=14, right=2, value=7, o0=0, od=2048)
    want = x.copy(); want[:, 14:] = 7
    np.testing.assert_array_equal(arena.get(2048, np.float32, 256).reshape(16, 16), want)


@pytest.mark.parametrize("dt,np_dt", [("half", np.float16), ("float", np.float32)])
def test_unpad_drops_the_last_columns(arena: Arena, dt: str, np_dt):
    x = np.arange(8 * 16, dtype=np_dt).reshape(8, 16)
    x[2, 3] = np.inf
    arena.put(0, x)
    arena.run("UnPad", dt=dt, h=8, w=16, right=3, o0=0, od=2048, st=2048, ot=8192)
    np.testing.assert_array_equal(arena.get(2048, np_dt, 8 * 13).reshape(8, 13), x[:, :13])


@pytest.mark.parametrize("dt,np_dt", [("float", np.float32), ("half", np.float16), ("int8", np.int8), ("uint8", np.uint8)])
def test_broadcast_2d_both_axes_and_1d(arena: Arena, dt: str, np_dt):
    col = np.arange(8).astype(np_dt).reshape(8, 1)
    if np.issubdtype(np_dt, np.integer):
        col[0, 0], col[1, 0] = np.iinfo(np_dt).min, np.iinfo(np_dt).max
    else:
        col[0, 0], col[1, 0] = np.nan, -np.inf
    arena.put(0, col)
    arena.run("Broadcast", dt=dt, dim=2, axis=1, d0=8, d1=32, s0=8, s1=1, o0=0, od=4096)
    bits_equal(arena.get(4096, np_dt, 256).reshape(8, 32), np.broadcast_to(col, (8, 32)))
    row = np.arange(32).astype(np_dt).reshape(1, 32)
    arena.put(0, row)
    arena.run("Broadcast", dt=dt, dim=2, axis=0, d0=4, d1=32, s0=1, s1=32, o0=0, od=4096, st=256, ot=16384)
    bits_equal(arena.get(4096, np_dt, 128).reshape(4, 32), np.broadcast_to(row, (4, 32)))
    arena.run("Broadcast", dt=dt, dim=1, d0=64, s0=1, o0=0, od=4096)
    bits_equal(arena.get(4096, np_dt, 64), np.full(64, row[0, 0]))


def test_broadcast_rank_form_on_atlas_350_and_refused_on_a2(arena: Arena):
    x = np.arange(2 * 1 * 3, dtype=np.float32).reshape(2, 1, 3)
    arena.put(0, x)
    arena.run("BroadcastRank", dt="float", rank=3, d0=2, d1=4, d2=3, s0=2, s1=1, s2=3, o0=0, od=4096, arch=3510)
    np.testing.assert_array_equal(arena.get(4096, np.float32, 24).reshape(2, 4, 3), np.broadcast_to(x, (2, 4, 3)))
    arena.run("BroadcastRank", dt="float", rank=3, d0=2, d1=4, d2=3, s0=2, s1=1, s2=3, o0=0, od=4096, expect_ok=False)
    assert {d["id"] for d in arena.diags} == {"L4.API_UNKNOWN"}


def test_fill_sets_gm_before_init_buffer_and_is_refused_after(arena: Arena):
    arena.run("Fill", dt="float", n=40, size=33, value=-2.5)
    first = arena.stdout.splitlines()[0].split()
    assert first == ["-2.5"] * 33 + ["0"] * 7
    arena.run("Fill", dt="float", n=40, size=41, value=1, expect_ok=False)
    assert [d["id"] for d in arena.diags] == ["L2.GM_BOUNDS"]
    arena.run("Fill", dt="float", n=8, size=8, value=1, after_init=1, expect_ok=False)
    assert [d["id"] for d in arena.diags] == ["L2.API_PARAM"]


# ---------------------------------------------------------------- normalization

def test_batch_norm_normalizes_over_the_batch_axis(arena: Arena):
    rng = np.random.default_rng(5)
    B, S, H, oB = 8, 2, 16, 6
    x = rng.standard_normal((B, S, H)).astype(np.float32)
    g = rng.standard_normal(B).astype(np.float32); b = rng.standard_normal(B).astype(np.float32)
    arena.put(0, x); arena.put(2048, g); arena.put(2304, b)
    arena.run("BatchNorm", dt="float", b=B, s=S, h=H, ob=oB, eps=1e-5, o0=0, o1=2048, o2=2304, od=4096, oi=8192, o3=8448)
    xv = x[:oB].astype(np.float64)
    mu, var = xv.mean(0), xv.var(0)
    want = g[:, None, None] * (x - mu) / np.sqrt(var + 1e-5) + b[:, None, None]
    np.testing.assert_allclose(arena.get(4096, np.float32, B * S * H).reshape(B, S, H), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(arena.get(8192, np.float32, S * H).reshape(S, H), mu, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(arena.get(8448, np.float32, S * H).reshape(S, H), var, rtol=1e-5)


@pytest.mark.parametrize("dt,np_dt,tol", [("float", np.float32, 1e-5), ("half", np.float16, 3e-3)])
def test_deep_norm_is_layer_norm_of_alpha_x_plus_gx(arena: Arena, dt: str, np_dt, tol: float):
    rng = np.random.default_rng(6)
    B, S, H = 2, 4, 64
    x, gx = (rng.standard_normal((B, S, H)).astype(np_dt) for _ in range(2))
    beta, gamma = (rng.standard_normal(H).astype(np_dt) for _ in range(2))
    es = np.dtype(np_dt).itemsize
    arena.put(0, x); arena.put(4096, gx); arena.put(8192, beta); arena.put(8704, gamma)
    arena.run("DeepNorm", dt=dt, b=B, s=S, h=H, alpha=-5.5, eps=1e-5, o0=0, o1=4096, o2=8192, o3=8704,
              od=12288, oi=16384, o5=16896)
    z = -5.5 * x.astype(np.float64) + gx
    mu, var = z.mean(-1, keepdims=True), z.var(-1, keepdims=True)
    want = (z - mu) / np.sqrt(var + 1e-5) * gamma + beta
    np.testing.assert_allclose(arena.get(12288, np_dt, B * S * H).reshape(B, S, H), want, rtol=tol, atol=tol * 4)
    np.testing.assert_allclose(arena.get(16384, np_dt, B * S), mu.ravel(), rtol=tol, atol=tol)
    np.testing.assert_allclose(arena.get(16896, np_dt, B * S), var.ravel(), rtol=tol)   # rstdLocal holds the variance
    assert es in (2, 4)


def test_group_norm_normalizes_each_group_of_channels(arena: Arena):
    rng = np.random.default_rng(7)
    N, C, Hh, W, G = 2, 8, 4, 2, 4
    x = rng.standard_normal((N, C, Hh, W)).astype(np.float32) * 3 + 1
    gamma, beta = rng.uniform(-2, 2, C).astype(np.float32), rng.uniform(-2, 2, C).astype(np.float32)
    arena.put(0, x); arena.put(2048, gamma); arena.put(2304, beta)
    arena.run("GroupNorm", dt="float", n=N, c=C, hw=Hh * W, g=G, eps=1e-5, o0=0, o1=2048, o2=2304, od=4096, oi=8192, o3=8448)
    xg = x.astype(np.float64).reshape(N, G, -1)
    mu, var = xg.mean(-1), xg.var(-1)
    want = ((xg - mu[..., None]) / np.sqrt(var[..., None] + 1e-5)).reshape(N, C, Hh, W) * gamma[:, None, None] + beta[:, None, None]
    np.testing.assert_allclose(arena.get(4096, np.float32, x.size).reshape(x.shape), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(arena.get(8192, np.float32, N * G).reshape(N, G), mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arena.get(8448, np.float32, N * G).reshape(N, G), var, rtol=1e-5)


def test_layer_norm_grad_and_grad_beta_match_the_analytic_gradient(arena: Arena):
    rng = np.random.default_rng(8)
    B, S, H, eps = 2, 32, 16, 1e-5
    x = rng.standard_normal((B, S, H)).astype(np.float32)
    dy = rng.standard_normal((B, S, H)).astype(np.float32)
    gamma = rng.standard_normal(H).astype(np.float32)
    mean, var = x.mean(-1), x.var(-1)
    arena.put(0, dy); arena.put(4096, x); arena.put(8192, var); arena.put(8704, mean); arena.put(9216, gamma)
    arena.run("LayerNormGrad", dt="float", b=B, s=S, h=H, eps=eps, o0=0, o1=4096, o2=8192, o3=8704, o4=9216, od=12288, oi=16384)
    xd = x.astype(np.float64)
    rstd = 1 / np.sqrt(var[..., None].astype(np.float64) + eps)
    xhat = (xd - mean[..., None]) * rstd
    g = dy * gamma.astype(np.float64)        # d loss / d xhat; dx of y = xhat * gamma + beta
    dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
    np.testing.assert_allclose(arena.get(12288, np.float32, x.size).reshape(x.shape), dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arena.get(16384, np.float32, x.size).reshape(x.shape), xhat, rtol=1e-5, atol=1e-5)
    # LayerNormGradBeta on LayerNormGrad's resForGamma
    arena.run("LayerNormGradBeta", dt="float", b=B, s=S, h=H, o0=16384, o1=0, od=20480, oi=20736)
    np.testing.assert_allclose(arena.get(20480, np.float32, H), (dy * xhat).sum((0, 1)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(arena.get(20736, np.float32, H), dy.astype(np.float64).sum((0, 1)), rtol=1e-5, atol=1e-5)


def test_welford_update_then_finalize_give_mean_and_variance(arena: Arena):
    rng = np.random.default_rng(9)
    ab, n = 64, 5
    chunks = rng.standard_normal((n, ab)).astype(np.float32) * 2 + 3
    chunks[2, 7] = np.inf
    arena.put(4096, np.zeros(ab, np.float32)); arena.put(8192, np.zeros(ab, np.float32))
    for i in range(n):                       # mean/M in place: out = od/oi, in = o1/o2 swapped each call
        src_m, src_v, dst_m, dst_v = (4096, 8192, 12288, 16384) if i % 2 == 0 else (12288, 16384, 4096, 8192)
        arena.put(0, chunks[i])
        arena.run("WelfordUpdate", dt="float", ab=ab, nrec=1.0 / (i + 1), o0=0, o1=src_m, o2=src_v, od=dst_m, oi=dst_v)
    m, M = arena.get(12288, np.float32, ab), arena.get(16384, np.float32, ab)
    finite = np.isfinite(chunks).all(0)
    np.testing.assert_allclose(m[finite], chunks.mean(0)[finite], rtol=1e-5)
    np.testing.assert_allclose(M[finite], (chunks.var(0) * n)[finite], rtol=1e-4)
    assert np.isnan(M[~finite]).all() or np.isinf(M[~finite]).all()
    good = chunks[:, finite]
    arena.put(0, m[finite]); arena.put(1024, M[finite])
    k = good.shape[1]
    kk = k - k % 8
    arena.put(0, m[finite][:kk]); arena.put(1024, M[finite][:kk])
    arena.run("WelfordFinalize", dt="float", rn=n, ab=kk, hc=n, hcl=kk, tc=0, tcl=0, abrec=1.0 / kk, rrec=1.0 / (n * kk),
              o0=0, o1=1024, od=20480, oi=20512)
    flat = good[:, :kk].astype(np.float64)
    np.testing.assert_allclose(arena.get(20480, np.float32, 1), [flat.mean()], rtol=1e-5)
    np.testing.assert_allclose(arena.get(20512, np.float32, 1), [flat.var()], rtol=1e-4)


def test_welford_update_in_place_config_copies_lanes_past_the_compute_length(arena: Arena):
    x = np.arange(64, dtype=np.float16)
    arena.put(0, x); arena.put(4096, np.full(64, 2, np.float32)); arena.put(8192, np.full(64, 3, np.float32))
    arena.buf[12288:12288 + 512] = 0
    arena.run("WelfordUpdate", dt="half", ab=64, abc=10, nrec=0.5, inplace=1, o0=0, o1=4096, o2=8192, od=12288, oi=12544)
    m = arena.get(12288, np.float32, 64)
    np.testing.assert_allclose(m[:10], 2 + (x[:10] - 2) * 0.5)
    np.testing.assert_array_equal(m[10:], 2)


def test_welford_finalize_with_counts_weights_each_lane(arena: Arena):
    means = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.float32)
    Ms = np.array([0, 1, 2, 0, 0, 3, 0, 1], np.float32)
    counts = np.array([3, 3, 3, 3, 2, 2, 2, 2], np.int32)
    arena.put(0, means); arena.put(1024, Ms); arena.put(2048, counts)
    R = counts.sum()
    arena.run("WelfordFinalize", dt="float", rn=3, ab=8, counts=1, rrec=1.0 / R, o0=0, o1=1024, o2=2048, od=4096, oi=4128)
    mu = (counts * means).sum() / R
    var = (Ms + counts * (means - mu) ** 2).sum() / R
    np.testing.assert_allclose(arena.get(4096, np.float32, 1), [mu], rtol=1e-6)
    np.testing.assert_allclose(arena.get(4128, np.float32, 1), [var], rtol=1e-6)


def test_library_costs_are_their_constituent_vector_instructions(arena: Arena):
    arena.put(0, np.ones(256, np.float32))
    c = arena.run("GroupNorm", dt="float", n=2, c=8, hw=8, g=4, o0=0, o1=2048, o2=2304, od=4096, oi=8192, o3=8448).counters()
    apis = {r["api"] for r in c}
    assert {"ReduceSum", "Sub", "Mul", "Add"} <= apis and all(r["pipe"] == "V" for r in c)


# ---------------------------------------------------------------- SoftmaxFlashV2 / AdjustSoftMaxRes / DropOut

def _blocks(a: Arena, off: int, dtype, m: int) -> np.ndarray:
    per = 32 // np.dtype(dtype).itemsize
    v = a.get(off, dtype, m * per).reshape(m, per)
    assert (v.view(np.uint16 if per == 16 else np.uint32) == v[:, :1].view(np.uint16 if per == 16 else np.uint32)).all()
    return v[:, 0]


@pytest.mark.parametrize("dt,np_dt,tol", [("float", np.float32, 1e-6), ("half", np.float16, 2e-3)])
def test_softmax_flash_v2_first_block_and_update(arena: Arena, dt: str, np_dt, tol: float):
    rng = np.random.default_rng(11)
    m, k = 4, 64
    x = (rng.standard_normal((m, k)) * 3).astype(np_dt)
    x[1, 5] = -np.inf
    per = 32 // np.dtype(np_dt).itemsize
    arena.put(0, x)
    arena.run("SoftmaxFlashV2", dt=dt, m=m, k=k, update=0, o0=0, od=4096, oi=8192, o4=8448, o1=8704, o2=8960, o3=9216)
    xd = x.astype(np.float64)
    mx = xd.max(-1)
    e = np.exp(xd - mx[:, None])
    np.testing.assert_allclose(arena.get(4096, np_dt, m * k).reshape(m, k), e, rtol=tol, atol=tol)
    np.testing.assert_allclose(_blocks(arena, 8192, np_dt, m), e.sum(-1), rtol=tol * 4)
    np.testing.assert_allclose(_blocks(arena, 8448, np_dt, m), mx, rtol=tol)
    # the next block with the previous max/sum as inputs
    inmax = np.repeat(mx.astype(np_dt)[:, None] + 1, per, 1); insum = np.repeat(e.sum(-1).astype(np_dt)[:, None], per, 1)
    arena.put(8704, insum); arena.put(8960, inmax)
    arena.run("SoftmaxFlashV2", dt=dt, m=m, k=k, update=1, o0=0, od=4096, oi=8192, o4=8448, o1=8704, o2=8960, o3=9216,
              o5=9472, st=2048, ot=16384)
    im, isum = inmax[:, 0].astype(np.float64), insum[:, 0].astype(np.float64)
    newmax = np.maximum(im, mx)
    e2 = np.exp(xd - newmax[:, None])
    np.testing.assert_allclose(arena.get(4096, np_dt, m * k).reshape(m, k), e2, rtol=tol, atol=tol)
    np.testing.assert_allclose(_blocks(arena, 8448, np_dt, m), newmax, rtol=tol)
    np.testing.assert_allclose(_blocks(arena, 9216, np_dt, m), np.exp(im - newmax), rtol=tol)
    np.testing.assert_allclose(_blocks(arena, 8192, np_dt, m), np.exp(im - newmax) * isum + e2.sum(-1), rtol=tol * 4)
    np.testing.assert_allclose(_blocks(arena, 9472, np_dt, m), mx, rtol=tol)      # outReduceMax: this block's row max


@pytest.mark.parametrize("dt,np_dt,tol", [("float", np.float32, 1e-6), ("half", np.float16, 2e-3)])
def test_softmax_flash_normalises_by_the_running_sum(arena: Arena, dt: str, np_dt, tol: float):
    rng = np.random.default_rng(13)
    m, k = 3, 32
    per = 32 // np.dtype(np_dt).itemsize
    x = rng.standard_normal((m, k)).astype(np_dt)
    inmax = np.repeat(np.array([0.5, 3.0, -1.0], np_dt)[:, None], per, 1)
    insum = np.repeat(np.array([2.0, 5.0, 1.0], np_dt)[:, None], per, 1)
    arena.put(0, x); arena.put(8704, insum); arena.put(8960, inmax)
    arena.run("SoftmaxFlash", dt=dt, m=m, k=k, update=1, o0=0, od=4096, oi=8192, o4=8448, o1=8704, o2=8960, o3=9216)
    xd, im, isum = x.astype(np.float64), inmax[:, 0].astype(np.float64), insum[:, 0].astype(np.float64)
    mx = np.maximum(im, xd.max(-1))
    e = np.exp(xd - mx[:, None])
    s = np.exp(im - mx) * isum + e.sum(-1)
    np.testing.assert_allclose(arena.get(4096, np_dt, m * k).reshape(m, k), e / s[:, None], rtol=tol * 2, atol=tol)
    np.testing.assert_allclose(_blocks(arena, 8192, np_dt, m), s, rtol=tol * 4)
    np.testing.assert_allclose(_blocks(arena, 9216, np_dt, m), np.exp(im - mx) * isum / s, rtol=tol * 4)
    arena.run("SoftmaxFlash", dt=dt, m=m, k=k, update=0, o0=0, od=4096, oi=8192, o4=8448, o1=8704, o2=8960, o3=9216)
    np.testing.assert_allclose(arena.get(4096, np_dt, m * k).reshape(m, k),
                               np.exp(xd - xd.max(-1, keepdims=True)) / np.exp(xd - xd.max(-1, keepdims=True)).sum(-1, keepdims=True),
                               rtol=tol * 2, atol=tol)


def test_softmax_flash_v2_half_data_with_float_statistics(arena: Arena):
    x = np.linspace(-4, 4, 2 * 32).astype(np.float16).reshape(2, 32)
    arena.put(0, x)
    arena.run("SoftmaxFlashV2Mixed", dt="half", m=2, k=32, update=0, o0=0, od=4096, oi=8192, o4=8448, o1=8704, o2=8960, o3=9216)
    mx = x.astype(np.float64).max(-1)
    np.testing.assert_allclose(_blocks(arena, 8448, np.float32, 2), mx, rtol=1e-6)
    np.testing.assert_allclose(_blocks(arena, 8192, np.float32, 2), np.exp(x - mx[:, None]).sum(-1), rtol=1e-3)


def test_adjust_softmax_res_rewrites_rows_whose_max_matches(arena: Arena):
    res = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    mx = np.repeat(np.array([1.0, -3.4028235e38, 2.0, -3.4028235e38], np.float32)[:, None], 8, 1)
    arena.put(0, res); arena.put(4096, mx)
    arena.run("AdjustSoftMaxRes", dt="float", m=4, k=16, **{"from": 0xFF7FFFFF}, to=0.0, od=0, o0=4096)
    want = res.copy(); want[[1, 3]] = 0
    np.testing.assert_array_equal(arena.get(0, np.float32, 64).reshape(4, 16), want)
    assert arena.scalars()["adjusted"] == "1"
    arena.run("AdjustSoftMaxRes", dt="float", m=4, k=16, **{"from": 0x7FC00000}, to=5.0, od=0, o0=4096)
    assert arena.scalars()["adjusted"] == "0"


@pytest.mark.parametrize("dt,np_dt", [("float", np.float32), ("half", np.float16)])
def test_dropout_byte_and_bit_masks(arena: Arena, dt: str, np_dt):
    rng = np.random.default_rng(12)
    h, w = 4, 64
    x = rng.standard_normal((h, w)).astype(np_dt)
    x[0, 0] = np.inf
    keep = rng.integers(0, 2, (h, w)).astype(np.uint8)
    keep[0, 0] = 1
    arena.put(0, x)
    arena.put(8192, np.pad(keep, ((0, 0), (0, 32))))          # byte mode, rows padded to 96 bytes
    arena.run("DropOut", dt=dt, h=h, w=w, mw=w + 32, keep=0.8, mode=1, o0=0, od=4096, o1=8192)
    want = np.where(keep == 1, x.astype(np.float32) * np.float32(1 / np.float32(0.8)), 0).astype(np_dt)
    np.testing.assert_allclose(arena.get(4096, np_dt, h * w).reshape(h, w), want, rtol=1e-3 if dt == "half" else 1e-6)
    bits = np.packbits(keep, axis=1, bitorder="little")        # bit mode: 8 bytes per row, least significant bit first
    arena.put(8192, bits)
    arena.run("DropOut", dt=dt, h=h, w=w, mw=w // 8, keep=0.8, o0=0, od=4096, o1=8192)
    np.testing.assert_allclose(arena.get(4096, np_dt, h * w).reshape(h, w), want, rtol=1e-3 if dt == "half" else 1e-6)


# ---------------------------------------------------------------- rules

def _scenarios() -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    current = None
    for no, text in enumerate((SRC / RULES_SRC).read_text().splitlines(), start=1):
        m = re.search(r"// SCENARIO: (\w+)", text)
        if m:
            current = m.group(1)
            out[current] = []
            continue
        m = re.search(r"// EXPECT: ([\w.]+)", text)
        if m and current:
            out[current].append((m.group(1), no))
    out.pop("end", None)
    out.pop("name", None)     # the marker's description in the header comment
    return out


RULES = _scenarios()


def test_every_scenario_is_dispatched():
    main = (SRC / RULES_SRC).read_text().split("int main", 1)[1]
    assert set(RULES) == set(re.findall(r"S\((\w+)\)", main)) - {"name"}
    assert RULES["clean_basic_calls"] == [] and RULES["clean_library_calls"] == []


@pytest.mark.parametrize("scenario", sorted(RULES))
def test_rule_reported_with_id_and_line(cov_rules_bin: Path, scenario: str):
    arch = 3510 if scenario.endswith("_950") else 2002 if scenario.endswith("_310p") else 2201
    r = subprocess.run([str(cov_rules_bin), scenario, str(arch)], capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 86), r.stderr
    found = [d for d in parse_diags(r.stderr) if "id" in d]
    assert sorted((d["id"], d["line"]) for d in found) == sorted(RULES[scenario]), r.stderr


def test_rule_ids_have_cards():
    repo = Path(__file__).resolve().parents[1]
    cards = "\n".join(p.read_text() for p in (repo / "knowledge" / "cards").rglob("*.md"))
    for ident in {i for exp in RULES.values() for i, _ in exp}:
        assert f"id: {ident}\n" in cards, ident


def test_registry_lists_the_new_apis_as_emulated_with_forms_and_dtypes():
    from copilot.backends.sim.api_registry import registry

    doc = registry().to_json()
    by = {a["name"]: a for a in doc["apis"]}
    new = ("AddReluCast", "SubReluCast", "MulCast", "AddDeqRelu", "MulAddRelu", "Copy", "PairReduceSum",
           "GetDataBlockSizeInBytes", "GetICachePreloadStatus", "GetProgramCounter", "InitSocState", "Pad", "UnPad", "SoftmaxFlash",
           "Broadcast", "GetBroadcastTilingInfo", "Fill", "BatchNorm", "DeepNorm", "GroupNorm", "LayerNormGrad",
           "LayerNormGradBeta", "WelfordUpdate", "WelfordFinalize", "SoftmaxFlashV2", "SoftMaxFlashV2TilingFunc",
           "AdjustSoftMaxRes", "DropOut", "GetCmpMask", "SetCmpMask", "GetReduceRepeatSumSpr", "SetNextTaskStart")
    for name in new:
        assert by[name]["status"] == "emulated", name
    assert set(by["AddReluCast"]["forms"]) == {"count", "mask-bit", "mask-continuous"}
    assert set(by["PairReduceSum"]["forms"]) == {"mask-bit", "mask-continuous"}
    assert by["MulCast"]["dtypes"]["A2"] == ["half"] and "int64_t" in by["MulCast"]["dtypes"]["950"]
    assert "bfloat16_t" in by["DropOut"]["dtypes"]["950"] and "bfloat16_t" not in by["DropOut"]["dtypes"]["A2"]
    fams = doc["families"]["A2"]
    assert sum(f["emulated"] for f in fams.values()) >= 0.9 * sum(f["supported"] for f in fams.values())
