"""A real `skillwire serve --http`: optional-field refusals.

Spec MUST: a skill served over MCP conforms to the Agent Skills specification, optional fields included (refused
skills are left out, the rest are served).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.kdense import write_kdense_tree
from tests.support.servers import (
    MODES,
    Mode,
    ServerTarget,
    all_skills,
    connect,
    serve_target,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerTarget]:
    """K-Dense-shaped skills beside a good one (with a subfolder), served over HTTP for the whole module."""
    base = tmp_path_factory.mktemp("served-fields")
    root = write_kdense_tree(base / "skills")
    (root / "good" / "docs").mkdir()
    (root / "good" / "docs" / "notes.md").write_bytes(b"notes\n")
    with serve_target("http", [root], base / "logs") as running:
        yield running


@pytest.mark.parametrize("mode", MODES)
async def test_skills_breaking_optional_field_rules_are_left_out_and_the_rest_served(
    target: ServerTarget, mode: Mode
) -> None:
    """K-Dense's list-valued metadata was served, and broke FastMCP's client for the whole listing."""
    async with connect(target, mode=mode) as client:
        skills = await all_skills(client)
    assert [s["uri"] for s in skills] == ["skill://good/SKILL.md"]
    assert "metadata-format" in target.server_stderr()
