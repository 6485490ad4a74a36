"""`cannpilot tasks [ls | show T] [--json]`: the built-in suite and any task in the public layout."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="list built-in tasks or show one task",
                       description="List the built-in operator tasks, or show one task "
                                   "(a built-in name, a task directory or a KernelBench .py file). "
                                   "A task directory's golden.py is Python run with your rights, "
                                   "not sandboxed: use task directories you trust.")
    p.add_argument("action", nargs="?", choices=("ls", "show", "new"), default="ls")
    p.add_argument("task", nargs="?", help="task for `show`; the new task's directory for `new`")
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
    from copilot.tasks import builtin_tasks, load_task

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
    if not args.task:
        raise BadInput("`tasks show` needs a task: a built-in name, a task directory or a .py file")
    task = load_task(args.task)
    from copilot.oracle import smoke_golden

    smoke_golden(task)
    if args.json:
        json.dump(_detail(task), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    _print_detail(task)
    return 0


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
    draft = asyncio.run(draft_task(open_client(model), args.describe, Path(args.task)))
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


def _print_detail(task) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from copilot.tasks.model import shapes_text

    con = Console()
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
