"""Waiting for something a server does in its own time, with a deadline that only detects a freeze.

entry = await eventually(lambda: find_entry(client, uri), "the skill is listed", deadline_s=60)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

T = TypeVar("T")


async def eventually(
    check: Callable[[], Awaitable[T | None]], what: str, *, deadline_s: float = 10.0, step_s: float = 0.05
) -> T:
    """`check()`'s first truthy value, polling every `step_s` until `deadline_s`; AssertionError naming `what`."""
    last: T | None = None
    with anyio.move_on_after(deadline_s):
        while True:
            last = await check()
            if last:
                return last
            await anyio.sleep(step_s)
    raise AssertionError(f"not within {deadline_s:.0f}s: {what} (last seen: {last!r})")
