"""glibc's allocator, told what a server needs (issue 23, memory): free pages inside its heaps go back to the system.

A skillwire choice, measured with the kernel's own count of this process's resident memory (no timing).
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import pytest

from skillwire.service.malloc import trim, trim_after_index

glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim only"
)


def resident_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@glibc
def test_trim_gives_back_the_free_pages_inside_the_heap() -> None:
    """Blocks freed between blocks still in use stay mapped (the heap cannot shrink past them) until `trim`: what a
    rebuild leaves when the index it replaced was freed below the one it built."""
    blocks = [bytearray(b"x") * (64 * 1024) for _ in range(512)]  # 32 MiB from the heap, every page written
    kept = blocks[1::2]
    del blocks  # every other block freed: 16 MiB of holes
    before = resident_bytes()
    assert trim()
    assert before - resident_bytes() > 8 * 1024 * 1024
    assert len(kept) == 256


def test_a_server_trims_after_each_catalog_it_publishes() -> None:
    """`trim_after_index` trims once and asks to be told of every new catalog (it trims then, too)."""
    listeners: list[Any] = []

    class Service:
        def on_change(self, listener: Any) -> None:
            listeners.append(listener)

    trim_after_index(Service())  # type: ignore[arg-type]
    assert len(listeners) == 1
    assert listeners[0](object()) is None
