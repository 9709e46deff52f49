"""The Skills extension as an SDK `Extension`, for `MCPServer` and the low-level `Server`.

Capability Negotiation: the server declares
`extensions["io.modelcontextprotocol/skills"] = {"directoryRead": true}` and the
`resources` capability, and serves `skills/list`, `skills/get` and
`resources/directory/read`. Skill files are ordinary resources, so
`resources/read` and `resources/list` are shared with whatever else the server
serves: a middleware (the read path) answers for `skill://` URIs and passes
everything else on. `install` wires both halves in one call; an `MCPServer` given
the extension without its middleware fails at construction (`WiringError`).
The middleware hands skill reads to internal methods so that the SDK's own
pipeline shapes their results; a client naming those methods gets -32601, as
for any method the server does not serve.
With a `CallerResolver` (a scopes policy), every answer is the caller's view.
Error Handling: "Internal errors: -32603"; a handler that fails unexpectedly answers
-32603 with a generic message on both eras (the SDK would send code 0 and the
exception's text, paths included, to a handshake-era client); the traceback is logged.

    skills = SkillsExtension.from_paths(["skills/"])
    skills.install(mcp)             # an MCPServer, or a low-level Server
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, RequestHandler
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillwire.core.errors import WiringError
from skillwire.core.scopes import CallerResolver, Visibility
from skillwire.core.wire import (
    DIRECTORY_READ,
    EXTENSION_ID,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCES_LIST,
    RESOURCES_READ,
    SKILLS_GET,
    SKILLS_LIST,
    DirectoryReadParams,
    SkillsGetParams,
    SkillsListParams,
)
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.sources.folder.source import FolderSource

# resources/read and resources/list for skill:// URIs are routed to these methods so
# that the SDK's own pipeline shapes their results (resultType, serverInfo stamp).
# Only the middleware reaches them: a request naming one on the wire is answered as an unknown method.
_READ_ROUTE = "skillwire/resources/read"
_LIST_ROUTE = "skillwire/resources/list"
_INTERNAL_ROUTES = frozenset({_READ_ROUTE, _LIST_ROUTE})
# A resources/list cursor that belongs to the server's other resources, wrapped.
_DOWNSTREAM = "downstream:"

logger = logging.getLogger(__name__)

# The extension whose middleware is handling the current request: its handlers refuse to answer without it.
_ROUTED_BY: ContextVar[SkillsExtension | None] = ContextVar("skillwire_routed_by", default=None)

_HALF_WIRED = (
    "the Skills extension was registered without its read path (the middleware that answers resources/read and "
    "resources/list for skill:// URIs): call skills.install(server) instead of passing extensions=[skills], "
    "or pass middleware=[skills.middleware] in the same MCPServer(...) call"
)


class SkillsExtension(Extension):
    """Serves a `SkillService` through the SDK: extension methods plus a resources middleware."""

    identifier = EXTENSION_ID

    def __init__(self, service: SkillService, *, callers: CallerResolver | None = None) -> None:
        """`callers`: who is asking and what they may see (None: every caller sees every skill)."""
        self.service = service
        self.callers = callers
        self._read_path_out = False  # `middleware` was handed out or `install` ran: see `methods`

    async def scope(self) -> Visibility | None:
        """What the current request's caller may see (None: everything)."""
        return None if self.callers is None else await self.callers.scope()

    @classmethod
    def from_paths(
        cls, roots: Iterable[str | os.PathLike[str]], options: ServeOptions | None = None
    ) -> SkillsExtension:
        """An extension serving every skill found under `roots`."""
        return cls(SkillService(FolderSource(roots), options))

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True}

    @property
    def middleware(self) -> ServerMiddleware[Any]:
        """The read path, for `MCPServer(extensions=[skills], middleware=[skills.middleware])`; `install` adds it."""
        self._read_path_out = True
        return self._middleware

    def methods(self) -> Sequence[MethodBinding]:
        """The extension's methods. `MCPServer(extensions=[skills])` calls this while it is built: without the
        middleware asked for beside it (or `install`), that server could not read a skill file, so it fails here."""
        if not self._read_path_out:
            raise WiringError(_HALF_WIRED)
        return (
            MethodBinding(SKILLS_LIST, SkillsListParams, self._answer(SKILLS_LIST, self._skills_list)),
            MethodBinding(SKILLS_GET, SkillsGetParams, self._answer(SKILLS_GET, self._skills_get)),
            MethodBinding(DIRECTORY_READ, DirectoryReadParams, self._answer(DIRECTORY_READ, self._directory_read)),
            MethodBinding(_READ_ROUTE, ReadResourceRequestParams, self._answer(RESOURCES_READ, self._resources_read)),
            MethodBinding(_LIST_ROUTE, PaginatedRequestParams, self._answer(RESOURCES_LIST, self._resources_list)),
        )

    def install(self, server: Server[Any] | MCPServer) -> None:
        """Wire the whole extension into `server` (an `MCPServer` or a low-level `Server`) in one call: its methods,
        the capability, the read path (middleware) and, if the server has none, resources handlers for the rest."""
        # MCPServer takes extensions only when it is built; what it would apply then goes on its own Server here.
        lowlevel: Server[Any] = server._lowlevel_server if isinstance(server, MCPServer) else server
        self._read_path_out = True
        for binding in self.methods():
            if lowlevel.get_request_handler(binding.method) is not None:
                raise WiringError(
                    f"{binding.method!r} already has a handler on this server (install the extension once)"
                )
            lowlevel.add_request_handler(binding.method, binding.params_type, binding.handler)
        # Declaring the extension requires the resources capability, which the SDK derives
        # from a resources/list handler; these answer only for what skills do not cover.
        if lowlevel.get_request_handler(RESOURCES_LIST) is None:
            lowlevel.add_request_handler(RESOURCES_LIST, PaginatedRequestParams, _no_other_resources)
        if lowlevel.get_request_handler(RESOURCES_READ) is None:
            lowlevel.add_request_handler(RESOURCES_READ, ReadResourceRequestParams, _no_other_resource)
        lowlevel.extensions[self.identifier] = self.settings()
        lowlevel.middleware.append(self._middleware)

    def _answer(self, method: str, handler: RequestHandler) -> RequestHandler:
        """`handler` contained (`contained`), answering only requests that came through this extension's middleware:
        a server that has the methods but not the read path fails its first request, saying what to add."""
        contained_handler = contained(method, handler)

        async def answer(ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
            if _ROUTED_BY.get() is not self:
                logger.error("cannot answer %s: %s", method, _HALF_WIRED)
                raise MCPError(INTERNAL_ERROR, f"Internal error while answering {method}; see the server log")
            return await contained_handler(ctx, params)

        return answer

    # -- handlers ----------------------------------------------------------------------------------------------------

    async def _skills_list(self, ctx: ServerRequestContext[Any, Any], params: SkillsListParams) -> HandlerResult:
        return self.service.list_skills(params.cursor, modern=_modern(ctx), scope=await self.scope())

    async def _skills_get(self, ctx: ServerRequestContext[Any, Any], params: SkillsGetParams) -> HandlerResult:
        return await self.service.get_skill(params.uri, modern=_modern(ctx), scope=await self.scope())

    async def _directory_read(self, ctx: ServerRequestContext[Any, Any], params: DirectoryReadParams) -> HandlerResult:
        return await self.service.read_directory(
            params.uri, params.cursor, modern=_modern(ctx), scope=await self.scope()
        )

    async def _resources_read(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> HandlerResult:
        return await self.service.read_resource(params.uri, modern=_modern(ctx), scope=await self.scope())

    async def _resources_list(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> HandlerResult:
        return self.service.list_resources(params.cursor, modern=_modern(ctx), scope=await self.scope())

    # -- middleware --------------------------------------------------------------------------------------------------

    async def _middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Route skill resources to this extension; put the declaration back on handshake-era `initialize`."""
        if ctx.method in _INTERNAL_ROUTES:  # from the wire: the same answer as the SDK's for a method it lacks
            raise MCPError(METHOD_NOT_FOUND, "Method not found", ctx.method)
        token = _ROUTED_BY.set(self)
        try:
            params = ctx.params if isinstance(ctx.params, Mapping) else {}
            if ctx.method == RESOURCES_READ and self.service.serves(params.get("uri")):
                return await call_next(replace(ctx, method=_READ_ROUTE))
            if ctx.method == RESOURCES_LIST:
                return await self._merged_list(ctx, params, call_next)
            result = await call_next(ctx)
            if ctx.method == "initialize" and isinstance(result, dict):
                _declare_on_initialize(result, self.identifier, self.settings())
            return result
        finally:
            _ROUTED_BY.reset(token)

    async def _merged_list(
        self, ctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], call_next: CallNext
    ) -> HandlerResult:
        """Skill files first, in pages; then the server's other resources, their cursors wrapped."""
        cursor = params.get("cursor")
        if isinstance(cursor, str) and cursor.startswith(_DOWNSTREAM):
            return await self._downstream_list(ctx, params, call_next, cursor[len(_DOWNSTREAM) :])
        ours = await call_next(replace(ctx, method=_LIST_ROUTE))
        if not isinstance(ours, dict) or ours.get("nextCursor") is not None:
            return ours
        other = await self._downstream_list(ctx, params, call_next, None)
        if isinstance(other, dict) and other.get("resources"):
            ours["resources"] = [*ours.get("resources", []), *other["resources"]]
            if other.get("nextCursor") is not None:
                ours["nextCursor"] = other["nextCursor"]
        return ours

    async def _downstream_list(
        self, ctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], call_next: CallNext, cursor: str | None
    ) -> HandlerResult:
        rest = {k: v for k, v in params.items() if k != "cursor"}
        if cursor is not None:
            rest["cursor"] = cursor
        result = await call_next(replace(ctx, params=rest))
        if isinstance(result, dict) and isinstance(result.get("nextCursor"), str):
            result["nextCursor"] = _DOWNSTREAM + result["nextCursor"]
        return result


def contained(method: str, handler: RequestHandler) -> RequestHandler:
    """`handler`, answering -32603 with a generic message for any failure that is not already a protocol error."""

    async def answer(ctx: ServerRequestContext[Any, Any], params: Any) -> HandlerResult:
        try:
            return await handler(ctx, params)
        except MCPError:
            raise
        except Exception:
            logger.exception("internal error while answering %s", method)
            raise MCPError(INTERNAL_ERROR, f"Internal error while answering {method}; see the server log") from None

    return answer


def _modern(ctx: ServerRequestContext[Any, Any]) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _declare_on_initialize(result: dict[str, Any], identifier: str, settings: dict[str, Any]) -> None:
    """mcp 2.3 drops `capabilities.extensions` from a 2025-era InitializeResult; put ours back."""
    capabilities = result.get("capabilities")
    if isinstance(capabilities, dict):
        extensions = capabilities.setdefault("extensions", {})
        if isinstance(extensions, dict):
            extensions.setdefault(identifier, settings)


async def _no_other_resources(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
    return ListResourcesResult(resources=[])


async def _no_other_resource(ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams) -> HandlerResult:
    raise MCPError(INVALID_PARAMS, f"No resource is served at {params.uri[:200]}", {"uri": params.uri[:200]})
