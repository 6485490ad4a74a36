"""How far an attr-derived constant can drift when the attr reaches the kernel as the proto's
width (float attrs as float32) while the golden computes it from the Python double.

For every public case of a task (default: CANN-Bench apply_adam_w) and every constant the golden
derives from its float attrs, three values are compared in float32 ulps of the golden's value:
  golden   fp32(expr(attrs as double))           - what torch multiplies an fp32 tensor by
  host     fp32(expr(double(fp32(attr))))         - the tiling function evaluates in double once
  decimal  fp32(expr(shortest decimal of fp32(attr), as double))
                                                  - the same, after recovering the decimal the case
                                                    wrote (std::to_chars / repr of the float32)
  device   expr evaluated in fp32 step by step    - a kernel computing the constant itself

Usage: python bench/attr_constants.py [TASK_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copilot.tasks import load_task  # noqa: E402

ADAMW = {  # the constants the public golden derives (its source: m_new, v_new, m_hat, v_hat, decay)
    "1 - beta1": lambda a, f: f(1) - f(a["beta1"]),
    "1 - beta2": lambda a, f: f(1) - f(a["beta2"]),
    "1 - beta1 ** step": lambda a, f: f(1) - f(a["beta1"]) ** f(a.get("step", 1)),
    "1 - beta2 ** step": lambda a, f: f(1) - f(a["beta2"]) ** f(a.get("step", 1)),
    "lr * weight_decay": lambda a, f: f(a["lr"]) * f(a["weight_decay"]),
    "1 - lr * weight_decay": lambda a, f: f(1) - f(a["lr"]) * f(a["weight_decay"]),
}


def ulps(x: np.float32, ref: np.float32) -> float:
    if x == ref:
        return 0.0
    return abs(float(x) - float(ref)) / float(np.spacing(np.abs(ref)) or np.finfo(np.float32).tiny)


def main(argv: list[str]) -> int:
    default = REPO.parent / "shared" / "cannbench" / "tasks" / "level2" / "apply_adam_w"
    task = load_task(argv[0] if argv else default)
    worst = {k: [0.0, 0.0, 0.0] for k in ADAMW}
    for case in task.cases:
        attrs = {k: float(v) for k, v in (case.attrs or {}).items()
                 if isinstance(v, (int, float, str)) and not isinstance(v, bool) and _is_number(v)}
        for name, expr in ADAMW.items():
            golden = np.float32(expr(attrs, float))
            host = np.float32(expr({k: float(np.float32(v)) for k, v in attrs.items()}, float))
            decimal = np.float32(expr({k: float(np.format_float_positional(np.float32(v), unique=True)) for k, v in attrs.items()}, float))
            device = np.float32(expr(attrs, np.float32))
            for i, got in enumerate((host, decimal, device)):
                worst[name][i] = max(worst[name][i], ulps(got, golden))
    print(f"{task.name}: {len(task.cases)} cases; largest difference from the golden's constant, "
          "in float32 ulps")
    print(f"{'constant':<24} {'host (double of fp32)':>22} {'host (shortest decimal)':>24} {'device (fp32)':>14}")
    for name, (h, dec, d) in worst.items():
        print(f"{name:<24} {h:>22.1f} {dec:>24.1f} {d:>14.1f}")
    return 0


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
