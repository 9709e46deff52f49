"""A real `skillwire serve --http`: what a directory is, read on both protocol eras (Reading Directories).

Spec MUST: "An empty directory yields an empty resources array", and a server declaring directoryRead supports
the method "for every directory within the skill namespaces it serves". skillwire choices: a folder in a skill is
a directory whatever it holds (nothing, or only ignored files), and so is every prefix level above the skills
(`skill://acme` lists `billing` when `skill://acme/billing/refunds/SKILL.md` is served). The server pages by two,
so prefix levels are paged over the wire too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.servers import (
    INVALID_PARAMS,
    MODES,
    Mode,
    ServerTarget,
    connect,
    directory_read,
    http_server,
    resources_read,
)

pytestmark = pytest.mark.anyio

SKILLS = ("acme/billing/refunds", "acme/billing/invoices", "acme/tools/lint", "acme/a", "acme/b", "solo")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_skill(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: Does {folder.name}\n---\n# Hi\n")


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerTarget]:
    """Skills under prefix levels; `solo` holds an empty folder and one holding only ignored files."""
    base = tmp_path_factory.mktemp("directories")
    root = base / "skills"
    for path in SKILLS:
        write_skill(root / path)
    (root / "solo" / "empty").mkdir()
    (root / "solo" / "ignored-only").mkdir()
    (root / "solo" / "ignored-only" / ".DS_Store").write_bytes(b"\0")
    (root / "solo" / "notes.md").write_text("notes\n")
    with http_server([root], "--no-watch", "--page-size", "2") as server:
        yield ServerTarget("http", (root,), base / "logs", http=server)
        server.assert_alive()


async def children(client: Client, uri: str) -> list[tuple[str, str]]:
    """Every child of the directory at `uri` (uri, mimeType), following nextCursor."""
    found: list[tuple[str, str]] = []
    cursor: str | None = None
    for _ in range(100):
        page = await directory_read(client, uri, cursor)
        found.extend((r["uri"], r["mimeType"]) for r in page.resources)
        cursor = page.next_cursor
        if cursor is None:
            return found
    raise AssertionError(f"{uri}: nextCursor never ended")


@pytest.mark.parametrize("mode", MODES)
async def test_empty_folders_and_folders_of_ignored_files_read_as_empty_directories(
    target: ServerTarget, mode: Mode
) -> None:
    """They vanished from directory reads (-32602), so the spec's empty directory was unreachable."""
    async with connect(target, mode=mode) as client:
        assert await children(client, "skill://solo") == [
            ("skill://solo/SKILL.md", "text/markdown"),
            ("skill://solo/empty", "inode/directory"),
            ("skill://solo/ignored-only", "inode/directory"),
            ("skill://solo/notes.md", "text/markdown"),
        ]
        for empty in ("skill://solo/empty", "skill://solo/ignored-only"):
            page = await directory_read(client, empty)
            assert page.resources == []
            assert page.next_cursor is None


@pytest.mark.parametrize("mode", MODES)
async def test_prefix_levels_are_browsable_down_to_every_skill(target: ServerTarget, mode: Mode) -> None:
    """`skill://acme` answered -32602 although `skill://acme/billing/refunds/SKILL.md` is served."""
    async with connect(target, mode=mode) as client:
        assert await children(client, "skill://acme") == [
            ("skill://acme/a", "inode/directory"),
            ("skill://acme/b", "inode/directory"),
            ("skill://acme/billing", "inode/directory"),
            ("skill://acme/tools", "inode/directory"),
        ]
        found: list[str] = []
        pending = ["skill://acme", "skill://solo"]
        while pending:
            for uri, mime in await children(client, pending.pop()):
                if mime == "inode/directory":
                    pending.append(uri)
                elif uri.endswith("/SKILL.md"):
                    found.append(uri.removeprefix("skill://").removesuffix("/SKILL.md"))
    assert sorted(found) == sorted(SKILLS)


@pytest.mark.parametrize("mode", MODES)
async def test_a_prefix_level_is_no_file_and_a_partial_segment_is_nothing(target: ServerTarget, mode: Mode) -> None:
    """Spec MUST: -32602 for a URI that is no directory; a prefix level read as a file says it is a directory."""
    async with connect(target, mode=mode) as client:
        with pytest.raises(MCPError) as as_file:
            await resources_read(client, "skill://acme/billing")
        assert as_file.value.error.code == INVALID_PARAMS
        assert "is a directory" in as_file.value.error.message
        for nothing in ("skill://ac", "skill://acme/bill", "skill://acme/billing/refunds/nope"):
            with pytest.raises(MCPError) as missing:
                await directory_read(client, nothing)
            assert missing.value.error.code == INVALID_PARAMS
            assert "No directory is served" in missing.value.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_a_folder_made_while_serving_is_read_at_once(target: ServerTarget, mode: Mode) -> None:
    """A directory read re-checks its skill's folder (no watcher here): a new empty folder shows in the next read."""
    made = target.roots[0] / "acme" / "b" / f"made-{mode}"
    async with connect(target, mode=mode) as client:
        assert (f"skill://acme/b/made-{mode}", "inode/directory") not in await children(client, "skill://acme/b")
        made.mkdir()
        assert (f"skill://acme/b/made-{mode}", "inode/directory") in await children(client, "skill://acme/b")
        assert await children(client, f"skill://acme/b/made-{mode}") == []
