"""`cannpilot chips [ls | show C] [--json]`: the chip profiles the sim backend checks against."""

from __future__ import annotations

import argparse
import json
import sys

_COLUMNS = ("arch", "vector_cores", "cube_cores", "ub_bytes", "max_buffers", "max_queue_buffers")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chips", help="list chip profiles or show one with its sources",
                       description="List the chip profiles (numbers the emulator checks against), or "
                                   "show one chip with the source of every number.")
    p.add_argument("action", nargs="?", choices=("ls", "show"), default="ls")
    p.add_argument("chip", nargs="?", help="chip for `show`, e.g. 910B2")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from copilot.chips import list_chips, load_chip
    from copilot.errors import BadInput

    if args.action == "show" or args.chip:
        if not args.chip:
            raise BadInput("`chips show` needs a chip name, e.g. `cannpilot chips show 910B2`")
        chip = load_chip(args.chip)
        from copilot.costmodel import cost_params

        params = cost_params(chip.name)
        cost = {k: {"value": v, "source": params.sources.get(k, ""),
                    "provisional": params.sources.get(k, "").startswith("provisional")}
                for k, v in vars(params).items() if k != "sources"}
        if args.json:
            json.dump({**chip.to_json(), "cost": cost}, sys.stdout, indent=2)
            sys.stdout.write("\n")
            return 0
        con = Console()
        con.print(f"[bold]{chip.name}[/]  soc {chip.soc_version} ({chip.short_soc_version})")
        table = Table()
        for col in ("number", "value", "source"):
            table.add_column(col, overflow="fold")
        for key, entry in chip.to_json().items():
            if isinstance(entry, dict):
                style = "yellow" if entry["provisional"] else ""
                table.add_row(key, str(entry["value"]), f"[{style}]{escape(entry['source'])}[/]" if style
                              else escape(entry["source"]))
        for key, entry in cost.items():
            style = "yellow" if entry["provisional"] else ""
            table.add_row(f"cost.{key}", str(entry["value"]), f"[{style}]{escape(entry['source'])}[/]" if style
                          else escape(entry["source"]))
        con.print(table)
        con.print("[dim]cost.* feed the sim backend's time ESTIMATES (docs/cost-model.md)[/]")
        return 0
    chips = [load_chip(n) for n in list_chips()]
    if args.json:
        json.dump([c.to_json() for c in chips], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    con = Console()
    table = Table(title="chip profiles (yellow = provisional)", title_justify="left")
    table.add_column("chip")
    table.add_column("soc")
    for col in _COLUMNS:
        table.add_column(col, justify="right")
    for c in chips:
        table.add_row(c.name, c.soc_version, *[f"[yellow]{getattr(c, k)}[/]" if c.provisional(k)
                                               else str(getattr(c, k)) for k in _COLUMNS])
    con.print(table)
    return 0
