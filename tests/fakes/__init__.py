"""Test doubles shared by the test suite."""
