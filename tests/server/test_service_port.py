"""SkillService over the source port (skillwire choice, issue 12): it does no I/O of its own, reads through the
catalog's FileContent, and asks only the abilities a source declares."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from skillwire.core.catalog import Catalog
from skillwire.server.skill_service import SkillService
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.memory.source import MemorySource
from tests.sources.contract.cases import skill_md

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RecordingFolder(FolderSource):
    """A real folder source that records what the service asks of its incremental ability."""

    def __init__(self, roots: Iterable[Path]) -> None:
        super().__init__(roots)
        self.asked: list[str] = []
        self.updated: list[list[str]] = []

    def places_for(self, uri: str) -> list[str]:
        self.asked.append(uri)
        return super().places_for(uri)

    def update(self, paths: Iterable[str | os.PathLike[str]], generation: int) -> Catalog:
        self.updated.append([os.fspath(p) for p in paths])
        return super().update(paths, generation)


async def test_a_service_over_a_memory_source_answers_every_request() -> None:
    """The whole request surface works over a source that has no folder, no path and no optional ability."""
    source = MemorySource({"pdf/SKILL.md": skill_md("pdf"), "pdf/docs/a.md": b"\xff\x00", "pdf/b.md": b"b\n"})
    service = SkillService(source)
    entry = await service.get_skill("skill://pdf/SKILL.md", modern=True)
    assert [r["uri"] for r in entry["skill"]["resources"]] == [
        "skill://pdf/SKILL.md",
        "skill://pdf/b.md",
        "skill://pdf/docs/a.md",
    ]
    assert (await service.read_resource("skill://pdf/b.md", modern=True))["contents"][0]["text"] == "b\n"
    assert (await service.read_resource("skill://pdf/docs/a.md", modern=False))["contents"][0]["blob"] == "/wA="
    listing = await service.read_directory("skill://pdf", None, modern=True)
    assert [r["name"] for r in listing["resources"]] == ["pdf", "b.md", "docs"]  # SKILL.md is named by its frontmatter
    assert service.catalog.generation == 0  # nothing to re-check: a memory source cannot change under a read


async def test_a_read_that_finds_other_bytes_asks_the_source_where_to_look_again(tmp_path: Path) -> None:
    """The re-index after a mismatched read covers what the source's places_for names, nothing the service
    works out from paths itself."""
    root = tmp_path / "skills"
    (root / "pdf").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_bytes(skill_md("pdf"))
    (root / "pdf" / "a.md").write_bytes(b"one\n")
    source = RecordingFolder([root])
    service = SkillService(source)
    (root / "pdf" / "a.md").write_bytes(b"two\n")  # same size: only the read's digest check can tell
    read = await service.read_resource("skill://pdf/a.md", modern=True)
    assert read["contents"][0]["text"] == "two\n"
    assert source.asked == ["skill://pdf/a.md"]
    assert source.updated == [[os.path.realpath(root / "pdf" / "a.md")]]
    assert service.stats.rehash_mismatches == 1  # what /metrics reports as skillwire_rehash_mismatches


def test_places_for_names_the_file_a_uri_serves_and_nothing_for_others(tmp_path: Path) -> None:
    """A folder's places are real paths; a URI it does not serve has none."""
    root = tmp_path / "skills"
    (root / "pdf" / "docs").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_bytes(skill_md("pdf"))
    (root / "pdf" / "docs" / "a.md").write_bytes(b"a\n")
    source = FolderSource([root])
    source.scan()
    places: Sequence[str] = source.places_for("skill://pdf/docs/a.md")
    assert places == [os.path.realpath(root / "pdf" / "docs" / "a.md")]
    assert source.places_for("skill://nothing/SKILL.md") == []
