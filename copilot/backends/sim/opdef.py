"""The candidate's operator registration (`namespace ops { class X : public OpDef {...}; OP_ADD(X); }`)
read from its text and checked against the task's proto: the interface CANN's graph binds to.

Read on the source with comments blanked (string contents come from the original text at the same
offsets): `this->Input("x")`, `this->Output("y")`, `this->Attr("eps")`, `SetTiling(...)`,
`AddConfig("soc")`, the class deriving from OpDef and the OP_ADD name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from copilot.diagnostics import Diagnostic
from copilot.backends.sim.units import Units, line_at, strip_comments

MISSING_HINT = ("register the operator in the host half: namespace ops { class <OpType> : public OpDef {...}; "
                "OP_ADD(<OpType>); } with the proto's inputs, outputs and attrs (see card L4.OPDEF_MISSING)")
MISMATCH_HINT = "make the OpDef follow the task's proto: same names, proto order, every attr"


@dataclass
class OpDefInfo:
    op_type: str = ""
    line: int = 0
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attrs: list[str] = field(default_factory=list)
    socs: list[str] = field(default_factory=list)
    shape_on_compute: list[str] = field(default_factory=list)   # outputs marked OutputShapeDependOnCompute()
    set_tiling: bool = False
    added: str = ""               # the OP_ADD argument


def read_opdef(source: str, units: Units) -> OpDefInfo | None:
    code = strip_comments(source)
    found = None
    for start, end in units.ops_blocks:
        block = code[start:end]
        cls = re.search(r"\bclass\s+(\w+)\s*(?:final\s*)?:\s*public\s+(?:ops::)?OpDef\b", block)
        if not cls:
            continue
        info = OpDefInfo(op_type=cls.group(1), line=line_at(code, start + cls.start()))

        def names(kind: str) -> list[str]:
            out = []
            for m in re.finditer(rf"\b{kind}\s*\(\s*\"", block):
                q = start + m.end()
                close = source.find('"', q)
                out.append(source[q:close])
            return out

        info.inputs, info.outputs, info.attrs = names("Input"), names("Output"), names("Attr")
        info.socs = names("AddConfig")
        for m in re.finditer(r"\bOutput\s*\(\s*\"", block):     # the mark anywhere in its statement
            q = start + m.end()
            statement = block[m.end():block.find(";", m.end()) % (len(block) + 1)]
            if re.search(r"\bOutputShapeDependOnCompute\s*\(", statement):
                info.shape_on_compute.append(source[q:source.find('"', q)])
        info.set_tiling = bool(re.search(r"\bSetTiling\s*\(", block))
        add = re.search(r"\bOP_ADD\s*\(\s*(\w+)", block)
        info.added = add.group(1) if add else ""
        found = info
        break
    return found


def check_opdef(source: str, units: Units, task, op_type: str) -> list[Diagnostic]:
    """L4.OPDEF_MISSING (warning) without a registration; L4.OPDEF_MISMATCH (error) for each
    difference from the task's proto."""
    info = read_opdef(source, units)
    if info is None:
        return [Diagnostic("L4.OPDEF_MISSING", "warning",
                           f"no OpDef registers the operator {op_type}: a CANN custom-op project needs "
                           "namespace ops { class " + op_type + " : public OpDef {...}; OP_ADD(" + op_type + "); }",
                           0, MISSING_HINT, api="OpDef")]
    out: list[Diagnostic] = []

    def bad(msg: str) -> None:
        out.append(Diagnostic("L4.OPDEF_MISMATCH", "error", msg, info.line, MISMATCH_HINT, api="OpDef"))

    if info.op_type != op_type:
        bad(f"the OpDef class is {info.op_type}; the kernel entry names the op type {op_type}")
    if info.added != info.op_type:
        bad(f"OP_ADD({info.added}) does not register the OpDef class {info.op_type}" if info.added
            else f"the OpDef class {info.op_type} is never registered with OP_ADD({info.op_type})")
    for kind, declared, proto in (("input", info.inputs, [t.name for t in task.inputs]),
                                  ("output", info.outputs, [t.name for t in task.outputs])):
        missing = [n for n in proto if n not in declared]
        extra = [n for n in declared if n not in proto]
        if missing:
            bad(f"{kind} '{missing[0]}' of task {task.name} is missing from the OpDef "
                f"(declared: {', '.join(declared) or 'none'})")
        if extra:
            bad(f"the OpDef declares {kind} '{extra[0]}', which task {task.name} does not have")
        if not missing and not extra and declared != proto:
            bad(f"the OpDef's {kind}s are in the order {', '.join(declared)}; the proto's is {', '.join(proto)}")
    from copilot.oracle.dynamic import SHAPE_ARG, data_dependent

    for name in data_dependent(task):
        if name in info.outputs and name not in info.shape_on_compute:
            bad(f"output '{name}' of task {task.name} has a data-dependent length: mark it "
                f".OutputShapeDependOnCompute() (CANN then passes the {SHAPE_ARG} GM_ADDR after the outputs)")
    proto_attrs = [a.name for a in getattr(task, "attrs", [])]
    missing = [n for n in proto_attrs if n not in info.attrs]
    extra = [n for n in info.attrs if n not in proto_attrs]
    if missing:
        bad(f"attr '{missing[0]}' of task {task.name} is missing from the OpDef")
    if extra:
        bad(f"the OpDef declares attr '{extra[0]}', which task {task.name} does not have")
    if not info.set_tiling:
        out.append(Diagnostic("L4.OPDEF_MISMATCH", "warning", f"the OpDef {info.op_type} sets no tiling function "
                              "(this->AICore().SetTiling(optiling::TilingFunc))", info.line, MISMATCH_HINT, api="OpDef"))
    if not info.socs:
        out.append(Diagnostic("L4.OPDEF_MISMATCH", "warning", f"the OpDef {info.op_type} adds no SoC "
                              '(this->AICore().AddConfig("ascend910b"))', info.line, MISMATCH_HINT, api="OpDef"))
    return out
