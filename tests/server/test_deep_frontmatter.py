"""A skill author's deeply nested frontmatter, attacked from outside: a real `skillwire serve --http`.

skillwire choice (found by tests/property/test_frontmatter_properties.py): frontmatter nested more
than 64 levels is refused with rule `yaml-too-deep`. Nested 300 levels, libyaml parsed it, and then
the SDK could not serialise any skills/list page holding it: every skill on the server vanished
behind a listing that failed (an error response over HTTP, no answer at all over stdio).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.support.servers import all_skills, http_server

pytestmark = pytest.mark.anyio

FREEZE_S = 20.0  # far longer than a listing takes: only a stuck request runs into it


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_deeply_nested_frontmatter_costs_only_its_skill_not_the_listing(tmp_path: Path) -> None:
    """A SKILL.md with `x: [[[...300 levels...]]]` made skills/list fail for every skill on the server."""
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}\n---\n")
    (root / "deep").mkdir()
    nested = "[" * 300 + "]" * 300
    (root / "deep" / "SKILL.md").write_text(f"---\nname: deep\ndescription: Nested\nx: {nested}\n---\n")
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            with anyio.fail_after(FREEZE_S):
                entries = await all_skills(client)
        assert sorted(entry["frontmatter"]["name"] for entry in entries) == ["alpha", "beta"]
        assert "[yaml-too-deep]" in server.stderr
        server.assert_alive()


async def test_a_lone_surrogate_escape_in_frontmatter_costs_only_its_skill_not_the_listing(tmp_path: Path) -> None:
    """Found by `make fuzz`: `k: "\\ud83d"` parsed to a string no UTF-8 JSON message can carry, and the SDK failed to
    serialise every skills/list page holding it. It is refused with rule `yaml-surrogate`; a whole pair still works."""
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}\n---\n")
    (root / "half").mkdir()
    (root / "half" / "SKILL.md").write_text('---\nname: half\ndescription: Half a character\nk: "\\ud83d"\n---\n')
    (root / "whole").mkdir()
    (root / "whole" / "SKILL.md").write_text('---\nname: whole\ndescription: A pair\nk: "\\ud83d\\ude00"\n---\n')
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            with anyio.fail_after(FREEZE_S):
                entries = await all_skills(client)
        by_name = {entry["frontmatter"]["name"]: entry for entry in entries}
        assert sorted(by_name) == ["alpha", "beta", "whole"]
        assert by_name["whole"]["frontmatter"]["k"] == "\U0001f600"
        assert "[yaml-surrogate]" in server.stderr
        server.assert_alive()
