"""`cake-evo`: the rounds of collaborative kernel evolution with the engineer in the loop."""

from copilot.evolution.engine import (
    Agent,
    AutoPolicy,
    BudgetExhausted,
    DecisionContext,
    DecisionPolicy,
    Evaluation,
    Evaluator,
    EvolutionEngine,
    EvolutionResult,
    EvolutionSettings,
    HumanEdit,
    Proposal,
    ProposalRequest,
    RoundDecision,
    leaderboard,
)
from copilot.evolution.population import Inspiration, Population, code_hash, normalize_code
from copilot.evolution.strategies import Strategy, round_one_strategies

__all__ = [
    "Agent", "AutoPolicy", "BudgetExhausted", "DecisionContext", "DecisionPolicy", "Evaluation",
    "Evaluator", "EvolutionEngine", "EvolutionResult", "EvolutionSettings", "HumanEdit", "Inspiration",
    "Population", "Proposal", "ProposalRequest", "RoundDecision", "Strategy", "code_hash",
    "leaderboard", "normalize_code", "round_one_strategies",
]
