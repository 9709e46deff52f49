"""Skill file reads answered without the SDK's generic request pipeline: the hot path of a busy HTTP server.

A 2026-07-28 `resources/read` is one self-contained POST. Through the SDK it passes Starlette's exception layers
and router, the session manager, the modern entry (headers, envelope, the validation ladder), a runner, connection
and session made for the request, an OpenTelemetry span, every server middleware, and pydantic models for the
request and the response: most of the server's CPU per read. `DirectReads` (ASGI, the innermost of skillwire's
layers: behind the Host/Origin guard, authentication and the read budget) answers the common case itself, with the
SDK's own checks:
- a POST to the MCP path with a 2026-07-28-era `MCP-Protocol-Version`, a Content-Type and an Accept the SDK takes
  (JSON), no routing header twice, and a body of at most `MAX_BODY` bytes holding one JSON-RPC request (its id an
  integer or a string) for `resources/read` of a `skill:` URI that passes the SDK's validation ladder
  (`classify_inbound_request`: the `_meta` envelope, headers that match the body) and the params model the SDK
  would hand the extension's handler;
- its answer is `SkillService.read_resource`'s, as the extension gives it (verified bytes, the caller's view),
  shaped as the SDK shapes an extension's result (`resultType`, the `serverInfo` stamp), counted in the metrics.
Anything else goes on to the SDK, body replayed: a handshake-era request, another method, anything malformed, and
any read that fails (a missing file, a bad URI: the SDK words the error, from a second ask). The SDK's path stays
the reference: tests ask both the same questions and compare the answers byte for byte.

It stands aside entirely (a) when the app is not behind `guard.HostOriginGuard` (the SDK's own Host check on
/mcp would be skipped), and (b) when the server has a middleware it does not know to leave skill reads alone
(`passes_skill_reads`); and per request while an OpenTelemetry tracer is set (the SDK's span is then wanted).

    app.add_middleware(DirectReads, server=server, service=service, callers=None, mcp_path="/mcp", metrics=metrics)
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware  # the SDK's default first middleware (not exported)
from mcp.server.context import ServerMiddleware
from mcp.server.lowlevel import Server
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request, find_duplicated_routing_header
from mcp_types import SERVER_INFO_META_KEY, ReadResourceRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillwire.core.scopes import CallerResolver
from skillwire.core.wire import RESOURCES_READ
from skillwire.server.extension import SkillsExtension
from skillwire.server.prompts import checked_prompt_params
from skillwire.server.skill_service import SkillService
from skillwire.service.budget import PEEKED, Peeked
from skillwire.service.notify import ChangeNotifier
from skillwire.service.ops import ServerMetrics

logger = logging.getLogger(__name__)

MAX_BODY = 64 * 1024
"""Bodies larger than this go to the SDK (a read's body is a few hundred bytes)."""

_JSON_HEADERS = [(b"content-type", b"application/json")]


def passes_skill_reads(
    middleware: ServerMiddleware[Any], service: SkillService, callers: CallerResolver | None, metrics: object
) -> bool:
    """Whether a server middleware does nothing to a `resources/read` of a skill file that `DirectReads` does not
    do too: the SDK's tracing (checked per request), the extension's routing to `service` for `callers`, the
    metrics `DirectReads` also counts in, change notification (`initialize` only), prompts' params check."""
    owner = getattr(middleware, "__self__", None)
    if isinstance(middleware, OpenTelemetryMiddleware) or middleware is checked_prompt_params:
        return True
    if isinstance(owner, SkillsExtension):
        return middleware == owner.middleware and owner.service is service and owner.callers is callers
    if isinstance(owner, ChangeNotifier):
        return middleware == owner.middleware
    return isinstance(owner, ServerMetrics) and owner is metrics and middleware == owner.middleware


class DirectReads:
    """ASGI middleware: well-formed 2026-07-28 skill reads answered here, everything else passed on (see module)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        server: Server[Any],
        service: SkillService,
        callers: CallerResolver | None,
        mcp_path: str,
        metrics: ServerMetrics | None = None,
        guarded: bool = True,
    ) -> None:
        """`guarded`: the app sits behind `HostOriginGuard` (else this stands aside: the SDK checks Host itself)."""
        self.app = app
        self.service = service
        self.callers = callers
        self.mcp_path = mcp_path
        self.metrics = metrics
        unknown = [m for m in server.middleware if not passes_skill_reads(m, service, callers, metrics)]
        self.enabled = guarded and not unknown
        if unknown:
            logger.debug("skill reads go through the SDK: the server has other middleware (%r)", unknown)
        self.answered = 0  # reads answered here
        # The SDK's stamp, made once (it is a deep copy of a per-server constant at each access there).
        self._stamp = server.server_info_stamp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            not self.enabled
            or scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] != self.mcp_path
            or scope.get("root_path")
            or _tracing()
        ):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope["headers"])
        if headers is None:
            await self.app(scope, receive, send)
            return
        peeked = scope.get(PEEKED)
        if isinstance(peeked, Peeked):  # the read budget read the body whole: not read (nor parsed) again
            replay = receive
            decoded = peeked.message if peeked.message is not None else _decoded(peeked.body)
        else:
            messages: list[Message] = []
            body = await _body(receive, messages)

            async def replay() -> Message:
                return messages.pop(0) if messages else await receive()

            decoded = None if body is None else _decoded(body)
        request = _read_request(decoded, headers)
        if request is None or not self.service.serves(request[1]):  # another handler's resource, or not well-formed
            await self.app(scope, replay, send)
            return
        request_id, uri = request
        started = time.perf_counter()
        try:
            visible = None if self.callers is None else await self.callers.scope()
            result = await self.service.read_resource(uri, modern=True, scope=visible)
        except Exception:  # the SDK asks again and answers (an error worded its way, a failure logged)
            await self.app(scope, replay, send)
            return
        answer = self._answer(request_id, result)
        if self.metrics is not None:
            self.metrics.observe(RESOURCES_READ, "ok", time.perf_counter() - started)
        self.answered += 1
        await send({"type": "http.response.start", "status": 200, "headers": _response_headers(len(answer))})
        await send({"type": "http.response.body", "body": answer})

    def _answer(self, request_id: int | str, result: dict[str, Any]) -> bytes:
        """The JSON-RPC response as the SDK writes it: an extension result gets `resultType` and the `serverInfo`
        stamp (`ServerRunner._serialize`), the envelope is dumped compact."""
        shaped = dict(result)
        if shaped.get("resultType") is None:
            shaped["resultType"] = "complete"
        meta = shaped.get("_meta")
        if meta is None:
            shaped["_meta"] = {SERVER_INFO_META_KEY: self._stamp}
        elif isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None:
            shaped["_meta"] = {**meta, SERVER_INFO_META_KEY: self._stamp}
        envelope = {"jsonrpc": "2.0", "id": request_id, "result": shaped}
        return json.dumps(envelope, separators=(",", ":")).encode()


def _tracing() -> bool:
    """True once an OpenTelemetry tracer provider is set: the SDK's request span then records something."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def _headers(raw: list[tuple[bytes, bytes]]) -> dict[str, str] | None:
    """The request's headers folded as the SDK folds them (the first of each name), if the SDK's modern entry
    would take them as a JSON `resources/read`: a 2026-07-28-era version, `Mcp-Method`, JSON content and accept,
    no routing header twice, a Content-Length up to `MAX_BODY`."""
    folded: dict[str, str] = {}
    for key, value in raw:
        folded.setdefault(key.decode("latin-1"), value.decode("latin-1"))
    if folded.get("mcp-protocol-version") not in MODERN_PROTOCOL_VERSIONS:
        return None
    if folded.get("mcp-method") != RESOURCES_READ:  # the ladder wants it equal to the body's method: not a read
        return None
    if not folded.get("content-type", "").lower().startswith("application/json"):  # TransportSecurityMiddleware
        return None
    if not _accepts_json(folded.get("accept", "")):
        return None
    if len(folded) != len(raw) and find_duplicated_routing_header((k.decode("latin-1"), "") for k, _ in raw):
        return None
    length = folded.get("content-length")
    if length is None or not length.isdigit() or int(length) > MAX_BODY:
        return None
    return folded


def _accepts_json(accept: str) -> bool:
    """`streamable_http.check_accept_headers`'s answer for JSON (RFC 7231 wildcards included)."""
    types = {part.strip().split(";")[0].strip().lower() for part in accept.split(",")}
    return not types.isdisjoint(("*/*", "application/json", "application/*"))


async def _body(receive: Receive, messages: list[Message]) -> bytes | None:
    """The whole body (every message kept in `messages` for a replay); None if the client left or sent too much."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return None
        part = message.get("body", b"")
        parts.append(part)
        size += len(part)
        if size > MAX_BODY:
            return None
        if not message.get("more_body", False):
            return parts[0] if len(parts) == 1 else b"".join(parts)


def _decoded(body: bytes) -> object:
    """The body's JSON as the SDK's modern entry decodes it; None if it is not JSON."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _read_request(decoded: object, headers: Mapping[str, str]) -> tuple[int | str, str] | None:
    """(id, uri) of a `resources/read` that the SDK's modern entry and the extension's params model take as
    well-formed; None for anything else."""
    if type(decoded) is not dict or decoded.get("jsonrpc") != "2.0" or decoded.get("method") != RESOURCES_READ:
        return None
    request_id, params = decoded.get("id"), decoded.get("params")
    if not isinstance(request_id, int | str) or isinstance(request_id, bool) or type(params) is not dict:
        return None  # the SDK's id is a strict int (no bool) or a str
    uri = params.get("uri")
    if not isinstance(uri, str):
        return None
    if not isinstance(classify_inbound_request(decoded, headers=headers), InboundModernRoute):
        return None
    try:
        ReadResourceRequestParams.model_validate(params, by_name=False)
    except ValidationError:
        return None
    return request_id, uri


def _response_headers(length: int) -> list[tuple[bytes, bytes]]:
    return [(b"content-length", str(length).encode("ascii")), *_JSON_HEADERS]
