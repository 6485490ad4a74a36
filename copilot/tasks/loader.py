"""Load operator tasks: directories in the public CANN-Bench layout and KernelBench-style files.

Every way a task can be malformed raises `BadInput` with one line naming the file, the place in
it and what to do. Nothing here runs the golden except `smoke_golden`.
"""

from __future__ import annotations

import ast
import csv
import importlib.util
import inspect
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from copilot.dtypes import ALIASES, DTYPES
from copilot.errors import BadInput
from copilot.paths import BUILTIN_DIR, builtin_task_dir
from copilot.tasks.model import AttrSpec, Case, Task, TensorSpec

TASK_FILES = ("proto.yaml", "golden.py", "desc.md")
ATTR_TYPES = ("float", "int", "bool", "string", "list_int", "list_float")
# Every attr type spelling of the public protos (and their obvious kin), lower case without
# blanks -> our type. A `Tensor` attr is a constant the case gives as a literal list (the public
# goldens take a list: grouped_matmul_swiglu_quant's cumulative group_list), so it is a list_int.
ATTR_TYPE_SPELLINGS = {
    **{k: "float" for k in ("float", "float32", "float64", "double", "fp32", "real")},
    **{k: "int" for k in ("int", "int32", "int64", "int64_t", "int32_t", "integer", "long")},
    **{k: "bool" for k in ("bool", "boolean")},
    **{k: "string" for k in ("string", "str")},
    **{k: "list_int" for k in ("list_int", "listint", "int[]", "int64[]", "int32[]", "list[int]",
                               "list[int64]", "listint64", "list_int64", "tuple[int]", "tensor")},
    **{k: "list_float" for k in ("list_float", "listfloat", "float[]", "float32[]", "list[float]",
                                 "list_float32", "tuple[float]")},
}
SPECIAL_RANGE_VALUES = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def snake_case(name: str) -> str:
    """RmsNorm -> rms_norm, NLLLoss -> nll_loss."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def builtin_names() -> list[str]:
    if not BUILTIN_DIR.is_dir():
        return []
    return sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "proto.yaml").is_file())


def builtin_tasks() -> list[Task]:
    return [load_task(BUILTIN_DIR / name) for name in builtin_names()]


def load_task(ref: str | Path) -> Task:
    """A built-in task name, a task directory, or a KernelBench-style Python file."""
    ref_str = str(ref)
    path = Path(ref_str).expanduser()
    builtin = builtin_task_dir(ref_str)
    if builtin is not None:
        task = _load_task_dir(builtin)
        task.builtin = True
        return task
    if path.is_dir():
        task = _load_task_dir(path)
        task.builtin = path.resolve().parent == BUILTIN_DIR
        return task
    if path.is_file() and path.suffix == ".py":
        return _load_kernelbench(path)
    if path.exists():
        raise BadInput(f"{path}: not a task: give a task directory (proto.yaml, golden.py, "
                       "cases.yaml) or a KernelBench-style .py file")
    known = builtin_names()
    close = [n for n in known if ref_str.lower() in n or n in ref_str.lower()][:5]
    hint = f" (close: {', '.join(close)})" if close else " (see `cannpilot tasks ls`)"
    raise BadInput(f"unknown task '{ref_str}': not a built-in task name, a directory or a .py file{hint}")


# --- task directories -----------------------------------------------------------------------

def _inside(task_dir: Path, name: str) -> Path:
    """The task file `name`, refusing one that (through a link) lies outside the task directory."""
    p = task_dir / name
    root = task_dir.resolve()
    real = p.resolve()
    if real != root and root not in real.parents:
        raise BadInput(f"{p}: resolves to {real}, outside the task directory {root}; "
                       "task files must live inside their task directory")
    return p


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInput(f"{path}:{where}: unreadable YAML: {problem}") from None


def _dtype_name(raw: Any, where: str) -> str:
    name = str(raw).strip()
    name = ALIASES.get(name, name)
    if name not in DTYPES:
        raise BadInput(f"{where}: unknown dtype '{raw}' (known: {', '.join(DTYPES)})")
    return name


def _tensor_specs(items: Any, kind: str, proto_path: Path) -> list[TensorSpec]:
    if not isinstance(items, list) or not items:
        raise BadInput(f"{proto_path}: operator.{kind} must be a non-empty list of "
                       "{name, dtype} entries")
    specs = []
    for i, item in enumerate(items):
        where = f"{proto_path}: operator.{kind}[{i}]"
        if not isinstance(item, dict) or not item.get("name"):
            raise BadInput(f"{where}: needs a 'name'")
        raw = item.get("dtype", item.get("dtypes"))
        raw_list = raw if isinstance(raw, list) else [raw] if raw is not None else []
        if not raw_list:
            raise BadInput(f"{where} ({item['name']}): needs a 'dtype' list")
        dtypes = tuple(_dtype_name(d, f"{where} ({item['name']})") for d in raw_list)
        compare = item.get("compare", True)
        if "int_tolerance" in item:     # our former extension; the public spec's key replaces it
            raise BadInput(f"{where} ({item['name']}): int_tolerance is no longer read; declare the "
                           "tolerance per output dtype as the public protos do: "
                           "operator.precision_thresholds: {int8: 1}")
        if kind == "inputs" and "compare" in item:
            raise BadInput(f"{where} ({item['name']}): compare applies to outputs only")
        if not isinstance(compare, bool):
            raise BadInput(f"{where} ({item['name']}): compare must be true or false, got {compare!r}")
        optional, is_list = item.get("optional", False), item.get("is_list", False)
        if not isinstance(optional, bool) or not isinstance(is_list, bool):
            raise BadInput(f"{where} ({item['name']}): optional and is_list must be true or false")
        specs.append(TensorSpec(str(item["name"]), dtypes, str(item.get("description", "")), compare,
                                optional=optional and kind == "inputs", is_list=is_list and kind == "inputs"))
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise BadInput(f"{proto_path}: operator.{kind} has duplicate names: {names}")
    return specs


def _attr_specs(items: Any, proto_path: Path) -> list[AttrSpec]:
    if items in (None, [], {}):
        return []
    if not isinstance(items, list):
        raise BadInput(f"{proto_path}: operator.attrs must be a list of {{name, type, default}}")
    specs = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("name"):
            raise BadInput(f"{proto_path}: operator.attrs[{i}] needs a 'name'")
        raw_type = str(item.get("type", "float"))
        typ = ATTR_TYPE_SPELLINGS.get(re.sub(r"\s+", "", raw_type).lower())
        if typ is None:
            raise BadInput(f"{proto_path}: attr '{item['name']}' has unknown type '{raw_type}' "
                           f"(known: {', '.join(ATTR_TYPES)}, in any case; also "
                           f"{', '.join(k for k in ATTR_TYPE_SPELLINGS if k not in ATTR_TYPES)})")
        specs.append(AttrSpec(str(item["name"]), typ, item.get("default"),
                              bool(item.get("required", False)), str(item.get("description", ""))))
    return specs


def _parse_range_value(v: Any, where: str) -> float:
    if isinstance(v, bool):
        raise BadInput(f"{where}: value_range entry {v!r} is not a number")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v.strip().lower() in SPECIAL_RANGE_VALUES:
        return SPECIAL_RANGE_VALUES[v.strip().lower()]
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise BadInput(f"{where}: value_range entry {v!r} is not a number, 'inf', '-inf' or 'nan'")


def _parse_pair(pair: Any, where: str) -> tuple[float, float]:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise BadInput(f"{where}: value_range must be [lo, hi] or one [lo, hi] per input, got {pair!r}")
    lo, hi = (_parse_range_value(v, where) for v in pair)
    if not (math.isnan(lo) or math.isnan(hi)) and lo > hi:
        raise BadInput(f"{where}: value_range [{lo}, {hi}] has lo > hi")
    if math.isnan(lo) != math.isnan(hi):
        raise BadInput(f"{where}: value_range {pair!r} mixes nan with a number; use ['nan', 'nan']")
    return lo, hi


def _slots(count: int, shapes: list, listed: int, where: str, what: str) -> list[int | None]:
    """Which inputs `count` per-input entries (dtypes, ranges) belong to: all inputs, the
    inputs the case's input_shape lists, or the given (non-null) ones; [None] = one for all."""
    n = len(shapes)
    present = [i for i, s in enumerate(shapes) if s is not None]
    if count == n:
        return list(range(n))
    if count == listed:
        return list(range(listed))
    if count == len(present):
        return present
    if count == 1:
        return [None]
    raise BadInput(f"{where}: {count} {what} for {n} inputs ({listed} listed in input_shape, "
                   f"{len(present)} given)")


def _value_ranges(raw: Any, shapes: list, listed: int, where: str) -> list[tuple[float, float]]:
    """One [lo, hi] per input. A case may give one range for all, one per input, or one per
    given input (omitted inputs skipped); a tensor list may give one range per element (the first
    stands for the list: the public cases give the same range to every element)."""
    n = len(shapes)
    if raw is None:
        return [(-1.0, 1.0)] * n
    if isinstance(raw, (list, tuple)) and raw and all(not isinstance(p, (list, tuple)) for p in raw):
        return [_parse_pair(raw, where)] * n
    if not (isinstance(raw, (list, tuple)) and raw and all(p is None or isinstance(p, (list, tuple)) for p in raw)):
        raise BadInput(f"{where}: value_range must be [lo, hi] or one [lo, hi] per input, got {raw!r}")
    slots = _slots(len(raw), shapes, listed, where, "ranges")
    out = [(-1.0, 1.0)] * n
    for slot, pair in zip(slots, raw):
        if pair is None:
            continue
        if pair and isinstance(pair[0], (list, tuple)):      # a tensor list: one per element
            pair = pair[0]
        parsed = _parse_pair(pair, where)
        if slot is None:
            out = [parsed] * n
        else:
            out[slot] = parsed
    return out


def _coerce_attr(spec: AttrSpec, value: Any, where: str) -> Any:
    try:
        if spec.type == "float":
            return float(value)
        if spec.type == "int":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        if spec.type == "bool":
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes")
            return bool(value)
        if spec.type == "string":
            return str(value)
        if spec.type == "list_int":
            return [int(v) for v in value]
        if spec.type == "list_float":
            return [float(v) for v in value]
    except (TypeError, ValueError):
        pass
    raise BadInput(f"{where}: attr '{spec.name}' = {value!r} is not a {spec.type}")


def _is_dims(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0
                                                for d in x)


def _input_shape(spec: TensorSpec, shape: Any, where: str):
    """A tensor's dims, None for an omitted input, or a tensor list's element dims."""
    if shape is None:
        return None
    if _is_dims(shape):
        return [tuple(shape)] if spec.is_list and shape else tuple(shape)
    if isinstance(shape, (list, tuple)) and shape and all(_is_dims(e) for e in shape):
        return [tuple(e) for e in shape]
    raise BadInput(f"{where}: shape of input '{spec.name}' must be a list of non-negative integers, "
                   f"a list of such lists (a tensor list) or null (omitted), got {shape!r}")


def _case_dtypes(raw: Any, task_inputs: list[TensorSpec], shapes: list, listed: int, where: str) -> list[str | None]:
    """One dtype per input: a single name for all, one per input, one per given input, or one
    per tensor-list element (all the same); null where the input is omitted."""
    n = len(task_inputs)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)) or not raw:
        raise BadInput(f"{where}: dtype must list one dtype per input ({n}), got {raw!r}")
    slots = _slots(len(raw), shapes, listed, where, "dtypes")
    chosen: list[Any] = [None] * n
    for slot, d in zip(slots, raw):
        if slot is None:
            chosen = [d] * n
        else:
            chosen[slot] = d
    out: list[str | None] = []
    for i, (spec, d) in enumerate(zip(task_inputs, chosen)):
        if shapes[i] is None:
            out.append(None)
            continue
        if isinstance(d, (list, tuple)):          # a tensor list: one dtype per element
            names = {_dtype_name(e, f"{where}, input '{spec.name}'") for e in d if e is not None}
            if len(names) > 1:
                raise BadInput(f"{where}: the elements of tensor list '{spec.name}' have different "
                               f"dtypes {sorted(names)}; a tensor list has one dtype")
            d = next(iter(names), None)
        if d is None:
            d = next((x for x in out if x), spec.dtypes[0])   # unnamed: as the inputs before it
            if d not in spec.dtypes:
                d = spec.dtypes[0]
        name = _dtype_name(d, f"{where}, input '{spec.name}'")
        if name not in spec.dtypes:
            raise BadInput(f"{where}: input '{spec.name}' has dtype {name}, which the proto does "
                           f"not allow ({', '.join(spec.dtypes)})")
        out.append(name)
    return out


def _make_case(raw: dict, index: int, task_inputs: list[TensorSpec], attrs: list[AttrSpec],
               source: Path) -> Case:
    case_id = str(raw.get("case_id", index + 1))
    where = f"{source}: case {case_id}"
    shapes_raw = raw.get("input_shape", raw.get("shapes"))
    n = len(task_inputs)
    if not isinstance(shapes_raw, (list, tuple)) or not shapes_raw:
        raise BadInput(f"{where}: input_shape must be a list with one shape per input")
    if n == 1 and _is_dims(shapes_raw):
        shapes_raw = [shapes_raw]     # a bare [1024, 1024] for a single-input operator
    shapes_raw = list(shapes_raw)
    if len(shapes_raw) > n:
        raise BadInput(f"{where}: input_shape has {len(shapes_raw)} shapes but the proto has "
                       f"{n} inputs ({', '.join(s.name for s in task_inputs)})")
    # Trailing inputs a case leaves out are omitted optional inputs (the public cases do both:
    # `null` in place, or a shorter list).
    listed = len(shapes_raw)
    shapes_raw += [None] * (n - len(shapes_raw))
    given = raw.get("attrs") or {}
    if not isinstance(given, dict):
        raise BadInput(f"{where}: attrs must be a mapping, got {given!r}")
    by_name = {s.name: i for i, s in enumerate(task_inputs)}
    given = dict(given)
    for key in [k for k in given if k in by_name and k not in {a.name for a in attrs}]:
        # Some public cases name an omitted optional input among the attrs (`bias: null`).
        if given.pop(key) is not None:
            raise BadInput(f"{where}: attrs name the input '{key}'; give its shape in input_shape")
        shapes_raw[by_name[key]] = None
    shapes = [_input_shape(spec, shape, where) for spec, shape in zip(task_inputs, shapes_raw)]
    dtypes = _case_dtypes(raw.get("dtype", raw.get("dtypes")), task_inputs, shapes, listed, where)
    known = {a.name: a for a in attrs}
    unknown = [k for k in given if k not in known]
    if unknown:
        raise BadInput(f"{where}: attr(s) {', '.join(map(repr, unknown))} not in the proto "
                       f"(declared: {', '.join(known) or 'none'})")
    values = {}
    for spec in attrs:
        if spec.name in given:
            v = given[spec.name]
            values[spec.name] = None if v is None else _coerce_attr(spec, v, where)
        elif spec.required and spec.default is None:
            raise BadInput(f"{where}: required attr '{spec.name}' is missing")
        else:
            values[spec.name] = None if spec.default is None else _coerce_attr(spec, spec.default, where)
    ranges = _value_ranges(raw.get("value_range"), shapes, listed, where)
    given_none = tuple(k for k, v in given.items() if v is None)
    return Case(case_id, shapes, dtypes, values, ranges, str(raw.get("note", "") or ""), given_none)


def _read_cases(task_dir: Path, inputs: list[TensorSpec], attrs: list[AttrSpec]) -> list[Case]:
    yaml_path, csv_path = task_dir / "cases.yaml", task_dir / "cases.csv"
    if yaml_path.exists():
        path = _inside(task_dir, "cases.yaml")
        data = _read_yaml(path)
        raw_cases = data.get("cases") if isinstance(data, dict) else data
        if not isinstance(raw_cases, list) or not raw_cases:
            raise BadInput(f"{path}: needs a non-empty 'cases:' list")
        if not all(isinstance(c, dict) for c in raw_cases):
            raise BadInput(f"{path}: every entry of 'cases:' must be a mapping")
    elif csv_path.exists():
        path = _inside(task_dir, "cases.csv")
        raw_cases = _read_cases_csv(path)
    else:
        raise BadInput(f"{task_dir}: missing cases.yaml (or cases.csv): a task needs its cases")
    cases = [_make_case(raw, i, inputs, attrs, path) for i, raw in enumerate(raw_cases)]
    ids = [c.id for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise BadInput(f"{path}: duplicate case_id(s): {', '.join(dup)}")
    return cases


def _inputs_as_cases_use_them(inputs: list[TensorSpec], cases: list[Case]) -> list[TensorSpec]:
    """An input some case omits is optional; one some case gives as a list is a tensor list
    (the public protos do not always say so: gru's weight_ih)."""
    out = []
    for i, spec in enumerate(inputs):
        omitted = any(c.shapes[i] is None for c in cases)
        listed = any(isinstance(c.shapes[i], list) for c in cases)
        if listed:
            for c in cases:
                if isinstance(c.shapes[i], tuple):
                    c.shapes[i] = [c.shapes[i]]
        out.append(replace(spec, optional=spec.optional or omitted, is_list=spec.is_list or listed))
    return out


def _rejoin_brackets(cells: list[str]) -> list[str]:
    """Public cases.csv files leave literals such as [-1, 1] unquoted; glue their pieces back."""
    out: list[str] = []
    depth = 0
    for cell in cells:
        if depth > 0:
            out[-1] += "," + cell
        else:
            out.append(cell)
        depth += sum(cell.count(c) for c in "[{(") - sum(cell.count(c) for c in "]})")
    return out


def _read_cases_csv(path: Path) -> list[dict]:
    """cases.csv cells hold Python/JSON literals: "[[1024, 1024]]", "['float16']", {'dim': -1}."""
    rows = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if not header:
            raise BadInput(f"{path}: empty file")
        header = [h.strip() for h in header]
        for lineno, raw_cells in enumerate(reader, start=2):
            if not any(c.strip() for c in raw_cells):
                continue
            cells = _rejoin_brackets(raw_cells)
            if len(cells) != len(header):
                raise BadInput(f"{path}: line {lineno}: {len(cells)} columns, the header has "
                               f"{len(header)} ({', '.join(header)})")
            parsed: dict[str, Any] = {}
            for key, cell in zip(header, cells):
                cell = cell.strip()
                if key in ("input_shape", "dtype", "attrs", "value_range"):
                    try:
                        parsed[key] = ast.literal_eval(cell) if cell else None
                    except (ValueError, SyntaxError):
                        if key == "dtype":
                            parsed[key] = cell
                        else:
                            raise BadInput(f"{path}: line {lineno}: column {key} is not a "
                                           f"literal: {cell!r}") from None
                else:
                    parsed[key] = cell
            rows.append(parsed)
    if not rows:
        raise BadInput(f"{path}: no cases")
    return rows


def _import_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BadInput(f"{path}: cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise BadInput(f"{path}:{exc.lineno}: syntax error in golden: {exc.msg}") from None
    except Exception as exc:  # the user's module failed while importing
        raise BadInput(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    return module


def _load_task_dir(task_dir: Path) -> Task:
    task_dir = task_dir.resolve()
    proto_path = task_dir / "proto.yaml"
    if not proto_path.exists():
        raise BadInput(f"{task_dir}: missing proto.yaml: not a task directory "
                       "(expected proto.yaml, golden.py, cases.yaml)")
    proto = _read_yaml(_inside(task_dir, "proto.yaml"))
    op = proto.get("operator") if isinstance(proto, dict) else None
    if not isinstance(op, dict):
        raise BadInput(f"{proto_path}: needs a top-level 'operator:' mapping")
    if not op.get("name"):
        raise BadInput(f"{proto_path}: operator.name is missing")
    inputs = _tensor_specs(op.get("inputs"), "inputs", proto_path)
    outputs = _tensor_specs(op.get("outputs"), "outputs", proto_path)
    attrs = _attr_specs(op.get("attrs"), proto_path)
    cases = _read_cases(task_dir, inputs, attrs)
    inputs = _inputs_as_cases_use_them(inputs, cases)

    golden_path = task_dir / "golden.py"
    if not golden_path.exists():
        raise BadInput(f"{task_dir}: missing golden.py: a task needs its PyTorch golden function")
    _inside(task_dir, "golden.py")
    module = _import_module(golden_path, f"cannpilot_golden_{task_dir.name}")
    candidates = [task_dir.name, snake_case(str(op["name"]))]
    golden = next((getattr(module, n) for n in candidates if callable(getattr(module, n, None))), None)
    if golden is None:
        raise BadInput(f"{golden_path}: no golden function: define `def {candidates[1]}(...)` "
                       f"(the operator name in snake_case) or `def {candidates[0]}(...)`")
    fname = golden.__name__
    _check_golden_signature(golden, inputs, attrs, golden_path)
    desc_path = task_dir / "desc.md"
    desc_text = _inside(task_dir, "desc.md").read_text(encoding="utf-8") if desc_path.exists() else ""
    return Task(
        name=task_dir.name, op_name=str(op["name"]), path=task_dir, kind="cann",
        category=str(op.get("category", "") or "uncategorized"),
        inputs=inputs, outputs=outputs, attrs=attrs, cases=cases, golden=golden,
        oracle_fn=getattr(module, f"{fname}_oracle", None),
        bench_fn=getattr(module, f"{fname}_bench", None),
        input_fn=getattr(module, "get_input", None) if callable(getattr(module, "get_input", None)) else None,
        difficulty=str(op.get("difficulty", "") or ""), formula=str(op.get("formula", "") or "").strip(),
        description=str(op.get("description", "") or "").strip(), schema=str(op.get("schema", "") or ""),
        desc_text=desc_text,
    )


def _check_golden_signature(fn, inputs: list[TensorSpec], attrs: list[AttrSpec], path: Path) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return
    names = {p.name for p in params}
    missing = [a.name for a in attrs if a.name not in names]
    if len(params) < len(inputs) or missing:
        what = f"attrs {missing}" if missing else f"{len(inputs)} inputs"
        raise BadInput(f"{path}: golden `{fn.__name__}{sig}` does not take {what} "
                       "(inputs in proto order, then attrs by name)")


# --- KernelBench-style files ----------------------------------------------------------------

def _load_kernelbench(path: Path) -> Task:
    import torch

    module = _import_module(path, f"cannpilot_kernelbench_{path.stem}")
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, attr):
            raise BadInput(f"{path}: a KernelBench-style file needs `class Model(nn.Module)`, "
                           f"`get_inputs()` and `get_init_inputs()`; `{attr}` is missing")
    try:
        torch.manual_seed(0)
        sample = list(module.get_inputs())
        init = list(module.get_init_inputs())
    except Exception as exc:
        raise BadInput(f"{path}: get_inputs()/get_init_inputs() raised {type(exc).__name__}: {exc}") from None
    inputs, shapes, dtypes = [], [], []
    forward_params = [p for p in inspect.signature(module.Model.forward).parameters if p != "self"]
    for i, t in enumerate(sample):
        if not isinstance(t, torch.Tensor):
            raise BadInput(f"{path}: get_inputs() item {i} is a {type(t).__name__}, not a tensor")
        from copilot.dtypes import from_torch
        try:
            name = from_torch(t.dtype).name
        except KeyError:
            raise BadInput(f"{path}: get_inputs() item {i} has unsupported dtype {t.dtype}") from None
        pname = forward_params[i] if i < len(forward_params) else f"x{i}"
        inputs.append(TensorSpec(pname, (name,)))
        shapes.append(tuple(t.shape))
        dtypes.append(name)

    model_cls, get_inputs = module.Model, module.get_inputs

    def golden(*xs):
        torch.manual_seed(0)
        model = model_cls(*init)
        model.eval()
        probe = next((x for x in xs if isinstance(x, torch.Tensor) and x.is_floating_point()), None)
        if probe is not None:
            model = model.to(probe.dtype)
        with torch.no_grad():
            return model(*xs)

    def make_inputs():
        return list(get_inputs())

    case = Case("1", shapes, dtypes, {}, [(math.nan, math.nan)] * len(shapes),
                "inputs from get_inputs()")
    return Task(name=path.stem, op_name=path.stem, path=path.resolve(), kind="kernelbench",
                category="kernelbench", inputs=inputs, outputs=[TensorSpec("out", tuple(dtypes[:1]))],
                attrs=[], cases=[case], golden=golden, description=(module.__doc__ or "").strip(),
                make_inputs_fn=make_inputs)


def select_cases(task: Task, spec: str | None) -> list[Case]:
    """`quick` | `twins` (the quick tier and the shrunk twins of the other cases) | `all` |
    `perf` | a comma-separated list of case ids."""
    spec = (spec or "quick").strip()
    if spec == "quick":
        return task.quick_cases()
    if spec == "twins":
        from copilot.tasks.quick import quick_twins

        return task.quick_cases() + quick_twins(task)
    if spec == "all":
        return list(task.cases)
    if spec == "perf":
        return task.perf_cases()
    ids = [s.strip() for s in spec.split(",") if s.strip()]
    chosen = []
    for cid in ids:
        try:
            chosen.append(task.case(cid))
        except KeyError:
            raise BadInput(f"task {task.name} has no case '{cid}' (cases: "
                           f"{', '.join(c.id for c in task.cases)}; or quick, twins, all, perf)") from None
    if not chosen:
        raise BadInput(f"--cases '{spec}': give quick, twins, all, perf or case ids like 1,3")
    return chosen
