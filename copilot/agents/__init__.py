"""Agents behind one interface (`copilot.evolution.Agent`): the offline agent and the LLM roles."""
