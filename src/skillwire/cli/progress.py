"""A one-line progress bar for indexing large catalogs, drawn only on a terminal.

bar = ProgressBar(sys.stderr)
FolderSource(roots, progress=bar)   # calls bar(done, total) while hashing
"""

from __future__ import annotations

import time
from typing import TextIO

MIN_FILES = 2_000
"""Catalogs smaller than this index in a blink: no bar."""
_WIDTH = 30
_REDRAW_S = 0.1


class ProgressBar:
    """Draws `indexing [####......] done/total files` on `out`, and erases it when done.

    The one place the CLI writes control characters on purpose (CR, erase line); it shows only its own label
    and numbers, never a name from a server or a file.
    """

    def __init__(self, out: TextIO, *, label: str = "indexing") -> None:
        self.out = out
        self.label = label
        self._drawn = False
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if total < MIN_FILES:
            return
        if done >= total:
            if self._drawn:
                self.out.write("\r\x1b[K")  # erase the bar: the summary that follows says what was indexed
                self.out.flush()
                self._drawn = False
            return
        now = time.monotonic()
        if self._drawn and now - self._last < _REDRAW_S:
            return
        self._last = now
        filled = _WIDTH * done // total
        bar = "#" * filled + "." * (_WIDTH - filled)
        self.out.write(f"\r{self.label} [{bar}] {done:,}/{total:,} files")
        self.out.flush()
        self._drawn = True
