"""Errors that reach the user, each with the exit code the CLI contract gives it."""

from __future__ import annotations


class CannpilotError(Exception):
    """Base of every error meant for the user: the message names what, where, and what to do."""

    exit_code = 1


class BadInput(CannpilotError):
    """The user gave something malformed (a task, a kernel path, an option): exit 2."""

    exit_code = 2


class Unsupported(CannpilotError):
    """A valid request the tool cannot serve (e.g. a pattern the lowering does not handle): exit 3."""

    exit_code = 3
