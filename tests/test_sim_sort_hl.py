"""Sort instructions and the high-level libraries of the emulator, checked against numpy.

`tests/sim_device/hl_main.cpp` is compiled once per content hash against the emulator headers; it
copies an arena file into one UB buffer, runs one API on views at byte offsets and writes the arena
back. Rule scenarios are in `tests/sim_device/hl_rules_main.cpp` (`// EXPECT: <id>` lines).
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

REPO = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required"),
              pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]

NP = {"half": np.float16, "float": np.float32}


@pytest.fixture(scope="session")
def hl_bin() -> Path:
    return _build("hl_main")


@pytest.fixture(scope="session")
def hl_rules_bin() -> Path:
    return _build("hl_rules_main")


class Arena:
    """One UB buffer: numpy arrays placed at byte offsets, the API run, the bytes read back."""

    def __init__(self, binary: Path, tmp: Path, size: int = 64 * 1024):
        self.binary, self.tmp = binary, tmp
        self.buf = np.zeros(size, np.uint8)
        self.diags: list[dict] = []
        self.stdout = ""

    def put(self, off: int, arr: np.ndarray) -> int:
        b = np.ascontiguousarray(arr).view(np.uint8).ravel()
        self.buf[off:off + b.size] = b
        return off

    def get(self, off: int, dtype, n: int) -> np.ndarray:
        return self.buf[off:off + n * np.dtype(dtype).itemsize].copy().view(dtype)

    def run(self, op: str, dtype: str, expect_ok: bool = True, **kw) -> "Arena":
        src, out = self.tmp / "arena.bin", self.tmp / "arena.out"
        self.buf.tofile(src)
        args = [str(self.binary), f"op={op}", f"dtype={dtype}", f"arena={src}", f"out={out}"]
        args += [f"{k}={v if isinstance(v, float) else int(v)}" for k, v in kw.items()]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        self.diags = [d for d in parse_diags(r.stderr) if "id" in d]
        self.stdout = r.stdout
        assert r.returncode == 0, r.stderr
        self.buf = np.fromfile(out, np.uint8)
        if expect_ok:
            assert self.diags == [], self.diags
        return self

    def counters(self) -> list[dict]:
        line = [ln for ln in self.stdout.splitlines() if ln.startswith('{"block"')][-1]
        return json.loads(line)["counters"]


@pytest.fixture
def arena(hl_bin: Path, tmp_path: Path) -> Arena:
    return Arena(hl_bin, tmp_path)


def structs(a: Arena, off: int, dtype: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, indices) of n 8-byte sort structures: score in the low bytes, index in bytes 4..7."""
    raw = a.get(off, np.uint8, n * 8).reshape(n, 8)
    score = raw[:, :np.dtype(NP[dtype]).itemsize].copy().view(NP[dtype]).ravel()
    index = raw[:, 4:8].copy().view(np.uint32).ravel()
    return score, index


def ref_desc(scores: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Stable descending order, NaN first (the documented tie rule: the earlier input first)."""
    key = np.where(np.isnan(scores.astype(np.float64)), np.inf, scores.astype(np.float64))
    nanfirst = np.isnan(scores.astype(np.float64))
    order = np.lexsort((np.arange(len(scores)), -key, ~nanfirst))
    return scores[order], index[order]


def assert_same(got: np.ndarray, want: np.ndarray):
    np.testing.assert_array_equal(got.view(np.uint16 if got.itemsize == 2 else np.uint32),
                                  want.view(np.uint16 if want.itemsize == 2 else np.uint32))


# ---------------------------------------------------------------- Sort32 / Sort / Extract / Concat

@pytest.mark.parametrize("dtype", ["float", "half"])
def test_sort32_sorts_each_group_of_32_descending_with_ties_nan_and_inf(arena: Arena, dtype: str):
    rng = np.random.default_rng(0)
    s = rng.integers(-5, 5, 128).astype(NP[dtype])           # many ties
    s[[3, 40, 77]] = np.nan
    s[[5, 90]] = np.inf
    s[[6, 100]] = -np.inf
    idx = np.arange(1000, 1128, dtype=np.uint32)
    arena.put(0, s); arena.put(1024, idx)
    arena.run("sort32", dtype, o0=0, o1=1024, od=4096, repeat=4)
    got_s, got_i = structs(arena, 4096, dtype, 128)
    for r in range(4):
        ws, wi = ref_desc(s[r * 32:(r + 1) * 32], idx[r * 32:(r + 1) * 32])
        assert_same(got_s[r * 32:(r + 1) * 32], ws)
        np.testing.assert_array_equal(got_i[r * 32:(r + 1) * 32], wi)
    if dtype == "half":   # the two reserved bytes of each half structure
        raw = arena.get(4096, np.uint8, 128 * 8).reshape(128, 8)
        assert (raw[:, 2:4] == 0).all()


@pytest.mark.parametrize("dtype", ["float", "half"])
def test_full_sort_then_extract_gives_the_stable_descending_order(arena: Arena, dtype: str):
    rng = np.random.default_rng(1)
    n = 256
    s = rng.integers(-20, 20, n).astype(NP[dtype])
    s[17] = np.nan
    idx = np.arange(n, dtype=np.uint32)
    arena.put(0, s); arena.put(2048, idx)
    arena.run("sort", dtype, o0=0, o1=2048, od=4096, ot=8192, st=n * 8 // np.dtype(NP[dtype]).itemsize,
              repeat=n // 32, full=1)
    arena.run("extract", dtype, o0=4096, od=16384, oi=20480, repeat=n // 32)
    ws, wi = ref_desc(s, idx)
    assert_same(arena.get(16384, NP[dtype], n), ws)
    np.testing.assert_array_equal(arena.get(20480, np.uint32, n), wi)


def test_sort_without_full_sort_sorts_per_repeat_and_concat_copies(arena: Arena):
    s = np.arange(64, dtype=np.float32)
    arena.put(0, s); arena.put(1024, np.arange(64, dtype=np.uint32))
    arena.run("concat", "float", o0=0, od=512, ot=8192, repeat=4)
    assert_same(arena.get(512, np.float32, 64), s)
    arena.run("sort", "float", o0=512, o1=1024, od=4096, ot=8192, repeat=2, full=0)
    got, idx = structs(arena, 4096, "float", 64)
    assert_same(got, np.concatenate([s[:32][::-1], s[32:][::-1]]))
    np.testing.assert_array_equal(idx, np.concatenate([np.arange(32)[::-1], np.arange(32, 64)[::-1]]))


# ---------------------------------------------------------------- MrgSort

def _sorted_queue(a: Arena, off: int, scores: np.ndarray, first_index: int, dtype: str):
    raw = np.zeros((len(scores), 8), np.uint8)
    ws, wi = ref_desc(scores.astype(NP[dtype]), np.arange(first_index, first_index + len(scores), dtype=np.uint32))
    raw[:, :np.dtype(NP[dtype]).itemsize] = ws.view(np.uint8).reshape(len(scores), -1)
    raw[:, 4:8] = wi.view(np.uint8).reshape(len(scores), 4)
    a.put(off, raw)
    return ws, wi


@pytest.mark.parametrize("form", ["mrgsort4", "mrgsort"])
@pytest.mark.parametrize("dtype", ["float", "half"])
def test_mrgsort_merges_four_queues_ties_to_the_earlier_queue(arena: Arena, form: str, dtype: str):
    rng = np.random.default_rng(2)
    lens = [32, 16, 8, 24]
    offs, all_s, all_i = [0, 512, 1024, 1536], [], []
    for q, (o, n) in enumerate(zip(offs, lens)):
        ws, wi = _sorted_queue(arena, o, rng.integers(-4, 4, n).astype(np.float32), q * 100, dtype)
        all_s.append(ws); all_i.append(wi)
    arena.run(form, dtype, o0=0, o1=512, o2=1024, o3=1536, od=4096, l0=32, l1=16, l2=8, l3=24, valid=15, repeat=1)
    s_cat, i_cat = np.concatenate(all_s), np.concatenate(all_i)
    ws, wi = ref_desc(s_cat, i_cat)          # stable over the queue order = earlier queue first
    gs, gi = structs(arena, 4096, dtype, 80)
    assert_same(gs, ws)
    np.testing.assert_array_equal(gi, wi)


def test_mrgsort_exhausted_suspension_stops_and_reports_counts(arena: Arena):
    _sorted_queue(arena, 0, np.array([9, 7, 5, 3], np.float32), 0, "float")
    _sorted_queue(arena, 512, np.array([8, 6], np.float32), 10, "float")
    arena.run("mrgsort4", "float", o0=0, o1=512, o2=1024, o3=1536, od=4096, l0=4, l1=2, l2=0, l3=0, valid=3,
              exhaust=1)
    assert "consumed 2 2 0 0" in arena.stdout
    gs, gi = structs(arena, 4096, "float", 4)
    np.testing.assert_array_equal(gs, [9, 8, 7, 6])
    np.testing.assert_array_equal(gi, [0, 10, 1, 11])
    arena.run("mrgsort", "float", o0=0, o1=512, o2=1024, o3=1536, od=8192, l0=4, l1=2, valid=3, exhaust=1)
    assert "consumed 2 2 0 0" in arena.stdout


def test_mrgsort_repeat_merges_consecutive_groups(arena: Arena):
    rng = np.random.default_rng(3)
    groups = []
    for g in range(2):
        for q in range(4):
            groups.append(_sorted_queue(arena, (g * 4 + q) * 32 * 8, rng.normal(size=32).astype(np.float32),
                                        (g * 4 + q) * 32, "float"))
    arena.run("mrgsort4", "float", o0=0, o1=256, o2=512, o3=768, od=8192, l0=32, l1=32, l2=32, l3=32, valid=15,
              repeat=2)
    for g in range(2):
        s = np.concatenate([groups[g * 4 + q][0] for q in range(4)])
        i = np.concatenate([groups[g * 4 + q][1] for q in range(4)])
        ws, wi = ref_desc(s, i)
        gs, gi = structs(arena, 8192 + g * 128 * 8, "float", 128)
        assert_same(gs, ws)
        np.testing.assert_array_equal(gi, wi)


# ---------------------------------------------------------------- TopK

def ref_topk(x: np.ndarray, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per row: stable order (largest: descending, smallest: ascending), NaN first either way."""
    vals, idxs = [], []
    for row in x:
        f = row.astype(np.float64)
        nan = np.isnan(f)
        key = np.where(nan, 0, -f if largest else f)
        order = np.lexsort((np.arange(len(row)), key, ~nan))[:k]
        vals.append(row[order]); idxs.append(order.astype(np.int32))
    return np.array(vals), np.array(idxs)


@pytest.mark.parametrize("dtype", ["float", "half"])
@pytest.mark.parametrize("largest", [1, 0])
def test_topk_normal_mode_rows_with_padding_ties_nan_inf(arena: Arena, dtype: str, largest: int):
    rng = np.random.default_rng(4)
    outter, inner, k = 3, 64, 8
    x = rng.integers(-6, 6, (outter, inner)).astype(NP[dtype])
    x[0, 5] = np.nan
    x[1, 9] = np.inf
    x[2, 11] = -np.inf
    arena.put(0, x)
    arena.run("topk", dtype, o0=0, od=8192, oi=12288, ot=16384, outter=outter, inner=inner, k=k, largest=largest)
    wv, wi = ref_topk(x, k, bool(largest))
    esz = np.dtype(NP[dtype]).itemsize
    kv = (k + 32 // esz - 1) // (32 // esz) * (32 // esz)
    got_v = arena.get(8192, NP[dtype], outter * kv).reshape(outter, kv)[:, :k]
    got_i = arena.get(12288, np.int32, outter * 8).reshape(outter, 8)[:, :k]
    assert_same(got_v.ravel(), wv.ravel())
    np.testing.assert_array_equal(got_i, wi)


def test_topk_matches_torch_on_distinct_values(arena: Arena):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.permutation(4 * 128).astype(np.float32).reshape(4, 128) / 7
    arena.put(0, x)
    arena.run("topk", "float", o0=0, od=8192, oi=12288, ot=16384, outter=4, inner=128, k=8)
    t = torch.topk(torch.from_numpy(x), 8, dim=-1)
    np.testing.assert_array_equal(arena.get(8192, np.float32, 32).reshape(4, 8), t.values.numpy())
    np.testing.assert_array_equal(arena.get(12288, np.int32, 32).reshape(4, 8), t.indices.numpy())


def test_topk_small_mode_with_given_indices_and_finish_rows(arena: Arena):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(4, 32)).astype(np.float32)
    idx = (np.arange(4 * 32, dtype=np.int32) + 500).reshape(4, 32)
    arena.put(0, x); arena.put(1024, idx)
    arena.run("topk", "float", o0=0, o1=1024, od=8192, oi=12288, ot=16384, outter=4, inner=32, k=5, small=1,
              init=1)
    wv, wi = ref_topk(x, 5, True)
    np.testing.assert_array_equal(arena.get(8192, np.float32, 20).reshape(4, 5), wv)
    np.testing.assert_array_equal(arena.get(12288, np.int32, 20).reshape(4, 5), np.take_along_axis(idx, wi, 1))
    # Normal mode, shared indices, row 1 finished: its indices become n
    fin = np.array([0, 1, 0, 0] + [0] * 28, np.uint8)
    arena.put(2048, fin)
    arena.put(1024, np.arange(32, dtype=np.int32))
    arena.run("topk", "float", o0=0, o1=1024, o2=2048, od=8192, oi=12288, ot=16384, outter=4, inner=32, nvalid=30,
              k=5, init=1, finish=1)
    gi = arena.get(12288, np.int32, 32).reshape(4, 8)[:, :5]
    assert (gi[1] == 30).all()
    np.testing.assert_array_equal(gi[0], wi[0])


def test_topk_cost_is_its_constituent_instructions(arena: Arena):
    x = np.zeros((2, 256), np.float32)
    arena.put(0, x)
    arena.run("topk", "float", o0=0, od=8192, oi=12288, ot=16384, outter=2, inner=256, k=8, largest=0, cost=1)
    apis = {c["api"]: c for c in arena.counters()}
    assert {"Sort32", "MrgSort", "GatherMask", "Muls", "CreateVecIndex"} <= set(apis)
    assert apis["Sort32"]["elements"] == 2 * 256 * 2           # 8-byte structures in float units
    assert apis["MrgSort"]["calls"] == 2                        # 256 = 32 * 4^2: two merge passes


# ---------------------------------------------------------------- math and activation libraries

def _gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _digamma(x):
    torch = pytest.importorskip("torch")
    return torch.special.digamma(torch.from_numpy(x)).numpy()


def _lgamma(x):
    import math
    return np.array([math.lgamma(v) if np.isfinite(v) and not (v <= 0 and v == int(v)) else np.inf
                     for v in x])


UNARY = {
    "Tanh": (np.tanh, (-6, 6)), "Sin": (np.sin, (-10, 10)), "Cos": (np.cos, (-10, 10)), "Tan": (np.tan, (-1.4, 1.4)),
    "Asin": (np.arcsin, (-1, 1)), "Acos": (np.arccos, (-1, 1)), "Atan": (np.arctan, (-20, 20)),
    "Sinh": (np.sinh, (-5, 5)), "Cosh": (np.cosh, (-5, 5)), "Asinh": (np.arcsinh, (-50, 50)),
    "Acosh": (np.arccosh, (1, 50)), "Atanh": (np.arctanh, (-0.99, 0.99)), "Erf": (None, (-3, 3)),
    "Erfc": (None, (-3, 3)), "Frac": (lambda x: x - np.trunc(x), (-9, 9)), "Sign": (np.sign, (-2, 2)),
    "Trunc": (np.trunc, (-9, 9)), "Floor": (np.floor, (-9, 9)), "Ceil": (np.ceil, (-9, 9)),
    "Round": (np.rint, (-9, 9)), "Lgamma": (_lgamma, (0.1, 20)), "Digamma": (_digamma, (0.1, 20)),
    "Sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-10, 10)), "Gelu": (_gelu, (-5, 5)),
    "FasterGelu": (lambda x: x / (1 + np.exp(-1.702 * x)), (-5, 5)),
    "Silu": (lambda x: x / (1 + np.exp(-x)), (-8, 8)), "Log": (np.log, (0.01, 100)),
    "Log2": (np.log2, (0.01, 100)), "Log10": (np.log10, (0.01, 100)), "ExpHL": (np.exp, (-10, 10)),
}


def _erf(x, c=False):
    import math
    f = math.erfc if c else math.erf
    return np.array([f(v) for v in x])


@pytest.mark.parametrize("dtype", ["float", "half"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_elementwise_library_api_matches_numpy(arena: Arena, name: str, dtype: str):
    fn, (lo, hi) = UNARY[name]
    fn = fn or (lambda x, n=name: _erf(x, n == "Erfc"))
    rng = np.random.default_rng(hash(name) % 1000)
    n = 300
    x = rng.uniform(lo, hi, n).astype(NP[dtype])
    x[:3] = [np.nan, np.inf, -np.inf]
    arena.put(0, x)
    tmp = int(name not in ("Silu", "Log", "Log2", "Log10"))
    arena.run(name, dtype, o0=0, od=4096, ot=8192, st=4096, n=n, tmp=tmp)
    got = arena.get(4096, NP[dtype], n).astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.asarray(fn(x.astype(np.float64)), np.float64).astype(NP[dtype]).astype(np.float64)
    fin = np.isfinite(want) & np.isfinite(x)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2e-6 if dtype == "float" else 1e-3, atol=1e-6)
    assert np.isnan(got[0])                                    # NaN in, NaN out
    np.testing.assert_array_equal(np.isnan(got[3:]), np.isnan(want[3:]))


@pytest.mark.parametrize("name,fn", [
    ("Fmod", np.fmod), ("Power", np.power), ("GeGLU", lambda a, b: _gelu(a) * b),
    ("ReGlu", lambda a, b: np.maximum(a, 0) * b), ("SwiGLU", lambda a, b: a / (1 + np.exp(-1.5 * a)) * b)])
def test_binary_library_api_matches_numpy(arena: Arena, name: str, fn):
    rng = np.random.default_rng(7)
    n = 256
    a = rng.uniform(0.5 if name == "Power" else -4, 4, n).astype(np.float32)
    b = rng.uniform(0.5, 3, n).astype(np.float32)
    arena.put(0, a); arena.put(2048, b)
    arena.run(name, "float", o0=0, o1=2048, od=4096, ot=8192, st=4096, n=n, tmp=1, scalar=1.5)
    want = fn(a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(arena.get(4096, np.float32, n), want, rtol=2e-6, atol=1e-6)


def test_power_scalar_forms_clamp_and_swish(arena: Arena):
    x = np.linspace(0.5, 3, 64).astype(np.float32)
    x[0] = np.nan
    arena.put(0, x)
    arena.run("PowerScalar", "float", o0=0, od=4096, n=64, scalar=2.5)
    np.testing.assert_allclose(arena.get(4096, np.float32, 64)[1:], x[1:].astype(np.float64) ** 2.5, rtol=2e-6)
    arena.run("ScalarPower", "float", o0=0, od=4096, n=64, scalar=2.0)
    np.testing.assert_allclose(arena.get(4096, np.float32, 64)[1:], 2.0 ** x[1:].astype(np.float64), rtol=2e-6)
    arena.run("ClampMax", "float", o0=0, od=4096, n=64, scalar=1.0)
    got = arena.get(4096, np.float32, 64)
    assert np.isnan(got[0]) and (got[1:] == np.minimum(x[1:], 1.0)).all()
    arena.run("ClampMin", "float", o0=0, od=4096, ot=8192, st=1024, n=64, scalar=2.0, tmp=1)
    assert (arena.get(4096, np.float32, 64)[1:] == np.maximum(x[1:], 2.0)).all()
    arena.run("Swish", "float", o0=0, od=4096, n=64, scalar=2.0)
    np.testing.assert_allclose(arena.get(4096, np.float32, 64)[1:], (x[1:] / (1 + np.exp(-2.0 * x[1:].astype(np.float64)))),
                               rtol=2e-6)


@pytest.mark.parametrize("dtype,np_t", [("int16", np.int16), ("uint16", np.uint16)])
def test_xor_on_16_bit_integers_with_edge_values(arena: Arena, dtype: str, np_t):
    info = np.iinfo(np_t)
    a = np.array([info.min, info.max, 0, -1 if dtype == "int16" else 1, 12345, 7] * 16, np_t)
    b = np.array([info.max, info.max, info.min, 5, 54321 % (info.max + 1), 7] * 16, np_t)
    arena.put(0, a); arena.put(1024, b)
    arena.run("Xor", dtype, o0=0, o1=1024, od=4096, n=len(a))
    np.testing.assert_array_equal(arena.get(4096, np_t, len(a)), a ^ b)


def test_library_cost_counts_the_constituent_instructions(arena: Arena):
    arena.put(0, np.zeros(1024, np.float32))
    arena.run("Tanh", "float", o0=0, od=4096, ot=8192, st=4096, n=1024, tmp=1, cost=1)
    apis = {c["api"]: c for c in arena.counters()}
    assert set(apis) >= {"Muls", "Exp", "Adds", "Div"}
    assert apis["Adds"]["elements"] == 2 * 1024 and apis["Exp"]["calls"] == 1


# ---------------------------------------------------------------- softmax and norms

def ref_softmax(x, ok):
    v = x[:, :ok].astype(np.float64)
    mx = v.max(axis=1, keepdims=True)
    e = np.exp(v - mx)
    return e / e.sum(axis=1, keepdims=True), mx[:, 0], e.sum(axis=1)


@pytest.mark.parametrize("dtype", ["float", "half"])
@pytest.mark.parametrize("tmp", [1, 0])
def test_softmax_rows_sum_and_max_blocks(arena: Arena, dtype: str, tmp: int):
    rng = np.random.default_rng(8)
    m, k = 6, 64
    x = rng.uniform(-5, 5, (m, k)).astype(NP[dtype])
    x[2, 3] = np.inf                               # a row with +inf gives NaN (inf - inf), as torch does
    arena.put(0, x)
    arena.run("SoftMax", dtype, o0=0, o1=4096, o2=6144, od=8192, ot=16384, st=4096, m=m, k=k, tmp=tmp)
    want, mx, sm = ref_softmax(x, k)
    got = arena.get(8192, NP[dtype], m * k).reshape(m, k).astype(np.float64)
    ok = np.arange(m) != 2
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-3 if dtype == "half" else 1e-6, atol=1e-6)
    assert np.isnan(got[2]).any()
    blk = 32 // np.dtype(NP[dtype]).itemsize
    gmax = arena.get(6144, NP[dtype], m * blk).reshape(m, blk).astype(np.float64)
    gsum = arena.get(4096, NP[dtype], m * blk).reshape(m, blk).astype(np.float64)
    assert (gmax == gmax[:, :1]).all() and (gsum[ok] == gsum[ok][:, :1]).all()   # one value per 32-byte block
    np.testing.assert_allclose(gmax[ok, 0], mx[ok].astype(NP[dtype]), rtol=0)
    np.testing.assert_allclose(gsum[ok, 0], sm[ok], rtol=1e-3 if dtype == "half" else 1e-6)


def test_softmax_forms_padding_simple_log_and_mixed_types(arena: Arena):
    rng = np.random.default_rng(9)
    m, k, ok = 4, 32, 20
    x = rng.normal(size=(m, k)).astype(np.float32)
    arena.put(0, x)
    arena.run("SoftMax", "float", o0=0, od=8192, ot=16384, st=4096, m=m, k=k, ok=ok, tmp=1, nosummax=1)
    want, mx, sm = ref_softmax(x, ok)
    got = arena.get(8192, np.float32, m * k).reshape(m, k)
    np.testing.assert_allclose(got[:, :ok], want, rtol=1e-6)
    assert (got[:, ok:] == 0).all()
    arena.run("LogSoftMax", "float", o0=0, o1=4096, o2=6144, od=8192, ot=16384, st=4096, m=m, k=k)
    np.testing.assert_allclose(arena.get(8192, np.float32, m * k).reshape(m, k),
                               np.log(ref_softmax(x, k)[0]), rtol=1e-5, atol=1e-6)
    # SimpleSoftMax reuses the sum and max just written
    arena.run("SoftMax", "float", o0=0, o1=4096, o2=6144, od=8192, m=m, k=k)
    arena.run("SimpleSoftMax", "float", o0=0, o1=4096, o2=6144, od=12288, m=m, k=k)
    np.testing.assert_allclose(arena.get(12288, np.float32, m * k), arena.get(8192, np.float32, m * k), rtol=1e-6)
    xh = x.astype(np.float16)
    arena.put(0, xh)
    arena.run("SoftMaxMixed", "half", o0=0, o1=4096, o2=6144, od=8192, ot=16384, st=4096, m=m, k=k, tmp=1)
    ws, wm, wsum = ref_softmax(xh, k)
    np.testing.assert_allclose(arena.get(6144, np.float32, m * 8).reshape(m, 8)[:, 0], wm, rtol=0)
    np.testing.assert_allclose(arena.get(4096, np.float32, m * 8).reshape(m, 8)[:, 0], wsum, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float", "half"])
def test_rms_norm_and_layer_norm_rows(arena: Arena, dtype: str):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(10)
    b, s, h, oh = 2, 3, 64, 48
    x = rng.normal(size=(b, s, h)).astype(NP[dtype])
    g = rng.uniform(0.5, 1.5, h).astype(NP[dtype])
    be = rng.normal(size=h).astype(NP[dtype])
    arena.put(0, x); arena.put(2048, g); arena.put(3072, be)
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "half" else dict(rtol=1e-5, atol=1e-6)
    arena.run("RmsNorm", dtype, o0=0, o1=2048, od=8192, ot=16384, st=8192, b=b, s=s, h=h, tmp=1, eps=1e-5)
    xf = torch.from_numpy(x.astype(np.float64))
    want = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * torch.from_numpy(g.astype(np.float64))).numpy()
    np.testing.assert_allclose(arena.get(8192, NP[dtype], b * s * h).reshape(b, s, h), want, **tol)
    arena.run("LayerNorm", dtype, o0=0, o1=2048, o2=3072, oi=4096, o3=5120, od=8192, ot=16384, st=8192, b=b, s=s, h=h,
              oh=oh, tmp=1, eps=1e-5)
    xv = xf[..., :oh]
    ln = torch.nn.functional.layer_norm(xv, (oh,), torch.from_numpy(g[:oh].astype(np.float64)),
                                        torch.from_numpy(be[:oh].astype(np.float64)), eps=1e-5).numpy()
    got = arena.get(8192, NP[dtype], b * s * h).reshape(b, s, h)
    np.testing.assert_allclose(got[..., :oh], ln, **tol)
    np.testing.assert_allclose(arena.get(4096, NP[dtype], b * s), xv.mean(-1).numpy().ravel(), **tol)
    np.testing.assert_allclose(arena.get(5120, NP[dtype], b * s), xv.var(-1, unbiased=False).numpy().ravel(), **tol)


def test_softmax_grad_and_front(arena: Arena):
    rng = np.random.default_rng(15)
    m, k = 3, 16
    g = rng.normal(size=(m, k)).astype(np.float32)
    y = rng.uniform(0, 1, (m, k)).astype(np.float32)
    arena.put(0, g); arena.put(1024, y)
    s = (g.astype(np.float64) * y).sum(axis=1, keepdims=True)
    arena.run("SoftmaxGrad", "float", o0=0, o1=1024, od=4096, ot=8192, st=4096, m=m, k=k)
    np.testing.assert_allclose(arena.get(4096, np.float32, m * k).reshape(m, k), (g - s) * y, rtol=1e-5, atol=1e-6)
    arena.run("SoftmaxGrad", "float", o0=0, o1=1024, od=4096, ot=8192, st=4096, m=m, k=k, front=1)
    np.testing.assert_allclose(arena.get(4096, np.float32, m * k).reshape(m, k), np.broadcast_to(s, (m, k)), rtol=1e-6)
    arena.run("SoftmaxGradFront", "float", o0=0, o1=1024, od=4096, ot=8192, st=4096, m=m, k=k)
    np.testing.assert_allclose(arena.get(4096, np.float32, m * 8).reshape(m, 8), np.broadcast_to(s, (m, 8)), rtol=1e-6)


@pytest.mark.parametrize("first", [0, 1])
def test_cumsum_rows_or_columns_with_last_row(arena: Arena, first: int):
    x = np.random.default_rng(16).normal(size=(4, 16)).astype(np.float32)
    x[1, 2] = np.inf
    arena.put(0, x)
    arena.run("CumSum", "float", o0=0, od=4096, oi=6144, ot=8192, st=4096, outter=4, inner=16, first=first)
    want = np.cumsum(x.astype(np.float64), axis=0 if first else 1).astype(np.float32)
    np.testing.assert_allclose(arena.get(4096, np.float32, 64).reshape(4, 16), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(arena.get(6144, np.float32, 16), arena.get(4096 + 48 * 4, np.float32, 16))


@pytest.mark.parametrize("dtype", ["float", "half"])
def test_normalize_with_given_mean_and_variance(arena: Arena, dtype: str):
    rng = np.random.default_rng(17)
    a, r, rp = 3, 40, 48
    x = rng.normal(size=(a, rp)).astype(NP[dtype])
    mu = x[:, :r].astype(np.float32).mean(axis=1).astype(np.float32)
    var = x[:, :r].astype(np.float32).var(axis=1).astype(np.float32)
    g = rng.uniform(0.5, 1.5, r).astype(np.float32); b = rng.normal(size=r).astype(np.float32)
    arena.put(0, x); arena.put(1024, mu); arena.put(1536, var); arena.put(2048, g); arena.put(3072, b)
    arena.run("Normalize", dtype, o0=0, o1=1024, o2=1536, o3=2048, o4=3072, oi=3584, od=4096, ot=8192, st=4096,
              a=a, r=r, rp=rp, eps=1e-5)
    rstd = 1 / np.sqrt(var.astype(np.float64) + 1e-5)
    want = ((x[:, :r].astype(np.float64) - mu[:, None]) * rstd[:, None] * g + b).astype(NP[dtype])
    got = arena.get(4096, NP[dtype], a * rp).reshape(a, rp)[:, :r]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3 if dtype == "half" else 1e-6,
                               atol=1e-3 if dtype == "half" else 1e-6)
    np.testing.assert_allclose(arena.get(3584, np.float32, a), rstd, rtol=1e-6)


# ---------------------------------------------------------------- quantization

def ref_quant(x, scale, offset):
    h = lambda v: np.asarray(v, np.float64).astype(np.float16).astype(np.float64)  # noqa: E731
    y = h(h(h(x) * h(scale)) + h(offset))
    out = np.clip(np.rint(np.nan_to_num(y, nan=0.0, posinf=127, neginf=-128)), -128, 127)
    return out.astype(np.int8)


@pytest.mark.parametrize("dtype", ["float", "half"])
def test_ascend_quant_rounds_half_to_even_and_saturates(arena: Arena, dtype: str):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 200, -300, np.nan, np.inf, -np.inf, 3.2, -7.7] * 8, NP[dtype])
    arena.put(0, x)
    arena.run("AscendQuant", dtype, o0=0, od=4096, ot=8192, st=1024, n=len(x), tmp=1, scale=1.0, offset=0.0)
    np.testing.assert_array_equal(arena.get(4096, np.int8, len(x)), ref_quant(x, 1.0, 0.0))
    arena.run("AscendQuant", dtype, o0=0, od=4096, n=len(x), scale=0.37, offset=1.25)
    np.testing.assert_array_equal(arena.get(4096, np.int8, len(x)), ref_quant(x, 0.37, 1.25))
    sc = np.linspace(0.1, 2, 16).astype(NP[dtype]); of = np.linspace(-3, 3, 16).astype(NP[dtype])
    arena.put(1024, sc); arena.put(2048, of)
    arena.run("AscendQuant", dtype, o0=0, o1=1024, o2=2048, od=4096, ot=8192, st=1024, n=len(x), perchannel=1,
              sc=16, oc=16)
    idx = np.arange(len(x)) % 16
    np.testing.assert_array_equal(arena.get(4096, np.int8, len(x)), ref_quant(x, sc[idx], of[idx]))


def test_ascend_dequant_rows_and_antiquant(arena: Arena):
    rng = np.random.default_rng(11)
    m, n, cal = 3, 16, 12
    src = rng.integers(-2**31, 2**31 - 1, (m, n), dtype=np.int64).astype(np.int32)
    src[0, :3] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0]
    scale = rng.uniform(-1e-3, 1e-3, n).astype(np.float32)
    arena.put(0, src); arena.put(1024, scale)
    arena.run("AscendDequant", "float", o0=0, o1=1024, od=4096, ot=8192, st=1024, m=m, ncols=n, cal=cal)
    got = arena.get(4096, np.float32, m * n).reshape(m, n)[:, :cal]
    np.testing.assert_array_equal(got, src[:, :cal].astype(np.float32) * scale[:cal])
    arena.run("AscendDequant", "half", o0=0, o1=1024, od=4096, ot=8192, st=1024, m=m, ncols=n, cal=cal)
    got = arena.get(4096, np.float16, m * 16).reshape(m, 16)[:, :cal]
    np.testing.assert_array_equal(got, (src[:, :cal].astype(np.float32) * scale[:cal]).astype(np.float16))
    k, cols = 4, 32
    q = rng.integers(-128, 128, (k, cols)).astype(np.int8)
    q[0, :2] = [-128, 127]
    off = rng.uniform(-2, 2, cols).astype(np.float16); sc = rng.uniform(0, 1, cols).astype(np.float16)
    arena.put(0, q); arena.put(1024, off); arena.put(2048, sc)
    arena.run("AscendAntiQuant", "half", o0=0, s0=k * cols, o1=1024, s1=cols, o2=2048, s2=cols, od=4096, ot=8192,
              st=1024, k=k)
    want = ((q.astype(np.float32) + off.astype(np.float32)) * sc.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(arena.get(4096, np.float16, k * cols).reshape(k, cols), want)
    arena.run("AscendAntiQuant", "half", o0=0, s0=k * cols, od=4096, ot=8192, st=1024, k=k, scalar=1, offset=1.0,
              scale=0.5)
    want = ((q.astype(np.float32) + 1.0) * 0.5).astype(np.float16)
    np.testing.assert_array_equal(arena.get(4096, np.float16, k * cols).reshape(k, cols), want)


# ---------------------------------------------------------------- the reduce library

@pytest.mark.parametrize("name,fn", [("ReduceSum", np.sum), ("ReduceMax", np.max), ("ReduceMin", np.min),
                                     ("ReduceMean", np.mean), ("ReduceProd", np.prod),
                                     ("ReduceAny", lambda v, axis: np.any(v != 0, axis=axis)),
                                     ("ReduceAll", lambda v, axis: np.all(v != 0, axis=axis))])
@pytest.mark.parametrize("ra", [0, 1])
def test_pattern_reductions_ar_and_ra(arena: Arena, name: str, fn, ra: int):
    rng = np.random.default_rng(12)
    d0, d1 = 5, 20                                  # rows stored padded to 32 bytes: 24 floats
    x = rng.uniform(0.5, 1.5, (d0, 24)).astype(np.float32)
    if name in ("ReduceAny", "ReduceAll"):
        x = (rng.random((d0, 24)) < 0.7).astype(np.float32)
        x[1, :d1] = 1.0
        x[2, :d1] = 0.0
    arena.put(0, x)
    arena.run(name, "float", o0=0, od=4096, ot=8192, st=4096, d0=d0, d1=d1, pad=1, ra=ra)
    v = x[:, :d1].astype(np.float64)
    want = np.asarray(fn(v, axis=0 if ra else 1), np.float64).astype(np.float32)
    np.testing.assert_allclose(arena.get(4096, np.float32, len(want)), want, rtol=1e-6)


def test_sum_mean_rows_nan_and_xor_sum(arena: Arena):
    x = np.arange(3 * 16, dtype=np.float32).reshape(3, 16)
    x[2, 3] = np.nan
    arena.put(0, x)
    arena.run("Sum", "float", o0=0, od=4096, ot=8192, st=1024, outter=3, inner=16, nvalid=10, tmp=1)
    got = arena.get(4096, np.float32, 3)
    np.testing.assert_array_equal(got[:2], x[:2, :10].sum(axis=1))
    assert np.isnan(got[2])
    arena.run("Mean", "float", o0=0, od=4096, outter=3, inner=16, nvalid=16)
    np.testing.assert_allclose(arena.get(4096, np.float32, 2), x[:2].mean(axis=1), rtol=1e-7)
    a = np.array([1, 2, 3, -1, 32767, -32768] * 4, np.int16); b = np.array([3, 2, 1, 0, 1, 1] * 4, np.int16)
    arena.put(0, a); arena.put(1024, b)
    arena.run("ReduceXorSum", "int16", o0=0, o1=1024, od=4096, n=len(a))
    want = np.array((a ^ b).astype(np.int64).sum()).astype(np.int16)     # wrapped to int16
    assert arena.get(4096, np.int16, 1)[0] == want


def test_repeat_reduce_sum_one_value_per_repeat(arena: Arena):
    x = np.random.default_rng(14).uniform(-1, 1, 512).astype(np.float32)
    arena.put(0, x)
    arena.run("RepeatReduceSum", "float", o0=0, od=4096, repeat=8, mask=48, dr=2, sr=8)
    got = arena.get(4096, np.float32, 16)[::2]
    np.testing.assert_allclose(got, x.reshape(8, 64)[:, :48].sum(axis=1), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- Transpose

def test_transpose_16x16_and_nchw_nhwc(arena: Arena):
    blk = np.arange(256, dtype=np.int16).reshape(16, 16)
    arena.put(0, blk)
    arena.run("Transpose16", "int16", o0=0, od=4096)
    np.testing.assert_array_equal(arena.get(4096, np.int16, 256).reshape(16, 16), blk.T)
    x = np.random.default_rng(13).normal(size=(2, 3, 4, 4)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan
    arena.put(0, x)
    arena.run("TransposeExt", "float", o0=0, od=4096, ot=8192, st=8192, N=2, C=3, H=4, W=4, type=11)
    got = arena.get(4096, np.float32, x.size).reshape(2, 4, 4, 3)
    np.testing.assert_array_equal(got, x.transpose(0, 2, 3, 1))
    arena.put(0, got)
    arena.run("TransposeExt", "float", o0=0, od=4096, ot=8192, st=8192, N=2, C=3, H=4, W=4, type=12)
    np.testing.assert_array_equal(arena.get(4096, np.float32, x.size).reshape(x.shape), x)


# ---------------------------------------------------------------- a hand-written kernel

@pytest.mark.slow
def test_top8_rows_kernel_passes_its_task_with_estimates():
    import os
    import tempfile
    os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))
    from copilot.backends.sim import check_kernel
    report = check_kernel(REPO / "tests" / "kernels" / "sort_hl" / "top8_rows.cpp", str(REPO / "tests" / "fixtures" / "tasks" / "top8_rows"),
                          cases="quick", timeout=120)
    assert report.compiled and report.correct, [(c.id, c.message) for c in report.cases]
    assert len(report.cases) == 8 and not [d for d in report.diagnostics if d.severity == "error"]
    assert all(c.estimate is not None for c in report.cases)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted((REPO / "tests" / "kernels" / "hl_rules").glob("*.cpp")), ids=lambda p: p.stem)
def test_library_rule_kernel_is_reported_with_its_id_and_line(path: Path):
    import os
    import tempfile
    os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))
    from copilot.backends.sim import check_kernel
    text = path.read_text()
    task = re.search(r"--task\s+(\S+)", text).group(1)
    cases = re.search(r"--cases\s+(\S+)", text).group(1)
    expected = [(m.group(1), text.count("\n", 0, m.start()) + 1) for m in re.finditer(r"//\s*EXPECT:\s*([A-Z0-9_.]+)", text)]
    report = check_kernel(path, str(REPO / task), cases=cases, timeout=120)
    got = {(d.id, d.line) for d in report.diagnostics}
    assert set(expected) <= got and not report.correct, sorted(got)


# ---------------------------------------------------------------- rules

def _scenarios(name: str) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    current = None
    for no, text in enumerate((SRC / name).read_text().splitlines(), start=1):
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


RULES = _scenarios("hl_rules_main.cpp")


@pytest.mark.parametrize("scenario", sorted(RULES))
def test_library_rule_reported_with_id_and_line(hl_rules_bin: Path, tmp_path: Path, scenario: str):
    arch = 3510 if scenario.endswith("_950") else 2002 if scenario.endswith("_310p") else 2201
    r = subprocess.run([str(hl_rules_bin), scenario, str(arch)], capture_output=True, text=True, timeout=60)
    found = [d for d in parse_diags(r.stderr) if "id" in d]
    assert r.returncode in (0, 86), r.stderr
    assert sorted((d["id"], d["line"]) for d in found) == sorted(RULES[scenario]), r.stderr


def test_every_new_rule_id_has_a_scenario_and_a_card():
    ids = {i for exp in RULES.values() for i, _ in exp}
    assert {"L2.API_PARAM", "L2.OPERAND_OVERLAP", "L2.TMP_BUFFER", "L2.REPEAT_LIMIT", "L2.DTYPE_UNSUPPORTED"} <= ids
    for ident in ("L2.API_PARAM", "L2.OPERAND_OVERLAP"):
        card = REPO / "knowledge" / "cards" / "L2" / f"{ident.split('.')[1]}.md"
        assert card.exists() and f"id: {ident}" in card.read_text()
    assert RULES["clean_library_calls"] == []
