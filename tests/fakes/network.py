"""`no_network`: a fixture that makes any attempt to open a network connection fail the test."""

from __future__ import annotations

import socket

import pytest


class NetworkAccess(BaseException):
    """A BaseException so that no `except Exception` in the code under test can swallow it."""


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise NetworkAccess(f"a test tried to reach the network: {args[1:] or kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield
