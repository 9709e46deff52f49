"""Hot reload: watch a folder source, rebuild the catalog, and tell connected clients what changed.

`watch_and_rebuild` follows the source's roots with `watchfiles` and calls
`SkillService.rebuild()` after each burst of changes. `ChangeNotifier` sends
`notifications/resources/list_changed` when a rebuild changed what is served:
to handshake-era sessions on their standalone channel, and to 2026-07-28
clients on the `subscriptions/listen` streams they opened (plus
`notifications/resources/updated` for each changed or removed file URI, since
serving `subscriptions/listen` makes the SDK declare `resources.subscribe`).
Without a watcher, SIGHUP (`rescan_on_sighup`) or `await service.rebuild()` rescans.

    live = LiveReload(extension.service)
    live.install(server)
    async with live.running(): await serve(server)
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskStatus
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourcesListChanged, ResourceUpdated
from mcp_types import SubscriptionsListenRequestParams
from watchfiles import awatch

from skillwire.catalog import Catalog
from skillwire.server.limits import DEFAULT_MAX_LISTEN_STREAMS
from skillwire.server.service import SkillService

logger = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_MS = 1_600
"""Longest a burst of changes is gathered before one rebuild (watchfiles' `debounce`)."""
DEFAULT_STEP_MS = 50
"""A burst ends after this long without a new change (watchfiles' `step`)."""
_IDLE_TIMEOUT_MS = 500  # how soon the watcher reports that it is up (its first, possibly empty, batch)
_RESTART_DELAY_S = 1.0  # after the watcher itself fails (inotify limits, ...): wait, then watch again
_MAX_RESTART_DELAY_S = 30.0
_SEND_TIMEOUT_S = 5.0  # a handshake-era client that stops reading must not stall everyone else's notification
MAX_REMEMBERED_SESSIONS = 1_024
LISTEN_METHOD = "subscriptions/listen"


async def watch_and_rebuild(
    service: SkillService,
    *,
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    step_ms: int = DEFAULT_STEP_MS,
    task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Rebuild `service`'s catalog after every burst of file changes under its source's roots; runs until cancelled.

    A burst (writes closer together than `step_ms`, for at most `debounce_ms`) is one
    rebuild; changes made while a rebuild runs are gathered into the next one, so the
    last rebuild always starts after the last change and the catalog ends consistent
    with the disk. Once the watcher is up, one catch-up rebuild covers changes made
    between the service's first scan and now; `task_status.started()` follows it.

    A rebuild re-indexes only the skills holding the changed paths (the catch-up is a
    rescan, which still reads only files whose stat changed). A failed rebuild is logged and the watcher carries on. A
    root that does not exist is reported once and watched when it appears (the
    others are watched meanwhile); a failed watcher is restarted after a growing
    pause, with a one-line warning. Cancellation stops it cleanly.
    """
    all_roots = _roots(service)
    started = False
    reported: set[Path] = set()  # roots already reported as not watchable, so each is said once
    delay = _RESTART_DELAY_S
    previous: tuple[Path, ...] | None = None
    while True:
        roots = _watchable(all_roots)
        for root in sorted(set(all_roots) - set(roots) - reported):
            logger.warning("not watching %s: no such folder (it is watched once it exists; SIGHUP rescans)", root)
        reported = set(all_roots) - set(roots)
        if not roots:
            if previous:
                await _rebuild(service)  # the last watched root went away
            previous = roots
            if not started:
                started = True
                task_status.started()
            await anyio.sleep(delay)
            continue
        previous = roots
        catch_up = True  # once this watcher is up: whatever changed while nothing watched
        try:
            batches = awatch(
                *roots,
                watch_filter=None,  # the source decides what is served; any change may matter
                debounce=debounce_ms,
                step=step_ms,
                rust_timeout=_IDLE_TIMEOUT_MS,
                yield_on_timeout=True,
            )
            async with aclosing(batches):  # a `break` releases the native watcher at once, not at GC
                async for changes in batches:
                    if changes or catch_up:
                        logger.debug("%d file changes under %s; rebuilding", len(changes), _show(roots))
                        await _rebuild(service, None if catch_up else sorted({path for _, path in changes}))
                        catch_up = False
                    if not started:
                        started = True
                        task_status.started()
                    delay = _RESTART_DELAY_S
                    if _watchable(all_roots) != roots:
                        break  # a root appeared or went away: watch the new set (and catch up once it is up)
        except Exception as err:  # the watcher itself failed: keep serving, try again
            logger.warning("watching %s stopped (%s); trying again in %.0fs", _show(roots), err, delay)
            logger.debug("watcher failure", exc_info=True)
            await anyio.sleep(delay)
            delay = min(delay * 2, _MAX_RESTART_DELAY_S)


def _watchable(roots: tuple[Path, ...]) -> tuple[Path, ...]:
    return tuple(r for r in roots if r.is_dir())


def _show(roots: tuple[Path, ...]) -> str:
    return ", ".join(map(str, roots))


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


def _roots(service: SkillService) -> tuple[Path, ...]:
    roots = getattr(service.source, "roots", None)
    if not roots:
        raise TypeError(f"cannot watch {type(service.source).__name__}: it has no `roots` to follow")
    return tuple(Path(r) for r in roots)


# -- telling clients ---------------------------------------------------------------------------------------------------


def _changed_files(before: Catalog, after: Catalog) -> tuple[bool, list[str]]:
    """Whether what clients can observe differs between two catalogs, and the file URIs of `before` that
    changed or went away. A skill object shared by both (a rebuild keeps unchanged skills) is skipped unread."""
    old, new = set(before.skill_uris), set(after.skill_uris)
    differs = old != new
    gone: dict[str, str] = {}
    kept: dict[str, str] = {}
    for uri in old | new:
        a = before.skill(uri) if uri in old else None
        b = after.skill(uri) if uri in new else None
        if a is b:
            continue
        if a is not None:
            gone.update((f.uri, f.digest) for f in a.files)
        if b is not None:
            kept.update((f.uri, f.digest) for f in b.files)
        differs = differs or a is None or b is None or a.to_entry() != b.to_entry()
    return differs, sorted(uri for uri, digest in gone.items() if kept.get(uri) != digest)


class ChangeNotifier:
    """Sends `notifications/resources/list_changed` to connected clients after the catalog changed.

    Handshake-era sessions are remembered from their `initialize` request (the SDK
    keeps no registry of connections; a request's `ctx.session` reaches its
    connection's standalone channel, so it still works after the request) and get
    the notification on that channel; `initialize` results declare
    `resources.listChanged`. At most `MAX_REMEMBERED_SESSIONS` are kept, oldest
    dropped first: the SDK does not say when a connection closes, and a send to a
    closed one is dropped silently. 2026-07-28 clients get it on the
    `subscriptions/listen` streams they open (the SDK's `ListenHandler`, which also
    makes the SDK declare `listChanged` at that era).
    """

    def __init__(self, service: SkillService, *, max_listen_streams: int = DEFAULT_MAX_LISTEN_STREAMS) -> None:
        self.service = service
        self.bus = InMemorySubscriptionBus()
        # Beyond the cap a listen request is refused before it is acknowledged (the SDK's ListenHandler).
        self.listen = ListenHandler(self.bus, max_subscriptions=max_listen_streams)
        self._sessions: dict[int, ServerSession] = {}
        self._published = service.catalog
        self._wake: anyio.Event | None = None
        service.on_change(self._on_change)

    def install(self, server: Server[Any]) -> None:
        """Serve `subscriptions/listen` on `server` and remember its handshake-era sessions."""
        if server.get_request_handler(LISTEN_METHOD) is None:
            server.add_request_handler(LISTEN_METHOD, SubscriptionsListenRequestParams, self.listen)
        server.middleware.append(self.middleware)

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            self._remember(ctx.session)
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict) and isinstance(capabilities.get("resources"), dict):
                capabilities["resources"]["listChanged"] = True
        return result

    def _remember(self, session: ServerSession) -> None:
        self._sessions[id(session)] = session
        while len(self._sessions) > MAX_REMEMBERED_SESSIONS:
            del self._sessions[next(iter(self._sessions))]

    def _on_change(self, catalog: Catalog) -> None:
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> None:
        """Publish each catalog change until cancelled (bursts of rebuilds are coalesced)."""
        self._wake = anyio.Event()
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()  # before publishing: a change made meanwhile wakes the next round
            try:
                await self.publish(self.service.catalog)
            except Exception:
                logger.exception("telling clients about a catalog change failed")

    async def publish(self, catalog: Catalog) -> None:
        """Notify every client if what `catalog` serves differs from what was last published."""
        before, self._published = self._published, catalog
        differs, updated = _changed_files(before, catalog)
        if not differs:
            return
        logger.info("catalog changed: notifying %d handshake-era sessions and listen streams", len(self._sessions))
        for session in list(self._sessions.values()):
            with anyio.move_on_after(_SEND_TIMEOUT_S):
                try:
                    await session.send_resource_list_changed()
                except Exception:  # that session is gone or broken; the others still hear about it
                    logger.debug("could not notify a session", exc_info=True)
        await self.bus.publish(ResourcesListChanged())
        for uri in updated:
            await self.bus.publish(ResourceUpdated(uri=uri))

    def close(self) -> None:
        """End open listen streams gracefully (at shutdown, so the HTTP server need not wait for them)."""
        self.listen.close()


class LiveReload:
    """Notifications, SIGHUP rescans and (unless `watch=False`) the file watcher for one service."""

    def __init__(
        self,
        service: SkillService,
        *,
        watch: bool = True,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        step_ms: int = DEFAULT_STEP_MS,
        max_listen_streams: int = DEFAULT_MAX_LISTEN_STREAMS,
    ) -> None:
        self.service = service
        self.watch = watch
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.notifier = ChangeNotifier(service, max_listen_streams=max_listen_streams)

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
                # Not awaited: serving starts at once, and the watcher's catch-up rebuild
                # covers whatever changed before it was up.
                tg.start_soon(self._watch)
            try:
                yield
            finally:
                self.notifier.close()
                tg.cancel_scope.cancel()

    async def _watch(self) -> None:
        await watch_and_rebuild(self.service, debounce_ms=self.debounce_ms, step_ms=self.step_ms)
