"""The runner's GM transfers (split over two threads from a size) and the sandbox's wait on the
launcher (a pidfd, no polling sleeps): same bytes, same errors, same timeouts."""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest

from copilot.backends.sim import runner
from copilot.sandbox import UnsafeFile, _wait_exit


@pytest.fixture
def small_split(monkeypatch):
    monkeypatch.setattr(runner, "SPLIT_BYTES", 64 << 10)


def _memfd(size: int) -> int:
    fd = os.memfd_create("t", os.MFD_CLOEXEC)
    os.ftruncate(fd, size)
    return fd


@pytest.mark.parametrize("nbytes", [1000, (64 << 10) - 1, 1 << 20, (1 << 20) + 12345])
def test_a_split_write_and_read_round_trip_every_byte_at_an_offset(small_split, nbytes):
    data = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    fd = _memfd(nbytes + 8192)
    try:
        runner._transfer(runner._write_range, fd, memoryview(data), 4096)
        assert os.pread(fd, 4096, 0) == bytes(4096)                   # nothing before the data
        back = np.empty(nbytes, dtype=np.uint8)
        runner._transfer(runner._read_range, fd, memoryview(back), 4096)
        assert np.array_equal(back, data)
        assert os.pread(fd, 4096, 4096 + nbytes) == bytes(min(4096, 8192 - 4096))
    finally:
        os.close(fd)


def test_a_short_gm_buffer_fails_in_either_half(small_split):
    fd = _memfd(256 << 10)                 # the read asks for 512 KiB: the second half runs past the end
    try:
        with pytest.raises(UnsafeFile, match="early"):
            runner._transfer(runner._read_range, fd, memoryview(np.empty(512 << 10, np.uint8)), 0)
    finally:
        os.close(fd)


def test_large_output_memory_is_zeroed_and_writable(small_split):
    mem = runner._tensor_memory(runner.HUGE_OUTPUT * 3 + 100)
    assert mem.size == runner.HUGE_OUTPUT * 3 + 100 and not mem.any()
    mem[-1] = 7
    assert mem[-1] == 7


def test_the_wait_returns_when_the_child_ends_and_reports_a_timeout():
    proc = subprocess.Popen(["sleep", "30"])
    try:
        t0 = time.monotonic()
        assert _wait_exit(proc, 0.3) is False
        assert 0.25 < time.monotonic() - t0 < 10
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    proc = subprocess.Popen(["sh", "-c", "exit 3"])
    assert _wait_exit(proc, 30) is True and proc.returncode == 3


def test_the_wait_without_pidfds_falls_back_to_popen_wait(monkeypatch):
    def no_pidfd(pid):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", no_pidfd)
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert _wait_exit(proc, 0.2) is False
    finally:
        proc.kill()
        proc.wait()
    proc = subprocess.Popen(["true"])
    assert _wait_exit(proc, 30) is True and proc.returncode == 0
