"""Hostile files under a served root, attacked from outside: a real `skillwire serve --http` and real files.

skillwire choices (issue 9, holes 1 and 2): a file whose name is not UTF-8 costs only the skill holding it
(rule `file-name-encoding`); a served file swapped after indexing for a FIFO, a link to /dev/zero or a path
through a folder swapped for a link never blocks a request, never reads more than the manifest lists plus
one byte, and never serves a byte from outside the root.
"""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from skillwire.server.skill_service import SkillService
from skillwire.service import watch
from skillwire.sources.folder import watch as folder_watch
from skillwire.sources.folder.source import FolderSource
from tests.support.servers import (
    INVALID_PARAMS,
    HttpServer,
    all_skills,
    http_server,
    resources_read,
    skills_get,
)

pytestmark = pytest.mark.anyio

FREEZE_S = 20.0  # far longer than any answer takes: only a frozen server runs into it
BAD_NAME = b"bad\xff.md"
INVOICE = b"# Invoice\n\nTotal: 42\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_root(tmp_path: Path, names: tuple[str, ...] = ("alpha", "beta")) -> Path:
    root = tmp_path / "skills"
    for name in names:
        add_skill(root, name)
    return root


def add_skill(root: Path, name: str) -> None:
    folder = root / name / "templates"
    folder.mkdir(parents=True)
    (folder.parent / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}\n---\n# {name}\n")
    (folder / "invoice.md").write_bytes(INVOICE)


def page(server: HttpServer, path: str = "/") -> str:
    """GET a catalog page (in a worker thread, so the client's event loop keeps running)."""
    url = server.url.removesuffix("/mcp") + path
    with urllib.request.urlopen(url, timeout=FREEZE_S) as response:
        body: bytes = response.read()
    return body.decode("utf-8")


async def within(seconds: float, call: Callable[[], Awaitable[object]]) -> object:
    with anyio.fail_after(seconds):
        return await call()


async def served_names(client: Client) -> set[str]:
    return {entry["frontmatter"]["name"] for entry in await all_skills(client)}


async def wait_for(check: Callable[[], Awaitable[bool]], seconds: float = FREEZE_S) -> None:
    with anyio.fail_after(seconds):
        while not await check():
            await anyio.sleep(0.1)


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/<pid>/status")


# -- hole 1: names that are not UTF-8 ---------------------------------------------------------------------------------


async def test_a_file_name_that_is_not_utf8_costs_only_its_skill_at_start(tmp_path: Path) -> None:
    """`touch skills/alpha/bad\\xff.md` made `skillwire serve` exit at start with UnicodeEncodeError."""
    root = make_root(tmp_path)
    open(os.fsencode(root / "alpha") + b"/" + BAD_NAME, "wb").close()
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            assert await served_names(client) == {"beta"}
            with pytest.raises(MCPError) as refused:
                await skills_get(client, "skill://alpha/SKILL.md")
            assert refused.value.error.code == INVALID_PARAMS
        index = await anyio.to_thread.run_sync(page, server)
        assert "file-name-encoding" in index
        assert "bad\\xff.md" in index
        assert "[file-name-encoding]" in server.stderr
        assert "bad\\xff.md" in server.stderr
        server.assert_alive()


async def test_a_file_name_that_is_not_utf8_added_while_serving_costs_only_its_skill(tmp_path: Path) -> None:
    """Added while serving, skills/get answered -32603, every later rebuild failed and the watcher restarted."""
    root = make_root(tmp_path)
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            assert await served_names(client) == {"alpha", "beta"}
            open(os.fsencode(root / "alpha") + b"/" + BAD_NAME, "wb").close()

            async def alpha_refused() -> bool:
                try:
                    await skills_get(client, "skill://alpha/SKILL.md")
                except MCPError as err:
                    codes.append(err.error.code)
                    return True
                return False

            codes: list[int] = []

            await wait_for(alpha_refused)
            assert codes == [INVALID_PARAMS]  # refused, not an internal error
            add_skill(root, "gamma")  # a skill added after the bad name still appears: the watcher lives on

            async def gamma_served() -> bool:
                return await served_names(client) == {"beta", "gamma"}

            await wait_for(gamma_served)
            beta = await resources_read(client, "skill://beta/templates/invoice.md")
            assert beta.contents[0]["text"].encode() == INVOICE
        assert "Traceback" not in server.stderr
        server.assert_alive()


async def test_a_folder_name_that_is_not_utf8_keeps_the_watcher_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """watchfiles cannot even start under such a folder: the watcher restarted forever and new skills never came."""
    monkeypatch.setattr(folder_watch, "_UNDECODABLE_RESCAN_S", 0.2)  # the test cannot wait 10 s
    root = make_root(tmp_path)
    os.mkdir(os.fsencode(root) + b"/gamma\xfe")
    open(os.fsencode(root) + b"/gamma\xfe/SKILL.md", "wb").close()
    service = SkillService(FolderSource([root]))
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(FREEZE_S):
            await tg.start(lambda task_status: watch.watch_and_rebuild(service, task_status=task_status))
        add_skill(root, "delta")

        async def delta_served() -> bool:
            return "skill://delta/SKILL.md" in service.catalog.skill_uris

        await wait_for(delta_served)
        assert [r.rule for r in service.catalog.refusals] == ["file-name-encoding"]
        os.rename(os.fsencode(root) + b"/gamma\xfe", root / "gamma")  # renamed: the watcher comes back
        await anyio.sleep(1.0)
        add_skill(root, "epsilon")

        async def epsilon_served() -> bool:
            return "skill://epsilon/SKILL.md" in service.catalog.skill_uris

        await wait_for(epsilon_served)
        tg.cancel_scope.cancel()


# -- hole 2: a served file swapped after indexing ---------------------------------------------------------------------


async def test_fifo_swapped_in_for_a_served_file_does_not_freeze_the_server(tmp_path: Path) -> None:
    """A FIFO put in place of templates/invoice.md froze every route (MCP and page) until kill -9."""
    root = make_root(tmp_path)
    target = root / "alpha" / "templates" / "invoice.md"
    with http_server([root], "--no-watch") as server:  # no watcher to notice the swap first: the read meets it
        async with Client(server.url, mode="auto", cache=None) as client:
            fifo = target.with_name(".fifo")
            os.mkfifo(fifo)
            os.replace(fifo, target)
            with anyio.fail_after(FREEZE_S), pytest.raises(MCPError) as refused:
                await resources_read(client, "skill://alpha/templates/invoice.md")
            assert refused.value.error.code == INVALID_PARAMS  # re-indexed: the skill holding a pipe is refused
            beta = await within(FREEZE_S, lambda: resources_read(client, "skill://beta/templates/invoice.md"))
            assert beta.contents[0]["text"].encode() == INVOICE  # type: ignore[attr-defined]
            assert await within(FREEZE_S, lambda: served_names(client)) == {"beta"}
        index = await anyio.to_thread.run_sync(page, server)
        assert "not-a-file" in index
        skill_page = await anyio.to_thread.run_sync(page, server, "/skills/beta")
        assert "Skill beta" in skill_page
        assert "templates/invoice.md" in skill_page
        server.assert_alive()


async def test_a_link_to_dev_zero_swapped_in_for_a_served_file_is_refused_within_200_mb(tmp_path: Path) -> None:
    """A symlink to /dev/zero put in place of a served file drove the server's RSS to 3.8 GB."""
    root = make_root(tmp_path)
    target = root / "alpha" / "templates" / "invoice.md"
    with http_server([root], "--no-watch", fresh=True) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            link = target.with_name(".link")
            os.symlink("/dev/zero", link)
            os.replace(link, target)
            for _ in range(50):
                with anyio.fail_after(FREEZE_S), pytest.raises(MCPError) as refused:
                    await resources_read(client, "skill://alpha/templates/invoice.md")
                assert refused.value.error.code == INVALID_PARAMS
            beta = await within(FREEZE_S, lambda: resources_read(client, "skill://beta/templates/invoice.md"))
            assert beta.contents[0]["text"].encode() == INVOICE  # type: ignore[attr-defined]
        assert peak_rss_mb(server.pid) < 200
        assert "link-escapes" in await anyio.to_thread.run_sync(page, server)
        server.assert_alive()


async def test_a_folder_swapped_for_a_link_outside_the_root_never_serves_outside_bytes(tmp_path: Path) -> None:
    """templates/ replaced by a link to a folder outside the root: the read went through the link and answered."""
    root = make_root(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "invoice.md").write_bytes(INVOICE)  # the same bytes: only where they come from differs
    with http_server([root], "--no-watch") as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            templates = root / "alpha" / "templates"
            os.rename(templates, root / "alpha" / ".old-templates")
            os.symlink(outside, templates)
            with anyio.fail_after(FREEZE_S), pytest.raises(MCPError) as refused:
                await resources_read(client, "skill://alpha/templates/invoice.md")
            assert refused.value.error.code == INVALID_PARAMS  # re-indexed: the link leaves the root
            assert await served_names(client) == {"beta"}
        assert "link-escapes" in await anyio.to_thread.run_sync(page, server)
        server.assert_alive()


# -- names and paths no read can name: every file listed must be readable ----------------------------------------------


async def read_every_listed_file(client: Client) -> set[str]:
    """Read every resource every listed skill lists (as a verifying host does); the names of the skills listed."""
    entries = await all_skills(client)
    for entry in entries:
        for resource in entry["resources"]:
            with anyio.fail_after(FREEZE_S):
                read = await resources_read(client, resource["uri"])
            assert read.contents, resource["uri"]
    return {entry["frontmatter"]["name"] for entry in entries}


async def test_a_file_name_with_control_characters_refuses_its_skill_instead_of_listing_an_unreadable_file(
    tmp_path: Path,
) -> None:
    """`touch $'skills/alpha/tab\\tname.md'`: alpha was listed with skill://alpha/tab%09name.md, which every
    resources/read refused, so no host could verify alpha."""
    root = make_root(tmp_path, ("alpha", "beta", "gamma"))
    (root / "alpha" / "tab\tname.md").write_bytes(b"t")
    (root / "gamma" / "esc\x1b]0;owned\x07.md").write_bytes(b"e")
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            assert await read_every_listed_file(client) == {"beta"}
        index = await anyio.to_thread.run_sync(page, server)
        assert index.count("file-name-control") == 2
        assert "\x1b" not in server.stderr  # the name is shown escaped, never raw
        assert "\x1b" not in index
        assert "[file-name-control]" in server.stderr
        server.assert_alive()


async def test_a_file_whose_uri_is_too_long_refuses_its_skill_instead_of_listing_an_unreadable_file(
    tmp_path: Path,
) -> None:
    """Six nested folders of 120 'é' each: alpha listed a file whose URI (over 4096 characters) no read accepts."""
    root = make_root(tmp_path)
    deep = root / "alpha" / "/".join(["\u00e9" * 120] * 6)
    deep.mkdir(parents=True)
    (deep / "deep.md").write_bytes(b"d")
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            assert await read_every_listed_file(client) == {"beta"}
        assert "[uri-too-long]" in server.stderr
        assert "over the limit of 4096" in server.stderr
        server.assert_alive()
