"""SkillService over real folders: snapshots, freshness of skills/get, verified reads (Getting a Skill, Reading)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.sources.folder.source import FolderSource

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_root(tmp_path: Path) -> Path:
    skill = tmp_path / "root" / "alpha"
    (skill / "docs").mkdir(parents=True)
    (skill / "SKILL.md").write_bytes(b"---\nname: alpha\ndescription: A skill\n---\n# Alpha\n")
    (skill / "docs" / "a.md").write_bytes(b"first\r\n")
    return tmp_path / "root"


def resources(entry: dict[str, object]) -> dict[str, tuple[str, int]]:
    listed = entry["resources"]
    assert isinstance(listed, list)
    return {r["uri"]: (r["digest"], r["size"]) for r in listed}


async def test_skills_get_sees_an_added_file_at_once(tmp_path: Path) -> None:
    """Spec: skills/get is how a host refreshes one skill; skillwire re-checks the folder on every call."""
    root = make_root(tmp_path)
    service = SkillService(FolderSource([root]))
    before = await service.get_skill("skill://alpha/SKILL.md", modern=True)
    assert set(resources(before["skill"])) == {"skill://alpha/SKILL.md", "skill://alpha/docs/a.md"}
    (root / "alpha" / "docs" / "b.md").write_bytes(b"second\n")
    after = await service.get_skill("skill://alpha/SKILL.md", modern=True)
    assert "skill://alpha/docs/b.md" in resources(after["skill"])
    assert service.catalog.generation == 1


async def test_unchanged_skill_does_not_rebuild(tmp_path: Path) -> None:
    service = SkillService(FolderSource([make_root(tmp_path)]))
    await service.get_skill("skill://alpha/SKILL.md", modern=True)
    await service.get_skill("skill://alpha/SKILL.md", modern=True)
    assert service.catalog.generation == 0


async def test_read_returns_exact_bytes_and_text_or_blob(tmp_path: Path) -> None:
    """Spec: digests cover raw bytes; skillwire serves text only when the bytes are strict UTF-8."""
    root = make_root(tmp_path)
    (root / "alpha" / "img.bin").write_bytes(b"\xff\xfe\x00\x01")
    service = SkillService(FolderSource([root]))
    text = await service.read_resource("skill://alpha/docs/a.md", modern=True)
    assert text["contents"] == [{"uri": "skill://alpha/docs/a.md", "mimeType": "text/markdown", "text": "first\r\n"}]
    blob = await service.read_resource("skill://alpha/img.bin", modern=True)
    assert base64.b64decode(blob["contents"][0]["blob"]) == b"\xff\xfe\x00\x01"
    assert (text["ttlMs"], text["cacheScope"]) == (300_000, "public")
    legacy = await service.read_resource("skill://alpha/docs/a.md", modern=False)
    assert "ttlMs" not in legacy


async def test_read_of_changed_file_reindexes_before_answering(tmp_path: Path) -> None:
    """skillwire MUST (issue): a read never returns bytes that match no published manifest."""
    root = make_root(tmp_path)
    service = SkillService(FolderSource([root]))
    (root / "alpha" / "docs" / "a.md").write_bytes(b"edited and longer\n")
    result = await service.read_resource("skill://alpha/docs/a.md", modern=True)
    assert result["contents"][0]["text"] == "edited and longer\n"
    entry = (await service.get_skill("skill://alpha/SKILL.md", modern=True))["skill"]
    assert resources(entry)["skill://alpha/docs/a.md"][1] == len(b"edited and longer\n")


async def test_read_of_deleted_file_is_invalid_params(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    service = SkillService(FolderSource([root]))
    os.remove(root / "alpha" / "docs" / "a.md")
    with pytest.raises(MCPError) as info:
        await service.read_resource("skill://alpha/docs/a.md", modern=True)
    assert info.value.code == -32602


async def test_errors_name_the_problem(tmp_path: Path) -> None:
    service = SkillService(FolderSource([make_root(tmp_path)]), ServeOptions(page_size=1))
    cases = [
        (service.get_skill("skill://nope/SKILL.md", modern=True), "No skill is served at skill://nope/SKILL.md"),
        (service.get_skill(None, modern=True), "params.uri is required"),
        (service.get_skill(7, modern=True), "params.uri must be a string, not int"),
        (service.read_resource("skill://alpha/docs", modern=True), "is a directory"),
    ]
    for call, message in cases:
        with pytest.raises(MCPError) as info:
            await call
        assert info.value.code == -32602
        assert message in info.value.message
    with pytest.raises(MCPError, match="is not a directory resource"):
        await service.read_directory("skill://alpha/SKILL.md", None, modern=True)
    with pytest.raises(MCPError, match="No directory is served"):
        await service.read_directory("skill://alpha/nope", None, modern=True)
    with pytest.raises(MCPError, match="Invalid cursor"):
        service.list_skills("bogus", modern=True)
    with pytest.raises(MCPError, match=r"params\.cursor must be a string"):
        service.list_skills(3, modern=True)


async def test_resources_list_pages_and_describes_skill_md(tmp_path: Path) -> None:
    """Spec SHOULD: SKILL.md resources carry name and description from the frontmatter."""
    service = SkillService(FolderSource([make_root(tmp_path)]), ServeOptions(page_size=1))
    seen = []
    cursor = None
    while True:
        page = service.list_resources(cursor, modern=True)
        seen.extend(page["resources"])
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert [r["uri"] for r in seen] == ["skill://alpha/SKILL.md", "skill://alpha/docs/a.md"]
    assert seen[0]["name"] == "alpha"
    assert seen[0]["description"] == "A skill"
    assert seen[0]["mimeType"] == "text/markdown"
    assert seen[1]["name"] == "a.md"


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="page_size"):
        ServeOptions(page_size=0)
    with pytest.raises(ValueError, match="ttl_ms"):
        ServeOptions(ttl_ms=-1)
