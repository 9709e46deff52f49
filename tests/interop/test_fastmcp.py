"""FastMCP 4.1 both ways: its Skills client against `skillwire serve`, and skillwire's `Host` against its server.

FastMCP runs from its own venv (fastmcp pins its own dependency ranges; it never enters the project's), made on
first use with the interpreter running the tests (`make test` makes it before pytest starts) and kept inside the
checkout, under .cache/peers, by `bench.peers`'s peer-environment code; a later run reuses it. The first run installs
fastmcp 4.1.x from PyPI (about 20 s).

FastMCP speaks Skills on the 2026-07-28 era only, so its client runs once per transport. Its server is the one
`bench.peers` measures, over HTTP, serving a copy of the same skills in one folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop.clients import PEER_SCRIPTS, Skillwire, assert_every_file_verified, record, run_json_client
from tests.interop.host_run import assert_host_read_disk, host_reads_everything
from tests.support.servers import MODERN_VERSION, HttpServer, Transport, http_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_fastmcp_client_verifies_every_file(
    transport: Transport, fastmcp_python: tuple[Path, str], skillwire: Skillwire, expected: dict[str, str]
) -> None:
    """A skillwire choice checked by a real client: FastMCP lists every skill and reads every file's exact bytes."""
    config = skillwire.config(transport)
    script = PEER_SCRIPTS / "fastmcp_client.py"
    run = run_json_client(transport, "modern", [str(fastmcp_python[0]), str(script), json.dumps(config)])
    record(run)
    assert run.protocol_version == MODERN_VERSION
    assert_every_file_verified(run, expected)


# -- skillwire's host against FastMCP's server -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fastmcp_server(fastmcp_python: tuple[Path, str], one_root: Path) -> Iterator[HttpServer]:
    """FastMCP's Skills server over HTTP, serving `one_root`."""
    command = [str(fastmcp_python[0]), str(PEER_SCRIPTS / "fastmcp_server.py"), str(one_root)]
    with http_server([], command=command) as server:
        yield server
        server.assert_alive()


async def test_host_loads_every_fastmcp_skill_and_reads_every_file_verified(
    fastmcp_python: tuple[Path, str], fastmcp_server: HttpServer, one_root: Path
) -> None:
    """Spec MUSTs on a server nobody here wrote: every load and read is verified, and the bytes are those on disk."""
    run = await host_reads_everything(f"FastMCP {fastmcp_python[1]}", fastmcp_server.url)
    record(run)
    assert_host_read_disk(run, one_root)
