"""The sim backend's cost model, Python side: parameters per chip, the kernel-time ESTIMATE from
the per-core timelines (`cannsim/cost_timeline.h`), its bottleneck class, and the roofline bound.

Every number produced here is an estimate of a model, never a measurement: results carry
`timing = "estimate"`. Parameters come from the chip profile's `cost:` section, each with its
source or `provisional`; the 910B2 and 950PR values are fitted by bench/calibrate.py on CANN-Bench's public
measurements (see docs/cost-model.md).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from copilot.chips import ChipProfile

CHIP_DIR = Path(__file__).resolve().parents[1] / "chips"

# Vector cycles per 256-byte repeat, relative to Add (1.0). Transcendentals and division are
# multi-pass on the vector unit. Provisional: no public per-instruction figures; fitted where the
# calibration set exercises them (Exp via sigmoid/exp/softmax, Sqrt/Div via rms_norm).
API_WEIGHTS: dict[str, float] = {
    "Add": 1.0, "Sub": 1.0, "Mul": 1.0, "Max": 1.0, "Min": 1.0, "Adds": 1.0, "Muls": 1.0,
    "Maxs": 1.0, "Mins": 1.0, "Abs": 1.0, "Relu": 1.0, "LeakyRelu": 1.0, "Duplicate": 1.0,
    "Not": 1.0, "Neg": 1.0, "Select": 1.0, "Compare": 1.0, "Compares": 1.0, "DataCopy": 1.0,
    "Cast": 1.0, "Div": 4.0, "Reciprocal": 2.0, "Sqrt": 4.0, "Rsqrt": 4.0, "Exp": 4.0, "Ln": 4.0,
    "ReduceSum": 2.0, "ReduceMax": 2.0, "ReduceMin": 2.0, "WholeReduceSum": 1.5,
    "WholeReduceMax": 1.5, "WholeReduceMin": 1.5, "BlockReduceSum": 1.0, "BlockReduceMax": 1.0,
    "BlockReduceMin": 1.0, "ReduceRepeat": 1.5, "ReduceDataBlock": 1.0,
    # sort instructions, per 256 B of 8-byte (score, index) structures (provisional)
    "Sort32": 4.0, "MrgSort": 2.0, "Extract": 1.0, "Concat": 1.0,
    # integer, gather and fill instructions (provisional): bitwise/shift ops run like Add; Gather
    # reads one element per lane from an arbitrary UB address, taken as two passes
    "And": 1.0, "Or": 1.0, "ShiftLeft": 1.0, "ShiftRight": 1.0, "Ands": 1.0, "Ors": 1.0, "Subs": 1.0,
    "Divs": 4.0, "Gather": 2.0, "Gatherb": 1.0, "GatherMask": 1.0, "Brcb": 1.0, "CreateVecIndex": 1.0,
    "Arange": 1.0, "AddRelu": 1.0, "SubRelu": 1.0, "FusedMulAdd": 1.0, "MulAddDst": 1.0, "Axpy": 1.0,
}


@dataclass(frozen=True)
class CostParams:
    clock_ghz: float = 1.8
    hbm_gbps: float = 1850.0               # sustained chip-wide HBM bandwidth for a streaming kernel
    hbm_peak_gbps: float = 3840.0          # the bandwidth the roofline assumes
    core_dma_gbps: float = 115.0           # most one core's MTE engine moves
    dma_latency_us: float = 0.5
    small_burst_bytes: int = 512
    gm_unaligned_efficiency: float = 0.7
    vector_bytes_per_cycle: int = 256
    vector_issue_cycles: float = 12.0
    scalar_issue_cycles: float = 2.0
    scalar_access_cycles: float = 10.0
    launch_us: float = 4.0                 # kernel launch and completion, per kernel
    # the cube core (cannsim/cube.h): MACs per cycle by input element size, Mmad start-up, the
    # L1 -> L0A / L0B rates (MTE1) and the L0C -> GM rate (FIX)
    cube_macs_b16: float = 4096.0
    cube_macs_b8: float = 8192.0
    cube_macs_b32: float = 2048.0
    cube_issue_cycles: float = 16.0
    l1_to_l0a_bytes_per_cycle: float = 256.0
    l1_to_l0b_bytes_per_cycle: float = 128.0
    mte1_issue_cycles: float = 8.0
    fixp_bytes_per_cycle: float = 128.0
    # the chip's fitted vector weights (`<Api>` or `<Api>.b16`/`.b32`, over API_WEIGHTS) and the
    # error band per bound class (fraction: 0.35 = a factor 1.35 either way), both from bench/calibrate.py
    weights: dict = field(default_factory=dict)
    bands: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict, compare=False)

    def vector_weights(self) -> dict[str, float]:
        """API_WEIGHTS with the chip's fitted entries on top."""
        return {**API_WEIGHTS, **self.weights}

    def band(self, bottleneck: str | None) -> float | None:
        """The error band of an estimate bound by `bottleneck` (its class's, else the chip's pooled
        one); None when the chip has no calibration."""
        if not self.bands:
            return None
        b = self.bands.get(bottleneck or "", self.bands.get("all"))
        return float(b) if b is not None else None

    def cxx_line(self, active_cores: int, weights: dict[str, float] | None = None) -> str:
        """The `cost` line the harness hands to `cannsim::cost::configure` (cycles, bytes/cycle),
        with the per-API vector weights (`API_WEIGHTS` unless given) as `weight.<Api>=<w>`: the
        emulator has no table of its own."""
        cyc = self.clock_ghz * 1000.0          # cycles per microsecond
        line = ("cost clock_ghz={:.6g} hbm_bytes_per_cycle={:.6g} core_dma_bytes_per_cycle={:.6g} "
                "dma_latency_cycles={:.6g} small_burst_bytes={} gm_unaligned_efficiency={:.6g} "
                "vector_bytes_per_cycle={} vector_issue_cycles={:.6g} scalar_issue_cycles={:.6g} "
                "scalar_access_cycles={:.6g} active_cores={}").format(
            self.clock_ghz, self.hbm_gbps / self.clock_ghz, self.core_dma_gbps / self.clock_ghz,
            self.dma_latency_us * cyc, self.small_burst_bytes, self.gm_unaligned_efficiency,
            self.vector_bytes_per_cycle, self.vector_issue_cycles, self.scalar_issue_cycles,
            self.scalar_access_cycles, active_cores)
        line += "".join(f" {k}={getattr(self, k):.6g}" for k in _CUBE_KEYS)
        return line + "".join(f" weight.{api}={float(w)!r}" for api, w in _checked_weights(
            self.vector_weights() if weights is None else weights).items())


_CUBE_KEYS = ("cube_macs_b16", "cube_macs_b8", "cube_macs_b32", "cube_issue_cycles", "l1_to_l0a_bytes_per_cycle",
              "l1_to_l0b_bytes_per_cycle", "mte1_issue_cycles", "fixp_bytes_per_cycle")


def cube_macs_per_cycle(params: CostParams, elem_bytes: int) -> float:
    """One cube core's MACs per cycle for inputs of `elem_bytes` (1: int8, 2: fp16/bf16, 4: fp32)."""
    return {1: params.cube_macs_b8, 2: params.cube_macs_b16}.get(elem_bytes, params.cube_macs_b32)


def _checked_weights(weights: dict[str, float]) -> dict[str, float]:
    """The weights as the harness can read them: API names are identifiers, weights finite and > 0."""
    for api, w in weights.items():
        name, _, size = api.partition(".") if isinstance(api, str) else (api, "", "")
        if not (isinstance(name, str) and name.isidentifier()) or size not in ("", "b8", "b16", "b32", "b64"):
            raise ValueError(f"vector weight for {api!r}: an API name must be an identifier, optionally "
                             "with an element size .b8/.b16/.b32/.b64")
        if not (isinstance(w, (int, float)) and math.isfinite(w) and w > 0):
            raise ValueError(f"vector weight of {api}: {w!r} is not a finite positive number")
    return weights


@functools.lru_cache(maxsize=None)
def _chip_cost_params(chip: str | ChipProfile) -> CostParams:
    from copilot.chips import load_chip

    profile = load_chip(chip)
    data = yaml.safe_load((CHIP_DIR / f"{profile.name}.yaml").read_text()) or {}
    section = data.get("cost") or {}
    values, sources = {}, {}
    for f in fields(CostParams):
        if f.name == "sources":
            continue
        entry = section.get({"weights": "vector_weights", "bands": "est_band"}.get(f.name, f.name))
        if f.name in ("weights", "bands"):
            if isinstance(entry, dict) and isinstance(entry.get("value"), dict):
                values[f.name] = {str(k): float(v) for k, v in entry["value"].items()}
                sources[f.name] = str(entry.get("source", "provisional"))
            else:
                sources[f.name] = "provisional: none fitted"
            continue
        if isinstance(entry, dict) and "value" in entry:
            values[f.name] = type(getattr(CostParams, f.name))(entry["value"])
            sources[f.name] = str(entry.get("source", "provisional"))
        else:
            sources[f.name] = "provisional: model default"
    return CostParams(**values, sources=sources)


def cost_params(chip: str | ChipProfile) -> CostParams:
    """The chip profile's `cost:` section; missing values keep the defaults, marked provisional.
    Read once per chip and process (profiles are package data)."""
    cached = _chip_cost_params(chip)
    return replace(cached, sources=dict(cached.sources))


@dataclass
class Estimate:
    """A kernel's estimated time for one case, and why."""

    time_us: float
    pipes_us: dict[str, float]             # busy time per pipe on the critical (slowest) core
    bottleneck: str                        # memory | vector | cube | scalar | latency
    t_hw_us: float | None = None
    roofline_fraction: float | None = None
    block_dim: int = 0
    unmodelled: int = 0                    # instructions without a cost: the estimate is incomplete
    hbm_us: float = 0.0                    # the slowest core's traffic through its share of HBM
    # the error band of this estimate (fraction, 0.35 = a factor 1.35 either way): held-out calibration residuals of
    # its bound class on this chip (docs/cost-model.md); None when the chip is not calibrated
    band: float | None = None
    # the slowest core's vector work per "<Api>.b<bits>": [instructions, 256-byte repeats]
    vector_counts: dict = field(default_factory=dict)
    gm_bytes: float = 0.0                  # the slowest core's GM traffic (in + out)
    timing: str = "estimate"
    # the roofline's two terms: {"memory_us", "vector_us" (None: the golden's vector work is
    # unknown, the bound is the memory term alone), "vector_note" (why, when None)}
    roofline_terms: dict | None = None

    def to_json(self) -> dict:
        return {"est_us": self.time_us, "pipes": self.pipes_us, "hbm_us": self.hbm_us, "bottleneck": self.bottleneck,
                "t_hw_us": self.t_hw_us, "roofline_fraction": self.roofline_fraction,
                "roofline_terms": self.roofline_terms, "block_dim": self.block_dim, "timing": self.timing,
                "est_band": self.band}

    def text(self) -> str:
        """`12.70 µs est. (×÷1.35)`: the figure with its provenance and its band."""
        return format_estimate(self.time_us, self.band)


def parse_block_costs(lines: list[str]) -> list[dict]:
    """The `{"kind":"cost",...}` JSON lines the harness wrote, one per block."""
    out = []
    for line in lines:
        line = line.strip()
        if line.startswith("{") and '"kind":"cost"' in line.replace(" ", ""):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def classify(pipes_us: dict[str, float], kernel_us: float, launch_us: float, hbm_us: float = 0.0) -> str:
    """The pipe that bounds the kernel, or `latency` when no pipe is busy most of the time.

    Memory counts an engine's busy time or the core's share of HBM (its traffic through its slice
    of the chip's bandwidth), whichever is larger: with many cores streaming, HBM is the limit."""
    body = kernel_us - launch_us
    if body <= launch_us:
        return "latency"
    mem = max(pipes_us.get("MTE2", 0.0), pipes_us.get("MTE3", 0.0), pipes_us.get("FIX", 0.0), hbm_us)
    cube = max(pipes_us.get("M", 0.0), pipes_us.get("MTE1", 0.0))
    busiest = max(("memory", mem), ("vector", pipes_us.get("V", 0.0)), ("cube", cube),
                  ("scalar", pipes_us.get("S", 0.0)), key=lambda kv: kv[1])
    return busiest[0] if busiest[1] >= 0.5 * body else "latency"


def combine(blocks: list[dict], params: CostParams, block_dim: int) -> Estimate:
    """Kernel time = slowest core + launch overhead."""
    if not blocks:
        raise ValueError("no block reported a cost")
    worst = max(blocks, key=lambda b: b["us"])
    time_us = worst["us"] + params.launch_us
    # the cube core's pipes (M, MTE1, FIX) only where a core used them
    pipes = {k: float(v) for k, v in worst["pipes_us"].items() if k not in ("M", "MTE1", "FIX") or float(v) > 0}
    unmodelled = sum(int(b.get("unmodelled", 0)) for b in blocks)
    hbm_us = float(worst.get("hbm_us", 0.0))
    bottleneck = classify(pipes, time_us, params.launch_us, hbm_us)
    return Estimate(time_us, pipes, bottleneck, band=params.band(bottleneck),
                    block_dim=block_dim, unmodelled=unmodelled, hbm_us=hbm_us,
                    vector_counts=dict(worst.get("vec") or {}),
                    gm_bytes=float(worst.get("gm_bytes_in", 0.0)) + float(worst.get("gm_bytes_out", 0.0)))


def roofline_terms(bytes_moved: float, vector_bytes: float | None, params: CostParams, vector_cores: int,
                   vector_note: str = "", cube_macs: float = 0.0, cube_cores: int = 0, cube_elem_bytes: int = 2) -> dict:
    """The roofline's terms in µs: the bytes that must cross HBM at peak bandwidth, the vector
    work the math needs (weighted bytes: repeats x API weight x 256 B) on every vector core at full
    rate (`vector_us` None when that work is unknown), and, for a golden with matrix products, its
    MACs on every cube core at full rate (`cube_us`)."""
    t_mem = bytes_moved / (params.hbm_peak_gbps * 1e3)
    t_vec = None if vector_bytes is None else \
        vector_bytes / (vector_cores * params.vector_bytes_per_cycle * params.clock_ghz * 1e3)
    terms = {"memory_us": t_mem, "vector_us": t_vec}
    if cube_macs > 0 and cube_cores > 0:
        terms["cube_us"] = cube_macs / (cube_cores * cube_macs_per_cycle(params, cube_elem_bytes) * params.clock_ghz * 1e3)
    if t_vec is None:
        terms["vector_note"] = vector_note or "the vector work of the golden is unknown"
    return terms


def roofline_us(bytes_moved: float, vector_bytes: float | None, params: CostParams, vector_cores: int) -> float:
    """The hardware lower bound: the longer of the roofline's terms (see `roofline_terms`)."""
    terms = roofline_terms(bytes_moved, vector_bytes, params, vector_cores)
    return roofline_bound(terms)


def roofline_bound(terms: dict) -> float:
    """t_hw: the longest of the memory, vector and cube terms."""
    return max(terms["memory_us"], terms.get("vector_us") or 0.0, terms.get("cube_us") or 0.0)


def with_roofline(est: Estimate, t_hw_us: float, terms: dict | None = None) -> Estimate:
    """Attach the roofline; the estimate never falls below it (a model that did would be wrong)."""
    est.t_hw_us = t_hw_us
    est.roofline_terms = terms
    if est.time_us < t_hw_us:
        est.time_us = t_hw_us
    est.roofline_fraction = t_hw_us / est.time_us if est.time_us > 0 else None
    return est


def format_band(band: float) -> str:
    """The band as the factor it is: `×÷1.35` (the measured time lies between est / 1.35 and
    est × 1.35). A percentage would read as additive: "±241%" suggests negative times."""
    return f"×÷{1.0 + band:.2f}"


def format_estimate(time_us: float, band: float | None, digits: int = 2) -> str:
    """An estimate as shown everywhere: `12.70 µs est. (×÷1.35)`, the band left out when unknown."""
    return f"{time_us:.{digits}f} µs est." + (f" ({format_band(band)})" if band is not None else "")


def band_range(time_us: float, band: float | None) -> tuple[float, float]:
    """The times the band allows: the measured time lies in [t / (1 + b), t * (1 + b)] for 80 % of
    held-out cases of the estimate's class (the band is symmetric on a log scale)."""
    b = band or 0.0
    return time_us / (1.0 + b), time_us * (1.0 + b)


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))
