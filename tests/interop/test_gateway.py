"""A skillwire gateway in front of two upstreams nobody changed for it: `skillwire serve` and FastMCP's Skills server,
read through the gateway by real clients that verify every byte (issue 21's acceptance).

    own=mcp:<skillwire serve over HTTP>   fast=mcp:<FastMCP 4.1's server over HTTP>

The TypeScript SDK v2's `SkillsClient` (both eras) and MCP Inspector's `--verify` (both eras) must find every file
of both upstreams under the gateway's prefixes, with the digests of the files on disk.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop.clients import (
    NODE,
    NODE_TOOLS,
    PEER_SCRIPTS,
    assert_every_file_verified,
    need_node_tools,
    record,
    run_json_client,
    run_process,
)
from tests.interop.fixture import expected_files, write_edge_skills
from tests.interop.test_inspector import CLI, run_from_reports
from tests.support.servers import EXAMPLE_SKILLS, MODERN_VERSION, HttpServer, Mode, http_server, serve_command

DRIVER = NODE_TOOLS / "skills-client-interop.mjs"
PROTOCOL = {"legacy": "2025-11-25", "modern": MODERN_VERSION}


def _under(prefix: str, files: dict[str, str]) -> dict[str, str]:
    return {f"skill://{prefix}/" + uri.removeprefix("skill://"): digest for uri, digest in files.items()}


@pytest.fixture(scope="module")
def gateway(
    fastmcp_python: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[HttpServer, dict[str, str]]]:
    """The gateway over both upstreams, and every file it must serve: {gateway URI: sha256 hex on disk}.

    Each upstream serves skills of its own names (the edge cases; the bundled examples), so that no client warns
    of two skills named alike."""
    own_root = write_edge_skills(tmp_path_factory.mktemp("own") / "skills")
    fast_root = tmp_path_factory.mktemp("fast") / "skills"
    shutil.copytree(EXAMPLE_SKILLS, fast_root)
    fast_command = [str(fastmcp_python[0]), str(PEER_SCRIPTS / "fastmcp_server.py"), str(fast_root)]
    with (
        http_server([own_root], "--page-size", "3", "--no-watch") as own,
        http_server([], command=fast_command) as fast,
    ):
        cache = tmp_path_factory.mktemp("gateway-cache")
        specs = (f"own=mcp:{own.url}", f"fast=mcp:{fast.url}")
        command = serve_command([], *specs, "--http", "127.0.0.1:0", "--gateway-cache", str(cache), "--page-size", "3")
        with http_server([], command=command) as server:
            expected = {**_under("own", expected_files([own_root])), **_under("fast", expected_files([fast_root]))}
            yield server, expected
            server.assert_alive()
        own.assert_alive()
        fast.assert_alive()


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_typescript_sdk_verifies_every_file_of_both_upstreams_through_the_gateway(
    era: Mode, gateway: tuple[HttpServer, dict[str, str]]
) -> None:
    need_node_tools("@modelcontextprotocol/client")
    server, expected = gateway
    config = {"transport": "http", "url": server.url, "era": era}
    run = run_json_client("http", era, [str(NODE), str(DRIVER), json.dumps(config)], server="skillwire gateway")
    record(run)
    assert run.protocol_version == PROTOCOL[era]
    assert_every_file_verified(run, expected)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspectors_verify_passes_every_skill_of_both_upstreams_through_the_gateway(
    era: Mode, gateway: tuple[HttpServer, dict[str, str]], tmp_path: Path
) -> None:
    need_node_tools("@modelcontextprotocol/inspector")
    server, expected = gateway
    command = [str(NODE), str(CLI), "--cli", "--method", "skills/list", "--verify", "--protocol-era", era, server.url]
    stdout = run_process(command, env={"HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")})
    run = run_from_reports("http", era, stdout)
    record(run)
    assert_every_file_verified(run, expected)
