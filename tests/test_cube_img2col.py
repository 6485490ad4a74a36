"""The emulator's LoadData 3-D form (Load3Dv2, `cannsim/load3d.h`): img2col of an L1 feature map
(C1 x H x W x C0) into L0A, checked against torch's unfold (window, stride, dilation, padding, pad
value, the Zz / Nz fractal layouts) and through Mmad against torch's conv2d; one breaking scenario
per rule id (`tests/sim_device/img2col_main.cpp`, EXPECT lines)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.test_sim_device import SRC, _build

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")

_TORCH = {"half": torch.float16, "bf16": torch.bfloat16, "float": torch.float32, "int8": torch.int8}
_NP = {"half": np.float16, "bf16": np.int16, "float": np.float32, "int8": np.int8}


@pytest.fixture(scope="module")
def binary() -> Path:
    return _build("img2col_main")


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def _from(path: Path, dtype: str) -> torch.Tensor:
    a = np.fromfile(path, dtype=_NP[dtype])
    t = torch.from_numpy(a.copy())
    return t.view(torch.bfloat16) if dtype == "bf16" else t


def _map(dtype, c, h, w, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == "int8":
        return torch.randint(-128, 128, (h, w, c), generator=g, dtype=torch.int8)
    return (torch.rand(h, w, c, generator=g) * 2 - 1).to(_TORCH[dtype])


def _img2col(x, fh, fw, st, dl, pads, padv, c0):
    """The img2col matrix M x K of an (h, w, c) map, K in (c1, kh, kw, c0) order, in fp64."""
    h, w, c = x.shape
    pl, pr, pt, pb = pads
    xx = torch.full((c, h + pt + pb, w + pl + pr), float(padv), dtype=torch.float64)
    xx[:, pt:pt + h, pl:pl + w] = x.double().permute(2, 0, 1)
    cols = torch.nn.functional.unfold(xx[None], (fh, fw), dilation=dl, stride=st)[0]    # (c * fh * fw, M), c major
    c1 = c // c0
    cols = cols.reshape(c1, c0, fh * fw, -1).permute(0, 2, 1, 3).reshape(c1 * fh * fw * c0, -1)
    return cols.T


def _run(binary, tmp, op, dtype, c, h, w, fh, fw, arch=2201, **kw):
    x = _map(dtype, c, h, w)
    _bits(x).tofile(tmp / "x.bin")
    args = [str(binary), f"op={op}", f"dtype={dtype}", f"c={c}", f"h={h}", f"w={w}", f"fh={fh}", f"fw={fw}",
            f"arch={arch}", f"x={tmp / 'x.bin'}", f"out={tmp / 'out.bin'}"] + [f"{k}={v}" for k, v in kw.items()]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    return x


@pytest.mark.parametrize("dtype,c,h,w,fh,fw,kw", [
    ("half", 32, 7, 9, 3, 3, dict(sh=2, sw=1, dh=2, dw=2, pl=1, pr=2, pt=2, pb=1)),
    ("float", 16, 5, 6, 2, 3, dict(pl=1, pr=1, pt=1, pb=1, padv=1.5)),
    ("int8", 32, 6, 5, 3, 2, dict(sh=2, sw=2, pl=1, pt=1)),
    ("bf16", 16, 4, 11, 1, 3, dict(dw=3, pl=3, pr=3)),
    ("half", 16, 9, 9, 3, 3, dict(pl=1, pr=1, pt=1, pb=1, kstart=48, kext=64, mstart=32, mext=49)),
])
@pytest.mark.parametrize("arch", [2201, 3510])
def test_img2col_matches_torch_unfold(binary, tmp_path, dtype, c, h, w, fh, fw, kw, arch):
    x = _run(binary, tmp_path, "img2col", dtype, c, h, w, fh, fw, arch, **kw)
    c0 = 32 // x.element_size()
    st, dl = (kw.get("sh", 1), kw.get("sw", 1)), (kw.get("dh", 1), kw.get("dw", 1))
    pads = (kw.get("pl", 0), kw.get("pr", 0), kw.get("pt", 0), kw.get("pb", 0))
    full = _img2col(x, fh, fw, st, dl, pads, kw.get("padv", 0), c0)
    m0, k0 = kw.get("mstart", 0), kw.get("kstart", 0)
    m1, k1 = m0 + kw.get("mext", full.shape[0] - m0), k0 + kw.get("kext", full.shape[1] - k0)
    want = full[m0:m1, k0:k1]
    mb, kb = -(-want.shape[0] // 16), -(-want.shape[1] // c0)
    pad = torch.zeros(mb * 16, kb * c0, dtype=torch.float64)
    pad[:want.shape[0], :want.shape[1]] = want
    got = _from(tmp_path / "out.bin", dtype).double()
    if arch == 3510:       # Nz: (k-block, row, c0)
        got = got.reshape(kb, mb * 16, c0).permute(1, 0, 2).reshape(mb * 16, kb * c0)
    else:                  # Zz: (row-block, k-block, 16, c0)
        got = got.reshape(mb, kb, 16, c0).permute(0, 2, 1, 3).reshape(mb * 16, kb * c0)
    assert torch.equal(got, pad)


@pytest.mark.parametrize("dtype,c,n", [("half", 32, 24), ("int8", 32, 16), ("float", 8, 20)])
def test_conv_through_img2col_and_mmad_matches_torch_conv2d(binary, tmp_path, dtype, c, n):
    h, w, fh, fw = 8, 7, 3, 3
    g = torch.Generator().manual_seed(3)
    if dtype == "int8":
        wt = torch.randint(-128, 128, (n, c, fh, fw), generator=g, dtype=torch.int8)
    else:
        wt = (torch.rand(n, c, fh, fw, generator=g) * 2 - 1).to(_TORCH[dtype])
    c0 = 32 // wt.element_size()
    wk = wt.reshape(n, c // c0, c0, fh * fw).permute(0, 1, 3, 2).reshape(n, -1).contiguous()   # (c1, kh, kw, c0)
    _bits(wk).tofile(tmp_path / "w.bin")
    x = _run(binary, tmp_path, "conv", dtype, c, h, w, fh, fw, n=n, sh=1, sw=2, dh=2, dw=1, pl=1, pr=1, pt=2, pb=2,
             wt=tmp_path / "w.bin", y=tmp_path / "y.bin")
    ref = torch.nn.functional.conv2d(torch.nn.functional.pad(x.double().permute(2, 0, 1)[None], (1, 1, 2, 2)),
                                     wt.double(), stride=(1, 2), dilation=(2, 1))[0]
    ref = ref.reshape(n, -1).T
    y = np.fromfile(tmp_path / "y.bin", dtype=np.int32 if dtype == "int8" else np.float32)
    got = torch.from_numpy(y.astype(np.float64)).reshape(ref.shape)
    if dtype == "int8":
        assert torch.equal(got, ref)        # int8 x int8 -> int32 is exact
    else:
        assert torch.allclose(got, ref, rtol=1e-5, atol=1e-4 * c * fh * fw)


RULES = [(line.split(":")[0].split()[-1], line.split(":")[1].strip())
         for line in (SRC / "img2col_main.cpp").read_text().splitlines() if line.startswith("// EXPECT ")]


@pytest.mark.parametrize("scenario,expected", RULES)
def test_rule_ids(binary, scenario, expected):
    r = subprocess.run([str(binary), "op=rule", f"name={scenario}"], capture_output=True, text=True, timeout=30)
    ids = {json.loads(ln)["id"] for ln in r.stderr.splitlines() if ln.startswith("{")}
    if expected == "none":
        assert ids == set() and r.returncode == 0, r.stderr
    else:
        assert expected in ids, r.stderr
