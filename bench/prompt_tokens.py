"""Prompt tokens the LLM roles send, per phase and role, on five representative tasks.

Builds the real prompts (knowledge slice + task + parent + direction ...) and counts them with the
knowledge base's tokenizer. Prints a table, writes JSON.

    .venv/bin/python bench/prompt_tokens.py [-o bench/results/prompt_tokens.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TASKS = ("sigmoid", "reduce_sum", "rms_norm", "softmax", "bias_gelu")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="bench/results/prompt_tokens.json")
    args = ap.parse_args()

    from copilot.agents import prompts
    from copilot.events import Candidate
    from copilot.evolution import ProposalRequest, Strategy
    from copilot.lowering import lower
    from copilot.tasks import load_task
    from knowledge import assemble
    from knowledge.tokens import count_tokens

    rows = []
    for name in TASKS:
        task = load_task(name)
        parent_code = lower(task).source
        parent = Candidate("r1-c1", parent_code, 1, "offline", time_us=42.0, roofline_fraction=0.4, status="passed")
        diags = [{"id": "L2.ALIGN_32B", "line": 12, "message": "UB address 48 is not 32-byte aligned"}]
        phase_tokens = {ph: assemble(task, ph, chip="910B2", diagnostics=diags if ph == "repair" else ()).total_tokens
                        for ph in ("init", "mutation", "repair", "tuning")}
        msgs = {
            "cake (generation 1, init)": prompts.generation_prompt(task, assemble(task, "init").render()),
            "cake-partial (mutation)": prompts.variant_prompt(ProposalRequest(
                task=task, chip="910B2", round=2, index=1, strategy=Strategy("L3.double-buffering", "db", "two buffers"),
                parent=parent, parent_tier="top", sibling_strategies=["L3.split-d"]), assemble(task, "mutation").render()),
            "repair": prompts.repair_prompt(task, parent_code, diags, "build failed",
                                            assemble(task, "repair", diagnostics=diags).render()),
        }
        role_tokens = {role: count_tokens("\n".join(m["content"] for m in ms)) for role, ms in msgs.items()}
        rows.append({"task": name, "slice_tokens": phase_tokens, "prompt_tokens": role_tokens,
                     "init_over_tuning": phase_tokens["init"] / max(1, phase_tokens["tuning"])})
    print(f"{'task':12} {'init':>6} {'mut.':>6} {'repair':>6} {'tuning':>6} {'ratio':>6} | "
          f"{'cake':>6} {'partial':>7} {'repair':>6}  (knowledge slice | whole prompt, tokens)")
    for r in rows:
        s, p = r["slice_tokens"], list(r["prompt_tokens"].values())
        print(f"{r['task']:12} {s['init']:>6} {s['mutation']:>6} {s['repair']:>6} {s['tuning']:>6} "
              f"{r['init_over_tuning']:>6.1f} | {p[0]:>6} {p[1]:>7} {p[2]:>6}")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
