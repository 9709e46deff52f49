"""Bounds on long-lived requests: a share of the listen streams per caller, and no stream outliving its credential.

A `subscriptions/listen` stream (2026-07-28), like a handshake-era session's GET event stream, is a request that
lasts as long as its client keeps it open, so two things that hold for an ordinary request need saying for it:
- **Its share.** `ListenSlots` counts open listen streams in all (`--max-listen-streams`) and per caller
  (`--max-listen-streams-per-caller`; a caller is a token-file line, or a JWT's client, issuer and subject).
  Past either bound a listen request is refused the way the SDK's `ListenHandler` refuses past its total:
  JSON-RPC -32603 "Subscription limit reached" (HTTP 200), the message saying which bound. Without
  authentication every client is the same anonymous caller, so only the total applies. (A handshake-era
  session has one GET stream at most, and the sessions are bounded by `sessions.py`.)
- **Its credential.** A stream ends when its token would no longer be accepted: at the JWT's `exp` (a
  deadline on the stream, not a check at the next event), and when `Credentials.granted` says the token was
  revoked (a token-file line removed, or its subject or scopes changed), checked every `REVOCATION_CHECK_S`
  by `watch_credentials` (which is also what re-reads a changed token file when no request comes). A listen
  stream ends the way the server ends streams at shutdown, gracefully, with the listen result; a GET event
  stream's response just ends. Either way the client comes back, and with a refreshed token goes on, with a
  revoked one gets 401.

`StreamGate` (ASGI, just inside authentication) sees both kinds of request. It takes a listen request's slot
as soon as it is authenticated, before the SDK parses it: a refused one costs little more than its headers, so
a burst from one caller is turned away without holding up other requests. It knows a listen request by its
`Mcp-Method` header, which the SDK requires to appear once and to equal the body's method. `GuardedListen`
wraps the SDK's `ListenHandler` and runs each listen stream in a cancel scope its slot can end.

    slots = ListenSlots(max_streams=256, max_per_caller=16)
    server.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams, GuardedListen(sdk, slots))
    app.add_middleware(StreamGate, slots=slots, mcp_path="/mcp")   # before auth.install: inside it
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any, Protocol

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, principal_components
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import SUBSCRIPTION_ID_META_KEY, ListenHandler
from mcp_types import SubscriptionsListenRequestParams, SubscriptionsListenResult
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillwire.core.wire import INTERNAL_ERROR, error_body, request_id_of
from skillwire.service.token_file import TOKEN_FILE_ISSUER

__all__ = ["Credentials", "GuardedListen", "ListenRefused", "ListenSlots", "StreamGate", "caller_key"]

logger = logging.getLogger(__name__)

LISTEN_METHOD = "subscriptions/listen"
LIMIT_REACHED = "Subscription limit reached"  # the SDK ListenHandler's words for its total bound
REVOCATION_CHECK_S = 1.0
REFUSAL_LOG_INTERVAL_S = 10.0
MAX_REFUSED_BODY_BYTES = 64 * 1024  # read for the request id of a refused request; past it the id is null
_METHOD_HEADER = b"mcp-method"
_LISTEN = LISTEN_METHOD.encode("ascii")

CallerKey = tuple[str, ...]


class Credentials(Protocol):
    """Whoever issued the tokens streams were opened with, asked again while the streams are open."""

    def granted(self, tokens: Sequence[AccessToken]) -> list[bool]:
        """For each of `tokens`: would it still be accepted now (False: revoked, or changed)?"""
        ...


class ListenRefused(Exception):
    """A listen request past a bound; the message is the one the client is shown (as a JSON-RPC error, by
    `StreamGate`: internal, it never reaches a caller)."""


def caller_key(access: AccessToken | None) -> CallerKey | None:
    """Who a stream's share is counted against: a token-file line, or a JWT's principal; None without a token.

    A token file may give several lines one subject (one per CI job, say): each line is a caller of its own.
    A JWT's principal is its client, issuer and subject, as the SDK's session ownership has it: a token
    refreshed (a new `jti`) is the same caller.
    """
    if access is None:
        return None
    claims = access.claims or {}
    if claims.get("iss") == TOKEN_FILE_ISSUER:
        return ("token-file", str(claims.get("jti")))
    client, issuer, subject = principal_components(access)
    return ("token", client, str(issuer), str(subject))


class _Slot:
    """One listen stream (or a request about to become one): whose it is, and how to end it."""

    __slots__ = ("access", "caller", "ended", "scope")

    def __init__(self, caller: CallerKey | None, access: AccessToken | None) -> None:
        self.caller = caller
        self.access = access
        self.scope: anyio.CancelScope | None = None
        self.ended = False

    def attach(self, scope: anyio.CancelScope) -> None:
        """Run the stream in `scope`: cancelled at the token's `exp`, or at once if it was revoked meanwhile."""
        self.scope = scope
        if self.access is not None and self.access.expires_at is not None:
            scope.deadline = anyio.current_time() + (self.access.expires_at - time.time())
        if self.ended:
            scope.cancel()

    def end(self) -> None:
        self.ended = True
        if self.scope is not None:
            self.scope.cancel()


_SLOT: ContextVar[_Slot | None] = ContextVar("skillwire_listen_slot", default=None)


class ListenSlots:
    """The listen streams open (and being opened) now, counted in total and per caller; and every stream held
    open with a token (listen and GET event streams), ended when the token is no longer granted."""

    def __init__(self, *, max_streams: int, max_per_caller: int) -> None:
        self.max_streams = max_streams
        self.max_per_caller = max_per_caller
        self._listening: set[_Slot] = set()
        self._per_caller: Counter[CallerKey] = Counter()
        self._held: set[_Slot] = set()  # every slot with a token, listen streams or not
        self.refused = 0
        self._last_refusal_log = float("-inf")

    def __len__(self) -> int:
        """How many listen streams are open or being opened."""
        return len(self._listening)

    def take(self, access: AccessToken | None) -> _Slot:
        """A slot for a listen stream opened with `access`; ListenRefused past the total or the caller's share."""
        caller = caller_key(access)
        if len(self._listening) >= self.max_streams:
            self._refuse(f"all {self.max_streams} streams are open")
            raise ListenRefused(LIMIT_REACHED)
        if caller is not None and self._per_caller[caller] >= self.max_per_caller:
            self._refuse(f"a caller holds its share of {self.max_per_caller}")
            raise ListenRefused(
                f"{LIMIT_REACHED} for this caller: {self.max_per_caller} listen streams open; close one first"
            )
        slot = self.hold(access)
        slot.caller = caller
        self._listening.add(slot)
        if caller is not None:
            self._per_caller[caller] += 1
        return slot

    def hold(self, access: AccessToken | None) -> _Slot:
        """A slot, counted against no bound, for another stream held open with `access` (a GET event stream)."""
        slot = _Slot(None, access)
        if access is not None:
            self._held.add(slot)
        return slot

    def release(self, slot: _Slot) -> None:
        """Give `slot`'s room back (again: nothing)."""
        self._held.discard(slot)
        if slot not in self._listening:
            return
        self._listening.discard(slot)
        if slot.caller is not None:
            self._per_caller[slot.caller] -= 1
            if self._per_caller[slot.caller] <= 0:
                del self._per_caller[slot.caller]

    def end_revoked(self, credentials: Credentials) -> int:
        """End every stream whose token `credentials` no longer grant; how many were ended."""
        held = [slot for slot in self._held if slot.access is not None and not slot.ended]
        if not held:
            return 0
        answers = credentials.granted([slot.access for slot in held if slot.access is not None])
        revoked = [slot for slot, granted in zip(held, answers, strict=True) if not granted]
        for slot in revoked:
            slot.end()
        if revoked:
            logger.info("ended %d open stream(s): their token was revoked or changed", len(revoked))
        return len(revoked)

    async def watch_credentials(self, credentials: Credentials) -> None:
        """Every `REVOCATION_CHECK_S`, end the streams whose token was revoked; runs until cancelled."""
        while True:
            await anyio.sleep(REVOCATION_CHECK_S)
            if self._held:
                self.end_revoked(credentials)

    def _refuse(self, why: str) -> None:
        self.refused += 1
        now = time.monotonic()
        if now - self._last_refusal_log >= REFUSAL_LOG_INTERVAL_S:
            self._last_refusal_log = now
            logger.warning("refusing listen streams: %s (%d refused so far)", why, self.refused)


class GuardedListen:
    """The SDK's `ListenHandler`, with each stream run in a cancel scope its slot (`StreamGate`) can end.

    A stream ended that way (revoked, expired) closes gracefully: the listen result, stamped with the
    subscription id, is its last frame, as at shutdown. A request with no slot (stdio: one client, no
    token) is served as the SDK serves it.
    """

    def __init__(self, handler: ListenHandler, slots: ListenSlots) -> None:
        self.handler = handler
        self.slots = slots

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        slot = _SLOT.get()
        if slot is None:
            return await self.handler(ctx, params)
        with anyio.CancelScope() as scope:
            slot.attach(scope)
            return await self.handler(ctx, params)
        logger.debug("listen stream %r ended: its token expired or was revoked", ctx.request_id)
        return SubscriptionsListenResult(_meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id})


class StreamGate:
    """ASGI middleware for the MCP requests that stay open (see the module docstring), inside authentication.

    A listen request (`Mcp-Method: subscriptions/listen`) takes its slot here, or is refused here, with the
    request's id when its body is small JSON that has one. A GET (a handshake-era session's event stream)
    opened with a token runs in a cancel scope that ends it with its token.
    """

    def __init__(self, app: ASGIApp, *, slots: ListenSlots, mcp_path: str) -> None:
        self.app = app
        self.slots = slots
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.mcp_path:
            await self.app(scope, receive, send)
            return
        user = scope.get("user")
        access = user.access_token if isinstance(user, AuthenticatedUser) else None
        if scope["method"] == "GET" and access is not None:
            await self._event_stream(access, scope, receive, send)
        elif scope["method"] == "POST" and any(k == _METHOD_HEADER and v == _LISTEN for k, v in scope["headers"]):
            await self._listen(access, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _listen(self, access: AccessToken | None, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            slot = self.slots.take(access)
        except ListenRefused as refusal:
            # The SDK ListenHandler's code for its total bound, with the request's id when it can be told.
            body = error_body(await _request_id(receive), INTERNAL_ERROR, str(refusal))
            await JSONResponse(body)(scope, receive, send)
            return
        token = _SLOT.set(slot)  # for GuardedListen, which runs in this request's context
        try:
            await self.app(scope, receive, send)
        finally:
            _SLOT.reset(token)
            self.slots.release(slot)

    async def _event_stream(self, access: AccessToken, scope: Scope, receive: Receive, send: Send) -> None:
        slot = self.slots.hold(access)
        started = finished = False

        async def watch(message: Message) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                finished = True
            await send(message)

        try:
            with anyio.CancelScope() as cancel:
                slot.attach(cancel)
                await self.app(scope, receive, watch)
            if cancel.cancelled_caught and not finished:
                # The token expired or was revoked: end the response properly (an SSE stream just ends).
                if started:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                else:
                    challenge = 'Bearer error="invalid_token", error_description="the token expired or was revoked"'
                    headers = {"WWW-Authenticate": challenge}  # RFC 6750 §3: every 401 carries its challenge
                    await JSONResponse({"error": "invalid_token"}, 401, headers)(scope, receive, send)
        finally:
            self.slots.release(slot)


async def _request_id(receive: Receive) -> str | int | None:
    """The JSON-RPC id of the request whose body `receive` gives, read up to MAX_REFUSED_BODY_BYTES; None if none."""
    body = bytearray()
    while len(body) <= MAX_REFUSED_BODY_BYTES:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    else:
        return None
    try:
        return request_id_of(json.loads(bytes(body)))
    except ValueError:
        return None
