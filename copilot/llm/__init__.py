"""LLM agents' plumbing: the client interface, accounting and budgets, reply parsing.

Importing this package is cheap: litellm is imported only when the litellm client first sends a
request (the lazy proxy `copilot.llm.litellm_client.litellm`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from copilot.llm.accounting import Accounting, Budget, Tally
from copilot.llm.client import (AuthenticationFailed, BadRequest, BudgetExceeded, CallContext,
                                ContextOverflow, LLMClient, LLMError, LLMReply, Message,
                                RateLimited, RetryPolicy, ServerError, Timeout, redact)
from copilot.llm.models import ModelConfig, ModelTable
from copilot.llm.parsing import ParsedReply, apply_edits, parse_reply

if TYPE_CHECKING:
    from copilot.events import EventSink

__all__ = ["Accounting", "AuthenticationFailed", "BadRequest", "Budget", "BudgetExceeded",
           "CallContext", "ContextOverflow", "LLMClient", "LLMError", "LLMReply", "Message",
           "ModelConfig", "ModelTable", "ParsedReply", "RateLimited", "RetryPolicy", "ServerError",
           "Tally", "Timeout", "apply_edits", "open_client", "parse_reply", "redact"]


def open_client(model: ModelConfig, *, session: str = "", sink: EventSink | None = None,
                budget: Budget | None = None, usage: Accounting | None = None,
                retry: RetryPolicy | None = None) -> LLMClient:
    """A litellm client for `model`, counting into `usage` (or a new `Accounting`)."""
    from copilot.llm.litellm_client import LiteLLMClient

    if usage is None:
        usage = Accounting(budget=budget or Budget(), sink=sink, session=session)
    return LiteLLMClient(model, usage=usage, retry=retry)
