"""A session's events as readable lines in order, with time since the session began.

Used by `cannpilot sessions replay` for teaching and review. With a speed, the pauses between
events are played back scaled (speed 10 = ten times faster), each pause capped so an idle night
does not stall the replay.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable, Iterator


def _fmt_us(v) -> str:
    return "-" if v is None else f"{v:.2f}us"


def describe(e: dict) -> str:
    """One line of what the event says."""
    k = e.get("kind")
    if k == "session_started":
        return f"task={e.get('task')} chip={e.get('chip')} backend={e.get('backend')} agent={e.get('agent')}"
    if k == "round_started":
        strategies = ", ".join(e.get("strategies") or []) or "-"
        return f"round {e.get('round')} strategies: {strategies}"
    if k == "candidate_proposed":
        c = e.get("candidate") or {}
        parents = ",".join(c.get("parent_ids") or []) or "-"
        return (f"{c.get('id')} origin={c.get('origin')} mode={c.get('agency_mode')} "
                f"strategy={c.get('strategy') or '-'} parents={parents}")
    if k == "candidate_built":
        diags = e.get("diagnostics") or []
        first = f" first={diags[0].get('id')}" if diags and isinstance(diags[0], dict) else ""
        return (f"{e.get('candidate_id')} {'built' if e.get('ok') else 'build failed'} "
                f"in {e.get('seconds', 0):.2f}s, {len(diags)} diagnostic(s){first}")
    if k == "candidate_evaluated":
        roof = e.get("roofline_fraction")
        roof_s = "" if roof is None else f" roofline={roof:.2f}"
        return (f"{e.get('candidate_id')} {e.get('status')} time={_fmt_us(e.get('time_us'))} "
                f"({e.get('timing')}) cases={len(e.get('cases') or [])}{roof_s}")
    if k == "round_finished":
        return (f"round {e.get('round')}: {e.get('passed')}/{e.get('candidates')} passed, "
                f"best {e.get('best_id') or '-'} {_fmt_us(e.get('best_time_us'))}")
    if k == "decision_needed":
        return f"round {e.get('round')}: waiting for a decision ({len(e.get('leaderboard') or [])} on the board)"
    if k == "decision_made":
        parts = [f"round {e.get('round')}: {e.get('action')}"]
        for key in ("pins", "vetoes", "edits"):
            if e.get(key):
                parts.append(f"{key}={','.join(e[key])}")
        if e.get("steer"):
            parts.append(f"steer={e['steer']!r}")
        return " ".join(parts)
    if k == "llm_call":
        status = "ok" if e.get("ok", True) else f"error: {e.get('error')}"
        return (f"{e.get('model')} {e.get('role')}/{e.get('phase')} "
                f"{e.get('prompt_tokens')}+{e.get('completion_tokens')} tok "
                f"${e.get('cost_usd', 0):.4f} {e.get('latency_s', 0):.1f}s {status}")
    if k == "knowledge_slice_used":
        ids = ",".join(str(c.get("id")) for c in e.get("cards") or [] if isinstance(c, dict))
        return f"round {e.get('round')} {e.get('phase')}: {e.get('total_tokens')} tok [{ids}]"
    if k == "session_finished":
        return f"{e.get('status')} best={e.get('best_id') or '-'} {e.get('reason') or ''}".rstrip()
    if k == "session_resumed":
        return "resumed"
    return ", ".join(f"{key}={v}" for key, v in e.items() if key not in ("kind", "session", "at", "seq"))


def replay_lines(events: Iterable[dict], speed: float | None = None, max_pause: float = 2.0,
                 sleep: Callable[[float], None] = time.sleep) -> Iterator[str]:
    """`+SECONDS  #SEQ  KIND  what` per event; pauses between them when `speed` is given."""
    start = prev = None
    for e in events:
        at = float(e.get("at") or 0.0)
        if start is None:
            start = prev = at
        if speed:
            pause = min(max(at - prev, 0.0) / speed, max_pause)
            if pause > 0:
                sleep(pause)
        prev = at
        yield f"{f'+{at - start:.3f}s':>12}  #{e.get('seq', '-'):<6} {e.get('kind', '?'):<21} {describe(e)}"
