"""The Ascend operator precision standard: judge a kernel's output against an fp64 oracle.

`judge` implements the standard of docs/precision.md (MERE/MARE against the oracle, then the
small-value, cancellation and normal regions with error counts compared to a same-precision
reference); `judge_allclose` is the KernelBench mode. Failed verdicts carry a failure class and a
one-line message with the evidence, for the repair phase.

Arrays are scanned in chunks of `_CHUNK` elements: the only whole-array data are the caller's own
tensors, so the extra memory is a few MiB whatever the output size (measured figures in
docs/precision.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import torch

from copilot.errors import BadInput

_CHUNK = 1 << 16            # elements per scan step: 512 KiB per fp64 temporary, cache-sized
_INDEX_CAP = 1 << 20        # failing positions kept per kind for locating them; beyond, only ranges
_EPS = 1e-7                 # the standard's denominator guard: |golden| + 1e-7


@dataclass(frozen=True)
class Thresholds:
    """The standard's limits for one output dtype (the table of docs/precision.md)."""

    T: float                    # MERE must be < T
    mare: float                 # MARE must be < mare (the table's "10T" column, a power of two)
    small_value: float          # |truncated golden| below this: small-value region
    small_value_error: float    # absolute-error bound in the small-value region
    cancel: float               # cancellation boundary = cancellation zero threshold


THRESHOLDS: dict[str, Thresholds] = {
    "float16": Thresholds(2**-10, 2**-7, 2**-11, 2**-16, 2**-5),
    "bfloat16": Thresholds(2**-7, 2**-4, 2**-8, 2**-16, 2**-3),
    "float32": Thresholds(2**-13, 2**-10, 2**-14, 2**-30, 2**-8),
    "hifloat32": Thresholds(2**-11, 2**-8, 2**-12, 2**-28, 2**-8),
    "float8_e4m3": Thresholds(2**-3, 2**0, 2**-4, 2**-6, 2**-1),
    "float8_e5m2": Thresholds(2**-2, 2**-1, 2**-3, 2**-5, 2**0),
}

# What "the reference" of a region's count rule is, as failure messages say it (docs/precision.md).
REFERENCE = "the golden run by PyTorch on the CPU in the output's own dtype, in the golden's operation order"

# Binary formats the golden is truncated to: explicit mantissa bits, exponent of the smallest
# normal, largest finite value. hifloat32 is stored in float32 containers, so it truncates to float32.
_FORMATS: dict[str, tuple[int, int, float]] = {
    "float16": (10, -14, 65504.0),
    "bfloat16": (7, -126, float.fromhex("0x1.fep127")),
    "float32": (23, -126, float.fromhex("0x1.fffffep127")),
    "hifloat32": (23, -126, float.fromhex("0x1.fffffep127")),
    "float8_e4m3": (3, -6, 448.0),
    "float8_e5m2": (2, -14, 57344.0),
}

_ALIASES = {
    "fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32", "float": "float32",
    "hf32": "hifloat32", "float8_e4m3fn": "float8_e4m3", "fp8_e4m3": "float8_e4m3",
    "fp8_e5m2": "float8_e5m2",
}
_VIA_ML_DTYPES = {
    torch.bfloat16: (torch.int16, ml_dtypes.bfloat16),
    torch.float8_e4m3fn: (torch.uint8, ml_dtypes.float8_e4m3fn),
    torch.float8_e5m2: (torch.uint8, ml_dtypes.float8_e5m2),
}
_EXACT = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"}
_ALLCLOSE_TOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}

FAILURE_CLASSES = ("nan_inf_introduced", "nan_inf_mismatch", "zero_output", "localized_outlier",
                   "systematic_drift", "small_value_error", "shape_mismatch", "integer_mismatch",
                   "non_contiguous_output", "bit_mismatch")
# Failures that are not about the numbers (benchmark_spec §4.3, §4.6): a wrong number or shape of
# outputs, a non-contiguous output. CANN-Bench counts them as compile/runtime errors of the case.
STRUCTURAL_CLASSES = ("shape_mismatch", "non_contiguous_output")


@dataclass
class CaseVerdict:
    """The verdict on one case (or on all outputs of a case, from `judge_outputs`)."""

    passed: bool
    mode: str                       # "standard" | "allclose" | "exact"
    mere: float                     # nan when not applicable
    mare: float
    failure_class: str | None       # None when passed, else one of FAILURE_CLASSES
    regions: dict                   # per region counts; empty for the allclose and exact modes
    message: str                    # one line: what failed, where, by how much
    worst_index: tuple | None       # multi-dim index of the worst element
    outputs: list = field(default_factory=list)   # per-output verdicts (judge_outputs only)

    def to_json(self) -> dict:
        """A JSON-safe dict: non-finite floats become None, the index a list."""
        doc = {
            "passed": self.passed,
            "mode": self.mode,
            "mere": _json_float(self.mere),
            "mare": _json_float(self.mare),
            "failure_class": self.failure_class,
            "regions": _json_value(self.regions),
            "message": self.message,
            "worst_index": None if self.worst_index is None else [int(i) for i in self.worst_index],
        }
        if self.outputs:
            doc["outputs"] = [v.to_json() for v in self.outputs]
        return doc


def _json_float(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _json_value(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return _json_float(float(v))
    return v


# ---------------------------------------------------------------------------------------- inputs

def _dtype_name(dtype: Any) -> str:
    name = str(dtype).removeprefix("torch.")
    name = _ALIASES.get(name, name)
    if name in THRESHOLDS or name in _EXACT:
        return name
    known = ", ".join([*THRESHOLDS, *sorted(_EXACT)])
    raise BadInput(f"precision: unknown output dtype {dtype!r}; known: {known}")


def _flat(x: Any):
    """A flat view (or, for non-contiguous input, a flat copy) of a tensor or array."""
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().reshape(-1)
    return np.asarray(x).reshape(-1)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in (x.shape if hasattr(x, "shape") else np.asarray(x).shape))


def _f64(src, start: int, stop: int) -> np.ndarray:
    """Elements [start, stop) of a flat tensor or array, widened to fp64 (read-only use)."""
    part = src[start:stop]
    if isinstance(part, torch.Tensor):
        if part.dtype in (torch.float64, torch.float32, torch.float16):
            return part.numpy().astype(np.float64, copy=False)
        if part.dtype in _VIA_ML_DTYPES:                 # exact, and far faster than torch's .to()
            carrier, ml = _VIA_ML_DTYPES[part.dtype]
            return part.view(carrier).numpy().view(ml).astype(np.float64)
        return part.to(torch.float64).numpy()
    return np.asarray(part, dtype=np.float64)


def truncate(golden: np.ndarray, dtype: str) -> np.ndarray:
    """The fp64 `golden` rounded once to `dtype` (nearest, ties to even) and widened back.

    Rounds directly from fp64 by integer arithmetic on the bit pattern (torch and ml_dtypes round
    bfloat16 via float32, which double-rounds near ties). Subnormals of the format keep its fixed
    quantum; values past its largest finite become inf of the same sign; inf and nan pass through.
    """
    mant, min_exp, max_finite = _FORMATS[_dtype_name(dtype)]
    golden = np.ascontiguousarray(golden, dtype=np.float64)
    drop = np.uint64(52 - mant)
    bits = golden.view(np.uint64)
    out = bits + ((bits >> drop) & np.uint64(1)) + np.uint64((1 << (51 - mant)) - 1)
    out &= ~np.uint64((1 << (52 - mant)) - 1)
    out = out.view(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        mag = np.abs(golden)
        tiny = mag < 2.0**min_exp
        if tiny.any():                                   # subnormal range: a fixed quantum
            q = 2.0 ** (min_exp - mant)
            out[tiny] = np.rint(golden[tiny] / q) * q
        bad = ~(mag <= max_finite)                       # too large, inf or nan
        if bad.any():
            past = bad & ~(np.abs(out) <= max_finite)
            out[past] = np.copysign(np.inf, golden[past])
            special = bad & ~np.isfinite(golden)
            out[special] = golden[special]
    return out


# ------------------------------------------------------------------------------- the scan (standard)

class _Kind:
    """Positions of one kind of failing element: count, first/last flat index, the first few."""

    def __init__(self) -> None:
        self.count = 0
        self.lo = -1
        self.hi = -1
        self.parts: list[np.ndarray] = []
        self.kept = 0

    def add(self, mask: np.ndarray, offset: int) -> None:
        if not mask.any():
            return
        idx = np.flatnonzero(mask)
        self.count += idx.size
        if self.lo < 0:
            self.lo = offset + int(idx[0])
        self.hi = offset + int(idx[-1])
        if self.kept < _INDEX_CAP:
            take = idx[: _INDEX_CAP - self.kept] + offset
            self.parts.append(take)
            self.kept += take.size

    @property
    def capped(self) -> bool:
        return self.count > self.kept

    def indices(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.empty(0, dtype=np.int64)


class _Best:
    """The largest value seen and its flat index."""

    def __init__(self) -> None:
        self.value = -math.inf
        self.index = -1

    def add(self, values: np.ndarray, mask: np.ndarray | None, offset: int) -> None:
        if mask is not None:
            if not mask.any():
                return
            values = np.where(mask, values, -np.inf)
        if values.size == 0:
            return
        i = int(np.argmax(values))
        if values[i] > self.value:
            self.value = float(values[i])
            self.index = offset + i


@dataclass
class _Scan:
    n: int = 0
    valid: int = 0
    err_sum: float = 0.0
    zeros: int = 0                   # kernel elements exactly 0
    k_zero: int = 0                  # ... among the normal region's failing elements
    golden_large: int = 0            # valid elements outside the small-value region
    introduced: _Kind = field(default_factory=_Kind)
    mismatch: _Kind = field(default_factory=_Kind)
    worst_all: _Best = field(default_factory=_Best)
    # regions
    n_small: int = 0
    n_cancel: int = 0
    n_normal: int = 0
    k_small: _Kind = field(default_factory=_Kind)
    k_cancel: _Kind = field(default_factory=_Kind)
    k_normal: _Kind = field(default_factory=_Kind)
    r_small: int = 0
    r_cancel: int = 0
    r_normal: int = 0                # reference failures anywhere in the normal region
    r_normal_at_k: int = 0           # ... at the kernel's failing points
    normal_err_sum: float = 0.0
    normal_signed_sum: float = 0.0
    normal_ref_err_sum: float = 0.0
    worst_normal: _Best = field(default_factory=_Best)
    worst_small: _Best = field(default_factory=_Best)
    worst_cancel: _Best = field(default_factory=_Best)


def _overflowed(a: np.ndarray, g: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(actual, golden) with a finite fp64 golden past the output format's range as the inf it
    rounds to (golden_truncated: exp(101) in a float32 output is +inf), where the kernel must give
    that inf or the format's largest finite of the same sign (a saturating Cast, the Cast API's
    documented default), which then counts as the inf."""
    mx = _FORMATS[_dtype_name(name)][2]
    with np.errstate(invalid="ignore"):
        big = np.abs(g) > mx
    if not big.any():
        return a, g
    g = g.copy()
    g[big] = truncate(g[big], name)
    over = big & np.isinf(g)
    saturated = over & (np.abs(a) == mx) & (np.sign(a) == np.sign(g))
    if saturated.any():
        a = a.copy()
        a[saturated] = g[saturated]
    return a, g


def _scan(act, orc, ben, name: str, th: Thresholds, side: ScanSide | None = None) -> _Scan:
    """The standard's statistics of `act` against `orc` (and `ben`). `side`: the reference's share
    of this scan computed beforehand (`ReferenceScan`), for the same elements: the same statistics
    without truncating the golden or judging the bench again."""
    s = _Scan(n=int(orc.shape[0]))
    mare = th.mare
    for start in range(0, s.n, _CHUNK):
        stop = min(start + _CHUNK, s.n)
        a, g = _f64(act, start, stop), _f64(orc, start, stop)
        fl = None if side is None else side.flags[start:stop]
        if fl is None or side.big:
            a, g = _overflowed(a, g, name)
        gfin = np.isfinite(g) if fl is None else (fl & _S_FINITE).view(bool)
        afin = np.isfinite(a)
        valid = gfin & afin
        all_valid = bool(valid.all())
        if not all_valid:
            s.introduced.add(gfin & ~afin, start)
            gbad = ~gfin
            with np.errstate(invalid="ignore"):
                matched = np.where(np.isnan(g), np.isnan(a), a == g)
            s.mismatch.add(gbad & ~matched, start)
        with np.errstate(invalid="ignore", over="ignore"):
            ag = np.abs(g)
            if fl is None:
                t = truncate(g, name)
                small = np.abs(t) < th.small_value
                cancel = (ag < th.cancel) & (ag >= th.small_value)
            else:
                small = (fl & _S_SMALL).astype(bool)
                cancel = (fl & _S_CANCEL).astype(bool)
            if not all_valid:
                small &= valid
            cancel &= np.abs(a) < th.cancel
            cancel &= ~small
            if not all_valid:
                cancel &= valid
            normal = ~(small | cancel)
            if not all_valid:
                normal &= valid
            n_normal = int(np.count_nonzero(normal))
            all_normal = n_normal == normal.size          # the usual chunk
            den = ag
            den += _EPS                                   # ag is not needed past this point
            err = a - g
            err /= den                                    # signed relative error ...
            if not all_valid:
                err[~valid] = 0.0
            s.normal_signed_sum += float(err.sum() if all_normal else np.sum(err, where=normal))
            np.abs(err, out=err)                          # ... then its magnitude
            over = err > mare
            k_cancel = cancel & over
            k_normal = normal & over
            n_small = int(np.count_nonzero(small))
            if n_small and fl is None:
                abs_t = np.abs(a - t)
                k_small = small & (abs_t > th.small_value_error)
                s.k_small.add(k_small, start)
                s.worst_small.add(abs_t, small, start)
            elif n_small:                                 # only at the small elements
                at = np.flatnonzero(small)
                abs_t = np.full(small.size, -np.inf)
                abs_t[at] = np.abs(a[at] - side.t[start:stop][at])
                s.k_small.add(abs_t > th.small_value_error, start)
                s.worst_small.add(abs_t, None, start)

        n_valid = stop - start if all_valid else int(np.count_nonzero(valid))
        s.valid += n_valid
        err_sum = float(err.sum())
        s.err_sum += err_sum
        s.worst_all.add(err, None, start)
        zeros = int(np.count_nonzero(a == 0))
        s.zeros += zeros
        s.n_small += n_small
        s.n_cancel += int(np.count_nonzero(cancel))
        s.n_normal += n_normal
        s.golden_large += n_valid - n_small
        s.k_cancel.add(k_cancel, start)
        s.k_normal.add(k_normal, start)
        if zeros and k_normal.any():
            s.k_zero += int(np.count_nonzero(k_normal & (a == 0)))
        if all_normal:
            s.normal_err_sum += err_sum
            s.worst_normal.add(err, None, start)
        elif n_normal:
            s.normal_err_sum += float(np.sum(err, where=normal))
            s.worst_normal.add(err, normal, start)
        s.worst_cancel.add(err, cancel, start)

        if fl is not None and side.berr is not None:
            bad = (fl & _S_BAD).astype(bool)
            if n_small:
                s.r_small += int(np.count_nonzero(small & (fl & _S_SMALL_BAD).astype(bool)))
            s.r_cancel += int(np.count_nonzero(cancel & bad))
            s.r_normal += int(np.count_nonzero(normal & bad))
            s.r_normal_at_k += int(np.count_nonzero(k_normal & bad))
            if n_normal:
                berr = side.berr[start:stop]
                s.normal_ref_err_sum += float(berr.sum() if all_normal else np.sum(berr, where=normal))
        elif ben is not None:
            b = _f64(ben, start, stop)
            with np.errstate(invalid="ignore", over="ignore"):
                berr = b - g
                np.abs(berr, out=berr)
                berr /= den
                bad = ~(berr <= mare)                       # nan/inf from the reference count as errors
                if n_small:
                    s.r_small += int(np.count_nonzero(small & ~(np.abs(b - t) <= th.small_value_error)))
                s.r_cancel += int(np.count_nonzero(cancel & bad))
                s.r_normal += int(np.count_nonzero(normal & bad))
                s.r_normal_at_k += int(np.count_nonzero(k_normal & bad))
                if n_normal:
                    if bad.any():
                        berr[np.isnan(berr)] = np.inf
                    s.normal_ref_err_sum += float(berr.sum() if all_normal
                                                  else np.sum(berr, where=normal))
    return s


# ------------------------------------------------------------- the reference's share, computed once

# Per-element bits of a ScanSide.
_S_FINITE, _S_SMALL, _S_CANCEL, _S_BAD, _S_SMALL_BAD = 1, 2, 4, 8, 16


@dataclass
class ScanSide:
    """What `_scan` computes from the golden and the same-precision reference alone, for a run of
    elements: per element the bits above (golden finite after the range rule; small-value region;
    cancellation candidate by the golden; the reference over the MARE limit; the reference over the
    small-value error), the truncated golden (exact in float32 for every format judged here), and
    the reference's relative error (nan as inf; None without a reference). `big`: some golden is
    past the format's range (those chunks take the range rule again, as without a side)."""

    flags: np.ndarray
    t: np.ndarray
    berr: np.ndarray | None
    big: bool
    name: str = ""                   # the format and limits it was computed for
    th: Thresholds | None = None

    @property
    def nbytes(self) -> int:
        return self.flags.nbytes + self.t.nbytes + (0 if self.berr is None else self.berr.nbytes)


def _side_of(g: np.ndarray, b: np.ndarray | None, name: str, th: Thresholds) -> ScanSide:
    """The reference's share of the scan for fp64 golden `g` and reference `b` (flat, same length)."""
    mx = _FORMATS[name][2]
    with np.errstate(invalid="ignore", over="ignore"):
        big = bool((np.abs(g) > mx).any())
        if big:
            g = _overflowed(g, g, name)[1]
        ag = np.abs(g)
        t = truncate(g, name)
        small = np.abs(t) < th.small_value
        flags = np.isfinite(g).astype(np.uint8)
        flags |= small.astype(np.uint8) << 1
        flags |= ((ag < th.cancel) & (ag >= th.small_value)).astype(np.uint8) << 2
        berr = None
        if b is not None:
            berr = np.abs(b - g)
            berr /= ag + _EPS
            flags |= (~(berr <= th.mare)).astype(np.uint8) << 3
            flags |= (~(np.abs(b - t) <= th.small_value_error)).astype(np.uint8) << 4
            berr[np.isnan(berr)] = np.inf
    return ScanSide(flags, t.astype(np.float32), berr, big, name, th)


class ReferenceScan:
    """The reference's share of the scan of one output (the fp64 oracle and the same-precision
    reference do not change between the candidates judged against them), computed by blocks of
    `BLOCK` elements when first needed and kept: a sampled run's judge computes only the blocks
    its written elements fall in. Belongs to the judging process; nothing a kernel runs can reach it."""

    BLOCK = 1 << 18

    def __init__(self, oracle, bench, dtype: str, threshold: float | None = None) -> None:
        import threading

        self.name = _dtype_name(dtype)
        standard = self.name in THRESHOLDS and threshold != 0     # else judged exactly or bit by bit
        self.th = thresholds_for(self.name, threshold) if standard else None
        self.oracle, self.bench = _flat(oracle), None if bench is None else _flat(bench)
        self.n = int(self.oracle.shape[0])
        self.blocks: dict[int, ScanSide] = {}
        self.lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self.blocks.values())

    def _block(self, k: int) -> ScanSide:
        with self.lock:
            hit = self.blocks.get(k)
        if hit is None:
            lo, hi = k * self.BLOCK, min((k + 1) * self.BLOCK, self.n)
            hit = _side_of(_f64(self.oracle, lo, hi), None if self.bench is None else _f64(self.bench, lo, hi),
                           self.name, self.th)
            with self.lock:
                self.blocks[k] = hit
        return hit

    def view(self, runs: list[tuple[int, int]] | None = None) -> ScanSide | None:
        """The side of the elements in `runs` ([lo, hi) in order; all when None), concatenated;
        None for an output the standard's scan does not judge."""
        if self.th is None:
            return None
        parts = []
        for lo, hi in runs if runs is not None else [(0, self.n)]:
            for k in range(lo // self.BLOCK, (hi - 1) // self.BLOCK + 1 if hi > lo else lo // self.BLOCK):
                b, base = self._block(k), k * self.BLOCK
                a, z = max(lo, base) - base, min(hi, base + self.BLOCK) - base
                parts.append(ScanSide(b.flags[a:z], b.t[a:z], None if b.berr is None else b.berr[a:z], b.big,
                                      self.name, self.th))
        if len(parts) == 1:
            return parts[0]
        cat = (lambda xs: np.concatenate(xs)) if parts else (lambda xs: np.empty(0))
        return ScanSide(cat([p.flags for p in parts]).astype(np.uint8), cat([p.t for p in parts]).astype(np.float32),
                        None if self.bench is None else cat([p.berr for p in parts]).astype(np.float64),
                        any(p.big for p in parts), self.name, self.th)


# ----------------------------------------------------------------------------------- formatting

def _pow2(x: float) -> str:
    e = math.log2(x)
    return f"2^{int(e)}" if e == int(e) else f"{x:.3g}"


def _in_t(x: float, T: float) -> str:
    return f"{x / T:.3g}T" if math.isfinite(x) else str(x)


def _index(flat: int, shape: tuple[int, ...]) -> tuple:
    if flat < 0:
        return None
    if not shape:
        return ()
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _ratio_ok(kernel: int, ref: int) -> bool:
    return kernel / max(ref, 1) <= 2


@dataclass
class _Location:
    localized: bool
    text: str


def _locate(kinds: list[_Kind], n: int, shape: tuple[int, ...]) -> _Location:
    """Where failing elements lie: one contiguous flat range, a few rows, or scattered."""
    kinds = [k for k in kinds if k.count]
    count = sum(k.count for k in kinds)
    lo = min(k.lo for k in kinds)
    hi = max(k.hi for k in kinds)
    span = hi - lo + 1
    if count / span >= 0.5 and span <= 0.9 * n:
        text = f"in flat [{lo}, {hi}] ({count} of {span} elements in that range"
        if n - 1 - hi <= span // 8:
            text += f"; the trailing {n - lo} elements"
        elif lo <= span // 8:
            text += f"; the leading {hi + 1} elements"
        if lo > 0:
            align = lo & -lo
            text += f"; starts at {lo // align}x{align}" if align > 1 else ""
        return _Location(True, text + ")")
    capped = any(k.capped for k in kinds)
    idx = np.sort(np.concatenate([k.indices() for k in kinds]))
    if len(shape) >= 2 and not capped:
        width = shape[-1]
        rows = np.unique(idx // width)
        n_rows = n // max(width, 1)
        if len(rows) <= 8 and len(rows) <= max(1, n_rows // 10):
            names = ", ".join(str(_index(int(r), shape[:-1])) for r in rows)
            return _Location(True, f"in {len(rows)} row(s) of the last dim ({width} wide): {names}")
    first = ", ".join(str(int(i)) for i in idx[:5])
    return _Location(False, f"scattered over flat [{lo}, {hi}], first at flat {first}")


# ------------------------------------------------------------------------------------- the judge

def _shape_verdict(mode: str, a_shape, o_shape) -> CaseVerdict:
    return CaseVerdict(False, mode, math.nan, math.nan, "shape_mismatch", {},
                       f"shape mismatch: kernel output {list(a_shape)}, expected {list(o_shape)}", None)


def _judge_exact(actual, oracle, shape: tuple[int, ...], tol: int = 0) -> CaseVerdict:
    """Integer and bool outputs: |kernel - golden| <= tol everywhere (tol 0: equal)."""
    a = torch.as_tensor(actual).detach().cpu().reshape(-1)
    o = torch.as_tensor(oracle).detach().cpu().reshape(-1)
    if a.dtype.is_floating_point or o.dtype.is_floating_point:
        a, o = a.to(torch.float64), o.to(torch.float64)
    else:
        a, o = a.to(torch.int64), o.to(torch.int64)
    wrong = (a - o).abs() > tol if tol else a != o
    mode = f"exact±{tol}" if tol else "exact"
    rule = f"|kernel - golden| <= {tol} required" if tol else "exact match required"
    count = int(torch.count_nonzero(wrong))
    if count == 0:
        return CaseVerdict(True, mode, math.nan, math.nan, None, {},
                           f"{'within ±' + str(tol) if tol else 'exact match'} ({a.numel()} elements)", None)
    first = int(torch.nonzero(wrong)[0, 0])
    where = _index(first, shape)
    kind = _Kind()
    kind.add(wrong.numpy(), 0)
    loc = _locate([kind], a.numel(), shape)
    msg = (f"{count} of {a.numel()} elements differ ({rule}); first at {where}: "
           f"kernel {_num(a[first])}, expected {_num(o[first])}; {loc.text}")
    return CaseVerdict(False, mode, math.nan, math.nan, "integer_mismatch", {}, msg, where)


_BIT_VIEWS = {"float16": (torch.float16, torch.int16), "bfloat16": (torch.bfloat16, torch.int16),
              "float32": (torch.float32, torch.int32), "hifloat32": (torch.float32, torch.int32)}


def _judge_bits(actual, oracle, shape: tuple[int, ...], name: str) -> CaseVerdict:
    """A float output with a declared threshold of 0: bit-exact against the golden rounded to the
    output dtype (+0.0 / -0.0, the sign of inf and nan payloads all count)."""
    if name not in _BIT_VIEWS:
        raise BadInput(f"precision: a bit-exact threshold is not supported for {name}")
    fdt, idt = _BIT_VIEWS[name]
    a = torch.as_tensor(actual).detach().cpu().reshape(-1).to(fdt).view(idt)
    g = truncate(_flat(oracle).to(torch.float64).numpy() if isinstance(oracle, torch.Tensor)
                 else np.asarray(oracle, dtype=np.float64).reshape(-1), name)
    o = torch.from_numpy(g).to(fdt).view(idt)
    wrong = a != o
    count = int(torch.count_nonzero(wrong))
    if count == 0:
        return CaseVerdict(True, "bitexact", 0.0, 0.0, None, {}, f"bit-exact ({a.numel()} elements)", None)
    first = int(torch.nonzero(wrong)[0, 0])
    where = _index(first, shape)
    kind = _Kind()
    kind.add(wrong.numpy(), 0)
    loc = _locate([kind], a.numel(), shape)
    af, of = a[first].view(fdt).item(), o[first].view(fdt).item()
    return CaseVerdict(False, "bitexact", math.nan, math.nan, "bit_mismatch", {},
                       f"{count} of {a.numel()} elements are not bit-exact (the task's threshold is 0); "
                       f"first at {where}: kernel {af!r}, expected {of!r}; {loc.text}", where)


def thresholds_for(name: str, threshold: float | None) -> Thresholds:
    """The standard's limits for `name`, with T replaced by a task's declared threshold (its
    proto's `precision_thresholds`; the MARE limit is then 10 x that threshold, as the public
    protos state). The small-value and cancellation limits stay the table's."""
    base = THRESHOLDS[name]
    if threshold is None:
        return base
    return Thresholds(float(threshold), 10.0 * float(threshold), base.small_value,
                      base.small_value_error, base.cancel)


def _num(x) -> str:
    v = x.item() if hasattr(x, "item") else x
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def judge(actual, oracle, bench, dtype: str, threshold: float | None = None,
          side: ScanSide | None = None) -> CaseVerdict:
    """Judge one output by the Ascend precision standard (docs/precision.md).

    `actual`: the kernel's output (any float dtype); `oracle`: fp64 truth; `bench`: the
    same-precision reference output, or None (the reference then counts 0 errors); `dtype`: the
    output dtype name. `threshold`: the task's declared threshold for this dtype, if any: for
    integer and bool outputs the allowed |kernel - golden| (none: exact match), for float outputs
    the MERE limit T (MARE limit 10T), 0 meaning bit-exact. `side`: the reference's share of
    the scan for these elements (`ReferenceScan.view`), computed once for every kernel judged.
    """
    name = _dtype_name(dtype)
    a_shape, o_shape = _shape(actual), _shape(oracle)
    if a_shape != o_shape:
        return _shape_verdict("exact" if name in _EXACT else "standard", a_shape, o_shape)
    if threshold is not None and not (threshold >= 0 and math.isfinite(threshold)):
        raise BadInput(f"precision: threshold {threshold!r} for {name} must be a finite number >= 0")
    if name in _EXACT:
        tol = 0 if threshold is None else threshold
        if tol != int(tol):
            raise BadInput(f"precision: integer threshold {threshold!r} for {name} must be a whole number")
        return _judge_exact(actual, oracle, o_shape, int(tol))
    if threshold == 0:
        return _judge_bits(actual, oracle, o_shape, name)
    if bench is not None and _shape(bench) != o_shape:
        raise BadInput(f"precision: the same-precision reference has shape {list(_shape(bench))}, "
                       f"the oracle {list(o_shape)}; check the golden's bench function")
    th = thresholds_for(name, threshold)
    if side is not None and (side.name != name or side.th != th or side.flags.shape[0] != math.prod(o_shape)
                             or (side.berr is None) != (bench is None)):
        side = None                                   # computed for other elements or limits
    s = _scan(_flat(actual), _flat(oracle), None if bench is None else _flat(bench), name, th, side)
    return _verdict(s, th, o_shape)


def _verdict(s: _Scan, th: Thresholds, shape: tuple[int, ...]) -> CaseVerdict:
    T = th.T
    mere = s.err_sum / s.valid if s.valid else 0.0
    mare = s.worst_all.value if s.valid else 0.0
    mere_n = s.normal_err_sum / s.n_normal if s.n_normal else 0.0
    ref_mere_n = s.normal_ref_err_sum / s.n_normal if s.n_normal else 0.0

    # Region verdicts (reported always; they decide the case only when step 1 fails).
    small_ok = _ratio_ok(s.k_small.count, s.r_small)
    cancel_ok = _ratio_ok(s.k_cancel.count, s.r_cancel)
    F, Fb = s.k_normal.count, s.r_normal_at_k
    # benchmark_spec §4.4 "同精度兜底": only when the reference also fails at the kernel's failing
    # points; then ErrorCount_npu / max(ErrorCount_cpu, 1) <= 2 over the whole normal region.
    normal_count_ok = F == 0 or (Fb > 0 and _ratio_ok(F, s.r_normal))
    normal_mere_ok = mere_n < T or (ref_mere_n >= T and mere_n <= 2 * ref_mere_n)
    normal_ok = normal_count_ok and normal_mere_ok
    regions = {
        "normal": {"count": s.n_normal, "failed": F, "ref_failed": Fb,
                   "ref_failed_total": s.r_normal, "mere": mere_n, "ref_mere": ref_mere_n,
                   "passed": normal_ok},
        "small_value": {"count": s.n_small, "kernel_errors": s.k_small.count,
                        "ref_errors": s.r_small, "passed": small_ok},
        "cancellation": {"count": s.n_cancel, "kernel_errors": s.k_cancel.count,
                         "ref_errors": s.r_cancel, "passed": cancel_ok},
    }
    limits = f"T={_pow2(T)}, MARE limit {_pow2(th.mare)}"
    stats = f"MERE {mere:.3g} ({_in_t(mere, T)}), MARE {mare:.3g} ({_in_t(mare, T)})"

    def fail(cls: str, msg: str, worst: int) -> CaseVerdict:
        return CaseVerdict(False, "standard", mere, mare, cls, regions, msg, _index(worst, shape))

    if s.introduced.count:
        return fail("nan_inf_introduced",
                    f"{s.introduced.count} nan/inf in the kernel output where the golden is finite, "
                    f"first at {_index(s.introduced.lo, shape)} (flat {s.introduced.lo}); "
                    f"{_locate([s.introduced], s.n, shape).text}", s.introduced.lo)
    if s.mismatch.count:
        return fail("nan_inf_mismatch",
                    f"{s.mismatch.count} element(s) where the golden is inf/nan do not match it, "
                    f"first at {_index(s.mismatch.lo, shape)} (flat {s.mismatch.lo})", s.mismatch.lo)

    step1 = mere < T and mare < th.mare
    if step1 or (small_ok and cancel_ok and normal_ok):
        how = "" if step1 else " (after the region rules: " + _region_summary(regions) + ")"
        return CaseVerdict(True, "standard", mere, mare, None, regions,
                           f"pass: {stats}; {limits}{how}", _index(s.worst_all.index, shape))

    if s.zeros == s.n and s.golden_large:
        return fail("zero_output",
                    f"the kernel output is all zeros; the golden has {s.golden_large} element(s) "
                    f"at or above the small-value threshold {_pow2(th.small_value)}; {stats}",
                    s.worst_all.index)

    parts = []          # evidence for each failing region, most important first
    if not normal_ok:
        if F:
            ref = ("the reference is clean there" if Fb == 0 else
                   f"the reference fails at {Fb} of them, {s.r_normal} in the region "
                   f"(ratio {F / max(s.r_normal, 1):.3g} > 2)")
            parts.append(f"normal region: {F} of {s.n_normal} elements over the MARE limit "
                         f"{_pow2(th.mare)} ({ref}); worst rel err {s.worst_normal.value:.3g} "
                         f"({_in_t(s.worst_normal.value, T)}) at {_index(s.worst_normal.index, shape)}")
        if not normal_mere_ok:
            parts.append(f"normal region MERE {_in_t(mere_n, T)} >= T (reference {_in_t(ref_mere_n, T)}), "
                         f"mean signed rel err {_in_t(s.normal_signed_sum / s.n_normal, T)}")
    if not small_ok:
        parts.append(f"small-value region (|golden| < {_pow2(th.small_value)}): {s.k_small.count} "
                     f"kernel errors over {_pow2(th.small_value_error)} vs {s.r_small} for the "
                     f"reference, {REFERENCE} (ratio {s.k_small.count / max(s.r_small, 1):.3g} > 2); worst abs err "
                     f"{s.worst_small.value:.3g} at {_index(s.worst_small.index, shape)}")
    if not cancel_ok:
        parts.append(f"cancellation region (|kernel| and |golden| < {_pow2(th.cancel)}): "
                     f"{s.k_cancel.count} kernel errors over {_pow2(th.mare)} vs {s.r_cancel} for the "
                     f"reference, {REFERENCE} (ratio {s.k_cancel.count / max(s.r_cancel, 1):.3g} > 2); worst rel err "
                     f"{s.worst_cancel.value:.3g} at {_index(s.worst_cancel.index, shape)}")

    if normal_ok:
        kinds = [k for k, ok in ((s.k_small, small_ok), (s.k_cancel, cancel_ok)) if not ok]
        worst = s.worst_small.index if not small_ok else s.worst_cancel.index
        return fail("small_value_error", "; ".join(parts) + f"; {_locate(kinds, s.n, shape).text}",
                    worst)
    if F == 0:
        return fail("systematic_drift", "; ".join(parts) + "; every element is off a little: "
                    "look for a scale, rounding or accumulation-precision error", s.worst_normal.index)

    kinds = [s.k_normal] + [k for k, ok in ((s.k_small, small_ok), (s.k_cancel, cancel_ok)) if not ok]
    loc = _locate(kinds, s.n, shape)
    signed = s.normal_signed_sum / s.n_normal
    most_fail = F >= 0.5 * s.n_normal
    drift = abs(signed) >= T and abs(signed) >= 0.5 * mere_n
    if not loc.localized and (most_fail or drift):
        if normal_mere_ok:
            parts.append(f"mean signed rel err {_in_t(signed, T)}")
        return fail("systematic_drift", "; ".join(parts) + f"; {F / s.n_normal:.1%} of the normal "
                    "region fails", s.worst_normal.index)
    zeros = f"; the kernel wrote 0 at {s.k_zero} of them" if s.k_zero else ""
    return fail("localized_outlier", "; ".join(parts) + f"; {loc.text}{zeros}", s.worst_normal.index)


def _region_summary(regions: dict) -> str:
    n, sv, c = regions["normal"], regions["small_value"], regions["cancellation"]
    return (f"normal {n['failed']} over the MARE limit, reference at those {n['ref_failed']}; "
            f"small-value {sv['kernel_errors']} vs {sv['ref_errors']}; "
            f"cancellation {c['kernel_errors']} vs {c['ref_errors']}")


def judge_outputs(actuals, oracles, benches, dtypes, thresholds=None) -> CaseVerdict:
    """Judge every output of a case; the case passes only if all pass.

    A failed verdict is the first failing output's, its message prefixed with that output's index;
    `outputs` holds every output's verdict.
    """
    actuals, oracles = list(actuals), list(oracles)
    benches = [None] * len(oracles) if benches is None else list(benches)
    dtypes = [dtypes] * len(oracles) if isinstance(dtypes, str) else list(dtypes)
    if not (len(actuals) == len(oracles) == len(benches) == len(dtypes)):
        if len(actuals) != len(oracles):
            return CaseVerdict(False, "standard", math.nan, math.nan, "shape_mismatch", {},
                               f"the kernel produced {len(actuals)} output(s), expected {len(oracles)}",
                               None)
        raise BadInput(f"precision: {len(oracles)} oracle outputs but {len(benches)} references "
                       f"and {len(dtypes)} dtypes")
    thresholds = thresholds or {}
    verdicts = [judge(a, o, b, d, thresholds.get(_dtype_name(d))) for a, o, b, d in
                zip(actuals, oracles, benches, dtypes)]
    return _combine(verdicts)


def _combine(verdicts: list[CaseVerdict]) -> CaseVerdict:
    if len(verdicts) == 1:
        return verdicts[0]
    n = len(verdicts)
    for i, v in enumerate(verdicts):
        if not v.passed:
            return CaseVerdict(False, v.mode, v.mere, v.mare, v.failure_class, v.regions,
                               f"output {i} of {n}: {v.message}", v.worst_index, verdicts)
    meres = [v.mere for v in verdicts if not math.isnan(v.mere)]
    mares = [v.mare for v in verdicts if not math.isnan(v.mare)]
    return CaseVerdict(True, verdicts[0].mode, max(meres) if meres else math.nan,
                       max(mares) if mares else math.nan, None, {},
                       f"pass: all {n} outputs (" + "; ".join(f"{i}: {v.message}" for i, v in
                                                             enumerate(verdicts)) + ")",
                       None, verdicts)


# ------------------------------------------------------------------------------ KernelBench mode

def judge_allclose(actual, expected, dtype: str) -> CaseVerdict:
    """KernelBench mode: torch.allclose semantics, atol = rtol = 1e-4 (float32) or 1e-2
    (float16/bfloat16); integer and bool outputs must match exactly. nan never matches."""
    name = _dtype_name(dtype)
    a_shape, e_shape = _shape(actual), _shape(expected)
    if a_shape != e_shape:
        return _shape_verdict("exact" if name in _EXACT else "allclose", a_shape, e_shape)
    if name in _EXACT:
        return _judge_exact(actual, expected, e_shape)
    if name not in _ALLCLOSE_TOL:
        raise BadInput(f"precision: allclose mode has no tolerance for {name}; "
                       f"use one of {', '.join(_ALLCLOSE_TOL)} or the standard mode")
    tol = _ALLCLOSE_TOL[name]
    act, exp = _flat(actual), _flat(expected)
    n = int(exp.shape[0])
    wrong, introduced, mismatch = _Kind(), _Kind(), _Kind()
    worst = _Best()
    zeros = nonzero_expected = 0
    for start in range(0, n, _CHUNK):
        stop = min(start + _CHUNK, n)
        a, e = _f64(act, start, stop), _f64(exp, start, stop)
        with np.errstate(invalid="ignore", over="ignore"):
            excess = np.abs(a - e) - (tol + tol * np.abs(e))
            close = (a == e) | (excess <= 0)
        wrong.add(~close, start)
        efin = np.isfinite(e)
        introduced.add(efin & ~np.isfinite(a), start)
        mismatch.add(~efin & ~close, start)
        worst.add(np.where(np.isfinite(excess), excess, -np.inf), None, start)
        zeros += int(np.count_nonzero(a == 0))
        nonzero_expected += int(np.count_nonzero(e != 0))
    crit = f"atol = rtol = {tol:g}"
    if not wrong.count:
        return CaseVerdict(True, "allclose", math.nan, math.nan, None, {},
                           f"pass: all {n} elements within {crit}", None)
    first = _index(wrong.lo, e_shape)
    if introduced.count:
        cls, lead = "nan_inf_introduced", f"{introduced.count} nan/inf where the expected value is finite"
        where = introduced.lo
    elif mismatch.count:
        cls, lead = "nan_inf_mismatch", f"{mismatch.count} element(s) where the expected value is inf/nan differ"
        where = mismatch.lo
    elif zeros == n and nonzero_expected:
        cls, lead = "zero_output", "the kernel output is all zeros"
        where = wrong.lo
    else:
        loc = _locate([wrong], n, e_shape)
        lead = f"{wrong.count} of {n} elements ({wrong.count / n:.1%}) outside {crit}"
        if not loc.localized and wrong.count >= n / 2:
            cls = "systematic_drift"
        else:
            cls, lead = "localized_outlier", f"{lead}; {loc.text}"
        where = worst.index if worst.index >= 0 else wrong.lo
    msg = f"{lead}; first at {first}; worst excess over the tolerance {worst.value:.3g}"
    return CaseVerdict(False, "allclose", math.nan, math.nan, cls, {}, msg, _index(where, e_shape))
