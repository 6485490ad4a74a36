"""Cannpilot engine: tasks, oracle, backends, agents and evolution. Imports no UI library."""

__version__ = "0.1.0"
