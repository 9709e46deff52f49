"""Embedding the Skills extension in a server of one's own (issue 20), in-process.

A duplicate name is logged by the service itself, so an embedder hears of it without the CLI.
"""

from __future__ import annotations

import logging

import pytest

from skillwire import MemorySource, SkillService, SkillsExtension

pytestmark = pytest.mark.anyio

SERVICE_LOG = "skillwire.server.skill_service"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def skill_md(name: str) -> bytes:
    return f"---\nname: {name}\ndescription: Does {name} things.\n---\n# {name}\n".encode()


def extension(files: dict[str, bytes] | None = None) -> SkillsExtension:
    return SkillsExtension(SkillService(MemorySource(files or {"pdf/SKILL.md": skill_md("pdf")})))


async def test_a_duplicate_name_is_logged_once_by_the_service_naming_both_skills(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """skillwire choice (issue 20): an embedder is told of two skills sharing a name (before: only `skillwire serve`
    said it); once per new set of skills, not at every rebuild."""
    files = {"team-a/pdf/SKILL.md": skill_md("pdf"), "team-b/pdf/SKILL.md": skill_md("pdf")}
    with caplog.at_level(logging.WARNING, logger=SERVICE_LOG):
        skills = extension(files)
        await skills.service.rebuild()  # the same skills: nothing new to say
        first = [r.getMessage() for r in caplog.records if r.name == SERVICE_LOG]
        skills.service.swap(MemorySource({**files, "team-c/pdf/SKILL.md": skill_md("pdf")}).scan())
        second = [r.getMessage() for r in caplog.records if r.name == SERVICE_LOG][len(first) :]
    assert first == ["the name 'pdf' is used by 2 skills: skill://team-a/pdf/SKILL.md, skill://team-b/pdf/SKILL.md"]
    assert second == [
        "the name 'pdf' is used by 3 skills: "
        "skill://team-a/pdf/SKILL.md, skill://team-b/pdf/SKILL.md, skill://team-c/pdf/SKILL.md"
    ]
