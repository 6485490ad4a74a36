"""`cannpilot check KERNEL --task T [--chip C] [--cases quick|all|ID,...] [--json]`.

Builds the kernel with the sim backend, runs the selected cases in the sandbox, judges them against
the oracle. Exit 0 when it compiled and every case is correct, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from copilot.costmodel import format_band, format_estimate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="build and run an AscendC kernel on the CPU emulator and judge it",
                       description="Build KERNEL (one AscendC source file) with the sim backend, run the "
                                   "task's cases on the CPU emulator, and report every rule breach with "
                                   "its constraint id and source line.")
    p.add_argument("kernel", metavar="KERNEL", help="the candidate .cpp file")
    p.add_argument("--task", required=True, help="built-in task name, task directory or KernelBench .py")
    p.add_argument("--chip", default="910B2", help="chip profile (see `cannpilot chips`; default 910B2)")
    p.add_argument("--cases", default="quick", help="quick | all | perf | case ids like 1,3 (default quick)")
    p.add_argument("--timeout", type=float, default=None, help="wall-clock seconds per case (default: 60 s plus 2 µs per input and output element, times the host's load per core, 1 to 8)")
    p.add_argument("--backend", choices=("sim", "npu", "both"), default="sim",
                   help="sim: the CPU emulator (times are estimates); npu: CANN + torch_npu on the chip "
                        "(times measured); both: side by side, estimate and measured per case")
    p.add_argument("--soc", default=None, help="npu: the SoC to build for (default: the device's)")
    p.add_argument("--calibration-out", metavar="CSV", default=None,
                   help="both: write estimate/measured per case in the calibration file's format")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from copilot.backends.sim import check_kernel

    progress = (lambda msg: print(f"cannpilot check: {msg}", file=sys.stderr, flush=True))
    backend = getattr(args, "backend", "sim")
    if backend != "sim":
        return _run_npu(args, backend, progress)
    report = check_kernel(args.kernel, args.task, chip=args.chip, cases=args.cases,
                          timeout=args.timeout, progress=progress)
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from copilot.scoring import task_baselines

        render(report, baselines=task_baselines(args.task, report.chip))
    return 0 if report.compiled and report.correct else 1


def _fmt(x) -> str:
    if x is None:
        return "-"
    try:
        return f"{x:.3g}"
    except (TypeError, ValueError):
        return str(x)


def _pipe_timeline(con, report, baselines: dict | None = None) -> None:
    """Per timed case: how busy each pipe was on the slowest core, as bars against the kernel time;
    for a CANN-Bench task, the vendor's measured time and whether the band allows a verdict."""
    from copilot.scoring import vendor_verdict

    timed = [c for c in report.cases if c.estimate is not None]
    if not timed:
        return
    con.print("\n[bold]pipe timeline[/] (slowest core; estimate)")
    for c in timed[-4:]:
        e = c.estimate
        con.print(f"  case {c.id}: {format_estimate(e.time_us, e.band)}, t_hw {e.t_hw_us:.2f} µs, bound by {e.bottleneck}")
        base = (baselines or {}).get(str(c.id))
        if base is not None:
            verdict = vendor_verdict(e.time_us, e.band, base.baseline_us)
            con.print(f"    vendor {base.baseline_us:.2f} µs measured: "
                      + (f"{verdict} than the vendor, band allowing" if verdict != "within the band"
                         else "no verdict (the vendor's time is within the band)"))
        rows = [(p, e.pipes_us.get(p, 0.0)) for p in ("MTE2", "V", "MTE3", "S")] + [("HBM", e.hbm_us)]
        for pipe, busy in rows:
            n = min(40, int(round(40 * busy / e.time_us))) if e.time_us else 0
            note = "  (this core's traffic through its share of chip bandwidth)" if pipe == "HBM" else ""
            con.print(f"    {pipe:<4} {'█' * n}{'·' * (40 - n)} {busy:8.2f} µs{note}")
    s = report.summary()
    if s["geomean_est_us"]:
        roof = f", roofline {s['geomean_roofline_fraction']:.0%}" if s["geomean_roofline_fraction"] else ""
        con.print(f"  geometric mean over {s['timed_cases']} timed case(s): "
                  f"{format_estimate(s['geomean_est_us'], s.get('est_band'))}{roof}")


def render(report, console=None, baselines: dict | None = None) -> None:
    """The readable report: each diagnostic at its source line, then the per-case table."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = console or Console()
    verdict = ("[bold green]correct[/]" if report.correct else
               "[bold red]did not compile[/]" if not report.compiled else "[bold red]not correct[/]")
    con.print(f"[bold]{escape(report.kernel)}[/] on task [bold]{escape(report.task)}[/], chip "
              f"{escape(report.chip)} ({report.backend}): {verdict}")
    lines = report.source_lines
    for d in report.diagnostics:
        color = {"error": "red", "warning": "yellow"}.get(d.severity, "cyan")
        where = f"line {d.line}" if d.line else "no line"
        con.print(f"\n[{color}]{d.severity}[/] [bold]{escape(d.id)}[/] ({where}): {escape(d.message)}")
        if d.line and 0 < d.line <= len(lines):
            text = lines[d.line - 1].expandtabs(4)
            stripped = text.lstrip()
            indent = len(text) - len(stripped)
            gutter = f"{d.line:>5} | "
            con.print(escape(gutter + text), highlight=False)
            con.print(" " * (len(gutter) + indent) + f"[{color}]" + "^" * max(1, min(len(stripped), 60)) + "[/]")
        if d.hint:
            con.print(f"  [dim]hint: {escape(d.hint)}[/]")
    if not report.compiled and report.raw_output and not report.diagnostics:
        con.print(escape(report.raw_output[-3000:]))
    if report.cases:
        table = Table(title="cases (times are cost-model ESTIMATES, not measurements)", title_justify="left")
        for col in ("case", "result", "MERE", "MARE", "est. µs", "band", "roofline", "bound by", "failure", "message"):
            table.add_column(col, overflow="fold")
        for c in report.cases:
            e = c.estimate
            result = "[cyan]timed[/]" if c.passed is None else "[green]pass[/]" if c.passed else "[red]FAIL[/]"
            table.add_row(c.id, result, _fmt(c.mere), _fmt(c.mare), _fmt(e.time_us) if e else "-",
                          format_band(e.band) if e and e.band is not None else "-",
                          f"{e.roofline_fraction:.0%}" if e and e.roofline_fraction else "-",
                          e.bottleneck if e else "-", escape(c.failure_class or ""), escape(c.message[:120]))
        con.print()
        con.print(table)
        _pipe_timeline(con, report, baselines)
    con.print(f"[dim]build {report.build_seconds:.2f} s{' (cached)' if report.build_cached else ''}, "
              f"emulation {report.run_seconds:.2f} s[/]")


def _run_npu(args, backend: str, progress) -> int:
    """--backend npu | both (docs/npu-backend.md)."""
    from copilot.backends.npu.compare import npu_config_for_cli, side_by_side, write_calibration
    from copilot.backends.npu.runner import check_kernel as npu_check
    from copilot.tasks import load_task

    task = load_task(args.task)
    cfg = npu_config_for_cli(args.soc)
    npu = npu_check(args.kernel, task, chip=args.chip, cases=args.cases, config=cfg, progress=progress)
    if backend == "npu":
        if args.json:
            json.dump(npu.to_json(), sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            print(f"{args.kernel} on {task.name} (npu, {cfg.soc}): "
                  + ("correct" if npu.correct else "did not compile" if not npu.compiled else "NOT correct"))
            for d in npu.diagnostics:
                print(f"  {d.severity} {d.id}" + (f" (line {d.line})" if d.line else "") + f": {d.message}")
            for c in npu.cases:
                meas = f"{c.measured_us:.2f} us meas." if getattr(c, "measured_us", None) else "-"
                print(f"  case {c.id}: {'pass' if c.passed else 'FAIL'}  {meas}  {c.message[:100]}")
        return 0 if npu.compiled and npu.correct else 1
    from copilot.backends.sim import check_kernel

    sim = check_kernel(args.kernel, task, chip=args.chip, cases=args.cases, timeout=args.timeout, progress=progress)
    rows = side_by_side(sim, npu)
    if args.calibration_out:
        from pathlib import Path

        write_calibration(Path(args.calibration_out), task, args.chip, rows)
    if args.json:
        json.dump({"sim": sim.to_json(), "npu": npu.to_json(), "cases": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"{args.kernel} on {task.name}: sim {'correct' if sim.correct else 'NOT correct'}, "
              f"npu {'correct' if npu.correct else 'NOT correct'}")
        print(f"{'case':>6} {'est. us (sim)':>14} {'meas. us (npu)':>15} {'est/meas':>9}")
        for r in rows:
            f = (lambda x, p=2: "-" if x is None else f"{x:.{p}f}")
            print(f"{r['case']:>6} {f(r['est_us']):>14} {f(r['measured_us']):>15} {f(r['ratio_est_over_measured'], 3):>9}")
    ok = sim.compiled and sim.correct and npu.compiled and npu.correct
    return 0 if ok else 1
