"""Stdio servers the command line starts: `skillwire` means this installation, and their stderr is kept aside.

`--server docs="skillwire serve skills/"` must run the skillwire that is running now (no activated venv needed,
and never another one found first on PATH), so a leading `skillwire` becomes this interpreter's `-m skillwire`.
A child's stderr (its summary, its logs) is not our output: it goes into a pipe whose last bytes are kept, and
is shown, made terminal safe, only when using that server failed.

    with kept_stderr("SERVER") as errlog:                  # the end of it is shown if the block fails
        connect(local_command(argv), errlog=errlog)
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Final, TextIO

from skillwire.cli.output import PROG, err

__all__ = ["SHOWN_LINES", "TAIL_BYTES", "StderrTail", "kept_stderr", "local_command"]

TAIL_BYTES: Final = 16 << 10  # what is kept of a child's stderr: a chatty or hostile child cannot grow memory
SHOWN_LINES: Final = 20
_JOIN_S: Final = 2.0  # how long closing waits for the reader (a grandchild may hold the pipe open)


def local_command(argv: list[str]) -> list[str]:
    """`argv`, with a leading `skillwire` run as `python -m skillwire` by this very interpreter."""
    if argv and argv[0] == PROG:
        return [sys.executable, "-m", PROG, *argv[1:]]
    return argv


class StderrTail:
    """A pipe to hand a child as its stderr; a thread drains it and keeps only the last `limit` bytes."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        read_fd, write_fd = os.pipe()
        self._limit = limit
        self._tail = bytearray()
        self._lock = threading.Lock()
        self.errlog: TextIO = os.fdopen(write_fd, "w")  # what the child inherits as fd 2
        # Drained by a thread, not a task: the SDK owns the event loop's tasks, and a full pipe would stall the child.
        self._reader = threading.Thread(target=self._drain, args=(read_fd,), name="child-stderr", daemon=True)
        self._reader.start()

    def _drain(self, read_fd: int) -> None:
        try:
            while chunk := os.read(read_fd, 65536):
                with self._lock:
                    self._tail += chunk
                    del self._tail[: -self._limit]
        finally:
            os.close(read_fd)

    def close(self) -> None:
        """Close our end of the pipe and wait (briefly) for what the child wrote to be read."""
        if not self.errlog.closed:
            self.errlog.close()
        self._reader.join(_JOIN_S)

    def text(self) -> str:
        """The last `SHOWN_LINES` lines the child wrote (after `close`, everything it wrote before ending)."""
        with self._lock:
            data = bytes(self._tail)
        lines = data.decode("utf-8", errors="replace").splitlines()
        return "\n".join(lines[-SHOWN_LINES:])

    def show(self, server: str) -> None:
        """After a failure: the end of the child's stderr on ours, each line escaped, if it wrote anything."""
        self.close()
        text = self.text()
        if text.strip():
            err(f"{PROG}: {server} wrote on stderr (last lines):")
            for line in text.splitlines():
                err(f"  | {line}")

    def __enter__(self) -> StderrTail:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


@contextmanager
def kept_stderr(server: str) -> Iterator[TextIO]:
    """A stderr for the child server of one command: shown (its end) only if the block fails."""
    with StderrTail() as tail:
        try:
            yield tail.errlog
        except Exception:
            tail.show(server)
            raise
