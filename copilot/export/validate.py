"""`validate-submission`: the public CANN-Bench submission rules that can be checked without a chip.

Structure and interface (EVAL-CANN-001/002/005, AUTO-CANN-001/002) from the directory, and the
behaviour rules SUB-BEH-001..003, 005..007 by reading the binding: the Python package `cann_bench/`
(parsed with `ast`, never imported) and the C++ glue of `csrc/` other than the kernels themselves
(`op_kernel/` is the candidate: AscendC APIs there are allowed). Every finding is reported at once,
with the rule id, where, what was expected, what was found and how to fix it. Rules that need the
device (EVAL-CANN-003/004, SUB-BEH-004 at run time) are checked by the npu backend instead.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from copilot.backends.sim.build import strip_comments


@dataclass(frozen=True)
class Finding:
    rule: str
    location: str
    expected: str
    actual: str
    hint: str

    def to_json(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        return f"{self.rule} {self.location}: expected {self.expected}; found {self.actual} (fix: {self.hint})"


# Tensor-producing torch calls the wrapper may make: allocation only.
ALLOCATION = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
              "full_like", "Size", "device", "dtype", "tensor"}
# Python-side tensor transforms (SUB-BEH-002): data movement or layout changes done outside the kernel.
TRANSFORMS = {"transpose", "permute", "contiguous", "reshape", "t", "view", "view_as", "flatten", "squeeze",
              "unsqueeze", "expand", "expand_as", "repeat", "narrow", "flip", "roll", "gather", "scatter",
              "index_select", "masked_select", "cat", "stack", "split", "chunk", "clone", "copy_", "to", "type",
              "float", "half", "bfloat16", "int", "long", "double", "bool", "char", "byte", "short",
              "as_strided", "movedim", "swapaxes", "tril", "triu", "pad"}
# Host-side fallbacks (static part of SUB-BEH-004).
HOST_MOVES = {"cpu", "numpy", "tolist", "item"}
CXX_COMPUTE = re.compile(r"\b(?:at|torch)::(?!empty\b|empty_like\b|empty_strided\b|zeros\b|zeros_like\b|"
                         r"ones\b|full\b|Tensor\b|IntArrayRef\b|ArrayRef\b|ScalarType\b|Scalar\b|k[A-Z]\w*\b|"
                         r"Device\b|DeviceType\b|TensorOptions\b|native::|Library\b|library\b|jit\b|"
                         r"optional\b|TensorList\b|string_view\b|List\b|Layout\b|infer_size\b)(\w+(?:::\w+)*)\s*\(")
CXX_TRANSFORM = re.compile(r"(?<!device\(\))\.(" + "|".join(sorted(TRANSFORMS | HOST_MOVES)) + r")\s*\(")
CXX_ACLNN = re.compile(r"\baclnn([A-Z]\w*?)(?:GetWorkspaceSize)?\s*\(")
CXX_ROUTES = re.compile(r"\b(ADD_TO_LAUNCHER_LIST_AICORE|EXEC_NPU_CMD|EXEC_NPU_NO_FORMAT_CHECK_CMD|"
                        r"at_npu::native::\w+|op_api::\w+|l0op::(?!Contiguous\b|ViewCopy\b)\w+)\s*[(<]")


def _where(root: Path, path: Path, line: int = 0) -> str:
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    return f"{rel}:{line}" if line else rel


def validate(source_dir: str | Path, tasks: list | None = None) -> list[Finding]:
    """Every finding for the submission in `source_dir` (an empty list: nothing found).

    `tasks` (loaded Task objects) names the operators the interface must match; without them the
    manifest written by `cannpilot export` is used when present."""
    root = Path(source_dir)
    out: list[Finding] = []
    if not root.is_dir():
        return [Finding("EVAL-CANN-001", str(root), "an existing submission directory",
                        "no such directory" if not root.exists() else "not a directory",
                        "pass the unpacked submission root")]
    wheels = sorted((root / "dist").glob("cann_bench*.whl")) if (root / "dist").is_dir() else []
    listing = ", ".join(sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())) or "(empty)"
    build = root / "build.sh"
    if not wheels and not build.is_file():
        out.append(Finding("EVAL-CANN-002", _where(root, build), "build.sh at the root (no dist/cann_bench*.whl)",
                           f"neither; the root holds {listing}", "add a build.sh that writes dist/cann_bench*.whl"))
    elif not build.is_file() or build.is_symlink():
        out.append(Finding("AUTO-CANN-001", _where(root, build), "a regular file build.sh",
                           "missing" if not build.exists() else "a link or not a regular file",
                           "ship reproducible sources with a build.sh, not only a prebuilt wheel"))
    pkg = root / "cann_bench"
    init = pkg / "__init__.py"
    if not pkg.is_dir() and not wheels:
        out.append(Finding("AUTO-CANN-002", _where(root, pkg), "a cann_bench/ package or dist/cann_bench*.whl",
                           f"neither; the root holds {listing}", "add the cann_bench/ package sources"))
    names = _manifest_names(root)
    if tasks:
        names = _task_names(tasks)
    if pkg.is_dir():
        if not init.is_file():
            out.append(Finding("EVAL-CANN-005", _where(root, init), "cann_bench/__init__.py",
                               "missing", "add __init__.py exposing one function per operator"))
        else:
            out += _check_interface(root, init, names)
        for py in sorted(pkg.rglob("*.py")):
            out += _check_python(root, py)
    own_ops = _own_op_types(root)
    for cpp in sorted((root / "csrc").rglob("*")) if (root / "csrc").is_dir() else []:
        if cpp.suffix in (".cpp", ".cc", ".cxx", ".h", ".hpp") and "op_kernel" not in cpp.parts \
                and "op_host" not in cpp.parts:
            out += _check_cxx(root, cpp, own_ops)
    out += _check_kernels(root)
    return out


def _task_names(tasks) -> dict[str, set[str]]:
    from copilot.export.opspec import callable_name

    return {t.name: {t.name, callable_name(t), t.op_name} for t in tasks}


def _manifest_names(root: Path) -> dict[str, set[str]]:
    m = _manifest(root)
    return {op["task"]: {op["name"], op["task"]} for op in m.get("ops", [])} if m else {}


def _manifest(root: Path) -> dict:
    from copilot.export.project import MANIFEST

    try:
        return json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def _parse(root: Path, path: Path) -> tuple[ast.Module | None, list[Finding]]:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), str(path)), []
    except (SyntaxError, UnicodeDecodeError) as e:
        line = getattr(e, "lineno", 0) or 0
        return None, [Finding("EVAL-CANN-004", _where(root, path, line), "valid UTF-8 Python",
                              f"{type(e).__name__}: {getattr(e, 'msg', e)}", "fix the syntax so cann_bench imports")]


def _check_interface(root: Path, init: Path, names: dict[str, set[str]]) -> list[Finding]:
    tree, errs = _parse(root, init)
    if tree is None:
        return errs
    public = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            public[node.name] = node.lineno
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            for t in node.targets:
                if isinstance(t, ast.Name) and not t.id.startswith("_"):
                    public[t.id] = node.lineno
    out = []
    if not public:
        out.append(Finding("EVAL-CANN-005", _where(root, init), "at least one public non-class callable",
                           "none defined at module level", "define def <operator>(...) in cann_bench/__init__.py"))
    for task, accepted in names.items():
        if not accepted & set(public):
            out.append(Finding("EVAL-CANN-005", _where(root, init),
                               f"a callable named {' or '.join(sorted(accepted))} for task {task}",
                               f"callables {sorted(public) or 'none'}",
                               "name the function after the task's operator or its schema function"))
    return out


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _check_python(root: Path, path: Path) -> list[Finding]:
    tree, errs = _parse(root, path)
    if tree is None:
        return errs
    out = list(errs)
    torch_names = {"torch"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("torch", "torch_npu", "numpy"):
                    torch_names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("torch", "torch_npu"):
            for a in node.names:
                if node.module.startswith("torch.nn") or node.module.startswith("torch_npu") or a.name in (
                        "nn", "functional", "ops", "special", "linalg", "fft"):
                    torch_names.add(a.asname or a.name)
    for node in ast.walk(tree):
        where = _where(root, path, getattr(node, "lineno", 0))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.MatMult,)):
            out.append(Finding("SUB-BEH-001", where, "no computation in the wrapper", "the @ operator",
                               "compute inside the submitted kernel"))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                name = _dotted(t)
                if name.split(".")[0] in torch_names and "." in name:
                    out.append(Finding("SUB-BEH-006", where, "the evaluation environment left untouched",
                                       f"assignment to {name}", "do not patch torch / torch_npu attributes"))
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, (ast.Slice, ast.Tuple)):
            out.append(Finding("SUB-BEH-002", where, "no tensor slicing in the wrapper", ast.unparse(node)[:60],
                               "slice inside the kernel (pass offsets through the tiling data)"))
        if isinstance(node, ast.Global):
            out.append(Finding("SUB-BEH-005", where, "no state kept between calls", f"global {', '.join(node.names)}",
                               "compute every call afresh; do not cache outputs"))
        if isinstance(node, ast.ClassDef):
            bases = {_dotted(b) for b in node.bases}
            methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            if any(b.endswith("Tensor") for b in bases) or methods & {"__torch_function__", "__torch_dispatch__"}:
                out.append(Finding("SUB-BEH-007", where, "plain torch.Tensor results",
                                   f"class {node.name} ({', '.join(sorted(bases)) or 'tensor protocol'})",
                                   "return the tensor the kernel wrote"))
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        head = name.split(".")[0]
        attr = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if name.startswith(("torch.ops.cann_bench.", "torch.library.")) or name == "torch.ops.load_library":
            continue
        if head in torch_names and "." in name:
            tail = name.split(".", 1)[1]
            if tail.startswith(("ops.aten", "ops.npu", "ops.prims")) or head == "torch_npu" or \
                    name.startswith("torch.ops.") and not name.startswith("torch.ops.cann_bench."):
                out.append(Finding("SUB-BEH-003", where, "calls into our own operators only (torch.ops.cann_bench.*)",
                                   f"{name}(...)", "call the submitted kernel, not a built-in operator"))
            elif tail.split(".")[-1] not in ALLOCATION and tail not in ("npu.current_stream", "npu.synchronize",
                                                                         "npu.current_device", "is_tensor"):
                out.append(Finding("SUB-BEH-001", where, "no torch / torch_npu compute in the wrapper", f"{name}(...)",
                                   "do this computation in the submitted kernel"))
        elif attr in TRANSFORMS:
            out.append(Finding("SUB-BEH-002", where, "inputs and outputs handed to the kernel unchanged",
                               f".{attr}(...)", "do the layout or dtype change inside the kernel"))
        elif attr in HOST_MOVES:
            out.append(Finding("SUB-BEH-004", where, "no data moved to the host", f".{attr}()",
                               "keep the computation on the NPU in the submitted kernel"))
        elif attr == "data_ptr":
            out.append(Finding("SUB-BEH-005", where, "results independent of input addresses", ".data_ptr()",
                               "do not key anything on tensor addresses in the wrapper"))
        elif attr in {"matmul", "mm", "bmm", "exp", "sum", "mean", "softmax", "sigmoid", "relu", "add", "mul",
                      "sub", "div", "pow", "sqrt", "rsqrt", "tanh", "max", "min", "abs", "neg", "clamp", "where",
                      "norm", "log", "erf", "gelu", "silu", "addcmul", "addcdiv", "cumsum", "sort", "topk"}:
            out.append(Finding("SUB-BEH-001", where, "no tensor compute in the wrapper", f".{attr}(...)",
                               "do this computation in the submitted kernel"))
    out += _check_returns(root, path, tree)
    return out


def _check_returns(root: Path, path: Path, tree: ast.Module) -> list[Finding]:
    """SUB-BEH-007: each public operator returns what our registered operator returned."""
    out = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Return):
                v = node.value
                vals = v.elts if isinstance(v, ast.Tuple) else [v]
                for x in vals:
                    ok = isinstance(x, ast.Name) or (isinstance(x, ast.Call) and _dotted(x.func).startswith("torch.ops."))
                    if not ok:
                        out.append(Finding("SUB-BEH-007", _where(root, path, node.lineno), "a real torch.Tensor returned",
                                           ast.unparse(x)[:60] if x is not None else "None",
                                           "return the output tensor of torch.ops.cann_bench.<op>"))
    return out


def _own_op_types(root: Path) -> set[str]:
    types = set()
    for p in root.rglob("*.cpp"):
        if "op_host" in p.parts:
            types |= set(re.findall(r"\bOP_ADD\s*\(\s*(\w+)", strip_comments(p.read_text(errors="replace"))))
    return types


def _check_cxx(root: Path, path: Path, own_ops: set[str]) -> list[Finding]:
    out = []
    code = strip_comments(path.read_text(errors="replace"))
    for m in CXX_COMPUTE.finditer(code):
        out.append(Finding("SUB-BEH-001", _where(root, path, code.count("\n", 0, m.start()) + 1),
                           "no ATen / torch compute in the binding", m.group(0).rstrip("( "),
                           "do this computation in the submitted kernel"))
    for m in CXX_TRANSFORM.finditer(code):
        rule = "SUB-BEH-004" if m.group(1) in HOST_MOVES else "SUB-BEH-002"
        out.append(Finding(rule, _where(root, path, code.count("\n", 0, m.start()) + 1),
                           "tensors handed to the kernel as given", f".{m.group(1)}(...)",
                           "do the layout/dtype change in the kernel; keep data on the NPU"))
    for m in CXX_ACLNN.finditer(code):
        op = m.group(1)
        if op not in own_ops and op not in ("CreateTensor",):
            out.append(Finding("SUB-BEH-003", _where(root, path, code.count("\n", 0, m.start()) + 1),
                               f"aclnn calls to the submission's own operators ({', '.join(sorted(own_ops)) or 'none defined'})",
                               f"aclnn{op}", "call the aclnn API generated for your own OpDef"))
    for m in CXX_ROUTES.finditer(code):
        out.append(Finding("SUB-BEH-003", _where(root, path, code.count("\n", 0, m.start()) + 1),
                           "no routing to built-in operators", m.group(1), "launch the submitted kernel"))
    return out


def _check_kernels(root: Path) -> list[Finding]:
    """Our own rule: every kernel the manifest lists is byte for byte the device half of the
    candidate that passed (the unit the emulator compiled)."""
    out = []
    for op in _manifest(root).get("ops", []):
        path = root / op.get("kernel", "")
        if not path.is_file():
            out.append(Finding("CANNPILOT-KERNEL", op.get("kernel", "?"), "the exported kernel file", "missing",
                               "export the candidate again"))
        elif hashlib.sha256(path.read_bytes()).hexdigest() != op.get("kernel_sha256", op.get("sha256")):
            want = op.get("kernel_sha256", op.get("sha256", "?"))
            out.append(Finding("CANNPILOT-KERNEL", op["kernel"], f"SHA-256 {want[:16]}… (the candidate's device half)",
                               "a different file", "the kernel was edited after export; re-run the checks, then export"))
    return out
