"""Stdin lines for the stdio transport, read without a worker thread so Ctrl-C stops the server at once.

The SDK's `stdio_server()` reads stdin in a worker thread; a cancelled task waits for that thread, and a
thread blocked in `read()` on a terminal or an idle pipe returns only when a line arrives. So SIGINT was
ignored until the next keystroke. Here the event loop waits for fd readability (`anyio.wait_readable`),
which a cancel interrupts, then reads what is there. Like the SDK, fd 0 points at the null device while
serving (a handler or child reads EOF, never the wire) and is restored afterwards.

    async with claimed_stdin() as lines:           # None: stdin cannot be polled (a regular file)
        async with stdio_server(stdin=lines) as (read, write): ...
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

CHUNK = 1 << 16


def pollable(fd: int) -> bool:
    """True if the event loop can wait on `fd`: a terminal, a pipe or a socket (POSIX only)."""
    if sys.platform == "win32":  # pragma: no cover - Windows pipes cannot be polled
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


class PolledLines:
    """UTF-8 lines (newline kept, bad bytes replaced, as the SDK decodes) from a pollable fd, cancellable."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""
        self._eof = False

    def __aiter__(self) -> PolledLines:
        return self

    async def __anext__(self) -> str:
        searched = 0  # what is already known to hold no newline: a long line is not searched again per chunk
        while True:
            end = self._pending.find("\n", searched)
            searched = len(self._pending)
            if end >= 0:
                line, self._pending = self._pending[: end + 1], self._pending[end + 1 :]
                return line
            if self._eof:
                if self._pending:
                    line, self._pending = self._pending, ""
                    return line
                raise StopAsyncIteration
            await anyio.wait_readable(self._fd)  # the cancel point: no thread is left blocked in read()
            try:
                chunk = os.read(self._fd, CHUNK)
            except BlockingIOError:  # another reader took the bytes first
                continue
            self._eof = not chunk
            self._pending += self._decoder.decode(chunk, final=self._eof)


@asynccontextmanager
async def claimed_stdin() -> AsyncIterator[PolledLines | None]:
    """Stdin as `PolledLines` on a private duplicate, fd 0 on the null device meanwhile; None if not pollable."""
    if not pollable(0):
        yield None
        return
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield PolledLines(private)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)
        os.close(private)
