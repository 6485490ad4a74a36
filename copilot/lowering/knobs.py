"""The lowering's tuning knobs, as data: the space the evolution engine searches.

Every knob value either yields a correct kernel or is rejected before emission with the id of
the constraint it would break (`copilot.errors.BadInput` for a malformed value, `Unsupported`
naming e.g. `L2.UB_CAPACITY` when the fixed buffers alone cannot fit the chip's UB).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from copilot.errors import BadInput, Unsupported

MAX_TILE_ROWS = 256          # rows whose statistics one tile holds (scalar arrays in the kernel)


@dataclass(frozen=True)
class Knob:
    name: str
    values: tuple
    default: object
    doc: str


KNOBS: dict[str, Knob] = {k.name: k for k in [
    Knob("tile_elems", (0, 1024, 2048, 4096, 8192, 16384), 0,
         "cap on elements per tile (0 = as many as the chip's UB holds)"),
    Knob("buffer_num", (1, 2), 2, "buffers per queue: 2 = double buffering (copy-in overlaps compute)"),
    Knob("block_dim_policy", ("all_cores", "min_work", "half_cores"), "min_work",
         "all_cores: one unit of work per core up to the core count; min_work: no core gets less "
         "than min_work_elems; half_cores: at most half the vector cores"),
    Knob("min_work_elems", (4096, 16384, 65536), 16384, "minimum elements per core under min_work"),
    Knob("rows_per_tile", (0, 1, 8, 32, 128, 256), 0,
         "cap on short rows merged into one tile (0 = as many as fit, up to 256)"),
    Knob("split_d_elems", (0, 2048, 8192, 32768), 0,
         "rows longer than this are split along D and reduced in passes (0 = only when a row does "
         "not fit the UB)"),
    Knob("ub_reserve_bytes", (0, 8192, 16384), 8192, "UB bytes kept free besides the fixed buffers"),
    # Structural choices (each legal only where the plan has what it changes; see `applicable`).
    Knob("row_residency", ("keep", "reload"), "keep",
         "keep: an input several reduction passes read stays resident in UB (read from GM once per "
         "tile); reload: every pass reads it again (fewer UB slots, so longer tiles)"),
    Knob("stage_invariant", ("stage", "per_tile"), "stage",
         "stage: an operand the same for every row (gamma, beta, bias) is loaded once per core and "
         "kept; per_tile: loaded with every tile (its slot is free between tiles)"),
    Knob("arith", ("fp32", "native"), "fp32",
         "fp32: every float is computed in fp32 (fp16 and bf16 data through Cast); native: fp16 data "
         "is computed in fp16 (no Cast, twice the elements per vector repeat), fp32 and bf16 data as "
         "before; whether the fp16 result meets the precision standard is the judge's to say"),
]}

STRUCTURAL = ("row_residency", "stage_invariant", "arith")

# Ops of an elementwise program that the native fp16 form computes with fp16 vector APIs only.
NATIVE_OPS = frozenset({"load", "attr", "const", "add", "sub", "mul", "div", "max", "min", "neg", "abs", "exp",
                        "sqrt", "rsqrt", "recip", "relu", "sigmoid", "silu", "gelu", "gelu_tanh", "mish",
                        "hardswish"})
FLOATS = frozenset({"float16", "float32", "bfloat16"})


def knob_space(task=None) -> dict[str, list]:
    """Every knob and its candidate values; for a task, the structural knobs only where they
    change its kernel."""
    keep = applicable(task) if task is not None else set(STRUCTURAL)
    return {k.name: list(k.values) for k in KNOBS.values() if k.name not in STRUCTURAL or k.name in keep}


def applicable(task) -> set[str]:
    """The structural knobs that change `task`'s kernel (legality): row_residency where an input
    is read by more than one reduction pass, stage_invariant where an operand is the same for
    every row, arith where `native_input` finds fp16 data an elementwise program can compute in
    fp16. None for a task the lowering does not plan."""
    from copilot.lowering import plan_task
    from copilot.lowering.emit import VariantCode, _row_invariant_loads
    from copilot.lowering.plan import Plan

    try:
        plan = plan_task(task)
    except (BadInput, Unsupported):
        return set()
    if not isinstance(plan, Plan):
        return set()
    if plan.axis_rule is None:
        return {"arith"} if native_input(plan) is not None else set()
    out = set()
    if any(len(VariantCode(p, plan).first_pass) for p in plan.programs):
        out.add("row_residency")
    if _row_invariant_loads(plan):
        out.add("stage_invariant")
    return out


def native_input(plan) -> int | None:
    """The input whose dtype selects the fp16 working type (knob arith=native), or None where the
    form is not legal: an elementwise program (no reduction, no lane map) of ops with fp16 vector
    forms (`NATIVE_OPS`), float data only, every case with one dtype for all its inputs and
    outputs (so a half case is half throughout), and at least one float16 case."""
    from copilot.lowering.plan import Plan

    task = plan.task
    if not isinstance(plan, Plan) or plan.axis_rule is not None or plan.calc != "float" or not task.inputs:
        return None
    if any(l.lanes or l.chunks != 1 for l in plan.loads):
        return None
    if any(n.op not in NATIVE_OPS for p in plan.programs for n in p.nodes):
        return None
    specs = [*task.inputs, *task.outputs]
    if any(not set(s.dtypes) <= FLOATS for s in specs):
        return None
    half = False
    for c in task.cases:
        dts = set(c.dtypes)
        if len(dts) != 1:
            return None
        half = half or dts == {"float16"}
    return 0 if half else None


# Vector APIs whose scalar operand must have the tile's element type (`const T&`): the position
# of that argument.
_SCALAR_ARG = {"Muls": 2, "Adds": 2, "Maxs": 2, "Mins": 2, "LeakyRelu": 2, "Axpy": 2, "Duplicate": 1}
_SCALAR_CALL = re.compile(r"\b(" + "|".join(_SCALAR_ARG) + r")\(")


def native_scalars(code: str, ctype: str = "Calc") -> str:
    """`code` with the scalar operand of every call in `_SCALAR_ARG` cast to `ctype` (a float
    literal or expression next to a half tile would not deduce the API's element type)."""
    out, pos = [], 0
    for m in _SCALAR_CALL.finditer(code):
        if m.start() < pos:
            continue
        args, depth, start, i = [], 0, m.end(), m.end()
        while i < len(code):
            ch = code[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif ch == "," and depth == 0:
                args.append((start, i))
                start = i + 1
            i += 1
        args.append((start, i))
        k = _SCALAR_ARG[m.group(1)]
        if k >= len(args):
            continue
        lo, hi = args[k]
        expr = code[lo:hi].strip()
        if expr.startswith(f"static_cast<{ctype}>("):
            continue
        lead = code[lo:hi][:len(code[lo:hi]) - len(code[lo:hi].lstrip())]
        out.append(code[pos:lo] + f"{lead}static_cast<{ctype}>({expr})")
        pos = hi
    out.append(code[pos:])
    return "".join(out)


def default_knobs(task=None) -> dict:
    return {k.name: k.default for k in KNOBS.values()}


def parse_knob(text: str) -> tuple[str, object]:
    """`name=value` from the command line."""
    if "=" not in text:
        raise BadInput(f"--knob {text!r}: expected name=value (knobs: {', '.join(KNOBS)})")
    name, raw = (s.strip() for s in text.split("=", 1))
    if name not in KNOBS:
        raise BadInput(f"--knob {name}: unknown knob (knobs: {', '.join(KNOBS)})")
    default = KNOBS[name].default
    if isinstance(default, int) and not isinstance(default, bool):
        try:
            return name, int(raw)
        except ValueError:
            raise BadInput(f"--knob {name}={raw}: expected an integer") from None
    return name, raw


def resolve(knobs: dict | None) -> dict:
    """Defaults overlaid with `knobs`, each checked; raises BadInput / Unsupported."""
    out = default_knobs()
    for name, value in (knobs or {}).items():
        if name not in KNOBS:
            raise BadInput(f"knob {name}: unknown (knobs: {', '.join(KNOBS)})")
        out[name] = value
    if out["buffer_num"] not in (1, 2):
        raise BadInput(f"knob buffer_num={out['buffer_num']}: must be 1 or 2 (L2.BUFFER_COUNT: at most "
                       "8 queue buffers per position; the kernel holds up to 4 queues per position)")
    for name in ("block_dim_policy", *STRUCTURAL):
        if out[name] not in KNOBS[name].values:
            raise BadInput(f"knob {name}={out[name]}: one of {', '.join(KNOBS[name].values)}")
    te = out["tile_elems"]
    if not isinstance(te, int) or te < 0 or te % 64:
        raise BadInput(f"knob tile_elems={te}: a multiple of 64 (L2.REPEAT/Compare count rule: "
                       "vector counts are whole 256-byte repeats of fp32)")
    if te and te < 256:
        raise BadInput(f"knob tile_elems={te}: at least 256")
    if te > 65536:
        raise Unsupported(f"knob tile_elems={te}: L2.UB_CAPACITY: with the fp32 working buffers a "
                          f"tile above 65536 elements cannot fit any chip's UB")
    rp = out["rows_per_tile"]
    if not isinstance(rp, int) or rp < 0 or rp > MAX_TILE_ROWS:
        raise BadInput(f"knob rows_per_tile={rp}: 0..{MAX_TILE_ROWS}")
    sd = out["split_d_elems"]
    if not isinstance(sd, int) or sd < 0 or sd % 64:
        raise BadInput(f"knob split_d_elems={sd}: a multiple of 64")
    mw = out["min_work_elems"]
    if not isinstance(mw, int) or mw <= 0:
        raise BadInput(f"knob min_work_elems={mw}: a positive integer")
    rv = out["ub_reserve_bytes"]
    if not isinstance(rv, int) or rv < 0 or rv > 65536:
        raise Unsupported(f"knob ub_reserve_bytes={rv}: L2.UB_CAPACITY: 0..65536")
    return out
