"""The emulator's high-level Matmul API (issue 17): Matmul<A, B, C, Bias> tiled by the host's
MatmulApiTiling, against torch; its misuse rules; a MIX kernel through the launcher (slow).

`tests/sim_device/matmul_main.cpp` runs one cube core (ASCENDC_CUBE_ONLY): host GetTiling, then
REGIST_MATMUL_OBJ / SetTensorA/B / SetBias / IterateAll or Iterate + GetTensorC, on the emulated
DataCopy ND2NZ, L1 -> L0 loads, Mmad and Fixpipe.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.test_sim_device import REPO, SRC, _build

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

_TORCH = {"half": torch.float16, "bf16": torch.bfloat16, "float": torch.float32, "int8": torch.int8}


@pytest.fixture(scope="module")
def mm_bin() -> Path:
    return _build("matmul_main")


def _raw(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def _run(binary: Path, tmp: Path, dtype: str, m: int, n: int, k: int, *, ta=0, tb=0, bias=0, mode="all",
         out="same", fix: str | None = None, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    if dtype == "int8":
        a = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
        b = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
        bv = torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int32)
    else:
        a = (torch.rand(m, k, generator=g) * 2 - 1).to(_TORCH[dtype])
        b = (torch.rand(k, n, generator=g) * 2 - 1).to(_TORCH[dtype])
        bv = torch.rand(n, generator=g) * 2 - 1
    _raw(a.T.contiguous() if ta else a).tofile(tmp / "a.bin")
    _raw(b.T.contiguous() if tb else b).tofile(tmp / "b.bin")
    bv.numpy().tofile(tmp / "bias.bin")
    args = [str(binary), f"dtype={dtype}", f"m={m}", f"n={n}", f"k={k}", f"ta={ta}", f"tb={tb}", f"bias={bias}",
            f"mode={mode}", f"out={out}", f"a={tmp / 'a.bin'}", f"b={tmp / 'b.bin'}", f"bias_file={tmp / 'bias.bin'}",
            f"c={tmp / 'c.bin'}"] + ([f"fix={fix}"] if fix else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    odt = {"same": np.int32 if dtype == "int8" else np.float32, "half": np.float16, "bf16": np.int16}[out]
    c = np.fromfile(tmp / "c.bin", dtype=odt)
    res = torch.from_numpy(c.copy()).view(torch.bfloat16).double() if out == "bf16" else torch.from_numpy(c.astype(np.float64))
    ref = a.double() @ b.double() + (bv.double() if bias else 0)
    return res.reshape(m, n), ref, json.loads(lines[0]), json.loads(lines[-1])


@pytest.mark.parametrize("dtype,m,n,k,ta,tb,bias,mode", [
    ("half", 40, 48, 70, 0, 0, 1, "all"),       # tails in every dim, bias
    ("half", 33, 100, 64, 0, 1, 0, "iter"),     # B given as [N, K]
    ("half", 20, 24, 40, 1, 0, 0, "all"),       # A given as [K, M]
    ("bf16", 33, 100, 64, 1, 1, 1, "iter"),
    ("float", 17, 24, 20, 0, 1, 1, "all"),
    ("float", 17, 24, 20, 1, 0, 0, "all"),      # fp32 transposes (no LoadDataWithTranspose b32 on the chip's side)
    ("int8", 48, 40, 96, 0, 0, 1, "all"),
    ("int8", 33, 64, 100, 0, 1, 0, "iter"),
])
def test_matmul_api_matches_torch(mm_bin, tmp_path, dtype, m, n, k, ta, tb, bias, mode):
    res, ref, _, _ = _run(mm_bin, tmp_path, dtype, m, n, k, ta=ta, tb=tb, bias=bias, mode=mode)
    if dtype == "int8":          # int8 x int8 -> int32 is exact
        assert torch.equal(res, ref)
    else:
        torch.testing.assert_close(res, ref, rtol=1e-5, atol=1e-5 * k)


def test_fp16_and_bf16_outputs_round_as_torch(mm_bin, tmp_path):
    res, ref, _, _ = _run(mm_bin, tmp_path, "half", 20, 32, 48, out="half")
    torch.testing.assert_close(res, ref.float().half().double(), rtol=1e-3, atol=1e-3)
    res, ref, _, _ = _run(mm_bin, tmp_path, "bf16", 16, 32, 64, out="bf16")
    torch.testing.assert_close(res, ref.float().bfloat16().double(), rtol=0, atol=0)


def test_many_tiles_and_k_chunks(mm_bin, tmp_path):
    """Base blocks far below the shape: several tiles per core, K over several L0 steps and L1 chunks."""
    res, ref, tiling, _ = _run(mm_bin, tmp_path, "half", 150, 130, 300, bias=1, mode="iter", fix="32,48,32")
    assert (tiling["baseM"], tiling["baseN"], tiling["baseK"]) == (32, 48, 32)
    torch.testing.assert_close(res, ref, rtol=1e-5, atol=1e-5 * 300)


def test_b_panel_reused_across_tiles(mm_bin, tmp_path):
    """iterateOrder 0 walks M first: the tiles of one N column share B's L1 panel when K fits in it."""
    _, _, tiling, counters = _run(mm_bin, tmp_path, "half", 256, 64, 64, fix="64,64,32")
    assert tiling["stepKa"] * 32 >= 64                      # K fits in one L1 chunk
    copies = {c["api"]: c for c in counters["counters"] if c["pipe"] == "MTE2"}
    assert copies["DataCopy"]["calls"] == 4 + 1             # four A panels, one B panel (not four)


def test_host_tiling_fits_the_chip(mm_bin, tmp_path):
    _, _, t, counters = _run(mm_bin, tmp_path, "half", 256, 512, 128)
    assert (t["baseM"], t["baseN"], t["baseK"]) == (128, 256, 64)   # the reference's recommended blocks
    assert t["dbL0C"] == 1                                  # 128 x 256 x 4 B is all of L0C
    assert t["stepKa"] * t["baseK"] >= 128                  # K whole in L1
    by = {(c["pipe"], c["api"]): c for c in counters["counters"]}
    assert by[("M", "Mmad")]["elements"] == 256 * 512 * 128  # every MAC once, whole fractals


RULES = [(line.split(":")[0].split()[-1], line.split(":")[1].strip())
         for line in (SRC / "matmul_main.cpp").read_text().splitlines() if line.startswith("// EXPECT ")]


@pytest.mark.parametrize("scenario,expected", RULES)
def test_rule_ids(mm_bin, scenario, expected):
    r = subprocess.run([str(mm_bin), f"rule={scenario}"], capture_output=True, text=True, timeout=30)
    ids = {json.loads(ln)["id"] for ln in r.stdout.splitlines() + r.stderr.splitlines()
           if ln.startswith('{"id"')}
    if expected == "none":
        assert ids == set() and r.returncode == 0, r.stderr
    else:
        assert expected in ids, r.stderr


CANNBENCH = REPO.parent / "shared" / "cannbench"
MM_API = REPO / "bench" / "cube_kernels" / "matmul_api.cpp"
TASK = REPO / "tests" / "data" / "cube_mm_api"


@pytest.mark.slow
def test_mix_kernel_with_the_matmul_api():
    """A MIX kernel: each AIV's Matmul calls run on its block's AIC (IterateAll and Iterate/GetTensorC),
    every dtype of the test task, tails, B transposed."""
    from copilot.backends.sim import check_kernel

    report = check_kernel(MM_API, str(TASK), cases="1,2,3,4", timeout=300)
    assert report.compiled, [d.message for d in report.diagnostics]
    assert report.correct, ([(c.id, c.message) for c in report.cases if not c.passed],
                            [(d.id, d.message) for d in report.diagnostics])
    assert not [d for d in report.diagnostics if d.severity == "error"]
