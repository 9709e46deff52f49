"""skillwire's `Host` against agentskills-mcp-server 0.7, which needs Python >= 3.12: `make interop-peers` only.

A fresh machine has Python 3.11 alone, so `make test` skips this module; `make interop-peers` runs it with
SKILLWIRE_INTEROP_PEERS=1. Its venv is made by `bench.peers`'s peer-environment code, as for the benchmark
(Python 3.12 from pyenv or `python3.12` on PATH), and its server is the one the benchmark measures, with the
configuration the benchmark writes (one `fs` entry per skill, published at the URIs skillwire gives them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.peers import PEER_PACKAGES, agentskills_config, ensure_peer_venv, load_catalog

from tests.interop.clients import PEER_SCRIPTS, record
from tests.interop.host_run import assert_host_read_disk, host_reads_everything
from tests.support.servers import HttpServer, http_server

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        os.environ.get("SKILLWIRE_INTEROP_PEERS") != "1",
        reason="agentskills-mcp-server needs Python 3.12: run `make interop-peers`",
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def agentskills_server(one_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, str]]:
    """agentskills-mcp-server over HTTP serving `one_root`, and its version."""
    python, versions = ensure_peer_venv(PEER_PACKAGES["agentskills"])
    config = tmp_path_factory.mktemp("agentskills") / "config.json"
    agentskills_config(load_catalog(one_root), config)
    command = [str(python), str(PEER_SCRIPTS / "agentskills_server.py"), str(config)]
    with http_server([], command=command) as server:
        yield server, versions["agentskills-mcp-server"]
        server.assert_alive()


async def test_host_loads_every_agentskills_skill_and_reads_every_file_verified(
    agentskills_server: tuple[HttpServer, str], one_root: Path
) -> None:
    """Spec MUSTs on a server nobody here wrote: every load and read is verified, and the bytes are those on disk."""
    server, version = agentskills_server
    run = await host_reads_everything(f"agentskills-mcp-server {version}", server.url)
    record(run)
    assert_host_read_disk(run, one_root)
