"""FastMCP 4.1 both ways: its Skills client against `skillwire serve`, and skillwire's `Host` against its server.

FastMCP runs from its own venv (fastmcp pins its own dependency ranges; it never enters the project's), made on
first use with the interpreter running the tests and kept in the user cache folder by `bench.peers`'s
peer-environment code; a later run reuses it. The first run installs fastmcp 4.1.x from PyPI (about a minute).

FastMCP speaks Skills on the 2026-07-28 era only, so its client runs once per transport. Its server is the one
`bench.peers` measures, over HTTP, serving a copy of the same skills in one folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from bench.peers import PeerPackage, ensure_peer_venv

from skillwire.client.host import Host
from skillwire.host.approvals import (
    CrossOriginReadRequest,
    ExecutionRequest,
    SkillApprovalDecision,
    SkillApprovalRequest,
)
from tests.interop.clients import ClientRun, Skillwire, assert_every_file_verified, record, run_json_client
from tests.interop.fixture import expected_files, normal_uri, write_edge_skills
from tests.support.servers import EXAMPLE_SKILLS, MODERN_VERSION, HttpServer, Transport, http_server

PEER_SCRIPTS = Path(__file__).resolve().parent / "peer_scripts"
# The interpreter running the tests makes the venv: Python 3.11 on a fresh machine (fastmcp 4.1 needs >= 3.10).
FASTMCP = PeerPackage(
    f"fastmcp-py{sys.version_info.major}.{sys.version_info.minor}",
    "fastmcp>=4.1,<4.2",
    f"{sys.version_info.major}.{sys.version_info.minor}",
    (("fastmcp", "4.1."),),
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def fastmcp_python() -> tuple[Path, str]:
    """The FastMCP peer venv's interpreter and the fastmcp version it holds."""
    python, versions = ensure_peer_venv(FASTMCP)
    return python, versions["fastmcp"]


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
def one_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/skills and the edge-case skills in one folder (FastMCP's provider serves one root)."""
    root = tmp_path_factory.mktemp("one-root") / "skills"
    shutil.copytree(EXAMPLE_SKILLS, root)
    return write_edge_skills(root)


@pytest.fixture(scope="module")
def fastmcp_server(fastmcp_python: tuple[Path, str], one_root: Path) -> Iterator[HttpServer]:
    """FastMCP's Skills server over HTTP, serving `one_root`."""
    command = [str(fastmcp_python[0]), str(PEER_SCRIPTS / "fastmcp_server.py"), str(one_root)]
    with http_server([], command=command) as server:
        yield server
        server.assert_alive()


class ApproveLoads:
    """The user approves loading every skill and grants nothing else."""

    async def approve_skill(self, request: SkillApprovalRequest) -> SkillApprovalDecision:
        return SkillApprovalDecision(approved=True, grants=frozenset(), remember=False)

    async def approve_execution(self, request: ExecutionRequest) -> bool:
        return False

    async def approve_cross_origin_read(self, request: CrossOriginReadRequest) -> bool:
        return False


async def test_host_loads_every_fastmcp_skill_and_reads_every_file_verified(
    fastmcp_python: tuple[Path, str], fastmcp_server: HttpServer, one_root: Path
) -> None:
    """Spec MUSTs on a server nobody here wrote: every load and read is verified, and the bytes are those on disk."""
    expected = {normal_uri(uri): digest for uri, digest in expected_files([one_root]).items()}
    files: dict[str, str] = {}
    skills: list[str] = []
    async with Host(prompt=ApproveLoads()) as host:
        await host.add_server("fastmcp", fastmcp_server.url)
        protocol_version = host.client("fastmcp").protocol_version
        assert host.problems("fastmcp") == ()
        for item in host.catalog():
            skills.append(item.uri)
            loaded = await host.load_skill(item.handle)
            window = host.window(item.handle)
            assert loaded.grants == frozenset()
            assert not isinstance(window.entry.resources, str), f"{item.uri} is dynamic"
            for record_ in window.entry.resources:
                # By the path a model would ask for: relative to the skill's folder, not percent-encoded.
                relative = unquote(record_.uri[len(window.entry.root_uri) + 1 :])
                data = await host.read_skill_file(item.handle, relative)
                files[normal_uri(record_.uri)] = hashlib.sha256(data).hexdigest()
    run = ClientRun(
        client="skillwire Host",
        server=f"FastMCP {fastmcp_python[1]}",
        transport="http",
        era="modern",
        protocol_version=protocol_version,
        skills=tuple(skills),
        files=files,
        verified=len(files),
    )
    record(run)
    assert protocol_version == MODERN_VERSION
    assert sorted(skills) == sorted(uri for uri in expected if uri.endswith("/SKILL.md"))
    assert files == expected
