"""Operator tasks: the public CANN-Bench directory layout and KernelBench-style files."""

from copilot.tasks.loader import (
    BUILTIN_DIR,
    builtin_names,
    builtin_tasks,
    load_task,
    select_cases,
    snake_case,
)
from copilot.tasks.model import QUICK_MAX_ELEMENTS, AttrSpec, Case, Task, TensorSpec

__all__ = [
    "BUILTIN_DIR", "QUICK_MAX_ELEMENTS", "AttrSpec", "Case", "Task", "TensorSpec",
    "builtin_names", "builtin_tasks", "load_task", "select_cases", "snake_case",
]
