"""`--decide prompt`: decide between rounds at an interactive prompt_toolkit prompt.

Commands: `pin ID`, `unpin ID`, `veto ID`, `edit ID` (opens $EDITOR on a copy of the candidate;
saving enters it as a human candidate), `steer TEXT`, `show ID`, `continue` (or an empty line),
`stop`, `help`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile

from copilot.evolution.engine import DecisionContext, HumanEdit, RoundDecision

HELP = ("pin ID | unpin ID | veto ID | edit ID | steer TEXT | show ID | continue (Enter) | stop | help")


def parse_command(line: str, decision: RoundDecision, known: set[str]) -> str | None:
    """Apply one command line to `decision`; returns "done" to finish, an error text, or None."""
    line = line.strip()
    if not line or line in ("c", "continue", "next"):
        decision.action = "continue"
        return "done"
    if line in ("stop", "quit", "q"):
        decision.action = "stop"
        return "done"
    word, _, rest = line.partition(" ")
    rest = rest.strip()
    if word == "steer":
        if not rest:
            return "steer needs text: steer keep rows whole in UB"
        decision.steer = rest
        return None
    if word in ("pin", "unpin", "veto", "edit", "show"):
        if rest not in known:
            return f"no candidate '{rest}' (candidates: {', '.join(sorted(known))})"
        if word == "pin":
            decision.pins.append(rest)
        elif word == "unpin":
            decision.unpins.append(rest)
        elif word == "veto":
            decision.vetoes.append(rest)
        return None
    return f"unknown command '{word}': {HELP}"


def edit_in_editor(code: str) -> str | None:
    """The edited text, or None when the editor failed or nothing changed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as fh:
        fh.write(code)
        path = fh.name
    try:
        if subprocess.call([*shlex.split(editor), path]) != 0:
            return None
        with open(path, encoding="utf-8") as fh:
            new = fh.read()
    finally:
        os.unlink(path)
    return new if new != code else None


class PromptPolicy:
    async def decide(self, ctx: DecisionContext) -> RoundDecision:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import WordCompleter

        self._show(ctx)
        known = set(ctx.population.candidates)
        decision = RoundDecision()
        session = PromptSession()
        words = ["pin", "unpin", "veto", "edit", "steer", "show", "continue", "stop", "help", *sorted(known)]
        while True:
            line = await session.prompt_async(f"round {ctx.round} > ", completer=WordCompleter(words))
            word, _, rest = line.strip().partition(" ")
            if word == "help":
                print(HELP, file=sys.stderr)
                continue
            result = parse_command(line, decision, known)
            if result == "done":
                return decision
            if result:
                print(result, file=sys.stderr)
                continue
            if word == "show":
                print(ctx.population.get(rest.strip()).code, file=sys.stderr)
            elif word == "edit":
                cid = rest.strip()
                new = edit_in_editor(ctx.population.get(cid).code)
                if new:
                    decision.edits.append(HumanEdit(new, parent_id=cid, note=f"human edit of {cid}"))
                    print(f"edit of {cid} will be evaluated as a human candidate", file=sys.stderr)
                else:
                    print("no change", file=sys.stderr)

    @staticmethod
    def _show(ctx: DecisionContext) -> None:
        print(f"\nround {ctx.round} finished; {ctx.rounds_left} round(s) left. Leaderboard (times are estimates "
              "on the sim backend):", file=sys.stderr)
        for row in ctx.leaderboard[:15]:
            t = f"{row['time_us']:.2f} us" if row["time_us"] else "-"
            marks = ("P" if row["pinned"] else " ") + ("V" if row["vetoed"] else " ")
            print(f"  {row['rank'] or '-':>3} {marks} {row['id']:<8} {row['status']:<18} {t:>12}  {row['strategy']}",
                  file=sys.stderr)
        print(f"commands: {HELP}", file=sys.stderr)
