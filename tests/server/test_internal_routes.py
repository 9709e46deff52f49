"""The extension's internal methods are not reachable from the wire (issue 20).

The middleware hands `resources/read` and `resources/list` of skill:// URIs to `skillwire/resources/read` and
`skillwire/resources/list`, so that the SDK shapes their results. A client that names those methods itself gets
-32601 Method not found, exactly as for a method nobody serves: on both protocol eras, over stdio and HTTP.

The server is an embedder's (`tests/support/embedded_server.py`: `MCPServer` + `skills.install`). One process
answers a handshake-era stdio client and HTTP clients of both eras; a second one the 2026-07-28 stdio client (a
stdio connection keeps the era its first request opens).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Final, Literal

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import Request, Result

from tests.support.servers import EXAMPLE_SKILLS, REPO_ROOT, REQUEST_TIMEOUT_S, START_TIMEOUT_S

pytestmark = pytest.mark.anyio

READ: Final = "skillwire/resources/read"
LIST: Final = "skillwire/resources/list"
UNKNOWN: Final = "skillwire/no-such-method"
PARAMS = {"uri": "skill://pdf-processing/SKILL.md"}  # valid for the read route: only the method is refused


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Read(Request[dict[str, Any] | None, Literal["skillwire/resources/read"]]):
    method: Literal["skillwire/resources/read"] = READ


class _List(Request[dict[str, Any] | None, Literal["skillwire/resources/list"]]):
    method: Literal["skillwire/resources/list"] = LIST


class _Unknown(Request[dict[str, Any] | None, Literal["skillwire/no-such-method"]]):
    method: Literal["skillwire/no-such-method"] = UNKNOWN


async def answers(client: Client) -> dict[str, object]:
    """What each method gets: the error as a JSON object, or the result it was answered with."""
    found: dict[str, object] = {}
    for request in (_Read(params=PARAMS), _List(params={}), _Unknown(params=PARAMS)):
        try:
            result = await client.session.send_request(request, Result)
        except MCPError as err:
            found[request.method] = err.error.model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            found[request.method] = {"answered": result.model_dump(mode="json", by_alias=True)}
    return found


@asynccontextmanager
async def stdio_client_of(log: Path, mode: Literal["auto", "legacy"], *options: str) -> AsyncIterator[Client]:
    script = [str(REPO_ROOT / "tests" / "support" / "embedded_server.py"), str(EXAMPLE_SKILLS), *options]
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(log.open("w", encoding="utf-8"))
        params = StdioServerParameters(command=sys.executable, args=script, env=dict(os.environ), cwd=REPO_ROOT)
        transport = stdio_client(params, errlog=errlog)
        client = Client(transport, mode=mode, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S)
        yield await stack.enter_async_context(client)


async def listening_url(log: Path) -> str:
    with anyio.fail_after(START_TIMEOUT_S):
        while (found := re.search(r"listening on (http://\S+)", log.read_text(encoding="utf-8"))) is None:
            await anyio.sleep(0.05)
    return found.group(1)


async def test_internal_routes_answer_as_unknown_methods_on_every_era_and_transport(tmp_path: Path) -> None:
    """skillwire choice (issue 20): the rewrite targets are an implementation detail, never a second way in."""
    seen: dict[str, dict[str, object]] = {}
    log = tmp_path / "stdio-and-http.log"
    async with stdio_client_of(log, "legacy", "--http", "127.0.0.1:0") as stdio:
        assert stdio.protocol_version == "2025-11-25"
        seen["stdio 2025-11-25"] = await answers(stdio)
        url = await listening_url(log)
        for mode, era in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
            async with Client(url, mode=mode, cache=None, read_timeout_seconds=REQUEST_TIMEOUT_S) as http:
                assert http.protocol_version == era
                seen[f"http {era}"] = await answers(http)
    async with stdio_client_of(tmp_path / "stdio.log", "auto") as stdio:
        assert stdio.protocol_version == "2026-07-28"
        seen["stdio 2026-07-28"] = await answers(stdio)
    unknown = {"code": -32601, "message": "Method not found"}
    expected = {method: {**unknown, "data": method} for method in (READ, LIST, UNKNOWN)}
    assert seen == dict.fromkeys(seen, expected), seen
    assert len(seen) == 4
