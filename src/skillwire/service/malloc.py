"""Large buffers go back to the operating system when they are freed (glibc's malloc, pinned by `mallopt`).

An HTTP server's large allocations are the bodies of file reads: a 15 MiB file becomes several 20 MiB strings
and byte strings while its answer is built and sent. glibc serves blocks of at least M_MMAP_THRESHOLD (128 KiB)
with their own `mmap`, unmapped on `free`, but it raises that threshold to the size of each such block freed
(up to 32 MiB): after the first large read, every later one comes from the heap, whose freed middle is never
returned. Measured with `python -m bench.stalled_readers` (40 and 200 clients stalled on a 15 MiB file, then
gone; 74 MB at start): 10 s after they left the server held 75 to 155 MB, and 75 to 80 MB with the threshold
pinned. Setting it with `mallopt` pins it (glibc then adjusts neither it nor the trim threshold). Elsewhere
(musl, macOS, Windows) this does nothing: their allocators differ, and none was measured.

An index is rebuilt on a worker thread, which glibc gives an arena of its own: what the rebuild freed below what it
kept stays mapped there. `trim` (`malloc_trim(0)`) hands those free pages back; a server calls it after each new
catalog (`bench.memory`, 10,000 skills with the watcher's rescan: about 5 MB).

    pin_mmap_threshold()   # once, when a long-running server starts; False where it does not apply
    trim()                 # after a large structure was replaced; False where it does not apply
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillwire.core.catalog import Catalog
    from skillwire.server.skill_service import SkillService

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
MMAP_THRESHOLD_BYTES = 1024 * 1024
"""Blocks of this size and up get their own mapping: the buffers of large reads (`limits.LARGE_READ_BYTES`), no
Python object of ordinary size (256 KiB gave back no more memory in the benchmark)."""


def pin_mmap_threshold(threshold: int = MMAP_THRESHOLD_BYTES) -> bool:
    """Pin glibc's mmap threshold at `threshold` bytes for this process; True if it was set.

    Left alone when the operator chose one (`MALLOC_MMAP_THRESHOLD_`, or `glibc.malloc.mmap_threshold` in
    `GLIBC_TUNABLES`), or when the C library is not glibc.
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "mmap_threshold" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    libc = _glibc()
    try:
        return libc is not None and bool(libc.mallopt(ctypes.c_int(M_MMAP_THRESHOLD), ctypes.c_int(threshold)))
    except AttributeError:
        return False


def trim() -> bool:
    """Give the free pages of every glibc heap back to the system; True if glibc did (False elsewhere)."""
    libc = _glibc()
    try:
        return libc is not None and bool(libc.malloc_trim(ctypes.c_size_t(0)))
    except AttributeError:
        return False


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc, else None."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def trim_after_index(service: SkillService) -> None:
    """`trim` now (the first index was just built) and after each catalog `service` publishes."""
    trim()

    def after(_catalog: Catalog) -> None:
        trim()

    service.on_change(after)
