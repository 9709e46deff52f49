"""Tell connected clients what a catalog change changed: `ChangeNotifier`.

It sends `notifications/resources/list_changed` when a rebuild changed what is served: to handshake-era sessions
on their standalone channel, and to 2026-07-28 clients on the `subscriptions/listen` streams they opened (plus
`notifications/resources/updated` for each changed or removed file URI, since serving `subscriptions/listen` makes
the SDK declare `resources.subscribe`). With `announce` ("tools", "prompts": the server also offers skills as tools
or prompts), the same change sends `notifications/tools/list_changed` and `notifications/prompts/list_changed` too,
on the same channels. With a scopes policy (`callers`), each client is told only about changes to what it can see,
and never a URI it cannot see. `watch.LiveReload` runs it beside the watcher.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types import SubscriptionsListenRequestParams

from skillwire.core.catalog import Catalog
from skillwire.core.scopes import Caller, CallerResolver, ScopePolicy, Visibility
from skillwire.server.skill_service import Listing, SkillService
from skillwire.service.limits import DEFAULT_MAX_LISTEN_STREAMS, DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER
from skillwire.service.listen_limits import GuardedListen, ListenSlots

logger = logging.getLogger(__name__)
_SEND_TIMEOUT_S = 5.0  # a handshake-era client that stops reading must not stall everyone else's notification
MAX_REMEMBERED_SESSIONS = 1_024
LISTEN_METHOD = "subscriptions/listen"
ANNOUNCEABLE = frozenset({"tools", "prompts"})
"""What else a catalog change can be news for: skills offered as tools (`serve --tools`) or prompts."""


def _changed_files(before: Listing, after: Listing) -> tuple[bool, list[str]]:
    """Whether what clients can observe differs between two catalogs, and the file URIs of `before` that
    changed or went away. A skill object shared by both (a rebuild keeps unchanged skills) is skipped unread.

    Run in a worker thread: after a warm restart's catch-up every skill is a new object, and comparing 100,000 of
    them (building those still deferred) held the event loop for seconds."""
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

    `announce` (members of `ANNOUNCEABLE`): the server's tools or prompts are made from the catalog, so the same
    change is also sent as `notifications/tools/list_changed` / `notifications/prompts/list_changed` (the listen
    events `ToolsListChanged` / `PromptsListChanged`), to the same clients, and `initialize` declares their
    `listChanged` as well.
    """

    def __init__(
        self,
        service: SkillService,
        *,
        callers: CallerResolver | None = None,
        max_listen_streams: int = DEFAULT_MAX_LISTEN_STREAMS,
        max_listen_streams_per_caller: int = DEFAULT_MAX_LISTEN_STREAMS_PER_CALLER,
        announce: frozenset[str] = frozenset(),
    ) -> None:
        unknown = set(announce) - ANNOUNCEABLE
        if unknown:
            raise ValueError(f"announce takes {sorted(ANNOUNCEABLE)}, not {sorted(unknown)}")
        self.service = service
        self.callers = callers
        self.announce = frozenset(announce)
        self.bus: InMemorySubscriptionBus | _CallerBus = (
            InMemorySubscriptionBus() if callers is None else _CallerBus(callers)
        )
        # Beyond the cap a listen request is refused before it is acknowledged (the SDK's ListenHandler); over
        # HTTP `slots` refuses first, per caller too, and ends streams whose token expired or was revoked.
        self.listen = ListenHandler(self.bus, max_subscriptions=max_listen_streams)
        self.slots = ListenSlots(max_streams=max_listen_streams, max_per_caller=max_listen_streams_per_caller)
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
            server.add_request_handler(
                LISTEN_METHOD, SubscriptionsListenRequestParams, GuardedListen(self.listen, self.slots)
            )
        server.middleware.append(self.middleware)

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            self._remember(ctx.session)
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict):
                for kind in ("resources", *sorted(self.announce)):
                    if isinstance(capabilities.get(kind), dict):
                        capabilities[kind]["listChanged"] = True
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
        differs, updated = await anyio.to_thread.run_sync(_changed_files, before, catalog)
        if not differs:
            return
        logger.info("catalog changed: notifying %d handshake-era sessions and listen streams", len(self._sessions))
        for session in list(self._sessions.values()):
            await self._tell(session)
        for event in self._events(updated):
            await self.bus.publish(event)

    async def _tell(self, session: ServerSession) -> None:
        """Send a handshake-era session the list_changed notifications (resources, and what is announced)."""
        sends = [session.send_resource_list_changed]
        if "tools" in self.announce:
            sends.append(session.send_tool_list_changed)
        if "prompts" in self.announce:
            sends.append(session.send_prompt_list_changed)
        with anyio.move_on_after(_SEND_TIMEOUT_S):
            try:
                for send in sends:
                    await send()
            except Exception:  # that session is gone or broken; the others still hear about it
                logger.debug("could not notify a session", exc_info=True)

    def _events(self, updated: list[str]) -> list[ServerEvent]:
        """The listen events for one change: the list changes (resources, and what is announced), then each
        changed file URI. A stream gets only the kinds it asked for (the SDK's `ListenHandler` filters)."""
        events: list[ServerEvent] = [ResourcesListChanged()]
        if "tools" in self.announce:
            events.append(ToolsListChanged())
        if "prompts" in self.announce:
            events.append(PromptsListChanged())
        return [*events, *(ResourceUpdated(uri=uri) for uri in updated)]

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
                views = (self.service.view(before, then), self.service.view(after, now))
                diffs[pair] = await anyio.to_thread.run_sync(_changed_files, *views)
            differs, updated = diffs[pair]
            if not differs:
                continue
            if receiver.session is not None:
                await self._tell(receiver.session)
            if receiver.listener is not None:
                for event in self._events(updated):
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
