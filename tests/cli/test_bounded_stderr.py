"""`serve`'s stderr writer over a real pipe (skillwire choice, issue 22): a write never waits for the reader; what
does not fit is dropped, counted and said once the reader is back; stopping never waits longer than it is told.

The end-to-end case (a stdio host that never reads stderr still gets answers) is in test_portable_catalogs.py.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterator

import pytest

from skillwire.cli.bounded_stderr import BoundedStderr

LINE = "x" * 99 + "\n"


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    os.close(read_fd)
    os.close(write_fd)


def _read_until(fd: int, wanted: bytes, timeout: float = 10.0) -> bytes:
    received = b""
    deadline = time.monotonic() + timeout
    while wanted not in received and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            received += os.read(fd, 1 << 16)
    return received


def test_writes_to_a_pipe_nobody_reads_return_at_once_and_the_excess_is_dropped_and_said(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe
    with os.fdopen(os.dup(write_fd), "w") as target:
        writer = BoundedStderr(target, limit=10_000)
        started = time.monotonic()
        for _ in range(3000):  # 300 KB: far more than the pipe (64 KiB) and the queue hold
            writer.write(LINE)
        assert time.monotonic() - started < 2.0  # a blocked write would never return
        assert writer.dropped_total > 0
        received = _read_until(read_fd, b"were dropped")  # the reader comes back: the rest, and how much was lost
        assert b"characters of stderr output were dropped: nothing read them in time\n" in received
        assert received.startswith(LINE.encode())
        writer.close(timeout=1.0)


def test_closing_waits_for_a_reader_only_as_long_as_it_is_told(pipe: tuple[int, int]) -> None:
    _, write_fd = pipe
    with os.fdopen(os.dup(write_fd), "w") as target:
        writer = BoundedStderr(target)
        for _ in range(1000):  # 100 KB: the writer thread is blocked on the full pipe
            writer.write(LINE)
        started = time.monotonic()
        writer.close(timeout=0.3)
        assert time.monotonic() - started < 2.0


def test_one_text_larger_than_the_limit_still_reaches_a_reader(pipe: tuple[int, int]) -> None:
    """A `-v` summary of a large collection is one write past the limit: taken whole when nothing else waits."""
    read_fd, write_fd = pipe
    with os.fdopen(os.dup(write_fd), "w") as target:
        writer = BoundedStderr(target, limit=1000)
        writer.write(LINE * 100 + "end\n")
        received = _read_until(read_fd, b"end\n")
        writer.close(timeout=1.0)
    assert received == (LINE * 100 + "end\n").encode()
    assert writer.dropped_total == 0
