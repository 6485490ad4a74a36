"""What the exporter needs to know about one operator: its interface (from the task's proto), its
kernel (the candidate, split into CANN's halves) and how its outputs are allocated (learned from
the task's cases by running the golden on meta tensors)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from copilot.dtypes import dtype as lookup_dtype
from copilot.errors import Unsupported
from copilot.export.opdef import ge_dtypes  # noqa: F401  (re-exported)
from copilot.export.split import CandidateParts, split_candidate

# Proto attr types as torch schema types and C++ parameter types.
SCHEMA_TYPES = {"float": "float", "int": "int", "bool": "bool", "string": "str", "list_int": "int[]",
                "list_float": "float[]"}
CXX_TYPES = {"float": "double", "int": "int64_t", "bool": "bool", "string": "c10::string_view",
             "list_int": "at::IntArrayRef", "list_float": "at::ArrayRef<double>"}


@dataclass(frozen=True)
class OutputRule:
    """Output k's shape is input `like`'s shape (`like` = -1: the inputs' broadcast shape) without
    its last `drop` dims, then `ones` dims of 1; its dtype is input `dtype_like`'s, or `dtype`."""

    like: int
    drop: int
    ones: int
    dtype_like: int | None
    dtype: str | None
    axis_attr: str | None = None      # instead of drop/ones: the int attr naming the reduced axis
    keep_attr: str | None = None      # the bool attr keeping it as length 1 (None: removed)
    last_div: int = 1                 # the last dim divided by this (a gated op's halves)


@dataclass
class OpSpec:
    name: str                     # the callable's name in cann_bench (schema name, else the task's)
    task: str
    task_path: str
    inputs: list[tuple[str, tuple[str, ...]]]
    outputs: list[tuple[str, tuple[str, ...]]]
    attrs: list[tuple[str, str, object]]          # name, proto type, default
    source: str = field(repr=False)
    parts: CandidateParts = field(repr=False)
    rules: list[OutputRule] = field(default_factory=list)
    candidate_id: str = ""
    origin: str = ""
    optional_inputs: tuple[str, ...] = ()         # inputs a case may omit (ParamType OPTIONAL)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()

    @property
    def kernel_source(self) -> str:
        """op_kernel's file: the candidate's device half, at the candidate's lines."""
        return self.parts.device or self.source

    @property
    def kernel_sha256(self) -> str:
        return hashlib.sha256(self.kernel_source.encode()).hexdigest()

    @property
    def op_type(self) -> str:
        return self.parts.op_type

    @property
    def snake(self) -> str:
        return self.parts.entry

    def schema(self) -> str:
        """The torch operator schema registered as cann_bench::<name>."""
        args = [f"Tensor {n}" for n, _ in self.inputs]
        for n, t, d in self.attrs:
            args.append(f"{SCHEMA_TYPES[t]} {n}" + ("" if d is None else f"={_schema_default(t, d)}"))
        rets = ", ".join("Tensor" for _ in self.outputs)
        return f"{self.name}({', '.join(args)}) -> " + (rets if len(self.outputs) == 1 else f"({rets})")

    def python_params(self) -> str:
        ps = [n for n, _ in self.inputs] + [n if d is None else f"{n}={_py_default(d)}" for n, _, d in self.attrs]
        return ", ".join(ps)


def _schema_default(t: str, d) -> str:
    if t == "bool":
        return "True" if d else "False"
    if t == "string":
        return '"' + str(d).replace('"', '\\"') + '"'
    if t.startswith("list"):
        return "[" + ", ".join(str(x) for x in d) + "]"
    return repr(float(d)) if t == "float" else str(int(d))


def _py_default(d) -> str:
    return repr(list(d) if isinstance(d, tuple) else d)


def callable_name(task) -> str:
    m = re.match(r"\s*(\w+)\s*\(", task.schema or "")
    return m.group(1) if m else task.name


def learn_output_rules(task) -> list[OutputRule]:
    """One allocation rule per output that holds on every case of the task."""
    from copilot.costmodel.estimate import output_shapes
    from copilot.oracle.dynamic import SHAPE_ARG, data_dependent

    if dynamic := data_dependent(task):
        raise Unsupported(f"{task.name}: output(s) {', '.join(dynamic)} have a data-dependent length (the wrapper "
                          f"would allocate the bound, read the kernel's {SHAPE_ARG} and return that prefix); "
                          "the exporter does not write such an allocation")
    per_case = [(c, output_shapes(task, c)) for c in task.cases]
    rules = []
    int_attrs = [a.name for a in task.attrs if a.type == "int"]
    bool_attrs = [a.name for a in task.attrs if a.type == "bool"]
    for k, spec in enumerate(task.outputs):
        rule = (_fit(k, per_case) or _fit_axis(k, per_case, int_attrs, bool_attrs) or _fit_split(k, per_case)
                or _fit_split(k, per_case, int_attrs))
        if rule is None:
            raise Unsupported(f"{task.name}: the shape of output '{spec.name}' is not an input's shape "
                              "with trailing dims dropped or set to 1 on every case; the exporter "
                              "cannot write its allocation")
        rules.append(rule)
    return rules


def base_shape(shapes: list[tuple[int, ...]], like: int) -> tuple[int, ...]:
    if like >= 0:
        return tuple(shapes[like])
    import torch

    return tuple(torch.broadcast_shapes(*[tuple(s) for s in shapes]))


def _fit(k: int, per_case) -> OutputRule | None:
    first_case, first_outs = per_case[0]
    n_in = len(first_case.shapes)
    for like in [*range(n_in), -1]:
        try:
            bases = [base_shape(c.shapes, like) for c, _ in per_case]
        except RuntimeError:
            continue
        for drop in range(len(bases[0]) + 1):
            ones = len(first_outs[k].shape) - (len(bases[0]) - drop)
            if ones < 0:
                continue
            shape_ok = all(b[:len(b) - drop] + (1,) * ones == tuple(o[k].shape)
                           for b, (c, o) in zip(bases, per_case))
            if not shape_ok:
                continue
            for dl in range(n_in):
                if all(c.dtypes[dl] == o[k].dtype for c, o in per_case):
                    return OutputRule(like, drop, ones, dl, None)
            fixed = {o[k].dtype for _, o in per_case}
            if len(fixed) == 1:
                return OutputRule(like, drop, ones, None, fixed.pop())
    return None


def reduce_shape(shape: tuple, axis: int, keep: bool) -> tuple:
    axis = axis + len(shape) if axis < 0 else axis
    return shape[:axis] + ((1,) if keep else ()) + shape[axis + 1:]


def _fit_axis(k: int, per_case, int_attrs: list[str], bool_attrs: list[str]) -> OutputRule | None:
    """Output k is input `like` with the axis an int attr names reduced (kept as 1 when a bool attr says)."""
    n_in = len(per_case[0][0].shapes)
    for like in range(n_in):
        for axis in int_attrs:
            for keep in [*bool_attrs, None]:
                try:
                    ok = all(reduce_shape(tuple(c.shapes[like]), int(c.attrs[axis]), bool(keep and c.attrs[keep]))
                             == tuple(o[k].shape) for c, o in per_case)
                except (TypeError, KeyError, IndexError):
                    ok = False
                if not ok:
                    continue
                for dl in range(n_in):
                    if all(c.dtypes[dl] == o[k].dtype for c, o in per_case):
                        return OutputRule(like, 0, 0, dl, None, axis, keep)
                fixed = {o[k].dtype for _, o in per_case}
                if len(fixed) == 1:
                    return OutputRule(like, 0, 0, None, fixed.pop(), axis, keep)
    return None


def _fit_split(k: int, per_case, int_attrs: list[str] | None = None) -> OutputRule | None:
    """Output k is input `like` with its last dim (or the axis an int attr names) divided by 2, 3
    or 4 (glu-style halves)."""
    n_in = len(per_case[0][0].shapes)
    for like in range(n_in):
        for axis in (int_attrs or [None]):
            for f in (2, 3, 4):
                def split(s, c):
                    a = int(c.attrs[axis]) if axis else -1
                    a = a + len(s) if a < 0 else a
                    if not s or not 0 <= a < len(s) or s[a] % f:
                        return None
                    return s[:a] + (s[a] // f,) + s[a + 1:]
                try:
                    ok = all(split(tuple(c.shapes[like]), c) == tuple(o[k].shape) for c, o in per_case)
                except (KeyError, TypeError):
                    ok = False
                if not ok:
                    continue
                for dl in range(n_in):
                    if all(c.dtypes[dl] == o[k].dtype for c, o in per_case):
                        return OutputRule(like, 0, 0, dl, None, axis_attr=axis, keep_attr=None, last_div=f)
    return None


def op_spec(task, source: str, candidate_id: str = "", origin: str = "") -> OpSpec:
    """Everything the writers need for one operator. Raises Unsupported with the reason."""
    if task.kind != "cann":
        raise Unsupported(f"{task.name}: only tasks in the CANN-Bench layout can be exported "
                          "(a KernelBench file has no proto)")
    for a in task.attrs:
        if a.type not in SCHEMA_TYPES:
            raise Unsupported(f"{task.name}: attr '{a.name}' has type {a.type}, which the binding cannot declare")
    parts = split_candidate(source)
    return OpSpec(name=callable_name(task), task=task.name, task_path=str(task.path),
                  inputs=[(t.name, t.dtypes) for t in task.inputs],
                  outputs=[(t.name, t.dtypes) for t in task.outputs],
                  attrs=[(a.name, a.type, a.default) for a in task.attrs], source=source, parts=parts,
                  rules=learn_output_rules(task), candidate_id=candidate_id, origin=origin,
                  optional_inputs=tuple(t.name for t in task.inputs if t.optional))
