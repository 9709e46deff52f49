"""The Skills extension as an SDK `Extension`, for `MCPServer` and the low-level `Server`.

Capability Negotiation: the server declares
`extensions["io.modelcontextprotocol/skills"] = {"directoryRead": true}` and the
`resources` capability, and serves `skills/list`, `skills/get` and
`resources/directory/read`. Skill files are ordinary resources, so
`resources/read` and `resources/list` are shared with whatever else the server
serves: a middleware answers for `skill://` URIs and passes everything else on.
With a `CallerResolver` (a scopes policy), every answer is the caller's view.
Error Handling: "Internal errors: -32603"; a handler that fails unexpectedly answers
-32603 with a generic message on both eras (the SDK would send code 0 and the
exception's text, paths included, to a handshake-era client); the traceback is logged.

    skills = SkillsExtension.from_paths(["skills/"])
    mcp = MCPServer("docs", extensions=[skills], middleware=[skills.middleware])
    # or, on a low-level Server:  skills.install(server)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, RequestHandler
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillwire.core.scopes import CallerResolver, Visibility
from skillwire.core.wire import (
    DIRECTORY_READ,
    EXTENSION_ID,
    INTERNAL_ERROR,
    INVALID_PARAMS,
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
_READ_ROUTE = "skillwire/resources/read"
_LIST_ROUTE = "skillwire/resources/list"
# A resources/list cursor that belongs to the server's other resources, wrapped.
_DOWNSTREAM = "downstream:"

logger = logging.getLogger(__name__)


class SkillsExtension(Extension):
    """Serves a `SkillService` through the SDK: extension methods plus a resources middleware."""

    identifier = EXTENSION_ID

    def __init__(self, service: SkillService, *, callers: CallerResolver | None = None) -> None:
        """`callers`: who is asking and what they may see (None: every caller sees every skill)."""
        self.service = service
        self.callers = callers

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

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding(SKILLS_LIST, SkillsListParams, _contained(SKILLS_LIST, self._skills_list)),
            MethodBinding(SKILLS_GET, SkillsGetParams, _contained(SKILLS_GET, self._skills_get)),
            MethodBinding(DIRECTORY_READ, DirectoryReadParams, _contained(DIRECTORY_READ, self._directory_read)),
            MethodBinding(_READ_ROUTE, ReadResourceRequestParams, _contained(RESOURCES_READ, self._resources_read)),
            MethodBinding(_LIST_ROUTE, PaginatedRequestParams, _contained(RESOURCES_LIST, self._resources_list)),
        )

    def install(self, server: Server[Any]) -> None:
        """Mount on a low-level `Server`: methods, capability, resources handlers and middleware."""
        for binding in self.methods():
            if server.get_request_handler(binding.method) is not None:
                raise ValueError(f"{binding.method!r} already has a handler on this server")
            server.add_request_handler(binding.method, binding.params_type, binding.handler)
        # Declaring the extension requires the resources capability, which the SDK derives
        # from a resources/list handler; these answer only for what skills do not cover.
        if server.get_request_handler(RESOURCES_LIST) is None:
            server.add_request_handler(RESOURCES_LIST, PaginatedRequestParams, _no_other_resources)
        if server.get_request_handler(RESOURCES_READ) is None:
            server.add_request_handler(RESOURCES_READ, ReadResourceRequestParams, _no_other_resource)
        server.extensions[self.identifier] = self.settings()
        server.middleware.append(self.middleware)

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

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Route skill resources to this extension; put the declaration back on handshake-era `initialize`."""
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        if ctx.method == RESOURCES_READ and self.service.serves(params.get("uri")):
            return await call_next(replace(ctx, method=_READ_ROUTE))
        if ctx.method == RESOURCES_LIST:
            return await self._merged_list(ctx, params, call_next)
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            _declare_on_initialize(result, self.identifier, self.settings())
        return result

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


def _contained(method: str, handler: RequestHandler) -> RequestHandler:
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
