"""Several sources in one server (skillwire choice, issue 12): prefixes, a skill path offered twice, and every
optional ability passed on to the member that has it."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from skillwire.server.skill_service import SkillService
from skillwire.sources.composite import CompositeSource, Member
from skillwire.sources.folder.source import FolderSource
from skillwire.sources.memory.source import MemorySource
from skillwire.sources.port import IncrementalSource, RestorableSource, WatchableSource
from tests.sources.contract.cases import skill_md
from tests.support.source_makers import write_tree


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_prefix_puts_a_members_skills_under_it_with_their_files() -> None:
    """A member under `team` serves skill://team/pdf/SKILL.md, its files and directories renamed alike."""
    memory = MemorySource({"pdf/SKILL.md": skill_md("pdf"), "pdf/docs/a.md": b"a\n"})
    catalog = CompositeSource([Member(memory, ("team", "docs"))]).scan()
    [skill] = catalog.skills
    assert skill.uri == "skill://team/docs/pdf/SKILL.md"
    assert [f.uri for f in skill.files] == ["skill://team/docs/pdf/SKILL.md", "skill://team/docs/pdf/docs/a.md"]
    served = catalog.file("skill://team/docs/pdf/docs/a.md")
    assert served is not None
    assert served.content.read(10) == b"a\n"
    assert [k.name for k in catalog.children_page("skill://team/docs/pdf", None, 10).items] == ["SKILL.md", "docs"]


def test_a_prefixed_members_empty_folders_stay_directories(tmp_path: Path) -> None:
    """`Skill.folders` carries over under a prefix: an empty folder reads as a directory with no children."""
    root = write_tree({"pdf/SKILL.md": skill_md("pdf"), "pdf/drafts/": b""}, tmp_path / "skills")
    catalog = CompositeSource([Member(FolderSource([root]), ("team",))]).scan()
    assert catalog.is_directory("skill://team/pdf/drafts")
    assert catalog.children_page("skill://team/pdf/drafts", None, 10).items == ()


def test_a_skill_path_offered_by_two_sources_is_refused_naming_both(tmp_path: Path) -> None:
    """Neither copy of a doubly offered skill is served; each refusal names both origins."""
    root = write_tree({"pdf/SKILL.md": skill_md("pdf"), "other/SKILL.md": skill_md("other")}, tmp_path / "skills")
    memory = MemorySource({"pdf/SKILL.md": skill_md("pdf", "Another pdf")}, label="generated")
    catalog = CompositeSource([Member(FolderSource([root])), Member(memory)]).scan()
    assert [s.name for s in catalog.skills] == ["other"]
    duplicates = [r for r in catalog.refusals if r.rule == "duplicate-uri"]
    assert len(duplicates) == 2
    for refusal in duplicates:
        assert f"folder {root}" in refusal.message
        assert "generated" in refusal.message
        assert "skill://pdf/SKILL.md" in refusal.message


def test_a_skill_inside_another_sources_skill_folder_is_refused() -> None:
    """A member's skill nested in another member's skill folder is refused (rule overlapping-sources)."""
    outer = MemorySource({"team/SKILL.md": skill_md("team")}, label="outer")
    inner = MemorySource({"pdf/SKILL.md": skill_md("pdf")}, label="inner")
    catalog = CompositeSource([Member(outer), Member(inner, ("team",))]).scan()
    assert [s.uri for s in catalog.skills] == ["skill://team/SKILL.md"]
    assert [(r.rule, "inner" in r.path, "outer" in r.message) for r in catalog.refusals] == [
        ("overlapping-sources", True, True)
    ]


def test_a_bad_prefix_is_refused_with_how_to_fix_it() -> None:
    """A prefix segment must be a URI reg-name, not '.' or '..'."""
    with pytest.raises(ValueError, match="prefix segment"):
        Member(MemorySource({}), ("..",))
    with pytest.raises(ValueError, match="prefix segment"):
        Member(MemorySource({}), ("a b",))


def test_the_composite_declares_every_ability_and_labels_its_members() -> None:
    """The service finds the composite's abilities by their Protocols, and its label names every member."""
    source = CompositeSource([Member(MemorySource({}, label="m1")), Member(MemorySource({}, label="m2"), ("p",))])
    assert isinstance(source, IncrementalSource)
    assert isinstance(source, WatchableSource)
    assert isinstance(source, RestorableSource)
    assert source.label == "m1 + p=m2"
    assert source.revision is None


@pytest.mark.anyio
async def test_an_edit_under_a_prefixed_folder_is_seen_by_skills_get_and_reads(tmp_path: Path) -> None:
    """skills/get re-checks the member's folder and re-indexes only it; reads serve the new bytes."""
    root = write_tree({"pdf/SKILL.md": skill_md("pdf"), "pdf/a.md": b"one\n"}, tmp_path / "skills")
    memory = MemorySource({"gen/SKILL.md": skill_md("gen")})
    service = SkillService(CompositeSource([Member(FolderSource([root]), ("team",)), Member(memory)]))
    before = service.catalog.skill("skill://gen/SKILL.md")
    (root / "pdf" / "a.md").write_bytes(b"two, longer\n")
    entry = await service.get_skill("skill://team/pdf/SKILL.md", modern=True)
    sizes = {r["uri"]: r["size"] for r in entry["skill"]["resources"]}
    assert sizes["skill://team/pdf/a.md"] == len(b"two, longer\n")
    read = await service.read_resource("skill://team/pdf/a.md", modern=True)
    assert read["contents"][0]["text"] == "two, longer\n"
    assert service.catalog.skill("skill://gen/SKILL.md") is before  # the other member was not rebuilt


@pytest.mark.anyio
async def test_a_watched_prefixed_folder_reaches_the_service(tmp_path: Path) -> None:
    """The composite watches its folder member and the rebuild lands under the member's prefix."""
    root = write_tree({"pdf/SKILL.md": skill_md("pdf")}, tmp_path / "skills")
    service = SkillService(CompositeSource([Member(FolderSource([root]), ("team",)), Member(MemorySource({}))]))
    from skillwire.service.watch import watch_and_rebuild

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(
                lambda task_status: watch_and_rebuild(service, step_ms=20, debounce_ms=200, task_status=task_status)
            )
            write_tree({"new/SKILL.md": skill_md("new")}, root)
            while service.catalog.skill("skill://team/new/SKILL.md") is None:
                await anyio.sleep(0.05)
            tg.cancel_scope.cancel()


def test_a_restorable_member_starts_from_its_snapshot_and_the_others_are_scanned(tmp_path: Path) -> None:
    """restore() passes to the folder's digest cache; the composite is unverified until the next scan."""
    root = write_tree({"pdf/SKILL.md": skill_md("pdf")}, tmp_path / "skills")
    cache = tmp_path / "digests.json"
    FolderSource([root], digest_cache=cache).scan()

    def composite() -> CompositeSource:
        folder = FolderSource([root], digest_cache=cache)
        return CompositeSource([Member(folder, ("team",)), Member(MemorySource({"gen/SKILL.md": skill_md("gen")}))])

    source = composite()
    restored = source.restore()
    assert restored is not None
    assert [s.uri for s in restored.skills] == ["skill://gen/SKILL.md", "skill://team/pdf/SKILL.md"]
    assert not source.verified
    source.scan(1)
    assert source.verified
    assert CompositeSource([Member(MemorySource({}))]).restore() is None  # no member kept anything
