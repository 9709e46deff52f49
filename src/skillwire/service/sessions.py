"""A cap on handshake-era MCP sessions that a flood cannot turn into a lockout.

The SDK's session manager refuses every new session with 503 once `max_sessions` are open, and keeps
each one until it has been idle for `session_idle_timeout`: 10,000 `initialize` calls lock out every
later handshake-era client for half an hour. `SessionCap` sits in front of it and, when a new session
would pass the cap, ends the least recently used session that has no request in flight, the way a
client does: a DELETE for that session (the SDK's own termination path, with the credential that
opened it). Only when every session is busy is a new one refused (503).

With authentication on it runs after it (`run.http_app` adds it inside `auth.install`'s middleware): a request
answered 401 or 403 never reaches it, so it cannot end a live session to make room for a session it will never
open. A request naming a session that another principal opened (the SDK answers it 404, as an unknown session)
moves nothing either: the session stays counted and keeps its place.

    app.add_middleware(SessionCap, manager=manager, mcp_path="/mcp", max_sessions=1_000, idle_timeout=600)
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, AuthorizationContext, authorization_context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillwire.core.wire import INTERNAL_ERROR, error_body

logger = logging.getLogger(__name__)

_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"


@dataclass(slots=True)
class _Session:
    """What the cap knows of one open session (mutable: updated as its requests come and go)."""

    user: Any
    owner: AuthorizationContext | None  # the principal that opened it (None: no authentication)
    headers: list[tuple[bytes, bytes]]
    last_used: float = field(default_factory=time.monotonic)
    in_flight: int = 0


class SessionCap:
    """ASGI middleware: at most `max_sessions` handshake-era sessions, least recently used idle one evicted first."""

    def __init__(
        self,
        app: ASGIApp,
        manager: StreamableHTTPSessionManager,
        *,
        mcp_path: str,
        max_sessions: int,
        idle_timeout: float,
    ) -> None:
        self.app = app
        self.manager = manager
        self.mcp_path = mcp_path
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: OrderedDict[str, _Session] = OrderedDict()  # least recently used first
        self._opening = 0
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.mcp_path:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        session_id = headers.get(_SESSION_HEADER)
        version = headers.get(_VERSION_HEADER)
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.app(scope, receive, send)  # the stateless 2026-07-28 path opens no session
            return
        if session_id is not None:
            await self._serve_existing(session_id.decode("latin-1"), scope, receive, send)
        elif scope["method"] == "POST":
            await self._open(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _serve_existing(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._sessions.get(session_id)
        if session is None or _principal(scope) != session.owner:
            # Unknown, expired, or not this caller's: the SDK answers 404, and the session (if any) is untouched.
            await self.app(scope, receive, send)
            return
        self._sessions.move_to_end(session_id)
        session.in_flight += 1
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            session.in_flight -= 1
            session.last_used = time.monotonic()
            if status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300):
                self._sessions.pop(session_id, None)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._forget_expired()
        while len(self._sessions) + self._opening >= self.max_sessions:
            if not await self._evict_one():
                logger.warning("refusing a new session: all %d sessions are busy", self.max_sessions)
                response = JSONResponse(
                    error_body(None, INTERNAL_ERROR, "Too many open sessions"),
                    status_code=503,
                    headers={"Retry-After": "5"},
                )
                await response(scope, receive, send)
                return
        self._opening += 1
        opened: str | None = None

        async def watch(message: Message) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers", ()):
                    if key.lower() == _SESSION_HEADER:
                        opened = value.decode("latin-1")
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening -= 1
            if opened is not None:
                host = [(k, v) for k, v in scope["headers"] if k == b"host"]
                self._sessions[opened] = _Session(user=scope.get("user"), owner=_principal(scope), headers=host)

    def _forget_expired(self) -> None:
        """Drop sessions the SDK has already ended for idleness (no DELETE needed)."""
        horizon = time.monotonic() - self.idle_timeout
        for session_id, session in list(self._sessions.items()):
            if session.last_used >= horizon:
                break  # ordered by last use: the rest are newer
            if session.in_flight == 0:
                del self._sessions[session_id]

    async def _evict_one(self) -> bool:
        """End the least recently used session with nothing in flight; False if every session is busy."""
        session_id = next((key for key, value in self._sessions.items() if value.in_flight == 0), None)
        if session_id is None:
            return False
        session = self._sessions[session_id]
        del self._sessions[session_id]
        self.evicted += 1
        if self.evicted == 1 or self.evicted % 1000 == 0:
            logger.warning(
                "%d sessions open (the cap): ended the least recently used idle one (%d so far)",
                self.max_sessions,
                self.evicted,
            )
        await self._delete(session_id, session)
        return True

    async def _delete(self, session_id: str, session: _Session) -> None:
        """The SDK's own DELETE path, with the credential that opened the session (it checks the owner)."""
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.mcp_path,
            "raw_path": self.mcp_path.encode("ascii"),
            "query_string": b"",
            "root_path": "",
            "headers": [*session.headers, (_SESSION_HEADER, session_id.encode("latin-1"))],
            "client": None,
            "server": None,
        }
        if session.user is not None:
            scope["user"] = session.user

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            pass

        try:
            await self.manager.handle_request(scope, receive, discard)
        except Exception:  # the session may be ending on its own; it is gone either way
            logger.debug("ending session %s failed", session_id[:64], exc_info=True)


def _principal(scope: Scope) -> AuthorizationContext | None:
    """Who sent the request, compared as the SDK compares a session's owner (None: not authenticated)."""
    user = scope.get("user")
    return authorization_context(user) if isinstance(user, AuthenticatedUser) else None
