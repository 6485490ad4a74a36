"""Judging the runs that time a kernel, so that a fast score is also a correct one.

A performance case runs the first, middle and last blocks with real inputs and the cost model on
(one run gives the estimate and the values, so the kernel cannot tell a timing run from a judged
one). The launcher poisons every output byte (0xFF) before the blocks run; the elements the
sampled blocks wrote are those no longer all-0xFF, and those are compared with the oracle. Too few
written elements (less than half the sampled blocks' share) is a failure too.

A kernel whose blocks depend on each other (atomic accumulation into GM, SyncAll-ordered phases,
block-to-block signals) writes, in a sampled run, values that need the blocks that did not run:
its performance run is judged in full (every block) instead.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import torch

from copilot.diagnostics import Diagnostic

POISON = 0xFF

# Cross-block work: a block's output depends on what other blocks computed or wrote.
_CROSS_BLOCK = re.compile(r"\b(SetAtomic(Add|Max|Min|Type)|SyncAll|IBSet|IBWait|NotifyNextBlock|WaitPreBlock)\b")


def crosses_blocks(build) -> bool:
    """True when the kernel's source synchronises or accumulates across blocks (comments aside),
    so that three sampled blocks cannot reproduce its outputs. Hiding such a call only makes the
    sampled judge fail the kernel: it cannot make a wrong kernel pass."""
    from copilot.backends.sim.units import strip_comments

    path = getattr(build, "source_path", None)
    try:
        src = path.read_text(encoding="utf-8", errors="replace") if path else ""
    except OSError:
        return False
    return bool(_CROSS_BLOCK.search(strip_comments(src)))


def written_mask(t: torch.Tensor) -> np.ndarray:
    """Per element of `t` (flattened): True where the kernel wrote it (not all bytes 0xFF)."""
    raw = t.detach().contiguous().view(-1)
    raw = (raw.view(torch.int16) if raw.dtype == torch.bfloat16 else raw).numpy()
    if raw.itemsize in (1, 2, 4, 8):       # every byte 0xFF is the integer -1 of the element's width
        return raw.view(np.dtype(f"i{raw.itemsize}")) != -1
    b = raw.view(np.uint8).reshape(raw.size, raw.itemsize)
    return ~np.all(b == POISON, axis=1)


# More runs than this and the written elements are gathered by index instead of sliced.
MAX_RUNS = 4096


def written_runs(mask: np.ndarray) -> list[tuple[int, int]] | None:
    """The written elements as [lo, hi) runs in order (the sampled blocks write a few long runs);
    None when there are more than MAX_RUNS."""
    edges = np.flatnonzero(np.diff(mask.view(np.int8), prepend=np.int8(0), append=np.int8(0)))
    if len(edges) > 2 * MAX_RUNS:
        return None
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist()))


def _take(t: torch.Tensor, runs: list[tuple[int, int]] | torch.Tensor) -> torch.Tensor:
    """The elements of `t` (flattened) in `runs` (slices), or at the indices `runs`."""
    flat = t.reshape(-1)
    if isinstance(runs, torch.Tensor):
        return flat[runs]
    if len(runs) == 1:
        return flat[runs[0][0]:runs[0][1]]
    return torch.cat([flat[lo:hi] for lo, hi in runs]) if runs else flat[:0]


def judge_sampled(task, ref, outputs: list, inputs, case, run,
                  scans: list | None = None) -> tuple[bool, str, list[Diagnostic]]:
    """(passed, message, findings) for a sampled run of a case: the written elements of every
    compared output against the oracle, and the written share against the blocks that ran.
    `scans`: per output, the reference's share of its scan (`precision.ReferenceScan`) or None."""
    from copilot.oracle.golden import Reference
    from copilot.oracle.verdict import judge_case

    if len(outputs) != len(ref.oracle):
        return False, "the run returned no outputs", []
    block_dim = max(1, run.block_dim)
    ran = block_dim if block_dim <= 3 else 3
    expect = min(1.0, ran / block_dim)
    sub_oracle, sub_bench, sub_out, sub_act, specs, sides = [], [], [], [], [], []
    for i, (actual, spec) in enumerate(zip(outputs, ref.outputs)):
        tspec = task.outputs[i] if i < len(task.outputs) else None
        if tspec is not None and not tspec.compare:
            continue
        mask = written_mask(actual)
        n = mask.size
        share = float(mask.sum()) / n if n else 1.0
        if n and share < 0.5 * expect:
            msg = (f"{spec.name}: the sampled blocks wrote {share:.1%} of the output where their share is "
                   f"{expect:.1%}: the kernel skips work in timed runs")
            return False, msg, [Diagnostic("RUN.INTEGRITY", "error", msg, 0,
                                           "a timed run must compute what a judged run computes")]
        runs = written_runs(mask)
        sc = scans[i] if scans is not None and i < len(scans) else None
        sides.append(sc.view(runs) if sc is not None and runs is not None else None)
        if runs is None:
            runs = torch.from_numpy(np.flatnonzero(mask))
        sub_act.append(_take(actual, runs))
        sub_oracle.append(_take(ref.oracle[i], runs))
        sub_bench.append(_take(ref.bench[i], runs))
        sub_out.append(dataclasses.replace(spec, shape=(int(sub_act[-1].numel()),)))
        specs.append(i)
    if not specs:
        return True, "no output is compared", []
    sub = Reference(sub_oracle, sub_bench, sub_out)
    view = _SubTask(task, specs)
    verdict = judge_case(view, sub, sub_act, scans=sides)
    msg = f"sampled blocks ({ran} of {block_dim}): {verdict.message}"
    return bool(verdict.passed), msg, []


class _SubTask:
    """`task` seen through the compared outputs only (in order), for `judge_case`."""

    def __init__(self, task, keep: list[int]):
        self._task = task
        self.outputs = [task.outputs[i] for i in keep if i < len(task.outputs)]

    def __getattr__(self, name):
        return getattr(self._task, name)


@dataclasses.dataclass
class TimedCase:
    passed: bool
    message: str
    estimate: object | None              # the cost model's Estimate with its roofline, when passed
    diagnostics: list[Diagnostic]
    crashed: bool                        # a RUN failure (timeout, crash, memory), not wrong values
    full: bool = False                   # every block ran (asked for, or a cross-block kernel)


def timed_case(build, task, case, chip: str, inputs, ref, full: bool = False,
               scans: list | None = None) -> TimedCase:
    """Time one case and judge the same run: the sampled blocks (every block when `full`, or when
    the kernel works across blocks) on real inputs with the cost model on, their written elements
    compared with the oracle. `scans`: the reference's share of each output's scan, kept by the
    caller across candidates (`precision.ReferenceScan`), or None."""
    from copilot.backends import sim
    from copilot.chips import load_chip
    from copilot.costmodel import with_roofline
    from copilot.costmodel.estimate import case_roofline
    from copilot.oracle import judge_case

    widened = not full and crosses_blocks(build)
    full = full or widened
    run = sim.run(build, task, case, inputs, outputs=ref.outputs, chip=chip, sample_blocks=not full)
    errors = [d for d in run.diagnostics if d.is_error]
    if full:
        v = judge_case(task, ref, run.outputs, inputs=inputs, case=case, scans=scans)
        passed, message, extra = bool(v.passed), v.message, []
        if widened:
            message = f"every block (the kernel works across blocks): {message}"
    else:
        passed, message, extra = judge_sampled(task, ref, run.outputs, inputs, case, run, scans)
    diags = list(run.diagnostics) + extra
    if errors or not passed:
        ids = ", ".join(dict.fromkeys(d.id for d in errors + extra))
        return TimedCase(False, f"{message}" + (f" (errors: {ids})" if ids else ""), None, diags,
                         any(d.id.startswith("RUN.") and d.id != "RUN.INTEGRITY" for d in errors), full)
    est = run.extra.get("estimate")
    if est is not None:
        est = with_roofline(est, *case_roofline(task, case, ref.outputs, load_chip(chip)))
    return TimedCase(True, message, est, diags, False, full)
