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
        assert r.returncode == 0, r.stderr
        self.diags = [d for d in parse_diags(r.stderr) if "id" in d]
        self.stdout = r.stdout
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
    assert RULES["clean_basic_calls"] == []


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
