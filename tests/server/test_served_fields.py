"""A real `skillwire serve --http`: optional-field refusals, directory-read cache hints, SKILL.md metadata alike.

Spec MUST: a skill served over MCP conforms to the Agent Skills specification, optional fields included (refused
skills are left out, the rest are served). skillwire choice: 2026-07-28 directory reads carry ttlMs and cacheScope
(the TS SDK v2 and the Inspector reject them without). Spec SHOULD (Resource Metadata): SKILL.md is named and
described from its frontmatter, in directory reads as in resources/list.
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
    directory_read,
    resources_list,
    serve_target,
    wire,
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


async def test_modern_directory_read_carries_ttl_and_cache_scope(target: ServerTarget) -> None:
    """TS SDK v2 / Inspector: "ttlMs: expected number, cacheScope: expected public|private" on 2026-07-28."""
    async with connect(target, mode="modern") as client:
        for uri in ("skill://good", "skill://good/docs"):
            raw = wire(await directory_read(client, uri))
            assert (raw.get("resultType"), raw.get("ttlMs"), raw.get("cacheScope")) == ("complete", 300_000, "public")


async def test_handshake_era_directory_read_has_no_cache_hints(target: ServerTarget) -> None:
    """The 2026-only CacheableResult fields stay off a handshake-era (initialize) connection."""
    async with connect(target, mode="legacy") as client:
        raw = wire(await directory_read(client, "skill://good"))
    assert "ttlMs" not in raw
    assert "cacheScope" not in raw
    assert raw["resources"]


@pytest.mark.parametrize("mode", MODES)
async def test_directory_read_gives_skill_md_the_metadata_resources_list_gives(
    target: ServerTarget, mode: Mode
) -> None:
    """SKILL.md was 'SKILL.md' with no description in a directory read, the skill's name and description in a list."""
    async with connect(target, mode=mode) as client:
        listed = {r["uri"]: r for r in (await resources_list(client)).resources}
        children = (await directory_read(client, "skill://good")).resources
        docs = (await directory_read(client, "skill://good/docs")).resources
    skill_md = next(c for c in children if c["uri"] == "skill://good/SKILL.md")
    assert skill_md == listed["skill://good/SKILL.md"]
    assert skill_md["name"] == "good"
    assert skill_md["description"] == "A skill whose optional fields follow the Agent Skills rules."
    assert docs == [listed["skill://good/docs/notes.md"]]
    folder = next(c for c in children if c["uri"] == "skill://good/docs")
    assert folder == {"uri": "skill://good/docs", "name": "docs", "mimeType": "inode/directory"}
