"""Export of one session to a directory a reviewer can read without Cannpilot.

Writes `report.md` (leaderboard, best kernel and its diff from the baseline, per-round figures,
decisions, token and cost totals), `session.json` (every stored row and event), `kernels/<id>.cpp`
for every passing candidate, `best.cpp` and `best.diff`. Every file goes through the secret guard
(credential-looking strings become [REDACTED]) and is written atomically.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sessions.secret_guard import SecretGuard


@dataclass
class ExportResult:
    directory: Path
    files: list[Path] = field(default_factory=list)
    best_id: str | None = None
    redactions: int = 0              # files in which a credential-looking string was replaced


def _when(at: float | None) -> str:
    if at is None:
        return "-"
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _num(v, fmt: str = "{:.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def _cell(text) -> str:
    return str(text if text not in (None, "") else "-").replace("|", "\\|").replace("\n", " ")


def _safe_name(cid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", cid)


def baseline_of(candidates: list[dict]) -> dict | None:
    """The round-1 lowering candidate (else the first lowering one, else the first one)."""
    for test in (lambda c: c["round"] == 1 and c["origin"] == "lowering",
                 lambda c: c["origin"] == "lowering", lambda c: True):
        found = next((c for c in candidates if test(c)), None)
        if found:
            return found
    return None


def leaderboard(candidates: list[dict], hap: dict[str, float] | None = None) -> list[dict]:
    """Passing candidates with a time, best first (vetoed ones included, flagged): by mean HAP where
    `hap` has the candidate's (a task with CANN-Bench baselines, `candidate_haps`), as the engine
    ranks them, those without one after them; else fastest first."""
    hap = hap or {}
    ok = [c for c in candidates if c["status"] == "passed" and c["time_us"] is not None]
    return sorted(ok, key=lambda c: ((0, -hap[c["id"]]) if c["id"] in hap else (1, 0.0), c["time_us"], c["seq"]))


def best_of(candidates: list[dict], hap: dict[str, float] | None = None) -> dict | None:
    return next((c for c in leaderboard(candidates, hap) if not c["vetoed"]), None)


def candidate_haps(session: dict, candidates: list[dict], cases: dict[str, list[dict]]) -> dict[str, float]:
    """Candidate id -> its mean HAP (an estimate on sim) over the performance cases of its latest
    evaluation (`cases`: `SessionState.cases`), for a session whose task has CANN-Bench baselines on
    its chip; {} otherwise (the task is not a CANN-Bench one, or its folder moved): rank by time."""
    from copilot.scoring import candidate_hap, task_baselines

    baselines = task_baselines(session.get("task_path"), session["chip"])
    if not baselines:
        return {}
    haps = {c["id"]: candidate_hap(cases.get(c["id"], []), baselines) for c in candidates if c["status"] == "passed"}
    return {cid: h for cid, h in haps.items() if h is not None}


def timed_text(c: dict) -> str:
    """`2 of 3`: how many of the candidate's performance cases its time is over ('-' before any)."""
    k_n = c.get("perf_timed")
    return f"{k_n[0]} of {k_n[1]}" if k_n else "-"


def not_timed(record: dict, cid: str) -> list[tuple[str, str]]:
    """(case id, why) for each performance case of the candidate's latest evaluation without a time."""
    return [(e["case_id"], e["metrics"]["not_timed"]) for e in record.get("evaluations", [])
            if e["candidate_id"] == cid and (e.get("metrics") or {}).get("not_timed")]


def unified_diff(base: dict, best: dict) -> str:
    return "".join(difflib.unified_diff(base["code"].splitlines(keepends=True),
                                        best["code"].splitlines(keepends=True),
                                        fromfile=f"{base['id']}.cpp (baseline)",
                                        tofile=f"{best['id']}.cpp (best)"))


def ranking_note(session: dict, by_hap: bool) -> str:
    """How a leaderboard of the session is ordered, in one line."""
    if not by_hap:
        return "Ranked by time (the geometric mean over the performance cases), fastest first."
    est = " (cost-model estimates)" if session.get("backend", "sim") == "sim" else ""
    return (f"Ranked by mean HAP over the performance cases against CANN-Bench's {session['chip']} "
            f"baselines{est}, as the engine ranks them; then by time.")


def render_report(record: dict, hap: dict[str, float] | None = None) -> str:
    """`hap`: `candidate_haps` of the session, to rank as the engine did (else by time)."""
    s = record["session"]
    cands = record["candidates"]
    hap = hap or {}
    board = leaderboard(cands, hap)
    base, best = baseline_of(cands), best_of(cands, hap)
    base_time = base["time_us"] if base and base["status"] == "passed" else None
    out = [f"# Session `{s['name']}`", ""]
    meta = [("task", s["task"]), ("task path", s["task_path"]), ("chip", s["chip"]),
            ("backend", s["backend"]), ("agent", s["agent"]), ("status", s["status"]),
            ("reason", s["reason"]), ("created", _when(s["created_at"])),
            ("updated", _when(s["updated_at"])), ("rounds completed", s["last_round"])]
    out += ["| field | value |", "|---|---|"] + [f"| {k} | {_cell(v)} |" for k, v in meta] + [""]
    if s["settings"]:
        out += ["Settings:", "", "```json", json.dumps(s["settings"], indent=2, sort_keys=True), "```",
                ""]

    evaluated = [c for c in cands if c["eval_count"]]
    out += ["## Totals", "",
            "| candidates | evaluated | passed | LLM calls | prompt tokens | completion tokens | cost (USD) |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            f"| {len(cands)} | {len(evaluated)} | {sum(c['status'] == 'passed' for c in cands)} | "
            f"{s['llm_calls']} | {s['prompt_tokens']} | {s['completion_tokens']} | {s['cost_usd']:.4f} |", ""]
    if record["llm_by_model"]:
        out += ["| model | calls | prompt tokens | completion tokens | cost (USD) |",
                "|---|---:|---:|---:|---:|"]
        out += [f"| {_cell(m['model'])} | {m['calls']} | {m['prompt_tokens']} | {m['completion_tokens']} | "
                f"{m['cost_usd']:.4f} |" for m in record["llm_by_model"]]
        out.append("")

    out += ["## Leaderboard", ""]
    if board:
        hap_head, hap_rule = ("HAP | ", "---:|") if hap else ("", "")
        out += [ranking_note(s, bool(hap)), "",
                f"| # | id | round | origin | strategy | {hap_head}time (us) | timing | perf cases timed | "
                "speedup vs baseline | roofline | flags |", f"|---:|---|---:|---|---|{hap_rule}---:|---|---:|---:|---:|---|"]
        for i, c in enumerate(board, 1):
            speedup = base_time / c["time_us"] if base_time and c["time_us"] else None
            flags = " ".join(f for f, on in (("pinned", c["pinned"]), ("vetoed", c["vetoed"])) if on)
            hap_cell = f"{_num(hap.get(c['id']))} | " if hap else ""
            out.append(f"| {i} | {c['id']} | {c['round']} | {c['origin']} | {_cell(c['strategy'])} | "
                       f"{hap_cell}{c['time_us']:.2f} | {c['timing']} | {timed_text(c)} | {_num(speedup, '{:.2f}x')} | "
                       f"{_num(c['roofline_fraction'])} | {_cell(flags)} |")
    else:
        out.append("No candidate passed.")
    failed = [c for c in cands if c["status"] != "passed"]
    if failed:
        counts: dict[str, int] = {}
        for c in failed:
            counts[c["status"]] = counts.get(c["status"], 0) + 1
        out += ["", "Not passing: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))]
    out.append("")

    out += ["## Best kernel", ""]
    if best:
        speedup = base_time / best["time_us"] if base_time else None
        out += [f"`{best['id']}` (round {best['round']}, {best['origin']}, strategy "
                f"{best['strategy'] or '-'}): {best['time_us']:.2f} us ({best['timing']}), "
                f"{_num(speedup, '{:.2f}x')} the baseline"
                + (f" `{base['id']}` at {base_time:.2f} us" if base_time else "")
                + f". File: `best.cpp` (also `kernels/{_safe_name(best['id'])}.cpp`).", ""]
        skipped = not_timed(record, best["id"])
        if skipped:
            out += [f"Its time is over {timed_text(best)} performance cases (the same cases for every "
                    "candidate of the task); not timed:", ""]
            out += [f"- case {_cell(cid)}: {_cell(why.removeprefix('not timed: '))}" for cid, why in skipped]
            out.append("")
        if base and base["id"] != best["id"]:
            out += [f"### Diff from the baseline `{base['id']}`", "", "```diff",
                    unified_diff(base, best).rstrip("\n"), "```", ""]
        elif base:
            out += ["The best kernel is the baseline itself.", ""]
        out += ["### Source", "", "```cpp", best["code"].rstrip("\n"), "```", ""]
    else:
        out += ["No passing kernel.", ""]

    out += ["## Rounds", "", "| round | status | candidates | passed | best | best time (us) | "
            "median time (us) | started | finished |", "|---:|---|---:|---:|---|---:|---:|---|---|"]
    for r in record["rounds"]:
        out.append(f"| {r['round']} | {r['status']} | {_num(r['candidates'], '{}')} | "
                   f"{_num(r['passed'], '{}')} | {_cell(r['best_id'])} | {_num(r['best_time_us'])} | "
                   f"{_num(r['median_time_us'])} | {_when(r['started_at'])} | {_when(r['finished_at'])} |")
    out.append("")

    out += ["## Decisions", ""]
    if record["decisions"]:
        out += ["| round | time | decision | candidate | text |", "|---:|---|---|---|---|"]
        out += [f"| {d['round']} | {_when(d['at'])} | {d['kind']} | {_cell(d['candidate_id'])} | "
                f"{_cell(d['text'])} |" for d in record["decisions"]]
    else:
        out.append("No decisions recorded.")
    out.append("")
    return "\n".join(out)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def export_session(store, name: str, out_dir: str | os.PathLike,
                   guard: SecretGuard | None = None) -> ExportResult:
    """Write the export of session `name` into `out_dir` (created if needed)."""
    guard = guard or store.guard
    record = store.session_record(name, with_events=True)
    result = ExportResult(Path(out_dir))
    cands = record["candidates"]
    hap = candidate_haps(record["session"], cands, store.load_session(name).cases)
    best, base = best_of(cands, hap), baseline_of(cands)

    def write(rel: str, text: str) -> None:
        clean = guard.redact(text)
        result.redactions += clean != text
        path = result.directory / rel
        _write_atomic(path, clean)
        result.files.append(path)

    write("report.md", render_report(record, hap))
    write("session.json", json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    for c in leaderboard(cands, hap):
        write(f"kernels/{_safe_name(c['id'])}.cpp", c["code"])
    if best:
        result.best_id = best["id"]
        write("best.cpp", best["code"])
        if base and base["id"] != best["id"]:
            write("best.diff", unified_diff(base, best))
    return result
