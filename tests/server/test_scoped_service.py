"""SkillService with a caller's scope, in process over real folders; `serve --scopes` with a bad policy file.

Issue 10 (skillwire choices on the spec's errors): a skill outside the caller's scope costs what a missing
one costs (no disk re-check, no rebuild), and a policy that cannot be used stops the server before it
listens, with one line.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from skillwire.cli.main import main
from skillwire.core.catalog import Catalog
from skillwire.core.scopes import Caller, parse_policy
from skillwire.server.skill_service import SkillService
from skillwire.sources.folder.source import FolderSource

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class CountingSource(FolderSource):
    """A real folder source that counts how often the service goes back to the disk."""

    def __init__(self, roots: Iterable[Path]) -> None:
        super().__init__(roots)
        self.checks: list[str] = []
        self.updates = 0

    def changed(self, skill_uri: str) -> bool:
        self.checks.append(skill_uri)
        return super().changed(skill_uri)

    def update(self, paths: Iterable[str | os.PathLike[str]], generation: int) -> Catalog:
        self.updates += 1
        return super().update(paths, generation)


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for path in ("team/open", "team/closed"):
        folder = root / path
        (folder / "docs").mkdir(parents=True)
        name = path.rsplit("/", 1)[-1]
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill\n---\n")
        (folder / "docs" / "a.md").write_text("a\n")
    return root


async def test_a_hidden_skill_is_never_rechecked_on_disk_or_rebuilt_even_when_it_changed(tmp_path: Path) -> None:
    """Issue 10 "same timing class": a URI outside the scope takes the path of a missing one, never the disk."""
    root = make_root(tmp_path)
    source = CountingSource([root])
    service = SkillService(source)
    scope = parse_policy('[[grant]]\nsubject = "a"\nskills = ["team/open"]\n', origin="p").visibility(
        Caller(subject="a")
    )
    (root / "team" / "closed" / "docs" / "a.md").write_text("changed on disk\n")  # a read would rebuild
    for method, uri in [
        ("get", "skill://team/closed/SKILL.md"),
        ("read", "skill://team/closed/docs/a.md"),
        ("dir", "skill://team/closed/docs"),
        ("dir", "skill://team/closed"),
    ]:
        calls: dict[str, Callable[[str], Awaitable[dict[str, Any]]]] = {
            "get": lambda u: service.get_skill(u, modern=True, scope=scope),
            "read": lambda u: service.read_resource(u, modern=True, scope=scope),
            "dir": lambda u: service.read_directory(u, None, modern=True, scope=scope),
        }
        with pytest.raises(MCPError) as hidden:
            await calls[method](uri)
        assert "is served at" in hidden.value.error.message
    assert source.checks == []
    assert source.updates == 0
    assert service.catalog.generation == 0
    await service.get_skill("skill://team/open/SKILL.md", modern=True, scope=scope)
    assert source.checks == ["skill://team/open/SKILL.md"]  # a visible one is re-checked as always


async def test_without_a_scope_every_answer_is_as_before(tmp_path: Path) -> None:
    """No policy: the catalog itself answers (nothing hidden, the configured public cache scope)."""
    service = SkillService(FolderSource([make_root(tmp_path)]))
    listing = service.list_skills(None, modern=True)
    assert [s["uri"] for s in listing["skills"]] == ["skill://team/closed/SKILL.md", "skill://team/open/SKILL.md"]
    assert listing["cacheScope"] == "public"
    assert service.view(service.catalog, None) is service.catalog


@pytest.mark.parametrize(
    ("policy", "says"),
    [
        ('[[grant]]\nsubject = "ci"\nskils = ["**"]\n', "unknown key 'skils'"),
        ("[[grant]\n", "not valid TOML"),
        (None, "cannot read it"),
        ("fifo", "not a regular file"),
    ],
    ids=["typo", "syntax", "missing", "fifo"],
)
def test_a_bad_policy_at_start_is_one_error_line_before_listening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str | None, says: str
) -> None:
    """Issue 10: a policy that cannot be used stops `serve` with exit status 1 and one line, before it binds."""
    root = make_root(tmp_path)
    path = tmp_path / "scopes.toml"
    if policy == "fifo":
        os.mkfifo(path)  # a reader of a FIFO would wait forever for a writer
    elif policy is not None:
        path.write_text(policy)
    status = main(["serve", str(root), "--scopes", str(path), "--http", "127.0.0.1:0", "--quiet"])
    captured = capsys.readouterr()
    assert status == 1
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"skillwire: error: {path}: ")
    assert says in lines[0]
    assert "listening" not in captured.err
