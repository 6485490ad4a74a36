"""The runner's GM transfers (split over two threads from a size) and the sandbox's wait on the
launcher (a pidfd, no polling sleeps): same bytes, same errors, same timeouts."""

from __future__ import annotations

import os
import subprocess
import time

import numpy as np
import pytest
import torch

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
    gm = runner._Gm(nbytes + 8192)
    try:
        runner._split_copy(gm.bytes(4096, nbytes), data)
        assert os.pread(gm.fd, 4096, 0) == bytes(4096)                # nothing before the data
        back = np.empty(nbytes, dtype=np.uint8)
        runner._transfer(runner._read_range, gm.fd, memoryview(back), 4096)
        assert np.array_equal(back, data)
        assert os.pread(gm.fd, 4096, 4096 + nbytes) == bytes(min(4096, 8192 - 4096))
    finally:
        gm.close()


def test_a_reused_gm_buffer_is_zero_around_the_new_data_and_outputs_are_copied_out_of_it():
    from copilot.backends.sim.runner import OutputSpec

    if runner._gm_pool.cap() == 0:
        pytest.skip("no GM pool without the sandbox's pid namespace")
    with runner._gm_pool.lock:                 # buffers of earlier runs in this process: not this test's
        stale, runner._gm_pool.idle = runner._gm_pool.idle, []
    for old in stale:
        old.close()
    big = torch.arange(3000, dtype=torch.float32)
    gm, pad = runner._gm_buffer(big, big.numel() * 4)
    runner._gm_pool.give_back([gm])
    small = torch.ones(2500, dtype=torch.float32)                       # 12,000 and 10,000 bytes: one page count
    again, pad2 = runner._gm_buffer(small, 10000)
    assert again is gm and pad2 != pad                                  # same size class, other layout
    whole = os.pread(gm.fd, gm.size, 0)
    assert whole[:pad2] == bytes(pad2) and whole[pad2 + 10000:] == bytes(gm.size - pad2 - 10000)
    t, _ = runner._read_tensor(gm, pad2, OutputSpec("y", (2500,), "float32"), count_written=False)
    assert torch.equal(t, small)
    gm.bytes(pad2, 10000)[:] = 0xFF                                     # the next run's poison
    assert torch.equal(t, small)                                        # the tensor is its own copy
    gm.close()


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
