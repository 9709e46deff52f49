"""What every interop module serves: the bundled example skills and the edge-case skills, over HTTP and stdio.

The HTTP server starts once per module; the stdio command is spawned by each client itself. Pages of three
skills, so every client walks several `skills/list` pages.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.peers import PeerPackage, ensure_peer_venv

from tests.interop.clients import Skillwire
from tests.interop.fixture import expected_files, write_edge_skills
from tests.support.servers import EXAMPLE_SKILLS, http_server, serve_command

SERVE_OPTIONS = ("--page-size", "3", "--no-watch")


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ...]:
    """The served roots: examples/skills as bundled, and the edge-case skills."""
    return (EXAMPLE_SKILLS, write_edge_skills(tmp_path_factory.mktemp("edge")))


@pytest.fixture(scope="module")
def expected(roots: tuple[Path, ...]) -> dict[str, str]:
    """Every served file as {URI: sha256 hex of its bytes on disk}."""
    return expected_files(roots)


@pytest.fixture(scope="module")
def skillwire(roots: tuple[Path, ...]) -> Iterator[Skillwire]:
    """One `skillwire serve --http` for the module, and the stdio command line."""
    with http_server(roots, *SERVE_OPTIONS) as server:
        yield Skillwire(server.url, tuple(serve_command(roots, *SERVE_OPTIONS)))
        server.assert_alive()


@pytest.fixture(scope="module")
def one_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/skills and the edge-case skills in one folder (FastMCP's provider serves one root)."""
    root = tmp_path_factory.mktemp("one-root") / "skills"
    shutil.copytree(EXAMPLE_SKILLS, root)
    return write_edge_skills(root)


# The interpreter running the tests makes the venv: Python 3.11 on a fresh machine (fastmcp 4.1 needs >= 3.10),
# over the project's venv (FastMCP's SDK and its dependencies are skillwire's, at the same versions): only FastMCP and
# what it adds are installed, while the tests run.
FASTMCP = PeerPackage(
    f"fastmcp-py{sys.version_info.major}.{sys.version_info.minor}",
    "fastmcp>=4.1,<4.2",
    f"{sys.version_info.major}.{sys.version_info.minor}",
    (("fastmcp", "4.1."),),
    layered=True,
)


@pytest.fixture(scope="module")
def fastmcp_python() -> tuple[Path, str]:
    """The FastMCP peer venv's interpreter and the fastmcp version it holds (made on first use, then reused)."""
    python, versions = ensure_peer_venv(FASTMCP)
    return python, versions["fastmcp"]
