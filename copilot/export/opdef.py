"""The OpDef registration of a custom operator, written from a task's proto: inputs, outputs (dtype
combinations, ND formats), attrs, SetTiling and one AddConfig per SoC. The lowering puts it in the
candidates it writes, the cards carry it, and the export writes it when a candidate has none."""

from __future__ import annotations

from copilot.dtypes import dtype as lookup_dtype

# The SoCs a candidate registers for by default: the A2/A3 chips the kernels are written for.
DEFAULT_SOCS = ("ascend910b", "ascend910_93")
ATTR_KINDS = {"float": "Float", "int": "Int", "bool": "Bool", "string": "String", "list_int": "ListInt",
              "list_float": "ListFloat"}


def ge_dtypes(dtypes) -> list[str]:
    return [f"ge::{lookup_dtype(d).ge}" for d in dtypes]


def cxx_literal(t: str, v) -> str:
    if t == "bool":
        return "true" if v else "false"
    if t == "string":
        return '"' + str(v).replace('"', '\\"') + '"'
    if t == "list_int":
        return "{" + ", ".join(str(int(x)) for x in v) + "}"
    if t == "list_float":
        return "{" + ", ".join(repr(float(x)) for x in v) + "}"
    return repr(float(v)) if t == "float" else str(int(v))


def dtype_columns(tensors) -> list[tuple[str, ...]]:
    """The dtype combinations an OpDef lists (column k of every tensor is one combination).
    Lists of equal length pair up by position, as protos write them (x: [f16, f32], y: [f16, f32]).
    Otherwise tensors with the same list move together and different lists combine freely:
    gather's x and y (six dtypes) with its index (int8, int32, int64) are 18 columns, not six."""
    lists = [tuple(d) for _, d in tensors]
    if len({len(d) for d in lists}) <= 1:
        return [tuple(col) for col in zip(*lists)] if lists else []
    groups = list(dict.fromkeys(lists))             # each distinct list, in proto order
    combos = [()]
    for g in groups:
        combos = [c + (dt,) for c in combos for dt in g]
    return [tuple(c[groups.index(d)] for d in lists) for c in combos]


def opdef_source(op_type: str, task: str, inputs, outputs, attrs, socs, optional=(), shape_on_compute=()) -> str:
    """`namespace ops { class <op_type> : public OpDef {...}; OP_ADD(<op_type>); }`; inputs and
    outputs as (name, dtypes), attrs as (name, proto type, default or None); `optional` names the
    inputs a case may omit, `shape_on_compute` the outputs whose shape the kernel computes
    (`.OutputShapeDependOnCompute()`: CANN then passes the out_shape GM_ADDR after the outputs)."""
    def param(kind: str, name: str, dtypes: tuple[str, ...]) -> str:
        ge = ", ".join(ge_dtypes(dtypes))
        fmt = ", ".join("ge::FORMAT_ND" for _ in dtypes)
        role = "OPTIONAL" if kind == "Input" and name in optional else "REQUIRED"
        return (f'        this->{kind}("{name}")\n            .ParamType({role})\n'
                f"            .DataType({{{ge}}})\n            .Format({{{fmt}}})\n"
                f"            .UnknownShapeFormat({{{fmt}}})"
                + ("\n            .OutputShapeDependOnCompute()" if kind == "Output" and name in shape_on_compute else "")
                + ";\n")

    tensors = [("Input", n, d) for n, d in inputs] + [("Output", n, d) for n, d in outputs]
    columns = dtype_columns([(n, d) for _, n, d in tensors])
    body = "".join(param(kind, n, tuple(col[i] for col in columns)) for i, (kind, n, _) in enumerate(tensors))
    for name, t, default in attrs:
        kind = ATTR_KINDS[t]
        if default is None:
            body += f'        this->Attr("{name}").AttrType(REQUIRED).{kind}();\n'
        else:
            body += f'        this->Attr("{name}").AttrType(OPTIONAL).{kind}({cxx_literal(t, default)});\n'
    body += "        this->AICore().SetTiling(optiling::TilingFunc);\n"
    body += "".join(f'        this->AICore().AddConfig("{s}");\n' for s in socs)
    return (f"namespace ops {{\n// The operator definition, from the task's proto ({task}).\n"
            f"class {op_type} : public OpDef {{\npublic:\n    explicit {op_type}(const char* name) : "
            f"OpDef(name)\n    {{\n{body}    }}\n}};\nOP_ADD({op_type});\n}}  // namespace ops\n")


def task_opdef(task, op_type: str, socs=DEFAULT_SOCS) -> str:
    """The OpDef of `op_type` for `task`'s proto (its data-dependent outputs marked)."""
    from copilot.oracle.dynamic import data_dependent

    return opdef_source(op_type, task.name, [(t.name, tuple(t.dtypes)) for t in task.inputs],
                        [(t.name, tuple(t.dtypes)) for t in task.outputs],
                        [(a.name, a.type, a.default) for a in task.attrs], socs,
                        optional=tuple(t.name for t in task.inputs if t.optional),
                        shape_on_compute=tuple(data_dependent(task)))
