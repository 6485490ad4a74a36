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

__all__ = [
    "CaseTooLarge", "OutputSpec", "Reference", "estimate_bytes", "make_inputs",
    "oracle_budget_bytes", "reference", "smoke_golden",
]
