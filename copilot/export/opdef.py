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


def opdef_source(op_type: str, task: str, inputs, outputs, attrs, socs) -> str:
    """`namespace ops { class <op_type> : public OpDef {...}; OP_ADD(<op_type>); }`; inputs and
    outputs as (name, dtypes), attrs as (name, proto type, default or None)."""
    def param(kind: str, name: str, dtypes: tuple[str, ...]) -> str:
        ge = ", ".join(ge_dtypes(dtypes))
        fmt = ", ".join("ge::FORMAT_ND" for _ in dtypes)
        return (f'        this->{kind}("{name}")\n            .ParamType(REQUIRED)\n'
                f"            .DataType({{{ge}}})\n            .Format({{{fmt}}})\n"
                f"            .UnknownShapeFormat({{{fmt}}});\n")

    # Every input/output must list the same number of dtype combinations; a tensor with fewer
    # dtypes than the widest repeats its first.
    width = max(len(d) for _, d in list(inputs) + list(outputs))
    pad = (lambda d: tuple(d) + (d[0],) * (width - len(d)) if len(d) < width else tuple(d))
    body = "".join(param("Input", n, pad(d)) for n, d in inputs)
    body += "".join(param("Output", n, pad(d)) for n, d in outputs)
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
    """The OpDef of `op_type` for `task`'s proto."""
    return opdef_source(op_type, task.name, [(t.name, tuple(t.dtypes)) for t in task.inputs],
                        [(t.name, tuple(t.dtypes)) for t in task.outputs],
                        [(a.name, a.type, a.default) for a in task.attrs], socs)
