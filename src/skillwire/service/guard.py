"""Host and Origin checks on every HTTP route, and the rule that a network bind needs authentication.

DNS rebinding lets any web page reach a server on the reader's machine or LAN under the page's own
host name; checking the `Host` header (and a browser's `Origin`) against the names this server is
really known by stops it. The SDK checks only its MCP route, and only on 127.0.0.1: `HostOriginGuard`
wraps the whole ASGI app instead (MCP endpoint, catalog page, metadata, anything added later).

    policy = HostPolicy.for_bind("127.0.0.1", 8000, public_url="https://skills.example.com/mcp")
    app = HostOriginGuard(app, policy)          # 421 for a foreign Host, 403 for a foreign Origin
    problem = bind_refusal("0.0.0.0", authenticated=False, allow_unauthenticated=False)
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def is_loopback(host: str) -> bool:
    """True if `host` (an address or `localhost`) only ever reaches this machine; any other name may not."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a host name: it resolves to whatever DNS says


def bind_refusal(host: str, *, authenticated: bool, allow_unauthenticated: bool) -> str | None:
    """Why serving on `host` must not start, or None: a non-loopback bind needs authentication or an opt-out."""
    if is_loopback(host) or authenticated or allow_unauthenticated:
        return None
    return (
        f"refusing to serve {host} without authentication: anyone who can reach it could read every skill; "
        "give --token-file or --auth-issuer, bind 127.0.0.1 (behind a proxy), or pass --allow-unauthenticated"
    )


def _split(hostport: str) -> tuple[str, str | None]:
    """`host[:port]` as (lower-case host, port or None); IPv6 stays bracketed."""
    text = hostport.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return text, None
        rest = text[end + 1 :]
        return text[: end + 1], rest[1:] if rest.startswith(":") else None
    host, sep, port = text.rpartition(":")
    return (host, port) if sep and ":" not in host else (text, None)


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The `Host` values this server answers to.

    `exact`: `host:port` pairs (the loopback names on the listening port). `any_port`: host names
    allowed on any port (from `--public-url` and `--allowed-host` without a port): a rebinding page
    cannot choose the host name the browser sends, only the port.
    """

    exact: frozenset[str]
    any_port: frozenset[str]

    @classmethod
    def for_bind(
        cls, bind_host: str, port: int, *, public_url: str | None = None, allowed_hosts: Iterable[str] = ()
    ) -> HostPolicy:
        """Loopback names on `port` (always: no page can make a browser send them), the loopback bind address
        itself, and the hosts of `public_url` and `allowed_hosts`."""
        exact = {f"{name}:{port}" for name in _LOOPBACK_NAMES}
        if is_loopback(bind_host):
            exact.add(f"{_bracketed(bind_host.lower())}:{port}")
        any_port: set[str] = set()
        extra = list(allowed_hosts)
        if public_url:
            netloc = urlsplit(public_url).netloc.rpartition("@")[2]
            if netloc:
                extra.append(netloc)
        for entry in extra:
            host, entry_port = _split(entry)
            if not host:
                raise ValueError(f"not a host name: {entry!r}")
            if entry_port is None:
                any_port.add(host)
            else:
                exact.add(f"{host}:{entry_port}")
        return cls(exact=frozenset(exact), any_port=frozenset(any_port))

    def host_ok(self, host: str | None) -> bool:
        """RFC 9110 §7.2: the Host a client used; a request without one is refused."""
        if not host:
            return False
        value = host.strip().lower()
        if value in self.exact:
            return True
        name, _ = _split(value)
        return name in self.any_port

    def origin_ok(self, origin: str | None) -> bool:
        """No Origin (not a browser, or same-origin GET) passes; otherwise it must be http(s) on an allowed host."""
        if origin is None:
            return True
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
            return False  # "null", file:, data: and friends
        netloc = parts.netloc.lower()
        if ":" not in netloc.rpartition("]")[2]:  # no explicit port: the scheme's default one
            netloc = f"{netloc}:{443 if parts.scheme == 'https' else 80}"
        return self.host_ok(netloc)


class HostOriginGuard:
    """ASGI middleware: 421 for a `Host` this server is not known by, 403 for a foreign `Origin`, on every route."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = origin = None
        for key, value in scope["headers"]:
            if key == b"host":
                host = value.decode("latin-1")
            elif key == b"origin":
                origin = value.decode("latin-1")
        if not self.policy.host_ok(host):
            logger.debug("refused a request for Host %r", host)
            await _refuse(scope, receive, send, 421, "Invalid Host header")
        elif not self.policy.origin_ok(origin):
            logger.debug("refused a request from Origin %r", origin)
            await _refuse(scope, receive, send, 403, "Invalid Origin header")
        else:
            await self.app(scope, receive, send)


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    await PlainTextResponse(text, status_code=status)(scope, receive, send)
