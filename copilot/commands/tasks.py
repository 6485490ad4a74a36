"""`cannpilot tasks [ls | show T] [--json]`: the built-in suite and any task in the public layout."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="list built-in tasks or show one task",
                       description="List the built-in operator tasks, or show one task "
                                   "(a built-in name, a task directory or a KernelBench .py file). "
                                   "A task directory's golden.py is Python run with your rights, "
                                   "not sandboxed: use task directories you trust.")
    p.add_argument("action", nargs="?", choices=("ls", "show", "check", "new"), default="ls")
    p.add_argument("task", nargs="*", help="task for `show`; tasks or suite directories for `check` "
                                           "(a directory of level*/ task directories counts as its tasks); "
                                           "the new task's directory for `new`")
    p.add_argument("--describe", help="`new`: the operator in words; an LLM drafts its golden and cases")
    p.add_argument("--agent", help="`new`: the model (name or alias in settings.yaml) that drafts the task")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def _summary(task) -> dict:
    return {
        "name": task.name,
        "category": task.category,
        "path": str(task.path),
        "inputs": [i.name for i in task.inputs],
        "dtypes": task.dtypes,
        "cases": len(task.cases),
    }


def run(args: argparse.Namespace) -> int:
    from copilot.errors import BadInput

    if args.action == "check":
        return _check(args)
    if args.action in ("show", "new"):
        if len(args.task) > 1:
            raise BadInput(f"`tasks {args.action}` takes one task, got {len(args.task)}: {' '.join(args.task)}")
        args.task = args.task[0] if args.task else None
    if args.action == "show" and args.task:
        key = _show_key(args)
        hit = _show_cache(key)
        if hit is not None:            # the same task files, flags and code: the same output
            sys.stdout.write(hit)
            return 0
        out = _show(args)
        _show_cache(key, out)
        sys.stdout.write(out)
        return 0
    from copilot.tasks import builtin_tasks

    if args.action == "ls":
        if args.task:
            raise BadInput("`tasks ls` takes no task; use `cannpilot tasks show T`")
        tasks = builtin_tasks()
        if args.json:
            json.dump([_summary(t) for t in tasks], sys.stdout, indent=2)
            sys.stdout.write("\n")
            return 0
        _print_table(tasks)
        return 0
    if args.action == "new":
        return _new(args)
    raise BadInput("`tasks show` needs a task: a built-in name, a task directory or a .py file")


# Code whose change changes what `tasks show` prints.
_SHOW_CODE = ("copilot/commands/tasks.py", "copilot/tasks/loader.py", "copilot/tasks/model.py",
              "copilot/oracle/golden.py", "copilot/oracle/inputs.py", "copilot/dtypes.py")


def _show_key(args) -> str | None:
    """A digest of everything `tasks show` reads (task files, the code above, the flags, the
    terminal width), or None when the task is not a path we can hash (then no cache)."""
    import hashlib
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    path = Path(args.task).expanduser()
    if not path.exists() and "/" not in args.task:
        path = repo / "bench" / "ops" / args.task
    if path.is_dir():
        files = sorted(f for f in path.iterdir() if f.is_file() and f.suffix in (".yaml", ".csv", ".py", ".md"))
    elif path.is_file():
        files = [path]
    else:
        return None
    h = hashlib.sha256(f"{path.resolve()}|{args.json}|{shutil.get_terminal_size().columns}|"
                       f"{sys.stdout.isatty()}".encode())
    try:
        for f in [*files, *(repo / c for c in _SHOW_CODE)]:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    except OSError:
        return None
    return h.hexdigest()[:32]


def _show_cache(key: str | None, text: str | None = None) -> str | None:
    """Read (text=None) or write the cached output of `tasks show` for `key`."""
    if not key:
        return None
    from pathlib import Path

    import platformdirs

    # copilot.config.cache_dir(), without importing the settings model (pydantic, litellm's
    # model table): a warm `tasks show` is mostly interpreter start-up.
    root = os.environ.get("CANNPILOT_CACHE_DIR") or platformdirs.user_cache_dir("cannpilot", appauthor=False)
    path = Path(root).expanduser() / "tasks-show" / f"{key}.txt"
    try:
        if text is None:
            return path.read_text(encoding="utf-8") if path.is_file() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return None


def _show(args) -> str:
    """Load the task, run its golden's shape check on every case, render it."""
    import io

    from copilot.errors import BadInput
    from copilot.tasks import load_task

    task = load_task(args.task)
    from copilot.oracle import smoke_golden
    from copilot.oracle.golden import check_shapes

    checks = [check_shapes(task, c) for c in task.cases]
    bad = [c for c in checks if c.ok is False]
    if bad:
        also = f"; also cases {', '.join(c.case_id for c in bad[1:])}" if len(bad) > 1 else ""
        raise BadInput(f"{task.path / 'golden.py'} (case {bad[0].case_id}): golden raised {bad[0].detail} "
                       f"(shapes and attrs of {len(bad)} of {len(task.cases)} cases, on meta tensors{also})")
    if any(c.ok is None for c in checks):     # shapes only known from values: run the smallest
        smoke_golden(task, [task.case(c.case_id) for c in checks if c.ok is None])
    if args.json:
        return json.dumps({**_detail(task), "golden_check": [c.__dict__ for c in checks]}, indent=2) + "\n"
    buf = io.StringIO()
    _print_detail(task, buf)
    return buf.getvalue()


def _task_dirs(refs: list[str]) -> list[str]:
    """Task references; a suite directory (level*/<task>/ below it, or task directories right
    below it) stands for its tasks."""
    from pathlib import Path

    out = []
    for ref in refs:
        p = Path(ref)
        if p.is_dir() and not (p / "proto.yaml").exists():
            found = sorted(d for d in p.glob("level*/*") if (d / "proto.yaml").is_file()) or \
                sorted(d for d in p.iterdir() if (d / "proto.yaml").is_file())
            out += [str(d) for d in found] or [ref]
        else:
            out.append(ref)
    return out


def _check(args) -> int:
    """Load every task and run its golden (fp64 oracle and same-precision run) on every case,
    within the oracle's memory budget: a case over it is reported with its size, not run."""
    import time

    from copilot.commands.bench_cannbench import Progress
    from copilot.errors import BadInput
    from copilot.oracle import CaseTooLarge, estimate_bytes, make_inputs, oracle_budget_bytes, reference
    from copilot.oracle.golden import memory_ceiling
    from copilot.tasks import load_task

    refs = _task_dirs(args.task)
    if not refs:
        raise BadInput("`tasks check` needs tasks or suite directories, e.g. ../shared/cannbench/tasks")
    budget = oracle_budget_bytes()
    progress = Progress(len(refs))
    rows = []
    for ref in refs:
        row = {"task": ref, "loaded": False, "cases": 0, "golden_ran": 0, "over_budget": [], "failed": [],
               "seconds": {}}
        rows.append(row)
        progress.show(f"{ref}: loading")
        try:
            task = load_task(ref)
        except BadInput as exc:
            row["error"] = str(exc)
            progress.finish(f"{ref}: does not load: {exc}")
            continue
        row.update(task=task.name, path=str(task.path), loaded=True, cases=len(task.cases))
        for i, case in enumerate(task.cases, 1):
            progress.show(f"{task.name}: case {case.id} ({i}/{len(task.cases)}, {case.total_numel} elements)")
            need = estimate_bytes(case)
            if need > budget:           # before drawing its inputs: they alone may not fit
                row["over_budget"].append({"case": case.id, "bytes": need, "elements": case.total_numel,
                                           "why": "estimate"})
                continue
            t0 = time.perf_counter()
            try:
                with memory_ceiling():
                    reference(task, case, make_inputs(task, case))
                row["golden_ran"] += 1
            except (CaseTooLarge, MemoryError) as exc:
                row["over_budget"].append({"case": case.id, "bytes": need, "elements": case.total_numel,
                                           "why": str(exc) or "out of memory"})
            except BadInput as exc:
                row["failed"].append({"case": case.id, "error": str(exc)})
            row["seconds"][case.id] = round(time.perf_counter() - t0, 2)
        over = f", {len(row['over_budget'])} over the oracle budget" if row["over_budget"] else ""
        fail = f", {len(row['failed'])} raised (case {row['failed'][0]['case']})" if row["failed"] else ""
        progress.finish(f"{task.name}: golden ran on {row['golden_ran']}/{len(task.cases)} cases{over}{fail}")
    ok = all(r["loaded"] and not r["failed"] for r in rows)
    if args.json:
        json.dump({"tasks": rows, "loaded": sum(r["loaded"] for r in rows), "total": len(rows),
                   "cases": sum(r["cases"] for r in rows), "golden_ran": sum(r["golden_ran"] for r in rows),
                   "over_budget": sum(len(r["over_budget"]) for r in rows), "budget_bytes": budget},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in rows:
            for f in r["failed"]:
                print(f"{r['task']} case {f['case']}: {f['error']}")
            for o in r["over_budget"]:
                print(f"{r['task']} case {o['case']}: over the oracle budget of {budget / 2**30:.1f} GiB "
                      f"({o['elements']} elements, ~{o['bytes'] / 2**30:.1f} GiB)")
        print(f"{sum(r['loaded'] for r in rows)}/{len(rows)} tasks load; golden ran on "
              f"{sum(r['golden_ran'] for r in rows)}/{sum(r['cases'] for r in rows)} cases, "
              f"{sum(len(r['over_budget']) for r in rows)} over the oracle budget")
    return 0 if ok else 1


def _new(args) -> int:
    """Draft a task from a description with an LLM, show it, and keep it only if confirmed."""
    import asyncio
    import shutil
    from pathlib import Path

    from copilot.agents.taskwriter import draft_task
    from copilot.config import load_settings
    from copilot.errors import BadInput
    from copilot.llm import open_client
    from copilot.tasks import load_task

    if not args.task or not args.describe:
        raise BadInput("`tasks new DIR --describe TEXT --agent MODEL`: a directory for the task and "
                       "its description are needed")
    model = load_settings().resolve_model(args.agent)
    if model is None:
        raise BadInput("`tasks new` needs an LLM: pass --agent MODEL (a model of settings.yaml)")
    async def drafted():
        client = open_client(model)
        try:
            return await draft_task(client, args.describe, Path(args.task))
        finally:
            await client.aclose()        # its HTTP sessions belong to this loop

    draft = asyncio.run(drafted())
    task = load_task(draft.path)
    if args.json:
        json.dump({**_detail(task), "attempts": draft.attempts}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    _print_detail(task)
    if sys.stdin.isatty():
        from prompt_toolkit.shortcuts import confirm

        if not confirm(f"Keep this task in {draft.path}? "):
            shutil.rmtree(draft.path)
            print("discarded", file=sys.stderr)
            return 1
    print(f"drafted in {draft.path} after {draft.attempts} attempt(s); review it, then "
          f"`cannpilot run --task {draft.path}`", file=sys.stderr)
    return 0


def _detail(task) -> dict:
    d = _summary(task)
    d.update({
        "op_name": task.op_name,
        "kind": task.kind,
        "difficulty": task.difficulty,
        "formula": task.formula,
        "description": task.description,
        "outputs": [o.name for o in task.outputs],
        "attrs": [{"name": a.name, "type": a.type, "default": a.default} for a in task.attrs],
        "inputs_detail": [{"name": i.name, "dtypes": list(i.dtypes), "optional": i.optional,
                           "tensor_list": i.is_list} for i in task.inputs],
        "case_list": [{"id": c.id, "shapes": [_shape_json(s) for s in c.shapes], "dtypes": c.dtypes,
                       "attrs": c.attrs, "quick": c.is_quick, "note": c.note} for c in task.cases],
    })
    return d


def _shape_json(shape):
    """A tensor's dims, null for an omitted input, a list of dims for a tensor list."""
    if shape is None:
        return None
    if isinstance(shape, list):
        return [list(e) for e in shape]
    return list(shape)


def _print_table(tasks) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(tasks)} built-in tasks", show_lines=False)
    for col in ("name", "category", "inputs", "dtypes", "cases"):
        table.add_column(col, justify="right" if col == "cases" else "left")
    for t in tasks:
        table.add_row(t.name, t.category, ", ".join(i.name for i in t.inputs),
                      ", ".join(t.dtypes), str(len(t.cases)))
    Console().print(table)


def _print_detail(task, file=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from copilot.tasks.model import shapes_text

    con = Console(file=file, force_terminal=sys.stdout.isatty() if file is not None else None,
                  width=shutil.get_terminal_size().columns if file is not None else None)
    con.print(f"[bold]{task.name}[/bold]  ({task.op_name}, {task.category}"
              f"{', ' + task.difficulty if task.difficulty else ''})  {task.path}")
    if task.formula:
        con.print(f"\n[bold]formula[/bold]\n{task.formula}")
    if task.description:
        con.print(f"\n{task.description}")
    con.print("\n[bold]inputs[/bold]  " + "; ".join(
        f"{i.name}{'[]' if i.is_list else ''}{'?' if i.optional else ''}: {'|'.join(i.dtypes)}"
        for i in task.inputs))
    con.print("[bold]outputs[/bold] " + "; ".join(f"{o.name}: {'|'.join(o.dtypes)}" for o in task.outputs))
    if task.attrs:
        con.print("[bold]attrs[/bold]   " + "; ".join(f"{a.name}: {a.type} = {a.default!r}" for a in task.attrs))
    table = Table(title="cases (q = quick tier)")
    for col in ("id", "shapes", "dtypes", "attrs", "range", "note"):
        table.add_column(col)
    for c in task.cases:
        shapes = shapes_text(c.shapes)
        ranges = ", ".join(f"[{lo:g},{hi:g}]" for lo, hi in dict.fromkeys(c.value_ranges))
        attrs = ", ".join(f"{k}={v}" for k, v in c.attrs.items())
        table.add_row(c.id + (" q" if c.is_quick else ""), escape(shapes),
                      "/".join(dict.fromkeys(d for d in c.dtypes if d)), escape(attrs), escape(ranges), escape(c.note))
    con.print(table)
