"""One `tools/list` and `tools/call` handler for every skills tool a server offers (`serve --tools`, `--search-tool`).

The SDK's low-level `Server` holds one handler per method, so tools from several places (`SkillTools`'s
list_skills, read_skill and read_skill_file, `SkillSearch`'s search_skills) are gathered here: each offers its
`Tool` definitions and answers calls by name. A call naming no tool served is -32602, as for any unknown tool; a
tool that fails unexpectedly answers -32603 with a generic message and the traceback goes to the log (a model's
mistakes are tool results with `isError`, which the tools return themselves).

    tools = ToolSet([SkillTools(extension), SkillSearch(extension)])
    tools.install(server)           # a low-level Server with no tools of its own
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, Tool

from skillwire.core.wire import INTERNAL_ERROR, INVALID_PARAMS

logger = logging.getLogger(__name__)


class ServedTools(Protocol):
    """Some tools: their definitions, and an answer to a call of one of them by name."""

    @property
    def tools(self) -> Sequence[Tool]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult: ...


class ToolSet:
    """The tools of several `ServedTools`, listed together and called by name through one pair of handlers."""

    def __init__(self, parts: Iterable[ServedTools]) -> None:
        self._by_name: dict[str, ServedTools] = {}
        self._tools: list[Tool] = []
        for part in parts:
            for tool in part.tools:
                if tool.name in self._by_name:
                    raise ValueError(f"two tools are named {tool.name!r}")
                self._by_name[tool.name] = part
                self._tools.append(tool)

    @property
    def tools(self) -> Sequence[Tool]:
        return tuple(self._tools)

    def install(self, server: Server[Any]) -> None:
        """Serve tools/list and tools/call on `server` (which must have no other tools)."""
        for method in ("tools/list", "tools/call"):
            if server.get_request_handler(method) is not None:
                raise ValueError(f"{method!r} already has a handler on this server")
        server.add_request_handler("tools/list", PaginatedRequestParams, self._list_tools)
        server.add_request_handler("tools/call", CallToolRequestParams, self._call_tool)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """Call the tool `name`: -32602 if none is served by that name, -32603 (logged) if it fails unexpectedly."""
        part = self._by_name.get(name)
        if part is None:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name[:100]!r}")
        try:
            return await part.call(name, arguments)
        except MCPError:
            raise
        except Exception:
            logger.exception("internal error while calling the tool %s", name)
            raise MCPError(INTERNAL_ERROR, "Internal error while answering tools/call; see the server log") from None

    async def _list_tools(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> Any:
        return ListToolsResult(tools=list(self._tools))

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> Any:
        return await self.call(params.name, params.arguments or {})
