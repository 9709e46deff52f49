"""Hot reload: watch a folder source, rebuild the catalog, and tell connected clients what changed.

`watch_and_rebuild` follows the source's roots with `watchfiles` and calls
`SkillService.rebuild()` after each burst of changes. `ChangeNotifier` sends
`notifications/resources/list_changed` when a rebuild changed what is served:
to handshake-era sessions on their standalone channel, and to 2026-07-28
clients on the `subscriptions/listen` streams they opened (plus
`notifications/resources/updated` for each changed or removed file URI, since
serving `subscriptions/listen` makes the SDK declare `resources.subscribe`).
With a scopes policy (`callers`), each client is told only about changes to what
it can see, and never a URI it cannot see.
Without a watcher, SIGHUP (`rescan_on_sighup`) or `await service.rebuild()` rescans.

    live = LiveReload(extension.service)
    live.install(server)
    async with live.running(): await serve(server)
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskStatus
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
)
from mcp_types import SubscriptionsListenRequestParams
from watchfiles import awatch

from skillwire.catalog import Catalog
from skillwire.scopes import Caller, CallerResolver, ScopePolicy, Visibility
from skillwire.server.limits import DEFAULT_MAX_LISTEN_STREAMS
from skillwire.server.service import Listing, SkillService

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
_UNDECODABLE = "Unable to decode path"  # watchfiles' error for a path that is not UTF-8
_UNDECODABLE_RESCAN_S = 10.0  # how often to rescan while such a folder keeps the watcher from starting


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
    degraded = False  # rescanning on a timer: watchfiles cannot start under a folder whose name is not UTF-8
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
        up = False  # this watcher yielded once: it is set up
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
                    up = True
                    if changes or catch_up:
                        logger.debug("%d file changes under %s; rebuilding", len(changes), _show(roots))
                        await _rebuild(service, None if catch_up else sorted({path for _, path in changes}))
                        catch_up = False
                    if not started:
                        started = True
                        task_status.started()
                    delay = _RESTART_DELAY_S
                    if degraded:
                        degraded = False
                        logger.warning("watching %s again", _show(roots))
                    if _watchable(all_roots) != roots:
                        break  # a root appeared or went away: watch the new set (and catch up once it is up)
        except Exception as err:
            if _undecodable(err) and up:
                # watchfiles stops on a changed path whose name is not UTF-8; the change is real, so watch
                # again at once and let the catch-up rescan find it (the source refuses the skill holding it).
                logger.info("a path whose name is not UTF-8 changed under %s; rescanning", _show(roots))
                continue
            if _undecodable(err):
                # watchfiles cannot even start while a folder under a root has such a name: rescan on a
                # timer instead, and try the watcher again each time (it is back once the folder is renamed).
                if not degraded:
                    logger.warning(
                        "cannot watch %s: a folder name under it is not UTF-8 (see the refusals); rescanning "
                        "every %.0fs until it is renamed",
                        _show(roots),
                        _UNDECODABLE_RESCAN_S,
                    )
                degraded = True
                await _rebuild(service)
                if not started:
                    started = True
                    task_status.started()
                await anyio.sleep(_UNDECODABLE_RESCAN_S)
                continue
            # the watcher itself failed: keep serving, try again
            logger.warning("watching %s stopped (%s); trying again in %.0fs", _show(roots), err, delay)
            logger.debug("watcher failure", exc_info=True)
            await anyio.sleep(delay)
            delay = min(delay * 2, _MAX_RESTART_DELAY_S)


def _undecodable(err: BaseException) -> bool:
    """True if watchfiles failed on a path whose name is not UTF-8 (perhaps inside an exception group)."""
    if isinstance(err, BaseExceptionGroup):
        return any(_undecodable(e) for e in err.exceptions)
    return _UNDECODABLE in str(err)


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


def _changed_files(before: Listing, after: Listing) -> tuple[bool, list[str]]:
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

    def __init__(
        self,
        service: SkillService,
        *,
        callers: CallerResolver | None = None,
        max_listen_streams: int = DEFAULT_MAX_LISTEN_STREAMS,
    ) -> None:
        self.service = service
        self.callers = callers
        self.bus: InMemorySubscriptionBus | _CallerBus = (
            InMemorySubscriptionBus() if callers is None else _CallerBus(callers)
        )
        # Beyond the cap a listen request is refused before it is acknowledged (the SDK's ListenHandler).
        self.listen = ListenHandler(self.bus, max_subscriptions=max_listen_streams)
        self._sessions: dict[int, ServerSession] = {}
        self._audience: dict[int, _Receiver] = {}  # with a policy: who each remembered session is
        self._published = service.catalog
        self._wake: anyio.Event | None = None
        service.on_change(self._on_change)
        if callers is not None:
            callers.on_change(self._on_policy)

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
        if self.callers is not None:  # in the initialize request's context: its caller
            self._audience[id(session)] = _Receiver.of(self.callers, session)
        while len(self._sessions) > MAX_REMEMBERED_SESSIONS:
            oldest = next(iter(self._sessions))
            del self._sessions[oldest]
            self._audience.pop(oldest, None)

    def _on_change(self, catalog: Catalog) -> None:
        if self._wake is not None:
            self._wake.set()

    def _on_policy(self, policy: ScopePolicy) -> None:
        self._on_change(self.service.catalog)

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
        if self.callers is not None:
            await self._publish_scoped(before, catalog)
            return
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

    async def _publish_scoped(self, before: Catalog, after: Catalog) -> None:
        """Tell each client what changed in its own view: nothing if its view is the same, no URI it cannot see.

        A client's view is compared with the one it was last told about, so a policy change that
        hides or shows skills to it is news as well.
        """
        assert self.callers is not None
        bus = self.bus
        assert isinstance(bus, _CallerBus)
        diffs: dict[tuple[object, object], tuple[bool, list[str]]] = {}
        for receiver in [*self._audience.values(), *bus.receivers()]:
            then, now = receiver.seen, self.callers.visibility(receiver.caller)
            receiver.seen = now
            pair = (_key(then), _key(now))
            if pair not in diffs:
                diffs[pair] = _changed_files(self.service.view(before, then), self.service.view(after, now))
            differs, updated = diffs[pair]
            if not differs:
                continue
            if receiver.session is not None:
                with anyio.move_on_after(_SEND_TIMEOUT_S):
                    try:
                        await receiver.session.send_resource_list_changed()
                    except Exception:  # that session is gone or broken; the others still hear about it
                        logger.debug("could not notify a session", exc_info=True)
            if receiver.listener is not None:
                events: list[ServerEvent] = [ResourcesListChanged(), *(ResourceUpdated(uri=uri) for uri in updated)]
                for event in events:
                    bus.deliver(receiver, event)
                await anyio.lowlevel.checkpoint()
        logger.info("catalog or scopes changed: %d views compared", len(diffs))

    def close(self) -> None:
        """End open listen streams gracefully (at shutdown, so the HTTP server need not wait for them)."""
        self.listen.close()


def _key(visibility: Visibility | None) -> object:
    return None if visibility is None else visibility.key


class _Receiver:
    """A client told about changes under a policy: who it is, and the view it was last told about."""

    __slots__ = ("caller", "listener", "seen", "session")

    def __init__(
        self,
        caller: Caller,
        seen: Visibility | None,
        session: ServerSession | None = None,
        listener: Callable[[ServerEvent], None] | None = None,
    ) -> None:
        self.caller = caller
        self.seen = seen
        self.session = session
        self.listener = listener

    @classmethod
    def of(
        cls,
        callers: CallerResolver,
        session: ServerSession | None = None,
        listener: Callable[[ServerEvent], None] | None = None,
    ) -> _Receiver:
        """The caller of the request running now (initialize, or subscriptions/listen) as a receiver."""
        caller = callers.caller()
        return cls(caller, callers.visibility(caller), session, listener)


class _CallerBus:
    """A `SubscriptionBus` that knows who opened each listen stream, so each is told only about its own view.

    The SDK's `ListenHandler` subscribes from inside the `subscriptions/listen` request, so
    `subscribe` runs in that request's context, where the caller's access token is.
    """

    def __init__(self, callers: CallerResolver) -> None:
        self._callers = callers
        self._receivers: dict[object, _Receiver] = {}

    def receivers(self) -> list[_Receiver]:
        return list(self._receivers.values())

    async def publish(self, event: ServerEvent) -> None:
        """Nothing is broadcast to everyone under a policy: `ChangeNotifier` delivers per receiver."""
        await anyio.lowlevel.checkpoint()

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        token = object()
        self._receivers[token] = _Receiver.of(self._callers, listener=listener)

        def unsubscribe() -> None:
            self._receivers.pop(token, None)

        return unsubscribe

    def deliver(self, receiver: _Receiver, event: ServerEvent) -> None:
        if receiver.listener is None:
            return
        try:
            receiver.listener(event)
        except Exception:  # fan-out boundary, as the SDK's bus: one bad listener must not starve the others
            logger.exception("subscription listener raised; continuing")


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
    ) -> None:
        self.service = service
        self.watch = watch
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.notifier = ChangeNotifier(service, callers=callers, max_listen_streams=max_listen_streams)

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
