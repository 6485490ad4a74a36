"""The verdict on one case of a task: every compared output judged in the task's precision mode.

Per-output settings come from the proto: `compare: false` (public layout) skips an output, and
`precision_thresholds: {dtype: value}` (public layout) sets a task's threshold per output dtype:
for an integer dtype the allowed |kernel - golden| (quantised values at a .5 rounding tie may
round either way), for a float dtype the MERE limit T (MARE limit 10T), 0 meaning bit-exact.

Before any number is compared, an output that is not contiguous fails as a structural error
(benchmark_spec §4.6). An index output (an integer output named like `idx`/`indices` of a task
that selects along a `dim`) that differs from the golden only where the input holds equal values
passes: the golden's choice among ties is torch's, not the operator's (docs/precision.md).
A run that timed out, crashed or ran out of memory is judged by its run error, not by the values
it left behind (`run_verdict`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import torch
import yaml

from copilot.oracle.golden import Reference
from copilot.oracle.precision import CaseVerdict, judge, judge_allclose
from copilot.tasks.model import Task

_INDEX_NAME = re.compile(r"(^|_)(idx|index|indices)$", re.I)
_THRESHOLD_CACHE: dict[tuple[str, float], dict[str, float]] = {}


def task_thresholds(task: Task) -> dict[str, float]:
    """The proto's `precision_thresholds` (dtype -> threshold), {} when it declares none."""
    proto = Path(task.path) / "proto.yaml"
    if task.kind != "cann" or not proto.is_file():
        return {}
    key = (str(proto), proto.stat().st_mtime)
    hit = _THRESHOLD_CACHE.get(key)
    if hit is None:
        try:
            doc = yaml.safe_load(proto.read_text()) or {}
        except yaml.YAMLError:
            doc = {}
        op = doc.get("operator", doc) if isinstance(doc, dict) else {}
        raw = op.get("precision_thresholds") if isinstance(op, dict) else None
        hit = {}
        for dtype, value in (raw or {}).items():
            try:
                hit[str(dtype).lower()] = float(value)
            except (TypeError, ValueError):
                continue
        _THRESHOLD_CACHE[key] = hit
    return hit


def _non_contiguous(name: str, actual) -> CaseVerdict | None:
    if isinstance(actual, torch.Tensor) and not actual.is_contiguous():
        return CaseVerdict(False, "structural", math.nan, math.nan, "non_contiguous_output", {},
                           f"{name}: the output is not contiguous (strides {list(actual.stride())} for "
                           f"shape {list(actual.shape)}); a view is not a computed result", None)
    return None


def _index_dim(task: Task, case) -> int | None:
    for attr in ("dim", "axis"):
        if attr in (case.attrs or {}) and isinstance(case.attrs[attr], int):
            return case.attrs[attr]
    return None


def _ties_only(task: Task, case, inputs, actual, oracle, name: str) -> str | None:
    """When an index output differs from the golden only at ties of the input along the task's
    dim (and picks no index twice where the golden does not), the reason it passes; else None."""
    if case is None or not inputs or not _INDEX_NAME.search(name):
        return None
    x = inputs[0]
    if not isinstance(x, torch.Tensor) or x.dim() == 0:
        return None
    dim = _index_dim(task, case)
    dim = -1 if dim is None else dim
    a = torch.as_tensor(actual).to(torch.int64)
    g = torch.as_tensor(oracle).to(torch.int64)
    if a.shape != g.shape or a.dim() not in (x.dim(), x.dim() - 1):
        return None
    d = dim % x.dim()
    if a.dim() == x.dim() - 1:                    # a reduction without keepdim (arg_max)
        a, g = a.unsqueeze(d), g.unsqueeze(d)
    if any(a.shape[i] != x.shape[i] for i in range(x.dim()) if i != d):
        return None
    size = x.shape[d]
    if bool(((a < 0) | (a >= size)).any()):
        return None
    xa, xg = x.gather(d, a), x.gather(d, g)
    same = xa == xg
    if xa.is_floating_point():                   # NaNs are equal input values for this purpose
        same |= torch.isnan(xa) & torch.isnan(xg)
    if not bool(same.all()):
        return None
    if a.shape[d] > 1:                           # a selection must not pick an element twice
        dup = lambda t: (t.sort(dim=d).values.diff(dim=d) == 0).any(dim=d)  # noqa: E731
        if bool((dup(a) & ~dup(g)).any()):
            return None
    differ = int((a != g).sum())
    return f"{name}: {differ} index(es) differ from the golden, each at a tie of equal input values"


def judge_case(task: Task, ref: Reference, actuals: list, inputs: list | None = None,
               case=None, scans: list | None = None) -> CaseVerdict:
    """Judge every compared output; the case passes when all do. The failing verdict names its
    output; `outputs` holds each compared output's verdict. `inputs` and `case` (optional) let an
    index output that differs only at ties pass. `scans`: per output, the reference's share of its
    scan computed once (`precision.ReferenceScan`, or its `ScanSide` for these elements) or None."""
    verdicts: list[CaseVerdict] = []
    if len(actuals) != len(ref.oracle):
        return CaseVerdict(False, "structural", math.nan, math.nan, "shape_mismatch", {},
                           f"the kernel produced {len(actuals)} outputs, the task has {len(ref.oracle)}", None)
    thresholds = task_thresholds(task)
    for i, (actual, spec_out) in enumerate(zip(actuals, ref.outputs)):
        spec = task.outputs[i] if i < len(task.outputs) else None
        if spec is not None and not spec.compare:
            continue
        name = spec_out.name
        v = _non_contiguous(name, actual)
        if v is None and task.precision_mode == "allclose":
            v = judge_allclose(actual, ref.bench[i], spec_out.dtype)
        elif v is None:
            th = thresholds.get(spec_out.dtype.lower())
            v = judge(actual, ref.oracle[i], ref.bench[i], spec_out.dtype, th,
                      _side(scans, i))
            if v.failure_class == "integer_mismatch":
                why = _ties_only(task, case, inputs, actual, ref.oracle[i], name)
                if why:
                    v = CaseVerdict(True, "index", math.nan, math.nan, None, {}, why, None)
        if not v.passed and not v.message.startswith(name):
            v.message = f"{name}: {v.message}"
        verdicts.append(v)
    if not verdicts:
        return CaseVerdict(True, "none", math.nan, math.nan, None, {}, "no output is compared", None)
    failed = next((v for v in verdicts if not v.passed), None)
    if failed is not None:
        failed.outputs = verdicts
        return failed
    finite = [v for v in verdicts if not math.isnan(v.mere)]
    head = max(finite, key=lambda v: v.mare) if finite else verdicts[0]
    return CaseVerdict(True, head.mode, head.mere, head.mare, None, head.regions, head.message,
                       head.worst_index, verdicts)


# Run errors after which the outputs mean nothing: the verdict is the error itself. RUN.TILING: the
# host TilingFunc refused the case (GRAPH_FAILED), so no block ran and no output (nor out_shape) was written.
_RUN_FAILURES = ("RUN.TIMEOUT", "RUN.CRASH", "RUN.MEMORY", "RUN.TILING")


def _side(scans, i: int):
    """The precomputed side of output `i`'s scan when there is one for these arrays, else None."""
    from copilot.oracle.precision import ReferenceScan

    sc = scans[i] if scans is not None and i < len(scans) else None
    return sc.view() if isinstance(sc, ReferenceScan) else sc     # judge() checks it fits


def run_verdict(task: Task, ref: Reference, run, inputs: list | None = None, case=None,
                scans: list | None = None) -> CaseVerdict:
    """The verdict on one run of a case: a timeout, crash, out-of-memory or refused tiling names the
    failure (`RUN.TIMEOUT`, ..., `RUN.TILING`), whatever values the output buffers hold; other error findings (rule
    breaches) fail a case whose values pass as `rule_error`."""
    errors = [d for d in run.diagnostics if d.is_error]
    fatal = next((d for d in errors if d.id in _RUN_FAILURES), None)
    if fatal is not None:
        ids = ", ".join(dict.fromkeys(d.id for d in errors))
        return CaseVerdict(False, "run", math.nan, math.nan, fatal.id, {},
                           f"run error ({ids}): {fatal.message}", None)
    lengths = _written_shapes(ref, getattr(run, "extra", None) or {})
    if lengths is not None:
        return lengths
    verdict = judge_case(task, ref, run.outputs, inputs=inputs, case=case, scans=scans)
    if errors:
        ids = ", ".join(dict.fromkeys(d.id for d in errors))
        verdict.passed = False
        verdict.message = f"rule/run errors ({ids}); values: {verdict.message}"
        verdict.failure_class = verdict.failure_class or "rule_error"
    return verdict


def _written_shapes(ref: Reference, extra: dict) -> CaseVerdict | None:
    """A data-dependent output whose shape words are missing or wrong fails before its values are
    compared, naming the length the kernel wrote and the golden's (`copilot.oracle.dynamic`)."""
    for spec in ref.outputs:
        dims, why = (extra.get("out_shapes") or {}).get(spec.name, (None, ""))
        if why:
            return CaseVerdict(False, "run", math.nan, math.nan, "shape_mismatch", {}, why, None)
        if dims is not None and tuple(dims) != tuple(spec.shape):
            return CaseVerdict(False, "run", math.nan, math.nan, "shape_mismatch", {},
                               f"{spec.name}: the kernel wrote shape {list(dims)} into out_shape, the golden's is "
                               f"{list(spec.shape)}", None)
    return None
