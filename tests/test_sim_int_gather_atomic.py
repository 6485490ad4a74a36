"""Integer, bitwise, shift, gather, fill, atomic and SyncAll APIs of the emulator (issue 15).

Device-level: `tests/sim_device/int_gather_main.cpp` runs one API on numpy arrays (checked against
numpy, with integer edge values and NaN/inf), `tests/sim_device/int_gather_rules.cpp` holds one
scenario per rule (`// EXPECT: <id>` lines). Launch-level: hand-written kernels under
`tests/kernels/int_gather_atomic/` pass `check --cases all` on the fixture tasks, and the rule kernels
there are reported with their ids. Also the `emulator apis` registry.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("CANNPILOT_CACHE", str(Path(tempfile.gettempdir()) / f"cannpilot-test-cache-{os.getuid()}"))

REPO = Path(__file__).resolve().parents[1]
INCLUDE = REPO / "copilot" / "backends" / "sim" / "include"
SRC = REPO / "tests" / "sim_device"
BUILD = REPO / "build" / "sim_device"
KERNELS = REPO / "tests" / "kernels" / "int_gather_atomic"
TASKS = REPO / "tests" / "fixtures" / "tasks"

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is required")


def _build(name: str) -> Path:
    h = hashlib.sha256()
    for p in sorted(INCLUDE.rglob("*.h")) + [SRC / f"{name}.cpp"]:
        h.update(p.read_bytes())
    out = BUILD / f"{name}-{h.hexdigest()[:16]}"
    if not out.exists():
        BUILD.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        subprocess.run(["g++", "-std=c++20", "-O0", "-I", str(INCLUDE), str(SRC / f"{name}.cpp"), "-o", str(tmp)],
                       check=True, capture_output=True, text=True)
        tmp.replace(out)
    return out


@pytest.fixture(scope="module")
def ig_bin() -> Path:
    return _build("int_gather_main")


@pytest.fixture(scope="module")
def rules_bin() -> Path:
    return _build("int_gather_rules")


class Run:
    def __init__(self, binary: Path, tmp: Path):
        self.binary, self.tmp, self.stdout = binary, tmp, ""

    def __call__(self, op: str, dtype: str, out: np.ndarray, in0: np.ndarray, in1: np.ndarray | None = None,
                 **kw) -> np.ndarray:
        args = [str(self.binary), f"op={op}", f"dtype={dtype}"]
        for name, arr in (("in0", in0), ("in1", in1), ("out", out)):
            if arr is not None:
                path = self.tmp / f"{name}.bin"
                np.ascontiguousarray(arr).tofile(path)
                args.append(f"{name}={path}")
        args += [f"{k}={v}" for k, v in kw.items()]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert not [ln for ln in r.stderr.splitlines() if ln.startswith("{")], r.stderr
        self.stdout = r.stdout
        return np.fromfile(self.tmp / "out.bin", dtype=out.dtype)


@pytest.fixture
def run(ig_bin: Path, tmp_path: Path) -> Run:
    return Run(ig_bin, tmp_path)


def edges(dt: type, n: int, seed: int = 0) -> np.ndarray:
    """n values of an integer type: its extremes, 0, +-1, and random fill."""
    info = np.iinfo(dt)
    special = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
    if info.min < 0:
        special += [-1, -2]
    rng = np.random.default_rng(seed)
    rest = rng.integers(info.min, info.max, n - len(special), endpoint=True, dtype=np.int64 if dt != np.uint64 else np.uint64)
    return np.concatenate([np.array(special, dtype=dt), rest.astype(dt)])


# ---------------------------------------------------------------- bitwise and shift

@needs_gxx
@pytest.mark.parametrize("dtype,arch", [("int16", 2201), ("uint16", 2201), ("int32", 3510), ("uint8", 3510),
                                        ("int64", 3510), ("uint64", 3510)])
def test_and_or_not_on_the_bits(run: Run, dtype: str, arch: int):
    dt = np.dtype(dtype).type
    a, b = edges(dt, 512, 1), edges(dt, 512, 2)[::-1].copy()
    n = 512
    z = np.zeros(n, dt)
    np.testing.assert_array_equal(run("and", dtype, z, a, b, n=n, arch=arch), a & b)
    np.testing.assert_array_equal(run("or", dtype, z, a, b, n=n, arch=arch), a | b)
    np.testing.assert_array_equal(run("not", dtype, z, a, n=n, arch=arch), ~a)


@needs_gxx
def test_and_mask_form_touches_only_the_masked_lanes(run: Run):
    a, b = edges(np.int16, 256, 3), edges(np.int16, 256, 4)
    init = np.full(256, 7, np.int16)
    got = run("and", "int16", init, a, b, mask=100, repeat=2)
    want = init.copy()
    for r in range(2):
        want[r * 128:r * 128 + 100] = (a & b)[r * 128:r * 128 + 100]
    np.testing.assert_array_equal(got, want)


def _shl(x: np.ndarray, n: int) -> np.ndarray:
    w = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"uint{w}")).astype(np.uint64)
    moved = (u << np.uint64(n)) & np.uint64((1 << w) - 1) if n < w else np.zeros_like(u)
    if np.issubdtype(x.dtype, np.signedinteger):
        sign = np.uint64(1 << (w - 1))
        moved = (u & sign) | (moved & ~sign & np.uint64((1 << w) - 1))
    return moved.astype(np.dtype(f"uint{w}")).view(x.dtype)


@needs_gxx
@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "uint32"])
@pytest.mark.parametrize("shift", [0, 1, 3, 15, 16])
def test_shift_left_logical_and_arithmetic(run: Run, dtype: str, shift: int):
    dt = np.dtype(dtype).type
    x = edges(dt, 256, 5)
    got = run("shl", dtype, np.zeros(256, dt), x, n=256, scalar=shift)
    np.testing.assert_array_equal(got, _shl(x, shift))


@needs_gxx
def test_shift_left_keeps_the_sign_bit_as_the_reference_example(run: Run):
    x = np.array([0b1010101010101010], np.uint16).view(np.int16)
    for n, want in ((1, 0b1101010101010100), (3, 0b1101010101010000)):
        got = run("shl", "int16", np.zeros(16, np.int16), np.resize(x, 16), n=16, scalar=n)
        assert got[0].view(np.uint16) == want


@needs_gxx
@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "uint32"])
@pytest.mark.parametrize("shift", [0, 1, 5, 16])
def test_shift_right_logical_arithmetic_and_round(run: Run, dtype: str, shift: int):
    dt = np.dtype(dtype).type
    x = edges(dt, 256, 6)
    got = run("shr", dtype, np.zeros(256, dt), x, n=256, scalar=shift)
    np.testing.assert_array_equal(got, (x.astype(np.int64) >> shift).astype(dt))
    rounded = run("shr", dtype, np.zeros(256, dt), x, scalar=shift, mask=256 // np.dtype(dt).itemsize // 2 * 2
                  if np.dtype(dt).itemsize == 2 else 64, repeat=256 * np.dtype(dt).itemsize // 256, round=1)
    if shift >= np.dtype(dt).itemsize * 8:
        return
    want = x.astype(np.int64) >> shift
    if np.issubdtype(dt, np.signedinteger) and shift > 0:
        want = want + ((x.astype(np.int64) >> (shift - 1)) & 1)
    np.testing.assert_array_equal(rounded, want.astype(dt))


# ---------------------------------------------------------------- integer arithmetic

@needs_gxx
@pytest.mark.parametrize("dtype,arch", [("int16", 2201), ("int32", 2201), ("int8", 3510), ("int64", 3510)])
def test_integer_binary_and_scalar_ops_wrap_like_the_int_type(run: Run, dtype: str, arch: int):
    dt = np.dtype(dtype).type
    a, b = edges(dt, 512, 7), edges(dt, 512, 8)
    z = np.zeros(512, dt)
    with np.errstate(over="ignore"):
        for op, want in (("add", a + b), ("sub", a - b), ("mul", a * b), ("max", np.maximum(a, b)),
                         ("min", np.minimum(a, b))):
            np.testing.assert_array_equal(run(op, dtype, z, a, b, n=512, arch=arch), want, err_msg=op)
        if dtype in ("int16", "int32"):
            s = dt(-3)
            for op, want in (("adds", a + s), ("muls", a * s), ("maxs", np.maximum(a, s)), ("mins", np.minimum(a, s))):
                np.testing.assert_array_equal(run(op, dtype, z, a, n=512, scalar=-3), want, err_msg=op)


@needs_gxx
@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "uint32"])
def test_duplicate_integer_scalars_and_mask_form(run: Run, dtype: str):
    dt = np.dtype(dtype).type
    v = int(np.iinfo(dt).min) if np.iinfo(dt).min < 0 else int(np.iinfo(dt).max)
    got = run("dup", dtype, np.zeros(256, dt), np.zeros(256, dt), n=200, scalar=v)
    np.testing.assert_array_equal(got, np.concatenate([np.full(200, v, dt), np.zeros(56, dt)]))
    lanes = 256 // np.dtype(dt).itemsize
    got = run("dup", dtype, np.zeros(256, dt), np.zeros(256, dt), scalar=5, mask=3, repeat=256 * np.dtype(dt).itemsize // 256)
    want = np.zeros(256, dt)
    for r in range(len(want) // lanes):
        want[r * lanes:r * lanes + 3] = 5
    np.testing.assert_array_equal(got, want)


@needs_gxx
def test_relu_keeps_nan_and_inf(run: Run):
    x = np.array([np.nan, -np.inf, np.inf, -0.5, 0.0, 2.5, -np.nan, 1e-45] * 8, np.float32)
    got = run("relu", "float", np.zeros(64, np.float32), x, n=64)
    want = np.where(np.isnan(x), x, np.maximum(x, 0))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


@needs_gxx
@pytest.mark.parametrize("mode,fn", [("rint", np.rint), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
                                     ("round", lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5))])
def test_cast_float_to_float_rounds_to_integers(run: Run, mode: str, fn):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 1e20, -3.7, 3.7, np.inf, -np.inf, np.nan, 0.0, -0.0,
                  8388607.5] * 4, np.float32)
    got = run("cast_ff", "float", np.zeros(64, np.float32), x, n=64, mode=mode)
    want = fn(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


@needs_gxx
def test_compare_int32_eq(run: Run):
    a = edges(np.int32, 64, 9)
    b = a.copy()
    b[::3] += 1
    got = run("cmp_eq", "int32", np.zeros(16, np.int32), a, b, n=64).view(np.uint8)[:8]
    np.testing.assert_array_equal(np.unpackbits(got, bitorder="little"), (a == b).astype(np.uint8))


# ---------------------------------------------------------------- fill: Brcb, CreateVecIndex, Arange

@needs_gxx
@pytest.mark.parametrize("dtype", ["int16", "uint32", "float"])
def test_brcb_fills_one_block_per_element(run: Run, dtype: str):
    dt = np.dtype(dtype if dtype != "float" else "float32")
    src = (np.arange(24) * 3 - 20).astype(dt)
    e = 32 // dt.itemsize
    got = run("brcb", dtype, np.zeros(3 * 8 * e * 2, dt), src, repeat=3, blk=2, rep=16)
    want = np.zeros(3 * 8 * e * 2, dt)
    for r in range(3):
        for j in range(8):
            at = (r * 16 + j * 2) * e
            want[at:at + e] = src[r * 8 + j]
    np.testing.assert_array_equal(got, want)


@needs_gxx
@pytest.mark.parametrize("dtype", ["int16", "int32", "float", "half"])
def test_create_vec_index_and_arange(run: Run, dtype: str):
    dt = np.dtype(dtype if dtype not in ("float", "half") else {"float": "float32", "half": "float16"}[dtype])
    got = run("vecindex", dtype, np.zeros(300, dt), np.zeros(8, dt), n=300, scalar=-7)
    np.testing.assert_array_equal(got, (np.arange(300) - 7).astype(dt))
    lanes = 256 // dt.itemsize
    got = run("vecindex", dtype, np.zeros(2 * lanes, dt), np.zeros(8, dt), scalar=10, mask=5, repeat=2)
    want = np.zeros(2 * lanes, dt)
    for r in range(2):
        want[r * lanes:r * lanes + 5] = 10 + r * lanes + np.arange(5)
    np.testing.assert_array_equal(got, want)
    got = run("arange", dtype, np.zeros(100, dt), np.zeros(8, dt), n=100, scalar=3, step=2)
    np.testing.assert_array_equal(got, (3 + 2 * np.arange(100)).astype(dt))


# ---------------------------------------------------------------- gather

@needs_gxx
@pytest.mark.parametrize("dtype", ["float", "half", "int32", "uint16"])
def test_gather_by_byte_offsets(run: Run, dtype: str):
    dt = np.dtype({"float": "float32", "half": "float16"}.get(dtype, dtype))
    src = np.arange(500).astype(dt)
    if dt.kind == "f":
        src[[3, 4]] = [np.inf, np.nan]
    idx = np.random.default_rng(10).integers(0, 500, 777).astype(np.uint32)
    idx[:2] = [3, 4]
    got = run("gather", dtype, np.zeros(777, dt), src, idx * dt.itemsize, n=777)
    np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), src[idx].view(f"u{dt.itemsize}"))
    # srcBaseAddr shifts every read by that many bytes
    got = run("gather", dtype, np.zeros(777, dt), src, np.minimum(idx, 490) * dt.itemsize, n=777,
              base=8 * dt.itemsize)
    np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), src[np.minimum(idx, 490) + 8].view(f"u{dt.itemsize}"))


@needs_gxx
def test_gather_mask_form_with_dst_repeat_stride(run: Run):
    src = np.arange(256, dtype=np.float32) * 0.5
    idx = (np.arange(128, dtype=np.uint32)[::-1] * 4)
    init = np.full(256, -1, np.float32)
    got = run("gather", "float", init, src, idx, mask=10, repeat=2, dstrep=16)
    want = init.copy()
    for r in range(2):
        want[r * 128:r * 128 + 10] = src[idx[r * 64:r * 64 + 10] // 4]
    np.testing.assert_array_equal(got, want)


@needs_gxx
def test_gatherb_moves_32_byte_blocks(run: Run):
    src = np.arange(16 * 8, dtype=np.uint32)
    offs = np.array([7, 0, 3, 3, 15, 1, 2, 9], np.uint32) * 32
    got = run("gatherb", "uint32", np.zeros(16 * 8, np.uint32), src, offs, repeat=1, blk=2, rep=16)
    want = np.zeros(16 * 8, np.uint32)
    for j, o in enumerate(offs // 32):
        want[j * 2 * 8:j * 2 * 8 + 8] = src[o * 8:o * 8 + 8]
    np.testing.assert_array_equal(got, want)


FIXED = {1: lambda e: e % 2 == 0, 2: lambda e: e % 2 == 1, 3: lambda e: e % 4 == 0, 4: lambda e: e % 4 == 1,
         5: lambda e: e % 4 == 2, 6: lambda e: e % 4 == 3, 7: lambda e: True}


@needs_gxx
@pytest.mark.parametrize("pattern", sorted(FIXED))
@pytest.mark.parametrize("dtype", ["float", "half"])
def test_gather_mask_fixed_patterns_pack_densely(run: Run, pattern: int, dtype: str):
    dt = np.dtype({"float": "float32", "half": "float16"}[dtype])
    lanes = 256 // dt.itemsize
    src = np.arange(3 * lanes).astype(dt)
    got = run("gathermask", dtype, np.zeros(3 * lanes, dt), src, pattern=pattern, repeat=3)
    keep = [src[r * lanes + e] for r in range(3) for e in range(lanes) if FIXED[pattern](e)]
    assert run.stdout.strip() == f"rsvdCnt={len(keep)}"
    np.testing.assert_array_equal(got[:len(keep)], np.array(keep, dt))


@needs_gxx
def test_gather_mask_tensor_pattern_counter_mode_and_strides(run: Run):
    # the reference's worked example: uint32, mask 70 per repeat, 2 repeats, src0RepeatStride 4 blocks,
    # the same pattern for both repeats (src1RepeatStride 0)
    src = np.arange(200, dtype=np.uint32) + 1000
    bits = np.random.default_rng(11).integers(0, 2, 96).astype(np.uint8)
    pattern = np.packbits(bits, bitorder="little").view(np.uint32)
    got = run("gathermask", "uint32", np.zeros(256, np.uint32), src, pattern, reduce=1, mask=70, repeat=2, blk=1, rep=4,
              patrep=0)
    keep = [src[r * 32 + e] for r in range(2) for e in range(70) if bits[e]]
    assert run.stdout.strip() == f"rsvdCnt={len(keep)}"
    np.testing.assert_array_equal(got[:len(keep)], np.array(keep, np.uint32))


# ---------------------------------------------------------------- rules, one scenario each

def _scenarios() -> tuple[dict[str, list[tuple[str, int]]], dict[str, int]]:
    lines = (SRC / "int_gather_rules.cpp").read_text().splitlines()
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
    sync_line = next(no for no, t in enumerate(lines, 1) if "static void syncall_cores" in t) + 1
    out["syncall_cores"] = [("L2.SYNCALL_CORES", sync_line)]
    return out, {"int_3510": 3510, "atomic_310p": 2002}


SCENARIOS, ARCH = _scenarios()
FATAL = {"gather_ub_end"}


@needs_gxx
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_rule_reported_with_id_and_candidate_line(rules_bin: Path, tmp_path: Path, scenario: str):
    diag = tmp_path / "diag.jsonl"
    r = subprocess.run([str(rules_bin), scenario, str(ARCH.get(scenario, 2201)), str(diag)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == (86 if scenario in FATAL else 0), r.stdout + r.stderr
    found = [json.loads(x) for x in diag.read_text().splitlines() if x.startswith("{")]
    assert sorted((d["id"], d["line"]) for d in found) == sorted(SCENARIOS[scenario])
    for d in found:
        assert d["severity"] == "error" and d["api"] and d["message"]
        assert d.get("fatal", False) == (scenario in FATAL)


NEW_IDS = {"L2.SHIFT_RANGE", "L2.GATHER_OFFSET", "L2.GATHER_PATTERN", "L2.ARANGE_ARGS", "L2.ATOMIC_DTYPE",
           "L2.SYNCALL_WORKSPACE", "L2.SYNCALL_CORES", "L2.SYNCALL_MISMATCH"}


def test_every_new_rule_id_has_a_breaking_scenario_and_a_card():
    from knowledge.cards import get_card

    ids = {i for exp in SCENARIOS.values() for i, _ in exp}
    ids |= {m.group(1) for p in (KERNELS / "rules").glob("*.cpp") for m in re.finditer(r"EXPECT: ([\w.]+)", p.read_text())}
    assert NEW_IDS <= ids
    for cid in NEW_IDS:
        card = get_card(cid)
        assert card.level == "L2" and cid in card.constraints and "repair" in card.phases


# ---------------------------------------------------------------- whole kernels through the launcher

@needs_gxx
@pytest.mark.slow
@pytest.mark.parametrize("kernel,task", [("gather_i32_index.cpp", "gather_i32_index"),
                                         ("maximum_i32_bcast.cpp", "maximum_i32_bcast"),
                                         ("sum_all_atomic.cpp", "sum_all_atomic"),
                                         ("sum_all_syncall.cpp", "sum_all_atomic"),
                                         ("sum_all_chain.cpp", "sum_all_atomic")])
def test_hand_written_kernel_passes_every_case(kernel: str, task: str):
    from copilot.backends.sim import check_kernel

    report = check_kernel(KERNELS / kernel, str(TASKS / task), cases="all", timeout=120)
    assert report.compiled, [d.message for d in report.diagnostics]
    assert report.correct, ([(c.id, c.message) for c in report.cases if not c.passed],
                            [(d.id, d.line, d.message) for d in report.diagnostics])
    assert not [d for d in report.diagnostics if d.severity == "error"]


@needs_gxx
@pytest.mark.slow
def test_sync_all_is_a_real_barrier():
    """The two-phase sum without its SyncAll reads slots other blocks have not written: it must fail."""
    from copilot.backends.sim import check_kernel

    text = (KERNELS / "sum_all_syncall.cpp").read_text()
    assert "    AscendC::SyncAll();\n" in text
    with tempfile.TemporaryDirectory() as d:
        k = Path(d) / "no_barrier.cpp"
        k.write_text(text.replace("    AscendC::SyncAll();\n", "\n"))
        report = check_kernel(k, str(TASKS / "sum_all_atomic"), cases="1", timeout=120)
    assert report.compiled and not report.correct


@needs_gxx
@pytest.mark.slow
@pytest.mark.parametrize("path", sorted((KERNELS / "rules").glob("*.cpp")), ids=lambda p: p.stem)
def test_rule_kernel_reported_through_the_launcher(path: Path):
    from copilot.backends.sim import check_kernel

    text = path.read_text()
    expected = [(m.group(1), text.count("\n", 0, m.start()) + 1) for m in re.finditer(r"//\s*EXPECT:\s*([A-Z0-9_.]+)", text)]
    task = re.search(r"--task\s+(\S+)", text).group(1)
    cases = re.search(r"--cases\s+(\S+)", text).group(1)
    report = check_kernel(path, str(REPO / task), cases=cases, timeout=120)
    got = {(d.id, d.line) for d in report.diagnostics}
    assert set(expected) <= got, sorted(got)
    assert not report.correct


# ---------------------------------------------------------------- the API registry

def test_registry_statuses_follow_the_headers():
    from copilot.backends.sim.api_registry import VECTOR_FAMILIES, registry

    reg = registry()
    doc = reg.to_json()
    assert doc["apis"] and all(set(a) >= {"name", "family", "chips", "status"} for a in doc["apis"])
    assert {a["status"] for a in doc["apis"]} <= {"emulated", "declared", "missing"}
    assert {a["family"] for a in doc["apis"]} <= set(VECTOR_FAMILIES)
    by = {(a["family"], a["name"]): a for a in doc["apis"]}
    for name in ("And", "Or", "Not", "ShiftLeft", "ShiftRight", "Gather", "Gatherb", "GatherMask", "Brcb",
                 "CreateVecIndex", "Add", "Cast", "Duplicate", "Select", "AddRelu", "SubRelu", "FusedMulAdd",
                 "MulAddDst", "Axpy"):
        assert by[("memory vector compute", name)]["status"] == "emulated", name
    for fam, name in (("synchronisation", "IBSet"), ("synchronisation", "IBWait"),
                      ("synchronisation", "NotifyNextBlock"), ("synchronisation", "WaitPreBlock"),
                      ("synchronisation", "InitDetermineComputeWorkspace"), ("atomics", "SetAtomicAdd"),
                      ("atomics", "SetStoreAtomicConfig"), ("atomics", "GetStoreAtomicConfig"), ("atomics", "SetAtomicMax"), ("atomics", "SetAtomicMin"),
                      ("synchronisation", "SyncAll"), ("index", "Arange"), ("data movement", "DataCopyPad")):
        assert by[(fam, name)]["status"] == "emulated", name
    gather = by[("memory vector compute", "Gather")]
    assert set(gather["forms"]) == {"count", "mask-bit", "mask-continuous"}
    assert "int32_t" in gather["dtypes"]["A2"] and "int64_t" in gather["dtypes"]["950"]
    assert "int64_t" not in gather["dtypes"]["A2"]
    for fam, name in (("scalar", "GetBitCount"), ("scalar", "CountLeadingZero"), ("scalar", "GetSFFValue"),
                      ("scalar", "CountBitsCntSameAsSignBit")):
        assert by[(fam, name)]["status"] == "emulated", name
    counts = doc["families"]["A2"]["memory vector compute"]
    assert counts["supported"] == counts["emulated"] + counts["declared"] + counts["missing"]


def test_registry_sees_a_new_header_without_code_changes(tmp_path: Path):
    """Another family header that defines an API makes it emulated; a stub keeps it declared."""
    from copilot.backends.sim import api_registry

    inc = tmp_path / "include"
    shutil.copytree(INCLUDE, inc)
    (inc / "cannsim" / "zz_test_family.h").write_text(
        "namespace AscendC {\ntemplate <typename T>\n"
        "inline void SetCmpMask(const LocalTensor<T>& src) {}\n}\n")
    (inc / "cannsim" / "debug.h").write_text((inc / "cannsim" / "debug.h").read_text() + "\nCANNSIM_UNKNOWN_API(Gatherb)\n")
    by = {(e.family, e.name): e for e in api_registry.registry(inc).entries}
    assert by[("memory vector compute", "SetCmpMask")].status == "emulated"
    assert by[("memory vector compute", "Gatherb")].status == "declared"


def test_bundled_name_list_matches_the_shared_one():
    shared = REPO.parent / "shared" / "docs" / "ascendc-api-names.tsv"
    if not shared.is_file():
        pytest.skip(f"{shared} not present")
    assert (REPO / "copilot" / "backends" / "sim" / "data" / "ascendc-api-names.tsv").read_bytes() == shared.read_bytes()


def test_emulator_apis_command_json_and_bad_input():
    import sys
    r = subprocess.run([sys.executable, "-m", "copilot", "emulator", "apis", "--json"], capture_output=True, text=True,
                       cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert any(a["name"] == "SyncAll" and a["status"] == "emulated" for a in doc["apis"])
    r = subprocess.run([sys.executable, "-m", "copilot", "emulator", "apis", "--chip", "X"], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr


# ---------------------------------------------------------------- costs

@needs_gxx
def test_every_new_api_is_costed_on_its_pipe(rules_bin: Path):
    from copilot.costmodel import API_WEIGHTS

    r = subprocess.run([str(rules_bin), "clean_int_gather", "2201", "/dev/null"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    counters = {c["api"]: c for c in json.loads(r.stdout.strip().splitlines()[-1])["counters"]}
    for api, elements in (("And", 512), ("Or", 512), ("Not", 512), ("ShiftLeft", 512), ("ShiftRight", 512),
                          ("Gather", 256), ("GatherMask", 64), ("Brcb", 64), ("CreateVecIndex", 256), ("Arange", 256), ("AddRelu", 64), ("FusedMulAdd", 64),
                          ("MulAddDst", 64), ("Axpy", 64)):
        assert counters[api]["pipe"] == "V" and counters[api]["elements"] == elements, api
        assert api in API_WEIGHTS, api
    for api in ("SetAtomicAdd", "SetAtomicMax", "SetAtomicMin", "SetAtomicNone", "SyncAll"):
        assert counters[api]["pipe"] == "S" and counters[api]["calls"] == 1, api
    assert counters["DataCopy"]["pipe"] == "MTE3" and counters["DataCopy"]["calls"] == 4
    assert "bad store atomic config" not in r.stdout


# ---------------------------------------------------------------- compound ops and scalar bit functions

@needs_gxx
@pytest.mark.parametrize("dtype", ["float", "half"])
def test_compound_ops_against_numpy(run: Run, dtype: str):
    dt = np.float32 if dtype == "float" else np.float16
    rng = np.random.default_rng(12)
    a, b, d0 = (rng.uniform(-4, 4, 256).astype(dt) for _ in range(3))
    a[:4] = [np.nan, np.inf, -np.inf, 0]
    f = lambda v: v.astype(np.float32)  # noqa: E731 - computed in float, rounded once
    relu = lambda v: np.where(np.isnan(v), v, np.maximum(v, 0))  # noqa: E731
    cases = {"fma": f(a) * f(d0) + f(b), "muladddst": f(a) * f(b) + f(d0), "axpy": f(a) * np.float32(1.5) + f(d0),
             "addrelu": relu(f(a) + f(b)), "subrelu": relu(f(a) - f(b))}
    for op, want in cases.items():
        with np.errstate(invalid="ignore"):
            got = run(op, dtype, d0.copy(), a, b, n=256, scalar=1.5)
            want = want.astype(dt)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=op)
        np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)], err_msg=op)


@needs_gxx
def test_add_relu_int16_and_sub_relu_mask_form(run: Run):
    a, b = edges(np.int16, 256, 13), edges(np.int16, 256, 14)
    with np.errstate(over="ignore"):
        want = np.maximum((a.astype(np.int64) + b).astype(np.int16), 0)
    np.testing.assert_array_equal(run("addrelu", "int16", np.zeros(256, np.int16), a, b, n=256), want)
    x, y = np.linspace(-3, 3, 128).astype(np.float16), np.full(128, 0.5, np.float16)
    init = np.full(128, 9, np.float16)
    got = run("subrelu", "half", init, x, y, mask=10, repeat=1)
    np.testing.assert_array_equal(got[:10], np.maximum(x[:10].astype(np.float32) - 0.5, 0).astype(np.float16))
    np.testing.assert_array_equal(got[10:], init[10:])


@needs_gxx
@pytest.mark.parametrize("value", [0, 1, 0x10, 0x00F0000000000010, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFF0,
                                   0x8000000000000000, 0x7FFFFFFFFFFFFFFF])
def test_scalar_bit_functions(run: Run, value: int):
    run("bits", "int32", np.zeros(8, np.int32), np.zeros(8, np.int32), value=hex(value))
    got = dict(kv.split("=") for kv in run.stdout.split())
    ones = bin(value).count("1")
    signed = value - (1 << 64) if value >> 63 else value
    sign = -1 if signed in (0, -1) else next(i for i in range(1, 64) if ((value >> (63 - i)) & 1) != (value >> 63)) - 1
    lowest = lambda bit: next((i for i in range(64) if (value >> i) & 1 == bit), -1)  # noqa: E731
    assert {k: int(v) for k, v in got.items()} == {
        "ones": ones, "zeros": 64 - ones, "clz": 64 - value.bit_length(), "sign": sign,
        "sff1": lowest(1), "sff0": lowest(0)}


@needs_gxx
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float", "half"])
@pytest.mark.parametrize("how", ["add", "max", "min"])
def test_atomic_modes_combine_with_gm(run: Run, dtype: str, how: str):
    dt = np.dtype({"float": "float32", "half": "float16"}.get(dtype, dtype))
    n = 96
    if dt.kind == "i":
        x, g = edges(dt.type, n, 15), edges(dt.type, n, 16)
    else:
        rng = np.random.default_rng(17)
        x, g = rng.uniform(-9, 9, n).astype(dt), rng.uniform(-9, 9, n).astype(dt)
        x[:3] = [np.inf, -np.inf, 1]
        g[:3] = [1, 2, np.nan]
    with np.errstate(over="ignore", invalid="ignore"):
        if how == "add":
            want = (g.astype(np.int64) + x).astype(dt) if dt.kind == "i" else (g.astype(np.float32) + x).astype(dt)
        else:
            pick = (x > g) if how == "max" else (x < g)
            want = np.where(pick | np.isnan(x) if dt.kind == "f" else pick, x, g)
    got = run("atomic", dtype, g.copy(), x, n=n, how=how)
    np.testing.assert_array_equal(np.isnan(got) if dt.kind == "f" else got, np.isnan(want) if dt.kind == "f" else want)
    if dt.kind == "f":
        np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
