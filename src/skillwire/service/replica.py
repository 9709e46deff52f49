"""Handshake-era session ids that name the replica holding the session, so a load balancer can route on them.

A 2026-07-28 (stateless) request can go to any replica serving the same content. A 2025-11-25 session lives in
one process: every request carrying its `Mcp-Session-Id` must reach the replica that created it. `ReplicaSessions`
prefixes each session id this replica hands out with `NAME.` and strips the prefix from requests, so a balancer
routes by the header's prefix alone (nginx: a `map` on `$http_mcp_session_id`, see `deploy/`), with no shared
state and no cookies. A session id with another replica's prefix reaches the SDK unchanged and is answered as
any unknown session (404), which tells a client to start a new session.

    app = ReplicaSessions(app, replica="r1", mcp_path="/mcp")
"""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_SESSION_HEADER = b"mcp-session-id"
REPLICA_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?")
"""A replica name: a DNS label of at most 32 characters (a Kubernetes pod or StatefulSet ordinal name fits)."""


def check_replica_name(name: str) -> str:
    """`name` if it can prefix a session id and be matched by a balancer's regex; ValueError otherwise."""
    if not REPLICA_NAME.fullmatch(name):
        raise ValueError(
            f"replica name {name!r} must be 1-32 lowercase letters, digits or '-' (not first or last), like r1 or pod-0"
        )
    return name


class ReplicaSessions:
    """ASGI middleware: session ids leave as `NAME.<id>` and come back without the prefix."""

    def __init__(self, app: ASGIApp, *, replica: str, mcp_path: str) -> None:
        self.app = app
        self.prefix = check_replica_name(replica).encode("ascii") + b"."
        self.mcp_path = mcp_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.mcp_path:
            await self.app(scope, receive, send)
            return
        headers = [
            (key, value[len(self.prefix) :] if key == _SESSION_HEADER and value.startswith(self.prefix) else value)
            for key, value in scope["headers"]
        ]

        async def send_named(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (key, self.prefix + value if key.lower() == _SESSION_HEADER else value)
                        for key, value in message.get("headers", [])
                    ],
                }
            await send(message)

        await self.app({**scope, "headers": headers}, receive, send_named)
