"""The emulator's cube unit (issue 17): DataCopy ND2NZ, LoadData (2-D), Mmad and Fixpipe.

Semantics: `tests/sim_device/cube_main.cpp` runs GM -> L1 (ND2NZ) -> L0A/L0B (LoadData) -> L0C (Mmad)
-> GM (Fixpipe) on small shapes, checked against torch; shapes not multiples of the fractal exercise the
padding. Rules: `tests/sim_device/cube_rules.cpp` has one breaking scenario per rule id.
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


@pytest.fixture(scope="module")
def cube_bin() -> Path:
    return _build("cube_main")


@pytest.fixture(scope="module")
def rules_bin() -> Path:
    return _build("cube_rules")


_TORCH = {"half": torch.float16, "bf16": torch.bfloat16, "float": torch.float32, "int8": torch.int8}


def _bits(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy()
    return t.numpy()


def _matmul(binary: Path, tmp: Path, dtype: str, m: int, n: int, k: int, out: str = "same", seed: int = 0, **kw):
    g = torch.Generator().manual_seed(seed)
    if dtype == "int8":
        a = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
        b = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
    else:
        a = (torch.rand(m, k, generator=g) * 2 - 1).to(_TORCH[dtype])
        b = (torch.rand(k, n, generator=g) * 2 - 1).to(_TORCH[dtype])
    _bits(a).tofile(tmp / "a.bin")
    _bits(b.T.contiguous() if kw.get("bt") else b).tofile(tmp / "b.bin")
    args = [str(binary), f"dtype={dtype}", f"m={m}", f"n={n}", f"k={k}", f"out={out}", f"a={tmp / 'a.bin'}",
            f"b={tmp / 'b.bin'}", f"c={tmp / 'c.bin'}"] + [f"{x}={y}" for x, y in kw.items()]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    odt = {"half": np.float16, "same": np.int32 if dtype == "int8" else np.float32, "bf16": np.int16}[out]
    c = np.fromfile(tmp / "c.bin", dtype=odt)
    res = torch.from_numpy(c.copy()).view(torch.bfloat16).float() if out == "bf16" else torch.from_numpy(c.astype(np.float64))
    ref = a.double() @ b.double()
    return res.double(), ref, json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("dtype,m,n,k,bt", [
    ("half", 16, 16, 16, 0), ("half", 33, 40, 70, 0), ("half", 33, 40, 70, 1),
    ("bf16", 17, 48, 31, 0), ("bf16", 17, 48, 31, 1), ("float", 20, 24, 13, 1), ("int8", 33, 40, 70, 1),
    ("int8", 33, 40, 70, 0), ("int8", 16, 64, 96, 0),
])
def test_matmul_matches_torch(cube_bin, tmp_path, dtype, m, n, k, bt):
    res, ref, _ = _matmul(cube_bin, tmp_path, dtype, m, n, k, bt=bt)
    res = res.reshape(m, n)
    if dtype == "int8":          # int8 x int8 -> int32 is exact
        assert torch.equal(res, ref)
    else:                        # products exact in fp32, fp32 accumulation
        torch.testing.assert_close(res, ref, rtol=1e-5, atol=1e-5 * k)


def test_accumulate_relu_and_fp16_out(cube_bin, tmp_path):
    res, ref, _ = _matmul(cube_bin, tmp_path, "half", 20, 32, 48, out="half", acc=1, relu=1)
    want = torch.relu(2 * ref).to(torch.float16).double()
    torch.testing.assert_close(res.reshape(20, 32), want, rtol=1e-3, atol=1e-3)
    assert (res >= 0).all() and (res == 0).any()


def test_bf16_out(cube_bin, tmp_path):
    res, ref, _ = _matmul(cube_bin, tmp_path, "bf16", 16, 32, 64, out="bf16")
    torch.testing.assert_close(res.reshape(16, 32), ref.to(torch.bfloat16).double(), rtol=0, atol=0)


def test_int8_dequant_to_half(cube_bin, tmp_path):
    res, ref, _ = _matmul(cube_bin, tmp_path, "int8", 16, 32, 64, out="half", bt=1, scale=0.0078125)
    torch.testing.assert_close(res.reshape(16, 32), (ref * 0.0078125).to(torch.float16).double(), rtol=0, atol=0)


def test_nz_output_layout(cube_bin, tmp_path):
    m, n, k = 20, 32, 16
    res, ref, _ = _matmul(cube_bin, tmp_path, "half", m, n, k, layout="nz")
    mp = 32
    got = res.reshape(n // 16, mp, 16)[:, :m, :]                  # Nz: n-blocks of (m rows x 16)
    torch.testing.assert_close(got.permute(1, 0, 2).reshape(m, n), ref, rtol=1e-5, atol=1e-4)


def test_arch_3510_l0a_nz(cube_bin, tmp_path):
    res, ref, _ = _matmul(cube_bin, tmp_path, "half", 33, 40, 70, arch=3510)
    torch.testing.assert_close(res.reshape(33, 40), ref, rtol=1e-5, atol=1e-4)


def test_cost_counters_by_pipe(cube_bin, tmp_path):
    _, _, counters = _matmul(cube_bin, tmp_path, "half", 33, 40, 70)
    by = {(c["pipe"], c["api"]): c for c in counters["counters"]}
    assert by[("M", "Mmad")]["elements"] == 48 * 48 * 80     # whole fractals: m, n, k padded to 16
    assert by[("MTE1", "LoadData")]["calls"] == 3 + 5        # one per L0A fractal row, one per B k-block
    assert by[("FIX", "Fixpipe")]["bytes"] == 33 * 40 * 4
    assert by[("MTE2", "DataCopy")]["calls"] == 2


def test_cube_pipes_on_the_timeline(cube_bin, tmp_path):
    from copilot.costmodel import cost_params

    line = cost_params("910B2").cxx_line(1).removeprefix("cost ")
    m, n, k = 64, 64, 256
    _matmul(cube_bin, tmp_path, "half", m, n, k)
    r = subprocess.run([str(cube_bin), "dtype=half", f"m={m}", f"n={n}", f"k={k}", f"a={tmp_path / 'a.bin'}",
                        f"b={tmp_path / 'b.bin'}", f"c={tmp_path / 'c.bin'}", f"cost={line}"],
                       capture_output=True, text=True, timeout=60)
    cost = json.loads(r.stdout.splitlines()[0])
    pipes = cost["pipes_us"]
    p = cost_params("910B2")
    mmad_us = (p.cube_issue_cycles + m * n * k / p.cube_macs_b16) / (p.clock_ghz * 1e3)
    assert pipes["M"] == pytest.approx(mmad_us, rel=1e-3)          # an ESTIMATE of the model, not a measurement
    assert pipes["MTE1"] > 0 and pipes["FIX"] > 0 and pipes["MTE2"] > 0
    assert cost["gm_bytes_out"] == m * n * 4                         # Fixpipe's GM writes
    assert cost["us"] >= max(pipes.values())


RULES = [(line.split(":")[0].split()[-1], line.split(":")[1].strip())
         for line in (SRC / "cube_rules.cpp").read_text().splitlines() if line.startswith("// EXPECT ")]


@pytest.mark.parametrize("scenario,expected", RULES)
def test_rule_ids(rules_bin, scenario, expected):
    r = subprocess.run([str(rules_bin), scenario], capture_output=True, text=True, timeout=30)
    ids = {json.loads(ln)["id"] for ln in r.stderr.splitlines() if ln.startswith("{")}
    if expected == "none":
        assert ids == set() and r.returncode == 0
    else:
        assert expected in ids, r.stderr


def test_l0c_is_larger_on_950(rules_bin):
    r = subprocess.run([str(rules_bin), "l0c_capacity", "3510"], capture_output=True, text=True, timeout=30)
    assert "L2.L0C_CAPACITY" not in r.stderr


def test_bound_class_cube():
    from copilot.costmodel import classify

    assert classify({"M": 40.0, "MTE2": 10.0, "V": 0.0, "S": 2.0}, 50.0, 5.0) == "cube"
    assert classify({"M": 5.0, "MTE2": 40.0}, 50.0, 5.0) == "memory"


CANNBENCH = REPO.parent / "shared" / "cannbench"


@pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository (../shared/cannbench)")
def test_roofline_cube_term_reproduces_the_benchmark_bound():
    from copilot.chips import load_chip
    from copilot.costmodel.estimate import case_roofline, output_shapes
    from copilot.tasks.loader import load_task

    task = load_task(CANNBENCH / "tasks" / "level3" / "quant_matmul")
    meta = json.loads((CANNBENCH / "tasks" / "metadata" / "910b2.json").read_text())["level3"]["quant_matmul"]
    for case in [c for c in task.cases if c.id in (1, 2, 4)]:
        t_hw, terms = case_roofline(task, case, output_shapes(task, case), load_chip("910B2"))
        assert terms["cube_us"] == t_hw                     # int8 GEMMs are cube-bound
        assert t_hw == pytest.approx(meta[str(case.id)]["t_hw_us"], rel=2e-3)


@pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository (../shared/cannbench)")
@pytest.mark.parametrize("level, op, ids", [("level3", "conv_2d", (3, 4, 18)),
                                            ("level3", "conv_3d_backprop_filter", (1, 8, 19))])
def test_roofline_cube_term_of_convolutions(level, op, ids):
    """aten.convolution and the weight gradient (convolution_backward) are cube work: on fp16/bf16
    cases the cube term is the bound and equals the benchmark's t_hw."""
    from copilot.chips import load_chip
    from copilot.costmodel.estimate import case_roofline, output_shapes
    from copilot.tasks.loader import load_task

    task = load_task(CANNBENCH / "tasks" / level / op)
    meta = json.loads((CANNBENCH / "tasks" / "metadata" / "910b2.json").read_text())[level][op]
    for case in [c for c in task.cases if c.id in ids]:
        t_hw, terms = case_roofline(task, case, output_shapes(task, case), load_chip("910B2"))
        assert terms["cube_us"] == t_hw > 10 * terms["memory_us"]
        assert t_hw == pytest.approx(meta[str(case.id)]["t_hw_us"], rel=2e-3)


QUANT_MATMUL = REPO / "bench" / "cube_kernels" / "quant_matmul.cpp"
needs_cannbench = pytest.mark.skipif(not CANNBENCH.exists(), reason="CANN-Bench is not beside the repository")


@needs_cannbench
@pytest.mark.slow
def test_mix_kernel_passes_public_cases():
    """The hand-written MIX quant_matmul (AIC int8 GEMM -> GM workspace -> two AIVs' epilogue, cross-core
    flags both ways) on two small public cases: 4 blocks (12 cores) and 24 blocks with M = 1."""
    from copilot.backends.sim import check_kernel

    report = check_kernel(QUANT_MATMUL, str(CANNBENCH / "tasks" / "level3" / "quant_matmul"), cases="18,14",
                          timeout=120)
    assert report.compiled, [d.message for d in report.diagnostics]
    assert report.correct, ([(c.id, c.message) for c in report.cases if not c.passed],
                            [(d.id, d.message) for d in report.diagnostics])
    assert not [d for d in report.diagnostics if d.severity == "error"]


@needs_cannbench
@pytest.mark.slow
def test_wait_without_its_set_is_reported(tmp_path):
    from copilot.backends.sim import check_kernel

    text = QUANT_MATMUL.read_text()
    line = "            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_TILE_READY);\n"
    assert line in text
    broken = tmp_path / "quant_matmul.cpp"
    broken.write_text(text.replace(line, "\n"))
    report = check_kernel(broken, str(CANNBENCH / "tasks" / "level3" / "quant_matmul"), cases="18", timeout=120)
    wait_line = next(i for i, ln in enumerate(text.splitlines(), 1) if "CrossCoreWaitFlag(FLAG_TILE_READY)" in ln)
    assert ("L2.CROSS_CORE_FLAG", wait_line) in {(d.id, d.line) for d in report.diagnostics}
    assert not report.correct


def test_headers_alone_register_no_cube_use():
    """Only a kernel that calls a cube API (or a cross-core flag) changes how the launcher starts it."""
    r = subprocess.run([str(_build("cube_none"))], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0
