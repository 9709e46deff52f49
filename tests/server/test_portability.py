"""`PortabilityCheck` in a `SkillService` (skillwire choice, issue 22): `--strict-portable`'s screen holds for every
catalog the service serves, the first and each rebuilt one; only a SKILL.md whose digest changed is linted again."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillwire.server.portability import PortabilityCheck
from skillwire.server.skill_service import SkillService
from skillwire.sources.folder.source import FolderSource
from tests.support.skills import write_skill

pytestmark = pytest.mark.anyio

LISTED_TOOLS = "---\nname: tools\ndescription: Uses tools\nallowed-tools: [Read, Write]\n---\nBody.\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_skill_edited_into_a_trap_is_refused_at_the_next_rebuild_and_served_again_once_fixed(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path, "good")
    write_skill(tmp_path, "tools")
    check = PortabilityCheck()
    service = SkillService(FolderSource([tmp_path]), screen=check.screen)
    assert list(service.catalog.skill_uris) == ["skill://good/SKILL.md", "skill://tools/SKILL.md"]

    (tmp_path / "tools" / "SKILL.md").write_text(LISTED_TOOLS, encoding="utf-8")
    catalog = await service.rebuild()
    assert list(catalog.skill_uris) == ["skill://good/SKILL.md"]
    (refusal,) = catalog.refusals
    assert (refusal.path, refusal.rule, refusal.line) == ("skill://tools/SKILL.md", "allowed-tools-list", 4)
    assert refusal.fix == "write it as one string: allowed-tools: Read Write"
    assert [s["uri"] for s in service.list_skills(None, modern=True)["skills"]] == ["skill://good/SKILL.md"]

    (tmp_path / "tools" / "SKILL.md").write_text(LISTED_TOOLS.replace("[Read, Write]", "Read Write"), encoding="utf-8")
    catalog = await service.rebuild()
    assert list(catalog.skill_uris) == ["skill://good/SKILL.md", "skill://tools/SKILL.md"]
    assert catalog.refusals == ()


def test_an_unchanged_skill_md_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warnings of a SKILL.md are kept by its digest: a second look at the same skills reads nothing."""
    write_skill(tmp_path, "good")
    source = FolderSource([tmp_path])
    check = PortabilityCheck()
    assert check.warnings(source.scan()) == []
    again = source.scan()
    monkeypatch.setattr(PortabilityCheck, "_lint", lambda *_: pytest.fail("linted again"))
    assert check.warnings(again) == []
