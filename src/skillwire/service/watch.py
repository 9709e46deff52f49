"""Hot reload: watch a source, rebuild the catalog, and tell connected clients what changed (`notify.py`).

`watch_and_rebuild` lets the source follow its own changes (`WatchableSource`) and calls `SkillService.rebuild()`
after each burst of them; `LiveReload` runs it with the `ChangeNotifier` and SIGHUP rescans
(`rescan_on_sighup`; without a watcher, SIGHUP or `await service.rebuild()` rescans).

    live = LiveReload(extension.service)
    live.install(server)
    async with live.running(): await serve(server)
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskStatus
from mcp.server.lowlevel import Server

from skillwire.core.scopes import CallerResolver
from skillwire.server.skill_service import SkillService
from skillwire.service.limits import DEFAULT_MAX_LISTEN_STREAMS, DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER
from skillwire.service.notify import ChangeNotifier
from skillwire.sources.port import DEFAULT_DEBOUNCE_MS, DEFAULT_STEP_MS, WatchableSource, WatchPace

logger = logging.getLogger(__name__)


async def watch_and_rebuild(
    service: SkillService,
    *,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    step_ms: int = DEFAULT_STEP_MS,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Rebuild `service`'s catalog whenever its source says it changed; runs until cancelled.

    The source follows its own changes (`WatchableSource`: a folder's files, a git branch), gathering a burst
    (changes closer together than `step_ms`, for at most `debounce_ms`) into one rebuild; each rebuild
    re-indexes only what changed when the source says where. A failed rebuild is logged and the previous
    catalog kept. TypeError if the source cannot be watched.
    """
    source = service.source
    if not isinstance(source, WatchableSource):
        raise TypeError(f"cannot watch {source.label}: it does not follow its own changes")

    async def rebuild(places: Sequence[str] | None) -> None:
        await _rebuild(service, None if places is None else list(places))

    await source.watch(rebuild, pace=WatchPace(debounce_ms, step_ms), task_status=task_status)


async def rescan_on_sighup(service: SkillService, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Rebuild `service`'s catalog on each SIGHUP (POSIX; elsewhere this only reports started)."""
    if not hasattr(signal, "SIGHUP"):
        task_status.started()
        return
    with anyio.open_signal_receiver(signal.SIGHUP) as signals:
        task_status.started()
        async for _ in signals:
            logger.info("SIGHUP: rescanning")
            await _rebuild(service)


async def _rebuild(service: SkillService, paths: list[str] | None = None) -> None:
    """Rescan (or, given the changed `paths`, re-index only what they touch); never raises."""
    try:
        await service.rebuild(paths=paths)
    except Exception:  # a bad rebuild keeps the previous snapshot; the next change tries again
        logger.exception("rebuilding the catalog failed; still serving the previous one")


# -- telling clients ---------------------------------------------------------------------------------------------------


class LiveReload:
    """Notifications, SIGHUP rescans and (unless `watch=False`) the file watcher for one service."""

    def __init__(
        self,
        service: SkillService,
        *,
        watch: bool = True,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        step_ms: int = DEFAULT_STEP_MS,
        callers: CallerResolver | None = None,
        max_listen_streams: int = DEFAULT_MAX_LISTEN_STREAMS,
        max_listen_streams_per_caller: int = DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER,
        announce: frozenset[str] = frozenset(),
    ) -> None:
        """`announce`: "tools" and/or "prompts" when the server offers skills as those too (`ChangeNotifier`)."""
        self.service = service
        self.watch = watch and isinstance(service.source, WatchableSource)  # a source that cannot: SIGHUP only
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.notifier = ChangeNotifier(
            service,
            callers=callers,
            max_listen_streams=max_listen_streams,
            max_listen_streams_per_caller=max_listen_streams_per_caller,
            announce=announce,
        )

    def install(self, server: Server[Any]) -> None:
        self.notifier.install(server)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run the background tasks while the body serves; cancel them when it returns."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.notifier.run)
            await tg.start(rescan_on_sighup, self.service)
            if self.service.restored and not self.watch:
                tg.start_soon(_rebuild, self.service)  # check the restored snapshot against the disk
            if self.watch:
                # Not awaited: serving starts (and the HTTP port opens) as soon as the catalog is built. The
                # watcher sets itself up meanwhile off the event loop (watchfiles walks every folder under the
                # roots in a worker thread), then rescans once to catch up with whatever changed before it was
                # up, so a change made after the first answer is never missed, only served a little later.
                tg.start_soon(self._watch)
            try:
                yield
            finally:
                self.notifier.close()
                tg.cancel_scope.cancel()

    async def _watch(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        await watch_and_rebuild(
            self.service, debounce_ms=self.debounce_ms, step_ms=self.step_ms, task_status=task_status
        )
