"""`cannpilot emulator apis [--json] [--chip A2|950] [--status S]`: which AscendC APIs the sim
backend emulates, per family of the reference's vector API list, with forms and dtypes per chip.

The JSON (`{"apis": [{name, family, section, chips, status, forms, dtypes, header}], "families":
{chip: {family: counts}}, "extra_emulated": [...]}`) is the contract a checker reads; status is
emulated | declared (a stub that reports L4.API_UNKNOWN) | missing.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("emulator", help="what the sim backend's AscendC emulator implements",
                       description="List the AscendC APIs of the reference's vector families and whether "
                                   "the sim backend emulates them (derived from the emulator headers).")
    p.add_argument("action", choices=("apis",), help="`apis`: the API list with status, forms and dtypes")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.add_argument("--chip", choices=("A2", "950"), default="A2",
                   help="count and list the names this chip supports (default A2)")
    p.add_argument("--status", choices=("emulated", "declared", "missing"), help="list only this status")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from copilot.backends.sim.api_registry import registry

    reg = registry()
    if args.json:
        doc = reg.to_json()
        if args.status:
            doc["apis"] = [a for a in doc["apis"] if a["status"] == args.status]
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0

    from rich.console import Console
    from rich.table import Table

    con = Console()
    rows = [e for e in reg.entries if e.chips.get(args.chip) and (not args.status or e.status == args.status)]
    table = Table(title=f"AscendC vector APIs supported on {args.chip} (reference list) and the emulator")
    for col in ("family", "name", "section", "status", "forms", f"dtypes ({args.chip})"):
        table.add_column(col, overflow="fold")
    style = {"emulated": "green", "declared": "yellow", "missing": "red"}
    for e in rows:
        dts = ", ".join((e.dtypes or {}).get(args.chip, [])) if e.dtypes else ""
        table.add_row(e.family, e.name, e.section, f"[{style[e.status]}]{e.status}[/]", ", ".join(e.forms), dts)
    con.print(table)
    summary = Table(title=f"per family ({args.chip})")
    for col in ("family", "supported", "emulated", "declared", "missing", "emulated %"):
        summary.add_column(col)
    for fam, c in reg.per_family(args.chip).items():
        pct = 100.0 * c["emulated"] / c["supported"] if c["supported"] else 0.0
        summary.add_row(fam, str(c["supported"]), str(c["emulated"]), str(c["declared"]), str(c["missing"]),
                        f"{pct:.0f}")
    con.print(summary)
    return 0
