"""Hot reload: real files, the real watcher, real servers (skillwire choices; list_changed is the MCP notification).

Every check polls with a deadline (`eventually`) instead of sleeping: no test asserts a timing.
skills/list is what proves a reload happened, since skills/get re-checks its own folder anyway.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.subscriptions import ResourcesListChanged
from mcp.shared.exceptions import MCPError

from skillwire.core.catalog import Catalog
from skillwire.core.wire import INTERNAL_ERROR
from skillwire.server.skill_service import ServeOptions, SkillService
from skillwire.service.watch import watch_and_rebuild
from skillwire.sources.folder.source import FolderSource
from tests.support.polling import eventually
from tests.support.servers import (
    REPO_ROOT,
    all_skills,
    http_server,
    resources_read,
    serve_command,
    skills_get,
    skills_list,
)

pytestmark = pytest.mark.anyio

DEADLINE_S = 10.0
T = TypeVar("T")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_skill(folder: Path, description: str = "A skill") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_bytes(f"---\nname: {folder.name}\ndescription: {description}\n---\n# Hi\n".encode())


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    write_skill(root / "alpha")
    write_skill(root / "team" / "beta")
    return root


def served(catalog: Catalog) -> dict[str, str]:
    out: dict[str, str] = {}
    cursor: str | None = None
    while True:
        page = catalog.files_page(cursor, 10_000)
        out.update((f.file.uri, f.file.digest) for f in page.items)
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


def descriptions(listing: list[dict[str, Any]]) -> dict[str, str]:
    return {s["uri"]: s["frontmatter"]["description"] for s in listing}


def service_descriptions(service: SkillService) -> dict[str, str]:
    return descriptions(service.list_skills(None, modern=True)["skills"])


@asynccontextmanager
async def watching(service: SkillService) -> AsyncIterator[None]:
    async with anyio.create_task_group() as tg:
        await tg.start(lambda task_status: watch_and_rebuild(service, task_status=task_status))
        yield
        tg.cancel_scope.cancel()


# -- in process: SkillService with the watcher task -------------------------------------------------------------------


async def test_edit_add_delete_and_rename_show_up_in_skills_list(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    service = SkillService(FolderSource([root]))
    async with watching(service):

        async def listing() -> dict[str, str]:
            return service_descriptions(service)

        write_skill(root / "alpha", "Edited")
        await eventually(
            lambda: _when(listing, lambda d: d.get("skill://alpha/SKILL.md") == "Edited"), "edit is listed"
        )
        write_skill(root / "gamma")
        await eventually(lambda: _when(listing, lambda d: "skill://gamma/SKILL.md" in d), "added skill is listed")
        shutil.rmtree(root / "alpha")
        await eventually(lambda: _when(listing, lambda d: "skill://alpha/SKILL.md" not in d), "deleted skill is gone")
        (root / "team").rename(root / "crew")
        await eventually(
            lambda: _when(
                listing, lambda d: "skill://crew/beta/SKILL.md" in d and "skill://team/beta/SKILL.md" not in d
            ),
            "renamed folder is listed under its new name",
        )
        (root / "crew" / "beta" / "notes.md").write_bytes(b"new file\n")
        entry = await eventually(
            lambda: _when(
                lambda: _entry(service, "skill://crew/beta/SKILL.md"),
                lambda e: any(r["uri"] == "skill://crew/beta/notes.md" for r in e["resources"]),
            ),
            "added file is in the listed skill's resources",
        )
        assert entry["uri"] == "skill://crew/beta/SKILL.md"


async def test_a_burst_of_1000_writes_ends_consistent_with_the_disk_in_few_rebuilds(tmp_path: Path) -> None:
    """skillwire choice: a burst is coalesced; the last rebuild starts after the last change."""
    root = make_root(tmp_path)
    service = SkillService(FolderSource([root]))
    async with watching(service):
        start = service.catalog.generation
        for i in range(1000):
            skill = root / f"s{i % 10}"
            if not (skill / "SKILL.md").exists():
                write_skill(skill)
            (skill / f"f{i}.md").write_bytes(f"file {i}\n".encode())

        async def consistent() -> bool:
            return served(service.catalog) == served(FolderSource([root]).scan())

        await eventually(consistent, "the catalog matches a fresh scan")
        assert len(served(service.catalog)) == 2 + 10 + 1000
        assert service.catalog.generation - start < 50, "1,000 writes should coalesce into a few rebuilds"


async def test_a_cursor_from_before_a_reload_still_pages_after_it(tmp_path: Path) -> None:
    """Cursors name the last key seen, so they survive a rebuild (Pagination)."""
    root = make_root(tmp_path)
    service = SkillService(FolderSource([root]), ServeOptions(page_size=1))
    async with watching(service):
        first = service.list_skills(None, modern=True)
        assert [s["uri"] for s in first["skills"]] == ["skill://alpha/SKILL.md"]
        generation = service.catalog.generation
        write_skill(root / "zeta")
        await eventually(_async(lambda: service.catalog.generation > generation), "a reload")
        uris: list[str] = []
        cursor = first["nextCursor"]
        while cursor is not None:
            page = service.list_skills(cursor, modern=True)
            uris += [s["uri"] for s in page["skills"]]
            cursor = page.get("nextCursor")
        assert uris == ["skill://team/beta/SKILL.md", "skill://zeta/SKILL.md"]


async def test_a_failed_rebuild_is_logged_and_the_watcher_carries_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_root(tmp_path)
    source = FolderSource([root])
    service = SkillService(source)
    real_update = source.update
    failures = [RuntimeError("disk on fire")]

    def flaky_update(paths: Iterable[str], generation: int) -> Catalog:
        if failures:
            raise failures.pop()
        return real_update(paths, generation)

    async with watching(service):
        monkeypatch.setattr(source, "update", flaky_update)
        write_skill(root / "gamma")
        await eventually(_async(lambda: not failures), "the failing rebuild ran")
        write_skill(root / "delta")
        await eventually(
            _async(lambda: {"skill://gamma/SKILL.md", "skill://delta/SKILL.md"} <= set(service_descriptions(service))),
            "later changes still reload",
        )
    assert "rebuilding the catalog failed" in caplog.text


async def test_a_missing_root_is_reported_once_and_watched_once_it_appears(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """skillwire choice: one unwatchable root neither stops the others being watched nor floods the log."""
    root = make_root(tmp_path)
    later = tmp_path / "later"
    service = SkillService(FolderSource([root, later]))
    async with watching(service):
        write_skill(root / "gamma")
        await eventually(_async(lambda: "skill://gamma/SKILL.md" in service_descriptions(service)), "gamma listed")
        write_skill(later / "delta")
        await eventually(_async(lambda: "skill://delta/SKILL.md" in service_descriptions(service)), "delta listed")
    assert caplog.text.count("not watching") == 1, caplog.text
    assert "Traceback" not in caplog.text


# -- real servers -----------------------------------------------------------------------------------------------------


async def test_http_server_reloads_and_notifies_both_eras(tmp_path: Path) -> None:
    """MCP: after a change, a handshake-era session gets notifications/resources/list_changed on its
    standalone stream, and a 2026-07-28 client gets it on its subscriptions/listen stream."""
    root = make_root(tmp_path)
    legacy_seen = anyio.Event()

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            legacy_seen.set()

    with http_server([root]) as server:
        async with (
            Client(server.url, mode="legacy", cache=None, message_handler=on_message) as legacy,
            Client(server.url, mode="auto", cache=None) as modern,
        ):
            assert legacy.session.initialize_result is not None
            assert legacy.session.initialize_result.capabilities.resources is not None
            assert legacy.session.initialize_result.capabilities.resources.list_changed is True
            discovered = modern.session.discover_result
            assert discovered is not None
            assert discovered.capabilities.resources is not None
            assert discovered.capabilities.resources.list_changed is True
            async with modern.listen(resources_list_changed=True) as subscription:
                assert subscription.honored.resources_list_changed is True
                write_skill(root / "alpha", "Edited over HTTP")
                with anyio.fail_after(DEADLINE_S):
                    event = await subscription.__anext__()
                assert isinstance(event, ResourcesListChanged)
            with anyio.fail_after(DEADLINE_S):
                await legacy_seen.wait()
            listing = descriptions(await all_skills(modern))
            assert listing["skill://alpha/SKILL.md"] == "Edited over HTTP"
            shutil.rmtree(root / "team")
            await eventually(
                lambda: _when(lambda: _listed(legacy), lambda d: "skill://team/beta/SKILL.md" not in d),
                "the deleted skill leaves skills/list",
            )
        server.assert_alive()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX")
async def test_no_watch_server_rescans_on_sighup(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    with http_server([root], "--no-watch") as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            write_skill(root / "gamma")
            server.process.send_signal(signal.SIGHUP)
            await eventually(
                lambda: _when(lambda: _listed(client), lambda d: "skill://gamma/SKILL.md" in d),
                "SIGHUP reloads the catalog",
            )
            got = await skills_get(client, "skill://gamma/SKILL.md")
            assert got.skill["uri"] == "skill://gamma/SKILL.md"
        server.assert_alive()


async def test_a_restart_with_a_digest_cache_serves_at_once_then_checks_the_disk(tmp_path: Path) -> None:
    """skillwire choice: --digest-cache restores the last catalog before touching the disk, then a background
    scan (no watcher, no SIGHUP here) brings it up to date; skills/get checks its own folder first."""
    root = make_root(tmp_path)
    cache = tmp_path / "state" / "digests.json"
    with http_server([root], "--no-watch", "--digest-cache", str(cache)) as server:
        async with Client(server.url, mode="auto", cache=None) as client:
            assert "skill://alpha/SKILL.md" in await _listed(client)
    assert cache.is_file()
    write_skill(root / "alpha", "Edited while the server was down")
    write_skill(root / "delta")
    with http_server([root], "--no-watch", "--digest-cache", str(cache)) as server:
        assert "restored from" in server.stderr
        async with Client(server.url, mode="auto", cache=None) as client:
            got = await skills_get(client, "skill://alpha/SKILL.md")
            assert got.skill["frontmatter"]["description"] == "Edited while the server was down"
            listing = await eventually(
                lambda: _when(lambda: _listed(client), lambda d: "skill://delta/SKILL.md" in d),
                "the background check publishes what changed while the server was down",
            )
            assert listing["skill://alpha/SKILL.md"] == "Edited while the server was down"
        server.assert_alive()


async def test_reads_racing_reloads_always_match_a_manifest_published_around_them(tmp_path: Path) -> None:
    """Spec: a file's bytes match its manifest digest. While a file is rewritten (atomically, as editors do) and
    the watcher reloads, every read returns the bytes of a version whose digest skills/get published no earlier
    than the entry fetched just before the read and no later than the one fetched just after."""
    root = make_root(tmp_path)
    target = root / "alpha" / "notes.md"
    version_of: dict[str, int] = {}

    def write(version: int) -> None:
        data = f"version {version}\n".encode() + b"x" * (version % 7)
        version_of["sha256:" + hashlib.sha256(data).hexdigest()] = version
        tmp = target.with_name(".notes.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)

    write(0)
    uri = "skill://alpha/notes.md"
    with http_server([root]) as server:
        async with Client(server.url, mode="auto", cache=None) as client:

            async def listed_version() -> int:
                entry = (await skills_get(client, "skill://alpha/SKILL.md")).skill
                digest = next(r["digest"] for r in entry["resources"] if r["uri"] == uri)
                return version_of[digest]

            assert await listed_version() == 0
            stop = anyio.Event()

            async def writer() -> None:
                version = 0
                while not stop.is_set():
                    version += 1
                    write(version)
                    await anyio.sleep(0.003)

            checked = 0
            refusals: list[tuple[int, str]] = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer)
                with anyio.move_on_after(3.0):
                    while True:
                        before = await listed_version()
                        try:
                            contents = (await resources_read(client, uri)).contents
                        except MCPError as error:
                            # A file rewritten faster than it can be re-indexed may be refused ("keeps changing;
                            # try again"): a refusal, never wrong bytes. Busy machines see it now and then.
                            refusals.append((error.error.code, error.error.message))
                            continue
                        after = await listed_version()
                        data = contents[0]["text"].encode()
                        read = version_of.get("sha256:" + hashlib.sha256(data).hexdigest())
                        assert read is not None, f"read bytes that no version had: {data!r}"
                        assert before <= read <= after, (before, read, after)
                        checked += 1
                stop.set()
            assert checked > 20
            assert len(refusals) < checked
            assert all(code == INTERNAL_ERROR and "keeps changing" in message for code, message in refusals), refusals
        server.assert_alive()


async def test_stdio_legacy_client_is_told_the_list_changed(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    seen = anyio.Event()

    async def on_message(message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            seen.set()

    env = dict(os.environ, PYTHONUNBUFFERED="1")
    params = StdioServerParameters(command=sys.executable, args=serve_command([root])[1:], env=env, cwd=REPO_ROOT)
    with (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", cache=None, message_handler=on_message
        ) as client:
            before = (await skills_list(client)).skills
            assert len(before) == 2
            # Even if the watcher is still starting, its catch-up rebuild sees this edit.
            write_skill(root / "alpha", "Edited over stdio")
            with anyio.move_on_after(DEADLINE_S):
                await seen.wait()
            assert seen.is_set(), (tmp_path / "stderr.log").read_text()
            listing = descriptions((await skills_list(client)).skills)
            assert listing["skill://alpha/SKILL.md"] == "Edited over stdio"


# -- helpers ----------------------------------------------------------------------------------------------------------


async def _when(get: Callable[[], Awaitable[T]], ok: Callable[[T], bool]) -> T | None:
    value = await get()
    return value if ok(value) else None


def _async(check: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def run() -> bool:
        return check()

    return run


async def _entry(service: SkillService, uri: str) -> dict[str, Any]:
    for entry in service.list_skills(None, modern=True)["skills"]:
        if entry["uri"] == uri:
            return dict(entry)
    return {"uri": uri, "resources": []}


async def _listed(client: Client) -> dict[str, str]:
    return descriptions(await all_skills(client))
