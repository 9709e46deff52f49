"""Following an upstream: refresh when it says it changed, or every `ttlMs` when it cannot say.

An upstream of the 2026-07-28 era that declares `resources.listChanged` is followed through a `subscriptions/listen`
stream (`SkillsClient.changes`): each event asks for a refresh (at most one every `Settings.event_min_s`, so an
upstream announcing changes without pause costs a refresh a second, not a loop), and so does every newly opened
stream, since a change made while no stream was open would otherwise be missed. An upstream that sends no events
(the handshake era, or no such capability) is refreshed every `Settings.poll_interval(ttlMs)`: its listing's `ttlMs`
held between `poll_min_s` and `poll_max_s`, `poll_s` without one. A stream that cannot be opened or drops is opened
again after a back-off that doubles from `poll_min_s` up to `poll_max_s`, with a refresh each time (which says the
upstream is stale when it is down). A refresh swaps a skill whole: the new catalog is built from verified entries
only.

    await follow(upstream, settings, refresh, interval=lambda: settings.poll_interval(last_ttl_ms), label="mcp X")
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import NoReturn

import anyio

from skillwire.client.session import SkillsClient
from skillwire.sources.mcp.fetch import Settings, problem_of
from skillwire.sources.mcp.upstream import Upstream

__all__ = ["follow"]

logger = logging.getLogger(__name__)


async def follow(
    upstream: Upstream,
    settings: Settings,
    refresh: Callable[[], Awaitable[None]],
    *,
    interval: Callable[[], float],
    label: str,
    checked: bool = True,
) -> NoReturn:
    """Call `refresh` after each change of `upstream`, until cancelled (see the module docstring). `checked`: False
    when what is served was only restored from disk, so a polled upstream is refreshed once at the start too."""
    failures = 0
    while True:
        opened = anyio.current_time()
        try:
            events = await _listen(upstream, settings, refresh, label)
        except Exception as err:  # no connection, a refused or dropped stream: back off, refresh, try again
            failures += 1
            pause = min(settings.poll_min_s * 2 ** min(failures - 1, 16), settings.poll_max_s)
            logger.info("%s: cannot follow its changes (%s); refreshing in %g s", label, problem_of(err), pause)
            await anyio.sleep(pause)
            await refresh()
            continue
        if events:  # the upstream closed the stream: open another (not more often than every poll_min_s)
            failures = 0
            await anyio.sleep(max(0.0, settings.poll_min_s - (anyio.current_time() - opened)))
            continue
        logger.info("%s sends no change events: refreshing every %g s", label, interval())
        if not checked:
            await refresh()
        while True:
            await anyio.sleep(interval())
            await refresh()


async def _listen(upstream: Upstream, settings: Settings, refresh: Callable[[], Awaitable[None]], label: str) -> bool:
    """Refresh on every change event until the upstream ends the stream (True); False when it sends no events."""
    async with SkillsClient.connect(
        upstream.target,
        read_timeout_seconds=settings.request_timeout_s,
        limits=settings.limits,
        auth=upstream.connection_auth(),
    ) as client:
        if not client.sends_changes:
            return False
        async with client.changes() as events:
            logger.info("%s: following its change events", label)
            await refresh()  # what changed while no stream was open
            last = anyio.current_time()
            async for _ in events:  # level-triggered: events during a refresh or the pause below are one more
                await anyio.sleep(max(0.0, settings.event_min_s - (anyio.current_time() - last)))
                last = anyio.current_time()
                await refresh()
    return True
