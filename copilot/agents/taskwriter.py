"""`cake`, first step: from an operator described in words to a task directory in the public
layout (proto.yaml, golden.py, cases.yaml, desc.md) for the engineer to confirm.

The draft is validated exactly as any task is (the loader, then the golden run on its smallest
case); a draft that fails goes back to the model with the loader's message, at most `repairs`
times. Nothing is used before the engineer has seen it.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from copilot.errors import BadInput

FILES = ("proto.yaml", "golden.py", "cases.yaml", "desc.md")
BLOCK = re.compile(r"^[ \t]*(?:#+\s*|File:\s*|`)?(proto\.yaml|golden\.py|cases\.yaml|desc\.md)`?[ \t]*\n```[\w-]*\n(.*?)\n```",
                   re.M | re.S)

SYSTEM = ("You turn an operator description into a benchmark task for AscendC kernels: a PyTorch "
          "golden and test cases. Be exact about shapes, dtypes and attributes.")
FORMAT = """\
Write four files, each as a line with its name followed by one fenced block:

proto.yaml
```yaml
operator:
  name: CamelCaseName
  category: elementwise | broadcast | reduction | normalization | softmax | fusion
  formula: |
    ...
  attrs: [{name: ..., type: float|int|bool|string, default: ..., required: false}]
  inputs: [{name: x, dtype: [float16, bfloat16, float32]}]
  outputs: [{name: y, dtype: [float16, bfloat16, float32]}]
```
golden.py: `import torch`, one function named as the operator in snake_case, taking the inputs in
order then the attributes as keyword arguments, returning the output(s) in the input dtype; it must
run on CPU in float64 and in the case dtype.
cases.yaml: `cases:` with at least 8 entries {case_id, input_shape (one shape per input), dtype (one
per input), attrs, value_range [lo, hi], note}, mixing float16/bfloat16/float32, aligned and odd
shapes, at least 4 with at most 1M elements per input.
desc.md: a few lines on what the operator computes."""


@dataclass
class TaskDraft:
    path: Path
    attempts: int
    notes: list[str] = field(default_factory=list)


def parse_files(text: str) -> dict[str, str]:
    return {name: body for name, body in BLOCK.findall(text)}


async def draft_task(client, description: str, out_dir: Path, repairs: int = 2) -> TaskDraft:
    """Write the task the model drafts from `description` into `out_dir` (created; must not
    exist) and validate it; raises BadInput when no valid draft came after the repairs."""
    from copilot.oracle import smoke_golden
    from copilot.tasks import load_task

    out_dir = Path(out_dir)
    if out_dir.exists():
        raise BadInput(f"{out_dir} already exists: give a new directory for the drafted task")
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"## Operator\n{description.strip()}\n\n## Files\n{FORMAT}"}]
    notes: list[str] = []
    for attempt in range(1, repairs + 2):
        reply = await client.complete(messages, phase="init", role="cake")
        files = parse_files(reply.text)
        missing = [f for f in FILES if f not in files]
        if missing:
            problem = f"the reply is missing {', '.join(missing)}"
        else:
            tmp = out_dir.with_name(out_dir.name + ".draft")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            for name in FILES:
                (tmp / name).write_text(files[name].rstrip() + "\n", encoding="utf-8")
            try:
                smoke_golden(load_task(tmp))
            except BadInput as exc:
                problem = str(exc).replace(str(tmp), str(out_dir))
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.rename(out_dir)
                return TaskDraft(out_dir, attempt, notes)
        notes.append(f"attempt {attempt}: {problem}")
        messages = messages + [{"role": "assistant", "content": reply.text},
                               {"role": "user", "content": f"That task is not valid: {problem}. "
                                                           "Send all four files again, corrected."}]
    raise BadInput(f"no valid task after {repairs + 1} drafts; last problem: {notes[-1].split(': ', 1)[1]}")
