"""Prompt tokens the LLM roles send, per phase and role, on five representative tasks.

Builds the real prompts (knowledge slice + task + parent + direction ...) and counts them with the
knowledge base's tokenizer. Prints a table, writes JSON.

The variant (cake-partial) prompts are those of one round-2 session per task, built as the engine
builds them: a population of six passing lowered kernels (different tiling/buffering knobs; times are
fixed figures so the tiers are known), four parents drawn tier by tier and each request's
inspirations drawn by the population (seeded). `variant_median` is the median over the four.
`variant_whole_median` is the same requests with every inspiration's whole kernel in place of its
diff (the form before issue 21), on this tree: the compaction's own effect, whatever the parent's
size is today (`--before` compares with another tree's figures, where the kernels differ too).

    .venv/bin/python bench/prompt_tokens.py [-o bench/results/prompt_tokens.json] [--before OLD.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

TASKS = ("sigmoid", "reduce_sum", "rms_norm", "softmax", "bias_gelu")


KNOB_VARIANTS = ({}, {"tile_elems": 4096}, {"buffer_num": 1}, {"tile_elems": 8192, "buffer_num": 1},
                 {"block_dim_policy": "all_cores"}, {"tile_elems": 2048, "ub_reserve_bytes": 0})
TIMES_US = (42.0, 35.5, 61.0, 48.2, 39.9, 55.3)
BOTTLENECKS = ("MTE2", "MTE2", "MTE3", "V", "MTE2", "scalar")


def round_two_requests(task) -> list:
    """The four round-2 variant requests of a session whose round 1 left six passing kernels."""
    import random

    from copilot.events import Candidate
    from copilot.evolution import ProposalRequest, round_one_strategies
    from copilot.evolution.population import Population
    from copilot.lowering import lower

    pop = Population(random.Random(0))
    for i, (knobs, t, neck) in enumerate(zip(KNOB_VARIANTS, TIMES_US, BOTTLENECKS)):
        cid = "r0-base" if i == 0 else f"r1-c{i}"
        pop.add(Candidate(cid, lower(task, knobs=knobs).source, 0 if i == 0 else 1, "offline", status="passed",
                          time_us=t, roofline_fraction=round(12.0 / t, 2), bottleneck=neck,
                          strategy="" if i == 0 else f"knobs {knobs}"))
    strategies = round_one_strategies(task)
    picked = pop.sample_parents(4)
    names = [strategies[i % len(strategies)].id for i in range(len(picked))]
    return [ProposalRequest(task=task, chip="910B2", round=2, index=i + 1, strategy=strategies[i % len(strategies)],
                            parent=parent, parent_tier=tier, inspirations=pop.inspirations(exclude=parent.id),
                            sibling_strategies=[n for j, n in enumerate(names) if j != i])
            for i, (parent, tier) in enumerate(picked)]


def whole_inspirations(inspirations) -> str:
    """The inspirations section as it was before issue 21: figures and each one's whole kernel."""
    from copilot.agents import prompts

    out = ["## Inspirations (figures of other candidates and their code)"]
    for i in inspirations:
        out.append(f"### {i.candidate_id} ({i.tier} tier, strategy: {i.strategy or 'n/a'}): "
                   + prompts._figures(i.time_us, i.timing, i.roofline_fraction, i.bottleneck)
                   + f"\n```cpp\n{i.code}\n```")
    return "\n\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default="bench/results/prompt_tokens.json")
    ap.add_argument("--before", help="a JSON this bench wrote earlier: print the variant prompts' before/after ratio")
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
        mutation = assemble(task, "mutation").render()
        msgs = {
            "cake (generation 1, init)": prompts.generation_prompt(task, assemble(task, "init").render()),
            "cake-partial (mutation)": prompts.variant_prompt(ProposalRequest(
                task=task, chip="910B2", round=2, index=1, strategy=Strategy("L3.double-buffering", "db", "two buffers"),
                parent=parent, parent_tier="top", sibling_strategies=["L3.split-d"]), mutation),
            "repair": prompts.repair_prompt(task, parent_code, diags, "build failed",
                                            assemble(task, "repair", diagnostics=diags).render()),
        }
        role_tokens = {role: count_tokens("\n".join(m["content"] for m in ms)) for role, ms in msgs.items()}
        requests = round_two_requests(task)
        variants = [count_tokens("\n".join(m["content"] for m in prompts.variant_prompt(req, mutation)))
                    for req in requests]
        whole = [v - count_tokens(prompts.inspirations_section(req.inspirations, req.parent))
                 + count_tokens(whole_inspirations(req.inspirations)) for v, req in zip(variants, requests)]
        rows.append({"task": name, "slice_tokens": phase_tokens, "prompt_tokens": role_tokens,
                     "variant_prompt_tokens": variants, "variant_median": statistics.median(variants),
                     "variant_whole_median": statistics.median(whole),
                     "init_over_tuning": phase_tokens["init"] / max(1, phase_tokens["tuning"])})
    print(f"{'task':12} {'init':>6} {'mut.':>6} {'repair':>6} {'tuning':>6} {'ratio':>6} | "
          f"{'cake':>6} {'partial':>7} {'repair':>6} | {'round-2 variants (median)':>26}  "
          "(knowledge slice | whole prompt | session prompts, tokens)")
    for r in rows:
        s, p = r["slice_tokens"], list(r["prompt_tokens"].values())
        print(f"{r['task']:12} {s['init']:>6} {s['mutation']:>6} {s['repair']:>6} {s['tuning']:>6} "
              f"{r['init_over_tuning']:>6.1f} | {p[0]:>6} {p[1]:>7} {p[2]:>6} | "
              f"{' '.join(map(str, r['variant_prompt_tokens']))} ({r['variant_median']:.0f})")
    same = [r["variant_whole_median"] / r["variant_median"] for r in rows]
    for r, q in zip(rows, same):
        print(f"{r['task']:12} round-2 variant prompt, this tree: whole inspirations {r['variant_whole_median']:.0f} "
              f"-> diffs {r['variant_median']:.0f} tokens, {q:.2f}x smaller")
    print(f"median {statistics.median(same):.2f}x, min {min(same):.2f}x smaller (same tree)")
    if args.before:
        before = {r["task"]: r["variant_median"] for r in json.loads(Path(args.before).read_text())}
        ratios = [before[r["task"]] / r["variant_median"] for r in rows if r["task"] in before]
        for r, q in zip((r for r in rows if r["task"] in before), ratios):
            r["variant_before_over_after"] = q
            print(f"{r['task']:12} round-2 variant prompt: {before[r['task']]:.0f} -> {r['variant_median']:.0f} "
                  f"tokens, {q:.2f}x smaller")
        print(f"median {statistics.median(ratios):.2f}x, min {min(ratios):.2f}x smaller")
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
