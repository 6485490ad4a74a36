"""Estimate a kernel's time on one case without judging it: the performance half of an evaluation.

Correctness is established on the quick tier; a performance case only needs the kernel's
instruction stream. So the emulator runs in count-only mode (control flow, rule checks and cost
accounting, no data moved: a kernel whose control flow depends on data values is timed as if its
data were zeros), the output shapes come from the golden run on meta tensors (no fp64 oracle), and
only the first, middle and last blocks run: under the standard split every core gets the same work
but the tail ones, so these include the slowest.

The roofline (`t_hw_us`) is the longest of three terms: the bytes that must cross HBM, the vector
work the golden's math needs (its aten ops, recorded on meta tensors, mapped to device-API weights),
and the MACs of its matrix products on the cube cores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from copilot.costmodel import API_WEIGHTS, Estimate, cost_params, roofline_bound, roofline_terms, with_roofline
from copilot.dtypes import dtype as dtype_of
from copilot.dtypes import from_torch
from copilot.tasks.model import Case, Task


@dataclass(frozen=True)
class OutputShape:
    name: str
    shape: tuple[int, ...]
    dtype: str
    bound_dims: tuple[int, ...] = ()     # dims at a data-dependent output's bound, not its length


def output_shapes(task: Task, case: Case) -> list[OutputShape]:
    """Output shapes and dtypes from the golden on meta tensors (falls back to a real run of the
    golden in the case dtype when an op has no meta kernel)."""
    try:
        return meta_outputs(task, case)
    except Exception:
        from copilot.oracle import CaseTooLarge, estimate_bytes, make_inputs, oracle_budget_bytes, reference
        from copilot.oracle.dynamic import bound_outputs

        bounded = bound_outputs(task, case)    # a data-dependent length: the kernel's buffers need no golden
        if bounded is not None:
            return bounded

        need, budget = estimate_bytes(case), oracle_budget_bytes()
        if need > budget:           # refused before its inputs are drawn (unique's case 6: 268M elements)
            raise CaseTooLarge(f"{task.name} {case.label()}: its output shape needs the golden, which needs "
                               f"~{need / 2**30:.1f} GiB, over the oracle budget of {budget / 2**30:.1f} GiB "
                               "(CANNPILOT_ORACLE_BUDGET_GB)") from None
        return [OutputShape(o.name, o.shape, o.dtype) for o in reference(task, case, make_inputs(task, case)).outputs]


def meta_outputs(task: Task, case: Case) -> list[OutputShape]:
    """The golden's outputs (name, shape, dtype) from a run on meta tensors; raises where the golden
    needs values (a data-dependent length, a `.item()`)."""
    from copilot.dynamo_free import no_dynamo_import
    from copilot.oracle.golden import golden_arguments
    from copilot.oracle.inputs import meta_inputs

    args, kwargs = golden_arguments(task, case, meta_inputs(task, case))
    with torch.no_grad(), no_dynamo_import():
        out = task.golden(*args, **kwargs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    names = [o.name for o in task.outputs]
    return [OutputShape(names[i] if i < len(names) else f"out{i}", tuple(t.shape), from_torch(t.dtype).name)
            for i, t in enumerate(outs)]


def output_dtypes(task: Task, case: Case) -> tuple[str, ...]:
    """The output dtypes of a case; for one whose output shape needs a real golden run that does
    not fit the oracle budget (a data-dependent length, unique's), those of its shrunk twin."""
    from copilot.oracle import CaseTooLarge
    from copilot.tasks.quick import twin

    try:
        return tuple(o.dtype for o in output_shapes(task, case))
    except CaseTooLarge:
        small = twin(case)
        if small is None:
            raise
        return tuple(o.dtype for o in output_shapes(task, small))


def bytes_moved(case: Case, outs: list[OutputShape]) -> float:
    """The bytes any kernel must move through HBM: every input read once, every output written once
    (a data-dependent dim at its bound counts as 1: its length is not known without the golden)."""
    ins = sum(case.numel(i) * dtype_of(d).itemsize for i, d in enumerate(case.dtypes) if d)

    def written(o) -> int:
        bounded = getattr(o, "bound_dims", ())
        return math.prod(1 if j in bounded else d for j, d in enumerate(o.shape))
    return float(ins + sum(written(o) * dtype_of(o.dtype).itemsize for o in outs))


# The device APIs a kernel needs per element for each aten op the goldens use, the cheapest
# formulation (a lower bound): "in" counts elements of the first tensor argument (reductions,
# normalisations, softmax), "out" elements of the result. `reduce_sum|max|min` stand for the cheapest
# reduction API of that kind. Per-row work (a row's reciprocal, its log) is left out.
VECTOR_RECIPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "add": ("out", ("Add",)), "sub": ("out", ("Sub",)), "rsub": ("out", ("Sub",)), "mul": ("out", ("Mul",)),
    "div": ("out", ("Div",)), "neg": ("out", ("Muls",)), "abs": ("out", ("Abs",)), "relu": ("out", ("Relu",)),
    "leaky_relu": ("out", ("LeakyRelu",)), "maximum": ("out", ("Max",)), "minimum": ("out", ("Min",)),
    "clamp_min": ("out", ("Maxs",)), "clamp_max": ("out", ("Mins",)), "exp": ("out", ("Exp",)),
    "log": ("out", ("Ln",)), "sqrt": ("out", ("Sqrt",)), "rsqrt": ("out", ("Rsqrt",)),
    "reciprocal": ("out", ("Reciprocal",)), "square": ("out", ("Mul",)),
    "addcmul": ("out", ("Mul", "Add")),
    "sigmoid": ("out", ("Muls", "Exp", "Adds", "Reciprocal")),
    "silu": ("out", ("Muls", "Exp", "Adds", "Reciprocal", "Mul")),
    "tanh": ("out", ("Muls", "Exp", "Adds", "Reciprocal", "Muls", "Adds")),      # 2 sigmoid(2x) - 1
    "gelu": ("out", ("Mul", "Mul", "Muls", "Add", "Muls", "Exp", "Adds", "Reciprocal", "Mul")),   # x sigmoid(a(x + b x^3))
    "erf": ("out", ("Maxs", "Mins", "Mul") + ("Mul", "Adds") * 4 + ("Mul", "Adds") * 3 + ("Mul", "Div")),  # rational fit
    "softplus": ("out", ("Exp", "Adds", "Ln")),
    "mish": ("out", ("Exp", "Adds", "Ln", "Muls", "Exp", "Adds", "Reciprocal", "Muls", "Adds", "Mul")),
    "hardswish": ("out", ("Adds", "Maxs", "Mins", "Mul", "Muls")),
    "ne": ("out", ("Compares",)), "eq": ("out", ("Compares",)), "gt": ("out", ("Compares",)),
    "lt": ("out", ("Compares",)), "ge": ("out", ("Compares",)), "le": ("out", ("Compares",)),
    "where": ("out", ("Select",)), "masked_fill": ("out", ("Select",)), "round": ("out", ("Cast",)),
    "_to_copy": ("out", ("Cast",)),
    "sum": ("in", ("reduce_sum",)), "mean": ("in", ("reduce_sum",)), "amax": ("in", ("reduce_max",)),
    "amin": ("in", ("reduce_min",)), "argmax": ("in", ("reduce_max",)), "argmin": ("in", ("reduce_min",)),
    "linalg_vector_norm": ("in", ("Mul", "reduce_sum")),
    "logsumexp": ("in", ("reduce_max", "Adds", "Exp", "reduce_sum")),
    "_softmax": ("in", ("reduce_max", "Adds", "Exp", "reduce_sum", "Muls")),
    "_log_softmax": ("in", ("reduce_max", "Adds", "Exp", "reduce_sum", "Adds")),
    "native_layer_norm": ("in", ("reduce_sum", "Adds", "Mul", "reduce_sum", "Muls")),
    "native_group_norm": ("in", ("reduce_sum", "Adds", "Mul", "reduce_sum", "Muls")),
    "native_batch_norm": ("in", ("reduce_sum", "Adds", "Mul", "reduce_sum", "Muls")),
}
# Views, layout, allocation and copies the DMA engines can do: no vector work.
NO_VECTOR_WORK = {"view", "_unsafe_view", "reshape", "expand", "unsqueeze", "squeeze", "permute", "transpose", "t",
                  "slice", "select", "split", "split_with_sizes", "unbind", "cat", "stack", "clone", "contiguous",
                  "alias", "detach", "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones",
                  "ones_like", "full", "full_like", "fill", "copy", "copy_", "lift_fresh", "lift_fresh_copy",
                  "_reshape_alias", "as_strided", "new_empty", "new_zeros", "scalar_tensor"}
REDUCTION_FAMILIES = {"reduce_sum": ("ReduceSum", "WholeReduceSum", "BlockReduceSum"),
                      "reduce_max": ("ReduceMax", "WholeReduceMax", "BlockReduceMax"),
                      "reduce_min": ("ReduceMin", "WholeReduceMin", "BlockReduceMin")}


@dataclass(frozen=True)
class VectorWork:
    """The vector work a case's math needs: weighted bytes (elements x element bytes x API weight,
    i.e. 256-byte repeats x weight x 256), or None with the reason it is unknown."""

    weighted_bytes: float | None
    note: str = ""
    cube_macs: float = 0.0          # multiply-accumulates of the golden's matrix products (cube work)


def _api_weight(api: str) -> float:
    family = REDUCTION_FAMILIES.get(api)
    if family:
        return min(API_WEIGHTS.get(a, 1.0) for a in family)
    return API_WEIGHTS.get(api, 1.0)


def _recipe(name: str, args: tuple) -> tuple[str, tuple[str, ...]] | None:
    """The recipe of one aten op; arguments decide where the op's cost depends on them."""
    if name == "pow":              # x ** 2 is a Mul, x ** 0.5 a Sqrt, anything else exp(p ln x)
        p = args[1] if len(args) > 1 and isinstance(args[1], (int, float)) else None
        return ("out", ("Mul",) if p == 2 else ("Sqrt",) if p == 0.5 else ("Ln", "Muls", "Exp"))
    if name == "clamp":
        return ("out", tuple(api for api, bound in (("Maxs", args[1:2]), ("Mins", args[2:3]))
                             if bound and bound[0] is not None))
    if name in ("native_layer_norm", "native_group_norm", "native_batch_norm"):
        kind, apis = VECTOR_RECIPES[name]
        affine = tuple(api for api, a in (("Mul", args[1:2] if name == "native_batch_norm" else args[2:3]),
                                          ("Add", args[2:3] if name == "native_batch_norm" else args[3:4]))
                       if a and isinstance(a[0], torch.Tensor))
        return kind, apis + affine
    return VECTOR_RECIPES.get(name)


def _compute_bytes(dtype: torch.dtype, arch: int) -> int:
    """Bytes per element the vector unit works in: bf16 is computed in fp32 where the chip's vector
    APIs have no bf16 (A2/A3, 310P); booleans and 8-bit types as bytes."""
    if dtype == torch.bfloat16 and arch != 3510:
        return 4
    return max(1, torch.empty(0, dtype=dtype).element_size())


class _AtenRecorder(TorchDispatchMode):
    """Records every aten op (name, arguments, result) run under it."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False    # never compiled; skipping would import torch._dynamo (2-3 s) on first use

    def __init__(self):
        super().__init__()
        self.seen: list[tuple[str, tuple, object]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.seen.append((func.overloadpacket.__name__, tuple(args), out))
        return out


# Matrix products: their work goes to the cube, MACs = batch x m x n x k of the result and the operand.
# Convolutions go to the cube as img2col products: MACs = output elements x (C_in / groups x kernel
# volume); a convolution_backward costs that once per gradient it computes (its output_mask).
CUBE_OPS = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm", "convolution",
            "convolution_backward"}


def _conv_macs(name: str, args: tuple, result) -> float:
    if name == "convolution":          # (input, weight, bias, stride, padding, dilation, transposed, ...)
        x, w, transposed = args[0], args[1], bool(args[6])
        # each output element (each input element of a transposed one) meets one filter of w[0]'s size
        return float((x if transposed else result).numel()) * float(w[0].numel())
    # (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups, mask)
    grad, w, mask = args[0], args[2], args[10]
    return float(grad.numel()) * float(w[0].numel()) * (int(bool(mask[0])) + int(bool(mask[1])))


def _cube_macs(name: str, args: tuple, result) -> float:
    if name in ("convolution", "convolution_backward"):
        return _conv_macs(name, args, result)
    mats = [a for a in args if isinstance(a, torch.Tensor) and a.dim() >= 2]
    if not mats or not isinstance(result, torch.Tensor) or result.dim() < 1:
        return 0.0
    k = mats[-1].shape[-2] if name != "linear" else mats[-1].shape[-1]
    return float(result.numel()) * float(k)


def vector_work(task: Task, case: Case, arch: int = 2201) -> VectorWork:
    """Run the golden on meta tensors, recording each aten op, and add up the vector work of its
    recipe. Unknown when the golden has no meta kernel or uses an op without a recipe."""
    from copilot.oracle.golden import golden_arguments
    from copilot.oracle.inputs import meta_inputs

    record = _AtenRecorder()
    # as the oracle calls it: None for an omitted optional input, a list for a tensor list
    args, kwargs = golden_arguments(task, case, meta_inputs(task, case))
    try:
        with torch.no_grad(), record:
            task.golden(*args, **kwargs)
    except Exception as exc:
        return VectorWork(None, f"the golden does not run on meta tensors ({type(exc).__name__})")
    total = 0.0
    macs = sum(_cube_macs(name, args, out) for name, args, out in record.seen if name in CUBE_OPS)
    for name, args, out in record.seen:
        result = out[0] if isinstance(out, (tuple, list)) and out else out
        if name in NO_VECTOR_WORK or name in CUBE_OPS or not isinstance(result, torch.Tensor):
            continue                # views, dtype/shape queries; matrix products are the cube's
        recipe = _recipe(name, args)
        if recipe is None:
            return VectorWork(None, f"aten.{name} has no vector-work recipe in the cost model", macs)
        basis, apis = recipe
        first = next((a for a in args if isinstance(a, torch.Tensor)), None)
        t = first if basis == "in" and first is not None else result
        dt = first.dtype if first is not None and basis == "in" else t.dtype
        if not dt.is_floating_point and first is not None:     # compares, selects: the operands' type
            dt = first.dtype
        total += t.numel() * _compute_bytes(dt, arch) * sum(_api_weight(a) for a in apis)
    return VectorWork(total, cube_macs=macs)


def _cube_elem_bytes(case: Case) -> int:
    """The element size the cube multiplies in: the first input's (int8 weights of a weight-only
    quantised matmul are dequantised to the activations' type before the cube)."""
    sizes = [dtype_of(d).itemsize for d in case.dtypes if d]
    return min(sizes[:2]) if len(sizes) >= 2 and sizes[0] == sizes[1] else (sizes[0] if sizes else 2)


def case_roofline(task: Task, case: Case, outs: list[OutputShape], chip) -> tuple[float, dict]:
    """(t_hw_us, terms) of a case on a chip profile: see `copilot.costmodel.roofline_terms`."""
    params = cost_params(chip.name)
    work = vector_work(task, case, chip.arch)
    terms = roofline_terms(bytes_moved(case, outs), work.weighted_bytes, params, chip.vector_cores, work.note,
                           work.cube_macs, chip.cube_cores, _cube_elem_bytes(case))
    return roofline_bound(terms), terms


def build_for_case(path, task: Task, case: Case, chip, builds: dict, outs: list[OutputShape] | None = None):
    """(build, output shapes, newly built) for `path` with this case's input and output dtypes;
    `builds` caches one build per dtype combination across calls. `outs`: the output shapes, when
    known (else from the golden, which raises CaseTooLarge where they need a golden over budget)."""
    from copilot.backends import sim

    outs = outs if outs is not None else output_shapes(task, case)
    key = tuple(case.dtypes) + tuple(o.dtype for o in outs)
    fresh = key not in builds
    if fresh:
        builds[key] = sim.build(path, task, list(key), chip)
    return builds[key], outs, fresh


def tiling_digests(source, task: Task, cases: list[Case], chip: str = "910B2",
                   builds: dict | None = None) -> tuple[str, ...] | None:
    """Per case, the digest of everything the host's TilingFunc hands the device (block dim, tiling
    key, workspace size, tiling data), from a tiling-only run of the built `source` (path or text);
    None when a case's build or tiling fails or its output shapes need a golden over the budget.
    Two kernels with one device half and equal digests on a case run that case alike."""
    from copilot.backends import sim
    from copilot.chips import load_chip
    from copilot.oracle import CaseTooLarge
    from copilot.oracle.inputs import meta_inputs

    profile = load_chip(chip)
    builds = {} if builds is None else builds
    out = []
    for case in cases:
        try:
            b, outs, _ = build_for_case(source, task, case, chip, builds)
        except CaseTooLarge:
            return None
        if not b.ok:
            return None
        run = sim.run(b, task, case, meta_inputs(task, case), outputs=outs, chip=profile, tiling_only=True)
        digest = run.extra.get("tiling_digest") if run.ok else None
        if digest is None:
            return None
        out.append(digest)
    return tuple(out)


def estimate_case(build, task: Task, case: Case, chip: str = "910B2",
                  outs: list[OutputShape] | None = None) -> Estimate | None:
    """The estimate for one case of a built kernel, or None when the kernel failed on the case or
    ran an instruction the cost model cannot time. `outs`: the output shapes, when known."""
    from copilot.backends import sim
    from copilot.chips import load_chip

    profile = load_chip(chip)
    outs = outs if outs is not None else output_shapes(task, case)
    from copilot.oracle.inputs import meta_inputs

    # shapes only (count-only mode reads no data); an omitted optional input stays None, a tensor
    # list stays a list, as the harness passes them
    inputs = meta_inputs(task, case)
    run = sim.run(build, task, case, inputs, outputs=outs, chip=profile, sample_blocks=True, count_only=True)
    est = run.extra.get("estimate") if run.ok else None
    if est is None:
        return None
    return with_roofline(est, *case_roofline(task, case, outs, profile))
