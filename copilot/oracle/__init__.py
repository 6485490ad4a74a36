"""Inputs, the CPU golden (fp64 oracle and same-precision bench) and the precision standard."""

from copilot.oracle.golden import (
    CaseTooLarge,
    OutputSpec,
    Reference,
    estimate_bytes,
    oracle_budget_bytes,
    reference,
    smoke_golden,
)
from copilot.oracle.inputs import make_inputs
from copilot.oracle.verdict import judge_case, run_verdict

__all__ = [
    "CaseTooLarge", "OutputSpec", "judge_case", "Reference", "estimate_bytes", "make_inputs",
    "oracle_budget_bytes", "reference", "run_verdict", "smoke_golden",
]
