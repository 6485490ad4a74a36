"""Persistence of tuning sessions: the SQLite store, resume state, export and replay.

Engine code: imports no UI library.
"""

from sessions.errors import (NotAStore, SessionExists, SessionNotFound, StoreCorrupt, StoreError,
                             StoreMissing, StoreTooNew)
from sessions.secret_guard import SecretGuard, SecretRefused
from sessions.state import Budget, RoundSummary, SessionState, decode_random, encode_random
from sessions.store import SessionStore, code_hash, default_store_path

__all__ = ["Budget", "NotAStore", "RoundSummary", "SecretGuard", "SecretRefused", "SessionExists",
           "SessionNotFound", "SessionState", "SessionStore", "StoreCorrupt", "StoreError",
           "StoreMissing", "StoreTooNew", "code_hash", "decode_random", "default_store_path",
           "encode_random"]
