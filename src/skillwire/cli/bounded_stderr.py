"""`skillwire serve`'s stderr: written by a thread of its own, so a host that never reads it cannot stop the server.

A stdio host gets the protocol on stdout and our summary and log lines on stderr. One that never drains that pipe
(many do not) would, once its 64 KiB fill up, block the next write to stderr: the event loop stops and stdout with
it. Here every write only queues the text (up to `LIMIT` characters, then it is dropped and counted) and one thread
writes it out; when the reader comes back, a line says how much was dropped. fd 2 itself is left as it is
(blocking): the parent's terminal shares it, so O_NONBLOCK there would change it for every process using it.

    with bounded_stderr():          # sys.stderr and the log handlers that wrote to it go through the thread
        serve()
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
import threading
from collections import deque
from collections.abc import Iterator
from typing import Final, TextIO

from skillwire.cli.output import PROG

__all__ = ["LIMIT", "BoundedStderr", "bounded_stderr"]

LIMIT: Final = 256 << 10  # characters queued at most; more is dropped until the reader catches up
DRAIN_S: Final = 2.0  # at the end, how long queued text may take to reach a reader before it is given up


class BoundedStderr(io.TextIOBase):
    """A text stream that never blocks: text is queued (bounded) and written to `target` by a daemon thread."""

    def __init__(self, target: TextIO, *, limit: int = LIMIT) -> None:
        super().__init__()
        self.target = target
        self.limit = limit
        self.dropped = 0  # characters dropped since the last note, and in all
        self.dropped_total = 0
        self._queue: deque[str] = deque()
        self._queued = 0
        self._busy = False  # the thread holds text it has not finished writing
        self._stopping = False
        self._ready = threading.Condition()
        try:  # a real stream: write its descriptor with os.write, holding no lock of the stream's own
            self._fd: int | None = os.dup(target.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            self._fd = None  # an in-memory stream (tests): written through its write()
        self._thread = threading.Thread(target=self._run, name="stderr-writer", daemon=True)
        self._thread.start()

    # -- the stream -----------------------------------------------------------------------------------------------

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._ready:
            # Past `limit` queued, text is dropped; a larger text than that alone is taken into an empty queue
            # (a `-v` summary read by someone): memory stays within `limit` and the one text the caller made.
            if self._stopping or (self._queued and self._queued + len(text) > self.limit):
                self.dropped += len(text)
                self.dropped_total += len(text)
            else:
                self._queue.append(text)
                self._queued += len(text)
                self._ready.notify()
        return len(text)

    def flush(self) -> None:
        """Nothing to wait for: the thread writes as soon as the reader takes it."""

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        """The real stream's descriptor (a child process given our stderr writes there itself)."""
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return getattr(self.target, "errors", None) or "backslashreplace"

    def close(self, timeout: float = DRAIN_S) -> None:
        """Write what is queued if a reader takes it within `timeout` seconds, then stop the thread."""
        with self._ready:
            self._ready.wait_for(lambda: not self._queue and not self._busy, timeout)
            self._stopping = True
            self._ready.notify()
        self._thread.join(timeout=0.1)  # a thread still blocked on a reader that never comes is left (daemon)
        super().close()

    # -- the thread -----------------------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._pump()
        finally:
            if self._fd is not None:
                os.close(self._fd)

    def _pump(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._queue or self._stopping)
                if not self._queue:
                    return
                text = "".join(self._queue)
                self._queue.clear()
                self._queued = 0
                dropped, self.dropped = self.dropped, 0
                self._busy = True
            if dropped:
                text += f"{PROG}: {dropped} characters of stderr output were dropped: nothing read them in time\n"
            self._write(text)
            with self._ready:
                self._busy = False
                self._ready.notify_all()

    def _write(self, text: str) -> None:
        try:
            if self._fd is None:
                self.target.write(text)
                self.target.flush()
                return
            data = text.encode(self.encoding, self.errors)
            while data:
                data = data[os.write(self._fd, data) :]
        except (OSError, ValueError):  # the reader is gone (EPIPE) or the stream closed: nothing more to say
            with self._ready:
                self._stopping = True


@contextlib.contextmanager
def bounded_stderr() -> Iterator[BoundedStderr]:
    """`sys.stderr`, and every log handler writing to it, go through a `BoundedStderr` meanwhile."""
    original = sys.stderr
    writer = BoundedStderr(original)
    handlers = [
        h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler) and h.stream is original
    ]
    for handler in handlers:
        handler.setStream(writer)
    sys.stderr = writer
    try:
        yield writer
    finally:
        sys.stderr = original
        for handler in handlers:
            handler.setStream(original)
        writer.close()
