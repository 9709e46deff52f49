"""Run a standalone skills server over stdio or streamable HTTP.

The server is the SDK's low-level `Server` with the Skills extension installed;
both protocol eras are served (2026-07-28 `server/discover` and the
`initialize` handshake). Over HTTP the endpoint is `/mcp`, with `/healthz`, `/readyz` and
`/metrics` beside it for operators (`ops.py`). With a `LiveReload`
(see `watch.py`) the catalog follows the disk and clients are told when it changes.

    ext = SkillsExtension.from_paths(["skills/"])
    server = build_server(ext)
    anyio.run(serve_stdio, server)
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, cast

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import ASGIApp

from skillwire.core.scopes import CallerResolver
from skillwire.core.version import __version__
from skillwire.server.extension import SkillsExtension
from skillwire.server.prompts import PROMPTS_GET, skill_uri_of
from skillwire.server.skill_service import SkillService
from skillwire.server.tools import file_read
from skillwire.service.auth import (
    AuthConfig,
    CompositeVerifier,
    build_verifier,
    install,
    is_operator,
    metadata_routes,
)
from skillwire.service.budget import RESOURCE_READS, ByteBudget, FileRead, FileSize, ReadBudget, ReadTarget
from skillwire.service.catalog_page import catalog_routes
from skillwire.service.connections import guarded_protocol, throttled_resource_errors
from skillwire.service.direct_reads import DirectReads
from skillwire.service.guard import HostOriginGuard, HostPolicy
from skillwire.service.limits import ServeLimits
from skillwire.service.listen_limits import ListenSlots, StreamGate
from skillwire.service.malloc import pin_mmap_threshold, trim_after_index
from skillwire.service.ops import OPERATOR_PATHS, PROBE_PATHS, ServerMetrics, ops_routes
from skillwire.service.replica import ReplicaSessions
from skillwire.service.sessions import SessionCap
from skillwire.service.stdin import claimed_stdin
from skillwire.service.watch import LiveReload

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"


def build_server(
    extension: SkillsExtension, *, name: str = "skillwire", instructions: str | None = None
) -> Server[Any]:
    """A low-level SDK server that serves `extension`'s skills and nothing else."""
    server: Server[Any] = Server(name, version=__version__, instructions=instructions)
    extension.install(server)
    return server


def _running(live: LiveReload | None) -> AbstractAsyncContextManager[None]:
    return live.running() if live is not None else nullcontext()


async def serve_stdio(server: Server[Any], *, live: LiveReload | None = None) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects (`live`: installed on `server`)."""
    # Our own stdin reader where stdin can be polled: the SDK's reads in a thread that a cancel cannot stop,
    # so Ctrl-C would wait for the next line (see stdin.py).
    async with (
        _running(live),
        claimed_stdin() as lines,
        stdio_server(stdin=cast("Any", lines)) as (read_stream, write_stream),
    ):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(
    server: Server[Any],
    *,
    host: str,
    service: SkillService | None = None,
    auth: AuthConfig | None = None,
    callers: CallerResolver | None = None,
    limits: ServeLimits | None = None,
    guarded: bool = False,
    metrics: ServerMetrics | None = None,
    listen: ListenSlots | None = None,
    verifier: CompositeVerifier | None = None,
) -> Starlette:
    """The streamable HTTP ASGI app (JSON responses: half the CPU per request of SSE framing).

    With `service`, the catalog page (`catalog_page.py`) is served at `/` beside the MCP endpoint,
    scoped by `callers` as the extension is. With `auth`, every route but the Protected Resource
    Metadata needs a bearer token (`auth.py`), checked by `verifier` (default: built from `auth`).
    `guarded`: the app will sit behind `guarded_app`,
    which checks Host and Origin on every route, so the SDK's own check (on /mcp, on loopback binds
    only) is turned off rather than done twice. With `service` and `metrics`, `/healthz`, `/readyz` and
    `/metrics` too (the probes need no token, catalog-wide figures an operator's: see `ops.PROBE_PATHS`).
    Inside authentication, so that only an authenticated request reaches them: the session cap (`sessions.py`,
    `limits.max_sessions`); with `listen` (the `LiveReload`'s `notifier.slots`), each listen request's slot, and
    streams end with their token (`listen_limits.py`); with `service`, file reads wait for room in the read budget
    (`budget.py`), and, when `guarded`, well-formed 2026-07-28 skill reads are answered without the SDK's generic
    pipeline (`direct_reads.py`).
    """
    limits = limits or ServeLimits()
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if guarded else None
    routes = catalog_routes(service, callers) if service is not None else []
    if service is not None and metrics is not None:
        routes += ops_routes(service, metrics, operator=is_operator if auth is not None else None)
    if auth is not None:
        routes += metadata_routes(auth)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        host=host,
        custom_starlette_routes=routes or None,
        transport_security=security,
        max_sessions=limits.max_sessions,
        session_idle_timeout=limits.session_idle_timeout,
    )
    # Added before the authentication middleware, so they run after it: a 401 or 403 moves no session, takes
    # no listen slot and waits for no room; a file is sized as its caller sees it. Innermost, the direct reads.
    if service is not None:
        app.add_middleware(
            DirectReads,
            server=server,
            service=service,
            callers=callers,
            mcp_path=MCP_PATH,
            metrics=metrics,
            guarded=guarded,
        )
    app.add_middleware(
        SessionCap,
        manager=server.session_manager,
        mcp_path=MCP_PATH,
        max_sessions=limits.max_sessions,
        idle_timeout=limits.session_idle_timeout,
    )
    if listen is not None:
        app.add_middleware(StreamGate, slots=listen, mcp_path=MCP_PATH)
    if service is not None:
        app.add_middleware(
            ReadBudget,
            size_of=_sized_for_caller(service, callers),
            mcp_path=MCP_PATH,
            large=ByteBudget(limits.read_budget),
            small=ByteBudget(limits.read_budget),
            wait=limits.read_wait,
            reads=file_reads(server),
        )
    if auth is not None:
        install(app, auth, verifier or build_verifier(auth), open_paths=PROBE_PATHS, operator_paths=OPERATOR_PATHS)
    return app


def guarded_app(
    app: ASGIApp,
    policy: HostPolicy,
    *,
    replica: str | None = None,
) -> ASGIApp:
    """`app` (from `http_app`, which holds the session cap, listen slots and read budget) behind the Host/Origin
    guard.

    `replica`: this process's name among replicas behind a balancer; its session ids then carry it (`replica.py`).
    """
    guarded: ASGIApp = app
    if replica is not None:
        guarded = ReplicaSessions(guarded, replica=replica, mcp_path=MCP_PATH)
    return HostOriginGuard(guarded, policy)


def file_reads(server: Server[Any]) -> dict[str, ReadTarget]:
    """The requests `server` answers with a file's bytes, for the read budget: `resources/read`, `prompts/get` when it
    serves skills as prompts (`server/prompts.py`), and `tools/call` of the reading tools when it serves tools
    (`server/tools.py`)."""
    reads = dict(RESOURCE_READS)
    if server.get_request_handler(PROMPTS_GET) is not None:
        reads[PROMPTS_GET] = _prompt_read
    if server.get_request_handler("tools/call") is not None:
        reads["tools/call"] = _tool_read
    return reads


def _prompt_read(params: Mapping[str, Any]) -> FileRead | None:
    uri = skill_uri_of(params.get("name"))
    return None if uri is None else (uri, 1)


def _tool_read(params: Mapping[str, Any]) -> FileRead | None:
    return file_read(params.get("name"), params.get("arguments"))


def _sized_for_caller(service: SkillService, callers: CallerResolver | None) -> FileSize:
    async def size_of(uri: str) -> int | None:
        catalog = service.catalog
        scope = None if callers is None else await callers.scope()
        if scope is None and (size := service.read_cache.size_of(uri, catalog)) is not None:
            return size  # read and kept a moment ago: no catalog lookup
        served = service.file(catalog, scope, uri)  # kept for the read that follows
        return None if served is None else served.file.size

    return size_of


def bind(host: str, port: int) -> socket.socket:
    """A bound socket, not yet listening; port 0 picks a free port (read it back from `getsockname`).

    The server listens when it starts serving (asyncio's `create_server` does), so the port opens only
    once requests are answered: a client that connects as soon as it can is not left waiting while the
    server sets up (a watcher walking every folder, say). The protocol is named (IPPROTO_TCP, not 0):
    asyncio sets TCP_NODELAY only on connections whose socket says TCP, and without it Nagle's algorithm
    and the client's delayed ACK hold each response on a keep-alive connection for about 40 ms.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def url_for(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{MCP_PATH}"


async def serve_http(
    server: Server[Any],
    sock: socket.socket,
    *,
    on_ready: Callable[[str], None] | None = None,
    live: LiveReload | None = None,
    service: SkillService | None = None,
    auth: AuthConfig | None = None,
    callers: CallerResolver | None = None,
    limits: ServeLimits | None = None,
    hosts: HostPolicy | None = None,
    replica: str | None = None,
) -> None:
    """Serve streamable HTTP on an already-bound socket until cancelled (`live`: installed on `server`).

    `service`: the skills `server` serves, shown as the catalog page at `/` (no page without it).
    `auth`: who may call (every route but the metadata needs a token); None: anyone who can connect.
    `callers`: each caller's view of the catalog (`--scopes`). `limits`: connection, session and read
    bounds (`limits.py`). `hosts`: the Host values answered (default: the loopback names on this port).
    `replica`: this server's name behind a load balancer (`replica.py`); None: session ids carry no name.
    For the whole process: the soft file descriptor limit is raised (`limits.py`) and glibc's mmap threshold
    pinned (`malloc.py`).
    """
    host, port = sock.getsockname()[:2]
    limits = (limits or ServeLimits()).fitted_to_fd_limit()
    pin_mmap_threshold()  # the large buffers of file reads go back to the system when freed (`malloc.py`)
    policy = hosts or HostPolicy.for_bind(host, port)
    metrics = None
    if service is not None:
        trim_after_index(service)
        metrics = ServerMetrics(service)
        metrics.install(server)
    verifier = build_verifier(auth) if auth is not None else None
    listen = live.notifier.slots if live is not None else None
    # log_config=None: uvicorn's records go to the application's handlers (the CLI's escapes hostile text for the
    # terminal) instead of handlers uvicorn would install for itself.
    config = uvicorn.Config(
        guarded_app(
            http_app(
                server,
                host=host,
                service=service,
                auth=auth,
                callers=callers,
                limits=limits,
                guarded=True,
                metrics=metrics,
                listen=listen,
                verifier=verifier,
            ),
            policy,
            replica=replica,
        ),
        log_level="warning",
        log_config=None,
        lifespan="on",
        access_log=False,
        http=guarded_protocol(limits),
        timeout_keep_alive=max(1, int(limits.idle_timeout)),
    )
    uv = uvicorn.Server(config)
    if on_ready is not None:
        url = url_for(sock)
        original_startup = uv.startup

        async def startup(sockets: list[socket.socket] | None = None) -> None:
            await original_startup(sockets=sockets)
            on_ready(url)

        uv.startup = startup  # type: ignore[method-assign]
    if live is not None:
        original_shutdown = uv.shutdown

        async def shutdown(sockets: list[socket.socket] | None = None) -> None:
            # Open subscriptions/listen streams are requests that never end by themselves;
            # close them first, or uvicorn's graceful shutdown waits for them forever.
            live.notifier.close()
            await original_shutdown(sockets=sockets)

        uv.shutdown = shutdown  # type: ignore[method-assign]
    with throttled_resource_errors():
        async with _running(live), anyio.create_task_group() as tasks:
            if listen is not None and verifier is not None:
                # Also what re-reads a changed token file when no request comes: a revoked stream ends anyway.
                tasks.start_soon(listen.watch_credentials, verifier)
            await uv.serve(sockets=[sock])
            tasks.cancel_scope.cancel()
