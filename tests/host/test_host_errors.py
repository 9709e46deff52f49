"""`Host` lets no SDK exception out (issue 20): a server's error answer reaches the caller as a skillwire exception
that keeps the server's code and message, with the SDK's `MCPError` at the end of the cause chain.

The hostile server (`tests.support.hostile`, the SDK's low-level `Server`) runs in-process.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from skillwire import ApproveLoads, Host, ReadFailed, RequestFailed
from skillwire.core.wire import SKILLS_LIST, SkillsListParams
from tests.support import hostile as h

pytestmark = pytest.mark.anyio

PDF = "skill://pdf-processing/SKILL.md"
INVOICE = "skill://pdf-processing/templates/invoice.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def assert_from_the_sdk(failed: RequestFailed) -> None:
    """The chain ends in the SDK's error, with the same code: nothing of it was lost on the way."""
    cause: BaseException | None = failed
    while isinstance(cause, RequestFailed):
        cause = cause.__cause__
    assert isinstance(cause, MCPError)
    assert (cause.code, cause.message) == (failed.code, failed.message)


async def test_a_read_the_server_refuses_is_read_failed_with_its_code() -> None:
    """A listed file the server no longer serves: ReadFailed (a HostError and a RequestFailed) naming the server by
    its label, with the server's -32602 and message."""
    server = h.build_hostile_server("honest")
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("s0", server.server)
        await host.load_skill("s0:pdf-processing")
        del server.catalog.files[INVOICE]
        with pytest.raises(ReadFailed) as caught:
            await host.read_skill_file("s0:pdf-processing", "templates/invoice.md")
    failed = caught.value
    assert (failed.origin, failed.uri, failed.method, failed.code) == ("s0", INVOICE, "resources/read", INVALID_PARAMS)
    assert failed.message == f"No resource is served at {INVOICE}"
    assert str(failed) == f"server 's0' could not serve {INVOICE}: No resource is served at {INVOICE}"
    assert_from_the_sdk(failed)


async def test_a_directory_read_the_server_refuses_is_read_failed() -> None:
    """A dynamic skill's directory read answered with an error: ReadFailed, saying it could not list."""
    server = h.build_hostile_server("dynamic-big")
    async with Host(prompt=ApproveLoads(), allow_dynamic=True) as host:
        await host.add_server("s0", server.server)
        await host.load_skill("s0:big-report")
        with pytest.raises(ReadFailed) as caught:
            await host.list_skill_directory("s0:big-report", "nothing")
    failed = caught.value
    assert (failed.method, failed.code) == ("resources/directory/read", INVALID_PARAMS)
    assert str(failed).startswith("server 's0' could not list skill://big-report/nothing: ")
    assert_from_the_sdk(failed)


async def test_a_listing_the_server_refuses_is_request_failed() -> None:
    """skills/list answered with an error while adding a server: RequestFailed, and the server is not kept."""
    server = h.build_hostile_server("honest")

    async def refuse(ctx: ServerRequestContext[Any, Any], params: SkillsListParams) -> dict[str, Any]:
        raise MCPError(-32603, "listing is down")

    server.server.add_request_handler(SKILLS_LIST, SkillsListParams, refuse)
    async with Host() as host:
        with pytest.raises(RequestFailed) as caught:
            await host.add_server("s0", server.server)
        assert host.catalog() == ()
    assert (caught.value.method, caught.value.code, caught.value.message) == ("skills/list", -32603, "listing is down")
    assert_from_the_sdk(caught.value)
